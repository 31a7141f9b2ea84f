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
	char	*field;		/* "accelerator.count"; new string */
	char	*message;	/* "3 is not offered for nvidia-tesla-t4; use 1, 2 or 4" */
};

/*
 * Validate JOB (borrowed). On success returns 0 and *ret holds a NEW
 * normalized object: defaults filled in, GPU type in Compute Engine
 * spelling, durations as integer seconds. On failure returns -EINVAL,
 * *ret untouched, and ERR filled (free with spec_error_done).
 */
int	spec_validate(json_t *job, json_t **ret, struct spec_error *err);
void	spec_error_done(struct spec_error *);

#endif
