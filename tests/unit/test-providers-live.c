/*
 * test-providers-live.c: the three providers (and the null one) against
 * the simulated Google Cloud (tests/fakegcp), over real HTTP on the loop:
 * launch, poll until running and until done, preemption, host
 * maintenance, a failing exit code, cancel, duplicate launches, quota and
 * stockout errors. Every request body also passes the fake's discovery
 * schema checks, or the launch would fail with 400.
 *
 * Fails when the fake (or python3) is missing. Each test starts its own
 * fake, runs it 50 times faster than real time, and ends by closing every
 * handle (uv_loop_close() == 0).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/gpu.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "tests/unit/gcptest.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR	"."
#endif
#define INSTALL		"lt1"
#define REGION		"us-central1"
#define ZONE		"us-central1-a"
#define SPEED		50
#define POLL_MAX	300		/* polls before a wait gives up */
#define POLL_GAP_MS	100		/* real ms between polls */

/* A provider that the scenarios every provider plays run on. */
struct live_case {
	const struct provider	*p;
	const char		*service;	/* the fake's name for it */
	const char		*preempt_extra;	/* in /_fake/preempt's body */
};

static struct live_case live_gce = { &prov_gce, "compute", "" };
static struct live_case live_batch = { &prov_batch, "batch", "" };
/* Vertex restarts a preempted worker; when it gives up, PREEMPTED. */
static struct live_case live_vertex = { &prov_vertex, "vertex",
    ",\"vertex_restart\":false" };

struct live {
	struct unittest		*ut;	/* the fake, its conf, the loop */
	struct gcp		*g;	/* NULL: the fake did not start */
	char			*key;
	const struct live_case	*c;	/* LIVE_ON's provider, or NULL */
};

/* One launch's or cancel's result, copied out of the callback. */
struct done {
	int	 called;
	int	 fail;
	char	 cloud_id[256];
	char	 zone[64];
	char	 zones_available[256];
	char	 quota_metric[128];
	char	 message[1024];
};

/* What one poll saw. */
struct seen {
	char	 resource[128];
	char	 cloud_id[256];
	char	 zone[64];
	char	 message[512];
	int	 state;
	int	 exit_code;
	int64_t	 job_id;
	int	 attempt;
	int64_t	 created, started, ended;
};

struct polled {
	struct seen	 s[64];
	int		 n;
	struct done	 d;
};

static int
live_setup(void **state)
{
	struct live	*t = xcalloc(1, sizeof *t);
	const char	*top;
	char		 prices[1024], *cause = NULL;

	t->c = *state;			/* LIVE_ON's initial state */
	*state = t;
	t->ut = unittest_new("test-providers-live");
	gcptest_fake(t->ut);
	if (t->ut->fake.pid <= 0)
		return 0;
	json_decref(fake_post(&t->ut->fake, "/_fake/speed",
	    "{\"factor\":%d}", SPEED));
	t->key = unittest_path(t->ut, "key.json");
	fake_make_key(&t->ut->fake, t->key,
	    "gpuq@gpuq-demo.iam.gserviceaccount.com", 1);
	t->ut->gcp->credentials = t->key;
	top = getenv("top_srcdir");
	(void)snprintf(prices, sizeof prices, "%s/data/prices.csv",
	    top != NULL && *top != '\0' ? top : TOP_SRCDIR);
	t->ut->gcp->price_table = prices;
	if (gcp_new(t->ut->loop, t->ut->gcp, &t->g, &cause) != 0)
		fail_msg("gcp_new: %s", cause != NULL ? cause : "?");
	t->ut->gcp->price_table = NULL;	/* gcp_new() took a copy */
	return 0;
}

static int
live_teardown(void **state)
{
	struct live	*t = *state;

	gcp_free(t->g);
	unittest_free(t->ut);
	free(t->key);
	free(t);
	return 0;
}

static void
copy(char *dst, const char *s, size_t n)
{
	prov_strlcpy(dst, s != NULL ? s : "", n);
}

static void
on_done(const struct prov_result *r, void *arg)
{
	struct done	*d = arg;

	d->called++;
	d->fail = r->fail;
	copy(d->cloud_id, r->cloud_id, sizeof d->cloud_id);
	copy(d->zone, r->zone, sizeof d->zone);
	copy(d->zones_available, r->zones_available,
	    sizeof d->zones_available);
	copy(d->quota_metric, r->quota_metric, sizeof d->quota_metric);
	copy(d->message, r->message, sizeof d->message);
}

static void
on_seen(const struct prov_observed *o, void *arg)
{
	struct polled	*p = arg;
	struct seen	*s;

	assert_non_null(o);
	assert_true(p->n < (int)(sizeof p->s / sizeof p->s[0]));
	s = &p->s[p->n++];
	copy(s->resource, o->resource, sizeof s->resource);
	copy(s->cloud_id, o->cloud_id, sizeof s->cloud_id);
	copy(s->zone, o->zone, sizeof s->zone);
	copy(s->message, o->message, sizeof s->message);
	s->state = o->state;
	s->exit_code = o->exit_code;
	s->job_id = o->job_id;
	s->attempt = o->attempt;
	s->created = o->created;
	s->started = o->started;
	s->ended = o->ended;
}

static void
on_poll_done(const struct prov_result *r, void *arg)
{
	struct polled	*p = arg;

	on_done(r, &p->d);
}

/* A launch of job JOB attempt ATTEMPT; ENV is FAKEGCP_* text pairs. */
struct job {
	struct prov_launch	 l;
	char			 resource[64];
	char			 request_id[37];
	json_t			*env, *labels, *command;
};

static void
job_init(struct job *j, int64_t job, int attempt, int spot,
    const char *work, const char *exit_code)
{
	char	num[32];

	memset(j, 0, sizeof *j);
	(void)snprintf(j->resource, sizeof j->resource, "gpuq-%s-%lld-%d",
	    INSTALL, (long long)job, attempt);
	prov_uuid_derive(j->resource, "insert", j->request_id);
	j->env = json_object();
	json_object_set_new(j->env, "FAKEGCP_WORK_SECONDS",
	    json_string(work));
	json_object_set_new(j->env, "FAKEGCP_EXIT", json_string(exit_code));
	(void)snprintf(num, sizeof num, "%lld", (long long)job);
	json_object_set_new(j->env, "GPUQ_JOB_ID", json_string(num));
	(void)snprintf(num, sizeof num, "%d", attempt);
	json_object_set_new(j->env, "GPUQ_ATTEMPT", json_string(num));
	json_object_set_new(j->env, "GPUQ_CHECKPOINT_DIR", json_string(
	    "gs://gpuq-live/ckpt/checkpoints/"));
	j->labels = json_pack("{s:s}", "team", "live");
	j->command = json_pack("[s, s]", "python", "train.py");
	j->l.install = INSTALL;
	j->l.job_id = job;
	j->l.attempt = attempt;
	j->l.resource = j->resource;
	j->l.request_id = j->request_id;
	j->l.region = REGION;
	j->l.zone = ZONE;
	j->l.machine_type = "n1-standard-4";
	j->l.gpu = gpu_lookup("nvidia-tesla-t4");
	j->l.gpu_count = 1;
	j->l.spot = spot;
	j->l.image = "us-docker.pkg.dev/gpuq-demo/train/resnet:1";
	j->l.command = j->command;
	j->l.env = j->env;
	j->l.output_dir = "gs://gpuq-live/ckpt/";
	j->l.max_runtime = 86400;
	j->l.labels = j->labels;
}

static void
job_done(struct job *j)
{
	json_decref(j->env);
	json_decref(j->labels);
	json_decref(j->command);
}

static void
launch(struct live *t, const struct provider *p, struct job *j,
    struct done *d)
{
	memset(d, 0, sizeof *d);
	assert_int_equal(p->launch(t->g, &j->l, on_done, d), 0);
	unittest_run_until(t->ut, &d->called, 1);
	assert_int_equal(d->called, 1);
}

static void
poll_once(struct live *t, const struct provider *p, struct polled *out)
{
	memset(out, 0, sizeof *out);
	assert_int_equal(p->poll(t->g, INSTALL, p->poll_global ? NULL :
	    REGION, on_seen, on_poll_done, out), 0);
	unittest_run_until(t->ut, &out->d.called, 1);
	assert_int_equal(out->d.called, 1);
}

static const struct seen *
find(const struct polled *p, const char *resource)
{
	int	i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->s[i].resource, resource) == 0)
			return &p->s[i];
	return NULL;
}

/*
 * Poll until RESOURCE is in state WANT; *OUT gets that sighting. Fails
 * the test if it settles in another final state or never gets there.
 */
static void
wait_state(struct live *t, const struct provider *p, const char *resource,
    int want, struct seen *out)
{
	struct polled	*pl = malloc(sizeof *pl);
	const struct seen *s;
	int		 i;

	for (i = 0; i < POLL_MAX; i++) {
		poll_once(t, p, pl);
		assert_int_equal(pl->d.fail, PROV_FAIL_NONE);
		s = find(pl, resource);
		if (s != NULL && s->state == want) {
			*out = *s;
			free(pl);
			return;
		}
		if (s != NULL && s->state >= PROV_SUCCEEDED)
			fail_msg("%s: %s: wanted %s, got %s (%s)", p->name,
			    resource, prov_state_name(want),
			    prov_state_name(s->state), s->message);
		unittest_run_for(t->ut, POLL_GAP_MS);
	}
	free(pl);
	fail_msg("%s: %s never became %s", p->name, resource,
	    prov_state_name(want));
}

/* Poll until RESOURCE is no longer listed. */
static void
wait_gone(struct live *t, const struct provider *p, const char *resource)
{
	struct polled	*pl = malloc(sizeof *pl);
	int		 i;

	for (i = 0; i < POLL_MAX; i++) {
		poll_once(t, p, pl);
		if (find(pl, resource) == NULL) {
			free(pl);
			return;
		}
		unittest_run_for(t->ut, POLL_GAP_MS);
	}
	free(pl);
	fail_msg("%s: %s is still listed after cancel", p->name, resource);
}

static void
cancel(struct live *t, const struct provider *p, const char *resource,
    const char *cloud_id, const char *request_id)
{
	struct prov_ref	ref;
	struct done	d;

	memset(&ref, 0, sizeof ref);
	memset(&d, 0, sizeof d);
	ref.resource = resource;
	ref.cloud_id = cloud_id != NULL && *cloud_id != '\0' ? cloud_id :
	    NULL;
	ref.region = REGION;
	ref.zone = ZONE;
	ref.request_id = request_id;
	assert_int_equal(p->cancel(t->g, &ref, on_done, &d), 0);
	unittest_run_until(t->ut, &d.called, 1);
	assert_int_equal(d.called, 1);
	if (d.fail != PROV_FAIL_NONE)
		fail_msg("%s: cancel of %s: fail %d: %s", p->name, resource,
		    d.fail, d.message);
}

/* Resources of SERVICE the fake knows named NAME, deleted or not. */
static int
fake_count(struct live *t, const char *service, const char *name,
    int *ret_live)
{
	json_t		*r, *res;
	size_t		 i;
	char		 path[128];
	int		 n = 0, live = 0;

	(void)snprintf(path, sizeof path, "/_fake/resources?service=%s",
	    service);
	r = fake_ctl(&t->ut->fake, "GET", path, NULL);
	assert_non_null(r);
	json_array_foreach(json_object_get(r, "resources"), i, res) {
		if (strcmp(json_string_value(json_object_get(res, "name")),
		    name) != 0)
			continue;
		n++;
		if (!json_is_true(json_object_get(res, "deleted")))
			live++;
	}
	json_decref(r);
	if (ret_live != NULL)
		*ret_live = live;
	return n;
}

/* How many calls of discovery method METHOD the fake has answered. */
static int
fake_counter(struct live *t, const char *method)
{
	json_t	*r;
	int	 n;

	r = fake_ctl(&t->ut->fake, "GET", "/_fake/counters", NULL);
	assert_non_null(r);
	n = (int)json_integer_value(json_object_get(json_object_get(r,
	    "by_method"), method));
	json_decref(r);
	return n;
}

static void
poll_twice(struct live *t, const struct provider *p)
{
	struct polled	*pl = malloc(sizeof *pl);

	poll_once(t, p, pl);
	assert_int_equal(pl->d.fail, PROV_FAIL_NONE);
	poll_once(t, p, pl);
	assert_int_equal(pl->d.fail, PROV_FAIL_NONE);
	free(pl);
}

static void
interrupt(struct live *t, const char *what, const char *name,
    const char *extra)
{
	char	path[64];

	(void)snprintf(path, sizeof path, "/_fake/%s", what);
	json_decref(fake_post(&t->ut->fake, path, "{\"name\":\"%s\"%s}", name,
	    extra));
}

/* Quota METRIC of SERVICE ("compute", "aiplatform") in REGION: none. */
static void
fake_no_quota(struct live *t, const char *service, const char *metric)
{
	json_decref(fake_post(&t->ut->fake, "/_fake/quota",
	    "{\"service\":\"%s\",\"region\":\"%s\",\"metric\":\"%s\","
	    "\"limit\":0}", service, REGION, metric));
}

/* No T4s in WHERE (a zone, or each zone of a region) while ON; EXTRA is
 * more members of the request. */
static void
fake_t4_stockout(struct live *t, const char *where, int on,
    const char *extra)
{
	json_decref(fake_post(&t->ut->fake, "/_fake/stockout",
	    "{\"zone\":\"%s\",\"gpu\":\"nvidia-tesla-t4\","
	    "\"provisioning\":\"ANY\",\"on\":%s%s}", where,
	    on ? "true" : "false", extra));
}

/* Launch attempt ATTEMPT of JOB, a long Spot job, on P and wait until
 * it runs. */
static void
launch_running(struct live *t, const struct provider *p, struct job *j,
    struct done *d, int64_t job, int attempt)
{
	struct seen	s;

	job_init(j, job, attempt, 1, "100000", "0");
	launch(t, p, j, d);
	assert_int_equal(d->fail, PROV_FAIL_NONE);
	wait_state(t, p, j->resource, PROV_RUNNING, &s);
}

/* Poll until RESOURCE is gone; the fake then holds it, deleted. */
static void
wait_deleted(struct live *t, const struct provider *p, const char *service,
    const char *resource)
{
	int	live;

	wait_gone(t, p, resource);
	assert_int_equal(fake_count(t, service, resource, &live), 1);
	assert_int_equal(live, 0);
}

/* The whole life of a job that succeeds, then its cleanup. */
static void
test_live_succeeds(void **state)
{
	struct live		*t = *state;
	const struct provider	*p;
	struct job		 j;
	struct done		 d;
	struct seen		 s;

	NEED_FAKE(t->ut);
	p = t->c->p;
	job_init(&j, 11, 1, 1, "60", "0");
	launch(t, p, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	assert_true(d.cloud_id[0] != '\0');
	wait_state(t, p, j.resource, PROV_RUNNING, &s);
	assert_int_equal(s.job_id, 11);
	assert_int_equal(s.attempt, 1);
	/* A Compute poll leaves the creation time out (GCE_LIST_FIELDS). */
	if (p == &prov_gce)
		assert_int_equal(s.created, 0);
	else
		assert_true(s.created > 0);
	wait_state(t, p, j.resource, PROV_SUCCEEDED, &s);
	assert_int_equal(s.exit_code, 0);
	assert_true(s.ended >= s.started);
	/*
	 * Polls again while the VM waits: its stop is looked into once,
	 * the zone's operations included (a preemption wins over any exit
	 * code, even 0: DESIGN GC.4).
	 */
	poll_twice(t, p);
	if (p == &prov_gce) {
		assert_int_equal(fake_counter(t,
		    "compute.instances.getGuestAttributes"), 1);
		/* Once at TERMINATED, and once more if a poll caught
		 * the VM STOPPING (gce_poll_stopping()). */
		assert_in_range(fake_counter(t,
		    "compute.zoneOperations.list"), 1, 2);
	}
	cancel(t, p, j.resource, d.cloud_id, j.request_id);
	wait_deleted(t, p, t->c->service, j.resource);
	job_done(&j);
}

/* FAKEGCP_EXIT=3: the user's code fails with 3. */
static void
test_live_exit_code(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct seen	 s;

	NEED_FAKE(t->ut);
	job_init(&j, 12, 1, 0, "30", "3");
	launch(t, t->c->p, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	wait_state(t, t->c->p, j.resource, PROV_FAILED, &s);
	assert_int_equal(s.exit_code, 3);
	job_done(&j);
}

/* Preempt a running Spot job: WANT is how the provider reports it. */
static void
run_interrupt(struct live *t, const struct provider *p, const char *what,
    const char *extra, int want)
{
	struct job	j;
	struct done	d;
	struct seen	s;

	launch_running(t, p, &j, &d, 13, 2);
	/* The container is running, not just the VM. */
	unittest_run_for(t->ut, 200);
	interrupt(t, what, j.resource, extra);
	wait_state(t, p, j.resource, want, &s);
	assert_int_equal(s.exit_code, -1);
	assert_int_equal(s.job_id, 13);
	assert_int_equal(s.attempt, 2);
	job_done(&j);
}

static void
test_live_preempted(void **state)
{
	struct live	*t = *state;

	NEED_FAKE(t->ut);
	run_interrupt(t, t->c->p, "preempt", t->c->preempt_extra,
	    PROV_PREEMPTED);
}

/* Compute and Batch: the VM is stopped for host maintenance. */
static void
test_live_maintenance(void **state)
{
	struct live	*t = *state;

	NEED_FAKE(t->ut);
	run_interrupt(t, t->c->p, "maintenance", "", PROV_MAINTENANCE);
}

/* The same attempt launched twice makes one resource. */
static void
run_duplicate(struct live *t, const struct provider *p, const char *service)
{
	struct job	j;
	struct done	d1, d2;
	int		live;

	job_init(&j, 14, 1, 1, "100000", "0");
	launch(t, p, &j, &d1);
	assert_int_equal(d1.fail, PROV_FAIL_NONE);
	launch(t, p, &j, &d2);
	assert_true(d2.fail == PROV_FAIL_NONE || d2.fail == PROV_FAIL_EXISTS);
	if (p != &prov_gce)
		assert_string_equal(d2.cloud_id, d1.cloud_id);
	assert_int_equal(fake_count(t, service, j.resource, &live), 1);
	assert_int_equal(live, 1);
	job_done(&j);
}

static void
test_live_duplicate(void **state)
{
	struct live	*t = *state;

	NEED_FAKE(t->ut);
	run_duplicate(t, t->c->p, t->c->service);
}

static void
test_live_null(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct polled	 pl;

	NEED_FAKE(t->ut);
	job_init(&j, 1, 1, 1, "1", "0");
	launch(t, &prov_null, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	poll_once(t, &prov_null, &pl);
	assert_int_equal(pl.n, 0);
	assert_int_equal(pl.d.fail, PROV_FAIL_NONE);
	cancel(t, &prov_null, j.resource, NULL, NULL);
	job_done(&j);
}

/* Which quota a launch draws on, as quota.c names it. */
static void
test_live_quota_metrics(void **state)
{
	struct live		*t = *state;
	const struct gpu_type	*t4 = gpu_lookup("nvidia-tesla-t4");
	const char		*svc = NULL;
	char			*m;

	NEED_FAKE(t->ut);
	m = prov_gce.quota_metric(t->g, REGION, t4, 0, &svc);
	assert_string_equal(m, "NVIDIA_T4_GPUS");
	assert_string_equal(svc, "compute");
	free(m);
	m = prov_batch.quota_metric(t->g, REGION, t4, 0, &svc);
	assert_string_equal(m, "NVIDIA_T4_GPUS");
	assert_string_equal(svc, "compute");
	free(m);
	m = prov_vertex.quota_metric(t->g, REGION, t4, 1, &svc);
	assert_string_equal(m,
	    "custom_model_training_preemptible_nvidia_t4_gpus");
	assert_string_equal(svc, "vertex");
	free(m);
	m = prov_gce.quota_metric(t->g, REGION, t4, 1, &svc);
	assert_non_null(m);
	assert_non_null(strstr(m, "NVIDIA_T4_GPUS"));
	free(m);
	assert_null(prov_gce.quota_metric(t->g, REGION, NULL, 0, &svc));
}

static void
test_live_gce_duplicate(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	int		 live;

	NEED_FAKE(t->ut);
	run_duplicate(t, &prov_gce, "compute");
	/* Another requestId, same name: 409, adopted. */
	job_init(&j, 14, 1, 1, "100000", "0");
	prov_uuid_derive(j.resource, "another insert", j.request_id);
	launch(t, &prov_gce, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_EXISTS);
	assert_string_equal(d.zone, ZONE);
	assert_int_equal(fake_count(t, "compute", j.resource, &live), 1);
	job_done(&j);
}

static void
test_live_gce_quota(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;

	NEED_FAKE(t->ut);
	fake_no_quota(t, "compute", "NVIDIA_T4_GPUS");
	job_init(&j, 15, 1, 0, "60", "0");
	launch(t, &prov_gce, &j, &d);	/* 403 quotaExceeded at insert */
	assert_int_equal(d.fail, PROV_FAIL_QUOTA);
	assert_string_equal(d.quota_metric, "NVIDIA_T4_GPUS");
	job_done(&j);

	/* The same, reported in the insert's Operation. */
	json_decref(fake_post(&t->ut->fake, "/_fake/config",
	    "{\"compute_quota_error\":\"operation\"}"));
	job_init(&j, 15, 2, 0, "60", "0");
	launch(t, &prov_gce, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_QUOTA);
	assert_string_equal(d.quota_metric, "NVIDIA_T4_GPUS");
	job_done(&j);
}

static void
test_live_gce_stockout(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;

	NEED_FAKE(t->ut);
	fake_t4_stockout(t, ZONE, 1, ",\"with_details\":true,"
	    "\"zones_available\":[\"us-central1-b\",\"us-central1-c\"]");
	job_init(&j, 16, 1, 1, "60", "0");
	launch(t, &prov_gce, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_STOCKOUT);
	assert_string_equal(d.zones_available, "us-central1-b,us-central1-c");
	assert_string_equal(d.zone, ZONE);
	job_done(&j);
}

static void
test_live_gce_cancel_running(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;

	NEED_FAKE(t->ut);
	launch_running(t, &prov_gce, &j, &d, 17, 1);
	cancel(t, &prov_gce, j.resource, d.cloud_id, j.request_id);
	/* A repeat is harmless: same requestId, or already gone. */
	cancel(t, &prov_gce, j.resource, d.cloud_id, j.request_id);
	wait_deleted(t, &prov_gce, "compute", j.resource);
	job_done(&j);
}

static void
test_live_batch_stockout_quota(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct seen	 s;

	NEED_FAKE(t->ut);
	/* Batch accepts the job and fails it when it cannot get a VM. */
	fake_t4_stockout(t, REGION, 1, "");
	job_init(&j, 18, 1, 1, "60", "0");
	j.l.zone = NULL;
	launch(t, &prov_batch, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	wait_state(t, &prov_batch, j.resource, PROV_STOCKOUT, &s);
	assert_non_null(strstr(s.message, "RESOURCE_POOL_EXHAUSTED"));
	job_done(&j);

	fake_t4_stockout(t, REGION, 0, "");
	fake_no_quota(t, "compute", "PREEMPTIBLE_NVIDIA_T4_GPUS");
	fake_no_quota(t, "compute", "NVIDIA_T4_GPUS");
	job_init(&j, 18, 2, 1, "60", "0");
	launch(t, &prov_batch, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	/* Lack of quota is quota, not a stockout (issue 11). */
	wait_state(t, &prov_batch, j.resource, PROV_QUOTA, &s);
	assert_non_null(strstr(s.message, "CODE_GCE_QUOTA_EXCEEDED"));
	job_done(&j);
}

/*
 * Host maintenance: gpuq creates custom jobs with
 * scheduling.disableRetries, so Vertex does not restart the worker on
 * its own; the job ends and gpuq's budgets decide (issue 15 item 4).
 */
static void
test_live_vertex_maintenance(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct seen	 s;

	NEED_FAKE(t->ut);
	launch_running(t, &prov_vertex, &j, &d, 19, 1);
	unittest_run_for(t->ut, 200);
	interrupt(t, "maintenance", j.resource, "");
	wait_state(t, &prov_vertex, j.resource, PROV_MAINTENANCE, &s);
	job_done(&j);
}

static void
test_live_vertex_quota_stockout(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct seen	 s;
	int		 live;

	NEED_FAKE(t->ut);
	fake_no_quota(t, "aiplatform",
	    "custom_model_training_preemptible_nvidia_t4_gpus");
	job_init(&j, 20, 1, 1, "60", "0");
	launch(t, &prov_vertex, &j, &d);	/* 429 RESOURCE_EXHAUSTED */
	assert_int_equal(d.fail, PROV_FAIL_QUOTA);
	assert_string_equal(d.quota_metric,
	    "custom_model_training_preemptible_nvidia_t4_gpus");
	assert_int_equal(fake_count(t, "vertex", j.resource, &live), 0);
	job_done(&j);

	/* Admitted, then failed for quota inside the job: code 8 too,
	 * but QUOTA. */
	json_decref(fake_post(&t->ut->fake, "/_fake/config",
	    "{\"vertex_quota_error\":\"job\"}"));
	job_init(&j, 20, 3, 1, "60", "0");
	launch(t, &prov_vertex, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	wait_state(t, &prov_vertex, j.resource, PROV_QUOTA, &s);
	assert_non_null(strstr(s.message,
	    "custom_model_training_preemptible_nvidia_t4_gpus"));
	job_done(&j);
	json_decref(fake_post(&t->ut->fake, "/_fake/config",
	    "{\"vertex_quota_error\":\"http\"}"));

	/* Every zone of the region out of T4s: the job fails, code 8. */
	fake_t4_stockout(t, REGION, 1, "");
	job_init(&j, 20, 2, 0, "60", "0");
	launch(t, &prov_vertex, &j, &d);
	assert_int_equal(d.fail, PROV_FAIL_NONE);
	wait_state(t, &prov_vertex, j.resource, PROV_STOCKOUT, &s);
	job_done(&j);
}

/* Cancel a running job: CANCELLED, then a second cancel deletes it. */
static void
test_live_vertex_cancel(void **state)
{
	struct live	*t = *state;
	struct job	 j;
	struct done	 d;
	struct seen	 s;

	NEED_FAKE(t->ut);
	launch_running(t, &prov_vertex, &j, &d, 21, 1);
	cancel(t, &prov_vertex, j.resource, d.cloud_id, NULL);
	wait_state(t, &prov_vertex, j.resource, PROV_CANCELLED, &s);
	/* Without the cloud id: found by its label, then deleted. */
	cancel(t, &prov_vertex, j.resource, NULL, NULL);
	wait_deleted(t, &prov_vertex, "vertex", j.resource);
	job_done(&j);
}

#define LIVE(f)	cmocka_unit_test_setup_teardown(f, live_setup, live_teardown)
/* test_live_F on live_C's provider, named test_live_C_F. */
#define LIVE_ON(c, f) { "test_live_" #c "_" #f, test_live_##f, live_setup, \
	live_teardown, &live_##c }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		LIVE(test_live_null),
		LIVE(test_live_quota_metrics),
		LIVE_ON(gce, succeeds),
		LIVE_ON(gce, exit_code),
		LIVE_ON(gce, preempted),
		LIVE_ON(gce, maintenance),
		LIVE(test_live_gce_duplicate),
		LIVE(test_live_gce_quota),
		LIVE(test_live_gce_stockout),
		LIVE(test_live_gce_cancel_running),
		LIVE_ON(batch, succeeds),
		LIVE_ON(batch, exit_code),
		LIVE_ON(batch, preempted),
		LIVE_ON(batch, maintenance),
		LIVE_ON(batch, duplicate),
		LIVE(test_live_batch_stockout_quota),
		LIVE_ON(vertex, succeeds),
		LIVE_ON(vertex, exit_code),
		LIVE_ON(vertex, preempted),
		LIVE(test_live_vertex_maintenance),
		LIVE_ON(vertex, duplicate),
		LIVE(test_live_vertex_quota_stockout),
		LIVE(test_live_vertex_cancel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
