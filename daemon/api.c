/*
 * api.c: the ops of the wire, one const table, and the group commit.
 *
 * api_request() parses a request line, looks its op up in api_ops[],
 * checks the fields the op allows, and runs the handler. Ops flagged
 * API_OWNER act on one job: the table finds it by "id" and lets only
 * its owner, root or a member of [daemon] admin_group through. Ops
 * flagged API_CLOUD need a provider and answer "unavailable" without
 * one.
 *
 * submit is answered later: its validated job joins the batch, and
 * api_on_check() (once per turn of the loop) writes the whole batch
 * with one store_jobs_insert() — one transaction, one fsync — before any
 * of its replies leaves. A client that pipelines thousands of submits
 * gets them committed API_BATCH_MAX at a time; a request of the same
 * client behind them waits (-EAGAIN to the server) until their replies
 * are out. The cloud
 * ops (plan, quotas, prices) may be answered later too, through their
 * hooks; their client waits for that answer before anything else.
 *
 * Knows the store and the server's client handle; nothing of sockets,
 * and nothing of the cloud but the hooks.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "common/frame.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api.h"
#include "daemon/conf.h"
#include "daemon/server.h"
#include "daemon/spec.h"
#include "store/store.h"

#define API_WHY_NO_PROVIDER	"no provider configured"
#define API_NO_PROVIDER_MSG	\
	"no provider configured; set [gcp] project in gpuqd.conf"

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
	int			 priority;
	int			 held;
	size_t			 warnings;	/* JSON array, or API_NONE */
};

/* JSON text being written: replies, and the specs of a batch. */
struct api_text {
	char	*buf;
	size_t	 len;
	size_t	 cap;
};

/* The submits of one turn, and their strings in one buffer. */
struct api_batch {
	struct api_submit	*v;
	size_t			 n;
	size_t			 cap;
	struct api_text		 text;
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

	/* Cloud ops whose answers are on their way. */
	LIST_HEAD(, api_cloud)	 clouds;

	gid_t			 admin_gid;	/* of [daemon] admin_group */
	int			 admin_ok;	/* the group exists */
	char			*admin_missing;	/* said so for this name */
	char			*known_ops;	/* "submit, list, ..." */
};

/*
 * A cloud op (plan, quotas, prices) answered later: its client owes it
 * a reply, and sends nothing else -- not even a submit that could join
 * the batch -- until it is out, so replies keep their order.
 */
struct api_cloud {
	struct server_client	*client;
	const char		*what;		/* op name, static */
	json_t			*warnings;	/* plan: the spec's, or NULL */
	int			 orphaned;	/* answered by api_close */
	LIST_ENTRY(api_cloud)	 entry;
};

/* One request being answered. */
struct api_req {
	struct api		*api;
	struct server_client	*client;
	json_t			*req;		/* the parsed line; borrowed */
	const struct api_op	*op;
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

static int	api_op_submit(struct api_req *, struct store_job *);
static int	api_op_list(struct api_req *, struct store_job *);
static int	api_op_show(struct api_req *, struct store_job *);
static int	api_op_cancel(struct api_req *, struct store_job *);
static int	api_op_hold(struct api_req *, struct store_job *);
static int	api_op_release(struct api_req *, struct store_job *);
static int	api_op_ping(struct api_req *, struct store_job *);
static int	api_op_plan(struct api_req *, struct store_job *);
static int	api_op_quotas(struct api_req *, struct store_job *);
static int	api_op_prices(struct api_req *, struct store_job *);

/*
 * Every op of the wire. plan, quotas and prices ask the cloud through
 * the hooks; while gpuqd runs no provider they answer "unavailable".
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

static void
api_reply(struct api_req *r, json_t *reply)
{
	server_client_reply_json(r->client, reply);
	json_decref(reply);
}

/* {"ok":true} plus "state": the reply of cancel, hold and release. */
static void
api_reply_state(struct api_req *r, int state)
{
	char	buf[64];
	int	n;

	n = snprintf(buf, sizeof buf, "{\"ok\":true,\"state\":\"%s\"}",
	    job_state_name(state));
	server_client_reply(r->client, buf, (size_t)n);
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

/* Optional string field: 1 and *ret (borrowed), 0 absent, -1 bad. */
static int
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
 * Fetch the job named by "id" for an API_OWNER op and check the caller
 * may change it. 0 and *ret (new), else replied and -1.
 */
static int
api_owned_job(struct api_req *r, struct store_job **ret)
{
	struct store_job	*j;
	char			*cause = NULL;
	int64_t			 id;
	int			 rc;

	if (api_field_id(r, &id) != 0)
		return -1;
	rc = store_job_get(r->api->store, id, &j, &cause);
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
	struct api_cloud	*w;
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
	LIST_FOREACH(w, &a->clouds, entry)
		if (w->client == c)
			break;
	if (owed && (w != NULL || r.op == NULL ||
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

/* Room for N more bytes in T. */
static void
api_text_room(struct api_text *t, size_t n)
{
	size_t	cap;

	if (t->cap - t->len >= n)
		return;
	cap = t->cap ? t->cap : 16384;
	while (cap - t->len < n)
		cap *= 2;
	t->buf = xrealloc(t->buf, cap);
	t->cap = cap;
}

/* Append N bytes of S, as they are. */
static void
api_text_put(struct api_text *t, const char *s, size_t n)
{
	api_text_room(t, n);
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

#define API_TEXT_LIT(t, lit)	api_text_put((t), (lit), sizeof (lit) - 1)

static void
api_text_int(struct api_text *t, int64_t v)
{
	char		 d[24];
	size_t		 n = 0;
	uint64_t	 u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		d[sizeof d - ++n] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		d[sizeof d - ++n] = '-';
	api_text_put(t, d + sizeof d - n, n);
}

/*
 * A real as jansson writes it with PREC significant digits (17, its
 * default, keeps every double; 12 is the replies' JSON_REAL_PRECISION):
 * always with a '.' or an exponent, so it reads back as a real.
 */
static void
api_text_real(struct api_text *t, double v, int prec)
{
	char	d[40], *e, *x;
	int	n;

	if (!isfinite(v)) {
		API_TEXT_LIT(t, "null");
		return;
	}
	n = snprintf(d, sizeof d, "%.*g", prec, v);
	if (n <= 0 || (size_t)n >= sizeof d - 2)
		fatalx("api: cannot format %g", v);
	if ((e = strchr(d, 'e')) != NULL) {
		/* "1e+20" as "1e20", "1e-08" as "1e-8", as jansson does. */
		e++;
		if (*e == '+')
			memmove(e, e + 1, strlen(e + 1) + 1);
		else if (*e == '-')
			e++;
		for (x = e; *x == '0' && x[1] != '\0'; x++)
			;
		memmove(e, x, strlen(x) + 1);
		n = (int)strlen(d);
	} else if (strchr(d, '.') == NULL) {
		d[n++] = '.';
		d[n++] = '0';
	}
	api_text_put(t, d, (size_t)n);
}

/*
 * N bytes of S as a JSON string, escaped as jansson escapes (quote,
 * backslash, control characters); UTF-8 passes through. Unless VALID
 * says S is UTF-8, bytes past ASCII become U+FFFD so the line stays
 * valid JSON.
 */
static void
api_text_strn(struct api_text *t, const char *s, size_t n, int valid)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p;
	size_t			 run;
	char			 e[6];

	api_text_room(t, n + 2);
	t->buf[t->len++] = '"';
	for (p = (const unsigned char *)s; p < (const unsigned char *)s + n;
	    p += run) {
		for (run = 0; p + run < (const unsigned char *)s + n &&
		    p[run] >= 0x20 && p[run] != '"' && p[run] != '\\' &&
		    (p[run] < 0x80 || valid); run++)
			;
		if (run > 0) {
			api_text_put(t, (const char *)p, run);
			continue;
		}
		run = 1;
		switch (*p) {
		case '"':
			API_TEXT_LIT(t, "\\\"");
			break;
		case '\\':
			API_TEXT_LIT(t, "\\\\");
			break;
		case '\n':
			API_TEXT_LIT(t, "\\n");
			break;
		case '\t':
			API_TEXT_LIT(t, "\\t");
			break;
		case '\r':
			API_TEXT_LIT(t, "\\r");
			break;
		case '\b':
			API_TEXT_LIT(t, "\\b");
			break;
		case '\f':
			API_TEXT_LIT(t, "\\f");
			break;
		default:
			if (*p >= 0x80) {
				API_TEXT_LIT(t, "\\ufffd");
				break;
			}
			memcpy(e, "\\u00", 4);
			e[4] = hex[*p >> 4];
			e[5] = hex[*p & 0xf];
			api_text_put(t, e, sizeof e);
			break;
		}
	}
	api_text_put(t, "\"", 1);
}

/* S as a JSON string (see api_text_strn), or null. */
static void
api_text_str(struct api_text *t, const char *s)
{
	size_t	n;

	if (s == NULL) {
		API_TEXT_LIT(t, "null");
		return;
	}
	n = strlen(s);
	api_text_strn(t, s, n, utf8_valid(s, n));
}

/* ,"KEY": -- KEY is a literal that needs no escaping. */
#define API_TEXT_KEY(t, key)	API_TEXT_LIT((t), ",\"" key "\":")
#define API_REAL_REPLY		12	/* SERVER_JSON_FLAGS' precision */

/*
 * V as compact JSON, as json_dumps(V, JSON_COMPACT) writes it: keys in
 * their order (a normalized spec's is gpuq-job(5)'s), no spaces. Several
 * times faster than jansson's dump, which calls back per piece and
 * formats every integer with snprintf. Strings in a json_t are valid
 * UTF-8 (jansson checks), so only JSON's own escapes are needed.
 */
static void
api_text_json(struct api_text *t, const json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	int		 first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		API_TEXT_LIT(t, "{");
		json_object_foreach((json_t *)v, key, e) {
			if (!first)
				API_TEXT_LIT(t, ",");
			first = 0;
			api_text_strn(t, key, strlen(key), 1);
			API_TEXT_LIT(t, ":");
			api_text_json(t, e);
		}
		API_TEXT_LIT(t, "}");
		break;
	case JSON_ARRAY:
		API_TEXT_LIT(t, "[");
		json_array_foreach(v, i, e) {
			if (i > 0)
				API_TEXT_LIT(t, ",");
			api_text_json(t, e);
		}
		API_TEXT_LIT(t, "]");
		break;
	case JSON_STRING:
		api_text_strn(t, json_string_value(v), json_string_length(v),
		    1);
		break;
	case JSON_INTEGER:
		api_text_int(t, (int64_t)json_integer_value(v));
		break;
	case JSON_REAL:
		api_text_real(t, json_real_value(v), 17);
		break;
	case JSON_TRUE:
		API_TEXT_LIT(t, "true");
		break;
	case JSON_FALSE:
		API_TEXT_LIT(t, "false");
		break;
	default:
		API_TEXT_LIT(t, "null");
		break;
	}
}

/* Copy string S (NULL: none) into B's text; its offset or API_NONE. */
static size_t
api_batch_add(struct api_batch *b, const char *s)
{
	size_t	off = b->text.len;

	if (s == NULL)
		return API_NONE;
	api_text_put(&b->text, s, strlen(s) + 1);
	return off;
}

/* V as compact JSON text in B's text, NUL-terminated; its offset. */
static size_t
api_batch_dump(struct api_batch *b, const json_t *v)
{
	size_t	off = b->text.len;

	api_text_json(&b->text, v);
	api_text_put(&b->text, "", 1);
	return off;
}

/* Write "{"ok":true,"id":ID}" into BUF (32 bytes); its length. */
static size_t
api_fmt_id_reply(char *buf, int64_t id)
{
	static const char	 head[] = "{\"ok\":true,\"id\":";
	char			 digits[24];
	size_t			 n = 0, len;
	uint64_t		 u = id < 0 ? 0 : (uint64_t)id;

	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	memcpy(buf, head, sizeof head - 1);
	len = sizeof head - 1;
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len++] = '}';
	return len;
}

/*
 * What gpuqd.conf adds to the check of NORM (spec_site_check): 0 and
 * *ret_warnings (new, or NULL for none), or -EINVAL and ERR. Without a
 * [gcp] project nothing launches yet, and checkpoint_root may come with
 * it: no warnings then (and no cost on the submit path).
 */
static int
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
	size_t			 n = a->batch.n, i, len;
	char			*cause = NULL, buf[64], *msg;
	int			 rc;

	if (n == 0) {
		(void)uv_idle_stop(&a->idle);
		return;
	}
	tmp = a->spare;
	a->spare = a->batch;
	a->batch = tmp;
	a->batch.n = a->batch.text.len = 0;
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
		if (rc == 0 && b[i].warnings != API_NONE) {
			msg = xprintf("{\"ok\":true,\"id\":%" PRId64 ","
			    "\"warnings\":%s}", a->ids[i],
			    a->spare.text.buf + b[i].warnings);
			server_client_reply(b[i].client, msg, strlen(msg));
			free(msg);
		} else if (rc == 0) {
			len = api_fmt_id_reply(buf, a->ids[i]);
			server_client_reply(b[i].client, buf, len);
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
	if (a->spare.text.cap > API_TEXT_KEEP) {
		free(a->spare.text.buf);
		memset(&a->spare.text, 0, sizeof a->spare.text);
	}
	a->spare.n = a->spare.text.len = 0;
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

/* proto.h's attempt shape. */
static json_t *
api_attempt_json(const struct store_attempt *t)
{
	json_t	*o;

	o = json_pack("{s:i, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:i,"
	    " s:b, s:f, s:I, s:I, s:I, s:s?, s:i, s:s?, s:s?, s:f}",
	    "number", t->number,
	    "state", attempt_state_name(t->state),
	    "provider", t->provider,
	    "region", t->region,
	    "zone", t->zone,
	    "resource", t->resource,
	    "machine_type", t->machine_type,
	    "gpu", t->gpu,
	    "gpu_count", t->gpu_count,
	    "spot", t->spot,
	    "hourly_usd", t->hourly_usd,
	    "created", (json_int_t)t->created,
	    "started", (json_int_t)t->started,
	    "ended", (json_int_t)t->ended,
	    "end_reason", t->end_reason == END_NONE ? NULL :
	    attempt_end_name(t->end_reason),
	    "exit_code", t->exit_code,
	    "message", t->message,
	    "resumed_from", t->resumed_from,
	    "cost_usd", t->cost_usd);
	if (o == NULL)
		fatalx("api: cannot build an attempt");
	return o;
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
 * proto.h's job shape, with "current" null, as the reply of show. The
 * accelerator comes from the job's columns; SPEC (the parsed spec,
 * borrowed, or NULL) is only a fallback for a row without them.
 */
static json_t *
api_job_json(struct api *a, const struct store_job *j, json_t *spec)
{
	json_t		*o, *acc;
	const char	*why = api_job_why(a, j);

	o = json_pack("{s:I, s:s?, s:s, s:i, s:I, s:I, s:I, s:i, s:i, s:i,"
	    " s:f, s:s?, s:I, s:s?, s:i, s:s?}",
	    "id", (json_int_t)j->id,
	    "name", j->name,
	    "state", job_state_name(j->state),
	    "priority", j->priority,
	    "owner", (json_int_t)j->owner,
	    "created", (json_int_t)j->created,
	    "updated", (json_int_t)j->updated,
	    "attempts", j->attempts,
	    "failures", j->failures,
	    "interruptions", j->interruptions,
	    "cost_usd", j->cost_usd,
	    "checkpoint", j->checkpoint,
	    "checkpoint_at", (json_int_t)j->checkpoint_at,
	    "why", why,
	    "exit_code", j->exit_code,
	    "message", j->message);
	if (o == NULL)
		fatalx("api: cannot build a job");
	if (j->gpu_type != NULL)
		acc = json_pack("{s:s, s:i}", "type", j->gpu_type, "count",
		    j->gpu_count);
	else {
		acc = json_object_get(spec, "accelerator");
		acc = acc != NULL ? json_incref(acc) : NULL;
	}
	(void)json_object_set_new(o, "accelerator",
	    acc != NULL ? acc : json_null());
	if (j->not_before > 0 && j->state == JOB_QUEUED)
		(void)json_object_set_new(o, "not_before",
		    json_integer(j->not_before));
	(void)json_object_set_new(o, "current", json_null());
	return o;
}

/*
 * List replies are written as text (api_text_*), not built as jansson
 * trees: a page is a thousand jobs, and building and dumping their
 * objects was most of the time gpuqd took to answer one. The shapes are
 * proto.h's, the same as api_job_json() and api_attempt_json() give.
 */

/* proto.h's attempt shape, as api_attempt_json() builds it. */
static void
api_attempt_text(struct api_text *t, const struct store_attempt *at)
{
	API_TEXT_LIT(t, "{\"number\":");
	api_text_int(t, at->number);
	API_TEXT_KEY(t, "state");
	api_text_str(t, attempt_state_name(at->state));
	API_TEXT_KEY(t, "provider");
	api_text_str(t, at->provider);
	API_TEXT_KEY(t, "region");
	api_text_str(t, at->region);
	API_TEXT_KEY(t, "zone");
	api_text_str(t, at->zone);
	API_TEXT_KEY(t, "resource");
	api_text_str(t, at->resource);
	API_TEXT_KEY(t, "machine_type");
	api_text_str(t, at->machine_type);
	API_TEXT_KEY(t, "gpu");
	api_text_str(t, at->gpu);
	API_TEXT_KEY(t, "gpu_count");
	api_text_int(t, at->gpu_count);
	API_TEXT_KEY(t, "spot");
	if (at->spot)
		API_TEXT_LIT(t, "true");
	else
		API_TEXT_LIT(t, "false");
	API_TEXT_KEY(t, "hourly_usd");
	api_text_real(t, at->hourly_usd, API_REAL_REPLY);
	API_TEXT_KEY(t, "created");
	api_text_int(t, at->created);
	API_TEXT_KEY(t, "started");
	api_text_int(t, at->started);
	API_TEXT_KEY(t, "ended");
	api_text_int(t, at->ended);
	API_TEXT_KEY(t, "end_reason");
	api_text_str(t, at->end_reason == END_NONE ? NULL :
	    attempt_end_name(at->end_reason));
	API_TEXT_KEY(t, "exit_code");
	api_text_int(t, at->exit_code);
	API_TEXT_KEY(t, "message");
	api_text_str(t, at->message);
	API_TEXT_KEY(t, "resumed_from");
	api_text_str(t, at->resumed_from);
	API_TEXT_KEY(t, "cost_usd");
	api_text_real(t, at->cost_usd, API_REAL_REPLY);
	API_TEXT_LIT(t, "}");
}

/*
 * proto.h's job shape, as api_job_json() builds it, up to and including
 * "current": (its value is the caller's).
 */
static void
api_job_text(struct api_text *t, const struct api *a,
    const struct store_job *j)
{
	API_TEXT_LIT(t, "{\"id\":");
	api_text_int(t, j->id);
	API_TEXT_KEY(t, "name");
	api_text_str(t, j->name);
	API_TEXT_KEY(t, "state");
	api_text_str(t, job_state_name(j->state));
	API_TEXT_KEY(t, "priority");
	api_text_int(t, j->priority);
	API_TEXT_KEY(t, "owner");
	api_text_int(t, (int64_t)j->owner);
	API_TEXT_KEY(t, "created");
	api_text_int(t, j->created);
	API_TEXT_KEY(t, "updated");
	api_text_int(t, j->updated);
	API_TEXT_KEY(t, "attempts");
	api_text_int(t, j->attempts);
	API_TEXT_KEY(t, "failures");
	api_text_int(t, j->failures);
	API_TEXT_KEY(t, "interruptions");
	api_text_int(t, j->interruptions);
	API_TEXT_KEY(t, "cost_usd");
	api_text_real(t, j->cost_usd, API_REAL_REPLY);
	API_TEXT_KEY(t, "checkpoint");
	api_text_str(t, j->checkpoint);
	API_TEXT_KEY(t, "checkpoint_at");
	api_text_int(t, j->checkpoint_at);
	API_TEXT_KEY(t, "why");
	api_text_str(t, api_job_why(a, j));
	API_TEXT_KEY(t, "exit_code");
	api_text_int(t, j->exit_code);
	API_TEXT_KEY(t, "message");
	api_text_str(t, j->message);
	API_TEXT_KEY(t, "accelerator");
	if (j->gpu_type != NULL) {
		API_TEXT_LIT(t, "{\"type\":");
		api_text_str(t, j->gpu_type);
		API_TEXT_KEY(t, "count");
		api_text_int(t, j->gpu_count);
		API_TEXT_LIT(t, "}");
	} else
		API_TEXT_LIT(t, "null");
	if (j->not_before > 0 && j->state == JOB_QUEUED) {
		API_TEXT_KEY(t, "not_before");
		api_text_int(t, j->not_before);
	}
	API_TEXT_KEY(t, "current");
}

/*
 * A page being listed. Each job is written with "current":null; a job
 * that may have a live attempt (in the cloud, or cancelling) notes
 * where that null is, and its attempt's text, once found, replaces it.
 */
struct api_page {
	const struct api	*api;
	struct api_text		 out;		/* the reply so far */
	struct api_text		 att;		/* attempts' text */
	struct api_page_slot {
		int64_t		 id;		/* job id; ascending */
		size_t		 at;		/* its null in out */
		size_t		 off;		/* its attempt in att */
		size_t		 len;		/* 0: none found */
	}			*slots;
	size_t			 nslots;
	size_t			 capslots;
	size_t			 njobs;
	int64_t			 last;
};

static int
api_list_on_job(const struct store_job *j, void *arg)
{
	struct api_page		*p = arg;
	struct api_page_slot	*sl;

	if (p->njobs++ > 0)
		API_TEXT_LIT(&p->out, ",");
	api_job_text(&p->out, p->api, j);
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
	API_TEXT_LIT(&p->out, "null}");
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
		api_attempt_text(&p->att, t);
		p->slots[lo].len = p->att.len - p->slots[lo].off;
	}
	return 0;
}

/* Put each attempt found in place of its job's "current":null. */
static void
api_page_splice(struct api_page *p)
{
	struct api_text	 out;
	size_t		 i, from = 0;

	memset(&out, 0, sizeof out);
	api_text_room(&out, p->out.len + p->att.len);
	for (i = 0; i < p->nslots; i++) {
		if (p->slots[i].len == 0)
			continue;
		api_text_put(&out, p->out.buf + from, p->slots[i].at - from);
		api_text_put(&out, p->att.buf + p->slots[i].off,
		    p->slots[i].len);
		from = p->slots[i].at + sizeof "null" - 1;
	}
	api_text_put(&out, p->out.buf + from, p->out.len - from);
	free(p->out.buf);
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
	char			*cause = NULL;
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
	API_TEXT_LIT(&p.out, "{\"ok\":true,\"jobs\":[");
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
	API_TEXT_LIT(&p.out, "]");
	if (more) {
		API_TEXT_KEY(&p.out, "next");
		api_text_int(&p.out, p.last);
	}
	API_TEXT_KEY(&p.out, "counts");
	for (i = 0; i < JOB_NSTATES; i++) {
		api_text_put(&p.out, i == 0 ? "{" : ",", 1);
		api_text_str(&p.out, job_state_name(i));
		API_TEXT_LIT(&p.out, ":");
		api_text_int(&p.out, counts[i]);
	}
	API_TEXT_LIT(&p.out, "}}");
	api_text_room(&p.out, 1);	/* its newline */
	server_client_reply_take(r->client, p.out.buf, p.out.len, p.out.cap);
	p.out.buf = NULL;
out:
	free(p.out.buf);
	free(p.att.buf);
	free(p.slots);
	return 0;
}

static int
api_show_on_attempt(const struct store_attempt *t, void *arg)
{
	json_t	*list = arg;

	(void)json_array_append_new(list, api_attempt_json(t));
	return 0;
}

static int
api_show_on_event(const struct store_event *e, void *arg)
{
	json_t	*list = arg;
	json_t	*o;

	o = json_pack("{s:I, s:s?, s:s, s:s?}",
	    "time", (json_int_t)e->time,
	    "from", e->from_state < 0 ? NULL : job_state_name(e->from_state),
	    "to", job_state_name(e->to_state),
	    "message", e->message);
	if (o == NULL)
		fatalx("api: cannot build an event");
	(void)json_array_append_new(list, o);
	return 0;
}

/*
 * show: the job with, inside it, "spec", "attempts_list" (oldest first)
 * and "events" (oldest first); "current" is its live attempt.
 */
static int
api_op_show(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct store_job	*j;
	json_t			*job, *spec, *attempts, *events, *last;
	char			*cause = NULL;
	int64_t			 id;
	int			 rc;

	if (api_field_id(r, &id) != 0)
		return 0;
	rc = store_job_get(a->store, id, &j, &cause);
	if (rc == -ENOENT) {
		free(cause);
		server_client_error(r->client, GPUQ_ERR_NOT_FOUND, "id",
		    "no job %" PRId64, id);
		return 0;
	}
	if (rc != 0) {
		api_store_error(r, rc, cause, "cannot read the job");
		return 0;
	}
	spec = j->spec != NULL ? json_loads(j->spec, 0, NULL) : NULL;
	job = api_job_json(a, j, spec);
	attempts = json_array();
	events = json_array();
	rc = store_attempt_list(a->store, id, api_show_on_attempt, attempts,
	    &cause);
	if (rc >= 0)
		rc = store_event_list(a->store, id, api_show_on_event, events,
		    &cause);
	if (rc < 0) {
		api_store_error(r, rc, cause, "cannot read the job's history");
		goto out;
	}
	last = json_array_get(attempts, json_array_size(attempts) - 1);
	if (last != NULL && strcmp(json_string_value(json_object_get(last,
	    "state")), attempt_state_name(ATTEMPT_ENDED)) != 0)
		(void)json_object_set(job, "current", last);
	(void)json_object_set_new(job, "spec", spec != NULL ?
	    json_incref(spec) : json_null());
	(void)json_object_set(job, "attempts_list", attempts);
	(void)json_object_set(job, "events", events);
	api_reply(r, json_pack("{s:b, s:O}", "ok", 1, "job", job));
out:
	json_decref(attempts);
	json_decref(events);
	json_decref(job);
	json_decref(spec);
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
	api_reply(r, json_pack("{s:b, s:s, s:i, s:s}", "ok", 1,
	    "version", PACKAGE_VERSION, "proto", GPUQ_PROTO_VERSION,
	    "install", store_install_id(r->api->store)));
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
	free(a->batch.text.buf);
	free(a->spare.v);
	free(a->spare.text.buf);
	free(a->rows);
	free(a->ids);
	free(a->known_ops);
	free(a->admin_missing);
	free(a);
}

void
api_close(struct api *a)
{
	struct api_cloud	*w;

	while (a->batch.n > 0)
		api_commit(a);
	/* Answers still owed now will not come in time: say so. */
	while ((w = LIST_FIRST(&a->clouds)) != NULL) {
		LIST_REMOVE(w, entry);
		w->orphaned = 1;
		server_client_error(w->client, GPUQ_ERR_BUSY, NULL,
		    "%s: gpuqd is stopping", w->what);
		server_client_settle(w->client);
		w->client = NULL;
	}
	uv_close((uv_handle_t *)&a->check, api_on_close);
	uv_close((uv_handle_t *)&a->idle, api_on_close);
}

/* A cloud op's answer is here (api_cloud_cb): send it, settle. */
static void
api_on_cloud(json_t *reply, char *cause, void *ctx)
{
	struct api_cloud	*w = ctx;

	if (w->orphaned) {
		json_decref(reply);
		json_decref(w->warnings);
		free(cause);
		free(w);
		return;
	}
	LIST_REMOVE(w, entry);
	if (reply == NULL)
		server_client_error(w->client, GPUQ_ERR_UNAVAILABLE, NULL,
		    "%s: %s", w->what, cause != NULL ? cause :
		    "the cloud providers are not running");
	else {
		(void)json_object_set_new(reply, "ok", json_true());
		if (json_array_size(w->warnings) > 0)
			(void)json_object_set(reply, "warnings", w->warnings);
		server_client_reply_json(w->client, reply);
		json_decref(reply);
	}
	free(cause);
	server_client_settle(w->client);
	json_decref(w->warnings);
	free(w);
}

/* Promise R's client the answer of a cloud op; the context for it. */
static struct api_cloud *
api_cloud_start(struct api_req *r)
{
	struct api_cloud	*w;

	w = xcalloc(1, sizeof *w);
	w->client = r->client;
	w->what = r->op->name;
	LIST_INSERT_HEAD(&r->api->clouds, w, entry);
	server_client_defer(r->client);
	return w;
}

/* An optional string field NAME of the request: 0, or -1 after an error
 * reply. */
static int
api_opt_string(struct api_req *r, const char *name, const char **ret)
{
	json_t	*v = json_object_get(r->req, name);

	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be a string", name);
		return -1;
	}
	*ret = json_string_value(v);
	return 0;
}

/* plan: validate the job like submit does, then rank its offers. */
static int
api_op_plan(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct spec_error	 err = { NULL, NULL };
	struct api_cloud	*w;
	json_t			*job, *norm, *warn;
	int			 rc;

	job = json_object_get(r->req, "job");
	if (!json_is_object(job)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "job",
		    "\"job\" must be an object: the job spec");
		return 0;
	}
	rc = spec_validate(job, &norm, &err);
	if (rc == 0 && (rc = api_site_check(a, norm, &warn, &err)) != 0)
		json_decref(norm);
	if (rc != 0) {
		server_client_error(r->client, GPUQ_ERR_INVALID_JOB,
		    err.field != NULL && *err.field != '\0' ? err.field : NULL,
		    "%s", err.message != NULL ? err.message : "invalid job");
		spec_error_done(&err);
		return 0;
	}
	w = api_cloud_start(r);
	w->warnings = warn;
	if (a->hooks.plan != NULL)
		a->hooks.plan(a->hooks.arg, norm, api_on_cloud, w);
	else
		api_on_cloud(NULL, NULL, w);
	json_decref(norm);
	return 0;
}

/* quotas and prices: optional "region" and "gpu", answered by HOOK. */
static int
api_op_cloud_table(struct api_req *r, void (*hook)(void *, const char *,
    const char *, api_cloud_cb, void *))
{
	struct api_cloud	*w;
	const char		*region, *gpu;

	if (api_opt_string(r, "region", &region) != 0 ||
	    api_opt_string(r, "gpu", &gpu) != 0)
		return 0;
	w = api_cloud_start(r);
	if (hook != NULL)
		hook(r->api->hooks.arg, region, gpu, api_on_cloud, w);
	else
		api_on_cloud(NULL, NULL, w);
	return 0;
}

static int
api_op_quotas(struct api_req *r, struct store_job *unused)
{
	return api_op_cloud_table(r, r->api->hooks.quotas);
}

static int
api_op_prices(struct api_req *r, struct store_job *unused)
{
	return api_op_cloud_table(r, r->api->hooks.prices);
}
