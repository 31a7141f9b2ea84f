/*
 * test-clock.c: common/clock.c, the simulated clock gpuqd may live on
 * for tests (doc/DESIGN.md "Simulated time"): scale 1 is the real clock;
 * scale S runs S times faster from the origin; a simulated interval
 * becomes a real timer of 1/S of it, never 0 (no busy loop); a real
 * monotonic reading scales to simulated ms.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "common/clock.h"

static double
real_now(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_real(void **state)
{
	int64_t	t;

	(void)state;
	clock_configure(1, 0);
	t = clock_now();
	assert_true(t >= (int64_t)real_now() - 1 && t <= (int64_t)real_now());
	assert_int_equal(clock_real_ms(15000), 15000);
	assert_int_equal(clock_sim_ms(1234), 1234);
	clock_configure(0.5, 0);	/* slower than real: refused */
	assert_true(clock_scale() == 1.0);
}

static void
test_scaled(void **state)
{
	double	origin = real_now() - 10.0, want, got;

	(void)state;
	clock_configure(2000, origin);
	assert_true(clock_scale() == 2000.0);
	/* 10 real seconds after the origin: 20,000 simulated. */
	want = origin + (real_now() - origin) * 2000;
	got = clock_now_f();
	assert_true(got >= want - 1 && got <= want + 200);
	assert_true(clock_now() <= got && clock_now() >= (int64_t)want - 1);
	/* A 15 s poll is a 7.5 ms timer; 1 simulated ms still waits. */
	assert_int_equal(clock_real_ms(15000), 8);
	assert_int_equal(clock_real_ms(60000), 30);
	assert_int_equal(clock_real_ms(1), 1);
	assert_int_equal(clock_real_ms(0), 0);
	assert_int_equal(clock_sim_ms(7), 14000);
	clock_configure(1, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real),
		cmocka_unit_test(test_scaled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
