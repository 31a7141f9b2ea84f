/*
 * fuzz-price.c: the Cloud Billing catalog mapper (providers/gcp/price.c:
 * price_on_page, price_sku_add) from the bytes of a services.skus.list
 * page; byte 0 picks Compute Engine's catalog or Vertex AI's. The page
 * is then the whole catalog: it is swapped in and read back as
 * `gpuq prices` and the scheduler read it. price.c is included whole to
 * reach its static functions; no request leaves.
 */
#include "providers/gcp/price.c"

#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gcp_conf	 conf = { .project = "p",
	    .price_refresh = 86400 };
	struct price			*p;
	struct price_chain		*ch;
	struct http_resp		 r;
	json_t				*doc;
	double				 d;

	if (size < 1)
		return 0;
	fuzz_quiet();
	if ((doc = fuzz_json(data + 1, size - 1)) == NULL)
		return 0;
	/* The last page: a next one would be a request. */
	if (json_is_object(doc))
		(void)json_object_del(doc, "nextPageToken");

	p = xcalloc(1, sizeof *p);
	p->conf = gcp_conf_dup(&conf);
	ch = xcalloc(1, sizeof *ch);
	ch->p = p;
	ch->cls = data[0] & 1 ? PC_VERTEX : PC_COMPUTE;
	ch->service = ch->cls == PC_VERTEX ? GCP_VERTEX_SERVICE_ID :
	    GCP_COMPUTE_SERVICE_ID;
	p->fetching = 1;
	p->chains = 1;
	p->inflight = 1;
	memset(&r, 0, sizeof r);
	gcp_error_init(&r.err);
	r.status = 200;
	r.json = doc;
	price_on_page(&r, ch);

	json_decref(price_to_json(p, NULL, NULL));
	json_decref(price_to_json(p, "us-central1", "nvidia-tesla-t4"));
	(void)price_gpu_hourly(p, GCP_SERVICE_GCE, "us-central1",
	    "nvidia-l4", 1, data[0] & 2, &d);
	(void)price_host_hourly(p, GCP_SERVICE_VERTEX, "us-central1",
	    "g2-standard-8", data[0] & 2, &d);

	p->dead = 1;
	p->timer_closed = 1;
	price_maybe_free(p);
	json_decref(doc);
	return 0;
}
