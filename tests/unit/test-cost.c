/*
 * test-cost.c: daemon/cost.c -- the λ estimator, expected cost of Spot
 * and standard runs, the order of offers (ties included), billed cost
 * and retry delays.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "daemon/cost.h"

#define EPS	1e-12

/* No history: λ is the prior. */
static void
test_cost_lambda_prior_only(void **state)
{
	assert_float_equal(cost_lambda(0, 0, 0.1), 0.1, EPS);
	assert_float_equal(cost_lambda(0, 0, 0), 0, EPS);
}

/* Some history moves λ toward the observed rate, weighted by hours. */
static void
test_cost_lambda_blend(void **state)
{
	/* (3 + 0.1 × 10) / (2 + 10) */
	assert_float_equal(cost_lambda(2, 3, 0.1), 4.0 / 12.0, EPS);
	/* 10 hours without a preemption halve the prior. */
	assert_float_equal(cost_lambda(10, 0, 0.1), 0.05, EPS);
}

/* Much history: λ tends to the observed rate whatever the prior. */
static void
test_cost_lambda_converges(void **state)
{
	double	l = cost_lambda(100000, 50000, 0.1);

	assert_true(l > 0.4999 && l < 0.5001);
}

/* Nonsense inputs count as nothing rather than going negative. */
static void
test_cost_lambda_bad_inputs(void **state)
{
	assert_float_equal(cost_lambda(-5, -2, 0.1), 0.1, EPS);
	assert_float_equal(cost_lambda(0, 0, -1), 0, EPS);
}

/* Standard capacity: hourly × hours, whatever λ says. */
static void
test_cost_expected_standard(void **state)
{
	assert_float_equal(cost_expected(2.5, 4, 0, 3.0, 1800, 600), 10.0,
	    EPS);
}

/*
 * Spot: stretched by λ × (interval/2 + overhead). 1.0/h for 10 h with
 * λ 0.1, 30-minute checkpoints and 10-minute restarts:
 * 10 × (1 + 0.1 × (0.25 + 1/6)).
 */
static void
test_cost_expected_spot(void **state)
{
	double	want = 10.0 * (1.0 + 0.1 * (0.25 + 600.0 / 3600.0));

	assert_float_equal(cost_expected(1.0, 10, 1, 0.1, 1800, 600), want,
	    EPS);
	/* λ 0: Spot costs its price. */
	assert_float_equal(cost_expected(1.0, 10, 1, 0, 1800, 600), 10.0,
	    EPS);
}

/* A high λ can make Spot dearer in expectation than standard. */
static void
test_cost_expected_spot_loses(void **state)
{
	double	spot, standard;

	spot = cost_expected(0.40, 8, 1, cost_lambda(10, 40, 0.1), 3600,
	    1800);
	standard = cost_expected(1.00, 8, 0, 0, 3600, 1800);
	assert_true(spot > standard);
}

/* Cheaper expected cost first. */
static void
test_cost_rank_cheaper_first(void **state)
{
	struct cost_rank	a = { 1.0, 5, 9 }, b = { 2.0, 0, 0 };

	assert_int_equal(cost_rank_cmp(&a, &b), -1);
	assert_int_equal(cost_rank_cmp(&b, &a), 1);
}

/* Equal cost: fewer recent interruptions, then enumeration order. */
static void
test_cost_rank_ties(void **state)
{
	struct cost_rank	a = { 1.0, 2, 0 }, b = { 1.0, 1, 5 };
	struct cost_rank	c = { 1.0, 1, 3 }, d = { 1.0 + 1e-13, 1, 3 };

	assert_int_equal(cost_rank_cmp(&a, &b), 1);
	assert_int_equal(cost_rank_cmp(&b, &c), 1);
	assert_int_equal(cost_rank_cmp(&c, &b), -1);
	/* Within the epsilon, costs are equal. */
	assert_int_equal(cost_rank_cmp(&c, &d), 0);
}

/* qsort with cost_rank_cmp gives a total, stable order. */
static int
rank_qsort(const void *a, const void *b)
{
	return cost_rank_cmp(a, b);
}

static void
test_cost_rank_sort(void **state)
{
	struct cost_rank	r[] = {
		{ 3.0, 0, 0 }, { 1.0, 4, 1 }, { 1.0, 0, 2 }, { 2.0, 0, 3 },
		{ 1.0, 0, 4 },
	};
	int			want[] = { 2, 4, 1, 3, 0 };
	size_t			i;

	qsort(r, 5, sizeof r[0], rank_qsort);
	for (i = 0; i < 5; i++)
		assert_int_equal(r[i].order, want[i]);
}

/* Billed time: never started is free; a started one is billed >= 60 s. */
static void
test_cost_attempt(void **state)
{
	assert_float_equal(cost_attempt(3.6, 0, 1000), 0, EPS);
	assert_float_equal(cost_attempt(3.6, 1000, 1010), 0.06, EPS);
	assert_float_equal(cost_attempt(3.6, 1000, 4600), 3.6, EPS);
	/* An end before the start (clock skew) is the minimum. */
	assert_float_equal(cost_attempt(3.6, 1000, 900), 0.06, EPS);
}

/*
 * Billed seconds: the cloud's own start and end when it gave both
 * (whatever gpuqd's clock saw: the simulated cloud runs 100x faster),
 * else what gpuqd watched; at least a minute for a run that started.
 */
static void
test_cost_billed_sec(void **state)
{
	/* The cloud's clock wins over gpuqd's 6 s. */
	assert_int_equal(cost_billed_sec(5000, 5600, 1000, 1006), 600);
	/* Under a minute is a minute. */
	assert_int_equal(cost_billed_sec(5000, 5010, 1000, 1006), 60);
	/* No cloud end (deleted, lost): gpuqd's observation. */
	assert_int_equal(cost_billed_sec(5000, 0, 1000, 1300), 300);
	assert_int_equal(cost_billed_sec(0, 0, 1000, 1300), 300);
	/* An end before the start is no figure: gpuqd's. */
	assert_int_equal(cost_billed_sec(5000, 4000, 1000, 1300), 300);
	/* Never ran: nothing, not a minute. */
	assert_int_equal(cost_billed_sec(0, 0, 0, 0), 0);
	/* Seen started by the cloud only, ended at once: the minimum. */
	assert_int_equal(cost_billed_sec(5000, 0, 0, 0), 60);
	assert_float_equal(cost_of(2.4, 600), 0.4, EPS);
	assert_float_equal(cost_of(2.4, 0), 0, EPS);
	assert_float_equal(cost_of(0, 600), 0, EPS);
	/* The baseline is the same seconds at Vertex AI's hourly price. */
	assert_float_equal(cost_of(0.6746, cost_billed_sec(100, 3700, 1, 2)),
	    0.6746, EPS);
}

/* Retry delays double up to the cap; jitter takes at most a quarter. */
static void
test_cost_backoff(void **state)
{
	assert_int_equal(cost_backoff(30, 1800, 0, 0), 30);
	assert_int_equal(cost_backoff(30, 1800, 1, 0), 60);
	assert_int_equal(cost_backoff(30, 1800, 5, 0), 960);
	assert_int_equal(cost_backoff(30, 1800, 6, 0), 1800);
	assert_int_equal(cost_backoff(30, 1800, 1000, 0), 1800);
	assert_int_equal(cost_backoff(40, 1800, 0, 0.999), 31);
	assert_int_equal(cost_backoff(0, 0, 3, 0), 1);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_cost_lambda_prior_only),
		cmocka_unit_test(test_cost_lambda_blend),
		cmocka_unit_test(test_cost_lambda_converges),
		cmocka_unit_test(test_cost_lambda_bad_inputs),
		cmocka_unit_test(test_cost_expected_standard),
		cmocka_unit_test(test_cost_expected_spot),
		cmocka_unit_test(test_cost_expected_spot_loses),
		cmocka_unit_test(test_cost_rank_cheaper_first),
		cmocka_unit_test(test_cost_rank_ties),
		cmocka_unit_test(test_cost_rank_sort),
		cmocka_unit_test(test_cost_attempt),
		cmocka_unit_test(test_cost_billed_sec),
		cmocka_unit_test(test_cost_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
