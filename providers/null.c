/*
 * null.c: the provider that runs nothing, for tests of the daemon (as
 * OpenSMTPD's scheduler_null.c): every launch succeeds, every poll sees
 * no resource, every cancel is accepted. Callbacks still come later,
 * from the loop, as provider.h promises, so callers are exercised the
 * way the real providers exercise them.
 *
 * Knows the loop (through providers/gcp) and nothing of any cloud API.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <uv.h>

#include "common/gpu.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"

/* One pending callback. */
struct null_call {
	uv_timer_t	 timer;		/* timer.data == this */
	prov_launch_cb	 launch_cb;	/* exactly one of these two */
	prov_done_cb	 done_cb;
	void		*arg;
};

static void
null_on_close(uv_handle_t *h)
{
	free(h->data);
}

static void
null_on_timer(uv_timer_t *t)
{
	struct null_call	*c = t->data;
	struct prov_result	 r = { .fail = PROV_FAIL_NONE };

	uv_close((uv_handle_t *)&c->timer, null_on_close);
	if (c->launch_cb != NULL)
		c->launch_cb(&r, c->arg);
	else
		c->done_cb(&r, c->arg);
}

/* Call LAUNCH_CB or else DONE_CB back with success from G's loop: 0, or
 * -errno and no callback. */
static int
null_later(struct gcp *g, prov_launch_cb launch_cb, prov_done_cb done_cb,
    void *arg)
{
	struct null_call	*c;
	int			 rc;

	if (g == NULL)
		return -EINVAL;
	c = xcalloc(1, sizeof *c);
	c->launch_cb = launch_cb;
	c->done_cb = done_cb;
	c->arg = arg;
	c->timer.data = c;
	if ((rc = uv_timer_init(http_loop(gcp_http(g)), &c->timer)) != 0) {
		free(c);
		return rc;
	}
	if ((rc = uv_timer_start(&c->timer, null_on_timer, 0, 0)) != 0) {
		uv_close((uv_handle_t *)&c->timer, null_on_close);
		return rc;
	}
	return 0;
}

/* The quota a Compute Engine launch would draw on, so the daemon's quota
 * checks run as they do for the real providers. */
static char *
null_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	return prov_quota_metric(g, GCP_SERVICE_GCE, region, gpu, spot,
	    ret_service);
}

static int
null_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	return null_later(g, cb, NULL, arg);
}

/* Nothing to see: CB is never called, only DONE. */
static int
null_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	return null_later(g, NULL, done, arg);
}

static int
null_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	return null_later(g, NULL, done, arg);
}

const struct provider prov_null = {
	.name = "null",
	.quota_metric = null_quota_metric,
	.picks_zone = 1,
	.poll_global = 1,
	.quota_service = GCP_SERVICE_GCE,
	.price_service = GCP_SERVICE_GCE,
	.quota_usage_ours = 0,
	.launch = null_launch,
	.poll = null_poll,
	.cancel = null_cancel,
};
