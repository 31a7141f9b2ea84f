/*
 * test-provider.c: the provider table and the helpers every provider
 * shares (providers/provider.c): lookup, names, what each provider tells
 * the daemon (quota and price services), state names, RFC 3339 times,
 * labels, the poll filter and launch checks; and that the daemon's
 * sources never branch on a provider's name.
 */
#include "config.h"

#include <dirent.h>
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

#include "common/gpu.h"
#include "common/when.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"

static void
test_prov_lookup_names(void **state)
{
	(void)state;
	assert_ptr_equal(prov_lookup("vertex"), &prov_vertex);
	assert_ptr_equal(prov_lookup("batch"), &prov_batch);
	assert_ptr_equal(prov_lookup("gce"), &prov_gce);
	assert_ptr_equal(prov_lookup("null"), &prov_null);
	assert_null(prov_lookup("GCE"));
	assert_null(prov_lookup("aws"));
	assert_null(prov_lookup(NULL));
	assert_string_equal(prov_names(), "vertex, batch, gce");
	assert_string_equal(prov_names(), "vertex, batch, gce");
	assert_string_equal(prov_vertex.name, "vertex");
	assert_int_equal(prov_vertex.picks_zone, 1);
	assert_int_equal(prov_batch.picks_zone, 1);
	assert_int_equal(prov_gce.picks_zone, 0);
	assert_int_equal(prov_gce.poll_global, 1);
	assert_int_equal(prov_vertex.poll_global, 0);
	assert_int_equal(prov_batch.poll_global, 0);
}

static void
test_prov_state_names(void **state)
{
	(void)state;
	assert_string_equal(prov_state_name(PROV_PENDING), "pending");
	assert_string_equal(prov_state_name(PROV_RUNNING), "running");
	assert_string_equal(prov_state_name(PROV_SUCCEEDED), "succeeded");
	assert_string_equal(prov_state_name(PROV_FAILED), "failed");
	assert_string_equal(prov_state_name(PROV_PREEMPTED), "preempted");
	assert_string_equal(prov_state_name(PROV_MAINTENANCE),
	    "maintenance");
	assert_string_equal(prov_state_name(PROV_STOCKOUT), "stockout");
	assert_string_equal(prov_state_name(PROV_QUOTA), "quota");
	assert_string_equal(prov_state_name(PROV_CANCELLED), "cancelled");
	assert_string_equal(prov_state_name(PROV_LOST), "lost");
	assert_string_equal(prov_state_name(PROV_ERROR), "error");
	assert_string_equal(prov_state_name(-1), "unknown");
	assert_string_equal(prov_state_name(PROV_ERROR + 1), "unknown");
}

static void
test_when_parse_forms(void **state)
{
	int64_t	t = -1;

	(void)state;
	assert_int_equal(when_parse("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	/* Batch / Vertex: UTC, up to nine fractional digits. */
	assert_int_equal(when_parse("2024-06-26T18:42:22.123456789Z",
	    &t), 0);
	assert_int_equal(t, 1719427342);
	assert_int_equal(when_parse("2024-06-26T18:42:22.5z", &t), 0);
	assert_int_equal(t, 1719427342);
	/* Compute Engine: local time with an offset. */
	assert_int_equal(when_parse("2024-06-26T11:42:22.006-07:00",
	    &t), 0);
	assert_int_equal(t, 1719427342);
	assert_int_equal(when_parse("2024-06-27T00:12:22+05:30", &t),
	    0);
	assert_int_equal(t, 1719427342);
	/* Leap day, end of century rules. */
	assert_int_equal(when_parse("2000-02-29T00:00:00Z", &t), 0);
	assert_int_equal(t, 951782400);
	assert_int_equal(when_parse("2100-03-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 4107542400LL);
}

static void
test_when_parse_bad(void **state)
{
	int64_t	t = 42;

	(void)state;
	assert_int_equal(when_parse(NULL, &t), -EINVAL);
	assert_int_equal(when_parse("", &t), -EINVAL);
	assert_int_equal(when_parse("2024-06-26", &t), -EINVAL);
	assert_int_equal(when_parse("2024-06-26T18:42:22", &t),
	    -EINVAL);
	assert_int_equal(when_parse("2024-13-26T18:42:22Z", &t),
	    -EINVAL);
	assert_int_equal(when_parse("2024-06-26T24:42:22Z", &t),
	    -EINVAL);
	assert_int_equal(when_parse("2024-06-26T18:42:22.Z", &t),
	    -EINVAL);
	assert_int_equal(when_parse("2024-06-26T18:42:22+0700", &t),
	    -EINVAL);
	assert_int_equal(when_parse("2024-06-26T18:42:22Zjunk", &t),
	    -EINVAL);
	assert_int_equal(when_parse(" 2024-06-26T18:42:22Z", &t),
	    -EINVAL);
	assert_int_equal(t, 42);
}

static void
test_prov_json_time_and_segment(void **state)
{
	json_t	*o;

	(void)state;
	o = json_pack("{s:s, s:i}", "a", "1970-01-02T00:00:00Z", "b", 5);
	assert_int_equal(prov_json_time(o, "a"), 86400);
	assert_int_equal(prov_json_time(o, "b"), 0);
	assert_int_equal(prov_json_time(o, "c"), 0);
	assert_int_equal(prov_json_time(NULL, "a"), 0);
	json_decref(o);
	assert_string_equal(prov_last_segment("https://www.googleapis.com/"
	    "compute/v1/projects/p/zones/us-central1-a"), "us-central1-a");
	assert_string_equal(prov_last_segment("plain"), "plain");
	assert_null(prov_last_segment(NULL));
}

static void
test_prov_labels_and_filter(void **state)
{
	struct prov_launch	 l;
	json_t			*user, *labels;
	char			*f;

	(void)state;
	memset(&l, 0, sizeof l);
	user = json_pack("{s:s, s:s}", "team", "vision", "gpuq-job", "9");
	l.install = "abc123";
	l.job_id = 42;
	l.attempt = 3;
	l.resource = "gpuq-abc123-42-3";
	l.labels = user;
	labels = prov_labels_new(&l, 0);
	assert_int_equal(json_object_size(labels), 4);
	assert_string_equal(json_string_value(json_object_get(labels,
	    "team")), "vision");
	assert_string_equal(json_string_value(json_object_get(labels,
	    "gpuq-install")), "abc123");
	/* gpuq's own labels win over a user label of the same key. */
	assert_string_equal(json_string_value(json_object_get(labels,
	    "gpuq-job")), "42");
	assert_string_equal(json_string_value(json_object_get(labels,
	    "gpuq-attempt")), "3");
	assert_null(json_object_get(labels, "gpuq-resource"));
	json_decref(labels);
	labels = prov_labels_new(&l, 1);
	assert_string_equal(json_string_value(json_object_get(labels,
	    "gpuq-resource")), "gpuq-abc123-42-3");
	json_decref(labels);
	json_decref(user);

	f = prov_filter_install("abc123");
	assert_string_equal(f, "labels.gpuq-install=\"abc123\"");
	free(f);
	f = prov_duration(86400);
	assert_string_equal(f, "86400s");
	free(f);
}

static void
test_prov_launch_check_fields(void **state)
{
	struct prov_launch	 l;
	json_t			*bad;
	char			*cause = NULL;

	(void)state;
	memset(&l, 0, sizeof l);
	l.install = "abc";
	l.resource = "gpuq-abc-1-1";
	l.region = "us-central1";
	l.machine_type = "n1-standard-8";
	l.image = "us-docker.pkg.dev/p/r/train:1";
	l.gpu = gpu_lookup("nvidia-tesla-t4");
	l.gpu_count = 1;
	assert_int_equal(prov_launch_check(&l, &cause), 0);
	assert_null(cause);

	l.image = "";
	assert_int_equal(prov_launch_check(&l, &cause), -EINVAL);
	assert_string_equal(cause, "launch of gpuq-abc-1-1: container "
	    "image is empty");
	free(cause);
	l.image = "img";

	l.gpu_count = 0;
	assert_int_equal(prov_launch_check(&l, NULL), -EINVAL);
	l.gpu_count = 1;

	bad = json_pack("[s, i]", "python", 3);
	l.command = bad;
	assert_int_equal(prov_launch_check(&l, &cause), -EINVAL);
	assert_string_equal(cause, "launch of gpuq-abc-1-1: command must be "
	    "an array of strings");
	free(cause);
	l.command = NULL;
	json_decref(bad);

	bad = json_pack("{s:i}", "N", 1);
	l.env = bad;
	assert_int_equal(prov_launch_check(&l, &cause), -EINVAL);
	assert_string_equal(cause, "launch of gpuq-abc-1-1: env must map "
	    "names to strings");
	free(cause);
	json_decref(bad);
}

static void
test_prov_observed_labels_numbers(void **state)
{
	struct prov_observed	 o;
	json_t			*labels;

	(void)state;
	prov_observed_init(&o);
	assert_int_equal(o.exit_code, -1);
	assert_int_equal(o.state, PROV_PENDING);
	labels = json_pack("{s:s, s:s}", "gpuq-job", "123456789012",
	    "gpuq-attempt", "7");
	prov_observed_labels(&o, labels);
	assert_int_equal(o.job_id, 123456789012LL);
	assert_int_equal(o.attempt, 7);
	json_decref(labels);
	labels = json_pack("{s:s, s:s}", "gpuq-job", "12x", "gpuq-attempt",
	    "-1");
	prov_observed_labels(&o, labels);
	assert_int_equal(o.job_id, 0);
	assert_int_equal(o.attempt, 0);
	json_decref(labels);
}

static void
test_prov_name_parse_forms(void **state)
{
	int64_t	job = -1;
	int	attempt = -1;

	(void)state;
	assert_int_equal(prov_name_parse("gpuq-abc123-42-3", &job, &attempt),
	    0);
	assert_int_equal(job, 42);
	assert_int_equal(attempt, 3);
	/* Install ids may hold dashes: numbers are read from the end. */
	assert_int_equal(prov_name_parse("gpuq-a-b-c-123456789012-17", &job,
	    &attempt), 0);
	assert_int_equal(job, 123456789012LL);
	assert_int_equal(attempt, 17);
	job = -1;
	assert_int_equal(prov_name_parse("gpuq-42-3", &job, &attempt),
	    -EINVAL);
	assert_int_equal(prov_name_parse("bulk-1-2", &job, &attempt),
	    -EINVAL);
	assert_int_equal(prov_name_parse("gpuq-abc-x-3", &job, &attempt),
	    -EINVAL);
	assert_int_equal(prov_name_parse("gpuq-abc-4-", &job, &attempt),
	    -EINVAL);
	assert_int_equal(prov_name_parse("gpuq-abc-4-0", &job, &attempt),
	    -EINVAL);
	assert_int_equal(prov_name_parse(NULL, &job, &attempt), -EINVAL);
	assert_int_equal(job, -1);
}

static void
test_prov_metrics_and_uuids(void **state)
{
	char	*m, a[37], b[37], c[37];

	(void)state;
	m = prov_compute_metric(gpu_lookup("nvidia-tesla-t4"), 0);
	assert_string_equal(m, "NVIDIA_T4_GPUS");
	free(m);
	m = prov_compute_metric(gpu_lookup("nvidia-l4"), 1);
	assert_string_equal(m, "PREEMPTIBLE_NVIDIA_L4_GPUS");
	free(m);
	m = prov_vertex_metric(gpu_lookup("nvidia-a100-80gb"), 1);
	assert_string_equal(m,
	    "custom_model_training_preemptible_nvidia_a100_80gb_gpus");
	free(m);
	m = prov_vertex_metric(gpu_lookup("nvidia-tesla-t4"), 0);
	assert_string_equal(m, "custom_model_training_nvidia_t4_gpus");
	free(m);
	assert_null(prov_compute_metric(NULL, 0));

	prov_uuid_derive("0b6ce5a2-3c57-5b4e-8f1e-6a7d2b1c9e00", "delete", a);
	prov_uuid_derive("0b6ce5a2-3c57-5b4e-8f1e-6a7d2b1c9e00", "delete", b);
	prov_uuid_derive("0b6ce5a2-3c57-5b4e-8f1e-6a7d2b1c9e00", "insert", c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), 36);
	assert_int_equal(a[8], '-');
	assert_int_equal(a[14], '8');		/* version 8 */
	assert_non_null(strchr("89ab", a[19]));	/* RFC 9562 variant */
}

/* What the daemon reads of each provider instead of its name. */
static void
test_prov_services(void **state)
{
	static const struct {
		const struct provider	*p;
		int			 quota, price, usage_ours;
	} want[] = {
		{ &prov_vertex, GCP_SERVICE_VERTEX, GCP_SERVICE_VERTEX, 1 },
		{ &prov_batch, GCP_SERVICE_GCE, GCP_SERVICE_BATCH, 0 },
		{ &prov_gce, GCP_SERVICE_GCE, GCP_SERVICE_GCE, 0 },
		{ &prov_null, GCP_SERVICE_GCE, GCP_SERVICE_GCE, 0 },
	};
	const char	*svc;
	char		*m;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_int_equal(want[i].p->quota_service, want[i].quota);
		assert_int_equal(want[i].p->price_service, want[i].price);
		assert_int_equal(want[i].p->quota_usage_ours,
		    want[i].usage_ours);
		/* The quota service and the metric's service agree. */
		m = want[i].p->quota_metric(NULL, "us-central1",
		    gpu_lookup("nvidia-tesla-t4"), 0, &svc);
		assert_non_null(m);
		assert_string_equal(svc, want[i].quota == GCP_SERVICE_VERTEX ?
		    "vertex" : "compute");
		free(m);
	}
}

/* Text of FILE (new), or fail. */
static char *
slurp(const char *file)
{
	FILE	*f;
	char	*text;
	long	 size;

	if ((f = fopen(file, "r")) == NULL)
		fail_msg("cannot open %s", file);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	text = xmalloc((size_t)size + 1);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	(void)fclose(f);
	return text;
}

/* The argument list of the call whose '(' is at P: up to its ')'. New. */
static char *
call_args(const char *p)
{
	const char	*q = p;
	int		 depth = 0, quoted = 0;

	for (; *q != '\0'; q++) {
		if (quoted) {
			if (*q == '\\' && q[1] != '\0')
				q++;
			else if (*q == '"')
				quoted = 0;
		} else if (*q == '"')
			quoted = 1;
		else if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0)
			break;
	}
	return xstrndup(p, (size_t)(q - p));
}

/*
 * No daemon/ source compares a provider's name or address with one provider
 * (issue 11): what differs between providers is a field of struct
 * provider. Every str*cmp() call is read whole; none may hold "vertex",
 * "batch" or "gce", and no file may name &prov_vertex and the like.
 */
static void
test_prov_daemon_never_branches_on_names(void **state)
{
	static const char *const cmps[] = { "strcmp(", "strncmp(",
	    "strcasecmp(", "strncasecmp(" };
	static const char *const names[] = { "\"vertex\"", "\"batch\"",
	    "\"gce\"", "&prov_vertex", "&prov_batch", "&prov_gce" };
	DIR		*d;
	struct dirent	*de;
	char		*dir, *path, *text, *args;
	const char	*p;
	size_t		 i, j, len, files = 0;

	(void)state;
	dir = xprintf("%s/daemon", GPUQ_TEST_SRCDIR);
	if ((d = opendir(dir)) == NULL)
		fail_msg("cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 3 || strcmp(de->d_name + len - 2, ".c") != 0)
			continue;
		path = xprintf("%s/%s", dir, de->d_name);
		text = slurp(path);
		files++;
		for (j = 3; j < sizeof names / sizeof names[0]; j++)
			if (strstr(text, names[j]) != NULL)
				fail_msg("%s names %s", path, names[j]);
		for (i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
			for (p = text; (p = strstr(p, cmps[i])) != NULL; p++) {
				args = call_args(p + strlen(cmps[i]) - 1);
				for (j = 0; j < 3; j++)
					if (strstr(args, names[j]) != NULL)
						fail_msg("%s compares with "
						    "provider name %s: %s%s)",
						    path, names[j], cmps[i],
						    args + 1);
				free(args);
			}
		}
		free(text);
		free(path);
	}
	(void)closedir(d);
	free(dir);
	assert_true(files >= 5);	/* the right directory was read */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prov_lookup_names),
		cmocka_unit_test(test_prov_services),
		cmocka_unit_test(test_prov_daemon_never_branches_on_names),
		cmocka_unit_test(test_prov_state_names),
		cmocka_unit_test(test_when_parse_forms),
		cmocka_unit_test(test_when_parse_bad),
		cmocka_unit_test(test_prov_json_time_and_segment),
		cmocka_unit_test(test_prov_labels_and_filter),
		cmocka_unit_test(test_prov_launch_check_fields),
		cmocka_unit_test(test_prov_observed_labels_numbers),
		cmocka_unit_test(test_prov_name_parse_forms),
		cmocka_unit_test(test_prov_metrics_and_uuids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
