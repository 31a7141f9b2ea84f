/*
 * gpuq.c: the gpuq command: global options, the command table, and the
 * request helpers every command uses (connect on first use, errors as
 * people read them, exit codes of gpuq(1)).
 *
 * The client never decides anything about jobs: it sends what the user
 * typed and shows what gpuqd answers. It never runs a shell.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
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

#define CLI_TIMEOUT_DEFAULT	30	/* seconds */
#define CLI_BUSY_FIRST_MS	20	/* first wait after a "busy" reply */
#define CLI_BUSY_MAX_MS		1000	/* longest wait between tries */

/*
 * The commands. A new command is one line here plus its handler; the
 * help text, "gpuq help" and the unknown-command message follow.
 */
const struct cli_cmd cli_cmds[] = {
	{ "submit", cli_submit_exec,
	  "[-q] [--hold] [--name NAME] [--priority N] [--after ID[,ID...]] "
	  "[--from vertex|batch] [--dry-run] [--wait [--timeout DUR]] "
	  "FILE|-",
	  "queue the job(s) in a YAML or JSON file",
	  "  -q, --quiet          print only the new job id(s)\n"
	  "      --hold           queue the job(s) held: they start after "
	  "'gpuq release'\n"
	  "      --name NAME      set the job name (overrides the file)\n"
	  "      --priority N     set the priority; higher runs first "
	  "(overrides the file)\n"
	  "      --from vertex    FILE is a Vertex AI CustomJob (as gcloud ai "
	  "custom-jobs\n"
	  "                       create --config takes it) or an AI "
	  "Platform trainingInput\n"
	  "      --from batch     FILE is a Cloud Batch job (JSON or YAML)\n"
	  "      --dry-run        print the job(s) as gpuq YAML and submit "
	  "nothing\n"
	  "      --after ID,...   start only after these jobs (or whole "
	  "arrays)\n"
	  "                       succeeded; added to the file's after\n"
	  "      --wait           then wait for them to end, as 'gpuq wait' "
	  "does\n"
	  "                       (its lines and exit status)\n"
	  "      --timeout DUR    with --wait: give up waiting after DUR\n"
	  "  FILE may hold several jobs (YAML documents separated by '---',\n"
	  "  or a JSON array): each is submitted. '-' reads standard "
	  "input.\n"
	  "  A job's after: may name an earlier job of the file by its "
	  "name.\n"
	  "  Warnings about an accepted job (Spot without a checkpoint "
	  "place) go\n"
	  "  to standard error.\n" },
	{ "status", cli_status_exec,
	  "[--all] [--expand] [--state S[,S...]] [--user USER] [--limit N] "
	  "[--json]",
	  "list active jobs: where they run, for how long, cost, why they "
	  "wait",
	  "  -a, --all            include finished jobs (succeeded, failed, "
	  "cancelled)\n"
	  "      --state S,...    only jobs in these states: held, queued, "
	  "launching,\n"
	  "                       pending, running, cancelling, succeeded, "
	  "failed,\n"
	  "                       cancelled\n"
	  "  -u, --user USER      only jobs of USER (a name or a uid)\n"
	  "  -n, --limit N        show at most N jobs (on a terminal the "
	  "default is\n"
	  "                       the first 100 active jobs)\n"
	  "      --json           print the jobs as a JSON array, as gpuqd "
	  "sends them\n"
	  "      --expand         list each task of an array (ID.TASK), not "
	  "one line\n"
	  "                       per array (ID[0-N])\n"
	  "  WHY goes whole under its job when the table is wider than the\n"
	  "  terminal (or $COLUMNS).\n" },
	{ "show", cli_show_exec, "[--json] ID",
	  "tell one job's story: spec, attempts, events",
	  "      --json           print gpuqd's reply as JSON\n"
	  "  ID is a job, an array (its summary and tasks) or one task "
	  "(42.3).\n" },
	{ "wait", cli_wait_exec, "[--timeout DUR] [-q] ID...",
	  "wait for jobs to end; exit 0 if all succeeded",
	  "  -t, --timeout DUR    give up after DUR (90s, 15m, 2h, 1d)\n"
	  "  -q, --quiet          print nothing; the exit status says it\n"
	  "  Prints a line per job when all have ended: its state, "
	  "attempts,\n"
	  "  interruptions, cost and saving. Exit status: 0 all "
	  "succeeded, 1 one\n"
	  "  failed or was cancelled, 124 the timeout passed first, 3 "
	  "gpuqd\n"
	  "  could not be reached for 2 minutes.\n" },
	{ "history", cli_history_exec,
	  "[--since T] [--until T] [--user USER] [--state S[,S...]] "
	  "[--name NAME] [--by user|gpu|service|day] [--json|--csv]",
	  "ended jobs: where they ran, GPU-hours, cost and saving",
	  "      --since T        jobs that ended at or after T: a date "
	  "(2026-11-01,\n"
	  "                       2026-11-01T09:00) or a duration ago "
	  "(7d, 12h)\n"
	  "      --until T        jobs that ended before T (same forms)\n"
	  "  -u, --user USER      only jobs of USER (a name or a uid)\n"
	  "      --state S,...    only jobs that ended succeeded, failed or "
	  "cancelled\n"
	  "      --name NAME      only jobs named NAME\n"
	  "      --by KEY         totals per user, gpu, service or day "
	  "(UTC)\n"
	  "      --json           print JSON (jobs as an array, or the "
	  "totals)\n"
	  "      --csv            print CSV with a header row\n"
	  "  Costs count the seconds the cloud billed each attempt; the "
	  "saving is\n"
	  "  against an on-demand Vertex AI custom job of the same shape "
	  "in the\n"
	  "  job's first region, for the same time.\n" },
	{ "cancel", cli_job_exec, "ID...",
	  "cancel jobs (and delete what they run in the cloud)",
	  "  An array's ID cancels every task; ID.TASK (42.3) one task.\n" },
	{ "hold", cli_job_exec, "ID...",
	  "keep queued jobs from starting",
	  "  An array's ID holds every queued task; ID.TASK one task.\n" },
	{ "release", cli_job_exec, "ID...",
	  "let held jobs start",
	  "  An array's ID releases every held task; ID.TASK one task.\n" },
	{ "plan", cli_plan_exec, "[--json] [--all] FILE|-",
	  "rank the ways to run a job by expected cost, without launching",
	  "      --json           print gpuqd's reply as JSON; for a file of "
	  "several\n"
	  "                       jobs, one JSON array of the replies\n"
	  "  -a, --all            list every excluded offer, not the first "
	  "20\n" },
	{ "quotas", cli_quotas_exec, "[--region R] [--gpu TYPE] [--json]",
	  "show free GPU quota per region and service, and its age",
	  "  -r, --region R       only region R\n"
	  "  -g, --gpu TYPE       only GPU TYPE (either spelling)\n"
	  "      --json           print gpuqd's reply as JSON\n" },
	{ "prices", cli_prices_exec, "[--region R] [--gpu TYPE] [--json]",
	  "show GPU and host prices per region, and where they came from",
	  "  -r, --region R       only region R\n"
	  "  -g, --gpu TYPE       only GPU TYPE (either spelling)\n"
	  "      --json           print gpuqd's reply as JSON\n" },
	{ "logs", cli_logs_exec,
	  "[-f] [--attempt N] [--node R] [--since DUR] [--tail N] ID",
	  "print what a job's training printed, from Cloud Logging",
	  "  -f, --follow         keep printing new lines, across attempts, "
	  "until the\n"
	  "                       job ends\n"
	  "  -a, --attempt N      only attempt N\n"
	  "  -N, --node R         only node (replica) R, from 0\n"
	  "      --since DUR      only lines of the last DUR (90s, 10m, 2h)\n"
	  "  -n, --tail N         start with the last N lines\n"
	  "  Each line starts with its time (UTC), and [attempt/node] when "
	  "there\n"
	  "  are several; a marker line says why an attempt ended and where "
	  "the\n"
	  "  next resumed from.\n" },
	{ "ping", cli_ping_exec, "",
	  "check that gpuqd answers, and print its version", "" },
	{ "metrics", cli_metrics_exec, "",
	  "print gpuqd's metrics in the Prometheus text format", "" },
	{ "doctor", cli_doctor_exec, "[--json]",
	  "check the project is ready for a first launch, and say the fixes",
	  "      --json           print gpuqd's report as JSON\n"
	  "  Exits 0 only when every check passed.\n" },
	{ "help", cli_help_exec, "[COMMAND]",
	  "list the commands, or explain one", "" },
	{ NULL, NULL, NULL, NULL, NULL }
};

static const char *cli_progname = "gpuq";

void
cli_warnx(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const struct cli_cmd *
cli_cmd_find(const char *name)
{
	const struct cli_cmd	*c;

	for (c = cli_cmds; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void
cli_usage(FILE *f, const struct cli_cmd *cmd)
{
	fprintf(f, "usage: gpuq %s%s%s\n", cmd->name,
	    *cmd->usage ? " " : "", cmd->usage);
}

static void
cli_cmd_help(const struct cli_cmd *cmd)
{
	cli_usage(stdout, cmd);
	printf("\n%s.\n", cmd->summary);
	if (*cmd->help != '\0')
		printf("\n%s", cmd->help);
	printf("\n  -h, --help           show this help\n"
	    "See gpuq(1).\n");
}

static void
cli_help(FILE *f)
{
	const struct cli_cmd	*c;

	fprintf(f, "usage: gpuq [-s PATH] [-t DURATION] COMMAND [ARGS]\n"
	    "       gpuq COMMAND --help\n\nCommands:\n");
	for (c = cli_cmds; c->name != NULL; c++)
		fprintf(f, "  %-9s%s\n", c->name, c->summary);
	fprintf(f, "\nOptions:\n"
	    "  -s, --socket PATH    gpuqd's socket (default: $%s,\n"
	    "                       else %s)\n"
	    "  -t, --timeout DUR    give up when gpuqd does not answer in "
	    "DUR (default %ds;\n"
	    "                       0 waits for ever)\n"
	    "  -h, --help           show this help\n"
	    "  -V, --version        print the version\n"
	    "\nExit status: 0 ok, 1 a request failed, 2 usage error, "
	    "3 gpuqd unreachable.\nSee gpuq(1) and gpuq-job(5).\n",
	    GPUQ_SOCKET_ENV, GPUQ_SOCKET_DEFAULT, CLI_TIMEOUT_DEFAULT);
}

int
cli_getopt(int argc, char **argv, const char *optstring,
    const struct option *longopts, const struct cli_cmd *cmd)
{
	int	ch;

	ch = getopt_long(argc, argv, optstring, longopts, NULL);
	if (ch == 'h') {
		cli_cmd_help(cmd);
		return 'h';
	}
	if (ch == '?' || ch == ':') {
		/* getopt_long has said what was wrong. */
		cli_usage(stderr, cmd);
		return '?';
	}
	return ch;
}

int
cli_help_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("help");
	int				 ch;

	while ((ch = cli_getopt(argc, argv, "+h", opts, cmd)) != -1) {
		if (ch == 'h')
			return GPUQ_EXIT_OK;
		return GPUQ_EXIT_USAGE;
	}
	if (optind == argc) {
		cli_help(stdout);
		return GPUQ_EXIT_OK;
	}
	if (optind + 1 < argc) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	if ((cmd = cli_cmd_find(argv[optind])) == NULL) {
		cli_warnx("unknown command '%s'; 'gpuq help' lists them",
		    argv[optind]);
		return GPUQ_EXIT_USAGE;
	}
	cli_cmd_help(cmd);
	return GPUQ_EXIT_OK;
}

/* Say why gpuqd cannot be reached and what to do, then exit 3. */
static void __attribute__((noreturn))
cli_unreachable(struct cli *cli, int rc, char *cause)
{
	cli_warnx("%s", cause);
	free(cause);
	switch (rc) {
	case -ENOENT:
	case -ECONNREFUSED:
	case -ENOTDIR:
		cli_warnx("is gpuqd running? start it with 'systemctl start "
		    "gpuqd' or run 'gpuqd --socket PATH', or point gpuq at "
		    "it with --socket or %s", GPUQ_SOCKET_ENV);
		break;
	case -EACCES:
	case -EPERM:
		cli_warnx("the socket is open to root and to gpuqd's admin "
		    "group (admin_group in gpuqd.conf); ask an administrator "
		    "to add you to that group");
		break;
	case -ETIMEDOUT:
		cli_warnx("gpuqd at %s may be overloaded or stuck; see its "
		    "log ('journalctl -u gpuqd'), or wait longer with "
		    "--timeout", cli->socket);
		break;
	case -EPIPE:
		cli_warnx("gpuqd may have stopped or restarted; see its log "
		    "('journalctl -u gpuqd')");
		break;
	default:
		break;
	}
	cli_conn_free(cli->conn);
	cli->conn = NULL;
	exit(GPUQ_EXIT_UNREACHABLE);
}

/* 1 if REPLY says gpuqd is busy: nothing was done, asking again is safe. */
static int
cli_reply_busy(json_t *reply)
{
	const char	*code;

	code = cli_json_str(json_object_get(reply, "error"), "code");
	return !cli_reply_ok(reply) && code != NULL &&
	    strcmp(code, GPUQ_ERR_BUSY) == 0;
}

static int64_t
cli_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 if LINE is {"ok":true,...}, found without parsing all of it. */
static int
cli_line_ok(const char *line, size_t len)
{
	const char	*v;
	size_t		 vlen;

	return cli_jscan_member(line, len, "ok", &v, &vlen) == 1 &&
	    vlen == 4 && memcmp(v, "true", 4) == 0;
}

/*
 * One request and its reply, asking again while gpuqd is busy. With
 * RAW, an ok reply is left unparsed in *line.
 */
static json_t *
cli_exchange(struct cli *cli, json_t *req, int raw, const char **ret_line,
    size_t *ret_len)
{
	struct timespec	 ts;
	json_error_t	 err;
	json_t		*reply = NULL;
	char		*cause = NULL, *line;
	size_t		 len;
	int64_t		 deadline, delay = CLI_BUSY_FIRST_MS, wait;
	int		 rc;

	deadline = cli_now_ms() + (cli->timeout_ms > 0 ? cli->timeout_ms :
	    CLI_TIMEOUT_DEFAULT * 1000);
	for (;;) {
		if (cli->conn == NULL) {
			rc = cli_conn_open(cli->socket, cli->timeout_ms,
			    &cli->conn, &cause);
			if (rc != 0) {
				json_decref(req);
				cli_unreachable(cli, rc, cause);
			}
		}
		rc = cli_conn_send(cli->conn, req, &cause);
		if (rc == -EMSGSIZE || rc == -EINVAL) {
			json_decref(req);
			cli_warnx("%s", cause);
			free(cause);
			return NULL;
		}
		if (rc == -EPIPE) {
			/* It may have said why before it hung up ("busy"). */
			free(cause);
			cause = NULL;
			rc = 0;
		}
		if (rc == 0)
			rc = cli_conn_recv_line(cli->conn, &line, &len, &cause);
		if (rc != 0) {
			json_decref(req);
			cli_unreachable(cli, rc, cause);
		}
		if (raw && cli_line_ok(line, len)) {
			json_decref(req);
			*ret_line = line;
			*ret_len = len;
			return NULL;
		}
		reply = json_loadb(line, len, 0, &err);
		if (!json_is_object(reply)) {
			json_decref(reply);
			json_decref(req);
			cli_unreachable(cli, -EBADMSG, xprintf("gpuqd's reply "
			    "is not a JSON object: %s", err.text));
		}
		/*
		 * Busy (too many connections, the store locked): nothing was
		 * done. Ask again on a fresh connection, backing off with
		 * jitter so a crowd of clients does not come back at once.
		 */
		if (!cli_reply_busy(reply) || cli_now_ms() + delay >= deadline)
			break;
		json_decref(reply);
		reply = NULL;
		cli_conn_free(cli->conn);
		cli->conn = NULL;
		wait = delay / 2 + random() % (delay / 2 + 1);
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (wait % 1000) * 1000000;
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		if (delay < CLI_BUSY_MAX_MS)
			delay *= 2;
	}
	json_decref(req);
	return reply;
}

json_t *
cli_call(struct cli *cli, json_t *req)
{
	return cli_exchange(cli, req, 0, NULL, NULL);
}

json_t *
cli_call_raw(struct cli *cli, json_t *req, const char **line, size_t *len)
{
	*line = NULL;
	return cli_exchange(cli, req, 1, line, len);
}

json_t *
cli_call_simple(struct cli *cli, int argc, char **argv, const char *op,
    int *json, int *rc)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find(op);
	json_t				*reply;
	int				 ch;

	/* --json is known to getopt only where the command has it. */
	while ((ch = cli_getopt(argc, argv, "h", json != NULL ? opts :
	    opts + 1, cmd)) != -1) {
		if (ch == 'j') {
			*json = 1;
			continue;
		}
		*rc = ch == 'h' ? GPUQ_EXIT_OK : GPUQ_EXIT_USAGE;
		return NULL;
	}
	*rc = GPUQ_EXIT_USAGE;
	if (optind != argc) {
		cli_usage(stderr, cmd);
		return NULL;
	}
	reply = cli_call_ok(cli, json_pack("{s:s}", "op", op), op);
	*rc = reply != NULL ? GPUQ_EXIT_OK : GPUQ_EXIT_FAILED;
	return reply;
}

json_t *
cli_call_ok(struct cli *cli, json_t *req, const char *what)
{
	json_t	*reply;

	if ((reply = cli_call(cli, req)) == NULL)
		return NULL;
	if (!cli_reply_ok(reply)) {
		cli_reply_warn(reply, "%s", what);
		json_decref(reply);
		return NULL;
	}
	return reply;
}

int
cli_reply_ok(json_t *reply)
{
	return json_is_true(json_object_get(reply, "ok"));
}

void
cli_reply_warnings(json_t *reply)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(reply, "warnings"), i, v) {
		if (json_is_string(v))
			cli_warnx("%s", json_string_value(v));
	}
}

/* Codes whose name says something the message may not. */
static const struct {
	const char	*code;
	const char	*words;
} cli_codes[] = {
	{ GPUQ_ERR_FORBIDDEN, "forbidden" },
	{ GPUQ_ERR_NOT_FOUND, "not found" },
	{ GPUQ_ERR_CONFLICT, "conflict" },
	{ GPUQ_ERR_BUSY, "busy" },
	{ GPUQ_ERR_UNAVAILABLE, "unavailable" },
	{ GPUQ_ERR_INTERNAL, "internal error" },
	{ GPUQ_ERR_UNKNOWN_OP, "unknown operation" },
};

int
cli_reply_warn(json_t *reply, const char *what, ...)
{
	json_t		*err = json_object_get(reply, "error");
	const char	*code = cli_json_str(err, "code");
	const char	*msg = cli_json_str(err, "message");
	const char	*field = cli_json_str(err, "field");
	const char	*words = NULL;
	char		*w = NULL, *m, *fl = NULL;
	size_t		 i, flen;
	va_list		 ap;

	if (what != NULL) {
		va_start(ap, what);
		if (vasprintf(&w, what, ap) < 0)
			w = NULL;
		va_end(ap);
	}
	if (msg == NULL)
		msg = "gpuqd gave no reason";
	for (i = 0; code != NULL && i < sizeof cli_codes / sizeof cli_codes[0];
	    i++) {
		if (strcmp(code, cli_codes[i].code) == 0 &&
		    strstr(msg, cli_codes[i].words) == NULL)
			words = cli_codes[i].words;
	}
	/*
	 * The field, for a refused job or request (for the others it is
	 * the id the caller named already), unless the message starts
	 * with it.
	 */
	if (field != NULL && *field != '\0' && code != NULL &&
	    (strcmp(code, GPUQ_ERR_INVALID_JOB) == 0 ||
	    strcmp(code, GPUQ_ERR_BAD_REQUEST) == 0)) {
		flen = strlen(field);
		if (strncmp(msg, field, flen) != 0 || msg[flen] != ':')
			fl = xstrdup(field);
	}
	m = cli_table_clean(msg);
	cli_warnx("%s%s%s%s%s%s%s", w ? w : "", w ? ": " : "",
	    words ? words : "", words ? ": " : "",
	    fl ? fl : "", fl ? ": " : "", m);
	free(m);
	free(fl);
	free(w);
	return GPUQ_EXIT_FAILED;
}

int
cli_parse_id(const char *s, int64_t *ret)
{
	char		*end;
	long long	 n;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || n <= 0)
		return -EINVAL;
	*ret = n;
	return 0;
}

/*
 * A job id as the wire takes it: "42" as the integer 42 (what every
 * gpuqd understands), "42.3" (task 3 of array 42) as that string. New
 * value, or NULL when S is neither.
 */
json_t *
cli_job_ref(const char *s)
{
	const char	*dot = strchr(s, '.');
	char		*head;
	int64_t		 id, task;
	int		 rc;

	if (dot == NULL)
		return cli_parse_id(s, &id) == 0 ? json_integer(id) : NULL;
	head = xstrndup(s, (size_t)(dot - s));
	rc = cli_parse_id(head, &id);
	free(head);
	if (rc != 0 || dot[1] < '0' || dot[1] > '9')
		return NULL;
	if (strcmp(dot + 1, "0") != 0 && cli_parse_id(dot + 1, &task) != 0)
		return NULL;
	return json_string(s);
}

int
main(int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd;
	struct cli			 cli;
	int64_t				 sec;
	int				 ch, rc;
	char				*name;

	argv[0] = (char *)"gpuq";	/* for getopt's messages */
	/* A fixed hash seed: no /dev/urandom read per run (jansson). */
	json_object_seed(0x67707571);
	srandom((unsigned)getpid() ^ (unsigned)cli_now_ms());
	memset(&cli, 0, sizeof cli);
	cli.timeout_ms = CLI_TIMEOUT_DEFAULT * 1000;
	if ((cli.socket = getenv(GPUQ_SOCKET_ENV)) == NULL ||
	    *cli.socket == '\0')
		cli.socket = GPUQ_SOCKET_DEFAULT;

	while ((ch = getopt_long(argc, argv, "+s:t:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cli.socket = optarg;
			break;
		case 't':
			if (duration_parse(optarg, &sec) != 0 ||
			    sec > INT_MAX / 1000) {
				cli_warnx("--timeout: '%s' is not a duration "
				    "(e.g. 30s, 2m; 0 waits for ever)", optarg);
				return GPUQ_EXIT_USAGE;
			}
			cli.timeout_ms = (int)sec * 1000;
			break;
		case 'h':
			cli_help(stdout);
			return GPUQ_EXIT_OK;
		case 'V':
			printf("gpuq %s (protocol %d)\n", PACKAGE_VERSION,
			    GPUQ_PROTO_VERSION);
			return GPUQ_EXIT_OK;
		default:
			cli_help(stderr);
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		cli_help(stderr);
		return GPUQ_EXIT_USAGE;
	}
	if ((cmd = cli_cmd_find(argv[optind])) == NULL) {
		cli_warnx("unknown command '%s'; 'gpuq help' lists them",
		    argv[optind]);
		return GPUQ_EXIT_USAGE;
	}
	/* The command's own options, with messages as "gpuq CMD: ...". */
	argc -= optind;
	argv += optind;
	name = xprintf("gpuq %s", cmd->name);
	argv[0] = name;
	optind = 0;		/* glibc: start afresh */
	rc = cmd->exec(&cli, argc, argv);
	cli_conn_free(cli.conn);
	free(name);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		cli_warnx("writing to standard output: %s", strerror(errno));
		if (rc == GPUQ_EXIT_OK)
			rc = GPUQ_EXIT_FAILED;
	}
	return rc;
}
