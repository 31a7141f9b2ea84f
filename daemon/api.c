/*
 * api.c: the ops of the wire, one const table, and the group commit.
 *
 * api_request() parses a request line, looks its op up in api_ops[],
 * checks the fields the op allows, and runs the handler. Ops flagged
 * API_OWNER act on one job: the table finds it by "id" and lets only
 * its owner, root or a member of [daemon] admin_group through. Ops
 * flagged API_CLOUD need a provider and answer "unavailable" without
 * one. Anyone who can connect may look (list, show), but only those
 * who may change a job see its secrets: show gives everyone else the
 * spec with env values, command and args withheld (api_spec_withhold).
 *
 * submit is answered later: its validated job joins the batch, and
 * api_on_check() (once per turn of the loop) writes the whole batch
 * with one store_jobs_insert() — one transaction, one fsync — before any
 * of its replies leaves. A client that pipelines thousands of submits
 * gets them committed API_BATCH_MAX at a time; a request of the same
 * client behind them waits (-EAGAIN to the server) until their replies
 * are out. The cloud ops (plan, quotas, prices) are listed here and
 * answered in api-cloud.c.
 *
 * Every job and attempt object of every reply is written by ONE
 * function each, api_job_write() and api_attempt_write(), through
 * common/jsonw.c: list pages (written as text, a thousand jobs at a
 * time) and show give the same shapes, byte for byte.
 *
 * Knows the store and the server's client handle; nothing of sockets,
 * and nothing of the cloud.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "common/frame.h"
#include "common/jsonw.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/when.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/conf.h"
#include "daemon/sched.h"
#include "daemon/sched-deadline.h"
#include "daemon/server.h"
#include "daemon/spec.h"
#include "store/store.h"

#define API_WHY_NO_PROVIDER	"no provider configured"
#define API_NO_PROVIDER_MSG	\
	"no provider configured; set [gcp] project in gpuqd.conf and restart " \
	"gpuqd (a reload does not start the cloud side)"

/*
 * Jobs in one group commit at most. A client that already owes replies
 * waits (-EAGAIN) once the batch is full, so a client pipelining ten
 * thousand submits is committed a thousand at a time and gpuqd's memory
 * stays flat; a client owing nothing still joins, so a batch is at most
 * this plus one per client.
 */
#define API_BATCH_MAX		1024
#define API_BATCH_ROWS		16384	/* ... and rows (tasks) at most, but
					   one array is never split */
#define API_TEXT_KEEP		(1024 * 1024)	/* batch text kept when empty */
#define API_NONE		((size_t)-1)	/* no string */
#define API_WITHHELD		"<withheld>"	/* shown for a secret */
#define API_ROW_HEAD		1024	/* a compact page's members before
					   "rows" take at most this */

/*
 * One submit waiting for the group commit. The normalized spec is
 * dropped at once; what the commit needs is kept as text, at offsets
 * into its batch's text (a realloc may move it).
 */
struct api_submit {
	struct server_client	*client;	/* owed the reply */
	size_t			 spec;		/* spec as JSON */
	size_t			 labels;	/* JSON, or API_NONE */
	size_t			 name;
	size_t			 gpu_type;	/* or API_NONE */
	int			 gpu_count;
	int			 nodes;		/* 0: one machine */
	int			 priority;
	int			 held;
	size_t			 warnings;	/* JSON array, or API_NONE */
	int			 tasks;		/* array.count, 0: plain job */
};

static int	api_op_submit(struct api_req *, struct store_job *);
static int	api_op_list(struct api_req *, struct store_job *);
static int	api_op_show(struct api_req *, struct store_job *);
static int	api_op_cancel(struct api_req *, struct store_job *);
static int	api_op_hold(struct api_req *, struct store_job *);
static int	api_op_release(struct api_req *, struct store_job *);
static int	api_op_ping(struct api_req *, struct store_job *);
static int	api_op_metrics(struct api_req *, struct store_job *);

/*
 * Every op of the wire, the one place they are listed. plan, quotas and
 * prices (api-cloud.c) ask the cloud; while gpuqd runs no provider they
 * answer "unavailable".
 */
static const struct api_op api_ops[] = {
	{ "submit",	api_op_submit,	API_DEFER, "job,hold,name,priority" },
	{ "list",	api_op_list,	0,
	    "state,owner,name,limit,after,expand,compact" },
	{ "show",	api_op_show,	0, "id" },
	{ "cancel",	api_op_cancel,	API_OWNER, "id" },
	{ "hold",	api_op_hold,	API_OWNER, "id" },
	{ "release",	api_op_release,	API_OWNER, "id" },
	{ "plan",	api_op_plan,	API_CLOUD, "job" },
	{ "quotas",	api_op_quotas,	API_CLOUD, "region,gpu" },
	{ "prices",	api_op_prices,	API_CLOUD, "region,gpu" },
	{ "ping",	api_op_ping,	0, "" },
	{ "metrics",	api_op_metrics,	0, "" },
	{ "doctor",	api_op_doctor,	0, "" },
	{ "logs",	api_op_logs,	API_OWNER,
	    "id,cursor,attempt,node,since,tail" },
	{ "wait",	api_op_wait,	0, "ids,timeout" },
	{ "history",	api_op_history,	0,
	    "since,until,owner,state,name,limit,after,by" },
};
#define API_NOPS	(sizeof api_ops / sizeof api_ops[0])

/* {"ok":true} plus "state": the reply of cancel, hold and release. */
static void
api_reply_state(struct api_req *r, int state)
{
	struct jsonw	*w = &r->api->reply;

	jsonw_reset(w);
	jsonw_object_begin(w);
	JSONW_KEY(w, "ok");
	jsonw_bool(w, 1);
	JSONW_KEY(w, "state");
	jsonw_string(w, job_state_name(state));
	jsonw_object_end(w);
	server_client_reply(r->client, w->buf, w->len);
}

/* Reply with a store failure: busy when the database is locked. */
static void
api_store_error(struct api_req *r, int rc, char *cause, const char *what)
{
	const char	*why = cause != NULL ? cause : strerror(-rc);

	log_warnx("%s: %s", what, why);
	server_client_error(r->client, rc == -EBUSY ? GPUQ_ERR_BUSY :
	    GPUQ_ERR_INTERNAL, NULL, "%s: %s%s", what, why,
	    rc == -EBUSY ? "; try again" : "");
	free(cause);
}

static void
api_changed(struct api *a)
{
	if (a->hooks.changed != NULL)
		a->hooks.changed(a->hooks.arg);
}

/*
 * Job ID went to cancelling: its cloud resource must be stopped and
 * deleted. The reconciler (through the cancel hook) does that and then
 * moves the job to cancelled; with no hook the job waits in cancelling
 * for the reconciler's next pass over live attempts.
 */
static void
api_cancel_cloud(struct api *a, int64_t id)
{
	if (a->hooks.cancel != NULL)
		a->hooks.cancel(a->hooks.arg, id);
	else
		log_debug("job %" PRId64 ": cancelling; the reconciler will "
		    "delete its resource", id);
}

/* Optional integer field: 1 and *ret, 0 absent, -1 bad (replied). */
int
api_field_int(struct api_req *r, const char *name, json_int_t lo,
    json_int_t hi, json_int_t *ret)
{
	json_t		*v = json_object_get(r->req, name);
	json_int_t	 n;

	if (v == NULL)
		return 0;
	if (!json_is_integer(v)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be an integer", name);
		return -1;
	}
	n = json_integer_value(v);
	if (n < lo || n > hi) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be between %" JSON_INTEGER_FORMAT " and %"
		    JSON_INTEGER_FORMAT, name, lo, hi);
		return -1;
	}
	*ret = n;
	return 1;
}

int
api_field_string(struct api_req *r, const char *name, const char **ret)
{
	json_t	*v = json_object_get(r->req, name);

	if (v == NULL)
		return 0;
	if (!json_is_string(v)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be a string", name);
		return -1;
	}
	*ret = json_string_value(v);
	return 1;
}

/* 1 if the comma list LIST holds NAME. */
static int
api_list_has(const char *list, const char *name)
{
	size_t		 n = strlen(name);
	const char	*p = list, *e;

	while (*p != '\0') {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) == n && strncmp(p, name, n) == 0)
			return 1;
		p = *e == ',' ? e + 1 : e;
	}
	return 0;
}

/*
 * Every field of the request must be one the op knows: 0, else -1 and
 * (unless QUIET) the error is replied.
 */
static int
api_check_fields(struct api_req *r, int quiet)
{
	const char	*key;
	json_t		*v;
	char		*allowed, *p;

	json_object_foreach(r->req, key, v) {
		if (strcmp(key, "op") == 0 || api_list_has(r->op->fields, key))
			continue;
		if (quiet)
			return -1;
		if (*r->op->fields == '\0') {
			server_client_error(r->client, GPUQ_ERR_BAD_REQUEST,
			    key, "unknown field \"%s\": op \"%s\" takes no "
			    "fields", key, r->op->name);
			return -1;
		}
		allowed = xstrdup(r->op->fields);
		for (p = allowed; (p = strchr(p, ',')) != NULL; p++)
			*p = '/';
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, key,
		    "unknown field \"%s\" for op \"%s\"; allowed: %s", key,
		    r->op->name, allowed);
		free(allowed);
		return -1;
	}
	return 0;
}

/* May the client change job J? Owner, root and the admin group may. */
static int
api_may_change(struct api_req *r, const struct store_job *j)
{
	const struct server_peer	*p = server_client_peer(r->client);

	if (p->uid == 0 || p->uid == j->owner)
		return 1;
	return r->api->admin_ok &&
	    server_client_in_group(r->client, r->api->admin_gid);
}

/*
 * May the client see job J's secrets (env values, command and args)?
 * The same people as may change it: owner, root and the admin group.
 */
static int
api_may_see(struct api_req *r, const struct store_job *j)
{
	return api_may_change(r, j);
}

/*
 * What another user sees of SPEC: the env names with their values
 * withheld, and command and args with every item withheld (a command
 * line often carries a token too; so do python_package.args).
 * Everything else (image, GPUs, regions, labels, secret_env's resource
 * names) stays.
 */
static void
api_spec_withhold(json_t *spec)
{
	static const char *const	 lists[] = { "command", "args" };
	json_t				*o, *v;
	const char			*k;
	size_t				 i, n;

	o = json_object_get(spec, "env");
	json_object_foreach(o, k, v)
		(void)json_object_set_new(o, k, json_string(API_WITHHELD));
	for (i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		o = json_object_get(spec, lists[i]);
		for (n = 0; n < json_array_size(o); n++)
			(void)json_array_set_new(o, n,
			    json_string(API_WITHHELD));
	}
	/* A python_package's args are its command line. */
	o = json_object_get(json_object_get(spec, "python_package"), "args");
	for (n = 0; n < json_array_size(o); n++)
		(void)json_array_set_new(o, n, json_string(API_WITHHELD));
}

/*
 * "42" or "42.3" (task 3 of array 42): 0 with *ret_id and *ret_task (-1
 * for none), else -1.
 */
static int
api_id_parse(const char *s, int64_t *ret_id, int *ret_task)
{
	char		*end;
	long long	 id;
	long		 task = -1;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	id = strtoll(s, &end, 10);
	if (errno != 0 || id < 1)
		return -1;
	if (*end == '.') {
		s = end + 1;
		if (*s < '0' || *s > '9')
			return -1;
		task = strtol(s, &end, 10);
		if (errno != 0 || task < 0 || task >= INT32_MAX)
			return -1;
	}
	if (*end != '\0')
		return -1;
	*ret_id = id;
	*ret_task = (int)task;
	return 0;
}

/*
 * Required "id": the job number, or as a string "42" or "42.3" (a task
 * of array 42, r->task = 3). 1 and *ret, else replied and -1.
 */
static int
api_field_id(struct api_req *r, int64_t *ret)
{
	json_t		*v = json_object_get(r->req, "id");
	json_int_t	 id;
	int		 rc;

	r->task = -1;
	if (json_is_string(v)) {
		if (api_id_parse(json_string_value(v), ret, &r->task) == 0)
			return 0;
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "id",
		    "\"id\" must be a job number (42) or a task of an array "
		    "(42.3)");
		return -1;
	}
	rc = api_field_int(r, "id", 1, INT64_MAX, &id);
	if (rc == 0)
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "id",
		    "missing \"id\": the job number");
	if (rc <= 0)
		return -1;
	*ret = id;
	return 0;
}

/*
 * The job named by the request's required "id": 0 with *ret_id and
 * *ret (new), else replied (bad id, not_found, store error) and -1.
 */
static int
api_job_fetch(struct api_req *r, int64_t *ret_id, struct store_job **ret)
{
	char	*cause = NULL;
	int64_t	 id;
	int	 rc;

	if (api_field_id(r, &id) != 0)
		return -1;
	if (r->task >= 0)
		rc = store_task_get(r->api->store, id, r->task, ret, &cause);
	else
		rc = store_job_get(r->api->store, id, ret, &cause);
	if (rc == -ENOENT && r->task >= 0) {
		free(cause);
		server_client_error(r->client, GPUQ_ERR_NOT_FOUND, "id",
		    "no task %" PRId64 ".%d: job %" PRId64 " is not an array "
		    "or has no task %d", id, r->task, id, r->task);
		return -1;
	}
	if (rc == -ENOENT) {
		free(cause);
		server_client_error(r->client, GPUQ_ERR_NOT_FOUND, "id",
		    "no job %" PRId64, id);
		return -1;
	}
	if (rc != 0) {
		api_store_error(r, rc, cause, "cannot read the job");
		return -1;
	}
	*ret_id = (*ret)->id;
	return 0;
}

/*
 * Fetch the job named by "id" for an API_OWNER op and check the caller
 * may change it. 0 and *ret (new), else replied and -1.
 */
static int
api_owned_job(struct api_req *r, struct store_job **ret)
{
	struct store_job	*j;
	const char		*verb;
	int64_t			 id;

	if (api_job_fetch(r, &id, &j) != 0)
		return -1;
	if (!api_may_change(r, j)) {
		/* Ops are verbs ("cancel it"), but for "logs". */
		verb = strcmp(r->op->name, "logs") == 0 ? "read the logs of" :
		    r->op->name;
		if (*r->api->conf->admin_group == '\0')
			server_client_error(r->client, GPUQ_ERR_FORBIDDEN,
			    "id", "job %" PRId64 " belongs to uid %u; only its "
			    "owner or root may %s it", id, (unsigned)j->owner,
			    verb);
		else
			server_client_error(r->client, GPUQ_ERR_FORBIDDEN,
			    "id", "job %" PRId64 " belongs to uid %u; only its "
			    "owner, root or members of group \"%s\" may %s "
			    "it", id, (unsigned)j->owner,
			    r->api->conf->admin_group, verb);
		store_job_free(j);
		return -1;
	}
	*ret = j;
	return 0;
}

int
api_request(void *arg, struct server_client *c, const char *line,
    size_t len)
{
	struct api		*a = arg;
	struct api_req		 r;
	struct store_job	*job = NULL;
	json_error_t		 jerr;
	json_t			*op;
	const char		*name;
	size_t			 i;
	int			 owed = server_client_owed(c) > 0, rc;

	memset(&r, 0, sizeof r);
	r.task = -1;
	r.api = a;
	r.client = c;
	r.req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (r.req == NULL || !json_is_object(r.req)) {
		if (owed) {
			json_decref(r.req);
			return -EAGAIN;
		}
		if (r.req == NULL)
			server_client_error(c, GPUQ_ERR_BAD_JSON, NULL,
			    "request is not JSON: %s (column %d)", jerr.text,
			    jerr.column);
		else
			server_client_error(c, GPUQ_ERR_BAD_JSON, NULL,
			    "request must be a JSON object, one per line");
		json_decref(r.req);
		return 0;
	}

	op = json_object_get(r.req, "op");
	name = json_string_value(op);
	for (i = 0; name != NULL && i < API_NOPS; i++)
		if (strcmp(api_ops[i].name, name) == 0)
			break;
	r.op = name != NULL && i < API_NOPS ? &api_ops[i] : NULL;
	/*
	 * Only a well-formed submit may join the batch ahead of owed
	 * replies, and only when no cloud answer is owed; anything else
	 * waits for them.
	 */
	if (owed && (api_cloud_owes(a, c) || api_wait_owes(a, c) ||
	    r.op == NULL ||
	    !(r.op->flags & API_DEFER) || api_check_fields(&r, 1) != 0)) {
		json_decref(r.req);
		return -EAGAIN;
	}
	rc = 0;
	if (op == NULL)
		server_client_error(c, GPUQ_ERR_BAD_REQUEST, "op",
		    "missing \"op\"; known ops: %s", a->known_ops);
	else if (name == NULL)
		server_client_error(c, GPUQ_ERR_BAD_REQUEST, "op",
		    "\"op\" must be a string; known ops: %s", a->known_ops);
	else if (r.op == NULL)
		server_client_error(c, GPUQ_ERR_UNKNOWN_OP, "op",
		    "unknown op \"%s\"; known ops: %s", name, a->known_ops);
	else if ((r.op->flags & API_CLOUD) && *a->conf->project == '\0')
		server_client_error(c, GPUQ_ERR_UNAVAILABLE, NULL, "%s",
		    API_NO_PROVIDER_MSG);
	else if (r.op->handler == NULL)
		server_client_error(c, GPUQ_ERR_UNAVAILABLE, NULL,
		    "\"%s\" needs the cloud providers, which this gpuqd "
		    "does not run yet", name);
	else if (api_check_fields(&r, 0) != 0)
		;
	else if ((r.op->flags & API_OWNER) && api_owned_job(&r, &job) != 0)
		;
	else
		rc = r.op->handler(&r, job);
	store_job_free(job);
	json_decref(r.req);
	return rc;
}

/*
 * An active idle handle keeps the loop from sleeping in poll while a
 * batch waits for the check handle; it has nothing else to do.
 */
static void
api_on_idle(uv_idle_t *h)
{
}

/* Copy string S (NULL: none) into B's text; its offset or API_NONE. */
static size_t
api_batch_add(struct api_batch *b, const char *s)
{
	size_t	off = b->text.len;

	if (s == NULL)
		return API_NONE;
	jsonw_put(&b->text, s, strlen(s) + 1);
	return off;
}

/* V as compact JSON text in B's text, NUL-terminated; its offset. */
static size_t
api_batch_dump(struct api_batch *b, const json_t *v)
{
	size_t	off = b->text.len;

	b->text.comma = 0;		/* a value of its own */
	jsonw_json(&b->text, v);
	jsonw_put(&b->text, "", 1);
	return off;
}

/*
 * What gpuqd.conf adds to the check of NORM (spec_site_check): 0 and
 * *ret_warnings (new, or NULL for none), or -EINVAL and ERR. Without a
 * [gcp] project nothing launches yet, and checkpoint_root may come with
 * it: no warnings then (and no cost on the submit path).
 */
int
api_site_check(struct api *a, json_t *norm, json_t **ret_warnings,
    struct spec_error *err)
{
	struct spec_site	site;

	if (*a->conf->project == '\0' && !a->conf->spot_requires_checkpoint) {
		*ret_warnings = NULL;
		return 0;
	}

	site.checkpoint_root = a->conf->checkpoint_root;
	site.spot_requires_checkpoint = a->conf->spot_requires_checkpoint;
	return spec_site_check(norm, &site, ret_warnings, err);
}

/*
 * Every job NORM's after and after_any name must exist, as a plain job
 * or an array (doc/DESIGN.md "Arrays and dependencies"): 0, or -EINVAL
 * and ERR naming the first that does not (or -EIO: the store failed).
 */
static int
api_deps_check(struct api *a, json_t *norm, struct spec_error *err)
{
	static const char *const keys[] = { "after", "after_any" };
	struct store_sum	 sum;
	json_t			*l, *v;
	char			*cause = NULL;
	size_t			 i, k;
	int64_t			 id;
	int			 rc;

	for (k = 0; k < 2; k++) {
		l = json_object_get(norm, keys[k]);
		json_array_foreach(l, i, v) {
			id = json_integer_value(v);
			rc = store_job_sum(a->store, id, &sum, &cause);
			if (rc == 0)
				continue;
			err->field = xprintf("%s[%zu]", keys[k], i);
			if (rc == -ENOENT)
				err->message = xprintf("no job %" PRId64 " to "
				    "wait for; give the id of a submitted job "
				    "or array (gpuq status --all lists them)",
				    id);
			else
				err->message = xprintf("cannot read job %"
				    PRId64 ": %s", id, cause != NULL ? cause :
				    strerror(-rc));
			free(cause);
			return rc == -ENOENT ? -EINVAL : rc;
		}
	}
	return 0;
}

/*
 * submit: validate now, answer after the group commit. A bad submit
 * behind owed replies waits its turn like any immediate answer.
 */
static int
api_op_submit(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct api_batch	*b = &a->batch;
	struct api_submit	*s;
	struct spec_error	 err = { NULL, NULL };
	json_t			*job, *v, *norm, *labels, *acc, *warn;
	int			 owed = server_client_owed(r->client) > 0, rc;

	if (owed && (b->n >= API_BATCH_MAX || b->nrows >= API_BATCH_ROWS))
		return -EAGAIN;		/* the next batch, after this one */
	job = json_object_get(r->req, "job");
	v = json_object_get(r->req, "hold");
	if (owed && (!json_is_object(job) || (v != NULL &&
	    !json_is_boolean(v))))
		return -EAGAIN;
	if (job == NULL) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "job",
		    "missing \"job\": the job spec, an object");
		return 0;
	}
	if (!json_is_object(job)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "job",
		    "\"job\" must be an object");
		return 0;
	}
	if (v != NULL && !json_is_boolean(v)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "hold",
		    "\"hold\" must be true or false");
		return 0;
	}
	/* "name" and "priority" override the file; the spec checks them. */
	if ((v = json_object_get(r->req, "name")) != NULL)
		(void)json_object_set(job, "name", v);
	if ((v = json_object_get(r->req, "priority")) != NULL)
		(void)json_object_set(job, "priority", v);
	rc = spec_validate(job, &norm, &err);
	if (rc == 0 && (rc = api_site_check(a, norm, &warn, &err)) != 0)
		json_decref(norm);
	if (rc == 0 && (rc = api_deps_check(a, norm, &err)) != 0)
		json_decref(norm);
	if (rc != 0) {
		if (owed) {
			spec_error_done(&err);
			return -EAGAIN;
		}
		server_client_error(r->client, GPUQ_ERR_INVALID_JOB,
		    err.field != NULL && *err.field != '\0' ? err.field : NULL,
		    "%s", err.message != NULL ? err.message : "invalid job");
		spec_error_done(&err);
		return 0;
	}

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->v = xreallocarray(b->v, b->cap, sizeof *b->v);
	}
	s = &b->v[b->n];
	s->client = r->client;
	s->spec = api_batch_dump(b, norm);
	labels = json_object_get(norm, "labels");
	s->labels = json_object_size(labels) > 0 ?
	    api_batch_dump(b, labels) : API_NONE;
	s->name = api_batch_add(b, json_string_value(json_object_get(norm,
	    "name")));
	if (s->name == API_NONE)
		s->name = api_batch_add(b, "job");
	v = json_object_get(norm, "priority");
	s->priority = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	acc = json_object_get(norm, "accelerator");
	s->gpu_type = api_batch_add(b, json_string_value(json_object_get(acc,
	    "type")));
	v = json_object_get(acc, "count");
	s->gpu_count = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	v = json_object_get(norm, "nodes");
	s->nodes = json_is_integer(v) ? (int)json_integer_value(v) : 1;
	s->held = json_is_true(json_object_get(r->req, "hold"));
	s->warnings = json_array_size(warn) > 0 ?
	    api_batch_dump(b, warn) : API_NONE;
	v = json_object_get(json_object_get(norm, "array"), "count");
	s->tasks = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	b->nrows += s->tasks > 0 ? (size_t)s->tasks : 1;
	json_decref(warn);
	json_decref(norm);
	if (b->n++ == 0)
		(void)uv_idle_start(&a->idle, api_on_idle);
	server_client_defer(r->client);
	return 0;
}

/*
 * Task INDEX of COUNT's spec into W: SPEC (compact JSON of an object)
 * with "task": {"index", "count"} added, which the checkpoint contract
 * reads (cloud_env) wherever the stored spec is loaded. NUL-terminated;
 * returns its offset in W.
 */
static size_t
api_task_spec(struct jsonw *w, const char *spec, int index, int count)
{
	size_t	 off = w->len, len = strlen(spec);
	char	 tail[96];
	int	 n;

	/* spec ends in '}': put the member before it. */
	jsonw_put(w, spec, len - 1);
	n = snprintf(tail, sizeof tail, "%s\"task\":{\"index\":%d,"
	    "\"count\":%d}}", len > 2 ? "," : "", index, count);
	jsonw_put(w, tail, (size_t)n + 1);
	return off;
}

/*
 * The group commit, once per turn of the loop after I/O (valkey's
 * beforeSleep). It does, in order:
 *  1. take the batch of submits gathered this turn; submits from now
 *     on (clients going on below) fill a fresh one;
 *  2. write them all with ONE store_jobs_insert(): one transaction, one
 *     fsync, each job with its "submitted" event;
 *  3. queue each client's reply in arrival order, {"ok":true,"id":N}, or
 *     the store's error for all of them if the transaction failed;
 *  4. settle each reply, which lets a client whose replies are all out
 *     flush them and go on with the lines it held back;
 *  5. log the batch at debug and fire the "changed" hook (STATUS=, the
 *     scheduler);
 *  6. stop the idle handle when no new batch waits, so the loop sleeps.
 */
void
api_commit(struct api *a)
{
	struct api_batch	 tmp;
	struct api_submit	*b;
	struct jsonw		 tasks;
	size_t			 n = a->batch.n, i, k, nrows, row, *first;
	char			*cause = NULL;
	int			 rc;

	if (n == 0) {
		(void)uv_idle_stop(&a->idle);
		return;
	}
	tmp = a->spare;
	a->spare = a->batch;
	a->batch = tmp;
	a->batch.n = 0;
	a->batch.nrows = 0;
	jsonw_reset(&a->batch.text);
	b = a->spare.v;

	/* An array is one row per task, all in this one transaction. */
	nrows = 0;
	for (i = 0; i < n; i++)
		nrows += b[i].tasks > 0 ? (size_t)b[i].tasks : 1;
	if (nrows > a->caprows) {
		a->caprows = nrows;
		a->rows = xreallocarray(a->rows, nrows, sizeof *a->rows);
		a->ids = xreallocarray(a->ids, nrows, sizeof *a->ids);
	}
	first = xreallocarray(NULL, n, sizeof *first);
	jsonw_init(&tasks);
	for (i = 0, row = 0; i < n; i++) {
		const char	*t = a->spare.text.buf;

		first[i] = row;
		for (k = 0; k < (b[i].tasks > 0 ? (size_t)b[i].tasks : 1);
		    k++, row++) {
			struct store_job_new	*rw = &a->rows[row];

			memset(rw, 0, sizeof *rw);
			rw->name = t + b[i].name;
			rw->priority = b[i].priority;
			rw->owner = server_client_peer(b[i].client)->uid;
			rw->spec = t + b[i].spec;
			rw->labels = b[i].labels == API_NONE ? NULL :
			    t + b[i].labels;
			rw->held = b[i].held;
			rw->gpu_type = b[i].gpu_type == API_NONE ? NULL :
			    t + b[i].gpu_type;
			rw->gpu_count = b[i].gpu_count;
			rw->nodes = b[i].nodes;
			if (b[i].tasks > 0) {
				rw->task = 1;
				rw->task_index = (int)k;
				/* Its offset now; a pointer once all are in. */
				rw->spec = (const char *)(uintptr_t)
				    api_task_spec(&tasks, t + b[i].spec, (int)k,
				    b[i].tasks);
			}
		}
	}
	for (row = 0; row < nrows; row++)
		if (a->rows[row].task)
			a->rows[row].spec = tasks.buf +
			    (uintptr_t)a->rows[row].spec;
	rc = store_jobs_insert(a->store, a->rows, nrows, a->ids, &cause);
	jsonw_done(&tasks);
	if (rc != 0)
		log_warnx("submit: %zu job(s) not stored: %s", n,
		    cause != NULL ? cause : strerror(-rc));
	else
		log_debug("submit: %zu job(s) committed (%zu rows), ids %"
		    PRId64 "-%" PRId64, n, nrows, a->ids[0],
		    a->ids[nrows - 1]);

	for (i = 0; i < n; i++) {
		if (rc == 0 && a->conf->log_submits)
			log_info("job %" PRId64 ": submitted by uid %u pid "
			    "%d, name \"%s\"%s%s", a->ids[first[i]],
			    (unsigned)a->rows[first[i]].owner,
			    (int)server_client_peer(b[i].client)->pid,
			    a->rows[first[i]].name,
			    b[i].tasks > 0 ? ", an array" : "",
			    a->rows[first[i]].held ? ", held" : "");
		if (rc == 0) {
			jsonw_reset(&a->reply);
			jsonw_object_begin(&a->reply);
			JSONW_KEY(&a->reply, "ok");
			jsonw_bool(&a->reply, 1);
			JSONW_KEY(&a->reply, "id");
			jsonw_int(&a->reply, a->ids[first[i]]);
			if (b[i].tasks > 0) {
				JSONW_KEY(&a->reply, "tasks");
				jsonw_int(&a->reply, b[i].tasks);
			}
			if (b[i].warnings != API_NONE) {
				JSONW_KEY(&a->reply, "warnings");
				jsonw_raw(&a->reply, a->spare.text.buf +
				    b[i].warnings, strlen(a->spare.text.buf +
				    b[i].warnings));
			}
			jsonw_object_end(&a->reply);
			server_client_reply(b[i].client, a->reply.buf,
			    a->reply.len);
		} else
			server_client_error(b[i].client, rc == -EBUSY ?
			    GPUQ_ERR_BUSY : GPUQ_ERR_INTERNAL, NULL,
			    "the job was not stored: %s%s",
			    cause != NULL ? cause : strerror(-rc),
			    rc == -EBUSY ? "; try again" : "");
		server_client_settle(b[i].client);
	}
	free(first);
	free(cause);
	/* A burst grew the text: do not keep that while idle. */
	if (a->spare.text.cap > API_TEXT_KEEP)
		jsonw_done(&a->spare.text);
	jsonw_reset(&a->spare.text);
	a->spare.n = 0;
	a->spare.nrows = 0;
	if (rc == 0)
		api_changed(a);
	if (a->batch.n == 0)
		(void)uv_idle_stop(&a->idle);
}

static void
api_on_check(uv_check_t *h)
{
	api_commit(h->data);
	api_wait_check(h->data);
}

/* Why job J waits, as shown: its own why, that it is held, or that
 * nothing can run it. */
static const char *
api_job_why(const struct api *a, const struct store_job *j)
{
	const char	*live;

	if (j->state == JOB_HELD)
		return j->why != NULL ? j->why :
		    "held: 'gpuq release' lets it start";
	if (j->why == NULL && j->state == JOB_QUEUED &&
	    *a->conf->project == '\0')
		return API_WHY_NO_PROVIDER;
	if (j->state == JOB_QUEUED && j->why != NULL && a->sched != NULL) {
		/* The stored why has no counts; the scheduler's last pass
		 * has them (doc/DESIGN.md "The pass"). */
		live = sched_why_live(a->sched, j->why);
		if (live != NULL)
			return live;
	}
	return j->why;
}

/*
 * "node_list": each node of a gang's attempt, rank 0 the main node
 * (doc/DESIGN.md "Gangs"). The nodes of one attempt share its zone
 * (they are placed together) and its state: any node's end is the
 * whole attempt's end.
 */
static void
api_attempt_nodes_write(struct jsonw *w, const struct store_attempt *at)
{
	int	r;

	JSONW_KEY(w, "node_list");
	jsonw_array_begin(w);
	for (r = 0; r < (at->nodes > 1 ? at->nodes : 1); r++) {
		jsonw_object_begin(w);
		JSONW_KEY(w, "rank");
		jsonw_int(w, r);
		JSONW_KEY(w, "zone");
		jsonw_string(w, at->zone);
		JSONW_KEY(w, "state");
		jsonw_string(w, attempt_state_name(at->state));
		jsonw_object_end(w);
	}
	jsonw_array_end(w);
}

/*
 * proto.h's attempt shape, the one writer of it: the "current" of list
 * and show, and show's "attempts_list".
 */
static void
api_attempt_write(struct jsonw *w, const struct store_attempt *at)
{
	jsonw_object_begin(w);
	JSONW_KEY(w, "number");
	jsonw_int(w, at->number);
	JSONW_KEY(w, "state");
	jsonw_string(w, attempt_state_name(at->state));
	JSONW_KEY(w, "provider");
	jsonw_string(w, at->provider);
	JSONW_KEY(w, "region");
	jsonw_string(w, at->region);
	JSONW_KEY(w, "zone");
	jsonw_string(w, at->zone);
	JSONW_KEY(w, "resource");
	jsonw_string(w, at->resource);
	JSONW_KEY(w, "machine_type");
	jsonw_string(w, at->machine_type);
	JSONW_KEY(w, "gpu");
	jsonw_string(w, at->gpu);
	JSONW_KEY(w, "gpu_count");
	jsonw_int(w, at->gpu_count);
	JSONW_KEY(w, "nodes");
	jsonw_int(w, at->nodes > 1 ? at->nodes : 1);
	JSONW_KEY(w, "spot");
	jsonw_bool(w, at->spot);
	/* The kind of capacity (doc/DESIGN.md "Capacity kinds"); rows
	 * before kinds were stored say Spot or standard by spot. */
	JSONW_KEY(w, "capacity");
	jsonw_string(w, at->capacity != NULL ? at->capacity : at->spot ?
	    "spot" : "standard");
	JSONW_KEY(w, "reservation");
	jsonw_string(w, at->reservation);
	JSONW_KEY(w, "hourly_usd");
	jsonw_double(w, at->hourly_usd);
	JSONW_KEY(w, "created");
	jsonw_int(w, at->created);
	JSONW_KEY(w, "started");
	jsonw_int(w, at->started);
	JSONW_KEY(w, "ended");
	jsonw_int(w, at->ended);
	JSONW_KEY(w, "end_reason");
	jsonw_string(w, at->end_reason == END_NONE ? NULL :
	    attempt_end_name(at->end_reason));
	JSONW_KEY(w, "exit_code");
	jsonw_int(w, at->exit_code);
	JSONW_KEY(w, "message");
	jsonw_string(w, at->message);
	JSONW_KEY(w, "resumed_from");
	jsonw_string(w, at->resumed_from);
	JSONW_KEY(w, "cost_usd");
	jsonw_double(w, at->cost_usd);
	JSONW_KEY(w, "billed_start");
	jsonw_int(w, at->billed_start);
	JSONW_KEY(w, "billed_end");
	jsonw_int(w, at->billed_end);
	JSONW_KEY(w, "baseline_hourly_usd");
	jsonw_double(w, at->baseline_hourly_usd);
	JSONW_KEY(w, "baseline_usd");
	jsonw_double(w, at->baseline_usd);
	api_attempt_nodes_write(w, at);
	jsonw_object_end(w);
}

/*
 * The slack of job J with a deadline (*HAS_SLACK: known, while it
 * lives) and, once it is late (ended after the deadline without being
 * cancelled, or live past it), by how much it missed (*LATE, 0 on
 * time). A bare row (a compact listing's: no spec) reads its job whole
 * first; jobs with a deadline are few.
 */
static void
api_deadline_figures(const struct api *a, const struct store_job *j,
    int *has_slack, int64_t *slack, int64_t *late)
{
	struct store_job	*full = NULL;
	char			*cause = NULL;
	int64_t			 now = clock_now();

	*has_slack = 0;
	*slack = *late = 0;
	if (JOB_MASK(j->state) & JOB_MASK_LIVE) {
		if (j->spec == NULL && store_job_get(a->store, j->id, &full,
		    &cause) != 0) {
			free(cause);
			full = NULL;
		}
		if ((full != NULL || j->spec != NULL) &&
		    sched_deadline_slack(a->store, a->conf, full != NULL ?
		    full : j, now, slack) == 0)
			*has_slack = 1;
		store_job_free(full);
		*late = now - j->deadline;
	} else if (j->state == JOB_SUCCEEDED || j->state == JOB_FAILED)
		*late = j->updated - j->deadline;
	if (*late < 0)
		*late = 0;
}

/*
 * The deadline members of job J (doc/DESIGN.md "Deadlines"): the time,
 * whether it left Spot for good, its slack while it lives and, once it
 * is late, by how much it missed.
 */
static void
api_deadline_write(struct jsonw *w, const struct api *a,
    const struct store_job *j)
{
	char	t[WHEN_TEXT_MAX];
	int64_t	slack, late;
	int	has_slack;

	JSONW_KEY(w, "deadline");
	jsonw_string(w, when_format(j->deadline, t, sizeof t));
	JSONW_KEY(w, "deadline_safe");
	jsonw_bool(w, j->deadline_safe);
	api_deadline_figures(a, j, &has_slack, &slack, &late);
	if (has_slack) {
		JSONW_KEY(w, "slack");
		jsonw_int(w, slack);
	}
	if (late > 0) {
		JSONW_KEY(w, "missed_by");
		jsonw_int(w, late);
	}
}

/*
 * proto.h's job shape, the one writer of it, for list and show: the
 * object is left open after the key "current", whose value (the live
 * attempt or null) and any further members are the caller's, who then
 * closes it. The accelerator comes from the job's columns (schema v3
 * copied them from every older spec).
 */
static void
api_job_write(struct jsonw *w, const struct api *a, const struct store_job *j)
{
	jsonw_object_begin(w);
	JSONW_KEY(w, "id");
	jsonw_int(w, j->id);
	JSONW_KEY(w, "name");
	jsonw_string(w, j->name);
	JSONW_KEY(w, "state");
	jsonw_string(w, job_state_name(j->state));
	JSONW_KEY(w, "priority");
	jsonw_int(w, j->priority);
	JSONW_KEY(w, "owner");
	jsonw_int(w, (int64_t)j->owner);
	JSONW_KEY(w, "created");
	jsonw_int(w, j->created);
	JSONW_KEY(w, "updated");
	jsonw_int(w, j->updated);
	JSONW_KEY(w, "attempts");
	jsonw_int(w, j->attempts);
	JSONW_KEY(w, "failures");
	jsonw_int(w, j->failures);
	JSONW_KEY(w, "interruptions");
	jsonw_int(w, j->interruptions);
	JSONW_KEY(w, "cost_usd");
	jsonw_double(w, j->cost_usd);
	JSONW_KEY(w, "baseline_usd");
	jsonw_double(w, j->baseline_usd);
	JSONW_KEY(w, "checkpoint");
	jsonw_string(w, j->checkpoint);
	JSONW_KEY(w, "checkpoint_at");
	jsonw_int(w, j->checkpoint_at);
	JSONW_KEY(w, "why");
	jsonw_string(w, api_job_why(a, j));
	JSONW_KEY(w, "exit_code");
	jsonw_int(w, j->exit_code);
	JSONW_KEY(w, "message");
	jsonw_string(w, j->message);
	JSONW_KEY(w, "accelerator");
	if (j->gpu_type != NULL) {
		jsonw_object_begin(w);
		JSONW_KEY(w, "type");
		jsonw_string(w, j->gpu_type);
		JSONW_KEY(w, "count");
		jsonw_int(w, j->gpu_count);
		jsonw_object_end(w);
	} else
		jsonw_null(w);
	JSONW_KEY(w, "nodes");
	jsonw_int(w, j->nodes > 1 ? j->nodes : 1);
	if (j->not_before > 0 && j->state == JOB_QUEUED) {
		JSONW_KEY(w, "not_before");
		jsonw_int(w, j->not_before);
	}
	if (j->array_id != 0) {
		JSONW_KEY(w, "array_id");
		jsonw_int(w, j->array_id);
		JSONW_KEY(w, "task_index");
		jsonw_int(w, j->task_index);
	}
	if (j->deadline > 0)
		api_deadline_write(w, a, j);
	JSONW_KEY(w, "current");
}

/*
 * The columns of a compact list page (doc/DESIGN.md "The wire"), in the
 * order api_row_write() and api_row_attempt_write() write a row's
 * values. Only what gpuq status's table shows: no spec, so nothing a
 * non-owner may not see. A row without a live attempt stops after
 * "tasks"; a reader takes the values it lacks as null, 0 or false.
 */
static const char *const api_row_columns[] = {
	"id", "name", "state", "gpu", "gpu_count", "nodes", "updated",
	"attempts", "cost_usd", "checkpoint", "checkpoint_at", "why",
	"message", "array_id", "task_index", "deadline", "slack", "missed_by",
	"tasks",
	/* the live attempt, as "current" of the object form */
	"provider", "region", "zone", "spot", "started", "ended",
	"attempt_cost_usd", "hourly_usd",
};

/*
 * The values of a compact row, written straight into the page's buffer:
 * a list of every job is a hundred thousand rows of twenty values, and
 * a jsonw call per value (its comma, its reserve, a strlen) was a sixth
 * of gpuqd's time for it (issue 18). The text is jsonw's, byte for byte:
 * a string that needs escaping, and every real, still goes through it.
 */
#define API_ROW_NUM	24	/* a comma, a sign and 20 digits, rounded */

/* Room for N more bytes; the common case is one comparison. */
static inline void
api_row_room(struct jsonw *w, size_t n)
{
	if (w->cap - w->len < n)
		jsonw_reserve(w, n);
}

/* The comma a value is owed; the next one will owe one. */
static inline void
api_row_comma(struct jsonw *w)
{
	if (w->comma)
		w->buf[w->len++] = ',';
	w->comma = 1;
}

static inline void
api_row_int(struct jsonw *w, int64_t v)
{
	char		 d[API_ROW_NUM];
	size_t		 n = 0;
	uint64_t	 u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	api_row_room(w, API_ROW_NUM);
	api_row_comma(w);
	if (v < 0)
		w->buf[w->len++] = '-';
	if (u < 10) {
		w->buf[w->len++] = (char)('0' + u);
		return;
	}
	do {
		d[sizeof d - ++n] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	memcpy(w->buf + w->len, d + sizeof d - n, n);
	w->len += n;
}

static inline void
api_row_null(struct jsonw *w)
{
	api_row_room(w, API_ROW_NUM);
	api_row_comma(w);
	memcpy(w->buf + w->len, "null", 4);
	w->len += 4;
}

/* S, or null: printable ASCII copied as it is, the rest by jsonw. */
static inline void
api_row_string(struct jsonw *w, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	if (s == NULL) {
		api_row_null(w);
		return;
	}
	for (n = 0; p[n] >= 0x20 && p[n] < 0x80 && p[n] != '"' &&
	    p[n] != '\\'; n++)
		;
	if (p[n] != '\0') {
		jsonw_stringn(w, s, n + strlen(s + n));
		return;
	}
	api_row_room(w, n + 3);
	api_row_comma(w);
	w->buf[w->len++] = '"';
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len++] = '"';
}

/*
 * Job J as a compact row, left open after "tasks" (TASKS: a folded
 * array's size, else 0) for the live attempt's values; the same values
 * api_job_write() writes under those names.
 */
static void
api_row_write(struct jsonw *w, const struct api *a, const struct store_job *j,
    int64_t tasks)
{
	int64_t	slack, late;
	int	has_slack;

	jsonw_array_begin(w);
	api_row_int(w, j->id);
	api_row_string(w, j->name);
	api_row_string(w, job_state_name(j->state));
	api_row_string(w, j->gpu_type);
	api_row_int(w, j->gpu_type != NULL ? j->gpu_count : 0);
	api_row_int(w, j->nodes > 1 ? j->nodes : 1);
	api_row_int(w, j->updated);
	api_row_int(w, j->attempts);
	jsonw_double(w, j->cost_usd);
	api_row_string(w, j->checkpoint);
	api_row_int(w, j->checkpoint_at);
	api_row_string(w, api_job_why(a, j));
	api_row_string(w, j->message);
	api_row_int(w, j->array_id);
	api_row_int(w, j->array_id != 0 ? j->task_index : 0);
	/* The deadline (unix seconds, 0: none), its slack or null, and
	 * how late it is. */
	api_row_int(w, j->deadline);
	if (j->deadline > 0) {
		api_deadline_figures(a, j, &has_slack, &slack, &late);
		if (has_slack)
			api_row_int(w, slack);
		else
			api_row_null(w);
		api_row_int(w, late);
	} else {
		api_row_null(w);
		api_row_int(w, 0);
	}
	api_row_int(w, tasks);
}

/* A live attempt's values of a compact row, each after a comma. */
static void
api_row_attempt_write(struct jsonw *w, const struct store_attempt *at)
{
	w->comma = 1;
	jsonw_string(w, at->provider);
	jsonw_string(w, at->region);
	jsonw_string(w, at->zone);
	jsonw_bool(w, at->spot);
	jsonw_int(w, at->started);
	jsonw_int(w, at->ended);
	jsonw_double(w, at->cost_usd);
	jsonw_double(w, at->hourly_usd);
}

/* The order an array's counts are told in. */
static const int api_array_order[] = {
	JOB_RUNNING, JOB_PENDING, JOB_LAUNCHING, JOB_QUEUED, JOB_HELD,
	JOB_CANCELLING, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED,
};

/*
 * One state for a whole array: the most alive of its tasks' states; once
 * all have ended, failed if any failed, else cancelled if any was, else
 * succeeded.
 */
static int
api_array_state(const struct store_sum *sum)
{
	static const int	order[] = {
		JOB_CANCELLING, JOB_RUNNING, JOB_PENDING, JOB_LAUNCHING,
		JOB_QUEUED, JOB_HELD, JOB_FAILED, JOB_CANCELLED,
	};
	size_t			i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		if (sum->states[order[i]] > 0)
			return order[i];
	return JOB_SUCCEEDED;
}

/*
 * Write array J->array_id (J one of its tasks) as one job object, left
 * open after "current": null like api_job_write: the array's id, its
 * folded state, its tasks' total cost, as why the tasks per state ("4
 * running, 9 queued, 3 succeeded"), and "array": {count, parallelism,
 * states}. *ret_last is its last task's row id. 0, else replied and -1.
 * COMPACT: the same values as one closed row of a compact list page
 * (api_row_write).
 */
static int
api_array_write(struct api_req *r, struct jsonw *w, const struct store_job *j,
    int64_t *ret_last, int compact)
{
	struct store_sum	 sum;
	struct store_job	 f;
	json_t			*spec;
	char			*cause = NULL, *why, *t;
	double			 cost = 0;
	size_t			 i;
	int			 rc, par;

	rc = store_job_sum(r->api->store, j->array_id, &sum, &cause);
	if (rc == 0)
		rc = store_array_cost(r->api->store, j->array_id, &cost, NULL,
		    &cause);
	if (rc != 0) {
		api_store_error(r, rc, cause, "cannot read the array");
		return -1;
	}
	why = xstrdup("");
	for (i = 0; i < sizeof api_array_order / sizeof api_array_order[0];
	    i++) {
		if (sum.states[api_array_order[i]] == 0)
			continue;
		t = xprintf("%s%s%" PRId64 " %s", why, *why ? ", " : "",
		    sum.states[api_array_order[i]],
		    job_state_name(api_array_order[i]));
		free(why);
		why = t;
	}
	if ((j->state == JOB_QUEUED || j->state == JOB_HELD) &&
	    j->why != NULL) {
		t = xprintf("%s; %" PRId64 ".%d: %s", why, j->array_id,
		    j->task_index, api_job_why(r->api, j));
		free(why);
		why = t;
	}
	spec = json_loads(j->spec != NULL ? j->spec : "", 0, NULL);
	par = (int)json_integer_value(json_object_get(json_object_get(spec,
	    "array"), "parallelism"));
	json_decref(spec);

	f = *j;
	f.id = j->array_id;
	f.array_id = 0;
	f.state = api_array_state(&sum);
	f.cost_usd = cost;
	f.why = why;
	f.exit_code = -1;
	f.message = NULL;
	f.checkpoint = NULL;
	f.checkpoint_at = 0;
	f.not_before = 0;
	if (compact) {
		/* The same values as a row: "tasks" is array.count. */
		api_row_write(w, r->api, &f, sum.tasks);
		jsonw_array_end(w);
		free(why);
		*ret_last = sum.last_id;
		return 0;
	}
	api_job_write(w, r->api, &f);
	jsonw_null(w);
	JSONW_KEY(w, "array");
	jsonw_object_begin(w);
	JSONW_KEY(w, "count");
	jsonw_int(w, sum.tasks);
	JSONW_KEY(w, "parallelism");
	jsonw_int(w, par > 0 ? par : sum.tasks);
	JSONW_KEY(w, "states");
	jsonw_object_begin(w);
	for (i = 0; i < JOB_NSTATES; i++) {
		if (sum.states[i] == 0)
			continue;
		jsonw_key(w, job_state_name((int)i));
		jsonw_int(w, sum.states[i]);
	}
	jsonw_object_end(w);
	jsonw_object_end(w);
	free(why);
	*ret_last = sum.last_id;
	return 0;
}

/*
 * A page being listed, written as text as it is read (a page is a
 * thousand jobs; building jansson trees for them was most of the time
 * gpuqd took to answer). Each job is written with "current":null; a job
 * that may have a live attempt (in the cloud, or cancelling) notes
 * where that null is, and its attempt's text, once found, replaces it.
 */
struct api_page {
	const struct api	*api;
	struct jsonw		 out;		/* the reply so far */
	struct jsonw		 att;		/* attempts' text */
	int			 expand;	/* tasks one by one */
	int			 compact;	/* rows, not objects */
	size_t			 cap;		/* no row starts past it; 0:
						   no such end */
	int			 full;		/* stopped at cap: more come */
	size_t			 room;		/* bytes kept for the head */
	int			 stop;		/* folded an array: resume */
	int64_t			 resume;	/* ... after this id */
	int			 rows;		/* jobs written */
	int			 error;		/* store error, replied */
	struct api_req		*req;
	struct api_page_slot {
		int64_t		 id;		/* job id; ascending */
		size_t		 at;		/* its null in out */
		size_t		 off;		/* its attempt in att */
		size_t		 len;		/* 0: none found */
	}			*slots;
	size_t			 nslots;
	size_t			 capslots;
	int64_t			 last;
};

static int
api_list_on_job(const struct store_job *j, void *arg)
{
	struct api_page		*p = arg;
	struct api_page_slot	*sl;

	if (p->cap > 0 && p->out.len >= p->cap) {
		p->full = 1;		/* this job starts the next page */
		return 1;
	}
	if (j->array_id != 0 && !p->expand) {
		/* The whole array as one, then on after its last task. */
		if (api_array_write(p->req, &p->out, j, &p->resume,
		    p->compact) != 0) {
			p->error = 1;
			return 1;
		}
		if (!p->compact)
			jsonw_object_end(&p->out);
		p->rows++;
		p->last = p->resume;
		p->stop = 1;
		return 1;
	}
	p->rows++;
	if (p->compact)
		api_row_write(&p->out, p->api, j, 0);
	else
		api_job_write(&p->out, p->api, j);
	if (JOB_MASK(j->state) & (JOB_MASK_CLOUD | JOB_MASK(JOB_CANCELLING))) {
		if (p->nslots == p->capslots) {
			p->capslots = p->capslots ? p->capslots * 2 : 64;
			p->slots = xreallocarray(p->slots, p->capslots,
			    sizeof *p->slots);
		}
		sl = &p->slots[p->nslots++];
		sl->id = j->id;
		sl->at = p->out.len;
		sl->len = 0;
	}
	if (p->compact)
		jsonw_array_end(&p->out);	/* an attempt goes before */
	else {
		jsonw_null(&p->out);
		jsonw_object_end(&p->out);
	}
	p->last = j->id;
	return 0;
}

/* A live attempt: keep its text for its job's slot (the newest wins). */
static int
api_list_on_attempt(const struct store_attempt *t, void *arg)
{
	struct api_page	*p = arg;
	size_t		 lo = 0, hi = p->nslots, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->slots[mid].id < t->job_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nslots && p->slots[lo].id == t->job_id) {
		p->slots[lo].off = p->att.len;
		p->att.comma = 0;
		if (p->compact)
			api_row_attempt_write(&p->att, t);
		else
			api_attempt_write(&p->att, t);
		p->slots[lo].len = p->att.len - p->slots[lo].off;
	}
	return 0;
}

/*
 * Put each attempt found in place of its job's "current":null, or, in a
 * compact page, at the end of its row. HEAD (HLEN bytes) goes first.
 */
static void
api_page_splice(struct api_page *p, const char *head, size_t hlen)
{
	struct jsonw	 out;
	size_t		 i, from = p->room, skip;

	skip = p->compact ? 0 : sizeof "null" - 1;
	jsonw_init(&out);
	jsonw_reserve(&out, hlen + p->out.len + p->att.len + 1);
	if (hlen > 0)
		jsonw_put(&out, head, hlen);
	for (i = 0; i < p->nslots; i++) {
		if (p->slots[i].len == 0)
			continue;
		jsonw_put(&out, p->out.buf + from, p->slots[i].at - from);
		jsonw_put(&out, p->att.buf + p->slots[i].off,
		    p->slots[i].len);
		from = p->slots[i].at + skip;
	}
	jsonw_put(&out, p->out.buf + from, p->out.len - from);
	out.comma = p->out.comma;
	out.prec = p->out.prec;
	jsonw_done(&p->out);
	p->out = out;
}

/* "state": absent (live), "all", a name, or a list of names. */
static int
api_list_states(struct api_req *r, unsigned *ret)
{
	json_t		*v = json_object_get(r->req, "state"), *e;
	const char	*s;
	unsigned	 mask = 0;
	size_t		 i;
	int		 st;

	if (v == NULL) {
		*ret = JOB_MASK_LIVE;
		return 0;
	}
	if (json_is_string(v) || (json_is_array(v) && json_array_size(v))) {
		for (i = 0; i < (json_is_array(v) ? json_array_size(v) : 1);
		    i++) {
			e = json_is_array(v) ? json_array_get(v, i) : v;
			if ((s = json_string_value(e)) == NULL)
				goto bad;
			if (strcmp(s, "all") == 0) {
				*ret = 0;
				return 0;
			}
			if ((st = job_state_parse(s)) < 0) {
				server_client_error(r->client,
				    GPUQ_ERR_BAD_REQUEST, "state",
				    "unknown state \"%s\"; use held, queued, "
				    "launching, pending, running, succeeded, "
				    "failed, cancelling, cancelled or all", s);
				return -1;
			}
			mask |= JOB_MASK(st);
		}
		*ret = mask;
		return 0;
	}
bad:
	server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "state",
	    "\"state\" must be a state name, \"all\", or a non-empty list of "
	    "state names");
	return -1;
}

/* A boolean field NAME of the request: 0 (absent: false) or -1, replied. */
static int
api_field_bool(struct api_req *r, const char *name, int *ret)
{
	json_t	*v = json_object_get(r->req, name);

	if (v != NULL && !json_is_boolean(v)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be true or false", name);
		return -1;
	}
	*ret = json_is_true(v);
	return 0;
}

/* "next" (when MORE) and "counts": what every page ends with. */
static void
api_list_tail(struct jsonw *w, int more, int64_t last, const int64_t *counts)
{
	int	i;

	if (more) {
		JSONW_KEY(w, "next");
		jsonw_int(w, last);
	}
	JSONW_KEY(w, "counts");
	jsonw_object_begin(w);
	for (i = 0; i < JOB_NSTATES; i++) {
		jsonw_key(w, job_state_name(i));
		jsonw_int(w, counts[i]);
	}
	jsonw_object_end(w);
}

/*
 * list: a keyset page of jobs, "next" when more follow, and counts.
 * With "compact": true (gpuq status's table) the jobs are rows of
 * api_row_columns[], "next" and "counts" come before them, a page may
 * hold up to GPUQ_LIST_COMPACT_MAX jobs and ends early, with "next",
 * once its text passes GPUQ_LIST_PAGE_BYTES: a whole queue is a dozen
 * pages of a third the bytes (doc/DESIGN.md "The wire").
 */
static int
api_op_list(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct store_filter	 f;
	struct api_page		 p;
	struct jsonw		 head;
	json_int_t		 owner, limit = GPUQ_LIST_DEFAULT, after = 0;
	int64_t			 counts[JOB_NSTATES];
	char			*cause = NULL, *buf;
	size_t			 len, cap, i;
	int			 more = 0, rc, compact;

	memset(&f, 0, sizeof f);
	if (api_list_states(r, &f.states) != 0)
		return 0;
	if ((rc = api_field_int(r, "owner", 0, UINT32_MAX - 1, &owner)) < 0)
		return 0;
	if (rc > 0) {
		f.owner_set = 1;
		f.owner = (uid_t)owner;
	}
	if (api_field_bool(r, "compact", &compact) < 0)
		return 0;
	if (api_field_string(r, "name", &f.name) < 0 ||
	    api_field_int(r, "limit", 1, compact ? GPUQ_LIST_COMPACT_MAX :
	    GPUQ_LIST_MAX, &limit) < 0 ||
	    api_field_int(r, "after", 0, INT64_MAX, &after) < 0)
		return 0;

	memset(&p, 0, sizeof p);
	p.api = a;
	p.req = r;
	if (api_field_bool(r, "expand", &p.expand) < 0)
		return 0;
	p.compact = compact;
	p.cap = compact ? GPUQ_LIST_PAGE_BYTES : 0;
	f.bare = compact;	/* a row has no spec (nor parallelism) */
	jsonw_init(&p.out);
	jsonw_init(&p.att);
	jsonw_init(&head);
	p.out.prec = p.att.prec = GPUQ_REPLY_PRECISION;
	if (compact) {
		/*
		 * Room for "ok", "next", "counts" and "columns", written
		 * last but sent first; what they leave is blanks before the
		 * rows' '[' (no copy of the page to put them in front).
		 */
		jsonw_reserve(&p.out, GPUQ_LIST_PAGE_BYTES + 65536);
		p.room = API_ROW_HEAD;
		memset(p.out.buf, ' ', p.room);
		p.out.len = p.room;
	} else
		jsonw_reserve(&p.out, 16384);
	if (!compact) {
		jsonw_object_begin(&p.out);
		JSONW_KEY(&p.out, "ok");
		jsonw_bool(&p.out, 1);
		JSONW_KEY(&p.out, "jobs");
	}
	jsonw_array_begin(&p.out);
	/*
	 * An array folded into one line counts as one job of the page;
	 * the walk goes on after its last task (its tasks' ids follow each
	 * other).
	 */
	for (;;) {
		p.stop = 0;
		rc = store_job_list(a->store, &f, after, (int)limit - p.rows,
		    api_list_on_job, &p, &more, &cause);
		if (p.error) {
			rc = 0;
			goto out;
		}
		if (p.full) {
			more = 1;
			rc = 0;
			break;
		}
		if (rc < 0 || !p.stop)
			break;
		after = p.resume;
		if (p.rows == (int)limit) {
			more = 1;	/* perhaps; the next page says */
			break;
		}
	}
	if (rc >= 0 && p.nslots > 0)
		rc = store_attempt_list_live(a->store, api_list_on_attempt, &p,
		    &cause);
	if (rc >= 0)
		rc = store_job_counts(a->store, counts, &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot list jobs");
		goto out;
	}
	jsonw_array_end(&p.out);
	if (compact) {
		head.prec = GPUQ_REPLY_PRECISION;
		jsonw_object_begin(&head);
		JSONW_KEY(&head, "ok");
		jsonw_bool(&head, 1);
		api_list_tail(&head, more, p.last, counts);
		JSONW_KEY(&head, "columns");
		jsonw_array_begin(&head);
		for (i = 0; i < sizeof api_row_columns /
		    sizeof api_row_columns[0]; i++)
			jsonw_string(&head, api_row_columns[i]);
		jsonw_array_end(&head);
		JSONW_KEY(&head, "rows");
		if (p.att.len == 0 && head.len <= p.room)
			memcpy(p.out.buf, head.buf, head.len);
		else
			api_page_splice(&p, head.buf, head.len);
		jsonw_object_end(&p.out);
	} else {
		if (p.att.len > 0)
			api_page_splice(&p, NULL, 0);
		api_list_tail(&p.out, more, p.last, counts);
		jsonw_object_end(&p.out);
	}
	buf = jsonw_take(&p.out, &len, &cap);
	server_client_reply_take(r->client, buf, len, cap);
out:
	jsonw_done(&head);
	jsonw_done(&p.out);
	jsonw_done(&p.att);
	free(p.slots);
	return 0;
}

/* What show gathers of a job's history. */
struct api_history {
	struct jsonw	 w;
	size_t		 live;		/* newest unended attempt in w */
	size_t		 livelen;	/* its length; 0 if none */
};

static int
api_show_on_attempt(const struct store_attempt *t, void *arg)
{
	struct api_history	*h = arg;
	size_t			 at;

	if (h->w.comma)			/* the ',' is not the attempt's */
		jsonw_put(&h->w, ",", 1);
	h->w.comma = 0;
	at = h->w.len;
	api_attempt_write(&h->w, t);
	if (t->state != ATTEMPT_ENDED) {
		h->live = at;
		h->livelen = h->w.len - at;
	}
	return 0;
}

/* proto.h's event shape. */
static int
api_show_on_event(const struct store_event *e, void *arg)
{
	struct jsonw	*w = arg;

	jsonw_object_begin(w);
	JSONW_KEY(w, "time");
	jsonw_int(w, e->time);
	JSONW_KEY(w, "from");
	jsonw_string(w, e->from_state < 0 ? NULL :
	    job_state_name(e->from_state));
	JSONW_KEY(w, "to");
	jsonw_string(w, job_state_name(e->to_state));
	JSONW_KEY(w, "message");
	jsonw_string(w, e->message);
	jsonw_object_end(w);
	return 0;
}

/* Did the request's "id" name array J as a whole (42, not 42.0)? */
static int
api_names_array(const struct api_req *r, const struct store_job *j)
{
	return r->task < 0 && j->array_id != 0 && j->array_id == j->id;
}

#define API_SHOW_TASKS	1000	/* tasks listed by show of an array */

static int
api_show_on_task(const struct store_job *t, void *arg)
{
	struct api_page	*p = arg;

	api_job_write(&p->out, p->api, t);
	jsonw_null(&p->out);
	jsonw_object_end(&p->out);
	p->rows++;
	return 0;
}

/*
 * show of an array: the array as list folds it, then "spec" (without
 * the task member), "tasks" (the first API_SHOW_TASKS, in index order,
 * as list writes jobs) and "tasks_more".
 */
static void
api_array_show(struct api_req *r, const struct store_job *j)
{
	struct api_page	 p;
	json_t		*spec;
	char		*cause = NULL;
	int64_t		 last;
	int		 rc;

	memset(&p, 0, sizeof p);
	p.api = r->api;
	jsonw_init(&p.out);
	p.out.prec = GPUQ_REPLY_PRECISION;
	jsonw_object_begin(&p.out);
	JSONW_KEY(&p.out, "ok");
	jsonw_bool(&p.out, 1);
	JSONW_KEY(&p.out, "job");
	if (api_array_write(r, &p.out, j, &last, 0) != 0)
		goto out;
	JSONW_KEY(&p.out, "spec");
	spec = j->spec != NULL ? json_loads(j->spec, 0, NULL) : NULL;
	(void)json_object_del(spec, "task");
	if (spec != NULL && !api_may_see(r, j))
		api_spec_withhold(spec);
	jsonw_json(&p.out, spec);
	json_decref(spec);
	JSONW_KEY(&p.out, "tasks");
	jsonw_array_begin(&p.out);
	rc = store_task_list(r->api->store, j->array_id, 0, API_SHOW_TASKS,
	    api_show_on_task, &p, &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot list the tasks");
		goto out;
	}
	jsonw_array_end(&p.out);
	JSONW_KEY(&p.out, "tasks_more");
	jsonw_bool(&p.out, j->array_id + p.rows <= last);
	jsonw_object_end(&p.out);	/* the job */
	jsonw_object_end(&p.out);
	server_client_reply_jsonw(r->client, &p.out);
out:
	jsonw_done(&p.out);
}

/*
 * show: the job as list writes it, with "current" its newest attempt
 * not ended, and then "spec", "attempts_list" (oldest first) and
 * "events" (oldest first).
 */
static int
api_op_show(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct store_job	*j;
	struct api_history	 h;
	struct jsonw		 out;
	json_t			*spec;
	char			*cause = NULL;
	int64_t			 id;
	int			 rc;

	if (api_job_fetch(r, &id, &j) != 0)
		return 0;
	if (api_names_array(r, j)) {
		api_array_show(r, j);
		store_job_free(j);
		return 0;
	}
	memset(&h, 0, sizeof h);
	jsonw_init(&h.w);
	jsonw_init(&out);
	h.w.prec = out.prec = GPUQ_REPLY_PRECISION;
	rc = store_attempt_list(a->store, id, api_show_on_attempt, &h,
	    &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot read the job's history");
		goto out;
	}
	jsonw_object_begin(&out);
	JSONW_KEY(&out, "ok");
	jsonw_bool(&out, 1);
	JSONW_KEY(&out, "job");
	api_job_write(&out, a, j);
	if (h.livelen > 0)
		jsonw_raw(&out, h.w.buf + h.live, h.livelen);
	else
		jsonw_null(&out);
	JSONW_KEY(&out, "spec");
	spec = j->spec != NULL ? json_loads(j->spec, 0, NULL) : NULL;
	/* A task's index is in its id; its spec is the array's. */
	(void)json_object_del(spec, "task");
	if (spec != NULL && !api_may_see(r, j))
		api_spec_withhold(spec);
	jsonw_json(&out, spec);
	json_decref(spec);
	JSONW_KEY(&out, "attempts_list");
	jsonw_array_begin(&out);
	if (h.w.len > 0)
		jsonw_raw(&out, h.w.buf, h.w.len);
	jsonw_array_end(&out);
	JSONW_KEY(&out, "events");
	jsonw_array_begin(&out);
	rc = store_event_list(a->store, id, api_show_on_event, &out, &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot read the job's history");
		goto out;
	}
	jsonw_array_end(&out);
	jsonw_object_end(&out);		/* the job */
	jsonw_object_end(&out);
	server_client_reply_jsonw(r->client, &out);
out:
	jsonw_done(&out);
	jsonw_done(&h.w);
	store_job_free(j);
	return 0;
}

/*
 * What a job moved by a person waits for, or how it ended, for its
 * "why": the scheduler's old reason (no quota, ...) no longer holds.
 * A released job has none until the scheduler's next pass. New or NULL.
 */
static char *
api_transition_why(int to, unsigned uid)
{
	switch (to) {
	case JOB_HELD:
		return xprintf("held by uid %u: 'gpuq release' lets it start",
		    uid);
	case JOB_CANCELLED:
	case JOB_CANCELLING:
		/* Still true once the reconciler has deleted the resource. */
		return xprintf("cancelled by uid %u", uid);
	default:
		return NULL;
	}
}

/*
 * Move job J to TO if it is still in FROM, with an event; reply the new
 * state. Returns 0 (replied either way).
 */
static int
api_transition(struct api_req *r, struct store_job *j, int to,
    const char *verb)
{
	struct api	*a = r->api;
	char		*cause = NULL, *msg;
	unsigned	 uid = (unsigned)server_client_peer(r->client)->uid;
	int		 rc, now;

	msg = xprintf("%s by uid %u", verb, uid);
	rc = store_job_transition(a->store, j->id, JOB_MASK(j->state), to,
	    msg, &now, &cause);
	free(msg);
	if (rc == -EALREADY) {
		free(cause);
		server_client_error(r->client, GPUQ_ERR_CONFLICT, "id",
		    "job %" PRId64 " went from %s to %s meanwhile; try again",
		    j->id, job_state_name(j->state), job_state_name(now));
		return 0;
	}
	if (rc != 0) {
		api_store_error(r, rc, cause, "cannot change the job");
		return 0;
	}
	log_info("job %" PRId64 ": %s -> %s, %s by uid %u", j->id,
	    job_state_name(j->state), job_state_name(to), verb, uid);
	msg = api_transition_why(to, uid);
	if (store_job_set_why(a->store, j->id, msg, &cause) != 0) {
		log_warnx("job %" PRId64 ": why not updated: %s", j->id,
		    cause != NULL ? cause : "store error");
		free(cause);
	}
	free(msg);
	if (to == JOB_CANCELLING)
		api_cancel_cloud(a, j->id);
	api_changed(a);
	api_reply_state(r, to);
	return 0;
}

/* A task of an array went to cancelling: the cloud side stops it. */
static void
api_array_on_moved(int64_t id, int from, int to, void *arg)
{
	struct api	*a = arg;

	if (to == JOB_CANCELLING)
		api_cancel_cloud(a, id);
}

/*
 * cancel, hold or release (VERB) of array J as a whole: every task in a
 * state S with TO_OF[S] >= 0 moves, in one transaction. The reply is
 * the array's state after, and how many tasks moved. When none could,
 * NONE_ERR (if not NULL) is a conflict: the array has nothing to act on.
 */
static int
api_array_change(struct api_req *r, const struct store_job *j,
    const int to_of[JOB_NSTATES], const char *verb, const char *none_err)
{
	struct api		*a = r->api;
	struct store_sum	 sum;
	struct jsonw		*w = &a->reply;
	char			*cause = NULL, *msg, *why;
	unsigned		 uid;
	int			 n, rc, to = -1, i;

	uid = (unsigned)server_client_peer(r->client)->uid;
	msg = xprintf("%s by uid %u (the whole array)", verb, uid);
	for (i = 0; i < JOB_NSTATES; i++)
		if (to_of[i] >= 0 && to < 0)
			to = to_of[i];
	why = api_transition_why(to, uid);
	n = store_array_transition(a->store, j->array_id, to_of, msg, why,
	    api_array_on_moved, a, &cause);
	free(msg);
	free(why);
	if (n < 0) {
		api_store_error(r, n, cause, "cannot change the array");
		return 0;
	}
	if ((rc = store_job_sum(a->store, j->array_id, &sum, &cause)) != 0) {
		api_store_error(r, rc, cause, "cannot read the array");
		return 0;
	}
	if (n == 0 && none_err != NULL) {
		server_client_error(r->client, GPUQ_ERR_CONFLICT, "id",
		    "array %" PRId64 " is %s; %s", j->array_id,
		    job_state_name(api_array_state(&sum)), none_err);
		return 0;
	}
	if (n > 0) {
		log_info("array %" PRId64 ": %s %d task(s) by uid %u",
		    j->array_id, verb, n, uid);
		api_changed(a);
	}
	jsonw_reset(w);
	jsonw_object_begin(w);
	JSONW_KEY(w, "ok");
	jsonw_bool(w, 1);
	JSONW_KEY(w, "state");
	jsonw_string(w, job_state_name(api_array_state(&sum)));
	JSONW_KEY(w, "tasks");
	jsonw_int(w, n);
	jsonw_object_end(w);
	server_client_reply(r->client, w->buf, w->len);
	return 0;
}

/* The moves of a whole array's cancel, hold and release. */
static void
api_array_moves(int op, int to_of[JOB_NSTATES])
{
	int	i;

	for (i = 0; i < JOB_NSTATES; i++)
		to_of[i] = -1;
	switch (op) {
	case 'c':
		to_of[JOB_HELD] = to_of[JOB_QUEUED] = JOB_CANCELLED;
		to_of[JOB_LAUNCHING] = to_of[JOB_PENDING] =
		    to_of[JOB_RUNNING] = JOB_CANCELLING;
		break;
	case 'h':
		to_of[JOB_QUEUED] = JOB_HELD;
		break;
	default:
		to_of[JOB_HELD] = JOB_QUEUED;
		break;
	}
}

/*
 * cancel: held or queued jobs end at once; jobs in the cloud go to
 * cancelling and the reconciler finishes them. Cancelling twice is fine;
 * a finished job is a conflict.
 */
static int
api_op_cancel(struct api_req *r, struct store_job *j)
{
	int	to_of[JOB_NSTATES];

	if (api_names_array(r, j)) {
		api_array_moves('c', to_of);
		return api_array_change(r, j, to_of, "cancelled",
		    "there is nothing to cancel");
	}
	switch (j->state) {
	case JOB_HELD:
	case JOB_QUEUED:
		return api_transition(r, j, JOB_CANCELLED, "cancelled");
	case JOB_LAUNCHING:
	case JOB_PENDING:
	case JOB_RUNNING:
		return api_transition(r, j, JOB_CANCELLING,
		    "cancel requested");
	case JOB_CANCELLING:
		api_reply_state(r, j->state);
		return 0;
	default:
		server_client_error(r->client, GPUQ_ERR_CONFLICT, "id",
		    "job %" PRId64 " is already %s; there is nothing to "
		    "cancel", j->id, job_state_name(j->state));
		return 0;
	}
}

/*
 * hold and release: move J from FROM to TO with event WHAT. A job
 * already in TO is fine (the reply says so); any other state is a
 * conflict.
 */
static int
api_hold_release(struct api_req *r, struct store_job *j, int from, int to,
    const char *what)
{
	if (j->state == from)
		return api_transition(r, j, to, what);
	if (j->state == to) {
		api_reply_state(r, j->state);
		return 0;
	}
	server_client_error(r->client, GPUQ_ERR_CONFLICT, "id",
	    "job %" PRId64 " is %s; only a %s job can be %s", j->id,
	    job_state_name(j->state), job_state_name(from), what);
	return 0;
}

/* hold: a queued job stays put until released. Holding twice is fine. */
static int
api_op_hold(struct api_req *r, struct store_job *j)
{
	int	to_of[JOB_NSTATES];

	if (api_names_array(r, j)) {
		api_array_moves('h', to_of);
		return api_array_change(r, j, to_of, "held", NULL);
	}
	return api_hold_release(r, j, JOB_QUEUED, JOB_HELD, "held");
}

/* release: a held job queues again. Releasing a queued job is fine. */
static int
api_op_release(struct api_req *r, struct store_job *j)
{
	int	to_of[JOB_NSTATES];

	if (api_names_array(r, j)) {
		api_array_moves('r', to_of);
		return api_array_change(r, j, to_of, "released", NULL);
	}
	return api_hold_release(r, j, JOB_HELD, JOB_QUEUED, "released");
}

/* ping: who we are. */
static int
api_op_ping(struct api_req *r, struct store_job *unused)
{
	struct jsonw	*w = &r->api->reply;

	jsonw_reset(w);
	jsonw_object_begin(w);
	JSONW_KEY(w, "ok");
	jsonw_bool(w, 1);
	JSONW_KEY(w, "version");
	jsonw_string(w, PACKAGE_VERSION);
	JSONW_KEY(w, "proto");
	jsonw_int(w, GPUQ_PROTO_VERSION);
	JSONW_KEY(w, "install");
	jsonw_string(w, store_install_id(r->api->store));
	jsonw_object_end(w);
	server_client_reply(r->client, w->buf, w->len);
	return 0;
}

void
api_conf_changed(struct api *a)
{
	struct group	*gr;

	a->admin_ok = 0;
	if (*a->conf->admin_group == '\0')
		return;
	gr = getgrnam(a->conf->admin_group);
	if (gr == NULL) {
		if (a->admin_missing == NULL ||
		    strcmp(a->admin_missing, a->conf->admin_group) != 0)
			log_info("admin group \"%s\" does not exist; only "
			    "owners and root may change jobs",
			    a->conf->admin_group);
		free(a->admin_missing);
		a->admin_missing = xstrdup(a->conf->admin_group);
		return;
	}
	a->admin_gid = gr->gr_gid;
	a->admin_ok = 1;
}

struct api *
api_new(uv_loop_t *loop, struct store *store, const struct conf *conf)
{
	struct api	*a;
	char		*t;
	size_t		 i;

	a = xcalloc(1, sizeof *a);
	a->loop = loop;
	a->store = store;
	a->conf = conf;
	jsonw_init(&a->batch.text);
	jsonw_init(&a->spare.text);
	jsonw_init(&a->reply);
	a->known_ops = xstrdup(api_ops[0].name);
	for (i = 1; i < API_NOPS; i++) {
		t = xprintf("%s, %s", a->known_ops, api_ops[i].name);
		free(a->known_ops);
		a->known_ops = t;
	}
	api_conf_changed(a);
	(void)uv_check_init(loop, &a->check);
	(void)uv_idle_init(loop, &a->idle);
	a->check.data = a->idle.data = a;
	a->closes = 3;
	LIST_INIT(&a->clouds);
	api_wait_init(a);
	(void)uv_check_start(&a->check, api_on_check);
	return a;
}

void
api_set_hooks(struct api *a, const struct api_hooks *h)
{
	a->hooks = *h;
}

static void
api_on_close(uv_handle_t *h)
{
	struct api	*a = h->data;

	if (--a->closes > 0)
		return;
	free(a->batch.v);
	jsonw_done(&a->batch.text);
	free(a->spare.v);
	jsonw_done(&a->spare.text);
	jsonw_done(&a->reply);
	free(a->rows);
	free(a->ids);
	free(a->known_ops);
	free(a->admin_missing);
	free(a);
}

void
api_close(struct api *a)
{
	while (a->batch.n > 0)
		api_commit(a);
	/* Answers still owed now will not come in time: say so. */
	api_cloud_orphan(a);
	api_wait_close(a, api_on_close);
	uv_close((uv_handle_t *)&a->check, api_on_close);
	uv_close((uv_handle_t *)&a->idle, api_on_close);
}

/*
 * {"ok":true,"text":"..."}: the Prometheus exposition of gpuqd
 * (daemon/metrics.c), for `gpuq metrics`. Open to every caller of the
 * socket, as `gpuq status` is: it counts jobs, it names none.
 */
static int
api_op_metrics(struct api_req *r, struct store_job *unused)
{
	struct jsonw	*w = &r->api->reply;
	char		*text;

	(void)unused;
	if (r->api->hooks.metrics == NULL) {
		server_client_error(r->client, GPUQ_ERR_INTERNAL, NULL,
		    "metrics are not available in this gpuqd");
		return 0;
	}
	text = r->api->hooks.metrics(r->api->hooks.arg);
	jsonw_reset(w);
	jsonw_object_begin(w);
	JSONW_KEY(w, "ok");
	jsonw_bool(w, 1);
	JSONW_KEY(w, "text");
	jsonw_string(w, text);
	jsonw_object_end(w);
	server_client_reply(r->client, w->buf, w->len);
	free(text);
	return 0;
}
