/*
 * auth.h: OAuth 2.0 access tokens for Google Cloud, from Application
 * Default Credentials (DESIGN GH.1-H.4).
 *
 * Where credentials come from, in Google's order: the [gcp] credentials
 * file, else $GOOGLE_APPLICATION_CREDENTIALS; else gcloud's
 * application_default_credentials.json ($CLOUDSDK_CONFIG, else
 * $HOME/.config/gcloud); else the metadata server of the VM gpuqd runs
 * on. A file is a service-account key (a JWT signed RS256 is exchanged
 * for a token), an authorized_user (refresh-token grant), an
 * impersonated_service_account (its source credentials' token buys one
 * of the target account from IAM Credentials generateAccessToken) or an
 * external_account (workload identity federation: a subject token read
 * from a file or a URL is exchanged at Security Token Service, then,
 * if the file names one, for a service account's token as above).
 *
 * A key file must not be readable by others: mode 0600 (or 0400) owned by
 * the daemon's user, or group-readable (0640) when owned by root and its
 * group is one the daemon is in -- as a Kubernetes secret or a systemd
 * LoadCredential= hands it over. World-readable is always refused.
 *
 * The token is cached and refreshed when less than five minutes (or half
 * its life, for short-lived tokens) remain; requests that need one while
 * it is being fetched wait for that one fetch. Tokens and keys are never
 * logged and are wiped before their memory is freed.
 *
 * The HTTP client gets its tokens through auth_token_source() (http.h's
 * struct http_token_source), which gcp.c attaches: auth.c uses http.c
 * to fetch tokens, http.c knows nothing of auth.c.
 */
#ifndef GPUQ_AUTH_H
#define GPUQ_AUTH_H

struct http;
struct http_token_source;
struct auth;
struct gcp_conf;

enum auth_kind {
	AUTH_SERVICE_ACCOUNT,	/* JSON key, JWT bearer grant */
	AUTH_AUTHORIZED_USER,	/* gcloud user, refresh-token grant */
	AUTH_METADATA,		/* the VM's attached service account */
	AUTH_IMPERSONATED,	/* impersonated_service_account: a source
				   credential, then iamcredentials
				   generateAccessToken */
	AUTH_EXTERNAL,		/* external_account (workload identity
				   federation): a subject token from a file
				   or URL, STS token exchange, then
				   optionally generateAccessToken */
};

/*
 * Find credentials (see above), read and check them now; no network.
 * HTTP (borrowed) fetches tokens; CONF is read now. Errors: -ENOENT a
 * named file is missing, -EPERM a key file others can read, -EINVAL bad
 * content; *cause says which file and what to do.
 */
int		 auth_new(struct http *http, const struct gcp_conf *conf,
		    struct auth **ret, char **cause);
/*
 * Fail every waiter (-ECANCELED), wipe keys and tokens, free; a token
 * fetch still in flight frees it when it ends. NULL ok. Safe from inside
 * a waiter's callback.
 */
void		 auth_free(struct auth *);
/*
 * The token source of A for http_set_token_source(): get gives the
 * cached token while it is fresh (one inside the refresh margin is still
 * given, and a refresh starts in the background), else queues the
 * waiter and starts a fetch unless one is under way; invalidate drops
 * the cached token after a 401; user_project is auth_quota_project().
 * Borrowed: valid until auth_free(A).
 */
const struct http_token_source *auth_token_source(struct auth *a);
/* Kind of the credentials found. */
enum auth_kind	 auth_kind(struct auth *);
/* "service account gpuq@p.iam.gserviceaccount.com (key FILE)" and so
 * on, for the startup log. Borrowed. */
const char	*auth_describe(struct auth *);
/* Project named by the credential file (project_id / quota_project_id),
 * or NULL. Borrowed. */
const char	*auth_project(struct auth *);
/*
 * The project user credentials bill API quota to (quota_project_id of an
 * authorized_user file), sent as x-goog-user-project; NULL otherwise.
 */
const char	*auth_quota_project(struct auth *);
/* Tokens fetched so far (tests assert one fetch serves many). */
unsigned long	 auth_fetches(struct auth *);

#endif
