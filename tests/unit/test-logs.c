/*
 * test-logs.c: daemon/logs.c, the follow set's combined Cloud Logging
 * reads (doc/DESIGN.md "Logs"), against the simulated cloud: VMs whose
 * simulated training prints, read in pages of three entries with a
 * round every second, so the 60 s overlap is read again and again; each
 * line must come once, oldest first, both jobs from one call a round,
 * and the output ends once the job has.
 */
#include "config.h"

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

#include "common/jsonw.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/logs.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "tests/unit/cloudtest.h"

/* What one followed job has read so far. */
struct rd {
	struct logs	*l;
	int64_t		 id;
	char		 vm[32];	/* its VM's instance id */
	int64_t		 cursor;
	json_t		*lines;		/* every line handed out */
	int		 caught, end, ended;
	size_t		 want;
};

static void
on_insert(const struct http_resp *r, void *arg)
{
	gcptest_rec_cb(r, arg);
}

/* A VM running job ID's attempt 1: WORK simulated seconds, a line every
 * five. Its instance id into R->vm. */
static void
insert_vm(struct t *t, struct rd *r, int work)
{
	struct http		*http = gcp_http(cloud_gcp(t->cloud));
	struct gcptest_rec	 rec;
	struct http_req		 req;
	json_t			*body;
	char			*url, *job;

	job = xprintf("{\"image\":\"img\",\"env\":{\"FAKEGCP_WORK_SECONDS\":"
	    "\"%d\",\"FAKEGCP_LOG_EVERY\":\"5\",\"GPUQ_JOB_ID\":\"%lld\","
	    "\"GPUQ_ATTEMPT\":\"1\"}}", work, (long long)r->id);
	body = json_pack("{s:s, s:s, s:{s:s}, s:[{s:b, s:b, s:{s:s}}], "
	    "s:[{s:s}], s:{s:[{s:s, s:s}]}}",
	    "name", r->vm[0] != '\0' ? r->vm : "vm",
	    "machineType", "zones/us-central1-a/machineTypes/n1-standard-8",
	    "scheduling", "provisioningModel", "STANDARD",
	    "disks", "boot", 1, "autoDelete", 1, "initializeParams",
	    "sourceImage", "projects/debian-cloud/global/images/family/"
	    "debian-12",
	    "networkInterfaces", "network", "global/networks/default",
	    "metadata", "items", "key", "gpuq-job", "value", job);
	assert_non_null(body);
	url = gcp_url(gcp_conf(cloud_gcp(t->cloud)), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/us-central1-a/instances", t->conf.project);
	memset(&req, 0, sizeof req);
	memset(&rec, 0, sizeof rec);
	req.method = "POST";
	req.url = url;
	req.json = body;
	req.flags = HTTP_AUTH | HTTP_IDEMPOTENT;
	req.api = GCP_API_COMPUTE;
	assert_int_equal(http_request_start(http, &req, on_insert, &rec), 0);
	while (rec.done == 0)
		unittest_run_for(t->ut, 20);
	assert_int_equal(rec.status, 200);
	(void)snprintf(r->vm, sizeof r->vm, "%s", json_string_value(
	    json_object_get(rec.json, "targetId")));
	assert_true(r->vm[0] != '\0');
	gcptest_rec_done(&rec);
	json_decref(body);
	free(url);
	free(job);
}

/* Ask as the logs op does, and take what is handed out. */
static void
rd_poll(struct rd *r)
{
	struct logs_attempt	 a = { 1, "gce", r->vm };
	struct logs_query	 q;
	struct jsonw		 w;
	json_t			*o, *v;
	size_t			 i;

	logs_follow(r->l, r->id, 0, r->ended, &a, 1);
	memset(&q, 0, sizeof q);
	q.cursor = r->cursor;
	q.node = -1;
	jsonw_init(&w);
	jsonw_object_begin(&w);
	logs_read(r->l, r->id, &q, &w);
	jsonw_object_end(&w);
	o = json_loadb(w.buf, w.len, 0, NULL);
	assert_non_null(o);
	json_array_foreach(json_object_get(o, "lines"), i, v)
		json_array_append(r->lines, v);
	r->cursor = json_integer_value(json_object_get(o, "cursor"));
	r->caught = json_is_true(json_object_get(o, "caught_up"));
	r->end = json_is_true(json_object_get(o, "end"));
	json_decref(o);
	jsonw_done(&w);
}

static int
both_have_all(void *arg)
{
	struct rd	*r = arg;

	rd_poll(&r[0]);
	rd_poll(&r[1]);
	return json_array_size(r[0].lines) >= r[0].want &&
	    json_array_size(r[1].lines) >= r[1].want;
}

static const char *
text(struct rd *r, size_t i)
{
	return json_string_value(json_object_get(json_array_get(r->lines, i),
	    "text"));
}

/* Every line once, oldest first, from start to finish. */
static void
check_lines(struct rd *r, int work)
{
	size_t		 i, j, n = json_array_size(r->lines);
	const char	*t0, *t1;
	char		*want;

	assert_int_equal(n, r->want);
	want = xprintf("gpuq-fake: job %lld attempt 1 starting from scratch",
	    (long long)r->id);
	assert_string_equal(text(r, 0), want);
	free(want);
	assert_string_equal(text(r, n - 1),
	    "gpuq-fake: training finished, exit code 0");
	for (i = 1; i < n; i++) {
		t0 = json_string_value(json_object_get(json_array_get(
		    r->lines, i - 1), "time"));
		t1 = json_string_value(json_object_get(json_array_get(
		    r->lines, i), "time"));
		assert_true(strcmp(t0, t1) <= 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(text(r, i), text(r, j));
		assert_int_equal(json_integer_value(json_object_get(
		    json_array_get(r->lines, i), "attempt")), 1);
	}
	(void)work;
}

static int
both_ended(void *arg)
{
	struct rd	*r = arg;

	rd_poll(&r[0]);
	rd_poll(&r[1]);
	return r[0].end && r[1].end;
}

static void
test_logs_combined_paged_once_each(void **state)
{
	struct t		*t = *state;
	struct rd		 r[2];
	struct logs_stats	 st;
	int			 i;

	NEED_FAKE(t->ut);
	t->conf.logs_interval = 1;
	json_decref(fake_post(&t->ut->fake, "/_fake/speed",
	    "{\"factor\":100}"));
	json_decref(fake_post(&t->ut->fake, "/_fake/config",
	    "{\"logging_page_max\":3}"));
	start(t, 0);
	memset(r, 0, sizeof r);
	for (i = 0; i < 2; i++) {
		r[i].l = logs_new(t->ut->loop, t->cloud);
		r[i].id = 7 + i;
		(void)snprintf(r[i].vm, sizeof r[i].vm, "vm-%d", i);
		r[i].lines = json_array();
		insert_vm(t, &r[i], 60 + 30 * i);
		/* the start, a step every 5 s, the end */
		r[i].want = 2 + (60 + 30 * i) / 5;
	}
	/* One follower for both jobs, as gpuqd has. */
	logs_close(r[1].l);
	r[1].l = r[0].l;
	unittest_run_cond(t->ut, both_have_all, r);
	/* More rounds re-read the overlap: nothing comes twice. */
	unittest_run_for(t->ut, 2500);
	(void)both_have_all(r);
	check_lines(&r[0], 60);
	check_lines(&r[1], 90);
	logs_get_stats(r[0].l, &st);
	assert_true(st.rounds >= 3);
	assert_true(st.duplicates > 0);
	/* Pages of three: more calls than rounds, but never a round per
	 * job: both jobs' 34 lines took no more pages than they fill. */
	assert_true(st.calls > st.rounds);
	assert_int_equal(st.rate_limited, 0);
	/* The output ends two complete rounds after the jobs did. */
	r[0].ended = r[1].ended = 1;
	unittest_run_cond(t->ut, both_ended, r);
	assert_int_equal(json_array_size(r[0].lines), r[0].want);
	cloud_free(t->cloud);
	t->cloud = NULL;
	logs_close(r[0].l);
	json_decref(r[0].lines);
	json_decref(r[1].lines);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_logs_combined_paged_once_each, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
