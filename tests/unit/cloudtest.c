/*
 * cloudtest.c: the fixture of the scheduler, attempt and reconciler unit
 * tests (cloudtest.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "daemon/spec.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"
#include "tests/unit/cloudtest.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

struct t	*T;		/* the providers have no user argument */

static void
on_call_close(uv_handle_t *h)
{
	free(h->data);
}

static void
on_call(uv_timer_t *h)
{
	struct call	*c = h->data;
	int		 i;

	uv_close((uv_handle_t *)&c->timer, on_call_close);
	if (c->poll) {
		for (i = 0; i < T->nseen; i++)
			c->poll_cb(&T->seen[i], c->arg);
		c->poll_cb(NULL, c->arg);
		c->done_cb(&c->result, c->arg);
	} else if (c->launch_cb != NULL)
		c->launch_cb(&c->result, c->arg);
	else
		c->done_cb(&c->result, c->arg);
}

static void
later(struct call *c)
{
	uint64_t	ms = 1;

	if (c->launch_cb != NULL && T->launch_ms > 0)
		ms = (uint64_t)T->launch_ms;
	else if (c->cancel && T->cancel_ms > 0)
		ms = (uint64_t)T->cancel_ms;

	c->timer.data = c;
	assert_int_equal(uv_timer_init(T->ut->loop, &c->timer), 0);
	assert_int_equal(uv_timer_start(&c->timer, on_call, ms, 0), 0);
}

static int
tp_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	struct call	*c = xcalloc(1, sizeof *c);

	T->launches++;
	(void)snprintf(T->zone, sizeof T->zone, "%s", l->zone ? l->zone : "");
	(void)snprintf(T->region, sizeof T->region, "%s", l->region);
	(void)snprintf(T->resource, sizeof T->resource, "%s", l->resource);
	(void)snprintf(T->request_id, sizeof T->request_id, "%s",
	    l->request_id);
	T->spot = l->spot;
	T->launch_nodes = l->nodes;
	json_decref(T->env);
	T->env = json_deep_copy(l->env);
	c->launch_cb = cb;
	c->arg = arg;
	if (T->next < T->nscript)
		c->result = T->script[T->next++];
	later(c);
	return 0;
}

static int
tp_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	struct call	*c = xcalloc(1, sizeof *c);

	T->polls++;
	c->poll = 1;
	c->poll_cb = cb;
	c->done_cb = done;
	c->arg = arg;
	later(c);
	return 0;
}

static int
tp_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	struct call	*c = xcalloc(1, sizeof *c);

	T->cancels++;
	T->cancel_nodes = ref->nodes;
	(void)snprintf(T->cancel_cloud_id, sizeof T->cancel_cloud_id, "%s",
	    ref->cloud_id != NULL ? ref->cloud_id : "");
	c->done_cb = done;
	c->arg = arg;
	c->cancel = 1;
	later(c);
	return 0;
}

static const struct provider tp_gce = {
	.name = "gce", .picks_zone = 0, .poll_global = 1,
	.quota_service = GCP_SERVICE_GCE, .price_service = GCP_SERVICE_GCE,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};
static const struct provider tp_batch = {
	.name = "batch", .picks_zone = 1, .poll_global = 0,
	.quota_service = GCP_SERVICE_GCE, .price_service = GCP_SERVICE_BATCH,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};
static const struct provider tp_vertex = {
	.name = "vertex", .picks_zone = 1, .poll_global = 0,
	.quota_service = GCP_SERVICE_VERTEX,
	.price_service = GCP_SERVICE_VERTEX, .quota_usage_ours = 1,
	.names_itself = 1,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};

/*
 * cmocka setup: the fixture (unittest.h) with the simulated cloud, the
 * store and the daemon's configuration for it. Without the fake the
 * test fails at NEED_FAKE().
 */
int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);
	char		*cause = NULL;

	*state = T = t;
	t->ut = unittest_new("cloudtest");
	gcptest_fake(t->ut);
	assert_int_equal(conf_init(&t->conf), 0);
	if (t->ut->fake.pid <= 0)
		return 0;
	setenv("GPUQ_PRICE_TABLE", TOP_SRCDIR "/data/prices.csv", 1);
#define SET(s, k, v) assert_int_equal(conf_set(&t->conf, s, k, v, &cause), 0)
	SET("gcp", "project", "gpuq-demo");
	SET("gcp", "endpoint", t->ut->fake.url);
	SET("gcp", "regions", "us-central1, us-east1");
	SET("gcp", "checkpoint_root", "gs://gpuq-test-ckpt/gpuq/");
	SET("scheduler", "backoff_base", "1s");
	SET("scheduler", "backoff_max", "2s");
	SET("scheduler", "stockout_cooldown", "60s");
	SET("scheduler", "poll_interval", "1s");
#undef SET
	t->store = unittest_store(t->ut);
	return 0;
}

/* The reconciler's first look is done: the scheduler may launch. */
static void
on_reconciled(void *arg)
{
	struct t	*t = arg;

	sched_ready(t->sched);
}

/* The cloud, the attempts and the scheduler over the test providers;
 * REC: a reconciler too. */
void
start(struct t *t, int rec)
{
	static const struct provider *const v[] = { &tp_gce, &tp_batch,
	    &tp_vertex };
	char	*cause = NULL;

	if (cloud_new(t->ut->loop, t->store, &t->conf, &t->cloud, &cause) != 0)
		fail_msg("cloud_new: %s", cause);
	cloud_set_providers(t->cloud, v, 3);
	t->att = attempt_new(t->cloud);
	t->sched = sched_new(t->cloud);
	sched_set_attempts(t->sched, t->att);
	if (rec)
		t->rec = reconcile_new(t->cloud, t->att, on_reconciled, t);
}

/* cmocka teardown: what start() made, then the fixture, which fails
 * the test if a handle was left on the loop. */
int
teardown(void **state)
{
	struct t	*t = *state;

	sched_close(t->sched);
	reconcile_close(t->rec);
	attempt_close(t->att);
	cloud_free(t->cloud);
	unittest_free(t->ut);		/* runs the test providers' calls */
	conf_done(&t->conf);
	json_decref(t->env);
	free(t);
	T = NULL;
	return 0;
}

int
cancelled_once(void *arg)
{
	struct t	*t = arg;

	return t->cancels >= 1;
}

int
job_pending_2(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 2) == JOB_PENDING;
}

/* Read quotas and zones now. */
void
refresh(struct t *t)
{
	struct gcptest_result	res = { 0, 0, NULL };

	assert_int_equal(quota_refresh(gcp_quota(cloud_gcp(t->cloud)), 1,
	    gcptest_result_cb, &res), 0);
	unittest_run_until(t->ut, &res.calls, 1);
	if (res.error != 0)
		fail_msg("quota refresh: %s", res.cause);
	gcptest_result_done(&res);
}

void
quota(struct t *t, const char *region, const char *metric, int limit)
{
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":\"%s\","
	    "\"metric\":\"%s\",\"limit\":%d}", region, metric, limit));
}

/* The normalized spec of JOB (JSON text). New. */
json_t *
spec(const char *job)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*in, *out = NULL;

	in = json_loads(job, 0, NULL);
	assert_non_null(in);
	if (spec_validate(in, &out, &err) != 0)
		fail_msg("spec %s: %s", err.field, err.message);
	json_decref(in);
	return out;
}

/* Submit N jobs of JOB with PRIORITY; the first id. */
int64_t
submit(struct t *t, const char *job, int priority, size_t n)
{
	struct store_job_new	*v = xcalloc(n, sizeof *v);
	int64_t			*ids = xcalloc(n, sizeof *ids), first;
	json_t			*s = spec(job);
	char			*text = json_dumps(s, JSON_COMPACT), *cause;
	size_t			 i;

	for (i = 0; i < n; i++) {
		v[i].name = "t";
		v[i].priority = priority;
		v[i].owner = 0;
		v[i].spec = text;
	}
	cause = NULL;
	assert_int_equal(store_jobs_insert(t->store, v, n, ids, &cause), 0);
	first = ids[0];
	free(text);
	free(v);
	free(ids);
	json_decref(s);
	return first;
}

struct store_job *
job(struct t *t, int64_t id)
{
	struct store_job	*j = NULL;

	assert_int_equal(store_job_get(t->store, id, &j, NULL), 0);
	return j;
}

int
job_state(struct t *t, int64_t id)
{
	struct store_job	*j = job(t, id);
	int			 s = j->state;

	store_job_free(j);
	return s;
}

/* The plan of JOB (text), after a quota refresh. New. */
json_t *
plan(struct t *t, const char *text)
{
	json_t	*s = spec(text), *p;

	p = sched_plan(t->sched, s);
	json_decref(s);
	return p;
}


int
job_running_1(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_RUNNING;
}

int
job_pending_1(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_PENDING;
}

int
job_failed_1(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_FAILED;
}

int
job_cancelled_1(void *arg)
{
	struct t	*t = arg;

	return job_state(t, 1) == JOB_CANCELLED;
}

int
first_launch(void *arg)
{
	struct t	*t = arg;

	return t->launches >= 1;
}

int
launched_twice(void *arg)
{
	struct t	*t = arg;

	return t->launches >= 2;
}

/* An observation with nothing known yet. */
void
seen_init(struct prov_observed *o)
{
	memset(o, 0, sizeof *o);
	o->exit_code = -1;
}

/* The cloud, a reconciler and the scheduler started, in that order. */
static void
start_all(struct t *t)
{
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
}

/* seen[0], the only resource listed: NAME in STATE. */
static void
list_one(struct t *t, char *name, int state)
{
	seen_init(&t->seen[0]);
	t->seen[0].resource = name;
	t->seen[0].state = state;
	t->nseen = 1;
}

/*
 * Job 1 of JOB (JSON text) submitted, everything started over it, its
 * first launch accepted (the job pending); then listed in STATE, in the
 * zone it was launched in. NAME gets the resource name.
 */
void
launched_listed(struct t *t, const char *text, int state, char *name)
{
	(void)submit(t, text, 0, 1);
	start_all(t);
	unittest_run_cond(t->ut, job_pending_1, t);
	cloud_resource_name(store_install_id(t->store), 1, 1, name);
	list_one(t, name, state);
	if (t->zone[0] != '\0')
		t->seen[0].zone = t->zone;
}

/*
 * Job 1 of JOB (JSON text) with attempt 1 as a previous gpuqd left it
 * (LEFT and STARTED as left_behind() takes them) and listed in STATE;
 * everything started over it. NAME gets the resource name.
 */
void
left_listed(struct t *t, const char *text, int left, int64_t started,
    int state, char *name)
{
	(void)submit(t, text, 0, 1);
	left_behind(t, 1, left, started, name);
	list_one(t, name, state);
	start_all(t);
}

/*
 * Write attempt 1 of job ID on gce in us-central1-a straight into the
 * store, in STATE (launching or running since STARTED), with the job
 * moved to match: what a previous gpuqd left behind. LEFT_SPLIT: the
 * attempt row alone, the job still queued, as a gpuqd that wrote the
 * two in separate transactions could leave it.
 */
void
left_behind(struct t *t, int64_t id, int state, int64_t started,
    char *name)
{
	struct store_attempt	a;

	memset(&a, 0, sizeof a);
	a.job_id = id;
	a.provider = "gce";
	a.region = "us-central1";
	a.zone = "us-central1-a";
	a.machine_type = "n1-highmem-4";
	a.gpu = "nvidia-tesla-t4";
	a.gpu_count = 1;
	a.hourly_usd = 3.6;
	cloud_resource_name(store_install_id(t->store), id, 1, name);
	a.resource = name;
	if (state == LEFT_SPLIT) {
		assert_int_equal(store_attempt_insert(t->store, &a, NULL), 0);
		return;
	}
	assert_int_equal(store_attempt_launch(t->store, &a, 1, "test", NULL),
	    0);
	if (state == ATTEMPT_LAUNCHING)
		return;		/* the crash came before the create call */
	assert_int_equal(store_attempt_set_state(t->store, a.id,
	    ATTEMPT_RUNNING, started, NULL, NULL), 0);
	assert_int_equal(store_job_transition(t->store, id,
	    JOB_MASK(JOB_LAUNCHING), JOB_RUNNING, "test", NULL, NULL), 0);
}
