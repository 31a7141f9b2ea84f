/*
 * socktest.h: what the unit tests of gpuqd's socket side share
 * (test-api.c, test-server.c): a server listening on the fixture's loop
 * (unittest.h) and closed again, a client dialled to its Unix socket,
 * and its reply lines read while the test runs the loop.
 *
 * Test code only: blocking calls are fine here, never in gpuqd.
 */
#ifndef GPUQ_SOCKTEST_H
#define GPUQ_SOCKTEST_H

#include <stddef.h>

#include <uv.h>

#include "daemon/server.h"

struct unittest;

/* A server on UT's loop calling CB(ARG, ...) for each request line,
 * listening at PATH (mode 0666, for other uids); fails the test. */
struct server	*socktest_server(struct unittest *ut, const struct conf *,
		    const char *path, server_request_cb cb, void *arg);
/* Stop (again) and close S, run UT's loop until it is closed, free it. */
void	 socktest_server_free(struct unittest *ut, struct server *s);

/* Bytes read from a client socket and not yet returned as lines. */
struct socktest_in {
	char	*buf;
	size_t	 len;
	size_t	 cap;
};

/* A blocking client connected to the Unix socket PATH; fails the test. */
int	 socktest_dial(const char *path);
/* Write all of S to FD; fails the test. */
void	 socktest_send(int fd, const char *s);
/*
 * The next line from FD (new string, no newline), running LOOP without
 * blocking between reads; bytes after it stay in IN. Fails the test
 * when no line comes after many turns of the loop.
 */
char	*socktest_line(uv_loop_t *loop, int fd, struct socktest_in *in);
/* Free what IN holds. */
void	 socktest_in_done(struct socktest_in *in);

#endif
