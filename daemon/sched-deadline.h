/*
 * sched-deadline.h: the pass's look at jobs with a deadline
 * (doc/DESIGN.md "Deadlines"). The scheduler's internal header: it
 * applies the policy of deadline.c to the live jobs with a deadline,
 * marks a job whose slack fell below [scheduler] deadline_margin
 * deadline_safe (it may no longer use Spot: its shape becomes
 * spot: never) and has attempt.c withdraw a Spot attempt such a job
 * still runs, so the job is placed again on standard capacity.
 */
#ifndef GPUQ_SCHED_DEADLINE_H
#define GPUQ_SCHED_DEADLINE_H

#include <stdint.h>

struct attempts;
struct conf;
struct store;
struct store_job;

/* What one look found and did. */
struct sched_deadline_run {
	int64_t		 next;		/* earliest unix time a queued or
					   pending job's slack crosses the
					   margin; 0 none */
	int		 jobs;		/* live jobs with a deadline */
	int		 marked;	/* newly deadline_safe */
	int		 moved;		/* Spot attempts withdrawn */
	int		 back;		/* flex-start runs sent back to Spot */
};

/*
 * Look at every live job with a deadline at NOW: mark those whose slack
 * fell below CONF's deadline_margin, calling ON_SAFE(ARG, id) for each
 * (the scheduler forgets what it parsed of the job), and move those
 * marked that still run on Spot (ATT NULL: no moves). Fills *RET.
 */
/*
 * What the walk asks of the scheduler and tells it, about job ID; ARG
 * is the scheduler's. Any may be NULL.
 */
/*
 * What a deadline job's slack makes of Spot, in seconds (sched-place.h
 * sched_job dl_*): its work left, its slack above the margin without
 * the restarts its slack expects (deadline_slack() with no λ), and the
 * slack one preemption costs it.
 */
struct sched_slack {
	double		left;
	double		avail;
	double		cost;
};

struct sched_deadline_hooks {
	/* ID was just marked deadline_safe: forget what was parsed of it. */
	void	(*on_safe)(void *arg, int64_t id);
	/* Queued job ROW may wait out a Spot stockout until UNTIL (unix s;
	 * at or before now: not at all; 0: no bound of its deadline), and
	 * its slack is SL. */
	void	(*wait_until)(void *arg, const struct store_job *row,
		    int64_t until, const struct sched_slack *sl);
	/* Would job ROW, of slack SL, placed now, take Spot (an offer it
	 * may take, not set aside, ranked first)? */
	int	(*spot_first)(void *arg, const struct store_job *row,
		    const struct sched_slack *sl);
	void	*arg;
};

void	sched_deadline_check(struct store *st, struct attempts *att,
	    const struct conf *conf, int64_t now,
	    const struct sched_deadline_hooks *hooks,
	    struct sched_deadline_run *ret);

/*
 * The slack of job ROW (borrowed) at NOW, in seconds, into *RET_SLACK:
 * what gpuq status and show print. 0, -ENOENT when it has no deadline,
 * or -errno when its attempts cannot be read.
 */
int	sched_deadline_slack(struct store *st, const struct conf *conf,
	    const struct store_job *row, int64_t now, int64_t *ret_slack);

/*
 * The progress of job ROW (borrowed, with or without a deadline) at NOW,
 * from one read of its spec and attempts: done is what the slack counts
 * (running time less restart overheads and the work interruptions and
 * moves lost), work its estimated_hours (0: not given), interval its
 * checkpoint interval (0: none), all in seconds; slack as
 * sched_deadline_slack() gives it, 0 without a deadline; spot what that
 * slack makes of Spot (all 0 without a deadline, or marked). 0, or
 * -errno when its attempts cannot be read.
 */
struct sched_progress {
	double		done;
	double		work;
	double		interval;
	int64_t		slack;
	struct sched_slack spot;
};
int	sched_deadline_progress(struct store *st, const struct conf *conf,
	    const struct store_job *row, int64_t now,
	    struct sched_progress *ret);

#endif
