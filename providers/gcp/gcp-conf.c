/*
 * gcp-conf.c: the Google Cloud configuration (copies, defaults, lookups)
 * and URL building: which base URL and version path each API has, and
 * how path segments and query values are percent-encoded.
 *
 * Knows nothing of what the APIs are asked (the modules' and providers'
 * business) and nothing of the loop.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"

#ifndef GPUQ_DATADIR
#define GPUQ_DATADIR "/usr/local/share/gpuq"
#endif

static const struct {
	const char	*name;
	const char	*base;		/* default root (gcp-defaults.h) */
	const char	*path;		/* version path under the root */
} gcp_apis[GCP_API_MAX] = {
	[GCP_API_COMPUTE] = { "compute", GCP_DEFAULT_COMPUTE_ENDPOINT,
	    "/compute/v1/" },
	[GCP_API_BATCH] = { "batch", GCP_DEFAULT_BATCH_ENDPOINT, "/v1/" },
	[GCP_API_VERTEX] = { "vertex", GCP_DEFAULT_VERTEX_ENDPOINT, "/v1/" },
	[GCP_API_BILLING] = { "billing", GCP_DEFAULT_BILLING_ENDPOINT,
	    "/v1/" },
	[GCP_API_STORAGE] = { "storage", GCP_DEFAULT_STORAGE_ENDPOINT,
	    "/storage/v1/" },
	[GCP_API_UPLOAD] = { "upload", GCP_DEFAULT_STORAGE_ENDPOINT,
	    "/upload/storage/v1/" },
	[GCP_API_QUOTAS] = { "quotas", GCP_DEFAULT_QUOTAS_ENDPOINT, "/v1/" },
	[GCP_API_TOKEN] = { "token", GCP_DEFAULT_TOKEN_ENDPOINT, "" },
	[GCP_API_LOGGING] = { "logging", GCP_DEFAULT_LOGGING_ENDPOINT,
	    "/v2/" },
	[GCP_API_METADATA] = { "metadata", GCP_DEFAULT_METADATA_ENDPOINT,
	    "/computeMetadata/v1/" },
	/* What gpuq doctor and the start-up checks ask (API-NOTES M). */
	[GCP_API_SERVICEUSAGE] = { "serviceusage",
	    GCP_DEFAULT_SERVICEUSAGE_ENDPOINT, "/v1/" },
	[GCP_API_RESOURCEMANAGER] = { "resourcemanager",
	    GCP_DEFAULT_RESOURCEMANAGER_ENDPOINT, "/v3/" },
	[GCP_API_IAM] = { "iam", GCP_DEFAULT_IAM_ENDPOINT, "/v1/" },
};

static const char *const gcp_services[] = {
	[GCP_SERVICE_GCE] = "gce",
	[GCP_SERVICE_BATCH] = "batch",
	[GCP_SERVICE_VERTEX] = "vertex",
};


const char *
gcp_api_name(enum gcp_api api)
{
	if ((unsigned)api >= GCP_API_MAX)
		return "unknown";
	return gcp_apis[api].name;
}

const char *
gcp_service_name(enum gcp_service s)
{
	if ((unsigned)s > GCP_SERVICE_VERTEX)
		return "unknown";
	return gcp_services[s];
}

int
gcp_service_parse(const char *name, enum gcp_service *ret)
{
	size_t	i;

	for (i = 0; i < sizeof gcp_services / sizeof gcp_services[0]; i++) {
		if (strcasecmp(name, gcp_services[i]) == 0) {
			*ret = (enum gcp_service)i;
			return 0;
		}
	}
	if (strcasecmp(name, "compute") == 0) {
		*ret = GCP_SERVICE_GCE;
		return 0;
	}
	return -ENOENT;
}

int
gcp_conf_has_provider(const struct gcp_conf *c, const char *name)
{
	size_t	i;

	if (c->providers == NULL || c->nproviders == 0)
		return 1;
	for (i = 0; i < c->nproviders; i++)
		if (strcasecmp(c->providers[i], name) == 0)
			return 1;
	return 0;
}

int
gcp_conf_has_region(const struct gcp_conf *c, const char *region)
{
	size_t	i;

	if (c->regions == NULL || c->nregions == 0)
		return 1;
	for (i = 0; i < c->nregions; i++)
		if (strcmp(c->regions[i], region) == 0)
			return 1;
	return 0;
}

static int
gcp_set(const char *s)
{
	return s != NULL && *s != '\0';
}

/* One configured root, without a trailing slash. New string. */
static char *
gcp_root(const char *s)
{
	size_t	len = strlen(s);

	while (len > 0 && s[len - 1] == '/')
		len--;
	return xstrndup(s, len);
}

char *
gcp_base_url(const struct gcp_conf *c, enum gcp_api api, const char *region)
{
	const char	*own = NULL, *env, *p;
	char		*base, *out, *root;

	if ((unsigned)api >= GCP_API_MAX)
		fatalx("gcp_base_url: bad api %d", (int)api);
	switch (api) {
	case GCP_API_COMPUTE:	own = c->compute_endpoint;	break;
	case GCP_API_BATCH:	own = c->batch_endpoint;	break;
	case GCP_API_VERTEX:	own = c->vertex_endpoint;	break;
	case GCP_API_BILLING:	own = c->billing_endpoint;	break;
	case GCP_API_STORAGE:
	case GCP_API_UPLOAD:	own = c->storage_endpoint;	break;
	case GCP_API_QUOTAS:	own = c->quotas_endpoint;	break;
	case GCP_API_TOKEN:	own = c->token_endpoint;	break;
	case GCP_API_METADATA:	own = c->metadata_endpoint;	break;
	default:		break;
	}
	if (gcp_set(own))
		base = gcp_root(own);
	else if (gcp_set(c->endpoint)) {
		root = gcp_root(c->endpoint);
		if (api == GCP_API_TOKEN)
			base = xprintf("%s/token", root);
		else
			base = xstrdup(root);
		free(root);
	} else if (api == GCP_API_METADATA &&
	    gcp_set(env = getenv("GCE_METADATA_HOST"))) {
		if (strstr(env, "://") != NULL)
			base = gcp_root(env);
		else
			base = xprintf("http://%s", env);
	} else
		base = xstrdup(gcp_apis[api].base);

	if ((p = strstr(base, "{region}")) != NULL) {
		if (region == NULL || *region == '\0')
			fatalx("gcp_base_url: %s needs a region",
			    gcp_apis[api].name);
		out = xprintf("%.*s%s%s", (int)(p - base), base, region,
		    p + strlen("{region}"));
		free(base);
		base = out;
	}
	return base;
}

/* Append S to the growing buffer *BUF (length *LEN, size *SIZE). */
static void
gcp_buf_add(char **buf, size_t *len, size_t *size, const char *s, size_t n)
{
	if (*len + n + 1 > *size) {
		while (*len + n + 1 > *size)
			*size = *size ? *size * 2 : 128;
		*buf = xrealloc(*buf, *size);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* Percent-encode S, keeping '/' when KEEP_SLASH (RFC 3986 unreserved). */
static void
gcp_buf_escape(char **buf, size_t *len, size_t *size, const char *s,
    int keep_slash)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			 e[3];
	unsigned char		 ch;

	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '~' || (keep_slash && ch == '/')) {
			gcp_buf_add(buf, len, size, s, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[ch >> 4];
		e[2] = hex[ch & 0xf];
		gcp_buf_add(buf, len, size, e, 3);
	}
}

char *
gcp_url_page(char *url, const char *token)
{
	char	*t, *full;

	if (token == NULL)
		return url;
	t = gcp_escape(token);
	full = xprintf("%s&pageToken=%s", url, t);
	free(t);
	free(url);
	return full;
}

char *
gcp_escape(const char *s)
{
	char	*buf = NULL;
	size_t	 len = 0, size = 0;

	gcp_buf_add(&buf, &len, &size, "", 0);
	gcp_buf_escape(&buf, &len, &size, s, 0);
	return buf;
}

char *
gcp_url(const struct gcp_conf *c, enum gcp_api api, const char *region,
    const char *fmt, ...)
{
	va_list		 ap;
	char		*buf = NULL, *base, num[32];
	const char	*f, *s;
	size_t		 len = 0, size = 0;
	int		 dash, lng, z;

	base = gcp_base_url(c, api, region);
	gcp_buf_add(&buf, &len, &size, base, strlen(base));
	free(base);
	s = gcp_apis[api].path;
	gcp_buf_add(&buf, &len, &size, s, strlen(s));

	va_start(ap, fmt);
	for (f = fmt; *f != '\0'; f++) {
		if (*f != '%') {
			gcp_buf_add(&buf, &len, &size, f, 1);
			continue;
		}
		f++;
		dash = lng = z = 0;
		if (*f == '-') {
			dash = 1;
			f++;
		}
		while (*f == 'l') {
			lng++;
			f++;
		}
		if (*f == 'z') {
			z = 1;
			f++;
		}
		switch (*f) {
		case '%':
			gcp_buf_add(&buf, &len, &size, "%", 1);
			continue;
		case 's':
			s = va_arg(ap, const char *);
			gcp_buf_escape(&buf, &len, &size, s ? s : "", dash);
			continue;
		case 'd':
			if (z)
				snprintf(num, sizeof num, "%zd",
				    va_arg(ap, ssize_t));
			else if (lng >= 2)
				snprintf(num, sizeof num, "%lld",
				    va_arg(ap, long long));
			else if (lng == 1)
				snprintf(num, sizeof num, "%ld",
				    va_arg(ap, long));
			else
				snprintf(num, sizeof num, "%d",
				    va_arg(ap, int));
			break;
		case 'u':
			if (z)
				snprintf(num, sizeof num, "%zu",
				    va_arg(ap, size_t));
			else if (lng >= 2)
				snprintf(num, sizeof num, "%llu",
				    va_arg(ap, unsigned long long));
			else if (lng == 1)
				snprintf(num, sizeof num, "%lu",
				    va_arg(ap, unsigned long));
			else
				snprintf(num, sizeof num, "%u",
				    va_arg(ap, unsigned));
			break;
		default:
			fatalx("gcp_url: unsupported conversion in \"%s\"",
			    fmt);
		}
		gcp_buf_add(&buf, &len, &size, num, strlen(num));
	}
	va_end(ap);
	return buf;
}

static const char *
gcp_dup_str(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static const char *const *
gcp_dup_list(const char *const *v, size_t n)
{
	char	**out;
	size_t	  i;

	if (v == NULL || n == 0)
		return NULL;
	out = xcalloc(n, sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return (const char *const *)out;
}

/* The project settings of SRC (gcp-site.c) copied into C. */
static void
gcp_conf_dup_site(struct gcp_conf *c, const struct gcp_conf *src)
{
	c->job_service_account = gcp_dup_str(src->job_service_account);
	c->network = gcp_dup_str(src->network);
	c->subnetworks = gcp_dup_list(src->subnetworks, src->nsubnetworks);
	c->nsubnetworks = c->subnetworks != NULL ? src->nsubnetworks : 0;
	c->network_tags = gcp_dup_list(src->network_tags,
	    src->nnetwork_tags);
	c->nnetwork_tags = c->network_tags != NULL ? src->nnetwork_tags : 0;
	c->boot_disk_type = gcp_dup_str(src->boot_disk_type);
	c->labels = gcp_dup_list(src->labels, src->nlabels);
	c->nlabels = c->labels != NULL ? src->nlabels : 0;
	c->kms_key = gcp_dup_str(src->kms_key);
	c->reservations = gcp_dup_list(src->reservations,
	    src->nreservations);
	c->nreservations = c->reservations != NULL ? src->nreservations : 0;
}

struct gcp_conf *
gcp_conf_dup(const struct gcp_conf *src)
{
	struct gcp_conf	*c;

	c = xcalloc(1, sizeof *c);
	*c = *src;
	c->project = gcp_dup_str(src->project);
	c->regions = gcp_dup_list(src->regions, src->nregions);
	c->nregions = c->regions != NULL ? src->nregions : 0;
	c->providers = gcp_dup_list(src->providers, src->nproviders);
	c->nproviders = c->providers != NULL ? src->nproviders : 0;
	c->credentials = gcp_dup_str(src->credentials);
	c->endpoint = gcp_dup_str(src->endpoint);
	c->compute_endpoint = gcp_dup_str(src->compute_endpoint);
	c->batch_endpoint = gcp_dup_str(src->batch_endpoint);
	c->vertex_endpoint = gcp_dup_str(src->vertex_endpoint);
	c->billing_endpoint = gcp_dup_str(src->billing_endpoint);
	c->storage_endpoint = gcp_dup_str(src->storage_endpoint);
	c->quotas_endpoint = gcp_dup_str(src->quotas_endpoint);
	c->token_endpoint = gcp_dup_str(src->token_endpoint);
	c->metadata_endpoint = gcp_dup_str(src->metadata_endpoint);
	c->price_table = xstrdup(gcp_set(src->price_table) ?
	    src->price_table : GPUQ_DATADIR "/prices.csv");
	gcp_conf_dup_site(c, src);
	if (c->quota_ttl <= 0)
		c->quota_ttl = GCP_DEFAULT_QUOTA_TTL;
	if (c->price_refresh <= 0)
		c->price_refresh = GCP_DEFAULT_PRICE_REFRESH;
	if (c->request_budget == 0)
		c->request_budget = GCP_DEFAULT_BUDGET;
	if (c->retry_max_attempts <= 0)
		c->retry_max_attempts = GCP_DEFAULT_ATTEMPTS;
	if (c->retry_base_ms <= 0)
		c->retry_base_ms = GCP_DEFAULT_RETRY_BASE_MS;
	if (c->retry_cap_ms <= 0)
		c->retry_cap_ms = GCP_DEFAULT_RETRY_CAP_MS;
	if (c->request_timeout_ms <= 0)
		c->request_timeout_ms = GCP_DEFAULT_TIMEOUT_MS;
	if (c->page_size < 0)
		c->page_size = 0;
	return c;
}

static void
gcp_free_list(const char *const *v, size_t n)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free((char *)v[i]);
	free((char **)v);
}

void
gcp_conf_free(struct gcp_conf *c)
{
	if (c == NULL)
		return;
	free((char *)c->project);
	gcp_free_list(c->regions, c->nregions);
	gcp_free_list(c->providers, c->nproviders);
	free((char *)c->credentials);
	free((char *)c->endpoint);
	free((char *)c->compute_endpoint);
	free((char *)c->batch_endpoint);
	free((char *)c->vertex_endpoint);
	free((char *)c->billing_endpoint);
	free((char *)c->storage_endpoint);
	free((char *)c->quotas_endpoint);
	free((char *)c->token_endpoint);
	free((char *)c->metadata_endpoint);
	free((char *)c->price_table);
	free((char *)c->job_service_account);
	free((char *)c->network);
	gcp_free_list(c->subnetworks, c->nsubnetworks);
	gcp_free_list(c->network_tags, c->nnetwork_tags);
	free((char *)c->boot_disk_type);
	gcp_free_list(c->labels, c->nlabels);
	free((char *)c->kms_key);
	gcp_free_list(c->reservations, c->nreservations);
	free(c);
}

