/*
 * cli-cloud.c: the commands that show what gpuqd knows of the cloud:
 * gpuq plan (the ranked offers for a job, without launching), gpuq
 * quotas (free GPU quota per region and service) and gpuq prices.
 *
 * The client only shows what the daemon answers; every number here was
 * computed by gpuqd (doc/DESIGN.md "Expected cost").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/cli.h"
#include "common/proto.h"

/* Options shared by quotas and prices: --region, --gpu, --json. */
struct cli_cloud_opts {
	const char	*region;
	const char	*gpu;
	int		 json;
};

static int
cli_cloud_getopt(int argc, char **argv, const struct cli_cmd *cmd,
    struct cli_cloud_opts *o)
{
	static const struct option	 opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int				 ch;

	memset(o, 0, sizeof *o);
	while ((ch = cli_getopt(argc, argv, "r:g:h", opts, cmd)) != -1) {
		switch (ch) {
		case 'r':
			o->region = optarg;
			break;
		case 'g':
			o->gpu = optarg;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	return -1;
}

/* Send REQ (taken); on success *ret holds the reply. Exit code else. */
static int
cli_cloud_call(struct cli *cli, json_t *req, const char *what, json_t **ret)
{
	*ret = cli_call_ok(cli, req, what);
	return *ret != NULL ? GPUQ_EXIT_OK : GPUQ_EXIT_FAILED;
}

static void
cli_cloud_dump(json_t *reply)
{
	json_object_del(reply, "ok");
	json_dumpf(reply, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

/* "12.5" or "-" for a missing number. */
static void
cli_cloud_num(struct cli_table *t, json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	if (json_is_number(v))
		cli_table_addf(t, "%g", json_number_value(v));
	else
		cli_table_add(t, NULL);
}

static void
cli_cloud_usd(struct cli_table *t, json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);
	char	 buf[32];

	if (json_is_number(v))
		cli_table_add(t, cli_fmt_usd(json_number_value(v), buf,
		    sizeof buf));
	else
		cli_table_add(t, NULL);
}

/*
 * The reservations' headroom of a quotas REPLY, after the quota table:
 * free and total GPUs (and VMs) of each, and whether gpuqd may use it.
 */
static void
cli_quotas_reservations(json_t *reply)
{
	static const struct cli_col	 cols[] = {
		{ "RESERVATION", CLI_LEFT }, { "ZONE", CLI_LEFT },
		{ "GPU", CLI_LEFT }, { "MACHINE", CLI_LEFT },
		{ "FREE GPUS", CLI_RIGHT }, { "FREE VMS", CLI_RIGHT },
		{ "USED", CLI_LEFT },
	};
	struct cli_table	*t;
	json_t			*a, *r;
	const char		*gpu, *warn;
	char			 gpus[48], vms[48];
	size_t			 i;

	a = json_object_get(reply, "reservations");
	if (!json_is_array(a))
		return;
	t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	json_array_foreach(a, i, r) {
		gpu = cli_json_str(r, "gpu");
		cli_table_add(t, cli_json_str(r, "name"));
		cli_table_add(t, cli_json_str(r, "zone"));
		cli_table_add(t, gpu != NULL && *gpu != '\0' ? gpu :
		    "(built in)");
		cli_table_add(t, cli_json_str(r, "machine_type"));
		(void)snprintf(gpus, sizeof gpus, "%lld/%lld",
		    (long long)cli_json_int(r, "free_gpus", 0),
		    (long long)cli_json_int(r, "total_gpus", 0));
		(void)snprintf(vms, sizeof vms, "%lld/%lld",
		    (long long)cli_json_int(r, "free_vms", 0),
		    (long long)cli_json_int(r, "count", 0));
		cli_table_add(t, gpus);
		cli_table_add(t, vms);
		cli_table_add(t, json_is_true(json_object_get(r, "wanted")) ?
		    "yes" : "no");
	}
	printf("\n");
	if (cli_table_rows(t) == 0)
		printf("no reservations%s\n", json_object_get(reply,
		    "quotas") != NULL ? " that match" : "");
	else
		cli_table_print(t, stdout, cli_table_width(), 1);
	if ((warn = cli_json_str(reply, "reservations_unreachable")) != NULL)
		printf("zones whose reservations could not be read: %s\n",
		    warn);
	cli_table_free(t);
}

int
cli_quotas_exec(struct cli *cli, int argc, char **argv)
{
	static const struct cli_col	 cols[] = {
		{ "SERVICE", CLI_LEFT }, { "REGION", CLI_LEFT },
		{ "METRIC", CLI_LEFT }, { "LIMIT", CLI_RIGHT },
		{ "USAGE", CLI_RIGHT }, { "IN FLIGHT", CLI_RIGHT },
		{ "FREE", CLI_RIGHT }, { "AGE", CLI_RIGHT },
	};
	const struct cli_cmd		*cmd = cli_cmd_find("quotas");
	struct cli_cloud_opts		 o;
	struct cli_table		*t;
	json_t				*req, *reply, *q;
	size_t				 i;
	char				 buf[32];
	int				 rc;

	if ((rc = cli_cloud_getopt(argc, argv, cmd, &o)) != -1)
		return rc;
	req = json_pack("{s:s}", "op", "quotas");
	if (o.region != NULL)
		json_object_set_new(req, "region", json_string(o.region));
	if (o.gpu != NULL)
		json_object_set_new(req, "gpu", json_string(o.gpu));
	if ((rc = cli_cloud_call(cli, req, "quotas", &reply)) != 0)
		return rc;
	if (o.json) {
		cli_cloud_dump(reply);
		json_decref(reply);
		return GPUQ_EXIT_OK;
	}
	t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	json_array_foreach(json_object_get(reply, "quotas"), i, q) {
		cli_table_add(t, cli_json_str(q, "service"));
		cli_table_add(t, cli_json_str(q, "region"));
		cli_table_add(t, cli_json_str(q, "metric"));
		cli_cloud_num(t, q, "limit");
		cli_cloud_num(t, q, "usage");
		cli_cloud_num(t, q, "in_flight");
		cli_cloud_num(t, q, "free");
		if (json_is_number(json_object_get(q, "age_s")))
			cli_table_add(t, cli_fmt_age(cli_json_int(q, "age_s",
			    0), buf, sizeof buf));
		else
			cli_table_add(t, NULL);
	}
	if (cli_table_rows(t) == 0)
		printf("no quota readings yet%s\n", o.gpu || o.region ?
		    " for that region or GPU" : "");
	else
		cli_table_print(t, stdout, cli_table_width(), 1);
	cli_table_free(t);
	cli_quotas_reservations(reply);
	cli_reply_warnings(reply);
	json_decref(reply);
	return GPUQ_EXIT_OK;
}

int
cli_prices_exec(struct cli *cli, int argc, char **argv)
{
	static const struct cli_col	 cols[] = {
		{ "GPU", CLI_LEFT }, { "REGION", CLI_LEFT },
		{ "HOST", CLI_LEFT },
		{ "GCE", CLI_RIGHT }, { "GCE SPOT", CLI_RIGHT },
		{ "HOST", CLI_RIGHT }, { "HOST SPOT", CLI_RIGHT },
		{ "VERTEX", CLI_RIGHT }, { "VERTEX SPOT", CLI_RIGHT },
	};
	const struct cli_cmd		*cmd = cli_cmd_find("prices");
	struct cli_cloud_opts		 o;
	struct cli_table		*t;
	json_t				*req, *reply, *p, *gce, *vx;
	const char			*src;
	size_t				 i;
	int				 rc;

	if ((rc = cli_cloud_getopt(argc, argv, cmd, &o)) != -1)
		return rc;
	req = json_pack("{s:s}", "op", "prices");
	if (o.region != NULL)
		json_object_set_new(req, "region", json_string(o.region));
	if (o.gpu != NULL)
		json_object_set_new(req, "gpu", json_string(o.gpu));
	if ((rc = cli_cloud_call(cli, req, "prices", &reply)) != 0)
		return rc;
	if (o.json) {
		cli_cloud_dump(reply);
		json_decref(reply);
		return GPUQ_EXIT_OK;
	}
	t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	json_array_foreach(json_object_get(reply, "prices"), i, p) {
		gce = json_object_get(p, "gce");
		vx = json_object_get(p, "vertex");
		cli_table_add(t, cli_json_str(p, "gpu"));
		cli_table_add(t, cli_json_str(p, "region"));
		cli_table_add(t, cli_json_str(p, "host"));
		cli_cloud_usd(t, gce, "gpu_ondemand");
		cli_cloud_usd(t, gce, "gpu_spot");
		cli_cloud_usd(t, gce, "host_ondemand");
		cli_cloud_usd(t, gce, "host_spot");
		cli_cloud_usd(t, vx, "gpu_ondemand");
		cli_cloud_usd(t, vx, "gpu_spot");
	}
	if (cli_table_rows(t) == 0)
		printf("no prices%s\n", o.gpu || o.region ?
		    " for that region or GPU" : "");
	else {
		cli_table_print(t, stdout, cli_table_width(), 1);
		printf("US dollars per hour, one GPU on its default host; "
		    "Batch is billed as GCE.\n");
	}
	if ((src = cli_json_str(reply, "source")) != NULL)
		printf("source: %s\n", src);
	cli_table_free(t);
	json_decref(reply);
	return GPUQ_EXIT_OK;
}

/* One offer row: rank, service, where, spot, machine, prices. */
static void
cli_plan_row(struct cli_table *t, json_t *o, int excluded)
{
	char	buf[64];

	if (!excluded)
		cli_table_addf(t, "%lld",
		    (long long)cli_json_int(o, "rank", 0));
	cli_table_add(t, cli_json_str(o, "provider"));
	cli_table_add(t, cli_fmt_where_s(NULL, cli_json_str(o, "zone"),
	    cli_json_str(o, "region"), buf, sizeof buf));
	if (cli_json_str(o, "reservation") != NULL)
		cli_table_addf(t, "reserved (%s)", cli_json_str(o,
		    "reservation"));
	else
		cli_table_add(t, cli_json_str(o, "capacity") != NULL ?
		    cli_json_str(o, "capacity") : json_is_true(
		    json_object_get(o, "spot")) ? "spot" : "standard");
	cli_table_add(t, cli_json_str(o, "machine_type"));
	cli_cloud_usd(t, o, "hourly_usd");
	if (excluded)
		cli_table_add(t, cli_json_str(o, "reason"));
	else
		cli_cloud_usd(t, o, "expected_usd");
}

/* The kinds of capacity the plan has no offer of, and why: "flex: not
 * offered by Vertex AI for this GPU (vertex)". */
static void
cli_plan_kinds(json_t *reply)
{
	json_t		*ks, *k;
	const char	*prov;
	size_t		 i;

	ks = json_object_get(reply, "kinds_excluded");
	if (json_array_size(ks) == 0)
		return;
	printf("\nkinds of capacity excluded:\n");
	json_array_foreach(ks, i, k) {
		prov = cli_json_str(k, "provider");
		printf("  %s: %s%s%s%s\n", cli_json_str(k, "capacity"),
		    cli_json_str(k, "reason"), prov != NULL ? " (" : "",
		    prov != NULL ? prov : "", prov != NULL ? ")" : "");
	}
}

/* The tables of one plan reply; its warnings go to stderr. */
static void
cli_plan_print(json_t *reply, int all)
{
	static const struct cli_col	 ocols[] = {
		{ "RANK", CLI_RIGHT }, { "SERVICE", CLI_LEFT },
		{ "WHERE", CLI_LEFT }, { "MODEL", CLI_LEFT },
		{ "MACHINE", CLI_LEFT }, { "$/HOUR", CLI_RIGHT },
		{ "EXPECTED", CLI_RIGHT },
	};
	static const struct cli_col	 xcols[] = {
		{ "SERVICE", CLI_LEFT }, { "WHERE", CLI_LEFT },
		{ "MODEL", CLI_LEFT }, { "MACHINE", CLI_LEFT },
		{ "$/HOUR", CLI_RIGHT }, { "EXCLUDED BECAUSE", CLI_LEFT },
	};
	struct cli_table		*t;
	json_t				*o, *offers, *ex;
	size_t				 i, shown;

	offers = json_object_get(reply, "offers");
	ex = json_object_get(reply, "excluded");
	if (json_array_size(offers) == 0)
		printf("no offer fits this job now%s\n",
		    json_array_size(ex) ? "; excluded:" : "");
	else {
		t = cli_table_new(ocols, 7);
		json_array_foreach(offers, i, o)
			cli_plan_row(t, o, 0);
		cli_table_print(t, stdout, cli_table_width(), 1);
		cli_table_free(t);
		printf("gpuq would launch rank 1. Expected cost = "
		    "$/hour x estimated_hours, stretched for Spot\n"
		    "by the preemption rate (gpuq-job(5)).\n");
	}
	if (json_array_size(ex) > 0) {
		if (json_array_size(offers) > 0)
			printf("\nexcluded:\n");
		t = cli_table_new(xcols, 6);
		shown = 0;
		json_array_foreach(ex, i, o) {
			if (!all && shown == 20)
				break;
			cli_plan_row(t, o, 1);
			shown++;
		}
		cli_table_print(t, stdout, cli_table_width(), 1);
		cli_table_free(t);
		if (shown < json_array_size(ex))
			printf("... and %zu more (gpuq plan --all)\n",
			    json_array_size(ex) - shown);
	}
	cli_plan_kinds(reply);
	fflush(stdout);
	cli_reply_warnings(reply);
}

int
cli_plan_exec(struct cli *cli, int argc, char **argv)
{
	static const struct option	 opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cli_cmd		*cmd = cli_cmd_find("plan");
	struct cli_docs			 docs;
	json_t				*req, *reply, *all_json;
	char				*cause = NULL;
	size_t				 d;
	int				 ch, json = 0, all = 0, rc = 0;

	while ((ch = cli_getopt(argc, argv, "ah", opts, cmd)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'h':
			return GPUQ_EXIT_OK;
		default:
			return GPUQ_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_usage(stderr, cmd);
		return GPUQ_EXIT_USAGE;
	}
	if (cli_jobfile_read(argv[optind], &docs, &cause) != 0) {
		cli_warnx("%s", cause);
		free(cause);
		return GPUQ_EXIT_FAILED;
	}
	/* --json: one document, an array when the file holds several jobs. */
	all_json = json && docs.n > 1 ? json_array() : NULL;
	for (d = 0; d < docs.n; d++) {
		req = json_pack("{s:s,s:O}", "op", "plan", "job",
		    docs.v[d].job);
		reply = cli_call(cli, req);
		if (reply == NULL) {
			rc = GPUQ_EXIT_FAILED;
			break;
		}
		if (!cli_reply_ok(reply)) {
			if (docs.n > 1)
				cli_reply_warn(reply, "plan job %zu (%s:%d)",
				    d + 1, argv[optind], docs.v[d].line);
			else
				cli_reply_warn(reply, "plan");
			rc = GPUQ_EXIT_FAILED;
		}
		if (json) {
			json_object_del(reply, "ok");
			if (all_json != NULL)
				json_array_append_new(all_json, reply);
			else if (rc == 0)
				cli_cloud_dump(reply);
			if (all_json == NULL)
				json_decref(reply);
			continue;
		}
		if (!cli_reply_ok(reply)) {
			json_decref(reply);
			continue;
		}
		if (docs.n > 1)
			printf("%sjob %zu (%s:%d)\n", d ? "\n" : "", d + 1,
			    argv[optind], docs.v[d].line);
		cli_plan_print(reply, all);
		json_decref(reply);
	}
	if (all_json != NULL) {
		json_dumpf(all_json, stdout, JSON_INDENT(2) |
		    JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(all_json);
	}
	cli_docs_done(&docs);
	return rc;
}
