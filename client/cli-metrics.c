/*
 * cli-metrics.c: gpuq metrics: gpuqd's numbers in the Prometheus text
 * format, as its metrics op sends them (the list is in gpuqd(8)).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"

int
cli_metrics_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("metrics");
	const char			*text;
	json_t				*reply;
	int				 ch;

	while ((ch = cli_getopt(argc, argv, "h", opts, cmd)) != -1) {
		if (ch == 'h')
			return GPUQ_EXIT_OK;
		return GPUQ_EXIT_USAGE;
	}
	if (optind != argc) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	reply = cli_call(cli, json_pack("{s:s}", "op", "metrics"));
	if (reply == NULL)
		return GPUQ_EXIT_FAILED;
	if (!cli_reply_ok(reply)) {
		cli_reply_warn(reply, "metrics");
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
	text = cli_json_str(reply, "text");
	if (text == NULL) {
		cli_warnx("gpuqd sent no metrics text; is it older than "
		    "this gpuq?");
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
	(void)fwrite(text, 1, strlen(text), stdout);
	json_decref(reply);
	return GPUQ_EXIT_OK;
}
