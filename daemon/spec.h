/*
 * spec.h: validation of a job spec (gpuq-job(5)) as it comes off the wire.
 *
 * Strict: unknown keys are rejected; every error names the field and
 * says what is allowed. Knows nothing of the store or the cloud.
 */
#ifndef GPUQ_SPEC_H
#define GPUQ_SPEC_H

#include <jansson.h>

struct spec_error {
	/*
	 * Path of the bad field: "accelerator.count", "env.FOO",
	 * "regions[2]"; "" when the spec as a whole is wrong (not an
	 * object). New string.
	 */
	char	*field;
	/* "3 is not offered for nvidia-tesla-t4; use 1, 2 or 4"; new. */
	char	*message;
};

/*
 * Validate JOB (borrowed). On success returns 0 and *ret holds a NEW
 * normalized object: defaults filled in, GPU type in Compute Engine
 * spelling, durations as integer seconds, checkpoint.uri ending in '/',
 * keys in the order gpuq-job(5) lists them. On failure returns -EINVAL,
 * *ret untouched, and ERR filled with the first error (unknown keys
 * first, then fields in documented order); free with spec_error_done.
 * Validating a normalized spec again gives the same spec.
 */
int	spec_validate(json_t *job, json_t **ret, struct spec_error *err);
/* Free ERR's strings and clear them; a zeroed ERR is fine. */
void	spec_error_done(struct spec_error *);

#endif
