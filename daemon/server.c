/*
 * server.c: the control socket: accept, frame, limit, reply in order.
 *
 * Listening sockets are watched with a uv_poll_t and accepted by hand
 * (accept4), so accepting can pause near the fd limit and resume when a
 * client leaves (OpenSMTPD control.c). Each client is a uv_pipe_t with
 * its peer credentials, a frame (common/frame.c) and an output buffer.
 *
 * Order: every line of a client is offered to the request callback in
 * turn. Replies are appended to the client's output buffer, which is
 * flushed once per batch of lines (uv_try_write first, uv_write for the
 * rest). A reply promised by server_client_defer() (a submit waiting for
 * its group commit) may let later submits join the same batch, but a
 * request that would answer at once is held (-EAGAIN from the callback)
 * until every owed reply is out; then the client goes on.
 *
 * Limits ([daemon] in gpuqd.conf): max_connections and
 * max_connections_per_uid (the extra client gets one "busy" line and is
 * closed), idle_timeout (one sweep timer), max_pending_output (reading
 * and line processing stop while more is queued to the client, and go
 * on when the writes drain).
 *
 * Knows nothing of ops, jobs or the store.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "common/frame.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/conf.h"
#include "daemon/server.h"

#define SERVER_ACCEPT_BATCH	64	/* accepts per wake-up */
#define SERVER_FD_RESERVE	16	/* fds kept for the store, the cloud */
#define SERVER_RESUME_MS	1000	/* retry accepting after a pause */
#define SERVER_GRACE_MS		3000	/* slow readers at shutdown */
#define SERVER_READ_SIZE	65536
#define SERVER_OUT_KEEP		65536	/* buffers kept when empty */
#define SERVER_READ_AHEAD	GPUQ_MAX_LINE	/* read past a held line */
#define SERVER_WARN_EVERY_MS	10000	/* rate of repeated warnings */

struct server_listener {
	uv_poll_t			 poll;	/* poll.data == this */
	int				 fd;
	char				*unlink_path;	/* or NULL */
	struct server			*server;
	LIST_ENTRY(server_listener)	 entry;
};

#define CLIENT_READING		0x01	/* uv_read_start in effect */
#define CLIENT_EOF		0x02	/* peer sent EOF: finish, close */
#define CLIENT_CLOSING		0x04	/* uv_close called */
#define CLIENT_SHUTDOWN		0x08	/* uv_shutdown in flight */
#define CLIENT_HELD_TOO_LONG	0x10	/* owes a line_too_long reply */
#define CLIENT_GROUPS		0x20	/* groups[] fetched */

struct server_client {
	uv_pipe_t			 pipe;	/* pipe.data == this */
	struct server			*server;
	TAILQ_ENTRY(server_client)	 entry;	/* until closing */
	unsigned			 id;	/* for logs */
	struct server_peer		 peer;
	gid_t				*groups;	/* SO_PEERGROUPS */
	int				 ngroups;
	struct frame			 frame;
	char				*out;	/* replies not yet written */
	size_t				 outlen;
	size_t				 outcap;
	size_t				 writing;	/* bytes in uv_write */
	int				 owed;	/* deferred replies */
	char				*held;	/* line waiting for owed */
	size_t				 heldlen;
	int				 refs;	/* handle + each owed reply */
	unsigned			 flags;	/* CLIENT_* */
	uint64_t			 active;	/* uv_now of last I/O */
	uv_shutdown_t			 shutdown;
};

/* One uv_write: the buffer it carries is freed when it completes. */
struct server_write {
	uv_write_t	 req;		/* req.data == this */
	char		*base;
	size_t		 len;
};

struct server {
	uv_loop_t			*loop;
	const struct conf		*conf;		/* borrowed */
	server_request_cb		 cb;
	void				*arg;
	LIST_HEAD(, server_listener)	 listeners;
	TAILQ_HEAD(, server_client)	 clients;	/* not closing */
	int				 nclients;
	unsigned			 next_id;
	rlim_t				 nofile;	/* fd limit */
	int				 paused;	/* accepting */
	int				 stopping;
	int				 closing;
	int				 grace_closed;
	int				 pending_closes;
	void				(*done)(void *);
	void				*done_arg;
	uv_timer_t			 sweep;		/* idle clients */
	uv_timer_t			 resume;	/* accept again */
	uv_timer_t			 grace;		/* close deadline */
	uint64_t			 warned;	/* last warning */
	unsigned			 rejected;	/* since then */
	char				 rbuf[SERVER_READ_SIZE];
};

static void	server_client_process(struct server_client *);
static void	server_client_close(struct server_client *);
static void	server_closed(struct server *);
static void	server_on_handle_close(uv_handle_t *);
static void	server_listener_on_poll(uv_poll_t *, int, int);

/*
 * Warnings that a flood could repeat (rejected clients, the fd limit)
 * are logged at most once per SERVER_WARN_EVERY_MS, with a count.
 */
static void
server_warn_limited(struct server *s, const char *what)
{
	uint64_t	now = uv_now(s->loop);

	s->rejected++;
	if (s->warned != 0 && now - s->warned < SERVER_WARN_EVERY_MS)
		return;
	log_warnx("socket: %s (%u refused in the last %ds)", what,
	    s->rejected, SERVER_WARN_EVERY_MS / 1000);
	s->warned = now;
	s->rejected = 0;
}

int
server_socket_open(const char *path, const char *group, int *ret_fd,
    char **cause)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	struct group		*gr;
	mode_t			 old;
	int			 fd, probe, rc;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		*cause = xprintf("socket path %s is too long (%zu bytes, at "
		    "most %zu); set a shorter [daemon] socket", path,
		    strlen(path), sizeof sun.sun_path - 1);
		return -ENAMETOOLONG;
	}
	(void)strncpy(sun.sun_path, path, sizeof sun.sun_path - 1);

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			*cause = xprintf("%s exists and is not a socket; "
			    "remove it or set another [daemon] socket", path);
			return -EEXIST;
		}
		/* Someone listening? A non-blocking connect tells. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (probe == -1) {
			rc = -errno;
			*cause = xprintf("socket: %s", strerror(errno));
			return rc;
		}
		rc = connect(probe, (struct sockaddr *)&sun, sizeof sun);
		if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS) {
			(void)close(probe);
			*cause = xprintf("another server is listening on %s "
			    "(is gpuqd already running?); stop it first",
			    path);
			return -EADDRINUSE;
		}
		(void)close(probe);
		if (unlink(path) == -1 && errno != ENOENT) {
			rc = -errno;
			*cause = xprintf("cannot remove stale socket %s: %s",
			    path, strerror(errno));
			return rc;
		}
		log_info("socket: removed stale %s", path);
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		rc = -errno;
		*cause = xprintf("socket: %s", strerror(errno));
		return rc;
	}
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	(void)umask(old);
	if (rc == -1) {
		rc = -errno;
		*cause = xprintf("cannot bind %s: %s%s", path, strerror(-rc),
		    rc == -ENOENT ? "; create its directory (systemd: "
		    "RuntimeDirectory=gpuq) or set [daemon] socket" : "");
		(void)close(fd);
		return rc;
	}
	if (group != NULL && *group != '\0') {
		gr = getgrnam(group);
		if (gr == NULL)
			log_info("socket: group \"%s\" does not exist; %s "
			    "keeps the daemon's group", group, path);
		else if (chown(path, (uid_t)-1, gr->gr_gid) == -1)
			log_warn("socket: cannot give %s to group \"%s\"",
			    path, group);
	}
	if (listen(fd, SOMAXCONN) == -1) {
		rc = -errno;
		*cause = xprintf("cannot listen on %s: %s", path,
		    strerror(errno));
		(void)close(fd);
		(void)unlink(path);
		return rc;
	}
	*ret_fd = fd;
	return 0;
}

/* Every few idle_timeouts, close clients that have been idle too long. */
static void
server_on_sweep(uv_timer_t *t)
{
	struct server		*s = t->data;
	struct server_client	*c, *next;
	uint64_t		 now = uv_now(s->loop);
	uint64_t		 limit = (uint64_t)s->conf->idle_timeout * 1000;

	for (c = TAILQ_FIRST(&s->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->owed > 0 || now - c->active < limit)
			continue;
		log_debug("client %u: idle for %llds, closing", c->id,
		    (long long)s->conf->idle_timeout);
		server_client_close(c);
	}
}

static void
server_sweep_arm(struct server *s)
{
	uint64_t	period = (uint64_t)s->conf->idle_timeout * 1000 / 4;

	if (period < 250)
		period = 250;
	if (period > 30000)
		period = 30000;
	(void)uv_timer_start(&s->sweep, server_on_sweep, period, period);
}

struct server *
server_new(uv_loop_t *loop, const struct conf *conf, server_request_cb cb,
    void *arg)
{
	struct server	*s;
	struct rlimit	 rl;

	s = xcalloc(1, sizeof *s);
	s->loop = loop;
	s->conf = conf;
	s->cb = cb;
	s->arg = arg;
	LIST_INIT(&s->listeners);
	TAILQ_INIT(&s->clients);
	s->nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 1024;
	(void)uv_timer_init(loop, &s->sweep);
	(void)uv_timer_init(loop, &s->resume);
	(void)uv_timer_init(loop, &s->grace);
	s->sweep.data = s->resume.data = s->grace.data = s;
	server_sweep_arm(s);
	return s;
}

void
server_conf_changed(struct server *s)
{
	if (!s->closing)
		server_sweep_arm(s);
}

int
server_client_count(const struct server *s)
{
	return s->nclients;
}

static void
server_listeners_poll(struct server *s, int on)
{
	struct server_listener	*l;

	LIST_FOREACH(l, &s->listeners, entry) {
		if (on)
			(void)uv_poll_start(&l->poll, UV_READABLE,
			    server_listener_on_poll);
		else
			(void)uv_poll_stop(&l->poll);
	}
}

static void
server_resume(struct server *s)
{
	if (!s->paused || s->stopping)
		return;
	s->paused = 0;
	(void)uv_timer_stop(&s->resume);
	server_listeners_poll(s, 1);
}

static void
server_on_resume(uv_timer_t *t)
{
	server_resume(t->data);
}

/* Near the fd limit: stop accepting until a client leaves, or a second. */
static void
server_pause(struct server *s)
{
	if (s->paused)
		return;
	s->paused = 1;
	server_listeners_poll(s, 0);
	(void)uv_timer_start(&s->resume, server_on_resume, SERVER_RESUME_MS,
	    0);
}

/*
 * Into W (initialized here; the caller calls jsonw_done):
 * {"ok":false,"error":{"code":CODE,"message":MSG,"field":FIELD}}, the
 * shape of every error reply (proto.h); no "field" when it is NULL.
 */
static void
server_error_write(struct jsonw *w, const char *code, const char *field,
    const char *msg)
{
	jsonw_init(w);
	jsonw_object_begin(w);
	JSONW_KEY(w, "ok");
	jsonw_bool(w, 0);
	JSONW_KEY(w, "error");
	jsonw_object_begin(w);
	JSONW_KEY(w, "code");
	jsonw_string(w, code);
	JSONW_KEY(w, "message");
	jsonw_string(w, msg);
	if (field != NULL) {
		JSONW_KEY(w, "field");
		jsonw_string(w, field);
	}
	jsonw_object_end(w);
	jsonw_object_end(w);
}

/* Tell a client we will not serve it, and hang up. Never blocks. */
static void
server_reject(struct server *s, int fd, const char *fmt, ...)
{
	struct jsonw	 w;
	char		*msg;
	va_list		 ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	server_error_write(&w, GPUQ_ERR_BUSY, NULL, msg);
	jsonw_put(&w, "\n", 1);
	(void)send(fd, w.buf, w.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	server_warn_limited(s, msg);
	jsonw_done(&w);
	free(msg);
	(void)close(fd);
}

static void
server_client_on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct server_client	*c = h->data;

	/* One buffer for all: each read is framed before the next alloc. */
	buf->base = c->server->rbuf;
	buf->len = sizeof c->server->rbuf;
}

static void
server_client_on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
	struct server_client	*c = stream->data;

	if (n == 0 || (c->flags & CLIENT_CLOSING))
		return;
	if (n == UV_EOF) {
		c->flags |= CLIENT_EOF;
		/* A last request without its newline still counts. */
		if (frame_pending(&c->frame) > 0)
			frame_feed(&c->frame, "\n", 1);
		server_client_process(c);
		return;
	}
	if (n < 0) {
		log_debug("client %u: read: %s", c->id, uv_strerror((int)n));
		server_client_close(c);
		return;
	}
	c->active = uv_now(c->server->loop);
	frame_feed(&c->frame, buf->base, (size_t)n);
	server_client_process(c);
}

static void
server_client_new(struct server *s, int fd)
{
	struct server_client	*c, *o;
	struct ucred		 cred;
	socklen_t		 len = sizeof cred;
	int			 same = 0, rc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("socket: SO_PEERCRED");
		(void)close(fd);
		return;
	}
	if ((rlim_t)fd + SERVER_FD_RESERVE >= s->nofile) {
		server_reject(s, fd, "gpuqd is out of file descriptors (limit "
		    "%llu); try again later", (unsigned long long)s->nofile);
		server_pause(s);
		return;
	}
	if (s->nclients >= s->conf->max_connections) {
		server_reject(s, fd, "too many connections (%d, [daemon] "
		    "max_connections); try again later",
		    s->conf->max_connections);
		return;
	}
	TAILQ_FOREACH(o, &s->clients, entry)
		if (o->peer.uid == cred.uid)
			same++;
	if (same >= s->conf->max_connections_per_uid) {
		server_reject(s, fd, "too many connections from uid %u (%d, "
		    "[daemon] max_connections_per_uid); close some and retry",
		    (unsigned)cred.uid, s->conf->max_connections_per_uid);
		return;
	}

	c = xcalloc(1, sizeof *c);
	c->server = s;
	c->id = ++s->next_id;
	c->peer.uid = cred.uid;
	c->peer.gid = cred.gid;
	c->peer.pid = cred.pid;
	c->refs = 1;			/* the handle's */
	c->active = uv_now(s->loop);
	frame_init(&c->frame, GPUQ_MAX_LINE);
	(void)uv_pipe_init(s->loop, &c->pipe, 0);
	c->pipe.data = c;
	TAILQ_INSERT_TAIL(&s->clients, c, entry);
	s->nclients++;
	rc = uv_pipe_open(&c->pipe, fd);
	if (rc != 0) {
		log_warnx("socket: cannot use client fd: %s", uv_strerror(rc));
		(void)close(fd);
		server_client_close(c);
		return;
	}
	log_debug("client %u: connected, uid %u gid %u pid %d", c->id,
	    (unsigned)cred.uid, (unsigned)cred.gid, (int)cred.pid);
	server_client_process(c);	/* starts reading */
}

static void
server_accept(struct server_listener *l)
{
	struct server	*s = l->server;
	int		 fd, i;

	for (i = 0; i < SERVER_ACCEPT_BATCH && !s->paused; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			server_client_new(s, fd);
			continue;
		}
		switch (errno) {
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			return;
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
			continue;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			server_warn_limited(s, "out of file descriptors or "
			    "memory; accepting again when a client leaves");
			server_pause(s);
			return;
		default:
			log_warn("socket: accept");
			return;
		}
	}
}

static void
server_listener_on_poll(uv_poll_t *h, int status, int events)
{
	struct server_listener	*l = h->data;

	if (status < 0) {
		log_warnx("socket: poll: %s", uv_strerror(status));
		return;
	}
	server_accept(l);
}

int
server_listen(struct server *s, int fd, const char *unlink_path,
    char **cause)
{
	struct server_listener	*l;
	int			 flags, rc;

	flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		rc = -errno;
		*cause = xprintf("listening socket %d: %s", fd,
		    strerror(errno));
		return rc;
	}
	l = xcalloc(1, sizeof *l);
	l->fd = fd;
	l->server = s;
	l->unlink_path = unlink_path ? xstrdup(unlink_path) : NULL;
	rc = uv_poll_init(s->loop, &l->poll, fd);
	if (rc != 0) {
		*cause = xprintf("listening socket %d: %s", fd,
		    uv_strerror(rc));
		free(l->unlink_path);
		free(l);
		return rc;
	}
	l->poll.data = l;
	LIST_INSERT_HEAD(&s->listeners, l, entry);
	if (!s->paused && !s->stopping)
		(void)uv_poll_start(&l->poll, UV_READABLE,
		    server_listener_on_poll);
	return 0;
}

const struct server_peer *
server_client_peer(const struct server_client *c)
{
	return &c->peer;
}

int
server_client_owed(const struct server_client *c)
{
	return c->owed;
}

/*
 * A client that sent EOF may only have shut its writing half (a script
 * piping one request in) and still read the reply; one that closed its
 * socket shows POLLHUP, as Linux reports a Unix stream socket shut both
 * ways.
 */
int
server_client_gone(struct server_client *c)
{
	struct pollfd	pfd;
	uv_os_fd_t	fd;

	if (c->flags & CLIENT_CLOSING)
		return 1;
	if (!(c->flags & CLIENT_EOF))
		return 0;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
		return 1;
	pfd.fd = fd;
	pfd.events = 0;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) < 0)
		return 0;
	return (pfd.revents & (POLLHUP | POLLERR)) != 0;
}

/* The peer's groups as of connect: SO_PEERGROUPS, else the user db. */
static void
server_client_fetch_groups(struct server_client *c)
{
	struct passwd	*pw;
	socklen_t	 len = 64 * sizeof(gid_t);
	int		 fd, n, rc;

	c->flags |= CLIENT_GROUPS;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0) {
		c->groups = xmalloc(len);
		rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len);
		if (rc == -1 && errno == ERANGE) {
			c->groups = xrealloc(c->groups, len);
			rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS,
			    c->groups, &len);
		}
		if (rc == 0) {
			c->ngroups = (int)(len / sizeof(gid_t));
			return;
		}
		free(c->groups);
		c->groups = NULL;
	}
	/* Kernels before 4.13: ask the user database (may consult NSS). */
	pw = getpwuid(c->peer.uid);
	if (pw == NULL)
		return;
	n = 64;
	c->groups = xreallocarray(NULL, (size_t)n, sizeof(gid_t));
	if (getgrouplist(pw->pw_name, c->peer.gid, c->groups, &n) == -1) {
		c->groups = xreallocarray(c->groups, (size_t)n, sizeof(gid_t));
		if (getgrouplist(pw->pw_name, c->peer.gid, c->groups,
		    &n) == -1)
			n = 0;
	}
	c->ngroups = n;
}

int
server_client_in_group(struct server_client *c, gid_t gid)
{
	int	i;

	if (c->peer.gid == gid)
		return 1;
	if (!(c->flags & CLIENT_GROUPS))
		server_client_fetch_groups(c);
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return 1;
	return 0;
}

/* Room for N more bytes of output. */
static void
server_client_grow(struct server_client *c, size_t n)
{
	size_t	cap;

	if (c->outcap - c->outlen >= n)
		return;
	cap = c->outcap ? c->outcap : 4096;
	while (cap - c->outlen < n)
		cap *= 2;
	c->out = xrealloc(c->out, cap);
	c->outcap = cap;
}

void
server_client_reply(struct server_client *c, const char *json, size_t len)
{
	if (c->flags & CLIENT_CLOSING)
		return;
	server_client_grow(c, len + 1);
	memcpy(c->out + c->outlen, json, len);
	c->outlen += len;
	c->out[c->outlen++] = '\n';
}

void
server_client_reply_take(struct server_client *c, char *buf, size_t len,
    size_t cap)
{
	if (c->outlen > 0 || (c->flags & CLIENT_CLOSING) || cap <= len) {
		server_client_reply(c, buf, len);
		free(buf);
		return;
	}
	free(c->out);
	c->out = buf;
	c->outcap = cap;
	c->outlen = len;
	c->out[c->outlen++] = '\n';
}

void
server_client_reply_jsonw(struct server_client *c, struct jsonw *w)
{
	char	*buf;
	size_t	 len, cap;

	buf = jsonw_take(w, &len, &cap);
	server_client_reply_take(c, buf, len, cap);
}

void
server_client_error(struct server_client *c, const char *code,
    const char *field, const char *fmt, ...)
{
	struct jsonw	 w;
	char		*msg;
	va_list		 ap;

	if (c->flags & CLIENT_CLOSING)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	server_error_write(&w, code, field, msg);
	server_client_reply_jsonw(c, &w);
	jsonw_done(&w);
	free(msg);
}

static void
server_client_unref(struct server_client *c)
{
	if (--c->refs > 0)
		return;
	frame_done(&c->frame);
	free(c->out);
	free(c->held);
	free(c->groups);
	free(c);
}

void
server_client_defer(struct server_client *c)
{
	c->owed++;
	c->refs++;
}

void
server_client_settle(struct server_client *c)
{
	c->owed--;
	if (c->owed == 0 && !(c->flags & CLIENT_CLOSING))
		server_client_process(c);	/* held lines, then flush */
	server_client_unref(c);
}

static int
server_client_full(const struct server_client *c)
{
	return c->outlen + c->writing >=
	    (size_t)c->server->conf->max_pending_output;
}

static void
server_client_on_write(uv_write_t *req, int status)
{
	struct server_write	*w = req->data;
	struct server_client	*c = req->handle->data;

	c->writing -= w->len;
	free(w->base);
	free(w);
	if (status < 0) {
		if (status != UV_ECANCELED) {
			log_debug("client %u: write: %s", c->id,
			    uv_strerror(status));
			server_client_close(c);
		}
		return;
	}
	c->active = uv_now(c->server->loop);
	server_client_process(c);	/* go on if backpressure held us */
}

/* Hand the output buffer to the socket: try now, queue the rest. */
static void
server_client_flush(struct server_client *c)
{
	struct server_write	*w;
	uv_buf_t		 buf;
	int			 n;

	if (c->outlen == 0 || (c->flags & CLIENT_CLOSING))
		return;
	buf = uv_buf_init(c->out, (unsigned)c->outlen);
	if (c->writing == 0) {
		n = uv_try_write((uv_stream_t *)&c->pipe, &buf, 1);
		if (n >= 0 && (size_t)n == c->outlen) {
			c->outlen = 0;
			if (c->outcap > SERVER_OUT_KEEP) {
				free(c->out);
				c->out = NULL;
				c->outcap = 0;
			}
			return;
		}
		if (n < 0 && n != UV_EAGAIN) {
			log_debug("client %u: write: %s", c->id,
			    uv_strerror(n));
			server_client_close(c);
			return;
		}
		if (n > 0) {
			buf.base += n;
			buf.len -= (size_t)n;
		}
	}
	/*
	 * The write request needs what is left until it completes. A big
	 * buffer goes with it (a new one starts empty); one small enough
	 * to keep stays with the client and the request gets a copy, so
	 * the next batch of replies does not grow a buffer again.
	 */
	w = xmalloc(sizeof *w);
	w->req.data = w;
	w->len = buf.len;
	if (c->outcap > SERVER_OUT_KEEP) {
		w->base = c->out;
		c->out = NULL;
		c->outcap = 0;
	} else {
		w->base = xmalloc(buf.len);
		memcpy(w->base, buf.base, buf.len);
		buf.base = w->base;
	}
	c->outlen = 0;
	n = uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1,
	    server_client_on_write);
	if (n != 0) {
		log_debug("client %u: write: %s", c->id, uv_strerror(n));
		free(w->base);
		free(w);
		server_client_close(c);
		return;
	}
	c->writing += w->len;
}

/*
 * Read while there is room and a reader, and, while a line is held back
 * for the client's owed replies, until SERVER_READ_AHEAD bytes of its
 * next requests wait in the frame: reading on would only pile them up.
 * Close a finished EOF client.
 */
static void
server_client_update(struct server_client *c)
{
	struct server	*s = c->server;
	int		 want, rc;

	if (c->flags & CLIENT_CLOSING)
		return;
	want = !(c->flags & CLIENT_EOF) && !s->stopping &&
	    !server_client_full(c) && !((c->held != NULL ||
	    (c->flags & CLIENT_HELD_TOO_LONG)) &&
	    frame_pending(&c->frame) >= SERVER_READ_AHEAD);
	if (want && !(c->flags & CLIENT_READING)) {
		rc = uv_read_start((uv_stream_t *)&c->pipe,
		    server_client_on_alloc, server_client_on_read);
		if (rc != 0) {
			log_debug("client %u: read: %s", c->id,
			    uv_strerror(rc));
			server_client_close(c);
			return;
		}
		c->flags |= CLIENT_READING;
	} else if (!want && (c->flags & CLIENT_READING)) {
		(void)uv_read_stop((uv_stream_t *)&c->pipe);
		c->flags &= ~CLIENT_READING;
	}
	if ((c->flags & CLIENT_EOF) && c->owed == 0 && c->held == NULL &&
	    !(c->flags & CLIENT_HELD_TOO_LONG) &&
	    frame_pending(&c->frame) == 0 && c->outlen == 0 &&
	    c->writing == 0) {
		log_debug("client %u: done", c->id);
		server_client_close(c);
	}
}

/* One complete line: check it is text, then offer it. */
static int
server_client_line(struct server_client *c, const char *line, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			break;
	if (i == len)
		return 0;		/* blank lines are not requests */
	if (!utf8_valid(line, len)) {
		if (c->owed > 0)
			return -EAGAIN;
		server_client_error(c, GPUQ_ERR_BAD_UTF8, NULL,
		    "request is not valid UTF-8");
		return 0;
	}
	return c->server->cb(c->server->arg, c, line, len);
}

/*
 * Offer the client's complete lines in order until it runs out, must
 * wait for owed replies, or has too much output queued; then flush and
 * decide whether to read on.
 */
static void
server_client_process(struct server_client *c)
{
	struct server	*s = c->server;
	char		*line;
	size_t		 len;
	int		 rc, full;

	do {
		full = 0;
		while (!(c->flags & CLIENT_CLOSING) && !s->stopping) {
			if (server_client_full(c)) {
				full = 1;
				break;
			}
			if (c->flags & CLIENT_HELD_TOO_LONG) {
				if (c->owed > 0)
					break;
				c->flags &= ~CLIENT_HELD_TOO_LONG;
				server_client_error(c, GPUQ_ERR_TOO_LONG, NULL,
				    "request line is longer than %d bytes; it "
				    "was skipped", GPUQ_MAX_LINE);
				continue;
			}
			if (c->held != NULL) {
				if (c->owed > 0)
					break;
				rc = server_client_line(c, c->held,
				    c->heldlen);
				if (rc == -EAGAIN) {
					/* Nothing owed, yet told to wait. */
					log_warnx("client %u: request held "
					    "with no reply owed", c->id);
					server_client_error(c,
					    GPUQ_ERR_INTERNAL, NULL,
					    "request could not be ordered");
				}
				free(c->held);
				c->held = NULL;
				continue;
			}
			rc = frame_next(&c->frame, &line, &len);
			if (rc == 0)
				break;
			if (rc == -EMSGSIZE) {
				if (c->owed > 0) {
					c->flags |= CLIENT_HELD_TOO_LONG;
					break;
				}
				server_client_error(c, GPUQ_ERR_TOO_LONG, NULL,
				    "request line is longer than %d bytes; it "
				    "was skipped", GPUQ_MAX_LINE);
				continue;
			}
			if (server_client_line(c, line, len) == -EAGAIN) {
				/* Bytes, not a C string: NULs may be in it. */
				c->held = xmalloc(len + 1);
				memcpy(c->held, line, len);
				c->held[len] = '\0';
				c->heldlen = len;
				break;
			}
		}
		/* A big line grew the frame; do not keep that per client. */
		if (frame_pending(&c->frame) == 0 && !c->frame.discarding &&
		    c->frame.cap > SERVER_OUT_KEEP) {
			frame_done(&c->frame);
			frame_init(&c->frame, GPUQ_MAX_LINE);
		}
		server_client_flush(c);
		/* The socket may have taken it all at once: then go on. */
	} while (full && !server_client_full(c) &&
	    !(c->flags & CLIENT_CLOSING));
	server_client_update(c);
}

static void
server_client_on_close(uv_handle_t *h)
{
	struct server_client	*c = h->data;
	struct server		*s = c->server;

	server_client_unref(c);
	server_closed(s);
}

static void
server_client_close(struct server_client *c)
{
	struct server	*s = c->server;

	if (c->flags & CLIENT_CLOSING)
		return;
	c->flags |= CLIENT_CLOSING;
	c->flags &= ~CLIENT_READING;
	TAILQ_REMOVE(&s->clients, c, entry);
	s->nclients--;
	s->pending_closes++;
	uv_close((uv_handle_t *)&c->pipe, server_client_on_close);
	if (s->paused)
		server_resume(s);	/* an fd came free */
	if (s->closing && TAILQ_EMPTY(&s->clients) && !s->grace_closed) {
		s->grace_closed = 1;
		s->pending_closes++;
		uv_close((uv_handle_t *)&s->grace, server_on_handle_close);
	}
}

void
server_stop(struct server *s)
{
	struct server_client	*c, *next;

	s->stopping = 1;
	server_listeners_poll(s, 0);
	for (c = TAILQ_FIRST(&s->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		server_client_update(c);	/* stops reading */
	}
}

/*
 * Every close callback ends here, after its own cleanup; the last one
 * reports server_close done.
 */
static void
server_closed(struct server *s)
{
	if (--s->pending_closes > 0 || !s->grace_closed || s->done == NULL)
		return;
	s->done(s->done_arg);	/* last: it may free the server */
}

/* Close callback of the server's own timers. */
static void
server_on_handle_close(uv_handle_t *h)
{
	server_closed(h->data);
}

static void
server_listener_on_close(uv_handle_t *h)
{
	struct server_listener	*l = h->data;
	struct server		*s = l->server;

	(void)close(l->fd);
	if (l->unlink_path != NULL && unlink(l->unlink_path) == -1 &&
	    errno != ENOENT)
		log_warn("socket: cannot remove %s", l->unlink_path);
	free(l->unlink_path);
	free(l);
	server_closed(s);
}

static void
server_client_on_shutdown(uv_shutdown_t *req, int status)
{
	server_client_close(req->handle->data);
}

static void
server_on_grace(uv_timer_t *t)
{
	struct server		*s = t->data;
	struct server_client	*c;

	log_warnx("socket: %d client(s) did not read their replies in %ds; "
	    "closing anyway", s->nclients, SERVER_GRACE_MS / 1000);
	while ((c = TAILQ_FIRST(&s->clients)) != NULL)
		server_client_close(c);
}

void
server_close(struct server *s, void (*done)(void *), void *arg)
{
	struct server_listener	*l;
	struct server_client	*c, *next;

	if (!s->stopping)
		server_stop(s);
	s->closing = 1;
	s->done = done;
	s->done_arg = arg;
	s->pending_closes += 2;
	uv_close((uv_handle_t *)&s->sweep, server_on_handle_close);
	uv_close((uv_handle_t *)&s->resume, server_on_handle_close);
	while ((l = LIST_FIRST(&s->listeners)) != NULL) {
		LIST_REMOVE(l, entry);
		s->pending_closes++;
		uv_close((uv_handle_t *)&l->poll, server_listener_on_close);
	}
	for (c = TAILQ_FIRST(&s->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		server_client_flush(c);
		if (c->flags & CLIENT_CLOSING)
			continue;
		if (c->writing == 0) {
			server_client_close(c);
			continue;
		}
		/* Let queued replies drain, then close (or at the deadline). */
		if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->pipe,
		    server_client_on_shutdown) == 0)
			c->flags |= CLIENT_SHUTDOWN;
		else
			server_client_close(c);
	}
	if (TAILQ_EMPTY(&s->clients)) {
		if (!s->grace_closed) {
			s->grace_closed = 1;
			s->pending_closes++;
			uv_close((uv_handle_t *)&s->grace,
			    server_on_handle_close);
		}
	} else
		(void)uv_timer_start(&s->grace, server_on_grace,
		    SERVER_GRACE_MS, 0);
}

void
server_free(struct server *s)
{
	free(s);
}
