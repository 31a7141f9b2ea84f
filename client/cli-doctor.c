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
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("doctor");
	json_t				*reply, *checks, *c;
	size_t				 i;
	int				 ch, json = 0, failed;

	while ((ch = cli_getopt(argc, argv, "h", opts, cmd)) != -1) {
		if (ch == 'j') {
			json = 1;
			continue;
		}
		if (ch == 'h')
			return GPUQ_EXIT_OK;
		return GPUQ_EXIT_USAGE;
	}
	if (optind != argc) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	reply = cli_call(cli, json_pack("{s:s}", "op", "doctor"));
	if (reply == NULL)
		return GPUQ_EXIT_FAILED;
	if (!cli_reply_ok(reply)) {
		cli_reply_warn(reply, "doctor");
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
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
