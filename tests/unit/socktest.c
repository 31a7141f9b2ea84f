/*
 * socktest.c: a client of gpuqd's socket for unit tests that run the
 * server's loop themselves (see socktest.h).
 */
#include "config.h"

#include <sys/socket.h>
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
#include "tests/unit/socktest.h"

#define SOCKTEST_TURNS	200000	/* loop turns of 1 ms poll at most */

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
