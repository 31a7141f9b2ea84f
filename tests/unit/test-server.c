/*
 * test-server.c: daemon/server.c's framing over a real Unix socket on
 * one loop, with an echo callback in place of the api: lines split
 * across writes, over-long lines answered and skipped in step,
 * pipelined requests answered in order, and a client that hangs up in
 * the middle of a big reply.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/conf.h"
#include "daemon/server.h"
#include "tests/unit/socktest.h"
#include "tests/unit/unittest.h"

struct t {
	struct unittest	*ut;		/* the directory and the loop */
	char		*sock;
	struct conf	 conf;
	struct server	*server;
	int		 requests;
	size_t		 big;		/* reply size for "big" lines */
	struct socktest_in in;
};

/*
 * The request callback: {"echo":LINE,"n":COUNT}; a line "big" gets a
 * reply of T->big bytes.
 */
static int
on_request(void *arg, struct server_client *c, const char *line,
    size_t len)
{
	struct t	*t = arg;
	struct jsonw	 w;
	char		*pad;

	jsonw_init(&w);
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "echo");
	jsonw_stringn(&w, line, len);
	JSONW_KEY(&w, "n");
	jsonw_int(&w, ++t->requests);
	if (strcmp(line, "big") == 0) {
		pad = xmalloc(t->big);
		memset(pad, 'x', t->big);
		JSONW_KEY(&w, "pad");
		jsonw_stringn(&w, pad, t->big);
		free(pad);
	}
	jsonw_object_end(&w);
	server_client_reply_jsonw(c, &w);
	jsonw_done(&w);
	return 0;
}

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	log_init("test-server", LOG_LEVEL_ERR, 0);
	t->ut = unittest_new("test-server");
	assert_int_equal(conf_init(&t->conf), 0);
	t->sock = unittest_path(t->ut, "s");
	t->server = socktest_server(t->ut, &t->conf, t->sock, on_request, t);
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	socktest_server_free(t->ut, t->server);
	unittest_free(t->ut);
	conf_done(&t->conf);
	free(t->sock);
	socktest_in_done(&t->in);
	free(t);
	return 0;
}

/* Run the loop a little. */
static void
spin(struct t *t, int n)
{
	while (n-- > 0)
		(void)uv_run(t->ut->loop, UV_RUN_NOWAIT);
}

static void
assert_reply(struct t *t, int fd, const char *want)
{
	char	*s = socktest_line(t->ut->loop, fd, &t->in);

	assert_string_equal(s, want);
	free(s);
}

/* A line written in pieces is one request, answered once it is whole. */
static void
test_server_partial_lines(void **state)
{
	struct t	*t = *state;
	int		 fd = socktest_dial(t->sock);

	socktest_send(fd, "hel");
	spin(t, 50);
	assert_int_equal(t->requests, 0);
	socktest_send(fd, "lo");
	spin(t, 50);
	assert_int_equal(t->requests, 0);
	socktest_send(fd, "\n");
	assert_reply(t, fd, "{\"echo\":\"hello\",\"n\":1}");
	(void)close(fd);
}

/*
 * A line over GPUQ_MAX_LINE is answered line_too_long and skipped up to
 * its newline; the next line is served as usual.
 */
static void
test_server_long_line(void **state)
{
	struct t	*t = *state;
	size_t		 n = GPUQ_MAX_LINE + 100;
	char		*big, *s;
	int		 fd = socktest_dial(t->sock);
	size_t		 off = 0;
	ssize_t		 w;

	big = xmalloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\n';
	while (off < n + 1) {
		struct pollfd	p = { fd, POLLOUT, 0 };

		spin(t, 1);
		if (poll(&p, 1, 1) != 1)
			continue;
		w = send(fd, big + off, n + 1 - off, MSG_DONTWAIT);
		if (w > 0)
			off += (size_t)w;
	}
	free(big);
	socktest_send(fd, "after\n");
	s = socktest_line(t->ut->loop, fd, &t->in);
	assert_non_null(strstr(s, "\"line_too_long\""));
	free(s);
	assert_reply(t, fd, "{\"echo\":\"after\",\"n\":1}");
	(void)close(fd);
}

/* Requests sent in one write are answered in order, one line each. */
static void
test_server_pipelined_in_order(void **state)
{
	struct t	*t = *state;
	char		 want[64];
	int		 fd = socktest_dial(t->sock), i;

	socktest_send(fd, "r1\nr2\nr3\nr4\nr5\n");
	for (i = 1; i <= 5; i++) {
		snprintf(want, sizeof want, "{\"echo\":\"r%d\",\"n\":%d}", i,
		    i);
		assert_reply(t, fd, want);
	}
	(void)close(fd);
}

/*
 * A client that asks for a reply bigger than the socket buffers and
 * hangs up before reading it: the server drops it, and serves the next
 * client.
 */
static void
test_server_client_closes_mid_reply(void **state)
{
	struct t	*t = *state;
	int		 fd = socktest_dial(t->sock), fd2;

	t->big = 4 * 1024 * 1024;
	socktest_send(fd, "big\n");
	while (t->requests == 0)
		spin(t, 1);
	spin(t, 20);
	(void)close(fd);
	spin(t, 200);
	t->big = 0;
	fd2 = socktest_dial(t->sock);
	socktest_send(fd2, "next\n");
	assert_reply(t, fd2, "{\"echo\":\"next\",\"n\":2}");
	assert_int_equal(server_client_count(t->server), 1);
	(void)close(fd2);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup_teardown(test_server_partial_lines,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_long_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_server_pipelined_in_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_server_client_closes_mid_reply, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
