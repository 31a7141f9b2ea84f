/*
 * fmt.c: values from gpuqd's replies as people read them (times, ages,
 * dollars, GPUs, places, users), and tolerant JSON getters: a field the
 * daemon leaves out shows as "-", never as a crash.
 */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/duration.h"
#include "common/gpu.h"

char *
cli_fmt_time(int64_t t, char *buf, size_t len)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (t <= 0 || localtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "-");
	return buf;
}

char *
cli_fmt_age(int64_t sec, char *buf, size_t len)
{
	return duration_format(sec, buf, len);
}

char *
cli_fmt_usd(double usd, char *buf, size_t len)
{
	if (usd < 0)
		usd = 0;
	snprintf(buf, len, "$%.2f", usd);
	return buf;
}

/*
 * The cost against what the same running time costs on Vertex AI
 * on-demand (doc/DESIGN.md "Accounting"); a job that cost more than
 * its baseline says so rather than print a negative saving.
 */
char *
cli_fmt_saving(double cost, double baseline, char *buf, size_t len)
{
	double	d = baseline - cost;

	if (cost < 0)
		cost = 0;
	if (!(baseline > 0))
		snprintf(buf, len, "$%.2f", cost);
	else if (d >= 0)
		snprintf(buf, len, "$%.2f, saved $%.2f (%.0f%%) against "
		    "Vertex AI on-demand", cost, d, 100.0 * d / baseline);
	else
		snprintf(buf, len, "$%.2f, $%.2f (%.0f%%) more than Vertex AI "
		    "on-demand", cost, -d, 100.0 * -d / baseline);
	return buf;
}

char *
cli_fmt_gpu_s(const char *type, int64_t count, char *buf, size_t len)
{
	const struct gpu_type	*g;

	if (type == NULL) {
		snprintf(buf, len, "-");
		return buf;
	}
	if ((g = gpu_lookup(type)) != NULL)
		type = g->short_name;
	if (count > 0)
		snprintf(buf, len, "%lldx%s", (long long)count, type);
	else
		snprintf(buf, len, "%s", type);
	return buf;
}

char *
cli_fmt_gang(const char *gpu, int64_t nodes, char *buf, size_t len)
{
	char	tmp[128];

	if (nodes <= 1 || strcmp(gpu, "-") == 0) {
		if (buf != gpu)
			snprintf(buf, len, "%s", gpu);
		return buf;
	}
	snprintf(tmp, sizeof tmp, "%s", gpu);
	snprintf(buf, len, "%lld\xc3\x97(%s)", (long long)nodes, tmp);
	return buf;
}

char *
cli_fmt_gpu(json_t *acc, char *buf, size_t len)
{
	return cli_fmt_gpu_s(cli_json_str(acc, "type"),
	    cli_json_int(acc, "count", 0), buf, len);
}

char *
cli_fmt_where_s(const char *prov, const char *zone, const char *region,
    char *buf, size_t len)
{
	if (zone == NULL)
		zone = region;
	if (prov == NULL && zone == NULL)
		snprintf(buf, len, "-");
	else if (zone == NULL)
		snprintf(buf, len, "%s", prov);
	else if (prov == NULL)
		snprintf(buf, len, "%s", zone);
	else
		snprintf(buf, len, "%s/%s", prov, zone);
	return buf;
}

char *
cli_fmt_where(json_t *a, char *buf, size_t len)
{
	return cli_fmt_where_s(cli_json_str(a, "provider"),
	    cli_json_str(a, "zone"), cli_json_str(a, "region"), buf, len);
}

char *
cli_fmt_user(int64_t uid, char *buf, size_t len)
{
	struct passwd	*pw;

	if (uid < 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	if ((pw = getpwuid((uid_t)uid)) != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%lld", (long long)uid);
	return buf;
}

int64_t
cli_json_int(json_t *obj, const char *key, int64_t def)
{
	json_t	*v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (int64_t)json_real_value(v);
	return def;
}

const char *
cli_json_str(json_t *obj, const char *key)
{
	json_t	*v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

double
cli_json_num(json_t *obj, const char *key, double def)
{
	json_t	*v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : def;
}
