/*
 * unittest-loop.c: the fixture's libuv loop (see unittest.h), and
 * running it with a watchdog so no test hangs.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <uv.h>

#include "common/xmalloc.h"
#include "tests/unit/unittest.h"

/* A timer that does not keep the loop alive and stops it when due. */
struct unittest_watchdog {
	uv_timer_t	 timer;
	int		 fired;
	int		 closed;
};

static void
unittest_on_watchdog(uv_timer_t *tm)
{
	struct unittest_watchdog	*w = tm->data;

	w->fired = 1;
	uv_stop(tm->loop);
}

static void
unittest_on_watchdog_closed(uv_handle_t *h)
{
	struct unittest_watchdog	*w = h->data;

	w->closed = 1;
}

static void
unittest_watchdog_start(struct unittest *ut, struct unittest_watchdog *w,
    uint64_t ms)
{
	w->fired = w->closed = 0;
	w->timer.data = w;
	assert_int_equal(uv_timer_init(ut->loop, &w->timer), 0);
	assert_int_equal(uv_timer_start(&w->timer, unittest_on_watchdog, ms,
	    0), 0);
	uv_unref((uv_handle_t *)&w->timer);
}

/* Close W's timer (it lives on the caller's stack); 1 if it fired. */
static int
unittest_watchdog_stop(struct unittest *ut, struct unittest_watchdog *w)
{
	uv_close((uv_handle_t *)&w->timer, unittest_on_watchdog_closed);
	while (!w->closed)
		(void)uv_run(ut->loop, UV_RUN_NOWAIT);
	return w->fired;
}

static int
unittest_loop_done(struct unittest *ut)
{
	struct unittest_watchdog	w;
	int				rc;

	unittest_watchdog_start(ut, &w, UNITTEST_WAIT_MS);
	(void)uv_run(ut->loop, UV_RUN_DEFAULT);
	(void)unittest_watchdog_stop(ut, &w);
	rc = uv_loop_close(ut->loop);
	if (rc == 0) {
		free(ut->loop);
		ut->loop = NULL;
	}
	return rc;
}

uv_loop_t *
unittest_loop(struct unittest *ut)
{
	if (ut->loop != NULL)
		return ut->loop;
	ut->loop = xcalloc(1, sizeof *ut->loop);
	assert_int_equal(uv_loop_init(ut->loop), 0);
	ut->done_loop = unittest_loop_done;
	return ut->loop;
}

void
unittest_run(struct unittest *ut)
{
	struct unittest_watchdog	w;

	unittest_watchdog_start(ut, &w, UNITTEST_WAIT_MS);
	(void)uv_run(ut->loop, UV_RUN_DEFAULT);
	if (unittest_watchdog_stop(ut, &w))
		fail_msg("the loop was still busy after %d ms",
		    UNITTEST_WAIT_MS);
}

/*
 * Stops the loop before it would block once COND(ARG) holds. libuv (1.44,
 * Debian 12's) runs due timers at the start of a UV_RUN_ONCE turn and
 * then polls until the next timer: a callback that made the condition
 * true there (a pass on a timer armed at 0 ms) was followed by a poll
 * until the scheduler's next due time, a minute off, and the test sat
 * out that minute with its condition long true. A prepare callback runs
 * after those timers and just before the poll; uv_stop() there makes the
 * poll's timeout 0.
 */
struct unittest_until {
	uv_prepare_t	 prep;
	int		(*cond)(void *);
	void		*arg;
	int		 closed;
};

static void
unittest_on_until(uv_prepare_t *p)
{
	struct unittest_until	*u = p->data;

	if (u->cond(u->arg))
		uv_stop(p->loop);
}

static void
unittest_on_until_closed(uv_handle_t *h)
{
	struct unittest_until	*u = h->data;

	u->closed = 1;
}

/* Run the loop until COND(ARG): 0, 1 after MS (the condition coming
 * true only on the turn the watchdog fired counts as late), or 2 when
 * the loop had nothing left to do first. */
static int
unittest_run_to(struct unittest *ut, unsigned int ms, int (*cond)(void *),
    void *arg)
{
	struct unittest_watchdog	w;
	struct unittest_until		u;
	int				alive = 1, held, fired;

	u.cond = cond;
	u.arg = arg;
	u.closed = 0;
	u.prep.data = &u;
	assert_int_equal(uv_prepare_init(ut->loop, &u.prep), 0);
	assert_int_equal(uv_prepare_start(&u.prep, unittest_on_until), 0);
	uv_unref((uv_handle_t *)&u.prep);	/* keeps no loop alive */
	unittest_watchdog_start(ut, &w, ms);
	while (!(held = cond(arg)) && alive && !w.fired)
		alive = uv_run(ut->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&u.prep, unittest_on_until_closed);
	fired = unittest_watchdog_stop(ut, &w);
	while (!u.closed)
		(void)uv_run(ut->loop, UV_RUN_NOWAIT);
	if (fired)
		return 1;
	return held ? 0 : 2;
}

struct unittest_count {
	const int	*count;
	int		 want;
};

static int
unittest_counted(void *arg)
{
	struct unittest_count	*c = arg;

	return *c->count >= c->want;
}

void
unittest_run_until(struct unittest *ut, const int *count, int want)
{
	struct unittest_count	c = { count, want };

	switch (unittest_run_to(ut, UNITTEST_WAIT_MS, unittest_counted,
	    &c)) {
	case 1:
		fail_msg("waited %d ms for %d callback(s), got %d",
		    UNITTEST_WAIT_MS, want, *count);
		break;
	case 2:
		fail_msg("the loop has nothing left to do, and %d of %d "
		    "callback(s) came", *count, want);
		break;
	}
}

void
unittest_run_cond(struct unittest *ut, int (*cond)(void *), void *arg)
{
	unittest_run_cond_ms(ut, UNITTEST_WAIT_MS, cond, arg);
}

void
unittest_run_cond_ms(struct unittest *ut, unsigned int ms,
    int (*cond)(void *), void *arg)
{
	switch (unittest_run_to(ut, ms, cond, arg)) {
	case 1:
		fail_msg("waited %u ms for a condition that did not come", ms);
		break;
	case 2:
		fail_msg("the loop has nothing left to do, and the condition "
		    "did not come");
		break;
	}
}

static void
unittest_on_run_for(uv_timer_t *tm)
{
	(*(int *)tm->data)++;
}

static void
unittest_on_run_for_closed(uv_handle_t *h)
{
	(*(int *)h->data)++;
}

void
unittest_run_for(struct unittest *ut, unsigned int ms)
{
	uv_timer_t	tm;
	int		n = 0;

	tm.data = &n;
	assert_int_equal(uv_timer_init(ut->loop, &tm), 0);
	assert_int_equal(uv_timer_start(&tm, unittest_on_run_for, ms, 0), 0);
	unittest_run_until(ut, &n, 1);
	uv_close((uv_handle_t *)&tm, unittest_on_run_for_closed);
	unittest_run_until(ut, &n, 2);
}
