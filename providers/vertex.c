/*
 * vertex.c: running a job as a Vertex AI CustomJob (API-NOTES E).
 *
 * Builds the customJobs.create body, maps a CustomJob's state and error
 * onto enum prov_state, and drives create / list / cancel through
 * providers/gcp. Knows Vertex's JSON and nothing of SQLite or of the
 * other services.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"

/* Boot disk of the worker, as Vertex's own default (API-NOTES E.3). */
#define VERTEX_DISK_TYPE	"pd-ssd"
#define VERTEX_DISK_GB		100

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
 * The body of customJobs.create. Vertex has no request id and picks the
 * job's id itself, so the deterministic resource name travels twice: as
 * displayName for people, and as the label gpuq-resource, which a retry
 * after an ambiguous failure lists by (API-NOTES 0.4).
 *
 * baseOutputDirectory is the job's output place, so that Vertex's own
 * AIP_CHECKPOINT_DIR ("<outputUriPrefix>/checkpoints/", E.3) names the
 * same place as GPUQ_CHECKPOINT_DIR ("<output place>checkpoints/",
 * DESIGN.md "The checkpoint contract"). The trailing '/' is dropped here
 * because Vertex adds its own.
 */
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

	/*
	 * restartJobOnWorkerRestart false: a preempted Spot worker is
	 * restarted alone, and the container resumes from its checkpoint.
	 */
	sched = prov_checked(json_pack("{s:s, s:b}",
	    "strategy", l->spot ? "SPOT" : "STANDARD",
	    "restartJobOnWorkerRestart", 0));
	if (l->max_runtime > 0) {
		timeout = prov_duration(l->max_runtime);
		prov_set(sched, "timeout", json_string(timeout));
		free(timeout);
	}

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
	*ret = body;
	return 0;
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
 *   message mentions preemption              Vertex gave up restarting a
 *                                            preempted Spot worker:
 *                                            PREEMPTED
 *   8 RESOURCE_EXHAUSTED                     no capacity or quota after
 *                                            the job was accepted
 *                                            ("Resources are insufficient
 *                                            in region"): STOCKOUT
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
	} else if (vertex_mentions(msg, "preempt"))
		o->state = PROV_PREEMPTED;
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
 * A preempted Spot worker does not end the job: Vertex restarts it and
 * the job stays RUNNING (the container resumes from its checkpoint). Only
 * when Vertex gives up does the job fail, with a message that says so.
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

/*
 * The quota a launch draws on (providers/gcp/quota.h decides the name:
 * Spot uses the preemptible metric only where it is granted).
 */
static char *
vertex_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	char		 buf[QUOTA_METRIC_MAX];
	const char	*m;

	*ret_service = "vertex";
	if (gpu == NULL)
		return NULL;
	m = quota_gpu_metric(gcp_quota(g), GCP_SERVICE_VERTEX, region, gpu->name, spot,
	    buf);
	return m != NULL ? xstrdup(m) : NULL;
}

/* Launch, poll and cancel come with providers/gcp's HTTP client. */
static int
vertex_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	return -ENOSYS;
}

static int
vertex_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	return -ENOSYS;
}

static int
vertex_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	return -ENOSYS;
}

const struct provider prov_vertex = {
	.name = "vertex",
	.quota_metric = vertex_quota_metric,
	.picks_zone = 1,
	.poll_global = 0,
	.launch = vertex_launch,
	.poll = vertex_poll,
	.cancel = vertex_cancel,
};
