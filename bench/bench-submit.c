/*
 * bench-submit.c: how many acknowledged, durable submits per second
 * gpuqd takes, three ways:
 *
 *   pipelined      one connection, N requests written in chunks while
 *                  the replies are read (group commit at full stretch)
 *   one at a time  one connection, each request waits for its reply
 *   processes      one `gpuq submit` process per job, back to back
 *
 * Prints one line per figure. Every reply is checked: a figure counts
 * only {"ok":true,...} replies, and any other reply fails the run. Each
 * figure and its floor are taken in turn in 5 rounds (-r) of a fifth of
 * the count each, and the best round of each is printed: the machine is
 * shared, and a neighbour's burst then costs a round, not the ratio.
 * Talks the wire directly (common/proto.h); knows nothing else of gpuq.
 *
 * With -F DIR it also prints what the machine allows at best, measured
 * in the same run, each followed by the ratio of its figure to it (the
 * targets of issue 18):
 *
 *   SQLite, 64 jobs a transaction   a job's rows (a spec-sized row in
 *                  an indexed table and its event) into a WAL database
 *                  in DIR, synchronous=FULL, 64 jobs per commit: under
 *                  "pipelined" (>= 0.5x)
 *   7-page append+fdatasync  a server that only appends 7 pages to a
 *                  file in DIR and fdatasyncs per request, asked one at
 *                  a time over a socket (a one-job commit appended
 *                  about 7 pages to SQLite's WAL when a submit wrote
 *                  five B-trees; since schema 14 it writes two, and
 *                  strace counts 4.75 pwrites, about 2.4 frames, per
 *                  commit): for reference, an upper bound
 *   1-row durable SQLite commit  one row per durable commit, in this
 *                  process: under "one at a time" (>= 0.6x)
 *   spawning /bin/true  back to back: under "1 gpuq process per job"
 *                  (>= 0.7x)
 *
 * and, to tell gpuqd's share from the machine's, the same commit behind
 * a socket (a child that serves each request line with a one-row
 * durable SQLite commit and a reply, the least any daemon can do):
 *
 *   1-row commit behind a socket  one at a time over one connection:
 *                  its ratio to the 1-row commit is the best "one at a
 *                  time" can reach on this machine
 *   a job's 2 B-trees behind a socket  the same server writing what a
 *                  queued submit writes in gpuqd's schema (a job row
 *                  with its spec, the one partial index that takes it):
 *                  gpuqd's own code is what "one at a time" adds to it
 *   spawn + connect + 1-row commit  with -c, bench-client (libc only:
 *                  connect, one line, its reply) spawned per job against
 *                  the 1-row server: its ratio to /bin/true is the best "1
 *                  gpuq process per job" can reach here
 *   gpuq submit to the 1-row server  gpuq's own share: the figure with a
 *                  daemon that does nothing but the commit
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

extern char **environ;

/* A small valid job; the daemon validates and stores it in full. */
#define BENCH_REQ \
	"{\"op\":\"submit\",\"job\":{\"name\":\"bench\"," \
	"\"image\":\"pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime\"," \
	"\"command\":[\"python\",\"train.py\"]," \
	"\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":1}}}\n"
#define BENCH_OK	"{\"ok\":true"
#define FLOOR_PAGES	7	/* WAL frames of a one-job commit */
#define FLOOR_PAGE	4096
#define FLOOR_GROUP	64	/* rows per transaction, pipelined floor */
#define BENCH_TRUE	"/bin/true"

static double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "bench-submit: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int
connect_to(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		die(path);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1)
		die(path);
	return fd;
}

/*
 * Reply lines read so far: count them and check each is ok. Keeps a
 * partial line in BUF between calls. Exits on a failed reply.
 */
struct replies {
	char	 buf[1 << 16];
	size_t	 len;
	long	 n;
};

static void
replies_feed(struct replies *r, const char *data, size_t n)
{
	size_t	 off = 0, i;
	char	*nl;

	while (off < n) {
		i = n - off < sizeof r->buf - r->len ?
		    n - off : sizeof r->buf - r->len;
		memcpy(r->buf + r->len, data + off, i);
		r->len += i;
		off += i;
		while ((nl = memchr(r->buf, '\n', r->len)) != NULL) {
			if (strncmp(r->buf, BENCH_OK, strlen(BENCH_OK)) != 0) {
				*nl = '\0';
				fprintf(stderr, "bench-submit: reply %ld: %s\n",
				    r->n + 1, r->buf);
				exit(1);
			}
			r->n++;
			r->len -= (size_t)(nl - r->buf) + 1;
			memmove(r->buf, nl + 1, r->len);
		}
		if (r->len == sizeof r->buf) {
			fprintf(stderr, "bench-submit: reply too long\n");
			exit(1);
		}
	}
}

/* N submits on one connection, writing while reading. */
static double
bench_pipelined(const char *path, long n)
{
	static struct replies	 r;
	struct pollfd		 pfd;
	const size_t		 reqlen = strlen(BENCH_REQ);
	char			*out, in[1 << 16];
	size_t			 total, off = 0;
	ssize_t			 k;
	double			 t0;
	long			 i;
	int			 fd;

	total = reqlen * (size_t)n;
	if ((out = malloc(total)) == NULL)
		die("malloc");
	for (i = 0; i < n; i++)
		memcpy(out + (size_t)i * reqlen, BENCH_REQ, reqlen);
	fd = connect_to(path);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1)
		die("fcntl");
	memset(&r, 0, sizeof r);
	t0 = now_s();
	while (r.n < n) {
		pfd.fd = fd;
		pfd.events = POLLIN | (off < total ? POLLOUT : 0);
		if (poll(&pfd, 1, 30000) <= 0)
			die("poll (no progress in 30 s)");
		if ((pfd.revents & POLLOUT) && off < total) {
			/* Chunks of 64 KiB: the daemon reads as we write. */
			k = write(fd, out + off, total - off < 65536 ?
			    total - off : 65536);
			if (k == -1 && errno != EAGAIN)
				die("write");
			if (k > 0)
				off += (size_t)k;
		}
		if (pfd.revents & (POLLIN | POLLHUP)) {
			k = read(fd, in, sizeof in);
			if (k == -1 && errno != EAGAIN)
				die("read");
			if (k == 0) {
				fprintf(stderr, "bench-submit: gpuqd hung up "
				    "after %ld replies\n", r.n);
				exit(1);
			}
			if (k > 0)
				replies_feed(&r, in, (size_t)k);
		}
	}
	t0 = now_s() - t0;
	close(fd);
	free(out);
	return t0;
}

/* N submits on connection FD, each waiting for its reply; closes FD. */
static double
bench_serial_fd(int fd, long n)
{
	static struct replies	 r;
	const size_t		 reqlen = strlen(BENCH_REQ);
	char			 in[4096];
	ssize_t			 k;
	double			 t0;
	long			 i;

	memset(&r, 0, sizeof r);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (write(fd, BENCH_REQ, reqlen) != (ssize_t)reqlen)
			die("write");
		while (r.n == i) {
			if ((k = read(fd, in, sizeof in)) <= 0) {
				if (k == 0)
					errno = EPIPE;
				die("read");
			}
			replies_feed(&r, in, (size_t)k);
		}
	}
	t0 = now_s() - t0;
	close(fd);
	return t0;
}

/* N submits on one connection, each waiting for its reply. */
static double
bench_serial(const char *path, long n)
{
	return bench_serial_fd(connect_to(path), n);
}

/*
 * The floor server: per request line, append FLOOR_PAGES pages (with
 * WAL-like 24-byte frame headers) to a preallocated file in DIR and
 * fdatasync it, then reply. Runs in a child on one end of a socketpair.
 */
static void __attribute__((noreturn))
floor_server(int fd, const char *dir)
{
	static char	 in[1 << 16], page[FLOOR_PAGE];
	const off_t	 size = (off_t)1024 * FLOOR_PAGE;
	char		*file;
	off_t		 off = 0;
	ssize_t		 k;
	int		 out, p;

	if (asprintf(&file, "%s/bench-floor.tmp", dir) == -1)
		die("asprintf");
	if ((out = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1)
		die(file);
	(void)unlink(file);
	memset(page, 'x', sizeof page);
	for (off = 0; off < size; off += FLOOR_PAGE)
		if (pwrite(out, page, FLOOR_PAGE, off) != FLOOR_PAGE)
			die("pwrite");
	if (fsync(out) == -1)
		die("fsync");
	off = 0;
	while ((k = read(fd, in, sizeof in)) > 0) {
		for (p = 0; p < FLOOR_PAGES; p++) {
			if (pwrite(out, page, 24, off) != 24 || pwrite(out,
			    page, FLOOR_PAGE, off + 24) != FLOOR_PAGE)
				die("pwrite");
			off += FLOOR_PAGE + 24;
			if (off + FLOOR_PAGE + 24 > size)
				off = 0;
		}
		if (fdatasync(out) == -1)
			die("fdatasync");
		if (write(fd, BENCH_OK "}\n", sizeof BENCH_OK + 1) !=
		    sizeof BENCH_OK + 1)
			die("write");
	}
	_exit(0);
}

/* N requests, one at a time, to the floor server. */
static double
bench_floor_serial(const char *dir, long n)
{
	double	t;
	pid_t	pid;
	int	sv[2], st;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		die("socketpair");
	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		floor_server(sv[1], dir);
	}
	close(sv[1]);
	t = bench_serial_fd(sv[0], n);
	if (waitpid(pid, &st, 0) == -1)
		die("waitpid");
	return t;
}

/*
 * The rows a submit of BENCH_REQ writes, in SQLite alone: a job row
 * (with the stored spec, FLOOR_SPEC) in a table with a partial index of
 * the live jobs, and its first event in a table clustered by job. What
 * the floor under "pipelined" writes: with 64 jobs a commit the fsync is
 * shared, and the rows' size and B-trees are what is left.
 */
#define FLOOR_SCHEMA \
	"CREATE TABLE IF NOT EXISTS j (id INTEGER PRIMARY KEY, name TEXT," \
	" state INT, priority INT, owner INT, spec TEXT, created INT," \
	" updated INT);" \
	"CREATE INDEX IF NOT EXISTS j_live ON j (priority, id)" \
	" WHERE state < 5;" \
	"CREATE TABLE IF NOT EXISTS e (job_id INT, seq INT, time INT," \
	" message TEXT, PRIMARY KEY (job_id, seq)) WITHOUT ROWID;"

/* BENCH_REQ's job as gpuqd stores it (normalized, 348 bytes). */
#define FLOOR_SPEC \
	"{\"name\":\"bench\",\"image\":\"pytorch/pytorch:2.3.1-cuda12.1-" \
	"cudnn8-runtime\",\"command\":[\"python\",\"train.py\"],\"env\":{}," \
	"\"accelerator\":{\"type\":\"nvidia-tesla-t4\",\"count\":1}," \
	"\"machine_type\":\"n1-highmem-4\",\"spot\":\"allow\"," \
	"\"estimated_hours\":1.0,\"max_runtime\":604800," \
	"\"max_interruptions\":20,\"max_failures\":0," \
	"\"checkpoint\":{\"interval\":1800},\"priority\":0,\"labels\":{}}"

static void __attribute__((noreturn))
floor_sqlite_fail(sqlite3 *db, const char *path)
{
	fprintf(stderr, "bench-submit: %s: %s\n", path, sqlite3_errmsg(db));
	exit(1);
}

static void
floor_sqlite_step(sqlite3 *db, const char *path, sqlite3_stmt *s)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		floor_sqlite_fail(db, path);
	sqlite3_reset(s);
}

/*
 * N rows into a WAL database in DIR with synchronous=FULL, after a
 * warm-up, with no socket and no daemon. PER 1: one tiny row per
 * durable commit, what one commit costs on this machine (the floor
 * under "one at a time"). PER > 1: a job's rows (FLOOR_SCHEMA) PER jobs
 * a transaction, SQLite's own rate when jobs come in groups (the floor
 * under "pipelined").
 */
static double
bench_floor_sqlite(const char *dir, long n, int per)
{
	sqlite3		*db;
	sqlite3_stmt	*s, *ev = NULL, *begin, *commit;
	char		*path;
	double		 t0, t;
	long		 i;

	if (asprintf(&path, "%s/bench-floor.db", dir) == -1)
		die("asprintf");
	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db,
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
	    "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v INT);"
	    FLOOR_SCHEMA, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, per == 1 ? "INSERT INTO t (v) VALUES (1)" :
	    "INSERT INTO j (name, state, priority, owner, spec, created,"
	    " updated) VALUES ('bench', 0, 0, 1000, ?1, ?2, ?2)", -1, &s,
	    NULL) != SQLITE_OK || (per > 1 && sqlite3_prepare_v2(db,
	    "INSERT INTO e VALUES (?1, 1, ?2, 'submitted')", -1, &ev,
	    NULL) != SQLITE_OK) ||
	    sqlite3_prepare_v2(db, "BEGIN", -1, &begin, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL) != SQLITE_OK)
		floor_sqlite_fail(db, path);
	t0 = 0;
	for (i = -1024; i < n; i++) {
		if (i == 0)
			t0 = now_s();
		if (per == 1) {
			floor_sqlite_step(db, path, s);
			continue;
		}
		if ((i + 1024) % per == 0)
			floor_sqlite_step(db, path, begin);
		sqlite3_bind_text(s, 1, FLOOR_SPEC, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)time(NULL));
		floor_sqlite_step(db, path, s);
		sqlite3_bind_int64(ev, 1, sqlite3_last_insert_rowid(db));
		sqlite3_bind_int64(ev, 2, (sqlite3_int64)time(NULL));
		floor_sqlite_step(db, path, ev);
		if ((i + 1024) % per == per - 1 || i == n - 1)
			floor_sqlite_step(db, path, commit);
	}
	t = now_s() - t0;
	sqlite3_finalize(s);
	sqlite3_finalize(ev);
	sqlite3_finalize(begin);
	sqlite3_finalize(commit);
	sqlite3_close(db);
	(void)unlink(path);
	free(path);
	return t;
}

/*
 * The commit server: on listening socket LFD, one connection after
 * another, each request line answered with one durable commit (WAL,
 * synchronous=FULL, as gpuqd's store) into a database in DIR and
 * {"ok":true,"id":N}; READY gets a byte once it is warm. JOB 0: one
 * tiny row, the least a daemon can do per durable submit. JOB 1: what a
 * queued submit writes in gpuqd's schema since version 14, a job row
 * with the stored spec in a table whose one partial index of queued
 * jobs takes it and whose index of the other live jobs does not
 * (FLOOR_JOBS: jobs and jobs_runnable, two B-trees, two WAL frames), so
 * gpuqd's own code shows as what it adds to that.
 */
#define FLOOR_JOBS \
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY, name TEXT," \
	" state INT, priority INT, owner INT, spec TEXT, created INT," \
	" updated INT, not_before INT NOT NULL DEFAULT 0," \
	" interruptions INT NOT NULL DEFAULT 0," \
	" cost_usd REAL NOT NULL DEFAULT 0, why TEXT);" \
	"CREATE INDEX jobs_others ON jobs (id, state)" \
	" WHERE state <> 1 AND state < 5;" \
	"CREATE INDEX jobs_runnable ON jobs (id, priority, not_before," \
	" interruptions, cost_usd, why, state) WHERE state = 1;"

static void __attribute__((noreturn))
floor_commit_server(int lfd, int ready, const char *dir, int job)
{
	static char	 in[1 << 16];
	sqlite3		*db;
	sqlite3_stmt	*s;
	char		*path, out[64];
	ssize_t		 k, i;
	int		 fd, n;

	if (asprintf(&path, "%s/bench-floor-sock%d.db", dir, job) == -1)
		die("asprintf");
	(void)unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db,
	    "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
	    "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT);" FLOOR_JOBS,
	    NULL, NULL, NULL) != SQLITE_OK || sqlite3_prepare_v2(db, job ?
	    "INSERT INTO jobs (name, state, priority, owner, spec, created,"
	    " updated) VALUES ('bench', 1, 0, 1000, ?1, ?2, ?2)" :
	    "INSERT INTO t (v) VALUES (1)", -1, &s, NULL) != SQLITE_OK)
		floor_sqlite_fail(db, path);
	if (job) {
		sqlite3_bind_text(s, 1, FLOOR_SPEC, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)time(NULL));
	}
	/* Past the WAL's first checkpoint: it is reused, not grown. */
	for (i = 0; i < 1536; i++)
		floor_sqlite_step(db, path, s);
	/* Warm: the timing starts now. */
	if (write(ready, "", 1) != 1)
		die("write");
	close(ready);
	while ((fd = accept(lfd, NULL, NULL)) != -1) {
		while ((k = read(fd, in, sizeof in)) > 0) {
			for (i = 0; i < k; i++) {
				if (in[i] != '\n')
					continue;
				floor_sqlite_step(db, path, s);
				n = snprintf(out, sizeof out,
				    "{\"ok\":true,\"id\":%lld}\n",
				    (long long)sqlite3_last_insert_rowid(db));
				if (write(fd, out, (size_t)n) != n)
					break;
			}
		}
		close(fd);
	}
	_exit(0);
}

/* Start the commit server on socket PATH, once it is warm; its pid. */
static pid_t
floor_commit_start(const char *path, const char *dir, int job)
{
	struct sockaddr_un	sun;
	pid_t			pid;
	char			c;
	int			lfd, p[2];

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		die(path);
	}
	strcpy(sun.sun_path, path);
	(void)unlink(path);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket");
	if (bind(lfd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(lfd, 64) == -1)
		die(path);
	if (pipe(p) == -1)
		die("pipe");
	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		floor_commit_server(lfd, p[1], dir, job);
	}
	close(p[1]);
	close(lfd);
	if (read(p[0], &c, 1) != 1) {
		fprintf(stderr, "bench-submit: the commit server failed\n");
		exit(1);
	}
	close(p[0]);
	return pid;
}

static void
floor_commit_stop(pid_t pid, const char *path)
{
	(void)kill(pid, SIGTERM);
	if (waitpid(pid, NULL, 0) == -1)
		die("waitpid");
	(void)unlink(path);
}

/* N processes of ARGV, one after another, stdout to /dev/null. */
static double
bench_spawn_argv(char **argv, long n)
{
	posix_spawn_file_actions_t	 fa;
	double				 t0;
	pid_t				 pid;
	long				 i;
	int				 st, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
	    O_WRONLY, 0);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
		if (rc != 0) {
			errno = rc;
			die(argv[0]);
		}
		if (waitpid(pid, &st, 0) == -1)
			die("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "bench-submit: %s %ld failed "
			    "(status %d)\n", argv[0], i + 1, st);
			exit(1);
		}
	}
	t0 = now_s() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return t0;
}

/* N `gpuq --socket PATH submit -q FILE` processes, one after another. */
static double
bench_processes(const char *path, long n, const char *gpuq, const char *file)
{
	char	*argv[] = { (char *)gpuq, (char *)"--socket", (char *)path,
	    (char *)"submit", (char *)"-q", (char *)file, NULL };

	return bench_spawn_argv(argv, n);
}

/* N `bench-client PATH` processes, one after another. */
static double
bench_clients(const char *path, long n, const char *client)
{
	char	*argv[] = { (char *)client, (char *)path, NULL };

	return bench_spawn_argv(argv, n);
}

static double
report(const char *what, long n, double sec, double target)
{
	double	rate = (double)n / sec;

	if (target <= 0)
		printf("%-34s %8ld in %7.3f s = %9.0f/s\n", what, n, sec,
		    rate);
	else
		printf("%-34s %8ld in %7.3f s = %9.0f/s  (target >= %.0f/s: "
		    "%s)\n", what, n, sec, rate, target, rate >= target ?
		    "met" : "MISSED");
	fflush(stdout);
	return rate;
}

/*
 * N spawns of /bin/true back to back: the least a process costs here
 * (one shared object, libc), the floor under "1 gpuq process per job".
 */
static double
bench_floor_spawn(long n)
{
	char	*argv[] = { (char *)BENCH_TRUE, NULL };
	double	 t0;
	pid_t	 pid;
	long	 i;
	int	 st, rc;

	t0 = now_s();
	for (i = 0; i < n; i++) {
		if ((rc = posix_spawn(&pid, BENCH_TRUE, NULL, NULL, argv,
		    environ)) != 0) {
			errno = rc;
			die(BENCH_TRUE);
		}
		if (waitpid(pid, &st, 0) == -1)
			die("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "bench-submit: %s failed (status "
			    "%d)\n", BENCH_TRUE, st);
			exit(1);
		}
	}
	return now_s() - t0;
}

/*
 * A figure beside its floor measured in this run: RATE / FLOOR, and
 * whether that meets the ratio TARGET (0: none, a floor's own ratio).
 */
static void
report_ratio(const char *what, double rate, double floor, double target)
{
	double	ratio = rate / floor;

	if (target <= 0)
		printf("%-44s %6.2fx\n", what, ratio);
	else
		printf("%-44s %6.2fx (target >= %.2fx: %s)\n", what, ratio,
		    target, ratio >= target ? "met" : "MISSED");
	fflush(stdout);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: bench-submit [-n PIPELINED] [-s SERIAL] "
	    "[-p PROCESSES -g GPUQ -f JOBFILE] [-F DIR [-c CLIENT]]\n"
	    "       [-r ROUNDS] SOCKET\n"
	    "  -n N  submits pipelined over one connection (default 100000)\n"
	    "  -s N  submits one at a time over one connection "
	    "(default 20000)\n"
	    "  -p N  'gpuq submit' processes back to back (default 2000;\n"
	    "        needs -g and -f)\n"
	    "  -F DIR  also measure this machine's floors and print each "
	    "ratio:\n"
	    "        64 jobs a durable SQLite transaction in DIR, a 7-page\n"
	    "        append + fdatasync in DIR per request, a one-row "
	    "durable\n"
	    "        SQLite commit in DIR, and /bin/true spawned back to "
	    "back;\n"
	    "        and that commit behind a socket, asked one at a time "
	    "and\n"
	    "        by gpuq processes\n"
	    "  -c CLIENT  with -F: also bench-client processes against "
	    "that\n"
	    "        socket (spawn + connect + 1-row commit)\n"
	    "  -r N  measure each figure and floor in turn N times, on N/ROUNDS\n"
	    "        each, and print the best rate of each (default 5)\n"
	    "  0 skips a measurement.\n");
	exit(2);
}

/* The best rate of each figure over the rounds: what the machine allows. */
struct best {
	double	pipe, serial, proc;
	double	f_group, f_append, f_commit, f_spawn;
	double	f_sock;		/* 1-row commit behind a socket */
	double	f_job;		/* a job's two B-trees behind it */
	double	f_client;	/* bench-client processes to it */
	double	f_gpuq;		/* gpuq processes to it */
};

static void
best_of(double *best, long n, double sec)
{
	if (sec > 0 && (double)n / sec > *best)
		*best = (double)n / sec;
}

static void
report_best(const char *what, long n, double rate, double target)
{
	report(what, n, (double)n / rate, target);
}

int
main(int argc, char **argv)
{
	const char	*gpuq = NULL, *file = NULL, *floor = NULL;
	const char	*client = NULL;
	char		*fsock = NULL;
	pid_t		 fpid;
	long		 npipe = 100000, nserial = 20000, nproc = 2000, n;
	struct best	 b;
	int		 ch, r, rounds = 5;

	while ((ch = getopt(argc, argv, "n:s:p:g:f:F:c:r:")) != -1) {
		switch (ch) {
		case 'c':
			client = optarg;
			break;
		case 'F':
			floor = optarg;
			break;
		case 'n':
			npipe = atol(optarg);
			break;
		case 's':
			nserial = atol(optarg);
			break;
		case 'p':
			nproc = atol(optarg);
			break;
		case 'g':
			gpuq = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || rounds < 1 || (nproc > 0 && (gpuq == NULL ||
	    file == NULL)) || (client != NULL && floor == NULL))
		usage();
	if (floor != NULL && asprintf(&fsock, "%s/floor.sock", floor) == -1)
		die("asprintf");
	/*
	 * Each figure and its floor are measured in turn, ROUNDS times over
	 * a share of N each, and the best rate of each is kept: on a shared
	 * machine a neighbour's burst slows one slice, not the ratio.
	 */
	memset(&b, 0, sizeof b);
	for (r = 0; r < rounds; r++) {
		if ((n = npipe / rounds) > 0) {
			best_of(&b.pipe, n, bench_pipelined(argv[optind], n));
			if (floor != NULL)
				best_of(&b.f_group, n, bench_floor_sqlite(floor,
				    n, FLOOR_GROUP));
		}
		if ((n = nserial / rounds) > 0) {
			best_of(&b.serial, n, bench_serial(argv[optind], n));
			if (floor != NULL) {
				best_of(&b.f_append, n,
				    bench_floor_serial(floor, n));
				best_of(&b.f_commit, n,
				    bench_floor_sqlite(floor, n, 1));
				fpid = floor_commit_start(fsock, floor, 0);
				best_of(&b.f_sock, n, bench_serial(fsock, n));
				floor_commit_stop(fpid, fsock);
				fpid = floor_commit_start(fsock, floor, 1);
				best_of(&b.f_job, n, bench_serial(fsock, n));
				floor_commit_stop(fpid, fsock);
			}
		}
		if ((n = nproc / rounds) > 0) {
			best_of(&b.proc, n, bench_processes(argv[optind], n,
			    gpuq, file));
			if (floor != NULL) {
				best_of(&b.f_spawn, n, bench_floor_spawn(n));
				fpid = floor_commit_start(fsock, floor, 0);
				if (client != NULL)
					best_of(&b.f_client, n,
					    bench_clients(fsock, n, client));
				best_of(&b.f_gpuq, n, bench_processes(fsock, n,
				    gpuq, file));
				floor_commit_stop(fpid, fsock);
			}
		}
	}
	if (npipe / rounds > 0)
		report_best("submit, pipelined, 1 connection", npipe / rounds,
		    b.pipe, 50000);
	if (nserial / rounds > 0)
		report_best("submit, one at a time, 1 conn.", nserial / rounds,
		    b.serial, 5500);
	if (nproc / rounds > 0)
		report_best("submit, 1 gpuq process per job", nproc / rounds,
		    b.proc, 1000);
	if (floor == NULL)
		return 0;
	if (npipe / rounds > 0) {
		report_best("floor: SQLite, 64 jobs a transaction",
		    npipe / rounds, b.f_group, 0);
		report_ratio("ratio: pipelined / 64 jobs a transaction",
		    b.pipe, b.f_group, 0.5);
	}
	if (nserial / rounds > 0) {
		report_best("floor: 7-page append+fdatasync", nserial / rounds,
		    b.f_append, 0);
		report_best("floor: 1-row durable SQLite commit",
		    nserial / rounds, b.f_commit, 0);
		report_ratio("ratio: one at a time / 1-row commit", b.serial,
		    b.f_commit, 0.6);
		/* What any daemon reaches here, and gpuqd beside it. */
		report_best("floor: 1-row commit behind a socket",
		    nserial / rounds, b.f_sock, 0);
		report_ratio("ratio: that / 1-row commit (best possible)",
		    b.f_sock, b.f_commit, 0);
		report_ratio("ratio: one at a time / that", b.serial,
		    b.f_sock, 0);
		report_best("floor: a job's 2 B-trees behind a socket",
		    nserial / rounds, b.f_job, 0);
		report_ratio("ratio: that / 1-row commit", b.f_job,
		    b.f_commit, 0);
		report_ratio("ratio: one at a time / that", b.serial,
		    b.f_job, 0);
	}
	if (nproc / rounds > 0) {
		report_best("floor: spawning " BENCH_TRUE, nproc / rounds,
		    b.f_spawn, 0);
		report_ratio("ratio: gpuq processes / " BENCH_TRUE, b.proc,
		    b.f_spawn, 0.7);
		if (client != NULL) {
			report_best("floor: spawn + connect + 1-row commit",
			    nproc / rounds, b.f_client, 0);
			report_ratio("ratio: that / " BENCH_TRUE
			    " (best possible)", b.f_client, b.f_spawn, 0);
			report_ratio("ratio: gpuq processes / that", b.proc,
			    b.f_client, 0);
		}
		report_best("gpuq processes to the 1-row commit server",
		    nproc / rounds, b.f_gpuq, 0);
		report_ratio("ratio: those / " BENCH_TRUE, b.f_gpuq,
		    b.f_spawn, 0);
	}
	free(fsock);
	return 0;
}
