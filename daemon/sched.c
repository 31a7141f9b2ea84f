/*
 * sched.c: the scheduler (sched.h). Which queued job runs where; the
 * attempt it chose is launched by attempt.c.
 *
 * A pass, from its one timer (OpenSMTPD scheduler.c's shape):
 *
 *   1. quotas older than [scheduler] quota_ttl are refreshed (the pass
 *      goes on when the refresh calls back, or after SCHED_QUOTA_WAIT_MS
 *      on what is known);
 *   2. the runnable jobs are read in priority order, FIFO within a
 *      priority (store_job_list_runnable); each job's spec was parsed
 *      once, when it was first seen, into its SHAPE: GPU, count,
 *      machine, Spot policy, regions, providers, checkpoint interval;
 *   3. each shape gets, once per pass, its offers -- enabled provider x
 *      region x zone (Compute Engine) or region (Batch, Vertex AI, which
 *      pick the zone) x Spot or standard -- with those the GPU is not
 *      offered in, with no quota metric, no price or in a stockout
 *      cool-down set aside, and the rest ranked by expected cost
 *      (cost.h). 10,000 queued jobs of a handful of shapes cost a
 *      handful of enumerations;
 *   4. each job walks its shape's ranking and takes the first offer
 *      within its own limits (max_hourly_usd, max_total_usd) whose quota
 *      buckets have room -- free quota counted by quota.c, minus what is
 *      in flight -- and that no higher-priority job has claimed (below);
 *   5. the chosen offer's quota is reserved and the attempt handed to
 *      attempt.c, which commits it and calls the provider;
 *      a job that found nothing gets a sentence saying why it waits.
 *
 * Backfill and starvation. A job that cannot be placed does not stop
 * the walk: jobs behind it that fit elsewhere run (backfill). But when a
 * job is blocked only by quota, it CLAIMS every bucket (service, region,
 * metric) that blocked it, and a job of LOWER priority may not take an
 * offer that draws on a claimed bucket, so GPUs freed there go to the
 * higher-priority job first instead of being eaten by a stream of small
 * ones. Among equal priorities a claim binds later jobs too once its job
 * has waited SCHED_STARVE_SEC, so a big job is not starved by a stream
 * of small ones of its own priority either.
 *
 * Pacing: passes woken by events (submits, ended attempts) start no
 * sooner than SCHED_GAP_FACTOR times the last pass's length after it, so
 * a storm of submits over a long queue costs a bounded share of the
 * loop; launches are SCHED_LAUNCH_BURST per pass, then another pass.
 *
 * Launch results are not the scheduler's: attempt.c owns the attempt
 * from attempt_launch() on and decides what the cloud's answer means
 * (its table of legal changes). It tells the scheduler, through the
 * struct attempt_listener registered in sched_set_attempts(), what the
 * next passes must know: a job's launch errors in a row (for the
 * backoff), the places a job should avoid for a while, the zones a
 * stockout named as available, and when to pass again.
 *
 * Knows the store, quotas and prices, the cloud (cloud.h) and attempt.h;
 * nothing of HTTP or of one API's JSON, nothing of the reconciler.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/cost.h"
#include "daemon/sched.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/price.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"

#define SCHED_NAME		64	/* region, zone */
#define SCHED_LAUNCH_BURST	32	/* launches per pass; then another */
#define SCHED_STARVE_SEC	900	/* equal-priority claims bind after */
#define SCHED_IDLE_SEC		30	/* re-pass at least this often when
					   jobs wait in backoff */
#define SCHED_HISTORY_SEC	300	/* re-read Spot history this often */
#define SCHED_EVICT_SEC		600	/* forget jobs unseen this long */
#define SCHED_MAX_ZONES		512	/* zones read per GPU */
#define SCHED_AVOID		4	/* places a job avoids at once */
#define SCHED_QUOTA_BACKOFF	10	/* no quota refresh this long after a
					   failed one */
#define SCHED_QUOTA_WAIT_MS	5000	/* a pass waits this long at most for
					   a quota refresh, then runs on
					   what is known */
#define SCHED_GAP_FACTOR	4	/* a pass woken by events starts no
					   sooner than this many times the
					   last one's length after it */
#define SCHED_GAP_MAX_MS	1000
#define SCHED_LIST_MAX		4	/* places named in a why */

enum sched_spot {
	SCHED_SPOT_NEVER,
	SCHED_SPOT_ALLOW,
	SCHED_SPOT_REQUIRE,
};

/*
 * Why an offer is set aside, in the order of the pipeline: the why of a
 * job that found nothing names the offers that got furthest.
 */
enum sched_reason {
	SCHED_OK = 0,
	SCHED_X_NOT_OFFERED,	/* GPU x count not in the zone/region */
	SCHED_X_NO_METRIC,	/* no quota metric: not sold that way */
	SCHED_X_NO_PRICE,
	SCHED_X_COOLDOWN,	/* stockout cool-down */
	SCHED_X_HOURLY,		/* over the job's max_hourly_usd */
	SCHED_X_TOTAL,		/* expected cost over max_total_usd */
	SCHED_X_AVOID,		/* refused the job lately */
	SCHED_X_QUOTA,		/* GPU quota of the region */
	SCHED_X_QUOTA_ALL,	/* GPUS_ALL_REGIONS */
	SCHED_X_QUOTA_CPU,	/* vCPU quota of the region */
	SCHED_X_CLAIMED,	/* room, but a higher-priority job's */
};

/* A quota bucket a launch draws on, read once per pass. */
struct sched_bucket {
	enum gcp_service	 svc;		/* GCE (Batch too) or VERTEX */
	char			 region[SCHED_NAME];
	char			 metric[QUOTA_METRIC_MAX];
	uint64_t		 hash;
	int			 loaded;	/* free read this pass */
	int			 known;		/* quota.c has a reading */
	double			 free;
	double			 limit;
	int64_t			 claim_id;	/* job claiming it, or 0 */
	int			 claim_prio;
	int64_t			 claim_since;
};

/* One way to run a shape. */
struct sched_offer {
	const struct provider	*prov;
	enum gcp_service	 qsvc;		/* quota service */
	enum gcp_service	 psvc;		/* price service */
	char			 region[SCHED_NAME];
	char			 zone[SCHED_NAME];	/* "": service picks */
	int			 spot;
	double			 hourly;
	double			 per_hour;	/* expected USD per estimated
						   hour of work */
	double			 lambda;
	int			 recent;	/* interruptions in history */
	int			 order;
	int			 gpu_b, all_b, cpu_b;	/* buckets, -1 none */
	int			 reason;	/* enum sched_reason */
	int64_t			 until;		/* cool-down end */
};

/* Jobs alike enough to share one ranked offer list per pass. */
struct sched_shape {
	char			*key;
	int			 refs;		/* jobs pointing here */
	const struct gpu_type	*gpu;
	int			 count;
	char			*machine;
	int			 vcpus;		/* -1 unknown */
	int			 spot;		/* enum sched_spot */
	int64_t			 interval;	/* checkpoint interval, s */
	char		       **regions;	/* job's, sorted; NULL: any */
	size_t			 nregions;
	char		       **providers;	/* job's; NULL: any */
	size_t			 nproviders;

	unsigned		 gen;		/* pass the offers are of */
	struct sched_offer	*offers;	/* ranked OK ones first */
	size_t			 n, nok, cap;
	char			*why;		/* when nok == 0 */
	double			 min_hourly;	/* of the OK offers */
	double			 min_per_hour;

	/* The first job of this shape that found nothing, this pass. */
	unsigned		 fail_gen;
	double			 fail_hourly, fail_total, fail_hours;
	char			*fail_why;
	int			 fail_quota;	/* blocked by quota/claims */
	int64_t			 fail_claim_id;	/* who holds its buckets */
	int			 fail_claim_prio;
	char			*fail_claim_what;
};

/* What the scheduler remembers of a job between passes. */
struct sched_job {
	int64_t			 id;
	struct sched_shape	*shape;		/* NULL: spec unusable */
	char			*bad;		/* why it is unusable */
	double			 max_hourly;	/* 0: no limit */
	double			 max_total;
	double			 hours;		/* estimated_hours */
	int64_t			 last_seen;
	int			 launch_errors;	/* in a row */
	char			 prefer[256];	/* zones a stockout named */
	int64_t			 prefer_until;
	struct {
		const struct provider *prov;
		char		 region[SCHED_NAME];
		int64_t		 until;
	}			 avoid[SCHED_AVOID];
	int64_t			 blocked_since;	/* waiting on quota since */
	TAILQ_ENTRY(sched_job)	 entry;		/* oldest seen first */
};
TAILQ_HEAD(sched_jobs, sched_job);

/* A runnable job in this pass. */
struct sched_item {
	struct sched_job	*job;
	int			 priority;
	uint64_t		 why_hash;	/* of the stored why */
	double			 cost_usd;
};

/* An active stockout cool-down. */
struct sched_cool {
	char			 zone[SCHED_NAME];
	char			 gpu[SCHED_NAME];
	int			 spot;
	int64_t			 until;
};

/* Spot history of one (provider, region, GPU). */
struct sched_hist {
	char			*key;		/* "gce/us-central1/nvidia-l4" */
	uint64_t		 hash;
	double			 hours;
	int			 interruptions;
};

/* What a pass (or a plan) reads once: cool-downs and quota buckets. */
struct sched_ctx {
	int64_t			 now;
	struct sched_bucket	*b;
	size_t			 nb, capb;
	struct sched_cool	*cool;
	size_t			 ncool, capcool;
	int64_t			 min_cool_until;	/* of the cool-downs hit */
};

struct sched {
	struct cloud		*cloud;		/* borrowed */
	struct store		*store;		/* borrowed */
	struct attempts		*att;		/* borrowed or NULL */
	int64_t			 why_said;	/* job whose why a launch's
						   answer wrote, this call */
	uv_timer_t		 timer;		/* timer.data == this */
	int			 started;
	int			 ready;		/* reconciler's first pass done */
	int			 closing;
	int			 refs;		/* timer + refreshes in flight */
	int			 waiting_quota;	/* a pass waits for a refresh */
	int			 waiting_price;	/* ... for the first catalog */
	int			 price_checked;	/* the first catalog read ended */
	uint64_t		 quota_wait_end; /* loop ms: stop waiting */
	uint64_t		 last_end;	/* loop ms a pass ended */
	int64_t			 quota_retry_at; /* no refresh before, after a
						   failed one */
	time_t			 quota_stamp;	/* readings the last pass saw */
	int			 in_pass;
	int			 again;		/* wake during a pass */
	char			*quota_error;	/* last refresh failure */
	unsigned		 gen;		/* pass number */
	int64_t			 wake_at;	/* earliest requested, 0 none */
	int64_t			 due;		/* the timer's target */

	void			*jobs;		/* tsearch tree of sched_job */
	struct sched_jobs	 job_list;
	size_t			 njobs;
	void			*shapes;	/* tsearch tree of sched_shape */
	size_t			 nshapes;

	struct sched_hist	*hist;
	size_t			 nhist;
	int64_t			 hist_at;	/* when read; 0: re-read */

	struct sched_ctx	 ctx;
	struct sched_item	*items;
	size_t			 nitems, capitems;
	struct quota_zone	*zones;		/* SCHED_MAX_ZONES */

	/* Whys to write at the end of the pass, in one transaction. */
	int64_t			*why_ids;
	char		       **why_texts;
	size_t			 nwhy, capwhy;

	struct sched_stats	 stats;
};

static void	sched_pass(struct sched *);
static void	sched_arm(struct sched *, int64_t delay_ms);
static void	sched_unref(struct sched *);

/* FNV-1a of S, 0 for NULL (so "no why" hashes apart from any text). */
static uint64_t
sched_hash(const char *s)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	if (s == NULL)
		return 0;
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h != 0 ? h : 1;
}

/* Copy S into DST (SCHED_NAME bytes). */
static void
sched_name(char *dst, const char *s)
{
	(void)snprintf(dst, SCHED_NAME, "%s", s != NULL ? s : "");
}

static int
sched_now_cmp(const void *a, const void *b)
{
	const struct sched_job	*x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

static int
sched_shape_cmp(const void *a, const void *b)
{
	const struct sched_shape	*x = a, *y = b;

	return strcmp(x->key, y->key);
}

static int
sched_str_qsort(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "HH:MM" of T in local time into BUF. */
static void
sched_clock(int64_t t, char *buf, size_t len)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (localtime_r(&tt, &tm) == NULL || strftime(buf, len, "%H:%M",
	    &tm) == 0)
		(void)snprintf(buf, len, "%" PRId64, t);
}

/* The service whose quota a provider's launch draws on. */
static enum gcp_service
sched_quota_service(const struct provider *p)
{
	return strcmp(p->name, "vertex") == 0 ? GCP_SERVICE_VERTEX :
	    GCP_SERVICE_GCE;
}

/* The service whose prices a provider's launch pays. */
static enum gcp_service
sched_price_service(const struct provider *p)
{
	enum gcp_service	svc;

	if (gcp_service_parse(p->name, &svc) != 0)
		return GCP_SERVICE_GCE;
	return svc;
}

/* Is NAME in the list V[0..N)? */
static int
sched_in_list(char *const *v, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

/* Is TOKEN one of the comma-separated items of LIST? */
static int
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

/* ---------------------------------------------------------------- */
/* Shapes and the job cache.					    */

static void
sched_strv_free(char **v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
sched_shape_free(struct sched_shape *sh)
{
	if (sh == NULL)
		return;
	free(sh->key);
	free(sh->machine);
	sched_strv_free(sh->regions, sh->nregions);
	sched_strv_free(sh->providers, sh->nproviders);
	free(sh->offers);
	free(sh->why);
	free(sh->fail_why);
	free(sh->fail_claim_what);
	free(sh);
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

/* "a,b,c" of V into a new string. */
static char *
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

/*
 * The shape of normalized SPEC: found or made, with a reference for
 * the caller. NULL and *why if the spec cannot be run at all.
 */
static struct sched_shape *
sched_shape_get(struct sched *s, json_t *spec, char **why)
{
	struct sched_shape	*sh, key, **found;
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
	if (spot != NULL && strcmp(spot, "never") == 0)
		sh->spot = SCHED_SPOT_NEVER;
	else if (spot != NULL && strcmp(spot, "require") == 0)
		sh->spot = SCHED_SPOT_REQUIRE;
	else
		sh->spot = SCHED_SPOT_ALLOW;
	sh->interval = json_integer_value(json_object_get(json_object_get(
	    spec, "checkpoint"), "interval"));
	sh->regions = sched_strv(json_object_get(spec, "regions"),
	    &sh->nregions);
	sh->providers = sched_strv(json_object_get(spec, "providers"),
	    &sh->nproviders);
	regions = sched_strv_join(sh->regions, sh->nregions);
	providers = sched_strv_join(sh->providers, sh->nproviders);
	sh->key = xprintf("%s|%d|%s|%d|%" PRId64 "|%s|%s", sh->gpu->name,
	    sh->count, sh->machine, sh->spot, sh->interval, regions,
	    providers);
	free(regions);
	free(providers);

	key.key = sh->key;
	found = tfind(&key, &s->shapes, sched_shape_cmp);
	if (found != NULL) {
		sched_shape_free(sh);
		(*found)->refs++;
		return *found;
	}
	if (tsearch(sh, &s->shapes, sched_shape_cmp) == NULL)
		fatalx("sched: out of memory");
	s->nshapes++;
	sh->refs = 1;
	return sh;
}

static void
sched_shape_unref(struct sched *s, struct sched_shape *sh)
{
	if (sh == NULL || --sh->refs > 0)
		return;
	(void)tdelete(sh, &s->shapes, sched_shape_cmp);
	s->nshapes--;
	sched_shape_free(sh);
}

static double
sched_spec_number(json_t *spec, const char *key)
{
	json_t	*v = json_object_get(spec, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

/* The cached job for row J, made on first sight (the spec parsed once). */
static struct sched_job *
sched_job_get(struct sched *s, const struct store_job *row)
{
	struct sched_job	 key, *j, **found;
	json_t			*spec;
	json_error_t		 err;

	key.id = row->id;
	found = tfind(&key, &s->jobs, sched_now_cmp);
	if (found != NULL)
		return *found;
	j = xcalloc(1, sizeof *j);
	j->id = row->id;
	spec = json_loads(row->spec != NULL ? row->spec : "", 0, &err);
	if (spec == NULL)
		j->bad = xprintf("the stored spec is not JSON: %s", err.text);
	else {
		j->shape = sched_shape_get(s, spec, &j->bad);
		j->max_hourly = sched_spec_number(spec, "max_hourly_usd");
		j->max_total = sched_spec_number(spec, "max_total_usd");
		j->hours = sched_spec_number(spec, "estimated_hours");
		if (!(j->hours > 0))
			j->hours = 1;
		json_decref(spec);
	}
	if (tsearch(j, &s->jobs, sched_now_cmp) == NULL)
		fatalx("sched: out of memory");
	TAILQ_INSERT_TAIL(&s->job_list, j, entry);
	s->njobs++;
	return j;
}

static void
sched_job_free(struct sched *s, struct sched_job *j)
{
	(void)tdelete(j, &s->jobs, sched_now_cmp);
	TAILQ_REMOVE(&s->job_list, j, entry);
	s->njobs--;
	sched_shape_unref(s, j->shape);
	free(j->bad);
	free(j);
}

/*
 * Forget jobs not runnable for a while (ended, held): longer than any
 * backoff, so a job waiting out its retry delay keeps its hints. The
 * list is in order of last sight, oldest first.
 */
static void
sched_evict(struct sched *s, int64_t now)
{
	struct sched_job	*j;
	int64_t			 old;

	old = now - SCHED_EVICT_SEC - cloud_conf(s->cloud)->backoff_max;
	while ((j = TAILQ_FIRST(&s->job_list)) != NULL && j->last_seen < old)
		sched_job_free(s, j);
}

static struct sched_job *
sched_job_find(struct sched *s, int64_t id)
{
	struct sched_job	key, **found;

	key.id = id;
	found = tfind(&key, &s->jobs, sched_now_cmp);
	return found != NULL ? *found : NULL;
}

/* ---------------------------------------------------------------- */
/* What a pass reads once: cool-downs, buckets, Spot history.	    */

static int
sched_on_cool(const char *zone, const char *gpu, int spot, int64_t until,
    int strikes, void *arg)
{
	struct sched_ctx	*ctx = arg;
	struct sched_cool	*c;

	if (ctx->ncool == ctx->capcool) {
		ctx->capcool = ctx->capcool ? ctx->capcool * 2 : 16;
		ctx->cool = xreallocarray(ctx->cool, ctx->capcool,
		    sizeof *ctx->cool);
	}
	c = &ctx->cool[ctx->ncool++];
	sched_name(c->zone, zone);
	sched_name(c->gpu, gpu);
	c->spot = spot;
	c->until = until;
	return 0;
}

/* Begin a pass or a plan: read the cool-downs, forget the buckets. */
static void
sched_ctx_begin(struct sched *s, struct sched_ctx *ctx)
{
	char	*cause = NULL;

	ctx->now = time(NULL);
	ctx->nb = 0;
	ctx->ncool = 0;
	ctx->min_cool_until = 0;
	/*
	 * Cool-downs count in whole seconds: one ends with its "until"
	 * second, not when it starts, so it never lasts less than asked.
	 */
	if (store_cooldown_list(s->store, ctx->now - 1, sched_on_cool, ctx,
	    &cause) < 0) {
		log_warnx("scheduler: cannot read stockout cool-downs: %s",
		    cause);
		free(cause);
	}
}

static void
sched_ctx_done(struct sched_ctx *ctx)
{
	free(ctx->b);
	free(ctx->cool);
	memset(ctx, 0, sizeof *ctx);
}

/* Cool-down end of (ZONE, GPU, SPOT), or 0 if none. */
static int64_t
sched_cooled(struct sched_ctx *ctx, const char *zone, const char *gpu,
    int spot)
{
	size_t	i;

	for (i = 0; i < ctx->ncool; i++)
		if (ctx->cool[i].spot == spot &&
		    strcmp(ctx->cool[i].zone, zone) == 0 &&
		    strcmp(ctx->cool[i].gpu, gpu) == 0)
			return ctx->cool[i].until;
	return 0;
}

/* Index of bucket (SVC, REGION, METRIC), added if new. */
static int
sched_bucket(struct sched_ctx *ctx, enum gcp_service svc,
    const char *region, const char *metric)
{
	struct sched_bucket	*b;
	char			 key[256];
	uint64_t		 h;
	size_t			 i;

	(void)snprintf(key, sizeof key, "%d/%s/%s", (int)svc, region,
	    metric);
	h = sched_hash(key);
	for (i = 0; i < ctx->nb; i++) {
		b = &ctx->b[i];
		if (b->hash == h && b->svc == svc &&
		    strcmp(b->region, region) == 0 &&
		    strcmp(b->metric, metric) == 0)
			return (int)i;
	}
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
	return (int)ctx->nb++;
}

/* Bucket I with its free units read (once per pass). */
static struct sched_bucket *
sched_bucket_load(struct sched *s, struct sched_ctx *ctx, int i)
{
	struct sched_bucket	*b = &ctx->b[i];
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	size_t			 it = 0;
	struct quota_row	 row;

	if (b->loaded)
		return b;
	b->loaded = 1;
	b->known = quota_headroom(q, b->svc, b->region, b->metric,
	    &b->free) == 0;
	b->limit = -1;
	if (!b->known)
		return b;
	/* The limit, for "N of M free" in whys: rare, so a walk is fine. */
	while (quota_next(q, &it, &row) == 1)
		if (row.service == b->svc && row.known &&
		    strcmp(row.region, b->region) == 0 &&
		    strcmp(row.metric, b->metric) == 0) {
			b->limit = row.limit;
			break;
		}
	return b;
}

static int
sched_on_history(const char *provider, const char *region, const char *gpu,
    double hours, int interruptions, void *arg)
{
	struct sched		*s = arg;
	struct sched_hist	*h;

	s->hist = xreallocarray(s->hist, s->nhist + 1, sizeof *s->hist);
	h = &s->hist[s->nhist++];
	h->key = xprintf("%s/%s/%s", provider, region, gpu);
	h->hash = sched_hash(h->key);
	h->hours = hours;
	h->interruptions = interruptions;
	return 0;
}

/* Re-read the Spot history when it is old or an attempt has ended. */
static void
sched_history_load(struct sched *s, int64_t now)
{
	char	*cause = NULL;
	size_t	 i;

	if (s->hist_at != 0 && now - s->hist_at < SCHED_HISTORY_SEC)
		return;
	for (i = 0; i < s->nhist; i++)
		free(s->hist[i].key);
	free(s->hist);
	s->hist = NULL;
	s->nhist = 0;
	s->hist_at = now;
	if (store_spot_history(s->store, now - COST_HISTORY_SEC,
	    sched_on_history, s, &cause) < 0) {
		log_warnx("scheduler: cannot read the Spot history: %s; "
		    "using the prior", cause);
		free(cause);
	}
}

/* λ and recent interruptions for (P, REGION, GPU). */
static double
sched_lambda(struct sched *s, const struct provider *p, const char *region,
    const char *gpu, int *ret_recent)
{
	double		 prior = cloud_conf(s->cloud)->preemptions_per_hour;
	char		 key[256];
	uint64_t	 h;
	size_t		 i;

	(void)snprintf(key, sizeof key, "%s/%s/%s", p->name, region, gpu);
	h = sched_hash(key);
	for (i = 0; i < s->nhist; i++)
		if (s->hist[i].hash == h && strcmp(s->hist[i].key, key) == 0) {
			*ret_recent = s->hist[i].interruptions;
			return cost_lambda(s->hist[i].hours,
			    s->hist[i].interruptions, prior);
		}
	*ret_recent = 0;
	return cost_lambda(0, 0, prior);
}

/* ---------------------------------------------------------------- */
/* Offers of a shape.						    */

static struct sched_offer *
sched_offer_add(struct sched_shape *sh, const struct provider *p,
    const char *region, const char *zone, int spot)
{
	struct sched_offer	*o;

	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? sh->cap * 2 : 32;
		sh->offers = xreallocarray(sh->offers, sh->cap,
		    sizeof *sh->offers);
	}
	o = &sh->offers[sh->n];
	memset(o, 0, sizeof *o);
	o->prov = p;
	o->qsvc = sched_quota_service(p);
	o->psvc = sched_price_service(p);
	sched_name(o->region, region);
	sched_name(o->zone, zone);
	o->spot = spot;
	o->order = (int)sh->n;
	o->gpu_b = o->all_b = o->cpu_b = -1;
	sh->n++;
	return o;
}

/* Is provider P allowed by the shape? */
static int
sched_shape_allows(const struct sched_shape *sh, const struct provider *p)
{
	return sh->providers == NULL || sched_in_list(sh->providers,
	    sh->nproviders, p->name);
}

/* Add REGION to the list V (N, CAP) unless it is there. */
static void
sched_region_add(char ***v, size_t *n, size_t *cap, const char *region)
{
	if (sched_in_list(*v, *n, region))
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof **v);
	}
	(*v)[(*n)++] = xstrdup(region);
}

/*
 * The regions a shape may run in: the job's, within [gcp] regions when
 * that is set; with neither, every region whose zones offer the GPU.
 * New list (sched_strv_free). ZONES/NZ: the GPU's zones, all regions.
 */
static char **
sched_shape_regions(struct sched *s, const struct sched_shape *sh,
    const struct quota_zone *zones, int nz, size_t *ret_n)
{
	const struct gcp_conf	*gc = gcp_conf(cloud_gcp(s->cloud));
	char			**v = NULL;
	size_t			  n = 0, cap = 0, i;
	int			  k;

	if (sh->regions != NULL) {
		for (i = 0; i < sh->nregions; i++)
			if (gcp_conf_has_region(gc, sh->regions[i]))
				sched_region_add(&v, &n, &cap, sh->regions[i]);
	} else if (gc->nregions > 0) {
		for (i = 0; i < gc->nregions; i++)
			sched_region_add(&v, &n, &cap, gc->regions[i]);
	} else {
		for (k = 0; k < nz; k++)
			sched_region_add(&v, &n, &cap, zones[k].region);
		if (n > 1)
			qsort(v, n, sizeof *v, sched_str_qsort);
	}
	*ret_n = n;
	return v;
}

/* Fill O's price, λ and expected cost per hour of work; reason if none. */
static void
sched_offer_price(struct sched *s, struct sched_shape *sh,
    struct sched_offer *o)
{
	struct price		*pr = gcp_price(cloud_gcp(s->cloud));
	const struct conf	*conf = cloud_conf(s->cloud);
	double			 gpu, host;

	if (price_gpu_hourly(pr, o->psvc, o->region, sh->gpu->name, sh->count,
	    o->spot, &gpu) != 0 ||
	    price_host_hourly(pr, o->psvc, o->region, sh->machine, o->spot,
	    &host) != 0) {
		o->reason = SCHED_X_NO_PRICE;
		return;
	}
	o->hourly = gpu + host;
	o->lambda = o->spot ? sched_lambda(s, o->prov, o->region,
	    sh->gpu->name, &o->recent) : 0;
	o->per_hour = cost_expected(o->hourly, 1.0, o->spot, o->lambda,
	    sh->interval, conf->restart_overhead);
}

/* Give O its quota buckets: GPU, GPUS_ALL_REGIONS and vCPUs. */
static int
sched_offer_buckets(struct sched *s, struct sched_ctx *ctx,
    struct sched_shape *sh, struct sched_offer *o)
{
	struct quota	*q = gcp_quota(cloud_gcp(s->cloud));
	char		 buf[QUOTA_METRIC_MAX];

	if (quota_gpu_metric(q, o->qsvc, o->region, sh->gpu->name, o->spot,
	    buf) == NULL)
		return -1;
	o->gpu_b = sched_bucket(ctx, o->qsvc, o->region, buf);
	if (o->qsvc != GCP_SERVICE_GCE)
		return 0;
	o->all_b = sched_bucket(ctx, GCP_SERVICE_GCE, QUOTA_GLOBAL,
	    "GPUS_ALL_REGIONS");
	if (sh->vcpus > 0) {
		(void)quota_cpu_metric(q, o->region, sh->machine, o->spot, buf);
		o->cpu_b = sched_bucket(ctx, GCP_SERVICE_GCE, o->region, buf);
	}
	return 0;
}

static int
sched_offer_qsort(const void *a, const void *b)
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
	rx.expected_usd = x->per_hour;
	rx.interruptions = x->recent;
	rx.order = x->order;
	ry.expected_usd = y->per_hour;
	ry.interruptions = y->recent;
	ry.order = y->order;
	return cost_rank_cmp(&rx, &ry);
}

/* "us-central1, europe-west4" (at most SCHED_LIST_MAX, then "and N
 * more") of the distinct regions of SH's offers with REASON. New. */
static char *
sched_offer_regions(const struct sched_shape *sh, size_t from, size_t to,
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
sched_shape_why(struct sched *s, struct sched_shape *sh)
{
	char		*where, when[16], *why;
	const char	*kind;
	int		 reason;
	int64_t		 until = 0;
	size_t		 i;

	reason = sh->n > 0 ? sh->offers[0].reason : SCHED_X_NOT_OFFERED;
	where = sched_offer_regions(sh, 0, sh->n, reason);
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
	default:
		why = xprintf("%d\xc3\x97%s %sis not offered in %s", sh->count,
		    sh->gpu->name, kind, *where ? where : "any allowed region");
		break;
	}
	free(where);
	return why;
}

/*
 * Build SH's offers for this pass: enumerate, set aside, price, rank.
 * CTX holds the pass's cool-downs and buckets.
 */
static void
sched_shape_build(struct sched *s, struct sched_ctx *ctx,
    struct sched_shape *sh)
{
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	const struct provider	*p;
	struct sched_offer	*o;
	struct quota_zone	*z = s->zones;
	char			**regions, *names;
	size_t			 nregions, pi, ri, np = 0;
	int			 nz, zi, spot, inreg, spots[2], nspots, si;
	int64_t			 until, min_until;

	sh->gen = s->gen;
	sh->n = sh->nok = 0;
	free(sh->why);
	sh->why = NULL;
	sh->min_hourly = sh->min_per_hour = 0;

	for (pi = 0; pi < cloud_nproviders(s->cloud); pi++)
		if (sched_shape_allows(sh, cloud_provider_at(s->cloud, pi)))
			np++;
	if (np == 0) {
		names = sched_strv_join(sh->providers, sh->nproviders);
		sh->why = xprintf("no allowed provider: the job asks for %s, "
		    "gpuqd.conf enables %s", names, cloud_nproviders(s->cloud)
		    > 0 ? "others" : "none");
		free(names);
		return;
	}
	nz = quota_zones(q, NULL, sh->gpu->name, z, SCHED_MAX_ZONES);
	if (nz < 0) {
		sh->why = xprintf("waiting for the zones and quotas of "
		    "Compute Engine%s%s", s->quota_error ? ": " : "",
		    s->quota_error ? s->quota_error : "");
		return;
	}
	regions = sched_shape_regions(s, sh, z, nz, &nregions);
	if (nregions == 0) {
		names = sched_strv_join(sh->regions, sh->nregions);
		sh->why = sh->regions != NULL ? xprintf("no allowed region: "
		    "the job asks for %s, which gpuqd.conf [gcp] regions "
		    "leaves out", names) : xprintf("%d\xc3\x97%s is not "
		    "offered in any region", sh->count, sh->gpu->name);
		free(names);
		free(regions);
		return;
	}
	nspots = 0;
	if (sh->spot != SCHED_SPOT_REQUIRE)
		spots[nspots++] = 0;
	if (sh->spot != SCHED_SPOT_NEVER)
		spots[nspots++] = 1;

	for (pi = 0; pi < cloud_nproviders(s->cloud); pi++) {
		p = cloud_provider_at(s->cloud, pi);
		if (!sched_shape_allows(sh, p))
			continue;
		for (ri = 0; ri < nregions; ri++) {
			for (si = 0; si < nspots; si++) {
				spot = spots[si];
				inreg = 0;
				min_until = 0;
				for (zi = 0; zi < nz; zi++) {
					if (strcmp(z[zi].region,
					    regions[ri]) != 0)
						continue;
					if (z[zi].max_per_vm < sh->count ||
					    !z[zi].up)
						continue;
					inreg++;
					until = sched_cooled(ctx, z[zi].zone,
					    sh->gpu->name, spot);
					if (p->picks_zone) {
						if (until == 0)
							min_until = -1;
						else if (min_until >= 0 &&
						    (min_until == 0 ||
						    until < min_until))
							min_until = until;
						continue;
					}
					o = sched_offer_add(sh, p, regions[ri],
					    z[zi].zone, spot);
					if (until != 0) {
						o->reason = SCHED_X_COOLDOWN;
						o->until = until;
					}
				}
				if (p->picks_zone || inreg == 0) {
					o = sched_offer_add(sh, p, regions[ri],
					    NULL, spot);
					if (inreg == 0)
						o->reason =
						    SCHED_X_NOT_OFFERED;
					else if (min_until > 0) {
						o->reason = SCHED_X_COOLDOWN;
						o->until = min_until;
					}
				}
			}
		}
	}
	sched_strv_free(regions, nregions);

	/* Quota metric, then price, for what is still in. */
	for (ri = 0; ri < sh->n; ri++) {
		o = &sh->offers[ri];
		if (o->reason != SCHED_OK && o->reason != SCHED_X_COOLDOWN)
			continue;
		if (sched_offer_buckets(s, ctx, sh, o) != 0) {
			o->reason = SCHED_X_NO_METRIC;
			continue;
		}
		if (o->reason == SCHED_OK)
			sched_offer_price(s, sh, o);
	}
	qsort(sh->offers, sh->n, sizeof *sh->offers, sched_offer_qsort);
	for (ri = 0; ri < sh->n && sh->offers[ri].reason == SCHED_OK; ri++) {
		o = &sh->offers[ri];
		if (ri == 0 || o->hourly < sh->min_hourly)
			sh->min_hourly = o->hourly;
		if (ri == 0 || o->per_hour < sh->min_per_hour)
			sh->min_per_hour = o->per_hour;
	}
	sh->nok = ri;
	if (sh->nok == 0)
		sh->why = sched_shape_why(s, sh);
}

/* ---------------------------------------------------------------- */
/* Placing one job.						    */

/* What placing one job found. */
struct sched_verdict {
	struct sched_offer	*offer;		/* chosen, or NULL */
	int			 reason;	/* furthest reason seen */
	char			*why;		/* new, when offer is NULL */
	int			 quota;		/* blocked by quota/claims */
	int64_t			 claim_id;	/* holder of a claimed bucket */
	int			 claim_prio;
	char			*claim_what;	/* "NVIDIA_T4_GPUS in ..." */
};

static void
sched_verdict_done(struct sched_verdict *v)
{
	free(v->why);
	free(v->claim_what);
	memset(v, 0, sizeof *v);
}

/* Does job J avoid (P, REGION) now? */
static int
sched_avoids(struct sched_job *j, const struct sched_offer *o, int64_t now)
{
	int	i;

	for (i = 0; i < SCHED_AVOID; i++)
		if (j->avoid[i].until > now && j->avoid[i].prov == o->prov &&
		    strcmp(j->avoid[i].region, o->region) == 0)
			return 1;
	return 0;
}

static void
sched_avoid(struct sched_job *j, const struct provider *p,
    const char *region, int64_t until)
{
	int	i, k = 0;

	for (i = 0; i < SCHED_AVOID; i++) {
		if (j->avoid[i].prov == p &&
		    strcmp(j->avoid[i].region, region) == 0) {
			k = i;
			break;
		}
		if (j->avoid[i].until < j->avoid[k].until)
			k = i;
	}
	j->avoid[k].prov = p;
	sched_name(j->avoid[k].region, region);
	j->avoid[k].until = until;
}

/* Is bucket B claimed against job J of priority PRIO? */
static int
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
sched_offer_quota(struct sched *s, struct sched_ctx *ctx,
    const struct sched_offer *o, int count, int vcpus, int *ret_b)
{
	struct sched_bucket	*b;

	b = sched_bucket_load(s, ctx, o->gpu_b);
	if (b->known && b->free < count) {
		*ret_b = o->gpu_b;
		return SCHED_X_QUOTA;
	}
	if (o->all_b >= 0) {
		b = sched_bucket_load(s, ctx, o->all_b);
		if (b->known && b->free < count) {
			*ret_b = o->all_b;
			return SCHED_X_QUOTA_ALL;
		}
	}
	if (o->cpu_b >= 0 && vcpus > 0) {
		b = sched_bucket_load(s, ctx, o->cpu_b);
		if (b->known && b->free < vcpus) {
			*ret_b = o->cpu_b;
			return SCHED_X_QUOTA_CPU;
		}
	}
	return SCHED_OK;
}

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
 * the regions, and the most free units of those buckets.
 */
static char *
sched_why_quota(struct sched *s, struct sched_ctx *ctx,
    const struct sched_shape *sh, int reason, const int *fb, size_t nfb)
{
	struct sched_bucket	*b;
	char			*where = xstrdup(""), *t, *why;
	char			*metrics = xstrdup("");
	double			 best = -1;
	size_t			 i, n = 0, nm = 0;

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
	if (reason == SCHED_X_QUOTA_CPU)
		why = xprintf("no free CPU quota for %s (%d vCPUs) in %s "
		    "(%.0f free)", sh->machine, sh->vcpus, where, floor(best));
	else if (reason == SCHED_X_QUOTA_ALL)
		why = xprintf("no free quota for %d\xc3\x97%s: "
		    "GPUS_ALL_REGIONS has %.0f of %d free", sh->count,
		    sh->gpu->name, floor(best), sh->count);
	else
		why = xprintf("no free quota for %d\xc3\x97%s in %s (%.0f of "
		    "%d free; quota %s)", sh->count, sh->gpu->name, where,
		    floor(best), sh->count, metrics);
	free(metrics);
	free(where);
	return why;
}

/*
 * Place job J (priority PRIO) on its shape's offers: the first, in
 * rank order (zones a stockout named first), within J's limits, whose
 * buckets have room and are not claimed against it. Fills V.
 */
static void
sched_place(struct sched *s, struct sched_ctx *ctx, struct sched_job *j,
    int prio, struct sched_verdict *v)
{
	struct sched_shape	*sh = j->shape;
	struct sched_offer	*o;
	struct sched_bucket	*b;
	int			 fb[64], reason, bi, round, rounds;
	size_t			 i, nfb = 0, k;

	memset(v, 0, sizeof *v);
	v->reason = SCHED_OK;
	if (sh->nok == 0) {
		v->why = xstrdup(sh->why != NULL ? sh->why :
		    "no offer for this job");
		return;
	}
	rounds = j->prefer_until > ctx->now && j->prefer[0] != '\0' ? 2 : 1;
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < sh->nok; i++) {
			o = &sh->offers[i];
			if (rounds == 2 && round == 0 &&
			    !sched_in_csv(j->prefer, o->zone))
				continue;
			reason = SCHED_OK;
			if (j->max_hourly > 0 && o->hourly > j->max_hourly +
			    1e-9)
				reason = SCHED_X_HOURLY;
			else if (j->max_total > 0 && o->per_hour * j->hours >
			    j->max_total + 1e-9)
				reason = SCHED_X_TOTAL;
			else if (sched_avoids(j, o, ctx->now))
				reason = SCHED_X_AVOID;
			else if ((reason = sched_offer_quota(s, ctx, o,
			    sh->count, sh->vcpus, &bi)) != SCHED_OK) {
				for (k = 0; k < nfb && fb[k] != bi; k++)
					;
				if (k == nfb && nfb < sizeof fb / sizeof fb[0])
					fb[nfb++] = bi;
			} else {
				b = &ctx->b[o->gpu_b];
				bi = o->gpu_b;
				if (!sched_claimed(b, j->id, prio, ctx->now) &&
				    (o->all_b < 0 || !sched_claimed(
				    &ctx->b[bi = o->all_b], j->id, prio,
				    ctx->now)) && (o->cpu_b < 0 ||
				    !sched_claimed(&ctx->b[bi = o->cpu_b],
				    j->id, prio, ctx->now))) {
					v->offer = o;
					return;
				}
				reason = SCHED_X_CLAIMED;
				b = &ctx->b[bi];
				if (v->claim_id == 0) {
					v->claim_id = b->claim_id;
					v->claim_prio = b->claim_prio;
					v->claim_what = xprintf("quota %s in "
					    "%s", b->metric, b->region);
				}
			}
			if (reason > v->reason) {
				v->reason = reason;
			}
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
		v->why = sched_why_quota(s, ctx, sh, v->reason, fb, nfb);
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
/* Launching.							    */

/* Queue WHY for job ID if it differs from the stored one (HASH). */
static void
sched_why_set(struct sched *s, int64_t id, uint64_t hash, const char *why)
{
	if (sched_hash(why) == hash)
		return;
	if (s->nwhy == s->capwhy) {
		s->capwhy = s->capwhy ? s->capwhy * 2 : 64;
		s->why_ids = xreallocarray(s->why_ids, s->capwhy,
		    sizeof *s->why_ids);
		s->why_texts = xreallocarray(s->why_texts, s->capwhy,
		    sizeof *s->why_texts);
	}
	s->why_ids[s->nwhy] = id;
	s->why_texts[s->nwhy++] = why != NULL ? xstrdup(why) : NULL;
}

/* Write the queued whys in one transaction. */
static void
sched_why_flush(struct sched *s)
{
	char	*cause = NULL;
	size_t	 i;
	int	 rc;

	s->stats.why_writes = s->nwhy;
	if (s->nwhy == 0)
		return;
	rc = store_jobs_set_why(s->store, s->why_ids,
	    (const char *const *)s->why_texts, s->nwhy, &cause);
	if (rc < 0) {
		log_warnx("scheduler: cannot record why %zu job(s) wait: %s",
		    s->nwhy, cause);
		free(cause);
	}
	for (i = 0; i < s->nwhy; i++)
		free(s->why_texts[i]);
	s->nwhy = 0;
}

/* "gce/us-central1-a" or "vertex/us-central1" of attempt A. */
static char *
sched_place_text(const struct store_attempt *a)
{
	return xprintf("%s/%s", a->provider, a->zone != NULL ? a->zone :
	    a->region);
}

/*
 * Launch offer O for runnable item IT: reserve its quota and hand the
 * attempt to attempt.c, which commits it, calls the provider and deals
 * with the answer. 0 if a launch is under way, -1 if the job could not
 * even be written down.
 */
static int
sched_launch_start(struct sched *s, struct sched_ctx *ctx,
    struct sched_item *it, struct sched_offer *o)
{
	struct sched_job	*j = it->job;
	struct sched_shape	*sh = j->shape;
	struct quota		*q = gcp_quota(cloud_gcp(s->cloud));
	struct store_job	*row = NULL;
	struct store_attempt	 a;
	struct attempt_hold	 hold;
	char			 name[CLOUD_NAME_MAX], *cause = NULL, *msg;
	char			*place;
	json_t			*spec;
	int			 number, rc, k, b[3];

	if (s->att == NULL)
		return -1;
	if ((rc = store_job_get(s->store, j->id, &row, &cause)) < 0) {
		log_warnx("job %" PRId64 ": cannot read it to launch: %s",
		    j->id, cause);
		free(cause);
		return -1;
	}
	spec = json_loads(row->spec, 0, NULL);
	if (spec == NULL || row->state != JOB_QUEUED) {
		json_decref(spec);
		store_job_free(row);
		return -1;
	}
	number = row->attempts + 1;
	cloud_resource_name(cloud_install(s->cloud), j->id, number, name);
	memset(&a, 0, sizeof a);
	a.job_id = j->id;
	a.provider = (char *)o->prov->name;
	a.region = o->region;
	a.zone = o->zone[0] != '\0' ? o->zone : NULL;
	a.machine_type = sh->machine;
	a.gpu = (char *)sh->gpu->name;
	a.gpu_count = sh->count;
	a.resource = name;
	a.spot = o->spot;
	a.hourly_usd = o->hourly;
	a.exit_code = -1;
	if (number > 1 && row->checkpoint != NULL && *row->checkpoint != '\0')
		a.resumed_from = row->checkpoint;

	memset(&hold, 0, sizeof hold);
	hold.svc = o->qsvc;
	hold.metric = ctx->b[o->gpu_b].metric;
	if (o->cpu_b >= 0 && sh->vcpus > 0) {
		hold.cpu_metric = ctx->b[o->cpu_b].metric;
		hold.vcpus = sh->vcpus;
	}
	quota_reserve(q, hold.svc, a.region, hold.metric, a.gpu_count);
	if (hold.cpu_metric != NULL)
		quota_reserve(q, GCP_SERVICE_GCE, a.region, hold.cpu_metric,
		    hold.vcpus);
	/* The pass's own view of the buckets, if already read. */
	b[0] = o->gpu_b;
	b[1] = o->all_b;
	b[2] = hold.cpu_metric != NULL ? o->cpu_b : -1;
	for (k = 0; k < 3; k++)
		if (b[k] >= 0 && ctx->b[b[k]].loaded)
			ctx->b[b[k]].free -= k == 2 ? sh->vcpus : sh->count;

	place = sched_place_text(&a);
	msg = xprintf("launching on %s %s $%.2f/h", place, a.spot ? "spot" :
	    "standard", a.hourly_usd);
	s->why_said = 0;
	rc = attempt_launch(s->att, &a, number, row, spec, &hold, msg,
	    &cause);
	free(msg);
	if (rc < 0) {
		/* Nothing written; the hold is given back. */
		log_warnx("job %" PRId64 ": not launching attempt %d: %s",
		    j->id, number, cause);
		free(cause);
		free(place);
		for (k = 0; k < 3; k++)
			if (b[k] >= 0 && ctx->b[b[k]].loaded)
				ctx->b[b[k]].free += k == 2 ? sh->vcpus :
				    sh->count;
		json_decref(spec);
		store_job_free(row);
		return -1;
	}
	/* Its why goes, unless the answer came at once and gave one. */
	if (s->why_said != j->id)
		sched_why_set(s, j->id, it->why_hash, NULL);
	log_info("job %" PRId64 ": launching attempt %d on %s%s, $%.2f/h, "
	    "expected $%.2f", j->id, number, place, a.spot ? " (Spot)" : "",
	    a.hourly_usd, o->per_hour * j->hours);
	free(place);
	s->stats.launches++;
	json_decref(spec);
	store_job_free(row);
	return 0;
}

/* ---------------------------------------------------------------- */
/* What attempt.c tells the scheduler (struct attempt_listener).     */

static void
sched_on_wake(void *arg)
{
	sched_wake(arg);
}

static void
sched_on_wake_at(void *arg, int64_t when)
{
	sched_wake_at(arg, when);
}

static void
sched_on_history_changed(void *arg)
{
	sched_history_changed(arg);
}

/* A launch of job ID was accepted: its launch memory goes. */
static void
sched_on_launched(void *arg, int64_t id)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j != NULL) {
		j->launch_errors = 0;
		j->prefer[0] = '\0';
		j->blocked_since = 0;
	}
}

static int
sched_on_launch_failed(void *arg, int64_t id, int in_a_row)
{
	struct sched		*s = arg;
	struct sched_job	*j = sched_job_find(s, id);
	int			 n;

	s->stats.launch_errors++;
	if (j == NULL)
		return 0;
	n = j->launch_errors;
	if (in_a_row)
		j->launch_errors++;
	return n;
}

static void
sched_on_avoid(void *arg, int64_t id, const struct provider *p,
    const char *region, int64_t until)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j != NULL && p != NULL)
		sched_avoid(j, p, region, until);
}

static void
sched_on_prefer(void *arg, int64_t id, const char *zones, int64_t until)
{
	struct sched_job	*j = sched_job_find(arg, id);

	if (j == NULL)
		return;
	(void)snprintf(j->prefer, sizeof j->prefer, "%s", zones);
	j->prefer_until = until;
}

/* A requeue wrote job ID's why; a pass under way must not undo it. */
static void
sched_on_why(void *arg, int64_t id, const char *why)
{
	struct sched	*s = arg;

	if (!s->in_pass)
		return;
	s->why_said = id;
	sched_why_set(s, id, sched_hash(why) ^ 1, why);
}

/* ---------------------------------------------------------------- */
/* The pass.							    */

static int
sched_on_runnable(const struct store_job *row, void *arg)
{
	struct sched		*s = arg;
	struct sched_item	*it;
	struct sched_job	*j;

	if (s->nitems == s->capitems) {
		s->capitems = s->capitems ? s->capitems * 2 : 256;
		s->items = xreallocarray(s->items, s->capitems,
		    sizeof *s->items);
	}
	j = sched_job_get(s, row);
	j->last_seen = s->ctx.now;
	TAILQ_REMOVE(&s->job_list, j, entry);
	TAILQ_INSERT_TAIL(&s->job_list, j, entry);
	it = &s->items[s->nitems++];
	it->job = j;
	it->priority = row->priority;
	it->why_hash = sched_hash(row->why);
	it->cost_usd = row->cost_usd;
	return 0;
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

/*
 * The same shape, with the same limits, already found nothing in this
 * pass: quota only shrinks during a pass and claims only grow, so this
 * job finds nothing too. Its why, or NULL to place it the long way.
 */
static char *
sched_fast_why(struct sched *s, struct sched_item *it)
{
	struct sched_job	*j = it->job;
	struct sched_shape	*sh = j->shape;

	if (sh->fail_gen != s->gen || sched_job_hinted(j, s->ctx.now) ||
	    sh->fail_hourly != j->max_hourly || sh->fail_total !=
	    j->max_total || sh->fail_hours != j->hours)
		return NULL;
	if (sh->fail_quota && sh->fail_claim_id != 0 &&
	    sh->fail_claim_id != j->id && sh->fail_claim_prio > it->priority)
		return xprintf("waiting for higher-priority job %" PRId64
		    " (%s)", sh->fail_claim_id, sh->fail_claim_what);
	return xstrdup(sh->fail_why);
}

/* Remember job IT's failure V for the rest of its shape this pass. */
static void
sched_fail_note(struct sched *s, struct sched_item *it,
    struct sched_verdict *v)
{
	struct sched_job	*j = it->job;
	struct sched_shape	*sh = j->shape;

	if (sh->fail_gen == s->gen || sched_job_hinted(j, s->ctx.now))
		return;
	sh->fail_gen = s->gen;
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
}

/* After a pass: when the next one is due, in seconds from now; -1 none. */
static int64_t
sched_next_due(struct sched *s, size_t waiting)
{
	const struct conf	*conf = cloud_conf(s->cloud);
	int64_t			 now = s->ctx.now, due = -1, t, counts[JOB_NSTATES];
	size_t			 i;

#define SCHED_DUE(x)	do { if (due < 0 || (x) < due) due = (x); } while (0)
	if (s->wake_at != 0 && s->wake_at <= now)
		s->wake_at = 0;
	if (s->wake_at != 0)
		SCHED_DUE(s->wake_at - now);
	if (waiting > 0) {
		SCHED_DUE(conf->quota_ttl > 0 ? conf->quota_ttl : 60);
		for (i = 0; i < s->ctx.ncool; i++) {
			t = s->ctx.cool[i].until + 1 - now;
			if (t > 0)
				SCHED_DUE(t);
		}
	}
	/* Jobs in backoff this daemon did not put there (a restart). */
	if (store_job_counts(s->store, counts, NULL) == 0 &&
	    (size_t)counts[JOB_QUEUED] > s->nitems)
		SCHED_DUE(SCHED_IDLE_SEC);
#undef SCHED_DUE
	return due;
}

/*
 * How long a pass woken by events waits after the last one: a multiple
 * of that pass's length, so a storm of submits over a long queue costs
 * at most a fifth of the loop, and nothing for a short queue.
 */
static int64_t
sched_gap(struct sched *s)
{
	uint64_t	now = uv_now(cloud_loop(s->cloud)), at;
	double		gap = s->stats.pass_ms * SCHED_GAP_FACTOR;

	if (gap > SCHED_GAP_MAX_MS)
		gap = SCHED_GAP_MAX_MS;
	at = s->last_end + (uint64_t)gap;
	return at > now ? (int64_t)(at - now) : 0;
}

/* Is a pass waiting for a quota refresh, and still willing to? */
static int
sched_waiting(struct sched *s)
{
	return (s->waiting_quota || s->waiting_price) &&
	    uv_now(cloud_loop(s->cloud)) < s->quota_wait_end;
}

/* The synchronous part of a pass, once quotas are fresh enough. */
static void
sched_pass_run(struct sched *s)
{
	struct sched_ctx	*ctx = &s->ctx;
	struct sched_item	*it;
	struct sched_job	*j;
	struct sched_verdict	 v;
	char			*cause = NULL, *why;
	uint64_t		 t0 = uv_hrtime();
	size_t			 i, waiting = 0, shapes = 0;
	int			 burst = SCHED_LAUNCH_BURST;
	int64_t			 due;

	s->in_pass = 1;
	s->again = 0;
	s->gen++;
	s->quota_stamp = quota_fetched_at(gcp_quota(cloud_gcp(s->cloud)));
	sched_ctx_begin(s, ctx);
	sched_history_load(s, ctx->now);
	s->nitems = 0;
	if (store_job_list_runnable(s->store, ctx->now, sched_on_runnable, s,
	    &cause) < 0) {
		log_warnx("scheduler: cannot list the queue: %s", cause);
		free(cause);
	}
	for (i = 0; i < s->nitems; i++) {
		it = &s->items[i];
		j = it->job;
		if (j->shape == NULL) {
			sched_why_set(s, j->id, it->why_hash, j->bad);
			continue;
		}
		if (j->shape->gen != s->gen) {
			sched_shape_build(s, ctx, j->shape);
			shapes++;
		}
		if ((why = sched_fast_why(s, it)) != NULL) {
			sched_why_set(s, j->id, it->why_hash, why);
			free(why);
			waiting++;
			continue;
		}
		if (burst == 0) {
			s->again = 1;
			break;
		}
		sched_place(s, ctx, j, it->priority, &v);
		if (v.offer != NULL) {
			if (sched_launch_start(s, ctx, it, v.offer) == 0)
				burst--;
		} else {
			sched_why_set(s, j->id, it->why_hash, v.why);
			sched_fail_note(s, it, &v);
			waiting++;
		}
		sched_verdict_done(&v);
	}
	sched_why_flush(s);
	sched_evict(s, ctx->now);
	s->in_pass = 0;

	s->stats.passes++;
	s->stats.jobs_seen = s->nitems;
	s->stats.shapes = shapes;
	s->stats.pass_ms = (double)(uv_hrtime() - t0) / 1e6;
	if (s->stats.pass_ms > s->stats.max_pass_ms)
		s->stats.max_pass_ms = s->stats.pass_ms;
	log_debug("scheduler: pass %u: %zu runnable, %zu shape(s), %zu "
	    "waiting, %.1f ms", s->gen, s->nitems, shapes, waiting,
	    s->stats.pass_ms);

	s->last_end = uv_now(cloud_loop(s->cloud));
	if (s->again) {
		s->again = 0;
		sched_arm(s, sched_gap(s));
		return;
	}
	if ((due = sched_next_due(s, waiting)) >= 0)
		sched_arm(s, due * 1000);
}

static void
sched_on_quota(int error, const char *cause, void *arg)
{
	struct sched	*s = arg;

	s->waiting_quota = 0;
	if (!s->closing) {
		free(s->quota_error);
		s->quota_error = error < 0 ? xstrdup(cause != NULL ? cause :
		    strerror(-error)) : NULL;
		if (error < 0) {
			log_warnx("scheduler: quota refresh failed: %s; using "
			    "what is known", s->quota_error);
			s->quota_retry_at = time(NULL) + SCHED_QUOTA_BACKOFF;
		}
		(void)uv_timer_stop(&s->timer);	/* the wait's deadline */
		sched_pass_run(s);
	}
	sched_unref(s);
}

/* Quotas were refreshed (by anyone): placements may have changed. */
static void
sched_on_quota_listener(void *arg)
{
	struct sched	*s = arg;

	if (!s->waiting_quota && !s->in_pass && quota_fetched_at(gcp_quota(
	    cloud_gcp(s->cloud))) != s->quota_stamp)
		sched_wake(s);
}

/* The first catalog read ended (or failed: the bundled table stays). */
static void
sched_on_price(int error, const char *cause, void *arg)
{
	struct sched	*s = arg;

	s->waiting_price = 0;
	if (!s->closing) {
		if (error < 0)
			log_warnx("scheduler: cannot read the Cloud Billing "
			    "catalog: %s; pricing from the bundled table",
			    cause != NULL ? cause : strerror(-error));
		if (!s->price_checked) {
			s->price_checked = 1;
			(void)uv_timer_stop(&s->timer);
			sched_pass(s);
		} else
			sched_wake(s);
	}
	sched_unref(s);
}

static void
sched_pass(struct sched *s)
{
	struct quota	*q = gcp_quota(cloud_gcp(s->cloud));
	struct price	*pr = gcp_price(cloud_gcp(s->cloud));
	int		 rc;

	if (s->closing || !s->started || !s->ready || sched_waiting(s))
		return;
	/*
	 * The first pass prices with the catalog, not the bundled table,
	 * unless reading it takes longer than the wait allows.
	 */
	if (!s->price_checked) {
		if (s->waiting_price || price_fetched_at(pr) != 0)
			s->price_checked = 1;
		else if (price_refresh(pr, sched_on_price, s) == 0) {
			s->waiting_price = 1;
			s->quota_wait_end = uv_now(cloud_loop(s->cloud)) +
			    SCHED_QUOTA_WAIT_MS;
			s->refs++;
			sched_arm(s, SCHED_QUOTA_WAIT_MS);
			return;
		} else
			s->price_checked = 1;
	}
	if (s->waiting_quota) {
		/* The refresh is slow (request budget, a sick API): go on
		 * with what is known; its end wakes another pass. */
		log_debug("scheduler: quota refresh still running; passing "
		    "on older readings");
		sched_pass_run(s);
		return;
	}
	if (time(NULL) < s->quota_retry_at) {
		sched_pass_run(s);
		return;
	}
	rc = quota_refresh(q, 0, sched_on_quota, s);
	if (rc == 0) {
		s->waiting_quota = 1;
		s->quota_wait_end = uv_now(cloud_loop(s->cloud)) +
		    SCHED_QUOTA_WAIT_MS;
		s->refs++;
		sched_arm(s, SCHED_QUOTA_WAIT_MS);
		return;
	}
	if (rc < 0) {
		free(s->quota_error);
		s->quota_error = xprintf("cannot read quotas: %s",
		    rc == -EINVAL ? "no [gcp] project" : strerror(-rc));
	}
	sched_pass_run(s);
}

static void
sched_on_timer(uv_timer_t *t)
{
	sched_pass(t->data);
}

/* Run a pass in DELAY_MS unless one is due sooner. */
static void
sched_arm(struct sched *s, int64_t delay_ms)
{
	uint64_t	now = uv_now(cloud_loop(s->cloud));
	int64_t		target;

	if (s->closing || !s->started)
		return;
	if (delay_ms < 0)
		delay_ms = 0;
	target = (int64_t)now + delay_ms;
	if (uv_is_active((uv_handle_t *)&s->timer) && s->due <= target)
		return;
	s->due = target;
	(void)uv_timer_start(&s->timer, sched_on_timer, (uint64_t)delay_ms, 0);
}

void
sched_wake(struct sched *s)
{
	if (s->closing)
		return;
	if (s->in_pass || sched_waiting(s)) {
		s->again = 1;
		return;
	}
	sched_arm(s, sched_gap(s));
}

void
sched_wake_at(struct sched *s, int64_t when)
{
	int64_t	now = time(NULL);

	if (s->closing)
		return;
	if (when <= now) {
		sched_wake(s);
		return;
	}
	if (s->wake_at == 0 || when < s->wake_at)
		s->wake_at = when;
	if (!s->in_pass)
		sched_arm(s, (when - now) * 1000);
}

void
sched_history_changed(struct sched *s)
{
	s->hist_at = 0;
}

void
sched_ready(struct sched *s)
{
	if (s->ready)
		return;
	s->ready = 1;
	log_info("scheduler: the cloud is reconciled; launching may begin");
	sched_wake(s);
}

/* ---------------------------------------------------------------- */
/* Plan.							    */

/* Why offer O is set aside for a job of shape SH, in words. New. */
static char *
sched_reason_text(struct sched_ctx *ctx, const struct sched_shape *sh,
    const struct sched_job *j, const struct sched_offer *o, int reason,
    int bi)
{
	const struct sched_bucket	*b = bi >= 0 ? &ctx->b[bi] : NULL;
	char				 when[16];

	switch (reason) {
	case SCHED_X_NOT_OFFERED:
		return xprintf("%d\xc3\x97%s is not offered in %s", sh->count,
		    sh->gpu->name, o->region);
	case SCHED_X_NO_METRIC:
		return xprintf("no %s quota exists for %s on %s",
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
	case SCHED_X_QUOTA_ALL:
		return xprintf("no free quota: %s in %s has %.0f of %d free",
		    b->metric, b->region, floor(b->free > 0 ? b->free : 0),
		    sh->count);
	case SCHED_X_QUOTA_CPU:
		return xprintf("no free CPU quota: %s in %s has %.0f of %d "
		    "free", b->metric, b->region, floor(b->free > 0 ? b->free :
		    0), sh->vcpus);
	}
	return xstrdup("not usable");
}

static json_t *
sched_offer_json(const struct sched_offer *o, const struct sched_shape *sh)
{
	json_t	*v;

	v = json_pack("{s:s, s:s, s:s?, s:b, s:s}", "provider", o->prov->name,
	    "region", o->region, "zone", o->zone[0] ? o->zone : NULL,
	    "spot", o->spot, "machine_type", sh->machine);
	if (v == NULL)
		fatalx("scheduler: out of memory building a plan");
	return v;
}

json_t *
sched_plan(struct sched *s, json_t *spec)
{
	struct sched_ctx	 ctx;
	struct sched_shape	*sh;
	struct sched_job	 j;
	struct sched_verdict	 v;
	struct sched_offer	*o;
	json_t			*plan, *offers, *excluded, *e;
	char			*why = NULL, *text;
	size_t			 i;
	int			 reason, bi, rank = 0, prio;

	plan = json_object();
	offers = json_array();
	excluded = json_array();
	if (plan == NULL || offers == NULL || excluded == NULL)
		fatalx("scheduler: out of memory building a plan");
	(void)json_object_set_new(plan, "offers", offers);
	(void)json_object_set_new(plan, "excluded", excluded);

	memset(&j, 0, sizeof j);
	sh = sched_shape_get(s, spec, &why);
	if (sh == NULL) {
		(void)json_object_set_new(plan, "why", json_string(why));
		free(why);
		return plan;
	}
	j.shape = sh;
	j.id = -1;
	j.max_hourly = sched_spec_number(spec, "max_hourly_usd");
	j.max_total = sched_spec_number(spec, "max_total_usd");
	j.hours = sched_spec_number(spec, "estimated_hours");
	if (!(j.hours > 0))
		j.hours = 1;
	prio = (int)json_integer_value(json_object_get(spec, "priority"));

	memset(&ctx, 0, sizeof ctx);
	sched_ctx_begin(s, &ctx);
	sched_history_load(s, ctx.now);
	sh->gen = 0;
	sched_shape_build(s, &ctx, sh);
	sh->gen = 0;	/* the next pass builds it with its own buckets */
	for (i = 0; i < sh->n; i++) {
		o = &sh->offers[i];
		bi = -1;
		reason = o->reason;
		if (reason == SCHED_OK) {
			if (j.max_hourly > 0 && o->hourly > j.max_hourly +
			    1e-9)
				reason = SCHED_X_HOURLY;
			else if (j.max_total > 0 && o->per_hour * j.hours >
			    j.max_total + 1e-9)
				reason = SCHED_X_TOTAL;
			else
				reason = sched_offer_quota(s, &ctx, o,
				    sh->count, sh->vcpus, &bi);
		}
		e = sched_offer_json(o, sh);
		if (reason == SCHED_OK) {
			(void)json_object_set_new(e, "hourly_usd",
			    json_real(o->hourly));
			(void)json_object_set_new(e, "expected_usd",
			    json_real(o->per_hour * j.hours));
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
		text = sched_reason_text(&ctx, sh, &j, o, reason, bi);
		(void)json_object_set_new(e, "reason", json_string(text));
		free(text);
		(void)json_array_append_new(excluded, e);
	}
	if (rank == 0) {
		sched_place(s, &ctx, &j, prio, &v);
		(void)json_object_set_new(plan, "why", json_string(v.why != NULL ?
		    v.why : "no offer"));
		sched_verdict_done(&v);
	}
	sched_ctx_done(&ctx);
	sched_shape_unref(s, sh);
	return plan;
}

/* ---------------------------------------------------------------- */
/* Life.							    */

struct sched *
sched_new(struct cloud *cloud)
{
	struct sched	*s;

	s = xcalloc(1, sizeof *s);
	s->cloud = cloud;
	s->store = cloud_store(cloud);
	TAILQ_INIT(&s->job_list);
	s->zones = xcalloc(SCHED_MAX_ZONES, sizeof *s->zones);
	s->refs = 1;			/* the timer */
	if (uv_timer_init(cloud_loop(cloud), &s->timer) != 0)
		fatalx("scheduler: cannot make its timer");
	s->timer.data = s;
	return s;
}

void
sched_set_attempts(struct sched *s, struct attempts *att)
{
	struct attempt_listener	l;

	s->att = att;
	memset(&l, 0, sizeof l);
	l.arg = s;
	l.wake = sched_on_wake;
	l.wake_at = sched_on_wake_at;
	l.history_changed = sched_on_history_changed;
	l.launched = sched_on_launched;
	l.launch_failed = sched_on_launch_failed;
	l.avoid = sched_on_avoid;
	l.prefer = sched_on_prefer;
	l.why = sched_on_why;
	if (att != NULL)
		attempt_set_listener(att, &l);
}

void
sched_start(struct sched *s)
{
	s->started = 1;
	quota_set_listener(gcp_quota(cloud_gcp(s->cloud)),
	    sched_on_quota_listener, s);
	sched_arm(s, 0);
}

void
sched_get_stats(struct sched *s, struct sched_stats *ret)
{
	*ret = s->stats;
}

static void
sched_free_job(void *p)
{
	struct sched_job	*j = p;

	free(j->bad);
	free(j);
}

static void
sched_free_shape(void *p)
{
	sched_shape_free(p);
}

/* Drop one reference; the last frees everything. */
static void
sched_unref(struct sched *s)
{
	size_t	i;

	if (--s->refs > 0)
		return;
	tdestroy(s->jobs, sched_free_job);
	tdestroy(s->shapes, sched_free_shape);
	for (i = 0; i < s->nhist; i++)
		free(s->hist[i].key);
	free(s->hist);
	sched_ctx_done(&s->ctx);
	free(s->items);
	for (i = 0; i < s->nwhy; i++)
		free(s->why_texts[i]);
	free(s->why_ids);
	free(s->why_texts);
	free(s->zones);
	free(s->quota_error);
	free(s);
}

static void
sched_on_close(uv_handle_t *h)
{
	sched_unref(h->data);
}

void
sched_close(struct sched *s)
{
	if (s == NULL || s->closing)
		return;
	s->closing = 1;
	if (s->att != NULL)
		attempt_set_listener(s->att, NULL);
	if (s->started)
		quota_set_listener(gcp_quota(cloud_gcp(s->cloud)), NULL, NULL);
	uv_close((uv_handle_t *)&s->timer, sched_on_close);
}
