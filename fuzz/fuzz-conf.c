/*
 * fuzz-conf.c: gpuqd.conf (daemon/conf.c, through libinih) from any
 * text. A file conf_load accepts must also print back: every key's
 * value text is made, as the reload log does.
 */
#include "config.h"

#include <stdlib.h>

#include "daemon/conf.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct conf_key	*keys;
	struct conf		 c, cur;
	const char		*path;
	char			*cause = NULL;
	size_t			 i, n;

	fuzz_quiet();
	path = fuzz_file("gpuqd.conf", data, size);
	if (conf_load(&c, path, 1, &cause) != 0) {
		if (cause == NULL)
			abort();
		free(cause);
		return 0;
	}
	keys = conf_keys(&n);
	for (i = 0; i < n; i++)
		free(conf_value_text(&c, &keys[i]));
	/* A reload onto the defaults, as SIGHUP does. */
	conf_init(&cur);
	(void)conf_apply(&cur, &c);
	conf_done(&cur);
	conf_done(&c);
	return 0;
}
