/*
 * cli-status.c: gpuq status. Pages through gpuqd's list (keyset: after
 * and next) and prints a table, or the raw jobs as JSON. Everything
 * shown comes from the reply; the client only computes how long ago.
 */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"
#include "common/xmalloc.h"

/* Job states on the wire, in the order counts are shown. */
static const struct {
	const char	*name;
	int		 live;
} status_states[] = {
	{ "held", 1 },
	{ "queued", 1 },
	{ "launching", 1 },
	{ "pending", 1 },
	{ "running", 1 },
	{ "cancelling", 1 },
	{ "succeeded", 0 },
	{ "failed", 0 },
	{ "cancelled", 0 },
};
#define STATUS_NSTATES	(sizeof status_states / sizeof status_states[0])

static const struct cli_col status_cols[] = {
	{ "ID", CLI_RIGHT },
	{ "NAME", CLI_LEFT },
	{ "STATE", CLI_LEFT },
	{ "GPU", CLI_LEFT },
	{ "WHERE", CLI_LEFT },
	{ "AGE", CLI_RIGHT },
	{ "COST", CLI_RIGHT },
	{ "WHY", CLI_LEFT },
};
#define STATUS_NCOLS	(int)(sizeof status_cols / sizeof status_cols[0])

struct status_opts {
	int		 all;
	unsigned	 states;	/* bit per status_states[]; 0 = default */
	int		 owner_set;
	int64_t		 owner;
	int64_t		 limit;		/* 0 = no limit */
	int		 json;
};

static int
status_state_index(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < STATUS_NSTATES; i++)
		if (strlen(status_states[i].name) == len &&
		    strncmp(status_states[i].name, s, len) == 0)
			return (int)i;
	return -1;
}

/* "queued,running" into a bit set; usage error on an unknown name. */
static int
status_parse_states(const char *arg, struct status_opts *o)
{
	const char	*p = arg, *comma;
	size_t		 len, i;
	int		 k;

	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 3 && strncmp(p, "all", 3) == 0)
			o->all = 1;
		else if (len == 4 && strncmp(p, "live", 4) == 0) {
			for (i = 0; i < STATUS_NSTATES; i++)
				if (status_states[i].live)
					o->states |= 1u << i;
		} else if ((k = status_state_index(p, len)) >= 0)
			o->states |= 1u << k;
		else {
			cli_warnx("--state: unknown state '%.*s'; use %s",
			    (int)len, p, "held, queued, launching, pending, "
			    "running, cancelling, succeeded, failed, "
			    "cancelled, live or all");
			return -EINVAL;
		}
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

static int
status_parse_user(const char *arg, struct status_opts *o)
{
	struct passwd	*pw;
	char		*end;
	long long	 n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (*arg >= '0' && *arg <= '9' && errno == 0 && *end == '\0' &&
	    n >= 0 && n < (long long)UINT32_MAX) {
		o->owner = n;
	} else if ((pw = getpwnam(arg)) != NULL)
		o->owner = pw->pw_uid;
	else {
		cli_warnx("--user: no user '%s'", arg);
		return -EINVAL;
	}
	o->owner_set = 1;
	return 0;
}

/* One list request: the page after AFTER, at most LIMIT jobs. */
static json_t *
status_request(const struct status_opts *o, int64_t after, int64_t limit)
{
	json_t	*req, *st;
	size_t	 i;

	req = json_pack("{s:s, s:I}", "op", "list", "limit",
	    (json_int_t)limit);
	if (o->all)
		json_object_set_new(req, "state", json_string("all"));
	else if (o->states != 0) {
		st = json_array();
		for (i = 0; i < STATUS_NSTATES; i++)
			if (o->states & (1u << i))
				json_array_append_new(st,
				    json_string(status_states[i].name));
		json_object_set_new(req, "state", st);
	}
	if (o->owner_set)
		json_object_set_new(req, "owner", json_integer(o->owner));
	if (after > 0)
		json_object_set_new(req, "after", json_integer(after));
	return req;
}

/* Cost so far: ended attempts, plus the live one's running time. */
static double
status_cost(json_t *job, int64_t now)
{
	json_t	*cur = json_object_get(job, "current");
	double	 cost = cli_json_num(job, "cost_usd", 0), live, est;
	int64_t	 started;

	if (!json_is_object(cur) || cli_json_int(cur, "ended", 0) > 0)
		return cost;
	live = cli_json_num(cur, "cost_usd", 0);
	started = cli_json_int(cur, "started", 0);
	if (started > 0 && now > started) {
		est = cli_json_num(cur, "hourly_usd", 0) *
		    (double)(now - started) / 3600.0;
		if (est > live)
			live = est;
	}
	return cost + live;
}

static int
status_is_finished(const char *state)
{
	return state != NULL && (strcmp(state, "succeeded") == 0 ||
	    strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0);
}

static void
status_row(struct cli_table *t, json_t *job, int64_t now)
{
	json_t		*cur = json_object_get(job, "current");
	const char	*state = cli_json_str(job, "state");
	const char	*why = cli_json_str(job, "why");
	char		 buf[256];
	int64_t		 since, started;
	double		 cost;

	cli_table_addf(t, "%lld", (long long)cli_json_int(job, "id", 0));
	cli_table_add(t, cli_json_str(job, "name"));
	cli_table_add(t, state);
	cli_table_add(t, cli_fmt_gpu(json_object_get(job, "accelerator"),
	    buf, sizeof buf));
	cli_table_add(t, json_is_object(cur) ?
	    cli_fmt_where(cur, buf, sizeof buf) : "-");
	/* How long in this state; for a running job, how long it ran. */
	since = cli_json_int(job, "updated", 0);
	started = json_is_object(cur) ? cli_json_int(cur, "started", 0) : 0;
	if (state != NULL && strcmp(state, "running") == 0 && started > 0)
		since = started;
	cli_table_add(t, since > 0 ?
	    cli_fmt_age(now - since, buf, sizeof buf) : "-");
	cost = status_cost(job, now);
	if (cost <= 0 && cli_json_int(job, "attempts", 0) == 0)
		cli_table_add(t, "-");
	else
		cli_table_add(t, cli_fmt_usd(cost, buf, sizeof buf));
	if (why == NULL && status_is_finished(state))
		why = cli_json_str(job, "message");
	cli_table_add(t, why != NULL ? why : "");
}

/* The closing line: "3 queued, 1 running". */
static void
status_counts(const struct status_opts *o, json_t *counts, int64_t *seen,
    int shown_all)
{
	unsigned	 show;
	size_t		 i;
	int64_t		 n;
	int		 any = 0;

	if (o->all)
		show = (1u << STATUS_NSTATES) - 1;
	else if (o->states != 0)
		show = o->states;
	else
		for (i = 0, show = 0; i < STATUS_NSTATES; i++)
			if (status_states[i].live)
				show |= 1u << i;
	for (i = 0; i < STATUS_NSTATES; i++) {
		if (!(show & (1u << i)))
			continue;
		/* The daemon counts the whole queue; a --user view counts
		 * what it was shown. */
		if (json_is_object(counts) && !o->owner_set)
			n = cli_json_int(counts, status_states[i].name, 0);
		else
			n = seen[i];
		if (n == 0)
			continue;
		printf("%s%lld %s", any ? ", " : "", (long long)n,
		    status_states[i].name);
		any = 1;
	}
	if (!any)
		printf(o->all || o->states ? "no jobs" : "no active jobs");
	if (!shown_all)
		printf(" (not all shown: --limit)");
	putchar('\n');
}

/*
 * One page for --json: print each job's text as gpuqd sent it, one per
 * line, without parsing the page (a whole queue is a hundred pages).
 * Sets *more and moves *after to the next page.
 */
static int
status_page_raw(struct cli *cli, const struct status_opts *o,
    int64_t *after, int64_t page, int *first, int64_t *left, int *more)
{
	const char	*line, *pos, *end, *v;
	json_t		*reply;
	size_t		 len, vlen;
	char		 num[32];
	int		 rc;

	reply = cli_call_raw(cli, status_request(o, *after, page), &line,
	    &len);
	if (line == NULL) {
		rc = reply ? cli_reply_warn(reply, "status") : GPUQ_EXIT_FAILED;
		json_decref(reply);
		return rc;
	}
	if (cli_jscan_member(line, len, "jobs", &pos, &vlen) != 1)
		goto bad;
	end = pos + vlen;
	while ((rc = cli_jscan_next(&pos, end, &v, &vlen)) == 1) {
		fputs(*first ? "\n" : ",\n", stdout);
		fwrite(v, 1, vlen, stdout);
		*first = 0;
		(*left)--;
	}
	if (rc != 0)
		goto bad;
	rc = cli_jscan_member(line, len, "next", &v, &vlen);
	if (rc == -1 || (rc == 1 && vlen >= sizeof num))
		goto bad;
	*more = rc == 1;
	if (*more) {
		memcpy(num, v, vlen);
		num[vlen] = '\0';
		if (cli_parse_id(num, after) != 0)
			goto bad;
	}
	return 0;
bad:
	cli_warnx("status: gpuqd's reply is not a page of jobs");
	return GPUQ_EXIT_FAILED;
}

int
cli_status_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "state", required_argument, NULL, 'S' },
		{ "user", required_argument, NULL, 'u' },
		{ "limit", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("status");
	struct status_opts		 o;
	struct cli_table		*t = NULL;
	json_t				*reply, *jobs, *job, *counts = NULL;
	int64_t				 after = 0, left, page, now;
	int64_t				 seen[STATUS_NSTATES];
	size_t				 i;
	int				 ch, k, first = 1, more = 0, rc = 0;
	static char			 obuf[1 << 16];
	const char			*state;

	memset(&o, 0, sizeof o);
	memset(seen, 0, sizeof seen);
	while ((ch = cli_getopt(argc, argv, "au:n:h", opts, cmd)) != -1) {
		switch (ch) {
		case 'a':
			o.all = 1;
			break;
		case 'S':
			if (status_parse_states(optarg, &o) != 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'u':
			if (status_parse_user(optarg, &o) != 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'n':
			if (cli_parse_id(optarg, &o.limit) != 0) {
				cli_warnx("--limit: '%s' is not a positive "
				    "integer", optarg);
				return GPUQ_EXIT_USAGE;
			}
			break;
		case 'J':
			o.json = 1;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_warnx("status takes no arguments ('gpuq show ID' shows "
		    "one job)");
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	if (o.all)
		o.states = 0;	/* --all covers any --state */

	if (o.json) {
		(void)setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
		fputs("[", stdout);
	} else
		t = cli_table_new(status_cols, STATUS_NCOLS);
	left = o.limit;
	now = (int64_t)time(NULL);
	do {
		page = GPUQ_LIST_MAX;
		if (o.limit > 0 && left < page)
			page = left;
		if (o.json) {
			/* Passed through as gpuqd wrote them, unparsed. */
			rc = status_page_raw(cli, &o, &after, page, &first,
			    &left, &more);
			if (rc != 0)
				break;
			continue;
		}
		reply = cli_call(cli, status_request(&o, after, page));
		if (reply == NULL || !cli_reply_ok(reply)) {
			rc = reply ? cli_reply_warn(reply, "status") :
			    GPUQ_EXIT_FAILED;
			json_decref(reply);
			break;
		}
		jobs = json_object_get(reply, "jobs");
		json_array_foreach(jobs, i, job) {
			status_row(t, job, now);
			state = cli_json_str(job, "state");
			if (state != NULL &&
			    (k = status_state_index(state, strlen(state))) >= 0)
				seen[k]++;
		}
		left -= (int64_t)json_array_size(jobs);
		if (counts == NULL)
			counts = json_incref(json_object_get(reply, "counts"));
		more = json_is_integer(json_object_get(reply, "next"));
		if (more)
			after = json_integer_value(json_object_get(reply,
			    "next"));
		json_decref(reply);
	} while (more && (o.limit == 0 || left > 0));

	if (o.json)
		fputs(first ? "]\n" : "\n]\n", stdout);
	else if (rc == 0) {
		if (cli_table_rows(t) > 0)
			cli_table_print(t, stdout, cli_table_width(), 1);
		status_counts(&o, counts, seen, !more);
	}
	cli_table_free(t);
	json_decref(counts);
	return rc;
}
