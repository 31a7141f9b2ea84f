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

/*
 * The region catalog: once set, spec_validate refuses a region not in
 * it ("unknown region \"us-centrall1\"; did you mean us-central1?").
 * Without one, a region only has to look like a region name.
 *
 * spec_catalog_load reads the "region" column of a CSV file with a
 * header line (the bundled price table, data/prices.csv; '#' lines are
 * comments): 0, or -errno / -EINVAL with *cause (new). spec_catalog_set
 * copies NAMES. spec_catalog_clear forgets it.
 */
int	spec_catalog_load(const char *path, char **cause);
void	spec_catalog_set(const char *const *names, size_t n);
void	spec_catalog_clear(void);
/* Regions in the catalog; 0 when none is loaded. */
size_t	spec_catalog_size(void);
/*
 * NULL when NAME is a region name in the catalog; else why not, as a NEW
 * string: not a region name, a zone (and its region), or unknown (and
 * the closest known name). For gpuqd.conf's [gcp] regions.
 */
char	*spec_region_check(const char *name);

/* What the daemon's settings (gpuqd.conf(5)) add to a job's check. */
struct spec_site {
	const char	*checkpoint_root;	/* [gcp] checkpoint_root */
	int		 spot_requires_checkpoint;
};

/*
 * Check NORM (a spec_validate result, borrowed) against SITE: a job that
 * may run on Spot and has no checkpoint place (no checkpoint.uri, no
 * checkpoint_root) is a warning, or an error on checkpoint.uri when
 * SITE->spot_requires_checkpoint. 0 and *ret_warnings (a NEW array of
 * strings, maybe empty), or -EINVAL and ERR filled.
 */
int	spec_site_check(json_t *norm, const struct spec_site *site,
	    json_t **ret_warnings, struct spec_error *err);

#endif
