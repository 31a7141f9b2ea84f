/*
 * fuzz-util.c: helpers of fuzz.h.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "providers/provider.h"
#include "fuzz/fuzz.h"

static char	fuzz_dir[256];
static char	fuzz_path[512];

static void
fuzz_tmpdir_remove(void)
{
	DIR		*d;
	struct dirent	*e;
	char		 p[512];

	if ((d = opendir(fuzz_dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", fuzz_dir, e->d_name);
		(void)unlink(p);
	}
	closedir(d);
	(void)rmdir(fuzz_dir);
}

const char *
fuzz_tmpdir(void)
{
	const char	*base;

	if (fuzz_dir[0] != '\0')
		return fuzz_dir;
	if (access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	else if ((base = getenv("TMPDIR")) == NULL || *base == '\0')
		base = "/tmp";
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/gpuq-fuzz.XXXXXX", base);
	if (mkdtemp(fuzz_dir) == NULL) {
		perror(fuzz_dir);
		abort();
	}
	atexit(fuzz_tmpdir_remove);
	return fuzz_dir;
}

const char *
fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	int	fd;

	snprintf(fuzz_path, sizeof fuzz_path, "%s/%s", fuzz_tmpdir(), name);
	fd = open(fuzz_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size)) {
		perror(fuzz_path);
		abort();
	}
	close(fd);
	return fuzz_path;
}

json_t *
fuzz_json(const uint8_t *data, size_t size)
{
	return json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
}

void
fuzz_quiet(void)
{
	static int	done;

	if (!done) {
		log_init("fuzz", LOG_LEVEL_ERR, 0);
		done = 1;
	}
}

static void
fuzz_string_check(const char *s)
{
	volatile size_t	n;

	if (s != NULL)
		n = strlen(s);
	(void)n;
}

void
fuzz_observed_check(const struct prov_observed *o)
{
	if (o->state < PROV_PENDING || o->state > PROV_ERROR)
		abort();
	fuzz_string_check(o->resource);
	fuzz_string_check(o->cloud_id);
	fuzz_string_check(o->zone);
	fuzz_string_check(o->message);
	fuzz_string_check(prov_state_name(o->state));
}

void
fuzz_map_page(json_t *doc, const char *items, int (*map)(json_t *, void *),
    void *arg)
{
	json_t		*a, *scope, *x;
	const char	*key;
	size_t		 i;

	a = json_object_get(doc, items);
	if (json_is_array(a)) {
		json_array_foreach(a, i, x)
			(void)map(x, arg);
		return;
	}
	a = json_object_get(doc, "items");
	if (json_is_object(a)) {
		json_object_foreach(a, key, scope)
			json_array_foreach(json_object_get(scope, items), i, x)
				(void)map(x, arg);
		return;
	}
	(void)map(doc, arg);
}
