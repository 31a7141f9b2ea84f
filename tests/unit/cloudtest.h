/*
 * cloudtest.h: the fixture the scheduler, attempt and reconciler unit
 * tests share: the real store, quota, price, sched, attempt and
 * reconcile code against a private simulated cloud (tests/fakegcp,
 * through gcptest.c) for quotas and zones, with providers of the test's
 * own ("gce", "batch", "vertex") that launch, list and cancel as each
 * case scripts them: launch answers in script[], listings in seen[].
 */
#ifndef GPUQ_CLOUDTEST_H
#define GPUQ_CLOUDTEST_H

#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "daemon/conf.h"
#include "providers/provider.h"
#include "tests/unit/gcptest.h"
#include "tests/unit/unittest.h"

#define MAX_SCRIPT	16
#define MAX_SEEN	64

/* One call a test provider answers later, from a timer. */
struct call {
	uv_timer_t		 timer;
	prov_launch_cb		 launch_cb;
	prov_poll_cb		 poll_cb;
	prov_done_cb		 done_cb;
	void			*arg;
	struct prov_result	 result;
	int			 poll;
	int			 cancel;
};

struct t {
	struct unittest		*ut;		/* loop, fake (unittest.h) */
	struct conf		 conf;		/* the daemon's, for the fake */
	struct store		*store;		/* unittest_store(ut) */
	struct cloud		*cloud;
	struct sched		*sched;
	struct reconcile	*rec;
	struct attempts		*att;

	/* What the test providers saw and will answer. */
	int			 launches, polls, cancels;
	int			 launch_nodes;	/* the last launch's nodes */
	int			 cancel_nodes;	/* the last cancel's nodes */
	char			 cancel_cloud_id[128]; /* and its cloud id */
	int			 launch_ms;	/* answer after; 0: 1 ms */
	int			 cancel_ms;	/* the same for cancels */
	char			 zone[64], region[64], provider[16];
	char			 resource[64], request_id[40];
	int			 spot;
	json_t			*env;
	struct prov_result	 script[MAX_SCRIPT];	/* launch answers */
	int			 nscript, next;
	struct prov_observed	 seen[MAX_SEEN];	/* poll answers */
	int			 nseen;
};

extern struct t	*T;	/* the one under test */

#define T4	"\"image\":\"x\",\"accelerator\":{\"type\":"		\
	"\"nvidia-tesla-t4\",\"count\":1}"

/* cmocka setup and teardown: the fixture (unittest.h) with the fake
 * cloud and the store, and the daemon's conf for them; NEED_FAKE(t->ut)
 * in a test body. */
int		 setup(void **state);
int		 teardown(void **state);
/* The cloud, attempts and scheduler over the test providers; REC: and a
 * reconciler, whose first cycle makes the scheduler ready. */
void		 start(struct t *, int rec);
/* Read quotas and zones now. */
void		 refresh(struct t *);
/* Set a quota of the fake. */
void		 quota(struct t *, const char *region, const char *metric,
		    int limit);
/* The normalized spec of JOB (JSON text). New. */
json_t		*spec(const char *job);
/* Submit N jobs of JOB with PRIORITY; the first id. */
int64_t		 submit(struct t *, const char *job, int priority, size_t n);
struct store_job *job(struct t *, int64_t id);
int		 job_state(struct t *, int64_t id);
/* The plan of JOB (text). New. */
json_t		*plan(struct t *, const char *text);
/* An observation with nothing known yet. */
void		 seen_init(struct prov_observed *);
/* Attempt 1 of job ID as a previous gpuqd left it (cloudtest.c). */
#define LEFT_SPLIT	(-1)
void		 left_behind(struct t *, int64_t id, int state,
		    int64_t started, char *name);
/* Job 1 of JOB submitted, the cloud, a reconciler and the scheduler
 * started, its first launch accepted, then listed in STATE (seen[0]).
 * NAME gets the resource name. */
void		 launched_listed(struct t *, const char *job, int state,
		    char *name);
/* Job 1 of JOB with attempt 1 left_behind() (LEFT, STARTED), listed in
 * STATE; everything started over it (a reconciler too). */
void		 left_listed(struct t *, const char *job, int left,
		    int64_t started, int state, char *name);

/* Conditions for unittest_run_cond(t->ut, cond, t). */
int		 cancelled_once(void *t);
int		 job_pending_1(void *t);
int		 job_running_1(void *t);
int		 job_pending_2(void *t);
int		 job_failed_1(void *t);
int		 job_cancelled_1(void *t);
int		 first_launch(void *t);
int		 launched_twice(void *t);

#endif
