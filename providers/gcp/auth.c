/*
 * auth.c: Application Default Credentials and the access-token cache.
 *
 * Finds credentials in Google's order (DESIGN GH.1), reads a key file
 * once at start (refusing one that others can read), and turns it into
 * short-lived access tokens on demand (H.3): a JWT signed RS256 with
 * OpenSSL for a service account, a refresh-token grant for a gcloud
 * user, or a GET from the metadata server. One fetch at a time; whoever
 * needs a token meanwhile waits on it (http.h's struct http_token_wait):
 * auth_token_source() is how the HTTP client asks.
 *
 * Secrets (the private key, client secret, refresh token, access token,
 * the signed assertion) are never logged, and are wiped before their
 * memory is freed. Knows nothing of the APIs the tokens are for.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"

#define AUTH_MAX_FILE		(1024 * 1024)
#define AUTH_MARGIN_MS		(5 * 60 * 1000)	/* refresh this early */
#define AUTH_JWT_LIFETIME	3600		/* s, Google's maximum */
#define AUTH_METADATA_TIMEOUT	5000		/* ms per attempt */
#define AUTH_GRANT_JWT	"urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"

TAILQ_HEAD(auth_waiters, http_token_wait);

struct auth {
	struct http		*http;		/* borrowed */
	enum auth_kind		 kind;
	char			*describe;
	char			*file;		/* key file, or NULL */
	char			*project;	/* from the file, or NULL */

	char			*token_url;	/* where tokens come from */
	char			*audience;	/* JWT "aud" */
	char			*client_email;
	char			*key_id;
	EVP_PKEY		*key;
	char			*client_id;
	char			*client_secret;
	char			*refresh_token;
	char			*gcloud_file;	/* looked for, for errors */
	char			*quota_project;	/* x-goog-user-project */

	char			*token;		/* cached access token */
	uint64_t		 expires;	/* uv_now() ms */
	uint64_t		 margin; /* ms before expiry to refresh */
	int			 fetching;
	unsigned long		 fetches;
	unsigned long		 seq;		/* next waiter's */
	int			 notifying;	/* inside auth_notify() */
	int			 dead;		/* freed while notifying */
	struct auth_waiters	 waiters;
	struct http_token_source src;		/* auth_token_source() */
};

static void	auth_fetch(struct auth *);
static const char *auth_source_get(void *, struct http_token_wait *);
static void	auth_source_cancel(void *, struct http_token_wait *);
static void	auth_source_invalidate(void *, const char *);

/* Wipe a string jansson owns (a secret read from a key file). */
static void
auth_wipe_json_string(json_t *v)
{
	if (json_is_string(v))
		explicit_bzero((char *)json_string_value(v),
		    json_string_length(v));
}

/* Read FILE whole into a new buffer; checks mode first. */
static int
auth_read_file(const char *file, char **ret, size_t *ret_len, char **cause)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd, rc;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		if (cause != NULL)
			*cause = xprintf("credentials %s: %s", file,
			    strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		if (cause != NULL)
			*cause = xprintf("credentials %s: %s", file,
			    strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		close(fd);
		if (cause != NULL)
			*cause = xprintf("credentials %s: not a regular file",
			    file);
		return rc;
	}
	if (st.st_mode & (S_IRGRP | S_IROTH)) {
		close(fd);
		if (cause != NULL)
			*cause = xprintf("credentials %s is readable by "
			    "others (mode %04o); run: chmod 600 %s", file,
			    (unsigned)(st.st_mode & 07777), file);
		return -EPERM;
	}
	if (st.st_size > AUTH_MAX_FILE) {
		close(fd);
		if (cause != NULL)
			*cause = xprintf("credentials %s: larger than 1 MiB, "
			    "not a key file", file);
		return -EINVAL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

static const char *
auth_str(json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL && *s != '\0' ? s : NULL;
}

/* Token URL: the configured override, else the file's, else Google's. */
static char *
auth_token_url(const struct gcp_conf *conf, const char *from_file)
{
	if ((conf->token_endpoint != NULL && *conf->token_endpoint != '\0') ||
	    (conf->endpoint != NULL && *conf->endpoint != '\0'))
		return gcp_url(conf, GCP_API_TOKEN, NULL, "%s", "");
	return xstrdup(from_file != NULL ? from_file :
	    GCP_DEFAULT_TOKEN_ENDPOINT);
}

static int
auth_load_service_account(struct auth *a, const struct gcp_conf *conf,
    json_t *j, char **cause)
{
	json_t		*pk = json_object_get(j, "private_key");
	BIO		*bio;
	const char	*uri;

	if (auth_str(j, "client_email") == NULL || !json_is_string(pk)) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: a service_account "
			    "key needs client_email and private_key",
			    a->file);
		return -EINVAL;
	}
	bio = BIO_new_mem_buf(json_string_value(pk),
	    (int)json_string_length(pk));
	if (bio == NULL)
		fatalx("BIO_new_mem_buf failed");
	a->key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (a->key == NULL || EVP_PKEY_base_id(a->key) != EVP_PKEY_RSA) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: private_key is not "
			    "an RSA key in PEM form", a->file);
		return -EINVAL;
	}
	a->kind = AUTH_SERVICE_ACCOUNT;
	a->client_email = xstrdup(auth_str(j, "client_email"));
	if (auth_str(j, "private_key_id") != NULL)
		a->key_id = xstrdup(auth_str(j, "private_key_id"));
	uri = auth_str(j, "token_uri");
	a->audience = xstrdup(uri != NULL ? uri : GCP_DEFAULT_TOKEN_ENDPOINT);
	a->token_url = auth_token_url(conf, uri);
	return 0;
}

static int
auth_load_user(struct auth *a, const struct gcp_conf *conf, json_t *j,
    char **cause)
{
	if (auth_str(j, "client_id") == NULL ||
	    auth_str(j, "client_secret") == NULL ||
	    auth_str(j, "refresh_token") == NULL) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: an authorized_user "
			    "file needs client_id, client_secret and "
			    "refresh_token; run `gcloud auth "
			    "application-default login` again", a->file);
		return -EINVAL;
	}
	a->kind = AUTH_AUTHORIZED_USER;
	if (auth_str(j, "quota_project_id") != NULL)
		a->quota_project = xstrdup(auth_str(j, "quota_project_id"));
	a->client_id = xstrdup(auth_str(j, "client_id"));
	a->client_secret = xstrdup(auth_str(j, "client_secret"));
	a->refresh_token = xstrdup(auth_str(j, "refresh_token"));
	a->token_url = auth_token_url(conf, auth_str(j, "token_uri"));
	return 0;
}

/* Read key file FILE (found through WHERE) into A. */
static int
auth_load_file(struct auth *a, const struct gcp_conf *conf, const char *file,
    const char *where, char **cause)
{
	json_error_t	 jerr;
	json_t		*j;
	const char	*type;
	char		*buf = NULL;
	size_t		 len = 0;
	int		 rc;

	if ((rc = auth_read_file(file, &buf, &len, cause)) < 0)
		return rc;
	a->file = xstrdup(file);
	j = json_loadb(buf, len, 0, &jerr);
	explicit_bzero(buf, len);
	free(buf);
	if (!json_is_object(j)) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: not a JSON key file "
			    "(line %d: %s)", file, jerr.line, jerr.text);
		json_decref(j);
		return -EINVAL;
	}
	type = auth_str(j, "type");
	if (auth_str(j, "project_id") != NULL)
		a->project = xstrdup(auth_str(j, "project_id"));
	else if (auth_str(j, "quota_project_id") != NULL)
		a->project = xstrdup(auth_str(j, "quota_project_id"));
	if (type != NULL && strcmp(type, "service_account") == 0) {
		rc = auth_load_service_account(a, conf, j, cause);
		if (rc == 0)
			a->describe = xprintf("service account %s (key %s, "
			    "from %s)", a->client_email, file, where);
	} else if (type != NULL && strcmp(type, "authorized_user") == 0) {
		rc = auth_load_user(a, conf, j, cause);
		if (rc == 0)
			a->describe = xprintf("user credentials %s (from %s)",
			    file, where);
	} else {
		if (cause != NULL)
			*cause = xprintf("credentials %s: type \"%s\" is not "
			    "supported; use a service_account key or "
			    "authorized_user credentials", file,
			    type != NULL ? type : "(none)");
		rc = -EINVAL;
	}
	auth_wipe_json_string(json_object_get(j, "private_key"));
	auth_wipe_json_string(json_object_get(j, "client_secret"));
	auth_wipe_json_string(json_object_get(j, "refresh_token"));
	json_decref(j);
	return rc;
}

/* gcloud's ADC file: $CLOUDSDK_CONFIG or ~/.config/gcloud. New string. */
static char *
auth_gcloud_file(void)
{
	const char	*d;

	if ((d = getenv("CLOUDSDK_CONFIG")) != NULL && *d != '\0')
		return xprintf("%s/application_default_credentials.json", d);
	if ((d = getenv("HOME")) != NULL && *d != '\0')
		return xprintf("%s/.config/gcloud/"
		    "application_default_credentials.json", d);
	return NULL;
}

int
auth_new(struct http *http, const struct gcp_conf *conf, struct auth **ret,
    char **cause)
{
	struct auth	*a;
	const char	*env;
	int		 rc;

	a = xcalloc(1, sizeof *a);
	a->http = http;
	TAILQ_INIT(&a->waiters);
	a->gcloud_file = auth_gcloud_file();

	env = getenv("GOOGLE_APPLICATION_CREDENTIALS");
	if (conf->credentials != NULL && *conf->credentials != '\0')
		rc = auth_load_file(a, conf, conf->credentials,
		    "[gcp] credentials", cause);
	else if (env != NULL && *env != '\0')
		rc = auth_load_file(a, conf, env,
		    "GOOGLE_APPLICATION_CREDENTIALS", cause);
	else if (a->gcloud_file != NULL && access(a->gcloud_file, F_OK) == 0)
		rc = auth_load_file(a, conf, a->gcloud_file,
		    "gcloud auth application-default login", cause);
	else {
		a->kind = AUTH_METADATA;
		a->token_url = gcp_url(conf, GCP_API_METADATA, NULL,
		    "instance/service-accounts/default/token");
		a->describe = xprintf("the metadata server (%s)",
		    a->token_url);
		rc = 0;
	}
	if (rc < 0) {
		auth_free(a);
		return rc;
	}
	a->src.get = auth_source_get;
	a->src.cancel = auth_source_cancel;
	a->src.invalidate = auth_source_invalidate;
	a->src.user_project = a->quota_project;
	a->src.arg = a;
	*ret = a;
	return 0;
}

static void
auth_clear_token(struct auth *a)
{
	freezero_str(a->token);
	a->token = NULL;
	a->expires = 0;
}

/*
 * Call every waiter queued so far: TOKEN, or ERROR and CAUSE. Each is
 * taken off the list before its call, so a callback may cancel others
 * or queue new ones (those wait for the next fetch).
 */
static void	auth_really_free(struct auth *);

static void
auth_notify(struct auth *a, const char *token, int error, const char *cause)
{
	struct http_token_wait	*w;
	unsigned long		 limit = a->seq;

	a->notifying++;
	while ((w = TAILQ_FIRST(&a->waiters)) != NULL && w->seq < limit) {
		TAILQ_REMOVE(&a->waiters, w, entry);
		w->queued = 0;
		if (a->dead)	/* auth_free() from a callback: cancel */
			w->cb(w, NULL, -ECANCELED, "cancelled: credentials "
			    "closed");
		else
			w->cb(w, token, error, cause);
	}
	if (--a->notifying == 0 && a->dead && !a->fetching)
		auth_really_free(a);
}

/* The no-credentials message: the three ways, and why each failed. */
static char *
auth_no_credentials(struct auth *a, const char *why)
{
	return xprintf("no Google Cloud credentials found: "
	    "GOOGLE_APPLICATION_CREDENTIALS and [gcp] credentials are unset, "
	    "there is no %s, and the metadata server at %s did not give a "
	    "token (%s). Set GOOGLE_APPLICATION_CREDENTIALS (or [gcp] "
	    "credentials in gpuqd.conf) to a service-account key file, run "
	    "`gcloud auth application-default login`, or run gpuqd on a "
	    "Google Cloud VM with an attached service account",
	    a->gcloud_file != NULL ? a->gcloud_file :
	    "gcloud credentials file ($HOME is unset)", a->token_url, why);
}

static void
auth_on_token(const struct http_resp *r, void *arg)
{
	struct auth	*a = arg;
	json_t		*tok, *exp;
	char		*cause, *text;
	uint64_t	 life;
	double		 secs;

	a->fetching = 0;
	tok = json_object_get(r->json, "access_token");
	exp = json_object_get(r->json, "expires_in");
	if (a->dead) {
		auth_wipe_json_string(tok);
		if (!a->notifying)
			auth_really_free(a);
		return;
	}
	if (r->status == 200 && json_is_string(tok) &&
	    json_string_length(tok) > 0) {
		auth_clear_token(a);
		a->token = xstrdup(json_string_value(tok));
		secs = json_is_number(exp) ? json_number_value(exp) : 3600;
		if (!(secs >= 0 && secs <= 86400))
			secs = 3600;	/* negative, over a day, NaN */
		life = (uint64_t)(secs * 1000);
		a->expires = uv_now(http_loop(a->http)) + life;
		/* 5 minutes early, or half-way for short-lived tokens. */
		a->margin = life / 2 < AUTH_MARGIN_MS ? life / 2 :
		    AUTH_MARGIN_MS;
		a->fetches++;
		log_debug("auth: new access token, valid %llu s",
		    (unsigned long long)(life / 1000));
		auth_wipe_json_string(tok);
		auth_notify(a, a->token, 0, NULL);
		return;
	}
	auth_wipe_json_string(tok);
	if (r->err.kind == GCP_ERR_CANCELLED)
		cause = xstrdup(r->err.message);
	else if (a->kind == AUTH_METADATA && (r->status == 0 ||
	    r->status == 404 || r->status == 403)) {
		text = gcp_error_text(&r->err);
		cause = auth_no_credentials(a, text);
		free(text);
	} else if (r->status == 200) {
		cause = xprintf("token endpoint %s answered without an "
		    "access_token", a->token_url);
	} else {
		text = gcp_error_text(&r->err);
		cause = xprintf("getting an access token for %s from %s "
		    "failed: %s", a->describe, a->token_url, text);
		free(text);
	}
	log_debug("auth: %s", cause);
	auth_notify(a, NULL, r->err.kind == GCP_ERR_CANCELLED ? -ECANCELED :
	    -EACCES, cause);
	free(cause);
}

/* base64url without padding (RFC 7515 2). New string. */
static char *
auth_b64url(const unsigned char *in, size_t len)
{
	char	*out, *p;
	int	 n;

	out = xmalloc(4 * ((len + 2) / 3) + 1);
	n = EVP_EncodeBlock((unsigned char *)out, in, (int)len);
	out[n] = '\0';
	for (p = out; *p != '\0'; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
		else if (*p == '=') {
			*p = '\0';
			break;
		}
	}
	return out;
}

/* The signed assertion for the JWT-bearer grant. New string, secret. */
static char *
auth_jwt(struct auth *a, char **cause)
{
	json_t		*h, *c;
	char		*hs, *cs, *h64, *c64, *input, *sig64, *jwt = NULL;
	unsigned char	*sig = NULL;
	size_t		 siglen = 0;
	EVP_MD_CTX	*md;
	time_t		 now = time(NULL);

	h = json_pack("{s:s, s:s}", "alg", "RS256", "typ", "JWT");
	if (a->key_id != NULL)
		json_object_set_new(h, "kid", json_string(a->key_id));
	c = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", a->client_email,
	    "scope", GCP_SCOPE, "aud", a->audience, "iat", (json_int_t)now,
	    "exp", (json_int_t)now + AUTH_JWT_LIFETIME);
	if (h == NULL || c == NULL)
		fatalx("auth: json_pack failed");
	hs = json_dumps(h, JSON_COMPACT);
	cs = json_dumps(c, JSON_COMPACT);
	json_decref(h);
	json_decref(c);
	if (hs == NULL || cs == NULL)
		fatalx("auth: json_dumps failed");
	h64 = auth_b64url((unsigned char *)hs, strlen(hs));
	c64 = auth_b64url((unsigned char *)cs, strlen(cs));
	free(hs);
	free(cs);
	input = xprintf("%s.%s", h64, c64);
	free(h64);
	free(c64);

	/* RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 3.3). */
	if ((md = EVP_MD_CTX_new()) == NULL)
		fatalx("EVP_MD_CTX_new failed");
	if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, a->key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)input,
	    strlen(input)) != 1) {
		if (cause != NULL)
			*cause = xprintf("signing a token request with the "
			    "key in %s failed", a->file);
		goto out;
	}
	sig = xmalloc(siglen);
	if (EVP_DigestSign(md, sig, &siglen, (unsigned char *)input,
	    strlen(input)) != 1) {
		if (cause != NULL)
			*cause = xprintf("signing a token request with the "
			    "key in %s failed", a->file);
		goto out;
	}
	sig64 = auth_b64url(sig, siglen);
	jwt = xprintf("%s.%s", input, sig64);
	free(sig64);
out:
	EVP_MD_CTX_free(md);
	free(sig);
	free(input);
	return jwt;
}

/* Start the one token fetch (no-op while one runs). */
static void
auth_fetch(struct auth *a)
{
	static const char *const md_hdrs[] = { "Metadata-Flavor: Google",
	    NULL };
	struct http_req	 req;
	char		*body = NULL, *jwt, *cause = NULL, *id, *sec, *rt;
	int		 rc;

	if (a->fetching)
		return;
	memset(&req, 0, sizeof req);
	req.url = a->token_url;
	req.api = GCP_API_TOKEN;
	req.flags = HTTP_SECRET | HTTP_IDEMPOTENT;
	switch (a->kind) {
	case AUTH_SERVICE_ACCOUNT:
		if ((jwt = auth_jwt(a, &cause)) == NULL) {
			auth_notify(a, NULL, -EINVAL, cause);
			free(cause);
			return;
		}
		body = xprintf("grant_type=%s&assertion=%s", AUTH_GRANT_JWT,
		    jwt);
		freezero_str(jwt);
		break;
	case AUTH_AUTHORIZED_USER:
		id = gcp_escape(a->client_id);
		sec = gcp_escape(a->client_secret);
		rt = gcp_escape(a->refresh_token);
		body = xprintf("grant_type=refresh_token&client_id=%s&"
		    "client_secret=%s&refresh_token=%s", id, sec, rt);
		free(id);
		freezero_str(sec);
		freezero_str(rt);
		break;
	case AUTH_METADATA:
		req.headers = md_hdrs;
		req.timeout_ms = AUTH_METADATA_TIMEOUT;
		req.max_attempts = 3;
		break;
	}
	if (body != NULL) {
		req.method = "POST";
		req.body = body;
		req.body_len = strlen(body);
		req.content_type = "application/x-www-form-urlencoded";
	}
	rc = http_request_start(a->http, &req, auth_on_token, a);
	freezero_str(body);
	if (rc < 0) {
		cause = xprintf("cannot ask for an access token: %s",
		    strerror(-rc));
		auth_notify(a, NULL, rc == -ESHUTDOWN ? -ECANCELED : rc,
		    cause);
		free(cause);
		return;
	}
	a->fetching = 1;
}

/*
 * The cached token if it is fresh, else NULL. A token inside its refresh
 * margin but not yet expired is still returned, and a refresh starts in
 * the background. Borrowed: valid until the next turn of the loop.
 */
static const char *
auth_token_peek(struct auth *a)
{
	uint64_t	now;

	if (a->token == NULL)
		return NULL;
	now = uv_now(http_loop(a->http));
	if (now + a->margin < a->expires)
		return a->token;
	/* Inside the margin: still good for a while; refresh meanwhile.
	 * Within 10 s of expiry, make the caller wait instead. */
	if (now + 10000 < a->expires) {
		auth_fetch(a);
		return a->token;
	}
	return NULL;
}

/* http.h get: the fresh token, else queue W for the next fetch. */
static const char *
auth_source_get(void *arg, struct http_token_wait *w)
{
	struct auth	*a = arg;
	const char	*tok;

	if ((tok = auth_token_peek(a)) != NULL)
		return tok;
	TAILQ_INSERT_TAIL(&a->waiters, w, entry);
	w->queued = 1;
	w->seq = a->seq++;
	auth_fetch(a);
	return NULL;
}

/* http.h cancel. */
static void
auth_source_cancel(void *arg, struct http_token_wait *w)
{
	struct auth	*a = arg;

	if (!w->queued)
		return;
	TAILQ_REMOVE(&a->waiters, w, entry);
	w->queued = 0;
}

/* http.h invalidate: drop TOKEN if it is still the cached one. */
static void
auth_source_invalidate(void *arg, const char *token)
{
	struct auth	*a = arg;

	if (a->token != NULL && token != NULL && strcmp(a->token, token) == 0)
		auth_clear_token(a);
}

const struct http_token_source *
auth_token_source(struct auth *a)
{
	return &a->src;
}

enum auth_kind
auth_kind(struct auth *a)
{
	return a->kind;
}

const char *
auth_describe(struct auth *a)
{
	return a->describe != NULL ? a->describe : "no credentials";
}

const char *
auth_project(struct auth *a)
{
	return a->project;
}

const char *
auth_quota_project(struct auth *a)
{
	return a->quota_project;
}

unsigned long
auth_fetches(struct auth *a)
{
	return a->fetches;
}

static void
auth_really_free(struct auth *a)
{
	auth_clear_token(a);
	free(a->describe);
	free(a->file);
	free(a->project);
	free(a->token_url);
	free(a->audience);
	free(a->client_email);
	free(a->key_id);
	EVP_PKEY_free(a->key);		/* OpenSSL clears RSA key material */
	freezero_str(a->client_id);
	freezero_str(a->client_secret);
	freezero_str(a->refresh_token);
	free(a->gcloud_file);
	free(a->quota_project);
	free(a);
}

void
auth_free(struct auth *a)
{
	if (a == NULL || a->dead)
		return;
	a->dead = 1;
	if (a->notifying)
		return;		/* auth_notify() finishes the job */
	a->notifying++;
	auth_notify(a, NULL, -ECANCELED, "cancelled: credentials closed");
	a->notifying--;
	/* A fetch in flight still points here: its answer frees A. */
	if (!a->fetching)
		auth_really_free(a);
}
