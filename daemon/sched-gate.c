/*
 * sched-gate.c: dependencies and array parallelism, before placement
 * (sched-gate.h; doc/DESIGN.md "Arrays and dependencies").
 *
 * A dependency on an array is on every task of it: after waits until
 * all of them succeeded and gives up (the dependent is cancelled) as soon
 * as one failed or was cancelled, Slurm's afterok; after_any waits until
 * all have ended. The cancel itself is the scheduler's (sched.c), which
 * writes the reason into the dependent's events; a job waiting for that
 * one is cancelled on the same or the next pass, and so on down a chain.
 *
 * Knows the store; nothing of the cloud, of quotas or of offers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/sched-gate.h"
#include "store/store.h"

void
sched_gate_job_done(struct sched_gate_job *g)
{
	free(g->deps);
	memset(g, 0, sizeof *g);
}

void
sched_gate_parse(struct sched_gate_job *g, const struct store_job *row,
    json_t *spec)
{
	static const char *const keys[] = { "after", "after_any" };
	json_t	*arr, *l, *v;
	size_t	 i, k, n;

	sched_gate_job_done(g);
	arr = json_object_get(spec, "array");
	if (row->array_id != 0 && json_is_object(arr)) {
		g->array_id = row->array_id;
		g->parallelism = (int)json_integer_value(json_object_get(arr,
		    "parallelism"));
		if (g->parallelism >= json_integer_value(json_object_get(arr,
		    "count")))
			g->parallelism = 0;
	}
	n = json_array_size(json_object_get(spec, keys[0])) +
	    json_array_size(json_object_get(spec, keys[1]));
	if (n == 0)
		return;
	g->deps = xreallocarray(NULL, n, sizeof *g->deps);
	for (k = 0; k < 2; k++) {
		l = json_object_get(spec, keys[k]);
		json_array_foreach(l, i, v)
			g->deps[g->ndeps++] = json_integer_value(v);
		if (k == 0)
			g->nafter = g->ndeps;
	}
}

void
sched_gate_reset(struct sched_gate *g)
{
	size_t	i;

	for (i = 0; i < g->nseen; i++) {
		free(g->seen[i].why);
		free(g->seen[i].why_any);
	}
	g->nseen = 0;
	g->nbusy = 0;
}

void
sched_gate_begin(struct sched_gate *g)
{
	sched_gate_reset(g);
	g->ndoomed = 0;
}

void
sched_gate_free(struct sched_gate *g)
{
	sched_gate_reset(g);
	free(g->seen);
	free(g->busy);
	free(g->doomed);
	memset(g, 0, sizeof *g);
}

/* "job 41" or "array 42" as one names what is waited for. */
static const char *
sched_gate_what(const struct store_sum *sum)
{
	return sum->array ? "array" : "job";
}

/* Work out both verdicts on job or array ID, once a pass. */
static struct sched_gate_seen *
sched_gate_seen(struct sched_gate *g, struct store *st, int64_t id)
{
	struct sched_gate_seen	*e;
	struct store_sum	 sum;
	char			*cause = NULL;
	int64_t			 bad, ended, ok;
	size_t			 i;
	int			 rc, live;

	for (i = 0; i < g->nseen; i++)
		if (g->seen[i].id == id)
			return &g->seen[i];
	if (g->nseen == g->capseen) {
		g->capseen = g->capseen ? g->capseen * 2 : 16;
		g->seen = xreallocarray(g->seen, g->capseen, sizeof *g->seen);
	}
	e = &g->seen[g->nseen++];
	memset(e, 0, sizeof *e);
	e->id = id;
	rc = store_job_sum(st, id, &sum, &cause);
	if (rc == -ENOENT) {
		e->verdict = e->verdict_any = SCHED_GATE_CANCEL;
		e->why = xprintf("job %" PRId64 " it waits for does not "
		    "exist", id);
		e->why_any = xstrdup(e->why);
		return e;
	}
	if (rc != 0) {
		log_warnx("scheduler: cannot read job %" PRId64 ": %s", id,
		    cause != NULL ? cause : "store error");
		free(cause);
		e->verdict = e->verdict_any = SCHED_GATE_WAIT;
		e->why = xprintf("waiting for job %" PRId64 " (cannot read "
		    "it now)", id);
		e->why_any = xstrdup(e->why);
		return e;
	}
	ok = sum.states[JOB_SUCCEEDED];
	bad = sum.states[JOB_FAILED] + sum.states[JOB_CANCELLED];
	ended = ok + bad;
	live = -1;
	for (i = 0; i < JOB_NSTATES; i++)
		if (sum.states[i] > 0 && (JOB_MASK(i) & JOB_MASK_LIVE))
			live = (int)i;

	/* after: all succeeded; one failed or cancelled dooms it. */
	if (ok == sum.tasks)
		e->verdict = SCHED_GATE_GO;
	else if (bad > 0) {
		e->verdict = SCHED_GATE_CANCEL;
		if (!sum.array)
			e->why = xprintf("job %" PRId64 " it waits for %s",
			    id, sum.states[JOB_FAILED] ? "failed" :
			    "was cancelled");
		else
			e->why = xprintf("array %" PRId64 " it waits for had "
			    "%" PRId64 " task(s) fail and %" PRId64
			    " cancelled", id, sum.states[JOB_FAILED],
			    sum.states[JOB_CANCELLED]);
	} else {
		e->verdict = SCHED_GATE_WAIT;
		if (!sum.array)
			e->why = xprintf("waiting for job %" PRId64 " (%s)",
			    id, job_state_name(live));
		else
			e->why = xprintf("waiting for array %" PRId64 " (%"
			    PRId64 " of %" PRId64 " tasks succeeded)", id, ok,
			    sum.tasks);
	}

	/* after_any: all ended, whatever the result. */
	if (ended == sum.tasks)
		e->verdict_any = SCHED_GATE_GO;
	else {
		e->verdict_any = SCHED_GATE_WAIT;
		if (!sum.array)
			e->why_any = xprintf("waiting for job %" PRId64
			    " to end (%s)", id, job_state_name(live));
		else
			e->why_any = xprintf("waiting for %s %" PRId64 " to "
			    "end (%" PRId64 " of %" PRId64 " tasks ended)",
			    sched_gate_what(&sum), id, ended, sum.tasks);
	}
	return e;
}

static struct sched_gate_busy *
sched_gate_busy(struct sched_gate *g, struct store *st, int64_t array_id)
{
	struct sched_gate_busy	*b;
	struct store_sum	 sum;
	char			*cause = NULL;
	size_t			 i;

	for (i = 0; i < g->nbusy; i++)
		if (g->busy[i].array_id == array_id)
			return &g->busy[i];
	if (store_job_sum(st, array_id, &sum, &cause) != 0) {
		log_warnx("scheduler: cannot count the tasks of array %"
		    PRId64 ": %s", array_id, cause != NULL ? cause :
		    "no such array");
		free(cause);
		return NULL;
	}
	if (g->nbusy == g->capbusy) {
		g->capbusy = g->capbusy ? g->capbusy * 2 : 16;
		g->busy = xreallocarray(g->busy, g->capbusy, sizeof *g->busy);
	}
	b = &g->busy[g->nbusy++];
	b->array_id = array_id;
	b->active = sum.states[JOB_LAUNCHING] + sum.states[JOB_PENDING] +
	    sum.states[JOB_RUNNING] + sum.states[JOB_CANCELLING];
	return b;
}

int
sched_gate_check(struct sched_gate *g, struct store *st, int64_t id,
    const struct sched_gate_job *j, char **ret_why)
{
	struct sched_gate_seen	*e;
	struct sched_gate_busy	*b;
	const char		*wait = NULL;
	size_t			 i;
	int			 v;

	for (i = 0; i < j->ndeps; i++) {
		e = sched_gate_seen(g, st, j->deps[i]);
		v = i < j->nafter ? e->verdict : e->verdict_any;
		if (v == SCHED_GATE_CANCEL) {
			*ret_why = xstrdup(i < j->nafter ? e->why :
			    e->why_any);
			return SCHED_GATE_CANCEL;
		}
		if (v == SCHED_GATE_WAIT && wait == NULL)
			wait = i < j->nafter ? e->why : e->why_any;
	}
	if (wait != NULL) {
		*ret_why = xstrdup(wait);
		return SCHED_GATE_WAIT;
	}
	if (j->array_id == 0 || j->parallelism <= 0)
		return SCHED_GATE_GO;
	if ((b = sched_gate_busy(g, st, j->array_id)) == NULL) {
		*ret_why = xprintf("array %" PRId64 ": cannot count its "
		    "running tasks now", j->array_id);
		return SCHED_GATE_WAIT;
	}
	if (b->active < j->parallelism)
		return SCHED_GATE_GO;
	*ret_why = xprintf("array %" PRId64 " runs at most %d task(s) at "
	    "once (parallelism)", j->array_id, j->parallelism);
	(void)id;
	return SCHED_GATE_WAIT;
}

void
sched_gate_doomed(struct sched_gate *g, int64_t array_id)
{
	if (g->ndoomed == g->capdoomed) {
		g->capdoomed = g->capdoomed ? g->capdoomed * 2 : 8;
		g->doomed = xreallocarray(g->doomed, g->capdoomed,
		    sizeof *g->doomed);
	}
	g->doomed[g->ndoomed++] = array_id;
}

int
sched_gate_is_doomed(const struct sched_gate *g, int64_t array_id)
{
	size_t	i;

	for (i = 0; array_id != 0 && i < g->ndoomed; i++)
		if (g->doomed[i] == array_id)
			return 1;
	return 0;
}

void
sched_gate_launched(struct sched_gate *g, int64_t array_id)
{
	size_t	i;

	for (i = 0; i < g->nbusy; i++)
		if (g->busy[i].array_id == array_id)
			g->busy[i].active++;
}
