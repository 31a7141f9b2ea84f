/*
 * unittest.h: the one fixture of the C unit tests. A test asks for the
 * parts it needs; each is made on first use, and one call undoes all of
 * them in the right order.
 *
 *	ut = unittest_new("test-x");	   a fresh /tmp/test-x.XXXXXX
 *	st = unittest_store(ut);	   the store DIR/gpuq.db
 *	loop = unittest_loop(ut);	   a libuv loop
 *	gcptest_fake(ut);		   the simulated Google Cloud, in DIR
 *					   (ut->fake), ut->gcp for it and the
 *					   loop; NEED_FAKE(ut) in a test body
 *	gcptest_http(ut);		   ut->http on the loop, for ut->gcp
 *	gcptest_auth(ut);		   ut->auth, http's token source
 *	...
 *	unittest_run(ut);		   the loop until it has nothing to do
 *	unittest_run_until(ut, &n, 1);	   the loop until n >= 1
 *	unittest_run_cond(ut, f, arg);	   the loop until f(arg) is true
 *	...
 *	gcptest_cancel(ut);		   (a test's own module freed next)
 *	unittest_free(ut);
 *
 * unittest_free() cancels ut->http's requests, frees auth and http, runs
 * the loop until every handle is closed, closes the loop and the store,
 * stops the fake, removes DIR (kept when GPUQ_KEEP_TEST_DIR is set, to
 * look at) and only then fails the test if uv_loop_close() found a
 * handle left open -- so a failing test never leaves the fake running.
 * A test that made objects of its own on the loop frees them before
 * unittest_free(); one whose objects have requests in ut->http calls
 * gcptest_cancel() first, so their callbacks still find them alive.
 *
 * Running the loop never hangs a test: unittest_run(),
 * unittest_run_until() and unittest_run_cond() fail it after
 * UNITTEST_WAIT_MS, and the last two as soon as the loop has nothing
 * left to do. A condition that comes true only on the turn the watchdog
 * fires fails too: a test that waited that long was stalled, not slow.
 * The last two stop the loop as soon as the condition holds, even when
 * it came true in the timers libuv runs before a turn's poll (see
 * unittest-loop.c). A wait with a bound of its own, shorter than a
 * stall would take, is unittest_run_cond_ms().
 *
 * Linked from tests/unit/libunittest.a: the store (unittest-store.c)
 * and the loop (unittest-loop.c) are objects of their own, so a test
 * without them needs neither SQLite nor libuv. The simulated cloud's
 * part (gcptest_*) is in gcptest.c, which the tests that need it compile
 * in. Test code only: blocking calls are fine here, never in gpuqd.
 */
#ifndef GPUQ_UNITTEST_H
#define GPUQ_UNITTEST_H

#include <sys/types.h>

struct auth;
struct gcp_conf;
struct http;
struct store;
struct uv_loop_s;

/* A simulated cloud (tests/fakegcp), or tests/unit/gcptest.c's tiny
 * server; gcptest.h says how to start and stop one. */
struct fake {
	pid_t	 pid;		/* 0: not running */
	char	 url[128];
	char	 dir[256];	/* its state (the fixture's DIR) */
};

/* How long running the loop may take before the test fails. */
#define UNITTEST_WAIT_MS	60000

struct unittest {
	char		 dir[64];	/* the temporary directory */
	struct store	*store;		/* after unittest_store() */
	struct uv_loop_s *loop;		/* after unittest_loop() */
	struct fake	 fake;		/* after gcptest_fake() */
	struct gcp_conf	*gcp;		/* after gcptest_fake(): for the fake */
	struct http	*http;		/* after gcptest_http() */
	struct auth	*auth;		/* after gcptest_auth() */
	/*
	 * Set by the parts' makers, called by unittest_free() in this
	 * order (libunittest.a's core does not link the parts).
	 */
	void		(*done_http)(struct unittest *);
	int		(*done_loop)(struct unittest *);
	void		(*done_store)(struct unittest *);
	void		(*done_fake)(struct unittest *);
};

/* A fixture with a new directory /tmp/NAME.XXXXXX; fails the test if
 * the directory cannot be made. */
struct unittest		*unittest_new(const char *name);
/* DIR/FILE: a new string. */
char			*unittest_path(struct unittest *, const char *file);
/* Undo every part (above), free UT (may be NULL); fails the test if a
 * handle was left on the loop. */
void			 unittest_free(struct unittest *ut);
/* Remove the directory tree DIR. */
void			 unittest_rmrf(const char *dir);
/* Clear the credential variables Google's ADC reads, and point HOME at
 * UT's directory: no test finds the machine's own credentials. */
void			 unittest_clean_env(struct unittest *ut);

/* unittest-store.c: the store at DIR/gpuq.db, opened on first call;
 * fails the test if it cannot be opened. */
struct store		*unittest_store(struct unittest *);

/* unittest-loop.c: the loop, initialised on first call. */
struct uv_loop_s	*unittest_loop(struct unittest *);
/* Run the loop until no handle or request is active (uv_run()'s
 * UV_RUN_DEFAULT); fails the test after UNITTEST_WAIT_MS. */
void			 unittest_run(struct unittest *);
/* Run the loop until *COUNT >= WANT; fails the test after
 * UNITTEST_WAIT_MS, or when the loop has nothing left to do first. */
void			 unittest_run_until(struct unittest *,
			    const int *count, int want);
/* Run the loop until COND(ARG) returns nonzero (tested before the first
 * turn, before each poll and after each turn); fails the test as
 * unittest_run_until() does. */
void			 unittest_run_cond(struct unittest *,
			    int (*cond)(void *), void *arg);
/* The same, failing the test after MS instead. */
void			 unittest_run_cond_ms(struct unittest *,
			    unsigned int ms, int (*cond)(void *), void *arg);
/* Run the loop for MS of real time. */
void			 unittest_run_for(struct unittest *, unsigned int ms);

#endif
