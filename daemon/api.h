/*
 * api.h: the requests gpuqd answers (DESIGN.md "The wire", proto.h).
 *
 * One const table of ops (name, handler, flags, fields) in api.c turns a
 * request line into a reply. Submits are not answered at once: they join
 * the group-commit batch that one uv_check_t writes with ONE store call
 * per turn of the loop, and each reply leaves only after COMMIT.
 *
 * Knows the store and the server's client handle; knows nothing of
 * sockets or the cloud (cloud work is asked for through the hooks).
 */
#ifndef GPUQ_API_H
#define GPUQ_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

struct api;
struct conf;
struct server_client;
struct store;

/* A cloud op's answer (struct api_hooks): see there. */
typedef void (*api_cloud_cb)(json_t *reply, char *cause, void *ctx);

/* What the rest of the daemon wants to hear about. Any may be NULL. */
struct api_hooks {
	/* The queue changed (jobs added or moved): STATUS=, the scheduler. */
	void	(*changed)(void *arg);
	/* Job ID went to cancelling: stop and delete its cloud resource. */
	void	(*cancel)(void *arg, int64_t id);
	/*
	 * The cloud ops answer through DONE(reply, cause, CTX), exactly
	 * once, at once or later (plan and quotas may first wait for stale
	 * quota readings). REPLY is new and has no "ok"; NULL means the op
	 * cannot answer, CAUSE (new string, or NULL) says why. plan gets
	 * the normalized spec (borrowed: take a reference to keep it);
	 * quotas and prices get optional filters (NULL: all), borrowed for
	 * the call only.
	 */
	void	(*plan)(void *arg, json_t *spec, api_cloud_cb done, void *ctx);
	void	(*quotas)(void *arg, const char *region, const char *gpu,
		    api_cloud_cb done, void *ctx);
	void	(*prices)(void *arg, const char *region, const char *gpu,
		    api_cloud_cb done, void *ctx);
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
/* [daemon] admin_group may have changed (SIGHUP). */
void		 api_conf_changed(struct api *);
/*
 * Commit what waits, close the handles and free the api once they are
 * closed; the api must not be used after this call.
 */
void		 api_close(struct api *);

#endif
