/*
 * test-reconcile.c: daemon/reconcile.c -- what it observes and hands to
 * attempt.c -- over the fixture of cloudtest.h: one poll call per cycle,
 * a listed resource mapped onto its attempt by name, orphans, attempts a
 * crash left "launching" launched again under the same name, limits and
 * cancels of what the listings show running.
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

#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "providers/provider.h"
#include "store/store.h"
#include "tests/unit/cloudtest.h"

static int
requeued(void *arg)
{
	struct t		*t = arg;
	struct store_job	*j = job(t, 1);
	int			 ok = j->interruptions == 1;

	store_job_free(j);
	return ok;
}

/*
 * The reconciler: one poll call per cycle for many attempts in one
 * group; a resource listed running moves attempt and job; preempted
 * ends the attempt as an interruption and queues the job again.
 */
static void
test_reconcile_maps_states(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];
	int			 polls;

	NEED_FAKE(t->ut);
	t->script[0].cloud_id = "vm-1";
	t->nscript = 1;
	launched_listed(t, "{" T4 ",\"providers\":[\"gce\"],\"spot\":"
	    "\"require\",\"max_interruptions\":3}", PROV_RUNNING, name);
	unittest_run_cond(t->ut, job_running_1, t);
	polls = t->polls;
	unittest_run_for(t->ut, 2500);
	/* One aggregated listing a cycle, whatever the attempts. */
	assert_true(t->polls - polls >= 1 && t->polls - polls <= 3);

	t->seen[0].state = PROV_PREEMPTED;
	t->seen[0].message = "Instance was preempted.";
	unittest_run_cond(t->ut, requeued, t);
	j = job(t, 1);
	assert_int_equal(j->failures, 0);
	assert_true(j->state == JOB_QUEUED || j->state == JOB_LAUNCHING ||
	    j->state == JOB_PENDING);
	store_job_free(j);
	/* The finished VM is deleted. */
	unittest_run_cond(t->ut, cancelled_once, t);
	t->nseen = 0;
}

/* A resource with our label and no live attempt is an orphan. */
static void
test_reconcile_orphan(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	launched_listed(t, "{" T4 ",\"providers\":[\"gce\"]}", PROV_RUNNING,
	    name);
	seen_init(&t->seen[1]);
	t->seen[1].resource = "gpuq-stray-1-1";
	t->seen[1].zone = "us-central1-a";
	t->seen[1].state = PROV_RUNNING;
	t->nseen = 2;
	unittest_run_cond(t->ut, cancelled_once, t);
	assert_int_equal(job_state(t, 1), JOB_RUNNING);
	t->nseen = 0;
}

/*
 * A crash between the launch's commit and the create call (LEFT_SPLIT:
 * an older gpuqd's crash between the attempt row and the job's move,
 * after which the job is put back in launching first): since the cloud
 * does not list the resource, it is launched again under the same name
 * and request id.
 */
static void
relaunch_after_crash(void **state, int left)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], rid[CLOUD_UUID_LEN];

	NEED_FAKE(t->ut);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"]}", 0, 1);
	left_behind(t, 1, left, 0, name);
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	assert_int_equal(job_state(t, 1), JOB_LAUNCHING);
	sched_start(t->sched);
	unittest_run_cond(t->ut, job_pending_1, t);
	assert_int_equal(t->launches, 1);
	assert_string_equal(t->resource, name);
	cloud_request_id(name, "", rid);
	assert_string_equal(t->request_id, rid);
	j = job(t, 1);
	assert_int_equal(j->attempts, 1);
	store_job_free(j);
}

static void
test_reconcile_relaunch_after_crash(void **state)
{
	relaunch_after_crash(state, ATTEMPT_LAUNCHING);
}

static void
test_reconcile_relaunch_after_split_crash(void **state)
{
	relaunch_after_crash(state, LEFT_SPLIT);
}

/* A run longer than max_runtime is stopped and the job fails. */
static void
test_reconcile_max_runtime(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	left_listed(t, "{" T4 ",\"providers\":[\"gce\"],\"max_runtime\":"
	    "\"2m\"}", ATTEMPT_RUNNING, time(NULL) - 3600, PROV_RUNNING, name);
	unittest_run_cond(t->ut, job_failed_1, t);
	assert_true(t->cancels >= 1);
	j = job(t, 1);
	assert_non_null(j->message);
	assert_non_null(strstr(j->message, "max_runtime"));
	/* Billed from the start it had: about an hour at 3.60 $/h. */
	assert_true(j->cost_usd > 3.5 && j->cost_usd < 3.8);
	store_job_free(j);
	t->nseen = 0;
}

/* cancel: the resource is cancelled, then the job is cancelled. */
static void
test_reconcile_cancel(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t->ut);
	left_listed(t, "{" T4 ",\"providers\":[\"gce\"]}", ATTEMPT_RUNNING,
	    time(NULL) - 60, PROV_RUNNING, name);
	unittest_run_for(t->ut, 3000);
	assert_int_equal(job_state(t, 1), JOB_RUNNING);
	/* What the api does on "cancel", then its hook (gpuqd.c). */
	assert_int_equal(store_job_transition(t->store, 1,
	    JOB_MASK(JOB_RUNNING), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	attempt_cancel(t->att, 1);
	unittest_run_cond(t->ut, job_cancelled_1, t);
	assert_int_equal(t->cancels, 1);
	t->nseen = 0;
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define C(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		C(test_reconcile_maps_states),
		C(test_reconcile_orphan),
		C(test_reconcile_relaunch_after_crash),
		C(test_reconcile_relaunch_after_split_crash),
		C(test_reconcile_max_runtime),
		C(test_reconcile_cancel),
#undef C
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
