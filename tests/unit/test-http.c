/*
 * test-http.c: providers/gcp/http.c and gcp-error.c against the simulated
 * Google Cloud: many requests at once, retries under injected 503 storms
 * and 429s with Retry-After, idempotency of POSTs, transport failures,
 * request budgets, Google's error shapes, a loop that stays
 * responsive while slow requests are in flight, and bearer tokens from a
 * token source that is not auth.c. Each test starts its own
 * fakegcp and ends with uv_loop_close() == 0.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "tests/unit/gcptest.h"

struct t {
	struct unittest	*ut;		/* fake, conf, loop, http and auth */
	char		*key;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-http");
	gcptest_fake(t->ut);
	t->key = unittest_path(t->ut, "sa.json");
	if (t->ut->fake.pid > 0)
		fake_make_key(&t->ut->fake, t->key, "gpuq-test@gpuq-demo.iam."
		    "gserviceaccount.com", 1);
	t->ut->gcp->credentials = t->key;
	gcptest_http(t->ut);
	if (t->ut->fake.pid > 0)
		gcptest_auth(t->ut);
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	unittest_free(t->ut);
	free(t->key);
	free(t);
	return 0;
}

static void
test_http_url_building(void **state)
{
	struct gcp_conf	 c;
	char		*u;

	(void)state;
	memset(&c, 0, sizeof c);
	u = gcp_url(&c, GCP_API_COMPUTE, NULL, "projects/%s/zones/%s",
	    "p", "us-central1-a");
	assert_string_equal(u, "https://compute.googleapis.com/compute/v1/"
	    "projects/p/zones/us-central1-a");
	free(u);
	u = gcp_url(&c, GCP_API_VERTEX, "europe-west4", "%-s/customJobs",
	    "projects/p/locations/europe-west4");
	assert_string_equal(u, "https://europe-west4-aiplatform.googleapis."
	    "com/v1/projects/p/locations/europe-west4/customJobs");
	free(u);
	u = gcp_url(&c, GCP_API_STORAGE, NULL, "b/%s/o/%s?prefix=%s&n=%d",
	    "bkt", "a/b c.pt", "runs/4 2/", 7);
	assert_string_equal(u, "https://storage.googleapis.com/storage/v1/"
	    "b/bkt/o/a%2Fb%20c.pt?prefix=runs%2F4%202%2F&n=7");
	free(u);
	u = gcp_url(&c, GCP_API_TOKEN, NULL, "%s", "");
	assert_string_equal(u, "https://oauth2.googleapis.com/token");
	free(u);
	c.endpoint = "http://127.0.0.1:9/";
	u = gcp_url(&c, GCP_API_VERTEX, "us-east1", "projects/%s", "p");
	assert_string_equal(u, "http://127.0.0.1:9/v1/projects/p");
	free(u);
	u = gcp_url(&c, GCP_API_TOKEN, NULL, "%s", "");
	assert_string_equal(u, "http://127.0.0.1:9/token");
	free(u);
	u = gcp_url(&c, GCP_API_UPLOAD, NULL, "b/%s/o?name=%s", "b", "x/y");
	assert_string_equal(u, "http://127.0.0.1:9/upload/storage/v1/b/b/o?"
	    "name=x%2Fy");
	free(u);
	c.billing_endpoint = "http://billing.test";
	u = gcp_url(&c, GCP_API_BILLING, NULL, "services/%s/skus",
	    GCP_COMPUTE_SERVICE_ID);
	assert_string_equal(u, "http://billing.test/v1/services/"
	    "6F81-5844-456A/skus");
	free(u);
	c.endpoint = NULL;
	c.metadata_endpoint = NULL;
	setenv("GCE_METADATA_HOST", "169.254.169.254:8080", 1);
	u = gcp_url(&c, GCP_API_METADATA, NULL, "project/project-id");
	assert_string_equal(u, "http://169.254.169.254:8080/computeMetadata/"
	    "v1/project/project-id");
	free(u);
	unsetenv("GCE_METADATA_HOST");
	u = gcp_escape("a b/c~d.e_f-g%");
	assert_string_equal(u, "a%20b%2Fc~d.e_f-g%25");
	free(u);
}

static json_t *
parse(const char *s)
{
	json_t	*j = json_loads(s, 0, NULL);

	assert_non_null(j);
	return j;
}

static void
test_http_error_shapes(void **state)
{
	struct gcp_error	 e;
	json_t			*j;
	const char		*html;
	char			*s;

	(void)state;
	gcp_error_init(&e);

	/* Compute, synchronous quota error (C.5, legacy errors[]). */
	j = parse("{\"error\":{\"code\":403,\"message\":\"Quota "
	    "'NVIDIA_T4_GPUS' exceeded.  Limit: 1.0 in region us-central1.\","
	    "\"errors\":[{\"message\":\"x\",\"domain\":\"usageLimits\","
	    "\"reason\":\"quotaExceeded\"}]}}");
	gcp_error_from_http(&e, 403, j, NULL, 0);
	assert_int_equal(e.kind, GCP_ERR_QUOTA);
	assert_string_equal(e.quota_metric, "NVIDIA_T4_GPUS");
	assert_true(e.quota_limit == 1.0);
	assert_string_equal(e.quota_region, "us-central1");
	assert_string_equal(e.reasons[0], "quotaExceeded");
	assert_false(gcp_error_retryable(&e));
	json_decref(j);

	/* Vertex quota 429 (B.1): not a rate limit, not retryable. */
	j = parse("{\"error\":{\"code\":429,\"message\":\"The following quota "
	    "metrics exceed quota limits: aiplatform.googleapis.com/"
	    "custom_model_training_nvidia_l4_gpus\",\"status\":"
	    "\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis."
	    "com/google.rpc.QuotaFailure\",\"violations\":[{\"subject\":\"p\","
	    "\"description\":\"aiplatform.googleapis.com/custom_model_training"
	    "_nvidia_l4_gpus\"}]}]}}");
	gcp_error_from_http(&e, 429, j, NULL, 0);
	assert_int_equal(e.kind, GCP_ERR_QUOTA);
	assert_int_equal(e.rpc_code, 8);
	assert_string_equal(e.quota_metric,
	    "custom_model_training_nvidia_l4_gpus");
	json_decref(j);

	/* Per-minute API quota with RetryInfo: a rate limit, retryable. */
	j = parse("{\"error\":{\"code\":429,\"message\":\"Quota exceeded for "
	    "quota metric 'Queries' and limit 'Queries per minute' of service "
	    "'compute.googleapis.com'\",\"status\":\"RESOURCE_EXHAUSTED\","
	    "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc."
	    "RetryInfo\",\"retryDelay\":\"2.5s\"}]}}");
	gcp_error_from_http(&e, 429, j, NULL, 0);
	assert_int_equal(e.kind, GCP_ERR_RATE_LIMIT);
	assert_int_equal(e.retry_after, 3);
	assert_true(gcp_error_retryable(&e));
	json_decref(j);

	/* OAuth (H.4). */
	j = parse("{\"error\":\"invalid_grant\",\"error_description\":"
	    "\"Invalid JWT Signature.\"}");
	gcp_error_from_http(&e, 400, j, NULL, 0);
	assert_int_equal(e.kind, GCP_ERR_AUTH);
	assert_string_equal(e.status, "invalid_grant");
	assert_string_equal(e.message, "Invalid JWT Signature.");
	s = gcp_error_text(&e);
	assert_string_equal(s, "HTTP 400 invalid_grant: Invalid JWT "
	    "Signature.");
	free(s);
	json_decref(j);

	/* HTML from a front end (H.5): guarded, still classified. */
	html = "<!DOCTYPE html><html><title>Error 502 (Server Error)!!1"
	    "</title><p>That's an error.</html>";
	gcp_error_from_http(&e, 502, NULL, html, strlen(html));
	assert_int_equal(e.kind, GCP_ERR_UNAVAILABLE);
	assert_string_equal(e.message, "not a Google API answer: Error 502 "
	    "(Server Error)!!1");

	/* Compute Operation with a stockout and its zonesAvailable (C.5). */
	j = parse("{\"status\":\"DONE\",\"httpErrorStatusCode\":503,"
	    "\"error\":{\"errors\":[{\"code\":\"ZONE_RESOURCE_POOL_EXHAUSTED_"
	    "WITH_DETAILS\",\"message\":\"A n1-highmem-4 VM instance is "
	    "currently unavailable in the us-central1-a zone.\","
	    "\"errorDetails\":[{\"errorInfo\":{\"reason\":\"RESOURCE_"
	    "AVAILABILITY\",\"domain\":\"compute.googleapis.com\","
	    "\"metadatas\":{\"zone\":\"us-central1-a\",\"zonesAvailable\":"
	    "\"us-central1-b,us-central1-f\"}}}]}]}}");
	assert_int_equal(gcp_error_from_operation(j, &e), 1);
	assert_int_equal(e.kind, GCP_ERR_STOCKOUT);
	assert_int_equal(e.code, 503);
	assert_string_equal(e.status, "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_"
	    "DETAILS");
	assert_string_equal(e.zones_available, "us-central1-b,us-central1-f");
	json_decref(j);
	j = parse("{\"status\":\"DONE\"}");
	assert_int_equal(gcp_error_from_operation(j, &e), 0);
	json_decref(j);

	/* Operation quota error with quotaInfo. */
	j = parse("{\"httpErrorStatusCode\":403,\"error\":{\"errors\":[{"
	    "\"code\":\"QUOTA_EXCEEDED\",\"message\":\"Quota 'GPUS_ALL_"
	    "REGIONS' exceeded.  Limit: 64.0 globally.\",\"errorDetails\":[{"
	    "\"quotaInfo\":{\"metricName\":\"compute.googleapis.com/"
	    "gpus_all_regions\",\"limit\":64}}]}]}}");
	assert_int_equal(gcp_error_from_operation(j, &e), 1);
	assert_int_equal(e.kind, GCP_ERR_QUOTA);
	assert_string_equal(e.quota_metric, "GPUS_ALL_REGIONS");
	assert_string_equal(e.quota_region, "global");
	assert_true(e.quota_limit == 64.0);
	json_decref(j);

	/* google.rpc.Status of a Vertex job: stockout, cancelled. */
	j = parse("{\"code\":8,\"message\":\"Resources are insufficient in "
	    "region: us-central1. Please try a different region.\"}");
	assert_int_equal(gcp_error_from_status(j, &e), 1);
	assert_int_equal(e.kind, GCP_ERR_STOCKOUT);
	json_decref(j);
	j = parse("{\"code\":1,\"message\":\"CANCELED\"}");
	assert_int_equal(gcp_error_from_status(j, &e), 1);
	assert_int_equal(e.kind, GCP_ERR_CANCELLED);
	json_decref(j);
	gcp_error_done(&e);
}

static void
test_http_get_json(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	char		*u;

	NEED_FAKE(t->ut);
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s?fields=%s",
	    "gpuq-demo", "quotas,name");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(rec.kind, GCP_ERR_NONE);
	assert_true(json_is_array(json_object_get(rec.json, "quotas")));
	assert_null(json_object_get(rec.json, "selfLink"));	/* fields= */
	assert_int_equal(rec.attempts, 1);
	free(u);
	gcptest_rec_done(&rec);
}

static void
test_http_connection_reuse(void **state)
{
	struct t		*t = *state;
	struct gcptest_rec	 rec = { 0 };
	struct http_stats	 st;
	char			*u;
	int			 i;

	NEED_FAKE(t->ut);
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s?fields=%s",
	    "gpuq-demo", "name");
	for (i = 0; i < 20; i++) {
		gcptest_get(t->ut, u, &rec);
		assert_int_equal(rec.status, 200);
		gcptest_rec_done(&rec);
	}
	http_get_stats(t->ut->http, &st);
	/* One for the token, one for the API: then reused. */
	print_message("20 requests one after another: %lu connections\n",
	    st.connects);
	assert_true(st.connects <= 2);
	free(u);
}

#define NCONC	200

static void
test_http_concurrent_200(void **state)
{
	struct t		*t = *state;
	struct http_req		 req = { .flags = HTTP_AUTH,
	    .api = GCP_API_COMPUTE };
	struct http_stats	 st;
	struct gcptest_rec	*recs;
	char			*urls[NCONC];
	const char		*regions[] = { "us-central1", "us-east1",
	    "europe-west4", "asia-east1" };
	int			 i, count = 0;
	uint64_t		 t0;

	NEED_FAKE(t->ut);
	recs = xcalloc(NCONC, sizeof *recs);
	t0 = uv_hrtime();
	for (i = 0; i < NCONC; i++) {
		urls[i] = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
		    "projects/%s/regions/%s?fields=name,status", "gpuq-demo",
		    regions[i % 4]);
		req.url = urls[i];
		recs[i].count = &count;
		assert_int_equal(http_request_start(t->ut->http, &req,
		    gcptest_rec_cb, &recs[i]), 0);
	}
	assert_int_equal(count, 0);	/* never called back from start */
	unittest_run(t->ut);
	assert_int_equal(count, NCONC);
	for (i = 0; i < NCONC; i++) {
		assert_int_equal(recs[i].done, 1);
		assert_int_equal(recs[i].status, 200);
		assert_string_equal(json_string_value(json_object_get(
		    recs[i].json, "name")), regions[i % 4]);
		gcptest_rec_done(&recs[i]);
		free(urls[i]);
	}
	http_get_stats(t->ut->http, &st);
	assert_int_equal(auth_fetches(t->ut->auth), 1);	/* one token */
	assert_true(st.max_in_flight > 1);
	print_message("200 concurrent requests: %.0f ms, %d in flight at "
	    "most, 1 token fetch\n", (double)(uv_hrtime() - t0) / 1e6,
	    st.max_in_flight);
	free(recs);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
req_time(json_t *reqs, size_t i)
{
	return json_number_value(json_object_get(json_array_get(reqs, i),
	    "real_time"));
}

static void
test_http_retry_503_storm(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	json_t		*reqs, *r;
	double		 when[5], ceiling;
	char		*u;
	int		 i;

	NEED_FAKE(t->ut);
	/* Four 503s, then the answer: attempt five succeeds. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-east1$\",\"status\":503,\"count\":4}"));
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s/regions/%s",
	    "gpuq-demo", "us-east1");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(rec.attempts, 5);
	reqs = fake_requests(&t->ut->fake, "GET", "/regions/us-east1$", 5);
	assert_int_equal(json_array_size(reqs), 5);
	r = json_array_get(reqs, 0);
	assert_int_equal(json_integer_value(json_object_get(r, "status")),
	    503);
	/* Full jitter: wait k is within [0, min(cap, base * 2^(k-1))],
	 * base 50 ms, cap 400 ms; allow 150 ms for the round trip. */
	for (i = 0; i < 5; i++)
		when[i] = req_time(reqs, i);
	qsort(when, 5, sizeof when[0], cmp_double);
	for (i = 1; i < 5; i++) {
		ceiling = 0.05 * (1 << (i - 1));
		if (ceiling > 0.4)
			ceiling = 0.4;
		assert_true(when[i] - when[i - 1] <= ceiling + 0.15);
	}
	print_message("503 storm: 4 backoffs of %.0f, %.0f, %.0f, %.0f ms "
	    "(ceilings 50, 100, 200, 400)\n", (when[1] - when[0]) * 1000,
	    (when[2] - when[1]) * 1000, (when[3] - when[2]) * 1000,
	    (when[4] - when[3]) * 1000);
	json_decref(reqs);
	gcptest_rec_done(&rec);

	/* A storm longer than the attempts: the last 503 comes back. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-east1$\",\"status\":503,\"count\":10}"));
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 503);
	assert_int_equal(rec.kind, GCP_ERR_UNAVAILABLE);
	assert_int_equal(rec.attempts, 5);
	assert_string_equal(rec.msg, "The service is currently unavailable.");
	gcptest_rec_done(&rec);
	json_decref(fake_ctl(&t->ut->fake, "DELETE", "/_fake/fault", NULL));
	free(u);
}

static void
test_http_retry_after_429(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	json_t		*reqs;
	char		*u;
	double		 gap1, gap2;

	NEED_FAKE(t->ut);
	/* retry_base is 50 ms: only Retry-After can explain 1 s gaps. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/europe-west4$\",\"status\":429,\"count\":2,"
	    "\"retry_after\":1}"));
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s/regions/%s",
	    "gpuq-demo", "europe-west4");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(rec.attempts, 3);
	reqs = fake_requests(&t->ut->fake, "GET", "/regions/europe-west4$", 3);
	assert_int_equal(json_array_size(reqs), 3);
	gap1 = req_time(reqs, 1) - req_time(reqs, 0);
	gap2 = req_time(reqs, 2) - req_time(reqs, 1);
	print_message("Retry-After: 1 honoured: gaps %.3f s, %.3f s\n", gap1,
	    gap2);
	assert_true(gap1 >= 0.95 && gap1 < 1.9);
	assert_true(gap2 >= 0.95 && gap2 < 1.9);
	json_decref(reqs);
	gcptest_rec_done(&rec);
	free(u);
}

static void
upload(struct t *t, const char *name, int flags, struct gcptest_rec *rec)
{
	struct http_req	 req = { .method = "POST", .body = "checkpoint",
	    .body_len = 10, .content_type = "application/octet-stream",
	    .flags = HTTP_AUTH | flags, .api = GCP_API_UPLOAD };
	char		*u;

	u = gcp_url(t->ut->gcp, GCP_API_UPLOAD, NULL,
	    "b/%s/o?uploadType=media&name=%s", "bkt", name);
	req.url = u;
	gcptest_request(t->ut, &req, rec);
	free(u);
}

static void
test_http_post_idempotency(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	json_t		*reqs;

	NEED_FAKE(t->ut);
	/* A plain POST is not repeated after a 503... */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"method\":"
	    "\"POST\",\"path\":\"^/upload/\",\"status\":503,\"count\":1}"));
	upload(t, "a/one", 0, &rec);
	assert_int_equal(rec.status, 503);
	assert_int_equal(rec.attempts, 1);
	reqs = fake_requests(&t->ut->fake, "POST", "^/upload/", 1);
	assert_int_equal(json_array_size(reqs), 1);
	json_decref(reqs);
	gcptest_rec_done(&rec);

	/* ...one marked idempotent is. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"method\":"
	    "\"POST\",\"path\":\"^/upload/\",\"status\":503,\"count\":1}"));
	upload(t, "a/two", HTTP_IDEMPOTENT, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(rec.attempts, 2);
	assert_string_equal(json_string_value(json_object_get(rec.json,
	    "name")), "a/two");
	reqs = fake_requests(&t->ut->fake, "POST", "^/upload/", 3);
	assert_int_equal(json_array_size(reqs), 3);
	json_decref(reqs);
	gcptest_rec_done(&rec);

	/* A dropped connection: GET retried, plain POST not. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"method\":"
	    "\"POST\",\"path\":\"^/upload/\",\"drop\":true,\"count\":1}"));
	upload(t, "a/three", 0, &rec);
	assert_int_equal(rec.status, 0);
	assert_int_equal(rec.kind, GCP_ERR_TRANSPORT);
	assert_int_equal(rec.attempts, 1);
	gcptest_rec_done(&rec);
	reqs = fake_requests(&t->ut->fake, "POST", "^/upload/", 4);
	assert_int_equal(json_array_size(reqs), 4);
	json_decref(reqs);
}

static void
test_http_transport_retry(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	json_t		*reqs;
	char		*u;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/asia-east1$\",\"drop\":true,\"count\":2}"));
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s/regions/%s",
	    "gpuq-demo", "asia-east1");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 200);
	/* curl itself re-sends once on a reused connection found dead, so
	 * the two drops may take one or two of our attempts. */
	assert_true(rec.attempts >= 2);
	reqs = fake_requests(&t->ut->fake, "GET", "/regions/asia-east1$", 3);
	assert_int_equal(json_array_size(reqs), 3);
	json_decref(reqs);
	gcptest_rec_done(&rec);
	free(u);

	/* Nobody listens: every attempt fails to connect. */
	gcptest_get(t->ut, "http://127.0.0.1:1/compute/v1/projects/x",
	    &rec);
	assert_int_equal(rec.status, 0);
	assert_int_equal(rec.kind, GCP_ERR_TRANSPORT);
	assert_int_equal(rec.attempts, 5);
	assert_non_null(strstr(rec.msg, "GET http://127.0.0.1:1/compute/v1/"
	    "projects/x: "));
	gcptest_rec_done(&rec);
}

static void
test_http_timeout(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	struct http_req	 req = { .flags = HTTP_AUTH, .api = GCP_API_COMPUTE,
	    .timeout_ms = 300, .max_attempts = 2 };

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-west1$\",\"latency_ms\":1500,\"count\":2}"));
	req.url = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s", "gpuq-demo", "us-west1");
	gcptest_request(t->ut, &req, &rec);
	assert_int_equal(rec.kind, GCP_ERR_TRANSPORT);
	assert_int_equal(rec.attempts, 2);
	assert_non_null(strstr(rec.msg, "no answer within 300 ms"));
	assert_true(rec.elapsed < 1.4);
	gcptest_rec_done(&rec);
	free((char *)req.url);
}

static void
test_http_error_answers(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	char		*u;

	NEED_FAKE(t->ut);
	/* An unknown path: HTML 404, no JSON, still a clean error. */
	u = xprintf("%s/compute/v1/nowhere", t->ut->fake.url);
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 404);
	assert_null(rec.json);
	assert_int_equal(rec.kind, GCP_ERR_NOT_FOUND);
	assert_string_equal(rec.msg, "not a Google API answer: Error 404 "
	    "(Not Found)!!1");
	assert_int_equal(rec.attempts, 1);
	gcptest_rec_done(&rec);
	free(u);

	/* A JSON 404 in Compute's shape. */
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s/regions/%s",
	    "gpuq-demo", "mars-north1");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 404);
	assert_int_equal(rec.kind, GCP_ERR_NOT_FOUND);
	assert_string_equal(rec.err.reasons[0], "notFound");
	gcptest_rec_done(&rec);
	free(u);
}

/* The Compute insert body of DESIGN GC.1, for GPU in ZONE. */
static json_t *
insert_body(const char *name, const char *zone, int spot)
{
	json_t	*b;
	char	*mt, *at;

	mt = xprintf("zones/%s/machineTypes/n1-highmem-4", zone);
	at = xprintf("zones/%s/acceleratorTypes/nvidia-tesla-t4", zone);
	b = json_pack("{s:s, s:s, s:[{s:s, s:i}], s:{s:s, s:s, s:b},"
	    "s:[{s:b, s:b, s:{s:s, s:s}}], s:[{s:s}]}",
	    "name", name, "machineType", mt,
	    "guestAccelerators", "acceleratorType", at, "acceleratorCount", 1,
	    "scheduling", "provisioningModel", spot ? "SPOT" : "STANDARD",
	    "onHostMaintenance", "TERMINATE", "automaticRestart", 0,
	    "disks", "boot", 1, "autoDelete", 1, "initializeParams",
	    "sourceImage", "projects/debian-cloud/global/images/family/"
	    "debian-12", "diskSizeGb", "100",
	    "networkInterfaces", "network", "global/networks/default");
	assert_non_null(b);
	free(mt);
	free(at);
	return b;
}

static void
test_http_quota_and_stockout(void **state)
{
	struct t		*t = *state;
	struct gcptest_rec	 rec = { 0 };
	struct http_req		 req = { .method = "POST",
	    .flags = HTTP_AUTH | HTTP_IDEMPOTENT, .api = GCP_API_COMPUTE };
	struct gcp_error	 e;
	json_t			*body;
	char			*u, *w;
	const char		*op;
	int			 i;

	NEED_FAKE(t->ut);
	/* Synchronous quota error at insert (C.5). */
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"limit\":0}"));
	body = insert_body("gpuq-q-1", "us-central1-a", 0);
	req.json = body;
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances?requestId=%s", "gpuq-demo",
	    "us-central1-a", "8a6e0804-2bd0-4672-b79d-d97027f9071a");
	req.url = u;
	gcptest_request(t->ut, &req, &rec);
	assert_int_equal(rec.status, 403);
	assert_int_equal(rec.kind, GCP_ERR_QUOTA);
	assert_string_equal(rec.err.quota_metric, "NVIDIA_T4_GPUS");
	assert_string_equal(rec.err.quota_region, "us-central1");
	assert_true(rec.err.quota_limit == 0.0);
	assert_int_equal(rec.attempts, 1);
	gcptest_rec_done(&rec);
	json_decref(body);
	free(u);

	/* A stockout with details arrives in the Operation (C.3, C.5). */
	json_decref(fake_post(&t->ut->fake, "/_fake/stockout", "{\"zone\":"
	    "\"us-east1-c\",\"gpu\":\"nvidia-tesla-t4\",\"with_details\":true,"
	    "\"zones_available\":[\"us-east1-b\",\"us-east1-d\"]}"));
	body = insert_body("gpuq-s-1", "us-east1-c", 1);
	req.json = body;
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances?requestId=%s", "gpuq-demo",
	    "us-east1-c", "0b1e4a4c-8f3e-4c41-9d86-7b8f1f1c2a10");
	req.url = u;
	gcptest_request(t->ut, &req, &rec);
	assert_int_equal(rec.status, 200);
	op = json_string_value(json_object_get(rec.json, "name"));
	assert_non_null(op);
	w = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/operations/%s/wait", "gpuq-demo",
	    "us-east1-c", op);
	for (i = 0; i < 20; i++) {
		gcptest_rec_done(&rec);
		req.json = NULL;
		req.url = w;
		gcptest_request(t->ut, &req, &rec);
		assert_int_equal(rec.status, 200);
		if (strcmp(json_string_value(json_object_get(rec.json,
		    "status")), "DONE") == 0)
			break;
	}
	gcp_error_init(&e);
	assert_int_equal(gcp_error_from_operation(rec.json, &e), 1);
	assert_int_equal(e.kind, GCP_ERR_STOCKOUT);
	assert_string_equal(e.status, "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_"
	    "DETAILS");
	assert_string_equal(e.zones_available, "us-east1-b,us-east1-d");
	assert_int_equal(e.code, 503);
	gcp_error_done(&e);
	gcptest_rec_done(&rec);
	json_decref(body);
	free(u);
	free(w);
}

static void
test_http_budget_queues(void **state)
{
	struct t		*t = *state;
	struct http_req		 req = { .flags = HTTP_AUTH,
	    .api = GCP_API_COMPUTE };
	struct http_stats	 st;
	struct gcptest_rec	 recs[12];
	json_t			*reqs;
	double			 when[12];
	size_t			 i, n;
	int			 count = 0;
	char			*u;

	NEED_FAKE(t->ut);
	memset(recs, 0, sizeof recs);
	http_set_budget(t->ut->http, GCP_API_COMPUTE, 5, 1000);
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s", "gpuq-demo", "us-west4");
	req.url = u;
	for (i = 0; i < 12; i++) {
		recs[i].count = &count;
		assert_int_equal(http_request_start(t->ut->http, &req,
		    gcptest_rec_cb, &recs[i]), 0);
	}
	unittest_run(t->ut);
	assert_int_equal(count, 12);
	for (i = 0; i < 12; i++) {
		assert_int_equal(recs[i].status, 200);
		gcptest_rec_done(&recs[i]);
	}
	/* No more than 5 started in any second (the fake's clock sees them
	 * after the network and its threads: allow 100 ms of jitter). */
	reqs = fake_requests(&t->ut->fake, "GET", "/regions/us-west4$", 12);
	n = json_array_size(reqs);
	assert_int_equal(n, 12);
	for (i = 0; i < n; i++)
		when[i] = req_time(reqs, i);
	qsort(when, n, sizeof when[0], cmp_double);
	for (i = 0; i + 5 < n; i++)
		assert_true(when[i + 5] - when[i] > 0.9);
	assert_true(when[n - 1] - when[0] > 1.9);
	print_message("budget 5/s: 12 requests over %.2f s\n",
	    when[n - 1] - when[0]);
	http_get_stats(t->ut->http, &st);
	assert_true(st.budget_waits > 0);
	json_decref(reqs);
	free(u);
}

struct tick {
	uv_timer_t	 timer;
	uint64_t	 last, max_gap;
	int		 n, slow, *left;	/* slow: gaps over 5 ms */
};

static void
tick_on_timer(uv_timer_t *h)
{
	struct tick	*tk = h->data;
	uint64_t	 now = uv_hrtime();

	if (tk->last != 0 && now - tk->last > tk->max_gap)
		tk->max_gap = now - tk->last;
	if (tk->last != 0 && now - tk->last > 5 * 1000 * 1000)
		tk->slow++;
	tk->last = now;
	tk->n++;
	if (*tk->left == 0)
		uv_timer_stop(h);
}

static void
slow_cb(const struct http_resp *r, void *arg)
{
	int	*left = arg;

	assert_int_equal(r->status, 200);
	(*left)--;
}

static void
test_http_loop_responsive(void **state)
{
	struct t	*t = *state;
	struct http_req	 req = { .flags = HTTP_AUTH, .api = GCP_API_COMPUTE };
	struct tick	 tk;
	int		 i, left = 100;
	char		*u;
	uint64_t	 t0;

	NEED_FAKE(t->ut);
	/* A token first, so all 100 go out at once. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-south1$\",\"latency_ms\":400,\"count\":100}"));
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s", "gpuq-demo", "us-south1");
	req.url = u;
	memset(&tk, 0, sizeof tk);
	tk.left = &left;
	uv_timer_init(t->ut->loop, &tk.timer);
	tk.timer.data = &tk;
	for (i = 0; i < 100; i++)
		assert_int_equal(http_request_start(t->ut->http, &req, slow_cb,
		    &left), 0);
	t0 = uv_hrtime();
	uv_timer_start(&tk.timer, tick_on_timer, 1, 1);
	unittest_run(t->ut);
	assert_int_equal(left, 0);
	print_message("100 slow requests in %.0f ms; 1 ms timer fired %d "
	    "times, %d gaps over 5 ms, longest %.2f ms\n",
	    (double)(uv_hrtime() - t0) / 1e6, tk.n, tk.slow,
	    (double)tk.max_gap / 1e6);
	/*
	 * The loop never waits on the network: the timer keeps its pace.
	 * A shared machine may deschedule the process now and then, so a
	 * rare long gap is the kernel's, not ours; many would be ours.
	 */
	assert_true(tk.n > 200);
	assert_true(tk.slow <= tk.n / 50);
	assert_true(tk.max_gap < 100 * 1000 * 1000);
	uv_close((uv_handle_t *)&tk.timer, NULL);
	unittest_run(t->ut);	/* TK lives on this stack */
	free(u);
}

static void
free_on_timer(uv_timer_t *h)
{
	struct t	*t = h->data;

	/* Shutdown order: cancel, free auth, free the client. */
	http_cancel_all(t->ut->http);
	auth_free(t->ut->auth);
	http_free(t->ut->http);
	t->ut->auth = NULL;
	t->ut->http = NULL;
	uv_close((uv_handle_t *)h, NULL);
}

static void
test_http_cancel_on_free(void **state)
{
	struct t	*t = *state;
	struct http_req	 req = { .flags = HTTP_AUTH, .api = GCP_API_COMPUTE };
	struct gcptest_rec	 recs[20];
	uv_timer_t	 timer;
	int		 i, count = 0;
	char		*u;

	NEED_FAKE(t->ut);
	memset(recs, 0, sizeof recs);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-east4$\",\"latency_ms\":2000,\"count\":20}"));
	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s", "gpuq-demo", "us-east4");
	req.url = u;
	for (i = 0; i < 20; i++) {
		recs[i].count = &count;
		assert_int_equal(http_request_start(t->ut->http, &req,
		    gcptest_rec_cb, &recs[i]), 0);
	}
	uv_timer_init(t->ut->loop, &timer);
	timer.data = t;
	uv_timer_start(&timer, free_on_timer, 300, 0);
	unittest_run(t->ut);
	assert_int_equal(count, 20);
	for (i = 0; i < 20; i++) {
		assert_int_equal(recs[i].kind, GCP_ERR_CANCELLED);
		gcptest_rec_done(&recs[i]);
	}
	free(u);
}

/*
 * A token source that is not auth.c (http.h's interface only): the first
 * get is answered on a later turn of the loop, the next ones at once.
 * It hands out TOKEN; an invalidate of TOKEN switches it to GOOD.
 */
struct fixed_src {
	struct http_token_source src;
	uv_timer_t		 timer;		/* timer.data == this */
	struct http_token_wait	*w;		/* waiting for the timer */
	const char		*token;
	char			*good;
	int			 gets, queued, invalidated;
	char			 invalid[64];	/* the token invalidated */
};

static void
fixed_on_timer(uv_timer_t *h)
{
	struct fixed_src	*f = h->data;
	struct http_token_wait	*w = f->w;

	f->w = NULL;
	w->queued = 0;
	w->cb(w, f->token, 0, NULL);
}

static const char *
fixed_get(void *arg, struct http_token_wait *w)
{
	struct fixed_src	*f = arg;

	f->gets++;
	if (f->queued > 0)
		return f->token;
	f->queued++;
	f->w = w;
	w->queued = 1;
	assert_int_equal(uv_timer_start(&f->timer, fixed_on_timer, 5, 0), 0);
	return NULL;
}

static void
fixed_cancel(void *arg, struct http_token_wait *w)
{
	struct fixed_src	*f = arg;

	if (f->w == w) {
		uv_timer_stop(&f->timer);
		f->w = NULL;
		w->queued = 0;
	}
}

static void
fixed_invalidate(void *arg, const char *token)
{
	struct fixed_src	*f = arg;

	f->invalidated++;
	(void)snprintf(f->invalid, sizeof f->invalid, "%s", token);
	if (strcmp(token, f->token) == 0)
		f->token = f->good;
}

static void
fixed_on_close(uv_handle_t *h)
{
	struct fixed_src	*f = h->data;

	free(f->good);
	free(f);
}

/* A token from the fake's metadata server, fetched without auth.c. */
static char *
metadata_token(struct t *t)
{
	static const char *const hdrs[] = { "Metadata-Flavor: Google", NULL };
	struct http_req	 req = { .headers = hdrs, .api = GCP_API_METADATA };
	struct gcptest_rec	 rec = { 0 };
	char		*u, *tok;

	u = gcp_url(t->ut->gcp, GCP_API_METADATA, NULL,
	    "instance/service-accounts/default/token");
	req.url = u;
	gcptest_request(t->ut, &req, &rec);
	assert_int_equal(rec.status, 200);
	tok = xstrdup(json_string_value(json_object_get(rec.json,
	    "access_token")));
	gcptest_rec_done(&rec);
	free(u);
	return tok;
}

/*
 * http.c takes its tokens from any struct http_token_source: with a
 * source that is not auth.c, an HTTP_AUTH request waits for the token,
 * sends it, and after the fake's 401 for a stale one, invalidates that
 * one and succeeds with the next. auth.c is never asked.
 */
static void
test_http_token_source_not_auth(void **state)
{
	struct t		*t = *state;
	struct fixed_src	*f;
	struct http_stats	 st;
	struct gcptest_rec	 rec = { 0 };
	char			*u;

	NEED_FAKE(t->ut);
	f = xcalloc(1, sizeof *f);
	f->good = metadata_token(t);
	f->token = "ya29.stale-token";
	f->src.get = fixed_get;
	f->src.cancel = fixed_cancel;
	f->src.invalidate = fixed_invalidate;
	f->src.arg = f;
	assert_int_equal(uv_timer_init(t->ut->loop, &f->timer), 0);
	f->timer.data = f;
	http_set_token_source(t->ut->http, &f->src);

	u = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL, "projects/%s",
	    "gpuq-demo");
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(rec.kind, GCP_ERR_NONE);
	assert_int_equal(f->queued, 1);		/* the first get waited */
	assert_int_equal(f->gets, 2);		/* then once after the 401 */
	assert_int_equal(f->invalidated, 1);
	assert_string_equal(f->invalid, "ya29.stale-token");
	http_get_stats(t->ut->http, &st);
	assert_int_equal(st.auth_retries, 1);
	assert_int_equal(auth_fetches(t->ut->auth), 0);
	gcptest_rec_done(&rec);

	/* Detached: the request goes without a token and gets the 401. */
	http_set_token_source(t->ut->http, NULL);
	gcptest_get(t->ut, u, &rec);
	assert_int_equal(rec.status, 401);
	assert_int_equal(f->gets, 2);
	gcptest_rec_done(&rec);
	free(u);
	uv_close((uv_handle_t *)&f->timer, fixed_on_close);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_url_building),
		cmocka_unit_test(test_http_error_shapes),
		cmocka_unit_test_setup_teardown(test_http_get_json, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_connection_reuse,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_concurrent_200,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_retry_503_storm,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_retry_after_429,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_post_idempotency,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_transport_retry,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_error_answers,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_quota_and_stockout,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_budget_queues,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_loop_responsive,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_token_source_not_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_cancel_on_free,
		    setup, teardown),
	};

	log_init("test-http", getenv("GPUQ_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARNING, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
