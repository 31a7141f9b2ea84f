/*
 * fuzz-storage.c: the Cloud Storage listing mapper (providers/gcp/
 * storage.c: storage_on_page, which picks the newest checkpoint) from
 * the bytes of an objects.list page, taken as the last one; byte 0
 * picks the directory listed. The same bytes are also read as a gs://
 * URI, as a job's checkpoint.uri is. storage.c is included whole to
 * reach its static functions; no request leaves.
 */
#include "providers/gcp/storage.c"

#include "fuzz/fuzz.h"

static void
storage_fuzz_cb(int error, const char *uri, time_t updated,
    const char *cause, void *arg)
{
	int	*called = arg;

	if (error == 0 && uri != NULL && strncmp(uri, "gs://", 5) != 0)
		abort();
	(*called)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gcp_conf	 conf = { .project = "p" };
	struct storage_find		*f;
	struct http_resp		 r;
	json_t				*doc;
	char				*s, *bucket, *prefix;
	int				 called = 0;

	if (size < 1)
		return 0;
	fuzz_quiet();
	s = xstrndup((const char *)data + 1, size - 1);
	if (storage_parse_uri(s, &bucket, &prefix) == 0) {
		free(bucket);
		free(prefix);
	}
	free(s);

	if ((doc = fuzz_json(data + 1, size - 1)) == NULL)
		return 0;
	if (json_is_object(doc))
		(void)json_object_del(doc, "nextPageToken");
	f = xcalloc(1, sizeof *f);
	f->conf = gcp_conf_dup(&conf);
	f->bucket = xstrdup("bucket");
	f->prefix = xstrdup(data[0] & 1 ? "ckpt/42/" : "");
	f->cb = storage_fuzz_cb;
	f->arg = &called;
	memset(&r, 0, sizeof r);
	gcp_error_init(&r.err);
	r.status = 200;
	r.json = doc;
	storage_on_page(&r, f);
	if (called != 1)
		abort();
	json_decref(doc);
	return 0;
}
