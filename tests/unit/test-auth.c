/*
 * test-auth.c: providers/gcp/auth.c against the simulated Google Cloud:
 * every Application Default Credentials source (service-account key from
 * the config or GOOGLE_APPLICATION_CREDENTIALS, authorized_user, gcloud's
 * well-known file via HOME or CLOUDSDK_CONFIG, the metadata server), the
 * refusals (key readable by others, bad files, no credentials at all),
 * token expiry and refresh, a revoked token (401 -> one refresh, one
 * retry), and that no secret reaches the log.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "providers/gcp/http.h"
#include "tests/unit/gcptest.h"

#define EMAIL	"gpuq-test@gpuq-demo.iam.gserviceaccount.com"

struct t {
	struct unittest	*ut;		/* fake, conf, loop and http */
	char		*path;		/* a credential file in DIR */
	char		*url;		/* an API URL needing a token */
};

static int
setup(void **state)
{
	struct t	*t = xcalloc(1, sizeof *t);

	*state = t;
	t->ut = unittest_new("test-auth");
	gcptest_fake(t->ut);
	t->path = unittest_path(t->ut, "creds.json");
	t->url = gcp_url(t->ut->gcp, GCP_API_COMPUTE, NULL,
	    "projects/%s?fields=name", "gpuq-demo");
	gcptest_http(t->ut);
	return 0;
}

static int
teardown(void **state)
{
	struct t	*t = *state;

	free(t->path);
	free(t->url);
	unittest_free(t->ut);
	free(t);
	return 0;
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int	fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void
user_file(struct t *t, const char *path, const char *refresh)
{
	char	*s;

	json_decref(fake_post(&t->ut->fake, "/_fake/authorized_user",
	    "{\"client_id\":\"cid-1.apps.googleusercontent.com\","
	    "\"client_secret\":\"s3cret\",\"refresh_token\":\"1//rt-good\"}"));
	s = xprintf("{\"type\":\"authorized_user\",\"client_id\":"
	    "\"cid-1.apps.googleusercontent.com\",\"client_secret\":"
	    "\"s3cret\",\"refresh_token\":\"%s\",\"quota_project_id\":"
	    "\"gpuq-demo\"}", refresh);
	write_file(path, s, 0600);
	free(s);
}

static void
test_auth_service_account(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_SERVICE_ACCOUNT);
	assert_non_null(strstr(auth_describe(t->ut->auth), "service account "
	    EMAIL " (key "));
	assert_non_null(strstr(auth_describe(t->ut->auth),
	    "from [gcp] credentials"));
	assert_string_equal(auth_project(t->ut->auth), "gpuq-demo");
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	gcptest_rec_done(&rec);
	gcptest_get(t->ut, t->url, &rec);	/* cached: no second fetch */
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	gcptest_rec_done(&rec);
}

static void
test_auth_env_variable(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	setenv("GOOGLE_APPLICATION_CREDENTIALS", t->path, 1);
	gcptest_auth(t->ut);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	assert_non_null(strstr(auth_describe(t->ut->auth),
	    "from GOOGLE_APPLICATION_CREDENTIALS"));
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	gcptest_rec_done(&rec);
}

static void
test_auth_unregistered_key(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };

	NEED_FAKE(t->ut);
	/* Google does not know this key: invalid_grant, said plainly. */
	fake_make_key(&t->ut->fake, t->path, "stranger@gpuq-demo.iam."
	    "gserviceaccount.com", 0);
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 0);
	assert_int_equal(rec.kind, GCP_ERR_AUTH);
	assert_non_null(strstr(rec.msg, "getting an access token for service "
	    "account stranger@"));
	assert_non_null(strstr(rec.msg, "failed: HTTP 400 invalid_grant: "
	    "Invalid grant: account not found"));
	gcptest_rec_done(&rec);
}

static void
test_auth_authorized_user(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };

	NEED_FAKE(t->ut);
	user_file(t, t->path, "1//rt-good");
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_AUTHORIZED_USER);
	assert_string_equal(auth_quota_project(t->ut->auth), "gpuq-demo");
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	gcptest_rec_done(&rec);
}

static void
test_auth_revoked_refresh_token(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };

	NEED_FAKE(t->ut);
	user_file(t, t->path, "1//rt-revoked");
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.kind, GCP_ERR_AUTH);
	assert_non_null(strstr(rec.msg, "HTTP 400 invalid_grant: Token has "
	    "been expired or revoked."));
	gcptest_rec_done(&rec);
}

static void
test_auth_well_known_file(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	char		*dir, *file;

	NEED_FAKE(t->ut);
	/* $HOME/.config/gcloud/application_default_credentials.json */
	dir = xprintf("%s/.config", t->ut->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	free(dir);
	dir = xprintf("%s/.config/gcloud", t->ut->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	file = xprintf("%s/application_default_credentials.json", dir);
	user_file(t, file, "1//rt-good");
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_AUTHORIZED_USER);
	assert_non_null(strstr(auth_describe(t->ut->auth), file));
	assert_non_null(strstr(auth_describe(t->ut->auth), "gcloud auth "
	    "application-default login"));
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	gcptest_rec_done(&rec);
	auth_free(t->ut->auth);
	t->ut->auth = NULL;
	http_set_token_source(t->ut->http, NULL);
	free(file);
	free(dir);

	/* $CLOUDSDK_CONFIG wins over HOME. */
	dir = xprintf("%s/sdk", t->ut->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	file = xprintf("%s/application_default_credentials.json", dir);
	fake_make_key(&t->ut->fake, file, EMAIL, 1);
	setenv("CLOUDSDK_CONFIG", dir, 1);
	gcptest_auth(t->ut);
	unsetenv("CLOUDSDK_CONFIG");
	assert_int_equal(auth_kind(t->ut->auth), AUTH_SERVICE_ACCOUNT);
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	gcptest_rec_done(&rec);
	free(file);
	free(dir);
}

static void
test_auth_metadata_server(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	json_t		*reqs;

	NEED_FAKE(t->ut);
	/* No file anywhere: the VM's metadata server (here, the fake). */
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_METADATA);
	assert_non_null(strstr(auth_describe(t->ut->auth),
	    "the metadata server ("));
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	gcptest_rec_done(&rec);
	reqs = fake_requests(&t->ut->fake, "GET",
	    "^/computeMetadata/v1/instance/service-accounts/default/token$", 1);
	assert_int_equal(json_array_size(reqs), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(
	    reqs, 0), "status")), 200);	/* Metadata-Flavor was sent */
	json_decref(reqs);
}

static void
test_auth_refuses_readable_key(void **state)
{
	struct t	*t = *state;
	char		*cause = NULL, *want;

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	assert_int_equal(chmod(t->path, 0644), 0);
	t->ut->gcp->credentials = t->path;
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EPERM);
	want = xprintf("credentials %s is readable by others (mode 0644); "
	    "run: chmod 600 %s (or 640 with root as owner and gpuqd's group "
	    "as group)", t->path, t->path);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
	assert_null(t->ut->auth);
}

/*
 * A key group-readable by the daemon's group is taken when root owns it
 * (a Kubernetes secret, systemd LoadCredential=), refused when anyone
 * else does; world-readable stays refused whoever owns it.
 */
static void
test_auth_group_readable_key(void **state)
{
	struct t	*t = *state;
	struct stat	 st;
	char		*cause = NULL;

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	t->ut->gcp->credentials = t->path;
	assert_int_equal(chmod(t->path, 0640), 0);
	assert_int_equal(stat(t->path, &st), 0);
	if (st.st_uid != 0) {
		/* Ours, not root's: the group must not read it. */
		assert_int_equal(auth_new(t->ut->http, t->ut->gcp,
		    &t->ut->auth, &cause), -EPERM);
		assert_non_null(strstr(cause, "is readable by its group "
		    "(mode 0640"));
		free(cause);
		return;
	}
	/* root:<our group> 0640: taken. */
	assert_int_equal(chown(t->path, 0, getegid()), 0);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), 0);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_SERVICE_ACCOUNT);
	auth_free(t->ut->auth);
	t->ut->auth = NULL;
	/* Another owner, same group: refused. */
	assert_int_equal(chown(t->path, 1, getegid()), 0);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EPERM);
	assert_non_null(strstr(cause, "is readable by its group (mode 0640, "
	    "owner uid 1"));
	free(cause);
	cause = NULL;
	/* root, a group gpuqd is not in: refused. */
	assert_int_equal(chown(t->path, 0, getegid() + 4242), 0);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EPERM);
	free(cause);
	cause = NULL;
	/* root:<our group> but world-readable: refused. */
	assert_int_equal(chown(t->path, 0, getegid()), 0);
	assert_int_equal(chmod(t->path, 0644), 0);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EPERM);
	assert_non_null(strstr(cause, "is readable by others"));
	free(cause);
	assert_int_equal(chown(t->path, geteuid(), getegid()), 0);
}

#define TRAINER	"trainer@gpuq-demo.iam.gserviceaccount.com"
#define IMP_URL	"https://iamcredentials.googleapis.com/v1/projects/-/" \
		"serviceAccounts/" TRAINER ":generateAccessToken"
#define WIF_AUD	"//iam.googleapis.com/projects/123456789012/locations/" \
		"global/workloadIdentityPools/ci/providers/gha"
#define SUBJECT	"eyJhbGciOiJSUzI1NiJ9.c3ViamVjdA.c2ln"

/* Get T->url with the credentials in T->path: the record's status. */
static long
get_with_file(struct t *t)
{
	struct gcptest_rec	 rec = { 0 };
	long			 status;

	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	gcptest_get(t->ut, t->url, &rec);
	status = rec.status;
	gcptest_rec_done(&rec);
	return status;
}

/* How many requests matching RE the fake answered with STATUS. */
static size_t
answered(struct t *t, const char *method, const char *re, long status)
{
	json_t	*reqs = fake_requests(&t->ut->fake, method, re, 0), *r;
	size_t	 i, n = 0;

	json_array_foreach(reqs, i, r)
		if (json_integer_value(json_object_get(r, "status")) ==
		    status)
			n++;
	json_decref(reqs);
	return n;
}

/*
 * impersonated_service_account: the source key's token buys TRAINER's
 * from IAM Credentials; the API call carries the impersonated token.
 */
static void
test_auth_impersonated(void **state)
{
	struct t	*t = *state;
	json_t		*src, *f;
	char		*srcpath, *text;

	NEED_FAKE(t->ut);
	srcpath = unittest_path(t->ut, "source.json");
	fake_make_key(&t->ut->fake, srcpath, EMAIL, 1);
	src = json_load_file(srcpath, 0, NULL);
	assert_non_null(src);
	f = json_pack("{s:s, s:s, s:o, s:[]}", "type",
	    "impersonated_service_account",
	    "service_account_impersonation_url", IMP_URL,
	    "source_credentials", src, "delegates");
	text = json_dumps(f, 0);
	write_file(t->path, text, 0600);
	free(text);
	json_decref(f);
	free(srcpath);

	/* Not allowed to act as TRAINER yet: the error says what to grant. */
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_IMPERSONATED);
	assert_non_null(strstr(auth_describe(t->ut->auth), "service account "
	    TRAINER " impersonated by service account " EMAIL));
	{
		struct gcptest_rec	 rec = { 0 };

		gcptest_get(t->ut, t->url, &rec);
		assert_int_not_equal(rec.status, 200);
		assert_non_null(rec.msg);
		assert_non_null(strstr(rec.msg, "serviceAccountTokenCreator"));
		gcptest_rec_done(&rec);
	}
	auth_free(t->ut->auth);
	t->ut->auth = NULL;

	json_decref(fake_post(&t->ut->fake, "/_fake/impersonable",
	    "{\"email\":\"" TRAINER "\"}"));
	assert_int_equal(get_with_file(t), 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	assert_true(answered(t, "POST", ":generateAccessToken$", 200) >= 1);
	assert_true(answered(t, "POST", "^/token$", 200) >= 1);
}

static void
write_external(struct t *t, const char *source, const char *extra)
{
	char	*text;

	text = xprintf("{\"type\":\"external_account\",\"audience\":\""
	    WIF_AUD "\",\"subject_token_type\":"
	    "\"urn:ietf:params:oauth:token-type:jwt\",\"token_url\":"
	    "\"https://sts.googleapis.com/v1/token\",\"credential_source\":"
	    "%s%s}", source, extra);
	write_file(t->path, text, 0600);
	free(text);
}

/* external_account, file-sourced: STS exchange alone, then with
 * impersonation; a subject token STS does not trust fails. */
static void
test_auth_external_file(void **state)
{
	struct t	*t = *state;
	char		*tokfile, *src;

	NEED_FAKE(t->ut);
	tokfile = unittest_path(t->ut, "oidc-token");
	write_file(tokfile, SUBJECT "\n", 0644);	/* a token, not a key */
	src = xprintf("{\"file\":\"%s\"}", tokfile);
	write_external(t, src, "");

	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_EXTERNAL);
	{
		struct gcptest_rec	 rec = { 0 };

		gcptest_get(t->ut, t->url, &rec);
		assert_int_not_equal(rec.status, 200);
		assert_non_null(strstr(rec.msg, "Security Token Service"));
		gcptest_rec_done(&rec);
	}
	auth_free(t->ut->auth);
	t->ut->auth = NULL;

	json_decref(fake_post(&t->ut->fake, "/_fake/workload_identity",
	    "{\"audience\":\"" WIF_AUD "\",\"subject_token\":\"" SUBJECT
	    "\"}"));
	assert_int_equal(get_with_file(t), 200);
	assert_true(answered(t, "POST", "^/v1/token$", 200) == 1);
	auth_free(t->ut->auth);
	t->ut->auth = NULL;

	/* Then as a service account, JSON-formatted subject. */
	write_file(tokfile, "{\"id_token\":\"" SUBJECT "\"}", 0644);
	free(src);
	src = xprintf("{\"file\":\"%s\",\"format\":{\"type\":\"json\","
	    "\"subject_token_field_name\":\"id_token\"}}", tokfile);
	write_external(t, src, ",\"service_account_impersonation_url\":\""
	    IMP_URL "\"");
	json_decref(fake_post(&t->ut->fake, "/_fake/impersonable",
	    "{\"email\":\"" TRAINER "\"}"));
	assert_int_equal(get_with_file(t), 200);
	assert_non_null(strstr(auth_describe(t->ut->auth), " as " TRAINER));
	assert_true(answered(t, "POST", "^/v1/token$", 200) == 2);
	assert_true(answered(t, "POST", ":generateAccessToken$", 200) == 1);
	free(src);
	free(tokfile);
}

/* external_account, url-sourced (with headers), and the URLs a file may
 * name: googleapis.com over https only. */
static void
test_auth_external_url(void **state)
{
	struct t	*t = *state;
	char		*src, *cause = NULL;

	NEED_FAKE(t->ut);
	json_decref(fake_post(&t->ut->fake, "/_fake/workload_identity",
	    "{\"audience\":\"" WIF_AUD "\",\"subject_token\":\"" SUBJECT
	    "\"}"));
	src = xprintf("{\"url\":\"%s/_fake/subject_token\",\"headers\":"
	    "{\"Metadata\":\"True\"},\"format\":{\"type\":\"json\","
	    "\"subject_token_field_name\":\"access_token\"}}",
	    t->ut->fake.url);
	write_external(t, src, "");
	free(src);
	assert_int_equal(get_with_file(t), 200);
	auth_free(t->ut->auth);
	t->ut->auth = NULL;

	write_file(t->path, "{\"type\":\"external_account\",\"audience\":\""
	    WIF_AUD "\",\"subject_token_type\":\"urn:ietf:params:oauth:"
	    "token-type:jwt\",\"token_url\":\"https://sts.evil.example/"
	    "v1/token\",\"credential_source\":{\"file\":\"/x\"}}", 0600);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "token_url must be an https URL on a "
	    "googleapis.com host"));
	free(cause);
	cause = NULL;
	write_file(t->path, "{\"type\":\"external_account\",\"audience\":\""
	    WIF_AUD "\",\"subject_token_type\":\"urn:ietf:params:oauth:"
	    "token-type:jwt\",\"credential_source\":{\"executable\":{"
	    "\"command\":\"/bin/true\"}}}", 0600);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "executable and AWS sources are not "
	    "supported"));
	free(cause);
}


/* Neither the subject token nor any access token of the federated chain
 * reaches the log, even at debug level. */
static void
test_auth_external_no_secrets_logged(void **state)
{
	struct t	*t = *state;
	char		*tokfile, *src, *logf, buf[65536];
	int		 fd, saved;
	ssize_t		 n;

	NEED_FAKE(t->ut);
	tokfile = unittest_path(t->ut, "oidc-token");
	write_file(tokfile, SUBJECT, 0644);
	src = xprintf("{\"file\":\"%s\"}", tokfile);
	write_external(t, src, ",\"service_account_impersonation_url\":\""
	    IMP_URL "\"");
	json_decref(fake_post(&t->ut->fake, "/_fake/workload_identity",
	    "{\"audience\":\"" WIF_AUD "\",\"subject_token\":\"" SUBJECT
	    "\"}"));
	json_decref(fake_post(&t->ut->fake, "/_fake/impersonable",
	    "{\"email\":\"" TRAINER "\"}"));
	logf = xprintf("%s/log", t->ut->dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(logf, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	log_verbosity = LOG_LEVEL_DEBUG;
	assert_int_equal(get_with_file(t), 200);
	log_verbosity = LOG_LEVEL_WARNING;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "auth: new access token"));
	assert_null(strstr(buf, SUBJECT));
	assert_null(strstr(buf, "ya29."));
	assert_null(strstr(buf, "Bearer"));
	assert_null(strstr(buf, "subject_token="));
	free(logf);
	free(src);
	free(tokfile);
}

static void
test_auth_bad_files(void **state)
{
	struct t	*t = *state;
	char		*cause = NULL, *want;

	NEED_FAKE(t->ut);
	t->ut->gcp->credentials = "/nonexistent/key.json";
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -ENOENT);
	assert_string_equal(cause, "credentials /nonexistent/key.json: No "
	    "such file or directory");
	free(cause);

	/* GOOGLE_APPLICATION_CREDENTIALS naming a missing file is an error,
	 * not a reason to look elsewhere. */
	t->ut->gcp->credentials = NULL;
	setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/env.json", 1);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -ENOENT);
	unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
	free(cause);

	t->ut->gcp->credentials = t->path;
	write_file(t->path, "not json", 0600);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "not a JSON key file"));
	free(cause);

	write_file(t->path, "{\"type\":\"gdch_service_account\"}", 0600);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EINVAL);
	want = xprintf("credentials %s: type \"gdch_service_account\" is "
	    "not supported; use a service_account key, authorized_user, "
	    "impersonated_service_account or external_account credentials",
	    t->path);
	assert_string_equal(cause, want);
	free(want);
	free(cause);

	write_file(t->path, "{\"type\":\"service_account\",\"client_email\":"
	    "\"a@b\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nAAAA\\n"
	    "-----END PRIVATE KEY-----\\n\"}", 0600);
	assert_int_equal(auth_new(t->ut->http, t->ut->gcp, &t->ut->auth,
	    &cause), -EINVAL);
	assert_non_null(strstr(cause, "private_key is not an RSA key"));
	free(cause);
	assert_null(t->ut->auth);
}

static void
test_auth_no_credentials(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	char		*want;

	NEED_FAKE(t->ut);
	/* The APIs at the fake, but no file and no metadata server. */
	t->ut->gcp->endpoint = NULL;
	t->ut->gcp->compute_endpoint = t->ut->fake.url;
	t->ut->gcp->metadata_endpoint = "http://127.0.0.1:1";
	t->ut->gcp->retry_max_attempts = 2;
	gcptest_auth(t->ut);
	assert_int_equal(auth_kind(t->ut->auth), AUTH_METADATA);
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 0);
	assert_int_equal(rec.kind, GCP_ERR_AUTH);
	want = xprintf("no Google Cloud credentials found: "
	    "GOOGLE_APPLICATION_CREDENTIALS and [gcp] credentials are unset, "
	    "there is no %s/.config/gcloud/application_default_credentials."
	    "json, and the metadata server at http://127.0.0.1:1/"
	    "computeMetadata/v1/instance/service-accounts/default/token did "
	    "not give a token (", t->ut->dir);
	assert_true(strncmp(rec.msg, want, strlen(want)) == 0);
	assert_non_null(strstr(rec.msg, "). Set GOOGLE_APPLICATION_CREDENTIALS"
	    " (or [gcp] credentials in gpuqd.conf) to a service-account key "
	    "file, run `gcloud auth application-default login`, or run gpuqd "
	    "on a Google Cloud VM with an attached service account"));
	free(want);
	gcptest_rec_done(&rec);
}

struct later {
	uv_timer_t	 timer;
	struct t	*t;
	struct gcptest_rec	*rec;
};

static void
later_on_timer(uv_timer_t *h)
{
	struct later	*l = h->data;
	struct http_req	 req = { .url = l->t->url, .flags = HTTP_AUTH,
	    .api = GCP_API_COMPUTE };

	assert_int_equal(http_request_start(l->t->ut->http, &req,
	    gcptest_rec_cb, l->rec), 0);
	uv_close((uv_handle_t *)h, NULL);
}

static void
test_auth_token_expiry(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	struct later	 l;
	json_t		*reqs;
	size_t		 i;

	NEED_FAKE(t->ut);
	/* 2 s tokens: refreshed at half-life, before any 401. */
	json_decref(fake_post(&t->ut->fake, "/_fake/token_lifetime",
	    "{\"seconds\":2}"));
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	gcptest_get(t->ut, t->url, &rec);
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 1);
	gcptest_rec_done(&rec);

	l.t = t;
	l.rec = &rec;
	uv_timer_init(t->ut->loop, &l.timer);
	l.timer.data = &l;
	uv_timer_start(&l.timer, later_on_timer, 1200, 0);
	unittest_run(t->ut);
	assert_int_equal(rec.status, 200);
	assert_int_equal(auth_fetches(t->ut->auth), 2);
	gcptest_rec_done(&rec);

	reqs = fake_requests(&t->ut->fake, "GET", "^/compute/", 2);
	assert_int_equal(json_array_size(reqs), 2);
	for (i = 0; i < json_array_size(reqs); i++)
		assert_int_equal(json_integer_value(json_object_get(
		    json_array_get(reqs, i), "status")), 200);
	json_decref(reqs);
}

static void
test_auth_revoked_token_401(void **state)
{
	struct t		*t = *state;
	struct http_req		 req = { .flags = HTTP_AUTH,
	    .api = GCP_API_COMPUTE };
	struct http_stats	 st;
	struct gcptest_rec	 recs[10];
	json_t			*reqs;
	size_t			 i, n401 = 0;

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);
	memset(recs, 0, sizeof recs);
	gcptest_get(t->ut, t->url, &recs[0]);
	assert_int_equal(recs[0].status, 200);
	gcptest_rec_done(&recs[0]);

	/* Google forgets the token: ten requests, each 401 once, one
	 * refresh between them, each retried once. */
	json_decref(fake_post(&t->ut->fake, "/_fake/revoke_tokens", "{}"));
	req.url = t->url;
	for (i = 0; i < 10; i++)
		assert_int_equal(http_request_start(t->ut->http, &req,
		    gcptest_rec_cb, &recs[i]), 0);
	unittest_run(t->ut);
	for (i = 0; i < 10; i++) {
		assert_int_equal(recs[i].status, 200);
		gcptest_rec_done(&recs[i]);
	}
	assert_int_equal(auth_fetches(t->ut->auth), 2);
	http_get_stats(t->ut->http, &st);
	assert_int_equal(st.auth_retries, 10);
	reqs = fake_requests(&t->ut->fake, "GET", "^/compute/", 21);
	assert_int_equal(json_array_size(reqs), 21);
	for (i = 0; i < json_array_size(reqs); i++)
		if (json_integer_value(json_object_get(json_array_get(reqs, i),
		    "status")) == 401)
			n401++;
	assert_int_equal(n401, 10);
	json_decref(reqs);
	reqs = fake_requests(&t->ut->fake, "POST", "^/token$", 2);
	assert_int_equal(json_array_size(reqs), 2);
	json_decref(reqs);
}

static void
test_auth_no_secrets_logged(void **state)
{
	struct t	*t = *state;
	struct gcptest_rec	 rec = { 0 };
	char		*logf, buf[65536];
	int		 fd, saved;
	ssize_t		 n;

	NEED_FAKE(t->ut);
	fake_make_key(&t->ut->fake, t->path, EMAIL, 1);
	t->ut->gcp->credentials = t->path;
	gcptest_auth(t->ut);

	/* Everything at debug level into a file. */
	logf = xprintf("%s/log", t->ut->dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(logf, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	log_verbosity = LOG_LEVEL_DEBUG;
	json_decref(fake_post(&t->ut->fake, "/_fake/fault", "{\"path\":"
	    "\"^/compute/\",\"status\":503,\"count\":1}"));
	gcptest_get(t->ut, t->url, &rec);
	log_verbosity = LOG_LEVEL_WARNING;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(rec.status, 200);
	gcptest_rec_done(&rec);

	n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "http: GET "));	/* it did log */
	assert_null(strstr(buf, "ya29."));
	assert_null(strstr(buf, "Bearer"));
	assert_null(strstr(buf, "PRIVATE KEY"));
	assert_null(strstr(buf, "assertion"));
	assert_null(strstr(buf, "fields="));		/* no query strings */
	free(logf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auth_service_account,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_env_variable,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_unregistered_key,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_authorized_user,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_auth_revoked_refresh_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_well_known_file,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_metadata_server,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_auth_refuses_readable_key, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_auth_group_readable_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_impersonated,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_external_file,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_external_url,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_auth_external_no_secrets_logged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_bad_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_auth_no_credentials,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_token_expiry, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_auth_revoked_token_401,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_no_secrets_logged,
		    setup, teardown),
	};

	log_init("test-auth", getenv("GPUQ_TEST_DEBUG") != NULL ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_WARNING, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
