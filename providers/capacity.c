/*
 * capacity.c: the kinds of capacity an offer can be (doc/DESIGN.md
 * "Capacity kinds") and where Google sells flex-start (API-NOTES K).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "common/gpu.h"
#include "providers/prov-impl.h"
#include "providers/provider.h"

static const char *const capacity_table[CAPACITY_NKINDS] = {
	[CAPACITY_STANDARD] = "standard",
	[CAPACITY_SPOT] = "spot",
	[CAPACITY_FLEX] = "flex",
	[CAPACITY_RESERVED] = "reserved",
};

const char *
capacity_name(int kind)
{
	if (kind < 0 || kind >= CAPACITY_NKINDS)
		return "?";
	return capacity_table[kind];
}

int
capacity_lookup(const char *name)
{
	int	k;

	for (k = 0; name != NULL && k < CAPACITY_NKINDS; k++)
		if (strcmp(name, capacity_table[k]) == 0)
			return k;
	return -1;
}

const char *
capacity_names(void)
{
	return "spot, flex, reserved, standard";
}

int
capacity_preemptible(int kind)
{
	return kind == CAPACITY_SPOT;
}

/* Does MT start with one of the NULL-ended PREFIXES? */
static int
capacity_prefixed(const char *mt, const char *const *prefixes)
{
	size_t	i;

	for (i = 0; mt != NULL && prefixes[i] != NULL; i++)
		if (strncmp(mt, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

int64_t
prov_flex_run(const struct prov_launch *l, int64_t grace)
{
	int64_t	run = l->max_runtime > 0 ? l->max_runtime + grace :
	    CAPACITY_FLEX_MAX_RUN;

	return run < CAPACITY_FLEX_MAX_RUN ? run : CAPACITY_FLEX_MAX_RUN;
}

int64_t
prov_flex_queue(const struct prov_launch *l, int64_t max)
{
	int64_t	wait = l->flex_wait > 0 ? l->flex_wait :
	    CAPACITY_FLEX_WAIT_DEFAULT;

	wait += PROV_FLEX_QUEUE_MARGIN;
	return max > 0 && wait > max ? max : wait;
}

const char *
capacity_flex_refusal(const struct provider *p, const struct gpu_type *gpu,
    const char *mt)
{
	/* Vertex AI training: L4, A100, H100, H200, B200 (API-NOTES K.1). */
	static const char *const vertex_gpus[] = { "nvidia-l4",
	    "nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-h100-80gb",
	    "nvidia-h100-mega-80gb", "nvidia-h200-141gb", "nvidia-b200",
	    NULL };
	/* Compute Engine: the accelerator-optimized series but A4X and G4
	 * (API-NOTES K.2); Batch runs Compute VMs, and no Batch page says
	 * otherwise (K.3). */
	static const char *const compute_series[] = { "a2-", "a3-", "a4-",
	    "g2-", NULL };
	size_t	i;

	if (p == NULL || gpu == NULL)
		return "not offered";
	if (strcmp(p->name, "vertex") == 0) {
		for (i = 0; vertex_gpus[i] != NULL; i++)
			if (strcmp(gpu->name, vertex_gpus[i]) == 0)
				return NULL;
		return "not offered by Vertex AI for this GPU";
	}
	if (strcmp(p->name, "gce") == 0 || strcmp(p->name, "batch") == 0) {
		if (capacity_prefixed(mt, compute_series))
			return NULL;
		return "not offered by this service for this machine type";
	}
	return "not offered by this service";
}
