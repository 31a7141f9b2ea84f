/*
 * test-convert.c: gpuq submit --from (client/convert.c) over a corpus
 * of real-shaped job files in tests/unit/data/convert/, and the YAML
 * that --dry-run prints (client/yaml-out.c).
 *
 * Each NAME.yaml or NAME.json there is converted with --from batch when
 * NAME starts with "batch", else --from vertex, and must give either
 * NAME.out.yaml exactly (and NAME.notes, one note a line, or no notes)
 * or the error that NAME.err begins.
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

#include "client/cli.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define CORPUS	TOP_SRCDIR "/tests/unit/data/convert"

/* The file PATH's text (new), or NULL if it does not exist. */
static char *
slurp(const char *path)
{
	FILE	*f;
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*m;
	int	 ch;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	while ((ch = fgetc(f)) != EOF)
		fputc(ch, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* V as --dry-run writes it (new string). */
static char *
yaml_of(json_t *v)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*m;

	m = open_memstream(&buf, &len);
	assert_non_null(m);
	cli_yaml_write(m, v);
	fclose(m);
	return buf;
}

/* TEXT read back by the job file reader must be V again. */
static void
assert_reads_back(const char *text, json_t *v)
{
	struct cli_docs	 d = { NULL, 0 };
	char		*cause = NULL, *a, *b;

	if (cli_jobfile_parse("out.yaml", text, strlen(text), &d, &cause) != 0)
		fail_msg("the YAML written does not read back: %s\n%s", cause,
		    text);
	assert_int_equal(d.n, 1);
	if (!json_equal(d.v[0].job, v)) {
		a = json_dumps(v, JSON_COMPACT);
		b = json_dumps(d.v[0].job, JSON_COMPACT);
		fail_msg("wrote %s, read back %s", a, b);
	}
	cli_docs_done(&d);
}

/* One corpus case; returns 1 when it was one (an input file). */
static int
corpus_case(const char *file)
{
	struct cli_docs	 d = { NULL, 0 };
	const char	*dot = strrchr(file, '.');
	char		*path, *base, *want, *got, *cause = NULL;
	char		*notes_want;
	char		*notes_got = NULL;
	size_t		 i, nlen = 0;
	json_t		*notes, *n;
	FILE		*m;
	int		 rc;

	if (dot == NULL || (strcmp(dot, ".yaml") != 0 &&
	    strcmp(dot, ".json") != 0) || strstr(file, ".out.") != NULL)
		return 0;
	base = strndup(file, (size_t)(dot - file));
	if (asprintf(&path, "%s/%s", CORPUS, file) == -1)
		fail();
	rc = cli_jobfile_read(path, &d, &cause);
	if (rc != 0)
		fail_msg("%s: %s", file, cause);
	assert_int_equal(d.n, 1);
	rc = cli_convert_docs(strncmp(file, "batch", 5) == 0 ? "batch" :
	    "vertex", file, &d, &notes, &cause);
	free(path);

	if (asprintf(&path, "%s/%s.err", CORPUS, base) == -1)
		fail();
	want = slurp(path);
	free(path);
	if (want != NULL) {
		if (rc == 0)
			fail_msg("%s: converted, but %s.err wants: %s", file,
			    base, want);
		assert_int_equal(rc, -EINVAL);
		want[strcspn(want, "\n")] = '\0';
		/* "FILE[:LINE]: " then the path and the words. */
		got = strchr(cause, ' ');
		assert_non_null(got);
		if (strncmp(got + 1, want, strlen(want)) != 0)
			fail_msg("%s:\n got %s\nwant %s", file, got + 1, want);
		free(want);
		free(cause);
		free(base);
		cli_docs_done(&d);
		return 1;
	}
	if (rc != 0)
		fail_msg("%s: %s", file, cause);
	if (asprintf(&path, "%s/%s.out.yaml", CORPUS, base) == -1)
		fail();
	want = slurp(path);
	if (want == NULL)
		fail_msg("%s: neither %s.err nor %s.out.yaml", file, base,
		    base);
	free(path);
	got = yaml_of(d.v[0].job);
	if (strcmp(got, want) != 0)
		fail_msg("%s: --dry-run printed\n%s\nbut %s.out.yaml has\n%s",
		    file, got, base, want);
	assert_reads_back(got, d.v[0].job);

	m = open_memstream(&notes_got, &nlen);
	json_array_foreach(notes, i, n)
		fprintf(m, "%s\n", json_string_value(n));
	fclose(m);
	if (asprintf(&path, "%s/%s.notes", CORPUS, base) == -1)
		fail();
	if ((notes_want = slurp(path)) == NULL)
		notes_want = strdup("");
	if (strcmp(notes_got, notes_want) != 0)
		fail_msg("%s: notes\n%s\nbut %s.notes has\n%s", file,
		    notes_got, base, notes_want);
	free(path);
	free(notes_want);
	free(notes_got);
	free(got);
	free(want);
	free(base);
	json_decref(notes);
	cli_docs_done(&d);
	return 1;
}

static void
test_convert_corpus(void **state)
{
	struct dirent	*e;
	DIR		*dir;
	int		 n = 0;

	(void)state;
	dir = opendir(CORPUS);
	assert_non_null(dir);
	while ((e = readdir(dir)) != NULL)
		n += corpus_case(e->d_name);
	closedir(dir);
	/* Every shape the corpus holds was read. */
	assert_true(n >= 16);
}

/* Convert TEXT (YAML) from FROM expecting the error starting WANT. */
static void
assert_refused(const char *from, const char *text, const char *want)
{
	struct cli_docs	 d = { NULL, 0 };
	json_t		*job = NULL;
	char		*cause = NULL;

	assert_int_equal(cli_jobfile_parse("t.yaml", text, strlen(text), &d,
	    &cause), 0);
	assert_int_equal(cli_convert(from, d.v[0].job, &job, NULL, &cause),
	    -EINVAL);
	assert_null(job);
	if (strncmp(cause, want, strlen(want)) != 0)
		fail_msg("got %s\nwant %s", cause, want);
	free(cause);
	cli_docs_done(&d);
}

#define POOL	"workerPoolSpecs: [{replicaCount: 1, machineSpec: " \
		"{machineType: n1-standard-4, " \
		"acceleratorType: NVIDIA_TESLA_T4}, "

static void
test_convert_refusals(void **state)
{
	(void)state;
	/* Both spellings of one key. */
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1}, "
	    "container_spec: {imageUri: a/b:1}}]",
	    "workerPoolSpecs[0].containerSpec: given twice");
	/* A chief of two. */
	assert_refused("vertex", "workerPoolSpecs: [{replicaCount: 2, "
	    "machineSpec: {machineType: n1-standard-4, acceleratorType: "
	    "NVIDIA_TESLA_T4}, containerSpec: {imageUri: a/b:1}}]",
	    "workerPoolSpecs[0]: the first pool is the chief");
	/* Pools 2 and 3. */
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1}}, {}, "
	    "{replicaCount: 1, machineSpec: {machineType: n1-standard-4, "
	    "acceleratorType: NVIDIA_TESLA_T4}, "
	    "containerSpec: {imageUri: a/b:1}}]",
	    "workerPoolSpecs[2]: parameter servers");
	/* No GPU at all. */
	assert_refused("vertex", "workerPoolSpecs: [{machineSpec: "
	    "{machineType: n1-standard-4}, containerSpec: {imageUri: a/b:1}}]",
	    "workerPoolSpecs[0].machineSpec.acceleratorType: missing");
	/* Vertex's $(VAR) expansion, which no other service does. */
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1, env: "
	    "[{name: A, value: \"$(B)/x\"}]}}]",
	    "workerPoolSpecs[0].containerSpec.env[0]: \"$(\"");
	/* A fraction of a second. */
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1}}]\n"
	    "scheduling: {timeout: 1.5s}", "scheduling.timeout:");
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1}}]\n"
	    "scheduling: {strategy: LOW_COST}", "scheduling.strategy: "
	    "\"LOW_COST\" is not offered");
	/* Both kinds of code in one pool. */
	assert_refused("vertex", POOL "containerSpec: {imageUri: a/b:1}, "
	    "pythonPackageSpec: {executorImageUri: a/b:1}}]",
	    "workerPoolSpecs[0]: give exactly one of containerSpec and "
	    "pythonPackageSpec");
	assert_refused("vertex", POOL "pythonPackageSpec: {executorImageUri: "
	    "a/b:1, pythonModule: t.task}}]",
	    "workerPoolSpecs[0].pythonPackageSpec.packageUris: missing");
	/* AI Platform's own machine names. */
	assert_refused("vertex", "trainingInput: {scaleTier: CUSTOM, "
	    "masterType: complex_model_m_gpu}",
	    "trainingInput.masterType: \"complex_model_m_gpu\" is a legacy");
	assert_refused("vertex", "trainingInput: {scaleTier: CUSTOM, "
	    "masterType: n1-standard-8, masterConfig: {imageUri: a/b:1, "
	    "acceleratorConfig: {type: NVIDIA_TESLA_T4, count: 1}}, "
	    "hyperparameters: {goal: MAXIMIZE}}",
	    "trainingInput.hyperparameters: gpuq cannot honour this");
	/* Batch: two task groups, a zone-less location, an array whose
	 * nodes must run together. */
	assert_refused("batch", "taskGroups: [{taskSpec: {}}, {taskSpec: {}}]",
	    "taskGroups[1]: gpuq runs one task group per job");
	assert_refused("batch", "taskGroups: [{taskSpec: {runnables: "
	    "[{container: {imageUri: a/b:1}}]}}]\nallocationPolicy: "
	    "{instances: [{policy: {accelerators: [{type: nvidia-tesla-t4, "
	    "count: 1}]}}], location: {allowedLocations: [us-central1]}}",
	    "allocationPolicy.location.allowedLocations[0]: \"us-central1\" "
	    "is neither");
	assert_refused("batch", "taskGroups: [{taskCount: 4, parallelism: 2, "
	    "requireHostsFile: true, taskSpec: {runnables: [{container: "
	    "{imageUri: a/b:1}}]}}]",
	    "taskGroups[0].parallelism: the nodes of a multi-node job");
	assert_refused("batch", "taskGroups: [{taskSpec: {runnables: "
	    "[{container: {imageUri: a/b:1}}]}}]\nallocationPolicy: "
	    "{instances: [{policy: {provisioningModel: RESERVATION_BOUND, "
	    "accelerators: [{type: nvidia-tesla-t4}]}}]}",
	    "allocationPolicy.instances[0].policy.provisioningModel: "
	    "\"RESERVATION_BOUND\"");
	assert_refused("nomad", "{}", "--from nomad: unknown");
}

/* Strings that must not be written plain, and must read back. */
static void
test_convert_yaml_hostile(void **state)
{
	static const char *const s[] = {
		"yes", "no", "on", "off", "true", "null", "~", "", "10",
		"010", "0x1f", "1e3", ".inf", "-", "- a", "a: b", "a #b",
		"#c", "'q'", "\"q\"", "line\nbreak", "tab\there",
		"\x01\x7f", "[x]", "{x}", "*alias", "&anchor", "!tag",
		"%dir", "@at", "`tick", "|", ">", "?", ":", "a:", " lead",
		"trail ", "\xc3\xa9t\xc3\xa9", "$(VAR)", "'; rm -rf / #",
		"--", "a\\b", "---", "...", "\xc2\x85nel", "a\"b",
	};
	json_t	*o, *a;
	char	*y;
	size_t	 i;

	(void)state;
	o = json_object();
	a = json_array();
	for (i = 0; i < sizeof s / sizeof s[0]; i++) {
		json_array_append_new(a, json_string(s[i]));
		/* As keys too. */
		if (*s[i] != '\0')
			json_object_set_new(o, s[i], json_string(s[i]));
	}
	/* A NUL inside, which plain text would cut short. */
	json_array_append_new(a, json_stringn("nul\0inside", 11));
	json_object_set_new(o, "list", a);
	json_object_set_new(o, "empty", json_object());
	json_object_set_new(o, "none", json_array());
	json_object_set_new(o, "num", json_integer(7));
	json_object_set_new(o, "real", json_real(0.5));
	json_object_set_new(o, "bool", json_false());
	json_object_set_new(o, "nested", json_pack("[[s], {s:[i]}]", "x",
	    "k", 1));
	y = yaml_of(o);
	assert_reads_back(y, o);
	/* Plain where it is safe: the file stays readable. */
	assert_non_null(strstr(y, "\nnum: 7\n"));
	assert_non_null(strstr(y, "  - \"yes\"\n"));
	free(y);
	json_decref(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert_corpus),
		cmocka_unit_test(test_convert_refusals),
		cmocka_unit_test(test_convert_yaml_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
