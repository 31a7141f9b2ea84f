/*
 * cloud.c: the daemon's hold on Google Cloud (cloud.h): the gcp facade
 * built from gpuqd.conf, the enabled providers, deterministic names and
 * request ids, and the one place a job and its attempt become a struct
 * prov_launch -- so a first launch by the scheduler and a re-launch by
 * the reconciler after a crash send the very same request.
 *
 * Must not decide anything: no scheduling, no state changes, no store
 * writes.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/quota.h"
#include "providers/gcp/storage.h"
#include "providers/provider.h"
#include "store/store.h"

#define CLOUD_MAX_PROVIDERS	8

#ifndef GPUQ_DATADIR
#define GPUQ_DATADIR		"/usr/local/share/gpuq"
#endif

struct cloud {
	uv_loop_t		*loop;
	struct store		*store;		/* borrowed */
	const struct conf	*conf;		/* borrowed; may be reloaded */
	struct gcp		*gcp;
	const struct provider	*prov[CLOUD_MAX_PROVIDERS];
	size_t			 nprov;
};

/*
 * VALUE of [gcp] NAME, or NULL when it is the default: gpuqd.conf fills
 * every key with its default, but gcp.h lets [gcp] endpoint win over the
 * per-API endpoints only when those are not set.
 */
static const char *
cloud_set_key(const char *name, const char *value)
{
	const struct conf_key	*k = conf_key_find("gcp", name);

	if (value == NULL || *value == '\0')
		return NULL;
	if (k != NULL && k->def != NULL && strcmp(k->def, value) == 0)
		return NULL;
	return value;
}

static void	cloud_gcp_conf_site(const struct conf *, struct gcp_conf *);

void
cloud_gcp_conf(const struct conf *conf, struct gcp_conf *c)
{
	memset(c, 0, sizeof *c);
	c->project = conf->project;
	c->regions = (const char *const *)conf->regions.v;
	c->nregions = conf->regions.n;
	c->providers = (const char *const *)conf->providers.v;
	c->nproviders = conf->providers.n;
	c->credentials = conf->credentials;
	c->endpoint = conf->endpoint;
	c->compute_endpoint = cloud_set_key("compute_endpoint",
	    conf->compute_endpoint);
	c->batch_endpoint = cloud_set_key("batch_endpoint",
	    conf->batch_endpoint);
	c->vertex_endpoint = cloud_set_key("vertex_endpoint",
	    conf->vertex_endpoint);
	c->billing_endpoint = cloud_set_key("billing_endpoint",
	    conf->billing_endpoint);
	c->storage_endpoint = cloud_set_key("storage_endpoint",
	    conf->storage_endpoint);
	c->quotas_endpoint = cloud_set_key("quotas_endpoint",
	    conf->quotas_endpoint);
	c->token_endpoint = cloud_set_key("token_endpoint",
	    conf->token_endpoint);
	c->metadata_endpoint = cloud_set_key("metadata_endpoint",
	    conf->metadata_endpoint);
	c->quota_ttl = conf->quota_ttl;
	c->price_refresh = conf->price_refresh;
	c->request_budget = conf->request_budget > 0 ?
	    conf->request_budget : -1;
	cloud_gcp_conf_site(conf, c);
}

/* The project's setup keys ([gcp] job_service_account ... kms_key). */
static void
cloud_gcp_conf_site(const struct conf *conf, struct gcp_conf *c)
{
	c->job_service_account = conf->job_service_account;
	c->network = conf->network;
	c->subnetworks = (const char *const *)conf->subnetwork.v;
	c->nsubnetworks = conf->subnetwork.n;
	c->no_external_ip = !conf->external_ip;
	c->network_tags = (const char *const *)conf->network_tags.v;
	c->nnetwork_tags = conf->network_tags.n;
	c->boot_disk_gb = conf->boot_disk_gb;
	c->boot_disk_type = conf->boot_disk_type;
	c->labels = (const char *const *)conf->labels.v;
	c->nlabels = conf->labels.n;
	c->kms_key = conf->kms_key;
	c->reservations = (const char *const *)conf->reservations.v;
	c->nreservations = conf->reservations.n;
}

int
cloud_conf_check(const struct conf *conf, char **cause)
{
	struct gcp_conf	gc;
	int		rc;

	cloud_gcp_conf(conf, &gc);
	rc = gcp_site_check(&gc, cause);
	cloud_gcp_conf_done(&gc);
	return rc;
}

/* Nothing is owned today; kept so callers need not know that. */
void
cloud_gcp_conf_done(struct gcp_conf *c)
{
	memset(c, 0, sizeof *c);
}

/*
 * The bundled price table: $GPUQ_PRICE_TABLE when set (tests, odd
 * installs), else the installed one, else -- for a gpuqd run from its
 * build tree -- the source tree's. NULL: the gcp module's default
 * (cloud_price_table_path() names it).
 */
static const char *
cloud_price_table(void)
{
	const char	*env = getenv("GPUQ_PRICE_TABLE");

	if (env != NULL && *env != '\0')
		return env;
#ifdef GPUQ_TOP_SRCDIR
	if (access(GPUQ_DATADIR "/prices.csv", R_OK) != 0 &&
	    access(GPUQ_TOP_SRCDIR "/data/prices.csv", R_OK) == 0)
		return GPUQ_TOP_SRCDIR "/data/prices.csv";
#endif
	return NULL;
}

const char *
cloud_price_table_path(void)
{
	const char	*p = cloud_price_table();

	return p != NULL ? p : GPUQ_DATADIR "/prices.csv";
}

int
cloud_new(uv_loop_t *loop, struct store *store, const struct conf *conf,
    struct cloud **ret, char **cause)
{
	struct cloud		*c;
	struct gcp_conf		 gc;
	const struct provider	*p;
	size_t			 i;
	int			 rc;

	c = xcalloc(1, sizeof *c);
	c->loop = loop;
	c->store = store;
	c->conf = conf;
	for (i = 0; i < conf->providers.n; i++) {
		p = prov_lookup(conf->providers.v[i]);
		if (p == NULL || p == &prov_null) {
			if (cause != NULL)
				*cause = xprintf("[gcp] providers: unknown "
				    "provider \"%s\"; use %s",
				    conf->providers.v[i], prov_names());
			free(c);
			return -EINVAL;
		}
		if (cloud_provider_index(c, p) >= 0 ||
		    c->nprov == CLOUD_MAX_PROVIDERS)
			continue;
		c->prov[c->nprov++] = p;
	}
	cloud_gcp_conf(conf, &gc);
	gc.price_table = cloud_price_table();
	rc = gcp_new(loop, &gc, &c->gcp, cause);
	cloud_gcp_conf_done(&gc);
	if (rc != 0) {
		free(c);
		return rc;
	}
	*ret = c;
	return 0;
}

void
cloud_start(struct cloud *c)
{
	/* Vertex jobs of this install are counted from the daemon's books,
	 * every other one from the cloud's listing (DESIGN GB.3). */
	if (gcp_quota(c->gcp) != NULL)
		quota_set_install(gcp_quota(c->gcp), cloud_install(c));
	gcp_start(c->gcp);
}

void
cloud_free(struct cloud *c)
{
	if (c == NULL)
		return;
	gcp_free(c->gcp);
	free(c);
}

struct gcp *
cloud_gcp(struct cloud *c)
{
	return c->gcp;
}

struct store *
cloud_store(struct cloud *c)
{
	return c->store;
}

const struct conf *
cloud_conf(struct cloud *c)
{
	return c->conf;
}

uv_loop_t *
cloud_loop(struct cloud *c)
{
	return c->loop;
}

const char *
cloud_install(struct cloud *c)
{
	return store_install_id(c->store);
}

size_t
cloud_nproviders(struct cloud *c)
{
	return c->nprov;
}

const struct provider *
cloud_provider_at(struct cloud *c, size_t i)
{
	return i < c->nprov ? c->prov[i] : NULL;
}

const struct provider *
cloud_provider(struct cloud *c, const char *name)
{
	size_t	i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < c->nprov; i++)
		if (strcmp(c->prov[i]->name, name) == 0)
			return c->prov[i];
	return NULL;
}

int
cloud_provider_index(struct cloud *c, const struct provider *p)
{
	size_t	i;

	for (i = 0; i < c->nprov; i++)
		if (c->prov[i] == p)
			return (int)i;
	return -1;
}

void
cloud_set_providers(struct cloud *c, const struct provider *const *v,
    size_t n)
{
	size_t	i;

	c->nprov = 0;
	for (i = 0; i < n && i < CLOUD_MAX_PROVIDERS; i++)
		c->prov[c->nprov++] = v[i];
}

void
cloud_resource_name(const char *install, int64_t job, int attempt,
    char *buf)
{
	(void)snprintf(buf, CLOUD_NAME_MAX, "gpuq-%s-%" PRId64 "-%d",
	    install, job, attempt);
}

/*
 * SHA-256 rather than a random UUID: the create call after a crash must
 * carry the id the first one carried (Compute Engine requestId, Batch
 * requestId; DESIGN G0.4), and nothing but the name survives a crash.
 * The purpose keeps the create and the delete of one resource apart,
 * since Compute Engine would answer a delete carrying the insert's id
 * with the insert's operation.
 */
void
cloud_request_id(const char *resource, const char *purpose, char *buf)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	EVP_MD_CTX	*ctx;

	ctx = EVP_MD_CTX_new();
	if (ctx == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, resource, strlen(resource)) != 1 ||
	    EVP_DigestUpdate(ctx, "\n", 1) != 1 ||
	    EVP_DigestUpdate(ctx, purpose, strlen(purpose)) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen < 16)
		fatalx("cloud: SHA-256 failed");
	EVP_MD_CTX_free(ctx);
	md[6] = (md[6] & 0x0f) | 0x50;	/* version 5: name-based */
	md[8] = (md[8] & 0x3f) | 0x80;	/* variant RFC 4122 */
	(void)snprintf(buf, CLOUD_UUID_LEN,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x",
	    md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7],
	    md[8], md[9], md[10], md[11], md[12], md[13], md[14], md[15]);
}

char *
cloud_output_place(struct cloud *c, json_t *spec, int64_t job_id)
{
	const char	*uri, *root;
	size_t		 n;

	uri = json_string_value(json_object_get(json_object_get(spec,
	    "checkpoint"), "uri"));
	if (uri != NULL && *uri != '\0') {
		n = strlen(uri);
		return uri[n - 1] == '/' ? xstrdup(uri) : xprintf("%s/", uri);
	}
	root = c->conf->checkpoint_root;
	if (root == NULL || *root == '\0')
		return NULL;
	n = strlen(root);
	while (n > 0 && root[n - 1] == '/')
		n--;
	return xprintf("%.*s/%" PRId64 "/", (int)n, root, job_id);
}

char *
cloud_checkpoint_dir(struct cloud *c, json_t *spec, int64_t job_id)
{
	char	*place, *dir;

	if ((place = cloud_output_place(c, spec, job_id)) == NULL)
		return NULL;
	dir = xprintf("%scheckpoints/", place);
	free(place);
	return dir;
}

/* OBJ[KEY] = the string V; jansson fails here only without memory. */
static void
cloud_env_set(json_t *obj, const char *key, const char *v)
{
	if (json_object_set_new(obj, key, json_string(v)) != 0)
		fatalx("cloud: out of memory building an environment");
}

/*
 * A task of an array (its spec's "task", which submit adds): its index
 * and the array's size, under gpuq's names and Cloud Batch's, so a
 * script written for a Batch sweep runs unchanged. Set after the user's
 * env, so they are ours whatever the file says; on Batch, where the
 * service sets BATCH_TASK_INDEX itself (0 for our one-task jobs), the
 * runnable's environment wins (DESIGN GD.4).
 */
static void
cloud_env_task(json_t *env, json_t *spec)
{
	json_t	*t = json_object_get(spec, "task");
	char	 num[32];

	if (!json_is_object(t))
		return;
	(void)snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
	    json_integer_value(json_object_get(t, "index")));
	cloud_env_set(env, CLOUD_ENV_TASK_INDEX, num);
	cloud_env_set(env, "BATCH_TASK_INDEX", num);
	(void)snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
	    json_integer_value(json_object_get(t, "count")));
	cloud_env_set(env, CLOUD_ENV_TASK_COUNT, num);
	cloud_env_set(env, "BATCH_TASK_COUNT", num);
}

/*
 * What every node of a gang of NODES gets alike (doc/DESIGN.md "Gangs"):
 * the gang's size and the main node's port, under gpuq's names and the
 * ones torchrun and torch.distributed read. Each node's rank and the
 * main node's address differ per node: the provider sets them.
 */
static void
cloud_env_gang(json_t *env, int nodes)
{
	char	num[16];

	(void)snprintf(num, sizeof num, "%d", nodes);
	cloud_env_set(env, CLOUD_ENV_NUM_NODES, num);
	cloud_env_set(env, "WORLD_SIZE", num);
	cloud_env_set(env, CLOUD_ENV_MAIN_PORT, CLOUD_GANG_PORT);
	cloud_env_set(env, "MASTER_PORT", CLOUD_GANG_PORT);
}

json_t *
cloud_env(struct cloud *c, json_t *spec, const struct store_attempt *a)
{
	json_t		*env, *user, *v;
	const char	*k;
	char		 num[32], *dir, *name;

	user = json_object_get(spec, "env");
	env = json_is_object(user) ? json_deep_copy(user) : json_object();
	if (env == NULL)
		fatalx("cloud: out of memory building an environment");
	(void)snprintf(num, sizeof num, "%" PRId64, a->job_id);
	cloud_env_set(env, CLOUD_ENV_JOB_ID, num);
	(void)snprintf(num, sizeof num, "%d", a->number);
	cloud_env_set(env, CLOUD_ENV_ATTEMPT, num);
	if ((dir = cloud_checkpoint_dir(c, spec, a->job_id)) != NULL) {
		cloud_env_set(env, CLOUD_ENV_CKPT_DIR, dir);
		free(dir);
	}
	if (a->resumed_from != NULL && *a->resumed_from != '\0')
		cloud_env_set(env, CLOUD_ENV_RESUME, a->resumed_from);
	if (a->nodes > 1)
		cloud_env_gang(env, a->nodes);
	user = json_object_get(spec, "secret_env");
	json_object_foreach(user, k, v) {
		name = xprintf("%s%s", CLOUD_ENV_SECRET, k);
		cloud_env_set(env, name, json_string_value(v));
		free(name);
	}
	cloud_env_task(env, spec);
	return env;
}

/*
 * A python_package job: its executor image is the image that runs
 * (doc/DESIGN.md "Python packages").
 */
static void
cloud_python_package(json_t *spec, struct prov_launch *l)
{
	json_t	*pp = json_object_get(spec, "python_package");

	if (!json_is_object(pp))
		return;
	l->python_package = pp;
	l->image = json_string_value(json_object_get(pp, "executor_image"));
	l->command = NULL;
	l->args = NULL;
}

/*
 * The project's setup ([gcp] job_service_account ... kms_key) and the
 * job's own disk ({size_gb, type}, spec.c) for L; borrowed from the gcp
 * facade and SPEC (doc/DESIGN.md "A real project").
 */
static void
cloud_launch_site(struct cloud *c, json_t *spec, struct prov_launch *l)
{
	json_t	*disk = json_object_get(spec, "disk");

	l->site = gcp_conf(c->gcp);
	l->disk_gb = (int)json_integer_value(json_object_get(disk,
	    "size_gb"));
	l->disk_type = json_string_value(json_object_get(disk, "type"));
}

int
cloud_launch(struct cloud *c, json_t *spec, const struct store_attempt *a,
    prov_launch_cb cb, void *arg, char **cause)
{
	const struct provider	*p;
	struct prov_launch	 l;
	char			 rid[CLOUD_UUID_LEN], *place;
	json_t			*env, *v;
	int			 rc;

	if ((p = cloud_provider(c, a->provider)) == NULL) {
		if (cause != NULL)
			*cause = xprintf("provider \"%s\" is not enabled in "
			    "gpuqd.conf", a->provider);
		return -ENOENT;
	}
	memset(&l, 0, sizeof l);
	l.install = cloud_install(c);
	l.job_id = a->job_id;
	l.attempt = a->number;
	l.resource = a->resource;
	cloud_request_id(a->resource, "", rid);
	l.request_id = rid;
	l.region = a->region;
	l.zone = a->zone;
	l.machine_type = a->machine_type;
	l.gpu = gpu_lookup(a->gpu);
	l.gpu_count = a->gpu_count;
	l.spot = a->spot;
	l.capacity = cloud_attempt_capacity(a);
	l.flex_wait = cloud_flex_wait(spec);
	l.nodes = a->nodes;
	l.reservation = a->reservation;
	l.image = json_string_value(json_object_get(spec, "image"));
	l.command = json_object_get(spec, "command");
	l.args = json_object_get(spec, "args");
	cloud_python_package(spec, &l);
	v = json_object_get(spec, "labels");
	l.labels = json_is_object(v) ? v : NULL;
	l.max_runtime = json_integer_value(json_object_get(spec,
	    "max_runtime"));
	if (a->gpu != NULL && l.gpu == NULL) {
		if (cause != NULL)
			*cause = xprintf("unknown GPU type \"%s\"", a->gpu);
		return -EINVAL;
	}
	place = cloud_output_place(c, spec, a->job_id);
	l.output_dir = place;
	env = cloud_env(c, spec, a);
	l.env = env;
	v = json_object_get(spec, "secret_env");
	l.secret_env = json_object_size(v) > 0 ? v : NULL;
	cloud_launch_site(c, spec, &l);
	rc = p->launch(c->gcp, &l, cb, arg);
	if (rc != 0 && cause != NULL)
		*cause = xprintf("%s launch of %s: %s", p->name, a->resource,
		    strerror(-rc));
	json_decref(env);
	free(place);
	return rc;
}

int
cloud_attempt_capacity(const struct store_attempt *a)
{
	int	k;

	if (a->capacity != NULL && (k = capacity_lookup(a->capacity)) >= 0)
		return k;
	return a->spot ? CAPACITY_SPOT : CAPACITY_STANDARD;
}

int64_t
cloud_flex_wait(json_t *spec)
{
	json_t	*v = json_object_get(spec, "flex_wait");

	if (json_is_integer(v) && json_integer_value(v) > 0)
		return json_integer_value(v);
	return CAPACITY_FLEX_WAIT_DEFAULT;
}

int
cloud_cancel(struct cloud *c, const struct provider *p, const char *resource,
    const char *cloud_id, const char *region, const char *zone,
    prov_done_cb done, void *arg, char **cause)
{
	return cloud_cancel_nodes(c, p, resource, 1, cloud_id, region, zone,
	    done, arg, cause);
}

int
cloud_cancel_nodes(struct cloud *c, const struct provider *p,
    const char *resource, int nodes, const char *cloud_id,
    const char *region, const char *zone, prov_done_cb done, void *arg,
    char **cause)
{
	struct prov_ref	 ref;
	char		 rid[CLOUD_UUID_LEN];
	int		 rc;

	/* The create's id: the provider derives its delete id from it. */
	cloud_request_id(resource, "", rid);
	memset(&ref, 0, sizeof ref);
	ref.resource = resource;
	ref.cloud_id = cloud_id;
	ref.region = region;
	ref.zone = zone;
	ref.request_id = rid;
	ref.nodes = nodes;
	rc = p->cancel(c->gcp, &ref, done, arg);
	if (rc != 0 && cause != NULL)
		*cause = xprintf("%s cancel of %s: %s", p->name, resource,
		    strerror(-rc));
	return rc;
}

/* Carries a checkpoint search's callback across storage.h's type. */
struct cloud_ckpt {
	cloud_checkpoint_cb	 cb;
	void			*arg;
};

static void
cloud_on_checkpoint(int error, const char *uri, time_t updated,
    const char *cause, void *arg)
{
	struct cloud_ckpt	*ck = arg;

	ck->cb(error, uri, (int64_t)updated, cause, ck->arg);
	free(ck);
}

int
cloud_checkpoint_newest(struct cloud *c, const char *dir,
    cloud_checkpoint_cb cb, void *arg)
{
	struct cloud_ckpt	*ck;
	int			 rc;

	ck = xmalloc(sizeof *ck);
	ck->cb = cb;
	ck->arg = arg;
	rc = storage_newest_checkpoint(gcp_http(c->gcp), gcp_conf(c->gcp),
	    dir, cloud_on_checkpoint, ck);
	if (rc != 0)
		free(ck);
	return rc;
}
