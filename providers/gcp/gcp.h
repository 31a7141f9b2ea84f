/*
 * gcp.h: what every piece of gpuq that talks to Google Cloud shares --
 * the configuration (endpoints, credentials, budgets), URL building, the
 * parsed form of a Google error, and the facade that owns the shared
 * plumbing (HTTP on the loop, credentials, quotas, prices).
 *
 * Knows nothing of jobs, attempts or SQLite: providers build on it, the
 * daemon fills struct gcp_conf from gpuqd.conf and holds one struct gcp.
 */
#ifndef GPUQ_GCP_H
#define GPUQ_GCP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "providers/gcp/gcp-defaults.h"

struct uv_loop_s;
struct http;
struct auth;
struct quota;
struct resv;
struct price;

/* The APIs gpuq calls; each has its own base URL and request budget. */
enum gcp_api {
	GCP_API_COMPUTE,	/* compute/v1/ */
	GCP_API_BATCH,		/* v1/ on batch.googleapis.com */
	GCP_API_VERTEX,		/* v1/ on {region}-aiplatform.googleapis.com */
	GCP_API_BILLING,	/* v1/ on cloudbilling.googleapis.com */
	GCP_API_STORAGE,	/* storage/v1/ */
	GCP_API_UPLOAD,		/* upload/storage/v1/ (same host as storage) */
	GCP_API_QUOTAS,		/* v1/ on cloudquotas.googleapis.com */
	GCP_API_TOKEN,		/* the OAuth token URL itself */
	GCP_API_METADATA,	/* computeMetadata/v1/ */
	GCP_API_SERVICEUSAGE,	/* v1/ on serviceusage.googleapis.com */
	GCP_API_RESOURCEMANAGER, /* v3/ on cloudresourcemanager.googleapis... */
	GCP_API_IAM,		/* v1/ on iam.googleapis.com */
	GCP_API_LOGGING,	/* v2/ on logging.googleapis.com */
	GCP_API_MAX
};

/* The three ways gpuq runs a job; Batch is billed and counted as Compute. */
enum gcp_service {
	GCP_SERVICE_GCE,
	GCP_SERVICE_BATCH,
	GCP_SERVICE_VERTEX,
};

/*
 * Configuration, filled by the daemon from gpuqd.conf. Every pointer is
 * borrowed: gcp_new() (and each module's _new) copies what it keeps, so
 * the daemon may point these at its own struct conf and free it later.
 * NULL or "" means the default (gcp-defaults.h) named after the field.
 * Durations are seconds.
 *
 *   gpuqd.conf key                field
 *   [gcp] project                 project
 *   [gcp] regions                 regions, nregions
 *   [gcp] providers               providers, nproviders
 *   [gcp] credentials             credentials
 *   [gcp] endpoint                endpoint
 *   [gcp] compute_endpoint ...    compute_endpoint ... quotas_endpoint
 *   [gcp] price_refresh           price_refresh
 *   [scheduler] quota_ttl         quota_ttl
 *   (built in: GPUQ_DATADIR)      price_table
 */
struct gcp_conf {
	const char	 *project;		/* required for API calls */
	const char *const *regions;		/* NULL: every region */
	size_t		  nregions;
	const char *const *providers;		/* "gce", "batch", "vertex"; */
	size_t		  nproviders;		/* NULL: all three */
	const char	 *credentials;		/* key file; "": ADC */

	/*
	 * Endpoints. With endpoint set, every API is reached under that one
	 * base URL with Google's own paths (the simulated cloud), unless the
	 * API's own *_endpoint is also set. Each is a root (scheme://host
	 * [:port][/base]) without the API's version path, except
	 * token_endpoint which is the whole token URL. Defaults: each
	 * GCP_DEFAULT_*_ENDPOINT, except that a service-account key's own
	 * token_uri wins over the token default when no endpoint is set,
	 * and $GCE_METADATA_HOST over the metadata default.
	 */
	const char	 *endpoint;
	const char	 *compute_endpoint;
	const char	 *batch_endpoint;
	const char	 *vertex_endpoint;	/* may hold "{region}" */
	const char	 *billing_endpoint;
	const char	 *storage_endpoint;
	const char	 *quotas_endpoint;
	const char	 *token_endpoint;
	const char	 *metadata_endpoint;

	const char	 *price_table;		/* GPUQ_DATADIR "/prices.csv" */
	int64_t		  quota_ttl;		/* GCP_DEFAULT_QUOTA_TTL */
	int64_t		  price_refresh;	/* GCP_DEFAULT_PRICE_REFRESH */
	int		  request_budget;	/* GCP_DEFAULT_BUDGET a minute
						   per API; -1 none */
	int		  retry_max_attempts;	/* GCP_DEFAULT_ATTEMPTS */
	int		  retry_base_ms;	/* GCP_DEFAULT_RETRY_BASE_MS */
	int		  retry_cap_ms;		/* GCP_DEFAULT_RETRY_CAP_MS */
	int		  request_timeout_ms;	/* GCP_DEFAULT_TIMEOUT_MS */
	int		  page_size;		/* 0: each API's maximum */

	/*
	 * The project's own setup (gcp-site.c; doc/DESIGN.md "A real
	 * project"): what every job's resources run as and on, in each
	 * service's form. NULL, 0 or empty: each service's own default.
	 *
	 *   [gcp] job_service_account     job_service_account
	 *   [gcp] network, subnetwork     network, subnetworks
	 *   [gcp] external_ip = no        no_external_ip
	 *   [gcp] network_tags            network_tags
	 *   [gcp] boot_disk_gb, _type     boot_disk_gb, boot_disk_type
	 *   [gcp] labels                  labels ("key=value" each)
	 *   [gcp] kms_key                 kms_key
	 */
	const char	 *job_service_account;	/* email */
	const char	 *network;		/* "vpc" or projects/P/global/
						   networks/N */
	const char *const *subnetworks;		/* "region:projects/P/regions/
						   R/subnetworks/S" */
	size_t		  nsubnetworks;
	int		  no_external_ip;
	const char *const *network_tags;
	size_t		  nnetwork_tags;
	int		  boot_disk_gb;		/* GCP_DEFAULT_BOOT_DISK_GB */
	const char	 *boot_disk_type;
	const char *const *labels;
	size_t		  nlabels;
	const char	 *kms_key;		/* projects/P/locations/L/
						   keyRings/K/cryptoKeys/C */

	/* [gcp] reservations (reservation.h): {"auto"}, {"none"} or the
	 * names of the Compute Engine reservations jobs may use; NULL is
	 * "auto". */
	const char *const *reservations;
	size_t		  nreservations;
};

/* The OAuth scope of every token gpuq asks for, and of its VMs. */
#define GCP_SCOPE	"https://www.googleapis.com/auth/cloud-platform"
#define GCP_COMPUTE_SERVICE_ID	"6F81-5844-456A"	/* Billing catalog */
#define GCP_VERTEX_SERVICE_ID	"C7E2-9256-1C43"

/* Name of an API ("compute", "vertex", ...), for logs and budgets. */
const char	*gcp_api_name(enum gcp_api);
/* Name of a service: "gce", "batch", "vertex". */
const char	*gcp_service_name(enum gcp_service);
/* Service from its name; -ENOENT if unknown. */
int		 gcp_service_parse(const char *name, enum gcp_service *ret);
/* 1 if provider NAME is enabled by CONF (no list: all are). */
int		 gcp_conf_has_provider(const struct gcp_conf *, const char *);
/* 1 if REGION is one CONF uses (no list: every region is). */
int		 gcp_conf_has_region(const struct gcp_conf *, const char *);

/*
 * A new URL for API: its base (see struct gcp_conf), the API's version
 * path, then FMT. Conversions in FMT: %s is one path segment or query
 * value and is percent-encoded whole ('/' too); %-s is a resource name
 * ("projects/p/locations/l/jobs/j", discovery's {+name}) whose segments
 * are encoded but whose slashes are kept; %d %u %ld %lu %lld %llu %zu
 * and %% as printf. REGION fills "{region}" in the Vertex endpoint and
 * may be NULL for every other API. Returns a new string.
 */
char	*gcp_url(const struct gcp_conf *, enum gcp_api, const char *region,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The base URL of API (no version path, no trailing slash). New string. */
char	*gcp_base_url(const struct gcp_conf *, enum gcp_api,
	    const char *region);
/* Percent-encode S as one path segment or query value. New string. */
char	*gcp_escape(const char *s);
/*
 * URL (taken) with "&pageToken=" and TOKEN, escaped, appended: the
 * next page of a list. TOKEN NULL: URL as it is. New string.
 */
char	*gcp_url_page(char *url, const char *token);

/*
 * A Google error, parsed from an HTTP error body (DESIGN GH.5), a
 * Compute Operation's error (C.3), a google.rpc.Status (Vertex job
 * "error", Batch LRO "error"), an OAuth error (H.4), or a transport
 * failure. Strings are owned by the struct: gcp_error_done() frees them.
 */
enum gcp_error_kind {
	GCP_ERR_NONE,		/* no error */
	GCP_ERR_TRANSPORT,	/* no HTTP answer: connect, timeout, reset */
	GCP_ERR_CANCELLED,	/* shutting down, or cancelled by gpuq */
	GCP_ERR_AUTH,		/* 401, or no token could be had */
	GCP_ERR_PERMISSION,	/* 403 other than quota or rate */
	GCP_ERR_NOT_FOUND,	/* 404 */
	GCP_ERR_CONFLICT,	/* 409: already exists, aborted */
	GCP_ERR_INVALID,	/* 400 and other 4xx */
	GCP_ERR_RATE_LIMIT,	/* per-minute API quota: back off, retry */
	GCP_ERR_QUOTA,		/* allocation quota: try elsewhere */
	GCP_ERR_STOCKOUT,	/* ZONE_RESOURCE_POOL_EXHAUSTED*, no capacity */
	GCP_ERR_UNAVAILABLE,	/* 5xx, 408: retry later */
	GCP_ERR_OTHER,
};

#define GCP_ERROR_REASONS	8

struct gcp_error {
	enum gcp_error_kind kind;
	long		 code;		/* HTTP status, or Operation's
					   httpErrorStatusCode; 0 if none */
	int		 rpc_code;	/* google.rpc.Code number, -1 if none */
	char		*status; /* "RESOURCE_EXHAUSTED", OAuth "error" */
	char		*reasons[GCP_ERROR_REASONS];	/* errors[].reason,
					   ErrorInfo.reason, Operation
					   errors[].code: "quotaExceeded",
					   "ZONE_RESOURCE_POOL_EXHAUSTED" */
	int		 nreasons;
	char		*message;	/* for humans; never NULL once set */
	char		*zones_available; /* "us-central1-b,us-central1-c" */
	char		*quota_metric;	/* "NVIDIA_T4_GPUS", "aiplatform.
					   googleapis.com/custom_model_..." */
	double		 quota_limit;	/* -1 if not given */
	char		*quota_region;	/* from quotaInfo dimensions/message */
	int		 retry_after;	/* seconds, from Retry-After or
					   RetryInfo; -1 if none */
};

/* Zero E (kind NONE, codes and limits -1). */
void	 gcp_error_init(struct gcp_error *e);
/* Free what E owns and re-init it. */
void	 gcp_error_done(struct gcp_error *e);
/* Deep copy of SRC into DST (DST initialized or done). */
void	 gcp_error_copy(struct gcp_error *dst, const struct gcp_error *src);
/*
 * Fill E from an HTTP answer: STATUS, the body parsed as JSON (BODY, may
 * be NULL) and raw (TEXT/LEN, may be HTML). Understands Google's
 * {"error":{...}} shape and OAuth's {"error":"...","error_description"}.
 */
void	 gcp_error_from_http(struct gcp_error *e, long status, json_t *body,
	    const char *text, size_t len);
/*
 * Fill E from a Compute Operation (C.3) if it carries "error":
 * errors[].code/message/errorDetails (quotaInfo, errorInfo.metadatas
 * zonesAvailable), httpErrorStatusCode. Returns 1 if it had an error,
 * 0 if not (E untouched).
 */
int	 gcp_error_from_operation(json_t *op, struct gcp_error *e);
/*
 * Fill E from a google.rpc.Status object ({"code":8,"message":...,
 * "details":[...]}), as in a Vertex CustomJob's or an LRO's "error".
 * Returns 1 if STATUS is an error (code != 0), else 0.
 */
int	 gcp_error_from_status(json_t *status, struct gcp_error *e);
/* "RATE_LIMIT"... for logs and tests. */
const char *gcp_error_kind_name(enum gcp_error_kind);
/* 1 if the same request may succeed later: transport, rate, 5xx. */
int	 gcp_error_retryable(const struct gcp_error *e);
/* One line for humans: "HTTP 429 RESOURCE_EXHAUSTED: message". New. */
char	*gcp_error_text(const struct gcp_error *e);

/*
 * The facade: one object owning the HTTP client, credentials, quota
 * cache and price table, so the daemon holds one pointer.
 *
 * gcp_new() reads the credentials and the bundled price table now (so a
 * bad key file or a missing table fails at start, with *cause) and
 * touches no network. gcp_start() begins the background price refresh.
 * gcp_free() cancels every request in flight -- each pending callback,
 * the providers' too, runs once with GCP_ERR_CANCELLED before it
 * returns -- and closes the handles; the owner's uv_run() then drains
 * them. Free providers after gcp_free(), so their callbacks still find
 * them alive.
 */
struct gcp;

int		 gcp_new(struct uv_loop_s *, const struct gcp_conf *,
		    struct gcp **ret, char **cause);
void		 gcp_start(struct gcp *);
void		 gcp_free(struct gcp *);
/* Borrowed parts, valid until gcp_free(). */
struct http	*gcp_http(struct gcp *);
struct auth	*gcp_auth(struct gcp *);
struct quota	*gcp_quota(struct gcp *);
/* The project's reservations (reservation.h), refreshed with the
 * quotas. */
struct resv	*gcp_resv(struct gcp *);
struct price	*gcp_price(struct gcp *);
/* The copied configuration, with strings owned by G. */
const struct gcp_conf *gcp_conf(struct gcp *);

/*
 * gcp-site.c. Check the project settings of C (struct gcp_conf's last
 * block) against Google's rules: 0, or -EINVAL and *cause naming the
 * gpuqd.conf key, what is wrong and the fix.
 */
int		 gcp_site_check(const struct gcp_conf *c, char **cause);
/* The network as a resource name: projects/P/global/networks/N. NULL
 * when none is configured (the project's "default"). New string. */
char		*gcp_site_network(const struct gcp_conf *c);
/* The configured subnetwork of REGION (borrowed), or NULL. */
const char	*gcp_site_subnetwork(const struct gcp_conf *c,
		    const char *region);
/* The boot disk size in GB: C's, or GCP_DEFAULT_BOOT_DISK_GB. */
int		 gcp_site_disk_gb(const struct gcp_conf *c);

/* What running jobs on a service needs of the project (gpuq doctor). */
struct gcp_needs {
	const char		*what;		/* "Vertex AI" */
	const char *const	*apis;		/* to turn on; NULL-ended */
	const char *const	*perms;		/* gpuqd needs; NULL-ended */
	const char		*role;		/* the role that grants them */
	/* The public image family its VMs boot from, as "projects/P/
	 * global/images/family/F" (images.getFromFamily's path), or NULL
	 * when the service brings its own image. */
	const char		*boot_image;
};

/*
 * The boot image of gpuq's Compute Engine VMs: Google's Deep Learning VM
 * family with CUDA 12.8, the NVIDIA 570 driver, docker and the NVIDIA
 * container toolkit on Ubuntu 22.04 (providers/gce.c; gpuq doctor checks
 * it is READY and not deprecated).
 */
#define GCP_BOOT_IMAGE_PROJECT	"deeplearning-platform-release"
#define GCP_BOOT_IMAGE_FAMILY	"common-cu128-ubuntu-2204-nvidia-570"
#define GCP_BOOT_IMAGE		"projects/" GCP_BOOT_IMAGE_PROJECT \
	"/global/images/family/" GCP_BOOT_IMAGE_FAMILY

/* The needs of SERVICE (enum gcp_service), or with -1 what every
 * install needs. Static; NULL for an unknown service. */
const struct gcp_needs *gcp_site_needs(int service);

/* Deep copy of SRC, for modules that keep their configuration. */
struct gcp_conf	*gcp_conf_dup(const struct gcp_conf *src);
/* Free a gcp_conf_dup() result; NULL is fine. */
void		 gcp_conf_free(struct gcp_conf *);

#endif
