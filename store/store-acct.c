/*
 * store-acct.c: the ended jobs and their attempts, for gpuq history
 * (doc/DESIGN.md "Accounting").
 *
 * One statement (STMT_HISTORY) walks the partial index jobs_history,
 * which holds ended jobs only, by the time they ended: a window of a
 * week costs the jobs in that week, however many ended before it, and
 * the attempts come by the (job_id, number) key.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "store/store-int.h"

static void
store_acct_row(sqlite3_stmt *s, struct store_acct_row *r)
{
	memset(r, 0, sizeof *r);
	r->job_id = sqlite3_column_int64(s, 0);
	r->name = (const char *)sqlite3_column_text(s, 1);
	r->state = sqlite3_column_int(s, 2);
	r->owner = (uid_t)sqlite3_column_int64(s, 3);
	r->gpu_type = (const char *)sqlite3_column_text(s, 4);
	r->gpu_count = sqlite3_column_int(s, 5);
	r->created = sqlite3_column_int64(s, 6);
	r->ended = sqlite3_column_int64(s, 7);
	r->attempts = sqlite3_column_int(s, 8);
	r->interruptions = sqlite3_column_int(s, 9);
	r->failures = sqlite3_column_int(s, 10);
	r->exit_code = sqlite3_column_int(s, 11);
	if (sqlite3_column_type(s, 12) == SQLITE_NULL)
		return;
	r->attempt = sqlite3_column_int(s, 12);
	r->provider = (const char *)sqlite3_column_text(s, 13);
	r->region = (const char *)sqlite3_column_text(s, 14);
	r->zone = (const char *)sqlite3_column_text(s, 15);
	r->spot = sqlite3_column_int(s, 16);
	r->hourly_usd = sqlite3_column_double(s, 17);
	r->started = sqlite3_column_int64(s, 18);
	r->a_ended = sqlite3_column_int64(s, 19);
	r->billed_start = sqlite3_column_int64(s, 20);
	r->billed_end = sqlite3_column_int64(s, 21);
	r->cost_usd = sqlite3_column_double(s, 22);
	r->baseline_usd = sqlite3_column_double(s, 23);
	r->end_reason = sqlite3_column_int(s, 24);
	r->a_gpu_count = sqlite3_column_int(s, 25);
	r->baseline_hourly_usd = sqlite3_column_double(s, 26);
	r->deadline = sqlite3_column_int64(s, 27);
	r->capacity = (const char *)sqlite3_column_text(s, 28);
}

int
store_acct_list(struct store *st, const struct store_acct_filter *f,
    int64_t after_time, int64_t after_id, int limit, store_acct_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_HISTORY];
	struct store_acct_row	 r;
	int64_t			 last = -1;
	int			 rc, n = 0;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, f->since > 0 ? f->since : 0);
	sqlite3_bind_int64(s, 2, f->until > 0 ? f->until : INT64_MAX);
	sqlite3_bind_int64(s, 3, after_time);
	sqlite3_bind_int64(s, 4, after_id);
	if (f->owner_set)
		sqlite3_bind_int64(s, 5, (int64_t)f->owner);
	else
		sqlite3_bind_null(s, 5);
	store_bind_text(s, 6, f->name);
	sqlite3_bind_int64(s, 7, f->states);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_acct_row(s, &r);
		if (r.job_id != last) {
			if (limit > 0 && n == limit)
				break;
			last = r.job_id;
			n++;
		}
		if ((rc = cb(&r, arg)) != 0) {
			sqlite3_reset(s);
			return rc < 0 ? rc : n;
		}
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "history");
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return n;
}

/* Job ID's state in *RET: 0, -ENOENT if unknown, else -errno. */
int
store_job_state_get(struct store *st, int64_t id, int *ret, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_STATE];
	int		 rc;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int(s, 0);
		sqlite3_reset(s);
		return 0;
	}
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	return store_fail(st, rc, cause, "job %lld: state", (long long)id);
}
