/*
 * gcptest.h: the simulated Google Cloud's part of the unit tests' one
 * fixture (unittest.h says how the parts fit): gcptest_fake() starts a
 * private tests/fakegcp/fakegcp.py in the fixture's directory and fills
 * a configuration pointing every API at it; gcptest_http() and
 * gcptest_auth() build the HTTP client and its token source on the
 * fixture's loop. Then what tests of the cloud share: the fake's control
 * API, service-account keys, its request log, and a tiny server for
 * shapes the fake does not produce.
 *
 * Test code only: blocking calls are fine here, never in gpuqd.
 */
#ifndef GPUQ_GCPTEST_H
#define GPUQ_GCPTEST_H

#include <jansson.h>

#include "providers/gcp/gcp.h"

#include "tests/unit/unittest.h"

/*
 * The fixture's simulated cloud, started in UT's directory, with HOME
 * pointing there and no credential variable set
 * (unittest_clean_env()),
 * UT->gcp for it (fake_conf()), and UT's loop. When /usr/bin/python3 or
 * the fake is missing, UT->fake.pid stays 0 and UT->gcp names no
 * endpoint: the test fails at NEED_FAKE(). Fails the test if the fake
 * does not start.
 */
void	 gcptest_fake(struct unittest *ut);
/* UT->http on UT's loop for UT->gcp as the test left it (after
 * gcptest_fake()). */
void	 gcptest_http(struct unittest *ut);
/* UT->auth for UT->gcp (after gcptest_http()), as UT->http's token
 * source; fails the test, saying why, if auth_new() refuses. */
void	 gcptest_auth(struct unittest *ut);
/* Cancel UT->http's requests: each callback is called, now. */
void	 gcptest_cancel(struct unittest *ut);

struct http_req;
struct http_resp;

/* One HTTP response, copied out of the callback. */
struct gcptest_rec {
	int		 done;		/* callbacks so far */
	long		 status;
	enum gcp_error_kind kind;
	int		 attempts;
	double		 elapsed;
	char		*msg;
	json_t		*json;
	struct gcp_error err;
	int		*count;		/* shared counter, or NULL */
};

/* An http_resp_cb filling the struct gcptest_rec ARG. */
void	 gcptest_rec_cb(const struct http_resp *r, void *arg);
/* Free what REC holds and zero it. */
void	 gcptest_rec_done(struct gcptest_rec *rec);
/* Start REQ on UT->http, run the loop until it has nothing left to do,
 * and assert REC was called back once. */
void	 gcptest_request(struct unittest *ut, const struct http_req *req,
	    struct gcptest_rec *rec);
/* gcptest_request() of an authenticated Compute Engine GET of URL. */
void	 gcptest_get(struct unittest *ut, const char *url,
	    struct gcptest_rec *rec);

/* What a callback taking (int error, const char *cause, void *arg) said:
 * a quota or price refresh's (quota_cb, price_cb). */
struct gcptest_result {
	int		 calls;
	int		 error;
	char		*cause;		/* a copy, or NULL */
};

/* A quota_cb or price_cb filling the struct gcptest_result ARG. */
void	 gcptest_result_cb(int error, const char *cause, void *arg);
/* Free what RES holds and zero it. */
void	 gcptest_result_done(struct gcptest_result *res);

/* 1 if tests/fakegcp/fakegcp.py and /usr/bin/python3 exist. */
int	 fake_available(void);
/* The fake started with its state in DIR (kept by fake_stop()), its URL
 * read. 0, or -errno. */
int	 fake_start_in(struct fake *, const char *dir);
/* Stop the fake (or mini_start()'s server). */
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
/* Fill C for the fake: endpoint (none when F is NULL or not running),
 * project, quick retries. */
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
 * stop with fake_stop() (DIR is left empty).
 */
int	 mini_start(struct fake *f, const char *body);

/*
 * In a test body: fail, saying why, when the fake did not start in the
 * setup (a missing /usr/bin/python3 or tests/fakegcp is a failure, never
 * a skip). T is the fixture (unittest.h).
 */
#define NEED_FAKE(t) do {						\
	if ((t)->fake.pid <= 0)						\
		fail_msg("the simulated cloud did not start: %s",	\
		    fake_available() ? "see its stderr above" :		\
		    "/usr/bin/python3 or tests/fakegcp/fakegcp.py is "	\
		    "missing");						\
} while (0)

#endif
