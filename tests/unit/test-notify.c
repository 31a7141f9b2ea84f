/*
 * test-notify.c: where job events come from and what is sent of them:
 * the store's watchers (one call per committed move, none for a move
 * that did not happen), the events a move is (daemon/notify.c), their
 * JSON and Slack bodies and the command's environment, the URLs a
 * webhook may have (common/webhook.c); the Prometheus text writer
 * (daemon/metrics.c); the journal's fields (common/log.c).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/log.h"
#include "common/webhook.h"
#include "common/xmalloc.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "store/store.h"
#include "tests/unit/unittest.h"

/* ---------------------------------------------------------------- */
/* The store's watchers.					    */

struct seen {
	struct store_move	 m[12];
	char			*msg[12];
	int			 n;
};

static void
on_move(const struct store_move *m, void *arg)
{
	struct seen	*s = arg;

	assert_true(s->n < 12);
	s->m[s->n] = *m;
	s->msg[s->n] = m->message != NULL ? xstrdup(m->message) : NULL;
	s->m[s->n].message = NULL;
	s->n++;
}

static void
seen_done(struct seen *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->msg[i]);
}

static int64_t
insert_job(struct store *st)
{
	struct store_job_new	j;
	int64_t			id;
	char			*cause = NULL;

	memset(&j, 0, sizeof j);
	j.name = "w";
	j.spec = "{\"image\":\"x\"}";
	assert_int_equal(store_jobs_insert(st, &j, 1, &id, &cause), 0);
	return id;
}

/* Each committed move is told once, after the commit, with its words. */
static void
test_notify_store_watch_each_move_once(void **state)
{
	struct unittest		*ut = unittest_new("test-notify");
	struct store		*st = unittest_store(ut);
	struct store_attempt	 a;
	struct store_end	 end, se;
	struct seen		 s, s2;
	int64_t			 id;
	char			*cause = NULL;

	(void)state;
	memset(&s, 0, sizeof s);
	memset(&s2, 0, sizeof s2);
	assert_int_equal(store_watch(st, on_move, &s), 0);
	assert_int_equal(store_watch(st, on_move, &s2), 0);
	id = insert_job(st);
	assert_int_equal(s.n, 0);		/* a submit is no move */

	memset(&a, 0, sizeof a);
	a.job_id = id;
	a.provider = "gce";
	a.region = "us-central1";
	a.zone = "us-central1-a";
	a.machine_type = "n1-standard-4";
	a.gpu = "nvidia-tesla-t4";
	a.gpu_count = 1;
	a.resource = "gpuq-x-1-1";
	assert_int_equal(store_attempt_launch(st, &a, 1, "launching",
	    &cause), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.m[0].job_id, id);
	assert_int_equal(s.m[0].from, JOB_QUEUED);
	assert_int_equal(s.m[0].to, JOB_LAUNCHING);
	assert_int_equal(s.m[0].end, -1);
	assert_int_equal(s.m[0].attempt_id, a.id);
	assert_string_equal(s.msg[0], "launching");

	assert_int_equal(store_job_transition(st, id, JOB_MASK(JOB_LAUNCHING),
	    JOB_RUNNING, "running", NULL, &cause), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.m[1].to, JOB_RUNNING);

	memset(&end, 0, sizeof end);
	end.attempt_id = a.id;
	end.when = 1;
	end.reason = END_PREEMPTED;
	end.exit_code = -1;
	assert_int_equal(store_job_requeue(st, id, JOB_MASK(JOB_RUNNING),
	    &end, 0, "preempted", NULL, NULL, &cause), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.m[2].from, JOB_RUNNING);
	assert_int_equal(s.m[2].to, JOB_QUEUED);
	assert_int_equal(s.m[2].end, END_PREEMPTED);
	assert_int_equal(s.m[2].attempt_id, a.id);
	assert_string_equal(notify_event_name(&s.m[2]), "interrupted");

	/* A move refused (wrong state) tells nobody. */
	assert_int_equal(store_job_transition(st, id, JOB_MASK(JOB_RUNNING),
	    JOB_SUCCEEDED, "x", NULL, &cause), -EALREADY);
	free(cause);
	cause = NULL;
	assert_int_equal(s.n, 3);
	/* The next move is told alone, not with the refused one. */
	assert_int_equal(store_job_transition(st, id, JOB_MASK(JOB_QUEUED),
	    JOB_CANCELLED, "cancelled", NULL, &cause), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.m[3].to, JOB_CANCELLED);
	assert_int_equal(s.m[3].end, -1);
	assert_int_equal(s2.n, 4);		/* every watcher hears all */

	/* attempt.c ends an attempt, then moves its job: the move carries
	 * that end; the move after it does not. */
	id = insert_job(st);
	a.id = 0;
	a.job_id = id;
	a.resource = "gpuq-x-2-1";
	assert_int_equal(store_attempt_launch(st, &a, 1, "launching",
	    &cause), 0);
	assert_int_equal(store_attempt_end(st, a.id, 2, END_FAILED, 3, "exit",
	    0.5, &cause), 0);
	assert_int_equal(s.n, 5);		/* an end alone is no move */
	assert_int_equal(store_job_transition(st, id, JOB_MASK(JOB_LAUNCHING),
	    JOB_FAILED, "exit code 3", NULL, &cause), 0);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.m[5].to, JOB_FAILED);
	assert_int_equal(s.m[5].end, END_FAILED);
	assert_int_equal(s.m[5].attempt_id, a.id);
	assert_string_equal(notify_event_name(&s.m[5]), "failed");

	/* The same through store_attempt_end_with() (the cloud's billed
	 * times and the baseline): the move carries that end too. */
	id = insert_job(st);
	a.id = 0;
	a.job_id = id;
	a.resource = "gpuq-x-3-1";
	assert_int_equal(store_attempt_launch(st, &a, 1, "launching",
	    &cause), 0);
	memset(&se, 0, sizeof se);
	se.attempt_id = a.id;
	se.when = 2;
	se.reason = END_FAILED;
	se.exit_code = 3;
	se.message = "exit";
	assert_int_equal(store_attempt_end_with(st, &se, &cause), 0);
	assert_int_equal(store_job_transition(st, id, JOB_MASK(JOB_LAUNCHING),
	    JOB_FAILED, "exit code 3", NULL, &cause), 0);
	assert_int_equal(s.n, 8);		/* its launch, its end */
	assert_int_equal(s.m[7].end, END_FAILED);
	assert_int_equal(s.m[7].attempt_id, a.id);
	seen_done(&s);
	seen_done(&s2);
	unittest_free(ut);
}

static void
test_notify_store_watch_limit(void **state)
{
	struct unittest	*ut = unittest_new("test-notify");
	struct store	*st = unittest_store(ut);
	struct seen	 s;
	int		 i;

	(void)state;
	for (i = 0; i < STORE_WATCHERS; i++)
		assert_int_equal(store_watch(st, on_move, &s), 0);
	assert_int_equal(store_watch(st, on_move, &s), -ENOSPC);
	unittest_free(ut);
}

/* ---------------------------------------------------------------- */
/* Events and bodies.						    */

static void
test_notify_event_names(void **state)
{
	struct store_move	m;

	(void)state;
	memset(&m, 0, sizeof m);
	m.end = -1;
	m.from = JOB_RUNNING;
	m.to = JOB_FAILED;
	assert_string_equal(notify_event_name(&m), "failed");
	m.to = JOB_SUCCEEDED;
	assert_string_equal(notify_event_name(&m), "succeeded");
	m.to = JOB_CANCELLED;
	assert_string_equal(notify_event_name(&m), "cancelled");
	m.to = JOB_RUNNING;
	assert_null(notify_event_name(&m));
	m.to = JOB_QUEUED;			/* a plain requeue */
	assert_null(notify_event_name(&m));
	m.end = END_FAILED;			/* a retried failure */
	assert_null(notify_event_name(&m));
	m.end = END_MAINTENANCE;
	assert_string_equal(notify_event_name(&m), "interrupted");
	m.end = END_QUOTA;			/* neither */
	assert_null(notify_event_name(&m));
}

static void
fill_job(struct store_job *j)
{
	memset(j, 0, sizeof *j);
	j->id = 42;
	j->name = "resnet";
	j->state = JOB_FAILED;
	j->owner = 1000;
	j->attempts = 2;
	j->failures = 1;
	j->interruptions = 1;
	j->cost_usd = 1.25;
	j->exit_code = 3;
	j->message = "exit 3: \"out of memory\"";
}

static void
test_notify_event_json_fields(void **state)
{
	struct store_job	j;
	struct store_move	m;
	json_t			*ev;
	char			*body;

	(void)state;
	fill_job(&j);
	memset(&m, 0, sizeof m);
	m.job_id = 42;
	m.from = JOB_RUNNING;
	m.to = JOB_FAILED;
	m.end = -1;
	ev = notify_event_json("failed", &j, &m, "abcd1234", 1764089139);
	body = notify_body(ev, "json");
	json_decref(ev);
	ev = json_loads(body, 0, NULL);
	assert_non_null(ev);
	assert_string_equal(json_string_value(json_object_get(ev, "event")),
	    "failed");
	assert_int_equal(json_integer_value(json_object_get(ev, "job_id")),
	    42);
	assert_string_equal(json_string_value(json_object_get(ev, "name")),
	    "resnet");
	assert_string_equal(json_string_value(json_object_get(ev, "state")),
	    "failed");
	assert_string_equal(json_string_value(json_object_get(ev, "from")),
	    "running");
	assert_int_equal(json_integer_value(json_object_get(ev,
	    "exit_code")), 3);
	assert_true(json_is_null(json_object_get(ev, "reason")));
	assert_string_equal(json_string_value(json_object_get(ev,
	    "message")), "exit 3: \"out of memory\"");
	assert_string_equal(json_string_value(json_object_get(ev, "time")),
	    "2025-11-25T16:45:39Z");
	assert_string_equal(json_string_value(json_object_get(ev,
	    "install")), "abcd1234");
	assert_true(json_real_value(json_object_get(ev, "cost_usd")) == 1.25);
	json_decref(ev);
	free(body);
}

static void
test_notify_slack_body(void **state)
{
	struct store_job	j;
	struct store_move	m;
	json_t			*ev, *slack;
	char			*body;

	(void)state;
	fill_job(&j);
	memset(&m, 0, sizeof m);
	m.from = JOB_RUNNING;
	m.to = JOB_FAILED;
	m.end = -1;
	ev = notify_event_json("failed", &j, &m, "abcd1234", 0);
	body = notify_body(ev, "slack");
	slack = json_loads(body, 0, NULL);
	assert_non_null(slack);
	assert_int_equal(json_object_size(slack), 1);
	assert_string_equal(json_string_value(json_object_get(slack, "text")),
	    "gpuq job 42 \"resnet\" failed (exit 3): exit 3: \"out of "
	    "memory\" ($1.25)");
	json_decref(slack);
	json_decref(ev);
	free(body);
}

static void
test_notify_env(void **state)
{
	struct store_job	 j;
	struct store_move	 m;
	json_t			*ev;
	char			*env[NOTIFY_ENV_MAX + 1];
	int			 n, i, found = 0;

	(void)state;
	fill_job(&j);
	j.message = NULL;
	j.exit_code = -1;
	memset(&m, 0, sizeof m);
	m.from = JOB_RUNNING;
	m.to = JOB_QUEUED;
	m.end = END_PREEMPTED;
	ev = notify_event_json("interrupted", &j, &m, "i", 0);
	n = notify_env(ev, env);
	assert_true(n <= NOTIFY_ENV_MAX);
	assert_null(env[n]);
	for (i = 0; i < n; i++) {
		if (strcmp(env[i], "GPUQ_EVENT=interrupted") == 0 ||
		    strcmp(env[i], "GPUQ_JOB_ID=42") == 0 ||
		    strcmp(env[i], "GPUQ_REASON=preempted") == 0 ||
		    strcmp(env[i], "GPUQ_EXIT_CODE=") == 0 ||
		    strcmp(env[i], "GPUQ_JOB_STATE=queued") == 0)
			found++;
		assert_true(strncmp(env[i], "GPUQ_", 5) == 0 ||
		    strncmp(env[i], "PATH=", 5) == 0);
		free(env[i]);
	}
	assert_int_equal(found, 5);
	json_decref(ev);
}

/* ---------------------------------------------------------------- */
/* Webhook URLs.						    */

static void
test_notify_webhook_urls(void **state)
{
	static const char *const good[] = {
		"https://hooks.slack.com/services/T0/B0/x",
		"https://example.com",
		"https://[2001:db8::1]:8443/h",
		"http://127.0.0.1:9000/hook",
		"http://localhost/x",
		"HTTP://LOCALHOST:80",
		"http://[::1]:8080/",
		"http://127.1.2.3/",
	};
	static const struct {
		const char	*url;
		const char	*words;
	} bad[] = {
		{ "http://example.com/hook", "use https://" },
		{ "http://127.0.0.1.example.com/", "use https://" },
		{ "http://localhost.evil/", "use https://" },
		{ "ftp://example.com/", "not an http(s) URL" },
		{ "hooks.slack.com/x", "not an http(s) URL" },
		{ "https:///path", "no host" },
		{ "https://user:pw@example.com/", "user name or password" },
		{ "https://example.com/a b", "no spaces" },
	};
	char	*cause;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		cause = NULL;
		if (webhook_url_check(good[i], &cause) != 0)
			fail_msg("%s refused: %s", good[i], cause);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cause = NULL;
		assert_int_equal(webhook_url_check(bad[i].url, &cause),
		    -EINVAL);
		if (strstr(cause, bad[i].words) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].url, cause,
			    bad[i].words);
		/* The URL's path may be its secret: not in the words. */
		assert_null(strstr(cause, bad[i].url));
		free(cause);
	}
}

/* ---------------------------------------------------------------- */
/* The Prometheus writer.					    */

static void
test_metrics_text_escaping(void **state)
{
	struct metrics_buf	 b;
	const char		*l[4] = { "a", "x\\y\"z\nw", "b", "" };

	(void)state;
	memset(&b, 0, sizeof b);
	metrics_family(&b, "gpuq_t", "gauge", "A test.");
	metrics_sample(&b, "gpuq_t", l, 2, 3);
	metrics_sample(&b, "gpuq_t", NULL, 0, 0.25);
	metrics_sample(&b, "gpuq_t", NULL, 0, 1e20);
	assert_string_equal(b.s,
	    "# HELP gpuq_t A test.\n"
	    "# TYPE gpuq_t gauge\n"
	    "gpuq_t{a=\"x\\\\y\\\"z\\nw\",b=\"\"} 3\n"
	    "gpuq_t 0.25\n"
	    "gpuq_t 1e+20\n");
	free(b.s);
}

/* ---------------------------------------------------------------- */
/* The journal's fields.					    */

static void
test_log_journal_fields(void **state)
{
	struct log_fields	f;
	int			n, i;
	const char		*want[] = {
		"MESSAGE=job 42: running -> failed",
		"PRIORITY=6",
		"SYSLOG_IDENTIFIER=gpuqd",
		"GPUQ_JOB=42",
		"GPUQ_ATTEMPT=3",
		"GPUQ_STATE=failed",
	};

	(void)state;
	log_init("gpuqd", LOG_LEVEL_INFO, 0);
	n = log_journal_fields(&f, LOG_LEVEL_INFO,
	    "job 42: running -> failed", 0, 3, "failed");
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		assert_int_equal(f.iov[i].iov_len, strlen(want[i]));
		assert_memory_equal(f.iov[i].iov_base, want[i],
		    f.iov[i].iov_len);
	}
	/* No job: no GPUQ_ fields. */
	n = log_journal_fields(&f, LOG_LEVEL_WARNING, "store: busy", 0, 0,
	    NULL);
	assert_int_equal(n, 3);
	/* "job" without a number is not a job. */
	n = log_journal_fields(&f, LOG_LEVEL_INFO, "job x: y", 0, 0, NULL);
	assert_int_equal(n, 3);
}

static struct {
	char	 fields[8][256];
	int	 n;
	int	 calls;
} sunk;

static int
sink(const struct iovec *iov, int n)
{
	int	i;

	sunk.calls++;
	sunk.n = n;
	for (i = 0; i < n && i < 8; i++)
		(void)snprintf(sunk.fields[i], sizeof sunk.fields[i], "%.*s",
		    (int)iov[i].iov_len, (const char *)iov[i].iov_base);
	return 0;
}

/* Under the journal, a job's line goes to the sender with its fields;
 * other lines stay on stderr. */
static void
test_log_job_to_journal(void **state)
{
	(void)state;
	memset(&sunk, 0, sizeof sunk);
	log_init("gpuqd", LOG_LEVEL_INFO, 1);
	log_set_journal_sink(sink);
	log_job(7, 2, "running", "job 7: pending -> running");
	assert_int_equal(sunk.calls, 1);
	assert_int_equal(sunk.n, 6);
	assert_string_equal(sunk.fields[3], "GPUQ_JOB=7");
	assert_string_equal(sunk.fields[4], "GPUQ_ATTEMPT=2");
	assert_string_equal(sunk.fields[5], "GPUQ_STATE=running");
	log_info("job 8: launch refused");	/* "job N" read off the line */
	assert_int_equal(sunk.calls, 2);
	assert_string_equal(sunk.fields[3], "GPUQ_JOB=8");
	log_info("reconciler: poll 1");		/* not about a job */
	assert_int_equal(sunk.calls, 2);
	log_set_journal_sink(NULL);
	log_init("gpuqd", LOG_LEVEL_INFO, 0);
	log_job(7, 2, "running", "job 7: to stderr");
	assert_int_equal(sunk.calls, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_store_watch_each_move_once),
		cmocka_unit_test(test_notify_store_watch_limit),
		cmocka_unit_test(test_notify_event_names),
		cmocka_unit_test(test_notify_event_json_fields),
		cmocka_unit_test(test_notify_slack_body),
		cmocka_unit_test(test_notify_env),
		cmocka_unit_test(test_notify_webhook_urls),
		cmocka_unit_test(test_metrics_text_escaping),
		cmocka_unit_test(test_log_journal_fields),
		cmocka_unit_test(test_log_job_to_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
