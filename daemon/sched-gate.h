/*
 * sched-gate.h: what holds a runnable job back before any placement: the
 * jobs it waits for (after, after_any) and its array's parallelism
 * (doc/DESIGN.md "Arrays and dependencies"). The scheduler's internal
 * header; sched.c asks sched_gate_check() of every runnable job before
 * it looks for room.
 *
 * What it reads of the store is read once per pass and remembered in a
 * struct sched_gate: the state of each job waited for, the tasks of each
 * array launching or running. 10,000 queued tasks of one array cost two
 * reads of the jobs_array index a pass, not 10,000.
 */
#ifndef GPUQ_SCHED_GATE_H
#define GPUQ_SCHED_GATE_H

#include <stdint.h>

#include <jansson.h>

struct store;
struct store_job;

/* What a job must wait for, from its spec (sched_gate_parse()). */
struct sched_gate_job {
	int64_t		 array_id;	/* 0: not a task */
	int		 parallelism;	/* 0: no limit below its count */
	int64_t		*deps;		/* after, then after_any */
	size_t		 ndeps;
	size_t		 nafter;	/* the first NAFTER must succeed */
};

/* The per-pass memory. Zero it before the first pass. */
struct sched_gate {
	struct sched_gate_seen {
		int64_t	 id;		/* a job or array waited for */
		int	 verdict;	/* SCHED_GATE_* for an after */
		int	 verdict_any;	/* ... and for an after_any */
		char	*why;		/* for after (wait or cancel) */
		char	*why_any;
	}		*seen;
	size_t		 nseen, capseen;
	struct sched_gate_busy {
		int64_t	 array_id;
		int64_t	 active;	/* launching, pending, running,
					   cancelling */
	}		*busy;
	size_t		 nbusy, capbusy;
	int64_t		*doomed;	/* arrays cancelled this pass */
	size_t		 ndoomed, capdoomed;
};

enum {
	SCHED_GATE_GO = 0,	/* nothing holds it back */
	SCHED_GATE_WAIT,	/* *ret_why says for what */
	SCHED_GATE_CANCEL,	/* a job it waits for failed: *ret_why */
};

/* Fill G from SPEC and ROW (the job's array). Frees what G held. */
void	sched_gate_parse(struct sched_gate_job *g, const struct store_job *row,
	    json_t *spec);
void	sched_gate_job_done(struct sched_gate_job *);

/* A new pass: forget all the last one read and did. */
void	sched_gate_begin(struct sched_gate *);
/* Forget the states read so far (a state changed during the pass). */
void	sched_gate_reset(struct sched_gate *);
void	sched_gate_free(struct sched_gate *);

/*
 * May job ID (its gate J) be placed now? SCHED_GATE_GO, or WAIT or
 * CANCEL with *ret_why (new) saying why. A store failure is a WAIT.
 */
int	sched_gate_check(struct sched_gate *, struct store *, int64_t id,
	    const struct sched_gate_job *j, char **ret_why);
/*
 * Array ARRAY_ID's queued tasks were all cancelled in this pass (a job
 * they wait for failed): the pass skips the rest of them.
 */
void	sched_gate_doomed(struct sched_gate *, int64_t array_id);
int	sched_gate_is_doomed(const struct sched_gate *, int64_t array_id);
/* A task of ARRAY_ID was launched in this pass: one more is busy. */
void	sched_gate_launched(struct sched_gate *, int64_t array_id);

#endif
