/*
 * gcp.c: the facade that owns the shared Google Cloud plumbing -- the
 * HTTP client, the credentials, the quota cache and the price table -- so
 * the daemon holds one object and frees it in the right order.
 *
 * Knows the order things are built and torn down in, and wires auth.c
 * into http.c as its token source (http.h); nothing else.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <uv.h>

#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/quota.h"
#include "providers/gcp/price.h"
#include "providers/gcp/reservation.h"

struct gcp {
	uv_loop_t		*loop;
	struct gcp_conf		*conf;		/* owned copy */
	struct http		*http;
	struct auth		*auth;
	struct quota		*quota;
	struct resv		*resv;
	struct price		*price;
};

int
gcp_new(uv_loop_t *loop, const struct gcp_conf *conf, struct gcp **ret,
    char **cause)
{
	struct gcp	*g;
	int		 rc;

	g = xcalloc(1, sizeof *g);
	g->loop = loop;
	g->conf = gcp_conf_dup(conf);
	if ((rc = http_new(loop, g->conf, &g->http)) < 0) {
		if (cause != NULL)
			*cause = xprintf("HTTP client: %s", uv_strerror(rc));
		goto fail;
	}
	if ((rc = auth_new(g->http, g->conf, &g->auth, cause)) < 0)
		goto fail;
	http_set_token_source(g->http, auth_token_source(g->auth));
	if ((rc = price_new(g->http, g->conf, &g->price, cause)) < 0)
		goto fail;
	if ((rc = quota_new(g->http, g->conf, &g->quota, cause)) < 0)
		goto fail;
	(void)resv_new(g->http, g->conf, &g->resv);
	/* The pass waits for the quota round; reservations join it. */
	quota_set_resv(g->quota, g->resv);
	*ret = g;
	return 0;

fail:
	gcp_free(g);
	return rc;
}

void
gcp_start(struct gcp *g)
{
	price_start(g->price);
}

void
gcp_free(struct gcp *g)
{
	if (g == NULL)
		return;
	/* Cancel first: every module's callback still finds it alive. */
	if (g->http != NULL)
		http_cancel_all(g->http);
	quota_free(g->quota);
	resv_free(g->resv);
	price_free(g->price);
	if (g->http != NULL)
		http_set_token_source(g->http, NULL);
	auth_free(g->auth);
	http_free(g->http);
	gcp_conf_free(g->conf);
	free(g);
}

struct http *
gcp_http(struct gcp *g)
{
	return g->http;
}

struct auth *
gcp_auth(struct gcp *g)
{
	return g->auth;
}

struct quota *
gcp_quota(struct gcp *g)
{
	return g->quota;
}

struct resv *
gcp_resv(struct gcp *g)
{
	return g->resv;
}

struct price *
gcp_price(struct gcp *g)
{
	return g->price;
}

const struct gcp_conf *
gcp_conf(struct gcp *g)
{
	return g->conf;
}
