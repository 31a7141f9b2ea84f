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
#include <stddef.h>
#include <stdint.h>
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

	/* AUTH_IMPERSONATED: the source credentials' token buys one. */
	struct auth		*source;
	struct http_token_wait	 source_wait;
	int			 source_waiting;
	/* AUTH_IMPERSONATED, and AUTH_EXTERNAL when it impersonates. */
	char			*imp_url;	/* ...:generateAccessToken */
	char			*imp_email;	/* for messages */
	json_t			*delegates;	/* array of strings, or NULL */
	/* AUTH_EXTERNAL: the subject token and the STS exchange. */
	char			*sts_url;
	char			*ext_audience;
	char			*subject_type;
	char			*subject_file;	/* credential_source.file */
	char			*subject_url;	/* credential_source.url */
	char			**subject_headers;	/* "Name: value" */
	char			*subject_field;	/* format json: the field */

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
static void	auth_chain_start(struct auth *);
static void	auth_token_done(struct auth *, const char *, double);
static int	auth_load_json(struct auth *, const struct gcp_conf *,
		    json_t *, const char *, const char *, char **);
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

/* Is GID the daemon's group or one of its supplementary groups? */
static int
auth_in_group(gid_t gid)
{
	gid_t	 groups[256];
	int	 n, i;

	if (getegid() == gid)
		return 1;
	if ((n = getgroups((int)(sizeof groups / sizeof groups[0]),
	    groups)) < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

/*
 * May a key file with status ST be trusted? Nobody but its owner may read
 * it -- or, when root owns it and its group is one the daemon is in, that
 * group too: a Kubernetes secret mounted with an fsGroup, or a file
 * systemd hands over (LoadCredential=, root:gpuq 0640), is read that way
 * and only root can change it. World-readable is refused always, and a
 * group-readable file of anyone else's too (its owner could hand it to
 * the group). 0, or -EPERM and *cause with the fix.
 */
static int
auth_mode_ok(const struct stat *st, const char *file, char **cause)
{
	unsigned	mode = (unsigned)(st->st_mode & 07777);

	if ((st->st_mode & (S_IROTH | S_IWOTH)) != 0) {
		if (cause != NULL)
			*cause = xprintf("credentials %s is readable by "
			    "others (mode %04o); run: chmod 600 %s (or 640 "
			    "with root as owner and gpuqd's group as group)",
			    file, mode, file);
		return -EPERM;
	}
	if ((st->st_mode & (S_IRGRP | S_IWGRP)) == 0)
		return 0;
	if (st->st_uid == 0 && (st->st_mode & S_IWGRP) == 0 &&
	    auth_in_group(st->st_gid))
		return 0;
	if (cause != NULL)
		*cause = xprintf("credentials %s is readable by its group "
		    "(mode %04o, owner uid %u, group gid %u); run: chmod 600 "
		    "%s, or make root its owner and gpuqd's group its group "
		    "(chown root:GROUP, chmod 640)", file, mode,
		    (unsigned)st->st_uid, (unsigned)st->st_gid, file);
	return -EPERM;
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
	if ((rc = auth_mode_ok(&st, file, cause)) < 0) {
		close(fd);
		return rc;
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

/* Free a NULL-terminated vector of strings (NULL ok). */
static void
auth_strv_free(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * A Google URL a credential file names (STS token_url, IAM Credentials
 * service_account_impersonation_url), checked as Google's libraries do:
 * https on a googleapis.com host, so a file cannot send the subject token
 * or a source token elsewhere. With [gcp] endpoint set (tests, the demo)
 * its path goes to that endpoint instead. New string, or NULL and *cause.
 */
static char *
auth_google_url(const struct gcp_conf *conf, const char *url,
    const char *field, const char *file, char **cause)
{
	const char	*host, *path;
	size_t		 hl;

	if (url == NULL || strncmp(url, "https://", 8) != 0)
		goto bad;
	host = url + 8;
	path = strchr(host, '/');
	hl = path != NULL ? (size_t)(path - host) : strlen(host);
	if (hl <= strlen(".googleapis.com") || strncmp(host + hl -
	    strlen(".googleapis.com"), ".googleapis.com",
	    strlen(".googleapis.com")) != 0 || memchr(host, '@', hl) != NULL)
		goto bad;
	if (conf->endpoint != NULL && *conf->endpoint != '\0')
		return xprintf("%s%s", conf->endpoint, path != NULL ? path :
		    "/");
	return xstrdup(url);
bad:
	if (cause != NULL)
		*cause = xprintf("credentials %s: %s must be an https URL on "
		    "a googleapis.com host, not \"%s\"", file, field,
		    url != NULL ? url : "");
	return NULL;
}

/* The account EMAIL of a ...serviceAccounts/EMAIL:generateAccessToken
 * URL. New string, or NULL. */
static char *
auth_imp_email(const char *url)
{
	const char	*p, *end;

	if ((p = strstr(url, "/serviceAccounts/")) == NULL ||
	    (end = strstr(p, ":generateAccessToken")) == NULL)
		return NULL;
	p += strlen("/serviceAccounts/");
	return end > p ? xstrndup(p, (size_t)(end - p)) : NULL;
}

/* service_account_impersonation_url of J into A (optional unless
 * REQUIRED). */
static int
auth_load_imp_url(struct auth *a, const struct gcp_conf *conf, json_t *j,
    int required, char **cause)
{
	const char	*url = auth_str(j, "service_account_impersonation_url");
	json_t		*d, *v;
	size_t		 i;

	if (url == NULL && !required)
		return 0;
	if ((a->imp_url = auth_google_url(conf, url,
	    "service_account_impersonation_url", a->file, cause)) == NULL)
		return -EINVAL;
	if ((a->imp_email = auth_imp_email(url)) == NULL) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: "
			    "service_account_impersonation_url does not end "
			    "in serviceAccounts/EMAIL:generateAccessToken",
			    a->file);
		return -EINVAL;
	}
	d = json_object_get(j, "delegates");
	if (json_is_array(d) && json_array_size(d) > 0) {
		json_array_foreach(d, i, v) {
			if (!json_is_string(v)) {
				if (cause != NULL)
					*cause = xprintf("credentials %s: "
					    "delegates must be strings",
					    a->file);
				return -EINVAL;
			}
		}
		a->delegates = json_deep_copy(d);
	}
	return 0;
}

/*
 * impersonated_service_account (what `gcloud auth application-default
 * login --impersonate-service-account` writes): source_credentials, a
 * service_account or authorized_user object whose token buys the target
 * account's from IAM Credentials generateAccessToken.
 */
static int
auth_load_impersonated(struct auth *a, const struct gcp_conf *conf,
    json_t *j, char **cause)
{
	json_t		*src = json_object_get(j, "source_credentials");
	const char	*type;
	struct auth	*s;
	int		 rc;

	type = auth_str(src, "type");
	if (!json_is_object(src) || type == NULL ||
	    (strcmp(type, "service_account") != 0 &&
	    strcmp(type, "authorized_user") != 0)) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: an "
			    "impersonated_service_account needs "
			    "source_credentials of type service_account or "
			    "authorized_user", a->file);
		return -EINVAL;
	}
	if ((rc = auth_load_imp_url(a, conf, j, 1, cause)) < 0)
		return rc;
	s = xcalloc(1, sizeof *s);
	s->http = a->http;
	TAILQ_INIT(&s->waiters);
	s->file = xstrdup(a->file);
	s->src.get = auth_source_get;
	s->src.cancel = auth_source_cancel;
	s->src.invalidate = auth_source_invalidate;
	s->src.arg = s;
	a->source = s;
	rc = auth_load_json(s, conf, src, a->file, "source_credentials",
	    cause);
	auth_wipe_json_string(json_object_get(src, "private_key"));
	auth_wipe_json_string(json_object_get(src, "client_secret"));
	auth_wipe_json_string(json_object_get(src, "refresh_token"));
	if (rc < 0)
		return rc;
	if (a->quota_project == NULL && s->quota_project != NULL)
		a->quota_project = xstrdup(s->quota_project);
	a->kind = AUTH_IMPERSONATED;
	return 0;
}

/*
 * external_account (workload identity federation): audience (the pool
 * provider), subject_token_type, token_url (STS), credential_source
 * {file | url [, headers]} [, format {type: json,
 * subject_token_field_name}], and optionally
 * service_account_impersonation_url. Executable and AWS sources are not
 * supported: they are refused by name.
 */
static int
auth_load_external(struct auth *a, const struct gcp_conf *conf, json_t *j,
    char **cause)
{
	json_t		*cs = json_object_get(j, "credential_source");
	json_t		*fmt, *hdrs, *v;
	const char	*ftype, *k;
	size_t		 n = 0;
	int		 rc;

	if (auth_str(j, "audience") == NULL ||
	    auth_str(j, "subject_token_type") == NULL ||
	    !json_is_object(cs)) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: an external_account "
			    "needs audience, subject_token_type and "
			    "credential_source", a->file);
		return -EINVAL;
	}
	if (auth_str(cs, "file") != NULL)
		a->subject_file = xstrdup(auth_str(cs, "file"));
	else if (auth_str(cs, "url") != NULL)
		a->subject_url = xstrdup(auth_str(cs, "url"));
	else {
		if (cause != NULL)
			*cause = xprintf("credentials %s: credential_source "
			    "must name a file or a url (executable and AWS "
			    "sources are not supported)", a->file);
		return -EINVAL;
	}
	hdrs = json_object_get(cs, "headers");
	if (a->subject_url != NULL && json_is_object(hdrs)) {
		a->subject_headers = xcalloc(json_object_size(hdrs) + 1,
		    sizeof *a->subject_headers);
		json_object_foreach(hdrs, k, v) {
			if (!json_is_string(v) || strpbrk(k, ":\r\n") != NULL ||
			    strpbrk(json_string_value(v), "\r\n") != NULL) {
				if (cause != NULL)
					*cause = xprintf("credentials %s: "
					    "credential_source.headers must "
					    "map names to one-line strings",
					    a->file);
				return -EINVAL;
			}
			a->subject_headers[n++] = xprintf("%s: %s", k,
			    json_string_value(v));
		}
	}
	fmt = json_object_get(cs, "format");
	ftype = auth_str(fmt, "type");
	if (ftype != NULL && strcmp(ftype, "json") == 0) {
		if (auth_str(fmt, "subject_token_field_name") == NULL) {
			if (cause != NULL)
				*cause = xprintf("credentials %s: format json "
				    "needs subject_token_field_name", a->file);
			return -EINVAL;
		}
		a->subject_field = xstrdup(auth_str(fmt,
		    "subject_token_field_name"));
	} else if (ftype != NULL && strcmp(ftype, "text") != 0) {
		if (cause != NULL)
			*cause = xprintf("credentials %s: credential_source "
			    "format \"%s\" is not text or json", a->file,
			    ftype);
		return -EINVAL;
	}
	if ((a->sts_url = auth_google_url(conf, auth_str(j, "token_url") !=
	    NULL ? auth_str(j, "token_url") : "https://sts.googleapis.com/"
	    "v1/token", "token_url", a->file, cause)) == NULL)
		return -EINVAL;
	if ((rc = auth_load_imp_url(a, conf, j, 0, cause)) < 0)
		return rc;
	a->ext_audience = xstrdup(auth_str(j, "audience"));
	a->subject_type = xstrdup(auth_str(j, "subject_token_type"));
	if (auth_str(j, "workforce_pool_user_project") != NULL &&
	    a->quota_project == NULL)
		a->quota_project = xstrdup(auth_str(j,
		    "workforce_pool_user_project"));
	a->kind = AUTH_EXTERNAL;
	return 0;
}

/* Read key file FILE (found through WHERE) into A. */
static int
auth_load_file(struct auth *a, const struct gcp_conf *conf, const char *file,
    const char *where, char **cause)
{
	json_error_t	 jerr;
	json_t		*j;
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
	if (auth_str(j, "project_id") != NULL)
		a->project = xstrdup(auth_str(j, "project_id"));
	else if (auth_str(j, "quota_project_id") != NULL)
		a->project = xstrdup(auth_str(j, "quota_project_id"));
	rc = auth_load_json(a, conf, j, file, where, cause);
	auth_wipe_json_string(json_object_get(j, "private_key"));
	auth_wipe_json_string(json_object_get(j, "client_secret"));
	auth_wipe_json_string(json_object_get(j, "refresh_token"));
	json_decref(j);
	return rc;
}

/* Load credentials object J (of FILE, found through WHERE) into A. */
static int
auth_load_json(struct auth *a, const struct gcp_conf *conf, json_t *j,
    const char *file, const char *where, char **cause)
{
	const char	*type;
	int		 rc;

	type = auth_str(j, "type");
	if (type != NULL && strcmp(type, "impersonated_service_account") ==
	    0) {
		rc = auth_load_impersonated(a, conf, j, cause);
		if (rc == 0)
			a->describe = xprintf("service account %s "
			    "impersonated by %s (from %s)", a->imp_email,
			    auth_describe(a->source), where);
	} else if (type != NULL && strcmp(type, "external_account") == 0) {
		rc = auth_load_external(a, conf, j, cause);
		if (rc == 0)
			a->describe = xprintf("workload identity federation "
			    "%s%s%s (from %s)", a->ext_audience,
			    a->imp_email != NULL ? " as " : "",
			    a->imp_email != NULL ? a->imp_email : "", where);
	} else if (type != NULL && strcmp(type, "service_account") == 0) {
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
			    "supported; use a service_account key, "
			    "authorized_user, impersonated_service_account or "
			    "external_account credentials", file,
			    type != NULL ? type : "(none)");
		rc = -EINVAL;
	}
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

/* A token TOK valid SECS seconds came: cache it, tell the waiters. */
static void
auth_token_done(struct auth *a, const char *tok, double secs)
{
	uint64_t	life;

	a->fetching = 0;
	auth_clear_token(a);
	a->token = xstrdup(tok);
	if (!(secs >= 0 && secs <= 86400))
		secs = 3600;	/* negative, over a day, NaN */
	life = (uint64_t)(secs * 1000);
	a->expires = uv_now(http_loop(a->http)) + life;
	/* 5 minutes early, or half-way for short-lived tokens. */
	a->margin = life / 2 < AUTH_MARGIN_MS ? life / 2 : AUTH_MARGIN_MS;
	a->fetches++;
	log_debug("auth: new access token, valid %llu s",
	    (unsigned long long)(life / 1000));
	auth_notify(a, a->token, 0, NULL);
}

static void
auth_on_token(const struct http_resp *r, void *arg)
{
	struct auth	*a = arg;
	json_t		*tok, *exp;
	char		*cause, *text;
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
		secs = json_is_number(exp) ? json_number_value(exp) : 3600;
		auth_token_done(a, json_string_value(tok), secs);
		auth_wipe_json_string(tok);
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

/* -- impersonation and workload identity federation (DESIGN GH.7) -- */

/* The chain failed: tell the waiters ERROR and CAUSE (or free A). */
static void
auth_chain_fail(struct auth *a, int error, const char *cause)
{
	a->fetching = 0;
	if (a->dead) {
		if (!a->notifying)
			auth_really_free(a);
		return;
	}
	log_debug("auth: %s", cause);
	auth_notify(a, NULL, error, cause);
}

/* Unix seconds of an RFC 3339 UTC time "2026-11-25T17:00:00Z" (fractions
 * ignored); -1 if it is not one. */
static int64_t
auth_utc_seconds(const char *s)
{
	struct tm	tm;
	const char	*end;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) ==
	    NULL)
		return -1;
	if (*end == '.')
		end += strspn(end + 1, "0123456789") + 1;
	if (strcmp(end, "Z") != 0)
		return -1;
	return (int64_t)timegm(&tm);
}

static void
auth_on_impersonated(const struct http_resp *r, void *arg)
{
	struct auth	*a = arg;
	json_t		*tok;
	int64_t		 exp;
	char		*cause, *text;

	tok = json_object_get(r->json, "accessToken");
	if (a->dead || r->status != 200 || !json_is_string(tok) ||
	    json_string_length(tok) == 0) {
		auth_wipe_json_string(tok);
		if (r->err.kind == GCP_ERR_CANCELLED || a->dead)
			cause = xstrdup("cancelled");
		else if (r->status == 200)
			cause = xprintf("IAM Credentials answered without an "
			    "accessToken for %s", a->imp_email);
		else {
			text = gcp_error_text(&r->err);
			cause = xprintf("getting a token for service account "
			    "%s from IAM Credentials failed: %s (the "
			    "credentials need roles/iam."
			    "serviceAccountTokenCreator on it)", a->imp_email,
			    text);
			free(text);
		}
		auth_chain_fail(a, r->err.kind == GCP_ERR_CANCELLED ?
		    -ECANCELED : -EACCES, cause);
		free(cause);
		return;
	}
	exp = auth_utc_seconds(json_string_value(json_object_get(r->json,
	    "expireTime")));
	auth_token_done(a, json_string_value(tok), exp > 0 ?
	    (double)(exp - (int64_t)time(NULL)) : 3600);
	auth_wipe_json_string(tok);
}

/* POST generateAccessToken with BEARER (secret, borrowed). */
static void
auth_impersonate(struct auth *a, const char *bearer)
{
	struct http_req	 req;
	json_t		*body;
	char		*hdr, *cause;
	const char	*hdrs[2];
	int		 rc;

	body = json_pack("{s:[s], s:s}", "scope", GCP_SCOPE, "lifetime",
	    "3600s");
	if (body == NULL)
		fatalx("auth: json_pack failed");
	if (a->delegates != NULL)
		json_object_set(body, "delegates", a->delegates);
	hdr = xprintf("Authorization: Bearer %s", bearer);
	hdrs[0] = hdr;
	hdrs[1] = NULL;
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = a->imp_url;
	req.json = body;
	req.headers = hdrs;
	req.api = GCP_API_TOKEN;
	req.flags = HTTP_SECRET | HTTP_IDEMPOTENT;
	rc = http_request_start(a->http, &req, auth_on_impersonated, a);
	freezero_str(hdr);
	json_decref(body);
	if (rc < 0) {
		cause = xprintf("cannot ask IAM Credentials for a token: %s",
		    strerror(-rc));
		auth_chain_fail(a, rc == -ESHUTDOWN ? -ECANCELED : rc, cause);
		free(cause);
	}
}

/* The source credentials' token came (or their error). */
static void
auth_on_source_token(struct http_token_wait *w, const char *token,
    int error, const char *cause)
{
	struct auth	*a = (struct auth *)((char *)w -
			    offsetof(struct auth, source_wait));
	char		*why;

	a->source_waiting = 0;
	if (token == NULL) {
		why = xprintf("the source credentials of the impersonation "
		    "(%s) gave no token: %s", auth_describe(a->source),
		    cause != NULL ? cause : "unknown error");
		auth_chain_fail(a, error < 0 ? error : -EACCES, why);
		free(why);
		return;
	}
	auth_impersonate(a, token);
}

static void
auth_on_sts(const struct http_resp *r, void *arg)
{
	struct auth	*a = arg;
	json_t		*tok, *exp;
	char		*cause, *text;

	tok = json_object_get(r->json, "access_token");
	exp = json_object_get(r->json, "expires_in");
	if (a->dead || r->status != 200 || !json_is_string(tok) ||
	    json_string_length(tok) == 0) {
		auth_wipe_json_string(tok);
		if (r->err.kind == GCP_ERR_CANCELLED || a->dead)
			cause = xstrdup("cancelled");
		else {
			text = gcp_error_text(&r->err);
			cause = xprintf("exchanging the subject token at the "
			    "Security Token Service (%s) for %s failed: %s",
			    a->sts_url, a->ext_audience, text);
			free(text);
		}
		auth_chain_fail(a, r->err.kind == GCP_ERR_CANCELLED ?
		    -ECANCELED : -EACCES, cause);
		free(cause);
		return;
	}
	if (a->imp_url != NULL)
		auth_impersonate(a, json_string_value(tok));
	else
		auth_token_done(a, json_string_value(tok),
		    json_is_number(exp) ? json_number_value(exp) : 3600);
	auth_wipe_json_string(tok);
}

/* Exchange SUBJECT (secret, borrowed) at STS (RFC 8693). */
static void
auth_sts(struct auth *a, const char *subject)
{
	struct http_req	 req;
	char		*aud, *typ, *sub, *scope, *body, *cause;
	int		 rc;

	aud = gcp_escape(a->ext_audience);
	typ = gcp_escape(a->subject_type);
	sub = gcp_escape(subject);
	scope = gcp_escape(GCP_SCOPE);
	body = xprintf("grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3A"
	    "grant-type%%3Atoken-exchange&audience=%s&scope=%s&"
	    "requested_token_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3A"
	    "token-type%%3Aaccess_token&subject_token=%s&"
	    "subject_token_type=%s", aud, scope, sub, typ);
	free(aud);
	free(typ);
	freezero_str(sub);
	free(scope);
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = a->sts_url;
	req.body = body;
	req.body_len = strlen(body);
	req.content_type = "application/x-www-form-urlencoded";
	req.api = GCP_API_TOKEN;
	req.flags = HTTP_SECRET | HTTP_IDEMPOTENT;
	rc = http_request_start(a->http, &req, auth_on_sts, a);
	freezero_str(body);
	if (rc < 0) {
		cause = xprintf("cannot reach the Security Token Service: %s",
		    strerror(-rc));
		auth_chain_fail(a, rc == -ESHUTDOWN ? -ECANCELED : rc, cause);
		free(cause);
	}
}

/*
 * The subject token in TEXT (LEN bytes), as the credential_source's
 * format says: the whole text, trimmed, or a JSON object's field. New
 * string (secret), or NULL and *cause.
 */
static char *
auth_subject_value(struct auth *a, const char *text, size_t len,
    char **cause)
{
	json_t		*j, *v;
	char		*out;

	if (a->subject_field == NULL) {
		while (len > 0 && (text[len - 1] == '\n' ||
		    text[len - 1] == '\r' || text[len - 1] == ' '))
			len--;
		if (len == 0) {
			*cause = xprintf("the subject token from %s is empty",
			    a->subject_file != NULL ? a->subject_file :
			    a->subject_url);
			return NULL;
		}
		return xstrndup(text, len);
	}
	j = json_loadb(text, len, 0, NULL);
	v = json_object_get(j, a->subject_field);
	if (!json_is_string(v) || json_string_length(v) == 0) {
		*cause = xprintf("the subject token source %s has no string "
		    "field \"%s\"", a->subject_file != NULL ?
		    a->subject_file : a->subject_url, a->subject_field);
		json_decref(j);
		return NULL;
	}
	out = xstrdup(json_string_value(v));
	auth_wipe_json_string(v);
	json_decref(j);
	return out;
}

static void
auth_on_subject(const struct http_resp *r, void *arg)
{
	struct auth	*a = arg;
	char		*cause = NULL, *text, *subject;

	if (a->dead || r->status != 200) {
		if (a->dead || r->err.kind == GCP_ERR_CANCELLED)
			cause = xstrdup("cancelled");
		else {
			text = gcp_error_text(&r->err);
			cause = xprintf("reading the subject token from %s "
			    "failed: %s", a->subject_url, text);
			free(text);
		}
		auth_chain_fail(a, -EACCES, cause);
		free(cause);
		return;
	}
	if ((subject = auth_subject_value(a, r->body, r->len, &cause)) ==
	    NULL) {
		auth_chain_fail(a, -EACCES, cause);
		free(cause);
		return;
	}
	auth_sts(a, subject);
	freezero_str(subject);
}

/*
 * The subject token from its file -- read at each fetch, since the
 * platform rotates it (a Kubernetes projected token, a CI job's OIDC
 * token); it is a short-lived token, not a key, so its mode is not
 * checked -- or from its URL.
 */
static void
auth_subject_get(struct auth *a)
{
	struct http_req	 req;
	char		*buf = NULL, *subject, *cause = NULL;
	FILE		*fp;
	size_t		 len;
	int		 rc;

	if (a->subject_file != NULL) {
		if ((fp = fopen(a->subject_file, "re")) == NULL) {
			cause = xprintf("reading the subject token %s: %s",
			    a->subject_file, strerror(errno));
			auth_chain_fail(a, -EACCES, cause);
			free(cause);
			return;
		}
		buf = xmalloc(AUTH_MAX_FILE + 1);
		len = fread(buf, 1, AUTH_MAX_FILE, fp);
		fclose(fp);
		buf[len] = '\0';
		subject = auth_subject_value(a, buf, len, &cause);
		explicit_bzero(buf, len);
		free(buf);
		if (subject == NULL) {
			auth_chain_fail(a, -EACCES, cause);
			free(cause);
			return;
		}
		auth_sts(a, subject);
		freezero_str(subject);
		return;
	}
	memset(&req, 0, sizeof req);
	req.url = a->subject_url;
	req.headers = (const char *const *)a->subject_headers;
	req.api = GCP_API_TOKEN;
	req.flags = HTTP_SECRET;
	rc = http_request_start(a->http, &req, auth_on_subject, a);
	if (rc < 0) {
		cause = xprintf("cannot read the subject token from %s: %s",
		    a->subject_url, strerror(-rc));
		auth_chain_fail(a, rc == -ESHUTDOWN ? -ECANCELED : rc, cause);
		free(cause);
	}
}

/* Start an impersonated or federated fetch; A->fetching until it ends. */
static void
auth_chain_start(struct auth *a)
{
	const char	*tok;

	a->fetching = 1;
	if (a->kind == AUTH_EXTERNAL) {
		auth_subject_get(a);
		return;
	}
	memset(&a->source_wait, 0, sizeof a->source_wait);
	a->source_wait.cb = auth_on_source_token;
	a->source_waiting = 1;
	if ((tok = a->source->src.get(a->source, &a->source_wait)) != NULL) {
		a->source_waiting = 0;
		auth_impersonate(a, tok);
	}
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
	if (a->kind == AUTH_IMPERSONATED || a->kind == AUTH_EXTERNAL) {
		auth_chain_start(a);
		return;
	}
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
	case AUTH_IMPERSONATED:
	case AUTH_EXTERNAL:
		break;		/* auth_chain_start() */
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
	auth_free(a->source);
	free(a->imp_url);
	free(a->imp_email);
	json_decref(a->delegates);
	free(a->sts_url);
	free(a->ext_audience);
	free(a->subject_type);
	free(a->subject_file);
	free(a->subject_url);
	auth_strv_free(a->subject_headers);
	free(a->subject_field);
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
	if (a->source_waiting) {
		/* Waiting on the source, not on a request: stop now. */
		a->source->src.cancel(a->source, &a->source_wait);
		a->source_waiting = 0;
		a->fetching = 0;
	}
	/* A fetch in flight still points here: its answer frees A. */
	if (!a->fetching)
		auth_really_free(a);
}
