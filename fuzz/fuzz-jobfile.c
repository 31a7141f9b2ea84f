/*
 * fuzz-jobfile.c: the client's job files (client/jobfile.c): one job or
 * a sweep, YAML or JSON, told by content.
 */
#include "config.h"

#include <stdlib.h>

#include <jansson.h>

#include "client/cli.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_docs	 docs = { NULL, 0 };
	char		*cause = NULL;
	size_t		 i;

	if (cli_jobfile_parse("job.yaml", (const char *)data, size, &docs,
	    &cause) == 0) {
		for (i = 0; i < docs.n; i++)
			if (docs.v[i].job == NULL)
				abort();
		cli_docs_done(&docs);
	} else {
		if (cause == NULL)
			abort();
		free(cause);
	}
	return 0;
}
