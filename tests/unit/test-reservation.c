/*
 * test-reservation.c: providers/gcp/reservation.c. The mapping of
 * reservations.aggregatedList pages as Compute Engine writes them (int64
 * counts as strings, zones as URLs, warnings for unreachable zones and
 * empty scopes, aggregate reservations beside specific ones), the
 * [gcp] reservations filter, holds, and a refresh against the simulated
 * Google Cloud following nextPageToken over many pages.
 */
#include "config.h"

#include <errno.h>
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
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/reservation.h"
#include "tests/unit/gcptest.h"

/* One page, shaped as Compute answers it (DESIGN L.1, A.5). */
static const char page1[] =
    "{\"kind\":\"compute#reservationAggregatedList\","
    "\"items\":{"
    "\"zones/us-central1-a\":{\"reservations\":[{"
    "\"kind\":\"compute#reservation\",\"name\":\"train-a100\","
    "\"zone\":\"https://www.googleapis.com/compute/v1/projects/p/zones/"
    "us-central1-a\",\"status\":\"READY\","
    "\"specificReservationRequired\":true,"
    "\"specificReservation\":{\"count\":\"4\",\"inUseCount\":\"1\","
    "\"assuredCount\":\"4\",\"instanceProperties\":{"
    "\"machineType\":\"a2-highgpu-1g\",\"guestAccelerators\":[{"
    "\"acceleratorType\":\"nvidia-tesla-a100\",\"acceleratorCount\":1}]}}},"
    "{\"name\":\"t4-pool\",\"zone\":\"https://www.googleapis.com/compute/"
    "v1/projects/p/zones/us-central1-a\",\"status\":\"CREATING\","
    "\"specificReservation\":{\"count\":\"2\",\"inUseCount\":\"0\","
    "\"instanceProperties\":{\"machineType\":\"n1-standard-8\","
    "\"guestAccelerators\":[{\"acceleratorType\":\"nvidia-tesla-t4\","
    "\"acceleratorCount\":2}]}}},"
    "{\"name\":\"blocks\",\"status\":\"READY\","
    "\"aggregateReservation\":{\"vmFamily\":\"VM_FAMILY_CLOUD_TPU_POD_SLICE_"
    "CT5P\"}}]},"
    "\"zones/us-central1-b\":{\"warning\":{\"code\":\"UNREACHABLE\","
    "\"message\":\"Scope 'zones/us-central1-b' is unreachable.\","
    "\"data\":[{\"key\":\"scope\",\"value\":\"zones/us-central1-b\"}]}},"
    "\"zones/europe-west4-a\":{\"warning\":{\"code\":\"NO_RESULTS_ON_PAGE\","
    "\"message\":\"none\"}}},"
    "\"nextPageToken\":\"t2\"}";

static const char page2[] =
    "{\"items\":{\"zones/europe-west4-a\":{\"reservations\":[{"
    "\"name\":\"l4-full\",\"zone\":\"europe-west4-a\",\"status\":\"READY\","
    "\"specificReservationRequired\":false,"
    "\"specificReservation\":{\"count\":\"3\",\"inUseCount\":\"3\","
    "\"instanceProperties\":{\"machineType\":\"g2-standard-8\"}}}]}}}";

struct t {
	struct unittest		*ut;
	struct resv		*rv;
	struct gcptest_result	 res;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-reservation");
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	if (t->ut->http != NULL)
		gcptest_cancel(t->ut);
	resv_free(t->rv);
	unittest_free(t->ut);
	gcptest_result_done(&t->res);
	free(t);
	return 0;
}

/* The reservation NAME, as listed: 1 and *ROW, or 0. */
static int
find(struct resv *rv, const char *name, struct resv_row *row)
{
	size_t	it = 0;

	while (resv_next(rv, &it, row) == 1)
		if (strcmp(row->name, name) == 0)
			return 1;
	return 0;
}

/* Apply both pages to a cache configured with reservations LIST. */
static struct resv *
parsed(struct gcp_conf *gc, const char *const *list, size_t n)
{
	struct resv	*rv;
	json_t		*p;

	gc->reservations = list;
	gc->nreservations = n;
	assert_int_equal(resv_new(NULL, gc, &rv), 0);
	p = json_loads(page1, 0, NULL);
	assert_non_null(p);
	/* Aggregate reservations hold no VMs of ours: two of three. */
	assert_int_equal(resv_page_apply(rv, p), 2);
	json_decref(p);
	p = json_loads(page2, 0, NULL);
	assert_int_equal(resv_page_apply(rv, p), 1);
	json_decref(p);
	resv_page_done(rv);
	return rv;
}

static void
test_reservation_mapping(void **state)
{
	struct t		*t = *state;
	struct gcp_conf		 gc;
	struct resv_row		 row;
	const char *const	 list[] = { "auto" };
	int64_t			 n = -1;

	memset(&gc, 0, sizeof gc);
	t->rv = parsed(&gc, list, 1);
	assert_true(find(t->rv, "train-a100", &row));
	assert_string_equal(row.zone, "us-central1-a");
	assert_string_equal(row.region, "us-central1");
	assert_string_equal(row.machine_type, "a2-highgpu-1g");
	assert_string_equal(row.gpu, "nvidia-tesla-a100");
	assert_int_equal(row.gpus_per_vm, 1);
	assert_int_equal(row.count, 4);
	assert_int_equal(row.in_use, 1);
	assert_int_equal(row.free_vms, 3);
	assert_true(row.specific_required);
	assert_true(row.wanted);

	/* Not READY: listed, but no free VM and not wanted. */
	assert_true(find(t->rv, "t4-pool", &row));
	assert_int_equal(row.free_vms, 0);
	assert_false(row.wanted);

	/* A bare zone name, built-in GPUs (none listed), full. */
	assert_true(find(t->rv, "l4-full", &row));
	assert_string_equal(row.zone, "europe-west4-a");
	assert_string_equal(row.gpu, "");
	assert_int_equal(row.free_vms, 0);
	assert_false(row.specific_required);

	/* The unreachable zone is named; the empty scope is not. */
	assert_string_equal(resv_warning(t->rv), "us-central1-b");

	/* Free VMs for a launch of the reservation's own shape only. */
	assert_int_equal(resv_free_vms(t->rv, "us-central1-a", "train-a100",
	    "a2-highgpu-1g", "nvidia-tesla-a100", 1, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(resv_free_vms(t->rv, "us-central1-a", "train-a100",
	    "a2-highgpu-2g", "nvidia-tesla-a100", 2, &n), -ENOENT);
	assert_int_equal(resv_free_vms(t->rv, "us-central1-a", "t4-pool",
	    "n1-standard-8", "nvidia-tesla-t4", 2, &n), -ENOENT);
	assert_int_equal(resv_free_vms(t->rv, "us-central1-b", "train-a100",
	    "a2-highgpu-1g", "nvidia-tesla-a100", 1, &n), -ENOENT);
}

static void
test_reservation_filter(void **state)
{
	struct t		*t = *state;
	struct gcp_conf		 gc;
	struct resv_row		 row;
	const char *const	 named[] = { "l4-full", "other" };
	const char *const	 none[] = { "none" };
	struct resv		*rv;

	memset(&gc, 0, sizeof gc);
	t->rv = parsed(&gc, named, 2);
	assert_true(find(t->rv, "train-a100", &row));
	assert_false(row.wanted);		/* not named */
	assert_true(find(t->rv, "l4-full", &row));
	assert_true(row.wanted);
	assert_true(resv_enabled(t->rv));

	gc.reservations = none;
	gc.nreservations = 1;
	assert_int_equal(resv_new(NULL, &gc, &rv), 0);
	assert_false(resv_enabled(rv));
	assert_int_equal(resv_refresh(rv, 1, 0, gcptest_result_cb, &t->res),
	    -ENOTSUP);
	assert_int_equal(t->res.calls, 0);
	resv_free(rv);
}

static void
test_reservation_hold(void **state)
{
	struct t		*t = *state;
	struct gcp_conf		 gc;
	struct resv_row		 row;
	const char *const	 list[] = { "auto" };
	json_t			*j, *e;

	memset(&gc, 0, sizeof gc);
	t->rv = parsed(&gc, list, 1);
	/* Holds need the loop's clock: give the cache the fixture's. */
	resv_free(t->rv);
	gcptest_fake(t->ut);
	gcptest_http(t->ut);
	gc = *t->ut->gcp;
	gc.reservations = list;
	gc.nreservations = 1;
	assert_int_equal(resv_new(t->ut->http, &gc, &t->rv), 0);
	{
		json_t *p = json_loads(page1, 0, NULL);

		(void)resv_page_apply(t->rv, p);
		json_decref(p);
		resv_page_done(t->rv);
	}
	resv_hold(t->rv, "us-central1-a", "train-a100", 2);
	assert_true(find(t->rv, "train-a100", &row));
	assert_int_equal(row.held, 2);
	assert_int_equal(row.free_vms, 1);
	resv_hold(t->rv, "us-central1-a", "train-a100", 5);
	assert_true(find(t->rv, "train-a100", &row));
	assert_int_equal(row.free_vms, 0);	/* never negative */

	j = resv_to_json(t->rv, "us-central1", "nvidia-tesla-a100");
	assert_int_equal(json_array_size(j), 1);
	e = json_array_get(j, 0);
	assert_int_equal(json_integer_value(json_object_get(e, "total_gpus")),
	    4);
	assert_int_equal(json_integer_value(json_object_get(e, "free_gpus")),
	    0);
	json_decref(j);
	j = resv_to_json(t->rv, "europe-west4", NULL);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
}

static void
test_reservation_fake_paged(void **state)
{
	struct t		*t = *state;
	struct resv_row		 row;
	json_t			*r, *cfg;
	char			 name[32], *body;
	size_t			 it = 0, n = 0;
	int			 i;

	gcptest_fake(t->ut);
	NEED_FAKE(t->ut);
	/* Eleven reservations over pages of three, one zone unreachable. */
	r = json_array();
	for (i = 0; i < 11; i++) {
		(void)snprintf(name, sizeof name, "r%02d", i);
		json_array_append_new(r, json_pack("{s:s, s:s, s:s, s:s, s:i, "
		    "s:i}", "name", name, "zone", i % 2 ? "us-central1-a" :
		    "us-east1-c", "machine_type", "n1-standard-8", "gpu",
		    "nvidia-tesla-t4", "gpu_count", 1, "count", i + 1));
	}
	cfg = json_pack("{s:o, s:[s]}", "reservations", r,
	    "unreachable_zones", "us-central1-b");
	body = json_dumps(cfg, JSON_COMPACT);
	json_decref(cfg);
	json_decref(fake_post(&t->ut->fake, "/_fake/config", "%s", body));
	free(body);
	t->ut->gcp->page_size = 3;
	gcptest_http(t->ut);
	gcptest_auth(t->ut);
	assert_int_equal(resv_new(t->ut->http, t->ut->gcp, &t->rv), 0);
	assert_int_equal(resv_refresh(t->rv, 0, 60000, gcptest_result_cb,
	    &t->res), 0);
	unittest_run(t->ut);
	assert_int_equal(t->res.calls, 1);
	if (t->res.error != 0)
		fail_msg("refresh: %s", t->res.cause);
	while (resv_next(t->rv, &it, &row) == 1) {
		n++;
		assert_int_equal(row.in_use, 0);
		assert_int_equal(row.free_vms, row.count);
	}
	assert_int_equal(n, 11);
	assert_non_null(resv_warning(t->rv));
	assert_non_null(strstr(resv_warning(t->rv), "us-central1-b"));
	r = fake_requests(&t->ut->fake, "GET", "/aggregated/reservations",
	    4);
	assert_true(json_array_size(r) >= 4);
	json_decref(r);

	/* Fresh: no second listing within the TTL. */
	t->res.calls = 0;
	assert_int_equal(resv_refresh(t->rv, 0, 60000, gcptest_result_cb,
	    &t->res), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reservation_mapping,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reservation_filter,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reservation_hold,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reservation_fake_paged,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
