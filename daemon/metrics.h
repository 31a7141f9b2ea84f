/*
 * metrics.h: gpuqd's numbers in the Prometheus text exposition format
 * (version 0.0.4), for `gpuq metrics` and [daemon] metrics_file
 * (doc/DESIGN.md "Metrics"; the list is in gpuqd(8)).
 *
 * Counters of events (launches, interruptions, failures, ends) come
 * from the store's watchers (metrics_on_move); everything else is read
 * when the text is made, from the rooms that own it: the store (jobs by
 * state, dollars, commit times), the attempts (GPUs running), the HTTP
 * client (calls, errors, retries by API), the quotas, the scheduler.
 */
#ifndef GPUQ_METRICS_H
#define GPUQ_METRICS_H

#include <stddef.h>

struct attempts;
struct cloud;
struct conf;
struct metrics;
struct notify;
struct sched;
struct store;
struct store_move;
struct uv_loop_s;

/* New metrics on LOOP over STORE and CONF (borrowed; they outlive it).
 * The metrics_file timer starts now and follows CONF on reload. */
struct metrics	*metrics_new(struct uv_loop_s *loop, struct store *store,
		    const struct conf *conf);
/* The store watcher (store_watch's callback); ARG is the metrics. */
void		 metrics_on_move(const struct store_move *m, void *arg);
/* The cloud side to read (all borrowed; NULL while none runs). */
void		 metrics_set_cloud(struct metrics *, struct cloud *,
		    struct sched *, struct attempts *);
/* The notifier to count (borrowed; NULL: none). */
void		 metrics_set_notify(struct metrics *, struct notify *);
/* The exposition text now. New string. */
char		*metrics_text(struct metrics *);
/* Write [daemon] metrics_file now (tmp + rename). 0 or -errno. */
int		 metrics_write_file(struct metrics *, char **cause);
/* Stop the timer (closed by the loop); the memory stays until
 * metrics_free(), after uv_run, as the store may still call back. */
void		 metrics_close(struct metrics *);
void		 metrics_free(struct metrics *);

/*
 * The writer (pure, for tests): a growing text buffer, a family's
 * "# HELP" and "# TYPE" lines, and samples with escaped label values.
 */
struct metrics_buf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};
void	 metrics_family(struct metrics_buf *, const char *name,
	    const char *type, const char *help);
/* NAME{LABELS} VALUE; LABELS are name, value pairs, NLABELS of them. */
void	 metrics_sample(struct metrics_buf *, const char *name,
	    const char *const *labels, int nlabels, double value);

#endif
