/*
 * http.c: libcurl's multi interface driven by libuv -- curl's
 * docs/examples/multi-uv.c, finished: one uv_poll_t per socket curl asks
 * us to watch (its state hung on the socket with curl_multi_assign, freed
 * only in its close callback), one uv_timer_t for curl's timeout (0 ms
 * becomes 1 ms; -1 stops it), a negative poll status handed to curl as
 * CURL_CSELECT_ERR, and curl_multi_info_read drained after every action.
 *
 * On top: retries with full-jitter exponential backoff for answers that
 * may pass (DESIGN GH.6), Retry-After and RetryInfo honoured, a
 * request budget per API (sliding 60 s window), bearer tokens from a
 * token source (http.h; auth.c in gpuqd) with one forced refresh on 401,
 * and Google's error bodies parsed into struct gcp_error.
 *
 * A request's life (struct http_call, state in c->state):
 *
 *   start --> PENDING --budget slot, backoff over--> (token?) --> RUNNING
 *               ^   \--no token yet--> TOKEN --token--> RUNNING      |
 *               |                        \--no token, error--> done |
 *               +------ retryable failure, attempts left <-----------+
 *                                                       else --> done
 *
 * PENDING requests wait in one FIFO served by one timer (http->sched), so
 * nothing happens inside http_request_start() and every callback comes
 * from the loop. Knows nothing of what the APIs mean; logs at debug only,
 * and never the Authorization header, a token or a query string.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"

#define HTTP_MAX_BODY		(64 * 1024 * 1024)	/* answer cap */
#define HTTP_CONNECT_MS		10000
#define HTTP_RETRY_AFTER_MAX	300	/* s; longer waits are the caller's */
#define HTTP_WINDOW_MS		60000	/* budget window */
#define HTTP_MAX_CONNECTIONS	256

enum http_state {
	CALL_PENDING,		/* in http->pending: budget, backoff */
	CALL_TOKEN,		/* waiting on the token source */
	CALL_RUNNING,		/* easy handle in the multi */
	CALL_DONE,
};

struct http_call {
	struct http		*http;		/* borrowed; outlives calls */
	TAILQ_ENTRY(http_call)	 entry;		/* http->calls: every call */
	TAILQ_ENTRY(http_call)	 qentry;	/* http->pending */
	enum http_state		 state;
	struct http_token_wait	 waiter;	/* while CALL_TOKEN */

	CURL			*easy;
	struct curl_slist	*hdrs;		/* rebuilt per attempt */
	char			*method;
	char			*url;
	char			*logurl;	/* url without its query */
	char			*body;		/* owned copy, or NULL */
	size_t			 body_len;
	char			*content_type;
	char			**extra;	/* extra headers, copied */
	int			 flags;
	enum gcp_api		 api;
	int			 timeout_ms;
	int			 max_attempts;
	char			*token;		/* copy used by this attempt */

	http_cb			 cb;
	void			*arg;

	int			 attempts;
	int			 auth_retried;
	uint64_t		 started;	/* uv_now at start */
	uint64_t		 not_before;	/* uv_now of next attempt */

	/* The last attempt's answer. */
	char			*rbuf;
	size_t			 rlen, rsize;
	int			 too_big;
	long			 status;
	int			 retry_after;	/* header, seconds; -1 none */
	int			 curl_error;
	char			 errbuf[CURL_ERROR_SIZE];
	json_t			*json;
	struct gcp_error	 err;
};

struct http_sock {
	uv_poll_t		 poll;		/* poll.data == this */
	curl_socket_t		 fd;
	struct http		*http;		/* borrowed; outlives sockets */
	LIST_ENTRY(http_sock)	 entry;
};

struct http_budget {
	int			 limit;		/* per window; < 0: none */
	uint64_t		 window;	/* ms */
	uint64_t		*ring;	/* start times, oldest at head */
	int			 n, head;
};

TAILQ_HEAD(http_calls, http_call);

struct http {
	uv_loop_t		*loop;
	CURLM			*multi;
	uv_timer_t		 timer;		/* curl's timeout */
	uv_timer_t		 sched;		/* pending queue */
	int			 handles;	/* open libuv handles */
	int			 closing;	/* http_free() called */
	int			 cancelling;	/* in http_cancel_all() */
	const struct http_token_source *tokens;	/* borrowed, may be NULL */

	struct http_calls	 calls;		/* every live call */
	struct http_calls	 pending;	/* FIFO of CALL_PENDING */
	LIST_HEAD(, http_sock)	 socks;

	struct http_budget	 budget[GCP_API_MAX];
	struct http_api_stats	 api_stats[GCP_API_MAX];
	int			 base_ms, cap_ms, max_attempts;
	int			 timeout_ms, page_size;
	unsigned int		 seed;
	struct http_stats	 stats;
};

static void	http_sched_kick(struct http *, uint64_t delay);
static void	http_call_begin(struct http_call *);
static void	http_drain(struct http *);

static int	http_curl_inited;

/* Never free a poll handle before libuv is done with it. */
static void
http_sock_on_close(uv_handle_t *h)
{
	struct http_sock	*sock = h->data;
	struct http		*http = sock->http;

	free(sock);			/* the only place a socket dies */
	if (--http->handles == 0 && http->closing)
		free(http);
}

static void
http_on_close(uv_handle_t *h)
{
	struct http	*http = h->data;

	if (--http->handles == 0 && http->closing)
		free(http);
}

static void
http_sock_close(struct http_sock *sock)
{
	LIST_REMOVE(sock, entry);
	uv_poll_stop(&sock->poll);
	uv_close((uv_handle_t *)&sock->poll, http_sock_on_close);
}

static void
http_sock_on_poll(uv_poll_t *p, int status, int events)
{
	struct http_sock	*sock = p->data;
	struct http		*http = sock->http;
	int			 flags = 0, running;

	if (status < 0)
		flags = CURL_CSELECT_ERR;
	else {
		if (events & UV_READABLE)
			flags |= CURL_CSELECT_IN;
		if (events & UV_WRITABLE)
			flags |= CURL_CSELECT_OUT;
	}
	/* SOCK may be closed inside: do not touch it after this call. */
	(void)curl_multi_socket_action(http->multi, sock->fd, flags, &running);
	http_drain(http);
}

/* CURLMOPT_SOCKETFUNCTION: watch, change or forget one socket. */
static int
http_cb_socket(CURL *easy, curl_socket_t s, int action, void *userp,
    void *socketp)
{
	struct http		*http = userp;
	struct http_sock	*sock = socketp;
	int			 events = 0, rc;

	switch (action) {
	case CURL_POLL_IN:
	case CURL_POLL_OUT:
	case CURL_POLL_INOUT:
		if (sock == NULL) {
			sock = xcalloc(1, sizeof *sock);
			sock->fd = s;
			sock->http = http;
			rc = uv_poll_init_socket(http->loop, &sock->poll, s);
			if (rc != 0) {
				log_debug("http: cannot watch socket %d: %s",
				    (int)s, uv_strerror(rc));
				free(sock);
				return -1;
			}
			sock->poll.data = sock;
			http->handles++;
			LIST_INSERT_HEAD(&http->socks, sock, entry);
			curl_multi_assign(http->multi, s, sock);
		}
		if (action != CURL_POLL_IN)
			events |= UV_WRITABLE;
		if (action != CURL_POLL_OUT)
			events |= UV_READABLE;
		rc = uv_poll_start(&sock->poll, events, http_sock_on_poll);
		if (rc != 0)
			log_debug("http: poll on socket %d: %s", (int)s,
			    uv_strerror(rc));
		break;
	case CURL_POLL_REMOVE:
		if (sock != NULL) {
			curl_multi_assign(http->multi, s, NULL);
			http_sock_close(sock);
		}
		break;
	}
	return 0;
}

static void
http_on_timeout(uv_timer_t *t)
{
	struct http	*http = t->data;
	int		 running;

	(void)curl_multi_socket_action(http->multi, CURL_SOCKET_TIMEOUT, 0,
	    &running);
	http_drain(http);
}

/* CURLMOPT_TIMERFUNCTION: one timer; 0 ms becomes 1 ms, never a call. */
static int
http_cb_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct http	*http = userp;

	if (timeout_ms < 0)
		uv_timer_stop(&http->timer);
	else
		uv_timer_start(&http->timer, http_on_timeout,
		    timeout_ms == 0 ? 1 : (uint64_t)timeout_ms, 0);
	return 0;
}

static size_t
http_cb_write(char *ptr, size_t size, size_t n, void *userp)
{
	struct http_call	*c = userp;
	size_t			 len = size * n;

	if (c->rlen + len > HTTP_MAX_BODY) {
		c->too_big = 1;
		return 0;		/* aborts: CURLE_WRITE_ERROR */
	}
	if (c->rlen + len + 1 > c->rsize) {
		while (c->rlen + len + 1 > c->rsize)
			c->rsize = c->rsize ? c->rsize * 2 : 4096;
		c->rbuf = xrealloc(c->rbuf, c->rsize);
	}
	memcpy(c->rbuf + c->rlen, ptr, len);
	c->rlen += len;
	c->rbuf[c->rlen] = '\0';
	return len;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3). */
static int
http_parse_retry_after(const char *v)
{
	char	*end;
	long	 n;
	time_t	 t, now;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strtol(v, &end, 10);
	if (end != v && (*end == '\0' || *end == '\r' || *end == '\n' ||
	    *end == ' '))
		return n < 0 ? 0 : (n > 86400 ? 86400 : (int)n);
	t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	now = time(NULL);
	return t > now ? (int)(t - now) : 0;
}

static size_t
http_cb_header(char *buf, size_t size, size_t n, void *userp)
{
	struct http_call	*c = userp;
	size_t			 len = size * n;
	char			*line;

	if (len > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
		line = xstrndup(buf + 12, len - 12);
		c->retry_after = http_parse_retry_after(line);
		free(line);
	} else if (len > 5 && strncmp(buf, "HTTP/", 5) == 0)
		c->retry_after = -1;	/* a new answer: forget the last */
	return len;
}

/* Wipe and free S if the call carries secrets, else just free. */
static void
http_free_maybe_secret(char *s, size_t len, int secret)
{
	if (s != NULL && secret)
		explicit_bzero(s, len);
	free(s);
}

static void
http_hdrs_free(struct http_call *c)
{
	struct curl_slist	*l;

	/* The Authorization line is a secret: wipe every line. */
	for (l = c->hdrs; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(c->hdrs);
	c->hdrs = NULL;
}

static void
http_call_free(struct http_call *c)
{
	int	i;

	if (c->easy != NULL)
		curl_easy_cleanup(c->easy);
	http_hdrs_free(c);
	free(c->method);
	free(c->url);
	free(c->logurl);
	http_free_maybe_secret(c->body, c->body_len, 1);
	free(c->content_type);
	if (c->extra != NULL) {
		for (i = 0; c->extra[i] != NULL; i++)
			freezero_str(c->extra[i]);	/* may hold a bearer */
		free(c->extra);
	}
	freezero_str(c->token);
	http_free_maybe_secret(c->rbuf, c->rsize,
	    (c->flags & HTTP_SECRET) != 0);
	json_decref(c->json);
	gcp_error_done(&c->err);
	free(c);
}

/* Forget the last attempt's answer. */
static void
http_call_reset(struct http_call *c)
{
	http_free_maybe_secret(c->rbuf, c->rsize,
	    (c->flags & HTTP_SECRET) != 0);
	c->rbuf = NULL;
	c->rlen = c->rsize = 0;
	c->too_big = 0;
	c->status = 0;
	c->retry_after = -1;
	c->curl_error = 0;
	c->errbuf[0] = '\0';
	json_decref(c->json);
	c->json = NULL;
	gcp_error_done(&c->err);
}

/* Build the answer, take C off every list, call back, free C. */
static void
http_call_complete(struct http_call *c)
{
	struct http		*http = c->http;
	struct http_resp	 r;

	if (c->state == CALL_PENDING)
		TAILQ_REMOVE(&http->pending, c, qentry);
	c->state = CALL_DONE;
	TAILQ_REMOVE(&http->calls, c, entry);

	memset(&r, 0, sizeof r);
	r.status = c->status;
	r.json = c->json;
	r.body = c->rbuf != NULL ? c->rbuf : "";
	r.len = c->rlen;
	r.err = c->err;			/* moved; c->err is not freed twice */
	gcp_error_init(&c->err);
	r.curl_error = c->curl_error;
	r.curl_message = c->errbuf;
	r.attempts = c->attempts;
	r.elapsed = (double)(uv_now(http->loop) - c->started) / 1000.0;
	http->stats.completed++;
	if (r.err.kind != GCP_ERR_NONE && r.err.kind != GCP_ERR_CANCELLED)
		http->api_stats[c->api].errors++;

	if (r.err.kind != GCP_ERR_NONE) {
		log_debug("http: %s %s failed after %d attempt%s: %s %s",
		    c->method, c->logurl, c->attempts,
		    c->attempts == 1 ? "" : "s",
		    gcp_error_kind_name(r.err.kind),
		    (c->flags & HTTP_SECRET) ? "(secret)" : r.err.message);
	}
	c->cb(&r, c->arg);
	gcp_error_done(&r.err);
	http_call_free(c);
}

/* End C with an error of KIND and message MSG (no HTTP answer). */
static void
http_call_fail(struct http_call *c, enum gcp_error_kind kind,
    const char *msg)
{
	gcp_error_done(&c->err);
	c->err.kind = kind;
	c->err.message = xstrdup(msg);
	http_call_complete(c);
}

/* May this method be sent twice? (RFC 9110 9.2.2, plus HTTP_IDEMPOTENT.) */
static int
http_call_idempotent(struct http_call *c)
{
	if (c->flags & HTTP_IDEMPOTENT)
		return 1;
	return strcmp(c->method, "GET") == 0 ||
	    strcmp(c->method, "HEAD") == 0 ||
	    strcmp(c->method, "PUT") == 0 ||
	    strcmp(c->method, "DELETE") == 0 ||
	    strcmp(c->method, "OPTIONS") == 0;
}

/* Full jitter (AWS architecture blog): uniform in [0, min(cap, base*2^n)]. */
static uint64_t
http_backoff(struct http *http, int attempt)
{
	uint64_t	ceiling = (uint64_t)http->base_ms;
	int		i;

	for (i = 1; i < attempt && ceiling < (uint64_t)http->cap_ms; i++)
		ceiling *= 2;
	if (ceiling > (uint64_t)http->cap_ms)
		ceiling = (uint64_t)http->cap_ms;
	return (uint64_t)rand_r(&http->seed) % (ceiling + 1);
}

/* Put C back on the pending queue for another attempt after DELAY ms. */
static void
http_call_requeue(struct http_call *c, uint64_t delay)
{
	struct http	*http = c->http;

	c->state = CALL_PENDING;
	c->not_before = uv_now(http->loop) + delay;
	TAILQ_INSERT_TAIL(&http->pending, c, qentry);
	http_sched_kick(http, delay);
}

/* The attempt ended (curl result CC): finish, retry, or refresh. */
static void
http_call_done(struct http_call *c, CURLcode cc)
{
	struct http	*http = c->http;
	const char	*ct = NULL;
	char		*p;
	long		 nconn = 0;
	int		 retry = 0, transport;
	uint64_t	 delay;

	http->stats.in_flight--;
	c->curl_error = (int)cc;
	if (curl_easy_getinfo(c->easy, CURLINFO_NUM_CONNECTS, &nconn) ==
	    CURLE_OK && nconn > 0)
		http->stats.connects += (unsigned long)nconn;
	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
	curl_easy_getinfo(c->easy, CURLINFO_CONTENT_TYPE, &ct);
	if (cc != CURLE_OK && c->errbuf[0] == '\0')
		(void)snprintf(c->errbuf, sizeof c->errbuf, "%s",
		    curl_easy_strerror(cc));
	http_hdrs_free(c);

	transport = cc != CURLE_OK || c->too_big;

	log_debug("http: %s %s -> %ld%s%s (attempt %d, %llu ms)", c->method,
	    c->logurl, c->status, cc != CURLE_OK ? ", " : "",
	    cc != CURLE_OK ? c->errbuf : "", c->attempts,
	    (unsigned long long)(uv_now(http->loop) - c->started));

	if (transport) {
		gcp_error_done(&c->err);
		c->err.kind = GCP_ERR_TRANSPORT;
		if (c->too_big)
			c->err.message = xprintf("%s %s: answer larger than "
			    "%d MiB", c->method, c->logurl,
			    HTTP_MAX_BODY >> 20);
		else if (cc == CURLE_OPERATION_TIMEDOUT)
			c->err.message = xprintf("%s %s: no answer within "
			    "%d ms", c->method, c->logurl, c->timeout_ms);
		else
			c->err.message = xprintf("%s %s: %s", c->method,
			    c->logurl, c->errbuf);
		c->status = 0;
		switch (cc) {
		case CURLE_COULDNT_CONNECT:
			retry = 1;	/* nothing was sent: always safe */
			break;
		case CURLE_RECV_ERROR:
		case CURLE_SEND_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_PARTIAL_FILE:
			retry = http_call_idempotent(c);
			break;
		default:
			break;
		}
	} else {
		if (c->rlen > 0) {
			p = c->rbuf;
			while (*p == ' ' || *p == '\n' || *p == '\r' ||
			    *p == '\t')
				p++;
			if (*p == '{' || *p == '[')
				c->json = json_loadb(c->rbuf, c->rlen, 0,
				    NULL);
		}
		if (c->status >= 400 || c->status < 200) {
			gcp_error_from_http(&c->err, c->status, c->json,
			    c->rbuf, c->rlen);
			if (c->retry_after >= 0)
				c->err.retry_after = c->retry_after;
		}
		if (c->status == 401 && (c->flags & HTTP_AUTH) &&
		    !c->auth_retried && http->tokens != NULL) {
			/* H.3: drop the token, fetch a new one, retry once. */
			c->auth_retried = 1;
			http->stats.auth_retries++;
			http->tokens->invalidate(http->tokens->arg, c->token);
			log_debug("http: %s %s -> 401, refreshing the token",
			    c->method, c->logurl);
			http_call_reset(c);
			http_call_requeue(c, 0);
			return;
		}
		switch (c->status) {
		case 408: case 429: case 500: case 502: case 503: case 504:
			retry = c->err.kind != GCP_ERR_QUOTA &&
			    c->err.kind != GCP_ERR_STOCKOUT;
			break;
		case 403:
			retry = c->err.kind == GCP_ERR_RATE_LIMIT;
			break;
		default:
			break;
		}
		if (retry)
			retry = http_call_idempotent(c);
	}

	if (retry && (c->flags & HTTP_NO_RETRY))
		retry = 0;
	if (retry && c->attempts >= c->max_attempts)
		retry = 0;
	if (retry && http->closing)
		retry = 0;
	if (!retry) {
		http_call_complete(c);
		return;
	}
	if (c->err.retry_after >= 0) {
		if (c->err.retry_after > HTTP_RETRY_AFTER_MAX) {
			http_call_complete(c);	/* the caller decides */
			return;
		}
		delay = (uint64_t)c->err.retry_after * 1000;
	} else
		delay = http_backoff(http, c->attempts);
	log_debug("http: %s %s: retrying in %llu ms", c->method, c->logurl,
	    (unsigned long long)delay);
	http->stats.retries++;
	http->api_stats[c->api].retries++;
	http_call_reset(c);
	http_call_requeue(c, delay);
}

static void
http_drain(struct http *http)
{
	struct http_call	*c;
	CURLMsg			*msg;
	CURL			*easy;
	CURLcode		 cc;
	int			 left;

	while (!http->closing &&
	    (msg = curl_multi_info_read(http->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		cc = msg->data.result;
		c = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c);
		curl_multi_remove_handle(http->multi, easy);
		if (c != NULL)
			http_call_done(c, cc);
	}
}

/* Take a slot of API's budget now, or say in *WAIT when one frees. */
static int
http_budget_take(struct http *http, enum gcp_api api, uint64_t now,
    uint64_t *wait)
{
	struct http_budget	*b = &http->budget[api];
	uint64_t		 oldest;

	if (b->limit < 0)
		return 1;
	if (b->n < b->limit) {
		b->ring[(b->head + b->n) % b->limit] = now;
		b->n++;
		return 1;
	}
	oldest = b->ring[b->head];
	if (now >= oldest + b->window) {
		b->ring[b->head] = now;
		b->head = (b->head + 1) % b->limit;
		return 1;
	}
	*wait = oldest + b->window - now;
	return 0;
}

static void
http_on_sched(uv_timer_t *t)
{
	struct http		*http = t->data;
	struct http_call	*c, *next;
	uint64_t		 now, wait, soonest = UINT64_MAX;
	int			 held[GCP_API_MAX] = { 0 };

	now = uv_now(http->loop);
	for (c = TAILQ_FIRST(&http->pending); c != NULL; c = next) {
		next = TAILQ_NEXT(c, qentry);
		if (c->not_before > now) {
			if (c->not_before - now < soonest)
				soonest = c->not_before - now;
			continue;
		}
		/* FIFO per API: once one waits, the later ones do too. */
		if (held[c->api])
			continue;
		wait = 0;
		if (!http_budget_take(http, c->api, now, &wait)) {
			if (!held[c->api])
				http->stats.budget_waits++;
			held[c->api] = 1;
			if (wait < soonest)
				soonest = wait;
			continue;
		}
		TAILQ_REMOVE(&http->pending, c, qentry);
		http_call_begin(c);
		if (http->closing)
			return;
		/* Callbacks run above may have changed the queue. */
		next = TAILQ_FIRST(&http->pending);
		now = uv_now(http->loop);
	}
	if (soonest != UINT64_MAX)
		http_sched_kick(http, soonest);
}

/* Run the pending queue in DELAY ms (sooner if already due sooner). */
static void
http_sched_kick(struct http *http, uint64_t delay)
{
	uint64_t	due;

	if (http->closing)
		return;
	if (uv_is_active((uv_handle_t *)&http->sched)) {
		due = uv_timer_get_due_in(&http->sched);
		if (due <= delay)
			return;
	}
	uv_timer_start(&http->sched, http_on_sched, delay, 0);
}

/* Hand the configured easy handle to the multi. */
static void
http_call_transfer(struct http_call *c)
{
	struct http	*http = c->http;
	char		*line;
	CURLMcode	 mc;
	int		 i;

	if (c->easy == NULL) {
		if ((c->easy = curl_easy_init()) == NULL)
			fatalx("curl_easy_init failed");
		curl_easy_setopt(c->easy, CURLOPT_URL, c->url);
		curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
		curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c->easy, CURLOPT_HTTP_VERSION,
		    (long)CURL_HTTP_VERSION_2TLS);
		curl_easy_setopt(c->easy, CURLOPT_USERAGENT,
		    PACKAGE_NAME "/" PACKAGE_VERSION);
		curl_easy_setopt(c->easy, CURLOPT_ACCEPT_ENCODING, "");
		curl_easy_setopt(c->easy, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(c->easy, CURLOPT_FOLLOWLOCATION, 0L);
		/*
		 * curl silently re-sends a request whose reused connection
		 * turns out dead, even after the server may have read it: a
		 * request that must not run twice gets a fresh connection.
		 */
		if (!http_call_idempotent(c))
			curl_easy_setopt(c->easy, CURLOPT_FRESH_CONNECT, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
		curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
		curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, c->errbuf);
		curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION,
		    http_cb_write);
		curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
		curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION,
		    http_cb_header);
		curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, c);
		curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS,
		    (long)c->timeout_ms);
		curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS,
		    (long)(c->timeout_ms < HTTP_CONNECT_MS ? c->timeout_ms :
		    HTTP_CONNECT_MS));
		if (strcmp(c->method, "GET") == 0)
			curl_easy_setopt(c->easy, CURLOPT_HTTPGET, 1L);
		else if (strcmp(c->method, "HEAD") == 0)
			curl_easy_setopt(c->easy, CURLOPT_NOBODY, 1L);
		else {
			curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST,
			    c->method);
			if (c->body != NULL || strcmp(c->method, "POST") == 0 ||
			    strcmp(c->method, "PUT") == 0 ||
			    strcmp(c->method, "PATCH") == 0) {
				curl_easy_setopt(c->easy,
				    CURLOPT_POSTFIELDSIZE_LARGE,
				    (curl_off_t)c->body_len);
				curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS,
				    c->body != NULL ? c->body : "");
			}
		}
	}

	/* Headers: rebuilt per attempt, the token may have changed. */
	c->hdrs = curl_slist_append(c->hdrs, "Expect:");
	if (c->content_type != NULL) {
		line = xprintf("Content-Type: %s", c->content_type);
		c->hdrs = curl_slist_append(c->hdrs, line);
		free(line);
	}
	for (i = 0; c->extra != NULL && c->extra[i] != NULL; i++)
		c->hdrs = curl_slist_append(c->hdrs, c->extra[i]);
	if (c->token != NULL) {
		line = xprintf("Authorization: Bearer %s", c->token);
		c->hdrs = curl_slist_append(c->hdrs, line);
		freezero_str(line);
		/* User credentials bill quota to a project they name. */
		if (http->tokens != NULL &&
		    http->tokens->user_project != NULL) {
			line = xprintf("x-goog-user-project: %s",
			    http->tokens->user_project);
			c->hdrs = curl_slist_append(c->hdrs, line);
			free(line);
		}
	}
	if (c->hdrs == NULL)
		fatalx("curl_slist_append failed");
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->hdrs);

	c->attempts++;
	http->stats.attempts++;
	c->state = CALL_RUNNING;
	if ((mc = curl_multi_add_handle(http->multi, c->easy)) != CURLM_OK) {
		http_hdrs_free(c);
		http_call_fail(c, GCP_ERR_OTHER, curl_multi_strerror(mc));
		return;
	}
	if (++http->stats.in_flight > http->stats.max_in_flight)
		http->stats.max_in_flight = http->stats.in_flight;
}

static void
http_call_on_token(struct http_token_wait *w, const char *token, int error,
    const char *cause)
{
	struct http_call	*c = (struct http_call *)((char *)w -
	    offsetof(struct http_call, waiter));

	if (error < 0 || token == NULL) {
		http_call_fail(c, error == -ECANCELED ? GCP_ERR_CANCELLED :
		    GCP_ERR_AUTH, cause != NULL ? cause :
		    "no access token");
		return;
	}
	freezero_str(c->token);
	c->token = xstrdup(token);
	http_call_transfer(c);
}

/* An attempt may start: get a token if needed, then transfer. */
static void
http_call_begin(struct http_call *c)
{
	struct http	*http = c->http;
	const char	*tok;

	if ((c->flags & HTTP_AUTH) && http->tokens != NULL) {
		/* Set before asking: the answer may come inside get(). */
		c->state = CALL_TOKEN;
		c->waiter.cb = http_call_on_token;
		tok = http->tokens->get(http->tokens->arg, &c->waiter);
		if (tok == NULL)
			return;		/* http_call_on_token() has C now */
		c->state = CALL_PENDING;
		freezero_str(c->token);
		c->token = xstrdup(tok);
	}
	http_call_transfer(c);
}

int
http_request_start(struct http *http, const struct http_req *req,
    http_cb cb, void *arg)
{
	struct http_call	*c;
	const char		*q;
	size_t			 n;
	int			 i;

	if (req->url == NULL || cb == NULL)
		return -EINVAL;
	if (http->closing || http->cancelling)
		return -ESHUTDOWN;
	if ((unsigned)req->api >= GCP_API_MAX)
		return -EINVAL;

	c = xcalloc(1, sizeof *c);
	c->http = http;
	c->method = xstrdup(req->method != NULL ? req->method : "GET");
	c->url = xstrdup(req->url);
	q = strchr(c->url, '?');
	c->logurl = q != NULL ? xstrndup(c->url, (size_t)(q - c->url)) :
	    xstrdup(c->url);
	if (req->json != NULL) {
		c->body = json_dumps(req->json, JSON_COMPACT);
		if (c->body == NULL)
			fatalx("http: cannot serialize a request body");
		c->body_len = strlen(c->body);
		c->content_type = xstrdup("application/json");
	} else if (req->body != NULL) {
		c->body = xmalloc(req->body_len + 1);
		memcpy(c->body, req->body, req->body_len);
		c->body[req->body_len] = '\0';
		c->body_len = req->body_len;
		if (req->content_type != NULL)
			c->content_type = xstrdup(req->content_type);
	}
	if (req->headers != NULL) {
		for (n = 0; req->headers[n] != NULL; n++)
			;
		c->extra = xcalloc(n + 1, sizeof *c->extra);
		for (i = 0; (size_t)i < n; i++)
			c->extra[i] = xstrdup(req->headers[i]);
	}
	c->flags = req->flags;
	c->api = req->api;
	c->timeout_ms = req->timeout_ms > 0 ? req->timeout_ms :
	    http->timeout_ms;
	c->max_attempts = req->max_attempts > 0 ? req->max_attempts :
	    http->max_attempts;
	c->cb = cb;
	c->arg = arg;
	c->retry_after = -1;
	gcp_error_init(&c->err);
	c->started = uv_now(http->loop);
	TAILQ_INSERT_TAIL(&http->calls, c, entry);
	http->stats.started++;
	http->api_stats[c->api].calls++;
	http_call_requeue(c, 0);
	return 0;
}

void
http_cancel_all(struct http *http)
{
	struct http_call	*c;

	if (http == NULL)
		return;
	http->cancelling = 1;
	while ((c = TAILQ_FIRST(&http->calls)) != NULL) {
		switch (c->state) {
		case CALL_TOKEN:
			if (http->tokens != NULL)
				http->tokens->cancel(http->tokens->arg,
				    &c->waiter);
			break;
		case CALL_RUNNING:
			curl_multi_remove_handle(http->multi, c->easy);
			http->stats.in_flight--;
			break;
		default:
			break;
		}
		http_call_fail(c, GCP_ERR_CANCELLED,
		    "cancelled: the HTTP client is shutting down");
	}
	http->cancelling = 0;
}

void
http_free(struct http *http)
{
	struct http_sock	*sock;
	int			 i;

	if (http == NULL)
		return;
	http_cancel_all(http);
	http->closing = 1;
	if (http->multi != NULL) {
		curl_multi_cleanup(http->multi);
		http->multi = NULL;
	}
	/* Sockets curl did not take back in the cleanup. */
	while ((sock = LIST_FIRST(&http->socks)) != NULL)
		http_sock_close(sock);
	for (i = 0; i < GCP_API_MAX; i++)
		free(http->budget[i].ring);
	uv_timer_stop(&http->timer);
	uv_timer_stop(&http->sched);
	uv_close((uv_handle_t *)&http->timer, http_on_close);
	uv_close((uv_handle_t *)&http->sched, http_on_close);
}

void
http_set_token_source(struct http *http,
    const struct http_token_source *src)
{
	http->tokens = src;
}

void
http_set_retry(struct http *http, int base_ms, int cap_ms, int max_attempts)
{
	if (base_ms > 0)
		http->base_ms = base_ms;
	if (cap_ms > 0)
		http->cap_ms = cap_ms;
	if (max_attempts > 0)
		http->max_attempts = max_attempts;
}

void
http_set_budget(struct http *http, enum gcp_api api, int limit,
    int window_ms)
{
	struct http_budget	*b;

	if ((unsigned)api >= GCP_API_MAX)
		return;
	b = &http->budget[api];
	free(b->ring);
	b->ring = NULL;
	b->n = b->head = 0;
	b->limit = limit > 0 ? limit : -1;
	/* Google's per-minute quotas run on Google's clock: under a
	 * simulated one (tests only) the window is a simulated minute
	 * (doc/DESIGN.md "Simulated time"). */
	b->window = clock_real_ms(window_ms > 0 ? (uint64_t)window_ms :
	    HTTP_WINDOW_MS);
	if (b->limit > 0)
		b->ring = xcalloc((size_t)b->limit, sizeof *b->ring);
}

void
http_get_stats(struct http *http, struct http_stats *ret)
{
	struct http_call	*c;

	*ret = http->stats;
	ret->queued = 0;
	TAILQ_FOREACH(c, &http->calls, entry)
		if (c->state == CALL_PENDING || c->state == CALL_TOKEN)
			ret->queued++;
}

void
http_get_api_stats(struct http *http, enum gcp_api api,
    struct http_api_stats *ret)
{
	if ((unsigned)api >= GCP_API_MAX) {
		memset(ret, 0, sizeof *ret);
		return;
	}
	*ret = http->api_stats[api];
}

uv_loop_t *
http_loop(struct http *http)
{
	return http->loop;
}

int
http_page_size(struct http *http, int api_max)
{
	if (http->page_size > 0 && http->page_size < api_max)
		return http->page_size;
	return api_max;
}

void
http_set_page_size(struct http *http, int page_size)
{
	http->page_size = page_size > 0 ? page_size : 0;
}

int
http_new(uv_loop_t *loop, const struct gcp_conf *conf, struct http **ret)
{
	struct http	*http;
	int		 i, budget;

	if (!http_curl_inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -EIO;
		http_curl_inited = 1;
	}
	http = xcalloc(1, sizeof *http);
	http->loop = loop;
	TAILQ_INIT(&http->calls);
	TAILQ_INIT(&http->pending);
	LIST_INIT(&http->socks);
	http->base_ms = conf->retry_base_ms > 0 ? conf->retry_base_ms :
	    GCP_DEFAULT_RETRY_BASE_MS;
	http->cap_ms = conf->retry_cap_ms > 0 ? conf->retry_cap_ms :
	    GCP_DEFAULT_RETRY_CAP_MS;
	http->max_attempts = conf->retry_max_attempts > 0 ?
	    conf->retry_max_attempts : GCP_DEFAULT_ATTEMPTS;
	http->timeout_ms = conf->request_timeout_ms > 0 ?
	    conf->request_timeout_ms : GCP_DEFAULT_TIMEOUT_MS;
	http->page_size = conf->page_size;
	http->seed = (unsigned int)time(NULL) ^ (unsigned int)(uintptr_t)http;
	budget = conf->request_budget == 0 ? GCP_DEFAULT_BUDGET :
	    conf->request_budget;
	for (i = 0; i < GCP_API_MAX; i++) {
		http->budget[i].limit = -1;
		http_set_budget(http, (enum gcp_api)i, budget, 0);
	}

	if ((http->multi = curl_multi_init()) == NULL) {
		free(http);
		return -ENOMEM;
	}
	curl_multi_setopt(http->multi, CURLMOPT_SOCKETFUNCTION,
	    http_cb_socket);
	curl_multi_setopt(http->multi, CURLMOPT_SOCKETDATA, http);
	curl_multi_setopt(http->multi, CURLMOPT_TIMERFUNCTION, http_cb_timer);
	curl_multi_setopt(http->multi, CURLMOPT_TIMERDATA, http);
	curl_multi_setopt(http->multi, CURLMOPT_PIPELINING,
	    (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(http->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
	    (long)HTTP_MAX_CONNECTIONS);

	uv_timer_init(loop, &http->timer);
	http->timer.data = http;
	uv_timer_init(loop, &http->sched);
	http->sched.data = http;
	http->handles = 2;
	*ret = http;
	return 0;
}
