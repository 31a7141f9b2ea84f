/*
 * test-vertex.c: the Vertex AI customJobs.create body and the mapping of
 * a CustomJob onto prov_state (providers/vertex.c), field by field.
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

	f = provtest_new(json_pack("[s, s]", "python", "train.py"),
	    json_pack("[s]", "--epochs=10"),
	    json_pack("{s:s, s:s, s:s}", "LR", "0.1",
	    "GPUQ_CHECKPOINT_DIR", "gs://b/runs/42/checkpoints/",
	    "GPUQ_JOB_ID", "42"));
	f->l.machine_type = "n1-standard-8";
	f->l.gpu_count = 2;
	f->l.max_runtime = 3600;
	*state = f;
	return 0;
}

static void
test_vertex_body_fields(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *pool, *env;
	char		*cause = NULL;

	assert_int_equal(vertex_job_body(&f->l, &b, &cause), 0);
	assert_null(cause);
	assert_int_equal(json_object_size(b), 3);
	assert_string_equal(provtest_str(b, "displayName"), "gpuq-i1-42-2");
	assert_int_equal(json_object_size(provtest_at(b, "labels")), 5);
	assert_string_equal(provtest_str(b, "labels.gpuq-install"), "i1");
	assert_string_equal(provtest_str(b, "labels.gpuq-job"), "42");
	assert_string_equal(provtest_str(b, "labels.gpuq-attempt"), "2");
	assert_string_equal(provtest_str(b, "labels.gpuq-resource"),
	    "gpuq-i1-42-2");
	assert_string_equal(provtest_str(b, "labels.team"), "vision");

	assert_int_equal(json_array_size(provtest_at(b,
	    "jobSpec.workerPoolSpecs")),
	    1);
	pool = provtest_at(b, "jobSpec.workerPoolSpecs.0");
	assert_string_equal(provtest_str(pool, "machineSpec.machineType"),
	    "n1-standard-8");
	assert_string_equal(provtest_str(pool, "machineSpec.acceleratorType"),
	    "NVIDIA_TESLA_T4");
	assert_int_equal(json_integer_value(provtest_at(pool,
	    "machineSpec.acceleratorCount")), 2);
	assert_string_equal(provtest_str(pool, "replicaCount"), "1");
	assert_string_equal(provtest_str(pool,
	    "diskSpec.bootDiskType"), "pd-ssd");
	assert_int_equal(json_integer_value(provtest_at(pool,
	    "diskSpec.bootDiskSizeGb")), 100);
	assert_string_equal(provtest_str(pool, "containerSpec.imageUri"),
	    "us-docker.pkg.dev/p/r/train:1");
	assert_true(json_equal(provtest_at(pool, "containerSpec.command"),
	    f->command));
	assert_true(json_equal(provtest_at(pool,
	    "containerSpec.args"), f->args));
	env = provtest_at(pool, "containerSpec.env");
	assert_int_equal(json_array_size(env), 3);
	assert_string_equal(provtest_str(env, "0.name"), "LR");
	assert_string_equal(provtest_str(env, "0.value"), "0.1");
	assert_string_equal(provtest_str(env, "1.name"), "GPUQ_CHECKPOINT_DIR");
	assert_string_equal(provtest_str(env, "1.value"),
	    "gs://b/runs/42/checkpoints/");
	assert_string_equal(provtest_str(env, "2.name"), "GPUQ_JOB_ID");

	/* AIP_CHECKPOINT_DIR = prefix + "/checkpoints/" = the env's. */
	assert_string_equal(provtest_str(b,
	    "jobSpec.baseOutputDirectory.outputUriPrefix"), "gs://b/runs/42");
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.strategy"),
	    "SPOT");
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.timeout"),
	    "3600s");
	assert_true(json_is_false(provtest_at(b,
	    "jobSpec.scheduling.restartJobOnWorkerRestart")));
	/* gpuq's budgets decide, not Vertex's silent restarts. */
	assert_true(json_is_true(provtest_at(b,
	    "jobSpec.scheduling.disableRetries")));
	json_decref(b);
}

static void
test_vertex_body_standard_minimal(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *c;

	f->l.spot = 0;
	f->l.max_runtime = 0;
	f->l.command = NULL;
	f->l.args = json_array();
	f->l.env = NULL;
	f->l.labels = NULL;
	f->l.output_dir = NULL;
	f->l.gpu = gpu_lookup("nvidia-l4");
	f->l.gpu_count = 1;
	f->l.machine_type = "g2-standard-8";
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.strategy"),
	    "STANDARD");
	assert_null(provtest_at(b, "jobSpec.scheduling.timeout"));
	assert_null(provtest_at(b, "jobSpec.baseOutputDirectory"));
	assert_int_equal(json_object_size(provtest_at(b, "labels")), 4);
	assert_string_equal(provtest_str(b,
	    "jobSpec.workerPoolSpecs.0.machineSpec"
	    ".acceleratorType"), "NVIDIA_L4");
	c = provtest_at(b, "jobSpec.workerPoolSpecs.0.containerSpec");
	assert_null(json_object_get(c, "command"));
	assert_null(json_object_get(c, "args"));
	assert_int_equal(json_array_size(json_object_get(c, "env")), 0);
	json_decref((json_t *)f->l.args);
	json_decref(b);
}

static void
test_vertex_body_output_slashes(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;

	f->l.output_dir = "gs://b/x";
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "jobSpec.baseOutputDirectory.outputUriPrefix"), "gs://b/x");
	json_decref(b);
	f->l.output_dir = "gs://b/x//";
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "jobSpec.baseOutputDirectory.outputUriPrefix"), "gs://b/x");
	json_decref(b);
	f->l.output_dir = "gs://b/";
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "jobSpec.baseOutputDirectory.outputUriPrefix"), "gs://b");
	json_decref(b);
}

static void
test_vertex_body_invalid(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;
	char		*cause = NULL;

	f->l.region = NULL;
	assert_int_equal(vertex_job_body(&f->l, &b, &cause), -EINVAL);
	assert_null(b);
	assert_string_equal(cause, "launch of gpuq-i1-42-2: region is "
	    "empty");
	free(cause);
}

/* Parse TEXT, map it, keep the JSON alive in *RET_J. */
static int
map(const char *text, json_t **ret_j, struct prov_observed *o,
    struct prov_text *t)
{
	*ret_j = provtest_json(text);
	return vertex_job_map(*ret_j, o, t);
}

#define JOB_HEAD \
	"{\"name\":\"projects/123/locations/us-central1/customJobs/777\"," \
	"\"displayName\":\"gpuq-i1-42-2\"," \
	"\"labels\":{\"gpuq-install\":\"i1\",\"gpuq-job\":\"42\"," \
	"\"gpuq-attempt\":\"2\",\"gpuq-resource\":\"gpuq-i1-42-2\"}," \
	"\"jobSpec\":{\"workerPoolSpecs\":[]}," \
	"\"createTime\":\"2024-06-26T18:42:22.123456Z\","

static void
test_vertex_map_pending_running(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_QUEUED\"}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	assert_string_equal(o.resource, "gpuq-i1-42-2");
	assert_string_equal(o.cloud_id,
	    "projects/123/locations/us-central1/customJobs/777");
	assert_null(o.zone);
	assert_int_equal(o.job_id, 42);
	assert_int_equal(o.attempt, 2);
	assert_int_equal(o.created, 1719427342);
	assert_int_equal(o.started, 0);
	assert_int_equal(o.exit_code, -1);
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_PENDING\"}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	json_decref(j);

	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_RUNNING\","
	    "\"startTime\":\"2024-06-26T18:43:22Z\"}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	assert_int_equal(o.started, 1719427402);
	json_decref(j);
}

static void
test_vertex_map_succeeded(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_SUCCEEDED\","
	    "\"startTime\":\"2024-06-26T18:43:22Z\","
	    "\"endTime\":\"2024-06-26T19:43:22Z\"}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_SUCCEEDED);
	assert_int_equal(o.exit_code, 0);
	assert_int_equal(o.ended, 1719431002);
	json_decref(j);
}

static void
test_vertex_map_failed_exit(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":3,\"message\":\"The replica workerpool0-0 "
	    "exited with a non-zero status of 3. Termination reason: Error. "
	    "To find out more ...\"}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_FAILED);
	assert_int_equal(o.exit_code, 3);
	assert_non_null(strstr(o.message, "non-zero status of 3"));
	json_decref(j);
}

static void
test_vertex_map_stockout_quota(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":8,\"message\":\"Resources are insufficient "
	    "in region: us-central1. Please try a different region.\"}}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_STOCKOUT);
	assert_int_equal(o.exit_code, -1);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":8,\"message\":\"The following quota metrics "
	    "exceed quota limits: aiplatform.googleapis.com/"
	    "custom_model_training_nvidia_l4_gpus\"}}", &j, &o, &t), 0);
	/* Admitted, then starved of Vertex AI quota: not a stockout. */
	assert_int_equal(o.state, PROV_QUOTA);
	assert_int_equal(o.exit_code, -1);
	assert_non_null(strstr(o.message,
	    "custom_model_training_nvidia_l4_gpus"));
	json_decref(j);
	/* Spot quota: its metric says "preemptible", still QUOTA. */
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":8,\"message\":\"The following quota metrics "
	    "exceed quota limits: aiplatform.googleapis.com/"
	    "custom_model_training_preemptible_nvidia_t4_gpus\"}}", &j, &o,
	    &t), 0);
	assert_int_equal(o.state, PROV_QUOTA);
	json_decref(j);
}

static void
test_vertex_map_preempted(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":14,\"message\":\"The replica workerpool0-0 "
	    "was preempted (Spot VM preemption, STOCKOUT) and could not be "
	    "restarted.\"}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_PREEMPTED);
	json_decref(j);
	/* With disableRetries, host maintenance ends the job too. */
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":14,\"message\":\"The replica workerpool0-0 "
	    "was stopped for host maintenance and retries are disabled for "
	    "this job (scheduling.disableRetries).\"}}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_MAINTENANCE);
	json_decref(j);
}

static void
test_vertex_map_cloud_errors(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":13,\"message\":\"Internal error\"}}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_LOST);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\","
	    "\"error\":{\"code\":4,\"message\":\"Job timed out\"}}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_string_equal(o.message, "Job timed out");
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_FAILED\"}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_EXPIRED\"}", &j,
	    &o, &t), 0);
	assert_int_equal(o.state, PROV_ERROR);
	assert_string_equal(o.message, "Vertex AI job ended in state "
	    "JOB_STATE_EXPIRED");
	json_decref(j);
}

static void
test_vertex_map_cancel(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_CANCELLING\","
	    "\"startTime\":\"2024-06-26T18:43:22Z\"}", &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_RUNNING);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_CANCELLING\"}",
	    &j, &o, &t), 0);
	assert_int_equal(o.state, PROV_PENDING);
	json_decref(j);
	assert_int_equal(map(JOB_HEAD "\"state\":\"JOB_STATE_CANCELLED\","
	    "\"error\":{\"code\":1,\"message\":\"CANCELED\"}}", &j, &o, &t),
	    0);
	assert_int_equal(o.state, PROV_CANCELLED);
	assert_string_equal(o.message, "CANCELED");
	json_decref(j);
}

static void
test_vertex_map_not_ours(void **state)
{
	struct prov_observed	 o;
	struct prov_text	 t;
	json_t			*j;

	(void)state;
	assert_int_equal(map("{\"name\":\"x\"}", &j, &o, &t), -EINVAL);
	json_decref(j);
	assert_int_equal(map("{\"state\":\"JOB_STATE_RUNNING\"}", &j, &o,
	    &t), -EINVAL);
	json_decref(j);
	assert_int_equal(map("[]", &j, &o, &t), -EINVAL);
	json_decref(j);
	/* No gpuq-resource label: the displayName is the resource. */
	assert_int_equal(map("{\"name\":\"n\",\"displayName\":\"gpuq-a-1-1\","
	    "\"state\":\"JOB_STATE_RUNNING\"}", &j, &o, &t), 0);
	assert_string_equal(o.resource, "gpuq-a-1-1");
	assert_int_equal(o.job_id, 0);
	json_decref(j);
}

/*
 * A python_package job on Vertex AI: passed as a pythonPackageSpec as
 * it is, with the env, and no containerSpec (they are one of).
 */
static void
test_vertex_body_python_package(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *ps, *pp;

	pp = provtest_json("{\"executor_image\": \"us-docker.pkg.dev/v/t/"
	    "py:1\", \"package_uris\": [\"gs://bkt/a-1.tar.gz\"], "
	    "\"module\": \"trainer.task\", \"args\": [\"--lr\", \"0.1\"]}");
	f->l.python_package = pp;
	f->l.image = "us-docker.pkg.dev/v/t/py:1";
	f->l.command = NULL;
	f->l.args = NULL;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b, "jobSpec.workerPoolSpecs.0.containerSpec"));
	ps = provtest_at(b, "jobSpec.workerPoolSpecs.0.pythonPackageSpec");
	assert_non_null(ps);
	assert_int_equal(json_object_size(ps), 5);
	assert_string_equal(provtest_str(ps, "executorImageUri"),
	    "us-docker.pkg.dev/v/t/py:1");
	assert_string_equal(provtest_str(ps, "packageUris.0"),
	    "gs://bkt/a-1.tar.gz");
	assert_string_equal(provtest_str(ps, "pythonModule"), "trainer.task");
	assert_string_equal(provtest_str(ps, "args.1"), "0.1");
	assert_true(json_is_array(provtest_at(ps, "env")));
	assert_true(json_array_size(provtest_at(ps, "env")) > 0);
	json_decref(b);
	json_decref(pp);
}

/*
 * A gang of 3 (doc/DESIGN.md "Gangs"): workerPoolSpecs[0] the main node
 * (1 replica), [1] the other 2 with the same machine and container; both
 * run the entry wrapper with the job's words after it; Vertex restarts
 * the whole job when a worker restarts.
 */
static void
test_vertex_body_gang(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *p0, *p1, *cmd;

	f->l.nodes = 3;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_int_equal(json_array_size(provtest_at(b,
	    "jobSpec.workerPoolSpecs")), 2);
	p0 = provtest_at(b, "jobSpec.workerPoolSpecs.0");
	p1 = provtest_at(b, "jobSpec.workerPoolSpecs.1");
	assert_string_equal(provtest_str(p0, "replicaCount"), "1");
	assert_string_equal(provtest_str(p1, "replicaCount"), "2");
	assert_true(json_equal(json_object_get(p0, "machineSpec"),
	    json_object_get(p1, "machineSpec")));
	assert_true(json_equal(json_object_get(p0, "containerSpec"),
	    json_object_get(p1, "containerSpec")));
	cmd = provtest_at(p0, "containerSpec.command");
	assert_int_equal(json_array_size(cmd), 7);
	assert_string_equal(provtest_str(cmd, "0"), "/bin/sh");
	assert_string_equal(provtest_str(cmd, "1"), "-c");
	assert_string_equal(provtest_str(cmd, "2"), prov_gang_entry);
	assert_string_equal(provtest_str(cmd, "3"), "gpuq-gang");
	assert_string_equal(provtest_str(cmd, "4"), "python");
	assert_string_equal(provtest_str(cmd, "5"), "train.py");
	assert_string_equal(provtest_str(cmd, "6"), "--epochs=10");
	assert_null(provtest_at(p0, "containerSpec.args"));
	assert_true(json_is_true(provtest_at(b,
	    "jobSpec.scheduling.restartJobOnWorkerRestart")));
	json_decref(b);
}

/* One node: the body is the single-machine one. */
static void
test_vertex_body_one_node(void **state)
{
	struct provtest	*f = *state;
	json_t		*a = NULL, *b = NULL;

	assert_int_equal(vertex_job_body(&f->l, &a, NULL), 0);
	f->l.nodes = 1;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
}

/*
 * The wrapper, run for real with the CLUSTER_SPEC Vertex gives each
 * replica (API-NOTES N.1): rank 0 for workerpool0, 1 + index for
 * workerpool1, the main address the host of workerpool0's entry; the
 * job's words reach the command untouched.
 */
/* CLUSTER_SPEC=... as Vertex sets it for replica INDEX of pool TYPE. */
static void
cluster_spec(char *buf, size_t size, const char *type, int index)
{
	(void)snprintf(buf, size, "CLUSTER_SPEC={\"cluster\":{"
	    "\"workerpool0\":[\"cmle-training-workerpool0-ab-0:2222\"],"
	    "\"workerpool1\":[\"cmle-training-workerpool1-ab-0:2222\","
	    "\"cmle-training-workerpool1-ab-1:2222\"]},"
	    "\"environment\":\"cloud\",\"task\":{\"type\":\"%s\","
	    "\"index\":%d},\"job\":\"{}\"}", type, index);
}

static void
test_vertex_gang_wrapper_ranks(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL, *cmd;
	char		*out, *env[3], spec[512];

	json_decref(f->command);
	f->command = json_pack("[s, s, s]", "/bin/sh", "-c",
	    "echo \"$RANK $NODE_RANK $GPUQ_NODE_RANK $MASTER_ADDR "
	    "$GPUQ_MAIN_ADDR [$1]\"");
	json_decref(f->args);
	f->args = json_pack("[s, s]", "x", "$(id) `id`; a b");
	f->l.command = f->command;
	f->l.args = f->args;
	f->l.nodes = 3;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	cmd = provtest_at(b, "jobSpec.workerPoolSpecs.0.containerSpec.command");
	env[0] = spec;
	env[1] = "PATH=/usr/bin:/bin";
	env[2] = NULL;

	cluster_spec(spec, sizeof spec, "workerpool0", 0);
	assert_int_equal(provtest_run(cmd, env, &out), 0);
	assert_string_equal(out, "0 0 0 cmle-training-workerpool0-ab-0 "
	    "cmle-training-workerpool0-ab-0 [$(id) `id`; a b]\n");
	free(out);

	cluster_spec(spec, sizeof spec, "workerpool1", 1);
	assert_int_equal(provtest_run(cmd, env, &out), 0);
	assert_string_equal(out, "2 2 2 cmle-training-workerpool0-ab-0 "
	    "cmle-training-workerpool0-ab-0 [$(id) `id`; a b]\n");
	free(out);

	/* Nothing to tell the rank by: the node stops before the job. */
	env[0] = "PATH=/usr/bin:/bin";
	env[1] = NULL;
	assert_int_equal(provtest_run(cmd, env, &out), 70);
	assert_string_equal(out, "");
	free(out);
	json_decref(b);
}

/*
 * machineSpec.reservationAffinity (DESIGN L.2): SPECIFIC_RESERVATION,
 * the by-name key and the reservation's resource name; none otherwise.
 */
static void
test_vertex_body_reservation(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 site;
	json_t		*b = NULL, *ra;

	memset(&site, 0, sizeof site);
	site.project = "proj";
	f->l.site = &site;
	f->l.spot = 0;
	f->l.zone = "us-central1-b";
	f->l.reservation = "team-t4";
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	ra = provtest_at(b,
	    "jobSpec.workerPoolSpecs.0.machineSpec.reservationAffinity");
	assert_non_null(ra);
	assert_string_equal(json_string_value(json_object_get(ra,
	    "reservationAffinityType")), "SPECIFIC_RESERVATION");
	assert_string_equal(json_string_value(json_object_get(ra, "key")),
	    "compute.googleapis.com/reservation-name");
	assert_string_equal(json_string_value(json_array_get(json_object_get(
	    ra, "values"), 0)),
	    "projects/proj/zones/us-central1-b/reservations/team-t4");
	json_decref(b);
	b = NULL;
	f->l.reservation = NULL;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b,
	    "jobSpec.workerPoolSpecs.0.machineSpec.reservationAffinity"));
	json_decref(b);
	f->l.site = NULL;
}

/* A test of a body builder, on a fresh fixture. */
#define BODY(f)	cmocka_unit_test_setup_teardown(f, setup, provtest_teardown)

/* Flex-start (API-NOTES K.1): strategy FLEX_START, maxWaitDuration a
 * little over flex_wait, and the run-time timeout, as "Ns" strings. */
static void
test_vertex_body_flex(void **state)
{
	struct provtest	*f = *state;
	json_t		*b = NULL;

	f->l.capacity = CAPACITY_FLEX;
	f->l.flex_wait = 3600;
	f->l.gpu = gpu_lookup("nvidia-l4");
	f->l.machine_type = "g2-standard-8";
	f->l.gpu_count = 1;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.strategy"),
	    "FLEX_START");
	assert_string_equal(provtest_str(b,
	    "jobSpec.scheduling.maxWaitDuration"), "4200s");
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.timeout"),
	    "3600s");
	json_decref(b);
	/* No max_runtime: Google's most, 7 days. */
	f->l.max_runtime = 0;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "jobSpec.scheduling.timeout"),
	    "604800s");
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BODY(test_vertex_body_fields),
		BODY(test_vertex_body_flex),
		BODY(test_vertex_body_reservation),
		BODY(test_vertex_body_python_package),
		BODY(test_vertex_body_standard_minimal),
		BODY(test_vertex_body_output_slashes),
		BODY(test_vertex_body_invalid),
		BODY(test_vertex_body_gang),
		BODY(test_vertex_body_one_node),
		BODY(test_vertex_gang_wrapper_ranks),
		cmocka_unit_test(test_vertex_map_pending_running),
		cmocka_unit_test(test_vertex_map_succeeded),
		cmocka_unit_test(test_vertex_map_failed_exit),
		cmocka_unit_test(test_vertex_map_stockout_quota),
		cmocka_unit_test(test_vertex_map_preempted),
		cmocka_unit_test(test_vertex_map_cloud_errors),
		cmocka_unit_test(test_vertex_map_cancel),
		cmocka_unit_test(test_vertex_map_not_ours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
