/*
 * storage.h: Cloud Storage, for the checkpoint contract (doc/DESIGN.md): find
 * the newest checkpoint a job left under its checkpoint directory, so the
 * next attempt gets GPUQ_RESUME_FROM.
 *
 * A checkpoint is whatever sits directly under the directory: an object
 * ("step-000600.pt") or a folder of objects ("ckpt-00000600/model.pt",
 * ".../optimizer.pt"), whose time is its newest object's. The newest is
 * the one with the highest step number when every entry's name carries
 * one (the last run of digits: ckpt-00000600 -> 600), else the most
 * recently updated. Names starting with '.' or ending in ".tmp" are
 * partial writes and skipped.
 */
#ifndef GPUQ_STORAGE_H
#define GPUQ_STORAGE_H

#include <time.h>

struct http;
struct gcp_conf;

/*
 * The search ended: ERROR 0 and URI ("gs://b/p/ckpt-00000600/", a
 * folder ending in '/', or an object) with its UPDATED time, or URI NULL
 * if the directory holds no checkpoint; or ERROR < 0 (-ENOENT bucket
 * missing, -EACCES not allowed, -EIO other) and CAUSE. Strings are
 * borrowed for the call.
 */
typedef void	(*storage_cb)(int error, const char *uri, time_t updated,
		    const char *cause, void *arg);

/*
 * "gs://bucket/some/dir" -> "bucket", "some/dir/" (a trailing '/' added
 * to a non-empty path). New strings; -EINVAL if URI is not gs://bucket.
 */
int	 storage_parse_uri(const char *uri, char **ret_bucket,
	    char **ret_prefix);
/*
 * Find the newest checkpoint under DIR (a gs:// URI), listing every page
 * with HTTP (borrowed) at CONF's storage endpoint. Returns 0 and calls
 * CB once, later; or -EINVAL (DIR is not gs://...) or -ESHUTDOWN without
 * calling it.
 */
int	 storage_newest_checkpoint(struct http *http,
	    const struct gcp_conf *conf, const char *dir, storage_cb cb,
	    void *arg);

#endif
