/*
 * fuzz-frame.c: the socket's frame reader (common/frame.c) as the server
 * drives it: bytes arrive in chunks of any size, each chunk is followed
 * by frame_next until it wants more, and every complete line is checked
 * with utf8_valid. The lines that come out are compared with a plain
 * split of the stream on '\n': the same lines in the same order, one
 * -EMSGSIZE for each line over the limit, nothing lost or made up.
 *
 * Input: byte 0 picks the line limit (1..64, so long lines are common),
 * byte 1 the chunk sizes; the rest is the stream.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "fuzz/fuzz.h"

/*
 * The next result frame_next must give for the first N bytes of S, after
 * *POS; *SKIP is set while the model is inside an over-long line whose
 * newline has not come yet.
 */
static int
frame_model(const char *s, size_t n, size_t *pos, int *skip, size_t max,
    const char **line, size_t *len)
{
	const char	*nl;
	size_t		 l;

	for (;;) {
		nl = *pos < n ? memchr(s + *pos, '\n', n - *pos) : NULL;
		if (*skip) {
			if (nl == NULL)
				return 0;
			*pos = (size_t)(nl - s) + 1;
			*skip = 0;
			continue;
		}
		l = nl != NULL ? (size_t)(nl - (s + *pos)) : n - *pos;
		if (l > max) {
			if (nl != NULL)
				*pos += l + 1;
			else {
				*pos = n;
				*skip = 1;
			}
			return -EMSGSIZE;
		}
		if (nl == NULL)
			return 0;
		*line = s + *pos;
		*pos += l + 1;
		if (l > 0 && (*line)[l - 1] == '\r')
			l--;
		*len = l;
		return 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame	 f;
	const char	*s, *want;
	char		*line;
	size_t		 n, max, step, off, len, wlen, pos = 0, chunk;
	int		 rc, wrc, skip = 0;

	if (size < 2)
		return 0;
	max = 1 + data[0] % 64;
	step = data[1];
	s = (const char *)data + 2;
	n = size - 2;

	frame_init(&f, max);
	for (off = 0; off < n; off += chunk) {
		chunk = 1 + (step + off) % 23;
		if (chunk > n - off)
			chunk = n - off;
		frame_feed(&f, s + off, chunk);
		while ((rc = frame_next(&f, &line, &len)) != 0) {
			wrc = frame_model(s, off + chunk, &pos, &skip, max,
			    &want, &wlen);
			if (rc != wrc)
				abort();
			if (rc == 1 && (len != wlen || memcmp(line, want,
			    len) != 0 || line[len] != '\0'))
				abort();
			if (rc == 1)
				(void)utf8_valid(line, len);
		}
	}
	/* Nothing more is owed than the model says. */
	if (frame_model(s, n, &pos, &skip, max, &want, &wlen) != 0)
		abort();
	frame_done(&f);
	return 0;
}
