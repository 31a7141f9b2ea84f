/*
 * fuzz-gce.c: the Compute Engine Instance mapper (providers/gce.c
 * gce_instance_map), from the bytes of a reply. An object is a list
 * page (aggregatedList or list) or one instance; an array is
 * [instance, guest attributes, operationType], the three things the
 * poll puts together for a stopped instance.
 */
#include "config.h"

#include <jansson.h>

#include "providers/prov-impl.h"
#include "fuzz/fuzz.h"

struct gce_fuzz {
	json_t		*guest;
	const char	*op_type;
};

static int
gce_fuzz_map(json_t *inst, void *arg)
{
	struct gce_fuzz		*f = arg;
	struct prov_observed	 o;
	struct prov_text	 t;

	if (inst == NULL)
		return 0;
	(void)gce_instance_stopped(inst);
	prov_observed_init(&o);
	if (gce_instance_map(inst, f->guest, f->op_type, &o, &t) == 0)
		fuzz_observed_check(&o);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gce_fuzz	 f = { NULL, NULL };
	json_t		*doc;

	fuzz_quiet();
	if ((doc = fuzz_json(data, size)) == NULL)
		return 0;
	if (json_is_array(doc)) {
		f.guest = json_array_get(doc, 1);
		f.op_type = json_string_value(json_array_get(doc, 2));
		(void)gce_fuzz_map(json_array_get(doc, 0), &f);
	} else
		fuzz_map_page(doc, "instances", gce_fuzz_map, &f);
	json_decref(doc);
	return 0;
}
