/*
 * fuzz-request.c: the request decoder and the ops behind it
 * (daemon/api.c api_request), fed lines as the server feeds them: the
 * stream is framed by common/frame.c, lines that are not UTF-8 are
 * refused before the api sees them (as server.c does), and each group
 * commit runs when the api asks to wait (-EAGAIN) and at the end.
 *
 * The server's client is played by the small struct below, which checks
 * that every reply is one JSON object with "ok", and that every
 * deferred reply is settled. The store is real: a database in a private
 * directory (on tmpfs when there is one), opened once and replaced
 * every few thousand inputs so it does not grow without end. No cloud
 * side is set (api_set_cloud), so the cloud ops answer "unavailable"
 * through api-cloud.c at once.
 *
 * Input: byte 0 bit 0 picks the peer (the owner of the jobs the input
 * submits, or another user); the rest is the stream.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <uv.h>

#include "common/frame.h"
#include "common/jsonw.h"
#include "common/proto.h"
#include "common/xmalloc.h"
#include "daemon/api.h"
#include "daemon/conf.h"
#include "daemon/server.h"
#include "store/store.h"
#include "fuzz/fuzz.h"

#define REQUEST_FUZZ_RECYCLE	4096	/* inputs per store */

struct server_client {
	struct server_peer	peer;
	int			owed;
	int			replies;
};

static struct {
	uv_loop_t	 loop;
	struct conf	 conf;
	struct store	*store;
	struct api	*api;
	unsigned	 runs;
} rf;

/* -- the server's side, as api.c sees it ------------------------------ */

static void
request_fuzz_check_reply(const char *json, size_t len)
{
	json_t	*v;

	v = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(v) || !json_is_boolean(json_object_get(v, "ok"))) {
		fprintf(stderr, "bad reply: %.*s\n", (int)len, json);
		abort();
	}
	json_decref(v);
}

const struct server_peer *
server_client_peer(const struct server_client *c)
{
	return &c->peer;
}

int
server_client_in_group(struct server_client *c, gid_t gid)
{
	return c->peer.gid == gid;
}

int
server_client_owed(const struct server_client *c)
{
	return c->owed;
}

int
server_client_gone(struct server_client *c)
{
	return 0;
}

void
server_client_reply(struct server_client *c, const char *json, size_t len)
{
	request_fuzz_check_reply(json, len);
	c->replies++;
}

void
server_client_reply_take(struct server_client *c, char *buf, size_t len,
    size_t cap)
{
	if (len >= cap)
		abort();
	server_client_reply(c, buf, len);
	free(buf);
}

void
server_client_reply_jsonw(struct server_client *c, struct jsonw *w)
{
	server_client_reply(c, w->buf, w->len);
}

/*
 * As the server writes it (server.c): with the jsonw writer, which
 * gives bytes that are not UTF-8 (the "near" text of jansson's error
 * can end inside a character) as U+FFFD. The reply check then parses
 * what a client would read.
 */
void
server_client_error(struct server_client *c, const char *code,
    const char *field, const char *fmt, ...)
{
	struct jsonw	 w;
	va_list		 ap;
	char		*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (code == NULL || msg == NULL)
		abort();
	jsonw_init(&w);
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "ok");
	jsonw_bool(&w, 0);
	JSONW_KEY(&w, "error");
	jsonw_object_begin(&w);
	JSONW_KEY(&w, "code");
	jsonw_string(&w, code);
	JSONW_KEY(&w, "message");
	jsonw_string(&w, msg);
	if (field != NULL) {
		JSONW_KEY(&w, "field");
		jsonw_string(&w, field);
	}
	jsonw_object_end(&w);
	jsonw_object_end(&w);
	server_client_reply_jsonw(c, &w);
	jsonw_done(&w);
	free(msg);
}

void
server_client_defer(struct server_client *c)
{
	c->owed++;
}

void
server_client_settle(struct server_client *c)
{
	if (c->owed <= 0)
		abort();
	c->owed--;
}

static void
request_fuzz_open(void)
{
	char	path[512], *cause = NULL;

	if (rf.api != NULL) {
		api_close(rf.api);
		(void)uv_run(&rf.loop, UV_RUN_DEFAULT);
		store_close(rf.store);
	} else {
		fuzz_quiet();
		if (uv_loop_init(&rf.loop) != 0 || conf_init(&rf.conf) != 0)
			abort();
		free(rf.conf.project);
		rf.conf.project = xstrdup("fuzz-project");
	}
	snprintf(path, sizeof path, "%s/gpuq.db", fuzz_tmpdir());
	(void)unlink(path);
	snprintf(path, sizeof path, "%s/gpuq.db-wal", fuzz_tmpdir());
	(void)unlink(path);
	snprintf(path, sizeof path, "%s/gpuq.db-shm", fuzz_tmpdir());
	(void)unlink(path);
	snprintf(path, sizeof path, "%s/gpuq.db", fuzz_tmpdir());
	if (store_open(path, &rf.store, &cause) != 0) {
		fprintf(stderr, "store_open: %s\n", cause);
		abort();
	}
	rf.api = api_new(&rf.loop, rf.store, &rf.conf);
}

/* One line, as server_client_line() offers it. */
static void
request_fuzz_line(struct server_client *c, const char *line, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			break;
	if (i == len || !utf8_valid(line, len))
		return;
	if (api_request(rf.api, c, line, len) == -EAGAIN) {
		api_commit(rf.api);
		api_wait_forget(rf.api, c);
		if (c->owed != 0 || api_request(rf.api, c, line, len) != 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server_client	 c;
	struct frame		 f;
	char			*line;
	size_t			 len;
	int			 rc;

	if (size < 1)
		return 0;
	if (rf.api == NULL || ++rf.runs % REQUEST_FUZZ_RECYCLE == 0)
		request_fuzz_open();
	memset(&c, 0, sizeof c);
	c.peer.uid = getuid() + (data[0] & 1);
	c.peer.gid = (gid_t)-2;
	c.peer.pid = getpid();

	frame_init(&f, GPUQ_MAX_LINE);
	frame_feed(&f, (const char *)data + 1, size - 1);
	for (;;) {
		while ((rc = frame_next(&f, &line, &len)) != 0)
			if (rc > 0)
				request_fuzz_line(&c, line, len);
		/* End of stream: the server ends the last line for it. */
		if (frame_pending(&f) == 0)
			break;
		frame_feed(&f, "\n", 1);
	}
	frame_done(&f);
	api_commit(rf.api);
	/* A wait on a live job is answered later; this client goes now. */
	api_wait_forget(rf.api, &c);
	if (c.owed != 0)
		abort();
	return 0;
}
