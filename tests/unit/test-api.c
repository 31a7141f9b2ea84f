/*
 * test-api.c: daemon/api.c's ops against a real store in a fresh temp
 * directory, through the real server on a Unix socket and one loop:
 * submit, list, show, cancel, hold, release and their error codes, an
 * unknown op, bad JSON, owner checks by the peer's uid, and that list
 * and show write the same job object.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api.h"
#include "daemon/conf.h"
#include "daemon/server.h"
#include "store/store.h"
#include "tests/unit/socktest.h"
#include "tests/unit/unittest.h"

struct t {
	struct unittest	*ut;		/* the directory, store and loop */
	char		*sock;
	struct conf	 conf;
	struct store	*store;
	struct api	*api;
	struct server	*server;
	int		 fd;		/* our client connection */
	struct socktest_in in;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);
	char		*cause = NULL;

	log_init("test-api", LOG_LEVEL_ERR, 0);
	t->ut = unittest_new("test-api");
	assert_int_equal(chmod(t->ut->dir, 0755), 0);	/* other uids dial */
	t->store = unittest_store(t->ut);
	assert_int_equal(conf_init(&t->conf), 0);
	assert_int_equal(conf_set(&t->conf, "daemon", "admin_group", "",
	    &cause), 0);
	t->sock = unittest_path(t->ut, "s");
	t->api = api_new(unittest_loop(t->ut), t->store, &t->conf);
	t->server = socktest_server(t->ut, &t->conf, t->sock, api_request,
	    t->api);
	t->fd = -1;
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	if (t->fd != -1)
		(void)close(t->fd);
	socktest_in_done(&t->in);
	server_stop(t->server);		/* no request reaches a closed api */
	api_close(t->api);
	socktest_server_free(t->ut, t->server);
	unittest_free(t->ut);
	conf_done(&t->conf);
	free(t->sock);
	free(t);
	return 0;
}

/* Send LINE (newline added), run the loop until its reply is in. */
static json_t *
req(struct t *t, const char *line)
{
	json_error_t	 e;
	json_t		*v;
	char		*reply;

	if (t->fd == -1)
		t->fd = socktest_dial(t->sock);
	socktest_send(t->fd, line);
	socktest_send(t->fd, "\n");
	reply = socktest_line(t->ut->loop, t->fd, &t->in);
	v = json_loads(reply, 0, &e);
	if (v == NULL)
		fail_msg("reply is not JSON: %s: %s", e.text, reply);
	free(reply);
	return v;
}

/* The reply's error code, or "" when ok. Frees R. */
static char *
code(json_t *r)
{
	static char	 buf[64];
	const char	*c;

	c = json_string_value(json_object_get(json_object_get(r, "error"),
	    "code"));
	snprintf(buf, sizeof buf, "%s", json_is_true(json_object_get(r,
	    "ok")) ? "" : c != NULL ? c : "?");
	json_decref(r);
	return buf;
}

#define JOB	"{\"image\":\"example.com/t:1\",\"accelerator\":" \
	"{\"type\":\"nvidia-tesla-t4\",\"count\":1}}"

static int64_t
submit(struct t *t, int hold)
{
	json_t	*r;
	int64_t	 id;

	r = req(t, hold ? "{\"op\":\"submit\",\"hold\":true,\"job\":" JOB "}" :
	    "{\"op\":\"submit\",\"job\":" JOB "}");
	assert_true(json_is_true(json_object_get(r, "ok")));
	id = json_integer_value(json_object_get(r, "id"));
	assert_true(id > 0);
	json_decref(r);
	return id;
}

static char *
op_id(const char *op, int64_t id)
{
	static char	buf[128];

	snprintf(buf, sizeof buf, "{\"op\":\"%s\",\"id\":%lld}", op,
	    (long long)id);
	return buf;
}

static void
test_api_submit_list_show(void **state)
{
	struct t	*t = *state;
	json_t		*r, *jobs;
	int64_t		 a, b;

	a = submit(t, 0);
	b = submit(t, 1);
	assert_int_equal(b, a + 1);
	r = req(t, "{\"op\":\"list\"}");
	jobs = json_object_get(r, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(jobs, 1), "state")), "held");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
	    r, "counts"), "queued")), 1);
	json_decref(r);
	r = req(t, op_id("show", a));
	assert_string_equal(json_string_value(json_object_get(json_object_get(
	    json_object_get(r, "job"), "spec"), "image")), "example.com/t:1");
	json_decref(r);

	assert_string_equal(code(req(t, op_id("show", 999))), "not_found");
	assert_string_equal(code(req(t, "{\"op\":\"show\"}")), "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"show\",\"id\":\"x\"}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"submit\"}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"submit\",\"job\":{}}")),
	    "invalid_job");
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"state\":\"x\"}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"limit\":0}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"bogus\":1}")),
	    "bad_request");
}

static void
test_api_cancel_hold_release(void **state)
{
	struct t	*t = *state;
	json_t		*r;
	int64_t		 a, b;

	a = submit(t, 0);
	b = submit(t, 0);
	r = req(t, op_id("hold", a));
	assert_string_equal(json_string_value(json_object_get(r, "state")),
	    "held");
	json_decref(r);
	assert_string_equal(code(req(t, op_id("hold", a))), "");
	assert_string_equal(code(req(t, op_id("release", a))), "");
	assert_string_equal(code(req(t, op_id("release", a))), "");
	assert_string_equal(code(req(t, op_id("cancel", b))), "");
	assert_string_equal(code(req(t, op_id("cancel", b))), "conflict");
	assert_string_equal(code(req(t, op_id("hold", b))), "conflict");
	assert_string_equal(code(req(t, op_id("release", b))), "conflict");
	assert_string_equal(code(req(t, op_id("cancel", 999))), "not_found");
	assert_string_equal(code(req(t, "{\"op\":\"cancel\"}")),
	    "bad_request");
}

static void
test_api_bad_requests(void **state)
{
	struct t	*t = *state;
	json_t		*r;

	assert_string_equal(code(req(t, "{\"op\":")), "bad_json");
	assert_string_equal(code(req(t, "[1,2]")), "bad_json");
	assert_string_equal(code(req(t, "{}")), "bad_request");
	assert_string_equal(code(req(t, "{\"op\":7}")), "bad_request");
	r = req(t, "{\"op\":\"frobnicate\"}");
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(r, "error"), "message")), "known ops: submit"));
	assert_string_equal(code(r), "unknown_op");
	assert_string_equal(code(req(t, "{\"op\":\"ping\",\"x\":1}")),
	    "bad_request");
	/* No [gcp] project: the cloud ops are unavailable. */
	assert_string_equal(code(req(t, "{\"op\":\"prices\"}")),
	    "unavailable");
	/* Still serving. */
	assert_string_equal(code(req(t, "{\"op\":\"ping\"}")), "");
}

/*
 * A job of another uid: connect as that other user (a child process;
 * SO_PEERCRED is taken at connect), and every change is forbidden.
 */
static void
test_api_owner_checks(void **state)
{
	struct t		*t = *state;
	struct store_job_new	 n;
	int64_t			 id;
	char			*cause = NULL, buf[4096];
	const char		*ops[] = { "cancel", "hold", "release",
	    "logs" };
	uid_t			 other = getuid() == 0 ? 65534 : getuid() + 1;
	int			 pfd[2], status, i;
	ssize_t			 got;
	size_t			 len = 0;
	pid_t			 pid;

	memset(&n, 0, sizeof n);
	n.name = "theirs";
	n.owner = getuid() == 0 ? 1234 : getuid() + 1;
	n.spec = JOB;
	assert_int_equal(store_jobs_insert(t->store, &n, 1, &id, &cause), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE	*f;
		char	 line[4096];
		int	 fd;

		(void)close(pfd[0]);
		if (getuid() == 0 && (setgid(other) != 0 ||
		    setuid(other) != 0))
			_exit(2);
		fd = socktest_dial(t->sock);
		f = fdopen(fd, "r+");
		for (i = 0; i < 4; i++) {
			fprintf(f, "%s\n", op_id(ops[i], id));
			fflush(f);
			if (fgets(line, sizeof line, f) == NULL)
				_exit(3);
			if (write(pfd[1], line, strlen(line)) < 0)
				_exit(4);
		}
		_exit(0);
	}
	(void)close(pfd[1]);
	/* Serve the child until it has its four replies. */
	for (;;) {
		struct pollfd	p = { pfd[0], POLLIN, 0 };

		(void)uv_run(t->ut->loop, UV_RUN_NOWAIT);
		if (poll(&p, 1, 1) != 1)
			continue;
		got = read(pfd[0], buf + len, sizeof buf - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	buf[len] = '\0';
	(void)close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < 4; i++) {
		char	*line = i == 0 ? strtok(buf, "\n") : strtok(NULL, "\n");

		assert_non_null(line);
		assert_string_equal(code(json_loads(line, 0, NULL)),
		    "forbidden");
	}
	/* Its owner (or root) may; we are root or the job is not ours. */
	if (getuid() == 0) {
		/* logs: its fields checked, then no [gcp] project to read */
		assert_string_equal(code(req(t, "{\"op\":\"logs\",\"id\":1,"
		    "\"cursor\":-1}")), "bad_request");
		assert_string_equal(code(req(t, op_id("logs", id))),
		    "unavailable");
		assert_string_equal(code(req(t, op_id("hold", id))), "");
	}
	else
		assert_string_equal(code(req(t, op_id("hold", id))),
		    "forbidden");
}

/*
 * list and show write the same job object (one writer), even with text
 * that is not UTF-8 in it: show used to abort gpuqd on such a message.
 */
static void
test_api_list_and_show_agree(void **state)
{
	struct t	*t = *state;
	json_t		*l, *s, *lj, *sj, *ev;
	char		*cause = NULL;
	const char	*msg;
	int64_t		 id;

	id = submit(t, 0);
	assert_int_equal(store_job_set_why(t->store, id, "bad \xff byte",
	    &cause), 0);
	assert_int_equal(store_event_add(t->store, id, "ended \xc3(", &cause),
	    0);
	l = req(t, "{\"op\":\"list\"}");
	s = req(t, op_id("show", id));
	lj = json_array_get(json_object_get(l, "jobs"), 0);
	sj = json_object_get(s, "job");
	assert_non_null(lj);
	assert_non_null(sj);
	ev = json_object_get(sj, "events");
	msg = json_string_value(json_object_get(json_array_get(ev,
	    json_array_size(ev) - 1), "message"));
	assert_string_equal(msg, "ended \xef\xbf\xbd(");
	(void)json_object_del(sj, "spec");
	(void)json_object_del(sj, "attempts_list");
	(void)json_object_del(sj, "events");
	assert_true(json_equal(lj, sj));
	assert_string_equal(json_string_value(json_object_get(lj, "why")),
	    "bad \xef\xbf\xbd byte");
	json_decref(l);
	json_decref(s);
}

/*
 * The compact list (doc/DESIGN.md "The wire"): each row holds the values
 * the object form has under the same names. OBJ a job of a list page,
 * ROW its row, COLS the page's "columns".
 */
static void
row_agrees(json_t *cols, json_t *row, json_t *obj)
{
	static const struct {
		const char	*col, *key, *sub;
	} same[] = {
		{ "id", "id", NULL }, { "name", "name", NULL },
		{ "state", "state", NULL }, { "gpu", "accelerator", "type" },
		{ "gpu_count", "accelerator", "count" },
		{ "nodes", "nodes", NULL }, { "updated", "updated", NULL },
		{ "attempts", "attempts", NULL },
		{ "cost_usd", "cost_usd", NULL },
		{ "checkpoint", "checkpoint", NULL },
		{ "checkpoint_at", "checkpoint_at", NULL },
		{ "why", "why", NULL }, { "message", "message", NULL },
		{ "array_id", "array_id", NULL },
		{ "task_index", "task_index", NULL },
		{ "deadline", NULL, NULL },	/* unix seconds; text there */
		{ "slack", "slack", NULL },
		{ "missed_by", "missed_by", NULL },
		{ "tasks", "array", "count" },
		{ "provider", "current", "provider" },
		{ "region", "current", "region" },
		{ "zone", "current", "zone" }, { "spot", "current", "spot" },
		{ "started", "current", "started" },
		{ "ended", "current", "ended" },
		{ "attempt_cost_usd", "current", "cost_usd" },
		{ "hourly_usd", "current", "hourly_usd" },
	};
	json_t	*want, *got, *o;
	size_t	 i, k;
	char	*a, *b;

	assert_int_equal(json_array_size(cols), sizeof same / sizeof same[0]);
	assert_true(json_array_size(row) <= json_array_size(cols));
	for (i = 0; i < sizeof same / sizeof same[0]; i++) {
		assert_string_equal(json_string_value(json_array_get(cols, i)),
		    same[i].col);
		if (same[i].key == NULL) {
			got = json_array_get(row, i);
			assert_true((json_object_get(obj, same[i].col) !=
			    NULL) == (json_integer_value(got) > 0));
			continue;
		}
		o = json_object_get(obj, same[i].key);
		want = same[i].sub != NULL ? json_object_get(o, same[i].sub) :
		    o;
		k = i;
		got = json_array_get(row, k);	/* NULL past its end */
		/* Absent in one form: null, 0 or false in the other. */
		if (want == NULL || json_is_null(want)) {
			assert_true(got == NULL || json_is_null(got) ||
			    (json_is_integer(got) &&
			    json_integer_value(got) == 0) ||
			    json_is_false(got));
			continue;
		}
		if (got == NULL)
			fail_msg("job %lld: no %s in its row", (long long)
			    json_integer_value(json_object_get(obj, "id")),
			    same[i].col);
		a = json_dumps(want, JSON_ENCODE_ANY);
		b = json_dumps(got, JSON_ENCODE_ANY);
		if (!json_equal(want, got))
			fail_msg("job %lld: %s is %s in its row, %s in the "
			    "object", (long long)json_integer_value(
			    json_object_get(obj, "id")), same[i].col, b, a);
		free(a);
		free(b);
	}
}

/* Every row of REQ (a compact list), page after page from "next". */
static json_t *
compact_all(struct t *t, const char *what, int *ret_pages)
{
	json_t	*all = json_array(), *r, *next, *cols = NULL;
	char	 line[512];
	int64_t	 after = 0;
	int	 pages = 0;

	for (;;) {
		snprintf(line, sizeof line, "{\"op\":\"list\",\"compact\":true,"
		    "%s,\"after\":%lld}", what, (long long)after);
		r = req(t, line);
		assert_true(json_is_true(json_object_get(r, "ok")));
		assert_non_null(json_object_get(r, "counts"));
		if (cols == NULL)
			cols = json_incref(json_object_get(r, "columns"));
		assert_true(json_equal(cols, json_object_get(r, "columns")));
		assert_int_equal(json_array_extend(all, json_object_get(r,
		    "rows")), 0);
		pages++;
		next = json_object_get(r, "next");
		if (next == NULL) {
			json_decref(r);
			break;
		}
		after = json_integer_value(next);
		json_decref(r);
	}
	json_decref(cols);
	*ret_pages = pages;
	return all;
}

/*
 * A queue of every state, a live attempt on each cloud state, arrays
 * (folded and expanded), a job with no accelerator and strings that
 * need escaping: the compact rows say what the objects say, in the same
 * order, whatever the page size, and an old request still gets objects.
 */
static void
test_api_list_compact(void **state)
{
	struct t		*t = *state;
	struct store_job_new	 nj;
	struct store_attempt	 a;
	json_t			*l, *c, *cols, *jobs, *rows, *all;
	char			*cause = NULL, name[32];
	const char		*reqs[] = { "\"state\":\"all\"",
	    "\"state\":\"all\",\"expand\":true", "\"state\":[\"running\","
	    "\"held\"]", "\"state\":\"all\",\"owner\":0" };
	int64_t			 id, arr;
	size_t			 i, k;
	int			 st, pages, limit;
	char			 line[512];

	arr = 0;
	for (st = 0; st < JOB_NSTATES; st++) {
		id = submit(t, 0);
		if (st == JOB_QUEUED)
			continue;
		assert_int_equal(store_job_transition(t->store, id,
		    JOB_MASK(JOB_QUEUED), st, "moved by the test", NULL,
		    &cause), 0);
		if (!(JOB_MASK(st) & (JOB_MASK_CLOUD |
		    JOB_MASK(JOB_CANCELLING))))
			continue;
		memset(&a, 0, sizeof a);
		a.job_id = id;
		a.provider = "gce";
		a.region = "us-central1";
		a.zone = st == JOB_LAUNCHING ? NULL : "us-central1-b";
		a.machine_type = "n1-standard-4";
		a.gpu = "nvidia-tesla-t4";
		a.gpu_count = 1;
		snprintf(name, sizeof name, "gpuq-t-%lld", (long long)id);
		a.resource = name;
		a.spot = st == JOB_RUNNING;
		a.hourly_usd = 0.35 + st;
		a.exit_code = -1;
		assert_int_equal(store_attempt_insert(t->store, &a, &cause),
		    0);
		if (st == JOB_RUNNING)
			assert_int_equal(store_attempt_set_state(t->store,
			    a.id, ATTEMPT_RUNNING, 1790000000, NULL, &cause),
			    0);
		assert_int_equal(store_job_set_checkpoint(t->store, id,
		    "gs://b/gpuq/1/checkpoints/ckpt-00000600", 1790000100,
		    &cause), 0);
	}
	/* An ended attempt's cost on a failed job. */
	id = submit(t, 1);
	assert_int_equal(store_job_set_why(t->store, id,
	    "a \"quoted\\\" why\nover two lines \xff", &cause), 0);
	/* Arrays, between plain jobs, one of them the last job. */
	l = req(t, "{\"op\":\"submit\",\"job\":{\"image\":\"example.com/t:1\","
	    "\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":2},"
	    "\"array\":{\"count\":3}}}");
	assert_true(json_is_true(json_object_get(l, "ok")));
	json_decref(l);
	memset(&nj, 0, sizeof nj);
	nj.name = "no-accelerator \"x\"";
	nj.spec = "{\"image\":\"example.com/t:1\"}";
	assert_int_equal(store_jobs_insert(t->store, &nj, 1, &id, &cause), 0);
	l = req(t, "{\"op\":\"submit\",\"job\":{\"image\":\"example.com/t:1\","
	    "\"accelerator\":{\"type\":\"nvidia-l4\",\"count\":1},"
	    "\"array\":{\"count\":4}}}");
	assert_true(json_is_true(json_object_get(l, "ok")));
	arr = json_integer_value(json_object_get(l, "id"));
	json_decref(l);
	assert_true(arr > 0);

	for (i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
		snprintf(line, sizeof line, "{\"op\":\"list\",%s,"
		    "\"limit\":1000}", reqs[i]);
		l = req(t, line);
		jobs = json_object_get(l, "jobs");
		assert_non_null(jobs);
		assert_null(json_object_get(l, "rows"));  /* old form */
		snprintf(line, sizeof line, "{\"op\":\"list\",\"compact\":true,"
		    "%s,\"limit\":100000}", reqs[i]);
		c = req(t, line);
		cols = json_object_get(c, "columns");
		rows = json_object_get(c, "rows");
		assert_null(json_object_get(c, "jobs"));
		assert_null(json_object_get(c, "next"));
		assert_true(json_equal(json_object_get(l, "counts"),
		    json_object_get(c, "counts")));
		assert_int_equal(json_array_size(rows), json_array_size(jobs));
		assert_true(json_array_size(rows) > 0);
		for (k = 0; k < json_array_size(rows); k++)
			row_agrees(cols, json_array_get(rows, k),
			    json_array_get(jobs, k));
		/* The same rows in pages of every size up to the whole. */
		for (limit = 1; limit <= 4; limit++) {
			snprintf(line, sizeof line, "%s,\"limit\":%d",
			    reqs[i], limit);
			all = compact_all(t, line, &pages);
			assert_true(json_equal(all, rows));
			assert_true(pages >= (int)((json_array_size(rows) +
			    (size_t)limit - 1) / (size_t)limit));
			json_decref(all);
		}
		json_decref(l);
		json_decref(c);
	}
	/* Bad values are refused, naming the field. */
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"compact\":1}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"limit\":100000}")),
	    "bad_request");
	assert_string_equal(code(req(t, "{\"op\":\"list\",\"compact\":true,"
	    "\"limit\":100001}")), "bad_request");
}

/*
 * A compact page ends once its text passes GPUQ_LIST_PAGE_BYTES, with
 * "next", and the pages together are every job once, in order.
 */
static void
test_api_list_compact_bytes(void **state)
{
	struct t		*t = *state;
	struct store_job_new	*nj;
	json_t			*all, *r;
	char			*cause = NULL, **names, line[256];
	int64_t			*ids;
	size_t			 n = 8000, i;
	int			 pages;

	nj = xcalloc(n, sizeof *nj);
	names = xcalloc(n, sizeof *names);
	ids = xcalloc(n, sizeof *ids);
	for (i = 0; i < n; i++) {
		names[i] = xprintf("job-%06zu-%0100d", i, 0);
		nj[i].name = names[i];
		nj[i].spec = "{\"image\":\"example.com/t:1\",\"accelerator\":"
		    "{\"type\":\"nvidia-tesla-t4\",\"count\":1}}";
	}
	assert_int_equal(store_jobs_insert(t->store, nj, n, ids, &cause), 0);
	snprintf(line, sizeof line, "{\"op\":\"list\",\"compact\":true,"
	    "\"state\":\"all\",\"limit\":100000}");
	if (t->fd == -1)
		t->fd = socktest_dial(t->sock);
	socktest_send(t->fd, line);
	socktest_send(t->fd, "\n");
	{
		char	*text = socktest_line(t->ut->loop, t->fd, &t->in);

		assert_true(strlen(text) > GPUQ_LIST_PAGE_BYTES);
		assert_true(strlen(text) < GPUQ_LIST_PAGE_BYTES + 4096);
		r = json_loads(text, 0, NULL);
		assert_non_null(json_object_get(r, "next"));
		assert_true(json_array_size(json_object_get(r, "rows")) < n);
		json_decref(r);
		free(text);
	}
	all = compact_all(t, "\"state\":\"all\",\"limit\":100000", &pages);
	assert_true(pages >= 2);
	assert_int_equal(json_array_size(all), n);
	for (i = 0; i < n; i++)
		assert_int_equal(json_integer_value(json_array_get(
		    json_array_get(all, i), 0)), ids[i]);
	json_decref(all);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(nj);
	free(ids);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup_teardown(test_api_submit_list_show,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_cancel_hold_release,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_bad_requests, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api_owner_checks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_api_list_and_show_agree,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_list_compact,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_list_compact_bytes,
		    setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
