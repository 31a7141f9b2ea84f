/*
 * test-conf.c: gpuqd.conf parsing (daemon/conf.c): defaults, every
 * value type, precise errors with FILE:LINE, reload, that the [gcp]
 * defaults are the gcp layer's own, and that gpuqd.conf(5) documents
 * every key of the table with its default.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "daemon/conf.h"
#include "providers/gcp/gcp.h"
#include "tests/unit/unittest.h"

struct fixture {
	struct unittest	*ut;
	char		*path;		/* gpuqd.conf in UT's directory */
};

static int
setup(void **state)
{
	struct fixture	*fx = xcalloc(1, sizeof *fx);

	fx->ut = unittest_new("test-conf");
	fx->path = unittest_path(fx->ut, "gpuqd.conf");
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	unittest_free(fx->ut);
	free(fx->path);
	free(fx);
	return 0;
}

static void
write_conf(struct fixture *fx, const char *text)
{
	FILE	*f = fopen(fx->path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* Load TEXT; expect failure with RC and a cause starting "PATH:LINE: ". */
static char *
load_fails(struct fixture *fx, const char *text, int rc, int line)
{
	struct conf	 c;
	char		*cause = NULL, prefix[160];

	write_conf(fx, text);
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), rc);
	assert_non_null(cause);
	if (line > 0) {
		(void)snprintf(prefix, sizeof prefix, "%s:%d: ", fx->path,
		    line);
		if (strncmp(cause, prefix, strlen(prefix)) != 0)
			fail_msg("cause \"%s\" does not start with \"%s\"",
			    cause, prefix);
	}
	return cause;
}

static void
test_conf_defaults(void **state)
{
	struct conf	c;

	assert_int_equal(conf_init(&c), 0);
	assert_string_equal(c.socket, "/run/gpuq/gpuq.sock");
	assert_string_equal(c.state_dir, "/var/lib/gpuq");
	assert_string_equal(c.socket_group, "gpuq");
	assert_string_equal(c.admin_group, "gpuq-admin");
	assert_int_equal(c.log_level, LOG_LEVEL_INFO);
	assert_int_equal(c.log_submits, 0);
	assert_int_equal(c.max_connections, 256);
	assert_int_equal(c.max_connections_per_uid, 32);
	assert_int_equal(c.idle_timeout, 600);
	assert_int_equal(c.max_pending_output, 4 * 1024 * 1024);
	assert_string_equal(c.project, "");
	assert_int_equal(c.regions.n, 0);
	assert_int_equal(c.providers.n, 3);
	assert_string_equal(c.providers.v[0], "vertex");
	assert_string_equal(c.providers.v[1], "batch");
	assert_string_equal(c.providers.v[2], "gce");
	assert_string_equal(c.endpoint, "");
	assert_string_equal(c.compute_endpoint,
	    "https://compute.googleapis.com");
	assert_string_equal(c.vertex_endpoint,
	    "https://{region}-aiplatform.googleapis.com");
	assert_string_equal(c.token_endpoint,
	    "https://oauth2.googleapis.com/token");
	assert_string_equal(c.quotas_endpoint,
	    "https://cloudquotas.googleapis.com");
	assert_int_equal(c.price_refresh, 86400);
	assert_int_equal(c.poll_interval, 15);
	assert_int_equal(c.quota_ttl, 60);
	assert_true(c.preemptions_per_hour > 0.0999 &&
	    c.preemptions_per_hour < 0.1001);
	assert_int_equal(c.restart_overhead, 600);
	assert_int_equal(c.backoff_base, 30);
	assert_int_equal(c.backoff_max, 1800);
	assert_int_equal(c.stockout_cooldown, 600);
	assert_int_equal(c.stockout_cooldown_max, 6 * 3600);
	conf_done(&c);
}

static void
test_conf_missing_file(void **state)
{
	struct fixture	*fx = *state;
	struct conf	 c;
	char		*cause = NULL;

	/* The default file may be absent: defaults. */
	assert_int_equal(conf_load(&c, fx->path, 0, &cause), 0);
	assert_null(cause);
	assert_int_equal(c.poll_interval, 15);
	conf_done(&c);
	/* A file named on the command line must exist. */
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), -ENOENT);
	assert_non_null(cause);
	assert_non_null(strstr(cause, fx->path));
	free(cause);
}

/* One key of each type, with comments, blanks and inline comments. */
static void
test_conf_every_type(void **state)
{
	struct fixture	*fx = *state;
	struct conf	 c;
	char		*cause = NULL;

	write_conf(fx,
	    "# gpuqd.conf for a test\n"
	    "[daemon]\n"
	    "socket = /tmp/x.sock\n"
	    "log_level = debug\n"
	    "log_submits = yes\n"
	    "max_connections = 100     ; an int\n"
	    "idle_timeout = 1h30m\n"
	    "max_pending_output = 512KiB\n"
	    "\n"
	    "[gcp]\n"
	    "project = my-project\n"
	    "regions = us-central1, us-east1 ,europe-west4\n"
	    "providers = gce\n"
	    "\n"
	    "[scheduler]\n"
	    "preemptions_per_hour = 0.25\n"
	    "poll_interval = 90\n");
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), 0);
	assert_null(cause);
	assert_string_equal(c.socket, "/tmp/x.sock");
	assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(c.log_submits, 1);
	assert_int_equal(c.max_connections, 100);
	assert_int_equal(c.idle_timeout, 5400);
	assert_int_equal(c.max_pending_output, 512 * 1024);
	assert_string_equal(c.project, "my-project");
	assert_int_equal(c.regions.n, 3);
	assert_string_equal(c.regions.v[0], "us-central1");
	assert_string_equal(c.regions.v[1], "us-east1");
	assert_string_equal(c.regions.v[2], "europe-west4");
	assert_int_equal(c.providers.n, 1);
	assert_string_equal(c.providers.v[0], "gce");
	assert_true(c.preemptions_per_hour == 0.25);
	assert_int_equal(c.poll_interval, 90);
	/* Untouched keys keep their defaults. */
	assert_string_equal(c.state_dir, "/var/lib/gpuq");
	assert_int_equal(c.quota_ttl, 60);
	conf_done(&c);
}

static void
test_conf_bool_forms(void **state)
{
	static const struct {
		const char	*text;
		int		 value;
	} forms[] = {
		{ "yes", 1 }, { "true", 1 }, { "on", 1 }, { "1", 1 },
		{ "YES", 1 }, { "no", 0 }, { "false", 0 }, { "off", 0 },
		{ "0", 0 },
	};
	struct conf	 c;
	char		*cause = NULL;
	size_t		 i;

	conf_init(&c);
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		c.log_submits = !forms[i].value;
		assert_int_equal(conf_set(&c, "daemon", "log_submits",
		    forms[i].text, &cause), 0);
		assert_int_equal(c.log_submits, forms[i].value);
	}
	assert_int_equal(conf_set(&c, "daemon", "log_submits", "maybe",
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "not a boolean"));
	free(cause);
	conf_done(&c);
}

static void
test_conf_size_forms(void **state)
{
	static const struct {
		const char	*text;
		int64_t		 value;
	} forms[] = {
		{ "4096", 4096 }, { "8KiB", 8192 }, { "8k", 8192 },
		{ "4MiB", 4 << 20 }, { "4M", 4 << 20 }, { "1GiB", 1 << 30 },
		{ "2 MiB", 2 << 20 },
	};
	struct conf	 c;
	char		*cause = NULL;
	size_t		 i;

	conf_init(&c);
	for (i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		assert_int_equal(conf_set(&c, "daemon", "max_pending_output",
		    forms[i].text, &cause), 0);
		assert_int_equal(c.max_pending_output, forms[i].value);
	}
	assert_int_equal(conf_set(&c, "daemon", "max_pending_output", "4PB",
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "not a size"));
	free(cause);
	/* Below the range. */
	assert_int_equal(conf_set(&c, "daemon", "max_pending_output", "10",
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "between"));
	free(cause);
	conf_done(&c);
}

static void
test_conf_unknown_key(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx,
	    "[daemon]\n"
	    "socket = /tmp/x.sock\n"
	    "\n"
	    "sockett = /tmp/y.sock\n", -EINVAL, 4);
	assert_non_null(strstr(cause, "unknown key \"sockett\" in [daemon]"));
	/* It lists what the section knows. */
	assert_non_null(strstr(cause,
	    "socket, state_dir, socket_group, admin_group"));
	assert_non_null(strstr(cause, "max_pending_output"));
	assert_null(strstr(cause, "poll_interval"));
	free(cause);
}

static void
test_conf_unknown_section(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx,
	    "[daemon]\n"
	    "socket = /tmp/x.sock\n"
	    "[schedular]\n"
	    "poll_interval = 10s\n", -EINVAL, 4);
	assert_non_null(strstr(cause, "unknown section [schedular]"));
	assert_non_null(strstr(cause, "daemon, gcp, scheduler"));
	free(cause);
}

static void
test_conf_key_outside_section(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx, "socket = /x\n", -EINVAL, 1);
	assert_non_null(strstr(cause, "outside any section"));
	free(cause);
}

static void
test_conf_bad_duration(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx,
	    "[scheduler]\n"
	    "quota_ttl = 30s\n"
	    "poll_interval = 5 minutes\n", -EINVAL, 3);
	assert_non_null(strstr(cause, "[scheduler] poll_interval"));
	assert_non_null(strstr(cause, "\"5 minutes\" is not a duration"));
	free(cause);
	cause = load_fails(fx, "[daemon]\nidle_timeout = -5s\n", -EINVAL, 2);
	free(cause);
	cause = load_fails(fx, "[daemon]\nidle_timeout = 0\n", -EINVAL, 2);
	assert_non_null(strstr(cause, "between"));
	free(cause);
}

static void
test_conf_bad_numbers(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx, "[daemon]\nmax_connections = lots\n",
	    -EINVAL, 2);
	assert_non_null(strstr(cause, "not an integer"));
	free(cause);
	cause = load_fails(fx, "[daemon]\nmax_connections = 0\n", -EINVAL, 2);
	assert_non_null(strstr(cause, "between 1 and"));
	free(cause);
	cause = load_fails(fx, "[daemon]\nmax_connections = 99999999999\n",
	    -EINVAL, 2);
	free(cause);
	cause = load_fails(fx, "[scheduler]\npreemptions_per_hour = 1/10\n",
	    -EINVAL, 2);
	assert_non_null(strstr(cause, "not a number"));
	free(cause);
	cause = load_fails(fx, "[daemon]\nlog_level = verbose\n", -EINVAL, 2);
	assert_non_null(strstr(cause, "error, warning, info or debug"));
	free(cause);
}

static void
test_conf_bad_list_item(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx, "[gcp]\nproviders = vertex, aws\n", -EINVAL, 2);
	assert_non_null(strstr(cause, "\"aws\""));
	assert_non_null(strstr(cause, "vertex,batch,gce"));
	free(cause);
}

static void
test_conf_list_continuation(void **state)
{
	struct fixture	*fx = *state;
	struct conf	 c;
	char		*cause = NULL;

	write_conf(fx,
	    "[gcp]\n"
	    "regions = us-central1,\n"
	    "  us-east1\n"
	    "providers =\n");
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), 0);
	assert_int_equal(c.regions.n, 2);
	assert_string_equal(c.regions.v[1], "us-east1");
	assert_int_equal(c.providers.n, 0);
	conf_done(&c);
}

static void
test_conf_syntax_error(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx, "[daemon]\nthis line has no equals\n", -EINVAL,
	    2);
	assert_non_null(strstr(cause, "syntax error"));
	free(cause);
}

static void
test_conf_long_line(void **state)
{
	struct fixture	*fx = *state;
	char		*text, *cause;
	size_t		 n = 400;

	text = xmalloc(n + 64);
	(void)strcpy(text, "[gcp]\nregions = ");
	memset(text + strlen(text), 'a', n);
	(void)strcpy(text + 16 + n, "\n");
	cause = load_fails(fx, text, -EINVAL, 2);
	assert_non_null(strstr(cause, "line longer than"));
	free(cause);
	free(text);
}

static void
test_conf_cross_checks(void **state)
{
	struct fixture	*fx = *state;
	char		*cause;

	cause = load_fails(fx, "[scheduler]\nbackoff_base = 1h\n", -EINVAL,
	    0);
	assert_non_null(strstr(cause, "backoff_base (3600s) is longer than "
	    "backoff_max (1800s)"));
	free(cause);
	/* Region names reach API paths and host names: only regions. */
	cause = load_fails(fx, "[gcp]\nregions = us-central1, us-east1-b\n",
	    -EINVAL, 0);
	assert_non_null(strstr(cause, "[gcp] regions: \"us-east1-b\" is a "
	    "zone; list its region us-east1 instead"));
	free(cause);
	cause = load_fails(fx, "[gcp]\nregions = ../x/y1\n", -EINVAL, 0);
	assert_non_null(strstr(cause, "\"../x/y1\" is not a region name"));
	free(cause);
	cause = load_fails(fx, "[gcp]\nregions = us-central1?a=1\n",
	    -EINVAL, 0);
	free(cause);
}

/* [gcp] reservations: auto or none alone, or reservation names. */
static void
test_conf_reservations(void **state)
{
	struct fixture	*fx = *state;
	struct conf	 c;
	char		*cause = NULL;

	write_conf(fx, "[gcp]\nreservations = team-a100, b2\n");
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), 0);
	assert_int_equal(c.reservations.n, 2);
	assert_string_equal(c.reservations.v[1], "b2");
	conf_done(&c);
	write_conf(fx, "[daemon]\n");
	assert_int_equal(conf_load(&c, fx->path, 1, &cause), 0);
	assert_int_equal(c.reservations.n, 1);
	assert_string_equal(c.reservations.v[0], "auto");
	conf_done(&c);
	cause = load_fails(fx, "[gcp]\nreservations = auto, team-a\n",
	    -EINVAL, 0);
	assert_non_null(strstr(cause, "[gcp] reservations: \"auto\" must "
	    "stand alone"));
	free(cause);
	cause = load_fails(fx, "[gcp]\nreservations = Team_A\n", -EINVAL, 0);
	assert_non_null(strstr(cause, "[gcp] reservations: \"Team_A\" is not "
	    "a reservation name"));
	free(cause);
	cause = load_fails(fx, "[gcp]\nreservations = ../x\n", -EINVAL, 0);
	free(cause);
	cause = load_fails(fx, "[gcp]\nreservations =\n", -EINVAL, 0);
	assert_non_null(strstr(cause, "[gcp] reservations is empty"));
	free(cause);
}

static void
test_conf_set_unknown(void **state)
{
	struct conf	 c;
	char		*cause = NULL;

	conf_init(&c);
	assert_int_equal(conf_set(&c, "daemon", "nope", "1", &cause),
	    -ENOENT);
	assert_non_null(strstr(cause, "unknown key \"nope\" in [daemon]"));
	free(cause);
	assert_int_equal(conf_set(&c, "nope", "socket", "1", &cause),
	    -ENOENT);
	assert_non_null(strstr(cause, "unknown section [nope]"));
	free(cause);
	assert_int_equal(conf_set(&c, "daemon", "socket", "/s", NULL), 0);
	assert_string_equal(c.socket, "/s");
	conf_done(&c);
}

/* The text of every default reads back as the same value. */
static void
test_conf_text_round_trip(void **state)
{
	const struct conf_key	*keys;
	struct conf		 c, d;
	char			*a, *b, *cause = NULL;
	size_t			 n, i;

	keys = conf_keys(&n);
	assert_true(n >= 30);
	conf_init(&c);
	conf_init(&d);
	for (i = 0; i < n; i++) {
		assert_non_null(conf_key_find(keys[i].section, keys[i].name));
		assert_non_null(keys[i].doc);
		a = conf_value_text(&c, &keys[i]);
		assert_int_equal(conf_set(&d, keys[i].section, keys[i].name, a,
		    &cause), 0);
		b = conf_value_text(&d, &keys[i]);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	conf_done(&c);
	conf_done(&d);
}

static void
test_conf_apply(void **state)
{
	struct conf	 cur, next;
	char		*cause = NULL;

	conf_init(&cur);
	conf_init(&next);
	assert_int_equal(conf_set(&next, "daemon", "log_level", "debug",
	    &cause), 0);
	assert_int_equal(conf_set(&next, "daemon", "max_connections", "7",
	    &cause), 0);
	assert_int_equal(conf_set(&next, "daemon", "socket", "/other",
	    &cause), 0);
	assert_int_equal(conf_set(&next, "scheduler", "poll_interval", "2m",
	    &cause), 0);
	assert_int_equal(conf_set(&next, "scheduler", "quota_ttl", "2m",
	    &cause), 0);
	assert_int_equal(conf_set(&next, "gcp", "project", "p-1", &cause),
	    0);
	log_init("test-conf", LOG_LEVEL_ERR, 0);	/* quiet */
	assert_int_equal(conf_apply(&cur, &next), 3);
	assert_int_equal(cur.log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(cur.max_connections, 7);
	assert_int_equal(cur.poll_interval, 120);
	/* quota_ttl is copied into the cloud side at start: kept. */
	assert_int_equal(cur.quota_ttl, 60);
	assert_string_equal(cur.project, "");
	/* The socket needs a restart: kept. */
	assert_string_equal(cur.socket, "/run/gpuq/gpuq.sock");
	assert_null(next.socket);		/* NEXT was emptied */
	conf_done(&cur);
}

/* Load TEXT into *C (must parse). */
static void
load_ok(struct fixture *fx, const char *text, struct conf *c)
{
	char	*cause = NULL;

	write_conf(fx, text);
	if (conf_load(c, fx->path, 1, &cause) != 0)
		fail_msg("%s", cause);
}

/*
 * A reload may not drop a key the running file set (an empty or cut
 * file), nor read a file whose last line is unfinished.
 */
static void
test_conf_reload_check(void **state)
{
	struct fixture	*fx = *state;
	struct conf	 cur, next;
	char		*cause = NULL, *want;

	load_ok(fx, "[daemon]\nadmin_group = wheel\nmax_connections = 99\n"
	    "[gcp]\nproject = p-1\n", &cur);

	load_ok(fx, "", &next);
	assert_int_equal(conf_reload_check(&cur, &next, fx->path, &cause),
	    -EINVAL);
	want = xprintf("%s: [daemon] admin_group, [daemon] max_connections, "
	    "[gcp] project are set in the running configuration but missing "
	    "from the file (empty or cut short?); write them again (with the "
	    "default value to go back to the default), or restart gpuqd to "
	    "start from this file", fx->path);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
	cause = NULL;
	conf_done(&next);

	/* Cut short: the last line lacks its newline. */
	load_ok(fx, "[daemon]\nadmin_group = wheel\nmax_connections = 99\n"
	    "[gcp]\nproject = p", &next);
	assert_int_equal(conf_reload_check(&cur, &next, fx->path, &cause),
	    -EINVAL);
	want = xprintf("%s:5: the last line does not end with a newline: "
	    "the file may be half-written; finish it (with a newline) and "
	    "reload again", fx->path);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
	cause = NULL;
	conf_done(&next);

	/* Every key there again, with new values, and more: fine. */
	load_ok(fx, "[daemon]\nadmin_group = gpuq\nmax_connections = 256\n"
	    "log_level = debug\n[gcp]\nproject = p-1\n", &next);
	assert_int_equal(conf_reload_check(&cur, &next, fx->path, &cause), 0);
	assert_null(cause);
	log_init("test-conf", LOG_LEVEL_ERR, 0);	/* quiet */
	(void)conf_apply(&cur, &next);
	assert_string_equal(cur.admin_group, "gpuq");
	/* The file now running sets log_level too: it must stay. */
	load_ok(fx, "[daemon]\nadmin_group = gpuq\nmax_connections = 256\n"
	    "[gcp]\nproject = p-1\n", &next);
	assert_int_equal(conf_reload_check(&cur, &next, fx->path, &cause),
	    -EINVAL);
	assert_non_null(strstr(cause, ": [daemon] log_level is set in the "
	    "running configuration"));
	free(cause);
	cause = NULL;
	conf_done(&next);

	/* The file gone. */
	assert_int_equal(unlink(fx->path), 0);
	assert_int_equal(conf_load(&next, fx->path, 0, &cause), 0);
	assert_int_equal(conf_reload_check(&cur, &next, fx->path, &cause),
	    -EINVAL);
	want = xprintf("%s: the file is gone; the running configuration came "
	    "from it", fx->path);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
	conf_done(&next);
	conf_done(&cur);
}

/* The text of man/gpuqd.conf.5 (new). */
static char *
man_page_text(void)
{
	char	*path, *text;
	FILE	*f;
	long	 size;

	path = xprintf("%s/man/gpuqd.conf.5", GPUQ_TEST_SRCDIR);
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	text = xmalloc((size_t)size + 1);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	(void)fclose(f);
	free(path);
	return text;
}

/* gpuqd.conf(5) names every key of the table, with its default. */
static void
test_conf_man_page_lists_every_key(void **state)
{
	const struct conf_key	*keys;
	char			*text, *want;
	size_t			 n, i;

	text = man_page_text();
	keys = conf_keys(&n);
	for (i = 0; i < n; i++) {
		want = xprintf(".It Cm %s ", keys[i].name);
		if (strstr(text, want) == NULL)
			fail_msg("gpuqd.conf(5) does not document [%s] %s",
			    keys[i].section, keys[i].name);
		free(want);
	}
	free(text);
}

/*
 * Each key's entry in gpuqd.conf(5) says whether a reload applies it
 * (".Sy reload .") or it needs a restart (".Sy restart ."), as the
 * table's CONF_RESTART says.
 */
static void
test_conf_man_page_marks_reload(void **state)
{
	const struct conf_key	*keys;
	char			*text, *want, *at, *end, *entry;
	const char		*mark;
	size_t			 n, i;

	text = man_page_text();
	keys = conf_keys(&n);
	for (i = 0; i < n; i++) {
		want = xprintf(".It Cm %s =", keys[i].name);
		at = strstr(text, want);
		free(want);
		if (at == NULL) {
			fail_msg("no entry for [%s] %s", keys[i].section,
			    keys[i].name);
			break;		/* not reached: gcc cannot tell */
		}
		end = strstr(at + 1, "\n.It ");
		if (end == NULL || (strstr(at, "\n.El") != NULL &&
		    strstr(at, "\n.El") < end))
			end = strstr(at, "\n.El");
		assert_non_null(end);
		entry = xstrndup(at, (size_t)(end - at));
		mark = keys[i].flags & CONF_RESTART ? "\n.Sy restart .\n" :
		    "\n.Sy reload .\n";
		if (strstr(entry, mark) == NULL)
			fail_msg("gpuqd.conf(5) does not mark [%s] %s as%s",
			    keys[i].section, keys[i].name, mark + 4);
		free(entry);
	}
	free(text);
}

/*
 * The default gpuqd.conf(5) writes for KEY's entry in TEXT: "" for
 * "Default: empty.", else the word of the ".Ql X ." (or .Pa, .Lk) line
 * after "Default:". New string; NULL if the entry has none.
 */
static char *
man_page_default(const char *text, const char *key)
{
	const char	*p, *end, *d, *v, *e;
	char		*want;

	want = xprintf(".It Cm %s ", key);
	p = strstr(text, want);
	free(want);
	if (p == NULL)
		return NULL;
	p++;
	if ((end = strstr(p, "\n.It ")) == NULL &&
	    (end = strstr(p, "\n.El")) == NULL)
		end = p + strlen(p);
	if ((d = strstr(p, "Default:")) == NULL || d > end)
		return NULL;
	d += strlen("Default:");
	if (strncmp(d, " empty.", 7) == 0)
		return xstrdup("");
	if (*d != '\n' || d[1] != '.' || (v = strchr(d + 1, ' ')) == NULL)
		return NULL;
	v++;
	if ((e = strstr(v, " .\n")) == NULL || e > end)
		return NULL;
	return xstrndup(v, (size_t)(e - v));
}

/* Every "Default:" gpuqd.conf(5) writes reads as the table's default. */
static void
test_conf_man_page_defaults(void **state)
{
	const struct conf_key	*keys;
	struct conf		 c, d;
	char			*text, *def, *a, *b, *cause = NULL;
	size_t			 n, i, seen = 0;

	text = man_page_text();
	keys = conf_keys(&n);
	conf_init(&c);
	for (i = 0; i < n; i++) {
		if ((def = man_page_default(text, keys[i].name)) == NULL)
			continue;
		seen++;
		conf_init(&d);
		if (conf_set(&d, keys[i].section, keys[i].name, def,
		    &cause) != 0)
			fail_msg("gpuqd.conf(5) [%s] %s default \"%s\": %s",
			    keys[i].section, keys[i].name, def, cause);
		a = conf_value_text(&c, &keys[i]);
		b = conf_value_text(&d, &keys[i]);
		if (strcmp(a, b) != 0)
			fail_msg("gpuqd.conf(5) gives [%s] %s the default "
			    "\"%s\"; gpuqd's is \"%s\"", keys[i].section,
			    keys[i].name, b, a);
		free(a);
		free(b);
		free(def);
		conf_done(&d);
	}
	conf_done(&c);
	free(text);
	assert_true(seen >= 25);	/* the parse found the entries */
}

/* G reaches API at WANT when nothing is configured. */
static void
check_url(const struct gcp_conf *g, enum gcp_api api, const char *want)
{
	char	*url;

	/* "{region}" for REGION gives the Vertex template back. */
	url = gcp_base_url(g, api, "{region}");
	assert_string_equal(url, want);
	free(url);
}

/*
 * gpuqd.conf's defaults are the gcp layer's: an untouched gpuqd.conf and
 * a gcp_conf that sets nothing reach the same URLs with the same quota
 * TTL, price refresh and request budget (both read gcp-defaults.h).
 */
static void
test_conf_gcp_defaults_agree(void **state)
{
	struct conf	 c;
	struct gcp_conf	 empty, *g;

	(void)state;
	assert_int_equal(unsetenv("GCE_METADATA_HOST"), 0);
	assert_int_equal(conf_init(&c), 0);
	memset(&empty, 0, sizeof empty);
	g = gcp_conf_dup(&empty);
	check_url(g, GCP_API_COMPUTE, c.compute_endpoint);
	check_url(g, GCP_API_BATCH, c.batch_endpoint);
	check_url(g, GCP_API_VERTEX, c.vertex_endpoint);
	check_url(g, GCP_API_BILLING, c.billing_endpoint);
	check_url(g, GCP_API_STORAGE, c.storage_endpoint);
	check_url(g, GCP_API_UPLOAD, c.storage_endpoint);
	check_url(g, GCP_API_QUOTAS, c.quotas_endpoint);
	check_url(g, GCP_API_TOKEN, c.token_endpoint);
	check_url(g, GCP_API_METADATA, c.metadata_endpoint);
	assert_int_equal(g->quota_ttl, c.quota_ttl);
	assert_int_equal(g->price_refresh, c.price_refresh);
	assert_int_equal(g->request_budget, c.request_budget);
	/* Under Vertex AI's 600 a minute per region (DESIGN GH.6). */
	assert_int_equal(c.request_budget, 600);
	gcp_conf_free(g);
	conf_done(&c);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_conf_defaults),
		cmocka_unit_test_setup_teardown(test_conf_missing_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_every_type, setup,
		    teardown),
		cmocka_unit_test(test_conf_bool_forms),
		cmocka_unit_test(test_conf_size_forms),
		cmocka_unit_test_setup_teardown(test_conf_unknown_key, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_unknown_section,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_conf_key_outside_section,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_conf_bad_duration, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_bad_numbers, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_bad_list_item, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_list_continuation,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_conf_syntax_error, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_long_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_conf_reservations,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_conf_cross_checks, setup,
		    teardown),
		cmocka_unit_test(test_conf_set_unknown),
		cmocka_unit_test(test_conf_text_round_trip),
		cmocka_unit_test(test_conf_apply),
		cmocka_unit_test_setup_teardown(test_conf_reload_check, setup,
		    teardown),
		cmocka_unit_test(test_conf_man_page_lists_every_key),
		cmocka_unit_test(test_conf_man_page_marks_reload),
		cmocka_unit_test(test_conf_man_page_defaults),
		cmocka_unit_test(test_conf_gcp_defaults_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
