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
	const char	*version, *install;
	json_t		*reply;
	int64_t		 proto;
	int		 rc;

	if ((reply = cli_call_simple(cli, argc, argv, "ping", NULL,
	    &rc)) == NULL)
		return rc;
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
