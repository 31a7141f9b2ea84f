/*
 * store.c: opening and closing the store, its prepared statements, the
 * error helper, transactions and meta.
 *
 * One SQLite connection, WAL, synchronous=FULL (a COMMIT that returned is
 * on disk), foreign keys on, a busy timeout. Every statement is prepared
 * here once and reused. Knows nothing of the loop, the wire or the cloud.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store-int.h"

#define STORE_BUSY_MS	5000

/* The fixed statements. Numbers are enum values from store.h. */
static const char *const store_sql[STMT_COUNT] = {
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	[STMT_META_GET] = "SELECT value FROM meta WHERE key = ?1",
	[STMT_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
	    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",

	/*
	 * ?8 NULL or ?9 0: take the accelerator from the spec. Each JSON
	 * read parses the whole spec (twice with json_valid), so it runs
	 * only when the spec names the member: most jobs have no deadline,
	 * and every submit parsed its spec twice to find none. (The stored
	 * spec is normalized, compact JSON: a member's name is in it as
	 * "name"; a value that holds the word only costs the parse.)
	 */
	[STMT_JOB_INSERT] = "INSERT INTO jobs (name, state, priority, owner,"
	    " spec, labels, created, updated, gpu_type, gpu_count, array_id,"
	    " task_index, nodes, deadline)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, coalesce(?8,"
	    " CASE WHEN instr(?5, '\"accelerator\"') > 0 AND json_valid(?5)"
	    " THEN json_extract(?5, '$.accelerator.type') END),"
	    " CASE WHEN ?9 > 0 THEN ?9 WHEN instr(?5, '\"accelerator\"') > 0"
	    " AND json_valid(?5)"
	    " THEN coalesce(json_extract(?5, '$.accelerator.count'), 0)"
	    " ELSE 0 END, ?10, ?11,"
	    " CASE WHEN ?12 > 0 THEN ?12 WHEN json_valid(?5)"
	    " THEN coalesce(json_extract(?5, '$.nodes'), 1) ELSE 1 END,"
	    " CASE WHEN instr(?5, '\"deadline\"') > 0 AND json_valid(?5)"
	    " THEN coalesce(CAST(strftime('%s',"
	    " json_extract(?5, '$.deadline')) AS INTEGER), 0) ELSE 0 END)",
	/* Task 0 of an array: its own id is the array's. */
	[STMT_JOB_SET_ARRAY] = "UPDATE jobs SET array_id = id WHERE id = ?1",
	[STMT_JOB_GET] = "SELECT " STORE_JOB_COLS " FROM jobs WHERE id = ?1",
	[STMT_JOB_STATE] = "SELECT state FROM jobs WHERE id = ?1",
	[STMT_JOB_SET_STATE] = "UPDATE jobs SET state = ?2, updated = ?3"
	    " WHERE id = ?1 AND state = ?4",
	/*
	 * Runnable jobs (state = 1 is JOB_QUEUED) by id, of priority ?2 or
	 * any (NULL): store-queue.c walks it once per priority, highest
	 * first. Backoff and priority are tested on the index entry, before
	 * the row is read.
	 */
	[STMT_JOB_RUNNABLE] = "SELECT " STORE_JOB_COLS
	    " FROM jobs INDEXED BY jobs_runnable WHERE state = 1"
	    " AND not_before <= ?1 AND (?2 IS NULL OR priority = ?2)"
	    " ORDER BY id",
	[STMT_JOB_SET_WHY] = "UPDATE jobs SET why = ?2 WHERE id = ?1",
	[STMT_JOB_SET_NOT_BEFORE] = "UPDATE jobs SET not_before = ?2"
	    " WHERE id = ?1",
	[STMT_JOB_SET_CHECKPOINT] = "UPDATE jobs SET checkpoint = ?2,"
	    " checkpoint_at = ?3 WHERE id = ?1",
	/* Each third reads only its partial index. */
	[STMT_JOB_COUNTS] = "SELECT state, count(*) FROM jobs"
	    " INDEXED BY jobs_ended WHERE " STORE_ENDED_WHERE("state")
	    " GROUP BY state UNION ALL SELECT state, count(*) FROM jobs"
	    " INDEXED BY jobs_others WHERE " STORE_OTHERS_WHERE("state")
	    " GROUP BY state UNION ALL SELECT 1, count(*) FROM jobs"
	    " INDEXED BY jobs_runnable WHERE state = 1",
	[STMT_DATA_VERSION] = "PRAGMA data_version",
	[STMT_JOB_BUMP_ATTEMPTS] = "UPDATE jobs SET attempts = attempts + 1,"
	    " updated = ?2 WHERE id = ?1 RETURNING attempts",
	[STMT_JOB_ADD_END] = "UPDATE jobs SET cost_usd = cost_usd + ?2,"
	    " failures = failures + ?3, interruptions = interruptions + ?4,"
	    " exit_code = ?5, message = ?6, updated = ?7,"
	    " baseline_usd = baseline_usd + ?8 WHERE id = ?1",

	/*
	 * seq: the job's next event number (max over its key prefix). A
	 * scalar subquery in VALUES, not INSERT ... SELECT FROM events:
	 * reading the table it writes makes SQLite copy the rows to a
	 * temporary B-tree first, which was an eighth of gpuqd's time
	 * under pipelined submits.
	 */
	/*
	 * seq 1 is the "submitted" event, which a queued submit implies
	 * rather than writes (store_event_list): later events start at 2.
	 */
	[STMT_EVENT_INSERT] = "INSERT INTO events (job_id, seq, time,"
	    " from_state, to_state, message) VALUES (?1, (SELECT"
	    " coalesce(max(seq), 1) + 1 FROM events WHERE job_id = ?1),"
	    " ?2, ?3, ?4, ?5)",
	[STMT_EVENT_ADD] = "INSERT INTO events (job_id, seq, time,"
	    " from_state, to_state, message) SELECT id, (SELECT"
	    " coalesce(max(seq), 1) + 1 FROM events WHERE job_id = ?1),"
	    " ?2, state, state, ?3 FROM jobs WHERE id = ?1",
	[STMT_EVENT_LIST] = "SELECT seq, job_id, time, from_state, to_state,"
	    " message FROM events WHERE job_id = ?1 ORDER BY seq",

	[STMT_ATTEMPT_INSERT] = "INSERT INTO attempts (job_id, number, state,"
	    " provider, region, zone, machine_type, gpu, gpu_count, resource,"
	    " cloud_id, spot, hourly_usd, created, resumed_from,"
	    " baseline_hourly_usd, nodes, capacity, reservation) VALUES (?1,"
	    " ?2, 0, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	    " ?15, ?16, ?17, ?18)",
	[STMT_ATTEMPT_GET_STATE] = "SELECT state FROM attempts WHERE id = ?1",
	/* 2 is ATTEMPT_RUNNING: the first time it is seen running. */
	[STMT_ATTEMPT_SET_STATE] = "UPDATE attempts SET state = ?2,"
	    " started = CASE WHEN ?2 = 2 AND started = 0 THEN ?3"
	    " ELSE started END, cloud_id = coalesce(?4, cloud_id)"
	    " WHERE id = ?1 AND ended IS NULL",
	/* 3 is ATTEMPT_ENDED. */
	[STMT_ATTEMPT_END] = "UPDATE attempts SET state = 3, ended = ?2,"
	    " end_reason = ?3, exit_code = ?4, message = ?5, cost_usd = ?6,"
	    " billed_start = CASE WHEN ?7 > 0 THEN ?7 ELSE billed_start END,"
	    " billed_end = CASE WHEN ?8 > 0 THEN ?8 ELSE billed_end END,"
	    " baseline_usd = ?9"
	    " WHERE id = ?1 AND ended IS NULL RETURNING job_id, number, started",
	[STMT_ATTEMPT_LIST] = "SELECT " STORE_ATTEMPT_COLS " FROM attempts"
	    " WHERE job_id = ?1 ORDER BY number",
	[STMT_ATTEMPT_LIVE] = "SELECT " STORE_ATTEMPT_COLS " FROM attempts"
	    " INDEXED BY attempts_live WHERE ended IS NULL ORDER BY id",
	/* The cloud's start of a live attempt, once. */
	[STMT_ATTEMPT_SET_BILLED] = "UPDATE attempts SET billed_start = ?2"
	    " WHERE id = ?1 AND ended IS NULL AND billed_start = 0",
	/*
	 * Ended jobs that ended in [?1, ?2), by that time, after the key
	 * (?3, ?4), each with its attempts in order (a job without any
	 * comes once with NULL attempt columns); ?5 owner, ?6 name, ?7 a
	 * mask of states, each NULL or 0 for any. Walks jobs_history: the
	 * cost is the rows it returns, not the ended jobs kept.
	 */
	[STMT_HISTORY] = "SELECT j.id, j.name, j.state, j.owner,"
	    " j.gpu_type, j.gpu_count, j.created, j.updated, j.attempts,"
	    " j.interruptions, j.failures, j.exit_code, a.number, a.provider,"
	    " a.region, a.zone, a.spot, a.hourly_usd, a.started, a.ended,"
	    " a.billed_start, a.billed_end, a.cost_usd, a.baseline_usd,"
	    " a.end_reason, a.gpu_count, a.baseline_hourly_usd, j.deadline,"
	    " a.capacity"
	    " FROM jobs AS j INDEXED BY jobs_history"
	    " LEFT JOIN attempts AS a ON a.job_id = j.id"
	    " WHERE " STORE_ENDED_WHERE("j.state")
	    " AND j.updated >= ?1 AND j.updated < ?2"
	    " AND (j.updated, j.id) > (?3, ?4)"
	    " AND (?5 IS NULL OR j.owner = ?5)"
	    " AND (?6 IS NULL OR j.name = ?6)"
	    " AND (coalesce(?7, 0) = 0 OR (1 << j.state) & ?7 != 0)"
	    " ORDER BY j.updated, j.id, a.number",

	[STMT_COOLDOWN_GET] = "SELECT strikes, last_strike FROM cooldowns"
	    " WHERE zone = ?1 AND gpu = ?2 AND spot = ?3",
	[STMT_COOLDOWN_PUT] = "INSERT INTO cooldowns (zone, gpu, spot, until,"
	    " strikes, last_strike) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT (zone, gpu, spot) DO UPDATE SET"
	    " until = excluded.until, strikes = excluded.strikes,"
	    " last_strike = excluded.last_strike",
	[STMT_COOLDOWN_LIST] = "SELECT zone, gpu, spot, until, strikes"
	    " FROM cooldowns WHERE until > ?1 ORDER BY zone, gpu, spot",
	/*
	 * Running hours count only attempts that were seen running; 3, 4
	 * and 5 are END_PREEMPTED, END_MAINTENANCE and END_LOST.
	 */
	/* Live attempts count up to ?2 (now): leaving them out counted
	 * every short preempted run and none of the long runs still going,
	 * so a zone that keeps its VMs looked as bad as one that does not
	 * (doc/DESIGN.md "Expected cost"). */
	[STMT_SPOT_HISTORY] = "SELECT provider, region, z, g, total(h) / 3600.0,"
	    " total(i) FROM (SELECT provider, region, coalesce(zone, '') AS z,"
	    " coalesce(gpu, '') AS g, CASE WHEN started > 0 AND"
	    " ended > started THEN ended - started ELSE 0 END AS h,"
	    " end_reason IN (3, 4, 5) AS i"
	    " FROM attempts INDEXED BY attempts_spot"
	    " WHERE spot = 1 AND ended >= ?1"
	    " UNION ALL SELECT provider, region, coalesce(zone, ''),"
	    " coalesce(gpu, ''), max(?2 - started, 0), 0"
	    " FROM attempts INDEXED BY attempts_live"
	    " WHERE ended IS NULL AND spot = 1 AND started > 0)"
	    " GROUP BY provider, region, g, z ORDER BY provider, region, g, z",
	/* A new job's "submitted" event: its first, seq 1 (no search). */
	[STMT_EVENT_FIRST] = "INSERT INTO events (job_id, seq, time,"
	    " from_state, to_state, message) VALUES (?1, 1, ?2, NULL, ?3, ?4)",
	/* The implied "submitted" event's time (store_event_list). */
	[STMT_EVENT_SUBMITTED] = "SELECT created FROM jobs WHERE id = ?1",
	/* The scheduler's runnable set (doc/DESIGN.md "The pass"): queued
	 * jobs in backoff, and every job submitted since it last looked. */
	[STMT_JOB_QUEUED_LATER] = "SELECT " STORE_JOB_COLS
	    " FROM jobs INDEXED BY jobs_runnable"
	    " WHERE state = 1 AND not_before > ?1",
	[STMT_JOB_AFTER] = "SELECT " STORE_JOB_COLS
	    " FROM jobs WHERE id > ?1 ORDER BY id",
	/*
	 * The whole queue from jobs_runnable alone, in its own order (by
	 * id); store-queue.c sorts by priority.
	 */
	[STMT_JOB_QUEUE] = "SELECT id, priority, not_before, interruptions,"
	    " cost_usd, why FROM jobs INDEXED BY jobs_runnable"
	    " WHERE state = 1 ORDER BY id",
	/*
	 * A runnable job by id, for store_job_list_runnable() with many
	 * priorities: its own statement, as a callback may read a job
	 * with STMT_JOB_GET meanwhile.
	 */
	[STMT_JOB_RUNNABLE_ONE] = "SELECT " STORE_JOB_COLS
	    " FROM jobs WHERE id = ?1",
	/*
	 * The live jobs with a deadline, read by every scheduling pass
	 * (sched-deadline.c): prepared once, not per pass, so a pass with
	 * nothing to do does not compile SQL (issue 18).
	 */
	[STMT_JOB_LIST_DEADLINE] = "SELECT " STORE_JOB_COLS
	    " FROM jobs INDEXED BY jobs_deadline WHERE deadline > 0"
	    " AND " STORE_LIVE_WHERE("state") " ORDER BY id",
};

/* Map SQLite code RC to a negative errno, with "WHAT: sqlite says". */
/*
 * Did an I/O error come from the file-size limit? SQLite reports a
 * write refused with EFBIG as SQLITE_IOERR_WRITE, and its system errno
 * is not always kept: so ERRNO (as the failed call left it), SQLite's,
 * or the database or its WAL having reached RLIMIT_FSIZE all say yes.
 */
static int
store_efbig(struct store *st, int errno_then)
{
	struct rlimit	 rl;
	struct stat	 sb;
	char		*wal;
	int		 full = 0;

	if (errno_then == EFBIG || (st->db != NULL &&
	    sqlite3_system_errno(st->db) == EFBIG))
		return 1;
	if (getrlimit(RLIMIT_FSIZE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if (st->path == NULL)
		return 0;
	if (stat(st->path, &sb) == 0 && (rlim_t)sb.st_size + 65536 >=
	    rl.rlim_cur)
		full = 1;
	wal = xprintf("%s-wal", st->path);
	if (stat(wal, &sb) == 0 && (rlim_t)sb.st_size + 65536 >= rl.rlim_cur)
		full = 1;
	free(wal);
	return full;
}

int
store_fail(struct store *st, int rc, char **cause, const char *fmt, ...)
{
	const char	*msg;
	char		*what;
	va_list		 ap;
	int		 err, sys, e0 = errno;	/* the failed call's */

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		err = -EBUSY;
		break;
	case SQLITE_FULL:
		err = -ENOSPC;
		break;
	case SQLITE_IOERR:
		/*
		 * A file-size limit (RLIMIT_FSIZE, with SIGXFSZ ignored):
		 * the same as a full disk for whoever asked.
		 */
		err = store_efbig(st, e0) ? -ENOSPC : -EIO;
		break;
	case SQLITE_NOMEM:
		err = -ENOMEM;
		break;
	case SQLITE_CANTOPEN:
		sys = st->db != NULL ? sqlite3_system_errno(st->db) : 0;
		err = sys > 0 ? -sys : -EIO;
		break;
	default:
		err = -EIO;
		break;
	}
	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) == -1)
		fatal("store_fail: vasprintf");
	va_end(ap);
	if (err == -ENOSPC && (rc & 0xff) == SQLITE_IOERR)
		msg = "database or disk is full (a file-size limit was "
		    "reached: EFBIG; see LimitFSIZE= or ulimit -f)";
	else if (st->db != NULL && sqlite3_extended_errcode(st->db) == rc)
		msg = sqlite3_errmsg(st->db);
	else
		msg = sqlite3_errstr(rc);
	log_debug("store: %s: %s (%d)", what, msg, rc);
	if (cause != NULL)
		*cause = xprintf("%s: %s", what, msg);
	free(what);
	return err;
}

/* -EINVAL and a cause. */
int
store_invalid(char **cause, const char *fmt, ...)
{
	va_list	ap;

	if (cause != NULL) {
		va_start(ap, fmt);
		if (vasprintf(cause, fmt, ap) == -1)
			fatal("store_invalid: vasprintf");
		va_end(ap);
	}
	return -EINVAL;
}

/* Bind S or NULL to parameter I. */
int
store_bind_text(sqlite3_stmt *s, int i, const char *text)
{
	if (text == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
}

/* Step S expecting no row; resets S. 0 or store_fail(). */
int
store_step_done(struct store *st, sqlite3_stmt *s, char **cause,
    const char *what)
{
	int	rc;

	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "%s", what);
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	return 0;
}

/* Start a write transaction now (takes the write lock or waits). */
int
store_tx_begin(struct store *st, char **cause, const char *what)
{
	return store_step_done(st, st->stmt[STMT_BEGIN], cause, what);
}

/* Commit; with synchronous=FULL the data is on disk when this returns 0. */
int
store_tx_commit(struct store *st, char **cause, const char *what)
{
	struct timespec	t0, t1;
	double		dt;
	int		rc;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = store_step_done(st, st->stmt[STMT_COMMIT], cause, what);
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	st->commits.count++;
	st->commits.seconds += dt;
	if (dt > st->commits.max)
		st->commits.max = dt;
	if (rc != 0) {
		st->counts_valid = 0;	/* an I/O error leaves doubt */
		st->pending = 0;	/* the move did not happen */
	}
	return rc;
}

int
store_watch(struct store *st, store_move_cb cb, void *arg)
{
	if (st->nwatch >= STORE_WATCHERS)
		return -ENOSPC;
	st->watch[st->nwatch].cb = cb;
	st->watch[st->nwatch].arg = arg;
	st->nwatch++;
	return 0;
}

/* Stop calling CB(…, ARG) (a watcher that goes before the store). */
void
store_unwatch(struct store *st, store_move_cb cb, void *arg)
{
	int	i;

	for (i = 0; i < st->nwatch; i++)
		if (st->watch[i].cb == cb && st->watch[i].arg == arg) {
			memmove(&st->watch[i], &st->watch[i + 1],
			    (size_t)(st->nwatch - i - 1) *
			    sizeof st->watch[0]);
			st->nwatch--;
			return;
		}
}

void
store_moved(struct store *st)
{
	struct store_move	m;
	char			*msg;
	int			 i;

	if (!st->pending)
		return;
	/* A watcher may read the store, which may note nothing new. */
	m = st->pend;
	msg = st->pend_message;
	st->pend_message = NULL;
	st->pending = 0;
	m.message = msg;
	for (i = 0; i < st->nwatch; i++)
		st->watch[i].cb(&m, st->watch[i].arg);
	free(msg);
}

void
store_commit_stats(struct store *st, struct store_commit_stats *ret)
{
	*ret = st->commits;
}

/* Roll back the open transaction, if any. */
void
store_tx_rollback(struct store *st)
{
	sqlite3_stmt	*s = st->stmt[STMT_ROLLBACK];

	st->pending = 0;		/* the noted move is undone */
	if (sqlite3_get_autocommit(st->db))
		return;
	(void)sqlite3_step(s);
	sqlite3_reset(s);
}

/* Run a one-row PRAGMA and check its text answer. */
static int
store_pragma(struct store *st, const char *sql, const char *want,
    char **cause)
{
	sqlite3_stmt	*s;
	const char	*got;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "open %s: %s", st->path, sql);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "open %s: %s", st->path, sql);
		sqlite3_finalize(s);
		return rc;
	}
	if (want != NULL) {
		got = rc == SQLITE_ROW ?
		    (const char *)sqlite3_column_text(s, 0) : NULL;
		if (got == NULL || strcasecmp(got, want) != 0) {
			if (cause != NULL)
				*cause = xprintf("open %s: %s gave \"%s\", "
				    "wanted \"%s\"", st->path, sql,
				    got != NULL ? got : "", want);
			sqlite3_finalize(s);
			return -EIO;
		}
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * The live jobs of variant K in id order, as the arms of a UNION ALL:
 * the queued ones from jobs_runnable, the others from jobs_others
 * (schema 14: a queued submit writes only the first). MASK: K has a
 * state mask (?4); the queued arm tests it once, not per row (a term
 * without a column is evaluated before the walk). WHO: the owner or
 * name terms.
 */
static char *
store_list_sql_live(const char *cols, int mask, const char *who)
{
	return xprintf("SELECT %s FROM jobs INDEXED BY jobs_runnable"
	    " WHERE id > ?1 AND state = 1%s%s"
	    " UNION ALL SELECT %s FROM jobs INDEXED BY jobs_others"
	    " WHERE id > ?1 AND " STORE_OTHERS_WHERE("state") "%s%s",
	    cols, mask ? " AND ?4 & 2" : "", who, cols,
	    mask ? " AND (?4 >> state) & 1" : "", who);
}

/*
 * Variant K (any states, or a mix, by owner or name) of store_list_sql:
 * jobs_owner and jobs_name hold only ended jobs (schema 12, so a submit
 * writes neither), so the live ones come from jobs_runnable and
 * jobs_others. All three walks are in id order and SQLite merges them,
 * with no temporary B-tree.
 */
static char *
store_list_sql_merge(int k, int bare)
{
	const char	*cols, *mask, *idx, *who;
	char		*live, *sql;

	cols = bare ? STORE_JOB_COLS_BARE : STORE_JOB_COLS;
	mask = (k >> 2) == STORE_LIST_MASK ? " AND (?4 >> state) & 1" : "";
	idx = (k & STORE_LIST_NAME) ? "jobs_name" : "jobs_owner";
	who = (k & STORE_LIST_OWNER) && (k & STORE_LIST_NAME) ?
	    " AND owner = ?6 AND name = ?7" : (k & STORE_LIST_NAME) ?
	    " AND name = ?7" : " AND owner = ?6";
	live = store_list_sql_live(cols, *mask != '\0', who);
	sql = xprintf("%s UNION ALL SELECT %s FROM jobs INDEXED BY %s"
	    " WHERE id > ?1 AND " STORE_ENDED_WHERE("state") "%s%s"
	    " ORDER BY 1 LIMIT ?2", live, cols, idx, mask, who);
	free(live);
	return sql;
}

/* The SQL of store_job_list() variant K (see store-int.h); BARE: no
 * spec or labels. */
static char *
store_list_sql(int k, int bare)
{
	const char	*states, *from, *owner, *name;
	char		*live, *sql, *who;

	/*
	 * Without a live-state filter, an owner or name filter walks its own
	 * index (ended jobs) and the live ones in id order; with one, the
	 * live indexes alone.
	 */
	from = "jobs";
	if (((k >> 2) == STORE_LIST_ANY || (k >> 2) == STORE_LIST_MASK) &&
	    (k & (STORE_LIST_NAME | STORE_LIST_OWNER)))
		return store_list_sql_merge(k, bare);
	owner = (k & STORE_LIST_OWNER) ? " AND owner = ?6" : "";
	name = (k & STORE_LIST_NAME) ? " AND name = ?7" : "";
	switch (k >> 2) {
	case STORE_LIST_LIVE:
		who = xprintf("%s%s", owner, name);
		live = store_list_sql_live(bare ? STORE_JOB_COLS_BARE :
		    STORE_JOB_COLS, 1, who);
		sql = xprintf("%s ORDER BY 1 LIMIT ?2", live);
		free(live);
		free(who);
		return sql;
	case STORE_LIST_ONE:
		from = "jobs INDEXED BY jobs_ended";
		states = " AND " STORE_ENDED_WHERE("state")
		    " AND state = ?5";
		break;
	case STORE_LIST_MASK:
		states = " AND (?4 >> state) & 1";
		break;
	default:
		states = "";
		break;
	}
	return xprintf("SELECT %s FROM %s WHERE id > ?1%s%s%s"
	    " ORDER BY id LIMIT ?2", bare ? STORE_JOB_COLS_BARE :
	    STORE_JOB_COLS, from, states, owner, name);
}

static int
store_prepare(struct store *st, char **cause)
{
	char	*sql;
	int	 i, rc;

	for (i = 0; i < STMT_COUNT; i++) {
		if (store_sql[i] == NULL)
			fatalx("store: statement %d has no SQL", i);
		rc = sqlite3_prepare_v3(st->db, store_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmt[i], NULL);
		if (rc != SQLITE_OK)
			return store_fail(st, rc, cause, "prepare \"%s\"",
			    store_sql[i]);
	}
	for (i = 0; i < 2 * STORE_LIST_COUNT; i++) {
		sql = store_list_sql(i % STORE_LIST_COUNT,
		    i >= STORE_LIST_COUNT);
		rc = sqlite3_prepare_v3(st->db, sql, -1,
		    SQLITE_PREPARE_PERSISTENT, i >= STORE_LIST_COUNT ?
		    &st->list_bare[i - STORE_LIST_COUNT] : &st->list[i],
		    NULL);
		if (rc != SQLITE_OK) {
			rc = store_fail(st, rc, cause, "prepare \"%s\"", sql);
			free(sql);
			return rc;
		}
		free(sql);
	}
	return 0;
}

/* Check STORE_LIVE_SQL names exactly the states of JOB_MASK_LIVE. */
static void
store_check_live(void)
{
	const char	*p = STORE_LIVE_SQL;
	unsigned	 mask = 0;
	char		*end;
	long		 v;

	while (*p != '\0') {
		v = strtol(p, &end, 10);
		mask |= JOB_MASK(v);
		p = *end == ',' ? end + 1 : end;
	}
	if (mask != JOB_MASK_LIVE)
		fatalx("store: STORE_LIVE_SQL does not match JOB_MASK_LIVE");
}

/*
 * Check STORE_LIVE_WHERE holds for exactly the states of JOB_MASK_LIVE,
 * STORE_ENDED_WHERE for exactly the others and STORE_OTHERS_WHERE for
 * the live ones but queued, as SQLite reads them. (The SQL writes
 * queued as 1, and its mask as 2.)
 */
_Static_assert(JOB_QUEUED == 1, "the store's SQL writes JOB_QUEUED as 1");

static int
store_check_where(struct store *st, char **cause)
{
	sqlite3_stmt	*s;
	int		 rc, state, live;

	rc = sqlite3_prepare_v2(st->db, "SELECT " STORE_LIVE_WHERE("?1") ", "
	    STORE_ENDED_WHERE("?1") ", " STORE_OTHERS_WHERE("?1"), -1, &s,
	    NULL);
	if (rc != SQLITE_OK)
		return store_fail(st, rc, cause, "check the live states");
	for (state = 0; state < JOB_NSTATES; state++) {
		sqlite3_bind_int(s, 1, state);
		if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
			rc = store_fail(st, rc, cause, "check the live states");
			sqlite3_finalize(s);
			return rc;
		}
		live = (JOB_MASK_LIVE & JOB_MASK(state)) != 0;
		if (sqlite3_column_int(s, 0) != live ||
		    sqlite3_column_int(s, 1) != !live ||
		    sqlite3_column_int(s, 2) != (live && state != JOB_QUEUED))
			fatalx("store: STORE_LIVE_WHERE, STORE_ENDED_WHERE or "
			    "STORE_OTHERS_WHERE does not match JOB_MASK_LIVE "
			    "at state %d", state);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return 0;
}

/* Read or make the install id (8 lowercase hex chars, from getrandom). */
static int
store_install_init(struct store *st, char **cause)
{
	unsigned char	 b[4];
	char		*id = NULL;
	int		 rc;

	if ((rc = store_tx_begin(st, cause, "begin install id")) != 0)
		return rc;
	rc = store_meta_get(st, "install_id", &id, cause);
	if (rc == -ENOENT) {
		if (getrandom(b, sizeof b, 0) != sizeof b) {
			store_tx_rollback(st);
			if (cause != NULL)
				*cause = xprintf("make install id: getrandom: "
				    "%s", strerror(errno));
			return -EIO;
		}
		id = xprintf("%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
		rc = store_meta_set(st, "install_id", id, cause);
	}
	if (rc == 0)
		rc = store_tx_commit(st, cause, "commit install id");
	if (rc != 0) {
		store_tx_rollback(st);
		free(id);
		return rc;
	}
	if (strlen(id) != 8 || strspn(id, "0123456789abcdef") != 8) {
		if (cause != NULL)
			*cause = xprintf("%s: install id \"%s\" is not 8 "
			    "lowercase hex characters", st->path, id);
		free(id);
		return -EIO;
	}
	memcpy(st->install_id, id, sizeof st->install_id);
	free(id);
	return 0;
}

/*
 * Open or create PATH and migrate it. -EPROTO if it was written by a newer
 * gpuqd; -EBUSY if it stays locked past the busy timeout.
 */
int
store_open(const char *path, struct store **ret, char **cause)
{
	struct store	*st;
	int		 rc, fd;

	store_check_live();
	/*
	 * No memory statistics: with them every allocation SQLite makes
	 * takes a global mutex to count itself, and nothing here reads
	 * them. Only possible before SQLite initializes (the first open of
	 * the process); later calls fail harmlessly.
	 */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	st = xcalloc(1, sizeof *st);
	st->path = xstrdup(path);
	/*
	 * Specs may hold secrets in their environment: make a new file
	 * private before SQLite creates it (its -wal and -shm files copy
	 * the database's mode).
	 */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("open %s: %s", path, strerror(-rc));
		goto fail;
	}
	close(fd);
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = store_fail(st, rc, cause, "open %s", path);
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_MS);

	if ((rc = store_check_where(st, cause)) != 0)
		goto fail;
	if ((rc = store_pragma(st, "PRAGMA journal_mode = WAL", "wal",
	    cause)) != 0)
		goto fail;
	if ((rc = store_pragma(st, "PRAGMA synchronous = FULL", NULL,
	    cause)) != 0)
		goto fail;
	/* Migrations may rebuild tables others point at: keys off. */
	if ((rc = store_pragma(st, "PRAGMA foreign_keys = OFF", NULL,
	    cause)) != 0)
		goto fail;
	if ((rc = store_schema_migrate(st, cause)) != 0)
		goto fail;
	if ((rc = store_pragma(st, "PRAGMA foreign_keys = ON", NULL,
	    cause)) != 0)
		goto fail;
	if ((rc = store_prepare(st, cause)) != 0)
		goto fail;
	if ((rc = store_install_init(st, cause)) != 0)
		goto fail;
	log_debug("store: opened %s, schema %d, install %s", path,
	    store_schema_version(), st->install_id);
	*ret = st;
	return 0;

fail:
	store_close(st);
	return rc;
}

int
store_verify(const char *path, int full, int max_lines, char **ret_report,
    char **cause)
{
	struct store	 st;
	sqlite3_stmt	*s = NULL;
	const char	*text;
	char		*report = NULL, *t;
	int		 rc, n = 0, ok = 0;

	memset(&st, 0, sizeof st);
	st.path = (char *)path;
	if (access(path, F_OK) == -1) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = sqlite3_open_v2(path, &st.db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(st.db, full ? "PRAGMA integrity_check" :
		    "PRAGMA quick_check", -1, &s, NULL);
	if (rc != SQLITE_OK) {
		rc = (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) ==
		    SQLITE_NOTADB ? -EBADMSG : store_fail(&st, rc, cause,
		    "check %s", path);
		if (rc == -EBADMSG)
			report = xstrdup(st.db != NULL ? sqlite3_errmsg(st.db) :
			    sqlite3_errstr(rc));
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		text = (const char *)sqlite3_column_text(s, 0);
		if (text == NULL)
			continue;
		if (strcmp(text, "ok") == 0) {
			ok = 1;
			continue;
		}
		if (max_lines > 0 && n >= max_lines)
			continue;
		t = xprintf("%s%s%s", report ? report : "", report ? "\n" : "",
		    text);
		free(report);
		report = t;
		n++;
	}
	if (rc != SQLITE_DONE) {
		/* The check itself may stop on damage. */
		if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) ==
		    SQLITE_NOTADB) {
			t = xprintf("%s%s%s", report ? report : "",
			    report ? "\n" : "", sqlite3_errmsg(st.db));
			free(report);
			report = t;
			rc = -EBADMSG;
		} else
			rc = store_fail(&st, rc, cause, "check %s", path);
		goto out;
	}
	rc = ok && report == NULL ? 0 : -EBADMSG;
	if (rc == -EBADMSG && report == NULL)
		report = xstrdup("the check reported nothing but \"ok\" was "
		    "missing");
out:
	sqlite3_finalize(s);
	if (st.db != NULL)
		(void)sqlite3_close(st.db);
	if (rc == -EBADMSG && ret_report != NULL)
		*ret_report = report;
	else
		free(report);
	return rc;
}

/* Finalize every statement and close. Accepts NULL. */
void
store_close(struct store *st)
{
	int	i;

	if (st == NULL)
		return;
	free(st->pend_message);
	for (i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	for (i = 0; i < STORE_LIST_COUNT; i++) {
		sqlite3_finalize(st->list[i]);
		sqlite3_finalize(st->list_bare[i]);
	}
	if (st->db != NULL) {
		if (st->stmt[0] != NULL)
			(void)sqlite3_exec(st->db, "PRAGMA optimize", NULL,
			    NULL, NULL);
		if (sqlite3_close(st->db) != SQLITE_OK)
			log_debug("store: close %s: %s", st->path,
			    sqlite3_errmsg(st->db));
	}
	free(st->path);
	free(st);
}

/* Install id, borrowed from ST. */
const char *
store_install_id(struct store *st)
{
	return st->install_id;
}

/* Value of meta KEY: new string in *ret, -ENOENT if unset. */
int
store_meta_get(struct store *st, const char *key, char **ret, char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_META_GET];
	const char	*v;
	int		 rc;

	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		rc = store_fail(st, rc, cause, "read meta \"%s\"", key);
		sqlite3_reset(s);
		return rc;
	}
	v = (const char *)sqlite3_column_text(s, 0);
	*ret = xstrdup(v != NULL ? v : "");
	sqlite3_reset(s);
	return 0;
}

/* Set meta KEY to VALUE. */
int
store_meta_set(struct store *st, const char *key, const char *value,
    char **cause)
{
	sqlite3_stmt	*s = st->stmt[STMT_META_SET];

	if (key == NULL || value == NULL)
		return store_invalid(cause, "meta: key and value are needed");
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
	return store_step_done(st, s, cause, "write meta");
}
