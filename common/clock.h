/*
 * clock.h: the time gpuqd schedules and accounts by.
 *
 * For tests only, gpuqd can live on the simulated clock of the fake
 * cloud (tests/fakegcp), which runs SCALE times faster than real time
 * from a shared real instant ORIGIN (doc/DESIGN.md "Simulated time"):
 *
 *	simulated = ORIGIN + (real - ORIGIN) x SCALE
 *
 * Everything the scheduler, the reconciler, attempt.c and the store
 * reckon in wall time (poll interval, backoff, cool-downs, pending
 * timeouts, limits, learnt preemption rates, the times stored in the
 * queue) reads clock_now(); a loop timer whose interval is simulated
 * time is armed with clock_real_ms(). What talks to the outside in
 * real time (HTTP timeouts and retries, OAuth tokens, client
 * connections) keeps reading the loop's real clock. With the default
 * scale 1 both are the real clock.
 */
#ifndef GPUQ_CLOCK_H
#define GPUQ_CLOCK_H

#include <stdint.h>

/* Use SCALE (>= 1) from ORIGIN (real epoch seconds; 0: now). */
void		clock_configure(double scale, double origin);
double		clock_scale(void);
/* Simulated epoch seconds, whole and with fractions. */
int64_t		clock_now(void);
double		clock_now_f(void);
/* A real monotonic reading in ms (uv_now) as simulated ms: differences
 * of two are simulated durations. */
uint64_t	clock_sim_ms(uint64_t real_ms);
/* The real ms a timer waits for SIM_MS of simulated time (at least 1
 * when SIM_MS is not 0, so a short interval is no busy loop). */
uint64_t	clock_real_ms(uint64_t sim_ms);

#endif /* GPUQ_CLOCK_H */
