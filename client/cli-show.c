/*
 * cli-show.c: gpuq show ID, one job's story: what it is (its spec, as
 * YAML one could submit again), where it ran and why each attempt
 * ended, and every state change with its time.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"
#include "common/when.h"
#include "common/xmalloc.h"

static const struct cli_col show_attempt_cols[] = {
	{ "#", CLI_RIGHT },
	{ "STATE", CLI_LEFT },
	{ "WHERE", CLI_LEFT },
	{ "MACHINE", CLI_LEFT },
	{ "SPOT", CLI_LEFT },
	{ "$/H", CLI_RIGHT },
	{ "STARTED", CLI_LEFT },
	{ "RAN", CLI_RIGHT },
	{ "COST", CLI_RIGHT },
	{ "RESUMED FROM", CLI_LEFT },
};
static const struct cli_col show_event_cols[] = {
	{ "TIME", CLI_LEFT },
	{ "CHANGE", CLI_LEFT },
	{ "MESSAGE", CLI_LEFT },
};
#define NCOLS(a)	(int)(sizeof (a) / sizeof (a)[0])

/* 1 if S can be written as a plain YAML scalar and read back the same. */
static int
show_plain_ok(const char *s)
{
	const unsigned char	*p;
	json_t			*v;
	size_t			 len = strlen(s);
	int			 ok;

	if (len == 0 || s[len - 1] == ' ' || s[len - 1] == ':' ||
	    strstr(s, ": ") != NULL || strstr(s, " #") != NULL)
		return 0;
	/* "-x" is plain; "-", "- x", "?" and ":" start YAML syntax. */
	if (s[0] == '-' ? (len == 1 || s[1] == ' ') :
	    strchr("?:#&*!|>'\"%@` ", s[0]) != NULL)
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		/* Flow indicators end a plain scalar inside [ ] and { }. */
		if (*p < 0x20 || *p == 0x7f || strchr(",[]{}", *p) != NULL)
			return 0;
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			return 0;	/* C1 control */
	}
	/* Plain text that YAML would read as a number, bool or null. */
	v = cli_yaml_plain(s, len);
	ok = json_is_string(v);
	json_decref(v);
	return ok;
}

/* An attempt's SPOT cell: yes, no, or the kind of capacity that is
 * neither Spot nor standard ("flex", "reserved"). Borrowed. */
static const char *
cli_show_spot(json_t *a)
{
	const char	*kind = cli_json_str(a, "capacity");

	if (json_is_true(json_object_get(a, "spot")))
		return "yes";
	if (kind != NULL && strcmp(kind, "standard") != 0)
		return kind;
	return "no";
}

/* A scalar as YAML: plain when safe, else a JSON (= YAML) string. */
static void
show_scalar(json_t *v)
{
	char	*s;

	if (json_is_string(v) && show_plain_ok(json_string_value(v))) {
		fputs(json_string_value(v), stdout);
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	fputs(s ? s : "?", stdout);
	free(s);
}

static int
show_is_scalar(json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

/* Arrays of scalars fit on one line, as a flow sequence. */
static int
show_flat(json_t *a)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(a, i, e)
		if (!show_is_scalar(e))
			return 0;
	return 1;
}

static void show_yaml(json_t *, int);

static size_t
show_size(json_t *v)
{
	return json_is_array(v) ? json_array_size(v) : json_object_size(v);
}

static void
show_yaml_value(json_t *v, int indent)
{
	json_t	*e;
	size_t	 i;

	if (show_is_scalar(v)) {
		putchar(' ');
		show_scalar(v);
		putchar('\n');
	} else if (json_is_array(v) && show_flat(v)) {
		fputs(" [", stdout);
		json_array_foreach(v, i, e) {
			if (i > 0)
				fputs(", ", stdout);
			show_scalar(e);
		}
		fputs("]\n", stdout);
	} else if (show_size(v) == 0)
		fputs(json_is_array(v) ? " []\n" : " {}\n", stdout);
	else {
		putchar('\n');
		show_yaml(v, indent + 2);
	}
}

/* Print object or array V as block YAML at INDENT. */
static void
show_yaml(json_t *v, int indent)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	json_t		*k;

	if (json_is_object(v)) {
		json_object_foreach(v, key, e) {
			printf("%*s", indent, "");
			k = json_string(key);
			show_scalar(k);
			json_decref(k);
			putchar(':');
			show_yaml_value(e, indent);
		}
		return;
	}
	json_array_foreach(v, i, e) {
		printf("%*s-", indent, "");
		show_yaml_value(e, indent);
	}
}

static void
show_field(const char *label, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
show_field(const char *label, const char *fmt, ...)
{
	va_list	 ap;
	char	*s, *c;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	c = cli_table_clean(s ? s : "?");
	printf("  %-12s%s\n", label, c);
	free(c);
	free(s);
}

/*
 * A job's deadline (doc/DESIGN.md "Deadlines"): the time, its slack
 * while it lives, whether it left Spot for good, and a miss: ended after
 * it, or still not finished past it, and by how much.
 */
static void
show_deadline(json_t *job)
{
	const char	*d = cli_json_str(job, "deadline"), *st;
	char		 b1[32], b2[32];
	int64_t		 missed = cli_json_int(job, "missed_by", 0);
	int		 live;

	if (d == NULL)
		return;
	st = cli_json_str(job, "state");
	live = st != NULL && strcmp(st, "succeeded") != 0 &&
	    strcmp(st, "failed") != 0 && strcmp(st, "cancelled") != 0;
	if (json_object_get(job, "slack") != NULL)
		show_field("deadline", "%s (slack %s%s)", d,
		    when_span(cli_json_int(job, "slack", 0), b1, sizeof b1),
		    json_is_true(json_object_get(job, "deadline_safe")) ?
		    "; off Spot for good" : "");
	else
		show_field("deadline", "%s", d);
	if (missed > 0)
		show_field("missed", live ? "deadline passed %s ago; not "
		    "finished yet" : "deadline missed: finished %s after it",
		    cli_fmt_age(missed, b2, sizeof b2));
}

static void
show_header(json_t *job, int64_t now)
{
	const char	*name = cli_json_str(job, "name");
	const char	*s;
	char		 b1[64], b2[64], usd[160], *c;
	json_t		*cur;
	int64_t		 t, n, intr, fail;
	double		 cost, live;

	c = cli_table_clean(name ? name : "-");
	if (json_is_integer(json_object_get(job, "array_id")))
		printf("job %lld.%lld  %s  %s\n",
		    (long long)cli_json_int(job, "array_id", 0),
		    (long long)cli_json_int(job, "task_index", 0), c,
		    (s = cli_json_str(job, "state")) ? s : "?");
	else if (json_is_object(json_object_get(job, "array")))
		printf("array %lld[0-%lld]  %s  %s\n",
		    (long long)cli_json_int(job, "id", 0),
		    (long long)cli_json_int(json_object_get(job, "array"),
		    "count", 0) - 1, c,
		    (s = cli_json_str(job, "state")) ? s : "?");
	else
		printf("job %lld  %s  %s\n",
		    (long long)cli_json_int(job, "id", 0), c,
		    (s = cli_json_str(job, "state")) ? s : "?");
	free(c);
	if (json_is_object(json_object_get(job, "array")))
		show_field("parallelism", "%lld", (long long)cli_json_int(
		    json_object_get(job, "array"), "parallelism", 0));
	show_field("owner", "%s", cli_fmt_user(cli_json_int(job, "owner", -1),
	    b1, sizeof b1));
	show_field("priority", "%lld",
	    (long long)cli_json_int(job, "priority", 0));
	show_field("gpu", "%s", cli_fmt_gang(cli_fmt_gpu(json_object_get(job,
	    "accelerator"), b1, sizeof b1), cli_json_int(job, "nodes", 1), b1,
	    sizeof b1));
	t = cli_json_int(job, "created", 0);
	show_field("submitted", "%s (%s ago)", cli_fmt_time(t, b1, sizeof b1),
	    cli_fmt_age(now - t, b2, sizeof b2));
	t = cli_json_int(job, "updated", 0);
	show_field("changed", "%s (%s ago)", cli_fmt_time(t, b1, sizeof b1),
	    cli_fmt_age(now - t, b2, sizeof b2));
	n = cli_json_int(job, "attempts", 0);
	intr = cli_json_int(job, "interruptions", 0);
	fail = cli_json_int(job, "failures", 0);
	show_field("attempts", "%lld (%lld interruption%s, %lld failure%s)",
	    (long long)n, (long long)intr, intr == 1 ? "" : "s",
	    (long long)fail, fail == 1 ? "" : "s");
	cost = cli_json_num(job, "cost_usd", 0);
	cur = json_object_get(job, "current");
	t = json_is_object(cur) ? cli_json_int(cur, "started", 0) : 0;
	if (t > 0 && cli_json_int(cur, "ended", 0) == 0 && now > t) {
		/* The running attempt's share, at its hourly price. */
		live = cli_json_num(cur, "hourly_usd", 0) * (double)(now - t) /
		    3600.0;
		if (live < cli_json_num(cur, "cost_usd", 0))
			live = cli_json_num(cur, "cost_usd", 0);
		if (cli_json_num(job, "baseline_usd", 0) > 0)
			show_field("cost", "%s so far (ended attempts: %s)",
			    cli_fmt_usd(cost + live, b1, sizeof b1),
			    cli_fmt_saving(cost, cli_json_num(job,
			    "baseline_usd", 0), usd, sizeof usd));
		else
			show_field("cost", "%s so far (%s of ended attempts)",
			    cli_fmt_usd(cost + live, b1, sizeof b1),
			    cli_fmt_usd(cost, b2, sizeof b2));
	} else
		show_field("cost", "%s", cli_fmt_saving(cost,
		    cli_json_num(job, "baseline_usd", 0), usd, sizeof usd));
	show_deadline(job);
	if ((s = cli_json_str(job, "checkpoint")) != NULL) {
		t = cli_json_int(job, "checkpoint_at", 0);
		if (t > 0)
			show_field("checkpoint", "%s (%s ago)", s,
			    cli_fmt_age(now - t, b1, sizeof b1));
		else
			show_field("checkpoint", "%s", s);
	}
	if ((s = cli_json_str(job, "why")) != NULL)
		show_field("why", "%s", s);
	if ((n = cli_json_int(job, "exit_code", -1)) >= 0)
		show_field("exit code", "%lld", (long long)n);
	if ((s = cli_json_str(job, "message")) != NULL)
		show_field("message", "%s", s);
}

/* An array's tasks: index, state, attempts, cost, why. */
static void
show_tasks(json_t *job)
{
	static const struct cli_col	 cols[] = {
		{ "TASK", CLI_RIGHT },
		{ "STATE", CLI_LEFT },
		{ "ATTEMPTS", CLI_RIGHT },
		{ "COST", CLI_RIGHT },
		{ "WHY", CLI_LEFT },
	};
	struct cli_table	*t;
	json_t			*k;
	const char		*s;
	char			 buf[64];
	size_t			 i;

	printf("\nTasks\n");
	t = cli_table_new(cols, NCOLS(cols));
	cli_table_set_indent(t, 2);
	json_array_foreach(json_object_get(job, "tasks"), i, k) {
		cli_table_addf(t, "%lld.%lld",
		    (long long)cli_json_int(k, "array_id", 0),
		    (long long)cli_json_int(k, "task_index", 0));
		cli_table_add(t, (s = cli_json_str(k, "state")) ? s : "?");
		cli_table_addf(t, "%lld",
		    (long long)cli_json_int(k, "attempts", 0));
		cli_table_add(t, cli_fmt_usd(cli_json_num(k, "cost_usd", 0),
		    buf, sizeof buf));
		s = cli_json_str(k, "why");
		if (s == NULL)
			s = cli_json_str(k, "message");
		cli_table_add(t, s != NULL ? s : "");
	}
	cli_table_print(t, stdout, cli_table_width(), 1);
	cli_table_free(t);
	if (json_is_true(json_object_get(job, "tasks_more")))
		printf("  (the first %zu tasks; 'gpuq status --expand' lists "
		    "them all)\n", json_array_size(json_object_get(job,
		    "tasks")));
}

/*
 * Each node of each gang attempt (doc/DESIGN.md "Gangs"), rank 0 the
 * main node: "#2 node 1: us-central1-a running".
 */
static void
show_nodes(json_t *attempts)
{
	json_t		*a, *n;
	const char	*zone, *state;
	size_t		 i, k;

	json_array_foreach(attempts, i, a) {
		if (cli_json_int(a, "nodes", 1) <= 1)
			continue;
		json_array_foreach(json_object_get(a, "node_list"), k, n) {
			zone = cli_json_str(n, "zone");
			state = cli_json_str(n, "state");
			show_field("", "#%lld node %lld: %s %s",
			    (long long)cli_json_int(a, "number",
			    (json_int_t)i + 1),
			    (long long)cli_json_int(n, "rank", (json_int_t)k),
			    zone != NULL ? zone : cli_json_str(a, "region") ?
			    cli_json_str(a, "region") : "-",
			    state != NULL ? state : "?");
		}
	}
}

static void
show_attempts(json_t *attempts, int64_t now)
{
	struct cli_table	*t;
	json_t			*a;
	const char		*end, *state;
	char			 buf[256];
	int64_t			 started, ended, code;
	size_t			 i;

	printf("\nAttempts\n");
	if (json_array_size(attempts) == 0) {
		printf("  none yet\n");
		return;
	}
	t = cli_table_new(show_attempt_cols, NCOLS(show_attempt_cols));
	json_array_foreach(attempts, i, a) {
		cli_table_addf(t, "%lld",
		    (long long)cli_json_int(a, "number", (json_int_t)i + 1));
		end = cli_json_str(a, "end_reason");
		state = cli_json_str(a, "state");
		code = cli_json_int(a, "exit_code", -1);
		if (end != NULL && code >= 0)
			cli_table_addf(t, "%s (exit %lld)", end,
			    (long long)code);
		else
			cli_table_add(t, end != NULL ? end : state);
		cli_table_add(t, cli_fmt_where(a, buf, sizeof buf));
		cli_table_add(t, cli_json_str(a, "machine_type"));
		cli_table_add(t, cli_show_spot(a));
		cli_table_addf(t, "$%.2f", cli_json_num(a, "hourly_usd", 0));
		started = cli_json_int(a, "started", 0);
		ended = cli_json_int(a, "ended", 0);
		cli_table_add(t, cli_fmt_time(started, buf, sizeof buf));
		if (started > 0)
			cli_table_add(t, cli_fmt_age((ended > 0 ? ended : now) -
			    started, buf, sizeof buf));
		else
			cli_table_add(t, "-");
		cli_table_add(t, cli_fmt_usd(cli_json_num(a, "cost_usd", 0),
		    buf, sizeof buf));
		cli_table_add(t, cli_json_str(a, "resumed_from"));
	}
	cli_table_set_indent(t, 2);
	cli_table_print(t, stdout, 0, 1);
	cli_table_free(t);
	/* Why each ended, in the attempt's own words. */
	json_array_foreach(attempts, i, a) {
		if ((end = cli_json_str(a, "message")) != NULL)
			show_field("", "#%lld: %s",
			    (long long)cli_json_int(a, "number",
			    (json_int_t)i + 1), end);
	}
	show_nodes(attempts);
}

static void
show_events(json_t *events)
{
	struct cli_table	*t;
	json_t			*e;
	const char		*from, *to;
	char			 buf[64];
	size_t			 i;

	printf("\nEvents\n");
	if (json_array_size(events) == 0) {
		printf("  none\n");
		return;
	}
	t = cli_table_new(show_event_cols, NCOLS(show_event_cols));
	json_array_foreach(events, i, e) {
		cli_table_add(t, cli_fmt_time(cli_json_int(e, "time", 0), buf,
		    sizeof buf));
		from = cli_json_str(e, "from");
		to = cli_json_str(e, "to");
		if (from != NULL && to != NULL && strcmp(from, to) == 0)
			cli_table_add(t, "");
		else
			cli_table_addf(t, "%s%s-> %s", from ? from : "",
			    from ? " " : "", to ? to : "?");
		from = cli_json_str(e, "message");
		cli_table_add(t, from != NULL ? from : "");
	}
	cli_table_set_indent(t, 2);
	cli_table_print(t, stdout, 0, 1);
	cli_table_free(t);
}

/* A list from the reply or from the job, whichever gpuqd filled. */
static json_t *
show_list(json_t *reply, json_t *job, const char *k1, const char *k2)
{
	json_t	*v;

	if (json_is_array(v = json_object_get(reply, k1)) ||
	    json_is_array(v = json_object_get(reply, k2)) ||
	    json_is_array(v = json_object_get(job, k1)) ||
	    json_is_array(v = json_object_get(job, k2)))
		return v;
	return NULL;
}

int
cli_show_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("show");
	json_t				*reply, *job, *spec;
	json_t				*ref;
	int				 ch, json = 0;

	while ((ch = cli_getopt(argc, argv, "h", opts, cmd)) != -1) {
		switch (ch) {
		case 'J':
			json = 1;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	if ((ref = cli_job_ref(argv[optind])) == NULL) {
		cli_warnx("'%s' is not a job id (a positive integer, or "
		    "ARRAY.TASK for one task of an array)", argv[optind]);
		return GPUQ_EXIT_USAGE;
	}
	reply = cli_call(cli, json_pack("{s:s, s:o}", "op", "show", "id",
	    ref));
	if (reply == NULL)
		return GPUQ_EXIT_FAILED;
	if (!cli_reply_ok(reply)) {
		cli_reply_warn(reply, "job %s", argv[optind]);
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
	if (json) {
		json_object_del(reply, "ok");
		json_dumpf(reply, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(reply);
		return GPUQ_EXIT_OK;
	}
	job = json_object_get(reply, "job");
	show_header(job, (int64_t)time(NULL));
	spec = json_object_get(job, "spec");
	if (!json_is_object(spec))
		spec = json_object_get(reply, "spec");
	if (json_is_object(spec)) {
		printf("\nSpec\n");
		show_yaml(spec, 2);
	}
	if (json_is_array(json_object_get(job, "tasks"))) {
		show_tasks(job);
		json_decref(reply);
		return GPUQ_EXIT_OK;
	}
	show_attempts(show_list(reply, job, "attempts_list", "attempts"),
	    (int64_t)time(NULL));
	show_events(show_list(reply, job, "events", "events"));
	json_decref(reply);
	return GPUQ_EXIT_OK;
}
