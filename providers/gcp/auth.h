/*
 * auth.h: OAuth 2.0 access tokens for Google Cloud, from Application
 * Default Credentials (API-NOTES H.1-H.4).
 *
 * Where credentials come from, in Google's order: the [gcp] credentials
 * file, else $GOOGLE_APPLICATION_CREDENTIALS; else gcloud's
 * application_default_credentials.json ($CLOUDSDK_CONFIG, else
 * $HOME/.config/gcloud); else the metadata server of the VM gpuqd runs
 * on. A file is a service-account key (a JWT signed RS256 is exchanged
 * for a token) or an authorized_user (refresh-token grant).
 *
 * The token is cached and refreshed when less than five minutes (or half
 * its life, for short-lived tokens) remain; requests that need one while
 * it is being fetched wait for that one fetch. Tokens and keys are never
 * logged and are wiped before their memory is freed.
 */
#ifndef GPUQ_AUTH_H
#define GPUQ_AUTH_H

#include <sys/queue.h>

struct http;
struct auth;
struct gcp_conf;

enum auth_kind {
	AUTH_SERVICE_ACCOUNT,	/* JSON key, JWT bearer grant */
	AUTH_AUTHORIZED_USER,	/* gcloud user, refresh-token grant */
	AUTH_METADATA,		/* the VM's attached service account */
};

/*
 * One request waiting for a token, embedded in its owner (the HTTP
 * layer's request). cb runs once: with TOKEN (borrowed, valid during the
 * call) and ERROR 0, or TOKEN NULL, ERROR < 0 and CAUSE saying why.
 */
struct auth_waiter {
	TAILQ_ENTRY(auth_waiter) entry;
	void		(*cb)(struct auth_waiter *, const char *token,
			    int error, const char *cause);
	int		  queued;	/* on the waiters list */
	unsigned long	  seq;		/* order of arrival */
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
 * The cached token if it is fresh, else NULL. A token inside its refresh
 * margin but not yet expired is still returned, and a refresh starts in
 * the background. Borrowed: valid until the next turn of the loop.
 */
const char	*auth_token_peek(struct auth *);
/*
 * Queue W for a token; a fetch starts unless one is under way. W->cb
 * runs exactly once, later, unless auth_waiter_cancel() comes first.
 */
void		 auth_token_wait(struct auth *, struct auth_waiter *w);
/* Take W off the queue without calling it. Not queued: no-op. */
void		 auth_waiter_cancel(struct auth *, struct auth_waiter *w);
/*
 * An API answered 401 to TOKEN: drop it if it is still the cached one,
 * so the next request fetches a new one.
 */
void		 auth_invalidate(struct auth *, const char *token);
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
