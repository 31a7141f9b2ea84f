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
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
