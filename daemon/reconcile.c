/*
 * reconcile.c: the reconciler (reconcile.h). What the cloud says about
 * our attempts, brought into the store.
 *
 * It keeps every live attempt in memory, indexed by attempt id, by
 * resource name and by job, and grouped by what one list call covers:
 * (provider, region), or the provider alone when one call lists every
 * region (Compute Engine's aggregatedList). Each poll cycle, every group
 * with live attempts (and, for a few cycles after its last one ended,
 * to catch orphans and late news) gets ONE provider poll; the calls per
 * cycle grow with the groups and the API's pages, never with the jobs.
 *
 * What a listing says, per resource (enum prov_state):
 *
 *   pending	attempt launching (a crash survivor) -> pending, adopted
 *   running	attempt -> running (started: the cloud's time when it is
 *		plausible, else ours); job launching|pending -> running;
 *		then the limits: max_runtime, max_total_usd
 *   succeeded	END_SUCCEEDED, job succeeded
 *   failed	END_FAILED with the exit code; job queued again while
 *		failures <= max_failures, else failed
 *   preempted, maintenance, stockout, lost, error
 *		END_<that>, an interruption: job queued again with backoff
 *		while interruptions <= max_interruptions, else failed
 *   cancelled	END_CANCELLED when we asked, else END_LOST
 *
 * Before a job goes back to the queue the newest checkpoint under its
 * checkpoint directory is looked up (storage listing) and stored, so the
 * next attempt's GPUQ_RESUME_FROM is right; the attempt is ended only
 * when that lookup is back, so a crash meanwhile repeats it. A live
 * attempt a complete listing does not show is: re-launched under the
 * same name and request id if it is still "launching" (we crashed
 * before or during the create call), or ended as lost after two such
 * listings in a row. A resource carrying our install label and no live
 * attempt is an orphan: cancelled (Compute Engine VMs also once
 * stopped, since their disks still cost).
 *
 * Knows the store, the cloud (cloud.h), quotas (Vertex usage from our
 * own books) and the scheduler's wake-ups.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/cost.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"

#define REC_LINGER		4	/* cycles a group is polled after
					   its last attempt ended */
#define REC_MISSES		2	/* complete listings without it, then
					   an attempt is lost */
#define REC_CKPT_EVERY		10	/* cycles between checkpoint listings
					   of one running job */
#define REC_CKPT_PER_CYCLE	1	/* running jobs' listings per cycle */
#define REC_ORPHAN_QUIET	10	/* cycles before an orphan is
					   cancelled again */
#define REC_SKEW		30	/* seconds a cloud time may lead ours */
#define REC_NAME		64
#define REC_MAX_USAGE		256	/* Vertex (region, metric) pairs */

struct rec_group;

/* One live attempt. */
struct rec_entry {
	struct reconcile	*r;
	struct store_attempt	*a;		/* owned copy, kept current */
	const struct provider	*prov;		/* NULL: not enabled */
	struct rec_group	*g;
	int			 refs;		/* the table + calls in flight */
	int			 dead;		/* out of the table */
	TAILQ_ENTRY(rec_entry)	 glink;		/* in its group */
	TAILQ_ENTRY(rec_entry)	 alink;		/* all, round-robin order */

	/* The job, as it was when the attempt was tracked. */
	int64_t			 max_runtime;	/* s; 0 none */
	double			 max_total;	/* USD; 0 none */
	double			 job_cost;	/* ended attempts' cost then */
	char			*ckpt_dir;	/* gs://.../checkpoints/ */
	char			*ckpt_last;	/* newest one stored */
	int			 job_terminal;	/* job ended: only cancel */

	char			*zone;		/* learnt from listings */
	char			*cloud_id;
	int64_t			 running_seen;	/* our clock */
	int			 started_cloud;	/* a->started is the cloud's */
	unsigned		 since_gen;	/* tracked in this cycle */
	unsigned		 seen_gen;
	int			 missed;
	uint64_t		 ckpt_cycle;	/* last listing, cycle number */

	int			 in_flight;	/* a launch call is out */
	int			 cancel_wanted;
	int			 cancel_in_flight;
	int			 cancel_reason;	/* END_CANCELLED or END_LIMIT */
	char			*cancel_msg;

	int			 ending;	/* end decided, checkpoint
						   lookup out */
	int			 end_reason;
	int			 end_exit;
	char			*end_msg;
	int64_t			 end_when;
};
TAILQ_HEAD(rec_entries, rec_entry);

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
	struct rec_entries	 entries;
	LIST_ENTRY(rec_group)	 link;
};

/* An orphan being (or lately) cancelled. */
struct rec_orphan {
	char			*name;
	uint64_t		 cycle;		/* when the cancel was sent */
	int			 in_flight;
	struct reconcile	*r;
};

/* A Vertex usage figure pushed to quota.c. */
struct rec_usage {
	char			 region[REC_NAME];
	char			 metric[QUOTA_METRIC_MAX];
	double			 n;
	int			 pushed;
};

struct reconcile {
	struct cloud		*cloud;		/* borrowed */
	struct store		*store;		/* borrowed */
	struct sched		*sched;		/* borrowed */
	uv_timer_t		 timer;		/* timer.data == this */
	int			 refs;		/* timer + calls in flight */
	int			 closing;
	int			 started;
	int			 first_done;	/* first cycle ended */
	int			 first_left;	/* its polls still out */

	void			*by_id;		/* tsearch trees of entries */
	void			*by_res;
	void			*by_job;
	struct rec_entries	 all;
	int			 nlive;
	LIST_HEAD(, rec_group)	 groups;
	void			*orphans;	/* tsearch tree of rec_orphan */

	unsigned		 gen;		/* poll cycle, wraps */
	uint64_t		 cycle;
	struct rec_usage	 usage[REC_MAX_USAGE];
	int			 nusage;
	struct reconcile_stats	 stats;
};

static void	rec_unref(struct reconcile *);
static void	rec_entry_unref(struct rec_entry *);
static void	rec_finish(struct rec_entry *);
static void	rec_cancel_start(struct rec_entry *);

static int
rec_id_cmp(const void *a, const void *b)
{
	const struct rec_entry	*x = a, *y = b;

	return x->a->id < y->a->id ? -1 : x->a->id > y->a->id;
}

static int
rec_res_cmp(const void *a, const void *b)
{
	const struct rec_entry	*x = a, *y = b;

	return strcmp(x->a->resource, y->a->resource);
}

static int
rec_job_cmp(const void *a, const void *b)
{
	const struct rec_entry	*x = a, *y = b;

	return x->a->job_id < y->a->job_id ? -1 :
	    x->a->job_id > y->a->job_id;
}

static int
rec_orphan_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rec_orphan *)a)->name,
	    ((const struct rec_orphan *)b)->name);
}

/* The entry of attempt ID, or NULL. */
static struct rec_entry *
rec_find_id(struct reconcile *r, int64_t id)
{
	struct store_attempt	 a;
	struct rec_entry	 key, **found;

	a.id = id;
	key.a = &a;
	found = tfind(&key, &r->by_id, rec_id_cmp);
	return found != NULL ? *found : NULL;
}

static struct rec_entry *
rec_find_res(struct reconcile *r, const char *resource)
{
	struct store_attempt	 a;
	struct rec_entry	 key, **found;

	a.resource = (char *)resource;
	key.a = &a;
	found = tfind(&key, &r->by_res, rec_res_cmp);
	return found != NULL ? *found : NULL;
}

static struct rec_entry *
rec_find_job(struct reconcile *r, int64_t job_id)
{
	struct store_attempt	 a;
	struct rec_entry	 key, **found;

	a.job_id = job_id;
	key.a = &a;
	found = tfind(&key, &r->by_job, rec_job_cmp);
	return found != NULL ? *found : NULL;
}

/* "us-central1" of "us-central1-a" into BUF. */
static void
rec_zone_region(const char *zone, char *buf, size_t len)
{
	const char	*dash = strrchr(zone, '-');
	size_t		 n = dash != NULL ? (size_t)(dash - zone) : strlen(zone);

	(void)snprintf(buf, len, "%.*s", (int)n, zone);
}

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
	TAILQ_INIT(&g->entries);
	LIST_INSERT_HEAD(&r->groups, g, link);
	return g;
}

/* The job facts an entry keeps, from SPEC (borrowed). */
static void
rec_entry_job(struct rec_entry *e, const struct store_job *job, json_t *spec)
{
	json_t	*v;

	v = json_object_get(spec, "max_runtime");
	e->max_runtime = json_is_integer(v) ? json_integer_value(v) : 0;
	v = json_object_get(spec, "max_total_usd");
	e->max_total = json_is_number(v) ? json_number_value(v) : 0;
	e->job_cost = job->cost_usd;
	free(e->ckpt_last);
	e->ckpt_last = job->checkpoint != NULL ? xstrdup(job->checkpoint) :
	    NULL;
	free(e->ckpt_dir);
	e->ckpt_dir = cloud_checkpoint_dir(e->r->cloud, spec, job->id);
	e->job_terminal = job->state == JOB_SUCCEEDED ||
	    job->state == JOB_FAILED || job->state == JOB_CANCELLED;
}

/* Put a copy of attempt A in the table. */
static struct rec_entry *
rec_add(struct reconcile *r, const struct store_attempt *a,
    const struct store_job *job, json_t *spec)
{
	struct rec_entry	*e;

	if ((e = rec_find_id(r, a->id)) != NULL)
		return e;
	e = xcalloc(1, sizeof *e);
	e->r = r;
	e->refs = 1;
	e->a = store_attempt_copy(a);
	e->prov = cloud_provider(r->cloud, a->provider);
	e->since_gen = r->gen;
	e->ckpt_cycle = r->cycle;
	e->cancel_reason = END_CANCELLED;
	if (a->state == ATTEMPT_RUNNING) {
		e->running_seen = a->started > 0 ? a->started : time(NULL);
		e->started_cloud = 0;
	}
	rec_entry_job(e, job, spec);
	if (tsearch(e, &r->by_id, rec_id_cmp) == NULL ||
	    tsearch(e, &r->by_res, rec_res_cmp) == NULL ||
	    tsearch(e, &r->by_job, rec_job_cmp) == NULL)
		fatalx("reconciler: out of memory");
	TAILQ_INSERT_TAIL(&r->all, e, alink);
	r->nlive++;
	if (e->prov != NULL) {
		e->g = rec_group_get(r, e->prov, a->region);
		TAILQ_INSERT_TAIL(&e->g->entries, e, glink);
		e->g->nlive++;
		e->g->linger = REC_LINGER;
	}
	return e;
}

/* Take E out of the table; it is freed when its last call is back. */
static void
rec_remove(struct rec_entry *e)
{
	struct reconcile	*r = e->r;

	if (e->dead)
		return;
	e->dead = 1;
	(void)tdelete(e, &r->by_id, rec_id_cmp);
	if (rec_find_res(r, e->a->resource) == e)
		(void)tdelete(e, &r->by_res, rec_res_cmp);
	if (rec_find_job(r, e->a->job_id) == e)
		(void)tdelete(e, &r->by_job, rec_job_cmp);
	TAILQ_REMOVE(&r->all, e, alink);
	r->nlive--;
	if (e->g != NULL) {
		TAILQ_REMOVE(&e->g->entries, e, glink);
		e->g->nlive--;
		e->g = NULL;
	}
	rec_entry_unref(e);
}

static void
rec_entry_free(struct rec_entry *e)
{
	store_attempt_free(e->a);
	free(e->ckpt_dir);
	free(e->ckpt_last);
	free(e->zone);
	free(e->cloud_id);
	free(e->cancel_msg);
	free(e->end_msg);
	free(e);
}

static void
rec_entry_unref(struct rec_entry *e)
{
	if (--e->refs > 0)
		return;
	rec_entry_free(e);
}

/* A time the cloud gave, if it is not in our future: else 0. */
static int64_t
rec_plausible(int64_t t, int64_t now)
{
	return t > 0 && t <= now + REC_SKEW ? t : 0;
}

/* "gce/us-central1-a" of E. New. */
static char *
rec_place(const struct rec_entry *e)
{
	const char	*z = e->a->zone != NULL ? e->a->zone : e->zone;

	return xprintf("%s/%s", e->a->provider, z != NULL ? z : e->a->region);
}

/* "1h02m", "3m05s", "42s". */
static void
rec_duration(int64_t sec, char *buf, size_t len)
{
	if (sec < 0)
		sec = 0;
	if (sec >= 3600)
		(void)snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m",
		    sec / 3600, sec / 60 % 60);
	else if (sec >= 60)
		(void)snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s",
		    sec / 60, sec % 60);
	else
		(void)snprintf(buf, len, "%" PRId64 "s", sec);
}

/* Move job ID from MASK to TO with MSG; log what goes wrong. */
static int
rec_job_move(struct reconcile *r, int64_t id, unsigned mask, int to,
    const char *msg, int *ret_state)
{
	char	*cause = NULL;
	int	 rc;

	rc = store_job_transition(r->store, id, mask, to, msg, ret_state,
	    &cause);
	if (rc < 0 && rc != -EALREADY)
		log_warnx("job %" PRId64 ": %s", id, cause);
	free(cause);
	return rc;
}

/* ---------------------------------------------------------------- */
/* What a listing says.						    */

/* The cloud accepted E (a crash survivor found pending): adopt it. */
static void
rec_set_pending(struct rec_entry *e, const struct prov_observed *o)
{
	struct reconcile	*r = e->r;
	char			*cause = NULL, *place, *msg;

	if (store_attempt_set_state(r->store, e->a->id, ATTEMPT_PENDING,
	    time(NULL), o->cloud_id, &cause) < 0) {
		log_warnx("job %" PRId64 ": attempt %d: %s", e->a->job_id,
		    e->a->number, cause);
		free(cause);
		return;
	}
	e->a->state = ATTEMPT_PENDING;
	place = rec_place(e);
	msg = xprintf("found on %s after a restart", place);
	(void)rec_job_move(r, e->a->job_id, JOB_MASK(JOB_LAUNCHING),
	    JOB_PENDING, msg, NULL);
	log_info("job %" PRId64 ": adopted %s on %s", e->a->job_id,
	    e->a->resource, place);
	free(msg);
	free(place);
}

/* Cancel E because it broke a limit (MSG, taken). */
static void
rec_limit(struct rec_entry *e, char *msg)
{
	if (e->cancel_wanted) {
		free(msg);
		return;
	}
	log_info("job %" PRId64 ": %s; stopping it", e->a->job_id, msg);
	e->cancel_wanted = 1;
	e->cancel_reason = END_LIMIT;
	free(e->cancel_msg);
	e->cancel_msg = msg;
	rec_cancel_start(e);
}

/* max_runtime and max_total_usd of running E. */
static void
rec_check_limits(struct rec_entry *e, int64_t now)
{
	char	d[32];
	double	cost;

	if (e->a->state != ATTEMPT_RUNNING || e->cancel_wanted ||
	    e->ending || e->in_flight)
		return;
	if (e->max_runtime > 0 && now - e->running_seen > e->max_runtime) {
		rec_duration(e->max_runtime, d, sizeof d);
		rec_limit(e, xprintf("ran longer than max_runtime %s", d));
		return;
	}
	cost = e->job_cost + cost_attempt(e->a->hourly_usd, e->running_seen,
	    now);
	if (e->max_total > 0 && cost > e->max_total)
		rec_limit(e, xprintf("cost $%.2f reached max_total_usd %.2f",
		    cost, e->max_total));
}

/* Running: attempt and job say so, once. */
static void
rec_set_running(struct rec_entry *e, const struct prov_observed *o)
{
	struct reconcile	*r = e->r;
	int64_t			 now = time(NULL), started;
	char			*cause = NULL, *place, *msg;

	started = rec_plausible(o->started, now);
	e->started_cloud = started != 0;
	if (started == 0)
		started = now;
	if (store_attempt_set_state(r->store, e->a->id, ATTEMPT_RUNNING,
	    started, o->cloud_id, &cause) < 0) {
		log_warnx("job %" PRId64 ": attempt %d: %s", e->a->job_id,
		    e->a->number, cause);
		free(cause);
		return;
	}
	e->a->state = ATTEMPT_RUNNING;
	e->a->started = started;
	e->running_seen = now;
	place = rec_place(e);
	msg = xprintf("running on %s", place);
	(void)rec_job_move(r, e->a->job_id, JOB_MASK(JOB_LAUNCHING) |
	    JOB_MASK(JOB_PENDING), JOB_RUNNING, msg, NULL);
	log_info("job %" PRId64 ": attempt %d running on %s", e->a->job_id,
	    e->a->number, place);
	free(msg);
	free(place);
}

static void
rec_on_checkpoint(int error, const char *uri, int64_t updated,
    const char *cause, void *arg)
{
	struct rec_entry	*e = arg;
	struct reconcile	*r = e->r;
	char			*why = NULL;

	if (!r->closing) {
		if (error < 0)
			log_warnx("job %" PRId64 ": cannot list checkpoints "
			    "under %s: %s", e->a->job_id, e->ckpt_dir,
			    cause != NULL ? cause : strerror(-error));
		else if (uri != NULL && (e->ckpt_last == NULL ||
		    strcmp(e->ckpt_last, uri) != 0)) {
			if (store_job_set_checkpoint(r->store, e->a->job_id,
			    uri, updated, &why) < 0) {
				log_warnx("job %" PRId64 ": %s", e->a->job_id,
				    why);
				free(why);
			} else {
				log_debug("job %" PRId64 ": newest checkpoint "
				    "%s", e->a->job_id, uri);
				free(e->ckpt_last);
				e->ckpt_last = xstrdup(uri);
			}
		}
		if (e->ending && !e->dead)
			rec_finish(e);
	}
	rec_entry_unref(e);
	rec_unref(r);
}

/* List E's checkpoints; an ending E finishes when that is back. */
static int
rec_checkpoint(struct rec_entry *e)
{
	struct reconcile	*r = e->r;
	int			 rc;

	if (e->ckpt_dir == NULL)
		return -ENOENT;
	e->refs++;
	r->refs++;
	e->ckpt_cycle = r->cycle;
	r->stats.checkpoint_lists++;
	rc = cloud_checkpoint_newest(r->cloud, e->ckpt_dir, rec_on_checkpoint,
	    e);
	if (rc != 0) {
		log_warnx("job %" PRId64 ": cannot list checkpoints under %s: "
		    "%s", e->a->job_id, e->ckpt_dir, strerror(-rc));
		e->refs--;
		r->refs--;
	}
	return rc;
}

/*
 * E ended (REASON, EXIT, the cloud's MSG, at WHEN). When the job may
 * run again, its newest checkpoint is looked up first.
 */
static void
rec_end(struct rec_entry *e, int reason, int exit_code, const char *msg,
    int64_t when)
{
	if (e->ending)
		return;
	e->ending = 1;
	e->end_reason = reason;
	e->end_exit = exit_code;
	free(e->end_msg);
	e->end_msg = msg != NULL ? xstrdup(msg) : NULL;
	e->end_when = when;
	if ((reason == END_FAILED || attempt_end_is_interruption(reason)) &&
	    !e->job_terminal && rec_checkpoint(e) == 0)
		return;
	rec_finish(e);
}

/*
 * A stockout after the cloud had accepted E: cool ZONE down for the
 * GPU, or, when the service had picked the zone and says only the
 * region is out, every zone of the region offering it.
 */
static void
rec_stockout(struct rec_entry *e, const char *zone, int64_t now)
{
	const struct conf	*conf = cloud_conf(e->r->cloud);
	struct quota		*q = gcp_quota(cloud_gcp(e->r->cloud));
	struct quota_zone	 z[32];
	int64_t			 until;
	int			 i, n;

	if (e->a->gpu == NULL)
		return;
	if (zone != NULL) {
		(void)store_cooldown_strike(e->r->store, zone, e->a->gpu,
		    e->a->spot, now, conf->stockout_cooldown,
		    conf->stockout_cooldown_max, &until, NULL);
		return;
	}
	n = quota_zones(q, e->a->region, e->a->gpu, z, 32);
	for (i = 0; i < n; i++)
		if (z[i].max_per_vm >= e->a->gpu_count)
			(void)store_cooldown_strike(e->r->store, z[i].zone,
			    e->a->gpu, e->a->spot, now,
			    conf->stockout_cooldown,
			    conf->stockout_cooldown_max, &until, NULL);
}

/* Map one listed resource O onto its live attempt E. */
static void
rec_observe(struct rec_entry *e, const struct prov_observed *o)
{
	int64_t		 now = time(NULL), ended;
	const char	*msg;
	int		 reason;

	if (e->in_flight || e->ending)
		return;
	if (o->zone != NULL && e->a->zone == NULL && e->zone == NULL)
		e->zone = xstrdup(o->zone);
	if (o->cloud_id != NULL && e->a->cloud_id == NULL &&
	    e->cloud_id == NULL)
		e->cloud_id = xstrdup(o->cloud_id);
	switch (o->state) {
	case PROV_PENDING:
		if (e->a->state == ATTEMPT_LAUNCHING)
			rec_set_pending(e, o);
		return;
	case PROV_RUNNING:
		if (e->a->state == ATTEMPT_LAUNCHING)
			rec_set_pending(e, o);
		if (e->a->state != ATTEMPT_RUNNING)
			rec_set_running(e, o);
		rec_check_limits(e, now);
		return;
	case PROV_SUCCEEDED:
		reason = END_SUCCEEDED;
		break;
	case PROV_FAILED:
		reason = END_FAILED;
		break;
	case PROV_PREEMPTED:
		reason = END_PREEMPTED;
		break;
	case PROV_MAINTENANCE:
		reason = END_MAINTENANCE;
		break;
	case PROV_STOCKOUT:
		reason = END_STOCKOUT;
		break;
	case PROV_CANCELLED:
		reason = e->cancel_wanted ? e->cancel_reason : END_LOST;
		break;
	default:
		reason = END_LOST;
		break;
	}
	if (reason == END_STOCKOUT)
		rec_stockout(e, o->zone != NULL ? o->zone : e->a->zone, now);
	ended = 0;
	if (e->started_cloud)
		ended = rec_plausible(o->ended, now);
	if (ended != 0 && ended < e->a->started)
		ended = 0;
	if (reason == END_LIMIT)
		msg = e->cancel_msg;
	else if (reason == END_LOST && o->state == PROV_CANCELLED)
		msg = "cancelled outside gpuq";
	else
		msg = o->message;
	rec_end(e, reason, reason == END_SUCCEEDED ? 0 : o->exit_code, msg,
	    ended != 0 ? ended : now);
}

/* A complete listing of E's group did not show E. */
static void
rec_missing(struct rec_entry *e)
{
	struct reconcile	*r = e->r;
	int			 rc;

	if (e->in_flight || e->ending || e->cancel_in_flight)
		return;
	if (e->a->state == ATTEMPT_LAUNCHING) {
		if (e->cancel_wanted || e->job_terminal) {
			rec_end(e, END_CANCELLED, -1, "cancelled before the "
			    "cloud had it", time(NULL));
			return;
		}
		/* We crashed before or during the create call. */
		e->in_flight = 1;
		if ((rc = sched_relaunch(r->sched, e->a)) != 0) {
			e->in_flight = 0;
			log_warnx("job %" PRId64 ": cannot relaunch %s: %s; "
			    "trying again at the next poll", e->a->job_id,
			    e->a->resource, strerror(-rc));
			return;
		}
		r->stats.relaunches++;
		return;
	}
	if (++e->missed < REC_MISSES)
		return;
	if (e->cancel_wanted) {
		rec_end(e, e->cancel_reason, -1, e->cancel_msg, time(NULL));
		return;
	}
	log_info("job %" PRId64 ": %s is no longer listed by %s; counting it "
	    "as lost", e->a->job_id, e->a->resource, e->a->provider);
	rec_end(e, END_LOST, -1, "the cloud no longer lists it", time(NULL));
}

/* ---------------------------------------------------------------- */
/* Ending an attempt and moving its job.			    */

static void
rec_on_deleted(const struct prov_result *res, void *arg)
{
	struct rec_orphan	*o = arg;
	struct reconcile	*r = o->r;

	o->in_flight = 0;
	if (!r->closing && res->fail != PROV_FAIL_NONE)
		log_debug("reconciler: delete of %s: %s", o->name,
		    res->message != NULL ? res->message : "failed");
	rec_unref(r);
}

/*
 * Cancel or delete resource NAME on P (an orphan, or a finished VM),
 * unless that was done lately.
 */
static void
rec_delete(struct reconcile *r, const struct provider *p, const char *name,
    const char *cloud_id, const char *region, const char *zone)
{
	struct rec_orphan	 key, *o, **found;
	char			*cause = NULL;

	key.name = (char *)name;
	found = tfind(&key, &r->orphans, rec_orphan_cmp);
	if (found != NULL) {
		o = *found;
		if (o->in_flight || r->cycle - o->cycle < REC_ORPHAN_QUIET)
			return;
	} else {
		o = xcalloc(1, sizeof *o);
		o->name = xstrdup(name);
		o->r = r;
		if (tsearch(o, &r->orphans, rec_orphan_cmp) == NULL)
			fatalx("reconciler: out of memory");
	}
	o->cycle = r->cycle;
	o->in_flight = 1;
	r->refs++;
	if (cloud_cancel(r->cloud, p, name, cloud_id, region, zone,
	    rec_on_deleted, o, &cause) != 0) {
		log_warnx("reconciler: cannot delete %s: %s", name, cause);
		free(cause);
		o->in_flight = 0;
		r->refs--;
	}
}

/* Requeue job J after E ended, not before WHEN; WHAT says why. */
static void
rec_requeue(struct rec_entry *e, const struct store_job *j, int64_t delay,
    const char *what)
{
	struct reconcile	*r = e->r;
	int64_t			 when = time(NULL) + delay;
	char			*msg, *why;
	int			 state = -1;

	(void)store_job_set_not_before(r->store, j->id, when, NULL);
	msg = xprintf("%s; queued again, next try in %" PRId64 "s", what,
	    delay);
	if (rec_job_move(r, j->id, JOB_MASK(JOB_LAUNCHING) |
	    JOB_MASK(JOB_PENDING) | JOB_MASK(JOB_RUNNING), JOB_QUEUED, msg,
	    &state) == 0) {
		why = xprintf("retrying in %" PRId64 "s after: %s", delay,
		    what);
		(void)store_job_set_why(r->store, j->id, why, NULL);
		free(why);
		sched_wake_at(r->sched, when);
	}
	free(msg);
}

/*
 * Write E's end (reason, exit code, cost) and move its job: succeeded,
 * failed, cancelled, or queued again. Then forget E.
 */
static void
rec_finish(struct rec_entry *e)
{
	struct reconcile	*r = e->r;
	const struct conf	*conf = cloud_conf(r->cloud);
	struct store_attempt	*a = e->a;
	struct store_job	*j = NULL;
	json_t			*spec = NULL;
	char			*cause = NULL, *place, *what, *msg, d[32];
	int64_t			 ended = e->end_when, started, delay;
	double			 cost;
	int			 rc, reason = e->end_reason, maxn, n;
	const char		*name;

	started = a->started;
	if (ended < started)
		ended = started;
	cost = cost_attempt(a->hourly_usd, started, ended);
	rc = store_attempt_end(r->store, a->id, ended, reason, e->end_exit,
	    e->end_msg, cost, &cause);
	if (rc < 0 && rc != -EALREADY) {
		/* Try again at the next listing. */
		log_warnx("job %" PRId64 ": cannot end attempt %d: %s",
		    a->job_id, a->number, cause);
		free(cause);
		e->ending = 0;
		return;
	}
	free(cause);
	cause = NULL;
	r->stats.ended++;
	place = rec_place(e);
	rec_duration(started > 0 ? ended - started : 0, d, sizeof d);
	name = attempt_end_name(reason);
	log_info("job %" PRId64 ": attempt %d on %s ended: %s%s%s after %s, "
	    "$%.4f", a->job_id, a->number, place, name, e->end_msg ? ": " :
	    "", e->end_msg ? e->end_msg : "", d, cost);
	if (a->spot)
		sched_history_changed(r->sched);

	if (store_job_get(r->store, a->job_id, &j, &cause) < 0) {
		log_warnx("job %" PRId64 ": %s", a->job_id, cause);
		free(cause);
		goto done;
	}
	if (j->spec != NULL)
		spec = json_loads(j->spec, 0, NULL);

	if (j->state == JOB_CANCELLING || e->cancel_wanted) {
		if (reason == END_SUCCEEDED)
			(void)rec_job_move(r, j->id, JOB_MASK(JOB_CANCELLING) |
			    JOB_MASK_CLOUD, JOB_SUCCEEDED, "succeeded before "
			    "the cancel took effect", NULL);
		else if (reason == END_LIMIT)
			(void)rec_job_move(r, j->id, JOB_MASK_CLOUD |
			    JOB_MASK(JOB_CANCELLING), JOB_FAILED, e->cancel_msg,
			    NULL);
		else if (j->state == JOB_CANCELLING)
			(void)rec_job_move(r, j->id, JOB_MASK(JOB_CANCELLING),
			    JOB_CANCELLED, "cancelled", NULL);
		goto done;
	}
	if (!(JOB_MASK(j->state) & JOB_MASK_CLOUD))
		goto done;	/* the job went elsewhere meanwhile */

	switch (reason) {
	case END_SUCCEEDED:
		msg = xprintf("succeeded on %s after %s, $%.2f", place, d,
		    cost);
		(void)rec_job_move(r, j->id, JOB_MASK_CLOUD, JOB_SUCCEEDED,
		    msg, NULL);
		free(msg);
		break;
	case END_FAILED:
		maxn = (int)json_integer_value(json_object_get(spec,
		    "max_failures"));
		if (j->failures <= maxn) {
			what = xprintf("exit code %d on %s (failure %d of "
			    "%d allowed)", e->end_exit, place, j->failures,
			    maxn);
			delay = cost_backoff(conf->backoff_base,
			    conf->backoff_max, j->failures - 1,
			    (double)random() / RAND_MAX);
			rec_requeue(e, j, delay, what);
			free(what);
			break;
		}
		msg = xprintf("exit code %d on %s%s%s", e->end_exit, place,
		    maxn > 0 ? "; max_failures reached" : "",
		    "");
		(void)rec_job_move(r, j->id, JOB_MASK_CLOUD, JOB_FAILED, msg,
		    NULL);
		free(msg);
		break;
	case END_LIMIT:
		(void)rec_job_move(r, j->id, JOB_MASK_CLOUD, JOB_FAILED,
		    e->cancel_msg != NULL ? e->cancel_msg : "limit reached",
		    NULL);
		break;
	case END_CANCELLED:
		(void)rec_job_move(r, j->id, JOB_MASK_CLOUD, JOB_CANCELLED,
		    "cancelled", NULL);
		break;
	default:
		/* An interruption. */
		maxn = (int)json_integer_value(json_object_get(spec,
		    "max_interruptions"));
		n = j->interruptions;
		if (n > maxn) {
			msg = xprintf("%s on %s: interrupted %d times, over "
			    "max_interruptions %d", name, place, n, maxn);
			(void)rec_job_move(r, j->id, JOB_MASK_CLOUD,
			    JOB_FAILED, msg, NULL);
			free(msg);
			break;
		}
		what = xprintf("%s on %s%s%s", name, place,
		    j->checkpoint != NULL ? ", resuming from " : "",
		    j->checkpoint != NULL ? j->checkpoint : "");
		delay = cost_backoff(conf->backoff_base, conf->backoff_max,
		    n - 1, (double)random() / RAND_MAX);
		rec_requeue(e, j, delay, what);
		free(what);
		break;
	}

done:
	/* A Compute Engine VM costs its disk until deleted. */
	if (e->prov != NULL && !e->prov->picks_zone &&
	    reason != END_CANCELLED && reason != END_LIMIT &&
	    a->state != ATTEMPT_LAUNCHING)
		rec_delete(r, e->prov, a->resource, a->cloud_id != NULL ?
		    a->cloud_id : e->cloud_id, a->region, a->zone);
	json_decref(spec);
	store_job_free(j);
	free(place);
	e->ending = 0;
	rec_remove(e);
	sched_wake(r->sched);
}

/* ---------------------------------------------------------------- */
/* Cancels.							    */

static void
rec_on_cancelled(const struct prov_result *res, void *arg)
{
	struct rec_entry	*e = arg;
	struct reconcile	*r = e->r;

	e->cancel_in_flight = 0;
	if (!r->closing && !e->dead) {
		if (res->fail == PROV_FAIL_NONE ||
		    res->fail == PROV_FAIL_INVALID) {
			/* Accepted, or nothing there to cancel any more. */
			rec_end(e, e->cancel_reason, -1, e->cancel_reason ==
			    END_LIMIT ? e->cancel_msg : "cancelled by gpuq",
			    time(NULL));
		} else
			log_warnx("job %" PRId64 ": cancel of %s failed: %s; "
			    "trying again at the next poll", e->a->job_id,
			    e->a->resource, res->message != NULL ?
			    res->message : "no detail");
	}
	rec_entry_unref(e);
	rec_unref(r);
}

/* Ask the cloud to stop E's resource. */
static void
rec_cancel_start(struct rec_entry *e)
{
	struct reconcile	*r = e->r;
	char			*cause = NULL;
	int			 rc;

	if (e->cancel_in_flight || e->in_flight || e->ending || e->dead)
		return;
	if (e->prov == NULL) {
		rec_end(e, e->cancel_reason, -1, "its provider is no longer "
		    "enabled", time(NULL));
		return;
	}
	e->cancel_in_flight = 1;
	e->refs++;
	r->refs++;
	rc = cloud_cancel(r->cloud, e->prov, e->a->resource,
	    e->a->cloud_id != NULL ? e->a->cloud_id : e->cloud_id,
	    e->a->region, e->a->zone != NULL ? e->a->zone : e->zone,
	    rec_on_cancelled, e, &cause);
	if (rc != 0) {
		log_warnx("job %" PRId64 ": cannot cancel %s: %s; trying "
		    "again at the next poll", e->a->job_id, e->a->resource,
		    cause);
		free(cause);
		e->cancel_in_flight = 0;
		e->refs--;
		r->refs--;
	}
}

void
reconcile_cancel(struct reconcile *r, int64_t id)
{
	struct rec_entry	*e;

	if (r->closing)
		return;
	if ((e = rec_find_job(r, id)) == NULL) {
		(void)rec_job_move(r, id, JOB_MASK(JOB_CANCELLING),
		    JOB_CANCELLED, "cancelled; nothing was in the cloud", NULL);
		sched_wake(r->sched);
		return;
	}
	log_info("job %" PRId64 ": cancelling %s", id, e->a->resource);
	e->cancel_wanted = 1;
	e->cancel_reason = END_CANCELLED;
	rec_cancel_start(e);
}

/* ---------------------------------------------------------------- */
/* Polls.							    */

/* A resource of ours with no live attempt. */
static void
rec_orphan(struct rec_group *g, const struct prov_observed *o)
{
	struct reconcile	*r = g->r;
	char			 region[REC_NAME];
	int			 alive;

	if (o->resource == NULL)
		return;
	alive = o->state == PROV_PENDING || o->state == PROV_RUNNING;
	/* Finished Batch jobs and Vertex jobs cost nothing: keep them. */
	if (!alive && g->prov->picks_zone)
		return;
	if (g->region[0] != '\0')
		(void)snprintf(region, sizeof region, "%s", g->region);
	else if (o->zone != NULL)
		rec_zone_region(o->zone, region, sizeof region);
	else
		return;
	if (alive)
		log_info("reconciler: %s on %s/%s has our install label and "
		    "no live attempt; deleting it", o->resource,
		    g->prov->name, o->zone != NULL ? o->zone : region);
	r->stats.orphans += alive;
	rec_delete(r, g->prov, o->resource, o->cloud_id, region, o->zone);
}

static void
rec_on_seen(const struct prov_observed *o, void *arg)
{
	struct rec_group	*g = arg;
	struct reconcile	*r = g->r;
	struct rec_entry	*e;

	if (o == NULL || r->closing)
		return;
	g->seen++;
	r->stats.seen++;
	if (o->resource == NULL || (e = rec_find_res(r, o->resource)) ==
	    NULL) {
		rec_orphan(g, o);
		return;
	}
	e->seen_gen = g->poll_gen;
	e->missed = 0;
	rec_observe(e, o);
}

/* One group's poll is back. */
static void
rec_on_polled(const struct prov_result *res, void *arg)
{
	struct rec_group	*g = arg;
	struct reconcile	*r = g->r;
	struct rec_entry	*e, *next;

	g->polling = 0;
	if (!r->closing) {
		if (res->fail == PROV_FAIL_NONE) {
			if (g->failing)
				log_info("reconciler: %s%s%s listed again",
				    g->prov->name, g->region[0] ? " in " : "",
				    g->region);
			g->failing = 0;
			for (e = TAILQ_FIRST(&g->entries); e != NULL;
			    e = next) {
				next = TAILQ_NEXT(e, glink);
				if (e->seen_gen != g->poll_gen &&
				    e->since_gen != g->poll_gen)
					rec_missing(e);
			}
		} else if (!g->failing) {
			g->failing = 1;
			log_warnx("reconciler: listing %s%s%s failed: %s; "
			    "trying again at the next poll", g->prov->name,
			    g->region[0] ? " in " : "", g->region,
			    res->message != NULL ? res->message : "no detail");
		}
		if (!r->first_done && --r->first_left == 0) {
			r->first_done = 1;
			sched_ready(r->sched);
		}
	}
	rec_unref(r);
}

/* Push the GPUs our live Vertex attempts hold to quota.c. */
static void
rec_vertex_usage(struct reconcile *r)
{
	struct quota		*q = gcp_quota(cloud_gcp(r->cloud));
	struct rec_group	*g;
	struct rec_entry	*e;
	struct rec_usage	*u;
	char			 metric[QUOTA_METRIC_MAX];
	int			 i;

	for (i = 0; i < r->nusage; i++)
		r->usage[i].n = 0;
	LIST_FOREACH(g, &r->groups, link) {
		if (!g->prov->quota_usage_ours)
			continue;
		TAILQ_FOREACH(e, &g->entries, glink) {
			if (e->a->gpu == NULL || quota_gpu_metric(q,
			    GCP_SERVICE_VERTEX, e->a->region, e->a->gpu,
			    e->a->spot, metric) == NULL)
				continue;
			for (i = 0; i < r->nusage; i++)
				if (strcmp(r->usage[i].region,
				    e->a->region) == 0 &&
				    strcmp(r->usage[i].metric, metric) == 0)
					break;
			if (i == r->nusage) {
				if (r->nusage == REC_MAX_USAGE)
					continue;
				u = &r->usage[r->nusage++];
				memset(u, 0, sizeof *u);
				(void)snprintf(u->region, sizeof u->region,
				    "%s", e->a->region);
				(void)snprintf(u->metric, sizeof u->metric,
				    "%s", metric);
			}
			r->usage[i].n += e->a->gpu_count;
		}
	}
	for (i = 0; i < r->nusage; i++) {
		u = &r->usage[i];
		quota_set_usage(q, GCP_SERVICE_VERTEX, u->region, u->metric,
		    u->n);
		u->pushed = 1;
	}
}

/* Refresh the newest checkpoint of a running job or so, round robin. */
static void
rec_running_checkpoints(struct reconcile *r)
{
	struct rec_entry	*e, *next;
	int			 budget = REC_CKPT_PER_CYCLE, visited = 0;

	for (e = TAILQ_FIRST(&r->all); e != NULL && budget > 0 &&
	    visited < r->nlive; e = next, visited++) {
		next = TAILQ_NEXT(e, alink);
		if (e->a->state != ATTEMPT_RUNNING || e->ending ||
		    e->ckpt_dir == NULL ||
		    r->cycle - e->ckpt_cycle < REC_CKPT_EVERY)
			continue;
		TAILQ_REMOVE(&r->all, e, alink);
		TAILQ_INSERT_TAIL(&r->all, e, alink);
		if (rec_checkpoint(e) == 0)
			budget--;
	}
}

/* Orphans old enough to forget, collected by rec_orphan_visit. */
struct rec_prune {
	struct reconcile	 *r;
	struct rec_orphan	**v;
	size_t			  n, cap;
};

static void
rec_orphan_visit(const void *node, VISIT which, void *arg)
{
	struct rec_prune	*p = arg;
	struct rec_orphan	*o = *(struct rec_orphan *const *)node;

	if (which != postorder && which != leaf)
		return;
	if (o->in_flight || p->r->cycle - o->cycle <= 4 * REC_ORPHAN_QUIET)
		return;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xreallocarray(p->v, p->cap, sizeof *p->v);
	}
	p->v[p->n++] = o;
}

/* Forget orphans cancelled long ago. */
static void
rec_orphans_prune(struct reconcile *r)
{
	struct rec_prune	p;
	size_t			i;

	memset(&p, 0, sizeof p);
	p.r = r;
	twalk_r(r->orphans, rec_orphan_visit, &p);
	for (i = 0; i < p.n; i++) {
		(void)tdelete(p.v[i], &r->orphans, rec_orphan_cmp);
		free(p.v[i]->name);
		free(p.v[i]);
	}
	free(p.v);
}

/* One poll cycle: every group with live attempts is listed once. */
static void
rec_cycle(struct reconcile *r)
{
	struct rec_group	*g, *gnext;
	struct rec_entry	*e, *next;
	const char		*install = cloud_install(r->cloud);
	int64_t			 now = time(NULL);
	uint64_t		 t0 = uv_hrtime();
	int			 rc, polls = 0;

	r->gen++;
	r->cycle++;
	r->stats.polls++;
	r->stats.seen = 0;

	/* Cancels that failed, and the limits of running attempts. */
	for (e = TAILQ_FIRST(&r->all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, alink);
		if (e->cancel_wanted && !e->cancel_in_flight)
			rec_cancel_start(e);
		else
			rec_check_limits(e, now);
	}

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
		g->poll_gen = r->gen;
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
	rec_vertex_usage(r);
	rec_running_checkpoints(r);
	if ((r->cycle & 63) == 0)
		rec_orphans_prune(r);
	if (!r->first_done && r->first_left == 0) {
		r->first_done = 1;
		sched_ready(r->sched);
	}
	r->stats.live = r->nlive;
	r->stats.cycle_ms = (double)(uv_hrtime() - t0) / 1e6;
	if (r->stats.cycle_ms > r->stats.max_cycle_ms)
		r->stats.max_cycle_ms = r->stats.cycle_ms;
	log_debug("reconciler: poll %" PRIu64 ": %d live attempt(s), %d "
	    "list call(s), %.1f ms", r->cycle, r->nlive, polls,
	    r->stats.cycle_ms);
}

static void
rec_on_timer(uv_timer_t *t)
{
	struct reconcile	*r = t->data;
	const struct conf	*conf = cloud_conf(r->cloud);

	if (r->closing)
		return;
	rec_cycle(r);
	(void)uv_timer_start(&r->timer, rec_on_timer,
	    (uint64_t)(conf->poll_interval > 0 ? conf->poll_interval : 15) *
	    1000, 0);
}

void
reconcile_poll_now(struct reconcile *r)
{
	if (r->closing || !r->started)
		return;
	(void)uv_timer_start(&r->timer, rec_on_timer, 0, 0);
}

/* ---------------------------------------------------------------- */
/* The scheduler's side.					    */

void
reconcile_track(struct reconcile *r, const struct store_attempt *a,
    const struct store_job *job, json_t *spec)
{
	struct rec_entry	*e;

	if (r->closing)
		return;
	e = rec_add(r, a, job, spec);
	e->in_flight = 1;
}

void
reconcile_launched(struct reconcile *r, int64_t attempt_id,
    const char *cloud_id)
{
	struct rec_entry	*e;
	struct store_job	*j = NULL;

	if (r->closing || (e = rec_find_id(r, attempt_id)) == NULL)
		return;
	e->in_flight = 0;
	if (e->a->state == ATTEMPT_LAUNCHING)
		e->a->state = ATTEMPT_PENDING;
	if (cloud_id != NULL && e->a->cloud_id == NULL) {
		free(e->cloud_id);
		e->cloud_id = xstrdup(cloud_id);
	}
	e->missed = 0;
	e->since_gen = r->gen;
	if (!e->cancel_wanted && store_job_get(r->store, e->a->job_id, &j,
	    NULL) == 0) {
		if (j->state == JOB_CANCELLING)
			e->cancel_wanted = 1;
		store_job_free(j);
	}
	if (e->cancel_wanted)
		rec_cancel_start(e);
}

void
reconcile_untrack(struct reconcile *r, int64_t attempt_id)
{
	struct rec_entry	*e;

	if ((e = rec_find_id(r, attempt_id)) != NULL)
		rec_remove(e);
}

void
reconcile_get_stats(struct reconcile *r, struct reconcile_stats *ret)
{
	*ret = r->stats;
	ret->live = r->nlive;
}

/* ---------------------------------------------------------------- */
/* Start: load, repair, poll.					    */

struct rec_load {
	struct store_attempt	**v;
	size_t			  n, cap;
};

static int
rec_on_live(const struct store_attempt *a, void *arg)
{
	struct rec_load	*l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n++] = store_attempt_copy(a);
	return 0;
}

struct rec_ids {
	int64_t		*v;
	size_t		 n, cap;
	int64_t		 last;
	int		*states;
};

static int
rec_on_cloud_job(const struct store_job *j, void *arg)
{
	struct rec_ids	*ids = arg;

	if (ids->n == ids->cap) {
		ids->cap = ids->cap ? ids->cap * 2 : 64;
		ids->v = xreallocarray(ids->v, ids->cap, sizeof *ids->v);
		ids->states = xreallocarray(ids->states, ids->cap,
		    sizeof *ids->states);
	}
	ids->v[ids->n] = j->id;
	ids->states[ids->n++] = j->state;
	ids->last = j->id;
	return 0;
}

/* Jobs the store has in the cloud states with no live attempt. */
static int
rec_repair_jobs(struct reconcile *r, char **cause)
{
	struct store_filter	 f;
	struct rec_ids		 ids;
	size_t			 i;
	int			 more = 1, rc;

	memset(&f, 0, sizeof f);
	memset(&ids, 0, sizeof ids);
	f.states = JOB_MASK_CLOUD | JOB_MASK(JOB_CANCELLING);
	while (more) {
		rc = store_job_list(r->store, &f, ids.last, 1000,
		    rec_on_cloud_job, &ids, &more, cause);
		if (rc < 0) {
			free(ids.v);
			free(ids.states);
			return rc;
		}
	}
	for (i = 0; i < ids.n; i++) {
		if (rec_find_job(r, ids.v[i]) != NULL)
			continue;
		if (ids.states[i] == JOB_CANCELLING)
			(void)rec_job_move(r, ids.v[i], JOB_MASK(
			    JOB_CANCELLING), JOB_CANCELLED, "cancelled; "
			    "nothing was in the cloud", NULL);
		else {
			log_info("job %" PRId64 ": %s with no live attempt "
			    "after a restart; queueing it again", ids.v[i],
			    job_state_name(ids.states[i]));
			(void)rec_job_move(r, ids.v[i], JOB_MASK_CLOUD,
			    JOB_QUEUED, "queued again after a restart: no "
			    "attempt was in the cloud", NULL);
		}
	}
	free(ids.v);
	free(ids.states);
	return 0;
}

int
reconcile_start(struct reconcile *r, char **cause)
{
	struct rec_load		 l;
	struct rec_entry	*e;
	struct store_job	*j;
	json_t			*spec;
	char			*why = NULL, *msg;
	size_t			 i;
	int			 rc;

	memset(&l, 0, sizeof l);
	if ((rc = store_attempt_list_live(r->store, rec_on_live, &l,
	    cause)) < 0)
		return rc;
	for (i = 0; i < l.n; i++) {
		j = NULL;
		if (store_job_get(r->store, l.v[i]->job_id, &j, &why) < 0) {
			log_warnx("attempt %d of job %" PRId64 ": %s",
			    l.v[i]->number, l.v[i]->job_id, why);
			free(why);
			why = NULL;
			store_attempt_free(l.v[i]);
			continue;
		}
		spec = json_loads(j->spec != NULL ? j->spec : "", 0, NULL);
		e = rec_add(r, l.v[i], j, spec);
		if (e->prov == NULL)
			log_warnx("job %" PRId64 ": attempt %d runs on %s, "
			    "which gpuqd.conf no longer enables; it is not "
			    "watched", j->id, l.v[i]->number,
			    l.v[i]->provider);
		switch (j->state) {
		case JOB_HELD:
		case JOB_QUEUED:
			/* Written by a gpuqd that recorded the attempt and
			 * the job's move in two transactions, and crashed
			 * between them: finish that move. */
			msg = xprintf("attempt %d was being launched when "
			    "gpuqd stopped", l.v[i]->number);
			(void)rec_job_move(r, j->id, JOB_MASK(JOB_HELD) |
			    JOB_MASK(JOB_QUEUED), JOB_LAUNCHING, msg, NULL);
			free(msg);
			break;
		case JOB_CANCELLING:
			e->cancel_wanted = 1;
			break;
		case JOB_SUCCEEDED:
		case JOB_FAILED:
		case JOB_CANCELLED:
			e->cancel_wanted = 1;
			break;
		}
		json_decref(spec);
		store_job_free(j);
		store_attempt_free(l.v[i]);
	}
	free(l.v);
	if ((rc = rec_repair_jobs(r, cause)) < 0)
		return rc;
	if (r->nlive > 0)
		log_info("reconciler: %d live attempt(s) to check with the "
		    "cloud", r->nlive);
	r->started = 1;
	(void)uv_timer_start(&r->timer, rec_on_timer, 0, 0);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Life.							    */

struct reconcile *
reconcile_new(struct cloud *cloud, struct sched *sched)
{
	struct reconcile	*r;

	r = xcalloc(1, sizeof *r);
	r->cloud = cloud;
	r->store = cloud_store(cloud);
	r->sched = sched;
	TAILQ_INIT(&r->all);
	LIST_INIT(&r->groups);
	r->refs = 1;			/* the timer */
	if (uv_timer_init(cloud_loop(cloud), &r->timer) != 0)
		fatalx("reconciler: cannot make its timer");
	r->timer.data = r;
	return r;
}

static void
rec_free_orphan(void *p)
{
	struct rec_orphan	*o = p;

	free(o->name);
	free(o);
}

static void
rec_unref(struct reconcile *r)
{
	struct rec_group	*g;
	struct rec_entry	*e;

	if (--r->refs > 0)
		return;
	while ((e = TAILQ_FIRST(&r->all)) != NULL)
		rec_remove(e);
	while ((g = LIST_FIRST(&r->groups)) != NULL) {
		LIST_REMOVE(g, link);
		free(g);
	}
	tdestroy(r->orphans, rec_free_orphan);
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
