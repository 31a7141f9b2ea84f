/*
 * prov-impl.h: what the provider files (provider.c, vertex.c, batch.c,
 * gce.c, null.c) share with each other and with their unit tests: the
 * label keys, the pure request builders and response mappers, and a few
 * helpers. The daemon never includes this file: it sees provider.h.
 *
 * Builders take a struct prov_launch and return a NEW jansson object, the
 * exact body the service's create method takes. Mappers take one resource
 * as the service lists it (borrowed) and fill a struct prov_observed whose
 * strings are borrowed from that resource or from a struct prov_text the
 * caller provides: valid while both live.
 */
#ifndef GPUQ_PROV_IMPL_H
#define GPUQ_PROV_IMPL_H

#include <stdint.h>

#include <jansson.h>

#include "providers/provider.h"

struct gcp;
struct gcp_error;
struct gpu_type;
struct http_resp;

/*
 * Labels gpuq puts on every resource it creates. Keys and values follow
 * Google's label rules (lowercase letters, digits, '_' and '-', at most 63
 * characters), so they are the same on Compute Engine, Batch and Vertex AI.
 * The poll of every service filters on PROV_LABEL_INSTALL.
 */
#define PROV_LABEL_INSTALL	"gpuq-install"	/* the daemon's install id */
#define PROV_LABEL_JOB		"gpuq-job"	/* job id, decimal */
#define PROV_LABEL_ATTEMPT	"gpuq-attempt"	/* attempt number, decimal */
#define PROV_LABEL_RESOURCE	"gpuq-resource"	/* resource name (Vertex) */

/* Text a mapper derives rather than borrows from the resource. */
struct prov_text {
	char	zone[64];
	char	message[512];
	char	gang[64];	/* a node's attempt resource */
};

/* provider.c */
/* RFC 3339 ("2024-06-26T11:42:22.006-07:00") to unix seconds: 0 or
 * -EINVAL. Fractions are dropped; 'Z' and numeric offsets are honoured. */
/* Unix seconds of OBJ's string member KEY; 0 when absent or bad. */
int64_t		 prov_json_time(json_t *obj, const char *key);
/* Last '/'-separated part of S (borrowed from S); S itself if none. */
const char	*prov_last_segment(const char *s);
/* "<seconds>s", the google-duration form. New string. */
char		*prov_duration(int64_t sec);
/*
 * Flex-start (doc/DESIGN.md "Capacity kinds", API-NOTES K): the run time
 * to ask for, the job's max_runtime (+ GRACE) at most 7 days; and how
 * long Google should keep the request queued, a little over the job's
 * flex_wait so that gpuqd withdraws it first and says why, and Google's
 * own limit only backs it up while gpuqd is down (at most 2 h: MAX 0,
 * no cap).
 */
int64_t		 prov_flex_run(const struct prov_launch *l, int64_t grace);
int64_t		 prov_flex_queue(const struct prov_launch *l, int64_t max);
#define PROV_FLEX_QUEUE_MARGIN	600
/* Labels object for L: the user's labels, then gpuq's (which win); with
 * WITH_RESOURCE also gpuq-resource. New object. */
json_t		*prov_labels_new(const struct prov_launch *l,
		    int with_resource);
/* labels.gpuq-install="INSTALL": the list filter every poll uses.
 * New string. */
char		*prov_filter_install(const char *install);
/* Check that L is complete enough to build any body: 0, or -EINVAL
 * and *cause naming the missing or bad field. */
int		 prov_launch_check(const struct prov_launch *l, char **cause);
/* The resource name of L's reservation, projects/P/zones/Z/reservations/N
 * (DESIGN L.2), or its bare name without a project or zone; NULL when
 * L consumes none. New. */
char		*prov_reservation_path(const struct prov_launch *l);
/* pypkg.c: a python_package job (L->python_package set) as the command
 * and args (new arrays) the executor image runs on Batch and Compute
 * Engine: /bin/sh -c SCRIPT gpuq-python-package MODULE COUNT URI...
 * ARG..., the script a constant and every user string an argument. */
void		 prov_pypkg_argv(const struct prov_launch *l,
		    json_t **ret_command, json_t **ret_args);
/* The script itself (pypkg-run.sh, generated into pypkg-run.c). */
extern const char	 prov_pypkg_script[];
/* Reset O: unknown everywhere (exit -1, times 0, strings NULL). */
void		 prov_observed_init(struct prov_observed *o);
/* Fill O's job_id and attempt from a labels object (borrowed). */
void		 prov_observed_labels(struct prov_observed *o, json_t *labels);
/* OBJ[KEY] = V, taking V (NULL: out of memory, fatal). */
void		 prov_set(json_t *obj, const char *key, json_t *v);
/* V, or fatal if NULL: for jansson constructors, which fail only on
 * OOM. */
json_t		*prov_checked(json_t *v);
/* Job id and attempt from a resource name gpuq-<install>-<job>-<attempt>:
 * 0, or -EINVAL (outputs untouched). */
int		 prov_name_parse(const char *resource, int64_t *ret_job,
		    int *ret_attempt);
/* Copy at most SIZE-1 bytes of S into DST, NUL-terminated; DST. */
char		*prov_strlcpy(char *dst, const char *s, size_t size);

/*
 * Quota metric names (DESIGN GA.2, B.1), new strings or NULL without a
 * GPU: Compute Engine's NVIDIA_T4_GPUS, PREEMPTIBLE_NVIDIA_T4_GPUS for
 * Spot (Batch VMs are Compute VMs and draw on the same); Vertex AI's
 * custom_model_training_[preemptible_]nvidia_t4_gpus, without the
 * aiplatform.googleapis.com/ prefix.
 */
char		*prov_compute_metric(const struct gpu_type *gpu, int spot);
char		*prov_vertex_metric(const struct gpu_type *gpu, int spot);
/* The provider.h quota_metric of a launch on SERVICE (enum gcp_service):
 * quota.c's name for REGION, or without G prov_*_metric()'s. */
char		*prov_quota_metric(struct gcp *g, int service,
		    const char *region, const struct gpu_type *gpu, int spot,
		    const char **ret_service);
/* Fill R from a failed call's error E (kind -> enum prov_fail; message,
 * zones_available, quota_metric borrowed from E). */
void		 prov_result_from_error(const struct gcp_error *e,
		    struct prov_result *r);
/* Init E for a request that could not start, RC its -errno: message
 * "FMT...: strerror(-RC)"; the caller frees it with gcp_error_done(). */
void		 prov_error_start(struct gcp_error *e, int rc,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Fill R for a cancel or delete answered with E (NULL: no error):
 * success if E is none or NOT_FOUND (gone already), else as
 * prov_result_from_error(). */
void		 prov_result_from_cancel(const struct gcp_error *e,
		    struct prov_result *r);
/* A UUID derived from SEED and PURPOSE ("delete"), stable across runs
 * and distinct from SEED: for the requestId of a second kind of call on
 * one resource. Written to OUT (37 bytes). */
void		 prov_uuid_derive(const char *seed, const char *purpose,
		    char out[37]);

/* The configured project of G, or NULL if none is set. Borrowed. */
const char	*prov_project(struct gcp *g);
/* One authorized request (http.h): METHOD on URL (copied) with BODY
 * (borrowed, may be NULL), FLAGS beyond HTTP_AUTH. As
 * http_request_start(). */
int		 prov_call(struct gcp *g, int api, const char *method,
		    const char *url, json_t *body, int flags,
		    void (*cb)(const struct http_resp *, void *), void *arg);
/* DELETE URL (copied) on API: DONE once with prov_result_from_cancel()
 * of the answer; 0, or -errno and no callback. */
int		 prov_delete(struct gcp *g, int api, const char *url,
		    prov_done_cb done, void *arg);

/*
 * One listing, all pages: GET URL (taken) on API, then again with
 * &pageToken=... while the answer has a nextPageToken. PAGE runs for
 * each answer (borrowed during the call). DONE runs once at the end,
 * with NULL after the last page, or the error that stopped the walk
 * (borrowed). Returns 0, or a negative errno (no callback at all).
 */
typedef void	(*prov_page_fn)(json_t *page, void *arg);
typedef void	(*prov_list_done_fn)(const struct gcp_error *err, void *arg);
int		 prov_list(struct gcp *g, int api, char *url,
		    prov_page_fn page, prov_list_done_fn done, void *arg);

/* How to read one service's listing of its resources, for a poll. */
struct prov_listing {
	int		 api;		/* enum gcp_api */
	const char	*items;		/* the answer's array: "jobs" */
	/* As vertex_job_map(): 0 to report the item, else skip it. */
	int		(*map)(json_t *item, struct prov_observed *o,
			    struct prov_text *t);
	const char	*service;	/* for "Batch could not reach X": the
					   answer lists "unreachable"
					   locations; NULL if it has none */
};
/* A provider.h poll made of one listing of URL (taken), all pages: each
 * item in HOW->items labelled gpuq-install=INSTALL that HOW->map accepts
 * goes to CB, then DONE once. 0, or -errno and no callback. */
int		 prov_poll_list(struct gcp *g, const struct prov_listing *how,
		    char *url, const char *install, prov_poll_cb cb,
		    prov_done_cb done, void *arg);

/* prov-site.c: the project's setup (struct prov_launch's site) and the
 * job's disk, put into a body the service's builder made (borrowed,
 * changed in place). */
void		 prov_site_labels(const struct prov_launch *l,
		    json_t *labels);
void		 prov_site_gce(const struct prov_launch *l, json_t *body);
void		 prov_site_batch(const struct prov_launch *l, json_t *body);
void		 prov_site_vertex(const struct prov_launch *l, json_t *body);

/* vertex.c */
/* The customJobs.create body for L: 0 and *ret (new), or -EINVAL and
 * *cause. */
int		 vertex_job_body(const struct prov_launch *l, json_t **ret,
		    char **cause);
/* Map one CustomJob (borrowed) onto *O: 0, or -EINVAL if it is not a
 * CustomJob gpuq could have made. */
int		 vertex_job_map(json_t *job, struct prov_observed *o,
		    struct prov_text *t);

/* batch.c */
/* The jobs.create body for L (jobId goes in the URL): 0 and *ret (new),
 * or -EINVAL and *cause. */
int		 batch_job_body(const struct prov_launch *l, json_t **ret,
		    char **cause);
/* Map one Batch Job (borrowed) onto *O: 0, or -EINVAL. */
int		 batch_job_map(json_t *job, struct prov_observed *o,
		    struct prov_text *t);
/* The prov_state for a task exit code; *ret_why gets a static reason
 * for the reserved codes 5000x, NULL for the user's own codes. */
int		 batch_exit_state(int code, const char **ret_why);
/* Memory of a machine type in MiB, or -1 if gpuq does not know it. */
int64_t		 batch_machine_mib(const char *machine_type);

/* gce.c */
/* The fixed startup script (providers/gce-startup.sh). */
extern const char	 gce_startup_script[];
/* The boot image every gpuq VM starts from. */
extern const char	 gce_boot_image[];
/* Does MACHINE_TYPE come with its own GPUs (a2, a3, a4, g2)? */
int		 gce_machine_has_gpus(const char *machine_type);
/* The instances.insert body for L (requestId goes in the URL): 0 and
 * *ret (new), or -EINVAL and *cause. */
int		 gce_instance_body(const struct prov_launch *l, json_t **ret,
		    char **cause);
/* Has INST stopped, so that the exit code or the reason must be looked
 * up (guest attributes, zone operations) before mapping it? */
int		 gce_instance_stopped(json_t *inst);
/* Is INST STOPPING, so that the zone operation may already say the
 * system is taking it (a preemption) before it has stopped? */
int		 gce_instance_stopping(json_t *inst);
/*
 * Map one Instance (borrowed) onto *O. GUEST is the instance's
 * getGuestAttributes answer for queryPath "gpuq/" (or NULL), OP_TYPE the
 * operationType of the system operation that stopped it
 * ("compute.instances.preempted", ...) or NULL; both matter only once
 * gce_instance_stopped(), and OP_TYPE also while gce_instance_stopping()
 * (a system operation ends the job then). 0, or -EINVAL if INST is not
 * an instance.
 */
int		 gce_instance_map(json_t *inst, json_t *guest,
		    const char *op_type, struct prov_observed *o,
		    struct prov_text *t);

/* gang.c: multi-node jobs (doc/DESIGN.md "Gangs"). */
/* The fixed entry wrapper of a gang's node on Vertex AI and Batch. */
extern const char	 prov_gang_entry[];
/* The machines L asks for: 1, or its nodes. */
int		 prov_gang_nodes(const struct prov_launch *l);
/* ["/bin/sh", "-c", prov_gang_entry, "gpuq-gang", command..., args...]:
 * the wrapper, then the job's own words as its arguments. New array. */
json_t		*prov_gang_argv(const struct prov_launch *l);
/* "<resource>-<rank>": node RANK's own resource (Compute Engine). New. */
char		*prov_gang_node_name(const char *resource, int rank);
/* NAME of a node ("gpuq-<install>-<job>-<attempt>-<rank>") into its
 * attempt's RESOURCE (SIZE bytes) and *RET_RANK: 0, or -EINVAL if NAME
 * is no node's name. */
int		 prov_gang_node_parse(const char *name, char *resource,
		    size_t size, int *ret_rank);
/* Turn a single-node create body (BODY, changed in place) into L's gang,
 * if L has more than one node. */
void		 vertex_gang_apply(const struct prov_launch *l, json_t *body);
void		 batch_gang_apply(const struct prov_launch *l, json_t *body);
/* After batch_job_map(): a RUNNING job one of whose tasks has FAILED
 * is a gang that lost a node (O becomes LOST, T holds the words). */
void		 batch_gang_map(json_t *job, struct prov_observed *o,
		    struct prov_text *t);
/* The instances.insert body of node RANK of L's gang: the VM
 * <resource>-<rank>, its rank in the job's env. 0 and *ret (new), or
 * -EINVAL. */
int		 gce_gang_body(const struct prov_launch *l, int rank,
		    json_t **ret);
/* Does MACHINE_TYPE's series take a compact placement policy? */
int		 gce_machine_compact(const char *machine_type);
/* "<resource>-pack": the compact placement policy of a gang. New. */
char		*gce_gang_policy_name(const char *resource);
/* The resourcePolicies.insert body of L's gang's policy. New. */
json_t		*gce_gang_policy_body(const struct prov_launch *l);

#endif
