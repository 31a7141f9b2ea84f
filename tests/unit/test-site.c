/*
 * test-site.c: the project's setup ([gcp] job_service_account, network,
 * subnetwork, external_ip, network_tags, boot_disk_*, labels, kms_key)
 * checked against Google's rules (providers/gcp/gcp-site.c) and put
 * into each service's create body in that service's form
 * (providers/prov-site.c), with the job's own disk.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/gpu.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"
#include "tests/unit/provtest.h"

static const char *const subnets[] = {
	"us-central1:projects/host-proj/regions/us-central1/subnetworks/ml",
	"europe-west4:projects/host-proj/regions/europe-west4/subnetworks/eu",
};
static const char *const tags[] = { "gpuq-jobs", "allow-egress" };
static const char *const labels[] = { "owner=ml", "cost-center=cc-42" };

#define SA	"trainer@my-proj.iam.gserviceaccount.com"
#define KEY	"projects/my-proj/locations/us-central1/keyRings/r/" \
		"cryptoKeys/k"

/* Every setting set, as a real project would. */
static void
site_full(struct gcp_conf *c)
{
	memset(c, 0, sizeof *c);
	c->project = "my-proj";
	c->job_service_account = SA;
	c->network = "projects/host-proj/global/networks/shared";
	c->subnetworks = subnets;
	c->nsubnetworks = 2;
	c->no_external_ip = 1;
	c->network_tags = tags;
	c->nnetwork_tags = 2;
	c->boot_disk_gb = 500;
	c->boot_disk_type = "pd-ssd";
	c->labels = labels;
	c->nlabels = 2;
	c->kms_key = KEY;
}

static int
setup(void **state)
{
	struct provtest	*f;

	f = provtest_new(json_pack("[s]", "python"), json_pack("[s]",
	    "train.py"), json_pack("{s:s}", "LR", "0.1"));
	f->l.zone = "us-central1-a";
	f->l.machine_type = "n1-standard-8";
	f->l.gpu_count = 1;
	*state = f;
	return 0;
}

/* C must fail its check with a cause starting with WANT. */
static void
site_bad(const struct gcp_conf *c, const char *want)
{
	char	*cause = NULL;

	assert_int_equal(gcp_site_check(c, &cause), -EINVAL);
	assert_non_null(cause);
	if (strncmp(cause, want, strlen(want)) != 0)
		fail_msg("want \"%s...\"\n got  \"%s\"", want, cause);
	free(cause);
}

static void
test_site_check_ok(void **state)
{
	struct gcp_conf	 c;
	const char	*const prov[] = { "vertex", "gce" };
	char		*cause = NULL;

	(void)state;
	memset(&c, 0, sizeof c);
	assert_int_equal(gcp_site_check(&c, &cause), 0);
	site_full(&c);
	c.providers = prov;
	c.nproviders = 2;
	assert_int_equal(gcp_site_check(&c, &cause), 0);
	assert_null(cause);
	c.network = "ml-vpc";
	c.job_service_account =
	    "123456789-compute@developer.gserviceaccount.com";
	assert_int_equal(gcp_site_check(&c, &cause), 0);
}

static void
test_site_check_bad(void **state)
{
	struct gcp_conf	 c;
	const char	*const prov[] = { "vertex", "gce" };
	const char	*one[1];

	(void)state;
	site_full(&c);
	c.providers = prov;
	c.nproviders = 2;
	c.job_service_account = "trainer@gmail.com";
	site_bad(&c, "[gcp] job_service_account: \"trainer@gmail.com\" is "
	    "not a service account's email; write NAME@PROJECT.iam.");
	c.job_service_account = SA;

	c.network = "Bad_Net";
	site_bad(&c, "[gcp] network: \"Bad_Net\" is not a network");
	c.network = "projects/p/networks/x";
	site_bad(&c, "[gcp] network:");
	c.network = NULL;

	one[0] = "projects/h/regions/us-central1/subnetworks/ml";
	c.subnetworks = one;
	c.nsubnetworks = 1;
	site_bad(&c, "[gcp] subnetwork:");
	one[0] = "us-east1:projects/host-proj/regions/us-central1/"
	    "subnetworks/ml";
	site_bad(&c, "[gcp] subnetwork: \"us-east1:projects/host-proj/"
	    "regions/us-central1/subnetworks/ml\" puts region us-east1 on a "
	    "subnetwork of another region");
	c.nsubnetworks = 0;

	one[0] = "Web Server";
	c.network_tags = one;
	c.nnetwork_tags = 1;
	site_bad(&c, "[gcp] network_tags: \"Web Server\" is not a network "
	    "tag");
	c.nnetwork_tags = 0;

	c.boot_disk_gb = 20;
	site_bad(&c, "[gcp] boot_disk_gb: 20 is outside 100..64000");
	c.boot_disk_gb = 0;
	c.boot_disk_type = "pd-balanced";
	site_bad(&c, "[gcp] boot_disk_type: \"pd-balanced\" is not a boot "
	    "disk type every service takes; use pd-ssd");
	c.boot_disk_type = NULL;

	one[0] = "Team=ml";
	c.labels = one;
	c.nlabels = 1;
	site_bad(&c, "[gcp] labels: \"Team=ml\" has a key that does not "
	    "start with a lowercase letter");
	one[0] = "gpuq-job=1";
	site_bad(&c, "[gcp] labels: \"gpuq-job=1\" has a key starting with "
	    "\"gpuq\"");
	one[0] = "team";
	site_bad(&c, "[gcp] labels: \"team\" is not key=value");
	one[0] = "team=ML";
	site_bad(&c, "[gcp] labels: \"team=ML\" has a value");
	c.nlabels = 0;

	c.kms_key = "projects/p/keyRings/r/cryptoKeys/k";
	site_bad(&c, "[gcp] kms_key: \"projects/p/keyRings/r/cryptoKeys/k\" "
	    "is not a Cloud KMS key");
	c.kms_key = KEY;
	c.providers = NULL;		/* every provider: Batch too */
	c.nproviders = 0;
	site_bad(&c, "[gcp] kms_key: Cloud Batch takes no customer-managed "
	    "key in a job; leave batch out of [gcp] providers");
}

static void
test_site_gce_body(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 c;
	json_t		*b = NULL;

	site_full(&c);
	f->l.site = &c;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "networkInterfaces.0.network"),
	    "projects/host-proj/global/networks/shared");
	assert_string_equal(provtest_str(b,
	    "networkInterfaces.0.subnetwork"), subnets[0] +
	    strlen("us-central1:"));
	assert_null(provtest_at(b, "networkInterfaces.0.accessConfigs"));
	assert_string_equal(provtest_str(b, "serviceAccounts.0.email"), SA);
	assert_string_equal(provtest_str(b, "serviceAccounts.0.scopes.0"),
	    GCP_SCOPE);
	assert_string_equal(provtest_str(b, "tags.items.1"), "allow-egress");
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskSizeGb"), "500");
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskType"),
	    "zones/us-central1-a/diskTypes/pd-ssd");
	assert_string_equal(provtest_str(b,
	    "disks.0.diskEncryptionKey.kmsKeyName"), KEY);
	assert_string_equal(provtest_str(b, "labels.owner"), "ml");
	assert_string_equal(provtest_str(b, "labels.cost-center"), "cc-42");
	assert_string_equal(provtest_str(b, "labels.gpuq-job"), "42");
	json_decref(b);

	/* The job's disk wins; external IPs when asked for. */
	c.no_external_ip = 0;
	f->l.disk_gb = 2000;
	f->l.disk_type = "hyperdisk-balanced";
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskSizeGb"), "2000");
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskType"),
	    "zones/us-central1-a/diskTypes/hyperdisk-balanced");
	assert_string_equal(provtest_str(b,
	    "networkInterfaces.0.accessConfigs.0.type"), "ONE_TO_ONE_NAT");
	json_decref(b);
}

/* No site: what gpuq always sent, the project's defaults. */
static void
test_site_gce_defaults(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 c;
	json_t		*b = NULL;

	memset(&c, 0, sizeof c);
	f->l.site = &c;
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "networkInterfaces.0.network"),
	    "global/networks/default");
	assert_non_null(provtest_at(b, "networkInterfaces.0.accessConfigs"));
	assert_null(provtest_at(b, "networkInterfaces.0.subnetwork"));
	assert_string_equal(provtest_str(b, "serviceAccounts.0.email"),
	    "default");
	assert_string_equal(provtest_str(b,
	    "disks.0.initializeParams.diskSizeGb"), "100");
	assert_null(provtest_at(b, "disks.0.initializeParams.diskType"));
	assert_null(provtest_at(b, "disks.0.diskEncryptionKey"));
	assert_null(provtest_at(b, "tags"));
	json_decref(b);

	/* A plain network name is the project's own network. */
	c.project = "my-proj";
	c.network = "ml-vpc";
	f->l.region = "asia-east1";	/* no subnetwork listed there */
	assert_int_equal(gce_instance_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "networkInterfaces.0.network"),
	    "projects/my-proj/global/networks/ml-vpc");
	assert_null(provtest_at(b, "networkInterfaces.0.subnetwork"));
	json_decref(b);
}

static void
test_site_batch_body(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 c;
	json_t		*b = NULL;

	site_full(&c);
	c.kms_key = NULL;
	f->l.site = &c;
	f->l.zone = NULL;
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "allocationPolicy.network."
	    "networkInterfaces.0.network"),
	    "projects/host-proj/global/networks/shared");
	assert_string_equal(provtest_str(b, "allocationPolicy.network."
	    "networkInterfaces.0.subnetwork"), subnets[0] +
	    strlen("us-central1:"));
	assert_true(json_is_true(provtest_at(b, "allocationPolicy.network."
	    "networkInterfaces.0.noExternalIpAddress")));
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.serviceAccount.email"), SA);
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.serviceAccount.scopes.0"), GCP_SCOPE);
	assert_string_equal(provtest_str(b, "allocationPolicy.tags.0"),
	    "gpuq-jobs");
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.bootDisk.sizeGb"), "500");
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.bootDisk.type"), "pd-ssd");
	assert_string_equal(provtest_str(b, "labels.owner"), "ml");
	assert_string_equal(provtest_str(b, "allocationPolicy.labels."
	    "cost-center"), "cc-42");
	json_decref(b);

	/* Nothing set: no network policy, Batch's own account. */
	memset(&c, 0, sizeof c);
	assert_int_equal(batch_job_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b, "allocationPolicy.network"));
	assert_null(provtest_at(b, "allocationPolicy.serviceAccount"));
	assert_string_equal(provtest_str(b,
	    "allocationPolicy.instances.0.policy.bootDisk.sizeGb"), "100");
	assert_null(provtest_at(b,
	    "allocationPolicy.instances.0.policy.bootDisk.type"));
	json_decref(b);
}

static void
test_site_vertex_body(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 c;
	json_t		*b = NULL;

	site_full(&c);
	f->l.site = &c;
	f->l.zone = NULL;
	f->l.disk_gb = 800;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_string_equal(provtest_str(b, "jobSpec.serviceAccount"), SA);
	assert_string_equal(provtest_str(b, "jobSpec.network"),
	    "projects/host-proj/global/networks/shared");
	assert_string_equal(provtest_str(b, "encryptionSpec.kmsKeyName"),
	    KEY);
	assert_int_equal(json_integer_value(provtest_at(b,
	    "jobSpec.workerPoolSpecs.0.diskSpec.bootDiskSizeGb")), 800);
	assert_string_equal(provtest_str(b,
	    "jobSpec.workerPoolSpecs.0.diskSpec.bootDiskType"), "pd-ssd");
	assert_string_equal(provtest_str(b, "labels.owner"), "ml");
	assert_string_equal(provtest_str(b, "labels.gpuq-resource"),
	    "gpuq-i1-42-2");
	json_decref(b);

	memset(&c, 0, sizeof c);
	f->l.disk_gb = 0;
	assert_int_equal(vertex_job_body(&f->l, &b, NULL), 0);
	assert_null(provtest_at(b, "jobSpec.serviceAccount"));
	assert_null(provtest_at(b, "jobSpec.network"));
	assert_null(provtest_at(b, "encryptionSpec"));
	assert_int_equal(json_integer_value(provtest_at(b,
	    "jobSpec.workerPoolSpecs.0.diskSpec.bootDiskSizeGb")), 100);
	json_decref(b);
}

/* A job's label wins over the site's of the same key. */
static void
test_site_labels_merge(void **state)
{
	struct provtest	*f = *state;
	struct gcp_conf	 c;
	const char	*const mine[] = { "team=platform", "env=prod" };
	json_t		*lab;

	memset(&c, 0, sizeof c);
	c.labels = mine;
	c.nlabels = 2;
	f->l.site = &c;
	json_object_set_new(f->labels, "team", json_string("vision"));
	lab = prov_labels_new(&f->l, 0);
	assert_string_equal(provtest_str(lab, "team"), "vision");
	assert_string_equal(provtest_str(lab, "env"), "prod");
	assert_string_equal(provtest_str(lab, "gpuq-install"), "i1");
	json_decref(lab);
}

int
main(void)
{
#define BODY(f)	cmocka_unit_test_setup_teardown(f, setup, provtest_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site_check_ok),
		cmocka_unit_test(test_site_check_bad),
		BODY(test_site_gce_body),
		BODY(test_site_gce_defaults),
		BODY(test_site_batch_body),
		BODY(test_site_vertex_body),
		BODY(test_site_labels_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
