/*
 * frame.h: split a byte stream into newline-terminated lines of at most
 * GPUQ_MAX_LINE bytes. Used by both ends of the socket.
 */
#ifndef GPUQ_FRAME_H
#define GPUQ_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct frame {
	char	*buf;
	size_t	 len;		/* bytes held */
	size_t	 cap;
	size_t	 off;		/* start of the next unread line */
	size_t	 scan;		/* bytes after off already searched for \n */
	size_t	 max;		/* longest line allowed */
	int	 discarding;	/* skipping the rest of an over-long line */
};

void	frame_init(struct frame *, size_t max);
void	frame_done(struct frame *);
/* Append bytes read from the peer. */
void	frame_feed(struct frame *, const char *, size_t);
/*
 * Next complete line, without its newline, NUL-terminated, borrowed
 * until the next frame_feed or frame_next. Returns 1 with *line and *len
 * set, 0 when more bytes are needed, or -EMSGSIZE once per line that
 * is longer than the limit (its bytes are then skipped up to its
 * newline, so the stream stays in step).
 */
int	frame_next(struct frame *, char **line, size_t *len);
/* Bytes buffered and not yet returned. */
size_t	frame_pending(const struct frame *);

/* 1 if the bytes are well-formed UTF-8 (no overlongs or surrogates). */
int	utf8_valid(const char *, size_t);
/*
 * Length of the well-formed UTF-8 sequence at S (N bytes left), with
 * its code point in *ret_cp (may be NULL); 0 when the bytes there are
 * not one (RFC 3629 section 4: no overlongs, surrogates or past
 * U+10FFFF).
 */
size_t	utf8_decode(const char *s, size_t n, uint32_t *ret_cp);

#endif
