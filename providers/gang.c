/*
 * gang.c: what every service's request needs for a multi-node job, a
 * gang (doc/DESIGN.md "Gangs"): the entry wrapper that gives each node
 * its rank and the main node's address on Vertex AI and Cloud Batch,
 * and the shape changes of each service's create body (new functions,
 * so the single-node builders stay as they are).
 *
 * The contract, on every service: GPUQ_NUM_NODES and WORLD_SIZE (N),
 * GPUQ_MAIN_PORT and MASTER_PORT (cloud.c sets those, the same on every
 * node), and per node GPUQ_NODE_RANK, NODE_RANK and RANK (0 is the main
 * node), GPUQ_MAIN_ADDR and MASTER_ADDR. Knows the services' JSON and
 * nothing of SQLite.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"

/*
 * The entry wrapper, run as `/bin/sh -c PROV_GANG_ENTRY gpuq-gang
 * COMMAND... ARGS...`: the job's own words arrive as "$@" and are never
 * read as shell code. What it reads comes from the service:
 *
 *   Vertex AI  CLUSTER_SPEC (API-NOTES N.1): task.type "workerpool0" is
 *              rank 0, "workerpool1" index i is rank i + 1; the main
 *              address is the host of workerpool0's first entry.
 *   Batch      BATCH_TASK_INDEX is the rank (one task per VM); the main
 *              address is the first word of the hosts file's first line
 *              ($BATCH_HOSTS_FILE, requireHostsFile; API-NOTES N.2).
 *
 * sed reads CLUSTER_SPEC, not a JSON parser: images rarely carry one
 * the shell can call, and the fields read are Vertex's own, never a
 * user's. A node that cannot tell its rank stops before the job runs
 * (exit 70), rather than run as a second main node.
 */
const char prov_gang_entry[] =
    "rank=; main=\n"
    "if [ -n \"${CLUSTER_SPEC:-}\" ]; then\n"
    "\tt=$(printf '%s' \"$CLUSTER_SPEC\" | sed -n "
    "'s/.*\"task\" *: *{[^}]*\"type\" *: *\"\\([^\"]*\\)\".*/\\1/p')\n"
    "\ti=$(printf '%s' \"$CLUSTER_SPEC\" | sed -n "
    "'s/.*\"task\" *: *{[^}]*\"index\" *: *\\([0-9][0-9]*\\).*/\\1/p')\n"
    "\tmain=$(printf '%s' \"$CLUSTER_SPEC\" | sed -n "
    "'s/.*\"workerpool0\" *: *\\[ *\"\\([^\"]*\\)\".*/\\1/p')\n"
    "\tmain=${main%:*}\n"
    "\tcase $t in\n"
    "\tworkerpool0) rank=0 ;;\n"
    "\tworkerpool1) rank=$((${i:-0} + 1)) ;;\n"
    "\tesac\n"
    "elif [ -n \"${BATCH_TASK_INDEX:-}\" ]; then\n"
    "\trank=$BATCH_TASK_INDEX\n"
    "\tif [ -r \"${BATCH_HOSTS_FILE:-}\" ]; then\n"
    "\t\tread -r main _ < \"$BATCH_HOSTS_FILE\" || :\n"
    "\tfi\n"
    "fi\n"
    "if [ -z \"$rank\" ] || [ -z \"$main\" ]; then\n"
    "\techo 'gpuq: cannot tell this node'\"'\"'s rank or the main "
    "node (no CLUSTER_SPEC, BATCH_TASK_INDEX or hosts file)' >&2\n"
    "\texit 70\n"
    "fi\n"
    "GPUQ_NODE_RANK=$rank NODE_RANK=$rank RANK=$rank\n"
    "GPUQ_MAIN_ADDR=$main MASTER_ADDR=$main\n"
    "export GPUQ_NODE_RANK NODE_RANK RANK GPUQ_MAIN_ADDR MASTER_ADDR\n"
    "exec \"$@\"\n";

/* The name "$0" takes inside the wrapper: shells print it in errors. */
#define PROV_GANG_ARGV0	"gpuq-gang"

int
prov_gang_nodes(const struct prov_launch *l)
{
	return l->nodes > 1 ? l->nodes : 1;
}

json_t *
prov_gang_argv(const struct prov_launch *l)
{
	json_t	*argv, *v;
	size_t	 i;

	argv = prov_checked(json_pack("[s, s, s, s]", "/bin/sh", "-c",
	    prov_gang_entry, PROV_GANG_ARGV0));
	json_array_foreach(l->command, i, v)
		if (json_array_append(argv, v) != 0)
			fatalx("gang: out of memory building a request");
	json_array_foreach(l->args, i, v)
		if (json_array_append(argv, v) != 0)
			fatalx("gang: out of memory building a request");
	return argv;
}

char *
prov_gang_node_name(const char *resource, int rank)
{
	return xprintf("%s-%d", resource, rank);
}

int
prov_gang_node_parse(const char *name, char *resource, size_t size,
    int *ret_rank)
{
	const char	*dash, *p;
	int64_t		 job;
	int		 attempt, rank = 0;
	size_t		 n;

	if (name == NULL || (dash = strrchr(name, '-')) == NULL ||
	    dash[1] == '\0')
		return -EINVAL;
	for (p = dash + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || rank > 999)
			return -EINVAL;
		rank = rank * 10 + (*p - '0');
	}
	n = (size_t)(dash - name);
	if (n + 1 > size)
		return -EINVAL;
	memcpy(resource, name, n);
	resource[n] = '\0';
	/* gpuq-<install>-<job>-<attempt> must be left: else no node. */
	if (prov_name_parse(resource, &job, &attempt) != 0 ||
	    strchr(resource + 5, '-') == NULL ||
	    strchr(strchr(resource + 5, '-') + 1, '-') == NULL)
		return -EINVAL;
	*ret_rank = rank;
	return 0;
}

/*
 * Vertex AI (API-NOTES N.1): workerPoolSpecs[0] the main node, replica
 * count 1; workerPoolSpecs[1] the other N - 1 with the same machine,
 * disk and container. Both run the wrapper, which reads Vertex's
 * CLUSTER_SPEC. restartJobOnWorkerRestart: a worker Vertex restarts
 * alone could not rejoin a running NCCL group, so the whole job
 * restarts instead (and resumes from its checkpoint).
 */
void
vertex_gang_apply(const struct prov_launch *l, json_t *body)
{
	json_t	*spec, *pools, *main, *c, *rest;
	char	*s;

	if (prov_gang_nodes(l) < 2)
		return;
	spec = json_object_get(body, "jobSpec");
	pools = json_object_get(spec, "workerPoolSpecs");
	main = json_array_get(pools, 0);
	c = json_object_get(main, "containerSpec");
	prov_set(c, "command", prov_gang_argv(l));
	(void)json_object_del(c, "args");
	rest = prov_checked(json_deep_copy(main));
	s = xprintf("%d", prov_gang_nodes(l) - 1);
	prov_set(rest, "replicaCount", json_string(s));
	free(s);
	if (json_array_append_new(pools, rest) != 0)
		fatalx("gang: out of memory building a request");
	prov_set(json_object_get(spec, "scheduling"),
	    "restartJobOnWorkerRestart", json_true());
}

/*
 * Cloud Batch (API-NOTES N.2): one task group of N tasks, all at once
 * (parallelism N), one task per VM, a hosts file and SSH between the
 * VMs as Google's multi-node samples ask; the wrapper takes the rank
 * from BATCH_TASK_INDEX. maxRetryCount stays 0: a task Batch retried
 * alone would come back to peers that have moved on, so gpuqd relaunches
 * the whole gang instead. The VMs are asked to be collocated.
 */
void
batch_gang_apply(const struct prov_launch *l, json_t *body)
{
	json_t	*tg, *c, *argv, *cmds, *alloc;
	char	*s;
	size_t	 i;

	if (prov_gang_nodes(l) < 2)
		return;
	tg = json_array_get(json_object_get(body, "taskGroups"), 0);
	s = xprintf("%d", prov_gang_nodes(l));
	prov_set(tg, "taskCount", json_string(s));
	prov_set(tg, "parallelism", json_string(s));
	free(s);
	prov_set(tg, "taskCountPerNode", json_string("1"));
	prov_set(tg, "requireHostsFile", json_true());
	prov_set(tg, "permissiveSsh", json_true());
	prov_set(json_object_get(tg, "taskSpec"), "maxRetryCount",
	    json_integer(0));

	c = json_object_get(json_array_get(json_object_get(json_object_get(
	    tg, "taskSpec"), "runnables"), 0), "container");
	argv = prov_gang_argv(l);
	prov_set(c, "entrypoint", json_string(json_string_value(
	    json_array_get(argv, 0))));
	cmds = prov_checked(json_array());
	for (i = 1; i < json_array_size(argv); i++)
		if (json_array_append(cmds, json_array_get(argv, i)) != 0)
			fatalx("gang: out of memory building a request");
	prov_set(c, "commands", cmds);
	json_decref(argv);

	alloc = json_object_get(body, "allocationPolicy");
	prov_set(alloc, "placement", json_pack("{s:s}", "collocation",
	    "COLLOCATED"));
}

/*
 * A task of a Batch gang that failed (a preempted VM: 50001; API-NOTES
 * N.2) while its job still runs: gpuq never lets Batch retry it, and
 * whether Batch fails the job at once or only once the other tasks have
 * ended is not documented. The others cannot go on without it, so the
 * gang is reported lost (an interruption) at once, and gpuqd deletes the
 * job and relaunches the whole gang. status.taskGroups maps each group
 * to its counts by task state (int64 as strings).
 */
void
batch_gang_map(json_t *job, struct prov_observed *o, struct prov_text *t)
{
	const char	*k, *n;
	json_t		*tg;

	if (o->state != PROV_RUNNING)
		return;
	json_object_foreach(json_object_get(json_object_get(job, "status"),
	    "taskGroups"), k, tg) {
		n = json_string_value(json_object_get(json_object_get(tg,
		    "counts"), "FAILED"));
		if (n == NULL || strcmp(n, "0") == 0)
			continue;
		o->state = PROV_LOST;
		(void)snprintf(t->message, sizeof t->message, "%s of the "
		    "job's tasks failed while the others ran; a multi-node "
		    "job goes on only whole", n);
		o->message = t->message;
		return;
	}
}
