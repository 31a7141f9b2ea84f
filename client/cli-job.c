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
	json_t				*reply;
	int64_t				*ids, id;
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
		if (cli_parse_id(argv[optind + i], &ids[i]) != 0) {
			cli_warnx("'%s' is not a job id (a positive integer)",
			    argv[optind + i]);
			free(ids);
			return GPUQ_EXIT_USAGE;
		}
	}
	for (i = 0; i < n; i++) {
		id = ids[i];
		reply = cli_call(cli, json_pack("{s:s, s:I}", "op", op, "id",
		    (json_int_t)id));
		if (reply == NULL) {
			rc = GPUQ_EXIT_FAILED;
			continue;
		}
		if (!cli_reply_ok(reply)) {
			rc = cli_reply_warn(reply, "%s job %lld", op,
			    (long long)id);
			json_decref(reply);
			continue;
		}
		state = cli_json_str(reply, "state");
		if (state != NULL && strcmp(op, "cancel") == 0 &&
		    strcmp(state, "cancelled") != 0)
			/* Cloud resources first: gpuqd finishes it later. */
			printf("cancelling job %lld: its cloud resource is "
			    "being deleted\n", (long long)id);
		else
			printf("%s job %lld\n", done, (long long)id);
		json_decref(reply);
	}
	free(ids);
	return rc;
}
