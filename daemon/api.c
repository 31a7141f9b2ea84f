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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "common/frame.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/conf.h"
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
#define API_TEXT_KEEP		(1024 * 1024)	/* batch text kept when empty */
#define API_NONE		((size_t)-1)	/* no string */
#define API_WITHHELD		"<withheld>"	/* shown for a secret */

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
};

static int	api_op_submit(struct api_req *, struct store_job *);
static int	api_op_list(struct api_req *, struct store_job *);
static int	api_op_show(struct api_req *, struct store_job *);
static int	api_op_cancel(struct api_req *, struct store_job *);
static int	api_op_hold(struct api_req *, struct store_job *);
static int	api_op_release(struct api_req *, struct store_job *);
static int	api_op_ping(struct api_req *, struct store_job *);

/*
 * Every op of the wire, the one place they are listed. plan, quotas and
 * prices (api-cloud.c) ask the cloud; while gpuqd runs no provider they
 * answer "unavailable".
 */
static const struct api_op api_ops[] = {
	{ "submit",	api_op_submit,	API_DEFER, "job,hold,name,priority" },
	{ "list",	api_op_list,	0, "state,owner,name,limit,after" },
	{ "show",	api_op_show,	0, "id" },
	{ "cancel",	api_op_cancel,	API_OWNER, "id" },
	{ "hold",	api_op_hold,	API_OWNER, "id" },
	{ "release",	api_op_release,	API_OWNER, "id" },
	{ "plan",	api_op_plan,	API_CLOUD, "job" },
	{ "quotas",	api_op_quotas,	API_CLOUD, "region,gpu" },
	{ "prices",	api_op_prices,	API_CLOUD, "region,gpu" },
	{ "ping",	api_op_ping,	0, "" },
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
static int
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
 * line often carries a token too). Everything else (image, GPUs,
 * regions, labels, secret_env's resource names) stays.
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
}

/* Required "id": 1 and *ret, else replied and -1. */
static int
api_field_id(struct api_req *r, int64_t *ret)
{
	json_int_t	id;
	int		rc;

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
	rc = store_job_get(r->api->store, id, ret, &cause);
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
	*ret_id = id;
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
	int64_t			 id;

	if (api_job_fetch(r, &id, &j) != 0)
		return -1;
	if (!api_may_change(r, j)) {
		if (*r->api->conf->admin_group == '\0')
			server_client_error(r->client, GPUQ_ERR_FORBIDDEN,
			    "id", "job %" PRId64 " belongs to uid %u; only its "
			    "owner or root may %s it", id, (unsigned)j->owner,
			    r->op->name);
		else
			server_client_error(r->client, GPUQ_ERR_FORBIDDEN,
			    "id", "job %" PRId64 " belongs to uid %u; only its "
			    "owner, root or members of group \"%s\" may %s "
			    "it", id, (unsigned)j->owner,
			    r->api->conf->admin_group, r->op->name);
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
	if (owed && (api_cloud_owes(a, c) || r.op == NULL ||
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

	if (owed && b->n >= API_BATCH_MAX)
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
	json_decref(warn);
	json_decref(norm);
	if (b->n++ == 0)
		(void)uv_idle_start(&a->idle, api_on_idle);
	server_client_defer(r->client);
	return 0;
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
	size_t			 n = a->batch.n, i;
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
	jsonw_reset(&a->batch.text);
	b = a->spare.v;

	if (n > a->caprows) {
		a->caprows = n;
		a->rows = xreallocarray(a->rows, n, sizeof *a->rows);
		a->ids = xreallocarray(a->ids, n, sizeof *a->ids);
	}
	for (i = 0; i < n; i++) {
		struct store_job_new	*row = &a->rows[i];
		const char		*t = a->spare.text.buf;

		row->name = t + b[i].name;
		row->priority = b[i].priority;
		row->owner = server_client_peer(b[i].client)->uid;
		row->spec = t + b[i].spec;
		row->labels = b[i].labels == API_NONE ? NULL : t + b[i].labels;
		row->held = b[i].held;
		row->gpu_type = b[i].gpu_type == API_NONE ? NULL :
		    t + b[i].gpu_type;
		row->gpu_count = b[i].gpu_count;
		row->nodes = b[i].nodes;
	}
	rc = store_jobs_insert(a->store, a->rows, n, a->ids, &cause);
	if (rc != 0)
		log_warnx("submit: %zu job(s) not stored: %s", n,
		    cause != NULL ? cause : strerror(-rc));
	else
		log_debug("submit: %zu job(s) committed, ids %" PRId64
		    "-%" PRId64, n, a->ids[0], a->ids[n - 1]);

	for (i = 0; i < n; i++) {
		if (rc == 0 && a->conf->log_submits)
			log_info("job %" PRId64 ": submitted by uid %u pid "
			    "%d, name \"%s\"%s", a->ids[i],
			    (unsigned)a->rows[i].owner,
			    (int)server_client_peer(b[i].client)->pid,
			    a->rows[i].name, a->rows[i].held ? ", held" : "");
		if (rc == 0) {
			jsonw_reset(&a->reply);
			jsonw_object_begin(&a->reply);
			JSONW_KEY(&a->reply, "ok");
			jsonw_bool(&a->reply, 1);
			JSONW_KEY(&a->reply, "id");
			jsonw_int(&a->reply, a->ids[i]);
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
	free(cause);
	/* A burst grew the text: do not keep that while idle. */
	if (a->spare.text.cap > API_TEXT_KEEP)
		jsonw_done(&a->spare.text);
	jsonw_reset(&a->spare.text);
	a->spare.n = 0;
	if (rc == 0)
		api_changed(a);
	if (a->batch.n == 0)
		(void)uv_idle_stop(&a->idle);
}

static void
api_on_check(uv_check_t *h)
{
	api_commit(h->data);
}

/* Why job J waits, as shown: its own why, that it is held, or that
 * nothing can run it. */
static const char *
api_job_why(const struct api *a, const struct store_job *j)
{
	if (j->state == JOB_HELD)
		return j->why != NULL ? j->why :
		    "held: 'gpuq release' lets it start";
	if (j->why == NULL && j->state == JOB_QUEUED &&
	    *a->conf->project == '\0')
		return API_WHY_NO_PROVIDER;
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
	api_attempt_nodes_write(w, at);
	jsonw_object_end(w);
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
	JSONW_KEY(w, "current");
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
	jsonw_null(&p->out);
	jsonw_object_end(&p->out);
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
		api_attempt_write(&p->att, t);
		p->slots[lo].len = p->att.len - p->slots[lo].off;
	}
	return 0;
}

/* Put each attempt found in place of its job's "current":null. */
static void
api_page_splice(struct api_page *p)
{
	struct jsonw	 out;
	size_t		 i, from = 0;

	jsonw_init(&out);
	jsonw_reserve(&out, p->out.len + p->att.len);
	for (i = 0; i < p->nslots; i++) {
		if (p->slots[i].len == 0)
			continue;
		jsonw_put(&out, p->out.buf + from, p->slots[i].at - from);
		jsonw_put(&out, p->att.buf + p->slots[i].off,
		    p->slots[i].len);
		from = p->slots[i].at + sizeof "null" - 1;
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

/* list: a keyset page of jobs, "next" when more follow, and counts. */
static int
api_op_list(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct store_filter	 f;
	struct api_page		 p;
	json_int_t		 owner, limit = GPUQ_LIST_DEFAULT, after = 0;
	int64_t			 counts[JOB_NSTATES];
	char			*cause = NULL, *buf;
	size_t			 len, cap;
	int			 more = 0, rc, i;

	memset(&f, 0, sizeof f);
	if (api_list_states(r, &f.states) != 0)
		return 0;
	if ((rc = api_field_int(r, "owner", 0, UINT32_MAX - 1, &owner)) < 0)
		return 0;
	if (rc > 0) {
		f.owner_set = 1;
		f.owner = (uid_t)owner;
	}
	if (api_field_string(r, "name", &f.name) < 0 ||
	    api_field_int(r, "limit", 1, GPUQ_LIST_MAX, &limit) < 0 ||
	    api_field_int(r, "after", 0, INT64_MAX, &after) < 0)
		return 0;

	memset(&p, 0, sizeof p);
	p.api = a;
	jsonw_init(&p.out);
	jsonw_init(&p.att);
	p.out.prec = p.att.prec = GPUQ_REPLY_PRECISION;
	jsonw_reserve(&p.out, 16384);
	jsonw_object_begin(&p.out);
	JSONW_KEY(&p.out, "ok");
	jsonw_bool(&p.out, 1);
	JSONW_KEY(&p.out, "jobs");
	jsonw_array_begin(&p.out);
	rc = store_job_list(a->store, &f, after, (int)limit, api_list_on_job,
	    &p, &more, &cause);
	if (rc >= 0 && p.nslots > 0)
		rc = store_attempt_list_live(a->store, api_list_on_attempt, &p,
		    &cause);
	if (rc >= 0)
		rc = store_job_counts(a->store, counts, &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot list jobs");
		goto out;
	}
	if (p.att.len > 0)
		api_page_splice(&p);
	jsonw_array_end(&p.out);
	if (more) {
		JSONW_KEY(&p.out, "next");
		jsonw_int(&p.out, p.last);
	}
	JSONW_KEY(&p.out, "counts");
	jsonw_object_begin(&p.out);
	for (i = 0; i < JOB_NSTATES; i++) {
		jsonw_key(&p.out, job_state_name(i));
		jsonw_int(&p.out, counts[i]);
	}
	jsonw_object_end(&p.out);
	jsonw_object_end(&p.out);
	buf = jsonw_take(&p.out, &len, &cap);
	server_client_reply_take(r->client, buf, len, cap);
out:
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

/*
 * cancel: held or queued jobs end at once; jobs in the cloud go to
 * cancelling and the reconciler finishes them. Cancelling twice is fine;
 * a finished job is a conflict.
 */
static int
api_op_cancel(struct api_req *r, struct store_job *j)
{
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
	return api_hold_release(r, j, JOB_QUEUED, JOB_HELD, "held");
}

/* release: a held job queues again. Releasing a queued job is fine. */
static int
api_op_release(struct api_req *r, struct store_job *j)
{
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
	a->closes = 2;
	LIST_INIT(&a->clouds);
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
	uv_close((uv_handle_t *)&a->check, api_on_close);
	uv_close((uv_handle_t *)&a->idle, api_on_close);
}
