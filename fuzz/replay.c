/*
 * replay.c: main() for a harness outside libFuzzer. Feeds every file
 * named on the command line, or found in a directory named there, to
 * LLVMFuzzerTestOneInput once, in name order; a crash or a sanitizer
 * report fails the run. This is how make check replays the inputs that
 * once broke gpuq (tests/unit/data/fuzz/) and the seed corpora.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"

static int
replay_file(const char *path)
{
	FILE		*f;
	uint8_t		*buf = NULL, *exact;
	size_t		 len = 0, cap = 0, n;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 65536) {
			cap = cap * 2 + 65536;
			if ((buf = realloc(buf, cap)) == NULL)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	/* libFuzzer hands over exactly LEN bytes: so ASan sees overreads. */
	if ((exact = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	memcpy(exact, buf, len);
	free(buf);
	(void)LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int
replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
replay_dir(const char *dir, size_t *count)
{
	DIR		*d;
	struct dirent	*e;
	char		**v = NULL, *p;
	size_t		 n = 0, i;
	int		 rc = 0;

	if ((d = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if ((v = realloc(v, (n + 1) * sizeof *v)) == NULL)
			abort();
		if ((p = malloc(strlen(dir) + strlen(e->d_name) + 2)) == NULL)
			abort();
		sprintf(p, "%s/%s", dir, e->d_name);
		v[n++] = p;
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof *v, replay_cmp);
	for (i = 0; i < n; i++) {
		if (replay_file(v[i]) != 0)
			rc = -1;
		else
			(*count)++;
		free(v[i]);
	}
	free(v);
	return rc;
}

int
main(int argc, char **argv)
{
	struct stat	 sb;
	size_t		 count = 0;
	int		 i, rc = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
			if (replay_dir(argv[i], &count) != 0)
				rc = 1;
		} else if (replay_file(argv[i]) != 0)
			rc = 1;
		else
			count++;
	}
	printf("%s: %zu inputs replayed\n", argv[0], count);
	return rc;
}
