/*
 * conf.c: gpuqd.conf(5) read with libinih, driven by one key table.
 *
 * Every key lives in conf_table[] below, once: its section, name, type,
 * default (written as a config file would write it, and parsed by the
 * same code), field, reload behaviour, range and documentation. Lookup
 * through the table gives precise errors ("FILE:LINE: unknown key ...,
 * known keys in [daemon]: ..."), the defaults, the effective-configuration
 * log line and the reload diff. gpuqd.conf(5) must list every row; a unit
 * test holds it to that. The [gcp] endpoints, price_refresh,
 * request_budget and [scheduler] quota_ttl take their defaults from
 * providers/gcp/gcp-defaults.h, which the gcp layer uses too.
 *
 * Knows nothing of the loop, sockets, the store or the cloud.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "common/duration.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/webhook.h"
#include "common/xmalloc.h"
#include "daemon/conf.h"
#include "providers/gcp/gcp-defaults.h"

#define F(field)	offsetof(struct conf, field)
/* A row without a range, and one with MIN..MAX for numeric types. */
#define KEY(sec, name, type, def, field, flags, doc) \
	{ sec, name, type, def, F(field), flags, 0, 0, NULL, doc }
#define KEYR(sec, name, type, def, field, flags, min, max, doc) \
	{ sec, name, type, def, F(field), flags, min, max, NULL, doc }

#define YEARS100	(100.0 * 365 * 86400)

static const struct conf_key conf_table[] = {
	KEY("daemon", "socket", CONF_STRING, GPUQ_SOCKET_DEFAULT,
	    socket, CONF_RESTART,
	    "path of the control socket gpuq talks to"),
	KEY("daemon", "state_dir", CONF_STRING, "/var/lib/gpuq",
	    state_dir, CONF_RESTART,
	    "directory of the queue database gpuq.db and the lock gpuqd.lock"),
	KEY("daemon", "socket_group", CONF_STRING, "gpuq",
	    socket_group, CONF_RESTART,
	    "group whose members may connect: owns a socket gpuqd makes"),
	KEY("daemon", "admin_group", CONF_STRING, "gpuq-admin",
	    admin_group, 0,
	    "group whose members may act on every job"),
	KEY("daemon", "log_level", CONF_LOG_LEVEL, "info",
	    log_level, 0,
	    "most verbose level logged: error, warning, info or debug"),
	KEY("daemon", "log_submits", CONF_BOOL, "no",
	    log_submits, 0,
	    "log each accepted submit (job id, name, uid, pid) at info"),
	KEYR("daemon", "max_connections", CONF_INT, "256",
	    max_connections, 0, 1, 1000000,
	    "clients connected at once; more are told busy"),
	KEYR("daemon", "max_connections_per_uid", CONF_INT, "32",
	    max_connections_per_uid, 0, 1, 1000000,
	    "clients of one user connected at once"),
	KEYR("daemon", "idle_timeout", CONF_DURATION, "10m",
	    idle_timeout, 0, 1, YEARS100,
	    "close a client connection idle this long"),
	KEYR("daemon", "max_pending_output", CONF_SIZE, "4MiB",
	    max_pending_output, 0, 4096, 1024.0 * 1024 * 1024,
	    "replies queued to one client before gpuqd stops reading it"),
	KEY("daemon", "metrics_file", CONF_STRING, "", metrics_file, 0,
	    "Prometheus text file for node_exporter's textfile collector"),
	KEYR("daemon", "metrics_interval", CONF_DURATION, "15s",
	    metrics_interval, 0, 1, 86400,
	    "how often metrics_file is rewritten"),
	KEYR("daemon", "clock_scale", CONF_DOUBLE, "1",
	    clock_scale, CONF_RESTART, 1, 1000000,
	    "for tests only: simulated seconds per real second"),
	KEYR("daemon", "clock_origin", CONF_DOUBLE, "0",
	    clock_origin, CONF_RESTART, 0, 1e11,
	    "for tests only: real epoch seconds where simulated time begins"),

	KEY("gcp", "project", CONF_STRING, "",
	    project, CONF_RESTART,
	    "Google Cloud project to run jobs in; empty: jobs only queue"),
	KEY("gcp", "regions", CONF_LIST, "",
	    regions, CONF_RESTART,
	    "regions to consider; empty: every region"),
	{ "gcp", "providers", CONF_LIST, "vertex, batch, gce",
	    F(providers), CONF_RESTART, 0, 0, "vertex,batch,gce",
	    "ways to run jobs, any of vertex, batch, gce" },
	KEY("gcp", "checkpoint_root", CONF_STRING, "",
	    checkpoint_root, CONF_RESTART,
	    "gs:// prefix under which each job gets <job id>/"),
	KEY("gcp", "spot_requires_checkpoint", CONF_BOOL, "no",
	    spot_requires_checkpoint, CONF_RESTART,
	    "refuse a job that may run on Spot but has no checkpoint place"),
	KEY("gcp", "credentials", CONF_STRING, "",
	    credentials, CONF_RESTART,
	    "service-account key file; empty: Application Default Credentials"),
	KEY("gcp", "endpoint", CONF_STRING, "",
	    endpoint, CONF_RESTART,
	    "one base URL for every API (the simulated cloud)"),
	KEY("gcp", "compute_endpoint", CONF_STRING,
	    GCP_DEFAULT_COMPUTE_ENDPOINT, compute_endpoint, CONF_RESTART,
	    "Compute Engine API"),
	KEY("gcp", "batch_endpoint", CONF_STRING,
	    GCP_DEFAULT_BATCH_ENDPOINT, batch_endpoint, CONF_RESTART,
	    "Cloud Batch API"),
	KEY("gcp", "vertex_endpoint", CONF_STRING,
	    GCP_DEFAULT_VERTEX_ENDPOINT, vertex_endpoint,
	    CONF_RESTART, "Vertex AI API; {region} is replaced"),
	KEY("gcp", "billing_endpoint", CONF_STRING,
	    GCP_DEFAULT_BILLING_ENDPOINT, billing_endpoint,
	    CONF_RESTART, "Cloud Billing catalog API"),
	KEY("gcp", "storage_endpoint", CONF_STRING,
	    GCP_DEFAULT_STORAGE_ENDPOINT, storage_endpoint,
	    CONF_RESTART, "Cloud Storage JSON API"),
	KEY("gcp", "token_endpoint", CONF_STRING,
	    GCP_DEFAULT_TOKEN_ENDPOINT, token_endpoint,
	    CONF_RESTART, "OAuth 2.0 token endpoint"),
	KEY("gcp", "metadata_endpoint", CONF_STRING,
	    GCP_DEFAULT_METADATA_ENDPOINT, metadata_endpoint,
	    CONF_RESTART, "GCE metadata server"),
	KEY("gcp", "quotas_endpoint", CONF_STRING,
	    GCP_DEFAULT_QUOTAS_ENDPOINT, quotas_endpoint,
	    CONF_RESTART, "Cloud Quotas API"),
	KEYR("gcp", "price_refresh", CONF_DURATION,
	    GCP_DEFAULT_TEXT(GCP_DEFAULT_PRICE_REFRESH) "s",
	    price_refresh, CONF_RESTART, 60, YEARS100,
	    "how often to re-read the Cloud Billing catalog"),
	KEYR("gcp", "request_budget", CONF_INT,
	    GCP_DEFAULT_TEXT(GCP_DEFAULT_BUDGET),
	    request_budget, CONF_RESTART, 0, 1000000,
	    "API requests a minute gpuqd may start per API; 0: no limit"),
	KEY("gcp", "job_service_account", CONF_STRING, "",
	    job_service_account, CONF_RESTART,
	    "service account every job runs as; empty: each service's own"),
	KEY("gcp", "network", CONF_STRING, "",
	    network, CONF_RESTART,
	    "VPC network of every job; empty: the project's default"),
	KEY("gcp", "subnetwork", CONF_LIST, "",
	    subnetwork, CONF_RESTART,
	    "per region: REGION:projects/P/regions/REGION/subnetworks/S"),
	KEY("gcp", "external_ip", CONF_BOOL, "yes",
	    external_ip, CONF_RESTART,
	    "give Compute Engine and Batch VMs an external IP address"),
	KEY("gcp", "network_tags", CONF_LIST, "",
	    network_tags, CONF_RESTART,
	    "network tags (firewall rules) on every job's VMs"),
	KEYR("gcp", "boot_disk_gb", CONF_INT,
	    GCP_DEFAULT_TEXT(GCP_DEFAULT_BOOT_DISK_GB),
	    boot_disk_gb, CONF_RESTART, GCP_BOOT_DISK_GB_MIN,
	    GCP_BOOT_DISK_GB_MAX,
	    "boot disk size of every job's VMs unless the job says"),
	KEY("gcp", "boot_disk_type", CONF_STRING, "",
	    boot_disk_type, CONF_RESTART,
	    "pd-ssd, pd-standard or hyperdisk-balanced; empty: each "
	    "service's own"),
	KEY("gcp", "labels", CONF_LIST, "",
	    labels, CONF_RESTART,
	    "key=value labels put on every resource gpuq creates"),
	KEY("gcp", "kms_key", CONF_STRING, "",
	    kms_key, CONF_RESTART,
	    "Cloud KMS key for customer-managed encryption of job disks"),
	KEYR("gcp", "logs_interval", CONF_DURATION, "10s",
	    logs_interval, 0, 1, 3600,
	    "how often one combined Cloud Logging read serves gpuq logs"),
	KEY("gcp", "reservations", CONF_LIST, "auto",
	    reservations, CONF_RESTART,
	    "Compute Engine reservations jobs may use: auto, none or names"),

	KEYR("scheduler", "poll_interval", CONF_DURATION, "15s",
	    poll_interval, 0, 1, 86400,
	    "how often the reconciler lists each region's resources"),
	KEYR("scheduler", "quota_ttl", CONF_DURATION,
	    GCP_DEFAULT_TEXT(GCP_DEFAULT_QUOTA_TTL) "s",
	    quota_ttl, CONF_RESTART, 1, 86400,
	    "how long a quota reading is trusted"),
	KEYR("scheduler", "preemptions_per_hour", CONF_DOUBLE, "0.1",
	    preemptions_per_hour, 0, 0, 1000,
	    "prior Spot preemption rate until the daemon has its own history"),
	KEYR("scheduler", "restart_overhead", CONF_DURATION, "10m",
	    restart_overhead, 0, 0, 86400,
	    "time lost per interruption: boot, image pull, checkpoint load"),
	KEYR("scheduler", "deadline_margin", CONF_DURATION, "1h",
	    deadline_margin, 0, 0, 30 * 86400,
	    "slack below which a deadline job leaves Spot for good"),
	KEYR("scheduler", "spot_wait", CONF_DURATION, "3h",
	    spot_wait, 0, 0, 30 * 86400,
	    "how long a job waits out Spot stockouts before dearer capacity"),
	KEY("scheduler", "move_to_cheaper", CONF_BOOL, "yes",
	    move_to_cheaper, 0,
	    "move a running job where capacity freed up when that saves"),
	KEYR("scheduler", "backoff_base", CONF_DURATION, "30s",
	    backoff_base, 0, 1, 86400,
	    "first delay before retrying a job after a retryable error"),
	KEYR("scheduler", "backoff_max", CONF_DURATION, "30m",
	    backoff_max, 0, 1, 7 * 86400,
	    "longest delay between retries (doubling from backoff_base)"),
	KEYR("scheduler", "stockout_cooldown", CONF_DURATION, "10m",
	    stockout_cooldown, 0, 1, 86400,
	    "first cool-down of a zone and GPU after a stockout"),
	KEYR("scheduler", "stockout_cooldown_max", CONF_DURATION, "6h",
	    stockout_cooldown_max, 0, 1, 7 * 86400,
	    "longest cool-down (doubling per repeated stockout)"),
	KEYR("scheduler", "pending_timeout", CONF_DURATION, "1h",
	    pending_timeout, 0, 0, 7 * 86400,
	    "withdraw an attempt the cloud keeps queued this long; 0: never"),

	{ "notify", "on", CONF_LIST, "failed", F(notify_on), 0, 0, 0,
	    "failed,succeeded,interrupted,cancelled",
	    "which job events are notified" },
	KEY("notify", "webhook", CONF_STRING, "", notify_webhook, 0,
	    "URL each event is POSTed to as JSON; \"\": none"),
	KEY("notify", "webhook_format", CONF_STRING, "json",
	    notify_webhook_format, 0,
	    "body of the POST: json (gpuq's fields) or slack"),
	KEY("notify", "command", CONF_STRING, "", notify_command, 0,
	    "program run per event with GPUQ_* variables; \"\": none"),
	KEYR("notify", "command_timeout", CONF_DURATION, "30s",
	    notify_command_timeout, 0, 1, 3600,
	    "how long the command may run before it is killed"),
};
#define CONF_NKEYS	(sizeof conf_table / sizeof conf_table[0])
_Static_assert(CONF_NKEYS <= 64 * CONF_GIVEN_WORDS,
    "struct conf's given has too few bits");

static const char *conf_sections[] = { "daemon", "gcp", "scheduler",
    "notify" };
#define CONF_NSECTIONS	(sizeof conf_sections / sizeof conf_sections[0])

const struct conf_key *
conf_keys(size_t *ret_n)
{
	*ret_n = CONF_NKEYS;
	return conf_table;
}

const struct conf_key *
conf_key_find(const char *section, const char *name)
{
	size_t	i;

	for (i = 0; i < CONF_NKEYS; i++)
		if (strcasecmp(conf_table[i].section, section) == 0 &&
		    strcasecmp(conf_table[i].name, name) == 0)
			return &conf_table[i];
	return NULL;
}

static int
conf_section_known(const char *section)
{
	size_t	i;

	for (i = 0; i < CONF_NSECTIONS; i++)
		if (strcasecmp(conf_sections[i], section) == 0)
			return 1;
	return 0;
}

/* "socket, state_dir, ..." for an unknown-key error. New string. */
static char *
conf_section_keys_text(const char *section)
{
	char	*s = NULL, *t;
	size_t	 i;

	for (i = 0; i < CONF_NKEYS; i++) {
		if (strcasecmp(conf_table[i].section, section) != 0)
			continue;
		t = s == NULL ? xstrdup(conf_table[i].name) :
		    xprintf("%s, %s", s, conf_table[i].name);
		free(s);
		s = t;
	}
	return s == NULL ? xstrdup("") : s;
}

static void *
conf_field(struct conf *c, const struct conf_key *k)
{
	return (char *)c + k->offset;
}

static const void *
conf_cfield(const struct conf *c, const struct conf_key *k)
{
	return (const char *)c + k->offset;
}

static void
conf_list_clear(struct conf_list *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* 1 if ITEM is one of the comma-separated CHOICES. */
static int
conf_choice_ok(const char *choices, const char *item)
{
	size_t		 n = strlen(item);
	const char	*p = choices, *e;

	while (*p != '\0') {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) == n && strncasecmp(p, item, n) == 0)
			return 1;
		p = *e == ',' ? e + 1 : e;
	}
	return 0;
}

/* Append the comma-separated items of V to L, trimming blanks. */
static int
conf_list_parse(struct conf_list *l, const struct conf_key *r,
    const char *v, char **cause)
{
	const char	*p = v, *e, *end;
	char		*item;

	while (*p != '\0') {
		while (isspace((unsigned char)*p) || *p == ',')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		end = e;
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		item = xstrndup(p, (size_t)(end - p));
		if (r->choices != NULL &&
		    !conf_choice_ok(r->choices, item)) {
			if (cause != NULL)
				*cause = xprintf("\"%s\" is not allowed in "
				    "[%s] %s; use any of %s", item,
				    r->section, r->name,
				    r->choices);
			free(item);
			return -EINVAL;
		}
		l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
		l->v[l->n++] = item;
		p = e;
	}
	return 0;
}

/* "4MiB", "512KiB", "2G", "1048576" -> bytes. 0 or -EINVAL. */
static int
conf_size_parse(const char *v, int64_t *ret)
{
	static const struct {
		const char	*suffix;
		int64_t		 mult;
	} units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1024 }, { "kb", 1024 }, { "kib", 1024 },
		{ "m", 1024 * 1024 }, { "mb", 1024 * 1024 },
		{ "mib", 1024 * 1024 },
		{ "g", 1024LL * 1024 * 1024 }, { "gb", 1024LL * 1024 * 1024 },
		{ "gib", 1024LL * 1024 * 1024 },
	};
	char		*end;
	long long	 n;
	size_t		 i;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(end, units[i].suffix) != 0)
			continue;
		if (n > INT64_MAX / units[i].mult)
			return -EINVAL;
		*ret = n * units[i].mult;
		return 0;
	}
	return -EINVAL;
}

static int
conf_bool_parse(const char *v, int *ret)
{
	static const char	*yes[] = { "yes", "true", "on", "1" };
	static const char	*no[] = { "no", "false", "off", "0" };
	size_t			 i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*ret = 1;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*ret = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static int
conf_range_check(const struct conf_key *r, double v, char **cause)
{
	if (r->max <= r->min || (v >= r->min && v <= r->max))
		return 0;
	if (cause != NULL)
		*cause = xprintf("[%s] %s must be between %g and %g",
		    r->section, r->name, r->min, r->max);
	return -EINVAL;
}

/*
 * Parse V for row R into its field of C. APPEND adds to a list instead
 * of replacing it (an ini continuation line).
 */
static int
conf_set_row(struct conf *c, const struct conf_key *r, const char *v,
    int append, char **cause)
{
	const struct conf_key	*k = r;
	void			*f = conf_field(c, k);
	struct conf_list	 l = { NULL, 0 };
	char			*end;
	long			 lv;
	double			 dv;
	int64_t			 iv;
	int			 bv, rc;

	switch (k->type) {
	case CONF_STRING:
		free(*(char **)f);
		*(char **)f = xstrdup(v);
		return 0;
	case CONF_LIST:
		if ((rc = conf_list_parse(&l, r, v, cause)) != 0) {
			conf_list_clear(&l);
			return rc;
		}
		if (append) {
			struct conf_list	*cur = f;
			size_t			 i;

			for (i = 0; i < l.n; i++) {
				cur->v = xreallocarray(cur->v, cur->n + 1,
				    sizeof *cur->v);
				cur->v[cur->n++] = l.v[i];
			}
			free(l.v);
		} else {
			conf_list_clear(f);
			*(struct conf_list *)f = l;
		}
		return 0;
	case CONF_DURATION:
		if (duration_parse(v, &iv) != 0) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not a "
				    "duration; write e.g. 90s, 15m, 2h30m or "
				    "1d", k->section, k->name, v);
			return -EINVAL;
		}
		if ((rc = conf_range_check(r, (double)iv, cause)) != 0)
			return rc;
		*(int64_t *)f = iv;
		return 0;
	case CONF_SIZE:
		if (conf_size_parse(v, &iv) != 0) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not a "
				    "size; write bytes or e.g. 512KiB, 4MiB, "
				    "1GiB", k->section, k->name, v);
			return -EINVAL;
		}
		if ((rc = conf_range_check(r, (double)iv, cause)) != 0)
			return rc;
		*(int64_t *)f = iv;
		return 0;
	case CONF_INT:
		errno = 0;
		lv = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || errno != 0 ||
		    lv < INT_MIN || lv > INT_MAX) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not an "
				    "integer", k->section, k->name, v);
			return -EINVAL;
		}
		if ((rc = conf_range_check(r, (double)lv, cause)) != 0)
			return rc;
		*(int *)f = (int)lv;
		return 0;
	case CONF_DOUBLE:
		errno = 0;
		dv = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(dv)) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not a "
				    "number", k->section, k->name, v);
			return -EINVAL;
		}
		if ((rc = conf_range_check(r, dv, cause)) != 0)
			return rc;
		*(double *)f = dv;
		return 0;
	case CONF_BOOL:
		if (conf_bool_parse(v, &bv) != 0) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not a "
				    "boolean; use yes or no", k->section,
				    k->name, v);
			return -EINVAL;
		}
		*(int *)f = bv;
		return 0;
	case CONF_LOG_LEVEL:
		bv = log_level_parse(v);
		if (bv < 0) {
			if (cause != NULL)
				*cause = xprintf("[%s] %s: \"%s\" is not a "
				    "log level; use error, warning, info or "
				    "debug", k->section, k->name, v);
			return -EINVAL;
		}
		*(int *)f = bv;
		return 0;
	}
	return -EINVAL;
}

int
conf_set(struct conf *c, const char *section, const char *name,
    const char *value, char **cause)
{
	const struct conf_key	*r;
	char				*known;

	if (!conf_section_known(section)) {
		if (cause != NULL)
			*cause = xprintf("unknown section [%s]; known "
			    "sections: daemon, gcp, scheduler", section);
		return -ENOENT;
	}
	r = conf_key_find(section, name);
	if (r == NULL) {
		if (cause != NULL) {
			known = conf_section_keys_text(section);
			*cause = xprintf("unknown key \"%s\" in [%s]; known "
			    "keys in [%s]: %s", name, section, section,
			    known);
			free(known);
		}
		return -ENOENT;
	}
	return conf_set_row(c, r, value, 0, cause);
}

void
conf_done(struct conf *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < CONF_NKEYS; i++) {
		const struct conf_key	*k = &conf_table[i];

		if (k->type == CONF_STRING)
			free(*(char **)conf_field(c, k));
		else if (k->type == CONF_LIST)
			conf_list_clear(conf_field(c, k));
	}
	memset(c, 0, sizeof *c);
}

int
conf_init(struct conf *c)
{
	char	*cause = NULL;
	size_t	 i;

	memset(c, 0, sizeof *c);
	for (i = 0; i < CONF_NKEYS; i++)
		if (conf_set_row(c, &conf_table[i], conf_table[i].def, 0,
		    &cause) != 0)
			fatalx("bad built-in default: %s", cause);
	return 0;
}

/*
 * Does S look like a Google Cloud region, [a-z]+-[a-z]+[0-9]+? Region
 * names go into API paths and hosts ({region}-aiplatform...): nothing
 * else may.
 */
static int
conf_region_ok(const char *s)
{
	size_t	n;

	n = strspn(s, "abcdefghijklmnopqrstuvwxyz");
	if (n == 0 || s[n] != '-' || strlen(s) > 63)
		return 0;
	s += n + 1;
	n = strspn(s, "abcdefghijklmnopqrstuvwxyz");
	if (n == 0)
		return 0;
	s += n;
	n = strspn(s, "0123456789");
	return n > 0 && s[n] == '\0';
}

static int	conf_check_notify(const struct conf *, char **);
static int	conf_check_reservations(const struct conf *, char **);

/* Rules that span keys. */
static int
conf_check(const struct conf *c, char **cause)
{
	const char	*r;
	char		*region;
	size_t		 i, n;

	for (i = 0; i < c->regions.n; i++) {
		r = c->regions.v[i];
		if (conf_region_ok(r))
			continue;
		n = strlen(r);
		region = n > 2 && r[n - 2] == '-' ? xstrndup(r, n - 2) : NULL;
		if (cause != NULL && region != NULL && conf_region_ok(region))
			*cause = xprintf("[gcp] regions: \"%s\" is a zone; "
			    "list its region %s instead", r, region);
		else if (cause != NULL)
			*cause = xprintf("[gcp] regions: \"%s\" is not a region "
			    "name; regions look like us-central1", r);
		free(region);
		return -EINVAL;
	}
	if (c->backoff_base > c->backoff_max) {
		if (cause != NULL)
			*cause = xprintf("[scheduler] backoff_base (%llds) is "
			    "longer than backoff_max (%llds)",
			    (long long)c->backoff_base,
			    (long long)c->backoff_max);
		return -EINVAL;
	}
	if (c->stockout_cooldown > c->stockout_cooldown_max) {
		if (cause != NULL)
			*cause = xprintf("[scheduler] stockout_cooldown "
			    "(%llds) is longer than stockout_cooldown_max "
			    "(%llds)", (long long)c->stockout_cooldown,
			    (long long)c->stockout_cooldown_max);
		return -EINVAL;
	}
	if (c->max_connections_per_uid > c->max_connections) {
		if (cause != NULL)
			*cause = xprintf("[daemon] max_connections_per_uid "
			    "(%d) is above max_connections (%d)",
			    c->max_connections_per_uid, c->max_connections);
		return -EINVAL;
	}
	if (conf_check_notify(c, cause) != 0 ||
	    conf_check_reservations(c, cause) != 0)
		return -EINVAL;
	if (*c->socket == '\0' || *c->state_dir == '\0') {
		if (cause != NULL)
			*cause = xprintf("[daemon] %s must not be empty",
			    *c->socket == '\0' ? "socket" : "state_dir");
		return -EINVAL;
	}
	return 0;
}

/*
 * [gcp] reservations: "auto" or "none" alone, or names of Compute Engine
 * reservations, which are RFC 1035 names (lower-case letter, then
 * letters, digits and hyphens, at most 63, no trailing hyphen;
 * https://cloud.google.com/compute/docs/reference/rest/v1/reservations).
 */
static int
conf_check_reservations(const struct conf *c, char **cause)
{
	const char	*r;
	size_t		 i, n;

	for (i = 0; i < c->reservations.n; i++) {
		r = c->reservations.v[i];
		if (strcmp(r, "auto") == 0 || strcmp(r, "none") == 0) {
			if (c->reservations.n == 1)
				continue;
			if (cause != NULL)
				*cause = xprintf("[gcp] reservations: \"%s\" "
				    "must stand alone; write auto, none, or "
				    "a list of reservation names", r);
			return -EINVAL;
		}
		n = strlen(r);
		if (n > 0 && n <= 63 && r[0] >= 'a' && r[0] <= 'z' &&
		    r[n - 1] != '-' && strspn(r, "abcdefghijklmnopqrstuvwxyz"
		    "0123456789-") == n)
			continue;
		if (cause != NULL)
			*cause = xprintf("[gcp] reservations: \"%s\" is not a "
			    "reservation name; names are lower-case letters, "
			    "digits and hyphens, starting with a letter (as "
			    "gcloud compute reservations list shows them)", r);
		return -EINVAL;
	}
	if (c->reservations.n == 0) {
		if (cause != NULL)
			*cause = xprintf("[gcp] reservations is empty; write "
			    "auto, none, or reservation names");
		return -EINVAL;
	}
	return 0;
}

/* The [notify] and metrics keys a daemon cannot start with. */
static int
conf_check_notify(const struct conf *c, char **cause)
{
	char	*why = NULL;

	if (*c->notify_webhook != '\0' &&
	    webhook_url_check(c->notify_webhook, &why) != 0) {
		if (cause != NULL)
			*cause = xprintf("[notify] webhook \"%s\": %s",
			    c->notify_webhook, why);
		free(why);
		return -EINVAL;
	}
	if (strcmp(c->notify_webhook_format, "json") != 0 &&
	    strcmp(c->notify_webhook_format, "slack") != 0) {
		if (cause != NULL)
			*cause = xprintf("[notify] webhook_format \"%s\" is "
			    "unknown; write json or slack",
			    c->notify_webhook_format);
		return -EINVAL;
	}
	if (*c->notify_command != '\0' && *c->notify_command != '/') {
		if (cause != NULL)
			*cause = xprintf("[notify] command \"%s\" is not an "
			    "absolute path; it runs without a shell, so "
			    "write the program's full path",
			    c->notify_command);
		return -EINVAL;
	}
	if (*c->metrics_file != '\0' && *c->metrics_file != '/') {
		if (cause != NULL)
			*cause = xprintf("[daemon] metrics_file \"%s\" is not "
			    "an absolute path", c->metrics_file);
		return -EINVAL;
	}
	return 0;
}

/* State of one ini_parse_stream run. */
struct conf_parse {
	struct conf		*c;
	const char		*path;
	FILE			*f;
	int			 line;	/* last line read */
	char			*err;	/* first error, new */
	const struct conf_key	*last;	/* previous key */
};

static void
conf_parse_error(struct conf_parse *p, char *msg)
{
	if (p->err == NULL)
		p->err = xprintf("%s:%d: %s", p->path, p->line, msg);
	free(msg);
}

/* fgets for inih, counting lines and refusing lines it would split. */
static char *
conf_on_read(char *str, int num, void *arg)
{
	struct conf_parse	*p = arg;
	size_t			 n;
	int			 ch;

	if (fgets(str, num, p->f) == NULL)
		return NULL;
	p->line++;
	n = strlen(str);
	if (n > 0 && str[n - 1] == '\n')
		return str;
	ch = getc(p->f);
	if (ch == EOF) {
		p->c->open_line = p->line;	/* no newline at the end */
		return str;
	}
	if (ch == '\n')
		return str;		/* exactly full */
	conf_parse_error(p, xprintf("line longer than %d characters",
	    num - 2));
	return NULL;
}

static int
conf_on_key(void *arg, const char *section, const char *name,
    const char *value)
{
	struct conf_parse	*p = arg;
	const struct conf_key	*r;
	char			*cause = NULL;
	int			 append;

	if (*section == '\0') {
		conf_parse_error(p, xprintf("key \"%s\" is outside any "
		    "section; put it under [daemon], [gcp] or [scheduler]",
		    name));
		return 0;
	}
	r = conf_key_find(section, name);
	if (r == NULL) {
		/* conf_set words the error: unknown section, or key. */
		(void)conf_set(p->c, section, name, value, &cause);
		conf_parse_error(p, cause);
		p->last = NULL;
		return 0;
	}
	append = r == p->last && r->type == CONF_LIST;
	p->last = r;
	if (conf_set_row(p->c, r, value, append, &cause) != 0) {
		conf_parse_error(p, cause);
		return 0;
	}
	CONF_GIVEN_SET(p->c, (size_t)(r - conf_table));
	return 1;
}

int
conf_load(struct conf *c, const char *path, int must_exist, char **cause)
{
	struct conf_parse	p;
	int			rc;

	conf_init(c);
	memset(&p, 0, sizeof p);
	p.c = c;
	p.path = path;
	p.f = fopen(path, "re");
	if (p.f == NULL) {
		rc = -errno;
		if (rc == -ENOENT && !must_exist)
			return 0;
		if (cause != NULL)
			*cause = xprintf("%s: %s", path, strerror(-rc));
		conf_done(c);
		return rc;
	}
	c->from_file = 1;
	rc = ini_parse_stream(conf_on_read, &p, conf_on_key, &p);
	if (rc == 0 && ferror(p.f))
		conf_parse_error(&p, xprintf("read error"));
	(void)fclose(p.f);
	if (rc != 0 && p.err == NULL) {
		p.line = rc;
		conf_parse_error(&p, xprintf("syntax error: expected "
		    "[section], key = value, or a comment"));
	}
	if (p.err == NULL && conf_check(c, &p.err) == 0)
		return 0;
	if (p.err != NULL && strncmp(p.err, path, strlen(path)) != 0) {
		char	*t = xprintf("%s: %s", path, p.err);

		free(p.err);
		p.err = t;
	}
	if (cause != NULL)
		*cause = p.err;
	else
		free(p.err);
	conf_done(c);
	return -EINVAL;
}

/* "1h30m", "15s", "0s": the shortest exact form. */
static char *
conf_duration_text(int64_t s)
{
	static const struct {
		int64_t	 sec;
		char	 unit;
	} units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' }, { 1, 's' } };
	char	 buf[64];
	size_t	 i, len = 0;

	if (s == 0)
		return xstrdup("0s");
	buf[0] = '\0';
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (s < units[i].sec)
			continue;
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%lld%c",
		    (long long)(s / units[i].sec), units[i].unit);
		s %= units[i].sec;
	}
	return xstrdup(buf);
}

static char *
conf_size_text(int64_t n)
{
	if (n != 0 && n % (1024LL * 1024 * 1024) == 0)
		return xprintf("%lldGiB", (long long)(n / (1024LL << 20)));
	if (n != 0 && n % (1024 * 1024) == 0)
		return xprintf("%lldMiB", (long long)(n / (1024 * 1024)));
	if (n != 0 && n % 1024 == 0)
		return xprintf("%lldKiB", (long long)(n / 1024));
	return xprintf("%lld", (long long)n);
}

char *
conf_value_text(const struct conf *c, const struct conf_key *k)
{
	const void		*f = conf_cfield(c, k);
	const struct conf_list	*l;
	char			*s, *t;
	size_t			 i;

	switch (k->type) {
	case CONF_STRING:
		return xstrdup(*(char *const *)f ? *(char *const *)f : "");
	case CONF_LIST:
		l = f;
		s = xstrdup("");
		for (i = 0; i < l->n; i++) {
			t = xprintf("%s%s%s", s, i ? ", " : "", l->v[i]);
			free(s);
			s = t;
		}
		return s;
	case CONF_DURATION:
		return conf_duration_text(*(const int64_t *)f);
	case CONF_SIZE:
		return conf_size_text(*(const int64_t *)f);
	case CONF_INT:
		return xprintf("%d", *(const int *)f);
	case CONF_DOUBLE:
		return xprintf("%g", *(const double *)f);
	case CONF_BOOL:
		return xstrdup(*(const int *)f ? "yes" : "no");
	case CONF_LOG_LEVEL:
		return xstrdup(log_level_name(*(const int *)f));
	}
	return xstrdup("?");
}

void
conf_log(const struct conf *c)
{
	size_t	 i, j;
	char	*line, *v, *t;

	for (i = 0; i < CONF_NSECTIONS; i++) {
		line = xprintf("config [%s]", conf_sections[i]);
		for (j = 0; j < CONF_NKEYS; j++) {
			const struct conf_key	*k = &conf_table[j];

			if (strcmp(k->section, conf_sections[i]) != 0)
				continue;
			v = conf_value_text(c, k);
			t = xprintf("%s %s=%s%s%s", line, k->name,
			    *v == '\0' || strchr(v, ' ') ? "\"" : "", v,
			    *v == '\0' || strchr(v, ' ') ? "\"" : "");
			free(v);
			free(line);
			line = t;
		}
		log_info("%s", line);
		free(line);
	}
}

static size_t
conf_field_size(enum conf_type t)
{
	switch (t) {
	case CONF_STRING:
		return sizeof(char *);
	case CONF_LIST:
		return sizeof(struct conf_list);
	case CONF_DURATION:
	case CONF_SIZE:
		return sizeof(int64_t);
	case CONF_DOUBLE:
		return sizeof(double);
	case CONF_INT:
	case CONF_BOOL:
	case CONF_LOG_LEVEL:
		break;
	}
	return sizeof(int);
}

int
conf_apply(struct conf *cur, struct conf *next)
{
	unsigned char	 tmp[sizeof(struct conf_list) + sizeof(double)];
	char		*a, *b, *restart = NULL, *t;
	size_t		 i, sz;
	int		 changed = 0;

	for (i = 0; i < CONF_NKEYS; i++) {
		const struct conf_key	*k = &conf_table[i];

		a = conf_value_text(cur, k);
		b = conf_value_text(next, k);
		if (strcmp(a, b) == 0)
			goto next;
		if (k->flags & CONF_RESTART) {
			log_info("reload: [%s] %s: \"%s\" -> \"%s\" waits for "
			    "a restart", k->section, k->name, a, b);
			t = xprintf("%s%s[%s] %s", restart ? restart : "",
			    restart ? ", " : "", k->section, k->name);
			free(restart);
			restart = t;
			goto next;
		}
		log_info("reload: [%s] %s: \"%s\" -> \"%s\"", k->section,
		    k->name, a, b);
		/* Swap: NEXT now holds the old value, freed below. */
		sz = conf_field_size(k->type);
		memcpy(tmp, conf_field(cur, k), sz);
		memcpy(conf_field(cur, k), conf_field(next, k), sz);
		memcpy(conf_field(next, k), tmp, sz);
		changed++;
next:
		free(a);
		free(b);
	}
	/* One line says what the reload could not do, and what will. */
	if (restart != NULL)
		log_warnx("reload: %s changed; these keys need a restart "
		    "(systemctl restart gpuqd) and keep their running values "
		    "until then", restart);
	free(restart);
	memcpy(cur->given, next->given, sizeof cur->given);
	cur->from_file = next->from_file;
	conf_done(next);
	return changed;
}

int
conf_reload_check(const struct conf *cur, const struct conf *next,
    const char *path, char **cause)
{
	char	*missing = NULL, *t;
	size_t	 i, n = 0;

	if (cur->from_file && !next->from_file) {
		if (cause != NULL)
			*cause = xprintf("%s: the file is gone; the running "
			    "configuration came from it", path);
		return -EINVAL;
	}
	if (next->open_line > 0) {
		if (cause != NULL)
			*cause = xprintf("%s:%d: the last line does not end "
			    "with a newline: the file may be half-written; "
			    "finish it (with a newline) and reload again",
			    path, next->open_line);
		return -EINVAL;
	}
	for (i = 0; i < CONF_NKEYS; i++) {
		if (!CONF_GIVEN(cur, i) || CONF_GIVEN(next, i))
			continue;
		t = xprintf("%s%s[%s] %s", missing ? missing : "",
		    missing ? ", " : "", conf_table[i].section,
		    conf_table[i].name);
		free(missing);
		missing = t;
		n++;
	}
	if (missing == NULL)
		return 0;
	if (cause != NULL)
		*cause = xprintf("%s: %s %s set in the running configuration "
		    "but missing from the file (empty or cut short?); write "
		    "%s again (with the default value to go back to the "
		    "default), or restart gpuqd to start from this file",
		    path, missing, n == 1 ? "is" : "are", n == 1 ? "it" :
		    "them");
	free(missing);
	return -EINVAL;
}
