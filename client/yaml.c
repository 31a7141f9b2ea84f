/*
 * yaml.c: YAML job files to JSON values, for gpuq submit.
 *
 * libyaml's event parser drives a small stack of JSON containers:
 * mappings become objects, sequences arrays, and plain scalars take the
 * YAML 1.1 types (null, bool, int, float) the way PyYAML resolves them;
 * quoted and block scalars stay strings. Anchors, aliases and merge
 * keys ("<<") work within a document. Duplicate keys, keys that are not
 * scalars, unknown tags and values JSON cannot hold (.inf, .nan, huge
 * integers) are errors naming the line and column. Knows nothing of
 * what a job is.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "client/cli.h"
#include "common/xmalloc.h"

#define YAML_MAX_DEPTH		64	/* nesting of mappings/sequences */
#define YAML_MAX_WEIGHT		200000	/* values in one document, aliases
					 * expanded ("billion laughs") */
#define YAML_TAG_PREFIX		"tag:yaml.org,2002:"

/* A mapping or sequence being built. */
struct yaml_frame {
	json_t		*value;		/* object or array */
	char		*anchor;	/* registered when it ends */
	char		*key;		/* mapping: key awaiting its value */
	yaml_mark_t	 key_mark;
	int		 merge;		/* the awaited key is "<<" */
	json_t		*merges;	/* mappings to merge at the end */
	size_t		 weight;	/* values inside, aliases expanded */
};

struct yaml_anchor {
	char		*name;
	json_t		*value;
	size_t		 weight;
};

struct yaml_ctx {
	const char		*name;		/* file name for messages */
	const char		*buf;
	size_t			 len;
	struct yaml_frame	 stack[YAML_MAX_DEPTH];
	int			 depth;
	struct yaml_anchor	*anchors;
	size_t			 nanchors;
	json_t			*root;		/* finished document value */
	size_t			 root_weight;
	char			*cause;
};

static int
yaml_fail(struct yaml_ctx *c, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
yaml_fail(struct yaml_ctx *c, yaml_mark_t m, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(c->cause);
	c->cause = xprintf("%s:%zu:%zu: %s", c->name, m.line + 1,
	    m.column + 1, msg ? msg : "error");
	free(msg);
	return -EINVAL;
}

/* Line and column of byte OFF, for reader errors that carry no mark. */
static yaml_mark_t
yaml_mark_at(struct yaml_ctx *c, size_t off)
{
	yaml_mark_t	 m = { 0, 0, 0 };
	size_t		 i;

	for (i = 0; i < off && i < c->len; i++) {
		if (c->buf[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)c->buf[i] & 0xc0) != 0x80)
			m.column++;
	}
	m.index = off;
	return m;
}

static void
yaml_anchors_clear(struct yaml_ctx *c)
{
	size_t	i;

	for (i = 0; i < c->nanchors; i++) {
		free(c->anchors[i].name);
		json_decref(c->anchors[i].value);
	}
	free(c->anchors);
	c->anchors = NULL;
	c->nanchors = 0;
}

static void
yaml_anchor_add(struct yaml_ctx *c, const char *name, json_t *v,
    size_t weight)
{
	size_t	i;

	for (i = 0; i < c->nanchors; i++) {
		if (strcmp(c->anchors[i].name, name) == 0) {
			/* YAML lets a later anchor of the same name win. */
			json_decref(c->anchors[i].value);
			c->anchors[i].value = json_incref(v);
			c->anchors[i].weight = weight;
			return;
		}
	}
	c->anchors = xreallocarray(c->anchors, c->nanchors + 1,
	    sizeof *c->anchors);
	c->anchors[c->nanchors].name = xstrdup(name);
	c->anchors[c->nanchors].value = json_incref(v);
	c->anchors[c->nanchors].weight = weight;
	c->nanchors++;
}

static struct yaml_anchor *
yaml_anchor_find(struct yaml_ctx *c, const char *name)
{
	size_t	i;

	for (i = 0; i < c->nanchors; i++)
		if (strcmp(c->anchors[i].name, name) == 0)
			return &c->anchors[i];
	return NULL;
}

static void
yaml_frame_done(struct yaml_frame *f)
{
	json_decref(f->value);
	json_decref(f->merges);
	free(f->anchor);
	free(f->key);
	memset(f, 0, sizeof *f);
}

static const char *
yaml_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a sequence";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a float";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/*
 * A finished value V (taken) of WEIGHT values, starting at M, goes into
 * the open container or becomes the document root.
 */
static int
yaml_put(struct yaml_ctx *c, json_t *v, size_t weight, yaml_mark_t m)
{
	struct yaml_frame	*f;
	size_t			 i;
	json_t			*e;
	int			 rc;

	if (c->depth == 0) {
		json_decref(c->root);
		c->root = v;
		c->root_weight = weight;
		return 0;
	}
	f = &c->stack[c->depth - 1];
	f->weight += weight;
	if (f->weight > YAML_MAX_WEIGHT) {
		json_decref(v);
		return yaml_fail(c, m, "document too large: over %d values "
		    "once aliases are expanded", YAML_MAX_WEIGHT);
	}
	if (json_is_array(f->value)) {
		if (json_array_append_new(f->value, v) != 0)
			return yaml_fail(c, m, "out of memory");
		return 0;
	}
	if (f->key == NULL) {
		/* Scalar keys are handled by yaml_scalar(); this is not one. */
		json_decref(v);
		return yaml_fail(c, m, "a mapping key must be a scalar, "
		    "not a mapping or a sequence");
	}
	if (f->merge) {
		if (json_is_object(v))
			json_array_append(f->merges, v);
		else if (json_is_array(v)) {
			json_array_foreach(v, i, e) {
				if (!json_is_object(e)) {
					rc = yaml_fail(c, m, "'<<' merges "
					    "mappings, not %s",
					    yaml_type_name(e));
					json_decref(v);
					return rc;
				}
				json_array_append(f->merges, e);
			}
		} else {
			rc = yaml_fail(c, m, "'<<' merges mappings, not %s",
			    yaml_type_name(v));
			json_decref(v);
			return rc;
		}
		json_decref(v);
	} else {
		if (json_object_get(f->value, f->key) != NULL) {
			json_decref(v);
			return yaml_fail(c, f->key_mark, "duplicate key '%s'",
			    f->key);
		}
		if (json_object_set_new(f->value, f->key, v) != 0)
			return yaml_fail(c, m, "out of memory");
	}
	free(f->key);
	f->key = NULL;
	f->merge = 0;
	return 0;
}

/* Parse digits of BASE with optional '_' separators into *ret. */
static int
yaml_digits(const char *s, size_t len, int base, int neg, json_int_t *ret)
{
	unsigned long long	 n = 0, lim;
	size_t			 i;
	int			 d, seen = 0;

	lim = neg ? (unsigned long long)INT64_MAX + 1 : INT64_MAX;
	for (i = 0; i < len; i++) {
		if (s[i] == '_')
			continue;
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		if (n > (lim - (unsigned long long)d) / (unsigned)base)
			return -ERANGE;
		n = n * (unsigned)base + (unsigned)d;
		seen = 1;
	}
	if (!seen)
		return -EINVAL;
	if (neg)
		*ret = n == (unsigned long long)INT64_MAX + 1 ? INT64_MIN :
		    -(json_int_t)n;
	else
		*ret = (json_int_t)n;
	return 0;
}

/*
 * YAML 1.1 int: [-+]? (0b[01_]+ | 0x[0-9a-fA-F_]+ | 0o[0-7_]+ |
 * 0[0-7_]+ | 0 | [1-9][0-9_]*). 0 and *ret, -EINVAL if not an int,
 * -ERANGE if it does not fit 64 bits.
 */
static int
yaml_int(const char *s, size_t len, json_int_t *ret)
{
	int	neg = 0;

	if (len > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		s++;
		len--;
	}
	if (len == 0 || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	if (len > 2 && s[0] == '0' && s[1] == 'b')
		return yaml_digits(s + 2, len - 2, 2, neg, ret);
	if (len > 2 && s[0] == '0' && s[1] == 'x')
		return yaml_digits(s + 2, len - 2, 16, neg, ret);
	if (len > 2 && s[0] == '0' && s[1] == 'o')
		return yaml_digits(s + 2, len - 2, 8, neg, ret);
	if (len > 1 && s[0] == '0')
		return yaml_digits(s + 1, len - 1, 8, neg, ret);
	return yaml_digits(s, len, 10, neg, ret);
}

/*
 * Float: [-+]? ([0-9][0-9_]* . [0-9_]* | . [0-9_]+ | [0-9][0-9_]*)
 * ([eE][-+]?[0-9]+)? with a dot or an exponent, and .inf/.nan (which
 * JSON cannot hold: -ERANGE). 0 and *ret, -EINVAL if not a float.
 */
static int
yaml_float(const char *s, size_t len, double *ret)
{
	char		 tmp[128], *end;
	size_t		 i = 0, n = 0;
	int		 digits = 0, dot = 0, exp = 0;
	const char	*p = s;

	if (len > 0 && (p[0] == '-' || p[0] == '+'))
		i = 1;
	if (len - i == 4 && (strncmp(p + i, ".inf", 4) == 0 ||
	    strncmp(p + i, ".Inf", 4) == 0 || strncmp(p + i, ".INF", 4) == 0))
		return -ERANGE;
	if (len == 4 && (strncmp(p, ".nan", 4) == 0 ||
	    strncmp(p, ".NaN", 4) == 0 || strncmp(p, ".NAN", 4) == 0))
		return -ERANGE;
	if (len >= sizeof tmp)
		return -EINVAL;
	if (i == 1)
		tmp[n++] = p[0];
	for (; i < len; i++) {
		if (p[i] >= '0' && p[i] <= '9') {
			digits = 1;
			tmp[n++] = p[i];
		} else if (p[i] == '_' && digits && !exp)
			continue;
		else if (p[i] == '.' && !dot && !exp) {
			dot = 1;
			tmp[n++] = '.';
		} else if ((p[i] == 'e' || p[i] == 'E') && digits && !exp) {
			exp = 1;
			tmp[n++] = 'e';
			if (i + 1 < len && (p[i + 1] == '-' || p[i + 1] == '+'))
				tmp[n++] = p[++i];
			if (i + 1 >= len)
				return -EINVAL;
			for (i++; i < len; i++) {
				if (p[i] < '0' || p[i] > '9')
					return -EINVAL;
				tmp[n++] = p[i];
			}
			break;
		} else
			return -EINVAL;
	}
	if (!digits || (!dot && !exp))
		return -EINVAL;
	tmp[n] = '\0';
	errno = 0;
	*ret = strtod(tmp, &end);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE && (*ret > 1.0 || *ret < -1.0))
		return -ERANGE;
	return 0;
}

static int
yaml_is(const char *s, size_t len, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strlen(*words) == len && memcmp(s, *words, len) == 0)
			return 1;
	return 0;
}

static const char *const yaml_nulls[] = { "", "~", "null", "Null", "NULL",
	NULL };
static const char *const yaml_trues[] = { "true", "True", "TRUE", "yes",
	"Yes", "YES", "on", "On", "ON", NULL };
static const char *const yaml_falses[] = { "false", "False", "FALSE", "no",
	"No", "NO", "off", "Off", "OFF", NULL };

json_t *
cli_yaml_plain(const char *s, size_t len)
{
	json_int_t	 i;
	double		 d;
	int		 rc;

	if (yaml_is(s, len, yaml_nulls))
		return json_null();
	if (yaml_is(s, len, yaml_trues))
		return json_true();
	if (yaml_is(s, len, yaml_falses))
		return json_false();
	if ((rc = yaml_int(s, len, &i)) == 0)
		return json_integer(i);
	if (rc == -ERANGE)
		return NULL;
	if ((rc = yaml_float(s, len, &d)) == 0)
		return json_real(d);
	if (rc == -ERANGE)
		return NULL;
	return json_stringn(s, len);
}

/* Value of a scalar with an explicit tag; NULL + *cause on mismatch. */
static json_t *
yaml_tagged(struct yaml_ctx *c, const char *tag, const char *s, size_t len,
    yaml_mark_t m)
{
	const char	*t;
	json_int_t	 i;
	double		 d;

	if (strncmp(tag, YAML_TAG_PREFIX, strlen(YAML_TAG_PREFIX)) != 0) {
		yaml_fail(c, m, "unsupported tag '%s'", tag);
		return NULL;
	}
	t = tag + strlen(YAML_TAG_PREFIX);
	if (strcmp(t, "str") == 0)
		return json_stringn(s, len);
	if (strcmp(t, "null") == 0 && yaml_is(s, len, yaml_nulls))
		return json_null();
	if (strcmp(t, "bool") == 0 && yaml_is(s, len, yaml_trues))
		return json_true();
	if (strcmp(t, "bool") == 0 && yaml_is(s, len, yaml_falses))
		return json_false();
	if (strcmp(t, "int") == 0 && yaml_int(s, len, &i) == 0)
		return json_integer(i);
	if (strcmp(t, "float") == 0 && yaml_float(s, len, &d) == 0)
		return json_real(d);
	if (strcmp(t, "float") == 0 && yaml_int(s, len, &i) == 0)
		return json_real((double)i);
	if (strcmp(t, "null") == 0 || strcmp(t, "bool") == 0 ||
	    strcmp(t, "int") == 0 || strcmp(t, "float") == 0)
		yaml_fail(c, m, "'%.*s' is not a valid !!%s", (int)len, s, t);
	else
		yaml_fail(c, m, "unsupported tag '!!%s'", t);
	return NULL;
}

static int
yaml_scalar(struct yaml_ctx *c, yaml_event_t *ev)
{
	struct yaml_frame	*f;
	const char		*s = (const char *)ev->data.scalar.value;
	const char		*tag = (const char *)ev->data.scalar.tag;
	const char		*anchor = (const char *)ev->data.scalar.anchor;
	size_t			 len = ev->data.scalar.length;
	json_t			*v;

	f = c->depth > 0 ? &c->stack[c->depth - 1] : NULL;
	if (f != NULL && json_is_object(f->value) && f->key == NULL) {
		if (memchr(s, '\0', len) != NULL)
			return yaml_fail(c, ev->start_mark,
			    "a key must not contain a NUL character");
		f->key = xstrndup(s, len);
		f->key_mark = ev->start_mark;
		f->merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    strcmp(f->key, "<<") == 0;
		if (anchor != NULL && (v = json_string(f->key)) != NULL) {
			yaml_anchor_add(c, anchor, v, 1);
			json_decref(v);
		}
		return 0;
	}
	if (tag != NULL && strcmp(tag, "!") != 0) {
		if ((v = yaml_tagged(c, tag, s, len, ev->start_mark)) == NULL)
			return -EINVAL;
	} else if (tag == NULL &&
	    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		v = cli_yaml_plain(s, len);
		if (v == NULL)
			return yaml_fail(c, ev->start_mark, "'%.*s' cannot be "
			    "represented in JSON; quote it to make it a string",
			    (int)len, s);
	} else
		v = json_stringn(s, len);
	if (v == NULL)
		return yaml_fail(c, ev->start_mark, "string is not valid UTF-8");
	if (anchor != NULL)
		yaml_anchor_add(c, anchor, v, 1);
	return yaml_put(c, v, 1, ev->start_mark);
}

static int
yaml_alias(struct yaml_ctx *c, yaml_event_t *ev)
{
	struct yaml_frame	*f;
	struct yaml_anchor	*a;
	const char		*name = (const char *)ev->data.alias.anchor;

	if ((a = yaml_anchor_find(c, name)) == NULL)
		return yaml_fail(c, ev->start_mark, "unknown anchor '*%s' "
		    "(an anchor must be defined before it is used, in the "
		    "same document)", name);
	f = c->depth > 0 ? &c->stack[c->depth - 1] : NULL;
	if (f != NULL && json_is_object(f->value) && f->key == NULL) {
		if (!json_is_string(a->value))
			return yaml_fail(c, ev->start_mark, "a mapping key "
			    "must be a scalar; '*%s' is %s", name,
			    yaml_type_name(a->value));
		f->key = xstrdup(json_string_value(a->value));
		f->key_mark = ev->start_mark;
		f->merge = 0;
		return 0;
	}
	return yaml_put(c, json_incref(a->value), a->weight, ev->start_mark);
}

static int
yaml_start(struct yaml_ctx *c, yaml_event_t *ev, int mapping)
{
	struct yaml_frame	*f;
	const char		*tag, *anchor;

	if (mapping) {
		tag = (const char *)ev->data.mapping_start.tag;
		anchor = (const char *)ev->data.mapping_start.anchor;
	} else {
		tag = (const char *)ev->data.sequence_start.tag;
		anchor = (const char *)ev->data.sequence_start.anchor;
	}
	if (tag != NULL && strcmp(tag, "!") != 0 &&
	    strcmp(tag, mapping ? YAML_TAG_PREFIX "map" :
	    YAML_TAG_PREFIX "seq") != 0)
		return yaml_fail(c, ev->start_mark, "unsupported tag '%s'",
		    tag);
	if (c->depth > 0) {
		f = &c->stack[c->depth - 1];
		if (json_is_object(f->value) && f->key == NULL)
			return yaml_fail(c, ev->start_mark, "a mapping key "
			    "must be a scalar, not a %s",
			    mapping ? "mapping" : "sequence");
	}
	if (c->depth == YAML_MAX_DEPTH)
		return yaml_fail(c, ev->start_mark, "nested more than %d deep",
		    YAML_MAX_DEPTH);
	f = &c->stack[c->depth++];
	memset(f, 0, sizeof *f);
	f->value = mapping ? json_object() : json_array();
	f->merges = json_array();
	f->anchor = anchor ? xstrdup(anchor) : NULL;
	f->weight = 1;
	if (f->value == NULL || f->merges == NULL)
		return yaml_fail(c, ev->start_mark, "out of memory");
	return 0;
}

static int
yaml_end(struct yaml_ctx *c, yaml_event_t *ev)
{
	struct yaml_frame	*f = &c->stack[c->depth - 1];
	json_t			*v, *m;
	size_t			 i, weight;

	if (f->key != NULL)	/* libyaml gives a null value; be safe */
		return yaml_fail(c, f->key_mark, "key '%s' has no value",
		    f->key);
	/* Explicit keys win over merged ones; earlier merges win. */
	json_array_foreach(f->merges, i, m) {
		if (json_object_update_missing(f->value, m) != 0)
			return yaml_fail(c, ev->start_mark, "out of memory");
	}
	v = f->value;
	f->value = NULL;
	weight = f->weight;
	if (f->anchor != NULL)
		yaml_anchor_add(c, f->anchor, v, weight);
	yaml_frame_done(f);
	c->depth--;
	return yaml_put(c, v, weight, ev->start_mark);
}

static int
yaml_parser_fail(struct yaml_ctx *c, yaml_parser_t *p)
{
	yaml_mark_t	 m = p->problem_mark;
	const char	*problem = p->problem ? p->problem : "syntax error";

	if (p->error == YAML_READER_ERROR) {
		m = yaml_mark_at(c, p->problem_offset);
		if (p->problem_value != -1)
			return yaml_fail(c, m, "%s (byte 0x%02x)", problem,
			    (unsigned)p->problem_value & 0xff);
		return yaml_fail(c, m, "%s", problem);
	}
	if (p->error == YAML_MEMORY_ERROR)
		return yaml_fail(c, m, "out of memory");
	if (p->context != NULL)
		return yaml_fail(c, m, "%s (%s that starts at line %zu, "
		    "column %zu)", problem, p->context, p->context_mark.line + 1,
		    p->context_mark.column + 1);
	return yaml_fail(c, m, "%s", problem);
}

int
cli_yaml_load(const char *name, const char *buf, size_t len, json_t **ret,
    int **lines, char **cause)
{
	struct yaml_ctx	 c;
	yaml_parser_t	 p;
	yaml_event_t	 ev;
	json_t		*docs;
	int		*dl = NULL, rc = 0, done = 0, line = 0;

	memset(&c, 0, sizeof c);
	c.name = name;
	c.buf = buf;
	c.len = len;
	if ((docs = json_array()) == NULL)
		return -ENOMEM;
	if (!yaml_parser_initialize(&p)) {
		json_decref(docs);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_parser_fail(&c, &p);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			line = (int)ev.start_mark.line + 1;
			break;
		case YAML_DOCUMENT_END_EVENT:
			dl = xreallocarray(dl, json_array_size(docs) + 1,
			    sizeof *dl);
			dl[json_array_size(docs)] = line;
			json_array_append_new(docs,
			    c.root ? c.root : json_null());
			c.root = NULL;
			yaml_anchors_clear(&c);	/* anchors are per document */
			break;
		case YAML_SCALAR_EVENT:
			rc = yaml_scalar(&c, &ev);
			break;
		case YAML_ALIAS_EVENT:
			rc = yaml_alias(&c, &ev);
			break;
		case YAML_MAPPING_START_EVENT:
			rc = yaml_start(&c, &ev, 1);
			break;
		case YAML_SEQUENCE_START_EVENT:
			rc = yaml_start(&c, &ev, 0);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			rc = yaml_end(&c, &ev);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	while (c.depth > 0)
		yaml_frame_done(&c.stack[--c.depth]);
	yaml_anchors_clear(&c);
	json_decref(c.root);
	if (rc != 0) {
		json_decref(docs);
		free(dl);
		if (cause != NULL)
			*cause = c.cause;
		else
			free(c.cause);
		return rc;
	}
	*ret = docs;
	*lines = dl;
	return 0;
}
