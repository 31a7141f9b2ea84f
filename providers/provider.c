/*
 * provider.c: the table of providers (lookup by name, the names for error
 * messages, state names) and the helpers every provider file shares:
 * RFC 3339 time parsing, labels, launch checks, quota metrics, errors
 * onto prov_fail, a DELETE, the walk over the pages of a listing, and a
 * poll made of one listing.
 *
 * Knows the providers by their struct only, and no one service's JSON.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/when.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/quota.h"

/* The ways to run a job, in the order prov_names() lists them. */
static const struct provider *const prov_table[] = {
	&prov_vertex,
	&prov_batch,
	&prov_gce,
};
#define PROV_NTABLE	(sizeof prov_table / sizeof prov_table[0])

/* Lookup by name: "vertex", "batch", "gce", and "null" for tests. */
const struct provider *
prov_lookup(const char *name)
{
	size_t	i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < PROV_NTABLE; i++)
		if (strcmp(name, prov_table[i]->name) == 0)
			return prov_table[i];
	if (strcmp(name, prov_null.name) == 0)
		return &prov_null;
	return NULL;
}

/* "vertex, batch, gce": the names a user may configure. Static string. */
const char *
prov_names(void)
{
	static char	buf[64];
	size_t		i;

	if (buf[0] != '\0')
		return buf;
	for (i = 0; i < PROV_NTABLE; i++) {
		if (i > 0)
			(void)strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
		(void)strncat(buf, prov_table[i]->name,
		    sizeof buf - strlen(buf) - 1);
	}
	return buf;
}

int
prov_package_image_ok(const struct provider *p, const char *image)
{
	const char *const	*v;

	if (p->package_images == NULL)
		return 1;
	for (v = p->package_images; *v != NULL; v++)
		if (strncmp(image, *v, strlen(*v)) == 0)
			return 1;
	return 0;
}

static const char *const prov_state_names[] = {
	[PROV_PENDING] = "pending",
	[PROV_RUNNING] = "running",
	[PROV_SUCCEEDED] = "succeeded",
	[PROV_FAILED] = "failed",
	[PROV_PREEMPTED] = "preempted",
	[PROV_MAINTENANCE] = "maintenance",
	[PROV_STOCKOUT] = "stockout",
	[PROV_QUOTA] = "quota",
	[PROV_CANCELLED] = "cancelled",
	[PROV_LOST] = "lost",
	[PROV_ERROR] = "error",
};

/* Name of an enum prov_state, "unknown" if out of range. Static. */
const char *
prov_state_name(int state)
{
	if (state < 0 || (size_t)state >=
	    sizeof prov_state_names / sizeof prov_state_names[0])
		return "unknown";
	return prov_state_names[state];
}

/* Unix seconds of OBJ[KEY], or 0 when absent or not a time. */
int64_t
prov_json_time(json_t *obj, const char *key)
{
	int64_t	t;

	/*
	 * RFC 3339 (section 5.6): Compute Engine prints local time with an
	 * offset and milliseconds ("2024-06-26T11:42:22.006-07:00"); Batch
	 * and Vertex print UTC with up to nine fractional digits.
	 */
	if (when_parse(json_string_value(json_object_get(obj, key)),
	    &t) != 0)
		return 0;
	return t;
}

/* "https://.../zones/us-central1-a" -> "us-central1-a" (borrowed). */
const char *
prov_last_segment(const char *s)
{
	const char	*slash;

	if (s == NULL)
		return NULL;
	slash = strrchr(s, '/');
	return slash != NULL ? slash + 1 : s;
}

/* "3600s". New string. */
char *
prov_duration(int64_t sec)
{
	return xprintf("%llds", (long long)sec);
}

/* Copy S into DST of SIZE bytes, truncating; DST. */
char *
prov_strlcpy(char *dst, const char *s, size_t size)
{
	size_t	n;

	if (size == 0)
		return dst;
	n = s != NULL ? strlen(s) : 0;
	if (n >= size)
		n = size - 1;
	if (n > 0)
		memcpy(dst, s, n);
	dst[n] = '\0';
	return dst;
}

/* OBJ[KEY] = V, taking V; jansson fails only when memory runs out. */
void
prov_set(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(obj, key, v) != 0)
		fatalx("provider: out of memory building a request");
}

/* V itself, or die if jansson could not allocate it. */
json_t *
prov_checked(json_t *v)
{
	if (v == NULL)
		fatalx("provider: out of memory building a request");
	return v;
}

/* OBJ[KEY] = the string VALUE. */
static void
prov_set_str(json_t *obj, const char *key, const char *value)
{
	prov_set(obj, key, json_string(value));
}

/*
 * The user's labels first, then gpuq's on top: spec.c refuses user keys
 * starting with "gpuq", so nothing is lost, and a label gpuq relies on can
 * never be overwritten.
 */
json_t *
prov_labels_new(const struct prov_launch *l, int with_resource)
{
	json_t		*labels, *v;
	const char	*key;
	char		 num[32];

	labels = prov_checked(json_object());
	prov_site_labels(l, labels);
	if (json_is_object(l->labels)) {
		json_object_foreach(l->labels, key, v) {
			if (json_is_string(v))
				prov_set_str(labels, key, json_string_value(v));
		}
	}
	prov_set_str(labels, PROV_LABEL_INSTALL, l->install);
	(void)snprintf(num, sizeof num, "%lld", (long long)l->job_id);
	prov_set_str(labels, PROV_LABEL_JOB, num);
	(void)snprintf(num, sizeof num, "%d", l->attempt);
	prov_set_str(labels, PROV_LABEL_ATTEMPT, num);
	if (with_resource)
		prov_set_str(labels, PROV_LABEL_RESOURCE, l->resource);
	return labels;
}

/*
 * The label filter of every poll. Compute Engine (DESIGN G0.3), Batch
 * and Vertex AI all take `labels.KEY="VALUE"`; a '-' inside a label key
 * needs no quoting there (Google's own filters use labels.goog-... keys the
 * same way), and the value is quoted so any label value is one token.
 */
char *
prov_filter_install(const char *install)
{
	return xprintf("labels.%s=\"%s\"", PROV_LABEL_INSTALL, install);
}

/* Is V NULL or an array of strings? */
static int
prov_is_strings(json_t *v)
{
	size_t	 i;
	json_t	*s;

	if (v == NULL)
		return 1;
	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, s) {
		if (!json_is_string(s))
			return 0;
	}
	return 1;
}

/* Is V NULL or an object of strings? */
static int
prov_is_string_map(json_t *v)
{
	const char	*k;
	json_t		*s;

	if (v == NULL)
		return 1;
	if (!json_is_object(v))
		return 0;
	json_object_foreach(v, k, s) {
		if (!json_is_string(s))
			return 0;
	}
	return 1;
}

int
prov_launch_check(const struct prov_launch *l, char **cause)
{
	const char	*what = NULL;

	if (l->install == NULL || *l->install == '\0')
		what = "install id is empty";
	else if (l->resource == NULL || *l->resource == '\0')
		what = "resource name is empty";
	else if (l->region == NULL || *l->region == '\0')
		what = "region is empty";
	else if (l->machine_type == NULL || *l->machine_type == '\0')
		what = "machine type is empty";
	else if (l->image == NULL || *l->image == '\0')
		what = "container image is empty";
	else if (l->gpu != NULL && l->gpu_count < 1)
		what = "GPU count must be at least 1";
	else if (!prov_is_strings(l->command))
		what = "command must be an array of strings";
	else if (!prov_is_strings(l->args))
		what = "args must be an array of strings";
	else if (!prov_is_string_map(l->env))
		what = "env must map names to strings";
	else if (!prov_is_string_map(l->labels))
		what = "labels must map keys to strings";
	if (what == NULL)
		return 0;
	if (cause != NULL)
		*cause = xprintf("launch of %s: %s", l->resource != NULL &&
		    *l->resource != '\0' ? l->resource : "(unnamed)", what);
	return -EINVAL;
}

void
prov_observed_init(struct prov_observed *o)
{
	memset(o, 0, sizeof *o);
	o->state = PROV_PENDING;
	o->exit_code = -1;
	o->node = -1;
}

/* Decimal label value, or 0 when absent or not a plain number. */
static int64_t
prov_label_number(json_t *labels, const char *key)
{
	const char	*s = json_string_value(json_object_get(labels, key));
	char		*end;
	long long	 n;

	if (s == NULL || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0)
		return 0;
	return n;
}

void
prov_observed_labels(struct prov_observed *o, json_t *labels)
{
	int64_t	a;

	o->job_id = prov_label_number(labels, PROV_LABEL_JOB);
	a = prov_label_number(labels, PROV_LABEL_ATTEMPT);
	o->attempt = a <= 0x7fffffff ? (int)a : 0;
}

/* The number ending at END (exclusive) in S, after a '-': its value and
 * *RET_START, or -1. */
static int64_t
prov_name_number(const char *s, const char *end, const char **ret_start)
{
	const char	*p = end;
	int64_t		 n = 0, mul = 1;

	while (p > s && p[-1] >= '0' && p[-1] <= '9') {
		p--;
		if (end - p > 18)
			return -1;
	}
	if (p == end || p == s || p[-1] != '-')
		return -1;
	for (end--; end >= p; end--, mul *= 10)
		n += (*end - '0') * mul;
	*ret_start = p - 1;
	return n;
}

int
prov_name_parse(const char *resource, int64_t *ret_job, int *ret_attempt)
{
	const char	*dash, *dash2;
	int64_t		 attempt, job;

	if (resource == NULL || strncmp(resource, "gpuq-", 5) != 0)
		return -EINVAL;
	attempt = prov_name_number(resource, resource + strlen(resource),
	    &dash);
	if (attempt <= 0 || attempt > 0x7fffffff)
		return -EINVAL;
	job = prov_name_number(resource, dash, &dash2);
	if (job <= 0 || dash2 <= resource + 5)
		return -EINVAL;
	*ret_job = job;
	*ret_attempt = (int)attempt;
	return 0;
}

char *
prov_compute_metric(const struct gpu_type *gpu, int spot)
{
	if (gpu == NULL || gpu->quota == NULL)
		return NULL;
	return xprintf("%s%s_GPUS", spot ? "PREEMPTIBLE_" : "", gpu->quota);
}

char *
prov_vertex_metric(const struct gpu_type *gpu, int spot)
{
	if (gpu == NULL || gpu->vertex_quota == NULL)
		return NULL;
	return xprintf("custom_model_training_%snvidia_%s_gpus",
	    spot ? "preemptible_" : "", gpu->vertex_quota);
}

/*
 * Every provider's quota_metric: quota.c names the metric, as it knows
 * whether Spot VMs in REGION have preemptible quota of their own (else
 * they draw on the on-demand one); without G, the plain names of
 * prov_vertex_metric() and prov_compute_metric() stand in. Batch VMs
 * are Compute VMs: only Vertex AI counts GPUs in a quota of its own.
 */
char *
prov_quota_metric(struct gcp *g, int service, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	char		 buf[QUOTA_METRIC_MAX];
	const char	*m;
	int		 vertex = service == GCP_SERVICE_VERTEX;

	*ret_service = vertex ? "vertex" : "compute";
	if (gpu == NULL)
		return NULL;
	if (g == NULL)
		return vertex ? prov_vertex_metric(gpu, spot) :
		    prov_compute_metric(gpu, spot);
	m = quota_gpu_metric(gcp_quota(g), (enum gcp_service)service, region,
	    gpu->name, spot, buf);
	return m != NULL ? xstrdup(m) : NULL;
}

/*
 * A failed call's error as the scheduler needs it (provider.h enum
 * prov_fail). 409 means ALREADY_EXISTS on a create (Compute's
 * alreadyExists, Batch's ALREADY_EXISTS): the resource is there, adopt it;
 * ABORTED is the other 409 and may pass.
 */
void
prov_result_from_error(const struct gcp_error *e, struct prov_result *r)
{
	memset(r, 0, sizeof *r);
	switch (e->kind) {
	case GCP_ERR_NONE:
		r->fail = PROV_FAIL_NONE;
		break;
	case GCP_ERR_QUOTA:
		r->fail = PROV_FAIL_QUOTA;
		break;
	case GCP_ERR_STOCKOUT:
		r->fail = PROV_FAIL_STOCKOUT;
		break;
	case GCP_ERR_AUTH:
	case GCP_ERR_PERMISSION:
		r->fail = PROV_FAIL_AUTH;
		break;
	case GCP_ERR_CONFLICT:
		r->fail = e->status != NULL && strcmp(e->status, "ABORTED") ==
		    0 ? PROV_FAIL_TRANSIENT : PROV_FAIL_EXISTS;
		break;
	case GCP_ERR_NOT_FOUND:
	case GCP_ERR_INVALID:
		r->fail = PROV_FAIL_INVALID;
		break;
	default:
		r->fail = PROV_FAIL_TRANSIENT;
		break;
	}
	r->message = e->message;
	r->zones_available = e->zones_available;
	r->quota_metric = e->quota_metric;
}

/*
 * A cancel or delete is done once the cloud has accepted it, and also
 * when the resource is already gone (404): a repeat after a lost answer,
 * or a resource that was cleaned up another way.
 */
void
prov_result_from_cancel(const struct gcp_error *e, struct prov_result *r)
{
	memset(r, 0, sizeof *r);
	if (e != NULL && e->kind != GCP_ERR_NONE &&
	    e->kind != GCP_ERR_NOT_FOUND)
		prov_result_from_error(e, r);
}

/*
 * A request that could not even start has no answer from the cloud:
 * kind CANCELLED when the HTTP client is shutting down (-ESHUTDOWN),
 * else OTHER.
 */
void
prov_error_start(struct gcp_error *e, int rc, const char *fmt, ...)
{
	va_list	ap;
	char	what[256];

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	gcp_error_init(e);
	e->kind = rc == -ESHUTDOWN ? GCP_ERR_CANCELLED : GCP_ERR_OTHER;
	e->message = xprintf("%s: %s", what, strerror(-rc));
}

/* FNV-1a, 64 bits, continuing from H. */
static uint64_t
prov_fnv(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Two FNV-1a hashes of SEED, '/' and PURPOSE make 128 bits, written as
 * an RFC 9562 version 8 (vendor-specific) UUID. Not a secret, only a
 * stable, distinct name: Compute Engine keeps requestIds per project, so
 * the delete of a VM must not reuse the requestId of its insert.
 */
void
prov_uuid_derive(const char *seed, const char *purpose, char out[37])
{
	uint64_t	hi, lo;

	hi = prov_fnv(prov_fnv(prov_fnv(0xcbf29ce484222325ULL, seed), "/"),
	    purpose);
	lo = prov_fnv(prov_fnv(prov_fnv(0x84222325cbf29ce4ULL, purpose),
	    "/"), seed);
	hi = (hi & ~0xf000ULL) | 0x8000ULL;			/* version 8 */
	lo = (lo & ~(0x3ULL << 62)) | (0x2ULL << 62);		/* variant 10 */
	(void)snprintf(out, 37, "%08llx-%04llx-%04llx-%04llx-%012llx",
	    (unsigned long long)(hi >> 32),
	    (unsigned long long)((hi >> 16) & 0xffff),
	    (unsigned long long)(hi & 0xffff),
	    (unsigned long long)(lo >> 48),
	    (unsigned long long)(lo & 0xffffffffffffULL));
}

const char *
prov_project(struct gcp *g)
{
	const char	*p = gcp_conf(g)->project;

	return p != NULL && *p != '\0' ? p : NULL;
}

int
prov_call(struct gcp *g, int api, const char *method, const char *url,
    json_t *body, int flags, void (*cb)(const struct http_resp *, void *),
    void *arg)
{
	struct http_req	req;

	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	req.json = body;
	req.api = (enum gcp_api)api;
	req.flags = HTTP_AUTH | flags;
	return http_request_start(gcp_http(g), &req, cb, arg);
}

/* One DELETE in progress (prov_delete). */
struct prov_deleter {
	prov_done_cb	 done;
	void		*arg;
};

static void
prov_delete_on_answer(const struct http_resp *resp, void *arg)
{
	struct prov_deleter	*pd = arg;
	struct prov_result	 r;

	prov_result_from_cancel(&resp->err, &r);
	pd->done(&r, pd->arg);
	free(pd);
}

int
prov_delete(struct gcp *g, int api, const char *url, prov_done_cb done,
    void *arg)
{
	struct prov_deleter	*pd;
	int			 rc;

	pd = xcalloc(1, sizeof *pd);
	pd->done = done;
	pd->arg = arg;
	rc = prov_call(g, api, "DELETE", url, NULL, 0, prov_delete_on_answer,
	    pd);
	if (rc != 0)
		free(pd);
	return rc;
}

/* One listing in progress (prov_list). */
struct prov_lister {
	struct gcp		*g;
	int			 api;
	char			*url;		/* without pageToken */
	prov_page_fn		 page;
	prov_list_done_fn	 done;
	void			*arg;
	int			 pages;
	int			 unfiltered;	/* the filter was refused */
};

static void	prov_list_on_answer(const struct http_resp *, void *);

/* Ask for the page after TOKEN (NULL: the first). 0 or -errno. */
static int
prov_list_next(struct prov_lister *ls, const char *token)
{
	char		*url, *esc;
	int		 rc;

	if (token == NULL)
		url = xstrdup(ls->url);
	else {
		esc = gcp_escape(token);
		url = xprintf("%s%cpageToken=%s", ls->url,
		    strchr(ls->url, '?') != NULL ? '&' : '?', esc);
		free(esc);
	}
	rc = prov_call(ls->g, ls->api, "GET", url, NULL, 0,
	    prov_list_on_answer, ls);
	free(url);
	return rc;
}

static void
prov_list_free(struct prov_lister *ls)
{
	free(ls->url);
	free(ls);
}

/* End the walk: DONE once with ERR (NULL: success), then free. */
static void
prov_list_end(struct prov_lister *ls, const struct gcp_error *err)
{
	ls->done(err, ls->arg);
	prov_list_free(ls);
}

/*
 * URL without its filter= parameter (new string), or NULL if it has
 * none.
 */
static char *
prov_url_unfiltered(const char *url)
{
	const char	*q, *p, *end;
	char		*out;

	if ((q = strchr(url, '?')) == NULL)
		return NULL;
	for (p = q + 1; p != NULL && *p != '\0'; p = strchr(p, '&')) {
		if (*p == '&')
			p++;
		if (strncmp(p, "filter=", 7) != 0)
			continue;
		end = strchr(p, '&');
		out = xprintf("%.*s%s", (int)(p - url), url,
		    end != NULL ? end + 1 : "");
		if (out[strlen(out) - 1] == '&' ||
		    out[strlen(out) - 1] == '?')
			out[strlen(out) - 1] = '\0';
		return out;
	}
	return NULL;
}

/*
 * Batch and Vertex AI document label filters (DESIGN G0.3) but whether
 * they take a hyphenated key such as gpuq-install is unsettled: when the
 * first page is refused as an invalid argument, the listing is asked
 * again without the filter, and every reader of a listing checks the
 * labels itself (prov_poll_on_page(), vertex_find_in_page()). Returns 1
 * if the walk goes on unfiltered.
 */
static int
prov_list_refused_filter(struct prov_lister *ls, const struct http_resp *resp)
{
	char	*url;

	if (resp->err.kind != GCP_ERR_INVALID || resp->status != 400 ||
	    ls->pages > 0 || ls->unfiltered ||
	    (ls->api != GCP_API_BATCH && ls->api != GCP_API_VERTEX) ||
	    (url = prov_url_unfiltered(ls->url)) == NULL)
		return 0;
	log_warnx("%s refused the list filter (%s); listing without it and "
	    "checking labels here", ls->api == GCP_API_BATCH ? "Cloud Batch" :
	    "Vertex AI", resp->err.message != NULL ? resp->err.message :
	    "400");
	free(ls->url);
	ls->url = url;
	ls->unfiltered = 1;
	if (prov_list_next(ls, NULL) != 0)
		return 0;
	return 1;
}

static void
prov_list_on_answer(const struct http_resp *resp, void *arg)
{
	struct prov_lister	*ls = arg;
	struct gcp_error	 e;
	const char		*token;
	int			 rc;

	if (resp->err.kind != GCP_ERR_NONE) {
		if (!prov_list_refused_filter(ls, resp))
			prov_list_end(ls, &resp->err);
		return;
	}
	if (!json_is_object(resp->json)) {
		gcp_error_init(&e);
		e.kind = GCP_ERR_OTHER;
		e.code = resp->status;
		e.message = xstrdup("the listing's answer is not a JSON "
		    "object");
		prov_list_end(ls, &e);
		gcp_error_done(&e);
		return;
	}
	ls->pages++;
	ls->page(resp->json, ls->arg);
	token = json_string_value(json_object_get(resp->json,
	    "nextPageToken"));
	if (token == NULL || *token == '\0') {
		prov_list_end(ls, NULL);
		return;
	}
	if ((rc = prov_list_next(ls, token)) != 0) {
		prov_error_start(&e, rc, "cannot ask for page %d",
		    ls->pages + 1);
		prov_list_end(ls, &e);
		gcp_error_done(&e);
	}
}

int
prov_list(struct gcp *g, int api, char *url, prov_page_fn page,
    prov_list_done_fn done, void *arg)
{
	struct prov_lister	*ls;
	int			 rc;

	ls = xcalloc(1, sizeof *ls);
	ls->g = g;
	ls->api = api;
	ls->url = url;
	ls->page = page;
	ls->done = done;
	ls->arg = arg;
	if ((rc = prov_list_next(ls, NULL)) != 0) {
		prov_list_free(ls);
		return rc;
	}
	return 0;
}

/* One poll by listing in progress (prov_poll_list). */
struct prov_poller {
	const struct prov_listing *how;
	char			*install;	/* the label value to keep */
	char			*partial;	/* first unreachable location */
	prov_poll_cb		 cb;
	prov_done_cb		 done;
	void			*arg;
};

static void
prov_poller_free(struct prov_poller *pp)
{
	free(pp->partial);
	free(pp->install);
	free(pp);
}

static void
prov_poll_on_page(json_t *page, void *arg)
{
	struct prov_poller	*pp = arg;
	struct prov_observed	 o;
	struct prov_text	 t;
	const char		*inst, *where;
	json_t			*item;
	size_t			 i;

	json_array_foreach(json_object_get(page, pp->how->items), i, item) {
		inst = json_string_value(json_object_get(json_object_get(item,
		    "labels"), PROV_LABEL_INSTALL));
		if (inst == NULL || strcmp(inst, pp->install) != 0)
			continue;
		if (pp->how->map(item, &o, &t) == 0)
			pp->cb(&o, pp->arg);
	}
	if (pp->how->service == NULL)
		return;
	where = json_string_value(json_array_get(json_object_get(page,
	    "unreachable"), 0));
	if (where != NULL && pp->partial == NULL)
		pp->partial = xstrdup(where);
}

/*
 * The listing ended. Locations the service could not reach make the
 * poll partial: the resources seen were reported, but one missing from
 * the answer may still exist, so the poll reports a transient failure.
 */
static void
prov_poll_on_done(const struct gcp_error *err, void *arg)
{
	struct prov_poller	*pp = arg;
	struct prov_result	 r;
	char			*msg = NULL;

	memset(&r, 0, sizeof r);
	if (err != NULL)
		prov_result_from_error(err, &r);
	else if (pp->partial != NULL) {
		r.fail = PROV_FAIL_TRANSIENT;
		msg = xprintf("%s could not reach %s; the listing is partial",
		    pp->how->service, pp->partial);
		r.message = msg;
	}
	pp->done(&r, pp->arg);
	free(msg);
	prov_poller_free(pp);
}

int
prov_poll_list(struct gcp *g, const struct prov_listing *how, char *url,
    const char *install, prov_poll_cb cb, prov_done_cb done, void *arg)
{
	struct prov_poller	*pp;
	int			 rc;

	pp = xcalloc(1, sizeof *pp);
	pp->how = how;
	pp->install = xstrdup(install);
	pp->cb = cb;
	pp->done = done;
	pp->arg = arg;
	rc = prov_list(g, how->api, url, prov_poll_on_page, prov_poll_on_done,
	    pp);
	if (rc != 0)
		prov_poller_free(pp);
	return rc;
}

char *
prov_reservation_path(const struct prov_launch *l)
{
	if (l->reservation == NULL || *l->reservation == '\0')
		return NULL;
	if (l->site == NULL || l->site->project == NULL ||
	    *l->site->project == '\0' || l->zone == NULL || *l->zone == '\0')
		return xstrdup(l->reservation);
	return xprintf("projects/%s/zones/%s/reservations/%s",
	    l->site->project, l->zone, l->reservation);
}
