/*
 * price.h: what an hour of GPU and host VM costs, per service and region.
 *
 * Prices come from the Cloud Billing Catalog (services.skus.list for
 * Compute Engine 6F81-5844-456A and Vertex AI C7E2-9256-1C43, DESIGN
 * GF), read at gcp_start() and every price_refresh after; until the first
 * read succeeds, and for anything the catalog lacks, the bundled table
 * (data/prices.csv, installed in GPUQ_DATADIR) answers.
 *
 * Host VMs are priced as Google bills them: vCPUs x the series' "Instance
 * Core" SKU + GiB x its "Instance Ram" SKU. Batch costs what Compute
 * Engine costs. Vertex AI has its own training SKUs; where they are
 * missing, Vertex costs the Compute Engine price plus its management fee
 * (DESIGN GF.2): the fee SKU, else (PRICE_VERTEX_PREMIUM - 1) x the
 * Compute Engine on-demand price, for Spot VMs too.
 */
#ifndef GPUQ_PRICE_H
#define GPUQ_PRICE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct http;
struct price;

#define PRICE_VERTEX_PREMIUM	1.15	/* Vertex / Compute, confirmed SKUs */

/* One price as listed by price_next(). Strings borrowed until the next
 * refresh or price_free(). A price < 0 is unknown. */
struct price_row {
	const char	*service;	/* "compute" or "vertex" */
	const char	*kind;		/* "gpu", "machine", "core", "ram" */
	const char	*name;		/* nvidia-tesla-t4, n1-highmem-8, n1 */
	const char	*region;
	double		 ondemand;	/* per GPU, VM, vCPU or GiB, per hour */
	double		 spot;
	int		 vcpus;		/* machine rows; else 0 */
	double		 memory_gib;
	const char	*source;	/* "catalog" or "bundled" */
};

/* A refresh ended: ERROR 0, or < 0 with CAUSE (borrowed). */
typedef void	(*price_cb)(int error, const char *cause, void *arg);

/*
 * New table: load the bundled CSV named by CONF->price_table now (a
 * missing or unreadable file is an error with *cause: it is part of the
 * install). No network until price_start(). HTTP is borrowed.
 */
int	 price_new(struct http *http, const struct gcp_conf *conf,
	    struct price **ret, char **cause);
/* Free (NULL ok); closes the refresh timer, memory goes with the loop's
 * next turn. Pending refresh callbacks run once with -ECANCELED. */
void	 price_free(struct price *);
/* Read the catalog now and every price_refresh seconds after (every
 * 10 minutes after a failure). */
void	 price_start(struct price *);
/*
 * Read the catalog now. Returns 0 and calls CB once, later (CB may be
 * NULL); concurrent callers share one read. -ESHUTDOWN if being freed.
 */
int	 price_refresh(struct price *, price_cb cb, void *arg);

/*
 * Hourly price of COUNT GPUs (any spelling gpu.h knows) in REGION for
 * SERVICE, on-demand or SPOT. 0 and *RET, or -ENOENT if no source has
 * it.
 */
int	 price_gpu_hourly(struct price *, enum gcp_service,
	    const char *region, const char *gpu, int count, int spot,
	    double *ret);
/* Hourly price of a host VM of MACHINE_TYPE ("n1-highmem-8"), without
 * GPUs. 0 and *RET, or -ENOENT. */
int	 price_host_hourly(struct price *, enum gcp_service,
	    const char *region, const char *machine_type, int spot,
	    double *ret);
/*
 * Flex-start (Dynamic Workload Scheduler) discount off on-demand GPU,
 * vCPU and memory prices, for the series Google discounts (A2, A3, A4;
 * API-NOTES K.2: "up to 53 % off", data/README.md). Other series pay
 * on-demand prices as flex-start.
 */
#define PRICE_FLEX_DISCOUNT	0.53
/*
 * Hourly price of COUNT GPUs on host MACHINE_TYPE, both as flex-start,
 * in REGION for SERVICE: price_dws_hourly() where the catalog has the
 * flex-start SKUs, else the on-demand prices less PRICE_FLEX_DISCOUNT
 * where the series is discounted. 0 and *RET, or -ENOENT.
 */
int	 price_flex_hourly(struct price *, enum gcp_service,
	    const char *region, const char *gpu, int count,
	    const char *machine_type, double *ret);
/*
 * Hourly price of COUNT GPUs on host MACHINE_TYPE as flex-start from the
 * catalog's own flex-start SKUs (Compute Engine's "... DWS Defined
 * Duration ..." GPU, Core and Ram SKUs; on Vertex AI those plus its
 * management fee). 0 and *RET, or -ENOENT when the catalog read has
 * none for REGION (price_flex_hourly() then falls back on the discount).
 */
#define PRICE_DWS_WORDS	"DWS Defined Duration"
int	 price_dws_hourly(struct price *, enum gcp_service,
	    const char *region, const char *gpu, int count,
	    const char *machine_type, double *ret);
/* The flex-start factor of MACHINE_TYPE's series: 1 - discount or 1. */
double	 price_flex_factor(const char *machine_type);
/* "catalog (fetched 14:05, 812 SKUs)" or "bundled table (data of
 * 2026-06)". Borrowed until the next refresh. */
const char *price_source(struct price *);
/* When the catalog was last read (wall clock); 0 if never. */
time_t	 price_fetched_at(struct price *);
/*
 * How many catalog reads were taken in; 0 if none. What tells a reader
 * that the prices may have moved: two reads a second apart have the
 * same price_fetched_at().
 */
uint64_t price_reads(struct price *);

/* Next price after *ITER (start at 0), catalog rows first: 1 and *RET,
 * or 0 at the end. */
int	 price_next(struct price *, size_t *iter, struct price_row *ret);
/*
 * Prices for `gpuq prices`, filtered by REGION and GPU (either may be
 * NULL): {"source":…, "fetched_at":…, "prices":[{"gpu","region",
 * "host","gce":{"ondemand","spot","host_ondemand","host_spot"},
 * "vertex":{…}}…]} with one row per GPU type and region, for one GPU on
 * its default host; unknown prices are null. New reference.
 */
json_t	*price_to_json(struct price *, const char *region, const char *gpu);

#endif
