/*
 * test-cloud.c: daemon/cloud.c's pure functions, what a provider is
 * handed for a job: the resource name, the request id (RFC 4122 version
 * 5 shaped, and the same after a restart), the output place and
 * checkpoint directory, and the container's environment (the checkpoint
 * contract of gpuq-job(5)). No network: the cloud is built over an
 * endpoint nothing listens on and never started.
 */
#include "config.h"

#include <sys/types.h>

#include <regex.h>
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
#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "store/store.h"
#include "tests/unit/unittest.h"

struct t {
	struct unittest	*ut;		/* the directory, store and loop */
	struct conf	 conf;
	struct store	*store;
	struct cloud	*cloud;
};

/* A cloud whose [gcp] checkpoint_root is ROOT. */
static void
cloud_make(struct t *t, const char *root)
{
	char	*cause = NULL;

	assert_int_equal(conf_set(&t->conf, "gcp", "checkpoint_root", root,
	    &cause), 0);
	if (cloud_new(t->ut->loop, t->store, &t->conf, &t->cloud, &cause) != 0)
		fail_msg("cloud_new: %s", cause);
}

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);
	char		*cause = NULL;

	log_init("test-cloud", LOG_LEVEL_ERR, 0);
	t->ut = unittest_new("test-cloud");
	unittest_clean_env(t->ut);
	setenv("GPUQ_PRICE_TABLE", TOP_SRCDIR "/data/prices.csv", 1);
	t->store = unittest_store(t->ut);
	assert_int_equal(conf_init(&t->conf), 0);
	assert_int_equal(conf_set(&t->conf, "gcp", "project", "p-1", &cause),
	    0);
	assert_int_equal(conf_set(&t->conf, "gcp", "endpoint",
	    "http://127.0.0.1:9", &cause), 0);
	(void)unittest_loop(t->ut);
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	if (t->cloud != NULL)
		cloud_free(t->cloud);
	unittest_free(t->ut);
	conf_done(&t->conf);
	free(t);
	return 0;
}

static int
matches(const char *re, const char *s)
{
	regex_t	r;
	int	rc;

	assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	rc = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return rc;
}

/* gpuq-<install>-<job>-<attempt>, a valid Compute Engine name. */
static void
test_cloud_resource_name(void **state)
{
	struct t	*t = *state;
	char		 buf[CLOUD_NAME_MAX];

	cloud_resource_name("ab12", 42, 3, buf);
	assert_string_equal(buf, "gpuq-ab12-42-3");
	/* The largest numbers with this store's install id still fit. */
	cloud_resource_name(store_install_id(t->store), INT64_MAX, INT32_MAX,
	    buf);
	assert_true(matches("^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$", buf));
	assert_non_null(strstr(buf, "-9223372036854775807-2147483647"));
}

/*
 * 8-4-4-4-12 lower-case hex, version 5, RFC 4122 variant; the same
 * inputs give the same id (pinned: a crash-repeated create must carry
 * the id of the first), and create and delete differ.
 */
static void
test_cloud_request_id(void **state)
{
	char	a[CLOUD_UUID_LEN], b[CLOUD_UUID_LEN], d[CLOUD_UUID_LEN];

	cloud_request_id("gpuq-ab12-42-3", "", a);
	cloud_request_id("gpuq-ab12-42-3", "", b);
	cloud_request_id("gpuq-ab12-42-3", "delete", d);
	assert_true(matches("^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-"
	    "[89ab][0-9a-f]{3}-[0-9a-f]{12}$", a));
	assert_true(matches("^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-"
	    "[89ab][0-9a-f]{3}-[0-9a-f]{12}$", d));
	assert_string_equal(a, b);
	assert_string_not_equal(a, d);
	/* SHA-256("gpuq-ab12-42-3\n"), first 16 bytes, v5 bits set. */
	assert_string_equal(a, "cc61a0b8-a378-5c69-ab4a-7b1c7c487afd");
	assert_string_equal(d, "2ea54486-d7ef-5954-a2ab-ef50b578c385");
	cloud_request_id("gpuq-ab12-42-4", "", b);
	assert_string_not_equal(a, b);
}

/* The spec's checkpoint.uri wins; else <checkpoint_root>/<job>/. */
static void
test_cloud_output_place(void **state)
{
	struct t	*t = *state;
	json_t		*spec;
	char		*s;

	cloud_make(t, "gs://root/p//");
	spec = json_pack("{s:{s:s}}", "checkpoint", "uri", "gs://b/x");
	s = cloud_output_place(t->cloud, spec, 7);
	assert_string_equal(s, "gs://b/x/");
	free(s);
	s = cloud_checkpoint_dir(t->cloud, spec, 7);
	assert_string_equal(s, "gs://b/x/checkpoints/");
	free(s);
	json_decref(spec);

	spec = json_pack("{s:{s:s}}", "checkpoint", "uri", "gs://b/y/");
	s = cloud_output_place(t->cloud, spec, 7);
	assert_string_equal(s, "gs://b/y/");
	free(s);
	json_decref(spec);

	spec = json_pack("{s:{s:s}}", "checkpoint", "uri", "");
	s = cloud_output_place(t->cloud, spec, 7);
	assert_string_equal(s, "gs://root/p/7/");
	free(s);
	json_decref(spec);

	spec = json_object();
	s = cloud_checkpoint_dir(t->cloud, spec, 12);
	assert_string_equal(s, "gs://root/p/12/checkpoints/");
	free(s);
	json_decref(spec);
}

/* No uri and no checkpoint_root: no place, no directory. */
static void
test_cloud_output_place_none(void **state)
{
	struct t	*t = *state;
	json_t		*spec = json_object();

	cloud_make(t, "");
	assert_null(cloud_output_place(t->cloud, spec, 7));
	assert_null(cloud_checkpoint_dir(t->cloud, spec, 7));
	json_decref(spec);
}

static const char *
env_get(json_t *env, const char *k)
{
	return json_string_value(json_object_get(env, k));
}

/*
 * The job's env, then the contract's variables (which win over the
 * job's own); GPUQ_RESUME_FROM only when resuming, GPUQ_CHECKPOINT_DIR
 * only with a place.
 */
static void
test_cloud_env(void **state)
{
	struct t		*t = *state;
	struct store_attempt	 a;
	json_t			*spec, *env;

	cloud_make(t, "gs://root");
	memset(&a, 0, sizeof a);
	a.job_id = 5;
	a.number = 2;
	spec = json_pack("{s:{s:s, s:s}}", "env", "LR", "0.1",
	    CLOUD_ENV_JOB_ID, "mine");
	env = cloud_env(t->cloud, spec, &a);
	assert_string_equal(env_get(env, "LR"), "0.1");
	assert_string_equal(env_get(env, CLOUD_ENV_JOB_ID), "5");
	assert_string_equal(env_get(env, CLOUD_ENV_ATTEMPT), "2");
	assert_string_equal(env_get(env, CLOUD_ENV_CKPT_DIR),
	    "gs://root/5/checkpoints/");
	assert_null(json_object_get(env, CLOUD_ENV_RESUME));
	assert_int_equal(json_object_size(env), 4);
	json_decref(env);

	a.resumed_from = "gs://root/5/checkpoints/step-100/";
	env = cloud_env(t->cloud, spec, &a);
	assert_string_equal(env_get(env, CLOUD_ENV_RESUME),
	    "gs://root/5/checkpoints/step-100/");
	json_decref(env);
	/* The spec's env is copied, not changed. */
	assert_string_equal(env_get(json_object_get(spec, "env"),
	    CLOUD_ENV_JOB_ID), "mine");
	json_decref(spec);

	/* secret_env: the version's name, never a value. */
	spec = json_pack("{s:{s:s}, s:{s:s}}", "env", "LR", "0.1",
	    "secret_env", "HF_TOKEN", "projects/my-project/secrets/hf/"
	    "versions/3");
	env = cloud_env(t->cloud, spec, &a);
	assert_string_equal(env_get(env, "GPUQ_SECRET_HF_TOKEN"),
	    "projects/my-project/secrets/hf/versions/3");
	assert_null(json_object_get(env, "HF_TOKEN"));
	json_decref(env);
	json_decref(spec);
}

static void
test_cloud_env_no_place(void **state)
{
	struct t		*t = *state;
	struct store_attempt	 a;
	json_t			*spec = json_object(), *env;

	cloud_make(t, "");
	memset(&a, 0, sizeof a);
	a.job_id = 9;
	a.number = 1;
	a.resumed_from = "";
	env = cloud_env(t->cloud, spec, &a);
	assert_string_equal(env_get(env, CLOUD_ENV_JOB_ID), "9");
	assert_null(json_object_get(env, CLOUD_ENV_CKPT_DIR));
	assert_null(json_object_get(env, CLOUD_ENV_RESUME));
	json_decref(env);
	json_decref(spec);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test_setup_teardown(test_cloud_resource_name,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cloud_request_id, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cloud_output_place, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cloud_output_place_none,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_cloud_env, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_cloud_env_no_place, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
