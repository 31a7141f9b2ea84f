/*
 * cost.c: expected cost, the preemption-rate estimator, the order of
 * offers, billed cost and retry delays (cost.h).
 *
 * Must not know the store, the loop or the cloud: numbers in, numbers
 * out.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "daemon/cost.h"

/*
 * The estimator is the posterior mean of a Gamma-Poisson model: the
 * prior rate is worth COST_PRIOR_HOURS hours of observation. A region
 * that preempted us 3 times in 2 hours has λ = (3 + 0.1 × 10) / 12 =
 * 0.33/h with the default prior, not 1.5/h: a little history moves the
 * estimate, much history decides it, and one unlucky hour does not
 * banish a region forever.
 */
double
cost_lambda(double hours, int interruptions, double prior)
{
	double	n = interruptions > 0 ? interruptions : 0;

	if (!(hours > 0))
		hours = 0;
	if (!(prior > 0))
		prior = 0;
	return (n + prior * COST_PRIOR_HOURS) / (hours + COST_PRIOR_HOURS);
}

double
cost_expected(double hourly, double estimated_hours, int spot,
    double lambda, int64_t checkpoint_interval, int64_t restart_overhead)
{
	double	base = hourly * estimated_hours, lost;

	if (!spot || !(lambda > 0))
		return base;
	if (checkpoint_interval < 0)
		checkpoint_interval = 0;
	if (restart_overhead < 0)
		restart_overhead = 0;
	lost = (checkpoint_interval / 2.0 + (double)restart_overhead) /
	    3600.0;
	return base * (1.0 + lambda * lost);
}

int
cost_rank_cmp(const struct cost_rank *a, const struct cost_rank *b)
{
	double	scale;

	scale = fmax(fabs(a->expected_usd), fabs(b->expected_usd));
	if (fabs(a->expected_usd - b->expected_usd) > COST_TIE_EPSILON *
	    fmax(scale, 1e-300)) {
		if (a->expected_usd < b->expected_usd)
			return -1;
		return 1;
	}
	if (a->interruptions != b->interruptions)
		return a->interruptions < b->interruptions ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return 0;
}

double
cost_attempt(double hourly, int64_t started, int64_t ended)
{
	int64_t	sec;

	if (started <= 0 || !(hourly > 0))
		return 0;
	sec = ended > started ? ended - started : 0;
	if (sec < COST_MIN_BILLED_SEC)
		sec = COST_MIN_BILLED_SEC;
	return hourly * (double)sec / 3600.0;
}

/*
 * The cloud's own clock wins: Google bills from the start and end it
 * records, and gpuqd only sees them at its listing interval (and in the
 * simulated cloud, whose clock runs faster, not at all).
 */
int64_t
cost_billed_sec(int64_t billed_start, int64_t billed_end, int64_t started,
    int64_t ended)
{
	int64_t	sec;

	if (billed_start > 0 && billed_end >= billed_start)
		sec = billed_end - billed_start;
	else if (started > 0 || billed_start > 0)
		sec = started > 0 && ended > started ? ended - started : 0;
	else
		return 0;
	return sec < COST_MIN_BILLED_SEC ? COST_MIN_BILLED_SEC : sec;
}

double
cost_of(double hourly, int64_t sec)
{
	if (!(hourly > 0) || sec <= 0)
		return 0;
	return hourly * (double)sec / 3600.0;
}

int64_t
cost_backoff(int64_t base, int64_t cap, int n, double jitter)
{
	int64_t	d = base > 0 ? base : 1;

	if (cap < d)
		cap = d;
	while (n-- > 0 && d < cap)
		d = d > INT64_MAX / 2 ? cap : d * 2;
	if (d > cap)
		d = cap;
	if (jitter > 0 && jitter < 1)
		d -= (int64_t)((double)d / 4.0 * jitter);
	return d > 0 ? d : 1;
}
