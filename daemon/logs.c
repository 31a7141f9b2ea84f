/*
 * logs.c: the follow set and its one combined Cloud Logging query per
 * interval (doc/DESIGN.md "Logs"; DESIGN GJ).
 *
 * A round: build one filter naming every followed job's attempts, each
 * job bounded below by the newest line it holds less LOGS_OVERLAP (late
 * entries, DESIGN GJ.3), read every page with "timestamp asc", and file
 * each entry under its attempt unless its (timestamp, insertId) is
 * already held. The lower bounds move to the newest entry read, even
 * when a round breaks off (pages come oldest first over the whole
 * filter, so everything older is in hand), and the overlap is re-read
 * and de-duplicated, so no line is dropped or repeated.
 *
 * Pace: a round starts at most once per [gcp] logs_interval, whatever
 * the number of jobs and clients; its pages go back to back. A 429
 * (RESOURCE_EXHAUSTED) doubles the wait up to LOGS_BACKOFF_MAX, or
 * takes Retry-After when longer; the first complete round resets it.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/logs.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/logging.h"
#include "providers/provider.h"

#define LOGS_OVERLAP		60		/* s re-read below the newest */
#define LOGS_FORGET_MS		(120 * 1000)	/* unasked this long: dropped */
#define LOGS_BACKOFF_MAX_MS	(300 * 1000)
#define LOGS_MAX_LINES		100000		/* per job; oldest half go */
#define LOGS_REPLY_LINES	1000		/* per reply */
#define LOGS_REPLY_BYTES	(256 * 1024)
#define LOGS_END_ROUNDS		2		/* complete rounds after the
						   end before "end" */

struct logs_line {
	int64_t		 sec;
	long		 nsec;
	int		 attempt;
	int		 node;
	char		*text;
};

struct logs_att {
	int		 number;
	char		*key;		/* logging_attempt_key() */
	char		*clause;	/* logging_clause() */
};

struct logs_job {
	TAILQ_ENTRY(logs_job) entry;
	int64_t		 id;
	struct logs_att	*att;
	size_t		 natt;
	int64_t		 lo_sec;	/* newest line held (or the submit) */
	long		 lo_nsec;
	json_t		*seen;		/* set of "sec.nsec|insertId" */
	struct logs_line *lines;
	size_t		 nlines;
	size_t		 cap;
	int64_t		 base;		/* cursor of lines[0] */
	int		 maxnode;
	uint64_t	 asked;		/* uv_now() of the last ask */
	uint64_t	 first_round;	/* caught up once this one is done */
	uint64_t	 end_round;	/* 0: not ended */
	int		 in_round;
};

struct logs {
	uv_loop_t	*loop;
	struct cloud	*cloud;		/* borrowed */
	uv_timer_t	 timer;		/* timer.data == this */
	TAILQ_HEAD(, logs_job) jobs;
	uint64_t	 round;		/* rounds begun */
	uint64_t	 done;		/* newest round complete */
	int		 busy;		/* a page is in flight */
	int		 closing;
	uint64_t	 last_start;	/* uv_now() of the last round */
	uint64_t	 backoff_ms;	/* 0: none */
	json_t		*body;		/* the running round's request */
	int64_t		 max_sec;	/* newest entry of the running round */
	long		 max_nsec;
	struct logs_stats stats;
};

static void	logs_schedule(struct logs *);
static void	logs_on_timer(uv_timer_t *);
static void	logs_page(struct logs *, const char *token);

static void
logs_job_free(struct logs_job *j)
{
	size_t	 i;

	for (i = 0; i < j->natt; i++) {
		free(j->att[i].key);
		free(j->att[i].clause);
	}
	free(j->att);
	for (i = 0; i < j->nlines; i++)
		free(j->lines[i].text);
	free(j->lines);
	json_decref(j->seen);
	free(j);
}

static struct logs_job *
logs_job_find(struct logs *l, int64_t id)
{
	struct logs_job	*j;

	TAILQ_FOREACH(j, &l->jobs, entry) {
		if (j->id == id)
			return j;
	}
	return NULL;
}

static uint64_t
logs_interval_ms(struct logs *l)
{
	int64_t	 s = cloud_conf(l->cloud)->logs_interval;

	return (uint64_t)(s > 0 ? s : 10) * 1000;
}

struct logs *
logs_new(uv_loop_t *loop, struct cloud *cloud)
{
	struct logs	*l;

	l = xcalloc(1, sizeof *l);
	l->loop = loop;
	l->cloud = cloud;
	TAILQ_INIT(&l->jobs);
	if (uv_timer_init(loop, &l->timer) != 0)
		fatalx("logs: cannot make a timer");
	l->timer.data = l;
	/*
	 * Half the project's 60 reads a minute at most, pages included:
	 * the rest is left to the people and tools of the same project
	 * (DESIGN GJ.4). Requests over it wait their turn.
	 */
	http_set_budget(gcp_http(cloud_gcp(cloud)), GCP_API_LOGGING, 30,
	    60000);
	return l;
}

static void
logs_on_close(uv_handle_t *h)
{
	struct logs	*l = h->data;
	struct logs_job	*j;

	while ((j = TAILQ_FIRST(&l->jobs)) != NULL) {
		TAILQ_REMOVE(&l->jobs, j, entry);
		logs_job_free(j);
	}
	json_decref(l->body);
	free(l);
}

void
logs_close(struct logs *l)
{
	if (l == NULL)
		return;
	l->closing = 1;
	uv_timer_stop(&l->timer);
	uv_close((uv_handle_t *)&l->timer, logs_on_close);
}

void
logs_get_stats(struct logs *l, struct logs_stats *ret)
{
	*ret = l->stats;
}

void
logs_follow(struct logs *l, int64_t id, int64_t created, int ended,
    const struct logs_attempt *att, size_t n)
{
	const struct provider	*p;
	const char		*install = cloud_install(l->cloud);
	const char		*project = cloud_conf(l->cloud)->project;
	struct logs_job		*j;
	struct logs_att		*a;
	size_t			 i;
	int			 isnew = 0;

	if ((j = logs_job_find(l, id)) == NULL) {
		j = xcalloc(1, sizeof *j);
		j->id = id;
		j->lo_sec = created;
		if ((j->seen = json_object()) == NULL)
			fatalx("logs: out of memory");
		j->first_round = l->round + 1;
		TAILQ_INSERT_TAIL(&l->jobs, j, entry);
		isnew = 1;
	}
	j->asked = uv_now(l->loop);
	for (i = 0; i < j->natt; i++) {
		free(j->att[i].key);
		free(j->att[i].clause);
	}
	free(j->att);
	j->att = xcalloc(n > 0 ? n : 1, sizeof *j->att);
	j->natt = 0;
	for (i = 0; i < n; i++) {
		/* The service that ran it is the one whose prices it
		 * paid: gce, batch or vertex (provider.h). */
		if ((p = prov_lookup(att[i].provider)) == NULL)
			continue;
		a = &j->att[j->natt];
		a->number = att[i].number;
		a->key = logging_attempt_key(p->price_service, install, id,
		    att[i].number, att[i].cloud_id);
		a->clause = logging_clause(project, p->price_service,
		    install, id, att[i].number, att[i].cloud_id);
		if (a->key == NULL || a->clause == NULL) {
			free(a->key);
			free(a->clause);
			continue;
		}
		j->natt++;
	}
	/* Lines may reach Cloud Logging a little after the end: wait for
	 * rounds begun after it. */
	if (ended && j->end_round == 0)
		j->end_round = l->round + LOGS_END_ROUNDS;
	if (isnew)
		logs_schedule(l);
}

/* Arm the timer for the next round: an interval (or the backoff)
 * after the last one began, and never while one runs. */
static void
logs_schedule(struct logs *l)
{
	uint64_t	 now = uv_now(l->loop), wait, due;

	if (l->closing || l->busy || TAILQ_EMPTY(&l->jobs))
		return;
	wait = l->backoff_ms > 0 ? l->backoff_ms : logs_interval_ms(l);
	due = l->last_start == 0 ? now : l->last_start + wait;
	(void)uv_timer_start(&l->timer, logs_on_timer, due > now ?
	    due - now : 0, 0);
}

static void
logs_round_end(struct logs *l, int complete)
{
	TAILQ_HEAD(, logs_job)	 served;
	struct logs_job		*j, *next;

	l->busy = 0;
	json_decref(l->body);
	l->body = NULL;
	/* Jobs served this round go to the back, so a follow set too big
	 * for one filter is read in turns. */
	TAILQ_INIT(&served);
	for (j = TAILQ_FIRST(&l->jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (!j->in_round)
			continue;
		TAILQ_REMOVE(&l->jobs, j, entry);
		TAILQ_INSERT_TAIL(&served, j, entry);
	}
	TAILQ_CONCAT(&l->jobs, &served, entry);
	/*
	 * The pages come oldest first across the whole combined filter,
	 * so every entry of every job in the round older than the newest
	 * one read is in hand, even when the round broke off (a 429 in
	 * mid-round): the next round starts there, and a quota too small
	 * for a whole round still makes progress.
	 */
	TAILQ_FOREACH(j, &l->jobs, entry) {
		if (!j->in_round)
			continue;
		j->in_round = 0;
		if (l->max_sec > j->lo_sec || (l->max_sec == j->lo_sec &&
		    l->max_nsec > j->lo_nsec)) {
			j->lo_sec = l->max_sec;
			j->lo_nsec = l->max_nsec;
		}
	}
	if (complete) {
		l->done = l->round;
		l->backoff_ms = 0;
	}
	logs_schedule(l);
}

/* Append a line to J, letting the oldest half go when it is full. */
static void
logs_job_add(struct logs_job *j, const struct logs_line *ln)
{
	size_t	 k, i;

	if (j->nlines == LOGS_MAX_LINES) {
		k = j->nlines / 2;
		for (i = 0; i < k; i++)
			free(j->lines[i].text);
		memmove(j->lines, j->lines + k,
		    (j->nlines - k) * sizeof *j->lines);
		j->nlines -= k;
		j->base += (int64_t)k;
	}
	if (j->nlines == j->cap) {
		j->cap = j->cap == 0 ? 64 : j->cap * 2;
		j->lines = xreallocarray(j->lines, j->cap, sizeof *j->lines);
	}
	j->lines[j->nlines++] = *ln;
	if (ln->node > j->maxnode)
		j->maxnode = ln->node;
}

/* File ENTRY under the followed attempt it belongs to, once. */
static void
logs_entry(struct logs *l, json_t *entry)
{
	struct logging_entry	 le;
	struct logs_job		*j;
	struct logs_line	 ln;
	size_t			 i, n;
	char			*key, *dup;
	int			 attempt = 0;

	l->stats.entries++;
	if (logging_entry_parse(entry, &le) != 0)
		return;
	if (le.sec > l->max_sec || (le.sec == l->max_sec &&
	    le.nsec > l->max_nsec)) {
		l->max_sec = le.sec;
		l->max_nsec = le.nsec;
	}
	if ((key = logging_entry_key(entry)) == NULL)
		return;
	TAILQ_FOREACH(j, &l->jobs, entry) {
		if (!j->in_round)
			continue;
		for (i = 0; i < j->natt; i++) {
			if (strcmp(j->att[i].key, key) == 0) {
				attempt = j->att[i].number;
				break;
			}
		}
		if (attempt != 0)
			break;
	}
	free(key);
	if (j == NULL)
		return;
	dup = xprintf("%" PRId64 ".%09ld|%s", le.sec, le.nsec, le.insert_id);
	if (json_object_get(j->seen, dup) != NULL) {
		l->stats.duplicates++;
		free(dup);
		return;
	}
	if (json_object_set_new(j->seen, dup, json_true()) != 0)
		fatalx("logs: out of memory");
	free(dup);
	memset(&ln, 0, sizeof ln);
	ln.sec = le.sec;
	ln.nsec = le.nsec;
	ln.attempt = attempt;
	ln.node = le.node;
	if (le.text != NULL)
		ln.text = xstrdup(le.text);
	else if (le.json != NULL &&
	    (ln.text = json_dumps(le.json, JSON_COMPACT)) != NULL)
		;
	else
		ln.text = xstrdup("");
	/* One line per entry: the writer's own newline is not ours. */
	n = strlen(ln.text);
	if (n > 0 && ln.text[n - 1] == '\n')
		ln.text[n - 1] = '\0';
	logs_job_add(j, &ln);
}

static void
logs_on_page(const struct http_resp *r, void *arg)
{
	struct logs	*l = arg;
	json_t		*entries, *e;
	const char	*tok;
	char		*text;
	size_t		 i;
	uint64_t	 wait;

	if (r->err.kind == GCP_ERR_CANCELLED) {
		/* The cloud side is stopping (cloud_free): read no more. */
		l->closing = 1;
		logs_round_end(l, 0);
		return;
	}
	if (r->err.kind != GCP_ERR_NONE) {
		text = gcp_error_text(&r->err);
		if (r->status == 429 || r->err.kind == GCP_ERR_RATE_LIMIT) {
			l->stats.rate_limited++;
			wait = l->backoff_ms > 0 ? l->backoff_ms * 2 :
			    logs_interval_ms(l) * 2;
			if (r->err.retry_after > 0 &&
			    (uint64_t)r->err.retry_after * 1000 > wait)
				wait = (uint64_t)r->err.retry_after * 1000;
			if (wait > LOGS_BACKOFF_MAX_MS)
				wait = LOGS_BACKOFF_MAX_MS;
			l->backoff_ms = wait;
			log_info("logs: Cloud Logging is rate limiting reads "
			    "(%s); next read in %llu s", text,
			    (unsigned long long)(wait / 1000));
		} else
			log_warnx("logs: cannot read Cloud Logging: %s; "
			    "trying again in %llu s", text,
			    (unsigned long long)(logs_interval_ms(l) / 1000));
		free(text);
		logs_round_end(l, 0);
		return;
	}
	entries = json_object_get(r->json, "entries");
	json_array_foreach(entries, i, e)
		logs_entry(l, e);
	tok = json_string_value(json_object_get(r->json, "nextPageToken"));
	if (tok != NULL && *tok != '\0') {
		/* An empty page with a token means the search ran out of
		 * time, not of data: go on (DESIGN GJ.1). */
		logs_page(l, tok);
		return;
	}
	logs_round_end(l, 1);
}

static void
logs_page(struct logs *l, const char *token)
{
	struct gcp	*g = cloud_gcp(l->cloud);
	json_t		*body;
	int		 rc;

	body = json_deep_copy(l->body);
	if (body == NULL)
		fatalx("logs: out of memory");
	if (token != NULL && json_object_set_new(body, "pageToken",
	    json_string(token)) != 0)
		fatalx("logs: out of memory");
	l->stats.calls++;
	rc = logging_list(gcp_http(g), gcp_conf(g), body, logs_on_page, l);
	json_decref(body);
	if (rc < 0) {
		log_warnx("logs: cannot start a Cloud Logging read: %s",
		    strerror(-rc));
		logs_round_end(l, 0);
	}
}

/* The filter of one round: every followed job that has something to
 * read, each from its own lower bound, as long as it fits. New string,
 * or NULL when no job has anything to read. */
static char *
logs_filter(struct logs *l)
{
	struct logs_job	*j;
	char		 ts[64], *part, *out, *buf = NULL;
	size_t		 i, len = 0, plen;

	TAILQ_FOREACH(j, &l->jobs, entry) {
		if (j->natt == 0)
			continue;
		logging_time_format(j->lo_sec - LOGS_OVERLAP, j->lo_nsec, ts,
		    sizeof ts);
		part = xprintf("%s(timestamp>=\"%s\" AND (", len > 0 ?
		    " OR " : "", ts);
		for (i = 0; i < j->natt; i++) {
			out = xprintf("%s%s%s", part, i > 0 ? " OR " : "",
			    j->att[i].clause);
			free(part);
			part = out;
		}
		out = xprintf("%s))", part);
		free(part);
		plen = strlen(out);
		if (len + plen >= LOGGING_FILTER_MAX) {
			/* The rest waits for the next round. */
			free(out);
			break;
		}
		buf = xrealloc(buf, len + plen + 1);
		memcpy(buf + len, out, plen + 1);
		free(out);
		len += plen;
		j->in_round = 1;
	}
	return buf;
}

static void
logs_round_start(struct logs *l)
{
	struct logs_job	*j, *next;
	uint64_t	 now = uv_now(l->loop);
	char		*filter;

	for (j = TAILQ_FIRST(&l->jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (now - j->asked > LOGS_FORGET_MS) {
			TAILQ_REMOVE(&l->jobs, j, entry);
			logs_job_free(j);
		}
	}
	if (TAILQ_EMPTY(&l->jobs))
		return;
	l->round++;
	l->last_start = now;
	l->stats.rounds++;
	filter = logs_filter(l);
	if (filter == NULL) {
		/* Nothing the cloud could hold yet: done at once. */
		l->done = l->round;
		logs_schedule(l);
		return;
	}
	l->busy = 1;
	l->max_sec = 0;
	l->max_nsec = 0;
	l->body = logging_request_body(cloud_conf(l->cloud)->project, filter,
	    http_page_size(gcp_http(cloud_gcp(l->cloud)), LOGGING_PAGE_MAX),
	    NULL);
	free(filter);
	logs_page(l, NULL);
}

static void
logs_on_timer(uv_timer_t *t)
{
	logs_round_start(t->data);
}

static int
logs_line_wanted(const struct logs_line *ln, const struct logs_query *q)
{
	if (q->attempt > 0 && ln->attempt != q->attempt)
		return 0;
	if (q->node >= 0 && ln->node != q->node)
		return 0;
	if (q->since > 0 && ln->sec < q->since)
		return 0;
	return 1;
}

void
logs_read(struct logs *l, int64_t id, const struct logs_query *q,
    struct jsonw *w)
{
	struct logs_job		*j = logs_job_find(l, id);
	const struct logs_line	*ln;
	char			 ts[64];
	int64_t			 cursor = q->cursor, end, dropped = 0;
	size_t			 i, n = 0, start = w->len;
	int			 caught_up, more = 0;
	int64_t			 k;

	if (j == NULL) {
		JSONW_KEY(w, "lines");
		jsonw_array_begin(w);
		jsonw_array_end(w);
		JSONW_KEY(w, "cursor");
		jsonw_int(w, cursor);
		JSONW_KEY(w, "caught_up");
		jsonw_bool(w, 0);
		return;
	}
	caught_up = l->done >= j->first_round;
	end = j->base + (int64_t)j->nlines;
	if (cursor < j->base) {
		dropped = j->base - cursor;
		cursor = j->base;
	}
	if (cursor > end)
		cursor = end;
	/* --tail: the last TAIL wanted lines, once all are here. */
	if (q->tail > 0 && q->cursor == 0 && caught_up) {
		k = 0;
		for (i = j->nlines; i > 0; i--) {
			if (logs_line_wanted(&j->lines[i - 1], q) &&
			    ++k > q->tail)
				break;
		}
		cursor = j->base + (int64_t)i;
		dropped = 0;
	} else if (q->tail > 0 && q->cursor == 0)
		end = cursor;		/* nothing until caught up */
	JSONW_KEY(w, "lines");
	jsonw_array_begin(w);
	for (; cursor < end; cursor++) {
		if (n >= LOGS_REPLY_LINES || w->len - start >
		    LOGS_REPLY_BYTES) {
			more = 1;
			break;
		}
		ln = &j->lines[cursor - j->base];
		if (!logs_line_wanted(ln, q))
			continue;
		logging_time_format(ln->sec, ln->nsec, ts, sizeof ts);
		jsonw_object_begin(w);
		JSONW_KEY(w, "time");
		jsonw_string(w, ts);
		JSONW_KEY(w, "attempt");
		jsonw_int(w, ln->attempt);
		JSONW_KEY(w, "node");
		jsonw_int(w, ln->node);
		JSONW_KEY(w, "text");
		jsonw_string(w, ln->text);
		jsonw_object_end(w);
		n++;
	}
	jsonw_array_end(w);
	JSONW_KEY(w, "cursor");
	jsonw_int(w, cursor);
	JSONW_KEY(w, "more");
	jsonw_bool(w, more);
	JSONW_KEY(w, "caught_up");
	jsonw_bool(w, caught_up);
	JSONW_KEY(w, "end");
	jsonw_bool(w, j->end_round != 0 && l->done >= j->end_round &&
	    !more && cursor == j->base + (int64_t)j->nlines);
	JSONW_KEY(w, "nodes");
	jsonw_int(w, j->maxnode + 1);
	if (dropped > 0) {
		JSONW_KEY(w, "dropped");
		jsonw_int(w, dropped);
	}
}
