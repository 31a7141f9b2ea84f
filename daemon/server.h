/*
 * server.h: the control socket of gpuqd (doc/DESIGN.md "The wire").
 *
 * The server accepts clients on Unix stream sockets, reads their peer
 * credentials, frames their bytes into lines and hands each line to one
 * request callback (api.c), and writes replies back strictly in request
 * order. It enforces the limits of [daemon] in gpuqd.conf: connections
 * in total and per uid, idle time, and the bytes queued to a slow reader
 * (backpressure). It knows nothing of ops, jobs or the store.
 *
 * A request may be answered at once (server_client_reply*) or later:
 * server_client_defer() promises a reply and keeps the client alive; the
 * reply is then written followed by server_client_settle(). While any
 * reply is owed, a request callback that cannot join the deferred batch
 * returns -EAGAIN: the server keeps that line and offers it again once
 * every owed reply has gone out, so replies never overtake each other.
 */
#ifndef GPUQ_SERVER_H
#define GPUQ_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include <uv.h>

struct conf;
struct jsonw;
struct server;
struct server_client;

/* Who is on the other end, from SO_PEERCRED at accept. */
struct server_peer {
	uid_t	uid;
	gid_t	gid;
	pid_t	pid;
};

/*
 * Called with each complete request LINE (NUL-terminated, LEN bytes,
 * valid UTF-8, borrowed until the call returns). Returns 0 once the
 * request is answered or deferred, or -EAGAIN to be called again with
 * the same line after the client's owed replies are out.
 */
typedef int (*server_request_cb)(void *arg, struct server_client *c,
	    const char *line, size_t len);

/*
 * Create the listening socket at PATH: refuse if a live server answers
 * there, remove a stale one, bind under umask 0117 (mode 0660), give it
 * to GROUP if that group exists, listen. *ret_fd gets the new fd.
 * Returns 0 or -errno with *cause.
 */
int	 server_socket_open(const char *path, const char *group, int *ret_fd,
	    char **cause);
/*
 * New server on LOOP reading limits from CONF (borrowed; outlives the
 * server and may change on reload). Requests go to CB(ARG, ...).
 */
struct server *server_new(uv_loop_t *loop, const struct conf *conf,
	    server_request_cb cb, void *arg);
/*
 * Accept clients on listening socket FD (takes it). UNLINK_PATH, if
 * not NULL, is removed when the server closes (we made the socket).
 * Returns 0 or -errno with *cause.
 */
int	 server_listen(struct server *, int fd, const char *unlink_path,
	    char **cause);
/* Limits in the conf changed (SIGHUP): re-arm what depends on them. */
void	 server_conf_changed(struct server *);
/* Clients connected now. */
int	 server_client_count(const struct server *);
/*
 * Shut down: stop accepting and reading, and stop offering lines. Owed
 * replies may still be written until server_close() is called.
 */
void	 server_stop(struct server *);
/*
 * Write out what is queued to each client, then close every client and
 * listener, giving slow readers at most a few seconds. DONE(ARG) is
 * called once, when every handle is closed; then call server_free.
 */
void	 server_close(struct server *, void (*done)(void *), void *arg);
/* Free a server closed by server_close (or never started). NULL is ok. */
void	 server_free(struct server *);

/* Peer credentials of C. Borrowed, lives as long as C. */
const struct server_peer *server_client_peer(const struct server_client *);
/* 1 if the peer is in group GID (primary or supplementary). */
int	 server_client_in_group(struct server_client *, gid_t gid);
/* Replies owed to C by server_client_defer and not yet settled. */
int	 server_client_owed(const struct server_client *);
/*
 * 1 if nobody will read C's replies any more: its socket is closing, or
 * its peer closed it (not merely shut its writing half).
 */
int	 server_client_gone(struct server_client *);
/* Queue one reply (JSON text without newline, LEN bytes) to C. */
void	 server_client_reply(struct server_client *, const char *json,
	    size_t len);
/*
 * Queue one reply: LEN bytes of JSON text without newline in BUF, which
 * was allocated with CAP > LEN bytes. Takes BUF: when nothing else is
 * queued to C it becomes C's output buffer, uncopied.
 */
void	 server_client_reply_take(struct server_client *, char *buf,
	    size_t len, size_t cap);
/* Queue the text in W as one reply; takes it (W is left empty). */
void	 server_client_reply_jsonw(struct server_client *, struct jsonw *w);
/* Queue {"ok":false,"error":{"code":CODE,"message":…,"field":FIELD}}. */
void	 server_client_error(struct server_client *, const char *code,
	    const char *field, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* Promise C one reply later; C stays allocated until it is settled. */
void	 server_client_defer(struct server_client *);
/*
 * The reply promised by server_client_defer has been queued (or C is
 * gone and nobody will read it): drop the promise, and when none are
 * left let C go on with its held request lines.
 */
void	 server_client_settle(struct server_client *);

#endif
