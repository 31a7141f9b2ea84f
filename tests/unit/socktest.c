/*
 * socktest.c: a server and a client of gpuqd's socket for unit tests
 * that run the server's loop themselves (see socktest.h).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "common/xmalloc.h"
#include "daemon/server.h"
#include "tests/unit/socktest.h"
#include "tests/unit/unittest.h"

#define SOCKTEST_TURNS	200000	/* loop turns of 1 ms poll at most */

struct server *
socktest_server(struct unittest *ut, const struct conf *conf,
    const char *path, server_request_cb cb, void *arg)
{
	struct server	*s;
	char		*cause = NULL;
	int		 fd;

	s = server_new(unittest_loop(ut), conf, cb, arg);
	if (server_socket_open(path, "", &fd, &cause) != 0)
		fail_msg("server_socket_open %s: %s", path, cause);
	assert_int_equal(chmod(path, 0666), 0);		/* for other uids */
	if (server_listen(s, fd, path, &cause) != 0)
		fail_msg("server_listen %s: %s", path, cause);
	return s;
}

static void
socktest_on_closed(void *arg)
{
	*(int *)arg = 1;
}

void
socktest_server_free(struct unittest *ut, struct server *s)
{
	int	closed = 0;

	server_stop(s);
	server_close(s, socktest_on_closed, &closed);
	unittest_run(ut);
	assert_true(closed);
	server_free(s);
}

int
socktest_dial(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path, path, sizeof sun.sun_path - 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof sun),
	    0);
	return fd;
}

void
socktest_send(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

char *
socktest_line(uv_loop_t *loop, int fd, struct socktest_in *in)
{
	struct pollfd	 p;
	char		*nl = NULL, *s;
	ssize_t		 n;
	int		 turns;

	for (turns = 0; turns < SOCKTEST_TURNS; turns++) {
		if (in->len > 0 &&
		    (nl = memchr(in->buf, '\n', in->len)) != NULL)
			break;
		(void)uv_run(loop, UV_RUN_NOWAIT);
		p.fd = fd;
		p.events = POLLIN;
		if (poll(&p, 1, 1) != 1)
			continue;
		if (in->cap - in->len < 65536) {
			in->cap = in->cap ? in->cap * 2 : 1 << 20;
			in->buf = xrealloc(in->buf, in->cap);
		}
		n = read(fd, in->buf + in->len, in->cap - in->len);
		assert_true(n > 0);
		in->len += (size_t)n;
	}
	if (nl == NULL)
		fail_msg("no reply line after %d turns of the loop", turns);
	s = xstrndup(in->buf, (size_t)(nl - in->buf));
	in->len -= (size_t)(nl + 1 - in->buf);
	memmove(in->buf, nl + 1, in->len);
	return s;
}

void
socktest_in_done(struct socktest_in *in)
{
	free(in->buf);
	memset(in, 0, sizeof *in);
}
