/*
 * api-int.h: what api.c and api-cloud.c share, and nobody else sees.
 *
 * api.c holds the one table of ops and answers the queue's ops; the
 * cloud ops (plan, quotas, prices) live in api-cloud.c and are listed in
 * that same table through the handlers declared here.
 */
#ifndef GPUQ_API_INT_H
#define GPUQ_API_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "common/jsonw.h"
#include "daemon/api.h"

struct api_cloud;
struct api_req;
struct api_waiter;
struct cloud;
struct sched;
struct server_client;
struct store;
struct store_job;

/* One submit waiting for the group commit (api.c). */
struct api_submit;

/* The submits of one turn, and their strings in one buffer. */
struct api_batch {
	struct api_submit	*v;
	size_t			 n;
	size_t			 cap;
	struct jsonw		 text;		/* NUL-separated strings */
	size_t			 nrows;		/* jobs rows: tasks count */
};

struct api {
	uv_loop_t		*loop;
	struct store		*store;		/* borrowed */
	const struct conf	*conf;		/* borrowed */
	struct api_hooks	 hooks;
	uv_check_t		 check;		/* check.data == this */
	uv_idle_t		 idle;		/* idle.data == this */
	int			 closes;	/* handles still open */

	/* The batch filling now, and the one being committed (reused). */
	struct api_batch	 batch;
	struct api_batch	 spare;
	struct store_job_new	*rows;		/* store_jobs_insert args */
	int64_t			*ids;
	size_t			 caprows;
	struct jsonw		 reply;		/* scratch for short replies */

	/* The cloud side (api-cloud.c): NULL while none runs. */
	struct cloud		*cloud;		/* borrowed */
	struct sched		*sched;		/* borrowed */
	struct logs		*logs;		/* borrowed; NULL: none */
	/* Cloud ops whose answers are on their way. */
	LIST_HEAD(, api_cloud)	 clouds;

	/* Clients waiting for jobs to end (api-wait.c). */
	LIST_HEAD(, api_waiter)	 waiters;
	uv_timer_t		 wait_timer;	/* data == this */
	int64_t			 wait_ended;	/* ended jobs, last seen */

	gid_t			 admin_gid;	/* of [daemon] admin_group */
	int			 admin_ok;	/* the group exists */
	char			*admin_missing;	/* said so for this name */
	char			*known_ops;	/* "submit, list, ..." */
};

#define API_OWNER	0x1	/* acts on one job: "id", owner check */
#define API_CLOUD	0x2	/* needs [gcp] project and providers */
#define API_DEFER	0x4	/* may answer after the group commit */

struct api_op {
	const char	*name;
	/* Reply, or defer; -EAGAIN to wait for owed replies. JOB: API_OWNER */
	int		(*handler)(struct api_req *, struct store_job *job);
	int		 flags;
	const char	*fields;	/* allowed besides "op", comma list */
};

/* One request being answered. */
struct api_req {
	struct api		*api;
	struct server_client	*client;
	json_t			*req;		/* the parsed line; borrowed */
	const struct api_op	*op;
	int			 task;		/* "id" named task N ("42.3"),
						   or -1 */
};

/* Optional string field: 1 and *ret (borrowed), 0 absent, -1 replied. */
int	api_field_string(struct api_req *, const char *name,
	    const char **ret);

/* Optional integer field in [LO, HI]: 1 and *ret, 0 absent, -1 replied. */
int	api_field_int(struct api_req *, const char *name, json_int_t lo,
	    json_int_t hi, json_int_t *ret);
/* The logs op (api-logs.c), listed in api.c's table. */
int	api_op_logs(struct api_req *, struct store_job *);

/* The cloud ops (api-cloud.c), listed in api.c's table. */
/*
 * What gpuqd.conf adds to the check of a normalized spec (api.c, for
 * submit and plan): 0 and *RET_WARNINGS (new, or NULL), or -EINVAL and
 * ERR.
 */
struct spec_error;
int	api_site_check(struct api *, json_t *norm, json_t **ret_warnings,
	    struct spec_error *err);

int	api_op_plan(struct api_req *, struct store_job *);
int	api_op_quotas(struct api_req *, struct store_job *);
int	api_op_prices(struct api_req *, struct store_job *);
/* doctor: the first-launch checks (doctor.c); without [gcp] project,
 * the one line saying so. */
int	api_op_doctor(struct api_req *, struct store_job *);
/* 1 if client C waits for a cloud op's answer. */
int	api_cloud_owes(struct api *, struct server_client *c);
/* Answer every cloud op still owed with "gpuqd is stopping". */
void	api_cloud_orphan(struct api *);

/* The wait op (api-wait.c). */
int	api_op_wait(struct api_req *, struct store_job *);
/* The history op (api-history.c). */
int	api_op_history(struct api_req *, struct store_job *);
/* Set up the waiters and their timer (api_new). */
void	api_wait_init(struct api *);
/* Once per turn of the loop: answer the waiters whose jobs all ended. */
void	api_wait_check(struct api *);
/* 1 if client C waits for a wait op's answer. */
int	api_wait_owes(struct api *, struct server_client *c);
/* Answer every waiter "gpuqd is stopping"; close the timer with CB. */
void	api_wait_close(struct api *, uv_close_cb cb);

#endif
