/*
 * jsonw.h: write JSON text into a growable buffer, piece by piece.
 *
 * Every reply gpuqd writes goes through here: the fast list pages, the
 * job and attempt objects, the error replies, and the trees the cloud
 * side builds with jansson (jsonw_json). Commas come by themselves: a
 * value or key written after another one in the same container is
 * preceded by one. Strings are escaped as JSON requires (quote,
 * backslash, every control character); bytes that are not well-formed
 * UTF-8 become U+FFFD, one per bad byte, so the text is always valid
 * JSON however bad the input. Allocation failure is fatal (xmalloc).
 *
 * Knows nothing of sockets, the protocol or the daemon.
 */
#ifndef GPUQ_JSONW_H
#define GPUQ_JSONW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JSONW_PREC_EXACT	17	/* digits that keep every double */

struct jsonw {
	char	*buf;		/* not NUL-terminated; NULL when empty */
	size_t	 len;
	size_t	 cap;
	int	 comma;		/* the next value or key needs a ',' */
	int	 prec;		/* significant digits of reals */
};

/* Empty writer, reals with JSONW_PREC_EXACT digits. */
void	 jsonw_init(struct jsonw *);
/* Free the buffer; W is left as jsonw_init leaves it, usable again. */
void	 jsonw_done(struct jsonw *);
/* Forget the text, keep the buffer for reuse. */
void	 jsonw_reset(struct jsonw *);
/* Room for N more bytes without a reallocation. */
void	 jsonw_reserve(struct jsonw *, size_t n);
/*
 * The text (new, LEN bytes in a buffer of *ret_cap > LEN, not
 * NUL-terminated): the caller frees it. W is left empty.
 */
char	*jsonw_take(struct jsonw *, size_t *ret_len, size_t *ret_cap);

void	 jsonw_object_begin(struct jsonw *);
void	 jsonw_object_end(struct jsonw *);
void	 jsonw_array_begin(struct jsonw *);
void	 jsonw_array_end(struct jsonw *);
/* An object key (escaped like any string); its value comes next. */
void	 jsonw_key(struct jsonw *, const char *key);
/* A key that is a literal needing no escaping: no scan, no strlen. */
#define JSONW_KEY(w, lit)	jsonw_key_raw((w), (lit), sizeof (lit) - 1)
void	 jsonw_key_raw(struct jsonw *, const char *key, size_t n);

/* S as a string, or null when S is NULL. */
void	 jsonw_string(struct jsonw *, const char *s);
/* N bytes of S (may hold NULs, escaped as \u0000). */
void	 jsonw_stringn(struct jsonw *, const char *s, size_t n);
/* A printf-formatted string. */
void	 jsonw_stringf(struct jsonw *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 jsonw_int(struct jsonw *, int64_t v);
/*
 * V with W's precision, as jansson writes reals: always with a '.' or
 * an exponent, so it reads back as a real; NaN and infinities as null.
 */
void	 jsonw_double(struct jsonw *, double v);
void	 jsonw_bool(struct jsonw *, int v);
void	 jsonw_null(struct jsonw *);
/* A value that is already JSON text (N bytes, trusted, not checked). */
void	 jsonw_raw(struct jsonw *, const char *json, size_t n);
/*
 * V (borrowed) as compact JSON, keys in their order; NULL as null.
 * Several times faster than json_dumps, and with jsonw's escaping.
 */
void	 jsonw_json(struct jsonw *, const json_t *v);
/* Append N bytes as they are: no comma, no escaping (splicing). */
void	 jsonw_put(struct jsonw *, const char *s, size_t n);

#endif
