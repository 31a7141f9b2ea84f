/*
 * api-wait.c: the wait op (doc/DESIGN.md "Waiting for jobs").
 *
 * {"op":"wait","ids":[…],"timeout":S} is answered when every job named
 * has ended (succeeded, failed, cancelled), or when S seconds have
 * passed, whichever comes first. The reply is deferred: the waiter
 * holds its client's promise (server_client_defer) and costs a few
 * dozen bytes, no timer and no query of its own, so thousands of
 * scripts may wait at once.
 *
 * What settles waiters is a change in the number of ended jobs, which
 * the store keeps in memory (store_job_counts): api_wait_check() runs
 * once per turn of the loop after the group commit and, only when that
 * number moved, looks up the state of each job still waited for (a
 * primary-key read). One timer, running only while someone waits,
 * answers waiters whose time is up and forgets those whose client hung
 * up.
 *
 * An array's id (doc/DESIGN.md "Arrays and dependencies") waits for
 * every task: it has ended when none of its tasks is live, and it is
 * one line of the reply, its state the worst of its tasks' (failed,
 * then cancelled, else succeeded) and its cost theirs together, so a
 * 10,000-task sweep is waited for in a reply of one line.
 */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/server.h"
#include "store/store.h"

#define API_WAIT_MAX_IDS	1000	/* jobs in one wait */
#define API_WAIT_SWEEP_MS	1000	/* timeouts and hung-up clients */
#define API_WAIT_ENDED		(JOB_MASK(JOB_SUCCEEDED) | \
	JOB_MASK(JOB_FAILED) | JOB_MASK(JOB_CANCELLED))

struct api_waiter {
	struct server_client	*client;
	uint64_t		 deadline;	/* loop ms; 0 never */
	size_t			 n;		/* ids */
	size_t			 left;		/* ids[left..n) ended */
	LIST_ENTRY(api_waiter)	 entry;
	int64_t			 ids[];
};

static int64_t
api_wait_ended_count(struct api *a)
{
	int64_t	c[JOB_NSTATES];
	char	*cause = NULL;

	if (store_job_counts(a->store, c, &cause) != 0) {
		free(cause);
		return -1;
	}
	return c[JOB_SUCCEEDED] + c[JOB_FAILED] + c[JOB_CANCELLED];
}

/*
 * The state of ID for a waiter: a job's own, or for an array the state
 * it ended in once no task is live (else JOB_RUNNING); *RET_SUM (may be
 * NULL) gets the array's counts, tasks 0 for a plain job. 0, -ENOENT, or
 * another -errno with *cause.
 */
static int
api_wait_state(struct api *a, int64_t id, int *ret, struct store_sum *ret_sum,
    char **cause)
{
	struct store_sum	sum;
	int			rc, s;

	memset(&sum, 0, sizeof sum);
	rc = store_job_sum(a->store, id, &sum, cause);
	if (rc == 0 && sum.array) {
		if (ret_sum != NULL)
			*ret_sum = sum;
		for (s = 0; s < JOB_NSTATES; s++)
			if (sum.states[s] > 0 &&
			    !(JOB_MASK(s) & API_WAIT_ENDED)) {
				*ret = JOB_RUNNING;
				return 0;
			}
		*ret = sum.states[JOB_FAILED] > 0 ? JOB_FAILED :
		    sum.states[JOB_CANCELLED] > 0 ? JOB_CANCELLED :
		    JOB_SUCCEEDED;
		return 0;
	}
	if (rc < 0 && rc != -ENOENT)
		return rc;
	free(*cause);
	*cause = NULL;
	if (ret_sum != NULL)
		memset(ret_sum, 0, sizeof *ret_sum);
	return store_job_state_get(a->store, id, ret, cause);
}

/*
 * Move the ids of W that have ended behind W->left. Returns 0, or -1
 * when the store could not say (then nothing moves).
 */
static int
api_wait_scan(struct api *a, struct api_waiter *w)
{
	char	*cause = NULL;
	int64_t	 t;
	size_t	 i;
	int	 state, rc;

	for (i = 0; i < w->left;) {
		rc = api_wait_state(a, w->ids[i], &state, NULL, &cause);
		if (rc == -ENOENT)
			state = JOB_CANCELLED;	/* gone: nothing to wait */
		else if (rc < 0) {
			log_warnx("wait: %s", cause);
			free(cause);
			return -1;
		}
		if (JOB_MASK(state) & API_WAIT_ENDED) {
			w->left--;
			t = w->ids[i];
			w->ids[i] = w->ids[w->left];
			w->ids[w->left] = t;
		} else
			i++;
	}
	return 0;
}

static int
api_wait_id_cmp(const void *x, const void *y)
{
	int64_t	a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * {"ok":true,"timed_out":B,"jobs":[…]}: each job as it is now, in the
 * order of its id.
 */
static void
api_wait_reply(struct api *a, struct server_client *c, int64_t *ids,
    size_t n, int timed_out)
{
	struct jsonw		 w;
	struct store_job	*j;
	struct store_sum	 sum;
	char			*cause;
	double			 cost, baseline;
	size_t			 i;
	int			 state;

	qsort(ids, n, sizeof *ids, api_wait_id_cmp);
	jsonw_init(&w);
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "ok");
	jsonw_bool(&w, 1);
	JSONW_KEY(&w, "timed_out");
	jsonw_bool(&w, timed_out);
	JSONW_KEY(&w, "jobs");
	jsonw_array_begin(&w);
	for (i = 0; i < n; i++) {
		cause = NULL;
		jsonw_object_begin(&w);
		JSONW_KEY(&w, "id");
		jsonw_int(&w, ids[i]);
		if (store_job_get(a->store, ids[i], &j, &cause) != 0) {
			free(cause);
			JSONW_KEY(&w, "state");
			jsonw_string(&w, "unknown");
			jsonw_object_end(&w);
			continue;
		}
		state = j->state;
		cost = j->cost_usd;
		baseline = j->baseline_usd;
		if (api_wait_state(a, ids[i], &state, &sum, &cause) == 0 &&
		    sum.array) {
			JSONW_KEY(&w, "tasks");
			jsonw_int(&w, sum.tasks);
			if (store_array_cost(a->store, ids[i], &cost,
			    &baseline, &cause) != 0) {
				cost = j->cost_usd;
				baseline = j->baseline_usd;
			}
		} else
			state = j->state;
		free(cause);
		cause = NULL;
		JSONW_KEY(&w, "name");
		jsonw_string(&w, j->name);
		JSONW_KEY(&w, "state");
		jsonw_string(&w, job_state_name(state));
		JSONW_KEY(&w, "attempts");
		jsonw_int(&w, j->attempts);
		JSONW_KEY(&w, "interruptions");
		jsonw_int(&w, j->interruptions);
		JSONW_KEY(&w, "exit_code");
		jsonw_int(&w, j->exit_code);
		JSONW_KEY(&w, "message");
		jsonw_string(&w, j->message);
		JSONW_KEY(&w, "cost_usd");
		jsonw_double(&w, cost);
		JSONW_KEY(&w, "baseline_usd");
		jsonw_double(&w, baseline);
		jsonw_object_end(&w);
		store_job_free(j);
	}
	jsonw_array_end(&w);
	jsonw_object_end(&w);
	server_client_reply_jsonw(c, &w);
	jsonw_done(&w);
}

/* Answer W (unless its client is gone), keep the promise, forget W. */
static void
api_wait_done(struct api *a, struct api_waiter *w, int timed_out)
{
	LIST_REMOVE(w, entry);
	if (!server_client_gone(w->client))
		api_wait_reply(a, w->client, w->ids, w->n, timed_out);
	server_client_settle(w->client);
	free(w);
	if (LIST_EMPTY(&a->waiters))
		(void)uv_timer_stop(&a->wait_timer);
}

static void
api_wait_on_timer(uv_timer_t *t)
{
	struct api		*a = t->data;
	struct api_waiter	*w, *next;
	uint64_t		 now = uv_now(a->loop);

	for (w = LIST_FIRST(&a->waiters); w != NULL; w = next) {
		next = LIST_NEXT(w, entry);
		if (server_client_gone(w->client)) {
			LIST_REMOVE(w, entry);
			server_client_settle(w->client);
			free(w);
		} else if (w->deadline != 0 && now >= w->deadline)
			api_wait_done(a, w, 1);
	}
	if (LIST_EMPTY(&a->waiters))
		(void)uv_timer_stop(&a->wait_timer);
}

void
api_wait_check(struct api *a)
{
	struct api_waiter	*w, *next;
	int64_t			 ended;

	if (LIST_EMPTY(&a->waiters))
		return;
	ended = api_wait_ended_count(a);
	if (ended < 0 || ended == a->wait_ended)
		return;
	a->wait_ended = ended;
	for (w = LIST_FIRST(&a->waiters); w != NULL; w = next) {
		next = LIST_NEXT(w, entry);
		if (api_wait_scan(a, w) == 0 && w->left == 0)
			api_wait_done(a, w, 0);
	}
}

int
api_op_wait(struct api_req *r, struct store_job *unused)
{
	struct api		*a = r->api;
	struct api_waiter	*w;
	json_t			*ids, *v;
	double			 timeout = -1;
	size_t			 i, n;
	char			*cause = NULL;
	int			 state, rc;

	ids = json_object_get(r->req, "ids");
	n = json_array_size(ids);
	if (!json_is_array(ids) || n == 0 || n > API_WAIT_MAX_IDS) {
		server_client_error(r->client, GPUQ_ERR_BAD_REQUEST, "ids",
		    "\"ids\" must be an array of 1 to %d job ids",
		    API_WAIT_MAX_IDS);
		return 0;
	}
	v = json_object_get(r->req, "timeout");
	if (v != NULL) {
		if (!json_is_number(v) || json_number_value(v) < 0 ||
		    json_number_value(v) > 1e9) {
			server_client_error(r->client, GPUQ_ERR_BAD_REQUEST,
			    "timeout", "\"timeout\" must be a number of "
			    "seconds, 0 or more");
			return 0;
		}
		timeout = json_number_value(v);
	}
	w = xcalloc(1, sizeof *w + n * sizeof w->ids[0]);
	w->n = w->left = n;
	for (i = 0; i < n; i++) {
		v = json_array_get(ids, i);
		if (!json_is_integer(v) || json_integer_value(v) <= 0) {
			server_client_error(r->client, GPUQ_ERR_BAD_REQUEST,
			    "ids", "\"ids\"[%zu] must be a job id, a positive "
			    "integer", i);
			free(w);
			return 0;
		}
		w->ids[i] = json_integer_value(v);
		rc = api_wait_state(a, w->ids[i], &state, NULL, &cause);
		if (rc == -ENOENT) {
			server_client_error(r->client, GPUQ_ERR_NOT_FOUND,
			    "ids", "no job %" PRId64 "; gpuq status --all "
			    "lists the jobs", w->ids[i]);
			free(w);
			return 0;
		}
		if (rc < 0) {
			server_client_error(r->client, GPUQ_ERR_INTERNAL,
			    NULL, "cannot read job %" PRId64 ": %s",
			    w->ids[i], cause);
			free(cause);
			free(w);
			return 0;
		}
	}
	if (api_wait_scan(a, w) != 0) {
		server_client_error(r->client, GPUQ_ERR_BUSY, NULL,
		    "cannot read the jobs' states; try again");
		free(w);
		return 0;
	}
	if (w->left == 0 || timeout == 0) {
		api_wait_reply(a, r->client, w->ids, w->n, w->left != 0);
		free(w);
		return 0;
	}
	w->client = r->client;
	if (timeout > 0)
		w->deadline = uv_now(a->loop) + (uint64_t)(timeout * 1000.0);
	if (LIST_EMPTY(&a->waiters)) {
		a->wait_ended = api_wait_ended_count(a);
		(void)uv_timer_start(&a->wait_timer, api_wait_on_timer,
		    API_WAIT_SWEEP_MS, API_WAIT_SWEEP_MS);
	}
	LIST_INSERT_HEAD(&a->waiters, w, entry);
	server_client_defer(r->client);
	return 0;
}

int
api_wait_owes(struct api *a, struct server_client *c)
{
	struct api_waiter	*w;

	LIST_FOREACH(w, &a->waiters, entry)
		if (w->client == c)
			return 1;
	return 0;
}

void
api_wait_forget(struct api *a, struct server_client *c)
{
	struct api_waiter	*w, *next;

	for (w = LIST_FIRST(&a->waiters); w != NULL; w = next) {
		next = LIST_NEXT(w, entry);
		if (w->client != c)
			continue;
		LIST_REMOVE(w, entry);
		server_client_settle(c);
		free(w);
	}
	if (LIST_EMPTY(&a->waiters))
		(void)uv_timer_stop(&a->wait_timer);
}

void
api_wait_init(struct api *a)
{
	LIST_INIT(&a->waiters);
	(void)uv_timer_init(a->loop, &a->wait_timer);
	a->wait_timer.data = a;
}

void
api_wait_close(struct api *a, uv_close_cb cb)
{
	struct api_waiter	*w;

	while ((w = LIST_FIRST(&a->waiters)) != NULL) {
		LIST_REMOVE(w, entry);
		server_client_error(w->client, GPUQ_ERR_BUSY, NULL,
		    "gpuqd is stopping; wait again once it is back");
		server_client_settle(w->client);
		free(w);
	}
	uv_close((uv_handle_t *)&a->wait_timer, cb);
}
