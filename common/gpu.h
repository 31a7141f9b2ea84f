/*
 * gpu.h: the GPU types gpuq knows, and their many names.
 *
 * Google spells one GPU several ways: Compute Engine and Batch say
 * "nvidia-tesla-t4", Vertex AI says "NVIDIA_TESLA_T4", Compute quotas say
 * "NVIDIA_T4_GPUS" (and "PREEMPTIBLE_NVIDIA_T4_GPUS" for Spot), Vertex
 * quotas say "custom_model_training_nvidia_t4_gpus". gpuq stores the
 * Compute Engine spelling. Counts and default hosts follow
 * shared/data/gcp-gpu-zones.csv and gcp-gpu-prices.csv.
 */
#ifndef GPUQ_GPU_H
#define GPUQ_GPU_H

#define GPU_MAX_HOSTS	5

struct gpu_host {
	int		 count;		/* GPUs per VM */
	const char	*machine_type;	/* default host for that count */
};

struct gpu_type {
	const char	*name;		/* Compute Engine: nvidia-tesla-t4 */
	const char	*vertex;	/* Vertex AI enum: NVIDIA_TESLA_T4 */
	const char	*short_name;	/* price data, humans: T4 */
	const char	*quota;		/* Compute metric stem: NVIDIA_T4 */
	const char	*vertex_quota;	/* Vertex metric stem: t4 */
	const char	*sku_name;	/* in Billing SKU descriptions */
	int		 memory_gib;
	struct gpu_host	 hosts[GPU_MAX_HOSTS];	/* counts offered, ascending */
};

/* Look up either spelling, case-insensitive; NULL if unknown. */
const struct gpu_type	*gpu_lookup(const char *name);
/* The whole table, for listings; *ret_n gets its length. */
const struct gpu_type	*gpu_table(int *ret_n);
/* Default host machine type for COUNT GPUs, or NULL if not offered. */
const char		*gpu_default_host(const struct gpu_type *, int count);
/* "1, 2 or 4": the counts offered, for error messages. New string. */
char			*gpu_counts_text(const struct gpu_type *);
/* vCPUs of a machine type ("n1-highmem-8" -> 8); -1 if unknown. */
int			 gpu_machine_vcpus(const char *machine_type);
/* Is MACHINE_TYPE sold only as Spot or flex-start, never on demand
 * (a3-highgpu-1g, -2g, -4g)? */
int			 gpu_machine_spot_only(const char *machine_type);
/* Comma-separated list of every name, for error messages. New string. */
char			*gpu_names_text(void);

#endif
