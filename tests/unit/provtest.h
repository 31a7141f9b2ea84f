/*
 * provtest.h: what the unit tests of the request builders and response
 * mappers (test-vertex.c, test-batch.c, test-gce.c) share: one launch
 * to build bodies from, a JSON path lookup for asserting on them, and a
 * parser for the resources a mapper is fed.
 *
 * Test code only; knows no one service's JSON.
 */
#ifndef GPUQ_PROVTEST_H
#define GPUQ_PROVTEST_H

#include <jansson.h>

#include "providers/provider.h"

/* A launch and the JSON parts it borrows, which the fixture owns. */
struct provtest {
	struct prov_launch	 l;
	json_t			*command, *args, *env, *labels;
};

/*
 * A new fixture, taking COMMAND, ARGS and ENV: attempt 2 of job 42 of
 * install "i1" (gpuq-i1-42-2, request id 0b6ce5a2-...), Spot, T4s in
 * us-central1, image us-docker.pkg.dev/p/r/train:1, output
 * gs://b/runs/42/, labels {"team":"vision"}, no zone. The caller sets
 * the rest: machine type, GPU count, max_runtime, zone.
 */
struct provtest	*provtest_new(json_t *command, json_t *args, json_t *env);
/* cmocka teardown: free the provtest_new() fixture in *STATE. */
int		 provtest_teardown(void **state);
/* The value at PATH ("a.b.0.c": numbers index arrays) in J, or NULL.
 * Borrowed from J. */
json_t		*provtest_at(json_t *j, const char *path);
/* The string at PATH in J (borrowed), or NULL. */
const char	*provtest_str(json_t *j, const char *path);
/* TEXT parsed: a new value, or the test fails naming the error. */
json_t		*provtest_json(const char *text);
/*
 * Run ARGV (a JSON array of strings, as a container's command) with the
 * environment ENVP (NULL-terminated "K=V" strings) and return what it
 * wrote to stdout (new string) in *RET_OUT: its exit status, or the
 * test fails if it could not run. Used to run the gang entry wrapper.
 */
int		 provtest_run(json_t *argv, char *const *envp,
		    char **ret_out);

#endif
