/*
 * store-attempt.c: attempts (one cloud resource each), stockout
 * cool-downs, and the Spot history the scheduler learns λ from.
 *
 * An attempt row is written before any cloud call, so a crash between
 * the two leaves a row the reconciler can match by its deterministic
 * resource name. Ending an attempt updates the job's counters and cost in
 * the same transaction. Knows nothing of providers beyond their names.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "store/store-int.h"

#define STORE_QUIET_SEC	3600	/* one strike forgiven per quiet hour */

static char *
store_col_text(sqlite3_stmt *s, int i)
{
	return (char *)sqlite3_column_text(s, i);
}

static char *
store_strdup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* Fill A from the current row of S (STORE_ATTEMPT_COLS); borrowed. */
void
store_attempt_row(sqlite3_stmt *s, struct store_attempt *a)
{
	a->id = sqlite3_column_int64(s, 0);
	a->job_id = sqlite3_column_int64(s, 1);
	a->number = sqlite3_column_int(s, 2);
	a->state = sqlite3_column_int(s, 3);
	a->provider = store_col_text(s, 4);
	a->region = store_col_text(s, 5);
	a->zone = store_col_text(s, 6);
	a->machine_type = store_col_text(s, 7);
	a->gpu = store_col_text(s, 8);
	a->gpu_count = sqlite3_column_int(s, 9);
	a->resource = store_col_text(s, 10);
	a->cloud_id = store_col_text(s, 11);
	a->spot = sqlite3_column_int(s, 12);
	a->hourly_usd = sqlite3_column_double(s, 13);
	a->created = sqlite3_column_int64(s, 14);
	a->started = sqlite3_column_int64(s, 15);
	a->ended = sqlite3_column_int64(s, 16);	/* NULL reads as 0 */
	a->end_reason = sqlite3_column_int(s, 17);
	a->exit_code = sqlite3_column_int(s, 18);
	a->message = store_col_text(s, 19);
	a->resumed_from = store_col_text(s, 20);
	a->cost_usd = sqlite3_column_double(s, 21);
	a->billed_start = sqlite3_column_int64(s, 22);
	a->billed_end = sqlite3_column_int64(s, 23);
	a->baseline_hourly_usd = sqlite3_column_double(s, 24);
	a->baseline_usd = sqlite3_column_double(s, 25);
	a->nodes = sqlite3_column_int(s, 26);
	a->capacity = store_col_text(s, 27);
	a->reservation = store_col_text(s, 28);
}

/*
 * Inside the caller's transaction: bump job A->job_id's attempt counter
 * and write attempt A (state launching) with that number in *ret_number.
 * -ENOENT if the job is unknown.
 */
static int
store_attempt_write(struct store *st, const struct store_attempt *a,
    int64_t created, int *ret_number, char **cause)
{
	sqlite3_stmt	*s;
	int		 rc, number;

	s = st->stmt[STMT_JOB_BUMP_ATTEMPTS];
	sqlite3_bind_int64(s, 1, a->job_id);
	sqlite3_bind_int64(s, 2, created);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		if (cause != NULL)
			*cause = xprintf("job %lld: no such job",
			    (long long)a->job_id);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "insert attempt: count");
		sqlite3_reset(s);
		return rc;
	}
	number = sqlite3_column_int(s, 0);
	sqlite3_reset(s);	/* RETURNING: the update ran on the first step */

	s = st->stmt[STMT_ATTEMPT_INSERT];
	sqlite3_bind_int64(s, 1, a->job_id);
	sqlite3_bind_int(s, 2, number);
	sqlite3_bind_text(s, 3, a->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, a->region, -1, SQLITE_STATIC);
	store_bind_text(s, 5, a->zone);
	store_bind_text(s, 6, a->machine_type);
	store_bind_text(s, 7, a->gpu);
	sqlite3_bind_int(s, 8, a->gpu_count);
	sqlite3_bind_text(s, 9, a->resource, -1, SQLITE_STATIC);
	store_bind_text(s, 10, a->cloud_id);
	sqlite3_bind_int(s, 11, a->spot ? 1 : 0);
	sqlite3_bind_double(s, 12, a->hourly_usd);
	sqlite3_bind_int64(s, 13, created);
	store_bind_text(s, 14, a->resumed_from);
	sqlite3_bind_double(s, 15, a->baseline_hourly_usd);
	sqlite3_bind_int(s, 16, a->nodes > 1 ? a->nodes : 1);
	store_bind_text(s, 17, a->capacity);
	store_bind_text(s, 18, a->reservation);
	if ((rc = store_step_done(st, s, cause, "insert attempt")) != 0)
		return rc;
	*ret_number = number;
	return 0;
}

static int
store_attempt_check(const struct store_attempt *a, char **cause)
{
	if (a->provider == NULL || a->region == NULL || a->resource == NULL)
		return store_invalid(cause, "job %lld: an attempt needs a "
		    "provider, a region and a resource name",
		    (long long)a->job_id);
	return 0;
}

/*
 * Write attempt A (state launching) for A->job_id and bump the job's
 * attempt counter, in one transaction. Fills a->id, a->number, a->state
 * and a->created (now if 0). -ENOENT if the job is unknown.
 */
int
store_attempt_insert(struct store *st, struct store_attempt *a, char **cause)
{
	int64_t		 created;
	int		 rc, number;

	if ((rc = store_attempt_check(a, cause)) != 0)
		return rc;
	created = a->created != 0 ? a->created : clock_now();
	if ((rc = store_tx_begin(st, cause, "insert attempt: begin")) != 0)
		return rc;
	if ((rc = store_attempt_write(st, a, created, &number, cause)) != 0 ||
	    (rc = store_tx_commit(st, cause, "insert attempt: commit")) != 0) {
		store_tx_rollback(st);
		return rc;
	}
	a->id = sqlite3_last_insert_rowid(st->db);
	a->number = number;
	a->state = ATTEMPT_LAUNCHING;
	a->created = created;
	return 0;
}

/*
 * A launch's bookkeeping in one transaction, before any cloud call: job
 * A->job_id must be queued and about to get attempt NUMBER; then attempt
 * A is written (state launching), the job's counter bumped and the job
 * moved to launching with MESSAGE. Fills A like store_attempt_insert.
 * -EALREADY (the job is no longer queued) and -ESTALE (its attempts were
 * counted elsewhere, so a name made from NUMBER would be wrong) write
 * nothing.
 */
int
store_attempt_launch(struct store *st, struct store_attempt *a, int number,
    const char *message, char **cause)
{
	int64_t		 created;
	int		 rc, got, from;

	if ((rc = store_attempt_check(a, cause)) != 0)
		return rc;
	created = a->created != 0 ? a->created : clock_now();
	if ((rc = store_tx_begin(st, cause, "launch attempt: begin")) != 0)
		return rc;
	if ((rc = store_job_move(st, a->job_id, JOB_MASK(JOB_QUEUED),
	    JOB_LAUNCHING, created, message, &from, cause)) != 0)
		goto fail;
	if ((rc = store_attempt_write(st, a, created, &got, cause)) != 0)
		goto fail;
	if (got != number) {
		if (cause != NULL)
			*cause = xprintf("job %lld: its next attempt is %d, "
			    "not %d", (long long)a->job_id, got, number);
		rc = -ESTALE;
		goto fail;
	}
	a->id = sqlite3_last_insert_rowid(st->db);
	if ((rc = store_tx_commit(st, cause, "launch attempt: commit")) != 0)
		goto fail;
	st->counts[from]--;
	st->counts[JOB_LAUNCHING]++;
	a->number = number;
	a->state = ATTEMPT_LAUNCHING;
	a->created = created;
	st->pend.attempt_id = a->id;
	store_moved(st);
	return 0;

fail:
	store_tx_rollback(st);
	return rc;
}

/* The cloud's start of live attempt ATTEMPT_ID, if none is known yet. */
int
store_attempt_set_billed(struct store *st, int64_t attempt_id,
    int64_t billed_start, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_ATTEMPT_SET_BILLED];

	if (billed_start <= 0)
		return 0;
	sqlite3_bind_int64(s, 1, attempt_id);
	sqlite3_bind_int64(s, 2, billed_start);
	return store_step_done(st, s, cause, "attempt billed start");
}

/* After an UPDATE of a live attempt changed nothing: -ENOENT or -EALREADY. */
static int
store_attempt_missing(struct store *st, int64_t id, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_ATTEMPT_GET_STATE];
	int		 rc;

	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW) {
		if (cause != NULL)
			*cause = xprintf("attempt row %lld has already ended",
			    (long long)id);
		return -EALREADY;
	}
	if (rc == SQLITE_DONE) {
		if (cause != NULL)
			*cause = xprintf("attempt row %lld: no such attempt",
			    (long long)id);
		return -ENOENT;
	}
	return store_fail(st, rc, cause, "read attempt row %lld",
	    (long long)id);
}

/*
 * Move live attempt ATTEMPT_ID to STATE (launching, pending or running)
 * at WHEN; running sets its start time once. CLOUD_ID, if not NULL, is
 * recorded. -ENOENT unknown, -EALREADY ended, -EINVAL for other states.
 */
int
store_attempt_set_state(struct store *st, int64_t attempt_id, int state,
    int64_t when, const char *cloud_id, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_ATTEMPT_SET_STATE];
	int		 rc;

	if (state < ATTEMPT_LAUNCHING || state > ATTEMPT_RUNNING)
		return store_invalid(cause, "attempt row %lld: state %s is not "
		    "set directly; end the attempt instead",
		    (long long)attempt_id, attempt_state_name(state));
	sqlite3_bind_int64(s, 1, attempt_id);
	sqlite3_bind_int(s, 2, state);
	sqlite3_bind_int64(s, 3, when);
	store_bind_text(s, 4, cloud_id);
	if ((rc = store_step_done(st, s, cause, "set attempt state")) != 0)
		return rc;
	if (sqlite3_changes(st->db) == 0)
		return store_attempt_missing(st, attempt_id, cause);
	return 0;
}

/*
 * Inside the caller's transaction: end attempt E->attempt_id (store.h,
 * store_attempt_end). *ret_job_id is its job. -EALREADY if it had ended,
 * -ENOENT if unknown; nothing written then.
 */
int
store_attempt_end_tx(struct store *st, const struct store_end *e,
    int64_t *ret_job_id, char **cause)
{
	sqlite3_stmt	*s;
	int64_t		 job_id, started;
	char		*text;
	int		 rc, number;

	if (e->reason <= END_NONE || e->reason >= END_NREASONS)
		return store_invalid(cause, "attempt row %lld: bad end "
		    "reason %d", (long long)e->attempt_id, e->reason);
	s = st->stmt[STMT_ATTEMPT_END];
	sqlite3_bind_int64(s, 1, e->attempt_id);
	sqlite3_bind_int64(s, 2, e->when);
	sqlite3_bind_int(s, 3, e->reason);
	sqlite3_bind_int(s, 4, e->exit_code);
	store_bind_text(s, 5, e->message);
	sqlite3_bind_double(s, 6, e->cost_usd);
	sqlite3_bind_int64(s, 7, e->billed_start);
	sqlite3_bind_int64(s, 8, e->billed_end);
	sqlite3_bind_double(s, 9, e->baseline_usd);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return store_attempt_missing(st, e->attempt_id, cause);
	}
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "end attempt row %lld",
		    (long long)e->attempt_id);
		sqlite3_reset(s);
		return rc;
	}
	job_id = sqlite3_column_int64(s, 0);
	number = sqlite3_column_int(s, 1);
	started = sqlite3_column_int64(s, 2);
	sqlite3_reset(s);

	s = st->stmt[STMT_JOB_ADD_END];
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_double(s, 2, e->cost_usd);
	sqlite3_bind_int(s, 3, e->reason == END_FAILED);
	sqlite3_bind_int(s, 4, attempt_end_counts(e->reason, started));
	sqlite3_bind_int(s, 5, e->exit_code);
	store_bind_text(s, 6, e->message);
	sqlite3_bind_int64(s, 7, e->when);
	sqlite3_bind_double(s, 8, e->baseline_usd);
	if ((rc = store_step_done(st, s, cause, "end attempt: job")) != 0)
		return rc;

	s = st->stmt[STMT_EVENT_ADD];
	if (e->message != NULL)
		text = xprintf("attempt %d ended: %s: %s", number,
		    attempt_end_name(e->reason), e->message);
	else
		text = xprintf("attempt %d ended: %s", number,
		    attempt_end_name(e->reason));
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, e->when);
	sqlite3_bind_text(s, 3, text, -1, SQLITE_STATIC);
	rc = store_step_done(st, s, cause, "end attempt: event");
	free(text);
	if (rc != 0)
		return rc;
	*ret_job_id = job_id;
	return 0;
}

/* End attempt E->attempt_id as E says; see store.h. */
int
store_attempt_end_with(struct store *st, const struct store_end *e,
    char **cause)
{
	int64_t	job_id;
	int	rc;

	if ((rc = store_tx_begin(st, cause, "end attempt: begin")) != 0)
		return rc;
	if ((rc = store_attempt_end_tx(st, e, &job_id, cause)) != 0 ||
	    (rc = store_tx_commit(st, cause, "end attempt: commit")) != 0) {
		store_tx_rollback(st);
		return rc;
	}
	/* As store_attempt_end(): the job's next move carries this end. */
	st->last_end.job_id = job_id;
	st->last_end.attempt_id = e->attempt_id;
	st->last_end.reason = e->reason;
	return 0;
}

/* End attempt ATTEMPT_ID; see store.h. -EALREADY if it had ended. */
int
store_attempt_end(struct store *st, int64_t attempt_id, int64_t when,
    int end_reason, int exit_code, const char *message, double cost_usd,
    char **cause)
{
	struct store_end	 e;
	int64_t			 job_id;
	int			 rc;

	memset(&e, 0, sizeof e);
	e.attempt_id = attempt_id;
	e.when = when;
	e.reason = end_reason;
	e.exit_code = exit_code;
	e.message = message;
	e.cost_usd = cost_usd;
	if (end_reason <= END_NONE || end_reason >= END_NREASONS)
		return store_invalid(cause, "attempt row %lld: bad end "
		    "reason %d", (long long)attempt_id, end_reason);
	if ((rc = store_tx_begin(st, cause, "end attempt: begin")) != 0)
		return rc;
	if ((rc = store_attempt_end_tx(st, &e, &job_id, cause)) != 0)
		goto fail;
	if ((rc = store_tx_commit(st, cause, "end attempt: commit")) != 0)
		goto fail;
	/* The job's next move is this end's consequence: it carries it. */
	st->last_end.job_id = job_id;
	st->last_end.attempt_id = attempt_id;
	st->last_end.reason = end_reason;
	return 0;

fail:
	store_tx_rollback(st);
	return rc;
}

static int
store_attempt_walk(struct store *st, sqlite3_stmt *s, store_attempt_cb cb,
    void *arg, char **cause, const char *what)
{
	struct store_attempt	a;
	int			rc, n = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_attempt_row(s, &a);
		if ((rc = cb(&a, arg)) != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "%s", what);
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return n;
}

/* Attempts of job JOB_ID by number, borrowed rows to CB. */
int
store_attempt_list(struct store *st, int64_t job_id, store_attempt_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_ATTEMPT_LIST];

	sqlite3_bind_int64(s, 1, job_id);
	return store_attempt_walk(st, s, cb, arg, cause, "list attempts");
}

/* Attempts not ended, of every job, by id; borrowed rows to CB. */
int
store_attempt_list_live(struct store *st, store_attempt_cb cb, void *arg,
    char **cause)
{
	return store_attempt_walk(st, st->stmt[STMT_ATTEMPT_LIVE], cb, arg,
	    cause, "list live attempts");
}

/* Free an attempt whose strings the caller made with malloc. NULL ok. */
void
store_attempt_free(struct store_attempt *a)
{
	if (a == NULL)
		return;
	free(a->provider);
	free(a->region);
	free(a->zone);
	free(a->machine_type);
	free(a->gpu);
	free(a->resource);
	free(a->cloud_id);
	free(a->message);
	free(a->resumed_from);
	free(a->capacity);
	free(a->reservation);
	free(a);
}

/* New copy of borrowed attempt B (free with store_attempt_free). */
struct store_attempt *
store_attempt_copy(const struct store_attempt *b)
{
	struct store_attempt	*a;

	a = xmalloc(sizeof *a);
	*a = *b;
	a->provider = store_strdup(b->provider);
	a->region = store_strdup(b->region);
	a->zone = store_strdup(b->zone);
	a->machine_type = store_strdup(b->machine_type);
	a->gpu = store_strdup(b->gpu);
	a->resource = store_strdup(b->resource);
	a->cloud_id = store_strdup(b->cloud_id);
	a->message = store_strdup(b->message);
	a->resumed_from = store_strdup(b->resumed_from);
	a->capacity = store_strdup(b->capacity);
	a->reservation = store_strdup(b->reservation);
	return a;
}

/* BASE * 2^(STRIKES - 1), capped at CAP, without overflow. */
static int64_t
store_cooldown_length(int64_t strikes, int64_t base, int64_t cap)
{
	int64_t	len = base;

	while (--strikes > 0 && len < cap)
		len = len > INT64_MAX / 2 ? INT64_MAX : len * 2;
	return len < cap ? len : cap;
}

/* Record a stockout of (ZONE, GPU, SPOT) at NOW; see store.h. */
int
store_cooldown_strike(struct store *st, const char *zone, const char *gpu,
    int spot, int64_t now, int64_t base_sec, int64_t cap_sec,
    int64_t *ret_until, char **cause)
{
	sqlite3_stmt	*s;
	int64_t		 strikes = 0, last = now, quiet, until;
	int		 rc;

	if (zone == NULL || gpu == NULL)
		return store_invalid(cause, "cool-down: zone and GPU are "
		    "needed");
	if (base_sec <= 0 || cap_sec < base_sec)
		return store_invalid(cause, "cool-down: base %llds and cap "
		    "%llds make no sense", (long long)base_sec,
		    (long long)cap_sec);
	if ((rc = store_tx_begin(st, cause, "cool-down: begin")) != 0)
		return rc;

	s = st->stmt[STMT_COOLDOWN_GET];
	sqlite3_bind_text(s, 1, zone, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, gpu, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, spot >= 0 && spot <= 3 ? spot : 0);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		strikes = sqlite3_column_int64(s, 0);
		last = sqlite3_column_int64(s, 1);
	} else if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "cool-down of %s %s", zone, gpu);
		sqlite3_reset(s);
		goto fail;
	}
	sqlite3_reset(s);

	/*
	 * A refusal while the cool-down runs is of a launch sent before it
	 * began: the same stockout, no new strike. Counting each made one
	 * pass's burst of launches into a full zone cool it for hours (the
	 * replay: a zone cooled for over two hours) while its capacity
	 * came back in ten minutes.
	 */
	if (strikes > 0 && now >= last && now < last +
	    store_cooldown_length(strikes, base_sec, cap_sec)) {
		rc = store_tx_commit(st, cause, "cool-down: commit");
		if (rc != 0)
			goto fail;
		*ret_until = last + store_cooldown_length(strikes, base_sec,
		    cap_sec);
		return 0;
	}
	quiet = now > last ? (now - last) / STORE_QUIET_SEC : 0;
	strikes = strikes > quiet ? strikes - quiet : 0;
	strikes++;
	until = now + store_cooldown_length(strikes, base_sec, cap_sec);

	s = st->stmt[STMT_COOLDOWN_PUT];
	sqlite3_bind_text(s, 1, zone, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, gpu, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, spot >= 0 && spot <= 3 ? spot : 0);
	sqlite3_bind_int64(s, 4, until);
	sqlite3_bind_int64(s, 5, strikes);
	sqlite3_bind_int64(s, 6, now);
	if ((rc = store_step_done(st, s, cause, "write cool-down")) != 0)
		goto fail;
	if ((rc = store_tx_commit(st, cause, "cool-down: commit")) != 0)
		goto fail;
	*ret_until = until;
	return 0;

fail:
	store_tx_rollback(st);
	return rc;
}

/* Cool-downs still running at NOW, to CB (strings borrowed). */
int
store_cooldown_list(struct store *st, int64_t now, store_cooldown_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_COOLDOWN_LIST];
	int		 rc, n = 0;

	sqlite3_bind_int64(s, 1, now);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		rc = cb((const char *)sqlite3_column_text(s, 0),
		    (const char *)sqlite3_column_text(s, 1),
		    sqlite3_column_int(s, 2), sqlite3_column_int64(s, 3),
		    sqlite3_column_int(s, 4), arg);
		if (rc != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "list cool-downs");
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return n;
}

/*
 * Spot history since SINCE per (provider, region, gpu, zone): hours run
 * (live attempts up to NOW) and interruptions (preempted, maintenance,
 * lost).
 */
int
store_spot_history(struct store *st, int64_t since, int64_t now,
    store_history_cb cb, void *arg, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_SPOT_HISTORY];
	int		 rc, n = 0;

	sqlite3_bind_int64(s, 1, since);
	sqlite3_bind_int64(s, 2, now);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		rc = cb((const char *)sqlite3_column_text(s, 0),
		    (const char *)sqlite3_column_text(s, 1),
		    (const char *)sqlite3_column_text(s, 2),
		    (const char *)sqlite3_column_text(s, 3),
		    sqlite3_column_double(s, 4), sqlite3_column_int(s, 5),
		    arg);
		if (rc != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "read Spot history");
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return n;
}
