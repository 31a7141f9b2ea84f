/*
 * api.h: the requests gpuqd answers (doc/DESIGN.md "The wire", proto.h).
 *
 * One const table of ops (name, handler, flags, fields) in api.c turns a
 * request line into a reply. Submits are not answered at once: they join
 * the group-commit batch that one uv_check_t writes with ONE store call
 * per turn of the loop, and each reply leaves only after COMMIT.
 *
 * The cloud ops (plan, quotas, prices) are answered in api-cloud.c,
 * through the cloud side gpuqd.c hands over with api_set_cloud().
 *
 * Knows the store and the server's client handle; knows nothing of
 * sockets.
 */
#ifndef GPUQ_API_H
#define GPUQ_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

struct api;
struct cloud;
struct conf;
struct sched;
struct server_client;
struct store;

/* What the rest of the daemon wants to hear about. Any may be NULL. */
struct api_hooks {
	/* The queue changed (jobs added or moved): STATUS=, the scheduler. */
	void	(*changed)(void *arg);
	/* Job ID went to cancelling: stop and delete its cloud resource. */
	void	(*cancel)(void *arg, int64_t id);
	/* The metrics op's text (Prometheus exposition). New string. */
	char	*(*metrics)(void *arg);
	void	*arg;
};

/*
 * New api on LOOP over STORE and CONF (both borrowed; they outlive the
 * api). Its check and idle handles start now; api_close ends them.
 */
struct api	*api_new(uv_loop_t *loop, struct store *store,
		    const struct conf *conf);
/* Set the hooks (copied). */
void		 api_set_hooks(struct api *, const struct api_hooks *);
/*
 * The cloud side the plan, quotas and prices ops ask (api-cloud.c), both
 * borrowed. Set NULL, NULL before stopping it: ops still waiting for
 * quota readings are then answered "gpuqd is stopping" when the cloud
 * side cancels their refresh.
 */
void		 api_set_cloud(struct api *, struct cloud *, struct sched *);
/* The log follower the logs op reads through (borrowed), or NULL
 * (logs then answer "unavailable"); api-logs.c. */
struct logs;
void		 api_set_logs(struct api *, struct logs *);
/*
 * The server's request callback (server_request_cb, ARG is the api):
 * answer LINE from C, or defer the answer to the group commit. Returns
 * 0, or -EAGAIN when C owes deferred replies and this request must wait.
 */
int		 api_request(void *api, struct server_client *c,
		    const char *line, size_t len);
/*
 * Commit the waiting batch of submits now and queue their replies
 * (shutdown: nothing acknowledged is left behind). The check handle
 * calls the same once per loop turn.
 */
void		 api_commit(struct api *);
/*
 * Client C is going away: drop its waits (the wait op) unanswered,
 * settling their promises (api-wait.c). Waits of a client that closed
 * its socket are dropped by themselves within a second.
 */
void		 api_wait_forget(struct api *, struct server_client *c);
/* [daemon] admin_group may have changed (SIGHUP). */
void		 api_conf_changed(struct api *);
/*
 * Commit what waits, close the handles and free the api once they are
 * closed; the api must not be used after this call.
 */
void		 api_close(struct api *);

#endif
