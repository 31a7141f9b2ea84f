/*
 * gcp-site.c: the project's own setup -- the service account jobs run
 * as, the network, subnetworks and tags, the boot disk, the labels and
 * the customer-managed key -- checked against Google's rules at start,
 * and the lookups the providers use to put each in their requests
 * (doc/DESIGN.md "A real project").
 *
 * Every value here is sent to Google as a JSON string: none ever
 * reaches a shell. Knows nothing of the loop, the daemon or jobs.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"

/* Labels one resource takes (64), less gpuq's four and a job's 32. */
#define GCP_SITE_LABELS_MAX	(64 - 4 - 32)
#define GCP_SITE_TAGS_MAX	64

static int
gcp_site_fail(char **cause, const char *fmt, ...)
{
	va_list	ap;
	char	*s;

	if (cause != NULL) {
		va_start(ap, fmt);
		if (vasprintf(&s, fmt, ap) == -1)
			s = NULL;
		va_end(ap);
		*cause = s != NULL ? s : xstrdup("bad [gcp] setting");
	}
	return -EINVAL;
}

static int
gcp_site_set(const char *s)
{
	return s != NULL && *s != '\0';
}

static int
gcp_site_lower_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* Every character of S[0..N) is a lowercase letter, digit or in EXTRA. */
static int
gcp_site_chars(const char *s, size_t n, const char *extra)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (!gcp_site_lower_digit(s[i]) &&
		    (s[i] == '\0' || strchr(extra, s[i]) == NULL))
			return 0;
	return 1;
}

/*
 * A Compute Engine resource name (RFC 1035 label, 1-63 characters:
 * a lowercase letter, then letters, digits or '-', not ending in '-'),
 * as networks, subnetworks and network tags take.
 */
static int
gcp_site_rfc1035(const char *s, size_t n)
{
	if (n == 0 || n > 63 || !(s[0] >= 'a' && s[0] <= 'z') ||
	    s[n - 1] == '-')
		return 0;
	return gcp_site_chars(s, n, "-");
}

/* A project id (6-30, RFC 1035 style) or a project number. */
static int
gcp_site_project(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (n > 0 && i == n)
		return 1;
	return n >= 6 && n <= 30 && gcp_site_rfc1035(s, n);
}

/*
 * Does S match PATTERN, whose '*' are name segments (up to the next
 * '/')? Each segment is checked by CHECK (called with its index).
 */
static int
gcp_site_path(const char *s, const char *pattern,
    int (*check)(int, const char *, size_t))
{
	const char	*end;
	size_t		 n;
	int		 i = 0;

	while (*pattern != '\0') {
		if (*pattern != '*') {
			if (*s != *pattern)
				return 0;
			s++;
			pattern++;
			continue;
		}
		end = strchr(s, '/');
		n = end != NULL ? (size_t)(end - s) : strlen(s);
		if (!check(i++, s, n))
			return 0;
		s += n;
		pattern++;
	}
	return *s == '\0';
}

/* projects/P/global/networks/N: P a project, N a name. */
static int
gcp_site_check_network_seg(int i, const char *s, size_t n)
{
	return i == 0 ? gcp_site_project(s, n) : gcp_site_rfc1035(s, n);
}

/* projects/P/regions/R/subnetworks/S. */
static int
gcp_site_check_subnet_seg(int i, const char *s, size_t n)
{
	return i == 0 ? gcp_site_project(s, n) : gcp_site_rfc1035(s, n);
}

/* projects/P/locations/L/keyRings/K/cryptoKeys/C (Cloud KMS names:
 * key rings and keys take letters, digits, '_' and '-'). */
static int
gcp_site_check_kms_seg(int i, const char *s, size_t n)
{
	size_t	j;

	if (i == 0)
		return gcp_site_project(s, n);
	if (n == 0 || n > 63)
		return 0;
	for (j = 0; j < n; j++)
		if (!gcp_site_lower_digit(s[j]) && s[j] != '-' &&
		    s[j] != '_' && !(s[j] >= 'A' && s[j] <= 'Z'))
			return 0;
	return 1;
}

/* NAME@DOMAIN.gserviceaccount.com, as IAM writes service accounts. */
static int
gcp_site_email(const char *s)
{
	const char	*at = strchr(s, '@');
	const char	*suffix = ".gserviceaccount.com";
	size_t		 n = strlen(s), k = strlen(suffix);

	if (at == NULL || at == s || strchr(at + 1, '@') != NULL)
		return 0;
	if ((size_t)(at - s) > 63 || !gcp_site_chars(s, (size_t)(at - s),
	    "-"))
		return 0;
	if (n - (size_t)(at - s) - 1 <= k || strcmp(s + n - k, suffix) != 0)
		return 0;
	return gcp_site_chars(at + 1, n - k - (size_t)(at - s) - 1, "-.");
}

/* Google's label rules (Resource Manager "Labels"): key a lowercase
 * letter then [a-z0-9_-], value [a-z0-9_-], each at most 63. */
static const char *
gcp_site_label_why(const char *kv)
{
	const char	*eq = strchr(kv, '=');
	size_t		 kn;

	if (eq == NULL)
		return "is not key=value";
	kn = (size_t)(eq - kv);
	if (kn == 0 || kn > 63)
		return "has a key that is not 1 to 63 characters long";
	if (!(kv[0] >= 'a' && kv[0] <= 'z') || !gcp_site_chars(kv, kn, "_-"))
		return "has a key that does not start with a lowercase "
		    "letter and hold only lowercase letters, digits, '_' "
		    "and '-'";
	if (strncmp(kv, "gpuq", 4) == 0 || strncmp(kv, "goog", 4) == 0)
		return "has a key starting with \"gpuq\" or \"goog\", which "
		    "gpuq and Google set themselves";
	if (strlen(eq + 1) > 63 || !gcp_site_chars(eq + 1, strlen(eq + 1),
	    "_-"))
		return "has a value that is not at most 63 lowercase "
		    "letters, digits, '_' and '-'";
	return NULL;
}

static int
gcp_site_check_labels(const struct gcp_conf *c, char **cause)
{
	const char	*why;
	size_t		 i, j, n;

	if (c->nlabels > GCP_SITE_LABELS_MAX)
		return gcp_site_fail(cause, "[gcp] labels: %zu labels; at "
		    "most %d fit beside gpuq's own", c->nlabels,
		    GCP_SITE_LABELS_MAX);
	for (i = 0; i < c->nlabels; i++) {
		if ((why = gcp_site_label_why(c->labels[i])) != NULL)
			return gcp_site_fail(cause, "[gcp] labels: \"%s\" %s; "
			    "write labels = team=ml, cost-center=cc-42",
			    c->labels[i], why);
		n = strcspn(c->labels[i], "=");
		for (j = 0; j < i; j++)
			if (strncmp(c->labels[j], c->labels[i], n + 1) == 0)
				return gcp_site_fail(cause, "[gcp] labels: "
				    "key \"%.*s\" is given twice; keep one",
				    (int)n, c->labels[i]);
	}
	return 0;
}

static int
gcp_site_check_network(const struct gcp_conf *c, char **cause)
{
	const char	*s = c->network, *colon, *path;
	size_t		 i, j, rn;
	char		*want;

	if (gcp_site_set(s) && !(strchr(s, '/') == NULL ?
	    gcp_site_rfc1035(s, strlen(s)) :
	    gcp_site_path(s, "projects/*/global/networks/*",
	    gcp_site_check_network_seg)))
		return gcp_site_fail(cause, "[gcp] network: \"%s\" is not a "
		    "network; write its name (ml-vpc) or, for Shared VPC, "
		    "projects/HOST_PROJECT/global/networks/NAME", s);
	for (i = 0; i < c->nsubnetworks; i++) {
		s = c->subnetworks[i];
		colon = strchr(s, ':');
		if (colon == NULL || colon == s)
			return gcp_site_fail(cause, "[gcp] subnetwork: \"%s\" "
			    "names no region; write REGION:projects/HOST/"
			    "regions/REGION/subnetworks/NAME, one per region",
			    s);
		rn = (size_t)(colon - s);
		path = colon + 1;
		if (!gcp_site_rfc1035(s, rn) || !gcp_site_path(path,
		    "projects/*/regions/*/subnetworks/*",
		    gcp_site_check_subnet_seg))
			return gcp_site_fail(cause, "[gcp] subnetwork: \"%s\" "
			    "is not REGION:projects/HOST/regions/REGION/"
			    "subnetworks/NAME", s);
		want = xprintf("/regions/%.*s/", (int)rn, s);
		if (strstr(path, want) == NULL) {
			free(want);
			return gcp_site_fail(cause, "[gcp] subnetwork: \"%s\" "
			    "puts region %.*s on a subnetwork of another "
			    "region; a subnetwork serves only its own region",
			    s, (int)rn, s);
		}
		free(want);
		for (j = 0; j < i; j++)
			if (strncmp(c->subnetworks[j], s, rn + 1) == 0)
				return gcp_site_fail(cause, "[gcp] subnetwork: "
				    "region %.*s is given twice; keep one",
				    (int)rn, s);
	}
	for (i = 0; i < c->nnetwork_tags; i++)
		if (!gcp_site_rfc1035(c->network_tags[i],
		    strlen(c->network_tags[i])))
			return gcp_site_fail(cause, "[gcp] network_tags: "
			    "\"%s\" is not a network tag: 1 to 63 lowercase "
			    "letters, digits and '-', starting with a letter",
			    c->network_tags[i]);
	if (c->nnetwork_tags > GCP_SITE_TAGS_MAX)
		return gcp_site_fail(cause, "[gcp] network_tags: at most %d",
		    GCP_SITE_TAGS_MAX);
	return 0;
}

int
gcp_site_check(const struct gcp_conf *c, char **cause)
{
	static const char *const types[] = { "pd-ssd", "pd-standard",
	    "hyperdisk-balanced" };
	const char	*s;
	size_t		 i;
	int		 rc;

	s = c->job_service_account;
	if (gcp_site_set(s) && !gcp_site_email(s))
		return gcp_site_fail(cause, "[gcp] job_service_account: "
		    "\"%s\" is not a service account's email; write "
		    "NAME@PROJECT.iam.gserviceaccount.com", s);
	if ((rc = gcp_site_check_network(c, cause)) != 0)
		return rc;
	if (c->boot_disk_gb != 0 && (c->boot_disk_gb < GCP_BOOT_DISK_GB_MIN ||
	    c->boot_disk_gb > GCP_BOOT_DISK_GB_MAX))
		return gcp_site_fail(cause, "[gcp] boot_disk_gb: %d is outside "
		    "%d..%d, the sizes every service takes", c->boot_disk_gb,
		    GCP_BOOT_DISK_GB_MIN, GCP_BOOT_DISK_GB_MAX);
	if (gcp_site_set(s = c->boot_disk_type)) {
		for (i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strcmp(s, types[i]) == 0)
				break;
		if (i == sizeof types / sizeof types[0])
			return gcp_site_fail(cause, "[gcp] boot_disk_type: "
			    "\"%s\" is not a boot disk type every service "
			    "takes; use pd-ssd, pd-standard or "
			    "hyperdisk-balanced", s);
	}
	if ((rc = gcp_site_check_labels(c, cause)) != 0)
		return rc;
	if (gcp_site_set(s = c->kms_key)) {
		if (!gcp_site_path(s, "projects/*/locations/*/keyRings/*/"
		    "cryptoKeys/*", gcp_site_check_kms_seg))
			return gcp_site_fail(cause, "[gcp] kms_key: \"%s\" is "
			    "not a Cloud KMS key; write projects/P/locations/"
			    "REGION/keyRings/RING/cryptoKeys/KEY", s);
		/* Batch's job takes no key of its own (batch v1
		 * AllocationPolicy): its disks would go unencrypted by
		 * the key the site asked for. */
		if (gcp_conf_has_provider(c, "batch"))
			return gcp_site_fail(cause, "[gcp] kms_key: Cloud "
			    "Batch takes no customer-managed key in a job; "
			    "leave batch out of [gcp] providers (providers "
			    "= vertex, gce) or remove kms_key");
	}
	return 0;
}

char *
gcp_site_network(const struct gcp_conf *c)
{
	if (!gcp_site_set(c->network))
		return NULL;
	if (strchr(c->network, '/') != NULL)
		return xstrdup(c->network);
	return xprintf("projects/%s/global/networks/%s",
	    c->project != NULL ? c->project : "-", c->network);
}

const char *
gcp_site_subnetwork(const struct gcp_conf *c, const char *region)
{
	size_t	i, n;

	if (region == NULL)
		return NULL;
	n = strlen(region);
	for (i = 0; i < c->nsubnetworks; i++)
		if (strncmp(c->subnetworks[i], region, n) == 0 &&
		    c->subnetworks[i][n] == ':')
			return c->subnetworks[i] + n + 1;
	return NULL;
}

int
gcp_site_disk_gb(const struct gcp_conf *c)
{
	return c->boot_disk_gb > 0 ? c->boot_disk_gb :
	    GCP_DEFAULT_BOOT_DISK_GB;
}

/*
 * What running jobs on each service needs of the project: the APIs to
 * turn on and the permissions gpuqd's own credentials must hold (API-
 * NOTES M.1, M.2; Google's "IAM roles and permissions" index for each
 * service), with the predefined role that grants them. gpuq doctor
 * tests these; the service's own ones come from its row, the rest from
 * the common row.
 */
static const char *const gcp_needs_gce_apis[] = {
	"compute.googleapis.com", NULL };
static const char *const gcp_needs_gce_perms[] = {
	"compute.instances.create", "compute.instances.get",
	"compute.instances.list", "compute.instances.delete",
	"compute.instances.getGuestAttributes", "compute.instances.setMetadata",
	"compute.instances.setLabels", "compute.instances.setServiceAccount",
	"compute.disks.create", "compute.subnetworks.use",
	"compute.zoneOperations.get", "compute.zoneOperations.list", NULL };
static const char *const gcp_needs_batch_apis[] = {
	"batch.googleapis.com", "compute.googleapis.com",
	"logging.googleapis.com", NULL };
static const char *const gcp_needs_batch_perms[] = {
	"batch.jobs.create", "batch.jobs.get", "batch.jobs.list",
	"batch.jobs.delete", "batch.tasks.get", "batch.tasks.list", NULL };
static const char *const gcp_needs_vertex_apis[] = {
	"aiplatform.googleapis.com", "cloudquotas.googleapis.com", NULL };
static const char *const gcp_needs_vertex_perms[] = {
	"aiplatform.customJobs.create", "aiplatform.customJobs.get",
	"aiplatform.customJobs.list", "aiplatform.customJobs.cancel",
	"aiplatform.customJobs.delete", NULL };
static const char *const gcp_needs_common_apis[] = {
	"compute.googleapis.com", "cloudbilling.googleapis.com",
	"serviceusage.googleapis.com", "cloudresourcemanager.googleapis.com",
	NULL };
static const char *const gcp_needs_common_perms[] = {
	"compute.regions.get", "compute.acceleratorTypes.list",
	"compute.reservations.list",	/* DESIGN L.1 */
	"resourcemanager.projects.get", "serviceusage.services.get", NULL };

static const struct gcp_needs gcp_needs_table[] = {
	[GCP_SERVICE_GCE] = { "Compute Engine", gcp_needs_gce_apis,
	    gcp_needs_gce_perms, "roles/compute.instanceAdmin.v1",
	    GCP_BOOT_IMAGE },
	[GCP_SERVICE_BATCH] = { "Cloud Batch", gcp_needs_batch_apis,
	    gcp_needs_batch_perms, "roles/batch.jobsEditor", NULL },
	[GCP_SERVICE_VERTEX] = { "Vertex AI", gcp_needs_vertex_apis,
	    gcp_needs_vertex_perms, "roles/aiplatform.user", NULL },
};
static const struct gcp_needs gcp_needs_common = { "gpuqd",
	gcp_needs_common_apis, gcp_needs_common_perms,
	"roles/compute.viewer and roles/serviceusage.serviceUsageConsumer",
	NULL };

const struct gcp_needs *
gcp_site_needs(int service)
{
	if (service < 0)
		return &gcp_needs_common;
	if ((unsigned)service > GCP_SERVICE_VERTEX)
		return NULL;
	return &gcp_needs_table[service];
}
