/*
 * log.h: the one logger of gpuqd and gpuq, in the OpenBSD shape.
 *
 * log_warn() appends strerror(errno); log_warnx() does not. errno
 * survives every call. Under the journal (JOURNAL_STREAM set, or
 * log_init(..., 1)) each line carries an sd-daemon "<N>" priority prefix.
 */
#ifndef GPUQ_LOG_H
#define GPUQ_LOG_H

#include <sys/uio.h>

#include <stdarg.h>
#include <stdint.h>

enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

extern int log_verbosity;

void	log_init(const char *progname, int level, int journal);
int	log_level_parse(const char *s);
const char *log_level_name(int level);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug_(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/*
 * Structured journal fields (doc/DESIGN.md "Logging"): under journald a
 * line about a job goes to the journal with GPUQ_JOB=, GPUQ_ATTEMPT= and
 * GPUQ_STATE= beside MESSAGE=, so `journalctl GPUQ_JOB=42` shows one
 * job's story. gpuqd gives the sender (sd_journal_sendv) with
 * log_set_journal_sink(); the client never links libsystemd.
 */
#define LOG_FIELDS_MAX	6
struct log_fields {
	struct iovec	 iov[LOG_FIELDS_MAX];
	int		 n;
	char		 buf[4608];
};
/*
 * Fill F with the fields of MSG at LEVEL about JOB (0: read "job N" at
 * MSG's start, else none), ATTEMPT (0: none) and STATE (NULL: none).
 * Returns the number of fields; F's iov point into F.
 */
int	log_journal_fields(struct log_fields *f, int level, const char *msg,
	    int64_t job, int attempt, const char *state);
/* Send structured lines through SENDV when under the journal (NULL:
 * every line goes to stderr). */
void	log_set_journal_sink(int (*sendv)(const struct iovec *, int));
/* log_info() of a line about JOB, its ATTEMPT (0: none), STATE (NULL). */
void	log_job(int64_t job, int attempt, const char *state, const char *,
	    ...) __attribute__((format(printf, 4, 5)));

/* Debug costs nothing when off: the arguments are not even evaluated. */
#define log_debug(...) do {						\
	if (log_verbosity >= LOG_LEVEL_DEBUG)				\
		log_debug_(__VA_ARGS__);				\
} while (0)

#endif
