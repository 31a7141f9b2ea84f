"""Compute Engine resource policies with a group placement policy, the
compact placement of a multi-node job's VMs (API-NOTES N.3; discovery
compute.v1.json ResourcePolicy, ResourcePolicyGroupPlacementPolicy):
resourcePolicies insert, get, delete, and the regional Operations they
answer with (regionOperations get, wait).

An Instance lists the policies it is placed by in ``resourcePolicies``
at insert (fakegcp_compute.py checks them with ``check_instance``): each
must exist in the VM's region, and a policy with ``vmCount`` takes no
more than that many VMs. A policy some live VM still uses cannot be
deleted (Compute's resourceInUseByAnotherResource).
"""
import time

from fakegcp_compute import COMPUTE_LINK, UUID_RE, NAME_RE, Operation
from fakegcp_errors import ApiError, not_found
from fakegcp_sim import rfc3339


class RegionOperation(Operation):
    """A Compute regional Operation: as a zonal one, under a region."""

    def to_json(self, now):
        o = Operation.to_json(self, now)
        rl = COMPUTE_LINK + "projects/%s/regions/%s" % (self.project,
                                                        self.zone)
        del o["zone"]
        o["region"] = rl
        o["selfLink"] = rl + "/operations/" + self.name
        return o


def policy_link(project, region, name):
    return COMPUTE_LINK + "projects/%s/regions/%s/resourcePolicies/%s" % (
        project, region, name)


def _policy_key(f, ref, region):
    """(project, region, name) of a resourcePolicies entry (full URL or
    partial path), or None."""
    s = ref.split("/compute/v1/", 1)[-1]
    parts = s.split("/")
    try:
        i = parts.index("resourcePolicies")
        name = parts[i + 1]
        reg = parts[parts.index("regions") + 1]
        proj = parts[parts.index("projects") + 1]
    except (ValueError, IndexError):
        return None
    return (proj, reg, name)


def users(f, key):
    """Live VMs placed by policy KEY."""
    out = []
    for inst in f.instances.values():
        if inst.deleted:
            continue
        for ref in inst.body.get("resourcePolicies") or []:
            if _policy_key(f, ref, inst.region) == key:
                out.append(inst)
    return out


def check_instance(f, project, region, body):
    """Refuse an insert whose resourcePolicies are unknown, in another
    region, or full (vmCount VMs already placed)."""
    for i, ref in enumerate(body.get("resourcePolicies") or []):
        key = _policy_key(f, str(ref), region)
        pol = f.policies.get(key) if key else None
        if pol is None or key[1] != region:
            raise ApiError(400, "Invalid value for field "
                           "'resource.resourcePolicies[%d]': '%s'. The "
                           "resource policy must exist in the region of the "
                           "instance." % (i, ref), "invalid")
        n = (pol.get("groupPlacementPolicy") or {}).get("vmCount")
        if n and len(users(f, key)) >= int(n):
            raise ApiError(400, "Invalid resource usage: 'The number of "
                           "instances in the placement policy %s exceeds "
                           "its vmCount %d.'" % (key[2], int(n)),
                           "invalidResourceUsage")


class Policies:
    def __init__(self, fake):
        self.f = fake

    def _bad(self, field, msg):
        raise ApiError(400, "Invalid value for field '%s': %s" % (field, msg),
                       "invalid")

    def _rid(self, req, p):
        rid = req.q.get("requestId")
        if rid is not None and (not UUID_RE.match(rid) or
                                rid.strip("0-") == ""):
            self._bad("requestId", "'%s'. The requestId must be a valid "
                      "UUID and cannot be the zero UUID." % rid)
        return rid

    def _op(self, p, r, op_type, target, rid, now):
        f = self.f
        opsec = f.cfg["op_seconds"]
        op = RegionOperation(f, p, r, op_type, target, now,
                             now + opsec * 0.25, now + opsec * 0.5,
                             request_id=rid)
        f.region_ops[(p, r, op.name)] = op
        if rid:
            f.request_ids[(p, rid)] = op
        return op

    def insert(self, req):
        f = self.f
        p, r = req.params["project"], req.params["region"]
        b = req.body
        now = f.now()
        rid = self._rid(req, p)
        if rid is not None and (p, rid) in f.request_ids:
            return f.request_ids[(p, rid)].to_json(now)
        name = b.get("name")
        if not name or not NAME_RE.match(name):
            self._bad("resource.name", "'%s'. Must be a match of regex "
                      "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'" % name)
        gp = b.get("groupPlacementPolicy")
        if gp is not None and gp.get("vmCount") is not None and \
                not 1 <= int(gp["vmCount"]) <= 1500:
            self._bad("resource.groupPlacementPolicy.vmCount",
                      "'%s'. Must be between 1 and 1500." % gp["vmCount"])
        key = (p, r, name)
        if key in f.policies:
            raise ApiError(409, "The resource '%s' already exists" %
                           policy_link(p, r, name)[len(COMPUTE_LINK):],
                           "alreadyExists")
        pol = dict(b)
        pol.update(kind="compute#resourcePolicy", id=str(next(f.ids)),
                   creationTimestamp=rfc3339(now, True), status="READY",
                   region=COMPUTE_LINK + "projects/%s/regions/%s" % (p, r),
                   selfLink=policy_link(p, r, name))
        f.policies[key] = pol
        return self._op(p, r, "insert", pol["selfLink"], rid,
                        now).to_json(now)

    def _get(self, req):
        key = (req.params["project"], req.params["region"],
               req.params["policy"])
        pol = self.f.policies.get(key)
        if pol is None:
            raise not_found("projects/%s/regions/%s/resourcePolicies/%s" %
                            key)
        return key, pol

    def get(self, req):
        return self._get(req)[1]

    def delete(self, req):
        f = self.f
        p, r = req.params["project"], req.params["region"]
        now = f.now()
        rid = self._rid(req, p)
        if rid is not None and (p, rid) in f.request_ids:
            return f.request_ids[(p, rid)].to_json(now)
        key, pol = self._get(req)
        u = users(f, key)
        if u:
            raise ApiError(400, "The resource_policy resource '%s' is "
                           "already being used by '%s'" % (
                               pol["selfLink"][len(COMPUTE_LINK):],
                               u[0].full_name()),
                           "resourceInUseByAnotherResource")
        del f.policies[key]
        return self._op(p, r, "delete", pol["selfLink"], rid,
                        now).to_json(now)

    def _region_op(self, req):
        key = (req.params["project"], req.params["region"],
               req.params["operation"])
        op = self.f.region_ops.get(key)
        if op is None:
            raise not_found("projects/%s/regions/%s/operations/%s" % key)
        return op

    def op_get(self, req):
        return self._region_op(req).to_json(self.f.now())

    def op_wait(self, req):
        """As zoneOperations.wait: until DONE or cfg.wait_max_seconds."""
        op = self._region_op(req)
        deadline = time.time() + self.f.cfg["wait_max_seconds"]
        while op.status(self.f.now()) != "DONE" and time.time() < deadline:
            self.f.lock.release()
            try:
                time.sleep(0.02)
            finally:
                self.f.lock.acquire()
            self.f.tick()
        return op.to_json(self.f.now())


def routes(fake):
    c = Policies(fake)
    R = r"/compute/v1/projects/(?P<project>[^/]+)/regions/(?P<region>[^/]+)"
    return [
        ("POST", R + "/resourcePolicies", "compute",
         "compute.resourcePolicies.insert", c.insert, "ResourcePolicy",
         "resourcePolicy"),
        ("GET", R + r"/resourcePolicies/(?P<policy>[^/]+)", "compute",
         "compute.resourcePolicies.get", c.get),
        ("DELETE", R + r"/resourcePolicies/(?P<policy>[^/]+)", "compute",
         "compute.resourcePolicies.delete", c.delete),
        ("GET", R + r"/operations/(?P<operation>[^/]+)", "compute",
         "compute.regionOperations.get", c.op_get),
        ("POST", R + r"/operations/(?P<operation>[^/]+)/wait", "compute",
         "compute.regionOperations.wait", c.op_wait),
    ]
