/*
 * sched.c: the scheduler (sched.h). When a pass runs, what it reads
 * once, the jobs it remembers between passes, and handing the attempts
 * it chose to attempt.c. What each way costs is sched-offer.c's, which
 * job gets which room and why the rest wait sched-place.c's.
 *
 * A pass, from its one timer (OpenSMTPD scheduler.c's shape):
 *
 *   1. quotas older than [scheduler] quota_ttl are refreshed (the pass
 *      goes on when the refresh calls back, or after SCHED_QUOTA_WAIT_MS
 *      on what is known);
 *   2. the runnable set, kept between passes in priority order, FIFO
 *      within a priority, is brought up to date: only the jobs that
 *      moved into or out of the queue, were submitted or left their
 *      backoff are read (sched_set_update(); whole when stale). Each
 *      job's spec was parsed once, when it was first seen, into its
 *      SHAPE (sched-offer.c); equal shapes are one;
 *   3. each shape whose inputs moved gets its offers ranked by expected
 *      cost again (sched_offer_build(), on a struct sched_market this
 *      file reads: zones, cool-downs, Spot history, prices, quota
 *      metrics; sched_shape_stamp() says whether they moved); the rest
 *      keep theirs and only get this pass's quota buckets;
 *   4. each job is placed (sched_place(): its shape's first offer within
 *      its limits with room, claims, backfill); a waiting job whose
 *      shape already found nothing and whose stored why is the shape's
 *      is settled from its item alone (doc/DESIGN.md "The pass");
 *   5. the chosen offer's quota is reserved and the attempt handed to
 *      attempt.c (attempt_launch), which commits it and calls the
 *      provider; a job that found nothing gets its why, all of them
 *      written in one transaction at the end of the pass.
 *
 * The state (enum sched_state, SCHED_S_*) says what the scheduler is
 * doing now; these are its only transitions:
 *
 *   NEW --sched_start()--> UNREADY --sched_ready()--> UNPRICED
 *   NEW --sched_ready()--> PRIMED --sched_start()--> UNPRICED
 *      (the reconciler may finish its first pass before the start)
 *   UNPRICED --timer--> PRICE_WAIT, when the catalog is being read,
 *      else on as from IDLE
 *   PRICE_WAIT --catalog read, or SCHED_QUOTA_WAIT_MS--> on as from IDLE
 *   IDLE --timer--> QUOTA_WAIT, when a quota refresh starts, else PASS
 *   QUOTA_WAIT --refresh ended, or SCHED_QUOTA_WAIT_MS--> PASS
 *   PASS --sched_wake(), or the launch burst spent--> PASS_AGAIN
 *   PASS --end--> IDLE, the timer at the next due time
 *   PASS_AGAIN --end--> IDLE, the timer at the pacing gap
 *   any --sched_close()--> CLOSED
 *
 * A refresh whose wait timed out still calls back later (SCHED_OWE_*,
 * counted in refs too): its end runs a pass, and passes meanwhile do
 * not start another.
 *
 * Pacing: passes woken by events (submits, ended attempts) start no
 * sooner than SCHED_GAP_FACTOR times the last pass's length after it, so
 * a storm of submits over a long queue costs a bounded share of the
 * loop; launches are SCHED_LAUNCH_BURST per pass, then another pass.
 *
 * Launch results are not the scheduler's: attempt.c owns the attempt
 * from attempt_launch() on and decides what the cloud's answer means
 * (its table of legal changes, doc/DESIGN.md "What an answer of the
 * cloud means"). It tells the scheduler, through the struct
 * attempt_listener registered in sched_set_attempts(), what the next
 * passes must know: a job's launch errors in a row (for the backoff),
 * the places a job should avoid for a while, the zones a stockout named
 * as available, and when to pass again.
 *
 * Knows the store, quotas and prices, the cloud (cloud.h) and attempt.h;
 * nothing of HTTP or of one API's JSON, nothing of the reconciler.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "common/clock.h"
#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/cost.h"
#include "daemon/sched.h"
#include "daemon/sched-deadline.h"
#include "daemon/sched-gate.h"
#include "daemon/sched-move.h"
#include "daemon/sched-offer.h"
#include "daemon/sched-place.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/price.h"
#include "providers/gcp/quota.h"
#include "providers/gcp/reservation.h"
#include "providers/provider.h"
#include "store/store.h"

#define SCHED_LAUNCH_BURST	32	/* launches per pass; then another */
#define SCHED_IDLE_SEC		30	/* re-pass at least this often when
					   jobs wait in backoff */
#define SCHED_HISTORY_SEC	300	/* re-read Spot history this often */
#define SCHED_EVICT_SEC		600	/* forget jobs unseen this long */
#define SCHED_MAX_ZONES		512	/* zones read per GPU */
#define SCHED_QUOTA_BACKOFF	10	/* no quota refresh this long after a
					   failed one */
#define SCHED_QUOTA_WAIT_MS	5000	/* a pass waits this long at most for
					   a quota refresh, then runs on
					   what is known */
#define SCHED_GAP_FACTOR	4	/* a pass woken by events starts no
					   sooner than this many times the
					   last one's length after it */
#define SCHED_GAP_MAX_MS	1000
#define SCHED_TOUCH_MAX		4096	/* moves since the last pass past
					   which the set is read whole */
#define SCHED_LIVE_MAX		64	/* whys kept with their live counts */

/* What the scheduler is doing now (the transitions: top of this file). */
enum sched_state {
	SCHED_S_NEW,		/* made; no pass before start and ready */
	SCHED_S_PRIMED,		/* ready (reconciled), not yet started */
	SCHED_S_UNREADY,	/* started; no pass until ready */
	SCHED_S_UNPRICED,	/* the first pass reads the catalog first */
	SCHED_S_PRICE_WAIT,	/* ... and waits for it, quota_wait_end */
	SCHED_S_IDLE,		/* between passes; the timer holds the next */
	SCHED_S_QUOTA_WAIT,	/* a pass waits for quotas, quota_wait_end */
	SCHED_S_PASS,		/* a pass runs */
	SCHED_S_PASS_AGAIN,	/* ... and another is due right after it */
	SCHED_S_CLOSED,		/* sched_close(): nothing more */
};

/* Refreshes whose callbacks are still to come (struct sched owe). */
#define SCHED_OWE_QUOTA		0x1
#define SCHED_OWE_PRICE		0x2

/* A queued job waiting out its backoff: runnable at AT. */
struct sched_later {
	int64_t			 id;
	int64_t			 at;
};

/* A runnable job: the set, kept between passes (doc/DESIGN.md "The
 * pass"), by priority desc, then id. */
struct sched_item {
	struct sched_job	*job;
	int			 priority;
	unsigned		 flags;		/* SCHED_I_* */
	uint64_t		 why_hash;	/* of the stored why */
	double			 cost_usd;
	/*
	 * Copies of the job's, so that a pass over jobs whose shape has
	 * already found nothing reads this array alone, in order, and
	 * not 100,000 struct sched_job scattered on the heap.
	 */
	int64_t			 id;
	struct sched_shape	*shape;
	double			 max_hourly, max_total, hours;
	int			 worn_at;	/* interruptions at which the
						   job is parsed again (Spot
						   worn out); 0 never */
};
#define SCHED_I_GATED	0x1	/* deps or an array's parallelism: the
				   long way */
#define SCHED_I_HINTED	0x2	/* may have hints in force: the long way;
				   cleared by a pass that finds none */
#define SCHED_I_TAKEN	0x4	/* a whole read found it again (only on
				   the set it replaces) */

struct sched {
	int64_t			 move_at;	/* next look at moves (gpuqd
					   s; sched-move.c) */
	int64_t			*looked;	/* running jobs a look made an
						   entry for: freed after it */
	size_t			 nlooked, looked_cap;
	struct cloud		*cloud;		/* borrowed */
	struct store		*store;		/* borrowed */
	struct attempts		*att;		/* borrowed or NULL */
	int64_t			 why_said;	/* job whose why a launch's
						   answer wrote, this call */
	uv_timer_t		 timer;		/* timer.data == this */
	char			*blocked;	/* sched_block(): why nothing
						   launches, or NULL */
	enum sched_state	 state;
	unsigned		 owe;		/* SCHED_OWE_* */
	int			 refs;		/* timer + refreshes owed */
	uint64_t		 quota_wait_end; /* loop ms: stop waiting */
	uint64_t		 last_end;	/* loop ms a pass ended */
	int64_t			 quota_retry_at; /* no refresh before, after a
						   failed one */
	uint64_t		 quota_stamp;	/* quota_rounds() the last pass
						   saw */
	char			*quota_error;	/* last refresh failure */
	unsigned		 gen;		/* pass number */
	int64_t			 wake_at;	/* earliest requested, 0 none */
	int64_t			 due;		/* the timer's target */

	/*
	 * The runnable set, kept between passes: read whole from the
	 * store when STALE (the first pass, another writer, a failed
	 * write), else brought up to date from the jobs the store's
	 * watcher saw move into or out of the queue (TOUCHED), the jobs
	 * submitted since (id > MAX_ID) and the backoffs that ended.
	 */
	int			 stale;
	int64_t			 max_id;	/* highest job id read */
	int64_t			 data_stamp;	/* store_foreign_write() */
	size_t			 read_whole;	/* rows read with their spec,
						   this pass */
	int64_t			*touched;
	size_t			 ntouched, captouched;
	struct sched_later	*later;		/* queued, in backoff */
	size_t			 nlater, caplater;

	void			*jobs;		/* tsearch tree of sched_job */
	struct sched_jobs	 job_list;
	size_t			 njobs;
	void			*shapes;	/* tsearch tree of sched_shape */
	size_t			 nshapes;

	/*
	 * What shapes' offers are built on, digested (sched_shape_stamp()):
	 * the market's global part, once a pass; the quota readings' shape
	 * (which metrics exist, zones), again only after a refresh: one
	 * told by quota_rounds(), not by the wall clock's second, or a
	 * refresh ending in the second of the last went unseen.
	 */
	uint64_t		 mdigest;
	uint64_t		 qdigest_at;	/* quota_rounds() */
	uint64_t		 qdigest;
	struct sched_zdigest {
		const struct gpu_type *gpu;
		uint64_t	 at;		/* quota_rounds() */
		uint64_t	 digest;
	}			*zdig;
	size_t			 nzdig;

	struct sched_hist	*hist;
	size_t			 nhist;
	int64_t			 hist_at;	/* when read; 0: re-read */
	/* Places that refused, remembered past their cool-downs. */
	struct sched_strike	*strike;
	size_t			 nstrike, capstrike;

	/* What a pass reads once (sched_ctx_begin()). */
	struct sched_seller	*sellers;
	size_t			 nsellers;
	struct sched_market	 market;

	struct sched_ctx	 ctx;
	struct sched_item	*items;
	size_t			 nitems, capitems;
	struct sched_item	*spare;		/* the set before the last
						   whole read: the next
						   one's array */
	size_t			 capspare;
	/*
	 * The walk's order when jobs with a deadline are queued
	 * (sched_walk_order()): the set's indices, least slack first
	 * within a priority.
	 */
	int			 dl_jobs;	/* live ones, the last look */
	struct sched_walk	*walk;
	size_t			 capwalk;
	struct quota_zone	*zones;		/* SCHED_MAX_ZONES */
	struct sched_resv	*resv;		/* a shape's */
	size_t			 nresv, capresv;
	struct sched_way	*wscratch;	/* a shape's ways, before a
						   catalog read */
	size_t			 capwscratch;

	struct sched_gate	 gate;		/* deps, parallelism: a pass */

	/* Whys to write at the end of the pass, in one transaction. */
	int64_t			*why_ids;
	char		       **why_texts;
	size_t			 nwhy, capwhy;

	/*
	 * Each stored why the passes gave with counts left out, and its
	 * text with the counts they saw (sched_why_live()): a handful,
	 * one per verdict, not one per job.
	 */
	struct sched_live {
		char		*why;		/* as stored */
		size_t		 len;
		char		*live;		/* with the counts */
		unsigned	 gen;		/* pass that gave it */
	}			*live;
	size_t			 nlive;

	struct sched_stats	 stats;
};

static void	sched_pass(struct sched *);
static void	sched_arm(struct sched *, int64_t delay_ms);
static void	sched_unref(struct sched *);

static int
sched_now_cmp(const void *a, const void *b)
{
	const struct sched_job	*x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

static int
sched_shape_cmp(const void *a, const void *b)
{
	const struct sched_shape	*x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* Is a pass running (whys go to its batch, wakes to its end)? */
static int
sched_in_pass(const struct sched *s)
{
	return s->state == SCHED_S_PASS || s->state == SCHED_S_PASS_AGAIN;
}

/* The service whose quota a provider's launch draws on. */
static enum gcp_service
sched_quota_service(const struct provider *p)
{
	return (enum gcp_service)p->quota_service;
}

/* The service whose prices a provider's launch pays. */
static enum gcp_service
sched_price_service(const struct provider *p)
{
	return (enum gcp_service)p->price_service;
}

/* ---------------------------------------------------------------- */
/* Shapes and the job memory.					    */

/*
 * The shape of normalized SPEC: found or made, with a reference for
 * the caller. NULL and *why if the spec cannot be run at all.
 */
static struct sched_shape *
sched_shape_get(struct sched *s, json_t *spec, char **why)
{
	struct sched_shape	*sh, **found;

	if ((sh = sched_offer_shape_new(spec, why)) == NULL)
		return NULL;
	found = tfind(sh, &s->shapes, sched_shape_cmp);
	if (found != NULL) {
		sched_offer_shape_free(sh);
		(*found)->refs++;
		return *found;
	}
	if (tsearch(sh, &s->shapes, sched_shape_cmp) == NULL)
		fatalx("sched: out of memory");
	s->nshapes++;
	sh->refs = 1;
	return sh;
}

static void
sched_shape_unref(struct sched *s, struct sched_shape *sh)
{
	if (sh == NULL || --sh->refs > 0)
		return;
	(void)tdelete(sh, &s->shapes, sched_shape_cmp);
	s->nshapes--;
	sched_offer_shape_free(sh);
}

static double
sched_spec_number(json_t *spec, const char *key)
{
	json_t	*v = json_object_get(spec, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* Job J's limits from its SPEC. */
static void
sched_job_limits(struct sched_job *j, json_t *spec)
{
	j->max_hourly = sched_spec_number(spec, "max_hourly_usd");
	j->max_total = sched_spec_number(spec, "max_total_usd");
	j->hours = sched_spec_number(spec, "estimated_hours");
	if (!(j->hours > 0))
		j->hours = 1;
}

/* Does SPEC insist on Spot (spot: require)? */
static int
sched_spot_required(json_t *spec)
{
	const char	*v = json_string_value(json_object_get(spec, "spot"));

	return v != NULL && strcmp(v, "require") == 0;
}

/*
 * A deadline job short of slack may no longer use Spot (doc/DESIGN.md
 * "Deadlines"): SPEC (its parsed copy) is made to allow reserved
 * capacity, then flex-start if its wait (flex_wait) fits in the slack
 * it has left, then standard -- all not preempted; the offers rank
 * them by price, and reserved is free. The job is read again (its cache
 * dropped) when it is marked, so the slack is the one it was marked at.
 */
static void
sched_deadline_kinds(struct sched *s, const struct store_job *row,
    json_t *spec, int worn)
{
	json_t		*caps = json_object_get(spec, "capacity"), *v, *keep;
	int64_t		 slack = 0, wait;
	size_t		 i;
	int		 flex;

	wait = json_integer_value(json_object_get(spec, "flex_wait"));
	if (wait <= 0)
		wait = CAPACITY_FLEX_WAIT_DEFAULT;
	flex = sched_deadline_slack(s->store, cloud_conf(s->cloud), row,
	    s->ctx.now, &slack) == 0 && wait < slack;
	/*
	 * A machine type Google does not sell on demand (a3-highgpu-1g)
	 * has no standard capacity to fall back on: flex-start, late or
	 * not, is all that is left. Without it the job waited for ever.
	 */
	if (gpu_machine_spot_only(json_string_value(json_object_get(spec,
	    "machine_type"))))
		flex = 1;
	/* Worn out on Spot, with no deadline to be late for. */
	if (worn && row->deadline == 0)
		flex = 1;
	keep = json_array();
	if (json_is_array(caps)) {
		json_array_foreach(caps, i, v) {
			if (capacity_lookup(json_string_value(v)) ==
			    CAPACITY_SPOT || (!flex && capacity_lookup(
			    json_string_value(v)) == CAPACITY_FLEX))
				continue;
			json_array_append(keep, v);
		}
	} else {
		json_array_append_new(keep, json_string("reserved"));
		if (flex)
			json_array_append_new(keep, json_string("flex"));
		json_array_append_new(keep, json_string("standard"));
	}
	/*
	 * Spot and a flex-start that may not start in time were all the
	 * job allows: flex-start, late or not, is what is left of them.
	 */
	if (json_array_size(keep) == 0)
		json_array_append_new(keep, json_string("flex"));
	(void)json_object_set_new(spec, "capacity", keep);
	(void)json_object_set_new(spec, "spot", json_string("never"));
}

/*
 * The interruptions at which a job whose max_interruptions is MAX leaves
 * Spot for capacity that is not preempted (doc/DESIGN.md "Leaving Spot
 * after many interruptions"): three quarters of the budget, so that it
 * finishes instead of failing at MAX; 0 (never) for a budget under
 * SCHED_WORN_MIN, which is the user's choice to fail fast.
 */
int
sched_spot_worn_at(int max)
{
	if (max < SCHED_WORN_MIN)
		return 0;
	return (max * 3 + 3) / 4;
}

static void	sched_job_free(struct sched *, struct sched_job *);
static void	sched_set_remove(struct sched *, struct sched_job *);

/* The cached job for row J, made on first sight (the spec parsed once);
 * made again when Spot has worn it out since. */
static struct sched_job *
sched_job_get(struct sched *s, const struct store_job *row)
{
	struct sched_job	 key, *j, **found;
	json_t			*spec;
	json_error_t		 err;
	int			 worn;

	key.id = row->id;
	found = tfind(&key, &s->jobs, sched_now_cmp);
	if (found != NULL) {
		j = *found;
		if (j->spot_worn || j->spot_worn_at == 0 ||
		    row->interruptions < j->spot_worn_at)
			return j;
		sched_job_free(s, j);
	}
	j = xcalloc(1, sizeof *j);
	j->id = row->id;
	spec = json_loads(row->spec != NULL ? row->spec : "", 0, &err);
	if (spec == NULL)
		j->bad = xprintf("the stored spec is not JSON: %s", err.text);
	else {
		j->spot_worn_at = sched_spot_worn_at((int)json_integer_value(
		    json_object_get(spec, "max_interruptions")));
		worn = j->spot_worn_at > 0 &&
		    row->interruptions >= j->spot_worn_at;
		if (worn && !sched_spot_required(spec)) {
			j->spot_worn = 1;
			log_info("job %" PRId64 ": %d interruptions of "
			    "max_interruptions %d: no more Spot capacity for "
			    "this job", row->id, row->interruptions,
			    (int)json_integer_value(json_object_get(spec,
			    "max_interruptions")));
		}
		if ((row->deadline_safe || j->spot_worn) &&
		    !sched_spot_required(spec))
			sched_deadline_kinds(s, row, spec, j->spot_worn);
		j->shape = sched_shape_get(s, spec, &j->bad);
		sched_job_limits(j, spec);
		sched_gate_parse(&j->gate, row, spec);
		json_decref(spec);
	}
	if (tsearch(j, &s->jobs, sched_now_cmp) == NULL)
		fatalx("sched: out of memory");
	TAILQ_INSERT_TAIL(&s->job_list, j, entry);
	s->njobs++;
	return j;
}

static void
sched_job_free(struct sched *s, struct sched_job *j)
{
	sched_set_remove(s, j);
	(void)tdelete(j, &s->jobs, sched_now_cmp);
	TAILQ_REMOVE(&s->job_list, j, entry);
	s->njobs--;
	sched_shape_unref(s, j->shape);
	sched_gate_job_done(&j->gate);
	free(j->bad);
	free(j);
}

/*
 * Forget jobs not runnable for a while (ended, held): longer than any
 * backoff, so a job waiting out its retry delay keeps its hints. The
 * list is in order of last sight, oldest first.
 */
static void
sched_evict(struct sched *s, int64_t now)
{
	struct sched_job	*j;
	int64_t			 old;

	old = now - SCHED_EVICT_SEC - cloud_conf(s->cloud)->backoff_max;
	while ((j = TAILQ_FIRST(&s->job_list)) != NULL && j->last_seen < old)
		sched_job_free(s, j);
}

static struct sched_job *
sched_job_find(struct sched *s, int64_t id)
{
	struct sched_job	key, **found;

	key.id = id;
	found = tfind(&key, &s->jobs, sched_now_cmp);
	return found != NULL ? *found : NULL;
}

/* ---------------------------------------------------------------- */
/* The runnable set (doc/DESIGN.md "The pass").			    */

/* Index in the set of where priority PRIO and ID is or would go. */
static size_t
sched_set_index(const struct sched *s, int prio, int64_t id)
{
	const struct sched_item	*it;
	size_t			 lo = 0, hi = s->nitems, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		it = &s->items[mid];
		if (it->priority > prio || (it->priority == prio &&
		    it->job->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* J's item in the set, or NULL. */
static struct sched_item *
sched_set_item(struct sched *s, const struct sched_job *j)
{
	size_t	i;

	if (!j->in_set)
		return NULL;
	i = sched_set_index(s, j->priority, j->id);
	return i < s->nitems && s->items[i].job == j ? &s->items[i] : NULL;
}

/* Take J out of the set (it left the queue, or is read again). */
static void
sched_set_remove(struct sched *s, struct sched_job *j)
{
	struct sched_item	*it;

	if (!j->in_set)
		return;
	if ((it = sched_set_item(s, j)) != NULL) {
		memmove(it, it + 1, (size_t)(s->items + s->nitems - it - 1) *
		    sizeof *it);
		s->nitems--;
	} else
		s->stale = 1;	/* cannot be: read it all again */
	j->in_set = 0;
	j->last_seen = s->ctx.now;
	TAILQ_INSERT_TAIL(&s->job_list, j, entry);
}

/* J was given hints (places to avoid or prefer): its item goes the
 * long way until a pass finds them over. */
static void
sched_set_hinted(struct sched *s, struct sched_job *j)
{
	struct sched_item	*it;

	if ((it = sched_set_item(s, j)) != NULL)
		it->flags |= SCHED_I_HINTED;
}

/* Forget job ID's backoff entry, if any. */
static void
sched_later_drop(struct sched *s, int64_t id)
{
	size_t	i;

	for (i = 0; i < s->nlater; i++)
		if (s->later[i].id == id) {
			s->later[i] = s->later[--s->nlater];
			return;
		}
}

static void
sched_later_add(struct sched *s, int64_t id, int64_t at)
{
	if (s->nlater == s->caplater) {
		s->caplater = s->caplater ? s->caplater * 2 : 16;
		s->later = xreallocarray(s->later, s->caplater,
		    sizeof *s->later);
	}
	s->later[s->nlater].id = id;
	s->later[s->nlater++].at = at;
}

/*
 * Put queued job ROW in the set, or among those in backoff; APPEND: the
 * caller reads in the set's order (a whole read), so it goes last.
 */
static void
sched_set_add(struct sched *s, const struct store_job *row, int append)
{
	struct sched_item	*it;
	struct sched_job	*j;
	size_t			 i;

	if (row->id > s->max_id)
		s->max_id = row->id;
	if (row->state != JOB_QUEUED)
		return;
	if (row->not_before > s->ctx.now) {
		sched_later_add(s, row->id, row->not_before);
		return;
	}
	j = sched_job_get(s, row);
	if (j->in_set)
		return;
	if (s->nitems == s->capitems) {
		s->capitems = s->capitems ? s->capitems * 2 : 256;
		s->items = xreallocarray(s->items, s->capitems,
		    sizeof *s->items);
	}
	j->priority = row->priority;
	i = append ? s->nitems : sched_set_index(s, j->priority, j->id);
	memmove(&s->items[i + 1], &s->items[i],
	    (s->nitems - i) * sizeof s->items[0]);
	s->nitems++;
	it = &s->items[i];
	it->job = j;
	it->priority = row->priority;
	it->why_hash = sched_hash(row->why);
	it->cost_usd = row->cost_usd;
	it->id = j->id;
	it->shape = j->shape;
	it->max_hourly = j->max_hourly;
	it->max_total = j->max_total;
	it->hours = j->hours;
	it->worn_at = j->spot_worn ? 0 : j->spot_worn_at;
	it->flags = sched_place_hinted(j, s->ctx.now) ? SCHED_I_HINTED : 0;
	/* A task of an array without a parallelism is held back only if
	 * its array is doomed this pass (checked at the walk). */
	if (j->gate.ndeps > 0 || (j->gate.array_id != 0 &&
	    j->gate.parallelism > 0))
		it->flags |= SCHED_I_GATED;
	j->in_set = 1;
	TAILQ_REMOVE(&s->job_list, j, entry);
}

/* Job ID moved into or out of the queue: read it again next pass. */
static void
sched_touch(struct sched *s, int64_t id)
{
	if (s->ntouched == s->captouched) {
		if (s->ntouched >= SCHED_TOUCH_MAX) {
			s->stale = 1;
			return;
		}
		s->captouched = s->captouched ? s->captouched * 2 : 64;
		s->touched = xreallocarray(s->touched, s->captouched,
		    sizeof *s->touched);
	}
	s->touched[s->ntouched++] = id;
}

/* The store's watcher: every committed move of every job. */
static void
sched_on_move(const struct store_move *m, void *arg)
{
	if (m->from == JOB_QUEUED || m->to == JOB_QUEUED)
		sched_touch(arg, m->job_id);
}

static int
sched_on_row(const struct store_job *row, void *arg)
{
	sched_set_add(arg, row, 0);
	return 0;
}

static int
sched_on_row_append(const struct store_job *row, void *arg)
{
	sched_set_add(arg, row, 1);
	return 0;
}

/* Read job ID again: in the set if queued and due. */
static void
sched_set_reread(struct sched *s, int64_t id)
{
	struct sched_job	*j = sched_job_find(s, id);
	struct store_job	*row = NULL;
	char			*cause = NULL;
	int			 rc;

	if (j != NULL)
		sched_set_remove(s, j);
	sched_later_drop(s, id);
	rc = store_job_get(s->store, id, &row, &cause);
	if (rc == 0)
		sched_set_add(s, row, 0);
	else if (rc != -ENOENT) {
		log_warnx("scheduler: cannot read job %" PRId64 ": %s", id,
		    cause);
		s->stale = 1;
	}
	free(cause);
	store_job_free(row);
}

/* Job J leaves the set without a lookup of its item (a whole read
 * replaces the set). */
static void
sched_set_detach(struct sched *s, struct sched_job *j)
{
	j->in_set = 0;
	j->last_seen = s->ctx.now;
	TAILQ_INSERT_TAIL(&s->job_list, j, entry);
}

/*
 * Stored whys already hashed in a whole read: the queue holds a handful
 * of distinct ones (one per shape's verdict), and comparing a row's to
 * a copy costs less than hashing it (doc/DESIGN.md "The pass").
 */
#define SCHED_WHYC_SLOTS	16
#define SCHED_WHYC_LEN		192
struct sched_whyc {
	size_t			 len;		/* 0: empty */
	uint64_t		 hash;
	char			 text[SCHED_WHYC_LEN];
};

/* A whole read of the queue against the set it replaces, OLD. */
struct sched_merge {
	struct sched		*s;
	struct sched_item	*old;
	size_t			 nold, next;
	size_t			 whole;		/* rows read whole */
	struct sched_whyc	 whyc[SCHED_WHYC_SLOTS];
};

/* sched_hash_n() of the N bytes at WHY, through MG's cache. */
static uint64_t
sched_merge_why_hash(struct sched_merge *mg, const char *why, size_t n)
{
	struct sched_whyc	*c;
	uint64_t		 a = 0, b = 0;

	if (why == NULL)
		return 0;
	if (n == 0 || n > SCHED_WHYC_LEN)
		return sched_hash_n(why, n);
	memcpy(&a, why, n < 8 ? n : 8);
	memcpy(&b, why + n - (n < 8 ? n : 8), n < 8 ? n : 8);
	c = &mg->whyc[((a ^ (b * 31) ^ n) * 0x9e3779b97f4a7c15ULL) >> 60];
	if (c->len == n && memcmp(c->text, why, n) == 0)
		return c->hash;
	c->len = n;
	memcpy(c->text, why, n);
	c->hash = sched_hash_n(why, n);
	return c->hash;
}

/* Does item IT come before priority PRIO and ID in the set's order? */
static int
sched_item_before(const struct sched_item *it, int prio, int64_t id)
{
	return it->priority > prio || (it->priority == prio && it->id < id);
}

/* J's item in the set being replaced, or NULL. */
static struct sched_item *
sched_merge_old(struct sched_merge *mg, const struct sched_job *j)
{
	size_t	lo = 0, hi = mg->nold, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (sched_item_before(&mg->old[mid], j->priority, j->id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < mg->nold && mg->old[lo].job == j ? &mg->old[lo] : NULL;
}

/*
 * One queued job of a whole read, Q, in the set's order. A job the set
 * held at the same place, not worn out on Spot since, keeps its item:
 * its stored why's hash and cost are taken from Q, and its struct
 * sched_job is not touched (100,000 of them scattered on the heap, and
 * a tree walk to find each, were most of a whole read). Any other job
 * is read whole, as a new one is.
 */
static int
sched_on_queued(const struct store_queued *q, void *arg)
{
	struct sched_merge	*mg = arg;
	struct sched		*s = mg->s;
	struct sched_item	*o = NULL, *it;
	struct sched_job	*j;
	struct store_job	*row = NULL;
	char			*cause = NULL;
	int			 rc;

	if (q->id > s->max_id)
		s->max_id = q->id;
	while (mg->next < mg->nold && sched_item_before(&mg->old[mg->next],
	    q->priority, q->id))
		mg->next++;
	if (mg->next < mg->nold && mg->old[mg->next].id == q->id &&
	    mg->old[mg->next].priority == q->priority)
		o = &mg->old[mg->next++];
	if (q->not_before > s->ctx.now) {
		/* In backoff: its old item, not taken, leaves the set. */
		sched_later_add(s, q->id, q->not_before);
		return 0;
	}
	if (o != NULL && (o->worn_at == 0 || q->interruptions < o->worn_at)) {
		o->flags |= SCHED_I_TAKEN;
		if (s->nitems == s->capitems) {
			s->capitems = s->capitems ? s->capitems * 2 : 256;
			s->items = xreallocarray(s->items, s->capitems,
			    sizeof *s->items);
		}
		it = &s->items[s->nitems++];
		*it = *o;
		it->flags &= ~SCHED_I_TAKEN;
		it->why_hash = sched_merge_why_hash(mg, q->why, q->why_len);
		it->cost_usd = q->cost_usd;
		return 0;
	}
	/* New, moved in the order, or worn out: the long way. */
	if ((j = sched_job_find(s, q->id)) != NULL && j->in_set) {
		if ((o = sched_merge_old(mg, j)) != NULL)
			o->flags |= SCHED_I_TAKEN;
		sched_set_detach(s, j);
	}
	mg->whole++;
	rc = store_job_get(s->store, q->id, &row, &cause);
	if (rc == 0)
		sched_set_add(s, row, 1);
	else if (rc != -ENOENT) {
		log_warnx("scheduler: cannot read job %" PRId64 ": %s", q->id,
		    cause);
		free(cause);
		return rc;
	}
	store_job_free(row);
	return 0;
}

/*
 * Read the queue whole into a set that holds jobs already: from the
 * covering index (store_job_list_queue()), each row merged with the
 * item it had. 0, or -1 and the set is stale again.
 */
static int
sched_set_read_queue(struct sched *s)
{
	struct sched_merge	 mg;
	char			*cause = NULL;
	size_t			 i, cap, oldcap;
	int			 rc;

	memset(&mg, 0, sizeof mg);
	mg.s = s;
	mg.old = s->items;
	mg.nold = s->nitems;
	/*
	 * The new set goes into the array the last whole read left, with
	 * room for some more: a fresh one of 100,000 items faulted in
	 * every page anew, and the first submit after it copied it whole
	 * to grow it.
	 */
	cap = s->nitems + s->nitems / 16 + 256;
	if (s->capspare < cap) {
		free(s->spare);
		s->spare = xreallocarray(NULL, cap, sizeof *s->spare);
		s->capspare = cap;
	}
	oldcap = s->capitems;
	s->items = s->spare;
	s->capitems = s->capspare;
	s->nitems = 0;
	s->spare = NULL;
	s->capspare = 0;
	rc = store_job_list_queue(s->store, sched_on_queued, &mg, &cause);
	/* What was in the set and is not now has left it. */
	for (i = 0; i < mg.nold; i++)
		if (!(mg.old[i].flags & SCHED_I_TAKEN))
			sched_set_detach(s, mg.old[i].job);
	s->spare = mg.old;
	s->capspare = oldcap;
	if (rc < 0) {
		if (cause != NULL)
			log_warnx("scheduler: cannot list the queue: %s",
			    cause);
		free(cause);
		s->stale = 1;
		return -1;
	}
	s->read_whole += mg.whole;
	log_debug("scheduler: read the queue whole: %d queued, %zu read "
	    "whole", rc, mg.whole);
	return 0;
}

/*
 * Bring the set up to date for a pass at CTX's now: whole when stale,
 * else only the jobs that moved, were submitted, or left their backoff.
 * Returns the rows read.
 */
static size_t
sched_set_update(struct sched *s)
{
	struct sched_job	*j;
	char			*cause = NULL;
	size_t			 i, n = 0;
	int64_t			 now = s->ctx.now;
	int			 rc;

	s->read_whole = 0;
	if (store_foreign_write(s->store, &s->data_stamp))
		s->stale = 1;
	if (s->stale && s->nitems > 0) {
		/* The jobs are known: the covering index, merged. */
		s->nlater = 0;
		s->ntouched = 0;
		s->stale = 0;
		(void)sched_set_read_queue(s);
		n = s->nitems + s->nlater;
	} else if (s->stale) {
		/* First sight (a start): every row whole, every spec. */
		for (i = 0; i < s->nitems; i++) {
			j = s->items[i].job;
			j->in_set = 0;
			j->last_seen = now;
			TAILQ_INSERT_TAIL(&s->job_list, j, entry);
		}
		s->nitems = 0;
		s->nlater = 0;
		s->ntouched = 0;
		s->stale = 0;
		if (store_job_list_runnable(s->store, now,
		    sched_on_row_append, s, &cause) < 0 ||
		    store_job_list_later(s->store, now, sched_on_row_append,
		    s, &cause) < 0) {
			log_warnx("scheduler: cannot list the queue: %s",
			    cause);
			free(cause);
			s->stale = 1;
		}
		n = s->nitems + s->nlater;
		s->read_whole = n;
	} else {
		for (i = 0; i < s->ntouched; i++)
			sched_set_reread(s, s->touched[i]);
		n = s->ntouched;
		s->ntouched = 0;
		for (i = 0; i < s->nlater; ) {
			if (s->later[i].at > now) {
				i++;
				continue;
			}
			/* sched_set_reread() drops this entry. */
			sched_set_reread(s, s->later[i].id);
			n++;
		}
		s->read_whole = n;
	}
	/* What was submitted since (and any job with a higher id). */
	if ((rc = store_job_list_after(s->store, s->max_id, sched_on_row, s,
	    &cause)) < 0) {
		log_warnx("scheduler: cannot list new jobs: %s", cause);
		free(cause);
		s->stale = 1;
	} else {
		n += (size_t)rc;
		s->read_whole += (size_t)rc;
	}
	return n;
}

/* ---------------------------------------------------------------- */
/* What a pass reads once: the market.				    */

static int
sched_on_cool(const char *zone, const char *gpu, int spot, int64_t until,
    int strikes, void *arg)
{
	struct sched_ctx	*ctx = arg;
	struct sched_cool	*c;

	if (ctx->ncool == ctx->capcool) {
		ctx->capcool = ctx->capcool ? ctx->capcool * 2 : 16;
		ctx->cool = xreallocarray(ctx->cool, ctx->capcool,
		    sizeof *ctx->cool);
	}
	c = &ctx->cool[ctx->ncool++];
	sched_name(c->zone, zone);
	sched_name(c->gpu, gpu);
	c->spot = spot;
	c->until = until;
	c->strikes = strikes;
	return 0;
}

static int
sched_on_history(const char *provider, const char *region, const char *zone,
    const char *gpu, double hours, int interruptions, void *arg)
{
	struct sched	*s = arg;

	s->hist = sched_offer_hist_add(s->hist, &s->nhist, provider, region,
	    zone, gpu, hours, interruptions);
	return 0;
}

/* Re-read the Spot history when it is old or an attempt has ended. */
static void
sched_history_load(struct sched *s, int64_t now)
{
	char	*cause = NULL;
	size_t	 i;

	if (s->hist_at != 0 && now - s->hist_at < SCHED_HISTORY_SEC)
		return;
	for (i = 0; i < s->nhist; i++)
		free(s->hist[i].key);
	free(s->hist);
	s->hist = NULL;
	s->nhist = 0;
	s->hist_at = now;
	if (store_spot_history(s->store, now - COST_HISTORY_SEC, now,
	    sched_on_history, s, &cause) < 0) {
		log_warnx("scheduler: cannot read the Spot history: %s; "
		    "using the prior", cause);
		free(cause);
	}
}

/*
 * Begin a pass or a plan on CTX: read the cool-downs and the Spot
 * history, forget the buckets, and point market M at what was read
 * (valid until the next sched_ctx_begin() or sched_ctx_done()).
 */
static void
sched_ctx_begin(struct sched *s, struct sched_ctx *ctx,
    struct sched_market *m)
{
	const struct gcp_conf	*gc = gcp_conf(cloud_gcp(s->cloud));
	const struct conf	*conf = cloud_conf(s->cloud);
	const struct provider	*p;
	char			*cause = NULL;
	size_t			 i, np = cloud_nproviders(s->cloud);

	ctx->now = clock_now();
	ctx->quota = gcp_quota(cloud_gcp(s->cloud));
	sched_place_reset(ctx);
	ctx->ncool = 0;
	/*
	 * Cool-downs count in whole seconds: one ends with its "until"
	 * second, not when it starts, so it never lasts less than asked.
	 */
	if (store_cooldown_list(s->store, ctx->now - 1, sched_on_cool, ctx,
	    &cause) < 0) {
		log_warnx("scheduler: cannot read stockout cool-downs: %s",
		    cause);
		free(cause);
	}
	sched_history_load(s, ctx->now);
	s->strike = sched_offer_strikes_note(s->strike, &s->nstrike,
	    &s->capstrike, ctx->cool, ctx->ncool, ctx->now);

	if (np != s->nsellers) {
		s->sellers = xreallocarray(s->sellers, np, sizeof *s->sellers);
		s->nsellers = np;
	}
	for (i = 0; i < np; i++) {
		p = cloud_provider_at(s->cloud, i);
		s->sellers[i].prov = p;
		s->sellers[i].qsvc = sched_quota_service(p);
		s->sellers[i].psvc = sched_price_service(p);
	}
	memset(m, 0, sizeof *m);
	m->sellers = s->sellers;
	m->nsellers = s->nsellers;
	m->regions = gc->regions;
	m->nregions = gc->regions != NULL ? gc->nregions : 0;
	m->cool = ctx->cool;
	m->ncool = ctx->ncool;
	m->hist = s->hist;
	m->nhist = s->nhist;
	m->strike = s->strike;
	m->nstrike = s->nstrike;
	m->now = ctx->now;
	m->prior = conf->preemptions_per_hour;
	m->restart_overhead = conf->restart_overhead;
	m->spot_wait = conf->spot_wait;
	m->zones_error = s->quota_error;
}

/* ---------------------------------------------------------------- */
/* What a shape's offers are built on, digested.		    */

static uint64_t
sched_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t
sched_mix_double(uint64_t h, double d)
{
	uint64_t	v;

	memcpy(&v, &d, sizeof v);
	return sched_mix(h, v);
}

/*
 * The quota readings as far as offers see them: which metrics exist and
 * grant anything (quota_gpu_metric() and quota_cpu_metric() choose by
 * them), not how much is free -- that is the buckets', read each pass.
 * Worked out again only after a refresh.
 */
static uint64_t
sched_quota_digest(struct sched *s)
{
	struct quota	*q = gcp_quota(cloud_gcp(s->cloud));
	struct quota_row r;
	uint64_t	 at = quota_rounds(q);
	size_t		 it = 0;
	uint64_t	 h = 1;

	if (at == s->qdigest_at && s->qdigest != 0)
		return s->qdigest;
	while (quota_next(q, &it, &r) == 1) {
		h = sched_mix(h, (uint64_t)r.service);
		h = sched_mix(h, sched_hash(r.region));
		h = sched_mix(h, sched_hash(r.metric));
		h = sched_mix(h, (uint64_t)(r.known ? 1 : 0) |
		    (r.known && r.limit > 0 ? 2 : 0));
	}
	s->qdigest_at = at;
	s->qdigest = h;
	return h;
}

/* The zones of GPU (quota_zones()), digested once per refresh. */
static uint64_t
sched_zones_digest(struct sched *s, const struct gpu_type *gpu)
{
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	struct sched_zdigest	*z = NULL;
	uint64_t		 at = quota_rounds(q);
	uint64_t		 h = 1;
	size_t			 i;
	int			 n;

	for (i = 0; i < s->nzdig; i++)
		if (s->zdig[i].gpu == gpu) {
			z = &s->zdig[i];
			break;
		}
	if (z != NULL && z->at == at && z->digest != 0)
		return z->digest;
	if (z == NULL) {
		s->zdig = xreallocarray(s->zdig, s->nzdig + 1,
		    sizeof *s->zdig);
		z = &s->zdig[s->nzdig++];
		z->gpu = gpu;
	}
	n = quota_zones(q, NULL, gpu->name, s->zones, SCHED_MAX_ZONES);
	h = sched_mix(h, (uint64_t)(int64_t)n);
	for (i = 0; n > 0 && i < (size_t)n; i++) {
		h = sched_mix(h, sched_hash(s->zones[i].zone));
		h = sched_mix(h, sched_hash(s->zones[i].region));
		h = sched_mix(h, (uint64_t)s->zones[i].max_per_vm);
		h = sched_mix(h, (uint64_t)s->zones[i].up);
	}
	z->at = at;
	z->digest = h;
	return h;
}

/*
 * The part of every shape's inputs the pass reads once (M, just read by
 * sched_ctx_begin()): the providers and regions, the policy's numbers,
 * the quota error and the quota readings' shape. Not the prices: a
 * catalog read reads each shape's ways again and builds the offers of
 * those whose ways it changed (sched_shape_build()).
 */
static uint64_t
sched_market_digest(struct sched *s, const struct sched_market *m)
{
	uint64_t	h = 1;
	size_t		i;

	for (i = 0; i < m->nsellers; i++) {
		h = sched_mix(h, (uint64_t)(uintptr_t)m->sellers[i].prov);
		h = sched_mix(h, (uint64_t)m->sellers[i].qsvc);
		h = sched_mix(h, (uint64_t)m->sellers[i].psvc);
	}
	h = sched_mix(h, (uint64_t)m->nregions);
	for (i = 0; i < m->nregions; i++)
		h = sched_mix(h, sched_hash(m->regions[i]));
	h = sched_mix_double(h, m->prior);
	h = sched_mix_double(h, (double)m->restart_overhead);
	h = sched_mix_double(h, (double)m->spot_wait);
	h = sched_mix(h, sched_hash(m->zones_error));
	h = sched_mix(h, sched_quota_digest(s));
	return h;
}

/*
 * What SH's ways (its regions, their quota metrics; sched_ways_read())
 * are read on, but for the prices: the market's digest and the zones
 * of its GPU.
 */
static uint64_t
sched_ways_stamp(struct sched *s, const struct sched_shape *sh)
{
	uint64_t	h = sched_mix(s->mdigest, sched_zones_digest(s,
			    sh->gpu));

	return h != 0 ? h : 1;
}

/*
 * Everything SH's offers are built on (doc/DESIGN.md "The pass"): its
 * ways' stamp WSTAMP, the stockout cool-downs and Spot history of its
 * GPU, and the reservations it may use (M->resv, read for SH); the
 * prices are its ways' (sched_shape_build()). Equal stamps and ways,
 * equal offers: a pass builds again only the shapes a change can
 * reach. An input the offers come to depend on must join this stamp,
 * or a change of it is not seen.
 */
static uint64_t
sched_shape_stamp(const struct sched_ctx *ctx, const struct sched_market *m,
    const struct sched_shape *sh, uint64_t wstamp)
{
	const char	*gpu = sh->gpu->name, *k;
	uint64_t	 h = wstamp;
	size_t		 i, n = strlen(gpu), kl;

	for (i = 0; i < ctx->ncool; i++) {
		if (strcmp(ctx->cool[i].gpu, gpu) != 0)
			continue;
		h = sched_mix(h, sched_hash(ctx->cool[i].zone));
		h = sched_mix(h, (uint64_t)ctx->cool[i].spot);
		h = sched_mix(h, (uint64_t)ctx->cool[i].until);
	}
	for (i = 0; i < m->nstrike; i++) {
		if (strcmp(m->strike[i].gpu, gpu) != 0)
			continue;
		h = sched_mix(h, sched_hash(m->strike[i].zone));
		h = sched_mix(h, (uint64_t)m->strike[i].spot);
		h = sched_mix(h, (uint64_t)sched_offer_strike_left(&m->strike[i],
		    m->now));
	}
	for (i = 0; i < m->nhist; i++) {
		k = m->hist[i].key;
		kl = strlen(k);
		if (kl <= n || k[kl - n - 1] != '/' ||
		    strcmp(k + kl - n, gpu) != 0)
			continue;
		h = sched_mix(h, m->hist[i].hash);
		h = sched_mix_double(h, m->hist[i].hours);
		h = sched_mix(h, (uint64_t)m->hist[i].interruptions);
	}
	for (i = 0; i < m->nresv; i++) {
		h = sched_mix(h, sched_hash(m->resv[i].name));
		h = sched_mix(h, sched_hash(m->resv[i].zone));
		h = sched_mix(h, (uint64_t)m->resv[i].free_vms);
		h = sched_mix(h, (uint64_t)m->resv[i].count);
	}
	return h != 0 ? h : 1;
}

/*
 * What SH would cost an hour the way people run it without gpuq: an
 * on-demand Vertex AI custom job of the same shape in the first of
 * REGIONS where Vertex AI prices it, whichever services the job allows
 * (doc/DESIGN.md "Accounting"). 0 if none does.
 */
static double
sched_baseline(struct price *pr, const struct sched_shape *sh,
    char *const *regions, size_t nregions)
{
	double	gpu, host;
	size_t	ri;

	for (ri = 0; ri < nregions; ri++)
		if (price_gpu_hourly(pr, GCP_SERVICE_VERTEX, regions[ri],
		    sh->gpu->name, sh->count, 0, &gpu) == 0 &&
		    price_host_hourly(pr, GCP_SERVICE_VERTEX, regions[ri],
		    sh->machine, 0, &host) == 0)
			return gpu + host;
	return 0;
}

/*
 * The baseline of a job of shape SH with SPEC: at the first of the
 * regions its spec lists, in the job's own order (the shape keeps them
 * sorted, to share offers), else SH's, priced for gpuqd's regions.
 */
static double
sched_baseline_of(struct sched *s, const struct sched_shape *sh,
    json_t *spec)
{
	json_t		*regs = json_object_get(spec, "regions"), *v;
	const char	*names[64];
	size_t		 i, n = 0;

	json_array_foreach(regs, i, v) {
		if (n < sizeof names / sizeof names[0] && json_is_string(v))
			names[n++] = json_string_value(v);
	}
	if (n == 0)
		return sh->baseline_hourly;
	return sched_baseline(gcp_price(cloud_gcp(s->cloud)), sh,
	    (char *const *)names, n);
}

/*
 * The way of KIND (enum capacity_kind) of seller SL in REGION for SH:
 * its quota metrics and its price. Flex-start draws on the preemptible
 * quota (API-NOTES K.1, K.2) and costs the on-demand price less the
 * flex-start discount (price_flex_hourly()).
 */
static void
sched_way_read(struct quota *q, struct price *pr,
    const struct sched_seller *sl, const struct sched_shape *sh,
    const char *region, int kind, struct sched_way *w)
{
	double	gpu, host;
	int	preempt = kind == CAPACITY_SPOT || kind == CAPACITY_FLEX;
	int	spot = kind == CAPACITY_SPOT;

	w->metric = quota_gpu_metric(q, sl->qsvc, region, sh->gpu->name,
	    preempt, w->gpu_metric) != NULL;
	if (sl->qsvc == GCP_SERVICE_GCE && sh->vcpus > 0)
		(void)quota_cpu_metric(q, region, sh->machine, preempt,
		    w->cpu_metric);
	if (kind == CAPACITY_FLEX)
		w->priced = price_flex_hourly(pr, sl->psvc, region,
		    sh->gpu->name, sh->count, sh->machine, &gpu) == 0;
	else
		w->priced = price_gpu_hourly(pr, sl->psvc, region,
		    sh->gpu->name, sh->count, spot, &gpu) == 0 &&
		    price_host_hourly(pr, sl->psvc, region, sh->machine,
		    spot, &host) == 0;
	if (kind == CAPACITY_FLEX)
		host = 0;
	/* A gang pays for every machine. */
	if (w->priced)
		w->hourly = (gpu + host) * SCHED_NODES(sh);
}

/*
 * What each allowed seller x region x Spot costs SH and draws on: the
 * price (GPU + host) and the quota metrics, into SH's ways.
 */
static void
sched_ways_read(struct sched *s, const struct sched_market *m,
    struct sched_shape *sh, char *const *regions, size_t nregions)
{
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	struct price		*pr = gcp_price(cloud_gcp(s->cloud));
	const struct sched_seller *sl;
	struct sched_way	*ways, *w;
	size_t			 si, ri;
	int			 spot;

	ways = sched_offer_ways(sh, m, nregions);
	sh->baseline_hourly = sched_baseline(pr, sh, regions, nregions);
	for (si = 0; si < m->nsellers; si++) {
		sl = &m->sellers[si];
		if (!sched_offer_allows(sh, sl->prov))
			continue;
		for (ri = 0; ri < nregions; ri++)
			for (spot = 0; spot < CAPACITY_NKINDS; spot++) {
				/*
				 * Reserved offers have no way of their own:
				 * they use the standard one's quota metric,
				 * read for them even where the job may not
				 * run standard.
				 */
				if (spot == CAPACITY_RESERVED ||
				    (sched_offer_kind_refusal(sh, sl->prov,
				    spot) != NULL && !(spot ==
				    CAPACITY_STANDARD &&
				    sched_offer_kind_allowed(sh,
				    CAPACITY_RESERVED))))
					continue;
				w = &ways[sched_offer_way(si, ri, spot,
				    nregions)];
				sched_way_read(q, pr, sl, sh, regions[ri],
				    spot, w);
			}
	}
}

/*
 * The reservations [gcp] reservations lets SH use: READY ones whose VMs
 * are SH's machine type with SH's GPUs (or, for a machine type with
 * built-in GPUs, list none), with their free VMs, into M
 * (doc/DESIGN.md "Reservations").
 */
static void
sched_resv_read(struct sched *s, struct sched_market *m,
    const struct sched_shape *sh)
{
	struct resv		*rv = gcp_resv(cloud_gcp(s->cloud));
	struct resv_row		 row;
	struct sched_resv	*r;
	size_t			 it = 0;

	s->nresv = 0;
	while (rv != NULL && resv_next(rv, &it, &row) == 1) {
		if (!row.wanted || strcmp(row.machine_type, sh->machine) != 0)
			continue;
		if (*row.gpu != '\0' && (strcmp(row.gpu, sh->gpu->name) != 0 ||
		    row.gpus_per_vm != sh->count))
			continue;
		if (s->nresv == s->capresv) {
			s->capresv = s->capresv ? s->capresv * 2 : 8;
			s->resv = xreallocarray(s->resv, s->capresv,
			    sizeof *s->resv);
		}
		r = &s->resv[s->nresv++];
		sched_name(r->name, row.name);
		sched_name(r->zone, row.zone);
		sched_name(r->region, row.region);
		r->free_vms = row.free_vms;
		r->count = row.count;
	}
	m->resv = s->resv;
	m->nresv = s->nresv;
}

/*
 * Build SH's offers for this pass (or a plan) on CTX and M: read its
 * GPU's zones into M and its ways, rank (sched-offer.c), and give the
 * usable offers their quota buckets (sched-place.c). Unless FORCE, a
 * shape whose inputs are those it was built on keeps its offers and
 * only gets this pass's buckets. 1 if built, 0 if kept.
 */
static int
sched_shape_build(struct sched *s, struct sched_ctx *ctx,
    struct sched_market *m, struct sched_shape *sh, int force)
{
	char			**regions;
	size_t			 nregions, n;
	uint64_t		 stamp, wstamp;
	uint64_t		 price_at;
	double			 baseline;
	int			 kept;

	sched_resv_read(s, m, sh);
	wstamp = sched_ways_stamp(s, sh);
	stamp = sched_shape_stamp(ctx, m, sh, wstamp);
	price_at = price_reads(gcp_price(cloud_gcp(s->cloud)));
	if (!force && sh->stamp == stamp && sh->ways_price_at == price_at) {
		(void)sched_place_buckets_kept(ctx, sh);
		return 0;
	}
	m->zones = s->zones;
	m->nzones = quota_zones(ctx->quota, NULL, sh->gpu->name, s->zones,
	    SCHED_MAX_ZONES);
	m->zones_error = s->quota_error;
	regions = sched_offer_regions(sh, m, &nregions);
	if (force || sh->ways_stamp != wstamp) {
		sched_ways_read(s, m, sh, regions, nregions);
	} else if (sh->ways_price_at != price_at) {
		/*
		 * The catalog was read again: the offers are built again
		 * only if a price of this shape's ways moved (one GPU's
		 * price moves only its shapes' offers).
		 */
		n = sh->nways;
		if (n > s->capwscratch) {
			s->capwscratch = n;
			s->wscratch = xreallocarray(s->wscratch, n,
			    sizeof *s->wscratch);
		}
		if (n > 0)
			memcpy(s->wscratch, sh->ways, n * sizeof *sh->ways);
		baseline = sh->baseline_hourly;
		sched_ways_read(s, m, sh, regions, nregions);
		kept = sh->stamp == stamp && sh->nways == n &&
		    baseline == sh->baseline_hourly && (n == 0 ||
		    memcmp(s->wscratch, sh->ways, n * sizeof *sh->ways) == 0);
		sh->ways_price_at = price_at;
		if (kept) {
			sched_strv_free(regions, nregions);
			(void)sched_place_buckets_kept(ctx, sh);
			return 0;
		}
	}
	/* A plan's build (FORCE) leaves a stamp no pass matches. */
	sh->ways_stamp = force ? 0 : wstamp;
	sh->ways_price_at = force ? 0 : price_at;
	sh->stamp = force ? 0 : stamp;
	sched_offer_build(sh, m, regions, nregions);
	sched_strv_free(regions, nregions);
	sched_place_buckets(ctx, sh);
	return 1;
}

/* ---------------------------------------------------------------- */
/* Whys.							    */

/* Queue WHY for job ID if it differs from the stored one (*HASH, then
 * brought up to date; NULL: unknown). */
static void
sched_why_set(struct sched *s, int64_t id, uint64_t *hash, const char *why)
{
	uint64_t	h = sched_hash(why);

	if (hash != NULL) {
		if (h == *hash)
			return;
		*hash = h;
	}
	if (s->nwhy == s->capwhy) {
		s->capwhy = s->capwhy ? s->capwhy * 2 : 64;
		s->why_ids = xreallocarray(s->why_ids, s->capwhy,
		    sizeof *s->why_ids);
		s->why_texts = xreallocarray(s->why_texts, s->capwhy,
		    sizeof *s->why_texts);
	}
	s->why_ids[s->nwhy] = id;
	s->why_texts[s->nwhy++] = why != NULL ? xstrdup(why) : NULL;
}

/* Write the queued whys in one transaction. */
static void
sched_why_flush(struct sched *s)
{
	char	*cause = NULL;
	size_t	 i;
	int	 rc;

	s->stats.why_writes = s->nwhy;
	if (s->nwhy == 0)
		return;
	rc = store_jobs_set_why(s->store, s->why_ids,
	    (const char *const *)s->why_texts, s->nwhy, &cause);
	if (rc < 0) {
		log_warnx("scheduler: cannot record why %zu job(s) wait: %s",
		    s->nwhy, cause);
		free(cause);
		/* The set's whys are no longer the stored ones. */
		s->stale = 1;
	}
	for (i = 0; i < s->nwhy; i++)
		free(s->why_texts[i]);
	s->nwhy = 0;
}

/*
 * The pass gave stored text WHY, whose counts of now make LIVE: keep
 * LIVE for sched_why_live() until a complete pass no longer gives WHY.
 * At most SCHED_LIVE_MAX texts, so that a status of the whole queue
 * compares each row's why with few (the rest show without counts).
 */
static void
sched_live_note(struct sched *s, const char *why, const char *live)
{
	struct sched_live	*e;
	size_t			 i, len;

	if (why == NULL || live == NULL)
		return;
	len = strlen(why);
	for (i = 0; i < s->nlive; i++) {
		e = &s->live[i];
		if (e->len == len && memcmp(e->why, why, len) == 0) {
			if (strcmp(e->live, live) != 0) {
				free(e->live);
				e->live = xstrdup(live);
			}
			e->gen = s->gen;
			return;
		}
	}
	if (s->nlive == SCHED_LIVE_MAX)
		return;
	s->live = xreallocarray(s->live, s->nlive + 1, sizeof *s->live);
	e = &s->live[s->nlive++];
	e->why = xstrdup(why);
	e->len = len;
	e->live = xstrdup(live);
	e->gen = s->gen;
}

/* A complete pass ended: forget the texts it no longer gave. */
static void
sched_live_sweep(struct sched *s)
{
	size_t	i;

	for (i = 0; i < s->nlive; ) {
		if (s->live[i].gen == s->gen) {
			i++;
			continue;
		}
		free(s->live[i].why);
		free(s->live[i].live);
		s->live[i] = s->live[--s->nlive];
	}
}

const char *
sched_why_live(struct sched *s, const char *why)
{
	struct sched_live	*e;
	size_t			 i, len;

	if (s == NULL || why == NULL || s->nlive == 0 ||
	    s->state == SCHED_S_CLOSED)
		return NULL;
	len = strlen(why);
	for (i = 0; i < s->nlive; i++) {
		e = &s->live[i];
		if (e->len == len && memcmp(e->why, why, len) == 0)
			return e->live;
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Launching.							    */

/* "gce/us-central1-a" or "vertex/us-central1" of attempt A. */
static char *
sched_place_text(const struct store_attempt *a)
{
	return xprintf("%s/%s", a->provider, a->zone != NULL ? a->zone :
	    a->region);
}

/*
 * Launch offer O for runnable item IT: reserve its quota and hand the
 * attempt to attempt.c, which commits it, calls the provider and deals
 * with the answer. 0 if a launch is under way, -1 if the job could not
 * even be written down.
 */
static int
sched_launch_start(struct sched *s, struct sched_ctx *ctx,
    struct sched_item *it, struct sched_offer *o)
{
	struct sched_job	*j = it->job;
	struct sched_shape	*sh = j->shape;
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	struct store_job	*row = NULL;
	struct store_attempt	 a;
	struct attempt_hold	 hold;
	char			 name[CLOUD_NAME_MAX], *cause = NULL, *msg;
	char			*place;
	json_t			*spec;
	int			 number, rc, k, b[3];

	if (s->att == NULL)
		return -1;
	if ((rc = store_job_get(s->store, j->id, &row, &cause)) < 0) {
		log_warnx("job %" PRId64 ": cannot read it to launch: %s",
		    j->id, cause);
		free(cause);
		return -1;
	}
	spec = json_loads(row->spec, 0, NULL);
	if (spec == NULL || row->state != JOB_QUEUED) {
		json_decref(spec);
		store_job_free(row);
		return -1;
	}
	number = row->attempts + 1;
	cloud_resource_name(cloud_install(s->cloud), j->id, number, name);
	memset(&a, 0, sizeof a);
	a.job_id = j->id;
	a.provider = (char *)o->prov->name;
	a.region = o->region;
	a.zone = o->zone[0] != '\0' ? o->zone : NULL;
	a.machine_type = sh->machine;
	a.gpu = (char *)sh->gpu->name;
	a.gpu_count = sh->count;
	a.nodes = SCHED_NODES(sh);
	a.resource = name;
	a.spot = o->spot;
	a.capacity = (char *)capacity_name(o->capacity);
	a.hourly_usd = o->hourly;
	a.baseline_hourly_usd = sched_baseline_of(s, sh, spec);
	a.exit_code = -1;
	if (number > 1 && row->checkpoint != NULL && *row->checkpoint != '\0')
		a.resumed_from = row->checkpoint;

	memset(&hold, 0, sizeof hold);
	hold.svc = o->qsvc;
	hold.metric = ctx->b[o->gpu_b].metric;
	if (o->cpu_b >= 0 && sh->vcpus > 0) {
		hold.cpu_metric = ctx->b[o->cpu_b].metric;
		hold.vcpus = SCHED_VCPUS(sh);
	}
	if (o->reservation[0] != '\0') {
		/* The reservation's VMs, not quota: held until a listing
		 * counts them (reservation.h). */
		a.reservation = o->reservation;
		resv_hold(gcp_resv(cloud_gcp(s->cloud)), o->zone,
		    o->reservation, SCHED_NODES(sh));
	} else {
		quota_reserve(q, hold.svc, a.region, hold.metric,
		    SCHED_GPUS(sh));
		if (hold.cpu_metric != NULL)
			quota_reserve(q, GCP_SERVICE_GCE, a.region,
			    hold.cpu_metric, hold.vcpus);
	}
	/* The pass's own view of the buckets, if already read. */
	b[0] = o->gpu_b;
	b[1] = o->all_b;
	b[2] = hold.cpu_metric != NULL ? o->cpu_b : -1;
	for (k = 0; k < 3; k++)
		if (b[k] >= 0 && ctx->b[b[k]].loaded)
			ctx->b[b[k]].free -= k == 2 ? hold.vcpus :
			    SCHED_GPUS(sh);

	place = sched_place_text(&a);
	msg = a.reservation != NULL ? xprintf("launching on %s reserved "
	    "(reservation %s) $0.00/h", place, a.reservation) :
	    xprintf("launching on %s %s $%.2f/h", place,
	    capacity_name(o->capacity), a.hourly_usd);
	s->why_said = 0;
	rc = attempt_launch(s->att, &a, number, row, spec,
	    a.reservation != NULL ? NULL : &hold, msg, &cause);
	free(msg);
	if (rc < 0) {
		/* Nothing written; the hold is given back. */
		log_warnx("job %" PRId64 ": not launching attempt %d: %s",
		    j->id, number, cause);
		free(cause);
		free(place);
		for (k = 0; k < 3; k++)
			if (b[k] >= 0 && ctx->b[b[k]].loaded)
				ctx->b[b[k]].free += k == 2 ? hold.vcpus :
				    SCHED_GPUS(sh);
		json_decref(spec);
		store_job_free(row);
		return -1;
	}
	/* Its why goes, unless the answer came at once and gave one. */
	if (s->why_said != j->id)
		sched_why_set(s, j->id, &it->why_hash, NULL);
	log_info("job %" PRId64 ": launching attempt %d on %s%s%s%s, "
	    "$%.2f/h, expected $%.2f", j->id, number, place, a.spot ?
	    " (Spot)" : o->capacity == CAPACITY_FLEX ? " (flex-start)" : "",
	    a.reservation != NULL ? " in reservation " : "",
	    a.reservation != NULL ? a.reservation : "", a.hourly_usd,
	    o->per_hour * j->hours);
	free(place);
	s->stats.launches++;
	json_decref(spec);
	store_job_free(row);
	return 0;
}

/* ---------------------------------------------------------------- */
/* What attempt.c tells the scheduler (struct attempt_listener).     */

static void
sched_on_wake(void *arg)
{
	sched_wake(arg);
}

static void
sched_on_wake_at(void *arg, int64_t when)
{
	sched_wake_at(arg, when);
}

static void
sched_on_history_changed(void *arg)
{
	sched_history_changed(arg);
}

/* A launch of job ID was accepted: its launch memory goes. */
static void
sched_on_launched(void *arg, int64_t id)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j != NULL) {
		j->launch_errors = 0;
		j->prefer[0] = '\0';
		j->blocked_since = 0;
	}
}

static int
sched_on_launch_failed(void *arg, int64_t id, int in_a_row)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_job_find(s, id);
	int			 n;

	s->stats.launch_errors++;
	if (j == NULL)
		return 0;
	n = j->launch_errors;
	if (in_a_row)
		j->launch_errors++;
	return n;
}

static void
sched_on_avoid(void *arg, int64_t id, const struct provider *p,
    const char *region, int64_t until)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j != NULL && p != NULL) {
		sched_avoid(j, p, region, until);
		sched_set_hinted(arg, j);
	}
}

static void
sched_on_avoid_kind(void *arg, int64_t id, const struct provider *p,
    const char *region, int kind, int64_t until)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j != NULL && p != NULL) {
		sched_avoid_kind(j, p, region, kind, until);
		sched_set_hinted(arg, j);
	}
}

static void
sched_on_prefer(void *arg, int64_t id, const char *zones, int64_t until)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j == NULL)
		return;
	(void)snprintf(j->prefer, sizeof j->prefer, "%s", zones);
	j->prefer_until = until;
	sched_set_hinted(arg, j);
}

/* A requeue wrote job ID's why; a pass under way must not undo it. */
static void
sched_on_why(void *arg, int64_t id, const char *why)
{
	struct sched	*s = arg;

	if (!sched_in_pass(s))
		return;
	s->why_said = id;
	sched_why_set(s, id, NULL, why);
}

/* ---------------------------------------------------------------- */
/* The pass.							    */

/*
 * Job ID waits for a job that failed or was cancelled (WHY says which):
 * it can never start, so it is cancelled, with WHY in its events and as
 * its why (doc/DESIGN.md "Arrays and dependencies").
 */
static void
sched_dep_cancel(struct sched *s, const struct sched_job *j, const char *why)
{
	char	*cause = NULL, *msg;
	int	 rc, to_of[JOB_NSTATES], i;

	msg = xprintf("cancelled: %s", why);
	if (j->gate.array_id != 0) {
		/*
		 * Every queued task of the array waits for the same jobs:
		 * one transaction for all of them, not one per task.
		 */
		for (i = 0; i < JOB_NSTATES; i++)
			to_of[i] = -1;
		to_of[JOB_QUEUED] = JOB_CANCELLED;
		rc = store_array_transition(s->store, j->gate.array_id, to_of,
		    msg, msg, NULL, NULL, &cause);
		if (rc < 0)
			log_warnx("array %" PRId64 ": cannot cancel its "
			    "tasks: %s", j->gate.array_id, cause != NULL ?
			    cause : strerror(-rc));
		else
			log_info("array %" PRId64 ": %d task(s) %s",
			    j->gate.array_id, rc, msg);
		sched_gate_doomed(&s->gate, j->gate.array_id);
	} else {
		rc = store_job_transition(s->store, j->id,
		    JOB_MASK(JOB_QUEUED), JOB_CANCELLED, msg, NULL, &cause);
		if (rc == 0)
			rc = store_job_set_why(s->store, j->id, msg, &cause);
		if (rc != 0 && rc != -EALREADY)
			log_warnx("job %" PRId64 ": cannot cancel it: %s",
			    j->id, cause != NULL ? cause : strerror(-rc));
		else if (rc == 0)
			log_info("job %" PRId64 ": %s", j->id, msg);
	}
	free(cause);
	free(msg);
	/* States changed: what this pass read of them is stale. */
	sched_gate_reset(&s->gate);
}

/* After a pass: when the next one is due, in seconds from now; -1 none. */
static int64_t
sched_next_due(struct sched *s, size_t waiting)
{
	const struct conf	*conf = cloud_conf(s->cloud);
	int64_t			 now = s->ctx.now, due = -1, t, counts[JOB_NSTATES];
	size_t			 i;

#define SCHED_DUE(x)	do { if (due < 0 || (x) < due) due = (x); } while (0)
	if (s->wake_at != 0 && s->wake_at <= now)
		s->wake_at = 0;
	if (s->wake_at != 0)
		SCHED_DUE(s->wake_at - now);
	if (waiting > 0) {
		SCHED_DUE(conf->quota_ttl > 0 ? conf->quota_ttl : 60);
		for (i = 0; i < s->ctx.ncool; i++) {
			t = s->ctx.cool[i].until + 1 - now;
			if (t > 0)
				SCHED_DUE(t);
		}
	}
	/* The end of the first backoff: a timed wake-up, not a poll. */
	for (i = 0; i < s->nlater; i++)
		SCHED_DUE(s->later[i].at > now ? s->later[i].at - now : 0);
	/*
	 * Queued jobs the set does not hold (cannot be, short of a bug):
	 * read it whole soon rather than leave them waiting for ever.
	 */
	if (store_job_counts(s->store, counts, NULL) == 0 &&
	    (size_t)counts[JOB_QUEUED] > s->nitems + s->nlater +
	    s->ntouched) {
		s->stale = 1;
		SCHED_DUE(SCHED_IDLE_SEC);
	}
#undef SCHED_DUE
	return due;
}

/*
 * How long a pass woken by events waits after the last one: a multiple
 * of that pass's length, so a storm of submits over a long queue costs
 * at most a fifth of the loop, and nothing for a short queue. Under a
 * test clock running N times faster ([daemon] clock_scale) the gap is N
 * times shorter: it is a pause of gpuqd's, and a replay at 2520x made
 * each retry after a stockout wait minutes of simulated time where a
 * real gpuqd waits milliseconds (doc/DESIGN.md "Replaying Spot traces").
 */
static int64_t
sched_gap(struct sched *s)
{
	uint64_t	now = uv_now(cloud_loop(s->cloud)), at;
	double		gap = s->stats.pass_ms * SCHED_GAP_FACTOR;

	if (gap > SCHED_GAP_MAX_MS)
		gap = SCHED_GAP_MAX_MS;
	if (clock_scale() > 1.0)
		gap /= clock_scale();
	at = s->last_end + (uint64_t)gap;
	return at > now ? (int64_t)(at - now) : 0;
}

/* Is a pass waiting for a refresh, and still willing to? */
static int
sched_waiting(struct sched *s)
{
	return (s->state == SCHED_S_PRICE_WAIT ||
	    s->state == SCHED_S_QUOTA_WAIT) &&
	    uv_now(cloud_loop(s->cloud)) < s->quota_wait_end;
}

/* Wait for a refresh (STATE; its callback owed as OWE), at most
 * SCHED_QUOTA_WAIT_MS. */
static void
sched_wait(struct sched *s, enum sched_state state, unsigned owe)
{
	s->state = state;
	s->owe |= owe;
	s->quota_wait_end = uv_now(cloud_loop(s->cloud)) +
	    SCHED_QUOTA_WAIT_MS;
	s->refs++;
	sched_arm(s, SCHED_QUOTA_WAIT_MS);
}

/*
 * Job ID was just marked deadline_safe: forget what was parsed of it,
 * so its next sight reads the mark and gives it a shape without Spot.
 */
static void
sched_on_deadline_safe(void *arg, int64_t id)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_job_find(s, id);

	if (j != NULL)
		sched_job_free(s, j);
	sched_touch(s, id);
}

/* What deadline job J's slack makes of Spot: SL (sched-place.c's
 * order of its offers). */
static void
sched_job_slack(struct sched_job *j, const struct sched_slack *sl)
{
	j->dl_left = sl->left;
	j->dl_avail = sl->avail;
	j->dl_cost = sl->cost;
}

/*
 * Queued job ROW may wait for Spot until UNTIL, and its slack is SL
 * (sched-deadline.h). One the scheduler has not seen yet (queued since
 * the last pass, or again after a preemption, its entry evicted while
 * it ran) is made now: the walk comes before the queue's read, and its
 * first placement is the one its slack weighs most on.
 */
static void
sched_on_deadline_wait(void *arg, const struct store_job *row,
    int64_t until, const struct sched_slack *sl)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_job_get(s, row);

	if (j->last_seen == 0 && !j->in_set)
		j->last_seen = s->ctx.now;	/* at the list's tail */
	j->spot_wait_end = until;
	sched_job_slack(j, sl);
}

/*
 * The cached job of ROW, which the deadline bridge or the move looks at
 * while it runs, with its shape's offers of this pass built if no queued
 * job needed them. A running job keeps no entry (doc/DESIGN.md
 * "Memory": 10,000 running jobs would hold 10,000 parsed specs between
 * looks): one made here is freed once the look is over
 * (sched_looked_done()), and one still cached from its time in the
 * queue is not kept fresh, so it ages out as it did before.
 */
static struct sched_job *
sched_running_job(struct sched *s, const struct store_job *row)
{
	struct sched_job	*j = sched_job_get(s, row);
	struct sched_shape	*sh = j->shape;

	/* Made just now (never seen): at the list's tail, freed after. */
	if (j->last_seen == 0 && !j->in_set) {
		j->last_seen = s->ctx.now;
		if (s->nlooked == s->looked_cap) {
			s->looked_cap = s->looked_cap ? s->looked_cap * 2 : 64;
			s->looked = xreallocarray(s->looked, s->looked_cap,
			    sizeof *s->looked);
		}
		s->looked[s->nlooked++] = row->id;
	}
	if (sh != NULL && sh->gen != s->gen) {
		sched_shape_build(s, &s->ctx, &s->market, sh, 0);
		sh->gen = s->gen;
	}
	return j;
}

/* The look is over: free the entries it made for running jobs (their
 * offers were borrowed only while it ran). */
static void
sched_looked_done(struct sched *s)
{
	struct sched_job	*j;
	size_t			 i;

	for (i = 0; i < s->nlooked; i++)
		if ((j = sched_job_find(s, s->looked[i])) != NULL &&
		    !j->in_set)
			sched_job_free(s, j);
	s->nlooked = 0;
	if (s->looked_cap > 1024) {
		free(s->looked);
		s->looked = NULL;
		s->looked_cap = 0;
	}
}

/* Would job ROW take Spot now: its shape's offers of this pass (built
 * for it if no queued job needed them) rank an open Spot offer first.
 * A running job has been evicted from the cache: made again. */
static int
sched_on_deadline_spot(void *arg, const struct store_job *row,
    const struct sched_slack *sl)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_running_job(s, row);

	if (j->shape == NULL)
		return 0;
	sched_job_slack(j, sl);
	return sched_place_spot_first(j, s->ctx.now);
}

/*
 * The jobs with a deadline, before the queue is read (doc/DESIGN.md
 * "Deadlines"): those short of slack are marked and leave Spot, and
 * the timer is asked to wake the scheduler when the next one will be.
 */
static void
sched_deadlines(struct sched *s)
{
	struct sched_deadline_run	r;
	struct sched_deadline_hooks	h = { sched_on_deadline_safe,
	    sched_on_deadline_wait, sched_on_deadline_spot, s };

	sched_deadline_check(s->store, s->att, cloud_conf(s->cloud),
	    s->ctx.now, &h, &r);
	sched_looked_done(s);
	s->dl_jobs = r.jobs;
	if (r.next > s->ctx.now)
		sched_wake_at(s, r.next);
	if (r.jobs > 0)
		log_debug("scheduler: %d deadline job(s), %d marked safe, %d "
		    "moved off Spot, %d back to Spot, next look in %llds",
		    r.jobs, r.marked, r.moved, r.back, (long long)(r.next > 0 ?
		    r.next - s->ctx.now : -1));
}

/* Where running job ROW would go now (sched-move.h): its shape's first
 * offer it does not avoid, and all of them. */
static const struct sched_offer *
sched_on_move_best(void *arg, const struct store_job *row,
    const struct sched_slack *sl, const struct sched_offer **ret_offers,
    size_t *ret_n)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_running_job(s, row);
	struct sched_shape	*sh = j->shape;
	struct sched_slack	 none = { 0, 0, 0 };

	if (sh == NULL)
		return NULL;
	sched_job_slack(j, sl != NULL ? sl : &none);
	*ret_offers = sh->offers;
	*ret_n = sh->n;
	return sched_place_first(j, s->ctx.now);
}

/*
 * Running jobs that cheaper capacity has freed up for move there
 * (doc/DESIGN.md "Moving to cheaper capacity"): a look every
 * stockout_cooldown (or poll_interval if longer) at most: a place that
 * refused a move is cooled down that long, and one move a place a look
 * then probes each place at most once a cool-down.
 */
static void
sched_moves(struct sched *s)
{
	const struct conf	*conf = cloud_conf(s->cloud);
	struct sched_move_run	 r;
	struct sched_move_hooks	 h = { sched_on_move_best, s };

	if (!conf->move_to_cheaper || s->ctx.now < s->move_at)
		return;
	s->move_at = s->ctx.now + (conf->stockout_cooldown >
	    conf->poll_interval ? conf->stockout_cooldown :
	    conf->poll_interval);
	sched_move_check(s->store, s->att, conf, s->ctx.now, &h, &r);
	sched_looked_done(s);
	if (r.next > s->ctx.now)
		sched_wake_at(s, r.next);
	if (r.running > 0)
		log_debug("scheduler: %d running, %d with a cheaper place, %d "
		    "moved, next look in %llds", r.running, r.weighed,
		    r.moved, (long long)(r.next > 0 ? r.next - s->ctx.now :
		    -1));
}

/* This thread's CPU time, in ms. */
static double
sched_cpu_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * The order the pass walks the set in (doc/DESIGN.md "Deadlines"):
 * NULL, the set's own (priority, then id), unless jobs with a deadline
 * are live; then, within a priority, the queued jobs whose slack is
 * known, least slack first, and the rest after them in the set's order.
 * Spot capacity that frees up goes to the first job that asks: first
 * come, first served gave a zone's VMs to a job with days to spare
 * while one due in hours waited, and then paid for flex-start.
 */
struct sched_walk {
	size_t		i;
	int		prio;
	double		slack;		/* s; INFINITY: not known */
};

static int
sched_walk_cmp(const void *a, const void *b)
{
	const struct sched_walk	*x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->slack != y->slack)
		return x->slack < y->slack ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static const struct sched_walk *
sched_walk_order(struct sched *s)
{
	const struct sched_job	*j;
	size_t			 i, known = 0;

	if (s->dl_jobs == 0 || s->nitems < 2)
		return NULL;
	if (s->capwalk < s->nitems) {
		s->capwalk = s->nitems;
		s->walk = xreallocarray(s->walk, s->capwalk, sizeof *s->walk);
	}
	for (i = 0; i < s->nitems; i++) {
		j = s->items[i].job;
		s->walk[i].i = i;
		s->walk[i].prio = s->items[i].priority;
		s->walk[i].slack = INFINITY;
		if (j->dl_left > 0) {
			s->walk[i].slack = j->dl_avail;
			known++;
		}
	}
	if (known == 0)
		return NULL;
	qsort(s->walk, s->nitems, sizeof *s->walk, sched_walk_cmp);
	return s->walk;
}

/* The synchronous part of a pass, once quotas are fresh enough. */
static void
sched_pass_run(struct sched *s)
{
	struct sched_ctx	*ctx = &s->ctx;
	struct sched_item	*it;
	struct sched_job	*j;
	struct sched_verdict	 v;
	const struct sched_walk	*order;
	char			*why;
	uint64_t		 t0 = uv_hrtime(), t1, t2, t3, t4, hash;
	double			 cpu0 = sched_cpu_ms();
	size_t			 i, waiting = 0, shapes = 0, cancels = 0, read;
	size_t			 priced = 0, walked = 0;
	int			 burst = SCHED_LAUNCH_BURST, gate;
	int64_t			 due;

	s->state = SCHED_S_PASS;
	s->gen++;
	s->quota_stamp = quota_rounds(gcp_quota(cloud_gcp(s->cloud)));
	sched_ctx_begin(s, ctx, &s->market);
	ctx->gen = s->gen;
	s->mdigest = sched_market_digest(s, &s->market);
	sched_deadlines(s);
	sched_moves(s);
	t1 = uv_hrtime();
	read = sched_set_update(s);
	order = sched_walk_order(s);
	t2 = uv_hrtime();
	sched_gate_begin(&s->gate);
	for (i = 0; i < s->nitems; i++) {
		it = &s->items[order != NULL ? order[i].i : i];
		/*
		 * The common case, from the item alone: a plain job whose
		 * shape already found nothing this pass, and whose stored
		 * why is the one it would be given.
		 */
		if (!(it->flags & (SCHED_I_GATED | SCHED_I_HINTED)) &&
		    s->gate.ndoomed == 0 &&
		    it->shape != NULL && s->blocked == NULL &&
		    it->shape->gen == s->gen &&
		    sched_place_fast_hash_of(ctx, it->shape, it->id,
		    it->priority, it->max_hourly, it->max_total, it->hours,
		    &hash) && hash == it->why_hash) {
			waiting++;
			continue;
		}
		j = it->job;
		walked++;
		if ((it->flags & SCHED_I_HINTED) &&
		    !sched_place_hinted(j, ctx->now))
			it->flags &= ~SCHED_I_HINTED;
		if (sched_gate_is_doomed(&s->gate, j->gate.array_id))
			continue;	/* cancelled with its array */
		gate = sched_gate_check(&s->gate, s->store, j->id, &j->gate,
		    &why);
		if (gate == SCHED_GATE_CANCEL) {
			sched_dep_cancel(s, j, why);
			free(why);
			cancels++;
			continue;
		}
		if (gate == SCHED_GATE_WAIT) {
			sched_why_set(s, j->id, &it->why_hash, why);
			free(why);
			waiting++;
			continue;
		}
		if (j->shape == NULL) {
			sched_why_set(s, j->id, &it->why_hash, j->bad);
			continue;
		}
		if (s->blocked != NULL) {
			sched_why_set(s, j->id, &it->why_hash, s->blocked);
			waiting++;
			continue;
		}
		if (j->shape->gen != s->gen) {
			priced += sched_shape_build(s, ctx, &s->market,
			    j->shape, 0);
			j->shape->gen = s->gen;
			shapes++;
		}
		/*
		 * Its shape already found nothing this pass: a job whose
		 * stored why is the shape's costs a comparison, no text.
		 */
		if (sched_place_fast_hash(ctx, j, it->priority, &hash)) {
			if (hash != it->why_hash) {
				why = sched_place_fast_why(ctx, j,
				    it->priority);
				sched_why_set(s, j->id, &it->why_hash, why);
				free(why);
			}
			waiting++;
			continue;
		}
		if (burst == 0) {
			s->state = SCHED_S_PASS_AGAIN;
			break;
		}
		sched_place(ctx, j, it->priority, &v);
		if (v.offer != NULL) {
			if (sched_launch_start(s, ctx, it, v.offer) == 0) {
				burst--;
				sched_gate_launched(&s->gate,
				    j->gate.array_id);
			}
		} else {
			sched_why_set(s, j->id, &it->why_hash, v.why);
			sched_live_note(s, v.why, v.live);
			sched_place_fail_note(ctx, j, &v);
			waiting++;
		}
		sched_verdict_done(&v);
	}
	t3 = uv_hrtime();
	sched_why_flush(s);
	t4 = uv_hrtime();
	sched_evict(s, ctx->now);
	if (i == s->nitems)		/* every job seen: a complete pass */
		sched_live_sweep(s);
	/* A job cancelled for its dependency may doom one waiting for it. */
	if (cancels > 0 && s->state == SCHED_S_PASS)
		s->state = SCHED_S_PASS_AGAIN;

	s->stats.passes++;
	s->stats.jobs_seen = s->nitems;
	s->stats.jobs_cached = s->njobs;
	s->stats.shapes = shapes;
	s->stats.shapes_priced = priced;
	s->stats.jobs_read = read;
	s->stats.jobs_read_whole = s->read_whole;
	s->stats.jobs_walked = walked;
	s->stats.pass_ms = (double)(uv_hrtime() - t0) / 1e6;
	s->stats.pass_cpu_ms = sched_cpu_ms() - cpu0;
	if (s->stats.pass_ms > s->stats.max_pass_ms)
		s->stats.max_pass_ms = s->stats.pass_ms;
	log_debug("scheduler: pass %u: %zu runnable, %zu read, %zu walked, "
	    "%zu shape(s), %zu priced, %zu waiting, %d launched, %lu why(s) "
	    "written, cpu %.2f, market %.2f, set %.2f, walk %.2f, whys %.2f, "
	    "%.2f ms", s->gen, s->nitems, read, walked, shapes, priced,
	    waiting, SCHED_LAUNCH_BURST - burst, s->stats.why_writes,
	    s->stats.pass_cpu_ms,
	    (double)(t1 - t0) / 1e6,
	    (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6,
	    (double)(t4 - t3) / 1e6, s->stats.pass_ms);

	s->last_end = uv_now(cloud_loop(s->cloud));
	if (s->state == SCHED_S_PASS_AGAIN) {
		s->state = SCHED_S_IDLE;
		sched_arm(s, sched_gap(s));
		return;
	}
	s->state = SCHED_S_IDLE;
	if ((due = sched_next_due(s, waiting)) >= 0)	/* simulated s */
		sched_arm(s, (int64_t)clock_real_ms((uint64_t)due * 1000));
}

static void
sched_on_quota(int error, const char *cause, void *arg)
{
	struct sched	*s = arg;

	s->owe &= ~SCHED_OWE_QUOTA;
	if (s->state != SCHED_S_CLOSED) {
		free(s->quota_error);
		s->quota_error = error < 0 ? xstrdup(cause != NULL ? cause :
		    strerror(-error)) : NULL;
		if (error < 0) {
			log_warnx("scheduler: quota refresh failed: %s; using "
			    "what is known", s->quota_error);
			s->quota_retry_at = clock_now() + SCHED_QUOTA_BACKOFF;
		}
		(void)uv_timer_stop(&s->timer);	/* the wait's deadline */
		sched_pass_run(s);
	}
	sched_unref(s);
}

/* Quotas were refreshed (by anyone): placements may have changed. */
static void
sched_on_quota_listener(void *arg)
{
	struct sched	*s = arg;

	if (!(s->owe & SCHED_OWE_QUOTA) && !sched_in_pass(s) &&
	    quota_rounds(gcp_quota(cloud_gcp(s->cloud))) != s->quota_stamp)
		sched_wake(s);
}

/* The first catalog read ended (or failed: the bundled table stays). */
static void
sched_on_price(int error, const char *cause, void *arg)
{
	struct sched	*s = arg;

	s->owe &= ~SCHED_OWE_PRICE;
	if (s->state != SCHED_S_CLOSED) {
		if (error < 0)
			log_warnx("scheduler: cannot read the Cloud Billing "
			    "catalog: %s; pricing from the bundled table",
			    cause != NULL ? cause : strerror(-error));
		if (s->state == SCHED_S_PRICE_WAIT) {
			s->state = SCHED_S_IDLE;
			(void)uv_timer_stop(&s->timer);
			sched_pass(s);
		} else
			sched_wake(s);
	}
	sched_unref(s);
}

static void
sched_pass(struct sched *s)
{
	struct quota	*q = gcp_quota(cloud_gcp(s->cloud));
	struct price	*pr = gcp_price(cloud_gcp(s->cloud));
	int		 rc;

	switch (s->state) {
	case SCHED_S_NEW:
	case SCHED_S_PRIMED:
	case SCHED_S_UNREADY:
	case SCHED_S_PASS:
	case SCHED_S_PASS_AGAIN:
	case SCHED_S_CLOSED:
		return;
	case SCHED_S_PRICE_WAIT:
	case SCHED_S_QUOTA_WAIT:
		if (sched_waiting(s)) {
			/*
			 * A sooner wake-up (sched_wake_at()) took the timer
			 * from the wait: arm the wait's end again, or the
			 * pass waited for the refresh however long it took.
			 */
			sched_arm(s, (int64_t)(s->quota_wait_end -
			    uv_now(cloud_loop(s->cloud))));
			return;
		}
		break;
	case SCHED_S_UNPRICED:
		/*
		 * The first pass prices with the catalog, not the bundled
		 * table, unless reading it takes longer than the wait
		 * allows.
		 */
		if (price_fetched_at(pr) == 0 &&
		    price_refresh(pr, sched_on_price, s) == 0) {
			sched_wait(s, SCHED_S_PRICE_WAIT, SCHED_OWE_PRICE);
			return;
		}
		break;
	case SCHED_S_IDLE:
		break;
	}
	s->state = SCHED_S_IDLE;
	if (s->owe & SCHED_OWE_QUOTA) {
		/* The refresh is slow (request budget, a sick API): go on
		 * with what is known; its end runs another pass. */
		log_debug("scheduler: quota refresh still running; passing "
		    "on older readings");
		sched_pass_run(s);
		return;
	}
	if (clock_now() < s->quota_retry_at) {
		sched_pass_run(s);
		return;
	}
	rc = quota_refresh(q, 0, sched_on_quota, s);
	if (rc == 0) {
		sched_wait(s, SCHED_S_QUOTA_WAIT, SCHED_OWE_QUOTA);
		return;
	}
	if (rc < 0) {
		free(s->quota_error);
		s->quota_error = xprintf("cannot read quotas: %s",
		    rc == -EINVAL ? "no [gcp] project" : strerror(-rc));
	}
	sched_pass_run(s);
}

static void
sched_on_timer(uv_timer_t *t)
{
	sched_pass(t->data);
}

/* Run a pass in DELAY_MS unless one is due sooner. */
static void
sched_arm(struct sched *s, int64_t delay_ms)
{
	uint64_t	now = uv_now(cloud_loop(s->cloud));
	int64_t		target;

	if (s->state == SCHED_S_NEW || s->state == SCHED_S_PRIMED ||
	    s->state == SCHED_S_CLOSED)
		return;
	if (delay_ms < 0)
		delay_ms = 0;
	target = (int64_t)now + delay_ms;
	if (uv_is_active((uv_handle_t *)&s->timer) && s->due <= target)
		return;
	s->due = target;
	(void)uv_timer_start(&s->timer, sched_on_timer, (uint64_t)delay_ms, 0);
}

void
sched_block(struct sched *s, const char *why)
{
	if (why == NULL && s->blocked == NULL)
		return;
	if (why != NULL && s->blocked != NULL && strcmp(why, s->blocked) == 0)
		return;
	free(s->blocked);
	s->blocked = why != NULL ? xstrdup(why) : NULL;
	sched_wake(s);
}

void
sched_wake(struct sched *s)
{
	if (s->state == SCHED_S_CLOSED)
		return;
	if (s->state == SCHED_S_PASS) {
		s->state = SCHED_S_PASS_AGAIN;
		return;
	}
	if (s->state == SCHED_S_PASS_AGAIN || sched_waiting(s))
		return;		/* the pass to come sees it */
	sched_arm(s, sched_gap(s));
}

void
sched_wake_at(struct sched *s, int64_t when)
{
	int64_t	now = clock_now();

	if (s->state == SCHED_S_CLOSED)
		return;
	if (when <= now) {
		sched_wake(s);
		return;
	}
	/*
	 * A wake-up already past is spent (the pass that runs for it
	 * clears it only at its end): one asked for during that pass
	 * replaces it, or it was lost and the scheduler slept on.
	 */
	if (s->wake_at == 0 || s->wake_at <= now || when < s->wake_at)
		s->wake_at = when;
	if (!sched_in_pass(s))
		sched_arm(s, (int64_t)clock_real_ms((uint64_t)(when - now) *
		    1000));
}

void
sched_history_changed(struct sched *s)
{
	s->hist_at = 0;
}

void
sched_ready(struct sched *s)
{
	if (s->state != SCHED_S_NEW && s->state != SCHED_S_UNREADY)
		return;
	log_info("scheduler: the cloud is reconciled; launching may begin");
	if (s->state == SCHED_S_NEW) {
		s->state = SCHED_S_PRIMED;	/* sched_start() goes on */
		return;
	}
	s->state = SCHED_S_UNPRICED;
	sched_wake(s);
}

/* ---------------------------------------------------------------- */
/* Plan.							    */

json_t *
sched_plan(struct sched *s, json_t *spec)
{
	struct sched_ctx	 ctx;
	struct sched_market	 m;
	struct sched_shape	*sh;
	struct sched_job	 j;
	json_t			*plan;
	char			*why = NULL;
	int			 prio;

	memset(&j, 0, sizeof j);
	sh = sched_shape_get(s, spec, &why);
	if (sh == NULL) {
		plan = json_pack("{s:[], s:[], s:s}", "offers", "excluded",
		    "why", why);
		if (plan == NULL)
			fatalx("scheduler: out of memory building a plan");
		free(why);
		return plan;
	}
	j.shape = sh;
	j.id = -1;
	sched_job_limits(&j, spec);
	prio = (int)json_integer_value(json_object_get(spec, "priority"));

	memset(&ctx, 0, sizeof ctx);
	sched_ctx_begin(s, &ctx, &m);
	(void)sched_shape_build(s, &ctx, &m, sh, 1);
	sh->gen = 0;	/* the next pass builds it with its own buckets */
	plan = sched_place_plan(&ctx, &j, prio);
	(void)json_object_set_new(plan, "kinds_excluded",
	    sched_place_kinds_json(&m, sh));
	sched_ctx_done(&ctx);
	sched_shape_unref(s, sh);
	return plan;
}

/* ---------------------------------------------------------------- */
/* Life.							    */

struct sched *
sched_new(struct cloud *cloud)
{
	struct sched	*s;

	s = xcalloc(1, sizeof *s);
	s->cloud = cloud;
	s->store = cloud_store(cloud);
	s->state = SCHED_S_NEW;
	TAILQ_INIT(&s->job_list);
	s->zones = xcalloc(SCHED_MAX_ZONES, sizeof *s->zones);
	s->refs = 1;			/* the timer */
	if (uv_timer_init(cloud_loop(cloud), &s->timer) != 0)
		fatalx("scheduler: cannot make its timer");
	s->timer.data = s;
	s->stale = 1;
	if (store_watch(s->store, sched_on_move, s) < 0)
		fatalx("scheduler: cannot watch the store's job moves");
	return s;
}

void
sched_set_attempts(struct sched *s, struct attempts *att)
{
	struct attempt_listener	l;

	s->att = att;
	memset(&l, 0, sizeof l);
	l.arg = s;
	l.wake = sched_on_wake;
	l.wake_at = sched_on_wake_at;
	l.history_changed = sched_on_history_changed;
	l.launched = sched_on_launched;
	l.launch_failed = sched_on_launch_failed;
	l.avoid = sched_on_avoid;
	l.avoid_kind = sched_on_avoid_kind;
	l.prefer = sched_on_prefer;
	l.why = sched_on_why;
	if (att != NULL)
		attempt_set_listener(att, &l);
}

void
sched_start(struct sched *s)
{
	if (s->state != SCHED_S_NEW && s->state != SCHED_S_PRIMED)
		return;
	s->state = s->state == SCHED_S_PRIMED ? SCHED_S_UNPRICED :
	    SCHED_S_UNREADY;
	quota_set_listener(gcp_quota(cloud_gcp(s->cloud)),
	    sched_on_quota_listener, s);
	sched_arm(s, 0);
}

void
sched_get_stats(struct sched *s, struct sched_stats *ret)
{
	*ret = s->stats;
}

static void
sched_free_job(void *p)
{
	struct sched_job	*j = p;

	free(j->bad);
	free(j);
}

static void
sched_free_shape(void *p)
{
	sched_offer_shape_free(p);
}

/* Drop one reference; the last frees everything. */
static void
sched_unref(struct sched *s)
{
	size_t	i;

	if (--s->refs > 0)
		return;
	tdestroy(s->jobs, sched_free_job);
	tdestroy(s->shapes, sched_free_shape);
	free(s->looked);
	for (i = 0; i < s->nhist; i++)
		free(s->hist[i].key);
	free(s->hist);
	free(s->strike);
	free(s->sellers);
	sched_ctx_done(&s->ctx);
	free(s->items);
	free(s->walk);
	free(s->touched);
	free(s->later);
	sched_gate_free(&s->gate);
	for (i = 0; i < s->nwhy; i++)
		free(s->why_texts[i]);
	free(s->why_ids);
	free(s->why_texts);
	for (i = 0; i < s->nlive; i++) {
		free(s->live[i].why);
		free(s->live[i].live);
	}
	free(s->live);
	free(s->zones);
	free(s->zdig);
	free(s->resv);
	free(s->wscratch);
	free(s->spare);
	free(s->quota_error);
	free(s->blocked);
	free(s);
}

static void
sched_on_close(uv_handle_t *h)
{
	sched_unref(h->data);
}

void
sched_close(struct sched *s)
{
	int	started;

	if (s == NULL || s->state == SCHED_S_CLOSED)
		return;
	started = s->state != SCHED_S_NEW && s->state != SCHED_S_PRIMED;
	s->state = SCHED_S_CLOSED;
	store_unwatch(s->store, sched_on_move, s);
	if (s->att != NULL)
		attempt_set_listener(s->att, NULL);
	if (started)
		quota_set_listener(gcp_quota(cloud_gcp(s->cloud)), NULL, NULL);
	uv_close((uv_handle_t *)&s->timer, sched_on_close);
}
