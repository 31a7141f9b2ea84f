/*
 * test-sched.c: daemon/sched.c on the real quota, price, attempt and
 * store code, over the fixture of cloudtest.h (a private simulated cloud
 * and scripted test providers).
 *
 * Cases: offer enumeration and filters (Spot policy, quota buckets,
 * GPUS_ALL_REGIONS, cool-downs, limits), the ranking, launches and what
 * each launch error does to the next placement, the claim that keeps a
 * big job from being starved, WHY texts, a pass over 10,000 queued
 * jobs, and that the loop it runs on stops as soon as a test's wait is
 * over. The reconciler's tests are in test-reconcile.c, the outcomes'
 * in test-attempt.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
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
#include <sqlite3.h>
#include <uv.h>

#include "common/clock.h"
#include "common/gpu.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/sched.h"
#include "daemon/sched-move.h"
#include "daemon/sched-offer.h"
#include "daemon/spec.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/price.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"
#include "tests/unit/cloudtest.h"

/* Ranked by expected cost; Spot stretched by λ; both kinds offered. */
static void
test_sched_plan_ranks(void **state)
{
	struct t	*t = *state;
	json_t		*p, *o;
	size_t		 i;
	double		 last = 0, hourly, exp;
	int		 spot = 0, standard = 0;

	NEED_FAKE(t->ut);
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

/* The hourly price of OFFERS' offer on PROV, REGION, ZONE, SPOT; -1. */
static double
offer_hourly(json_t *offers, json_t *like)
{
	json_t		*o;
	size_t		 i;
	const char	*keys[] = { "provider", "region", "zone" };
	size_t		 k;

	json_array_foreach(offers, i, o) {
		for (k = 0; k < 3; k++)
			if (!json_equal(json_object_get(o, keys[k]),
			    json_object_get(like, keys[k])) &&
			    (json_object_get(o, keys[k]) != NULL ||
			    json_object_get(like, keys[k]) != NULL))
				break;
		if (k == 3 && json_equal(json_object_get(o, "spot"),
		    json_object_get(like, "spot")))
			return json_real_value(json_object_get(o,
			    "hourly_usd"));
	}
	return -1;
}

/*
 * A gang of 3 (doc/DESIGN.md "Gangs") costs 3 times one machine in every
 * offer, and draws 3 GPUs of quota: with 2 T4s of quota, one machine
 * fits and the gang is set aside naming the bucket.
 */
static void
test_sched_plan_gang(void **state)
{
	struct t	*t = *state;
	json_t		*one, *gang, *o;
	size_t		 i, n = 0;
	double		 h;
	const char	*reason;

	NEED_FAKE(t->ut);
	start(t, 0);
	refresh(t);
	one = plan(t, "{" T4 ",\"command\":[\"t\"]}");
	gang = plan(t, "{" T4 ",\"command\":[\"t\"],\"nodes\":3}");
	json_array_foreach(json_object_get(gang, "offers"), i, o) {
		h = offer_hourly(json_object_get(one, "offers"), o);
		assert_true(h > 0);
		assert_float_equal(json_real_value(json_object_get(o,
		    "hourly_usd")), 3 * h, 1e-9);
		n++;
	}
	assert_true(n > 4);
	json_decref(one);
	json_decref(gang);

	quota(t, "us-central1", "NVIDIA_T4_GPUS", 2);
	refresh(t);
	one = plan(t, "{" T4 ",\"command\":[\"t\"],\"spot\":\"never\","
	    "\"providers\":[\"gce\"],\"regions\":[\"us-central1\"]}");
	assert_true(json_array_size(json_object_get(one, "offers")) > 0);
	gang = plan(t, "{" T4 ",\"command\":[\"t\"],\"spot\":\"never\","
	    "\"providers\":[\"gce\"],\"regions\":[\"us-central1\"],"
	    "\"nodes\":3}");
	assert_int_equal(json_array_size(json_object_get(gang, "offers")), 0);
	json_array_foreach(json_object_get(gang, "excluded"), i, o) {
		reason = json_string_value(json_object_get(o, "reason"));
		assert_non_null(strstr(reason, "NVIDIA_T4_GPUS"));
		assert_non_null(strstr(reason, "of 3 free"));
	}
	assert_true(json_array_size(json_object_get(gang, "excluded")) > 0);
	json_decref(one);
	json_decref(gang);
}

/* spot: never and require keep only their kind. */
static void
test_sched_plan_spot_policy(void **state)
{
	struct t	*t = *state;
	json_t		*p, *o;
	size_t		 i;

	NEED_FAKE(t->ut);
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

	NEED_FAKE(t->ut);
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

	NEED_FAKE(t->ut);
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

	NEED_FAKE(t->ut);
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

	NEED_FAKE(t->ut);
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

	NEED_FAKE(t->ut);
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
first_attempt(const struct store_attempt *a, void *arg)
{
	*(struct store_attempt **)arg = store_attempt_copy(a);
	return 1;
}

/*
 * The attempt keeps what the job would cost an hour as an on-demand
 * Vertex AI custom job of its shape in its first region (us-central1,
 * the first of gpuqd's by name): the catalog's Vertex GPU and host
 * prices (doc/DESIGN.md "Accounting").
 */
static void
assert_baseline(struct t *t, int64_t id)
{
	struct price		*pr = gcp_price(cloud_gcp(t->cloud));
	struct store_attempt	*a = NULL;
	double			 gpu, host;

	(void)store_attempt_list(t->store, id, first_attempt, &a, NULL);
	assert_non_null(a);
	assert_int_equal(price_gpu_hourly(pr, GCP_SERVICE_VERTEX,
	    "us-central1", "nvidia-tesla-t4", 1, 0, &gpu), 0);
	assert_int_equal(price_host_hourly(pr, GCP_SERVICE_VERTEX,
	    "us-central1", a->machine_type, 0, &host), 0);
	assert_true(gpu + host > a->hourly_usd);
	assert_float_equal(a->baseline_hourly_usd, gpu + host, 1e-9);
	store_attempt_free(a);
}

/*
 * A move's saving (doc/DESIGN.md "Moving to cheaper capacity"): the
 * price gap over the work left, less twice the cheaper place's price
 * of the work to redo, its restart and one more switch.
 */
static void
test_sched_move_saving(void **state)
{
	(void)state;
	/* $4.71 -> $2.22 with 10 h left, 20 min since the checkpoint,
	 * 10 min restart, 30 min interval: 24.90 - 2 x 2.22 x 70/60. */
	assert_true(fabs(sched_move_saving(4.71, 2.22, 2.22, 36000, 1200,
	    600, 1800, 0) - (24.90 - 2 * 2.22 * 70.0 / 60.0)) < 1e-9);
	/* Not cheaper, or nothing left: no saving. */
	assert_true(sched_move_saving(2.22, 2.22, 2.22, 36000, 0, 600,
	    1800, 0) == 0);
	assert_true(sched_move_saving(2.90, 2.22, 2.22, 0, 0, 600,
	    1800, 0) == 0);
	/* An hour left at $0.68/h less is not worth a switch: negative. */
	assert_true(sched_move_saving(2.90, 2.22, 2.22, 3600, 0, 600,
	    1800, 0) < 0);
	/* $2.50 -> $2.33 over 35 h, 5 min after a checkpoint: $5.95 less
	 * twice 2.33 x 55/60 is worth it where nothing refused lately;
	 * one strike left counts the switch a third time, and it is not. */
	assert_true(fabs(sched_move_saving(2.50, 2.33, 2.33, 126000, 300,
	    600, 1800, 0) - (0.17 * 35 - 2 * 2.33 * 55.0 / 60.0)) < 1e-9);
	assert_true(sched_move_saving(2.50, 2.33, 2.33, 126000, 300, 600,
	    1800, 1) < 0);
	/* Strikes count up to SCHED_STRIKE_MAX, none below 0. */
	assert_true(sched_move_saving(4.71, 2.22, 2.22, 36000, 0, 600,
	    1800, 99) == sched_move_saving(4.71, 2.22, 2.22, 36000, 0, 600,
	    1800, SCHED_STRIKE_MAX));
	assert_true(sched_move_saving(4.71, 2.22, 2.22, 36000, 0, 600,
	    1800, -1) == sched_move_saving(4.71, 2.22, 2.22, 36000, 0, 600,
	    1800, 0));
}

/* The work a move would lose: the phase since the newest checkpoint,
 * which may lag by whole intervals, or since the run's overhead ended. */
static void
test_sched_move_since(void **state)
{
	(void)state;
	/* Started at 1000, 600 s overhead, 1800 s interval, no checkpoint
	 * seen: the first is due at 3400; at 3000 the run has 1400 s. */
	assert_true(fabs(sched_move_since(3000, 1000, 0, 600, 1800) -
	    1400) < 1e-9);
	/* Just after that first one: 100 s. */
	assert_true(fabs(sched_move_since(3500, 1000, 0, 600, 1800) -
	    100) < 1e-9);
	/* Still in the overhead: nothing done, nothing lost. */
	assert_true(sched_move_since(1300, 1000, 0, 600, 1800) == 0);
	/* A checkpoint seen at 5000, listed two intervals late. */
	assert_true(fabs(sched_move_since(8700, 1000, 5000, 600, 1800) -
	    100) < 1e-9);
	/* No interval: the time since the checkpoint or the start. */
	assert_true(fabs(sched_move_since(8700, 1000, 5000, 600, 0) -
	    3700) < 1e-9);
	assert_true(fabs(sched_move_since(8700, 1000, 0, 600, 0) -
	    7700) < 1e-9);
	/* Looks every 600 s, checkpoints every 1800 s: a move waits for
	 * the look just after a checkpoint... */
	assert_true(sched_move_in_time(100, 1800, 600));
	assert_true(sched_move_in_time(600, 1800, 600));
	assert_false(sched_move_in_time(1400, 1800, 600));
	/* ...but not when no later look comes closer to one. */
	assert_true(sched_move_in_time(500, 300, 600));
	assert_true(sched_move_in_time(1400, 0, 600));
}

static void
on_tick(uv_timer_t *tm)
{
	(*(int *)tm->data)++;
}

static void
on_tick_closed(uv_handle_t *h)
{
	(*(int *)h->data)++;
}

/*
 * The harness stops running the loop once its condition holds, even
 * when a timer made it true at the start of a turn: libuv 1.44 runs due
 * timers before it polls, and the poll went on to the next timer, here a
 * minute off. That poll was the minute next_pass() sat out in
 * test_sched_incremental and its neighbours, over and over.
 */
static void
test_sched_harness_no_stall(void **state)
{
	struct unittest	*ut = unittest_new("test-sched");
	uv_loop_t	*loop = unittest_loop(ut);
	uv_timer_t	 now, later;
	uint64_t	 t0;
	int		 n = 0, m = 0;

	(void)state;
	now.data = &n;
	later.data = &m;
	assert_int_equal(uv_timer_init(loop, &now), 0);
	assert_int_equal(uv_timer_init(loop, &later), 0);
	assert_int_equal(uv_timer_start(&later, on_tick, 60000, 0), 0);
	assert_int_equal(uv_timer_start(&now, on_tick, 0, 0), 0);
	t0 = uv_hrtime();
	unittest_run_until(ut, &n, 1);
	assert_true(uv_hrtime() - t0 < 1000000000ULL);	/* 1 s */
	assert_int_equal(m, 0);
	uv_close((uv_handle_t *)&now, on_tick_closed);
	uv_close((uv_handle_t *)&later, on_tick_closed);
	unittest_run(ut);
	assert_int_equal(n, 2);
	assert_int_equal(m, 1);
	unittest_free(ut);
}

/* Where Spot has worn a job out: 3/4 of max_interruptions, rounded up;
 * never under SCHED_WORN_MIN (a fail-fast budget). */
static void
test_sched_spot_worn_at(void **state)
{
	(void)state;
	assert_int_equal(sched_spot_worn_at(20), 15);
	assert_int_equal(sched_spot_worn_at(5), 4);
	assert_int_equal(sched_spot_worn_at(4), 3);
	assert_int_equal(sched_spot_worn_at(3), 0);
	assert_int_equal(sched_spot_worn_at(0), 0);
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

	NEED_FAKE(t->ut);
	id = submit(t, "{" T4 ",\"env\":{\"A\":\"b\"}}", 0, 1);
	assert_int_equal(id, 1);
	start(t, 0);
	refresh(t);
	p = plan(t, "{" T4 "}");
	best = json_array_get(json_object_get(p, "offers"), 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, job_pending_1, t);
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
	assert_baseline(t, id);
}

/*
 * The scheduler's states: no launch before both the start and the
 * reconciler's "done" (sched_ready()) came, in either order.
 */
static void
ready_order(void **state, int ready_first)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	refresh(t);
	if (ready_first)
		sched_ready(t->sched);
	else
		sched_start(t->sched);
	unittest_run_for(t->ut, 300);
	assert_int_equal(t->launches, 0);
	if (ready_first)
		sched_start(t->sched);
	else
		sched_ready(t->sched);
	unittest_run_cond(t->ut, job_pending_1, t);
	assert_int_equal(t->launches, 1);
}

/* Started, not ready: no launch until the reconciler is done. */
static void
test_sched_ready_order(void **state)
{
	ready_order(state, 0);
}

/* The reconciler may be done before the start. */
static void
test_sched_ready_before_start(void **state)
{
	ready_order(state, 1);
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
launched_twice_pending(void *arg)
{
	struct t	*t = arg;

	return launched_twice(t) && job_pending_1(t);
}

static int
first_launch_queued(void *arg)
{
	struct t	*t = arg;

	return first_launch(t) && job_state(t, 1) == JOB_QUEUED;
}

/* A quota refusal ends the attempt, requeues, and the job goes on to
 * another place; it does not count as a failure. */
static void
test_sched_launch_quota_error(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;
	char			 first[64];

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_QUOTA;
	t->script[0].message = "Quota 'NVIDIA_T4_GPUS' exceeded.";
	t->nscript = 1;
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\"],\"spot\":\"never\"}",
	    0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, first_launch, t);
	(void)snprintf(first, sizeof first, "%s", t->region);
	unittest_run_cond(t->ut, launched_twice_pending, t);
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

	NEED_FAKE(t->ut);
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
	unittest_run_cond(t->ut, first_launch, t);
	(void)snprintf(first, sizeof first, "%s", t->zone);
	unittest_run_cond(t->ut, launched_twice_pending, t);
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

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_INVALID;
	t->script[0].message = "Invalid value for field 'image'";
	t->nscript = 1;
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, job_failed_1, t);
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

	NEED_FAKE(t->ut);
	t->script[0].fail = PROV_FAIL_TRANSIENT;
	t->script[0].message = "HTTP 503 UNAVAILABLE";
	t->nscript = 1;
	(void)submit(t, "{" T4 "}", 0, 1);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, first_launch_queued, t);
	j = job(t, 1);
	assert_non_null(j->why);
	assert_non_null(strstr(j->why, "after: HTTP 503 UNAVAILABLE"));
	assert_true(j->not_before > 0);
	store_job_free(j);
	unittest_run_cond(t->ut, job_pending_1, t);
	assert_int_equal(t->launches, 2);
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

	NEED_FAKE(t->ut);
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
	unittest_run_for(t->ut, 3000);
	sched_get_stats(t->sched, &st);
	assert_true(st.passes >= 1);
	assert_int_equal(t->launches, 0);
	big = job(t, 1);
	small = job(t, 2);
	assert_int_equal(small->state, JOB_QUEUED);
	assert_non_null(big->why);
	assert_non_null(strstr(big->why, "no free quota for 4\xc3\x97"
	    "nvidia-tesla-t4 in us-central1 (quota "));
	assert_non_null(strstr(big->why, "NVIDIA_T4_GPUS)"));
	/* The count is not stored (a job's end would rewrite every
	 * waiting why) but shown: what the pass saw. */
	assert_null(strstr(big->why, "free;"));
	assert_non_null(sched_why_live(t->sched, big->why));
	assert_non_null(strstr(sched_why_live(t->sched, big->why),
	    "no free quota for 4\xc3\x97nvidia-tesla-t4 in us-central1 "
	    "(2 of 4 free; quota "));
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

	NEED_FAKE(t->ut);
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
	unittest_run_cond(t->ut, job_pending_2, t);
	assert_int_equal(job_state(t, 1), JOB_QUEUED);
}

/* Two jobs that each fit only alone: one launches, one waits. */
static void
test_sched_no_double_count(void **state)
{
	struct t		*t = *state;
	struct store_job	*j;

	NEED_FAKE(t->ut);
	quota(t, "us-central1", "NVIDIA_T4_GPUS", 2);
	quota(t, "us-central1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 0);
	(void)submit(t, "{\"image\":\"x\",\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":2},\"providers\":[\"gce\"],"
	    "\"regions\":[\"us-central1\"]}", 0, 2);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, job_pending_1, t);
	unittest_run_for(t->ut, 500);
	assert_int_equal(t->launches, 1);
	j = job(t, 2);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_non_null(j->why);
	assert_non_null(strstr(j->why, "in us-central1 (quota "));
	assert_non_null(strstr(sched_why_live(t->sched, j->why),
	    "(0 of 2 free; quota "));
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

	NEED_FAKE(t->ut);
	(void)submit(t, "{" T4 "}", 0, 2);
	assert_int_equal(store_jobs_set_why(t->store, ids, whys, 3, NULL), 2);
	j = job(t, 1);
	assert_string_equal(j->why, "a");
	store_job_free(j);
	j = job(t, 2);
	assert_null(j->why);
	store_job_free(j);
}

/* Two passes done; asks for the second once the first is. */
static int
passes_2(void *arg)
{
	struct t		*t = arg;
	struct sched_stats	s;

	sched_get_stats(t->sched, &s);
	if (s.passes == 1)
		sched_wake(t->sched);
	return s.passes >= 2;
}

/*
 * 10,000 queued jobs, nothing can launch (GPUS_ALL_REGIONS 0, Vertex
 * not offered): the second pass (the first parses the specs) sees and
 * explains every job and launches none. Its time is printed, not
 * asserted: speed is bench/sched.py's to measure, and a loaded machine
 * would make a timed test flake.
 */
static void
test_sched_pass_10000(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;

	NEED_FAKE(t->ut);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0,
	    10000);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	unittest_run_cond(t->ut, passes_2, t);
	sched_get_stats(t->sched, &s);
	print_message("pass over %lu queued jobs (%lu shape): %.1f ms, "
	    "whys written %lu\n", s.jobs_seen, s.shapes, s.pass_ms,
	    s.why_writes);
	assert_int_equal(s.jobs_seen, 10000);
	assert_int_equal(s.shapes, 1);
	assert_int_equal(t->launches, 0);
}

/* Passes run so far reach passes_target. */
static unsigned long	passes_target;

static int
passes_reached(void *arg)
{
	struct t		*t = arg;
	struct sched_stats	 s;

	sched_get_stats(t->sched, &s);
	return s.passes >= passes_target;
}

/*
 * How long a pass woken by sched_wake() may take to come: it starts
 * within sched.c's SCHED_GAP_MAX_MS (1 s) and waits at most its
 * SCHED_QUOTA_WAIT_MS (5 s) for a quota refresh; the rest is slack for a
 * loaded machine. Longer is a lost wake-up or a stalled loop, which
 * fails here rather than sitting out UNITTEST_WAIT_MS.
 */
#define PASS_WAIT_MS	10000

/* Wake the scheduler and run its next pass; its stats into RET. */
static void
next_pass(struct t *t, struct sched_stats *ret)
{
	sched_get_stats(t->sched, ret);
	passes_target = ret->passes + 1;
	sched_wake(t->sched);
	unittest_run_cond_ms(t->ut, PASS_WAIT_MS, passes_reached, t);
	sched_get_stats(t->sched, ret);
}

#define L4	"\"image\":\"x\",\"accelerator\":{\"type\":"		\
	"\"nvidia-l4\",\"count\":1},\"providers\":[\"gce\",\"batch\"]"

/* A second scheduler over the same store has done a pass. */
static struct sched	*other;

static int
other_passed(void *arg)
{
	struct sched_stats	s;

	(void)arg;
	sched_get_stats(other, &s);
	return s.passes >= 1;
}

/*
 * The pass after one change redoes only what the change reaches
 * (doc/DESIGN.md "The pass"): nothing changed, nothing is read, priced
 * or written; a stockout cool-down of a T4 zone prices the T4 shape
 * again and not the L4 one; a cancel and a submit read those two jobs
 * alone. And what the incremental passes wrote is what a full pass
 * writes: a scheduler that reads everything afresh changes no why.
 */
static void
test_sched_incremental(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	struct quota_zone	 z[64];
	int64_t			 until;
	char			*cause = NULL;
	int			 n;

	NEED_FAKE(t->ut);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0, 20);
	(void)submit(t, "{" L4 "}", 0, 20);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	passes_target = 1;
	unittest_run_cond(t->ut, passes_reached, t);
	sched_get_stats(t->sched, &s);
	assert_int_equal(s.jobs_read, 40);
	assert_int_equal(s.jobs_seen, 40);
	assert_int_equal(s.shapes_priced, 2);
	assert_int_equal(s.why_writes, 40);

	/* Nothing changed: the first job of each shape is placed, the
	 * rest settled from their items. */
	next_pass(t, &s);
	assert_int_equal(s.jobs_read, 0);
	assert_int_equal(s.shapes_priced, 0);
	assert_int_equal(s.jobs_walked, 2);
	assert_int_equal(s.why_writes, 0);

	/* One zone stocks out for T4 Spot: the T4 shape alone. */
	n = quota_zones(gcp_quota(cloud_gcp(t->cloud)), NULL,
	    "nvidia-tesla-t4", z, 64);
	assert_true(n >= 1);
	assert_int_equal(store_cooldown_strike(t->store, z[0].zone,
	    "nvidia-tesla-t4", 1, clock_now(), 600, 3600, &until, &cause), 0);
	next_pass(t, &s);
	assert_int_equal(s.shapes_priced, 1);
	assert_int_equal(s.jobs_read, 0);
	assert_int_equal(s.jobs_seen, 40);

	/* A job leaves the queue, another comes: those two are read. */
	assert_int_equal(store_job_transition(t->store, 1,
	    JOB_MASK(JOB_QUEUED), JOB_CANCELLED, "test", NULL, &cause), 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0, 1);
	next_pass(t, &s);
	assert_int_equal(s.jobs_read, 2);
	assert_int_equal(s.jobs_seen, 40);
	assert_int_equal(s.shapes_priced, 0);
	assert_int_equal(s.why_writes, 1);

	/* A full pass from scratch finds every why already right. */
	other = sched_new(t->cloud);
	sched_start(other);
	sched_ready(other);
	unittest_run_cond(t->ut, other_passed, t);
	sched_get_stats(other, &s);
	assert_int_equal(s.jobs_read, 40);
	assert_int_equal(s.jobs_seen, 40);
	assert_int_equal(s.shapes_priced, 2);
	assert_int_equal(s.why_writes, 0);
	assert_int_equal(t->launches, 0);
	sched_close(other);
	other = NULL;
}

/* Read the catalog again now. */
static void
catalog(struct t *t)
{
	struct gcptest_result	res = { 0, 0, NULL };

	assert_int_equal(price_refresh(gcp_price(cloud_gcp(t->cloud)),
	    gcptest_result_cb, &res), 0);
	unittest_run_until(t->ut, &res.calls, 1);
	if (res.error != 0)
		fail_msg("catalog read: %s", res.cause);
	gcptest_result_done(&res);
}

#define T4_GCE	"{" T4 ",\"providers\":[\"gce\"],\"spot\":\"never\"}"

/*
 * A catalog read that moves one price (doc/DESIGN.md "The pass"): the
 * pass after it builds again the offers of the shape whose ways the
 * price reaches (the T4's) and keeps the other's (the L4's); a read
 * that moves nothing builds none. And the T4 job is then placed on the
 * new prices: not in the region that was cheapest and is now dearest.
 */
static void
test_sched_price_change(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	struct store_attempt	*a = NULL;
	json_t			*p, *o;
	char			 cheapest[64];

	NEED_FAKE(t->ut);
	start(t, 0);
	catalog(t);
	refresh(t);
	p = plan(t, T4_GCE);
	o = json_array_get(json_object_get(p, "offers"), 0);
	assert_non_null(o);
	(void)snprintf(cheapest, sizeof cheapest, "%s",
	    json_string_value(json_object_get(o, "region")));
	json_decref(p);

	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	refresh(t);
	(void)submit(t, T4_GCE, 0, 1);
	(void)submit(t, "{" L4 "}", 0, 1);
	sched_start(t->sched);
	sched_ready(t->sched);
	passes_target = 1;
	unittest_run_cond(t->ut, passes_reached, t);
	next_pass(t, &s);
	assert_int_equal(s.shapes_priced, 0);

	/* The catalog reads the same: nothing built again. */
	catalog(t);
	next_pass(t, &s);
	assert_int_equal(s.shapes, 2);
	assert_int_equal(s.shapes_priced, 0);
	assert_int_equal(s.jobs_walked, 2);

	/* Its T4 price moves: the T4 shape alone. */
	json_decref(fake_post(&t->ut->fake, "/_fake/price", "{\"service\":"
	    "\"compute\",\"gpu\":\"nvidia-tesla-t4\",\"region\":\"%s\","
	    "\"usage_type\":\"OnDemand\",\"usd_per_hour\":99}", cheapest));
	catalog(t);
	next_pass(t, &s);
	assert_int_equal(s.shapes, 2);
	assert_int_equal(s.shapes_priced, 1);
	assert_int_equal(s.jobs_read, 0);
	next_pass(t, &s);
	assert_int_equal(s.shapes_priced, 0);

	/* Room: the T4 job goes where it is now cheapest. */
	quota(t, "global", "GPUS_ALL_REGIONS", 8);
	refresh(t);
	next_pass(t, &s);
	unittest_run_cond(t->ut, job_pending_1, t);
	(void)store_attempt_list(t->store, 1, first_attempt, &a, NULL);
	assert_non_null(a);
	assert_string_not_equal(a->region, cheapest);
	assert_true(a->hourly_usd < 99);
	store_attempt_free(a);
}

/*
 * A catalog read that ends in the wall clock's second of the one before
 * it moves the offers all the same: the pass tells reads apart by
 * price_reads(). It compared price_fetched_at(), whole seconds, and
 * kept the old prices (a fast test_sched_price_change saw it). Tried
 * until two reads share a second, which the first try nearly always
 * gives; skipped if none did (a machine too loaded to read the catalog
 * twice in one second).
 */
static void
test_sched_price_same_second(void **state)
{
	struct t		*t = *state;
	struct price		*pr;
	struct sched_stats	 s;
	time_t			 at;
	int			 i, same = 0;

	NEED_FAKE(t->ut);
	start(t, 0);
	pr = gcp_price(cloud_gcp(t->cloud));
	catalog(t);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	refresh(t);
	(void)submit(t, T4_GCE, 0, 1);
	sched_start(t->sched);
	sched_ready(t->sched);
	passes_target = 1;
	unittest_run_cond(t->ut, passes_reached, t);
	for (i = 0; i < 5 && !same; i++) {
		json_decref(fake_post(&t->ut->fake, "/_fake/price",
		    "{\"service\":\"compute\",\"gpu\":\"nvidia-tesla-t4\","
		    "\"region\":\"us-central1\",\"usage_type\":\"OnDemand\","
		    "\"usd_per_hour\":%d}", 50 + i));
		at = price_fetched_at(pr);
		catalog(t);
		same = price_fetched_at(pr) == at;
		next_pass(t, &s);
		assert_int_equal(s.shapes_priced, 1);
	}
	if (!same)
		skip();
}

/*
 * A pass waiting for a slow quota refresh runs on what is known at the
 * wait's end (SCHED_QUOTA_WAIT_MS, 5 s) even when a sooner wake-up came
 * meanwhile: sched_wake_at() took the wait's timer, and the pass it ran
 * went back to waiting without arming the wait's end again, so the pass
 * came only when the refresh ended (here 15 s).
 */
static void
test_sched_wake_at_keeps_quota_wait(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	struct http_stats	 hs;
	char			*cause = NULL;

	NEED_FAKE(t->ut);
	assert_int_equal(conf_set(&t->conf, "scheduler", "quota_ttl", "1s",
	    &cause), 0);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0, 1);
	start(t, 0);
	catalog(t);
	refresh(t);
	sched_start(t->sched);
	sched_ready(t->sched);
	passes_target = 1;
	unittest_run_cond(t->ut, passes_reached, t);

	/* The refresh of the next pass, due in a second, hangs. */
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"method\":"
	    "\"GET\",\"path\":\"/regions/us-central1$\",\"latency_ms\":"
	    "15000}"));
	unittest_run_for(t->ut, 1500);
	http_get_stats(gcp_http(cloud_gcp(t->cloud)), &hs);
	assert_true(hs.in_flight >= 1);
	sched_get_stats(t->sched, &s);
	passes_target = s.passes + 1;
	sched_wake_at(t->sched, clock_now() + 1);
	unittest_run_cond_ms(t->ut, 8000, passes_reached, t);
}

/* Run SQL on the store's file from a connection of its own: another
 * program's write, as PRAGMA data_version sees it. */
static void
foreign_sql(struct t *t, const char *sql)
{
	sqlite3	*db;
	char	*path = unittest_path(t->ut, "gpuq.db"), *err = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(db);
	free(path);
}

/*
 * Another program wrote the queue: the pass after it reads it whole
 * from the covering index and keeps the item of each job it knows, in
 * place (doc/DESIGN.md "The pass"). A why written over is put back; a
 * job held by the other program leaves the set; one whose priority
 * moved is read with its spec and placed in its new order; no other
 * row is read with its spec. And the set is the one a scheduler that
 * reads everything afresh builds: it changes no why.
 */
static void
test_sched_whole_read(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	struct store_job	*a, *b;
	char			*sql;

	NEED_FAKE(t->ut);
	quota(t, "global", "GPUS_ALL_REGIONS", 0);
	(void)submit(t, "{" T4 ",\"providers\":[\"gce\",\"batch\"]}", 0, 20);
	(void)submit(t, "{" L4 "}", 0, 20);
	start(t, 0);
	sched_start(t->sched);
	sched_ready(t->sched);
	passes_target = 1;
	unittest_run_cond(t->ut, passes_reached, t);
	next_pass(t, &s);
	assert_int_equal(s.jobs_read, 0);

	sql = xprintf("UPDATE jobs SET why = 'written by another program' "
	    "WHERE id = 3; UPDATE jobs SET priority = 5 WHERE id = 30; "
	    "UPDATE jobs SET state = %d WHERE id = 12;", JOB_HELD);
	foreign_sql(t, sql);
	free(sql);
	next_pass(t, &s);
	assert_int_equal(s.jobs_read, 39);
	assert_int_equal(s.jobs_seen, 39);
	assert_int_equal(s.jobs_read_whole, 1);	/* job 30 */
	assert_int_equal(s.shapes_priced, 0);
	assert_int_equal(s.why_writes, 1);	/* job 3's */
	a = job(t, 3);
	b = job(t, 4);
	assert_string_equal(a->why, b->why);
	store_job_free(a);
	store_job_free(b);

	/* Nothing changed since: nothing read, nothing written. */
	next_pass(t, &s);
	assert_int_equal(s.jobs_read, 0);
	assert_int_equal(s.why_writes, 0);

	other = sched_new(t->cloud);
	sched_start(other);
	sched_ready(other);
	unittest_run_cond(t->ut, other_passed, t);
	sched_get_stats(other, &s);
	assert_int_equal(s.jobs_seen, 39);
	assert_int_equal(s.why_writes, 0);
	sched_close(other);
	other = NULL;
}

/* Job 1 has ended. */
static int
job_succeeded_1(void *arg)
{
	return job_state(arg, 1) == JOB_SUCCEEDED;
}

#define T4_UC1	"\"providers\":[\"gce\"],\"regions\":[\"us-central1\"]," \
	"\"spot\":\"never\""

/*
 * A job's end frees quota: the count every waiting job's why shows
 * moves ("2 of 4 free" to "3 of 4 free"), their situation does not.
 * The passes after it rewrite none of their stored whys -- at 100,000
 * queued jobs that was 25,000 rows in one pass (doc/DESIGN.md "The
 * pass") -- and what a user is shown follows the count.
 */
static void
test_sched_job_end_keeps_whys(void **state)
{
	struct t		*t = *state;
	struct sched_stats	 s;
	struct store_job	*j;
	char			 name[CLOUD_NAME_MAX], *before[21];
	const char		*live;
	int64_t			 id;

	NEED_FAKE(t->ut);
	quota(t, "us-central1", "NVIDIA_T4_GPUS", 3);
	launched_listed(t, "{" T4 "," T4_UC1 "}", PROV_RUNNING, name);
	unittest_run_cond(t->ut, job_running_1, t);
	/* Its VM holds one T4, as the cloud's usage says. */
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"usage\":1}"));
	refresh(t);
	(void)submit(t, "{\"image\":\"x\",\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":4}," T4_UC1 "}", 0, 20);
	next_pass(t, &s);
	next_pass(t, &s);
	for (id = 2; id <= 21; id++) {
		j = job(t, id);
		assert_int_equal(j->state, JOB_QUEUED);
		assert_non_null(j->why);
		assert_null(strstr(j->why, " free;"));
		live = sched_why_live(t->sched, j->why);
		assert_non_null(live);
		assert_non_null(strstr(live, "(2 of 4 free; quota "
		    "NVIDIA_T4_GPUS)"));
		before[id - 2] = xstrdup(j->why);
		store_job_free(j);
	}

	/* Job 1 ends; its VM and its T4 go. */
	t->seen[0].state = PROV_SUCCEEDED;
	t->seen[0].exit_code = 0;
	unittest_run_cond(t->ut, job_succeeded_1, t);
	t->nseen = 0;
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"usage\":0}"));
	refresh(t);
	next_pass(t, &s);
	assert_int_equal(s.why_writes, 0);
	assert_int_equal(t->launches, 1);
	for (id = 2; id <= 21; id++) {
		j = job(t, id);
		assert_int_equal(j->state, JOB_QUEUED);
		assert_string_equal(j->why, before[id - 2]);
		live = sched_why_live(t->sched, j->why);
		assert_non_null(live);
		assert_non_null(strstr(live, "(3 of 4 free; quota "
		    "NVIDIA_T4_GPUS)"));
		free(before[id - 2]);
		store_job_free(j);
	}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
#define C(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		cmocka_unit_test(test_sched_harness_no_stall),
		cmocka_unit_test(test_sched_spot_worn_at),
		cmocka_unit_test(test_sched_move_saving),
		cmocka_unit_test(test_sched_move_since),
		cmocka_unit_test(test_sched_request_id),
		C(test_sched_plan_ranks),
		C(test_sched_plan_gang),
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
		C(test_sched_pass_10000),
		C(test_sched_incremental),
		C(test_sched_job_end_keeps_whys),
		C(test_sched_whole_read),
		C(test_sched_price_change),
		C(test_sched_price_same_second),
		C(test_sched_wake_at_keeps_quota_wait),
#undef C
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
