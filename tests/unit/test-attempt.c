/*
 * test-attempt.c: daemon/attempt.c -- what every outcome in its table of
 * legal changes does to the attempt, the job and the scheduler's next
 * choice -- over the fixture of cloudtest.h (the real store, quota,
 * sched and reconcile code; scripted providers).
 *
 * One case per row of attempt_rules[], the table's own consistency with
 * the store's counting, the one backoff, and attempts numbered per job
 * in the events.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "providers/provider.h"
#include "store/store.h"
#include "tests/unit/cloudtest.h"

#define GCE	",\"providers\":[\"gce\"],\"spot\":\"never\""

/* N jobs of one T4 on gce, standard, submitted; the scheduler runs. */
static void
scheduled(struct t *t, size_t n)
{
	(void)submit(t, "{" T4 GCE "}", 0, n);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
}

/* Job 1 scheduled; its first create call answered FAIL with MESSAGE. */
static void
refused(struct t *t, int fail, const char *message)
{
	t->script[0].fail = fail;
	t->script[0].message = message;
	t->nscript = 1;
	scheduled(t, 1);
}

static int
copy_attempt(const struct store_attempt *a, void *arg)
{
	struct store_attempt	**v = arg;
	int			  i;

	for (i = 0; v[i] != NULL; i++)
		;
	if (i < 15)
		v[i] = store_attempt_copy(a);
	return 0;
}

/* Attempt N of job 1 as stored. New. */
static struct store_attempt *
attempt1(struct t *t, int n)
{
	struct store_attempt	*v[16] = { NULL }, *a = NULL;
	int			 i;

	(void)store_attempt_list(t->store, 1, copy_attempt, v, NULL);
	for (i = 0; v[i] != NULL; i++) {
		if (v[i]->number == n && a == NULL)
			a = v[i];
		else
			store_attempt_free(v[i]);
	}
	return a;
}

static int
first_ended(void *arg)
{
	struct t		*t = arg;
	struct store_attempt	*a = attempt1(t, 1);
	int			 ended = a != NULL && a->state == ATTEMPT_ENDED;

	store_attempt_free(a);
	return ended;
}

static int
job_succeeded_1(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_SUCCEEDED;
}

static int	has_event(struct t *, int64_t, const char *);

/* Two more polls than when first asked (the listing was read). */
static int
polled_twice(void *arg)
{
	static int	 base = -1;
	struct t	*t = arg;

	if (base < 0 || t->polls < base)
		base = t->polls;
	if (t->polls >= base + 2) {
		base = -1;
		return 1;
	}
	return 0;
}

/*
 * Job 1 of SPEC launched and listed running on gce (attempt 1, its
 * resource in seen[0]); NAME gets the resource name.
 */
static void
running(struct t *t, const char *extra, char *name)
{
	char	*text = xprintf("{" T4 GCE "%s}", extra);

	launched_listed(t, text, PROV_RUNNING, name);
	free(text);
	unittest_run_cond(t->ut, job_running_1, t);
}

/* The listing now says STATE (exit code EXIT, MESSAGE); wait for the
 * end of attempt 1, and stop listing it. */
static void
listed(struct t *t, int state, int exit_code, const char *message)
{
	t->seen[0].state = state;
	t->seen[0].exit_code = exit_code;
	t->seen[0].message = message;
	unittest_run_cond(t->ut, first_ended, t);
	t->nseen = 0;
}

struct events {
	const char	*want;
	int		 part;		/* a part of the message will do */
	int		 found;
};

static int
on_event(const struct store_event *e, void *arg)
{
	struct events	*ev = arg;

	if (e->message != NULL && (ev->part ? strstr(e->message, ev->want) !=
	    NULL : strcmp(e->message, ev->want) == 0))
		ev->found = 1;
	return 0;
}

/* Does job ID have an event saying TEXT (PART: in its words)? */
static int
event_find(struct t *t, int64_t id, const char *text, int part)
{
	struct events	ev = { text, part, 0 };

	assert_true(store_event_list(t->store, id, on_event, &ev, NULL) >= 0);
	return ev.found;
}

static int
has_event(struct t *t, int64_t id, const char *text)
{
	return event_find(t, id, text, 0);
}

static int
has_event_with(struct t *t, int64_t id, const char *text)
{
	return event_find(t, id, text, 1);
}

static int
count_cool(const char *zone, const char *gpu, int spot, int64_t until,
    int strikes, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int
cooldowns(struct t *t)
{
	int	n = 0;

	assert_true(store_cooldown_list(t->store, time(NULL), count_cool, &n,
	    NULL) >= 0);
	return n;
}

/* ---------------------------------------------------------------- */
/* The table.							    */

/* Every row is whole, and counts what the store counts for its end. */
static void
test_attempt_table(void **state)
{
	const struct attempt_rule	*r;
	int				 i, counted;

	(void)state;
	assert_null(attempt_rule(-1));
	assert_null(attempt_rule(ATTEMPT_OUT_COUNT));
	for (i = 0; i < ATTEMPT_OUT_COUNT; i++) {
		r = attempt_rule(i);
		assert_non_null(r);
		assert_non_null(r->name);
		assert_true(r->from != 0);
		assert_true(r->to >= 0 && r->to < JOB_NSTATES);
		assert_false(r->from & JOB_MASK(r->to) &&
		    r->end != END_NONE);
		if (r->over >= 0) {
			assert_true(r->over < ATTEMPT_OUT_COUNT);
			assert_int_equal(attempt_rule(r->over)->counts,
			    r->counts);
			assert_int_not_equal(attempt_rule(r->over)->to,
			    JOB_QUEUED);
		}
		if (r->counts != ATTEMPT_COUNTS_NONE && r->to == JOB_QUEUED)
			assert_true(r->over >= 0);
		if (r->end == END_NONE)
			continue;
		counted = r->end == END_FAILED ? ATTEMPT_COUNTS_FAILURE :
		    attempt_end_is_interruption(r->end) ?
		    ATTEMPT_COUNTS_INTERRUPTION : ATTEMPT_COUNTS_NONE;
		assert_int_equal(counted, r->counts);
	}
	/* Quota is neither: no interruption, no cool-down. */
	r = attempt_rule(ATTEMPT_OUT_QUOTA);
	assert_int_equal(r->end, END_QUOTA);
	assert_int_equal(r->counts, ATTEMPT_COUNTS_NONE);
	assert_false(r->cooldown);
	assert_true(r->requota);
	assert_int_equal(r->avoid, ATTEMPT_AVOID_QUOTA_TTL);
	assert_true(attempt_rule(ATTEMPT_OUT_STOCKOUT)->cooldown);
	assert_true(attempt_rule(ATTEMPT_OUT_LAUNCH_STOCKOUT)->cooldown);
}

/* The one backoff: base x 2^n, capped, at most a quarter off. */
static void
test_attempt_backoff(void **state)
{
	struct t	*t = *state;
	int64_t		 d;
	int		 i;

	NEED_FAKE(t->ut);
	start(t, 0);
	for (i = 0; i < 50; i++) {
		d = attempt_backoff(t->att, 0);
		assert_true(d >= 0 && d <= 1);
		d = attempt_backoff(t->att, 5);
		assert_true(d >= 1 && d <= 2);	/* backoff_max 2s */
	}
}

/* ---------------------------------------------------------------- */
/* Launch answers.						    */

/* accepted: attempt and job pending, the launch memory forgotten. */
static void
test_attempt_accepted(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct attempt_stats	 st;

	NEED_FAKE(t->ut);
	t->script[0].cloud_id = "vm-7";
	t->nscript = 1;
	scheduled(t, 1);
	unittest_run_cond(t->ut, job_pending_1, t);
	a = attempt1(t, 1);
	assert_int_equal(a->state, ATTEMPT_PENDING);
	assert_string_equal(a->cloud_id, "vm-7");
	store_attempt_free(a);
	attempt_get_stats(t->att, &st);
	assert_int_equal(st.live, 1);
	assert_int_equal(st.launches, 1);
}

/* launch_quota: ended as a launch error, requeued at once elsewhere
 * with a why; no failure counted, no cool-down. */
static void
test_attempt_launch_quota(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;

	NEED_FAKE(t->ut);
	refused(t, PROV_FAIL_QUOTA, "Quota 'NVIDIA_T4_GPUS' exceeded.");
	unittest_run_cond(t->ut, first_ended, t);
	j = job(t, 1);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_int_equal(j->failures, 0);
	assert_int_equal(j->interruptions, 0);
	assert_non_null(j->why);
	assert_non_null(strstr(j->why, "quota exceeded on gce/"));
	assert_true(j->not_before > time(NULL) - 1);
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_LAUNCH_ERROR);
	store_attempt_free(a);
	assert_int_equal(cooldowns(t), 0);
	assert_true(has_event(t, 1, "attempt 1 ended: launch_error: Quota "
	    "'NVIDIA_T4_GPUS' exceeded."));
}

/* launch_stockout: the zone cooled down in the store, job requeued. */
static void
test_attempt_launch_stockout(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t->ut);
	refused(t, PROV_FAIL_STOCKOUT, "ZONE_RESOURCE_POOL_EXHAUSTED");
	unittest_run_cond(t->ut, first_ended, t);
	assert_int_equal(cooldowns(t), 1);
	j = job(t, 1);
	assert_int_equal(j->interruptions, 0);
	store_job_free(j);
	/*
	 * The why said so too, but a pass the requeue woke may already have
	 * placed the job elsewhere and cleared it: the event stays.
	 */
	assert_true(has_event_with(t, 1, "out of nvidia-tesla-t4 until"));
}

/* launch_transient: backoff from the launch errors in a row. */
static void
test_attempt_launch_transient(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t->ut);
	refused(t, PROV_FAIL_TRANSIENT, "HTTP 503");
	unittest_run_cond(t->ut, first_ended, t);
	j = job(t, 1);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_true(j->not_before >= time(NULL));
	assert_string_equal(j->why, "retrying in 1s after: HTTP 503");
	assert_true(has_event(t, 1, "launch failed: HTTP 503"));
	store_job_free(j);
}

/* launch_place: a refusal naming the place chosen sends the job to
 * another region; the job does not fail. */
static void
test_attempt_launch_place(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	static char		 msg[128];
	char			 first[64];

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_INVALID;
	t->script[0].message = msg;
	t->nscript = 1;
	t->launch_ms = 300;
	scheduled(t, 1);
	unittest_run_cond(t->ut, first_launch, t);
	/* Read when the answer comes, a loop turn later. */
	(void)snprintf(msg, sizeof msg, "Machine type is not available in "
	    "zone %s", t->zone);
	(void)snprintf(first, sizeof first, "%s", t->region);
	unittest_run_cond(t->ut, launched_twice, t);
	assert_string_not_equal(t->region, first);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_LAUNCH_ERROR);
	store_attempt_free(a);
	assert_int_not_equal(job_state(t, 1), JOB_FAILED);
}

/* launch_invalid: the job fails with the cloud's words. */
static void
test_attempt_launch_invalid(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	struct store_attempt	*a;

	NEED_FAKE(t->ut);
	refused(t, PROV_FAIL_AUTH, "Permission denied");
	unittest_run_cond(t->ut, job_failed_1, t);
	j = job(t, 1);
	assert_non_null(strstr(j->message, "Permission denied"));
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_LAUNCH_ERROR);
	store_attempt_free(a);
	assert_true(has_event(t, 1, "attempt 1 ended: launch_error: "
	    "Permission denied"));
}

/* The race: cancelled while the create call was out, refused: the job
 * is cancelled, not queued again. */
static void
test_attempt_launch_refused_cancelled(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_TRANSIENT;
	t->script[0].message = "HTTP 503";
	t->nscript = 1;
	t->launch_ms = 300;
	scheduled(t, 1);
	unittest_run_cond(t->ut, first_launch, t);
	assert_int_equal(store_job_transition(t->store, 1,
	    JOB_MASK(JOB_LAUNCHING), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	unittest_run_cond(t->ut, job_cancelled_1, t);
	assert_true(first_ended(t));
}

/* ---------------------------------------------------------------- */
/* What listings say.						    */

/* adopted: a crash survivor listed pending is adopted, not relaunched. */
static void
test_attempt_adopted(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	left_listed(t, "{" T4 GCE "}", ATTEMPT_LAUNCHING, 0, PROV_PENDING,
	    name);
	unittest_run_cond(t->ut, job_pending_1, t);
	assert_int_equal(t->launches, 0);
	assert_true(has_event(t, 1, "found on gce/us-central1-a after a "
	    "restart"));
	t->nseen = 0;
}

/* The test providers were asked to cancel something. */
static int
cancelled_any(void *arg)
{
	return ((struct t *)arg)->cancels > 0;
}

/*
 * A service that names its jobs itself (Vertex AI) lists two running
 * jobs with one attempt's label: the one the attempt knows stays, the
 * other is deleted, and the job's events say so.
 */
static void
test_attempt_duplicate_deleted(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	launched_listed(t, "{" T4 ",\"providers\":[\"vertex\"],"
	    "\"spot\":\"never\"}", PROV_RUNNING, name);
	t->seen[0].cloud_id = "projects/p/locations/us-central1/customJobs/1";
	seen_init(&t->seen[1]);
	t->seen[1].resource = name;
	t->seen[1].state = PROV_RUNNING;
	t->seen[1].cloud_id = "projects/p/locations/us-central1/customJobs/2";
	t->nseen = 2;
	unittest_run_cond(t->ut, cancelled_any, t);
	unittest_run_cond(t->ut, job_running_1, t);
	assert_true(has_event(t, 1, "deleted a duplicate projects/p/"
	    "locations/us-central1/customJobs/2 of attempt 1"));
	assert_int_equal(t->cancels, 1);
	t->nseen = 0;
}

/* running, then succeeded: the cost billed, the job done. */
static void
test_attempt_running_succeeded(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, "", name);
	a = attempt1(t, 1);
	assert_int_equal(a->state, ATTEMPT_RUNNING);
	assert_true(a->started > 0);
	store_attempt_free(a);
	listed(t, PROV_SUCCEEDED, 0, NULL);
	unittest_run_cond(t->ut, job_succeeded_1, t);
	assert_true(has_event(t, 1, "attempt 1 ended: succeeded"));
}

/* failed within max_failures: queued again, a failure counted. */
static void
test_attempt_failed(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, ",\"max_failures\":1", name);
	listed(t, PROV_FAILED, 3, "exit 3");
	j = job(t, 1);
	assert_int_equal(j->failures, 1);
	assert_int_equal(j->interruptions, 0);
	assert_int_equal(j->exit_code, 3);
	assert_true(j->state == JOB_QUEUED || j->state == JOB_LAUNCHING ||
	    j->state == JOB_PENDING);
	store_job_free(j);
	assert_true(has_event(t, 1, "attempt 1 ended: failed: exit 3"));
}

/* failed past max_failures: the job fails. */
static void
test_attempt_failed_last(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, "", name);
	listed(t, PROV_FAILED, 3, NULL);
	unittest_run_cond(t->ut, job_failed_1, t);
	j = job(t, 1);
	assert_int_equal(j->failures, 1);
	assert_int_equal(j->exit_code, 3);
	store_job_free(j);
	assert_true(has_event_with(t, 1, "exit code 3 on gce/"));
}

/* An interruption of KIND within max_interruptions, the first: queued
 * again to run at once (no backoff), counted, ended with END. */
static void
interrupted(void **state, int kind, int end)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, ",\"max_interruptions\":3", name);
	listed(t, kind, -1, "gone");
	j = job(t, 1);
	assert_int_equal(j->interruptions, 1);
	assert_int_equal(j->failures, 0);
	assert_true(j->state != JOB_FAILED);
	assert_true(j->not_before <= time(NULL));
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, end);
	store_attempt_free(a);
}

static void
test_attempt_preempted(void **state)
{
	interrupted(state, PROV_PREEMPTED, END_PREEMPTED);
	assert_int_equal(cooldowns(T), 0);
}

static int
second_ended(void *arg)
{
	struct t		*t = arg;
	struct store_attempt	*a = attempt1(t, 2);
	int			 ended = a != NULL && a->state == ATTEMPT_ENDED;

	store_attempt_free(a);
	return ended;
}

/*
 * A second interruption within the hour backs off: repeated ones are
 * where backoff belongs, not the first (issue 18).
 */
static void
test_attempt_preempted_again_backs_off(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			*cause = NULL, name[CLOUD_NAME_MAX];
	char			 name2[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	assert_int_equal(conf_set(&t->conf, "scheduler", "backoff_base",
	    "60s", &cause), 0);
	assert_int_equal(conf_set(&t->conf, "scheduler", "backoff_max",
	    "120s", &cause), 0);
	running(t, ",\"max_interruptions\":3", name);
	listed(t, PROV_PREEMPTED, -1, "gone");
	unittest_run_cond(t->ut, launched_twice, t);
	cloud_resource_name(store_install_id(t->store), 1, 2, name2);
	seen_init(&t->seen[0]);
	t->seen[0].resource = name2;
	t->seen[0].state = PROV_RUNNING;
	t->nseen = 1;
	unittest_run_cond(t->ut, job_running_1, t);
	t->seen[0].state = PROV_PREEMPTED;
	unittest_run_cond(t->ut, second_ended, t);
	t->nseen = 0;
	j = job(t, 1);
	assert_int_equal(j->interruptions, 2);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_true(j->not_before > time(NULL) + 30);
	store_job_free(j);
	assert_true(has_event_with(t, 1, "preempted on gce/"));
}

static void
test_attempt_maintenance(void **state)
{
	interrupted(state, PROV_MAINTENANCE, END_MAINTENANCE);
}

/* stockout after acceptance: an interruption, and a cool-down. */
static void
test_attempt_stockout(void **state)
{
	interrupted(state, PROV_STOCKOUT, END_STOCKOUT);
	assert_int_equal(cooldowns(T), 1);
}

/*
 * A stockout of an attempt that never ran (a Batch job whose VM could not
 * be created, found by the listing): no work was interrupted, so it is
 * not counted against max_interruptions (it would wear the job out on
 * Spot), brings no back-off, and cools the zone down as a refused create
 * does.
 */
static void
test_attempt_stockout_before_start(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			*cause = NULL, name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	assert_int_equal(conf_set(&t->conf, "scheduler", "backoff_base",
	    "60s", &cause), 0);
	launched_listed(t, "{" T4 GCE ",\"max_interruptions\":1}",
	    PROV_PENDING, name);
	unittest_run_cond(t->ut, job_pending_1, t);
	listed(t, PROV_STOCKOUT, -1, "ZONE_RESOURCE_POOL_EXHAUSTED");
	j = job(t, 1);
	assert_int_equal(j->interruptions, 0);
	assert_true(j->state != JOB_FAILED);
	assert_true(j->not_before <= time(NULL));
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_STOCKOUT);
	assert_int_equal(a->started, 0);
	store_attempt_free(a);
	assert_int_equal(cooldowns(t), 1);
}

/* A cloud-side error is counted as lost. */
static void
test_attempt_lost(void **state)
{
	interrupted(state, PROV_ERROR, END_LOST);
}

/* Not listed by two complete listings in a row: lost. */
static void
test_attempt_lost_unlisted(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, ",\"max_interruptions\":3", name);
	t->nseen = 0;
	unittest_run_cond(t->ut, first_ended, t);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_LOST);
	assert_string_equal(a->message, "the cloud no longer lists it");
	store_attempt_free(a);
}

/*
 * A gang of 2 on Compute Engine (doc/DESIGN.md "Gangs"), listed node by
 * node: running only once every node is listed, and when one node is
 * preempted the whole attempt ends preempted (an interruption), every
 * node is deleted, and the job waits to run all of them again. The
 * launch and the env said 2 nodes; quota was held for 2 GPUs.
 */
static void
test_attempt_gang_node_preempted(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], n0[80], n1[80];

	NEED_FAKE(t->ut);
	launched_listed(t, "{" T4 GCE ",\"command\":[\"t\"],"
	    "\"nodes\":2,\"max_interruptions\":3}", PROV_RUNNING, name);
	assert_int_equal(t->launch_nodes, 2);
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "GPUQ_NUM_NODES")), "2");
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "WORLD_SIZE")), "2");
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "MASTER_PORT")), "29500");
	(void)snprintf(n0, sizeof n0, "%s-0", name);
	(void)snprintf(n1, sizeof n1, "%s-1", name);
	/*
	 * Both nodes listed, still provisioning: not running yet. (Both,
	 * not node 0 alone: a gang short of a node for ATT_MISSES
	 * listings is lost, and two polls can be three by the time the
	 * condition is looked at.)
	 */
	t->seen[0].resource = n0;
	t->seen[0].gang = name;
	t->seen[0].node = 0;
	t->seen[0].state = PROV_PENDING;
	seen_init(&t->seen[1]);
	t->seen[1].resource = n1;
	t->seen[1].gang = name;
	t->seen[1].node = 1;
	t->seen[1].state = PROV_PENDING;
	t->seen[1].zone = t->seen[0].zone;
	t->nseen = 2;
	unittest_run_cond(t->ut, polled_twice, t);
	assert_int_equal(job_state(t, 1), JOB_PENDING);
	/* Both running: running. */
	t->seen[0].state = PROV_RUNNING;
	t->seen[1].state = PROV_RUNNING;
	unittest_run_cond(t->ut, job_running_1, t);
	a = attempt1(t, 1);
	assert_int_equal(a->nodes, 2);
	store_attempt_free(a);
	/* Node 1 preempted: the gang ends; every node deleted. */
	t->seen[1].state = PROV_PREEMPTED;
	t->seen[1].message = "the Spot VM was preempted";
	unittest_run_cond(t->ut, first_ended, t);
	t->nseen = 0;
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_PREEMPTED);
	assert_string_equal(a->message, "node 1 of 2: the Spot VM was "
	    "preempted");
	store_attempt_free(a);
	unittest_run_cond(t->ut, cancelled_any, t);
	assert_int_equal(t->cancel_nodes, 2);
	j = job(t, 1);
	assert_int_equal(j->interruptions, 1);
	assert_int_equal(j->nodes, 2);
	assert_true(j->state == JOB_QUEUED || j->state == JOB_LAUNCHING ||
	    j->state == JOB_PENDING);
	store_job_free(j);
}

/* A gang whose every node succeeded has succeeded. */
static void
test_attempt_gang_succeeded(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX], n0[80], n1[80];

	NEED_FAKE(t->ut);
	launched_listed(t, "{" T4 GCE ",\"command\":[\"t\"],"
	    "\"nodes\":2}", PROV_RUNNING, name);
	(void)snprintf(n0, sizeof n0, "%s-0", name);
	(void)snprintf(n1, sizeof n1, "%s-1", name);
	t->seen[0].resource = n0;
	t->seen[0].gang = name;
	t->seen[0].node = 0;
	seen_init(&t->seen[1]);
	t->seen[1] = t->seen[0];
	t->seen[1].resource = n1;
	t->seen[1].node = 1;
	t->nseen = 2;
	unittest_run_cond(t->ut, job_running_1, t);
	/* Rank 0 done first: still running until the other is. */
	t->seen[0].state = PROV_SUCCEEDED;
	t->seen[0].exit_code = 0;
	unittest_run_cond(t->ut, polled_twice, t);
	assert_int_equal(job_state(t, 1), JOB_RUNNING);
	t->seen[1].state = PROV_SUCCEEDED;
	t->seen[1].exit_code = 0;
	unittest_run_cond(t->ut, job_succeeded_1, t);
	t->nseen = 0;
}

/* Past max_interruptions: the job fails. */
static void
test_attempt_interrupted_last(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, ",\"max_interruptions\":0", name);
	listed(t, PROV_PREEMPTED, -1, NULL);
	unittest_run_cond(t->ut, job_failed_1, t);
	j = job(t, 1);
	assert_int_equal(j->interruptions, 1);
	store_job_free(j);
	assert_true(has_event_with(t, 1, "interrupted 1 times, over "
	    "max_interruptions 0"));
}

/*
 * quota: Batch ended the job for lack of quota (CODE_GCE_QUOTA_EXCEEDED,
 * which batch.c maps to PROV_QUOTA): no interruption counted, no
 * stockout cool-down, the job queued again, and batch in that region
 * avoided, so the next launch goes to another provider or region.
 */
static void
test_attempt_quota(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], region[64];

	NEED_FAKE(t->ut);
	launched_listed(t, "{" T4 ",\"providers\":[\"batch\"],\"spot\":"
	    "\"never\",\"max_interruptions\":0}", PROV_QUOTA, name);
	(void)snprintf(region, sizeof region, "%s", t->region);
	t->seen[0].message = "Quota 'NVIDIA_T4_GPUS' exceeded.";
	unittest_run_cond(t->ut, first_ended, t);
	t->nseen = 0;
	j = job(t, 1);
	assert_int_equal(j->interruptions, 0);
	assert_int_equal(j->failures, 0);
	assert_true(j->state != JOB_FAILED);
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_QUOTA);
	store_attempt_free(a);
	assert_int_equal(cooldowns(t), 0);
	assert_true(has_event(t, 1, "attempt 1 ended: quota: Quota "
	    "'NVIDIA_T4_GPUS' exceeded."));
	/* Launched again, in the other region. */
	unittest_run_cond(t->ut, launched_twice, t);
	assert_string_not_equal(t->region, region);
}

/*
 * A move (attempt_move()) whose workload the stop ends with SIGTERM's
 * 143, or SIGKILL's 137, listed before the cloud answers the stop: the
 * move's outcome, the job queued with nothing counted, not a failure
 * (the replay failed a job so). Another exit code while moving is the
 * job's own failure.
 */
static void
moved_listed(void **state, int exit_code, int failed)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	running(t, ",\"max_failures\":1", name);
	/* The cloud answers the stop only after the listing saw it. */
	t->cancel_ms = 5000;
	assert_int_equal(attempt_move(t->att, 1, "moved to cheaper capacity: "
	    "test"), 0);
	unittest_run_cond(t->ut, cancelled_once, t);
	listed(t, PROV_FAILED, exit_code, NULL);
	t->cancel_ms = 0;
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, failed ? END_FAILED : END_PENDING);
	store_attempt_free(a);
	j = job(t, 1);
	assert_int_equal(j->failures, failed);
	assert_int_equal(j->interruptions, 0);
	store_job_free(j);
	if (!failed)
		assert_true(has_event_with(t, 1, "moved to cheaper capacity: "
		    "test"));
}

static void
test_attempt_move_sigterm(void **state)
{
	moved_listed(state, 143, 0);
}

static void
test_attempt_move_sigkill(void **state)
{
	moved_listed(state, 137, 0);
}

static void
test_attempt_move_failed(void **state)
{
	moved_listed(state, 3, 1);
}

/* limit: max_total_usd reached stops the job, which fails. */
static void
test_attempt_limit(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	struct store_attempt	*a;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	left_listed(t, "{" T4 GCE ",\"max_total_usd\":1}", ATTEMPT_RUNNING,
	    time(NULL) - 3600, PROV_RUNNING, name);
	unittest_run_cond(t->ut, job_failed_1, t);
	j = job(t, 1);
	assert_non_null(strstr(j->message, "max_total_usd"));
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_LIMIT);
	store_attempt_free(a);
	t->nseen = 0;
}

/*
 * pending: Batch keeps the job queued (its status events say why)
 * longer than pending_timeout (1 s here): gpuq cancels it, and once the
 * cancel is accepted the job is queued again with nothing counted, no
 * cool-down, and batch in that region avoided, so the next launch goes
 * to the other region; the events say so.
 */
static void
test_attempt_pending_timeout(void **state)
{
	struct t		*t = *state;
	struct store_attempt	*a;
	struct store_job	*j;
	char			*cause = NULL, name[CLOUD_NAME_MAX], region[64];

	NEED_FAKE(t->ut);
	assert_int_equal(conf_set(&t->conf, "scheduler", "pending_timeout",
	    "1s", &cause), 0);
	launched_listed(t, "{" T4 ",\"providers\":[\"batch\"],\"spot\":"
	    "\"never\",\"max_interruptions\":0}", PROV_PENDING, name);
	(void)snprintf(region, sizeof region, "%s", t->region);
	t->seen[0].message = "no VM has been allocated: no capacity";
	unittest_run_cond(t->ut, cancelled_once, t);
	unittest_run_cond(t->ut, first_ended, t);
	t->nseen = 0;
	j = job(t, 1);
	assert_int_equal(j->interruptions, 0);
	assert_int_equal(j->failures, 0);
	assert_true(j->state != JOB_FAILED);
	store_job_free(j);
	a = attempt1(t, 1);
	assert_int_equal(a->end_reason, END_PENDING);
	store_attempt_free(a);
	assert_int_equal(cooldowns(t), 0);
	assert_true(has_event_with(t, 1, "without starting (pending_timeout "
	    "1s): no VM has been allocated: no capacity; placed elsewhere"));
	/* Launched again, in the other region. */
	unittest_run_cond(t->ut, launched_twice, t);
	assert_string_not_equal(t->region, region);
}

/* A job's own pending_timeout wins over the daemon's: no cancel yet. */
static void
test_attempt_pending_job_timeout(void **state)
{
	struct t	*t = *state;
	char		*cause = NULL, name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	assert_int_equal(conf_set(&t->conf, "scheduler", "pending_timeout",
	    "1s", &cause), 0);
	launched_listed(t, "{" T4 ",\"providers\":[\"batch\"],\"spot\":"
	    "\"never\",\"pending_timeout\":3600}", PROV_PENDING, name);
	unittest_run_for(t->ut, 2500);
	assert_int_equal(t->cancels, 0);
	assert_int_equal(job_state(t, 1), JOB_PENDING);
	t->nseen = 0;
}

/* cancelled: with nothing in the cloud, at once. */
static void
test_attempt_cancelled_nothing(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	(void)submit(t, "{" T4 GCE "}", 0, 1);
	start(t, 0);
	assert_int_equal(store_job_transition(t->store, 1,
	    JOB_MASK(JOB_QUEUED), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	attempt_cancel(t->att, 1);
	assert_int_equal(job_state(t, 1), JOB_CANCELLED);
	assert_true(has_event(t, 1, "cancelled; nothing was in the cloud"));
}

static int
jobs_failed_2(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_FAILED && job_state(t, 2) == JOB_FAILED;
}

/* Events number attempts within the job: job 2's first is "1". */
static void
test_attempt_numbered_per_job(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_INVALID;
	t->script[0].message = "bad image";
	t->script[1].fail = PROV_FAIL_INVALID;
	t->script[1].message = "bad image";
	t->nscript = 2;
	scheduled(t, 2);
	unittest_run_cond(t->ut, jobs_failed_2, t);
	assert_true(has_event(t, 2, "attempt 1 ended: launch_error: bad "
	    "image"));
}

#define MANY	40

struct many {
	int		 n;
	const char	*provider, *region, *zone, *machine_type, *gpu;
	int		 shared;	/* all point at the first's texts */
};

static void
many_cb(const struct store_attempt *a, const struct provider *p, void *arg)
{
	struct many	*m = arg;

	(void)p;
	if (m->n++ == 0) {
		m->provider = a->provider;
		m->region = a->region;
		m->zone = a->zone;
		m->machine_type = a->machine_type;
		m->gpu = a->gpu;
		m->shared = 1;
		return;
	}
	if (a->provider != m->provider || a->region != m->region ||
	    a->zone != m->zone || a->machine_type != m->machine_type ||
	    a->gpu != m->gpu)
		m->shared = 0;
}

static int
odd_succeeded(void *arg)
{
	struct t	*t = arg;
	int64_t		 id;

	for (id = 1; id <= MANY; id += 2)
		if (job_state(t, id) != JOB_SUCCEEDED)
			return 0;
	return 1;
}

static int
all_but_2_4_6_succeeded(void *arg)
{
	struct t	*t = arg;
	int64_t		 id;

	for (id = 1; id <= MANY; id++)
		if (id != 2 && id != 4 && id != 6 &&
		    job_state(t, id) != JOB_SUCCEEDED)
			return 0;
	return 1;
}

/* Cancel running job ID; the cloud id its cancel call was given. */
static const char *
cancel_one(struct t *t, int64_t id)
{
	int	before = t->cancels;

	assert_int_equal(store_job_transition(t->store, id,
	    JOB_MASK(JOB_RUNNING), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	attempt_cancel(t->att, id);
	assert_int_equal(t->cancels, before + 1);
	return t->cancel_cloud_id;
}

/*
 * Forty attempts a previous gpuqd left running (doc/DESIGN.md
 * "Memory"): they share their provider, region, zone, machine type and
 * GPU texts; the listings find each by its resource name and a cancel
 * by its job while half, then all but three, end (the indexes grow,
 * close their gaps and shrink); a cancel is given the cloud's name for
 * the attempt whole, however it was kept: its resource name after a
 * shared head, another name after one, or a name with no '/'.
 */
static void
test_attempt_many(void **state)
{
	static char	 names[MANY][CLOUD_NAME_MAX];
	struct t	*t = *state;
	struct many	 m;
	char		*id2, *id4;
	int		 i;

	NEED_FAKE(t->ut);
	(void)submit(t, "{" T4 GCE "}", 0, MANY);
	for (i = 0; i < MANY; i++) {
		left_behind(t, i + 1, ATTEMPT_RUNNING, time(NULL) - 60,
		    names[i]);
		seen_init(&t->seen[i]);
		t->seen[i].resource = names[i];
		t->seen[i].state = PROV_RUNNING;
		t->seen[i].zone = "us-central1-a";
	}
	id2 = xprintf("projects/p/zones/us-central1-a/instances/%s",
	    names[1]);
	id4 = xprintf("projects/p/zones/us-central1-a/instances/other-4");
	t->seen[1].cloud_id = id2;
	t->seen[3].cloud_id = id4;
	t->seen[5].cloud_id = "1234567890123456789";
	t->nseen = MANY;
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
	unittest_run_cond(t->ut, polled_twice, t);

	memset(&m, 0, sizeof m);
	attempt_foreach(t->att, many_cb, &m);
	assert_int_equal(m.n, MANY);
	assert_true(m.shared);
	assert_string_equal(m.zone, "us-central1-a");

	for (i = 0; i < MANY; i += 2) {
		t->seen[i].state = PROV_SUCCEEDED;
		t->seen[i].exit_code = 0;
	}
	unittest_run_cond(t->ut, odd_succeeded, t);
	for (i = 1; i < MANY; i += 2)
		assert_int_equal(job_state(t, i + 1), JOB_RUNNING);
	for (i = 7; i < MANY; i += 2) {
		t->seen[i].state = PROV_SUCCEEDED;
		t->seen[i].exit_code = 0;
	}
	unittest_run_cond(t->ut, all_but_2_4_6_succeeded, t);
	memset(&m, 0, sizeof m);
	attempt_foreach(t->att, many_cb, &m);
	assert_int_equal(m.n, 3);
	assert_true(m.shared);

	assert_string_equal(cancel_one(t, 2), id2);
	assert_string_equal(cancel_one(t, 4), id4);
	assert_string_equal(cancel_one(t, 6), "1234567890123456789");
	t->nseen = 0;
	free(id2);
	free(id4);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define C(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		cmocka_unit_test(test_attempt_table),
		C(test_attempt_backoff),
		C(test_attempt_accepted),
		C(test_attempt_launch_quota),
		C(test_attempt_launch_stockout),
		C(test_attempt_launch_transient),
		C(test_attempt_launch_place),
		C(test_attempt_launch_invalid),
		C(test_attempt_launch_refused_cancelled),
		C(test_attempt_adopted),
		C(test_attempt_duplicate_deleted),
		C(test_attempt_running_succeeded),
		C(test_attempt_failed),
		C(test_attempt_failed_last),
		C(test_attempt_preempted),
		C(test_attempt_preempted_again_backs_off),
		C(test_attempt_gang_node_preempted),
		C(test_attempt_gang_succeeded),
		C(test_attempt_maintenance),
		C(test_attempt_stockout),
		C(test_attempt_stockout_before_start),
		C(test_attempt_lost),
		C(test_attempt_lost_unlisted),
		C(test_attempt_interrupted_last),
		C(test_attempt_quota),
		C(test_attempt_limit),
		C(test_attempt_move_sigterm),
		C(test_attempt_move_sigkill),
		C(test_attempt_move_failed),
		C(test_attempt_pending_timeout),
		C(test_attempt_pending_job_timeout),
		C(test_attempt_cancelled_nothing),
		C(test_attempt_numbered_per_job),
		C(test_attempt_many),
#undef C
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
