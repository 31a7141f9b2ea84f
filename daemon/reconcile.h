/*
 * reconcile.h: the reconciler -- it OBSERVES what the cloud says about
 * our attempts (doc/DESIGN.md "The flow of one job", steps 6-7).
 *
 * Every [scheduler] poll_interval it lists each (provider, region) that
 * has live attempts with ONE list call (plus pages) -- never one call
 * per job -- and hands each listed resource to the owner of the
 * attempts (attempt.h): "seen in state X" (attempt_seen), "missing from
 * a complete listing" (attempt_unseen), "ours, with no live attempt"
 * (attempt_orphan). attempt.c decides what that means and writes the
 * store; the reconciler writes nothing itself.
 *
 * Knows the cloud (cloud.h) and the attempts (attempt.h); tells the
 * daemon through a callback when its first cycle is done, so the
 * scheduler (which it does not know) may start launching.
 */
#ifndef GPUQ_RECONCILE_H
#define GPUQ_RECONCILE_H

#include <stdint.h>


struct attempts;
struct cloud;
struct reconcile;

/* Counters for tests, benchmarks and logs (attempt.h has the rest). */
struct reconcile_stats {
	unsigned long	 polls;		/* poll cycles started */
	unsigned long	 calls;		/* provider poll calls made */
	unsigned long	 seen;		/* resources listed, last cycle */
	double		 cycle_ms;	/* CPU-bound time, last cycle */
	double		 max_cycle_ms;
};

/*
 * New reconciler over CLOUD (borrowed) handing what it sees to ATT
 * (borrowed). READY(ARG) is called once, when the first poll cycle
 * after start has ended (NULL: nobody asks).
 */
struct reconcile *reconcile_new(struct cloud *cloud, struct attempts *att,
		    void (*ready)(void *), void *arg);
/*
 * Load the live attempts (attempt_load: it repairs what a crash left
 * half done), then poll at once and every poll_interval. 0, or -errno
 * and *cause when the store cannot be read.
 */
int		 reconcile_start(struct reconcile *, char **cause);
/* Poll now, not at the next interval (tests; after a launch error). */
void		 reconcile_poll_now(struct reconcile *);

/* Counters; *RET is filled. */
void		 reconcile_get_stats(struct reconcile *,
		    struct reconcile_stats *ret);
/*
 * Stop: no more polls; calls in flight end without touching the store.
 * Memory goes once the timer is closed and every call has come back.
 */
void		 reconcile_close(struct reconcile *);

#endif
