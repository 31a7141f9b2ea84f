/*
 * sched-offer.c: what each way of running a job costs (sched-offer.h).
 *
 * The scheduler's pure part. A job's spec is parsed once into its
 * SHAPE (GPU, count, machine, Spot policy, regions, providers,
 * checkpoint interval); jobs of one shape share one list of offers per
 * pass. sched_offer_build() enumerates them -- allowed provider x
 * region x zone (Compute Engine) or region (Batch, Vertex AI, which
 * pick the zone) x Spot or standard --, sets aside those the GPU is not
 * offered in, with no quota metric, no price or in a stockout
 * cool-down, prices the rest with the expected cost of cost.h (λ from
 * the Spot history, the prior without one) and ranks them. Offers in
 * the project's reservations (struct sched_resv) are added at $0 and
 * rank first (doc/DESIGN.md "Reservations").
 *
 * Everything it knows comes in a struct sched_market the caller read
 * (sched.c); the room each offer finds, a job's limits and the whys of
 * a job that waits are sched-place.c's.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/gpu.h"
#include "common/xmalloc.h"
#include "daemon/cost.h"
#include "daemon/sched-offer.h"
#include "providers/provider.h"

uint64_t
sched_hash(const char *s)
{
	return s != NULL ? sched_hash_n(s, strlen(s)) : 0;
}

/*
 * Eight bytes a step, not one: a full read of the queue hashes every
 * stored why, 100,000 of them, and a byte at a time that was a tenth
 * of the read (doc/DESIGN.md "The pass"). Never stored: a process's
 * own hashes are only compared with each other.
 */
uint64_t
sched_hash_n(const char *s, size_t n)
{
	uint64_t	h = 0xcbf29ce484222325ULL ^ n, w;

	if (s == NULL)
		return 0;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 31;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	return h != 0 ? h : 1;
}

void
sched_name(char *dst, const char *s)
{
	(void)snprintf(dst, SCHED_NAME, "%s", s != NULL ? s : "");
}

void
sched_clock(int64_t t, char *buf, size_t len)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (localtime_r(&tt, &tm) == NULL || strftime(buf, len, "%H:%M",
	    &tm) == 0)
		(void)snprintf(buf, len, "%" PRId64, t);
}

static int
sched_str_qsort(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is NAME in the list V[0..N)? */
static int
sched_in_list(const char *const *v, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

int
sched_in_csv(const char *list, const char *token)
{
	size_t		 n = strlen(token);
	const char	*p = list;

	if (n == 0)
		return 0;
	while ((p = strstr(p, token)) != NULL) {
		if ((p == list || p[-1] == ',' || p[-1] == ' ') &&
		    (p[n] == '\0' || p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
}

void
sched_strv_free(char **v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Sorted copy of a JSON array of strings, or NULL if absent. */
static char **
sched_strv(json_t *a, size_t *ret_n)
{
	char	**v;
	size_t	  i, n;

	*ret_n = 0;
	if (!json_is_array(a) || json_array_size(a) == 0)
		return NULL;
	n = json_array_size(a);
	v = xcalloc(n, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = xstrdup(json_string_value(json_array_get(a, i)) ?
		    json_string_value(json_array_get(a, i)) : "");
	qsort(v, n, sizeof *v, sched_str_qsort);
	*ret_n = n;
	return v;
}

char *
sched_strv_join(char **v, size_t n)
{
	char	*s = xstrdup(""), *t;
	size_t	 i;

	for (i = 0; i < n; i++) {
		t = xprintf("%s%s%s", s, i > 0 ? "," : "", v[i]);
		free(s);
		s = t;
	}
	return s;
}

/* ---------------------------------------------------------------- */
/* Shapes.							    */

/*
 * The kinds SPEC allows: its capacity: list, else what spot: (SPOT, enum
 * sched_spot) says: never, all but Spot; require, Spot only; allow, all
 * (doc/DESIGN.md "Capacity kinds").
 */
static unsigned
sched_offer_capacity(json_t *spec, int spot)
{
	json_t		*v, *it;
	unsigned	 mask = 0;
	size_t		 i;
	int		 k;

	v = json_object_get(spec, "capacity");
	if (json_is_array(v)) {
		json_array_foreach(v, i, it)
			if ((k = capacity_lookup(json_string_value(it))) >= 0)
				mask |= CAPACITY_BIT(k);
		if (mask != 0)
			return mask;
	}
	if (spot == SCHED_SPOT_NEVER)
		return CAPACITY_ALL & ~CAPACITY_BIT(CAPACITY_SPOT);
	if (spot == SCHED_SPOT_REQUIRE)
		return CAPACITY_BIT(CAPACITY_SPOT);
	return CAPACITY_ALL;
}

int
sched_offer_kind_allowed(const struct sched_shape *sh, int kind)
{
	return kind >= 0 && kind < CAPACITY_NKINDS &&
	    (sh->capacity & CAPACITY_BIT(kind)) != 0;
}

const char *
sched_offer_kind_refusal(const struct sched_shape *sh,
    const struct provider *p, int kind)
{
	if (!sched_offer_kind_allowed(sh, kind))
		return "job disallows";
	if (kind == CAPACITY_STANDARD && gpu_machine_spot_only(sh->machine))
		return "machine type is sold only as Spot or flex";
	if (kind != CAPACITY_FLEX)
		return NULL;
	if (sh->max_runtime > CAPACITY_FLEX_MAX_RUN)
		return "max_runtime over 7 days, the most flex-start runs";
	if (p != NULL)
		return capacity_flex_refusal(p, sh->gpu, sh->machine);
	return NULL;
}

struct sched_shape *
sched_offer_shape_new(json_t *spec, char **why)
{
	struct sched_shape	*sh;
	json_t			*acc;
	const char		*type, *machine, *spot;
	char			*regions, *providers;

	acc = json_object_get(spec, "accelerator");
	type = json_string_value(json_object_get(acc, "type"));
	machine = json_string_value(json_object_get(spec, "machine_type"));
	spot = json_string_value(json_object_get(spec, "spot"));
	sh = xcalloc(1, sizeof *sh);
	sh->gpu = gpu_lookup(type);
	sh->count = (int)json_integer_value(json_object_get(acc, "count"));
	if (sh->gpu == NULL || sh->count < 1 || machine == NULL) {
		*why = xprintf("the stored spec has no usable accelerator "
		    "or machine type");
		free(sh);
		return NULL;
	}
	sh->machine = xstrdup(machine);
	sh->vcpus = gpu_machine_vcpus(machine);
	sh->nodes = (int)json_integer_value(json_object_get(spec, "nodes"));
	if (sh->nodes < 1)
		sh->nodes = 1;
	if (spot != NULL && strcmp(spot, "never") == 0)
		sh->spot = SCHED_SPOT_NEVER;
	else if (spot != NULL && strcmp(spot, "require") == 0)
		sh->spot = SCHED_SPOT_REQUIRE;
	else
		sh->spot = SCHED_SPOT_ALLOW;
	sh->capacity = sched_offer_capacity(spec, sh->spot);
	sh->max_runtime = json_integer_value(json_object_get(spec,
	    "max_runtime"));
	sh->interval = json_integer_value(json_object_get(json_object_get(
	    spec, "checkpoint"), "interval"));
	sh->regions = sched_strv(json_object_get(spec, "regions"),
	    &sh->nregions);
	sh->providers = sched_strv(json_object_get(spec, "providers"),
	    &sh->nproviders);
	regions = sched_strv_join(sh->regions, sh->nregions);
	providers = sched_strv_join(sh->providers, sh->nproviders);
	sh->key = xprintf("%s|%d|%s|%d|%" PRId64 "|%s|%s|%d|%x|%" PRId64,
	    sh->gpu->name, sh->count, sh->machine, sh->spot, sh->interval,
	    regions, providers, sh->nodes, sh->capacity, sh->max_runtime);
	free(regions);
	free(providers);
	return sh;
}

void
sched_offer_shape_free(struct sched_shape *sh)
{
	if (sh == NULL)
		return;
	free(sh->key);
	free(sh->machine);
	sched_strv_free(sh->regions, sh->nregions);
	sched_strv_free(sh->providers, sh->nproviders);
	free(sh->offers);
	free(sh->ways);
	free(sh->why);
	free(sh->fail_why);
	free(sh->fail_claim_what);
	free(sh);
}

int
sched_offer_allows(const struct sched_shape *sh, const struct provider *p)
{
	return sh->providers == NULL || sched_in_list((const char *const *)
	    sh->providers, sh->nproviders, p->name);
}

/* Add REGION to the list V (N, CAP) unless it is there. */
static void
sched_region_add(char ***v, size_t *n, size_t *cap, const char *region)
{
	if (sched_in_list((const char *const *)*v, *n, region))
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof **v);
	}
	(*v)[(*n)++] = xstrdup(region);
}

char **
sched_offer_regions(const struct sched_shape *sh,
    const struct sched_market *m, size_t *ret_n)
{
	char	**v = NULL;
	size_t	  n = 0, cap = 0, i;
	int	  k;

	if (sh->regions != NULL) {
		for (i = 0; i < sh->nregions; i++)
			if (m->nregions == 0 || sched_in_list(m->regions,
			    m->nregions, sh->regions[i]))
				sched_region_add(&v, &n, &cap, sh->regions[i]);
	} else if (m->nregions > 0) {
		for (i = 0; i < m->nregions; i++)
			sched_region_add(&v, &n, &cap, m->regions[i]);
	} else {
		for (k = 0; k < m->nzones; k++)
			sched_region_add(&v, &n, &cap, m->zones[k].region);
		if (n > 1)
			qsort(v, n, sizeof *v, sched_str_qsort);
	}
	*ret_n = n;
	return v;
}

size_t
sched_offer_way(size_t seller, size_t region, int kind, size_t nregions)
{
	if (kind < 0 || kind >= CAPACITY_NKINDS)
		kind = CAPACITY_STANDARD;
	return (seller * nregions + region) * CAPACITY_NKINDS + (size_t)kind;
}

struct sched_way *
sched_offer_ways(struct sched_shape *sh, const struct sched_market *m,
    size_t nregions)
{
	size_t	n = m->nsellers * nregions * CAPACITY_NKINDS;

	if (n > sh->capways) {
		free(sh->ways);
		sh->capways = n;
		sh->ways = xcalloc(n, sizeof *sh->ways);
	} else if (n > 0)
		memset(sh->ways, 0, n * sizeof *sh->ways);
	sh->nways = n;
	return sh->ways;
}

/* ---------------------------------------------------------------- */
/* Offers.							    */

/* Is H a zone's entry ("p/r/g/zone") rather than a region's sum? */
static int
sched_offer_hist_zone(const struct sched_hist *h)
{
	const char	*c;
	int		 n = 0;

	for (c = h->key; *c != '\0'; c++)
		n += *c == '/';
	return n > 2;
}

struct sched_hist *
sched_offer_hist_add(struct sched_hist *v, size_t *n, const char *provider,
    const char *region, const char *zone, const char *gpu, double hours,
    int interruptions)
{
	struct sched_hist	*h;
	char			*key;
	size_t			 i;

	/* The region's sum: its zones come together after it (store.h). */
	key = xprintf("%s/%s/%s", provider, region, gpu);
	for (i = *n; i > 0 && sched_offer_hist_zone(&v[i - 1]); i--)
		;
	if (i > 0 && strcmp(v[i - 1].key, key) == 0) {
		free(key);
		h = &v[i - 1];
	} else {
		v = xreallocarray(v, *n + 1, sizeof *v);
		h = &v[(*n)++];
		h->key = key;
		h->hash = sched_hash(key);
		h->hours = 0;
		h->interruptions = 0;
	}
	h->hours += hours;
	h->interruptions += interruptions;
	if (zone == NULL || *zone == '\0')
		return v;
	v = xreallocarray(v, *n + 1, sizeof *v);
	h = &v[(*n)++];
	h->key = xprintf("%s/%s/%s/%s", provider, region, gpu, zone);
	h->hash = sched_hash(h->key);
	h->hours = hours;
	h->interruptions = interruptions;
	return v;
}

/* The history of KEY on M, or NULL. */
static const struct sched_hist *
sched_offer_hist(const struct sched_market *m, const char *key)
{
	uint64_t	 h = sched_hash(key);
	size_t		 i;

	for (i = 0; i < m->nhist; i++)
		if (m->hist[i].hash == h && strcmp(m->hist[i].key, key) == 0)
			return &m->hist[i];
	return NULL;
}

double
sched_offer_lambda(const struct sched_market *m, const struct provider *p,
    const char *region, const char *zone, const char *gpu, int *ret_recent)
{
	const struct sched_hist	*h = NULL;
	char			 key[256];

	/*
	 * A zone's own history first: Spot capacity is a zone's, and the
	 * zones of one region differ (the replay's us-central1-a kept its
	 * VMs for days while -b and -c lost them every few hours). A zone
	 * not tried yet, or an offer for the whole region (the service
	 * picks the zone), takes the region's.
	 */
	if (zone != NULL && *zone != '\0') {
		(void)snprintf(key, sizeof key, "%s/%s/%s/%s", p->name,
		    region, gpu, zone);
		h = sched_offer_hist(m, key);
	}
	if (h == NULL) {
		(void)snprintf(key, sizeof key, "%s/%s/%s", p->name, region,
		    gpu);
		h = sched_offer_hist(m, key);
	}
	if (h != NULL) {
		*ret_recent = h->interruptions;
		return cost_lambda(h->hours, h->interruptions, m->prior);
	}
	*ret_recent = 0;
	return cost_lambda(0, 0, m->prior);
}

int
sched_offer_strike_left(const struct sched_strike *s, int64_t now)
{
	int64_t	quiet;

	if (now <= s->until)
		return s->strikes;
	quiet = (now - s->until) / SCHED_STRIKE_QUIET_SEC;
	return quiet >= s->strikes ? 0 : s->strikes - (int)quiet;
}

/* Index of (ZONE, GPU, SPOT) in V (N entries), or N. */
static size_t
sched_strike_find(const struct sched_strike *v, size_t n, const char *zone,
    const char *gpu, int spot)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (v[i].spot == spot && strcmp(v[i].zone, zone) == 0 &&
		    strcmp(v[i].gpu, gpu) == 0)
			break;
	return i;
}

int
sched_offer_strikes(const struct sched_market *m, const char *zone,
    const char *gpu, int spot)
{
	size_t	i = sched_strike_find(m->strike, m->nstrike, zone, gpu, spot);

	return i < m->nstrike ? sched_offer_strike_left(&m->strike[i], m->now) : 0;
}

struct sched_strike *
sched_offer_strikes_note(struct sched_strike *v, size_t *nv, size_t *cap,
    const struct sched_cool *cool, size_t n, int64_t now)
{
	struct sched_strike	*e;
	size_t			 i, k;

	for (i = 0; i < n; i++) {
		k = sched_strike_find(v, *nv, cool[i].zone, cool[i].gpu,
		    cool[i].spot);
		if (k == *nv) {
			if (*nv == *cap) {
				*cap = *cap ? *cap * 2 : 16;
				v = xreallocarray(v, *cap, sizeof *v);
			}
			(*nv)++;
		}
		e = &v[k];
		sched_name(e->zone, cool[i].zone);
		sched_name(e->gpu, cool[i].gpu);
		e->spot = cool[i].spot;
		e->strikes = cool[i].strikes > 0 ? cool[i].strikes : 1;
		e->until = cool[i].until;
	}
	for (k = 0; k < *nv; )
		if (sched_offer_strike_left(&v[k], now) == 0)
			v[k] = v[--*nv];
		else
			k++;
	return v;
}

/* Cool-down end of (ZONE, GPU, SPOT) on M, or 0 if none. */
static int64_t
sched_offer_cooled(const struct sched_market *m, const char *zone,
    const char *gpu, int spot)
{
	size_t	i;

	for (i = 0; i < m->ncool; i++)
		if (m->cool[i].spot == spot &&
		    strcmp(m->cool[i].zone, zone) == 0 &&
		    strcmp(m->cool[i].gpu, gpu) == 0)
			return m->cool[i].until;
	return 0;
}

static struct sched_offer *
sched_offer_add(struct sched_shape *sh, const struct sched_seller *sl,
    const char *region, const char *zone, int spot, size_t way)
{
	struct sched_offer	*o;

	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? sh->cap * 2 : 32;
		sh->offers = xreallocarray(sh->offers, sh->cap,
		    sizeof *sh->offers);
	}
	o = &sh->offers[sh->n];
	memset(o, 0, sizeof *o);
	o->prov = sl->prov;
	o->qsvc = sl->qsvc;
	sched_name(o->region, region);
	sched_name(o->zone, zone);
	o->capacity = spot;
	o->spot = spot == CAPACITY_SPOT;
	o->order = (int)sh->n;
	o->way = (int)way;
	o->gpu_b = o->all_b = o->cpu_b = -1;
	sh->n++;
	return o;
}

/* Every offer of seller SL in REGION, one way (SPOT: the enum
 * capacity_kind); WAY its index. */
static void
sched_offer_enumerate(struct sched_shape *sh, const struct sched_market *m,
    const struct sched_seller *sl, const char *region, int spot, size_t way)
{
	const struct quota_zone	*z = m->zones;
	struct sched_offer	*o;
	int64_t			 until, min_until = 0;
	int			 zi, inreg = 0, k, min_k = -1;

	for (zi = 0; zi < m->nzones; zi++) {
		if (strcmp(z[zi].region, region) != 0)
			continue;
		if (z[zi].max_per_vm < sh->count || !z[zi].up)
			continue;
		inreg++;
		until = sched_offer_cooled(m, z[zi].zone, sh->gpu->name, spot);
		k = sched_offer_strikes(m, z[zi].zone, sh->gpu->name, spot);
		if (sl->prov->picks_zone) {
			/* The service may pick the zone that did not. */
			if (min_k < 0 || k < min_k)
				min_k = k;
			/* Cooling down only if every zone is. */
			if (until == 0)
				min_until = -1;
			else if (min_until >= 0 && (min_until == 0 ||
			    until < min_until))
				min_until = until;
			continue;
		}
		o = sched_offer_add(sh, sl, region, z[zi].zone, spot, way);
		o->strikes = k;
		if (until != 0) {
			o->reason = SCHED_X_COOLDOWN;
			o->until = until;
		}
	}
	if (sl->prov->picks_zone || inreg == 0) {
		o = sched_offer_add(sh, sl, region, NULL, spot, way);
		o->strikes = min_k > 0 ? min_k : 0;
		if (inreg == 0)
			o->reason = SCHED_X_NOT_OFFERED;
		else if (min_until > 0) {
			o->reason = SCHED_X_COOLDOWN;
			o->until = min_until;
		}
	}
}

/*
 * Which of three rounds seller SL's reserved offers are made in: at $0
 * they tie, and the order they are made in is the ranking's tie-break:
 * Compute Engine first (the reservation's own service), then Batch
 * (billed as Compute), then Vertex AI.
 */
static int
sched_offer_resv_round(const struct sched_seller *sl)
{
	if (!sl->prov->picks_zone)
		return 0;
	return sl->qsvc == GCP_SERVICE_GCE ? 1 : 2;
}

/*
 * The reserved offers of SH on M: one per allowed seller that takes
 * reservations x reservation of the shape (M->resv) in REGIONS, a
 * standard launch at $0 marginal, never preempted (doc/DESIGN.md
 * "Reservations"); one without free VMs for all the shape's nodes is
 * set aside as full. Stockout cool-downs do not apply: the capacity is
 * held for the project. The way is the seller's standard way in the
 * region, for its quota metric: a service that does not sell the GPU
 * cannot take it.
 */
static void
sched_offer_reserved(struct sched_shape *sh, const struct sched_market *m,
    char *const *regions, size_t nregions)
{
	const struct sched_seller *sl;
	const struct sched_resv	*r;
	struct sched_offer	*o;
	size_t			 si, ri, k;
	int			 round;

	if (!sched_offer_kind_allowed(sh, CAPACITY_RESERVED))
		return;
	for (round = 0; round < 3; round++) {
		for (si = 0; si < m->nsellers; si++) {
			sl = &m->sellers[si];
			if (sched_offer_resv_round(sl) != round ||
			    !sl->prov->reservations ||
			    !sched_offer_allows(sh, sl->prov))
				continue;
			for (k = 0; k < m->nresv; k++) {
				r = &m->resv[k];
				for (ri = 0; ri < nregions; ri++)
					if (strcmp(regions[ri], r->region) == 0)
						break;
				if (ri == nregions)
					continue;
				o = sched_offer_add(sh, sl, r->region, r->zone,
				    CAPACITY_RESERVED, sched_offer_way(si, ri,
				    CAPACITY_STANDARD, nregions));
				sched_name(o->reservation, r->name);
				o->resv_free = r->free_vms;
				o->resv_count = r->count;
				if (r->free_vms < SCHED_NODES(sh))
					o->reason = SCHED_X_QUOTA;
			}
		}
	}
}

int
sched_offer_cmp(const void *a, const void *b)
{
	const struct sched_offer	*x = a, *y = b;
	struct cost_rank		 rx, ry;

	/* OK offers first, ranked; the rest by reason, then order. */
	if ((x->reason == SCHED_OK) != (y->reason == SCHED_OK))
		return x->reason == SCHED_OK ? -1 : 1;
	if (x->reason != SCHED_OK) {
		if (x->reason != y->reason)
			return x->reason > y->reason ? -1 : 1;
		return x->order < y->order ? -1 : x->order > y->order;
	}
	rx.expected_usd = x->rank_usd;
	rx.interruptions = x->recent;
	rx.order = x->order;
	ry.expected_usd = y->rank_usd;
	ry.interruptions = y->recent;
	ry.order = y->order;
	return cost_rank_cmp(&rx, &ry);
}

char *
sched_offer_where(const struct sched_shape *sh, size_t from, size_t to,
    int reason)
{
	char		*s = xstrdup(""), *t;
	const char	*seen[SCHED_LIST_MAX];
	size_t		 i, k, n = 0, more = 0;
	int		 dup;

	for (i = from; i < to; i++) {
		if (reason >= 0 && sh->offers[i].reason != reason)
			continue;
		dup = 0;
		for (k = 0; k < n; k++)
			if (strcmp(seen[k], sh->offers[i].region) == 0)
				dup = 1;
		for (k = from; !dup && k < i; k++)
			if ((reason < 0 || sh->offers[k].reason == reason) &&
			    strcmp(sh->offers[k].region,
			    sh->offers[i].region) == 0)
				dup = 1;
		if (dup)
			continue;
		if (n == SCHED_LIST_MAX) {
			more++;
			continue;
		}
		seen[n++] = sh->offers[i].region;
		t = xprintf("%s%s%s", s, *s ? ", " : "", sh->offers[i].region);
		free(s);
		s = t;
	}
	if (more > 0) {
		t = xprintf("%s and %zu more", s, more);
		free(s);
		s = t;
	}
	return s;
}

/* Why a shape has no OK offer at all: the furthest reason. New. */
static char *
sched_offer_why(const struct sched_shape *sh)
{
	char		*where, when[16], *why;
	const char	*kind;
	int		 reason;
	int64_t		 until = 0;
	size_t		 i;

	reason = sh->n > 0 ? sh->offers[0].reason : SCHED_X_NOT_OFFERED;
	where = sched_offer_where(sh, 0, sh->n, reason);
	kind = sh->spot == SCHED_SPOT_NEVER ? "on-demand " :
	    sh->spot == SCHED_SPOT_REQUIRE ? "Spot " : "";
	switch (reason) {
	case SCHED_X_COOLDOWN:
		for (i = 0; i < sh->n; i++)
			if (sh->offers[i].reason == SCHED_X_COOLDOWN &&
			    (until == 0 || sh->offers[i].until < until))
				until = sh->offers[i].until;
		sched_clock(until, when, sizeof when);
		why = xprintf("all allowed zones out of %s until %s",
		    sh->gpu->name, when);
		break;
	case SCHED_X_NO_PRICE:
		why = xprintf("no price known for %d\xc3\x97%s in %s",
		    sh->count, sh->gpu->name, where);
		break;
	case SCHED_X_NO_METRIC:
		why = xprintf("no %squota exists for %s on the allowed "
		    "providers in %s", kind, sh->gpu->name, where);
		break;
	case SCHED_X_QUOTA:
		/* Only a full reservation is set aside for room here. */
		why = xprintf("reservation %s in %s has no free VM for "
		    "%d\xc3\x97%s, and no other offer is usable",
		    sh->offers[0].reservation, sh->offers[0].zone,
		    SCHED_GPUS(sh), sh->gpu->name);
		break;
	default:
		why = xprintf("%d\xc3\x97%s %sis not offered in %s", sh->count,
		    sh->gpu->name, kind, *where ? where : "any allowed region");
		break;
	}
	free(where);
	return why;
}

/* Why SH cannot even be enumerated on M, or NULL. New. */
static char *
sched_offer_unusable(const struct sched_shape *sh,
    const struct sched_market *m, size_t nregions)
{
	char	*names, *why;
	size_t	 i, np = 0;

	for (i = 0; i < m->nsellers; i++)
		if (sched_offer_allows(sh, m->sellers[i].prov))
			np++;
	if (np == 0) {
		names = sched_strv_join(sh->providers, sh->nproviders);
		why = xprintf("no allowed provider: the job asks for %s, "
		    "gpuqd.conf enables %s", names, m->nsellers > 0 ?
		    "others" : "none");
		free(names);
		return why;
	}
	if (m->nzones < 0)
		return xprintf("waiting for the zones and quotas of Compute "
		    "Engine%s%s", m->zones_error ? ": " : "",
		    m->zones_error ? m->zones_error : "");
	if (nregions == 0) {
		names = sched_strv_join(sh->regions, sh->nregions);
		why = sh->regions != NULL ? xprintf("no allowed region: the "
		    "job asks for %s, which gpuqd.conf [gcp] regions leaves "
		    "out", names) : xprintf("%d\xc3\x97%s is not offered in "
		    "any region", sh->count, sh->gpu->name);
		free(names);
		return why;
	}
	return NULL;
}

/* Why an on-demand-only job of a Spot-only machine type has no offer. */
static char *
sched_offer_spot_only_why(const struct sched_shape *sh)
{
	if (sched_offer_kind_allowed(sh, CAPACITY_FLEX))
		return xprintf("%s is sold only as Spot or flex-start, the job "
		    "refuses Spot and flex-start runs at most 7 days; set "
		    "max_runtime to 7d or less, allow Spot, or ask for 8 GPUs "
		    "(a3-highgpu-8g)", sh->machine);
	return xprintf("%s is sold only as Spot or flex-start, and the job "
	    "allows neither; allow one (capacity: [flex, standard]) or ask "
	    "for 8 GPUs (a3-highgpu-8g)", sh->machine);
}

void
sched_offer_build(struct sched_shape *sh, const struct sched_market *m,
    char *const *regions, size_t nregions)
{
	const struct sched_way	*w;
	struct sched_offer	*o;
	size_t			 si, ri, i;
	int			 spots[CAPACITY_NKINDS], nspots = 0, k;

	sh->n = sh->nok = 0;
	free(sh->why);
	sh->why = NULL;
	sh->min_hourly = sh->min_per_hour = 0;
	sh->spot_cooled_per_hour = 0;
	sh->spot_cooled_until = 0;
	if ((sh->why = sched_offer_unusable(sh, m, nregions)) != NULL)
		return;
	for (k = 0; k < CAPACITY_NKINDS; k++)
		if (sched_offer_kind_refusal(sh, NULL, k) == NULL)
			spots[nspots++] = k;
	if (nspots == 0 || (nspots == 1 && spots[0] == CAPACITY_RESERVED)) {
		sh->why = sched_offer_spot_only_why(sh);
		return;
	}

	for (si = 0; si < m->nsellers; si++) {
		if (!sched_offer_allows(sh, m->sellers[si].prov))
			continue;
		for (ri = 0; ri < nregions; ri++)
			for (k = 0; k < nspots; k++) {
				/* Reserved offers come from the
				 * reservations, not from here. */
				if (spots[k] == CAPACITY_RESERVED ||
				    sched_offer_kind_refusal(sh,
				    m->sellers[si].prov, spots[k]) != NULL)
					continue;
				sched_offer_enumerate(sh, m, &m->sellers[si],
				    regions[ri], spots[k], sched_offer_way(si,
				    ri, spots[k], nregions));
			}
	}

	sched_offer_reserved(sh, m, regions, nregions);

	/* Quota metric, then price, for what is still in. */
	for (i = 0; i < sh->n; i++) {
		o = &sh->offers[i];
		if (o->reservation[0] != '\0') {
			/* A service that does not sell the GPU at all (no
			 * metric: Vertex AI without it) cannot take it. */
			w = (size_t)o->way < sh->nways ? &sh->ways[o->way] :
			    NULL;
			if (w == NULL || !w->metric)
				o->reason = SCHED_X_NO_METRIC;
			/* Paid for already: $0 marginal, λ 0. */
			o->hourly = o->per_hour = o->lambda = o->rank_usd = 0;
			continue;
		}
		if (o->reason != SCHED_OK && o->reason != SCHED_X_COOLDOWN)
			continue;
		w = (size_t)o->way < sh->nways ? &sh->ways[o->way] : NULL;
		if (w == NULL || !w->metric) {
			o->reason = SCHED_X_NO_METRIC;
			continue;
		}
		if (o->reason != SCHED_OK && !(o->reason == SCHED_X_COOLDOWN &&
		    o->spot && w->priced))
			continue;
		if (!w->priced) {
			o->reason = SCHED_X_NO_PRICE;
			continue;
		}
		o->hourly = w->hourly;
		/* Only Spot is preempted: flex-start runs on. */
		o->lambda = capacity_preemptible(o->capacity) ?
		    sched_offer_lambda(m, o->prov, o->region, o->zone,
		    sh->gpu->name, &o->recent) : 0;
		o->per_hour = cost_expected(o->hourly, 1.0,
		    capacity_preemptible(o->capacity),
		    o->lambda, sh->interval, m->restart_overhead);
		/*
		 * A place that refused lately goes after one as dear that
		 * did not (doc/DESIGN.md "Places that refused"): the
		 * replay's zones the trace never stocked were tried again
		 * at each cool-down's end, ahead of their region's open
		 * zone at the same price, a third of all launches.
		 */
		o->rank_usd = o->per_hour * (1.0 + SCHED_STRIKE_RISK *
		    (o->strikes < SCHED_STRIKE_MAX ? o->strikes :
		    SCHED_STRIKE_MAX));
		/* Priced for sched_place()'s wait for Spot only. */
		if (o->reason == SCHED_X_COOLDOWN && (sh->spot_cooled_until ==
		    0 || o->per_hour < sh->spot_cooled_per_hour)) {
			sh->spot_cooled_per_hour = o->per_hour;
			sh->spot_cooled_until = o->until;
		}
	}
	sh->spot_wait = m->spot_wait;
	if (sh->n > 0)	/* offers is NULL with none */
		qsort(sh->offers, sh->n, sizeof *sh->offers,
		    sched_offer_cmp);
	for (i = 0; i < sh->n && sh->offers[i].reason == SCHED_OK; i++) {
		o = &sh->offers[i];
		if (i == 0 || o->hourly < sh->min_hourly)
			sh->min_hourly = o->hourly;
		if (i == 0 || o->per_hour < sh->min_per_hour)
			sh->min_per_hour = o->per_hour;
	}
	sh->nok = i;
	if (sh->nok == 0)
		sh->why = sched_offer_why(sh);
}
