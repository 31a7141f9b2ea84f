/*
 * sched.h: the scheduler -- which queued job runs where, and the launch
 * of the attempt it chose (doc/DESIGN.md "The flow of one job", steps 4-5,
 * and "Expected cost").
 *
 * One timer, re-armed to the next due time; sched_wake() re-arms it at
 * zero. A pass refreshes stale quotas, then takes the runnable jobs in
 * priority order (FIFO within a priority), enumerates their offers
 * (provider x region x zone x Spot or not), drops those without quota,
 * without the GPU, in a stockout cool-down or outside the job's limits,
 * ranks the rest by expected cost and launches the cheapest. A job that
 * cannot be placed gets a sentence saying why it waits (store "why").
 *
 * Three files, one module (sched_*):
 *   sched.c        decides when: the pass, its pacing and its one state,
 *                  what it reads once, the jobs it remembers, launches;
 *   sched-offer.c  what each way costs: shapes, offers, exclusions,
 *                  expected cost and ranking, pure (sched-offer.h);
 *   sched-place.c  which job gets which room and why the rest wait:
 *                  quota buckets, claims, backfill, whys, the plan's
 *                  verdicts (sched-place.h).
 * Only this header is for the rest of the daemon.
 *
 * The scheduler decides WHERE: it reserves the quota of the offer it
 * chose and hands the attempt to attempt.c (attempt_launch), which owns
 * it from then on -- the create call, its answer, and everything the
 * reconciler later observes. What attempt.c has to tell the scheduler
 * (wake up, a job's launch errors in a row, places it should avoid,
 * zones a stockout named as available) comes back through the
 * struct attempt_listener the scheduler registers in
 * sched_set_attempts().
 *
 * Knows the store, the cloud (cloud.h), quotas, prices and attempt.h;
 * not the reconciler.
 */
#ifndef GPUQ_SCHED_H
#define GPUQ_SCHED_H

#include <stdint.h>

#include <jansson.h>

struct attempts;
struct cloud;
struct sched;

/* Counters for tests, benchmarks and logs. */
struct sched_stats {
	unsigned long	 passes;		/* passes run */
	unsigned long	 launches;		/* attempts started */
	unsigned long	 launch_errors;		/* launches that failed */
	unsigned long	 jobs_seen;		/* runnable jobs, last pass */
	unsigned long	 shapes;		/* job shapes, last pass */
	unsigned long	 why_writes;		/* whys changed, last pass */
	/* What the last pass redid (doc/DESIGN.md "The pass"): */
	unsigned long	 shapes_priced;		/* shapes whose offers were
						   built again */
	unsigned long	 jobs_read;		/* rows read from the store */
	unsigned long	 jobs_read_whole;	/* ... of them read with their
						   spec, not from the index */
	unsigned long	 jobs_walked;		/* jobs placed one by one, not
						   settled from their item */
	double		 pass_ms;		/* CPU-bound time, last pass */
	double		 max_pass_ms;
	double		 pass_cpu_ms;		/* its CPU time */
	unsigned long	 jobs_cached;		/* jobs held parsed after the
						   last pass (queued, or
						   recently) */
};

/* New scheduler over CLOUD (borrowed; outlives it). No pass runs
 * before sched_start(), and none launches before sched_ready(). */
struct sched	*sched_new(struct cloud *cloud);
/* The owner of the attempts the scheduler launches (borrowed; NULL:
 * none, then nothing launches); the scheduler becomes its listener. */
void		 sched_set_attempts(struct sched *, struct attempts *);
/* Arm the timer: the first pass runs on the next turn of the loop. */
void		 sched_start(struct sched *);
/* The reconciler has finished its first pass after start: launches
 * may begin (a restart must adopt what runs before adding to it). */
void		 sched_ready(struct sched *);
/*
 * Interruptions at which a job with max_interruptions MAX leaves Spot
 * for good: three quarters of it, rounded up; 0 (never) when MAX is
 * under SCHED_WORN_MIN (doc/DESIGN.md "Leaving Spot after many
 * interruptions").
 */
#define SCHED_WORN_MIN	4
int		 sched_spot_worn_at(int max);
/* Run a pass soon: a job was submitted or released, an attempt ended,
 * quotas were refreshed. Cheap; many calls make one pass. */
void		 sched_wake(struct sched *);
/* Launch nothing while WHY (copied) holds, and give it as every waiting
 * job's why: something every launch needs is missing (doc/DESIGN.md "A
 * real project": gpuqd may not act as the job service account). NULL
 * lifts it. */
void		 sched_block(struct sched *, const char *why);
/* Run a pass no later than WHEN (unix seconds): a backoff ends. */
void		 sched_wake_at(struct sched *, int64_t when);
/* Spot history changed (an attempt ended): re-learn λ next pass. */
void		 sched_history_changed(struct sched *);
/*
 * The offers for normalized job SPEC (borrowed), without launching, on
 * the quota and prices known now: {"offers":[{"provider","region",
 * "zone","spot","capacity","machine_type","hourly_usd","expected_usd",
 * "lambda","rank"}...], "excluded":[{"provider","region","zone","spot",
 * "capacity","reason"}...], "kinds_excluded":[{"capacity","provider"?,
 * "reason"}...], "why":"..." (only when no offer fits)}. New reference.
 */
json_t		*sched_plan(struct sched *, json_t *spec);
/*
 * The why stored for a waiting job, WHY, with the free quota counts the
 * last pass saw ("2 of 4 free"), or NULL when WHY has none to add. The
 * stored why names the situation in kind and no count, so that a count
 * that moves rewrites no row (doc/DESIGN.md "The pass"); what shows a
 * job to a user shows this. Valid until the next pass.
 */
const char	*sched_why_live(struct sched *, const char *why);
/* Counters; *RET is filled. */
void		 sched_get_stats(struct sched *, struct sched_stats *ret);
/*
 * Stop: no more passes, and the attempts hear no more of it (launches
 * in flight are attempt.c's: attempt_close()). The memory goes once the
 * loop has closed the timer and every refresh has called back.
 */
void		 sched_close(struct sched *);

#endif
