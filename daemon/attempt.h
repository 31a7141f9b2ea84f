/*
 * attempt.h: the owner of every live attempt and of what happens after
 * the cloud answers (issue 11; OpenSMTPD's queue.c owns a message's fate
 * the same way).
 *
 * Who owns what:
 *
 *   sched.c	decides WHERE: ranks the offers, reserves the quota and
 *		calls attempt_launch() with the chosen place;
 *   reconcile.c	OBSERVES: polls each (provider, region) once a cycle
 *		and hands every listed resource to attempt_seen(), every
 *		complete listing to attempt_unseen(), every stranger with
 *		our label to attempt_orphan();
 *   attempt.c	DECIDES what a launch result or an observation means,
 *		with ONE table of legal changes (attempt_rules[] below),
 *		and writes the store: the attempt's end, the job's move,
 *		its backoff and why (store_job_requeue(): one commit).
 *
 * The arrows point daemon (sched, reconcile, gpuqd) -> attempt -> store
 * and cloud; attempt.c includes neither sched.h nor reconcile.h. What
 * the scheduler must hear (wake up, a job's launch memory) goes through
 * struct attempt_listener, which the scheduler registers.
 */
#ifndef GPUQ_ATTEMPT_H
#define GPUQ_ATTEMPT_H

#include <stdint.h>

#include <jansson.h>

struct attempts;
struct cloud;
struct prov_observed;
struct provider;
struct store_attempt;
struct store_job;

/*
 * What an attempt's news means. Each has one row in attempt_rules[]:
 * the job states it applies from, the state it moves the job to, what
 * it counts, whether the job waits before its next try.
 */
enum attempt_outcome {
	ATTEMPT_OUT_ACCEPTED = 0,	/* create call accepted, or existed */
	ATTEMPT_OUT_ADOPTED,		/* a crash survivor listed pending */
	ATTEMPT_OUT_RUNNING,
	ATTEMPT_OUT_SUCCEEDED,
	ATTEMPT_OUT_FAILED,		/* exit != 0, within max_failures */
	ATTEMPT_OUT_FAILED_LAST,	/* exit != 0 past max_failures */
	ATTEMPT_OUT_PREEMPTED,		/* interruptions, within */
	ATTEMPT_OUT_MAINTENANCE,	/*   max_interruptions */
	ATTEMPT_OUT_STOCKOUT,
	ATTEMPT_OUT_LOST,		/* lost, cloud error, gone */
	ATTEMPT_OUT_INTERRUPTED_LAST,	/* past max_interruptions */
	ATTEMPT_OUT_QUOTA,		/* the service ended it: no quota */
	ATTEMPT_OUT_LAUNCH_QUOTA,	/* create refused: quota */
	ATTEMPT_OUT_LAUNCH_STOCKOUT,	/* create refused: no capacity */
	ATTEMPT_OUT_LAUNCH_TRANSIENT,	/* 5xx, 429, network */
	ATTEMPT_OUT_LAUNCH_PLACE,	/* refused naming the place */
	ATTEMPT_OUT_LAUNCH_INVALID,	/* refused: will not fix itself */
	ATTEMPT_OUT_CANCELLED,
	ATTEMPT_OUT_LIMIT,		/* max_runtime, max_total_usd */
	ATTEMPT_OUT_PENDING,		/* queued in the cloud longer than
					   pending_timeout: withdrawn */
	ATTEMPT_OUT_MOVED,		/* withdrawn by attempt_move(): a
					   deadline job leaves Spot */
	ATTEMPT_OUT_COUNT
};

enum attempt_counts {
	ATTEMPT_COUNTS_NONE = 0,
	ATTEMPT_COUNTS_FAILURE,		/* against max_failures */
	ATTEMPT_COUNTS_INTERRUPTION,	/* against max_interruptions */
};

enum attempt_wait {
	ATTEMPT_WAIT_NONE = 0,		/* may run again at once */
	ATTEMPT_WAIT_BACKOFF,		/* attempt_backoff() of the count */
	ATTEMPT_WAIT_QUOTA,		/* a short pause, quota re-read */
};

enum attempt_avoid {
	ATTEMPT_AVOID_NONE = 0,
	ATTEMPT_AVOID_QUOTA_TTL,	/* provider+region, [scheduler]
					   quota_ttl */
	ATTEMPT_AVOID_HOUR,		/* provider+region, an hour */
	ATTEMPT_AVOID_PENDING,		/* provider+region, the job's
					   pending_timeout */
};

/* One row of the table of legal changes. */
struct attempt_rule {
	const char	*name;
	int		 end;		/* enum attempt_end the attempt ends
					   with; END_NONE: it lives on */
	unsigned	 from;		/* JOB_MASK of states it applies to */
	int		 to;		/* enum job_state */
	int		 counts;	/* enum attempt_counts */
	int		 over;		/* outcome once the count is past its
					   limit; -1: none */
	int		 wait;		/* enum attempt_wait */
	int		 avoid;		/* enum attempt_avoid */
	int		 cooldown;	/* strikes a stockout cool-down */
	int		 requota;	/* re-read the region's quota */
};

/* The row of OUTCOME; NULL if out of range. */
const struct attempt_rule *attempt_rule(int outcome);

/*
 * What the scheduler hears; every pointer may be NULL. ARG is given
 * back. The calls come from the loop, some from inside attempt_launch().
 */
struct attempt_listener {
	void	*arg;
	/* Run a pass soon; no later than WHEN (unix seconds). */
	void	(*wake)(void *arg);
	void	(*wake_at)(void *arg, int64_t when);
	/* A Spot attempt ended: re-learn λ. */
	void	(*history_changed)(void *arg);
	/* JOB_ID's launch was accepted: forget its launch memory. */
	void	(*launched)(void *arg, int64_t job_id);
	/* JOB_ID's launch was refused; IN_A_ROW: it counts in the
	 * job's errors in a row. Returns that count before this one. */
	int	(*launch_failed)(void *arg, int64_t job_id, int in_a_row);
	/* Keep JOB_ID off provider P in REGION until UNTIL. */
	void	(*avoid)(void *arg, int64_t job_id, const struct provider *p,
		    const char *region, int64_t until);
	/* Keep JOB_ID off capacity KIND (enum capacity_kind) of provider
	 * P in REGION until UNTIL: a flex-start request not fulfilled
	 * (doc/DESIGN.md "Capacity kinds"). NULL: avoid() instead. */
	void	(*avoid_kind)(void *arg, int64_t job_id,
		    const struct provider *p, const char *region, int kind,
		    int64_t until);
	/* Try ZONES ("z1,z2") first for JOB_ID until UNTIL. */
	void	(*prefer)(void *arg, int64_t job_id, const char *zones,
		    int64_t until);
	/* JOB_ID's why is now WHY (written with its requeue). */
	void	(*why)(void *arg, int64_t job_id, const char *why);
};

/* The quota a launch holds, reserved by the scheduler (quota.h). */
struct attempt_hold {
	int		 svc;		/* enum gcp_service */
	const char	*metric;	/* GPU metric */
	const char	*cpu_metric;	/* vCPU metric, or NULL */
	int		 vcpus;
};

/* Counters for tests, benchmarks and logs. */
struct attempt_stats {
	unsigned long	 launches;	/* create calls made */
	unsigned long	 relaunches;	/* launching attempts re-launched */
	unsigned long	 duplicates;	/* second resources of one attempt
					   deleted */
	unsigned long	 ended;		/* attempts ended */
	unsigned long	 orphans;	/* orphans cancelled */
	unsigned long	 checkpoint_lists; /* storage listings made */
	int		 live;		/* live attempts now */
};

/* New owner over CLOUD (borrowed; outlives it). */
struct attempts	*attempt_new(struct cloud *cloud);
/* Who hears what happened (copied; NULL: nobody). */
void		 attempt_set_listener(struct attempts *,
		    const struct attempt_listener *);
/*
 * Load the live attempts and repair what a crash left half done (a job
 * queued with a live attempt, a job in the cloud states without one).
 * 0, or -errno and *cause when the store cannot be read.
 */
int		 attempt_load(struct attempts *, char **cause);

/*
 * Launch attempt A of JOB (borrowed; SPEC its parsed spec): A is filled
 * by the scheduler (place, GPU, price, resource name) and NUMBER is the
 * job's next attempt. The row and queued -> launching (MESSAGE) are
 * committed in one transaction, then the provider is called, and its
 * answer handled here. HOLD (NULL: none) is the quota reserved for it:
 * committed or released here, whatever the return. 0: under way (the
 * answer may already have been handled); -errno: nothing was written.
 */
int		 attempt_launch(struct attempts *, struct store_attempt *a,
		    int number, const struct store_job *job, json_t *spec,
		    const struct attempt_hold *hold, const char *message,
		    char **cause);

/*
 * A new poll cycle: retry cancels that failed, stop attempts over their
 * limits, refresh a running job's checkpoint. Returns the cycle number
 * to give attempt_seen() and attempt_unseen().
 */
unsigned	 attempt_cycle(struct attempts *, int64_t now);
/* A listing of cycle GEN shows O: 0 if it is a live attempt's (then
 * handled), -ENOENT if no live attempt has that name. */
int		 attempt_seen(struct attempts *, unsigned gen,
		    const struct prov_observed *o);
/* A complete listing of P's resources in REGION ("": every region),
 * started in cycle GEN, is back: live attempts it did not show. */
void		 attempt_unseen(struct attempts *, unsigned gen,
		    const struct provider *p, const char *region);
/* O, listed by P in REGION, carries our label and no live attempt. */
void		 attempt_orphan(struct attempts *, const struct provider *p,
		    const char *region, const struct prov_observed *o);
/* Walk the live attempts; CB gets each row and its provider (NULL:
 * not enabled). CB may not end attempts. */
void		 attempt_foreach(struct attempts *,
		    void (*cb)(const struct store_attempt *,
		    const struct provider *, void *), void *arg);

/*
 * Job ID went to cancelling (the api's cancel hook): cancel its live
 * attempt's resource; the job becomes cancelled when the cloud has
 * accepted that. A job with nothing in the cloud is cancelled at once.
 */
void		 attempt_cancel(struct attempts *, int64_t id);
/*
 * Withdraw job ID's live attempt so the job is placed again at once,
 * elsewhere and with nothing counted (doc/DESIGN.md "Deadlines"): the
 * attempt is cancelled and, once the cloud has it cancelled, the job is
 * queued with WHY (borrowed) in its event. 0, or -ENOENT when the job
 * has no live attempt here, -EALREADY when one is ending anyway.
 */
int		 attempt_move(struct attempts *, int64_t id, const char *why);

/* Seconds before try N + 1 (N >= 0): [scheduler] backoff_base x 2^N,
 * capped by backoff_max, jittered. The one backoff. */
int64_t		 attempt_backoff(struct attempts *, int n);
/*
 * A stockout of attempt A: strike a cool-down for ZONE (NULL: the
 * service picked the zone, so every zone of A's region offering A's GPU
 * x count). The one cool-down. Returns when the last one ends.
 */
int64_t		 attempt_cooldown(struct attempts *,
		    const struct store_attempt *a, const char *zone,
		    int64_t now);

void		 attempt_get_stats(struct attempts *, struct attempt_stats *);
/*
 * Stop: launches, cancels and listings in flight end without touching
 * the store (their attempts stay as they are and the next start adopts
 * them). The memory goes once every call has come back.
 */
void		 attempt_close(struct attempts *);

#endif
