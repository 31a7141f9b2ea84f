/*
 * test-store.c: unit tests of the SQLite store (store/store.h).
 *
 * Each case gets a fresh directory (tests/unit/unittest.h) and a fresh
 * database in it. Error paths are asserted exactly. The migration cases build
 * version-1 and version-2 databases from tests/unit/data/store-v*.sql;
 * the crash case
 * kills a writer with SIGKILL and checks that every batch it was told
 * was committed is there, and no half batch is. The plan case asserts
 * the indexes the hot queries must use. Includes store-int.h for the
 * connection and statements, and nothing else of the store's insides.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/xmalloc.h"
#include "store/store-int.h"
#include "tests/unit/unittest.h"

#ifndef STORE_TEST_DATA
#define STORE_TEST_DATA "tests/unit/data"
#endif

struct fixture {
	struct unittest	*ut;		/* the directory */
	char		*path;		/* gpuq.db in it */
	struct store	*st;		/* open on PATH, or NULL */
};

static int
setup_nostore(void **state)
{
	struct fixture	*fx;

	fx = xcalloc(1, sizeof *fx);
	fx->ut = unittest_new("test-store");
	fx->path = unittest_path(fx->ut, "gpuq.db");
	*state = fx;
	return 0;
}

static int
setup(void **state)
{
	struct fixture	*fx;
	char		*cause = NULL;

	setup_nostore(state);
	fx = *state;
	assert_int_equal(store_open(fx->path, &fx->st, &cause), 0);
	assert_null(cause);
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	store_close(fx->st);
	unittest_free(fx->ut);
	free(fx->path);
	free(fx);
	return 0;
}

/* Run SQL on the store's own connection and return the first integer. */
static int64_t
sql_int(struct store *st, const char *fmt, ...)
{
	sqlite3_stmt	*s;
	va_list		 ap;
	char		*sql;
	int64_t		 v;

	va_start(ap, fmt);
	assert_int_not_equal(vasprintf(&sql, fmt, ap), -1);
	va_end(ap);
	assert_int_equal(sqlite3_prepare_v2(st->db, sql, -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	free(sql);
	return v;
}

/* First integer of SQL on DB (a connection of the test's own). */
static int64_t
db_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*s;
	int64_t		 v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The text SQL gives on DB, as a new string ("" for NULL). */
static char *
db_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*s;
	const char	*t;
	char		*v;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	t = (const char *)sqlite3_column_text(s, 0);
	v = xstrdup(t != NULL ? t : "");
	sqlite3_finalize(s);
	return v;
}

/* Append ",ID" (or "ID" first) to *LIST. */
static void
list_add(char **list, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void
list_add(char **list, const char *fmt, ...)
{
	va_list	 ap;
	char	*item, *tmp;

	va_start(ap, fmt);
	assert_int_not_equal(vasprintf(&item, fmt, ap), -1);
	va_end(ap);
	tmp = xprintf("%s%s%s", *list, **list != '\0' ? "," : "", item);
	free(item);
	free(*list);
	*list = tmp;
}

static int
list_add_job(const struct store_job *j, void *arg)
{
	list_add(arg, "%lld", (long long)j->id);
	return 0;
}

static int
list_add_queued(const struct store_queued *q, void *arg)
{
	if (q->why != NULL)
		assert_int_equal(strlen(q->why), q->why_len);
	list_add(arg, "%lld:%d:%s:%d:%lld:%g", (long long)q->id, q->priority,
	    q->why != NULL ? q->why : "-", q->interruptions,
	    (long long)q->not_before, q->cost_usd);
	return 0;
}

/* The same as list_add_queued, in SQL, for a group_concat(). */
#define QUEUED_SQL	"id || ':' || priority || ':' || coalesce(why, '-')" \
	" || ':' || interruptions || ':' || not_before || ':' ||" \
	" printf('%g', cost_usd)"

/* Every page of store_job_list(F), LIMIT at a time, as "id,id,...". */
static char *
list_all(struct store *st, const struct store_filter *f, int limit)
{
	char	*out = xstrdup(""), *cause = NULL, *p;
	int64_t	 after = 0;
	int	 rc, more = 1;

	while (more) {
		rc = store_job_list(st, f, after, limit, list_add_job, &out,
		    &more, &cause);
		if (rc < 0)
			fail_msg("list: %s", cause);
		if (rc == 0)
			break;
		p = strrchr(out, ',');
		after = strtoll(p != NULL ? p + 1 : out, NULL, 10);
	}
	return out;
}

/* Insert N jobs named NAME (owner OWNER, priority PRIO) into IDS. */
static void
insert_n(struct store *st, size_t n, const char *name, uid_t owner,
    int prio, int held, int64_t *ids)
{
	struct store_job_new	*jobs;
	char			*cause = NULL;
	size_t			 i;

	jobs = xcalloc(n, sizeof *jobs);
	for (i = 0; i < n; i++) {
		jobs[i].name = name;
		jobs[i].owner = owner;
		jobs[i].priority = prio;
		jobs[i].spec = "{\"image\":\"x\"}";
		jobs[i].held = held;
	}
	assert_int_equal(store_jobs_insert(st, jobs, n, ids, &cause), 0);
	assert_null(cause);
	free(jobs);
}

static int64_t
insert_one(struct store *st, const char *name, int prio)
{
	int64_t	id;

	insert_n(st, 1, name, 1000, prio, 0, &id);
	return id;
}

/* Collects ids given to a job callback. */
struct collect {
	int64_t	ids[512];
	int	n;
	int	stop_at;	/* return 7 at this count, if > 0 */
};

static int
collect_job(const struct store_job *j, void *arg)
{
	struct collect	*c = arg;

	assert_true(c->n < 512);
	c->ids[c->n++] = j->id;
	if (c->stop_at > 0 && c->n == c->stop_at)
		return 7;
	return 0;
}

static void
test_store_open_creates(void **state)
{
	struct fixture	*fx = *state;
	const char	*id;
	struct stat	 sb;

	assert_int_equal(stat(fx->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	id = store_install_id(fx->st);
	assert_int_equal(strlen(id), 8);
	assert_int_equal(strspn(id, "0123456789abcdef"), 8);
	assert_int_equal(sql_int(fx->st, "PRAGMA user_version"),
	    store_schema_version());
	assert_true(store_schema_version() >= 2);
	assert_int_equal(sql_int(fx->st, "PRAGMA foreign_keys"), 1);
	assert_int_equal(sql_int(fx->st, "PRAGMA synchronous"), 2);
	assert_int_equal(sql_int(fx->st,
	    "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"),
	    1);
}

static void
test_store_reopen_keeps_install_id(void **state)
{
	struct fixture	*fx = *state;
	char		 id[9], *cause = NULL, *v = NULL;
	int64_t		 ids[3];

	insert_n(fx->st, 3, "a", 1000, 0, 0, ids);
	memcpy(id, store_install_id(fx->st), sizeof id);
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(store_open(fx->path, &fx->st, &cause), 0);
	assert_string_equal(store_install_id(fx->st), id);
	assert_int_equal(store_meta_get(fx->st, "install_id", &v, &cause), 0);
	assert_string_equal(v, id);
	free(v);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs"), 3);
}

static void
test_store_open_bad_path(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		*p, *cause = NULL;

	p = unittest_path(fx->ut, "no/such/dir/gpuq.db");
	assert_int_equal(store_open(p, &st, &cause), -ENOENT);
	assert_null(st);
	assert_non_null(cause);
	assert_non_null(strstr(cause, p));
	free(cause);
	free(p);
}

static void
test_store_open_not_a_database(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	char		*cause = NULL;
	int		 fd;

	fd = open(fx->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "this is not SQLite, it is a text file, "
	    "long enough to have a header\n", 69), 69);
	close(fd);
	assert_int_equal(store_open(fx->path, &st, &cause), -EIO);
	assert_null(st);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "not a database"));
	free(cause);
}

static int
collect_event(const struct store_event *e, void *arg)
{
	struct store_event	*out = arg;
	int			 i = 0;

	while (out[i].job_id != 0)
		i++;
	assert_true(i < 15);
	out[i] = *e;
	out[i].message = xstrdup(e->message != NULL ? e->message : "(null)");
	return 0;
}

static void
events_free(struct store_event *ev)
{
	int	i;

	for (i = 0; ev[i].job_id != 0; i++)
		free(ev[i].message);
}

/* store_event_list callback that only lets them be counted. */
static int
count_event(const struct store_event *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

static void
test_store_insert_batch(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 jobs[3];
	struct store_event	 ev[16];
	int64_t			 ids[3];
	char			*cause = NULL;
	int			 i;

	memset(jobs, 0, sizeof jobs);
	jobs[0].name = "a";
	jobs[0].spec = "{\"n\":0}";
	jobs[1].name = "b";
	jobs[1].spec = "{\"n\":1}";
	jobs[1].held = 1;
	jobs[2].name = "c";
	jobs[2].spec = "{\"n\":2}";
	jobs[2].labels = "{\"team\":\"vision\"}";
	assert_int_equal(store_jobs_insert(fx->st, jobs, 3, ids, &cause), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(ids[i], i + 1);
	insert_n(fx->st, 1, "d", 1000, 0, 0, ids);
	assert_int_equal(ids[0], 4);

	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 1, collect_event, ev,
	    &cause), 1);
	assert_int_equal(ev[0].from_state, -1);
	assert_int_equal(ev[0].to_state, JOB_QUEUED);
	assert_string_equal(ev[0].message, "submitted");
	events_free(ev);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 2, collect_event, ev,
	    &cause), 1);
	assert_int_equal(ev[0].to_state, JOB_HELD);
	assert_string_equal(ev[0].message, "submitted, held");
	events_free(ev);
	/*
	 * Only the held job's "submitted" is a row: a queued job's is
	 * implied by its own row, one B-tree less written per submit.
	 */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 1);

	/* The implied event is seq 1 at the job's creation; then 2, 3. */
	assert_int_equal(store_job_transition(fx->st, 1, JOB_MASK_LIVE,
	    JOB_CANCELLED, "cancelled", NULL, &cause), 0);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 1, collect_event, ev,
	    &cause), 2);
	assert_int_equal(ev[0].seq, 1);
	assert_int_equal(ev[0].time, sql_int(fx->st, "SELECT created FROM "
	    "jobs WHERE id = 1"));
	assert_int_equal(ev[0].to_state, JOB_QUEUED);
	assert_int_equal(ev[1].seq, 2);
	assert_int_equal(ev[1].from_state, JOB_QUEUED);
	assert_int_equal(ev[1].to_state, JOB_CANCELLED);
	events_free(ev);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 99, collect_event, ev,
	    &cause), 0);
}

static void
test_store_insert_invalid_writes_nothing(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 jobs[2];
	int64_t			 ids[2] = { -5, -5 };
	char			*cause = NULL;

	memset(jobs, 0, sizeof jobs);
	assert_int_equal(store_jobs_insert(fx->st, jobs, 0, ids, &cause), 0);
	jobs[0].spec = "{}";
	jobs[1].spec = NULL;
	assert_int_equal(store_jobs_insert(fx->st, jobs, 2, ids, &cause),
	    -EINVAL);
	assert_non_null(cause);
	free(cause);
	cause = NULL;
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs"), 0);

	/* A failure inside the transaction rolls the whole batch back. */
	assert_int_equal(sqlite3_exec(fx->st->db, "CREATE TRIGGER no_b "
	    "BEFORE INSERT ON jobs WHEN new.name = 'b' BEGIN "
	    "SELECT RAISE(ABORT, 'no b'); END", NULL, NULL, NULL), SQLITE_OK);
	jobs[0].name = "a";
	jobs[1].name = "b";
	jobs[1].spec = "{}";
	assert_int_equal(store_jobs_insert(fx->st, jobs, 2, ids, &cause),
	    -EIO);
	assert_non_null(strstr(cause, "no b"));
	free(cause);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs"), 0);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 0);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

static void
test_store_get(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 n;
	struct store_job	*j = NULL;
	int64_t			 id;
	char			*cause = NULL;

	memset(&n, 0, sizeof n);
	n.name = "resnet";
	n.priority = 3;
	n.owner = 4242;
	n.spec = "{\"image\":\"gcr.io/x\"}";
	n.labels = "{\"a\":\"b\"}";
	assert_int_equal(store_jobs_insert(fx->st, &n, 1, &id, &cause), 0);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->id, id);
	assert_string_equal(j->name, "resnet");
	assert_int_equal(j->state, JOB_QUEUED);
	assert_int_equal(j->priority, 3);
	assert_int_equal(j->owner, 4242);
	assert_string_equal(j->spec, "{\"image\":\"gcr.io/x\"}");
	assert_string_equal(j->labels, "{\"a\":\"b\"}");
	assert_true(j->created > 0);
	assert_int_equal(j->created, j->updated);
	assert_int_equal(j->attempts, 0);
	assert_int_equal(j->exit_code, -1);
	assert_null(j->checkpoint);
	assert_null(j->why);
	assert_null(j->message);
	store_job_free(j);
	j = NULL;
	assert_int_equal(store_job_get(fx->st, id + 1, &j, &cause), -ENOENT);
	assert_null(j);
	store_job_free(NULL);
}

/* The accelerator columns: given, read from the spec, or absent. */
static void
test_store_insert_gpu(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 n[4];
	struct store_job	*j, *c;
	int64_t			 ids[4];
	char			*cause = NULL;

	memset(n, 0, sizeof n);
	n[0].spec = "{\"accelerator\":{\"type\":\"nvidia-l4\",\"count\":8}}";
	n[0].gpu_type = "nvidia-tesla-t4";	/* given wins */
	n[0].gpu_count = 2;
	n[1].spec = "{\"accelerator\":{\"type\":\"nvidia-l4\",\"count\":8}}";
	n[2].spec = "{\"image\":\"x\"}";
	n[3].spec = "not json";
	assert_int_equal(store_jobs_insert(fx->st, n, 4, ids, &cause), 0);

	assert_int_equal(store_job_get(fx->st, ids[0], &j, &cause), 0);
	assert_string_equal(j->gpu_type, "nvidia-tesla-t4");
	assert_int_equal(j->gpu_count, 2);
	c = store_job_copy(j);
	assert_string_equal(c->gpu_type, "nvidia-tesla-t4");
	assert_int_equal(c->gpu_count, 2);
	store_job_free(c);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, ids[1], &j, &cause), 0);
	assert_string_equal(j->gpu_type, "nvidia-l4");
	assert_int_equal(j->gpu_count, 8);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, ids[2], &j, &cause), 0);
	assert_null(j->gpu_type);
	assert_int_equal(j->gpu_count, 0);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, ids[3], &j, &cause), 0);
	assert_null(j->gpu_type);
	assert_int_equal(j->gpu_count, 0);
	store_job_free(j);
}

static void
test_store_list_paging(void **state)
{
	struct fixture	*fx = *state;
	struct collect	 c;
	int64_t		 ids[250], after = 0;
	char		*cause = NULL;
	int		 more, pages = 0, total = 0, n, i;

	insert_n(fx->st, 250, "p", 1000, 0, 0, ids);
	do {
		memset(&c, 0, sizeof c);
		more = -1;
		n = store_job_list(fx->st, NULL, after, 100, collect_job, &c,
		    &more, &cause);
		assert_int_equal(n, pages < 2 ? 100 : 50);
		assert_int_equal(more, pages < 2 ? 1 : 0);
		for (i = 0; i < n; i++)
			assert_int_equal(c.ids[i], ids[total + i]);
		total += n;
		after = c.ids[n - 1];
		pages++;
	} while (more);
	assert_int_equal(pages, 3);
	assert_int_equal(total, 250);

	/* Exactly one full page: no "more". */
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, NULL, ids[149], 100,
	    collect_job, &c, &more, &cause), 100);
	assert_int_equal(more, 0);
	assert_int_equal(store_job_list(fx->st, NULL, ids[249], 100,
	    collect_job, &c, &more, &cause), 0);
	assert_int_equal(more, 0);
	assert_int_equal(store_job_list(fx->st, NULL, 0, 0, collect_job, &c,
	    &more, &cause), -EINVAL);
	free(cause);
}

static void
test_store_list_filters(void **state)
{
	struct fixture		*fx = *state;
	struct store_filter	 f;
	struct collect		 c;
	int64_t			 a[10], b[10], h[2];
	char			*cause = NULL;
	int			 more, i;

	insert_n(fx->st, 10, "alpha", 1000, 0, 0, a);
	insert_n(fx->st, 10, "beta", 2000, 0, 0, b);
	insert_n(fx->st, 2, "alpha", 2000, 0, 1, h);
	/* Finish alpha 0..4, fail beta 0..1, run beta 9. */
	for (i = 0; i < 5; i++)
		assert_int_equal(store_job_transition(fx->st, a[i],
		    JOB_MASK(JOB_QUEUED), JOB_SUCCEEDED, NULL, NULL,
		    &cause), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(store_job_transition(fx->st, b[i],
		    JOB_MASK(JOB_QUEUED), JOB_FAILED, NULL, NULL, &cause), 0);
	assert_int_equal(store_job_transition(fx->st, b[9],
	    JOB_MASK(JOB_QUEUED), JOB_RUNNING, NULL, NULL, &cause), 0);

	memset(&f, 0, sizeof f);
	f.states = JOB_MASK_LIVE;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 15);
	assert_int_equal(c.ids[0], a[5]);
	assert_int_equal(c.ids[14], h[1]);

	f.states = JOB_MASK(JOB_RUNNING) | JOB_MASK(JOB_HELD);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 3);
	assert_int_equal(c.ids[0], b[9]);

	f.states = JOB_MASK(JOB_SUCCEEDED);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, a[1], 2, collect_job, &c,
	    &more, &cause), 2);
	assert_int_equal(c.ids[0], a[2]);
	assert_int_equal(more, 1);

	f.states = JOB_MASK(JOB_SUCCEEDED) | JOB_MASK(JOB_FAILED) |
	    JOB_MASK(JOB_HELD);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 9);

	f.states = 0;
	f.owner_set = 1;
	f.owner = 2000;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 12);

	/*
	 * jobs_owner and jobs_name hold ended jobs only (schema 12): a
	 * listing by owner or name merges them with the live jobs, in id
	 * order, page by page.
	 */
	for (i = 0; i < 10; i++)
		assert_int_equal(c.ids[i], b[i]);
	assert_int_equal(c.ids[11], h[1]);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, b[0], 3, collect_job, &c,
	    &more, &cause), 3);
	assert_int_equal(c.ids[0], b[1]);
	assert_int_equal(c.ids[2], b[3]);
	assert_int_equal(more, 1);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, b[9], 5, collect_job, &c,
	    &more, &cause), 2);
	assert_int_equal(c.ids[0], h[0]);
	assert_int_equal(more, 0);
	f.owner_set = 0;
	f.name = "alpha";
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 12);
	assert_int_equal(c.ids[4], a[4]);
	assert_int_equal(c.ids[5], a[5]);
	assert_int_equal(c.ids[11], h[1]);
	f.states = JOB_MASK(JOB_SUCCEEDED) | JOB_MASK(JOB_HELD);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 7);
	assert_int_equal(c.ids[4], a[4]);
	assert_int_equal(c.ids[5], h[0]);
	f.owner_set = 1;
	f.owner = 1000;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 5);
	f.name = NULL;
	f.owner = 2000;

	f.states = JOB_MASK_LIVE;
	f.name = "alpha";
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 2);
	assert_int_equal(c.ids[0], h[0]);

	f.owner_set = 0;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 7);

	f.name = "gamma";
	assert_int_equal(store_job_list(fx->st, &f, 0, 100, collect_job, &c,
	    &more, &cause), 0);
}

static void
test_store_list_callback_stops(void **state)
{
	struct fixture	*fx = *state;
	struct collect	 c;
	int64_t		 ids[20];
	char		*cause = NULL;
	int		 more = -1;

	insert_n(fx->st, 20, "s", 1000, 0, 0, ids);
	memset(&c, 0, sizeof c);
	c.stop_at = 4;
	assert_int_equal(store_job_list(fx->st, NULL, 0, 10, collect_job, &c,
	    &more, &cause), 7);
	assert_int_equal(c.n, 4);
	/* The statement was reset: the next walk starts afresh. */
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, NULL, 0, 10, collect_job, &c,
	    &more, &cause), 10);
	assert_int_equal(c.ids[0], ids[0]);
}

static void
test_store_runnable_order(void **state)
{
	struct fixture	*fx = *state;
	struct collect	 c;
	int64_t		 lo1, hi1, mid, hi2, lo2, later, held;
	char		*cause = NULL;

	lo1 = insert_one(fx->st, "lo1", 0);
	hi1 = insert_one(fx->st, "hi1", 10);
	mid = insert_one(fx->st, "mid", 5);
	hi2 = insert_one(fx->st, "hi2", 10);
	lo2 = insert_one(fx->st, "lo2", 0);
	later = insert_one(fx->st, "later", 99);
	insert_n(fx->st, 1, "held", 1000, 100, 1, &held);
	assert_int_equal(store_job_set_not_before(fx->st, later, 2000000000,
	    &cause), 0);

	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_runnable(fx->st, 1900000000,
	    collect_job, &c, &cause), 5);
	assert_int_equal(c.ids[0], hi1);
	assert_int_equal(c.ids[1], hi2);
	assert_int_equal(c.ids[2], mid);
	assert_int_equal(c.ids[3], lo1);
	assert_int_equal(c.ids[4], lo2);

	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_runnable(fx->st, 2000000000,
	    collect_job, &c, &cause), 6);
	assert_int_equal(c.ids[0], later);
}

/*
 * The scheduler's reads by priority then id, with more priorities than
 * store-queue.c walks one by one (rows then come by id), and the whole
 * queue's read from the index: whys, backoff and all, the same as SQL
 * ordering the table says.
 */
static void
test_store_queue_order(void **state)
{
	struct fixture	*fx = *state;
	char		*want, *got = xstrdup(""), *cause = NULL;
	int64_t		 id, held;
	int		 i;

	for (i = 0; i < 40; i++) {
		id = insert_one(fx->st, "q", (i * 7) % 13 - 6);
		if (i % 4 == 0)
			assert_int_equal(store_job_set_why(fx->st, id,
			    i % 8 == 0 ? "" : "no T4 left", &cause), 0);
		if (i % 5 == 0)
			assert_int_equal(store_job_set_not_before(fx->st, id,
			    2000000000, &cause), 0);
	}
	insert_n(fx->st, 1, "held", 1000, 100, 1, &held);

	want = db_text(fx->st->db, "SELECT group_concat(id) FROM (SELECT id"
	    " FROM jobs WHERE state = 1 AND not_before <= 1900000000"
	    " ORDER BY priority DESC, id)");
	assert_int_equal(store_job_list_runnable(fx->st, 1900000000,
	    list_add_job, &got, &cause), 32);
	assert_string_equal(got, want);
	free(want);
	free(got);

	want = db_text(fx->st->db, "SELECT group_concat(" QUEUED_SQL ")"
	    " FROM (SELECT * FROM jobs WHERE state = 1"
	    " ORDER BY priority DESC, id)");
	got = xstrdup("");
	assert_int_equal(store_job_list_queue(fx->st, list_add_queued, &got,
	    &cause), 40);
	assert_string_equal(got, want);
	free(want);
	free(got);

	/* Past the bucket sort's 64 priorities: qsort, the same order. */
	for (i = 0; i < 70; i++)
		(void)insert_one(fx->st, "many", 100 + (i * 37) % 70);
	want = db_text(fx->st->db, "SELECT group_concat(" QUEUED_SQL ")"
	    " FROM (SELECT * FROM jobs WHERE state = 1"
	    " ORDER BY priority DESC, id)");
	got = xstrdup("");
	assert_int_equal(store_job_list_queue(fx->st, list_add_queued, &got,
	    &cause), 110);
	assert_string_equal(got, want);
	free(want);
	free(got);
	assert_null(cause);
}

/* Moves a watcher heard (test_store_sched_set). */
static int	moves_heard;

static void
hear_move(const struct store_move *m, void *arg)
{
	(void)m;
	(void)arg;
	moves_heard++;
}

/*
 * What the scheduler's runnable set reads (doc/DESIGN.md "The pass"):
 * the queued jobs in backoff, every job above an id whatever its state,
 * whether another connection wrote the file, and a watcher that stops.
 */
static void
test_store_sched_set(void **state)
{
	struct fixture	*fx = *state;
	struct collect	 c;
	struct store	*other = NULL;
	int64_t		 a, b, later, held, stamp = 0;
	char		*cause = NULL;

	a = insert_one(fx->st, "a", 0);
	later = insert_one(fx->st, "later", 5);
	insert_n(fx->st, 1, "held", 1000, 0, 1, &held);
	b = insert_one(fx->st, "b", 9);
	assert_int_equal(store_job_set_not_before(fx->st, later, 2000000000,
	    &cause), 0);

	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_later(fx->st, 1900000000, collect_job,
	    &c, &cause), 1);
	assert_int_equal(c.ids[0], later);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_later(fx->st, 2000000000, collect_job,
	    &c, &cause), 0);

	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_after(fx->st, a, collect_job, &c,
	    &cause), 3);
	assert_int_equal(c.ids[0], later);
	assert_int_equal(c.ids[1], held);	/* any state */
	assert_int_equal(c.ids[2], b);

	/* Our own writes are not foreign; another connection's are. */
	(void)store_foreign_write(fx->st, &stamp);
	assert_int_equal(store_foreign_write(fx->st, &stamp), 0);
	(void)insert_one(fx->st, "own", 0);
	assert_int_equal(store_foreign_write(fx->st, &stamp), 0);
	assert_int_equal(store_open(fx->path, &other, &cause), 0);
	(void)insert_one(other, "theirs", 0);
	store_close(other);
	assert_int_equal(store_foreign_write(fx->st, &stamp), 1);
	assert_int_equal(store_foreign_write(fx->st, &stamp), 0);

	/* A watcher that goes hears nothing more. */
	moves_heard = 0;
	assert_int_equal(store_watch(fx->st, hear_move, NULL), 0);
	assert_int_equal(store_job_transition(fx->st, a, JOB_MASK(JOB_QUEUED),
	    JOB_HELD, "held", NULL, &cause), 0);
	assert_int_equal(moves_heard, 1);
	store_unwatch(fx->st, hear_move, NULL);
	assert_int_equal(store_job_transition(fx->st, a, JOB_MASK(JOB_HELD),
	    JOB_QUEUED, "released", NULL, &cause), 0);
	assert_int_equal(moves_heard, 1);
}

/* The scheduler's shape: write from inside a runnable walk. */
static int
launch_each(const struct store_job *j, void *arg)
{
	struct store		*st = arg;
	struct store_attempt	 a;
	char			*cause = NULL;

	memset(&a, 0, sizeof a);
	a.job_id = j->id;
	a.provider = "gce";
	a.region = "us-central1";
	a.resource = "r";
	assert_int_equal(store_attempt_insert(st, &a, &cause), 0);
	assert_int_equal(store_job_transition(st, j->id, JOB_MASK(JOB_QUEUED),
	    JOB_LAUNCHING, "launching", NULL, &cause), 0);
	return 0;
}

static void
test_store_runnable_write_during_walk(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 ids[5];
	char		*cause = NULL;

	insert_n(fx->st, 5, "w", 1000, 0, 0, ids);
	assert_int_equal(store_job_list_runnable(fx->st, time(NULL) + 1,
	    launch_each, fx->st, &cause), 5);
	assert_null(cause);
	assert_int_equal(sql_int(fx->st,
	    "SELECT count(*) FROM jobs WHERE state = %d", JOB_LAUNCHING), 5);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM attempts"), 5);
}

static void
test_store_transition_ok(void **state)
{
	struct fixture		*fx = *state;
	struct store_event	 ev[16];
	struct store_job	*j;
	int64_t			 id;
	char			*cause = NULL;
	int			 cur = -9;

	id = insert_one(fx->st, "t", 0);
	assert_int_equal(store_job_transition(fx->st, id,
	    JOB_MASK(JOB_QUEUED) | JOB_MASK(JOB_HELD), JOB_LAUNCHING,
	    "picked gce us-central1-a", &cur, &cause), 0);
	assert_int_equal(cur, JOB_LAUNCHING);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->state, JOB_LAUNCHING);
	store_job_free(j);

	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, id, collect_event, ev,
	    &cause), 2);
	assert_int_equal(ev[1].from_state, JOB_QUEUED);
	assert_int_equal(ev[1].to_state, JOB_LAUNCHING);
	assert_string_equal(ev[1].message, "picked gce us-central1-a");
	events_free(ev);
}

static void
test_store_transition_ealready(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 id;
	char		*cause = NULL;
	int		 cur = -9;

	id = insert_one(fx->st, "t", 0);
	assert_int_equal(store_job_transition(fx->st, id, JOB_MASK(JOB_RUNNING),
	    JOB_SUCCEEDED, NULL, &cur, &cause), -EALREADY);
	assert_int_equal(cur, JOB_QUEUED);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "queued"));
	free(cause);
	assert_int_equal(store_job_transition(fx->st, id, JOB_MASK_LIVE,
	    JOB_CANCELLED, NULL, NULL, NULL), 0);
	assert_int_equal(store_job_transition(fx->st, id, JOB_MASK_LIVE,
	    JOB_CANCELLED, NULL, &cur, NULL), -EALREADY);
	assert_int_equal(cur, JOB_CANCELLED);
	assert_int_equal(store_event_list(fx->st, id, count_event, NULL,
	    NULL), 2);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

static void
test_store_transition_enoent(void **state)
{
	struct fixture	*fx = *state;
	char		*cause = NULL;
	int		 cur = -9;

	assert_int_equal(store_job_transition(fx->st, 77, JOB_MASK_ALL,
	    JOB_QUEUED, NULL, &cur, &cause), -ENOENT);
	assert_int_equal(cur, -9);
	assert_non_null(cause);
	free(cause);
	assert_int_equal(store_job_transition(fx->st, 77, JOB_MASK_ALL,
	    JOB_NSTATES, NULL, &cur, NULL), -EINVAL);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 0);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

static void
test_store_setters(void **state)
{
	struct fixture		*fx = *state;
	struct store_job	*j;
	int64_t			 id;
	char			*cause = NULL;

	id = insert_one(fx->st, "s", 0);
	assert_int_equal(store_job_set_why(fx->st, id,
	    "no quota for nvidia-tesla-a100", &cause), 0);
	assert_int_equal(store_job_set_not_before(fx->st, id, 1234, &cause),
	    0);
	assert_int_equal(store_job_set_checkpoint(fx->st, id,
	    "gs://b/gpuq/1/checkpoints/step-100", 999, &cause), 0);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_string_equal(j->why, "no quota for nvidia-tesla-a100");
	assert_int_equal(j->not_before, 1234);
	assert_string_equal(j->checkpoint,
	    "gs://b/gpuq/1/checkpoints/step-100");
	assert_int_equal(j->checkpoint_at, 999);
	store_job_free(j);
	assert_int_equal(store_job_set_why(fx->st, id, NULL, &cause), 0);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_null(j->why);
	store_job_free(j);

	assert_int_equal(store_job_set_why(fx->st, id + 1, "x", NULL),
	    -ENOENT);
	assert_int_equal(store_job_set_not_before(fx->st, id + 1, 1, NULL),
	    -ENOENT);
	assert_int_equal(store_job_set_checkpoint(fx->st, id + 1, "x", 1,
	    NULL), -ENOENT);
	/* No event for these: they change often. */
	assert_int_equal(store_event_list(fx->st, id, count_event, NULL,
	    NULL), 1);
}

static void
test_store_counts(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 counts[JOB_NSTATES], ids[6], h;
	sqlite3		*db;
	char		*cause = NULL;

	insert_n(fx->st, 6, "c", 1000, 0, 0, ids);
	insert_n(fx->st, 1, "c", 1000, 0, 1, &h);
	assert_int_equal(store_job_transition(fx->st, ids[0], JOB_MASK_ALL,
	    JOB_RUNNING, NULL, NULL, &cause), 0);
	assert_int_equal(store_job_transition(fx->st, ids[1], JOB_MASK_ALL,
	    JOB_FAILED, NULL, NULL, &cause), 0);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_QUEUED], 4);
	assert_int_equal(counts[JOB_HELD], 1);
	assert_int_equal(counts[JOB_RUNNING], 1);
	assert_int_equal(counts[JOB_FAILED], 1);
	assert_int_equal(counts[JOB_SUCCEEDED], 0);

	/* Kept by our writes, without a recount... */
	assert_int_equal(store_job_transition(fx->st, ids[0], JOB_MASK_ALL,
	    JOB_SUCCEEDED, NULL, NULL, &cause), 0);
	insert_n(fx->st, 2, "c", 1000, 0, 1, ids);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_RUNNING], 0);
	assert_int_equal(counts[JOB_SUCCEEDED], 1);
	assert_int_equal(counts[JOB_HELD], 3);
	assert_int_equal(counts[JOB_QUEUED], 4);

	/* ...and recounted when another connection wrote the file. */
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE jobs SET state = 6 "
	    "WHERE state = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_QUEUED], 0);
	assert_int_equal(counts[JOB_FAILED], 5);
}

static void
test_store_event_add(void **state)
{
	struct fixture		*fx = *state;
	struct store_event	 ev[16];
	int64_t			 id;
	char			*cause = NULL;

	id = insert_one(fx->st, "e", 0);
	assert_int_equal(store_event_add(fx->st, id, "checkpoint found",
	    &cause), 0);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, id, collect_event, ev,
	    &cause), 2);
	assert_int_equal(ev[1].from_state, JOB_QUEUED);
	assert_int_equal(ev[1].to_state, JOB_QUEUED);
	assert_string_equal(ev[1].message, "checkpoint found");
	assert_int_equal(ev[0].seq, 1);
	assert_int_equal(ev[1].seq, 2);
	events_free(ev);
	assert_int_equal(store_event_add(fx->st, id + 1, "x", &cause),
	    -ENOENT);
	free(cause);
	assert_int_equal(store_event_list(fx->st, id + 1, collect_event, ev,
	    NULL), 0);
}

static void
fill_attempt(struct store_attempt *a, int64_t job_id, int spot)
{
	memset(a, 0, sizeof *a);
	a->job_id = job_id;
	a->provider = "gce";
	a->region = "us-central1";
	a->zone = "us-central1-a";
	a->machine_type = "n1-standard-8";
	a->gpu = "nvidia-tesla-t4";
	a->gpu_count = 1;
	a->resource = "gpuq-x-1-1";
	a->spot = spot;
	a->hourly_usd = 0.5;
	a->created = 1000;
	a->resumed_from = spot ? "gs://b/ckpt" : NULL;
}

static int
copy_attempt(const struct store_attempt *a, void *arg)
{
	struct store_attempt	**out = arg;
	int			  i = 0;

	while (out[i] != NULL)
		i++;
	assert_true(i < 15);
	out[i] = store_attempt_copy(a);
	return 0;
}

static void
attempts_free(struct store_attempt **v)
{
	int	i;

	for (i = 0; v[i] != NULL; i++) {
		store_attempt_free(v[i]);
		v[i] = NULL;
	}
}

static void
test_store_attempt_insert(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a, *got[16];
	struct store_job	*j;
	int64_t			 id;
	char			*cause = NULL;

	id = insert_one(fx->st, "a", 0);
	fill_attempt(&a, id, 1);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	assert_int_equal(a.number, 1);
	assert_int_equal(a.state, ATTEMPT_LAUNCHING);
	assert_true(a.id > 0);
	fill_attempt(&a, id, 0);
	a.created = 0;
	a.capacity = "flex";
	a.reservation = "team-t4";	/* kept for a re-launch */
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	assert_int_equal(a.number, 2);
	assert_true(a.created > 1000);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->attempts, 2);
	store_job_free(j);

	memset(got, 0, sizeof got);
	assert_int_equal(store_attempt_list(fx->st, id, copy_attempt, got,
	    &cause), 2);
	assert_int_equal(got[0]->number, 1);
	assert_string_equal(got[0]->provider, "gce");
	assert_string_equal(got[0]->zone, "us-central1-a");
	assert_string_equal(got[0]->gpu, "nvidia-tesla-t4");
	assert_string_equal(got[0]->resumed_from, "gs://b/ckpt");
	assert_int_equal(got[0]->spot, 1);
	assert_int_equal(got[0]->ended, 0);
	assert_int_equal(got[0]->exit_code, -1);
	assert_int_equal(got[0]->end_reason, END_NONE);
	assert_null(got[1]->resumed_from);
	assert_null(got[1]->cloud_id);
	/* The kind of capacity (schema step "capacity kinds"): none
	 * given reads NULL (spot says Spot or standard). */
	assert_null(got[0]->capacity);
	assert_string_equal(got[1]->capacity, "flex");
	assert_int_equal(got[1]->spot, 0);
	assert_null(got[0]->reservation);
	assert_string_equal(got[1]->reservation, "team-t4");
	attempts_free(got);

	fill_attempt(&a, id + 1, 0);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), -ENOENT);
	free(cause);
	cause = NULL;
	fill_attempt(&a, id, 0);
	a.provider = NULL;
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), -EINVAL);
	free(cause);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM attempts"), 2);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

/*
 * A launch writes its attempt, the counter, the move to launching and
 * its event in one transaction, or nothing at all.
 */
static void
test_store_attempt_launch(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a;
	struct store_event	 ev[16];
	struct store_job	*j;
	int64_t			 id, counts[JOB_NSTATES];
	char			*cause = NULL;

	id = insert_one(fx->st, "l", 0);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_QUEUED], 1);

	/* Not the job's next number: nothing written. */
	fill_attempt(&a, id, 1);
	assert_int_equal(store_attempt_launch(fx->st, &a, 2, "launching",
	    &cause), -ESTALE);
	assert_non_null(strstr(cause, "next attempt is 1, not 2"));
	free(cause);
	cause = NULL;
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM attempts"), 0);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_int_equal(j->attempts, 0);
	store_job_free(j);

	fill_attempt(&a, id, 1);
	assert_int_equal(store_attempt_launch(fx->st, &a, 1,
	    "launching on gce/us-central1-a", &cause), 0);
	assert_true(a.id > 0);
	assert_int_equal(a.number, 1);
	assert_int_equal(a.state, ATTEMPT_LAUNCHING);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->state, JOB_LAUNCHING);
	assert_int_equal(j->attempts, 1);
	store_job_free(j);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, id, collect_event, ev,
	    &cause), 2);
	assert_int_equal(ev[1].from_state, JOB_QUEUED);
	assert_int_equal(ev[1].to_state, JOB_LAUNCHING);
	assert_string_equal(ev[1].message, "launching on gce/us-central1-a");
	events_free(ev);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_QUEUED], 0);
	assert_int_equal(counts[JOB_LAUNCHING], 1);

	/* No longer queued: nothing written. */
	fill_attempt(&a, id, 1);
	assert_int_equal(store_attempt_launch(fx->st, &a, 2, "again",
	    &cause), -EALREADY);
	free(cause);
	cause = NULL;
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM attempts"), 1);
	assert_int_equal(store_attempt_launch(fx->st, &a, 1, "x", &cause),
	    -EALREADY);
	free(cause);
	cause = NULL;
	fill_attempt(&a, id + 1, 1);
	assert_int_equal(store_attempt_launch(fx->st, &a, 1, "x", &cause),
	    -ENOENT);
	free(cause);
	assert_int_equal(store_event_list(fx->st, id, count_event, NULL,
	    NULL), 2);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

static void
test_store_attempt_set_state(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a, *got[16];
	int64_t			 id;
	char			*cause = NULL;

	id = insert_one(fx->st, "a", 0);
	fill_attempt(&a, id, 1);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	assert_int_equal(store_attempt_set_state(fx->st, a.id, ATTEMPT_PENDING,
	    1100, "projects/p/zones/z/instances/gpuq-x-1-1", &cause), 0);
	assert_int_equal(store_attempt_set_state(fx->st, a.id, ATTEMPT_RUNNING,
	    1200, NULL, &cause), 0);
	assert_int_equal(store_attempt_set_state(fx->st, a.id, ATTEMPT_RUNNING,
	    1300, NULL, &cause), 0);
	memset(got, 0, sizeof got);
	assert_int_equal(store_attempt_list(fx->st, id, copy_attempt, got,
	    &cause), 1);
	assert_int_equal(got[0]->state, ATTEMPT_RUNNING);
	assert_int_equal(got[0]->started, 1200);
	assert_string_equal(got[0]->cloud_id,
	    "projects/p/zones/z/instances/gpuq-x-1-1");
	attempts_free(got);

	assert_int_equal(store_attempt_set_state(fx->st, a.id, ATTEMPT_ENDED,
	    1300, NULL, NULL), -EINVAL);
	assert_int_equal(store_attempt_set_state(fx->st, a.id + 1,
	    ATTEMPT_RUNNING, 1300, NULL, &cause), -ENOENT);
	free(cause);
	cause = NULL;
	assert_int_equal(store_attempt_end(fx->st, a.id, 1400, END_SUCCEEDED,
	    0, NULL, 0.1, &cause), 0);
	assert_int_equal(store_attempt_set_state(fx->st, a.id, ATTEMPT_RUNNING,
	    1500, NULL, &cause), -EALREADY);
	free(cause);
}

static void
test_store_attempt_end_counters(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a;
	struct store_job	*j;
	struct store_event	 ev[16];
	int64_t			 id, ids[4];
	char			*cause = NULL;
	int			 i;
	static const int	 reasons[4] = { END_PREEMPTED, END_FAILED,
	    END_STOCKOUT, END_SUCCEEDED };
	static const double	 costs[4] = { 1.25, 0.5, 0.0, 2.0 };

	id = insert_one(fx->st, "a", 0);
	for (i = 0; i < 4; i++) {
		fill_attempt(&a, id, 1);
		assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
		ids[i] = a.id;
		assert_int_equal(store_attempt_end(fx->st, a.id, 2000 + i,
		    reasons[i], reasons[i] == END_FAILED ? 3 :
		    reasons[i] == END_SUCCEEDED ? 0 : -1,
		    reasons[i] == END_FAILED ? "exit 3" : NULL, costs[i],
		    &cause), 0);
	}
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->attempts, 4);
	assert_int_equal(j->failures, 1);
	/* The stockout ended an attempt that never started: not counted
	 * (attempt_end_counts()). */
	assert_int_equal(j->interruptions, 1);
	assert_float_equal(j->cost_usd, 3.75, 1e-9);
	assert_int_equal(j->exit_code, 0);
	assert_null(j->message);
	assert_int_equal(j->updated, 2003);
	store_job_free(j);

	assert_int_equal(store_attempt_end(fx->st, ids[0], 3000, END_LOST,
	    -1, NULL, 9.0, &cause), -EALREADY);
	free(cause);
	cause = NULL;
	assert_int_equal(store_attempt_end(fx->st, ids[3] + 1, 3000, END_LOST,
	    -1, NULL, 9.0, &cause), -ENOENT);
	free(cause);
	assert_int_equal(store_attempt_end(fx->st, ids[0], 3000, END_NONE,
	    -1, NULL, 9.0, NULL), -EINVAL);
	assert_int_equal(store_job_get(fx->st, id, &j, NULL), 0);
	assert_float_equal(j->cost_usd, 3.75, 1e-9);
	store_job_free(j);

	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, id, collect_event, ev,
	    NULL), 5);
	assert_non_null(strstr(ev[1].message, "preempted"));
	assert_non_null(strstr(ev[2].message, "failed: exit 3"));
	events_free(ev);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

/*
 * Events number attempts within their job: job B's first attempt is
 * "attempt 1" though its row id is 2.
 */
static void
test_store_attempt_end_numbered(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a;
	struct store_event	 ev[16];
	int64_t			 ida, idb;
	int			 n;

	ida = insert_one(fx->st, "a", 0);
	idb = insert_one(fx->st, "b", 0);
	fill_attempt(&a, ida, 0);
	assert_int_equal(store_attempt_insert(fx->st, &a, NULL), 0);
	fill_attempt(&a, idb, 0);
	a.resource = "gpuq-x-2-1";
	assert_int_equal(store_attempt_insert(fx->st, &a, NULL), 0);
	assert_int_equal(a.id, 2);
	assert_int_equal(a.number, 1);
	assert_int_equal(store_attempt_end(fx->st, a.id, 2000, END_LOST, -1,
	    NULL, 0, NULL), 0);
	memset(ev, 0, sizeof ev);
	n = store_event_list(fx->st, idb, collect_event, ev, NULL);
	assert_int_equal(n, 2);
	assert_string_equal(ev[1].message, "attempt 1 ended: lost");
	events_free(ev);
}

/* A job in launching with its attempt 1 (row id returned) live. */
static int64_t
launching_one(struct store *st, const char *name, int64_t *ret_attempt)
{
	struct store_attempt	a;
	int64_t			id;

	id = insert_one(st, name, 0);
	fill_attempt(&a, id, 0);
	assert_int_equal(store_attempt_launch(st, &a, 1, "launching", NULL),
	    0);
	*ret_attempt = a.id;
	return id;
}

/* Collects what store_acct_list gives. */
struct acct_seen {
	int64_t		 ids[16];
	int		 attempts[16];
	double		 cost, baseline;
	int64_t		 billed;
	int		 n;
};

static int
acct_collect(const struct store_acct_row *r, void *arg)
{
	struct acct_seen	*c = arg;

	assert_true(c->n < 16);
	c->ids[c->n] = r->job_id;
	c->attempts[c->n++] = r->attempt;
	c->cost += r->cost_usd;
	c->baseline += r->baseline_usd;
	c->billed += r->billed_end - r->billed_start;
	return 0;
}

/*
 * An attempt's end keeps the cloud's billed start and end and its
 * baseline, adds the baseline to the job; the history walk gives ended
 * jobs by end time with their attempts, filtered and paged.
 */
static void
test_store_acct(void **state)
{
	struct fixture		*fx = *state;
	struct store_acct_filter f;
	struct store_attempt	 a, *att[16] = { NULL };
	struct store_end	 e;
	struct store_job	*j;
	struct acct_seen	 seen;
	int64_t			 id1, id2, id3;

	id1 = insert_one(fx->st, "one", 0);
	fill_attempt(&a, id1, 1);
	a.baseline_hourly_usd = 3.6;
	assert_int_equal(store_attempt_insert(fx->st, &a, NULL), 0);
	assert_int_equal(store_attempt_set_billed(fx->st, a.id, 50000, NULL),
	    0);
	/* Once known, the start stays. */
	assert_int_equal(store_attempt_set_billed(fx->st, a.id, 50001, NULL),
	    0);
	memset(&e, 0, sizeof e);
	e.attempt_id = a.id;
	e.when = 2000;
	e.reason = END_PREEMPTED;
	e.exit_code = -1;
	e.cost_usd = 0.5;
	e.billed_end = 53600;
	e.baseline_usd = 3.6;
	assert_int_equal(store_attempt_end_with(fx->st, &e, NULL), 0);
	assert_int_equal(store_attempt_list(fx->st, id1, copy_attempt, att,
	    NULL), 1);
	assert_int_equal(att[0]->billed_start, 50000);
	assert_int_equal(att[0]->billed_end, 53600);
	assert_float_equal(att[0]->baseline_hourly_usd, 3.6, 1e-9);
	assert_float_equal(att[0]->baseline_usd, 3.6, 1e-9);
	store_attempt_free(att[0]);
	assert_int_equal(store_job_transition(fx->st, id1, JOB_MASK_ALL,
	    JOB_FAILED, "failed", NULL, NULL), 0);
	assert_int_equal(store_job_get(fx->st, id1, &j, NULL), 0);
	assert_float_equal(j->baseline_usd, 3.6, 1e-9);
	assert_float_equal(j->cost_usd, 0.5, 1e-9);
	store_job_free(j);

	id2 = insert_one(fx->st, "two", 0);	/* ended without attempts */
	assert_int_equal(store_job_transition(fx->st, id2, JOB_MASK_ALL,
	    JOB_CANCELLED, "cancelled", NULL, NULL), 0);
	id3 = insert_one(fx->st, "three", 0);	/* live: never listed */
	(void)id3;

	memset(&f, 0, sizeof f);
	memset(&seen, 0, sizeof seen);
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 0, acct_collect,
	    &seen, NULL), 2);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.ids[0], id1);
	assert_int_equal(seen.attempts[0], 1);
	assert_int_equal(seen.ids[1], id2);
	assert_int_equal(seen.attempts[1], 0);
	assert_float_equal(seen.cost, 0.5, 1e-9);
	assert_float_equal(seen.baseline, 3.6, 1e-9);
	assert_int_equal(seen.billed, 3600);

	/* A page of one, then the rest after its key. */
	memset(&seen, 0, sizeof seen);
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 1, acct_collect,
	    &seen, NULL), 1);
	assert_int_equal(seen.n, 1);
	assert_int_equal(store_job_get(fx->st, id1, &j, NULL), 0);
	memset(&seen, 0, sizeof seen);
	assert_int_equal(store_acct_list(fx->st, &f, j->updated, id1, 1,
	    acct_collect, &seen, NULL), 1);
	assert_int_equal(seen.ids[0], id2);
	store_job_free(j);

	/* Filters: state, name, owner, time. */
	f.states = JOB_MASK(JOB_CANCELLED);
	memset(&seen, 0, sizeof seen);
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 0, acct_collect,
	    &seen, NULL), 1);
	assert_int_equal(seen.ids[0], id2);
	f.states = 0;
	f.name = "one";
	memset(&seen, 0, sizeof seen);
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 0, acct_collect,
	    &seen, NULL), 1);
	assert_int_equal(seen.ids[0], id1);
	f.name = NULL;
	f.owner_set = 1;
	f.owner = 4242;
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 0, acct_collect,
	    &seen, NULL), 0);
	f.owner_set = 0;
	f.since = time(NULL) + 3600;
	assert_int_equal(store_acct_list(fx->st, &f, 0, 0, 0, acct_collect,
	    &seen, NULL), 0);
}

/*
 * store_job_requeue: the attempt's end, the job's move to queued, its
 * backoff and why, in one transaction; an attempt already ended is
 * left as it was; a job cancelled meanwhile gets nothing written.
 */
static void
test_store_job_requeue(void **state)
{
	struct fixture		*fx = *state;
	struct store_end	 e;
	struct store_job	*j;
	struct store_event	 ev[16];
	struct store_attempt	*att[16] = { NULL };
	int64_t			 id, aid, counts[JOB_NSTATES];
	char			*cause = NULL;
	int			 js = -1;

	id = launching_one(fx->st, "a", &aid);
	memset(&e, 0, sizeof e);
	e.attempt_id = aid;
	e.when = 2000;
	e.reason = END_PREEMPTED;
	e.exit_code = -1;
	e.message = "Instance was preempted.";
	e.cost_usd = 0.25;
	assert_int_equal(store_job_requeue(fx->st, id, JOB_MASK_CLOUD, &e,
	    5000, "preempted; queued again", "retrying in 9s", &js,
	    &cause), 0);
	assert_int_equal(js, JOB_QUEUED);
	assert_true(sqlite3_get_autocommit(fx->st->db));
	assert_int_equal(store_job_get(fx->st, id, &j, NULL), 0);
	assert_int_equal(j->state, JOB_QUEUED);
	assert_int_equal(j->not_before, 5000);
	assert_string_equal(j->why, "retrying in 9s");
	assert_int_equal(j->interruptions, 1);
	assert_int_equal(j->failures, 0);
	assert_float_equal(j->cost_usd, 0.25, 1e-9);
	store_job_free(j);
	assert_int_equal(store_attempt_list(fx->st, id, copy_attempt, att,
	    NULL), 1);
	assert_int_equal(att[0]->state, ATTEMPT_ENDED);
	assert_int_equal(att[0]->end_reason, END_PREEMPTED);
	store_attempt_free(att[0]);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, id, collect_event, ev,
	    NULL), 4);
	assert_string_equal(ev[2].message, "attempt 1 ended: preempted: "
	    "Instance was preempted.");
	assert_int_equal(ev[3].from_state, JOB_LAUNCHING);
	assert_int_equal(ev[3].to_state, JOB_QUEUED);
	assert_string_equal(ev[3].message, "preempted; queued again");
	events_free(ev);
	assert_int_equal(store_job_counts(fx->st, counts, NULL), 0);
	assert_int_equal(counts[JOB_QUEUED], 1);
	assert_int_equal(counts[JOB_LAUNCHING], 0);

	/* Requeued again with the same end: the attempt is not ended twice,
	 * the counters stay; a job not in FROM_MASK is refused. */
	assert_int_equal(store_job_requeue(fx->st, id, JOB_MASK_CLOUD, &e,
	    0, "again", NULL, &js, &cause), -EALREADY);
	assert_int_equal(js, JOB_QUEUED);
	free(cause);
	cause = NULL;
	assert_int_equal(store_job_transition(fx->st, id, JOB_MASK(JOB_QUEUED),
	    JOB_RUNNING, "test", NULL, NULL), 0);
	assert_int_equal(store_job_requeue(fx->st, id, JOB_MASK_CLOUD, &e,
	    0, "again", NULL, &js, NULL), 0);
	assert_int_equal(store_job_get(fx->st, id, &j, NULL), 0);
	assert_int_equal(j->interruptions, 1);
	assert_float_equal(j->cost_usd, 0.25, 1e-9);
	assert_int_equal(j->not_before, 0);
	assert_null(j->why);
	store_job_free(j);

	/* Without an attempt to end: an unknown job is -ENOENT. */
	assert_int_equal(store_job_requeue(fx->st, 999, JOB_MASK_CLOUD, NULL,
	    0, "x", NULL, NULL, NULL), -ENOENT);
	assert_true(sqlite3_get_autocommit(fx->st->db));
}

/*
 * The race: the user cancelled while the attempt was ending. The
 * requeue writes nothing -- the attempt stays live, the job cancelling
 * -- and says what the job is, so the caller can cancel it instead.
 */
static void
test_store_job_requeue_cancelled_meanwhile(void **state)
{
	struct fixture		*fx = *state;
	struct store_end	 e;
	struct store_job	*j;
	struct store_attempt	*att[16] = { NULL };
	int64_t			 id, aid;
	char			*cause = NULL;
	int			 js = -1;

	id = launching_one(fx->st, "a", &aid);
	assert_int_equal(store_job_transition(fx->st, id,
	    JOB_MASK(JOB_LAUNCHING), JOB_CANCELLING, "cancel requested", NULL,
	    NULL), 0);
	memset(&e, 0, sizeof e);
	e.attempt_id = aid;
	e.when = 2000;
	e.reason = END_LAUNCH_ERROR;
	e.exit_code = -1;
	e.message = "HTTP 503";
	assert_int_equal(store_job_requeue(fx->st, id, JOB_MASK_CLOUD, &e,
	    5000, "launch failed", "retrying", &js, &cause), -EALREADY);
	assert_int_equal(js, JOB_CANCELLING);
	assert_non_null(strstr(cause, "cancelling"));
	free(cause);
	assert_true(sqlite3_get_autocommit(fx->st->db));
	assert_int_equal(store_job_get(fx->st, id, &j, NULL), 0);
	assert_int_equal(j->state, JOB_CANCELLING);
	assert_int_equal(j->not_before, 0);
	assert_null(j->why);
	assert_int_equal(j->exit_code, -1);
	store_job_free(j);
	assert_int_equal(store_attempt_list(fx->st, id, copy_attempt, att,
	    NULL), 1);
	assert_int_equal(att[0]->state, ATTEMPT_LAUNCHING);
	store_attempt_free(att[0]);
}

static void
test_store_attempt_live(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a, *got[16];
	int64_t			 j1, j2, a1, a2, a3;
	char			*cause = NULL;

	j1 = insert_one(fx->st, "a", 0);
	j2 = insert_one(fx->st, "b", 0);
	fill_attempt(&a, j1, 1);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	a1 = a.id;
	fill_attempt(&a, j2, 1);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	a2 = a.id;
	fill_attempt(&a, j1, 0);
	assert_int_equal(store_attempt_insert(fx->st, &a, &cause), 0);
	a3 = a.id;
	assert_int_equal(store_attempt_end(fx->st, a1, 5000, END_PREEMPTED,
	    -1, NULL, 0.0, &cause), 0);

	memset(got, 0, sizeof got);
	assert_int_equal(store_attempt_list_live(fx->st, copy_attempt, got,
	    &cause), 2);
	assert_int_equal(got[0]->id, a2);
	assert_int_equal(got[1]->id, a3);
	assert_int_equal(got[1]->number, 2);
	attempts_free(got);
}

static void
test_store_cooldown_growth(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 until, now = 100000;
	char		*cause = NULL;
	int		 i;
	static const int64_t want[] = { 60, 120, 240, 480, 600, 600, 600 };
	int64_t		 t = now;

	/* Each stockout after the last cool-down ended doubles it. */
	for (i = 0; i < 7; i++) {
		assert_int_equal(store_cooldown_strike(fx->st, "us-central1-a",
		    "nvidia-tesla-t4", 1, t, 60, 600, &until, &cause), 0);
		assert_int_equal(until, t + want[i]);
		t = until;
	}
	/* 100 strikes cannot overflow past the cap. */
	t = now;
	for (i = 0; i < 100; i++) {
		assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 0,
		    t, 1, INT64_MAX / 4, &until, &cause), 0);
		t = until;
	}
	assert_true(until > now);
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 0, now, 0,
	    10, &until, NULL), -EINVAL);
	assert_int_equal(store_cooldown_strike(fx->st, NULL, "g", 0, now, 1,
	    10, &until, NULL), -EINVAL);
}

static void
test_store_cooldown_decay(void **state)
{
	struct fixture	*fx = *state;
	int64_t		 until, t = 100000;
	char		*cause = NULL;

	/* Three strikes, each after the last cool-down: 60, 120, 240. */
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t + 60, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 60 + 120);
	/* A stockout while it runs (a launch sent before it) is no strike. */
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t + 61, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 60 + 120);
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t + 180,
	    60, 3600, &until, &cause), 0);
	assert_int_equal(until, t + 180 + 240);
	/* Two quiet hours forgive two strikes: 3 - 2 + 1 = 2 → 120 s. */
	t += 180 + 2 * 3600 + 10;
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 120);
	/* A long quiet spell starts afresh. */
	t += 100 * 3600;
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, t, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 60);
	/* The on-demand key is separate. */
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 0, t, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 60);
	/* So is flex-start's (the column holds the kind: 2). */
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 2, t, 60,
	    3600, &until, &cause), 0);
	assert_int_equal(until, t + 60);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM cooldowns "
	    "WHERE spot = 2"), 1);
}

struct cd_seen {
	int	n;
	char	zone[4][32];
	int	spot[4];
	int	strikes[4];
};

static int
collect_cooldown(const char *zone, const char *gpu, int spot, int64_t until,
    int strikes, void *arg)
{
	struct cd_seen	*c = arg;

	assert_true(c->n < 4);
	assert_string_equal(gpu, "nvidia-l4");
	snprintf(c->zone[c->n], sizeof c->zone[0], "%s", zone);
	c->spot[c->n] = spot;
	c->strikes[c->n] = strikes;
	c->n++;
	return 0;
}

static void
test_store_cooldown_list(void **state)
{
	struct fixture	*fx = *state;
	struct cd_seen	 c;
	int64_t		 until;
	char		*cause = NULL;

	assert_int_equal(store_cooldown_strike(fx->st, "us-east1-b",
	    "nvidia-l4", 1, 1000, 60, 600, &until, &cause), 0);
	assert_int_equal(store_cooldown_strike(fx->st, "us-east1-b",
	    "nvidia-l4", 1, 1060, 60, 600, &until, &cause), 0);
	assert_int_equal(store_cooldown_strike(fx->st, "us-east1-c",
	    "nvidia-l4", 0, 1000, 300, 600, &until, &cause), 0);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_cooldown_list(fx->st, 1100, collect_cooldown,
	    &c, &cause), 2);
	assert_string_equal(c.zone[0], "us-east1-b");
	assert_int_equal(c.spot[0], 1);
	assert_int_equal(c.strikes[0], 2);
	assert_string_equal(c.zone[1], "us-east1-c");
	memset(&c, 0, sizeof c);
	assert_int_equal(store_cooldown_list(fx->st, 1200, collect_cooldown,
	    &c, &cause), 1);
	assert_string_equal(c.zone[0], "us-east1-c");
	memset(&c, 0, sizeof c);
	assert_int_equal(store_cooldown_list(fx->st, 1300, collect_cooldown,
	    &c, &cause), 0);
}

struct hist {
	int	n;
	char	key[6][96];
	double	hours[6];
	int	intr[6];
};

static int
collect_history(const char *provider, const char *region, const char *zone,
    const char *gpu, double hours, int interruptions, void *arg)
{
	struct hist	*h = arg;

	assert_true(h->n < 6);
	snprintf(h->key[h->n], sizeof h->key[0], "%s/%s/%s/%s", provider,
	    region, gpu, zone);
	h->hours[h->n] = hours;
	h->intr[h->n] = interruptions;
	h->n++;
	return 0;
}

/* One attempt of job JOB: spot or not, started at S (0: never), ended E
 * (0: still running), in zone "REGION-a". */
static void
history_attempt(struct store *st, int64_t job, char *region, int spot,
    int64_t s, int64_t e, int reason)
{
	struct store_attempt	a;
	char			zone[64];

	fill_attempt(&a, job, spot);
	a.region = region;
	(void)snprintf(zone, sizeof zone, "%s-a", region);
	a.zone = zone;
	assert_int_equal(store_attempt_insert(st, &a, NULL), 0);
	if (s != 0)
		assert_int_equal(store_attempt_set_state(st, a.id,
		    ATTEMPT_RUNNING, s, NULL, NULL), 0);
	if (e != 0)
		assert_int_equal(store_attempt_end(st, a.id, e, reason, -1,
		    NULL, 0, NULL), 0);
}

static void
test_store_spot_history(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	 a;
	struct hist		 h;
	int64_t			 j;
	char			*cause = NULL;
	const int64_t		 H = 3600;

	j = insert_one(fx->st, "h", 0);
	/* us-central1: 2 h preempted, 1 h maintenance, 3 h success,
	 * one lost before running (0 h, still an interruption). */
	history_attempt(fx->st, j, "us-central1", 1, 10 * H, 12 * H,
	    END_PREEMPTED);
	history_attempt(fx->st, j, "us-central1", 1, 20 * H, 21 * H,
	    END_MAINTENANCE);
	history_attempt(fx->st, j, "us-central1", 1, 30 * H, 33 * H,
	    END_SUCCEEDED);
	history_attempt(fx->st, j, "us-central1", 1, 0, 34 * H, END_LOST);
	/* Stockouts are not preemptions; on-demand is not Spot. */
	history_attempt(fx->st, j, "us-central1", 1, 0, 35 * H, END_STOCKOUT);
	history_attempt(fx->st, j, "us-central1", 0, 40 * H, 50 * H,
	    END_PREEMPTED);
	/* us-east1: ended before SINCE. */
	history_attempt(fx->st, j, "us-east1", 1, 1 * H, 2 * H, END_PREEMPTED);
	history_attempt(fx->st, j, "us-west1", 1, 8 * H, 9 * H, END_FAILED);
	/* A live Spot attempt that never started does not count. */
	fill_attempt(&a, j, 1);
	assert_int_equal(store_attempt_insert(fx->st, &a, NULL), 0);
	/*
	 * One that runs counts its hours up to now: leaving it out kept
	 * the long runs of a steady zone out of λ until they ended, and
	 * only the short preempted ones in (doc/DESIGN.md "Expected
	 * cost").
	 */
	history_attempt(fx->st, j, "europe-west4", 1, 90 * H, 0, 0);

	memset(&h, 0, sizeof h);
	assert_int_equal(store_spot_history(fx->st, 5 * H, 100 * H,
	    collect_history, &h, &cause), 3);
	assert_string_equal(h.key[0],
	    "gce/europe-west4/nvidia-tesla-t4/europe-west4-a");
	assert_float_equal(h.hours[0], 10.0, 1e-9);
	assert_int_equal(h.intr[0], 0);
	assert_string_equal(h.key[1],
	    "gce/us-central1/nvidia-tesla-t4/us-central1-a");
	assert_float_equal(h.hours[1], 6.0, 1e-9);
	assert_int_equal(h.intr[1], 3);
	assert_string_equal(h.key[2],
	    "gce/us-west1/nvidia-tesla-t4/us-west1-a");
	assert_float_equal(h.hours[2], 1.0, 1e-9);
	assert_int_equal(h.intr[2], 0);

	memset(&h, 0, sizeof h);
	assert_int_equal(store_spot_history(fx->st, 0, 100 * H,
	    collect_history, &h, &cause), 4);
	assert_string_equal(h.key[2],
	    "gce/us-east1/nvidia-tesla-t4/us-east1-a");
	assert_int_equal(h.intr[2], 1);
}

static void
test_store_meta(void **state)
{
	struct fixture	*fx = *state;
	char		*v = NULL, *cause = NULL;

	assert_int_equal(store_meta_get(fx->st, "price_etag", &v, &cause),
	    -ENOENT);
	assert_null(v);
	assert_int_equal(store_meta_set(fx->st, "price_etag", "abc", &cause),
	    0);
	assert_int_equal(store_meta_get(fx->st, "price_etag", &v, &cause), 0);
	assert_string_equal(v, "abc");
	free(v);
	assert_int_equal(store_meta_set(fx->st, "price_etag", "def", &cause),
	    0);
	assert_int_equal(store_meta_get(fx->st, "price_etag", &v, &cause), 0);
	assert_string_equal(v, "def");
	free(v);
	assert_int_equal(store_meta_set(fx->st, "k", NULL, &cause), -EINVAL);
	free(cause);
}

/* Make a database at FX->path from committed SQL in tests/unit/data. */
static void
make_db(struct fixture *fx, const char *name)
{
	const char	*srcdir;
	sqlite3		*db;
	char		*file, *sql, *err = NULL;
	FILE		*f;
	long		 len;

	srcdir = getenv("top_srcdir");
	if (srcdir != NULL)
		file = xprintf("%s/tests/unit/data/%s", srcdir, name);
	else
		file = xprintf("%s/%s", STORE_TEST_DATA, name);
	f = fopen(file, "r");
	if (f == NULL)
		fail_msg("%s: %s", file, strerror(errno));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	sql = xcalloc(1, len + 1);
	assert_int_equal(fread(sql, 1, len, f), (size_t)len);
	fclose(f);
	free(file);
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", name, err);
	sqlite3_close(db);
	free(sql);
}

static void
test_store_migrate_from_v1(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	*got[16];
	struct store_filter	 f;
	struct store_job	*j;
	struct collect		 c;
	int64_t			 id, until;
	char			*cause = NULL;
	int			 more;

	make_db(fx, "store-v1.sql");
	if (store_open(fx->path, &fx->st, &cause) != 0)
		fail_msg("open v1: %s", cause);
	assert_int_equal(sql_int(fx->st, "PRAGMA user_version"),
	    store_schema_version());
	assert_string_equal(store_install_id(fx->st), "0badcafe");

	assert_int_equal(store_job_get(fx->st, 1, &j, &cause), 0);
	assert_string_equal(j->name, "resnet");
	assert_int_equal(j->state, JOB_SUCCEEDED);
	assert_int_equal(j->interruptions, 1);
	assert_float_equal(j->cost_usd, 3.5, 1e-9);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, 3, &j, &cause), 0);
	assert_string_equal(j->why,
	    "no quota for nvidia-tesla-a100 in us-central1");
	store_job_free(j);

	/* New columns read as NULL; old rows keep theirs. */
	memset(got, 0, sizeof got);
	assert_int_equal(store_attempt_list(fx->st, 1, copy_attempt, got,
	    &cause), 2);
	assert_null(got[0]->cloud_id);
	assert_null(got[0]->resumed_from);
	assert_int_equal(got[0]->end_reason, END_PREEMPTED);
	assert_string_equal(got[1]->resource, "gpuq-0badcafe-1-2");
	attempts_free(got);
	assert_int_equal(store_attempt_list_live(fx->st, copy_attempt, got,
	    &cause), 1);
	assert_int_equal(got[0]->job_id, 2);
	attempts_free(got);

	/* New indexes and tables work on old rows. */
	memset(&f, 0, sizeof f);
	f.states = JOB_MASK_LIVE;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 10, collect_job, &c,
	    &more, &cause), 2);
	assert_int_equal(c.ids[0], 2);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_runnable(fx->st, 1800000000,
	    collect_job, &c, &cause), 1);
	assert_int_equal(c.ids[0], 3);
	assert_int_equal(store_cooldown_strike(fx->st, "z", "g", 1, 10, 60,
	    600, &until, &cause), 0);
	id = insert_one(fx->st, "new", 0);
	assert_int_equal(id, 4);
	/* The new queued job's "submitted" is implied, not a row. */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 5);
	assert_int_equal(store_event_list(fx->st, id, count_event, NULL,
	    NULL), 1);
}

static void
test_store_migrate_from_v2(void **state)
{
	struct fixture		*fx = *state;
	struct store_attempt	*got[16];
	struct store_event	 ev[16];
	int64_t			 counts[JOB_NSTATES];
	struct store_filter	 f;
	struct store_job	*j;
	struct store_job_new	 n;
	struct collect		 c;
	int64_t			 id;
	char			*cause = NULL;
	int			 more;

	make_db(fx, "store-v2.sql");
	if (store_open(fx->path, &fx->st, &cause) != 0)
		fail_msg("open v2: %s", cause);
	assert_int_equal(sql_int(fx->st, "PRAGMA user_version"),
	    store_schema_version());
	assert_string_equal(store_install_id(fx->st), "0badf00d");
	assert_int_equal(sql_int(fx->st, "PRAGMA foreign_keys"), 1);

	/* Rows kept; the accelerator columns filled from each spec. */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs"), 4);
	assert_int_equal(store_job_get(fx->st, 1, &j, &cause), 0);
	assert_string_equal(j->name, "resnet");
	assert_int_equal(j->state, JOB_SUCCEEDED);
	assert_float_equal(j->cost_usd, 2.5, 1e-9);
	assert_string_equal(j->gpu_type, "nvidia-tesla-t4");
	assert_int_equal(j->gpu_count, 2);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, 2, &j, &cause), 0);
	assert_string_equal(j->labels, "{\"team\":\"nlp\"}");
	assert_string_equal(j->gpu_type, "nvidia-tesla-a100");
	assert_int_equal(j->gpu_count, 1);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, 3, &j, &cause), 0);
	assert_string_equal(j->why, "no quota for nvidia-l4 in us-central1");
	assert_string_equal(j->gpu_type, "nvidia-l4");
	assert_int_equal(j->gpu_count, 8);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, 4, &j, &cause), 0);
	assert_int_equal(j->state, JOB_HELD);
	assert_null(j->gpu_type);
	assert_int_equal(j->gpu_count, 0);
	store_job_free(j);

	/* Dropping the old table cascaded into nothing. */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 6);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM attempts"), 2);

	/* Events numbered 1, 2, ... per job, in their old order. */
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 2, collect_event, ev,
	    &cause), 2);
	assert_int_equal(ev[0].seq, 1);
	assert_string_equal(ev[0].message, "submitted");
	assert_int_equal(ev[1].seq, 2);
	assert_string_equal(ev[1].message, "running");
	events_free(ev);
	assert_int_equal(store_event_add(fx->st, 1, "note", &cause), 0);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 1, collect_event, ev,
	    &cause), 3);
	assert_int_equal(ev[2].seq, 3);
	assert_string_equal(ev[2].message, "note");
	events_free(ev);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_SUCCEEDED], 1);
	assert_int_equal(counts[JOB_QUEUED], 1);
	assert_int_equal(counts[JOB_HELD], 1);
	assert_int_equal(counts[JOB_QUEUED] + counts[JOB_HELD] +
	    counts[JOB_LAUNCHING] + counts[JOB_PENDING] +
	    counts[JOB_RUNNING] + counts[JOB_CANCELLING] +
	    counts[JOB_SUCCEEDED] + counts[JOB_FAILED] +
	    counts[JOB_CANCELLED], 4);
	memset(got, 0, sizeof got);
	assert_int_equal(store_attempt_list_live(fx->st, copy_attempt, got,
	    &cause), 1);
	assert_int_equal(got[0]->job_id, 2);
	assert_string_equal(got[0]->cloud_id, "1234567");
	attempts_free(got);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM cooldowns"),
	    1);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM "
	    "pragma_foreign_key_check"), 0);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM "
	    "pragma_integrity_check WHERE integrity_check != 'ok'"), 0);

	/* No AUTOINCREMENT; every index back and working. */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM sqlite_schema "
	    "WHERE name = 'jobs' AND sql LIKE '%%AUTOINCREMENT%%'"), 0);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM sqlite_schema "
	    "WHERE type = 'index' AND tbl_name = 'jobs' AND name IN "
	    "('jobs_ended', 'jobs_owner', 'jobs_name', 'jobs_others', "
	    "'jobs_runnable')"), 5);
	memset(&f, 0, sizeof f);
	f.states = JOB_MASK_LIVE;
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 10, collect_job, &c,
	    &more, &cause), 3);
	assert_int_equal(c.ids[0], 2);
	assert_int_equal(c.ids[2], 4);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_runnable(fx->st, 1800000000,
	    collect_job, &c, &cause), 1);
	assert_int_equal(c.ids[0], 3);
	f.states = JOB_MASK(JOB_SUCCEEDED);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list(fx->st, &f, 0, 10, collect_job, &c,
	    &more, &cause), 1);
	assert_int_equal(c.ids[0], 1);

	/* The next id follows the highest; its accelerator from the spec. */
	memset(&n, 0, sizeof n);
	n.name = "new";
	n.spec = "{\"accelerator\":{\"type\":\"nvidia-tesla-v100\","
	    "\"count\":4}}";
	assert_int_equal(store_jobs_insert(fx->st, &n, 1, &id, &cause), 0);
	assert_int_equal(id, 5);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_string_equal(j->gpu_type, "nvidia-tesla-v100");
	assert_int_equal(j->gpu_count, 4);
	store_job_free(j);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 7);
	memset(ev, 0, sizeof ev);
	assert_int_equal(store_event_list(fx->st, 5, collect_event, ev,
	    &cause), 1);
	assert_int_equal(ev[0].seq, 1);
	assert_string_equal(ev[0].message, "submitted");
	events_free(ev);
}

/*
 * A version-13 file (jobs_live, and jobs_runnable by priority) lists the
 * same jobs in the same order once migrated, page after page, whatever
 * the filter: live (the queued and the others merged), by owner or name
 * (three walks merged), one state, a mask; and the scheduler's reads and
 * the counts agree with the rows.
 */
static void
test_store_migrate_from_v13(void **state)
{
	static const struct {
		unsigned	 states;
		uid_t		 owner;		/* 0: any */
		const char	*name;
	} cases[] = {
		{ 0, 0, NULL },
		{ JOB_MASK_LIVE, 0, NULL },
		{ JOB_MASK(JOB_QUEUED), 0, NULL },
		{ JOB_MASK(JOB_HELD) | JOB_MASK(JOB_RUNNING), 0, NULL },
		{ JOB_MASK_LIVE & ~JOB_MASK(JOB_QUEUED), 0, "n0" },
		{ JOB_MASK_LIVE, 1001, NULL },
		{ JOB_MASK(JOB_QUEUED), 1000, "n1" },
		{ 0, 1000, NULL },
		{ 0, 0, "n1" },
		{ 0, 1001, "n2" },
		{ JOB_MASK(JOB_QUEUED) | JOB_MASK(JOB_SUCCEEDED), 1001, NULL },
		{ JOB_MASK(JOB_QUEUED) | JOB_MASK(JOB_CANCELLED), 0, "n2" },
		{ JOB_MASK(JOB_RUNNING) | JOB_MASK(JOB_FAILED), 0, NULL },
		{ JOB_MASK(JOB_FAILED), 0, NULL },
	};
	struct fixture		*fx = *state;
	struct store_filter	 f;
	int64_t			 counts[JOB_NSTATES];
	char			*want[sizeof cases / sizeof cases[0]];
	char			*runnable, *queue, *bystate, *sql, *got;
	char			*cause = NULL;
	sqlite3			*db;
	size_t			 i;
	int			 limit, k;

	make_db(fx, "store-v13.sql");
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(db_int(db, "PRAGMA user_version"), 13);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sql = sqlite3_mprintf("SELECT group_concat(id) FROM (SELECT"
		    " id FROM jobs WHERE (%u = 0 OR (%u >> state) & 1)"
		    " AND (%u = 0 OR owner = %u) AND (%Q IS NULL OR"
		    " name = %Q) ORDER BY id)", cases[i].states,
		    cases[i].states, (unsigned)cases[i].owner,
		    (unsigned)cases[i].owner, cases[i].name, cases[i].name);
		want[i] = db_text(db, sql);
		sqlite3_free(sql);
	}
	runnable = db_text(db, "SELECT group_concat(id) FROM (SELECT id"
	    " FROM jobs WHERE state = 1 AND not_before <= 1900000000"
	    " ORDER BY priority DESC, id)");
	queue = db_text(db, "SELECT group_concat(" QUEUED_SQL ") FROM"
	    " (SELECT * FROM jobs WHERE state = 1 ORDER BY priority DESC,"
	    " id)");
	bystate = db_text(db, "SELECT group_concat(n) FROM (SELECT"
	    " count(*) AS n FROM jobs GROUP BY state ORDER BY state)");
	sqlite3_close(db);

	if (store_open(fx->path, &fx->st, &cause) != 0)
		fail_msg("open v13: %s", cause);
	assert_int_equal(sql_int(fx->st, "PRAGMA user_version"),
	    store_schema_version());
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM sqlite_schema"
	    " WHERE name = 'jobs_live'"), 0);
	assert_string_equal(store_install_id(fx->st), "0badc0de");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(&f, 0, sizeof f);
		f.states = cases[i].states;
		f.owner_set = cases[i].owner != 0;
		f.owner = cases[i].owner;
		f.name = cases[i].name;
		for (limit = 1; limit <= 64; limit *= 4) {
			for (k = 0; k < 2; k++) {
				f.bare = k;
				got = list_all(fx->st, &f, limit);
				if (strcmp(got, want[i]) != 0)
					fail_msg("case %zu, limit %d: got %s, "
					    "wanted %s", i, limit, got,
					    want[i]);
				free(got);
			}
		}
		free(want[i]);
	}

	got = xstrdup("");
	assert_int_equal(store_job_list_runnable(fx->st, 1900000000,
	    list_add_job, &got, &cause), 5);
	assert_string_equal(got, runnable);
	free(got);
	got = xstrdup("");
	assert_int_equal(store_job_list_queue(fx->st, list_add_queued, &got,
	    &cause), 7);
	assert_string_equal(got, queue);
	free(got);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	got = xstrdup("");
	for (k = 0; k < JOB_NSTATES; k++)
		list_add(&got, "%lld", (long long)counts[k]);
	assert_string_equal(got, bystate);
	free(got);
	free(runnable);
	free(queue);
	free(bystate);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM "
	    "pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
	assert_null(cause);
}

/* An orphan row stops the migration; the file stays at version 2. */
static void
test_store_migrate_refuses_orphans(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	sqlite3		*db;
	char		*cause = NULL;

	make_db(fx, "store-v2.sql");
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO events (job_id, time, "
	    "to_state) VALUES (99, 1700000000, 1)", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(fx->path, &st, &cause), -EIO);
	assert_null(st);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "events row 7"));
	assert_non_null(strstr(cause, "nothing was changed"));
	free(cause);

	/* Untouched: still version 2, the old table, every row. */
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(db_int(db, "PRAGMA user_version"), 2);
	assert_int_equal(db_int(db, "SELECT count(*) FROM sqlite_schema "
	    "WHERE name = 'jobs' AND sql LIKE '%AUTOINCREMENT%'"), 1);
	assert_int_equal(db_int(db, "SELECT count(*) FROM events"), 7);
	assert_int_equal(db_int(db, "SELECT count(*) FROM jobs"), 4);
	sqlite3_close(db);
}

static void
test_store_refuses_newer_schema(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = NULL;
	sqlite3		*db;
	char		*cause = NULL;

	assert_int_equal(store_open(fx->path, &fx->st, &cause), 0);
	store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(fx->path, &st, &cause), -EPROTO);
	assert_null(st);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "99"));
	assert_non_null(strstr(cause, "newer"));
	free(cause);

	/* Untouched. */
	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "SELECT 1 FROM jobs", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void
test_store_busy(void **state)
{
	struct fixture	*fx = *state;
	sqlite3		*db;
	int64_t		 id;
	char		*cause = NULL;
	time_t		 t0;

	assert_int_equal(sqlite3_open(fx->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	t0 = time(NULL);
	assert_int_equal(store_job_transition(fx->st, 1, JOB_MASK_ALL,
	    JOB_QUEUED, NULL, NULL, &cause), -EBUSY);
	assert_true(time(NULL) - t0 >= 4);	/* it waited */
	assert_non_null(cause);
	assert_non_null(strstr(cause, "locked"));
	free(cause);
	assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	id = insert_one(fx->st, "after", 0);
	assert_int_equal(id, 1);
}

static void
test_store_full(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 jobs[64];
	int64_t			 ids[64], pages, id;
	char			*cause = NULL, *big;
	int			 i, rc = 0;

	/* A database that may not grow: SQLITE_FULL, as on a full disk. */
	pages = sql_int(fx->st, "PRAGMA page_count");
	assert_int_equal(sql_int(fx->st, "PRAGMA max_page_count = %lld",
	    (long long)pages + 4), pages + 4);
	big = xcalloc(1, 8192);
	memset(big, 'x', 8191);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 64; i++) {
		jobs[i].name = "big";
		jobs[i].spec = big;
	}
	for (i = 0; i < 10 && rc == 0; i++)
		rc = store_jobs_insert(fx->st, jobs, 64, ids, &cause);
	assert_int_equal(rc, -ENOSPC);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "full"));
	free(cause);
	free(big);
	assert_true(sqlite3_get_autocommit(fx->st->db));
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs"), 0);

	/* Room again: the store carries on. */
	sql_int(fx->st, "PRAGMA max_page_count = 1000000");
	id = insert_one(fx->st, "small", 0);
	assert_int_equal(id, 1);
}

/*
 * Kill a writer mid-way. The child reports each committed batch's first
 * id through a pipe after store_jobs_insert() returned; the parent kills
 * it with SIGKILL, reopens, and finds every reported batch whole and no
 * partial batch.
 */
#define CRASH_BATCH	64

static void
test_store_crash_safety(void **state)
{
	struct fixture		*fx = *state;
	struct store_job	*j;
	int64_t			 first, got[4096];
	size_t			 n = 0, i;
	ssize_t			 r;
	pid_t			 pid;
	char			*cause = NULL;
	int			 p[2], status, k;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store_job_new	 jobs[CRASH_BATCH];
		struct store		*st;
		int64_t			 ids[CRASH_BATCH];

		close(p[0]);
		if (store_open(fx->path, &st, NULL) != 0)
			_exit(2);
		memset(jobs, 0, sizeof jobs);
		for (k = 0; k < CRASH_BATCH; k++) {
			jobs[k].name = "crash";
			jobs[k].spec = "{\"image\":\"busybox\",\"pad\":"
			    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";
		}
		for (;;) {
			if (store_jobs_insert(st, jobs, CRASH_BATCH, ids,
			    NULL) != 0)
				_exit(3);
			if (write(p[1], &ids[0], sizeof ids[0]) !=
			    sizeof ids[0])
				_exit(4);
		}
	}
	close(p[1]);
	while (n < 50) {
		r = read(p[0], &got[n], sizeof got[0]);
		assert_int_equal(r, sizeof got[0]);
		n++;
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	while (n < 4096 && (r = read(p[0], &got[n], sizeof got[0])) ==
	    sizeof got[0])
		n++;
	close(p[0]);

	if (store_open(fx->path, &fx->st, &cause) != 0)
		fail_msg("reopen: %s", cause);
	for (i = 0; i < n; i++) {
		first = got[i];
		assert_int_equal(store_job_get(fx->st, first, &j, &cause), 0);
		store_job_free(j);
		assert_int_equal(store_job_get(fx->st, first + CRASH_BATCH - 1,
		    &j, &cause), 0);
		store_job_free(j);
	}
	/* Whole batches only, each job with its event. */
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs") %
	    CRASH_BATCH, 0);
	assert_true(sql_int(fx->st, "SELECT count(*) FROM jobs") >=
	    (int64_t)n * CRASH_BATCH);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events"), 0);
	assert_int_equal(store_event_list(fx->st, sql_int(fx->st,
	    "SELECT max(id) FROM jobs"), count_event, NULL, NULL), 1);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM "
	    "pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
}

/* The plan SQLite picks for S, one line per step. */
static char *
explain(struct store *st, sqlite3_stmt *s)
{
	sqlite3_stmt	*e;
	char		*sql, *out = xstrdup(""), *tmp;

	sql = xprintf("EXPLAIN QUERY PLAN %s", sqlite3_sql(s));
	assert_int_equal(sqlite3_prepare_v2(st->db, sql, -1, &e, NULL),
	    SQLITE_OK);
	while (sqlite3_step(e) == SQLITE_ROW) {
		tmp = xprintf("%s%s\n", out, sqlite3_column_text(e, 3));
		free(out);
		out = tmp;
	}
	sqlite3_finalize(e);
	free(sql);
	return out;
}

static void
assert_plan(struct store *st, sqlite3_stmt *s, const char *want)
{
	char	*plan;

	plan = explain(st, s);
	if (strstr(plan, want) == NULL || strstr(plan, "TEMP B-TREE") != NULL)
		fail_msg("plan of \"%s\":\n%swanted \"%s\", no temp b-tree",
		    sqlite3_sql(s), plan, want);
	free(plan);
}

static void
test_store_query_plans(void **state)
{
	struct fixture	*fx = *state;
	struct store	*st = fx->st;
	char		*plan;
	int		 i;

	/* The live jobs: the queued and the others, merged by id. */
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_LIVE)],
	    "SEARCH jobs USING INDEX jobs_runnable (id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_LIVE)],
	    "SEARCH jobs USING INDEX jobs_others (id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_LIVE)],
	    "MERGE (UNION ALL)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ONE)],
	    "SEARCH jobs USING INDEX jobs_ended (state=? AND id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ANY)],
	    "SEARCH jobs USING INTEGER PRIMARY KEY (rowid>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_LIVE) |
	    STORE_LIST_OWNER | STORE_LIST_NAME], "USING INDEX jobs_others");
	/* Ended jobs by their owner or name index, merged with the live. */
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ANY) |
	    STORE_LIST_NAME], "SEARCH jobs USING INDEX jobs_name "
	    "(name=? AND id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ANY) |
	    STORE_LIST_NAME], "MERGE (UNION ALL)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ANY) |
	    STORE_LIST_NAME], "SEARCH jobs USING INDEX jobs_others (id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_ANY) |
	    STORE_LIST_NAME], "SEARCH jobs USING INDEX jobs_runnable "
	    "(id>?)");
	assert_plan(st, st->list[STORE_LIST_KIND(STORE_LIST_MASK) |
	    STORE_LIST_OWNER], "SEARCH jobs USING INDEX jobs_owner "
	    "(owner=? AND id>?)");
	assert_plan(st, st->list_bare[STORE_LIST_KIND(STORE_LIST_ANY) |
	    STORE_LIST_OWNER | STORE_LIST_NAME], "MERGE (UNION ALL)");
	assert_plan(st, st->stmt[STMT_JOB_RUNNABLE],
	    "SCAN jobs USING INDEX jobs_runnable");
	assert_plan(st, st->stmt[STMT_JOB_RUNNABLE_ONE],
	    "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)");
	/*
	 * The scheduler's whole read never reads a row of jobs, nor sorts
	 * in SQLite (store-queue.c does, in memory).
	 */
	assert_plan(st, st->stmt[STMT_JOB_QUEUE],
	    "SCAN jobs USING COVERING INDEX jobs_runnable");
	assert_plan(st, st->stmt[STMT_ATTEMPT_LIVE],
	    "SCAN attempts USING INDEX attempts_live");
	assert_plan(st, st->stmt[STMT_ATTEMPT_LIST],
	    "SEARCH attempts USING INDEX sqlite_autoindex_attempts_1 "
	    "(job_id=?)");
	assert_plan(st, st->stmt[STMT_EVENT_LIST],
	    "SEARCH events USING PRIMARY KEY (job_id=?)");
	assert_plan(st, st->stmt[STMT_JOB_GET],
	    "SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)");
	/*
	 * Counts read only the three partial indexes; grouping the others
	 * sorts the live jobs not queued (counts are read at open, and
	 * again only after another connection wrote).
	 */
	plan = explain(st, st->stmt[STMT_JOB_COUNTS]);
	assert_non_null(strstr(plan, "SEARCH jobs USING COVERING INDEX "
	    "jobs_ended (state>?)\n"));
	assert_non_null(strstr(plan, "SCAN jobs USING COVERING INDEX "
	    "jobs_others\n"));
	assert_non_null(strstr(plan, "SCAN jobs USING COVERING INDEX "
	    "jobs_runnable\n"));
	free(plan);
	plan = explain(st, st->stmt[STMT_SPOT_HISTORY]);
	assert_non_null(strstr(plan, "attempts_spot (ended>?)"));
	free(plan);
	/* History walks the ended jobs by end time, attempts by key. */
	assert_plan(st, st->stmt[STMT_HISTORY],
	    "SEARCH j USING INDEX jobs_history (updated>? AND updated<?)");
	assert_plan(st, st->stmt[STMT_HISTORY],
	    "SEARCH a USING INDEX sqlite_autoindex_attempts_1 (job_id=?)");

	/* No statement walks a whole table without an index. */
	for (i = 0; i < STMT_COUNT; i++) {
		plan = explain(st, st->stmt[i]);
		if (strstr(plan, "SCAN jobs\n") != NULL ||
		    strstr(plan, "SCAN attempts\n") != NULL ||
		    strstr(plan, "SCAN events\n") != NULL)
			fail_msg("full scan in \"%s\":\n%s",
			    sqlite3_sql(st->stmt[i]), plan);
		free(plan);
	}
}

/*
 * A submit and a job's moves fill no temporary B-tree: no IN list of
 * constants in a partial index's condition (STORE_LIVE_WHERE), no
 * INSERT ... SELECT from the table written. Each such tree was built
 * and dropped per row (about half of SQLite's time on a submit).
 * (STMT_JOB_BUMP_ATTEMPTS keeps one: SQLite holds RETURNING's rows in
 * it.)
 */
static void
test_store_writes_no_temp_tree(void **state)
{
	static const int	 writes[] = { STMT_JOB_INSERT,
	    STMT_JOB_SET_STATE, STMT_JOB_ADD_END,
	    STMT_JOB_SET_WHY, STMT_JOB_SET_NOT_BEFORE,
	    STMT_JOB_SET_CHECKPOINT, STMT_EVENT_INSERT, STMT_EVENT_FIRST };
	struct fixture		*fx = *state;
	struct store		*st = fx->st;
	sqlite3_stmt		*e;
	const char		*op;
	char			*sql;
	size_t			 i;

	for (i = 0; i < sizeof writes / sizeof writes[0]; i++) {
		sql = xprintf("EXPLAIN %s", sqlite3_sql(st->stmt[writes[i]]));
		assert_int_equal(sqlite3_prepare_v2(st->db, sql, -1, &e,
		    NULL), SQLITE_OK);
		while (sqlite3_step(e) == SQLITE_ROW) {
			op = (const char *)sqlite3_column_text(e, 1);
			if (strcmp(op, "OpenEphemeral") == 0 ||
			    strcmp(op, "OpenAutoindex") == 0)
				fail_msg("\"%s\" builds a temporary B-tree "
				    "(%s)", sqlite3_sql(st->stmt[writes[i]]),
				    op);
		}
		sqlite3_finalize(e);
		free(sql);
	}
}

static void
test_store_names(void **state)
{
	int	i;

	(void)state;
	for (i = 0; i < JOB_NSTATES; i++)
		assert_int_equal(job_state_parse(job_state_name(i)), i);
	assert_string_equal(job_state_name(JOB_CANCELLING), "cancelling");
	assert_string_equal(job_state_name(JOB_NSTATES), "?");
	assert_string_equal(job_state_name(-1), "?");
	assert_int_equal(job_state_parse("runnin"), -1);
	assert_int_equal(job_state_parse(NULL), -1);
	for (i = END_SUCCEEDED; i < END_NREASONS; i++)
		assert_int_equal(attempt_end_parse(attempt_end_name(i)), i);
	assert_string_equal(attempt_end_name(END_QUOTA), "quota");
	assert_false(attempt_end_is_interruption(END_QUOTA));
	assert_string_equal(attempt_end_name(END_LAUNCH_ERROR),
	    "launch_error");
	assert_string_equal(attempt_state_name(ATTEMPT_ENDED), "ended");
	assert_string_equal(attempt_state_name(9), "?");
	assert_true(attempt_end_is_interruption(END_PREEMPTED));
	assert_true(attempt_end_is_interruption(END_MAINTENANCE));
	assert_true(attempt_end_is_interruption(END_LOST));
	assert_true(attempt_end_is_interruption(END_STOCKOUT));
	assert_true(attempt_end_counts(END_STOCKOUT, 1000));
	assert_false(attempt_end_counts(END_STOCKOUT, 0));
	assert_true(attempt_end_counts(END_PREEMPTED, 0));
	assert_false(attempt_end_counts(END_FAILED, 1000));
	assert_false(attempt_end_is_interruption(END_FAILED));
	assert_false(attempt_end_is_interruption(END_LAUNCH_ERROR));
	assert_false(attempt_end_is_interruption(END_SUCCEEDED));
}

/* A moved task, as store_array_transition() reports it. */
static void
moved_count(int64_t id, int from, int to, void *arg)
{
	int	*n = arg;

	assert_int_equal(from, JOB_QUEUED);
	assert_int_equal(to, JOB_HELD);
	(*n)++;
}

/*
 * An array's tasks are consecutive rows with array_id (task 0's id) and
 * task_index; a task is found by (array, index); sums count an array's
 * tasks or one plain job; a whole-array move is one transaction with an
 * event per task.
 */
static void
test_store_arrays(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 rows[7];
	struct store_job	*j;
	struct store_sum	 sum;
	int64_t			 ids[7], counts[JOB_NSTATES];
	int			 to_of[JOB_NSTATES], i, moved = 0;
	char			*cause = NULL;

	memset(rows, 0, sizeof rows);
	for (i = 0; i < 7; i++) {
		rows[i].name = "sweep";
		rows[i].owner = 1000;
		rows[i].spec = "{\"image\":\"x\"}";
		/* A plain job, an array of 5, a plain job. */
		rows[i].task = i >= 1 && i <= 5;
		rows[i].task_index = i - 1;
	}
	assert_int_equal(store_jobs_insert(fx->st, rows, 7, ids, &cause), 0);
	for (i = 1; i < 7; i++)
		assert_int_equal(ids[i], ids[0] + i);

	assert_int_equal(store_task_get(fx->st, ids[1], 3, &j, &cause), 0);
	assert_int_equal(j->id, ids[4]);
	assert_int_equal(j->array_id, ids[1]);
	assert_int_equal(j->task_index, 3);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, ids[1], &j, &cause), 0);
	assert_int_equal(j->array_id, ids[1]);
	assert_int_equal(j->task_index, 0);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, ids[6], &j, &cause), 0);
	assert_int_equal(j->array_id, 0);
	assert_int_equal(j->task_index, -1);
	store_job_free(j);
	assert_int_equal(store_task_get(fx->st, ids[1], 5, &j, &cause),
	    -ENOENT);
	assert_int_equal(store_task_get(fx->st, ids[0], 0, &j, &cause),
	    -ENOENT);
	assert_int_equal(store_task_get(fx->st, ids[2], 0, &j, &cause),
	    -ENOENT);

	assert_int_equal(store_job_sum(fx->st, ids[1], &sum, &cause), 0);
	assert_int_equal(sum.tasks, 5);
	assert_int_equal(sum.states[JOB_QUEUED], 5);
	assert_int_equal(sum.last_id, ids[5]);
	assert_int_equal(sum.array, 1);
	assert_int_equal(store_job_sum(fx->st, ids[6], &sum, &cause), 0);
	assert_int_equal(sum.tasks, 1);
	assert_int_equal(sum.array, 0);
	/* A task's own row is not an array. */
	assert_int_equal(store_job_sum(fx->st, ids[3], &sum, &cause),
	    -ENOENT);
	assert_int_equal(store_job_sum(fx->st, ids[6] + 1, &sum, &cause),
	    -ENOENT);

	/* Hold the array: one task already held stays, four move. */
	assert_int_equal(store_job_transition(fx->st, ids[2],
	    JOB_MASK(JOB_QUEUED), JOB_HELD, "held", NULL, &cause), 0);
	for (i = 0; i < JOB_NSTATES; i++)
		to_of[i] = -1;
	to_of[JOB_QUEUED] = JOB_HELD;
	assert_int_equal(store_array_transition(fx->st, ids[1], to_of,
	    "held by uid 0 (the whole array)", "held", moved_count, &moved,
	    &cause), 4);
	assert_int_equal(moved, 4);
	assert_int_equal(store_job_sum(fx->st, ids[1], &sum, &cause), 0);
	assert_int_equal(sum.states[JOB_HELD], 5);
	assert_int_equal(store_job_counts(fx->st, counts, &cause), 0);
	assert_int_equal(counts[JOB_HELD], 5);
	assert_int_equal(counts[JOB_QUEUED], 2);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events WHERE "
	    "message = 'held by uid 0 (the whole array)'"), 4);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM jobs WHERE "
	    "why = 'held' AND array_id = %lld", (long long)ids[1]), 4);
	/* The plain jobs were not touched. */
	assert_int_equal(sql_int(fx->st, "SELECT state FROM jobs WHERE id = "
	    "%lld", (long long)ids[6]), JOB_QUEUED);
}

/*
 * Deadlines (doc/DESIGN.md "Deadlines"): the column comes from the
 * spec's UTC time, deadline_safe is sticky and set once, the live jobs
 * with one are listed, and a job that ended after it is a miss.
 */
static void
test_store_deadline(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 row;
	struct store_job	*j = NULL;
	struct collect		 c;
	int64_t			 id, plain, n = -1;
	char			*cause = NULL;

	memset(&row, 0, sizeof row);
	row.name = "due";
	row.owner = 1000;
	row.spec = "{\"image\":\"x\",\"estimated_hours\":1,"
	    "\"deadline\":\"2020-01-01T00:00:00Z\"}";
	assert_int_equal(store_jobs_insert(fx->st, &row, 1, &id, &cause), 0);
	plain = insert_one(fx->st, "plain", 0);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->deadline, 1577836800);
	assert_int_equal(j->deadline_safe, 0);
	store_job_free(j);
	assert_int_equal(store_job_get(fx->st, plain, &j, &cause), 0);
	assert_int_equal(j->deadline, 0);
	store_job_free(j);
	/* "deadline" in a value, not a member: none (the spec is parsed). */
	row.spec = "{\"image\":\"x\",\"args\":[\"\\\"deadline\\\"\","
	    "\"deadline\"],\"deadline_note\":\"2020-01-01T00:00:00Z\"}";
	assert_int_equal(store_jobs_insert(fx->st, &row, 1, &plain, &cause),
	    0);
	assert_int_equal(store_job_get(fx->st, plain, &j, &cause), 0);
	assert_int_equal(j->deadline, 0);
	store_job_free(j);

	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_deadline(fx->st, collect_job, &c,
	    &cause), 1);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.ids[0], id);

	assert_int_equal(store_job_set_deadline_safe(fx->st, id, "off Spot",
	    &cause), 0);
	assert_int_equal(store_job_set_deadline_safe(fx->st, id, "again",
	    &cause), -EALREADY);
	assert_int_equal(store_job_get(fx->st, id, &j, &cause), 0);
	assert_int_equal(j->deadline_safe, 1);
	store_job_free(j);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events WHERE "
	    "job_id = %lld AND message = 'off Spot'", (long long)id), 1);
	assert_int_equal(sql_int(fx->st, "SELECT count(*) FROM events WHERE "
	    "job_id = %lld AND message = 'again'", (long long)id), 0);

	/* Ended after it: a miss; the live listing no longer has it. */
	assert_int_equal(store_deadline_misses(fx->st, &n, &cause), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_job_transition(fx->st, id, JOB_MASK(JOB_QUEUED),
	    JOB_SUCCEEDED, "done", NULL, &cause), 0);
	assert_int_equal(store_deadline_misses(fx->st, &n, &cause), 0);
	assert_int_equal(n, 1);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_deadline(fx->st, collect_job, &c,
	    &cause), 0);
	assert_null(cause);
}

/*
 * The deadline listing's statement is kept between calls (every pass
 * reads it): a walk its callback stopped starts over at the next call,
 * and a job that got a deadline since is in it.
 */
static void
test_store_deadline_list_again(void **state)
{
	struct fixture		*fx = *state;
	struct store_job_new	 row;
	struct collect		 c;
	int64_t			 id[3];
	char			*cause = NULL;
	int			 i;

	memset(&row, 0, sizeof row);
	row.name = "due";
	row.owner = 1000;
	row.spec = "{\"image\":\"x\",\"estimated_hours\":1,"
	    "\"deadline\":\"2030-01-01T00:00:00Z\"}";
	for (i = 0; i < 2; i++)
		assert_int_equal(store_jobs_insert(fx->st, &row, 1, &id[i],
		    &cause), 0);
	memset(&c, 0, sizeof c);
	c.stop_at = 1;
	assert_int_equal(store_job_list_deadline(fx->st, collect_job, &c,
	    &cause), 7);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.ids[0], id[0]);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_deadline(fx->st, collect_job, &c,
	    &cause), 2);
	assert_int_equal(c.ids[0], id[0]);
	assert_int_equal(c.ids[1], id[1]);
	assert_int_equal(store_jobs_insert(fx->st, &row, 1, &id[2], &cause),
	    0);
	memset(&c, 0, sizeof c);
	assert_int_equal(store_job_list_deadline(fx->st, collect_job, &c,
	    &cause), 3);
	assert_int_equal(c.ids[2], id[2]);
	assert_null(cause);
}

#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TN(f)	cmocka_unit_test_setup_teardown(f, setup_nostore, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_store_open_creates),
		T(test_store_deadline),
		T(test_store_deadline_list_again),
		T(test_store_reopen_keeps_install_id),
		TN(test_store_open_bad_path),
		TN(test_store_open_not_a_database),
		T(test_store_insert_batch),
		T(test_store_insert_invalid_writes_nothing),
		T(test_store_get),
		T(test_store_insert_gpu),
		T(test_store_list_paging),
		T(test_store_list_filters),
		T(test_store_list_callback_stops),
		T(test_store_sched_set),
		T(test_store_runnable_order),
		T(test_store_queue_order),
		T(test_store_runnable_write_during_walk),
		T(test_store_transition_ok),
		T(test_store_transition_ealready),
		T(test_store_transition_enoent),
		T(test_store_setters),
		T(test_store_counts),
		T(test_store_event_add),
		T(test_store_attempt_insert),
		T(test_store_attempt_launch),
		T(test_store_attempt_set_state),
		T(test_store_attempt_end_counters),
		T(test_store_attempt_live),
		T(test_store_attempt_end_numbered),
		T(test_store_job_requeue),
		T(test_store_job_requeue_cancelled_meanwhile),
		T(test_store_cooldown_growth),
		T(test_store_cooldown_decay),
		T(test_store_cooldown_list),
		T(test_store_spot_history),
		T(test_store_meta),
		T(test_store_arrays),
		TN(test_store_migrate_from_v1),
		TN(test_store_migrate_from_v2),
		TN(test_store_migrate_from_v13),
		TN(test_store_migrate_refuses_orphans),
		TN(test_store_refuses_newer_schema),
		T(test_store_busy),
		T(test_store_full),
		TN(test_store_crash_safety),
		T(test_store_query_plans),
		T(test_store_writes_no_temp_tree),
		T(test_store_acct),
		cmocka_unit_test(test_store_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
