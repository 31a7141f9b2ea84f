/*
 * log.c: leveled logging to stderr. Knows nothing of gpuq itself.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

int		 log_verbosity = LOG_LEVEL_INFO;
static int	 log_journal;
static const char *log_progname = "gpuq";

/* Set the program name, the most verbose level shown, journal prefixes. */
void
log_init(const char *progname, int level, int journal)
{
	log_progname = progname;
	log_verbosity = level;
	log_journal = journal || getenv("JOURNAL_STREAM") != NULL;
}

static const struct {
	const char	*name;
	int		 level;
} log_levels[] = {
	{ "error", LOG_LEVEL_ERR },
	{ "warning", LOG_LEVEL_WARNING },
	{ "info", LOG_LEVEL_INFO },
	{ "debug", LOG_LEVEL_DEBUG },
};

/* Level from its name ("error", "warning", "info", "debug"); -1 if none. */
int
log_level_parse(const char *s)
{
	size_t	i;

	for (i = 0; i < sizeof log_levels / sizeof log_levels[0]; i++)
		if (strcasecmp(s, log_levels[i].name) == 0)
			return log_levels[i].level;
	return -1;
}

/* Name of a level, for the effective-configuration line. */
const char *
log_level_name(int level)
{
	size_t	i;

	for (i = 0; i < sizeof log_levels / sizeof log_levels[0]; i++)
		if (log_levels[i].level == level)
			return log_levels[i].name;
	return "unknown";
}

static void
log_vwrite(int level, const char *suffix, const char *fmt, va_list ap)
{
	char	 line[4096];
	int	 saved = errno;

	(void)vsnprintf(line, sizeof line, fmt, ap);
	if (log_journal)
		fprintf(stderr, "<%d>%s%s%s\n", level, line,
		    suffix ? ": " : "", suffix ? suffix : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_progname, line,
		    suffix ? ": " : "", suffix ? suffix : "");
	errno = saved;
}

#define LOG_BODY(level, suffix) do {					\
	va_list	ap;							\
	if (log_verbosity < (level))					\
		return;							\
	va_start(ap, fmt);						\
	log_vwrite((level), (suffix), fmt, ap);				\
	va_end(ap);							\
} while (0)

void
log_warn(const char *fmt, ...)
{
	const char	*e = strerror(errno);

	LOG_BODY(LOG_LEVEL_WARNING, e);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARNING, NULL);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_INFO, NULL);
}

void
log_debug_(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_DEBUG, NULL);
}

void
fatal(const char *fmt, ...)
{
	va_list		 ap;
	const char	*e = strerror(errno);

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, e, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
