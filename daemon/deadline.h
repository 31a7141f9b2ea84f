/*
 * deadline.h: the deadline policy (doc/DESIGN.md "Deadlines"), in the
 * spirit of "Can't Be Late" (Wu et al., NSDI 2024): while a job's slack
 * is at least the margin it may use the cheapest capacity, Spot
 * included; once the slack falls below the margin it may no longer use
 * preemptible capacity, and stays so.
 *
 * Pure functions of plain numbers: the caller reads the store, the
 * clock and gpuqd.conf and hands them in. Nothing here keeps state.
 */
#ifndef GPUQ_DEADLINE_H
#define GPUQ_DEADLINE_H

#include <stdint.h>

/* What the policy needs to know of one job, in seconds unless said. */
struct deadline_job {
	int64_t		 now;
	int64_t		 deadline;	/* unix s */
	double		 work;		/* estimated_hours, in seconds */
	double		 done;		/* progress so far (deadline_done) */
	int		 safe;		/* no preemptible capacity any more */
	double		 restart_overhead; /* per interruption */
	double		 lambda;	/* Spot interruptions per hour */
};

/*
 * Progress of a job from its attempts' running time: RUN seconds run
 * over RESUMES attempts that started again from a checkpoint (each
 * spends RESTART_OVERHEAD reloading), at most WORK.
 */
/*
 * The work an interrupted attempt lost: what it did after its last
 * checkpoint, RUN seconds of running less RESTART_OVERHEAD if it
 * RESUMED, modulo the checkpoint INTERVAL (0: unknown, nothing counted).
 * Running time alone counted it as progress, so a job preempted often
 * kept slack it did not have and left Spot too late.
 */
double	 deadline_lost(double run, int resumed, double restart_overhead,
	    double interval);
double	 deadline_done(double run, int resumes, double restart_overhead,
	    double work);
/*
 * Slack of J in seconds: time to the deadline less the work left and,
 * while J may still use Spot, restart_overhead per interruption
 * expected over the work left. Negative when the deadline can no
 * longer be met (or has passed).
 */
int64_t	 deadline_slack(const struct deadline_job *j);
/* Must J leave preemptible capacity (its slack below MARGIN)? */
int	 deadline_unsafe(const struct deadline_job *j, int64_t margin);
/*
 * When J's slack will fall below MARGIN if it makes no progress (queued
 * or pending: the slack shrinks a second a second), as a unix time: the
 * first second at which deadline_unsafe() holds. 0
 * when never (already safe) and J->now when it already has.
 */
int64_t	 deadline_cross_at(const struct deadline_job *j, int64_t margin);

/*
 * What one move between Spot and capacity that is not preempted costs
 * the slack at most, in seconds: the restart overhead of the new run and
 * the work since the last checkpoint (INTERVAL; 0 unknown).
 */
int64_t	 deadline_switch(const struct deadline_job *j, double interval);
/*
 * Until when a queued job J may wait out a Spot stockout (unix s): while
 * its slack stays above MARGIN plus two switches (SWITCH,
 * deadline_switch()), so that a flex-start run that keeps its slack can
 * still come back to Spot (doc/DESIGN.md "Deadlines"). J->now or
 * earlier: take capacity that is not preempted now. 0 for a safe job.
 */
int64_t	 deadline_wait_until(const struct deadline_job *j, int64_t margin,
	    int64_t sw);
/*
 * May J, running on capacity that is not preempted and not marked, go
 * back to Spot: its slack, counted as on Spot, at least MARGIN plus one
 * switch (SW)?
 */
int	 deadline_back_to_spot(const struct deadline_job *j, int64_t margin,
	    int64_t sw);

/*
 * What a job's slack makes of Spot at preemption rate LAMBDA (per
 * hour): the share of its LEFT hours of work it is expected to run on
 * capacity that is not preempted, when its AVAIL hours of slack above
 * the margin absorb COST hours a preemption (restart, lost work, the
 * wait for the next start) and it leaves Spot at the first preemption
 * they cannot absorb (doc/DESIGN.md "Deadlines"). 0 to 1.
 */
double	 deadline_spot_tail(double left, double avail, double cost,
	    double lambda);

#endif
