/*
 * provider.h: the one interface the daemon sees of the ways to run a job
 * (doc/DESIGN.md "Providers"). One file per way: vertex.c, batch.c, gce.c,
 * and null.c, which runs nothing, for tests.
 *
 * Providers know Google's APIs and nothing of SQLite: the daemon hands
 * them plain structs and gets plain structs back. Every function that
 * takes a callback either fails now (negative errno, no callback) or
 * calls back exactly once, later, from the loop.
 */
#ifndef GPUQ_PROVIDER_H
#define GPUQ_PROVIDER_H

#include <stdint.h>

#include <jansson.h>

struct gcp;
struct gcp_conf;
struct gpu_type;
struct provider;

/*
 * The kinds of capacity Google sells a GPU as (doc/DESIGN.md "Capacity
 * kinds"). STANDARD and SPOT have the values of the old `int spot` (0, 1),
 * so a stored spot flag or a cool-down's spot column reads as a kind.
 * Only SPOT is preemptible; FLEX (Dynamic Workload Scheduler flex-start)
 * may queue before it starts but then runs unpreempted up to 7 days;
 * RESERVED consumes a reservation the project holds.
 */
enum capacity_kind {
	CAPACITY_STANDARD = 0,
	CAPACITY_SPOT = 1,
	CAPACITY_FLEX = 2,
	CAPACITY_RESERVED = 3,
	CAPACITY_NKINDS
};
#define CAPACITY_BIT(k)		(1u << (k))
#define CAPACITY_ALL		((1u << CAPACITY_NKINDS) - 1)
/* Flex-start limits (API-NOTES K.2): run time, and time queued. */
#define CAPACITY_FLEX_MAX_RUN	(7 * 86400)
#define CAPACITY_FLEX_MAX_WAIT	(2 * 3600)
#define CAPACITY_FLEX_WAIT_DEFAULT 3600	/* the job's flex_wait default */

/* "standard", "spot", "flex", "reserved"; "?" out of range. */
const char	*capacity_name(int kind);
/* The kind named NAME, or -1. */
int		 capacity_lookup(const char *name);
/* "spot, flex, reserved, standard": the names in the job file's order. */
const char	*capacity_names(void);
/* Is KIND preemptible (λ > 0 in the expected cost)? Only Spot. */
int		 capacity_preemptible(int kind);
/*
 * Does provider P sell GPU on MACHINE_TYPE as flex-start? NULL, or why
 * not (static words: "not offered by this service for this GPU").
 */
const char	*capacity_flex_refusal(const struct provider *p,
		    const struct gpu_type *gpu, const char *machine_type);

/* What the daemon asks a provider to run: one attempt of one job. */
struct prov_launch {
	const char	*install;	/* install id, label gpuq-install */
	int64_t		 job_id;
	int		 attempt;	/* 1, 2, ... */
	const char	*resource;	/* gpuq-<install>-<job>-<attempt> */
	const char	*request_id;	/* UUID derived from resource: stable */
	const char	*region;
	const char	*zone;		/* NULL: let the service choose */
	const char	*machine_type;
	const struct gpu_type *gpu;
	int		 gpu_count;
	int		 spot;		/* capacity == CAPACITY_SPOT */
	int		 capacity;	/* enum capacity_kind */
	int64_t		 flex_wait;	/* flex: s to wait for capacity */
	const char	*image;
	json_t		*command;	/* array of strings or NULL; borrowed */
	json_t		*args;		/* array of strings or NULL; borrowed */
	json_t		*python_package; /* {executor_image, package_uris,
					 * module, args} or NULL; borrowed.
					 * image is then executor_image and
					 * command, args are NULL */
	json_t		*env;		/* object: the user's env + GPUQ_*;
					 * borrowed */
	json_t		*secret_env;	/* object NAME: Secret Manager
					 * version, or NULL; borrowed.
					 * Batch sets NAME from it;
					 * env has GPUQ_SECRET_NAME */
	const char	*output_dir;	/* gs://b/p/<job>/ (Vertex base dir) */
	int64_t		 max_runtime;	/* seconds */
	json_t		*labels;	/* user labels object; borrowed */
	/* The project's setup ([gcp] job_service_account ... kms_key,
	 * doc/DESIGN.md "A real project"); NULL: each service's defaults.
	 * Borrowed. */
	const struct gcp_conf *site;
	int		 disk_gb;	/* the job's disk.size_gb; 0: site's */
	const char	*disk_type;	/* the job's disk.type; NULL: site's */
	int		 nodes;		/* machines of a gang; 0 or 1: one
					 * (doc/DESIGN.md "Gangs") */
	const char	*reservation;	/* a Compute Engine reservation
					 * in zone the VMs consume by
					 * name (spot 0), or NULL; only
					 * for a provider with
					 * reservations set */
};

/* Where a resource is, as the daemon recorded it. */
struct prov_ref {
	const char	*resource;	/* our deterministic name */
	const char	*cloud_id;	/* the service's own id, or NULL */
	const char	*region;
	const char	*zone;		/* NULL if unknown */
	const char	*request_id;
	int		 nodes;		/* machines of a gang; 0 or 1: one */
};

/* What the cloud says about one resource of ours. */
enum prov_state {
	PROV_PENDING = 0,	/* accepted, not running yet */
	PROV_RUNNING,
	PROV_SUCCEEDED,		/* exit 0 */
	PROV_FAILED,		/* the user's code exited != 0 */
	PROV_PREEMPTED,		/* Spot preemption */
	PROV_MAINTENANCE,	/* host maintenance / host error */
	PROV_STOCKOUT,		/* no capacity after acceptance */
	PROV_QUOTA,		/* the service ended it for lack of quota */
	PROV_CANCELLED,		/* cancelled or deleted by us */
	PROV_LOST,		/* gone or broken for another reason */
	PROV_ERROR,		/* failed for a cloud-side reason */
};
const char	*prov_state_name(int);

struct prov_observed {
	const char	*resource;	/* our name, from the label or name */
	const char	*cloud_id;	/* e.g. Vertex numeric job name */
	const char	*zone;		/* where it landed, if known */
	int		 state;		/* enum prov_state */
	int		 exit_code;	/* -1 unknown */
	int64_t		 created;	/* unix seconds; 0 unknown */
	int64_t		 started;
	int64_t		 ended;
	const char	*message;	/* the cloud's words, or NULL */
	int64_t		 job_id;	/* from labels; 0 unknown */
	int		 attempt;	/* from labels; 0 unknown */
	int		 node;		/* rank of one node of a gang whose
					   service lists its machines one
					   by one (Compute Engine); -1: the
					   whole attempt */
	const char	*gang;		/* with node >= 0: the attempt's
					   resource name, else NULL */
};

/* Why a launch failed, so the scheduler can react. */
enum prov_fail {
	PROV_FAIL_NONE = 0,
	PROV_FAIL_QUOTA,	/* QUOTA_EXCEEDED / RESOURCE_EXHAUSTED quota */
	PROV_FAIL_STOCKOUT,	/* ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS] */
	PROV_FAIL_TRANSIENT,	/* retries ran out on 5xx/429/network */
	PROV_FAIL_INVALID,	/* the request was refused: not retryable */
	PROV_FAIL_AUTH,		/* credentials or permission */
	PROV_FAIL_EXISTS,	/* already exists: adopt it */
};

struct prov_result {
	int		 fail;		/* enum prov_fail */
	const char	*message;	/* for the user; borrowed */
	const char	*cloud_id;	/* on success, if the service gave one */
	const char	*zone;		/* where it was placed, if known */
	const char	*zones_available;	/* stockout hint: "z1,z2" */
	const char	*quota_metric;	/* which quota was exceeded */
};

typedef void (*prov_launch_cb)(const struct prov_result *, void *);
/* Called once per resource seen; then the poll's DONE callback once. */
typedef void (*prov_poll_cb)(const struct prov_observed *, void *);
typedef void (*prov_done_cb)(const struct prov_result *, void *);

struct provider {
	const char	*name;		/* "vertex", "batch", "gce" */
	/* Which quota a launch draws on: "compute" or "vertex" service,
	 * and its metric name (new string) for this GPU and model. */
	char		*(*quota_metric)(struct gcp *, const char *region,
			    const struct gpu_type *, int spot,
			    const char **ret_service);
	/* Does this service pick the zone itself (Vertex, Batch)? */
	int		  picks_zone;
	/* Does it name the resource itself, with no request id, so that
	 * a create sent twice makes two (Vertex AI)? attempt.c waits
	 * before re-creating one after a crash, and deletes duplicates. */
	int		  names_itself;
	/* Does one poll list every region at once (Compute Engine's
	 * aggregatedList)? Then the daemon polls it with REGION NULL. */
	int		  poll_global;
	/* The service whose quota a launch draws on (enum gcp_service):
	 * GCE for Batch too, whose VMs are Compute VMs (DESIGN GA.2). */
	int		  quota_service;
	/* The service whose prices a launch pays (enum gcp_service): the
	 * price table has rows per service (price.h). */
	int		  price_service;
	/* Does that quota service report no usage of its own (Vertex AI's,
	 * read from Cloud Quotas, DESIGN GB.2)? Then the daemon counts
	 * the GPUs its live attempts hold and tells quota.c
	 * (quota_set_usage()). */
	int		  quota_usage_ours;
	/* Can a launch consume a named reservation (prov_launch
	 * reservation; doc/DESIGN.md "Reservations")? */
	int		  reservations;
	int		(*launch)(struct gcp *, const struct prov_launch *,
			    prov_launch_cb, void *);
	/* One list call (plus pages) for every resource of ours in REGION.
	 * CB gets each resource, then DONE gets the result once. */
	int		(*poll)(struct gcp *, const char *install,
			    const char *region, prov_poll_cb cb,
			    prov_done_cb done, void *);
	/* Stop and delete. Done when the cloud accepted the request. */
	int		(*cancel)(struct gcp *, const struct prov_ref *,
			    prov_done_cb, void *);
	/* The images it runs a python_package with: prefixes, NULL-ended;
	 * NULL: any image (Vertex AI takes only its pre-built training
	 * containers, DESIGN E.3). */
	const char *const *package_images;
};

/* May P run a python_package with executor image IMAGE? */
int			 prov_package_image_ok(const struct provider *p,
			    const char *image);

/* Lookup by name; NULL if unknown. */
const struct provider	*prov_lookup(const char *name);
/* Names, for error messages: "vertex, batch, gce". */
const char		*prov_names(void);

extern const struct provider prov_vertex;
extern const struct provider prov_batch;
extern const struct provider prov_gce;
extern const struct provider prov_null;

#endif
