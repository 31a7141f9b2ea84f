/*
 * gce.c: running a job on a Compute Engine VM of its own (DESIGN GC),
 * Spot or standard, which runs the container from a fixed startup script
 * (gce-startup.sh), reports the exit code as a guest attribute and powers
 * itself off.
 *
 * Builds the instances.insert body, maps an Instance -- plus, once it has
 * stopped, its guest attributes and the zone operation that stopped it --
 * onto enum prov_state, and drives insert / aggregatedList / delete
 * through providers/gcp. Knows Compute Engine's JSON and nothing of
 * SQLite or of the other services.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
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
#include "providers/gcp/storage.h"

/*
 * The boot image: Google's Deep Learning VM "common" family with CUDA
 * 12.8 and the NVIDIA 570 driver on Ubuntu 22.04. It carries what the
 * startup script needs -- docker, the NVIDIA container toolkit, python3,
 * curl, gcloud -- and a driver recent enough for every GPU in
 * common/gpu.c, B200 included (Blackwell needs 570 or later). An image
 * family always names the newest image of the family (Compute Engine
 * "Image families best practices"); the family name is the one people
 * pass to `gcloud compute instances create --image-family=common-cu128-
 * ubuntu-2204-nvidia-570 --image-project=deeplearning-platform-release`.
 */
const char gce_boot_image[] = GCP_BOOT_IMAGE;

#define GCE_DISK_GB	"100"
/*
 * Grace added to the job's max_runtime for the VM's own maxRunDuration:
 * booting, the driver check and the image pull come first, and the
 * startup script enforces max_runtime on the container itself. The VM
 * limit is only the backstop for a guest that hangs.
 */
#define GCE_RUNTIME_GRACE	3600

/*
 * Accelerator-optimized machine series carry their GPUs: A2 (A100), A3
 * (H100, H200), A4 (B200), A4X, G2 (L4). Only N1 machines take
 * guestAccelerators (DESIGN GC.1; Compute Engine "GPU machine types").
 */
int
gce_machine_has_gpus(const char *mt)
{
	static const char *const series[] = { "a2-", "a3-", "a4-", "a4x-",
	    "g2-" };
	size_t	i;

	if (mt == NULL)
		return 0;
	for (i = 0; i < sizeof series / sizeof series[0]; i++)
		if (strncmp(mt, series[i], strlen(series[i])) == 0)
			return 1;
	return 0;
}

/*
 * command and args of the gpuq-job item: the job's, or for a
 * python_package job the executor's command line (prov_pypkg_argv).
 */
static void
gce_job_code(const struct prov_launch *l, json_t *job)
{
	json_t	*cmd, *args;

	if (l->python_package != NULL) {
		prov_pypkg_argv(l, &cmd, &args);
		prov_set(job, "command", cmd);
		prov_set(job, "args", args);
		return;
	}
	prov_set(job, "command", l->command != NULL ?
	    json_deep_copy(l->command) : json_array());
	prov_set(job, "args", l->args != NULL ? json_deep_copy(l->args) :
	    json_array());
}

/*
 * Where the startup script also writes how the job ended, before the VM
 * stops: "<output place>gpuq/attempt-<n>.exit.json", a JSON object with the
 * guest attributes' keys ({"exit-code": "3"}). Guest attributes may not be
 * readable once the VM has stopped (DESIGN GC.6); either is
 * authoritative. New string, or NULL when the job has no gs:// output
 * place.
 */
static char *
gce_exit_object(const struct prov_launch *l)
{
	const char	*o = l->output_dir;

	if (o == NULL || strncmp(o, "gs://", 5) != 0 || o[5] == '\0')
		return NULL;
	return xprintf("%s%sgpuq/attempt-%d.exit.json", o,
	    o[strlen(o) - 1] == '/' ? "" : "/", l->attempt);
}

/* The metadata item gpuq-job: what the startup script runs. New string. */
static char *
gce_job_text(const struct prov_launch *l)
{
	json_t	*job;
	char	*s;

	job = prov_checked(json_pack("{s:s}", "image", l->image));
	gce_job_code(l, job);
	prov_set(job, "env", l->env != NULL ? json_deep_copy(l->env) :
	    json_object());
	prov_set(job, "max_runtime", json_integer(l->max_runtime > 0 ?
	    l->max_runtime : 0));
	if ((s = gce_exit_object(l)) != NULL) {
		prov_set(job, "exit_object", json_string(s));
		free(s);
	}
	if ((s = json_dumps(job, JSON_COMPACT)) == NULL)
		fatalx("gce: out of memory building a request");
	json_decref(job);
	return s;
}

/* {"key": KEY, "value": VALUE} appended to ITEMS. */
static void
gce_item(json_t *items, const char *key, const char *value)
{
	if (json_array_append_new(items, prov_checked(json_pack(
	    "{s:s, s:s}", "key", key, "value", value))) != 0)
		fatalx("gce: out of memory building a request");
}


/*
 * A launch into reservation L->reservation names it: SPECIFIC_RESERVATION
 * with Google's by-name key (DESIGN L.2; https://cloud.google.com/compute/
 * docs/instances/reservations-consume). Every other launch says
 * NO_RESERVATION, so an on-demand VM gpuq prices at the on-demand rate
 * never silently eats a reservation that "any" affinity would match.
 */
static void
gce_reservation_affinity(const struct prov_launch *l, json_t *body)
{
	if (l->reservation != NULL && *l->reservation != '\0')
		prov_set(body, "reservationAffinity", json_pack(
		    "{s:s, s:s, s:[s]}", "consumeReservationType",
		    "SPECIFIC_RESERVATION", "key",
		    "compute.googleapis.com/reservation-name", "values",
		    l->reservation));
	else
		prov_set(body, "reservationAffinity", json_pack("{s:s}",
		    "consumeReservationType", "NO_RESERVATION"));
}

/*
 * The body of instances.insert; requestId goes in the URL, so a retried
 * insert is the same insert (DESIGN G0.4).
 *
 * Scheduling: GPU VMs cannot live-migrate, so onHostMaintenance TERMINATE
 * and no automatic restart: the daemon, not Compute Engine, decides where
 * the job runs next. instanceTerminationAction STOP, not DELETE: a
 * preempted VM then stays, TERMINATED, so the daemon can still read its
 * guest attributes and find the compute.instances.preempted operation
 * that stopped it, and only then delete it (with DELETE the instance
 * would be gone, and "gone" cannot tell preemption from anything else).
 * STOP is also what maxRunDuration needs next to it.
 *
 * Metadata: the fixed startup script, the job as JSON (gpuq-job; user
 * strings never become shell code), guest attributes on (the exit code
 * comes back that way), and the Deep Learning VM's own driver switch.
 */
/*
 * Flex-start (API-NOTES K.2, whose fields are newer than compute.v1.json
 * here): provisioningModel FLEX_START with a maxRunDuration (at most 7
 * days), no reservation, and params.requestValidForDuration, how long
 * the VM may wait in PENDING for capacity. Durations are Compute's
 * {"seconds": "N"} objects. instanceTerminationAction stays STOP, which
 * Google allows for flex-start too: the daemon reads a stopped VM as it
 * does any other (gce_instance_body()).
 */
static void
gce_flex(const struct prov_launch *l, json_t *body, json_t *sched)
{
	char	*s;

	if (l->capacity != CAPACITY_FLEX)
		return;
	prov_set(sched, "provisioningModel", json_string("FLEX_START"));
	s = xprintf("%lld", (long long)prov_flex_run(l, GCE_RUNTIME_GRACE));
	prov_set(sched, "maxRunDuration", json_pack("{s:s}", "seconds", s));
	free(s);
	/* NO_RESERVATION, as every launch outside a reservation says
	 * (gce_reservation_affinity()). */
	s = xprintf("%lld", (long long)prov_flex_queue(l,
	    CAPACITY_FLEX_MAX_WAIT));
	prov_set(body, "params", json_pack("{s:{s:s}}",
	    "requestValidForDuration", "seconds", s));
	free(s);
}

int
gce_instance_body(const struct prov_launch *l, json_t **ret, char **cause)
{
	json_t		*body, *sched, *items;
	char		*s;

	if (prov_launch_check(l, cause) != 0)
		return -EINVAL;
	if (l->zone == NULL || *l->zone == '\0') {
		if (cause != NULL)
			*cause = xprintf("launch of %s: Compute Engine needs "
			    "a zone", l->resource);
		return -EINVAL;
	}

	s = xprintf("zones/%s/machineTypes/%s", l->zone, l->machine_type);
	body = prov_checked(json_pack("{s:s, s:s}", "name", l->resource,
	    "machineType", s));
	free(s);
	if (l->gpu != NULL && !gce_machine_has_gpus(l->machine_type)) {
		s = xprintf("zones/%s/acceleratorTypes/%s", l->zone,
		    l->gpu->name);
		prov_set(body, "guestAccelerators", json_pack(
		    "[{s:s, s:i}]", "acceleratorType", s,
		    "acceleratorCount", l->gpu_count));
		free(s);
	}

	sched = prov_checked(json_pack("{s:s, s:s, s:b, s:s}",
	    "provisioningModel", l->spot ? "SPOT" : "STANDARD",
	    "onHostMaintenance", "TERMINATE",
	    "automaticRestart", 0,
	    "instanceTerminationAction", "STOP"));
	if (l->max_runtime > 0) {
		s = xprintf("%lld", (long long)(l->max_runtime +
		    GCE_RUNTIME_GRACE));
		prov_set(sched, "maxRunDuration", json_pack("{s:s}",
		    "seconds", s));
		free(s);
	}
	gce_flex(l, body, sched);
	prov_set(body, "scheduling", sched);
	gce_reservation_affinity(l, body);

	prov_set(body, "disks", json_pack("[{s:b, s:b, s:{s:s, s:s}}]",
	    "boot", 1, "autoDelete", 1, "initializeParams",
	    "sourceImage", gce_boot_image, "diskSizeGb", GCE_DISK_GB));
	prov_set(body, "networkInterfaces", json_pack(
	    "[{s:s, s:[{s:s, s:s}]}]", "network", "global/networks/default",
	    "accessConfigs", "type", "ONE_TO_ONE_NAT", "name",
	    "External NAT"));
	prov_set(body, "serviceAccounts", json_pack("[{s:s, s:[s]}]",
	    "email", "default", "scopes", GCP_SCOPE));
	prov_set(body, "labels", prov_labels_new(l, 0));

	items = prov_checked(json_array());
	gce_item(items, "startup-script", gce_startup_script);
	s = gce_job_text(l);
	gce_item(items, "gpuq-job", s);
	free(s);
	gce_item(items, "enable-guest-attributes", "TRUE");
	gce_item(items, "install-nvidia-driver", "True");
	prov_set(body, "metadata", json_pack("{s:o}", "items", items));
	prov_site_gce(l, body);
	*ret = body;
	return 0;
}

/* Instance.status (C.2) values after which the VM no longer runs. */
int
gce_instance_stopped(json_t *inst)
{
	const char	*st;

	st = json_string_value(json_object_get(inst, "status"));
	return st != NULL && (strcmp(st, "TERMINATED") == 0 ||
	    strcmp(st, "STOPPED") == 0 || strcmp(st, "SUSPENDED") == 0);
}

/*
 * The value of guest attribute gpuq/KEY in a getGuestAttributes answer
 * (schema GuestAttributes): either one variable (variableKey
 * "gpuq/exit-code", variableValue) or a query (queryPath "gpuq/",
 * queryValue.items[] {namespace, key, value}). Borrowed, or NULL.
 */
static const char *
gce_guest_value(json_t *guest, const char *key)
{
	const char	*vk;
	json_t		*it;
	size_t		 i;

	vk = json_string_value(json_object_get(guest, "variableKey"));
	if (vk != NULL && strncmp(vk, "gpuq/", 5) == 0 &&
	    strcmp(vk + 5, key) == 0)
		return json_string_value(json_object_get(guest,
		    "variableValue"));
	json_array_foreach(json_object_get(json_object_get(guest,
	    "queryValue"), "items"), i, it) {
		if (json_is_string(json_object_get(it, "namespace")) &&
		    strcmp(json_string_value(json_object_get(it,
		    "namespace")), "gpuq") == 0 &&
		    json_is_string(json_object_get(it, "key")) &&
		    strcmp(json_string_value(json_object_get(it, "key")),
		    key) == 0)
			return json_string_value(json_object_get(it, "value"));
	}
	return NULL;
}

/* Exit code text "0".."255" to its number, or -1. */
static int
gce_exit_number(const char *s)
{
	char	*end;
	long	 n;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	n = strtol(s, &end, 10);
	if (*end != '\0' || n > 255)
		return -1;
	return (int)n;
}

/*
 * Did the system stop the VM under the job (C.4)? A preemption or a host
 * event sends the guest an ACPI shutdown and ~30 s later cuts it off, so
 * the container is stopped by a signal and the guest may still report
 * 143 or 137 -- or 0, when the training catches SIGTERM, saves a
 * checkpoint and exits cleanly. Either way the work is not done: such an
 * operation wins over any exit code the guest reported.
 */
static int
gce_system_stop(const char *op_type)
{
	return op_type != NULL && (strcmp(op_type,
	    "compute.instances.preempted") == 0 || strcmp(op_type,
	    "compute.instances.terminateOnHostMaintenance") == 0 ||
	    strcmp(op_type, "compute.instances.hostError") == 0);
}

/*
 * Why a stopped VM stopped. A system operation that stopped it wins (see
 * gce_system_stop()); then what the guest reported; then the other
 * operations (C.4):
 *
 *   compute.instances.preempted               PREEMPTED
 *   ...terminateOnHostMaintenance, hostError  MAINTENANCE
 *   guest gpuq/exit-code 0                    SUCCEEDED
 *   guest gpuq/exit-code N, gpuq/limit set    ERROR: max_runtime was hit
 *   guest gpuq/exit-code N                    FAILED, exit N
 *   guest gpuq/error (script could not run)   LOST: no driver, no docker,
 *                                             no metadata; a new VM may do
 *   compute.instances.guestTerminate          LOST: the VM shut down
 *                                             without reporting
 *   stop, delete (gpuq's own calls)           CANCELLED
 *   nothing known                             LOST
 */
static void
gce_stopped_map(json_t *guest, const char *op_type, struct prov_observed *o,
    struct prov_text *t)
{
	const char	*limit, *err;
	int		 code;

	code = gce_exit_number(gce_guest_value(guest, "exit-code"));
	limit = gce_guest_value(guest, "limit");
	err = gce_guest_value(guest, "error");
	if (gce_system_stop(op_type)) {
		code = -1;	/* the shutdown's, not the job's */
		err = limit = NULL;
	}
	if (code == 0)
		o->state = PROV_SUCCEEDED;
	else if (code > 0 && limit != NULL) {
		o->state = PROV_ERROR;
		(void)snprintf(t->message, sizeof t->message, "the job ran "
		    "past its max_runtime and was stopped (exit code %d)",
		    code);
		o->message = t->message;
	} else if (code > 0)
		o->state = PROV_FAILED;
	else if (err != NULL) {
		o->state = PROV_LOST;
		(void)snprintf(t->message, sizeof t->message, "the VM could "
		    "not run the job: %s", err);
		o->message = t->message;
	} else if (op_type != NULL &&
	    strcmp(op_type, "compute.instances.preempted") == 0) {
		o->state = PROV_PREEMPTED;
		o->message = "the Spot VM was preempted";
	} else if (op_type != NULL && (strcmp(op_type,
	    "compute.instances.terminateOnHostMaintenance") == 0 ||
	    strcmp(op_type, "compute.instances.hostError") == 0)) {
		o->state = PROV_MAINTENANCE;
		o->message = strcmp(op_type, "compute.instances.hostError") ==
		    0 ? "the VM's host failed" : "the VM was stopped for host "
		    "maintenance";
	} else if (op_type != NULL &&
	    strcmp(op_type, "compute.instances.guestTerminate") == 0) {
		o->state = PROV_LOST;
		o->message = "the VM shut itself down without reporting an "
		    "exit code";
	} else if (op_type != NULL && (strcmp(op_type, "stop") == 0 ||
	    strcmp(op_type, "delete") == 0)) {
		o->state = PROV_CANCELLED;
		o->message = "the VM was stopped or deleted by request";
	} else {
		o->state = PROV_LOST;
		o->message = "the VM stopped without an exit code or a system "
		    "event saying why";
	}
	o->exit_code = code;
}

/* Instance.status STOPPING: the VM is on its way down (C.2). */
int
gce_instance_stopping(json_t *inst)
{
	const char	*st;

	st = json_string_value(json_object_get(inst, "status"));
	return st != NULL && strcmp(st, "STOPPING") == 0;
}

/*
 * A STOPPING VM the system is taking away: Google records the
 * compute.instances.preempted (or host) operation when it starts the
 * stop (C.4), and the VM then takes up to ~30 s to reach TERMINATED.
 * The job is over at the operation -- its exit code would be the
 * shutdown's anyway (gce_system_stop()) -- so it is ended then, not at
 * TERMINATED, and the next attempt does not wait for the stop
 * (DESIGN GC.4; gpuqd(8) "Preemption").
 */
static int
gce_stopping_system(json_t *inst, const char *op_type)
{
	return gce_instance_stopping(inst) && gce_system_stop(op_type);
}

/*
 * Instance.status (C.2) onto prov_state:
 *
 *   PENDING (flex-start, waiting for capacity),
 *   PROVISIONING, STAGING                    PENDING
 *   RUNNING, REPAIRING                       RUNNING
 *   STOPPING with a system operation         see gce_stopped_map():
 *     (preempted, host maintenance/error)    PREEMPTED or MAINTENANCE now
 *   STOPPING, SUSPENDING, DEPROVISIONING     RUNNING until it has stopped:
 *                                            the exit code and the system
 *                                            operation are read once, then
 *   TERMINATED, STOPPED, SUSPENDED           see gce_stopped_map()
 */
int
gce_instance_map(json_t *inst, json_t *guest, const char *op_type,
    struct prov_observed *o, struct prov_text *t)
{
	const char	*status, *name;

	prov_observed_init(o);
	memset(t, 0, sizeof *t);
	name = json_string_value(json_object_get(inst, "name"));
	status = json_string_value(json_object_get(inst, "status"));
	if (name == NULL || status == NULL)
		return -EINVAL;
	o->resource = name;
	o->cloud_id = json_string_value(json_object_get(inst, "id"));
	o->zone = prov_last_segment(json_string_value(json_object_get(inst,
	    "zone")));
	prov_observed_labels(o, json_object_get(inst, "labels"));
	/* One node of a gang: report it as such (gang.c). */
	if (prov_gang_node_parse(name, t->gang, sizeof t->gang,
	    &o->node) == 0) {
		o->gang = t->gang;
		if (o->job_id == 0)
			(void)prov_name_parse(t->gang, &o->job_id,
			    &o->attempt);
	}
	if (o->job_id == 0)	/* a poll leaves labels out: see GCE_LIST_FIELDS */
		(void)prov_name_parse(name, &o->job_id, &o->attempt);
	o->created = prov_json_time(inst, "creationTimestamp");
	o->started = prov_json_time(inst, "lastStartTimestamp");

	if (strcmp(status, "PROVISIONING") == 0 ||
	    strcmp(status, "STAGING") == 0)
		o->state = PROV_PENDING;
	else if (strcmp(status, "PENDING") == 0) {
		/* A flex-start VM waiting for capacity (API-NOTES K.2;
		 * newer than compute.v1.json's status enum). */
		o->state = PROV_PENDING;
		o->message = "waiting for flex-start capacity";
	}
	else if (gce_instance_stopped(inst)) {
		o->ended = prov_json_time(inst, "lastStopTimestamp");
		gce_stopped_map(guest, op_type, o, t);
	} else if (gce_stopping_system(inst, op_type))
		gce_stopped_map(NULL, op_type, o, t);
	else {
		o->state = PROV_RUNNING;
		if (strcmp(status, "RUNNING") != 0)
			o->message = json_string_value(json_object_get(inst,
			    "status"));
	}
	return 0;
}

/* The quota a launch draws on (provider.h quota_metric): Compute Engine's. */
static char *
gce_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	return prov_quota_metric(g, GCP_SERVICE_GCE, region, gpu, spot,
	    ret_service);
}

#define GCE_WAIT_MAX	30	/* zoneOperations.wait calls per launch */
#define GCE_PAGE_MAX	500	/* aggregatedList maxResults cap */
#define GCE_LINK	"https://www.googleapis.com/compute/v1/"
/*
 * What a poll asks for (DESIGN G0.1 `fields`), measured against the
 * CPU budget of a poll (50 ms at 10,000 VMs): with name, zone, labels,
 * id and creation time a VM costs ~390 bytes and parsing 10,000 of them
 * takes ~54 ms; with only the four fields below, ~95 bytes and ~14 ms
 * (mapping adds ~2.5 ms). Nothing is lost: the zone is the scope the
 * VM is listed under ("zones/Z"), job and attempt are in the resource
 * name, the install label is the list filter, and the rest the daemon
 * recorded at launch.
 */
#define GCE_LIST_FIELDS	"items/*/instances(name,status," \
	"lastStartTimestamp,lastStopTimestamp),nextPageToken,unreachables"
#define GCE_OPS_FIELDS	"items(operationType,insertTime,targetLink)," \
	"nextPageToken"

/*
 * A launch in progress: instances.insert with the attempt's requestId
 * (the HTTP layer may repeat it: Compute ignores a repeat and answers
 * with the first Operation, DESIGN G0.4), then the zone Operation is
 * followed with zoneOperations.wait until DONE (C.3). Quota and capacity
 * errors arrive either at once (HTTP 403 quotaExceeded) or in the DONE
 * Operation (QUOTA_EXCEEDED, ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS]
 * with zonesAvailable, C.5); both end in prov_result_from_error().
 */
struct gce_launch {
	struct gcp	*g;
	char		*project;
	char		*zone;
	char		*resource;
	int		 waits;
	prov_launch_cb	 cb;
	void		*arg;
	/* A gang (gce_gang_launch()): one insert per node, in rank order. */
	int		 nodes;		/* 0: one VM */
	int		 rank;		/* the node being inserted */
	json_t		**bodies;	/* [nodes] insert bodies */
	char		**rids;		/* [nodes] their requestIds */
	char		*main_cloud_id;	/* rank 0's id */
	char		*region;
	char		*policy;	/* compact placement policy name,
					   made first; NULL: none */
	char		*policy_rid;
};

static void	gce_gang_free(struct gce_launch *);
static int	gce_gang_next(struct gce_launch *, json_t *op);

static void
gce_launch_free(struct gce_launch *gl)
{
	gce_gang_free(gl);
	free(gl->project);
	free(gl->zone);
	free(gl->resource);
	free(gl);
}

static void
gce_launch_end(struct gce_launch *gl, struct prov_result *r)
{
	r->zone = gl->zone;
	gl->cb(r, gl->arg);
	gce_launch_free(gl);
}

static void
gce_launch_fail(struct gce_launch *gl, const struct gcp_error *e)
{
	struct prov_result	r;

	prov_result_from_error(e, &r);
	gce_launch_end(gl, &r);
}

/* A failure of our own making (a call that could not start). */
static void
gce_launch_fail_rc(struct gce_launch *gl, int rc, const char *what)
{
	struct gcp_error	e;

	prov_error_start(&e, rc, "%s", what);
	gce_launch_fail(gl, &e);
	gcp_error_done(&e);
}

static void	gce_launch_on_op(const struct http_resp *, void *);

/* Where the insert's Operation OP stands: done, failed, or wait more. */
static void
gce_launch_op(struct gce_launch *gl, json_t *op)
{
	struct prov_result	 r;
	struct gcp_error	 e;
	const char		*st, *name;
	char			*url;
	int			 rc;

	st = json_string_value(json_object_get(op, "status"));
	name = json_string_value(json_object_get(op, "name"));
	if (st != NULL && strcmp(st, "DONE") == 0) {
		gcp_error_init(&e);
		if (gcp_error_from_operation(op, &e)) {
			gce_launch_fail(gl, &e);
			gcp_error_done(&e);
			return;
		}
		if (gl->nodes > 1 && gce_gang_next(gl, op))
			return;
		memset(&r, 0, sizeof r);
		r.cloud_id = gl->main_cloud_id != NULL ? gl->main_cloud_id :
		    json_string_value(json_object_get(op, "targetId"));
		gce_launch_end(gl, &r);
		return;
	}
	if (name == NULL || ++gl->waits > GCE_WAIT_MAX) {
		gcp_error_init(&e);
		e.kind = GCP_ERR_UNAVAILABLE;
		e.message = xprintf("the insert of %s did not finish after %d "
		    "waits", gl->resource, GCE_WAIT_MAX);
		gce_launch_fail(gl, &e);
		gcp_error_done(&e);
		return;
	}
	url = gcp_url(gcp_conf(gl->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/operations/%s/wait", gl->project, gl->zone,
	    name);
	rc = prov_call(gl->g, GCP_API_COMPUTE, "POST", url, NULL,
	    HTTP_IDEMPOTENT, gce_launch_on_op, gl);
	free(url);
	if (rc != 0)
		gce_launch_fail_rc(gl, rc, "cannot wait for the insert");
}

/* An answer carrying an Operation: the insert's, or a wait's. */
static void
gce_launch_on_op(const struct http_resp *resp, void *arg)
{
	struct gce_launch	*gl = arg;

	if (resp->err.kind != GCP_ERR_NONE)
		gce_launch_fail(gl, &resp->err);
	else
		gce_launch_op(gl, resp->json);
}

/*
 * A gang on Compute Engine (doc/DESIGN.md "Gangs"): N VMs named
 * <resource>-<rank> in one zone, inserted in rank order, each with its
 * own requestId derived from the attempt's, so an insert repeated after
 * a crash is the same insert (DESIGN G0.4) and a re-launch creates only
 * the nodes that are missing. Rank 0 goes first: its internal address,
 * read back once it exists, is handed to the others as the metadata
 * item gpuq-main-addr, which gce-startup.sh turns into GPUQ_MAIN_ADDR
 * and MASTER_ADDR (rank 0 reads its own address from the metadata
 * server).
 */
int
gce_gang_body(const struct prov_launch *l, int rank, json_t **ret)
{
	struct prov_launch	 n = *l;
	json_t			*env;
	char			*name, num[16];
	int			 rc;

	name = prov_gang_node_name(l->resource, rank);
	env = l->env != NULL ? json_deep_copy(l->env) : json_object();
	if (env == NULL)
		fatalx("gce: out of memory building a request");
	(void)snprintf(num, sizeof num, "%d", rank);
	prov_set(env, "GPUQ_NODE_RANK", json_string(num));
	prov_set(env, "NODE_RANK", json_string(num));
	prov_set(env, "RANK", json_string(num));
	n.resource = name;
	n.env = env;
	rc = gce_instance_body(&n, ret, NULL);
	json_decref(env);
	free(name);
	return rc;
}

static void
gce_gang_free(struct gce_launch *gl)
{
	int	i;

	for (i = 0; i < gl->nodes; i++) {
		if (gl->bodies != NULL)
			json_decref(gl->bodies[i]);
		if (gl->rids != NULL)
			free(gl->rids[i]);
	}
	free(gl->bodies);
	free(gl->rids);
	free(gl->main_cloud_id);
	free(gl->region);
	free(gl->policy);
	free(gl->policy_rid);
	gl->bodies = NULL;
	gl->rids = NULL;
	gl->main_cloud_id = gl->region = gl->policy = gl->policy_rid = NULL;
}

/*
 * Machine series Compute Engine accepts in a compact placement policy
 * (API-NOTES N.3: A4X, A4, A3, A2, G4, G2 on the GPU side; the N1
 * machines T4 and V100 attach to are not listed).
 */
int
gce_machine_compact(const char *mt)
{
	static const char *const series[] = { "a2-", "a3-", "a4-", "a4x-",
	    "g2-", "g4-" };
	size_t	i;

	if (mt == NULL)
		return 0;
	for (i = 0; i < sizeof series / sizeof series[0]; i++)
		if (strncmp(mt, series[i], strlen(series[i])) == 0)
			return 1;
	return 0;
}

char *
gce_gang_policy_name(const char *resource)
{
	return xprintf("%s-pack", resource);
}

json_t *
gce_gang_policy_body(const struct prov_launch *l)
{
	json_t	*b;
	char	*name;

	name = gce_gang_policy_name(l->resource);
	b = prov_checked(json_pack("{s:s, s:s, s:{s:s, s:i}}", "name", name,
	    "description", "gpuq: the nodes of one multi-node attempt, "
	    "placed close together", "groupPlacementPolicy", "collocation",
	    "COLLOCATED", "vmCount", prov_gang_nodes(l)));
	free(name);
	return b;
}

/* Insert node GL->rank: 0, or -errno (the call did not start). */
static int
gce_gang_send(struct gce_launch *gl)
{
	char	*url;
	int	 rc;

	gl->waits = 0;
	url = gcp_url(gcp_conf(gl->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances?requestId=%s", gl->project,
	    gl->zone, gl->rids[gl->rank]);
	rc = prov_call(gl->g, GCP_API_COMPUTE, "POST", url,
	    gl->bodies[gl->rank], HTTP_IDEMPOTENT, gce_launch_on_op, gl);
	free(url);
	return rc;
}

/* Insert node GL->rank, from a callback: a failure ends the launch. */
static void
gce_gang_insert(struct gce_launch *gl)
{
	int	rc;

	if ((rc = gce_gang_send(gl)) != 0)
		gce_launch_fail_rc(gl, rc, "cannot insert a node");
}

/* Rank 0 read back: hand its address to the others, insert rank 1. */
static void
gce_gang_on_main(const struct http_resp *resp, void *arg)
{
	struct gce_launch	*gl = arg;
	json_t			*items;
	const char		*ip, *id;
	int			 i;

	if (resp->err.kind != GCP_ERR_NONE) {
		gce_launch_fail(gl, &resp->err);
		return;
	}
	ip = json_string_value(json_object_get(json_array_get(
	    json_object_get(resp->json, "networkInterfaces"), 0),
	    "networkIP"));
	if (ip == NULL) {
		gce_launch_fail_rc(gl, -EPROTO, "the main node has no "
		    "internal address");
		return;
	}
	id = json_string_value(json_object_get(resp->json, "id"));
	if (id != NULL)
		gl->main_cloud_id = xstrdup(id);
	for (i = 1; i < gl->nodes; i++) {
		items = json_object_get(json_object_get(gl->bodies[i],
		    "metadata"), "items");
		gce_item(items, "gpuq-main-addr", ip);
	}
	gl->rank = 1;
	gce_gang_insert(gl);
}

/*
 * Node GL->rank is inserted (its Operation OP is DONE without error):
 * 1 if the launch goes on with the next node, 0 if that was the last.
 */
static int
gce_gang_next(struct gce_launch *gl, json_t *op)
{
	char	*url, *name;
	int	 rc;

	(void)op;
	if (gl->rank + 1 >= gl->nodes)
		return 0;
	if (gl->rank > 0) {
		gl->rank++;
		gce_gang_insert(gl);
		return 1;
	}
	name = prov_gang_node_name(gl->resource, 0);
	url = gcp_url(gcp_conf(gl->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances/%s?fields=id,networkInterfaces",
	    gl->project, gl->zone, name);
	free(name);
	rc = prov_call(gl->g, GCP_API_COMPUTE, "GET", url, NULL,
	    HTTP_IDEMPOTENT, gce_gang_on_main, gl);
	free(url);
	if (rc != 0)
		gce_launch_fail_rc(gl, rc, "cannot read the main node");
	return 1;
}

static void	gce_gang_on_policy(const struct http_resp *, void *);

/* The compact placement policy is there (or was already): go on with
 * rank 0. */
static void
gce_gang_policy_made(struct gce_launch *gl)
{
	gl->rank = 0;
	gce_gang_insert(gl);
}

/* Where the policy insert's regional Operation OP stands. */
static void
gce_gang_policy_op(struct gce_launch *gl, json_t *op)
{
	struct gcp_error	 e;
	const char		*st, *name;
	char			*url;
	int			 rc;

	st = json_string_value(json_object_get(op, "status"));
	name = json_string_value(json_object_get(op, "name"));
	if (st != NULL && strcmp(st, "DONE") == 0) {
		gcp_error_init(&e);
		if (gcp_error_from_operation(op, &e) &&
		    e.kind != GCP_ERR_CONFLICT) {
			gce_launch_fail(gl, &e);
			gcp_error_done(&e);
			return;
		}
		gcp_error_done(&e);
		gce_gang_policy_made(gl);
		return;
	}
	if (name == NULL || ++gl->waits > GCE_WAIT_MAX) {
		gce_launch_fail_rc(gl, -ETIMEDOUT, "the placement policy was "
		    "not made in time");
		return;
	}
	url = gcp_url(gcp_conf(gl->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s/operations/%s/wait", gl->project,
	    gl->region, name);
	rc = prov_call(gl->g, GCP_API_COMPUTE, "POST", url, NULL,
	    HTTP_IDEMPOTENT, gce_gang_on_policy, gl);
	free(url);
	if (rc != 0)
		gce_launch_fail_rc(gl, rc, "cannot wait for the placement "
		    "policy");
}

static void
gce_gang_on_policy(const struct http_resp *resp, void *arg)
{
	struct gce_launch	*gl = arg;

	/* Already there (a re-launch after a crash): use it. */
	if (resp->err.kind == GCP_ERR_CONFLICT)
		gce_gang_policy_made(gl);
	else if (resp->err.kind != GCP_ERR_NONE)
		gce_launch_fail(gl, &resp->err);
	else
		gce_gang_policy_op(gl, resp->json);
}

/*
 * A compact placement policy for exactly this gang (API-NOTES N.3:
 * groupPlacementPolicy COLLOCATED, vmCount N), made before any node and
 * named in each node's resourcePolicies; its requestId is derived from
 * the attempt's, so a re-launch makes it once.
 */
static int
gce_gang_policy_insert(struct gce_launch *gl, const struct prov_launch *l)
{
	json_t	*body;
	char	*url;
	int	 rc;

	gl->waits = 0;
	body = gce_gang_policy_body(l);
	url = gcp_url(gcp_conf(gl->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s/resourcePolicies?requestId=%s",
	    gl->project, gl->region, gl->policy_rid);
	rc = prov_call(gl->g, GCP_API_COMPUTE, "POST", url, body,
	    HTTP_IDEMPOTENT, gce_gang_on_policy, gl);
	free(url);
	json_decref(body);
	return rc;
}

/* provider.h launch of a gang of L->nodes VMs; as gce_launch(). */
static int
gce_gang_launch(struct gcp *g, const char *project,
    const struct prov_launch *l, prov_launch_cb cb, void *arg)
{
	struct gce_launch	*gl;
	char			 purpose[32], rid[37], *link;
	int			 i, rc;

	gl = xcalloc(1, sizeof *gl);
	gl->nodes = prov_gang_nodes(l);
	gl->bodies = xcalloc(gl->nodes, sizeof *gl->bodies);
	gl->rids = xcalloc(gl->nodes, sizeof *gl->rids);
	for (i = 0; i < gl->nodes; i++) {
		if (gce_gang_body(l, i, &gl->bodies[i]) != 0) {
			gce_launch_free(gl);
			return -EINVAL;
		}
		(void)snprintf(purpose, sizeof purpose, "node-%d", i);
		prov_uuid_derive(l->request_id != NULL ? l->request_id :
		    l->resource, purpose, rid);
		gl->rids[i] = xstrdup(rid);
	}
	gl->g = g;
	gl->project = xstrdup(project);
	gl->zone = xstrdup(l->zone);
	gl->resource = xstrdup(l->resource);
	gl->region = xstrdup(l->region);
	gl->cb = cb;
	gl->arg = arg;
	gl->rank = 0;
	if (!gce_machine_compact(l->machine_type)) {
		if ((rc = gce_gang_send(gl)) != 0)
			gce_launch_free(gl);
		return rc;
	}
	gl->policy = gce_gang_policy_name(l->resource);
	prov_uuid_derive(l->request_id != NULL ? l->request_id : l->resource,
	    "placement", rid);
	gl->policy_rid = xstrdup(rid);
	link = xprintf("projects/%s/regions/%s/resourcePolicies/%s", project,
	    l->region, gl->policy);
	for (i = 0; i < gl->nodes; i++)
		prov_set(gl->bodies[i], "resourcePolicies", json_pack("[s]",
		    link));
	free(link);
	if ((rc = gce_gang_policy_insert(gl, l)) != 0)
		gce_launch_free(gl);
	return rc;
}

/*
 * Deleting every node of a gang. DONE runs once every delete has been
 * answered (accepted, or the VM was gone). Each delete's Operation is
 * then followed until the VM is gone, and after the last the gang's
 * compact placement policy is deleted too (Compute refuses to delete a
 * policy a VM still uses; a gang without one answers NOT_FOUND, which
 * is fine). The placement policy's deletion is best effort: a gpuqd that
 * stops meanwhile leaves it, which costs nothing.
 */
struct gce_gang_del {
	struct gcp		*g;
	char			*project;
	char			*region;
	char			*zone;
	char			*policy;
	int			 accept_left;	/* deletes not answered */
	int			 gone_left;	/* VMs not known gone */
	int			 answered;	/* DONE was called */
	struct prov_result	 r;		/* the first failure */
	char			*msg;
	prov_done_cb		 done;
	void			*arg;
};

struct gce_node_del {
	struct gce_gang_del	*d;
	int			 accepted;
	int			 waits;
};

static void
gce_gang_del_free(struct gce_gang_del *d)
{
	free(d->project);
	free(d->region);
	free(d->zone);
	free(d->policy);
	free(d->msg);
	free(d);
}

static void
gce_gang_on_policy_deleted(const struct prov_result *r, void *arg)
{
	(void)r;
	gce_gang_del_free(arg);
}

/* One more VM is gone (or will not be followed): the last one frees the
 * placement policy. */
static void
gce_gang_node_gone(struct gce_node_del *nd)
{
	struct gce_gang_del	*d = nd->d;
	char			*url;

	free(nd);
	if (--d->gone_left > 0)
		return;
	url = gcp_url(gcp_conf(d->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/regions/%s/resourcePolicies/%s", d->project,
	    d->region, d->policy);
	if (prov_delete(d->g, GCP_API_COMPUTE, url,
	    gce_gang_on_policy_deleted, d) != 0)
		gce_gang_del_free(d);
	free(url);
}

/* One delete answered: count it; the last answer calls DONE. */
static void
gce_gang_node_answered(struct gce_node_del *nd, const struct gcp_error *e)
{
	struct gce_gang_del	*d = nd->d;
	struct prov_result	 r;

	nd->accepted = 1;
	prov_result_from_cancel(e, &r);
	if (r.fail != PROV_FAIL_NONE && d->r.fail == PROV_FAIL_NONE) {
		d->r.fail = r.fail;
		d->msg = r.message != NULL ? xstrdup(r.message) : NULL;
		d->r.message = d->msg;
	}
	if (--d->accept_left == 0 && !d->answered) {
		d->answered = 1;
		d->done(&d->r, d->arg);
	}
}

static void
gce_gang_node_on_op(const struct http_resp *resp, void *arg)
{
	struct gce_node_del	*nd = arg;
	struct gce_gang_del	*d = nd->d;
	const char		*st, *name;
	char			*url;

	if (!nd->accepted)
		gce_gang_node_answered(nd, resp->err.kind == GCP_ERR_NONE ?
		    NULL : &resp->err);
	if (resp->err.kind != GCP_ERR_NONE) {
		gce_gang_node_gone(nd);
		return;
	}
	st = json_string_value(json_object_get(resp->json, "status"));
	name = json_string_value(json_object_get(resp->json, "name"));
	if ((st != NULL && strcmp(st, "DONE") == 0) || name == NULL ||
	    ++nd->waits > GCE_WAIT_MAX) {
		gce_gang_node_gone(nd);
		return;
	}
	url = gcp_url(gcp_conf(d->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/operations/%s/wait", d->project, d->zone,
	    name);
	if (prov_call(d->g, GCP_API_COMPUTE, "POST", url, NULL,
	    HTTP_IDEMPOTENT, gce_gang_node_on_op, nd) != 0)
		gce_gang_node_gone(nd);
	free(url);
}

/* provider.h cancel of every node of REF's gang (as gce_cancel()). */
static int
gce_gang_cancel(struct gcp *g, const char *project,
    const struct prov_ref *ref, prov_done_cb done, void *arg)
{
	struct gce_gang_del	*d;
	struct gce_node_del	*nd;
	const char		*dash;
	char			*name, *url, rid[37];
	int			 i, rc, sent = 0;

	d = xcalloc(1, sizeof *d);
	d->g = g;
	d->project = xstrdup(project);
	d->zone = xstrdup(ref->zone);
	dash = strrchr(ref->zone, '-');
	d->region = dash != NULL ? xstrndup(ref->zone, (size_t)(dash -
	    ref->zone)) : xstrdup(ref->zone);
	d->policy = gce_gang_policy_name(ref->resource);
	d->done = done;
	d->arg = arg;
	/* Held by this call until every delete is sent. */
	d->accept_left = d->gone_left = 1;
	for (i = 0; i < ref->nodes; i++) {
		name = prov_gang_node_name(ref->resource, i);
		prov_uuid_derive(name, "delete", rid);
		url = gcp_url(gcp_conf(g), GCP_API_COMPUTE, NULL,
		    "projects/%s/zones/%s/instances/%s?requestId=%s", project,
		    ref->zone, name, rid);
		nd = xcalloc(1, sizeof *nd);
		nd->d = d;
		d->accept_left++;
		d->gone_left++;
		rc = prov_call(g, GCP_API_COMPUTE, "DELETE", url, NULL, 0,
		    gce_gang_node_on_op, nd);
		free(url);
		free(name);
		if (rc != 0) {
			free(nd);
			d->accept_left--;
			d->gone_left--;
			continue;
		}
		sent++;
	}
	if (sent == 0) {
		gce_gang_del_free(d);
		return -EIO;
	}
	/* Answers come later, from the loop: these never reach zero here. */
	d->accept_left--;
	d->gone_left--;
	return 0;
}

static int
gce_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	struct gce_launch	*gl;
	const char		*project;
	json_t			*body;
	char			*url, rid[37];
	int			 rc;

	if ((project = prov_project(g)) == NULL)
		return -EINVAL;
	if (prov_gang_nodes(l) > 1)
		return gce_gang_launch(g, project, l, cb, arg);
	if (gce_instance_body(l, &body, NULL) != 0)
		return -EINVAL;
	gl = xcalloc(1, sizeof *gl);
	gl->g = g;
	gl->project = xstrdup(project);
	gl->zone = xstrdup(l->zone);
	gl->resource = xstrdup(l->resource);
	gl->cb = cb;
	gl->arg = arg;
	if (l->request_id == NULL)
		prov_uuid_derive(l->resource, "insert", rid);
	url = gcp_url(gcp_conf(g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances?requestId=%s", project, l->zone,
	    l->request_id != NULL ? l->request_id : rid);
	rc = prov_call(g, GCP_API_COMPUTE, "POST", url, body, HTTP_IDEMPOTENT,
	    gce_launch_on_op, gl);
	free(url);
	json_decref(body);
	if (rc != 0)
		gce_launch_free(gl);
	return rc;
}

/*
 * What gpuq learnt about stopped VMs: their guest attributes and the
 * operation that stopped them, read once per VM (and per stop) rather
 * than at every poll while the VM waits to be deleted. An entry no poll
 * has seen for two polls is dropped.
 */
struct gce_ended {
	TAILQ_ENTRY(gce_ended)	 entry;
	char			*key;	/* zone/name@lastStopTimestamp */
	json_t			*guest;	/* NULL if none */
	char			*op_type;	/* NULL if none */
	unsigned long		 seen;	/* poll generation */
};
static TAILQ_HEAD(, gce_ended)	gce_ended_list =
    TAILQ_HEAD_INITIALIZER(gce_ended_list);
static unsigned long		gce_generation;

static struct gce_ended *
gce_ended_find(const char *key)
{
	struct gce_ended	*ge;

	TAILQ_FOREACH(ge, &gce_ended_list, entry)
		if (strcmp(ge->key, key) == 0)
			return ge;
	return NULL;
}

static void
gce_ended_prune(unsigned long gen)
{
	struct gce_ended	*ge, *next;

	for (ge = TAILQ_FIRST(&gce_ended_list); ge != NULL; ge = next) {
		next = TAILQ_NEXT(ge, entry);
		if (ge->seen + 1 >= gen)
			continue;
		TAILQ_REMOVE(&gce_ended_list, ge, entry);
		free(ge->key);
		json_decref(ge->guest);
		free(ge->op_type);
		free(ge);
	}
}

/* A poll in progress: the aggregated listing plus follow-ups. */
struct gce_poll {
	struct gcp		*g;
	char			*project;
	char			*prefix;	/* "gpuq-<install>-" */
	size_t			 prefix_len;
	unsigned long		 gen;
	int			 listing;	/* the listing is not over */
	int			 pending;	/* follow-ups in flight */
	struct gcp_error	 err;		/* the listing's, if it failed */
	char			*partial;	/* why the view is incomplete */
	prov_poll_cb		 cb;
	prov_done_cb		 done;
	void			*arg;
};

/* One stopped VM being looked into. */
struct gce_follow {
	struct gce_poll		*gp;
	json_t			*inst;	/* a reference */
	json_t			*guest;	/* a reference, or NULL */
	char			*key;
	char			*zone;
	char			*name;
	char			*op_type;
	int64_t			 op_time;
};

static void
gce_poll_partial(struct gce_poll *gp, const char *fmt, const char *what)
{
	if (gp->partial == NULL)
		gp->partial = xprintf(fmt, what);
}

/* Everything is in: call DONE once, then forget the poll. */
static void
gce_poll_maybe_end(struct gce_poll *gp)
{
	struct prov_result	r;

	if (gp->listing || gp->pending > 0)
		return;
	memset(&r, 0, sizeof r);
	if (gp->err.kind != GCP_ERR_NONE)
		prov_result_from_error(&gp->err, &r);
	else if (gp->partial != NULL) {
		r.fail = PROV_FAIL_TRANSIENT;
		r.message = gp->partial;
	}
	gce_ended_prune(gp->gen);
	gp->done(&r, gp->arg);
	gcp_error_done(&gp->err);
	free(gp->partial);
	free(gp->project);
	free(gp->prefix);
	free(gp);
}

/* Map INST (listed under ZONE) with what is known of its stop and
 * report it. */
static void
gce_poll_report(struct gce_poll *gp, json_t *inst, const char *zone,
    json_t *guest, const char *op_type)
{
	struct prov_observed	o;
	struct prov_text	t;

	if (gce_instance_map(inst, guest, op_type, &o, &t) != 0)
		return;
	if (o.zone == NULL)
		o.zone = zone;
	gp->cb(&o, gp->arg);
}

static void
gce_follow_free(struct gce_follow *gf)
{
	json_decref(gf->inst);
	json_decref(gf->guest);
	free(gf->key);
	free(gf->zone);
	free(gf->name);
	free(gf->op_type);
	free(gf);
}

/* The follow-up is complete: remember, report, and count it done. */
static void
gce_follow_end(struct gce_follow *gf)
{
	struct gce_poll		*gp = gf->gp;
	struct gce_ended	*ge;

	ge = xcalloc(1, sizeof *ge);
	ge->key = gf->key;
	gf->key = NULL;
	ge->guest = gf->guest != NULL ? json_incref(gf->guest) : NULL;
	ge->op_type = gf->op_type != NULL ? xstrdup(gf->op_type) : NULL;
	ge->seen = gp->gen;
	TAILQ_INSERT_TAIL(&gce_ended_list, ge, entry);
	gce_poll_report(gp, gf->inst, gf->zone, gf->guest, gf->op_type);
	gce_follow_free(gf);
	gp->pending--;
	gce_poll_maybe_end(gp);
}

/* The follow-up failed: the VM is left unreported, the poll partial. */
static void
gce_follow_fail(struct gce_follow *gf, const char *why)
{
	struct gce_poll	*gp = gf->gp;
	char		*what;

	what = xprintf("%s (%s)", gf->name, why);
	gce_poll_partial(gp, "could not read why VM %s stopped", what);
	free(what);
	gce_follow_free(gf);
	gp->pending--;
	gce_poll_maybe_end(gp);
}

/*
 * The system operations that stop a VM (DESIGN GC.4), and gpuq's own
 * stop and delete. Other operations on the VM (insert, setLabels...) say
 * nothing about why it stopped.
 */
static int
gce_stop_operation(const char *type)
{
	static const char *const types[] = {
		"compute.instances.preempted",
		"compute.instances.terminateOnHostMaintenance",
		"compute.instances.hostError",
		"compute.instances.guestTerminate",
		"stop", "delete",
	};
	size_t	i;

	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(type, types[i]) == 0)
			return 1;
	return 0;
}

static void
gce_follow_on_ops_page(json_t *page, void *arg)
{
	struct gce_follow	*gf = arg;
	const char		*type;
	json_t			*op;
	size_t			 i;
	int64_t			 t;

	json_array_foreach(json_object_get(page, "items"), i, op) {
		type = json_string_value(json_object_get(op,
		    "operationType"));
		if (type == NULL || !gce_stop_operation(type))
			continue;
		t = prov_json_time(op, "insertTime");
		if (gf->op_type == NULL || t >= gf->op_time) {
			free(gf->op_type);
			gf->op_type = xstrdup(type);
			gf->op_time = t;
		}
	}
}

static void
gce_follow_on_ops_done(const struct gcp_error *err, void *arg)
{
	struct gce_follow	*gf = arg;

	if (err != NULL)
		gce_follow_fail(gf, gcp_error_kind_name(err->kind));
	else
		gce_follow_end(gf);
}

/*
 * Find the operation that stopped the VM. One
 * zoneOperations.list filtered on the VM's targetLink (the fake, like
 * AIP-160 filters in general, has no OR over operation types, so the
 * type is picked here: the newest stop-type operation).
 */
static void
gce_follow_ops(struct gce_follow *gf)
{
	struct gce_poll	*gp = gf->gp;
	char		*filter, *url;
	int		 rc;

	filter = xprintf("targetLink=\"" GCE_LINK
	    "projects/%s/zones/%s/instances/%s\"", gp->project, gf->zone,
	    gf->name);
	url = gcp_url(gcp_conf(gp->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/operations?filter=%s&maxResults=%d"
	    "&fields=%s", gp->project, gf->zone, filter, GCE_PAGE_MAX,
	    GCE_OPS_FIELDS);
	free(filter);
	rc = prov_list(gp->g, GCP_API_COMPUTE, url, gce_follow_on_ops_page,
	    gce_follow_on_ops_done, gf);
	if (rc != 0)
		gce_follow_fail(gf, strerror(-rc));
}

/* Does the guest's answer say how the job ended? */
static int
gce_guest_says(json_t *guest)
{
	return gce_guest_value(guest, "exit-code") != NULL ||
	    gce_guest_value(guest, "error") != NULL;
}

/*
 * The exit object's content ({"exit-code": "3", "limit": ...}) as a
 * getGuestAttributes answer, so one mapping reads both. New reference,
 * or NULL if it says nothing.
 */
static json_t *
gce_exit_as_guest(json_t *obj)
{
	static const char *const keys[] = { "exit-code", "limit", "error" };
	json_t		*items, *v;
	size_t		 i;

	if (!json_is_object(obj))
		return NULL;
	items = prov_checked(json_array());
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		v = json_object_get(obj, keys[i]);
		if (json_is_integer(v))
			v = json_sprintf("%" JSON_INTEGER_FORMAT,
			    json_integer_value(v));
		else if (json_is_string(v))
			v = json_incref(v);
		else
			continue;
		json_array_append_new(items, prov_checked(json_pack(
		    "{s:s, s:s, s:o}", "namespace", "gpuq", "key", keys[i],
		    "value", v)));
	}
	return prov_checked(json_pack("{s:{s:o}}", "queryValue", "items",
	    items));
}

static void
gce_follow_on_exit_object(const struct http_resp *resp, void *arg)
{
	struct gce_follow	*gf = arg;
	json_t			*g;

	/* Missing or unreadable: the operations alone will say. */
	if (resp->err.kind == GCP_ERR_NONE &&
	    (g = gce_exit_as_guest(resp->json)) != NULL) {
		if (gce_guest_says(g)) {
			json_decref(gf->guest);
			gf->guest = g;
		} else
			json_decref(g);
	}
	gce_follow_ops(gf);
}

/* The exit object named by the instance's gpuq-job metadata. */
static void
gce_follow_on_metadata(const struct http_resp *resp, void *arg)
{
	struct gce_follow	*gf = arg;
	json_t			*job = NULL, *it;
	const char		*k, *uri;
	char			*bucket = NULL, *name = NULL, *url;
	size_t			 i;
	int			 rc;

	json_array_foreach(json_object_get(json_object_get(resp->json,
	    "metadata"), "items"), i, it) {
		k = json_string_value(json_object_get(it, "key"));
		if (k != NULL && strcmp(k, "gpuq-job") == 0)
			job = json_loads(json_string_value(json_object_get(it,
			    "value")) != NULL ? json_string_value(
			    json_object_get(it, "value")) : "", 0, NULL);
	}
	uri = json_string_value(json_object_get(job, "exit_object"));
	if (resp->err.kind != GCP_ERR_NONE || uri == NULL ||
	    storage_parse_uri(uri, &bucket, &name) != 0 || *name == '\0') {
		json_decref(job);
		free(bucket);
		free(name);
		gce_follow_ops(gf);
		return;
	}
	json_decref(job);
	name[strlen(name) - 1] = '\0';	/* storage_parse_uri() adds a '/' */
	/* One path segment: the name's '/' are encoded, as GCS wants. */
	url = gcp_url(gcp_conf(gf->gp->g), GCP_API_STORAGE, NULL,
	    "b/%s/o/%s?alt=media", bucket, name);
	free(bucket);
	free(name);
	rc = prov_call(gf->gp->g, GCP_API_STORAGE, "GET", url, NULL, 0,
	    gce_follow_on_exit_object, gf);
	free(url);
	if (rc != 0)
		gce_follow_ops(gf);
}

/*
 * The guest did not say how the job ended -- its attributes may be gone
 * once the VM has stopped (DESIGN GC.6) -- so read what the startup
 * script wrote to the job's output place: the instance's gpuq-job names
 * the object. Then the zone operations, whatever came of it.
 */
static void
gce_follow_exit_object(struct gce_follow *gf)
{
	struct gce_poll	*gp = gf->gp;
	char		*url;
	int		 rc;

	url = gcp_url(gcp_conf(gp->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances/%s?fields=metadata(items)",
	    gp->project, gf->zone, gf->name);
	rc = prov_call(gp->g, GCP_API_COMPUTE, "GET", url, NULL, 0,
	    gce_follow_on_metadata, gf);
	free(url);
	if (rc != 0)
		gce_follow_ops(gf);
}

static void
gce_follow_on_guest(const struct http_resp *resp, void *arg)
{
	struct gce_follow	*gf = arg;

	if (resp->err.kind == GCP_ERR_NONE && json_is_object(resp->json))
		gf->guest = json_incref(resp->json);
	else if (resp->err.kind != GCP_ERR_NOT_FOUND) {
		gce_follow_fail(gf, gcp_error_kind_name(resp->err.kind));
		return;
	}
	if (!gce_guest_says(gf->guest)) {
		gce_follow_exit_object(gf);
		return;
	}
	/* The zone operations are read even when the guest reported: a
	 * preemption wins over its exit code (gce_system_stop()). */
	gce_follow_ops(gf);
}

/* A stopped VM: report it from the cache, or look into it. */
static void
gce_poll_stopped(struct gce_poll *gp, json_t *inst, const char *zone,
    const char *name)
{
	struct gce_ended	*ge;
	struct gce_follow	*gf;
	const char		*stop;
	char			*key, *url;
	int			 rc;

	stop = json_string_value(json_object_get(inst, "lastStopTimestamp"));
	key = xprintf("%s/%s@%s", zone, name, stop != NULL ? stop : "");
	if ((ge = gce_ended_find(key)) != NULL) {
		free(key);
		ge->seen = gp->gen;
		gce_poll_report(gp, inst, zone, ge->guest, ge->op_type);
		return;
	}
	gf = xcalloc(1, sizeof *gf);
	gf->gp = gp;
	gf->inst = json_incref(inst);
	gf->key = key;
	gf->zone = xstrdup(zone);
	gf->name = xstrdup(name);
	gp->pending++;
	url = gcp_url(gcp_conf(gp->g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances/%s/getGuestAttributes"
	    "?queryPath=%s", gp->project, zone, name, "gpuq/");
	rc = prov_call(gp->g, GCP_API_COMPUTE, "GET", url, NULL, 0,
	    gce_follow_on_guest, gf);
	free(url);
	if (rc != 0)
		gce_follow_fail(gf, strerror(-rc));
}

/*
 * A STOPPING VM: is the system taking it (DESIGN GC.4)? Its zone
 * operations are read once per stop -- one zoneOperations.list, cached
 * like a stopped VM's under zone/name@STOPPING -- and a preemption ends
 * the attempt now rather than when the VM reaches TERMINATED, up to
 * ~30 s later. No guest attributes: a system stop wins over any exit
 * code (gce_system_stop()). A VM stopping for another reason (the job
 * is done, gpuq's own delete) stays RUNNING until it has stopped.
 */
static void
gce_poll_stopping(struct gce_poll *gp, json_t *inst, const char *zone,
    const char *name)
{
	struct gce_ended	*ge;
	struct gce_follow	*gf;
	char			*key;

	key = xprintf("%s/%s@STOPPING", zone, name);
	if ((ge = gce_ended_find(key)) != NULL) {
		free(key);
		ge->seen = gp->gen;
		gce_poll_report(gp, inst, zone, NULL, ge->op_type);
		return;
	}
	gf = xcalloc(1, sizeof *gf);
	gf->gp = gp;
	gf->inst = json_incref(inst);
	gf->key = key;
	gf->zone = xstrdup(zone);
	gf->name = xstrdup(name);
	gp->pending++;
	gce_follow_ops(gf);
}

/*
 * One page of instances.aggregatedList: a map from scope ("zones/Z") to
 * {instances[]} or {warning}. Running VMs are mapped and reported at
 * once; stopped ones need the follow-ups. Scopes Compute could not reach
 * (`unreachables`) make the poll partial.
 */
static void
gce_poll_on_page(json_t *page, void *arg)
{
	struct gce_poll	*gp = arg;
	const char	*scope, *zone, *name;
	json_t		*scoped, *inst, *u;
	size_t		 i;

	json_object_foreach(json_object_get(page, "items"), scope, scoped) {
		if (strncmp(scope, "zones/", 6) != 0)
			continue;
		zone = scope + 6;
		json_array_foreach(json_object_get(scoped, "instances"), i,
		    inst) {
			/*
			 * The filter chose them: all carry our install
			 * label. One named otherwise is no attempt of ours
			 * (the daemon deletes it as an orphan), so it gets
			 * no follow-up calls for its exit code.
			 */
			name = json_string_value(json_object_get(inst,
			    "name"));
			if (name == NULL)
				continue;
			if (strncmp(name, gp->prefix, gp->prefix_len) != 0)
				gce_poll_report(gp, inst, zone, NULL, NULL);
			else if (gce_instance_stopped(inst))
				gce_poll_stopped(gp, inst, zone, name);
			else if (gce_instance_stopping(inst))
				gce_poll_stopping(gp, inst, zone, name);
			else
				gce_poll_report(gp, inst, zone, NULL, NULL);
		}
	}
	json_array_foreach(json_object_get(page, "unreachables"), i, u) {
		if (json_is_string(u))
			gce_poll_partial(gp, "Compute Engine could not reach "
			    "%s; the listing is partial", json_string_value(u));
	}
}

static void
gce_poll_on_done(const struct gcp_error *err, void *arg)
{
	struct gce_poll	*gp = arg;

	if (err != NULL)
		gcp_error_copy(&gp->err, err);
	gp->listing = 0;
	gce_poll_maybe_end(gp);
}

/*
 * One aggregatedList for every zone at once (provider.h poll_global),
 * filtered on our install label, 500 a page, with `fields` so the answer
 * holds only what is read.
 */
static int
gce_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	struct gce_poll	*gp;
	const char	*project;
	char		*filter, *url;
	int		 rc;

	if ((project = prov_project(g)) == NULL || install == NULL)
		return -EINVAL;
	gp = xcalloc(1, sizeof *gp);
	gp->g = g;
	gp->project = xstrdup(project);
	gp->prefix = xprintf("gpuq-%s-", install);
	gp->prefix_len = strlen(gp->prefix);
	gp->gen = ++gce_generation;
	gp->listing = 1;
	gcp_error_init(&gp->err);
	gp->cb = cb;
	gp->done = done;
	gp->arg = arg;
	filter = prov_filter_install(install);
	url = gcp_url(gcp_conf(g), GCP_API_COMPUTE, NULL,
	    "projects/%s/aggregated/instances?filter=%s&maxResults=%d"
	    "&returnPartialSuccess=true&fields=%s", project, filter,
	    http_page_size(gcp_http(g), GCE_PAGE_MAX), GCE_LIST_FIELDS);
	free(filter);
	if ((rc = prov_list(g, GCP_API_COMPUTE, url, gce_poll_on_page,
	    gce_poll_on_done, gp)) != 0) {
		free(gp->project);
		free(gp->prefix);
		free(gp);
	}
	return rc;
}

/*
 * Cancel is instances.delete, for a running VM and for one that has
 * stopped (finished VMs are deleted the same way). Its requestId is
 * derived from the insert's, since Compute keeps one Operation per
 * requestId and a delete sent with the insert's id would be taken for a
 * repeat of the insert. Done once the delete is accepted or the VM gone.
 */
static int
gce_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	const char	*project;
	char		*url, rid[37];
	int		 rc;

	if ((project = prov_project(g)) == NULL || ref->zone == NULL ||
	    ref->resource == NULL)
		return -EINVAL;
	if (ref->nodes > 1)
		return gce_gang_cancel(g, project, ref, done, arg);
	prov_uuid_derive(ref->request_id != NULL ? ref->request_id :
	    ref->resource, "delete", rid);
	url = gcp_url(gcp_conf(g), GCP_API_COMPUTE, NULL,
	    "projects/%s/zones/%s/instances/%s?requestId=%s", project,
	    ref->zone, ref->resource, rid);
	rc = prov_delete(g, GCP_API_COMPUTE, url, done, arg);
	free(url);
	return rc;
}

const struct provider prov_gce = {
	.name = "gce",
	.quota_metric = gce_quota_metric,
	.picks_zone = 0,
	.reservations = 1,
	.poll_global = 1,
	.quota_service = GCP_SERVICE_GCE,
	.price_service = GCP_SERVICE_GCE,
	.quota_usage_ours = 0,
	.launch = gce_launch,
	.poll = gce_poll,
	.cancel = gce_cancel,
};
