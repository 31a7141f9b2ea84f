/*
 * test-sched.c: daemon/sched.c and daemon/reconcile.c on the real quota,
 * price and store code, against a private simulated cloud
 * (tests/fakegcp, through tests/unit/gcptest.c) for quotas and zones,
 * with providers of the test's own that launch, list and cancel as each
 * case scripts them.
 *
 * Cases: offer enumeration and filters (Spot policy, quota buckets,
 * GPUS_ALL_REGIONS, cool-downs, limits), the ranking, launches and what
 * each launch error does, the claim that keeps a big job from being
 * starved, WHY texts, the reconciler's mapping and its one call per poll,
 * and a pass over 10,000 queued jobs.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "daemon/spec.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"
#include "tests/unit/gcptest.h"
#include "tests/unit/unittest.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

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
};

struct t {
	uv_loop_t		 loop;
	uv_timer_t		 tick;
	struct fake		 fake;
	struct unittest		*ut;		/* the store's directory */
	struct conf		 conf;
	struct store		*store;
	struct cloud		*cloud;
	struct sched		*sched;
	struct reconcile	*rec;

	/* What the test providers saw and will answer. */
	int			 launches, polls, cancels;
	char			 zone[64], region[64], provider[16];
	char			 resource[64], request_id[40];
	int			 spot;
	json_t			*env;
	struct prov_result	 script[MAX_SCRIPT];	/* launch answers */
	int			 nscript, next;
	struct prov_observed	 seen[MAX_SEEN];	/* poll answers */
	int			 nseen;
	int			 refreshed;
};

static struct t	*T;		/* the providers have no user argument */

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
	c->timer.data = c;
	assert_int_equal(uv_timer_init(&T->loop, &c->timer), 0);
	assert_int_equal(uv_timer_start(&c->timer, on_call, 1, 0), 0);
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
	c->done_cb = done;
	c->arg = arg;
	later(c);
	return 0;
}

static const struct provider tp_gce = {
	.name = "gce", .picks_zone = 0, .poll_global = 1,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};
static const struct provider tp_batch = {
	.name = "batch", .picks_zone = 1, .poll_global = 0,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};
static const struct provider tp_vertex = {
	.name = "vertex", .picks_zone = 1, .poll_global = 0,
	.launch = tp_launch, .poll = tp_poll, .cancel = tp_cancel,
};

static void
on_tick(uv_timer_t *h)
{
}

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);
	char		*cause = NULL;

	*state = T = t;
	if (!fake_available())
		return 0;
	assert_int_equal(fake_start(&t->fake), 0);
	test_clean_env(t->fake.dir);
	setenv("GPUQ_PRICE_TABLE", TOP_SRCDIR "/data/prices.csv", 1);
	assert_int_equal(conf_init(&t->conf), 0);
#define SET(s, k, v) assert_int_equal(conf_set(&t->conf, s, k, v, &cause), 0)
	SET("gcp", "project", "gpuq-demo");
	SET("gcp", "endpoint", t->fake.url);
	SET("gcp", "regions", "us-central1, us-east1");
	SET("gcp", "checkpoint_root", "gs://gpuq-test-ckpt/gpuq/");
	SET("scheduler", "backoff_base", "1s");
	SET("scheduler", "backoff_max", "2s");
	SET("scheduler", "stockout_cooldown", "60s");
	SET("scheduler", "poll_interval", "1s");
#undef SET
	t->ut = unittest_new("test-sched");
	t->store = unittest_store(t->ut);
	assert_int_equal(uv_loop_init(&t->loop), 0);
	assert_int_equal(uv_timer_init(&t->loop, &t->tick), 0);
	assert_int_equal(uv_timer_start(&t->tick, on_tick, 5, 5), 0);
	return 0;
}

/* The cloud and scheduler over the test providers; REC: a reconciler. */
static void
start(struct t *t, int rec)
{
	static const struct provider *const v[] = { &tp_gce, &tp_batch,
	    &tp_vertex };
	char	*cause = NULL;

	if (cloud_new(&t->loop, t->store, &t->conf, &t->cloud, &cause) != 0)
		fail_msg("cloud_new: %s", cause);
	cloud_set_providers(t->cloud, v, 3);
	t->sched = sched_new(t->cloud);
	if (rec) {
		t->rec = reconcile_new(t->cloud, t->sched);
		sched_set_reconcile(t->sched, t->rec);
	}
}

static int
teardown(void **state)
{
	struct t	*t = *state;
	int		 closed = 0;

	if (t->fake.pid > 0) {
		if (t->sched != NULL)
			sched_close(t->sched);
		if (t->rec != NULL)
			reconcile_close(t->rec);
		cloud_free(t->cloud);
		uv_close((uv_handle_t *)&t->tick, NULL);
		uv_run(&t->loop, UV_RUN_DEFAULT);
		closed = uv_loop_close(&t->loop);
		unittest_free(t->ut);
		conf_done(&t->conf);
		fake_stop(&t->fake);
	}
	json_decref(t->env);
	free(t);
	T = NULL;
	assert_int_equal(closed, 0);
	return 0;
}

/* Run the loop until COND() holds or MS pass; 1 if it held. */
static int
run_until(struct t *t, int ms, int (*cond)(void))
{
	uint64_t	end = uv_hrtime() + (uint64_t)ms * 1000000;

	while (!cond()) {
		if (uv_hrtime() > end)
			return 0;
		(void)uv_run(&t->loop, UV_RUN_ONCE);
	}
	return 1;
}

static int
never(void)
{
	return 0;
}

static int
cancelled_once(void)
{
	return T->cancels >= 1;
}

static int job_state(struct t *, int64_t);

static int
job_pending_2(void)
{
	return job_state(T, 2) == JOB_PENDING;
}

static void
on_refresh(int error, const char *cause, void *arg)
{
	struct t	*t = arg;

	if (error != 0)
		fail_msg("quota refresh: %s", cause);
	t->refreshed = 1;
}

static int
refreshed(void)
{
	return T->refreshed;
}

/* Read quotas and zones now. */
static void
refresh(struct t *t)
{
	t->refreshed = 0;
	assert_int_equal(quota_refresh(gcp_quota(cloud_gcp(t->cloud)), 1,
	    on_refresh, t), 0);
	assert_true(run_until(t, 20000, refreshed));
}

static void
quota(struct t *t, const char *region, const char *metric, int limit)
{
	json_decref(fake_post(&t->fake, "/_fake/quota", "{\"region\":\"%s\","
	    "\"metric\":\"%s\",\"limit\":%d}", region, metric, limit));
}

/* The normalized spec of JOB (JSON text). New. */
static json_t *
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
static int64_t
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

static struct store_job *
job(struct t *t, int64_t id)
{
	struct store_job	*j = NULL;

	assert_int_equal(store_job_get(t->store, id, &j, NULL), 0);
	return j;
}

static int
job_state(struct t *t, int64_t id)
{
	struct store_job	*j = job(t, id);
	int			 s = j->state;

	store_job_free(j);
	return s;
}

/* The plan of JOB (text), after a quota refresh. New. */
static json_t *
plan(struct t *t, const char *text)
{
	json_t	*s = spec(text), *p;

	p = sched_plan(t->sched, s);
	json_decref(s);
	return p;
}

#define T4	"\"image\":\"x\",\"accelerator\":{\"type\":\"nvidia-tesla-t4\"," \
	"\"count\":1}"

/* Ranked by expected cost; Spot stretched by λ; both kinds offered. */
static void
test_sched_plan_ranks(void **state)
{
	struct t	*t = *state;
	json_t		*p, *o;
	size_t		 i;
	double		 last = 0, hourly, exp;
	int		 spot = 0, standard = 0;

	NEED_FAKE(t);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 ",\"estimated_hours\":2}");
	assert_true(json_array_size(json_object_get(p, "offers")) > 4);
	json_array_foreach(json_object_get(p, "offers"), i, o) {
		hourly = json_real_value(json_object_get(o, "hourly_usd"));
		exp = json_real_value(json_object_get(o, "expected_usd"));
		assert_true(exp >= last);
		last = exp;
		assert_int_equal(json_integer_value(json_object_get(o,
		    "rank")), (json_int_t)i + 1);
		if (json_is_true(json_object_get(o, "spot"))) {
			spot++;
			assert_true(exp > hourly * 2);
		} else {
			standard++;
			assert_float_equal(exp, hourly * 2, 1e-9);
		}
		/* Compute Engine offers name their zone, the others not. */
		assert_int_equal(json_is_string(json_object_get(o, "zone")),
		    strcmp(json_string_value(json_object_get(o, "provider")),
		    "gce") == 0);
	}
	assert_true(spot > 0 && standard > 0);
	assert_null(json_object_get(p, "why"));
	json_decref(p);
}

/* spot: never and require keep only their kind. */
static void
test_sched_plan_spot_policy(void **state)
{
	struct t	*t = *state;
	json_t		*p, *o;
	size_t		 i;

	NEED_FAKE(t);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 ",\"spot\":\"never\"}");
	assert_true(json_array_size(json_object_get(p, "offers")) > 0);
	json_array_foreach(json_object_get(p, "offers"), i, o)
		assert_false(json_is_true(json_object_get(o, "spot")));
	json_decref(p);
	p = plan(t, "{" T4 ",\"spot\":\"require\",\"providers\":[\"gce\"],"
	    "\"regions\":[\"us-east1\"]}");
	assert_true(json_array_size(json_object_get(p, "offers")) > 0);
	json_array_foreach(json_object_get(p, "offers"), i, o) {
		assert_true(json_is_true(json_object_get(o, "spot")));
		assert_string_equal(json_string_value(json_object_get(o,
		    "provider")), "gce");
		assert_string_equal(json_string_value(json_object_get(o,
		    "region")), "us-east1");
	}
	json_decref(p);
}

/* No T4 quota in us-east1: its Compute and Batch offers are excluded
 * naming the bucket; Vertex's own quota still has room. */
static void
test_sched_plan_quota_bucket(void **state)
{
	struct t	*t = *state;
	json_t		*p, *o;
	size_t		 i;
	int		 excluded = 0;
	const char	*prov, *reason;

	NEED_FAKE(t);
	quota(t, "us-east1", "NVIDIA_T4_GPUS", 0);
	quota(t, "us-east1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 0);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 "}");
	json_array_foreach(json_object_get(p, "offers"), i, o) {
		prov = json_string_value(json_object_get(o, "provider"));
		if (strcmp(prov, "vertex") != 0)
			assert_string_equal(json_string_value(
			    json_object_get(o, "region")), "us-central1");
	}
	json_array_foreach(json_object_get(p, "excluded"), i, o) {
		reason = json_string_value(json_object_get(o, "reason"));
		if (strcmp(json_string_value(json_object_get(o, "region")),
		    "us-east1") != 0)
			continue;
		/* Spot falls back to the on-demand bucket at limit 0. */
		assert_non_null(strstr(reason, "NVIDIA_T4_GPUS"));
		excluded++;
	}
	assert_true(excluded > 0);
	json_decref(p);
}

/* GPUS_ALL_REGIONS at 0: nothing on Compute or Batch, and the why says
 * which bucket. */
static void
test_sched_plan_gpus_all_regions(void **state)
{
	struct t	*t = *state;
	json_t		*p;
	const char	*why;

	NEED_FAKE(t);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}");
	assert_int_equal(json_array_size(json_object_get(p, "offers")), 0);
	why = json_string_value(json_object_get(p, "why"));
	assert_non_null(why);
	assert_non_null(strstr(why, "GPUS_ALL_REGIONS"));
	json_decref(p);
}

/* Limits: over max_hourly_usd and max_total_usd, the why names them. */
static void
test_sched_plan_limits(void **state)
{
	struct t	*t = *state;
	json_t		*p;
	const char	*why;

	NEED_FAKE(t);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 ",\"max_hourly_usd\":0.01}");
	why = json_string_value(json_object_get(p, "why"));
	assert_non_null(why);
	assert_non_null(strstr(why, "over max_hourly_usd 0.01: cheapest "
	    "offer $"));
	json_decref(p);
	p = plan(t, "{" T4 ",\"estimated_hours\":100,"
	    "\"max_total_usd\":1}");
	why = json_string_value(json_object_get(p, "why"));
	assert_non_null(why);
	assert_non_null(strstr(why, "over max_total_usd 1.00"));
	json_decref(p);
}

/* Every zone of the allowed region cooled down: the why says until. */
static void
test_sched_plan_cooldown(void **state)
{
	struct t		*t = *state;
	struct quota_zone	 z[64];
	json_t			*p;
	const char		*why;
	int64_t			 until;
	int			 n, i;

	NEED_FAKE(t);
	start(t, 0);
	refresh(t);
	n = quota_zones(gcp_quota(cloud_gcp(t->cloud)), "us-central1",
	    "nvidia-tesla-t4", z, 64);
	assert_true(n > 0);
	for (i = 0; i < n; i++)
		assert_int_equal(store_cooldown_strike(t->store, z[i].zone,
		    "nvidia-tesla-t4", 0, time(NULL), 600, 600, &until,
		    NULL), 0);
	p = plan(t, "{" T4 ",\"spot\":\"never\",\"regions\":"
	    "[\"us-central1\"]}");
	assert_int_equal(json_array_size(json_object_get(p, "offers")), 0);
	why = json_string_value(json_object_get(p, "why"));
	assert_non_null(why);
	assert_non_null(strstr(why, "all allowed zones out of "
	    "nvidia-tesla-t4 until "));
	json_decref(p);
	/* Spot is another provisioning model: not cooled. */
	p = plan(t, "{" T4 ",\"spot\":\"require\",\"regions\":"
	    "[\"us-central1\"]}");
	assert_true(json_array_size(json_object_get(p, "offers")) > 0);
	json_decref(p);
}

/* Learnt preemptions raise λ for that place only. */
static void
test_sched_plan_lambda_learnt(void **state)
{
	struct t		*t = *state;
	struct store_attempt	 a;
	json_t			*p, *o;
	int64_t			 id, now = time(NULL);
	size_t			 i;
	int			 k, seen = 0;
	char			 name[64];

	NEED_FAKE(t);
	id = submit(t, "{" T4 "}", 0, 1);
	for (k = 0; k < 5; k++) {
		memset(&a, 0, sizeof a);
		a.job_id = id;
		a.provider = "gce";
		a.region = "us-east1";
		a.zone = "us-east1-c";
		a.gpu = "nvidia-tesla-t4";
		a.gpu_count = 1;
		a.spot = 1;
		(void)snprintf(name, sizeof name, "r%d", k);
		a.resource = name;
		assert_int_equal(store_attempt_insert(t->store, &a, NULL), 0);
		assert_int_equal(store_attempt_set_state(t->store, a.id,
		    ATTEMPT_RUNNING, now - 3600, NULL, NULL), 0);
		assert_int_equal(store_attempt_end(t->store, a.id, now - 3000,
		    END_PREEMPTED, -1, NULL, 0, NULL), 0);
	}
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 ",\"spot\":\"require\",\"providers\":[\"gce\"]}");
	json_array_foreach(json_object_get(p, "offers"), i, o) {
		double l = json_real_value(json_object_get(o, "lambda"));

		if (strcmp(json_string_value(json_object_get(o, "region")),
		    "us-east1") == 0) {
			/* (5 + 0.1 x 10) / (50 min + 10 h) */
			assert_float_equal(l, 6.0 / (5.0 / 6 + 10), 1e-6);
			seen++;
		} else
			assert_float_equal(l, 0.1, 1e-9);
	}
	assert_true(seen > 0);
	/* us-east1 Spot is now dearer in expectation: us-central1 first. */
	o = json_array_get(json_object_get(p, "offers"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "region")),
	    "us-central1");
	json_decref(p);
}

static int
job_failed_1(void)
{
	return job_state(T, 1) == JOB_FAILED;
}

static int
first_launch(void)
{
	return T->launches >= 1;
}

static int
job_pending_1(void)
{
	return job_state(T, 1) == JOB_PENDING;
}

/* A job launches on the cheapest offer, with the contract's names. */
static void
test_sched_launch(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], rid[CLOUD_UUID_LEN];
	int64_t			 id;
	json_t			*p, *best;

	NEED_FAKE(t);
	id = submit(t, "{" T4 ",\"env\":{\"A\":\"b\"}}", 0, 1);
	assert_int_equal(id, 1);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 "}");
	best = json_array_get(json_object_get(p, "offers"), 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	assert_int_equal(t->launches, 1);
	assert_string_equal(t->region, json_string_value(json_object_get(best,
	    "region")));
	assert_int_equal(t->spot, json_is_true(json_object_get(best, "spot")));
	cloud_resource_name(store_install_id(t->store), id, 1, name);
	assert_string_equal(t->resource, name);
	cloud_request_id(name, "", rid);
	assert_string_equal(t->request_id, rid);
	assert_string_equal(json_string_value(json_object_get(t->env, "A")),
	    "b");
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "GPUQ_JOB_ID")), "1");
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "GPUQ_ATTEMPT")), "1");
	assert_string_equal(json_string_value(json_object_get(t->env,
	    "GPUQ_CHECKPOINT_DIR")), "gs://gpuq-test-ckpt/gpuq/1/"
	    "checkpoints/");
	assert_null(json_object_get(t->env, "GPUQ_RESUME_FROM"));
	j = job(t, id);
	assert_int_equal(j->attempts, 1);
	assert_null(j->why);
	store_job_free(j);
	json_decref(p);
}

/*
 * The scheduler's states: no launch before the reconciler is done
 * (started, not ready), and the reconciler may be done before the start
 * (ready, then started).
 */
static void
test_sched_ready_order(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t);
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	refresh(t);
	sched_start(t->sched);
	assert_false(run_until(t, 300, never));
	assert_int_equal(t->launches, 0);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	assert_int_equal(t->launches, 1);
}

static void
test_sched_ready_before_start(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t);
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	refresh(t);
	sched_ready(t->sched);
	assert_false(run_until(t, 300, never));
	assert_int_equal(t->launches, 0);
	sched_start(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	assert_int_equal(t->launches, 1);
}

/* The request id is a valid, stable UUID, distinct per purpose. */
static void
test_sched_request_id(void **state)
{
	char	a[CLOUD_UUID_LEN], b[CLOUD_UUID_LEN], c[CLOUD_UUID_LEN];

	cloud_request_id("gpuq-0a1b2c3d-7-1", "", a);
	cloud_request_id("gpuq-0a1b2c3d-7-1", "", b);
	cloud_request_id("gpuq-0a1b2c3d-7-1", "delete", c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), 36);
	assert_int_equal(a[8], '-');
	assert_int_equal(a[14], '5');
	assert_true(strchr("89ab", a[19]) != NULL);
}

static int
launched_twice(void)
{
	return T->launches >= 2;
}

static int
launched_twice_pending(void)
{
	return launched_twice() && job_pending_1();
}

static int
first_launch_queued(void)
{
	return first_launch() && job_state(T, 1) == JOB_QUEUED;
}

/* A quota refusal ends the attempt, requeues, and the job goes on to
 * another place; it does not count as a failure. */
static void
test_sched_launch_quota_error(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 first[64];

	NEED_FAKE(t);
	t->script[0].fail = PROV_FAIL_QUOTA;
	t->script[0].message = "Quota 'NVIDIA_T4_GPUS' exceeded.";
	t->nscript = 1;
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"spot\":\"never\"}",
	    0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, first_launch));
	(void)snprintf(first, sizeof first, "%s", t->region);
	assert_true(run_until(t, 15000, launched_twice_pending));
	assert_string_not_equal(t->region, first);
	j = job(t, 1);
	assert_int_equal(j->attempts, 2);
	assert_int_equal(j->failures, 0);
	store_job_free(j);
}

/* A stockout cools the zone down (in the store) and the zones the
 * error names are tried next. */
static void
test_sched_launch_stockout(void **state)
{
	struct t		*t = *state;
	struct quota_zone	 z[64];
	char			 first[64];
	int			 n, i;

	NEED_FAKE(t);
	start(t, 0);
	refresh(t);
	n = quota_zones(gcp_quota(cloud_gcp(t->cloud)), "us-central1",
	    "nvidia-tesla-t4", z, 64);
	assert_true(n >= 2);
	t->script[0].fail = PROV_FAIL_STOCKOUT;
	t->script[0].message = "ZONE_RESOURCE_POOL_EXHAUSTED";
	t->script[0].zones_available = z[n - 1].zone;
	t->nscript = 1;
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"spot\":\"never\","
	    "\"regions\":[\"us-central1\"]}", 0, 1);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, first_launch));
	(void)snprintf(first, sizeof first, "%s", t->zone);
	assert_true(run_until(t, 15000, launched_twice_pending));
	assert_string_equal(t->zone, z[n - 1].zone);
	for (i = 0; i < n; i++)
		if (strcmp(z[i].zone, first) == 0)
			break;
	assert_true(i < n);
}


/* A refusal that will not fix itself fails the job with the words. */
static void
test_sched_launch_invalid_fails(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t);
	t->script[0].fail = PROV_FAIL_INVALID;
	t->script[0].message = "Invalid value for field 'image'";
	t->nscript = 1;
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, job_failed_1));
	assert_int_equal(t->launches, 1);
	j = job(t, 1);
	assert_non_null(strstr(j->message, "Invalid value for field "
	    "'image'"));
	store_job_free(j);
}

/* A transient error retries after backoff, saying so meanwhile. */
static void
test_sched_launch_transient_backoff(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t);
	t->script[0].fail = PROV_FAIL_TRANSIENT;
	t->script[0].message = "HTTP 503 UNAVAILABLE";
	t->nscript = 1;
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, first_launch_queued));
	j = job(t, 1);
	assert_non_null(j->why);
	assert_non_null(strstr(j->why, "after: HTTP 503 UNAVAILABLE"));
	assert_true(j->not_before > 0);
	store_job_free(j);
	assert_true(run_until(t, 10000, job_pending_1));
	assert_int_equal(t->launches, 2);
}

static int
pass_done(void)
{
	struct sched_stats	s;

	sched_get_stats(T->sched, &s);
	return s.passes >= 1 && job_state(T, 2) != JOB_QUEUED;
}

/*
 * Room for 2 T4s in the only region. A priority-10 job needs 4 and
 * waits; a priority-0 job needs 1 and could fit, but the bucket is
 * claimed for the bigger job, and its why says so.
 */
static void
test_sched_claim_for_higher_priority(void **state)
{
	struct t		*t = *state;
	struct store_job	*big, *small;
	struct sched_stats	 st;

	NEED_FAKE(t);
	quota(t, "us-central1", "NVIDIA_T4_GPUS", 2);
	quota(t, "us-central1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 0);
	(void)submit(t, "{\"image\":\"x\",\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":4},\"providers\":[\"gce\"],"
	    "\"regions\":[\"us-central1\"]}", 10, 1);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"regions\":"
	    "[\"us-central1\"]}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_false(run_until(t, 3000, pass_done));
	sched_get_stats(t->sched, &st);
	assert_true(st.passes >= 1);
	assert_int_equal(t->launches, 0);
	big = job(t, 1);
	small = job(t, 2);
	assert_non_null(big->why);
	assert_non_null(strstr(big->why, "no free quota for 4\xc3\x97"
	    "nvidia-tesla-t4 in us-central1 (2 of 4 free; quota "));
	assert_non_null(strstr(big->why, "NVIDIA_T4_GPUS)"));
	assert_non_null(small->why);
	assert_string_equal(small->why, "waiting for higher-priority job 1 "
	    "(quota NVIDIA_T4_GPUS in us-central1)");
	store_job_free(big);
	store_job_free(small);
}

/* Equal priority: the small job behind the big one backfills. */
static void
test_sched_backfill(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t);
	quota(t, "us-central1", "NVIDIA_T4_GPUS", 2);
	quota(t, "us-central1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 0);
	(void)submit(t, "{\"image\":\"x\",\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":4},\"providers\":[\"gce\"],"
	    "\"regions\":[\"us-central1\"]}", 0, 1);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"regions\":"
	    "[\"us-central1\"]}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, job_pending_2));
	assert_int_equal(job_state(t, 1), JOB_QUEUED);
}

/* Two jobs that each fit only alone: one launches, one waits. */
static void
test_sched_no_double_count(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t);
	quota(t, "us-central1", "NVIDIA_T4_GPUS", 2);
	quota(t, "us-central1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 0);
	(void)submit(t, "{\"image\":\"x\",\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":2},\"providers\":[\"gce\"],"
	    "\"regions\":[\"us-central1\"]}", 0, 2);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	(void)run_until(t, 500, never);
	assert_int_equal(t->launches, 1);
	j = job(t, 2);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_non_null(j->why);
	assert_non_null(strstr(j->why, "(0 of 2 free; quota "));
	store_job_free(j);
}

/* Whys of many jobs go in one transaction; unknown ids are skipped. */
static void
test_sched_why_batch(void **state)
{
	struct t		*t = *state;
	int64_t			 ids[3] = { 1, 2, 99 };
	const char		*whys[3] = { "a", NULL, "c" };
	struct store_job	*j;

	NEED_FAKE(t);
	(void)submit(t, "{" T4 "}", 0, 2);
	assert_int_equal(store_jobs_set_why(t->store, ids, whys, 3, NULL), 2);
	j = job(t, 1);
	assert_string_equal(j->why, "a");
	store_job_free(j);
	j = job(t, 2);
	assert_null(j->why);
	store_job_free(j);
}

/* An observation with nothing known yet. */
static void
seen_init(struct prov_observed *o)
{
	memset(o, 0, sizeof *o);
	o->exit_code = -1;
}

static int
reconciled_running(void)
{
	return job_state(T, 1) == JOB_RUNNING;
}

static int
requeued(void)
{
	struct store_job	*j = job(T, 1);
	int			 ok = j->interruptions == 1;

	store_job_free(j);
	return ok;
}

/*
 * The reconciler: one poll call per cycle for many attempts in one
 * group; a resource listed running moves attempt and job; preempted
 * ends the attempt as an interruption and queues the job again.
 */
static void
test_reconcile_maps_states(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];
	int			 polls;

	NEED_FAKE(t);
	t->script[0].cloud_id = "vm-1";
	t->nscript = 1;
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"spot\":"
	    "\"require\",\"max_interruptions\":3}", 0, 1);
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	cloud_resource_name(store_install_id(t->store), 1, 1, name);
	seen_init(&t->seen[0]);
	t->seen[0].resource = name;
	t->seen[0].state = PROV_RUNNING;
	t->nseen = 1;
	assert_true(run_until(t, 10000, reconciled_running));
	polls = t->polls;
	(void)run_until(t, 2500, never);
	/* One aggregated listing a cycle, whatever the attempts. */
	assert_true(t->polls - polls >= 1 && t->polls - polls <= 3);

	t->seen[0].state = PROV_PREEMPTED;
	t->seen[0].message = "Instance was preempted.";
	assert_true(run_until(t, 10000, requeued));
	j = job(t, 1);
	assert_int_equal(j->failures, 0);
	assert_true(j->state == JOB_QUEUED || j->state == JOB_LAUNCHING ||
	    j->state == JOB_PENDING);
	store_job_free(j);
	/* The finished VM is deleted. */
	assert_true(run_until(t, 5000, cancelled_once));
	t->nseen = 0;
}

/* A resource with our label and no live attempt is an orphan. */
static void
test_reconcile_orphan(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"]}", 0, 1);
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	cloud_resource_name(store_install_id(t->store), 1, 1, name);
	seen_init(&t->seen[0]);
	t->seen[0].resource = name;
	t->seen[0].state = PROV_RUNNING;
	seen_init(&t->seen[1]);
	t->seen[1].resource = "gpuq-stray-1-1";
	t->seen[1].zone = "us-central1-a";
	t->seen[1].state = PROV_RUNNING;
	t->nseen = 2;
	assert_true(run_until(t, 10000, cancelled_once));
	assert_int_equal(job_state(t, 1), JOB_RUNNING);
	t->nseen = 0;
}

/*
 * Write attempt 1 of job ID on gce in us-central1-a straight into the
 * store, in STATE (launching or running since STARTED), with the job
 * moved to match: what a previous gpuqd left behind. LEFT_SPLIT: the
 * attempt row alone, the job still queued, as a gpuqd that wrote the
 * two in separate transactions could leave it.
 */
#define LEFT_SPLIT	(-1)
static void
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

/*
 * A crash between the launch's commit and the create call (LEFT_SPLIT:
 * an older gpuqd's crash between the attempt row and the job's move,
 * after which the job is put back in launching first): since the cloud
 * does not list the resource, it is launched again under the same name
 * and request id.
 */
static void
relaunch_after_crash(void **state, int left)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], rid[CLOUD_UUID_LEN];

	NEED_FAKE(t);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"]}", 0, 1);
	left_behind(t, 1, left, 0, name);
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	assert_int_equal(job_state(t, 1), JOB_LAUNCHING);
	sched_start(t->sched);
	assert_true(run_until(t, 10000, job_pending_1));
	assert_int_equal(t->launches, 1);
	assert_string_equal(t->resource, name);
	cloud_request_id(name, "", rid);
	assert_string_equal(t->request_id, rid);
	j = job(t, 1);
	assert_int_equal(j->attempts, 1);
	store_job_free(j);
}

static void
test_reconcile_relaunch_after_crash(void **state)
{
	relaunch_after_crash(state, ATTEMPT_LAUNCHING);
}

static void
test_reconcile_relaunch_after_split_crash(void **state)
{
	relaunch_after_crash(state, LEFT_SPLIT);
}

/* A run longer than max_runtime is stopped and the job fails. */
static void
test_reconcile_max_runtime(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX];

	NEED_FAKE(t);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],"
	    "\"max_runtime\":\"2m\"}", 0, 1);
	left_behind(t, 1, ATTEMPT_RUNNING, time(NULL) - 3600, name);
	seen_init(&t->seen[0]);
	t->seen[0].resource = name;
	t->seen[0].state = PROV_RUNNING;
	t->nseen = 1;
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
	assert_true(run_until(t, 10000, job_failed_1));
	assert_true(t->cancels >= 1);
	j = job(t, 1);
	assert_non_null(j->message);
	assert_non_null(strstr(j->message, "max_runtime"));
	/* Billed from the start it had: about an hour at 3.60 $/h. */
	assert_true(j->cost_usd > 3.5 && j->cost_usd < 3.8);
	store_job_free(j);
	t->nseen = 0;
}

static int
job_cancelled_1(void)
{
	return job_state(T, 1) == JOB_CANCELLED;
}

/* cancel: the resource is cancelled, then the job is cancelled. */
static void
test_reconcile_cancel(void **state)
{
	struct t	*t = *state;
	char		 name[CLOUD_NAME_MAX];

	NEED_FAKE(t);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"]}", 0, 1);
	left_behind(t, 1, ATTEMPT_RUNNING, time(NULL) - 60, name);
	seen_init(&t->seen[0]);
	t->seen[0].resource = name;
	t->seen[0].state = PROV_RUNNING;
	t->nseen = 1;
	start(t, 1);
	assert_int_equal(reconcile_start(t->rec, NULL), 0);
	sched_start(t->sched);
	assert_true(run_until(t, 3000, never) == 0);
	assert_int_equal(job_state(t, 1), JOB_RUNNING);
	/* What the api does on "cancel", then its hook. */
	assert_int_equal(store_job_transition(t->store, 1,
	    JOB_MASK(JOB_RUNNING), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	reconcile_cancel(t->rec, 1);
	assert_true(run_until(t, 10000, job_cancelled_1));
	assert_int_equal(t->cancels, 1);
	t->nseen = 0;
}

/* Two passes done; asks for the second once the first is. */
static int
passes_2(void)
{
	struct sched_stats	s;

	sched_get_stats(T->sched, &s);
	if (s.passes == 1)
		sched_wake(T->sched);
	return s.passes >= 2;
}

/*
 * 10,000 queued jobs, nothing can launch (GPUS_ALL_REGIONS 0, Vertex
 * not offered): the second pass (the first parses the specs) prices and
 * explains every job. The figure is printed; it must stay under 50 ms
 * times $GPUQ_TEST_TIMEOUT_SCALE (sanitizer builds are slower).
 */
static void
test_sched_pass_10000(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	const char		*scale = getenv("GPUQ_TEST_TIMEOUT_SCALE");
	double			 limit = 50;

	NEED_FAKE(t);
	if (scale != NULL && atof(scale) > 0)
		limit *= atof(scale);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0,
	    10000);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	assert_true(run_until(t, 60000, passes_2));
	sched_get_stats(t->sched, &s);
	print_message("pass over %lu queued jobs (%lu shape): %.1f ms, "
	    "whys written %lu\n", s.jobs_seen, s.shapes, s.pass_ms,
	    s.why_writes);
	assert_int_equal(s.jobs_seen, 10000);
	assert_int_equal(t->launches, 0);
	assert_true(s.pass_ms <= limit);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define C(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		cmocka_unit_test(test_sched_request_id),
		C(test_sched_plan_ranks),
		C(test_sched_plan_spot_policy),
		C(test_sched_plan_quota_bucket),
		C(test_sched_plan_gpus_all_regions),
		C(test_sched_plan_limits),
		C(test_sched_plan_cooldown),
		C(test_sched_plan_lambda_learnt),
		C(test_sched_launch),
		C(test_sched_ready_order),
		C(test_sched_ready_before_start),
		C(test_sched_launch_quota_error),
		C(test_sched_launch_stockout),
		C(test_sched_launch_invalid_fails),
		C(test_sched_launch_transient_backoff),
		C(test_sched_claim_for_higher_priority),
		C(test_sched_backfill),
		C(test_sched_no_double_count),
		C(test_sched_why_batch),
		C(test_reconcile_maps_states),
		C(test_reconcile_orphan),
		C(test_reconcile_relaunch_after_crash),
		C(test_reconcile_relaunch_after_split_crash),
		C(test_reconcile_max_runtime),
		C(test_reconcile_cancel),
		C(test_sched_pass_10000),
#undef C
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
