/*
 * prov-site.c: the project's setup ([gcp] job_service_account, network,
 * subnetwork, external_ip, network_tags, boot_disk_*, labels, kms_key)
 * and the job's own disk put into each service's create request, in the
 * form that service takes (doc/DESIGN.md "A real project"):
 *
 *   setting          Compute Engine      Cloud Batch          Vertex AI
 *   service account  serviceAccounts[]   allocationPolicy.    jobSpec.
 *                                        serviceAccount       serviceAccount
 *   network, subnet  networkInterfaces[] allocationPolicy.    jobSpec.network
 *                                        network              (peered; no
 *                                                             subnetwork)
 *   external_ip=no   no accessConfigs    noExternalIpAddress  (none to drop)
 *   network tags     tags.items          allocationPolicy.    (no field)
 *                                        tags
 *   boot disk        disks[0].           instances[0].policy. workerPool-
 *                    initializeParams    bootDisk             Specs[].diskSpec
 *   labels           labels, on every resource (prov_labels_new)
 *   kms_key          disks[0].disk-      (no field: refused   encryptionSpec
 *                    EncryptionKey       at start)
 *
 * Each builder (gce.c, batch.c, vertex.c) calls its function here last,
 * on the body it built with Google's defaults. Knows each service's JSON
 * and nothing of the daemon.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/log.h"
#include "common/xmalloc.h"
#include "providers/provider.h"
#include "providers/prov-impl.h"
#include "providers/gcp/gcp.h"

static int
prov_site_set(const char *s)
{
	return s != NULL && *s != '\0';
}

/* The boot disk size for L: the job's, the site's, or the default. */
static int
prov_site_disk_gb(const struct prov_launch *l)
{
	if (l->disk_gb > 0)
		return l->disk_gb;
	return l->site != NULL ? gcp_site_disk_gb(l->site) :
	    GCP_DEFAULT_BOOT_DISK_GB;
}

/* The boot disk type for L, or NULL for the service's own default. */
static const char *
prov_site_disk_type(const struct prov_launch *l)
{
	if (prov_site_set(l->disk_type))
		return l->disk_type;
	if (l->site != NULL && prov_site_set(l->site->boot_disk_type))
		return l->site->boot_disk_type;
	return NULL;
}

/* An array of the strings V[0..N). New. */
static json_t *
prov_site_strings(const char *const *v, size_t n)
{
	json_t	*a = prov_checked(json_array());
	size_t	 i;

	for (i = 0; i < n; i++)
		if (json_array_append_new(a, prov_checked(json_string(
		    v[i]))) != 0)
			fatalx("prov: out of memory building a request");
	return a;
}

/* {"email": ..., "scopes": [cloud-platform]}: the job's account. New. */
static json_t *
prov_site_account(const char *email)
{
	return prov_checked(json_pack("{s:s, s:[s]}", "email", email,
	    "scopes", GCP_SCOPE));
}

void
prov_site_labels(const struct prov_launch *l, json_t *labels)
{
	const char	*eq;
	char		*k;
	size_t		 i;

	if (l->site == NULL)
		return;
	for (i = 0; i < l->site->nlabels; i++) {
		if ((eq = strchr(l->site->labels[i], '=')) == NULL)
			continue;
		k = xstrndup(l->site->labels[i],
		    (size_t)(eq - l->site->labels[i]));
		prov_set(labels, k, json_string(eq + 1));
		free(k);
	}
}

/* The Compute Engine networkInterfaces[0] for L. New. */
static json_t *
prov_site_gce_nic(const struct prov_launch *l)
{
	const struct gcp_conf	*c = l->site;
	const char		*sub = NULL;
	json_t			*nic;
	char			*net = NULL;

	if (c != NULL) {
		net = gcp_site_network(c);
		sub = gcp_site_subnetwork(c, l->region);
	}
	nic = prov_checked(json_object());
	/* A subnetwork names its network; given neither, the default. */
	if (net != NULL)
		prov_set(nic, "network", json_string(net));
	else if (sub == NULL)
		prov_set(nic, "network", json_string(
		    "global/networks/default"));
	if (sub != NULL)
		prov_set(nic, "subnetwork", json_string(sub));
	/*
	 * No accessConfigs, no external address (Compute Engine
	 * "IP addresses"): the VM then reaches Google's APIs through
	 * Private Google Access on its subnetwork, and the registry
	 * through Cloud NAT or Artifact Registry.
	 */
	if (c == NULL || !c->no_external_ip)
		prov_set(nic, "accessConfigs", json_pack("[{s:s, s:s}]",
		    "type", "ONE_TO_ONE_NAT", "name", "External NAT"));
	free(net);
	return nic;
}

void
prov_site_gce(const struct prov_launch *l, json_t *body)
{
	const struct gcp_conf	*c = l->site;
	const char		*type;
	json_t			*disk, *init;
	char			*s;

	disk = json_array_get(json_object_get(body, "disks"), 0);
	init = json_object_get(disk, "initializeParams");
	if (init != NULL) {
		s = xprintf("%d", prov_site_disk_gb(l));
		prov_set(init, "diskSizeGb", json_string(s));
		free(s);
		if ((type = prov_site_disk_type(l)) != NULL &&
		    prov_site_set(l->zone)) {
			s = xprintf("zones/%s/diskTypes/%s", l->zone, type);
			prov_set(init, "diskType", json_string(s));
			free(s);
		}
	}
	if (disk != NULL && c != NULL && prov_site_set(c->kms_key))
		prov_set(disk, "diskEncryptionKey", json_pack("{s:s}",
		    "kmsKeyName", c->kms_key));
	prov_set(body, "networkInterfaces", json_pack("[o]",
	    prov_site_gce_nic(l)));
	prov_set(body, "serviceAccounts", json_pack("[o]",
	    prov_site_account(c != NULL &&
	    prov_site_set(c->job_service_account) ?
	    c->job_service_account : "default")));
	if (c != NULL && c->nnetwork_tags > 0)
		prov_set(body, "tags", json_pack("{s:o}", "items",
		    prov_site_strings(c->network_tags, c->nnetwork_tags)));
}

void
prov_site_batch(const struct prov_launch *l, json_t *body)
{
	const struct gcp_conf	*c = l->site;
	const char		*type, *sub = NULL;
	json_t			*alloc, *policy, *boot, *nic;
	char			*s, *net = NULL;

	alloc = json_object_get(body, "allocationPolicy");
	if (alloc == NULL)
		return;
	policy = json_object_get(json_array_get(json_object_get(alloc,
	    "instances"), 0), "policy");
	if (policy != NULL) {
		boot = prov_checked(json_object());
		s = xprintf("%d", prov_site_disk_gb(l));
		prov_set(boot, "sizeGb", json_string(s));
		free(s);
		if ((type = prov_site_disk_type(l)) != NULL)
			prov_set(boot, "type", json_string(type));
		prov_set(policy, "bootDisk", boot);
	}
	if (c == NULL)
		return;
	net = gcp_site_network(c);
	sub = gcp_site_subnetwork(c, l->region);
	if (net != NULL || sub != NULL || c->no_external_ip) {
		nic = prov_checked(json_object());
		if (net != NULL)
			prov_set(nic, "network", json_string(net));
		if (sub != NULL)
			prov_set(nic, "subnetwork", json_string(sub));
		if (c->no_external_ip)
			prov_set(nic, "noExternalIpAddress", json_true());
		prov_set(alloc, "network", json_pack("{s:[o]}",
		    "networkInterfaces", nic));
	}
	free(net);
	if (prov_site_set(c->job_service_account))
		prov_set(alloc, "serviceAccount",
		    prov_site_account(c->job_service_account));
	if (c->nnetwork_tags > 0)
		prov_set(alloc, "tags", prov_site_strings(c->network_tags,
		    c->nnetwork_tags));
}

void
prov_site_vertex(const struct prov_launch *l, json_t *body)
{
	const struct gcp_conf	*c = l->site;
	const char		*type;
	json_t			*spec, *pool, *disk;
	size_t			 i;
	char			*net;

	spec = json_object_get(body, "jobSpec");
	type = prov_site_disk_type(l);
	json_array_foreach(json_object_get(spec, "workerPoolSpecs"), i,
	    pool) {
		if ((disk = json_object_get(pool, "diskSpec")) == NULL) {
			disk = prov_checked(json_object());
			prov_set(pool, "diskSpec", disk);
		}
		prov_set(disk, "bootDiskSizeGb",
		    json_integer(prov_site_disk_gb(l)));
		if (type != NULL)
			prov_set(disk, "bootDiskType", json_string(type));
	}
	if (c == NULL || spec == NULL)
		return;
	if (prov_site_set(c->job_service_account))
		prov_set(spec, "serviceAccount",
		    json_string(c->job_service_account));
	/* Vertex peers its workers with the network (Private Service
	 * Access); it takes no subnetwork and gives no external IP. */
	if ((net = gcp_site_network(c)) != NULL)
		prov_set(spec, "network", json_string(net));
	free(net);
	if (prov_site_set(c->kms_key))
		prov_set(body, "encryptionSpec", json_pack("{s:s}",
		    "kmsKeyName", c->kms_key));
}
