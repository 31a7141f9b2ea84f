/*
 * cli-submit.c: gpuq submit. Reads a job file (one job or a sweep),
 * applies --name/--priority, sends one submit per job and prints the
 * ids gpuqd gives. What a valid job is, only gpuqd says: its error
 * names the field, and this file shows it as it came.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/frame.h"
#include "common/proto.h"
#include "common/xmalloc.h"

/*
 * Requests in flight at once. A sweep's jobs then land in gpuqd's same
 * group commit; the window is small enough that the replies always fit
 * the socket buffer, so neither side can block the other.
 */
#define SUBMIT_WINDOW	64

struct submit_run {
	struct cli		*cli;
	const char		*file;
	struct cli_docs		*docs;
	int			 quiet;
	size_t			 ok;
	int64_t			*ids;		/* each job's id, 0: none */
	/* --wait: the ids submitted, to wait for. */
	int64_t			*waits;
	size_t			 nwaits;
};

/* Show the reply to the Ith job. 0 submitted, -1 not. */
static int
submit_reply(struct submit_run *r, size_t i, json_t *reply)
{
	struct cli_doc	*d = &r->docs->v[i];
	json_int_t	 id;
	json_t		*w;
	size_t		 k;

	if (reply == NULL)
		return -1;
	if (!cli_reply_ok(reply)) {
		if (r->docs->n == 1)
			cli_reply_warn(reply, "job rejected");
		else if (d->line > 0)
			cli_reply_warn(reply, "%s:%d: job rejected", r->file,
			    d->line);
		else
			cli_reply_warn(reply, "%s: job %zu rejected", r->file,
			    i + 1);
		json_decref(reply);
		return -1;
	}
	id = json_integer_value(json_object_get(reply, "id"));
	if (r->ids != NULL)
		r->ids[i] = id;
	r->waits = xreallocarray(r->waits, r->nwaits + 1, sizeof *r->waits);
	r->waits[r->nwaits++] = (int64_t)id;
	if (json_is_integer(json_object_get(reply, "tasks")) && !r->quiet)
		printf("submitted array %lld: tasks %lld.0 to %lld.%lld\n",
		    (long long)id, (long long)id, (long long)id,
		    (long long)json_integer_value(json_object_get(reply,
		    "tasks")) - 1);
	else if (r->quiet)
		printf("%lld\n", (long long)id);
	else
		printf("submitted job %lld\n", (long long)id);
	/* Accepted, but likely not what was meant: on stderr, after. */
	fflush(stdout);
	json_array_foreach(json_object_get(reply, "warnings"), k, w) {
		if (json_is_string(w))
			cli_warnx("job %lld: warning: %s", (long long)id,
			    json_string_value(w));
	}
	r->ok++;
	json_decref(reply);
	return 0;
}

/* 1 if REPLY says gpuqd was busy: the job was not stored. */
static int
submit_busy(json_t *reply)
{
	const char	*code;

	code = cli_json_str(json_object_get(reply, "error"), "code");
	return !cli_reply_ok(reply) && code != NULL &&
	    strcmp(code, GPUQ_ERR_BUSY) == 0;
}

/*
 * Send every job, SUBMIT_WINDOW at a time, and read the replies. Jobs
 * gpuqd was too busy to take are sent again at the end, one by one,
 * through cli_call's patient retry.
 */
static int
submit_all(struct submit_run *r, int hold)
{
	struct cli	*cli = r->cli;
	json_t		*req, *reply;
	size_t		 sent, done, n = r->docs->n, *retry, nretry = 0;
	char		**toolong, *cause = NULL;
	int		 failed = 0, rc;

	/* cli_call opens the connection; use it for the first job. */
	req = json_pack("{s:s, s:O, s:b}", "op", "submit", "job",
	    r->docs->v[0].job, "hold", hold);
	if (submit_reply(r, 0, cli_call(cli, req)) != 0)
		failed = 1;
	/* Jobs too long to send are answered here, in their turn. */
	toolong = xcalloc(n, sizeof *toolong);
	retry = xcalloc(n, sizeof *retry);
	sent = done = 1;
	while (done < n) {
		while (sent < n && sent - done < SUBMIT_WINDOW) {
			req = json_pack("{s:s, s:O, s:b}", "op", "submit",
			    "job", r->docs->v[sent].job, "hold", hold);
			rc = cli_conn_send(cli->conn, req, &cause);
			json_decref(req);
			if (rc == -EMSGSIZE || rc == -EINVAL) {
				toolong[sent++] = cause;
				cause = NULL;
				continue;
			}
			if (rc != 0)
				goto lost;
			sent++;
		}
		if (toolong[done] != NULL) {
			if (r->docs->v[done].line > 0)
				cli_warnx("%s:%d: %s", r->file,
				    r->docs->v[done].line, toolong[done]);
			else
				cli_warnx("%s: job %zu: %s", r->file, done + 1,
				    toolong[done]);
			failed = 1;
			done++;
			continue;
		}
		if ((rc = cli_conn_recv(cli->conn, &reply, &cause)) != 0)
			goto lost;
		if (submit_busy(reply)) {
			/* Not stored: ask again below, patiently. */
			json_decref(reply);
			retry[nretry++] = done++;
			continue;
		}
		if (submit_reply(r, done, reply) != 0)
			failed = 1;
		done++;
	}
	for (done = 0; done < nretry; done++) {
		req = json_pack("{s:s, s:O, s:b}", "op", "submit", "job",
		    r->docs->v[retry[done]].job, "hold", hold);
		if (submit_reply(r, retry[done], cli_call(cli, req)) != 0)
			failed = 1;
	}
	for (done = 0; done < n; done++)
		free(toolong[done]);
	free(toolong);
	free(retry);
	if (n > 1 && failed)
		cli_warnx("%s: %zu of %zu jobs submitted", r->file, r->ok, n);
	return failed ? GPUQ_EXIT_FAILED : GPUQ_EXIT_OK;

lost:
	for (done = 0; done < n; done++)
		free(toolong[done]);
	free(toolong);
	free(retry);
	cli_warnx("%s", cause);
	free(cause);
	cli_warnx("%s: %zu of %zu jobs acknowledged before gpuqd stopped "
	    "answering; 'gpuq status' shows what is queued", r->file, r->ok,
	    n);
	return GPUQ_EXIT_UNREACHABLE;
}

/*
 * --from: the file is another service's job, converted here
 * (client/convert.c); its notes go to stderr. 0, or -1 (said why).
 */
static int
submit_convert(const char *from, const char *file, struct cli_docs *docs)
{
	json_t	*notes, *v;
	char	*cause = NULL;
	size_t	 i;

	if (cli_convert_docs(from, file, docs, &notes, &cause) != 0) {
		cli_warnx("%s", cause);
		free(cause);
		cli_docs_done(docs);
		return -1;
	}
	json_array_foreach(notes, i, v)
		cli_warnx("%s: note: %s", file, json_string_value(v));
	json_decref(notes);
	return 0;
}

/* --dry-run: the jobs as gpuq YAML, documents apart by "---". */
static void
submit_print(struct cli_docs *docs)
{
	size_t	i;

	for (i = 0; i < docs->n; i++) {
		if (i > 0)
			fputs("---\n", stdout);
		cli_yaml_write(stdout, docs->v[i].job);
	}
}

/*
 * Where the file names an earlier document in after or after_any
 * (after: [preprocess]): 1 if any does, 0 if none, -1 (said) if a name
 * is no earlier document's. Names that are numbers ("41") become ids.
 */
static int
submit_names_check(struct submit_run *r)
{
	static const char *const keys[] = { "after", "after_any" };
	struct cli_docs	*d = r->docs;
	json_t		*l, *v;
	const char	*s, *n;
	int64_t		 id;
	size_t		 i, j, k, x;
	int		 any = 0;

	for (i = 0; i < d->n; i++) {
		for (k = 0; k < 2; k++) {
			l = json_object_get(d->v[i].job, keys[k]);
			json_array_foreach(l, x, v) {
				if ((s = json_string_value(v)) == NULL)
					continue;
				if (cli_parse_id(s, &id) == 0) {
					json_array_set_new(l, x,
					    json_integer(id));
					continue;
				}
				for (j = 0; j < i; j++) {
					n = cli_json_str(d->v[j].job, "name");
					if (n != NULL && strcmp(n, s) == 0)
						break;
				}
				if (j == i) {
					cli_warnx("%s: job %zu: %s: no earlier "
					    "job in this file is named \"%s\" "
					    "(give a job id, or the name of a "
					    "job above it)", r->file, i + 1,
					    keys[k], s);
					return -1;
				}
				any = 1;
			}
		}
	}
	return any;
}

/*
 * Job I's after and after_any with the names of earlier documents
 * replaced by their ids: 0, or -1 (said) when such a job was not
 * submitted.
 */
static int
submit_names_resolve(struct submit_run *r, size_t i)
{
	static const char *const keys[] = { "after", "after_any" };
	struct cli_docs	*d = r->docs;
	json_t		*l, *v;
	const char	*s, *n;
	size_t		 j, k, x, found;

	for (k = 0; k < 2; k++) {
		l = json_object_get(d->v[i].job, keys[k]);
		json_array_foreach(l, x, v) {
			if ((s = json_string_value(v)) == NULL)
				continue;
			/* The nearest earlier job of that name. */
			found = i;
			for (j = 0; j < i; j++) {
				n = cli_json_str(d->v[j].job, "name");
				if (n != NULL && strcmp(n, s) == 0)
					found = j;
			}
			if (found == i || r->ids[found] == 0) {
				cli_warnx("%s: job %zu not submitted: it "
				    "waits for \"%s\", which was not", r->file,
				    i + 1, s);
				return -1;
			}
			json_array_set_new(l, x, json_integer(r->ids[found]));
		}
	}
	return 0;
}

/*
 * A file whose jobs name each other: one at a time, in order, each
 * sent once the ids it waits for are known.
 */
static int
submit_ordered(struct submit_run *r, int hold)
{
	json_t	*req;
	size_t	 i;
	int	 failed = 0;

	for (i = 0; i < r->docs->n; i++) {
		if (submit_names_resolve(r, i) != 0) {
			failed = 1;
			continue;
		}
		req = json_pack("{s:s, s:O, s:b}", "op", "submit", "job",
		    r->docs->v[i].job, "hold", hold);
		if (submit_reply(r, i, cli_call(r->cli, req)) != 0)
			failed = 1;
	}
	if (r->docs->n > 1 && failed)
		cli_warnx("%s: %zu of %zu jobs submitted", r->file, r->ok,
		    r->docs->n);
	return failed ? GPUQ_EXIT_FAILED : GPUQ_EXIT_OK;
}

/* --after 41[,40]: the ids, appended to every job's after. */
static int
submit_after_opt(const char *arg, json_t *list)
{
	char	*copy, *p, *tok;
	int64_t	 id;

	copy = xstrdup(arg);
	for (p = copy; (tok = strsep(&p, ",")) != NULL;) {
		if (cli_parse_id(tok, &id) != 0) {
			cli_warnx("--after: '%s' is not a job id (a positive "
			    "integer)", tok);
			free(copy);
			return -1;
		}
		json_array_append_new(list, json_integer(id));
	}
	free(copy);
	return 0;
}

int
cli_submit_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "hold", no_argument, NULL, 'H' },
		{ "name", required_argument, NULL, 'N' },
		{ "priority", required_argument, NULL, 'P' },
		{ "from", required_argument, NULL, 'F' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "after", required_argument, NULL, 'A' },
		{ "wait", no_argument, NULL, 'W' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("submit");
	int64_t				 timeout = -1;
	int				 wait = 0;
	struct submit_run		 r;
	struct cli_docs			 docs = { NULL, 0 };
	const char			*name = NULL, *from = NULL;
	char				*cause = NULL, *end;
	long				 prio = 0;
	int				 ch, hold = 0, prio_set = 0, rc;
	int				 dry = 0;
	size_t				 i;
	json_t				*after = NULL, *l;

	memset(&r, 0, sizeof r);
	while ((ch = cli_getopt(argc, argv, "qh", opts, cmd)) != -1) {
		switch (ch) {
		case 'q':
			r.quiet = 1;
			break;
		case 'H':
			hold = 1;
			break;
		case 'N':
			if (!utf8_valid(optarg, strlen(optarg))) {
				cli_warnx("--name: not valid UTF-8");
				json_decref(after);
				return GPUQ_EXIT_USAGE;
			}
			name = optarg;
			break;
		case 'P':
			errno = 0;
			prio = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    prio < INT_MIN || prio > INT_MAX) {
				cli_warnx("--priority: '%s' is not an integer",
				    optarg);
				json_decref(after);
				return GPUQ_EXIT_USAGE;
			}
			prio_set = 1;
			break;
		case 'F':
			if (strcmp(optarg, "vertex") != 0 &&
			    strcmp(optarg, "batch") != 0) {
				cli_warnx("--from %s: unknown; use vertex or "
				    "batch", optarg);
				json_decref(after);
				return GPUQ_EXIT_USAGE;
			}
			from = optarg;
			break;
		case 'n':
			dry = 1;
			break;
		case 'A':
			/* Made at the first --after; every return frees it. */
			if (after == NULL)
				after = json_array();
			if (submit_after_opt(optarg, after) != 0) {
				json_decref(after);
				return GPUQ_EXIT_USAGE;
			}
			break;
		case 'W':
			wait = 1;
			break;
		case 't':
			if ((timeout = cli_wait_timeout(optarg)) < 0) {
				json_decref(after);
				return GPUQ_EXIT_USAGE;
			}
			break;
		case 'h':
			json_decref(after);
			return GPUQ_EXIT_OK;
		default:
			json_decref(after);
			return GPUQ_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_warnx("submit takes one job file (or '-' for standard "
		    "input)");
		cli_usage(stderr, cmd);
		json_decref(after);
		return GPUQ_EXIT_USAGE;
	}
	r.file = strcmp(argv[optind], "-") == 0 ? "<stdin>" : argv[optind];
	if (cli_jobfile_read(argv[optind], &docs, &cause) != 0) {
		cli_warnx("%s", cause);
		free(cause);
		json_decref(after);
		return GPUQ_EXIT_FAILED;
	}
	if (from != NULL && submit_convert(from, r.file, &docs) != 0) {
		json_decref(after);
		return GPUQ_EXIT_FAILED;
	}
	for (i = 0; i < docs.n; i++) {
		if (name != NULL)
			json_object_set_new(docs.v[i].job, "name",
			    json_string(name));
		if (prio_set)
			json_object_set_new(docs.v[i].job, "priority",
			    json_integer(prio));
		if (json_array_size(after) == 0)
			continue;
		/* --after joins what the file says (gpuqd drops repeats). */
		l = json_object_get(docs.v[i].job, "after");
		if (json_is_array(l))
			json_array_extend(l, after);
		else if (l == NULL)
			json_object_set(docs.v[i].job, "after", after);
	}
	json_decref(after);
	if (dry) {
		submit_print(&docs);
		cli_docs_done(&docs);
		return GPUQ_EXIT_OK;
	}
	r.cli = cli;
	r.docs = &docs;
	if (timeout >= 0 && !wait) {
		cli_warnx("--timeout goes with --wait");
		cli_docs_done(&docs);
		return GPUQ_EXIT_USAGE;
	}
	rc = submit_names_check(&r);
	if (rc < 0)
		rc = GPUQ_EXIT_FAILED;
	else if (rc > 0) {
		r.ids = xcalloc(docs.n, sizeof *r.ids);
		rc = submit_ordered(&r, hold);
	} else
		rc = submit_all(&r, hold);
	free(r.ids);
	cli_docs_done(&docs);
	/* Wait for what was queued, even if some jobs were refused. */
	if (wait && r.nwaits > 0) {
		fflush(stdout);
		ch = cli_wait_jobs(cli, r.waits, r.nwaits, timeout, 0);
		if (rc == GPUQ_EXIT_OK)
			rc = ch;
	}
	free(r.waits);
	return rc;
}
