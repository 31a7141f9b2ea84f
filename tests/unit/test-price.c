/*
 * test-price.c: providers/gcp/price.c -- the bundled table alone, then the
 * Cloud Billing Catalog of the simulated Google Cloud read over many
 * pages (GPU, Spot, host core/RAM and Vertex SKUs), price overrides, a
 * failing catalog falling back to the table, the periodic refresh, the
 * JSON for `gpuq prices`; and the struct gcp facade built and torn down
 * with requests in flight.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
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
#include "providers/gcp/price.h"
#include "tests/unit/gcptest.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

struct t {
	struct unittest	*ut;		/* fake, conf, loop, http and auth */
	struct price	*p;
	char		*table;
	struct gcptest_result res;	/* the last refresh's */
};

static char *
table_path(void)
{
	const char	*top = getenv("top_srcdir");

	return xprintf("%s/data/prices.csv", top != NULL && *top != '\0' ?
	    top : TOP_SRCDIR);
}

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->table = table_path();
	t->ut = unittest_new("test-price");
	gcptest_fake(t->ut);
	t->ut->gcp->price_table = t->table;
	return 0;
}

/* Build http, auth and prices for the conf as the test left it. */
static void
start(struct t *t)
{
	char	*cause = NULL;

	gcptest_http(t->ut);
	gcptest_auth(t->ut);
	if (price_new(t->ut->http, t->ut->gcp, &t->p, &cause) != 0)
		fail_msg("price_new: %s", cause);
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	gcptest_cancel(t->ut);
	price_free(t->p);
	unittest_free(t->ut);
	gcptest_result_done(&t->res);
	free(t->table);
	free(t);
	return 0;
}

static void
refresh(struct t *t)
{
	t->res.calls = 0;
	assert_int_equal(price_refresh(t->p, gcptest_result_cb, &t->res), 0);
	assert_int_equal(t->res.calls, 0);
	unittest_run(t->ut);
	assert_int_equal(t->res.calls, 1);
}

static double
gpu(struct t *t, enum gcp_service svc, const char *region, const char *g,
    int count, int spot)
{
	double	d = -1;

	if (price_gpu_hourly(t->p, svc, region, g, count, spot, &d) != 0)
		fail_msg("no price for %s in %s", g, region);
	return d;
}

static double
host(struct t *t, enum gcp_service svc, const char *region, const char *mt,
    int spot)
{
	double	d = -1;

	if (price_host_hourly(t->p, svc, region, mt, spot, &d) != 0)
		fail_msg("no price for %s in %s", mt, region);
	return d;
}

static int
near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b) + 1e-9;
}

static void
test_price_bundled(void **state)
{
	struct t	*t = *state;
	double		 d;

	t->ut->gcp->endpoint = NULL;
	start(t);
	assert_string_equal(price_source(t->p), "bundled table (data of "
	    "2026-06)");
	assert_int_equal(price_fetched_at(t->p), 0);
	/* data/prices.csv: gpu,nvidia-tesla-t4,us-central1,,,0.35,0.1915 */
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 0), 0.35, 1e-9));
	assert_true(near(gpu(t, GCP_SERVICE_BATCH, "us-central1",
	    "NVIDIA_TESLA_T4", 2, 1), 2 * 0.1915, 1e-9));
	assert_true(near(host(t, GCP_SERVICE_GCE, "us-central1",
	    "n1-highmem-4", 0), 0.23661, 1e-9));
	assert_true(near(host(t, GCP_SERVICE_GCE, "us-central1",
	    "n1-highmem-4", 1), 0.07948, 1e-9));
	/* Vertex: its own SKU where known, else Compute x 1.15. */
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-h100-80gb", 1, 0), 11.2660332, 1e-9));
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-tesla-t4", 1, 0), 0.35 * 1.15, 1e-9));
	assert_true(near(host(t, GCP_SERVICE_VERTEX, "us-central1",
	    "n1-highmem-4", 0), 0.23661 * 1.15, 1e-9));
	/* Spot: Compute Spot plus the fee (DESIGN GF.2): the H100's fee SKU
	 * where the table has one, else 0.15 x the on-demand price. */
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-h100-80gb", 1, 1), 5.3387 + 1.4694826, 1e-9));
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-tesla-t4", 1, 1), 0.1915 + 0.15 * 0.35, 1e-9));
	assert_true(near(host(t, GCP_SERVICE_VERTEX, "us-central1",
	    "n1-highmem-4", 1), 0.07948 + 0.15 * 0.23661, 1e-9));
	/* a3-highgpu-8g on Vertex from the A3 core and RAM SKUs. */
	assert_true(near(host(t, GCP_SERVICE_VERTEX, "us-central1",
	    "a3-highgpu-8g", 0), 208 * 0.0293227 + 1872 * 0.0025534, 1e-6));
	/* H100 on-demand: the source had a flex-start price; left out. */
	assert_int_equal(price_gpu_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 1, 0, &d), -ENOENT);
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-h100-80gb", 8, 1), 8 * 5.3387, 1e-9));
	assert_int_equal(price_gpu_hourly(t->p, GCP_SERVICE_GCE, "mars-1",
	    "nvidia-tesla-t4", 1, 0, &d), -ENOENT);
	assert_int_equal(price_gpu_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-voodoo", 1, 0, &d), -ENOENT);
	assert_int_equal(price_host_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "z9-mega-1", 0, &d), -ENOENT);
}

static void
test_price_missing_table(void **state)
{
	struct t	*t = *state;
	char		*cause = NULL;

	t->ut->gcp->price_table = "/nonexistent/prices.csv";
	gcptest_http(t->ut);
	assert_int_equal(price_new(t->ut->http, t->ut->gcp, &t->p, &cause),
	    -ENOENT);
	assert_string_equal(cause, "price table /nonexistent/prices.csv: No "
	    "such file or directory (it comes with gpuq; reinstall, or point "
	    "[gcp] price_table at a copy)");
	free(cause);
	t->p = NULL;
}

static void
test_price_catalog_paged(void **state)
{
	struct t	*t = *state;
	json_t		*reqs;
	size_t		 ncomp, nvert;
	double		 d;

	NEED_FAKE(t->ut);
	t->ut->gcp->page_size = 50;
	start(t);
	refresh(t);
	if (t->res.error != 0)
		fail_msg("refresh: %s", t->res.cause);
	assert_true(strncmp(price_source(t->p), "catalog (fetched ", 17) ==
	    0);
	assert_non_null(strstr(price_source(t->p), " SKUs)"));
	assert_true(price_fetched_at(t->p) > 0);
	reqs = fake_requests(&t->ut->fake, "GET",
	    "/services/6F81-5844-456A/skus", 2);
	ncomp = json_array_size(reqs);
	json_decref(reqs);
	reqs = fake_requests(&t->ut->fake, "GET",
	    "/services/C7E2-9256-1C43/skus", 2);
	nvert = json_array_size(reqs);
	json_decref(reqs);
	assert_true(ncomp >= 2 && nvert >= 2);
	print_message("catalog: %s over %zu + %zu pages of 50\n",
	    price_source(t->p), ncomp, nvert);

	/* The same data as the bundled table, now from SKUs. */
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 0), 0.35, 1e-4));
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 1), 0.1915, 1e-4));
	/* Hosts from core + RAM SKUs: within 1% of the table. */
	assert_true(near(host(t, GCP_SERVICE_GCE, "us-central1",
	    "n1-highmem-4", 0), 0.23661, 0.01));
	assert_true(near(host(t, GCP_SERVICE_GCE, "us-central1",
	    "a2-highgpu-1g", 1), 0.38812, 0.01));
	assert_true(near(host(t, GCP_SERVICE_GCE, "us-central1",
	    "n1-standard-8", 0), 0.379998, 0.02));
	/* Vertex SKUs: the fake prices them at Compute x 1.15. */
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-tesla-t4", 1, 0), 0.35 * 1.15, 1e-4));
	/* No Vertex Spot SKU: Compute Spot plus the management fee SKU,
	 * which the fake prices at 0.15 x Compute on demand. */
	assert_true(near(gpu(t, GCP_SERVICE_VERTEX, "europe-west4",
	    "nvidia-l4", 1, 1), gpu(t, GCP_SERVICE_GCE, "europe-west4",
	    "nvidia-l4", 1, 1) + 0.15 * gpu(t, GCP_SERVICE_GCE,
	    "europe-west4", "nvidia-l4", 1, 0), 1e-4));
	assert_true(near(host(t, GCP_SERVICE_VERTEX, "us-central1",
	    "n1-highmem-4", 1), host(t, GCP_SERVICE_GCE, "us-central1",
	    "n1-highmem-4", 1) + 0.15 * host(t, GCP_SERVICE_GCE,
	    "us-central1", "n1-highmem-4", 0), 1e-3));
	/* "H100 80GB Mega" is the Mega GPU, not the H100. */
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-h100-mega-80gb", 1, 0), 10.34428, 1e-4));
	assert_int_equal(price_gpu_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 1, 1, &d), 0);
	assert_true(near(d, 5.3387, 1e-4));
}

/*
 * Flex-start from the catalog's own "DWS Defined Duration" SKUs (what
 * Google bills): the H100 on a3-highgpu-1g in us-central1 is the DWS GPU
 * SKU + 26 DWS A3 cores + 234 GiB of DWS A3 RAM (vertex-prices.csv's
 * rows), $4.7078/h. The discount alone on the catalog's on-demand row
 * (which is itself the DWS price there) gave (4.20076 + 1.18251) x 0.47
 * = $2.53, half what is billed. Before the catalog is read, and on
 * Vertex AI, the rules the header says.
 */
static void
test_price_flex_dws(void **state)
{
	struct t	*t = *state;
	double		 d, od, fee;

	NEED_FAKE(t->ut);
	start(t);
	/* The bundled table has no DWS SKUs: the discount. */
	assert_int_equal(price_dws_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 1, "a3-highgpu-1g", &d),
	    -ENOENT);
	assert_int_equal(price_flex_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 1, "n1-standard-8", &d), 0);
	assert_true(near(d, gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 0) + host(t, GCP_SERVICE_GCE,
	    "us-central1", "n1-standard-8", 0), 1e-9));
	refresh(t);
	assert_int_equal(t->res.error, 0);
	assert_int_equal(price_flex_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 1, "a3-highgpu-1g", &d), 0);
	print_message("flex-start a3-highgpu-1g in us-central1: $%.4f/h\n",
	    d);
	assert_true(near(d, 4.200761 + 26 * 0.010934 + 234 * 0.000952,
	    1e-4));
	assert_int_equal(price_flex_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 2, "a3-highgpu-1g", &d), 0);
	assert_true(near(d, 2 * 4.200761 + 26 * 0.010934 + 234 * 0.000952,
	    1e-4));
	/* Vertex AI: the same SKUs plus its management fee (the GPU's is
	 * $1.4694826 in vertex-prices.csv). */
	assert_int_equal(price_flex_hourly(t->p, GCP_SERVICE_VERTEX,
	    "us-central1", "nvidia-h100-80gb", 1, "a3-highgpu-1g", &od), 0);
	fee = od - (4.200761 + 26 * 0.010934 + 234 * 0.000952);
	assert_true(fee > 1.4694826 && fee < 1.4694826 + 1.0);
	/* A GPU whose machine series has no DWS SKUs (n1): the discount
	 * rule (none for n1). */
	assert_int_equal(price_flex_hourly(t->p, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 1, "n1-standard-8", &d), 0);
	assert_true(near(d, gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 0) + host(t, GCP_SERVICE_GCE,
	    "us-central1", "n1-standard-8", 0), 1e-9));
}

static void
test_price_override(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/price", "{\"gpu\":"
	    "\"nvidia-tesla-t4\",\"region\":\"us-central1\",\"usage_type\":"
	    "\"Preemptible\",\"usd_per_hour\":0.0123}"));
	start(t);
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 1), 0.1915, 1e-9));
	refresh(t);
	assert_int_equal(t->res.error, 0);
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 4, 1), 4 * 0.0123, 1e-6));
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-east1",
	    "nvidia-tesla-t4", 1, 1), 0.1915, 0.5));
}

static void
test_price_catalog_failure(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/skus$\",\"status\":403,\"count\":10}"));
	start(t);
	refresh(t);
	assert_int_equal(t->res.error, -EIO);
	assert_non_null(strstr(t->res.cause, "price catalog failed: HTTP 403 "
	    "PERMISSION_DENIED: Injected fault"));
	assert_string_equal(price_source(t->p), "bundled table (data of "
	    "2026-06)");
	assert_true(near(gpu(t, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 1, 0), 0.35, 1e-9));
}

static void
test_price_refresh_timer(void **state)
{
	struct t	*t = *state;
	json_t		*reqs;

	NEED_FAKE(t->ut);
	t->ut->gcp->price_refresh = 1;
	start(t);
	price_start(t->p);
	unittest_run_for(t->ut, 1600);	/* the price timer never ends */
	reqs = fake_requests(&t->ut->fake, "GET",
	    "/services/6F81-5844-456A/skus", 2);
	assert_int_equal(json_array_size(reqs), 2);
	json_decref(reqs);
	assert_true(strncmp(price_source(t->p), "catalog", 7) == 0);
}

static void
test_price_json(void **state)
{
	struct t	*t = *state;
	json_t		*j, *rows, *r, *gce, *vx;
	struct price_row row;
	size_t		 iter = 0, n = 0;

	t->ut->gcp->endpoint = NULL;
	start(t);
	j = price_to_json(t->p, "us-central1", "nvidia-tesla-t4");
	assert_string_equal(json_string_value(json_object_get(j, "source")),
	    "bundled table (data of 2026-06)");
	rows = json_object_get(j, "prices");
	assert_int_equal(json_array_size(rows), 1);
	r = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(r, "host")),
	    "n1-highmem-4");
	gce = json_object_get(r, "gce");
	vx = json_object_get(r, "vertex");
	assert_true(near(json_real_value(json_object_get(gce,
	    "gpu_ondemand")), 0.35, 1e-9));
	assert_true(near(json_real_value(json_object_get(gce,
	    "host_spot")), 0.07948, 1e-9));
	/* Vertex Spot: the Compute Spot price plus the whole management
	 * fee, 0.15 x the on-demand price. */
	assert_true(near(json_real_value(json_object_get(vx,
	    "gpu_spot")), 0.1915 + 0.15 * 0.35, 1e-9));
	assert_string_equal(json_string_value(json_object_get(gce,
	    "source")), "bundled");
	json_decref(j);
	j = price_to_json(t->p, NULL, "nvidia-h100-80gb");
	r = json_array_get(json_object_get(j, "prices"), 0);
	assert_true(json_is_null(json_object_get(json_object_get(r, "gce"),
	    "gpu_ondemand")));
	json_decref(j);
	j = price_to_json(t->p, NULL, NULL);
	assert_true(json_array_size(json_object_get(j, "prices")) >= 100);
	json_decref(j);
	while (price_next(t->p, &iter, &row))
		n++;
	assert_int_equal(n, 673);	/* the rows of data/prices.csv */
}

static void
free_gcp(uv_timer_t *h)
{
	struct gcp	*g = h->data;

	gcp_free(g);
	uv_close((uv_handle_t *)h, NULL);
}

static void
test_gcp_facade(void **state)
{
	struct t	*t = *state;
	struct gcp	*g = NULL;
	uv_timer_t	 timer;
	char		*cause = NULL;
	const char	*providers[] = { "gce", "vertex" };

	NEED_FAKE(t->ut);
	t->ut->gcp->providers = providers;
	t->ut->gcp->nproviders = 2;
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/skus$\",\"latency_ms\":3000,\"count\":2}"));
	assert_int_equal(gcp_new(t->ut->loop, t->ut->gcp, &g, &cause), 0);
	assert_string_equal(gcp_conf(g)->project, "gpuq-demo");
	assert_non_null(gcp_http(g));
	assert_int_equal(auth_kind(gcp_auth(g)), AUTH_METADATA);
	assert_non_null(gcp_quota(g));
	gcp_start(g);
	/* Freed with the catalog read still in flight. */
	uv_timer_init(t->ut->loop, &timer);
	timer.data = g;
	uv_timer_start(&timer, free_gcp, 300, 0);
	unittest_run(t->ut);

	/* A bad key file fails gcp_new with the reason. */
	t->ut->gcp->credentials = "/nonexistent/key.json";
	assert_int_equal(gcp_new(t->ut->loop, t->ut->gcp, &g, &cause), -ENOENT);
	assert_string_equal(cause, "credentials /nonexistent/key.json: No "
	    "such file or directory");
	free(cause);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_price_bundled, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_price_missing_table,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_catalog_paged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_flex_dws, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_price_override, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_price_catalog_failure,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_refresh_timer,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_price_json, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_gcp_facade, setup,
		    teardown),
	};

	log_init("test-price", getenv("GPUQ_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARNING, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
