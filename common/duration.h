/*
 * duration.h: "90s", "15m", "2h30m", "1d" <-> seconds, for config files,
 * job files and tables.
 */
#ifndef GPUQ_DURATION_H
#define GPUQ_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parse into *ret_sec. A bare number is seconds. 0 or -EINVAL. */
int	duration_parse(const char *, int64_t *ret_sec);
/* Short human form into BUF: "45s", "12m", "3h05m", "2d04h". */
char	*duration_format(int64_t sec, char *buf, size_t len);

#endif
