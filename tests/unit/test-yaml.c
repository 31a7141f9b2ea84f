/*
 * test-yaml.c: job files to JSON (client/yaml.c, client/jobfile.c):
 * YAML 1.1 typing of plain scalars, quoted scalars staying strings,
 * multi-document sweeps, anchors and merges, JSON in its forms, and
 * errors that name the file, line and column.
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

#include "client/cli.h"
#include "tests/unit/unittest.h"

/* Parse TEXT as file "t.yaml"; the test fails if it does not parse. */
static struct cli_docs
parse_ok(const char *text)
{
	struct cli_docs	 d = { NULL, 0 };
	char		*cause = NULL;
	int		 rc;

	rc = cli_jobfile_parse("t.yaml", text, strlen(text), &d, &cause);
	if (rc != 0)
		fail_msg("parse failed: %s", cause ? cause : "?");
	return d;
}

/* Parse TEXT expecting failure; returns the cause (caller frees). */
static char *
parse_fail(const char *text)
{
	struct cli_docs	 d = { NULL, 0 };
	char		*cause = NULL;

	assert_int_equal(cli_jobfile_parse("t.yaml", text, strlen(text), &d,
	    &cause), -EINVAL);
	assert_non_null(cause);
	assert_int_equal(d.n, 0);
	return cause;
}

static void
assert_json(json_t *v, const char *want)
{
	json_t		*w;
	json_error_t	 err;
	char		*got;

	w = json_loads(want, JSON_DECODE_ANY, &err);
	assert_non_null(w);
	if (!json_equal(v, w)) {
		got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
		    JSON_SORT_KEYS);
		fail_msg("got %s, want %s", got, want);
	}
	json_decref(w);
}

static void
test_yaml_plain_types(void **state)
{
	static const struct {
		const char	*in;
		const char	*want;
	} cases[] = {
		{ "", "null" }, { "~", "null" }, { "null", "null" },
		{ "NULL", "null" }, { "true", "true" }, { "True", "true" },
		{ "yes", "true" }, { "ON", "true" }, { "no", "false" },
		{ "off", "false" }, { "False", "false" },
		{ "0", "0" }, { "42", "42" }, { "-17", "-17" }, { "+3", "3" },
		{ "1_000", "1000" }, { "0x1F", "31" }, { "0o17", "15" },
		{ "017", "15" }, { "0b101", "5" },
		{ "9223372036854775807", "9223372036854775807" },
		{ "-9223372036854775808", "-9223372036854775808" },
		{ "1.5", "1.5" }, { "-0.25", "-0.25" }, { "1.", "1.0" },
		{ ".5", "0.5" }, { "1e3", "1000.0" }, { "2.5E-1", "0.25" },
		{ "1_000.5", "1000.5" },
		/* Not numbers or booleans: stay strings. */
		{ "y", "\"y\"" }, { "n", "\"n\"" }, { "1.2.3", "\"1.2.3\"" },
		{ "24h", "\"24h\"" }, { "08", "\"08\"" }, { "0x", "\"0x\"" },
		{ "1:30", "\"1:30\"" }, { "abc", "\"abc\"" }, { ".", "\".\"" },
		{ "1e", "\"1e\"" }, { "-", "\"-\"" }, { "tRue", "\"tRue\"" },
		{ "nvidia-tesla-t4", "\"nvidia-tesla-t4\"" },
	};
	json_t	*v;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		v = cli_yaml_plain(cases[i].in, strlen(cases[i].in));
		if (v == NULL)
			fail_msg("'%s' gave NULL", cases[i].in);
		assert_json(v, cases[i].want);
		json_decref(v);
	}
	/* JSON cannot hold these. */
	assert_null(cli_yaml_plain(".inf", 4));
	assert_null(cli_yaml_plain("-.Inf", 5));
	assert_null(cli_yaml_plain(".nan", 4));
	assert_null(cli_yaml_plain("9223372036854775808", 19));
	assert_null(cli_yaml_plain("1e999", 5));
}

static void
test_yaml_quoted_stay_strings(void **state)
{
	struct cli_docs	d;

	(void)state;
	d = parse_ok("a: '42'\nb: \"true\"\nc: |\n  null\nd: >-\n  3.5\n"
	    "e: 42\nf: !!str 7\ng: !!int \"8\"\nh: !!float 1\n"
	    "i: ! 12\n");
	assert_int_equal(d.n, 1);
	assert_json(d.v[0].job, "{\"a\":\"42\",\"b\":\"true\",\"c\":\"null\\n\","
	    "\"d\":\"3.5\",\"e\":42,\"f\":\"7\",\"g\":8,\"h\":1.0,"
	    "\"i\":\"12\"}");
	cli_docs_done(&d);
}

static void
test_yaml_job_shape(void **state)
{
	struct cli_docs	d;

	(void)state;
	d = parse_ok(
	    "# a comment first\n"
	    "name: resnet\n"
	    "image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\n"
	    "command: [torchrun, --nproc_per_node=2, train.py]\n"
	    "args:\n  - --epochs\n  - 90\n"
	    "env:\n  FAKEGCP_WORK_SECONDS: \"600\"\n  EMPTY:\n"
	    "accelerator: {type: nvidia-tesla-t4, count: 2}\n"
	    "spot: allow\n"
	    "max_hourly_usd: 3.00\n"
	    "max_runtime: 24h\n"
	    "labels: {team: vision}\n");
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].line, 2);
	assert_json(d.v[0].job, "{\"name\":\"resnet\",\"image\":"
	    "\"pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\","
	    "\"command\":[\"torchrun\",\"--nproc_per_node=2\",\"train.py\"],"
	    "\"args\":[\"--epochs\",90],"
	    "\"env\":{\"FAKEGCP_WORK_SECONDS\":\"600\",\"EMPTY\":null},"
	    "\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":2},"
	    "\"spot\":\"allow\",\"max_hourly_usd\":3.0,"
	    "\"max_runtime\":\"24h\",\"labels\":{\"team\":\"vision\"}}");
	cli_docs_done(&d);
}

static void
test_yaml_multidoc(void **state)
{
	struct cli_docs	d;

	(void)state;
	d = parse_ok("name: a\nlr: 0.1\n---\nname: b\nlr: 0.01\n---\n"
	    "# only a comment\n---\nname: c\nlr: 0.001\n...\n---\n");
	assert_int_equal(d.n, 3);
	assert_json(d.v[0].job, "{\"name\":\"a\",\"lr\":0.1}");
	assert_json(d.v[1].job, "{\"name\":\"b\",\"lr\":0.01}");
	assert_json(d.v[2].job, "{\"name\":\"c\",\"lr\":0.001}");
	assert_int_equal(d.v[0].line, 1);
	assert_int_equal(d.v[1].line, 3);
	assert_int_equal(d.v[2].line, 8);
	cli_docs_done(&d);
}

static void
test_yaml_anchors_and_merge(void **state)
{
	struct cli_docs	d;

	(void)state;
	d = parse_ok("base: &b {image: img, accelerator: &acc "
	    "{type: nvidia-l4, count: 1}}\n"
	    "job:\n  <<: *b\n  image: other\n  acc2: *acc\n"
	    "multi:\n  <<: [{x: 1}, {x: 2, y: 2}]\n"
	    "'<<': quoted-is-a-key\n");
	assert_json(d.v[0].job, "{\"base\":{\"image\":\"img\",\"accelerator\":"
	    "{\"type\":\"nvidia-l4\",\"count\":1}},"
	    "\"job\":{\"image\":\"other\",\"acc2\":{\"type\":\"nvidia-l4\","
	    "\"count\":1},\"accelerator\":{\"type\":\"nvidia-l4\","
	    "\"count\":1}},\"multi\":{\"x\":1,\"y\":2},"
	    "\"<<\":\"quoted-is-a-key\"}");
	cli_docs_done(&d);
}

/* Anchors belong to their document; a sweep cannot share them. */
static void
test_yaml_anchor_per_document(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("a: &x 1\n---\nb: *x\n");
	assert_string_equal(cause, "t.yaml:3:4: unknown anchor '*x' (an "
	    "anchor must be defined before it is used, in the same "
	    "document)");
	free(cause);
}

static void
test_yaml_error_position(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("name: a\nimage: b\n  bad: indent\n");
	assert_string_equal(cause, "t.yaml:3:6: mapping values are not "
	    "allowed in this context");
	free(cause);

	cause = parse_fail("name: a\ncommand: [a, b\n");
	assert_true(strncmp(cause, "t.yaml:3:1: did not find expected ',' "
	    "or ']' (while parsing a flow sequence that starts at line 2, "
	    "column 10)", strlen(cause)) == 0);
	free(cause);

	cause = parse_fail("name: \"unterminated\n");
	assert_true(strncmp(cause, "t.yaml:", 7) == 0);
	assert_non_null(strstr(cause, "quoted scalar"));
	free(cause);

	cause = parse_fail("name: a\n\tcount: 2\n");
	assert_string_equal(cause, "t.yaml:2:1: found a tab character "
	    "that violates indentation (while scanning a plain scalar that "
	    "starts at line 1, column 7)");
	free(cause);
}

static void
test_yaml_duplicate_key(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("name: a\nimage: x\nname: b\n");
	assert_string_equal(cause, "t.yaml:3:1: duplicate key 'name'");
	free(cause);
}

static void
test_yaml_bad_values(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("name: a\nmax_hourly_usd: .inf\n");
	assert_string_equal(cause, "t.yaml:2:17: '.inf' cannot be "
	    "represented in JSON; quote it to make it a string");
	free(cause);
	cause = parse_fail("name: a\nx: !!binary aGk=\n");
	assert_string_equal(cause, "t.yaml:2:4: unsupported tag '!!binary'");
	free(cause);
	cause = parse_fail("x: !custom 1\n");
	assert_string_equal(cause, "t.yaml:1:4: unsupported tag '!custom'");
	free(cause);
	cause = parse_fail("x: !!int twelve\n");
	assert_string_equal(cause, "t.yaml:1:4: 'twelve' is not a valid "
	    "!!int");
	free(cause);
	cause = parse_fail("? [a, b]\n: c\n");
	assert_string_equal(cause, "t.yaml:1:3: a mapping key must be a "
	    "scalar, not a sequence");
	free(cause);
	cause = parse_fail("a: {x: 1}\nb:\n  <<: 3\n");
	assert_string_equal(cause, "t.yaml:3:7: '<<' merges mappings, not "
	    "an integer");
	free(cause);
}

/* Exponential aliases must not expand without bound. */
static void
test_yaml_alias_bomb(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail(
	    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n");
	assert_non_null(strstr(cause, "document too large"));
	free(cause);
}

static void
test_yaml_deep_nesting(void **state)
{
	char	*text, *cause;
	size_t	 i;

	(void)state;
	text = calloc(1, 1000);
	assert_non_null(text);
	for (i = 0; i < 100; i++)
		strcat(text, "- ");
	strcat(text, "x\n");
	cause = parse_fail(text);
	assert_non_null(strstr(cause, "nested more than 64 deep"));
	free(cause);
	free(text);
}

static void
test_jobfile_not_a_mapping(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("just a string\n");
	assert_string_equal(cause, "t.yaml:1: a job must be a mapping of "
	    "fields (see gpuq-job(5)), not a string");
	free(cause);
	cause = parse_fail("name: a\n---\n- name: b\n- 3\n");
	assert_string_equal(cause, "t.yaml:2: job 2 of the list is a "
	    "number; each job must be a mapping of fields (see gpuq-job(5))");
	free(cause);
	cause = parse_fail("# nothing here\n---\n");
	assert_string_equal(cause, "t.yaml: no job in the file");
	free(cause);
	cause = parse_fail("");
	assert_string_equal(cause, "t.yaml: no job in the file");
	free(cause);
}

static void
test_jobfile_json_forms(void **state)
{
	struct cli_docs	d;

	(void)state;
	d = parse_ok("  {\"name\": \"a\", \"count\": 2, \"s\": \"042\"}\n");
	assert_int_equal(d.n, 1);
	assert_json(d.v[0].job, "{\"name\":\"a\",\"count\":2,\"s\":\"042\"}");
	cli_docs_done(&d);

	d = parse_ok("[{\"name\": \"a\"}, {\"name\": \"b\"}]");
	assert_int_equal(d.n, 2);
	assert_json(d.v[1].job, "{\"name\":\"b\"}");
	cli_docs_done(&d);

	/* JSON lines, as jq -c writes them. */
	d = parse_ok("{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"c\"}\n");
	assert_int_equal(d.n, 3);
	assert_json(d.v[2].job, "{\"name\":\"c\"}");
	cli_docs_done(&d);

	/* YAML flow style starts like JSON but is not. */
	d = parse_ok("{name: a, accelerator: {type: nvidia-l4, count: 1}}\n");
	assert_int_equal(d.n, 1);
	assert_json(d.v[0].job, "{\"name\":\"a\",\"accelerator\":"
	    "{\"type\":\"nvidia-l4\",\"count\":1}}");
	cli_docs_done(&d);

	/* A byte order mark is not content. */
	d = parse_ok("\xef\xbb\xbf{\"name\":\"bom\"}");
	assert_json(d.v[0].job, "{\"name\":\"bom\"}");
	cli_docs_done(&d);
}

static void
test_jobfile_json_errors(void **state)
{
	char	*cause;

	(void)state;
	cause = parse_fail("{\n  \"name\": \"a\"\n  \"count\": 2\n}\n");
	assert_string_equal(cause, "t.yaml:3:9: '}' expected near "
	    "'\"count\"'");
	free(cause);
	/* The position of an error in the second of several values. */
	cause = parse_fail("{\"name\":\"a\"}\n{\"name\":\n  \"b\" \"c\"}\n");
	assert_string_equal(cause, "t.yaml:3:9: '}' expected near '\"c\"'");
	free(cause);
	cause = parse_fail("{\"name\": \"a\", \"name\": \"b\"}");
	assert_non_null(strstr(cause, "duplicate object key"));
	free(cause);
}

static void
test_jobfile_read(void **state)
{
	struct unittest	*ut = unittest_new("test-yaml");
	char		*path, *cause = NULL;
	struct cli_docs	 d = { NULL, 0 };
	FILE		*f;

	(void)state;
	path = unittest_path(ut, "missing.yaml");
	assert_int_equal(cli_jobfile_read(path, &d, &cause), -ENOENT);
	assert_non_null(strstr(cause, "No such file or directory"));
	free(cause);
	cause = NULL;

	free(path);
	path = unittest_path(ut, "job.yaml");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("name: a\nimage: b\n---\nname: c\nimage: [\n", f);
	fclose(f);
	assert_int_equal(cli_jobfile_read(path, &d, &cause), -EINVAL);
	/* The file's own name leads, so editors can jump to it. */
	assert_true(strncmp(cause, path, strlen(path)) == 0);
	assert_true(strncmp(cause + strlen(path), ":6:1: ", 6) == 0);
	free(cause);
	cause = NULL;

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("name: a\n", f);
	fclose(f);
	assert_int_equal(cli_jobfile_read(path, &d, &cause), 0);
	assert_int_equal(d.n, 1);
	cli_docs_done(&d);
	free(path);
	unittest_free(ut);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_plain_types),
		cmocka_unit_test(test_yaml_quoted_stay_strings),
		cmocka_unit_test(test_yaml_job_shape),
		cmocka_unit_test(test_yaml_multidoc),
		cmocka_unit_test(test_yaml_anchors_and_merge),
		cmocka_unit_test(test_yaml_anchor_per_document),
		cmocka_unit_test(test_yaml_error_position),
		cmocka_unit_test(test_yaml_duplicate_key),
		cmocka_unit_test(test_yaml_bad_values),
		cmocka_unit_test(test_yaml_alias_bomb),
		cmocka_unit_test(test_yaml_deep_nesting),
		cmocka_unit_test(test_jobfile_not_a_mapping),
		cmocka_unit_test(test_jobfile_json_forms),
		cmocka_unit_test(test_jobfile_json_errors),
		cmocka_unit_test(test_jobfile_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
