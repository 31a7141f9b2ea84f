/*
 * deadline.c: the deadline policy (deadline.h; doc/DESIGN.md
 * "Deadlines"). The slack follows Uniform Progress of "Can't Be Late"
 * (Wu et al., NSDI 2024): a job that still has more time than work may
 * gamble on Spot; the expected price of the gamble is one
 * restart_overhead per interruption the Spot rate predicts for the work
 * left. Once the slack is under the margin, the job must not gamble.
 */
#include "config.h"

#include <math.h>

#include "daemon/deadline.h"

double
deadline_done(double run, int resumes, double restart_overhead, double work)
{
	double	done;

	done = run - (resumes > 0 ? resumes : 0) * restart_overhead;
	if (done < 0)
		done = 0;
	if (done > work)
		done = work;
	return done;
}

double
deadline_lost(double run, int resumed, double restart_overhead,
    double interval)
{
	double	w = run - (resumed ? restart_overhead : 0);

	if (w <= 0 || interval <= 0)
		return 0;
	return fmod(w, interval);
}

int64_t
deadline_slack(const struct deadline_job *j)
{
	double	left = j->work - j->done, lost = 0;

	if (left < 0)
		left = 0;
	/* On capacity that is not preempted no restart is expected. */
	if (!j->safe && j->lambda > 0)
		lost = j->restart_overhead * j->lambda * left / 3600.0;
	return (int64_t)floor((double)(j->deadline - j->now) - left - lost);
}

int
deadline_unsafe(const struct deadline_job *j, int64_t margin)
{
	return !j->safe && deadline_slack(j) < margin;
}

int64_t
deadline_cross_at(const struct deadline_job *j, int64_t margin)
{
	int64_t	slack;

	if (j->safe)
		return 0;
	slack = deadline_slack(j);
	if (slack < margin)
		return j->now;
	/* The first second at which the slack is below, not at, it. */
	return j->now + (slack - margin) + 1;
}

int64_t
deadline_switch(const struct deadline_job *j, double interval)
{
	double	sw = j->restart_overhead + (interval > 0 ? interval : 0);

	return sw > 0 ? (int64_t)ceil(sw) : 0;
}

int64_t
deadline_wait_until(const struct deadline_job *j, int64_t margin, int64_t sw)
{
	if (j->safe)
		return 0;
	/* Waiting loses a second of slack a second. */
	return j->now + deadline_slack(j) - margin - 2 * sw;
}

int
deadline_back_to_spot(const struct deadline_job *j, int64_t margin, int64_t sw)
{
	struct deadline_job	spot = *j;

	if (j->safe)
		return 0;
	spot.safe = 0;
	return deadline_slack(&spot) >= margin + sw;
}

/*
 * With K = floor(AVAIL / COST) preemptions absorbed, the job leaves Spot
 * at T, the time of the (K+1)th preemption of a Poisson process of rate
 * LAMBDA, and runs the rest, (LEFT - T)+, elsewhere. With N(t) the
 * preemptions by t and mu = LAMBDA x LEFT,
 *   E[(LEFT - T)+] = LEFT P(N(LEFT) > K) - (K+1)/LAMBDA P(N(LEFT) > K+1),
 * since E[T; T <= LEFT] = (K+1)/LAMBDA P(Gamma(K+2, LAMBDA) <= LEFT).
 */
double
deadline_spot_tail(double left, double avail, double cost, double lambda)
{
	double	mu, p, cdf_k = 0, cdf_k1, k, tail;
	long	i, n;

	if (!(left > 0) || !(lambda > 0))
		return 0;
	if (!(avail > 0))
		avail = 0;
	if (!(cost > 0))
		return 0;
	k = floor(avail / cost);
	mu = lambda * left;
	if (k > mu + 12 * sqrt(mu) + 12)	/* beyond any double's reach */
		return 0;
	n = (long)k;
	/* P(N <= i), i = 0..K+1, term by term; where exp(-mu) underflows
	 * both are 0 and the tail is its limit, LEFT less the mean time
	 * to the (K+1)th preemption. */
	p = exp(-mu);
	for (i = 0; i <= n; i++) {
		cdf_k += p;
		p *= mu / (double)(i + 1);
	}
	cdf_k1 = cdf_k + p;
	tail = left * (1 - fmin(cdf_k, 1)) - (k + 1) / lambda *
	    (1 - fmin(cdf_k1, 1));
	if (!(tail > 0))
		return 0;
	return fmin(tail / left, 1);
}
