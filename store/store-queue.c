/*
 * store-queue.c: the scheduler's reads of the whole queue from the
 * covering index jobs_runnable (store.h store_job_list_queue() and
 * store_job_list_runnable(), doc/DESIGN.md "The pass").
 *
 * The scheduler reads the queue whole after another program wrote the
 * file, after a failed write of whys, or after many moves. It already
 * knows most of the jobs and needs of each only what may have changed:
 * priority, backoff, interruptions, cost and the stored why. Those are
 * in jobs_runnable since schema 13, so the walk reads that index and
 * never a row of jobs, whose specs made it about seven times the bytes.
 *
 * Since schema 14 jobs_runnable is keyed by id, so that the live jobs
 * in id order are its walk merged with jobs_others' and a queued submit
 * writes no third B-tree. The walk comes in id order, then; the
 * scheduler wants priority first. The rows are kept in one array and
 * sorted here, which costs nothing when every job has the same priority
 * (the walk is then in order already) and a bucket sort otherwise, far
 * less than SQLite's sorter: that one spills to temporary files once the
 * queue is larger than its cache.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store-int.h"

/*
 * One row of the walk, 40 bytes (a whole read of 100,000 jobs holds
 * about 5 MB of them for a moment); its why is at why_off in the
 * buffer's text.
 */
struct store_qrow {
	int64_t			 id;
	int64_t			 not_before;
	double			 cost_usd;
	uint32_t		 why_off;	/* STORE_QROW_NOWHY: NULL */
	uint32_t		 why_len;
	int			 priority;
	int			 interruptions;
};
#define STORE_QROW_NOWHY	UINT32_MAX

struct store_qbuf {
	struct store_qrow	*rows;
	size_t			 n, cap;
	char			*text;		/* every why, NUL after each */
	size_t			 len, size;
};

static void
store_qbuf_free(struct store_qbuf *b)
{
	free(b->rows);
	free(b->text);
}

/* Priority descending, then id ascending (FIFO within a priority). */
static int
store_qrow_cmp(const void *va, const void *vb)
{
	const struct store_qrow	*a = va, *b = vb;

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Sort B's rows, which come by id, by priority desc then id: a stable
 * bucket sort when they have at most STORE_QUEUE_BUCKETS priorities
 * (two passes and one copy: about 2 ms at 100,000 jobs where qsort took
 * 10), else qsort.
 */
#define STORE_QUEUE_BUCKETS	64

static void
store_qbuf_sort(struct store_qbuf *b)
{
	struct store_qrow	*out;
	size_t			 i, at[STORE_QUEUE_BUCKETS], n[STORE_QUEUE_BUCKETS];
	unsigned char		*bucket;
	int			 prio[STORE_QUEUE_BUCKETS], np = 0, k, last = -1;
	int			 rank[STORE_QUEUE_BUCKETS], j, t;

	bucket = xmalloc(b->n);
	for (i = 0; i < b->n; i++) {
		if (last >= 0 && prio[last] == b->rows[i].priority)
			k = last;
		else {
			for (k = 0; k < np && prio[k] != b->rows[i].priority;
			    k++)
				;
			if (k == np) {
				if (np == STORE_QUEUE_BUCKETS) {
					free(bucket);
					qsort(b->rows, b->n, sizeof *b->rows,
					    store_qrow_cmp);
					return;
				}
				prio[np] = b->rows[i].priority;
				n[np++] = 0;
			}
		}
		bucket[i] = (unsigned char)k;
		n[k]++;
		last = k;
	}
	/* rank[r]: the bucket of the r-th highest priority. */
	for (k = 0; k < np; k++)
		rank[k] = k;
	for (k = 1; k < np; k++)
		for (j = k; j > 0 && prio[rank[j]] > prio[rank[j - 1]]; j--) {
			t = rank[j];
			rank[j] = rank[j - 1];
			rank[j - 1] = t;
		}
	for (k = 0, i = 0; k < np; k++) {
		at[rank[k]] = i;
		i += n[rank[k]];
	}
	out = xreallocarray(NULL, b->n > 0 ? b->n : 1, sizeof *out);
	for (i = 0; i < b->n; i++)
		out[at[bucket[i]]++] = b->rows[i];
	free(bucket);
	free(b->rows);
	b->rows = out;
	b->cap = b->n;
}

/*
 * Every queued job with not_before <= MAX_NOT_BEFORE into B, sorted
 * by priority desc then id, with whys copied (WHYS) or left NULL.
 * Returns the count or store_fail()'s error.
 */
static int
store_queue_read(struct store *st, int64_t max_not_before, int whys,
    struct store_qbuf *b, char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_JOB_QUEUE];
	struct store_qrow	*r;
	const char		*why;
	size_t			 wlen;
	int			 rc, sorted = 1;

	memset(b, 0, sizeof *b);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (sqlite3_column_int64(s, 2) > max_not_before)
			continue;
		if (b->n == b->cap) {
			b->cap = b->cap == 0 ? 1024 : b->cap * 2;
			b->rows = xreallocarray(b->rows, b->cap,
			    sizeof *b->rows);
		}
		r = &b->rows[b->n];
		r->id = sqlite3_column_int64(s, 0);
		r->priority = sqlite3_column_int(s, 1);
		r->not_before = sqlite3_column_int64(s, 2);
		r->interruptions = sqlite3_column_int(s, 3);
		r->cost_usd = sqlite3_column_double(s, 4);
		r->why_len = 0;
		r->why_off = STORE_QROW_NOWHY;
		why = whys ? (const char *)sqlite3_column_text(s, 5) : NULL;
		if (why != NULL) {
			wlen = (size_t)sqlite3_column_bytes(s, 5);
			if (b->len + wlen + 1 >= STORE_QROW_NOWHY)
				fatalx("store: the queue's whys passed 4 GiB");
			while (b->len + wlen + 1 > b->size) {
				b->size = b->size == 0 ? 65536 : b->size * 2;
				b->text = xrealloc(b->text, b->size);
			}
			memcpy(b->text + b->len, why, wlen);
			b->text[b->len + wlen] = '\0';
			r->why_off = (uint32_t)b->len;
			r->why_len = (uint32_t)wlen;
			b->len += wlen + 1;
		}
		/* Ids ascend: priorities that never rise are in order. */
		if (b->n > 0 && r->priority > b->rows[b->n - 1].priority)
			sorted = 0;
		b->n++;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		rc = store_fail(st, rc, cause, "list the queue");
		store_qbuf_free(b);
		memset(b, 0, sizeof *b);
		return rc;
	}
	if (!sorted)
		store_qbuf_sort(b);
	return (int)b->n;
}

int
store_job_list_queue(struct store *st, store_queued_cb cb, void *arg,
    char **cause)
{
	struct store_qbuf	 b;
	struct store_qrow	*r;
	struct store_queued	 q;
	size_t			 i;
	int			 rc;

	if ((rc = store_queue_read(st, INT64_MAX, 1, &b, cause)) < 0)
		return rc;
	for (i = 0; i < b.n; i++) {
		r = &b.rows[i];
		q.id = r->id;
		q.priority = r->priority;
		q.not_before = r->not_before;
		q.interruptions = r->interruptions;
		q.cost_usd = r->cost_usd;
		q.why = r->why_off == STORE_QROW_NOWHY ? NULL :
		    b.text + r->why_off;
		q.why_len = r->why_len;
		if ((rc = cb(&q, arg)) != 0) {
			store_qbuf_free(&b);
			return rc;
		}
	}
	store_qbuf_free(&b);
	return (int)i;
}

/*
 * More distinct priorities than this among the runnable jobs: their
 * rows are read one by one in the sorted order rather than in one walk
 * of jobs_runnable per priority.
 */
#define STORE_QUEUE_WALKS	8

/*
 * Give CB each row of S that is still runnable at NOW, adding them up in
 * *N; resets S. 0, CB's non-zero answer, or store_fail()'s error.
 */
static int
store_queue_rows(struct store *st, sqlite3_stmt *s, int64_t now,
    store_job_cb cb, void *arg, int *n, char **cause)
{
	struct store_job	j;
	int			rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_job_row(s, &j);
		if (j.state != JOB_QUEUED || j.not_before > now)
			continue;	/* by id: the job moved since */
		if ((rc = cb(&j, arg)) != 0) {
			sqlite3_reset(s);
			return rc;
		}
		(*n)++;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, cause, "list runnable jobs");
	return 0;
}

/*
 * Queued jobs with not_before <= NOW, whole rows, priority desc then id.
 * The keys come from jobs_runnable first: when every runnable job has
 * the same priority (the usual queue) one walk by id is already in
 * order; with a few priorities, one walk each, highest first; with many,
 * each row by its id in the sorted order.
 */
int
store_job_list_runnable(struct store *st, int64_t now, store_job_cb cb,
    void *arg, char **cause)
{
	sqlite3_stmt		*s = st->stmt[STMT_JOB_RUNNABLE];
	struct store_qbuf	 b;
	int			 prio[STORE_QUEUE_WALKS];
	size_t			 i;
	int			 rc, n = 0, np = 0, k;

	if ((rc = store_queue_read(st, now, 0, &b, cause)) < 0)
		return rc;
	for (i = 0; i < b.n && np <= STORE_QUEUE_WALKS; i++)
		if (i == 0 || b.rows[i].priority != b.rows[i - 1].priority) {
			if (np < STORE_QUEUE_WALKS)
				prio[np] = b.rows[i].priority;
			np++;
		}
	if (np <= STORE_QUEUE_WALKS) {
		store_qbuf_free(&b);
		for (k = 0; k < np || (np == 0 && k == 0); k++) {
			sqlite3_bind_int64(s, 1, now);
			if (np <= 1)
				sqlite3_bind_null(s, 2);
			else
				sqlite3_bind_int(s, 2, prio[k]);
			if ((rc = store_queue_rows(st, s, now, cb, arg, &n,
			    cause)) != 0)
				return rc;
		}
		return n;
	}
	s = st->stmt[STMT_JOB_RUNNABLE_ONE];
	for (i = 0; i < b.n; i++) {
		sqlite3_bind_int64(s, 1, b.rows[i].id);
		if ((rc = store_queue_rows(st, s, now, cb, arg, &n,
		    cause)) != 0) {
			store_qbuf_free(&b);
			return rc;
		}
	}
	store_qbuf_free(&b);
	return n;
}
