/*
 * doctor.c: `gpuq doctor`, the first-launch checks of a real project
 * (doc/DESIGN.md "A real project"; API-NOTES M), and the start-up test
 * that gpuqd may act as the job service account.
 *
 * Every check is one line of the report, in a fixed order: credentials
 * (which kind were found, and whether a token came), the project
 * (Resource Manager projects.get), each API the enabled providers need
 * (Service Usage services.get), gpuqd's permissions per service
 * (projects.testIamPermissions), the job service account (IAM
 * serviceAccounts.get and testIamPermissions for actAs), the checkpoint
 * bucket (Cloud Storage buckets.get and testIamPermissions), the network
 * and each configured subnetwork (Compute networks.get, subnetworks.get),
 * the boot image of the services that boot VMs from a public image
 * (Compute images.getFromFamily: READY and not deprecated, issue 15),
 * GPU quota somewhere (quota.c's readings) and prices (price.c's catalog
 * read). The requests run at once; the report goes when the last one is
 * back. A failing line carries the fix, written for a person at a shell.
 *
 * Knows the cloud's facade and the gcp layer; nothing of sockets, the
 * store or the scheduler. Which provider needs what comes from
 * gcp_site_needs(): no provider name is compared here.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/doctor.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/price.h"
#include "providers/gcp/quota.h"

#define DOCTOR_ACT_AS	"iam.serviceAccounts.actAs"

enum doctor_state { DOCTOR_WAIT, DOCTOR_OK, DOCTOR_FAIL };

struct doctor_line {
	char		*check;		/* "api batch.googleapis.com" */
	int		 state;		/* enum doctor_state */
	char		*detail;	/* what was found, or what is wrong */
	char		*fix;		/* when failing: what to do */
};

struct doctor;
struct doctor_probe;
typedef void	(*doctor_answer_fn)(struct doctor_probe *,
		    const struct http_resp *);

/* One request of one line. */
struct doctor_probe {
	struct doctor		*d;
	size_t			 line;
	doctor_answer_fn	 answer;
	char			*arg;		/* service, region, email... */
	json_t			*body;
};

struct doctor {
	struct cloud		*cloud;		/* borrowed */
	struct gcp		*gcp;		/* borrowed */
	const struct gcp_conf	*conf;		/* borrowed from gcp */
	char			*bucket;	/* checkpoint_root's, or NULL */
	struct doctor_line	*lines;
	size_t			 nlines;
	int			 pending;	/* answers owed, +1 while
						   starting */
	char			*auth_error;	/* a token could not be had */
	doctor_cb		 cb;
	void			*arg;
};

/* A new line CHECK (printf), waiting for its answer; its index. */
static size_t
doctor_line_add(struct doctor *d, const char *fmt, ...)
{
	struct doctor_line	*l;
	va_list			 ap;
	char			*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("doctor: out of memory");
	va_end(ap);
	d->lines = xreallocarray(d->lines, d->nlines + 1, sizeof *d->lines);
	l = &d->lines[d->nlines];
	memset(l, 0, sizeof *l);
	l->check = s;
	l->state = DOCTOR_WAIT;
	return d->nlines++;
}

/* Settle line I: ok with DETAIL, or failing with DETAIL and FIX. */
static void
doctor_set(struct doctor *d, size_t i, int ok, char *detail, char *fix)
{
	struct doctor_line	*l = &d->lines[i];

	free(l->detail);
	free(l->fix);
	l->state = ok ? DOCTOR_OK : DOCTOR_FAIL;
	l->detail = detail;
	l->fix = ok ? (free(fix), NULL) : fix;
}

static json_t *
doctor_report(struct doctor *d)
{
	json_t		*checks, *c, *r;
	size_t		 i;
	int		 passed = 0, failed = 0;

	checks = json_array();
	for (i = 0; i < d->nlines; i++) {
		c = json_pack("{s:s, s:b, s:s?, s:s?}",
		    "check", d->lines[i].check,
		    "ok", d->lines[i].state == DOCTOR_OK,
		    "detail", d->lines[i].detail,
		    "fix", d->lines[i].fix);
		if (c == NULL || json_array_append_new(checks, c) != 0)
			fatalx("doctor: out of memory");
		if (d->lines[i].state == DOCTOR_OK)
			passed++;
		else
			failed++;
	}
	r = json_pack("{s:o, s:i, s:i}", "checks", checks, "passed", passed,
	    "failed", failed);
	if (r == NULL)
		fatalx("doctor: out of memory");
	return r;
}

static void
doctor_free(struct doctor *d)
{
	size_t	i;

	for (i = 0; i < d->nlines; i++) {
		free(d->lines[i].check);
		free(d->lines[i].detail);
		free(d->lines[i].fix);
	}
	free(d->lines);
	free(d->bucket);
	free(d->auth_error);
	free(d);
}

/*
 * The credentials line, last: which kind were found (auth_describe),
 * and whether a token came for the calls.
 */
static void
doctor_credentials(struct doctor *d)
{
	const char	*what = auth_describe(gcp_auth(d->gcp));

	if (d->auth_error == NULL)
		doctor_set(d, 0, 1, xstrdup(what), NULL);
	else
		doctor_set(d, 0, 0, xprintf("%s: no token: %s", what,
		    d->auth_error), xstrdup("check [gcp] credentials: a "
		    "service-account key file readable by gpuqd, or on a VM "
		    "an attached service account, or 'gcloud auth "
		    "application-default login' for the user gpuqd runs as"));
}

/* One answer fewer owed; the last sends the report. */
static void
doctor_unref(struct doctor *d)
{
	json_t	*r;
	size_t	 i;

	if (--d->pending > 0)
		return;
	doctor_credentials(d);
	for (i = 0; i < d->nlines; i++)
		if (d->lines[i].state == DOCTOR_WAIT)
			doctor_set(d, i, 0, xstrdup("no answer"),
			    xstrdup("run gpuq doctor again"));
	r = doctor_report(d);
	d->cb(r, d->arg);
	json_decref(r);
	doctor_free(d);
}

/*
 * A failed call's words for line I, with FIX, unless the call failed
 * for want of a token (the credentials line says so) or a disabled API
 * (then the fix is to turn it on).
 */
static void
doctor_fail_call(struct doctor *d, size_t i, const struct http_resp *resp,
    const char *fix)
{
	const struct gcp_error	*e = &resp->err;
	char			*text = gcp_error_text(e);
	int			 k;

	if (e->kind == GCP_ERR_AUTH && d->auth_error == NULL)
		d->auth_error = xstrdup(text);
	for (k = 0; k < e->nreasons; k++)
		if (strcmp(e->reasons[k], "SERVICE_DISABLED") == 0 ||
		    strcmp(e->reasons[k], "accessNotConfigured") == 0) {
			doctor_set(d, i, 0, text, xprintf("the API this check "
			    "calls is turned off: turn it on (gcloud services "
			    "enable ... --project %s)", d->conf->project));
			return;
		}
	if (e->kind == GCP_ERR_AUTH)
		fix = "fix the credentials (the credentials check says how)";
	else if (e->kind == GCP_ERR_CANCELLED)
		fix = "gpuqd stopped meanwhile; run gpuq doctor again";
	doctor_set(d, i, 0, text, xstrdup(fix));
}

static void
doctor_on_resp(const struct http_resp *resp, void *arg)
{
	struct doctor_probe	*p = arg;
	struct doctor		*d = p->d;

	p->answer(p, resp);
	json_decref(p->body);
	free(p->arg);
	free(p);
	doctor_unref(d);
}

/* Start METHOD URL (taken) on API for line I, ANSWER its answer. */
static void
doctor_call(struct doctor *d, size_t i, int api, const char *method,
    char *url, json_t *body, const char *arg, doctor_answer_fn answer)
{
	struct doctor_probe	*p;
	struct http_req		 req;
	int			 rc;

	p = xcalloc(1, sizeof *p);
	p->d = d;
	p->line = i;
	p->answer = answer;
	p->arg = arg != NULL ? xstrdup(arg) : NULL;
	p->body = body;
	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	req.json = body;
	req.flags = HTTP_AUTH;
	req.api = (enum gcp_api)api;
	d->pending++;
	rc = http_request_start(gcp_http(d->gcp), &req, doctor_on_resp, p);
	free(url);
	if (rc != 0) {
		doctor_set(d, i, 0, xprintf("cannot ask: %s", strerror(-rc)),
		    xstrdup("run gpuq doctor again"));
		json_decref(p->body);
		free(p->arg);
		free(p);
		d->pending--;
	}
}

/* --- the project ------------------------------------------------------ */

static void
doctor_on_project(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	const char	*state;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, resp->err.kind ==
		    GCP_ERR_NOT_FOUND || resp->err.kind == GCP_ERR_PERMISSION ?
		    "check [gcp] project (the project id), and that gpuqd's "
		    "account is a member of it (roles/browser at least)" :
		    "check the network path to Google's APIs and run again");
		return;
	}
	state = json_string_value(json_object_get(resp->json, "state"));
	if (state != NULL && strcmp(state, "ACTIVE") != 0)
		doctor_set(d, p->line, 0, xprintf("project %s is %s",
		    d->conf->project, state), xstrdup("use an active project "
		    "in [gcp] project"));
	else
		doctor_set(d, p->line, 1, xprintf("%s (%s) is active",
		    d->conf->project, json_string_value(json_object_get(
		    resp->json, "name")) ? json_string_value(json_object_get(
		    resp->json, "name")) : "?"), NULL);
}

/* --- APIs ------------------------------------------------------------- */

static void
doctor_on_api(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	const char	*state;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "serviceusage.services.get (roles/serviceusage."
		    "serviceUsageConsumer), or turn on serviceusage."
		    "googleapis.com");
		return;
	}
	state = json_string_value(json_object_get(resp->json, "state"));
	if (state != NULL && strcmp(state, "ENABLED") == 0)
		doctor_set(d, p->line, 1, xstrdup("enabled"), NULL);
	else
		doctor_set(d, p->line, 0, xprintf("%s is %s", p->arg,
		    state != NULL ? state : "not enabled"), xprintf("gcloud "
		    "services enable %s --project %s", p->arg,
		    d->conf->project));
}

/* Add S to the set V[0..*N) unless it is there. */
static void
doctor_set_add(const char **v, size_t *n, size_t max, const char *s)
{
	size_t	i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i], s) == 0)
			return;
	if (*n < max)
		v[(*n)++] = s;
}

/* The services of the enabled providers, as enum gcp_service. */
static size_t
doctor_services(struct doctor *d, int *v, size_t max)
{
	enum gcp_service	 s;
	size_t			 i, n = 0;

	for (i = 0; i < cloud_nproviders(d->cloud) && n < max; i++)
		if (gcp_service_parse(cloud_provider_at(d->cloud, i)->name,
		    &s) == 0)
			v[n++] = (int)s;
	return n;
}

static void
doctor_apis(struct doctor *d)
{
	const struct gcp_needs	*nd;
	const char		*apis[32];
	int			 svc[8];
	size_t			 i, j, n = 0, ns;
	char			*url;

	ns = doctor_services(d, svc, 8);
	for (i = 0; i <= ns; i++) {
		nd = gcp_site_needs(i == ns ? -1 : svc[i]);
		for (j = 0; nd != NULL && nd->apis[j] != NULL; j++)
			doctor_set_add(apis, &n, 32, nd->apis[j]);
	}
	if (d->bucket != NULL)
		doctor_set_add(apis, &n, 32, "storage.googleapis.com");
	if (d->conf->job_service_account != NULL &&
	    *d->conf->job_service_account != '\0')
		doctor_set_add(apis, &n, 32, "iam.googleapis.com");
	for (i = 0; i < n; i++) {
		url = gcp_url(d->conf, GCP_API_SERVICEUSAGE, NULL,
		    "projects/%s/services/%s", d->conf->project, apis[i]);
		doctor_call(d, doctor_line_add(d, "api %s", apis[i]),
		    GCP_API_SERVICEUSAGE, "GET", url, NULL, apis[i],
		    doctor_on_api);
	}
}

/* --- gpuqd's permissions ----------------------------------------------- */

static void
doctor_on_perms(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	json_t		*asked, *got, *v, *w;
	size_t		 i, j, nmiss = 0;
	char		*miss = NULL, *t;
	int		 have;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "resourcemanager.projects.get (roles/browser) so its "
		    "permissions can be tested");
		return;
	}
	asked = json_object_get(p->body, "permissions");
	got = json_object_get(resp->json, "permissions");
	json_array_foreach(asked, i, v) {
		have = 0;
		json_array_foreach(got, j, w)
			if (json_equal(v, w))
				have = 1;
		if (have)
			continue;
		t = xprintf("%s%s%s", miss ? miss : "", miss ? ", " : "",
		    json_string_value(v));
		free(miss);
		miss = t;
		nmiss++;
	}
	if (nmiss == 0)
		doctor_set(d, p->line, 1, xprintf("all %zu granted",
		    json_array_size(asked)), NULL);
	else
		doctor_set(d, p->line, 0, xprintf("gpuqd's account lacks %s",
		    miss), xprintf("grant it %s in project %s (gcloud projects "
		    "add-iam-policy-binding %s --member=serviceAccount:ACCOUNT "
		    "--role=ROLE)", p->arg, d->conf->project,
		    d->conf->project));
	free(miss);
}

static void
doctor_perms(struct doctor *d)
{
	const struct gcp_needs	*nd;
	json_t			*perms;
	int			 svc[8];
	size_t			 i, j, ns;
	char			*url;

	ns = doctor_services(d, svc, 8);
	for (i = 0; i <= ns; i++) {
		nd = gcp_site_needs(i == ns ? -1 : svc[i]);
		if (nd == NULL)
			continue;
		perms = json_array();
		for (j = 0; nd->perms[j] != NULL; j++)
			json_array_append_new(perms, json_string(
			    nd->perms[j]));
		/* An external IP is a use of its own (API-NOTES M.2). */
		if (i < ns && svc[i] != GCP_SERVICE_VERTEX &&
		    !d->conf->no_external_ip)
			json_array_append_new(perms, json_string(
			    "compute.subnetworks.useExternalIp"));
		url = gcp_url(d->conf, GCP_API_RESOURCEMANAGER, NULL,
		    "projects/%s:testIamPermissions", d->conf->project);
		doctor_call(d, doctor_line_add(d, "permissions %s", nd->what),
		    GCP_API_RESOURCEMANAGER, "POST", url,
		    json_pack("{s:o}", "permissions", perms), nd->role,
		    doctor_on_perms);
	}
}

/* --- the job service account ------------------------------------------ */

static void
doctor_on_sa(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;

	if (resp->err.kind == GCP_ERR_NOT_FOUND) {
		doctor_set(d, p->line, 0, xprintf("no service account %s",
		    p->arg), xprintf("create it (gcloud iam service-accounts "
		    "create NAME --project PROJECT) or fix [gcp] "
		    "job_service_account"));
		return;
	}
	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "iam.serviceAccounts.get on it (roles/iam.serviceAccount"
		    "Viewer)");
		return;
	}
	if (json_is_true(json_object_get(resp->json, "disabled")))
		doctor_set(d, p->line, 0, xprintf("%s is disabled", p->arg),
		    xprintf("gcloud iam service-accounts enable %s", p->arg));
	else
		doctor_set(d, p->line, 1, xprintf("%s exists", p->arg), NULL);
}

/* The sentence and fix of a missing actAs on EMAIL. New strings. */
static void
doctor_act_as_text(const char *email, char **detail, char **fix)
{
	*detail = xprintf("gpuqd's account may not act as %s (no %s)", email,
	    DOCTOR_ACT_AS);
	*fix = xprintf("gcloud iam service-accounts add-iam-policy-binding "
	    "%s --member=serviceAccount:GPUQD_ACCOUNT "
	    "--role=roles/iam.serviceAccountUser", email);
}

/* Does the testIamPermissions answer RESP grant actAs? */
static int
doctor_act_as_granted(const struct http_resp *resp)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(resp->json, "permissions"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    DOCTOR_ACT_AS) == 0)
			return 1;
	return 0;
}

static void
doctor_on_act_as(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	char		*detail, *fix;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "fix the service account "
		    "first (the line above)");
		return;
	}
	if (doctor_act_as_granted(resp)) {
		doctor_set(d, p->line, 1, xprintf("gpuqd may act as %s",
		    p->arg), NULL);
		return;
	}
	doctor_act_as_text(p->arg, &detail, &fix);
	doctor_set(d, p->line, 0, detail, fix);
}

/* The actAs test request's URL and body for EMAIL. */
static char *
doctor_act_as_req(const struct gcp_conf *c, const char *email,
    json_t **ret_body)
{
	*ret_body = json_pack("{s:[s]}", "permissions", DOCTOR_ACT_AS);
	return gcp_url(c, GCP_API_IAM, NULL,
	    "projects/-/serviceAccounts/%s:testIamPermissions", email);
}

static void
doctor_account(struct doctor *d)
{
	const char	*sa = d->conf->job_service_account;
	json_t		*body;
	char		*url;

	if (sa == NULL || *sa == '\0') {
		doctor_set(d, doctor_line_add(d, "job service account"), 1,
		    xstrdup("none set: jobs run as each service's default "
		    "account"), NULL);
		return;
	}
	url = gcp_url(d->conf, GCP_API_IAM, NULL,
	    "projects/-/serviceAccounts/%s", sa);
	doctor_call(d, doctor_line_add(d, "job service account"), GCP_API_IAM,
	    "GET", url, NULL, sa, doctor_on_sa);
	url = doctor_act_as_req(d->conf, sa, &body);
	doctor_call(d, doctor_line_add(d, "act as job service account"),
	    GCP_API_IAM, "POST", url, body, sa, doctor_on_act_as);
}

/* --- the checkpoint bucket -------------------------------------------- */

static void
doctor_on_bucket(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;

	if (resp->err.kind == GCP_ERR_NOT_FOUND)
		doctor_set(d, p->line, 0, xprintf("no bucket gs://%s", p->arg),
		    xprintf("gcloud storage buckets create gs://%s --location "
		    "REGION, or fix [gcp] checkpoint_root", p->arg));
	else if (resp->err.kind != GCP_ERR_NONE)
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "storage.buckets.get on the bucket (roles/storage."
		    "objectUser)");
	else
		doctor_set(d, p->line, 1, xprintf("gs://%s exists", p->arg),
		    NULL);
}

static void
doctor_on_bucket_perms(struct doctor_probe *p, const struct http_resp *resp)
{
	static const char *const want[] = { "storage.objects.list",
	    "storage.objects.get", "storage.objects.create" };
	struct doctor	*d = p->d;
	json_t		*got, *v;
	size_t		 i, j;
	char		*miss = NULL, *t;
	int		 have;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "fix the bucket first (the "
		    "line above)");
		return;
	}
	got = json_object_get(resp->json, "permissions");
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		have = 0;
		json_array_foreach(got, j, v)
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), want[i]) == 0)
				have = 1;
		if (have)
			continue;
		t = xprintf("%s%s%s", miss ? miss : "", miss ? ", " : "",
		    want[i]);
		free(miss);
		miss = t;
	}
	if (miss == NULL) {
		doctor_set(d, p->line, 1, xstrdup("gpuqd may list, read and "
		    "write objects (the job account's own access shows only "
		    "when a job writes its first checkpoint)"), NULL);
		return;
	}
	doctor_set(d, p->line, 0, xprintf("gpuqd's account lacks %s on "
	    "gs://%s", miss, p->arg), xprintf("gcloud storage buckets "
	    "add-iam-policy-binding gs://%s --member=serviceAccount:ACCOUNT "
	    "--role=roles/storage.objectUser, for gpuqd's account and the "
	    "job service account", p->arg));
	free(miss);
}

static void
doctor_bucket(struct doctor *d)
{
	char	*url;

	if (d->bucket == NULL) {
		doctor_set(d, doctor_line_add(d, "checkpoint bucket"), 1,
		    xstrdup("no [gcp] checkpoint_root: jobs give their own "
		    "checkpoint.uri"), NULL);
		return;
	}
	url = gcp_url(d->conf, GCP_API_STORAGE, NULL, "b/%s", d->bucket);
	doctor_call(d, doctor_line_add(d, "checkpoint bucket"),
	    GCP_API_STORAGE, "GET", url, NULL, d->bucket, doctor_on_bucket);
	url = gcp_url(d->conf, GCP_API_STORAGE, NULL, "b/%s/iam/"
	    "testPermissions?permissions=storage.objects.list&permissions="
	    "storage.objects.get&permissions=storage.objects.create",
	    d->bucket);
	doctor_call(d, doctor_line_add(d, "checkpoint bucket permissions"),
	    GCP_API_STORAGE, "GET", url, NULL, d->bucket,
	    doctor_on_bucket_perms);
}

/* --- network and subnetworks ------------------------------------------ */

/* Does the Network RESP list a subnetwork in REGION? */
static int
doctor_net_has_region(json_t *net, const char *region)
{
	json_t	*v;
	size_t	 i;
	char	*want;
	int	 found = 0;

	want = xprintf("/regions/%s/subnetworks/", region);
	json_array_foreach(json_object_get(net, "subnetworks"), i, v)
		if (json_is_string(v) && strstr(json_string_value(v), want))
			found = 1;
	free(want);
	return found;
}

static void
doctor_on_network(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	char		*miss = NULL, *t;
	size_t		 i;

	if (resp->err.kind == GCP_ERR_NOT_FOUND) {
		doctor_set(d, p->line, 0, xprintf("no network %s", p->arg),
		    xstrdup("fix [gcp] network (for Shared VPC: projects/"
		    "HOST_PROJECT/global/networks/NAME)"));
		return;
	}
	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "compute.networks.get (roles/compute.networkViewer; on the "
		    "host project for Shared VPC)");
		return;
	}
	/* Every region used needs a subnetwork, listed or the network's. */
	for (i = 0; i < d->conf->nregions; i++) {
		if (gcp_site_subnetwork(d->conf, d->conf->regions[i]) != NULL ||
		    doctor_net_has_region(resp->json, d->conf->regions[i]))
			continue;
		t = xprintf("%s%s%s", miss ? miss : "", miss ? ", " : "",
		    d->conf->regions[i]);
		free(miss);
		miss = t;
	}
	if (miss == NULL)
		doctor_set(d, p->line, 1, xprintf("%s exists", p->arg), NULL);
	else
		doctor_set(d, p->line, 0, xprintf("%s has no subnetwork in %s",
		    p->arg, miss), xstrdup("name one per region in [gcp] "
		    "subnetwork, or leave those regions out of [gcp] regions"));
	free(miss);
}

static void
doctor_on_subnetwork(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;

	if (resp->err.kind == GCP_ERR_NOT_FOUND)
		doctor_set(d, p->line, 0, xprintf("no subnetwork %s", p->arg),
		    xstrdup("fix its item in [gcp] subnetwork"));
	else if (resp->err.kind != GCP_ERR_NONE)
		doctor_fail_call(d, p->line, resp, "grant gpuqd's account "
		    "compute.subnetworks.get and compute.subnetworks.use on it "
		    "(roles/compute.networkUser, on the host project for "
		    "Shared VPC)");
	else if (d->conf->no_external_ip && !json_is_true(json_object_get(
	    resp->json, "privateIpGoogleAccess")))
		doctor_set(d, p->line, 0, xprintf("%s has Private Google "
		    "Access off, and [gcp] external_ip = no", p->arg), xprintf(
		    "gcloud compute networks subnets update NAME --region "
		    "REGION --enable-private-ip-google-access"));
	else
		doctor_set(d, p->line, 1, xprintf("%s exists", p->arg), NULL);
}

static void
doctor_network(struct doctor *d)
{
	const char	*path;
	char		*net, *url;
	size_t		 i;

	net = gcp_site_network(d->conf);
	if (net == NULL) {
		net = xprintf("projects/%s/global/networks/default",
		    d->conf->project);
		if (d->conf->nsubnetworks > 0) {
			/* A subnetwork alone names its network. */
			free(net);
			net = NULL;
		}
	}
	if (net != NULL) {
		url = gcp_url(d->conf, GCP_API_COMPUTE, NULL, "%-s", net);
		doctor_call(d, doctor_line_add(d, "network"), GCP_API_COMPUTE,
		    "GET", url, NULL, net, doctor_on_network);
		free(net);
	}
	for (i = 0; i < d->conf->nsubnetworks; i++) {
		path = strchr(d->conf->subnetworks[i], ':');
		if (path == NULL)
			continue;
		url = gcp_url(d->conf, GCP_API_COMPUTE, NULL, "%-s", path + 1);
		doctor_call(d, doctor_line_add(d, "subnetwork %.*s",
		    (int)(path - d->conf->subnetworks[i]),
		    d->conf->subnetworks[i]), GCP_API_COMPUTE, "GET", url,
		    NULL, path + 1, doctor_on_subnetwork);
	}
}

/* --- the boot image --------------------------------------------------- */

static void
doctor_on_image(struct doctor_probe *p, const struct http_resp *resp)
{
	struct doctor	*d = p->d;
	const char	*status, *dep, *name;

	if (resp->err.kind != GCP_ERR_NONE) {
		doctor_fail_call(d, p->line, resp, resp->err.kind ==
		    GCP_ERR_NOT_FOUND ? "the image family is gone: update gpuq "
		    "(a newer release boots from a current family)" :
		    "check the network path to Google's APIs and run again");
		return;
	}
	status = json_string_value(json_object_get(resp->json, "status"));
	dep = json_string_value(json_object_get(json_object_get(resp->json,
	    "deprecated"), "state"));
	name = json_string_value(json_object_get(resp->json, "name"));
	if (name == NULL)
		name = "?";
	if (status == NULL || strcmp(status, "READY") != 0)
		doctor_set(d, p->line, 0, xprintf("%s of %s is %s", name,
		    p->arg, status != NULL ? status : "of no status"),
		    xstrdup("wait a few minutes and run gpuq doctor again"));
	else if (dep != NULL && strcmp(dep, "ACTIVE") != 0)
		doctor_set(d, p->line, 0, xprintf("%s of %s is %s", name,
		    p->arg, dep), xstrdup("the image family is retired: update "
		    "gpuq (a newer release boots from a current family)"));
	else
		doctor_set(d, p->line, 1, xprintf("%s is READY", name), NULL);
}

/* The boot image family of each enabled service that has one. */
static void
doctor_image(struct doctor *d)
{
	const struct gcp_needs	*nd;
	const char		*seen[8];
	int			 svc[8];
	size_t			 i, ns, n = 0, k;
	char			*url;

	ns = doctor_services(d, svc, 8);
	for (i = 0; i < ns; i++) {
		nd = gcp_site_needs(svc[i]);
		if (nd == NULL || nd->boot_image == NULL)
			continue;
		k = n;
		doctor_set_add(seen, &n, 8, nd->boot_image);
		if (k == n)
			continue;
		url = gcp_url(d->conf, GCP_API_COMPUTE, NULL, "%-s",
		    nd->boot_image);
		doctor_call(d, doctor_line_add(d, "boot image"),
		    GCP_API_COMPUTE, "GET", url, NULL, nd->boot_image,
		    doctor_on_image);
	}
}

/* --- quota and prices -------------------------------------------------- */

struct doctor_wait {
	struct doctor	*d;
	size_t		 line;
};

/* Is METRIC a GPU quota (NVIDIA_T4_GPUS, custom_model_training_..._gpus)? */
static int
doctor_gpu_metric(const char *m)
{
	return strstr(m, "NVIDIA_") != NULL || strstr(m, "nvidia_") != NULL;
}

static void
doctor_quota_judge(struct doctor *d, size_t line, int error,
    const char *cause)
{
	struct quota		*q = gcp_quota(d->gcp);
	struct quota_row	 row;
	size_t			 it = 0;
	int			 n = 0, zero_all = 0;
	char			*first = NULL;

	while (quota_next(q, &it, &row) == 1) {
		if (!row.known)
			continue;
		if (strcmp(row.metric, "GPUS_ALL_REGIONS") == 0 &&
		    row.limit <= 0)
			zero_all = 1;
		if (!doctor_gpu_metric(row.metric) || row.limit <= 0 ||
		    !gcp_conf_has_region(d->conf, row.region))
			continue;
		if (first == NULL)
			first = xprintf("%s %.0f in %s", row.metric, row.limit,
			    row.region);
		n++;
	}
	if (error < 0 && n == 0)
		doctor_set(d, line, 0, xprintf("quotas could not be read: %s",
		    cause != NULL ? cause : strerror(-error)), xstrdup(
		    "grant gpuqd's account compute.regions.get "
		    "(roles/compute.viewer) and, for Vertex AI, "
		    "cloudquotas.quotas.get (roles/cloudquotas.viewer)"));
	else if (n == 0 || zero_all)
		doctor_set(d, line, 0, xstrdup(zero_all ? "GPUS_ALL_REGIONS is "
		    "0: no GPU may run anywhere" : "no GPU quota above 0 in "
		    "the configured regions"), xprintf("request GPU quota for "
		    "project %s (console: IAM & Admin > Quotas, e.g. "
		    "NVIDIA_L4_GPUS in a region, and GPUS_ALL_REGIONS)",
		    d->conf->project));
	else
		doctor_set(d, line, 1, xprintf("%d GPU quota(s) above 0, e.g. "
		    "%s", n, first), NULL);
	free(first);
}

static void
doctor_on_quota(int error, const char *cause, void *arg)
{
	struct doctor_wait	*w = arg;
	struct doctor		*d = w->d;

	if (error == -ECANCELED)
		doctor_set(d, w->line, 0, xstrdup("gpuqd stopped meanwhile"),
		    xstrdup("run gpuq doctor again"));
	else
		doctor_quota_judge(d, w->line, error, cause);
	free(w);
	doctor_unref(d);
}

static void
doctor_quota(struct doctor *d)
{
	struct doctor_wait	*w;
	int			 rc;

	w = xcalloc(1, sizeof *w);
	w->d = d;
	w->line = doctor_line_add(d, "GPU quota");
	d->pending++;
	rc = quota_refresh(gcp_quota(d->gcp), 0, doctor_on_quota, w);
	if (rc != 0) {
		doctor_quota_judge(d, w->line, rc == 1 ? 0 : rc, NULL);
		free(w);
		d->pending--;
	}
}

static void
doctor_on_prices(int error, const char *cause, void *arg)
{
	struct doctor_wait	*w = arg;
	struct doctor		*d = w->d;
	struct price_row	 row;
	size_t			 it = 0, n = 0;

	while (price_next(gcp_price(d->gcp), &it, &row) == 1)
		n++;
	if (error == 0)
		doctor_set(d, w->line, 1, xprintf("Cloud Billing catalog read: "
		    "%zu prices", n), NULL);
	else
		doctor_set(d, w->line, 0, xprintf("the Cloud Billing catalog "
		    "could not be read: %s; gpuq uses its bundled prices (%s)",
		    cause != NULL ? cause : strerror(-error),
		    price_source(gcp_price(d->gcp))), xprintf("gcloud services "
		    "enable cloudbilling.googleapis.com --project %s",
		    d->conf->project));
	free(w);
	doctor_unref(d);
}

static void
doctor_prices(struct doctor *d)
{
	struct doctor_wait	*w;
	int			 rc;

	size_t			 line;
	time_t			 at;

	line = doctor_line_add(d, "prices");
	/* Read once already: no need to read thousands of SKUs again. */
	if ((at = price_fetched_at(gcp_price(d->gcp))) > 0) {
		doctor_set(d, line, 1, xprintf("Cloud Billing catalog read "
		    "%lld s ago", (long long)(clock_now() - at)), NULL);
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->d = d;
	w->line = line;
	d->pending++;
	rc = price_refresh(gcp_price(d->gcp), doctor_on_prices, w);
	if (rc != 0) {
		doctor_set(d, w->line, 0, xprintf("cannot read prices: %s",
		    strerror(-rc)), xstrdup("run gpuq doctor again"));
		free(w);
		d->pending--;
	}
}

/* --- the whole -------------------------------------------------------- */

/* The bucket of ROOT (gs://bucket/prefix), or NULL. New string. */
static char *
doctor_bucket_of(const char *root)
{
	const char	*b, *e;

	if (root == NULL || strncmp(root, "gs://", 5) != 0)
		return NULL;
	b = root + 5;
	e = strchr(b, '/');
	if (e == b || *b == '\0')
		return NULL;
	return e != NULL ? xstrndup(b, (size_t)(e - b)) : xstrdup(b);
}

void
doctor_run(struct cloud *cloud, const char *checkpoint_root, doctor_cb cb,
    void *arg)
{
	struct doctor	*d;
	char		*url;

	d = xcalloc(1, sizeof *d);
	d->cloud = cloud;
	d->gcp = cloud_gcp(cloud);
	d->conf = gcp_conf(d->gcp);
	d->bucket = doctor_bucket_of(checkpoint_root);
	d->cb = cb;
	d->arg = arg;
	d->pending = 1;			/* until every check has started */

	/* Line 0, judged last: by then every call has asked for a token. */
	(void)doctor_line_add(d, "credentials");
	url = gcp_url(d->conf, GCP_API_RESOURCEMANAGER, NULL, "projects/%s",
	    d->conf->project);
	doctor_call(d, doctor_line_add(d, "project"), GCP_API_RESOURCEMANAGER,
	    "GET", url, NULL, NULL, doctor_on_project);
	doctor_apis(d);
	doctor_perms(d);
	doctor_account(d);
	doctor_bucket(d);
	doctor_network(d);
	doctor_image(d);
	doctor_quota(d);
	doctor_prices(d);
	doctor_unref(d);
}

json_t *
doctor_no_project(void)
{
	json_t	*r;

	r = json_pack("{s:[{s:s, s:b, s:s, s:s}], s:i, s:i}", "checks",
	    "check", "project", "ok", 0, "detail", "no [gcp] project in "
	    "gpuqd.conf: jobs only queue", "fix", "set [gcp] project = "
	    "PROJECT_ID in gpuqd.conf and restart gpuqd", "passed", 0,
	    "failed", 1);
	if (r == NULL)
		fatalx("doctor: out of memory");
	return r;
}

/* --- actAs at start ---------------------------------------------------- */

struct doctor_act {
	void		(*cb)(const char *why, void *arg);
	void		*arg;
	char		*email;
};

static void
doctor_act_on_resp(const struct http_resp *resp, void *arg)
{
	struct doctor_act	*a = arg;
	char			*detail = NULL, *fix = NULL, *why = NULL;

	if (resp->err.kind == GCP_ERR_NONE && !doctor_act_as_granted(resp)) {
		doctor_act_as_text(a->email, &detail, &fix);
		why = xprintf("%s: fix with %s", detail, fix);
	} else if (resp->err.kind == GCP_ERR_NOT_FOUND)
		why = xprintf("[gcp] job_service_account %s does not exist: "
		    "create it or fix the key", a->email);
	a->cb(why, a->arg);
	free(why);
	free(detail);
	free(fix);
	free(a->email);
	free(a);
}

void
doctor_act_as(struct cloud *cloud, void (*cb)(const char *, void *),
    void *arg)
{
	const struct gcp_conf	*c = gcp_conf(cloud_gcp(cloud));
	struct doctor_act	*a;
	struct http_req		 req;
	json_t			*body;
	char			*url;
	int			 rc;

	if (c->job_service_account == NULL ||
	    *c->job_service_account == '\0') {
		cb(NULL, arg);
		return;
	}
	a = xcalloc(1, sizeof *a);
	a->cb = cb;
	a->arg = arg;
	a->email = xstrdup(c->job_service_account);
	url = doctor_act_as_req(c, a->email, &body);
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.json = body;
	req.flags = HTTP_AUTH;
	req.api = GCP_API_IAM;
	rc = http_request_start(gcp_http(cloud_gcp(cloud)), &req,
	    doctor_act_on_resp, a);
	free(url);
	json_decref(body);
	if (rc != 0) {
		free(a->email);
		free(a);
		cb(NULL, arg);
	}
}
