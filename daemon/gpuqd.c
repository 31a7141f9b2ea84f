/*
 * gpuqd.c: main of the gpuq daemon. It only wires (systemd's homed.c):
 * options -> gpuqd.conf -> log -> lock the state directory -> open the
 * store -> api and server -> listen (sockets from systemd first) -> the
 * cloud side when [gcp] project is set (cloud.c, attempt.c, reconcile.c,
 * sched.c) -> READY=1 and STATUS= -> uv_run. Signals: SIGTERM/SIGINT
 * stop cleanly (the pending group commit is committed and answered,
 * every handle closed, uv_loop_close() returns 0), SIGHUP reloads
 * gpuqd.conf.
 *
 * gpuqd never forks: systemd (Type=notify) or a terminal runs it.
 * Must not know how requests are answered or how the store works.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api.h"
#include "daemon/cloud.h"
#include "daemon/doctor.h"
#include "daemon/logs.h"
#include "daemon/conf.h"
#include "daemon/attempt.h"
#include "daemon/metrics.h"
#include "daemon/notify.h"
#include "daemon/reconcile.h"
#include "daemon/sched.h"
#include "daemon/server.h"
#include "daemon/spec.h"
#include "store/store.h"

#ifndef GPUQ_SYSCONFDIR
#define GPUQ_SYSCONFDIR		"/etc"
#endif
#define GPUQD_CONF_DEFAULT	GPUQ_SYSCONFDIR "/gpuq/gpuqd.conf"
#define GPUQD_NR_OPEN		1048576	/* Linux's cap for an infinite hard */
/*
 * Descriptors kept out of max_connections: the store (database, WAL,
 * shared memory, lock), the listening sockets, the loop's own, and up
 * to HTTP_MAX_CONNECTIONS (256) connections to Google. At most half of
 * the limit, so a small limit still leaves room for clients.
 */
#define GPUQD_FD_RESERVE	320
#define GPUQD_STATUS_MS		1000	/* STATUS= at most this often */
#define GPUQD_ACT_AS_RETRY_MS	60000	/* a refused actAs, tested again */

struct gpuqd {
	uv_loop_t	 loop;
	struct conf	 conf;
	const char	*config;	/* gpuqd.conf path */
	int		 config_given;	/* --config: the file must exist */
	const char	*opt_state_dir;	/* command-line overrides or NULL */
	const char	*opt_socket;
	const char	*opt_log_level;
	int		 lock_fd;
	char		*lock_path;	/* <state_dir>/gpuqd.lock */
	struct store	*store;
	struct api	*api;
	struct server	*server;
	struct cloud	*cloud;		/* NULL without [gcp] project */
	struct sched	*sched;
	struct reconcile *rec;
	struct attempts	*att;
	struct notify	*notifier;	/* [notify] */
	struct metrics	*metrics;
	struct logs	*logs;		/* gpuq logs' reader */
	uv_signal_t	 sigterm;
	uv_signal_t	 sigint;
	uv_signal_t	 sighup;
	uv_timer_t	 watchdog;	/* WATCHDOG=1 at half the period */
	uv_timer_t	 status;	/* throttles STATUS= */
	uv_timer_t	 act_as;	/* re-tests a refused actAs */
	int		 notify;	/* NOTIFY_SOCKET is set */
	int		 stopping;
	rlim_t		 nofile;	/* soft RLIMIT_NOFILE, raised */
};

static void	gpuqd_fit_limits(struct gpuqd *, struct conf *);

static void
usage(FILE *f)
{
	fprintf(f,
"usage: gpuqd [options]\n"
"\n"
"The gpuq daemon: a durable queue of GPU training jobs, run on Google\n"
"Cloud at the lowest cost. It does not fork; run it from systemd\n"
"(gpuqd.service) or a terminal. Options override gpuqd.conf(5).\n"
"\n"
"  -c, --config FILE      configuration file\n"
"                         (default " GPUQD_CONF_DEFAULT ")\n"
"  -d, --state-dir DIR    directory of the queue database and lock\n"
"                         ([daemon] state_dir, default /var/lib/gpuq)\n"
"  -s, --socket PATH      control socket ([daemon] socket,\n"
"                         default " GPUQ_SOCKET_DEFAULT ")\n"
"  -f, --foreground       accepted for compatibility; gpuqd never forks\n"
"  -l, --log-level LEVEL  error, warning, info or debug\n"
"                         ([daemon] log_level, default info)\n"
"      --check            check the queue database with SQLite's full\n"
"                         integrity_check, print what it finds and exit:\n"
"                         0 sound, 1 damaged or not checkable\n"
"  -V, --version          print the version and exit\n"
"  -h, --help             print this help and exit\n"
"\n"
"Signals: SIGTERM or SIGINT stop, SIGHUP reloads the configuration\n"
"(keys gpuqd.conf(5) marks restart, such as every [gcp] key, need a\n"
"restart; the log names them).\n"
"See gpuqd(8) and gpuqd.conf(5).\n");
}

/*
 * Exit on a start-up error whose words are in CAUSE (new string): it
 * is freed first, so leak checkers see a clean exit.
 */
static void __attribute__((noreturn))
gpuqd_die(char *cause, const char *what)
{
	char	buf[2048];

	(void)snprintf(buf, sizeof buf, "%s%s%s", what ? what : "",
	    what ? ": " : "", cause ? cause : "unknown error");
	free(cause);
	fatalx("%s", buf);
}

/* Apply the command-line overrides to C. */
static void
gpuqd_overrides(struct gpuqd *g, struct conf *c)
{
	char	*cause = NULL;

	if ((g->opt_state_dir != NULL && conf_set(c, "daemon", "state_dir",
	    g->opt_state_dir, &cause) != 0) ||
	    (g->opt_socket != NULL && conf_set(c, "daemon", "socket",
	    g->opt_socket, &cause) != 0) ||
	    (g->opt_log_level != NULL && conf_set(c, "daemon", "log_level",
	    g->opt_log_level, &cause) != 0))
		gpuqd_die(cause, NULL);
}

/*
 * The region catalog (spec.h) from the bundled price table, and [gcp]
 * regions held to it: a typo there would leave every job waiting. A
 * missing table only means regions are not checked by name.
 */
static void
gpuqd_regions(struct gpuqd *g)
{
	const char	*path = cloud_price_table_path();
	char		*cause = NULL, *why;
	size_t		 i;

	if (spec_catalog_load(path, &cause) != 0) {
		log_warnx("%s; region names are not checked", cause);
		free(cause);
		return;
	}
	for (i = 0; i < g->conf.regions.n; i++) {
		if ((why = spec_region_check(g->conf.regions.v[i])) == NULL)
			continue;
		cause = xprintf("[gcp] regions: %s", why);
		free(why);
		gpuqd_die(cause, g->config);
	}
}

/* "3 queued, 1 running": the live part of the queue, for STATUS=. */
static char *
gpuqd_status_text(struct gpuqd *g)
{
	static const int	 shown[] = { JOB_QUEUED, JOB_HELD,
	    JOB_LAUNCHING, JOB_PENDING, JOB_RUNNING, JOB_CANCELLING };
	int64_t			 counts[JOB_NSTATES];
	char			*cause = NULL, *s, *t;
	size_t			 i;

	if (store_job_counts(g->store, counts, &cause) != 0) {
		log_warnx("status: %s", cause);
		free(cause);
		return xstrdup("queue unreadable");
	}
	s = NULL;
	for (i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		if (counts[shown[i]] == 0)
			continue;
		t = xprintf("%s%s%lld %s", s ? s : "", s ? ", " : "",
		    (long long)counts[shown[i]], job_state_name(shown[i]));
		free(s);
		s = t;
	}
	t = xprintf("%s; %d client(s)", s ? s : "no live jobs",
	    g->server ? server_client_count(g->server) : 0);
	free(s);
	return t;
}

static void
gpuqd_on_status(uv_timer_t *t)
{
	struct gpuqd	*g = t->data;
	char		*s;

	s = gpuqd_status_text(g);
	(void)sd_notifyf(0, "STATUS=%s", s);
	free(s);
}

/* The queue changed: send STATUS= within a second, at most once,
 * and let the scheduler look. */
static void
gpuqd_on_changed(void *arg)
{
	struct gpuqd	*g = arg;

	if (g->sched != NULL && !g->stopping)
		sched_wake(g->sched);

	if (g->notify && !g->stopping && !uv_is_active((uv_handle_t *)
	    &g->status))
		(void)uv_timer_start(&g->status, gpuqd_on_status,
		    GPUQD_STATUS_MS, 0);
}

/* Job ID went to cancelling: attempt.c stops its resource. */
static void
gpuqd_on_cancel(void *arg, int64_t id)
{
	struct gpuqd	*g = arg;

	if (g->att != NULL && !g->stopping)
		attempt_cancel(g->att, id);
}

/* The metrics op's text. */
static char *
gpuqd_metrics_text(void *arg)
{
	struct gpuqd	*g = arg;

	return metrics_text(g->metrics);
}

/*
 * Every committed job move, told by the store: one line for the job's
 * story, with GPUQ_JOB=, GPUQ_ATTEMPT= and GPUQ_STATE= under journald
 * (doc/DESIGN.md "Logging").
 */
static void
gpuqd_on_move(const struct store_move *m, void *arg)
{
	struct gpuqd		*g = arg;
	struct store_job	*j = NULL;
	int			 attempt = 0;

	if (log_verbosity < LOG_LEVEL_INFO)
		return;
	if (store_job_get(g->store, m->job_id, &j, NULL) == 0)
		attempt = j->attempts;
	log_job(m->job_id, attempt, job_state_name(m->to),
	    "job %lld: %s -> %s%s%s%s%s", (long long)m->job_id,
	    job_state_name(m->from), job_state_name(m->to),
	    m->end >= 0 ? " after " : "",
	    m->end >= 0 ? attempt_end_name(m->end) : "",
	    m->message != NULL ? ": " : "",
	    m->message != NULL ? m->message : "");
	store_job_free(j);
}

/* The reconciler's first look is done: the scheduler may launch. */
static void
gpuqd_on_reconciled(void *arg)
{
	struct gpuqd	*g = arg;

	if (g->sched != NULL)
		sched_ready(g->sched);
}

static void	gpuqd_act_as_test(struct gpuqd *);
static void	gpuqd_on_act_as_timer(uv_timer_t *);

/*
 * The answer to "may gpuqd act as [gcp] job_service_account?": when
 * not, nothing launches (each create would be refused) and every
 * waiting job's WHY says why and how to fix it; the test is repeated
 * every GPUQD_ACT_AS_RETRY_MS, since the grant needs no restart.
 */
static void
gpuqd_on_act_as(const char *why, void *arg)
{
	struct gpuqd	*g = arg;

	if (g->stopping || g->sched == NULL)
		return;
	sched_block(g->sched, why);
	if (why == NULL)
		return;
	log_warnx("cloud: %s; no job launches until then", why);
	(void)uv_timer_start(&g->act_as, gpuqd_on_act_as_timer,
	    GPUQD_ACT_AS_RETRY_MS, 0);
}

static void
gpuqd_on_act_as_timer(uv_timer_t *t)
{
	gpuqd_act_as_test(t->data);
}

static void
gpuqd_act_as_test(struct gpuqd *g)
{
	if (g->cloud != NULL && !g->stopping)
		doctor_act_as(g->cloud, gpuqd_on_act_as, g);
}

/*
 * The cloud side, when [gcp] project is set: the gcp facade and the
 * providers (cloud.c), the reconciler, which first adopts what a
 * previous run left in the cloud, and the scheduler, which launches
 * only once that first look is done. Without a project, jobs queue and
 * say so.
 */
static void
gpuqd_cloud_start(struct gpuqd *g)
{
	char	*cause = NULL;

	if (g->conf.project == NULL || *g->conf.project == '\0') {
		log_info("cloud: no [gcp] project in %s; jobs will queue "
		    "until one is set and gpuqd restarted", g->config);
		return;
	}
	if (cloud_new(&g->loop, g->store, &g->conf, &g->cloud, &cause) != 0)
		gpuqd_die(cause, "cannot reach Google Cloud");
	g->att = attempt_new(g->cloud);
	g->sched = sched_new(g->cloud);
	sched_set_attempts(g->sched, g->att);
	g->rec = reconcile_new(g->cloud, g->att, gpuqd_on_reconciled, g);
	cloud_start(g->cloud);
	if (reconcile_start(g->rec, &cause) != 0)
		gpuqd_die(cause, "cannot read the live attempts");
	sched_start(g->sched);
	api_set_cloud(g->api, g->cloud, g->sched);
	metrics_set_cloud(g->metrics, g->cloud, g->sched, g->att);
	gpuqd_act_as_test(g);
	g->logs = logs_new(&g->loop, g->cloud);
	api_set_logs(g->api, g->logs);
	log_info("cloud: project %s, %zu provider(s)", g->conf.project,
	    cloud_nproviders(g->cloud));
}

/* Stop the cloud side: no new launches or polls, then every request in
 * flight ends (cancelled) and the handles close with the loop. */
static void
gpuqd_cloud_stop(struct gpuqd *g)
{
	api_set_cloud(g->api, NULL, NULL);
	metrics_set_cloud(g->metrics, NULL, NULL, NULL);
	api_set_logs(g->api, NULL);
	sched_close(g->sched);
	reconcile_close(g->rec);
	attempt_close(g->att);
	cloud_free(g->cloud);
	logs_close(g->logs);		/* after the cancellations */
	g->logs = NULL;
	g->sched = NULL;
	g->rec = NULL;
	g->att = NULL;
	g->cloud = NULL;
}

static void
gpuqd_on_watchdog(uv_timer_t *t)
{
	(void)sd_notify(0, "WATCHDOG=1");
}

static void
gpuqd_reload(struct gpuqd *g)
{
	struct conf	 next;
	char		*cause = NULL;
	int		 n;

	log_info("reload: reading %s", g->config);
	if (conf_load(&next, g->config, g->config_given, &cause) != 0) {
		log_warnx("reload: %s; keeping the running configuration",
		    cause);
		free(cause);
		return;
	}
	if (conf_reload_check(&g->conf, &next, g->config, &cause) != 0 ||
	    cloud_conf_check(&next, &cause) != 0) {
		log_warnx("reload: refused: %s; keeping the running "
		    "configuration", cause);
		free(cause);
		conf_done(&next);
		return;
	}
	gpuqd_overrides(g, &next);
	gpuqd_fit_limits(g, &next);
	n = conf_apply(&g->conf, &next);
	log_verbosity = g->conf.log_level;
	server_conf_changed(g->server);
	api_conf_changed(g->api);
	log_info("reload: done, %d key(s) changed", n);
	gpuqd_on_changed(g);
	/* A grant of actAs made meanwhile counts at once. */
	if (!uv_is_active((uv_handle_t *)&g->act_as))
		return;
	uv_timer_stop(&g->act_as);
	gpuqd_act_as_test(g);
}

static void
gpuqd_on_server_closed(void *arg)
{
	struct gpuqd	*g = arg;

	server_free(g->server);
	g->server = NULL;
}

/*
 * Stop: tell systemd, stop taking requests, commit and answer the
 * waiting batch, then close every client and handle; uv_run returns
 * when the last one is closed.
 */
static void
gpuqd_stop(struct gpuqd *g, const char *why)
{
	if (g->stopping)
		return;
	g->stopping = 1;
	log_info("stopping on %s", why);
	(void)sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	server_stop(g->server);
	gpuqd_cloud_stop(g);		/* cloud answers owed go out */
	notify_close(g->notifier);
	metrics_close(g->metrics);
	api_close(g->api);		/* commits and queues the replies */
	g->api = NULL;
	server_close(g->server, gpuqd_on_server_closed, g);
	uv_close((uv_handle_t *)&g->sigterm, NULL);
	uv_close((uv_handle_t *)&g->sigint, NULL);
	uv_close((uv_handle_t *)&g->sighup, NULL);
	uv_close((uv_handle_t *)&g->watchdog, NULL);
	uv_close((uv_handle_t *)&g->status, NULL);
	uv_close((uv_handle_t *)&g->act_as, NULL);
}

static void
gpuqd_on_signal(uv_signal_t *h, int signum)
{
	struct gpuqd	*g = h->data;

	if (signum == SIGHUP)
		gpuqd_reload(g);
	else
		gpuqd_stop(g, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/*
 * Refuse PATH (WHAT: "state directory", "queue database") if its group
 * or others may write it, as sshd's StrictModes does: whoever can write
 * there can replace the queue. Only the directory itself and gpuq.db
 * are checked, not the directories above. A missing PATH is fine.
 */
static void
gpuqd_strict_mode(const char *path, const char *what)
{
	struct stat	st;
	mode_t		mode;

	if (stat(path, &st) == -1) {
		if (errno == ENOENT)
			return;
		fatal("cannot stat %s %s", what, path);
	}
	mode = st.st_mode & 07777;
	if ((mode & (S_IWGRP | S_IWOTH)) == 0)
		return;
	fatalx("%s %s is writable by %s (mode %04o): anyone there could "
	    "change or replace the queue; run chmod %04o %s and start again",
	    what, path, (mode & S_IWOTH) ? ((mode & S_IWGRP) ?
	    "its group and everyone" : "everyone") : "its group",
	    (unsigned)mode, (unsigned)(mode & ~(mode_t)(S_IWGRP | S_IWOTH)),
	    path);
}

/*
 * Lock DIR/gpuqd.lock for the life of the process: one gpuqd per state
 * directory. The lock file holds our pid, for the next one's message.
 */
static void
gpuqd_lock(struct gpuqd *g)
{
	const char	*dir = g->conf.state_dir;
	char		*path, buf[32];
	ssize_t		 n;

	if (mkdir(dir, 0750) == -1 && errno != EEXIST)
		fatal("cannot create state directory %s", dir);
	gpuqd_strict_mode(dir, "state directory");
	path = xprintf("%s/gpuq.db", dir);
	gpuqd_strict_mode(path, "queue database");
	free(path);
	path = g->lock_path = xprintf("%s/gpuqd.lock", dir);
	g->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (g->lock_fd == -1)
		fatal("cannot open %s", path);
	if (flock(g->lock_fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK)
			fatal("cannot lock %s", path);
		n = pread(g->lock_fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		fatalx("another gpuqd%s%s%s is running with state directory "
		    "%s; stop it first, or give this one its own "
		    "--state-dir", *buf ? " (pid " : "", buf, *buf ? ")" : "",
		    dir);
	}
	n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(g->lock_fd, 0) == -1 ||
	    pwrite(g->lock_fd, buf, (size_t)n, 0) != n)
		log_warn("cannot write pid to %s", path);
}

/*
 * Many clients need many fds: raise the soft open-file limit to the
 * hard one, saying so. The limit in force ends up in g->nofile.
 */
static void
gpuqd_nofile(struct gpuqd *g)
{
	struct rlimit	rl;
	rlim_t		was, want;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("getrlimit(RLIMIT_NOFILE)");
		g->nofile = 1024;
		return;
	}
	was = rl.rlim_cur;
	want = rl.rlim_max == RLIM_INFINITY ? GPUQD_NR_OPEN : rl.rlim_max;
	g->nofile = was;
	if (want <= was)
		return;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("cannot raise the open-file limit from %llu to %llu",
		    (unsigned long long)was, (unsigned long long)want);
		return;
	}
	g->nofile = want;
	log_info("open files: soft limit raised from %llu to %llu (the hard "
	    "limit)", (unsigned long long)was, (unsigned long long)want);
}

/*
 * Clamp C's connection limits to what the open-file limit can hold,
 * with a warning naming the numbers: a max_connections beyond it would
 * be accepted and then fail clients at random as descriptors run out.
 */
static void
gpuqd_fit_limits(struct gpuqd *g, struct conf *c)
{
	rlim_t	reserve = GPUQD_FD_RESERVE, room;

	if (reserve > g->nofile / 2)
		reserve = g->nofile / 2;
	room = g->nofile > reserve ? g->nofile - reserve : 1;
	if (room < 1)
		room = 1;
	if ((rlim_t)c->max_connections > room) {
		log_warnx("[daemon] max_connections = %d does not fit the "
		    "open-file limit %llu (less %llu kept for the store and "
		    "the cloud); using %llu: raise LimitNOFILE= (or ulimit -n) "
		    "or lower max_connections", c->max_connections,
		    (unsigned long long)g->nofile,
		    (unsigned long long)reserve, (unsigned long long)room);
		c->max_connections = (int)room;
	}
	if (c->max_connections_per_uid > c->max_connections) {
		log_warnx("[daemon] max_connections_per_uid = %d is above "
		    "max_connections; using %d", c->max_connections_per_uid,
		    c->max_connections);
		c->max_connections_per_uid = c->max_connections;
	}
}

/*
 * gpuqd --check: SQLite's full integrity_check of the queue, its
 * findings on stdout. The exit status: 0 sound, 1 damaged or not
 * checkable.
 */
static int
gpuqd_check(const char *dbpath)
{
	char	*report = NULL, *cause = NULL;
	int	 rc;

	rc = store_verify(dbpath, 1, 0, &report, &cause);
	if (rc == 0) {
		printf("%s: ok (PRAGMA integrity_check)\n", dbpath);
		return 0;
	}
	if (rc == -EBADMSG) {
		printf("%s: damaged; PRAGMA integrity_check found:\n%s\n",
		    dbpath, report);
		free(report);
		return 1;
	}
	fprintf(stderr, "gpuqd: cannot check %s: %s\n", dbpath,
	    cause != NULL ? cause : strerror(-rc));
	free(cause);
	return 1;
}

/*
 * Refuse to start on a damaged queue: SQLite's quick_check (the
 * integrity_check without its index cross-checks) before the store is
 * opened, so nothing is migrated or written on top of the damage. A
 * queue not yet made is fine.
 */
static void
gpuqd_quick_check(const char *dbpath)
{
	char		*report = NULL, *cause = NULL, *line, *last;
	uint64_t	 t0 = uv_hrtime();
	int		 rc;

	rc = store_verify(dbpath, 0, 10, &report, &cause);
	if (rc == -ENOENT) {
		free(cause);
		return;
	}
	if (rc == -EBADMSG) {
		log_warnx("the queue %s is damaged; SQLite's quick_check "
		    "found:", dbpath);
		for (line = strtok_r(report, "\n", &last); line != NULL;
		    line = strtok_r(NULL, "\n", &last))
			log_warnx("  %s", line);
		free(report);
		fatalx("refusing to start on a damaged queue %s: stop here, "
		    "copy the state directory aside, run 'gpuqd --check' for "
		    "the full report, then put back gpuq.db from a backup, or "
		    "save what SQLite can read ('sqlite3 gpuq.db .recover | "
		    "sqlite3 gpuq-recovered.db') and start on that", dbpath);
	}
	if (rc != 0)
		gpuqd_die(cause, "cannot check the queue");
	log_info("store: quick_check of %s: ok in %.1f ms", dbpath,
	    (double)(uv_hrtime() - t0) / 1e6);
}

/*
 * Listen: sockets passed by systemd (gpuqd.socket) first; else create
 * [daemon] socket ourselves.
 */
static void
gpuqd_listen(struct gpuqd *g)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			*cause = NULL;
	int			 n, i, fd;

	n = sd_listen_fds(1);
	if (n < 0)
		fatalx("sockets from systemd: %s", strerror(-n));
	for (i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			fatalx("socket %d from systemd is not a listening "
			    "Unix stream socket; check ListenStream= in "
			    "gpuqd.socket", fd);
		if (server_listen(g->server, fd, NULL, &cause) != 0)
			gpuqd_die(cause, NULL);
		len = sizeof sun;
		memset(&sun, 0, sizeof sun);
		if (getsockname(fd, (struct sockaddr *)&sun, &len) == 0 &&
		    sun.sun_path[0] != '\0')
			log_info("socket: listening on %s (from systemd)",
			    sun.sun_path);
		else
			log_info("socket: listening on fd %d (from systemd)",
			    fd);
	}
	if (n > 0)
		return;
	if (server_socket_open(g->conf.socket, g->conf.socket_group, &fd,
	    &cause) != 0 ||
	    server_listen(g->server, fd, g->conf.socket, &cause) != 0)
		gpuqd_die(cause, NULL);
	log_info("socket: listening on %s", g->conf.socket);
}

/* Walk callback: name what keeps the loop from closing. */
static void
gpuqd_on_walk(uv_handle_t *h, void *arg)
{
	log_warnx("shutdown: handle %s still open",
	    uv_handle_type_name(uv_handle_get_type(h)));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config",	required_argument,	NULL, 'c' },
		{ "state-dir",	required_argument,	NULL, 'd' },
		{ "socket",	required_argument,	NULL, 's' },
		{ "foreground",	no_argument,		NULL, 'f' },
		{ "log-level",	required_argument,	NULL, 'l' },
		{ "check",	no_argument,		NULL, 'C' },
		{ "version",	no_argument,		NULL, 'V' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	struct gpuqd	 g;
	struct api_hooks hooks;
	uint64_t	 usec;
	char		*cause = NULL, *status, *dbpath;
	int		 ch, level, rc, check = 0;

	memset(&g, 0, sizeof g);
	g.config = GPUQD_CONF_DEFAULT;
	g.lock_fd = -1;
	while ((ch = getopt_long(argc, argv, "c:d:s:fl:Vh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			g.config = optarg;
			g.config_given = 1;
			break;
		case 'd':
			g.opt_state_dir = optarg;
			break;
		case 's':
			g.opt_socket = optarg;
			break;
		case 'f':
			break;
		case 'C':
			check = 1;
			break;
		case 'l':
			if (log_level_parse(optarg) < 0) {
				fprintf(stderr, "gpuqd: unknown log level "
				    "\"%s\"; use error, warning, info or "
				    "debug\n", optarg);
				return 2;
			}
			g.opt_log_level = optarg;
			break;
		case 'V':
			printf("gpuqd %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuqd: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}

	level = g.opt_log_level ? log_level_parse(g.opt_log_level) :
	    LOG_LEVEL_INFO;
	log_init("gpuqd", level, 0);
	(void)signal(SIGPIPE, SIG_IGN);
	/*
	 * Past a file-size limit (ulimit -f, LimitFSIZE=) a write fails
	 * with EFBIG instead of killing us: the store treats it as a full
	 * disk, refusing what it cannot write and serving on.
	 */
	(void)signal(SIGXFSZ, SIG_IGN);
	/* Never looser than 0027, and tighter if systemd says so. */
	(void)umask(umask(0) | 0027);
	g.notify = getenv("NOTIFY_SOCKET") != NULL;

	if (conf_load(&g.conf, g.config, g.config_given, &cause) != 0)
		gpuqd_die(cause, NULL);
	gpuqd_overrides(&g, &g.conf);
	log_verbosity = g.conf.log_level;
	log_set_journal_sink(sd_journal_sendv);
	if (cloud_conf_check(&g.conf, &cause) != 0)
		gpuqd_die(cause, g.config);
	if (check) {
		dbpath = xprintf("%s/gpuq.db", g.conf.state_dir);
		rc = gpuqd_check(dbpath);
		free(dbpath);
		conf_done(&g.conf);
		return rc;
	}
	gpuqd_nofile(&g);
	gpuqd_fit_limits(&g, &g.conf);
	log_info("gpuqd %s starting, configuration %s%s", PACKAGE_VERSION,
	    g.config, access(g.config, F_OK) == 0 ? "" :
	    " (absent: defaults)");
	conf_log(&g.conf);
	gpuqd_regions(&g);
	/* Tests only: the fake cloud's clock (doc/DESIGN.md "Simulated
	 * time"); set before anything reads the time. */
	clock_configure(g.conf.clock_scale, g.conf.clock_origin);
	if (clock_scale() != 1.0)
		log_warnx("simulated clock: %g x real time from %.3f, for "
		    "tests only", clock_scale(), g.conf.clock_origin);

	dbpath = xprintf("%s/gpuq.db", g.conf.state_dir);
	gpuqd_lock(&g);
	gpuqd_quick_check(dbpath);
	rc = store_open(dbpath, &g.store, &cause);
	if (rc != 0) {
		char	what[1024];

		(void)snprintf(what, sizeof what, "cannot open the queue %s",
		    dbpath);
		free(dbpath);
		gpuqd_die(cause, what);
	}
	free(dbpath);

	if ((rc = uv_loop_init(&g.loop)) != 0)
		fatalx("uv_loop_init: %s", uv_strerror(rc));
	g.metrics = metrics_new(&g.loop, g.store, &g.conf);
	if (notify_new(&g.loop, g.store, &g.conf, &g.notifier, &cause) != 0)
		gpuqd_die(cause, NULL);
	metrics_set_notify(g.metrics, g.notifier);
	/* The store tells each of these every job move, in this order. */
	(void)store_watch(g.store, metrics_on_move, g.metrics);
	(void)store_watch(g.store, gpuqd_on_move, &g);
	(void)store_watch(g.store, notify_on_move, g.notifier);
	g.api = api_new(&g.loop, g.store, &g.conf);
	memset(&hooks, 0, sizeof hooks);
	hooks.changed = gpuqd_on_changed;
	hooks.cancel = gpuqd_on_cancel;
	hooks.metrics = gpuqd_metrics_text;
	hooks.arg = &g;
	api_set_hooks(g.api, &hooks);
	g.server = server_new(&g.loop, &g.conf, api_request, g.api);
	gpuqd_listen(&g);
	gpuqd_cloud_start(&g);

	(void)uv_signal_init(&g.loop, &g.sigterm);
	(void)uv_signal_init(&g.loop, &g.sigint);
	(void)uv_signal_init(&g.loop, &g.sighup);
	g.sigterm.data = g.sigint.data = g.sighup.data = &g;
	(void)uv_signal_start(&g.sigterm, gpuqd_on_signal, SIGTERM);
	(void)uv_signal_start(&g.sigint, gpuqd_on_signal, SIGINT);
	(void)uv_signal_start(&g.sighup, gpuqd_on_signal, SIGHUP);
	(void)uv_timer_init(&g.loop, &g.watchdog);
	(void)uv_timer_init(&g.loop, &g.status);
	(void)uv_timer_init(&g.loop, &g.act_as);
	g.act_as.data = &g;
	g.watchdog.data = g.status.data = &g;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec >= 2000) {
		(void)uv_timer_start(&g.watchdog, gpuqd_on_watchdog,
		    usec / 2000, usec / 2000);
		log_info("watchdog: every %llums",
		    (unsigned long long)(usec / 2000));
	}

	status = gpuqd_status_text(&g);
	log_info("ready: install %s, %s", store_install_id(g.store), status);
	(void)sd_notifyf(0, "READY=1\nSTATUS=%s", status);
	free(status);

	(void)uv_run(&g.loop, UV_RUN_DEFAULT);

	store_close(g.store);
	notify_free(g.notifier);
	metrics_free(g.metrics);
	rc = uv_loop_close(&g.loop);
	if (rc != 0) {
		uv_walk(&g.loop, gpuqd_on_walk, NULL);
		log_warnx("shutdown: the loop did not close: %s",
		    uv_strerror(rc));
	}
	if (g.lock_fd != -1)
		(void)close(g.lock_fd);
	free(g.lock_path);
	conf_done(&g.conf);
	spec_catalog_clear();
	log_info("stopped");
	return rc == 0 ? 0 : 1;
}
