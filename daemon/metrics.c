/*
 * metrics.c: the Prometheus text exposition of gpuqd (metrics.h).
 *
 * Reads the rooms that own each number when the text is made; keeps
 * only the counters of job moves, which nobody else keeps. Must not
 * change anything it reads. The text format is Prometheus's
 * "Exposition formats" page: # HELP, # TYPE, one sample a line, label
 * values with \\, \" and \n escaped, counters named *_total.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/attempt.h"
#include "daemon/cloud.h"
#include "daemon/conf.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "daemon/sched.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "providers/gcp/quota.h"
#include "providers/provider.h"
#include "store/store.h"

#define METRICS_MAX_GROUPS	256	/* (gpu, service, region, spot) */

struct metrics {
	uv_loop_t		*loop;
	struct store		*store;		/* borrowed */
	const struct conf	*conf;		/* borrowed */
	struct cloud		*cloud;		/* borrowed, or NULL */
	struct sched		*sched;
	struct attempts		*att;
	struct notify		*notify;
	uv_timer_t		 timer;		/* timer.data == this */
	int64_t			 started;	/* unix seconds */
	int			 file_failing;	/* said so already */

	/* Counted from the store's moves since start. */
	unsigned long		 launches;
	unsigned long		 requeues[END_NREASONS]; /* attempt ends
							   that moved a job */
	unsigned long		 ended[JOB_NSTATES];
};

/* ---------------------------------------------------------------- */
/* The writer.							    */

static void
mb_add(struct metrics_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2 + 1024;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
mb_str(struct metrics_buf *b, const char *s)
{
	mb_add(b, s, strlen(s));
}

void
metrics_family(struct metrics_buf *b, const char *name, const char *type,
    const char *help)
{
	mb_str(b, "# HELP ");
	mb_str(b, name);
	mb_str(b, " ");
	mb_str(b, help);		/* ours: no backslash or newline */
	mb_str(b, "\n# TYPE ");
	mb_str(b, name);
	mb_str(b, " ");
	mb_str(b, type);
	mb_str(b, "\n");
}

void
metrics_sample(struct metrics_buf *b, const char *name,
    const char *const *labels, int nlabels, double value)
{
	const char	*p;
	char		 num[64];
	int		 i;

	mb_str(b, name);
	for (i = 0; i < nlabels; i++) {
		mb_str(b, i == 0 ? "{" : ",");
		mb_str(b, labels[2 * i]);
		mb_str(b, "=\"");
		for (p = labels[2 * i + 1]; p != NULL && *p != '\0'; p++) {
			if (*p == '\\')
				mb_str(b, "\\\\");
			else if (*p == '"')
				mb_str(b, "\\\"");
			else if (*p == '\n')
				mb_str(b, "\\n");
			else
				mb_add(b, p, 1);
		}
		mb_str(b, "\"");
	}
	if (nlabels > 0)
		mb_str(b, "}");
	if (isnan(value))
		(void)snprintf(num, sizeof num, " NaN\n");
	else if (value == floor(value) && fabs(value) < 1e15)
		(void)snprintf(num, sizeof num, " %.0f\n", value);
	else
		(void)snprintf(num, sizeof num, " %.9g\n", value);
	mb_str(b, num);
}

/* ---------------------------------------------------------------- */
/* The counters of moves.					    */

void
metrics_on_move(const struct store_move *m, void *arg)
{
	struct metrics	*mx = arg;

	if (m->to == JOB_LAUNCHING)
		mx->launches++;
	/* Every attempt end that moved its job: requeues and final ends. */
	if (m->end > END_NONE && m->end < END_NREASONS)
		mx->requeues[m->end]++;
	if (m->to == JOB_SUCCEEDED || m->to == JOB_FAILED ||
	    m->to == JOB_CANCELLED)
		mx->ended[m->to]++;
}

/* ---------------------------------------------------------------- */
/* The families.						    */

/*
 * Jobs that ended (succeeded or failed) after their deadline
 * (doc/DESIGN.md "Deadlines"): read from the store, so it survives a
 * restart; a partial index holds only those jobs.
 */
static void
metrics_deadline(struct metrics *mx, struct metrics_buf *b)
{
	char	*cause = NULL;
	int64_t	 n = 0;

	if (store_deadline_misses(mx->store, &n, &cause) != 0) {
		log_warnx("metrics: %s", cause);
		free(cause);
	}
	metrics_family(b, "gpuq_deadline_misses_total", "counter",
	    "Jobs with a deadline that succeeded or failed after it.");
	metrics_sample(b, "gpuq_deadline_misses_total", NULL, 0, (double)n);
}

/*
 * What the same running time would have cost on Vertex AI on-demand, and
 * the saving (doc/DESIGN.md "Accounting"). The baseline only grows, like
 * what was spent; the saving is a gauge, as it falls when a job costs
 * more than its baseline.
 */
static void
metrics_savings(struct metrics *mx, struct metrics_buf *b)
{
	char	*cause = NULL;
	double	 base = 0, saved = 0;

	if (store_baseline_total(mx->store, &base, &saved, &cause) != 0) {
		log_warnx("metrics: %s", cause);
		free(cause);
	}
	metrics_family(b, "gpuq_baseline_dollars_total", "counter",
	    "US dollars every job's ended attempts would have cost on Vertex "
	    "AI on-demand.");
	metrics_sample(b, "gpuq_baseline_dollars_total", NULL, 0, base);
	metrics_family(b, "gpuq_saved_dollars", "gauge",
	    "US dollars saved against Vertex AI on-demand (baseline less "
	    "cost, over the jobs with a baseline; negative when it cost "
	    "more).");
	metrics_sample(b, "gpuq_saved_dollars", NULL, 0, saved);
	metrics_deadline(mx, b);
}

static void
metrics_jobs(struct metrics *mx, struct metrics_buf *b)
{
	int64_t		 counts[JOB_NSTATES];
	const char	*l[2];
	char		*cause = NULL;
	double		 spent = 0;
	int		 i;

	metrics_family(b, "gpuq_jobs", "gauge", "Jobs in the queue by state.");
	if (store_job_counts(mx->store, counts, &cause) == 0) {
		for (i = 0; i < JOB_NSTATES; i++) {
			l[0] = "state";
			l[1] = job_state_name(i);
			metrics_sample(b, "gpuq_jobs", l, 1, (double)counts[i]);
		}
	} else {
		log_warnx("metrics: %s", cause);
		free(cause);
		cause = NULL;
	}
	metrics_family(b, "gpuq_jobs_ended_total", "counter",
	    "Jobs that ended since gpuqd started, by final state.");
	for (i = 0; i < JOB_NSTATES; i++) {
		if (i != JOB_SUCCEEDED && i != JOB_FAILED &&
		    i != JOB_CANCELLED)
			continue;
		l[0] = "state";
		l[1] = job_state_name(i);
		metrics_sample(b, "gpuq_jobs_ended_total", l, 1,
		    (double)mx->ended[i]);
	}
	metrics_family(b, "gpuq_spent_dollars_total", "counter",
	    "US dollars billed for every job's ended attempts.");
	if (store_cost_total(mx->store, &spent, &cause) != 0) {
		log_warnx("metrics: %s", cause);
		free(cause);
	}
	metrics_sample(b, "gpuq_spent_dollars_total", NULL, 0, spent);
	metrics_savings(mx, b);
}

static void
metrics_moves(struct metrics *mx, struct metrics_buf *b)
{
	const char	*l[2];
	int		 i;

	metrics_family(b, "gpuq_launches_total", "counter",
	    "Attempts launched since gpuqd started.");
	metrics_sample(b, "gpuq_launches_total", NULL, 0,
	    (double)mx->launches);
	metrics_family(b, "gpuq_interruptions_total", "counter",
	    "Attempts the cloud interrupted, by reason.");
	for (i = END_NONE + 1; i < END_NREASONS; i++) {
		if (!attempt_end_is_interruption(i))
			continue;
		l[0] = "reason";
		l[1] = attempt_end_name(i);
		metrics_sample(b, "gpuq_interruptions_total", l, 1,
		    (double)mx->requeues[i]);
	}
	metrics_family(b, "gpuq_failures_total", "counter",
	    "Attempts that failed, by reason.");
	for (i = END_NONE + 1; i < END_NREASONS; i++) {
		if (attempt_end_is_interruption(i) || i == END_SUCCEEDED ||
		    i == END_CANCELLED)
			continue;
		l[0] = "reason";
		l[1] = attempt_end_name(i);
		metrics_sample(b, "gpuq_failures_total", l, 1,
		    (double)mx->requeues[i]);
	}
}

/* Calls, errors and retries by API, from http.c's counters. */
static void
metrics_cloud_apis(struct metrics_buf *b, struct http *http)
{
	static const struct {
		const char	*name;
		const char	*help;
		size_t		 off;
	} fam[] = {
		{ "gpuq_cloud_api_calls_total",
		  "Requests to Google Cloud APIs, by API.",
		  offsetof(struct http_api_stats, calls) },
		{ "gpuq_cloud_api_errors_total",
		  "Requests that ended in an error after their retries, by API.",
		  offsetof(struct http_api_stats, errors) },
		{ "gpuq_cloud_api_retries_total",
		  "Tries repeated after a failure, by API.",
		  offsetof(struct http_api_stats, retries) },
	};
	struct http_api_stats	 as;
	const char		*l[2];
	size_t			 f;
	int			 i;

	for (f = 0; f < sizeof fam / sizeof fam[0]; f++) {
		metrics_family(b, fam[f].name, "counter", fam[f].help);
		for (i = 0; http != NULL && i < GCP_API_MAX; i++) {
			http_get_api_stats(http, (enum gcp_api)i, &as);
			l[0] = "api";
			l[1] = gcp_api_name((enum gcp_api)i);
			metrics_sample(b, fam[f].name, l, 1, (double)
			    *(const unsigned long *)(const void *)
			    ((const char *)&as + fam[f].off));
		}
	}
}

/* GPUs of running attempts, grouped by (gpu, service, region, spot). */
struct metrics_group {
	char		*gpu_copy;
	char		*service;
	char		*region;
	int		 spot;
	double		 gpus;
};

struct metrics_groups {
	struct metrics_group	g[METRICS_MAX_GROUPS];
	int			n;
};

static void
metrics_gpus_cb(const struct store_attempt *a, const struct provider *p,
    void *arg)
{
	struct metrics_groups	*gs = arg;
	struct metrics_group	*g;
	const char		*gpu = a->gpu != NULL ? a->gpu : "none";
	int			 i;

	(void)p;
	if (a->state != ATTEMPT_RUNNING)
		return;
	for (i = 0; i < gs->n; i++) {
		g = &gs->g[i];
		if (strcmp(g->gpu_copy, gpu) == 0 &&
		    strcmp(g->service, a->provider) == 0 &&
		    strcmp(g->region, a->region) == 0 && g->spot == a->spot) {
			g->gpus += a->gpu_count;
			return;
		}
	}
	if (gs->n >= METRICS_MAX_GROUPS)
		return;
	g = &gs->g[gs->n++];
	g->gpu_copy = xstrdup(gpu);
	g->service = xstrdup(a->provider);
	g->region = xstrdup(a->region);
	g->spot = a->spot;
	g->gpus = a->gpu_count;
}

static void
metrics_cloud(struct metrics *mx, struct metrics_buf *b)
{
	struct metrics_groups	*gs;
	struct sched_stats	 ss;
	struct quota_row	 row;
	struct http		*http;
	struct quota		*q;
	const char		*l[8];
	size_t			 iter = 0;
	int			 i;

	metrics_family(b, "gpuq_gpus_running", "gauge",
	    "GPUs of running attempts by type, service, region and Spot.");
	if (mx->att != NULL) {
		gs = xcalloc(1, sizeof *gs);
		attempt_foreach(mx->att, metrics_gpus_cb, gs);
		for (i = 0; i < gs->n; i++) {
			l[0] = "gpu";
			l[1] = gs->g[i].gpu_copy;
			l[2] = "service";
			l[3] = gs->g[i].service;
			l[4] = "region";
			l[5] = gs->g[i].region;
			l[6] = "spot";
			l[7] = gs->g[i].spot ? "true" : "false";
			metrics_sample(b, "gpuq_gpus_running", l, 4,
			    gs->g[i].gpus);
			free(gs->g[i].gpu_copy);
			free(gs->g[i].service);
			free(gs->g[i].region);
		}
		free(gs);
	}

	http = mx->cloud != NULL ? gcp_http(cloud_gcp(mx->cloud)) : NULL;
	metrics_cloud_apis(b, http);

	metrics_family(b, "gpuq_quota_headroom", "gauge",
	    "Free units of each quota bucket: limit - usage - in flight.");
	q = mx->cloud != NULL ? gcp_quota(cloud_gcp(mx->cloud)) : NULL;
	while (q != NULL && quota_next(q, &iter, &row) == 1) {
		if (!row.known)
			continue;
		l[0] = "service";
		l[1] = gcp_service_name(row.service);
		l[2] = "region";
		l[3] = row.region;
		l[4] = "metric";
		l[5] = row.metric;
		metrics_sample(b, "gpuq_quota_headroom", l, 3, row.free);
	}

	memset(&ss, 0, sizeof ss);
	if (mx->sched != NULL)
		sched_get_stats(mx->sched, &ss);
	metrics_family(b, "gpuq_sched_passes_total", "counter",
	    "Scheduling passes run.");
	metrics_sample(b, "gpuq_sched_passes_total", NULL, 0,
	    (double)ss.passes);
	metrics_family(b, "gpuq_sched_pass_seconds", "gauge",
	    "Time the last scheduling pass took.");
	metrics_sample(b, "gpuq_sched_pass_seconds", NULL, 0,
	    ss.pass_ms / 1000.0);
	metrics_family(b, "gpuq_sched_pass_max_seconds", "gauge",
	    "Time the longest scheduling pass took.");
	metrics_sample(b, "gpuq_sched_pass_max_seconds", NULL, 0,
	    ss.max_pass_ms / 1000.0);
	metrics_family(b, "gpuq_sched_jobs_cached", "gauge",
	    "Jobs the scheduler holds parsed: queued ones and those seen "
	    "lately; running jobs hold none.");
	metrics_sample(b, "gpuq_sched_jobs_cached", NULL, 0,
	    (double)ss.jobs_cached);
}

static void
metrics_store(struct metrics *mx, struct metrics_buf *b)
{
	struct store_commit_stats	cs;

	store_commit_stats(mx->store, &cs);
	metrics_family(b, "gpuq_store_commit_seconds", "summary",
	    "Time SQLite commits took (synchronous=FULL: to disk).");
	metrics_sample(b, "gpuq_store_commit_seconds_sum", NULL, 0,
	    cs.seconds);
	metrics_sample(b, "gpuq_store_commit_seconds_count", NULL, 0,
	    (double)cs.count);
	metrics_family(b, "gpuq_store_commit_max_seconds", "gauge",
	    "Time the longest commit took.");
	metrics_sample(b, "gpuq_store_commit_max_seconds", NULL, 0, cs.max);
}

static void
metrics_notify(struct metrics *mx, struct metrics_buf *b)
{
	struct notify_stats	 ns;
	const char		*l[2];

	memset(&ns, 0, sizeof ns);
	if (mx->notify != NULL)
		notify_get_stats(mx->notify, &ns);
	metrics_family(b, "gpuq_notifications_total", "counter",
	    "Webhook deliveries by result.");
	l[0] = "result";
	l[1] = "ok";
	metrics_sample(b, "gpuq_notifications_total", l, 1,
	    (double)ns.posts_ok);
	l[1] = "failed";
	metrics_sample(b, "gpuq_notifications_total", l, 1,
	    (double)ns.posts_failed);
	l[1] = "dropped";
	metrics_sample(b, "gpuq_notifications_total", l, 1,
	    (double)ns.dropped);
	metrics_family(b, "gpuq_notify_commands_total", "counter",
	    "Notification commands run by result.");
	l[1] = "ok";
	metrics_sample(b, "gpuq_notify_commands_total", l, 1,
	    (double)(ns.commands - ns.commands_failed));
	l[1] = "failed";
	metrics_sample(b, "gpuq_notify_commands_total", l, 1,
	    (double)ns.commands_failed);
}

char *
metrics_text(struct metrics *mx)
{
	struct metrics_buf	 b;
	const char		*l[4];

	memset(&b, 0, sizeof b);
	metrics_family(&b, "gpuq_info", "gauge",
	    "Always 1; the labels say which gpuqd this is.");
	l[0] = "version";
	l[1] = PACKAGE_VERSION;
	l[2] = "install";
	l[3] = store_install_id(mx->store);
	metrics_sample(&b, "gpuq_info", l, 2, 1);
	metrics_family(&b, "gpuq_start_time_seconds", "gauge",
	    "When gpuqd started, in seconds since the epoch.");
	metrics_sample(&b, "gpuq_start_time_seconds", NULL, 0,
	    (double)mx->started);
	metrics_jobs(mx, &b);
	metrics_moves(mx, &b);
	metrics_cloud(mx, &b);
	metrics_store(mx, &b);
	metrics_notify(mx, &b);
	return b.s;
}

int
metrics_write_file(struct metrics *mx, char **cause)
{
	const char	*path = mx->conf->metrics_file;
	char		*tmp, *text;
	size_t		 len, off = 0;
	ssize_t		 n;
	int		 fd, rc = 0;

	if (*path == '\0')
		return 0;
	/* Beside the file, so rename(2) replaces it in one step and the
	 * collector never reads half of it. */
	tmp = xprintf("%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("%s: %s", tmp, strerror(-rc));
		free(tmp);
		return rc;
	}
	/* Metrics are no secret: node_exporter runs as another user. */
	(void)fchmod(fd, 0644);
	text = metrics_text(mx);
	len = strlen(text);
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = -errno;
			break;
		}
		off += (size_t)n;
	}
	free(text);
	if (close(fd) == -1 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) == -1)
		rc = -errno;
	if (rc != 0) {
		if (cause != NULL)
			*cause = xprintf("%s: %s", path, strerror(-rc));
		(void)unlink(tmp);
	}
	free(tmp);
	return rc;
}

static void
metrics_on_timer(uv_timer_t *t)
{
	struct metrics	*mx = t->data;
	char		*cause = NULL;

	if (metrics_write_file(mx, &cause) != 0) {
		if (!mx->file_failing)
			log_warnx("metrics: cannot write %s; trying again "
			    "every %llds", cause,
			    (long long)mx->conf->metrics_interval);
		mx->file_failing = 1;
		free(cause);
	} else if (mx->file_failing) {
		log_info("metrics: %s written again", mx->conf->metrics_file);
		mx->file_failing = 0;
	}
	/* Re-armed each time, so a reload's interval applies. */
	(void)uv_timer_start(&mx->timer, metrics_on_timer,
	    (uint64_t)mx->conf->metrics_interval * 1000, 0);
}

struct metrics *
metrics_new(uv_loop_t *loop, struct store *store, const struct conf *conf)
{
	struct metrics	*mx;

	mx = xcalloc(1, sizeof *mx);
	mx->loop = loop;
	mx->store = store;
	mx->conf = conf;
	mx->started = time(NULL);
	(void)uv_timer_init(loop, &mx->timer);
	mx->timer.data = mx;
	(void)uv_timer_start(&mx->timer, metrics_on_timer, 0, 0);
	return mx;
}

void
metrics_set_cloud(struct metrics *mx, struct cloud *cloud,
    struct sched *sched, struct attempts *att)
{
	mx->cloud = cloud;
	mx->sched = sched;
	mx->att = att;
}

void
metrics_set_notify(struct metrics *mx, struct notify *n)
{
	mx->notify = n;
}

void
metrics_close(struct metrics *mx)
{
	if (mx == NULL)
		return;
	uv_timer_stop(&mx->timer);
	uv_close((uv_handle_t *)&mx->timer, NULL);
}

void
metrics_free(struct metrics *mx)
{
	free(mx);
}
