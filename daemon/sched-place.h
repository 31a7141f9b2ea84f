/*
 * sched-place.h: which job gets which room, and why the rest wait. The
 * scheduler's internal header; see sched.h for the split: sched.c
 * decides when, sched-offer.c what each way costs, sched-place.c which
 * job gets which room and why the rest wait.
 *
 * A job walks its shape's ranked offers and takes the first within its
 * limits whose quota buckets have room and are not claimed against it;
 * a job blocked by quota claims the buckets that blocked it. The quota
 * a bucket holds is read from quota.c once per pass, on first use, or
 * set by the caller (a bucket already "loaded" is never read): with
 * every bucket loaded, and no quota.c, these functions are pure.
 */
#ifndef GPUQ_SCHED_PLACE_H
#define GPUQ_SCHED_PLACE_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

#include "daemon/sched-gate.h"
#include "daemon/sched-offer.h"

struct provider;
struct quota;

#define SCHED_AVOID		4	/* places a job avoids at once */
#define SCHED_STARVE_SEC	900	/* equal-priority claims bind after */
#define SCHED_BUCKETS_MAX	4096	/* buckets kept between passes */
#define SCHED_ORDER_MAX		512	/* offers a job walks */

/* A quota bucket a launch draws on, read once per pass. */
struct sched_bucket {
	enum gcp_service	 svc;		/* GCE (Batch too) or VERTEX */
	char			 region[SCHED_NAME];
	char			 metric[QUOTA_METRIC_MAX];
	uint64_t		 hash;
	int			 loaded;	/* free read this pass */
	int			 known;		/* quota.c has a reading */
	double			 free;
	double			 limit;		/* -1 unknown */
	int64_t			 claim_id;	/* job claiming it, or 0 */
	int			 claim_prio;
	int64_t			 claim_since;
};

/* What a pass (or a plan) reads once: cool-downs and quota buckets. */
struct sched_ctx {
	int64_t			 now;
	unsigned		 gen;		/* pass number; 0: a plan */
	unsigned		 epoch;		/* of the bucket table: moves
						   when it starts again */
	struct quota		*quota;		/* borrowed; NULL: only the
						   loaded buckets are known */
	struct sched_bucket	*b;
	size_t			 nb, capb;
	int			*hidx;		/* index+1 of b by hash, open
						   addressing; 0 empty */
	size_t			 nhidx;		/* a power of 2 */
	struct sched_cool	*cool;
	size_t			 ncool, capcool;
};

/* What the scheduler remembers of a job between passes. */
struct sched_job {
	int64_t			 id;
	struct sched_shape	*shape;		/* NULL: spec unusable */
	char			*bad;		/* why it is unusable */
	double			 max_hourly;	/* 0: no limit */
	double			 max_total;
	double			 hours;		/* estimated_hours */
	int64_t			 last_seen;
	int			 launch_errors;	/* in a row */
	char			 prefer[256];	/* zones a stockout named */
	int64_t			 prefer_until;
	struct {
		const struct provider *prov;
		char		 region[SCHED_NAME];
		int64_t		 until;
		int		 kind;		/* enum capacity_kind;
						   -1: every kind */
	}			 avoid[SCHED_AVOID];
	int64_t			 blocked_since;	/* waiting on quota since */
	int64_t			 spot_wait_since; /* waiting out Spot
						   cool-downs since; 0 not */
	int64_t			 spot_wait_end;	/* its deadline allows no
						   wait past; 0 no bound */
	double			 dl_left;	/* deadline: work left, s;
						   0: not known (no slack
						   pricing) */
	double			 dl_avail;	/* its slack above the margin,
						   s, expected restarts not
						   taken off */
	double			 dl_cost;	/* slack a preemption costs, s */
	int			 spot_worn_at;	/* interruptions at which it
						   leaves Spot; 0 never */
	int			 spot_worn;	/* it has left Spot */
	struct sched_gate_job	 gate;		/* deps, array (sched-gate.h) */
	int			 in_set;	/* in the runnable set (sched.c);
						   then not on the job list */
	int			 priority;	/* as last read */
	TAILQ_ENTRY(sched_job)	 entry;		/* oldest seen first */
};
TAILQ_HEAD(sched_jobs, sched_job);

/* What placing one job found. */
struct sched_verdict {
	struct sched_offer	*offer;		/* chosen, or NULL */
	int			 reason;	/* furthest reason seen */
	char			*why;		/* new, when offer is NULL: what
						   is stored, no counts */
	char			*live;		/* new or NULL: WHY with the
						   free counts of now, shown
						   where a user asks */
	int			 quota;		/* blocked by quota/claims */
	int			 spot_wait;	/* this job waits for Spot */
	int64_t			 claim_id;	/* holder of a claimed bucket */
	int			 claim_prio;
	char			*claim_what;	/* "NVIDIA_T4_GPUS in ..." */
};

/*
 * Is the first of J's shape's usable offers that J does not avoid a Spot
 * one (sched-deadline.c's bridge back to Spot)? Quota is not asked.
 */
int		 sched_place_spot_first(const struct sched_job *j, int64_t now);
/* The first offer of J's shape it does not avoid at NOW, or NULL
 * (doc/DESIGN.md "Moving to cheaper capacity"). */
const struct sched_offer *sched_place_first(const struct sched_job *j,
		    int64_t now);
/* Forget what CTX's buckets hold (a new pass or plan): their free
 * units, limits and claims. The buckets stay where they are, so that
 * a shape's offers keep theirs (sched_place_buckets_kept()). */
void		 sched_place_reset(struct sched_ctx *ctx);
/* Free what CTX holds and zero it. */
void		 sched_ctx_done(struct sched_ctx *ctx);
/* Index of bucket (SVC, REGION, METRIC) in CTX, added if new. */
int		 sched_bucket(struct sched_ctx *ctx, enum gcp_service svc,
		    const char *region, const char *metric);
/* Give SH's usable offers their buckets: GPU, GPUS_ALL_REGIONS (Compute
 * Engine's quota) and vCPUs (when the machine's are known). */
void		 sched_place_buckets(struct sched_ctx *ctx,
		    struct sched_shape *sh);
/*
 * The same for SH's offers kept from an earlier pass on CTX: the
 * indices they hold are still CTX's buckets, and only its reserved
 * offers' buckets are loaded again; 0. 1 when CTX's table started again
 * since (or SH's buckets are another context's): sched_place_buckets()
 * was called (doc/DESIGN.md "The pass").
 */
int		 sched_place_buckets_kept(struct sched_ctx *ctx,
		    struct sched_shape *sh);
/* Is bucket B claimed against job ID of priority PRIO at NOW? */
int		 sched_claimed(const struct sched_bucket *b, int64_t id,
		    int prio, int64_t now);
/* Job J avoids capacity KIND (enum capacity_kind, -1: any) of provider P
 * in REGION until UNTIL (replaces the oldest). */
void		 sched_avoid_kind(struct sched_job *j,
		    const struct provider *p, const char *region, int kind,
		    int64_t until);
/* Job J avoids provider P in REGION until UNTIL (replaces the oldest). */
void		 sched_avoid(struct sched_job *j, const struct provider *p,
		    const char *region, int64_t until);
/*
 * Place job J (priority PRIO) on its shape's offers: the first, in
 * rank order (zones a stockout named first), within J's limits, whose
 * buckets have room and are not claimed against it. Fills V (done with
 * sched_verdict_done()); when nothing fits, V->why says why and the
 * buckets that blocked J are claimed for it.
 */
void		 sched_place(struct sched_ctx *ctx, struct sched_job *j,
		    int prio, struct sched_verdict *v);
void		 sched_verdict_done(struct sched_verdict *v);
/*
 * Backfill: the same shape, with the same limits, already found nothing
 * in this pass (CTX->gen); quota only shrinks during a pass and claims
 * only grow, so job J (priority PRIO) finds nothing too. Its why (new),
 * or NULL to place it the long way.
 */
char		*sched_place_fast_why(struct sched_ctx *ctx,
		    struct sched_job *j, int prio);
/* Whether the shortcut of sched_place_fast_why() applies to J, and
 * then the hash of the why it would give, into *RET (no text made). */
int		 sched_place_fast_hash(struct sched_ctx *ctx,
		    struct sched_job *j, int prio, uint64_t *ret);
/* The same for a job of shape SH, ID, PRIO and these limits, known to
 * have no hints in force (no look at its struct sched_job). Inline: a
 * pass asks it of each of 100,000 waiting jobs. */
static inline int
sched_place_fast_hash_of(const struct sched_ctx *ctx,
    const struct sched_shape *sh, int64_t id, int prio, double max_hourly,
    double max_total, double hours, uint64_t *ret)
{
	if (sh->fail_gen != ctx->gen || sh->fail_hourly != max_hourly ||
	    sh->fail_total != max_total || sh->fail_hours != hours)
		return 0;
	if (sh->fail_quota && sh->fail_claim_id != 0 &&
	    sh->fail_claim_id != id && sh->fail_claim_prio > prio)
		*ret = sh->fail_claim_hash;
	else
		*ret = sh->fail_why_hash;
	return 1;
}
/* Has job J hints (preferred zones, places avoided) in force at NOW? */
int		 sched_place_hinted(const struct sched_job *j, int64_t now);
/* Remember job J's failure V for the rest of its shape this pass. */
void		 sched_place_fail_note(struct sched_ctx *ctx,
		    struct sched_job *j, const struct sched_verdict *v);
/*
 * The plan of job J (priority PRIO; its shape built on CTX): its usable
 * offers within its limits and with room, ranked, and the rest with the
 * reason each is set aside, and a why when none fits. New reference;
 * the shape sched.h documents for sched_plan().
 */
json_t		*sched_place_plan(struct sched_ctx *ctx, struct sched_job *j,
		    int prio);

/*
 * The kinds of capacity SH gets no offer of on M, and why, for a plan's
 * "kinds_excluded": [{"capacity","provider"?,"reason"}]. New.
 */
json_t		*sched_place_kinds_json(const struct sched_market *m,
		    const struct sched_shape *sh);

#endif
