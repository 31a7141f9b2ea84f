/*
 * test-sched-gate.c: what holds a runnable job back before placement
 * (daemon/sched-gate.c): after waits for success and is doomed by a
 * failure or cancel, after_any waits for any end, a dependency on an
 * array is on all its tasks, and an array's parallelism counts its tasks
 * in the cloud, read once a pass. Over a real store in a temp directory.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/xmalloc.h"
#include "daemon/sched-gate.h"
#include "store/store.h"
#include "tests/unit/unittest.h"

struct fixture {
	struct unittest	*ut;
	struct store	*st;
};

static int
setup(void **state)
{
	struct fixture	*fx = xcalloc(1, sizeof *fx);
	char		*path, *cause = NULL;

	fx->ut = unittest_new("test-sched-gate");
	path = unittest_path(fx->ut, "gpuq.db");
	assert_int_equal(store_open(path, &fx->st, &cause), 0);
	free(path);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	store_close(fx->st);
	unittest_free(fx->ut);
	free(fx);
	return 0;
}

/* Insert a plain job (TASKS 0) or an array of TASKS; its id. */
static int64_t
insert(struct store *st, int tasks)
{
	struct store_job_new	 rows[16];
	int64_t			 ids[16];
	char			*cause = NULL;
	int			 i, n = tasks > 0 ? tasks : 1;

	memset(rows, 0, sizeof rows);
	for (i = 0; i < n; i++) {
		rows[i].name = "j";
		rows[i].spec = "{}";
		rows[i].task = tasks > 0;
		rows[i].task_index = i;
	}
	assert_int_equal(store_jobs_insert(st, rows, (size_t)n, ids, &cause),
	    0);
	return ids[0];
}

static void
move(struct store *st, int64_t id, int to)
{
	char	*cause = NULL;

	assert_int_equal(store_job_transition(st, id, JOB_MASK_ALL, to, "t",
	    NULL, &cause), 0);
}

/* The gate of a job with SPEC (JSON text) and row ROW_ARRAY. */
static void
gate_of(struct sched_gate_job *g, const char *spec, int64_t array_id)
{
	struct store_job	 row;
	json_t			*j = json_loads(spec, 0, NULL);

	assert_non_null(j);
	memset(&row, 0, sizeof row);
	row.array_id = array_id;
	sched_gate_parse(g, &row, j);
	json_decref(j);
}

/* sched_gate_check on a fresh pass: its verdict, *why (new or NULL). */
static int
check(struct fixture *fx, struct sched_gate *g,
    const struct sched_gate_job *j, char **why)
{
	*why = NULL;
	sched_gate_reset(g);
	return sched_gate_check(g, fx->st, 99, j, why);
}

static void
test_sched_gate_after(void **state)
{
	struct fixture		*fx = *state;
	struct sched_gate	 g;
	struct sched_gate_job	 j, any;
	char			*why, *spec;
	int64_t			 a, b;

	memset(&g, 0, sizeof g);
	memset(&j, 0, sizeof j);
	memset(&any, 0, sizeof any);
	a = insert(fx->st, 0);
	b = insert(fx->st, 0);
	spec = xprintf("{\"after\":[%lld,%lld]}", (long long)a, (long long)b);
	gate_of(&j, spec, 0);
	free(spec);
	spec = xprintf("{\"after_any\":[%lld]}", (long long)a);
	gate_of(&any, spec, 0);
	free(spec);

	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_WAIT);
	spec = xprintf("waiting for job %lld (queued)", (long long)a);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	move(fx->st, a, JOB_RUNNING);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_WAIT);
	spec = xprintf("waiting for job %lld (running)", (long long)a);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	assert_int_equal(check(fx, &g, &any, &why), SCHED_GATE_WAIT);
	spec = xprintf("waiting for job %lld to end (running)", (long long)a);
	assert_string_equal(why, spec);
	free(spec);
	free(why);

	/* The memory of a pass: a change shows only after a reset. */
	move(fx->st, a, JOB_SUCCEEDED);
	assert_int_equal(sched_gate_check(&g, fx->st, 99, &j, &why),
	    SCHED_GATE_WAIT);
	free(why);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_WAIT);
	spec = xprintf("waiting for job %lld (queued)", (long long)b);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	assert_int_equal(check(fx, &g, &any, &why), SCHED_GATE_GO);
	assert_null(why);

	move(fx->st, b, JOB_FAILED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_CANCEL);
	spec = xprintf("job %lld it waits for failed", (long long)b);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	move(fx->st, b, JOB_CANCELLED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_CANCEL);
	spec = xprintf("job %lld it waits for was cancelled", (long long)b);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	move(fx->st, b, JOB_SUCCEEDED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_GO);

	sched_gate_job_done(&j);
	sched_gate_job_done(&any);
	sched_gate_free(&g);
}

static void
test_sched_gate_array_dependency(void **state)
{
	struct fixture		*fx = *state;
	struct sched_gate	 g;
	struct sched_gate_job	 j, any;
	char			*why, *spec;
	int64_t			 a;
	int			 i;

	memset(&g, 0, sizeof g);
	memset(&j, 0, sizeof j);
	memset(&any, 0, sizeof any);
	a = insert(fx->st, 3);
	spec = xprintf("{\"after\":[%lld]}", (long long)a);
	gate_of(&j, spec, 0);
	free(spec);
	spec = xprintf("{\"after_any\":[%lld]}", (long long)a);
	gate_of(&any, spec, 0);
	free(spec);

	move(fx->st, a, JOB_SUCCEEDED);
	move(fx->st, a + 1, JOB_SUCCEEDED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_WAIT);
	spec = xprintf("waiting for array %lld (2 of 3 tasks succeeded)",
	    (long long)a);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	move(fx->st, a + 2, JOB_FAILED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_CANCEL);
	spec = xprintf("array %lld it waits for had 1 task(s) fail and 0 "
	    "cancelled", (long long)a);
	assert_string_equal(why, spec);
	free(spec);
	free(why);
	assert_int_equal(check(fx, &g, &any, &why), SCHED_GATE_GO);
	for (i = 0; i < 3; i++)
		move(fx->st, a + i, JOB_SUCCEEDED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_GO);

	sched_gate_job_done(&j);
	sched_gate_job_done(&any);
	sched_gate_free(&g);
}

static void
test_sched_gate_parallelism(void **state)
{
	struct fixture		*fx = *state;
	struct sched_gate	 g;
	struct sched_gate_job	 j, all;
	char			*why, *want;
	int64_t			 a;

	memset(&g, 0, sizeof g);
	memset(&j, 0, sizeof j);
	memset(&all, 0, sizeof all);
	a = insert(fx->st, 5);
	gate_of(&j, "{\"array\":{\"count\":5,\"parallelism\":2}}", a);
	assert_int_equal(j.array_id, a);
	assert_int_equal(j.parallelism, 2);
	/* parallelism = count: no limit, nothing read. */
	gate_of(&all, "{\"array\":{\"count\":5,\"parallelism\":5}}", a);
	assert_int_equal(all.parallelism, 0);

	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_GO);
	move(fx->st, a, JOB_RUNNING);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_GO);
	/* Launched in this pass: counted before the store says so. */
	sched_gate_launched(&g, a);
	assert_int_equal(sched_gate_check(&g, fx->st, 99, &j, &why),
	    SCHED_GATE_WAIT);
	want = xprintf("array %lld runs at most 2 task(s) at once "
	    "(parallelism)", (long long)a);
	assert_string_equal(why, want);
	free(why);
	move(fx->st, a + 1, JOB_CANCELLING);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_WAIT);
	assert_string_equal(why, want);
	free(why);
	free(want);
	assert_int_equal(check(fx, &g, &all, &why), SCHED_GATE_GO);
	move(fx->st, a + 1, JOB_CANCELLED);
	assert_int_equal(check(fx, &g, &j, &why), SCHED_GATE_GO);

	sched_gate_job_done(&j);
	sched_gate_job_done(&all);
	sched_gate_free(&g);
}

/* An array cancelled in a pass is skipped for the rest of it, and only
 * of it: a reset keeps it, a new pass forgets it. */
static void
test_sched_gate_doomed(void **state)
{
	struct sched_gate	g;

	memset(&g, 0, sizeof g);
	assert_false(sched_gate_is_doomed(&g, 42));
	sched_gate_doomed(&g, 42);
	assert_true(sched_gate_is_doomed(&g, 42));
	assert_false(sched_gate_is_doomed(&g, 43));
	assert_false(sched_gate_is_doomed(&g, 0));
	sched_gate_reset(&g);
	assert_true(sched_gate_is_doomed(&g, 42));
	sched_gate_begin(&g);
	assert_false(sched_gate_is_doomed(&g, 42));
	sched_gate_free(&g);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_sched_gate_after),
		T(test_sched_gate_array_dependency),
		T(test_sched_gate_parallelism),
		T(test_sched_gate_doomed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
