/*
 * attempt.c: the live attempts and what every answer of the cloud means
 * (attempt.h).
 *
 * Every live attempt is kept in memory, indexed by attempt id, by
 * resource name and by job. Its news comes from two places: the answer
 * to its create call (attempt_launch(), or a re-launch after a crash)
 * and the reconciler's listings (attempt_seen(), attempt_unseen()).
 * Each piece of news becomes an outcome, and attempt_rules[] says what
 * that outcome may do:
 *
 *   outcome		end		from job	to	counts	wait
 *   accepted		-		launching	pending	-	-
 *   adopted		-		launching	pending	-	-
 *   running		-		launching,pend.	running	-	-
 *   succeeded		succeeded	cloud,cancelling succeeded
 *   failed		failed		cloud		queued	failure	backoff
 *   failed_last	failed		cloud		failed	failure	-
 *   preempted		preempted	cloud		queued	interr.	backoff*
 *   maintenance	maintenance	cloud		queued	interr.	backoff*
 *   stockout		stockout	cloud		queued	interr.	backoff*
 *							+ cool-down
 *	(a stockout before the attempt started counts nothing and waits
 *	for the cool-down only: attempt_end_counts())
 *   lost		lost		cloud		queued	interr.	backoff*
 *   interrupted_last	(its kind)	cloud		failed	interr.	-
 *   quota		quota		cloud		queued	-	quota
 *							+ avoid, re-read quota
 *   launch_quota	launch_error	launching	queued	-	quota
 *							+ avoid, re-read quota
 *   launch_stockout	launch_error	launching	queued	-	-
 *							+ cool-down
 *   launch_transient	launch_error	launching	queued	-	backoff
 *   launch_place	launch_error	launching	queued	-	- avoid
 *   launch_invalid	launch_error	launching	failed	-	-
 *   cancelled		cancelled	cloud,cancelling cancelled
 *   limit		limit		cloud,cancelling failed
 *   pending		pending		cloud		queued	-	-
 *							+ avoid
 *
 * (*) An interruption's backoff is over the job's interruptions in the
 * hour before (att_recent_interruptions()): none for the first.
 *
 * A job found cancelling takes the cancelled row instead, unless the
 * outcome's own row applies from cancelling (succeeded, limit). A row
 * that counts moves to its "over" row once the count passes the job's
 * max_failures or max_interruptions. A requeue is one store transaction
 * (store_job_requeue: the attempt's end, the job's move, its backoff and
 * why); any other end is the attempt's end and the job's move.
 *
 * Before a job goes back to the queue after its attempt ran, the newest
 * checkpoint under its checkpoint directory is looked up and stored, so
 * the next attempt's GPUQ_RESUME_FROM is right; the attempt is ended
 * only when that lookup is back, so a crash meanwhile repeats it. A live
 * attempt a complete listing does not show is re-launched under the
 * same name and request id if it is still "launching" (we crashed
 * before or during the create call), or ended as lost after two such
 * listings in a row. A resource carrying our install label and no live
 * attempt is an orphan: cancelled (Compute Engine VMs also once
 * stopped, since their disks still cost). Cancels and the limits
 * (max_runtime, max_total_usd) end here too, and so does an attempt the
 * cloud has kept queued longer than its pending timeout (the job's
 * pending_timeout, else [scheduler] pending_timeout): it is cancelled,
 * and once the cloud has it cancelled the job is queued again at once,
 * kept off that provider and region for as long again, counting neither
 * a failure nor an interruption (doc/DESIGN.md "Outcomes").
 *
 * Knows the store, the cloud (cloud.h), quotas (quota.h) and the
 * listener the scheduler registers; not sched.h, not reconcile.h.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stddef.h>
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
#include "daemon/cost.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"

#define ATT_MISSES		2	/* complete listings without it, then
					   an attempt is lost */
#define ATT_RELAUNCH_SETTLE	20	/* seconds an attempt row of a
					   service without request ids is
					   left before it is created again */
#define ATT_CKPT_EVERY		10	/* cycles between checkpoint listings
					   of one running job */
#define ATT_CKPT_PER_CYCLE	1	/* running jobs' listings per cycle */
#define ATT_ORPHAN_QUIET	10	/* cycles before an orphan is
					   cancelled again */
#define ATT_SKEW		30	/* seconds a cloud time may lead ours */
#define ATT_NAME		64
#define ATT_SPLIT_MAX		512	/* longest name kept in parts
					   (att_set_cloud_id(),
					   att_entry_new()) */
#define ATT_QUOTA_RETRY_SEC	2	/* requeue delay after a quota error */
#define ATT_PLACE_AVOID_SEC	3600	/* a place that refused a job */
#define ATT_MAX_ZONES		64	/* zones of a region cooled down */
#define ATT_RECENT_SEC		3600	/* interruptions this close together
					   back off; a first one does not */

#define M(s)	JOB_MASK(JOB_##s)
#define CLOUD	JOB_MASK_CLOUD

/* The table of legal changes (the comment at the top draws it). */
static const struct attempt_rule attempt_rules[ATTEMPT_OUT_COUNT] = {
	[ATTEMPT_OUT_ACCEPTED] = { "accepted", END_NONE, M(LAUNCHING),
	    JOB_PENDING, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_ADOPTED] = { "adopted", END_NONE, M(LAUNCHING),
	    JOB_PENDING, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_RUNNING] = { "running", END_NONE, M(LAUNCHING) |
	    M(PENDING), JOB_RUNNING, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_SUCCEEDED] = { "succeeded", END_SUCCEEDED, CLOUD |
	    M(CANCELLING), JOB_SUCCEEDED, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0,
	    0 },
	[ATTEMPT_OUT_FAILED] = { "failed", END_FAILED, CLOUD, JOB_QUEUED,
	    ATTEMPT_COUNTS_FAILURE, ATTEMPT_OUT_FAILED_LAST,
	    ATTEMPT_WAIT_BACKOFF, 0, 0, 0 },
	[ATTEMPT_OUT_FAILED_LAST] = { "failed_last", END_FAILED, CLOUD,
	    JOB_FAILED, ATTEMPT_COUNTS_FAILURE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_PREEMPTED] = { "preempted", END_PREEMPTED, CLOUD,
	    JOB_QUEUED, ATTEMPT_COUNTS_INTERRUPTION,
	    ATTEMPT_OUT_INTERRUPTED_LAST, ATTEMPT_WAIT_BACKOFF, 0, 0, 0 },
	[ATTEMPT_OUT_MAINTENANCE] = { "maintenance", END_MAINTENANCE, CLOUD,
	    JOB_QUEUED, ATTEMPT_COUNTS_INTERRUPTION,
	    ATTEMPT_OUT_INTERRUPTED_LAST, ATTEMPT_WAIT_BACKOFF, 0, 0, 0 },
	[ATTEMPT_OUT_STOCKOUT] = { "stockout", END_STOCKOUT, CLOUD,
	    JOB_QUEUED, ATTEMPT_COUNTS_INTERRUPTION,
	    ATTEMPT_OUT_INTERRUPTED_LAST, ATTEMPT_WAIT_BACKOFF, 0, 1, 0 },
	[ATTEMPT_OUT_LOST] = { "lost", END_LOST, CLOUD, JOB_QUEUED,
	    ATTEMPT_COUNTS_INTERRUPTION, ATTEMPT_OUT_INTERRUPTED_LAST,
	    ATTEMPT_WAIT_BACKOFF, 0, 0, 0 },
	/* Ends with the kind of interruption that went over. */
	[ATTEMPT_OUT_INTERRUPTED_LAST] = { "interrupted_last", END_NONE,
	    CLOUD, JOB_FAILED, ATTEMPT_COUNTS_INTERRUPTION, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_QUOTA] = { "quota", END_QUOTA, CLOUD, JOB_QUEUED,
	    ATTEMPT_COUNTS_NONE, -1, ATTEMPT_WAIT_QUOTA,
	    ATTEMPT_AVOID_QUOTA_TTL, 0, 1 },
	[ATTEMPT_OUT_LAUNCH_QUOTA] = { "launch_quota", END_LAUNCH_ERROR,
	    M(LAUNCHING), JOB_QUEUED, ATTEMPT_COUNTS_NONE, -1,
	    ATTEMPT_WAIT_QUOTA, ATTEMPT_AVOID_QUOTA_TTL, 0, 1 },
	[ATTEMPT_OUT_LAUNCH_STOCKOUT] = { "launch_stockout",
	    END_LAUNCH_ERROR, M(LAUNCHING), JOB_QUEUED, ATTEMPT_COUNTS_NONE,
	    -1, ATTEMPT_WAIT_NONE, 0, 1, 0 },
	[ATTEMPT_OUT_LAUNCH_TRANSIENT] = { "launch_transient",
	    END_LAUNCH_ERROR, M(LAUNCHING), JOB_QUEUED, ATTEMPT_COUNTS_NONE,
	    -1, ATTEMPT_WAIT_BACKOFF, 0, 0, 0 },
	[ATTEMPT_OUT_LAUNCH_PLACE] = { "launch_place", END_LAUNCH_ERROR,
	    M(LAUNCHING), JOB_QUEUED, ATTEMPT_COUNTS_NONE, -1,
	    ATTEMPT_WAIT_NONE, ATTEMPT_AVOID_HOUR, 0, 0 },
	[ATTEMPT_OUT_LAUNCH_INVALID] = { "launch_invalid", END_LAUNCH_ERROR,
	    M(LAUNCHING), JOB_FAILED, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_CANCELLED] = { "cancelled", END_CANCELLED, CLOUD |
	    M(CANCELLING), JOB_CANCELLED, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0,
	    0 },
	[ATTEMPT_OUT_LIMIT] = { "limit", END_LIMIT, CLOUD | M(CANCELLING),
	    JOB_FAILED, ATTEMPT_COUNTS_NONE, -1, 0, 0, 0, 0 },
	[ATTEMPT_OUT_PENDING] = { "pending", END_PENDING, CLOUD, JOB_QUEUED,
	    ATTEMPT_COUNTS_NONE, -1, ATTEMPT_WAIT_NONE, ATTEMPT_AVOID_PENDING,
	    0, 0 },
	[ATTEMPT_OUT_MOVED] = { "moved", END_PENDING, CLOUD, JOB_QUEUED,
	    ATTEMPT_COUNTS_NONE, -1, ATTEMPT_WAIT_NONE, 0, 0, 0 },
};

#undef M
#undef CLOUD

/*
 * One live attempt. 10,000 running jobs hold 10,000 of these: the
 * pointers and 64-bit fields come first, then the small ones, then the
 * flags as bits, so it has no holes (doc/DESIGN.md "Memory").
 */
struct attempt {
	struct attempts		*at;
	struct store_attempt	*a;		/* copy, kept current, in the
						   same block (att_entry_new) */
	const struct provider	*prov;		/* NULL: not enabled */
	TAILQ_ENTRY(attempt)	 alink;		/* all, round-robin order */

	/* The job, as it was when the attempt was tracked. */
	double			 max_total;	/* USD; 0 none */
	double			 job_cost;	/* ended attempts' cost then */
	char			*ckpt_head;	/* gs://.../checkpoints/: up
						   to the job's id, shared;
						   NULL: all in ckpt_tail */
	char			*ckpt_tail;	/* after it, shared; or the
						   whole, in the block
						   (att_ckpt_dir()) */
	char			*ckpt_last;	/* newest one stored */

	/* What listings said. */
	char			*zone;		/* shared (att_str_get()) */
	char			*cid_head;	/* the cloud's name for it up
						   to its last '/', shared */
	char			*cid_tail;	/* the rest: a->resource
						   itself, or its own
						   (att_cloud_id()) */
	int64_t			 running_seen;	/* our clock */
	uint64_t		 ckpt_cycle;	/* last listing, cycle number */
	unsigned		 since_gen;	/* tracked in this cycle */
	unsigned		 seen_gen;

	/* The create call's quota hold. */
	char			*metric;	/* only while held */
	char			*cpu_metric;	/* NULL: none */

	char			*cancel_msg;
	char			*pending_msg;	/* the cloud's word while
						   queued, or NULL */

	/* The end decided (ending). */
	char			*end_msg;
	int64_t			 end_when;
	int64_t			 billed_end;	/* the cloud's, or 0 */

	/* A gang whose service lists each node (att_node_seen()). */
	unsigned		*node_gen;	/* [nodes] listing last seen */
	int			*node_state;	/* [nodes] enum prov_state */

	/* The job's limits, seconds (att_secs()). */
	int32_t			 max_runtime;	/* 0 none */
	int32_t			 pending_timeout; /* 0: the conf's */
	int32_t			 flex_wait;	/* flex-start attempts */

	int			 refs;		/* table + calls in flight */
	int			 missed;	/* listings in a row */
	int			 vcpus;		/* held, of cpu_metric */
	int			 end_exit;
	unsigned char		 svc;		/* enum gcp_service of the
						   hold */
	unsigned char		 cancel_reason;	/* END_CANCELLED, END_LIMIT or
						   END_PENDING */
	unsigned char		 end_out;	/* enum attempt_outcome */

	unsigned		 dead:1;	/* out of the table */
	unsigned		 job_terminal:1; /* job ended: only cancel */
	unsigned		 started_cloud:1; /* a->started is the cloud's */
	unsigned		 in_flight:1;	/* a launch call is out */
	unsigned		 relaunch:1;	/* of a crash survivor */
	unsigned		 reserved:1;	/* quota held */
	unsigned		 cancel_wanted:1;
	unsigned		 cancel_in_flight:1;
	unsigned		 cancel_move:1;	/* END_PENDING: attempt_move */
	unsigned		 ending:1;	/* end decided, checkpoint
						   lookup out */
};
TAILQ_HEAD(attempt_list, attempt);

/* An orphan being (or lately) cancelled. */
struct att_orphan {
	char			*name;
	uint64_t		 cycle;		/* when the cancel was sent */
	int			 in_flight;
	struct attempts		*at;
};

/*
 * A text many attempts share -- a provider, region, zone, machine type,
 * GPU, capacity kind or reservation -- kept once and counted: 10,000
 * attempts in one zone hold 10,000 pointers to one "us-central1-a"
 * (doc/DESIGN.md "Memory").
 */
struct att_str {
	unsigned		 refs;
	char			 s[];
};

/*
 * An index of the live attempts: open addressing with linear probing,
 * one pointer a slot, at most three quarters full (13 bytes an attempt
 * at 10,000) where a tsearch tree took a 32-byte node (doc/DESIGN.md
 * "Memory"). Like the trees before it, it holds one attempt per key:
 * the first.
 */
enum att_key {
	ATT_KEY_RES,			/* a->resource */
	ATT_KEY_JOB,			/* a->job_id */
};

struct att_index {
	struct attempt		**slot;
	size_t			  cap;		/* 0 or a power of two */
	size_t			  n;
	int			  key;		/* enum att_key */
};

struct attempts {
	struct cloud		*cloud;		/* borrowed */
	struct store		*store;		/* borrowed */
	struct attempt_listener	 l;
	int			 refs;		/* 1 + calls in flight */
	int			 closing;

	struct att_index	 by_res;	/* the live attempts, by */
	struct att_index	 by_job;	/*   resource and by job */
	struct attempt_list	 all;
	int			 nlive;
	void			*strs;		/* tsearch tree of att_str's
						   text */
	void			*orphans;	/* tsearch tree of att_orphan */

	unsigned		 gen;		/* poll cycle, wraps */
	uint64_t		 cycle;
	struct quota_zone	 zones[ATT_MAX_ZONES];
	struct attempt_stats	 stats;
};

static void	att_unref(struct attempts *);
static void	att_entry_unref(struct attempt *);
static void	att_finish(struct attempt *);
static void	att_cancel_start(struct attempt *);
static int64_t	att_pending_limit(const struct attempt *);
static int	att_delete(struct attempts *, const struct provider *, int,
	    const char *, const char *, const char *, const char *);

const struct attempt_rule *
attempt_rule(int outcome)
{
	if (outcome < 0 || outcome >= ATTEMPT_OUT_COUNT)
		return NULL;
	return &attempt_rules[outcome];
}

/* ---------------------------------------------------------------- */
/* The table of live attempts.					    */

static int
att_orphan_cmp(const void *a, const void *b)
{
	return strcmp(((const struct att_orphan *)a)->name,
	    ((const struct att_orphan *)b)->name);
}

static int
att_str_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* S, shared (NULL: NULL). Give it back with att_str_put(). */
static char *
att_str_get(struct attempts *at, const char *s)
{
	struct att_str	*t;
	char		**found;
	size_t		 n;

	if (s == NULL)
		return NULL;
	if ((found = tfind(s, &at->strs, att_str_cmp)) != NULL) {
		t = (struct att_str *)(*found - offsetof(struct att_str, s));
		t->refs++;
		return *found;
	}
	n = strlen(s) + 1;
	t = xmalloc(sizeof *t + n);
	t->refs = 1;
	memcpy(t->s, s, n);
	if (tsearch(t->s, &at->strs, att_str_cmp) == NULL)
		fatalx("attempts: out of memory");
	return t->s;
}

/* Give back S from att_str_get() (NULL: nothing). */
static void
att_str_put(struct attempts *at, char *s)
{
	struct att_str	*t;

	if (s == NULL)
		return;
	t = (struct att_str *)(s - offsetof(struct att_str, s));
	if (--t->refs > 0)
		return;
	(void)tdelete(s, &at->strs, att_str_cmp);
	free(t);
}

/* The home slot of A's key in a table of CAP (a power of two) slots. */
static size_t
att_index_home(int key, const struct store_attempt *a, size_t cap)
{
	const unsigned char	*c;
	uint64_t		 h;

	if (key == ATT_KEY_JOB)
		h = (uint64_t)a->job_id;
	else {
		h = 14695981039346656037ULL;	/* FNV-1a */
		for (c = (const unsigned char *)a->resource; *c != '\0'; c++)
			h = (h ^ *c) * 1099511628211ULL;
	}
	/* Fibonacci hashing: the top bits of the product. */
	h *= 11400714819323198485ULL;
	return (size_t)(h >> 32) & (cap - 1);
}

static int
att_index_same(int key, const struct store_attempt *x,
    const struct store_attempt *y)
{
	if (key == ATT_KEY_JOB)
		return x->job_id == y->job_id;
	return strcmp(x->resource, y->resource) == 0;
}

/* The slot of the attempt with A's key, or of the empty slot ending
 * its probe. */
static size_t
att_index_slot(const struct att_index *ix, const struct store_attempt *a)
{
	size_t	i = att_index_home(ix->key, a, ix->cap);

	while (ix->slot[i] != NULL &&
	    !att_index_same(ix->key, ix->slot[i]->a, a))
		i = (i + 1) & (ix->cap - 1);
	return i;
}

static struct attempt *
att_index_find(const struct att_index *ix, const struct store_attempt *a)
{
	return ix->cap != 0 ? ix->slot[att_index_slot(ix, a)] : NULL;
}

/* Move every entry into a table of CAP slots. */
static void
att_index_resize(struct att_index *ix, size_t cap)
{
	struct attempt	**old = ix->slot;
	size_t		  i, oldcap = ix->cap;

	ix->slot = xcalloc(cap, sizeof *ix->slot);
	ix->cap = cap;
	for (i = 0; i < oldcap; i++)
		if (old[i] != NULL)
			ix->slot[att_index_slot(ix, old[i]->a)] = old[i];
	free(old);
}

/* Index E, unless an attempt with its key is there already. */
static void
att_index_add(struct att_index *ix, struct attempt *e)
{
	size_t	i;

	if ((ix->n + 1) * 4 > ix->cap * 3)
		att_index_resize(ix, ix->cap != 0 ? ix->cap * 2 : 16);
	i = att_index_slot(ix, e->a);
	if (ix->slot[i] == NULL) {
		ix->slot[i] = e;
		ix->n++;
	}
}

/* Take E (itself, not another with its key) out of the index. */
static void
att_index_del(struct att_index *ix, struct attempt *e)
{
	size_t	i, j, home, mask = ix->cap - 1;

	if (ix->cap == 0)
		return;
	i = att_index_slot(ix, e->a);
	if (ix->slot[i] != e)
		return;
	/* Close the gap: move back each later entry of the run whose
	 * home is not between the gap and itself. */
	for (j = (i + 1) & mask; ix->slot[j] != NULL; j = (j + 1) & mask) {
		home = att_index_home(ix->key, ix->slot[j]->a, ix->cap);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			ix->slot[i] = ix->slot[j];
			i = j;
		}
	}
	ix->slot[i] = NULL;
	ix->n--;
	/* Right-size: a daemon that ran 10,000 jobs and now runs ten
	 * keeps no 128 KiB tables. */
	if (ix->n == 0) {
		free(ix->slot);
		ix->slot = NULL;
		ix->cap = 0;
	} else if (ix->cap > 16 && ix->n * 8 < ix->cap)
		att_index_resize(ix, ix->cap / 2);
}

static struct attempt *
att_find_res(struct attempts *at, const char *resource)
{
	struct store_attempt	 a;

	a.resource = (char *)resource;
	return att_index_find(&at->by_res, &a);
}

static struct attempt *
att_find_job(struct attempts *at, int64_t job_id)
{
	struct store_attempt	 a;

	a.job_id = job_id;
	return att_index_find(&at->by_job, &a);
}

/* Seconds S as an entry keeps them: 32 bits hold 68 years, past any
 * limit that could ever be reached. */
static int32_t
att_secs(int64_t s)
{
	return s > INT32_MAX ? INT32_MAX : s < 0 ? 0 : (int32_t)s;
}

/* The job facts an entry keeps, from SPEC (borrowed). */
static void
att_entry_job(struct attempt *e, const struct store_job *job, json_t *spec)
{
	json_t	*v;

	v = json_object_get(spec, "max_runtime");
	e->max_runtime = att_secs(json_is_integer(v) ?
	    json_integer_value(v) : 0);
	v = json_object_get(spec, "pending_timeout");
	e->pending_timeout = att_secs(json_is_integer(v) ?
	    json_integer_value(v) : 0);
	e->flex_wait = att_secs(cloud_flex_wait(spec));
	v = json_object_get(spec, "max_total_usd");
	e->max_total = json_is_number(v) ? json_number_value(v) : 0;
	e->job_cost = job->cost_usd;
	free(e->ckpt_last);
	e->ckpt_last = job->checkpoint != NULL ? xstrdup(job->checkpoint) :
	    NULL;
	e->job_terminal = job->state == JOB_SUCCEEDED ||
	    job->state == JOB_FAILED || job->state == JOB_CANCELLED;
}

/* Copy string S to *P in a packed block, or NULL. */
static char *
att_pack_str(char **p, const char *s)
{
	char	*d = *p;
	size_t	 n;

	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	memcpy(d, s, n);
	*p = d + n;
	return d;
}

/*
 * A new entry and its copy of A in one allocation: the struct attempt,
 * then the struct store_attempt, then its own strings; the texts many
 * attempts share are att_str_get()'s, and so is CKPT_DIR (or NULL), in
 * two parts around the job's id, unless it does not hold the id as a
 * path part (then it is in the block too). The copy's
 * strings are never changed in place (only its state, started and
 * billed_start are), nor is the checkpoint place, so they can share the
 * block; a daemon with 10,000 running attempts then pays one malloc
 * chunk per attempt instead of eleven, each chunk's header and rounding
 * included (bench/memory.py; doc/DESIGN.md "Memory"). Every string
 * field of struct store_attempt is either here or shared: none is
 * allocated alone, and att_entry_unref() gives back the shared ones.
 */
static struct attempt *
att_entry_new(struct attempts *at, const struct store_attempt *a,
    const char *ckpt_dir)
{
	const char		*strs[] = { a->resource, a->cloud_id,
				    a->message, a->resumed_from, NULL };
	struct attempt		*e;
	struct store_attempt	*c;
	size_t			 len = 0, i;
	char			*p, *id, head[ATT_SPLIT_MAX], key[32];

	/* The checkpoint place of a job is the same for every job of an
	 * output place, but for the job's id: shared, in two parts. */
	(void)snprintf(key, sizeof key, "/%" PRId64 "/", a->job_id);
	id = ckpt_dir != NULL && strlen(ckpt_dir) < sizeof head ?
	    strstr(ckpt_dir, key) : NULL;
	if (id == NULL)
		strs[4] = ckpt_dir;

	for (i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (strs[i] != NULL)
			len += strlen(strs[i]) + 1;
	e = xcalloc(1, sizeof *e + sizeof *c + len);
	c = (struct store_attempt *)(e + 1);
	*c = *a;
	p = (char *)(c + 1);
	c->resource = att_pack_str(&p, a->resource);
	c->cloud_id = att_pack_str(&p, a->cloud_id);
	c->message = att_pack_str(&p, a->message);
	c->resumed_from = att_pack_str(&p, a->resumed_from);
	if (id != NULL) {
		memcpy(head, ckpt_dir, (size_t)(id + 1 - ckpt_dir));
		head[id + 1 - ckpt_dir] = '\0';
		e->ckpt_head = att_str_get(at, head);
		e->ckpt_tail = att_str_get(at, id + strlen(key) - 1);
	} else
		e->ckpt_tail = att_pack_str(&p, ckpt_dir);
	c->provider = att_str_get(at, a->provider);
	c->region = att_str_get(at, a->region);
	c->zone = att_str_get(at, a->zone);
	c->machine_type = att_str_get(at, a->machine_type);
	c->gpu = att_str_get(at, a->gpu);
	c->capacity = att_str_get(at, a->capacity);
	c->reservation = att_str_get(at, a->reservation);
	e->a = c;
	return e;
}

/* Put a copy of attempt A in the table. */
static struct attempt *
att_add(struct attempts *at, const struct store_attempt *a,
    const struct store_job *job, json_t *spec)
{
	struct attempt	*e;
	char		*ckpt_dir;

	/* Its resource name is its own (cloud.h): no need for an index
	 * by id. */
	if ((e = att_find_res(at, a->resource)) != NULL && e->a->id == a->id)
		return e;
	ckpt_dir = cloud_checkpoint_dir(at->cloud, spec, job->id);
	e = att_entry_new(at, a, ckpt_dir);
	free(ckpt_dir);
	e->at = at;
	e->refs = 1;
	e->prov = cloud_provider(at->cloud, a->provider);
	e->since_gen = at->gen;
	e->ckpt_cycle = at->cycle;
	e->cancel_reason = END_CANCELLED;
	if (a->state == ATTEMPT_RUNNING)
		e->running_seen = a->started > 0 ? a->started : clock_now();
	att_entry_job(e, job, spec);
	att_index_add(&at->by_res, e);
	att_index_add(&at->by_job, e);
	TAILQ_INSERT_TAIL(&at->all, e, alink);
	at->nlive++;
	return e;
}

/* The GPUs attempt A holds: every node's (doc/DESIGN.md "Gangs"). */
static int
att_gpus(const struct store_attempt *a)
{
	return a->gpu_count * (a->nodes > 1 ? a->nodes : 1);
}

/* The quota E held: given back (its launch made nothing) or, COMMIT,
 * in use now. */
static void
att_settle_hold(struct attempt *e, int commit)
{
	struct quota	*q = gcp_quota(cloud_gcp(e->at->cloud));
	void		(*fn)(struct quota *, enum gcp_service, const char *,
			    const char *, double);

	if (!e->reserved)
		return;
	e->reserved = 0;
	fn = commit ? quota_commit : quota_release;
	fn(q, e->svc, e->a->region, e->metric, att_gpus(e->a));
	if (e->cpu_metric != NULL)
		fn(q, GCP_SERVICE_GCE, e->a->region, e->cpu_metric, e->vcpus);
	free(e->metric);
	free(e->cpu_metric);
	e->metric = e->cpu_metric = NULL;
}

/* Take E out of the table; it is freed when its last call is back. */
static void
att_remove(struct attempt *e)
{
	struct attempts	*at = e->at;

	if (e->dead)
		return;
	e->dead = 1;
	att_index_del(&at->by_res, e);
	att_index_del(&at->by_job, e);
	TAILQ_REMOVE(&at->all, e, alink);
	at->nlive--;
	att_entry_unref(e);
}

/* E's checkpoint place, made whole in BUF (ATT_SPLIT_MAX bytes) if need
 * be; NULL: none. */
static const char *
att_ckpt_dir(const struct attempt *e, char *buf)
{
	if (e->ckpt_head == NULL)
		return e->ckpt_tail;
	(void)snprintf(buf, ATT_SPLIT_MAX, "%s%" PRId64 "%s", e->ckpt_head,
	    e->a->job_id, e->ckpt_tail);
	return buf;
}

/* Forget the cloud's name for E (att_set_cloud_id()). */
static void
att_drop_cloud_id(struct attempt *e)
{
	att_str_put(e->at, e->cid_head);
	if (e->cid_tail != e->a->resource)
		free(e->cid_tail);
	e->cid_head = e->cid_tail = NULL;
}

/*
 * The cloud named E ID (its create answer or a listing; the row has
 * none). Kept in two parts: what comes before its last '/' is the same
 * for every attempt of a service and region ("projects/P/locations/R/
 * jobs/"), so it is shared, and what follows is often E's own resource
 * name (Batch), so it costs nothing: 80 bytes a running Batch job less
 * (doc/DESIGN.md "Memory").
 */
static void
att_set_cloud_id(struct attempt *e, const char *id)
{
	const char	*slash;
	char		 head[ATT_SPLIT_MAX];
	size_t		 n;

	att_drop_cloud_id(e);
	if (id == NULL)
		return;
	if ((slash = strrchr(id, '/')) == NULL ||
	    strlen(id) >= sizeof head) {
		e->cid_tail = xstrdup(id);
		return;
	}
	n = (size_t)(slash + 1 - id);
	memcpy(head, id, n);
	head[n] = '\0';
	e->cid_head = att_str_get(e->at, head);
	e->cid_tail = strcmp(slash + 1, e->a->resource) == 0 ?
	    e->a->resource : xstrdup(slash + 1);
}

/* E's cloud name: its row's, else what the cloud said, made whole in
 * BUF (ATT_SPLIT_MAX bytes) if need be; NULL if none is known. */
static const char *
att_cloud_id(const struct attempt *e, char *buf)
{
	if (e->a->cloud_id != NULL)
		return e->a->cloud_id;
	if (e->cid_head == NULL)
		return e->cid_tail;
	(void)snprintf(buf, ATT_SPLIT_MAX, "%s%s", e->cid_head, e->cid_tail);
	return buf;
}

static void
att_entry_unref(struct attempt *e)
{
	if (--e->refs > 0)
		return;
	/* e->a and its own strings are part of E; the shared ones are
	 * given back (att_entry_new()). */
	if (e->ckpt_head != NULL) {
		att_str_put(e->at, e->ckpt_head);
		att_str_put(e->at, e->ckpt_tail);
	}
	att_str_put(e->at, e->a->provider);
	att_str_put(e->at, e->a->region);
	att_str_put(e->at, e->a->zone);
	att_str_put(e->at, e->a->machine_type);
	att_str_put(e->at, e->a->gpu);
	att_str_put(e->at, e->a->capacity);
	att_str_put(e->at, e->a->reservation);
	att_str_put(e->at, e->zone);
	att_drop_cloud_id(e);
	free(e->ckpt_last);
	free(e->cancel_msg);
	free(e->pending_msg);
	free(e->end_msg);
	free(e->metric);
	free(e->cpu_metric);
	free(e->node_gen);
	free(e->node_state);
	free(e);
}

/* ---------------------------------------------------------------- */
/* Small helpers.						    */

/* A time the cloud gave, if it is not in our future: else 0. */
static int64_t
att_plausible(int64_t t, int64_t now)
{
	return t > 0 && t <= now + ATT_SKEW ? t : 0;
}

/* "gce/us-central1-a" or "vertex/us-central1" of E. New. */
static char *
att_place(const struct attempt *e)
{
	const char	*z = e->a->zone != NULL ? e->a->zone : e->zone;

	return xprintf("%s/%s", e->a->provider, z != NULL ? z : e->a->region);
}

/* "1h02m", "3m05s", "42s". */
static void
att_duration(int64_t sec, char *buf, size_t len)
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

/* "HH:MM" of T in local time into BUF. */
static void
att_clock(int64_t t, char *buf, size_t len)
{
	time_t		tt = (time_t)t;
	struct tm	tm;

	if (localtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%H:%M", &tm) == 0)
		(void)snprintf(buf, len, "%" PRId64, t);
}

/* Move job ID from MASK to TO with MSG; log what goes wrong. */
static int
att_job_move(struct attempts *at, int64_t id, unsigned mask, int to,
    const char *msg, int *ret_state)
{
	char	*cause = NULL;
	int	 rc;

	rc = store_job_transition(at->store, id, mask, to, msg, ret_state,
	    &cause);
	if (rc < 0 && rc != -EALREADY)
		log_warnx("job %" PRId64 ": %s", id, cause);
	free(cause);
	return rc;
}

static void
att_wake(struct attempts *at)
{
	if (at->l.wake != NULL)
		at->l.wake(at->l.arg);
}

static void
att_wake_at(struct attempts *at, int64_t when)
{
	if (at->l.wake_at != NULL)
		at->l.wake_at(at->l.arg, when);
}

int64_t
attempt_backoff(struct attempts *at, int n)
{
	const struct conf	*conf = cloud_conf(at->cloud);

	return cost_backoff(conf->backoff_base, conf->backoff_max,
	    n < 0 ? 0 : n, (double)random() / RAND_MAX);
}

int64_t
attempt_cooldown(struct attempts *at, const struct store_attempt *a,
    const char *zone, int64_t now)
{
	const struct conf	*conf = cloud_conf(at->cloud);
	struct quota		*q = gcp_quota(cloud_gcp(at->cloud));
	char			*cause = NULL;
	const char		*z;
	int64_t			 until, last = now;
	int			 i, nz;

	if (a->gpu == NULL)
		return now;
	if (zone != NULL)
		nz = 1;
	else if ((nz = quota_zones(q, a->region, a->gpu, at->zones,
	    ATT_MAX_ZONES)) < 0)
		nz = 0;
	for (i = 0; i < nz; i++) {
		if (zone == NULL && at->zones[i].max_per_vm < a->gpu_count)
			continue;
		z = zone != NULL ? zone : at->zones[i].zone;
		if (store_cooldown_strike(at->store, z, a->gpu,
		    cloud_attempt_capacity(a), now,
		    conf->stockout_cooldown, conf->stockout_cooldown_max,
		    &until, &cause) < 0) {
			log_warnx("attempts: cannot record a stockout in %s: "
			    "%s", z, cause);
			free(cause);
			cause = NULL;
			continue;
		}
		if (until > last)
			last = until;
	}
	if (last > now)
		att_wake_at(at, last + 1);
	return last;
}

/*
 * The side effects RULE has on the job of attempt A beyond its move:
 * the region's quota re-read, the place avoided (PENDING_SEC: for how
 * long after a pending timeout).
 */
static void
att_rule_effects(struct attempts *at, const struct attempt_rule *rule,
    const struct store_attempt *a, int64_t now, int64_t pending_sec)
{
	int64_t	until = 0;

	if (rule->requota)
		quota_invalidate(gcp_quota(cloud_gcp(at->cloud)), a->region);
	if (rule->avoid == ATTEMPT_AVOID_QUOTA_TTL)
		until = now + cloud_conf(at->cloud)->quota_ttl;
	else if (rule->avoid == ATTEMPT_AVOID_HOUR)
		until = now + ATT_PLACE_AVOID_SEC;
	else if (rule->avoid == ATTEMPT_AVOID_PENDING)
		until = now + pending_sec;
	/* An unfulfilled flex-start request keeps only flex off the place:
	 * the job may take other capacity there at once. */
	if (until > 0 && rule->avoid == ATTEMPT_AVOID_PENDING &&
	    cloud_attempt_capacity(a) == CAPACITY_FLEX &&
	    at->l.avoid_kind != NULL) {
		at->l.avoid_kind(at->l.arg, a->job_id, cloud_provider(at->cloud,
		    a->provider), a->region, CAPACITY_FLEX, until);
		return;
	}
	if (until > 0 && at->l.avoid != NULL)
		at->l.avoid(at->l.arg, a->job_id, cloud_provider(at->cloud,
		    a->provider), a->region, until);
}

/* Interruptions of JOB_ID, other than attempt SELF, ended since SINCE. */
struct att_recent {
	int64_t	self;
	int64_t	since;
	int	n;
};

static int
att_recent_one(const struct store_attempt *a, void *arg)
{
	struct att_recent	*r = arg;

	if (a->id != r->self && a->ended >= r->since &&
	    attempt_end_counts(a->end_reason, a->started))
		r->n++;
	return 0;
}

/*
 * How many times A's job was interrupted in the ATT_RECENT_SEC before
 * NOW, A aside. An interruption is not the job's fault: the first in a
 * while relaunches at once (the stockout cool-down already keeps it off
 * the zone that failed it); only repeated ones back off
 * (doc/DESIGN.md "Outcomes").
 */
static int
att_recent_interruptions(struct attempts *at, const struct store_attempt *a,
    int64_t now)
{
	struct att_recent	 r = { a->id, now - ATT_RECENT_SEC, 0 };
	char			*cause = NULL;

	if (store_attempt_list(at->store, a->job_id, att_recent_one, &r,
	    &cause) < 0) {
		log_warnx("job %" PRId64 ": %s", a->job_id, cause);
		free(cause);
		return 1;		/* not knowing, be careful */
	}
	return r.n;
}

/* The not-before of RULE's requeue; N: the count the backoff is of. */
static int64_t
att_rule_delay(struct attempts *at, const struct attempt_rule *rule, int n)
{
	switch (rule->wait) {
	case ATTEMPT_WAIT_BACKOFF:
		return attempt_backoff(at, n);
	case ATTEMPT_WAIT_QUOTA:
		return ATT_QUOTA_RETRY_SEC;
	default:
		return 0;
	}
}

/*
 * End attempt A as END says and move its job as RULE says, with MSG;
 * a requeue (not before NOT_BEFORE, waiting because WHY) is one commit.
 * A job that moved meanwhile only gets the attempt's end, and a job
 * cancelled meanwhile becomes cancelled. 0, or -errno when the attempt
 * could not be ended (try again later).
 */
static int
att_settle(struct attempts *at, const struct store_attempt *a,
    const struct attempt_rule *rule, const struct store_end *end,
    const char *msg, int64_t not_before, const char *why)
{
	char	*cause = NULL;
	int	 rc, state = -1;

	if (rule->to == JOB_QUEUED) {
		rc = store_job_requeue(at->store, a->job_id, rule->from, end,
		    not_before, msg, why, &state, &cause);
		if (rc == 0) {
			if (at->l.why != NULL)
				at->l.why(at->l.arg, a->job_id, why);
			if (not_before > clock_now())
				att_wake_at(at, not_before);
			return 0;
		}
		if (rc != -EALREADY) {
			log_warnx("job %" PRId64 ": %s", a->job_id, cause);
			free(cause);
			return rc;
		}
		free(cause);
		cause = NULL;
	}
	rc = store_attempt_end_with(at->store, end, &cause);
	if (rc < 0 && rc != -EALREADY) {
		log_warnx("job %" PRId64 ": cannot end attempt %d: %s",
		    a->job_id, a->number, cause);
		free(cause);
		return rc;
	}
	free(cause);
	if (rule->to != JOB_QUEUED)
		rc = att_job_move(at, a->job_id, rule->from, rule->to, msg,
		    &state);
	else
		rc = -EALREADY;
	if (rc == -EALREADY && state == JOB_CANCELLING)
		(void)att_job_move(at, a->job_id, JOB_MASK(JOB_CANCELLING),
		    JOB_CANCELLED, "cancelled", NULL);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Launches.							    */

/* The answer to E's create call: its outcome. */
static int
att_launch_outcome(const struct attempt *e, const struct prov_result *r)
{
	const struct store_attempt	*a = e->a;
	const char			*m = r->message;

	switch (r->fail) {
	case PROV_FAIL_NONE:
	case PROV_FAIL_EXISTS:
		return ATTEMPT_OUT_ACCEPTED;
	case PROV_FAIL_QUOTA:
		return ATTEMPT_OUT_LAUNCH_QUOTA;
	case PROV_FAIL_STOCKOUT:
		return ATTEMPT_OUT_LAUNCH_STOCKOUT;
	case PROV_FAIL_INVALID:
	case PROV_FAIL_AUTH:
		/* Naming the place chosen: another place may do. */
		if (m != NULL && ((a->zone != NULL && strstr(m, a->zone) !=
		    NULL) || strstr(m, a->region) != NULL))
			return ATTEMPT_OUT_LAUNCH_PLACE;
		return ATTEMPT_OUT_LAUNCH_INVALID;
	default:
		return ATTEMPT_OUT_LAUNCH_TRANSIENT;
	}
}

/* The create call of E was accepted (or found done). */
static void
att_accepted(struct attempt *e, const struct prov_result *r)
{
	struct attempts		*at = e->at;
	const struct attempt_rule *rule = &attempt_rules[ATTEMPT_OUT_ACCEPTED];
	struct store_attempt	*a = e->a;
	char			*cause = NULL, *place, *msg;
	int			 rc, state = -1;

	att_settle_hold(e, 1);
	place = att_place(e);
	if (store_attempt_set_state(at->store, a->id, ATTEMPT_PENDING,
	    clock_now(), r->cloud_id, &cause) < 0)
		log_warnx("job %" PRId64 ": attempt %d: %s", a->job_id,
		    a->number, cause);
	free(cause);
	msg = xprintf("%s on %s as %s", r->fail == PROV_FAIL_EXISTS ?
	    "found already running" : "launched", place, r->cloud_id != NULL ?
	    r->cloud_id : a->resource);
	rc = att_job_move(at, a->job_id, rule->from, rule->to, msg, &state);
	free(msg);
	log_info("job %" PRId64 ": attempt %d %s on %s as %s", a->job_id,
	    a->number, r->fail == PROV_FAIL_EXISTS ? "found already" :
	    "accepted", place, a->resource);
	free(place);
	if (at->l.launched != NULL)
		at->l.launched(at->l.arg, a->job_id);

	e->in_flight = 0;
	if (a->state == ATTEMPT_LAUNCHING)
		a->state = ATTEMPT_PENDING;
	if (r->cloud_id != NULL && a->cloud_id == NULL)
		att_set_cloud_id(e, r->cloud_id);
	e->missed = 0;
	e->since_gen = at->gen;
	/* A cancel asked for meanwhile starts now. */
	if (rc == -EALREADY && state == JOB_CANCELLING)
		e->cancel_wanted = 1;
	if (e->cancel_wanted)
		att_cancel_start(e);
}

/* The create call of E was refused: OUT says how. */
static void
att_refused(struct attempt *e, int out, const struct prov_result *r)
{
	struct attempts		*at = e->at;
	const struct attempt_rule *rule = &attempt_rules[out];
	struct store_attempt	*a = e->a;
	struct store_end	 end;
	char			*place, *why = NULL, *msg = NULL, buf[32];
	const char		*words;
	int64_t			 now = clock_now(), until, delay = 0;
	int			 n;

	att_settle_hold(e, 0);
	place = att_place(e);
	words = r->message != NULL ? r->message : "no detail given";
	n = 0;
	if (at->l.launch_failed != NULL)
		n = at->l.launch_failed(at->l.arg, a->job_id,
		    rule->wait == ATTEMPT_WAIT_BACKOFF);
	att_rule_effects(at, rule, a, now, att_pending_limit(e));
	if (rule->to == JOB_QUEUED)
		delay = att_rule_delay(at, rule, n);

	switch (out) {
	case ATTEMPT_OUT_LAUNCH_QUOTA:
		log_info("job %" PRId64 ": launch on %s refused: quota%s%s; "
		    "trying elsewhere", a->job_id, place, r->quota_metric ?
		    " " : "", r->quota_metric ? r->quota_metric : "");
		why = xprintf("quota exceeded on %s (%s); trying elsewhere",
		    place, words);
		break;
	case ATTEMPT_OUT_LAUNCH_STOCKOUT:
		until = attempt_cooldown(at, a, a->zone, now);
		if (r->zones_available != NULL && *r->zones_available != '\0' &&
		    at->l.prefer != NULL)
			at->l.prefer(at->l.arg, a->job_id, r->zones_available,
			    now + cloud_conf(at->cloud)->stockout_cooldown);
		att_clock(until, buf, sizeof buf);
		log_info("job %" PRId64 ": %s is out of %s%s; cooling it down "
		    "until %s", a->job_id, place, a->gpu, a->spot ? " (Spot)" :
		    "", buf);
		why = xprintf("%s out of %s until %s; trying elsewhere", place,
		    a->gpu, buf);
		/* The event keeps it once the why has moved on. */
		msg = xprintf("launch failed: %s; %s out of %s until %s",
		    words, place, a->gpu, buf);
		break;
	case ATTEMPT_OUT_LAUNCH_PLACE:
		log_warnx("job %" PRId64 ": %s refused the launch: %s; trying "
		    "elsewhere", a->job_id, place, words);
		why = xprintf("%s refused it (%s); trying elsewhere", place,
		    words);
		break;
	case ATTEMPT_OUT_LAUNCH_INVALID:
		log_warnx("job %" PRId64 ": %s refused the launch: %s; the job "
		    "fails", a->job_id, place, words);
		msg = xprintf("%s refused the launch%s: %s", place,
		    r->fail == PROV_FAIL_AUTH ? " (credentials or permission)" :
		    "", words);
		break;
	default:
		log_info("job %" PRId64 ": launch on %s failed: %s; retrying "
		    "in %" PRId64 "s", a->job_id, place, words, delay);
		why = xprintf("retrying in %" PRId64 "s after: %s", delay,
		    words);
		break;
	}
	if (msg == NULL)
		msg = xprintf("launch failed: %s", words);
	memset(&end, 0, sizeof end);
	end.attempt_id = a->id;
	end.when = now;
	end.reason = rule->end;
	end.exit_code = -1;
	end.message = words;
	(void)att_settle(at, a, rule, &end, msg, delay > 0 ? now + delay : 0,
	    why);
	free(msg);
	free(why);
	free(place);
	e->in_flight = 0;
	att_remove(e);
}

/* The provider's answer to E's create call (provider.h; called once). */
static void
att_on_launched(const struct prov_result *r, void *arg)
{
	struct attempt	*e = arg;
	struct attempts	*at = e->at;
	int		 out;

	if (at->closing || e->dead) {
		/* Leave the attempt launching: the next start adopts it. */
		att_entry_unref(e);
		att_unref(at);
		return;
	}
	out = att_launch_outcome(e, r);
	if (out == ATTEMPT_OUT_ACCEPTED)
		att_accepted(e, r);
	else
		att_refused(e, out, r);
	att_wake(at);
	att_entry_unref(e);
	att_unref(at);
}

/* Call the provider for E with the job's SPEC; 0 or -errno (no call). */
static int
att_call(struct attempt *e, json_t *spec, char **cause)
{
	struct attempts	*at = e->at;
	int		 rc;

	e->in_flight = 1;
	e->refs++;
	at->refs++;
	at->stats.launches++;
	rc = cloud_launch(at->cloud, spec, e->a, att_on_launched, e, cause);
	if (rc != 0) {
		e->refs--;
		at->refs--;
		e->in_flight = 0;
	}
	return rc;
}

int
attempt_launch(struct attempts *at, struct store_attempt *a, int number,
    const struct store_job *job, json_t *spec,
    const struct attempt_hold *hold, const char *message, char **cause)
{
	struct attempt		*e;
	struct prov_result	 r;
	struct quota		*q = gcp_quota(cloud_gcp(at->cloud));
	char			*why = NULL;
	int			 rc;

	if (at->closing)
		rc = -ESHUTDOWN;
	else
		rc = store_attempt_launch(at->store, a, number, message, cause);
	if (rc < 0) {
		if (hold != NULL) {
			quota_release(q, hold->svc, a->region, hold->metric,
			    att_gpus(a));
			if (hold->cpu_metric != NULL)
				quota_release(q, GCP_SERVICE_GCE, a->region,
				    hold->cpu_metric, hold->vcpus);
		}
		return rc;
	}
	e = att_add(at, a, job, spec);
	if (hold != NULL) {
		e->reserved = 1;
		e->svc = hold->svc;
		e->metric = xstrdup(hold->metric);
		if (hold->cpu_metric != NULL) {
			e->cpu_metric = xstrdup(hold->cpu_metric);
			e->vcpus = hold->vcpus;
		}
	}
	if ((rc = att_call(e, spec, &why)) != 0) {
		/* Refused before it went out: handled as the cloud's no. */
		memset(&r, 0, sizeof r);
		r.fail = rc == -EINVAL || rc == -ENOENT ? PROV_FAIL_INVALID :
		    PROV_FAIL_TRANSIENT;
		r.message = why;
		att_refused(e, att_launch_outcome(e, &r), &r);
		free(why);
	}
	return 0;
}

/* E is "launching" and a complete listing does not show it: we crashed
 * before or during the create call. Launch it again, same name. */
static void
att_relaunch(struct attempt *e)
{
	struct attempts		*at = e->at;
	struct store_job	*row = NULL;
	char			*cause = NULL;
	json_t			*spec;
	int			 rc;

	if ((rc = store_job_get(at->store, e->a->job_id, &row, &cause)) < 0) {
		log_warnx("job %" PRId64 ": cannot read it to relaunch: %s",
		    e->a->job_id, cause);
		free(cause);
		return;
	}
	spec = json_loads(row->spec, 0, NULL);
	store_job_free(row);
	if (spec == NULL)
		return;
	e->relaunch = 1;
	rc = att_call(e, spec, &cause);
	json_decref(spec);
	if (rc != 0) {
		log_warnx("job %" PRId64 ": cannot relaunch %s: %s; trying "
		    "again at the next poll", e->a->job_id, e->a->resource,
		    cause);
		free(cause);
		return;
	}
	log_info("job %" PRId64 ": attempt %d was being launched when gpuqd "
	    "stopped and the cloud does not list it; launching %s again",
	    e->a->job_id, e->a->number, e->a->resource);
	at->stats.relaunches++;
}

/* ---------------------------------------------------------------- */
/* What a listing says.						    */

/* The cloud has E (a crash survivor found pending): adopt it. */
static void
att_adopt(struct attempt *e, const struct prov_observed *o)
{
	const struct attempt_rule *rule = &attempt_rules[ATTEMPT_OUT_ADOPTED];
	struct attempts		*at = e->at;
	char			*cause = NULL, *place, *msg;

	if (store_attempt_set_state(at->store, e->a->id, ATTEMPT_PENDING,
	    clock_now(), o->cloud_id, &cause) < 0) {
		log_warnx("job %" PRId64 ": attempt %d: %s", e->a->job_id,
		    e->a->number, cause);
		free(cause);
		return;
	}
	e->a->state = ATTEMPT_PENDING;
	place = att_place(e);
	msg = xprintf("found on %s after a restart", place);
	(void)att_job_move(at, e->a->job_id, rule->from, rule->to, msg, NULL);
	log_info("job %" PRId64 ": adopted %s on %s", e->a->job_id,
	    e->a->resource, place);
	free(msg);
	free(place);
}

/* The outcome of E once the cancel gpuq asked for has taken effect. */
static int
att_cancel_outcome(const struct attempt *e)
{
	switch (e->cancel_reason) {
	case END_LIMIT:
		return ATTEMPT_OUT_LIMIT;
	case END_PENDING:
		return e->cancel_move ? ATTEMPT_OUT_MOVED :
		    ATTEMPT_OUT_PENDING;
	default:
		return ATTEMPT_OUT_CANCELLED;
	}
}

/* Cancel E for REASON (END_LIMIT, END_PENDING) with MSG (taken). */
static void
att_stop(struct attempt *e, int reason, char *msg)
{
	if (e->cancel_wanted) {
		free(msg);
		return;
	}
	log_info("job %" PRId64 ": %s; stopping it", e->a->job_id, msg);
	e->cancel_wanted = 1;
	e->cancel_reason = reason;
	free(e->cancel_msg);
	e->cancel_msg = msg;
	att_cancel_start(e);
}

/* Cancel E because it broke a limit (MSG, taken). */
static void
att_limit(struct attempt *e, char *msg)
{
	att_stop(e, END_LIMIT, msg);
}

/* Seconds E may stay queued in the cloud; 0: for ever. A flex-start
 * request waits its job's flex_wait (doc/DESIGN.md "Capacity kinds"). */
static int64_t
att_pending_limit(const struct attempt *e)
{
	if (cloud_attempt_capacity(e->a) == CAPACITY_FLEX)
		return e->flex_wait > 0 ? e->flex_wait :
		    CAPACITY_FLEX_WAIT_DEFAULT;
	if (e->pending_timeout > 0)
		return e->pending_timeout;
	return cloud_conf(e->at->cloud)->pending_timeout;
}

/*
 * A pending E the cloud has kept queued (since its create call) longer
 * than its pending timeout: withdraw it, so the job is placed elsewhere.
 */
static void
att_check_pending(struct attempt *e, int64_t now)
{
	int64_t	 limit = att_pending_limit(e);
	char	 d[32], l[32], *place;

	if (e->a->state != ATTEMPT_PENDING || e->cancel_wanted ||
	    e->ending || e->in_flight || e->job_terminal || limit <= 0 ||
	    now - e->a->created <= limit)
		return;
	att_duration(now - e->a->created, d, sizeof d);
	att_duration(limit, l, sizeof l);
	place = att_place(e);
	if (cloud_attempt_capacity(e->a) == CAPACITY_FLEX) {
		att_stop(e, END_PENDING, xprintf("flex-start request on %s "
		    "not fulfilled within flex_wait %s; withdrawn, the job "
		    "runs elsewhere%s%s", place, l, e->pending_msg != NULL ?
		    ": " : "", e->pending_msg != NULL ? e->pending_msg : ""));
		free(place);
		return;
	}
	att_stop(e, END_PENDING, xprintf("queued on %s for %s without "
	    "starting (pending_timeout %s)%s%s", place, d, l,
	    e->pending_msg != NULL ? ": " : "", e->pending_msg != NULL ?
	    e->pending_msg : ""));
	free(place);
}

/* max_runtime and max_total_usd of running E. */
static void
att_check_limits(struct attempt *e, int64_t now)
{
	char	d[32];
	double	cost;

	if (e->a->state != ATTEMPT_RUNNING || e->cancel_wanted ||
	    e->ending || e->in_flight)
		return;
	if (e->max_runtime > 0 && now - e->running_seen > e->max_runtime) {
		att_duration(e->max_runtime, d, sizeof d);
		att_limit(e, xprintf("ran longer than max_runtime %s", d));
		return;
	}
	cost = e->job_cost + cost_attempt(e->a->hourly_usd, e->running_seen,
	    now);
	if (e->max_total > 0 && cost > e->max_total)
		att_limit(e, xprintf("cost $%.2f reached max_total_usd %.2f",
		    cost, e->max_total));
}

/*
 * The cloud's own start of E, as O reports it: kept whatever gpuqd's
 * clock says (the simulated cloud's runs ahead), since it is what the
 * attempt is billed from (doc/DESIGN.md "Accounting").
 */
static void
att_billed_start(struct attempt *e, const struct prov_observed *o)
{
	char	*cause = NULL;

	if (o->started <= 0 || e->a->billed_start > 0)
		return;
	if (store_attempt_set_billed(e->at->store, e->a->id, o->started,
	    &cause) < 0) {
		log_warnx("job %" PRId64 ": attempt %d: %s", e->a->job_id,
		    e->a->number, cause);
		free(cause);
		return;
	}
	e->a->billed_start = o->started;
}

/* Running: attempt and job say so, once. */
static void
att_running(struct attempt *e, const struct prov_observed *o)
{
	const struct attempt_rule *rule = &attempt_rules[ATTEMPT_OUT_RUNNING];
	struct attempts		*at = e->at;
	int64_t			 now = clock_now(), started;
	char			*cause = NULL, *place, *msg;

	started = att_plausible(o->started, now);
	e->started_cloud = started != 0;
	if (started == 0)
		started = now;
	if (store_attempt_set_state(at->store, e->a->id, ATTEMPT_RUNNING,
	    started, o->cloud_id, &cause) < 0) {
		log_warnx("job %" PRId64 ": attempt %d: %s", e->a->job_id,
		    e->a->number, cause);
		free(cause);
		return;
	}
	e->a->state = ATTEMPT_RUNNING;
	e->a->started = started;
	e->running_seen = now;
	att_billed_start(e, o);
	place = att_place(e);
	msg = xprintf("running on %s", place);
	(void)att_job_move(at, e->a->job_id, rule->from, rule->to, msg, NULL);
	log_info("job %" PRId64 ": attempt %d running on %s", e->a->job_id,
	    e->a->number, place);
	free(msg);
	free(place);
}

static void
att_on_checkpoint(int error, const char *uri, int64_t updated,
    const char *cause, void *arg)
{
	struct attempt	*e = arg;
	struct attempts	*at = e->at;
	char		*why = NULL, dir[ATT_SPLIT_MAX];

	if (!at->closing) {
		if (error < 0)
			log_warnx("job %" PRId64 ": cannot list checkpoints "
			    "under %s: %s", e->a->job_id, att_ckpt_dir(e, dir),
			    cause != NULL ? cause : strerror(-error));
		else if (uri != NULL && (e->ckpt_last == NULL ||
		    strcmp(e->ckpt_last, uri) != 0)) {
			if (store_job_set_checkpoint(at->store, e->a->job_id,
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
			att_finish(e);
	}
	att_entry_unref(e);
	att_unref(at);
}

/* List E's checkpoints; an ending E finishes when that is back. */
static int
att_checkpoint(struct attempt *e)
{
	struct attempts	*at = e->at;
	const char	*d;
	char		 dir[ATT_SPLIT_MAX];
	int		 rc;

	if ((d = att_ckpt_dir(e, dir)) == NULL)
		return -ENOENT;
	e->refs++;
	at->refs++;
	e->ckpt_cycle = at->cycle;
	at->stats.checkpoint_lists++;
	rc = cloud_checkpoint_newest(at->cloud, d, att_on_checkpoint, e);
	if (rc != 0) {
		log_warnx("job %" PRId64 ": cannot list checkpoints under %s: "
		    "%s", e->a->job_id, d, strerror(-rc));
		e->refs--;
		at->refs--;
	}
	return rc;
}

/*
 * E ended: OUT (an outcome that ends it), EXIT, the cloud's MSG, at
 * WHEN. When the job may run again, its newest checkpoint is looked up
 * first.
 */
static void
att_end(struct attempt *e, int out, int exit_code, const char *msg,
    int64_t when)
{
	const struct attempt_rule *rule;
	char			  *flex = NULL, *place;

	if (e->ending)
		return;
	/*
	 * A flex-start request the cloud gave up on before it ever ran
	 * (Compute deletes the VM, Vertex AI fails the job when its wait
	 * ends: API-NOTES K) was not fulfilled in time: that is a pending
	 * timeout, not an interruption (doc/DESIGN.md "Capacity kinds").
	 */
	if ((out == ATTEMPT_OUT_LOST || out == ATTEMPT_OUT_STOCKOUT) &&
	    e->a->started == 0 &&
	    cloud_attempt_capacity(e->a) == CAPACITY_FLEX) {
		place = att_place(e);
		msg = flex = xprintf("flex-start request on %s not fulfilled: "
		    "the cloud withdrew it, the job runs elsewhere%s%s", place,
		    msg != NULL ? ": " : "", msg != NULL ? msg : "");
		free(place);
		out = ATTEMPT_OUT_PENDING;
	}
	rule = &attempt_rules[out];
	e->ending = 1;
	e->end_out = out;
	e->end_exit = exit_code;
	free(e->end_msg);
	e->end_msg = msg != NULL ? xstrdup(msg) : NULL;
	free(flex);
	e->end_when = when;
	if ((rule->to == JOB_QUEUED || rule->counts != ATTEMPT_COUNTS_NONE) &&
	    !e->job_terminal && att_checkpoint(e) == 0)
		return;
	att_finish(e);
}

/* The outcome a listed end state means for E. */
static int
att_seen_outcome(const struct attempt *e, const struct prov_observed *o)
{
	switch (o->state) {
	case PROV_SUCCEEDED:
		return ATTEMPT_OUT_SUCCEEDED;
	case PROV_FAILED:
		/*
		 * A workload stopped by a signal while gpuq stops its
		 * attempt (a move, a limit, a cancel) ended by that stop,
		 * not by a fault of its own: SIGTERM's 143 or SIGKILL's
		 * 137, reported before the cloud lists the resource gone.
		 * The replay failed a job whose move to a cheaper zone
		 * met a preemption of the zone it left.
		 */
		if (e->cancel_wanted && (o->exit_code == 128 + 15 ||
		    o->exit_code == 128 + 9))
			return att_cancel_outcome(e);
		return ATTEMPT_OUT_FAILED;
	case PROV_PREEMPTED:
		return ATTEMPT_OUT_PREEMPTED;
	case PROV_MAINTENANCE:
		return ATTEMPT_OUT_MAINTENANCE;
	case PROV_STOCKOUT:
		return ATTEMPT_OUT_STOCKOUT;
	case PROV_QUOTA:
		return ATTEMPT_OUT_QUOTA;
	case PROV_CANCELLED:
		if (!e->cancel_wanted)
			return ATTEMPT_OUT_LOST;
		return att_cancel_outcome(e);
	default:			/* lost, error */
		return ATTEMPT_OUT_LOST;
	}
}

/*
 * O carries E's resource label but another cloud id than the one E
 * knows: a second resource made for one attempt (a create of a service
 * without request ids that went out twice across a crash). Keep the one
 * E knows (or, knowing none, the first listed), delete this one, say so.
 */
static int
att_duplicate(struct attempt *e, const struct prov_observed *o)
{
	struct attempts	*at = e->at;
	const char	*known;
	char		*cause = NULL, *msg, buf[ATT_NAME];
	char		 idbuf[ATT_SPLIT_MAX];

	known = att_cloud_id(e, idbuf);
	if (e->prov == NULL || !e->prov->names_itself || o->cloud_id == NULL ||
	    known == NULL || strcmp(known, o->cloud_id) == 0)
		return 0;
	if (o->state != PROV_PENDING && o->state != PROV_RUNNING)
		return 1;		/* ended: costs nothing, ignore */
	(void)snprintf(buf, sizeof buf, "%s", e->a->region);
	if (att_delete(at, e->prov, 1, o->cloud_id, o->cloud_id, buf,
	    o->zone) != 1)
		return 1;		/* said already, or not sent */
	msg = xprintf("deleted a duplicate %s of attempt %d", o->cloud_id,
	    e->a->number);
	log_warnx("job %" PRId64 ": %s (keeping %s)", e->a->job_id, msg,
	    known);
	if (store_event_add(at->store, e->a->job_id, msg, &cause) < 0) {
		log_warnx("job %" PRId64 ": %s", e->a->job_id, cause);
		free(cause);
	}
	free(msg);
	at->stats.duplicates++;
	return 1;
}

static int	att_seen(struct attempt *, unsigned,
		    const struct prov_observed *);

/* Does a node in STATE end its gang (it no longer takes part)? */
static int
att_node_gone(int state)
{
	return state != PROV_PENDING && state != PROV_RUNNING &&
	    state != PROV_SUCCEEDED;
}

/*
 * O is node O->node of gang E, from a service that lists each node on
 * its own (Compute Engine). The nodes are one attempt (doc/DESIGN.md
 * "Gangs"): the first node seen preempted, under maintenance, lost,
 * failed or gone ends the whole attempt with that node's outcome, and
 * att_finish() then deletes every node. Otherwise the gang's news waits
 * until a listing has shown every node: all succeeded is success; any
 * running (or done while others run) is running; else pending. A
 * listing that misses a node leaves E unseen, so attempt_unseen()
 * treats it as missing: a gang still launching is launched again (the
 * nodes' request ids make that create only the missing ones), a
 * running one is lost.
 */
static int
att_node_seen(struct attempt *e, unsigned gen, const struct prov_observed *o)
{
	struct prov_observed	 whole;
	char			 msg[512];
	int			 n = e->a->nodes > 1 ? e->a->nodes : 1, i;
	int			 seen = 0, done = 0, running = 0;

	if (o->node < 0 || o->node >= n)
		return -ENOENT;
	if (e->node_gen == NULL) {
		e->node_gen = xreallocarray(NULL, n, sizeof *e->node_gen);
		e->node_state = xcalloc(n, sizeof *e->node_state);
		for (i = 0; i < n; i++)
			e->node_gen[i] = gen - 1;
	}
	e->node_gen[o->node] = gen;
	e->node_state[o->node] = o->state;
	whole = *o;
	whole.resource = e->a->resource;
	whole.cloud_id = NULL;	/* each node has its own: not a duplicate */
	whole.gang = NULL;
	whole.node = -1;
	if (att_node_gone(o->state)) {
		(void)snprintf(msg, sizeof msg, "node %d of %d: %s", o->node,
		    n, o->message != NULL ? o->message :
		    prov_state_name(o->state));
		whole.message = msg;
		return att_seen(e, gen, &whole);
	}
	for (i = 0; i < n; i++) {
		if (e->node_gen[i] != gen)
			continue;
		seen++;
		done += e->node_state[i] == PROV_SUCCEEDED;
		running += e->node_state[i] == PROV_RUNNING;
	}
	if (seen < n)
		return 0;
	if (done == n)
		whole.state = PROV_SUCCEEDED;
	else if (running > 0 || done > 0)
		whole.state = PROV_RUNNING;
	else
		whole.state = PROV_PENDING;
	whole.exit_code = done == n ? 0 : -1;
	return att_seen(e, gen, &whole);
}

int
attempt_seen(struct attempts *at, unsigned gen, const struct prov_observed *o)
{
	struct attempt	*e;

	if (at->closing || o->resource == NULL)
		return -ENOENT;
	if (o->gang != NULL) {
		if ((e = att_find_res(at, o->gang)) == NULL)
			return -ENOENT;
		return att_node_seen(e, gen, o);
	}
	if ((e = att_find_res(at, o->resource)) == NULL)
		return -ENOENT;
	return att_seen(e, gen, o);
}

/* O, about the whole of attempt E, is in this listing. */
static int
att_seen(struct attempt *e, unsigned gen, const struct prov_observed *o)
{
	int64_t		 now = clock_now(), ended;
	const char	*msg;
	int		 out;

	if (att_duplicate(e, o))
		return 0;
	e->seen_gen = gen;
	e->missed = 0;
	if (e->in_flight || e->ending)
		return 0;
	if (o->zone != NULL && e->a->zone == NULL && e->zone == NULL)
		e->zone = att_str_get(e->at, o->zone);
	if (o->cloud_id != NULL && e->a->cloud_id == NULL &&
	    e->cid_tail == NULL)
		att_set_cloud_id(e, o->cloud_id);
	switch (o->state) {
	case PROV_PENDING:
		if (e->a->state == ATTEMPT_LAUNCHING)
			att_adopt(e, o);
		if (o->message != NULL && !e->cancel_wanted &&
		    (e->pending_msg == NULL ||
		    strcmp(e->pending_msg, o->message) != 0)) {
			free(e->pending_msg);
			e->pending_msg = xstrdup(o->message);
		}
		att_check_pending(e, now);
		return 0;
	case PROV_RUNNING:
		if (e->a->state == ATTEMPT_LAUNCHING)
			att_adopt(e, o);
		if (e->a->state != ATTEMPT_RUNNING)
			att_running(e, o);
		att_check_limits(e, now);
		return 0;
	}
	out = att_seen_outcome(e, o);
	att_billed_start(e, o);
	if (o->ended > 0 && e->a->billed_start > 0 &&
	    o->ended >= e->a->billed_start)
		e->billed_end = o->ended;
	ended = 0;
	if (e->started_cloud)
		ended = att_plausible(o->ended, now);
	if (ended != 0 && ended < e->a->started)
		ended = 0;
	if (out == ATTEMPT_OUT_LIMIT || out == ATTEMPT_OUT_PENDING ||
	    out == ATTEMPT_OUT_MOVED)
		msg = e->cancel_msg;
	else if (out == ATTEMPT_OUT_LOST && o->state == PROV_CANCELLED)
		msg = "cancelled outside gpuq";
	else
		msg = o->message;
	att_end(e, out, out == ATTEMPT_OUT_SUCCEEDED ? 0 : o->exit_code, msg,
	    ended != 0 ? ended : now);
	return 0;
}

/* A complete listing did not show E. */
static void
att_missing(struct attempt *e)
{
	if (e->in_flight || e->ending || e->cancel_in_flight)
		return;
	if (e->a->state == ATTEMPT_LAUNCHING) {
		if (e->cancel_wanted || e->job_terminal) {
			att_end(e, ATTEMPT_OUT_CANCELLED, -1, "cancelled "
			    "before the cloud had it", clock_now());
			return;
		}
		/*
		 * A service that names the resource itself (Vertex AI) has
		 * no request id: a create still in flight when we died, or
		 * one its list does not show yet, would be made twice. Wait
		 * until the row is ATT_RELAUNCH_SETTLE seconds old and
		 * ATT_MISSES complete listings in a row missed it; the
		 * launch then looks by label once more before creating.
		 * A create slower than that is caught as a duplicate
		 * (att_duplicate()).
		 */
		if (e->prov != NULL && e->prov->names_itself &&
		    (++e->missed < ATT_MISSES ||
		    clock_now() - e->a->created < ATT_RELAUNCH_SETTLE))
			return;
		e->missed = 0;
		att_relaunch(e);
		return;
	}
	if (++e->missed < ATT_MISSES)
		return;
	if (e->cancel_wanted) {
		att_end(e, att_cancel_outcome(e), -1, e->cancel_msg,
		    clock_now());
		return;
	}
	log_info("job %" PRId64 ": %s is no longer listed by %s; counting it "
	    "as lost", e->a->job_id, e->a->resource, e->a->provider);
	att_end(e, ATTEMPT_OUT_LOST, -1, "the cloud no longer lists it",
	    clock_now());
}

void
attempt_unseen(struct attempts *at, unsigned gen, const struct provider *p,
    const char *region)
{
	struct attempt	*e, *next;

	if (at->closing)
		return;
	for (e = TAILQ_FIRST(&at->all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, alink);
		if (e->prov != p || e->seen_gen == gen || e->since_gen == gen)
			continue;
		if (region != NULL && *region != '\0' &&
		    strcmp(e->a->region, region) != 0)
			continue;
		att_missing(e);
	}
}

/* ---------------------------------------------------------------- */
/* Ending an attempt and moving its job.			    */

static void
att_on_deleted(const struct prov_result *res, void *arg)
{
	struct att_orphan	*o = arg;
	struct attempts		*at = o->at;

	o->in_flight = 0;
	if (!at->closing && res->fail != PROV_FAIL_NONE)
		log_debug("attempts: delete of %s: %s", o->name,
		    res->message != NULL ? res->message : "failed");
	att_unref(at);
}

/*
 * Cancel or delete resource NAME on P (an orphan, or a finished VM),
 * unless that was done lately: 1 the first time for NAME, 0 a repeat or
 * skipped, -1 it could not be sent.
 */
static int
att_delete(struct attempts *at, const struct provider *p, int nodes,
    const char *name, const char *cloud_id, const char *region,
    const char *zone)
{
	struct att_orphan	 key, *o, **found;
	char			*cause = NULL;

	key.name = (char *)name;
	found = tfind(&key, &at->orphans, att_orphan_cmp);
	if (found != NULL) {
		o = *found;
		if (o->in_flight || at->cycle - o->cycle < ATT_ORPHAN_QUIET)
			return 0;
	} else {
		o = xcalloc(1, sizeof *o);
		o->name = xstrdup(name);
		o->at = at;
		if (tsearch(o, &at->orphans, att_orphan_cmp) == NULL)
			fatalx("attempts: out of memory");
	}
	o->cycle = at->cycle;
	o->in_flight = 1;
	at->refs++;
	if (cloud_cancel_nodes(at->cloud, p, name, nodes, cloud_id, region,
	    zone, att_on_deleted, o, &cause) != 0) {
		log_warnx("attempts: cannot delete %s: %s", name, cause);
		free(cause);
		o->in_flight = 0;
		at->refs--;
		return -1;
	}
	return found == NULL;
}

/* "us-central1" of "us-central1-a" into BUF. */
static void
att_zone_region(const char *zone, char *buf, size_t len)
{
	const char	*dash = strrchr(zone, '-');
	size_t		 n;

	n = dash != NULL ? (size_t)(dash - zone) : strlen(zone);

	(void)snprintf(buf, len, "%.*s", (int)n, zone);
}

void
attempt_orphan(struct attempts *at, const struct provider *p,
    const char *region, const struct prov_observed *o)
{
	char	 buf[ATT_NAME];
	int	 alive;

	if (at->closing || o->resource == NULL)
		return;
	alive = o->state == PROV_PENDING || o->state == PROV_RUNNING;
	/* Finished Batch jobs and Vertex jobs cost nothing: keep them. */
	if (!alive && p->picks_zone)
		return;
	if (region != NULL && *region != '\0')
		(void)snprintf(buf, sizeof buf, "%s", region);
	else if (o->zone != NULL)
		att_zone_region(o->zone, buf, sizeof buf);
	else
		return;
	if (alive)
		log_info("attempts: %s on %s/%s has our install label and no "
		    "live attempt; deleting it", o->resource, p->name,
		    o->zone != NULL ? o->zone : buf);
	at->stats.orphans += alive;
	att_delete(at, p, 1, o->resource, o->cloud_id, buf, o->zone);
}

/* The words of E's end as outcome OUT (the job's move); N of MAXN. */
static char *
att_finish_words(struct attempt *e, int out, const struct store_job *j,
    const char *place, const char *d, double cost, int n, int maxn)
{
	const char	*kind = attempt_end_name(attempt_rules[e->end_out].end);

	switch (out) {
	case ATTEMPT_OUT_SUCCEEDED:
		if (j->state == JOB_CANCELLING)
			return xstrdup("succeeded before the cancel took "
			    "effect");
		return xprintf("succeeded on %s after %s, $%.2f", place, d,
		    cost);
	case ATTEMPT_OUT_FAILED:
		return xprintf("exit code %d on %s (failure %d of %d allowed)",
		    e->end_exit, place, n, maxn);
	case ATTEMPT_OUT_FAILED_LAST:
		return xprintf("exit code %d on %s%s", e->end_exit, place,
		    maxn > 0 ? "; max_failures reached" : "");
	case ATTEMPT_OUT_INTERRUPTED_LAST:
		return xprintf("%s on %s: interrupted %d times, over "
		    "max_interruptions %d", kind, place, n, maxn);
	case ATTEMPT_OUT_QUOTA:
		return xprintf("quota exceeded on %s%s%s", place,
		    e->end_msg != NULL ? ": " : "", e->end_msg != NULL ?
		    e->end_msg : "");
	case ATTEMPT_OUT_LIMIT:
		return xstrdup(e->cancel_msg != NULL ? e->cancel_msg :
		    e->end_msg != NULL ? e->end_msg : "limit reached");
	case ATTEMPT_OUT_PENDING:
		return xprintf("%s; placed elsewhere", e->cancel_msg != NULL ?
		    e->cancel_msg : "queued in the cloud too long");
	case ATTEMPT_OUT_MOVED:
		return xstrdup(e->cancel_msg != NULL ? e->cancel_msg :
		    "moved elsewhere");
	case ATTEMPT_OUT_CANCELLED:
		return xstrdup("cancelled");
	default:
		return xprintf("%s on %s%s%s", kind, place, j->checkpoint !=
		    NULL ? ", resuming from " : "", j->checkpoint != NULL ?
		    j->checkpoint : "");
	}
}

/*
 * Write E's end (reason, exit code, cost) and move its job as the rule
 * of its outcome says. Then forget E.
 */
static void
att_finish(struct attempt *e)
{
	struct attempts		*at = e->at;
	const struct attempt_rule *seen = &attempt_rules[e->end_out], *rule;
	struct store_attempt	*a = e->a;
	struct store_job	*j = NULL;
	struct store_end	 end;
	json_t			*spec = NULL;
	char			*cause = NULL, *place, *what, *msg, *why, d[32];
	char			 idbuf[ATT_SPLIT_MAX];
	const char		*zone;
	int64_t			 ended = e->end_when, started, now, delay;
	int64_t			 sec;
	double			 cost;
	int			 out = e->end_out, n = 0, maxn = 0, rc;
	int			 recent, nocount;

	if (store_job_get(at->store, a->job_id, &j, &cause) < 0) {
		/* Try again at the next listing. */
		log_warnx("job %" PRId64 ": %s", a->job_id, cause);
		free(cause);
		e->ending = 0;
		return;
	}
	if (j->spec != NULL)
		spec = json_loads(j->spec, 0, NULL);
	now = clock_now();
	started = a->started;
	if (ended < started)
		ended = started;
	sec = cost_billed_sec(a->billed_start, e->billed_end, started, ended);
	cost = cost_of(a->hourly_usd, sec);
	memset(&end, 0, sizeof end);
	end.billed_start = a->billed_start;
	end.billed_end = e->billed_end;
	end.baseline_usd = cost_of(a->baseline_hourly_usd, sec);
	end.attempt_id = a->id;
	end.when = ended;
	end.reason = seen->end;
	end.exit_code = e->end_exit;
	end.message = e->end_msg;
	end.cost_usd = cost;

	/* A limit or a cancel asked for wins over what the cloud says. */
	if (e->cancel_wanted && e->cancel_reason == END_LIMIT &&
	    out != ATTEMPT_OUT_SUCCEEDED)
		out = ATTEMPT_OUT_LIMIT;
	else if ((j->state == JOB_CANCELLING || (e->cancel_wanted &&
	    e->cancel_reason == END_CANCELLED)) &&
	    !(attempt_rules[out].from & JOB_MASK(JOB_CANCELLING)))
		out = ATTEMPT_OUT_CANCELLED;
	rule = &attempt_rules[out];
	/* A stockout before it ran interrupted nothing: the cool-down
	 * only (attempt_end_counts()). */
	nocount = rule->counts == ATTEMPT_COUNTS_INTERRUPTION &&
	    !attempt_end_counts(rule->end, started);
	if (rule->counts != ATTEMPT_COUNTS_NONE && !nocount) {
		if (rule->counts == ATTEMPT_COUNTS_FAILURE) {
			n = j->failures + 1;
			maxn = (int)json_integer_value(json_object_get(spec,
			    "max_failures"));
		} else {
			n = j->interruptions + 1;
			maxn = (int)json_integer_value(json_object_get(spec,
			    "max_interruptions"));
		}
		if (n > maxn && rule->over >= 0) {
			out = rule->over;
			rule = &attempt_rules[out];
		}
	}

	place = att_place(e);
	/* The time said is the time billed: the cloud's, when it gave it. */
	if (a->billed_start > 0 && e->billed_end >= a->billed_start)
		att_duration(e->billed_end - a->billed_start, d, sizeof d);
	else
		att_duration(started > 0 ? ended - started : 0, d, sizeof d);
	if (seen->cooldown) {
		zone = a->zone != NULL ? a->zone : e->zone;
		(void)attempt_cooldown(at, a, zone, now);
	}
	if (rule->to == JOB_QUEUED)
		att_rule_effects(at, rule, a, now, att_pending_limit(e));
	what = att_finish_words(e, out, j, place, d, cost, n, maxn);
	if (!(rule->from & JOB_MASK(j->state))) {
		/* The job went elsewhere meanwhile: end the attempt only. */
		rc = store_attempt_end_with(at->store, &end, &cause);
		if (rc < 0 && rc != -EALREADY)
			log_warnx("job %" PRId64 ": cannot end attempt %d: %s",
			    a->job_id, a->number, cause);
		free(cause);
		rc = rc == -EALREADY ? 0 : rc;
	} else if (rule->to == JOB_QUEUED) {
		if (nocount)
			delay = 0;
		else if (rule->counts == ATTEMPT_COUNTS_INTERRUPTION &&
		    rule->wait == ATTEMPT_WAIT_BACKOFF) {
			recent = att_recent_interruptions(at, a, now);
			delay = recent == 0 ? 0 : att_rule_delay(at, rule,
			    recent - 1);
		} else
			delay = att_rule_delay(at, rule, n - 1);
		msg = xprintf("%s; queued again, next try in %" PRId64 "s",
		    what, delay);
		why = xprintf("retrying in %" PRId64 "s after: %s", delay,
		    what);
		rc = att_settle(at, a, rule, &end, msg, now + delay, why);
		free(msg);
		free(why);
	} else
		rc = att_settle(at, a, rule, &end, what, 0, NULL);
	free(what);
	if (rc < 0) {
		/* Try again at the next listing. */
		e->ending = 0;
		goto out;
	}
	at->stats.ended++;
	log_info("job %" PRId64 ": attempt %d on %s ended: %s%s%s after %s, "
	    "$%.4f", a->job_id, a->number, place, attempt_end_name(end.reason),
	    e->end_msg ? ": " : "", e->end_msg ? e->end_msg : "", d, cost);
	if (a->spot && at->l.history_changed != NULL)
		at->l.history_changed(at->l.arg);
	/*
	 * A Compute Engine VM costs its disk until deleted; the rest of a
	 * gang that lost a node may still run, whatever the service
	 * (doc/DESIGN.md "Gangs"). A gang that succeeded is kept where
	 * the service keeps finished jobs.
	 */
	if (e->prov != NULL && (!e->prov->picks_zone || (a->nodes > 1 &&
	    end.reason != END_SUCCEEDED)) &&
	    end.reason != END_CANCELLED && end.reason != END_LIMIT &&
	    end.reason != END_PENDING &&
	    a->state != ATTEMPT_LAUNCHING)
		att_delete(at, e->prov, a->nodes, a->resource,
		    att_cloud_id(e, idbuf), a->region, a->zone);
	e->ending = 0;
	att_remove(e);
	att_wake(at);
out:
	free(place);
	json_decref(spec);
	store_job_free(j);
}

/* ---------------------------------------------------------------- */
/* Cancels.							    */

static void
att_on_cancelled(const struct prov_result *res, void *arg)
{
	struct attempt	*e = arg;
	struct attempts	*at = e->at;

	e->cancel_in_flight = 0;
	if (!at->closing && !e->dead) {
		if (res->fail == PROV_FAIL_NONE ||
		    res->fail == PROV_FAIL_INVALID) {
			/* Accepted, or nothing there to cancel any more. */
			att_end(e, att_cancel_outcome(e), -1,
			    e->cancel_reason != END_CANCELLED ?
			    e->cancel_msg : "cancelled by gpuq", clock_now());
		} else
			log_warnx("job %" PRId64 ": cancel of %s failed: %s; "
			    "trying again at the next poll", e->a->job_id,
			    e->a->resource, res->message != NULL ?
			    res->message : "no detail");
	}
	att_entry_unref(e);
	att_unref(at);
}

/* Ask the cloud to stop E's resource. */
static void
att_cancel_start(struct attempt *e)
{
	struct attempts	*at = e->at;
	char		*cause = NULL, idbuf[ATT_SPLIT_MAX];
	int		 rc;

	if (e->cancel_in_flight || e->in_flight || e->ending || e->dead)
		return;
	if (e->prov == NULL) {
		att_end(e, att_cancel_outcome(e), -1, "its provider is no "
		    "longer enabled", clock_now());
		return;
	}
	e->cancel_in_flight = 1;
	e->refs++;
	at->refs++;
	rc = cloud_cancel_nodes(at->cloud, e->prov, e->a->resource,
	    e->a->nodes, att_cloud_id(e, idbuf), e->a->region,
	    e->a->zone != NULL ? e->a->zone : e->zone,
	    att_on_cancelled, e, &cause);
	if (rc != 0) {
		log_warnx("job %" PRId64 ": cannot cancel %s: %s; trying "
		    "again at the next poll", e->a->job_id, e->a->resource,
		    cause);
		free(cause);
		e->cancel_in_flight = 0;
		e->refs--;
		at->refs--;
	}
}

void
attempt_cancel(struct attempts *at, int64_t id)
{
	const struct attempt_rule *rule = &attempt_rules[ATTEMPT_OUT_CANCELLED];
	struct attempt		*e;

	if (at->closing)
		return;
	if ((e = att_find_job(at, id)) == NULL) {
		(void)att_job_move(at, id, rule->from & JOB_MASK(
		    JOB_CANCELLING), rule->to, "cancelled; nothing was in the "
		    "cloud", NULL);
		att_wake(at);
		return;
	}
	log_info("job %" PRId64 ": cancelling %s", id, e->a->resource);
	e->cancel_wanted = 1;
	e->cancel_reason = END_CANCELLED;
	att_cancel_start(e);
}

int
attempt_move(struct attempts *at, int64_t id, const char *why)
{
	struct attempt	*e;

	if (at->closing || (e = att_find_job(at, id)) == NULL)
		return -ENOENT;
	if (e->cancel_wanted || e->ending || e->job_terminal)
		return -EALREADY;
	e->cancel_move = 1;
	att_stop(e, END_PENDING, xstrdup(why));
	return 0;
}

/* ---------------------------------------------------------------- */
/* Each cycle.							    */

/* Refresh the newest checkpoint of a running job or so, round robin. */
static void
att_running_checkpoints(struct attempts *at)
{
	struct attempt	*e, *next;
	int		 budget = ATT_CKPT_PER_CYCLE, visited = 0;

	for (e = TAILQ_FIRST(&at->all); e != NULL && budget > 0 &&
	    visited < at->nlive; e = next, visited++) {
		next = TAILQ_NEXT(e, alink);
		if (e->a->state != ATTEMPT_RUNNING || e->ending ||
		    e->ckpt_tail == NULL ||
		    at->cycle - e->ckpt_cycle < ATT_CKPT_EVERY)
			continue;
		TAILQ_REMOVE(&at->all, e, alink);
		TAILQ_INSERT_TAIL(&at->all, e, alink);
		if (att_checkpoint(e) == 0)
			budget--;
	}
}

/* Orphans old enough to forget, collected by att_orphan_visit. */
struct att_prune {
	struct attempts		 *at;
	struct att_orphan	**v;
	size_t			  n, cap;
};

static void
att_orphan_visit(const void *node, VISIT which, void *arg)
{
	struct att_prune	*p = arg;
	struct att_orphan	*o = *(struct att_orphan *const *)node;

	if (which != postorder && which != leaf)
		return;
	if (o->in_flight || p->at->cycle - o->cycle <= 4 * ATT_ORPHAN_QUIET)
		return;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xreallocarray(p->v, p->cap, sizeof *p->v);
	}
	p->v[p->n++] = o;
}

/* Forget orphans cancelled long ago. */
static void
att_orphans_prune(struct attempts *at)
{
	struct att_prune	p;
	size_t			i;

	memset(&p, 0, sizeof p);
	p.at = at;
	twalk_r(at->orphans, att_orphan_visit, &p);
	for (i = 0; i < p.n; i++) {
		(void)tdelete(p.v[i], &at->orphans, att_orphan_cmp);
		free(p.v[i]->name);
		free(p.v[i]);
	}
	free(p.v);
}

unsigned
attempt_cycle(struct attempts *at, int64_t now)
{
	struct attempt	*e, *next;

	at->gen++;
	at->cycle++;
	if (at->closing)
		return at->gen;
	/* Cancels that failed, and the limits of running attempts. */
	for (e = TAILQ_FIRST(&at->all); e != NULL; e = next) {
		next = TAILQ_NEXT(e, alink);
		if (e->cancel_wanted && !e->cancel_in_flight)
			att_cancel_start(e);
		else {
			att_check_limits(e, now);
			att_check_pending(e, now);
		}
	}
	att_running_checkpoints(at);
	if ((at->cycle & 63) == 0)
		att_orphans_prune(at);
	return at->gen;
}

void
attempt_foreach(struct attempts *at, void (*cb)(const struct store_attempt *,
    const struct provider *, void *), void *arg)
{
	struct attempt	*e;

	TAILQ_FOREACH(e, &at->all, alink)
		cb(e->a, e->prov, arg);
}

/* ---------------------------------------------------------------- */
/* Start: load and repair.					    */

struct att_load {
	struct store_attempt	**v;
	size_t			  n, cap;
};

static int
att_on_live(const struct store_attempt *a, void *arg)
{
	struct att_load	*l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n++] = store_attempt_copy(a);
	return 0;
}

struct att_ids {
	int64_t		*v;
	size_t		 n, cap;
	int64_t		 last;
	int		*states;
};

static int
att_on_cloud_job(const struct store_job *j, void *arg)
{
	struct att_ids	*ids = arg;

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
att_repair_jobs(struct attempts *at, char **cause)
{
	struct store_filter	 f;
	struct att_ids		 ids;
	size_t			 i;
	int			 more = 1, rc;

	memset(&f, 0, sizeof f);
	memset(&ids, 0, sizeof ids);
	f.states = JOB_MASK_CLOUD | JOB_MASK(JOB_CANCELLING);
	while (more) {
		rc = store_job_list(at->store, &f, ids.last, 1000,
		    att_on_cloud_job, &ids, &more, cause);
		if (rc < 0) {
			free(ids.v);
			free(ids.states);
			return rc;
		}
	}
	for (i = 0; i < ids.n; i++) {
		if (att_find_job(at, ids.v[i]) != NULL)
			continue;
		if (ids.states[i] == JOB_CANCELLING)
			(void)att_job_move(at, ids.v[i], JOB_MASK(
			    JOB_CANCELLING), JOB_CANCELLED, "cancelled; "
			    "nothing was in the cloud", NULL);
		else {
			log_info("job %" PRId64 ": %s with no live attempt "
			    "after a restart; queueing it again", ids.v[i],
			    job_state_name(ids.states[i]));
			(void)att_job_move(at, ids.v[i], JOB_MASK_CLOUD,
			    JOB_QUEUED, "queued again after a restart: no "
			    "attempt was in the cloud", NULL);
		}
	}
	free(ids.v);
	free(ids.states);
	return 0;
}

int
attempt_load(struct attempts *at, char **cause)
{
	struct att_load		 l;
	struct attempt		*e;
	struct store_job	*j;
	json_t			*spec;
	char			*why = NULL, *msg;
	size_t			 i;
	int			 rc;

	memset(&l, 0, sizeof l);
	if ((rc = store_attempt_list_live(at->store, att_on_live, &l,
	    cause)) < 0)
		return rc;
	for (i = 0; i < l.n; i++) {
		j = NULL;
		if (store_job_get(at->store, l.v[i]->job_id, &j, &why) < 0) {
			log_warnx("attempt %d of job %" PRId64 ": %s",
			    l.v[i]->number, l.v[i]->job_id, why);
			free(why);
			why = NULL;
			continue;
		}
		spec = json_loads(j->spec != NULL ? j->spec : "", 0, NULL);
		e = att_add(at, l.v[i], j, spec);
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
			(void)att_job_move(at, j->id, JOB_MASK(JOB_HELD) |
			    JOB_MASK(JOB_QUEUED), JOB_LAUNCHING, msg, NULL);
			free(msg);
			break;
		case JOB_CANCELLING:
		case JOB_SUCCEEDED:
		case JOB_FAILED:
		case JOB_CANCELLED:
			e->cancel_wanted = 1;
			break;
		}
		json_decref(spec);
		store_job_free(j);
	}
	/*
	 * The row copies go only now that every entry is made: freed one by
	 * one in the loop, their chunks would take the entries' small
	 * allocations (tree nodes) all over the copies' pages, which then
	 * stay resident; freed together, below the entries, they are one
	 * free stretch that malloc_trim() gives back (doc/DESIGN.md
	 * "Memory").
	 */
	for (i = 0; i < l.n; i++)
		store_attempt_free(l.v[i]);
	free(l.v);
	if ((rc = att_repair_jobs(at, cause)) < 0)
		return rc;
	if (at->nlive > 0)
		log_info("attempts: %d live attempt(s) to check with the "
		    "cloud", at->nlive);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Life.							    */

struct attempts *
attempt_new(struct cloud *cloud)
{
	struct attempts	*at;

	at = xcalloc(1, sizeof *at);
	at->cloud = cloud;
	at->store = cloud_store(cloud);
	TAILQ_INIT(&at->all);
	at->by_res.key = ATT_KEY_RES;
	at->by_job.key = ATT_KEY_JOB;
	at->refs = 1;
	return at;
}

void
attempt_set_listener(struct attempts *at, const struct attempt_listener *l)
{
	if (l != NULL)
		at->l = *l;
	else
		memset(&at->l, 0, sizeof at->l);
}

void
attempt_get_stats(struct attempts *at, struct attempt_stats *ret)
{
	*ret = at->stats;
	ret->live = at->nlive;
}

static void
att_free_orphan(void *p)
{
	struct att_orphan	*o = p;

	free(o->name);
	free(o);
}

/* None is left once every entry is gone; this is for the unforeseen. */
static void
att_free_str(void *s)
{
	free((char *)s - offsetof(struct att_str, s));
}

static void
att_unref(struct attempts *at)
{
	struct attempt	*e;

	if (--at->refs > 0)
		return;
	while ((e = TAILQ_FIRST(&at->all)) != NULL)
		att_remove(e);
	free(at->by_res.slot);
	free(at->by_job.slot);
	tdestroy(at->strs, att_free_str);
	tdestroy(at->orphans, att_free_orphan);
	free(at);
}

void
attempt_close(struct attempts *at)
{
	if (at == NULL || at->closing)
		return;
	at->closing = 1;
	memset(&at->l, 0, sizeof at->l);
	att_unref(at);
}
