/*
 * api-logs.c: the logs op (gpuq(1) "logs"; doc/DESIGN.md "Logs"). Only
 * the job's owner, root and the admin group get here (API_OWNER in
 * api.c's table). The reply is never held back: it gives what the
 * follower has now, with a cursor for the next call, and says whether
 * the follower has caught up and whether the job's output has ended.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsonw.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api-int.h"
#include "daemon/logs.h"
#include "daemon/server.h"
#include "store/store.h"

/* The job's attempts, copied out of the store for one request. */
struct api_logs_atts {
	struct store_attempt	**v;
	size_t			  n;
};

static int
api_logs_on_attempt(const struct store_attempt *a, void *arg)
{
	struct api_logs_atts	*la = arg;

	la->v = xreallocarray(la->v, la->n + 1, sizeof *la->v);
	la->v[la->n++] = store_attempt_copy(a);
	return 0;
}

void
api_set_logs(struct api *a, struct logs *l)
{
	a->logs = l;
}

/* What a person needs to read a marker between attempts. */
static void
api_logs_attempt_write(struct jsonw *w, const struct store_attempt *a)
{
	jsonw_object_begin(w);
	JSONW_KEY(w, "number");
	jsonw_int(w, a->number);
	JSONW_KEY(w, "provider");
	jsonw_string(w, a->provider);
	JSONW_KEY(w, "region");
	jsonw_string(w, a->region);
	JSONW_KEY(w, "state");
	jsonw_string(w, attempt_state_name(a->state));
	JSONW_KEY(w, "end");
	if (a->state == ATTEMPT_ENDED)
		jsonw_string(w, attempt_end_name(a->end_reason));
	else
		jsonw_null(w);
	JSONW_KEY(w, "message");
	jsonw_string(w, a->message);
	JSONW_KEY(w, "resumed_from");
	jsonw_string(w, a->resumed_from);
	jsonw_object_end(w);
}

int
api_op_logs(struct api_req *r, struct store_job *job)
{
	struct api_logs_atts	 la;
	struct logs_attempt	*att;
	struct logs_query	 q;
	struct jsonw		 out;
	json_int_t		 v;
	char			*cause = NULL;
	size_t			 i;
	int			 rc, ended, live = 0;

	memset(&q, 0, sizeof q);
	q.node = -1;
	if ((rc = api_field_int(r, "cursor", 0, INT64_MAX, &v)) < 0)
		return 0;
	if (rc > 0)
		q.cursor = v;
	if ((rc = api_field_int(r, "attempt", 1, INT32_MAX, &v)) < 0)
		return 0;
	if (rc > 0)
		q.attempt = (int)v;
	if ((rc = api_field_int(r, "node", 0, INT32_MAX, &v)) < 0)
		return 0;
	if (rc > 0)
		q.node = (int)v;
	if ((rc = api_field_int(r, "since", 0, INT64_MAX, &v)) < 0)
		return 0;
	if (rc > 0)
		q.since = v;
	if ((rc = api_field_int(r, "tail", 1, INT64_MAX, &v)) < 0)
		return 0;
	if (rc > 0)
		q.tail = v;
	if (r->api->logs == NULL) {
		server_client_error(r->client, GPUQ_ERR_UNAVAILABLE, NULL,
		    "gpuqd reads logs from Cloud Logging, and has no [gcp] "
		    "project; set one in gpuqd.conf and restart gpuqd");
		return 0;
	}
	memset(&la, 0, sizeof la);
	rc = store_attempt_list(r->api->store, job->id, api_logs_on_attempt,
	    &la, &cause);
	if (rc < 0) {
		server_client_error(r->client, GPUQ_ERR_BUSY, NULL,
		    "cannot read job %" PRId64 "'s attempts: %s", job->id,
		    cause != NULL ? cause : strerror(-rc));
		free(cause);
		goto out;
	}
	att = xcalloc(la.n > 0 ? la.n : 1, sizeof *att);
	for (i = 0; i < la.n; i++) {
		att[i].number = la.v[i]->number;
		att[i].provider = la.v[i]->provider;
		att[i].cloud_id = la.v[i]->cloud_id;
		if (la.v[i]->state != ATTEMPT_ENDED)
			live = 1;
	}
	ended = !live && !(JOB_MASK(job->state) & JOB_MASK_LIVE);
	logs_follow(r->api->logs, job->id, job->created, ended, att, la.n);
	free(att);

	jsonw_init(&out);
	jsonw_object_begin(&out);
	JSONW_KEY(&out, "ok");
	jsonw_bool(&out, 1);
	JSONW_KEY(&out, "id");
	jsonw_int(&out, job->id);
	JSONW_KEY(&out, "state");
	jsonw_string(&out, job_state_name(job->state));
	logs_read(r->api->logs, job->id, &q, &out);
	JSONW_KEY(&out, "attempts");
	jsonw_array_begin(&out);
	for (i = 0; i < la.n; i++)
		api_logs_attempt_write(&out, la.v[i]);
	jsonw_array_end(&out);
	jsonw_object_end(&out);
	server_client_reply_jsonw(r->client, &out);
	jsonw_done(&out);
out:
	for (i = 0; i < la.n; i++)
		store_attempt_free(la.v[i]);
	free(la.v);
	return 0;
}
