/*
 * gcptest.c: the simulated cloud's part of the unit tests' fixture and
 * the helpers of the tests of the cloud (see gcptest.h). Starts a
 * private fakegcp per test, talks to its control API with a blocking
 * libcurl handle, and makes RSA keys with OpenSSL.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/http.h"
#include "tests/unit/gcptest.h"
#include "tests/unit/unittest.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif
#define PYTHON	"/usr/bin/python3"

static char *
fake_script(void)
{
	const char	*top = getenv("top_srcdir");

	return xprintf("%s/tests/fakegcp/fakegcp.py",
	    top != NULL && *top != '\0' ? top : TOP_SRCDIR);
}

int
fake_available(void)
{
	char	*s = fake_script();
	int	 ok;

	ok = access(s, R_OK) == 0 && access(PYTHON, X_OK) == 0;
	free(s);
	return ok;
}

/*
 * Start ARGV (ARGV[0] the program) in F->dir with its stdout on a pipe
 * and its stderr appended to ERRLOG (NULL: left as ours), and read the
 * first line it prints, its base URL, into F->url. 0, or -errno with
 * the child stopped.
 */
static int
fake_spawn(struct fake *f, const char *const argv[], const char *errlog)
{
	char		buf[256];
	int		p[2], fd, rc;
	size_t		len = 0;
	ssize_t		n;
	struct pollfd	pfd;

	if (pipe(p) < 0)
		return -errno;
	if ((f->pid = fork()) < 0) {
		rc = -errno;
		f->pid = 0;
		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (f->pid == 0) {
#ifdef __linux__
		/* A test that crashes takes its server with it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (errlog != NULL && (fd = open(errlog, O_WRONLY | O_CREAT |
		    O_APPEND, 0600)) >= 0)
			dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	while (len < sizeof buf - 1 && memchr(buf, '\n', len) == NULL) {
		if (poll(&pfd, 1, 20000) <= 0)
			break;
		n = read(p[0], buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(p[0]);
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, "http://", 7) != 0 || strlen(buf) >= sizeof f->url) {
		fake_stop(f);
		return -EIO;
	}
	memcpy(f->url, buf, strlen(buf) + 1);
	return 0;
}

int
fake_start_in(struct fake *f, const char *dir)
{
	char		*script, *log;
	const char	*argv[] = { PYTHON, NULL, "--port", "0", "--state-dir",
	    NULL, NULL };
	int		 rc;

	memset(f, 0, sizeof *f);
	if (strlen(dir) >= sizeof f->dir)
		return -ENAMETOOLONG;
	memcpy(f->dir, dir, strlen(dir) + 1);
	argv[1] = script = fake_script();
	argv[5] = f->dir;
	log = xprintf("%s/fakegcp.stderr", f->dir);
	rc = fake_spawn(f, argv, log);
	free(log);
	free(script);
	return rc;
}

void
fake_stop(struct fake *f)
{
	int	status;

	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		(void)waitpid(f->pid, &status, 0);
		f->pid = 0;
	}
}

struct fake_buf {
	char	*p;
	size_t	 len;
};

static size_t
fake_write(char *ptr, size_t size, size_t n, void *arg)
{
	struct fake_buf	*b = arg;

	b->p = xrealloc(b->p, b->len + size * n + 1);
	memcpy(b->p + b->len, ptr, size * n);
	b->len += size * n;
	b->p[b->len] = '\0';
	return size * n;
}

json_t *
fake_ctl(struct fake *f, const char *method, const char *path,
    const char *body)
{
	struct fake_buf		 b = { NULL, 0 };
	struct curl_slist	*h = NULL;
	CURL			*c;
	char			*url;
	long			 status = 0;
	json_t			*j = NULL;

	if ((c = curl_easy_init()) == NULL)
		return NULL;
	url = xprintf("%s%s", f->url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fake_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	if (body != NULL) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	if (curl_easy_perform(c) == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200 && b.p != NULL)
			j = json_loads(b.p, 0, NULL);
		else if (b.p != NULL)
			fprintf(stderr, "fake_ctl %s %s: %ld %s\n", method,
			    path, status, b.p);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	free(b.p);
	return j;
}

json_t *
fake_post(struct fake *f, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	*body;
	json_t	*j;

	va_start(ap, fmt);
	if (vasprintf(&body, fmt, ap) < 0)
		abort();
	va_end(ap);
	j = fake_ctl(f, "POST", path, body);
	free(body);
	if (j == NULL) {
		fprintf(stderr, "fake_post %s failed\n", path);
		abort();
	}
	return j;
}

void
fake_conf(struct fake *f, struct gcp_conf *c)
{
	memset(c, 0, sizeof *c);
	c->project = "gpuq-demo";
	c->endpoint = f != NULL && f->pid > 0 ? f->url : NULL;
	c->retry_base_ms = 50;
	c->retry_cap_ms = 400;
	c->retry_max_attempts = 5;
	c->request_timeout_ms = 20000;
	c->price_table = "";
}

/* One RSA key per test program: generating is the slow part. */
static EVP_PKEY *
test_key(void)
{
	static EVP_PKEY	*key;

	if (key == NULL && (key = EVP_RSA_gen(2048)) == NULL)
		abort();
	return key;
}

static char *
test_pem(int public)
{
	BIO	*b = BIO_new(BIO_s_mem());
	char	*p, *out;
	long	 n;

	if (public)
		PEM_write_bio_PUBKEY(b, test_key());
	else
		PEM_write_bio_PrivateKey(b, test_key(), NULL, NULL, 0, NULL,
		    NULL);
	n = BIO_get_mem_data(b, &p);
	out = xstrndup(p, (size_t)n);
	BIO_free(b);
	return out;
}

void
fake_make_key(struct fake *f, const char *path, const char *email, int reg)
{
	json_t	*k, *body, *r;
	char	*priv = test_pem(0), *pub = test_pem(1), *s, *tu;
	int	 fd;

	tu = xprintf("%s/token", f->url);
	k = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
	    "type", "service_account", "project_id", "gpuq-demo",
	    "private_key_id", "0123456789abcdef", "private_key", priv,
	    "client_email", email, "client_id", "1234567890",
	    "token_uri", tu, "universe_domain", "googleapis.com");
	s = json_dumps(k, JSON_INDENT(2));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		abort();
	close(fd);
	chmod(path, 0600);
	if (reg) {
		body = json_pack("{s:s, s:s}", "client_email", email,
		    "public_key_pem", pub);
		free(s);
		s = json_dumps(body, JSON_COMPACT);
		if ((r = fake_ctl(f, "POST", "/_fake/service_account", s)) ==
		    NULL)
			abort();
		json_decref(r);
		json_decref(body);
	}
	free(s);
	free(tu);
	free(priv);
	free(pub);
	json_decref(k);
}

static json_t *
fake_requests_once(struct fake *f, const char *method, const char *regex)
{
	json_t	*all, *out, *r;
	regex_t	 re;
	size_t	 i;
	const char *p, *m;

	out = json_array();
	if ((all = fake_ctl(f, "GET", "/_fake/requests", NULL)) == NULL)
		return out;
	if (regcomp(&re, regex, REG_EXTENDED | REG_NOSUB) != 0)
		abort();
	json_array_foreach(json_object_get(all, "requests"), i, r) {
		p = json_string_value(json_object_get(r, "path"));
		m = json_string_value(json_object_get(r, "method"));
		if (p == NULL || m == NULL)
			continue;
		if (method != NULL && strcmp(method, m) != 0)
			continue;
		if (regexec(&re, p, 0, NULL, 0) == 0)
			json_array_append(out, r);
	}
	regfree(&re);
	json_decref(all);
	return out;
}

json_t *
fake_requests(struct fake *f, const char *method, const char *regex,
    size_t want)
{
	json_t	*out;
	int	 i;

	for (i = 0; i < 100; i++) {
		out = fake_requests_once(f, method, regex);
		if (json_array_size(out) >= want)
			break;
		json_decref(out);
		out = NULL;
		usleep(20000);
	}
	if (out == NULL)
		out = fake_requests_once(f, method, regex);
	return out;
}

static const char mini_py[] =
    "import http.server, sys\n"
    "body = sys.argv[1].encode()\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Type', 'application/json')\n"
    "        self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(body)\n"
    "    def log_message(self, *a):\n"
    "        pass\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "print('http://127.0.0.1:%d' % s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

int
mini_start(struct fake *f, const char *body)
{
	const char	*argv[] = { PYTHON, "-c", mini_py, body, NULL };

	memset(f, 0, sizeof *f);
	return fake_spawn(f, argv, NULL);
}

static void
gcptest_done_fake(struct unittest *ut)
{
	if (ut->fake.pid > 0)
		fake_stop(&ut->fake);
	free(ut->gcp);
	ut->gcp = NULL;
}

void
gcptest_fake(struct unittest *ut)
{
	int	rc;

	(void)unittest_loop(ut);
	ut->gcp = xcalloc(1, sizeof *ut->gcp);
	ut->done_fake = gcptest_done_fake;
	unittest_clean_env(ut);
	if (fake_available() &&
	    (rc = fake_start_in(&ut->fake, ut->dir)) != 0)
		fail_msg("the simulated cloud did not start: %s",
		    strerror(-rc));
	fake_conf(&ut->fake, ut->gcp);
}

static void
gcptest_done_http(struct unittest *ut)
{
	http_cancel_all(ut->http);
	auth_free(ut->auth);
	http_free(ut->http);
	ut->auth = NULL;
	ut->http = NULL;
}

void
gcptest_http(struct unittest *ut)
{
	assert_int_equal(http_new(ut->loop, ut->gcp, &ut->http), 0);
	ut->done_http = gcptest_done_http;
}

void
gcptest_auth(struct unittest *ut)
{
	char	*cause = NULL;
	int	 rc;

	rc = auth_new(ut->http, ut->gcp, &ut->auth, &cause);
	if (rc != 0)
		fail_msg("auth_new: %d %s", rc, cause != NULL ? cause : "");
	http_set_token_source(ut->http, auth_token_source(ut->auth));
}

void
gcptest_cancel(struct unittest *ut)
{
	http_cancel_all(ut->http);
}

void
gcptest_rec_cb(const struct http_resp *r, void *arg)
{
	struct gcptest_rec	*rec = arg;

	rec->done++;
	rec->status = r->status;
	rec->kind = r->err.kind;
	rec->attempts = r->attempts;
	rec->elapsed = r->elapsed;
	free(rec->msg);
	rec->msg = r->err.message != NULL ? xstrdup(r->err.message) : NULL;
	json_decref(rec->json);
	rec->json = json_incref(r->json);
	gcp_error_copy(&rec->err, &r->err);
	if (rec->count != NULL)
		(*rec->count)++;
}

void
gcptest_rec_done(struct gcptest_rec *rec)
{
	free(rec->msg);
	json_decref(rec->json);
	gcp_error_done(&rec->err);
	memset(rec, 0, sizeof *rec);
}

void
gcptest_request(struct unittest *ut, const struct http_req *req,
    struct gcptest_rec *rec)
{
	assert_int_equal(http_request_start(ut->http, req, gcptest_rec_cb,
	    rec), 0);
	unittest_run(ut);
	assert_int_equal(rec->done, 1);
}

void
gcptest_get(struct unittest *ut, const char *url, struct gcptest_rec *rec)
{
	struct http_req	req = { .url = url, .flags = HTTP_AUTH,
	    .api = GCP_API_COMPUTE };

	gcptest_request(ut, &req, rec);
}

void
gcptest_result_cb(int error, const char *cause, void *arg)
{
	struct gcptest_result	*res = arg;

	res->calls++;
	res->error = error;
	free(res->cause);
	res->cause = cause != NULL ? xstrdup(cause) : NULL;
}

void
gcptest_result_done(struct gcptest_result *res)
{
	free(res->cause);
	memset(res, 0, sizeof *res);
}
