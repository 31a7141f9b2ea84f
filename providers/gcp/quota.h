/*
 * quota.h: how many GPUs gpuq may still start, per service, region and
 * quota metric, and which zones offer which GPU.
 *
 * Compute Engine quotas (used by Compute VMs and by Batch, whose VMs are
 * Compute VMs) come from regions.get/list and projects.get
 * (GPUS_ALL_REGIONS), DESIGN GA.1-A.2; zones and their GPUs from
 * acceleratorTypes.aggregatedList and zones.list (A.3-A.4). Vertex AI
 * training limits come from Cloud Quotas quotaInfos (B.2), which has no
 * usage: the daemon reports its own Vertex usage from its books, and
 * quota.c counts the GPUs every other Vertex job of the project holds
 * (customJobs.list per region, B.3).
 *
 * Readings are cached for [scheduler] quota_ttl and refreshed on demand;
 * a quota error invalidates its region early. Between a launch decision
 * and the next reading that shows the launch, its GPUs are held "in
 * flight" so two launches never count the same free GPU twice:
 *
 *   quota_reserve() at the decision
 *     -> quota_release() if the launch failed (nothing was created)
 *     -> quota_commit() if it succeeded: held until a reading taken
 *        after the commit (or, for Vertex, quota_set_usage()) counts it.
 *
 * Metric names: Compute's own ("NVIDIA_T4_GPUS", "PREEMPTIBLE_NVIDIA_T4_
 * GPUS", "GPUS_ALL_REGIONS" under region "global"); Vertex's without the
 * service prefix ("custom_model_training_nvidia_t4_gpus"). A region whose
 * answer had no quotas (quotaStatusWarning) is unknown, never zero.
 */
#ifndef GPUQ_QUOTA_H
#define GPUQ_QUOTA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct http;
struct quota;

#define QUOTA_METRIC_MAX	96	/* longest metric name + NUL */
#define QUOTA_GLOBAL		"global"

/* One reading, as listed by quota_next(). Strings borrowed until the
 * next refresh or quota_free(). */
struct quota_row {
	enum gcp_service service;	/* GCE (Compute, also Batch's) or
					   VERTEX */
	const char	*region;	/* "global" for project-wide */
	const char	*metric;
	int		 known;		/* 0: no reading (limit unknown) */
	double		 limit;
	double		 usage;
	double		 in_flight;	/* reserved + committed, unseen */
	double		 free;		/* limit - usage - in_flight */
	time_t		 fetched_at;	/* wall clock; 0 if never */
};

/* A zone offering a GPU (from acceleratorTypes). */
struct quota_zone {
	char		 zone[64];
	char		 region[64];
	int		 max_per_vm;	/* maximumCardsPerInstance */
	int		 up;		/* zone status UP (1 if unknown) */
};

/* A refresh ended: ERROR 0, or < 0 with CAUSE (borrowed). */
typedef void	(*quota_cb)(int error, const char *cause, void *arg);

/* New cache using HTTP (borrowed) and CONF (read now). No network. */
int	 quota_new(struct http *http, const struct gcp_conf *conf,
	    struct quota **ret, char **cause);
/* Free (NULL ok). Pending refresh callbacks run once with -ECANCELED;
 * requests in flight finish in the background. */
void	 quota_free(struct quota *);
/*
 * Make the readings no older than quota_ttl. Returns 1 if they already
 * are (CB is not called), 0 if a refresh runs (CB is called once, later;
 * concurrent callers share one refresh), or a negative errno (-EINVAL:
 * no project configured) without calling CB. FORCE refreshes anyway.
 */
int	 quota_refresh(struct quota *, int force, quota_cb cb, void *arg);
/* Read REGION again at the next refresh (NULL: everything). */
void	 quota_invalidate(struct quota *, const char *region);
/*
 * Refresh RV (reservation.h; borrowed, outlives Q's round) in every
 * round, as one more chain, when its reading is older than quota_ttl.
 */
struct resv;
void	 quota_set_resv(struct quota *, struct resv *rv);
/* CB(ARG) after every refresh (the scheduler's wake-up). */
void	 quota_set_listener(struct quota *, void (*cb)(void *), void *arg);

/*
 * The metric a launch of GPU (any spelling gpu.h knows) with SPOT draws
 * on in REGION, written to BUF (QUOTA_METRIC_MAX bytes): Compute/Batch
 * on-demand NVIDIA_<X>_GPUS; Spot PREEMPTIBLE_NVIDIA_<X>_GPUS when that
 * metric has a limit > 0 in REGION, else the on-demand one; Vertex
 * custom_model_training_[preemptible_]nvidia_<x>_gpus. Returns BUF, or
 * NULL if the GPU is unknown. A metric Google does not report (Compute's
 * NVIDIA_H100_GPUS is not in its enum) has no reading: quota_headroom()
 * then says -ENOENT, unknown rather than zero.
 */
const char *quota_gpu_metric(struct quota *, enum gcp_service,
	    const char *region, const char *gpu, int spot, char *buf);
/*
 * The vCPU metric a Compute VM of MACHINE_TYPE draws on: PREEMPTIBLE_CPUS
 * for Spot when granted, else <FAMILY>_CPUS when that metric exists in
 * REGION (A2_CPUS, G2_CPUS...), else CPUS. Returns BUF.
 */
const char *quota_cpu_metric(struct quota *, const char *region,
	    const char *machine_type, int spot, char *buf);

/*
 * Free units of METRIC in REGION: limit - usage - in flight (may be
 * negative). -ENOENT if there is no reading for it.
 */
int	 quota_headroom(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double *ret);
/*
 * The limit of METRIC in REGION, as quota_next() gives it for that
 * reading, without walking every reading. -ENOENT if there is no
 * reading or its limit is unknown.
 */
int	 quota_limit(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double *ret);
/*
 * GPUs of type GPU a launch may still take in REGION: the headroom of
 * quota_gpu_metric(), bounded for Compute/Batch by GPUS_ALL_REGIONS.
 * -ENOENT if the regional metric is unknown.
 */
int	 quota_gpu_headroom(struct quota *, enum gcp_service,
	    const char *region, const char *gpu, int spot, double *ret);
/*
 * Hold N units of METRIC in REGION for a launch. A Compute regional
 * *_GPUS metric also holds N of GPUS_ALL_REGIONS; the three calls below
 * undo or settle both alike. Pass the metric string quota_gpu_metric()
 * gave at the decision.
 */
void	 quota_reserve(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double n);
/* The launch failed: give the N units back. */
void	 quota_release(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double n);
/* The launch succeeded: hold N until a newer reading shows them. */
void	 quota_commit(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double n);
/* The daemon's install id: Vertex jobs labelled gpuq-install=INSTALL
 * are counted by quota_set_usage(), every other job from the listing. */
void	 quota_set_install(struct quota *, const char *install);
/* Usage of METRIC in REGION, from the daemon's books: Vertex AI's, and
 * Compute's family quotas read from Cloud Quotas (H100, H200, B200), which
 * have no usage; other Compute metrics come with usage and ignore it. */
void	 quota_set_usage(struct quota *, enum gcp_service, const char *region,
	    const char *metric, double usage);

/*
 * Zones of REGION (NULL: all) offering GPU, up to MAX of them in OUT.
 * Returns how many were written; -ENOENT if zones were never read.
 */
int	 quota_zones(struct quota *, const char *region, const char *gpu,
	    struct quota_zone *out, int max);
/* Most cards of GPU one VM may take in ZONE; 0 if not offered there,
 * -ENOENT if zones were never read. */
int	 quota_zone_max(struct quota *, const char *zone, const char *gpu);

/* Next reading after *ITER (start at 0): 1 and *RET, or 0 at the end. */
int	 quota_next(struct quota *, size_t *iter, struct quota_row *ret);
/*
 * The readings as JSON for `gpuq quotas`, filtered by REGION and GPU
 * (either may be NULL): {"fetched_at":…, "age_s":…, "quotas":[{"service",
 * "region","metric","limit","usage","in_flight","free","age_s"}…],
 * "zones":[{"zone","region","gpu","max_per_vm"}…], "warnings":[…]}.
 * Unknown readings have null limit/usage/free. New reference.
 */
json_t	*quota_to_json(struct quota *, const char *region, const char *gpu);
/* When the last refresh finished (wall clock); 0 if never. */
time_t	 quota_fetched_at(struct quota *);
/*
 * How many refreshes have finished; 0 if none. What tells a reader that
 * the readings may have changed: two refreshes a second apart have the
 * same quota_fetched_at().
 */
uint64_t quota_rounds(struct quota *);

#endif
