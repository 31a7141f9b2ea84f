/*
 * test-sched-place.c: daemon/sched-place.c on buckets the test loads
 * itself (no quota.c) -- which offer a job takes, the why for each
 * blocking reason, the claim rules (priority, starvation), the
 * backfill shortcut, preferred zones, and the plan's verdicts.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/sched-offer.h"
#include "daemon/sched-place.h"
#include "providers/provider.h"
#include "tests/unit/schedtest.h"

#define NOW	1000000

#define T4	"{\"accelerator\":{\"type\":\"nvidia-tesla-t4\"," \
		"\"count\":1},\"machine_type\":\"n1-standard-8\"," \
		"\"spot\":\"never\"}"

struct fixture {
	struct st_market	 t;
	struct sched_ctx	 ctx;
	struct sched_shape	*sh;
	struct sched_job	 a, b;		/* two jobs of the shape */
};

/* gce in r1 ($1/h) and r2 ($2/h), one zone each; buckets unknown. */
static int
setup(void **state)
{
	struct fixture	*f = calloc(1, sizeof *f);

	st_init(&f->t, "gce", 0.1);
	st_zone(&f->t, "r1-a", "r1", 4);
	st_zone(&f->t, "r2-a", "r2", 4);
	st_price(&f->t, "gce", "r1", 0, 1);
	st_price(&f->t, "gce", "r2", 0, 2);
	f->sh = st_shape(&f->t, T4);
	f->ctx.now = NOW;
	f->ctx.gen = 1;
	sched_place_buckets(&f->ctx, f->sh);
	f->a.id = 1;
	f->a.shape = f->sh;
	f->a.hours = 1;
	f->b = f->a;
	f->b.id = 2;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	sched_offer_shape_free(f->sh);
	sched_ctx_done(&f->ctx);
	free(f);
	return 0;
}

/* Job J of F is placed on Spot in ZONE. */
static void
placed_spot(struct fixture *f, struct sched_job *j, const char *zone)
{
	struct sched_verdict	v;

	sched_place(&f->ctx, j, 0, &v);
	assert_non_null(v.offer);
	assert_true(v.offer->spot);
	assert_string_equal(v.offer->zone, zone);
	sched_verdict_done(&v);
}

/* Set bucket (REGION, METRIC) of Compute Engine to FREE of LIMIT. */
static struct sched_bucket *
bucket(struct fixture *f, const char *region, const char *metric,
    double free_, double limit)
{
	struct sched_bucket	*b;

	b = &f->ctx.b[sched_bucket(&f->ctx, GCP_SERVICE_GCE, region,
	    metric)];
	b->loaded = b->known = 1;
	b->free = free_;
	b->limit = limit;
	return b;
}

static void
no_gpus(struct fixture *f)
{
	bucket(f, "r1", "NVIDIA_T4_GPUS", 0, 4);
	bucket(f, "r2", "NVIDIA_T4_GPUS", 0, 4);
}

/* The cheapest offer with room; unknown quota counts as room. */
static void
test_place_takes_cheapest(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;

	sched_place(&f->ctx, &f->a, 0, &v);
	assert_non_null(v.offer);
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
	bucket(f, "r1", "NVIDIA_T4_GPUS", 0, 4);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_non_null(v.offer);
	assert_string_equal(v.offer->region, "r2");
	sched_verdict_done(&v);
}

/*
 * [scheduler] spot_wait: a job that would take a dearer offer that is
 * not Spot (standard at $3/h) while the cheaper Spot offer ($1/h) is set
 * aside only by a stockout cool-down waits for Spot, says so, and after
 * spot_wait takes the dearer offer; with spot_wait 0, or a Spot offer
 * that is not cheaper, it does not wait.
 */
static void
test_place_wait_for_spot(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;
	struct sched_shape	*sh;
	size_t			 spot;

	spot = f->t.nprices;
	st_price(&f->t, "gce", "r1", 1, 1);
	st_price(&f->t, "gce", "r1", 0, 3);
	st_price(&f->t, "gce", "r2", 0, 4);
	st_cool(&f->t, "r1-a", "nvidia-tesla-t4", 1, NOW + 600);
	f->t.m.spot_wait = 3600;
	sh = st_shape(&f->t, "{\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":1},\"machine_type\":"
	    "\"n1-standard-8\"}");
	sched_place_buckets(&f->ctx, sh);
	f->a.shape = f->b.shape = sh;
	assert_true(sh->spot_cooled_until == NOW + 600);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_null(v.offer);
	assert_true(v.spot_wait);
	assert_non_null(strstr(v.why, "waiting for Spot"));
	sched_verdict_done(&v);
	/* Still within spot_wait. */
	f->ctx.now = NOW + 3599;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_null(v.offer);
	sched_verdict_done(&v);
	/* Waited long enough: the dearer offer. */
	f->ctx.now = NOW + 3600;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_non_null(v.offer);
	assert_false(v.offer->spot);
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
	/* Another job's wait is its own. */
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_null(v.offer);
	sched_verdict_done(&v);
	/* Its deadline bounds it (spot_wait_end, sched-deadline.c): at the
	 * bound it takes the dearer offer, before it still waits. */
	f->b.spot_wait_end = f->ctx.now + 1;
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_null(v.offer);
	sched_verdict_done(&v);
	f->b.spot_wait_end = f->ctx.now;
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_non_null(v.offer);
	assert_false(v.offer->spot);
	sched_verdict_done(&v);
	f->b.spot_wait_end = 0;
	/* spot_wait 0: no wait. */
	f->t.m.spot_wait = 0;
	st_build(&f->t, sh);
	sched_place_buckets(&f->ctx, sh);	/* as each pass does */
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_non_null(v.offer);
	assert_false(v.offer->spot);
	sched_verdict_done(&v);
	/* Spot dearer than the standard offer: no wait either. */
	f->t.m.spot_wait = 3600;
	f->b.spot_wait_since = 0;
	f->t.prices[spot].hourly = 5;
	st_build(&f->t, sh);
	sched_place_buckets(&f->ctx, sh);
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_non_null(v.offer);
	assert_false(v.offer->spot);
	sched_verdict_done(&v);
	sched_offer_shape_free(sh);
}

/*
 * A reserved offer draws on its reservation's bucket alone, counted in
 * GPUs from the free VMs: once a launch takes the last one (sched.c
 * counts the bucket down), the next job of the pass goes elsewhere,
 * even with no quota left, which the reservation never needed.
 */
static void
test_place_reservation_claimed_in_pass(void **state)
{
	struct fixture		*f = *state;
	struct sched_resv	 r;
	struct sched_verdict	 v;
	struct sched_bucket	*b;

	memset(&r, 0, sizeof r);
	sched_name(r.name, "pool");
	sched_name(r.zone, "r2-a");
	sched_name(r.region, "r2");
	r.free_vms = 1;
	r.count = 3;
	f->t.m.resv = &r;
	f->t.m.nresv = 1;
	st_build(&f->t, f->sh);
	sched_place_reset(&f->ctx);
	sched_place_buckets(&f->ctx, f->sh);
	bucket(f, "r2", "NVIDIA_T4_GPUS", 0, 4);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_non_null(v.offer);
	assert_string_equal(v.offer->reservation, "pool");
	assert_int_equal(v.offer->all_b, -1);
	assert_int_equal(v.offer->cpu_b, -1);
	b = &f->ctx.b[v.offer->gpu_b];
	assert_string_equal(b->metric, "reservation pool");
	assert_string_equal(b->region, "r2-a");
	assert_float_equal(b->free, 1, 0);
	assert_float_equal(b->limit, 3, 0);
	b->free -= 1;			/* as sched_launch_start() does */
	sched_verdict_done(&v);
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_non_null(v.offer);
	assert_string_equal(v.offer->reservation, "");
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
	f->t.m.resv = NULL;
	f->t.m.nresv = 0;
}

/* The why of each blocking reason. */
static void
test_place_whys(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;

	no_gpus(f);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_null(v.offer);
	assert_int_equal(v.reason, SCHED_X_QUOTA);
	assert_true(v.quota);
	/* Stored without the count, which a job's end moves; shown
	 * with it. */
	assert_string_equal(v.why, "no free quota for 1\xc3\x97"
	    "nvidia-tesla-t4 in r1, r2 (quota NVIDIA_T4_GPUS)");
	assert_string_equal(v.live, "no free quota for 1\xc3\x97"
	    "nvidia-tesla-t4 in r1, r2 (0 of 1 free; quota NVIDIA_T4_GPUS)");
	sched_verdict_done(&v);

	bucket(f, "r1", "NVIDIA_T4_GPUS", 4, 4);
	bucket(f, "r2", "NVIDIA_T4_GPUS", 4, 4);
	bucket(f, QUOTA_GLOBAL, "GPUS_ALL_REGIONS", 0, 8);
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_int_equal(v.reason, SCHED_X_QUOTA_ALL);
	assert_string_equal(v.why, "no free quota for 1\xc3\x97"
	    "nvidia-tesla-t4: GPUS_ALL_REGIONS has too few free");
	assert_string_equal(v.live, "no free quota for 1\xc3\x97"
	    "nvidia-tesla-t4: GPUS_ALL_REGIONS has 0 of 1 free");
	sched_verdict_done(&v);
}

static void
test_place_why_cpu(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;

	bucket(f, "r1", "CPUS", 4, 24);
	bucket(f, "r2", "CPUS", 2, 24);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_int_equal(v.reason, SCHED_X_QUOTA_CPU);
	assert_string_equal(v.why, "no free CPU quota for n1-standard-8 "
	    "(8 vCPUs) in r1, r2");
	assert_string_equal(v.live, "no free CPU quota for n1-standard-8 "
	    "(8 vCPUs) in r1, r2 (4 free)");
	sched_verdict_done(&v);
}

static void
test_place_why_limits(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;

	f->a.max_hourly = 0.5;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_int_equal(v.reason, SCHED_X_HOURLY);
	assert_false(v.quota);
	assert_null(v.live);	/* no count to show */
	assert_string_equal(v.why, "over max_hourly_usd 0.50: cheapest "
	    "offer $1.00/h");
	sched_verdict_done(&v);

	f->a.max_hourly = 0;
	f->a.max_total = 5;
	f->a.hours = 10;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_int_equal(v.reason, SCHED_X_TOTAL);
	assert_string_equal(v.why, "over max_total_usd 5.00: cheapest offer "
	    "expected $10.00 for 10 h");
	sched_verdict_done(&v);

	/* Within the total in r1 only. */
	f->a.max_total = 15;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
}

/*
 * The deadline bridge's question (sched_place_spot_first()): would the
 * job take Spot now? Not when the Spot offers ranked first are places
 * it avoids: a job sent back to Spot there launched flex-start again,
 * forty times over in the replay.
 */
static void
test_place_spot_first(void **state)
{
	struct fixture		*f = *state;
	struct sched_shape	*sh;
	const struct provider	*gce;

	st_price(&f->t, "gce", "r1", 1, 0.5);
	st_price(&f->t, "gce", "r2", 1, 0.7);
	sh = st_shape(&f->t, "{\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":1},\"machine_type\":"
	    "\"n1-standard-8\"}");
	sched_place_buckets(&f->ctx, sh);
	f->a.shape = sh;
	gce = sh->offers[0].prov;
	assert_true(sh->offers[0].spot);
	assert_true(sched_place_spot_first(&f->a, NOW));
	/* r1's Spot avoided: r2's is next, still Spot. */
	sched_avoid_kind(&f->a, gce, "r1", CAPACITY_SPOT, NOW + 60);
	assert_true(sched_place_spot_first(&f->a, NOW));
	/* Both avoided: standard comes first. */
	sched_avoid_kind(&f->a, gce, "r2", CAPACITY_SPOT, NOW + 60);
	assert_false(sched_place_spot_first(&f->a, NOW));
	/* Until the avoidance ends. */
	assert_true(sched_place_spot_first(&f->a, NOW + 60));
	f->a.shape = f->sh;
	sched_offer_shape_free(sh);
}

/* A place that refused the job lately is skipped until its time. */
static void
test_place_avoid(void **state)
{
	struct fixture		*f = *state;
	const struct provider	*gce = f->sh->offers[0].prov;
	struct sched_verdict	 v;

	sched_avoid(&f->a, gce, "r1", NOW + 60);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->region, "r2");
	sched_verdict_done(&v);
	sched_avoid(&f->a, gce, "r2", NOW + 60);
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_null(v.offer);
	assert_int_equal(v.reason, SCHED_X_AVOID);
	assert_string_equal(v.why, "the cloud refused it lately in every "
	    "allowed place; trying again soon");
	sched_verdict_done(&v);
	f->ctx.now = NOW + 60;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
}

/*
 * A place that refused lately takes one job a pass (doc/DESIGN.md
 * "Places that refused"): the next job of the pass goes to its next
 * offer, Spot elsewhere; with only capacity that is not Spot left, it
 * waits for the probe's answer rather than pay for it. The next pass,
 * and a place with no strikes, take any number.
 */
static void
test_place_probe_struck(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;
	struct sched_shape	*sh;
	struct sched_strike	 k;

	st_price(&f->t, "gce", "r1", 1, 0.5);
	st_price(&f->t, "gce", "r2", 1, 0.6);
	memset(&k, 0, sizeof k);
	sched_name(k.zone, "r1-a");
	sched_name(k.gpu, "nvidia-tesla-t4");
	k.spot = CAPACITY_SPOT;
	k.strikes = 1;
	k.until = NOW - 1;
	f->t.m.strike = &k;
	f->t.m.nstrike = 1;
	f->t.m.now = NOW;
	sh = st_shape(&f->t, "{\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":1},\"machine_type\":"
	    "\"n1-standard-8\"}");
	sched_place_buckets(&f->ctx, sh);
	f->a.shape = f->b.shape = sh;
	placed_spot(f, &f->a, "r1-a");
	placed_spot(f, &f->b, "r2-a");
	/* The next pass probes again. */
	f->ctx.gen++;
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_string_equal(v.offer->zone, "r1-a");
	sched_verdict_done(&v);
	/* r2's Spot dearer than standard at $1/h, and b waits. */
	f->t.prices[f->t.nprices - 1].hourly = 5;
	st_build(&f->t, sh);
	sched_place_buckets(&f->ctx, sh);
	f->ctx.gen++;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_true(v.offer->spot);
	sched_verdict_done(&v);
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_null(v.offer);
	assert_int_equal(v.reason, SCHED_X_AVOID);
	assert_false(v.quota);
	sched_verdict_done(&v);
	/* Unless its deadline allows no wait. */
	f->b.spot_wait_end = f->ctx.now;
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_non_null(v.offer);
	assert_false(v.offer->spot);
	sched_verdict_done(&v);
	f->b.spot_wait_end = 0;
	/* Forgiven: both go to r1-a Spot. */
	k.strikes = 0;
	st_build(&f->t, sh);
	sched_place_buckets(&f->ctx, sh);
	f->ctx.gen++;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->zone, "r1-a");
	sched_verdict_done(&v);
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_string_equal(v.offer->zone, "r1-a");
	assert_true(v.offer->spot);
	sched_verdict_done(&v);
	f->t.m.strike = NULL;
	f->t.m.nstrike = 0;
	sched_offer_shape_free(sh);
}

/* A stockout's named zones are tried first while the hint lasts. */
static void
test_place_prefer(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;

	(void)snprintf(f->a.prefer, sizeof f->a.prefer, "r2-a,r9-b");
	f->a.prefer_until = NOW + 1;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->zone, "r2-a");
	sched_verdict_done(&v);
	f->a.prefer_until = NOW;
	sched_place(&f->ctx, &f->a, 0, &v);
	assert_string_equal(v.offer->zone, "r1-a");
	sched_verdict_done(&v);
}

/* The claim rules. */
static void
test_place_claimed_rule(void **state)
{
	struct sched_bucket	b;

	(void)state;
	memset(&b, 0, sizeof b);
	assert_false(sched_claimed(&b, 7, 0, NOW));	/* unclaimed */
	b.claim_id = 7;
	b.claim_prio = 5;
	b.claim_since = NOW;
	assert_false(sched_claimed(&b, 7, 0, NOW));	/* its own */
	assert_true(sched_claimed(&b, 8, 4, NOW));	/* lower priority */
	assert_false(sched_claimed(&b, 8, 6, NOW));	/* higher */
	assert_false(sched_claimed(&b, 8, 5, NOW + SCHED_STARVE_SEC - 1));
	assert_true(sched_claimed(&b, 8, 5, NOW + SCHED_STARVE_SEC));
}

/* A job blocked by quota claims its buckets: a lower-priority job may
 * not take room freed there, and says whom it waits for. */
static void
test_place_claims(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;
	struct sched_bucket	*b;

	no_gpus(f);
	sched_place(&f->ctx, &f->a, 5, &v);
	assert_true(v.quota);
	assert_int_equal(f->a.blocked_since, NOW);
	sched_verdict_done(&v);
	b = bucket(f, "r1", "NVIDIA_T4_GPUS", 1, 4);
	assert_int_equal(b->claim_id, 1);
	assert_int_equal(b->claim_prio, 5);

	sched_place(&f->ctx, &f->b, 1, &v);
	assert_null(v.offer);
	assert_int_equal(v.reason, SCHED_X_CLAIMED);
	assert_int_equal(v.claim_id, 1);
	assert_string_equal(v.why, "waiting for higher-priority job 1 "
	    "(quota NVIDIA_T4_GPUS in r1)");
	sched_verdict_done(&v);

	/* The claimer itself, and an equal priority before starvation. */
	sched_place(&f->ctx, &f->b, 5, &v);
	assert_non_null(v.offer);
	sched_verdict_done(&v);
	f->ctx.now = NOW + SCHED_STARVE_SEC;
	sched_place(&f->ctx, &f->b, 5, &v);
	assert_null(v.offer);
	sched_verdict_done(&v);
	sched_place(&f->ctx, &f->a, 5, &v);
	assert_string_equal(v.offer->region, "r1");
	sched_verdict_done(&v);
}

/* Backfill: the first failure of a shape answers for the rest of the
 * pass, with the same limits and no hints. */
static void
test_place_fast_why(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;
	char			*why;

	no_gpus(f);
	assert_null(sched_place_fast_why(&f->ctx, &f->b, 0));
	sched_place(&f->ctx, &f->a, 3, &v);
	sched_place_fail_note(&f->ctx, &f->a, &v);
	why = sched_place_fast_why(&f->ctx, &f->b, 3);
	assert_string_equal(why, v.why);
	free(why);
	why = sched_place_fast_why(&f->ctx, &f->b, 1);
	assert_string_equal(why, v.why);
	free(why);
	f->b.max_hourly = 9;
	assert_null(sched_place_fast_why(&f->ctx, &f->b, 3));
	f->b.max_hourly = 0;
	f->b.prefer_until = NOW + 10;
	(void)snprintf(f->b.prefer, sizeof f->b.prefer, "r1-a");
	assert_null(sched_place_fast_why(&f->ctx, &f->b, 3));
	f->b.prefer_until = 0;
	f->ctx.gen++;
	assert_null(sched_place_fast_why(&f->ctx, &f->b, 3));
	sched_verdict_done(&v);

	/* Room under job 1's claim: B (priority 2) notes whom it waits
	 * for, and a job of priority 1 after it is told so. */
	bucket(f, "r1", "NVIDIA_T4_GPUS", 1, 4);
	sched_place(&f->ctx, &f->b, 2, &v);
	assert_int_equal(v.reason, SCHED_X_CLAIMED);
	sched_place_fail_note(&f->ctx, &f->b, &v);
	sched_verdict_done(&v);
	why = sched_place_fast_why(&f->ctx, &f->b, 1);
	assert_string_equal(why, "waiting for higher-priority job 1 "
	    "(quota NVIDIA_T4_GPUS in r1)");
	free(why);
}

/* The plan: ranked offers with room, the rest with their reasons. */
static void
test_place_plan(void **state)
{
	struct fixture	*f = *state;
	json_t		*plan, *o, *e;

	bucket(f, "r1", "NVIDIA_T4_GPUS", 0, 4);
	plan = sched_place_plan(&f->ctx, &f->a, 0);
	o = json_object_get(plan, "offers");
	e = json_object_get(plan, "excluded");
	assert_int_equal(json_array_size(o), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(o, 0), "region")), "r2");
	assert_int_equal(json_integer_value(json_object_get(
	    json_array_get(o, 0), "rank")), 1);
	assert_int_equal(json_array_size(e), 1);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(e, 0), "reason")), "no free quota: "
	    "NVIDIA_T4_GPUS in r1 has 0 of 1 free");
	assert_null(json_object_get(plan, "why"));
	json_decref(plan);

	f->a.max_hourly = 1.5;
	bucket(f, "r1", "NVIDIA_T4_GPUS", 4, 4);
	bucket(f, "r1", "CPUS", 0, 24);
	plan = sched_place_plan(&f->ctx, &f->a, 0);
	e = json_object_get(plan, "excluded");
	assert_int_equal(json_array_size(e), 2);
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(e, 0), "reason")), "no free CPU quota: CPUS in "
	    "r1 has 0 of 8 free");
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(e, 1), "reason")), "$2.00/h is over "
	    "max_hourly_usd 1.50");
	assert_string_equal(json_string_value(json_object_get(plan, "why")),
	    "no free CPU quota for n1-standard-8 (8 vCPUs) in r1 (0 free)");
	json_decref(plan);
}

/*
 * A deadline job's Spot offers weigh its slack (doc/DESIGN.md
 * "Deadlines"): with little slack it takes the zone that preempts
 * seldom over a cheaper one that preempts often; with slack to spare,
 * or zones alike, the cheapest. A job without a deadline is untouched,
 * and the first offer the bridge and the moves see is the job's own.
 */
static void
test_place_deadline_slack(void **state)
{
	struct fixture		*f = *state;
	struct sched_verdict	 v;
	struct sched_shape	*sh;

	/* r1-a: $0.50 Spot preempting about once in 2 h; r2-a: $0.55,
	 * never in 100 h. Standard: $1 in r1. */
	st_price(&f->t, "gce", "r1", 1, 0.5);
	st_price(&f->t, "gce", "r2", 1, 0.55);
	st_hist(&f->t, "gce/r1/nvidia-tesla-t4/r1-a", 100, 50);
	st_hist(&f->t, "gce/r2/nvidia-tesla-t4/r2-a", 100, 0);
	sh = st_shape(&f->t, "{\"accelerator\":{\"type\":"
	    "\"nvidia-tesla-t4\",\"count\":1},\"machine_type\":"
	    "\"n1-standard-8\"}");
	sched_place_buckets(&f->ctx, sh);
	f->a.shape = f->b.shape = sh;
	f->b.dl_left = 24 * 3600;
	f->b.dl_avail = 3600;
	f->b.dl_cost = 1800;

	placed_spot(f, &f->a, "r1-a");
	placed_spot(f, &f->b, "r2-a");
	assert_string_equal(sched_place_first(&f->b, NOW)->zone, "r2-a");
	assert_string_equal(sched_place_first(&f->a, NOW)->zone, "r1-a");

	/* Slack for a hundred preemptions: the cheapest. */
	f->b.dl_avail = 100 * 3600;
	sched_place(&f->ctx, &f->b, 0, &v);
	assert_string_equal(v.offer->zone, "r1-a");
	sched_verdict_done(&v);

	/*
	 * Both zones preempt as often: the cheaper. Spot is never ranked
	 * after capacity that is not preempted (at worst the job runs its
	 * rest there), and the margin, not the rank, keeps the deadline.
	 */
	f->b.dl_avail = 0;
	f->t.hist[1].interruptions = 50;
	st_build(&f->t, sh);
	sched_place_buckets(&f->ctx, sh);
	placed_spot(f, &f->b, "r1-a");
	assert_true(sched_place_spot_first(&f->b, NOW));
	sched_offer_shape_free(sh);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_place_reservation_claimed_in_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_takes_cheapest,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_whys, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_why_cpu, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_why_limits, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_spot_first, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_probe_struck,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_avoid, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_prefer, setup,
		    teardown),
		cmocka_unit_test(test_place_claimed_rule),
		cmocka_unit_test_setup_teardown(test_place_claims, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_wait_for_spot, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_fast_why, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_place_deadline_slack,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_place_plan, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
