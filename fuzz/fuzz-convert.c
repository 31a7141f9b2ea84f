/*
 * fuzz-convert.c: other services' job files (client/convert.c, gpuq
 * submit --from) and the YAML --dry-run writes (client/yaml-out.c).
 *
 * The first byte chooses the service (even: vertex, odd: batch); the
 * rest is the file. Beyond "no crash": a refusal has a cause naming a
 * place, and a converted job written as YAML reads back as the very
 * same job.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "fuzz/fuzz.h"

/* The job J as --dry-run writes it must read back as J. */
static void
check_round_trip(json_t *j)
{
	struct cli_docs	 back = { NULL, 0 };
	char		*buf = NULL, *cause = NULL;
	size_t		 len = 0;
	FILE		*m;

	if ((m = open_memstream(&buf, &len)) == NULL)
		abort();
	cli_yaml_write(m, j);
	if (fclose(m) != 0)
		abort();
	if (cli_jobfile_parse("out.yaml", buf, len, &back, &cause) != 0 ||
	    back.n != 1 || !json_equal(back.v[0].job, j))
		abort();
	cli_docs_done(&back);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_docs	 docs = { NULL, 0 };
	const char	*from;
	json_t		*notes;
	char		*cause = NULL;
	size_t		 i;

	if (size < 1)
		return 0;
	from = data[0] % 2 == 0 ? "vertex" : "batch";
	if (cli_jobfile_parse("job.yaml", (const char *)data + 1, size - 1,
	    &docs, &cause) != 0) {
		free(cause);
		return 0;
	}
	if (cli_convert_docs(from, "job.yaml", &docs, &notes, &cause) == 0) {
		for (i = 0; i < docs.n; i++)
			check_round_trip(docs.v[i].job);
		json_decref(notes);
	} else {
		/* "job.yaml[:LINE]: PATH: words" */
		if (cause == NULL || strncmp(cause, "job.yaml", 8) != 0 ||
		    strstr(cause, ": ") == NULL)
			abort();
		free(cause);
	}
	cli_docs_done(&docs);
	return 0;
}
