/*
 * fuzz-spec.c: the job spec validator (daemon/spec.c) on any JSON value,
 * parsed as the daemon parses a request. A spec it accepts must come out
 * the same when validated again (spec.h promises it).
 */
#include "config.h"

#include <stdlib.h>

#include <jansson.h>

#include "daemon/spec.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec_error	 err = { NULL, NULL };
	json_t			*job, *norm = NULL, *again = NULL;

	fuzz_quiet();
	job = json_loadb((const char *)data, size,
	    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	if (job == NULL)
		return 0;
	if (spec_validate(job, &norm, &err) == 0) {
		if (err.field != NULL || err.message != NULL)
			abort();
		if (spec_validate(norm, &again, &err) != 0 ||
		    !json_equal(norm, again))
			abort();
	} else if (err.field == NULL || err.message == NULL)
		abort();
	spec_error_done(&err);
	json_decref(again);
	json_decref(norm);
	json_decref(job);
	return 0;
}
