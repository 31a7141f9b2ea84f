/*
 * fuzz-adc.c: credential files (providers/gcp/auth.c auth_new, through
 * [gcp] credentials): a service-account key or an authorized_user file
 * from gcloud, any bytes.
 */
#include "config.h"

#include <stdlib.h>

#include "providers/gcp/auth.h"
#include "providers/gcp/gcp.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcp_conf	 conf = { .project = "p" };
	struct auth	*a;
	char		*cause = NULL;

	fuzz_quiet();
	conf.credentials = fuzz_file("credentials.json", data, size);
	if (auth_new(NULL, &conf, &a, &cause) == 0) {
		if (auth_describe(a) == NULL)
			abort();
		(void)auth_project(a);
		(void)auth_quota_project(a);
		auth_free(a);
	} else {
		if (cause == NULL)
			abort();
		free(cause);
	}
	return 0;
}
