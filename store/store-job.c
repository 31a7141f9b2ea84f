/*
 * store-job.c: jobs and their events.
 *
 * Submits are group-committed: store_jobs_insert() writes a whole batch
 * in one transaction. A state change and its events row are written in
 * the same transaction, so `gpuq show` never tells half a story. Listing
 * walks keyset pages (id > after), never OFFSET. Knows nothing of specs
 * beyond "JSON text" and where its accelerator is (store.c's insert).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "store/store-int.h"

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

/* Fill J from the current row of S (STORE_JOB_COLS); strings borrowed. */
void
store_job_row(sqlite3_stmt *s, struct store_job *j)
{
	j->id = sqlite3_column_int64(s, 0);
	j->name = store_col_text(s, 1);
	j->state = sqlite3_column_int(s, 2);
	j->priority = sqlite3_column_int(s, 3);
	j->owner = (uid_t)sqlite3_column_int64(s, 4);
	j->spec = store_col_text(s, 5);
	j->labels = store_col_text(s, 6);
	j->created = sqlite3_column_int64(s, 7);
	j->updated = sqlite3_column_int64(s, 8);
	j->not_before = sqlite3_column_int64(s, 9);
	j->attempts = sqlite3_column_int(s, 10);
	j->failures = sqlite3_column_int(s, 11);
	j->interruptions = sqlite3_column_int(s, 12);
	j->cost_usd = sqlite3_column_double(s, 13);
	j->checkpoint = store_col_text(s, 14);
	j->checkpoint_at = sqlite3_column_int64(s, 15);
	j->why = store_col_text(s, 16);
	j->exit_code = sqlite3_column_int(s, 17);
	j->message = store_col_text(s, 18);
	j->gpu_type = store_col_text(s, 19);
	j->gpu_count = sqlite3_column_int(s, 20);
	j->array_id = sqlite3_column_int64(s, 21);
	j->task_index = sqlite3_column_type(s, 22) == SQLITE_NULL ? -1 :
	    sqlite3_column_int(s, 22);
	j->baseline_usd = sqlite3_column_double(s, 23);
	j->nodes = sqlite3_column_int(s, 24);
	j->deadline = sqlite3_column_int64(s, 25);
	j->deadline_safe = sqlite3_column_int(s, 26);
}

/*
 * The same from a bare listing's row (STORE_JOB_COLS_BARE): only the
 * columns that are not constants there; the rest as those constants.
 */
static void
store_job_row_bare(sqlite3_stmt *s, struct store_job *j)
{
	memset(j, 0, sizeof *j);
	j->id = sqlite3_column_int64(s, 0);
	j->name = store_col_text(s, 1);
	j->state = sqlite3_column_int(s, 2);
	j->updated = sqlite3_column_int64(s, 8);
	j->attempts = sqlite3_column_int(s, 10);
	j->cost_usd = sqlite3_column_double(s, 13);
	j->checkpoint = store_col_text(s, 14);
	j->checkpoint_at = sqlite3_column_int64(s, 15);
	j->why = store_col_text(s, 16);
	j->exit_code = -1;
	j->message = store_col_text(s, 18);
	j->gpu_type = store_col_text(s, 19);
	j->gpu_count = sqlite3_column_int(s, 20);
	j->array_id = sqlite3_column_int64(s, 21);
	/*
	 * A task's index and a deadline's margin only where a row shows
	 * them: a column call is a few percent of gpuqd's time for a list
	 * of every job, and most jobs are neither tasks nor due.
	 */
	j->task_index = j->array_id == 0 ||
	    sqlite3_column_type(s, 22) == SQLITE_NULL ? -1 :
	    sqlite3_column_int(s, 22);
	j->nodes = sqlite3_column_int(s, 24);
	j->deadline = sqlite3_column_int64(s, 25);
	if (j->deadline > 0)
		j->deadline_safe = sqlite3_column_int(s, 26);
}

/* Write one events row; the caller holds the transaction. */
int
store_event_write(struct store *st, int64_t job_id, int64_t when, int from,
    int to, const char *message, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_EVENT_INSERT];

	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, when);
	if (from < 0)
		sqlite3_bind_null(s, 3);
	else
		sqlite3_bind_int(s, 3, from);
	sqlite3_bind_int(s, 4, to);
	store_bind_text(s, 5, message);
	return store_step_done(st, s, cause, "write event");
}

#define STORE_EVENT_QUEUED	"submitted"
#define STORE_EVENT_HELD	"submitted, held"

/*
 * Insert N jobs in one transaction, each with its "submitted" event
 * (written for a held job, implied for a queued one). ret_ids[i] is
 * meaningful only when this returns 0.
 */
int
store_jobs_insert(struct store *st, const struct store_job_new *jobs,
    size_t n, int64_t *ret_ids, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_INSERT];
	sqlite3_stmt	*sa = st->stmt[STMT_JOB_SET_ARRAY];
	sqlite3_stmt	*ev = st->stmt[STMT_EVENT_FIRST];
	int64_t		 now, id, array_id = 0;
	size_t		 i;
	int		 rc, state;

	for (i = 0; i < n; i++) {
		if (jobs[i].spec == NULL)
			return store_invalid(cause, "insert jobs: job %zu of "
			    "%zu has no spec", i + 1, n);
	}
	if (n == 0)
		return 0;
	now = clock_now();
	if ((rc = store_tx_begin(st, cause, "insert jobs: begin")) != 0)
		return rc;
	for (i = 0; i < n; i++) {
		state = jobs[i].held ? JOB_HELD : JOB_QUEUED;
		store_bind_text(s, 1, jobs[i].name);
		sqlite3_bind_int(s, 2, state);
		sqlite3_bind_int(s, 3, jobs[i].priority);
		sqlite3_bind_int64(s, 4, jobs[i].owner);
		sqlite3_bind_text(s, 5, jobs[i].spec, -1, SQLITE_STATIC);
		store_bind_text(s, 6, jobs[i].labels);
		sqlite3_bind_int64(s, 7, now);
		store_bind_text(s, 8, jobs[i].gpu_type);
		sqlite3_bind_int(s, 9, jobs[i].gpu_count);
		if (jobs[i].task && jobs[i].task_index > 0 && array_id > 0) {
			sqlite3_bind_int64(s, 10, array_id);
			sqlite3_bind_int(s, 11, jobs[i].task_index);
		} else if (jobs[i].task) {
			sqlite3_bind_null(s, 10);	/* set below */
			sqlite3_bind_int(s, 11, 0);
		} else {
			sqlite3_bind_null(s, 10);
			sqlite3_bind_null(s, 11);
		}
		if (jobs[i].task && jobs[i].task_index > 0 && array_id == 0) {
			rc = store_invalid(cause, "insert jobs: task %d comes "
			    "before its task 0", jobs[i].task_index);
			goto fail;
		}
		sqlite3_bind_int(s, 12, jobs[i].nodes);
		if ((rc = store_step_done(st, s, cause, "insert job")) != 0)
			goto fail;
		id = sqlite3_last_insert_rowid(st->db);
		if (jobs[i].task && jobs[i].task_index == 0) {
			/*
			 * The array's tasks follow in this transaction, so
			 * their ids are this one plus their index
			 * (store_task_get relies on it).
			 */
			array_id = id;
			sqlite3_bind_int64(sa, 1, id);
			if ((rc = store_step_done(st, sa, cause,
			    "insert job: mark the array")) != 0)
				goto fail;
		} else if (!jobs[i].task)
			array_id = 0;
		/*
		 * A queued job's "submitted" event is implied by its row
		 * (store_event_list): one B-tree less per submit, which
		 * is a WAL page less to write and sync. A held one says
		 * so in a row of its own, since its state will change.
		 */
		if (jobs[i].held) {
			sqlite3_bind_int64(ev, 1, id);
			sqlite3_bind_int64(ev, 2, now);
			sqlite3_bind_int(ev, 3, state);
			sqlite3_bind_text(ev, 4, STORE_EVENT_HELD, -1,
			    SQLITE_STATIC);
			if ((rc = store_step_done(st, ev, cause,
			    "write event")) != 0)
				goto fail;
		}
		ret_ids[i] = id;
	}
	if ((rc = store_tx_commit(st, cause, "insert jobs: commit")) != 0)
		goto fail;
	for (i = 0; i < n; i++)
		st->counts[jobs[i].held ? JOB_HELD : JOB_QUEUED]++;
	return 0;

fail:
	store_tx_rollback(st);
	return rc;
}

/* New copy of borrowed job B (free with store_job_free). */
struct store_job *
store_job_copy(const struct store_job *b)
{
	struct store_job	*j;

	j = xmalloc(sizeof *j);
	*j = *b;
	j->name = store_strdup(b->name);
	j->spec = store_strdup(b->spec);
	j->labels = store_strdup(b->labels);
	j->checkpoint = store_strdup(b->checkpoint);
	j->why = store_strdup(b->why);
	j->message = store_strdup(b->message);
	j->gpu_type = store_strdup(b->gpu_type);
	return j;
}

/* Job ID as a new object in *ret; -ENOENT if unknown. */
int
store_job_get(struct store *st, int64_t id, struct store_job **ret,
    char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_JOB_GET];
	struct store_job	 j;
	int			 rc;

	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		store_job_row(s, &j);
		*ret = store_job_copy(&j);
		sqlite3_reset(s);
		return 0;
	}
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return -ENOENT;
	}
	rc = store_fail(st, rc, cause, "read job %lld", (long long)id);
	sqlite3_reset(s);
	return rc;
}

/* Free a job from store_job_get. Accepts NULL. */
void
store_job_free(struct store_job *j)
{
	if (j == NULL)
		return;
	free(j->name);
	free(j->spec);
	free(j->labels);
	free(j->checkpoint);
	free(j->why);
	free(j->message);
	free(j->gpu_type);
	free(j);
}

/*
 * Give each row of S to CB, at most LIMIT (< 0: all). Returns the count,
 * CB's non-zero answer, or an error. *ret_more: a row beyond LIMIT.
 */
static int
store_job_walk(struct store *st, sqlite3_stmt *s, int limit, store_job_cb cb,
    void *arg, int *ret_more, char **cause, const char *what, int bare)
{
	struct store_job	j;
	int			rc, n = 0, more = 0;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (limit >= 0 && n == limit) {
			more = 1;
			break;
		}
		if (bare)
			store_job_row_bare(s, &j);
		else
			store_job_row(s, &j);
		if ((rc = cb(&j, arg)) != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "%s", what);
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	if (ret_more != NULL)
		*ret_more = more;
	return n;
}

/* One keyset page of jobs after AFTER matching F; see store.h. */
int
store_job_list(struct store *st, const struct store_filter *f, int64_t after,
    int limit, store_job_cb cb, void *arg, int *ret_more, char **cause)
{
	sqlite3_stmt	*s;
	unsigned	 states = 0;
	int		 k = 0, kind, one = 0;

	if (limit <= 0)
		return store_invalid(cause, "list: limit must be positive, "
		    "not %d", limit);
	if (f != NULL)
		states = f->states & JOB_MASK_ALL;
	if (states == 0 || states == JOB_MASK_ALL)
		kind = STORE_LIST_ANY;
	else if ((states & ~JOB_MASK_LIVE) == 0)
		kind = STORE_LIST_LIVE;
	else if ((states & (states - 1)) == 0) {
		kind = STORE_LIST_ONE;
		while (!(states & JOB_MASK(one)))
			one++;
	} else
		kind = STORE_LIST_MASK;
	k = STORE_LIST_KIND(kind);
	if (f != NULL && f->owner_set)
		k |= STORE_LIST_OWNER;
	if (f != NULL && f->name != NULL)
		k |= STORE_LIST_NAME;

	s = f != NULL && f->bare ? st->list_bare[k] : st->list[k];
	sqlite3_bind_int64(s, 1, after);
	sqlite3_bind_int(s, 2, limit + 1);
	if (kind == STORE_LIST_LIVE || kind == STORE_LIST_MASK)
		sqlite3_bind_int(s, 4, (int)states);
	if (kind == STORE_LIST_ONE)
		sqlite3_bind_int(s, 5, one);
	if (k & STORE_LIST_OWNER)
		sqlite3_bind_int64(s, 6, f->owner);
	if (k & STORE_LIST_NAME)
		sqlite3_bind_text(s, 7, f->name, -1, SQLITE_STATIC);
	return store_job_walk(st, s, limit, cb, arg, ret_more, cause,
	    "list jobs", f != NULL && f->bare);
}

static int	store_data_version(struct store *, int64_t *, char **);

/* Queued jobs with not_before > NOW (in backoff), in no order. */
int
store_job_list_later(struct store *st, int64_t now, store_job_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_QUEUED_LATER];

	sqlite3_bind_int64(s, 1, now);
	return store_job_walk(st, s, -1, cb, arg, NULL, cause,
	    "list jobs in backoff", 0);
}

/* Every job with id > AFTER, in any state, ascending id. */
int
store_job_list_after(struct store *st, int64_t after, store_job_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_AFTER];

	sqlite3_bind_int64(s, 1, after);
	return store_job_walk(st, s, -1, cb, arg, NULL, cause,
	    "list new jobs", 0);
}

/* Has another connection written the file since *STAMP? */
int
store_foreign_write(struct store *st, int64_t *stamp)
{
	int64_t	dv = 0;

	if (store_data_version(st, &dv, NULL) != 0)
		return 1;
	if (dv == *stamp)
		return 0;
	*stamp = dv;
	return 1;
}

/* Read job ID's state inside the caller's transaction. */
static int
store_job_state(struct store *st, int64_t id, int *ret, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_STATE];
	int		 rc;

	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int(s, 0);
		sqlite3_reset(s);
		return 0;
	}
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		if (cause != NULL)
			*cause = xprintf("job %lld: no such job", (long long)id);
		return -ENOENT;
	}
	rc = store_fail(st, rc, cause, "read job %lld", (long long)id);
	sqlite3_reset(s);
	return rc;
}

/* Move job ID from a state in FROM_MASK to TO, with an event; store.h. */
int
store_job_transition(struct store *st, int64_t id, unsigned from_mask,
    int to, const char *message, int *ret_state, char **cause)
{
	int64_t		 now;
	int		 rc, cur = -1;

	if (to < 0 || to >= JOB_NSTATES)
		return store_invalid(cause, "job %lld: bad state %d",
		    (long long)id, to);
	now = clock_now();
	if ((rc = store_tx_begin(st, cause, "change job state: begin")) != 0)
		return rc;
	if ((rc = store_job_move(st, id, from_mask, to, now, message, &cur,
	    cause)) != 0) {
		store_tx_rollback(st);
		if (rc == -EALREADY && ret_state != NULL)
			*ret_state = cur;
		return rc;
	}
	if ((rc = store_tx_commit(st, cause, "change job state: commit")) != 0) {
		store_tx_rollback(st);
		return rc;
	}
	st->counts[cur]--;
	st->counts[to]++;
	if (ret_state != NULL)
		*ret_state = to;
	store_moved(st);
	return 0;
}

/*
 * Inside the caller's transaction: move job ID from a state in FROM_MASK
 * to TO with its events row. *ret_from is the state it was in (also on
 * -EALREADY, when that state is not in FROM_MASK). The caller commits
 * and then counts the move.
 */
int
store_job_move(struct store *st, int64_t id, unsigned from_mask, int to,
    int64_t now, const char *message, int *ret_from, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_SET_STATE];
	int		 rc, cur = -1;

	if ((rc = store_job_state(st, id, &cur, cause)) != 0)
		return rc;
	*ret_from = cur;
	if (!(from_mask & JOB_MASK(cur))) {
		if (cause != NULL)
			*cause = xprintf("job %lld is %s, cannot become %s",
			    (long long)id, job_state_name(cur),
			    job_state_name(to));
		return -EALREADY;
	}
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, to);
	sqlite3_bind_int64(s, 3, now);
	sqlite3_bind_int(s, 4, cur);
	if ((rc = store_step_done(st, s, cause, "change job state")) != 0)
		return rc;
	if ((rc = store_event_write(st, id, now, cur, to, message,
	    cause)) != 0)
		return rc;
	/* Told to the watchers by store_moved() after the commit. */
	free(st->pend_message);
	st->pend_message = message != NULL ? xstrdup(message) : NULL;
	st->pend.job_id = id;
	st->pend.from = cur;
	st->pend.to = to;
	st->pend.end = -1;
	st->pend.attempt_id = 0;
	if (st->last_end.job_id == id) {
		/* An attempt ended just before (attempt.c ends it, then
		 * moves the job): that end is why the job moves. */
		st->pend.end = st->last_end.reason;
		st->pend.attempt_id = st->last_end.attempt_id;
	}
	st->last_end.job_id = 0;
	st->pending = 1;
	return 0;
}

/* Step an UPDATE of job ID: 0, -ENOENT if no such job, or an error. */
static int
store_job_update(struct store *st, sqlite3_stmt *s, int64_t id, char **cause,
    const char *what)
{
	int	rc;

	if ((rc = store_step_done(st, s, cause, what)) != 0)
		return rc;
	if (sqlite3_changes(st->db) == 0) {
		if (cause != NULL)
			*cause = xprintf("job %lld: no such job", (long long)id);
		return -ENOENT;
	}
	return 0;
}

/* Set why job ID waits; NULL clears. */
int
store_job_set_why(struct store *st, int64_t id, const char *why,
    char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_SET_WHY];

	sqlite3_bind_int64(s, 1, id);
	store_bind_text(s, 2, why);
	return store_job_update(st, s, id, cause, "set why a job waits");
}

/* Set why N jobs wait in one transaction; store.h. */
int
store_jobs_set_why(struct store *st, const int64_t *ids,
    const char *const *whys, size_t n, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_SET_WHY];
	size_t		 i;
	int		 rc, changed = 0;

	if (n == 0)
		return 0;
	if ((rc = store_tx_begin(st, cause, "set why jobs wait: begin")) != 0)
		return rc;
	for (i = 0; i < n; i++) {
		sqlite3_bind_int64(s, 1, ids[i]);
		store_bind_text(s, 2, whys[i]);
		if ((rc = store_step_done(st, s, cause,
		    "set why a job waits")) != 0) {
			store_tx_rollback(st);
			return rc;
		}
		changed += sqlite3_changes(st->db) > 0;
	}
	if ((rc = store_tx_commit(st, cause,
	    "set why jobs wait: commit")) != 0) {
		store_tx_rollback(st);
		return rc;
	}
	return changed;
}

/* Requeue job ID, ending attempt END first, in one transaction; store.h. */
int
store_job_requeue(struct store *st, int64_t id, unsigned from_mask,
    const struct store_end *end, int64_t not_before, const char *message,
    const char *why, int *ret_state, char **cause)
{
	sqlite3_stmt	*s;
	int64_t		 job_id = 0, now = clock_now();
	char		*why_not = NULL;
	int		 rc, cur = -1;

	if ((rc = store_tx_begin(st, cause, "requeue job: begin")) != 0)
		return rc;
	/* Checked first, so a job cancelled meanwhile gets nothing. */
	if ((rc = store_job_state(st, id, &cur, cause)) != 0)
		goto fail;
	if (!(from_mask & JOB_MASK(cur))) {
		if (cause != NULL)
			*cause = xprintf("job %lld is %s, cannot be queued "
			    "again", (long long)id, job_state_name(cur));
		if (ret_state != NULL)
			*ret_state = cur;
		rc = -EALREADY;
		goto fail;
	}
	if (end != NULL) {
		/* An attempt that has already ended is left as it is. */
		rc = store_attempt_end_tx(st, end, &job_id, &why_not);
		if (rc == 0 && job_id != id)
			rc = store_invalid(&why_not, "attempt row %lld is "
			    "not job %lld's", (long long)end->attempt_id,
			    (long long)id);
		if (rc != 0 && rc != -EALREADY) {
			if (cause != NULL)
				*cause = why_not;
			else
				free(why_not);
			goto fail;
		}
		free(why_not);
	}
	s = st->stmt[STMT_JOB_SET_NOT_BEFORE];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, not_before);
	if ((rc = store_step_done(st, s, cause, "requeue job: backoff")) != 0)
		goto fail;
	s = st->stmt[STMT_JOB_SET_WHY];
	sqlite3_bind_int64(s, 1, id);
	store_bind_text(s, 2, why);
	if ((rc = store_step_done(st, s, cause, "requeue job: why")) != 0)
		goto fail;
	if ((rc = store_job_move(st, id, from_mask, JOB_QUEUED, now, message,
	    &cur, cause)) != 0)
		goto fail;
	if (end != NULL) {
		st->pend.end = end->reason;
		st->pend.attempt_id = end->attempt_id;
	}
	if ((rc = store_tx_commit(st, cause, "requeue job: commit")) != 0)
		goto fail;
	st->counts[cur]--;
	st->counts[JOB_QUEUED]++;
	if (ret_state != NULL)
		*ret_state = JOB_QUEUED;
	store_moved(st);
	return 0;

fail:
	store_tx_rollback(st);
	return rc;
}

/* Do not schedule job ID before WHEN. */
int
store_job_set_not_before(struct store *st, int64_t id, int64_t when,
    char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_SET_NOT_BEFORE];

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, when);
	return store_job_update(st, s, id, cause, "set job backoff");
}

/* Record URI (NULL clears) as job ID's newest checkpoint, made at WHEN. */
int
store_job_set_checkpoint(struct store *st, int64_t id, const char *uri,
    int64_t when, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_SET_CHECKPOINT];

	sqlite3_bind_int64(s, 1, id);
	store_bind_text(s, 2, uri);
	sqlite3_bind_int64(s, 3, when);
	return store_job_update(st, s, id, cause, "set job checkpoint");
}

/* PRAGMA data_version: changes when another connection commits. */
static int
store_data_version(struct store *st, int64_t *ret, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_DATA_VERSION];
	int		 rc;

	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "read data version");
		sqlite3_reset(s);
		return rc;
	}
	*ret = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return 0;
}

/*
 * Number of jobs in each state, into COUNTS. Served from counts our own
 * writes keep; recounted (one index walk) only when another connection
 * wrote the file.
 */
int
store_job_counts(struct store *st, int64_t counts[JOB_NSTATES],
    char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_JOB_COUNTS];
	int64_t		 c[JOB_NSTATES], dv = 0;
	int		 rc, state;

	if ((rc = store_data_version(st, &dv, cause)) != 0)
		return rc;
	if (st->counts_valid && dv == st->data_version) {
		memcpy(counts, st->counts, sizeof st->counts);
		return 0;
	}
	memset(c, 0, sizeof c);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		state = sqlite3_column_int(s, 0);
		if (state >= 0 && state < JOB_NSTATES)
			c[state] = sqlite3_column_int64(s, 1);
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "count jobs");
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	memcpy(st->counts, c, sizeof c);
	st->counts_valid = 1;
	st->data_version = dv;
	memcpy(counts, c, sizeof c);
	return 0;
}

/* Events of job JOB_ID, oldest first, as borrowed rows to CB. */
/*
 * The "submitted" event of a job queued at submit, which has no row:
 * seq 1 at the job's creation, to queued (store_jobs_insert). 1 if the
 * job exists and it was given to CB, 0 if there is no such job, or
 * SQLite's error; *ret_cb is what CB returned (0 if not called).
 */
static int
store_event_submitted(struct store *st, int64_t job_id, store_event_cb cb,
    void *arg, int *ret_cb, char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_EVENT_SUBMITTED];
	struct store_event	 e;
	int			 rc;

	sqlite3_bind_int64(s, 1, job_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "list events of job %lld",
		    (long long)job_id);
		sqlite3_reset(s);
		return rc;
	}
	memset(&e, 0, sizeof e);
	e.seq = 1;
	e.job_id = job_id;
	e.time = sqlite3_column_int64(s, 0);
	e.from_state = -1;
	e.to_state = JOB_QUEUED;
	e.message = (char *)STORE_EVENT_QUEUED;
	sqlite3_reset(s);
	*ret_cb = cb(&e, arg);
	return 1;
}

int
store_event_list(struct store *st, int64_t job_id, store_event_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_EVENT_LIST];
	struct store_event	 e;
	int			 rc, cbrc = 0, n = 0;

	sqlite3_bind_int64(s, 1, job_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		e.seq = sqlite3_column_int64(s, 0);
		/* No row for seq 1: the job was queued at submit. */
		if (n == 0 && e.seq != 1) {
			rc = store_event_submitted(st, job_id, cb, arg, &cbrc,
			    cause);
			if (rc < 0 || cbrc != 0) {
				sqlite3_reset(s);
				return rc < 0 ? rc : cbrc;
			}
			n += rc;
		}
		e.job_id = sqlite3_column_int64(s, 1);
		e.time = sqlite3_column_int64(s, 2);
		if (sqlite3_column_type(s, 3) == SQLITE_NULL)
			e.from_state = -1;
		else
			e.from_state = sqlite3_column_int(s, 3);
		e.to_state = sqlite3_column_int(s, 4);
		e.message = store_col_text(s, 5);
		if ((rc = cb(&e, arg)) != 0) {
			sqlite3_reset(s);
			return rc;
		}
		n++;
	}
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "list events of job %lld",
		    (long long)job_id);
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	if (n == 0) {
		rc = store_event_submitted(st, job_id, cb, arg, &cbrc, cause);
		return rc < 0 || cbrc == 0 ? rc : cbrc;
	}
	return n;
}

/* Add event MESSAGE to job JOB_ID without changing its state. */
int
store_event_add(struct store *st, int64_t job_id, const char *message,
    char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_EVENT_ADD];

	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_int64(s, 2, clock_now());
	store_bind_text(s, 3, message);
	return store_job_update(st, s, job_id, cause, "add event");
}

/*
 * One aggregate for metrics, run at most once per scrape: prepared on
 * each call rather than kept with the statements every write uses.
 */
int
store_cost_total(struct store *st, double *ret, char **cause)
{
	sqlite3_stmt	*s = NULL;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "SELECT total(cost_usd) FROM jobs",
	    -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "sum the costs");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return store_fail(st, rc, cause, "sum the costs");
	}
	*ret = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	return 0;
}

/*
 * The on-demand baseline over every job, and the saving: baseline less
 * cost over the jobs that have a baseline (a job without one, priced
 * nowhere on Vertex AI, saves nothing rather than all its cost; as gpuq
 * history's saved_usd). One aggregate per scrape, like store_cost_total.
 */
int
store_baseline_total(struct store *st, double *ret_baseline,
    double *ret_saved, char **cause)
{
	sqlite3_stmt	*s = NULL;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "SELECT total(baseline_usd),"
	    " total(CASE WHEN baseline_usd > 0 THEN baseline_usd - cost_usd"
	    " ELSE 0 END) FROM jobs", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "sum the baselines");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return store_fail(st, rc, cause, "sum the baselines");
	}
	*ret_baseline = sqlite3_column_double(s, 0);
	*ret_saved = sqlite3_column_double(s, 1);
	sqlite3_finalize(s);
	return 0;
}
