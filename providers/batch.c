/*
 * batch.c: running a job as a Cloud Batch job of one task (DESIGN GD).
 *
 * Builds the jobs.create body, maps a Job's state, status events and the
 * task's exit code onto enum prov_state, and drives create / list /
 * delete through providers/gcp. Knows Batch's JSON and nothing of SQLite
 * or of the other services.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"

#define BATCH_DISK_GB	"100"

/*
 * Memory of the machine types gpuq offers, from Compute Engine's machine
 * type tables (GPU machine types page; "GB" there is GiB). N1 and G2
 * scale with the vCPUs; the accelerator-optimized shapes are listed.
 */
static const struct {
	const char	*prefix;	/* "n1-standard-": per vCPU */
	int64_t		 mib;
} batch_per_vcpu[] = {
	{ "n1-standard-", 3840 },	/* 3.75 GB per vCPU */
	{ "n1-highmem-", 6656 },	/* 6.5 GB per vCPU */
	{ "n1-highcpu-", 921 },		/* 0.9 GB per vCPU */
	{ "g2-standard-", 4096 },	/* 4 GB per vCPU */
};

static const struct {
	const char	*name;
	int64_t		 gib;
} batch_shapes[] = {
	{ "a2-highgpu-1g", 85 }, { "a2-highgpu-2g", 170 },
	{ "a2-highgpu-4g", 340 }, { "a2-highgpu-8g", 680 },
	{ "a2-megagpu-16g", 1360 },
	{ "a2-ultragpu-1g", 170 }, { "a2-ultragpu-2g", 340 },
	{ "a2-ultragpu-4g", 680 }, { "a2-ultragpu-8g", 1360 },
	{ "a3-highgpu-1g", 234 }, { "a3-highgpu-2g", 468 },
	{ "a3-highgpu-4g", 936 }, { "a3-highgpu-8g", 1872 },
	{ "a3-megagpu-8g", 1872 }, { "a3-ultragpu-8g", 2952 },
	{ "a4-highgpu-8g", 3968 },
};

int64_t
batch_machine_mib(const char *mt)
{
	size_t	i;
	int	vcpus;

	if (mt == NULL)
		return -1;
	for (i = 0; i < sizeof batch_shapes / sizeof batch_shapes[0]; i++)
		if (strcmp(mt, batch_shapes[i].name) == 0)
			return batch_shapes[i].gib * 1024;
	for (i = 0; i < sizeof batch_per_vcpu / sizeof batch_per_vcpu[0];
	    i++) {
		if (strncmp(mt, batch_per_vcpu[i].prefix,
		    strlen(batch_per_vcpu[i].prefix)) != 0)
			continue;
		if ((vcpus = gpu_machine_vcpus(mt)) <= 0)
			return -1;
		return vcpus * batch_per_vcpu[i].mib;
	}
	return -1;
}

/* Append V (borrowed) to array A. */
static void
batch_append(json_t *a, json_t *v)
{
	if (json_array_append(a, v) != 0)
		fatalx("batch: out of memory building a request");
}

/*
 * The container runnable. Batch's Container has an `entrypoint` (one
 * string, replacing the image's ENTRYPOINT) and `commands` (replacing its
 * CMD), where gpuq jobs have Kubernetes-style command and args. So:
 *
 *   command [c0, c1...], args [a...]   entrypoint c0, commands [c1..., a...]
 *   no command, args [a...]            commands [a...] (image ENTRYPOINT)
 *   neither                            the image's own ENTRYPOINT and CMD
 *
 * A python_package job runs its executor image with the command line
 * of prov_pypkg_argv() (doc/DESIGN.md "Python packages").
 *
 * No `options`: with installGpuDrivers Batch itself gives a container
 * runnable the VM's GPUs (Google's GPU samples set none).
 */
static json_t *
batch_container(const struct prov_launch *l)
{
	json_t	*c, *cmds, *v, *command = l->command, *args = l->args;
	json_t	*pcmd = NULL, *pargs = NULL;
	size_t	 i;

	if (l->python_package != NULL) {
		prov_pypkg_argv(l, &pcmd, &pargs);
		command = pcmd;
		args = pargs;
	}
	c = prov_checked(json_pack("{s:s}", "imageUri", l->image));
	cmds = prov_checked(json_array());
	if (command != NULL && json_array_size(command) > 0) {
		prov_set(c, "entrypoint", json_string(json_string_value(
		    json_array_get(command, 0))));
		for (i = 1; i < json_array_size(command); i++)
			batch_append(cmds, json_array_get(command, i));
	}
	if (args != NULL)
		json_array_foreach(args, i, v)
			batch_append(cmds, v);
	if (json_array_size(cmds) > 0)
		prov_set(c, "commands", cmds);
	else
		json_decref(cmds);
	json_decref(pcmd);
	json_decref(pargs);
	return c;
}

/*
 * instances[].policy.reservation (DESIGN L.2; batch.v1 InstancePolicy):
 * the reservation a launch consumes, by resource name; every other
 * launch says NO_RESERVATION, as on Compute Engine, since unset would
 * let Batch consume any matching reservation gpuq priced as on-demand.
 */
static void
batch_reservation(const struct prov_launch *l, json_t *policy)
{
	char	*path;

	path = prov_reservation_path(l);
	prov_set(policy, "reservation", json_string(path != NULL ? path :
	    "NO_RESERVATION"));
	free(path);
}

/*
 * The body of jobs.create; the jobId (our resource name) goes in the
 * URL, which makes a retried create fail with 409 instead of making a
 * second job (DESIGN G0.4).
 *
 * maxRetryCount 0 and no lifecyclePolicies: Batch must not retry on its
 * own, because gpuqd decides retries itself (and where: a preempted job
 * may be better off in another region). A preemption therefore fails the
 * job with exit code 50001, which batch_job_map() reads back.
 */
int
batch_job_body(const struct prov_launch *l, json_t **ret, char **cause)
{
	json_t		*runnable, *vars, *task, *policy, *alloc, *body, *v;
	const char	*k;
	char		*s;
	int64_t		 mib;
	int		 vcpus;

	if (prov_launch_check(l, cause) != 0)
		return -EINVAL;

	vars = prov_checked(json_object());
	if (l->env != NULL)
		json_object_foreach(l->env, k, v)
			prov_set(vars, k, json_incref(v));
	runnable = prov_checked(json_pack("{s:o, s:{s:o}}",
	    "container", batch_container(l),
	    "environment", "variables", vars));
	/* Batch reads the secrets on the VM: their values never pass us. */
	if (l->secret_env != NULL)
		prov_set(json_object_get(runnable, "environment"),
		    "secretVariables", json_deep_copy(l->secret_env));

	task = prov_checked(json_pack("{s:[o], s:i}",
	    "runnables", runnable, "maxRetryCount", 0));
	/*
	 * One task per VM, so ask for what the machine has, minus a tenth
	 * for the Batch agent and the OS: Batch refuses a job whose task
	 * does not fit its machine type.
	 */
	vcpus = gpu_machine_vcpus(l->machine_type);
	mib = batch_machine_mib(l->machine_type);
	if (vcpus > 0 || mib > 0) {
		v = prov_checked(json_object());
		if (vcpus > 0) {
			s = xprintf("%d", vcpus * 1000);
			prov_set(v, "cpuMilli", json_string(s));
			free(s);
		}
		if (mib > 0) {
			s = xprintf("%lld", (long long)(mib * 9 / 10));
			prov_set(v, "memoryMib", json_string(s));
			free(s);
		}
		prov_set(task, "computeResource", v);
	}
	if (l->max_runtime > 0) {
		s = prov_duration(l->max_runtime);
		prov_set(task, "maxRunDuration", json_string(s));
		free(s);
	}

	policy = prov_checked(json_pack("{s:s, s:s, s:{s:s}}",
	    "machineType", l->machine_type,
	    "provisioningModel", l->spot ? "SPOT" : "STANDARD",
	    "bootDisk", "sizeGb", BATCH_DISK_GB));
	/* Flex-start (API-NOTES K.3): the model, and a run time Google
	 * allows (at most 7 days). */
	if (l->capacity == CAPACITY_FLEX) {
		prov_set(policy, "provisioningModel",
		    json_string("FLEX_START"));
		s = prov_duration(prov_flex_run(l, 0));
		prov_set(task, "maxRunDuration", json_string(s));
		free(s);
	}
	/* As on Compute Engine: a2/a3/a4/g2 shapes bring their own GPUs. */
	if (l->gpu != NULL && !gce_machine_has_gpus(l->machine_type)) {
		s = xprintf("%d", l->gpu_count);
		prov_set(policy, "accelerators", json_pack("[{s:s, s:s}]",
		    "type", l->gpu->name, "count", s));
		free(s);
	}
	batch_reservation(l, policy);
	s = l->zone != NULL && *l->zone != '\0' ?
	    xprintf("zones/%s", l->zone) : xprintf("regions/%s", l->region);
	alloc = prov_checked(json_pack("{s:{s:[s]}, s:[{s:b, s:o}], s:o}",
	    "location", "allowedLocations", s,
	    "instances", "installGpuDrivers", 1, "policy", policy,
	    "labels", prov_labels_new(l, 0)));
	free(s);

	body = prov_checked(json_pack("{s:[{s:s, s:o}], s:o, s:o, s:{s:s}}",
	    "taskGroups", "taskCount", "1", "taskSpec", task,
	    "allocationPolicy", alloc,
	    "labels", prov_labels_new(l, 0),
	    "logsPolicy", "destination", "CLOUD_LOGGING"));
	prov_site_batch(l, body);
	batch_gang_apply(l, body);
	*ret = body;
	return 0;
}

/*
 * Batch's reserved exit codes (DESIGN GD.3, Batch troubleshooting page)
 * onto prov_state. Each is an interruption gpuqd may retry, except 50005:
 *
 *   50001 Spot VM preempted                         PREEMPTED
 *   50002 Batch stopped hearing from the VM         LOST: crashed or cut
 *         (crashed, unresponsive)                   off, cause unknown
 *   50003 VM rebooted during the task               MAINTENANCE: GPU VMs
 *                                                   cannot live-migrate, so
 *                                                   host maintenance and
 *                                                   host errors reboot them
 *   50004 task unresponsive, could not be cancelled LOST
 *   50005 ran past maxRunDuration                   ERROR: the job's own
 *                                                   max_runtime was hit;
 *                                                   not retried
 *   50006 VM recreated during the task              MAINTENANCE: Batch
 *                                                   recreates a VM after a
 *                                                   host event
 *   50000 failed, no specific reason                ERROR
 */
int
batch_exit_state(int code, const char **ret_why)
{
	const char	*why = NULL;
	int		 state;

	switch (code) {
	case 0:
		state = PROV_SUCCEEDED;
		break;
	case 50000:
		state = PROV_ERROR;
		why = "Batch failed the task without a specific reason "
		    "(exit code 50000)";
		break;
	case 50001:
		state = PROV_PREEMPTED;
		why = "the Spot VM was preempted (exit code 50001)";
		break;
	case 50002:
		state = PROV_LOST;
		why = "Batch stopped receiving updates from the VM "
		    "(exit code 50002)";
		break;
	case 50003:
		state = PROV_MAINTENANCE;
		why = "the VM was rebooted during the task (exit code 50003)";
		break;
	case 50004:
		state = PROV_LOST;
		why = "the task became unresponsive and could not be "
		    "cancelled (exit code 50004)";
		break;
	case 50005:
		state = PROV_ERROR;
		why = "the task ran past its max_runtime (exit code 50005)";
		break;
	case 50006:
		state = PROV_MAINTENANCE;
		why = "the VM was recreated during the task (exit code 50006)";
		break;
	default:
		state = PROV_FAILED;
		break;
	}
	if (ret_why != NULL)
		*ret_why = why;
	return state;
}

/* N from the last "exit code N" in S, or -1. */
static int
batch_exit_in_text(const char *s)
{
	const char	*p, *last = NULL;
	char		*end;
	long		 n;

	if (s == NULL)
		return -1;
	for (p = s; (p = strstr(p, "exit code ")) != NULL; p++)
		last = p;
	if (last == NULL)
		return -1;
	last += strlen("exit code ");
	n = strtol(last, &end, 10);
	if (end == last || n < 0 || n > 0x7fffffff)
		return -1;
	return (int)n;
}

/* Copy the ZONE of the first "zones/ZONE/" in S into T; 0 or -1. */
static int
batch_zone_in_text(const char *s, struct prov_text *t)
{
	const char	*p, *end;
	size_t		 n;

	if (s == NULL || (p = strstr(s, "zones/")) == NULL)
		return -1;
	p += strlen("zones/");
	end = p + strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-");
	n = (size_t)(end - p);
	if (n == 0 || n >= sizeof t->zone || *end != '/')
		return -1;
	memcpy(t->zone, p, n);
	t->zone[n] = '\0';
	return 0;
}

/*
 * The task's exit code from the job's status events, newest first: the
 * event's taskExecution.exitCode when Batch gives it, else "exit code N"
 * in its description (DESIGN GD.3). -1 if no event says.
 */
static int
batch_exit_code(json_t *events)
{
	json_t		*ev, *code;
	size_t		 i;
	int		 n;

	for (i = json_array_size(events); i-- > 0;) {
		ev = json_array_get(events, i);
		code = json_object_get(json_object_get(ev, "taskExecution"),
		    "exitCode");
		if (json_is_integer(code))
			return (int)json_integer_value(code);
		n = batch_exit_in_text(json_string_value(json_object_get(ev,
		    "description")));
		if (n >= 0)
			return n;
	}
	return -1;
}

/* The first event whose description contains WORD (borrowed), or NULL. */
static json_t *
batch_event_find(json_t *events, const char *word)
{
	json_t		*ev;
	const char	*d;
	size_t		 i;

	json_array_foreach(events, i, ev) {
		d = json_string_value(json_object_get(ev, "description"));
		if (d != NULL && strstr(d, word) != NULL)
			return ev;
	}
	return NULL;
}

/* Does any event's description contain WORD? Its description, or NULL. */
static const char *
batch_event_with(json_t *events, const char *word)
{
	return json_string_value(json_object_get(batch_event_find(events,
	    word), "description"));
}

/* Time of the first event whose description contains WORD; 0 if none. */
static int64_t
batch_event_time(json_t *events, const char *word)
{
	return prov_json_time(batch_event_find(events, word), "eventTime");
}

/*
 * Why a job FAILED. The task's exit code decides when there is one
 * (batch_exit_state()). Without one the task never ran: Batch could not
 * make its VM, and says why in a "Batch Error: code - CODE_GCE_..." event
 * (tests/fakegcp/README.md, "Batch"). No capacity in the zone
 * (CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED) is a STOCKOUT: try elsewhere.
 * No Compute Engine quota (CODE_GCE_QUOTA_EXCEEDED) is QUOTA: Batch VMs
 * draw on Compute's quota, which no other zone of the region changes.
 * Anything else is ERROR.
 */
static void
batch_failure(json_t *events, struct prov_observed *o, struct prov_text *t)
{
	const char	*why, *d;
	json_t		*last;
	int		 code;

	last = json_array_get(events, json_array_size(events) - 1);
	o->message = json_string_value(json_object_get(last, "description"));
	if ((code = batch_exit_code(events)) >= 0) {
		o->state = batch_exit_state(code, &why);
		o->exit_code = code >= 50000 ? -1 : code;
		if (why != NULL)
			o->message = why;
		return;
	}
	if ((d = batch_event_with(events, "RESOURCE_POOL_EXHAUSTED")) !=
	    NULL) {
		o->state = PROV_STOCKOUT;
		o->message = d;
		return;
	}
	if ((d = batch_event_with(events, "QUOTA_EXCEEDED")) != NULL) {
		o->state = PROV_QUOTA;
		o->message = d;
		return;
	}
	o->state = PROV_ERROR;
	if (o->message == NULL) {
		prov_strlcpy(t->message, "the Batch job failed without a "
		    "status event saying why", sizeof t->message);
		o->message = t->message;
	}
}

/*
 * Why a QUEUED or SCHEDULED job waits, if Batch said: the last status
 * event since the last change of state that is not itself a change of
 * state ("Job state is set from ..."). Batch holds a job queued for
 * lack of quota or capacity for up to 2 days and says so only there
 * (API-NOTES D.3); gpuqd shows it and withdraws the job after
 * pending_timeout (doc/DESIGN.md "Outcomes"). NULL if none.
 */
static const char *
batch_pending_reason(json_t *events)
{
	json_t		*ev;
	const char	*d, *why = NULL;
	size_t		 i;

	json_array_foreach(events, i, ev) {
		d = json_string_value(json_object_get(ev, "description"));
		if (d == NULL || *d == '\0')
			continue;
		if (strncmp(d, "Job state is set from ", 22) == 0)
			why = NULL;
		else
			why = d;
	}
	return why;
}

/*
 * JobStatus.state (D.3) onto prov_state:
 *
 *   STATE_UNSPECIFIED, QUEUED, SCHEDULED    PENDING (message: why it
 *                                           waits, if Batch said)
 *   RUNNING                                 RUNNING
 *   CANCELLATION_IN_PROGRESS                RUNNING (or PENDING): not over
 *   SUCCEEDED                               SUCCEEDED, exit 0
 *   FAILED                                  see batch_failure()
 *   CANCELLED, DELETION_IN_PROGRESS         CANCELLED (gpuq deletes jobs
 *                                           only to cancel or clean up)
 */
int
batch_job_map(json_t *job, struct prov_observed *o, struct prov_text *t)
{
	json_t		*status, *events, *ev;
	const char	*state, *name;
	char		 to[64];
	size_t		 i;

	prov_observed_init(o);
	memset(t, 0, sizeof *t);
	status = json_object_get(job, "status");
	name = json_string_value(json_object_get(job, "name"));
	if (!json_is_object(job) || name == NULL)
		return -EINVAL;
	state = json_string_value(json_object_get(status, "state"));
	if (state == NULL)
		state = "STATE_UNSPECIFIED";
	events = json_object_get(status, "statusEvents");
	o->resource = prov_last_segment(name);
	o->cloud_id = name;
	prov_observed_labels(o, json_object_get(job, "labels"));
	o->created = prov_json_time(job, "createTime");
	o->started = batch_event_time(events, "to RUNNING");
	json_array_foreach(events, i, ev) {
		if (batch_zone_in_text(json_string_value(json_object_get(ev,
		    "description")), t) == 0) {
			o->zone = t->zone;
			break;
		}
	}

	if (strcmp(state, "STATE_UNSPECIFIED") == 0 ||
	    strcmp(state, "QUEUED") == 0 || strcmp(state, "SCHEDULED") == 0) {
		o->state = PROV_PENDING;
		o->message = batch_pending_reason(events);
	}
	else if (strcmp(state, "RUNNING") == 0)
		o->state = PROV_RUNNING;
	else if (strcmp(state, "CANCELLATION_IN_PROGRESS") == 0) {
		o->state = o->started != 0 ? PROV_RUNNING : PROV_PENDING;
		o->message = "cancelling";
	} else if (strcmp(state, "SUCCEEDED") == 0) {
		o->state = PROV_SUCCEEDED;
		o->exit_code = 0;
	} else if (strcmp(state, "FAILED") == 0)
		batch_failure(events, o, t);
	else if (strcmp(state, "CANCELLED") == 0 ||
	    strcmp(state, "DELETION_IN_PROGRESS") == 0)
		o->state = PROV_CANCELLED;
	else {
		o->state = PROV_ERROR;
		(void)snprintf(t->message, sizeof t->message,
		    "Batch job in unknown state %s", state);
		o->message = t->message;
	}
	if (o->state >= PROV_SUCCEEDED) {
		(void)snprintf(to, sizeof to, "to %s", state);
		o->ended = batch_event_time(events, to);
		if (o->ended == 0)
			o->ended = prov_json_time(job, "updateTime");
	}
	batch_gang_map(job, o, t);
	return 0;
}

/* The quota a launch draws on (provider.h quota_metric): Compute
 * Engine's, as Batch VMs are Compute VMs. */
static char *
batch_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	return prov_quota_metric(g, GCP_SERVICE_BATCH, region, gpu, spot,
	    ret_service);
}

#define BATCH_PAGE_MAX		100	/* jobs.list pageSize cap */
/* Only what batch_job_map() reads (DESIGN G0.1 `fields`). */
#define BATCH_LIST_FIELDS	"jobs(name,labels,status(state," \
	"statusEvents,taskGroups),createTime,updateTime),nextPageToken," \
	"unreachable"

/* A launch in progress. */
struct batch_call {
	char		*name;		/* projects/P/locations/R/jobs/ID */
	prov_launch_cb	 launch_cb;
	void		*arg;
};

static void
batch_call_free(struct batch_call *bc)
{
	free(bc->name);
	free(bc);
}

/*
 * jobs.create answered. The jobId makes the create idempotent: a retried
 * create of a job that exists is refused with 409 ALREADY_EXISTS, which
 * prov_result_from_error() turns into PROV_FAIL_EXISTS (adopt it). Quota
 * and capacity are checked later, when Batch schedules the job: they come
 * back through batch_job_map() as STOCKOUT, not here.
 */
static void
batch_launch_on_created(const struct http_resp *resp, void *arg)
{
	struct batch_call	*bc = arg;
	struct prov_result	 r;
	const char		*name;

	memset(&r, 0, sizeof r);
	if (resp->err.kind != GCP_ERR_NONE)
		prov_result_from_error(&resp->err, &r);
	name = json_string_value(json_object_get(resp->json, "name"));
	if (r.fail == PROV_FAIL_NONE)
		r.cloud_id = name != NULL ? name : bc->name;
	else if (r.fail == PROV_FAIL_EXISTS)
		r.cloud_id = bc->name;
	bc->launch_cb(&r, bc->arg);
	batch_call_free(bc);
}

static int
batch_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	struct batch_call	*bc;
	const char		*project;
	json_t			*body;
	char			*url;
	int			 rc;

	if ((project = prov_project(g)) == NULL)
		return -EINVAL;
	if (batch_job_body(l, &body, NULL) != 0)
		return -EINVAL;
	bc = xcalloc(1, sizeof *bc);
	bc->name = xprintf("projects/%s/locations/%s/jobs/%s", project,
	    l->region, l->resource);
	bc->launch_cb = cb;
	bc->arg = arg;
	if (l->request_id != NULL)
		url = gcp_url(gcp_conf(g), GCP_API_BATCH, NULL,
		    "projects/%s/locations/%s/jobs?jobId=%s&requestId=%s",
		    project, l->region, l->resource, l->request_id);
	else
		url = gcp_url(gcp_conf(g), GCP_API_BATCH, NULL,
		    "projects/%s/locations/%s/jobs?jobId=%s", project,
		    l->region, l->resource);
	rc = prov_call(g, GCP_API_BATCH, "POST", url, body, HTTP_IDEMPOTENT,
	    batch_launch_on_created, bc);
	free(url);
	json_decref(body);
	if (rc != 0)
		batch_call_free(bc);
	return rc;
}

/* A poll reads jobs.list; "unreachable" names locations it missed. */
static const struct prov_listing batch_listing = {
	.api = GCP_API_BATCH,
	.items = "jobs",
	.map = batch_job_map,
	.service = "Batch",
};

/* One listing of every job of ours in REGION (provider.h poll). */
static int
batch_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	const char	*project;
	char		*filter, *url;

	if ((project = prov_project(g)) == NULL || region == NULL ||
	    install == NULL)
		return -EINVAL;
	filter = prov_filter_install(install);
	url = gcp_url(gcp_conf(g), GCP_API_BATCH, NULL,
	    "projects/%s/locations/%s/jobs?filter=%s&pageSize=%d&fields=%s",
	    project, region, filter,
	    http_page_size(gcp_http(g), BATCH_PAGE_MAX), BATCH_LIST_FIELDS);
	free(filter);
	return prov_poll_list(g, &batch_listing, url, install, cb, done, arg);
}

/*
 * Cancel is jobs.delete: it stops a running job and removes it, and
 * removes a finished one, which is how the daemon cleans up. DELETE is
 * idempotent, so no requestId: a repeat finds the job deleting or gone.
 * Done once the delete (a long-running operation) is accepted.
 */
static int
batch_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	const char	*project;
	char		*name, *url;
	int		 rc;

	if ((project = prov_project(g)) == NULL || ref->region == NULL ||
	    (ref->cloud_id == NULL && ref->resource == NULL))
		return -EINVAL;
	name = ref->cloud_id != NULL ? xstrdup(ref->cloud_id) :
	    xprintf("projects/%s/locations/%s/jobs/%s", project, ref->region,
	    ref->resource);
	url = gcp_url(gcp_conf(g), GCP_API_BATCH, NULL, "%-s", name);
	rc = prov_delete(g, GCP_API_BATCH, url, done, arg);
	free(url);
	free(name);
	return rc;
}

const struct provider prov_batch = {
	.name = "batch",
	.quota_metric = batch_quota_metric,
	.picks_zone = 1,
	.reservations = 1,
	.poll_global = 0,
	.quota_service = GCP_SERVICE_GCE,
	.price_service = GCP_SERVICE_BATCH,
	.quota_usage_ours = 0,
	.launch = batch_launch,
	.poll = batch_poll,
	.cancel = batch_cancel,
};
