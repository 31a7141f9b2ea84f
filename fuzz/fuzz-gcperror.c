/*
 * fuzz-gcperror.c: the Google error body parser (providers/gcp/
 * gcp-error.c) from the bytes of a reply, as http.c hands it over: the
 * body parsed (or not) and raw, NUL-terminated. Bytes 0-1 pick the
 * HTTP status; the same body is also read as a Compute Operation and
 * as a google.rpc.Status.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "providers/gcp/gcp.h"
#include "fuzz/fuzz.h"

static void
gcperror_fuzz_check(struct gcp_error *e)
{
	struct gcp_error	 copy;
	char			*text;

	/* Seconds to wait: none (-1), or at most a day. */
	if (e->retry_after < -1 || e->retry_after > 86400)
		abort();
	(void)gcp_error_retryable(e);
	(void)gcp_error_kind_name(e->kind);
	text = gcp_error_text(e);
	if (text == NULL)
		abort();
	free(text);
	gcp_error_init(&copy);
	gcp_error_copy(&copy, e);
	gcp_error_done(&copy);
	gcp_error_done(e);
}

/* Does BODY's error carry a RetryInfo whose delay is a number >= 0? */
static int
gcperror_fuzz_has_delay(json_t *body)
{
	json_t		*details, *d;
	const char	*type, *s;
	char		*end;
	double		 x;
	size_t		 i;

	details = json_object_get(json_object_get(body, "error"), "details");
	json_array_foreach(details, i, d) {
		type = json_string_value(json_object_get(d, "@type"));
		s = json_string_value(json_object_get(d, "retryDelay"));
		if (type == NULL || s == NULL ||
		    strstr(type, "google.rpc.RetryInfo") == NULL ||
		    strstr(type, "google.rpc.ErrorInfo") != NULL)
			continue;
		x = strtod(s, &end);
		if (end != s && x >= 0)
			return 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcp_error	 e;
	json_t			*body;
	char			*text;
	long			 status;

	if (size < 2)
		return 0;
	fuzz_quiet();
	status = 100 + (data[0] << 8 | data[1]) % 500;
	size -= 2;
	text = malloc(size + 1);
	memcpy(text, data + 2, size);
	text[size] = '\0';
	body = json_loadb(text, size, 0, NULL);

	gcp_error_init(&e);
	gcp_error_from_http(&e, status, body, text, size);
	/* Any delay, even 1e400 s, is a delay (cut to a day). */
	if (json_is_object(json_object_get(body, "error")) &&
	    gcperror_fuzz_has_delay(body) && e.retry_after < 0)
		abort();
	gcperror_fuzz_check(&e);
	gcp_error_init(&e);
	if (gcp_error_from_operation(body, &e) == 1)
		gcperror_fuzz_check(&e);
	gcp_error_done(&e);
	gcp_error_init(&e);
	if (gcp_error_from_status(body, &e) == 1)
		gcperror_fuzz_check(&e);
	gcp_error_done(&e);
	gcp_error_init(&e);
	if (gcp_error_from_status(json_object_get(body, "error"), &e) == 1)
		gcperror_fuzz_check(&e);
	gcp_error_done(&e);

	json_decref(body);
	free(text);
	return 0;
}
