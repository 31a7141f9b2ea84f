/*
 * cli-job.c: gpuq cancel, hold and release: one request per id, going
 * on after a failure, so "gpuq cancel 4 5 6" does what it can and says
 * what it could not. Whether a change is allowed is gpuqd's to say.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"
#include "common/xmalloc.h"

/* What each op is called once done, for "cancelled job 42". */
static const struct {
	const char	*op;
	const char	*done;
} job_ops[] = {
	{ "cancel", "cancelled" },
	{ "hold", "held" },
	{ "release", "released" },
};

int
cli_job_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = NULL;
	const char			*op = NULL, *done = NULL, *state;
	json_t				*reply, **ids;
	const char			*id;
	int				 ch, i, n, rc = GPUQ_EXIT_OK;
	size_t				 k;

	/* main() makes argv[0] "gpuq OP". */
	for (k = 0; k < sizeof job_ops / sizeof job_ops[0]; k++) {
		if (strncmp(argv[0], "gpuq ", 5) == 0 &&
		    strcmp(argv[0] + 5, job_ops[k].op) == 0) {
			op = job_ops[k].op;
			done = job_ops[k].done;
			cmd = cli_cmd_find(op);
		}
	}
	if (cmd == NULL)
		return GPUQ_EXIT_USAGE;
	while ((ch = cli_getopt(argc, argv, "h", opts, cmd)) != -1) {
		if (ch == 'h')
			return GPUQ_EXIT_OK;
		return GPUQ_EXIT_USAGE;
	}
	if (optind == argc) {
		cli_warnx("%s: which job? give one or more ids", op);
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	/* Check every id before changing anything. */
	n = argc - optind;
	ids = xcalloc((size_t)n, sizeof *ids);
	for (i = 0; i < n; i++) {
		if ((ids[i] = cli_job_ref(argv[optind + i])) == NULL) {
			cli_warnx("'%s' is not a job id (a positive integer, "
			    "or ARRAY.TASK for one task of an array)",
			    argv[optind + i]);
			while (i-- > 0)
				json_decref(ids[i]);
			free(ids);
			return GPUQ_EXIT_USAGE;
		}
	}
	for (i = 0; i < n; i++) {
		id = argv[optind + i];
		reply = cli_call(cli, json_pack("{s:s, s:o}", "op", op, "id",
		    ids[i]));
		if (reply == NULL) {
			rc = GPUQ_EXIT_FAILED;
			continue;
		}
		if (!cli_reply_ok(reply)) {
			rc = cli_reply_warn(reply, "%s job %s", op, id);
			json_decref(reply);
			continue;
		}
		state = cli_json_str(reply, "state");
		if (state != NULL && strcmp(op, "cancel") == 0 &&
		    strcmp(state, "cancelled") != 0)
			/* Cloud resources first: gpuqd finishes it later. */
			printf("cancelling job %s: its cloud resource is "
			    "being deleted\n", id);
		else if (json_is_integer(json_object_get(reply, "tasks")))
			printf("%s job %s (%lld task%s)\n", done, id,
			    (long long)cli_json_int(reply, "tasks", 0),
			    cli_json_int(reply, "tasks", 0) == 1 ? "" : "s");
		else
			printf("%s job %s\n", done, id);
		json_decref(reply);
	}
	free(ids);
	return rc;
}
