/*
 * api-cloud.c: the ops that ask the cloud side -- plan, quotas, prices.
 *
 * api.c's table lists them (flag API_CLOUD: without [gcp] project they
 * answer "unavailable" before reaching here). plan and quotas first
 * wait for quota readings no older than [scheduler] quota_ttl, so their
 * client is promised a reply (server_client_defer) and sends nothing
 * else until it is out; prices answers at once from the price table.
 * gpuqd.c hands the cloud side over with api_set_cloud() once it runs,
 * and takes it back before it stops it.
 *
 * Knows the api's requests and the cloud's facade (cloud.c, quota,
 * price, the scheduler's plan); nothing of sockets or the store.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/doctor.h"
#include "daemon/sched.h"
#include "daemon/server.h"
#include "daemon/spec.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/price.h"
#include "providers/gcp/quota.h"
#include "providers/gcp/reservation.h"

#define API_CLOUD_STOPPING	"gpuqd is stopping"
#define API_CLOUD_NONE		"the cloud providers are not running"

/*
 * A cloud op whose answer is owed: its client waits for it and sends
 * nothing else -- not even a submit that could join the batch -- until
 * it is out, so replies keep their order. The answer may come after
 * api_close() has said "stopping" for it (orphaned): then it is
 * dropped.
 */
struct api_cloud {
	struct api		*api;
	struct server_client	*client;	/* NULL once orphaned */
	const char		*what;		/* op name, static */
	json_t			*spec;		/* plan: normalized, or NULL */
	json_t			*warnings;	/* plan: the spec's, or NULL */
	char			*region;	/* quotas: filters, or NULL */
	char			*gpu;
	LIST_ENTRY(api_cloud)	 entry;
};

void
api_set_cloud(struct api *a, struct cloud *cloud, struct sched *sched)
{
	a->cloud = cloud;
	a->sched = sched;
}

int
api_cloud_owes(struct api *a, struct server_client *c)
{
	struct api_cloud	*w;

	LIST_FOREACH(w, &a->clouds, entry)
		if (w->client == c)
			return 1;
	return 0;
}

static void
api_cloud_free(struct api_cloud *w)
{
	json_decref(w->spec);
	json_decref(w->warnings);
	free(w->region);
	free(w->gpu);
	free(w);
}

void
api_cloud_orphan(struct api *a)
{
	struct api_cloud	*w;

	while ((w = LIST_FIRST(&a->clouds)) != NULL) {
		LIST_REMOVE(w, entry);
		server_client_error(w->client, GPUQ_ERR_BUSY, NULL,
		    "%s: %s", w->what, API_CLOUD_STOPPING);
		server_client_settle(w->client);
		w->client = NULL;
		w->api = NULL;
	}
}

/*
 * Send W's answer: REPLY (borrowed; "ok" is added in front), or when it
 * is NULL an "unavailable" error saying CAUSE. Frees W.
 */
static void
api_cloud_answer(struct api_cloud *w, json_t *reply, const char *cause)
{
	struct jsonw	 out;
	const char	*key;
	json_t		*v;

	if (w->client == NULL) {	/* orphaned by api_close */
		api_cloud_free(w);
		return;
	}
	LIST_REMOVE(w, entry);
	if (reply == NULL)
		server_client_error(w->client, GPUQ_ERR_UNAVAILABLE, NULL,
		    "%s: %s", w->what, cause != NULL ? cause : API_CLOUD_NONE);
	else {
		jsonw_init(&out);
		out.prec = GPUQ_REPLY_PRECISION;
		jsonw_object_begin(&out);
		JSONW_KEY(&out, "ok");
		jsonw_bool(&out, 1);
		json_object_foreach(reply, key, v) {
			jsonw_key(&out, key);
			jsonw_json(&out, v);
		}
		if (json_array_size(w->warnings) > 0) {
			JSONW_KEY(&out, "warnings");
			jsonw_json(&out, w->warnings);
		}
		jsonw_object_end(&out);
		server_client_reply_jsonw(w->client, &out);
		jsonw_done(&out);
	}
	server_client_settle(w->client);
	api_cloud_free(w);
}

/* Promise R's client the answer of a cloud op; the op's context. */
static struct api_cloud *
api_cloud_start(struct api_req *r)
{
	struct api_cloud	*w;

	w = xcalloc(1, sizeof *w);
	w->api = r->api;
	w->client = r->client;
	w->what = r->op->name;
	LIST_INSERT_HEAD(&r->api->clouds, w, entry);
	server_client_defer(r->client);
	return w;
}

/* The reservations' headroom beside the quotas (doc/DESIGN.md
 * "Reservations"), unless [gcp] reservations = none. */
static void
api_cloud_reservations(struct api *a, struct api_cloud *w, json_t *reply)
{
	struct resv	*rv = gcp_resv(cloud_gcp(a->cloud));
	json_t		*v;
	const char	*warn;

	if (reply == NULL || rv == NULL || !resv_enabled(rv))
		return;
	if ((v = resv_to_json(rv, w->region, w->gpu)) != NULL)
		(void)json_object_set_new(reply, "reservations", v);
	if ((warn = resv_warning(rv)) != NULL)
		(void)json_object_set_new(reply, "reservations_unreachable",
		    json_string(warn));
}

/*
 * Answer W from what is known now (plan: the scheduler's ranking;
 * quotas: the readings). ERROR < 0: the refresh failed, and the answer
 * says it uses older readings.
 */
static void
api_cloud_now(struct api_cloud *w, int error, const char *cause)
{
	struct api	*a = w->api;
	json_t		*reply;

	if (a == NULL || a->cloud == NULL || error == -ECANCELED) {
		api_cloud_answer(w, NULL, API_CLOUD_STOPPING);
		return;
	}
	if (w->spec != NULL)
		reply = sched_plan(a->sched, w->spec);
	else {
		reply = quota_to_json(gcp_quota(cloud_gcp(a->cloud)),
		    w->region, w->gpu);
		api_cloud_reservations(a, w, reply);
	}
	if (error < 0)
		(void)json_object_set_new(reply, "warning",
		    json_sprintf("quotas could not be read again: %s; these "
		    "are older readings", cause != NULL ? cause :
		    strerror(-error)));
	api_cloud_answer(w, reply, NULL);
	json_decref(reply);
}

/* quota_refresh's callback: the readings are fresh, or cannot be. */
static void
api_cloud_on_fresh(int error, const char *cause, void *arg)
{
	api_cloud_now(arg, error, cause);
}

/* Answer W once the quota readings are no older than quota_ttl. */
static void
api_cloud_after_refresh(struct api_cloud *w)
{
	int	rc;

	if (w->api->cloud == NULL || w->api->sched == NULL) {
		api_cloud_answer(w, NULL, API_CLOUD_NONE);
		return;
	}
	rc = quota_refresh(gcp_quota(cloud_gcp(w->api->cloud)), 0,
	    api_cloud_on_fresh, w);
	if (rc != 0)
		api_cloud_now(w, rc == 1 ? 0 : rc, NULL);
}

/* An optional string field NAME, null counting as absent. */
static int
api_cloud_filter(struct api_req *r, const char *name, const char **ret)
{
	*ret = NULL;
	if (json_is_null(json_object_get(r->req, name)))
		return 0;
	return api_field_string(r, name, ret) < 0 ? -1 : 0;
}

/* plan: validate the job like submit does, then rank its offers. */
int
api_op_plan(struct api_req *r, struct store_job *unused)
{
	struct spec_error	 err = { NULL, NULL };
	struct api_cloud	*w;
	json_t			*job, *norm, *warn = NULL;
	int			 rc;

	job = json_object_get(r->req, "job");
	if (!json_is_object(job)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "job",
		    "\"job\" must be an object: the job spec");
		return 0;
	}
	rc = spec_validate(job, &norm, &err);
	if (rc == 0 && (rc = api_site_check(r->api, norm, &warn, &err)) != 0)
		json_decref(norm);
	if (rc != 0) {
		server_client_error(r->client, GPUQ_ERR_INVALID_JOB,
		    err.field != NULL && *err.field != '\0' ? err.field : NULL,
		    "%s", err.message != NULL ? err.message : "invalid job");
		spec_error_done(&err);
		return 0;
	}
	w = api_cloud_start(r);
	w->spec = norm;
	w->warnings = warn;
	api_cloud_after_refresh(w);
	return 0;
}

/* quotas: readings and GPU zones, optionally for one region and GPU. */
int
api_op_quotas(struct api_req *r, struct store_job *unused)
{
	struct api_cloud	*w;
	const char		*region, *gpu;

	if (api_cloud_filter(r, "region", &region) != 0 ||
	    api_cloud_filter(r, "gpu", &gpu) != 0)
		return 0;
	w = api_cloud_start(r);
	w->region = region != NULL ? xstrdup(region) : NULL;
	w->gpu = gpu != NULL ? xstrdup(gpu) : NULL;
	api_cloud_after_refresh(w);
	return 0;
}

/* prices: the price table in use, at once. */
int
api_op_prices(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct api_cloud	*w;
	const char		*region, *gpu;
	json_t			*reply;

	if (api_cloud_filter(r, "region", &region) != 0 ||
	    api_cloud_filter(r, "gpu", &gpu) != 0)
		return 0;
	w = api_cloud_start(r);
	if (a->cloud == NULL) {
		api_cloud_answer(w, NULL, API_CLOUD_NONE);
		return 0;
	}
	reply = price_to_json(gcp_price(cloud_gcp(a->cloud)), region, gpu);
	api_cloud_answer(w, reply, NULL);
	json_decref(reply);
	return 0;
}

/* doctor.c's report: the answer owed to W's client. */
static void
api_cloud_on_doctor(json_t *report, void *arg)
{
	api_cloud_answer(arg, report, NULL);
}

/*
 * doctor: every check a first launch needs, one line each. It answers
 * without a project too (one failing line), so it is no API_CLOUD op.
 */
int
api_op_doctor(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct api_cloud	*w;
	json_t			*reply;

	w = api_cloud_start(r);
	if (a->cloud == NULL) {
		reply = doctor_no_project();
		api_cloud_answer(w, reply, NULL);
		json_decref(reply);
		return 0;
	}
	doctor_run(a->cloud, a->conf->checkpoint_root, api_cloud_on_doctor,
	    w);
	return 0;
}
