/*
 * http.h: HTTP requests to Google Cloud on the libuv loop (libcurl multi).
 *
 * One struct http per daemon. Requests never block the loop; many run at
 * once over reused connections (HTTP/2 where the server offers it).
 * Failures that may pass are retried with full-jitter exponential backoff
 * (API-NOTES H.6), Retry-After and RetryInfo honoured; each API has a
 * request budget per minute and requests beyond it wait their turn
 * instead of failing. With an auth attached (http_set_auth), HTTP_AUTH
 * requests carry a bearer token, and a 401 refreshes it once and retries.
 */
#ifndef GPUQ_HTTP_H
#define GPUQ_HTTP_H

#include <stddef.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"

struct uv_loop_s;
struct http;
struct auth;

/* struct http_req flags. */
#define HTTP_IDEMPOTENT	0x01	/* POST/PATCH safe to repeat: requestId,
				   client-chosen name (API-NOTES 0.4) */
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
/* Attach AUTH (borrowed; NULL detaches) for HTTP_AUTH requests. */
void	 http_set_auth(struct http *, struct auth *);
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
/* The loop the client runs on. */
struct uv_loop_s *http_loop(struct http *);
/* The page size listings should ask for: the configured one if set and
 * smaller, else API_MAX. */
int	 http_page_size(struct http *, int api_max);
/* Set the configured page size (0: each API's maximum); for tests. */
void	 http_set_page_size(struct http *, int page_size);

#endif
