/*
 * schedtest.h: a small market for the scheduler's pure parts
 * (test-sched-offer.c, test-sched-place.c): three sellers (gce, which
 * runs in a zone, and batch and vertex, which pick it), a handful of
 * zones, prices from a table, and a shape built on them.
 */
#ifndef GPUQ_SCHEDTEST_H
#define GPUQ_SCHEDTEST_H

#include <stddef.h>

#include "daemon/sched-offer.h"

#define ST_MAX_ZONES	16
#define ST_MAX_PRICES	16
#define ST_MAX_COOL	8
#define ST_MAX_HIST	8

/* Price of one (seller, region, Spot); missing ones are not priced,
 * and an HOURLY < 0 says the way has no quota metric. */
struct st_price {
	const char	*seller;
	const char	*region;
	int		 spot;
	double		 hourly;
};

struct st_market {
	struct sched_seller	 sellers[3];
	struct quota_zone	 zones[ST_MAX_ZONES];
	struct st_price		 prices[ST_MAX_PRICES];
	struct sched_cool	 cool[ST_MAX_COOL];
	struct sched_hist	 hist[ST_MAX_HIST];
	size_t			 nprices;
	struct sched_market	 m;
};

/* SELLERS "gce,batch,vertex" (a subset, in that order), no zones, no
 * prices, the given λ prior; restart overhead 0. */
void			 st_init(struct st_market *, const char *sellers,
			    double prior);
void			 st_zone(struct st_market *, const char *zone,
			    const char *region, int max_per_vm);
void			 st_price(struct st_market *, const char *seller,
			    const char *region, int spot, double hourly);
void			 st_cool(struct st_market *, const char *zone,
			    const char *gpu, int spot, int64_t until);
void			 st_hist(struct st_market *, const char *key,
			    double hours, int interruptions);
/* The shape of spec JSON TEXT, its offers built on the market. */
struct sched_shape	*st_shape(struct st_market *, const char *text);
/* Build SH again on the market (after changes to it). */
void			 st_build(struct st_market *, struct sched_shape *);
/* Index of the first offer of SH at (SELLER, REGION, ZONE or NULL,
 * SPOT), or -1. */
int			 st_find(const struct sched_shape *, const char *seller,
			    const char *region, const char *zone, int spot);

#endif
