/*
 * test-storage.c: providers/gcp/storage.c against the simulated Cloud
 * Storage: the newest checkpoint by step number (folders and objects,
 * over many pages, with update times that disagree), by update time when
 * names carry no step, partial writes skipped, an empty directory, gs://
 * parsing and listing errors.
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
#include <time.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/storage.h"
#include "tests/unit/gcptest.h"

#define DIR	"gs://bkt/gpuq/42/checkpoints/"

struct t {
	struct unittest	*ut;		/* fake, conf, loop, http and auth */
	int		 calls, error;
	char		*uri, *cause;
	time_t		 updated;
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-storage");
	gcptest_fake(t->ut);
	if (t->ut->fake.pid <= 0)
		return 0;
	gcptest_http(t->ut);
	gcptest_auth(t->ut);
	/* Simulated time runs fast: uploads get distinct times. */
	json_decref(fake_post(&t->ut->fake, "/_fake/speed",
	    "{\"factor\":100}"));
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	unittest_free(t->ut);
	free(t->uri);
	free(t->cause);
	free(t);
	return 0;
}

static void
on_upload(const struct http_resp *r, void *arg)
{
	int	*ok = arg;

	*ok = r->status == 200;
}

/* Write one object through the JSON API's media upload. */
static void
put(struct t *t, const char *bucket, const char *name)
{
	struct http_req	 req = { .method = "POST", .body = "x",
	    .body_len = 1, .content_type = "application/octet-stream",
	    .flags = HTTP_AUTH | HTTP_IDEMPOTENT, .api = GCP_API_UPLOAD };
	char		*u;
	int		 ok = 0;

	u = gcp_url(t->ut->gcp, GCP_API_UPLOAD, NULL,
	    "b/%s/o?uploadType=media&name=%s", bucket, name);
	req.url = u;
	assert_int_equal(http_request_start(t->ut->http, &req, on_upload,
	    &ok), 0);
	unittest_run(t->ut);
	assert_true(ok);
	free(u);
}

static void
on_found(int error, const char *uri, time_t updated, const char *cause,
    void *arg)
{
	struct t	*t = arg;

	t->calls++;
	t->error = error;
	free(t->uri);
	free(t->cause);
	t->uri = uri != NULL ? xstrdup(uri) : NULL;
	t->cause = cause != NULL ? xstrdup(cause) : NULL;
	t->updated = updated;
}

static void
find(struct t *t, const char *dir)
{
	t->calls = 0;
	assert_int_equal(storage_newest_checkpoint(t->ut->http, t->ut->gcp, dir,
	    on_found, t), 0);
	assert_int_equal(t->calls, 0);
	unittest_run(t->ut);
	assert_int_equal(t->calls, 1);
}

static void
test_storage_parse_uri(void **state)
{
	char	*b, *p;

	(void)state;
	assert_int_equal(storage_parse_uri("gs://bkt/a/b", &b, &p), 0);
	assert_string_equal(b, "bkt");
	assert_string_equal(p, "a/b/");
	free(b);
	free(p);
	assert_int_equal(storage_parse_uri("gs://bkt/a/b/", &b, &p), 0);
	assert_string_equal(p, "a/b/");
	free(b);
	free(p);
	assert_int_equal(storage_parse_uri("gs://bkt", &b, &p), 0);
	assert_string_equal(b, "bkt");
	assert_string_equal(p, "");
	free(b);
	free(p);
	assert_int_equal(storage_parse_uri("gs://", &b, &p), -EINVAL);
	assert_int_equal(storage_parse_uri("s3://bkt/x", &b, &p), -EINVAL);
	assert_int_equal(storage_parse_uri(NULL, &b, &p), -EINVAL);
}

static void
test_storage_newest_by_step(void **state)
{
	struct t	*t = *state;
	json_t		*reqs;
	time_t		 now = time(NULL);

	NEED_FAKE(t->ut);
	http_set_page_size(t->ut->http, 2);
	/* Step 200 written first: update times disagree with steps. */
	put(t, "bkt", "gpuq/42/checkpoints/ckpt-00000200/model.pt");
	put(t, "bkt", "gpuq/42/checkpoints/ckpt-00000200/optimizer.pt");
	put(t, "bkt", "gpuq/42/checkpoints/ckpt-00000100/model.pt");
	put(t, "bkt", "gpuq/42/checkpoints/ckpt-00000050/model.pt");
	put(t, "bkt", "gpuq/42/checkpoints/ckpt-00000300.tmp");
	put(t, "bkt", "gpuq/42/checkpoints/.ckpt-00000400/model.pt");
	put(t, "bkt", "gpuq/42/checkpoints/");	/* a folder marker */
	put(t, "bkt", "gpuq/43/checkpoints/ckpt-00009999/model.pt");
	put(t, "bkt", "gpuq/42/checkpointsX/ckpt-00009999/model.pt");
	find(t, DIR);
	assert_int_equal(t->error, 0);
	assert_string_equal(t->uri, DIR "ckpt-00000200/");
	assert_true(t->updated >= now - 60);
	/* Seven objects under the prefix, two per page. */
	reqs = fake_requests(&t->ut->fake, "GET", "^/storage/v1/b/bkt/o$", 4);
	assert_int_equal(json_array_size(reqs), 4);
	json_decref(reqs);

	/* Plain objects with steps; the same directory without '/'. */
	put(t, "bkt", "runs/7/step-9.pt");
	put(t, "bkt", "runs/7/step-10.pt");
	put(t, "bkt", "runs/7/step-8.pt");
	find(t, "gs://bkt/runs/7");
	assert_string_equal(t->uri, "gs://bkt/runs/7/step-10.pt");
}

static void
test_storage_newest_by_time(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	put(t, "bkt", "job/ckpt/best.pt");
	put(t, "bkt", "job/ckpt/final/model.pt");
	put(t, "bkt", "job/ckpt/latest.pt");
	find(t, "gs://bkt/job/ckpt/");
	assert_int_equal(t->error, 0);
	assert_string_equal(t->uri, "gs://bkt/job/ckpt/latest.pt");
	put(t, "bkt", "job/ckpt/final/optimizer.pt");
	find(t, "gs://bkt/job/ckpt/");
	assert_string_equal(t->uri, "gs://bkt/job/ckpt/final/");
}

static void
test_storage_none(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	put(t, "bkt", "other/thing");
	find(t, "gs://bkt/gpuq/1/checkpoints/");
	assert_int_equal(t->error, 0);
	assert_null(t->uri);
	assert_int_equal(t->updated, 0);
	find(t, "gs://empty-bucket/x/");
	assert_int_equal(t->error, 0);
	assert_null(t->uri);
}

static void
test_storage_errors(void **state)
{
	struct t	*t = *state;

	NEED_FAKE(t->ut);
	assert_int_equal(storage_newest_checkpoint(t->ut->http, t->ut->gcp,
	    "/local/dir", on_found, t), -EINVAL);
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"^/storage/v1/b/nope/o$\",\"status\":404,\"count\":1}"));
	find(t, "gs://nope/x/");
	assert_int_equal(t->error, -ENOENT);
	assert_string_equal(t->cause, "listing gs://nope/x/ failed: HTTP 404 "
	    "NOT_FOUND: Injected fault");
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"^/storage/v1/b/secret/o$\",\"status\":403,\"count\":1}"));
	find(t, "gs://secret/x/");
	assert_int_equal(t->error, -EACCES);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_parse_uri),
		cmocka_unit_test_setup_teardown(test_storage_newest_by_step,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage_newest_by_time,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage_none, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_storage_errors, setup,
		    teardown),
	};

	log_init("test-storage", getenv("GPUQ_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARNING, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
