/*
 * log.h: the one logger of gpuqd and gpuq, in the OpenBSD shape.
 *
 * log_warn() appends strerror(errno); log_warnx() does not. errno
 * survives every call. Under the journal (JOURNAL_STREAM set, or
 * log_init(..., 1)) each line carries an sd-daemon "<N>" priority prefix.
 */
#ifndef GPUQ_LOG_H
#define GPUQ_LOG_H

#include <stdarg.h>

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

/* Debug costs nothing when off: the arguments are not even evaluated. */
#define log_debug(...) do {						\
	if (log_verbosity >= LOG_LEVEL_DEBUG)				\
		log_debug_(__VA_ARGS__);				\
} while (0)

#endif
