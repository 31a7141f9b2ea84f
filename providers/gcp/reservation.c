/*
 * reservation.c: the project's Compute Engine reservations
 * (reservation.h; doc/DESIGN.md "Reservations").
 *
 * reservations.aggregatedList answers a map of "zones/Z" to either
 * {"reservations": [...]} or {"warning": {...}} (an unreachable zone;
 * DESIGN A.5, L.1), one page at a time behind nextPageToken. The pages
 * build a new list that replaces the old one only when the last page is
 * read, so a failed refresh keeps the last reading whole.
 *
 * Knows HTTP and jansson; nothing of the daemon.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/reservation.h"

#define RESV_PAGE	500	/* maxResults maximum (DESIGN 0.2) */

struct resv_item {
	char		*name;
	char		*zone;
	char		*region;
	char		*machine;
	char		*gpu;		/* Compute spelling, "" none */
	int		 gpus;
	int64_t		 count;
	int64_t		 in_use;
	int		 specific;
	int		 ready;
};

/* VMs launched into a reservation a listing has not counted yet. */
struct resv_hold {
	char		 zone[RESV_NAME_MAX];
	char		 name[RESV_NAME_MAX];
	int64_t		 vms;
	uint64_t	 at;		/* uv_now of the launch */
};

struct resv {
	struct http		*http;		/* borrowed */
	struct gcp_conf		*conf;		/* owned copy */
	int			 dead;
	int			 inflight;

	struct resv_item	*v;		/* the last reading */
	size_t			 n;
	struct resv_item	*nv;		/* pages being read */
	size_t			 nn;
	char			*warning;	/* unreachable zones */
	char			*nwarning;
	uint64_t		 fetched;	/* uv_now the reading began */
	uint64_t		 started;	/* uv_now this refresh began */

	struct resv_hold	*h;
	size_t			 nh;

	resv_cb			 cb;
	void			*arg;
};

static uint64_t
resv_now(struct resv *rv)
{
	return uv_now(http_loop(rv->http));
}

static void
resv_items_free(struct resv_item *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].zone);
		free(v[i].region);
		free(v[i].machine);
		free(v[i].gpu);
	}
	free(v);
}

int
resv_new(struct http *http, const struct gcp_conf *conf, struct resv **ret)
{
	struct resv	*rv;

	rv = xcalloc(1, sizeof *rv);
	rv->http = http;
	rv->conf = gcp_conf_dup(conf);
	*ret = rv;
	return 0;
}

static void
resv_really_free(struct resv *rv)
{
	resv_items_free(rv->v, rv->n);
	resv_items_free(rv->nv, rv->nn);
	free(rv->warning);
	free(rv->nwarning);
	free(rv->h);
	gcp_conf_free(rv->conf);
	free(rv);
}

void
resv_free(struct resv *rv)
{
	if (rv == NULL || rv->dead)
		return;
	rv->dead = 1;
	rv->cb = NULL;
	if (rv->inflight == 0)
		resv_really_free(rv);
}

/* Is the list [gcp] reservations the one word W? */
static int
resv_conf_is(const struct resv *rv, const char *w)
{
	return rv->conf->nreservations == 1 &&
	    strcmp(rv->conf->reservations[0], w) == 0;
}

int
resv_enabled(const struct resv *rv)
{
	return !resv_conf_is(rv, "none");
}

/* May jobs use reservation NAME? */
static int
resv_wanted(const struct resv *rv, const char *name)
{
	size_t	i;

	if (rv->conf->nreservations == 0 || resv_conf_is(rv, "auto"))
		return 1;
	for (i = 0; i < rv->conf->nreservations; i++)
		if (strcmp(rv->conf->reservations[i], name) == 0)
			return 1;
	return 0;
}

/* The last path segment of a URL or name ("zones/us-central1-a"). */
static const char *
resv_base(const char *s)
{
	const char	*p;

	if (s == NULL)
		return "";
	p = strrchr(s, '/');
	return p != NULL ? p + 1 : s;
}

/* An int64 that Compute writes as a string, or a number. */
static int64_t
resv_int(json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return 0;
}

/* Add reservation R (one element of "reservations") seen in KEY. */
static int
resv_item_add(struct resv *rv, const char *key, json_t *r)
{
	struct resv_item	*it;
	json_t			*sr, *ip, *acc;
	const struct gpu_type	*g;
	const char		*name, *zone, *status, *type;
	size_t			 n;

	name = json_string_value(json_object_get(r, "name"));
	sr = json_object_get(r, "specificReservation");
	if (name == NULL || !json_is_object(sr))
		return 0;	/* aggregate reservations: not for VMs */
	zone = resv_base(json_string_value(json_object_get(r, "zone")));
	if (*zone == '\0')
		zone = resv_base(key);
	status = json_string_value(json_object_get(r, "status"));
	ip = json_object_get(sr, "instanceProperties");
	rv->nv = xreallocarray(rv->nv, rv->nn + 1, sizeof *rv->nv);
	it = &rv->nv[rv->nn++];
	memset(it, 0, sizeof *it);
	it->name = xstrdup(name);
	it->zone = xstrdup(zone);
	n = strlen(zone);
	/* A zone is its region and "-a": us-central1-a. */
	it->region = n > 2 && zone[n - 2] == '-' ? xstrndup(zone, n - 2) :
	    xstrdup(zone);
	it->machine = xstrdup(resv_base(json_string_value(json_object_get(ip,
	    "machineType"))));
	acc = json_array_get(json_object_get(ip, "guestAccelerators"), 0);
	type = resv_base(json_string_value(json_object_get(acc,
	    "acceleratorType")));
	g = *type != '\0' ? gpu_lookup(type) : NULL;
	it->gpu = xstrdup(g != NULL ? g->name : type);
	it->gpus = (int)json_integer_value(json_object_get(acc,
	    "acceleratorCount"));
	it->count = resv_int(json_object_get(sr, "count"));
	it->in_use = resv_int(json_object_get(sr, "inUseCount"));
	it->specific = json_is_true(json_object_get(r,
	    "specificReservationRequired"));
	it->ready = status != NULL && strcmp(status, "READY") == 0;
	return 1;
}

int
resv_page_apply(struct resv *rv, json_t *page)
{
	json_t		*items, *scope, *list, *r, *w;
	const char	*key, *code;
	char		*t;
	size_t		 i;
	int		 added = 0;

	items = json_object_get(page, "items");
	json_object_foreach(items, key, scope) {
		list = json_object_get(scope, "reservations");
		json_array_foreach(list, i, r)
			added += resv_item_add(rv, key, r);
		w = json_object_get(scope, "warning");
		code = json_string_value(json_object_get(w, "code"));
		/* NO_RESULTS_ON_PAGE is the normal "none here". */
		if (code == NULL || strcmp(code, "NO_RESULTS_ON_PAGE") == 0)
			continue;
		t = xprintf("%s%s%s", rv->nwarning ? rv->nwarning : "",
		    rv->nwarning ? ", " : "", resv_base(key));
		free(rv->nwarning);
		rv->nwarning = t;
	}
	return added;
}

void
resv_page_done(struct resv *rv)
{
	size_t	i, k;

	resv_items_free(rv->v, rv->n);
	rv->v = rv->nv;
	rv->n = rv->nn;
	rv->nv = NULL;
	rv->nn = 0;
	free(rv->warning);
	rv->warning = rv->nwarning;
	rv->nwarning = NULL;
	rv->fetched = rv->started;
	/* Holds older than this listing's start are in its inUseCount. */
	for (i = k = 0; i < rv->nh; i++)
		if (rv->h[i].at >= rv->started)
			rv->h[k++] = rv->h[i];
	rv->nh = k;
	if (rv->warning != NULL)
		log_warnx("reservations: zones unreachable: %s; their "
		    "reservations keep no free VMs until they answer",
		    rv->warning);
}

/* The refresh ended: ERROR (< 0) with CAUSE, or 0. */
static void
resv_end(struct resv *rv, int error, const char *cause)
{
	resv_cb	 cb = rv->cb;

	rv->cb = NULL;
	resv_items_free(rv->nv, rv->nn);
	rv->nv = NULL;
	rv->nn = 0;
	free(rv->nwarning);
	rv->nwarning = NULL;
	if (cb != NULL)
		cb(error, cause, rv->arg);
}

static int	resv_send(struct resv *, const char *token);

static void
resv_on_answer(const struct http_resp *r, void *arg)
{
	struct resv	*rv = arg;
	const char	*tok;
	char		*text, *cause;

	rv->inflight--;
	if (rv->dead) {
		if (rv->inflight == 0)
			resv_really_free(rv);
		return;
	}
	if (r->status != 200 || !json_is_object(r->json)) {
		text = gcp_error_text(&r->err);
		cause = xprintf("reading Compute Engine reservations failed: "
		    "%s", text);
		free(text);
		resv_end(rv, -EIO, cause);
		free(cause);
		return;
	}
	(void)resv_page_apply(rv, r->json);
	tok = json_string_value(json_object_get(r->json, "nextPageToken"));
	if (tok != NULL && *tok != '\0') {
		if (resv_send(rv, tok) < 0)
			resv_end(rv, -EIO, "reading Compute Engine "
			    "reservations: cannot start the next page");
		return;
	}
	resv_page_done(rv);
	resv_end(rv, 0, NULL);
}

/* Ask for one page (TOKEN NULL: the first). */
static int
resv_send(struct resv *rv, const char *token)
{
	struct http_req	 req;
	char		*url;
	int		 rc;

	url = gcp_url(rv->conf, GCP_API_COMPUTE, NULL,
	    "projects/%s/aggregated/reservations?maxResults=%d&"
	    "returnPartialSuccess=true", rv->conf->project,
	    http_page_size(rv->http, RESV_PAGE));
	url = gcp_url_page(url, token);
	memset(&req, 0, sizeof req);
	req.url = url;
	req.flags = HTTP_AUTH;
	req.api = GCP_API_COMPUTE;
	rc = http_request_start(rv->http, &req, resv_on_answer, rv);
	free(url);
	if (rc < 0)
		return rc;
	rv->inflight++;
	return 0;
}

int
resv_refresh(struct resv *rv, int force, uint64_t ttl_ms, resv_cb cb,
    void *arg)
{
	uint64_t	now;
	int		rc;

	if (rv->dead)
		return -ESHUTDOWN;
	if (!resv_enabled(rv))
		return -ENOTSUP;
	if (rv->conf->project == NULL || *rv->conf->project == '\0')
		return -EINVAL;
	if (rv->cb != NULL)
		return -EBUSY;		/* one refresh at a time */
	now = resv_now(rv);
	if (!force && rv->fetched != 0 && now < rv->fetched + ttl_ms)
		return 1;
	rv->started = now;
	rv->cb = cb;
	rv->arg = arg;
	if ((rc = resv_send(rv, NULL)) < 0) {
		rv->cb = NULL;
		return rc;
	}
	return 0;
}

/* VMs held in (ZONE, NAME). */
static int64_t
resv_held(const struct resv *rv, const char *zone, const char *name)
{
	int64_t	n = 0;
	size_t	i;

	for (i = 0; i < rv->nh; i++)
		if (strcmp(rv->h[i].zone, zone) == 0 &&
		    strcmp(rv->h[i].name, name) == 0)
			n += rv->h[i].vms;
	return n;
}

/* Fill ROW from item IT. */
static void
resv_row_fill(const struct resv *rv, const struct resv_item *it,
    struct resv_row *row)
{
	int64_t	free_vms;

	row->name = it->name;
	row->zone = it->zone;
	row->region = it->region;
	row->machine_type = it->machine;
	row->gpu = it->gpu;
	row->gpus_per_vm = it->gpus;
	row->count = it->count;
	row->in_use = it->in_use;
	row->held = resv_held(rv, it->zone, it->name);
	free_vms = it->ready ? it->count - it->in_use - row->held : 0;
	row->free_vms = free_vms > 0 ? free_vms : 0;
	row->specific_required = it->specific;
	row->wanted = it->ready && resv_wanted(rv, it->name);
}

int
resv_next(struct resv *rv, size_t *iter, struct resv_row *ret)
{
	if (*iter >= rv->n)
		return 0;
	resv_row_fill(rv, &rv->v[(*iter)++], ret);
	return 1;
}

int
resv_free_vms(struct resv *rv, const char *zone, const char *name,
    const char *machine_type, const char *gpu, int gpus, int64_t *ret)
{
	const struct gpu_type	*g = gpu_lookup(gpu);
	struct resv_row		 row;
	size_t			 i;

	for (i = 0; i < rv->n; i++) {
		if (strcmp(rv->v[i].zone, zone) != 0 ||
		    strcmp(rv->v[i].name, name) != 0)
			continue;
		resv_row_fill(rv, &rv->v[i], &row);
		if (!row.wanted || strcmp(row.machine_type, machine_type) != 0)
			return -ENOENT;
		/* A machine type with built-in GPUs (a2, a3, g2) may list
		 * none; one that lists them must list the job's. */
		if (*row.gpu != '\0' && (g == NULL || strcmp(row.gpu,
		    g->name) != 0 || row.gpus_per_vm != gpus))
			return -ENOENT;
		*ret = row.free_vms;
		return 0;
	}
	return -ENOENT;
}

void
resv_hold(struct resv *rv, const char *zone, const char *name, int64_t vms)
{
	struct resv_hold	*h;

	rv->h = xreallocarray(rv->h, rv->nh + 1, sizeof *rv->h);
	h = &rv->h[rv->nh++];
	(void)snprintf(h->zone, sizeof h->zone, "%s", zone);
	(void)snprintf(h->name, sizeof h->name, "%s", name);
	h->vms = vms;
	h->at = resv_now(rv);
}

const char *
resv_warning(struct resv *rv)
{
	return rv->warning;
}

json_t *
resv_to_json(struct resv *rv, const char *region, const char *gpu)
{
	const struct gpu_type	*g = gpu != NULL ? gpu_lookup(gpu) : NULL;
	struct resv_row		 row;
	json_t			*a, *o;
	size_t			 it = 0;
	int			 per;

	if ((a = json_array()) == NULL)
		return NULL;
	while (resv_next(rv, &it, &row) == 1) {
		if (region != NULL && strcmp(row.region, region) != 0)
			continue;
		if (gpu != NULL && (g == NULL || strcmp(row.gpu, g->name) != 0))
			continue;
		per = row.gpus_per_vm;
		o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I, "
		    "s:I, s:I, s:I, s:b, s:b}", "name", row.name, "zone",
		    row.zone, "region", row.region, "machine_type",
		    row.machine_type, "gpu", row.gpu, "gpus_per_vm", per,
		    "count", (json_int_t)row.count, "in_use",
		    (json_int_t)row.in_use, "held", (json_int_t)row.held,
		    "free_vms", (json_int_t)row.free_vms, "free_gpus",
		    (json_int_t)(row.free_vms * per), "total_gpus",
		    (json_int_t)(row.count * per), "specific_required",
		    row.specific_required, "wanted", row.wanted);
		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
