/*
 * strdist.c: edit distances for "did you mean" hints. Small strings
 * only (names a person typed); nothing here allocates.
 */
#include "config.h"

#include <string.h>

#include "common/strdist.h"

static size_t
strdist_min3(size_t a, size_t b, size_t c)
{
	size_t	m = a < b ? a : b;

	return m < c ? m : c;
}

size_t
strdist(const char *a, const char *b)
{
	/* Three rows of the Wagner-Fischer table: i-2, i-1 and i. */
	size_t	row[3][STRDIST_MAX + 1], la = strlen(a), lb = strlen(b);
	size_t	i, j, cost, *cur, *prev, *prev2, d;

	if (la > STRDIST_MAX || lb > STRDIST_MAX)
		return STRDIST_MAX + 1;
	for (j = 0; j <= lb; j++)
		row[0][j] = j;
	for (i = 1; i <= la; i++) {
		cur = row[i % 3];
		prev = row[(i + 2) % 3];
		prev2 = row[(i + 1) % 3];
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			d = strdist_min3(prev[j] + 1, cur[j - 1] + 1,
			    prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
	}
	return row[la % 3][lb];
}

const char *
strdist_closest(const char *s, const char *const *v, size_t n)
{
	const char	*best = NULL;
	size_t		 i, d, bestd = STRDIST_MAX + 1, limit;

	limit = strlen(s) / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	for (i = 0; i < n; i++) {
		d = strdist(s, v[i]);
		if (d < bestd) {
			bestd = d;
			best = v[i];
		}
	}
	return bestd <= limit ? best : NULL;
}
