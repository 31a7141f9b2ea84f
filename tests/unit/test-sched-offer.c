/*
 * test-sched-offer.c: daemon/sched-offer.c, the scheduler's pure part --
 * a shape's offers on a market given as plain data: the ranking, each
 * reason an offer is set aside, Spot against standard with λ, the
 * regions and providers a job allows, and ties.
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

#include "daemon/cost.h"
#include "daemon/sched-offer.h"
#include "providers/provider.h"
#include "tests/unit/schedtest.h"

#define T4_STD	"{\"accelerator\":{\"type\":\"nvidia-tesla-t4\"," \
		"\"count\":1},\"machine_type\":\"n1-standard-8\"," \
		"\"spot\":\"never\""
#define T4_ANY	"{\"accelerator\":{\"type\":\"nvidia-tesla-t4\"," \
		"\"count\":1},\"machine_type\":\"n1-standard-8\"," \
		"\"spot\":\"allow\",\"checkpoint\":{\"interval\":600}"

/* Two regions on gce, one zone each; east cheaper. */
static void
two_regions(struct st_market *t, const char *sellers)
{
	st_init(t, sellers, 0.1);
	st_zone(t, "us-central1-a", "us-central1", 4);
	st_zone(t, "us-east1-c", "us-east1", 4);
	st_price(t, "gce", "us-central1", 0, 1.00);
	st_price(t, "gce", "us-east1", 0, 0.80);
	st_price(t, "vertex", "us-central1", 0, 1.20);
	st_price(t, "vertex", "us-east1", 0, 0.70);
}

/* Cheapest expected cost first; the usable ones before the rest. */
static void
test_offer_rank_order(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;

	(void)state;
	two_regions(&t, "gce,vertex");
	sh = st_shape(&t, T4_STD "}");
	assert_int_equal(sh->n, 4);
	assert_int_equal(sh->nok, 4);
	assert_null(sh->why);
	assert_string_equal(sh->offers[0].prov->name, "vertex");
	assert_string_equal(sh->offers[0].region, "us-east1");
	assert_string_equal(sh->offers[0].zone, "");
	assert_string_equal(sh->offers[1].prov->name, "gce");
	assert_string_equal(sh->offers[1].zone, "us-east1-c");
	assert_float_equal(sh->offers[1].hourly, 0.80, 1e-9);
	assert_string_equal(sh->offers[2].region, "us-central1");
	assert_string_equal(sh->offers[2].prov->name, "gce");
	assert_string_equal(sh->offers[3].prov->name, "vertex");
	assert_float_equal(sh->min_hourly, 0.70, 1e-9);
	assert_float_equal(sh->min_per_hour, 0.70, 1e-9);
	assert_int_equal(sh->offers[0].lambda, 0);
	sched_offer_shape_free(sh);
}

/* Each reason an offer is set aside, and the order they sort in. */
static void
test_offer_exclusions(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	int			 i;

	(void)state;
	st_init(&t, "gce", 0.1);
	st_zone(&t, "r1-a", "r1", 4);		/* fine */
	st_zone(&t, "r2-a", "r2", 4);		/* cooling down */
	st_zone(&t, "r3-a", "r3", 4);		/* no price */
	st_zone(&t, "r4-a", "r4", 4);		/* no quota metric */
	st_zone(&t, "r5-a", "r5", 1);		/* too few GPUs per VM */
	st_price(&t, "gce", "r1", 0, 1);
	st_price(&t, "gce", "r2", 0, 1);
	st_price(&t, "gce", "r4", 0, -1);
	st_price(&t, "gce", "r5", 0, 1);
	st_cool(&t, "r2-a", "nvidia-tesla-t4", 0, 1000);
	st_cool(&t, "r1-a", "nvidia-tesla-t4", 1, 1000); /* Spot only */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":2},\"machine_type\":\"n1-standard-8\","
	    "\"spot\":\"never\"}");
	assert_int_equal(sh->n, 5);
	assert_int_equal(sh->nok, 1);
	assert_string_equal(sh->offers[0].region, "r1");
	/* Then by how far they got: cool-down, price, metric, offered. */
	assert_int_equal(sh->offers[1].reason, SCHED_X_COOLDOWN);
	assert_string_equal(sh->offers[1].region, "r2");
	assert_int_equal(sh->offers[1].until, 1000);
	assert_int_equal(sh->offers[2].reason, SCHED_X_NO_PRICE);
	assert_string_equal(sh->offers[2].region, "r3");
	assert_int_equal(sh->offers[3].reason, SCHED_X_NO_METRIC);
	assert_string_equal(sh->offers[3].region, "r4");
	assert_int_equal(sh->offers[4].reason, SCHED_X_NOT_OFFERED);
	assert_string_equal(sh->offers[4].region, "r5");
	assert_string_equal(sh->offers[4].zone, "");
	for (i = 1; i < 5; i++)
		assert_float_equal(sh->offers[i].hourly, 0, 0);
	sched_offer_shape_free(sh);
}

/* A service that picks the zone cools down only when every zone does;
 * with none usable the shape's why names the earliest end. */
static void
test_offer_cooldown_picks_zone(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	int			 k;

	(void)state;
	st_init(&t, "batch", 0.1);
	st_zone(&t, "r1-a", "r1", 4);
	st_zone(&t, "r1-b", "r1", 4);
	st_price(&t, "batch", "r1", 0, 1);
	st_cool(&t, "r1-a", "nvidia-tesla-t4", 0, 2000);
	sh = st_shape(&t, T4_STD "}");
	assert_int_equal(sh->n, 1);
	assert_int_equal(sh->nok, 1);
	st_cool(&t, "r1-b", "nvidia-tesla-t4", 0, 1500);
	st_build(&t, sh);
	k = st_find(sh, "batch", "r1", NULL, 0);
	assert_int_equal(k, 0);
	assert_int_equal(sh->nok, 0);
	assert_int_equal(sh->offers[0].reason, SCHED_X_COOLDOWN);
	assert_int_equal(sh->offers[0].until, 1500);
	assert_non_null(sh->why);
	assert_non_null(strstr(sh->why, "all allowed zones out of "
	    "nvidia-tesla-t4 until"));
	sched_offer_shape_free(sh);
}

/* The whys of a shape with nothing usable. */
static void
test_offer_shape_whys(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;

	(void)state;
	st_init(&t, "gce", 0.1);
	st_zone(&t, "r1-a", "r1", 1);
	sh = st_shape(&t, T4_STD ",\"regions\":[\"r9\"]}");
	assert_int_equal(sh->nok, 0);
	assert_string_equal(sh->why,
	    "1\xc3\x97nvidia-tesla-t4 on-demand is not offered in r9");
	sched_offer_shape_free(sh);

	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":1},\"machine_type\":\"n1-standard-8\","
	    "\"spot\":\"require\"}");
	assert_string_equal(sh->why,
	    "no price known for 1\xc3\x97nvidia-tesla-t4 in r1");
	sched_offer_shape_free(sh);

	t.m.nzones = -1;
	t.m.zones_error = "no project";
	sh = st_shape(&t, T4_STD "}");
	assert_string_equal(sh->why, "waiting for the zones and quotas of "
	    "Compute Engine: no project");
	sched_offer_shape_free(sh);
}

/* a3-highgpu-1g/2g/4g are sold only as Spot or flex-start: no on-demand
 * offer, and a job that refuses Spot is told why. */
static void
test_offer_spot_only_shapes(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;

	(void)state;
	st_init(&t, "gce", 0.05);
	st_zone(&t, "r1-a", "r1", 8);
	st_price(&t, "gce", "r1", 0, 12.00);
	st_price(&t, "gce", "r1", 1, 5.00);
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":1},\"machine_type\":\"a3-highgpu-1g\","
	    "\"spot\":\"allow\",\"checkpoint\":{\"interval\":600}}");
	/* Spot, and flex-start, which has no price here. */
	assert_int_equal(sh->n, 2);
	assert_int_equal(sh->nok, 1);
	assert_int_equal(sh->offers[0].spot, 1);
	assert_int_equal(sh->offers[1].capacity, CAPACITY_FLEX);
	assert_int_equal(sh->offers[1].reason, SCHED_X_NO_PRICE);
	sched_offer_shape_free(sh);
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":1},\"machine_type\":\"a3-highgpu-1g\","
	    "\"spot\":\"never\",\"capacity\":[\"standard\"]}");
	assert_int_equal(sh->nok, 0);
	assert_string_equal(sh->why, "a3-highgpu-1g is sold only as Spot or "
	    "flex-start, and the job allows neither; allow one (capacity: "
	    "[flex, standard]) or ask for 8 GPUs (a3-highgpu-8g)");
	sched_offer_shape_free(sh);
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":1},\"machine_type\":\"a3-highgpu-1g\","
	    "\"spot\":\"never\",\"max_runtime\":700000}");
	assert_int_equal(sh->nok, 0);
	assert_string_equal(sh->why, "a3-highgpu-1g is sold only as Spot or "
	    "flex-start, the job refuses Spot and flex-start runs at most 7 "
	    "days; set max_runtime to 7d or less, allow Spot, or ask for 8 "
	    "GPUs (a3-highgpu-8g)");
	sched_offer_shape_free(sh);
	/* a3-highgpu-8g is sold on demand. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":8},\"machine_type\":\"a3-highgpu-8g\","
	    "\"spot\":\"never\",\"capacity\":[\"standard\"]}");
	assert_int_equal(sh->n, 1);
	assert_int_equal(sh->offers[0].spot, 0);
	sched_offer_shape_free(sh);
}

/*
 * Capacity kinds (doc/DESIGN.md "Capacity kinds"): flex-start is offered
 * where the service sells it, is never preempted (λ 0), and a job's
 * capacity: list (or its spot:) decides which kinds it gets.
 */
static void
test_offer_capacity_kinds(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	size_t			 i;
	int			 seen[CAPACITY_NKINDS] = { 0 };

	(void)state;
	st_init(&t, "gce,vertex", 5.0);
	st_zone(&t, "r1-a", "r1", 8);
	st_price(&t, "gce", "r1", CAPACITY_STANDARD, 12.00);
	st_price(&t, "gce", "r1", CAPACITY_SPOT, 5.00);
	st_price(&t, "gce", "r1", CAPACITY_FLEX, 6.00);
	st_price(&t, "vertex", "r1", CAPACITY_STANDARD, 14.00);
	st_price(&t, "vertex", "r1", CAPACITY_FLEX, 7.00);
	/* Everything allowed: a huge λ makes Spot dearer than flex. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":8},\"machine_type\":\"a3-highgpu-8g\","
	    "\"checkpoint\":{\"interval\":3600}}");
	for (i = 0; i < sh->nok; i++)
		seen[sh->offers[i].capacity]++;
	assert_int_equal(seen[CAPACITY_STANDARD], 2);
	assert_int_equal(seen[CAPACITY_FLEX], 2);
	assert_int_equal(seen[CAPACITY_SPOT], 1);
	assert_int_equal(sh->offers[0].capacity, CAPACITY_FLEX);
	assert_true(sh->offers[0].lambda == 0);
	assert_int_equal(sh->offers[0].spot, 0);
	assert_string_equal(sh->offers[0].prov->name, "gce");
	sched_offer_shape_free(sh);

	/* capacity: [flex] gets flex only. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":8},\"machine_type\":\"a3-highgpu-8g\","
	    "\"capacity\":[\"flex\"]}");
	assert_int_equal(sh->nok, 2);
	for (i = 0; i < sh->nok; i++)
		assert_int_equal(sh->offers[i].capacity, CAPACITY_FLEX);
	assert_null(sched_offer_kind_refusal(sh, t.sellers[0].prov,
	    CAPACITY_FLEX));
	assert_string_equal(sched_offer_kind_refusal(sh, NULL,
	    CAPACITY_SPOT), "job disallows");
	sched_offer_shape_free(sh);

	/* spot: never (no capacity:) still gets flex and standard. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":8},\"machine_type\":\"a3-highgpu-8g\","
	    "\"spot\":\"never\"}");
	assert_int_equal(sh->nok, 4);
	for (i = 0; i < sh->nok; i++)
		assert_int_equal(sh->offers[i].spot, 0);
	sched_offer_shape_free(sh);

	/* A T4 on n1 is sold as flex by nobody: the plan says so. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":1},\"machine_type\":\"n1-standard-4\","
	    "\"capacity\":[\"flex\"]}");
	assert_int_equal(sh->nok, 0);
	assert_string_equal(sched_offer_kind_refusal(sh, t.sellers[0].prov,
	    CAPACITY_FLEX), "not offered by this service for this machine "
	    "type");
	assert_string_equal(sched_offer_kind_refusal(sh, t.sellers[1].prov,
	    CAPACITY_FLEX), "not offered by Vertex AI for this GPU");
	sched_offer_shape_free(sh);

	/* More than 7 days of max_runtime: no flex. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-h100-80gb\","
	    "\"count\":8},\"machine_type\":\"a3-highgpu-8g\","
	    "\"max_runtime\":700000}");
	for (i = 0; i < sh->n; i++)
		assert_int_not_equal(sh->offers[i].capacity, CAPACITY_FLEX);
	sched_offer_shape_free(sh);
}

/*
 * λ is a zone's own where the offer names the zone: the steady zone of a
 * region ranks before the one that preempts every hour at the same
 * price; a service that picks the zone, and a zone not tried yet, take
 * the region's sum.
 */
static void
test_offer_zone_lambda(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	struct sched_hist	*v = NULL;
	size_t			 n = 0, i;
	int			 a, b, c, r;

	(void)state;
	st_init(&t, "gce,batch", 0.1);
	st_zone(&t, "r1-a", "r1", 4);
	st_zone(&t, "r1-b", "r1", 4);
	st_zone(&t, "r1-c", "r1", 4);
	st_price(&t, "gce", "r1", 1, 0.40);
	st_price(&t, "batch", "r1", 1, 0.40);
	/* As sched.c reads store_spot_history(): zones after their sum. */
	v = sched_offer_hist_add(v, &n, "gce", "r1", "r1-a", "nvidia-tesla-t4",
	    100, 1);
	v = sched_offer_hist_add(v, &n, "gce", "r1", "r1-b", "nvidia-tesla-t4",
	    10, 10);
	v = sched_offer_hist_add(v, &n, "batch", "r1", "r1-b",
	    "nvidia-tesla-t4", 5, 5);
	assert_int_equal(n, 5);
	assert_string_equal(v[0].key, "gce/r1/nvidia-tesla-t4");
	assert_float_equal(v[0].hours, 110, 0);
	assert_int_equal(v[0].interruptions, 11);
	assert_string_equal(v[2].key, "gce/r1/nvidia-tesla-t4/r1-b");
	assert_string_equal(v[3].key, "batch/r1/nvidia-tesla-t4");
	for (i = 0; i < n; i++)
		st_hist(&t, v[i].key, v[i].hours, v[i].interruptions);
	sh = st_shape(&t, T4_ANY "}");
	a = st_find(sh, "gce", "r1", "r1-a", 1);
	b = st_find(sh, "gce", "r1", "r1-b", 1);
	c = st_find(sh, "gce", "r1", "r1-c", 1);
	r = st_find(sh, "batch", "r1", NULL, 1);
	assert_true(a >= 0 && b >= 0 && c >= 0 && r >= 0);
	assert_float_equal(sh->offers[a].lambda, cost_lambda(100, 1, 0.1),
	    1e-12);
	assert_float_equal(sh->offers[b].lambda, cost_lambda(10, 10, 0.1),
	    1e-12);
	assert_float_equal(sh->offers[c].lambda, cost_lambda(110, 11, 0.1),
	    1e-12);
	assert_float_equal(sh->offers[r].lambda, cost_lambda(5, 5, 0.1),
	    1e-12);
	assert_int_equal(a, 0);
	assert_true(b > c);
	sched_offer_shape_free(sh);
	for (i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}

/* Spot is cheaper by the hour; λ decides whether it is by the job. */
static void
test_offer_spot_lambda(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	double			 want;

	(void)state;
	st_init(&t, "gce", 0.05);
	st_zone(&t, "r1-a", "r1", 4);
	st_price(&t, "gce", "r1", 0, 1.00);
	st_price(&t, "gce", "r1", 1, 0.40);
	sh = st_shape(&t, T4_ANY "}");
	assert_int_equal(sh->nok, 2);
	assert_int_equal(sh->offers[0].spot, 1);
	assert_float_equal(sh->offers[0].lambda, 0.05, 1e-12);
	want = cost_expected(0.40, 1.0, 1, 0.05, 600, 0);
	assert_float_equal(sh->offers[0].per_hour, want, 1e-12);
	assert_int_equal(sh->offers[1].spot, 0);
	assert_float_equal(sh->offers[1].per_hour, 1.00, 1e-12);
	sched_offer_shape_free(sh);

	/* Preempted every few minutes there: standard wins. */
	st_hist(&t, "gce/r1/nvidia-tesla-t4", 10, 2000);
	sh = st_shape(&t, T4_ANY "}");
	assert_int_equal(sh->offers[0].spot, 0);
	assert_int_equal(sh->offers[1].spot, 1);
	assert_int_equal(sh->offers[1].recent, 2000);
	assert_float_equal(sh->offers[1].lambda, cost_lambda(10, 2000,
	    0.05), 1e-12);
	assert_true(sh->offers[1].per_hour > 1.00);
	sched_offer_shape_free(sh);

	/* "never" and "require" keep to their side. */
	sh = st_shape(&t, T4_STD "}");
	assert_int_equal(sh->n, 1);
	assert_int_equal(sh->offers[0].spot, 0);
	sched_offer_shape_free(sh);
}

/* The job's regions, within [gcp] regions; with neither, the GPU's. */
static void
test_offer_regions_filter(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	const char		*conf[] = { "us-east1" };

	(void)state;
	two_regions(&t, "gce");
	st_zone(&t, "eu-west4-a", "eu-west4", 4);
	sh = st_shape(&t, T4_STD ",\"regions\":[\"us-central1\"]}");
	assert_int_equal(sh->n, 1);
	assert_string_equal(sh->offers[0].region, "us-central1");
	sched_offer_shape_free(sh);

	/* A region of the job that no zone offers: not offered. */
	sh = st_shape(&t, T4_STD ",\"regions\":[\"us-west9\"]}");
	assert_int_equal(sh->n, 1);
	assert_int_equal(sh->offers[0].reason, SCHED_X_NOT_OFFERED);
	sched_offer_shape_free(sh);

	t.m.regions = conf;
	t.m.nregions = 1;
	sh = st_shape(&t, T4_STD "}");
	assert_int_equal(sh->n, 1);
	assert_string_equal(sh->offers[0].region, "us-east1");
	sched_offer_shape_free(sh);
	sh = st_shape(&t, T4_STD ",\"regions\":[\"us-central1\"]}");
	assert_int_equal(sh->n, 0);
	assert_string_equal(sh->why, "no allowed region: the job asks for "
	    "us-central1, which gpuqd.conf [gcp] regions leaves out");
	sched_offer_shape_free(sh);
}

/* The job's providers, among those enabled. */
static void
test_offer_providers_filter(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	size_t			 i;

	(void)state;
	two_regions(&t, "gce,vertex");
	sh = st_shape(&t, T4_STD ",\"providers\":[\"gce\"]}");
	assert_int_equal(sh->nok, 2);
	for (i = 0; i < sh->n; i++)
		assert_string_equal(sh->offers[i].prov->name, "gce");
	sched_offer_shape_free(sh);

	sh = st_shape(&t, T4_STD ",\"providers\":[\"batch\"]}");
	assert_int_equal(sh->n, 0);
	assert_string_equal(sh->why, "no allowed provider: the job asks for "
	    "batch, gpuqd.conf enables others");
	sched_offer_shape_free(sh);
}

/* Equal cost: fewer recent interruptions, then enumeration order
 * (sellers as enabled, regions sorted, zones as listed). */
static void
test_offer_ties(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;

	(void)state;
	st_init(&t, "gce,batch", 0.1);
	st_zone(&t, "r2-b", "r2", 4);
	st_zone(&t, "r2-a", "r2", 4);
	st_zone(&t, "r1-a", "r1", 4);
	st_price(&t, "gce", "r1", 0, 1);
	st_price(&t, "gce", "r2", 0, 1);
	st_price(&t, "batch", "r1", 0, 1);
	sh = st_shape(&t, T4_STD "}");
	assert_int_equal(sh->nok, 4);
	assert_string_equal(sh->offers[0].zone, "r1-a");
	assert_string_equal(sh->offers[1].zone, "r2-b");
	assert_string_equal(sh->offers[2].zone, "r2-a");
	assert_string_equal(sh->offers[3].prov->name, "batch");
	assert_int_equal(sh->offers[4].reason, SCHED_X_NO_PRICE);
	sched_offer_shape_free(sh);

	/* Same expected cost, Spot with a worse record goes after. */
	st_init(&t, "gce,batch", 0);
	st_zone(&t, "r1-a", "r1", 4);
	st_price(&t, "gce", "r1", 1, 1);
	st_price(&t, "batch", "r1", 1, 1);
	st_hist(&t, "gce/r1/nvidia-tesla-t4", 1e9, 0);
	st_hist(&t, "batch/r1/nvidia-tesla-t4", 1e12, 1);
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":1},\"machine_type\":\"n1-standard-8\","
	    "\"spot\":\"require\"}");
	assert_int_equal(sh->nok, 2);
	assert_string_equal(sh->offers[0].prov->name, "gce");
	assert_string_equal(sh->offers[1].prov->name, "batch");
	sched_offer_shape_free(sh);
}

/* Equal specs, equal keys; a bad one says why. */
static void
test_offer_shape_key(void **state)
{
	json_t			*a, *b;
	struct sched_shape	*x, *y;
	char			*why = NULL;

	(void)state;
	a = json_loads(T4_STD ",\"regions\":[\"b\",\"a\"]}", 0, NULL);
	b = json_loads(T4_STD ",\"regions\":[\"a\",\"b\"]}", 0, NULL);
	x = sched_offer_shape_new(a, &why);
	y = sched_offer_shape_new(b, &why);
	assert_string_equal(x->key, y->key);
	assert_int_equal(x->vcpus, 8);
	assert_string_equal(x->regions[0], "a");
	sched_offer_shape_free(x);
	sched_offer_shape_free(y);
	json_decref(a);
	json_decref(b);
	a = json_loads("{\"accelerator\":{\"type\":\"nope\",\"count\":1},"
	    "\"machine_type\":\"n1-standard-8\"}", 0, NULL);
	assert_null(sched_offer_shape_new(a, &why));
	assert_non_null(why);
	free(why);
	json_decref(a);
}

/*
 * Reserved offers (doc/DESIGN.md "Reservations"): a reservation with a
 * free VM is rank 1 at $0 and λ 0, ahead of a cheaper Spot offer, in its
 * own zone, standard; a full one, one too small for a gang, one in a
 * region the job leaves out, and every one for spot: require are no
 * offer; a service that takes no reservation (this market's vertex)
 * gets none.
 */
static void
test_offer_reserved(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	struct sched_resv	 r[3];
	int			 k;

	(void)state;
	two_regions(&t, "gce,vertex");
	st_price(&t, "gce", "us-central1", 1, 0.10);
	memset(r, 0, sizeof r);
	sched_name(r[0].name, "pool");
	sched_name(r[0].zone, "us-central1-b");
	sched_name(r[0].region, "us-central1");
	r[0].free_vms = 1;
	r[0].count = 2;
	r[1] = r[0];
	sched_name(r[1].name, "full");
	r[1].free_vms = 0;
	r[2] = r[0];
	sched_name(r[2].name, "far");
	sched_name(r[2].zone, "europe-west4-a");
	sched_name(r[2].region, "europe-west4");
	t.m.resv = r;
	t.m.nresv = 3;
	sh = st_shape(&t, T4_ANY "}");
	assert_string_equal(sh->offers[0].reservation, "pool");
	assert_string_equal(sh->offers[0].prov->name, "gce");
	assert_string_equal(sh->offers[0].zone, "us-central1-b");
	assert_int_equal(sh->offers[0].spot, 0);
	assert_float_equal(sh->offers[0].hourly, 0, 0);
	assert_float_equal(sh->offers[0].per_hour, 0, 0);
	assert_float_equal(sh->offers[0].lambda, 0, 0);
	assert_int_equal(sh->offers[0].resv_free, 1);
	/* Spot at $0.10/h comes next; the full reservation is set aside
	 * (for a plan to show) and the far one is no offer at all. */
	assert_int_equal(sh->offers[1].spot, 1);
	assert_string_equal(sh->offers[1].reservation, "");
	for (k = 1; k < (int)sh->nok; k++)
		assert_string_equal(sh->offers[k].reservation, "");
	k = (int)sh->nok;
	assert_string_equal(sh->offers[k].reservation, "full");
	assert_int_equal(sh->offers[k].reason, SCHED_X_QUOTA);
	for (k++; k < (int)sh->n; k++)
		assert_string_equal(sh->offers[k].reservation, "");
	sched_offer_shape_free(sh);

	/* A gang of two needs two free VMs: no usable reserved offer. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":1},\"machine_type\":\"n1-standard-8\","
	    "\"spot\":\"allow\",\"nodes\":2}");
	for (k = 0; k < (int)sh->nok; k++)
		assert_string_equal(sh->offers[k].reservation, "");
	assert_string_equal(sh->offers[sh->nok].reservation, "pool");
	assert_int_equal(sh->offers[sh->nok].reason, SCHED_X_QUOTA);
	sched_offer_shape_free(sh);

	/* spot: require never gets one. */
	sh = st_shape(&t, "{\"accelerator\":{\"type\":\"nvidia-tesla-t4\","
	    "\"count\":1},\"machine_type\":\"n1-standard-8\","
	    "\"spot\":\"require\"}");
	for (k = 0; k < (int)sh->n; k++)
		assert_string_equal(sh->offers[k].reservation, "");
	sched_offer_shape_free(sh);

	/* Only vertex allowed: this market's takes no reservation. */
	sh = st_shape(&t, T4_STD ",\"providers\":[\"vertex\"]}");
	for (k = 0; k < (int)sh->n; k++)
		assert_string_equal(sh->offers[k].reservation, "");
	sched_offer_shape_free(sh);

	/* Only the full reservation usable: the why names it. */
	st_init(&t, "gce", 0.1);
	st_zone(&t, "us-central1-b", "us-central1", 4);
	t.m.resv = &r[1];
	t.m.nresv = 1;
	sh = st_shape(&t, T4_STD "}");		/* no price: NO_PRICE */
	assert_int_equal(sh->nok, 0);
	assert_string_equal(sh->why, "reservation full in us-central1-b has "
	    "no free VM for 1\xc3\x97nvidia-tesla-t4, and no other offer is "
	    "usable");
	sched_offer_shape_free(sh);

	/* A service without a quota metric for the GPU cannot take it. */
	st_price(&t, "gce", "us-central1", 0, -1);
	sh = st_shape(&t, T4_STD "}");
	for (k = 0; k < (int)sh->n &&
	    strcmp(sh->offers[k].reservation, "full") != 0; k++)
		;
	assert_true(k < (int)sh->n);
	assert_int_equal(sh->offers[k].reason, SCHED_X_NO_METRIC);
	sched_offer_shape_free(sh);
}

/*
 * A zone that refused lately ranks after its region's zone at the same
 * price, its cool-down over (doc/DESIGN.md "Places that refused"): the
 * replay launched into zones the trace never stocked at every
 * cool-down's end. The strikes are remembered past the cool-down, one
 * forgiven a quiet hour; they weigh at most SCHED_STRIKE_MAX.
 */
static void
test_offer_strikes(void **state)
{
	struct st_market	 t;
	struct sched_shape	*sh;
	struct sched_strike	*v = NULL;
	struct sched_cool	 c;
	size_t			 nv = 0, cap = 0;
	int			 a, b, r, w;

	(void)state;
	st_init(&t, "gce,batch", 0.1);
	st_zone(&t, "r1-a", "r1", 4);
	st_zone(&t, "r1-b", "r1", 4);
	st_zone(&t, "r2-a", "r2", 4);
	st_price(&t, "gce", "r1", 1, 1.00);
	st_price(&t, "batch", "r1", 1, 1.00);
	st_price(&t, "gce", "r2", 1, 1.02);
	sh = st_shape(&t, T4_ANY "}");
	assert_string_equal(sh->offers[0].zone, "r1-a");
	sched_offer_shape_free(sh);

	/* r1-a's third stockout in a row, its cool-down ending at 1000. */
	memset(&c, 0, sizeof c);
	sched_name(c.zone, "r1-a");
	sched_name(c.gpu, "nvidia-tesla-t4");
	c.spot = CAPACITY_SPOT;
	c.until = 1000;
	c.strikes = 3;
	v = sched_offer_strikes_note(v, &nv, &cap, &c, 1, 900);
	assert_int_equal(nv, 1);
	t.m.strike = v;
	t.m.nstrike = nv;
	t.m.now = 1100;			/* cooled no more */
	assert_int_equal(sched_offer_strikes(&t.m, "r1-a",
	    "nvidia-tesla-t4", CAPACITY_SPOT), 3);
	assert_int_equal(sched_offer_strikes(&t.m, "r1-a",
	    "nvidia-tesla-t4", CAPACITY_STANDARD), 0);
	sh = st_shape(&t, T4_ANY "}");
	a = st_find(sh, "gce", "r1", "r1-a", 1);
	b = st_find(sh, "gce", "r1", "r1-b", 1);
	r = st_find(sh, "batch", "r1", NULL, 1);
	w = st_find(sh, "gce", "r2", "r2-a", 1);
	assert_int_equal(sh->offers[a].reason, SCHED_OK);
	assert_int_equal(b, 0);
	/* The service that picks the zone may pick r1-b. */
	assert_int_equal(sh->offers[r].strikes, 0);
	assert_int_equal(r, 1);
	/* 3 % in rank, not in price: after r2-a, 2 % dearer. */
	assert_int_equal(sh->offers[a].strikes, 3);
	assert_float_equal(sh->offers[a].per_hour, sh->offers[b].per_hour,
	    1e-12);
	assert_true(w < a);
	sched_offer_shape_free(sh);

	/* Two quiet hours later one strike is left: before r2-a. */
	t.m.now = 1000 + 2 * SCHED_STRIKE_QUIET_SEC;
	sh = st_shape(&t, T4_ANY "}");
	a = st_find(sh, "gce", "r1", "r1-a", 1);
	w = st_find(sh, "gce", "r2", "r2-a", 1);
	assert_int_equal(sh->offers[a].strikes, 1);
	assert_true(a < w);
	sched_offer_shape_free(sh);

	/* A third: forgiven, first again, and forgotten. */
	t.m.now = 1000 + 3 * SCHED_STRIKE_QUIET_SEC;
	sh = st_shape(&t, T4_ANY "}");
	assert_string_equal(sh->offers[0].zone, "r1-a");
	sched_offer_shape_free(sh);
	v = sched_offer_strikes_note(v, &nv, &cap, NULL, 0, t.m.now);
	assert_int_equal(nv, 0);

	/* A newer cool-down replaces the place's entry. */
	c.until = 20000;
	c.strikes = 1;
	v = sched_offer_strikes_note(v, &nv, &cap, &c, 1, 19000);
	v = sched_offer_strikes_note(v, &nv, &cap, &c, 1, 19500);
	assert_int_equal(nv, 1);
	assert_int_equal(v[0].strikes, 1);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_offer_reserved),
		cmocka_unit_test(test_offer_rank_order),
		cmocka_unit_test(test_offer_exclusions),
		cmocka_unit_test(test_offer_cooldown_picks_zone),
		cmocka_unit_test(test_offer_shape_whys),
		cmocka_unit_test(test_offer_spot_lambda),
		cmocka_unit_test(test_offer_zone_lambda),
		cmocka_unit_test(test_offer_spot_only_shapes),
		cmocka_unit_test(test_offer_capacity_kinds),
		cmocka_unit_test(test_offer_regions_filter),
		cmocka_unit_test(test_offer_providers_filter),
		cmocka_unit_test(test_offer_ties),
		cmocka_unit_test(test_offer_strikes),
		cmocka_unit_test(test_offer_shape_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
