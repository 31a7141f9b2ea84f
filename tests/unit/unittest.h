/*
 * unittest.h: the one fixture of the C unit tests -- a fresh temporary
 * directory and, in it on demand, a store; one call closes the store and
 * removes the directory (kept when GPUQ_KEEP_TEST_DIR is set, to look
 * at). A test's libuv loop stays in the test: each checks on its own
 * that uv_loop_close() finds no handle left.
 *
 *	ut = unittest_new("test-store");
 *	st = unittest_store(ut);	   (DIR/gpuq.db)
 *	...
 *	unittest_free(ut);
 *
 * Linked from tests/unit/libunittest.a: unittest_store() lives in its
 * own object, so a test without a store does not need SQLite. Test code
 * only.
 */
#ifndef GPUQ_UNITTEST_H
#define GPUQ_UNITTEST_H

struct store;

struct unittest {
	char		 dir[64];	/* the temporary directory */
	struct store	*store;		/* after unittest_store() */
	/* Set by unittest_store(): closes it (no link to the store else). */
	void		(*done_store)(struct unittest *);
};

/* A fixture with a new directory /tmp/NAME.XXXXXX; fails the test if
 * the directory cannot be made. */
struct unittest		*unittest_new(const char *name);
/* DIR/FILE: a new string. */
char			*unittest_path(struct unittest *, const char *file);
/* Close the store, remove the directory, free UT (may be NULL). */
void			 unittest_free(struct unittest *ut);
/* Remove the directory tree DIR. */
void			 unittest_rmrf(const char *dir);

/* unittest-store.c: the store at DIR/gpuq.db, opened on first call;
 * fails the test if it cannot be opened. */
struct store		*unittest_store(struct unittest *);

#endif
