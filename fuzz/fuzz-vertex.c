/*
 * fuzz-vertex.c: the Vertex AI CustomJob (providers/vertex.c vertex_job_map)
 * mapper, from the bytes of a reply: a list page ("customJobs": [...]) or
 * one resource.
 */
#include "config.h"

#include <jansson.h>

#include "providers/prov-impl.h"
#include "fuzz/fuzz.h"

static int
vertex_fuzz_map(json_t *item, void *arg)
{
	struct prov_observed	o;
	struct prov_text	t;

	prov_observed_init(&o);
	if (vertex_job_map(item, &o, &t) == 0)
		fuzz_observed_check(&o);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*doc;

	fuzz_quiet();
	if ((doc = fuzz_json(data, size)) == NULL)
		return 0;
	fuzz_map_page(doc, "customJobs", vertex_fuzz_map, NULL);
	json_decref(doc);
	return 0;
}
