/*
 * test-logging.c: providers/gcp/logging.c, Cloud Logging entries.list
 * (DESIGN GJ): each service's filter clause, the attempt key an entry
 * carries, what gpuq reads of a LogEntry, RFC 3339 times, the request
 * body of a page, and one call against the simulated Cloud Logging
 * (pages and a 429 that is not retried here: daemon/logs.c paces).
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

#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/logging.h"
#include "tests/unit/gcptest.h"

static void
check_str(char *got, const char *want)
{
	if (want == NULL)
		assert_null(got);
	else {
		assert_non_null(got);
		assert_string_equal(got, want);
	}
	free(got);
}

static void
test_logging_clauses(void **state)
{
	(void)state;
	check_str(logging_clause("p1", GCP_SERVICE_BATCH, "ab12cd34", 42, 3,
	    NULL),
	    "(logName=\"projects/p1/logs/batch_task_logs\" AND "
	    "labels.gpuq-install=\"ab12cd34\" AND labels.gpuq-job=\"42\" AND "
	    "labels.gpuq-attempt=\"3\")");
	check_str(logging_clause("p1", GCP_SERVICE_VERTEX, "ab12cd34", 42, 1,
	    "projects/123/locations/us-central1/customJobs/987"),
	    "(resource.type=\"ml_job\" AND resource.labels.job_id=\"987\")");
	check_str(logging_clause("p1", GCP_SERVICE_GCE, "ab12cd34", 42, 2,
	    "4000000000000000012"),
	    "(logName=\"projects/p1/logs/gcplogs-docker-driver\" AND "
	    "resource.type=\"gce_instance\" AND "
	    "resource.labels.instance_id=\"4000000000000000012\")");
	/* Nothing to read before the cloud named it. */
	check_str(logging_clause("p1", GCP_SERVICE_GCE, "i", 1, 1, NULL),
	    NULL);
	check_str(logging_clause("p1", GCP_SERVICE_VERTEX, "i", 1, 1, ""),
	    NULL);
	/* A value that would end the quoted string is refused. */
	check_str(logging_clause("p1", GCP_SERVICE_GCE, "i", 1, 1,
	    "1\" OR logName:\"x"), NULL);
	check_str(logging_clause("p\\1", GCP_SERVICE_BATCH, "i", 1, 1,
	    NULL), NULL);
}

static json_t *
entry(const char *text)
{
	json_t	*e = json_loads(text, 0, NULL);

	assert_non_null(e);
	return e;
}

static void
test_logging_keys(void **state)
{
	json_t	*e;

	(void)state;
	check_str(logging_attempt_key(GCP_SERVICE_BATCH, "ab", 42, 3, NULL),
	    "batch:ab:42:3");
	check_str(logging_attempt_key(GCP_SERVICE_VERTEX, "ab", 42, 3,
	    "projects/1/locations/r/customJobs/77"), "vertex:77");
	check_str(logging_attempt_key(GCP_SERVICE_GCE, "ab", 42, 3, "555"),
	    "gce:555");
	check_str(logging_attempt_key(GCP_SERVICE_GCE, "ab", 42, 3, NULL),
	    NULL);

	e = entry("{\"resource\":{\"type\":\"batch.googleapis.com/Job\","
	    "\"labels\":{\"job_id\":\"u\"}},\"labels\":{\"gpuq-install\":"
	    "\"ab\",\"gpuq-job\":\"42\",\"gpuq-attempt\":\"3\"}}");
	check_str(logging_entry_key(e), "batch:ab:42:3");
	json_decref(e);
	e = entry("{\"resource\":{\"type\":\"ml_job\",\"labels\":"
	    "{\"job_id\":\"77\",\"task_name\":\"workerpool0-0\"}}}");
	check_str(logging_entry_key(e), "vertex:77");
	json_decref(e);
	e = entry("{\"resource\":{\"type\":\"gce_instance\",\"labels\":"
	    "{\"instance_id\":\"555\",\"zone\":\"z\"}}}");
	check_str(logging_entry_key(e), "gce:555");
	json_decref(e);
	e = entry("{\"resource\":{\"type\":\"k8s_container\"}}");
	check_str(logging_entry_key(e), NULL);
	json_decref(e);
}

static void
test_logging_entry_parse(void **state)
{
	struct logging_entry	 le;
	json_t			*e;

	(void)state;
	e = entry("{\"timestamp\":\"2026-11-25T10:00:01.5Z\",\"insertId\":"
	    "\"abc\",\"textPayload\":\"hello\\n\",\"labels\":{\"task_id\":"
	    "\"task/u-group0-3/0/0\"}}");
	assert_int_equal(logging_entry_parse(e, &le), 0);
	assert_int_equal(le.sec, 1795600801);
	assert_int_equal(le.nsec, 500000000);
	assert_string_equal(le.insert_id, "abc");
	assert_string_equal(le.text, "hello\n");
	assert_int_equal(le.node, 3);
	json_decref(e);

	e = entry("{\"timestamp\":\"2026-11-25T10:00:01Z\",\"resource\":"
	    "{\"labels\":{\"task_name\":\"workerpool0-2\"}},\"jsonPayload\":"
	    "{\"message\":\"m\",\"levelname\":\"INFO\"}}");
	assert_int_equal(logging_entry_parse(e, &le), 0);
	assert_string_equal(le.text, "m");
	assert_string_equal(le.insert_id, "");
	assert_int_equal(le.node, 2);
	json_decref(e);

	e = entry("{\"timestamp\":\"2026-11-25T10:00:01Z\",\"jsonPayload\":"
	    "{\"loss\":0.5}}");
	assert_int_equal(logging_entry_parse(e, &le), 0);
	assert_null(le.text);
	assert_non_null(le.json);
	json_decref(e);

	e = entry("{\"textPayload\":\"no time\"}");
	assert_int_equal(logging_entry_parse(e, &le), -EINVAL);
	json_decref(e);
}

static void
test_logging_time(void **state)
{
	int64_t	 s;
	long	 ns;
	char	 buf[64];

	(void)state;
	assert_int_equal(logging_time_parse("2026-11-25T10:00:00Z", &s, &ns),
	    0);
	assert_int_equal(s, 1795600800);
	assert_int_equal(ns, 0);
	/* nanoseconds, trailing zeros dropped, and an offset */
	assert_int_equal(logging_time_parse("2026-11-25T11:00:00.000000123"
	    "+01:00", &s, &ns), 0);
	assert_int_equal(s, 1795600800);
	assert_int_equal(ns, 123);
	assert_int_equal(logging_time_parse("2026-11-25T03:00:00.25-07:00",
	    &s, &ns), 0);
	assert_int_equal(s, 1795600800);
	assert_int_equal(ns, 250000000);
	assert_int_equal(logging_time_parse("2026-11-25T10:00:00", &s, &ns),
	    -EINVAL);
	assert_int_equal(logging_time_parse("2026-13-25T10:00:00Z", &s, &ns),
	    -EINVAL);
	assert_int_equal(logging_time_parse("yesterday", &s, &ns), -EINVAL);
	logging_time_format(1795600800, 5, buf, sizeof buf);
	assert_string_equal(buf, "2026-11-25T10:00:00.000000005Z");
	assert_int_equal(logging_time_parse(buf, &s, &ns), 0);
	assert_int_equal(s, 1795600800);
	assert_int_equal(ns, 5);
}

static void
test_logging_request_body(void **state)
{
	json_t	*b;
	char	*s;

	(void)state;
	b = logging_request_body("p1", "resource.type=\"ml_job\"", 1000,
	    NULL);
	s = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(s, "{\"filter\":\"resource.type=\\\"ml_job\\\"\","
	    "\"orderBy\":\"timestamp asc\",\"pageSize\":1000,"
	    "\"resourceNames\":[\"projects/p1\"]}");
	free(s);
	json_decref(b);
	b = logging_request_body("p1", "", 5, "tok");
	assert_string_equal(json_string_value(json_object_get(b,
	    "pageToken")), "tok");
	json_decref(b);
}

struct t {
	struct unittest	*ut;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-logging");
	gcptest_fake(t->ut);
	if (t->ut->fake.pid <= 0)
		return 0;
	gcptest_http(t->ut);
	gcptest_auth(t->ut);
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	unittest_free(t->ut);
	free(t);
	return 0;
}

static void
list(struct t *t, json_t *body, struct gcptest_rec *rec)
{
	memset(rec, 0, sizeof *rec);
	assert_int_equal(logging_list(t->ut->http, t->ut->gcp, body,
	    gcptest_rec_cb, rec), 0);
	unittest_run(t->ut);
	assert_int_equal(rec->done, 1);
}

static void
test_logging_list_against_the_fake(void **state)
{
	struct t		*t = *state;
	struct gcptest_rec	 rec;
	json_t			*b, *reqs;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/config",
	    "{\"logging_reads_per_minute\":1}"));
	b = logging_request_body(t->ut->gcp->project,
	    "resource.type=\"ml_job\" AND resource.labels.job_id=(\"1\" OR "
	    "\"2\")", 100, NULL);
	list(t, b, &rec);
	assert_int_equal(rec.status, 200);
	gcptest_rec_done(&rec);
	reqs = fake_requests(&t->ut->fake, "POST", "^/v2/entries:list$", 1);
	assert_int_equal(json_array_size(reqs), 1);
	json_decref(reqs);
	/* Over the read quota: 429 RESOURCE_EXHAUSTED, one attempt only. */
	list(t, b, &rec);
	assert_int_equal(rec.status, 429);
	assert_int_equal(rec.kind, GCP_ERR_RATE_LIMIT);
	assert_int_equal(rec.attempts, 1);
	gcptest_rec_done(&rec);
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logging_clauses),
		cmocka_unit_test(test_logging_keys),
		cmocka_unit_test(test_logging_entry_parse),
		cmocka_unit_test(test_logging_time),
		cmocka_unit_test(test_logging_request_body),
		cmocka_unit_test_setup_teardown(
		    test_logging_list_against_the_fake, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
