/*
 * gpu.c: the table behind gpu.h. Pure data and lookups; no I/O.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/gpu.h"
#include "common/xmalloc.h"

static const struct gpu_type gpu_types[] = {
	{ "nvidia-tesla-t4", "NVIDIA_TESLA_T4", "T4", "NVIDIA_T4", "t4",
	  "Nvidia Tesla T4", 16,
	  { { 1, "n1-highmem-4" }, { 2, "n1-highmem-8" },
	    { 4, "n1-standard-64" } } },
	{ "nvidia-l4", "NVIDIA_L4", "L4", "NVIDIA_L4", "l4",
	  "Nvidia L4", 24,
	  { { 1, "g2-standard-4" }, { 2, "g2-standard-24" },
	    { 4, "g2-standard-48" }, { 8, "g2-standard-96" } } },
	{ "nvidia-tesla-v100", "NVIDIA_TESLA_V100", "V100", "NVIDIA_V100",
	  "v100", "Nvidia Tesla V100", 16,
	  { { 1, "n1-highmem-8" }, { 2, "n1-highmem-16" },
	    { 4, "n1-highmem-32" }, { 8, "n1-highmem-64" } } },
	{ "nvidia-tesla-p100", "NVIDIA_TESLA_P100", "P100", "NVIDIA_P100",
	  "p100", "Nvidia Tesla P100", 16,
	  { { 1, "n1-highmem-8" }, { 2, "n1-highmem-16" },
	    { 4, "n1-highmem-32" } } },
	{ "nvidia-tesla-p4", "NVIDIA_TESLA_P4", "P4", "NVIDIA_P4", "p4",
	  "Nvidia Tesla P4", 8,
	  { { 1, "n1-highmem-8" }, { 2, "n1-highmem-16" },
	    { 4, "n1-highmem-32" } } },
	{ "nvidia-tesla-a100", "NVIDIA_TESLA_A100", "A100", "NVIDIA_A100",
	  "a100", "Nvidia Tesla A100", 40,
	  { { 1, "a2-highgpu-1g" }, { 2, "a2-highgpu-2g" },
	    { 4, "a2-highgpu-4g" }, { 8, "a2-highgpu-8g" },
	    { 16, "a2-megagpu-16g" } } },
	{ "nvidia-a100-80gb", "NVIDIA_A100_80GB", "A100-80GB",
	  "NVIDIA_A100_80GB", "a100_80gb", "Nvidia A100 80GB", 80,
	  { { 1, "a2-ultragpu-1g" }, { 2, "a2-ultragpu-2g" },
	    { 4, "a2-ultragpu-4g" }, { 8, "a2-ultragpu-8g" } } },
	{ "nvidia-h100-80gb", "NVIDIA_H100_80GB", "H100", "NVIDIA_H100",
	  "h100", "Nvidia H100 80GB", 80,
	  { { 1, "a3-highgpu-1g" }, { 2, "a3-highgpu-2g" },
	    { 4, "a3-highgpu-4g" }, { 8, "a3-highgpu-8g" } } },
	{ "nvidia-h100-mega-80gb", "NVIDIA_H100_MEGA_80GB", "H100-MEGA",
	  "NVIDIA_H100_MEGA", "h100_mega", "Nvidia H100 Mega 80GB", 80,
	  { { 8, "a3-megagpu-8g" } } },
	{ "nvidia-h200-141gb", "NVIDIA_H200_141GB", "H200", "NVIDIA_H200",
	  "h200", "Nvidia H200 141GB", 141,
	  { { 8, "a3-ultragpu-8g" } } },
	{ "nvidia-b200", "NVIDIA_B200", "B200", "NVIDIA_B200", "b200",
	  "Nvidia B200", 180,
	  { { 8, "a4-highgpu-8g" } } },
};
#define GPU_NTYPES	(sizeof gpu_types / sizeof gpu_types[0])

const struct gpu_type *
gpu_lookup(const char *name)
{
	size_t	i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < GPU_NTYPES; i++) {
		if (strcasecmp(name, gpu_types[i].name) == 0 ||
		    strcasecmp(name, gpu_types[i].vertex) == 0)
			return &gpu_types[i];
	}
	return NULL;
}

const struct gpu_type *
gpu_table(int *ret_n)
{
	*ret_n = (int)GPU_NTYPES;
	return gpu_types;
}

const char *
gpu_default_host(const struct gpu_type *g, int count)
{
	int	i;

	for (i = 0; i < GPU_MAX_HOSTS && g->hosts[i].count != 0; i++)
		if (g->hosts[i].count == count)
			return g->hosts[i].machine_type;
	return NULL;
}

char *
gpu_counts_text(const struct gpu_type *g)
{
	char	*s = xstrdup(""), *t;
	int	 i, n = 0;

	while (n < GPU_MAX_HOSTS && g->hosts[n].count != 0)
		n++;
	for (i = 0; i < n; i++) {
		t = xprintf("%s%s%d", s,
		    i == 0 ? "" : (i == n - 1 ? " or " : ", "),
		    g->hosts[i].count);
		free(s);
		s = t;
	}
	return s;
}

/* vCPUs of the accelerator-optimized shapes, whose names do not say it. */
static const struct {
	const char	*name;
	int		 vcpus;
} gpu_shapes[] = {
	{ "a2-highgpu-1g", 12 }, { "a2-highgpu-2g", 24 },
	{ "a2-highgpu-4g", 48 }, { "a2-highgpu-8g", 96 },
	{ "a2-megagpu-16g", 96 },
	{ "a2-ultragpu-1g", 12 }, { "a2-ultragpu-2g", 24 },
	{ "a2-ultragpu-4g", 48 }, { "a2-ultragpu-8g", 96 },
	{ "a3-highgpu-1g", 26 }, { "a3-highgpu-2g", 52 },
	{ "a3-highgpu-4g", 104 }, { "a3-highgpu-8g", 208 },
	{ "a3-megagpu-8g", 208 }, { "a3-ultragpu-8g", 224 },
	{ "a4-highgpu-8g", 224 },
};

/*
 * Compute Engine sells a3-highgpu-1g, -2g and -4g only as Spot VMs or
 * through flex-start (Dynamic Workload Scheduler), not on demand (Compute
 * Engine "Accelerator-optimized machine family", A3 High; data/README.md
 * shape_not_sold_ondemand): an on-demand offer for them would only be
 * refused.
 */
int
gpu_machine_spot_only(const char *mt)
{
	static const char *const spot_only[] = { "a3-highgpu-1g",
	    "a3-highgpu-2g", "a3-highgpu-4g" };
	size_t	i;

	for (i = 0; mt != NULL && i < sizeof spot_only / sizeof spot_only[0];
	    i++)
		if (strcmp(mt, spot_only[i]) == 0)
			return 1;
	return 0;
}

int
gpu_machine_vcpus(const char *mt)
{
	const char	*dash;
	char		*end;
	long		 n;
	size_t		 i;

	for (i = 0; i < sizeof gpu_shapes / sizeof gpu_shapes[0]; i++)
		if (strcmp(mt, gpu_shapes[i].name) == 0)
			return gpu_shapes[i].vcpus;
	/* n1-standard-8, n1-highmem-16, g2-standard-24, custom-8-30720 */
	if (strncmp(mt, "custom-", 7) == 0 || strstr(mt, "-custom-") != NULL) {
		dash = strstr(mt, "custom-") + 7;
		n = strtol(dash, &end, 10);
		return (end != dash && n > 0 && n < 1000) ? (int)n : -1;
	}
	if ((dash = strrchr(mt, '-')) == NULL)
		return -1;
	n = strtol(dash + 1, &end, 10);
	if (end == dash + 1 || *end != '\0' || n <= 0 || n > 1000)
		return -1;
	return (int)n;
}

char *
gpu_names_text(void)
{
	char	*s = xstrdup(""), *t;
	size_t	 i;

	for (i = 0; i < GPU_NTYPES; i++) {
		t = xprintf("%s%s%s", s, i ? ", " : "", gpu_types[i].name);
		free(s);
		s = t;
	}
	return s;
}
