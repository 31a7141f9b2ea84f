/*
 * store-int.h: what the store's own files share, and nothing else may use
 * (tests/unit/test-store.c excepted, to check query plans).
 *
 * struct store holds the one connection and every prepared statement.
 * Statements are prepared once in store_open() and reused with
 * sqlite3_reset(); each user resets its statement before returning, so no
 * read transaction stays open to block WAL checkpoints.
 */
#ifndef GPUQ_STORE_INT_H
#define GPUQ_STORE_INT_H

#include <sqlite3.h>

#include "store/store.h"

/*
 * The live job states, as SQL text. Part of the on-disk format of
 * schemas 2 to 7 (the partial index jobs_live was built with it, and a
 * query could only use that index when it repeated this exact text);
 * the migrations still write it. store_open() checks it against
 * JOB_MASK_LIVE.
 */
#define STORE_LIVE_SQL		"0,1,2,3,4,7"

/*
 * The live and the ended job states as SQL conditions on column C. Part
 * of the on-disk format since schema 8: the partial indexes jobs_live
 * (until 14), jobs_ended and jobs_history are built with them, and a query can only
 * use one of those when it repeats this exact text. Comparisons, not
 * "IN (" STORE_LIVE_SQL ")": SQLite fills a temporary B-tree with an IN
 * list of more than two constants each time a statement runs, and a
 * statement that writes a job row evaluates every partial index's
 * condition — three such trees per submitted job, about half of what
 * SQLite spent on a submit. store_open() checks both against
 * JOB_MASK_LIVE.
 */
#define STORE_LIVE_WHERE(c)	"(" c " < 5 OR " c " = 7)"
#define STORE_ENDED_WHERE(c)	"(" c " > 4 AND " c " <> 7)"

/*
 * The live states but queued (1), jobs_others' condition since schema
 * 14: the live jobs are jobs_runnable's (state = 1) and these. Two
 * terms, each of which a query must repeat to use the index.
 */
#define STORE_OTHERS_WHERE(c)	"(" c " <> 1 AND " STORE_LIVE_WHERE(c) ")"

/* Job columns in the order store_job_row() reads them. */
#define STORE_JOB_COLS							\
	"id, name, state, priority, owner, spec, labels, created, "	\
	"updated, not_before, attempts, failures, interruptions, "	\
	"cost_usd, checkpoint, checkpoint_at, why, exit_code, "		\
	"message, gpu_type, gpu_count, array_id, task_index, "		\
	"baseline_usd, nodes, deadline, deadline_safe"

/*
 * The same for store_filter's bare: what a status table shows, the rest
 * constants (each column read is work for every row of a whole queue).
 */
#define STORE_JOB_COLS_BARE						\
	"id, name, state, 0, 0, NULL, NULL, 0, "			\
	"updated, 0, attempts, 0, 0, "					\
	"cost_usd, checkpoint, checkpoint_at, why, -1, "		\
	"message, gpu_type, gpu_count, array_id, task_index, "		\
	"0, nodes, deadline, deadline_safe"

/* Attempt columns in the order store_attempt_row() reads them. */
#define STORE_ATTEMPT_COLS						\
	"id, job_id, number, state, provider, region, zone, "		\
	"machine_type, gpu, gpu_count, resource, cloud_id, spot, "	\
	"hourly_usd, created, started, ended, end_reason, exit_code, "	\
	"message, resumed_from, cost_usd, billed_start, billed_end, "	\
	"baseline_hourly_usd, baseline_usd, nodes, capacity, reservation"

/* Every fixed statement; the SQL for each is store_sql[] in store.c. */
enum store_stmt {
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_META_GET,
	STMT_META_SET,
	STMT_JOB_INSERT,
	STMT_JOB_SET_ARRAY,
	STMT_JOB_GET,
	STMT_JOB_STATE,
	STMT_JOB_SET_STATE,
	STMT_JOB_RUNNABLE,
	STMT_JOB_SET_WHY,
	STMT_JOB_SET_NOT_BEFORE,
	STMT_JOB_SET_CHECKPOINT,
	STMT_JOB_COUNTS,
	STMT_DATA_VERSION,
	STMT_JOB_BUMP_ATTEMPTS,
	STMT_JOB_ADD_END,
	STMT_EVENT_INSERT,
	STMT_EVENT_ADD,
	STMT_EVENT_LIST,
	STMT_ATTEMPT_INSERT,
	STMT_ATTEMPT_GET_STATE,
	STMT_ATTEMPT_SET_STATE,
	STMT_ATTEMPT_END,
	STMT_ATTEMPT_LIST,
	STMT_ATTEMPT_LIVE,
	STMT_ATTEMPT_SET_BILLED,
	STMT_HISTORY,
	STMT_COOLDOWN_GET,
	STMT_COOLDOWN_PUT,
	STMT_COOLDOWN_LIST,
	STMT_SPOT_HISTORY,
	STMT_EVENT_FIRST,
	STMT_EVENT_SUBMITTED,
	STMT_JOB_QUEUED_LATER,
	STMT_JOB_AFTER,
	STMT_JOB_QUEUE,
	STMT_JOB_RUNNABLE_ONE,
	STMT_JOB_LIST_DEADLINE,
	STMT_COUNT
};

/*
 * store_job_list() variants: bit 0 owner filter, bit 1 name filter, bits
 * 2-3 the state filter kind below. All prepared at open.
 */
enum {
	STORE_LIST_ANY = 0,	/* no state filter: primary key walk */
	STORE_LIST_LIVE,	/* subset of the live states: jobs_runnable
				   and jobs_others merged */
	STORE_LIST_ONE,		/* one ended state: jobs_ended index */
	STORE_LIST_MASK,	/* any other mask: primary key walk, filtered */
};
#define STORE_LIST_OWNER	0x1
#define STORE_LIST_NAME		0x2
#define STORE_LIST_KIND(k)	((k) << 2)
#define STORE_LIST_COUNT	16

struct store {
	sqlite3		*db;
	char		*path;
	char		 install_id[9];
	sqlite3_stmt	*stmt[STMT_COUNT];
	sqlite3_stmt	*list[STORE_LIST_COUNT];
	sqlite3_stmt	*list_bare[STORE_LIST_COUNT];	/* spec, labels NULL */

	/*
	 * Jobs per state, kept by our own writes so STATUS= costs nothing.
	 * Recounted when another connection changed the file (data_version)
	 * or when counts_valid is 0.
	 */
	int64_t		 counts[JOB_NSTATES];
	int		 counts_valid;
	int64_t		 data_version;

	/*
	 * Watchers of job moves (store_watch), and the move the open
	 * transaction made: store_job_move() notes it, store_moved()
	 * tells the watchers once the commit is back.
	 */
	struct {
		store_move_cb	 cb;
		void		*arg;
	}		 watch[STORE_WATCHERS];
	int		 nwatch;
	struct store_move pend;
	char		*pend_message;	/* pend.message's copy */
	int		 pending;
	struct {			/* the last store_attempt_end() */
		int64_t	 job_id;	/* 0: none since the job's move */
		int64_t	 attempt_id;
		int	 reason;
	}		 last_end;

	/* Commits and the time they took (store_tx_commit). */
	struct store_commit_stats commits;
};

/* Bring the schema to store_schema_version() (store-schema.c). */
int	store_schema_migrate(struct store *, char **cause);

/* The one place SQLite codes become errnos (STYLE.md "Errors"). */
int	store_fail(struct store *, int rc, char **cause, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* Return -EINVAL with a cause. */
int	store_invalid(char **cause, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. Rollback is safe to over-call. */
int	store_tx_begin(struct store *, char **cause, const char *what);
int	store_tx_commit(struct store *, char **cause, const char *what);
void	store_tx_rollback(struct store *);

/* Run a statement that returns no row; 0 or store_fail(). Resets it. */
int	store_step_done(struct store *, sqlite3_stmt *, char **cause,
	    const char *what);

/* Bind text or NULL. */
int	store_bind_text(sqlite3_stmt *, int, const char *);

/* After a commit: tell the watchers of the move it carried, if any. */
void	store_moved(struct store *);

/* Borrowed rows: the strings point into S until its next step/reset. */
void	store_job_row(sqlite3_stmt *s, struct store_job *);
void	store_attempt_row(sqlite3_stmt *s, struct store_attempt *);

/* Move a job between states; the caller holds the transaction. */
int	store_job_move(struct store *, int64_t id, unsigned from_mask, int to,
	    int64_t now, const char *message, int *ret_from, char **cause);
/* End an attempt (store_attempt_end) in the caller's transaction. */
int	store_attempt_end_tx(struct store *, const struct store_end *,
	    int64_t *ret_job_id, char **cause);
/* Write one events row (from -1 = none). Caller holds the transaction. */
int	store_event_write(struct store *, int64_t job_id, int64_t when,
	    int from, int to, const char *message, char **cause);

#endif
