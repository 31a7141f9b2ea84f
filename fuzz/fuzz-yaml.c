/*
 * fuzz-yaml.c: the client's YAML reader (client/yaml.c) on any text.
 */
#include "config.h"

#include <stdlib.h>

#include <jansson.h>

#include "client/cli.h"
#include "fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*docs = NULL;
	int	*lines = NULL;
	char	*cause = NULL;

	if (cli_yaml_load("fuzz.yaml", (const char *)data, size, &docs,
	    &lines, &cause) == 0) {
		if (!json_is_array(docs))
			abort();
		json_decref(docs);
		free(lines);
	} else {
		if (cause == NULL)
			abort();
		free(cause);
	}
	/* A plain scalar on its own, as the typing of scalars sees it. */
	json_decref(cli_yaml_plain((const char *)data, size));
	return 0;
}
