/*
 * store-queue.c: the scheduler's read of the whole queue from the
 * covering index jobs_runnable (store.h store_job_list_queue(),
 * doc/DESIGN.md "The pass").
 *
 * The scheduler reads the queue whole after another program wrote the
 * file, after a failed write of whys, or after many moves. It already
 * knows most of the jobs and needs of each only what may have changed:
 * priority, backoff, interruptions, cost and the stored why. Those are
 * in jobs_runnable since schema 13, so the walk reads that index and
 * never a row of jobs, whose specs made it about seven times the bytes.
 */
#include "config.h"

#include <errno.h>

#include "store/store-int.h"

int
store_job_list_queue(struct store *st, store_queued_cb cb, void *arg,
    char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_JOB_QUEUE];
	struct store_queued	 q;
	int			 rc, n = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		q.id = sqlite3_column_int64(s, 0);
		q.priority = sqlite3_column_int(s, 1);
		q.not_before = sqlite3_column_int64(s, 2);
		q.interruptions = sqlite3_column_int(s, 3);
		q.cost_usd = sqlite3_column_double(s, 4);
		q.why = (const char *)sqlite3_column_text(s, 5);
		q.why_len = (size_t)sqlite3_column_bytes(s, 5);
		if ((rc = cb(&q, arg)) != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "list the queue");
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return n;
}
