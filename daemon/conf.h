/*
 * conf.h: gpuqd.conf, the daemon's configuration (gpuqd.conf(5)).
 *
 * struct conf is plain data every daemon module reads: the server its
 * limits, the scheduler its timings, the providers their endpoints. One
 * table in conf.c names every key once (section, name, type, default,
 * field, one-line doc); parsing, defaults, the effective-configuration
 * log line and reload all walk that table. Durations are whole seconds,
 * sizes whole bytes. Strings and lists are owned by the struct.
 *
 * SIGHUP replaces the values in place (conf_load into a new struct, then
 * a move into the live one): read fields when you need them and do not
 * keep pointers to conf strings across turns of the loop.
 *
 * Knows nothing of the loop, the socket or the store.
 */
#ifndef GPUQ_CONF_H
#define GPUQ_CONF_H

#include <stddef.h>
#include <stdint.h>

/* A comma-separated list: "us-central1, us-east1" -> {"us-central1",...}. */
struct conf_list {
	char	**v;		/* n strings, each owned */
	size_t	  n;
};

/* Words of struct conf's given: 64 table keys each. */
#define CONF_GIVEN_WORDS	2
#define CONF_GIVEN(c, i)	(((c)->given[(i) / 64] >> ((i) % 64)) & 1)
#define CONF_GIVEN_SET(c, i)	((c)->given[(i) / 64] |= (uint64_t)1 << \
				    ((i) % 64))

struct conf {
	/* [daemon] */
	char	*socket;		/* control socket path */
	char	*state_dir;		/* gpuq.db, gpuqd.lock */
	char	*socket_group;		/* may connect to our socket */
	char	*admin_group;		/* may act on every job */
	int	 log_level;		/* LOG_LEVEL_* */
	int	 log_submits;		/* bool: audit each submit */
	int	 max_connections;	/* clients at once */
	int	 max_connections_per_uid;
	int64_t	 idle_timeout;		/* s; close idle clients */
	int64_t	 max_pending_output;	/* bytes queued to a client */

	/* [gcp] */
	char	*project;		/* empty: no provider runs */
	struct conf_list regions;	/* empty: every region */
	struct conf_list providers;	/* vertex, batch, gce */
	char	*checkpoint_root;	/* gs://bucket/prefix */
	int	 spot_requires_checkpoint; /* bool: refuse, not warn */
	char	*credentials;		/* key file; empty: ADC */
	char	*endpoint;		/* one base URL for all */
	char	*compute_endpoint;
	char	*batch_endpoint;
	char	*vertex_endpoint;	/* may hold "{region}" */
	char	*billing_endpoint;
	char	*storage_endpoint;
	char	*token_endpoint;
	char	*metadata_endpoint;
	char	*quotas_endpoint;
	int64_t	 price_refresh;		/* s between catalog reads */
	int	 request_budget;	/* requests a minute per API; 0: none */
	char	*job_service_account;	/* email jobs run as; empty: default */
	char	*network;		/* name, or projects/P/global/... */
	struct conf_list subnetwork;	/* REGION:projects/P/regions/R/... */
	int	 external_ip;		/* bool: Compute VMs get one */
	struct conf_list network_tags;
	int	 boot_disk_gb;
	char	*boot_disk_type;	/* empty: each service's default */
	struct conf_list labels;	/* key=value, on every resource */
	char	*kms_key;		/* Cloud KMS key; empty: Google's */
	int64_t	 logs_interval;		/* s between Cloud Logging reads */
	struct conf_list reservations;	/* auto, none, or names */

	/* [scheduler] */
	int64_t	 poll_interval;		/* s between reconciler polls */
	int64_t	 quota_ttl;		/* s a quota reading is good */
	double	 preemptions_per_hour;	/* prior for lambda */
	int64_t	 restart_overhead;	/* s lost per interruption */
	int64_t	 deadline_margin;	/* s of slack a deadline job keeps
					   before it leaves Spot */
	int64_t	 spot_wait;		/* s a job waits out Spot cool-downs
					   before dearer capacity; 0 none */
	int	 move_to_cheaper;	/* move running jobs to cheaper
					   capacity (sched-move.c) */
	int64_t	 backoff_base;		/* s, first retry delay */
	int64_t	 backoff_max;		/* s, longest retry delay */
	int64_t	 stockout_cooldown;	/* s, first zone cool-down */
	int64_t	 stockout_cooldown_max;	/* s, longest cool-down */
	int64_t	 pending_timeout;	/* s queued in the cloud; 0: none */

	/* [daemon] metrics (metrics.c) */
	char	*metrics_file;		/* textfile collector; "": none */
	int64_t	 metrics_interval;	/* s between writes of it */
	double	 clock_scale;		/* tests: simulated s per real s */
	double	 clock_origin;		/* tests: real epoch of the anchor */

	/* [notify] (notify.c) */
	struct conf_list notify_on;	/* failed, succeeded, ... */
	char	*notify_webhook;	/* URL; "": none */
	char	*notify_webhook_format;	/* json or slack */
	char	*notify_command;	/* absolute path; "": none */
	int64_t	 notify_command_timeout; /* s before it is killed */
	/* What conf_load saw of the file, for conf_reload_check. */
	uint64_t given[CONF_GIVEN_WORDS]; /* bit i: table key i was set */
	int	 open_line;		/* last line if unterminated */
	int	 from_file;		/* the file existed */
};

enum conf_type {
	CONF_STRING,		/* text as written */
	CONF_LIST,		/* comma-separated strings */
	CONF_DURATION,		/* "90s", "2h30m": int64_t seconds */
	CONF_SIZE,		/* "4MiB", "1048576": int64_t bytes */
	CONF_INT,		/* int */
	CONF_DOUBLE,		/* double */
	CONF_BOOL,		/* yes/no, true/false, on/off: int */
	CONF_LOG_LEVEL,		/* error ... debug: int */
};

#define CONF_RESTART	0x1	/* a change needs a restart, not SIGHUP */

/* One row of the key table. */
struct conf_key {
	const char	*section;
	const char	*name;
	enum conf_type	 type;
	const char	*def;		/* default, as a file writes it */
	size_t		 offset;	/* of the field in struct conf */
	int		 flags;		/* CONF_RESTART */
	double		 min;		/* numeric types: allowed range, */
	double		 max;		/* inclusive; none if max <= min */
	const char	*choices;	/* lists: allowed items, "a,b" */
	const char	*doc;		/* one line for humans */
};

/* Fill C with every default. Returns 0; C must later go to conf_done. */
int		 conf_init(struct conf *c);
/* Free what C owns and zero it. Accepts a zeroed struct. */
void		 conf_done(struct conf *c);
/*
 * Defaults, then PATH on top of them, into *C (which the callee
 * initializes; on failure it is left zeroed). A missing PATH is fine
 * when MUST_EXIST is 0. Errors: -ENOENT missing file, -EINVAL bad
 * content ("FILE:LINE: ..." in *cause), other -errno from reading.
 */
int		 conf_load(struct conf *c, const char *path, int must_exist,
		    char **cause);
/*
 * Set one key from its text form, as a config line would: -ENOENT for
 * an unknown section or key, -EINVAL for a bad value; *cause says which
 * and lists what is allowed.
 */
int		 conf_set(struct conf *c, const char *section,
		    const char *name, const char *value, char **cause);
/* The key table; *ret_n gets its length. Borrowed, static. */
const struct conf_key *conf_keys(size_t *ret_n);
/* The row for SECTION/NAME, or NULL. */
const struct conf_key *conf_key_find(const char *section, const char *name);
/* Value of K in C as a config file would write it. New string. */
char		*conf_value_text(const struct conf *c,
		    const struct conf_key *k);
/* Log the effective configuration: one info line per section. */
void		 conf_log(const struct conf *c);
/*
 * Move the reloadable values of NEW into CUR, logging each change;
 * keys flagged CONF_RESTART keep their value in CUR, and one warning
 * names every such key that differs and says a restart is needed.
 * Takes NEW's contents (NEW is left zeroed). Returns the number of
 * keys that changed.
 */
int		 conf_apply(struct conf *cur, struct conf *next);
/*
 * May NEXT, just loaded from PATH, replace the running CUR on a reload?
 * Refused (-EINVAL, *cause saying why, naming PATH) when PATH is gone
 * or lacks a key that CUR's file set (an empty or truncated file must
 * not reset admin_group or the limits to their defaults), or when its
 * last line has no newline (a file still being written). 0 if fine.
 */
int		 conf_reload_check(const struct conf *cur,
		    const struct conf *next, const char *path, char **cause);

#endif
