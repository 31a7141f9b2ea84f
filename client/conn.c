/*
 * conn.c: the client end of gpuqd's socket. Blocking I/O with a
 * timeout, one request line out, one reply line in (doc/DESIGN.md "The
 * wire"). Knows the framing, not what the requests mean.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/frame.h"
#include "common/proto.h"
#include "common/xmalloc.h"

/*
 * Replies may be longer than a request line (a page of jobs, a long
 * story); cap them well above anything gpuqd sends so a broken peer
 * cannot make us swallow the disk.
 */
#define CONN_MAX_REPLY	(256 * 1024 * 1024)
#define CONN_READ	(64 * 1024)	/* per read(); stays off mmap */

struct cli_conn {
	int		 fd;
	int		 timeout_ms;	/* 0 = none */
	struct frame	 frame;
	char		*rbuf;		/* CONN_READ bytes */
};

/* Milliseconds on the monotonic clock. */
static int64_t
conn_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
cli_conn_open(const char *path, int timeout_ms, struct cli_conn **ret,
    char **cause)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv;
	struct cli_conn		*c;
	int			 fd, rc;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		*cause = xprintf("cannot connect to %s: the path is longer "
		    "than the %zu bytes a socket address holds", path,
		    sizeof sun.sun_path - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		rc = -errno;
		*cause = xprintf("socket: %s", strerror(errno));
		return rc;
	}
	if (timeout_ms > 0) {
		/* On Linux the send timeout also bounds connect(). */
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	while (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		if (errno == EINTR)
			continue;
		rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
		*cause = xprintf("cannot connect to %s: %s", path,
		    strerror(-rc));
		close(fd);
		return rc;
	}
	c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->timeout_ms = timeout_ms;
	c->rbuf = xmalloc(CONN_READ);
	frame_init(&c->frame, CONN_MAX_REPLY);
	*ret = c;
	return 0;
}

void
cli_conn_free(struct cli_conn *c)
{
	if (c == NULL)
		return;
	if (c->fd != -1)
		close(c->fd);
	frame_done(&c->frame);
	free(c->rbuf);
	free(c);
}

int
cli_conn_send(struct cli_conn *c, json_t *req, char **cause)
{
	char	*s;
	size_t	 len, off = 0;
	ssize_t	 n;
	int	 rc = 0;

	if ((s = json_dumps(req, JSON_COMPACT)) == NULL) {
		*cause = xstrdup("cannot encode the request as JSON");
		return -EINVAL;
	}
	len = strlen(s);
	if (len > GPUQ_MAX_LINE) {
		*cause = xprintf("the request is %zu bytes; gpuqd takes at "
		    "most %d (1 MiB) per request", len, GPUQ_MAX_LINE);
		free(s);
		return -EMSGSIZE;
	}
	s[len++] = '\n';	/* replaces the NUL; length is explicit */
	while (off < len) {
		n = send(c->fd, s + off, len - off, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = (errno == EAGAIN || errno == EWOULDBLOCK) ?
			    -ETIMEDOUT : -errno;
			if (rc == -ECONNRESET)
				rc = -EPIPE;
			*cause = rc == -ETIMEDOUT ?
			    xprintf("gpuqd did not take the request within "
			    "%g s", c->timeout_ms / 1000.0) :
			    xprintf("sending to gpuqd: %s", strerror(-rc));
			break;
		}
		off += (size_t)n;
	}
	free(s);
	return rc;
}

int
cli_conn_recv_line(struct cli_conn *c, char **ret_line, size_t *ret_len,
    char **cause)
{
	struct pollfd	 pfd;
	char		*line;
	size_t		 len;
	ssize_t		 n;
	int64_t		 deadline, left;
	int		 rc;

	deadline = conn_now_ms() + c->timeout_ms;
	for (;;) {
		rc = frame_next(&c->frame, &line, &len);
		if (rc == -EMSGSIZE) {
			*cause = xprintf("gpuqd's reply is longer than %d MiB",
			    CONN_MAX_REPLY >> 20);
			return -EMSGSIZE;
		}
		if (rc == 1)
			break;
		if (c->timeout_ms > 0) {
			left = deadline - conn_now_ms();
			if (left <= 0)
				goto timeout;
			pfd.fd = c->fd;
			pfd.events = POLLIN;
			rc = poll(&pfd, 1, (int)left);
			if (rc == -1 && errno == EINTR)
				continue;
			if (rc == 0)
				goto timeout;
		}
		n = read(c->fd, c->rbuf, CONN_READ);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno != ECONNRESET) {
			rc = -errno;
			*cause = xprintf("reading from gpuqd: %s",
			    strerror(errno));
			return rc;
		}
		if (n <= 0) {
			*cause = xstrdup("gpuqd closed the connection before "
			    "answering");
			return -EPIPE;
		}
		frame_feed(&c->frame, c->rbuf, (size_t)n);
	}
	*ret_line = line;
	*ret_len = len;
	return 0;

timeout:
	*cause = xprintf("gpuqd did not answer within %g s",
	    c->timeout_ms / 1000.0);
	return -ETIMEDOUT;
}

int
cli_conn_recv(struct cli_conn *c, json_t **ret, char **cause)
{
	json_error_t	 err;
	json_t		*v;
	char		*line;
	size_t		 len;
	int		 rc;

	if ((rc = cli_conn_recv_line(c, &line, &len, cause)) != 0)
		return rc;
	if ((v = json_loadb(line, len, 0, &err)) == NULL) {
		*cause = xprintf("gpuqd's reply is not JSON: %s", err.text);
		return -EBADMSG;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		*cause = xstrdup("gpuqd's reply is not a JSON object");
		return -EBADMSG;
	}
	*ret = v;
	return 0;
}
