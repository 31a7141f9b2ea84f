/*
 * sched-move.c: running jobs move to cheaper capacity as it frees up
 * (sched-move.h; doc/DESIGN.md "Moving to cheaper capacity"). A job
 * launched on flex-start or on a dear Spot zone because the cheap
 * zones were full ran its whole rest there: on the replayed H100 trace,
 * over a thousand GPU-hours at twice Spot's price. Each look walks the
 * live attempts (attempt_foreach), asks the scheduler where each
 * running job would go now and, when the saving pays for the move, has
 * attempt.c withdraw the attempt: the outcome "moved", which counts
 * neither a failure nor an interruption, avoids no place and queues the
 * job at once, is attempt.c's (attempt_move()).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/sched-deadline.h"
#include "daemon/sched-move.h"
#include "daemon/sched-offer.h"
#include "providers/provider.h"
#include "store/store.h"

/* A running attempt seen by the walk (attempt_foreach may not end
 * attempts: they are collected first). */
struct sm_seen {
	struct store_attempt	**a;
	size_t			  n, cap;
	int			  live;		/* live attempts, any state */
};

static void
sm_collect(const struct store_attempt *a, const struct provider *p,
    void *arg)
{
	struct sm_seen	*s = arg;

	if (a->ended == 0)
		s->live++;
	if (p == NULL || a->state != ATTEMPT_RUNNING || a->started <= 0 ||
	    a->ended != 0 || a->nodes > 1 ||
	    cloud_attempt_capacity(a) == CAPACITY_RESERVED)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->a = xreallocarray(s->a, s->cap, sizeof *s->a);
	}
	s->a[s->n++] = store_attempt_copy(a);
}

double
sched_move_saving(double here, double there, double there_hourly,
    double work_left, double since_ckpt, double restart_overhead,
    double interval, int strikes)
{
	double	redo = since_ckpt + restart_overhead;
	double	retry = restart_overhead + interval;

	/*
	 * Twice the switch's cost: the scheduler knows the place is not
	 * cooled down, not that it has room, and a refused move costs
	 * the switch without the saving (the replay moved jobs for $0.25
	 * and paid a refusal for many of them). A place that refused
	 * lately is likelier to refuse again: each strike it has left
	 * counts the switch once more (the replay without it moved jobs
	 * some 150 times into a zone that never had room, for savings of
	 * $2-3 each, every one refused).
	 */
	if (work_left <= 0 || here <= there)
		return 0;
	if (strikes < 0)
		strikes = 0;
	if (strikes > SCHED_STRIKE_MAX)
		strikes = SCHED_STRIKE_MAX;
	return (here - there) * work_left / 3600.0 -
	    (2.0 + strikes) * there_hourly * (redo + retry) / 3600.0;
}

double
sched_move_since(int64_t now, int64_t started, int64_t ckpt_at,
    double restart_overhead, double interval)
{
	double	base;

	if (interval <= 0) {
		base = (double)(ckpt_at > started ? ckpt_at : started);
		return now > base ? (double)now - base : 0;
	}
	base = ckpt_at > started ? (double)ckpt_at :
	    (double)started + restart_overhead;
	if ((double)now <= base)
		return 0;
	return fmod((double)now - base, interval);
}

int
sched_move_in_time(double since, double interval, double look)
{
	return interval <= look || since <= look;
}

/* "gce/us-east4-a Spot" of offer O into BUF. */
static const char *
sm_place(const struct sched_offer *o, char *buf, size_t len)
{
	(void)snprintf(buf, len, "%s/%s %s", o->prov->name,
	    o->zone[0] != '\0' ? o->zone : o->region,
	    capacity_name(o->capacity));
	return buf;
}

/* Is offer O where attempt A runs (provider, region, zone, kind)? */
static int
sm_same(const struct sched_offer *o, const struct store_attempt *a)
{
	return strcmp(o->prov->name, a->provider) == 0 &&
	    strcmp(o->region, a->region) == 0 &&
	    (o->zone[0] == '\0' || a->zone == NULL ||
	    strcmp(o->zone, a->zone) == 0) &&
	    o->capacity == (int)cloud_attempt_capacity(a);
}

/*
 * Places a job was moved to in this look: one move a place a look. The
 * scheduler knows a place is not cooled down, not that it has room; a
 * look that sent every job of a dear zone to the cheap one that had
 * just one VM free would pay a switch for each refusal.
 */
#define SM_TARGETS	32

struct sm_targets {
	char	place[SM_TARGETS][96];
	int	n;
};

static int
sm_target_taken(struct sm_targets *t, const char *place, int take)
{
	int	i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->place[i], place) == 0)
			return 1;
	if (take && t->n < SM_TARGETS)
		(void)snprintf(t->place[t->n++], sizeof t->place[0], "%s",
		    place);
	return 0;
}

/* Weigh moving attempt A: 1 moved, 0 not. */
static int
sm_weigh(struct store *st, struct attempts *att, const struct conf *conf,
    int64_t now, const struct sched_move_hooks *h,
    const struct store_attempt *a, struct sm_targets *tg,
    struct sched_move_run *r)
{
	const struct sched_offer	*o, *all = NULL;
	struct store_job		*row = NULL;
	struct sched_progress		 pg;
	size_t				 i, n = 0;
	double				 here = 0, since, ov, saving, sw, look;
	char				*msg, *cause = NULL, pl[96];
	int				 rc = 0;

	if (store_job_get(st, a->job_id, &row, &cause) < 0) {
		free(cause);
		return 0;
	}
	if (row->state != JOB_RUNNING || row->deadline_safe)
		goto out;
	/* A deadline job on flex-start is the bridge's (sched-deadline.c). */
	if (row->deadline > 0 && cloud_attempt_capacity(a) == CAPACITY_FLEX)
		goto out;
	/* A deadline job's first offer weighs its slack: read it first. */
	memset(&pg, 0, sizeof pg);
	if (row->deadline > 0 && sched_deadline_progress(st, conf, row, now,
	    &pg) < 0)
		goto out;
	if ((o = h->best(h->arg, row, pg.spot.left > 0 ? &pg.spot : NULL,
	    &all, &n)) == NULL || sm_same(o, a) ||
	    sm_target_taken(tg, sm_place(o, pl, sizeof pl), 0))
		goto out;
	/* What staying costs, as the offers price it (λ included). */
	for (i = 0; i < n && !sm_same(&all[i], a); i++)
		;
	here = i < n ? all[i].per_hour : a->hourly_usd;
	if (o->per_hour >= here)
		goto out;
	r->weighed++;
	/* Without a deadline, read only for a job a cheaper place waits. */
	if ((row->deadline <= 0 && sched_deadline_progress(st, conf, row,
	    now, &pg) < 0) || pg.work <= 0) {
		log_debug("job %" PRId64 ": no estimated_hours to weigh a move "
		    "by", a->job_id);
		goto out;
	}
	ov = (double)conf->restart_overhead;
	sw = ov + pg.interval;
	/* A run shorter than a switch has not paid for its own start. */
	if ((double)(now - a->started) < sw)
		goto out;
	/*
	 * Stop a job just after a checkpoint, not half way to the next:
	 * the looks come every stockout_cooldown (sched.c), so one of
	 * them falls in that stretch each interval. Moving whenever the
	 * saving showed lost 15 minutes of work a move on average, and
	 * a deadline job as much of its slack (doc/DESIGN.md "Moving to
	 * cheaper capacity").
	 */
	since = sched_move_since(now, a->started, row->checkpoint_at, ov,
	    pg.interval);
	look = (double)(conf->stockout_cooldown > conf->poll_interval ?
	    conf->stockout_cooldown : conf->poll_interval);
	if (!sched_move_in_time(since, pg.interval, look)) {
		log_debug("job %" PRId64 ": %s cheaper, but %.0f s of work "
		    "since its checkpoint: moves after the next", a->job_id,
		    sm_place(o, pl, sizeof pl), since);
		r->later++;
		goto out;
	}
	saving = sched_move_saving(here, o->per_hour, o->hourly,
	    pg.work - pg.done, since, ov, pg.interval, o->strikes);
	/* PL names the place from here on: the offers are the scheduler's,
	 * and O is not read past the move. */
	(void)sm_place(o, pl, sizeof pl);
	log_debug("job %" PRId64 ": %s at $%.4f/h against $%.4f/h here: "
	    "saving $%.2f over %.1f h left", a->job_id, pl, o->per_hour,
	    here, saving, (pg.work - pg.done) / 3600.0);
	if (saving <= 0)
		goto out;
	/* A deadline job moves only with the slack for two switches. */
	if (row->deadline > 0 && (double)pg.slack <
	    (double)conf->deadline_margin + 2 * sw)
		goto out;
	msg = xprintf("moved to cheaper capacity: %s at $%.2f/h expected "
	    "against $%.2f/h here, saving about $%.2f over %.1f h of work "
	    "left", pl, o->per_hour, here, saving,
	    (pg.work - pg.done) / 3600.0);
	if (attempt_move(att, a->job_id, msg) == 0) {
		(void)sm_target_taken(tg, pl, 1);
		log_info("job %" PRId64 ": %s", a->job_id, msg);
		r->moved++;
		rc = 1;
	}
	free(msg);
out:
	store_job_free(row);
	return rc;
}

void
sched_move_check(struct store *st, struct attempts *att,
    const struct conf *conf, int64_t now,
    const struct sched_move_hooks *h, struct sched_move_run *r)
{
	struct sm_seen		s;
	struct sm_targets	tg;
	size_t			i;

	memset(r, 0, sizeof *r);
	if (att == NULL || h->best == NULL)
		return;
	memset(&s, 0, sizeof s);
	tg.n = 0;
	attempt_foreach(att, sm_collect, &s);
	r->running = (int)s.n;
	for (i = 0; i < s.n; i++) {
		(void)sm_weigh(st, att, conf, now, h, s.a[i], &tg, r);
		store_attempt_free(s.a[i]);
	}
	free(s.a);
	/*
	 * Capacity frees up without any event of ours (another's VM ends,
	 * a zone's stock returns), nor does a launch's move to running:
	 * look again after a cool-down's length while anything is live.
	 */
	if (s.live > 0)
		r->next = now + (conf->stockout_cooldown > 0 ?
		    conf->stockout_cooldown : 600);
}
