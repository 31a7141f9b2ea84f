/*
 * notify.c: job events to webhooks and a command (gpuqd.conf(5)
 * [notify]; doc/DESIGN.md "Notifications").
 *
 * Events come from ONE place: the store tells its watchers of every
 * committed job move (store_watch), and this file turns the moves that
 * matter into events. It never writes the store and never waits: a
 * webhook POST runs on an HTTP client of its own (providers/gcp/http.c
 * on the same loop, so the cloud's counters and budgets stay the
 * cloud's), retried with backoff by that client; a command is spawned
 * with uv_spawn (argv only, no shell) and killed past its time limit.
 * A receiver that is dead or hangs costs a socket and a timer, never a
 * scheduling pass.
 *
 * Must not know the scheduler, the attempts or the providers.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/webhook.h"
#include "common/xmalloc.h"
#include "daemon/conf.h"
#include "daemon/notify.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "store/store.h"

#define NOTIFY_MAX_POSTS	256	/* deliveries in flight at once */
#define NOTIFY_MAX_COMMANDS	16	/* commands running at once */
#define NOTIFY_POST_TIMEOUT_MS	10000	/* per try */
#define NOTIFY_POST_TRIES	5	/* the first included */
#define NOTIFY_MESSAGE_MAX	1000	/* bytes of a message sent */

/* One webhook delivery in flight. */
struct notify_post {
	struct notify	*n;
	int64_t		 job_id;
	char		*event;
	char		*host;		/* scheme://host, for the log only:
					   a webhook's path is its secret */
};

/* One command running. */
struct notify_cmd {
	LIST_ENTRY(notify_cmd) entry;
	struct notify	*n;
	uv_process_t	 proc;		/* proc.data == this */
	uv_timer_t	 timer;		/* the time limit */
	int		 closes;	/* handles still open */
	int		 killed;
	int64_t		 job_id;
	char		*event;
};

struct notify {
	uv_loop_t		*loop;
	struct store		*store;		/* borrowed */
	const struct conf	*conf;		/* borrowed */
	struct http		*http;
	LIST_HEAD(, notify_cmd)	 cmds;
	int			 posts;		/* in flight */
	int			 ncmds;		/* running */
	int			 closing;
	struct notify_stats	 stats;
};

/* ---------------------------------------------------------------- */
/* Events (pure).						    */

const char *
notify_event_name(const struct store_move *m)
{
	switch (m->to) {
	case JOB_FAILED:
		return "failed";
	case JOB_SUCCEEDED:
		return "succeeded";
	case JOB_CANCELLED:
		return "cancelled";
	case JOB_QUEUED:
		if (m->end >= 0 && attempt_end_is_interruption(m->end))
			return "interrupted";
		return NULL;
	default:
		return NULL;
	}
}

/* "2026-11-25T16:45:39Z" of T into BUF. */
static void
notify_time(int64_t t, char *buf, size_t len)
{
	time_t		tt = (time_t)t;
	struct tm	tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)snprintf(buf, len, "%" PRId64, t);
}

json_t *
notify_event_json(const char *event, const struct store_job *j,
    const struct store_move *m, const char *install, int64_t now)
{
	json_t	*ev;
	char	 when[32];
	char	*msg = NULL;

	notify_time(now, when, sizeof when);
	if (j->message != NULL)
		msg = xstrndup(j->message, NOTIFY_MESSAGE_MAX);
	else if (m->message != NULL)
		msg = xstrndup(m->message, NOTIFY_MESSAGE_MAX);
	ev = json_pack("{s:s, s:I, s:s, s:s, s:s, s:I, s:i, s:i, s:i, "
	    "s:o, s:o, s:o, s:f, s:s, s:s}",
	    "event", event,
	    "job_id", (json_int_t)j->id,
	    "name", j->name != NULL ? j->name : "",
	    "state", job_state_name(m->to),
	    "from", job_state_name(m->from),
	    "owner", (json_int_t)j->owner,
	    "attempts", j->attempts,
	    "failures", j->failures,
	    "interruptions", j->interruptions,
	    "exit_code", j->exit_code >= 0 ? json_integer(j->exit_code) :
	    json_null(),
	    "reason", m->end >= 0 ? json_string(attempt_end_name(m->end)) :
	    json_null(),
	    "message", msg != NULL ? json_stringn_nocheck(msg, strlen(msg)) :
	    json_null(),
	    "cost_usd", j->cost_usd,
	    "time", when,
	    "install", install != NULL ? install : "");
	free(msg);
	if (ev == NULL)
		fatalx("notify: cannot build an event");
	return ev;
}

char *
notify_body(const json_t *ev, const char *format)
{
	json_t		*slack;
	const char	*msg, *name;
	char		*text, *body, code[40];

	if (strcmp(format, "slack") != 0) {
		body = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (body == NULL)
			fatalx("notify: cannot serialize an event");
		return body;
	}
	/* Slack's incoming webhooks take {"text": ...} (api.slack.com). */
	name = json_string_value(json_object_get(ev, "name"));
	msg = json_string_value(json_object_get(ev, "message"));
	if (json_is_integer(json_object_get(ev, "exit_code")))
		(void)snprintf(code, sizeof code, " (exit %" JSON_INTEGER_FORMAT
		    ")", json_integer_value(json_object_get(ev,
		    "exit_code")));
	else
		code[0] = '\0';
	text = xprintf("gpuq job %" JSON_INTEGER_FORMAT "%s%s%s %s%s%s%s "
	    "($%.2f)", json_integer_value(json_object_get(ev, "job_id")),
	    name != NULL && *name != '\0' ? " \"" : "",
	    name != NULL ? name : "",
	    name != NULL && *name != '\0' ? "\"" : "",
	    json_string_value(json_object_get(ev, "event")), code,
	    msg != NULL ? ": " : "", msg != NULL ? msg : "",
	    json_real_value(json_object_get(ev, "cost_usd")));
	slack = json_pack("{s:s}", "text", text);
	free(text);
	if (slack == NULL)
		fatalx("notify: cannot build a Slack body");
	body = json_dumps(slack, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(slack);
	if (body == NULL)
		fatalx("notify: cannot serialize a Slack body");
	return body;
}

int
notify_env(const json_t *ev, char **env)
{
	static const struct {
		const char	*var;
		const char	*key;
	} map[] = {
		{ "GPUQ_EVENT", "event" },
		{ "GPUQ_JOB_ID", "job_id" },
		{ "GPUQ_JOB_NAME", "name" },
		{ "GPUQ_JOB_STATE", "state" },
		{ "GPUQ_JOB_OWNER", "owner" },
		{ "GPUQ_ATTEMPTS", "attempts" },
		{ "GPUQ_EXIT_CODE", "exit_code" },
		{ "GPUQ_REASON", "reason" },
		{ "GPUQ_MESSAGE", "message" },
		{ "GPUQ_COST_USD", "cost_usd" },
		{ "GPUQ_TIME", "time" },
		{ "GPUQ_INSTALL", "install" },
	};
	const json_t	*v;
	size_t		 i;
	int		 n = 0;

	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		v = json_object_get(ev, map[i].key);
		if (json_is_string(v))
			env[n++] = xprintf("%s=%s", map[i].var,
			    json_string_value(v));
		else if (json_is_integer(v))
			env[n++] = xprintf("%s=%" JSON_INTEGER_FORMAT,
			    map[i].var, json_integer_value(v));
		else if (json_is_real(v))
			env[n++] = xprintf("%s=%.4f", map[i].var,
			    json_real_value(v));
		else
			env[n++] = xprintf("%s=", map[i].var);
	}
	/* No PATH of ours leaks in; a script still finds the basics. */
	env[n++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	env[n] = NULL;
	return n;
}

/* ---------------------------------------------------------------- */
/* Webhooks.							    */

/* "https://host" of URL, for the log. New string. */
static char *
notify_url_host(const char *url)
{
	const char	*p = strstr(url, "://");
	size_t		 n;

	if (p == NULL)
		return xstrdup("?");
	p += 3;
	n = strcspn(p, "/?#");
	return xstrndup(url, (size_t)(p - url) + n);
}

static void
notify_on_posted(const struct http_resp *r, void *arg)
{
	struct notify_post	*p = arg;
	struct notify		*n = p->n;

	n->posts--;
	if (r->err.kind == GCP_ERR_CANCELLED)
		;			/* stopping: said once by close */
	else if (r->status >= 200 && r->status < 300) {
		n->stats.posts_ok++;
		log_debug("job %" PRId64 ": %s notified to %s", p->job_id,
		    p->event, p->host);
	} else {
		n->stats.posts_failed++;
		if (r->status != 0)
			log_warnx("job %" PRId64 ": %s notification to %s "
			    "refused with HTTP %ld after %d tr%s; dropped",
			    p->job_id, p->event, p->host, r->status,
			    r->attempts, r->attempts == 1 ? "y" : "ies");
		else
			log_warnx("job %" PRId64 ": %s notification to %s "
			    "failed after %d tr%s (%s); dropped", p->job_id,
			    p->event, p->host, r->attempts,
			    r->attempts == 1 ? "y" : "ies",
			    r->curl_message != NULL && *r->curl_message ?
			    r->curl_message : "no answer");
	}
	free(p->event);
	free(p->host);
	free(p);
}

/* POST BODY to URL for EVENT of job JOB_ID. */
static void
notify_post(struct notify *n, const char *url, const char *body,
    int64_t job_id, const char *event)
{
	struct http_req		 req;
	struct notify_post	*p;
	int			 rc;

	if (n->posts >= NOTIFY_MAX_POSTS) {
		n->stats.dropped++;
		log_warnx("job %" PRId64 ": %s notification dropped: %d "
		    "deliveries are still under way", job_id, event,
		    n->posts);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->n = n;
	p->job_id = job_id;
	p->event = xstrdup(event);
	p->host = notify_url_host(url);
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.body = body;
	req.body_len = strlen(body);
	req.content_type = "application/json";
	/* Receivers take a repeat; losing an event is worse (RFC 9110
	 * 9.2.2 leaves POST's safety to the receiver). */
	req.flags = HTTP_IDEMPOTENT;
	req.api = GCP_API_METADATA;	/* a bucket of this client's own */
	req.timeout_ms = NOTIFY_POST_TIMEOUT_MS;
	req.max_attempts = NOTIFY_POST_TRIES;
	if ((rc = http_request_start(n->http, &req, notify_on_posted,
	    p)) != 0) {
		log_warnx("job %" PRId64 ": %s notification to %s not sent: "
		    "%s", job_id, event, p->host, strerror(-rc));
		free(p->event);
		free(p->host);
		free(p);
		return;
	}
	n->posts++;
	n->stats.posts++;
}

/* ---------------------------------------------------------------- */
/* The command.							    */

static void
notify_cmd_on_close(uv_handle_t *h)
{
	struct notify_cmd	*c = h->data;

	if (--c->closes > 0)
		return;
	free(c->event);
	free(c);
}

static void
notify_cmd_end(struct notify_cmd *c)
{
	LIST_REMOVE(c, entry);
	c->n->ncmds--;
	uv_timer_stop(&c->timer);
	uv_close((uv_handle_t *)&c->timer, notify_cmd_on_close);
	uv_close((uv_handle_t *)&c->proc, notify_cmd_on_close);
}

static void
notify_cmd_on_exit(uv_process_t *proc, int64_t status, int sig)
{
	struct notify_cmd	*c = proc->data;
	struct notify		*n = c->n;

	if (c->killed) {
		n->stats.commands_failed++;
		log_warnx("job %" PRId64 ": %s command %s killed after %llds",
		    c->job_id, c->event, n->conf->notify_command,
		    (long long)n->conf->notify_command_timeout);
	} else if (status != 0 || sig != 0) {
		n->stats.commands_failed++;
		if (sig != 0)
			log_warnx("job %" PRId64 ": %s command %s died of "
			    "signal %d", c->job_id, c->event,
			    n->conf->notify_command, sig);
		else
			log_warnx("job %" PRId64 ": %s command %s exited "
			    "%lld", c->job_id, c->event,
			    n->conf->notify_command, (long long)status);
	} else
		log_debug("job %" PRId64 ": %s command done", c->job_id,
		    c->event);
	notify_cmd_end(c);
}

static void
notify_cmd_on_timeout(uv_timer_t *t)
{
	struct notify_cmd	*c = t->data;

	c->killed = 1;
	(void)uv_process_kill(&c->proc, SIGKILL);
}

/* Run [notify] command for EV of job JOB_ID. */
static void
notify_run(struct notify *n, const json_t *ev, int64_t job_id,
    const char *event)
{
	uv_process_options_t	 o;
	uv_stdio_container_t	 stdio[3];
	struct notify_cmd	*c;
	char			*env[NOTIFY_ENV_MAX + 1];
	char			*args[2];
	int			 i, nenv, rc;

	if (n->ncmds >= NOTIFY_MAX_COMMANDS) {
		n->stats.dropped++;
		log_warnx("job %" PRId64 ": %s command not run: %d still "
		    "running", job_id, event, n->ncmds);
		return;
	}
	nenv = notify_env(ev, env);
	args[0] = n->conf->notify_command;
	args[1] = NULL;
	memset(&o, 0, sizeof o);
	memset(stdio, 0, sizeof stdio);
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_INHERIT_FD;	/* its words join our log */
	stdio[1].data.fd = 2;
	stdio[2].flags = UV_INHERIT_FD;
	stdio[2].data.fd = 2;
	o.file = n->conf->notify_command;
	o.args = args;
	o.env = env;
	o.cwd = "/";
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = notify_cmd_on_exit;

	c = xcalloc(1, sizeof *c);
	c->n = n;
	c->job_id = job_id;
	c->event = xstrdup(event);
	c->proc.data = c;
	rc = uv_spawn(n->loop, &c->proc, &o);
	for (i = 0; i < nenv; i++)
		free(env[i]);
	n->stats.commands++;
	if (rc != 0) {
		n->stats.commands_failed++;
		log_warnx("job %" PRId64 ": %s command %s cannot run: %s",
		    job_id, event, n->conf->notify_command, uv_strerror(rc));
		/* libuv wants the handle closed even after a failed spawn. */
		c->closes = 1;
		uv_close((uv_handle_t *)&c->proc, notify_cmd_on_close);
		return;
	}
	(void)uv_timer_init(n->loop, &c->timer);
	c->timer.data = c;
	c->closes = 2;
	(void)uv_timer_start(&c->timer, notify_cmd_on_timeout,
	    (uint64_t)n->conf->notify_command_timeout * 1000, 0);
	LIST_INSERT_HEAD(&n->cmds, c, entry);
	n->ncmds++;
}

/* ---------------------------------------------------------------- */
/* The watcher.							    */

/* Is EVENT in the list LIST? */
static int
notify_listed(const struct conf_list *list, const char *event)
{
	size_t	i;

	for (i = 0; i < list->n; i++)
		if (strcmp(list->v[i], event) == 0)
			return 1;
	return 0;
}

/* The job's own notify.webhook for EVENT (its notify.on, else the
 * daemon's list), or NULL. Borrowed from SPEC. */
static const char *
notify_job_webhook(struct notify *n, json_t *spec, const char *event)
{
	json_t		*o, *on, *v;
	const char	*url;
	size_t		 i;

	o = json_object_get(spec, "notify");
	url = json_string_value(json_object_get(o, "webhook"));
	if (url == NULL || *url == '\0')
		return NULL;
	on = json_object_get(o, "on");
	if (!json_is_array(on))
		return notify_listed(&n->conf->notify_on, event) ? url : NULL;
	json_array_foreach(on, i, v)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), event) == 0)
			return url;
	return NULL;
}

void
notify_on_move(const struct store_move *m, void *arg)
{
	struct notify		*n = arg;
	const struct conf	*c = n->conf;
	struct store_job	*j = NULL;
	const char		*event, *own;
	json_t			*ev, *spec;
	char			*cause = NULL, *body;
	int			 daemon;

	if (n->closing || (event = notify_event_name(m)) == NULL)
		return;
	daemon = notify_listed(&c->notify_on, event) &&
	    (*c->notify_webhook != '\0' || *c->notify_command != '\0');
	/* The spec is read only when the job may have a webhook. */
	if (store_job_get(n->store, m->job_id, &j, &cause) != 0) {
		log_warnx("job %" PRId64 ": %s not notified: %s", m->job_id,
		    event, cause);
		free(cause);
		return;
	}
	spec = j->spec != NULL ? json_loads(j->spec, 0, NULL) : NULL;
	own = notify_job_webhook(n, spec, event);
	if (!daemon && own == NULL)
		goto out;
	n->stats.events++;
	ev = notify_event_json(event, j, m, store_install_id(n->store),
	    clock_now());
	if (daemon && *c->notify_webhook != '\0') {
		body = notify_body(ev, c->notify_webhook_format);
		notify_post(n, c->notify_webhook, body, j->id, event);
		free(body);
	}
	if (own != NULL) {
		/* The job's own receiver: spec.c checked the URL. */
		body = notify_body(ev, strncasecmp(own,
		    "https://hooks.slack.com/", 24) == 0 ? "slack" : "json");
		notify_post(n, own, body, j->id, event);
		free(body);
	}
	if (daemon && *c->notify_command != '\0')
		notify_run(n, ev, j->id, event);
	json_decref(ev);
out:
	json_decref(spec);
	store_job_free(j);
}

/* ---------------------------------------------------------------- */

int
notify_new(uv_loop_t *loop, struct store *store, const struct conf *conf,
    struct notify **ret, char **cause)
{
	struct gcp_conf	 gc;
	struct notify	*n;
	int		 rc;

	if (*conf->notify_command != '\0' &&
	    access(conf->notify_command, X_OK) == -1) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("[notify] command %s: %s; give the "
			    "full path of an executable program",
			    conf->notify_command, strerror(-rc));
		return rc;
	}
	n = xcalloc(1, sizeof *n);
	n->loop = loop;
	n->store = store;
	n->conf = conf;
	LIST_INIT(&n->cmds);
	memset(&gc, 0, sizeof gc);
	gc.request_timeout_ms = NOTIFY_POST_TIMEOUT_MS;
	gc.retry_max_attempts = NOTIFY_POST_TRIES;
	gc.request_budget = -1;		/* no per-minute budget */
	if ((rc = http_new(loop, &gc, &n->http)) != 0) {
		free(n);
		if (cause != NULL)
			*cause = xprintf("[notify]: cannot start an HTTP "
			    "client: %s", strerror(-rc));
		return rc;
	}
	if (*conf->notify_webhook != '\0' || *conf->notify_command != '\0')
		log_info("notify: %s%s%s%s on %zu event kind(s)",
		    *conf->notify_webhook != '\0' ? "webhook " : "",
		    *conf->notify_webhook != '\0' ?
		    conf->notify_webhook_format : "",
		    *conf->notify_webhook != '\0' &&
		    *conf->notify_command != '\0' ? " and " : "",
		    *conf->notify_command != '\0' ? "command" : "",
		    conf->notify_on.n);
	*ret = n;
	return 0;
}

void
notify_close(struct notify *n)
{
	struct notify_cmd	*c;

	if (n == NULL || n->closing)
		return;
	n->closing = 1;
	if (n->posts > 0)
		log_info("notify: %d notification(s) still under way are "
		    "dropped", n->posts);
	http_free(n->http);
	n->http = NULL;
	/* Commands run out on their own; we stop watching them. */
	while ((c = LIST_FIRST(&n->cmds)) != NULL) {
		LIST_REMOVE(c, entry);
		n->ncmds--;
		uv_timer_stop(&c->timer);
		uv_close((uv_handle_t *)&c->timer, notify_cmd_on_close);
		uv_close((uv_handle_t *)&c->proc, notify_cmd_on_close);
	}
}

void
notify_free(struct notify *n)
{
	free(n);
}

void
notify_get_stats(struct notify *n, struct notify_stats *ret)
{
	*ret = n->stats;
}
