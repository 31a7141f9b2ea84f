/*
 * unittest-store.c: the fixture's store (see unittest.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "store/store.h"
#include "tests/unit/unittest.h"

static void
unittest_store_done(struct unittest *ut)
{
	store_close(ut->store);
	ut->store = NULL;
}

struct store *
unittest_store(struct unittest *ut)
{
	char	*path, *cause = NULL;

	if (ut->store != NULL)
		return ut->store;
	path = unittest_path(ut, "gpuq.db");
	if (store_open(path, &ut->store, &cause) != 0)
		fail_msg("store_open %s: %s", path, cause);
	free(path);
	ut->done_store = unittest_store_done;
	return ut->store;
}
