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
	const char	*text;
	json_t		*reply;
	int		 rc;

	if ((reply = cli_call_simple(cli, argc, argv, "metrics", NULL,
	    &rc)) == NULL)
		return rc;
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
