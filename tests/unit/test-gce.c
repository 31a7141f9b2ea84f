/*
 * test-gce.c: the Compute Engine instances.insert body, the embedded
 * startup script, and the mapping of an Instance (plus its guest
 * attributes and the operation that stopped it) onto prov_state
 * (providers/gce.c), field by field.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/gpu.h"
#include "providers/gcp/gcp.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "tests/unit/provtest.h"

static int
setup(void **state)
{
	struct provtest	*f;

	f = provtest_new(json_pack("[s]", "python"),
	    json_pack("[s, s]", "train.py", "--name=it's \"$(rm -rf)\""),
	    json_pack("{s:s, s:s}", "LR", "0.1", "NOTE",
	    "line one\nline 'two' $HOME"));
	f->l.zone = "us-central1-a";
	f->l.machine_type = "n1-standard-8";
	f->l.gpu_count = 1;
	f->l.max_runtime = 600;
	*state = f;
	return 0;
}

/* Value of metadata item KEY in an Instance body, or NULL. */
static const char *
metadata(json_t *b, const char *key)
{
	json_t	*it;
	size_t	 i;

	json_array_foreach(provtest_at(b, "metadata.items"), i, it) {
		if (strcmp(provtest_str(it, "key"), key) == 0)
			return provtest_str(it, "value");
	}
	return NULL;
}

static void
test_gce_body_fields(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *job, *want;
	json_error_t	 err;
	char		*cause = NULL;

	assert_int_equal(gce_instance_body(&f->l, &b, &cause), 0);
	assert_null(cause);
	assert_string_equal(provtest_str(b, "name"), "gpuq-i1-42-2");
	assert_string_equal(provtest_str(b, "machineType"),
	    "zones/us-central1-a/machineTypes/n1-standard-8");
	assert_int_equal(json_array_size(provtest_at(b,
	    "guestAccelerators")), 1);
	assert_string_equal(provtest_str(b,
	    "guestAccelerators.0.acceleratorType"),
	    "zones/us-central1-a/acceleratorTypes/nvidia-tesla-t4");
	assert_int_equal(json_integer_value(provtest_at(b,
	    "guestAccelerators.0.acceleratorCount")), 1);

	assert_string_equal(provtest_str(b, "scheduling.provisioningModel"),
	    "SPOT");
	assert_string_equal(provtest_str(b, "scheduling.onHostMaintenance"),
	    "TERMINATE");
	assert_true(json_is_false(provtest_at(b,
	    "scheduling.automaticRestart")));
	assert_string_equal(provtest_str(b,
	    "scheduling.instanceTerminationAction"), "STOP");
	assert_string_equal(provtest_str(b,
	    "scheduling.maxRunDuration.seconds"), "4200");
	assert_null(provtest_at(b, "scheduling.preemptible"));

	assert_int_equal(json_array_size(provtest_at(b, "disks")), 1);
	assert_true(json_is_true(provtest_at(b, "disks.0.boot")));
	assert_true(json_is_true(provtest_at(b, "disks.0.autoDelete")));
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.sourceImage"),
	    "projects/deeplearning-platform-release/global/images/family/"
	    "common-cu128-ubuntu-2204-nvidia-570");
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskSizeGb"), "100");
	assert_string_equal(provtest_str(b, "networkInterfaces.0.network"),
	    "global/networks/default");
	assert_string_equal(provtest_str(b,
	    "networkInterfaces.0.accessConfigs.0.type"), "ONE_TO_ONE_NAT");
	assert_string_equal(provtest_str(b,
	    "serviceAccounts.0.email"), "default");
	assert_string_equal(provtest_str(b, "serviceAccounts.0.scopes.0"),
	    "https://www.googleapis.com/auth/cloud-platform");

	assert_int_equal(json_object_size(provtest_at(b, "labels")), 4);
	assert_string_equal(provtest_str(b, "labels.gpuq-install"), "i1");
	assert_string_equal(provtest_str(b, "labels.gpuq-job"), "42");
	assert_string_equal(provtest_str(b, "labels.gpuq-attempt"), "2");
	assert_string_equal(provtest_str(b, "labels.team"), "vision");

	assert_int_equal(json_array_size(provtest_at(b, "metadata.items")), 4);
	assert_string_equal(metadata(b, "startup-script"),
	    gce_startup_script);
	assert_string_equal(metadata(b, "enable-guest-attributes"), "TRUE");
	assert_string_equal(metadata(b, "install-nvidia-driver"), "True");
	/* The job travels as JSON, user strings untouched. */
	job = json_loads(metadata(b, "gpuq-job"), 0, &err);
	assert_non_null(job);
	want = json_pack("{s:s, s:O, s:O, s:O, s:i}",
	    "image", "us-docker.pkg.dev/p/r/train:1", "command", f->command,
	    "args", f->args, "env", f->env, "max_runtime", 600);
	/* Where the script also writes the exit code (DESIGN GC.6). */
	if (f->l.output_dir != NULL)
		json_object_set_new(want, "exit_object", json_sprintf(
		    "%s%sgpuq/attempt-2.exit.json", f->l.output_dir,
		    f->l.output_dir[strlen(f->l.output_dir) - 1] == '/' ?
		    "" : "/"));
	assert_non_null(json_object_get(want, "exit_object"));
	assert_true(json_equal(job, want));
	json_decref(want);
	json_decref(job);
	json_decref(b);
}

static void
test_gce_body_standard_a2(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *job;

	f->l.spot = 0;
	f->l.machine_type = "a2-highgpu-2g";
	f->l.gpu = gpu_lookup("nvidia-tesla-a100");
	f->l.gpu_count = 2;
	f->l.max_runtime = 0;
	f->l.command = NULL;
	f->l.args = NULL;
	f->l.env = NULL;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b, "guestAccelerators"));
	assert_string_equal(provtest_str(b, "scheduling.provisioningModel"),
	    "STANDARD");
	job = json_loads(metadata(b, "gpuq-job"), 0, NULL);
	assert_int_equal(json_array_size(json_object_get(job, "command")), 0);
	assert_int_equal(json_object_size(json_object_get(job, "env")), 0);
	assert_int_equal(json_integer_value(json_object_get(job,
	    "max_runtime")), 0);
	json_decref(job);
	json_decref(b);
}

/* Flex-start (API-NOTES K.2): FLEX_START with a maxRunDuration object of
 * at most 7 days, no reservation, and params.requestValidForDuration a
 * little over flex_wait, at most 2 h. */
static void
test_gce_body_flex(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;

	f->l.spot = 0;
	f->l.capacity = CAPACITY_FLEX;
	f->l.flex_wait = 1800;
	f->l.machine_type = "a2-highgpu-2g";
	f->l.gpu = gpu_lookup("nvidia-tesla-a100");
	f->l.gpu_count = 2;
	f->l.max_runtime = 0;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "scheduling.provisioningModel"),
	    "FLEX_START");
	assert_string_equal(provtest_str(b,
	    "scheduling.maxRunDuration.seconds"), "604800");
	assert_string_equal(provtest_str(b,
	    "scheduling.instanceTerminationAction"), "STOP");
	assert_string_equal(provtest_str(b,
	    "scheduling.onHostMaintenance"), "TERMINATE");
	assert_true(json_is_false(provtest_at(b,
	    "scheduling.automaticRestart")));
	assert_string_equal(provtest_str(b,
	    "reservationAffinity.consumeReservationType"), "NO_RESERVATION");
	assert_string_equal(provtest_str(b,
	    "params.requestValidForDuration.seconds"), "2400");
	json_decref(b);

	/* A short job asks for its own run time; a long wait is capped. */
	f->l.max_runtime = 3600;
	f->l.flex_wait = 7200;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "params.requestValidForDuration.seconds"), "7200");
	assert_int_equal(atoll(provtest_str(b,
	    "scheduling.maxRunDuration.seconds")), 3600 + 3600);
	json_decref(b);

	/* Standard and Spot bodies carry none of it (and, like every
	 * launch outside a reservation, NO_RESERVATION). */
	f->l.capacity = CAPACITY_STANDARD;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b, "params"));
	assert_string_equal(provtest_str(b,
	    "reservationAffinity.consumeReservationType"), "NO_RESERVATION");
	json_decref(b);
}

/*
 * A launch into a reservation names it with SPECIFIC_RESERVATION and
 * Google's by-name key (DESIGN L.2), standard; any other launch says
 * NO_RESERVATION, so it never eats a reservation unpriced.
 */
static void
test_gce_body_reservation(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;

	f->l.spot = 0;
	f->l.reservation = "team-t4";
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "reservationAffinity.consumeReservationType"),
	    "SPECIFIC_RESERVATION");
	assert_string_equal(provtest_str(b, "reservationAffinity.key"),
	    "compute.googleapis.com/reservation-name");
	assert_int_equal(json_array_size(provtest_at(b,
	    "reservationAffinity.values")), 1);
	assert_string_equal(json_string_value(json_array_get(provtest_at(b,
	    "reservationAffinity.values"), 0)), "team-t4");
	assert_string_equal(provtest_str(b, "scheduling.provisioningModel"),
	    "STANDARD");
	json_decref(b);
	b = NULL;
	f->l.reservation = NULL;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "reservationAffinity.consumeReservationType"), "NO_RESERVATION");
	assert_null(provtest_at(b, "reservationAffinity.values"));
	json_decref(b);
}

static void
test_gce_body_needs_zone(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;
	char		*cause = NULL;

	f->l.zone = NULL;
	assert_int_equal(gce_instance_body(&f->l, &b, &cause), -EINVAL);
	assert_null(b);
	assert_string_equal(cause, "launch of gpuq-i1-42-2: Compute Engine "
	    "needs a zone");
	free(cause);
}

static void
test_gce_machine_series(void **state)
{
	(void)state;
	assert_true(gce_machine_has_gpus("a2-highgpu-1g"));
	assert_true(gce_machine_has_gpus("a3-megagpu-8g"));
	assert_true(gce_machine_has_gpus("a4-highgpu-8g"));
	assert_true(gce_machine_has_gpus("g2-standard-8"));
	assert_false(gce_machine_has_gpus("n1-standard-8"));
	assert_false(gce_machine_has_gpus("n2-standard-8"));
	assert_false(gce_machine_has_gpus(NULL));
}

/* The embedded script is providers/gce-startup.sh, byte for byte. */
static void
test_gce_startup_script_embedded(void **state)
{
	const char	*top = getenv("top_srcdir");
	char		*path, buf[65536];
	FILE		*fp;
	size_t		 n;

	(void)state;
	assert_int_equal(strncmp(gce_startup_script, "#!/bin/bash\n", 12),
	    0);
	assert_non_null(strstr(gce_startup_script, "gpuq/exit-code"));
	if (top == NULL)
		fail_msg("top_srcdir is not set: run it with make check");
	assert_true(asprintf(&path, "%s/providers/gce-startup.sh", top) > 0);
	fp = fopen(path, "r");
	free(path);
	assert_non_null(fp);
	n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	assert_string_equal(gce_startup_script, buf);
}

/* Parse INST (and GUEST), map them, keep the JSON in *RET_I, *RET_G. */
static int
map(const char *inst, const char *guest, const char *op, json_t **ret_i,
    json_t **ret_g, struct prov_observed *o, struct prov_text *t)
{
	*ret_i = provtest_json(inst);
	*ret_g = guest != NULL ? provtest_json(guest) : NULL;
	return gce_instance_map(*ret_i, *ret_g, op, o, t);
}

#define ZL "https://www.googleapis.com/compute/v1/projects/p/zones/"
#define INST(status, extra) \
	"{\"name\":\"gpuq-i1-42-2\",\"id\":\"4000000000000000001\"," \
	"\"zone\":\"" ZL "us-central1-a\",\"status\":\"" status "\"," \
	"\"labels\":{\"gpuq-install\":\"i1\",\"gpuq-job\":\"42\"," \
	"\"gpuq-attempt\":\"2\"}," \
	"\"creationTimestamp\":\"2024-06-26T11:42:22.006-07:00\"" extra "}"
#define STARTED ",\"lastStartTimestamp\":\"2024-06-26T11:43:22.000-07:00\""
#define STOPPED STARTED \
	",\"lastStopTimestamp\":\"2024-06-26T12:43:22.000-07:00\""
#define GUEST(items) "{\"kind\":\"compute#guestAttributes\"," \
	"\"queryPath\":\"gpuq/\",\"queryValue\":{\"items\":[" items "]}}"
#define ITEM(k, v) "{\"namespace\":\"gpuq\",\"key\":\"" k "\"," \
	"\"value\":\"" v "\"}"

static void
test_gce_map_live(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;

	(void)state;
	assert_int_equal(map(INST("PROVISIONING", ""), NULL, NULL, &i, &g,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_string_equal(o.resource, "gpuq-i1-42-2");
	assert_string_equal(o.cloud_id, "4000000000000000001");
	assert_string_equal(o.zone, "us-central1-a");
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	assert_int_equal(o.created, 1719427342);
	assert_int_equal(o.exit_code, -1);
	assert_false(gce_instance_stopped(i));
	json_decref(i);
	assert_int_equal(map(INST("STAGING", ""), NULL, NULL, &i, &g, &o,
	    &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	json_decref(i);
	assert_int_equal(map(INST("RUNNING", STARTED), NULL, NULL, &i, &g,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_int_equal(o.started, 1719427402);
	assert_null(o.message);
	json_decref(i);
	/* A poll asks for four fields only: job and attempt come from the
	 * name. */
	assert_int_equal(map("{\"name\":\"gpuq-i1-42-2\",\"status\":"
	    "\"RUNNING\"}", NULL, NULL, &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	assert_null(o.zone);
	assert_null(o.cloud_id);
	json_decref(i);
	/* Still stopping: running until it has stopped. */
	assert_int_equal(map(INST("STOPPING", STARTED), NULL, NULL, &i, &g,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_string_equal(o.message, "STOPPING");
	assert_false(gce_instance_stopped(i));
	assert_true(gce_instance_stopping(i));
	json_decref(i);
}

/*
 * A STOPPING VM with a preemption operation is preempted at once, not
 * when it reaches TERMINATED (DESIGN GC.4): whatever the guest says, and
 * so for host events; stopping for any other reason is still running.
 */
static void
test_gce_map_stopping_preempted(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;

	(void)state;
	assert_int_equal(map(INST("STOPPING", STARTED), NULL,
	    "compute.instances.preempted", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	assert_string_equal(o.message, "the Spot VM was preempted");
	assert_int_equal(o.exit_code, -1);
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	json_decref(i);

	assert_int_equal(map(INST("STOPPING", STARTED),
	    GUEST(ITEM("exit-code", "0")), "compute.instances.preempted", &i,
	    &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	json_decref(i);
	json_decref(g);

	assert_int_equal(map(INST("STOPPING", STARTED), NULL,
	    "compute.instances.hostError", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	json_decref(i);

	assert_int_equal(map(INST("STOPPING", STARTED), NULL,
	    "compute.instances.guestTerminate", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_string_equal(o.message, "STOPPING");
	json_decref(i);

	assert_int_equal(map(INST("STOPPING", STARTED), NULL, "delete", &i,
	    &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	json_decref(i);

	/* A running VM with an old preemption on record is running. */
	assert_int_equal(map(INST("RUNNING", STARTED), NULL,
	    "compute.instances.preempted", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_false(gce_instance_stopping(i));
	json_decref(i);
}

static void
test_gce_map_exit_codes(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;

	(void)state;
	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("exit-code", "0")), "compute.instances.guestTerminate",
	    &i, &g, &o, &t), 0);
	assert_true(gce_instance_stopped(i));
	assert_int_equal(o.state, PROV_SUCCEEDED);
	assert_int_equal(o.exit_code, 0);
	assert_int_equal(o.ended, 1719431002);
	json_decref(i);
	json_decref(g);

	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("exit-code", "3")), NULL, &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_FAILED);
	assert_int_equal(o.exit_code, 3);
	json_decref(i);
	json_decref(g);

	/* getGuestAttributes with variableKey answers one value. */
	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    "{\"variableKey\":\"gpuq/exit-code\",\"variableValue\":\"7\"}",
	    NULL, &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_FAILED);
	assert_int_equal(o.exit_code, 7);
	json_decref(i);
	json_decref(g);

	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("exit-code", "143") "," ITEM("limit", "max_runtime")),
	    NULL, &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_int_equal(o.exit_code, 143);
	assert_string_equal(o.message, "the job ran past its max_runtime "
	    "and was stopped (exit code 143)");
	json_decref(i);
	json_decref(g);

	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("error", "no working NVIDIA driver after 1200 "
	    "seconds")), "compute.instances.guestTerminate", &i, &g, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_LOST);
	assert_string_equal(o.message, "the VM could not run the job: no "
	    "working NVIDIA driver after 1200 seconds");
	json_decref(i);
	json_decref(g);

	/* An exit code that is not a number counts as none. */
	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("exit-code", "x")), NULL, &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	assert_int_equal(o.exit_code, -1);
	json_decref(i);
	json_decref(g);
}

static void
test_gce_map_system_events(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;

	(void)state;
	assert_int_equal(map(INST("TERMINATED", STOPPED), GUEST(""),
	    "compute.instances.preempted", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	assert_int_equal(o.exit_code, -1);
	json_decref(i);
	json_decref(g);
	assert_int_equal(map(INST("TERMINATED", STOPPED), NULL,
	    "compute.instances.terminateOnHostMaintenance", &i, &g, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	json_decref(i);
	assert_int_equal(map(INST("TERMINATED", STOPPED), NULL,
	    "compute.instances.hostError", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	assert_string_equal(o.message, "the VM's host failed");
	json_decref(i);
	assert_int_equal(map(INST("TERMINATED", STOPPED), NULL,
	    "compute.instances.guestTerminate", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	json_decref(i);
	assert_int_equal(map(INST("TERMINATED", STOPPED), NULL, "delete",
	    &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_CANCELLED);
	json_decref(i);
	assert_int_equal(map(INST("STOPPED", STOPPED), NULL, NULL, &i, &g,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	json_decref(i);
	assert_int_equal(map("{\"name\":\"x\"}", NULL, NULL, &i, &g, &o, &t),
	    -EINVAL);
	json_decref(i);
}


/* A python_package job, as cloud.c hands it over (image = executor). */
static json_t *
pp_launch(struct prov_launch *l)
{
	json_t	*pp;

	pp = provtest_json("{\"executor_image\": \"us-docker.pkg.dev/v/t/"
	    "py:1\", \"package_uris\": [\"gs://bkt/a-1.tar.gz\", "
	    "\"gs://bkt/b-2-py3-none-any.whl\"], \"module\": \"trainer.task\", "
	    "\"args\": [\"--x\", \"$(rm -rf /); `id` 'q' \\\"d\\\"\"]}");
	l->python_package = pp;
	l->image = "us-docker.pkg.dev/v/t/py:1";
	l->command = NULL;
	l->args = NULL;
	return pp;
}

/* The argv words after the script: module, count, URIs, args. */
static void
assert_pp_words(json_t *words)
{
	json_t	*want;

	want = provtest_json("[\"trainer.task\", \"2\", \"gs://bkt/a-1.tar.gz\", "
	    "\"gs://bkt/b-2-py3-none-any.whl\", \"--x\", "
	    "\"$(rm -rf /); `id` 'q' \\\"d\\\"\"]");
	if (!json_equal(words, want))
		fail_msg("argv words %s", json_dumps(words, 0));
	json_decref(want);
}

/* A python_package job on Compute Engine: the gpuq-job item. */
static void
test_gce_body_python_package(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *job, *pp, *words;

	pp = pp_launch(&f->l);
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	job = json_loads(metadata(b, "gpuq-job"), 0, NULL);
	assert_non_null(job);
	assert_string_equal(provtest_str(job, "image"),
	    "us-docker.pkg.dev/v/t/py:1");
	assert_string_equal(provtest_str(job, "command.0"), "/bin/sh");
	assert_string_equal(provtest_str(job, "command.1"), "-c");
	assert_string_equal(provtest_str(job, "command.2"), prov_pypkg_script);
	assert_string_equal(provtest_str(job, "command.3"),
	    "gpuq-python-package");
	assert_int_equal(json_array_size(provtest_at(job, "command")), 4);
	words = provtest_at(job, "args");
	assert_pp_words(words);
	json_decref(job);
	json_decref(b);
	json_decref(pp);
}

/*
 * A preemption or host event wins over any exit code the guest reported
 * during the ~30 s shutdown: 143 (SIGTERM), 137 (SIGKILL), even 0 from a
 * job that saved a checkpoint on SIGTERM. gpuq's own stop does not.
 */
static void
test_gce_map_preemption_wins(void **state)
{
	static const char *const codes[] = { "143", "137", "0", "1" };
	char			 guest[256];
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;
	size_t			 k;

	(void)state;
	for (k = 0; k < sizeof codes / sizeof codes[0]; k++) {
		(void)snprintf(guest, sizeof guest,
		    GUEST(ITEM("exit-code", "%s")), codes[k]);
		assert_int_equal(map(INST("TERMINATED", STOPPED), guest,
		    "compute.instances.preempted", &i, &g, &o, &t), 0);
		assert_int_equal(o.state, PROV_PREEMPTED);
		assert_int_equal(o.exit_code, -1);
		json_decref(i);
		json_decref(g);
		assert_int_equal(map(INST("TERMINATED", STOPPED), guest,
		    "compute.instances.hostError", &i, &g, &o, &t), 0);
		assert_int_equal(o.state, PROV_MAINTENANCE);
		json_decref(i);
		json_decref(g);
	}
	/* The guest's own power-off after the job: its exit code stands. */
	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("exit-code", "143")),
	    "compute.instances.guestTerminate", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_FAILED);
	assert_int_equal(o.exit_code, 143);
	json_decref(i);
	json_decref(g);
	/* An error report loses to a preemption too. */
	assert_int_equal(map(INST("TERMINATED", STOPPED),
	    GUEST(ITEM("error", "no working NVIDIA driver")),
	    "compute.instances.preempted", &i, &g, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	json_decref(i);
	json_decref(g);
}

/* A test of a body builder, on a fresh fixture. */
/*
 * Node 2 of a gang of 3 (doc/DESIGN.md "Gangs"): the VM gpuq-i1-42-2-2
 * in the attempt's zone, the attempt's labels, its rank in the job's
 * env under gpuq's and torch's names, the rest of the env the job's.
 */
static void
test_gce_body_gang_node(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *single = NULL, *job, *env;

	f->l.nodes = 3;
	assert_int_equal(gce_gang_body(&f->l, 2, &b), 0);
	assert_string_equal(provtest_str(b, "name"), "gpuq-i1-42-2-2");
	assert_string_equal(provtest_str(b, "machineType"),
	    "zones/us-central1-a/machineTypes/n1-standard-8");
	assert_string_equal(provtest_str(b, "labels.gpuq-attempt"), "2");
	assert_string_equal(provtest_str(b, "labels.gpuq-job"), "42");
	job = json_loads(metadata(b, "gpuq-job"), 0, NULL);
	assert_non_null(job);
	env = json_object_get(job, "env");
	assert_string_equal(provtest_str(env, "GPUQ_NODE_RANK"), "2");
	assert_string_equal(provtest_str(env, "NODE_RANK"), "2");
	assert_string_equal(provtest_str(env, "RANK"), "2");
	assert_string_equal(provtest_str(env, "LR"), "0.1");
	/* The main address comes once rank 0 exists, not in the body. */
	assert_null(metadata(b, "gpuq-main-addr"));
	/* The rest is the single-machine body. */
	assert_int_equal(gce_instance_body(&f->l, &single, NULL), 0);
	assert_true(json_equal(json_object_get(b, "scheduling"),
	    json_object_get(single, "scheduling")));
	assert_true(json_equal(json_object_get(b, "guestAccelerators"),
	    json_object_get(single, "guestAccelerators")));
	json_decref(job);
	json_decref(single);
	json_decref(b);
}

/*
 * The compact placement policy of a gang (API-NOTES N.3): only for the
 * series Compute Engine accepts, COLLOCATED for exactly the gang's VMs.
 */
static void
test_gce_gang_placement_policy(void **state)
{
	struct provtest	*f = *state;
	json_t		*b;
	char		*name;

	assert_true(gce_machine_compact("a2-highgpu-1g"));
	assert_true(gce_machine_compact("a3-megagpu-8g"));
	assert_true(gce_machine_compact("a4-highgpu-8g"));
	assert_true(gce_machine_compact("g2-standard-48"));
	assert_false(gce_machine_compact("n1-standard-8"));
	assert_false(gce_machine_compact(NULL));
	f->l.nodes = 4;
	b = gce_gang_policy_body(&f->l);
	assert_string_equal(provtest_str(b, "name"), "gpuq-i1-42-2-pack");
	assert_string_equal(provtest_str(b,
	    "groupPlacementPolicy.collocation"), "COLLOCATED");
	assert_int_equal(json_integer_value(provtest_at(b,
	    "groupPlacementPolicy.vmCount")), 4);
	json_decref(b);
	name = gce_gang_policy_name("gpuq-i1-42-2");
	assert_string_equal(name, "gpuq-i1-42-2-pack");
	free(name);
}

/* A node's VM is listed as node R of its attempt; a plain VM is not. */
static void
test_gce_map_gang_node(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*i, *g;
	char			 res[64];
	int			 rank = -1;

	(void)state;
	assert_int_equal(map("{\"name\":\"gpuq-i1-42-2-3\","
	    "\"status\":\"RUNNING\"}", NULL, NULL, &i, &g, &o, &t), 0);
	assert_string_equal(o.resource, "gpuq-i1-42-2-3");
	assert_string_equal(o.gang, "gpuq-i1-42-2");
	assert_int_equal(o.node, 3);
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	json_decref(i);
	assert_int_equal(map(INST("RUNNING", ""), NULL, NULL, &i, &g, &o, &t),
	    0);
	assert_null(o.gang);
	assert_int_equal(o.node, -1);
	json_decref(i);
	assert_int_equal(prov_gang_node_parse("gpuq-i1-42-2", res, sizeof res,
	    &rank), -EINVAL);
	assert_int_equal(prov_gang_node_parse("gpuq-i1-42-2-x", res,
	    sizeof res, &rank), -EINVAL);
	assert_int_equal(prov_gang_node_parse("gpuq-i1-42-2-10", res,
	    sizeof res, &rank), 0);
	assert_string_equal(res, "gpuq-i1-42-2");
	assert_int_equal(rank, 10);
}

/* gpuq doctor checks the image the VMs boot from: only Compute Engine
 * names one, and it is the one gce.c puts in every instance body. */
static void
test_gce_boot_image_for_doctor(void **state)
{
	(void)state;
	assert_string_equal(gcp_site_needs(GCP_SERVICE_GCE)->boot_image,
	    gce_boot_image);
	assert_string_equal(gce_boot_image, "projects/deeplearning-platform-"
	    "release/global/images/family/common-cu128-ubuntu-2204-"
	    "nvidia-570");
	assert_null(gcp_site_needs(GCP_SERVICE_BATCH)->boot_image);
	assert_null(gcp_site_needs(GCP_SERVICE_VERTEX)->boot_image);
	assert_null(gcp_site_needs(-1)->boot_image);
}

#define BODY(f)	cmocka_unit_test_setup_teardown(f, setup, provtest_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BODY(test_gce_body_fields),
		BODY(test_gce_body_python_package),
		BODY(test_gce_body_standard_a2),
		BODY(test_gce_body_reservation),
		BODY(test_gce_body_needs_zone),
		BODY(test_gce_body_gang_node),
		BODY(test_gce_gang_placement_policy),
		cmocka_unit_test(test_gce_map_gang_node),
		cmocka_unit_test(test_gce_machine_series),
		BODY(test_gce_body_flex),
		cmocka_unit_test(test_gce_startup_script_embedded),
		cmocka_unit_test(test_gce_map_live),
		cmocka_unit_test(test_gce_map_stopping_preempted),
		cmocka_unit_test(test_gce_map_exit_codes),
		cmocka_unit_test(test_gce_map_system_events),
		cmocka_unit_test(test_gce_map_preemption_wins),
		cmocka_unit_test(test_gce_boot_image_for_doctor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
