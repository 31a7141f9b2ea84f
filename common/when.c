/*
 * when.c: RFC 3339 date-times (https://www.rfc-editor.org/rfc/rfc3339
 * section 5.6) to unix seconds and back. timegm() would do the sum, but
 * it is not POSIX; days_from_civil below is the usual closed form.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/when.h"

/* Days from 1970-01-01 to Y-M-D of the proleptic Gregorian calendar. */
static int64_t
when_days(int64_t y, int m, int d)
{
	int64_t	era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* N digits at *P into *RET; advances *P. 0 or -1. */
static int
when_digits(const char **p, int n, int *ret)
{
	int	v = 0;

	while (n-- > 0) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*ret = v;
	return 0;
}

int
when_parse(const char *s, int64_t *ret)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	const char	*p = s;
	int		 y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0, leap;

	if (s == NULL)
		return -EINVAL;
	if (when_digits(&p, 4, &y) != 0 || *p++ != '-' ||
	    when_digits(&p, 2, &mo) != 0 || *p++ != '-' ||
	    when_digits(&p, 2, &d) != 0 ||
	    (*p != 'T' && *p != 't' && *p != ' '))
		return -EINVAL;
	p++;
	if (when_digits(&p, 2, &h) != 0 || *p++ != ':' ||
	    when_digits(&p, 2, &mi) != 0 || *p++ != ':' ||
	    when_digits(&p, 2, &se) != 0)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (when_digits(&p, 2, &oh) != 0 || *p++ != ':' ||
		    when_digits(&p, 2, &om) != 0 || oh > 23 || om > 59)
			return -EINVAL;
	} else
		return -EINVAL;
	if (*p != '\0')
		return -EINVAL;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || se > 60)
		return -EINVAL;
	if (se == 60)
		se = 59;	/* a leap second: unix time has none */
	*ret = when_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + se -
	    sign * (oh * 3600 + om * 60);
	return 0;
}

char *
when_format(int64_t t, char *buf, size_t len)
{
	int64_t	z, era, doe, yoe, y, doy, mp, d, m, sec;

	/* civil_from_days, the inverse of when_days. */
	sec = t % 86400;
	z = t / 86400;
	if (sec < 0) {
		sec += 86400;
		z--;
	}
	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	(void)snprintf(buf, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
	    (long long)y, (long long)m, (long long)d,
	    (long long)(sec / 3600), (long long)(sec / 60 % 60),
	    (long long)(sec % 60));
	return buf;
}

char *
when_span(int64_t sec, char *buf, size_t len)
{
	int64_t	a = sec < 0 ? -sec : sec;

	(void)snprintf(buf, len, "%c%lldh%02lldm", sec < 0 ? '-' : '+',
	    (long long)(a / 3600), (long long)(a / 60 % 60));
	return buf;
}
