/*
 * sched-place.c: which job gets which room, and why the rest wait
 * (sched-place.h).
 *
 * Each job walks its shape's ranking (sched-offer.c) and takes the
 * first offer within its own limits (max_hourly_usd, max_total_usd),
 * not refused to it lately, whose quota buckets have room -- free quota
 * counted by quota.c, minus what is in flight -- and that no
 * higher-priority job has claimed.
 *
 * Backfill and starvation. A job that cannot be placed does not stop
 * the walk: jobs behind it that fit elsewhere run (backfill). But when a
 * job is blocked only by quota, it CLAIMS every bucket (service, region,
 * metric) that blocked it, and a job of LOWER priority may not take an
 * offer that draws on a claimed bucket, so GPUs freed there go to the
 * higher-priority job first instead of being eaten by a stream of small
 * ones. Among equal priorities a claim binds later jobs too once its job
 * has waited SCHED_STARVE_SEC, so a big job is not starved by a stream
 * of small ones of its own priority either. The first job of a shape
 * that found nothing leaves its verdict on the shape; later jobs of the
 * shape with the same limits take it without a walk.
 *
 * A job that found nothing gets a WHY: the reason that got furthest
 * (enum sched_reason), with the places and quotas it concerns.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/deadline.h"
#include "daemon/sched-offer.h"
#include "daemon/sched-place.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"

/* ---------------------------------------------------------------- */
/* Quota buckets.						    */

void
sched_place_reset(struct sched_ctx *ctx)
{
	struct sched_bucket	*b;
	size_t			 i;

	/*
	 * The buckets stay, and with them the indices the offers of the
	 * shapes not built again hold (sched_place_buckets_kept()); what
	 * a pass reads and claims of them goes. A table grown past
	 * SCHED_BUCKETS_MAX (regions and metrics come and go) starts
	 * again, and every shape gets its buckets anew.
	 */
	if (ctx->epoch == 0 || ctx->nb > SCHED_BUCKETS_MAX) {
		ctx->nb = 0;
		if (ctx->nhidx > 0)
			memset(ctx->hidx, 0, ctx->nhidx * sizeof *ctx->hidx);
		ctx->epoch++;
		if (ctx->epoch == 0)
			ctx->epoch = 1;
	}
	for (i = 0; i < ctx->nb; i++) {
		b = &ctx->b[i];
		b->loaded = b->known = 0;
		b->free = 0;
		b->limit = -1;
		b->claim_id = 0;
		b->claim_prio = 0;
		b->claim_since = 0;
	}
}

void
sched_ctx_done(struct sched_ctx *ctx)
{
	free(ctx->b);
	free(ctx->hidx);
	free(ctx->cool);
	memset(ctx, 0, sizeof *ctx);
}

/* Make CTX's index of buckets by hash twice as large, at least 64. */
static void
sched_bucket_rehash(struct sched_ctx *ctx)
{
	size_t	i, k, n = ctx->nhidx ? ctx->nhidx * 2 : 64;

	free(ctx->hidx);
	ctx->hidx = xcalloc(n, sizeof *ctx->hidx);
	ctx->nhidx = n;
	for (i = 0; i < ctx->nb; i++) {
		k = ctx->b[i].hash & (n - 1);
		while (ctx->hidx[k] != 0)
			k = (k + 1) & (n - 1);
		ctx->hidx[k] = (int)i + 1;
	}
}

int
sched_bucket(struct sched_ctx *ctx, enum gcp_service svc,
    const char *region, const char *metric)
{
	struct sched_bucket	*b;
	uint64_t		 h;
	size_t			 k;
	int			 i;

	/*
	 * No key printed and no walk of the table: this runs for every
	 * offer of a shape built, hundreds of them, over a table kept
	 * between passes.
	 */
	h = (sched_hash(region) * 31 + sched_hash(metric)) * 31 +
	    (uint64_t)svc;
	if (2 * (ctx->nb + 1) > ctx->nhidx)
		sched_bucket_rehash(ctx);
	for (k = h & (ctx->nhidx - 1); (i = ctx->hidx[k]) != 0;
	    k = (k + 1) & (ctx->nhidx - 1)) {
		b = &ctx->b[i - 1];
		if (b->hash == h && b->svc == svc &&
		    strcmp(b->region, region) == 0 &&
		    strcmp(b->metric, metric) == 0)
			return i - 1;
	}
	ctx->hidx[k] = (int)ctx->nb + 1;
	if (ctx->nb == ctx->capb) {
		ctx->capb = ctx->capb ? ctx->capb * 2 : 64;
		ctx->b = xreallocarray(ctx->b, ctx->capb, sizeof *ctx->b);
	}
	b = &ctx->b[ctx->nb];
	memset(b, 0, sizeof *b);
	b->svc = svc;
	sched_name(b->region, region);
	(void)snprintf(b->metric, sizeof b->metric, "%s", metric);
	b->hash = h;
	b->limit = -1;
	return (int)ctx->nb++;
}

/* Bucket I with its free units read (once per pass). */
static struct sched_bucket *
sched_bucket_load(struct sched_ctx *ctx, int i)
{
	struct sched_bucket	*b = &ctx->b[i];

	if (b->loaded)
		return b;
	b->loaded = 1;
	b->limit = -1;
	if (ctx->quota == NULL)
		return b;
	b->known = quota_headroom(ctx->quota, b->svc, b->region, b->metric,
	    &b->free) == 0;
	if (!b->known)
		return b;
	/*
	 * The limit, for "N of M free" in whys. Not a walk of every
	 * reading: each pass loads every bucket its shapes' first jobs
	 * try, and that walk was most of a pass with nothing to do.
	 */
	if (quota_limit(ctx->quota, b->svc, b->region, b->metric,
	    &b->limit) < 0)
		b->limit = -1;
	return b;
}

/*
 * Reserved offer O of SH draws on no quota (the reservation's VMs hold
 * theirs) but on one bucket of its own, its reservation, in the shape's
 * GPUs: free VMs x GPUs per VM, read from the listing when the bucket
 * is first made this pass, so the pass's launches count it down and a
 * job that waits for it claims it like quota (doc/DESIGN.md
 * "Reservations").
 */
static void
sched_place_resv_bucket(struct sched_ctx *ctx, const struct sched_shape *sh,
    struct sched_offer *o)
{
	struct sched_bucket	*b;
	char			 metric[QUOTA_METRIC_MAX];

	(void)snprintf(metric, sizeof metric, "reservation %s",
	    o->reservation);
	o->gpu_b = sched_bucket(ctx, GCP_SERVICE_GCE, o->zone, metric);
	o->all_b = o->cpu_b = -1;
	b = &ctx->b[o->gpu_b];
	if (b->loaded)
		return;
	b->loaded = b->known = 1;
	b->free = (double)o->resv_free * sh->count;
	b->limit = (double)o->resv_count * sh->count;
}

void
sched_place_buckets(struct sched_ctx *ctx, struct sched_shape *sh)
{
	const struct sched_way	*w;
	struct sched_offer	*o;
	size_t			 i;

	sh->bucket_ctx = ctx;
	sh->bucket_epoch = ctx->epoch;
	for (i = 0; i < sh->nok; i++) {
		o = &sh->offers[i];
		if (o->reservation[0] != '\0') {
			sched_place_resv_bucket(ctx, sh, o);
			continue;
		}
		w = &sh->ways[o->way];
		o->gpu_b = sched_bucket(ctx, o->qsvc, o->region,
		    w->gpu_metric);
		if (o->qsvc != GCP_SERVICE_GCE)
			continue;
		o->all_b = sched_bucket(ctx, GCP_SERVICE_GCE, QUOTA_GLOBAL,
		    "GPUS_ALL_REGIONS");
		if (sh->vcpus > 0 && w->cpu_metric[0] != '\0')
			o->cpu_b = sched_bucket(ctx, GCP_SERVICE_GCE,
			    o->region, w->cpu_metric);
	}
}

int
sched_place_buckets_kept(struct sched_ctx *ctx, struct sched_shape *sh)
{
	struct sched_offer	*o;
	size_t			 i;

	if (sh->bucket_ctx != ctx || sh->bucket_epoch != ctx->epoch ||
	    ctx->epoch == 0) {
		sched_place_buckets(ctx, sh);
		return 1;
	}
	/* A reservation's bucket is loaded from its offer, not quota.c. */
	for (i = 0; i < sh->nok; i++) {
		o = &sh->offers[i];
		if (o->reservation[0] != '\0')
			sched_place_resv_bucket(ctx, sh, o);
	}
	return 0;
}

int
sched_claimed(const struct sched_bucket *b, int64_t id, int prio,
    int64_t now)
{
	if (b->claim_id == 0 || b->claim_id == id)
		return 0;
	if (b->claim_prio > prio)
		return 1;
	return b->claim_prio == prio &&
	    now - b->claim_since >= SCHED_STARVE_SEC;
}

/*
 * Check O's buckets for COUNT GPUs and VCPUS: SCHED_OK, or the reason
 * and the bucket index that failed in *RET_B.
 */
static int
sched_place_quota(struct sched_ctx *ctx, const struct sched_offer *o,
    int count, int vcpus, int *ret_b)
{
	struct sched_bucket	*b;

	b = sched_bucket_load(ctx, o->gpu_b);
	if (b->known && b->free < count) {
		*ret_b = o->gpu_b;
		return SCHED_X_QUOTA;
	}
	if (o->all_b >= 0) {
		b = sched_bucket_load(ctx, o->all_b);
		if (b->known && b->free < count) {
			*ret_b = o->all_b;
			return SCHED_X_QUOTA_ALL;
		}
	}
	if (o->cpu_b >= 0 && vcpus > 0) {
		b = sched_bucket_load(ctx, o->cpu_b);
		if (b->known && b->free < vcpus) {
			*ret_b = o->cpu_b;
			return SCHED_X_QUOTA_CPU;
		}
	}
	return SCHED_OK;
}

/* Is O over job J's limits: SCHED_X_HOURLY, SCHED_X_TOTAL or OK. */
static int
sched_place_limits(const struct sched_job *j, const struct sched_offer *o)
{
	if (j->max_hourly > 0 && o->hourly > j->max_hourly + 1e-9)
		return SCHED_X_HOURLY;
	if (j->max_total > 0 && o->per_hour * j->hours > j->max_total + 1e-9)
		return SCHED_X_TOTAL;
	return SCHED_OK;
}

/* ---------------------------------------------------------------- */
/* A job's memory of refusals.					    */

/* Does job J avoid (O's provider, O's region) at NOW? */
static int
sched_avoids(const struct sched_job *j, const struct sched_offer *o,
    int64_t now)
{
	int	i;

	for (i = 0; i < SCHED_AVOID; i++)
		if (j->avoid[i].until > now && j->avoid[i].prov == o->prov &&
		    strcmp(j->avoid[i].region, o->region) == 0 &&
		    (j->avoid[i].kind < 0 || j->avoid[i].kind == o->capacity))
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- */
/* A deadline job's order of the offers.			    */

/* The cheapest usable offer of SH that is not preempted, per hour of
 * work; 0: none. */
static double
sched_place_alt(const struct sched_shape *sh)
{
	size_t	i;

	for (i = 0; i < sh->nok; i++)
		if (!sh->offers[i].spot)
			return sh->offers[i].per_hour;
	return 0;
}

/*
 * What Spot at rate LAMBDA and PER_HOUR costs job J an hour of work, its
 * slack counted (doc/DESIGN.md "Deadlines"): the share of its work left
 * it is expected to run on ALT (the cheapest capacity not preempted,
 * per hour) once its slack cannot absorb another preemption there is
 * paid at ALT. The replay's jobs short of slack ran their last 14 h on
 * flex-start at twice Spot's price after three preemptions in zones
 * that preempt every few hours, where one that preempts once a day
 * would have kept them on Spot.
 */
static double
sched_place_dl_extra(const struct sched_job *j, double per_hour,
    double lambda, double alt)
{
	if (j->dl_left <= 0 || !(alt > per_hour))
		return 0;
	return (alt - per_hour) * deadline_spot_tail(j->dl_left / 3600.0,
	    j->dl_avail / 3600.0, j->dl_cost / 3600.0, lambda);
}

struct sched_rank {
	double	usd;
	size_t	i;
};

static int
sched_rank_cmp(const void *a, const void *b)
{
	const struct sched_rank	*x = a, *y = b;

	if (x->usd != y->usd)
		return x->usd < y->usd ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The order in which job J walks its shape's usable offers: NULL for
 * the shape's ranking, or ORD (SCHED_ORDER_MAX long) for a deadline job
 * that may use Spot, its Spot offers raised by what each costs its slack
 * (sched_place_dl_extra()). A shape with more offers than that keeps its
 * ranking.
 */
static const size_t *
sched_place_order(const struct sched_job *j, size_t *ord)
{
	const struct sched_shape	*sh = j->shape;
	const struct sched_offer	*o;
	struct sched_rank		 r[SCHED_ORDER_MAX];
	double				 alt;
	size_t				 i, n = sh->nok;

	if (j->dl_left <= 0 || n > SCHED_ORDER_MAX ||
	    (alt = sched_place_alt(sh)) <= 0)
		return NULL;
	for (i = 0; i < n; i++) {
		o = &sh->offers[i];
		r[i].i = i;
		r[i].usd = o->rank_usd;
		if (o->spot)
			r[i].usd += sched_place_dl_extra(j, o->per_hour,
			    o->lambda, alt);
	}
	if (n > 0)
		qsort(r, n, sizeof *r, sched_rank_cmp);
	for (i = 0; i < n; i++)
		ord[i] = r[i].i;
	return ord;
}

int
sched_place_spot_first(const struct sched_job *j, int64_t now)
{
	const struct sched_offer	*o = sched_place_first(j, now);

	return o != NULL && o->spot;
}

const struct sched_offer *
sched_place_first(const struct sched_job *j, int64_t now)
{
	const struct sched_shape	*sh = j->shape;
	const struct sched_offer	*o;
	const size_t			*ord;
	size_t				 buf[SCHED_ORDER_MAX], i;

	if (sh == NULL)
		return NULL;
	ord = sched_place_order(j, buf);
	for (i = 0; i < sh->nok; i++) {
		o = &sh->offers[ord != NULL ? ord[i] : i];
		if (!sched_avoids(j, o, now))
			return o;
	}
	return NULL;
}

void
sched_avoid(struct sched_job *j, const struct provider *p,
    const char *region, int64_t until)
{
	sched_avoid_kind(j, p, region, -1, until);
}

void
sched_avoid_kind(struct sched_job *j, const struct provider *p,
    const char *region, int kind, int64_t until)
{
	int	i, k = 0;

	for (i = 0; i < SCHED_AVOID; i++) {
		if (j->avoid[i].prov == p &&
		    strcmp(j->avoid[i].region, region) == 0 &&
		    j->avoid[i].kind == kind) {
			k = i;
			break;
		}
		if (j->avoid[i].until < j->avoid[k].until)
			k = i;
	}
	j->avoid[k].prov = p;
	sched_name(j->avoid[k].region, region);
	j->avoid[k].until = until;
	j->avoid[k].kind = kind;
}

/* Has job J hints (preferred zones, places avoided) in force? */
static int
sched_job_hinted(const struct sched_job *j, int64_t now)
{
	int	i;

	if (j->prefer_until > now && j->prefer[0] != '\0')
		return 1;
	for (i = 0; i < SCHED_AVOID; i++)
		if (j->avoid[i].until > now)
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Whys.							    */

/* The why of a job every one of whose offers was over its limits. */
static char *
sched_why_limits(const struct sched_shape *sh, const struct sched_job *j,
    int reason)
{
	if (reason == SCHED_X_HOURLY)
		return xprintf("over max_hourly_usd %.2f: cheapest offer "
		    "$%.2f/h", j->max_hourly, sh->min_hourly);
	return xprintf("over max_total_usd %.2f: cheapest offer expected "
	    "$%.2f for %g h", j->max_total, sh->min_per_hour * j->hours,
	    j->hours);
}

/*
 * The why of a job blocked by quota: the bucket kind that got furthest,
 * the regions, and the quotas of those buckets FB[0..NFB). Two texts:
 * the one stored, which names the situation in kind and no count, and
 * *RET_LIVE, the same with the most free units of those buckets ("2 of
 * 4 free"), shown where a user asks (sched_why_live()). A job's end or a
 * quota reading moves that count for every waiting job of the shape:
 * in the stored why it rewrote them all, 25,000 rows in one pass at
 * 100,000 jobs (doc/DESIGN.md "The pass").
 */
static char *
sched_why_quota(const struct sched_ctx *ctx, const struct sched_shape *sh,
    int reason, const int *fb, size_t nfb, char **ret_live)
{
	const struct sched_bucket	*b;
	char				*where = xstrdup(""), *t, *why;
	char				*metrics = xstrdup("");
	double				 best = -1;
	size_t				 i, n = 0, nm = 0;

	for (i = 0; i < nfb; i++) {
		b = &ctx->b[fb[i]];
		if (b->free > best)
			best = b->free;
		/* Name the quotas, so the user knows which to ask for. */
		if (strstr(metrics, b->metric) == NULL &&
		    nm++ < SCHED_LIST_MAX) {
			t = xprintf("%s%s%s", metrics, *metrics ? ", " : "",
			    b->metric);
			free(metrics);
			metrics = t;
		}
		if (strstr(where, b->region) != NULL)
			continue;
		if (n++ == SCHED_LIST_MAX)
			continue;
		t = xprintf("%s%s%s", where, *where ? ", " : "", b->region);
		free(where);
		where = t;
	}
	if (n > SCHED_LIST_MAX) {
		t = xprintf("%s and %zu more", where, n - SCHED_LIST_MAX);
		free(where);
		where = t;
	}
	if (best < 0)
		best = 0;
	if (reason == SCHED_X_QUOTA_CPU) {
		why = xprintf("no free CPU quota for %s (%d vCPUs) in %s",
		    sh->machine, SCHED_VCPUS(sh), where);
		*ret_live = xprintf("%s (%.0f free)", why, floor(best));
	} else if (reason == SCHED_X_QUOTA_ALL) {
		why = xprintf("no free quota for %d\xc3\x97%s: "
		    "GPUS_ALL_REGIONS has too few free", SCHED_GPUS(sh),
		    sh->gpu->name);
		*ret_live = xprintf("no free quota for %d\xc3\x97%s: "
		    "GPUS_ALL_REGIONS has %.0f of %d free", SCHED_GPUS(sh),
		    sh->gpu->name, floor(best), SCHED_GPUS(sh));
	} else {
		why = xprintf("no free quota for %d\xc3\x97%s in %s (quota "
		    "%s)", SCHED_GPUS(sh), sh->gpu->name, where, metrics);
		*ret_live = xprintf("no free quota for %d\xc3\x97%s in %s "
		    "(%.0f of %d free; quota %s)", SCHED_GPUS(sh),
		    sh->gpu->name, where, floor(best), SCHED_GPUS(sh),
		    metrics);
	}
	free(metrics);
	free(where);
	return why;
}

/* Why offer O is set aside for job J (bucket BI, or -1), in words. New. */
static char *
sched_why_offer(const struct sched_ctx *ctx, const struct sched_job *j,
    const struct sched_offer *o, int reason, int bi)
{
	const struct sched_shape	*sh = j->shape;
	const struct sched_bucket	*b = bi >= 0 ? &ctx->b[bi] : NULL;
	char				 when[16];

	switch (reason) {
	case SCHED_X_NOT_OFFERED:
		return xprintf("%d\xc3\x97%s is not offered in %s", sh->count,
		    sh->gpu->name, o->region);
	case SCHED_X_NO_METRIC:
		return xprintf("no %s quota exists for %s on %s",
		    o->capacity == CAPACITY_FLEX ? "flex-start (preemptible)" :
		    o->spot ? "Spot" : "on-demand", sh->gpu->name,
		    o->prov->name);
	case SCHED_X_NO_PRICE:
		return xprintf("no price known");
	case SCHED_X_COOLDOWN:
		sched_clock(o->until, when, sizeof when);
		return xprintf("stockout cool-down until %s", when);
	case SCHED_X_HOURLY:
		return xprintf("$%.2f/h is over max_hourly_usd %.2f",
		    o->hourly, j->max_hourly);
	case SCHED_X_TOTAL:
		return xprintf("expected $%.2f is over max_total_usd %.2f",
		    o->per_hour * j->hours, j->max_total);
	case SCHED_X_QUOTA:
		if (b == NULL && o->reservation[0] != '\0')
			return xprintf("reservation %s is full: %lld of "
			    "%lld VMs free, %d needed", o->reservation,
			    (long long)o->resv_free,
			    (long long)o->resv_count, SCHED_NODES(sh));
		/* FALLTHROUGH */
	case SCHED_X_QUOTA_ALL:
		return xprintf("no free quota: %s in %s has %.0f of %d free",
		    b->metric, b->region, floor(b->free > 0 ? b->free : 0),
		    SCHED_GPUS(sh));
	case SCHED_X_QUOTA_CPU:
		return xprintf("no free CPU quota: %s in %s has %.0f of %d "
		    "free", b->metric, b->region, floor(b->free > 0 ? b->free :
		    0), SCHED_VCPUS(sh));
	}
	return xstrdup("not usable");
}

/* ---------------------------------------------------------------- */
/* Placing one job.						    */

void
sched_verdict_done(struct sched_verdict *v)
{
	free(v->why);
	free(v->live);
	free(v->claim_what);
	memset(v, 0, sizeof *v);
}

/* Does O draw on a bucket claimed against J (PRIO)? *RET_B: which. */
static int
sched_place_claimed(const struct sched_ctx *ctx, const struct sched_job *j,
    int prio, const struct sched_offer *o, int *ret_b)
{
	int	b[3], k;

	b[0] = o->gpu_b;
	b[1] = o->all_b;
	b[2] = o->cpu_b;
	for (k = 0; k < 3; k++)
		if (b[k] >= 0 && sched_claimed(&ctx->b[b[k]], j->id, prio,
		    ctx->now)) {
			*ret_b = b[k];
			return 1;
		}
	return 0;
}

/*
 * Whether job J, about to take offer O that is not Spot, waits instead
 * for a Spot offer that only a stockout cool-down sets aside and whose
 * expected cost is lower (doc/DESIGN.md "Waiting out Spot stockouts"):
 * for at most [scheduler] spot_wait from the first pass that found it
 * so. Spot stockouts are mostly short, and flex-start or on-demand cost
 * two to four times Spot's price for the whole run, where waiting costs
 * nothing; a deadline job waits no longer than its slack allows
 * (J->spot_wait_end, sched-deadline.c's bridge). Sets V's why.
 */
static int
sched_place_wait_spot(struct sched_ctx *ctx, struct sched_job *j,
    const struct sched_offer *o, struct sched_verdict *v)
{
	const struct sched_shape	*sh = j->shape;
	char				 when[16];

	if (o->spot || sh->spot_wait <= 0 || sh->spot_cooled_until == 0 ||
	    sh->spot_cooled_per_hour >= o->per_hour || ctx->gen == 0) {
		j->spot_wait_since = 0;
		return 0;
	}
	if (j->spot_wait_since == 0)
		j->spot_wait_since = ctx->now;
	if (ctx->now - j->spot_wait_since >= sh->spot_wait ||
	    (j->spot_wait_end != 0 && ctx->now >= j->spot_wait_end))
		return 0;
	sched_clock(sh->spot_cooled_until, when, sizeof when);
	v->reason = SCHED_X_COOLDOWN;
	v->spot_wait = 1;
	v->why = xprintf("waiting for Spot (stockout cool-down until %s; "
	    "expected $%.2f/h against $%.2f/h for %s), at most spot_wait",
	    when, sh->spot_cooled_per_hour, o->per_hour,
	    capacity_name(o->capacity));
	return 1;
}

/*
 * Whether offer O, at a place that refused lately (its strikes), has
 * had a job sent to it this pass: one job probes such a place, the
 * others take their next offer (doc/DESIGN.md "Places that refused").
 * The replay's queued jobs went as a herd from one full zone to the
 * next, each refusal minutes of every one's time. A plan (gen 0) shows
 * what a pass would do for one job and probes nothing.
 */
static int
sched_place_probed(const struct sched_ctx *ctx, const struct sched_offer *o)
{
	return o->strikes > 0 && ctx->gen != 0 && o->probe_gen == ctx->gen;
}

void
sched_place(struct sched_ctx *ctx, struct sched_job *j, int prio,
    struct sched_verdict *v)
{
	struct sched_shape	*sh = j->shape;
	struct sched_offer	*o;
	struct sched_bucket	*b;
	int			 fb[64], reason, bi, round, rounds;
	int			 probed = 0;
	const size_t		*ord;
	size_t			 buf[SCHED_ORDER_MAX], i, nfb = 0, k;

	memset(v, 0, sizeof *v);
	v->reason = SCHED_OK;
	if (sh->nok == 0) {
		v->why = xstrdup(sh->why != NULL ? sh->why :
		    "no offer for this job");
		return;
	}
	rounds = j->prefer_until > ctx->now && j->prefer[0] != '\0' ? 2 : 1;
	ord = sched_place_order(j, buf);
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < sh->nok; i++) {
			o = &sh->offers[ord != NULL ? ord[i] : i];
			if (rounds == 2 && round == 0 &&
			    !sched_in_csv(j->prefer, o->zone))
				continue;
			if ((reason = sched_place_limits(j, o)) != SCHED_OK)
				;
			else if (sched_avoids(j, o, ctx->now))
				reason = SCHED_X_AVOID;
			else if (sched_place_probed(ctx, o)) {
				reason = SCHED_X_AVOID;
				probed |= o->spot;
			} else if ((reason = sched_place_quota(ctx, o,
			    SCHED_GPUS(sh), SCHED_VCPUS(sh), &bi)) !=
			    SCHED_OK) {
				for (k = 0; k < nfb && fb[k] != bi; k++)
					;
				if (k == nfb && nfb < sizeof fb / sizeof fb[0])
					fb[nfb++] = bi;
			} else if (!sched_place_claimed(ctx, j, prio, o, &bi)) {
				/*
				 * Spot another job is probing is no reason
				 * to pay for capacity that is not: its
				 * answer comes in minutes. A deadline
				 * bounds the wait as it bounds the wait
				 * for Spot (spot_wait_end).
				 */
				if (probed && !o->spot && (j->spot_wait_end ==
				    0 || ctx->now < j->spot_wait_end)) {
					reason = SCHED_X_AVOID;
					round = rounds;
					if (reason > v->reason)
						v->reason = reason;
					break;
				}
				if (sched_place_wait_spot(ctx, j, o, v))
					return;
				if (o->strikes > 0)
					o->probe_gen = ctx->gen;
				v->offer = o;
				return;
			} else {
				reason = SCHED_X_CLAIMED;
				b = &ctx->b[bi];
				if (v->claim_id == 0) {
					v->claim_id = b->claim_id;
					v->claim_prio = b->claim_prio;
					v->claim_what = xprintf("quota %s in "
					    "%s", b->metric, b->region);
				}
			}
			if (reason > v->reason)
				v->reason = reason;
		}
	}

	/* Nothing: say why, and claim the buckets that blocked us. */
	switch (v->reason) {
	case SCHED_X_HOURLY:
	case SCHED_X_TOTAL:
		v->why = sched_why_limits(sh, j, v->reason);
		break;
	case SCHED_X_AVOID:
		v->why = xprintf("the cloud refused it lately in every "
		    "allowed place; trying again soon");
		break;
	case SCHED_X_CLAIMED:
		v->quota = 1;
		v->why = xprintf("waiting for higher-priority job %" PRId64
		    " (%s)", v->claim_id, v->claim_what);
		break;
	default:
		v->quota = 1;
		v->why = sched_why_quota(ctx, sh, v->reason, fb, nfb,
		    &v->live);
		break;
	}
	if (!v->quota)
		return;
	if (j->blocked_since == 0)
		j->blocked_since = ctx->now;
	for (k = 0; k < nfb; k++) {
		b = &ctx->b[fb[k]];
		if (b->claim_id == 0) {
			b->claim_id = j->id;
			b->claim_prio = prio;
			b->claim_since = j->blocked_since;
		}
	}
}

/* ---------------------------------------------------------------- */
/* Backfill: one walk per shape and pass.			    */

/* The why of the shortcut's claim (sched_place_fast_why()). */
static char *
sched_place_claim_why(const struct sched_shape *sh)
{
	return xprintf("waiting for higher-priority job %" PRId64 " (%s)",
	    sh->fail_claim_id, sh->fail_claim_what);
}

int
sched_place_fast_hash(struct sched_ctx *ctx, struct sched_job *j, int prio,
    uint64_t *ret)
{
	if (sched_job_hinted(j, ctx->now))
		return 0;
	return sched_place_fast_hash_of(ctx, j->shape, j->id, prio,
	    j->max_hourly, j->max_total, j->hours, ret);
}

int
sched_place_hinted(const struct sched_job *j, int64_t now)
{
	return sched_job_hinted(j, now);
}

char *
sched_place_fast_why(struct sched_ctx *ctx, struct sched_job *j, int prio)
{
	struct sched_shape	*sh = j->shape;

	if (sh->fail_gen != ctx->gen || sched_job_hinted(j, ctx->now) ||
	    sh->fail_hourly != j->max_hourly || sh->fail_total !=
	    j->max_total || sh->fail_hours != j->hours)
		return NULL;
	if (sh->fail_quota && sh->fail_claim_id != 0 &&
	    sh->fail_claim_id != j->id && sh->fail_claim_prio > prio)
		return sched_place_claim_why(sh);
	return xstrdup(sh->fail_why);
}

void
sched_place_fail_note(struct sched_ctx *ctx, struct sched_job *j,
    const struct sched_verdict *v)
{
	struct sched_shape	*sh = j->shape;
	char			*why;

	/* A wait for Spot is this job's own (its spot_wait_since). */
	if (sh->fail_gen == ctx->gen || sched_job_hinted(j, ctx->now) ||
	    v->spot_wait)
		return;
	sh->fail_gen = ctx->gen;
	sh->fail_hourly = j->max_hourly;
	sh->fail_total = j->max_total;
	sh->fail_hours = j->hours;
	free(sh->fail_why);
	sh->fail_why = xstrdup(v->why);
	sh->fail_quota = v->quota;
	free(sh->fail_claim_what);
	sh->fail_claim_what = v->claim_what != NULL ?
	    xstrdup(v->claim_what) : NULL;
	sh->fail_claim_id = v->claim_id;
	sh->fail_claim_prio = v->claim_prio;
	/* Hashed once here, so that each later job of the shape whose
	 * stored why is already this one costs no text at all. */
	sh->fail_why_hash = sched_hash(sh->fail_why);
	sh->fail_claim_hash = 0;
	if (sh->fail_claim_what != NULL) {
		why = sched_place_claim_why(sh);
		sh->fail_claim_hash = sched_hash(why);
		free(why);
	}
}

/* ---------------------------------------------------------------- */
/* Plan.							    */

static json_t *
sched_place_offer_json(const struct sched_offer *o,
    const struct sched_shape *sh)
{
	json_t	*v;

	v = json_pack("{s:s, s:s, s:s?, s:b, s:s, s:s}", "provider",
	    o->prov->name, "region", o->region, "zone", o->zone[0] ? o->zone :
	    NULL, "spot", o->spot, "machine_type", sh->machine, "capacity",
	    capacity_name(o->capacity));
	if (v == NULL)
		fatalx("scheduler: out of memory building a plan");
	if (o->reservation[0] != '\0')
		(void)json_object_set_new(v, "reservation",
		    json_string(o->reservation));
	return v;
}

/*
 * The kinds of capacity SH gets no offer of, and why, for a plan:
 * [{"capacity":"flex","provider":"vertex","reason":"..."}], provider
 * absent when the reason is the job's (doc/DESIGN.md "Capacity kinds").
 * Reserved capacity says its own why where reservations are read.
 */
json_t *
sched_place_kinds_json(const struct sched_market *m,
    const struct sched_shape *sh)
{
	const char			*why;
	json_t				*a, *e;
	size_t				 si;
	int				 k;

	if ((a = json_array()) == NULL)
		fatalx("scheduler: out of memory building a plan");
	for (k = 0; k < CAPACITY_NKINDS; k++) {
		if ((why = sched_offer_kind_refusal(sh, NULL, k)) != NULL) {
			if (k == CAPACITY_RESERVED &&
			    !sched_offer_kind_allowed(sh, k))
				continue;
			e = json_pack("{s:s, s:s}", "capacity",
			    capacity_name(k), "reason", why);
			if (e == NULL || json_array_append_new(a, e) != 0)
				fatalx("scheduler: out of memory");
			continue;
		}
		for (si = 0; m != NULL && si < m->nsellers; si++) {
			if (!sched_offer_allows(sh, m->sellers[si].prov) ||
			    (why = sched_offer_kind_refusal(sh,
			    m->sellers[si].prov, k)) == NULL)
				continue;
			e = json_pack("{s:s, s:s, s:s}", "capacity",
			    capacity_name(k), "provider",
			    m->sellers[si].prov->name, "reason", why);
			if (e == NULL || json_array_append_new(a, e) != 0)
				fatalx("scheduler: out of memory");
		}
	}
	return a;
}

json_t *
sched_place_plan(struct sched_ctx *ctx, struct sched_job *j, int prio)
{
	struct sched_shape	*sh = j->shape;
	struct sched_verdict	 v;
	struct sched_offer	*o;
	json_t			*plan, *offers, *excluded, *e;
	char			*text;
	size_t			 i;
	int			 reason, bi, rank = 0;

	plan = json_object();
	offers = json_array();
	excluded = json_array();
	if (plan == NULL || offers == NULL || excluded == NULL)
		fatalx("scheduler: out of memory building a plan");
	(void)json_object_set_new(plan, "offers", offers);
	(void)json_object_set_new(plan, "excluded", excluded);
	for (i = 0; i < sh->n; i++) {
		o = &sh->offers[i];
		bi = -1;
		reason = o->reason;
		if (reason == SCHED_OK &&
		    (reason = sched_place_limits(j, o)) == SCHED_OK)
			reason = sched_place_quota(ctx, o,
			    SCHED_GPUS(sh), SCHED_VCPUS(sh), &bi);
		e = sched_place_offer_json(o, sh);
		if (reason == SCHED_OK) {
			(void)json_object_set_new(e, "hourly_usd",
			    json_real(o->hourly));
			(void)json_object_set_new(e, "expected_usd",
			    json_real(o->per_hour * j->hours));
			(void)json_object_set_new(e, "lambda",
			    json_real(o->lambda));
			(void)json_object_set_new(e, "rank",
			    json_integer(++rank));
			(void)json_array_append_new(offers, e);
			continue;
		}
		if (o->hourly > 0)
			(void)json_object_set_new(e, "hourly_usd",
			    json_real(o->hourly));
		text = sched_why_offer(ctx, j, o, reason, bi);
		(void)json_object_set_new(e, "reason", json_string(text));
		free(text);
		(void)json_array_append_new(excluded, e);
	}
	if (rank == 0) {
		sched_place(ctx, j, prio, &v);
		/* A plan is asked for now: the live counts. */
		(void)json_object_set_new(plan, "why", json_string(
		    v.live != NULL ? v.live : v.why != NULL ? v.why :
		    "no offer"));
		sched_verdict_done(&v);
	}
	return plan;
}
