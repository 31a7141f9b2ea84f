/*
 * log.c: leveled logging to stderr. Knows nothing of gpuq itself.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

int		 log_verbosity = LOG_LEVEL_INFO;
static int	 log_journal;
static const char *log_progname = "gpuq";
static int	(*log_sendv)(const struct iovec *, int);

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

void
log_set_journal_sink(int (*sendv)(const struct iovec *, int))
{
	log_sendv = sendv;
}

/* Append "NAME=VALUE" to F as one field; 0, or -1 when F is full. */
static int
log_field_add(struct log_fields *f, size_t *used, const char *name,
    const char *value)
{
	int	n;

	if (f->n >= LOG_FIELDS_MAX || *used >= sizeof f->buf)
		return -1;
	n = snprintf(f->buf + *used, sizeof f->buf - *used, "%s=%s", name,
	    value);
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof f->buf - *used)
		n = (int)(sizeof f->buf - *used - 1);	/* cut, kept */
	f->iov[f->n].iov_base = f->buf + *used;
	f->iov[f->n].iov_len = (size_t)n;
	f->n++;
	*used += (size_t)n + 1;
	return 0;
}

int
log_journal_fields(struct log_fields *f, int level, const char *msg,
    int64_t job, int attempt, const char *state)
{
	char		 num[32];
	size_t		 used = 0;
	const char	*p;

	f->n = 0;
	if (job == 0 && strncmp(msg, "job ", 4) == 0) {
		/* "job 42: ..." is how every line about a job starts. */
		for (p = msg + 4; *p >= '0' && *p <= '9'; p++)
			job = job * 10 + (*p - '0');
		if (p == msg + 4 || job > INT64_MAX / 10)
			job = 0;
	}
	(void)log_field_add(f, &used, "MESSAGE", msg);
	(void)snprintf(num, sizeof num, "%d", level);
	(void)log_field_add(f, &used, "PRIORITY", num);
	(void)log_field_add(f, &used, "SYSLOG_IDENTIFIER", log_progname);
	if (job > 0) {
		(void)snprintf(num, sizeof num, "%" PRId64, job);
		(void)log_field_add(f, &used, "GPUQ_JOB", num);
	}
	if (attempt > 0) {
		(void)snprintf(num, sizeof num, "%d", attempt);
		(void)log_field_add(f, &used, "GPUQ_ATTEMPT", num);
	}
	if (state != NULL)
		(void)log_field_add(f, &used, "GPUQ_STATE", state);
	return f->n;
}

static void
log_vwrite_job(int level, const char *suffix, int64_t job, int attempt,
    const char *state, const char *fmt, va_list ap)
{
	struct log_fields	 f;
	char			 line[4096], full[4200];
	int			 saved = errno;

	(void)vsnprintf(line, sizeof line, fmt, ap);
	(void)snprintf(full, sizeof full, "%s%s%s", line, suffix ? ": " : "",
	    suffix ? suffix : "");
	if (log_journal && log_sendv != NULL &&
	    log_journal_fields(&f, level, full, job, attempt, state) > 3 &&
	    log_sendv(f.iov, f.n) >= 0) {
		errno = saved;
		return;
	}
	if (log_journal)
		fprintf(stderr, "<%d>%s%s%s\n", level, line,
		    suffix ? ": " : "", suffix ? suffix : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_progname, line,
		    suffix ? ": " : "", suffix ? suffix : "");
	errno = saved;
}

static void
log_vwrite(int level, const char *suffix, const char *fmt, va_list ap)
{
	log_vwrite_job(level, suffix, 0, 0, NULL, fmt, ap);
}

void
log_job(int64_t job, int attempt, const char *state, const char *fmt, ...)
{
	va_list	ap;

	if (log_verbosity < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	log_vwrite_job(LOG_LEVEL_INFO, NULL, job, attempt, state, fmt, ap);
	va_end(ap);
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
