/*
 * unittest.c: the unit tests' fixture (see unittest.h): the temporary
 * directory and the teardown that undoes every part in order.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xmalloc.h"
#include "tests/unit/unittest.h"

struct unittest *
unittest_new(const char *name)
{
	struct unittest	*ut = xcalloc(1, sizeof *ut);

	(void)snprintf(ut->dir, sizeof ut->dir, "/tmp/%s.XXXXXX", name);
	if (mkdtemp(ut->dir) == NULL)
		fail_msg("mkdtemp %s: %s", ut->dir, strerror(errno));
	return ut;
}

char *
unittest_path(struct unittest *ut, const char *file)
{
	return xprintf("%s/%s", ut->dir, file);
}

static int
unittest_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
unittest_rmrf(const char *dir)
{
	(void)nftw(dir, unittest_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
unittest_clean_env(struct unittest *ut)
{
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	unsetenv("CLOUDSDK_CONFIG");
	unsetenv("GCE_METADATA_HOST");
	setenv("HOME", ut->dir, 1);
}

void
unittest_free(struct unittest *ut)
{
	int	closed = 0;

	if (ut == NULL)
		return;
	if (ut->done_http != NULL)
		ut->done_http(ut);
	if (ut->done_loop != NULL)
		closed = ut->done_loop(ut);
	if (ut->done_store != NULL)
		ut->done_store(ut);
	if (ut->done_fake != NULL)
		ut->done_fake(ut);
	if (getenv("GPUQ_KEEP_TEST_DIR") == NULL)
		unittest_rmrf(ut->dir);
	else
		fprintf(stderr, "test directory kept: %s\n", ut->dir);
	free(ut);
	/* Last: a failure must not leave the fake or the directory. */
	if (closed != 0)
		fail_msg("a handle was left on the loop: uv_loop_close %d",
		    closed);
}
