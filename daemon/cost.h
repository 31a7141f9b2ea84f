/*
 * cost.h: the arithmetic of money and risk the scheduler ranks offers
 * with (doc/DESIGN.md "Expected cost"): the preemption rate λ learnt from
 * the daemon's own history, the expected cost of a run on Spot or
 * standard capacity, the order of two offers, and the billed cost of an
 * attempt.
 *
 * Pure functions of their arguments: no store, no loop, no cloud, so
 * tests/unit/test-cost.c can pin every number.
 */
#ifndef GPUQ_COST_H
#define GPUQ_COST_H

#include <stdint.h>

/*
 * Weight of the prior in λ, in pseudo running hours: with H hours of our
 * own Spot history, the prior counts as if COST_PRIOR_HOURS more hours
 * had been seen at the prior rate.
 */
#define COST_PRIOR_HOURS	10.0
/* How far back the Spot history λ is learnt from reaches. */
#define COST_HISTORY_SEC	(30 * 86400)
/* Shortest billed run of a machine that started (Compute's minimum). */
#define COST_MIN_BILLED_SEC	60
/* Two expected costs closer than this (relative) are a tie. */
#define COST_TIE_EPSILON	1e-9

/*
 * Preemptions per running hour for one (provider, region, GPU): the
 * observed INTERRUPTIONS over HOURS of Spot running, blended with PRIOR
 * (per hour) weighted as COST_PRIOR_HOURS hours:
 *
 *	λ = (interruptions + prior × H0) / (hours + H0)
 *
 * With no history λ is the prior; with much history it tends to the
 * observed rate. Negative inputs count as 0.
 */
double	 cost_lambda(double hours, int interruptions, double prior);

/*
 * Expected cost in USD of ESTIMATED_HOURS of work at HOURLY USD/h. On
 * standard capacity (SPOT 0) that is hourly × hours. On Spot each
 * interruption (LAMBDA per running hour) loses half a checkpoint
 * interval of work plus the restart overhead (both seconds), so the run
 * is stretched:
 *
 *	hourly × hours × (1 + λ × (interval / 2 + overhead) / 3600)
 */
double	 cost_expected(double hourly, double estimated_hours, int spot,
	    double lambda, int64_t checkpoint_interval,
	    int64_t restart_overhead);

/* What two offers are compared by; the rest of an offer is not. */
struct cost_rank {
	double		 expected_usd;	/* cost_expected() */
	int		 interruptions;	/* recent ones at that place */
	int		 order;		/* stable order of enumeration */
};

/*
 * Order of two offers, for qsort: the lower expected cost first; within
 * COST_TIE_EPSILON, fewer recent interruptions first; then the order of
 * enumeration (provider, region, zone, standard before Spot).
 */
int	 cost_rank_cmp(const struct cost_rank *a, const struct cost_rank *b);

/*
 * What an attempt cost: HOURLY USD/h over the billed time from STARTED
 * to ENDED (unix seconds). An attempt that never started (STARTED 0)
 * cost nothing; one that did is billed at least COST_MIN_BILLED_SEC.
 */
double	 cost_attempt(double hourly, int64_t started, int64_t ended);

/*
 * Seconds an attempt is billed (doc/DESIGN.md "Accounting"): from the
 * cloud's own start to its own end (BILLED_START, BILLED_END, unix
 * seconds as the service reports them) when it gave both; else the time
 * gpuqd watched it run, STARTED to ENDED. 0 for an attempt that never
 * started; at least COST_MIN_BILLED_SEC for one that did.
 */
int64_t	 cost_billed_sec(int64_t billed_start, int64_t billed_end,
	    int64_t started, int64_t ended);
/* HOURLY USD/h over SEC seconds. */
double	 cost_of(double hourly, int64_t sec);

/*
 * Delay before retry N (0 for the first) of something that failed:
 * BASE × 2^N seconds, capped at CAP, with up to a quarter taken off at
 * random by JITTER (a number in [0, 1)) so retries spread out.
 */
int64_t	 cost_backoff(int64_t base, int64_t cap, int n, double jitter);

#endif
