/*
 * notify.h: telling people when a job ends or is interrupted
 * (gpuqd.conf(5) [notify]; doc/DESIGN.md "Notifications").
 *
 * gpuqd.c registers notify_on_move() as a watcher of the store, which
 * calls it after every committed job move, whoever made it (attempt.c's
 * outcomes, api.c's cancels). An event goes as a JSON POST to [notify]
 * webhook and to the job's own notify.webhook, through an HTTP client of
 * notify's own on the loop, and to [notify] command, spawned without a
 * shell. Nothing here blocks or can fail a job: a delivery that fails
 * is retried, then logged and dropped.
 */
#ifndef GPUQ_NOTIFY_H
#define GPUQ_NOTIFY_H

#include <stdint.h>

#include <jansson.h>

struct conf;
struct notify;
struct store;
struct store_job;
struct store_move;
struct uv_loop_s;

/* Counters since notify_new(), for metrics and tests. */
struct notify_stats {
	unsigned long	 events;	/* events that matched an on list */
	unsigned long	 posts;		/* webhook deliveries started */
	unsigned long	 posts_ok;	/* answered 2xx */
	unsigned long	 posts_failed;	/* given up after the retries */
	unsigned long	 dropped;	/* too many in flight: not sent */
	unsigned long	 commands;	/* commands started */
	unsigned long	 commands_failed; /* exit != 0, killed, no spawn */
};

/*
 * New notifier on LOOP over STORE and CONF (borrowed; they outlive it;
 * CONF is read at each event, so a reload applies). 0, or -errno and
 * *cause (new) when [notify] command cannot run (not executable).
 */
int		 notify_new(struct uv_loop_s *loop, struct store *store,
		    const struct conf *conf, struct notify **ret,
		    char **cause);
/* The store watcher (store_watch's callback); ARG is the notify. */
void		 notify_on_move(const struct store_move *m, void *arg);
/* Stop: deliveries in flight are cancelled, commands left to run out,
 * later events ignored. The memory stays until notify_free(). */
void		 notify_close(struct notify *);
/* Free after the loop has run its closes. NULL is fine. */
void		 notify_free(struct notify *);
void		 notify_get_stats(struct notify *, struct notify_stats *ret);

/*
 * The event a move is, or NULL: "failed", "succeeded", "cancelled" (the
 * job's end), "interrupted" (a requeue after an interruption).
 */
const char	*notify_event_name(const struct store_move *m);
/*
 * The event EVENT of job J after move M, at NOW, from install INSTALL,
 * as the generic JSON body. New reference.
 */
json_t		*notify_event_json(const char *event,
		    const struct store_job *j, const struct store_move *m,
		    const char *install, int64_t now);
/* The body of EV in FORMAT ("json" or "slack"). New string. */
char		*notify_body(const json_t *ev, const char *format);
/*
 * EV as NAME=VALUE strings for the command's environment, GPUQ_* and a
 * PATH, NULL-terminated, into ENV (NOTIFY_ENV_MAX slots); each new.
 * Returns how many.
 */
#define NOTIFY_ENV_MAX	16
int		 notify_env(const json_t *ev, char **env);

#endif
