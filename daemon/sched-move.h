/*
 * sched-move.h: the pass's look at running jobs that cheaper capacity
 * has freed up for (doc/DESIGN.md "Moving to cheaper capacity"). The
 * scheduler's internal header: for each job running on Spot or
 * flex-start, the scheduler says where it would place the job now; when
 * the saving over its work left pays for the move (the work since its
 * last checkpoint, a restart overhead, and a failed try), attempt.c
 * withdraws the attempt (attempt_move(): nothing counted, no backoff)
 * and the job is placed again at once.
 */
#ifndef GPUQ_SCHED_MOVE_H
#define GPUQ_SCHED_MOVE_H

#include <stddef.h>
#include <stdint.h>

struct attempts;
struct conf;
struct sched_offer;
struct sched_slack;
struct store;
struct store_attempt;
struct store_job;

/* What one look found and did. */
struct sched_move_run {
	int	running;	/* running attempts looked at */
	int	weighed;	/* with a cheaper first offer */
	int	moved;		/* withdrawn to move */
	int	later;		/* cheaper, but far from a checkpoint */
	int64_t	next;		/* when to look again; 0 none */
};

/*
 * What the walk asks of the scheduler; ARG is the scheduler's. BEST:
 * the first offer job ROW would take now (one it does not avoid, not
 * set aside), or NULL; and into *RET_OFFERS, *RET_N all of its shape's
 * offers, those set aside included (where the job runs now may be
 * cooled down: its own VM filled the zone). SL: what the job's deadline
 * makes of Spot (its first offer is its own, sched-place.c), or NULL.
 */
struct sched_move_hooks {
	const struct sched_offer *(*best)(void *arg,
	    const struct store_job *row, const struct sched_slack *sl,
	    const struct sched_offer **ret_offers, size_t *ret_n);
	void	*arg;
};

/*
 * The saving, in dollars, of moving a job with WORK_LEFT seconds of work
 * from a place at HERE expected dollars per hour of work to one at THERE
 * (hourly price THERE_HOURLY), losing SINCE_CKPT seconds of work since
 * its last checkpoint and RESTART_OVERHEAD seconds at the start; the
 * move must also pay for one more switch (a try refused for a stockout
 * costs the same again), and all of it twice over, and once more for
 * each of the STRIKES the place has left (it refused lately; at most
 * SCHED_STRIKE_MAX). Pure.
 */
double	sched_move_saving(double here, double there, double there_hourly,
	    double work_left, double since_ckpt, double restart_overhead,
	    double interval, int strikes);

/*
 * The work a job running since STARTED would lose if it stopped at NOW,
 * in seconds: its progress since its last checkpoint. CKPT_AT is the
 * newest checkpoint's time (0 unknown) and may lag by whole intervals
 * (attempt.c lists checkpoints every few cycles), so with a known
 * INTERVAL the phase counts from it, or from the end of the run's
 * RESTART_OVERHEAD when it has none yet: the job writes one every
 * INTERVAL of work. Without an interval, the time since the later of
 * CKPT_AT and STARTED. Pure.
 */
double	sched_move_since(int64_t now, int64_t started, int64_t ckpt_at,
	    double restart_overhead, double interval);

/*
 * May a job SINCE seconds past its last checkpoint move at a look that
 * comes every LOOK seconds: when its checkpoint INTERVAL is no longer
 * than a look (a later look would not come closer), or SINCE is within
 * a look. Pure.
 */
int	sched_move_in_time(double since, double interval, double look);

void	sched_move_check(struct store *st, struct attempts *att,
	    const struct conf *conf, int64_t now,
	    const struct sched_move_hooks *hooks, struct sched_move_run *ret);

#endif
