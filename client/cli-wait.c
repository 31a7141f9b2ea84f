/*
 * cli-wait.c: gpuq wait, and submit --wait (gpuq(1) "wait").
 *
 * One request, {"op":"wait","ids":[…],"timeout":S}, that gpuqd answers
 * when every job has ended (or S seconds have passed): the client does
 * not poll. It waits on a connection of its own with no read timeout.
 * When gpuqd restarts meanwhile ("gpuqd is stopping", or the connection
 * drops) the client asks again on a new connection, for up to
 * CLI_WAIT_GONE_SEC while gpuqd cannot be reached; the jobs are in
 * gpuqd's queue on disk and their story goes on.
 *
 * Exit status: 0 when every job succeeded, 1 when one failed or was
 * cancelled (or gpuqd refused the request), GPUQ_EXIT_TIMEOUT when time
 * ran out with none of them failed, GPUQ_EXIT_UNREACHABLE when gpuqd
 * stayed away.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/duration.h"
#include "common/proto.h"
#include "common/xmalloc.h"

#define CLI_WAIT_GONE_SEC	120	/* gpuqd away this long: give up */
#define CLI_WAIT_RETRY_MS	1000

static int64_t
cli_wait_now_ms(void)
{
	struct timespec	ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
cli_wait_sleep_ms(int64_t ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* What a job in STATE makes of the exit status. */
static int
cli_wait_status(const char *state)
{
	if (state != NULL && strcmp(state, "succeeded") == 0)
		return GPUQ_EXIT_OK;
	if (state == NULL || strcmp(state, "failed") == 0 ||
	    strcmp(state, "cancelled") == 0 || strcmp(state, "unknown") == 0)
		return GPUQ_EXIT_FAILED;
	return GPUQ_EXIT_TIMEOUT;	/* still live */
}

/* "job 42 train: succeeded, 2 attempts, 1 interruption, $…" */
static void
cli_wait_line(json_t *j)
{
	const char	*state = cli_json_str(j, "state"), *msg;
	int64_t		 id = cli_json_int(j, "id", 0), n;
	char		 usd[160];

	if (state == NULL)
		state = "unknown";
	printf("job %lld %s: %s", (long long)id, cli_json_str(j, "name") ?
	    cli_json_str(j, "name") : "-", state);
	if (strcmp(state, "failed") == 0 &&
	    cli_json_int(j, "exit_code", -1) >= 0)
		printf(" (exit %lld)", (long long)cli_json_int(j, "exit_code",
		    -1));
	n = cli_json_int(j, "attempts", 0);
	printf(", %lld attempt%s", (long long)n, n == 1 ? "" : "s");
	n = cli_json_int(j, "interruptions", 0);
	if (n > 0)
		printf(", %lld interruption%s", (long long)n, n == 1 ? "" :
		    "s");
	printf(", %s", cli_fmt_saving(cli_json_num(j, "cost_usd", 0),
	    cli_json_num(j, "baseline_usd", 0), usd, sizeof usd));
	msg = cli_json_str(j, "message");
	if (msg != NULL && strcmp(state, "succeeded") != 0)
		printf(": %s", msg);
	printf("\n");
}

int
cli_wait_jobs(struct cli *cli, const int64_t *ids, size_t n,
    int64_t timeout_sec, int quiet)
{
	struct cli_conn	*conn = NULL;
	json_t		*req, *arr, *reply = NULL, *j;
	int64_t		 deadline = 0, gone_since = 0, left, now;
	char		*cause = NULL;
	size_t		 i;
	int		 rc, st, any_failed = 0, any_live = 0, said = 0;

	if (timeout_sec >= 0)
		deadline = cli_wait_now_ms() + timeout_sec * 1000;
	for (;;) {
		req = json_object();
		arr = json_array();
		for (i = 0; i < n; i++)
			(void)json_array_append_new(arr,
			    json_integer((json_int_t)ids[i]));
		(void)json_object_set_new(req, "op", json_string("wait"));
		(void)json_object_set_new(req, "ids", arr);
		if (deadline != 0) {
			left = deadline - cli_wait_now_ms();
			(void)json_object_set_new(req, "timeout",
			    json_real(left > 0 ? left / 1000.0 : 0));
		}
		rc = cli_conn_open(cli->socket, 0, &conn, &cause);
		if (rc == 0)
			rc = cli_conn_send(conn, req, &cause);
		if (rc == 0)
			rc = cli_conn_recv(conn, &reply, &cause);
		json_decref(req);
		cli_conn_free(conn);
		conn = NULL;
		if (rc == 0 && !cli_reply_ok(reply) &&
		    strcmp(cli_json_str(json_object_get(reply, "error"),
		    "code") ? cli_json_str(json_object_get(reply, "error"),
		    "code") : "", GPUQ_ERR_BUSY) == 0) {
			/* gpuqd is stopping: as if it had gone. */
			rc = -EAGAIN;
			free(cause);
			cause = xstrdup(cli_json_str(json_object_get(reply,
			    "error"), "message"));
			json_decref(reply);
			reply = NULL;
		}
		if (rc == 0)
			break;
		now = cli_wait_now_ms();
		if (gone_since == 0)
			gone_since = now;
		if (!said) {
			cli_warnx("wait: %s; asking again until it answers",
			    cause != NULL ? cause : "gpuqd went away");
			said = 1;
		}
		free(cause);
		cause = NULL;
		if (now - gone_since >= CLI_WAIT_GONE_SEC * 1000) {
			cli_warnx("wait: gpuqd did not come back in %ds; the "
			    "jobs are still in its queue (gpuq show ID)",
			    CLI_WAIT_GONE_SEC);
			return GPUQ_EXIT_UNREACHABLE;
		}
		if (deadline != 0 && now >= deadline)
			return GPUQ_EXIT_TIMEOUT;
		cli_wait_sleep_ms(CLI_WAIT_RETRY_MS);
	}
	if (!cli_reply_ok(reply)) {
		rc = cli_reply_warn(reply, "wait");
		json_decref(reply);
		return rc;
	}
	json_array_foreach(json_object_get(reply, "jobs"), i, j) {
		if (!quiet)
			cli_wait_line(j);
		st = cli_wait_status(cli_json_str(j, "state"));
		if (st == GPUQ_EXIT_FAILED)
			any_failed = 1;
		else if (st == GPUQ_EXIT_TIMEOUT)
			any_live = 1;
	}
	json_decref(reply);
	if (any_failed)
		return GPUQ_EXIT_FAILED;
	return any_live ? GPUQ_EXIT_TIMEOUT : GPUQ_EXIT_OK;
}

/* "--timeout 90s": seconds, or -1 and a message. */
int64_t
cli_wait_timeout(const char *arg)
{
	int64_t	sec;

	if (duration_parse(arg, &sec) != 0 || sec < 0) {
		cli_warnx("--timeout '%s' is not a duration: give seconds or "
		    "90s, 15m, 2h, 1d", arg);
		return -1;
	}
	return sec;
}

int
cli_wait_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("wait");
	int64_t				*ids, timeout = -1;
	int				 ch, i, n, quiet = 0, rc;

	while ((ch = cli_getopt(argc, argv, "t:qh", opts, cmd)) != -1) {
		switch (ch) {
		case 't':
			if ((timeout = cli_wait_timeout(optarg)) < 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		cli_warnx("wait: which job? give one or more ids");
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	n = argc - optind;
	ids = xcalloc((size_t)n, sizeof *ids);
	for (i = 0; i < n; i++)
		if (cli_parse_id(argv[optind + i], &ids[i]) != 0) {
			cli_warnx("'%s' is not a job id (a positive integer)",
			    argv[optind + i]);
			free(ids);
			return GPUQ_EXIT_USAGE;
		}
	rc = cli_wait_jobs(cli, ids, (size_t)n, timeout, quiet);
	free(ids);
	return rc;
}
