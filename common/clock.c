/*
 * clock.c: real or simulated wall time (clock.h; doc/DESIGN.md
 * "Simulated time"). Process-wide, set once at start before anything
 * reads it; gpuqd is single-threaded.
 */
#include "config.h"

#include <stdint.h>
#include <time.h>

#include "common/clock.h"

static double	clk_scale = 1.0;
static double	clk_origin;

void
clock_configure(double scale, double origin)
{
	struct timespec	ts;

	if (!(scale >= 1.0))
		scale = 1.0;	/* NaN, or slower than real: refused */
	if (origin <= 0) {
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		origin = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	}
	clk_scale = scale;
	clk_origin = origin;
}

double
clock_scale(void)
{
	return clk_scale;
}

double
clock_now_f(void)
{
	struct timespec	ts;
	double		real;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	real = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	if (clk_scale == 1.0)
		return real;
	return clk_origin + (real - clk_origin) * clk_scale;
}

int64_t
clock_now(void)
{
	if (clk_scale == 1.0)
		return (int64_t)time(NULL);
	return (int64_t)clock_now_f();	/* after 1970: truncation floors */
}

uint64_t
clock_sim_ms(uint64_t real_ms)
{
	if (clk_scale == 1.0)
		return real_ms;
	return (uint64_t)((double)real_ms * clk_scale);
}

uint64_t
clock_real_ms(uint64_t sim_ms)
{
	uint64_t	ms;

	if (clk_scale == 1.0 || sim_ms == 0)
		return sim_ms;
	ms = (uint64_t)((double)sim_ms / clk_scale + 0.999);
	return ms > 0 ? ms : 1;
}
