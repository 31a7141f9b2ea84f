/*
 * test-deadline.c: the deadline policy (daemon/deadline.c) and the
 * RFC 3339 times it reads (common/when.c): slack figures, the margin
 * crossing, its timer, stickiness (doc/DESIGN.md "Deadlines").
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/when.h"
#include "daemon/deadline.h"

#define T0	1800000000		/* 2027-01-15T08:00:00Z */

static void
test_deadline_when_parse(void **state)
{
	int64_t	t;
	char	buf[WHEN_TEXT_MAX];

	(void)state;
	assert_int_equal(when_parse("2027-01-15T08:00:00Z", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(when_parse("2027-01-15T09:00:00+01:00", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(when_parse("2027-01-15t02:30:00.123-05:30", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(when_parse("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(when_parse("2024-02-29T00:00:00Z", &t), 0);
	assert_string_equal(when_format(t, buf, sizeof buf),
	    "2024-02-29T00:00:00Z");
	assert_string_equal(when_format(T0, buf, sizeof buf),
	    "2027-01-15T08:00:00Z");
	/* No zone, bad dates, trailing words: refused. */
	assert_int_equal(when_parse("2027-01-15T08:00:00", &t), -EINVAL);
	assert_int_equal(when_parse("2027-02-29T08:00:00Z", &t), -EINVAL);
	assert_int_equal(when_parse("2027-13-01T08:00:00Z", &t), -EINVAL);
	assert_int_equal(when_parse("2027-01-15T24:00:00Z", &t), -EINVAL);
	assert_int_equal(when_parse("2027-01-15T08:00:00Zx", &t), -EINVAL);
	assert_int_equal(when_parse("2027-01-15", &t), -EINVAL);
	assert_int_equal(when_parse("36h", &t), -EINVAL);
	assert_string_equal(when_span(5 * 3600 + 12 * 60, buf, sizeof buf),
	    "+5h12m");
	assert_string_equal(when_span(-20 * 60, buf, sizeof buf), "-0h20m");
}

/* A job of 10 h due in 14 h, 0.1 interruptions/h of 10 min each. */
static struct deadline_job
job(void)
{
	struct deadline_job	j;

	memset(&j, 0, sizeof j);
	j.now = T0;
	j.deadline = T0 + 14 * 3600;
	j.work = 10 * 3600;
	j.restart_overhead = 600;
	j.lambda = 0.1;
	return j;
}

static void
test_deadline_slack(void **state)
{
	struct deadline_job	j = job();

	(void)state;
	/* 14 h - 10 h - 600 s x 0.1/h x 10 h = 4 h - 600 s. */
	assert_int_equal(deadline_slack(&j), 4 * 3600 - 600);
	/* Off Spot no interruption is expected. */
	j.safe = 1;
	assert_int_equal(deadline_slack(&j), 4 * 3600);
	/* Progress: 6 h run over one resume, 6 h - 600 s done. */
	j = job();
	j.done = deadline_done(6 * 3600, 1, 600, j.work);
	assert_true(j.done == 6 * 3600 - 600);
	/* left 4 h + 600 s; lost 0.1 x 600 x (4 h + 600 s) / h = 250 s. */
	assert_int_equal(deadline_slack(&j), 14 * 3600 - (4 * 3600 + 600) -
	    250);
	/*
	 * Work an interruption lost: past the last checkpoint. 2 h 10 min
	 * of a resumed attempt is 2 h of work after the 600 s overhead:
	 * checkpoints every 30 min, none lost; 2 h 25 min loses 15 min; a
	 * run shorter than the overhead did nothing to lose; no interval
	 * known, nothing counted (as before).
	 */
	assert_true(deadline_lost(2 * 3600 + 600, 1, 600, 1800) == 0);
	assert_true(deadline_lost(2 * 3600 + 1500, 1, 600, 1800) == 900);
	/* Not resumed: no overhead taken off, 2 h 25 min is 25 min lost. */
	assert_true(deadline_lost(2 * 3600 + 1500, 0, 600, 1800) == 1500);
	assert_true(deadline_lost(300, 1, 600, 1800) == 0);
	assert_true(deadline_lost(5000, 0, 600, 0) == 0);
	assert_true(deadline_lost(1000, 0, 600, 1800) == 1000);
	/* Progress never exceeds the work, nor falls below zero. */
	assert_true(deadline_done(20 * 3600, 0, 600, j.work) == j.work);
	assert_true(deadline_done(100, 3, 600, j.work) == 0);
	/* Missed: negative. */
	j = job();
	j.now = j.deadline + 1200;
	j.safe = 1;
	assert_int_equal(deadline_slack(&j), -(10 * 3600 + 1200));
}

static void
test_deadline_margin_crossing(void **state)
{
	struct deadline_job	j = job();
	int64_t			margin = 2 * 3600, at;

	(void)state;
	/* Slack 4 h - 600 s: fine with a 2 h margin. */
	assert_false(deadline_unsafe(&j, margin));
	/* Queued, it crosses a second after 2 h - 600 s have passed. */
	at = deadline_cross_at(&j, margin);
	assert_int_equal(at, T0 + 2 * 3600 - 600 + 1);
	j.now = at - 1;			/* slack == margin: not yet */
	assert_false(deadline_unsafe(&j, margin));
	j.now = at;
	assert_true(deadline_unsafe(&j, margin));
	assert_int_equal(deadline_cross_at(&j, margin), j.now);
	/* Sticky: once safe, never unsafe again and no timer. */
	j.safe = 1;
	assert_false(deadline_unsafe(&j, margin));
	assert_int_equal(deadline_cross_at(&j, margin), 0);
	j.now = j.deadline + 1;
	assert_false(deadline_unsafe(&j, margin));
}

/*
 * Flex-start as a bridge: a queued job waits for Spot only while its
 * slack keeps two switches above the margin; one on flex-start goes
 * back to Spot only while its slack pays one switch above it.
 */
static void
test_deadline_bridge(void **state)
{
	struct deadline_job	j = job();
	int64_t			margin = 3600, sw, until;

	(void)state;
	/* A switch: the overhead of the new run and a checkpoint interval
	 * of work; no interval known: the overhead. */
	sw = deadline_switch(&j, 1800);
	assert_int_equal(sw, 600 + 1800);
	assert_int_equal(deadline_switch(&j, 0), 600);
	/* Slack 4 h - 600 s: it may wait until the slack is margin + 2
	 * switches, i.e. 4 h - 600 s - 1 h - 2 x 2400 s from now. */
	until = deadline_wait_until(&j, margin, sw);
	assert_int_equal(until, T0 + 4 * 3600 - 600 - 3600 - 2 * sw);
	/* Waited that long: no more (the caller takes flex-start). */
	j.now = until;
	assert_int_equal(deadline_wait_until(&j, margin, sw), j.now);
	/* Short of slack: the bound is already past. */
	j.now = until + 600;
	assert_true(deadline_wait_until(&j, margin, sw) < j.now);
	/* Marked: no bound, and never back to Spot. */
	j.safe = 1;
	assert_int_equal(deadline_wait_until(&j, margin, sw), 0);
	assert_false(deadline_back_to_spot(&j, margin, 0));
	/* Back to Spot: slack 4 h - 600 s pays a switch over a 1 h margin,
	 * not over a 3 h 30 min one. */
	j = job();
	assert_true(deadline_back_to_spot(&j, margin, sw));
	assert_false(deadline_back_to_spot(&j, 3 * 3600 + 1800, sw));
	/* Exactly margin + switch: back. */
	assert_true(deadline_back_to_spot(&j, 4 * 3600 - 600 - sw, sw));
	assert_false(deadline_back_to_spot(&j, 4 * 3600 - 600 - sw + 1, sw));
}

/*
 * The share of the work a deadline job expects to run off Spot: the
 * figures are a numerical integration of P(N(t) > K) over the work left
 * (4,000 steps), N a Poisson process of the zone's rate.
 */
static void
test_deadline_spot_tail(void **state)
{
	double	c = 35.0 / 60;

	(void)state;
	/* 24 h left, 1.4 h of slack: two preemptions absorbed. A zone
	 * preempting once in 20 h leaves it 3.6 % of the work off Spot;
	 * one preempting every 3.3 h, 58.8 %. */
	assert_float_equal(deadline_spot_tail(24, 1.4, c, 0.05), 0.036090,
	    1e-4);
	assert_float_equal(deadline_spot_tail(24, 1.4, c, 0.3), 0.587825,
	    1e-4);
	/* No slack: it leaves at the first preemption. */
	assert_float_equal(deadline_spot_tail(10, 0, 0.5, 0.2), 0.567668,
	    1e-4);
	assert_float_equal(deadline_spot_tail(10, -3, 0.5, 0.2), 0.567668,
	    1e-4);
	/* Slack for far more preemptions than come: nothing. */
	assert_float_equal(deadline_spot_tail(48, 20, c, 0.1), 0, 1e-9);
	assert_float_equal(deadline_spot_tail(4, 3, 0.5, 0.01), 0, 1e-6);
	/* No rate, no work, no cost: nothing. */
	assert_float_equal(deadline_spot_tail(24, 1, c, 0), 0, 0);
	assert_float_equal(deadline_spot_tail(0, 1, c, 0.3), 0, 0);
	assert_float_equal(deadline_spot_tail(24, 1, 0, 0.3), 0, 0);
	/* A rate whose exp(-mu) underflows: the limit, LEFT less the mean
	 * time to the (K+1)th preemption, K = 2: 3 / 100 h. */
	assert_float_equal(deadline_spot_tail(10, 1, 0.5, 100),
	    (10 - 3.0 / 100) / 10, 1e-6);
	/* More rate, less Spot. */
	assert_true(deadline_spot_tail(24, 1.4, c, 0.1) <
	    deadline_spot_tail(24, 1.4, c, 0.2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_when_parse),
		cmocka_unit_test(test_deadline_slack),
		cmocka_unit_test(test_deadline_margin_crossing),
		cmocka_unit_test(test_deadline_bridge),
		cmocka_unit_test(test_deadline_spot_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
