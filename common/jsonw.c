/*
 * jsonw.c: JSON text written into a growable buffer (see jsonw.h).
 *
 * Written for the speed of gpuqd's list replies (a page of a thousand
 * jobs at a time, 100,000 jobs for `gpuq status --all`): integers without
 * snprintf, keys given as literals, strings copied in runs. The text is
 * what jansson's json_dumps(JSON_COMPACT) would write for the same
 * value, except that bytes which are not UTF-8 become U+FFFD instead of
 * failing the whole dump.
 *
 * Knows nothing of sockets, the protocol or the daemon.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/frame.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/xmalloc.h"

#define JSONW_FIRST_CAP	256

void
jsonw_init(struct jsonw *w)
{
	memset(w, 0, sizeof *w);
	w->prec = JSONW_PREC_EXACT;
}

void
jsonw_done(struct jsonw *w)
{
	free(w->buf);
	jsonw_init(w);
}

void
jsonw_reset(struct jsonw *w)
{
	w->len = 0;
	w->comma = 0;
}

void
jsonw_reserve(struct jsonw *w, size_t n)
{
	size_t	cap;

	if (w->cap - w->len >= n)
		return;
	cap = w->cap ? w->cap : JSONW_FIRST_CAP;
	while (cap - w->len < n)
		cap *= 2;
	w->buf = xrealloc(w->buf, cap);
	w->cap = cap;
}

char *
jsonw_take(struct jsonw *w, size_t *ret_len, size_t *ret_cap)
{
	char	*buf;

	jsonw_reserve(w, 1);		/* cap > len: room for a newline */
	buf = w->buf;
	*ret_len = w->len;
	*ret_cap = w->cap;
	w->buf = NULL;
	w->len = w->cap = 0;
	w->comma = 0;
	return buf;
}

void
jsonw_put(struct jsonw *w, const char *s, size_t n)
{
	jsonw_reserve(w, n);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define JSONW_LIT(w, lit)	jsonw_put((w), (lit), sizeof (lit) - 1)

/* A value starts: its comma if one is due; the next one needs one. */
static inline void
jsonw_value(struct jsonw *w)
{
	if (w->comma) {
		jsonw_reserve(w, 1);
		w->buf[w->len++] = ',';
	}
	w->comma = 1;
}

void
jsonw_object_begin(struct jsonw *w)
{
	jsonw_value(w);
	JSONW_LIT(w, "{");
	w->comma = 0;
}

void
jsonw_object_end(struct jsonw *w)
{
	JSONW_LIT(w, "}");
	w->comma = 1;
}

void
jsonw_array_begin(struct jsonw *w)
{
	jsonw_value(w);
	JSONW_LIT(w, "[");
	w->comma = 0;
}

void
jsonw_array_end(struct jsonw *w)
{
	JSONW_LIT(w, "]");
	w->comma = 1;
}

/* The body of a string (no quotes): escaped, bad UTF-8 as U+FFFD. */
static void
jsonw_escape(struct jsonw *w, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + n;
	size_t			 run;
	char			 e[6];

	while (p < end) {
		for (run = 0; p + run < end && p[run] >= 0x20 &&
		    p[run] < 0x80 && p[run] != '"' && p[run] != '\\'; run++)
			;
		if (run > 0) {
			jsonw_reserve(w, run);
			memcpy(w->buf + w->len, p, run);
			w->len += run;
			p += run;
			continue;
		}
		if (*p >= 0x80) {
			run = utf8_decode((const char *)p, (size_t)(end - p),
			    NULL);
			if (run > 0)
				jsonw_put(w, (const char *)p, run);
			else {
				JSONW_LIT(w, "\\ufffd");
				run = 1;
			}
			p += run;
			continue;
		}
		switch (*p) {
		case '"':
			JSONW_LIT(w, "\\\"");
			break;
		case '\\':
			JSONW_LIT(w, "\\\\");
			break;
		case '\n':
			JSONW_LIT(w, "\\n");
			break;
		case '\t':
			JSONW_LIT(w, "\\t");
			break;
		case '\r':
			JSONW_LIT(w, "\\r");
			break;
		case '\b':
			JSONW_LIT(w, "\\b");
			break;
		case '\f':
			JSONW_LIT(w, "\\f");
			break;
		default:
			memcpy(e, "\\u00", 4);
			e[4] = hex[*p >> 4];
			e[5] = hex[*p & 0xf];
			jsonw_put(w, e, sizeof e);
			break;
		}
		p++;
	}
}

void
jsonw_key_raw(struct jsonw *w, const char *key, size_t n)
{
	jsonw_value(w);
	jsonw_reserve(w, n + 3);
	w->buf[w->len++] = '"';
	memcpy(w->buf + w->len, key, n);
	w->len += n;
	w->buf[w->len++] = '"';
	w->buf[w->len++] = ':';
	w->comma = 0;
}

void
jsonw_key(struct jsonw *w, const char *key)
{
	jsonw_value(w);
	JSONW_LIT(w, "\"");
	jsonw_escape(w, key, strlen(key));
	JSONW_LIT(w, "\":");
	w->comma = 0;
}

void
jsonw_stringn(struct jsonw *w, const char *s, size_t n)
{
	jsonw_value(w);
	jsonw_reserve(w, n + 2);
	w->buf[w->len++] = '"';
	jsonw_escape(w, s, n);
	jsonw_reserve(w, 1);
	w->buf[w->len++] = '"';
}

void
jsonw_string(struct jsonw *w, const char *s)
{
	if (s == NULL)
		jsonw_null(w);
	else
		jsonw_stringn(w, s, strlen(s));
}

void
jsonw_stringf(struct jsonw *w, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vasprintf");
	jsonw_stringn(w, s, (size_t)n);
	free(s);
}

void
jsonw_int(struct jsonw *w, int64_t v)
{
	char		 d[24];
	size_t		 n = 0;
	uint64_t	 u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	/* One reserve for the comma and the digits: a list page is a
	 * million numbers. */
	if (u < 10 && w->cap - w->len >= 3) {
		if (w->comma)
			w->buf[w->len++] = ',';
		w->comma = 1;
		if (v < 0)
			w->buf[w->len++] = '-';
		w->buf[w->len++] = (char)('0' + u);
		return;
	}
	jsonw_value(w);
	do {
		d[sizeof d - ++n] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		d[sizeof d - ++n] = '-';
	jsonw_put(w, d + sizeof d - n, n);
}

/* 1 if whole number V has at most PREC digits (so "%.*g" has no 'e'). */
static int
jsonw_int_fits(double v, int prec)
{
	static const double	pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
	};

	return fabs(v) < pow10[prec];
}

void
jsonw_double(struct jsonw *w, double v)
{
	char	d[48], *e, *x;
	int	n;

	if (!isfinite(v)) {
		jsonw_null(w);
		return;
	}
	/*
	 * A whole number of fewer digits than the precision (most costs
	 * are 0) is what "%.*g" would print, plus ".0": written as an
	 * integer, without printf's float conversion, which was a sixth of
	 * gpuqd's time for a list page. Not -0: "%g" keeps its sign.
	 */
	if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v &&
	    !(v == 0 && signbit(v)) && w->prec >= 1 && w->prec <= 17 &&
	    jsonw_int_fits(v, w->prec)) {
		jsonw_int(w, (int64_t)v);
		JSONW_LIT(w, ".0");
		return;
	}
	jsonw_value(w);
	n = snprintf(d, sizeof d, "%.*g", w->prec, v);
	if (n <= 0 || (size_t)n >= sizeof d - 2)
		fatalx("jsonw: cannot format %g", v);
	if ((e = strchr(d, 'e')) != NULL) {
		/* "1e+20" as "1e20", "1e-08" as "1e-8", as jansson does. */
		e++;
		if (*e == '+')
			memmove(e, e + 1, strlen(e + 1) + 1);
		else if (*e == '-')
			e++;
		for (x = e; *x == '0' && x[1] != '\0'; x++)
			;
		memmove(e, x, strlen(x) + 1);
		n = (int)strlen(d);
	} else if (strchr(d, '.') == NULL) {
		d[n++] = '.';
		d[n++] = '0';
	}
	jsonw_put(w, d, (size_t)n);
}

void
jsonw_bool(struct jsonw *w, int v)
{
	jsonw_value(w);
	if (v)
		JSONW_LIT(w, "true");
	else
		JSONW_LIT(w, "false");
}

void
jsonw_null(struct jsonw *w)
{
	jsonw_value(w);
	JSONW_LIT(w, "null");
}

void
jsonw_raw(struct jsonw *w, const char *json, size_t n)
{
	jsonw_value(w);
	jsonw_put(w, json, n);
}

void
jsonw_json(struct jsonw *w, const json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (v == NULL) {
		jsonw_null(w);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		jsonw_object_begin(w);
		json_object_foreach((json_t *)v, key, e) {
			jsonw_key(w, key);
			jsonw_json(w, e);
		}
		jsonw_object_end(w);
		break;
	case JSON_ARRAY:
		jsonw_array_begin(w);
		json_array_foreach(v, i, e)
			jsonw_json(w, e);
		jsonw_array_end(w);
		break;
	case JSON_STRING:
		jsonw_stringn(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		jsonw_int(w, (int64_t)json_integer_value(v));
		break;
	case JSON_REAL:
		jsonw_double(w, json_real_value(v));
		break;
	case JSON_TRUE:
		jsonw_bool(w, 1);
		break;
	case JSON_FALSE:
		jsonw_bool(w, 0);
		break;
	default:
		jsonw_null(w);
		break;
	}
}
