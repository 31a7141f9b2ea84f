/*
 * fuzz-jscan.c: the client's JSON scanner (client/jscan.c) on any text,
 * walked as gpuq walks a reply: the members of an object, the elements
 * of its arrays, each scalar decoded. When jansson reads the same text
 * as an object, every string member the scanner decodes must equal
 * jansson's.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "fuzz/fuzz.h"

#define JSCAN_FUZZ_DEPTH	8

struct jscan_fuzz {
	json_t	*doc;		/* jansson's reading, or NULL */
	int	 depth;
};

static void	jscan_fuzz_value(const char *, size_t, int);

static int
jscan_fuzz_member(const char *key, size_t klen, const char *val,
    size_t vlen, void *arg)
{
	struct jscan_fuzz	*f = arg;
	char			*k, *s;
	json_t			*want;

	jscan_fuzz_value(val, vlen, f->depth + 1);
	if (f->doc == NULL || memchr(key, '\\', klen) != NULL)
		return 0;
	/* The raw key, between its quotes; compare only plain ones. */
	k = strndup(key, klen);
	want = json_object_get(f->doc, k);
	s = cli_jscan_string(val, vlen);
	if (json_is_string(want) && (s == NULL ||
	    strcmp(s, json_string_value(want)) != 0))
		abort();
	free(s);
	free(k);
	return 0;
}

static void
jscan_fuzz_value(const char *val, size_t vlen, int depth)
{
	struct jscan_fuzz	 f = { NULL, depth };
	const char		*pos, *v;
	size_t			 n;
	double			 d;

	free(cli_jscan_string(val, vlen));
	/*
	 * A number in float form outside int64_t has no integer value. The
	 * scanners read up to a NUL: 9223372036854775807 NUL 8e is the
	 * integer INT64_MAX (as a double, 2^63), not a float form.
	 */
	d = cli_jscan_num(val, vlen, 0);
	n = strnlen(val, vlen);
	if (cli_jscan_int(val, vlen, -1) != -1 && !(d >= -0x1p63 &&
	    d < 0x1p63) && (memchr(val, '.', n) != NULL ||
	    memchr(val, 'e', n) != NULL || memchr(val, 'E', n) != NULL))
		abort();
	if (depth >= JSCAN_FUZZ_DEPTH || vlen == 0)
		return;
	if (val[0] == '{')
		(void)cli_jscan_object(val, vlen, jscan_fuzz_member, &f);
	else if (val[0] == '[') {
		pos = val;
		while (cli_jscan_next(&pos, val + vlen, &v, &n) == 1)
			jscan_fuzz_value(v, n, depth + 1);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jscan_fuzz	 f = { NULL, 0 };
	const char		*s = (const char *)data, *v;
	size_t			 n;

	/*
	 * Compare with jansson only on what gpuqd sends: an object from
	 * the first byte, no NUL (jansson reads "1.\0" as 1).
	 */
	if (size > 0 && s[0] == '{' && memchr(s, '\0', size) == NULL)
		f.doc = json_loadb(s, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(f.doc)) {
		json_decref(f.doc);
		f.doc = NULL;
	}
	if (cli_jscan_object(s, size, jscan_fuzz_member, &f) < 0 &&
	    f.doc != NULL)
		abort();	/* refused what jansson reads */
	if (cli_jscan_member(s, size, "jobs", &v, &n) == 1)
		jscan_fuzz_value(v, n, 1);
	json_decref(f.doc);
	return 0;
}
