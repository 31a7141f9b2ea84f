/*
 * cli-history.c: gpuq history, the accounting of ended jobs (gpuq(1)
 * "history", doc/DESIGN.md "Accounting").
 *
 * Asks gpuqd's history op page by page (a thousand jobs a page, by the
 * time they ended) and prints a table, CSV or JSON; with --by gpuqd adds
 * the totals up itself and one request answers. Costs and the Vertex AI
 * baseline are gpuqd's figures, printed as they come: the client does
 * no arithmetic on money but the sums of the table's total line.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/duration.h"
#include "common/proto.h"
#include "common/xmalloc.h"

enum hist_fmt {
	HIST_TABLE = 0,
	HIST_JSON,
	HIST_CSV,
};

struct hist_opts {
	int64_t		 since;		/* -1 none */
	int64_t		 until;
	int64_t		 owner;		/* -1 any */
	const char	*state;
	const char	*name;
	const char	*by;
	int		 fmt;
};

/*
 * A time for --since/--until: a duration ago (7d, 12h, 90m) or a local
 * date, 2026-11-01, 2026-11-01T09:00[:00] or with a space. -1 and a
 * message if neither.
 */
static int64_t
hist_parse_time(const char *opt, const char *arg)
{
	static const char *const forms[] = {
		"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
		"%Y-%m-%d %H:%M", "%Y-%m-%d",
	};
	struct tm	 tm;
	const char	*end;
	int64_t		 sec;
	time_t		 t;
	size_t		 i;

	if (duration_parse(arg, &sec) == 0 && sec >= 0)
		return (int64_t)time(NULL) - sec;
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		memset(&tm, 0, sizeof tm);
		end = strptime(arg, forms[i], &tm);
		if (end == NULL || *end != '\0')
			continue;
		tm.tm_isdst = -1;
		if ((t = mktime(&tm)) == (time_t)-1)
			break;
		return (int64_t)t;
	}
	cli_warnx("%s '%s' is neither a date (2026-11-01, 2026-11-01T09:00) "
	    "nor a duration ago (7d, 12h, 30m)", opt, arg);
	return -1;
}

static int
hist_parse_user(const char *arg, int64_t *ret)
{
	struct passwd	*pw;
	char		*end;
	long long	 n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (*arg >= '0' && *arg <= '9' && errno == 0 && *end == '\0' &&
	    n >= 0 && n < (long long)UINT32_MAX)
		*ret = n;
	else if ((pw = getpwnam(arg)) != NULL)
		*ret = pw->pw_uid;
	else {
		cli_warnx("--user: no user '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

/*
 * Owner names, remembered: getpwuid reads /etc/passwd on each call, and
 * a history of 100,000 jobs has a handful of owners.
 */
static const char *
hist_user(int64_t uid)
{
	static struct {
		int64_t	 uid;
		char	 name[64];
	}		 cache[32];
	static size_t	 n, next;
	size_t		 i;

	for (i = 0; i < n; i++)
		if (cache[i].uid == uid)
			return cache[i].name;
	i = n < sizeof cache / sizeof cache[0] ? n++ : next++ %
	    (sizeof cache / sizeof cache[0]);
	cache[i].uid = uid;
	cli_fmt_user(uid, cache[i].name, sizeof cache[i].name);
	return cache[i].name;
}

static json_t *
hist_request(const struct hist_opts *o, const char *after)
{
	json_t	*req = json_object();

	(void)json_object_set_new(req, "op", json_string("history"));
	if (o->since >= 0)
		(void)json_object_set_new(req, "since", json_integer(o->since));
	if (o->until >= 0)
		(void)json_object_set_new(req, "until", json_integer(o->until));
	if (o->owner >= 0)
		(void)json_object_set_new(req, "owner", json_integer(o->owner));
	if (o->state != NULL)
		(void)json_object_set_new(req, "state",
		    json_string(o->state));
	if (o->name != NULL)
		(void)json_object_set_new(req, "name", json_string(o->name));
	if (o->by != NULL)
		(void)json_object_set_new(req, "by", json_string(o->by));
	if (after != NULL)
		(void)json_object_set_new(req, "after", json_string(after));
	return req;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void
hist_csv(const char *s, int last)
{
	const char	*p;

	if (s == NULL)
		s = "";
	if (strpbrk(s, ",\"\r\n") == NULL)
		fputs(s, stdout);
	else {
		putchar('"');
		for (p = s; *p != '\0'; p++) {
			if (*p == '"')
				putchar('"');
			putchar(*p);
		}
		putchar('"');
	}
	putchar(last ? '\n' : ',');
}

static void
hist_csvf(const char *fmt, double v)
{
	printf(fmt, v);
	putchar(',');
}

/*
 * The kind of capacity attempt A ran on, as a suffix: " spot", " flex",
 * " reserved"; "" for standard on-demand. gpuqd before capacity kinds
 * sent only "spot".
 */
static const char *
hist_kind(json_t *a)
{
	const char	*kind = cli_json_str(a, "capacity");

	if (kind == NULL)
		return json_is_true(json_object_get(a, "spot")) ? " spot" : "";
	if (strcmp(kind, "spot") == 0)
		return " spot";
	if (strcmp(kind, "flex") == 0)
		return " flex";
	if (strcmp(kind, "reserved") == 0)
		return " reserved";
	return "";
}

/* "batch/us-central1 spot, gce/us-east1-c flex" of JOB's attempts. */
static char *
hist_where(json_t *job)
{
	json_t	*a;
	char	*s = xstrdup(""), *t, buf[128];
	size_t	 i;

	json_array_foreach(json_object_get(job, "attempts"), i, a) {
		cli_fmt_where_s(cli_json_str(a, "provider"),
		    cli_json_str(a, "zone"), cli_json_str(a, "region"), buf,
		    sizeof buf);
		t = xprintf("%s%s%s%s", s, *s ? ", " : "", buf, hist_kind(a));
		free(s);
		s = t;
	}
	if (*s == '\0') {
		free(s);
		s = xstrdup("-");
	}
	return s;
}

static void
hist_saved_pct(double cost, double base, char *buf, size_t len)
{
	if (base > 0)
		snprintf(buf, len, "%.0f%%", 100.0 * (base - cost) / base);
	else
		snprintf(buf, len, "-");
}

struct hist_total {
	int64_t		 jobs;
	double		 gpu_hours, cost, base;
};

static void
hist_total_print(const struct hist_total *t)
{
	char	usd[160];

	printf("%lld job%s, %.2f GPU-hours, %s\n", (long long)t->jobs,
	    t->jobs == 1 ? "" : "s", t->gpu_hours,
	    cli_fmt_saving(t->cost, t->base, usd, sizeof usd));
}

static void
hist_job_row(struct cli_table *tb, json_t *j, int fmt)
{
	double	 cost = cli_json_num(j, "cost_usd", 0);
	double	 base = cli_json_num(j, "baseline_usd", 0);
	char	 b1[64], b2[64], *where;

	where = hist_where(j);
	cli_fmt_gpu_s(cli_json_str(j, "gpu"), cli_json_int(j, "gpu_count", 0),
	    b2, sizeof b2);
	if (fmt == HIST_CSV) {
		printf("%lld,", (long long)cli_json_int(j, "id", 0));
		hist_csv(cli_json_str(j, "name"), 0);
		hist_csv(hist_user(cli_json_int(j, "owner", -1)), 0);
		hist_csv(cli_json_str(j, "state"), 0);
		hist_csv(b2, 0);
		printf("%lld,%lld,", (long long)cli_json_int(j, "ended", 0),
		    (long long)json_array_size(json_object_get(j,
		    "attempts")));
		hist_csv(where, 0);
		hist_csvf("%.4f", cli_json_num(j, "gpu_hours", 0));
		printf("%lld,", (long long)cli_json_int(j, "interruptions",
		    0));
		hist_csvf("%.6f", cost);
		hist_csvf("%.6f", base);
		printf("%.6f\n", base > 0 ? base - cost : 0);
		free(where);
		return;
	}
	cli_table_addf(tb, "%lld", (long long)cli_json_int(j, "id", 0));
	cli_table_add(tb, cli_json_str(j, "name"));
	cli_table_add(tb, hist_user(cli_json_int(j, "owner", -1)));
	/* A deadline missed is said beside how the job ended. */
	if (cli_json_int(j, "missed_by", 0) > 0)
		cli_table_addf(tb, "%s (missed deadline by %s)",
		    cli_json_str(j, "state"), cli_fmt_age(cli_json_int(j,
		    "missed_by", 0), b1, sizeof b1));
	else
		cli_table_add(tb, cli_json_str(j, "state"));
	cli_table_add(tb, b2);
	cli_table_add(tb, cli_fmt_time(cli_json_int(j, "ended", 0), b1,
	    sizeof b1));
	cli_table_addf(tb, "%.2f", cli_json_num(j, "gpu_hours", 0));
	cli_table_addf(tb, "%lld", (long long)cli_json_int(j,
	    "interruptions", 0));
	cli_table_addf(tb, "$%.2f", cost);
	if (base > 0) {
		cli_table_addf(tb, "$%.2f", base);
		cli_table_addf(tb, "$%.2f", base - cost);
	} else {
		cli_table_add(tb, NULL);
		cli_table_add(tb, NULL);
	}
	cli_table_add(tb, where);
	free(where);
}

static int
hist_jobs(struct cli *cli, const struct hist_opts *o)
{
	static const struct cli_col cols[] = {
		{ "ID", CLI_RIGHT }, { "NAME", CLI_LEFT }, { "USER", CLI_LEFT },
		{ "STATE", CLI_LEFT }, { "GPU", CLI_LEFT },
		{ "ENDED", CLI_LEFT }, { "GPU-H", CLI_RIGHT },
		{ "INT", CLI_RIGHT }, { "COST", CLI_RIGHT },
		{ "VERTEX", CLI_RIGHT }, { "SAVED", CLI_RIGHT },
		{ "WHERE", CLI_LEFT },
	};
	struct cli_table	*tb = NULL;
	struct hist_total	 t;
	json_t			*reply, *all = NULL, *j;
	char			*after = NULL;
	const char		*next;
	size_t			 i;

	memset(&t, 0, sizeof t);
	if (o->fmt == HIST_JSON)
		all = json_array();
	else if (o->fmt == HIST_CSV)
		printf("id,name,user,state,gpu,ended,attempts,where,gpu_hours,"
		    "interruptions,cost_usd,baseline_usd,saved_usd\n");
	else {
		tb = cli_table_new(cols, sizeof cols / sizeof cols[0]);
		cli_table_set_below(tb, 1);
	}
	for (;;) {
		reply = cli_call(cli, hist_request(o, after));
		if (reply == NULL || !cli_reply_ok(reply)) {
			if (reply != NULL)
				(void)cli_reply_warn(reply, "history");
			json_decref(reply);
			json_decref(all);
			cli_table_free(tb);
			free(after);
			return GPUQ_EXIT_FAILED;
		}
		json_array_foreach(json_object_get(reply, "jobs"), i, j) {
			t.jobs++;
			t.gpu_hours += cli_json_num(j, "gpu_hours", 0);
			t.cost += cli_json_num(j, "cost_usd", 0);
			t.base += cli_json_num(j, "baseline_usd", 0);
			if (all != NULL)
				(void)json_array_append(all, j);
			else
				hist_job_row(tb, j, o->fmt);
		}
		free(after);
		after = NULL;
		next = cli_json_str(reply, "next");
		if (next != NULL)
			after = xstrdup(next);
		json_decref(reply);
		if (after == NULL)
			break;
	}
	if (all != NULL) {
		(void)json_dumpf(all, stdout, JSON_INDENT(2) |
		    JSON_REAL_PRECISION(GPUQ_REPLY_PRECISION));
		printf("\n");
		json_decref(all);
	} else if (tb != NULL) {
		if (cli_table_rows(tb) > 0)
			cli_table_print(tb, stdout, cli_table_width(), 1);
		hist_total_print(&t);
		cli_table_free(tb);
	}
	return GPUQ_EXIT_OK;
}

static int
hist_totals(struct cli *cli, const struct hist_opts *o)
{
	static const struct cli_col cols[] = {
		{ "KEY", CLI_LEFT }, { "JOBS", CLI_RIGHT },
		{ "ATTEMPTS", CLI_RIGHT }, { "GPU-H", CLI_RIGHT },
		{ "INT", CLI_RIGHT }, { "COST", CLI_RIGHT },
		{ "VERTEX", CLI_RIGHT }, { "SAVED", CLI_RIGHT },
		{ "SAVED%", CLI_RIGHT },
	};
	struct cli_col		 c[sizeof cols / sizeof cols[0]];
	struct cli_table	*tb;
	struct hist_total	 t;
	json_t			*reply, *g, *tot;
	const char		*key;
	char			 b[64], hdr[16];
	double			 cost, base;
	size_t			 i, k;

	reply = cli_call(cli, hist_request(o, NULL));
	if (reply == NULL || !cli_reply_ok(reply)) {
		if (reply != NULL)
			(void)cli_reply_warn(reply, "history");
		json_decref(reply);
		return GPUQ_EXIT_FAILED;
	}
	if (o->fmt == HIST_JSON) {
		(void)json_object_del(reply, "ok");
		(void)json_dumpf(reply, stdout, JSON_INDENT(2) |
		    JSON_REAL_PRECISION(GPUQ_REPLY_PRECISION));
		printf("\n");
		json_decref(reply);
		return GPUQ_EXIT_OK;
	}
	if (o->fmt == HIST_CSV)
		printf("%s,jobs,attempts,gpu_hours,interruptions,cost_usd,"
		    "baseline_usd,saved_usd\n", o->by);
	memcpy(c, cols, sizeof c);
	for (k = 0; o->by[k] != '\0' && k < sizeof hdr - 1; k++)
		hdr[k] = o->by[k] >= 'a' && o->by[k] <= 'z' ?
		    o->by[k] - 'a' + 'A' : o->by[k];
	hdr[k] = '\0';
	c[0].header = hdr;
	tb = cli_table_new(c, sizeof c / sizeof c[0]);
	json_array_foreach(json_object_get(reply, "groups"), i, g) {
		key = cli_json_str(g, "key");
		if (strcmp(o->by, "user") == 0 && key != NULL)
			key = hist_user(strtoll(key, NULL, 10));
		cost = cli_json_num(g, "cost_usd", 0);
		base = cli_json_num(g, "baseline_usd", 0);
		if (o->fmt == HIST_CSV) {
			hist_csv(key, 0);
			printf("%lld,%lld,", (long long)cli_json_int(g, "jobs",
			    0), (long long)cli_json_int(g, "attempts", 0));
			hist_csvf("%.4f", cli_json_num(g, "gpu_hours", 0));
			printf("%lld,", (long long)cli_json_int(g,
			    "interruptions", 0));
			hist_csvf("%.6f", cost);
			hist_csvf("%.6f", base);
			printf("%.6f\n", base > 0 ? base - cost : 0);
			continue;
		}
		cli_table_add(tb, key);
		cli_table_addf(tb, "%lld", (long long)cli_json_int(g, "jobs",
		    0));
		cli_table_addf(tb, "%lld", (long long)cli_json_int(g,
		    "attempts", 0));
		cli_table_addf(tb, "%.2f", cli_json_num(g, "gpu_hours", 0));
		cli_table_addf(tb, "%lld", (long long)cli_json_int(g,
		    "interruptions", 0));
		cli_table_addf(tb, "$%.2f", cost);
		cli_table_addf(tb, "$%.2f", base);
		cli_table_addf(tb, "$%.2f", base - cost);
		hist_saved_pct(cost, base, b, sizeof b);
		cli_table_add(tb, b);
	}
	if (o->fmt == HIST_TABLE) {
		if (cli_table_rows(tb) > 0)
			cli_table_print(tb, stdout, cli_table_width(), 1);
		tot = json_object_get(reply, "total");
		t.jobs = cli_json_int(tot, "jobs", 0);
		t.gpu_hours = cli_json_num(tot, "gpu_hours", 0);
		t.cost = cli_json_num(tot, "cost_usd", 0);
		t.base = cli_json_num(tot, "baseline_usd", 0);
		hist_total_print(&t);
	}
	cli_table_free(tb);
	json_decref(reply);
	return GPUQ_EXIT_OK;
}

int
cli_history_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "user", required_argument, NULL, 'u' },
		{ "state", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'N' },
		{ "by", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("history");
	struct hist_opts		 o;
	int				 ch;

	memset(&o, 0, sizeof o);
	o.since = o.until = o.owner = -1;
	while ((ch = cli_getopt(argc, argv, "u:h", opts, cmd)) != -1) {
		switch (ch) {
		case 'S':
			if ((o.since = hist_parse_time("--since",
			    optarg)) < 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'U':
			if ((o.until = hist_parse_time("--until",
			    optarg)) < 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'u':
			if (hist_parse_user(optarg, &o.owner) != 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 's':
			o.state = optarg;
			break;
		case 'N':
			o.name = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "user") != 0 &&
			    strcmp(optarg, "gpu") != 0 &&
			    strcmp(optarg, "service") != 0 &&
			    strcmp(optarg, "day") != 0) {
				cli_warnx("--by '%s': give user, gpu, service "
				    "or day", optarg);
				return GPUQ_EXIT_USAGE;
			}
			o.by = optarg;
			break;
		case 'j':
			if (o.fmt == HIST_CSV)
				goto both;
			o.fmt = HIST_JSON;
			break;
		case 'c':
			if (o.fmt == HIST_JSON)
				goto both;
			o.fmt = HIST_CSV;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_warnx("history: unexpected '%s'; filters are options "
		    "(--name NAME)", argv[optind]);
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	return o.by != NULL ? hist_totals(cli, &o) : hist_jobs(cli, &o);

both:
	cli_warnx("history: --json and --csv: choose one");
	return GPUQ_EXIT_USAGE;
}
