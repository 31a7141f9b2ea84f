/*
 * fuzz-token.c: the OAuth token answer (providers/gcp/auth.c:
 * auth_on_token) from the bytes of a reply, for credentials of each
 * kind; byte 0 picks the kind and the HTTP status (an error status is
 * parsed as http.c would). auth.c is included whole to reach its static
 * functions; no request leaves.
 */
#include "providers/gcp/auth.c"

#include "fuzz/fuzz.h"

static struct http *
token_fuzz_http(const struct gcp_conf *conf)
{
	static struct http	*http;

	if (http == NULL && http_new(uv_default_loop(), conf, &http) != 0)
		abort();
	return http;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char user[] = "{\"type\": \"authorized_user\", "
	    "\"client_id\": \"c\", \"client_secret\": \"s\", "
	    "\"refresh_token\": \"r\", \"quota_project_id\": \"q\"}";
	static const long statuses[] = { 200, 200, 200, 400, 401, 403, 404,
	    500 };
	struct gcp_conf		 conf = { .project = "p" };
	struct auth		*a;
	struct http_resp	 r;
	json_t			*doc;
	char			*text;
	uint64_t		 now;
	double			 exp;

	if (size < 1)
		return 0;
	fuzz_quiet();
	if (data[0] & 0x80)
		conf.credentials = fuzz_file("adc.json",
		    (const uint8_t *)user, sizeof user - 1);
	else {
		/* The metadata server's kind: no file anywhere. */
		conf.credentials = NULL;
		setenv("CLOUDSDK_CONFIG", fuzz_tmpdir(), 1);
		unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
		conf.metadata_endpoint = "http://127.0.0.1:9";
	}
	if (auth_new(token_fuzz_http(&conf), &conf, &a, NULL) != 0)
		abort();
	text = xstrndup((const char *)data + 1, size - 1);
	doc = json_loadb(text, size - 1, 0, NULL);
	memset(&r, 0, sizeof r);
	gcp_error_init(&r.err);
	r.status = statuses[data[0] & 7];
	r.json = doc;
	r.body = text;
	r.len = size - 1;
	if (r.status != 200)
		gcp_error_from_http(&r.err, r.status, doc, text, size - 1);
	a->fetching = 1;
	auth_on_token(&r, a);
	/*
	 * A token lives from now to at most a day from now, and a reply
	 * that says it lives a second or more is not stale at once.
	 */
	now = uv_now(uv_default_loop());
	exp = json_number_value(json_object_get(doc, "expires_in"));
	if (a->token != NULL && (a->expires < now ||
	    a->expires > now + 86400 * 1000 || a->margin > a->expires - now ||
	    (exp >= 1 && a->expires == now)))
		abort();
	(void)auth_kind(a);
	auth_free(a);
	gcp_error_done(&r.err);
	json_decref(doc);
	free(text);
	return 0;
}
