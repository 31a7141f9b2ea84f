/*
 * cloud.h: the daemon's hold on Google Cloud, shared by the scheduler
 * (sched.c) and the reconciler (reconcile.c).
 *
 * One struct cloud owns the providers/gcp facade built from gpuqd.conf,
 * knows which providers are enabled, and turns a job and one of its
 * attempts into what a provider is handed: the deterministic resource
 * name and request ids, the checkpoint place, the environment of the
 * container (the checkpoint contract, doc/DESIGN.md), labels and limits.
 *
 * Knows the store's structs and the provider interface; decides
 * nothing: when and where to launch is sched.c's business, what the
 * cloud says about it reconcile.c's.
 */
#ifndef GPUQ_CLOUD_H
#define GPUQ_CLOUD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "providers/provider.h"

struct cloud;
struct conf;
struct gcp;
struct gcp_conf;
struct store;
struct store_attempt;

/* "gpuq-<install>-<job>-<attempt>" fits, NUL included. */
#define CLOUD_NAME_MAX		64
/* A UUID, 8-4-4-4-12 hex digits, NUL included. */
#define CLOUD_UUID_LEN		37

/* Environment variables of the checkpoint contract (gpuq-job(5)). */
#define CLOUD_ENV_JOB_ID	"GPUQ_JOB_ID"
#define CLOUD_ENV_ATTEMPT	"GPUQ_ATTEMPT"
#define CLOUD_ENV_TASK_INDEX	"GPUQ_TASK_INDEX"	/* arrays */
#define CLOUD_ENV_TASK_COUNT	"GPUQ_TASK_COUNT"
#define CLOUD_ENV_CKPT_DIR	"GPUQ_CHECKPOINT_DIR"
#define CLOUD_ENV_RESUME	"GPUQ_RESUME_FROM"
/* GPUQ_SECRET_<NAME>: the Secret Manager version of secret_env NAME. */
#define CLOUD_ENV_SECRET	"GPUQ_SECRET_"
/* A gang's (doc/DESIGN.md "Gangs"): every node's, alike. */
#define CLOUD_ENV_NUM_NODES	"GPUQ_NUM_NODES"
#define CLOUD_ENV_MAIN_PORT	"GPUQ_MAIN_PORT"
/* The port the main node listens on: torch.distributed's own default. */
#define CLOUD_GANG_PORT		"29500"

/*
 * New cloud on LOOP for STORE's install id and CONF ([gcp] and
 * [scheduler]; borrowed, read when needed). Builds the gcp facade
 * (credentials and the price table are read now; no network) and the
 * list of enabled providers. 0, or -errno and *cause.
 */
int	 cloud_new(uv_loop_t *loop, struct store *store,
	    const struct conf *conf, struct cloud **ret, char **cause);
/* Begin background work (price refresh). */
void	 cloud_start(struct cloud *);
/*
 * Cancel every request in flight (each pending callback runs once,
 * cancelled, before this returns) and free. Free the scheduler and the
 * reconciler after this, so their callbacks still find them. NULL ok.
 */
void	 cloud_free(struct cloud *);

/* Borrowed parts, valid until cloud_free(). */
struct gcp		*cloud_gcp(struct cloud *);
/* The bundled price table's path (also the region catalog, spec.h);
 * static storage. */
const char		*cloud_price_table_path(void);
struct store		*cloud_store(struct cloud *);
const struct conf	*cloud_conf(struct cloud *);
uv_loop_t		*cloud_loop(struct cloud *);
/* Install id (8 hex characters), the gpuq-install label. Borrowed. */
const char		*cloud_install(struct cloud *);

/* Enabled providers, in gpuqd.conf's order. */
size_t			 cloud_nproviders(struct cloud *);
const struct provider	*cloud_provider_at(struct cloud *, size_t i);
/* Enabled provider NAME, or NULL. */
const struct provider	*cloud_provider(struct cloud *, const char *name);
/* Index of provider P among the enabled ones, or -1. */
int			 cloud_provider_index(struct cloud *,
			    const struct provider *p);
/*
 * Replace the enabled providers by V[0..N) (borrowed, static): for
 * tests, which run the daemon's logic on providers of their own.
 */
void	 cloud_set_providers(struct cloud *, const struct provider *const *v,
	    size_t n);
/* The gcp_conf CONF describes; strings borrowed from CONF. Free with
 * cloud_gcp_conf_done(). */
void	 cloud_gcp_conf(const struct conf *conf, struct gcp_conf *ret);
void	 cloud_gcp_conf_done(struct gcp_conf *);
/* Check CONF's [gcp] project setup (network, accounts, disks, labels,
 * key) against Google's rules: 0, or -EINVAL and *cause naming the key
 * and the fix. Touches no network. */
int	 cloud_conf_check(const struct conf *conf, char **cause);

/* "gpuq-<install>-<job>-<attempt>" into BUF (CLOUD_NAME_MAX bytes). */
void	 cloud_resource_name(const char *install, int64_t job, int attempt,
	    char *buf);
/*
 * A UUID derived from RESOURCE and PURPOSE ("" for the create call,
 * "delete" for the cancel) into BUF (CLOUD_UUID_LEN bytes): SHA-256 of
 * both, the first 16 bytes formatted with RFC 4122 version 5 and
 * variant bits. The same inputs give the same id after a restart, so a
 * create repeated after a crash is recognised by the service.
 */
void	 cloud_request_id(const char *resource, const char *purpose,
	    char *buf);
/*
 * The job's output place (checkpoint contract): SPEC's checkpoint.uri
 * (it ends in '/'), else <[gcp] checkpoint_root>/<job id>/. NULL when
 * neither is set. New string.
 */
char	*cloud_output_place(struct cloud *, json_t *spec, int64_t job_id);
/* <output place>checkpoints/, or NULL. New string. */
char	*cloud_checkpoint_dir(struct cloud *, json_t *spec, int64_t job_id);
/*
 * The container environment of attempt A of the job with SPEC: the
 * job's env, then GPUQ_JOB_ID, GPUQ_ATTEMPT, GPUQ_CHECKPOINT_DIR (when
 * the job has an output place) and, when A resumes from a checkpoint
 * (a->resumed_from), GPUQ_RESUME_FROM; and for each secret_env NAME,
 * GPUQ_SECRET_<NAME> = its secret version's resource name (never the
 * secret's value, which gpuqd does not see). New object.
 */
json_t	*cloud_env(struct cloud *, json_t *spec, const struct store_attempt *a);

/* The kind of capacity of attempt A (enum capacity_kind): its capacity
 * column, else (rows before it) Spot or standard as its spot says. */
int	 cloud_attempt_capacity(const struct store_attempt *a);
/* How long a flex-start request of the job with normalized SPEC may wait
 * for capacity: its flex_wait, else CAPACITY_FLEX_WAIT_DEFAULT (s). */
int64_t	 cloud_flex_wait(json_t *spec);

/*
 * Launch attempt A (its row already committed, state launching) of the
 * job with normalized SPEC on A's provider, with A's name, request id,
 * place and the checkpoint contract. Fails now (-ENOENT the provider is
 * not enabled, -EINVAL the spec or attempt is unusable, or the
 * provider's own error; *cause says why) or calls CB exactly once, later.
 */
int	 cloud_launch(struct cloud *, json_t *spec, const struct store_attempt *a,
	    prov_launch_cb cb, void *arg, char **cause);
/*
 * Stop and delete RESOURCE (CLOUD_ID, ZONE may be NULL) in REGION on
 * provider P. Fails now (the provider's error, *cause) or calls DONE
 * exactly once, later.
 */
int	 cloud_cancel(struct cloud *, const struct provider *p,
	    const char *resource, const char *cloud_id, const char *region,
	    const char *zone, prov_done_cb done, void *arg, char **cause);
/* As cloud_cancel(), for every node of a gang of NODES machines. */
int	 cloud_cancel_nodes(struct cloud *, const struct provider *p,
	    const char *resource, int nodes, const char *cloud_id,
	    const char *region, const char *zone, prov_done_cb done,
	    void *arg, char **cause);

/*
 * Find the newest checkpoint under DIR (a gs:// URI): providers/gcp's
 * storage listing. 0 and CB once, later (see storage.h: URI NULL when
 * there is none); or -errno and no call.
 */
typedef void	(*cloud_checkpoint_cb)(int error, const char *uri,
		    int64_t updated, const char *cause, void *arg);
int	 cloud_checkpoint_newest(struct cloud *, const char *dir,
	    cloud_checkpoint_cb cb, void *arg);

#endif
