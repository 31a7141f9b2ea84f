/*
 * gcptest.h: what the providers/gcp unit tests share -- starting and
 * stopping their own simulated Google Cloud (tests/fakegcp/fakegcp.py),
 * its control API, service-account keys, temp directories, and a
 * configuration pointing every API at the fake.
 *
 * Test code only: blocking calls are fine here, never in gpuqd.
 */
#ifndef GPUQ_GCPTEST_H
#define GPUQ_GCPTEST_H

#include <sys/types.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct fake {
	pid_t	 pid;
	char	 url[128];
	char	 dir[256];		/* the test's temp dir; state under */
};

/* 1 if tests/fakegcp/fakegcp.py and /usr/bin/python3 exist. */
int	 fake_available(void);
/* Temp dir, fake started in it, URL read. 0, or -errno. */
int	 fake_start(struct fake *);
/* Stop the fake, remove the temp dir. */
void	 fake_stop(struct fake *);
/*
 * Control API call (blocking): METHOD PATH with BODY (JSON text or NULL).
 * Returns the parsed answer (new), or NULL on failure.
 */
json_t	*fake_ctl(struct fake *, const char *method, const char *path,
	    const char *body);
/* fake_ctl with a printf-formatted JSON body; fails the test on error. */
json_t	*fake_post(struct fake *, const char *path, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Fill C for the fake: endpoint, project, quick retries. */
void	 fake_conf(struct fake *, struct gcp_conf *c);
/*
 * Write a service-account key file at PATH (mode 0600) for EMAIL, with
 * token_uri under the fake, and register its public half when REG.
 */
void	 fake_make_key(struct fake *, const char *path, const char *email,
	    int reg);
/*
 * The fake's request log entries whose path matches REGEX: new array.
 * The fake logs a request just after answering it, so this waits (up to
 * 2 s) until at least WANT entries are there.
 */
json_t	*fake_requests(struct fake *, const char *method, const char *regex,
	    size_t want);
/*
 * A tiny server (Python http.server) answering every request with 200
 * and BODY, for shapes the fake does not produce. Uses F's pid and url;
 * stop with fake_stop() (DIR is left empty and not removed).
 */
int	 mini_start(struct fake *f, const char *body);
/* Clear the credential variables ADC reads, and point HOME at DIR. */
void	 test_clean_env(const char *home);

/*
 * In a test body: fail, saying why, when the fake did not start in the
 * setup (a missing /usr/bin/python3 or tests/fakegcp is a failure, never
 * a skip). T has a struct fake named fake.
 */
#define NEED_FAKE(t) do {						\
	if ((t)->fake.pid <= 0)						\
		fail_msg("the simulated cloud did not start: %s",	\
		    fake_available() ? "see its stderr above" :		\
		    "/usr/bin/python3 or tests/fakegcp/fakegcp.py is "	\
		    "missing");						\
} while (0)

#endif
