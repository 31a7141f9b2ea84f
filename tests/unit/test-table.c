/*
 * test-table.c: gpuq's tables and value formats (client/table.c,
 * client/fmt.c): columns sized to content, alignment, no trailing
 * blanks, the last column cut to a width, control characters made
 * harmless, and the cells gpuq status builds from a job; and the
 * scanner (client/jscan.c) that passes pages of jobs through unparsed.
 */
#include "config.h"

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

static const struct cli_col cols[] = {
	{ "ID", CLI_RIGHT },
	{ "NAME", CLI_LEFT },
	{ "WHY", CLI_LEFT },
};

/* Print T into a new string. */
static char *
render(struct cli_table *t, int width, int header)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_table_print(t, f, width, header);
	fclose(f);
	return buf;
}

static void
test_table_widths(void **state)
{
	struct cli_table	*t;
	char			*s;

	(void)state;
	t = cli_table_new(cols, 3);
	cli_table_add(t, "7");
	cli_table_add(t, "resnet");
	cli_table_add(t, "no quota");
	cli_table_add(t, "142");
	cli_table_add(t, "a");
	cli_table_add(t, "");
	assert_int_equal(cli_table_rows(t), 2);
	s = render(t, 0, 1);
	assert_string_equal(s,
	    " ID  NAME    WHY\n"
	    "  7  resnet  no quota\n"
	    "142  a\n");
	free(s);
	cli_table_free(t);
}

static void
test_table_null_cell_is_dash(void **state)
{
	struct cli_table	*t;
	char			*s;

	(void)state;
	t = cli_table_new(cols, 3);
	cli_table_addf(t, "%d", 5);
	cli_table_add(t, NULL);
	cli_table_add(t, "x");
	s = render(t, 0, 0);
	assert_string_equal(s, "5  -  x\n");
	free(s);
	cli_table_free(t);
}

static void
test_table_cut_last_column(void **state)
{
	struct cli_table	*t;
	char			*s;

	(void)state;
	t = cli_table_new(cols, 3);
	cli_table_add(t, "1");
	cli_table_add(t, "job");
	cli_table_add(t, "waiting for quota in us-central1 and europe-west4");
	/* "ID  NAME" takes 2+2+4+2 = 10 columns; 30 leaves 20 for WHY. */
	s = render(t, 30, 1);
	assert_string_equal(s,
	    "ID  NAME  WHY\n"
	    " 1  job   waiting for quota...\n");
	free(s);
	/* Never below a few characters, however narrow. */
	s = render(t, 5, 0);
	assert_string_equal(s, "1  job  waiti...\n");
	free(s);
	/* Wide enough: nothing cut. */
	s = render(t, 200, 0);
	assert_string_equal(s, "1  job  waiting for quota in us-central1 "
	    "and europe-west4\n");
	free(s);
	cli_table_free(t);
}

static void
test_table_last_column_below(void **state)
{
	struct cli_table	*t;
	char			*s;

	(void)state;
	t = cli_table_new(cols, 3);
	cli_table_set_below(t, 1);
	cli_table_add(t, "1");
	cli_table_add(t, "job");
	cli_table_add(t, "no free quota for 1xnvidia-tesla-t4 in us-central1 "
	    "(0 of 8 free; quota NVIDIA_T4_GPUS)");
	cli_table_add(t, "22");
	cli_table_add(t, "other");
	cli_table_add(t, "");
	/* Too wide for 30 columns: WHY leaves the table, whole, wrapped
	 * between words under its row; an empty WHY takes no line. */
	s = render(t, 30, 1);
	assert_string_equal(s,
	    "ID  NAME\n"
	    " 1  job\n"
	    "    no free quota for\n"
	    "    1xnvidia-tesla-t4 in\n"
	    "    us-central1 (0 of 8 free;\n"
	    "    quota NVIDIA_T4_GPUS)\n"
	    "22  other\n");
	free(s);
	/* A word longer than a line is not cut. */
	cli_table_free(t);
	t = cli_table_new(cols, 3);
	cli_table_set_below(t, 1);
	cli_table_add(t, "1");
	cli_table_add(t, "j");
	cli_table_add(t, "see gs://a-very-long-bucket-name/with/a/path ok");
	s = render(t, 20, 0);
	assert_string_equal(s,
	    "1  j\n"
	    "    see\n"
	    "    gs://a-very-long-bucket-name/with/a/path\n"
	    "    ok\n");
	free(s);
	/* Wide enough, or no width (not a terminal): a column as before. */
	s = render(t, 200, 0);
	assert_string_equal(s,
	    "1  j  see gs://a-very-long-bucket-name/with/a/path ok\n");
	free(s);
	s = render(t, 0, 0);
	assert_string_equal(s,
	    "1  j  see gs://a-very-long-bucket-name/with/a/path ok\n");
	free(s);
	cli_table_free(t);
}

static void
test_table_width_columns(void **state)
{
	(void)state;
	setenv("COLUMNS", "80", 1);
	assert_int_equal(cli_table_width(), 80);
	setenv("COLUMNS", "132", 1);
	assert_int_equal(cli_table_width(), 132);
	/* Not a number: as if unset; no terminal under make: no limit. */
	setenv("COLUMNS", "wide", 1);
	if (!isatty(STDOUT_FILENO))
		assert_int_equal(cli_table_width(), 0);
	unsetenv("COLUMNS");
}

static void
test_table_clean_controls(void **state)
{
	char	*s;

	(void)state;
	s = cli_table_clean("a\x1b[31mred\x07\n\tb\x7f");
	assert_string_equal(s, "a?[31mred???b?");
	free(s);
	/* UTF-8 stays; C1 controls and broken sequences do not. */
	s = cli_table_clean("caf\xc3\xa9 \xc2\x9b \xff \xe2\x82");
	assert_string_equal(s, "caf\xc3\xa9 ? ? ??");
	free(s);
}

static void
test_table_utf8_width(void **state)
{
	struct cli_table	*t;
	char			*s;

	(void)state;
	assert_int_equal(cli_table_strwidth("caf\xc3\xa9", 5), 4);
	t = cli_table_new(cols, 3);
	cli_table_add(t, "1");
	cli_table_add(t, "caf\xc3\xa9");
	cli_table_add(t, "x");
	cli_table_add(t, "2");
	cli_table_add(t, "tea");
	cli_table_add(t, "y");
	s = render(t, 0, 0);
	assert_string_equal(s, "1  caf\xc3\xa9  x\n2  tea   y\n");
	free(s);
	cli_table_free(t);
}

static void
test_table_formats(void **state)
{
	json_t	*acc, *att;
	char	 buf[64];

	(void)state;
	acc = json_pack("{s:s, s:i}", "type", "nvidia-tesla-t4", "count", 2);
	assert_string_equal(cli_fmt_gpu(acc, buf, sizeof buf), "2xT4");
	json_decref(acc);
	acc = json_pack("{s:s, s:i}", "type", "NVIDIA_L4", "count", 1);
	assert_string_equal(cli_fmt_gpu(acc, buf, sizeof buf), "1xL4");
	json_decref(acc);
	acc = json_pack("{s:s}", "type", "tpu-v9");
	assert_string_equal(cli_fmt_gpu(acc, buf, sizeof buf), "tpu-v9");
	json_decref(acc);
	assert_string_equal(cli_fmt_gpu(NULL, buf, sizeof buf), "-");

	att = json_pack("{s:s, s:s, s:s}", "provider", "gce", "region",
	    "us-central1", "zone", "us-central1-a");
	assert_string_equal(cli_fmt_where(att, buf, sizeof buf),
	    "gce/us-central1-a");
	json_decref(att);
	att = json_pack("{s:s, s:s, s:n}", "provider", "vertex", "region",
	    "europe-west4", "zone");
	assert_string_equal(cli_fmt_where(att, buf, sizeof buf),
	    "vertex/europe-west4");
	json_decref(att);
	assert_string_equal(cli_fmt_where(NULL, buf, sizeof buf), "-");

	assert_string_equal(cli_fmt_usd(1.234, buf, sizeof buf), "$1.23");
	assert_string_equal(cli_fmt_usd(0, buf, sizeof buf), "$0.00");
	assert_string_equal(cli_fmt_age(3725, buf, sizeof buf), "1h02m");
	assert_string_equal(cli_fmt_time(0, buf, sizeof buf), "-");
	assert_string_equal(cli_fmt_user(0, buf, sizeof buf), "root");
	assert_string_equal(cli_fmt_user(4000000000LL, buf, sizeof buf),
	    "4000000000");
}

static void
test_table_json_getters(void **state)
{
	json_t	*o;

	(void)state;
	o = json_pack("{s:i, s:f, s:s, s:n}", "i", 7, "r", 2.5, "s", "x",
	    "z");
	assert_int_equal(cli_json_int(o, "i", -1), 7);
	assert_int_equal(cli_json_int(o, "r", -1), 2);
	assert_int_equal(cli_json_int(o, "s", -1), -1);
	assert_int_equal(cli_json_int(o, "missing", -1), -1);
	assert_string_equal(cli_json_str(o, "s"), "x");
	assert_null(cli_json_str(o, "z"));
	assert_null(cli_json_str(NULL, "s"));
	assert_true(cli_json_num(o, "i", 0) == 7.0);
	assert_true(cli_json_num(o, "z", 1.5) == 1.5);
	json_decref(o);
}

static void
test_jscan_member(void **state)
{
	static const char	 reply[] = " {\"ok\" : true, \"jobs\":[{\"id\":1,"
	    "\"name\":\"a \\\"q\\\" ]}\"},{\"id\":2,\"x\":[[],{}]}], "
	    "\"next\":2, \"counts\":{\"queued\":2}}";
	const char		*v, *pos, *end;
	size_t			 n;

	(void)state;
	assert_int_equal(cli_jscan_member(reply, strlen(reply), "ok", &v, &n),
	    1);
	assert_int_equal(n, 4);
	assert_memory_equal(v, "true", 4);
	assert_int_equal(cli_jscan_member(reply, strlen(reply), "next", &v,
	    &n), 1);
	assert_int_equal(n, 1);
	assert_int_equal(*v, '2');
	assert_int_equal(cli_jscan_member(reply, strlen(reply), "missing", &v,
	    &n), 0);
	/* A key's prefix is not the key. */
	assert_int_equal(cli_jscan_member(reply, strlen(reply), "nex", &v,
	    &n), 0);

	assert_int_equal(cli_jscan_member(reply, strlen(reply), "jobs", &pos,
	    &n), 1);
	end = pos + n;
	assert_int_equal(cli_jscan_next(&pos, end, &v, &n), 1);
	assert_int_equal(n, strlen("{\"id\":1,\"name\":\"a \\\"q\\\" ]}\"}"));
	assert_memory_equal(v, "{\"id\":1,", 8);
	assert_int_equal(cli_jscan_next(&pos, end, &v, &n), 1);
	assert_int_equal(n, strlen("{\"id\":2,\"x\":[[],{}]}"));
	assert_int_equal(cli_jscan_next(&pos, end, &v, &n), 0);

	pos = "[ ]";
	assert_int_equal(cli_jscan_next(&pos, pos + 3, &v, &n), 0);
}

static void
test_jscan_malformed(void **state)
{
	static const char *const bad[] = {
		"", "[", "{\"ok\":", "{\"ok\" true}", "{\"ok\":true,}",
		"{\"ok\":\"open}", "{ok:true}", "{\"a\":[1,2}", "{\"a\":x}",
	};
	const char	*v;
	size_t		 n, i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (cli_jscan_member(bad[i], strlen(bad[i]), "zz", &v, &n) !=
		    -1)
			fail_msg("accepted '%s'", bad[i]);
}

static int
count_member(const char *k, size_t kl, const char *v, size_t vl, void *arg)
{
	(void)k;
	(void)v;
	(void)vl;
	*(size_t *)arg += kl;
	return 0;
}

static void
test_jscan_scalars(void **state)
{
	static const struct {
		const char	*json;
		const char	*want;	/* NULL: not a string */
	} strs[] = {
		{ "\"plain\"", "plain" },
		{ "\"q\\\"b\\\\s\\/\"", "q\"b\\s/" },
		{ "\"\\n\\t\\r\\b\\f\"", "\n\t\r\b\f" },
		{ "\"caf\\u00e9 \\u20ac\"", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" },
		{ "\"lone \\ud800 x\"", "lone ? x" },
		{ "\"nul \\u0000\"", "nul ?" },
		{ "\"\"", "" },
		{ "null", NULL }, { "12", NULL }, { "\"open", NULL },
		{ "\"bad \\u12g4\"", NULL },
	};
	char	*s;
	size_t	 i, n = 0;

	(void)state;
	for (i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		s = cli_jscan_string(strs[i].json, strlen(strs[i].json));
		if (strs[i].want == NULL)
			assert_null(s);
		else {
			assert_non_null(s);
			assert_string_equal(s, strs[i].want);
		}
		free(s);
	}
	assert_int_equal(cli_jscan_int("142", 3, -1), 142);
	assert_int_equal(cli_jscan_int("-7", 2, 0), -7);
	assert_int_equal(cli_jscan_int("2.9", 3, 0), 2);
	assert_int_equal(cli_jscan_int("null", 4, -1), -1);
	assert_int_equal(cli_jscan_int("\"5\"", 3, -1), -1);
	assert_true(cli_jscan_num("1.25", 4, 0) == 1.25);
	assert_true(cli_jscan_num("3", 1, 0) == 3.0);
	assert_true(cli_jscan_num("true", 4, -2) == -2.0);

	assert_int_equal(cli_jscan_object("{\"ab\":1, \"c\":{\"d\":[]}}", 23,
	    count_member, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(cli_jscan_object("{\"ab\":1,", 9, count_member, &n),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_widths),
		cmocka_unit_test(test_table_null_cell_is_dash),
		cmocka_unit_test(test_table_cut_last_column),
		cmocka_unit_test(test_table_clean_controls),
		cmocka_unit_test(test_table_utf8_width),
		cmocka_unit_test(test_table_last_column_below),
		cmocka_unit_test(test_table_width_columns),
		cmocka_unit_test(test_table_formats),
		cmocka_unit_test(test_table_json_getters),
		cmocka_unit_test(test_jscan_member),
		cmocka_unit_test(test_jscan_malformed),
		cmocka_unit_test(test_jscan_scalars),
	};

	/* Widths and the ellipsis follow LC_CTYPE: pin it. */
	setenv("LC_ALL", "C", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
