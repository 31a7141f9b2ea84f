/*
 * strdist.h: how far apart two short strings are, for "did you mean"
 * hints (unknown region names, keys, commands).
 */
#ifndef GPUQ_STRDIST_H
#define GPUQ_STRDIST_H

#include <stddef.h>

/*
 * Optimal string alignment distance between A and B: insertions,
 * deletions, substitutions and swaps of two neighbours cost 1 each.
 * Strings longer than STRDIST_MAX bytes compare as STRDIST_MAX + 1 away.
 */
#define STRDIST_MAX	64
size_t	strdist(const char *a, const char *b);
/*
 * Of the N strings in V, the one closest to S, if it is close enough to
 * be a likely typo (at most a third of S's length, and at least 1 and
 * at most 3 edits); else NULL. Borrowed from V.
 */
const char *strdist_closest(const char *s, const char *const *v, size_t n);

#endif
