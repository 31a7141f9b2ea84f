/*
 * schedtest.c: a small market for the scheduler's pure parts
 * (schedtest.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/gpu.h"
#include "providers/provider.h"
#include "tests/unit/schedtest.h"

static const struct provider st_gce = { .name = "gce", .picks_zone = 0,
    .reservations = 1 };
static const struct provider st_batch = { .name = "batch", .picks_zone = 1 };
static const struct provider st_vertex = { .name = "vertex",
    .picks_zone = 1 };

void
st_init(struct st_market *t, const char *sellers, double prior)
{
	memset(t, 0, sizeof *t);
	if (strstr(sellers, "gce") != NULL)
		t->sellers[t->m.nsellers++] = (struct sched_seller){
		    &st_gce, GCP_SERVICE_GCE, GCP_SERVICE_GCE };
	if (strstr(sellers, "batch") != NULL)
		t->sellers[t->m.nsellers++] = (struct sched_seller){
		    &st_batch, GCP_SERVICE_GCE, GCP_SERVICE_BATCH };
	if (strstr(sellers, "vertex") != NULL)
		t->sellers[t->m.nsellers++] = (struct sched_seller){
		    &st_vertex, GCP_SERVICE_VERTEX, GCP_SERVICE_VERTEX };
	t->m.sellers = t->sellers;
	t->m.zones = t->zones;
	t->m.cool = t->cool;
	t->m.hist = t->hist;
	t->m.prior = prior;
}

void
st_zone(struct st_market *t, const char *zone, const char *region,
    int max_per_vm)
{
	struct quota_zone	*z = &t->zones[t->m.nzones++];

	assert_true(t->m.nzones <= ST_MAX_ZONES);
	(void)snprintf(z->zone, sizeof z->zone, "%s", zone);
	(void)snprintf(z->region, sizeof z->region, "%s", region);
	z->max_per_vm = max_per_vm;
	z->up = 1;
}

void
st_price(struct st_market *t, const char *seller, const char *region,
    int spot, double hourly)
{
	struct st_price	*p = &t->prices[t->nprices++];

	assert_true(t->nprices <= ST_MAX_PRICES);
	p->seller = seller;
	p->region = region;
	p->spot = spot;
	p->hourly = hourly;
}

void
st_cool(struct st_market *t, const char *zone, const char *gpu, int spot,
    int64_t until)
{
	struct sched_cool	*c = &t->cool[t->m.ncool++];

	assert_true(t->m.ncool <= ST_MAX_COOL);
	sched_name(c->zone, zone);
	sched_name(c->gpu, gpu);
	c->spot = spot;
	c->until = until;
}

void
st_hist(struct st_market *t, const char *key, double hours,
    int interruptions)
{
	struct sched_hist	*h = &t->hist[t->m.nhist++];

	assert_true(t->m.nhist <= ST_MAX_HIST);
	h->key = (char *)key;
	h->hash = sched_hash(key);
	h->hours = hours;
	h->interruptions = interruptions;
}

/* The ways as sched.c reads them, from the price table. */
static void
st_ways(struct st_market *t, struct sched_shape *sh, char **regions,
    size_t nregions)
{
	struct sched_way	*ways, *w;
	const struct st_price	*p;
	size_t			 si, ri, k;
	int			 spot;

	ways = sched_offer_ways(sh, &t->m, nregions);
	for (si = 0; si < t->m.nsellers; si++)
		for (ri = 0; ri < nregions; ri++)
			for (spot = 0; spot < CAPACITY_NKINDS; spot++) {
				w = &ways[sched_offer_way(si, ri, spot,
				    nregions)];
				w->metric = 1;
				(void)snprintf(w->gpu_metric,
				    sizeof w->gpu_metric, "%s%s_GPUS",
				    spot == CAPACITY_SPOT || spot ==
				    CAPACITY_FLEX ? "PREEMPTIBLE_" : "",
				    sh->gpu->quota);
				(void)snprintf(w->cpu_metric,
				    sizeof w->cpu_metric, "CPUS");
				for (k = 0; k < t->nprices; k++) {
					p = &t->prices[k];
					if (strcmp(p->seller, t->sellers[si].
					    prov->name) != 0 || strcmp(
					    p->region, regions[ri]) != 0 ||
					    p->spot != spot)
						continue;
					if (p->hourly < 0)
						w->metric = 0;
					else {
						w->priced = 1;
						w->hourly = p->hourly;
					}
				}
			}
}

void
st_build(struct st_market *t, struct sched_shape *sh)
{
	char	**regions;
	size_t	  n;

	regions = sched_offer_regions(sh, &t->m, &n);
	st_ways(t, sh, regions, n);
	sched_offer_build(sh, &t->m, regions, n);
	sched_strv_free(regions, n);
}

struct sched_shape *
st_shape(struct st_market *t, const char *text)
{
	struct sched_shape	*sh;
	json_t			*spec;
	char			*why = NULL;

	spec = json_loads(text, 0, NULL);
	assert_non_null(spec);
	sh = sched_offer_shape_new(spec, &why);
	json_decref(spec);
	assert_non_null(sh);
	st_build(t, sh);
	return sh;
}

int
st_find(const struct sched_shape *sh, const char *seller, const char *region,
    const char *zone, int spot)
{
	size_t	i;

	for (i = 0; i < sh->n; i++)
		if (strcmp(sh->offers[i].prov->name, seller) == 0 &&
		    strcmp(sh->offers[i].region, region) == 0 &&
		    strcmp(sh->offers[i].zone, zone != NULL ? zone : "") ==
		    0 && sh->offers[i].spot == spot)
			return (int)i;
	return -1;
}
