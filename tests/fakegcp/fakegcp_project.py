"""A project's own setup, as a real company's project has it: its VPC
networks and subnetworks, its service accounts and who may act as them,
the permissions the caller holds, the APIs turned on, its buckets.
(/work/shared/gcp/API-NOTES.md section M; doc/DESIGN.md "A real
project".)

Serves Compute Engine networks.get and subnetworks.get and Cloud Storage
buckets.get and buckets.testIamPermissions (their rows go in those APIs'
route tables), and checks what each service's create call says about the
project -- network, subnetwork, service account, external IPs, KMS key --
the way the service does: a network or subnetwork that does not exist is
a 404 naming it, a service account that does not exist or that the
caller may not act as is refused, an external IP under the organisation
policy that forbids them is refused.  Each create body that passes is
kept for /_fake/create_bodies, so tests see what gpuqd sent.

The setup comes from /_fake/config (fakegcp_state.DEFAULT_CFG, "project
setup" keys):
  networks                 {name: {region: subnetwork name}}; "default"
                           is an auto-mode network with a subnetwork
                           "default" in every region unless given
  service_accounts         extra accounts that exist, besides the
                           Compute Engine default one
  act_as_denied            accounts the caller may not act as
  denied_permissions       project permissions the caller lacks
  bucket_denied_permissions bucket permissions the caller lacks
  missing_buckets          buckets that do not exist
  disabled_services        APIs turned off (Service Usage)
  project_denied           the caller cannot see the project at all
  forbid_external_ip       constraints/compute.vmExternalIpAccess
  no_private_google_access subnetworks with Private Google Access off
"""
import re

import fakegcp_catalog as cat
from fakegcp_errors import ApiError

COMPUTE_LINK = "https://www.googleapis.com/compute/v1/"
KMS_RE = re.compile(r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/"
                    r"cryptoKeys/[^/]+$")
PERM_RE = re.compile(r"^[a-z][a-zA-Z0-9]*(\.[a-zA-Z0-9]+){2}$")


def default_account(fake, project):
    return "%s-compute@developer.gserviceaccount.com" % \
        fake.project_number(project)


def account_exists(fake, project, email):
    return email in ("default", default_account(fake, project)) or \
        email in (fake.cfg.get("service_accounts") or [])


def check_account(fake, project, email, what):
    """Refuse a create whose account does not exist or that the caller
    may not act as (iam.serviceAccounts.actAs)."""
    if not account_exists(fake, project, email):
        raise ApiError(400, "Service account %s does not exist (%s)." % (
            email, what))
    if email in (fake.cfg.get("act_as_denied") or []):
        raise ApiError(403, "The user does not have access to service "
                       "account '%s'. Ask a project owner to grant you the "
                       "iam.serviceAccountUser role on the service account"
                       % email, "forbidden")


def network_subnets(fake, name):
    """{region: subnetwork name} of network NAME, or None if it does not
    exist."""
    nets = fake.cfg.get("networks") or {}
    if name in nets:
        return nets[name] or {}
    if name == "default":
        return {r: "default" for r in cat.REGIONS}
    return None


def _last(s, kind):
    m = re.search(r"(?:^|/)%s/([^/]+)$" % kind, s or "")
    return m.group(1) if m else None


def check_network(fake, project, region, network, subnetwork):
    """The network and subnetwork a VM would use must exist, and the
    subnetwork must be in REGION, as Compute Engine checks at insert."""
    sub_net = None
    if subnetwork:
        m = re.search(r"(?:^|/)regions/([^/]+)/subnetworks/([^/]+)$",
                      subnetwork)
        if not m:
            raise ApiError(400, "Invalid value for field 'resource."
                           "networkInterfaces[0].subnetwork': '%s'. The URL "
                           "is malformed." % subnetwork)
        if m.group(1) != region:
            raise ApiError(400, "Invalid value for field 'resource."
                           "networkInterfaces[0].subnetwork': '%s'. "
                           "Subnetwork must be in the same region as the "
                           "instance." % subnetwork)
        for name in (fake.cfg.get("networks") or {"default": None}):
            subs = network_subnets(fake, name) or {}
            if subs.get(region) == m.group(2):
                sub_net = name
        if sub_net is None:
            raise ApiError(404, "The resource '%s' was not found" %
                           subnetwork, "notFound")
    if network:
        name = _last(network, "networks")
        if name is None or network_subnets(fake, name) is None:
            raise ApiError(404, "The resource '%s' was not found" % network,
                           "notFound")
        if sub_net is not None and sub_net != name:
            raise ApiError(400, "Subnetwork '%s' does not belong to network "
                           "'%s'." % (subnetwork, network))
        if not subnetwork and region not in network_subnets(fake, name):
            raise ApiError(400, "Network '%s' has no subnetwork in region "
                           "'%s'; name one." % (network, region))


def _external_ip_refused():
    return ApiError(412, "Constraint constraints/compute.vmExternalIpAccess "
                    "violated for project. Add instance to the allowed list "
                    "or remove the access configs.", "conditionNotMet")


def _kms(key, field):
    if key is not None and not KMS_RE.match(key):
        raise ApiError(400, "Invalid value for field '%s': '%s'. Must be a "
                       "Cloud KMS crypto key name." % (field, key))


def _keep(fake, service, body):
    fake.create_bodies.append({"service": service, "body": body})
    del fake.create_bodies[:-200]


def check_compute(fake, project, zone, body):
    """instances.insert: the body's network, account, key."""
    region = cat.ZONE_REGION[zone]
    nics = body.get("networkInterfaces") or []
    if not nics:
        raise ApiError(400, "Required field 'resource.networkInterfaces' "
                       "not specified", "required")
    nic = nics[0]
    check_network(fake, project, region, nic.get("network"),
                  nic.get("subnetwork"))
    if nic.get("accessConfigs") and fake.cfg.get("forbid_external_ip"):
        raise _external_ip_refused()
    for sa in body.get("serviceAccounts") or []:
        check_account(fake, project, sa.get("email", ""),
                      "resource.serviceAccounts")
    for d in body.get("disks") or []:
        _kms((d.get("diskEncryptionKey") or {}).get("kmsKeyName"),
             "resource.disks[0].diskEncryptionKey.kmsKeyName")
        t = (d.get("initializeParams") or {}).get("diskType")
        if t and not re.match(r"^(zones/%s/)?diskTypes/"
                              r"(pd-standard|pd-balanced|pd-ssd|pd-extreme|"
                              r"hyperdisk-balanced)$" % zone, t):
            raise ApiError(400, "Invalid value for field 'resource.disks[0]."
                           "initializeParams.diskType': '%s'." % t)
    _keep(fake, "compute", body)


def check_batch(fake, project, region, body):
    """jobs.create: allocationPolicy's network and account."""
    ap = body.get("allocationPolicy") or {}
    nics = (ap.get("network") or {}).get("networkInterfaces") or []
    for nic in nics:
        check_network(fake, project, region, nic.get("network"),
                      nic.get("subnetwork"))
    external = not (nics and nics[0].get("noExternalIpAddress"))
    if external and fake.cfg.get("forbid_external_ip"):
        raise _external_ip_refused()
    sa = (ap.get("serviceAccount") or {}).get("email")
    if sa:
        check_account(fake, project, sa, "allocation_policy.service_account")
    _keep(fake, "batch", body)


def check_vertex(fake, project, region, body):
    """customJobs.create: jobSpec's account and network, the key."""
    spec = body.get("jobSpec") or {}
    if spec.get("serviceAccount"):
        check_account(fake, project, spec["serviceAccount"],
                      "custom_job.job_spec.service_account")
    if spec.get("network"):
        name = _last(spec["network"], "networks")
        if name is None or network_subnets(fake, name) is None:
            raise ApiError(400, "Network %s is not found or not peered "
                           "with Vertex AI." % spec["network"])
    _kms((body.get("encryptionSpec") or {}).get("kmsKeyName"),
         "encryption_spec.kms_key_name")
    for wp in spec.get("workerPoolSpecs") or []:
        t = (wp.get("diskSpec") or {}).get("bootDiskType")
        if t and t not in ("pd-ssd", "pd-standard", "hyperdisk-balanced"):
            raise ApiError(400, "boot_disk_type %s is not supported." % t)
        n = (wp.get("diskSpec") or {}).get("bootDiskSizeGb")
        if n is not None and not 100 <= int(n) <= 64000:
            raise ApiError(400, "boot_disk_size_gb must be between 100 and "
                           "64000.")
    _keep(fake, "vertex", body)


# the fake's API names (route table) -> Service Usage service names
SERVICES = {"compute": "compute.googleapis.com",
            "batch": "batch.googleapis.com",
            "aiplatform": "aiplatform.googleapis.com",
            "cloudquotas": "cloudquotas.googleapis.com",
            "cloudbilling": "cloudbilling.googleapis.com",
            "storage": "storage.googleapis.com",
            "iam": "iam.googleapis.com",
            "cloudresourcemanager": "cloudresourcemanager.googleapis.com",
            "serviceusage": "serviceusage.googleapis.com"}


def check_enabled(fake, api, project):
    """A call to an API the project has turned off is 403
    SERVICE_DISABLED (API-NOTES M.1, H.6), with Google's ErrorInfo."""
    svc = SERVICES.get(api)
    if svc is None or svc not in (fake.cfg.get("disabled_services") or []):
        return
    p = project or fake.default_project
    raise ApiError(
        403, "%s API has not been used in project %s before or it is "
        "disabled. Enable it by visiting https://console.developers.google"
        ".com/apis/api/%s/overview?project=%s then retry." % (
            svc, fake.project_number(p), svc, fake.project_number(p)),
        "accessNotConfigured", status="PERMISSION_DENIED",
        details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                  "reason": "SERVICE_DISABLED", "domain": "googleapis.com",
                  "metadata": {"service": svc,
                               "consumer": "projects/" +
                               fake.project_number(p)}}])


def check_permissions(perms):
    """testIamPermissions refuses wildcards and malformed names."""
    if not isinstance(perms, list) or not perms:
        raise ApiError(400, "permissions must be a non-empty list.")
    for p in perms:
        if not isinstance(p, str) or "*" in p or not PERM_RE.match(p):
            raise ApiError(400, "Permission %s is not valid." % (p,))


class Setup:
    """Compute networks/subnetworks and Storage buckets of the setup."""

    def __init__(self, fake):
        self.f = fake

    def network_get(self, req):
        p, n = req.params["project"], req.params["network"]
        subs = network_subnets(self.f, n)
        if subs is None:
            raise ApiError(404, "The resource 'projects/%s/global/networks/"
                           "%s' was not found" % (p, n), "notFound")
        return {"kind": "compute#network", "id": str(abs(hash(n)) % 10**18),
                "name": n,
                "selfLink": COMPUTE_LINK + "projects/%s/global/networks/%s"
                % (p, n),
                "autoCreateSubnetworks": n == "default" and
                n not in (self.f.cfg.get("networks") or {}),
                "subnetworks": [COMPUTE_LINK + "projects/%s/regions/%s/"
                                "subnetworks/%s" % (p, r, s)
                                for r, s in sorted(subs.items())]}

    def subnetwork_get(self, req):
        p, r, s = (req.params["project"], req.params["region"],
                   req.params["subnetwork"])
        nets = self.f.cfg.get("networks") or {"default": None}
        for name in nets:
            if (network_subnets(self.f, name) or {}).get(r) == s:
                return {"kind": "compute#subnetwork", "name": s,
                        "region": COMPUTE_LINK + "projects/%s/regions/%s"
                        % (p, r),
                        "network": COMPUTE_LINK + "projects/%s/global/"
                        "networks/%s" % (p, name),
                        "ipCidrRange": "10.128.0.0/20",
                        "privateIpGoogleAccess": s not in (
                            self.f.cfg.get("no_private_google_access")
                            or []),
                        "selfLink": COMPUTE_LINK + "projects/%s/regions/%s/"
                        "subnetworks/%s" % (p, r, s)}
        raise ApiError(404, "The resource 'projects/%s/regions/%s/"
                       "subnetworks/%s' was not found" % (p, r, s),
                       "notFound")

    def _bucket(self, req):
        b = req.params["bucket"]
        if b in (self.f.cfg.get("missing_buckets") or []):
            raise ApiError(404, "The specified bucket does not exist.",
                           "notFound")
        return b

    def bucket_get(self, req):
        b = self._bucket(req)
        return {"kind": "storage#bucket", "id": b, "name": b,
                "projectNumber": self.f.project_number(
                    self.f.default_project),
                "location": "US-CENTRAL1", "storageClass": "STANDARD",
                "selfLink": "https://www.googleapis.com/storage/v1/b/" + b}

    def bucket_test(self, req):
        b = self._bucket(req)
        perms = req.query.get("permissions") or []
        if not perms:
            raise ApiError(400, "Required parameter: permissions",
                           "required")
        check_permissions(perms)
        denied = set(self.f.cfg.get("bucket_denied_permissions") or [])
        out = {"kind": "storage#testIamPermissionsResponse"}
        ok = [p for p in perms if p not in denied]
        if ok:
            out["permissions"] = ok
        return out


def compute_routes(fake):
    s = Setup(fake)
    P = r"/compute/v1/projects/(?P<project>[^/]+)"
    return [
        ("GET", P + r"/global/networks/(?P<network>[^/]+)", "compute",
         "compute.networks.get", s.network_get),
        ("GET", P + r"/regions/(?P<region>[^/]+)/subnetworks/"
         r"(?P<subnetwork>[^/]+)", "compute", "compute.subnetworks.get",
         s.subnetwork_get),
    ]


def storage_routes(fake):
    s = Setup(fake)
    return [
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)/iam/testPermissions",
         "storage", "storage.buckets.testIamPermissions", s.bucket_test),
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)", "storage",
         "storage.buckets.get", s.bucket_get),
    ]
