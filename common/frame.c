/*
 * frame.c: newline framing with a hard line limit. Knows nothing of JSON.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/xmalloc.h"

void
frame_init(struct frame *f, size_t max)
{
	memset(f, 0, sizeof *f);
	f->max = max;
}

void
frame_done(struct frame *f)
{
	free(f->buf);
	memset(f, 0, sizeof *f);
}

/* Drop consumed bytes so the buffer does not grow without end. */
static void
frame_compact(struct frame *f)
{
	if (f->off == 0)
		return;
	memmove(f->buf, f->buf + f->off, f->len - f->off);
	f->len -= f->off;
	f->off = 0;
}

void
frame_feed(struct frame *f, const char *data, size_t n)
{
	frame_compact(f);
	if (f->len + n + 1 > f->cap) {
		size_t	cap = f->cap ? f->cap : 4096;

		while (cap < f->len + n + 1)
			cap *= 2;
		f->buf = xrealloc(f->buf, cap);
		f->cap = cap;
	}
	memcpy(f->buf + f->len, data, n);
	f->len += n;
}

int
frame_next(struct frame *f, char **line, size_t *len)
{
	char	*start, *nl;
	size_t	 avail;

	for (;;) {
		start = f->buf + f->off;
		avail = f->len - f->off;
		nl = avail > f->scan ?
		    memchr(start + f->scan, '\n', avail - f->scan) : NULL;
		if (f->discarding) {
			if (nl == NULL) {
				f->off = f->len;	/* drop it all */
				f->scan = 0;
				return 0;
			}
			f->off += (size_t)(nl - start) + 1;
			f->scan = 0;
			f->discarding = 0;
			continue;
		}
		if (nl == NULL) {
			f->scan = avail;
			if (avail > f->max) {
				f->discarding = 1;
				f->off = f->len;
				f->scan = 0;
				return -EMSGSIZE;
			}
			return 0;
		}
		*len = (size_t)(nl - start);
		f->off += *len + 1;
		f->scan = 0;
		if (*len > f->max)
			return -EMSGSIZE;
		*nl = '\0';
		if (*len > 0 && start[*len - 1] == '\r')
			start[--*len] = '\0';
		*line = start;
		return 1;
	}
}

size_t
frame_pending(const struct frame *f)
{
	return f->len - f->off;
}

size_t
utf8_decode(const char *s, size_t n, uint32_t *ret_cp)
{
	const unsigned char	*p = (const unsigned char *)s;
	uint32_t		 cp, min;
	size_t			 need, k;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		need = 0; cp = p[0]; min = 0;
	} else if ((p[0] & 0xe0) == 0xc0) {
		need = 1; cp = p[0] & 0x1f; min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		need = 2; cp = p[0] & 0x0f; min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		need = 3; cp = p[0] & 0x07; min = 0x10000;
	} else
		return 0;
	if (need >= n)
		return 0;
	for (k = 1; k <= need; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (ret_cp != NULL)
		*ret_cp = cp;
	return need + 1;
}

int
utf8_valid(const char *s, size_t n)
{
	size_t	i = 0, k;

	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = utf8_decode(s + i, n - i, NULL)) == 0)
			return 0;
		i += k;
	}
	return 1;
}
