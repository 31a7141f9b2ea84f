/*
 * store-deadline.c: what the deadline policy keeps (doc/DESIGN.md
 * "Deadlines"): the sticky deadline_safe mark and the live jobs with a
 * deadline. The mark and the misses are rare next to submits and moves,
 * so their statements are prepared per call; the listing runs every
 * scheduling pass and uses one kept with the others (store.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <sqlite3.h>

#include "common/xmalloc.h"
#include "common/clock.h"
#include "store/store-int.h"

int
store_job_set_deadline_safe(struct store *st, int64_t id,
    const char *message, char **cause)
{
	sqlite3_stmt	*s = NULL;
	int		 rc, changed;

	if ((rc = store_tx_begin(st, cause, "mark deadline_safe: begin")) != 0)
		return rc;
	rc = sqlite3_prepare_v2(st->db, "UPDATE jobs SET deadline_safe = 1"
	    " WHERE id = ?1 AND deadline_safe = 0", -1, &s, NULL);
	if (rc != SQLITE_OK) {
		rc = store_fail(st, rc, cause, "mark deadline_safe");
		goto fail;
	}
	sqlite3_bind_int64(s, 1, id);
	if ((rc = store_step_done(st, s, cause, "mark deadline_safe")) != 0)
		goto fail;
	changed = sqlite3_changes(st->db);
	sqlite3_finalize(s);
	s = NULL;
	if (changed == 0) {
		store_tx_rollback(st);
		return -EALREADY;
	}
	s = st->stmt[STMT_EVENT_ADD];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, clock_now());
	store_bind_text(s, 3, message);
	s = NULL;
	if ((rc = store_step_done(st, st->stmt[STMT_EVENT_ADD], cause,
	    "add event")) != 0)
		goto fail;
	if ((rc = store_tx_commit(st, cause, "mark deadline_safe: commit")) !=
	    0)
		goto fail;
	return 0;
fail:
	if (s != NULL)
		sqlite3_finalize(s);
	store_tx_rollback(st);
	return rc;
}

int
store_job_list_deadline(struct store *st, store_job_cb cb, void *arg,
    char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_JOB_LIST_DEADLINE];
	struct store_job	 j;
	int			 rc, n = 0, stop = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_job_row(s, &j);
		n++;
		if ((stop = cb(&j, arg)) != 0)
			break;
	}
	if (stop == 0 && rc != SQLITE_DONE)
		rc = store_fail(st, rc, cause, "list deadline jobs");
	else
		rc = stop != 0 ? stop : n;
	/* Reset even after CB stopped the walk: the next pass starts over. */
	sqlite3_reset(s);
	return rc;
}

int
store_deadline_misses(struct store *st, int64_t *ret, char **cause)
{
	sqlite3_stmt	*s = NULL;
	int		 rc;

	/* The WHERE is jobs_missed's own, so only that index is read. */
	rc = sqlite3_prepare_v2(st->db, "SELECT count(*) FROM jobs"
	    " INDEXED BY jobs_missed WHERE deadline > 0"
	    " AND (state = 5 OR state = 6) AND updated > deadline", -1, &s,
	    NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "count deadline misses");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "count deadline misses");
		sqlite3_finalize(s);
		return rc;
	}
	*ret = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}
