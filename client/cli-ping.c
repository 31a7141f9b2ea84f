/*
 * cli-ping.c: gpuq ping: is gpuqd there, which version, which install,
 * and does it speak our protocol.
 */
#include "config.h"

#include <stdio.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"

int
cli_ping_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("ping");
	const char			*version, *install;
	json_t				*reply;
	int64_t				 proto;
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
	reply = cli_call(cli, json_pack("{s:s}", "op", "ping"));
	if (reply == NULL)
		return GPUQ_EXIT_FAILED;
	if (!cli_reply_ok(reply)) {
		cli_reply_warn(reply, "ping");
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
	version = cli_json_str(reply, "version");
	install = cli_json_str(reply, "install");
	proto = cli_json_int(reply, "proto", GPUQ_PROTO_VERSION);
	printf("gpuqd %s at %s", version ? version : "(unknown version)",
	    cli->socket);
	if (install != NULL)
		printf(", install %s", install);
	printf(", protocol %lld\n", (long long)proto);
	if (proto != GPUQ_PROTO_VERSION)
		cli_warnx("gpuqd speaks protocol %lld and this gpuq %d; "
		    "install matching versions", (long long)proto,
		    GPUQ_PROTO_VERSION);
	json_decref(reply);
	return GPUQ_EXIT_OK;
}
