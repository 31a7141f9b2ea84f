/*
 * cli-logs.c: gpuq logs [-f] ID, what the training printed, oldest
 * first, from Cloud Logging through gpuqd (which holds the credentials
 * and reads for every client with one query per interval; doc/DESIGN.md
 * "Logs").
 *
 * The daemon answers at once with what it holds past our cursor; we ask
 * again until it says it has caught up (or, with -f, until the job's
 * output has ended). Between two attempts a marker line says why the
 * first ended and where the next resumed from.
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

#define LOGS_POLL_MS		1000	/* between asks while following */
#define LOGS_CATCHUP_MS		250	/* while gpuqd reads the first time */

struct logs_out {
	int	 tty;		/* stdout is a terminal: no raw controls */
	int	 last;		/* attempt of the last line printed */
};

static void
logs_sleep(int ms)
{
	struct timespec	 ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* The attempt numbered N in the reply's "attempts", or NULL. */
static json_t *
logs_attempt(json_t *reply, int64_t n)
{
	json_t	*a;
	size_t	 i;

	json_array_foreach(json_object_get(reply, "attempts"), i, a) {
		if (cli_json_int(a, "number", 0) == n)
			return a;
	}
	return NULL;
}

/* "--- attempt 1 ended: preempted (...); attempt 2 resumed from X ---" */
static void
logs_marker(json_t *reply, int from, int to)
{
	json_t		*a, *b;
	const char	*end, *msg, *from_ckpt;
	int		 k;

	for (k = from; k < to; k++) {
		a = logs_attempt(reply, k);
		b = logs_attempt(reply, k + 1);
		end = a != NULL ? cli_json_str(a, "end") : NULL;
		msg = a != NULL ? cli_json_str(a, "message") : NULL;
		from_ckpt = b != NULL ? cli_json_str(b, "resumed_from") : NULL;
		printf("--- attempt %d ended: %s", k, end != NULL ? end :
		    "unknown");
		if (msg != NULL && *msg != '\0')
			printf(" (%s)", msg);
		if (from_ckpt != NULL)
			printf("; attempt %d resumed from %s ---\n", k + 1,
			    from_ckpt);
		else
			printf("; attempt %d started from the beginning ---\n",
			    k + 1);
	}
}

/* One line: its time to the millisecond, attempt and node when there
 * are several, and the text (control characters shown as '?' on a
 * terminal, so output cannot drive it). */
static void
logs_print(struct logs_out *o, json_t *reply, json_t *line)
{
	const char	*t = cli_json_str(line, "time"), *text;
	int64_t		 att = cli_json_int(line, "attempt", 0);
	int64_t		 node = cli_json_int(line, "node", 0);
	size_t		 natt, i;
	char		*s;

	natt = json_array_size(json_object_get(reply, "attempts"));
	if (o->last > 0 && att > o->last)
		logs_marker(reply, o->last, (int)att);
	if (att > o->last)
		o->last = (int)att;
	if (t != NULL && strlen(t) >= 23)
		printf("%.23sZ", t);
	else
		printf("%s", t != NULL ? t : "-");
	if (natt > 1)
		printf(" [%lld", (long long)att);
	if (cli_json_int(reply, "nodes", 1) > 1)
		printf("%s%lld", natt > 1 ? "/" : " [", (long long)node);
	if (natt > 1 || cli_json_int(reply, "nodes", 1) > 1)
		printf("]");
	text = cli_json_str(line, "text");
	s = strdup(text != NULL ? text : "");
	if (s == NULL)
		return;
	for (i = 0; o->tty && s[i] != '\0'; i++) {
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
			s[i] = '?';
		else if ((unsigned char)s[i] == 0x7f)
			s[i] = '?';
	}
	printf(" %s\n", s);
	free(s);
}

int
cli_logs_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "attempt", required_argument, NULL, 'a' },
		{ "node", required_argument, NULL, 'N' },
		{ "since", required_argument, NULL, 'S' },
		{ "tail", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("logs");
	struct logs_out			 o;
	json_t				*req, *reply, *line;
	int64_t				 id, cursor = 0, v, since = -1;
	int64_t				 attempt = 0, node = -1, tail = 0;
	const char			*state;
	size_t				 i;
	int				 ch, follow = 0, more, caught, end;
	char				*endp;

	while ((ch = cli_getopt(argc, argv, "fa:N:n:h", opts, cmd)) != -1) {
		switch (ch) {
		case 'f':
			follow = 1;
			break;
		case 'a':
		case 'N':
		case 'n':
			errno = 0;
			v = strtoll(optarg, &endp, 10);
			if (errno != 0 || *endp != '\0' || endp == optarg ||
			    v < (ch == 'N' ? 0 : 1)) {
				cli_warnx("logs: --%s takes a number%s, not "
				    "\"%s\"", ch == 'a' ? "attempt" :
				    ch == 'N' ? "node" : "tail", ch == 'N' ?
				    " from 0" : " from 1", optarg);
				return GPUQ_EXIT_USAGE;
			}
			if (ch == 'a')
				attempt = v;
			else if (ch == 'N')
				node = v;
			else
				tail = v;
			break;
		case 'S':
			if (duration_parse(optarg, &v) != 0 || v < 0) {
				cli_warnx("logs: --since takes a duration "
				    "such as 90s, 10m or 2h, not \"%s\"",
				    optarg);
				return GPUQ_EXIT_USAGE;
			}
			since = (int64_t)time(NULL) - v;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || cli_parse_id(argv[optind], &id) != 0) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	memset(&o, 0, sizeof o);
	o.tty = isatty(STDOUT_FILENO);
	for (;;) {
		req = json_pack("{s:s, s:I, s:I}", "op", "logs", "id",
		    (json_int_t)id, "cursor", (json_int_t)cursor);
		if (attempt > 0)
			json_object_set_new(req, "attempt",
			    json_integer(attempt));
		if (node >= 0)
			json_object_set_new(req, "node", json_integer(node));
		if (since >= 0)
			json_object_set_new(req, "since", json_integer(since));
		if (tail > 0)
			json_object_set_new(req, "tail", json_integer(tail));
		reply = cli_call(cli, req);
		if (reply == NULL)
			return GPUQ_EXIT_FAILED;
		if (!cli_reply_ok(reply)) {
			cli_reply_warn(reply, "logs %lld", (long long)id);
			json_decref(reply);
			return GPUQ_EXIT_FAILED;
		}
		json_array_foreach(json_object_get(reply, "lines"), i, line)
			logs_print(&o, reply, line);
		(void)fflush(stdout);
		cursor = cli_json_int(reply, "cursor", cursor);
		more = json_is_true(json_object_get(reply, "more"));
		caught = json_is_true(json_object_get(reply, "caught_up"));
		end = json_is_true(json_object_get(reply, "end"));
		if (json_integer_value(json_object_get(reply, "dropped")) > 0)
			cli_warnx("logs: %lld older lines were let go by gpuqd "
			    "before they could be shown", (long long)
			    json_integer_value(json_object_get(reply,
			    "dropped")));
		if (!more && (end || (!follow && caught))) {
			state = cli_json_str(reply, "state");
			if (follow && state != NULL)
				printf("--- job %lld %s ---\n", (long long)id,
				    state);
			json_decref(reply);
			return GPUQ_EXIT_OK;
		}
		json_decref(reply);
		if (!more)
			logs_sleep(caught ? LOGS_POLL_MS : LOGS_CATCHUP_MS);
		/* --tail picks its lines once; then we follow from there. */
		if (caught)
			tail = 0;
	}
}
