/*
 * cli-doctor.c: gpuq doctor: gpuqd checks everything a first launch in
 * a real project needs (daemon/doctor.c) and this prints one line per
 * check, "ok" or "FAIL" with what is wrong and the fix. The exit status
 * is 0 only when every check passed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"

/* One check: "ok   project: gpuq-demo is active" or FAIL and its fix. */
static void
cli_doctor_line(json_t *c)
{
	const char	*check = cli_json_str(c, "check");
	const char	*detail = cli_json_str(c, "detail");
	const char	*fix = cli_json_str(c, "fix");
	int		 ok = json_is_true(json_object_get(c, "ok"));

	printf("%-4s %s%s%s\n", ok ? "ok" : "FAIL", check ? check : "?",
	    detail ? ": " : "", detail ? detail : "");
	if (!ok && fix != NULL)
		printf("     fix: %s\n", fix);
}

int
cli_doctor_exec(struct cli *cli, int argc, char **argv)
{
	json_t		*reply, *checks, *c;
	size_t		 i;
	int		 rc, json = 0, failed;

	if ((reply = cli_call_simple(cli, argc, argv, "doctor", &json,
	    &rc)) == NULL)
		return rc;
	checks = json_object_get(reply, "checks");
	failed = (int)cli_json_int(reply, "failed", 1);
	if (json) {
		json_object_del(reply, "ok");
		json_dumpf(reply, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		json_array_foreach(checks, i, c)
			cli_doctor_line(c);
		if (failed > 0)
			printf("%d of %zu checks failed\n", failed,
			    json_array_size(checks));
		else
			printf("all %zu checks passed\n",
			    json_array_size(checks));
	}
	json_decref(reply);
	return failed > 0 ? GPUQ_EXIT_FAILED : GPUQ_EXIT_OK;
}
