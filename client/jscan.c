/*
 * jscan.c: find values in a JSON text without building it, for replies
 * that gpuq passes through as they are (gpuq status --json of a whole
 * queue: a hundred pages of a thousand jobs). One pass, no allocation;
 * it checks structure (brackets, strings, literals), not every rule of
 * JSON, so anything it refuses is left to jansson to report.
 */
#include "config.h"

#include <string.h>

#include "client/cli.h"

#define JSCAN_MAX_DEPTH	128

static const char *
jscan_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	return p;
}

/* Past the string starting at P (on its opening quote); NULL if open. */
static const char *
jscan_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if (*p == '"')
			return p + 1;
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
		if (strchr("-0123456789tfn", *p) == NULL)
			return NULL;
		while (p < end && strchr(",]} \t\r\n", *p) == NULL)
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
