/*
 * test-quota.c: providers/gcp/quota.c against the simulated Google Cloud:
 * regions and quotaInfos read over many pages, configured regions read
 * one by one, the TTL and early invalidation, which metric a Spot launch
 * draws on, in-flight holds (reserve, release, commit) never counting a
 * GPU twice, zones offering each GPU, a region without quotas being
 * unknown rather than zero, read errors, and the JSON for `gpuq quotas`.
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

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/quota.h"
#include "tests/unit/gcptest.h"

struct t {
	struct unittest	*ut;		/* fake, conf, loop, http and auth */
	struct fake	 mini;
	struct quota	*q;
	struct gcptest_result res;	/* the last refresh's */
	int		 listened;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-quota");
	gcptest_fake(t->ut);		/* tokens: the metadata server */
	return 0;
}

/* Build http, auth and quota for the conf as the test left it. */
static void
start(struct t *t)
{
	char	*cause = NULL;

	gcptest_http(t->ut);
	gcptest_auth(t->ut);
	assert_int_equal(quota_new(t->ut->http, t->ut->gcp, &t->q, &cause),
	    0);
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	gcptest_cancel(t->ut);
	quota_free(t->q);
	unittest_free(t->ut);
	if (t->mini.pid > 0)
		fake_stop(&t->mini);
	gcptest_result_done(&t->res);
	free(t);
	return 0;
}

static void
on_listen(void *arg)
{
	struct t	*t = arg;

	t->listened++;
}

/* Refresh and run the loop; assert the callback came once; its error. */
static int
refresh_error(struct t *t, int force)
{
	t->res.calls = 0;
	assert_int_equal(quota_refresh(t->q, force, gcptest_result_cb, &t->res), 0);
	assert_int_equal(t->res.calls, 0);
	unittest_run(t->ut);
	assert_int_equal(t->res.calls, 1);
	return t->res.error;
}

/* Refresh and run the loop; assert the callback came once with 0. */
static void
refresh(struct t *t, int force)
{
	if (refresh_error(t, force) != 0)
		fail_msg("refresh: %s", t->res.cause);
}

static double
headroom(struct t *t, enum gcp_service svc, const char *region,
    const char *metric)
{
	double	d = -12345;

	assert_int_equal(quota_headroom(t->q, svc, region, metric, &d), 0);
	return d;
}

static size_t
count_requests(struct t *t, const char *method, const char *re, size_t want)
{
	json_t	*r = fake_requests(&t->ut->fake, method, re, want);
	size_t	 n = json_array_size(r);

	json_decref(r);
	return n;
}

static void
test_quota_regions_paged(void **state)
{
	struct t		*t = *state;
	struct quota_row	 row;
	json_t			*tab;
	size_t			 iter = 0, nregions = 0, nfake;
	const char		*last = "";

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"limit\":4,"
	    "\"usage\":1}"));
	t->ut->gcp->page_size = 7;
	start(t);
	quota_set_listener(t->q, on_listen, t);
	refresh(t, 0);
	assert_int_equal(t->listened, 1);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS") == 3);
	assert_true(headroom(t, GCP_SERVICE_BATCH, "us-central1",
	    "NVIDIA_T4_GPUS") == 3);	/* Batch draws on Compute */
	assert_true(headroom(t, GCP_SERVICE_GCE, "global",
	    "GPUS_ALL_REGIONS") == 64);
	assert_true(headroom(t, GCP_SERVICE_GCE, "europe-west4",
	    "NVIDIA_L4_GPUS") == 16);

	/* Every region the fake has, read over several pages. */
	while (quota_next(t->q, &iter, &row))
		if (row.service == GCP_SERVICE_GCE &&
		    strcmp(row.region, "global") != 0 &&
		    strcmp(row.region, last) != 0) {
			nregions++;
			last = row.region;
		}
	tab = fake_ctl(&t->ut->fake, "GET", "/_fake/quota", NULL);
	nfake = json_object_size(json_object_get(tab, "compute")) - 1;
	json_decref(tab);
	assert_int_equal(nregions, nfake);
	assert_true(count_requests(t, "GET", "/projects/gpuq-demo/regions$",
	    (nfake + 6) / 7) >= (nfake + 6) / 7);
	print_message("%zu regions over %zu pages of 7\n", nregions,
	    (nfake + 6) / 7);
}

static void
test_quota_configured_regions(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-central1", "europe-west4" };
	double		 d;

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 2;
	start(t);
	refresh(t, 0);
	assert_int_equal(count_requests(t, "GET", "/regions/us-central1$", 1),
	    1);
	assert_int_equal(count_requests(t, "GET", "/regions/europe-west4$",
	    1), 1);
	assert_int_equal(count_requests(t, "GET", "/regions$", 0), 0);
	assert_true(headroom(t, GCP_SERVICE_GCE, "europe-west4",
	    "NVIDIA_T4_GPUS") == 16);
	assert_int_equal(quota_headroom(t->q, GCP_SERVICE_GCE, "us-east1",
	    "NVIDIA_T4_GPUS", &d), -ENOENT);

	/* Fresh within the TTL: no callback, no request. */
	assert_int_equal(quota_refresh(t->q, 0, gcptest_result_cb, &t->res), 1);

	/* A quota error in one region: that region again, not the other. */
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"limit\":1}"));
	quota_invalidate(t->q, "us-central1");
	refresh(t, 0);
	assert_int_equal(count_requests(t, "GET", "/regions/us-central1$", 2),
	    2);
	assert_int_equal(count_requests(t, "GET", "/regions/europe-west4$",
	    1), 1);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS") == 1);
}

/*
 * More configured regions than are worth a regions.get each: one
 * regions.list, only the configured regions kept, and a configured
 * region the project does not have named in the error.
 */
static void
test_quota_many_regions(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-central1", "us-east1", "us-west1",
	    "europe-west4", "asia-east1" };
	double		 d;

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 5;
	start(t);
	refresh(t, 0);
	assert_int_equal(count_requests(t, "GET", "/regions$", 1), 1);
	assert_int_equal(count_requests(t, "GET", "/regions/us-central1$", 0),
	    0);
	assert_true(headroom(t, GCP_SERVICE_GCE, "asia-east1",
	    "NVIDIA_T4_GPUS") >= 0);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS") >= 0);
	assert_int_equal(quota_headroom(t->q, GCP_SERVICE_GCE,
	    "europe-west1", "NVIDIA_T4_GPUS", &d), -ENOENT);

	/* Fresh within the TTL: no request. */
	assert_int_equal(quota_refresh(t->q, 0, gcptest_result_cb, &t->res), 1);
	/* One region stale: the one list again. */
	quota_invalidate(t->q, "us-east1");
	refresh(t, 0);
	assert_int_equal(count_requests(t, "GET", "/regions$", 2), 2);
}

static void
test_quota_region_typo(void **state)
{
	struct t	*t = *state;
	const char	*typo[] = { "us-central1", "us-east1", "us-west1",
	    "europe-west4", "us-centrall" };

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = typo;
	t->ut->gcp->nregions = 5;
	start(t);
	assert_int_not_equal(refresh_error(t, 1), 0);
	assert_non_null(strstr(t->res.cause, "region us-centrall is not in"));
	assert_non_null(strstr(t->res.cause, "[gcp] regions"));
}

static void
test_quota_ttl_expiry(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-east1" };

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 1;
	t->ut->gcp->quota_ttl = 1;
	start(t);
	refresh(t, 0);
	assert_int_equal(quota_refresh(t->q, 0, gcptest_result_cb, &t->res), 1);
	/* A second later, the reading is due again. */
	unittest_run_for(t->ut, 1100);
	refresh(t, 0);
	assert_int_equal(count_requests(t, "GET", "/regions/us-east1$", 2),
	    2);
}

static void
test_quota_spot_metric(void **state)
{
	struct t	*t = *state;
	char		 buf[QUOTA_METRIC_MAX];
	double		 d;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"europe-west4\",\"metric\":\"PREEMPTIBLE_NVIDIA_T4_GPUS\","
	    "\"limit\":0}"));
	start(t);
	refresh(t, 0);
	assert_string_equal(quota_gpu_metric(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 0, buf), "NVIDIA_T4_GPUS");
	/* Spot draws on PREEMPTIBLE_ where it is granted... */
	assert_string_equal(quota_gpu_metric(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 1, buf),
	    "PREEMPTIBLE_NVIDIA_T4_GPUS");
	/* ...and on the on-demand quota where it is 0. */
	assert_string_equal(quota_gpu_metric(t->q, GCP_SERVICE_BATCH,
	    "europe-west4", "NVIDIA_TESLA_T4", 1, buf), "NVIDIA_T4_GPUS");
	assert_string_equal(quota_gpu_metric(t->q, GCP_SERVICE_VERTEX,
	    "us-central1", "nvidia-a100-80gb", 1, buf),
	    "custom_model_training_preemptible_nvidia_a100_80gb_gpus");
	assert_string_equal(quota_gpu_metric(t->q, GCP_SERVICE_VERTEX,
	    "us-central1", "nvidia-l4", 0, buf),
	    "custom_model_training_nvidia_l4_gpus");
	assert_null(quota_gpu_metric(t->q, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-voodoo", 0, buf));
	/* Compute has no on-demand H100 metric in regions.get: its limit
	 * is the GPU family's, from Cloud Quotas (test_quota_families). */
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 0, &d), 0);
	assert_true(d == 16);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 1, &d), 0);
	assert_true(d == 16);
	/* vCPUs: PREEMPTIBLE_CPUS is 0 by default, so Spot uses CPUS. */
	assert_string_equal(quota_cpu_metric(t->q, "us-central1",
	    "n1-highmem-8", 1, buf), "CPUS");
	assert_string_equal(quota_cpu_metric(t->q, "us-central1",
	    "a2-highgpu-1g", 0, buf), "CPUS");
}

/*
 * H100/H200/B200 GPUs and A3/A4/G2 vCPUs: limits from Cloud Quotas family
 * quota ids (DESIGN GA.5), per region where set, else the default; usage
 * from the daemon's books, which ordinary Compute metrics ignore.
 */
static void
test_quota_families(void **state)
{
	struct t	*t = *state;
	char		 buf[QUOTA_METRIC_MAX];
	double		 d;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"GPUS-PER-GPU-FAMILY-per-project-"
	    "region:NVIDIA_H100\",\"limit\":4}"));
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"CPUS-PER-VM-FAMILY-per-project-"
	    "region:A3\",\"limit\":100}"));
	start(t);
	refresh(t, 0);
	assert_true(count_requests(t, "GET", "/services/compute.googleapis."
	    "com/quotaInfos/GPUS-PER-GPU-FAMILY-per-project-region$", 1) ==
	    1);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 0, &d), 0);
	assert_true(d == 4);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-east1", "nvidia-h100-80gb", 0, &d), 0);
	assert_true(d == 16);		/* the family's default */
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-b200", 0, &d), 0);
	assert_true(d == 16);
	/* A3 vCPUs count against A3_CPUS, not CPUS. */
	assert_string_equal(quota_cpu_metric(t->q, "us-central1",
	    "a3-highgpu-8g", 0, buf), "A3_CPUS");
	assert_int_equal(quota_headroom(t->q, GCP_SERVICE_GCE, "us-central1",
	    "A3_CPUS", &d), 0);
	assert_true(d == 100);
	assert_string_equal(quota_cpu_metric(t->q, "us-central1",
	    "g2-standard-8", 0, buf), "G2_CPUS");
	/* No usage from Cloud Quotas: the books say 3 H100s run. */
	quota_set_usage(t->q, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_H100_GPUS", 3);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 0, &d), 0);
	assert_true(d == 1);
	/* regions.get's own usage is not overwritten by the books. */
	quota_set_usage(t->q, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS", 9);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 0, &d), 0);
	assert_true(d == 16);
	/* A re-read keeps the books' usage. */
	refresh(t, 1);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-h100-80gb", 0, &d), 0);
	assert_true(d == 1);
}

static void
test_quota_in_flight(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-central1", "us-east1" };
	char		 buf[QUOTA_METRIC_MAX];
	const char	*m;
	double		 d;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"limit\":4}"));
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"global\",\"metric\":\"GPUS_ALL_REGIONS\",\"limit\":6}"));
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 2;
	start(t);
	refresh(t, 0);
	m = quota_gpu_metric(t->q, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 0, buf);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 0, &d), 0);
	assert_true(d == 4);

	/* Two launches decide at once: the second sees the first. */
	quota_reserve(t->q, GCP_SERVICE_GCE, "us-central1", m, 2);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1", m) == 2);
	quota_reserve(t->q, GCP_SERVICE_GCE, "us-central1", m, 2);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1", m) == 0);
	/* GPUS_ALL_REGIONS is held too: 6 - 4 leaves 2 for us-east1. */
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-east1", "nvidia-tesla-t4", 0, &d), 0);
	assert_true(d == 2);
	/* One launch fails, one succeeds. */
	quota_release(t->q, GCP_SERVICE_GCE, "us-central1", m, 2);
	quota_commit(t->q, GCP_SERVICE_GCE, "us-central1", m, 2);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1", m) == 2);

	/* The VM shows in the next reading: counted once, not twice. */
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"usage\":2}"));
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"global\",\"metric\":\"GPUS_ALL_REGIONS\",\"usage\":2}"));
	refresh(t, 1);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-central1", m) == 2);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-east1", "nvidia-tesla-t4", 0, &d), 0);
	assert_true(d == 4);
}

static void
test_quota_vertex_paged(void **state)
{
	struct t	*t = *state;
	const char	*m = "custom_model_training_nvidia_t4_gpus";

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"service\":"
	    "\"aiplatform\",\"region\":\"us-central1\",\"metric\":"
	    "\"custom_model_training_nvidia_t4_gpus\",\"limit\":2}"));
	t->ut->gcp->page_size = 5;
	start(t);
	refresh(t, 0);
	assert_true(count_requests(t, "GET", "/quotaInfos$", 4) >= 4);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "us-central1", m) == 2);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "europe-west4", m) == 16);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "us-central1",
	    "custom_model_training_preemptible_nvidia_t4_gpus") == 16);
	/* Cloud Quotas has no usage: the daemon's books say 1 runs. */
	quota_reserve(t->q, GCP_SERVICE_VERTEX, "us-central1", m, 1);
	quota_commit(t->q, GCP_SERVICE_VERTEX, "us-central1", m, 1);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "us-central1", m) == 1);
	quota_set_usage(t->q, GCP_SERVICE_VERTEX, "us-central1", m, 1);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "us-central1", m) == 1);
	quota_set_usage(t->q, GCP_SERVICE_VERTEX, "europe-west4", m, 3);
	assert_true(headroom(t, GCP_SERVICE_VERTEX, "europe-west4", m) == 13);
}

static void
test_quota_zones_paged(void **state)
{
	struct t		*t = *state;
	struct quota_zone	 z[64];
	int			 n, i;

	NEED_FAKE(t->ut);
	t->ut->gcp->page_size = 20;
	start(t);
	assert_int_equal(quota_zones(t->q, NULL, "nvidia-tesla-t4", z, 64),
	    -ENOENT);
	refresh(t, 0);
	assert_true(count_requests(t, "GET", "/aggregated/acceleratorTypes$",
	    2) >= 2);
	assert_true(count_requests(t, "GET", "/projects/gpuq-demo/zones$",
	    2) >= 2);
	n = quota_zones(t->q, "us-central1", "nvidia-tesla-t4", z, 64);
	assert_true(n >= 2);
	for (i = 0; i < n; i++) {
		assert_string_equal(z[i].region, "us-central1");
		assert_int_equal(z[i].max_per_vm, 4);
		assert_int_equal(z[i].up, 1);
	}
	assert_int_equal(quota_zone_max(t->q, z[0].zone, "NVIDIA_TESLA_T4"),
	    4);
	assert_int_equal(quota_zone_max(t->q, "us-central1-z",
	    "nvidia-tesla-t4"), 0);
	n = quota_zones(t->q, NULL, "nvidia-tesla-a100", z, 64);
	assert_true(n > 0);
	assert_int_equal(z[0].max_per_vm, 16);
	print_message("T4 in %d zones of us-central1; A100 in %d zones\n",
	    quota_zones(t->q, "us-central1", "nvidia-tesla-t4", z, 64), n);
}

static void
test_quota_unknown_region(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-central1" };
	json_t		*j, *w;
	double		 d;

	NEED_FAKE(t->ut);
	/* A region answered without quotas (A.1): unknown, never zero. */
	assert_int_equal(mini_start(&t->mini, "{\"name\":\"us-central1\","
	    "\"status\":\"UP\",\"quotaStatusWarning\":{\"code\":"
	    "\"QUOTA_INFO_UNAVAILABLE\",\"message\":\"Quota information is "
	    "not available to client requests.\"}}"), 0);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 1;
	t->ut->gcp->compute_endpoint = t->mini.url;
	t->ut->gcp->providers = (const char *const[]){ "gce" };
	t->ut->gcp->nproviders = 1;
	start(t);
	(void)refresh_error(t, 0);
	assert_int_equal(quota_headroom(t->q, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS", &d), -ENOENT);
	assert_int_equal(quota_gpu_headroom(t->q, GCP_SERVICE_GCE,
	    "us-central1", "nvidia-tesla-t4", 0, &d), -ENOENT);
	j = quota_to_json(t->q, "us-central1", NULL);
	w = json_object_get(j, "warnings");
	assert_int_equal(json_array_size(w), 1);
	assert_string_equal(json_string_value(json_array_get(w, 0)),
	    "us-central1: Quota information is not available to client "
	    "requests.");
	json_decref(j);
}

static void
test_quota_read_error(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-west1" };

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 1;
	start(t);
	refresh(t, 0);
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-west1",
	    "NVIDIA_T4_GPUS") == 16);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"/regions/us-west1$\",\"status\":403,\"count\":1}"));
	quota_invalidate(t->q, "us-west1");
	assert_int_equal(refresh_error(t, 0), -EIO);
	assert_string_equal(t->res.cause, "reading Compute Engine region quotas "
	    "for us-west1 failed: HTTP 403 PERMISSION_DENIED: Injected fault");
	/* The last good reading stays. */
	assert_true(headroom(t, GCP_SERVICE_GCE, "us-west1",
	    "NVIDIA_T4_GPUS") == 16);
	/* Without a project there is nothing to read. */
	quota_free(t->q);
	t->ut->gcp->project = NULL;
	assert_int_equal(quota_new(t->ut->http, t->ut->gcp, &t->q, NULL), 0);
	assert_int_equal(quota_refresh(t->q, 0, gcptest_result_cb, &t->res), -EINVAL);
}

static void
test_quota_json(void **state)
{
	struct t	*t = *state;
	const char	*regions[] = { "us-central1", "europe-west4" };
	json_t		*j, *rows, *r, *zones;
	size_t		 i;
	int		 saw_global = 0, saw_vertex = 0;

	NEED_FAKE(t->ut);
	t->ut->gcp->regions = regions;
	t->ut->gcp->nregions = 2;
	start(t);
	refresh(t, 0);
	quota_reserve(t->q, GCP_SERVICE_GCE, "us-central1", "NVIDIA_T4_GPUS",
	    1);
	j = quota_to_json(t->q, "us-central1", "nvidia-tesla-t4");
	assert_non_null(j);
	assert_true(json_integer_value(json_object_get(j, "age_s")) < 5);
	rows = json_object_get(j, "quotas");
	assert_true(json_array_size(rows) >= 4);
	json_array_foreach(rows, i, r) {
		const char *m = json_string_value(json_object_get(r, "metric"));
		const char *reg = json_string_value(json_object_get(r,
		    "region"));

		assert_true(strcmp(reg, "us-central1") == 0 ||
		    strcmp(reg, "global") == 0);
		assert_true(strstr(m, "T4") != NULL ||
		    strstr(m, "t4") != NULL ||
		    strcmp(m, "GPUS_ALL_REGIONS") == 0);
		if (strcmp(reg, "global") == 0)
			saw_global = 1;
		if (strcmp(json_string_value(json_object_get(r, "service")),
		    "vertex") == 0)
			saw_vertex = 1;
		if (strcmp(m, "NVIDIA_T4_GPUS") == 0) {
			assert_true(json_real_value(json_object_get(r,
			    "in_flight")) == 1);
			assert_true(json_real_value(json_object_get(r,
			    "free")) == 15);
		}
	}
	assert_true(saw_global && saw_vertex);
	zones = json_object_get(j, "zones");
	assert_true(json_array_size(zones) >= 1);
	json_decref(j);
	assert_null(quota_to_json(t->q, NULL, "nvidia-voodoo"));
}

/* quota_limit() says for one reading what quota_next() says of it. */
static void
test_quota_limit(void **state)
{
	struct t		*t = *state;
	struct quota_row	 row;
	size_t			 iter = 0, n = 0;
	double			 lim;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/quota", "{\"region\":"
	    "\"us-central1\",\"metric\":\"NVIDIA_T4_GPUS\",\"limit\":4}"));
	start(t);
	refresh(t, 0);
	assert_int_equal(quota_limit(t->q, GCP_SERVICE_GCE, "us-central1",
	    "NVIDIA_T4_GPUS", &lim), 0);
	assert_true(lim == 4);
	while (quota_next(t->q, &iter, &row)) {
		if (!row.known) {
			assert_int_equal(quota_limit(t->q, row.service,
			    row.region, row.metric, &lim), -ENOENT);
			continue;
		}
		assert_int_equal(quota_limit(t->q, row.service, row.region,
		    row.metric, &lim), 0);
		assert_true(lim == row.limit);
		n++;
	}
	assert_true(n > 10);
	assert_int_equal(quota_limit(t->q, GCP_SERVICE_GCE, "us-central1",
	    "NO_SUCH_METRIC", &lim), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_quota_regions_paged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_configured_regions,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_many_regions,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_region_typo,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_ttl_expiry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_spot_metric, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_families, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_in_flight, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_vertex_paged,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_zones_paged, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_unknown_region,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_quota_read_error, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_limit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quota_json, setup,
		    teardown),
	};

	log_init("test-quota", getenv("GPUQ_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARNING, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
