/*
 * cli-status.c: gpuq status. Pages through gpuqd's list (keyset: after
 * and next) and prints a table, or the jobs as JSON. Everything shown
 * comes from the replies; the client only computes how long ago, and
 * the running cost of a live attempt. Pages are walked with jscan.c,
 * not parsed into trees: a page is a thousand jobs, and jansson would
 * spend most of gpuq status's time building objects it then drops.
 *
 * On a terminal, without --limit, --all or --json, only the first
 * STATUS_FIRST_PAGE jobs are asked for and shown, with a last line
 * saying how many more there are: a person reads a screen, not ten
 * thousand rows. Scripts (standard output not a terminal) still get
 * every job, as before.
 */
#include "config.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"
#include "common/when.h"
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
	{ "SLACK", CLI_RIGHT },
	{ "CHECKPOINT", CLI_LEFT },
	{ "WHY", CLI_LEFT },
};
#define STATUS_NCOLS	(int)(sizeof status_cols / sizeof status_cols[0])
#define STATUS_COL_SLACK	7

/* The same without SLACK, when no job shown has a deadline. */
static const struct cli_col status_cols_plain[] = {
	{ "ID", CLI_RIGHT },
	{ "NAME", CLI_LEFT },
	{ "STATE", CLI_LEFT },
	{ "GPU", CLI_LEFT },
	{ "WHERE", CLI_LEFT },
	{ "AGE", CLI_RIGHT },
	{ "COST", CLI_RIGHT },
	{ "CHECKPOINT", CLI_LEFT },
	{ "WHY", CLI_LEFT },
};

#define STATUS_FIRST_PAGE	100	/* rows on a terminal by default */

struct status_opts {
	int		 all;
	unsigned	 states;	/* bit per status_states[]; 0 = default */
	int		 owner_set;
	int64_t		 owner;
	int64_t		 limit;		/* 0 = no limit */
	int		 first_page;	/* limit is the terminal's default */
	int		 expand;	/* arrays task by task */
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

/*
 * One list request: the page after AFTER, at most LIMIT jobs; COMPACT:
 * as rows of the table's columns (doc/DESIGN.md "The wire").
 */
static json_t *
status_request(const struct status_opts *o, int64_t after, int64_t limit,
    int compact)
{
	json_t	*req, *st;
	size_t	 i;

	req = json_pack("{s:s, s:I}", "op", "list", "limit",
	    (json_int_t)limit);
	if (compact)
		json_object_set_new(req, "compact", json_true());
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
	if (o->expand)
		json_object_set_new(req, "expand", json_true());
	return req;
}

/*
 * The fields of a job the table shows, taken from its text in the reply
 * (cli_jscan_*), without building the whole object.
 */
struct status_job {
	int64_t		 id;
	char		*name;
	char		*state;
	char		*gpu;
	int64_t		 count;
	int64_t		 nodes;		/* machines of a gang */
	int64_t		 updated;
	int64_t		 attempts;
	double		 cost;		/* ended attempts */
	char		*why;
	char		*message;
	char		*checkpoint;	/* newest checkpoint URI, or NULL */
	int64_t		 checkpoint_at;	/* its time, 0 if unknown */
	int		 live;		/* "current" is an attempt */
	char		*provider;
	char		*zone;
	char		*region;
	int64_t		 started;
	int64_t		 ended;
	double		 cur_cost;
	double		 hourly;
	int		 spot;		/* the live attempt is on Spot */
	int64_t		 array_id;	/* a task: its array; else 0 */
	int64_t		 task_index;
	int64_t		 tasks;		/* a folded array: its size; else 0 */
	int		 deadline;	/* it has one */
	int		 has_slack;
	int64_t		 slack;		/* s, while it lives */
	int64_t		 missed_by;	/* s late; 0 on time */
};

#define STATUS_KEY(k, kl, name) \
	((kl) == sizeof (name) - 1 && memcmp((k), (name), (kl)) == 0)

static void
status_job_done(struct status_job *j)
{
	free(j->name);
	free(j->state);
	free(j->gpu);
	free(j->why);
	free(j->checkpoint);
	free(j->message);
	free(j->provider);
	free(j->zone);
	free(j->region);
	memset(j, 0, sizeof *j);
}

static int
status_acc_member(const char *k, size_t kl, const char *v, size_t vl,
    void *arg)
{
	struct status_job	*j = arg;

	if (STATUS_KEY(k, kl, "type") && j->gpu == NULL)
		j->gpu = cli_jscan_string(v, vl);
	else if (STATUS_KEY(k, kl, "count"))
		j->count = cli_jscan_int(v, vl, 0);
	return 0;
}

static int
status_cur_member(const char *k, size_t kl, const char *v, size_t vl,
    void *arg)
{
	struct status_job	*j = arg;

	if (STATUS_KEY(k, kl, "provider") && j->provider == NULL)
		j->provider = cli_jscan_string(v, vl);
	else if (STATUS_KEY(k, kl, "zone") && j->zone == NULL)
		j->zone = cli_jscan_string(v, vl);
	else if (STATUS_KEY(k, kl, "region") && j->region == NULL)
		j->region = cli_jscan_string(v, vl);
	else if (STATUS_KEY(k, kl, "started"))
		j->started = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "ended"))
		j->ended = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "cost_usd"))
		j->cur_cost = cli_jscan_num(v, vl, 0);
	else if (STATUS_KEY(k, kl, "hourly_usd"))
		j->hourly = cli_jscan_num(v, vl, 0);
	else if (STATUS_KEY(k, kl, "spot"))
		j->spot = vl == 4 && memcmp(v, "true", 4) == 0;
	return 0;
}

#define STATUS_STR(field) do {						\
	if (j->field == NULL)						\
		j->field = cli_jscan_string(v, vl);			\
} while (0)

static int
status_array_member(const char *k, size_t kl, const char *v, size_t vl,
    void *arg)
{
	struct status_job	*j = arg;

	if (STATUS_KEY(k, kl, "count"))
		j->tasks = cli_jscan_int(v, vl, 0);
	return 0;
}

static int
status_job_member(const char *k, size_t kl, const char *v, size_t vl,
    void *arg)
{
	struct status_job	*j = arg;

	if (STATUS_KEY(k, kl, "array_id"))
		j->array_id = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "task_index"))
		j->task_index = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "array") && *v == '{')
		return cli_jscan_object(v, vl, status_array_member, j);
	else if (STATUS_KEY(k, kl, "id"))
		j->id = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "name"))
		STATUS_STR(name);
	else if (STATUS_KEY(k, kl, "state"))
		STATUS_STR(state);
	else if (STATUS_KEY(k, kl, "updated"))
		j->updated = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "attempts"))
		j->attempts = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "nodes"))
		j->nodes = cli_jscan_int(v, vl, 1);
	else if (STATUS_KEY(k, kl, "cost_usd"))
		j->cost = cli_jscan_num(v, vl, 0);
	else if (STATUS_KEY(k, kl, "why"))
		STATUS_STR(why);
	else if (STATUS_KEY(k, kl, "message"))
		STATUS_STR(message);
	else if (STATUS_KEY(k, kl, "checkpoint"))
		STATUS_STR(checkpoint);
	else if (STATUS_KEY(k, kl, "checkpoint_at"))
		j->checkpoint_at = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "deadline"))
		j->deadline = 1;
	else if (STATUS_KEY(k, kl, "slack")) {
		j->slack = cli_jscan_int(v, vl, 0);
		j->has_slack = 1;
	} else if (STATUS_KEY(k, kl, "missed_by"))
		j->missed_by = cli_jscan_int(v, vl, 0);
	else if (STATUS_KEY(k, kl, "accelerator") && *v == '{')
		return cli_jscan_object(v, vl, status_acc_member, j);
	else if (STATUS_KEY(k, kl, "current") && *v == '{') {
		j->live = 1;
		return cli_jscan_object(v, vl, status_cur_member, j);
	}
	return 0;
}

/* Cost so far: ended attempts, plus the live one's running time. */
static double
status_cost(const struct status_job *j, int64_t now)
{
	double	live, est;

	if (!j->live || j->ended > 0)
		return j->cost;
	live = j->cur_cost;
	if (j->started > 0 && now > j->started) {
		est = j->hourly * (double)(now - j->started) / 3600.0;
		if (est > live)
			live = est;
	}
	return j->cost + live;
}

static int
status_is_finished(const char *state)
{
	return state != NULL && (strcmp(state, "succeeded") == 0 ||
	    strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0);
}

/*
 * The newest checkpoint of a live job and its age: "ckpt-00000600 (2m05s)"
 * (the last part of its URI, which tells the step). "-" when the job
 * has none or is finished.
 */
static void
status_checkpoint(struct cli_table *t, const struct status_job *j,
    int64_t now)
{
	const char	*base, *end;
	char		 age[32];
	size_t		 len;
	int64_t		 since;

	if (j->checkpoint == NULL || *j->checkpoint == '\0' ||
	    status_is_finished(j->state)) {
		cli_table_add(t, "-");
		return;
	}
	len = strlen(j->checkpoint);
	end = j->checkpoint + len;
	while (end > j->checkpoint && end[-1] == '/')
		end--;
	base = end;
	while (base > j->checkpoint && base[-1] != '/')
		base--;
	/* A clock ahead of ours (the bucket's) is "just now", not unknown. */
	if (j->checkpoint_at > 0) {
		since = now > j->checkpoint_at ? now - j->checkpoint_at : 0;
		cli_table_addf(t, "%.*s (%s)", (int)(end - base), base,
		    cli_fmt_age(since, age, sizeof age));
	} else
		cli_table_addf(t, "%.*s", (int)(end - base), base);
}

/*
 * The slack of a job with a deadline (doc/DESIGN.md "Deadlines"):
 * "+5h12m" while it lives, "-0h20m" once it cannot make it or missed
 * it by that much, "met" when it ended in time; "-" without one.
 */
static void
status_slack(struct cli_table *t, const struct status_job *j)
{
	char	buf[32];

	if (!j->deadline)
		cli_table_add(t, "-");
	else if (j->has_slack)
		cli_table_add(t, when_span(j->slack, buf, sizeof buf));
	else if (j->missed_by > 0)
		cli_table_add(t, when_span(-j->missed_by, buf, sizeof buf));
	else if (status_is_finished(j->state))
		cli_table_add(t, "met");
	else
		cli_table_add(t, "-");
}

/* V in decimal, ending at END (returned: where it starts). */
static char *
status_itoa(int64_t v, char *end)
{
	uint64_t	u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	*--end = '\0';
	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		*--end = '-';
	return end;
}

/*
 * The GPU cell, and the age, as the row before had them when their
 * inputs are the same: a whole queue is mostly runs of one GPU, and
 * printf was the better part of making a row.
 */
struct status_memo {
	char		 gpu[128];	/* the type it was made of */
	int		 gpu_null;
	int64_t		 count, nodes;
	char		 gpu_cell[256];
	int		 valid;
	int64_t		 age;
	char		 age_cell[64];
	int		 age_valid;
};

static void
status_row(struct cli_table *t, const struct status_job *j, int64_t now)
{
	static struct status_memo	 m;
	const char	*why = j->why;
	char		 buf[256], *p;
	int64_t		 since;
	double		 cost;

	/* An array folded: 42[0-15]; one of its tasks: 42.3. */
	if (j->tasks > 0)
		cli_table_addf(t, "%lld[0-%lld]", (long long)j->id,
		    (long long)j->tasks - 1);
	else if (j->array_id > 0)
		cli_table_addf(t, "%lld.%lld", (long long)j->array_id,
		    (long long)j->task_index);
	else
		cli_table_add(t, status_itoa(j->id, buf + sizeof buf));
	cli_table_add(t, j->name);
	cli_table_add(t, j->state);
	if (!m.valid || m.count != j->count || m.nodes != j->nodes ||
	    m.gpu_null != (j->gpu == NULL) || (j->gpu != NULL &&
	    strcmp(m.gpu, j->gpu) != 0) || (j->gpu != NULL &&
	    strlen(j->gpu) >= sizeof m.gpu)) {
		p = cli_fmt_gang(cli_fmt_gpu_s(j->gpu, j->count, buf,
		    sizeof buf), j->nodes, buf, sizeof buf);
		snprintf(m.gpu_cell, sizeof m.gpu_cell, "%s", p);
		m.gpu_null = j->gpu == NULL;
		snprintf(m.gpu, sizeof m.gpu, "%s", j->gpu ? j->gpu : "");
		m.count = j->count;
		m.nodes = j->nodes;
		m.valid = 1;
	}
	cli_table_add(t, m.gpu_cell);
	if (j->live) {
		(void)cli_fmt_where_s(j->provider, j->zone, j->region, buf,
		    sizeof buf);
		cli_table_addf(t, "%s%s", buf, j->spot ? " spot" : "");
	} else
		cli_table_add(t, "-");
	/* How long in this state; for a running job, how long it ran. */
	since = j->updated;
	if (j->state != NULL && strcmp(j->state, "running") == 0 &&
	    j->started > 0)
		since = j->started;
	if (since > 0 && (!m.age_valid || m.age != now - since)) {
		(void)cli_fmt_age(now - since, m.age_cell, sizeof m.age_cell);
		m.age = now - since;
		m.age_valid = 1;
	}
	cli_table_add(t, since > 0 ? m.age_cell : "-");
	cost = status_cost(j, now);
	if (cost <= 0 && j->attempts == 0)
		cli_table_add(t, "-");
	else
		cli_table_add(t, cli_fmt_usd(cost, buf, sizeof buf));
	status_slack(t, j);
	status_checkpoint(t, j, now);
	/* A finished job: how it ended, if the daemon says. */
	if (status_is_finished(j->state) && j->message != NULL &&
	    *j->message != '\0')
		why = j->message;
	cli_table_add(t, why != NULL ? why : "");
}

/* The states shown: bits of status_states[]. */
static unsigned
status_show_mask(const struct status_opts *o)
{
	unsigned	 show = 0;
	size_t		 i;

	if (o->all)
		return (1u << STATUS_NSTATES) - 1;
	if (o->states != 0)
		return o->states;
	for (i = 0; i < STATUS_NSTATES; i++)
		if (status_states[i].live)
			show |= 1u << i;
	return show;
}

/* The closing line: "3 queued, 1 running". */
static void
status_counts(const struct status_opts *o, json_t *counts, int64_t *seen,
    int shown_all)
{
	unsigned	 show = status_show_mask(o);
	size_t		 i;
	int64_t		 n;
	int		 any = 0;

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
 * After a terminal's first page that did not show everything: how many
 * more, and how to see them. The daemon counts the whole queue, so the
 * number is known unless --user narrowed the view.
 */
static void
status_more(const struct status_opts *o, json_t *counts, int64_t shown)
{
	const char	*cs, *dots;
	unsigned	 show = status_show_mask(o);
	int64_t		 total = 0;
	size_t		 i;

	/* "…" where the terminal speaks UTF-8, as the table's cut cells. */
	(void)setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	dots = cs != NULL && strcmp(cs, "UTF-8") == 0 ? "\xe2\x80\xa6" :
	    "...";

	if (!json_is_object(counts) || o->owner_set) {
		printf("%s more jobs not shown; see them with --limit N or "
		    "--all\n", dots);
		return;
	}
	for (i = 0; i < STATUS_NSTATES; i++)
		if (show & (1u << i))
			total += cli_json_int(counts, status_states[i].name, 0);
	if (total <= shown) {
		printf("%s more jobs not shown; see them with --limit N or "
		    "--all\n", dots);
		return;
	}
	if (o->states != 0)
		printf("%s %lld more matching jobs; see them with --limit "
		    "%lld\n", dots, (long long)(total - shown),
		    (long long)total);
	else
		printf("%s %lld more active jobs; see them with gpuq status "
		    "--limit %lld (or --all)\n", dots,
		    (long long)(total - shown), (long long)total);
}

/* What one gpuq status run gathers over its pages. */
struct status_run {
	struct status_opts	 o;
	int			 compact;	/* rows; 0 once refused */
	json_t			*ahead;		/* next page's request, sent */
	char			*scratch;	/* a row's strings */
	size_t			 scratchcap;
	int64_t			 after;		/* last id seen */
	int64_t			 left;		/* --limit left */
	int			 more;		/* gpuqd said "next" */
	int			 first;		/* nothing printed yet */
	struct cli_table	*t;		/* NULL with --json */
	json_t			*counts;	/* of the first page */
	int64_t			 seen[STATUS_NSTATES];
	int64_t			 now;
	int			 deadlines;	/* jobs with one, shown */
};

/*
 * One page. The reply is walked, not parsed whole: with --json each
 * job's text goes out as gpuqd wrote it, one per line (a whole queue
 * is a hundred pages of a thousand); for the table each job is parsed
 * on its own and dropped once its row is made.
 */
/* Where a page's members are: one pass over the reply, not one each. */
struct status_top {
	const char	*jobs, *counts, *next;
	size_t		 jobs_len, counts_len, next_len;
};

static int
status_top_member(const char *key, size_t klen, const char *v, size_t vlen,
    void *arg)
{
	struct status_top	*top = arg;

	if (klen == 4 && memcmp(key, "jobs", 4) == 0) {
		top->jobs = v;
		top->jobs_len = vlen;
	} else if (klen == 6 && memcmp(key, "counts", 6) == 0) {
		top->counts = v;
		top->counts_len = vlen;
	} else if (klen == 4 && memcmp(key, "next", 4) == 0) {
		top->next = v;
		top->next_len = vlen;
	}
	return 0;
}

/* The columns of a compact row the table reads (api.c's names). */
enum {
	SC_ID, SC_NAME, SC_STATE, SC_GPU, SC_GPU_COUNT, SC_NODES, SC_UPDATED,
	SC_ATTEMPTS, SC_COST, SC_CHECKPOINT, SC_CHECKPOINT_AT, SC_WHY,
	SC_MESSAGE, SC_ARRAY_ID, SC_TASK_INDEX, SC_DEADLINE, SC_SLACK,
	SC_MISSED_BY, SC_TASKS, SC_PROVIDER,
	SC_REGION, SC_ZONE, SC_SPOT, SC_STARTED, SC_ENDED, SC_ATT_COST,
	SC_HOURLY, SC_NCOLS
};
static const char *const status_colnames[SC_NCOLS] = {
	"id", "name", "state", "gpu", "gpu_count", "nodes", "updated",
	"attempts", "cost_usd", "checkpoint", "checkpoint_at", "why",
	"message", "array_id", "task_index", "deadline", "slack",
	"missed_by", "tasks", "provider", "region",
	"zone", "spot", "started", "ended", "attempt_cost_usd", "hourly_usd",
};
#define STATUS_MAXCOLS	64	/* columns of a reply we look at */

/* Where a compact page's members are; "rows" is its last. */
struct status_chead {
	const char	*counts, *next, *columns;
	size_t		 counts_len, next_len, columns_len;
	const char	*rows;		/* from "rows" to the end */
};

static int
status_chead_member(const char *key, size_t klen, const char *v,
    size_t vlen, void *arg)
{
	struct status_chead	*h = arg;

	if (STATUS_KEY(key, klen, "counts")) {
		h->counts = v;
		h->counts_len = vlen;
	} else if (STATUS_KEY(key, klen, "next")) {
		h->next = v;
		h->next_len = vlen;
	} else if (STATUS_KEY(key, klen, "columns")) {
		h->columns = v;
		h->columns_len = vlen;
	}
	return 0;
}

/* An integer value, read without copying it (most are). */
static int64_t
status_int(const char *v, size_t vlen)
{
	const char	*p = v, *e = v + vlen;
	int64_t		 n = 0;
	int		 neg = 0;

	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	if (p == e || e - p > 18)
		return cli_jscan_int(v, vlen, 0);
	for (; p < e; p++) {
		if (*p < '0' || *p > '9')
			return cli_jscan_int(v, vlen, 0);
		n = n * 10 + (*p - '0');
	}
	return neg ? -n : n;
}

static double
status_num(const char *v, size_t vlen)
{
	if (vlen == 3 && memcmp(v, "0.0", 3) == 0)
		return 0;
	return cli_jscan_num(v, vlen, 0);
}

/*
 * String value V into the run's scratch at *at (NUL-terminated; NULL
 * for null). The scratch is as long as the page, so a row's fit.
 */
static char *
status_str(struct status_run *r, size_t *at, const char *v, size_t vlen)
{
	char	*s, *d;

	if (vlen < 2 || *v != '"')
		return NULL;
	if (memchr(v + 1, '\\', vlen - 2) == NULL) {
		s = r->scratch + *at;
		memcpy(s, v + 1, vlen - 2);
		s[vlen - 2] = '\0';
		*at += vlen - 1;
		return s;
	}
	if ((d = cli_jscan_string(v, vlen)) == NULL)
		return NULL;
	s = r->scratch + *at;
	memcpy(s, d, strlen(d) + 1);	/* never longer than V */
	*at += strlen(d) + 1;
	free(d);
	return s;
}

/* One compact row (at its '[') into J; *pos past it. 0, or -1. */
static int
status_crow(struct status_run *r, const int *map, size_t nmap,
    const char **pos, const char *end, struct status_job *j)
{
	const char	*v;
	size_t		 vlen, k = 0, at = 0;
	int		 rc;

	/* The scratch is as long as the page: every string fits. */
	memset(j, 0, sizeof *j);
	j->nodes = 1;
	while ((rc = cli_jscan_next(pos, end, &v, &vlen)) == 1) {
		switch (k < nmap ? map[k] : -1) {
		case SC_ID:
			j->id = status_int(v, vlen);
			break;
		case SC_NAME:
			j->name = status_str(r, &at, v, vlen);
			break;
		case SC_STATE:
			j->state = status_str(r, &at, v, vlen);
			break;
		case SC_GPU:
			j->gpu = status_str(r, &at, v, vlen);
			break;
		case SC_GPU_COUNT:
			j->count = status_int(v, vlen);
			break;
		case SC_NODES:
			j->nodes = status_int(v, vlen);
			break;
		case SC_UPDATED:
			j->updated = status_int(v, vlen);
			break;
		case SC_ATTEMPTS:
			j->attempts = status_int(v, vlen);
			break;
		case SC_COST:
			j->cost = status_num(v, vlen);
			break;
		case SC_CHECKPOINT:
			j->checkpoint = status_str(r, &at, v, vlen);
			break;
		case SC_CHECKPOINT_AT:
			j->checkpoint_at = status_int(v, vlen);
			break;
		case SC_WHY:
			j->why = status_str(r, &at, v, vlen);
			break;
		case SC_MESSAGE:
			j->message = status_str(r, &at, v, vlen);
			break;
		case SC_ARRAY_ID:
			j->array_id = status_int(v, vlen);
			break;
		case SC_TASK_INDEX:
			j->task_index = status_int(v, vlen);
			break;
		case SC_DEADLINE:
			j->deadline = status_int(v, vlen) > 0;
			break;
		case SC_SLACK:
			if (vlen != 4 || memcmp(v, "null", 4) != 0) {
				j->slack = status_int(v, vlen);
				j->has_slack = 1;
			}
			break;
		case SC_MISSED_BY:
			j->missed_by = status_int(v, vlen);
			break;
		case SC_TASKS:
			j->tasks = status_int(v, vlen);
			break;
		case SC_PROVIDER:
			/* A live attempt's values follow: "current". */
			j->live = 1;
			j->provider = status_str(r, &at, v, vlen);
			break;
		case SC_REGION:
			j->region = status_str(r, &at, v, vlen);
			break;
		case SC_ZONE:
			j->zone = status_str(r, &at, v, vlen);
			break;
		case SC_SPOT:
			j->spot = vlen == 4 && memcmp(v, "true", 4) == 0;
			break;
		case SC_STARTED:
			j->started = status_int(v, vlen);
			break;
		case SC_ENDED:
			j->ended = status_int(v, vlen);
			break;
		case SC_ATT_COST:
			j->cur_cost = status_num(v, vlen);
			break;
		case SC_HOURLY:
			j->hourly = status_num(v, vlen);
			break;
		default:
			break;		/* a column of a newer gpuqd */
		}
		k++;
	}
	if (rc != 0)
		return -1;
	return 0;
}

/*
 * A compact page (doc/DESIGN.md "The wire"): "next" and "counts" come
 * first, then the rows, each parsed in one pass into a status_job whose
 * strings sit in the scratch buffer: no allocation per job. Returns
 * -ENOPROTOOPT when gpuqd does not know "compact" (it names the field),
 * so the caller asks the old way.
 */
static int
status_page_compact(struct cli *cli, struct status_run *r, int64_t page)
{
	struct status_chead	 h;
	struct status_job	 job;
	const char	*line, *pos, *end, *v, *code, *field;
	char		*l, *cause = NULL;
	json_t		*reply = NULL, *err, *req;
	json_error_t	 jerr;
	size_t		 len, vlen, nmap = 0, i;
	char		 num[32];
	int		 map[STATUS_MAXCOLS], rc, k;

	line = NULL;
	if (r->ahead != NULL) {
		/* Asked for while the last page was printed: take its reply,
		 * or, if it is not a page (busy, a broken connection), ask
		 * again the ordinary way. */
		req = r->ahead;
		r->ahead = NULL;
		if (cli_conn_recv_line(cli->conn, &l, &len, &cause) == 0 &&
		    cli_jscan_member(l, len, "ok", &v, &vlen) == 1 &&
		    vlen == 4 && memcmp(v, "true", 4) == 0) {
			line = l;
			json_decref(req);
		} else {
			free(cause);
			cli_conn_free(cli->conn);
			cli->conn = NULL;
			reply = cli_call_raw(cli, req, &line, &len);
		}
	} else
		reply = cli_call_raw(cli, status_request(&r->o, r->after, page,
		    1), &line, &len);
	if (line == NULL) {
		err = json_object_get(reply, "error");
		code = cli_json_str(err, "code");
		field = cli_json_str(err, "field");
		if (code != NULL && field != NULL &&
		    strcmp(code, GPUQ_ERR_BAD_REQUEST) == 0 &&
		    strcmp(field, "compact") == 0) {
			json_decref(reply);
			return -ENOPROTOOPT;
		}
		rc = reply ? cli_reply_warn(reply, "status") : GPUQ_EXIT_FAILED;
		json_decref(reply);
		return rc;
	}
	memset(&h, 0, sizeof h);
	/* The members before "rows"; the rows are walked once, below. */
	if (cli_jscan_head(line, len, "rows", status_chead_member, &h,
	    &h.rows) != 1 || h.columns == NULL) {
		/* A gpuqd that passed over "compact" without refusing it
		 * answers with objects: ask it the old way. */
		if (cli_jscan_member(line, len, "jobs", &v, &vlen) == 1)
			return -ENOPROTOOPT;
		goto bad;
	}
	pos = h.columns;
	end = pos + h.columns_len;
	while ((rc = cli_jscan_next(&pos, end, &v, &vlen)) == 1) {
		if (nmap == STATUS_MAXCOLS)
			continue;
		map[nmap] = -1;
		for (k = 0; k < SC_NCOLS; k++)
			if (vlen == strlen(status_colnames[k]) + 2 &&
			    memcmp(v + 1, status_colnames[k], vlen - 2) == 0)
				map[nmap] = k;
		nmap++;
	}
	if (rc != 0)
		goto bad;
	if (h.next != NULL && h.next_len >= sizeof num)
		goto bad;
	r->more = h.next != NULL;
	if (r->more) {
		memcpy(num, h.next, h.next_len);
		num[h.next_len] = '\0';
		if (cli_parse_id(num, &r->after) != 0)
			goto bad;
	}
	/*
	 * Without --limit the next page is asked for now, so gpuqd writes it
	 * while this one is printed: the two ends' work overlaps.
	 */
	if (r->more && r->o.limit == 0 && cli->conn != NULL) {
		req = status_request(&r->o, r->after, page, 1);
		if (cli_conn_send(cli->conn, req, &cause) == 0)
			r->ahead = req;
		else {
			free(cause);
			json_decref(req);
			cli_conn_free(cli->conn);
			cli->conn = NULL;
		}
	}
	/* A row's strings are never longer than the page. */
	if (r->scratchcap < len + 1) {
		r->scratchcap = len + 1;
		r->scratch = xrealloc(r->scratch, r->scratchcap);
	}
	pos = h.rows;
	end = line + len;
	while (pos < end && *pos == ' ')
		pos++;
	if (pos >= end || *pos != '[')
		goto bad;
	pos++;
	for (i = 0;; i++) {
		while (pos < end && (*pos == ' ' || *pos == '\n'))
			pos++;
		if (pos < end && *pos == ']')
			break;
		if (i > 0) {
			if (pos >= end || *pos != ',')
				goto bad;
			pos++;
			while (pos < end && *pos == ' ')
				pos++;
		}
		if (pos >= end || *pos != '[' ||
		    status_crow(r, map, nmap, &pos, end, &job) != 0)
			goto bad;
		r->left--;
		status_row(r->t, &job, r->now);
		r->deadlines += job.deadline;
		if (job.state != NULL && (k = status_state_index(job.state,
		    strlen(job.state))) >= 0)
			r->seen[k]++;
	}
	if (r->counts == NULL && h.counts != NULL)
		r->counts = json_loadb(h.counts, h.counts_len, 0, &jerr);
	return 0;
bad:
	cli_warnx("status: gpuqd's reply is not a page of jobs");
	return GPUQ_EXIT_FAILED;
}

static int
status_page(struct cli *cli, struct status_run *r, int64_t page)
{
	struct status_top	 top;
	struct status_job	 job;
	const char	*line, *pos, *end, *v;
	json_t		*reply;
	json_error_t	 err;
	size_t		 len, vlen;
	char		 num[32];
	int		 rc, k;

	if (r->compact) {
		rc = status_page_compact(cli, r, page);
		if (rc != -ENOPROTOOPT)
			return rc;
		r->compact = 0;		/* a gpuqd older than "compact" */
		if (page > GPUQ_LIST_MAX)
			page = GPUQ_LIST_MAX;
	}
	reply = cli_call_raw(cli, status_request(&r->o, r->after, page, 0),
	    &line, &len);
	if (line == NULL) {
		rc = reply ? cli_reply_warn(reply, "status") : GPUQ_EXIT_FAILED;
		json_decref(reply);
		return rc;
	}
	memset(&top, 0, sizeof top);
	if (cli_jscan_object(line, len, status_top_member, &top) != 0 ||
	    top.jobs == NULL)
		goto bad;
	pos = top.jobs;
	end = pos + top.jobs_len;
	while ((rc = cli_jscan_next(&pos, end, &v, &vlen)) == 1) {
		r->left--;
		if (r->t == NULL) {
			fputs(r->first ? "\n" : ",\n", stdout);
			fwrite(v, 1, vlen, stdout);
			r->first = 0;
			continue;
		}
		memset(&job, 0, sizeof job);
		if (cli_jscan_object(v, vlen, status_job_member, &job) != 0) {
			status_job_done(&job);
			goto bad;
		}
		status_row(r->t, &job, r->now);
		r->deadlines += job.deadline;
		if (job.state != NULL && (k = status_state_index(job.state,
		    strlen(job.state))) >= 0)
			r->seen[k]++;
		status_job_done(&job);
	}
	if (rc != 0)
		goto bad;
	if (r->counts == NULL && r->t != NULL && top.counts != NULL)
		r->counts = json_loadb(top.counts, top.counts_len, 0, &err);
	if (top.next != NULL && top.next_len >= sizeof num)
		goto bad;
	r->more = top.next != NULL;
	if (r->more) {
		memcpy(num, top.next, top.next_len);
		num[top.next_len] = '\0';
		if (cli_parse_id(num, &r->after) != 0)
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
		{ "expand", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char			 obuf[1 << 16];
	const struct cli_cmd		*cmd = cli_cmd_find("status");
	struct status_run		 r;
	struct status_opts		*o = &r.o;
	int64_t				 page;
	int				 ch, json = 0, rc = 0;

	memset(&r, 0, sizeof r);
	r.first = 1;
	while ((ch = cli_getopt(argc, argv, "au:n:h", opts, cmd)) != -1) {
		switch (ch) {
		case 'a':
			o->all = 1;
			break;
		case 'S':
			if (status_parse_states(optarg, o) != 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'u':
			if (status_parse_user(optarg, o) != 0)
				return GPUQ_EXIT_USAGE;
			break;
		case 'n':
			if (cli_parse_id(optarg, &o->limit) != 0) {
				cli_warnx("--limit: '%s' is not a positive "
				    "integer", optarg);
				return GPUQ_EXIT_USAGE;
			}
			break;
		case 'J':
			json = 1;
			break;
		case 'E':
			o->expand = 1;
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
	if (o->all)
		o->states = 0;	/* --all covers any --state */

	if (json) {
		(void)setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
		fputs("[", stdout);
	} else {
		r.t = cli_table_new(status_cols, STATUS_NCOLS);
		/* WHY is read whole: under its job when it does not fit. */
		cli_table_set_below(r.t, 1);
	}
	/* A person at a terminal gets a first page (gpuq(1) status). */
	if (o->limit == 0 && !o->all && !json && isatty(STDOUT_FILENO)) {
		o->limit = STATUS_FIRST_PAGE;
		o->first_page = 1;
	}
	r.left = o->limit;
	r.now = (int64_t)time(NULL);
	r.compact = !json;	/* the table's columns only */
	do {
		page = r.compact ? GPUQ_LIST_COMPACT_MAX : GPUQ_LIST_MAX;
		if (o->limit > 0 && r.left < page)
			page = r.left;
		if ((rc = status_page(cli, &r, page)) != 0)
			break;
	} while (r.more && (o->limit == 0 || r.left > 0));

	if (json)
		fputs(r.first ? "]\n" : "\n]\n", stdout);
	else if (rc == 0) {
		/* SLACK only when a job shown has a deadline. */
		if (r.deadlines == 0)
			cli_table_drop(r.t, status_cols_plain,
			    STATUS_COL_SLACK);
		if (cli_table_rows(r.t) > 0)
			cli_table_print(r.t, stdout, cli_table_width(), 1);
		status_counts(o, r.counts, r.seen, !r.more || o->first_page);
		if (r.more && o->first_page)
			status_more(o, r.counts, (int64_t)cli_table_rows(r.t));
	}
	cli_table_free(r.t);
	json_decref(r.counts);
	free(r.scratch);
	json_decref(r.ahead);
	return rc;
}
