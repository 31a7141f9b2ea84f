/*
 * duration.c: durations as people write them.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/duration.h"

int
duration_parse(const char *s, int64_t *ret_sec)
{
	int64_t		 total = 0, n, mult;
	const char	*p = s;
	char		*end;
	int		 parts = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0')
		return -EINVAL;
	while (*p != '\0' && !isspace((unsigned char)*p)) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		n = strtoll(p, &end, 10);
		if (errno != 0 || n > 100LL * 365 * 86400)
			return -EINVAL;
		switch (*end) {
		case '\0':
		case ' ':
			if (parts > 0)
				return -EINVAL;	/* "1h30" is ambiguous */
			mult = 1;
			break;
		case 's': mult = 1; end++; break;
		case 'm': mult = 60; end++; break;
		case 'h': mult = 3600; end++; break;
		case 'd': mult = 86400; end++; break;
		default:
			return -EINVAL;
		}
		total += n * mult;
		parts++;
		p = end;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '\0' || total > 100LL * 365 * 86400)
		return -EINVAL;
	*ret_sec = total;
	return 0;
}

char *
duration_format(int64_t sec, char *buf, size_t len)
{
	if (sec < 0)
		sec = 0;
	if (sec < 60)
		snprintf(buf, len, "%llds", (long long)sec);
	else if (sec < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(sec / 60),
		    (long long)(sec % 60));
	else if (sec < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(sec / 3600),
		    (long long)(sec % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(sec / 86400),
		    (long long)(sec % 86400 / 3600));
	return buf;
}
