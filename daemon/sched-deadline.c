/*
 * sched-deadline.c: the pass's look at jobs with a deadline
 * (sched-deadline.h; doc/DESIGN.md "Deadlines"). One index walk
 * (jobs_deadline: live jobs with a deadline only) and, per such job, its
 * attempts: what it costs is proportional to the deadline jobs, not to
 * the queue. The arithmetic is deadline.c's; this file reads what it
 * needs and acts on the verdict: the sticky mark in the store, and the
 * withdrawal of a Spot attempt through attempt.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/duration.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/deadline.h"
#include "daemon/sched-deadline.h"
#include "store/store.h"

/* What a job's attempts say, summed by sd_on_attempt. */
struct sd_attempts {
	int64_t		 now;
	double		 run;		/* seconds run, all attempts */
	int		 resumes;	/* started again from a checkpoint */
	int		 live_spot;	/* a live attempt on Spot */
	int		 run_flex;	/* a live one on flex-start */
	double		 flex_run;	/* how long it has run, s */
	double		 overhead;	/* restart_overhead, s */
	double		 interval;	/* checkpoint interval, s; 0 none */
	double		 lost;		/* work interruptions lost, s */
};

struct sd_ctx {
	struct store		*st;
	struct attempts		*att;
	const struct conf	*conf;
	int64_t			 now;
	const struct sched_deadline_hooks *hooks;
	struct sched_deadline_run *run;
};

static int
sd_on_attempt(const struct store_attempt *a, void *arg)
{
	struct sd_attempts	*x = arg;
	int64_t			 end;

	if (a->started > 0) {
		end = a->ended > 0 ? a->ended : x->now;
		if (end > a->started)
			x->run += (double)(end - a->started);
		if (a->resumed_from != NULL)
			x->resumes++;
		/* A move (end reason pending) loses the same work. */
		if (a->ended > 0 && (attempt_end_is_interruption(
		    a->end_reason) || a->end_reason == END_PENDING) &&
		    end > a->started)
			x->lost += deadline_lost((double)(end - a->started),
			    a->resumed_from != NULL, x->overhead, x->interval);
	}
	if (a->state != ATTEMPT_ENDED && a->ended == 0 && a->spot)
		x->live_spot = 1;
	if (a->state != ATTEMPT_ENDED && a->ended == 0 &&
	    cloud_attempt_capacity(a) == CAPACITY_FLEX) {
		x->run_flex = 1;
		x->flex_run = a->started > 0 && x->now > a->started ?
		    (double)(x->now - a->started) : 0;
	}
	return 0;
}

/* "1h12m", or "-0h20m" when negative, into BUF. */
static char *
sd_span(int64_t sec, char *buf, size_t len)
{
	char	d[24];

	(void)duration_format(sec < 0 ? -sec : sec, d, sizeof d);
	(void)snprintf(buf, len, "%s%s", sec < 0 ? "-" : "", d);
	return buf;
}

/*
 * Read what the policy needs of ROW into *DJ and *X: 0, or -errno when
 * its attempts cannot be read (*cause).
 */
static int
sd_read(struct store *st, const struct conf *conf, const struct store_job *row,
    int64_t now, struct deadline_job *dj, struct sd_attempts *x,
    int *ret_require, char **cause)
{
	json_t		*spec;
	const char	*spot;
	double		 interval;
	int		 rc;

	spec = json_loads(row->spec != NULL ? row->spec : "", 0, NULL);
	spot = json_string_value(json_object_get(spec, "spot"));
	*ret_require = spot != NULL && strcmp(spot, "require") == 0;
	memset(dj, 0, sizeof *dj);
	dj->now = now;
	dj->deadline = row->deadline;
	dj->work = json_number_value(json_object_get(spec,
	    "estimated_hours")) * 3600;
	interval = (double)json_integer_value(json_object_get(
	    json_object_get(spec, "checkpoint"), "interval"));
	/* A job that never runs on Spot has nothing to leave. */
	dj->safe = row->deadline_safe || (spot != NULL &&
	    strcmp(spot, "never") == 0);
	json_decref(spec);
	dj->restart_overhead = (double)conf->restart_overhead;
	dj->lambda = conf->preemptions_per_hour;
	memset(x, 0, sizeof *x);
	x->now = now;
	x->overhead = dj->restart_overhead;
	x->interval = interval;
	if ((rc = store_attempt_list(st, row->id, sd_on_attempt, x,
	    cause)) < 0)
		return rc;
	dj->done = deadline_done(x->run, x->resumes, dj->restart_overhead,
	    dj->work) - x->lost;
	if (dj->done < 0)
		dj->done = 0;
	return 0;
}

/* The slack of a job that may still use Spot (DJ, of checkpoint
 * INTERVAL seconds) above MARGIN, into *RET (struct sched_slack). */
static void
sd_slack_of(const struct deadline_job *dj, double interval,
    int64_t margin, struct sched_slack *ret)
{
	struct deadline_job	raw = *dj;

	raw.lambda = 0;
	ret->left = dj->work - dj->done;
	if (ret->left < 0)
		ret->left = 0;
	ret->avail = (double)(deadline_slack(&raw) - margin);
	/*
	 * A preemption costs the restart, half an interval of work on
	 * average, and the wait for the next start, counted as long as
	 * the restart (the replay's median wait after a preemption was
	 * 9-12 minutes, its p90 37).
	 */
	ret->cost = 2 * dj->restart_overhead + (interval > 0 ? interval / 2 :
	    0);
}

int
sched_deadline_slack(struct store *st, const struct conf *conf,
    const struct store_job *row, int64_t now, int64_t *ret_slack)
{
	struct deadline_job	dj;
	struct sd_attempts	x;
	int			rc, require;

	if (row->deadline <= 0)
		return -ENOENT;
	if ((rc = sd_read(st, conf, row, now, &dj, &x, &require, NULL)) < 0)
		return rc;
	*ret_slack = deadline_slack(&dj);
	return 0;
}

int
sched_deadline_progress(struct store *st, const struct conf *conf,
    const struct store_job *row, int64_t now, struct sched_progress *ret)
{
	struct deadline_job	dj;
	struct sd_attempts	x;
	int			rc, require;

	if ((rc = sd_read(st, conf, row, now, &dj, &x, &require, NULL)) < 0)
		return rc;
	ret->done = dj.done;
	ret->work = dj.work;
	ret->interval = x.interval;
	ret->slack = row->deadline > 0 ? deadline_slack(&dj) : 0;
	memset(&ret->spot, 0, sizeof ret->spot);
	if (row->deadline > 0 && !dj.safe && !require)
		sd_slack_of(&dj, x.interval,
		    conf->deadline_margin, &ret->spot);
	return 0;
}

/*
 * Flex-start as a bridge (doc/DESIGN.md "Deadlines"): a queued job
 * short of slack does not wait out a Spot stockout, which loses slack a
 * second a second, but takes flex-start, which keeps it; and a job
 * running on flex-start goes back to Spot once the scheduler would
 * place it there and its slack pays for the move. Without it a job
 * waited for Spot until the margin and then ran its whole rest on
 * flex-start at twice Spot's price (the replay: 656 of 3,276 GPU-hours,
 * 52 % of the gap to the oracle).
 */
static void
sd_bridge(struct sd_ctx *c, const struct store_job *row,
    const struct deadline_job *dj, const struct sd_attempts *x,
    int64_t margin)
{
	const struct sched_deadline_hooks *h = c->hooks;
	struct sched_slack	 ss;
	int64_t	sw = deadline_switch(dj, x->interval), until;
	char	*msg, sl[32];

	sd_slack_of(dj, x->interval, margin, &ss);
	if (row->state == JOB_QUEUED && h->wait_until != NULL) {
		until = deadline_wait_until(dj, margin, sw);
		h->wait_until(h->arg, row, until, &ss);
		/* The pass then takes capacity that is not preempted. */
		if (until > c->now && (c->run->next == 0 ||
		    until + 1 < c->run->next))
			c->run->next = until + 1;
	}
	/*
	 * A run shorter than a switch has not paid for its own start, and
	 * work left under two switches would not pay for the next one
	 * (Spot at half of flex-start's price saves half of it).
	 */
	if (!x->run_flex || c->att == NULL || h->spot_first == NULL ||
	    !deadline_back_to_spot(dj, margin, sw) ||
	    dj->work - dj->done <= 2.0 * (double)sw)
		return;
	if (row->state != JOB_RUNNING || x->flex_run < (double)sw ||
	    !h->spot_first(h->arg, row, &ss)) {
		/*
		 * Look again once it has run a switch, or a stockout's
		 * cool-down would have ended: nothing else may wake the
		 * scheduler while it runs.
		 */
		until = c->now + (c->conf->stockout_cooldown > 0 ?
		    c->conf->stockout_cooldown : 60);
		if (x->flex_run < (double)sw && c->now + sw -
		    (int64_t)x->flex_run > until)
			until = c->now + sw - (int64_t)x->flex_run;
		if (c->run->next == 0 || until < c->run->next)
			c->run->next = until;
		return;
	}
	msg = xprintf("back to Spot: Spot capacity again, slack %s",
	    sd_span(deadline_slack(dj), sl, sizeof sl));
	if (attempt_move(c->att, row->id, msg) == 0)
		c->run->back++;
	free(msg);
}

static int
sd_on_job(const struct store_job *row, void *arg)
{
	struct sd_ctx		*c = arg;
	struct deadline_job	 dj;
	struct sd_attempts	 x;
	struct sched_slack	 ss;
	char			*cause = NULL, *msg, sl[32], mg[32];
	int64_t			 margin = c->conf->deadline_margin, slack, at;
	int			 rc, require, fresh = 0;

	c->run->jobs++;
	if (row->state == JOB_HELD || row->state == JOB_CANCELLING)
		return 0;
	if (sd_read(c->st, c->conf, row, c->now, &dj, &x, &require,
	    &cause) < 0) {
		log_warnx("job %" PRId64 ": cannot read its attempts for its "
		    "deadline: %s", row->id, cause);
		free(cause);
		return 0;
	}
	slack = deadline_slack(&dj);
	(void)sd_span(slack, sl, sizeof sl);
	(void)sd_span(margin, mg, sizeof mg);
	if (!dj.safe && !require && deadline_unsafe(&dj, margin)) {
		fresh = 1;
		msg = xprintf("deadline: slack %s below margin %s; no more "
		    "Spot capacity for this job", sl, mg);
		rc = store_job_set_deadline_safe(c->st, row->id, msg, &cause);
		if (rc == 0 || rc == -EALREADY) {
			if (rc == 0) {
				log_info("job %" PRId64 ": %s", row->id, msg);
				c->run->marked++;
			}
			dj.safe = 1;
			if (c->hooks->on_safe != NULL)
				c->hooks->on_safe(c->hooks->arg, row->id);
		} else {
			log_warnx("job %" PRId64 ": cannot mark it "
			    "deadline_safe: %s", row->id, cause);
			free(cause);
		}
		free(msg);
	}
	if (row->deadline_safe || dj.safe) {
		/*
		 * Safe (spot: never, or marked at an earlier look) and
		 * queued: no Spot to wait for, but its slack still orders
		 * the pass, least first. One marked just now is left
		 * alone: ROW, read before the mark, would give it its
		 * Spot offers back.
		 */
		if (!fresh && row->state == JOB_QUEUED &&
		    c->hooks->wait_until != NULL) {
			sd_slack_of(&dj, x.interval, margin, &ss);
			c->hooks->wait_until(c->hooks->arg, row, c->now, &ss);
		}
		/* Marked (now or before a restart) and still on Spot. */
		if (x.live_spot && !require && c->att != NULL) {
			msg = xprintf("moved to on-demand capacity: slack %s "
			    "below margin %s", sl, mg);
			if (attempt_move(c->att, row->id, msg) == 0)
				c->run->moved++;
			free(msg);
		}
		return 0;
	}
	if (!require)
		sd_bridge(c, row, &dj, &x, margin);
	/* Running jobs gain what they lose; queued ones lose a second a
	 * second: wake when that reaches the margin. */
	if (row->state != JOB_RUNNING && !require) {
		at = deadline_cross_at(&dj, margin);
		if (at > 0 && (c->run->next == 0 || at < c->run->next))
			c->run->next = at;
	}
	return 0;
}

void
sched_deadline_check(struct store *st, struct attempts *att,
    const struct conf *conf, int64_t now,
    const struct sched_deadline_hooks *hooks, struct sched_deadline_run *ret)
{
	struct sd_ctx	c;
	char		*cause = NULL;

	memset(ret, 0, sizeof *ret);
	memset(&c, 0, sizeof c);
	c.st = st;
	c.att = att;
	c.conf = conf;
	c.now = now;
	c.hooks = hooks;
	c.run = ret;
	if (store_job_list_deadline(st, sd_on_job, &c, &cause) < 0) {
		log_warnx("scheduler: cannot list the jobs with a deadline: "
		    "%s", cause);
		free(cause);
	}
}
