/*
 * logs.h: the jobs' output from Cloud Logging, read for the clients that
 * follow it (doc/DESIGN.md "Logs").
 *
 * Every job a client asks about joins one follow set; ONE combined
 * entries.list query (plus pages) per [gcp] logs_interval reads the new
 * lines of every job in it, however many jobs and clients there are,
 * because Cloud Logging allows about 60 reads a minute for the whole
 * project (DESIGN GJ.4). A 429 doubles the wait, up to five minutes.
 * Lines are kept per job, in the API's timestamp order, de-duplicated
 * by (timestamp, insertId), and handed out by cursor.
 *
 * Knows the cloud (gcp facade, install id, providers) and nothing of
 * the socket or the op table: daemon/api-logs.c answers the op.
 */
#ifndef GPUQ_LOGS_H
#define GPUQ_LOGS_H

#include <stdint.h>

#include <uv.h>

struct cloud;
struct jsonw;
struct logs;

/* One attempt of a followed job, as the store has it; borrowed. */
struct logs_attempt {
	int		 number;		/* 1, 2, ... */
	const char	*provider;		/* "gce", "batch", "vertex" */
	const char	*cloud_id;		/* NULL until named */
};

/* What a client asks for; zero fields mean "everything". */
struct logs_query {
	int64_t		 cursor;		/* lines already read */
	int		 attempt;		/* only this attempt */
	int		 node;			/* only this node; -1: all */
	int64_t		 since;			/* unix seconds */
	int64_t		 tail;			/* the last TAIL lines */
};

/* Counters since logs_new(), for tests and gpuqd(8). */
struct logs_stats {
	unsigned long	 rounds;		/* combined queries begun */
	unsigned long	 calls;			/* entries.list calls */
	unsigned long	 rate_limited;		/* 429 answers */
	unsigned long	 entries;		/* entries received */
	unsigned long	 duplicates;		/* of them already held */
};

/* New follower on LOOP reading through CLOUD (borrowed, outlives it). */
struct logs	*logs_new(uv_loop_t *loop, struct cloud *cloud);
/*
 * Stop reading and free once the timer is closed. Call after
 * cloud_free(), whose cancellations reach the round in flight. NULL ok.
 */
void		 logs_close(struct logs *);
/*
 * A client asks for job ID (CREATED: its submit time; ENDED: the job
 * ended and no attempt is live): keep it in the follow set with its
 * attempts ATT[0..N), and start a round soon if it is new.
 */
void		 logs_follow(struct logs *, int64_t id, int64_t created,
		    int ended, const struct logs_attempt *att, size_t n);
/*
 * Write the members "lines", "cursor", "more", "caught_up", "end",
 * "nodes" (and "dropped" when lines before the cursor were let go) of
 * job ID's reply into W, as the logs op in gpuqd(8) describes. The job
 * must have been followed first.
 */
void		 logs_read(struct logs *, int64_t id,
		    const struct logs_query *q, struct jsonw *w);
void		 logs_get_stats(struct logs *, struct logs_stats *ret);

#endif
