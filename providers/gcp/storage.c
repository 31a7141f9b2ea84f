/*
 * storage.c: the newest checkpoint under a gs:// directory, from
 * storage.objects.list (DESIGN GG) over every page, asking only for
 * names and update times.
 *
 * Knows the checkpoint naming rules of storage.h; nothing of jobs or of
 * what the daemon does with the answer.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/storage.h"

#define STORAGE_PAGE_MAX	1000	/* objects.list maxResults cap */

/* One entry directly under the directory. */
struct storage_cand {
	char		*name;		/* first path component */
	int		 is_dir;
	double		 updated;	/* newest object's, epoch seconds */
	int		 has_step;
	unsigned long long step;
};

struct storage_find {
	struct http		*http;		/* borrowed */
	struct gcp_conf		*conf;		/* owned copy */
	char			*bucket;
	char			*prefix;	/* "" or ending in '/' */
	storage_cb		 cb;
	void			*arg;
	struct storage_cand	*c;
	size_t			 n;
	size_t			 objects;	/* listed, for the log */
};

int
storage_parse_uri(const char *uri, char **ret_bucket, char **ret_prefix)
{
	const char	*b, *slash;
	size_t		 blen, plen;
	char		*prefix;

	if (uri == NULL || strncmp(uri, "gs://", 5) != 0)
		return -EINVAL;
	b = uri + 5;
	slash = strchr(b, '/');
	blen = slash != NULL ? (size_t)(slash - b) : strlen(b);
	if (blen == 0)
		return -EINVAL;
	if (slash == NULL || slash[1] == '\0')
		prefix = xstrdup("");
	else {
		plen = strlen(slash + 1);
		prefix = slash[plen] == '/' ? xstrdup(slash + 1) :
		    xprintf("%s/", slash + 1);
	}
	*ret_bucket = xstrndup(b, blen);
	*ret_prefix = prefix;
	return 0;
}

/* RFC 3339 ("2026-06-01T12:00:00.123Z", offsets too) to epoch seconds. */
static double
storage_time(const char *s)
{
	struct tm	 tm;
	const char	*p;
	char		*end;
	double		 frac = 0, t;
	int		 off = 0, hh, mm;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof tm);
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return 0;
	if (*p == '.') {
		/* Digits only: strtod would take ".5e999" and give inf. */
		for (end = (char *)p + 1; *end >= '0' && *end <= '9'; end++)
			continue;
		if (end - p > 1 && end - p < 12)
			frac = strtod(p, NULL);
		p = end;
	}
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &hh, &mm) ==
	    2)
		off = (*p == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
	t = (double)timegm(&tm) + frac - off;
	if (!(t > 0 && t < 253402300800.0))	/* before 10000-01-01 */
		return 0;
	return t;
}

/* The last run of digits in S, if any. */
static int
storage_step(const char *s, unsigned long long *ret)
{
	const char	*p, *end = NULL, *start;

	for (p = s; *p != '\0'; p++)
		if (isdigit((unsigned char)*p))
			end = p;
	if (end == NULL)
		return 0;
	start = end;
	while (start > s && isdigit((unsigned char)start[-1]))
		start--;
	*ret = strtoull(start, NULL, 10);
	return 1;
}

static int
storage_skipped(const char *name, size_t len)
{
	return len == 0 || name[0] == '.' ||
	    (len >= 4 && strncmp(name + len - 4, ".tmp", 4) == 0);
}

static void
storage_add(struct storage_find *f, const char *name, double updated)
{
	const char	*rel, *slash;
	size_t		 len, i;
	int		 is_dir;

	if (strncmp(name, f->prefix, strlen(f->prefix)) != 0)
		return;
	rel = name + strlen(f->prefix);
	slash = strchr(rel, '/');
	len = slash != NULL ? (size_t)(slash - rel) : strlen(rel);
	is_dir = slash != NULL;
	if (storage_skipped(rel, len))
		return;			/* also the directory's own marker */
	for (i = 0; i < f->n; i++) {
		if (f->c[i].is_dir == is_dir && strlen(f->c[i].name) == len &&
		    strncmp(f->c[i].name, rel, len) == 0) {
			if (updated > f->c[i].updated)
				f->c[i].updated = updated;
			return;
		}
	}
	f->c = xreallocarray(f->c, f->n + 1, sizeof *f->c);
	memset(&f->c[f->n], 0, sizeof f->c[f->n]);
	f->c[f->n].name = xstrndup(rel, len);
	f->c[f->n].is_dir = is_dir;
	f->c[f->n].updated = updated;
	f->c[f->n].has_step = storage_step(f->c[f->n].name, &f->c[f->n].step);
	f->n++;
}

static void
storage_find_free(struct storage_find *f)
{
	size_t	i;

	for (i = 0; i < f->n; i++)
		free(f->c[i].name);
	free(f->c);
	free(f->bucket);
	free(f->prefix);
	gcp_conf_free(f->conf);
	free(f);
}

/* Pick the newest, call back, free F. */
static void
storage_done(struct storage_find *f)
{
	struct storage_cand	*best = NULL;
	char			*uri = NULL;
	size_t			 i;
	int			 by_step = f->n > 0;

	for (i = 0; i < f->n; i++)
		if (!f->c[i].has_step)
			by_step = 0;
	for (i = 0; i < f->n; i++) {
		if (best == NULL ||
		    (by_step && (f->c[i].step > best->step ||
		    (f->c[i].step == best->step &&
		    f->c[i].updated > best->updated))) ||
		    (!by_step && f->c[i].updated > best->updated))
			best = &f->c[i];
	}
	if (best != NULL)
		uri = xprintf("gs://%s/%s%s%s", f->bucket, f->prefix,
		    best->name, best->is_dir ? "/" : "");
	log_debug("storage: gs://%s/%s: %zu objects, %zu checkpoints, "
	    "newest %s (by %s)", f->bucket, f->prefix, f->objects, f->n,
	    uri != NULL ? uri : "none", by_step ? "step" : "time");
	f->cb(0, uri, best != NULL ? (time_t)best->updated : 0, NULL, f->arg);
	free(uri);
	storage_find_free(f);
}

static void	storage_list_page(struct storage_find *, const char *token);

/* The objects.list URL for one page. New string. */
static char *
storage_page_url(struct storage_find *f, const char *token)
{
	char	*url;

	url = gcp_url(f->conf, GCP_API_STORAGE, NULL,
	    "b/%s/o?prefix=%s&maxResults=%d&fields=items(name,updated),"
	    "nextPageToken", f->bucket, f->prefix,
	    http_page_size(f->http, STORAGE_PAGE_MAX));
	return gcp_url_page(url, token);
}

static void
storage_on_page(const struct http_resp *r, void *arg)
{
	struct storage_find	*f = arg;
	json_t			*items, *o;
	const char		*tok;
	char			*text, *cause;
	size_t			 i;
	int			 error;

	if (r->status != 200 || !json_is_object(r->json)) {
		text = gcp_error_text(&r->err);
		cause = xprintf("listing gs://%s/%s failed: %s", f->bucket,
		    f->prefix, text);
		free(text);
		switch (r->err.kind) {
		case GCP_ERR_NOT_FOUND:
			error = -ENOENT;
			break;
		case GCP_ERR_PERMISSION:
		case GCP_ERR_AUTH:
			error = -EACCES;
			break;
		case GCP_ERR_CANCELLED:
			error = -ECANCELED;
			break;
		default:
			error = -EIO;
			break;
		}
		f->cb(error, NULL, 0, cause, f->arg);
		free(cause);
		storage_find_free(f);
		return;
	}
	items = json_object_get(r->json, "items");
	json_array_foreach(items, i, o) {
		f->objects++;
		storage_add(f, json_string_value(json_object_get(o, "name")) ?
		    json_string_value(json_object_get(o, "name")) : "",
		    storage_time(json_string_value(json_object_get(o,
		    "updated"))));
	}
	tok = json_string_value(json_object_get(r->json, "nextPageToken"));
	if (tok != NULL && *tok != '\0') {
		storage_list_page(f, tok);
		return;
	}
	storage_done(f);
}

static void
storage_list_page(struct storage_find *f, const char *token)
{
	struct http_req	 req;
	char		*url, *cause;
	int		 rc;

	url = storage_page_url(f, token);
	memset(&req, 0, sizeof req);
	req.url = url;
	req.flags = HTTP_AUTH;
	req.api = GCP_API_STORAGE;
	rc = http_request_start(f->http, &req, storage_on_page, f);
	free(url);
	if (rc < 0) {
		/* Only on a later page: the first is checked by the caller. */
		cause = xprintf("listing gs://%s/%s: %s", f->bucket,
		    f->prefix, strerror(-rc));
		f->cb(rc == -ESHUTDOWN ? -ECANCELED : rc, NULL, 0, cause,
		    f->arg);
		free(cause);
		storage_find_free(f);
	}
}

int
storage_newest_checkpoint(struct http *http, const struct gcp_conf *conf,
    const char *dir, storage_cb cb, void *arg)
{
	struct storage_find	*f;
	struct http_req		 req;
	char			*bucket, *prefix, *url;
	int			 rc;

	if ((rc = storage_parse_uri(dir, &bucket, &prefix)) < 0)
		return rc;
	f = xcalloc(1, sizeof *f);
	f->http = http;
	f->conf = gcp_conf_dup(conf);
	f->bucket = bucket;
	f->prefix = prefix;
	f->cb = cb;
	f->arg = arg;
	url = storage_page_url(f, NULL);
	memset(&req, 0, sizeof req);
	req.url = url;
	req.flags = HTTP_AUTH;
	req.api = GCP_API_STORAGE;
	rc = http_request_start(http, &req, storage_on_page, f);
	free(url);
	if (rc < 0) {
		storage_find_free(f);
		return rc;
	}
	return 0;
}
