/*
 * gcp-error.c: Google's error shapes, parsed into struct gcp_error.
 *
 * Four shapes reach gpuq (DESIGN GH.4, H.5, C.3, E.4):
 *   {"error":{"code","message","status","errors":[{reason}],"details":[]}}
 *   {"error":"invalid_grant","error_description":"..."}         (OAuth)
 *   Operation {"error":{"errors":[{code,message,errorDetails}]},
 *              "httpErrorStatusCode":403}                        (Compute)
 *   google.rpc.Status {"code":8,"message","details"}   (Vertex job, LRO)
 * and HTML from a front end. Each is reduced to a kind the scheduler
 * acts on (retry, try elsewhere, give up) plus the facts it needs: the
 * quota metric and limit, the zones Google says have capacity, and how
 * long to wait. Knows nothing of HTTP transport or of providers.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"

/* google.rpc.Code names by number (DESIGN GH.5). */
static const char *const gcp_rpc_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
};
#define GCP_NRPC (int)(sizeof gcp_rpc_names / sizeof gcp_rpc_names[0])

static const char *const gcp_kind_names[] = {
	[GCP_ERR_NONE] = "NONE",
	[GCP_ERR_TRANSPORT] = "TRANSPORT",
	[GCP_ERR_CANCELLED] = "CANCELLED",
	[GCP_ERR_AUTH] = "AUTH",
	[GCP_ERR_PERMISSION] = "PERMISSION",
	[GCP_ERR_NOT_FOUND] = "NOT_FOUND",
	[GCP_ERR_CONFLICT] = "CONFLICT",
	[GCP_ERR_INVALID] = "INVALID",
	[GCP_ERR_RATE_LIMIT] = "RATE_LIMIT",
	[GCP_ERR_QUOTA] = "QUOTA",
	[GCP_ERR_STOCKOUT] = "STOCKOUT",
	[GCP_ERR_UNAVAILABLE] = "UNAVAILABLE",
	[GCP_ERR_OTHER] = "OTHER",
};

void
gcp_error_init(struct gcp_error *e)
{
	memset(e, 0, sizeof *e);
	e->kind = GCP_ERR_NONE;
	e->rpc_code = -1;
	e->quota_limit = -1;
	e->retry_after = -1;
}

void
gcp_error_done(struct gcp_error *e)
{
	int	i;

	free(e->status);
	for (i = 0; i < e->nreasons; i++)
		free(e->reasons[i]);
	free(e->message);
	free(e->zones_available);
	free(e->quota_metric);
	free(e->quota_region);
	gcp_error_init(e);
}

static char *
gcp_error_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void
gcp_error_copy(struct gcp_error *dst, const struct gcp_error *src)
{
	int	i;

	gcp_error_done(dst);
	*dst = *src;
	dst->status = gcp_error_dup(src->status);
	for (i = 0; i < src->nreasons; i++)
		dst->reasons[i] = xstrdup(src->reasons[i]);
	dst->message = gcp_error_dup(src->message);
	dst->zones_available = gcp_error_dup(src->zones_available);
	dst->quota_metric = gcp_error_dup(src->quota_metric);
	dst->quota_region = gcp_error_dup(src->quota_region);
}

const char *
gcp_error_kind_name(enum gcp_error_kind k)
{
	if ((unsigned)k > GCP_ERR_OTHER)
		return "UNKNOWN";
	return gcp_kind_names[k];
}

int
gcp_error_retryable(const struct gcp_error *e)
{
	switch (e->kind) {
	case GCP_ERR_TRANSPORT:
	case GCP_ERR_RATE_LIMIT:
	case GCP_ERR_UNAVAILABLE:
		return 1;
	default:
		return 0;
	}
}

char *
gcp_error_text(const struct gcp_error *e)
{
	const char	*msg = e->message != NULL ? e->message : "no message";

	if (e->code > 0 && e->status != NULL)
		return xprintf("HTTP %ld %s: %s", e->code, e->status, msg);
	if (e->code > 0)
		return xprintf("HTTP %ld: %s", e->code, msg);
	if (e->status != NULL)
		return xprintf("%s: %s", e->status, msg);
	return xstrdup(msg);
}

static void
gcp_error_set(char **field, const char *s)
{
	if (s == NULL || *s == '\0')
		return;
	free(*field);
	*field = xstrdup(s);
}

static void
gcp_error_reason(struct gcp_error *e, const char *r)
{
	int	i;

	if (r == NULL || *r == '\0')
		return;
	for (i = 0; i < e->nreasons; i++)
		if (strcmp(e->reasons[i], r) == 0)
			return;
	if (e->nreasons < GCP_ERROR_REASONS)
		e->reasons[e->nreasons++] = xstrdup(r);
}

static int
gcp_error_has_reason(const struct gcp_error *e, const char *prefix)
{
	int	i;

	for (i = 0; i < e->nreasons; i++)
		if (strncasecmp(e->reasons[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

/* Quota metric in gpuq's spelling (quota.h): Compute upper case, Vertex
 * without its service prefix. */
static void
gcp_error_metric(struct gcp_error *e, const char *m, size_t len)
{
	char	*s, *p;

	if (len == 0)
		return;
	s = xstrndup(m, len);
	if (strncmp(s, "compute.googleapis.com/", 23) == 0) {
		memmove(s, s + 23, strlen(s + 23) + 1);
		for (p = s; *p != '\0'; p++)
			*p = (char)toupper((unsigned char)*p);
	} else if (strncmp(s, "aiplatform.googleapis.com/", 26) == 0)
		memmove(s, s + 26, strlen(s + 26) + 1);
	free(e->quota_metric);
	e->quota_metric = s;
}

/* Read what the human message says that the structure did not. */
static void
gcp_error_scan_message(struct gcp_error *e)
{
	const char	*m = e->message, *p, *q;
	char		*end;
	double		 d;

	if (m == NULL)
		return;
	/* Compute: "Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 1.0 in region
	 * us-central1." / "... Limit: 64.0 globally." */
	if (e->quota_metric == NULL && (p = strstr(m, "Quota '")) != NULL &&
	    (q = strchr(p + 7, '\'')) != NULL &&
	    strncmp(q, "' exceeded", 10) == 0)
		gcp_error_metric(e, p + 7, (size_t)(q - (p + 7)));
	if ((p = strstr(m, "Limit: ")) != NULL) {
		d = strtod(p + 7, &end);
		if (end != p + 7) {
			if (e->quota_limit < 0)
				e->quota_limit = d;
			while (*end == ' ')
				end++;
			if (strncmp(end, "in region ", 10) == 0 &&
			    e->quota_region == NULL) {
				p = end + 10;
				q = p;
				while (*q != '\0' && *q != '.' && *q != ' ')
					q++;
				e->quota_region = xstrndup(p, (size_t)(q - p));
			} else if (strncmp(end, "globally", 8) == 0 &&
			    e->quota_region == NULL)
				e->quota_region = xstrdup("global");
		}
	}
	/* Vertex: "The following quota metrics exceed quota limits: X" */
	if (e->quota_metric == NULL &&
	    (p = strstr(m, "exceed quota limits: ")) != NULL) {
		p += strlen("exceed quota limits: ");
		q = p;
		while (*q != '\0' && *q != ',' && *q != ' ')
			q++;
		gcp_error_metric(e, p, (size_t)(q - p));
	}
	/* Compute stockout with details: "Consider trying your request in
	 * the us-central1-b,us-central1-c zone(s)" */
	if (e->zones_available == NULL &&
	    (p = strstr(m, "trying your request in the ")) != NULL) {
		p += strlen("trying your request in the ");
		q = strstr(p, " zone");
		if (q != NULL && q > p)
			e->zones_available = xstrndup(p, (size_t)(q - p));
	}
}

/* ErrorInfo {reason, domain, metadata|metadatas}. */
static void
gcp_error_info(struct gcp_error *e, json_t *info)
{
	json_t		*meta, *v;
	const char	*s;

	gcp_error_reason(e, json_string_value(json_object_get(info,
	    "reason")));
	meta = json_object_get(info, "metadatas");	/* Compute's spelling */
	if (meta == NULL)
		meta = json_object_get(info, "metadata");
	if (!json_is_object(meta))
		return;
	if ((v = json_object_get(meta, "zonesAvailable")) != NULL &&
	    (s = json_string_value(v)) != NULL && *s != '\0')
		gcp_error_set(&e->zones_available, s);
	if ((s = json_string_value(json_object_get(meta, "quota_metric")))
	    != NULL)
		gcp_error_metric(e, s, strlen(s));
	if ((s = json_string_value(json_object_get(meta, "quota_location")))
	    != NULL)
		gcp_error_set(&e->quota_region, s);
}

/* QuotaExceededInfo {metricName, limitName, limit, dimensions}. */
static void
gcp_error_quota_info(struct gcp_error *e, json_t *qi)
{
	const char	*s;
	json_t		*v;

	if ((s = json_string_value(json_object_get(qi, "metricName"))) != NULL)
		gcp_error_metric(e, s, strlen(s));
	if (json_is_number(v = json_object_get(qi, "limit")))
		e->quota_limit = json_number_value(v);
	v = json_object_get(qi, "dimensions");
	if ((s = json_string_value(json_object_get(v, "region"))) != NULL)
		gcp_error_set(&e->quota_region, s);
}

/* "3.5s" -> 4 (seconds, rounded up). */
static int
gcp_error_duration(const char *s)
{
	char	*end;
	double	 d;

	if (s == NULL)
		return -1;
	d = strtod(s, &end);
	if (end == s || !(d >= 0))
		return -1;
	/* At most a day, as a Retry-After header (http.c). */
	return d > 86400 ? 86400 : (int)ceil(d);
}

/* details[] of a google.rpc.Status (typed by "@type"). */
static void
gcp_error_details(struct gcp_error *e, json_t *details)
{
	json_t		*d, *viol, *v;
	const char	*type, *s;
	size_t		 i, j;

	if (!json_is_array(details))
		return;
	json_array_foreach(details, i, d) {
		type = json_string_value(json_object_get(d, "@type"));
		if (type == NULL)
			continue;
		if (strstr(type, "google.rpc.ErrorInfo") != NULL)
			gcp_error_info(e, d);
		else if (strstr(type, "google.rpc.RetryInfo") != NULL) {
			s = json_string_value(json_object_get(d,
			    "retryDelay"));
			if (gcp_error_duration(s) >= 0)
				e->retry_after = gcp_error_duration(s);
		} else if (strstr(type, "google.rpc.QuotaFailure") != NULL) {
			viol = json_object_get(d, "violations");
			json_array_foreach(viol, j, v) {
				s = json_string_value(json_object_get(v,
				    "description"));
				if (s != NULL && e->quota_metric == NULL &&
				    strchr(s, ' ') == NULL)
					gcp_error_metric(e, s, strlen(s));
			}
		}
	}
}

/* errors[] of the legacy shape, or of a Compute Operation. */
static void
gcp_error_errors(struct gcp_error *e, json_t *errors, const char *key)
{
	json_t		*x, *ed, *d;
	size_t		 i, j;

	if (!json_is_array(errors))
		return;
	json_array_foreach(errors, i, x) {
		gcp_error_reason(e, json_string_value(json_object_get(x, key)));
		if (e->message == NULL)
			gcp_error_set(&e->message, json_string_value(
			    json_object_get(x, "message")));
		ed = json_object_get(x, "errorDetails");
		json_array_foreach(ed, j, d) {
			if (json_is_object(json_object_get(d, "errorInfo")))
				gcp_error_info(e, json_object_get(d,
				    "errorInfo"));
			if (json_is_object(json_object_get(d, "quotaInfo")))
				gcp_error_quota_info(e, json_object_get(d,
				    "quotaInfo"));
		}
	}
}

static int
gcp_error_rpc_number(const char *name)
{
	int	i;

	if (name == NULL)
		return -1;
	for (i = 0; i < GCP_NRPC; i++)
		if (strcmp(name, gcp_rpc_names[i]) == 0)
			return i;
	return -1;
}

/* The kind, from everything parsed so far. */
static void
gcp_error_classify(struct gcp_error *e)
{
	const char	*m = e->message != NULL ? e->message : "";

	if (gcp_error_has_reason(e, "ZONE_RESOURCE_POOL_EXHAUSTED") ||
	    gcp_error_has_reason(e, "RESOURCE_AVAILABILITY") ||
	    strstr(m, "does not have enough resources available") != NULL ||
	    strstr(m, "Resources are insufficient in region") != NULL ||
	    strstr(m, "is currently unavailable in the") != NULL) {
		e->kind = GCP_ERR_STOCKOUT;
		return;
	}
	if (gcp_error_has_reason(e, "rateLimitExceeded") ||
	    gcp_error_has_reason(e, "userRateLimitExceeded") ||
	    gcp_error_has_reason(e, "RATE_LIMIT_EXCEEDED") ||
	    strstr(m, "per minute") != NULL) {
		e->kind = GCP_ERR_RATE_LIMIT;
		return;
	}
	if (gcp_error_has_reason(e, "quotaExceeded") ||
	    gcp_error_has_reason(e, "QUOTA_EXCEEDED") ||
	    e->quota_metric != NULL) {
		e->kind = GCP_ERR_QUOTA;
		return;
	}
	if (e->code == 401 || e->rpc_code == 16) {
		e->kind = GCP_ERR_AUTH;
		return;
	}
	switch (e->code) {
	case 0:
		break;
	case 403:
		e->kind = GCP_ERR_PERMISSION;
		return;
	case 404:
		e->kind = GCP_ERR_NOT_FOUND;
		return;
	case 409:
		e->kind = GCP_ERR_CONFLICT;
		return;
	case 429:
		e->kind = GCP_ERR_RATE_LIMIT;
		return;
	case 499:
		e->kind = GCP_ERR_CANCELLED;
		return;
	case 408:
		e->kind = GCP_ERR_UNAVAILABLE;
		return;
	default:
		if (e->code >= 500) {
			e->kind = GCP_ERR_UNAVAILABLE;
			return;
		}
		if (e->code >= 400) {
			e->kind = GCP_ERR_INVALID;
			return;
		}
		break;
	}
	switch (e->rpc_code) {
	case 1:
		e->kind = GCP_ERR_CANCELLED;
		break;
	case 3: case 9: case 11: case 12:
		e->kind = GCP_ERR_INVALID;
		break;
	case 5:
		e->kind = GCP_ERR_NOT_FOUND;
		break;
	case 6: case 10:
		e->kind = GCP_ERR_CONFLICT;
		break;
	case 7:
		e->kind = GCP_ERR_PERMISSION;
		break;
	case 8:
		e->kind = GCP_ERR_QUOTA;
		break;
	case 4: case 13: case 14:
		e->kind = GCP_ERR_UNAVAILABLE;
		break;
	default:
		e->kind = GCP_ERR_OTHER;
		break;
	}
}

/* A short, printable excerpt of a non-JSON body: its <title> or start. */
static char *
gcp_error_excerpt(const char *text, size_t len)
{
	const char	*p, *q;
	char		*s;
	size_t		 i, n;

	if (text == NULL || len == 0)
		return xstrdup("empty answer");
	p = NULL;
	if (len < 65536 && (p = strstr(text, "<title>")) != NULL &&
	    (q = strstr(p, "</title>")) != NULL) {
		p += 7;
		n = (size_t)(q - p);
	} else {
		p = text;
		n = len;
	}
	if (n > 160)
		n = 160;
	s = xstrndup(p, n);
	for (i = 0; s[i] != '\0'; i++)
		if (!isprint((unsigned char)s[i]))
			s[i] = ' ';
	while (i > 0 && s[i - 1] == ' ')
		s[--i] = '\0';
	return s;
}

void
gcp_error_from_http(struct gcp_error *e, long status, json_t *body,
    const char *text, size_t len)
{
	json_t		*err;
	const char	*s;
	char		*x;

	gcp_error_done(e);
	e->code = status;
	err = json_is_object(body) ? json_object_get(body, "error") : NULL;
	if (json_is_string(err)) {
		/* OAuth (RFC 6749 5.2): {"error","error_description"} */
		gcp_error_set(&e->status, json_string_value(err));
		gcp_error_reason(e, json_string_value(err));
		s = json_string_value(json_object_get(body,
		    "error_description"));
		gcp_error_set(&e->message, s != NULL ? s :
		    json_string_value(err));
		e->kind = GCP_ERR_AUTH;
		if (status >= 500 || status == 429 || status == 408) {
			gcp_error_classify(e);
		}
		return;
	}
	if (json_is_object(err)) {
		gcp_error_set(&e->message, json_string_value(
		    json_object_get(err, "message")));
		gcp_error_set(&e->status, json_string_value(json_object_get(err,
		    "status")));
		e->rpc_code = gcp_error_rpc_number(e->status);
		gcp_error_errors(e, json_object_get(err, "errors"), "reason");
		gcp_error_details(e, json_object_get(err, "details"));
	} else {
		x = gcp_error_excerpt(text, len);
		e->message = xprintf("not a Google API answer: %s", x);
		free(x);
	}
	if (e->message == NULL)
		e->message = xprintf("HTTP status %ld", status);
	gcp_error_scan_message(e);
	gcp_error_classify(e);
}

int
gcp_error_from_operation(json_t *op, struct gcp_error *e)
{
	json_t		*err, *v;
	const char	*s;

	err = json_object_get(op, "error");
	if (!json_is_object(err))
		return 0;
	gcp_error_done(e);
	if (json_is_integer(v = json_object_get(op, "httpErrorStatusCode")))
		e->code = (long)json_integer_value(v);
	gcp_error_errors(e, json_object_get(err, "errors"), "code");
	if (e->nreasons > 0)
		e->status = xstrdup(e->reasons[0]);
	if (e->message == NULL &&
	    (s = json_string_value(json_object_get(op, "httpErrorMessage")))
	    != NULL)
		e->message = xstrdup(s);
	if (e->message == NULL)
		e->message = xstrdup("operation failed");
	gcp_error_scan_message(e);
	gcp_error_classify(e);
	return 1;
}

int
gcp_error_from_status(json_t *st, struct gcp_error *e)
{
	json_t	*v;
	int	 code;

	if (!json_is_object(st))
		return 0;
	v = json_object_get(st, "code");
	code = json_is_integer(v) ? (int)json_integer_value(v) : 2;
	if (code == 0)
		return 0;
	gcp_error_done(e);
	e->rpc_code = code;
	if (code > 0 && code < GCP_NRPC)
		e->status = xstrdup(gcp_rpc_names[code]);
	gcp_error_set(&e->message, json_string_value(json_object_get(st,
	    "message")));
	gcp_error_details(e, json_object_get(st, "details"));
	if (e->message == NULL)
		e->message = xprintf("error code %d", code);
	gcp_error_scan_message(e);
	gcp_error_classify(e);
	return 1;
}
