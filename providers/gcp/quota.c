/*
 * quota.c: the quota cache -- Compute Engine region and project quotas,
 * the zones offering each GPU, and Vertex AI training limits -- with the
 * in-flight bookkeeping that keeps two launches from counting the same
 * free GPU (see quota.h for the reserve/release/commit protocol).
 *
 * A refresh is a round of requests run at once on the loop: projects.get
 * (global metrics), regions.get per configured region (a few of them)
 * or regions.list (all pages), acceleratorTypes.aggregatedList and zones.list (all
 * pages, at most hourly: they change slowly), and Cloud Quotas
 * quotaInfos for aiplatform.googleapis.com (all pages), and, since Cloud
 * Quotas gives no usage, customJobs.list per configured region of the
 * project's Vertex jobs that hold GPUs (all pages). Each asks only
 * for the fields it reads (DESIGN GA.1 recommends field masks). Only
 * GPU and vCPU metrics are kept. Callers sharing a round get one
 * callback each when the last answer is in.
 *
 * Knows nothing of jobs or of the scheduler's choices; the daemon tells
 * it what it launched.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <uv.h>

#include "common/clock.h"
#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/quota.h"
#include "providers/gcp/reservation.h"

#define QUOTA_ZONES_TTL		3600	/* s; zones and GPUs change slowly */
#define QUOTA_COMPUTE_PAGE	500	/* maxResults maximum (0.2) */
#define QUOTA_INFOS_PAGE	500
#define QUOTA_VERTEX_JOBS_PAGE	100	/* customJobs.list pageSize */
/*
 * Up to this many configured regions are read with one regions.get
 * each; more with one regions.list (every region fits one page), so a
 * long region list costs one Compute request per refresh, not one each.
 */
#define QUOTA_REGION_GETS	4
#define QUOTA_ANY_REGION	"*"	/* Vertex limit for "other regions" */
#define QUOTA_VERTEX_SERVICE	"aiplatform.googleapis.com"

enum quota_class {
	QC_COMPUTE,			/* Compute Engine (and Batch) */
	QC_VERTEX,
};

struct quota_entry {
	enum quota_class	 cls;
	char			*region;
	char			*metric;
	int			 known;
	int			 seen;		/* in its region's last read */
	double			 limit, usage;
	double			 others;	/* Vertex: GPUs held by jobs
						   not of this install */
	int			 family;	/* Compute: a limit read from
						   Cloud Quotas (GA.5) */
	double			 reserved;	/* launches deciding */
	double			 committed;	/* launched, not yet read */
	uint64_t		 committed_at;	/* uv_now of last commit */
	time_t			 fetched_at;
};

struct quota_region {
	char			*name;		/* or "global" */
	char			*status;
	char			*warning;	/* quotaStatusWarning */
	uint64_t		 fetched;	/* uv_now ms; 0 never */
	int			 stale;
};

struct quota_acc {
	char			*zone;
	char			*region;
	char			*gpu;
	int			 max;
};

struct quota_zst {
	char			*zone;
	int			 up;
};

enum quota_req_kind {
	QR_PROJECT,
	QR_REGION_GET,
	QR_REGION_LIST,
	QR_ACCEL,
	QR_ZONES,
	QR_VERTEX,
	QR_VERTEX_JOBS,
	QR_FAMILY,
};

static const char *const quota_req_names[] = {
	"Compute Engine project quotas", "Compute Engine region quotas",
	"Compute Engine region quotas", "Compute Engine accelerator types",
	"Compute Engine zones", "Vertex AI quotas (Cloud Quotas)",
	"Vertex AI custom jobs holding GPUs",
	"Compute Engine family quotas (Cloud Quotas)",
};

/* One request chain (all pages of one list). */
struct quota_req {
	struct quota		*q;
	enum quota_req_kind	 kind;
	char			*region;	/* QR_REGION_GET */
	uint64_t		 started;	/* uv_now of the first page */
	struct quota_acc	*acc;		/* QR_ACCEL, built */
	size_t			 nacc;
	struct quota_zst	*zst;		/* QR_ZONES, built */
	size_t			 nzst;
	json_t			*held;		/* QR_VERTEX_JOBS: metric ->
						   GPUs, built */
};

struct quota_waiter {
	quota_cb		 cb;
	void			*arg;
	struct quota_waiter	*next;
};

struct quota {
	struct http		*http;		/* borrowed */
	struct gcp_conf		*conf;		/* owned copy */
	int			 dead;
	int			 inflight;	/* requests out */
	int			 busy;		/* calling back */

	struct quota_entry	*e;	/* sorted: cls, region, metric */
	size_t			 ne, ce;
	struct quota_region	*r;
	size_t			 nr;
	struct quota_acc	*acc;
	size_t			 nacc;
	struct quota_zst	*zst;
	size_t			 nzst;
	uint64_t		 acc_fetched, zones_fetched;
	uint64_t		 vertex_fetched;
	int			 vertex_stale;
	char			*install;	/* our gpuq-install label */

	int			 round;		/* chains still running */
	char			*error;		/* first failure of the round */
	struct quota_waiter	*waiters;
	time_t			 done_at;	/* last round's end */
	uint64_t		 rounds;	/* rounds ended */
	void			(*listener)(void *);
	void			*listener_arg;
	struct resv		*resv;		/* borrowed, or NULL */
};

static void	quota_req_send(struct quota_req *, const char *token);
static void	quota_maybe_free(struct quota *);

static uint64_t
quota_now(struct quota *q)
{
	/* Simulated ms: quota_ttl is simulated time (clock.h). */
	return clock_sim_ms(uv_now(http_loop(q->http)));
}

/* -- entries ------------------------------------------------------------- */

static int
quota_key_cmp(enum quota_class cls, const char *region, const char *metric,
    const struct quota_entry *e)
{
	int	c;

	if (cls != e->cls)
		return (int)cls - (int)e->cls;
	if ((c = strcmp(region, e->region)) != 0)
		return c;
	return strcmp(metric, e->metric);
}

/* Index of the key, or where it would go (*RET_FOUND says which). */
static size_t
quota_search(struct quota *q, enum quota_class cls, const char *region,
    const char *metric, int *ret_found)
{
	size_t	lo = 0, hi = q->ne, mid;
	int	c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = quota_key_cmp(cls, region, metric, &q->e[mid]);
		if (c == 0) {
			*ret_found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*ret_found = 0;
	return lo;
}

static struct quota_entry *
quota_find(struct quota *q, enum quota_class cls, const char *region,
    const char *metric)
{
	size_t	i;
	int	found;

	i = quota_search(q, cls, region, metric, &found);
	return found ? &q->e[i] : NULL;
}

/* The entry for the key, made (unknown) if missing. */
static struct quota_entry *
quota_get(struct quota *q, enum quota_class cls, const char *region,
    const char *metric)
{
	struct quota_entry	*e;
	size_t			 i;
	int			 found;

	i = quota_search(q, cls, region, metric, &found);
	if (found)
		return &q->e[i];
	if (q->ne == q->ce) {
		q->ce = q->ce ? q->ce * 2 : 256;
		q->e = xreallocarray(q->e, q->ce, sizeof *q->e);
	}
	memmove(&q->e[i + 1], &q->e[i], (q->ne - i) * sizeof *q->e);
	q->ne++;
	e = &q->e[i];
	memset(e, 0, sizeof *e);
	e->cls = cls;
	e->region = xstrdup(region);
	e->metric = xstrdup(metric);
	return e;
}

static enum quota_class
quota_class_of(enum gcp_service svc)
{
	return svc == GCP_SERVICE_VERTEX ? QC_VERTEX : QC_COMPUTE;
}

static struct quota_region *
quota_region_get(struct quota *q, const char *name)
{
	size_t	i;

	for (i = 0; i < q->nr; i++)
		if (strcmp(q->r[i].name, name) == 0)
			return &q->r[i];
	q->r = xreallocarray(q->r, q->nr + 1, sizeof *q->r);
	memset(&q->r[q->nr], 0, sizeof q->r[q->nr]);
	q->r[q->nr].name = xstrdup(name);
	return &q->r[q->nr++];
}

/* Is a reading of REGION due? */
static int
quota_region_due(struct quota *q, const char *name, uint64_t now)
{
	struct quota_region	*r = quota_region_get(q, name);

	return r->stale || r->fetched == 0 ||
	    now >= r->fetched + (uint64_t)q->conf->quota_ttl * 1000;
}

/* GPU and vCPU metrics are the ones gpuq decides with. */
static int
quota_metric_kept(const char *m)
{
	return strstr(m, "GPUS") != NULL || strstr(m, "CPUS") != NULL;
}

/* A Compute region (or project) reading: quotas[] or a warning. */
static void
quota_apply_region(struct quota *q, const char *name, json_t *obj,
    uint64_t started)
{
	struct quota_region	*r = quota_region_get(q, name);
	struct quota_entry	*e;
	json_t			*quotas, *x, *w;
	const char		*m, *s;
	time_t			 now = clock_now();
	size_t			 i;

	r->fetched = quota_now(q);
	r->stale = 0;
	free(r->status);
	s = json_string_value(json_object_get(obj, "status"));
	r->status = s != NULL ? xstrdup(s) : NULL;
	free(r->warning);
	r->warning = NULL;
	for (i = 0; i < q->ne; i++)
		if (q->e[i].cls == QC_COMPUTE &&
		    strcmp(q->e[i].region, name) == 0)
			q->e[i].seen = 0;
	quotas = json_object_get(obj, "quotas");
	if (!json_is_array(quotas)) {
		/* A.1: fail-open lookup; unknown, never zero. */
		w = json_object_get(obj, "quotaStatusWarning");
		s = json_string_value(json_object_get(w, "message"));
		r->warning = xprintf("%s: %s", name, s != NULL ? s :
		    "quota information is not available");
	}
	json_array_foreach(quotas, i, x) {
		m = json_string_value(json_object_get(x, "metric"));
		if (m == NULL || !quota_metric_kept(m))
			continue;
		e = quota_get(q, QC_COMPUTE, name, m);
		e->known = 1;
		e->seen = 1;
		e->family = 0;		/* regions.get knows usage too */
		e->limit = json_number_value(json_object_get(x, "limit"));
		e->usage = json_number_value(json_object_get(x, "usage"));
		e->fetched_at = now;
		if (e->committed_at <= started)
			e->committed = 0;	/* the reading counts them */
	}
	for (i = 0; i < q->ne; i++)
		if (q->e[i].cls == QC_COMPUTE && !q->e[i].seen &&
		    !q->e[i].family && strcmp(q->e[i].region, name) == 0)
			q->e[i].known = 0;
}

static int64_t
quota_json_int(json_t *v)
{
	double	d;

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_number(v)) {
		d = json_number_value(v);	/* 1e62 is no limit we know */
		return d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : -1;
	}
	return -1;
}

static void
quota_set_vertex_limit(struct quota *q, const char *region,
    const char *metric, int64_t value)
{
	struct quota_entry	*e;

	if (value < 0)
		return;
	e = quota_get(q, QC_VERTEX, region, metric);
	if (!e->known)
		e->usage = 0;		/* until the daemon says otherwise */
	e->known = 1;
	e->limit = (double)value;
	e->fetched_at = clock_now();
}

/* The region a DimensionsInfo names, or NULL ("all other values"). */
static const char *
quota_dim_region(json_t *d)
{
	return json_string_value(json_object_get(json_object_get(d,
	    "dimensions"), "region"));
}

static int64_t
quota_dim_value(json_t *d)
{
	return quota_json_int(json_object_get(json_object_get(d, "details"),
	    "value"));
}

/* Does some DimensionsInfo of DIMS name REGION explicitly? */
static int
quota_dim_explicit(json_t *dims, const char *region)
{
	json_t		*d;
	const char	*r;
	size_t		 i;

	json_array_foreach(dims, i, d)
		if ((r = quota_dim_region(d)) != NULL && strcmp(r, region) == 0)
			return 1;
	return 0;
}

/* One QuotaInfo (B.2): its per-region limits, then the default. */
static void
quota_apply_info(struct quota *q, json_t *info)
{
	json_t		*dims, *d, *locs, *l;
	const char	*m, *region, *l0;
	char		*metric;
	size_t		 i, j;

	m = json_string_value(json_object_get(info, "metric"));
	if (m == NULL || strstr(m, "custom_model_training_") == NULL)
		return;
	if (strncmp(m, QUOTA_VERTEX_SERVICE "/",
	    strlen(QUOTA_VERTEX_SERVICE) + 1) == 0)
		m += strlen(QUOTA_VERTEX_SERVICE) + 1;
	metric = xstrdup(m);
	dims = json_object_get(info, "dimensionsInfos");
	json_array_foreach(dims, i, d) {
		region = quota_dim_region(d);
		if (region != NULL && gcp_conf_has_region(q->conf, region))
			quota_set_vertex_limit(q, region, metric,
			    quota_dim_value(d));
	}
	/* No region key: "all other values", for each region it applies
	 * to that has no limit of its own; "*" if it does not say. */
	json_array_foreach(dims, i, d) {
		if (quota_dim_region(d) != NULL)
			continue;
		locs = json_object_get(d, "applicableLocations");
		l0 = json_string_value(json_array_get(locs, 0));
		if (json_array_size(locs) == 0 || (json_array_size(locs) == 1 &&
		    l0 != NULL && strcmp(l0, "global") == 0)) {
			quota_set_vertex_limit(q, QUOTA_ANY_REGION, metric,
			    quota_dim_value(d));
			continue;
		}
		json_array_foreach(locs, j, l) {
			region = json_string_value(l);
			if (region == NULL ||
			    !gcp_conf_has_region(q->conf, region) ||
			    quota_dim_explicit(dims, region))
				continue;
			quota_set_vertex_limit(q, region, metric,
			    quota_dim_value(d));
		}
	}
	free(metric);
}

/* The last path segment of a URL or name. */
static const char *
quota_basename(const char *s)
{
	const char	*p = strrchr(s, '/');

	return p != NULL ? p + 1 : s;
}

/* "us-central1" of "us-central1-a". New string. */
static char *
quota_zone_region(const char *zone)
{
	const char	*p = strrchr(zone, '-');

	return p != NULL ? xstrndup(zone, (size_t)(p - zone)) : xstrdup(zone);
}

static void
quota_accel_page(struct quota_req *rq, json_t *items)
{
	struct quota	*q = rq->q;
	json_t		*scoped, *types, *t;
	const char	*key, *name, *zone;
	char		*region;
	size_t		 i;

	json_object_foreach(items, key, scoped) {
		types = json_object_get(scoped, "acceleratorTypes");
		json_array_foreach(types, i, t) {
			name = json_string_value(json_object_get(t, "name"));
			zone = json_string_value(json_object_get(t, "zone"));
			if (zone == NULL && strncmp(key, "zones/", 6) == 0)
				zone = key + 6;
			if (name == NULL || zone == NULL)
				continue;
			zone = quota_basename(zone);
			region = quota_zone_region(zone);
			if (!gcp_conf_has_region(q->conf, region)) {
				free(region);
				continue;
			}
			rq->acc = xreallocarray(rq->acc, rq->nacc + 1,
			    sizeof *rq->acc);
			rq->acc[rq->nacc].zone = xstrdup(zone);
			rq->acc[rq->nacc].region = region;
			rq->acc[rq->nacc].gpu = xstrdup(name);
			rq->acc[rq->nacc].max = (int)json_integer_value(
			    json_object_get(t, "maximumCardsPerInstance"));
			rq->nacc++;
		}
	}
}

static void
quota_zones_page(struct quota_req *rq, json_t *items)
{
	json_t		*z;
	const char	*name, *status;
	size_t		 i;

	json_array_foreach(items, i, z) {
		name = json_string_value(json_object_get(z, "name"));
		status = json_string_value(json_object_get(z, "status"));
		if (name == NULL)
			continue;
		rq->zst = xreallocarray(rq->zst, rq->nzst + 1,
		    sizeof *rq->zst);
		rq->zst[rq->nzst].zone = xstrdup(name);
		rq->zst[rq->nzst].up = status == NULL ||
		    strcmp(status, "UP") == 0;
		rq->nzst++;
	}
}

static void
quota_acc_free(struct quota_acc *a, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(a[i].zone);
		free(a[i].region);
		free(a[i].gpu);
	}
	free(a);
}

static void
quota_zst_free(struct quota_zst *z, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(z[i].zone);
	free(z);
}

static void
quota_req_free(struct quota_req *rq)
{
	free(rq->region);
	quota_acc_free(rq->acc, rq->nacc);
	quota_zst_free(rq->zst, rq->nzst);
	json_decref(rq->held);
	free(rq);
}

/* The round is over: tell the waiters and the listener. */
static void
quota_round_done(struct quota *q)
{
	struct quota_waiter	*w, *list;
	char			*cause = q->error;

	q->error = NULL;
	q->done_at = clock_now();
	q->rounds++;
	list = q->waiters;
	q->waiters = NULL;
	if (cause != NULL)
		log_debug("quota: %s", cause);
	q->busy++;		/* a callback may quota_free() */
	while ((w = list) != NULL) {
		list = w->next;
		if (!q->dead)
			w->cb(cause != NULL ? -EIO : 0, cause, w->arg);
		else
			w->cb(-ECANCELED, "cancelled: quotas closed", w->arg);
		free(w);
	}
	free(cause);
	if (q->listener != NULL && !q->dead)
		q->listener(q->listener_arg);
	q->busy--;
	quota_maybe_free(q);
}

/* One chain ended. */
static void
quota_chain_done(struct quota *q, struct quota_req *rq)
{
	quota_req_free(rq);
	if (--q->round == 0)
		quota_round_done(q);
}

/*
 * After the last page of regions.list: a configured region it did not
 * name (a typo, or not a Compute region) is an error worth showing, as a
 * regions.get of it would have been.
 */
static void
quota_regions_missing(struct quota *q, uint64_t started)
{
	struct quota_region	*r;
	size_t			 i;

	for (i = 0; i < q->conf->nregions; i++) {
		r = quota_region_get(q, q->conf->regions[i]);
		if (r->fetched >= started && r->fetched != 0)
			continue;
		if (q->error == NULL)
			q->error = xprintf("region %s is not in this "
			    "project's regions.list; check [gcp] regions in "
			    "gpuqd.conf", q->conf->regions[i]);
	}
}

/*
 * Compute Engine quotas published only in Cloud Quotas, by family (DESIGN
 * GA.5): the GPUs of H100, H200, B200 (gpu_family NVIDIA_H100, ...) and
 * the vCPUs of the A3, A4 and G2 series (vm_family A3, ...), which
 * regions.get does not report. Their limits become the Compute metrics
 * the scheduler asks for: NVIDIA_H100_GPUS, PREEMPTIBLE_NVIDIA_H100_GPUS,
 * A3_CPUS. Cloud Quotas gives no usage: what gpuq launched is held in
 * flight until the daemon's books count it, and a launch refused for
 * quota makes that place wait a quota TTL; the daemon reports the GPUs its
 * own live attempts hold (quota_set_usage()), as for Vertex AI.
 */
static const char *const quota_family_ids[] = {
	"GPUS-PER-GPU-FAMILY-per-project-region",
	"PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region",
	"CPUS-PER-VM-FAMILY-per-project-region",
};

/* The metric name for FAMILY under quota id QID. New string or NULL. */
static char *
quota_family_metric(const char *qid, const char *family)
{
	if (strcmp(qid, quota_family_ids[0]) == 0)
		return xprintf("%s_GPUS", family);
	if (strcmp(qid, quota_family_ids[1]) == 0)
		return xprintf("PREEMPTIBLE_%s_GPUS", family);
	if (strcmp(qid, quota_family_ids[2]) == 0)
		return xprintf("%s_CPUS", family);
	return NULL;
}

/* The family quota id METRIC's limit comes from, or NULL. */
static const char *
quota_family_of(const char *metric)
{
	size_t	n = strlen(metric);

	if (n > 5 && strcmp(metric + n - 5, "_CPUS") == 0)
		return quota_family_ids[2];
	if (n <= 5 || strcmp(metric + n - 5, "_GPUS") != 0)
		return NULL;
	return strncmp(metric, "PREEMPTIBLE_", 12) == 0 ?
	    quota_family_ids[1] : quota_family_ids[0];
}

/* Set the family limit of METRIC in REGION unless regions.get gave it. */
static void
quota_set_family_limit(struct quota *q, const char *region,
    const char *metric, int64_t value, int explicit)
{
	struct quota_entry	*e;

	if (value < 0 || !gcp_conf_has_region(q->conf, region))
		return;
	e = quota_get(q, QC_COMPUTE, region, metric);
	if (e->known && (!e->family || (e->family == 2 && !explicit)))
		return;		/* regions.get, or an explicit value */
	if (!e->known)
		e->usage = 0;	/* until the daemon's books say */
	e->known = 1;
	e->committed = 0;	/* the books (quota_set_usage()) count them */
	e->family = explicit ? 2 : 1;
	e->limit = (double)value;
	e->fetched_at = clock_now();
}

/* One family QuotaInfo: per-region values first, then the defaults. */
static void
quota_apply_family(struct quota *q, json_t *info)
{
	const char	*qid, *region, *fam;
	json_t		*d, *dims, *l;
	char		*metric;
	size_t		 i, j;
	int		 pass;

	qid = json_string_value(json_object_get(info, "quotaId"));
	if (qid == NULL)
		return;
	/* This reading replaces the last: its explicit values may go. */
	for (i = 0; i < q->ne; i++)
		if (q->e[i].cls == QC_COMPUTE && q->e[i].family &&
		    quota_family_of(q->e[i].metric) != NULL &&
		    strcmp(quota_family_of(q->e[i].metric), qid) == 0)
			q->e[i].family = 1;
	for (pass = 0; pass < 2; pass++) {
		json_array_foreach(json_object_get(info, "dimensionsInfos"),
		    i, d) {
			dims = json_object_get(d, "dimensions");
			fam = json_string_value(json_object_get(dims,
			    "gpu_family"));
			if (fam == NULL)
				fam = json_string_value(json_object_get(dims,
				    "vm_family"));
			region = json_string_value(json_object_get(dims,
			    "region"));
			if (fam == NULL || (pass == 0) != (region != NULL) ||
			    (metric = quota_family_metric(qid, fam)) == NULL)
				continue;
			if (region != NULL)
				quota_set_family_limit(q, region, metric,
				    quota_dim_value(d), 1);
			else
				json_array_foreach(json_object_get(d,
				    "applicableLocations"), j, l)
					if (json_is_string(l))
						quota_set_family_limit(q,
						    json_string_value(l),
						    metric,
						    quota_dim_value(d), 0);
			free(metric);
		}
	}
}

/*
 * The project's Vertex AI custom jobs in REGION that hold GPUs (DESIGN
 * GB.3): customJobs.list filtered on the states in which Vertex has
 * provisioned the workers (a QUEUED job waits for quota and holds none),
 * with only the fields counted. New string.
 */
static char *
quota_vertex_jobs_url(struct quota *q, const char *region)
{
	const char	*filter = "state=\"JOB_STATE_PENDING\" OR "
	    "state=\"JOB_STATE_RUNNING\" OR "
	    "state=\"JOB_STATE_CANCELLING\"";

	/* gcp_url() escapes the query as it builds the URL. */
	return gcp_url(q->conf, GCP_API_VERTEX, region,
	    "projects/%s/locations/%s/customJobs?filter=%s&pageSize=%d"
	    "&fields=customJobs(labels,jobSpec(workerPoolSpecs(machineSpec,"
	    "replicaCount),scheduling(strategy))),nextPageToken",
	    q->conf->project, region, filter,
	    http_page_size(q->http, QUOTA_VERTEX_JOBS_PAGE));
}

/*
 * Add the GPUs of one listed CustomJob to HELD (metric -> count), unless
 * this install made it: the daemon counts its own from its books
 * (quota_set_usage()), which also know the ones launched since this
 * listing. Every worker pool counts, acceleratorCount x replicaCount;
 * a Spot job draws on the preemptible metric (DESIGN GB.1).
 */
static void
quota_vertex_job_count(struct quota *q, json_t *held, json_t *job)
{
	const struct gpu_type	*g;
	const char		*acc, *mine, *strategy;
	json_t			*pool, *ms;
	char			*metric;
	json_int_t		 count, replicas;
	size_t			 i;
	int			 spot;

	mine = json_string_value(json_object_get(json_object_get(job,
	    "labels"), "gpuq-install"));
	if (mine != NULL && q->install != NULL &&
	    strcmp(mine, q->install) == 0)
		return;
	strategy = json_string_value(json_object_get(json_object_get(
	    json_object_get(job, "jobSpec"), "scheduling"), "strategy"));
	spot = strategy != NULL && strcmp(strategy, "SPOT") == 0;
	json_array_foreach(json_object_get(json_object_get(job, "jobSpec"),
	    "workerPoolSpecs"), i, pool) {
		ms = json_object_get(pool, "machineSpec");
		acc = json_string_value(json_object_get(ms,
		    "acceleratorType"));
		if (acc == NULL || (g = gpu_lookup(acc)) == NULL ||
		    g->vertex_quota == NULL)
			continue;
		count = quota_json_int(json_object_get(ms,
		    "acceleratorCount"));
		replicas = quota_json_int(json_object_get(pool,
		    "replicaCount"));
		if (count <= 0)
			continue;
		if (replicas <= 0)
			replicas = 1;
		metric = xprintf("custom_model_training_%snvidia_%s_gpus",
		    spot ? "preemptible_" : "", g->vertex_quota);
		json_object_set_new(held, metric, json_integer(
		    json_integer_value(json_object_get(held, metric)) +
		    count * replicas));
		free(metric);
	}
}

/* A whole listing of REGION is in: it replaces what others held there. */
static void
quota_vertex_held_apply(struct quota *q, const char *region, json_t *held)
{
	const char	*metric;
	json_t		*v;
	size_t		 i;

	for (i = 0; i < q->ne; i++)
		if (q->e[i].cls == QC_VERTEX &&
		    strcmp(q->e[i].region, region) == 0)
			q->e[i].others = 0;
	json_object_foreach(held, metric, v)
		quota_get(q, QC_VERTEX, region, metric)->others =
		    (double)json_integer_value(v);
}

static void
quota_on_answer(const struct http_resp *r, void *arg)
{
	struct quota_req	*rq = arg;
	struct quota		*q = rq->q;
	json_t			*items, *x;
	const char		*tok, *name;
	char			*text;
	size_t			 i;

	q->inflight--;
	if (q->dead) {
		quota_req_free(rq);
		quota_maybe_free(q);
		return;
	}
	if (rq->kind == QR_FAMILY && r->err.kind == GCP_ERR_NOT_FOUND) {
		quota_chain_done(q, rq);	/* the project has none */
		return;
	}
	if (rq->kind == QR_VERTEX_JOBS && (r->status != 200 ||
	    !json_is_object(r->json))) {
		/* Others' jobs keep their last count; the round's error is
		 * left to the readings of limits, which say more. */
		text = gcp_error_text(&r->err);
		log_warnx("quota: %s for %s: %s", quota_req_names[rq->kind],
		    rq->region, text);
		free(text);
		quota_chain_done(q, rq);
		return;
	}
	if (r->status != 200 || !json_is_object(r->json)) {
		if (q->error == NULL) {
			text = gcp_error_text(&r->err);
			q->error = xprintf("reading %s%s%s failed: %s",
			    quota_req_names[rq->kind], rq->region ? " for " :
			    "", rq->region ? rq->region : "", text);
			free(text);
		}
		quota_chain_done(q, rq);
		return;
	}
	switch (rq->kind) {
	case QR_PROJECT:
		quota_apply_region(q, QUOTA_GLOBAL, r->json, rq->started);
		break;
	case QR_REGION_GET:
		quota_apply_region(q, rq->region, r->json, rq->started);
		break;
	case QR_REGION_LIST:
		items = json_object_get(r->json, "items");
		json_array_foreach(items, i, x) {
			name = json_string_value(json_object_get(x, "name"));
			if (name != NULL && gcp_conf_has_region(q->conf, name))
				quota_apply_region(q, name, x, rq->started);
		}
		break;
	case QR_ACCEL:
		quota_accel_page(rq, json_object_get(r->json, "items"));
		break;
	case QR_ZONES:
		quota_zones_page(rq, json_object_get(r->json, "items"));
		break;
	case QR_VERTEX:
		items = json_object_get(r->json, "quotaInfos");
		json_array_foreach(items, i, x)
			quota_apply_info(q, x);
		break;
	case QR_FAMILY:
		quota_apply_family(q, r->json);
		break;
	case QR_VERTEX_JOBS:
		items = json_object_get(r->json, "customJobs");
		json_array_foreach(items, i, x)
			quota_vertex_job_count(q, rq->held, x);
		break;
	}
	tok = json_string_value(json_object_get(r->json, "nextPageToken"));
	if (tok != NULL && *tok != '\0' && rq->kind != QR_PROJECT &&
	    rq->kind != QR_REGION_GET && rq->kind != QR_FAMILY) {
		quota_req_send(rq, tok);
		return;
	}
	/* The last page: swap in what was built whole. */
	if (rq->kind == QR_ACCEL) {
		quota_acc_free(q->acc, q->nacc);
		q->acc = rq->acc;
		q->nacc = rq->nacc;
		rq->acc = NULL;
		rq->nacc = 0;
		q->acc_fetched = quota_now(q);
	} else if (rq->kind == QR_ZONES) {
		quota_zst_free(q->zst, q->nzst);
		q->zst = rq->zst;
		q->nzst = rq->nzst;
		rq->zst = NULL;
		rq->nzst = 0;
		q->zones_fetched = quota_now(q);
	} else if (rq->kind == QR_VERTEX) {
		q->vertex_fetched = quota_now(q);
		q->vertex_stale = 0;
	} else if (rq->kind == QR_REGION_LIST)
		quota_regions_missing(q, rq->started);
	else if (rq->kind == QR_VERTEX_JOBS)
		quota_vertex_held_apply(q, rq->region, rq->held);
	quota_chain_done(q, rq);
}

static void
quota_req_send(struct quota_req *rq, const char *token)
{
	struct quota	*q = rq->q;
	const char	*p = q->conf->project;
	struct http_req	 req;
	char		*url = NULL;
	int		 rc, n;

	if (token == NULL)
		rq->started = quota_now(q);
	switch (rq->kind) {
	case QR_PROJECT:
		url = gcp_url(q->conf, GCP_API_COMPUTE, NULL,
		    "projects/%s?fields=quotas", p);
		break;
	case QR_REGION_GET:
		url = gcp_url(q->conf, GCP_API_COMPUTE, NULL,
		    "projects/%s/regions/%s?fields=name,status,quotas,"
		    "quotaStatusWarning", p, rq->region);
		break;
	case QR_REGION_LIST:
		n = http_page_size(q->http, QUOTA_COMPUTE_PAGE);
		url = gcp_url(q->conf, GCP_API_COMPUTE, NULL,
		    "projects/%s/regions?maxResults=%d&fields=items(name,"
		    "status,quotas,quotaStatusWarning),nextPageToken", p, n);
		break;
	case QR_ACCEL:
		n = http_page_size(q->http, QUOTA_COMPUTE_PAGE);
		url = gcp_url(q->conf, GCP_API_COMPUTE, NULL,
		    "projects/%s/aggregated/acceleratorTypes?maxResults=%d&"
		    "returnPartialSuccess=true&fields=items/*/"
		    "acceleratorTypes(name,zone,maximumCardsPerInstance),"
		    "nextPageToken", p, n);
		break;
	case QR_ZONES:
		n = http_page_size(q->http, QUOTA_COMPUTE_PAGE);
		url = gcp_url(q->conf, GCP_API_COMPUTE, NULL,
		    "projects/%s/zones?maxResults=%d&fields=items(name,status)"
		    ",nextPageToken", p, n);
		break;
	case QR_VERTEX_JOBS:
		url = quota_vertex_jobs_url(q, rq->region);
		break;
	case QR_FAMILY:
		url = gcp_url(q->conf, GCP_API_QUOTAS, NULL,
		    "projects/%s/locations/global/services/"
		    "compute.googleapis.com/quotaInfos/%s?fields=quotaId,"
		    "dimensionsInfos", p, rq->region);
		break;
	case QR_VERTEX:
		n = http_page_size(q->http, QUOTA_INFOS_PAGE);
		url = gcp_url(q->conf, GCP_API_QUOTAS, NULL,
		    "projects/%s/locations/global/services/%s/quotaInfos?"
		    "pageSize=%d&fields=quotaInfos(metric,dimensionsInfos),"
		    "nextPageToken", p, QUOTA_VERTEX_SERVICE, n);
		break;
	}
	url = gcp_url_page(url, token);
	memset(&req, 0, sizeof req);
	req.url = url;
	req.flags = HTTP_AUTH;
	req.api = rq->kind == QR_VERTEX || rq->kind == QR_FAMILY ?
	    GCP_API_QUOTAS :
	    rq->kind == QR_VERTEX_JOBS ? GCP_API_VERTEX : GCP_API_COMPUTE;
	rc = http_request_start(q->http, &req, quota_on_answer, rq);
	free(url);
	if (rc < 0) {
		if (q->error == NULL)
			q->error = xprintf("reading %s: %s",
			    quota_req_names[rq->kind], strerror(-rc));
		quota_chain_done(q, rq);
		return;
	}
	q->inflight++;
}

/* Start a chain of KIND (REGION for QR_REGION_GET). */
static void
quota_chain_start(struct quota *q, enum quota_req_kind kind,
    const char *region)
{
	struct quota_req	*rq;

	rq = xcalloc(1, sizeof *rq);
	rq->q = q;
	rq->kind = kind;
	rq->region = region != NULL ? xstrdup(region) : NULL;
	if (kind == QR_VERTEX_JOBS)
		rq->held = json_object();
	q->round++;
	quota_req_send(rq, NULL);
}

void
quota_set_resv(struct quota *q, struct resv *rv)
{
	q->resv = rv;
}

/* The reservations chain of a round ended. */
static void
quota_on_resv(int error, const char *cause, void *arg)
{
	struct quota	*q = arg;

	q->inflight--;
	if (q->dead) {
		quota_maybe_free(q);
		return;
	}
	if (error < 0 && q->error == NULL)
		q->error = xstrdup(cause != NULL ? cause : "reading "
		    "reservations failed");
	if (--q->round == 0)
		quota_round_done(q);
}

/* Start the reservations chain when its reading is due. */
static void
quota_resv_start(struct quota *q, int force)
{
	if (q->resv == NULL || !resv_enabled(q->resv))
		return;
	q->round++;
	q->inflight++;
	if (resv_refresh(q->resv, force, (uint64_t)q->conf->quota_ttl * 1000,
	    quota_on_resv, q) != 0) {
		/* Fresh (or busy, or cannot start): nothing to wait for. */
		q->round--;
		q->inflight--;
	}
}

int
quota_refresh(struct quota *q, int force, quota_cb cb, void *arg)
{
	struct quota_waiter	*w, **pw;
	uint64_t		 now = quota_now(q), ttl, zttl;
	int			 compute, vertex, list, starting = 0;
	size_t			 i;

	if (q->dead)
		return -ESHUTDOWN;
	if (q->conf->project == NULL || *q->conf->project == '\0')
		return -EINVAL;
	if (q->round == 0) {
		ttl = (uint64_t)q->conf->quota_ttl * 1000;
		zttl = ttl > QUOTA_ZONES_TTL * 1000ULL ? ttl :
		    QUOTA_ZONES_TTL * 1000ULL;
		compute = gcp_conf_has_provider(q->conf, "gce") ||
		    gcp_conf_has_provider(q->conf, "batch");
		vertex = gcp_conf_has_provider(q->conf, "vertex");

		/* The round counts itself until every chain has started,
		 * so none can end it early. */
		q->round = 1;
		starting = 1;
		if (compute) {
			if (force || quota_region_due(q, QUOTA_GLOBAL, now)) {
				quota_chain_start(q, QR_PROJECT, NULL);
				for (i = 0; i < sizeof quota_family_ids /
				    sizeof quota_family_ids[0]; i++)
					quota_chain_start(q, QR_FAMILY,
					    quota_family_ids[i]);
			}
			if (q->conf->nregions > 0 &&
			    q->conf->nregions <= QUOTA_REGION_GETS) {
				for (i = 0; i < q->conf->nregions; i++)
					if (force || quota_region_due(q,
					    q->conf->regions[i], now))
						quota_chain_start(q,
						    QR_REGION_GET,
						    q->conf->regions[i]);
			} else if (q->conf->nregions > 0) {
				list = force;
				for (i = 0; i < q->conf->nregions && !list;
				    i++)
					list = quota_region_due(q,
					    q->conf->regions[i], now);
				if (list)
					quota_chain_start(q, QR_REGION_LIST,
					    NULL);
			} else {
				list = force || q->nr <= 1;
				for (i = 0; i < q->nr && !list; i++)
					if (strcmp(q->r[i].name,
					    QUOTA_GLOBAL) != 0 &&
					    quota_region_due(q, q->r[i].name,
					    now))
						list = 1;
				if (list)
					quota_chain_start(q, QR_REGION_LIST,
					    NULL);
			}
		}
		/*
		 * Where each GPU is offered, for every service: Vertex AI
		 * alone needs it too, to know its regions.
		 */
		if (compute || vertex) {
			if (force || q->acc_fetched == 0 ||
			    now >= q->acc_fetched + zttl)
				quota_chain_start(q, QR_ACCEL, NULL);
			if (force || q->zones_fetched == 0 ||
			    now >= q->zones_fetched + zttl)
				quota_chain_start(q, QR_ZONES, NULL);
		}
		if (vertex && (force || q->vertex_stale ||
		    q->vertex_fetched == 0 || now >= q->vertex_fetched + ttl)) {
			quota_chain_start(q, QR_VERTEX, NULL);
			for (i = 0; i < q->conf->nregions; i++)
				quota_chain_start(q, QR_VERTEX_JOBS,
				    q->conf->regions[i]);
		}
		quota_resv_start(q, force);
		if (q->round == 1) {
			/* Nothing was due, or nothing could start. */
			q->round = 0;
			if (q->error != NULL) {
				free(q->error);
				q->error = NULL;
				return -ESHUTDOWN;
			}
			return 1;
		}
	}
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	for (pw = &q->waiters; *pw != NULL; pw = &(*pw)->next)
		;
	*pw = w;
	if (starting)
		q->round--;		/* drop the self-count; chains run */
	return 0;
}

void
quota_invalidate(struct quota *q, const char *region)
{
	size_t	i;

	for (i = 0; i < q->nr; i++)
		if (region == NULL || strcmp(q->r[i].name, region) == 0 ||
		    strcmp(q->r[i].name, QUOTA_GLOBAL) == 0)
			q->r[i].stale = 1;
	if (region != NULL)
		quota_region_get(q, region)->stale = 1;
	q->vertex_stale = 1;
}

void
quota_set_listener(struct quota *q, void (*cb)(void *), void *arg)
{
	q->listener = cb;
	q->listener_arg = arg;
}

/* -- metrics and headroom ------------------------------------------------- */

const char *
quota_gpu_metric(struct quota *q, enum gcp_service svc, const char *region,
    const char *gpu, int spot, char *buf)
{
	const struct gpu_type	*g;
	struct quota_entry	*e;

	if ((g = gpu_lookup(gpu)) == NULL)
		return NULL;
	if (svc == GCP_SERVICE_VERTEX) {
		snprintf(buf, QUOTA_METRIC_MAX,
		    "custom_model_training_%snvidia_%s_gpus",
		    spot ? "preemptible_" : "", g->vertex_quota);
		return buf;
	}
	if (spot) {
		snprintf(buf, QUOTA_METRIC_MAX, "PREEMPTIBLE_%s_GPUS",
		    g->quota);
		e = quota_find(q, QC_COMPUTE, region, buf);
		if (e != NULL && e->known && e->limit > 0)
			return buf;
	}
	snprintf(buf, QUOTA_METRIC_MAX, "%s_GPUS", g->quota);
	return buf;
}

const char *
quota_cpu_metric(struct quota *q, const char *region, const char *mt,
    int spot, char *buf)
{
	struct quota_entry	*e;
	size_t			 n, i;

	if (spot) {
		e = quota_find(q, QC_COMPUTE, region, "PREEMPTIBLE_CPUS");
		if (e != NULL && e->known && e->limit > 0) {
			snprintf(buf, QUOTA_METRIC_MAX, "PREEMPTIBLE_CPUS");
			return buf;
		}
	}
	n = strcspn(mt, "-");
	if (n > 0 && n < 16 && strncmp(mt, "n1-", 3) != 0 &&
	    strncmp(mt, "custom-", 7) != 0) {
		for (i = 0; i < n; i++)
			buf[i] = (char)toupper((unsigned char)mt[i]);
		snprintf(buf + n, QUOTA_METRIC_MAX - n, "_CPUS");
		e = quota_find(q, QC_COMPUTE, region, buf);
		if (e != NULL && e->known)
			return buf;
	}
	snprintf(buf, QUOTA_METRIC_MAX, "CPUS");
	return buf;
}

/* The entry holding the limit for a key: Vertex falls back to "*". */
static struct quota_entry *
quota_limit_entry(struct quota *q, enum quota_class cls, const char *region,
    const char *metric)
{
	struct quota_entry	*e;

	e = quota_find(q, cls, region, metric);
	if ((e == NULL || !e->known) && cls == QC_VERTEX)
		e = quota_find(q, cls, QUOTA_ANY_REGION, metric);
	return e;
}

int
quota_headroom(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double *ret)
{
	enum quota_class	 cls = quota_class_of(svc);
	struct quota_entry	*lim, *own;
	double			 usage;

	lim = quota_limit_entry(q, cls, region, metric);
	if (lim == NULL || !lim->known)
		return -ENOENT;
	own = quota_find(q, cls, region, metric);
	usage = own != NULL ? own->usage + own->others : 0;
	*ret = lim->limit - usage - (own != NULL ? own->reserved +
	    own->committed : 0);
	return 0;
}

int
quota_limit(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double *ret)
{
	enum quota_class	 cls = quota_class_of(svc);
	struct quota_entry	*lim;

	if (quota_find(q, cls, region, metric) == NULL)
		return -ENOENT;
	lim = quota_limit_entry(q, cls, region, metric);
	if (lim == NULL || !lim->known)
		return -ENOENT;
	*ret = lim->limit;
	return 0;
}

int
quota_gpu_headroom(struct quota *q, enum gcp_service svc, const char *region,
    const char *gpu, int spot, double *ret)
{
	char	 buf[QUOTA_METRIC_MAX];
	double	 h, g;

	if (quota_gpu_metric(q, svc, region, gpu, spot, buf) == NULL)
		return -ENOENT;
	if (quota_headroom(q, svc, region, buf, &h) < 0)
		return -ENOENT;
	if (svc != GCP_SERVICE_VERTEX && quota_headroom(q, svc, QUOTA_GLOBAL,
	    "GPUS_ALL_REGIONS", &g) == 0 && g < h)
		h = g;
	*ret = h;
	return 0;
}

/* Does a hold on METRIC also hold GPUS_ALL_REGIONS? */
static int
quota_counts_global(enum quota_class cls, const char *region,
    const char *metric)
{
	size_t	n = strlen(metric);

	return cls == QC_COMPUTE && strcmp(region, QUOTA_GLOBAL) != 0 &&
	    n > 5 && strcmp(metric + n - 5, "_GPUS") == 0;
}

/* Move N units: RESERVED += dr, COMMITTED += dc, on METRIC and global. */
static void
quota_move(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double dr, double dc)
{
	enum quota_class	 cls = quota_class_of(svc);
	struct quota_entry	*e;
	int			 k;

	for (k = 0; k < 2; k++) {
		if (k == 1 && !quota_counts_global(cls, region, metric))
			break;
		e = k == 0 ? quota_get(q, cls, region, metric) :
		    quota_get(q, cls, QUOTA_GLOBAL, "GPUS_ALL_REGIONS");
		e->reserved += dr;
		if (e->reserved < 0)
			e->reserved = 0;
		if (dc != 0) {
			e->committed += dc;
			e->committed_at = quota_now(q);
		}
	}
}

void
quota_reserve(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double n)
{
	quota_move(q, svc, region, metric, n, 0);
}

void
quota_release(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double n)
{
	quota_move(q, svc, region, metric, -n, 0);
}

void
quota_commit(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double n)
{
	quota_move(q, svc, region, metric, -n, n);
}

void
quota_set_install(struct quota *q, const char *install)
{
	if (install == NULL || (q->install != NULL &&
	    strcmp(q->install, install) == 0))
		return;
	free(q->install);
	q->install = xstrdup(install);
}

void
quota_set_usage(struct quota *q, enum gcp_service svc, const char *region,
    const char *metric, double usage)
{
	struct quota_entry	*e, *any;

	e = quota_get(q, quota_class_of(svc), region, metric);
	if (e->cls == QC_COMPUTE && !e->family)
		return;		/* regions.get reports usage itself */
	if (!e->known && svc == GCP_SERVICE_VERTEX &&
	    (any = quota_find(q, QC_VERTEX, QUOTA_ANY_REGION, metric)) !=
	    NULL && any->known) {
		e->known = 1;
		e->limit = any->limit;
		e->fetched_at = any->fetched_at;
	}
	e->usage = usage;
	e->committed = 0;
}

/* -- zones ------------------------------------------------------------- */

static int
quota_zone_up(struct quota *q, const char *zone)
{
	size_t	i;

	for (i = 0; i < q->nzst; i++)
		if (strcmp(q->zst[i].zone, zone) == 0)
			return q->zst[i].up;
	return 1;
}

int
quota_zones(struct quota *q, const char *region, const char *gpu,
    struct quota_zone *out, int max)
{
	const struct gpu_type	*g;
	const char		*name;
	size_t			 i;
	int			 n = 0;

	if (q->acc_fetched == 0)
		return -ENOENT;
	g = gpu_lookup(gpu);
	name = g != NULL ? g->name : gpu;
	for (i = 0; i < q->nacc && n < max; i++) {
		if (strcmp(q->acc[i].gpu, name) != 0)
			continue;
		if (region != NULL && strcmp(q->acc[i].region, region) != 0)
			continue;
		snprintf(out[n].zone, sizeof out[n].zone, "%s",
		    q->acc[i].zone);
		snprintf(out[n].region, sizeof out[n].region, "%s",
		    q->acc[i].region);
		out[n].max_per_vm = q->acc[i].max;
		out[n].up = quota_zone_up(q, q->acc[i].zone);
		n++;
	}
	return n;
}

int
quota_zone_max(struct quota *q, const char *zone, const char *gpu)
{
	const struct gpu_type	*g;
	const char		*name;
	size_t			 i;

	if (q->acc_fetched == 0)
		return -ENOENT;
	g = gpu_lookup(gpu);
	name = g != NULL ? g->name : gpu;
	for (i = 0; i < q->nacc; i++)
		if (strcmp(q->acc[i].zone, zone) == 0 &&
		    strcmp(q->acc[i].gpu, name) == 0)
			return q->acc[i].max;
	return 0;
}

/* -- listings -------------------------------------------------------- */

static void
quota_row_fill(struct quota *q, struct quota_entry *e, struct quota_row *r)
{
	struct quota_entry	*lim;

	memset(r, 0, sizeof *r);
	r->service = e->cls == QC_VERTEX ? GCP_SERVICE_VERTEX :
	    GCP_SERVICE_GCE;
	r->region = e->region;
	r->metric = e->metric;
	lim = quota_limit_entry(q, e->cls, e->region, e->metric);
	r->known = lim != NULL && lim->known;
	r->limit = r->known ? lim->limit : -1;
	r->usage = e->known || e->cls == QC_VERTEX ? e->usage + e->others :
	    -1;
	r->in_flight = e->reserved + e->committed;
	r->free = r->known ? r->limit - (r->usage > 0 ? r->usage : 0) -
	    r->in_flight : 0;
	r->fetched_at = lim != NULL ? lim->fetched_at : 0;
}

int
quota_next(struct quota *q, size_t *iter, struct quota_row *ret)
{
	if (*iter >= q->ne)
		return 0;
	quota_row_fill(q, &q->e[*iter], ret);
	(*iter)++;
	return 1;
}

time_t
quota_fetched_at(struct quota *q)
{
	return q->done_at;
}

uint64_t
quota_rounds(struct quota *q)
{
	return q->rounds;
}

/* Does METRIC concern GPU G (for filters)? */
static int
quota_metric_for(const char *metric, const struct gpu_type *g)
{
	char	buf[QUOTA_METRIC_MAX];

	if (strcmp(metric, "GPUS_ALL_REGIONS") == 0)
		return 1;
	snprintf(buf, sizeof buf, "%s_GPUS", g->quota);
	if (strcmp(metric, buf) == 0 || (strncmp(metric, "PREEMPTIBLE_", 12)
	    == 0 && strcmp(metric + 12, buf) == 0))
		return 1;
	snprintf(buf, sizeof buf, "nvidia_%s_gpus", g->vertex_quota);
	return strlen(metric) > strlen(buf) && strcmp(metric +
	    strlen(metric) - strlen(buf), buf) == 0;
}

static json_t *
quota_num(int known, double d)
{
	return known ? json_real(d) : json_null();
}

json_t *
quota_to_json(struct quota *q, const char *region, const char *gpu)
{
	const struct gpu_type	*g = NULL;
	struct quota_row	 r;
	json_t			*out, *rows, *zones, *warn, *o;
	time_t			 now = clock_now();
	size_t			 i;

	if (gpu != NULL && (g = gpu_lookup(gpu)) == NULL)
		return NULL;
	rows = json_array();
	for (i = 0; i < q->ne; i++) {
		quota_row_fill(q, &q->e[i], &r);
		if (region != NULL && strcmp(r.region, region) != 0 &&
		    strcmp(r.region, QUOTA_GLOBAL) != 0)
			continue;
		if (g != NULL && !quota_metric_for(r.metric, g))
			continue;
		if (strcmp(r.region, QUOTA_ANY_REGION) == 0 && region != NULL)
			continue;
		o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:f, s:o, s:o}",
		    "service", r.service == GCP_SERVICE_VERTEX ? "vertex" :
		    "compute", "region", r.region, "metric", r.metric,
		    "limit", quota_num(r.known, r.limit),
		    "usage", quota_num(r.usage >= 0, r.usage),
		    "in_flight", r.in_flight,
		    "free", quota_num(r.known, r.free),
		    "age_s", r.fetched_at != 0 ?
		    json_integer((json_int_t)(now - r.fetched_at)) :
		    json_null());
		json_array_append_new(rows, o);
	}
	zones = json_array();
	for (i = 0; i < q->nacc; i++) {
		if (region != NULL && strcmp(q->acc[i].region, region) != 0)
			continue;
		if (g != NULL && strcmp(q->acc[i].gpu, g->name) != 0)
			continue;
		json_array_append_new(zones, json_pack("{s:s, s:s, s:s, s:i, "
		    "s:b}", "zone", q->acc[i].zone, "region",
		    q->acc[i].region, "gpu", q->acc[i].gpu, "max_per_vm",
		    q->acc[i].max, "up", quota_zone_up(q, q->acc[i].zone)));
	}
	warn = json_array();
	for (i = 0; i < q->nr; i++)
		if (q->r[i].warning != NULL && (region == NULL ||
		    strcmp(q->r[i].name, region) == 0))
			json_array_append_new(warn, json_string(
			    q->r[i].warning));
	out = json_object();
	json_object_set_new(out, "fetched_at", json_integer(
	    (json_int_t)q->done_at));
	json_object_set_new(out, "age_s", q->done_at != 0 ?
	    json_integer((json_int_t)(now - q->done_at)) : json_null());
	json_object_set_new(out, "quotas", rows);
	json_object_set_new(out, "zones", zones);
	json_object_set_new(out, "warnings", warn);
	return out;
}

/* -- life -------------------------------------------------------------- */

int
quota_new(struct http *http, const struct gcp_conf *conf, struct quota **ret,
    char **cause)
{
	struct quota	*q;

	(void)cause;
	q = xcalloc(1, sizeof *q);
	q->http = http;
	q->conf = gcp_conf_dup(conf);
	*ret = q;
	return 0;
}

static void
quota_really_free(struct quota *q)
{
	size_t	i;

	for (i = 0; i < q->ne; i++) {
		free(q->e[i].region);
		free(q->e[i].metric);
	}
	free(q->e);
	for (i = 0; i < q->nr; i++) {
		free(q->r[i].name);
		free(q->r[i].status);
		free(q->r[i].warning);
	}
	free(q->r);
	quota_acc_free(q->acc, q->nacc);
	quota_zst_free(q->zst, q->nzst);
	free(q->error);
	free(q->install);
	gcp_conf_free(q->conf);
	free(q);
}

static void
quota_maybe_free(struct quota *q)
{
	if (q->dead && q->inflight == 0 && q->busy == 0)
		quota_really_free(q);
}

void
quota_free(struct quota *q)
{
	struct quota_waiter	*w;

	if (q == NULL || q->dead)
		return;
	q->dead = 1;
	while ((w = q->waiters) != NULL) {
		q->waiters = w->next;
		w->cb(-ECANCELED, "cancelled: quotas closed", w->arg);
		free(w);
	}
	quota_maybe_free(q);
}
