/*
 * api-history.c: the history op, gpuq history (doc/DESIGN.md
 * "Accounting").
 *
 * {"op":"history", "since", "until" (unix seconds), "owner" (uid),
 * "state" ("succeeded,failed"), "name", "limit", "after" (the cursor
 * a page gave as "next"), "by"} answers the ended jobs that ended in
 * [since, until), oldest first, each with its attempts: where each ran,
 * the seconds it is billed (the cloud's own start and end, else what
 * gpuqd watched: cost_billed_sec), GPU-hours, cost, the Vertex AI
 * on-demand baseline and the saving. With "by" (user, gpu, service,
 * day) it walks the whole window and answers totals per group instead
 * of jobs: a service's group holds the attempts run there.
 *
 * One store walk (store_acct_list) over the partial index of ended jobs
 * by end time; every reply is written as text through jsonw.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/jsonw.h"
#include "common/when.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/cost.h"
#include "daemon/server.h"
#include "store/store.h"

#define API_HISTORY_ENDED	(JOB_MASK(JOB_SUCCEEDED) | \
	JOB_MASK(JOB_FAILED) | JOB_MASK(JOB_CANCELLED))

enum api_by {
	API_BY_NONE = 0,
	API_BY_USER,
	API_BY_GPU,
	API_BY_SERVICE,
	API_BY_DAY,
};
static const char *const api_by_names[] = {
	NULL, "user", "gpu", "service", "day"
};

/* What a job, a group or the whole window adds up to. */
struct api_sum {
	int64_t		 jobs;
	int64_t		 attempts;
	int64_t		 interruptions;
	int64_t		 seconds;	/* billed, all attempts */
	double		 gpu_hours;
	double		 cost;
	double		 baseline;
};

struct api_group {
	char		*key;
	int64_t		 last_job;	/* counted already */
	struct api_sum	 sum;
};

struct api_hist {
	struct jsonw	*w;
	int		 by;
	/* Paged jobs. */
	int64_t		 open;		/* job being written, or 0 */
	int64_t		 last_time;	/* the cursor: last job's */
	int64_t		 last_id;
	struct api_sum	 job;
	/* Totals. */
	struct api_group *groups;
	size_t		 ngroups, capgroups;
	struct api_sum	 total;
	int64_t		 total_last;
};

static void
api_sum_write(struct jsonw *w, const struct api_sum *s)
{
	JSONW_KEY(w, "gpu_hours");
	jsonw_double(w, s->gpu_hours);
	JSONW_KEY(w, "cost_usd");
	jsonw_double(w, s->cost);
	JSONW_KEY(w, "baseline_usd");
	jsonw_double(w, s->baseline);
	JSONW_KEY(w, "saved_usd");
	jsonw_double(w, s->baseline - s->cost);
}

/* An attempt's billed seconds, GPU-hours, cost and baseline into S. */
static int64_t
api_hist_add(struct api_sum *s, const struct store_acct_row *r)
{
	int64_t	sec;

	sec = cost_billed_sec(r->billed_start, r->billed_end, r->started,
	    r->a_ended);
	s->attempts++;
	s->seconds += sec;
	s->gpu_hours += (double)sec * r->a_gpu_count / 3600.0;
	s->cost += r->cost_usd;
	s->baseline += r->baseline_usd;
	return sec;
}

static void
api_hist_close_job(struct api_hist *h)
{
	if (h->open == 0)
		return;
	jsonw_array_end(h->w);
	api_sum_write(h->w, &h->job);
	jsonw_object_end(h->w);
	h->open = 0;
}

/*
 * A job with a deadline: the time and, when it ended after it without
 * being cancelled, by how much it missed (doc/DESIGN.md "Deadlines").
 */
static void
api_hist_deadline(struct jsonw *w, const struct store_acct_row *r)
{
	char	t[WHEN_TEXT_MAX];

	JSONW_KEY(w, "deadline");
	jsonw_string(w, when_format(r->deadline, t, sizeof t));
	if ((r->state == JOB_SUCCEEDED || r->state == JOB_FAILED) &&
	    r->ended > r->deadline) {
		JSONW_KEY(w, "missed_by");
		jsonw_int(w, r->ended - r->deadline);
	}
}

static int
api_hist_on_row(const struct store_acct_row *r, void *arg)
{
	struct api_hist	*h = arg;
	struct jsonw	*w = h->w;
	int64_t		 sec;

	if (r->job_id != h->open) {
		api_hist_close_job(h);
		memset(&h->job, 0, sizeof h->job);
		h->open = r->job_id;
		h->last_time = r->ended;
		h->last_id = r->job_id;
		jsonw_object_begin(w);
		JSONW_KEY(w, "id");
		jsonw_int(w, r->job_id);
		JSONW_KEY(w, "name");
		jsonw_string(w, r->name);
		JSONW_KEY(w, "owner");
		jsonw_int(w, (int64_t)r->owner);
		JSONW_KEY(w, "state");
		jsonw_string(w, job_state_name(r->state));
		JSONW_KEY(w, "gpu");
		jsonw_string(w, r->gpu_type);
		JSONW_KEY(w, "gpu_count");
		jsonw_int(w, r->gpu_count);
		JSONW_KEY(w, "created");
		jsonw_int(w, r->created);
		JSONW_KEY(w, "ended");
		jsonw_int(w, r->ended);
		JSONW_KEY(w, "interruptions");
		jsonw_int(w, r->interruptions);
		JSONW_KEY(w, "failures");
		jsonw_int(w, r->failures);
		JSONW_KEY(w, "exit_code");
		jsonw_int(w, r->exit_code);
		if (r->deadline > 0)
			api_hist_deadline(w, r);
		JSONW_KEY(w, "attempts");
		jsonw_array_begin(w);
	}
	if (r->attempt == 0)
		return 0;
	sec = api_hist_add(&h->job, r);
	jsonw_object_begin(w);
	JSONW_KEY(w, "number");
	jsonw_int(w, r->attempt);
	JSONW_KEY(w, "provider");
	jsonw_string(w, r->provider);
	JSONW_KEY(w, "region");
	jsonw_string(w, r->region);
	JSONW_KEY(w, "zone");
	jsonw_string(w, r->zone);
	JSONW_KEY(w, "spot");
	jsonw_bool(w, r->spot);
	/* Attempts from before capacity kinds have none: Spot or not. */
	JSONW_KEY(w, "capacity");
	jsonw_string(w, r->capacity != NULL ? r->capacity :
	    r->spot ? "spot" : "standard");
	JSONW_KEY(w, "gpu_count");
	jsonw_int(w, r->a_gpu_count);
	JSONW_KEY(w, "hourly_usd");
	jsonw_double(w, r->hourly_usd);
	JSONW_KEY(w, "baseline_hourly_usd");
	jsonw_double(w, r->baseline_hourly_usd);
	JSONW_KEY(w, "started");
	jsonw_int(w, r->started);
	JSONW_KEY(w, "ended");
	jsonw_int(w, r->a_ended);
	JSONW_KEY(w, "billed_start");
	jsonw_int(w, r->billed_start);
	JSONW_KEY(w, "billed_end");
	jsonw_int(w, r->billed_end);
	JSONW_KEY(w, "billed_seconds");
	jsonw_int(w, sec);
	JSONW_KEY(w, "end_reason");
	jsonw_string(w, r->end_reason == END_NONE ? NULL :
	    attempt_end_name(r->end_reason));
	JSONW_KEY(w, "cost_usd");
	jsonw_double(w, r->cost_usd);
	JSONW_KEY(w, "baseline_usd");
	jsonw_double(w, r->baseline_usd);
	jsonw_object_end(w);
	return 0;
}

static struct api_group *
api_hist_group(struct api_hist *h, const char *key)
{
	struct api_group	*g;
	size_t			 i;

	for (i = 0; i < h->ngroups; i++)
		if (strcmp(h->groups[i].key, key) == 0)
			return &h->groups[i];
	if (h->ngroups == h->capgroups) {
		h->capgroups = h->capgroups ? h->capgroups * 2 : 16;
		h->groups = xreallocarray(h->groups, h->capgroups,
		    sizeof *h->groups);
	}
	g = &h->groups[h->ngroups++];
	memset(g, 0, sizeof *g);
	g->key = xstrdup(key);
	return g;
}

static int
api_hist_on_total(const struct store_acct_row *r, void *arg)
{
	struct api_hist		*h = arg;
	struct api_group	*g;
	struct tm		 tm;
	time_t			 t;
	char			 key[64];

	switch (h->by) {
	case API_BY_USER:
		(void)snprintf(key, sizeof key, "%u", (unsigned)r->owner);
		break;
	case API_BY_GPU:
		(void)snprintf(key, sizeof key, "%s", r->gpu_type != NULL ?
		    r->gpu_type : "none");
		break;
	case API_BY_SERVICE:
		(void)snprintf(key, sizeof key, "%s", r->provider != NULL ?
		    r->provider : "none");
		break;
	default:
		t = (time_t)r->ended;
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(key, sizeof key, "%Y-%m-%d", &tm) == 0)
			(void)snprintf(key, sizeof key, "?");
		break;
	}
	g = api_hist_group(h, key);
	if (g->last_job != r->job_id) {
		g->last_job = r->job_id;
		g->sum.jobs++;
		g->sum.interruptions += r->interruptions;
	}
	if (h->total_last != r->job_id) {
		h->total_last = r->job_id;
		h->total.jobs++;
		h->total.interruptions += r->interruptions;
	}
	if (r->attempt > 0) {
		(void)api_hist_add(&g->sum, r);
		(void)api_hist_add(&h->total, r);
	}
	return 0;
}

static int
api_hist_group_cmp(const void *x, const void *y)
{
	const struct api_group	*a = x, *b = y;

	return strcmp(a->key, b->key);
}

static void
api_hist_totals_write(struct jsonw *w, const struct api_sum *s)
{
	JSONW_KEY(w, "jobs");
	jsonw_int(w, s->jobs);
	JSONW_KEY(w, "attempts");
	jsonw_int(w, s->attempts);
	JSONW_KEY(w, "interruptions");
	jsonw_int(w, s->interruptions);
	api_sum_write(w, s);
}

/* An optional integer of seconds: 0 ok (*ret set if present), -1 replied. */
static int
api_hist_int(struct api_req *r, const char *name, int64_t lo, int64_t hi,
    int64_t *ret)
{
	json_t	*v = json_object_get(r->req, name);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, name,
		    "\"%s\" must be an integer from %" PRId64 " to %" PRId64,
		    name, lo, hi);
		return -1;
	}
	*ret = json_integer_value(v);
	return 0;
}

/* "succeeded,failed" into F->states: 0, or -1 replied. */
static int
api_hist_states(struct api_req *r, struct store_acct_filter *f)
{
	const char	*s, *e;
	char		 word[32];
	size_t		 n;
	int		 st, rc;

	if ((rc = api_field_string(r, "state", &s)) <= 0)
		return rc;
	for (; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = strchr(s, ',');
		if (e == NULL)
			e = s + strlen(s);
		n = (size_t)(e - s);
		if (n == 0)
			continue;
		st = -1;
		if (n < sizeof word) {
			memcpy(word, s, n);
			word[n] = '\0';
			st = job_state_parse(word);
		}
		if (st < 0 || !(JOB_MASK(st) & API_HISTORY_ENDED)) {
			server_client_error(r->client, GPUQ_ERR_BAD_REQUEST,
			    "state", "\"state\": \"%.*s\" is not the state of "
			    "an ended job; use succeeded, failed or cancelled",
			    (int)n, s);
			return -1;
		}
		f->states |= JOB_MASK(st);
	}
	return 0;
}

int
api_op_history(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct store_acct_filter f;
	struct api_hist		 h;
	struct jsonw		 w;
	const char		*by = NULL, *after = NULL;
	int64_t			 owner = -1, limit = GPUQ_LIST_MAX;
	long long		 at = 0, aid = 0;
	char			*cause = NULL, end;
	size_t			 i;
	int			 n;

	memset(&f, 0, sizeof f);
	memset(&h, 0, sizeof h);
	if (api_hist_int(r, "since", 0, INT64_MAX / 2, &f.since) != 0 ||
	    api_hist_int(r, "until", 0, INT64_MAX / 2, &f.until) != 0 ||
	    api_hist_int(r, "owner", 0, UINT32_MAX - 1, &owner) != 0 ||
	    api_hist_int(r, "limit", 1, GPUQ_LIST_MAX, &limit) != 0 ||
	    api_hist_states(r, &f) != 0 ||
	    api_field_string(r, "name", &f.name) < 0 ||
	    api_field_string(r, "by", &by) < 0 ||
	    api_field_string(r, "after", &after) < 0)
		return 0;
	if (owner >= 0) {
		f.owner_set = 1;
		f.owner = (uid_t)owner;
	}
	if (by != NULL) {
		for (i = 1; i < sizeof api_by_names / sizeof api_by_names[0];
		    i++)
			if (strcmp(by, api_by_names[i]) == 0)
				h.by = (int)i;
		if (h.by == API_BY_NONE) {
			server_client_error(r->client, GPUQ_ERR_BAD_REQUEST,
			    "by", "\"by\" must be user, gpu, service or day");
			return 0;
		}
	}
	if (after != NULL && (sscanf(after, "%lld:%lld%c", &at, &aid,
	    &end) != 2 || at < 0 || aid < 0)) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "after",
		    "\"after\" must be the \"next\" of the page before");
		return 0;
	}

	jsonw_init(&w);
	h.w = &w;
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "ok");
	jsonw_bool(&w, 1);
	if (h.by != API_BY_NONE) {
		n = store_acct_list(a->store, &f, 0, 0, 0, api_hist_on_total,
		    &h, &cause);
		if (n >= 0) {
			qsort(h.groups, h.ngroups, sizeof *h.groups,
			    api_hist_group_cmp);
			JSONW_KEY(&w, "by");
			jsonw_string(&w, api_by_names[h.by]);
			JSONW_KEY(&w, "groups");
			jsonw_array_begin(&w);
			for (i = 0; i < h.ngroups; i++) {
				jsonw_object_begin(&w);
				JSONW_KEY(&w, "key");
				jsonw_string(&w, h.groups[i].key);
				api_hist_totals_write(&w, &h.groups[i].sum);
				jsonw_object_end(&w);
			}
			jsonw_array_end(&w);
			JSONW_KEY(&w, "total");
			jsonw_object_begin(&w);
			api_hist_totals_write(&w, &h.total);
			jsonw_object_end(&w);
		}
		for (i = 0; i < h.ngroups; i++)
			free(h.groups[i].key);
		free(h.groups);
	} else {
		JSONW_KEY(&w, "jobs");
		jsonw_array_begin(&w);
		n = store_acct_list(a->store, &f, at, aid, (int)limit,
		    api_hist_on_row, &h, &cause);
		api_hist_close_job(&h);
		jsonw_array_end(&w);
		if (n == limit) {
			JSONW_KEY(&w, "next");
			jsonw_stringf(&w, "%" PRId64 ":%" PRId64, h.last_time,
			    h.last_id);
		}
	}
	if (n < 0) {
		jsonw_done(&w);
		server_client_error(r->client, n == -EBUSY ? GPUQ_ERR_BUSY :
		    GPUQ_ERR_INTERNAL, NULL, "cannot read the history: %s",
		    cause != NULL ? cause : strerror(-n));
		free(cause);
		return 0;
	}
	jsonw_object_end(&w);
	server_client_reply_jsonw(r->client, &w);
	jsonw_done(&w);
	return 0;
}
