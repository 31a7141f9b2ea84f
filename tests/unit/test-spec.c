/*
 * test-spec.c: job spec validation (daemon/spec.c) against gpuq-job(5):
 * defaults, normalization, and every error with its exact field and
 * message; the region catalog and its hints (common/strdist.c), and
 * what gpuqd.conf adds (spec_site_check). No loop; one file read, the
 * bundled price table of the source tree.
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

#include "common/gpu.h"
#include "common/strdist.h"
#include "common/when.h"
#include "common/xmalloc.h"
#include "daemon/spec.h"

/* A valid spec's required part; tests append their own fields. */
#define BASE	"\"image\": \"img\", " \
		"\"accelerator\": {\"type\": \"nvidia-tesla-t4\", \"count\": 1}"
#define WITH(extra)	"{" BASE ", " extra "}"

#define KNOWN	"name, image, command, args, python_package, env, secret_env, " \
		"accelerator, machine_type, nodes, regions, providers, spot, " \
		"max_hourly_usd, " \
		"max_total_usd, estimated_hours, deadline, max_runtime, " \
		"pending_timeout, capacity, flex_wait, max_interruptions, " \
		"max_failures, " \
		"checkpoint, priority, labels, notify, array, after, " \
		"after_any, disk"

/* Parse TEXT; a typo in a test is a test bug. New object. */
static json_t *
parse(const char *text)
{
	json_error_t	 jerr;
	json_t		*j;

	j = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (j == NULL)
		fail_msg("bad test JSON: %s: %s", jerr.text, text);
	return j;
}

/* TEXT must validate; returns the normalized spec (new). */
static json_t *
ok(const char *text)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*in = parse(text), *out = NULL;
	int			 r;

	r = spec_validate(in, &out, &err);
	if (r != 0)
		fail_msg("rejected: %s: %s: %s", text, err.field, err.message);
	json_decref(in);
	assert_non_null(out);
	return out;
}

/* Compact dump of J in its key order. New string. */
static char *
dump(json_t *j)
{
	char	*s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_ENCODE_ANY);

	assert_non_null(s);
	return s;
}

/* TEXT must normalize to exactly WANT (compact JSON). */
static void
ok_as(const char *text, const char *want)
{
	json_t	*out = ok(text);
	char	*s = dump(out);

	assert_string_equal(s, want);
	free(s);
	json_decref(out);
}

/* The normalized KEY of TEXT must dump as WANT. */
static void
ok_field(const char *text, const char *key, const char *want)
{
	json_t	*out = ok(text), *v = json_object_get(out, key);
	char	*s;

	if (v == NULL)
		fail_msg("%s missing from the normalized spec of %s", key,
		    text);
	s = dump(v);
	assert_string_equal(s, want);
	free(s);
	json_decref(out);
}

/* The normalized spec of TEXT must not have KEY. */
static void
ok_absent(const char *text, const char *key)
{
	json_t	*out = ok(text);

	assert_null(json_object_get(out, key));
	json_decref(out);
}

/* TEXT must fail with exactly FIELD and MESSAGE; *ret untouched. */
static void
bad(const char *text, const char *field, const char *message)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*in = parse(text), *out = (json_t *)&err;
	int			 r;

	r = spec_validate(in, &out, &err);
	assert_int_equal(r, -EINVAL);
	assert_ptr_equal(out, (json_t *)&err);
	assert_non_null(err.field);
	assert_non_null(err.message);
	if (strcmp(err.field, field) != 0 || strcmp(err.message, message) != 0)
		fail_msg("%s\n want %s: %s\n got  %s: %s", text, field,
		    message, err.field, err.message);
	spec_error_done(&err);
	assert_null(err.field);
	assert_null(err.message);
	json_decref(in);
}

static void
test_spec_minimal_defaults(void **state)
{
	ok_as("{" BASE "}",
	    "{\"name\":\"job\",\"image\":\"img\",\"env\":{},"
	    "\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":1},"
	    "\"machine_type\":\"n1-highmem-4\",\"spot\":\"allow\","
	    "\"estimated_hours\":1.0,\"max_runtime\":604800,"
	    "\"max_interruptions\":20,\"max_failures\":0,"
	    "\"checkpoint\":{\"interval\":1800},\"priority\":0,"
	    "\"labels\":{}}");
}

static void
test_spec_full_spec(void **state)
{
	ok_as("{\"labels\": {\"team\": \"vision\", \"run\": \"r-1_a\"},"
	    " \"priority\": -5,"
	    " \"checkpoint\": {\"interval\": \"10m\","
	    "  \"uri\": \"gs://my-bucket/runs/resnet\"},"
	    " \"max_failures\": 2, \"max_interruptions\": 0,"
	    " \"max_runtime\": \"2h30m\", \"estimated_hours\": 3,"
	    " \"max_total_usd\": 50, \"max_hourly_usd\": 2.5,"
	    " \"spot\": \"require\", \"providers\": [\"gce\", \"batch\"],"
	    " \"regions\": [\"us-central1\", \"europe-west4\"],"
	    " \"machine_type\": \"n1-standard-16\","
	    " \"accelerator\": {\"count\": 2, \"type\": \"NVIDIA_TESLA_T4\"},"
	    " \"env\": {\"EPOCHS\": \"10\", \"_X1\": \"\"},"
	    " \"args\": [\"--epochs\", \"10\"],"
	    " \"command\": [\"python\", \"train.py\"],"
	    " \"image\": \"gcr.io/p/train:1\", \"name\": \"resnet-50.v2_a\"}",
	    "{\"name\":\"resnet-50.v2_a\",\"image\":\"gcr.io/p/train:1\","
	    "\"command\":[\"python\",\"train.py\"],"
	    "\"args\":[\"--epochs\",\"10\"],"
	    "\"env\":{\"EPOCHS\":\"10\",\"_X1\":\"\"},"
	    "\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":2},"
	    "\"machine_type\":\"n1-standard-16\","
	    "\"regions\":[\"us-central1\",\"europe-west4\"],"
	    "\"providers\":[\"gce\",\"batch\"],\"spot\":\"require\","
	    "\"max_hourly_usd\":2.5,\"max_total_usd\":50.0,"
	    "\"estimated_hours\":3.0,\"max_runtime\":9000,"
	    "\"max_interruptions\":0,\"max_failures\":2,"
	    "\"checkpoint\":{\"uri\":\"gs://my-bucket/runs/resnet/\","
	    "\"interval\":600},\"priority\":-5,"
	    "\"labels\":{\"team\":\"vision\",\"run\":\"r-1_a\"}}");
}

static void
test_spec_normalized_is_fixed_point(void **state)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*once, *twice = NULL;
	char			*a, *b;

	once = ok(WITH("\"checkpoint\": {\"uri\": \"gs://b-1/x\"},"
	    " \"max_runtime\": \"1d\", \"regions\": [\"us-east1\"]"));
	assert_int_equal(spec_validate(once, &twice, &err), 0);
	a = dump(once);
	b = dump(twice);
	assert_string_equal(a, b);
	assert_ptr_not_equal(once, twice);
	free(a);
	free(b);
	json_decref(once);
	json_decref(twice);
}

static void
test_spec_gpu_spellings(void **state)
{
	const char	*spellings[] = { "nvidia-tesla-t4", "NVIDIA_TESLA_T4",
	    "Nvidia-Tesla-T4", "nvidia_tesla_t4" };
	char		*text;
	size_t		 i;

	for (i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
		text = xprintf("{\"image\": \"i\", \"accelerator\": "
		    "{\"type\": \"%s\", \"count\": 4}}", spellings[i]);
		ok_field(text, "accelerator",
		    "{\"type\":\"nvidia-tesla-t4\",\"count\":4}");
		free(text);
	}
	ok_field("{\"image\": \"i\", \"accelerator\": "
	    "{\"type\": \"NVIDIA_A100_80GB\", \"count\": 8}}", "accelerator",
	    "{\"type\":\"nvidia-a100-80gb\",\"count\":8}");
}

static void
test_spec_not_object(void **state)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*out = NULL;

	bad("[1, 2]", "",
	    "a job spec must be an object (a YAML mapping) of fields, "
	    "not a list");
	bad("\"train.yaml\"", "",
	    "a job spec must be an object (a YAML mapping) of fields, "
	    "not a string");
	assert_int_equal(spec_validate(NULL, &out, &err), -EINVAL);
	assert_null(out);
	assert_string_equal(err.field, "");
	spec_error_done(&err);
	spec_error_done(&err);		/* twice, and zeroed, is fine */
	spec_error_done(NULL);
}

/* disk: {size_gb, type} of the boot disk, only when given. */
static void
test_spec_disk(void **state)
{
	(void)state;
	ok_absent("{" BASE "}", "disk");
	ok_field("{" BASE ", \"disk\": {\"size_gb\": 500, \"type\": "
	    "\"pd-ssd\"}}", "disk", "{\"size_gb\":500,\"type\":\"pd-ssd\"}");
	ok_field("{" BASE ", \"disk\": {\"type\": \"hyperdisk-balanced\"}}",
	    "disk", "{\"type\":\"hyperdisk-balanced\"}");
	bad("{" BASE ", \"disk\": {\"size_gb\": 20}}", "disk.size_gb",
	    "must be between 100 and 64000");
	bad("{" BASE ", \"disk\": {\"size_gb\": \"500\"}}", "disk.size_gb",
	    "must be an integer, not a string; remove the quotes");
	bad("{" BASE ", \"disk\": {\"type\": \"pd-balanced\"}}", "disk.type",
	    "must be pd-ssd, pd-standard or hyperdisk-balanced, the boot "
	    "disk types every service takes");
	bad("{" BASE ", \"disk\": {\"size\": 1}}", "disk.size",
	    "unknown field; known fields are: size_gb, type");
	bad("{" BASE ", \"disk\": 500}", "disk",
	    "must be an object such as {size_gb: 500, type: pd-ssd}, not a "
	    "number");
}

static void
test_spec_unknown_top_level(void **state)
{
	bad("{" BASE ", \"gpus\": 2}", "gpus",
	    "unknown field; known fields are: " KNOWN);
}

static void
test_spec_unknown_nested(void **state)
{
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": \"nvidia-l4\","
	    " \"count\": 1, \"zone\": \"us-central1-a\"}}", "accelerator.zone",
	    "unknown field; known fields are: type, count");
	bad(WITH("\"checkpoint\": {\"every\": \"10m\"}"), "checkpoint.every",
	    "unknown field; known fields are: uri, interval");
}

static void
test_spec_unknown_empty_key(void **state)
{
	bad("{" BASE ", \"\": 1}", "\"\"",
	    "unknown field; known fields are: " KNOWN);
}

static void
test_spec_unknown_before_other_errors(void **state)
{
	/* The typo is the real problem, not the "missing" accelerator. */
	bad("{\"image\": \"i\", \"acelerator\": {}}", "acelerator",
	    "unknown field; known fields are: " KNOWN);
}

static void
test_spec_first_error_in_field_order(void **state)
{
	/* labels, priority and image are all wrong: image comes first. */
	bad("{\"labels\": 1, \"priority\": 5000, \"image\": 7, "
	    "\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 1}}",
	    "image", "must be a string; quote it");
	bad(WITH("\"labels\": 1, \"priority\": 5000"), "priority",
	    "must be between -1000 and 1000");
}

static void
test_spec_missing_image(void **state)
{
	bad("{\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 1}}",
	    "image", "required: the container image to run, "
	    "e.g. us-docker.pkg.dev/my-project/train/resnet:1.0");
}

static void
test_spec_bad_image(void **state)
{
	bad("{\"image\": {}, \"accelerator\": {}}", "image",
	    "must be a string, not an object");
	bad("{\"image\": \"\", \"accelerator\": {}}", "image",
	    "must not be empty");
	bad("{\"image\": \"gcr.io/p/t:1 --gpus\", \"accelerator\": {}}",
	    "image", "must not contain whitespace; it is one image URI "
	    "such as gcr.io/my-project/train:latest");
}

static void
test_spec_image_too_long(void **state)
{
	char	*long_image, *text, *name, *image;
	json_t	*out;

	long_image = xmalloc(1026);
	memset(long_image, 'a', 1025);
	long_image[1025] = '\0';
	text = xprintf("{\"image\": \"%s\"}", long_image);
	bad(text, "image", "must be at most 1024 characters long");
	free(text);
	/* The name (before the tag) is at most 255 characters. */
	long_image[256] = '\0';
	text = xprintf("{\"image\": \"%s\"}", long_image);
	bad(text, "image", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "...\" is not an image reference: the name before the tag is at "
	    "most 255 characters; write registry/path[:tag][@sha256:digest], "
	    "e.g. us-docker.pkg.dev/my-project/train/resnet:1.0");
	free(text);
	/* The longest reference: a 255 name, a 128 tag and a digest. */
	long_image[255] = '\0';
	name = xstrdup(long_image);
	long_image[128] = '\0';
	image = xprintf("%s:%s@sha256:%064d", name, long_image, 0);
	text = xprintf("{\"image\": \"%s\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": 1}}", image);
	out = ok(text);
	assert_string_equal(json_string_value(json_object_get(out, "image")),
	    image);
	json_decref(out);
	free(text);
	free(image);
	free(name);
	free(long_image);
}

/* IMAGE must be accepted as it is. */
static void
image_ok(const char *image)
{
	char	*text;
	json_t	*out;

	text = xprintf("{\"image\": \"%s\", \"accelerator\": {\"type\": "
	    "\"nvidia-tesla-t4\", \"count\": 1}}", image);
	out = ok(text);
	assert_string_equal(json_string_value(json_object_get(out, "image")),
	    image);
	json_decref(out);
	free(text);
}

/* IMAGE must be refused with the rule RULE (the middle of the message). */
static void
image_bad(const char *image, const char *rule)
{
	char	*text, *want;

	text = xprintf("{\"image\": \"%s\"}", image);
	want = xprintf("\"%s\" is not an image reference: %s; write "
	    "registry/path[:tag][@sha256:digest], e.g. "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0", image, rule);
	bad(text, "image", want);
	free(want);
	free(text);
}

static void
test_spec_image_reference(void **state)
{
	const char	*path = "each part of the path is lowercase letters "
	    "and digits, joined by '.', '_', '__' or dashes";
	const char	*tag = "a tag holds only letters, digits, '_', '.' "
	    "and '-'";
	const char	*tag1 = "a tag is 1 to 128 letters, digits, '_', '.' "
	    "and '-', not starting with '.' or '-'";
	const char	*reg = "the registry is a host name (letters, digits, "
	    "'-' and '.') with an optional :port";
	const char	*dig = "a digest is @sha256: and 64 hexadecimal digits";
	char		*s;

	image_ok("img");
	image_ok("ubuntu:22.04");
	image_ok("library/ubuntu");
	image_ok("us-docker.pkg.dev/my-project/train/resnet:1.0");
	image_ok("gcr.io/p/a__b/c.d/e---f_g:V1_x.y-z");
	image_ok("localhost:5000/train:latest");
	image_ok("localhost/train");
	image_ok("Registry.Example.com:443/x");
	s = xprintf("gcr.io/p/t@sha256:%s", "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef");
	image_ok(s);
	free(s);
	s = xprintf("gcr.io/p/t:1@sha256:%064d", 7);
	image_ok(s);
	free(s);

	bad("{\"image\": \"--privileged\"}", "image", "\"--privileged\" "
	    "starts with '-': an image is a name such as "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0, never an option");
	bad("{\"image\": \"-v/:/host\"}", "image", "\"-v/:/host\" starts "
	    "with '-': an image is a name such as "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0, never an option");
	bad("{\"image\": \"-e\"}", "image", "\"-e\" starts with '-': an "
	    "image is a name such as "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0, never an option");
	bad("{\"image\": \"--network=host\"}", "image", "\"--network=host\" "
	    "starts with '-': an image is a name such as "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0, never an option");
	image_bad("gcr.io/p/Train:1", path);
	image_bad("gcr.io/p/-x", path);
	image_bad("gcr.io/p/x-", path);
	image_bad("gcr.io/p/a___b", path);
	image_bad("gcr.io/p//x", path);
	image_bad("gcr.io/", path);
	image_bad("a/$(id)", path);
	image_bad("a;b", path);
	image_bad("x:1:2", path);	/* "2" is the tag, "x:1" the path */
	image_bad("x:a$b", tag);
	image_bad("x:", tag1);
	image_bad("x:.a", tag1);
	image_bad("x:-a", tag1);
	image_bad("ex-.com/x", reg);
	image_bad("ex..com/x", reg);
	image_bad("ex.com:80x/x", reg);
	image_bad("ex.com:/x", reg);
	image_bad("x@sha256:abc", dig);
	image_bad("x@md5:0123456789abcdef0123456789abcdef", dig);
	bad("{\"image\": \"x@sha256:0123456789ABCDEF0123456789abcdef"
	    "0123456789abcdef0123456789abcdef\"}", "image",
	    "\"x@sha256:0123456789ABCDEF0123456789abcdef0123456...\" is not "
	    "an image reference: a digest is @sha256: and 64 lowercase "
	    "hexadecimal digits; write registry/path[:tag][@sha256:digest], "
	    "e.g. us-docker.pkg.dev/my-project/train/resnet:1.0");
	/* A 129-character tag (the message quotes 48 bytes of it). */
	s = xprintf("{\"image\": \"x:%0129d\"}", 0);
	bad(s, "image", "\"x:0000000000000000000000000000000000000000000000"
	    "...\" is not an image reference: a tag is 1 to 128 letters, "
	    "digits, '_', '.' and '-', not starting with '.' or '-'; write "
	    "registry/path[:tag][@sha256:digest], e.g. "
	    "us-docker.pkg.dev/my-project/train/resnet:1.0");
	free(s);
}

static void
test_spec_missing_accelerator(void **state)
{
	bad("{\"image\": \"i\"}", "accelerator",
	    "required: the GPUs to run on, "
	    "e.g. {type: nvidia-tesla-t4, count: 1}");
	bad("{\"image\": \"i\", \"accelerator\": {\"count\": 1}}",
	    "accelerator.type", "required: the GPU type, e.g. "
	    "nvidia-tesla-t4");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": \"nvidia-l4\"}}",
	    "accelerator.count", "required: how many GPUs per machine, "
	    "e.g. 1");
}

static void
test_spec_accelerator_wrong_type(void **state)
{
	bad("{\"image\": \"i\", \"accelerator\": \"nvidia-l4\"}",
	    "accelerator", "must be an object with type and count, "
	    "not a string");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": 4, "
	    "\"count\": 1}}", "accelerator.type",
	    "must be a string; quote it");
}

static void
test_spec_unknown_gpu(void **state)
{
	char	*names = gpu_names_text(), *want;

	want = xprintf("unknown GPU type \"nvidia-tesla-k80\"; known types "
	    "are: %s", names);
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-tesla-k80\", \"count\": 1}}", "accelerator.type", want);
	assert_non_null(strstr(want, "nvidia-tesla-t4, nvidia-l4, "));
	free(want);
	free(names);
}

static void
test_spec_count_not_offered(void **state)
{
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-tesla-t4\", \"count\": 3}}", "accelerator.count",
	    "3 is not offered for nvidia-tesla-t4; use 1, 2 or 4");
	/* The message names the stored spelling, whatever was typed. */
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"NVIDIA_TESLA_T4\", \"count\": 0}}", "accelerator.count",
	    "0 is not offered for nvidia-tesla-t4; use 1, 2 or 4");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-h200-141gb\", \"count\": -8}}", "accelerator.count",
	    "-8 is not offered for nvidia-h200-141gb; use 8");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-tesla-a100\", \"count\": 4294967297}}",
	    "accelerator.count", "4294967297 is not offered for "
	    "nvidia-tesla-a100; use 1, 2, 4, 8 or 16");
}

static void
test_spec_count_not_integer(void **state)
{
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": 2.0}}", "accelerator.count",
	    "must be a whole number");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": 1.5}}", "accelerator.count",
	    "must be a whole number");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": \"2\"}}", "accelerator.count",
	    "must be an integer, not a string; remove the quotes");
	bad("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": true}}", "accelerator.count",
	    "must be an integer, not true/false");
}

static void
test_spec_name(void **state)
{
	char	*text;

	ok_field(WITH("\"name\": \"A.b_c-9\""), "name", "\"A.b_c-9\"");
	bad(WITH("\"name\": \"\""), "name", "must be 1 to 63 characters long");
	text = xprintf(WITH("\"name\": \"%064d\""), 0);
	bad(text, "name", "must be 1 to 63 characters long");
	free(text);
	bad(WITH("\"name\": \"my job\""), "name",
	    "may hold only letters, digits, '.', '_' and '-'");
	bad(WITH("\"name\": \"r\\u00e9sum\\u00e9\""), "name",
	    "may hold only letters, digits, '.', '_' and '-'");
	bad(WITH("\"name\": 42"), "name", "must be a string; quote it");
	bad(WITH("\"name\": null"), "name",
	    "must be a string, not null (empty)");
}

static void
test_spec_command_and_args(void **state)
{
	ok_field(WITH("\"command\": [\"torchrun\", \"--nproc_per_node=2\"]"),
	    "command", "[\"torchrun\",\"--nproc_per_node=2\"]");
	ok_field(WITH("\"args\": []"), "args", "[]");
	ok_absent("{" BASE "}", "command");
	ok_absent("{" BASE "}", "args");
}

static void
test_spec_command_string(void **state)
{
	bad(WITH("\"command\": \"python train.py\""), "command",
	    "must be a list of strings, not a string; write it as a list, "
	    "e.g. [\"python\", \"train.py\", \"--epochs\", \"10\"]");
	bad(WITH("\"args\": \"--epochs 10\""), "args",
	    "must be a list of strings, not a string; write it as a list, "
	    "e.g. [\"python\", \"train.py\", \"--epochs\", \"10\"]");
}

static void
test_spec_command_bad_items(void **state)
{
	bad(WITH("\"command\": []"), "command",
	    "must not be empty; leave it out to run the image's ENTRYPOINT");
	bad(WITH("\"args\": [\"--epochs\", 10]"), "args[1]",
	    "must be a string; quote it");
	bad(WITH("\"command\": [\"python\", [\"x\"]]"), "command[1]",
	    "must be a string, not a list");
	bad(WITH("\"args\": {\"epochs\": 1}"), "args",
	    "must be a list of strings, not an object");
}

static void
test_spec_env(void **state)
{
	ok_field(WITH("\"env\": {\"NCCL_DEBUG\": \"INFO\", \"a_1\": \"x y\"}"),
	    "env", "{\"NCCL_DEBUG\":\"INFO\",\"a_1\":\"x y\"}");
	bad(WITH("\"env\": [\"A=1\"]"), "env",
	    "must be an object of NAME: value pairs, not a list");
}

static void
test_spec_env_reserved(void **state)
{
	bad(WITH("\"env\": {\"OK\": \"1\", \"GPUQ_JOB_ID\": \"7\"}"),
	    "env.GPUQ_JOB_ID", "names starting with GPUQ_ or AIP_ are "
	    "reserved: gpuq and Vertex AI set them (see gpuq-job(5))");
	bad(WITH("\"env\": {\"AIP_CHECKPOINT_DIR\": \"gs://b/c\"}"),
	    "env.AIP_CHECKPOINT_DIR", "names starting with GPUQ_ or AIP_ "
	    "are reserved: gpuq and Vertex AI set them (see gpuq-job(5))");
}

static void
test_spec_env_bad_names(void **state)
{
	bad(WITH("\"env\": {\"1X\": \"1\"}"), "env.1X",
	    "\"1X\" is not a variable name: use letters, digits and '_', "
	    "not starting with a digit");
	bad(WITH("\"env\": {\"LR-RATE\": \"1\"}"), "env.LR-RATE",
	    "\"LR-RATE\" is not a variable name: use letters, digits and "
	    "'_', not starting with a digit");
	bad(WITH("\"env\": {\"\": \"1\"}"), "env.",
	    "variable names must not be empty");
	bad(WITH("\"env\": {\"\u00c9T\u00c9\": \"1\"}"), "env.\u00c9T\u00c9",
	    "\"\u00c9T\u00c9\" is not a variable name: use letters, digits "
	    "and '_', not starting with a digit");
}

static void
test_spec_env_values_are_strings(void **state)
{
	bad(WITH("\"env\": {\"EPOCHS\": 10}"), "env.EPOCHS",
	    "must be a string; quote it");
	bad(WITH("\"env\": {\"DEBUG\": true}"), "env.DEBUG",
	    "must be a string; quote it");
	bad(WITH("\"env\": {\"X\": null}"), "env.X",
	    "must be a string, not null (empty)");
}

static void
test_spec_env_too_many(void **state)
{
	char	*text = xstrdup("{" BASE ", \"env\": {"), *t;
	int	 i;

	for (i = 0; i < 101; i++) {
		t = xprintf("%s%s\"V%d\": \"x\"", text, i ? ", " : "", i);
		free(text);
		text = t;
	}
	t = xprintf("%s}}", text);
	bad(t, "env", "has 101 variables; at most 100 are allowed");
	free(t);
	free(text);
}

static void
test_spec_secret_env(void **state)
{
	const char	*want = "is not a secret version; write "
	    "projects/PROJECT/secrets/SECRET/versions/VERSION (VERSION a "
	    "number or latest)";
	const char	*bads[] = {
		"hf_abc",
		"projects/my-project/secrets/hf",
		"projects/my-project/secrets/hf/versions/",
		"projects/my-project/secrets/hf/versions/0",
		"projects/my-project/secrets/hf/versions/v1",
		"projects/p/secrets/hf/versions/1",		/* too short */
		"projects/My-project/secrets/hf/versions/1",
		"projects/my-project-/secrets/hf/versions/1",
		"projects/my-project/secrets/h.f/versions/1",
		"projects/my-project/secrets//versions/1",
		"projects/my-project/secrets/hf/versions/1/x",
		"projects/my-project/secrets/hf/versions/1 ",
		"projects//secrets/hf/versions/1",
	};
	char		*text, *msg;
	size_t		 i;

	ok_absent(WITH("\"env\": {}"), "secret_env");
	ok_field(WITH("\"secret_env\": {\"HF_TOKEN\": "
	    "\"projects/my-project/secrets/hf/versions/latest\", \"K\": "
	    "\"projects/123456789/secrets/Wandb_key-2/versions/17\"}"),
	    "secret_env", "{\"HF_TOKEN\":\"projects/my-project/secrets/hf/"
	    "versions/latest\",\"K\":\"projects/123456789/secrets/"
	    "Wandb_key-2/versions/17\"}");
	for (i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		text = xprintf(WITH("\"secret_env\": {\"T\": \"%s\"}"),
		    bads[i]);
		msg = xprintf("\"%s\" %s", bads[i], want);
		bad(text, "secret_env.T", msg);
		free(msg);
		free(text);
	}
	bad(WITH("\"secret_env\": [\"x\"]"), "secret_env",
	    "must be an object of NAME: projects/P/secrets/S/versions/V "
	    "pairs, not a list");
	bad(WITH("\"secret_env\": {\"1X\": \"x\"}"), "secret_env.1X",
	    "\"1X\" is not a variable name: use letters, digits and '_', "
	    "not starting with a digit");
	bad(WITH("\"secret_env\": {\"GPUQ_X\": \"x\"}"),
	    "secret_env.GPUQ_X", "names starting with GPUQ_ or AIP_ are "
	    "reserved: gpuq and Vertex AI set them (see gpuq-job(5))");
	bad(WITH("\"env\": {\"T\": \"v\"}, \"secret_env\": {\"T\": "
	    "\"projects/my-project/secrets/hf/versions/1\"}"),
	    "secret_env.T", "is also set in env; give it in one of them");
	bad(WITH("\"secret_env\": {\"T\": 5}"), "secret_env.T",
	    "must be a string; quote it");
}

static void
test_spec_machine_type_default(void **state)
{
	ok_field("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-l4\", \"count\": 2}}", "machine_type",
	    "\"g2-standard-24\"");
	ok_field("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-tesla-a100\", \"count\": 16}}", "machine_type",
	    "\"a2-megagpu-16g\"");
	ok_field("{\"image\": \"i\", \"accelerator\": {\"type\": "
	    "\"nvidia-b200\", \"count\": 8}}", "machine_type",
	    "\"a4-highgpu-8g\"");
}

static void
test_spec_machine_type_given(void **state)
{
	ok_field(WITH("\"machine_type\": \"n1-highcpu-32\""), "machine_type",
	    "\"n1-highcpu-32\"");
	ok_field(WITH("\"machine_type\": \"custom-8-30720\""), "machine_type",
	    "\"custom-8-30720\"");
	ok_field("{\"image\": \"i\", \"machine_type\": \"g2-standard-16\", "
	    "\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 1}}",
	    "machine_type", "\"g2-standard-16\"");
	ok_field("{\"image\": \"i\", \"machine_type\": \"a3-highgpu-8g\", "
	    "\"accelerator\": {\"type\": \"nvidia-h100-80gb\", "
	    "\"count\": 8}}", "machine_type", "\"a3-highgpu-8g\"");
}

static void
test_spec_machine_type_family(void **state)
{
	bad("{\"image\": \"i\", \"machine_type\": \"n1-standard-8\", "
	    "\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 1}}",
	    "machine_type", "nvidia-l4 runs on g2-standard-* machine types, "
	    "not \"n1-standard-8\"; leave machine_type out to get "
	    "g2-standard-4");
	bad(WITH("\"machine_type\": \"a2-highgpu-1g\""), "machine_type",
	    "nvidia-tesla-t4 runs on n1-* machine types, not "
	    "\"a2-highgpu-1g\"; leave machine_type out to get n1-highmem-4");
	bad("{\"image\": \"i\", \"machine_type\": \"a2-ultragpu-1g\", "
	    "\"accelerator\": {\"type\": \"nvidia-tesla-a100\", "
	    "\"count\": 1}}", "machine_type", "nvidia-tesla-a100 runs on "
	    "a2-highgpu-* or a2-megagpu-* machine types, not "
	    "\"a2-ultragpu-1g\"; leave machine_type out to get "
	    "a2-highgpu-1g");
	bad("{\"image\": \"i\", \"machine_type\": \"a3-highgpu-8g\", "
	    "\"accelerator\": {\"type\": \"nvidia-h100-mega-80gb\", "
	    "\"count\": 8}}", "machine_type", "nvidia-h100-mega-80gb runs "
	    "on a3-megagpu-* machine types, not \"a3-highgpu-8g\"; leave "
	    "machine_type out to get a3-megagpu-8g");
}

static void
test_spec_machine_type_count(void **state)
{
	bad("{\"image\": \"i\", \"machine_type\": \"a2-highgpu-1g\", "
	    "\"accelerator\": {\"type\": \"nvidia-tesla-a100\", "
	    "\"count\": 2}}", "machine_type",
	    "\"a2-highgpu-1g\" does not come with 2 nvidia-tesla-a100; "
	    "use a2-highgpu-2g");
	bad("{\"image\": \"i\", \"machine_type\": \"g2-standard-8\", "
	    "\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 2}}",
	    "machine_type", "\"g2-standard-8\" does not come with 2 "
	    "nvidia-l4; use g2-standard-24");
}

static void
test_spec_machine_type_garbage(void **state)
{
	bad(WITH("\"machine_type\": \"banana\""), "machine_type",
	    "\"banana\" is not a machine type; for 1 nvidia-tesla-t4 use "
	    "e.g. n1-highmem-4, or leave machine_type out");
	bad(WITH("\"machine_type\": \"N1-STANDARD-8\""), "machine_type",
	    "\"N1-STANDARD-8\" is not a machine type; for 1 nvidia-tesla-t4 "
	    "use e.g. n1-highmem-4, or leave machine_type out");
	bad(WITH("\"machine_type\": 8"), "machine_type",
	    "must be a string; quote it");
}

static void
test_spec_regions(void **state)
{
	ok_field(WITH("\"regions\": [\"northamerica-northeast1\"]"),
	    "regions", "[\"northamerica-northeast1\"]");
	ok_absent("{" BASE "}", "regions");
	bad(WITH("\"regions\": \"us-east1\""), "regions",
	    "must be a list of regions, not a string; write [us-east1]");
	bad(WITH("\"regions\": []"), "regions",
	    "must not be empty; leave it out to allow every configured "
	    "region");
	bad(WITH("\"regions\": {}"), "regions",
	    "must be a list, not an object");
}

static void
test_spec_regions_bad_items(void **state)
{
	bad(WITH("\"regions\": [\"us-east1\", \"us-west4\", \"US-EAST4\"]"),
	    "regions[2]", "\"US-EAST4\" is not a region name; regions look "
	    "like us-central1");
	bad(WITH("\"regions\": [\"us-central1-a\"]"), "regions[0]",
	    "\"us-central1-a\" is a zone; list its region us-central1 "
	    "instead (gpuq picks the zone)");
	bad(WITH("\"regions\": [\"us-east1\", \"us-east1\"]"), "regions[1]",
	    "\"us-east1\" is listed twice");
	bad(WITH("\"regions\": [\"us\"]"), "regions[0]",
	    "\"us\" is not a region name; regions look like us-central1");
	bad(WITH("\"regions\": [1]"), "regions[0]",
	    "must be a string; quote it");
}

static void
test_spec_regions_too_many(void **state)
{
	char	*text = xstrdup("{" BASE ", \"regions\": ["), *t;
	int	 i;

	for (i = 0; i < 101; i++) {
		t = xprintf("%s%s\"aa-bb%d\"", text, i ? ", " : "", i);
		free(text);
		text = t;
	}
	t = xprintf("%s]}", text);
	bad(t, "regions", "has 101 items; at most 100 are allowed");
	free(t);
	free(text);
}

static void
test_spec_providers(void **state)
{
	ok_field(WITH("\"providers\": [\"vertex\"]"), "providers",
	    "[\"vertex\"]");
	ok_absent("{" BASE "}", "providers");
	bad(WITH("\"providers\": [\"gce\", \"ec2\"]"), "providers[1]",
	    "unknown provider \"ec2\"; use vertex, batch, gce");
	bad(WITH("\"providers\": [\"batch\", \"vertex\", \"batch\"]"),
	    "providers[2]", "\"batch\" is listed twice");
	bad(WITH("\"providers\": []"), "providers",
	    "must not be empty; leave it out to allow every configured "
	    "provider");
	bad(WITH("\"providers\": \"gce\""), "providers",
	    "must be a list of providers, not a string; write [gce]");
}

static void
test_spec_spot(void **state)
{
	ok_field(WITH("\"spot\": \"never\""), "spot", "\"never\"");
	ok_field(WITH("\"spot\": \"require\""), "spot", "\"require\"");
	bad(WITH("\"spot\": \"sometimes\""), "spot",
	    "must be never, allow or require");
	bad(WITH("\"spot\": \"Allow\""), "spot",
	    "must be never, allow or require");
	bad(WITH("\"spot\": true"), "spot",
	    "must be never, allow or require, not true/false");
}

/* capacity: and spot: (doc/DESIGN.md "Capacity kinds"). */
static void
test_spec_capacity(void **state)
{
	(void)state;
	ok_field(WITH("\"capacity\": [\"standard\", \"flex\"]"), "capacity",
	    "[\"flex\",\"standard\"]");
	/* capacity alone sets the spot: that says the same. */
	ok_field(WITH("\"capacity\": [\"standard\", \"flex\"]"), "spot",
	    "\"never\"");
	ok_field(WITH("\"capacity\": [\"spot\"]"), "spot", "\"require\"");
	ok_field(WITH("\"capacity\": \"flex\""), "capacity", "[\"flex\"]");
	ok_field(WITH("\"capacity\": [\"spot\", \"flex\"]"), "spot",
	    "\"allow\"");
	/* Old files: no capacity in the normalized spec. */
	ok_absent(WITH("\"spot\": \"never\""), "capacity");
	/* Both, agreeing. */
	ok_field(WITH("\"spot\": \"never\", \"capacity\": [\"flex\"]"),
	    "capacity", "[\"flex\"]");
	ok_field(WITH("\"spot\": \"require\", \"capacity\": [\"spot\"]"),
	    "spot", "\"require\"");
	bad(WITH("\"spot\": \"never\", \"capacity\": [\"spot\", \"flex\"]"),
	    "capacity", "disagrees with spot: never (capacity says spot: "
	    "allow); give only capacity");
	bad(WITH("\"spot\": \"require\", \"capacity\": [\"spot\", "
	    "\"standard\"]"), "capacity", "disagrees with spot: require "
	    "(capacity says spot: allow); give only capacity");
	bad(WITH("\"spot\": \"allow\", \"capacity\": [\"flex\"]"),
	    "capacity", "disagrees with spot: allow (capacity says spot: "
	    "never); give only capacity");
	bad(WITH("\"capacity\": [\"preemptible\"]"), "capacity",
	    "\"preemptible\" is not a kind of capacity; use spot, flex, "
	    "reserved, standard");
	bad(WITH("\"capacity\": []"), "capacity", "lists no kind; use some "
	    "of spot, flex, reserved, standard, or leave capacity out to "
	    "allow all");
	bad(WITH("\"capacity\": 3"), "capacity", "must be a list of kinds "
	    "such as [flex, standard], not a number");
	bad(WITH("\"capacity\": [\"flex\"], \"max_runtime\": \"8d\""),
	    "capacity", "allows only flex, which runs at most 7 days; set "
	    "max_runtime to 7d or less, or allow another kind");
	/* flex_wait: 60 s to 2 h. */
	ok_absent("{" BASE "}", "flex_wait");
	ok_field(WITH("\"flex_wait\": \"30m\""), "flex_wait", "1800");
	bad(WITH("\"flex_wait\": \"3h\""), "flex_wait", "may be at most "
	    "2h: Google keeps a flex-start request queued no longer");
}

static void
test_spec_usd_limits(void **state)
{
	ok_field(WITH("\"max_hourly_usd\": 3"), "max_hourly_usd", "3.0");
	ok_field(WITH("\"max_total_usd\": 0.5"), "max_total_usd", "0.5");
	ok_absent("{" BASE "}", "max_hourly_usd");
	ok_absent("{" BASE "}", "max_total_usd");
	bad(WITH("\"max_hourly_usd\": 0"), "max_hourly_usd",
	    "must be greater than 0");
	bad(WITH("\"max_total_usd\": -1.5"), "max_total_usd",
	    "must be greater than 0");
	bad(WITH("\"max_total_usd\": \"100\""), "max_total_usd",
	    "must be a number, not a string; remove the quotes");
	bad(WITH("\"max_hourly_usd\": \"$3\""), "max_hourly_usd",
	    "must be a number, not a string");
}

static void
test_spec_estimated_hours(void **state)
{
	ok_field(WITH("\"estimated_hours\": 0.25"), "estimated_hours",
	    "0.25");
	ok_field(WITH("\"estimated_hours\": 8760"), "estimated_hours",
	    "8760.0");
	bad(WITH("\"estimated_hours\": 8761"), "estimated_hours",
	    "must be at most 8760");
	bad(WITH("\"estimated_hours\": 0"), "estimated_hours",
	    "must be greater than 0");
	bad(WITH("\"estimated_hours\": []"), "estimated_hours",
	    "must be a number, not a list");
}

/*
 * deadline: absolute with Z or a zone offset, or a duration after now;
 * kept as UTC; needs estimated_hours that fit (doc/DESIGN.md
 * "Deadlines").
 */
static void
test_spec_deadline(void **state)
{
	json_t		*out;
	int64_t		 t, now;
	char		 want[64];
	struct spec_error err = { NULL, NULL };
	json_t		*again;

	(void)state;
	ok_field(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2099-12-01T09:00:00Z\""), "deadline",
	    "\"2099-12-01T09:00:00Z\"");
	/* A zone offset becomes UTC; a fraction of a second is dropped. */
	ok_field(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2099-12-01T09:00:00.5+01:30\""), "deadline",
	    "\"2099-12-01T07:30:00Z\"");
	ok_field(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2099-03-01T00:30:00-01:00\""), "deadline",
	    "\"2099-03-01T01:30:00Z\"");
	/* A duration is after now, the submit. */
	now = time(NULL);
	out = ok(WITH("\"estimated_hours\": 2, \"deadline\": \"36h\""));
	assert_int_equal(when_parse(json_string_value(json_object_get(out,
	    "deadline")), &t), 0);
	assert_true(t >= now + 36 * 3600 && t <= time(NULL) + 36 * 3600);
	/* The normalized spec validates to itself: the time stays put. */
	assert_int_equal(spec_validate(out, &again, &err), 0);
	assert_string_equal(json_string_value(json_object_get(again,
	    "deadline")), json_string_value(json_object_get(out,
	    "deadline")));
	json_decref(again);
	json_decref(out);
	ok_absent("{" BASE "}", "deadline");

	bad(WITH("\"deadline\": \"36h\""), "deadline", "needs "
	    "estimated_hours: a deadline is met by knowing how much work is "
	    "left; add estimated_hours (the job's running time, in hours)");
	bad(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2099-12-01T09:00:00\""), "deadline", "\"2099-12-01T09:00:00\" "
	    "is neither a time nor a duration; write e.g. "
	    "2026-12-01T09:00:00Z, 2026-12-01T09:00:00+01:00 (a time needs "
	    "its zone) or 36h after the submit");
	bad(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2099-02-29T09:00:00Z\""), "deadline", "\"2099-02-29T09:00:00Z\" "
	    "is neither a time nor a duration; write e.g. "
	    "2026-12-01T09:00:00Z, 2026-12-01T09:00:00+01:00 (a time needs "
	    "its zone) or 36h after the submit");
	bad(WITH("\"estimated_hours\": 2, \"deadline\": 36"), "deadline",
	    "must be a time such as \"2026-12-01T09:00:00Z\" or a duration "
	    "such as \"36h\", not a number");
	bad(WITH("\"estimated_hours\": 2, \"deadline\": "
	    "\"2001-01-01T00:00:00Z\""), "deadline", "2001-01-01T00:00:00Z "
	    "has already passed; give a later time");
	/* 36 hours of work do not fit in 24: both figures and the fix. */
	out = ok(WITH("\"estimated_hours\": 1"));
	json_decref(out);
	{
		struct spec_error	 e = { NULL, NULL };
		json_t			*in = parse(WITH("\"estimated_hours\": "
		    "36, \"deadline\": \"24h\""));
		json_t			*o = NULL;

		assert_int_equal(spec_validate(in, &o, &e), -EINVAL);
		assert_string_equal(e.field, "deadline");
		(void)snprintf(want, sizeof want, "leaves 1d00h, but "
		    "estimated_hours is 36 (1d12h of work)");
		if (strstr(e.message, want) == NULL ||
		    strstr(e.message, "move the deadline to ") == NULL ||
		    strstr(e.message, "or lower estimated_hours") == NULL)
			fail_msg("%s", e.message);
		spec_error_done(&e);
		json_decref(in);
	}
}

static void
test_spec_max_runtime_forms(void **state)
{
	ok_field(WITH("\"max_runtime\": \"90m\""), "max_runtime", "5400");
	ok_field(WITH("\"max_runtime\": \"24h\""), "max_runtime", "86400");
	ok_field(WITH("\"max_runtime\": \"2h30m\""), "max_runtime", "9000");
	ok_field(WITH("\"max_runtime\": \"3d\""), "max_runtime", "259200");
	ok_field(WITH("\"max_runtime\": \"600\""), "max_runtime", "600");
	ok_field(WITH("\"max_runtime\": 3600"), "max_runtime", "3600");
	ok_field(WITH("\"max_runtime\": 60"), "max_runtime", "60");
}

/* pending_timeout: absent stays absent (the daemon's applies). */
static void
test_spec_pending_timeout(void **state)
{
	ok_absent(WITH("\"max_runtime\": 60"), "pending_timeout");
	ok_field(WITH("\"pending_timeout\": \"90m\""), "pending_timeout",
	    "5400");
	ok_field(WITH("\"pending_timeout\": 60"), "pending_timeout", "60");
	bad(WITH("\"pending_timeout\": 59"), "pending_timeout",
	    "must be at least 60 seconds");
	bad(WITH("\"pending_timeout\": \"soon\""), "pending_timeout",
	    "\"soon\" is not a duration; write e.g. 90m, 24h, 2h30m, 7d or "
	    "a number of seconds");
}

static void
test_spec_max_runtime_bad(void **state)
{
	bad(WITH("\"max_runtime\": \"90 minutes\""), "max_runtime",
	    "\"90 minutes\" is not a duration; write e.g. 90m, 24h, 2h30m, "
	    "7d or a number of seconds");
	bad(WITH("\"max_runtime\": \"1h30\""), "max_runtime",
	    "\"1h30\" is not a duration; write e.g. 90m, 24h, 2h30m, "
	    "7d or a number of seconds");
	bad(WITH("\"max_runtime\": 59"), "max_runtime",
	    "must be at least 60 seconds");
	bad(WITH("\"max_runtime\": \"30s\""), "max_runtime",
	    "must be at least 60 seconds");
	bad(WITH("\"max_runtime\": -5"), "max_runtime",
	    "-5 seconds is out of range; use e.g. 90m, 24h or 7d");
	bad(WITH("\"max_runtime\": 90.5"), "max_runtime",
	    "must be a whole number of seconds or a duration such as "
	    "\"90m\" or \"2h30m\"");
	bad(WITH("\"max_runtime\": false"), "max_runtime",
	    "must be a duration such as \"90m\" or a number of seconds, "
	    "not true/false");
}

static void
test_spec_budgets(void **state)
{
	ok_field(WITH("\"max_interruptions\": 0"), "max_interruptions", "0");
	ok_field(WITH("\"max_failures\": 3"), "max_failures", "3");
	bad(WITH("\"max_interruptions\": -1"), "max_interruptions",
	    "must be 0 or more");
	bad(WITH("\"max_failures\": 1.5"), "max_failures",
	    "must be a whole number");
	bad(WITH("\"max_failures\": 2147483648"), "max_failures",
	    "must be at most 2147483647");
	bad(WITH("\"max_interruptions\": \"lots\""), "max_interruptions",
	    "must be an integer, not a string");
}

static void
test_spec_checkpoint(void **state)
{
	ok_field(WITH("\"checkpoint\": {\"uri\": \"gs://my-bucket/runs/a/\"}"),
	    "checkpoint",
	    "{\"uri\":\"gs://my-bucket/runs/a/\",\"interval\":1800}");
	ok_field(WITH("\"checkpoint\": {\"uri\": \"gs://my.bucket.example\"}"),
	    "checkpoint",
	    "{\"uri\":\"gs://my.bucket.example/\",\"interval\":1800}");
	ok_field(WITH("\"checkpoint\": {\"interval\": 300}"), "checkpoint",
	    "{\"interval\":300}");
	ok_field(WITH("\"checkpoint\": {}"), "checkpoint",
	    "{\"interval\":1800}");
	bad(WITH("\"checkpoint\": \"gs://b/x\""), "checkpoint",
	    "must be an object such as {uri: gs://my-bucket/runs/resnet, "
	    "interval: 30m}, not a string");
	bad(WITH("\"checkpoint\": {\"interval\": \"soon\"}"),
	    "checkpoint.interval", "\"soon\" is not a duration; write e.g. "
	    "90m, 24h, 2h30m, 7d or a number of seconds");
	bad(WITH("\"checkpoint\": {\"interval\": 0}"), "checkpoint.interval",
	    "must be at least 1 second");
}

static void
test_spec_checkpoint_uri_bad(void **state)
{
	bad(WITH("\"checkpoint\": {\"uri\": \"s3://b/x\"}"), "checkpoint.uri",
	    "must be a Cloud Storage URI such as gs://my-bucket/runs/resnet");
	bad(WITH("\"checkpoint\": {\"uri\": \"/mnt/ckpt\"}"), "checkpoint.uri",
	    "must be a Cloud Storage URI such as gs://my-bucket/runs/resnet");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://My_Bucket/x\"}"),
	    "checkpoint.uri", "bucket name \"My_Bucket\" may hold only "
	    "lowercase letters, digits, '-', '_' and '.'");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://ab/x\"}"), "checkpoint.uri",
	    "bucket name \"ab\" must be 3 to 63 characters long (222 with "
	    "dots)");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://\"}"), "checkpoint.uri",
	    "bucket name \"\" must be 3 to 63 characters long (222 with "
	    "dots)");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://-abc/x\"}"),
	    "checkpoint.uri", "bucket name \"-abc\" must start and end with "
	    "a letter or digit");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://192.168.5.4/x\"}"),
	    "checkpoint.uri", "bucket name \"192.168.5.4\" must not be an "
	    "IP address");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://googbucket/x\"}"),
	    "checkpoint.uri", "bucket name \"googbucket\" must not start "
	    "with \"goog\"");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://my-google-ckpt\"}"),
	    "checkpoint.uri", "bucket name \"my-google-ckpt\" must not "
	    "contain \"google\"");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://a..b/x\"}"),
	    "checkpoint.uri", "bucket name \"a..b\" must not have empty "
	    "parts between dots");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://bkt/a//b\"}"),
	    "checkpoint.uri", "must not contain \"//\" after the bucket name");
	bad(WITH("\"checkpoint\": {\"uri\": \"gs://bkt/a b\"}"),
	    "checkpoint.uri", "must not contain whitespace");
}

/* nodes: 1..64, a gang needs a command; one machine leaves no trace. */
static void
test_spec_nodes(void **state)
{
	(void)state;
	ok_field(WITH("\"command\": [\"python\", \"t.py\"], "
	    "\"nodes\": 4"), "nodes", "4");
	ok_field(WITH("\"command\": [\"t\"], \"nodes\": 64"), "nodes",
	    "64");
	ok_absent(WITH("\"nodes\": 1"), "nodes");
	ok_absent("{" BASE "}", "nodes");
	bad(WITH("\"command\": [\"t\"], \"nodes\": 2, \"array\": "
	    "{\"count\": 3}"), "array", "an array of multi-node jobs is not "
	    "supported; submit each gang as its own job, or drop nodes");
	ok_field(WITH("\"nodes\": 1, \"array\": {\"count\": 3}"), "array",
	    "{\"count\":3,\"parallelism\":3}");
	bad(WITH("\"command\": [\"t\"], \"nodes\": 65"), "nodes",
	    "must be between 1 and 64");
	bad(WITH("\"command\": [\"t\"], \"nodes\": 0"), "nodes",
	    "must be between 1 and 64");
	bad(WITH("\"command\": [\"t\"], \"nodes\": \"2\""), "nodes",
	    "must be an integer, not a string; remove the quotes");
	bad(WITH("\"nodes\": 2"), "nodes", "a job of 2 nodes needs a "
	    "command (gpuq starts it on every node behind a wrapper that "
	    "sets the node's rank); add command: [...]");
}

static void
test_spec_priority(void **state)
{
	ok_field(WITH("\"priority\": -1000"), "priority", "-1000");
	ok_field(WITH("\"priority\": 1000"), "priority", "1000");
	bad(WITH("\"priority\": 1001"), "priority",
	    "must be between -1000 and 1000");
	bad(WITH("\"priority\": -1001"), "priority",
	    "must be between -1000 and 1000");
	bad(WITH("\"priority\": \"high\""), "priority",
	    "must be an integer, not a string");
	bad(WITH("\"priority\": \"nan\""), "priority",
	    "must be an integer, not a string");
	bad(WITH("\"priority\": \"-5\""), "priority",
	    "must be an integer, not a string; remove the quotes");
	bad(WITH("\"priority\": 0.5"), "priority", "must be a whole number");
}

static void
test_spec_labels(void **state)
{
	ok_field(WITH("\"labels\": {\"team\": \"\", \"cost-center\": \"a_1\"}"),
	    "labels", "{\"team\":\"\",\"cost-center\":\"a_1\"}");
	bad(WITH("\"labels\": [\"team\"]"), "labels",
	    "must be an object of key: value pairs, not a list");
	bad(WITH("\"labels\": {\"Team\": \"x\"}"), "labels.Team",
	    "label keys must start with a lowercase letter and hold only "
	    "lowercase letters, digits, '_' and '-'");
	bad(WITH("\"labels\": {\"9lives\": \"x\"}"), "labels.9lives",
	    "label keys must start with a lowercase letter and hold only "
	    "lowercase letters, digits, '_' and '-'");
	bad(WITH("\"labels\": {\"gpuq-install\": \"x\"}"),
	    "labels.gpuq-install", "label keys starting with \"gpuq\" are "
	    "reserved: gpuq sets them");
	bad(WITH("\"labels\": {\"team\": \"Vision\"}"), "labels.team",
	    "label values may hold only lowercase letters, digits, '_' and "
	    "'-'");
	bad(WITH("\"labels\": {\"team\": 3}"), "labels.team",
	    "must be a string; quote it");
	bad(WITH("\"labels\": {\"\": \"x\"}"), "labels.",
	    "label keys must be 1 to 63 characters long");
}

static void
test_spec_labels_limits(void **state)
{
	char	*text, *t;
	int	 i;

	text = xprintf(WITH("\"labels\": {\"team\": \"%064d\"}"), 0);
	bad(text, "labels.team",
	    "label values must be at most 63 characters long");
	free(text);
	text = xstrdup("{" BASE ", \"labels\": {");
	for (i = 0; i < 33; i++) {
		t = xprintf("%s%s\"k%d\": \"v\"", text, i ? ", " : "", i);
		free(text);
		text = t;
	}
	t = xprintf("%s}}", text);
	bad(t, "labels", "has 33 labels; at most 32 are allowed");
	free(t);
	free(text);
}

static void
test_spec_long_user_text_is_cut(void **state)
{
	char	*text, *want;

	text = xprintf(WITH("\"regions\": [\"%s\"]"),
	    "a-very-long-region-name-that-goes-on-and-on-and-on1x");
	want = xprintf("\"%.48s...\" is not a region name; regions look "
	    "like us-central1",
	    "a-very-long-region-name-that-goes-on-and-on-and-on1x");
	bad(text, "regions[0]", want);
	free(want);
	free(text);
}


static void
test_spec_strdist(void **state)
{
	static const char *const v[] = { "us-central1", "us-east1",
	    "europe-west4" };

	assert_int_equal(strdist("", ""), 0);
	assert_int_equal(strdist("abc", "abc"), 0);
	assert_int_equal(strdist("us-centrall1", "us-central1"), 1);
	assert_int_equal(strdist("us-cnetral1", "us-central1"), 1);
	assert_int_equal(strdist("kitten", "sitting"), 3);
	assert_int_equal(strdist("", "abc"), 3);
	assert_string_equal(strdist_closest("us-centrall1", v, 3),
	    "us-central1");
	assert_string_equal(strdist_closest("europe-west5", v, 3),
	    "europe-west4");
	assert_null(strdist_closest("asia-south9", v, 3));
	assert_null(strdist_closest("x", v, 0));
}

/* The regions of a small catalog, for the tests below. */
static const char *const test_regions[] = {
	"us-east1", "us-central1", "europe-west4", "us-central1",
};

static void
test_spec_regions_catalog(void **state)
{
	char	*m;

	spec_catalog_set(test_regions, 4);
	assert_int_equal(spec_catalog_size(), 3);	/* once each */
	ok_field(WITH("\"regions\": [\"us-central1\", \"europe-west4\"]"),
	    "regions", "[\"us-central1\",\"europe-west4\"]");
	bad(WITH("\"regions\": [\"us-east1\", \"us-centrall1\"]"),
	    "regions[1]",
	    "unknown region \"us-centrall1\"; did you mean us-central1?");
	bad(WITH("\"regions\": [\"asia-south9\"]"), "regions[0]",
	    "unknown region \"asia-south9\"; gpuq knows the 3 regions of "
	    "its price table ('gpuq prices' lists them)");
	/* A zone is still told its region. */
	bad(WITH("\"regions\": [\"us-central1-a\"]"), "regions[0]",
	    "\"us-central1-a\" is a zone; list its region us-central1 "
	    "instead (gpuq picks the zone)");

	/* gpuqd.conf's [gcp] regions get the same words. */
	assert_null(spec_region_check("us-east1"));
	m = spec_region_check("us-centrall1");
	assert_string_equal(m,
	    "unknown region \"us-centrall1\"; did you mean us-central1?");
	free(m);
	m = spec_region_check("us-central1-a");
	assert_string_equal(m, "\"us-central1-a\" is a zone; list its "
	    "region us-central1 instead (gpuq picks the zone)");
	free(m);

	/* Without a catalog, a name only has to look like a region. */
	spec_catalog_clear();
	assert_int_equal(spec_catalog_size(), 0);
	ok_field(WITH("\"regions\": [\"us-centrall1\"]"), "regions",
	    "[\"us-centrall1\"]");
	assert_null(spec_region_check("us-centrall1"));
}

static void
test_spec_regions_catalog_load(void **state)
{
	char	*cause = NULL;

	assert_int_equal(spec_catalog_load(GPUQ_TOP_SRCDIR
	    "/data/prices.csv", &cause), 0);
	assert_null(cause);
	/* data/README.md: the GPU regions of the bundled table. */
	assert_true(spec_catalog_size() >= 30);
	assert_null(spec_region_check("us-central1"));
	assert_null(spec_region_check("northamerica-northeast1"));
	bad(WITH("\"regions\": [\"us-centrall1\"]"), "regions[0]",
	    "unknown region \"us-centrall1\"; did you mean us-central1?");
	spec_catalog_clear();

	assert_int_equal(spec_catalog_load("/nonexistent/prices.csv",
	    &cause), -ENOENT);
	assert_non_null(strstr(cause, "/nonexistent/prices.csv"));
	free(cause);
	assert_int_equal(spec_catalog_size(), 0);
}

/* spec_site_check of TEXT under SITE: warnings as compact JSON (new),
 * or NULL with *ERR filled. */
static char *
site(const char *text, const char *root, int require,
    struct spec_error *err)
{
	struct spec_site	 st = { root, require };
	json_t			*norm = ok(text), *w = NULL;
	char			*s = NULL;

	if (spec_site_check(norm, &st, &w, err) == 0) {
		s = dump(w);
		json_decref(w);
	} else
		assert_null(w);
	json_decref(norm);
	return s;
}

static void
test_spec_site_spot_checkpoint(void **state)
{
	struct spec_error	 err = { NULL, NULL };
	char			*s;

	/* spot: allow (the default), no checkpoint place: a warning. */
	s = site("{" BASE "}", "", 0, &err);
	assert_string_equal(s, "[\"spot: allow but no checkpoint place (no "
	    "checkpoint.uri, and gpuqd.conf has no [gcp] checkpoint_root): "
	    "after a preemption the job starts again from zero; set "
	    "checkpoint.uri, or spot: never\"]");
	free(s);
	s = site(WITH("\"spot\": \"require\""), NULL, 0, &err);
	assert_non_null(strstr(s, "spot: require but no checkpoint place"));
	free(s);
	/* Any checkpoint place, or no Spot: nothing to say. */
	s = site("{" BASE "}", "gs://b/gpuq", 1, &err);
	assert_string_equal(s, "[]");
	free(s);
	s = site(WITH("\"checkpoint\": {\"uri\": \"gs://bkt/run\"}"), "", 1,
	    &err);
	assert_string_equal(s, "[]");
	free(s);
	s = site(WITH("\"spot\": \"never\""), "", 1, &err);
	assert_string_equal(s, "[]");
	free(s);
	/* [gcp] spot_requires_checkpoint = yes: refused, naming the fix. */
	assert_null(site("{" BASE "}", "", 1, &err));
	assert_string_equal(err.field, "checkpoint.uri");
	assert_string_equal(err.message, "the job may run on Spot (spot: "
	    "allow) and has no checkpoint place, which gpuqd.conf requires "
	    "([gcp] spot_requires_checkpoint): set checkpoint.uri to a gs:// "
	    "place, or spot: never");
	spec_error_done(&err);
}

/* notify: the job's own webhook, checked as gpuqd.conf's is. */
static void
test_spec_notify(void **state)
{
	ok_absent(WITH("\"name\": \"x\""), "notify");
	ok_field(WITH("\"notify\": {\"webhook\": \"https://h.example/x\"}"),
	    "notify", "{\"webhook\":\"https://h.example/x\"}");
	ok_field(WITH("\"notify\": {\"webhook\": \"http://127.0.0.1:9/x\", "
	    "\"on\": [\"failed\", \"interrupted\"]}"), "notify",
	    "{\"webhook\":\"http://127.0.0.1:9/x\",\"on\":[\"failed\","
	    "\"interrupted\"]}");
	bad(WITH("\"notify\": {\"webhook\": \"http://h.example/x\"}"),
	    "notify.webhook", "plain http is only for this machine "
	    "(localhost, 127.0.0.1, [::1]); use https://");
	bad(WITH("\"notify\": {}"), "notify.webhook", "required in notify: "
	    "the URL each event of this job is POSTed to");
	bad(WITH("\"notify\": {\"webhook\": \"https://h/x\", \"on\": "
	    "[\"started\"]}"), "notify.on", "has an unknown event; events "
	    "are failed, succeeded, interrupted and cancelled");
	bad(WITH("\"notify\": {\"url\": \"https://h/x\"}"), "notify.url",
	    "unknown field; known fields are: webhook, on");
}

/* A python_package job: the package stands instead of image. */
#define PP_ACC	"\"accelerator\": {\"type\": \"nvidia-l4\", \"count\": 1}"
#define PP(body) "{" PP_ACC ", \"python_package\": {" body "}}"
#define PP_OK	"\"executor_image\": \"us-docker.pkg.dev/vertex-ai/training/" \
		"pytorch-gpu.2-1:latest\", \"package_uris\": " \
		"[\"gs://my-bkt/dist/trainer-0.1.tar.gz\"], " \
		"\"module\": \"trainer.task\""

static void
test_spec_python_package(void **state)
{
	(void)state;
	ok_field(PP(PP_OK), "python_package",
	    "{\"executor_image\":\"us-docker.pkg.dev/vertex-ai/training/"
	    "pytorch-gpu.2-1:latest\",\"package_uris\":[\"gs://my-bkt/dist/"
	    "trainer-0.1.tar.gz\"],\"module\":\"trainer.task\",\"args\":[]}");
	ok_absent(PP(PP_OK), "image");
	ok_field(PP(PP_OK ", \"args\": [\"--lr\", \"0.1\"]"), "python_package",
	    "{\"executor_image\":\"us-docker.pkg.dev/vertex-ai/training/"
	    "pytorch-gpu.2-1:latest\",\"package_uris\":[\"gs://my-bkt/dist/"
	    "trainer-0.1.tar.gz\"],\"module\":\"trainer.task\",\"args\":"
	    "[\"--lr\",\"0.1\"]}");

	/* Neither: image is wanted. */
	bad("{" PP_ACC "}", "image", "required: the container image to "
	    "run, e.g. us-docker.pkg.dev/my-project/train/resnet:1.0");
	/* Both, or command/args beside it. */
	bad("{\"image\": \"img\", " PP_ACC ", \"python_package\": {" PP_OK
	    "}}", "image", "give either image or python_package: "
	    "python_package.executor_image is the image that runs the package");
	bad("{\"args\": [\"x\"], " PP_ACC ", \"python_package\": {" PP_OK
	    "}}", "args", "a python_package job runs its module; give the "
	    "arguments as python_package.args and leave args out");
	bad("{\"command\": [\"x\"], " PP_ACC ", \"python_package\": {" PP_OK
	    "}}", "command", "a python_package job runs its module; give the "
	    "arguments as python_package.args and leave command out");
	bad(PP(PP_OK ", \"modul\": \"x\""), "python_package.modul",
	    "unknown field; known fields are: executor_image, package_uris, "
	    "module, args");
	bad("{" PP_ACC ", \"python_package\": \"gs://x\"}", "python_package",
	    "must be an object with executor_image, package_uris, module and "
	    "args, not a string");
	bad(PP("\"package_uris\": [\"gs://my-bkt/t.tar.gz\"], \"module\": \"t\""),
	    "python_package.executor_image", "required: the image that "
	    "installs and runs the package, e.g. one of Vertex AI's prebuilt "
	    "training containers");
	bad(PP("\"executor_image\": \"-x\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"t\""),
	    "python_package.executor_image", "\"-x\" starts with '-': an "
	    "image is a name such as us-docker.pkg.dev/my-project/train/"
	    "resnet:1.0, never an option");
	bad(PP("\"executor_image\": \"a/b:1\", \"module\": \"t\""),
	    "python_package.package_uris", "required: the package files, e.g. "
	    "[gs://my-bucket/trainer-0.1.tar.gz]");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": [], "
	    "\"module\": \"t\""), "python_package.package_uris", "must list "
	    "1 to 100 package files, as Vertex AI takes them");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\", \"/tmp/t.tar.gz\"], \"module\": \"t\""),
	    "python_package.package_uris[1]", "\"/tmp/t.tar.gz\" is not a "
	    "package file on Cloud Storage; write gs://BUCKET/path/"
	    "trainer-0.1.tar.gz");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/dir/\"], \"module\": \"t\""),
	    "python_package.package_uris[0]", "\"gs://my-bkt/dir/\" is not a "
	    "package file on Cloud Storage; write gs://BUCKET/path/"
	    "trainer-0.1.tar.gz");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/a b.tar.gz\"], \"module\": \"t\""),
	    "python_package.package_uris[0]", "must not contain whitespace");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://Bad_Bucket/t.tar.gz\"], \"module\": \"t\""),
	    "python_package.package_uris[0]", "bucket name may hold only "
	    "lowercase letters, digits, '-', '_' and '.'");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"]"), "python_package.module", "required: the "
	    "module to run, as python -m takes it, e.g. trainer.task");
	/* Not a module: an option, a path, a shell word. */
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"-c\""),
	    "python_package.module", "\"-c\" is not a Python module name: "
	    "names of letters, digits and '_' joined by '.', such as "
	    "trainer.task (at most 255 characters)");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"t;reboot\""),
	    "python_package.module", "\"t;reboot\" is not a Python module "
	    "name: names of letters, digits and '_' joined by '.', such as "
	    "trainer.task (at most 255 characters)");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"trainer.\""),
	    "python_package.module", "\"trainer.\" is not a Python module "
	    "name: names of letters, digits and '_' joined by '.', such as "
	    "trainer.task (at most 255 characters)");
	bad(PP("\"executor_image\": \"a/b:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"1x\""),
	    "python_package.module", "\"1x\" is not a Python module "
	    "name: names of letters, digits and '_' joined by '.', such as "
	    "trainer.task (at most 255 characters)");
	bad(PP(PP_OK ", \"args\": [\"--lr\", 1]"), "python_package.args[1]",
	    "must be a string; quote it");
	/* Vertex AI takes only its pre-built containers as executors: a
	 * job with another image runs elsewhere, or names vertex in vain. */
	ok_absent(PP(PP_OK), "providers");
	ok_field(PP("\"executor_image\": \"gcr.io/p/py:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"t\""), "providers",
	    "[\"batch\",\"gce\"]");
	ok_field("{" PP_ACC ", \"providers\": [\"gce\"], \"python_package\": "
	    "{\"executor_image\": \"gcr.io/p/py:1\", \"package_uris\": "
	    "[\"gs://my-bkt/t.tar.gz\"], \"module\": \"t\"}}", "providers",
	    "[\"gce\"]");
	bad("{" PP_ACC ", \"providers\": [\"gce\", \"vertex\"], "
	    "\"python_package\": {\"executor_image\": \"gcr.io/p/py:1\", "
	    "\"package_uris\": [\"gs://my-bkt/t.tar.gz\"], \"module\": \"t\"}}",
	    "providers[1]", "vertex runs a python_package only with its own "
	    "executor images (us-docker.pkg.dev/vertex-ai/training/...); use "
	    "one of them, or leave vertex out");
	ok_field("{" PP_ACC ", \"providers\": [\"vertex\"], \"python_package\": "
	    "{" PP_OK "}}", "providers", "[\"vertex\"]");
	/* The normalized spec validates again to itself. */
	{
		json_t	*once = ok(PP("\"executor_image\": \"gcr.io/p/py:1\", "
			    "\"package_uris\": [\"gs://my-bkt/t.tar.gz\"], "
			    "\"module\": \"t\"")), *twice;
		char	*a, *b;

		a = dump(once);
		twice = ok(a);
		b = dump(twice);
		assert_string_equal(a, b);
		free(a);
		free(b);
		json_decref(once);
		json_decref(twice);
	}
}

/* array: count 1-10,000, parallelism 1-count defaulting to count. */
static void
test_spec_array(void **state)
{
	ok_absent(WITH("\"name\": \"x\""), "array");
	ok_field(WITH("\"array\": {\"count\": 16}"), "array",
	    "{\"count\":16,\"parallelism\":16}");
	ok_field(WITH("\"array\": {\"count\": 16, \"parallelism\": 4}"),
	    "array", "{\"count\":16,\"parallelism\":4}");
	ok_field(WITH("\"array\": {\"count\": 10000, \"parallelism\": 1}"),
	    "array", "{\"count\":10000,\"parallelism\":1}");
	bad(WITH("\"array\": 16"), "array", "must be an object with count "
	    "and parallelism, e.g. {count: 16, parallelism: 4}, not a number");
	bad(WITH("\"array\": {}"), "array.count",
	    "required: how many tasks, 1 to 10000");
	bad(WITH("\"array\": {\"count\": 0}"), "array.count",
	    "must be between 1 and 10000");
	bad(WITH("\"array\": {\"count\": 10001}"), "array.count",
	    "must be between 1 and 10000");
	bad(WITH("\"array\": {\"count\": \"4\"}"), "array.count",
	    "must be an integer, not a string; remove the quotes");
	bad(WITH("\"array\": {\"count\": 4, \"parallelism\": 0}"),
	    "array.parallelism", "must be between 1 and 10000");
	bad(WITH("\"array\": {\"count\": 4, \"parallelism\": 5}"),
	    "array.parallelism", "must be at most count (4); leave it out "
	    "to run every task at once");
	bad(WITH("\"array\": {\"count\": 4, \"paralelism\": 2}"), "array",
	    "unknown key \"paralelism\"; known keys: count, parallelism");
	/* The daemon's own member of a task's stored spec is no field. */
	bad(WITH("\"task\": {\"index\": 1, \"count\": 2}"), "task",
	    "unknown field; known fields are: " KNOWN);
}

/* after, after_any: job ids, once each; a bare id is a list of one. */
static void
test_spec_after(void **state)
{
	ok_absent(WITH("\"name\": \"x\""), "after");
	ok_field(WITH("\"after\": [41, 40, 41]"), "after", "[41,40]");
	ok_field(WITH("\"after\": 41"), "after", "[41]");
	ok_field(WITH("\"after_any\": [7]"), "after_any", "[7]");
	ok_field(WITH("\"after\": []"), "after", "[]");
	bad(WITH("\"after\": [\"preprocess\"]"), "after[0]",
	    "\"preprocess\" is not a job id; a name is resolved only when "
	    "gpuq submit reads it from an earlier document of the same file");
	bad(WITH("\"after_any\": [1, 0]"), "after_any[1]",
	    "must be a job id, 1 or more");
	bad(WITH("\"after\": [1.5]"), "after[0]", "must be a whole number");
	bad(WITH("\"after\": {\"a\": 1}"), "after",
	    "must be a list of job ids, e.g. [41, 40], not an object");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_minimal_defaults),
		cmocka_unit_test(test_spec_full_spec),
		cmocka_unit_test(test_spec_normalized_is_fixed_point),
		cmocka_unit_test(test_spec_gpu_spellings),
		cmocka_unit_test(test_spec_not_object),
		cmocka_unit_test(test_spec_notify),
		cmocka_unit_test(test_spec_disk),
		cmocka_unit_test(test_spec_unknown_top_level),
		cmocka_unit_test(test_spec_unknown_nested),
		cmocka_unit_test(test_spec_unknown_empty_key),
		cmocka_unit_test(test_spec_unknown_before_other_errors),
		cmocka_unit_test(test_spec_first_error_in_field_order),
		cmocka_unit_test(test_spec_missing_image),
		cmocka_unit_test(test_spec_bad_image),
		cmocka_unit_test(test_spec_image_too_long),
		cmocka_unit_test(test_spec_image_reference),
		cmocka_unit_test(test_spec_missing_accelerator),
		cmocka_unit_test(test_spec_accelerator_wrong_type),
		cmocka_unit_test(test_spec_unknown_gpu),
		cmocka_unit_test(test_spec_count_not_offered),
		cmocka_unit_test(test_spec_count_not_integer),
		cmocka_unit_test(test_spec_name),
		cmocka_unit_test(test_spec_command_and_args),
		cmocka_unit_test(test_spec_command_string),
		cmocka_unit_test(test_spec_command_bad_items),
		cmocka_unit_test(test_spec_env),
		cmocka_unit_test(test_spec_env_reserved),
		cmocka_unit_test(test_spec_env_bad_names),
		cmocka_unit_test(test_spec_env_values_are_strings),
		cmocka_unit_test(test_spec_env_too_many),
		cmocka_unit_test(test_spec_secret_env),
		cmocka_unit_test(test_spec_machine_type_default),
		cmocka_unit_test(test_spec_machine_type_given),
		cmocka_unit_test(test_spec_machine_type_family),
		cmocka_unit_test(test_spec_machine_type_count),
		cmocka_unit_test(test_spec_machine_type_garbage),
		cmocka_unit_test(test_spec_regions),
		cmocka_unit_test(test_spec_regions_bad_items),
		cmocka_unit_test(test_spec_regions_too_many),
		cmocka_unit_test(test_spec_strdist),
		cmocka_unit_test(test_spec_regions_catalog),
		cmocka_unit_test(test_spec_regions_catalog_load),
		cmocka_unit_test(test_spec_site_spot_checkpoint),
		cmocka_unit_test(test_spec_providers),
		cmocka_unit_test(test_spec_spot),
		cmocka_unit_test(test_spec_capacity),
		cmocka_unit_test(test_spec_usd_limits),
		cmocka_unit_test(test_spec_estimated_hours),
		cmocka_unit_test(test_spec_deadline),
		cmocka_unit_test(test_spec_max_runtime_forms),
		cmocka_unit_test(test_spec_pending_timeout),
		cmocka_unit_test(test_spec_max_runtime_bad),
		cmocka_unit_test(test_spec_budgets),
		cmocka_unit_test(test_spec_checkpoint),
		cmocka_unit_test(test_spec_checkpoint_uri_bad),
		cmocka_unit_test(test_spec_nodes),
		cmocka_unit_test(test_spec_priority),
		cmocka_unit_test(test_spec_labels),
		cmocka_unit_test(test_spec_labels_limits),
		cmocka_unit_test(test_spec_long_user_text_is_cut),
		cmocka_unit_test(test_spec_python_package),
		cmocka_unit_test(test_spec_array),
		cmocka_unit_test(test_spec_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
