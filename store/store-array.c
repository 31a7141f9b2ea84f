/*
 * store-array.c: job arrays and what dependencies read of jobs
 * (doc/DESIGN.md "Arrays and dependencies").
 *
 * The tasks of an array are ordinary rows of jobs, so each is scheduled,
 * placed, recovered and charged as any job is; array_id (task 0's id)
 * and task_index say whose task it is. store_jobs_insert() writes an
 * array's rows one after the other in one transaction, so task i is row
 * array_id + i: looking a task up costs one primary-key read. Counting
 * an array's tasks per state reads only the partial index jobs_array.
 *
 * These statements run a few times per pass or per request, not per
 * job: they are prepared when used, not kept.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "store/store-int.h"

static int
store_array_prepare(struct store *st, const char *sql, sqlite3_stmt **ret,
    char **cause)
{
	int	rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, ret, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "prepare \"%s\"", sql);
	return 0;
}

int
store_task_get(struct store *st, int64_t array_id, int index,
    struct store_job **ret, char **cause)
{
	sqlite3_stmt		*s;
	struct store_job	 j;
	int			 rc;

	if (index < 0)
		return -ENOENT;
	if ((rc = store_array_prepare(st, "SELECT " STORE_JOB_COLS
	    " FROM jobs WHERE id = ?1 + ?2 AND array_id = ?1"
	    " AND task_index = ?2", &s, cause)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, array_id);
	sqlite3_bind_int(s, 2, index);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		store_job_row(s, &j);
		*ret = store_job_copy(&j);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = -ENOENT;
	else
		rc = store_fail(st, rc, cause, "read task %lld.%d",
		    (long long)array_id, index);
	sqlite3_finalize(s);
	return rc;
}

int
store_job_sum(struct store *st, int64_t id, struct store_sum *ret,
    char **cause)
{
	sqlite3_stmt	*s;
	struct store_sum sum;
	int		 rc, state;

	memset(&sum, 0, sizeof sum);
	/* The first half reads jobs_array; the second one row. */
	if ((rc = store_array_prepare(st, "SELECT state, count(*), max(id),"
	    " 1 FROM jobs INDEXED BY jobs_array WHERE array_id = ?1"
	    " GROUP BY state UNION ALL SELECT state, 1, id, 0 FROM jobs"
	    " WHERE id = ?1 AND array_id IS NULL", &s, cause)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		state = sqlite3_column_int(s, 0);
		if (state < 0 || state >= JOB_NSTATES)
			continue;
		sum.states[state] += sqlite3_column_int64(s, 1);
		sum.tasks += sqlite3_column_int64(s, 1);
		if (sqlite3_column_int64(s, 2) > sum.last_id)
			sum.last_id = sqlite3_column_int64(s, 2);
		sum.array = sqlite3_column_int(s, 3);
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "count job %lld",
		    (long long)id);
		sqlite3_finalize(s);
		return rc;
	}
	sqlite3_finalize(s);
	if (sum.tasks == 0)
		return -ENOENT;
	*ret = sum;
	return 0;
}

int
store_array_cost(struct store *st, int64_t array_id, double *ret,
    double *ret_baseline, char **cause)
{
	sqlite3_stmt	*s;
	int		 rc;

	if ((rc = store_array_prepare(st, "SELECT total(cost_usd),"
	    " total(baseline_usd) FROM jobs"
	    " WHERE id BETWEEN ?1 AND ?1 + 10000 AND array_id = ?1", &s,
	    cause)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, array_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_double(s, 0);
		if (ret_baseline != NULL)
			*ret_baseline = sqlite3_column_double(s, 1);
		rc = 0;
	} else
		rc = store_fail(st, rc, cause, "cost of array %lld",
		    (long long)array_id);
	sqlite3_finalize(s);
	return rc;
}

int
store_task_list(struct store *st, int64_t array_id, int from, int limit,
    store_job_cb cb, void *arg, char **cause)
{
	sqlite3_stmt		*s;
	struct store_job	 j;
	int			 rc, n = 0;

	if ((rc = store_array_prepare(st, "SELECT " STORE_JOB_COLS
	    " FROM jobs WHERE id >= ?1 + ?2 AND id <= ?1 + 10000"
	    " AND array_id = ?1 ORDER BY id", &s, cause)) != 0)
		return rc;
	sqlite3_bind_int64(s, 1, array_id);
	sqlite3_bind_int(s, 2, from);
	while ((limit < 0 || n < limit) &&
	    (rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_job_row(s, &j);
		if ((rc = cb(&j, arg)) != 0) {
			sqlite3_finalize(s);
			return rc;
		}
		n++;
	}
	if (limit >= 0 && n == limit)
		rc = SQLITE_DONE;
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "list tasks of %lld",
		    (long long)array_id);
		sqlite3_finalize(s);
		return rc;
	}
	sqlite3_finalize(s);
	return n;
}

/* A task to move, read before the moves (the read statement is done). */
struct store_task_move {
	int64_t	 id;
	int	 from;
};

int
store_array_transition(struct store *st, int64_t array_id,
    const int to_of[JOB_NSTATES], const char *message, const char *why,
    store_moved_cb cb, void *arg, char **cause)
{
	sqlite3_stmt		*s, *w = st->stmt[STMT_JOB_SET_WHY];
	struct store_task_move	*v = NULL;
	size_t			 n = 0, cap = 0, i;
	int64_t			 now = clock_now();
	int			 rc, state, cur;

	if ((rc = store_array_prepare(st, "SELECT id, state FROM jobs"
	    " INDEXED BY jobs_array WHERE array_id = ?1 ORDER BY id", &s,
	    cause)) != 0)
		return rc;
	if ((rc = store_tx_begin(st, cause, "change tasks: begin")) != 0) {
		sqlite3_finalize(s);
		return rc;
	}
	sqlite3_bind_int64(s, 1, array_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		state = sqlite3_column_int(s, 1);
		if (state < 0 || state >= JOB_NSTATES || to_of[state] < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n].id = sqlite3_column_int64(s, 0);
		v[n++].from = state;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "read tasks of %lld",
		    (long long)array_id);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		rc = store_job_move(st, v[i].id, JOB_MASK(v[i].from),
		    to_of[v[i].from], now, message, &cur, cause);
		if (rc != 0)
			goto fail;
		sqlite3_bind_int64(w, 1, v[i].id);
		store_bind_text(w, 2, why);
		if ((rc = store_step_done(st, w, cause, "set why")) != 0)
			goto fail;
	}
	/*
	 * store_job_move() notes one move for the watchers; this
	 * transaction made N, so each is told here, after the commit.
	 */
	st->pending = 0;
	if ((rc = store_tx_commit(st, cause, "change tasks: commit")) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		st->counts[v[i].from]--;
		st->counts[to_of[v[i].from]]++;
	}
	for (i = 0; i < n; i++) {
		memset(&st->pend, 0, sizeof st->pend);
		st->pend.job_id = v[i].id;
		st->pend.from = v[i].from;
		st->pend.to = to_of[v[i].from];
		st->pend.end = -1;
		free(st->pend_message);
		st->pend_message = message != NULL ? xstrdup(message) : NULL;
		st->pending = 1;
		store_moved(st);
	}
	for (i = 0; cb != NULL && i < n; i++)
		cb(v[i].id, v[i].from, to_of[v[i].from], arg);
	free(v);
	return (int)n;

fail:
	store_tx_rollback(st);
	free(v);
	return rc;
}
