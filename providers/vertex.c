/*
 * vertex.c: running a job as a Vertex AI CustomJob (DESIGN GE).
 *
 * Builds the customJobs.create body, maps a CustomJob's state and error
 * onto enum prov_state, and drives create / list / cancel through
 * providers/gcp. Knows Vertex's JSON and nothing of SQLite or of the
 * other services.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"

/* Boot disk of the worker, as Vertex's own default (DESIGN GE.3). */
#define VERTEX_DISK_TYPE	"pd-ssd"
#define VERTEX_DISK_GB		100

static void	vertex_python_package(const struct prov_launch *, json_t *);

/* [{"name":..,"value":..}] from the env object (borrowed). New array. */
static json_t *
vertex_env(json_t *env)
{
	json_t		*out, *v;
	const char	*k;

	out = prov_checked(json_array());
	if (env == NULL)
		return out;
	json_object_foreach(env, k, v) {
		if (json_array_append_new(out, prov_checked(json_pack(
		    "{s:s, s:s}", "name", k, "value",
		    json_string_value(v)))) != 0)
			fatalx("vertex: out of memory building a request");
	}
	return out;
}

/*
 * Vertex AI restarts a failed worker, and the whole job, on its own before
 * the job is reported failed (Vertex AI "Understand the training
 * service", "Restart workers during the training job"): gpuq would see a
 * job that is silently started over, and its max_failures and
 * max_interruptions budgets, and its choice of another place, would not
 * decide. disableRetries true turns that off; Google's Scheduling
 * reference says it also forces restartJobOnWorkerRestart to false, which
 * is also sent, explicitly: a multi-node job whose worker is lost then
 * fails as a whole, and gpuq relaunches every node from the newest
 * checkpoint, which is what NCCL jobs need (DESIGN GE.5).
 */
static void
vertex_no_retries(json_t *sched)
{
	prov_set(sched, "disableRetries", json_true());
	prov_set(sched, "restartJobOnWorkerRestart", json_false());
}

/*
 * A launch into a reservation names it in machineSpec.reservationAffinity
 * with the by-name key and the reservation's resource name (DESIGN L.2;
 * https://cloud.google.com/vertex-ai/docs/reference/rest/v1/MachineSpec).
 */
static void
vertex_reservation(const struct prov_launch *l, json_t *machine)
{
	char	*path;

	if ((path = prov_reservation_path(l)) == NULL)
		return;
	prov_set(machine, "reservationAffinity", json_pack("{s:s, s:s, s:[s]}",
	    "reservationAffinityType", "SPECIFIC_RESERVATION", "key",
	    "compute.googleapis.com/reservation-name", "values", path));
	free(path);
}

/*
 * The body of customJobs.create. Vertex has no request id and picks the
 * job's id itself, so the deterministic resource name travels twice: as
 * displayName for people, and as the label gpuq-resource, which a retry
 * after an ambiguous failure lists by (DESIGN G0.4).
 *
 * baseOutputDirectory is the job's output place, so that Vertex's own
 * AIP_CHECKPOINT_DIR ("<outputUriPrefix>/checkpoints/", E.3) names the
 * same place as GPUQ_CHECKPOINT_DIR ("<output place>checkpoints/",
 * doc/DESIGN.md "The checkpoint contract"). The trailing '/' is dropped here
 * because Vertex adds its own.
 */
/*
 * Flex-start (API-NOTES K.1): strategy FLEX_START, maxWaitDuration how
 * long Vertex AI queues the job for capacity, timeout at most 7 days.
 */
static void
vertex_flex(const struct prov_launch *l, json_t *sched)
{
	char	*s;

	if (l->capacity != CAPACITY_FLEX)
		return;
	prov_set(sched, "strategy", json_string("FLEX_START"));
	s = prov_duration(prov_flex_queue(l, 0));
	prov_set(sched, "maxWaitDuration", json_string(s));
	free(s);
	s = prov_duration(prov_flex_run(l, 0));
	prov_set(sched, "timeout", json_string(s));
	free(s);
}

int
vertex_job_body(const struct prov_launch *l, json_t **ret, char **cause)
{
	json_t		*machine, *container, *pool, *sched, *spec, *body;
	char		*timeout, *prefix, *scheme;
	size_t		 n, keep;

	if (prov_launch_check(l, cause) != 0)
		return -EINVAL;
	if (l->gpu != NULL && l->gpu->vertex == NULL) {
		if (cause != NULL)
			*cause = xprintf("launch of %s: Vertex AI does not "
			    "offer %s", l->resource, l->gpu->name);
		return -EINVAL;
	}

	machine = prov_checked(json_pack("{s:s}", "machineType",
	    l->machine_type));
	if (l->gpu != NULL) {
		prov_set(machine, "acceleratorType",
		    json_string(l->gpu->vertex));
		prov_set(machine, "acceleratorCount",
		    json_integer(l->gpu_count));
	}

	vertex_reservation(l, machine);

	container = prov_checked(json_pack("{s:s}", "imageUri", l->image));
	if (l->command != NULL && json_array_size(l->command) > 0)
		prov_set(container, "command", json_deep_copy(l->command));
	if (l->args != NULL && json_array_size(l->args) > 0)
		prov_set(container, "args", json_deep_copy(l->args));
	prov_set(container, "env", vertex_env(l->env));

	pool = prov_checked(json_pack("{s:o, s:s, s:{s:s, s:i}, s:o}",
	    "machineSpec", machine,
	    "replicaCount", "1",
	    "diskSpec", "bootDiskType", VERTEX_DISK_TYPE,
	    "bootDiskSizeGb", VERTEX_DISK_GB,
	    "containerSpec", container));
	vertex_python_package(l, pool);

	sched = prov_checked(json_pack("{s:s}",
	    "strategy", l->spot ? "SPOT" : "STANDARD"));
	vertex_no_retries(sched);
	if (l->max_runtime > 0) {
		timeout = prov_duration(l->max_runtime);
		prov_set(sched, "timeout", json_string(timeout));
		free(timeout);
	}
	vertex_flex(l, sched);

	spec = prov_checked(json_pack("{s:[o]}", "workerPoolSpecs", pool));
	if (l->output_dir != NULL && *l->output_dir != '\0') {
		prefix = xstrdup(l->output_dir);
		n = strlen(prefix);
		scheme = strstr(prefix, "://");
		keep = scheme != NULL ? (size_t)(scheme - prefix) + 4 : 1;
		while (n > keep && prefix[n - 1] == '/')
			prefix[--n] = '\0';
		prov_set(spec, "baseOutputDirectory",
		    json_pack("{s:s}", "outputUriPrefix", prefix));
		free(prefix);
	}
	prov_set(spec, "scheduling", sched);

	body = prov_checked(json_pack("{s:s, s:o, s:o}",
	    "displayName", l->resource,
	    "labels", prov_labels_new(l, 1),
	    "jobSpec", spec));
	prov_site_vertex(l, body);
	vertex_gang_apply(l, body);
	*ret = body;
	return 0;
}

/*
 * A python_package job: Vertex AI runs the package itself, so the pool
 * carries a pythonPackageSpec instead of the containerSpec (they are
 * one of; doc/DESIGN.md "Python packages").
 */
static void
vertex_python_package(const struct prov_launch *l, json_t *pool)
{
	json_t	*pp = l->python_package, *spec;

	if (pp == NULL)
		return;
	spec = prov_checked(json_pack("{s:s, s:O, s:O, s:o}",
	    "executorImageUri", l->image,
	    "packageUris", json_object_get(pp, "package_uris"),
	    "pythonModule", json_object_get(pp, "module"),
	    "env", vertex_env(l->env)));
	if (json_array_size(json_object_get(pp, "args")) > 0)
		prov_set(spec, "args", json_deep_copy(json_object_get(pp,
		    "args")));
	(void)json_object_del(pool, "containerSpec");
	prov_set(pool, "pythonPackageSpec", spec);
}

/*
 * The exit status Vertex reports when the container fails (code 3,
 * "The replica workerpool0-0 exited with a non-zero status of 3.
 * Termination reason: Error. ..."): N, or -1 if MSG does not say.
 */
static int
vertex_exit_status(const char *msg)
{
	const char	*p;
	char		*end;
	long		 n;

	if (msg == NULL ||
	    (p = strstr(msg, "exited with a non-zero status of ")) == NULL)
		return -1;
	p += strlen("exited with a non-zero status of ");
	n = strtol(p, &end, 10);
	if (end == p || n < 0 || n > 255)
		return -1;
	return (int)n;
}

/* Case-insensitive strstr. */
static int
vertex_mentions(const char *msg, const char *word)
{
	size_t	n = strlen(word);

	if (msg == NULL)
		return 0;
	for (; *msg != '\0'; msg++)
		if (strncasecmp(msg, word, n) == 0)
			return 1;
	return 0;
}

/*
 * Why a CustomJob failed, from its error (google.rpc.Status, E.4):
 *
 *   "exited with a non-zero status of N"     the user's code: FAILED, N
 *   8 RESOURCE_EXHAUSTED, quota message      admitted, then starved of
 *                                            quota ("The following quota
 *                                            metrics exceed quota
 *                                            limits", DESIGN GB.1):
 *                                            QUOTA
 *   message mentions preemption              a preempted Spot worker,
 *                                            not restarted: PREEMPTED
 *   message mentions maintenance             MAINTENANCE
 *   8 RESOURCE_EXHAUSTED, other message      no capacity after the job
 *                                            was accepted ("Resources are
 *                                            insufficient in region"):
 *                                            STOCKOUT
 *   13 INTERNAL, 14 UNAVAILABLE              Vertex broke: LOST, retried
 *   anything else (4 DEADLINE_EXCEEDED when
 *   the timeout hit, 3, 7, 9 ...)            ERROR, not retried
 */
static void
vertex_failure(json_t *error, struct prov_observed *o)
{
	const char	*msg;
	json_int_t	 code;
	int		 exit_code;

	msg = json_string_value(json_object_get(error, "message"));
	code = json_integer_value(json_object_get(error, "code"));
	o->message = msg;
	if ((exit_code = vertex_exit_status(msg)) >= 0) {
		o->state = exit_code == 0 ? PROV_SUCCEEDED : PROV_FAILED;
		o->exit_code = exit_code;
	} else if (code == 8 && vertex_mentions(msg, "exceed quota"))
		o->state = PROV_QUOTA;	/* before "preempt": the metric of
					   Spot quota says "preemptible" */
	else if (vertex_mentions(msg, "preempt"))
		o->state = PROV_PREEMPTED;
	else if (vertex_mentions(msg, "maintenance"))
		o->state = PROV_MAINTENANCE;
	else if (code == 8)
		o->state = PROV_STOCKOUT;
	else if (code == 13 || code == 14)
		o->state = PROV_LOST;
	else
		o->state = PROV_ERROR;
}

/*
 * JobState (E.4) onto prov_state:
 *
 *   UNSPECIFIED, QUEUED, PENDING, PAUSED    PENDING
 *   RUNNING, UPDATING                       RUNNING
 *   CANCELLING                              RUNNING (or PENDING if it never
 *                                           started): not over until
 *                                           CANCELLED, and it may still
 *                                           finish either way (E.2)
 *   SUCCEEDED                               SUCCEEDED, exit 0
 *   FAILED                                  see vertex_failure()
 *   CANCELLED                               CANCELLED
 *   EXPIRED, PARTIALLY_SUCCEEDED, unknown   ERROR
 *
 * gpuq sends scheduling.disableRetries (vertex_no_retries()), so a
 * preempted Spot worker or one stopped for host maintenance ends the job
 * FAILED with words that say so, and gpuq's own budgets decide what
 * follows.
 */
int
vertex_job_map(json_t *job, struct prov_observed *o, struct prov_text *t)
{
	const char	*state, *name;
	json_t		*labels;

	prov_observed_init(o);
	memset(t, 0, sizeof *t);
	if (!json_is_object(job) ||
	    (state = json_string_value(json_object_get(job, "state"))) ==
	    NULL)
		return -EINVAL;
	labels = json_object_get(job, "labels");
	name = json_string_value(json_object_get(job, "name"));
	o->resource = json_string_value(json_object_get(labels,
	    PROV_LABEL_RESOURCE));
	if (o->resource == NULL)
		o->resource = json_string_value(json_object_get(job,
		    "displayName"));
	if (o->resource == NULL)
		return -EINVAL;
	o->cloud_id = name;
	prov_observed_labels(o, labels);
	o->created = prov_json_time(job, "createTime");
	o->started = prov_json_time(job, "startTime");
	o->ended = prov_json_time(job, "endTime");

	if (strcmp(state, "JOB_STATE_UNSPECIFIED") == 0 ||
	    strcmp(state, "JOB_STATE_QUEUED") == 0 ||
	    strcmp(state, "JOB_STATE_PENDING") == 0 ||
	    strcmp(state, "JOB_STATE_PAUSED") == 0)
		o->state = PROV_PENDING;
	else if (strcmp(state, "JOB_STATE_RUNNING") == 0 ||
	    strcmp(state, "JOB_STATE_UPDATING") == 0)
		o->state = PROV_RUNNING;
	else if (strcmp(state, "JOB_STATE_CANCELLING") == 0) {
		o->state = o->started != 0 ? PROV_RUNNING : PROV_PENDING;
		o->message = "cancelling";
	} else if (strcmp(state, "JOB_STATE_SUCCEEDED") == 0) {
		o->state = PROV_SUCCEEDED;
		o->exit_code = 0;
	} else if (strcmp(state, "JOB_STATE_FAILED") == 0)
		vertex_failure(json_object_get(job, "error"), o);
	else if (strcmp(state, "JOB_STATE_CANCELLED") == 0) {
		o->state = PROV_CANCELLED;
		o->message = json_string_value(json_object_get(
		    json_object_get(job, "error"), "message"));
	} else {
		o->state = PROV_ERROR;
		(void)snprintf(t->message, sizeof t->message,
		    "Vertex AI job ended in state %s", state);
		o->message = t->message;
	}
	return 0;
}

/* The quota a launch draws on (provider.h quota_metric): Vertex AI's own. */
static char *
vertex_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	return prov_quota_metric(g, GCP_SERVICE_VERTEX, region, gpu, spot,
	    ret_service);
}

#define VERTEX_CREATE_TRIES	3	/* creates after ambiguous failures */
#define VERTEX_PAGE_MAX		100	/* customJobs.list pageSize cap */
/* Only what vertex_job_map() reads (DESIGN G0.1 `fields`). */
#define VERTEX_LIST_FIELDS	"customJobs(name,displayName,labels,state," \
	"error,createTime,startTime,endTime),nextPageToken"

/*
 * The customJobs.list URL that finds job RESOURCE of PROJECT in REGION
 * by its label gpuq-resource, Vertex AI naming its jobs itself
 * (DESIGN G0.4). New string.
 */
static char *
vertex_find_url(struct gcp *g, const char *project, const char *region,
    const char *resource)
{
	char	*filter, *url;

	filter = xprintf("labels.%s=\"%s\"", PROV_LABEL_RESOURCE, resource);
	url = gcp_url(gcp_conf(g), GCP_API_VERTEX, region,
	    "projects/%s/locations/%s/customJobs?filter=%s&fields=%s",
	    project, region, filter, VERTEX_LIST_FIELDS);
	free(filter);
	return url;
}

/* Unless *FOUND is set already, set it to the name (new string) of the
 * first job in PAGE labelled gpuq-resource=RESOURCE, if any. */
static void
vertex_find_in_page(json_t *page, const char *resource, char **found)
{
	const char	*res, *name;
	json_t		*job;
	size_t		 i;

	json_array_foreach(json_object_get(page, "customJobs"), i, job) {
		res = json_string_value(json_object_get(json_object_get(job,
		    "labels"), PROV_LABEL_RESOURCE));
		name = json_string_value(json_object_get(job, "name"));
		if (*found == NULL && res != NULL && name != NULL &&
		    strcmp(res, resource) == 0)
			*found = xstrdup(name);
	}
}

/*
 * A launch in progress. Vertex AI has no request id and names the job
 * itself (DESIGN G0.4), so a create sent twice makes two jobs. The
 * launch therefore looks first -- a list filtered on the label
 * gpuq-resource -- and adopts a job that is already there (a daemon that
 * restarted in the middle of a launch, or a launch asked twice); only
 * then does it create, once, with no retry in the HTTP layer. A create
 * that fails in a way that may have reached Vertex (timeout, reset, 5xx,
 * 429) is followed by another look after a backoff, and by another
 * create only if the look finds nothing, at most VERTEX_CREATE_TRIES
 * times.
 */
struct vertex_launch {
	struct gcp	*g;
	char		*region;
	char		*resource;
	char		*list_url;	/* the look */
	char		*create_url;
	json_t		*body;
	char		*found;		/* name of a job the look found */
	int		 creates;
	uv_timer_t	 timer;		/* backoff; timer.data == this */
	int		 timer_on;	/* initialized: close before free */
	prov_launch_cb	 cb;
	void		*arg;
};

static void	vertex_launch_on_timer(uv_timer_t *);

static void
vertex_launch_on_close(uv_handle_t *h)
{
	free(h->data);
}

static void
vertex_launch_free(struct vertex_launch *vl)
{
	free(vl->region);
	free(vl->resource);
	free(vl->list_url);
	free(vl->create_url);
	free(vl->found);
	json_decref(vl->body);
	if (vl->timer_on)
		uv_close((uv_handle_t *)&vl->timer, vertex_launch_on_close);
	else
		free(vl);
}

/* Call the daemon back once with R, then forget the launch. */
static void
vertex_launch_end(struct vertex_launch *vl, struct prov_result *r)
{
	vl->cb(r, vl->arg);
	vertex_launch_free(vl);
}

static void
vertex_launch_fail(struct vertex_launch *vl, const struct gcp_error *e)
{
	struct prov_result	r;

	prov_result_from_error(e, &r);
	vertex_launch_end(vl, &r);
}

/* The look found one of our jobs: ours from before (EXISTS) or from an
 * ambiguous create of this launch (a plain success). */
static void
vertex_launch_adopt(struct vertex_launch *vl)
{
	struct prov_result	r;

	memset(&r, 0, sizeof r);
	r.fail = vl->creates > 0 ? PROV_FAIL_NONE : PROV_FAIL_EXISTS;
	r.cloud_id = vl->found;
	r.message = "the Vertex AI job already exists";
	log_debug("vertex: %s: adopting %s", vl->resource, vl->found);
	vertex_launch_end(vl, &r);
}

static void
vertex_launch_on_created(const struct http_resp *resp, void *arg)
{
	struct vertex_launch	*vl = arg;
	struct prov_result	 r;
	uint64_t		 delay;
	int			 rc;

	if (resp->err.kind == GCP_ERR_NONE) {
		memset(&r, 0, sizeof r);
		r.cloud_id = json_string_value(json_object_get(resp->json,
		    "name"));
		vertex_launch_end(vl, &r);
		return;
	}
	if (!gcp_error_retryable(&resp->err) ||
	    vl->creates >= VERTEX_CREATE_TRIES) {
		vertex_launch_fail(vl, &resp->err);
		return;
	}
	/* It may have reached Vertex: look again before creating again. */
	delay = 1000ULL << (vl->creates - 1);
	log_debug("vertex: %s: create failed (%s), looking again in %llu ms",
	    vl->resource, gcp_error_kind_name(resp->err.kind),
	    (unsigned long long)delay);
	if (!vl->timer_on) {
		if ((rc = uv_timer_init(http_loop(gcp_http(vl->g)),
		    &vl->timer)) != 0) {
			vertex_launch_fail(vl, &resp->err);
			return;
		}
		vl->timer.data = vl;
		vl->timer_on = 1;
	}
	if (uv_timer_start(&vl->timer, vertex_launch_on_timer, delay, 0) !=
	    0)
		vertex_launch_fail(vl, &resp->err);
}

static void
vertex_launch_create(struct vertex_launch *vl)
{
	struct gcp_error	e;
	int			rc;

	vl->creates++;
	rc = prov_call(vl->g, GCP_API_VERTEX, "POST", vl->create_url,
	    vl->body, 0, vertex_launch_on_created, vl);
	if (rc != 0) {
		prov_error_start(&e, rc, "cannot send the create");
		vertex_launch_fail(vl, &e);
		gcp_error_done(&e);
	}
}

static void
vertex_launch_on_page(json_t *page, void *arg)
{
	struct vertex_launch	*vl = arg;

	vertex_find_in_page(page, vl->resource, &vl->found);
}

static void
vertex_launch_on_looked(const struct gcp_error *err, void *arg)
{
	struct vertex_launch	*vl = arg;

	if (err != NULL)
		vertex_launch_fail(vl, err);
	else if (vl->found != NULL)
		vertex_launch_adopt(vl);
	else
		vertex_launch_create(vl);
}

/* List our jobs named RESOURCE: 0, or -errno and no callback. */
static int
vertex_launch_look(struct vertex_launch *vl)
{
	return prov_list(vl->g, GCP_API_VERTEX, xstrdup(vl->list_url),
	    vertex_launch_on_page, vertex_launch_on_looked, vl);
}

/* The backoff after an ambiguous create is over: look again. */
static void
vertex_launch_on_timer(uv_timer_t *t)
{
	struct vertex_launch	*vl = t->data;
	struct gcp_error	 e;
	int			 rc;

	if ((rc = vertex_launch_look(vl)) != 0) {
		prov_error_start(&e, rc, "cannot list Vertex AI jobs");
		vertex_launch_fail(vl, &e);
		gcp_error_done(&e);
	}
}

static int
vertex_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	struct vertex_launch	*vl;
	const char		*project;
	json_t			*body;
	int			 rc;

	if ((project = prov_project(g)) == NULL)
		return -EINVAL;
	if (vertex_job_body(l, &body, NULL) != 0)
		return -EINVAL;
	vl = xcalloc(1, sizeof *vl);
	vl->g = g;
	vl->body = body;
	vl->region = xstrdup(l->region);
	vl->resource = xstrdup(l->resource);
	vl->cb = cb;
	vl->arg = arg;
	vl->list_url = vertex_find_url(g, project, l->region, l->resource);
	vl->create_url = gcp_url(gcp_conf(g), GCP_API_VERTEX, l->region,
	    "projects/%s/locations/%s/customJobs", project, l->region);
	if ((rc = vertex_launch_look(vl)) != 0)
		vertex_launch_free(vl);
	return rc;
}

/* A poll reads customJobs.list; the answer has no "unreachable". */
static const struct prov_listing vertex_listing = {
	.api = GCP_API_VERTEX,
	.items = "customJobs",
	.map = vertex_job_map,
	.service = NULL,
};

/* One listing of every job of ours in REGION (provider.h poll). */
static int
vertex_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	const char	*project;
	char		*filter, *url;

	if ((project = prov_project(g)) == NULL || region == NULL ||
	    install == NULL)
		return -EINVAL;
	filter = prov_filter_install(install);
	url = gcp_url(gcp_conf(g), GCP_API_VERTEX, region,
	    "projects/%s/locations/%s/customJobs?filter=%s&pageSize=%d"
	    "&fields=%s", project, region, filter,
	    http_page_size(gcp_http(g), VERTEX_PAGE_MAX), VERTEX_LIST_FIELDS);
	free(filter);
	return prov_poll_list(g, &vertex_listing, url, install, cb, done,
	    arg);
}

/*
 * A cancel in progress. customJobs.cancel is asynchronous (E.2): the job
 * goes CANCELLING, then CANCELLED. A job that has already ended refuses
 * the cancel (FAILED_PRECONDITION); then it is deleted instead, which is
 * how the daemon cleans up jobs that finished. A job already gone is a
 * success.
 */
struct vertex_cancel {
	struct gcp	*g;
	char		*name;		/* projects/N/locations/R/customJobs/I */
	char		*region;
	prov_done_cb	 done;
	void		*arg;
};

static void
vertex_cancel_end(struct vertex_cancel *vc, const struct gcp_error *e)
{
	struct prov_result	r;

	prov_result_from_cancel(e, &r);
	vc->done(&r, vc->arg);
	free(vc->name);
	free(vc->region);
	free(vc);
}

/* "Failed precondition": the job is in a state that refuses the call. */
static int
vertex_refused(const struct gcp_error *e)
{
	return e->kind == GCP_ERR_INVALID && e->status != NULL &&
	    strcmp(e->status, "FAILED_PRECONDITION") == 0;
}

static void
vertex_cancel_on_deleted(const struct http_resp *resp, void *arg)
{
	struct vertex_cancel	*vc = arg;

	/* Refused: still cancelling, and the cancel is under way. */
	vertex_cancel_end(vc, vertex_refused(&resp->err) ? NULL :
	    &resp->err);
}

static void
vertex_cancel_on_cancelled(const struct http_resp *resp, void *arg)
{
	struct vertex_cancel	*vc = arg;
	struct gcp_error	 e;
	char			*url;
	int			 rc;

	if (!vertex_refused(&resp->err)) {
		vertex_cancel_end(vc, &resp->err);
		return;
	}
	url = gcp_url(gcp_conf(vc->g), GCP_API_VERTEX, vc->region, "%-s",
	    vc->name);
	rc = prov_call(vc->g, GCP_API_VERTEX, "DELETE", url, NULL, 0,
	    vertex_cancel_on_deleted, vc);
	free(url);
	if (rc != 0) {
		prov_error_start(&e, rc, "cannot delete");
		vertex_cancel_end(vc, &e);
		gcp_error_done(&e);
	}
}

static int
vertex_cancel_start(struct vertex_cancel *vc)
{
	json_t	*empty;
	char	*url;
	int	 rc;

	url = gcp_url(gcp_conf(vc->g), GCP_API_VERTEX, vc->region,
	    "%-s:cancel", vc->name);
	empty = prov_checked(json_object());
	rc = prov_call(vc->g, GCP_API_VERTEX, "POST", url, empty,
	    HTTP_IDEMPOTENT, vertex_cancel_on_cancelled, vc);
	json_decref(empty);
	free(url);
	return rc;
}

/* Cancel without the job's name: find it by its label first. */
struct vertex_find {
	struct vertex_cancel	*vc;
	char			*resource;
};

static void
vertex_find_on_page(json_t *page, void *arg)
{
	struct vertex_find	*vf = arg;

	vertex_find_in_page(page, vf->resource, &vf->vc->name);
}

static void
vertex_find_on_done(const struct gcp_error *err, void *arg)
{
	struct vertex_find	*vf = arg;
	struct vertex_cancel	*vc = vf->vc;
	struct gcp_error	 e;
	int			 rc;

	free(vf->resource);
	free(vf);
	if (err != NULL || vc->name == NULL) {
		vertex_cancel_end(vc, err);	/* none: nothing to cancel */
		return;
	}
	if ((rc = vertex_cancel_start(vc)) != 0) {
		prov_error_start(&e, rc, "cannot cancel");
		vertex_cancel_end(vc, &e);
		gcp_error_done(&e);
	}
}

static int
vertex_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	struct vertex_cancel	*vc;
	struct vertex_find	*vf;
	const char		*project;
	char			*url;
	int			 rc;

	if ((project = prov_project(g)) == NULL || ref->region == NULL ||
	    (ref->cloud_id == NULL && ref->resource == NULL))
		return -EINVAL;
	vc = xcalloc(1, sizeof *vc);
	vc->g = g;
	vc->region = xstrdup(ref->region);
	vc->done = done;
	vc->arg = arg;
	if (ref->cloud_id != NULL) {
		vc->name = xstrdup(ref->cloud_id);
		rc = vertex_cancel_start(vc);
	} else {
		vf = xcalloc(1, sizeof *vf);
		vf->vc = vc;
		vf->resource = xstrdup(ref->resource);
		url = vertex_find_url(g, project, ref->region,
		    ref->resource);
		rc = prov_list(g, GCP_API_VERTEX, url, vertex_find_on_page,
		    vertex_find_on_done, vf);
		if (rc != 0) {
			free(vf->resource);
			free(vf);
		}
	}
	if (rc != 0) {
		free(vc->name);
		free(vc->region);
		free(vc);
	}
	return rc;
}

/*
 * "You must use an image from this list" (PythonPackageSpec.
 * executorImageUri): the pre-built training containers, which live in
 * these three repositories.
 */
static const char *const vertex_package_images[] = {
	"us-docker.pkg.dev/vertex-ai/training/",
	"europe-docker.pkg.dev/vertex-ai/training/",
	"asia-docker.pkg.dev/vertex-ai/training/",
	NULL
};

const struct provider prov_vertex = {
	.name = "vertex",
	.quota_metric = vertex_quota_metric,
	.picks_zone = 1,
	.reservations = 1,
	.names_itself = 1,
	.poll_global = 0,
	.quota_service = GCP_SERVICE_VERTEX,
	.price_service = GCP_SERVICE_VERTEX,
	.quota_usage_ours = 1,
	.launch = vertex_launch,
	.poll = vertex_poll,
	.cancel = vertex_cancel,
	.package_images = vertex_package_images,
};
