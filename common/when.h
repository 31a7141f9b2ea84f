/*
 * when.h: points in time as people write them in job files -- RFC 3339
 * ("2026-12-01T09:00:00Z", "2026-12-01T09:00:00+01:00") -- and back, in
 * UTC, for normalized specs and tables. Knows no clock: callers pass
 * "now" where a duration must become a time.
 */
#ifndef GPUQ_WHEN_H
#define GPUQ_WHEN_H

#include <stddef.h>
#include <stdint.h>

#define WHEN_TEXT_MAX	32		/* "2026-12-01T09:00:00Z" + NUL */

/*
 * Parse an RFC 3339 date-time with a zone ("Z" or "+hh:mm"/"-hh:mm";
 * fractions of a second are dropped) into unix seconds in *ret. 0, or
 * -EINVAL when S is NULL or not one (a time without a zone is refused:
 * it would mean whatever zone gpuqd runs in). Google's APIs print the
 * same form: Compute Engine with an offset, Batch and Vertex AI in UTC
 * with up to nine fractional digits.
 */
int	 when_parse(const char *s, int64_t *ret);
/* T as "2026-12-01T08:00:00Z" into BUF (WHEN_TEXT_MAX); returns BUF. */
char	*when_format(int64_t t, char *buf, size_t len);
/*
 * A signed span as "+5h12m" or "-0h20m" (hours and minutes; days are
 * hours too, so columns line up) into BUF; returns BUF.
 */
char	*when_span(int64_t sec, char *buf, size_t len);

#endif
