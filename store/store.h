/*
 * store.h: the durable queue, one SQLite file (doc/DESIGN.md "The store").
 *
 * The store knows jobs, attempts, events, cool-downs and meta. It knows
 * nothing of sockets, the loop or the cloud: specs are JSON text to it,
 * of which it reads only accelerator.type and .count, and only when the
 * caller did not give them (struct store_job_new). Every function
 * returns 0 (or a count) on success and a negative errno on failure:
 * -ENOENT unknown id, -EBUSY database locked, -ENOSPC disk full,
 * -EALREADY state does not allow the change, -EIO otherwise; words for
 * humans go to *cause (new string, caller frees; may be NULL).
 */
#ifndef GPUQ_STORE_H
#define GPUQ_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct store;

/*
 * Job states (doc/DESIGN.md "Job states").
 *
 *   held ⇄ queued		user hold/release
 *   queued → launching	scheduler picked an offer, attempt row written
 *   launching → pending	cloud accepted the create call
 *   pending → running	reconciler saw it running
 *   running → succeeded	exit 0
 *   running → failed	user exit != 0 past max_failures, or limits hit
 *   launching|pending|running → queued   interruption or retryable error
 *   any live state → cancelling → cancelled   user cancel
 *   held|queued → cancelled	cancel with nothing in the cloud
 */
enum job_state {
	JOB_HELD = 0,
	JOB_QUEUED,
	JOB_LAUNCHING,
	JOB_PENDING,
	JOB_RUNNING,
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_CANCELLING,
	JOB_CANCELLED,
	JOB_NSTATES
};
#define JOB_MASK(s)		(1u << (s))
#define JOB_MASK_LIVE		(JOB_MASK(JOB_HELD) | JOB_MASK(JOB_QUEUED) | \
	JOB_MASK(JOB_LAUNCHING) | JOB_MASK(JOB_PENDING) | \
	JOB_MASK(JOB_RUNNING) | JOB_MASK(JOB_CANCELLING))
#define JOB_MASK_CLOUD		(JOB_MASK(JOB_LAUNCHING) | \
	JOB_MASK(JOB_PENDING) | JOB_MASK(JOB_RUNNING))
#define JOB_MASK_ALL		((1u << JOB_NSTATES) - 1)

const char	*job_state_name(int state);	/* "queued"; "?" if bad */
int		 job_state_parse(const char *);	/* -1 if unknown */

/*
 * Attempt states. One attempt = one cloud resource.
 *   launching → pending → running → ended (end_reason says why)
 */
enum attempt_state {
	ATTEMPT_LAUNCHING = 0,
	ATTEMPT_PENDING,
	ATTEMPT_RUNNING,
	ATTEMPT_ENDED,
};
const char	*attempt_state_name(int state);

/* Why an attempt ended. Interruptions do not count as failures. */
enum attempt_end {
	END_NONE = 0,
	END_SUCCEEDED,		/* exit 0 */
	END_FAILED,		/* user exit != 0 */
	END_PREEMPTED,		/* Spot preemption: interruption */
	END_MAINTENANCE,	/* host maintenance: interruption */
	END_LOST,		/* resource vanished: interruption */
	END_STOCKOUT,		/* no capacity after acceptance: interruption */
	END_LAUNCH_ERROR,	/* create call failed (quota, invalid, ...) */
	END_CANCELLED,		/* user cancel */
	END_LIMIT,		/* max_runtime or max_total_usd hit */
	END_QUOTA,		/* the service ended it for lack of quota:
				   neither a failure nor an interruption */
	END_PENDING,		/* withdrawn after pending_timeout without
				   starting: placed elsewhere, counts
				   nothing */
	END_NREASONS
};
const char	*attempt_end_name(int end);
int		 attempt_end_parse(const char *);
int		 attempt_end_is_interruption(int end);
int		 attempt_end_counts(int end, int64_t started);

/* A job as stored. Strings are owned by the struct (store_job_free). */
struct store_job {
	int64_t		 id;
	char		*name;
	int		 state;		/* enum job_state */
	int		 priority;	/* higher runs first */
	uid_t		 owner;
	char		*spec;		/* validated job spec, JSON text */
	char		*labels;	/* JSON object text or NULL */
	int64_t		 created;	/* unix seconds */
	int64_t		 updated;
	int64_t		 not_before;	/* backoff: do not schedule before */
	int		 attempts;	/* attempts made */
	int		 failures;	/* user failures counted */
	int		 interruptions;	/* preemptions, maintenance, ... */
	double		 cost_usd;	/* all ended attempts, so far */
	char		*checkpoint;	/* newest checkpoint URI or NULL */
	int64_t		 checkpoint_at;	/* its time, 0 if unknown */
	char		*why;		/* why it waits, or NULL */
	int		 exit_code;	/* last exit code, -1 if none */
	char		*message;	/* last end message, or NULL */
	char		*gpu_type;	/* spec's accelerator.type or NULL */
	int		 gpu_count;	/* its accelerator.count, 0 if none */
	int64_t		 array_id;	/* a task: its array (task 0's id);
					   0 for a plain job */
	int		 task_index;	/* a task: 0, 1, ...; else -1 */
	double		 baseline_usd;	/* ended attempts' baseline, so far */
	int		 nodes;		/* machines of a gang, 1 or more */
	int64_t		 deadline;	/* spec's deadline, unix s; 0 none */
	int		 deadline_safe;	/* sticky: no preemptible capacity
					   any more (doc/DESIGN.md
					   "Deadlines") */
};

/*
 * What submit stores: the caller fills these; the store copies them.
 * gpu_type NULL or gpu_count 0 means "read it from the spec's
 * accelerator" (SQLite's json_extract); callers that have the parsed
 * spec at hand give them and save that.
 */
struct store_job_new {
	const char	*name;
	int		 priority;
	uid_t		 owner;
	const char	*spec;		/* JSON text */
	const char	*labels;	/* JSON text or NULL */
	int		 held;		/* start in JOB_HELD */
	const char	*gpu_type;	/* accelerator.type, NULL: from spec */
	int		 gpu_count;	/* accelerator.count, 0: from spec */
	int		 task;		/* a task of an array */
	int		 task_index;	/* its index; index 0 starts an array,
					   the rows after it with index 1, 2,
					   ... are its other tasks */
	int		 nodes;		/* spec's nodes, 0: from spec */
};

struct store_attempt {
	int64_t		 id;		/* row id */
	int64_t		 job_id;
	int		 number;	/* 1, 2, ... within the job */
	int		 state;		/* enum attempt_state */
	char		*provider;	/* "gce", "batch", "vertex" */
	char		*region;
	char		*zone;		/* NULL when the service picks */
	char		*machine_type;
	char		*gpu;		/* accelerator type, Compute spelling */
	int		 gpu_count;	/* per node */
	int		 nodes;		/* machines of the gang, 1 or more;
					   node R's cloud name is derived
					   from resource (cloud.h) */
	char		*resource;	/* deterministic resource name */
	char		*cloud_id;	/* name/id the cloud gave, or NULL */
	int		 spot;		/* preemptible Spot */
	char		*capacity;	/* "standard", "spot", "flex",
					   "reserved"; NULL: from spot
					   (doc/DESIGN.md "Capacity
					   kinds") */
	double		 hourly_usd;
	int64_t		 created;	/* row written */
	int64_t		 started;	/* seen running, 0 if never */
	int64_t		 ended;		/* 0 while live */
	int		 end_reason;	/* enum attempt_end */
	int		 exit_code;	/* -1 if none */
	char		*message;	/* end detail or NULL */
	char		*resumed_from;	/* GPUQ_RESUME_FROM given, or NULL */
	double		 cost_usd;
	/*
	 * What the cloud bills (doc/DESIGN.md "Accounting"): its own start
	 * and end of the attempt, unix seconds, 0 when it gave none; and
	 * the baseline, an on-demand Vertex AI custom job of the same shape
	 * in the job's first region, per hour and for this attempt's time.
	 */
	int64_t		 billed_start;
	int64_t		 billed_end;
	double		 baseline_hourly_usd;
	double		 baseline_usd;
	/* The Compute Engine reservation the attempt consumes, or NULL
	 * (doc/DESIGN.md "Reservations"); stored, so a re-launch after a
	 * restart names it again. */
	char		*reservation;
};

struct store_event {
	int64_t		 seq;		/* 1, 2, ... within the job */
	int64_t		 job_id;
	int64_t		 time;
	int		 from_state;	/* -1 for the first event */
	int		 to_state;
	char		*message;
};

/* Filters for store_job_list. Zero values mean "any". */
struct store_filter {
	unsigned	 states;	/* JOB_MASK bits; 0 = any */
	int		 owner_set;
	uid_t		 owner;
	const char	*name;		/* exact name */
	int		 bare;		/* only what a status table shows
					   (gpuq status): spec and labels
					   NULL; priority, owner, created,
					   not_before, failures,
					   interruptions, baseline_usd 0;
					   exit_code -1 */
};

/*
 * Borrowed-row callbacks: the row is valid only during the call. Return
 * non-zero to stop the walk early (that value is returned). A callback
 * may call other store functions, writes included (rows it changes may
 * or may not come up again in the walk), but not the function whose walk
 * it is in: that walk's statement is busy.
 */
typedef int (*store_job_cb)(const struct store_job *, void *);
typedef int (*store_attempt_cb)(const struct store_attempt *, void *);
typedef int (*store_event_cb)(const struct store_event *, void *);

/*
 * A job's change of state, as the store tells its watchers after the
 * commit that made it (doc/DESIGN.md "The store"): every move of every
 * job goes through one place (store_job_move), so notifications,
 * metrics and the journal hear each exactly once, whoever caused it.
 */
struct store_move {
	int64_t		 job_id;
	int		 from;		/* enum job_state */
	int		 to;
	const char	*message;	/* the event's words, or NULL */
	int		 end;		/* enum attempt_end of the attempt
					   whose end moved the job (ended by
					   the requeue, or by the
					   store_attempt_end() just before),
					   or -1 */
	int64_t		 attempt_id;	/* that attempt's row, or 0 */
};
typedef void (*store_move_cb)(const struct store_move *, void *arg);
#define STORE_WATCHERS	6

/* Commits since store_open(), for metrics. */
struct store_commit_stats {
	unsigned long	 count;
	double		 seconds;	/* their total wall time */
	double		 max;		/* the longest */
};

/* Open or create PATH, migrate to the current schema. -EPROTO if the
 * file was written by a newer gpuqd (schema version above ours). */
int	 store_open(const char *path, struct store **ret, char **cause);
void	 store_close(struct store *);
/*
 * Check the database PATH without changing it (no creation, no
 * migration): SQLite's PRAGMA quick_check, or integrity_check if FULL.
 * 0 if it reports ok; -EBADMSG if it found damage, with *ret_report
 * (new) holding its findings, one a line, at most MAX_LINES of them
 * (0: all); -ENOENT if PATH does not exist; else -errno and *cause.
 */
int	 store_verify(const char *path, int full, int max_lines,
	    char **ret_report, char **cause);
/* Schema version this code writes (PRAGMA user_version). */
int	 store_schema_version(void);
/* Install id: 8 lowercase hex chars made at creation. Borrowed. */
const char *store_install_id(struct store *);

/*
 * Group commit: insert N jobs in ONE transaction (synchronous=FULL).
 * On success ret_ids[i] holds each id and everything is on disk; on
 * failure nothing was written. Each gets a "submitted" event.
 */
int	 store_jobs_insert(struct store *, const struct store_job_new *,
	    size_t n, int64_t *ret_ids, char **cause);

/* Fetch one job: new object, free with store_job_free. */
int	 store_job_get(struct store *, int64_t id, struct store_job **ret,
	    char **cause);
void	 store_job_free(struct store_job *);
/* New copy of a (borrowed) job row; free with store_job_free. */
struct store_job *store_job_copy(const struct store_job *);

/*
 * Keyset page: jobs with id > AFTER matching F, ascending id, at most
 * LIMIT. Calls CB per row. *ret_more is set to 1 when more rows follow.
 * Returns the number of rows given to CB.
 */
int	 store_job_list(struct store *, const struct store_filter *f,
	    int64_t after, int limit, store_job_cb cb, void *arg,
	    int *ret_more, char **cause);

/* Jobs ready to schedule (queued, not_before <= NOW), by priority desc,
 * then id asc (FIFO within a priority). */
int	 store_job_list_runnable(struct store *, int64_t now,
	    store_job_cb cb, void *arg, char **cause);
/* Queued jobs with not_before > NOW (waiting out a backoff), no order. */
int	 store_job_list_later(struct store *, int64_t now,
	    store_job_cb cb, void *arg, char **cause);
/* Every job with id > AFTER, whatever its state, by id (what was
 * submitted since the scheduler last looked). */
int	 store_job_list_after(struct store *, int64_t after,
	    store_job_cb cb, void *arg, char **cause);
/*
 * What the scheduler keeps of a queued job between passes (doc/DESIGN.md
 * "The pass"), as jobs_runnable holds it: no spec, no name. WHY (and
 * its WHY_LEN bytes) borrowed, valid only during the call.
 */
struct store_queued {
	int64_t		 id;
	int		 priority;
	int64_t		 not_before;
	int		 interruptions;
	double		 cost_usd;
	const char	*why;		/* NULL: none */
	size_t		 why_len;
};
typedef int (*store_queued_cb)(const struct store_queued *, void *);
/*
 * Every queued job, in backoff or not, by priority desc then id, from
 * the covering index alone (a few columns of each row, not its ~1 KiB
 * of spec): the scheduler's whole read of the queue. CB as for
 * store_job_cb. Returns the count.
 */
int	 store_job_list_queue(struct store *, store_queued_cb cb, void *arg,
	    char **cause);
/* 1 if another connection (not this store) committed to the file since
 * *STAMP was taken, or it cannot tell; *STAMP is brought up to date. */
int	 store_foreign_write(struct store *, int64_t *stamp);

/*
 * Move job ID to state TO if its state is in FROM_MASK; write an event
 * with MESSAGE. -ENOENT unknown, -EALREADY not in FROM_MASK (then
 * *ret_state, if given, holds the current state).
 */
int	 store_job_transition(struct store *, int64_t id, unsigned from_mask,
	    int to, const char *message, int *ret_state, char **cause);

/* Job ID's state (enum job_state) in *RET; -ENOENT if unknown. */
int	 store_job_state_get(struct store *, int64_t id, int *ret,
	    char **cause);

/* Set why a job waits (NULL clears). No event: it changes often. */
int	 store_job_set_why(struct store *, int64_t id, const char *why,
	    char **cause);
/*
 * Set why each of N jobs waits, in ONE transaction: ids[i] gets whys[i]
 * (NULL clears). For the scheduler, which may change thousands in one
 * pass. Unknown ids are skipped. Returns how many jobs changed.
 */
int	 store_jobs_set_why(struct store *, const int64_t *ids,
	    const char *const *whys, size_t n, char **cause);
/* An attempt's end, as store_job_requeue() writes it. */
struct store_end {
	int64_t		 attempt_id;
	int64_t		 when;
	int		 reason;	/* enum attempt_end */
	int		 exit_code;	/* -1 if none */
	const char	*message;	/* the cloud's words, or NULL */
	double		 cost_usd;
	int64_t		 billed_start;	/* the cloud's; 0 keeps the row's */
	int64_t		 billed_end;	/* likewise */
	double		 baseline_usd;
};

/*
 * Put job ID back in the queue, in ONE transaction: end attempt END as
 * store_attempt_end() does (END NULL, or an attempt that has already
 * ended, is left as it is), then move the job from a state in FROM_MASK
 * to queued with an event saying MESSAGE, not to run before NOT_BEFORE
 * (0: at once), waiting because WHY (NULL clears). -EALREADY when the
 * job is in no state of FROM_MASK (cancelled meanwhile): *ret_state, if
 * given, holds its state and nothing was written.
 */
int	 store_job_requeue(struct store *, int64_t id, unsigned from_mask,
	    const struct store_end *end, int64_t not_before,
	    const char *message, const char *why, int *ret_state,
	    char **cause);
/* Earliest time the scheduler may try the job again. */
int	 store_job_set_not_before(struct store *, int64_t id, int64_t when,
	    char **cause);
/*
 * Mark job ID deadline_safe (sticky; doc/DESIGN.md "Deadlines") with an
 * event saying MESSAGE, in one transaction. 0, or -EALREADY if it was
 * already marked (nothing written), -ENOENT unknown.
 */
int	 store_job_set_deadline_safe(struct store *, int64_t id,
	    const char *message, char **cause);
/*
 * Live jobs with a deadline (jobs_deadline), ascending id: CB per row.
 * Returns the number of rows given to CB.
 */
int	 store_job_list_deadline(struct store *, store_job_cb cb, void *arg,
	    char **cause);
/*
 * Jobs that succeeded or failed after their deadline (jobs_missed),
 * into *RET: gpuq_deadline_misses_total.
 */
int	 store_deadline_misses(struct store *, int64_t *ret, char **cause);
/* Newest checkpoint found for the job. */
int	 store_job_set_checkpoint(struct store *, int64_t id, const char *uri,
	    int64_t when, char **cause);

/*
 * Call CB(move, ARG) after every committed job move, in the order of
 * registration; MOVE is borrowed for the call. CB may read the store,
 * not write it. -ENOSPC past STORE_WATCHERS.
 */
int	 store_watch(struct store *, store_move_cb cb, void *arg);
/* Forget the watcher CB with ARG, if registered. */
void	 store_unwatch(struct store *, store_move_cb cb, void *arg);
/* Dollars billed over every job's ended attempts, into *RET. */
int	 store_cost_total(struct store *, double *ret, char **cause);
/* Dollars the same jobs would have cost on Vertex AI on-demand, and the
 * saving (baseline less cost over the jobs that have a baseline). */
int	 store_baseline_total(struct store *, double *ret_baseline,
	    double *ret_saved, char **cause);
/* Commit counts and times; *RET is filled. */
void	 store_commit_stats(struct store *, struct store_commit_stats *ret);

/* Counts per state, for STATUS= and gpuq status. counts[JOB_NSTATES]. */
int	 store_job_counts(struct store *, int64_t counts[JOB_NSTATES],
	    char **cause);

/* Events of a job, oldest first. */
int	 store_event_list(struct store *, int64_t job_id, store_event_cb,
	    void *, char **cause);
/* Add a free-form event without a state change (from = to = current). */
int	 store_event_add(struct store *, int64_t job_id, const char *message,
	    char **cause);

/*
 * Attempts. store_attempt_insert writes the row (state launching) and
 * bumps the job's attempt counter in one transaction, whatever the job's
 * state; it fills a->id and a->number. It records attempts as they
 * were (tests build histories and old crash states with it); a launch
 * goes through store_attempt_launch.
 */
int	 store_attempt_insert(struct store *, struct store_attempt *a,
	    char **cause);
/*
 * The same, and queued -> launching with MESSAGE, in one transaction;
 * only if NUMBER is the job's next attempt (-ESTALE) and the job is
 * queued (-EALREADY). On error nothing is written.
 */
int	 store_attempt_launch(struct store *, struct store_attempt *a,
	    int number, const char *message, char **cause);
int	 store_attempt_set_state(struct store *, int64_t attempt_id,
	    int state, int64_t when, const char *cloud_id, char **cause);
/*
 * End an attempt: sets ended, reason, exit code, message and cost, and
 * adds its cost to the job, and bumps the job's failures or
 * interruptions counter as the reason says, with the event "attempt N
 * ended: REASON[: MESSAGE]", N the attempt's number within its job. One
 * transaction.
 */
int	 store_attempt_end(struct store *, int64_t attempt_id, int64_t when,
	    int end_reason, int exit_code, const char *message,
	    double cost_usd, char **cause);
/* The cloud's own start of live attempt ATTEMPT_ID, unless one is known
 * already (BILLED_START 0 writes nothing). */
int	 store_attempt_set_billed(struct store *, int64_t attempt_id,
	    int64_t billed_start, char **cause);
/* The same from E, with what the cloud bills (struct store_end). */
int	 store_attempt_end_with(struct store *, const struct store_end *e,
	    char **cause);
int	 store_attempt_list(struct store *, int64_t job_id, store_attempt_cb,
	    void *, char **cause);
/* Attempts not ended, all jobs, by id. */
int	 store_attempt_list_live(struct store *, store_attempt_cb, void *,
	    char **cause);
/* New copy of a (borrowed) attempt row; free with store_attempt_free. */
struct store_attempt *store_attempt_copy(const struct store_attempt *);
void	 store_attempt_free(struct store_attempt *);

/*
 * Stockout cool-downs: (zone, gpu, kind) may not be tried before UNTIL;
 * the spot column holds the kind of capacity (0 standard, 1 Spot, 2
 * flex, 3 reserved: enum capacity_kind). Not tried before
 * UNTIL. store_cooldown_strike() records a stockout now and returns the
 * new until: base * 2^(strikes-1), capped, where strikes decay by one per
 * quiet hour; a stockout while the cool-down runs is no new strike (it
 * keeps the until). Kept in SQLite so they survive a restart.
 */
int	 store_cooldown_strike(struct store *, const char *zone,
	    const char *gpu, int spot, int64_t now, int64_t base_sec,
	    int64_t cap_sec, int64_t *ret_until, char **cause);
typedef int (*store_cooldown_cb)(const char *zone, const char *gpu,
	    int spot, int64_t until, int strikes, void *);
int	 store_cooldown_list(struct store *, int64_t now, store_cooldown_cb,
	    void *, char **cause);

/*
 * Preemption history for λ: running hours and interruptions per
 * (provider, region, gpu, zone) over Spot attempts that ended since
 * SINCE or are running (counted up to NOW), ordered so that the zones
 * of one (provider, region, gpu) come together. Zone "" when the
 * attempt has none; GPU "" when none.
 */
typedef int (*store_history_cb)(const char *provider, const char *region,
	    const char *zone, const char *gpu, double hours,
	    int interruptions, void *);
int	 store_spot_history(struct store *, int64_t since, int64_t now,
	    store_history_cb, void *, char **cause);

/*
 * Job arrays and dependencies (doc/DESIGN.md "Arrays and dependencies").
 * The tasks of an array are jobs rows with array_id set, task 0's id
 * being the array's, and consecutive ids (task i is row array_id + i).
 */

/* What store_job_sum() counts of a job or of an array's tasks. */
struct store_sum {
	int64_t		 tasks;		/* rows counted; 1 for a plain job */
	int64_t		 states[JOB_NSTATES];
	int64_t		 last_id;	/* highest row id among them */
	int		 array;		/* 1: ID is an array */
};

/*
 * Task INDEX of array ARRAY_ID as a new object; -ENOENT if there is no
 * such task.
 */
int	 store_task_get(struct store *, int64_t array_id, int index,
	    struct store_job **ret, char **cause);
/*
 * The states of job ID: of every task if ID is an array, else of the
 * job itself. -ENOENT when ID is neither a plain job nor an array (a
 * task's own row id is not an array). Reads the jobs_array index only.
 */
int	 store_job_sum(struct store *, int64_t id, struct store_sum *ret,
	    char **cause);
/* The cost so far of every task of ARRAY_ID, in *ret, and their
 * Vertex AI baseline in *RET_BASELINE (may be NULL). */
int	 store_array_cost(struct store *, int64_t array_id, double *ret,
	    double *ret_baseline, char **cause);
/*
 * Move every task of ARRAY_ID whose state S has TO_OF[S] >= 0 to
 * TO_OF[S], each with an event saying MESSAGE and its why set to WHY
 * (NULL clears), in ONE transaction. Then CB (may be NULL) is called
 * for each task moved, with its id, old and new state. Returns how many
 * moved.
 */
typedef void (*store_moved_cb)(int64_t id, int from, int to, void *);
int	 store_array_transition(struct store *, int64_t array_id,
	    const int to_of[JOB_NSTATES], const char *message, const char *why,
	    store_moved_cb cb, void *arg, char **cause);
/* Tasks of ARRAY_ID in index order, from index FROM on, at most LIMIT
 * (< 0: all). Returns the count given to CB. */
int	 store_task_list(struct store *, int64_t array_id, int from,
	    int limit, store_job_cb cb, void *arg, char **cause);

/*
 * Accounting (gpuq history): ended jobs that ended in [SINCE, UNTIL),
 * ordered by that time and id, each with its attempts in order.
 */
struct store_acct_filter {
	int64_t		 since;		/* 0: from the start */
	int64_t		 until;		/* 0: to now and on */
	unsigned	 states;	/* JOB_MASK bits, ended states; 0 any */
	int		 owner_set;
	uid_t		 owner;
	const char	*name;		/* exact name or NULL */
};

/* One job and one of its attempts (attempt 0: the job has none). */
struct store_acct_row {
	int64_t		 job_id;
	const char	*name;
	int		 state;
	uid_t		 owner;
	const char	*gpu_type;	/* the job's, or NULL */
	int		 gpu_count;
	int64_t		 created;
	int64_t		 ended;		/* when the job ended */
	int		 attempts;
	int		 interruptions;
	int		 failures;
	int		 exit_code;
	/* The attempt, when attempt > 0. */
	int		 attempt;
	const char	*provider;
	const char	*region;
	const char	*zone;		/* or NULL */
	int		 spot;
	const char	*capacity;	/* "flex", ...; NULL: from spot */
	int		 a_gpu_count;
	double		 hourly_usd;
	double		 baseline_hourly_usd;
	int64_t		 deadline;	/* the job's, unix s; 0 none */
	int64_t		 started;	/* gpuqd's clock, 0 never ran */
	int64_t		 a_ended;
	int64_t		 billed_start;	/* the cloud's, 0 unknown */
	int64_t		 billed_end;
	double		 cost_usd;
	double		 baseline_usd;
	int		 end_reason;
};
typedef int (*store_acct_cb)(const struct store_acct_row *, void *);

/*
 * Walk the ended jobs F selects after the key (AFTER_TIME, AFTER_ID), a
 * row per attempt (borrowed) to CB, stopping after the job at which
 * LIMIT jobs were given (0: no limit). Returns the number of jobs.
 */
int	 store_acct_list(struct store *, const struct store_acct_filter *f,
	    int64_t after_time, int64_t after_id, int limit, store_acct_cb cb,
	    void *arg, char **cause);

/* meta key/value. get: new string in *ret, -ENOENT if unset. */
int	 store_meta_get(struct store *, const char *key, char **ret,
	    char **cause);
int	 store_meta_set(struct store *, const char *key, const char *value,
	    char **cause);

#endif
