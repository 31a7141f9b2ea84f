/*
 * jobfile.c: read a job file, YAML or JSON told apart by content, into
 * the list of jobs it holds (one, or several for a sweep).
 *
 * It checks only that each job is a mapping: what a job may contain is
 * the daemon's to judge (daemon/spec.c), so the two never disagree.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/log.h"
#include "common/xmalloc.h"

#define JOBFILE_MAX	(64 * 1024 * 1024)	/* bytes; many 1 MiB jobs */

void
cli_docs_done(struct cli_docs *d)
{
	size_t	i;

	for (i = 0; i < d->n; i++)
		json_decref(d->v[i].job);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* Add V (borrowed; copied, so later edits touch only this job). */
static void
jobfile_add(struct cli_docs *d, json_t *v, int line)
{
	d->v = xreallocarray(d->v, d->n + 1, sizeof *d->v);
	d->v[d->n].job = json_deep_copy(v);
	d->v[d->n].line = line;
	if (d->v[d->n].job == NULL)
		fatalx("out of memory");
	d->n++;
}

static const char *
jobfile_type(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/*
 * One top-level value: a job, or a list of jobs. Where LINE is known
 * (YAML) it is the line the value starts at.
 */
static int
jobfile_value(const char *name, json_t *v, int line, struct cli_docs *d,
    char **cause)
{
	json_t	*e;
	size_t	 i;
	char	 where[PATH_MAX + 32];

	if (line > 0)
		snprintf(where, sizeof where, "%s:%d", name, line);
	else
		snprintf(where, sizeof where, "%s", name);
	if (json_is_object(v)) {
		jobfile_add(d, v, line);
		return 0;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			if (!json_is_object(e)) {
				*cause = xprintf("%s: job %zu of the list "
				    "is %s; each job must be a mapping of "
				    "fields (see gpuq-job(5))", where,
				    i + 1, jobfile_type(e));
				return -EINVAL;
			}
			jobfile_add(d, e, line);
		}
		return 0;
	}
	*cause = xprintf("%s: a job must be a mapping of fields "
	    "(see gpuq-job(5)), not %s", where, jobfile_type(v));
	return -EINVAL;
}

/* A JSON error in the value starting at byte OFF, as a file position. */
static void
jobfile_json_fail(const char *name, const char *buf, size_t off,
    const json_error_t *err, char **cause)
{
	size_t	i;
	int	line = 1, col = 1;

	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	if (err->line <= 1)
		col += err->column - 1;
	else
		col = err->column;
	*cause = xprintf("%s:%d:%d: %s", name, line + err->line - 1, col,
	    err->text);
}

/*
 * JSON: one object, an array of objects, or several values one after
 * another (JSON lines, as jq -c writes them).
 */
static int
jobfile_json(const char *name, const char *buf, size_t len,
    struct cli_docs *d, char **cause)
{
	json_error_t	 err;
	json_t		*v;
	size_t		 off = 0;
	int		 rc;

	for (;;) {
		while (off < len && strchr(" \t\r\n", buf[off]) != NULL)
			off++;
		if (off == len)
			return 0;
		v = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK |
		    JSON_REJECT_DUPLICATES, &err);
		if (v == NULL) {
			jobfile_json_fail(name, buf, off, &err, cause);
			return -EINVAL;
		}
		rc = jobfile_value(name, v, 0, d, cause);
		json_decref(v);
		if (rc != 0)
			return rc;
		off += err.position;
	}
}

static int
jobfile_yaml(const char *name, const char *buf, size_t len,
    struct cli_docs *d, char **cause)
{
	json_t	*docs, *v;
	int	*lines, rc;
	size_t	 i;

	if ((rc = cli_yaml_load(name, buf, len, &docs, &lines, cause)) != 0)
		return rc;
	json_array_foreach(docs, i, v) {
		if (json_is_null(v))
			continue;	/* empty document, e.g. a final "---" */
		if ((rc = jobfile_value(name, v, lines[i], d, cause)) != 0)
			break;
	}
	json_decref(docs);
	free(lines);
	return rc;
}

/* Does text starting with '{' or '[' open a JSON object: {"key"? */
static int
jobfile_looks_json(const char *p, size_t len)
{
	size_t	i = 0;

	while (i < len && (p[i] == '[' || strchr(" \t\r\n", p[i]) != NULL))
		i++;
	if (i >= len || p[i] != '{')
		return 0;
	for (i++; i < len && strchr(" \t\r\n", p[i]) != NULL; i++)
		;
	return i < len && (p[i] == '"' || p[i] == '}');
}

int
cli_jobfile_parse(const char *name, const char *buf, size_t len,
    struct cli_docs *ret, char **cause)
{
	struct cli_docs	 d = { NULL, 0 };
	size_t		 off = 0;
	char		*jcause = NULL;
	int		 rc;

	/* Skip a UTF-8 byte order mark (jansson does not) and space. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	while (off < len && strchr(" \t\r\n", buf[off]) != NULL)
		off++;
	if (off < len && (buf[off] == '{' || buf[off] == '[')) {
		/*
		 * JSON, or YAML in flow style ({name: x}). Try JSON first;
		 * if that fails and the text does not look like JSON (a
		 * quoted first key), try YAML; when both fail, the JSON
		 * error is the one that helps.
		 */
		rc = jobfile_json(name, buf, len, &d, &jcause);
		if (rc != 0 && !jobfile_looks_json(buf + off, len - off)) {
			cli_docs_done(&d);
			rc = jobfile_yaml(name, buf, len, &d, cause);
			if (rc != 0) {
				free(*cause);
				*cause = NULL;
			}
		}
		if (rc != 0) {
			*cause = jcause;
			jcause = NULL;
		}
		free(jcause);
	} else
		rc = jobfile_yaml(name, buf, len, &d, cause);
	if (rc != 0) {
		cli_docs_done(&d);
		return rc;
	}
	if (d.n == 0) {
		*cause = xprintf("%s: no job in the file", name);
		return -EINVAL;
	}
	*ret = d;
	return 0;
}

int
cli_jobfile_read(const char *path, struct cli_docs *ret, char **cause)
{
	const char	*name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	char		*buf = NULL;
	size_t		 len = 0, cap;
	ssize_t		 n;
	struct stat	 sb;
	int		 fd, rc;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		rc = -errno;
		*cause = xprintf("%s: %s", path, strerror(errno));
		return rc;
	}
	/* A regular file's size is known: one buffer, one read. */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size < JOBFILE_MAX)
		cap = (size_t)sb.st_size + 1;
	else
		cap = 16384;
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = -errno;
			*cause = xprintf("%s: %s", name, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > JOBFILE_MAX) {
			rc = -EFBIG;
			*cause = xprintf("%s: larger than %d MiB; is this "
			    "a job file?", name, JOBFILE_MAX >> 20);
			goto out;
		}
	}
	rc = cli_jobfile_parse(name, buf, len, ret, cause);
out:
	if (fd != STDIN_FILENO)
		close(fd);
	free(buf);
	return rc;
}
