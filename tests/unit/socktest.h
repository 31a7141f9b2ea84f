/*
 * socktest.h: what the unit tests of gpuqd's socket side share
 * (test-api.c, test-server.c): a client dialled to the server's Unix
 * socket and its reply lines read while the test runs the loop.
 *
 * Test code only: blocking calls are fine here, never in gpuqd.
 */
#ifndef GPUQ_SOCKTEST_H
#define GPUQ_SOCKTEST_H

#include <stddef.h>

#include <uv.h>

/* Bytes read from a client socket and not yet returned as lines. */
struct socktest_in {
	char	*buf;
	size_t	 len;
	size_t	 cap;
};

/* A blocking client connected to the Unix socket PATH; fails the test. */
int	 socktest_dial(const char *path);
/*
 * The next line from FD (new string, no newline), running LOOP without
 * blocking between reads; bytes after it stay in IN. Fails the test
 * when no line comes after many turns of the loop.
 */
char	*socktest_line(uv_loop_t *loop, int fd, struct socktest_in *in);
/* Free what IN holds. */
void	 socktest_in_done(struct socktest_in *in);

#endif
