/*
 * test-batch.c: the Cloud Batch jobs.create body and the mapping of a Job
 * -- state, status events, reserved exit codes -- onto prov_state
 * (providers/batch.c), field by field.
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
#include <unistd.h>

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

	f = provtest_new(json_pack("[s, s, s]", "python", "-u", "train.py"),
	    json_pack("[s, s]", "--epochs", "10"),
	    json_pack("{s:s, s:s}", "LR", "0.1", "GPUQ_ATTEMPT", "2"));
	f->l.machine_type = "n1-highmem-8";
	f->l.gpu_count = 2;
	f->l.max_runtime = 7200;
	*state = f;
	return 0;
}

static void
test_batch_body_fields(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *ts, *c, *pol, *want;
	char		*cause = NULL;

	assert_int_equal(batch_job_body(&f->l, &b, &cause), 0);
	assert_null(cause);
	assert_int_equal(json_object_size(b), 4);
	assert_int_equal(json_array_size(provtest_at(b, "taskGroups")), 1);
	assert_string_equal(provtest_str(b, "taskGroups.0.taskCount"), "1");
	ts = provtest_at(b, "taskGroups.0.taskSpec");
	assert_int_equal(json_array_size(provtest_at(ts, "runnables")), 1);
	c = provtest_at(ts, "runnables.0.container");
	assert_string_equal(provtest_str(c, "imageUri"),
	    "us-docker.pkg.dev/p/r/train:1");
	assert_string_equal(provtest_str(c, "entrypoint"), "python");
	want = json_pack("[s, s, s, s]", "-u", "train.py", "--epochs", "10");
	assert_true(json_equal(provtest_at(c, "commands"), want));
	json_decref(want);
	assert_null(provtest_at(c, "options"));
	assert_true(json_equal(provtest_at(ts,
	    "runnables.0.environment.variables"),
	    f->env));
	assert_null(provtest_at(ts, "runnables.0.environment.secretVariables"));
	assert_string_equal(provtest_str(ts,
	    "computeResource.cpuMilli"), "8000");
	/* n1-highmem-8: 52 GB = 53248 MiB, asked for nine tenths. */
	assert_string_equal(provtest_str(ts, "computeResource.memoryMib"),
	    "47923");
	assert_int_equal(json_integer_value(provtest_at(ts,
	    "maxRetryCount")), 0);
	assert_null(provtest_at(ts, "lifecyclePolicies"));
	assert_string_equal(provtest_str(ts, "maxRunDuration"), "7200s");

	assert_int_equal(json_array_size(provtest_at(b,
	    "allocationPolicy.location.allowedLocations")), 1);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.location.allowedLocations.0"),
	    "regions/us-central1");
	assert_true(json_is_true(provtest_at(b,
	    "allocationPolicy.instances.0.installGpuDrivers")));
	pol = provtest_at(b, "allocationPolicy.instances.0.policy");
	assert_string_equal(provtest_str(pol, "machineType"), "n1-highmem-8");
	assert_string_equal(provtest_str(pol, "provisioningModel"), "SPOT");
	assert_string_equal(provtest_str(pol, "accelerators.0.type"),
	    "nvidia-tesla-t4");
	assert_string_equal(provtest_str(pol, "accelerators.0.count"), "2");
	assert_string_equal(provtest_str(pol, "bootDisk.sizeGb"), "100");
	assert_string_equal(provtest_str(b, "allocationPolicy.labels.gpuq-job"),
	    "42");

	assert_int_equal(json_object_size(provtest_at(b, "labels")), 4);
	assert_string_equal(provtest_str(b, "labels.gpuq-install"), "i1");
	assert_string_equal(provtest_str(b, "labels.gpuq-job"), "42");
	assert_string_equal(provtest_str(b, "labels.gpuq-attempt"), "2");
	assert_string_equal(provtest_str(b, "labels.team"), "vision");
	assert_null(provtest_at(b, "labels.gpuq-resource"));
	assert_string_equal(provtest_str(b, "logsPolicy.destination"),
	    "CLOUD_LOGGING");
	json_decref(b);
}

static void
test_batch_body_zone_standard_implicit_gpu(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *c;

	f->l.zone = "us-central1-b";
	f->l.spot = 0;
	f->l.machine_type = "a2-highgpu-1g";
	f->l.gpu = gpu_lookup("nvidia-tesla-a100");
	f->l.gpu_count = 1;
	f->l.command = NULL;
	f->l.max_runtime = 0;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.location.allowedLocations.0"),
	    "zones/us-central1-b");
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.provisioningModel"),
	    "STANDARD");
	/* a2 machines carry their A100s: no accelerators block. */
	assert_null(provtest_at(b, "allocationPolicy.instances.0.policy."
	    "accelerators"));
	c = provtest_at(b, "taskGroups.0.taskSpec.runnables.0.container");
	assert_null(json_object_get(c, "entrypoint"));
	assert_true(json_equal(json_object_get(c, "commands"), f->args));
	assert_null(provtest_at(b, "taskGroups.0.taskSpec.maxRunDuration"));
	assert_string_equal(provtest_str(b,
	    "taskGroups.0.taskSpec.computeResource.cpuMilli"), "12000");
	assert_string_equal(provtest_str(b,
	    "taskGroups.0.taskSpec.computeResource.memoryMib"), "78336");
	json_decref(b);

	f->l.args = NULL;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	c = provtest_at(b, "taskGroups.0.taskSpec.runnables.0.container");
	assert_null(json_object_get(c, "commands"));
	json_decref(b);
}

/* secret_env goes to secretVariables: Batch reads the values itself. */
static void
test_batch_body_secret_env(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *sec;
	char		*cause = NULL;

	sec = json_pack("{s:s}", "HF_TOKEN",
	    "projects/my-project/secrets/hf/versions/latest");
	f->l.secret_env = sec;
	assert_int_equal(batch_job_body(&f->l, &b, &cause), 0);
	assert_true(json_equal(provtest_at(b, "taskGroups.0.taskSpec."
	    "runnables.0.environment.secretVariables"), sec));
	assert_true(json_equal(provtest_at(b, "taskGroups.0.taskSpec."
	    "runnables.0.environment.variables"), f->env));
	f->l.secret_env = NULL;
	json_decref(sec);
	json_decref(b);
}

static void
test_batch_body_invalid(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;
	char		*cause = NULL;

	f->l.machine_type = NULL;
	assert_int_equal(batch_job_body(&f->l, &b, &cause), -EINVAL);
	assert_null(b);
	assert_string_equal(cause, "launch of gpuq-i1-42-2: machine type is "
	    "empty");
	free(cause);
}

static void
test_batch_machine_mib_table(void **state)
{
	(void)state;
	assert_int_equal(batch_machine_mib("n1-standard-8"), 30720);
	assert_int_equal(batch_machine_mib("n1-highmem-4"), 26624);
	assert_int_equal(batch_machine_mib("g2-standard-24"), 98304);
	assert_int_equal(batch_machine_mib("a3-highgpu-8g"), 1872 * 1024);
	assert_int_equal(batch_machine_mib("e2-standard-4"), -1);
	assert_int_equal(batch_machine_mib("n1-standard-x"), -1);
	assert_int_equal(batch_machine_mib(NULL), -1);
}

static void
test_batch_exit_codes(void **state)
{
	const char	*why = "x";

	(void)state;
	assert_int_equal(batch_exit_state(0, &why), PROV_SUCCEEDED);
	assert_null(why);
	assert_int_equal(batch_exit_state(3, &why), PROV_FAILED);
	assert_null(why);
	assert_int_equal(batch_exit_state(50001, &why), PROV_PREEMPTED);
	assert_non_null(strstr(why, "preempted"));
	assert_int_equal(batch_exit_state(50002, &why), PROV_LOST);
	assert_int_equal(batch_exit_state(50003, &why), PROV_MAINTENANCE);
	assert_int_equal(batch_exit_state(50004, &why), PROV_LOST);
	assert_int_equal(batch_exit_state(50005, &why), PROV_ERROR);
	assert_string_equal(why, "the task ran past its max_runtime "
	    "(exit code 50005)");
	assert_int_equal(batch_exit_state(50006, &why), PROV_MAINTENANCE);
	assert_int_equal(batch_exit_state(50000, &why), PROV_ERROR);
	assert_int_equal(batch_exit_state(50007, NULL), PROV_FAILED);
}

/* Parse TEXT, map it, keep the JSON alive in *RET_J. */
static int
map(const char *text, json_t **ret_j, struct prov_observed *o,
    struct prov_text *t)
{
	*ret_j = provtest_json(text);
	return batch_job_map(*ret_j, o, t);
}

#define NAME "projects/p/locations/us-central1/jobs/gpuq-i1-42-2"
#define JOB_HEAD \
	"{\"name\":\"" NAME "\",\"uid\":\"gpuq-i1-42-2-abc\"," \
	"\"labels\":{\"gpuq-install\":\"i1\",\"gpuq-job\":\"42\"," \
	"\"gpuq-attempt\":\"2\"}," \
	"\"createTime\":\"2024-06-26T18:42:22.5Z\"," \
	"\"updateTime\":\"2024-06-26T19:42:22Z\","
#define EV(t, d) "{\"type\":\"STATUS_CHANGED\",\"eventTime\":\"" t "\"," \
	"\"description\":\"" d "\"}"
#define EV_SCHED EV("2024-06-26T18:42:30Z", "Job state is set from QUEUED " \
	"to SCHEDULED for job " NAME ".")
#define EV_RUN EV("2024-06-26T18:43:22Z", "Job state is set from " \
	"SCHEDULED to RUNNING for job " NAME ".")

static void
test_batch_map_pending_running(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"QUEUED\"}}",
	    &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_string_equal(o.resource, "gpuq-i1-42-2");
	assert_string_equal(o.cloud_id, NAME);
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	assert_int_equal(o.created, 1719427342);
	assert_int_equal(o.started, 0);
	assert_int_equal(o.ended, 0);
	assert_null(o.zone);
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"SCHEDULED\","
	    "\"statusEvents\":[" EV_SCHED "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_null(o.message);
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"RUNNING\","
	    "\"statusEvents\":[" EV_SCHED "," EV_RUN "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_int_equal(o.started, 1719427402);
	assert_int_equal(o.ended, 0);
	json_decref(j);
}

/*
 * A job Batch holds queued says why in a status event that is not a
 * change of state: that is the pending message, until the state moves.
 */
static void
test_batch_map_pending_reason(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"QUEUED\","
	    "\"statusEvents\":[{\"eventTime\":\"2024-06-26T18:43:00Z\","
	    "\"description\":\"Quota checking process decides to delay "
	    "scheduling for the job due to inadequate quota\"}]}}", &j, &o,
	    &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_string_equal(o.message, "Quota checking process decides to "
	    "delay scheduling for the job due to inadequate quota");
	json_decref(j);

	/* Moved on to SCHEDULED since: the old reason no longer holds. */
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"SCHEDULED\","
	    "\"statusEvents\":[{\"eventTime\":\"2024-06-26T18:42:25Z\","
	    "\"description\":\"no capacity\"}," EV_SCHED "]}}", &j, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_null(o.message);
	json_decref(j);
}

/*
 * A gang's job still RUNNING with one FAILED task has lost a node: LOST
 * at once (doc/DESIGN.md "Gangs"); with none failed it runs on.
 */
static void
test_batch_map_gang_task_failed(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"RUNNING\","
	    "\"statusEvents\":[" EV_SCHED "," EV_RUN "],\"taskGroups\":{"
	    "\"group0\":{\"counts\":{\"RUNNING\":\"3\"}}}}}", &j, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_RUNNING);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"RUNNING\","
	    "\"statusEvents\":[" EV_SCHED "," EV_RUN "],\"taskGroups\":{"
	    "\"group0\":{\"counts\":{\"RUNNING\":\"3\",\"FAILED\":"
	    "\"1\"}}}}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	assert_string_equal(o.message, "1 of the job's tasks failed while "
	    "the others ran; a multi-node job goes on only whole");
	json_decref(j);
}

static void
test_batch_map_succeeded(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"SUCCEEDED\","
	    "\"statusEvents\":[" EV_SCHED "," EV_RUN ","
	    EV("2024-06-26T19:40:00Z", "Job state is set from RUNNING to "
	    "SUCCEEDED for job " NAME ".") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_SUCCEEDED);
	assert_int_equal(o.exit_code, 0);
	assert_int_equal(o.ended, 1719430800);
	json_decref(j);
}

/* The job-level FAILED event as Batch writes it after a task failure. */
#define EV_FAILED(code, why) \
	"{\"type\":\"STATUS_CHANGED\",\"eventTime\":\"2024-06-26T19:00:00Z\"," \
	"\"description\":\"Job state is set from RUNNING to FAILED for job " \
	NAME ". Job failed due to task failure. Specifically, task with " \
	"index 0 failed due to the following task event: \\\"Task state is " \
	"updated from RUNNING to FAILED on zones/us-central1-c/instances/" \
	"4242" why " with exit code " #code ".\\\"\"," \
	"\"taskState\":\"FAILED\",\"taskExecution\":{\"exitCode\":" #code "}}"

static void
test_batch_map_failed_exit(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_SCHED "," EV_RUN "," EV_FAILED(3, "")
	    "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_FAILED);
	assert_int_equal(o.exit_code, 3);
	assert_string_equal(o.zone, "us-central1-c");
	assert_int_equal(o.ended, 1719428400);
	assert_non_null(strstr(o.message, "with exit code 3."));
	json_decref(j);
}

static void
test_batch_map_reserved_codes(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV_FAILED(50001,
	    " due to Spot Preemption") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	assert_int_equal(o.exit_code, -1);
	assert_string_equal(o.message, "the Spot VM was preempted "
	    "(exit code 50001)");
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV_FAILED(50002, " due to Batch "
	    "no longer receives VM updates") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV_FAILED(50003, " due to VM is "
	    "rebooted during task execution") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV_FAILED(50005, " due to task "
	    "runs over the maximum runtime") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_string_equal(o.message, "the task ran past its max_runtime "
	    "(exit code 50005)");
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV_FAILED(50006, " due to VM is "
	    "recreated during task execution") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	json_decref(j);
}

static void
test_batch_map_exit_from_text(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	/* An event without taskExecution: the description says it. */
	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_RUN "," EV("2024-06-26T19:00:00Z",
	    "Job state is set from RUNNING to FAILED for job " NAME ". Job "
	    "failed due to task failure. Specifically, task with index 0 "
	    "failed due to the following task event: \\\"Task state is "
	    "updated from RUNNING to FAILED on zones/us-west1-a/instances/1 "
	    "due to Spot VM preemption with exit code 50001.\\\"") "]}}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	assert_string_equal(o.zone, "us-west1-a");
	json_decref(j);
}

static void
test_batch_map_resource_errors(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV_SCHED ",{\"eventTime\":"
	    "\"2024-06-26T18:42:31Z\",\"description\":\"Batch Error: code - "
	    "CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED, description - error count "
	    "is 1, latest message example: Instance 'x' creation failed: The "
	    "zone 'projects/p/zones/us-central1-a' does not have enough "
	    "resources available to fulfill the request.\"},"
	    EV("2024-06-26T18:42:31Z", "Job state is set from SCHEDULED to "
	    "FAILED for job " NAME ". Job failed due to "
	    "CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED: ...") "]}}", &j, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_STOCKOUT);
	assert_int_equal(o.exit_code, -1);
	assert_non_null(strstr(o.message, "does not have enough resources"));
	assert_int_equal(o.started, 0);
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[{\"description\":\"Batch Error: code - "
	    "CODE_GCE_QUOTA_EXCEEDED, description - Quota 'NVIDIA_T4_GPUS' "
	    "exceeded.\"}]}}", &j, &o, &t), 0);
	/* Compute's quota, not the zone's capacity: QUOTA, not STOCKOUT. */
	assert_int_equal(o.state, PROV_QUOTA);
	assert_int_equal(o.exit_code, -1);
	assert_non_null(strstr(o.message, "NVIDIA_T4_GPUS"));
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\","
	    "\"statusEvents\":[" EV("2024-06-26T18:42:31Z", "Job state is set "
	    "from SCHEDULED to FAILED for job " NAME ". Job failed due to "
	    "CODE_GCE_INVALID_VALUE: bad accelerator") "]}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_non_null(strstr(o.message, "CODE_GCE_INVALID_VALUE"));
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"FAILED\"}}",
	    &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_string_equal(o.message, "the Batch job failed without a "
	    "status event saying why");
	json_decref(j);
}

static void
test_batch_map_cancel_delete(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":"
	    "\"CANCELLATION_IN_PROGRESS\",\"statusEvents\":[" EV_RUN "]}}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"CANCELLED\"}}",
	    &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_CANCELLED);
	assert_int_equal(o.ended, 1719430942);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":"
	    "\"DELETION_IN_PROGRESS\"}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_CANCELLED);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"status\":{\"state\":\"WEIRD\"}}",
	    &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_string_equal(o.message, "Batch job in unknown state WEIRD");
	json_decref(j);
	assert_int_equal(map("{\"status\":{}}", &j, &o, &t), -EINVAL);
	json_decref(j);
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

/*
 * A python_package job on Batch: the executor image runs /bin/sh with
 * the constant script, and every user string is a word after it.
 */
static void
test_batch_body_python_package(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *c, *pp, *words;
	size_t		 i;

	pp = pp_launch(&f->l);
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	c = provtest_at(b, "taskGroups.0.taskSpec.runnables.0.container");
	assert_string_equal(provtest_str(c, "imageUri"),
	    "us-docker.pkg.dev/v/t/py:1");
	assert_string_equal(provtest_str(c, "entrypoint"), "/bin/sh");
	assert_string_equal(provtest_str(c, "commands.0"), "-c");
	assert_string_equal(provtest_str(c, "commands.1"), prov_pypkg_script);
	assert_string_equal(provtest_str(c, "commands.2"),
	    "gpuq-python-package");
	/* No user string made it into the script. */
	assert_null(strstr(prov_pypkg_script, "trainer"));
	words = json_array();
	for (i = 3; i < json_array_size(provtest_at(c, "commands")); i++)
		json_array_append(words, json_array_get(provtest_at(c,
		    "commands"), i));
	assert_pp_words(words);
	json_decref(words);
	json_decref(b);
	json_decref(pp);
}

/* A test of a body builder, on a fresh fixture. */
/*
 * A gang of 4 (doc/DESIGN.md "Gangs", API-NOTES N.2): one task group of
 * 4 tasks all at once, one per VM, a hosts file and SSH between the
 * VMs, no task retries, collocated VMs; the container runs the wrapper
 * with the job's words after it.
 */
static void
test_batch_body_gang(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *tg, *c;

	f->l.nodes = 4;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_int_equal(json_array_size(json_object_get(b, "taskGroups")), 1);
	tg = provtest_at(b, "taskGroups.0");
	assert_string_equal(provtest_str(tg, "taskCount"), "4");
	assert_string_equal(provtest_str(tg, "parallelism"), "4");
	assert_string_equal(provtest_str(tg, "taskCountPerNode"), "1");
	assert_true(json_is_true(json_object_get(tg, "requireHostsFile")));
	assert_true(json_is_true(json_object_get(tg, "permissiveSsh")));
	assert_int_equal(json_integer_value(provtest_at(tg,
	    "taskSpec.maxRetryCount")), 0);
	assert_null(provtest_at(tg, "taskSpec.lifecyclePolicies"));
	c = provtest_at(tg, "taskSpec.runnables.0.container");
	assert_string_equal(provtest_str(c, "entrypoint"), "/bin/sh");
	assert_int_equal(json_array_size(json_object_get(c, "commands")), 8);
	assert_string_equal(provtest_str(c, "commands.0"), "-c");
	assert_string_equal(provtest_str(c, "commands.1"), prov_gang_entry);
	assert_string_equal(provtest_str(c, "commands.2"), "gpuq-gang");
	assert_string_equal(provtest_str(c, "commands.3"), "python");
	assert_string_equal(provtest_str(c, "commands.7"), "10");
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.placement.collocation"), "COLLOCATED");
	json_decref(b);
}

/* The wrapper on Batch: rank from BATCH_TASK_INDEX, the main address
 * the first word of the hosts file's first line. */
static void
test_batch_gang_wrapper_ranks(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *argv;
	char		 hosts[] = "/tmp/gpuq-test-hosts-XXXXXX";
	char		*out, *env[4], hf[128];
	FILE		*fp;
	int		 fd;

	json_decref(f->command);
	f->command = json_pack("[s, s, s]", "/bin/sh", "-c",
	    "echo \"$RANK $GPUQ_NODE_RANK $NODE_RANK $MASTER_ADDR\"");
	f->l.command = f->command;
	f->l.args = NULL;
	f->l.nodes = 2;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	argv = json_pack("[s]", provtest_str(b,
	    "taskGroups.0.taskSpec.runnables.0.container.entrypoint"));
	assert_int_equal(json_array_extend(argv, provtest_at(b,
	    "taskGroups.0.taskSpec.runnables.0.container.commands")), 0);
	assert_true((fd = mkstemp(hosts)) >= 0);
	assert_non_null(fp = fdopen(fd, "w"));
	(void)fprintf(fp, "10.0.0.5 batch-node-0\n10.0.0.6 batch-node-1\n");
	(void)fclose(fp);
	(void)snprintf(hf, sizeof hf, "BATCH_HOSTS_FILE=%s", hosts);
	env[0] = "BATCH_TASK_INDEX=1";
	env[1] = hf;
	env[2] = "PATH=/usr/bin:/bin";
	env[3] = NULL;
	assert_int_equal(provtest_run(argv, env, &out), 0);
	assert_string_equal(out, "1 1 1 10.0.0.5\n");
	free(out);
	(void)unlink(hosts);
	json_decref(argv);
	json_decref(b);
}

/*
 * policy.reservation (DESIGN L.2): the reservation's resource name for a
 * launch into it, in its zone; NO_RESERVATION for every other launch.
 */
static void
test_batch_body_reservation(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 site;
	json_t		*b = NULL;

	memset(&site, 0, sizeof site);
	site.project = "proj";
	f->l.site = &site;
	f->l.spot = 0;
	f->l.zone = "us-central1-b";
	f->l.reservation = "team-t4";
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.reservation"),
	    "projects/proj/zones/us-central1-b/reservations/team-t4");
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.location.allowedLocations.0"),
	    "zones/us-central1-b");
	json_decref(b);
	b = NULL;
	f->l.reservation = NULL;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.reservation"),
	    "NO_RESERVATION");
	json_decref(b);
	f->l.site = NULL;
}
#define BODY(f)	cmocka_unit_test_setup_teardown(f, setup, provtest_teardown)

/* Flex-start (API-NOTES K.3): provisioningModel FLEX_START in the
 * instance policy, the task's maxRunDuration a "Ns" string. */
static void
test_batch_body_flex(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;

	f->l.capacity = CAPACITY_FLEX;
	f->l.machine_type = "a3-highgpu-8g";
	f->l.gpu = gpu_lookup("nvidia-h100-80gb");
	f->l.gpu_count = 8;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.provisioningModel"),
	    "FLEX_START");
	assert_string_equal(provtest_str(b,
	    "taskGroups.0.taskSpec.maxRunDuration"), "7200s");
	json_decref(b);
	f->l.max_runtime = 30 * 86400;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "taskGroups.0.taskSpec.maxRunDuration"), "604800s");
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BODY(test_batch_body_fields),
		BODY(test_batch_body_flex),
		BODY(test_batch_body_reservation),
		BODY(test_batch_body_zone_standard_implicit_gpu),
		BODY(test_batch_body_secret_env),
		BODY(test_batch_body_invalid),
		BODY(test_batch_body_python_package),
		BODY(test_batch_body_gang),
		BODY(test_batch_gang_wrapper_ranks),
		cmocka_unit_test(test_batch_machine_mib_table),
		cmocka_unit_test(test_batch_exit_codes),
		cmocka_unit_test(test_batch_map_pending_running),
		cmocka_unit_test(test_batch_map_pending_reason),
		cmocka_unit_test(test_batch_map_gang_task_failed),
		cmocka_unit_test(test_batch_map_succeeded),
		cmocka_unit_test(test_batch_map_failed_exit),
		cmocka_unit_test(test_batch_map_reserved_codes),
		cmocka_unit_test(test_batch_map_exit_from_text),
		cmocka_unit_test(test_batch_map_resource_errors),
		cmocka_unit_test(test_batch_map_cancel_delete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
