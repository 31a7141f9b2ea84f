/*
 * jscan.c: find values in a JSON text without building it, for replies
 * that gpuq passes through as they are (gpuq status --json of a whole
 * queue: a hundred pages of a thousand jobs). One pass, no allocation;
 * it checks structure (brackets, strings, literals), not every rule of
 * JSON, so anything it refuses is left to jansson to report. Scalars
 * are decoded on demand (strings unescaped to UTF-8).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/cli.h"
#include "common/xmalloc.h"

#define JSCAN_MAX_DEPTH	128

/*
 * Bytes that may start a number or a literal, and bytes that end one:
 * looked up, not searched for with strchr() per byte (the scan of a
 * whole queue walks a few million of them).
 */
#define JSCAN_START	0x1
#define JSCAN_DELIM	0x2
static const unsigned char jscan_class[256] = {
	['-'] = JSCAN_START, ['0'] = JSCAN_START, ['1'] = JSCAN_START,
	['2'] = JSCAN_START, ['3'] = JSCAN_START, ['4'] = JSCAN_START,
	['5'] = JSCAN_START, ['6'] = JSCAN_START, ['7'] = JSCAN_START,
	['8'] = JSCAN_START, ['9'] = JSCAN_START, ['t'] = JSCAN_START,
	['f'] = JSCAN_START, ['n'] = JSCAN_START,
	[','] = JSCAN_DELIM, [']'] = JSCAN_DELIM, ['}'] = JSCAN_DELIM,
	[' '] = JSCAN_DELIM, ['\t'] = JSCAN_DELIM, ['\r'] = JSCAN_DELIM,
	['\n'] = JSCAN_DELIM,
};

static const char *
jscan_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	return p;
}

/*
 * Past the string starting at P (on its opening quote); NULL if open.
 * memchr() finds the next quote, and a backslash before it, if any,
 * moves the search past the character it escapes.
 */
static const char *
jscan_string(const char *p, const char *end)
{
	const char	*q, *b;

	for (p++; p < end; p = b + 2) {
		if ((q = memchr(p, '"', (size_t)(end - p))) == NULL)
			return NULL;
		if ((b = memchr(p, '\\', (size_t)(q - p))) == NULL)
			return q + 1;
	}
	return NULL;
}

/* Past the value starting at P (no leading space); NULL if malformed. */
static const char *
jscan_value(const char *p, const char *end, int depth)
{
	char	close;

	if (p >= end || depth > JSCAN_MAX_DEPTH)
		return NULL;
	switch (*p) {
	case '"':
		return jscan_string(p, end);
	case '{':
	case '[':
		close = *p == '{' ? '}' : ']';
		p = jscan_space(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (p >= end || *p != '"' ||
				    (p = jscan_string(p, end)) == NULL)
					return NULL;
				p = jscan_space(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = jscan_space(p + 1, end);
			}
			if ((p = jscan_value(p, end, depth + 1)) == NULL)
				return NULL;
			p = jscan_space(p, end);
			if (p >= end)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p != ',')
				return NULL;
			p = jscan_space(p + 1, end);
		}
	default:
		/* Numbers and literals: up to the next delimiter. */
		if (!(jscan_class[(unsigned char)*p] & JSCAN_START))
			return NULL;
		while (p < end &&
		    !(jscan_class[(unsigned char)*p] & JSCAN_DELIM))
			p++;
		return p;
	}
}

int
cli_jscan_member(const char *obj, size_t len, const char *key,
    const char **ret_val, size_t *ret_len)
{
	const char	*p = obj, *end = obj + len, *k, *kend, *v;
	size_t		 klen = strlen(key);

	p = jscan_space(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = jscan_space(p + 1, end);
	if (p < end && *p == '}')
		return 0;
	for (;;) {
		if (p >= end || *p != '"')
			return -1;
		k = p + 1;
		if ((p = jscan_string(p, end)) == NULL)
			return -1;
		kend = p - 1;		/* the closing quote */
		p = jscan_space(p, end);
		if (p >= end || *p != ':')
			return -1;
		v = jscan_space(p + 1, end);
		if ((p = jscan_value(v, end, 1)) == NULL)
			return -1;
		if ((size_t)(kend - k) == klen && memcmp(k, key, klen) == 0) {
			*ret_val = v;
			*ret_len = (size_t)(p - v);
			return 1;
		}
		p = jscan_space(p, end);
		if (p < end && *p == '}')
			return 0;
		if (p >= end || *p != ',')
			return -1;
		p = jscan_space(p + 1, end);
	}
}

int
cli_jscan_next(const char **pos, const char *end, const char **ret_val,
    size_t *ret_len)
{
	const char	*p = jscan_space(*pos, end), *v;

	if (p < end && *p == '[')		/* the first call */
		p = jscan_space(p + 1, end);
	else if (p < end && *p == ',')
		p = jscan_space(p + 1, end);
	if (p < end && *p == ']') {
		*pos = p + 1;
		return 0;
	}
	v = p;
	if ((p = jscan_value(v, end, 1)) == NULL)
		return -1;
	p = jscan_space(p, end);
	if (p >= end || (*p != ',' && *p != ']'))
		return -1;
	*ret_val = v;
	*ret_len = (size_t)(p - v);
	*pos = p;
	return 1;
}

/*
 * The members of object OBJ to CB in order, up to member LAST (NULL:
 * none), whose value's start goes to *RET_LAST unwalked. 0 at the end of
 * the object (or at LAST), -1 if OBJ is not one, else CB's non-zero.
 */
static int
jscan_members(const char *obj, size_t len, const char *last,
    cli_jscan_cb cb, void *arg, const char **ret_last)
{
	const char	*p = obj, *end = obj + len, *k, *kend, *v;
	size_t		 llen = last != NULL ? strlen(last) : 0;
	int		 rc;

	p = jscan_space(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = jscan_space(p + 1, end);
	if (p < end && *p == '}')
		return 0;
	for (;;) {
		if (p >= end || *p != '"')
			return -1;
		k = p + 1;
		if ((p = jscan_string(p, end)) == NULL)
			return -1;
		kend = p - 1;
		p = jscan_space(p, end);
		if (p >= end || *p != ':')
			return -1;
		v = jscan_space(p + 1, end);
		if (last != NULL && (size_t)(kend - k) == llen &&
		    memcmp(k, last, llen) == 0) {
			*ret_last = v;
			return 0;
		}
		if ((p = jscan_value(v, end, 1)) == NULL)
			return -1;
		if ((rc = cb(k, (size_t)(kend - k), v, (size_t)(p - v), arg)) != 0)
			return rc;
		p = jscan_space(p, end);
		if (p < end && *p == '}')
			return 0;
		if (p >= end || *p != ',')
			return -1;
		p = jscan_space(p + 1, end);
	}
}

int
cli_jscan_object(const char *obj, size_t len, cli_jscan_cb cb, void *arg)
{
	return jscan_members(obj, len, NULL, cb, arg, NULL);
}

int
cli_jscan_head(const char *obj, size_t len, const char *last,
    cli_jscan_cb cb, void *arg, const char **ret_last)
{
	const char	*found = NULL;
	int		 rc;

	rc = jscan_members(obj, len, last, cb, arg, &found);
	if (found != NULL) {
		*ret_last = found;
		return 1;
	}
	return rc > 0 ? -1 : rc;
}

/* Value of hex digit C, or -1. */
static int
jscan_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* \uXXXX at P (4 hex digits); -1 if malformed. */
static long
jscan_u4(const char *p, const char *end)
{
	long	v = 0;
	int	i, h;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = jscan_hex(p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t
jscan_utf8(long cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

char *
cli_jscan_string(const char *v, size_t vlen)
{
	const char	*p, *end = v + vlen - 1;
	char		*out, *o;
	long		 cp, lo;

	if (vlen < 2 || v[0] != '"' || v[vlen - 1] != '"')
		return NULL;
	/* Decoded text is never longer than its JSON form. */
	o = out = xmalloc(vlen);
	for (p = v + 1; p < end; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		if (++p >= end)
			break;
		switch (*p) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if ((cp = jscan_u4(p + 1, end)) < 0)
				goto bad;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p > 6 &&
			    p[1] == '\\' && p[2] == 'u' &&
			    (lo = jscan_u4(p + 3, end)) >= 0xdc00 &&
			    lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000)
				cp = '?';	/* a lone surrogate */
			if (cp == 0)
				cp = '?';	/* keep it a C string */
			o += jscan_utf8(cp, o);
			break;
		default:		/* \" \\ \/ */
			*o++ = *p;
			break;
		}
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

int64_t
cli_jscan_int(const char *v, size_t vlen, int64_t def)
{
	char		 buf[32], *end;
	long long	 n;
	double		 d;

	if (vlen == 0 || vlen >= sizeof buf || strchr("-0123456789",
	    v[0]) == NULL)
		return def;
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	errno = 0;
	n = strtoll(buf, &end, 10);
	if (*end == '.' || *end == 'e' || *end == 'E') {
		/* 1e999 and 1e19 have no int64_t: out of range is DEF. */
		d = strtod(buf, NULL);
		return d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : def;
	}
	/* 9223372036854775808 is no int64_t either (strtoll clamps). */
	return *end == '\0' && errno != ERANGE ? n : def;
}

double
cli_jscan_num(const char *v, size_t vlen, double def)
{
	char	 buf[64], *end;
	double	 d;

	if (vlen == 0 || vlen >= sizeof buf || strchr("-0123456789",
	    v[0]) == NULL)
		return def;
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	d = strtod(buf, &end);
	return *end == '\0' ? d : def;
}
