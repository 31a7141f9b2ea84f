/*
 * gcp-defaults.h: the defaults of the Google Cloud settings, defined
 * once. gcp-conf.c and http.c fill what a struct gcp_conf leaves unset
 * with them; daemon/conf.c writes them as the defaults of its gpuqd.conf
 * keys, so gpuqd.conf's defaults and the gcp layer's cannot drift apart
 * (test-conf compares the two). gpuqd.conf(5) documents the same values.
 *
 * Macros only: conf.c, which knows nothing of the cloud, includes it.
 */
#ifndef GPUQ_GCP_DEFAULTS_H
#define GPUQ_GCP_DEFAULTS_H

/* Each API's root URL (struct gcp_conf's *_endpoint; DESIGN G0.1). */
#define GCP_DEFAULT_COMPUTE_ENDPOINT	"https://compute.googleapis.com"
#define GCP_DEFAULT_BATCH_ENDPOINT	"https://batch.googleapis.com"
#define GCP_DEFAULT_VERTEX_ENDPOINT \
	"https://{region}-aiplatform.googleapis.com"
#define GCP_DEFAULT_BILLING_ENDPOINT	"https://cloudbilling.googleapis.com"
#define GCP_DEFAULT_STORAGE_ENDPOINT	"https://storage.googleapis.com"
#define GCP_DEFAULT_QUOTAS_ENDPOINT	"https://cloudquotas.googleapis.com"
/* Reached only under [gcp] endpoint, when one is set (doctor checks). */
#define GCP_DEFAULT_SERVICEUSAGE_ENDPOINT "https://serviceusage.googleapis.com"
#define GCP_DEFAULT_RESOURCEMANAGER_ENDPOINT \
	"https://cloudresourcemanager.googleapis.com"
#define GCP_DEFAULT_IAM_ENDPOINT	"https://iam.googleapis.com"
#define GCP_DEFAULT_LOGGING_ENDPOINT	"https://logging.googleapis.com"
/* The whole token URL, not a root (DESIGN GH.3). */
#define GCP_DEFAULT_TOKEN_ENDPOINT	"https://oauth2.googleapis.com/token"
/* Unless $GCE_METADATA_HOST names another (DESIGN GH.3). */
#define GCP_DEFAULT_METADATA_ENDPOINT	"http://metadata.google.internal"

/* Seconds a quota reading is trusted ([scheduler] quota_ttl). */
#define GCP_DEFAULT_QUOTA_TTL		60
/* Seconds between reads of the Billing catalog ([gcp] price_refresh). */
#define GCP_DEFAULT_PRICE_REFRESH	86400
/*
 * Requests a minute per API ([gcp] request_budget). Under the smallest
 * per-minute rate quota gpuq meets: Vertex AI's resource management,
 * 600 a minute per region (DESIGN GH.6), which one region's polls and
 * launches may all draw on.
 */
#define GCP_DEFAULT_BUDGET		600

/*
 * Boot disk of every job's VM or worker ([gcp] boot_disk_gb): what each
 * service got before the key existed, and Vertex AI's own default and
 * smallest size (DiskSpec.bootDiskSizeGb, aiplatform v1).
 */
#define GCP_DEFAULT_BOOT_DISK_GB	100
#define GCP_BOOT_DISK_GB_MIN		100
#define GCP_BOOT_DISK_GB_MAX		64000

/* Not in gpuqd.conf: retries and timeouts of the HTTP layer. */
#define GCP_DEFAULT_ATTEMPTS		5	/* first try included */
#define GCP_DEFAULT_RETRY_BASE_MS	1000
#define GCP_DEFAULT_RETRY_CAP_MS	32000
#define GCP_DEFAULT_TIMEOUT_MS		60000	/* per attempt */

/* A numeric default N as gpuqd.conf text: GCP_DEFAULT_TEXT(600) "600". */
#define GCP_DEFAULT_TEXT(n)		GCP_DEFAULT_TEXT_(n)
#define GCP_DEFAULT_TEXT_(n)		#n

#endif
