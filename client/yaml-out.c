/*
 * yaml-out.c: a JSON value written as block YAML, for gpuq submit
 * --dry-run: the job people would have written by hand.
 *
 * What it writes reads back (client/yaml.c) as the same JSON value: a
 * string is written plain only when YAML would read it back as that
 * very string, and otherwise double-quoted with escapes for what YAML
 * does not allow raw. Knows nothing of what a job is.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/log.h"
#include "common/xmalloc.h"

/* 1 if S may be written plain: it reads back as the same string. */
static int
yaml_out_plain_ok(const char *s)
{
	const char	*p;
	json_t		*v;
	int		 ok;

	if (*s == '\0' || strchr("-?:,[]{}#&*!|>'\"%@`~ ", *s) != NULL)
		return 0;
	for (p = s; *p != '\0'; p++)
		if (strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._/-=+@", *p) == NULL &&
		    !(*p == ':' && p[1] != ' ' && p[1] != '\0'))
			return 0;
	/* "true", "10", "1e3", "null": YAML would type them. */
	v = cli_yaml_plain(s, strlen(s));
	ok = v != NULL && json_is_string(v) &&
	    strcmp(json_string_value(v), s) == 0;
	json_decref(v);
	return ok;
}

/*
 * S double-quoted. YAML allows neither C0 controls, DEL nor C1
 * controls (U+0080..U+009F) in a file, so those are escaped, as are
 * '"' and '\\'; JSON's encoder would leave DEL and C1 raw.
 */
static void
yaml_out_quoted(FILE *f, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		if (p[i] == '"' || p[i] == '\\')
			fprintf(f, "\\%c", p[i]);
		else if (p[i] == '\n')
			fputs("\\n", f);
		else if (p[i] == '\t')
			fputs("\\t", f);
		else if (p[i] < 0x20 || p[i] == 0x7f)
			fprintf(f, "\\x%02x", p[i]);
		else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 &&
		    p[i + 1] <= 0x9f)
			fprintf(f, "\\x%02x", p[++i]);
		else
			fputc(p[i], f);
	}
	fputc('"', f);
}

/* A scalar: plain when it reads back so, else double-quoted. */
static void
yaml_out_scalar(FILE *f, json_t *v)
{
	char	*s;

	if (json_is_string(v)) {
		/* A NUL inside (JSON's \u0000) is only safe quoted. */
		if (strlen(json_string_value(v)) == json_string_length(v) &&
		    yaml_out_plain_ok(json_string_value(v)))
			fputs(json_string_value(v), f);
		else
			yaml_out_quoted(f, json_string_value(v),
			    json_string_length(v));
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (s == NULL)
		fatalx("out of memory");
	fputs(s, f);
	free(s);
}

/* 1 if V is written on its key's line: a scalar or an empty container. */
static int
yaml_out_inline(json_t *v)
{
	if (json_is_object(v))
		return json_object_size(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	return 1;
}

static void	yaml_out_value(FILE *, json_t *, int);

/* An inline value: a scalar, {} or []. */
static void
yaml_out_inline_value(FILE *f, json_t *v)
{
	if (json_is_object(v))
		fputs("{}", f);
	else if (json_is_array(v))
		fputs("[]", f);
	else
		yaml_out_scalar(f, v);
}

/* A key, quoted when it would not read back plain. */
static void
yaml_out_key(FILE *f, const char *k)
{
	json_t	*s;

	s = json_string(k);
	if (s == NULL)
		fatalx("out of memory");
	yaml_out_scalar(f, s);
	json_decref(s);
	fputc(':', f);
}

/* V (not inline) at INDENT columns, starting on a fresh line. */
static void
yaml_out_value(FILE *f, json_t *v, int indent)
{
	const char	*k;
	json_t		*e;
	size_t		 i;

	if (json_is_object(v)) {
		json_object_foreach(v, k, e) {
			fprintf(f, "%*s", indent, "");
			yaml_out_key(f, k);
			if (yaml_out_inline(e)) {
				fputc(' ', f);
				yaml_out_inline_value(f, e);
				fputc('\n', f);
			} else {
				fputc('\n', f);
				yaml_out_value(f, e, indent + 2);
			}
		}
		return;
	}
	json_array_foreach(v, i, e) {
		fprintf(f, "%*s-", indent, "");
		if (yaml_out_inline(e)) {
			fputc(' ', f);
			yaml_out_inline_value(f, e);
			fputc('\n', f);
		} else {
			fputc('\n', f);
			yaml_out_value(f, e, indent + 2);
		}
	}
}

void
cli_yaml_write(FILE *f, json_t *v)
{
	if (yaml_out_inline(v)) {
		yaml_out_inline_value(f, v);
		fputc('\n', f);
	} else
		yaml_out_value(f, v, 0);
}
