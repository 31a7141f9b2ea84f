/*
 * reconcile.h: the reconciler -- what the cloud says about our
 * attempts, brought into the store (DESIGN.md "The flow of one job",
 * steps 6-7, and "Job states").
 *
 * Every [scheduler] poll_interval it lists each (provider, region) that
 * has live attempts with ONE list call (plus pages) -- never one call
 * per job -- and maps each resource onto its attempt by name: running,
 * succeeded, failed with an exit code, preempted, host maintenance,
 * lost. Interrupted jobs go back to the queue once their newest
 * checkpoint is known; resources with our label and no live attempt
 * (orphans) are deleted; attempts a crash left "launching" are adopted
 * or launched again under the same name. Cancels and limits
 * (max_runtime, max_total_usd) end here too.
 *
 * Knows the store and the cloud (cloud.h); asks the scheduler to run
 * (sched.h) when a job goes back to the queue.
 */
#ifndef GPUQ_RECONCILE_H
#define GPUQ_RECONCILE_H

#include <stdint.h>

#include <jansson.h>

struct cloud;
struct reconcile;
struct sched;
struct store_attempt;
struct store_job;

/* Counters for tests, benchmarks and logs. */
struct reconcile_stats {
	unsigned long	 polls;		/* poll cycles started */
	unsigned long	 calls;		/* provider poll calls made */
	unsigned long	 seen;		/* resources listed, last cycle */
	unsigned long	 orphans;	/* orphans cancelled */
	unsigned long	 relaunches;	/* launching attempts re-launched */
	unsigned long	 ended;		/* attempts ended */
	unsigned long	 checkpoint_lists; /* storage listings made */
	int		 live;		/* live attempts now */
	double		 cycle_ms;	/* CPU-bound time, last cycle */
	double		 max_cycle_ms;
};

/* New reconciler over CLOUD (borrowed) telling SCHED (borrowed). */
struct reconcile *reconcile_new(struct cloud *cloud, struct sched *sched);
/*
 * Load the live attempts and repair what a crash left half done (a job
 * queued with a live attempt, a job in the cloud states without one),
 * then poll at once and every poll_interval. When the first poll cycle
 * has ended, sched_ready() lets the scheduler launch. 0, or -errno and
 * *cause when the store cannot be read.
 */
int		 reconcile_start(struct reconcile *, char **cause);
/* Poll now, not at the next interval (tests; after a launch error). */
void		 reconcile_poll_now(struct reconcile *);

/*
 * The scheduler wrote attempt A (state launching) of JOB (borrowed;
 * SPEC its parsed spec) and is about to launch it: track it, with the
 * launch in flight.
 */
void		 reconcile_track(struct reconcile *, const struct store_attempt *a,
		    const struct store_job *job, json_t *spec);
/* The launch of ATTEMPT_ID is back; the cloud accepted it (CLOUD_ID may
 * be NULL). A cancel asked for meanwhile starts now. */
void		 reconcile_launched(struct reconcile *, int64_t attempt_id,
		    const char *cloud_id);
/* The launch of ATTEMPT_ID is back and was refused: the scheduler has
 * ended the attempt. Forget it. */
void		 reconcile_untrack(struct reconcile *, int64_t attempt_id);

/*
 * Job ID went to cancelling (the api's cancel hook): cancel its live
 * attempt's resource; the job becomes cancelled when the cloud has
 * accepted that. A job with nothing in the cloud is cancelled at once.
 */
void		 reconcile_cancel(struct reconcile *, int64_t id);
/* Counters; *RET is filled. */
void		 reconcile_get_stats(struct reconcile *,
		    struct reconcile_stats *ret);
/*
 * Stop: no more polls; calls in flight end without touching the store.
 * Memory goes once the timer is closed and every call has come back.
 */
void		 reconcile_close(struct reconcile *);

#endif
