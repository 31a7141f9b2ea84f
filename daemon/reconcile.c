/*
 * reconcile.c: the reconciler (reconcile.h). It observes: what the cloud
 * lists, handed to the owner of the attempts (attempt.h), which decides
 * what it means.
 *
 * The live attempts are grouped by what one list call covers:
 * (provider, region), or the provider alone when one call lists every
 * region (Compute Engine's aggregatedList). Each poll cycle, every group
 * with live attempts (and, for a few cycles after its last one ended,
 * to catch orphans and late news) gets ONE provider poll; the calls per
 * cycle grow with the groups and the API's pages, never with the jobs.
 *
 * Each listed resource goes to attempt_seen() (a live attempt's, by
 * name) or attempt_orphan() (ours by its label, no live attempt); each
 * complete listing to attempt_unseen(), for the live attempts it did not
 * show. The first cycle after start ending calls the "ready" callback:
 * the scheduler may launch once what runs has been adopted.
 *
 * Knows the cloud (cloud.h), the attempts (attempt.h) and quotas (Vertex
 * usage from our own books); not the scheduler.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/reconcile.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"

#define REC_LINGER		4	/* cycles a group is polled after
					   its last attempt ended */
#define REC_NAME		64
#define REC_MAX_USAGE		256	/* Vertex (region, metric) pairs */

/* What one poll call covers. */
struct rec_group {
	struct reconcile	*r;
	const struct provider	*prov;
	char			 region[REC_NAME];	/* "": every region */
	int			 nlive;
	int			 linger;	/* cycles left once empty */
	int			 polling;
	int			 failing;	/* last poll failed (logged) */
	unsigned		 poll_gen;
	unsigned long		 seen;
	LIST_ENTRY(rec_group)	 link;
};

/* A usage figure of ours, for a quota service that reports none (Vertex). */
struct rec_usage {
	int			 svc;		/* enum gcp_service: the quota
						   service */
	char			 region[REC_NAME];
	char			 metric[QUOTA_METRIC_MAX];
	double			 n;
};

struct reconcile {
	struct cloud		*cloud;		/* borrowed */
	struct attempts		*att;		/* borrowed */
	void			(*ready)(void *);
	void			*ready_arg;
	uv_timer_t		 timer;		/* timer.data == this */
	int			 refs;		/* timer + calls in flight */
	int			 closing;
	int			 started;
	int			 first_done;	/* first cycle ended */
	int			 first_left;	/* its polls still out */

	LIST_HEAD(, rec_group)	 groups;
	uint64_t		 cycle;
	struct rec_usage	 usage[REC_MAX_USAGE];
	int			 nusage;
	struct reconcile_stats	 stats;
};

static void	rec_unref(struct reconcile *);

/* The group polling P's resources in REGION, made if new. */
static struct rec_group *
rec_group_get(struct reconcile *r, const struct provider *p,
    const char *region)
{
	struct rec_group	*g;
	const char		*key = p->poll_global ? "" : region;

	LIST_FOREACH(g, &r->groups, link)
		if (g->prov == p && strcmp(g->region, key) == 0)
			return g;
	g = xcalloc(1, sizeof *g);
	g->r = r;
	g->prov = p;
	(void)snprintf(g->region, sizeof g->region, "%s", key);
	LIST_INSERT_HEAD(&r->groups, g, link);
	return g;
}

/* The first cycle has ended: the scheduler may launch. */
static void
rec_first_done(struct reconcile *r)
{
	r->first_done = 1;
	if (r->ready != NULL)
		r->ready(r->ready_arg);
}

/* ---------------------------------------------------------------- */
/* Polls.							    */

static void
rec_on_seen(const struct prov_observed *o, void *arg)
{
	struct rec_group	*g = arg;
	struct reconcile	*r = g->r;

	if (o == NULL || r->closing)
		return;
	g->seen++;
	r->stats.seen++;
	if (attempt_seen(r->att, g->poll_gen, o) == -ENOENT)
		attempt_orphan(r->att, g->prov, g->region, o);
}

/* One group's poll is back. */
static void
rec_on_polled(const struct prov_result *res, void *arg)
{
	struct rec_group	*g = arg;
	struct reconcile	*r = g->r;

	g->polling = 0;
	if (!r->closing) {
		if (res->fail == PROV_FAIL_NONE) {
			if (g->failing)
				log_info("reconciler: %s%s%s listed again",
				    g->prov->name, g->region[0] ? " in " : "",
				    g->region);
			g->failing = 0;
			attempt_unseen(r->att, g->poll_gen, g->prov,
			    g->region);
		} else if (!g->failing) {
			g->failing = 1;
			log_warnx("reconciler: listing %s%s%s failed: %s; "
			    "trying again at the next poll", g->prov->name,
			    g->region[0] ? " in " : "", g->region,
			    res->message != NULL ? res->message : "no detail");
		}
		if (!r->first_done && --r->first_left == 0)
			rec_first_done(r);
	}
	rec_unref(r);
}

/* Count a live attempt in its group, and its Vertex usage. */
static void
rec_on_live(const struct store_attempt *a, const struct provider *p,
    void *arg)
{
	struct reconcile	*r = arg;
	struct quota		*q = gcp_quota(cloud_gcp(r->cloud));
	struct rec_group	*g;
	struct rec_usage	*u;
	char			 metric[QUOTA_METRIC_MAX];
	int			 i;

	if (p == NULL)
		return;
	g = rec_group_get(r, p, a->region);
	g->nlive++;
	g->linger = REC_LINGER;
	/* Every provider: quota.c keeps what the cloud reports usage of
	 * (Compute's regions.get) and takes ours for the rest (Vertex AI,
	 * Compute's family quotas from Cloud Quotas, DESIGN GA.5). */
	if (a->gpu == NULL ||
	    quota_gpu_metric(q, p->quota_service, a->region, a->gpu,
	    a->spot, metric) == NULL)
		return;
	for (i = 0; i < r->nusage; i++)
		if (r->usage[i].svc == p->quota_service &&
		    strcmp(r->usage[i].region, a->region) == 0 &&
		    strcmp(r->usage[i].metric, metric) == 0)
			break;
	if (i == r->nusage) {
		if (r->nusage == REC_MAX_USAGE)
			return;
		u = &r->usage[r->nusage++];
		memset(u, 0, sizeof *u);
		u->svc = p->quota_service;
		(void)snprintf(u->region, sizeof u->region, "%s", a->region);
		(void)snprintf(u->metric, sizeof u->metric, "%s", metric);
	}
	r->usage[i].n += a->gpu_count * (a->nodes > 1 ? a->nodes : 1);
}

/* One poll cycle: every group with live attempts is listed once. */
static void
rec_cycle(struct reconcile *r)
{
	struct quota		*q = gcp_quota(cloud_gcp(r->cloud));
	struct rec_group	*g, *gnext;
	const char		*install = cloud_install(r->cloud);
	unsigned		 gen;
	uint64_t		 t0 = uv_hrtime();
	int			 i, rc, polls = 0;

	r->cycle++;
	r->stats.polls++;
	r->stats.seen = 0;

	/* Cancels that failed, limits, checkpoints: the attempts' own. */
	gen = attempt_cycle(r->att, clock_now());

	/* Who is live where, and the GPUs our Vertex attempts hold. */
	LIST_FOREACH(g, &r->groups, link)
		g->nlive = 0;
	for (i = 0; i < r->nusage; i++)
		r->usage[i].n = 0;
	attempt_foreach(r->att, rec_on_live, r);
	for (i = 0; i < r->nusage; i++)
		quota_set_usage(q, r->usage[i].svc, r->usage[i].region,
		    r->usage[i].metric, r->usage[i].n);

	for (g = LIST_FIRST(&r->groups); g != NULL; g = gnext) {
		gnext = LIST_NEXT(g, link);
		if (g->nlive == 0 && g->linger-- <= 0) {
			if (!g->polling) {
				LIST_REMOVE(g, link);
				free(g);
			}
			continue;
		}
		if (g->polling)
			continue;
		g->polling = 1;
		g->poll_gen = gen;
		g->seen = 0;
		r->refs++;
		r->stats.calls++;
		rc = g->prov->poll(cloud_gcp(r->cloud), install,
		    g->region[0] != '\0' ? g->region : NULL, rec_on_seen,
		    rec_on_polled, g);
		if (rc != 0) {
			g->polling = 0;
			r->refs--;
			if (!g->failing)
				log_warnx("reconciler: cannot list %s%s%s: %s",
				    g->prov->name, g->region[0] ? " in " : "",
				    g->region, strerror(-rc));
			g->failing = 1;
			continue;
		}
		polls++;
		if (!r->first_done)
			r->first_left++;
	}
	if (!r->first_done && r->first_left == 0)
		rec_first_done(r);
	r->stats.cycle_ms = (double)(uv_hrtime() - t0) / 1e6;
	if (r->stats.cycle_ms > r->stats.max_cycle_ms)
		r->stats.max_cycle_ms = r->stats.cycle_ms;
	log_debug("reconciler: poll %" PRIu64 ": %d list call(s), %.1f ms",
	    r->cycle, polls, r->stats.cycle_ms);
}

static void
rec_on_timer(uv_timer_t *t)
{
	struct reconcile	*r = t->data;
	const struct conf	*conf = cloud_conf(r->cloud);

	if (r->closing)
		return;
	rec_cycle(r);
	/* The interval is simulated time (doc/DESIGN.md "Simulated time"). */
	(void)uv_timer_start(&r->timer, rec_on_timer, clock_real_ms(
	    (uint64_t)(conf->poll_interval > 0 ? conf->poll_interval : 15) *
	    1000), 0);
}

void
reconcile_poll_now(struct reconcile *r)
{
	if (r->closing || !r->started)
		return;
	(void)uv_timer_start(&r->timer, rec_on_timer, 0, 0);
}

void
reconcile_get_stats(struct reconcile *r, struct reconcile_stats *ret)
{
	*ret = r->stats;
}

int
reconcile_start(struct reconcile *r, char **cause)
{
	int	rc;

	if ((rc = attempt_load(r->att, cause)) < 0)
		return rc;
	r->started = 1;
	(void)uv_timer_start(&r->timer, rec_on_timer, 0, 0);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Life.							    */

struct reconcile *
reconcile_new(struct cloud *cloud, struct attempts *att,
    void (*ready)(void *), void *arg)
{
	struct reconcile	*r;

	r = xcalloc(1, sizeof *r);
	r->cloud = cloud;
	r->att = att;
	r->ready = ready;
	r->ready_arg = arg;
	LIST_INIT(&r->groups);
	r->refs = 1;			/* the timer */
	if (uv_timer_init(cloud_loop(cloud), &r->timer) != 0)
		fatalx("reconciler: cannot make its timer");
	r->timer.data = r;
	return r;
}

static void
rec_unref(struct reconcile *r)
{
	struct rec_group	*g;

	if (--r->refs > 0)
		return;
	while ((g = LIST_FIRST(&r->groups)) != NULL) {
		LIST_REMOVE(g, link);
		free(g);
	}
	free(r);
}

static void
rec_on_close(uv_handle_t *h)
{
	rec_unref(h->data);
}

void
reconcile_close(struct reconcile *r)
{
	if (r == NULL || r->closing)
		return;
	r->closing = 1;
	uv_close((uv_handle_t *)&r->timer, rec_on_close);
}
