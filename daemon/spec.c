/*
 * spec.c: validation and normalization of a job spec, as gpuq-job(5)
 * describes it.
 *
 * The spec arrives as JSON (the client has already turned YAML into
 * JSON). Every field has one checker in spec_fields[], in the order the
 * man page lists them; the first error in that order wins, after
 * unknown keys, so the same bad file always gives the same message.
 * Each checker writes its normalized value into a NEW object, so the
 * daemon never sees a field without its default.
 *
 * Must not know: the store, the cloud, the configuration. Which regions
 * and providers are configured is the scheduler's business; here a
 * region has to look like one, and, once the daemon has loaded the
 * region catalog (spec_catalog_load: the regions of the bundled price
 * table), be one of those. What the daemon's settings add (a Spot job
 * with no checkpoint place) is spec_site_check's, with the settings
 * passed in.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/duration.h"
#include "common/gpu.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/strdist.h"
#include "common/webhook.h"
#include "common/when.h"
#include "common/xmalloc.h"
#include "daemon/spec.h"
#include "providers/gcp/gcp-defaults.h"
#include "providers/provider.h"

#define SPEC_NAME_MAX		63
#define SPEC_IMAGE_MAX		1024
#define SPEC_ENV_MAX		100
#define SPEC_LABELS_MAX		32
#define SPEC_LABEL_LEN_MAX	63
#define SPEC_REGION_MAX		63
#define SPEC_SET_MAX		100	/* regions or providers listed */
#define SPEC_MACHINE_MAX	63
#define SPEC_URI_MAX		1024
#define SPEC_HOURS_MAX		8760.0
#define SPEC_RUNTIME_DEFAULT	(7 * 86400)
#define SPEC_RUNTIME_MIN	60
#define SPEC_INTERVAL_DEFAULT	(30 * 60)
#define SPEC_INTERRUPTIONS_DEFAULT 20
#define SPEC_PRIORITY_MIN	(-1000)
#define SPEC_PRIORITY_MAX	1000
#define SPEC_ARRAY_MAX		10000	/* tasks in one array */
#define SPEC_DEPS_MAX		100	/* jobs in after or after_any */
#define SPEC_NODES_MAX		64	/* machines of one gang */
#define SPEC_QUOTE_MAX		48	/* bytes of user text echoed back */

/*
 * The region catalog: the known region names, sorted, or none (n == 0:
 * any name that looks like a region passes). Set once at start.
 */
static struct {
	char	**v;
	size_t	  n;
} spec_catalog;

struct spec_ctx;
static int	spec_check_image_ref(struct spec_ctx *, const char *,
		    const char *);
static int	spec_check_secret_env(struct spec_ctx *, const char *,
		    json_t *);
static int	spec_pp_given(struct spec_ctx *, const char *, json_t *);
static int	spec_pp_providers(struct spec_ctx *, const char *);
static const char *spec_bucket_why(const char *, size_t);

/* What the checkers share while one spec is validated. */
struct spec_ctx {
	json_t			*out;	/* the normalized spec being built */
	struct spec_error	*err;
	const struct gpu_type	*gpu;	/* set by the accelerator checker */
	int			 count;
	json_t			*in;	/* the spec as given; borrowed */
};

typedef int (*spec_check_fn)(struct spec_ctx *, const char *, json_t *);

struct spec_field {
	const char	*name;
	spec_check_fn	 check;		/* value is NULL when absent */
};

/* Fail with FIELD and a formatted message; always returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
spec_fail(struct spec_ctx *c, const char *field, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatalx("spec: out of memory");
	c->err->field = xstrdup(field);
	c->err->message = msg;
	return -EINVAL;
}

/* Add V (taken) under KEY in OBJ; jansson failing here is OOM. */
static void
spec_put(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(obj, key, v) == -1)
		fatalx("spec: out of memory building the normalized spec");
}

/*
 * User text made safe to echo in a message or a field path: at most
 * SPEC_QUOTE_MAX bytes (cut on a UTF-8 boundary, "..." appended),
 * control characters shown as '?'. New string.
 */
static char *
spec_clean(const char *s)
{
	size_t	 len = strlen(s), n = len, i;
	char	*t;

	if (n > SPEC_QUOTE_MAX) {
		n = SPEC_QUOTE_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	t = xmalloc(n + 4);
	for (i = 0; i < n; i++)
		t[i] = iscntrl((unsigned char)s[i]) ? '?' : s[i];
	strcpy(t + n, n < len ? "..." : "");
	return t;
}

/* "a string", "a list", ...: what a JSON value is, for messages. */
static const char *
spec_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:	return "an object";
	case JSON_ARRAY:	return "a list";
	case JSON_STRING:	return "a string";
	case JSON_INTEGER:
	case JSON_REAL:		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:	return "true/false";
	case JSON_NULL:		return "null (empty)";
	}
	return "something else";
}

/* Fail because V is not of type WANT ("a string", "an object", ...). */
static int
spec_fail_type(struct spec_ctx *c, const char *field, const json_t *v,
    const char *want)
{
	return spec_fail(c, field, "must be %s, not %s", want,
	    spec_type_name(v));
}

/*
 * V must be a string: 0 and *ret_s (borrowed from V), else -EINVAL.
 * Numbers and booleans get told to quote themselves, since YAML made
 * them what they are.
 */
static int
spec_string(struct spec_ctx *c, const char *field, json_t *v,
    const char **ret_s)
{
	if (json_is_number(v) || json_is_boolean(v))
		return spec_fail(c, field, "must be a string; quote it");
	if (!json_is_string(v))
		return spec_fail_type(c, field, v, "a string");
	*ret_s = json_string_value(v);
	return 0;
}

/* Does the string S, as a whole, read as a number? ("4", "-2.5") */
static int
spec_looks_numeric(const char *s)
{
	char	*end;

	if (*s == '\0' || s[strspn(s, "+-.0123456789eE")] != '\0')
		return 0;
	(void)strtod(s, &end);
	return *end == '\0';
}

/*
 * V must be a whole number in [LO, HI]: 0 and *ret_n, else -EINVAL.
 * Floats are refused even when whole (2.0): a count written as a float
 * is more likely a mistake than a style.
 */
static int
spec_integer(struct spec_ctx *c, const char *field, json_t *v,
    long long lo, long long hi, long long *ret_n)
{
	long long	n;

	if (json_is_real(v))
		return spec_fail(c, field, "must be a whole number");
	if (!json_is_integer(v)) {
		if (json_is_string(v) &&
		    spec_looks_numeric(json_string_value(v)))
			return spec_fail(c, field,
			    "must be an integer, not a string; "
			    "remove the quotes");
		return spec_fail_type(c, field, v, "an integer");
	}
	n = json_integer_value(v);
	if (n < lo && lo == 0)
		return spec_fail(c, field, "must be 0 or more");
	if (n > hi && hi == INT_MAX)
		return spec_fail(c, field, "must be at most %d", INT_MAX);
	if (n < lo || n > hi)
		return spec_fail(c, field, "must be between %lld and %lld",
		    lo, hi);
	*ret_n = n;
	return 0;
}

/* V must be a number > 0 and <= MAX: 0 and *ret_d, else -EINVAL. */
static int
spec_positive(struct spec_ctx *c, const char *field, json_t *v, double max,
    double *ret_d)
{
	double	d;

	if (!json_is_number(v)) {
		if (json_is_string(v) &&
		    spec_looks_numeric(json_string_value(v)))
			return spec_fail(c, field,
			    "must be a number, not a string; "
			    "remove the quotes");
		return spec_fail_type(c, field, v, "a number");
	}
	d = json_number_value(v);
	if (!isfinite(d) || d <= 0)
		return spec_fail(c, field, "must be greater than 0");
	if (d > max)
		return spec_fail(c, field, "must be at most %g", max);
	*ret_d = d;
	return 0;
}

/*
 * V must be a duration: a string such as "90m" or "2h30m", or whole
 * seconds as an integer; at least MIN seconds. 0 and *ret_sec.
 */
static int
spec_duration(struct spec_ctx *c, const char *field, json_t *v,
    int64_t min, int64_t *ret_sec)
{
	int64_t	 sec;
	char	*q;
	int	 r;

	if (json_is_real(v))
		return spec_fail(c, field, "must be a whole number of "
		    "seconds or a duration such as \"90m\" or \"2h30m\"");
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) > 100LL * 365 * 86400)
			return spec_fail(c, field, "%lld seconds is out of "
			    "range; use e.g. 90m, 24h or 7d",
			    (long long)json_integer_value(v));
		sec = json_integer_value(v);
	} else if (json_is_string(v)) {
		if (duration_parse(json_string_value(v), &sec) != 0) {
			q = spec_clean(json_string_value(v));
			r = spec_fail(c, field, "\"%s\" is not a duration; "
			    "write e.g. 90m, 24h, 2h30m, 7d or a number of "
			    "seconds", q);
			free(q);
			return r;
		}
	} else
		return spec_fail_type(c, field, v,
		    "a duration such as \"90m\" or a number of seconds");
	if (sec < min)
		return spec_fail(c, field, "must be at least %lld second%s",
		    (long long)min, min == 1 ? "" : "s");
	*ret_sec = sec;
	return 0;
}

/* Does every character of S pass KLASS (if set) or appear in SET? */
static int
spec_chars_ok(const char *s, int (*klass)(int), const char *set)
{
	for (; *s != '\0'; s++) {
		if (klass != NULL && klass((unsigned char)*s))
			continue;
		if (strchr(set, *s) == NULL)
			return 0;
	}
	return 1;
}

/*
 * Character classes in ASCII whatever the locale: every name checked
 * here ends up in a Google API or an environment, which want ASCII.
 */
static int
spec_is_lower(int ch)
{
	return ch >= 'a' && ch <= 'z';
}

static int
spec_is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int
spec_is_lower_digit(int ch)
{
	return spec_is_lower(ch) || spec_is_digit(ch);
}

static int
spec_is_ascii_alnum(int ch)
{
	return spec_is_lower_digit(ch) || (ch >= 'A' && ch <= 'Z');
}

/*
 * Reject the first key of OBJ (at PATH, "" for the top) that FIELDS does
 * not know. 0 if every key is known.
 */
static int
spec_unknown_keys(struct spec_ctx *c, const char *path, json_t *obj,
    const struct spec_field *fields, size_t nfields)
{
	const char	*key;
	json_t		*v;
	char		*known = NULL, *t, *k, *field;
	size_t		 i;
	int		 r = 0;

	json_object_foreach(obj, key, v) {
		for (i = 0; i < nfields; i++)
			if (strcmp(key, fields[i].name) == 0)
				break;
		if (i < nfields)
			continue;
		known = xstrdup("");	/* only now: a known key costs nothing */
		for (i = 0; i < nfields; i++) {
			t = xprintf("%s%s%s", known, i ? ", " : "",
			    fields[i].name);
			free(known);
			known = t;
		}
		k = *key == '\0' ? xstrdup("\"\"") : spec_clean(key);
		field = *path == '\0' ? xstrdup(k) : xprintf("%s.%s", path, k);
		r = spec_fail(c, field, "unknown field; known fields are: %s",
		    known);
		free(field);
		free(k);
		break;
	}
	free(known);
	return r;
}

/* Run FIELDS' checkers over OBJ in table order; first error wins. */
static int
spec_check_fields(struct spec_ctx *c, const char *path, json_t *obj,
    const struct spec_field *fields, size_t nfields)
{
	char		 buf[256], *heap;
	const char	*field;
	size_t		 i, plen = strlen(path), nlen;
	int		 r;

	if ((r = spec_unknown_keys(c, path, obj, fields, nfields)) != 0)
		return r;
	/*
	 * Each field's path, PATH.NAME, on the stack: a heap string per
	 * field of every submit was a tenth of validating one.
	 */
	for (i = 0; i < nfields; i++) {
		heap = NULL;
		nlen = strlen(fields[i].name);
		if (plen == 0)
			field = fields[i].name;
		else if (plen + 1 + nlen < sizeof buf) {
			memcpy(buf, path, plen);
			buf[plen] = '.';
			memcpy(buf + plen + 1, fields[i].name, nlen + 1);
			field = buf;
		} else
			field = heap = xprintf("%s.%s", path, fields[i].name);
		r = fields[i].check(c, field, json_object_get(obj,
		    fields[i].name));
		free(heap);
		if (r != 0)
			return r;
	}
	return 0;
}

/* name: 1-63 of [A-Za-z0-9._-], default "job". */
static int
spec_check_name(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s = "job";
	int		 r;

	if (v != NULL) {
		if ((r = spec_string(c, field, v, &s)) != 0)
			return r;
		if (*s == '\0' || strlen(s) > SPEC_NAME_MAX)
			return spec_fail(c, field,
			    "must be 1 to %d characters long", SPEC_NAME_MAX);
		if (!spec_chars_ok(s, spec_is_ascii_alnum, "._-"))
			return spec_fail(c, field, "may hold only letters, "
			    "digits, '.', '_' and '-'");
	}
	spec_put(c->out, "name", json_string(s));
	return 0;
}

/* image: required; a container image URI, no whitespace. */
static int
spec_check_image(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *p;
	int		 r;

	if ((r = spec_pp_given(c, field, v)) != 0)
		return r < 0 ? r : 0;
	if (v == NULL)
		return spec_fail(c, field, "required: the container image to "
		    "run, e.g. us-docker.pkg.dev/my-project/train/resnet:1.0");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (*s == '\0')
		return spec_fail(c, field, "must not be empty");
	if (strlen(s) > SPEC_IMAGE_MAX)
		return spec_fail(c, field, "must be at most %d characters "
		    "long", SPEC_IMAGE_MAX);
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return spec_fail(c, field, "must not contain "
			    "whitespace; it is one image URI such as "
			    "gcr.io/my-project/train:latest");
	if ((r = spec_check_image_ref(c, field, s)) != 0)
		return r;
	spec_put(c->out, "image", json_string(s));
	return 0;
}

/* A list of strings for command or args; EMPTY_OK for args. */
static int
spec_check_strings(struct spec_ctx *c, const char *field, json_t *v,
    int empty_ok, const char *key)
{
	json_t	*out, *el;
	size_t	 i;
	char	*f;
	int	 r;

	if (v == NULL)
		return 0;
	if (json_is_string(v))
		return spec_fail(c, field, "must be a list of strings, not a "
		    "string; write it as a list, e.g. [\"python\", "
		    "\"train.py\", \"--epochs\", \"10\"]");
	if (!json_is_array(v))
		return spec_fail_type(c, field, v, "a list of strings");
	if (!empty_ok && json_array_size(v) == 0)
		return spec_fail(c, field, "must not be empty; leave it out "
		    "to run the image's ENTRYPOINT");
	out = json_array();
	if (out == NULL)
		fatalx("spec: out of memory");
	json_array_foreach(v, i, el) {
		if (!json_is_string(el)) {
			/* The element's path only for its error. */
			f = xprintf("%s[%zu]", field, i);
			if (json_is_number(el) || json_is_boolean(el))
				r = spec_fail(c, f, "must be a string; quote "
				    "it");
			else
				r = spec_fail_type(c, f, el, "a string");
			free(f);
			json_decref(out);
			return r;
		}
		if (json_array_append(out, el) == -1)
			fatalx("spec: out of memory");
	}
	spec_put(c->out, key, out);
	return 0;
}

/* command: list of strings, overrides the image's ENTRYPOINT. */
static int
spec_check_command(struct spec_ctx *c, const char *field, json_t *v)
{
	int	r;

	if ((r = spec_pp_given(c, field, v)) != 0)
		return r < 0 ? r : 0;
	return spec_check_strings(c, field, v, 0, "command");
}

/* args: list of strings, given to the command (or ENTRYPOINT). */
static int
spec_check_args(struct spec_ctx *c, const char *field, json_t *v)
{
	int	r;

	if ((r = spec_pp_given(c, field, v)) != 0)
		return r < 0 ? r : 0;
	return spec_check_strings(c, field, v, 1, "args");
}

/* env: NAME -> string; GPUQ_* and AIP_* belong to gpuq and Vertex AI. */
static int
spec_check_env(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*key, *s = NULL;
	json_t		*out, *val;
	char		*k, *f;
	int		 r = 0;

	out = json_object();
	if (out == NULL)
		fatalx("spec: out of memory");
	if (v != NULL && !json_is_object(v)) {
		json_decref(out);
		return spec_fail_type(c, field, v,
		    "an object of NAME: value pairs");
	}
	if (v != NULL && json_object_size(v) > SPEC_ENV_MAX) {
		json_decref(out);
		return spec_fail(c, field, "has %zu variables; at most %d "
		    "are allowed", json_object_size(v), SPEC_ENV_MAX);
	}
	if (v != NULL) {
		json_object_foreach(v, key, val) {
			k = spec_clean(key);
			f = xprintf("%s.%s", field, k);
			if (*key == '\0')
				r = spec_fail(c, f, "variable names must not "
				    "be empty");
			else if (spec_is_digit(*key) || !spec_chars_ok(key,
			    spec_is_ascii_alnum, "_"))
				r = spec_fail(c, f, "\"%s\" is not a variable "
				    "name: use letters, digits and '_', not "
				    "starting with a digit", k);
			else if (strncmp(key, "GPUQ_", 5) == 0 ||
			    strncmp(key, "AIP_", 4) == 0)
				r = spec_fail(c, f, "names starting with GPUQ_ "
				    "or AIP_ are reserved: gpuq and Vertex AI "
				    "set them (see gpuq-job(5))");
			else
				r = spec_string(c, f, val, &s);
			free(f);
			free(k);
			if (r != 0) {
				json_decref(out);
				return r;
			}
			spec_put(out, key, json_string(s));
		}
	}
	spec_put(c->out, "env", out);
	return 0;
}

/* accelerator.type: either Google spelling, stored as Compute Engine's. */
static int
spec_check_acc_type(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s;
	char		*names, *q;
	int		 r;

	if (v == NULL)
		return spec_fail(c, field, "required: the GPU type, e.g. "
		    "nvidia-tesla-t4");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if ((c->gpu = gpu_lookup(s)) == NULL) {
		names = gpu_names_text();
		q = spec_clean(s);
		r = spec_fail(c, field, "unknown GPU type \"%s\"; known types "
		    "are: %s", q, names);
		free(q);
		free(names);
		return r;
	}
	return 0;
}

/* accelerator.count: one of the counts offered for the type. */
static int
spec_check_acc_count(struct spec_ctx *c, const char *field, json_t *v)
{
	long long	 n;
	char		*counts;
	int		 r;

	if (v == NULL)
		return spec_fail(c, field, "required: how many GPUs per "
		    "machine, e.g. 1");
	if ((r = spec_integer(c, field, v, LLONG_MIN, LLONG_MAX, &n)) != 0)
		return r;
	if (n < 1 || n > INT_MAX || gpu_default_host(c->gpu, (int)n) == NULL) {
		counts = gpu_counts_text(c->gpu);
		r = spec_fail(c, field, "%lld is not offered for %s; use %s",
		    n, c->gpu->name, counts);
		free(counts);
		return r;
	}
	c->count = (int)n;
	return 0;
}

static const struct spec_field spec_acc_fields[] = {
	{ "type",	spec_check_acc_type },
	{ "count",	spec_check_acc_count },
};

/* accelerator: {type, count}, both required. */
static int
spec_check_accelerator(struct spec_ctx *c, const char *field, json_t *v)
{
	json_t	*out;
	int	 r;

	if (v == NULL)
		return spec_fail(c, field, "required: the GPUs to run on, "
		    "e.g. {type: nvidia-tesla-t4, count: 1}");
	if (!json_is_object(v))
		return spec_fail_type(c, field, v,
		    "an object with type and count");
	r = spec_check_fields(c, field, v, spec_acc_fields,
	    sizeof spec_acc_fields / sizeof spec_acc_fields[0]);
	if (r != 0)
		return r;
	out = json_object();
	if (out == NULL)
		fatalx("spec: out of memory");
	spec_put(out, "type", json_string(c->gpu->name));
	spec_put(out, "count", json_integer(c->count));
	spec_put(c->out, "accelerator", out);
	return 0;
}

/*
 * GPUs per G2 machine: the L4 comes attached, and the machine decides
 * how many (https://cloud.google.com/compute/docs/gpus#l4-gpus).
 */
static const struct {
	const char	*machine_type;
	int		 gpus;
} spec_g2_shapes[] = {
	{ "g2-standard-4", 1 }, { "g2-standard-8", 1 },
	{ "g2-standard-12", 1 }, { "g2-standard-16", 1 },
	{ "g2-standard-32", 1 }, { "g2-standard-24", 2 },
	{ "g2-standard-48", 4 }, { "g2-standard-96", 8 },
};

/*
 * The machine families a GPU runs on, from its default hosts: GPUs
 * attached to N1 take any n1-* (or custom-*) machine; accelerator-
 * optimized GPUs take only their own series ("a2-highgpu-"). Writes
 * "a2-highgpu-* or a2-megagpu-*" into *ret_text (new) and returns
 * whether MT is in one of them.
 */
static int
spec_family_ok(const struct gpu_type *g, const char *mt, char **ret_text)
{
	char		*text = xstrdup(""), *t, *prefix;
	const char	*host, *dash;
	int		 i, ok = 0, n1 = 0;

	for (i = 0; i < GPU_MAX_HOSTS && g->hosts[i].count != 0; i++) {
		host = g->hosts[i].machine_type;
		if (strncmp(host, "n1-", 3) == 0) {
			n1 = 1;
			continue;
		}
		dash = strrchr(host, '-');
		prefix = xstrndup(host, (size_t)(dash - host) + 1);
		if (strstr(text, prefix) == NULL) {
			t = xprintf("%s%s%s*", text, *text ? " or " : "",
			    prefix);
			free(text);
			text = t;
		}
		if (strncmp(mt, prefix, strlen(prefix)) == 0)
			ok = 1;
		free(prefix);
	}
	if (n1) {
		t = xprintf("%s%sn1-*", text, *text ? " or " : "");
		free(text);
		text = t;
		if (strncmp(mt, "n1-", 3) == 0 ||
		    strncmp(mt, "custom-", 7) == 0)
			ok = 1;
	}
	*ret_text = text;
	return ok;
}

/* machine_type: default from the GPU table; else checked against it. */
static int
spec_check_machine_type(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *def = gpu_default_host(c->gpu, c->count);
	char		*q, *fam;
	size_t		 i;
	int		 r, n;

	if (v == NULL) {
		spec_put(c->out, "machine_type", json_string(def));
		return 0;
	}
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	q = spec_clean(s);
	if (strlen(s) > SPEC_MACHINE_MAX ||
	    !spec_chars_ok(s, spec_is_lower_digit, "-") ||
	    gpu_machine_vcpus(s) <= 0) {
		r = spec_fail(c, field, "\"%s\" is not a machine type; for %d "
		    "%s use e.g. %s, or leave machine_type out", q, c->count,
		    c->gpu->name, def);
		goto out;
	}
	if (!spec_family_ok(c->gpu, s, &fam)) {
		r = spec_fail(c, field, "%s runs on %s machine types, not "
		    "\"%s\"; leave machine_type out to get %s", c->gpu->name,
		    fam, q, def);
		free(fam);
		goto out;
	}
	free(fam);
	/*
	 * Past N1 and G2, accelerator-optimized shapes (A2, A3, A4) carry
	 * a fixed GPU count: exactly one shape fits, the default.
	 */
	if (strncmp(s, "n1-", 3) != 0 && strncmp(s, "custom-", 7) != 0 &&
	    strncmp(s, "g2-", 3) != 0 && strcmp(s, def) != 0) {
		r = spec_fail(c, field, "\"%s\" does not come with %d %s; "
		    "use %s", q, c->count, c->gpu->name, def);
		goto out;
	}
	if (strncmp(s, "g2-", 3) == 0) {
		n = 0;
		for (i = 0; i < sizeof spec_g2_shapes /
		    sizeof spec_g2_shapes[0]; i++)
			if (strcmp(s, spec_g2_shapes[i].machine_type) == 0)
				n = spec_g2_shapes[i].gpus;
		if (n != c->count) {
			r = spec_fail(c, field, "\"%s\" does not come with %d "
			    "%s; use %s", q, c->count, c->gpu->name, def);
			goto out;
		}
	}
	spec_put(c->out, "machine_type", json_string(s));
	r = 0;
out:
	free(q);
	return r;
}

/* Does S look like a region: [a-z]+-[a-z]+[0-9]+ ("us-central1")? */
static int
spec_region_ok(const char *s)
{
	const char	*p = s;

	if (strlen(s) > SPEC_REGION_MAX)
		return 0;
	if (!spec_is_lower(*p))
		return 0;
	while (spec_is_lower(*p))
		p++;
	if (*p++ != '-' || !spec_is_lower(*p))
		return 0;
	while (spec_is_lower(*p))
		p++;
	if (!spec_is_digit(*p))
		return 0;
	while (spec_is_digit(*p))
		p++;
	return *p == '\0';
}

static int
spec_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is S in the catalog (or is there no catalog)? */
static int
spec_catalog_has(const char *s)
{
	if (spec_catalog.n == 0)
		return 1;
	return bsearch(&s, spec_catalog.v, spec_catalog.n,
	    sizeof *spec_catalog.v, spec_str_cmp) != NULL;
}

/* A region name that is in the catalog. */
static int
spec_region_known(const char *s)
{
	return spec_region_ok(s) && spec_catalog_has(s);
}

/*
 * A list of unique strings each accepted by OK (regions, providers);
 * BAD makes the message for a rejected one (new string). WHAT names the
 * items ("region"). Absent stays absent: it means "every configured".
 */
static int
spec_check_set(struct spec_ctx *c, const char *field, json_t *v,
    const char *key, const char *what, int (*ok)(const char *),
    char *(*bad)(const char *, const char *))
{
	json_t		*el;
	const char	*s;
	char		*f, *q, *msg;
	size_t		 i, j;
	int		 r = 0;

	if (v == NULL)
		return 0;
	if (json_is_string(v)) {
		q = spec_clean(json_string_value(v));
		r = spec_fail(c, field, "must be a list of %ss, not a string; "
		    "write [%s]", what, q);
		free(q);
		return r;
	}
	if (!json_is_array(v))
		return spec_fail_type(c, field, v, "a list");
	if (json_array_size(v) == 0)
		return spec_fail(c, field, "must not be empty; leave it out "
		    "to allow every configured %s", what);
	/* Also bounds the quadratic duplicate check below. */
	if (json_array_size(v) > SPEC_SET_MAX)
		return spec_fail(c, field, "has %zu items; at most %d are "
		    "allowed", json_array_size(v), SPEC_SET_MAX);
	json_array_foreach(v, i, el) {
		f = xprintf("%s[%zu]", field, i);
		if ((r = spec_string(c, f, el, &s)) != 0) {
			free(f);
			return r;
		}
		q = spec_clean(s);
		if (!ok(s)) {
			msg = bad(s, q);
			r = spec_fail(c, f, "%s", msg);
			free(msg);
		}
		for (j = 0; r == 0 && j < i; j++)
			if (json_equal(json_array_get(v, j), el))
				r = spec_fail(c, f, "\"%s\" is listed twice",
				    q);
		free(q);
		free(f);
		if (r != 0)
			return r;
	}
	spec_put(c->out, key, json_deep_copy(v));
	return 0;
}

/*
 * Message for a bad region S (Q: S cleaned): a zone gets its region, a
 * name not in the catalog the closest one that is.
 */
static char *
spec_region_bad(const char *s, const char *q)
{
	size_t		 len = strlen(s);
	char		*region, *m;
	const char	*near;

	if (spec_region_ok(s)) {
		near = strdist_closest(s, (const char *const *)spec_catalog.v,
		    spec_catalog.n);
		if (near != NULL)
			return xprintf("unknown region \"%s\"; did you mean "
			    "%s?", q, near);
		return xprintf("unknown region \"%s\"; gpuq knows the %zu "
		    "regions of its price table ('gpuq prices' lists them)",
		    q, spec_catalog.n);
	}

	if (len > 2 && s[len - 2] == '-' &&
	    spec_is_lower(s[len - 1])) {
		region = xstrndup(s, len - 2);
		if (spec_region_ok(region)) {
			m = xprintf("\"%s\" is a zone; list its region %s "
			    "instead (gpuq picks the zone)", q, region);
			free(region);
			return m;
		}
		free(region);
	}
	return xprintf("\"%s\" is not a region name; regions look like "
	    "us-central1", q);
}

/* regions: unique region names; absent means every configured one. */
static int
spec_check_regions(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_set(c, field, v, "regions", "region",
	    spec_region_known, spec_region_bad);
}

/* A provider a job may name: any of the table but the test-only null. */
static int
spec_provider_ok(const char *s)
{
	const struct provider	*p = prov_lookup(s);

	return p != NULL && p != &prov_null;
}

static char *
spec_provider_bad(const char *s, const char *q)
{
	return xprintf("unknown provider \"%s\"; use %s", q, prov_names());
}

/* providers: unique subset of prov_names(). */
static int
spec_check_providers(struct spec_ctx *c, const char *field, json_t *v)
{
	int	r;

	r = spec_check_set(c, field, v, "providers", "provider",
	    spec_provider_ok, spec_provider_bad);
	if (r == 0)
		r = spec_pp_providers(c, field);
	return r;
}

/* spot: never, allow (default) or require. */
static int
spec_check_spot(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s = "allow";

	if (v != NULL) {
		if (!json_is_string(v))
			return spec_fail(c, field, "must be never, allow or "
			    "require, not %s", spec_type_name(v));
		s = json_string_value(v);
		if (strcmp(s, "never") != 0 && strcmp(s, "allow") != 0 &&
		    strcmp(s, "require") != 0)
			return spec_fail(c, field, "must be never, allow or "
			    "require");
	}
	spec_put(c->out, "spot", json_string(s));
	return 0;
}

/* A positive dollar limit, kept only if given. */
static int
spec_check_usd(struct spec_ctx *c, const char *field, json_t *v,
    const char *key)
{
	double	d;
	int	r;

	if (v == NULL)
		return 0;
	if ((r = spec_positive(c, field, v, 1e9, &d)) != 0)
		return r;
	spec_put(c->out, key, json_real(d));
	return 0;
}

/* max_hourly_usd: skip offers dearer than this per hour. */
static int
spec_check_max_hourly(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_usd(c, field, v, "max_hourly_usd");
}

/* max_total_usd: stop the job when its cost reaches this. */
static int
spec_check_max_total(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_usd(c, field, v, "max_total_usd");
}

/* estimated_hours: (0, 8760], default 1; prices offers. */
static int
spec_check_hours(struct spec_ctx *c, const char *field, json_t *v)
{
	double	d = 1.0;
	int	r;

	if (v != NULL && (r = spec_positive(c, field, v, SPEC_HOURS_MAX,
	    &d)) != 0)
		return r;
	spec_put(c->out, "estimated_hours", json_real(d));
	return 0;
}

/*
 * deadline: an RFC 3339 time with its zone ("2026-12-01T09:00:00Z",
 * "2026-12-01T09:00:00+01:00") or a duration after now, the submit
 * ("36h"); kept as the UTC time, so it means the same after a restart
 * and validating the normalized spec again gives it back. Needs
 * estimated_hours given, and that much time left before it
 * (doc/DESIGN.md "Deadlines").
 */
static int
spec_check_deadline(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s;
	char		 at[WHEN_TEXT_MAX], need[WHEN_TEXT_MAX], left[32];
	char		 work[32], *q;
	int64_t		 t, sec, now = clock_now();
	double		 hours;
	int		 r;

	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return spec_fail_type(c, field, v, "a time such as "
		    "\"2026-12-01T09:00:00Z\" or a duration such as \"36h\"");
	s = json_string_value(v);
	if (when_parse(s, &t) != 0) {
		if (duration_parse(s, &sec) != 0 || sec <= 0) {
			q = spec_clean(s);
			r = spec_fail(c, field, "\"%s\" is neither a time "
			    "nor a duration; write e.g. "
			    "2026-12-01T09:00:00Z, 2026-12-01T09:00:00+01:00 "
			    "(a time needs its zone) or 36h after the submit",
			    q);
			free(q);
			return r;
		}
		t = now + sec;
	}
	if (json_object_get(c->in, "estimated_hours") == NULL)
		return spec_fail(c, field, "needs estimated_hours: a "
		    "deadline is met by knowing how much work is left; add "
		    "estimated_hours (the job's running time, in hours)");
	hours = json_number_value(json_object_get(c->out,
	    "estimated_hours"));
	(void)when_format(t, at, sizeof at);
	if (t <= now)
		return spec_fail(c, field, "%s has already passed; give a "
		    "later time", at);
	if ((double)(t - now) < hours * 3600) {
		(void)when_format(now + (int64_t)ceil(hours * 3600), need,
		    sizeof need);
		(void)duration_format(t - now, left, sizeof left);
		(void)duration_format((int64_t)ceil(hours * 3600), work,
		    sizeof work);
		return spec_fail(c, field, "%s leaves %s, but estimated_hours "
		    "is %g (%s of work): the job cannot finish in time; "
		    "move the deadline to %s or later, or lower "
		    "estimated_hours", at, left, hours, work, need);
	}
	spec_put(c->out, "deadline", json_string(at));
	return 0;
}

/* max_runtime: duration >= 60 s, default 7 days. */
static int
spec_check_runtime(struct spec_ctx *c, const char *field, json_t *v)
{
	int64_t	sec = SPEC_RUNTIME_DEFAULT;
	int	r;

	if (v != NULL && (r = spec_duration(c, field, v, SPEC_RUNTIME_MIN,
	    &sec)) != 0)
		return r;
	spec_put(c->out, "max_runtime", json_integer(sec));
	return 0;
}

/*
 * pending_timeout: duration >= 60 s, no default (absent: the daemon's
 * [scheduler] pending_timeout, read when it is needed).
 */
static int
spec_check_pending_timeout(struct spec_ctx *c, const char *field,
    json_t *v)
{
	int64_t	sec;
	int	r;

	if (v == NULL)
		return 0;
	if ((r = spec_duration(c, field, v, SPEC_RUNTIME_MIN, &sec)) != 0)
		return r;
	spec_put(c->out, "pending_timeout", json_integer(sec));
	return 0;
}

/* A count >= 0 with a default. */
static int
spec_check_budget(struct spec_ctx *c, const char *field, json_t *v,
    const char *key, long long def)
{
	long long	n = def;
	int		r;

	if (v != NULL && (r = spec_integer(c, field, v, 0, INT_MAX, &n)) != 0)
		return r;
	spec_put(c->out, key, json_integer(n));
	return 0;
}

/* max_interruptions: preemptions etc. tolerated, default 20. */
static int
spec_check_interruptions(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_budget(c, field, v, "max_interruptions",
	    SPEC_INTERRUPTIONS_DEFAULT);
}

/* max_failures: user failures retried, default 0. */
static int
spec_check_failures(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_budget(c, field, v, "max_failures", 0);
}

/*
 * Is B a Cloud Storage bucket name? 3-63 characters (222 with dots,
 * 63 per dot-separated part) of [a-z0-9._-], starting and ending with a
 * letter or digit, not an IP address, not "goog..." nor holding
 * "google" (https://cloud.google.com/storage/docs/buckets#naming).
 * NULL if fine, else why not.
 */
static const char *
spec_bucket_why(const char *b, size_t len)
{
	size_t	i, part = 0, parts = 1, digits_only = 1;
	int	dots = memchr(b, '.', len) != NULL;

	if (len < 3 || len > (dots ? 222 : 63))
		return "must be 3 to 63 characters long (222 with dots)";
	for (i = 0; i < len; i++) {
		if (!spec_is_lower_digit(b[i]) && b[i] != '-' && b[i] != '_' &&
		    b[i] != '.')
			return "may hold only lowercase letters, digits, '-', "
			    "'_' and '.'";
		if (b[i] == '.') {
			if (part == 0)
				return "must not have empty parts between dots";
			part = 0;
			parts++;
			continue;
		}
		if (!spec_is_digit(b[i]))
			digits_only = 0;
		if (++part > 63)
			return "must have at most 63 characters between dots";
	}
	if (!spec_is_lower_digit(b[0]) || !spec_is_lower_digit(b[len - 1]))
		return "must start and end with a letter or digit";
	if (digits_only && parts == 4)
		return "must not be an IP address";
	if (strncmp(b, "goog", 4) == 0)
		return "must not start with \"goog\"";
	for (i = 0; i + 6 <= len; i++)
		if (memcmp(b + i, "google", 6) == 0 ||
		    memcmp(b + i, "g00gle", 6) == 0)
			return "must not contain \"google\"";
	return NULL;
}

/* checkpoint.uri: gs://bucket[/path], stored ending in '/'. */
static int
spec_check_ckpt_uri(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *bucket, *slash, *why, *p;
	char		*q, *t;
	size_t		 len;
	int		 r;

	if (v == NULL)
		return 0;
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (strncmp(s, "gs://", 5) != 0)
		return spec_fail(c, field, "must be a Cloud Storage URI such "
		    "as gs://my-bucket/runs/resnet");
	if (strlen(s) > SPEC_URI_MAX)
		return spec_fail(c, field, "must be at most %d characters "
		    "long", SPEC_URI_MAX);
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return spec_fail(c, field, "must not contain "
			    "whitespace");
	bucket = s + 5;
	slash = strchr(bucket, '/');
	len = slash != NULL ? (size_t)(slash - bucket) : strlen(bucket);
	if ((why = spec_bucket_why(bucket, len)) != NULL) {
		t = xstrndup(bucket, len);
		q = spec_clean(t);
		r = spec_fail(c, field, "bucket name \"%s\" %s", q, why);
		free(q);
		free(t);
		return r;
	}
	if (slash != NULL && strstr(slash, "//") != NULL)
		return spec_fail(c, field, "must not contain \"//\" after the "
		    "bucket name");
	len = strlen(s);
	spec_put(json_object_get(c->out, "checkpoint"), "uri",
	    len > 0 && s[len - 1] == '/' ? json_string(s) :
	    json_sprintf("%s/", s));
	return 0;
}

/* checkpoint.interval: duration >= 1 s, default 30m. */
static int
spec_check_ckpt_interval(struct spec_ctx *c, const char *field, json_t *v)
{
	int64_t	sec = SPEC_INTERVAL_DEFAULT;
	int	r;

	if (v != NULL && (r = spec_duration(c, field, v, 1, &sec)) != 0)
		return r;
	spec_put(json_object_get(c->out, "checkpoint"), "interval",
	    json_integer(sec));
	return 0;
}

static const struct spec_field spec_ckpt_fields[] = {
	{ "uri",	spec_check_ckpt_uri },
	{ "interval",	spec_check_ckpt_interval },
};

/* checkpoint: optional {uri, interval}; interval always normalized. */
static int
spec_check_checkpoint(struct spec_ctx *c, const char *field, json_t *v)
{
	json_t	*empty = NULL;
	int	 r;

	if (v != NULL && !json_is_object(v))
		return spec_fail_type(c, field, v, "an object such as "
		    "{uri: gs://my-bucket/runs/resnet, interval: 30m}");
	if (v == NULL && (v = empty = json_object()) == NULL)
		fatalx("spec: out of memory");
	spec_put(c->out, "checkpoint", json_object());
	r = spec_check_fields(c, field, v, spec_ckpt_fields,
	    sizeof spec_ckpt_fields / sizeof spec_ckpt_fields[0]);
	json_decref(empty);
	return r;
}

/* priority: -1000..1000, default 0; higher runs first. */
static int
spec_check_priority(struct spec_ctx *c, const char *field, json_t *v)
{
	long long	n = 0;
	int		r;

	if (v != NULL && (r = spec_integer(c, field, v, SPEC_PRIORITY_MIN,
	    SPEC_PRIORITY_MAX, &n)) != 0)
		return r;
	spec_put(c->out, "priority", json_integer(n));
	return 0;
}

/*
 * nodes: 1..64 machines, each with the job's accelerator and machine
 * type, run as one gang (doc/DESIGN.md "Gangs"). Written to the
 * normalised spec only when above 1, so single-machine specs stay as
 * they were. A gang needs a command: on Vertex AI and Cloud Batch gpuq
 * runs it under a fixed entry wrapper that sets the rank variables
 * from what the service provides, and an image's own entrypoint cannot
 * be wrapped without knowing it.
 */
static int
spec_check_nodes(struct spec_ctx *c, const char *field, json_t *v)
{
	long long	n = 1;
	int		r;

	if (v != NULL && (r = spec_integer(c, field, v, 1, SPEC_NODES_MAX,
	    &n)) != 0)
		return r;
	if (n == 1)
		return 0;
	if (json_array_size(json_object_get(c->out, "command")) == 0)
		return spec_fail(c, field, "a job of %lld nodes needs a "
		    "command (gpuq starts it on every node behind a wrapper "
		    "that sets the node's rank); add command: [...]", n);
	spec_put(c->out, "nodes", json_integer(n));
	return 0;
}

/* labels: Google label rules, minus the gpuq* keys gpuq sets itself. */
static int
spec_check_labels(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*key, *s = NULL;
	json_t		*out, *val;
	char		*k, *f;
	int		 r = 0;

	if (v != NULL && !json_is_object(v))
		return spec_fail_type(c, field, v, "an object of key: value "
		    "pairs");
	if (v != NULL && json_object_size(v) > SPEC_LABELS_MAX)
		return spec_fail(c, field, "has %zu labels; at most %d are "
		    "allowed", json_object_size(v), SPEC_LABELS_MAX);
	out = json_object();
	if (out == NULL)
		fatalx("spec: out of memory");
	if (v != NULL) {
		json_object_foreach(v, key, val) {
			k = spec_clean(key);
			f = xprintf("%s.%s", field, k);
			if (*key == '\0' || strlen(key) > SPEC_LABEL_LEN_MAX)
				r = spec_fail(c, f, "label keys must be 1 to "
				    "%d characters long", SPEC_LABEL_LEN_MAX);
			else if (!spec_is_lower(*key) ||
			    !spec_chars_ok(key, spec_is_lower_digit, "_-"))
				r = spec_fail(c, f, "label keys must start "
				    "with a lowercase letter and hold only "
				    "lowercase letters, digits, '_' and '-'");
			else if (strncmp(key, "gpuq", 4) == 0)
				r = spec_fail(c, f, "label keys starting with "
				    "\"gpuq\" are reserved: gpuq sets them");
			else if ((r = spec_string(c, f, val, &s)) != 0)
				;
			else if (strlen(s) > SPEC_LABEL_LEN_MAX)
				r = spec_fail(c, f, "label values must be at "
				    "most %d characters long",
				    SPEC_LABEL_LEN_MAX);
			else if (!spec_chars_ok(s, spec_is_lower_digit, "_-"))
				r = spec_fail(c, f, "label values may hold "
				    "only lowercase letters, digits, '_' and "
				    "'-'");
			free(f);
			free(k);
			if (r != 0) {
				json_decref(out);
				return r;
			}
			spec_put(out, key, json_string(s));
		}
	}
	spec_put(c->out, "labels", out);
	return 0;
}

/*
 * The container image reference grammar (the one docker and every
 * registry use):
 *
 *	reference := name [ ":" tag ] [ "@" digest ]
 *	name      := [ domain "/" ] component ( "/" component )*
 *	domain    := host ( "." host )* [ ":" port ]
 *	host      := [A-Za-z0-9] ( [A-Za-z0-9-]* [A-Za-z0-9] )?
 *	component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *	tag       := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
 *	digest    := "sha256:" [0-9a-f]{64}
 *
 * The first part of the name is a domain when it holds '.' or ':' or
 * is "localhost". The name is at most 255 characters. Nothing that
 * starts with '-' can match, so an image never reads as an option of
 * the docker run that gce-startup.sh builds.
 */
#define SPEC_IMAGE_NAME_MAX	255
#define SPEC_IMAGE_TAG_MAX	128
#define SPEC_IMAGE_EXAMPLE \
	"us-docker.pkg.dev/my-project/train/resnet:1.0"

/* Is [S, E) a host name label list with an optional :port? */
static int
spec_image_domain_ok(const char *s, const char *e)
{
	const char	*colon = memchr(s, ':', (size_t)(e - s)), *p, *end;

	end = colon != NULL ? colon : e;
	if (colon != NULL) {
		if (colon + 1 == e || e - colon - 1 > 5)
			return 0;
		for (p = colon + 1; p < e; p++)
			if (!spec_is_digit(*p))
				return 0;
	}
	for (p = s; p < end; p++) {
		if (!spec_is_ascii_alnum(*p))
			return 0;	/* a host starts alphanumeric */
		while (p < end && (spec_is_ascii_alnum(*p) || *p == '-'))
			p++;
		if (p[-1] == '-')
			return 0;		/* ... and ends so */
		if (p < end && (*p != '.' || p + 1 == end))
			return 0;
	}
	return end > s;
}

/* Is [S, E) one lowercase path component? */
static int
spec_image_component_ok(const char *s, const char *e)
{
	const char	*p = s;
	size_t		 n;

	for (;;) {
		if (p == e || !spec_is_lower_digit(*p))
			return 0;
		while (p < e && spec_is_lower_digit(*p))
			p++;
		if (p == e)
			return 1;
		n = strspn(p, "-");
		if (n > 0)
			p += n;
		else if (p[0] == '_' && p + 1 < e && p[1] == '_')
			p += 2;
		else if (*p == '.' || *p == '_')
			p++;
		else
			return 0;
	}
}

/* Fail for image S (quoted as Q) breaking RULE. */
static int
spec_image_fail(struct spec_ctx *c, const char *field, const char *q,
    const char *rule)
{
	return spec_fail(c, field, "\"%s\" is not an image reference: %s; "
	    "write registry/path[:tag][@sha256:digest], e.g. %s", q, rule,
	    SPEC_IMAGE_EXAMPLE);
}

/* image S against the reference grammar above: 0, else -EINVAL. */
static int
spec_check_image_ref(struct spec_ctx *c, const char *field, const char *s)
{
	const char	*at, *end, *slash, *colon, *p, *e, *first_end;
	char		*q = spec_clean(s);
	size_t		 i;
	int		 r = 0;

	if (*s == '-') {
		r = spec_fail(c, field, "\"%s\" starts with '-': an image is "
		    "a name such as %s, never an option", q,
		    SPEC_IMAGE_EXAMPLE);
		goto out;
	}
	end = s + strlen(s);
	if ((at = strchr(s, '@')) != NULL) {
		if (strncmp(at + 1, "sha256:", 7) != 0 ||
		    strlen(at + 8) != 64) {
			r = spec_image_fail(c, field, q, "a digest is "
			    "@sha256: and 64 hexadecimal digits");
			goto out;
		}
		for (i = 0; i < 64; i++)
			if (!spec_is_digit(at[8 + i]) &&
			    (at[8 + i] < 'a' || at[8 + i] > 'f')) {
				r = spec_image_fail(c, field, q, "a digest is "
				    "@sha256: and 64 lowercase hexadecimal "
				    "digits");
				goto out;
			}
		end = at;
	}
	slash = NULL;
	for (p = s; p < end; p++)
		if (*p == '/')
			slash = p;
	colon = NULL;
	for (p = slash != NULL ? slash : s; p < end; p++)
		if (*p == ':')
			colon = p;
	if (colon != NULL) {
		/* The tag. */
		p = colon + 1;
		if (p == end || end - p > SPEC_IMAGE_TAG_MAX ||
		    !(spec_is_ascii_alnum(*p) || *p == '_')) {
			r = spec_image_fail(c, field, q, "a tag is 1 to 128 "
			    "letters, digits, '_', '.' and '-', not starting "
			    "with '.' or '-'");
			goto out;
		}
		for (; p < end; p++)
			if (!spec_is_ascii_alnum(*p) && strchr("_.-", *p) ==
			    NULL) {
				r = spec_image_fail(c, field, q, "a tag holds "
				    "only letters, digits, '_', '.' and '-'");
				goto out;
			}
		end = colon;
	}
	if (end - s > SPEC_IMAGE_NAME_MAX) {
		r = spec_image_fail(c, field, q, "the name before the tag is "
		    "at most 255 characters");
		goto out;
	}
	p = s;
	first_end = memchr(s, '/', (size_t)(end - s));
	if (first_end != NULL && (memchr(s, '.', (size_t)(first_end - s)) !=
	    NULL || memchr(s, ':', (size_t)(first_end - s)) != NULL ||
	    (first_end - s == 9 && strncmp(s, "localhost", 9) == 0))) {
		if (!spec_image_domain_ok(s, first_end)) {
			r = spec_image_fail(c, field, q, "the registry is a "
			    "host name (letters, digits, '-' and '.') with an "
			    "optional :port");
			goto out;
		}
		p = first_end + 1;
	}
	for (;;) {
		e = memchr(p, '/', (size_t)(end - p));
		if (e == NULL)
			e = end;
		if (!spec_image_component_ok(p, e)) {
			r = spec_image_fail(c, field, q, "each part of the "
			    "path is lowercase letters and digits, joined by "
			    "'.', '_', '__' or dashes");
			goto out;
		}
		if (e == end)
			break;
		p = e + 1;
	}
out:
	free(q);
	return r;
}

/*
 * A Secret Manager secret version: projects/P/secrets/S/versions/V,
 * P a project id (6-30 of [a-z0-9-], starting with a letter) or
 * number, S 1-255 of [A-Za-z0-9_-], V "latest" or a version number.
 */
static int
spec_secret_name_ok(const char *s)
{
	const char	*p, *e;
	size_t		 n;

	if (strncmp(s, "projects/", 9) != 0)
		return 0;
	p = s + 9;
	if ((e = strchr(p, '/')) == NULL)
		return 0;
	n = (size_t)(e - p);
	if (n == 0 || n > 30)
		return 0;
	if (spec_is_lower(*p)) {
		if (n < 6 || e[-1] == '-')
			return 0;
		for (; p < e; p++)
			if (!spec_is_lower_digit(*p) && *p != '-')
				return 0;
	} else
		for (; p < e; p++)
			if (!spec_is_digit(*p))
				return 0;
	if (strncmp(e, "/secrets/", 9) != 0)
		return 0;
	p = e + 9;
	if ((e = strchr(p, '/')) == NULL || e == p || e - p > 255)
		return 0;
	for (; p < e; p++)
		if (!spec_is_ascii_alnum(*p) && *p != '_' && *p != '-')
			return 0;
	if (strncmp(e, "/versions/", 10) != 0)
		return 0;
	p = e + 10;
	if (strcmp(p, "latest") == 0)
		return 1;
	if (*p == '\0' || *p == '0' || strlen(p) > 18)
		return 0;
	for (; *p != '\0'; p++)
		if (!spec_is_digit(*p))
			return 0;
	return 1;
}

/*
 * secret_env: NAME -> Secret Manager version. Names follow env's rules
 * and must not repeat one of env (checked before this). The value that
 * reaches the container never enters the queue: only its name does.
 */
static int
spec_check_secret_env(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*key, *s = NULL;
	json_t		*out, *val, *env = json_object_get(c->out, "env");
	char		*k, *f, *q;
	int		 r = 0;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return spec_fail_type(c, field, v, "an object of NAME: "
		    "projects/P/secrets/S/versions/V pairs");
	if (json_object_size(v) + json_object_size(env) > SPEC_ENV_MAX)
		return spec_fail(c, field, "env and secret_env have %zu "
		    "variables together; at most %d are allowed",
		    json_object_size(v) + json_object_size(env), SPEC_ENV_MAX);
	out = json_object();
	if (out == NULL)
		fatalx("spec: out of memory");
	json_object_foreach(v, key, val) {
		k = spec_clean(key);
		f = xprintf("%s.%s", field, k);
		if (*key == '\0' || spec_is_digit(*key) ||
		    !spec_chars_ok(key, spec_is_ascii_alnum, "_"))
			r = spec_fail(c, f, "\"%s\" is not a variable name: "
			    "use letters, digits and '_', not starting with "
			    "a digit", k);
		else if (strncmp(key, "GPUQ_", 5) == 0 ||
		    strncmp(key, "AIP_", 4) == 0)
			r = spec_fail(c, f, "names starting with GPUQ_ or AIP_ "
			    "are reserved: gpuq and Vertex AI set them (see "
			    "gpuq-job(5))");
		else if (json_object_get(env, key) != NULL)
			r = spec_fail(c, f, "is also set in env; give it in "
			    "one of them");
		else if ((r = spec_string(c, f, val, &s)) != 0)
			;
		else if (!spec_secret_name_ok(s)) {
			q = spec_clean(s);
			r = spec_fail(c, f, "\"%s\" is not a secret version; "
			    "write projects/PROJECT/secrets/SECRET/versions/"
			    "VERSION (VERSION a number or latest)", q);
			free(q);
		}
		free(f);
		free(k);
		if (r != 0) {
			json_decref(out);
			return r;
		}
		spec_put(out, key, json_string(s));
	}
	spec_put(c->out, "secret_env", out);
	return 0;
}

/* disk.size_gb: the boot disk in GB, in the range every service takes. */
static int
spec_check_disk_size(struct spec_ctx *c, const char *field, json_t *v)
{
	long long	n;
	int		r;

	if (v == NULL)
		return 0;
	if ((r = spec_integer(c, field, v, GCP_BOOT_DISK_GB_MIN,
	    GCP_BOOT_DISK_GB_MAX, &n)) != 0)
		return r;
	spec_put(json_object_get(c->out, "disk"), "size_gb", json_integer(n));
	return 0;
}

/* disk.type: a boot disk type Vertex AI, Batch and Compute all take. */
static int
spec_check_disk_type(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s;
	int		 r;

	if (v == NULL)
		return 0;
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (strcmp(s, "pd-ssd") != 0 && strcmp(s, "pd-standard") != 0 &&
	    strcmp(s, "hyperdisk-balanced") != 0)
		return spec_fail(c, field, "must be pd-ssd, pd-standard or "
		    "hyperdisk-balanced, the boot disk types every service "
		    "takes");
	spec_put(json_object_get(c->out, "disk"), "type", json_string(s));
	return 0;
}

static const struct spec_field spec_disk_fields[] = {
	{ "size_gb",	spec_check_disk_size },
	{ "type",	spec_check_disk_type },
};

/* disk: optional {size_gb, type} of the boot disk; absent: [gcp]'s. */
static int
spec_check_disk(struct spec_ctx *c, const char *field, json_t *v)
{
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return spec_fail_type(c, field, v, "an object such as "
		    "{size_gb: 500, type: pd-ssd}");
	spec_put(c->out, "disk", json_object());
	return spec_check_fields(c, field, v, spec_disk_fields,
	    sizeof spec_disk_fields / sizeof spec_disk_fields[0]);
}

/*
 * python_package: the job's code as Vertex AI's Python-package
 * training gives it (pythonPackageSpec): an executor image, the
 * package files on Cloud Storage, the module to run and its arguments.
 * It stands instead of image, command and args (doc/DESIGN.md "Python
 * packages").
 */

/*
 * For image, command and args (FIELD, value V): 1 when python_package
 * is given and V is not (nothing to check), -EINVAL when both are, 0
 * when there is no python_package.
 */
static int
spec_pp_given(struct spec_ctx *c, const char *field, json_t *v)
{
	if (c->in == NULL || json_object_get(c->in, "python_package") == NULL)
		return 0;
	if (v == NULL)
		return 1;
	if (strcmp(field, "image") == 0)
		return spec_fail(c, field, "give either image or "
		    "python_package: python_package.executor_image is the "
		    "image that runs the package");
	return spec_fail(c, field, "a python_package job runs its module; "
	    "give the arguments as python_package.args and leave %s out",
	    field);
}

/* python_package.executor_image: an image reference, required. */
static int
spec_check_pp_image(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *p;
	int		 r;

	if (v == NULL)
		return spec_fail(c, field, "required: the image that installs "
		    "and runs the package, e.g. one of Vertex AI's prebuilt "
		    "training containers");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (*s == '\0' || strlen(s) > SPEC_IMAGE_MAX)
		return spec_fail(c, field, "must be 1 to %d characters long",
		    SPEC_IMAGE_MAX);
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return spec_fail(c, field, "must not contain "
			    "whitespace; it is one image URI");
	if ((r = spec_check_image_ref(c, field, s)) != 0)
		return r;
	spec_put(json_object_get(c->out, "python_package"), "executor_image",
	    json_string(s));
	return 0;
}

/* One package URI: gs://BUCKET/OBJECT, no whitespace. */
static int
spec_check_pp_uri(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *bucket, *slash, *why, *p;
	char		*q;
	int		 r;

	if (json_is_number(v) || json_is_boolean(v))
		return spec_fail(c, field, "must be a string; quote it");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (strlen(s) > SPEC_URI_MAX)
		return spec_fail(c, field, "must be at most %d characters "
		    "long", SPEC_URI_MAX);
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return spec_fail(c, field, "must not contain "
			    "whitespace");
	bucket = s + 5;
	slash = strncmp(s, "gs://", 5) == 0 ? strchr(bucket, '/') : NULL;
	if (slash == NULL || slash[1] == '\0' || slash[strlen(slash) - 1] ==
	    '/') {
		q = spec_clean(s);
		r = spec_fail(c, field, "\"%s\" is not a package file on "
		    "Cloud Storage; write gs://BUCKET/path/trainer-0.1.tar.gz",
		    q);
		free(q);
		return r;
	}
	if ((why = spec_bucket_why(bucket, (size_t)(slash - bucket))) != NULL)
		return spec_fail(c, field, "bucket name %s", why);
	return 0;
}

/* python_package.package_uris: 1 to 100 gs:// files. */
static int
spec_check_pp_uris(struct spec_ctx *c, const char *field, json_t *v)
{
	json_t	*el;
	size_t	 i;
	char	*f;
	int	 r;

	if (v == NULL)
		return spec_fail(c, field, "required: the package files, e.g. "
		    "[gs://my-bucket/trainer-0.1.tar.gz]");
	if (!json_is_array(v))
		return spec_fail_type(c, field, v, "a list of gs:// URIs");
	if (json_array_size(v) == 0 || json_array_size(v) > 100)
		return spec_fail(c, field, "must list 1 to 100 package files, "
		    "as Vertex AI takes them");
	json_array_foreach(v, i, el) {
		f = xprintf("%s[%zu]", field, i);
		r = spec_check_pp_uri(c, f, el);
		free(f);
		if (r != 0)
			return r;
	}
	spec_put(json_object_get(c->out, "python_package"), "package_uris",
	    json_deep_copy(v));
	return 0;
}

/* python_package.module: a dotted Python module name. */
static int
spec_check_pp_module(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s, *p;
	char		*q;
	int		 r, start = 1;

	if (v == NULL)
		return spec_fail(c, field, "required: the module to run, as "
		    "python -m takes it, e.g. trainer.task");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	for (p = s; *p != '\0' && p - s <= 255; p++) {
		if (*p == '.' && !start && p[1] != '\0') {
			start = 1;
			continue;
		}
		if (!(isalpha((unsigned char)*p) || *p == '_' ||
		    (!start && isdigit((unsigned char)*p))))
			break;
		start = 0;
	}
	if (*s == '\0' || *p != '\0') {
		q = spec_clean(s);
		r = spec_fail(c, field, "\"%s\" is not a Python module name: "
		    "names of letters, digits and '_' joined by '.', such as "
		    "trainer.task (at most 255 characters)", q);
		free(q);
		return r;
	}
	spec_put(json_object_get(c->out, "python_package"), "module",
	    json_string(s));
	return 0;
}

/* python_package.args: list of strings, default []. */
static int
spec_check_pp_args(struct spec_ctx *c, const char *field, json_t *v)
{
	json_t	*saved = c->out;
	int	 r;

	c->out = json_object_get(saved, "python_package");
	r = spec_check_strings(c, field, v, 1, "args");
	if (r == 0 && v == NULL)
		spec_put(c->out, "args", json_array());
	c->out = saved;
	return r;
}

/*
 * The providers a python_package can run on: a service that takes only
 * some executor images (Vertex AI: its pre-built training containers)
 * is refused by name when the job lists it, and left out of the
 * job's providers when it lists none (doc/DESIGN.md "Python packages").
 */
static int
spec_pp_providers(struct spec_ctx *c, const char *field)
{
	const struct provider	*p;
	const char		*image, *name;
	json_t			*pp, *list, *e;
	char			*names, *tok, *save = NULL, *f;
	size_t			 i;
	int			 r = 0, all = 1;

	if ((pp = json_object_get(c->out, "python_package")) == NULL)
		return 0;
	image = json_string_value(json_object_get(pp, "executor_image"));
	if ((list = json_object_get(c->out, "providers")) != NULL) {
		json_array_foreach(list, i, e) {
			name = json_string_value(e);
			p = prov_lookup(name);
			if (p == NULL || prov_package_image_ok(p, image))
				continue;
			f = xprintf("%s[%zu]", field, i);
			r = spec_fail(c, f, "%s runs a python_package only with "
			    "its own executor images (%s...); use one of them, "
			    "or leave %s out", name, p->package_images[0],
			    name);
			free(f);
			return r;
		}
		return 0;
	}
	if ((list = json_array()) == NULL)
		fatalx("spec: out of memory");
	names = xstrdup(prov_names());
	for (tok = strtok_r(names, ", ", &save); tok != NULL;
	    tok = strtok_r(NULL, ", ", &save)) {
		if ((p = prov_lookup(tok)) == NULL)
			continue;
		if (!prov_package_image_ok(p, image))
			all = 0;
		else if (json_array_append_new(list, json_string(tok)) != 0)
			fatalx("spec: out of memory");
	}
	free(names);
	if (all)
		json_decref(list);
	else
		spec_put(c->out, "providers", list);
	return 0;
}

static const struct spec_field spec_pp_fields[] = {
	{ "executor_image",	spec_check_pp_image },
	{ "package_uris",	spec_check_pp_uris },
	{ "module",		spec_check_pp_module },
	{ "args",		spec_check_pp_args },
};

static int
spec_check_python_package(struct spec_ctx *c, const char *field, json_t *v)
{
	int	r;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return spec_fail_type(c, field, v, "an object with "
		    "executor_image, package_uris, module and args");
	spec_put(c->out, "python_package", json_object());
	r = spec_check_fields(c, field, v, spec_pp_fields,
	    sizeof spec_pp_fields / sizeof spec_pp_fields[0]);
	if (r != 0)
		(void)json_object_del(c->out, "python_package");
	return r;
}

/*
 * array: {count, parallelism}: COUNT tasks of one job, at most
 * PARALLELISM of them launching or running at once (doc/DESIGN.md
 * "Arrays and dependencies"). Absent: one plain job.
 */
static int
spec_check_array(struct spec_ctx *c, const char *field, json_t *v)
{
	static const char *const keys[] = { "count", "parallelism" };
	json_t		*out, *e;
	const char	*k;
	long long	 count, par;
	char		*f;
	int		 r;
	size_t		 i;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return spec_fail_type(c, field, v, "an object with count and "
		    "parallelism, e.g. {count: 16, parallelism: 4}");
	/*
	 * A gang's rank on Cloud Batch is Batch's own BATCH_TASK_INDEX,
	 * which a task of an array also sets to its index: the two would
	 * clash, so an array of gangs is refused rather than misranked.
	 */
	if (json_integer_value(json_object_get(c->out, "nodes")) > 1)
		return spec_fail(c, field, "an array of multi-node jobs is not "
		    "supported; submit each gang as its own job, or drop "
		    "nodes");
	json_object_foreach(v, k, e) {
		for (i = 0; i < 2 && strcmp(k, keys[i]) != 0; i++)
			;
		if (i == 2) {
			f = spec_clean(k);
			r = spec_fail(c, field, "unknown key \"%s\"; known "
			    "keys: count, parallelism", f);
			free(f);
			return r;
		}
	}
	f = xprintf("%s.count", field);
	if ((e = json_object_get(v, "count")) == NULL)
		r = spec_fail(c, f, "required: how many tasks, 1 to %d",
		    SPEC_ARRAY_MAX);
	else
		r = spec_integer(c, f, e, 1, SPEC_ARRAY_MAX, &count);
	free(f);
	if (r != 0)
		return r;
	par = count;
	f = xprintf("%s.parallelism", field);
	e = json_object_get(v, "parallelism");
	r = e == NULL ? 0 : spec_integer(c, f, e, 1, SPEC_ARRAY_MAX, &par);
	if (r == 0 && par > count)
		r = spec_fail(c, f, "must be at most count (%lld); leave it "
		    "out to run every task at once", count);
	free(f);
	if (r != 0)
		return r;
	if ((out = json_object()) == NULL)
		fatalx("spec: out of memory");
	spec_put(out, "count", json_integer(count));
	spec_put(out, "parallelism", json_integer(par));
	spec_put(c->out, "array", out);
	return 0;
}

/*
 * after, after_any: the ids of jobs (or whole arrays) this one waits
 * for, to succeed (after) or to end whatever the result (after_any).
 * Names of earlier documents of a file are the client's to resolve; the
 * daemon checks each id exists when it stores the job.
 */
static int
spec_check_deps(struct spec_ctx *c, const char *field, json_t *v,
    const char *key)
{
	json_t		*out, *e;
	long long	 id;
	size_t		 i, j;
	char		*f, *q;
	int		 r;

	if (v == NULL)
		return 0;
	if (json_is_integer(v)) {
		if ((out = json_array()) == NULL ||
		    json_array_append(out, v) == -1)
			fatalx("spec: out of memory");
		v = out;
	} else {
		if (!json_is_array(v))
			return spec_fail_type(c, field, v, "a list of job ids, "
			    "e.g. [41, 40]");
		json_incref(v);
	}
	if (json_array_size(v) > SPEC_DEPS_MAX) {
		json_decref(v);
		return spec_fail(c, field, "lists %zu jobs; at most %d are "
		    "allowed", json_array_size(v), SPEC_DEPS_MAX);
	}
	if ((out = json_array()) == NULL)
		fatalx("spec: out of memory");
	json_array_foreach(v, i, e) {
		f = xprintf("%s[%zu]", field, i);
		if (json_is_string(e)) {
			q = spec_clean(json_string_value(e));
			r = spec_fail(c, f, "\"%s\" is not a job id; a name "
			    "is resolved only when gpuq submit reads it from "
			    "an earlier document of the same file", q);
			free(q);
		} else if (json_is_integer(e) && json_integer_value(e) < 1)
			r = spec_fail(c, f, "must be a job id, 1 or more");
		else
			r = spec_integer(c, f, e, 1, INT64_MAX, &id);
		free(f);
		if (r != 0) {
			json_decref(out);
			json_decref(v);
			return r;
		}
		for (j = 0; j < json_array_size(out); j++)
			if (json_integer_value(json_array_get(out, j)) == id)
				break;
		if (j == json_array_size(out) &&
		    json_array_append_new(out, json_integer(id)) == -1)
			fatalx("spec: out of memory");
	}
	json_decref(v);
	spec_put(c->out, key, out);
	return 0;
}

static int
spec_check_after(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_deps(c, field, v, "after");
}

static int
spec_check_after_any(struct spec_ctx *c, const char *field, json_t *v)
{
	return spec_check_deps(c, field, v, "after_any");
}

/*
 * The fields of a job, in the order gpuq-job(5) documents them, which
 * is also the order of checking and of the normalized object.
 * machine_type follows accelerator because it depends on it.
 */
/* notify.webhook: a URL webhook_url_check() accepts. */
static int
spec_check_notify_webhook(struct spec_ctx *c, const char *field, json_t *v)
{
	const char	*s;
	char		*why = NULL;
	int		 r;

	if (v == NULL)
		return spec_fail(c, field, "required in notify: the URL each "
		    "event of this job is POSTed to");
	if ((r = spec_string(c, field, v, &s)) != 0)
		return r;
	if (webhook_url_check(s, &why) != 0) {
		/* Our words, not the URL: nothing to quote or cut. */
		r = spec_fail(c, field, "%s", why);
		free(why);
		return r;
	}
	spec_put(json_object_get(c->out, "notify"), "webhook",
	    json_string(s));
	return 0;
}

/* notify.on: events among failed, succeeded, interrupted, cancelled. */
static int
spec_check_notify_on(struct spec_ctx *c, const char *field, json_t *v)
{
	static const char *const events[] = { "failed", "succeeded",
	    "interrupted", "cancelled" };
	json_t		*out, *e;
	const char	*s;
	size_t		 i, k;
	int		 r;

	if (v == NULL)
		return 0;	/* gpuqd.conf's [notify] on */
	if (!json_is_array(v))
		return spec_fail_type(c, field, v, "a list such as [failed, "
		    "succeeded]");
	if ((out = json_array()) == NULL)
		fatalx("spec: out of memory");
	json_array_foreach(v, i, e) {
		if ((r = spec_string(c, field, e, &s)) != 0) {
			json_decref(out);
			return r;
		}
		for (k = 0; k < sizeof events / sizeof events[0]; k++)
			if (strcmp(s, events[k]) == 0)
				break;
		if (k == sizeof events / sizeof events[0]) {
			json_decref(out);
			return spec_fail(c, field, "has an unknown event; "
			    "events are failed, succeeded, interrupted and "
			    "cancelled");
		}
		(void)json_array_append_new(out, json_string(s));
	}
	spec_put(json_object_get(c->out, "notify"), "on", out);
	return 0;
}

static const struct spec_field spec_notify_fields[] = {
	{ "webhook",	spec_check_notify_webhook },
	{ "on",		spec_check_notify_on },
};

/* notify: optional {webhook, on}: this job's own receiver of events. */
static int
spec_check_notify(struct spec_ctx *c, const char *field, json_t *v)
{
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return spec_fail_type(c, field, v, "an object such as "
		    "{webhook: https://hooks.example.com/gpuq}");
	spec_put(c->out, "notify", json_object());
	return spec_check_fields(c, field, v, spec_notify_fields,
	    sizeof spec_notify_fields / sizeof spec_notify_fields[0]);
}

/*
 * capacity: the kinds of capacity the job may run on, a list of spot,
 * flex, reserved and standard (doc/DESIGN.md "Capacity kinds"); absent:
 * what spot: allows. Kept in the order spot, flex, reserved, standard.
 * With spot: given too, the two must agree; alone, it sets spot: to the
 * value that says the same about Spot, for the checks that read spot:.
 * Runs after spot: and max_runtime:.
 */
static int
spec_check_capacity(struct spec_ctx *c, const char *field, json_t *v)
{
	static const int order[] = { CAPACITY_SPOT, CAPACITY_FLEX,
	    CAPACITY_RESERVED, CAPACITY_STANDARD };
	json_t		*arr, *it, *given;
	const char	*name, *spot, *implied;
	unsigned	 mask = 0;
	size_t		 i;
	int		 k;

	if (v == NULL)
		return 0;
	if (json_is_string(v)) {
		arr = json_array();
		json_array_append(arr, v);
	} else if (json_is_array(v))
		arr = json_incref(v);
	else
		return spec_fail_type(c, field, v, "a list of kinds such as "
		    "[flex, standard]");
	json_array_foreach(arr, i, it) {
		name = json_string_value(it);
		if ((k = capacity_lookup(name)) < 0) {
			json_decref(arr);
			return spec_fail(c, field, "\"%s\" is not a kind of "
			    "capacity; use %s", name != NULL ? name : "?",
			    capacity_names());
		}
		mask |= CAPACITY_BIT(k);
	}
	json_decref(arr);
	if (mask == 0)
		return spec_fail(c, field, "lists no kind; use some of %s, or "
		    "leave capacity out to allow all", capacity_names());
	implied = !(mask & CAPACITY_BIT(CAPACITY_SPOT)) ? "never" :
	    mask == CAPACITY_BIT(CAPACITY_SPOT) ? "require" : "allow";
	given = json_object_get(c->in, "spot");
	if (given != NULL) {
		spot = json_string_value(given);
		if (strcmp(spot, implied) != 0)
			return spec_fail(c, field, "disagrees with spot: %s "
			    "(capacity says spot: %s); give only capacity",
			    spot, implied);
	}
	if (mask == CAPACITY_BIT(CAPACITY_FLEX) && json_integer_value(
	    json_object_get(c->out, "max_runtime")) > CAPACITY_FLEX_MAX_RUN)
		return spec_fail(c, field, "allows only flex, which runs at "
		    "most 7 days; set max_runtime to 7d or less, or allow "
		    "another kind");
	if ((arr = json_array()) == NULL)
		fatalx("spec: out of memory");
	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		if (mask & CAPACITY_BIT(order[i]))
			json_array_append_new(arr,
			    json_string(capacity_name(order[i])));
	spec_put(c->out, "capacity", arr);
	spec_put(c->out, "spot", json_string(implied));
	return 0;
}

/*
 * flex_wait: how long a flex-start request may wait for capacity before
 * it is withdrawn, 60 s to 2 h (Google queues it at most 2 h, API-NOTES
 * K.2); absent: 1 h, read when needed.
 */
static int
spec_check_flex_wait(struct spec_ctx *c, const char *field, json_t *v)
{
	int64_t	sec;
	int	r;

	if (v == NULL)
		return 0;
	if ((r = spec_duration(c, field, v, SPEC_RUNTIME_MIN, &sec)) != 0)
		return r;
	if (sec > CAPACITY_FLEX_MAX_WAIT)
		return spec_fail(c, field, "may be at most 2h: Google keeps a "
		    "flex-start request queued no longer");
	spec_put(c->out, "flex_wait", json_integer(sec));
	return 0;
}

static const struct spec_field spec_fields[] = {
	{ "name",		spec_check_name },
	{ "image",		spec_check_image },
	{ "command",		spec_check_command },
	{ "args",		spec_check_args },
	{ "python_package",	spec_check_python_package },
	{ "env",		spec_check_env },
	{ "secret_env",		spec_check_secret_env },
	{ "accelerator",	spec_check_accelerator },
	{ "machine_type",	spec_check_machine_type },
	{ "nodes",		spec_check_nodes },
	{ "regions",		spec_check_regions },
	{ "providers",		spec_check_providers },
	{ "spot",		spec_check_spot },
	{ "max_hourly_usd",	spec_check_max_hourly },
	{ "max_total_usd",	spec_check_max_total },
	{ "estimated_hours",	spec_check_hours },
	{ "deadline",		spec_check_deadline },
	{ "max_runtime",	spec_check_runtime },
	{ "pending_timeout",	spec_check_pending_timeout },
	{ "capacity",		spec_check_capacity },
	{ "flex_wait",		spec_check_flex_wait },
	{ "max_interruptions",	spec_check_interruptions },
	{ "max_failures",	spec_check_failures },
	{ "checkpoint",		spec_check_checkpoint },
	{ "priority",		spec_check_priority },
	{ "labels",		spec_check_labels },
	{ "notify",		spec_check_notify },
	{ "array",		spec_check_array },
	{ "after",		spec_check_after },
	{ "after_any",		spec_check_after_any },
	{ "disk",		spec_check_disk },
};

int
spec_validate(json_t *job, json_t **ret, struct spec_error *err)
{
	struct spec_ctx	c;
	int		r;

	memset(&c, 0, sizeof c);
	c.err = err;
	c.in = job;
	if (!json_is_object(job))
		return spec_fail(&c, "", "a job spec must be an object "
		    "(a YAML mapping) of fields, not %s",
		    job == NULL ? "nothing" : spec_type_name(job));
	if ((c.out = json_object()) == NULL)
		fatalx("spec: out of memory");
	r = spec_check_fields(&c, "", job, spec_fields,
	    sizeof spec_fields / sizeof spec_fields[0]);
	if (r != 0) {
		json_decref(c.out);
		return r;
	}
	*ret = c.out;
	return 0;
}

void
spec_error_done(struct spec_error *err)
{
	if (err == NULL)
		return;
	free(err->field);
	free(err->message);
	err->field = NULL;
	err->message = NULL;
}

void
spec_catalog_set(const char *const *names, size_t n)
{
	size_t	i, k = 0;

	spec_catalog_clear();
	if (n == 0)
		return;
	spec_catalog.v = xreallocarray(NULL, n, sizeof *spec_catalog.v);
	for (i = 0; i < n; i++)
		spec_catalog.v[i] = xstrdup(names[i]);
	qsort(spec_catalog.v, n, sizeof *spec_catalog.v, spec_str_cmp);
	/* Once each. */
	for (i = 0; i < n; i++) {
		if (k > 0 && strcmp(spec_catalog.v[k - 1],
		    spec_catalog.v[i]) == 0)
			free(spec_catalog.v[i]);
		else
			spec_catalog.v[k++] = spec_catalog.v[i];
	}
	spec_catalog.n = k;
}

void
spec_catalog_clear(void)
{
	size_t	i;

	for (i = 0; i < spec_catalog.n; i++)
		free(spec_catalog.v[i]);
	free(spec_catalog.v);
	spec_catalog.v = NULL;
	spec_catalog.n = 0;
}

size_t
spec_catalog_size(void)
{
	return spec_catalog.n;
}

/* The FIELD-th comma-separated field of LINE into BUF; 0 or -1. */
static int
spec_csv_field(const char *line, int field, char *buf, size_t len)
{
	const char	*p = line, *e;
	int		 i;

	for (i = 0; i < field; i++) {
		if ((p = strchr(p, ',')) == NULL)
			return -1;
		p++;
	}
	e = p + strcspn(p, ",\r\n");
	if ((size_t)(e - p) >= len)
		return -1;
	memcpy(buf, p, (size_t)(e - p));
	buf[e - p] = '\0';
	return 0;
}

int
spec_catalog_load(const char *path, char **cause)
{
	FILE		*f;
	char		 line[1024], name[SPEC_REGION_MAX + 1];
	char		**v = NULL;
	size_t		 n = 0, cap = 0;
	int		 col = -1, i, err;

	if ((f = fopen(path, "r")) == NULL) {
		err = errno;
		if (cause != NULL)
			*cause = xprintf("cannot read the region catalog "
			    "%s: %s", path, strerror(err));
		return -err;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (col < 0) {
			/* The header: which field is "region". */
			for (i = 0; spec_csv_field(line, i, name,
			    sizeof name) == 0; i++)
				if (strcmp(name, "region") == 0) {
					col = i;
					break;
				}
			if (col < 0)
				break;
			continue;
		}
		if (spec_csv_field(line, col, name, sizeof name) != 0 ||
		    !spec_region_ok(name))
			continue;
		if (n > 0 && strcmp(v[n - 1], name) == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n++] = xstrdup(name);
	}
	(void)fclose(f);
	if (col < 0 || n == 0) {
		while (n > 0)
			free(v[--n]);
		free(v);
		if (cause != NULL)
			*cause = xprintf("%s: no \"region\" column with "
			    "region names", path);
		return -EINVAL;
	}
	spec_catalog_set((const char *const *)v, n);
	while (n > 0)
		free(v[--n]);
	free(v);
	return 0;
}

char *
spec_region_check(const char *name)
{
	char	*q, *m;

	if (spec_region_known(name))
		return NULL;
	q = spec_clean(name);
	m = spec_region_bad(name, q);
	free(q);
	return m;
}

int
spec_site_check(json_t *norm, const struct spec_site *site,
    json_t **ret_warnings, struct spec_error *err)
{
	struct spec_ctx	 c;
	const char	*spot, *uri;
	json_t		*w;

	memset(&c, 0, sizeof c);
	c.err = err;
	spot = json_string_value(json_object_get(norm, "spot"));
	uri = json_string_value(json_object_get(json_object_get(norm,
	    "checkpoint"), "uri"));
	if ((w = json_array()) == NULL)
		fatalx("spec: out of memory");
	if (spot != NULL && strcmp(spot, "never") != 0 &&
	    (uri == NULL || *uri == '\0') &&
	    (site->checkpoint_root == NULL || *site->checkpoint_root == '\0')) {
		if (site->spot_requires_checkpoint) {
			json_decref(w);
			return spec_fail(&c, "checkpoint.uri", "the job may "
			    "run on Spot (spot: %s) and has no checkpoint "
			    "place, which gpuqd.conf requires ([gcp] "
			    "spot_requires_checkpoint): set checkpoint.uri "
			    "to a gs:// place, or spot: never", spot);
		}
		if (json_array_append_new(w, json_sprintf("spot: %s but no "
		    "checkpoint place (no checkpoint.uri, and gpuqd.conf has "
		    "no [gcp] checkpoint_root): after a preemption the job "
		    "starts again from zero; set checkpoint.uri, or spot: "
		    "never", spot)) != 0)
			fatalx("spec: out of memory");
	}
	*ret_warnings = w;
	return 0;
}
