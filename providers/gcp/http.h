/*
 * http.h: HTTP requests to Google Cloud on the libuv loop (libcurl multi).
 *
 * One struct http per daemon. Requests never block the loop; many run at
 * once over reused connections (HTTP/2 where the server offers it).
 * Failures that may pass are retried with full-jitter exponential backoff
 * (DESIGN GH.6), Retry-After and RetryInfo honoured; each API has a
 * request budget per minute and requests beyond it wait their turn
 * instead of failing. With a token source attached
 * (http_set_token_source), HTTP_AUTH requests carry a bearer token from
 * it, and a 401 drops that token and retries once with a new one.
 *
 * The HTTP layer knows token sources by the struct below only: auth.c is
 * one (gcp.c attaches it), a test's fixed token another. auth.c uses
 * this file to fetch its tokens; this file never uses auth.c.
 */
#ifndef GPUQ_HTTP_H
#define GPUQ_HTTP_H

#include <sys/queue.h>

#include <stddef.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct uv_loop_s;
struct http;

/* struct http_req flags. */
#define HTTP_IDEMPOTENT	0x01	/* POST/PATCH safe to repeat: requestId,
				   client-chosen name (DESIGN G0.4) */
#define HTTP_AUTH	0x02	/* add "Authorization: Bearer" */
#define HTTP_NO_RETRY	0x04	/* one attempt only (401 refresh aside) */
#define HTTP_SECRET	0x08	/* body or answer holds secrets: wiped on
				   free, never logged */

struct http_req {
	const char	 *method;	/* "GET" if NULL */
	const char	 *url;		/* gcp_url(); borrowed */
	json_t		 *json;		/* borrowed; serialized at start */
	const char	 *body;		/* raw body if json is NULL; copied */
	size_t		  body_len;
	const char	 *content_type;	/* for body; JSON's is implied */
	const char *const *headers;	/* "Name: value", NULL-terminated */
	int		  flags;	/* HTTP_* */
	enum gcp_api	  api;		/* budget bucket */
	int		  timeout_ms;	/* per attempt; 0: the default */
	int		  max_attempts;	/* 0: the default */
};

struct http_resp {
	long		  status;	/* HTTP status; 0 if none arrived */
	json_t		 *json;		/* borrowed; NULL unless JSON */
	const char	 *body;		/* NUL-terminated; borrowed */
	size_t		  len;
	struct gcp_error  err;		/* kind GCP_ERR_NONE on 2xx */
	int		  curl_error;	/* CURLcode of the last attempt */
	const char	 *curl_message;	/* borrowed; "" if none */
	int		  attempts;	/* tries made, the last included */
	double		  elapsed;	/* seconds from start to callback */
};

/*
 * One request waiting for a bearer token, embedded in the HTTP layer's
 * request; the token source keeps it on its own queue (entry, queued,
 * seq are the source's). CB runs once: with TOKEN (borrowed, valid
 * during the call) and ERROR 0, or TOKEN NULL, ERROR < 0 (-ECANCELED:
 * the source is closing) and CAUSE saying why.
 */
struct http_token_wait {
	TAILQ_ENTRY(http_token_wait) entry;
	void		(*cb)(struct http_token_wait *, const char *token,
			    int error, const char *cause);
	int		  queued;	/* on the source's queue */
	unsigned long	  seq;		/* order of arrival */
};

/*
 * Where HTTP_AUTH requests get their token. Every function gets ARG.
 * Borrowed by the client: it must outlive http_set_token_source(NULL).
 */
struct http_token_source {
	/*
	 * A fresh token now (borrowed until the loop turns), leaving W
	 * alone; or NULL after queueing W, whose cb then runs exactly once
	 * unless cancel comes first: later from the loop, or before get
	 * returns when the source fails at once (auth.c cannot start its
	 * fetch). So the caller must not touch W's owner after a NULL.
	 */
	const char	*(*get)(void *arg, struct http_token_wait *w);
	/* Take W off the queue without calling it. Not queued: no-op. */
	void		 (*cancel)(void *arg, struct http_token_wait *w);
	/* An API answered 401 to TOKEN: drop it if it is still current. */
	void		 (*invalidate)(void *arg, const char *token);
	/* The project quota is billed to, sent as x-goog-user-project with
	 * each token (user credentials name one), or NULL. Borrowed. */
	const char	 *user_project;
	void		 *arg;
};

/*
 * Called exactly once per started request, never from inside
 * http_request_start(). RESP and everything it points to are borrowed
 * for the duration of the call.
 */
typedef void (*http_cb)(const struct http_resp *resp, void *arg);

/* Counters since http_new(), for tests and `gpuq` status. */
struct http_stats {
	unsigned long	 started;	/* requests accepted */
	unsigned long	 attempts;	/* transfers begun */
	unsigned long	 retries;	/* attempts after a failure */
	unsigned long	 auth_retries;	/* retries after a 401 */
	unsigned long	 budget_waits;	/* requests held by the budget */
	unsigned long	 connects;	/* new connections (the rest reused) */
	unsigned long	 completed;	/* callbacks made */
	int		 in_flight;	/* transfers running now */
	int		 queued;	/* waiting: budget, token or backoff */
	int		 max_in_flight;	/* high-water mark */
};

/* Counters of one API since http_new(), for metrics. */
struct http_api_stats {
	unsigned long	 calls;		/* requests started */
	unsigned long	 errors;	/* ended with an error (not cancelled) */
	unsigned long	 retries;	/* attempts after a failure */
};

/*
 * New client on LOOP with CONF's retry, timeout, budget and page
 * settings (CONF is read now, not kept). Returns 0 or a negative errno.
 */
int	 http_new(struct uv_loop_s *loop, const struct gcp_conf *conf,
	    struct http **ret);
/*
 * Cancel what is in flight (each callback runs once, kind
 * GCP_ERR_CANCELLED), free the multi handle and close every libuv
 * handle; the memory goes when the owner's uv_run() drains the closes.
 * NULL is fine.
 */
void	 http_free(struct http *);
/* Cancel every request in flight now, as http_free() does, but keep
 * the client usable. */
void	 http_cancel_all(struct http *);
/* Take HTTP_AUTH requests' tokens from SRC (borrowed; NULL detaches:
 * such requests then go without one). */
void	 http_set_token_source(struct http *,
	    const struct http_token_source *src);
/*
 * Retry policy: first backoff BASE_MS, doubling up to CAP_MS, full jitter,
 * at most MAX_ATTEMPTS tries. Values <= 0 keep the current one.
 */
void	 http_set_retry(struct http *, int base_ms, int cap_ms,
	    int max_attempts);
/*
 * At most LIMIT attempts at API in any WINDOW_MS (0: 60000); LIMIT <= 0:
 * no limit. Requests over it wait, in order, for a slot.
 */
void	 http_set_budget(struct http *, enum gcp_api, int limit,
	    int window_ms);
/*
 * Start REQ. Returns 0 and later calls CB(resp, ARG) exactly once; or
 * returns -EINVAL (no URL) or -ESHUTDOWN (client being freed) and never
 * calls CB.
 */
int	 http_request_start(struct http *, const struct http_req *req,
	    http_cb cb, void *arg);
/* Counters; *RET is filled. */
void	 http_get_stats(struct http *, struct http_stats *ret);
/* API's counters; *RET is filled (zeroes for an unknown API). */
void	 http_get_api_stats(struct http *, enum gcp_api,
	    struct http_api_stats *ret);
/* The loop the client runs on. */
struct uv_loop_s *http_loop(struct http *);
/* The page size listings should ask for: the configured one if set and
 * smaller, else API_MAX. */
int	 http_page_size(struct http *, int api_max);
/* Set the configured page size (0: each API's maximum); for tests. */
void	 http_set_page_size(struct http *, int page_size);

#endif
