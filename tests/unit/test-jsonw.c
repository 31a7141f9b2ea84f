/*
 * test-jsonw.c: common/jsonw.c, the writer of every reply gpuqd sends:
 * escaping (quotes, backslashes, every control character), the policy
 * for bytes that are not UTF-8, commas through nesting, integers and
 * reals at their limits, and that jansson's parser reads back what was
 * written.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/jsonw.h"

/* W's text as a NUL-terminated string (new). */
static char *
text(struct jsonw *w)
{
	char	*s;

	s = malloc(w->len + 1);
	assert_non_null(s);
	memcpy(s, w->buf, w->len);
	s[w->len] = '\0';
	return s;
}

static void
assert_text(struct jsonw *w, const char *want)
{
	char	*s = text(w);

	assert_string_equal(s, want);
	free(s);
}

/* N bytes of S written as a string, parsed back by jansson. */
static json_t *
round_trip(const char *s, size_t n)
{
	struct jsonw	 w;
	json_error_t	 e;
	json_t		*v;

	jsonw_init(&w);
	jsonw_stringn(&w, s, n);
	v = json_loadb(w.buf, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (v == NULL)
		fail_msg("jansson cannot read %.*s: %s", (int)w.len, w.buf,
		    e.text);
	jsonw_done(&w);
	return v;
}

static void
test_jsonw_escapes(void **state)
{
	struct jsonw	 w;
	char		 all[32];
	json_t		*v;
	int		 i;

	jsonw_init(&w);
	jsonw_string(&w, "a\"b\\c\nd\te\rf\bg\fh/");
	assert_text(&w, "\"a\\\"b\\\\c\\nd\\te\\rf\\bg\\fh/\"");
	jsonw_reset(&w);
	jsonw_stringn(&w, "\x01\x1f\x00z", 4);
	assert_text(&w, "\"\\u0001\\u001f\\u0000z\"");
	jsonw_done(&w);

	/* Every control character reads back as itself. */
	for (i = 0; i < 32; i++)
		all[i] = (char)i;
	v = round_trip(all, sizeof all);
	assert_int_equal(json_string_length(v), sizeof all);
	assert_memory_equal(json_string_value(v), all, sizeof all);
	json_decref(v);
}

static void
test_jsonw_utf8(void **state)
{
	struct jsonw	 w;
	json_t		*v;
	/* é, €, 😀: well formed, passed through. */
	const char	*good = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

	jsonw_init(&w);
	jsonw_string(&w, good);
	assert_int_equal(w.len, strlen(good) + 2);
	v = round_trip(good, strlen(good));
	assert_string_equal(json_string_value(v), good);
	json_decref(v);

	/*
	 * Not UTF-8: a lone continuation byte, a truncated sequence at the
	 * end, an overlong '/', a surrogate, past U+10FFFF. Each bad byte
	 * becomes U+FFFD; good text around them stays.
	 */
	jsonw_reset(&w);
	jsonw_string(&w, "a\x80" "b");
	assert_text(&w, "\"a\\ufffdb\"");
	jsonw_reset(&w);
	jsonw_string(&w, "\xc3\xa9\xe2\x82");
	assert_text(&w, "\"\xc3\xa9\\ufffd\\ufffd\"");
	jsonw_reset(&w);
	jsonw_string(&w, "\xc0\xaf");
	assert_text(&w, "\"\\ufffd\\ufffd\"");
	jsonw_reset(&w);
	jsonw_string(&w, "\xed\xa0\x80");
	assert_text(&w, "\"\\ufffd\\ufffd\\ufffd\"");
	jsonw_reset(&w);
	jsonw_string(&w, "\xf4\x90\x80\x80");
	assert_text(&w, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	jsonw_done(&w);

	v = round_trip("x\xff\xfey", 4);
	assert_string_equal(json_string_value(v), "x\xef\xbf\xbd\xef\xbf\xbdy");
	json_decref(v);
}

static void
test_jsonw_nesting(void **state)
{
	struct jsonw	 w;

	jsonw_init(&w);
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "ok");
	jsonw_bool(&w, 1);
	JSONW_KEY(&w, "a");
	jsonw_array_begin(&w);
	jsonw_array_end(&w);
	JSONW_KEY(&w, "b");
	jsonw_array_begin(&w);
	jsonw_int(&w, 1);
	jsonw_object_begin(&w);
	jsonw_object_end(&w);
	jsonw_array_begin(&w);
	jsonw_null(&w);
	jsonw_bool(&w, 0);
	jsonw_array_end(&w);
	jsonw_string(&w, NULL);
	jsonw_array_end(&w);
	jsonw_key(&w, "k\"ey");
	jsonw_raw(&w, "{\"x\":1}", 7);
	JSONW_KEY(&w, "f");
	jsonw_stringf(&w, "%d-%s", 42, "z");
	jsonw_object_end(&w);
	assert_text(&w, "{\"ok\":true,\"a\":[],\"b\":[1,{},[null,false],"
	    "null],\"k\\\"ey\":{\"x\":1},\"f\":\"42-z\"}");
	jsonw_done(&w);
}

static void
test_jsonw_numbers(void **state)
{
	struct jsonw	 w;

	jsonw_init(&w);
	jsonw_array_begin(&w);
	jsonw_int(&w, 0);
	jsonw_int(&w, -1);
	jsonw_int(&w, INT64_MAX);
	jsonw_int(&w, INT64_MIN);
	jsonw_double(&w, 1.0);
	jsonw_double(&w, 0.1);
	jsonw_double(&w, -2.5e-8);
	jsonw_double(&w, 1e20);
	jsonw_double(&w, NAN);
	jsonw_double(&w, INFINITY);
	jsonw_array_end(&w);
	assert_text(&w, "[0,-1,9223372036854775807,-9223372036854775808,"
	    "1.0,0.10000000000000001,-2.4999999999999999e-8,1e20,null,null]");

	/* A reply's precision: 12 digits. */
	jsonw_reset(&w);
	w.prec = 12;
	jsonw_double(&w, 0.1 + 0.2);
	assert_text(&w, "0.3");
	jsonw_done(&w);
}

/*
 * Integral reals (written without printf) come out as printf would
 * write them: as jansson does at full precision, and with an exponent
 * once their digits pass a reply's precision.
 */
static void
test_jsonw_integral_reals(void **state)
{
	static const double	 v[] = { 0, 1, -1, 7, 10, 99, 100, 999, 1000,
	    -1234, 3600, 604800, 123456789012.0, 1e14, 999999999999999.0,
	    1e15, 1e16, 9007199254740992.0, -0.0, 1e300, 0.5 };
	struct jsonw		 w;
	json_t			*j;
	char			*dump;
	size_t			 i;

	jsonw_init(&w);
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		jsonw_reset(&w);
		jsonw_double(&w, v[i]);
		j = json_real(v[i]);
		dump = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
		assert_text(&w, dump);
		free(dump);
		json_decref(j);
	}
	jsonw_reset(&w);
	w.prec = 3;
	jsonw_array_begin(&w);
	jsonw_double(&w, 100);
	jsonw_double(&w, -999);
	jsonw_double(&w, 1000);
	jsonw_double(&w, -0.0);
	jsonw_array_end(&w);
	assert_text(&w, "[100.0,-999.0,1e3,-0.0]");
	jsonw_reset(&w);
	w.prec = 12;
	jsonw_array_begin(&w);
	jsonw_double(&w, 123456789012.0);
	jsonw_double(&w, 1234567890123.0);
	jsonw_array_end(&w);
	assert_text(&w, "[123456789012.0,1.23456789012e12]");
	jsonw_done(&w);
}

/* A tree written by jsonw_json reads back equal, and as jansson writes. */
static void
test_jsonw_json_round_trip(void **state)
{
	const char	*src = "{\"name\":\"t\\u00e9st\\n\",\"n\":-7,"
	    "\"r\":0.25,\"l\":[true,false,null,{\"k\":[]}],\"e\":{}}";
	struct jsonw	 w;
	json_t		*a, *b;
	char		*dump;

	a = json_loads(src, 0, NULL);
	assert_non_null(a);
	jsonw_init(&w);
	jsonw_json(&w, a);
	b = json_loadb(w.buf, w.len, 0, NULL);
	assert_non_null(b);
	assert_true(json_equal(a, b));
	dump = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_text(&w, dump);
	free(dump);
	json_decref(a);
	json_decref(b);
	jsonw_done(&w);
}

/* jsonw_take hands over the buffer with room for one more byte. */
static void
test_jsonw_take(void **state)
{
	struct jsonw	 w;
	char		*buf;
	size_t		 len, cap;

	jsonw_init(&w);
	jsonw_int(&w, 12345);
	buf = jsonw_take(&w, &len, &cap);
	assert_int_equal(len, 5);
	assert_true(cap > len);
	assert_memory_equal(buf, "12345", 5);
	assert_null(w.buf);
	assert_int_equal(w.len, 0);
	jsonw_int(&w, 1);		/* usable again, no comma */
	assert_text(&w, "1");
	free(buf);
	jsonw_done(&w);
}

/*
 * After jsonw_done a writer is as new: empty, and reals at full
 * precision again (the group commit frees a grown buffer and goes on
 * writing specs into it).
 */
static void
test_jsonw_done_reusable(void **state)
{
	struct jsonw	 w;

	jsonw_init(&w);
	w.prec = 3;
	jsonw_int(&w, 5);
	jsonw_done(&w);
	assert_null(w.buf);
	jsonw_double(&w, 0.1);
	assert_text(&w, "0.10000000000000001");
	jsonw_done(&w);
}

/*
 * Whole numbers take a path without printf: the text is still what
 * "%.*g" gives (with ".0"), at every precision, at the edge where %g
 * turns to an exponent, and for -0.
 */
static void
test_jsonw_whole_reals(void **state)
{
	static const double	 v[] = {
		0, -0.0, 1, -1, 3, 42, 1e11, 999999999999.0, 1e12,
		-123456789012.0, 123456789012.0, 1e14, 999999999999999.0,
		1e15, 9007199254740992.0, 1e16, 1e17, 1e300, 0.5, -2.25,
	};
	static const int	 prec[] = { 1, 2, 6, 12, 15, 16, 17 };
	struct jsonw		 w;
	char			 want[64], *e, *x;
	size_t			 i, k;
	int			 n;

	(void)state;
	for (k = 0; k < sizeof prec / sizeof prec[0]; k++)
		for (i = 0; i < sizeof v / sizeof v[0]; i++) {
			n = snprintf(want, sizeof want - 2, "%.*g", prec[k],
			    v[i]);
			if ((e = strchr(want, 'e')) != NULL) {
				e++;
				if (*e == '+')
					memmove(e, e + 1, strlen(e));
				else if (*e == '-')
					e++;
				for (x = e; *x == '0' && x[1] != '\0'; x++)
					;
				memmove(e, x, strlen(x) + 1);
			} else if (strchr(want, '.') == NULL)
				memcpy(want + n, ".0", 3);
			jsonw_init(&w);
			w.prec = prec[k];
			jsonw_double(&w, v[i]);
			assert_text(&w, want);
			jsonw_done(&w);
		}
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_jsonw_escapes),
		cmocka_unit_test(test_jsonw_utf8),
		cmocka_unit_test(test_jsonw_nesting),
		cmocka_unit_test(test_jsonw_numbers),
		cmocka_unit_test(test_jsonw_integral_reals),
		cmocka_unit_test(test_jsonw_whole_reals),
		cmocka_unit_test(test_jsonw_json_round_trip),
		cmocka_unit_test(test_jsonw_take),
		cmocka_unit_test(test_jsonw_done_reusable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
