/*
 * convert.c: the job files people already have, turned into gpuq jobs
 * (gpuq submit --from vertex|batch, doc/DESIGN.md "Job files from
 * Vertex AI and Cloud Batch").
 *
 * Three shapes are read:
 *   vertex  what `gcloud ai custom-jobs create --config` takes: a
 *           CustomJobSpec (workerPoolSpecs at the top) or a whole
 *           CustomJob (displayName, jobSpec, labels), keys in camelCase
 *           or snake_case as gcloud accepts them; and the legacy AI
 *           Platform Job or its trainingInput.
 *   batch   a Cloud Batch Job (taskGroups, allocationPolicy, ...).
 * Field names are Google's (aiplatform.v1 and batch.v1 discovery
 * documents; ml.v1 for trainingInput).
 *
 * Every key of the file is either used, or refused with an error that
 * names its path (workerPoolSpecs[1].machineSpec.acceleratorType) and
 * says what to do, or, when gpuq does the same thing by itself,
 * accepted with a note saying so. Nothing is dropped without a word.
 * What a valid gpuq job is stays the daemon's to judge (daemon/spec.c):
 * values are passed on as they are and gpuqd checks them on submit.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/gpu.h"
#include "common/log.h"
#include "common/xmalloc.h"

#define CONVERT_NAME_MAX	63	/* gpuq-job(5) name */

/* What happens to a key of the file. */
enum cv_how {
	CV_USE,		/* read by the converter */
	CV_REFUSE,	/* an error unless its value is empty or false */
	CV_NOTE,	/* gpuq does this itself: accepted with a note */
};

struct cv_key {
	const char	*name;		/* Google's camelCase name */
	enum cv_how	 how;
	const char	*why;		/* refused, noted: what to do */
};

/* One conversion. */
struct cv {
	json_t		*job;		/* the gpuq job built */
	json_t		*notes;		/* strings */
	char		*cause;		/* the first error */
};

/* Fail with "PATH: message"; always -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
cv_fail(struct cv *c, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	*m;

	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	if (c->cause == NULL)
		c->cause = xprintf("%s: %s", path, m);
	free(m);
	return -EINVAL;
}

static void __attribute__((format(printf, 3, 4)))
cv_note(struct cv *c, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	*m;

	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	if (json_array_append_new(c->notes, json_sprintf("%s: %s", path,
	    m)) != 0)
		fatalx("out of memory");
	free(m);
}

static void
cv_put(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(obj, key, v) != 0)
		fatalx("out of memory");
}

/* "worker_pool_specs" -> "workerPoolSpecs". New string. */
static char *
cv_camel(const char *key)
{
	char	*t = xstrdup(key), *w = t;
	int	 up = 0;

	for (; *key != '\0'; key++) {
		if (*key == '_' && w != t) {
			up = 1;
			continue;
		}
		*w++ = up ? (char)toupper((unsigned char)*key) : *key;
		up = 0;
	}
	*w = '\0';
	return t;
}

/* Is V nothing: null, false, 0, "", [] or {}? */
static int
cv_empty(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_FALSE:
		return 1;
	case JSON_STRING:
		return json_string_length(v) == 0;
	case JSON_INTEGER:
		return json_integer_value(v) == 0;
	case JSON_OBJECT:
		return json_object_size(v) == 0;
	case JSON_ARRAY:
		return json_array_size(v) == 0;
	default:
		return 0;
	}
}

static const char *
cv_type(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
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
 * The keys of OBJ (at PATH) under their camelCase names, checked
 * against KEYS: an unknown key, a key given in both spellings and a
 * refused key with a value are errors; noted keys are noted. *RET gets
 * a new object holding the CV_USE values (borrowed references).
 */
static int
cv_fields(struct cv *c, const char *path, json_t *obj,
    const struct cv_key *keys, json_t **ret)
{
	const struct cv_key	*k;
	const char		*key;
	json_t			*v, *out;
	char			*camel, *p;
	int			 r = 0;

	if (!json_is_object(obj))
		return cv_fail(c, path, "must be a mapping, not %s",
		    cv_type(obj));
	if ((out = json_object()) == NULL)
		fatalx("out of memory");
	json_object_foreach(obj, key, v) {
		camel = cv_camel(key);
		p = *path == '\0' ? xstrdup(camel) :
		    xprintf("%s.%s", path, camel);
		for (k = keys; k->name != NULL; k++)
			if (strcmp(k->name, camel) == 0)
				break;
		if (k->name == NULL)
			r = cv_fail(c, p, "not a field gpuq knows here; check "
			    "its spelling against Google's reference");
		else if (json_object_get(out, camel) != NULL ||
		    (k->how != CV_USE && strcmp(key, camel) != 0 &&
		    json_object_get(obj, camel) != NULL))
			r = cv_fail(c, p, "given twice (in camelCase and "
			    "snake_case); keep one");
		else if (k->how == CV_REFUSE && !cv_empty(v))
			r = cv_fail(c, p, "gpuq cannot honour this: %s",
			    k->why);
		else if (k->how == CV_NOTE && !json_is_null(v))
			cv_note(c, p, "%s", k->why);
		else if (k->how == CV_USE && json_object_set(out, camel,
		    v) != 0)
			fatalx("out of memory");
		free(p);
		free(camel);
		if (r != 0) {
			json_decref(out);
			return r;
		}
	}
	*ret = out;
	return 0;
}

/* A string member, or NULL; an error when it is there but no string. */
static int
cv_str(struct cv *c, const char *path, json_t *obj, const char *key,
    const char **ret)
{
	json_t	*v = json_object_get(obj, key);

	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return cv_fail(c, path, "%s must be a string, not %s", key,
		    cv_type(v));
	*ret = json_string_value(v);
	return 0;
}

/*
 * An integer member: a number, or a string of digits (Google writes
 * int64 fields as strings). DEF when absent.
 */
static int
cv_int(struct cv *c, const char *path, json_t *v, long long def,
    long long *ret)
{
	const char	*s, *p;

	*ret = def;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		*ret = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		s = json_string_value(v);
		for (p = s; *p != '\0' && isdigit((unsigned char)*p); p++)
			;
		if (*s != '\0' && *p == '\0' && p - s < 18) {
			*ret = strtoll(s, NULL, 10);
			return 0;
		}
	}
	return cv_fail(c, path, "must be a whole number");
}

/* A list of strings (borrowed), or NULL. */
static int
cv_strings(struct cv *c, const char *path, json_t *v, json_t **ret)
{
	json_t	*e;
	size_t	 i;
	char	*p;
	int	 r;

	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return cv_fail(c, path, "must be a list of strings, not %s",
		    cv_type(v));
	json_array_foreach(v, i, e) {
		if (json_is_string(e))
			continue;
		p = xprintf("%s[%zu]", path, i);
		r = cv_fail(c, p, "must be a string, not %s", cv_type(e));
		free(p);
		return r;
	}
	*ret = v;
	return 0;
}

/*
 * A Google Duration ("3600s", "1.5s") as gpuq's whole seconds; a
 * fraction is refused, since gpuq counts whole seconds.
 */
static int
cv_duration(struct cv *c, const char *path, json_t *v, long long *ret)
{
	const char	*s, *p;
	long long	 n = 0;

	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*ret = json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return cv_fail(c, path, "must be a duration such as \"3600s\"");
	s = json_string_value(v);
	for (p = s; isdigit((unsigned char)*p) && n < 100000000000LL; p++)
		n = n * 10 + (*p - '0');
	if (p == s || (*p != 's' && *p != '\0') || (*p == 's' && p[1] != '\0'))
		return cv_fail(c, path, "\"%s\" is not a duration in whole "
		    "seconds such as \"3600s\"", s);
	*ret = n;
	return 0;
}

/* The GPU named S (either Google spelling) as gpuq stores it. */
static int
cv_gpu(struct cv *c, const char *path, const char *s, const char **ret)
{
	const struct gpu_type	*g;
	char			*names;
	int			 r;

	if ((g = gpu_lookup(s)) != NULL) {
		*ret = g->name;
		return 0;
	}
	names = gpu_names_text();
	r = cv_fail(c, path, "\"%s\" is not a GPU gpuq can run on; use one "
	    "of %s", s, names);
	free(names);
	return r;
}

/* accelerator: {type, count} into the job. */
static int
cv_accelerator(struct cv *c, const char *tpath, const char *type,
    long long count)
{
	const char	*name = NULL;
	int		 r;

	if (type == NULL)
		return cv_fail(c, tpath, "missing: gpuq runs GPU jobs; give "
		    "the GPU type and count");
	if ((r = cv_gpu(c, tpath, type, &name)) != 0)
		return r;
	cv_put(c->job, "accelerator", json_pack("{s:s, s:I}", "type", name,
	    "count", (json_int_t)count));
	return 0;
}

/*
 * A gpuq job name from a display name: gpuq names are 1 to 63 of
 * letters, digits, '.', '_' and '-', so other characters become '-'.
 */
static void
cv_name(struct cv *c, const char *s)
{
	char	*t;
	size_t	 i, n;

	n = strlen(s);
	if (n == 0)
		return;
	if (n > CONVERT_NAME_MAX)
		n = CONVERT_NAME_MAX;
	t = xstrndup(s, n);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && strchr("._-", t[i]) ==
		    NULL)
			t[i] = '-';
	cv_put(c->job, "name", json_string(t));
	free(t);
}

/* labels: a mapping of strings, as both services and gpuq take them. */
static int
cv_labels(struct cv *c, const char *path, json_t *v)
{
	const char	*k;
	json_t		*e;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return cv_fail(c, path, "must be a mapping of strings");
	json_object_foreach(v, k, e)
		if (!json_is_string(e))
			return cv_fail(c, path, "%s must be a string", k);
	if (json_object_size(v) > 0)
		cv_put(c->job, "labels", json_deep_copy(v));
	return 0;
}

/*
 * Vertex AI ----------------------------------------------------------
 */

static const struct cv_key cv_custom_job_keys[] = {
	{ "displayName", CV_USE, NULL },
	{ "jobSpec", CV_USE, NULL },
	{ "labels", CV_USE, NULL },
	{ "encryptionSpec", CV_REFUSE, "customer-managed keys are set for "
	  "every job in gpuqd.conf ([gcp] kms_key); remove it" },
	/* What `gcloud ai custom-jobs describe` adds to a job. */
	{ "name", CV_NOTE, "output only; ignored" },
	{ "state", CV_NOTE, "output only; ignored" },
	{ "error", CV_NOTE, "output only; ignored" },
	{ "createTime", CV_NOTE, "output only; ignored" },
	{ "startTime", CV_NOTE, "output only; ignored" },
	{ "endTime", CV_NOTE, "output only; ignored" },
	{ "updateTime", CV_NOTE, "output only; ignored" },
	{ "webAccessUris", CV_NOTE, "output only; ignored" },
	{ "satisfiesPzi", CV_NOTE, "output only; ignored" },
	{ "satisfiesPzs", CV_NOTE, "output only; ignored" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_job_spec_keys[] = {
	{ "workerPoolSpecs", CV_USE, NULL },
	{ "scheduling", CV_USE, NULL },
	{ "baseOutputDirectory", CV_USE, NULL },
	{ "serviceAccount", CV_REFUSE, "gpuq runs every job as gpuqd.conf's "
	  "[gcp] job_service_account; remove it and set that" },
	{ "network", CV_REFUSE, "gpuq takes the network from gpuqd.conf "
	  "([gcp] network); remove it and set that" },
	{ "reservedIpRanges", CV_REFUSE, "remove it" },
	{ "pscInterfaceConfig", CV_REFUSE, "gpuq takes the network from "
	  "gpuqd.conf; remove it" },
	{ "enableWebAccess", CV_REFUSE, "interactive shells are not offered "
	  "on every service gpuq uses; remove it" },
	{ "enableDashboardAccess", CV_REFUSE, "remove it" },
	{ "tensorboard", CV_REFUSE, "write TensorBoard logs under "
	  "$GPUQ_CHECKPOINT_DIR or $AIP_TENSORBOARD_LOG_DIR; remove it" },
	{ "experiment", CV_REFUSE, "Vertex AI Experiments are Vertex-only; "
	  "remove it" },
	{ "experimentRun", CV_REFUSE, "remove it" },
	{ "models", CV_REFUSE, "remove it" },
	{ "persistentResourceId", CV_REFUSE, "gpuq places the job itself; "
	  "remove it" },
	{ "protectedArtifactLocationId", CV_REFUSE, "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_pool_keys[] = {
	{ "machineSpec", CV_USE, NULL },
	{ "replicaCount", CV_USE, NULL },
	{ "containerSpec", CV_USE, NULL },
	{ "pythonPackageSpec", CV_USE, NULL },
	{ "diskSpec", CV_USE, NULL },
	{ "nfsMounts", CV_REFUSE, "NFS mounts are Vertex-only; read the "
	  "data from Cloud Storage instead" },
	{ "lustreMounts", CV_REFUSE, "Lustre mounts are Vertex-only; read "
	  "the data from Cloud Storage instead" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_machine_keys[] = {
	{ "machineType", CV_USE, NULL },
	{ "acceleratorType", CV_USE, NULL },
	{ "acceleratorCount", CV_USE, NULL },
	{ "gpuPartitionSize", CV_REFUSE, "gpuq runs whole GPUs; remove it" },
	{ "tpuTopology", CV_REFUSE, "gpuq runs GPU jobs, not TPU ones" },
	{ "reservationAffinity", CV_REFUSE, "gpuq does not use reservations "
	  "yet; remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_container_keys[] = {
	{ "imageUri", CV_USE, NULL },
	{ "command", CV_USE, NULL },
	{ "args", CV_USE, NULL },
	{ "env", CV_USE, NULL },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_package_keys[] = {
	{ "executorImageUri", CV_USE, NULL },
	{ "packageUris", CV_USE, NULL },
	{ "pythonModule", CV_USE, NULL },
	{ "args", CV_USE, NULL },
	{ "env", CV_USE, NULL },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_disk_keys[] = {
	{ "bootDiskType", CV_USE, NULL },
	{ "bootDiskSizeGb", CV_USE, NULL },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_scheduling_keys[] = {
	{ "timeout", CV_USE, NULL },
	{ "strategy", CV_USE, NULL },
	{ "restartJobOnWorkerRestart", CV_NOTE, "gpuq sets it itself: when "
	  "any node of a job fails, gpuq ends and relaunches the whole "
	  "attempt" },
	{ "disableRetries", CV_NOTE, "gpuq sets it itself: gpuq's own "
	  "max_failures and max_interruptions decide retries" },
	{ "maxWaitDuration", CV_REFUSE, "it applies to FLEX_START, which "
	  "gpuq does not use; remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_output_keys[] = {
	{ "outputUriPrefix", CV_USE, NULL },
	{ NULL, 0, NULL }
};

/* E as {name, value} with string parts: the name, *VAL the value. */
static const char *
cv_is_pair(json_t *e, const char **val)
{
	json_t	*n, *v;

	if (!json_is_object(e) || json_object_size(e) > 2)
		return NULL;
	n = json_object_get(e, "name");
	v = json_object_get(e, "value");
	if (!json_is_string(n) || (v != NULL && !json_is_string(v)) ||
	    json_object_size(e) != (v != NULL ? 2U : 1U))
		return NULL;
	*val = v != NULL ? json_string_value(v) : "";
	return json_string_value(n);
}

/* Vertex env: [{name, value}] into a mapping (new), or an error. */
static int
cv_vertex_env(struct cv *c, const char *path, json_t *v, json_t **ret)
{
	json_t		*out, *e;
	const char	*name, *val;
	size_t		 i;
	char		*p;
	int		 r = 0;

	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return cv_fail(c, path, "must be a list of {name, value}");
	if ((out = json_object()) == NULL)
		fatalx("out of memory");
	json_array_foreach(v, i, e) {
		p = xprintf("%s[%zu]", path, i);
		name = cv_is_pair(e, &val);
		if (name == NULL)
			r = cv_fail(c, p, "must be {name: NAME, value: "
			    "string}");
		else if (strstr(val, "$(") != NULL)
			r = cv_fail(c, p, "\"$(\" asks Vertex AI to expand a "
			    "variable, which other services do not do; write "
			    "the value itself");
		else if (json_object_get(out, name) != NULL)
			r = cv_fail(c, p, "%s is set twice", name);
		else
			cv_put(out, name, json_string(val));
		free(p);
		if (r != 0) {
			json_decref(out);
			return r;
		}
	}
	*ret = out;
	return 0;
}

/* Add the variables of ENV (a mapping, taken) to the job's env. */
static int
cv_env_add(struct cv *c, const char *path, json_t *env)
{
	json_t		*have, *v;
	const char	*k;
	int		 r = 0;

	if (env == NULL)
		return 0;
	if ((have = json_object_get(c->job, "env")) == NULL) {
		if (json_object_size(env) > 0)
			cv_put(c->job, "env", json_incref(env));
		json_decref(env);
		return 0;
	}
	json_object_foreach(env, k, v) {
		if (json_object_get(have, k) != NULL &&
		    !json_equal(json_object_get(have, k), v)) {
			r = cv_fail(c, path, "%s is given twice with different "
			    "values; keep one", k);
			break;
		}
		cv_put(have, k, json_incref(v));
	}
	json_decref(env);
	return r;
}

/* containerSpec: image, command, args, env. */
static int
cv_vertex_container(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *cmd, *args, *env;
	const char	*image;
	char		*p;
	int		 r;

	if ((r = cv_fields(c, path, v, cv_container_keys, &f)) != 0)
		return r;
	p = xprintf("%s.imageUri", path);
	if ((r = cv_str(c, path, f, "imageUri", &image)) == 0 && image == NULL)
		r = cv_fail(c, p, "missing: the container image to run");
	free(p);
	if (r == 0) {
		cv_put(c->job, "image", json_string(image));
		p = xprintf("%s.command", path);
		r = cv_strings(c, p, json_object_get(f, "command"), &cmd);
		free(p);
	}
	if (r == 0) {
		if (cmd != NULL && json_array_size(cmd) > 0)
			cv_put(c->job, "command", json_deep_copy(cmd));
		p = xprintf("%s.args", path);
		r = cv_strings(c, p, json_object_get(f, "args"), &args);
		free(p);
	}
	if (r == 0) {
		if (args != NULL)
			cv_put(c->job, "args", json_deep_copy(args));
		p = xprintf("%s.env", path);
		if ((r = cv_vertex_env(c, p, json_object_get(f, "env"),
		    &env)) == 0)
			r = cv_env_add(c, p, env);
		free(p);
	}
	json_decref(f);
	return r;
}

/*
 * python_package from Vertex's pythonPackageSpec or AI Platform's
 * packageUris/pythonModule: the same four things under gpuq's names.
 */
static void
cv_python_package(struct cv *c, const char *image, json_t *uris,
    const char *module, json_t *args)
{
	json_t	*pp;

	pp = json_pack("{s:s, s:O, s:s}", "executor_image", image,
	    "package_uris", uris, "module", module);
	if (pp == NULL)
		fatalx("out of memory");
	if (args != NULL && json_array_size(args) > 0)
		cv_put(pp, "args", json_deep_copy(args));
	cv_put(c->job, "python_package", pp);
}

/* pythonPackageSpec: python_package and env. */
static int
cv_vertex_package(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *uris = NULL, *args = NULL, *env;
	const char	*image = NULL, *module = NULL;
	char		*p = NULL;
	int		 r;

	if ((r = cv_fields(c, path, v, cv_package_keys, &f)) != 0)
		return r;
	if ((r = cv_str(c, path, f, "executorImageUri", &image)) == 0 &&
	    image == NULL)
		r = cv_fail(c, (p = xprintf("%s.executorImageUri", path)),
		    "missing: the image that runs the package, e.g. one of "
		    "Vertex AI's prebuilt training containers");
	free(p);
	p = xprintf("%s.packageUris", path);
	if (r == 0 && (r = cv_strings(c, p, json_object_get(f,
	    "packageUris"), &uris)) == 0 && json_array_size(uris) == 0)
		r = cv_fail(c, p, "missing: the gs:// URIs of the package "
		    "files");
	free(p);
	p = xprintf("%s.pythonModule", path);
	if (r == 0 && (r = cv_str(c, path, f, "pythonModule", &module)) ==
	    0 && module == NULL)
		r = cv_fail(c, p, "missing: the module to run, e.g. "
		    "trainer.task");
	free(p);
	p = xprintf("%s.args", path);
	if (r == 0)
		r = cv_strings(c, p, json_object_get(f, "args"), &args);
	free(p);
	if (r == 0) {
		cv_python_package(c, image, uris, module, args);
		p = xprintf("%s.env", path);
		if ((r = cv_vertex_env(c, p, json_object_get(f, "env"),
		    &env)) == 0)
			r = cv_env_add(c, p, env);
		free(p);
	}
	json_decref(f);
	return r;
}

/* machineSpec: machine_type and accelerator. */
static int
cv_vertex_machine(struct cv *c, const char *path, json_t *v)
{
	json_t		*f;
	const char	*mt = NULL, *type = NULL;
	long long	 count = 1;
	char		*p;
	int		 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: the machine and its GPUs");
	if ((r = cv_fields(c, path, v, cv_machine_keys, &f)) != 0)
		return r;
	if ((r = cv_str(c, path, f, "machineType", &mt)) == 0 &&
	    (r = cv_str(c, path, f, "acceleratorType", &type)) == 0) {
		p = xprintf("%s.acceleratorCount", path);
		r = cv_int(c, p, json_object_get(f, "acceleratorCount"), 1,
		    &count);
		free(p);
	}
	if (r == 0) {
		p = xprintf("%s.acceleratorType", path);
		r = cv_accelerator(c, p, type, count);
		free(p);
	}
	if (r == 0 && mt != NULL)
		cv_put(c->job, "machine_type", json_string(mt));
	json_decref(f);
	return r;
}

/* PATH.NAME (new string). */
static char *
cv_path(const char *path, const char *name)
{
	return *path == '\0' ? xstrdup(name) : xprintf("%s.%s", path, name);
}

/*
 * A boot disk object at PATH (fields KEYS; its type in TYPE_KEY, its
 * size in GB in SIZE_KEY): the job's disk {size_gb, type}.
 */
static int
cv_disk(struct cv *c, const char *path, json_t *v, const struct cv_key *keys,
    const char *type_key, const char *size_key)
{
	json_t		*f, *disk;
	const char	*type = NULL;
	long long	 gb = 0;
	char		*p;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, keys, &f)) != 0)
		return r;
	p = cv_path(path, size_key);
	if ((r = cv_str(c, path, f, type_key, &type)) == 0)
		r = cv_int(c, p, json_object_get(f, size_key), 0, &gb);
	free(p);
	if (r == 0 && (gb > 0 || type != NULL)) {
		if ((disk = json_object()) == NULL)
			fatalx("out of memory");
		if (gb > 0)
			cv_put(disk, "size_gb", json_integer(gb));
		if (type != NULL)
			cv_put(disk, "type", json_string(type));
		cv_put(c->job, "disk", disk);
	}
	json_decref(f);
	return r;
}

/* diskSpec: disk {size_gb, type}. */
static int
cv_vertex_disk(struct cv *c, const char *path, json_t *v)
{
	return cv_disk(c, path, v, cv_disk_keys, "bootDiskType",
	    "bootDiskSizeGb");
}

/*
 * One worker pool as a gpuq job of its own (new in *RET), and its
 * replicaCount. An empty pool ({}), which Vertex AI takes as "no pool
 * here", gives a NULL job.
 */
static int
cv_vertex_pool(struct cv *c, const char *path, json_t *v, json_t **ret,
    long long *replicas)
{
	json_t	*f, *saved = c->job, *cs, *ps;
	char	*p;
	int	 r;

	*ret = NULL;
	*replicas = 0;
	if (json_is_object(v) && json_object_size(v) == 0)
		return 0;
	if ((r = cv_fields(c, path, v, cv_pool_keys, &f)) != 0)
		return r;
	if ((c->job = json_object()) == NULL)
		fatalx("out of memory");
	p = xprintf("%s.replicaCount", path);
	r = cv_int(c, p, json_object_get(f, "replicaCount"), 1, replicas);
	free(p);
	cs = json_object_get(f, "containerSpec");
	ps = json_object_get(f, "pythonPackageSpec");
	if (r == 0 && (cs == NULL) == (ps == NULL))
		r = cv_fail(c, path, "give exactly one of containerSpec and "
		    "pythonPackageSpec");
	p = xprintf("%s.%s", path, cs != NULL ? "containerSpec" :
	    "pythonPackageSpec");
	if (r == 0)
		r = cs != NULL ? cv_vertex_container(c, p, cs) :
		    cv_vertex_package(c, p, ps);
	free(p);
	p = xprintf("%s.machineSpec", path);
	if (r == 0)
		r = cv_vertex_machine(c, p, json_object_get(f, "machineSpec"));
	free(p);
	p = xprintf("%s.diskSpec", path);
	if (r == 0)
		r = cv_vertex_disk(c, p, json_object_get(f, "diskSpec"));
	free(p);
	json_decref(f);
	if (r == 0)
		*ret = c->job;
	else
		json_decref(c->job);
	c->job = saved;
	return r;
}

/* Where a gpuq key of a pool's job came from, for messages. */
static const char *
cv_vertex_origin(const char *key)
{
	static const struct {
		const char	*key, *origin;
	} m[] = {
		{ "image", "containerSpec.imageUri" },
		{ "command", "containerSpec.command" },
		{ "args", "containerSpec.args" },
		{ "env", "containerSpec.env" },
		{ "python_package", "pythonPackageSpec" },
		{ "accelerator", "machineSpec.acceleratorType" },
		{ "machine_type", "machineSpec.machineType" },
		{ "disk", "diskSpec" },
	};
	size_t	i;

	for (i = 0; i < sizeof m / sizeof m[0]; i++)
		if (strcmp(m[i].key, key) == 0)
			return m[i].origin;
	return key;
}

/*
 * Pool 1 must be pool 0 again: gpuq's nodes are alike (same machine,
 * GPUs and code). Names the first field that differs.
 */
static int
cv_vertex_alike(struct cv *c, const char *path, json_t *chief,
    json_t *worker)
{
	const char	*k;
	json_t		*v;
	char		*p;
	int		 r;

	json_object_foreach(chief, k, v)
		if (!json_equal(v, json_object_get(worker, k)))
			goto differ;
	json_object_foreach(worker, k, v)
		if (json_object_get(chief, k) == NULL)
			goto differ;
	return 0;
differ:
	p = xprintf("%s.%s", path, cv_vertex_origin(k));
	r = cv_fail(c, p, "differs from workerPoolSpecs[0]: gpuq runs every "
	    "node of a job on the same machine, GPUs and code; make the pools "
	    "alike, or submit them as separate jobs");
	free(p);
	return r;
}

/* workerPoolSpecs: pool 0 the chief, pool 1 more nodes like it. */
static int
cv_vertex_pools(struct cv *c, const char *path, json_t *pools)
{
	json_t		*chief = NULL, *worker = NULL, *v;
	long long	 n0 = 0, n1 = 0, n;
	const char	*k;
	size_t		 i;
	char		*p;
	int		 r = 0;

	if (!json_is_array(pools) || json_array_size(pools) == 0)
		return cv_fail(c, path, "must be a list of worker pools, the "
		    "first one the chief");
	for (i = 0; i < json_array_size(pools) && r == 0; i++) {
		p = xprintf("%s[%zu]", path, i);
		if (i == 0)
			r = cv_vertex_pool(c, p, json_array_get(pools, 0),
			    &chief, &n0);
		else if (i == 1)
			r = cv_vertex_pool(c, p, json_array_get(pools, 1),
			    &worker, &n1);
		else {
			r = cv_vertex_pool(c, p, json_array_get(pools, i),
			    &v, &n);
			if (r == 0 && v != NULL && n > 0)
				r = cv_fail(c, p, "parameter servers and "
				    "evaluators (pools 2 and 3) are not "
				    "offered by gpuq; run them as jobs of "
				    "their own");
			json_decref(v);
		}
		if (r == 0 && i == 0 && (chief == NULL || n0 != 1))
			r = cv_fail(c, p, "the first pool is the chief and "
			    "has replicaCount 1, as Vertex AI requires");
		free(p);
	}
	if (r == 0 && worker != NULL && n1 > 0) {
		p = xprintf("%s[1]", path);
		r = cv_vertex_alike(c, p, chief, worker);
		free(p);
	}
	if (r == 0) {
		json_object_foreach(chief, k, v)
			cv_put(c->job, k, json_incref(v));
		if (worker != NULL && n1 > 0)
			cv_put(c->job, "nodes", json_integer(1 + n1));
	}
	json_decref(chief);
	json_decref(worker);
	return r;
}

/* scheduling: max_runtime and spot. */
static int
cv_vertex_scheduling(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *t;
	const char	*s = NULL;
	long long	 sec;
	char		*p;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, cv_scheduling_keys, &f)) != 0)
		return r;
	p = xprintf("%s.timeout", path);
	if ((t = json_object_get(f, "timeout")) != NULL &&
	    (r = cv_duration(c, p, t, &sec)) == 0)
		cv_put(c->job, "max_runtime", json_integer(sec));
	free(p);
	p = xprintf("%s.strategy", path);
	if (r == 0 && (r = cv_str(c, p, f, "strategy", &s)) == 0 &&
	    s != NULL) {
		if (strcmp(s, "SPOT") == 0)
			cv_put(c->job, "spot", json_string("require"));
		else if (strcmp(s, "STANDARD") == 0 ||
		    strcmp(s, "ON_DEMAND") == 0)
			cv_put(c->job, "spot", json_string("never"));
		else if (strcmp(s, "FLEX_START") == 0)
			cv_put(c->job, "capacity", json_pack("[s]", "flex"));
		else if (strcmp(s, "STRATEGY_UNSPECIFIED") != 0)
			r = cv_fail(c, p, "\"%s\" is not offered by gpuq; use "
			    "SPOT, FLEX_START or STANDARD, or leave it out to "
			    "let gpuq choose", s);
	}
	free(p);
	json_decref(f);
	return r;
}

/* baseOutputDirectory: checkpoint.uri, which Vertex AI's AIP_* follow. */
static int
cv_output(struct cv *c, const char *path, json_t *v)
{
	json_t		*f;
	const char	*s = NULL;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, cv_output_keys, &f)) != 0)
		return r;
	if ((r = cv_str(c, path, f, "outputUriPrefix", &s)) == 0 && s != NULL)
		cv_put(c->job, "checkpoint", json_pack("{s:s}", "uri", s));
	json_decref(f);
	return r;
}

/* Run FN over member NAME of F, with its path. */
static int
cv_sub(struct cv *c, const char *path, json_t *f, const char *name,
    int (*fn)(struct cv *, const char *, json_t *))
{
	char	*p = cv_path(path, name);
	int	 r;

	r = fn(c, p, json_object_get(f, name));
	free(p);
	return r;
}

/* A CustomJobSpec at PATH. */
static int
cv_vertex_spec(struct cv *c, const char *path, json_t *spec)
{
	json_t	*f;
	char	*p;
	int	 r;

	if ((r = cv_fields(c, path, spec, cv_job_spec_keys, &f)) != 0)
		return r;
	if (json_object_get(f, "workerPoolSpecs") == NULL) {
		p = cv_path(path, "workerPoolSpecs");
		r = cv_fail(c, p, "missing: the worker pools to run");
		free(p);
	} else
		r = cv_sub(c, path, f, "workerPoolSpecs", cv_vertex_pools);
	if (r == 0)
		r = cv_sub(c, path, f, "scheduling", cv_vertex_scheduling);
	if (r == 0)
		r = cv_sub(c, path, f, "baseOutputDirectory", cv_output);
	json_decref(f);
	return r;
}

/*
 * The legacy AI Platform Training form (ml.googleapis.com v1 Job and
 * its TrainingInput), which many teams' files still use.
 */

static const struct cv_key cv_ml_job_keys[] = {
	{ "jobId", CV_USE, NULL },
	{ "trainingInput", CV_USE, NULL },
	{ "labels", CV_USE, NULL },
	{ "predictionInput", CV_REFUSE, "gpuq runs training jobs only" },
	{ "etag", CV_NOTE, "an AI Platform version mark; gpuq has no use for "
	  "it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_ml_input_keys[] = {
	{ "scaleTier", CV_USE, NULL },
	{ "masterType", CV_USE, NULL },
	{ "masterConfig", CV_USE, NULL },
	{ "workerType", CV_USE, NULL },
	{ "workerCount", CV_USE, NULL },
	{ "workerConfig", CV_USE, NULL },
	{ "packageUris", CV_USE, NULL },
	{ "pythonModule", CV_USE, NULL },
	{ "args", CV_USE, NULL },
	{ "region", CV_USE, NULL },
	{ "jobDir", CV_USE, NULL },
	{ "scheduling", CV_USE, NULL },
	{ "parameterServerType", CV_REFUSE, "parameter servers are not "
	  "offered by gpuq" },
	{ "parameterServerCount", CV_REFUSE, "parameter servers are not "
	  "offered by gpuq" },
	{ "parameterServerConfig", CV_REFUSE, "parameter servers are not "
	  "offered by gpuq" },
	{ "evaluatorType", CV_REFUSE, "evaluators are not offered by gpuq; "
	  "run the evaluation as a job of its own" },
	{ "evaluatorCount", CV_REFUSE, "evaluators are not offered by gpuq; "
	  "run the evaluation as a job of its own" },
	{ "evaluatorConfig", CV_REFUSE, "evaluators are not offered by gpuq" },
	{ "hyperparameters", CV_REFUSE, "submit one job per trial (a YAML "
	  "file of several documents is a sweep)" },
	{ "runtimeVersion", CV_REFUSE, "gpuq runs a container image: give "
	  "masterConfig.imageUri (the image that runs the package) instead" },
	{ "pythonVersion", CV_REFUSE, "the image decides the Python "
	  "version: give masterConfig.imageUri instead" },
	{ "network", CV_REFUSE, "gpuq takes the network from gpuqd.conf "
	  "([gcp] network); remove it and set that" },
	{ "serviceAccount", CV_REFUSE, "gpuq runs every job as gpuqd.conf's "
	  "[gcp] job_service_account; remove it and set that" },
	{ "encryptionConfig", CV_REFUSE, "customer-managed keys are set for "
	  "every job in gpuqd.conf ([gcp] kms_key); remove it" },
	{ "useChiefInTfConfig", CV_REFUSE, "remove it" },
	{ "enableWebAccess", CV_REFUSE, "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_ml_replica_keys[] = {
	{ "acceleratorConfig", CV_USE, NULL },
	{ "imageUri", CV_USE, NULL },
	{ "containerCommand", CV_USE, NULL },
	{ "containerArgs", CV_USE, NULL },
	{ "diskConfig", CV_USE, NULL },
	{ "tpuTfVersion", CV_REFUSE, "gpuq runs GPU jobs, not TPU ones" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_ml_acc_keys[] = {
	{ "type", CV_USE, NULL },
	{ "count", CV_USE, NULL },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_ml_sched_keys[] = {
	{ "maxRunningTime", CV_USE, NULL },
	{ "maxWaitTime", CV_REFUSE, "gpuq keeps a job queued until it can "
	  "run; cancel it yourself (gpuq cancel) to give up" },
	{ "priority", CV_USE, NULL },
	{ NULL, 0, NULL }
};

/*
 * A ReplicaConfig (masterConfig or workerConfig) and its machine type
 * as a gpuq job of its own (new in *RET).
 */
static int
cv_ml_replica(struct cv *c, const char *path, json_t *v, const char *mt,
    json_t **ret)
{
	json_t		*f, *acc = NULL, *af = NULL, *saved = c->job;
	json_t		*cmd, *args;
	const char	*type = NULL, *image = NULL;
	long long	 count = 1;
	char		*p = NULL;
	int		 r;

	*ret = NULL;
	if (v == NULL)
		v = json_object();
	else
		json_incref(v);
	r = cv_fields(c, path, v, cv_ml_replica_keys, &f);
	json_decref(v);
	if (r != 0)
		return r;
	if ((c->job = json_object()) == NULL)
		fatalx("out of memory");
	if ((r = cv_str(c, path, f, "imageUri", &image)) == 0 &&
	    image != NULL)
		cv_put(c->job, "image", json_string(image));
	p = cv_path(path, "containerCommand");
	if (r == 0 && (r = cv_strings(c, p, json_object_get(f,
	    "containerCommand"), &cmd)) == 0 && json_array_size(cmd) > 0)
		cv_put(c->job, "command", json_deep_copy(cmd));
	free(p);
	p = cv_path(path, "containerArgs");
	if (r == 0 && (r = cv_strings(c, p, json_object_get(f,
	    "containerArgs"), &args)) == 0 && args != NULL)
		cv_put(c->job, "args", json_deep_copy(args));
	free(p);
	p = cv_path(path, "acceleratorConfig");
	if (r == 0 && (acc = json_object_get(f, "acceleratorConfig")) != NULL)
		r = cv_fields(c, p, acc, cv_ml_acc_keys, &af);
	if (r == 0 && af != NULL && (r = cv_str(c, p, af, "type", &type)) ==
	    0) {
		free(p);
		p = cv_path(path, "acceleratorConfig.count");
		r = cv_int(c, p, json_object_get(af, "count"), 1, &count);
	}
	free(p);
	p = cv_path(path, "acceleratorConfig.type");
	if (r == 0)
		r = cv_accelerator(c, p, type, count);
	free(p);
	if (r == 0)
		cv_put(c->job, "machine_type", json_string(mt));
	if (r == 0)
		r = cv_sub(c, path, f, "diskConfig", cv_vertex_disk);
	json_decref(af);
	json_decref(f);
	if (r == 0)
		*ret = c->job;
	else
		json_decref(c->job);
	c->job = saved;
	return r;
}

/*
 * AI Platform's machine types: Compute Engine names, or the legacy
 * ones ("complex_model_m", "standard_gpu"), which name no GPU gpuq can
 * match and are refused.
 */
static int
cv_ml_machine(struct cv *c, const char *path, json_t *f, const char *key,
    const char **ret)
{
	char	*p = cv_path(path, key);
	int	 r;

	if ((r = cv_str(c, path, f, key, ret)) == 0 && *ret == NULL)
		r = cv_fail(c, p, "missing: the Compute Engine machine type, "
		    "e.g. n1-highmem-8");
	else if (r == 0 && strchr(*ret, '_') != NULL)
		r = cv_fail(c, p, "\"%s\" is a legacy AI Platform machine "
		    "name; give a Compute Engine machine type such as "
		    "n1-highmem-8 and the GPUs in acceleratorConfig", *ret);
	free(p);
	return r;
}

/* TrainingInput.scheduling: max_runtime and priority. */
static int
cv_ml_scheduling(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *t;
	long long	 n;
	char		*p;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, cv_ml_sched_keys, &f)) != 0)
		return r;
	p = cv_path(path, "maxRunningTime");
	if ((t = json_object_get(f, "maxRunningTime")) != NULL &&
	    (r = cv_duration(c, p, t, &n)) == 0)
		cv_put(c->job, "max_runtime", json_integer(n));
	free(p);
	p = cv_path(path, "priority");
	if (r == 0 && (t = json_object_get(f, "priority")) != NULL &&
	    (r = cv_int(c, p, t, 0, &n)) == 0)
		cv_put(c->job, "priority", json_integer(n));
	free(p);
	json_decref(f);
	return r;
}

/* A TrainingInput at PATH. */
static int
cv_ml_input(struct cv *c, const char *path, json_t *in)
{
	json_t		*f, *master = NULL, *worker = NULL, *uris, *args;
	const char	*tier = NULL, *mt = NULL, *wt = NULL, *module = NULL;
	const char	*region = NULL, *dir = NULL, *k, *image;
	long long	 workers = 0;
	json_t		*v;
	char		*p = NULL;
	int		 r;

	if ((r = cv_fields(c, path, in, cv_ml_input_keys, &f)) != 0)
		return r;
	p = cv_path(path, "scaleTier");
	if ((r = cv_str(c, path, f, "scaleTier", &tier)) == 0 &&
	    (tier == NULL || strcmp(tier, "CUSTOM") != 0))
		r = cv_fail(c, p, "gpuq takes scaleTier CUSTOM only, with "
		    "masterType and masterConfig.acceleratorConfig naming the "
		    "machine and its GPUs");
	free(p);
	if (r == 0)
		r = cv_ml_machine(c, path, f, "masterType", &mt);
	p = cv_path(path, "masterConfig");
	if (r == 0)
		r = cv_ml_replica(c, p, json_object_get(f, "masterConfig"), mt,
		    &master);
	free(p);
	p = cv_path(path, "workerCount");
	if (r == 0)
		r = cv_int(c, p, json_object_get(f, "workerCount"), 0,
		    &workers);
	free(p);
	if (r == 0 && workers > 0) {
		if ((r = cv_ml_machine(c, path, f, "workerType", &wt)) == 0 &&
		    strcmp(wt, mt) != 0) {
			p = cv_path(path, "workerType");
			r = cv_fail(c, p, "differs from masterType: gpuq runs "
			    "every node of a job on the same machine; make "
			    "them alike");
			free(p);
		}
		p = cv_path(path, "workerConfig");
		if (r == 0)
			r = cv_ml_replica(c, p, json_object_get(f,
			    "workerConfig"), wt, &worker);
		/* Workers run the master's image unless they name one. */
		if (r == 0 && json_object_get(worker, "image") == NULL &&
		    (v = json_object_get(master, "image")) != NULL)
			cv_put(worker, "image", json_incref(v));
		if (r == 0)
			r = cv_vertex_alike(c, p, master, worker);
		free(p);
	}
	if (r == 0) {
		json_object_foreach(master, k, v)
			cv_put(c->job, k, json_incref(v));
		if (workers > 0)
			cv_put(c->job, "nodes", json_integer(1 + workers));
	}
	p = cv_path(path, "packageUris");
	if (r == 0)
		r = cv_strings(c, p, json_object_get(f, "packageUris"), &uris);
	free(p);
	if (r == 0)
		r = cv_str(c, path, f, "pythonModule", &module);
	p = cv_path(path, "args");
	if (r == 0)
		r = cv_strings(c, p, json_object_get(f, "args"), &args);
	free(p);
	image = json_string_value(json_object_get(c->job, "image"));
	p = cv_path(path, module != NULL ? "packageUris" : "pythonModule");
	if (r == 0 && (module != NULL) != (json_array_size(uris) > 0))
		r = cv_fail(c, p, "packageUris and pythonModule go together");
	free(p);
	p = cv_path(path, "masterConfig.imageUri");
	if (r == 0 && image == NULL)
		r = cv_fail(c, p, "missing: gpuq runs a container image (for "
		    "a Python package, the image that runs it)");
	free(p);
	if (r == 0 && module != NULL) {
		if (json_object_get(c->job, "command") != NULL ||
		    json_object_get(c->job, "args") != NULL) {
			p = cv_path(path, "masterConfig.containerCommand");
			r = cv_fail(c, p, "a Python package job runs its "
			    "module; give its arguments in args");
			free(p);
		} else {
			cv_python_package(c, image, uris, module, args);
			(void)json_object_del(c->job, "image");
		}
	} else if (r == 0 && args != NULL) {
		if (json_object_get(c->job, "args") != NULL) {
			p = cv_path(path, "args");
			r = cv_fail(c, p, "also given as "
			    "masterConfig.containerArgs; keep one");
			free(p);
		} else
			cv_put(c->job, "args", json_deep_copy(args));
	}
	if (r == 0 && (r = cv_str(c, path, f, "region", &region)) == 0 &&
	    region != NULL)
		cv_put(c->job, "regions", json_pack("[s]", region));
	if (r == 0 && (r = cv_str(c, path, f, "jobDir", &dir)) == 0 &&
	    dir != NULL)
		cv_put(c->job, "checkpoint", json_pack("{s:s}", "uri", dir));
	if (r == 0)
		r = cv_sub(c, path, f, "scheduling", cv_ml_scheduling);
	json_decref(master);
	json_decref(worker);
	json_decref(f);
	return r;
}

/* A Vertex AI file: CustomJob, CustomJobSpec, or AI Platform Job. */
static int
cv_vertex(struct cv *c, json_t *in)
{
	json_t		*f, *spec;
	const char	*name = NULL;
	int		 r;

	if (json_object_get(in, "trainingInput") != NULL ||
	    json_object_get(in, "training_input") != NULL) {
		if ((r = cv_fields(c, "", in, cv_ml_job_keys, &f)) != 0)
			return r;
		if ((r = cv_str(c, "jobId", f, "jobId", &name)) == 0 &&
		    name != NULL)
			cv_name(c, name);
		if (r == 0)
			r = cv_ml_input(c, "trainingInput",
			    json_object_get(f, "trainingInput"));
		if (r == 0)
			r = cv_labels(c, "labels", json_object_get(f,
			    "labels"));
		json_decref(f);
		return r;
	}
	if (json_object_get(in, "scaleTier") != NULL ||
	    json_object_get(in, "scale_tier") != NULL ||
	    json_object_get(in, "masterType") != NULL ||
	    json_object_get(in, "master_type") != NULL)
		return cv_ml_input(c, "", in);
	if (json_object_get(in, "jobSpec") == NULL &&
	    json_object_get(in, "job_spec") == NULL)
		return cv_vertex_spec(c, "", in);
	if ((r = cv_fields(c, "", in, cv_custom_job_keys, &f)) != 0)
		return r;
	if ((r = cv_str(c, "displayName", f, "displayName", &name)) == 0 &&
	    name != NULL)
		cv_name(c, name);
	spec = json_object_get(f, "jobSpec");
	if (r == 0)
		r = cv_vertex_spec(c, "jobSpec", spec);
	if (r == 0)
		r = cv_labels(c, "labels", json_object_get(f, "labels"));
	json_decref(f);
	return r;
}

/*
 * Cloud Batch --------------------------------------------------------
 */

static const struct cv_key cv_batch_job_keys[] = {
	{ "name", CV_USE, NULL },
	{ "taskGroups", CV_USE, NULL },
	{ "allocationPolicy", CV_USE, NULL },
	{ "labels", CV_USE, NULL },
	{ "priority", CV_USE, NULL },
	{ "logsPolicy", CV_NOTE, "gpuq sends the job's logs to Cloud Logging "
	  "itself" },
	{ "notifications", CV_REFUSE, "gpuq does not publish to Pub/Sub; "
	  "watch the job with gpuq status" },
	{ "uid", CV_NOTE, "output only; ignored" },
	{ "status", CV_NOTE, "output only; ignored" },
	{ "createTime", CV_NOTE, "output only; ignored" },
	{ "updateTime", CV_NOTE, "output only; ignored" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_group_keys[] = {
	{ "taskSpec", CV_USE, NULL },
	{ "taskCount", CV_USE, NULL },
	{ "parallelism", CV_USE, NULL },
	{ "requireHostsFile", CV_USE, NULL },
	{ "taskCountPerNode", CV_USE, NULL },
	{ "name", CV_NOTE, "output only; ignored" },
	{ "schedulingPolicy", CV_REFUSE, "gpuq starts tasks as parallelism "
	  "allows; remove it" },
	{ "taskEnvironments", CV_REFUSE, "gpuq gives each task of an array "
	  "BATCH_TASK_INDEX (and GPUQ_TASK_INDEX); choose the task's values "
	  "from it" },
	{ "permissiveSsh", CV_REFUSE, "remove it" },
	{ "runAsNonRoot", CV_REFUSE, "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_task_keys[] = {
	{ "runnables", CV_USE, NULL },
	{ "environment", CV_USE, NULL },
	{ "maxRetryCount", CV_USE, NULL },
	{ "maxRunDuration", CV_USE, NULL },
	{ "computeResource", CV_NOTE, "gpuq runs one task per machine, with "
	  "all of it" },
	{ "lifecyclePolicies", CV_REFUSE, "gpuq decides retries itself "
	  "(max_failures, max_interruptions); remove it" },
	{ "volumes", CV_REFUSE, "mounts are not offered on every service gpuq "
	  "uses; read the data from Cloud Storage instead" },
	{ "environments", CV_REFUSE, "deprecated by Batch; use "
	  "environment.variables" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_runnable_keys[] = {
	{ "container", CV_USE, NULL },
	{ "environment", CV_USE, NULL },
	{ "displayName", CV_NOTE, "a label for Batch's logs; gpuq has no use "
	  "for it" },
	{ "script", CV_REFUSE, "gpuq runs a container; put the script in an "
	  "image and run it with container.commands" },
	{ "barrier", CV_REFUSE, "gpuq runs one container per task" },
	{ "background", CV_REFUSE, "gpuq runs one container per task" },
	{ "ignoreExitStatus", CV_REFUSE, "gpuq judges a job by its exit "
	  "status" },
	{ "alwaysRun", CV_REFUSE, "gpuq runs one container per task" },
	{ "timeout", CV_REFUSE, "use taskSpec.maxRunDuration" },
	{ "labels", CV_REFUSE, "put labels on the job" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_container_keys[] = {
	{ "imageUri", CV_USE, NULL },
	{ "commands", CV_USE, NULL },
	{ "entrypoint", CV_USE, NULL },
	{ "options", CV_REFUSE, "gpuq does not pass docker run options; "
	  "remove them" },
	{ "volumes", CV_REFUSE, "read the data from Cloud Storage instead" },
	{ "username", CV_REFUSE, "gpuq pulls with the job's service account; "
	  "grant it Artifact Registry Reader" },
	{ "password", CV_REFUSE, "gpuq pulls with the job's service account; "
	  "grant it Artifact Registry Reader" },
	{ "blockExternalNetwork", CV_REFUSE, "remove it" },
	{ "enableImageStreaming", CV_REFUSE, "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_env_keys[] = {
	{ "variables", CV_USE, NULL },
	{ "secretVariables", CV_USE, NULL },
	{ "encryptedVariables", CV_REFUSE, "use secretVariables (Secret "
	  "Manager) instead" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_alloc_keys[] = {
	{ "instances", CV_USE, NULL },
	{ "location", CV_USE, NULL },
	{ "labels", CV_USE, NULL },
	{ "serviceAccount", CV_REFUSE, "gpuq runs every job as gpuqd.conf's "
	  "[gcp] job_service_account; remove it and set that" },
	{ "network", CV_REFUSE, "gpuq takes the network from gpuqd.conf "
	  "([gcp] network, subnetwork); remove it and set those" },
	{ "tags", CV_REFUSE, "gpuq takes network tags from gpuqd.conf "
	  "([gcp] network_tags); remove them and set that" },
	{ "placement", CV_REFUSE, "gpuq places a job's nodes itself; remove "
	  "it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_instance_keys[] = {
	{ "policy", CV_USE, NULL },
	{ "installGpuDrivers", CV_NOTE, "gpuq installs the GPU drivers "
	  "itself" },
	{ "installOpsAgent", CV_REFUSE, "remove it" },
	{ "blockProjectSshKeys", CV_REFUSE, "remove it" },
	{ "instanceTemplate", CV_REFUSE, "gpuq builds the machine itself; "
	  "give policy.machineType and policy.accelerators instead" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_policy_keys[] = {
	{ "machineType", CV_USE, NULL },
	{ "accelerators", CV_USE, NULL },
	{ "provisioningModel", CV_USE, NULL },
	{ "bootDisk", CV_USE, NULL },
	{ "disks", CV_REFUSE, "extra disks are not offered on every service "
	  "gpuq uses; remove them" },
	{ "minCpuPlatform", CV_REFUSE, "remove it" },
	{ "reservation", CV_REFUSE, "gpuq does not use reservations yet; "
	  "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_acc_keys[] = {
	{ "type", CV_USE, NULL },
	{ "count", CV_USE, NULL },
	{ "installGpuDrivers", CV_NOTE, "gpuq installs the GPU drivers "
	  "itself" },
	{ "driverVersion", CV_REFUSE, "gpuq installs the driver its boot "
	  "image carries; remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_disk_keys[] = {
	{ "type", CV_USE, NULL },
	{ "sizeGb", CV_USE, NULL },
	{ "image", CV_REFUSE, "gpuq boots its own image; remove it" },
	{ "snapshot", CV_REFUSE, "remove it" },
	{ "diskInterface", CV_REFUSE, "remove it" },
	{ NULL, 0, NULL }
};

static const struct cv_key cv_batch_location_keys[] = {
	{ "allowedLocations", CV_USE, NULL },
	{ NULL, 0, NULL }
};

/* A list of one element at PATH: its only element, or an error. */
static int
cv_one(struct cv *c, const char *path, json_t *v, const char *what,
    json_t **ret)
{
	char	*p;
	int	 r;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return cv_fail(c, path, "must be a list of one %s", what);
	if (json_array_size(v) > 1) {
		p = xprintf("%s[1]", path);
		r = cv_fail(c, p, "gpuq runs one %s per job; submit the others "
		    "as jobs of their own", what);
		free(p);
		return r;
	}
	*ret = json_array_get(v, 0);
	return 0;
}

/* environment: env and secret_env. */
static int
cv_batch_env(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *vars, *sec, *e, *have;
	const char	*k;
	char		*p;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, cv_batch_env_keys, &f)) != 0)
		return r;
	vars = json_object_get(f, "variables");
	sec = json_object_get(f, "secretVariables");
	p = cv_path(path, "variables");
	if (vars != NULL && !json_is_object(vars))
		r = cv_fail(c, p, "must be a mapping of NAME: value");
	free(p);
	p = cv_path(path, "secretVariables");
	if (r == 0 && sec != NULL && !json_is_object(sec))
		r = cv_fail(c, p, "must be a mapping of NAME: secret version");
	free(p);
	if (r == 0 && vars != NULL)
		r = cv_env_add(c, path, json_deep_copy(vars));
	if (r == 0 && json_object_size(sec) > 0) {
		if ((have = json_object_get(c->job, "secret_env")) == NULL) {
			have = json_object();
			cv_put(c->job, "secret_env", have);
		}
		json_object_foreach(sec, k, e)
			cv_put(have, k, json_incref(e));
	}
	json_decref(f);
	return r;
}

/* container: image, command (entrypoint) and args (commands). */
static int
cv_batch_container(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *cmds;
	const char	*image = NULL, *ep = NULL;
	char		*p;
	int		 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: gpuq runs a container");
	if ((r = cv_fields(c, path, v, cv_batch_container_keys, &f)) != 0)
		return r;
	p = cv_path(path, "imageUri");
	if ((r = cv_str(c, path, f, "imageUri", &image)) == 0 && image == NULL)
		r = cv_fail(c, p, "missing: the container image to run");
	free(p);
	if (r == 0)
		cv_put(c->job, "image", json_string(image));
	if (r == 0 && (r = cv_str(c, path, f, "entrypoint", &ep)) == 0 &&
	    ep != NULL && *ep != '\0')
		cv_put(c->job, "command", json_pack("[s]", ep));
	p = cv_path(path, "commands");
	if (r == 0 && (r = cv_strings(c, p, json_object_get(f, "commands"),
	    &cmds)) == 0 && cmds != NULL)
		cv_put(c->job, "args", json_deep_copy(cmds));
	free(p);
	json_decref(f);
	return r;
}

static int
cv_batch_runnables(struct cv *c, const char *path, json_t *v)
{
	json_t	*run, *f;
	char	*p;
	int	 r;

	if ((r = cv_one(c, path, v, "runnable", &run)) != 0)
		return r;
	p = xprintf("%s[0]", path);
	if ((r = cv_fields(c, p, run, cv_batch_runnable_keys, &f)) == 0) {
		if ((r = cv_sub(c, p, f, "container",
		    cv_batch_container)) == 0)
			r = cv_sub(c, p, f, "environment", cv_batch_env);
		json_decref(f);
	}
	free(p);
	return r;
}

/* taskSpec: the container, env, max_failures, max_runtime. */
static int
cv_batch_task(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *t;
	long long	 n;
	char		*p;
	int		 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: what each task runs");
	if ((r = cv_fields(c, path, v, cv_batch_task_keys, &f)) != 0)
		return r;
	if ((r = cv_sub(c, path, f, "runnables", cv_batch_runnables)) == 0)
		r = cv_sub(c, path, f, "environment", cv_batch_env);
	p = cv_path(path, "maxRetryCount");
	if (r == 0 && (t = json_object_get(f, "maxRetryCount")) != NULL &&
	    (r = cv_int(c, p, t, 0, &n)) == 0)
		cv_put(c->job, "max_failures", json_integer(n));
	free(p);
	p = cv_path(path, "maxRunDuration");
	if (r == 0 && (t = json_object_get(f, "maxRunDuration")) != NULL &&
	    (r = cv_duration(c, p, t, &n)) == 0)
		cv_put(c->job, "max_runtime", json_integer(n));
	free(p);
	json_decref(f);
	return r;
}

/*
 * The task group: taskCount tasks, parallelism at once. With
 * requireHostsFile the tasks are the nodes of one multi-node job
 * (Batch's MPI shape: one task per node, all running together);
 * otherwise they are an array.
 */
static int
cv_batch_group(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *arr;
	long long	 count, par, per;
	int		 hosts, r;
	char		*p;

	if ((r = cv_fields(c, path, v, cv_batch_group_keys, &f)) != 0)
		return r;
	if ((r = cv_sub(c, path, f, "taskSpec", cv_batch_task)) != 0)
		goto out;
	p = cv_path(path, "taskCount");
	r = cv_int(c, p, json_object_get(f, "taskCount"), 1, &count);
	free(p);
	p = cv_path(path, "parallelism");
	if (r == 0)
		r = cv_int(c, p, json_object_get(f, "parallelism"), 0, &par);
	free(p);
	p = cv_path(path, "taskCountPerNode");
	if (r == 0 && (r = cv_int(c, p, json_object_get(f,
	    "taskCountPerNode"), 1, &per)) == 0 && per != 1)
		r = cv_fail(c, p, "gpuq runs one task per machine; leave it "
		    "out or set 1");
	free(p);
	if (r != 0)
		goto out;
	hosts = json_is_true(json_object_get(f, "requireHostsFile"));
	if (hosts) {
		p = cv_path(path, "parallelism");
		if (par != 0 && par != count)
			r = cv_fail(c, p, "the nodes of a multi-node job "
			    "(requireHostsFile) run together: parallelism "
			    "must equal taskCount");
		else if (count > 1)
			cv_put(c->job, "nodes", json_integer(count));
		free(p);
	} else if (count > 1) {
		arr = json_pack("{s:I}", "count", (json_int_t)count);
		if (arr == NULL)
			fatalx("out of memory");
		if (par > 0)
			cv_put(arr, "parallelism", json_integer(par));
		cv_put(c->job, "array", arr);
	}
out:
	json_decref(f);
	return r;
}

static int
cv_batch_groups(struct cv *c, const char *path, json_t *v)
{
	json_t	*g;
	char	*p;
	int	 r;

	if ((r = cv_one(c, path, v, "task group", &g)) != 0)
		return r;
	p = xprintf("%s[0]", path);
	r = cv_batch_group(c, p, g);
	free(p);
	return r;
}

/* policy.accelerators: one kind of GPU. */
static int
cv_batch_accs(struct cv *c, const char *path, json_t *v)
{
	json_t		*a, *f;
	const char	*type = NULL;
	long long	 count = 1;
	char		*p, *q;
	int		 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: gpuq runs GPU jobs; give "
		    "[{type: nvidia-tesla-t4, count: 1}]");
	if ((r = cv_one(c, path, v, "kind of GPU", &a)) != 0)
		return r;
	p = xprintf("%s[0]", path);
	if ((r = cv_fields(c, p, a, cv_batch_acc_keys, &f)) == 0) {
		q = cv_path(p, "count");
		if ((r = cv_str(c, p, f, "type", &type)) == 0)
			r = cv_int(c, q, json_object_get(f, "count"), 1,
			    &count);
		free(q);
		q = cv_path(p, "type");
		if (r == 0)
			r = cv_accelerator(c, q, type, count);
		free(q);
		json_decref(f);
	}
	free(p);
	return r;
}

static int
cv_batch_bootdisk(struct cv *c, const char *path, json_t *v)
{
	return cv_disk(c, path, v, cv_batch_disk_keys, "type", "sizeGb");
}

/* instances[0].policy: machine, GPUs, Spot, boot disk. */
static int
cv_batch_policy(struct cv *c, const char *path, json_t *v)
{
	json_t		*f;
	const char	*mt = NULL, *pm = NULL;
	char		*p;
	int		 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: the machine and its GPUs");
	if ((r = cv_fields(c, path, v, cv_batch_policy_keys, &f)) != 0)
		return r;
	if ((r = cv_sub(c, path, f, "accelerators", cv_batch_accs)) == 0 &&
	    (r = cv_str(c, path, f, "machineType", &mt)) == 0 && mt != NULL)
		cv_put(c->job, "machine_type", json_string(mt));
	p = cv_path(path, "provisioningModel");
	if (r == 0 && (r = cv_str(c, path, f, "provisioningModel",
	    &pm)) == 0 && pm != NULL) {
		/* PREEMPTIBLE is the older Spot: both may be taken back. */
		if (strcmp(pm, "SPOT") == 0 || strcmp(pm, "PREEMPTIBLE") == 0)
			cv_put(c->job, "spot", json_string("require"));
		else if (strcmp(pm, "STANDARD") == 0)
			cv_put(c->job, "spot", json_string("never"));
		else if (strcmp(pm, "FLEX_START") == 0)
			cv_put(c->job, "capacity", json_pack("[s]", "flex"));
		else if (strcmp(pm, "PROVISIONING_MODEL_UNSPECIFIED") != 0)
			r = cv_fail(c, p, "\"%s\" is not offered by gpuq; use "
			    "SPOT, FLEX_START or STANDARD, or leave it out to "
			    "let gpuq choose", pm);
	}
	free(p);
	if (r == 0)
		r = cv_sub(c, path, f, "bootDisk", cv_batch_bootdisk);
	json_decref(f);
	return r;
}

static int
cv_batch_instances(struct cv *c, const char *path, json_t *v)
{
	json_t	*i, *f;
	char	*p;
	int	 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: the machine and its GPUs");
	if ((r = cv_one(c, path, v, "kind of machine", &i)) != 0)
		return r;
	p = xprintf("%s[0]", path);
	if ((r = cv_fields(c, p, i, cv_batch_instance_keys, &f)) == 0) {
		r = cv_sub(c, p, f, "policy", cv_batch_policy);
		json_decref(f);
	}
	free(p);
	return r;
}

/*
 * location.allowedLocations: "regions/R" as R; "zones/Z" as Z's
 * region, since gpuq picks the zone (noted); anything else refused.
 */
static int
cv_batch_location(struct cv *c, const char *path, json_t *v)
{
	json_t		*f, *locs, *regions, *e;
	const char	*s, *dash;
	char		*p, *region;
	size_t		 i, k;
	int		 r;

	if (v == NULL || json_is_null(v))
		return 0;
	if ((r = cv_fields(c, path, v, cv_batch_location_keys, &f)) != 0)
		return r;
	p = cv_path(path, "allowedLocations");
	if ((r = cv_strings(c, p, json_object_get(f, "allowedLocations"),
	    &locs)) != 0 || locs == NULL) {
		free(p);
		json_decref(f);
		return r;
	}
	if ((regions = json_array()) == NULL)
		fatalx("out of memory");
	json_array_foreach(locs, i, e) {
		s = json_string_value(e);
		region = NULL;
		if (strncmp(s, "regions/", 8) == 0 && s[8] != '\0')
			region = xstrdup(s + 8);
		else if (strncmp(s, "zones/", 6) == 0 &&
		    (dash = strrchr(s + 6, '-')) != NULL && dash > s + 6) {
			region = xstrndup(s + 6, (size_t)(dash - (s + 6)));
			cv_note(c, p, "%s: gpuq picks the zone itself, within "
			    "region %s", s, region);
		} else {
			free(p);
			p = xprintf("%s.allowedLocations[%zu]", path, i);
			r = cv_fail(c, p, "\"%s\" is neither regions/REGION "
			    "nor zones/ZONE", s);
			break;
		}
		for (k = 0; k < json_array_size(regions); k++)
			if (strcmp(json_string_value(json_array_get(regions,
			    k)), region) == 0)
				break;
		if (k == json_array_size(regions) &&
		    json_array_append_new(regions, json_string(region)) != 0)
			fatalx("out of memory");
		free(region);
	}
	if (r == 0 && json_array_size(regions) > 0)
		cv_put(c->job, "regions", regions);
	else
		json_decref(regions);
	free(p);
	json_decref(f);
	return r;
}

static int
cv_batch_alloc(struct cv *c, const char *path, json_t *v)
{
	json_t	*f;
	int	 r;

	if (v == NULL)
		return cv_fail(c, path, "missing: the machine and its GPUs "
		    "(allocationPolicy.instances[0].policy)");
	if ((r = cv_fields(c, path, v, cv_batch_alloc_keys, &f)) != 0)
		return r;
	if ((r = cv_sub(c, path, f, "instances", cv_batch_instances)) == 0)
		r = cv_sub(c, path, f, "location", cv_batch_location);
	if (r == 0)
		r = cv_sub(c, path, f, "labels", cv_labels);
	json_decref(f);
	return r;
}

/* A Cloud Batch Job. */
static int
cv_batch(struct cv *c, json_t *in)
{
	json_t		*f, *t;
	const char	*name = NULL, *slash;
	long long	 prio;
	int		 r;

	if ((r = cv_fields(c, "", in, cv_batch_job_keys, &f)) != 0)
		return r;
	/* "projects/p/locations/l/jobs/NAME" or NAME. */
	if ((r = cv_str(c, "name", f, "name", &name)) == 0 && name != NULL) {
		slash = strrchr(name, '/');
		cv_name(c, slash != NULL ? slash + 1 : name);
	}
	if (r == 0)
		r = cv_sub(c, "", f, "taskGroups", cv_batch_groups);
	if (r == 0)
		r = cv_sub(c, "", f, "allocationPolicy", cv_batch_alloc);
	if (r == 0)
		r = cv_sub(c, "", f, "labels", cv_labels);
	/* Batch's 0..99, higher first, fits gpuq's -1000..1000. */
	if (r == 0 && (t = json_object_get(f, "priority")) != NULL &&
	    (r = cv_int(c, "priority", t, 0, &prio)) == 0)
		cv_put(c->job, "priority", json_integer(prio));
	json_decref(f);
	return r;
}

int
cli_convert(const char *from, json_t *in, json_t **ret, json_t **notes,
    char **cause)
{
	struct cv	c;
	int		r;

	memset(&c, 0, sizeof c);
	if ((c.job = json_object()) == NULL ||
	    (c.notes = json_array()) == NULL)
		fatalx("out of memory");
	if (strcmp(from, "vertex") == 0)
		r = cv_vertex(&c, in);
	else if (strcmp(from, "batch") == 0)
		r = cv_batch(&c, in);
	else {
		c.cause = xprintf("--from %s: unknown; use vertex or batch",
		    from);
		r = -EINVAL;
	}
	if (r != 0) {
		json_decref(c.job);
		json_decref(c.notes);
		*cause = c.cause;
		return r;
	}
	*ret = c.job;
	if (notes != NULL)
		*notes = c.notes;
	else
		json_decref(c.notes);
	return 0;
}

int
cli_convert_docs(const char *from, const char *file, struct cli_docs *docs,
    json_t **notes, char **cause)
{
	json_t	*job, *n;
	size_t	 i;
	char	*why;
	int	 r;

	if ((*notes = json_array()) == NULL)
		fatalx("out of memory");
	for (i = 0; i < docs->n; i++) {
		if ((r = cli_convert(from, docs->v[i].job, &job, &n,
		    &why)) != 0) {
			if (docs->v[i].line > 0)
				*cause = xprintf("%s:%d: %s", file,
				    docs->v[i].line, why);
			else
				*cause = xprintf("%s: %s", file, why);
			free(why);
			json_decref(*notes);
			*notes = NULL;
			return r;
		}
		json_decref(docs->v[i].job);
		docs->v[i].job = job;
		if (json_array_extend(*notes, n) != 0)
			fatalx("out of memory");
		json_decref(n);
	}
	return 0;
}
