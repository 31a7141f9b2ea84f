/*
 * gce.c: running a job on a Compute Engine VM of its own (API-NOTES C),
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
#include "providers/gcp/quota.h"

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
const char gce_boot_image[] = "projects/deeplearning-platform-release/"
    "global/images/family/common-cu128-ubuntu-2204-nvidia-570";

#define GCE_DISK_GB	"100"
#define GCE_SCOPE	"https://www.googleapis.com/auth/cloud-platform"
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
 * guestAccelerators (API-NOTES C.1; Compute Engine "GPU machine types").
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

/* The metadata item gpuq-job: what the startup script runs. New string. */
static char *
gce_job_text(const struct prov_launch *l)
{
	json_t	*job;
	char	*s;

	job = prov_checked(json_pack("{s:s}", "image", l->image));
	prov_set(job, "command", l->command != NULL ?
	    json_deep_copy(l->command) : json_array());
	prov_set(job, "args", l->args != NULL ? json_deep_copy(l->args) :
	    json_array());
	prov_set(job, "env", l->env != NULL ? json_deep_copy(l->env) :
	    json_object());
	prov_set(job, "max_runtime", json_integer(l->max_runtime > 0 ?
	    l->max_runtime : 0));
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
 * The body of instances.insert; requestId goes in the URL, so a retried
 * insert is the same insert (API-NOTES 0.4).
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
	prov_set(body, "scheduling", sched);

	prov_set(body, "disks", json_pack("[{s:b, s:b, s:{s:s, s:s}}]",
	    "boot", 1, "autoDelete", 1, "initializeParams",
	    "sourceImage", gce_boot_image, "diskSizeGb", GCE_DISK_GB));
	prov_set(body, "networkInterfaces", json_pack(
	    "[{s:s, s:[{s:s, s:s}]}]", "network", "global/networks/default",
	    "accessConfigs", "type", "ONE_TO_ONE_NAT", "name",
	    "External NAT"));
	prov_set(body, "serviceAccounts", json_pack("[{s:s, s:[s]}]",
	    "email", "default", "scopes", GCE_SCOPE));
	prov_set(body, "labels", prov_labels_new(l, 0));

	items = prov_checked(json_array());
	gce_item(items, "startup-script", gce_startup_script);
	s = gce_job_text(l);
	gce_item(items, "gpuq-job", s);
	free(s);
	gce_item(items, "enable-guest-attributes", "TRUE");
	gce_item(items, "install-nvidia-driver", "True");
	prov_set(body, "metadata", json_pack("{s:o}", "items", items));
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
 * Why a stopped VM stopped. What the guest reported wins, since it knows
 * best; otherwise the system operation that stopped it (C.4):
 *
 *   guest gpuq/exit-code 0                    SUCCEEDED
 *   guest gpuq/exit-code N, gpuq/limit set    ERROR: max_runtime was hit
 *   guest gpuq/exit-code N                    FAILED, exit N
 *   guest gpuq/error (script could not run)   LOST: no driver, no docker,
 *                                             no metadata; a new VM may do
 *   compute.instances.preempted               PREEMPTED
 *   ...terminateOnHostMaintenance, hostError  MAINTENANCE
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

/*
 * Instance.status (C.2) onto prov_state:
 *
 *   PROVISIONING, STAGING                    PENDING
 *   RUNNING, REPAIRING                       RUNNING
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
	o->created = prov_json_time(inst, "creationTimestamp");
	o->started = prov_json_time(inst, "lastStartTimestamp");

	if (strcmp(status, "PROVISIONING") == 0 ||
	    strcmp(status, "STAGING") == 0)
		o->state = PROV_PENDING;
	else if (gce_instance_stopped(inst)) {
		o->ended = prov_json_time(inst, "lastStopTimestamp");
		gce_stopped_map(guest, op_type, o, t);
	} else {
		o->state = PROV_RUNNING;
		if (strcmp(status, "RUNNING") != 0)
			o->message = json_string_value(json_object_get(inst,
			    "status"));
	}
	return 0;
}

/*
 * The quota a launch draws on (providers/gcp/quota.h decides the name:
 * Spot uses the preemptible metric only where it is granted).
 */
static char *
gce_quota_metric(struct gcp *g, const char *region,
    const struct gpu_type *gpu, int spot, const char **ret_service)
{
	char		 buf[QUOTA_METRIC_MAX];
	const char	*m;

	*ret_service = "compute";
	if (gpu == NULL)
		return NULL;
	m = quota_gpu_metric(gcp_quota(g), GCP_SERVICE_GCE, region, gpu->name, spot,
	    buf);
	return m != NULL ? xstrdup(m) : NULL;
}

/* Launch, poll and cancel come with providers/gcp's HTTP client. */
static int
gce_launch(struct gcp *g, const struct prov_launch *l, prov_launch_cb cb,
    void *arg)
{
	return -ENOSYS;
}

static int
gce_poll(struct gcp *g, const char *install, const char *region,
    prov_poll_cb cb, prov_done_cb done, void *arg)
{
	return -ENOSYS;
}

static int
gce_cancel(struct gcp *g, const struct prov_ref *ref, prov_done_cb done,
    void *arg)
{
	return -ENOSYS;
}

const struct provider prov_gce = {
	.name = "gce",
	.quota_metric = gce_quota_metric,
	.picks_zone = 0,
	.poll_global = 1,
	.launch = gce_launch,
	.poll = gce_poll,
	.cancel = gce_cancel,
};
