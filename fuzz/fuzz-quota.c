/*
 * fuzz-quota.c: the quota mappers (providers/gcp/quota.c: quota_on_answer
 * and what it calls) from the bytes of a reply. Byte 0 picks which
 * answer it is: Compute project quotas, regions.get, regions.list,
 * acceleratorTypes.aggregatedList, zones.list, or Cloud Quotas
 * quotaInfos; the rest is the page, taken as the last one. The cache is
 * then read back as `gpuq quotas` and the scheduler read it. quota.c is
 * included whole to reach its static functions; no request leaves.
 */
#include "providers/gcp/quota.c"

#include "fuzz/fuzz.h"

static struct http *
quota_fuzz_http(const struct gcp_conf *conf)
{
	static struct http	*http;

	if (http == NULL && http_new(uv_default_loop(), conf, &http) != 0)
		abort();
	return http;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const regions[] = { "us-central1", "europe-west4" };
	struct gcp_conf		 conf = { .project = "p", .quota_ttl = 60 };
	struct quota		*q;
	struct quota_req	*rq;
	struct quota_zone	 zones[8];
	struct quota_row	 row;
	struct http_resp	 r;
	json_t			*doc;
	double			 d;
	size_t			 iter = 0;

	if (size < 1)
		return 0;
	fuzz_quiet();
	if ((doc = fuzz_json(data + 1, size - 1)) == NULL)
		return 0;
	if (json_is_object(doc))
		(void)json_object_del(doc, "nextPageToken");
	/* Half the time a region list, so regions.list can miss one. */
	if (data[0] & 0x80) {
		conf.regions = regions;
		conf.nregions = 2;
	}

	(void)quota_new(quota_fuzz_http(&conf), &conf, &q, NULL);
	rq = xcalloc(1, sizeof *rq);
	rq->q = q;
	rq->kind = (enum quota_req_kind)((data[0] & 0x7f) % 6);
	if (rq->kind == QR_REGION_GET)
		rq->region = xstrdup("us-central1");
	q->inflight = 1;
	q->round = 1;
	memset(&r, 0, sizeof r);
	gcp_error_init(&r.err);
	r.status = 200;
	r.json = doc;
	quota_on_answer(&r, rq);

	json_decref(quota_to_json(q, NULL, NULL));
	json_decref(quota_to_json(q, "us-central1", "nvidia-tesla-t4"));
	while (quota_next(q, &iter, &row) == 1)
		;
	(void)quota_gpu_headroom(q, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-tesla-t4", 0, &d);
	(void)quota_gpu_headroom(q, GCP_SERVICE_VERTEX, "us-central1",
	    "nvidia-l4", 1, &d);
	(void)quota_zones(q, "us-central1", "nvidia-tesla-t4", zones, 8);
	quota_free(q);
	json_decref(doc);
	return 0;
}
