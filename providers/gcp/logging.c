/*
 * logging.c: Cloud Logging v2 entries.list for a job's output (DESIGN
 * GJ): the per-service filter clauses, one page's request body, and the
 * parts of a LogEntry gpuq prints.
 *
 * Knows the log shapes of Batch, Vertex AI and docker's gcplogs driver;
 * nothing of jobs in the store or of who follows them (daemon/logs.c).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/logging.h"

/* The numeric CustomJob id: the last segment of its resource name. */
static const char *
logging_last_segment(const char *name)
{
	const char	*p = strrchr(name, '/');

	return p != NULL ? p + 1 : name;
}

/*
 * Is S safe inside a quoted filter value? Our values are ids, numbers
 * and project ids; anything with a quote or backslash is refused
 * rather than escaped, so no value can end the string early.
 */
static int
logging_value_ok(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
			return 0;
	}
	return 1;
}

char *
logging_clause(const char *project, enum gcp_service service,
    const char *install, int64_t job, int attempt, const char *cloud_id)
{
	if (!logging_value_ok(project))
		return NULL;
	switch (service) {
	case GCP_SERVICE_BATCH:
		/* Batch copies the job's labels onto every LogEntry it
		 * writes (batch.v1 Job.labels), so no uid is needed. */
		if (!logging_value_ok(install))
			return NULL;
		return xprintf("(logName=\"projects/%s/logs/%s\" AND "
		    "labels.gpuq-install=\"%s\" AND labels.gpuq-job=\"%"
		    PRId64 "\" AND labels.gpuq-attempt=\"%d\")", project,
		    LOGGING_BATCH_LOG, install, job, attempt);
	case GCP_SERVICE_VERTEX:
		/* gcloud's own stream-logs filter (DESIGN GJ.6). */
		if (!logging_value_ok(cloud_id))
			return NULL;
		return xprintf("(resource.type=\"ml_job\" AND "
		    "resource.labels.job_id=\"%s\")",
		    logging_last_segment(cloud_id));
	case GCP_SERVICE_GCE:
		/* gcplogs puts no labels on entries: the VM's id finds
		 * them (DESIGN GJ.7); one VM runs one attempt. */
		if (!logging_value_ok(cloud_id))
			return NULL;
		return xprintf("(logName=\"projects/%s/logs/%s\" AND "
		    "resource.type=\"gce_instance\" AND "
		    "resource.labels.instance_id=\"%s\")", project,
		    LOGGING_DOCKER_LOG, cloud_id);
	}
	return NULL;
}

char *
logging_attempt_key(enum gcp_service service, const char *install,
    int64_t job, int attempt, const char *cloud_id)
{
	switch (service) {
	case GCP_SERVICE_BATCH:
		if (install == NULL)
			return NULL;
		return xprintf("batch:%s:%" PRId64 ":%d", install, job,
		    attempt);
	case GCP_SERVICE_VERTEX:
		if (cloud_id == NULL || *cloud_id == '\0')
			return NULL;
		return xprintf("vertex:%s", logging_last_segment(cloud_id));
	case GCP_SERVICE_GCE:
		if (cloud_id == NULL || *cloud_id == '\0')
			return NULL;
		return xprintf("gce:%s", cloud_id);
	}
	return NULL;
}

static const char *
logging_str(json_t *o, const char *a, const char *b)
{
	json_t	*v = json_object_get(o, a);

	if (b != NULL)
		v = json_object_get(v, b);
	return json_string_value(v);
}

char *
logging_entry_key(json_t *e)
{
	const char	*type, *id, *install, *job, *attempt;
	json_t		*labels;

	labels = json_object_get(e, "labels");
	install = logging_str(labels, "gpuq-install", NULL);
	job = logging_str(labels, "gpuq-job", NULL);
	attempt = logging_str(labels, "gpuq-attempt", NULL);
	if (install != NULL && job != NULL && attempt != NULL)
		return xprintf("batch:%s:%s:%s", install, job, attempt);
	type = logging_str(e, "resource", "type");
	if (type == NULL)
		return NULL;
	if (strcmp(type, "ml_job") == 0) {
		id = logging_str(json_object_get(e, "resource"), "labels",
		    "job_id");
		return id != NULL ? xprintf("vertex:%s", id) : NULL;
	}
	if (strcmp(type, "gce_instance") == 0) {
		id = logging_str(json_object_get(e, "resource"), "labels",
		    "instance_id");
		return id != NULL ? xprintf("gce:%s", id) : NULL;
	}
	return NULL;
}

/* The number after the last '-' in "workerpool0-3", or after
 * "-group0-" in Batch's task_id "task/<uid>-group0-3/0/0". */
static int
logging_node(json_t *e)
{
	const char	*s, *p;

	s = logging_str(json_object_get(e, "resource"), "labels",
	    "task_name");
	if (s != NULL && (p = strrchr(s, '-')) != NULL && isdigit(
	    (unsigned char)p[1]))
		return atoi(p + 1);
	s = logging_str(e, "labels", "task_id");
	if (s != NULL && (p = strstr(s, "-group0-")) != NULL)
		return atoi(p + 8);
	return 0;
}

int
logging_entry_parse(json_t *e, struct logging_entry *ret)
{
	struct logging_entry	 le;
	json_t			*jp;
	const char		*ts;

	memset(&le, 0, sizeof le);
	ts = json_string_value(json_object_get(e, "timestamp"));
	if (ts == NULL)
		ts = json_string_value(json_object_get(e,
		    "receiveTimestamp"));
	if (ts == NULL || logging_time_parse(ts, &le.sec, &le.nsec) != 0)
		return -EINVAL;
	le.insert_id = json_string_value(json_object_get(e, "insertId"));
	if (le.insert_id == NULL)
		le.insert_id = "";
	le.text = json_string_value(json_object_get(e, "textPayload"));
	jp = json_object_get(e, "jsonPayload");
	if (le.text == NULL && json_is_object(jp)) {
		le.text = json_string_value(json_object_get(jp, "message"));
		if (le.text == NULL)
			le.json = jp;
	}
	le.node = logging_node(e);
	*ret = le;
	return 0;
}

/* Digits at *P: the value, advancing *P; -1 if fewer than N. */
static int
logging_digits(const char **p, int n)
{
	int	 v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

int
logging_time_parse(const char *s, int64_t *ret_sec, long *ret_nsec)
{
	struct tm	 tm;
	const char	*p = s;
	long		 nsec = 0, scale = 100000000;
	int		 v[6], off = 0, sign, oh, om, i;
	static const char seps[] = "--T::";
	time_t		 t;

	for (i = 0; i < 6; i++) {
		v[i] = logging_digits(&p, i == 0 ? 4 : 2);
		if (v[i] < 0)
			return -EINVAL;
		if (i < 5) {
			if (*p != seps[i] && !(i == 2 && (*p == 't' ||
			    *p == ' ')))
				return -EINVAL;
			p++;
		}
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++) {
			nsec += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if ((oh = logging_digits(&p, 2)) < 0 || *p++ != ':' ||
		    (om = logging_digits(&p, 2)) < 0)
			return -EINVAL;
		off = sign * (oh * 3600 + om * 60);
	} else
		return -EINVAL;
	if (*p != '\0' || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 ||
	    v[3] > 23 || v[4] > 59 || v[5] > 60)
		return -EINVAL;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	t = timegm(&tm);
	*ret_sec = (int64_t)t - off;
	*ret_nsec = nsec;
	return 0;
}

void
logging_time_format(int64_t sec, long nsec, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t = (time_t)sec;
	char		 day[32];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		(void)snprintf(day, sizeof day, "1970-01-01T00:00:00");
	(void)snprintf(buf, len, "%s.%09ldZ", day, nsec);
}

json_t *
logging_request_body(const char *project, const char *filter,
    int page_size, const char *token)
{
	json_t	*b;
	char	*rn;

	rn = xprintf("projects/%s", project);
	b = json_pack("{s:[s], s:s, s:s, s:i}", "resourceNames", rn,
	    "filter", filter, "orderBy", "timestamp asc", "pageSize",
	    page_size);
	free(rn);
	if (b == NULL)
		fatalx("logging_request_body: out of memory");
	if (token != NULL && json_object_set_new(b, "pageToken",
	    json_string(token)) != 0)
		fatalx("logging_request_body: out of memory");
	return b;
}

int
logging_list(struct http *http, const struct gcp_conf *conf, json_t *body,
    void (*cb)(const struct http_resp *, void *), void *arg)
{
	struct http_req	 req;
	char		*url;
	int		 rc;

	url = gcp_url(conf, GCP_API_LOGGING, NULL, "entries:list");
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.json = body;
	/* A read: repeating it changes nothing. */
	req.flags = HTTP_AUTH | HTTP_IDEMPOTENT | HTTP_NO_RETRY;
	req.api = GCP_API_LOGGING;
	rc = http_request_start(http, &req, cb, arg);
	free(url);
	return rc;
}
