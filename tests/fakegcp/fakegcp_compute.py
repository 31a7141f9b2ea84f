"""Compute Engine (compute v1; discovery document
https://compute.googleapis.com/discovery/v1/apis/compute/v1/rest, DESIGN GA and C): projects.get, regions, zones, acceleratorTypes, instances
(insert, get, list, aggregatedList, delete, getGuestAttributes) and
zoneOperations (get, wait, list), images.getFromFamily of the public
boot image families gpuq uses, with Operations, the simulated VM
lifecycle and Compute's quota and stockout errors.
"""
import hashlib
import json
import re
import secrets
import time

import fakegcp_catalog as cat
import fakegcp_flex as flexmod
import fakegcp_project
import fakegcp_paging as paging
from fakegcp_errors import ApiError, not_found
from fakegcp_quota import DEFAULT_LIMITS
from fakegcp_sim import Resource, rfc3339

COMPUTE_LINK = "https://www.googleapis.com/compute/v1/"
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
NAME_RE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")


class Operation:
    """A Compute zonal Operation (DESIGN GC.3).  Status follows the
    simulated clock: PENDING until ``start``, RUNNING until ``end``, DONE."""

    def __init__(self, fake, project, zone, op_type, target, insert, start,
                 end, request_id=None, target_id=None, user=None):
        self.fake = fake
        self.project = project
        self.zone = zone
        self.id = str(next(fake.ids))
        self.name = "operation-%d-%s" % (int(insert * 1000),
                                         secrets.token_hex(8))
        self.op_type = op_type
        self.target = target
        self.target_id = target_id
        self.insert, self.start, self.end = insert, start, end
        self.request_id = request_id
        self.error = None
        self.http_status = None
        self.user = user or "gpuq@%s.iam.gserviceaccount.com" % project

    def status(self, now):
        if now < self.start:
            return "PENDING"
        if now < self.end:
            return "RUNNING"
        return "DONE"

    # what a list filter can read without building the JSON (paging.scan_page)
    VIEW_PATHS = (("name",), ("operationType",), ("targetLink",),
                  ("status",), ("user",))

    def filter_view(self, now):
        return {"name": self.name, "operationType": self.op_type,
                "targetLink": self.target, "status": self.status(now),
                "user": self.user}

    def to_json(self, now):
        st = self.status(now)
        zl = COMPUTE_LINK + "projects/%s/zones/%s" % (self.project, self.zone)
        o = {"kind": "compute#operation", "id": self.id, "name": self.name,
             "zone": zl, "operationType": self.op_type,
             "targetLink": self.target, "status": st,
             "user": self.user,
             "progress": {"PENDING": 0, "RUNNING": 50, "DONE": 100}[st],
             "insertTime": rfc3339(self.insert, True),
             "selfLink": zl + "/operations/" + self.name}
        if self.target_id:
            o["targetId"] = self.target_id
        if st != "PENDING":
            o["startTime"] = rfc3339(self.start, True)
        if st == "DONE":
            o["endTime"] = rfc3339(self.end, True)
            if self.error:
                o["error"] = self.error
                o["httpErrorStatusCode"] = self.http_status
                o["httpErrorMessage"] = {
                    403: "FORBIDDEN", 503: "SERVICE UNAVAILABLE",
                    400: "BAD REQUEST"}.get(self.http_status, "ERROR")
        if self.request_id:
            o["clientOperationId"] = self.request_id
        return o


IMPLICIT_GPUS = [  # accelerator-optimised machine types carry their GPUs
    (r"^a2-highgpu-(\d+)g$", "nvidia-tesla-a100"),
    (r"^a2-megagpu-(\d+)g$", "nvidia-tesla-a100"),
    (r"^a2-ultragpu-(\d+)g$", "nvidia-a100-80gb"),
    (r"^a3-highgpu-(\d+)g$", "nvidia-h100-80gb"),
    (r"^a3-megagpu-(\d+)g$", "nvidia-h100-mega-80gb"),
    (r"^a3-ultragpu-(\d+)g$", "nvidia-h200-141gb"),
    (r"^a4-highgpu-(\d+)g$", "nvidia-b200"),
]
G2_GPUS = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}


def implicit_gpu(machine):
    m = machine.rsplit("/", 1)[-1]
    for rx, gpu in IMPLICIT_GPUS:
        mm = re.match(rx, m)
        if mm:
            return gpu, int(mm.group(1))
    mm = re.match(r"^g2-standard-(\d+)$", m)
    if mm:
        return "nvidia-l4", G2_GPUS.get(int(mm.group(1)), 1)
    return None, 0


class Instance(Resource):
    """A Compute Engine VM (DESIGN GC.1/C.2): PROVISIONING -> STAGING ->
    RUNNING; the job's container "runs" from RUNNING; when it finishes the
    guest attribute gpuq/exit-code is set and the VM shuts itself down
    (TERMINATED, operation compute.instances.guestTerminate)."""
    service = "compute"

    def __init__(self, fake, project, zone, body, now, vcpus, gpu, count,
                 spot):
        Resource.__init__(self, fake, project, body["name"],
                          cat.ZONE_REGION[zone], zone, body.get("labels"),
                          spot, now)
        self.body = body
        self.id = str(next(fake.ids))
        self.status = "PROVISIONING"
        self.vcpus = vcpus
        self.gpu = gpu
        self.gpu_count = count
        self.guest = {}
        self.last_start = None
        self.last_stop = None
        self.status_message = None

    def full_name(self):
        return "projects/%s/zones/%s/instances/%s" % (self.project, self.zone,
                                                      self.name)

    def link(self):
        return COMPUTE_LINK + self.full_name()

    def state(self):
        return self.status

    def live(self):
        return not self.deleted and self.status not in ("TERMINATED",
                                                        "STOPPED")

    def quota_use(self):
        """(vCPUs, VMs) this VM holds against Compute quotas
        (fakegcp_quota.py); None in a reservation, which holds them."""
        if getattr(self, "resv_key", None):
            return None
        return self.vcpus, 1

    def machine_name(self):
        return (self.body.get("machineType") or "").rsplit("/", 1)[-1]

    def system_op(self, op_type, t):
        """A DONE Operation by "system" about this VM (preemption, host
        maintenance, host error, guest shutdown)."""
        op = Operation(self.fake, self.project, self.zone, op_type,
                       self.link(), t, t, t, target_id=self.id,
                       user="system")
        self.fake.ops[(self.project, self.zone, op.name)] = op
        return op

    def remove(self, t):
        """The VM is gone (deleted, or Spot with termination action
        DELETE)."""
        self.deleted = True
        self.ended = self.ended or t
        for r in self.runs:
            r.stop(t, "deleted")
        self.fake.instances.pop((self.project, self.zone, self.name), None)
        self.fake.removed.append(self)

    VIEW_PATHS = (("name",), ("status",), ("labels",), ("id",))

    def filter_view(self, now):
        v = {"name": self.name, "status": self.status, "id": self.id}
        if "labels" in self.body:
            v["labels"] = self.body["labels"]
        return v

    def job_env(self):
        for it in (self.body.get("metadata") or {}).get("items") or []:
            if it.get("key") == "gpuq-job":
                try:
                    spec = json.loads(it.get("value") or "{}")
                    env = spec.get("env") or {}
                    return {str(k): str(v) for k, v in env.items()}
                except (ValueError, AttributeError):
                    return None
        return None

    def network_ip(self):
        """The VM's internal address (networkInterfaces[0].networkIP)."""
        return "10.128.%d.%d" % ((int(self.id) >> 8) % 250,
                                 int(self.id) % 250 + 2)

    def metadata(self, key):
        for it in (self.body.get("metadata") or {}).get("items") or []:
            if it.get("key") == key:
                return it.get("value")
        return None

    def gang_env(self, env):
        """What gce-startup.sh adds for a node of a gang: the main node's
        address, from the metadata key gpuq-main-addr or, on the main
        node, its own."""
        try:
            if int(env.get("GPUQ_NUM_NODES") or 1) < 2:
                return
        except ValueError:
            return
        addr = self.metadata("gpuq-main-addr") or self.network_ip()
        env["GPUQ_MAIN_ADDR"] = env["MASTER_ADDR"] = addr

    def flex_wait(self, now, valid):
        """A flex-start VM (fakegcp_flex.py): PENDING until capacity
        comes, then booted; deleted if its request expires first."""
        self.flex = True
        self.status = "PENDING"
        prov = self.fake.cfg["provision_seconds"]

        def fulfil(t):
            if self.deleted or self.status != "PENDING":
                return
            self.status = "PROVISIONING"
            self.boot(t + prov * 0.5, t + prov)

        def expire(t):
            if not self.deleted and self.status == "PENDING":
                self.remove(t)
        flexmod.wait(self.fake, now, valid, fulfil, expire)

    def boot(self, t_stage, t_run):
        f = self.fake
        f.at(t_stage, lambda t: self._set("STAGING", "PROVISIONING"))
        f.at(t_run, self._running)

    def _set(self, new, expect):
        if self.status == expect and not self.deleted:
            self.status = new

    def _running(self, t):
        if self.deleted or self.status != "STAGING":
            return
        self.status = "RUNNING"
        self.last_start = t
        self.started = self.started or t
        env = self.job_env()
        if env is not None:
            self.gang_env(env)
            self.new_run(env).start(t)

    def exit_object(self):
        """The gpuq-job's exit_object as (bucket, name), or None."""
        for it in (self.body.get("metadata") or {}).get("items") or []:
            if it.get("key") == "gpuq-job":
                try:
                    uri = json.loads(it.get("value") or "{}").get(
                        "exit_object")
                except (ValueError, AttributeError):
                    return None
                if isinstance(uri, str) and uri.startswith("gs://"):
                    b, _, n = uri[5:].partition("/")
                    return (b, n) if b and n else None
        return None

    def on_run_end(self, t, code):
        self.exit_code = code
        eo = self.exit_object()
        if eo:
            # what gce-startup.sh writes before the guest attribute
            self.fake.storage_put(eo[0], eo[1], json.dumps(
                {"exit-code": str(code)}).encode(), t, "application/json")
        self.guest[("gpuq", "exit-code")] = str(code)
        self.system_op("compute.instances.guestTerminate",
                                    t)
        self.status = "STOPPING"
        self.fake.at(t + 1, lambda tt: self._stopped(tt))

    def _stopped(self, t):
        if self.deleted:
            return
        self.status = "TERMINATED"
        self.last_stop = t
        self.ended = t

    def interrupt(self, t, op_type, reason):
        """Preemption / host maintenance: STOPPING, then TERMINATED or
        (Spot with instanceTerminationAction DELETE) deleted."""
        for r in self.runs:
            r.stop(t, reason)
        self.system_op(op_type, t)
        self.status = "STOPPING"
        if self.runs and ("gpuq", "exit-code") not in self.guest:
            # The guest gets an ACPI shutdown and ~30 s: docker stops the
            # container with SIGTERM and the startup script reports what
            # it saw, 143, before the VM is cut off (Compute Engine
            # "Preemption process").  The operation says what happened.
            self.guest[("gpuq", "exit-code")] = "143"
        sched = self.body.get("scheduling") or {}
        delete = sched.get("instanceTerminationAction") == "DELETE" and \
            reason == "preempted"

        def done(tt):
            if self.deleted:
                return
            if delete:
                self.remove(tt)
            else:
                self._stopped(tt)
        self.fake.at(t + self.fake.cfg["stop_seconds"], done)

    def to_json(self, now):
        zl = COMPUTE_LINK + "projects/%s/zones/%s" % (self.project, self.zone)
        b = json.loads(json.dumps(self.body))
        b.update({"kind": "compute#instance", "id": self.id,
                  "creationTimestamp": rfc3339(self.created, True),
                  "zone": zl, "status": self.status,
                  "selfLink": self.link(),
                  "cpuPlatform": "Intel Broadwell",
                  "labelFingerprint": "42WmSpB8rSM=",
                  "fingerprint": hashlib.md5(self.id.encode()).hexdigest()[:12],
                  "startRestricted": False, "deletionProtection": False})
        mt = b.get("machineType", "")
        b["machineType"] = zl + "/machineTypes/" + mt.rsplit("/", 1)[-1]
        for g in b.get("guestAccelerators") or []:
            g["acceleratorType"] = zl + "/acceleratorTypes/" + \
                str(g.get("acceleratorType", "")).rsplit("/", 1)[-1]
        s = b.setdefault("scheduling", {})
        spot = self.spot
        s.setdefault("provisioningModel", "SPOT" if spot else "STANDARD")
        s.setdefault("preemptible", bool(s.get("preemptible")))
        s.setdefault("onHostMaintenance", "TERMINATE" if spot else "MIGRATE")
        s.setdefault("automaticRestart", not spot)
        if spot:
            s.setdefault("instanceTerminationAction", "STOP")
        md = b.setdefault("metadata", {})
        md["kind"] = "compute#metadata"
        md.setdefault("fingerprint", "9YmRtsm2Ikw=")
        for i, d in enumerate(b.get("disks") or []):
            d.setdefault("kind", "compute#attachedDisk")
            d.setdefault("type", "PERSISTENT")
            d.setdefault("mode", "READ_WRITE")
            d.setdefault("deviceName", "persistent-disk-%d" % i)
            d["index"] = i
            d["source"] = zl + "/disks/" + (self.name if i == 0 else
                                            "%s-%d" % (self.name, i))
            d.pop("initializeParams", None)
        for i, n in enumerate(b.get("networkInterfaces") or []):
            n["kind"] = "compute#networkInterface"
            n["name"] = "nic%d" % i
            n["networkIP"] = self.network_ip()
            for a in n.get("accessConfigs") or []:
                a["kind"] = "compute#accessConfig"
                if self.status == "RUNNING":
                    a.setdefault("natIP", "34.%d.%d.%d" % (
                        int(self.id) % 250, (int(self.id) >> 4) % 250,
                        (int(self.id) >> 8) % 250))
        if self.last_start:
            b["lastStartTimestamp"] = rfc3339(self.last_start, True)
        if self.last_stop:
            b["lastStopTimestamp"] = rfc3339(self.last_stop, True)
        if self.status_message:
            b["statusMessage"] = self.status_message
        return b



def check_max_results(req):
    """Compute documents maxResults as 0..500 inclusive (A, 0.2)."""
    mr = req.q.get("maxResults")
    if mr and mr.isdigit() and int(mr) > 500:
        raise ApiError(400, "Invalid value for field 'maxResults': %s. Must "
                       "be less than or equal to 500" % mr, "invalid")


class Compute:
    """Compute Engine v1 (DESIGN GA, C)."""

    def __init__(self, fake):
        self.f = fake

    def _zone(self, req):
        z = req.params["zone"]
        if z not in cat.ZONE_REGION:
            raise not_found("projects/%s/zones/%s" % (req.params["project"],
                                                      z))
        return z

    def _list(self, req, kind, items, salt):
        """A short fixed list (regions, zones, accelerator types)."""
        check_max_results(req)
        items = paging.filter_items(req, items)
        page, nxt = paging.paginate(items, req, "maxResults", 500, 500, salt)
        return self._list_out(req, kind, page, nxt)

    def _list_out(self, req, kind, page, nxt):
        base = COMPUTE_LINK + req.path.split("/compute/v1/", 1)[1]
        out = {"kind": kind, "id": req.path, "items": page,
               "selfLink": base}
        if not page:
            out.pop("items")
            out["warning"] = {"code": "NO_RESULTS_ON_PAGE", "message":
                              "There are no results for scope on this page.",
                              "data": [{"key": "scope", "value": req.path}]}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def _aggregated(self, req, kind, key, by_zone, salt):
        """A short aggregated list (accelerator types)."""
        check_max_results(req)
        filt = paging.list_filter(req, "compute")
        down = self._unreachable(req)
        flat = [(z, o) for z in cat.ZONES if z not in down
                for o in by_zone.get(z, []) if filt.match(o)]
        page, nxt = paging.paginate(flat, req, "maxResults", 500, 500, salt)
        return self._aggregated_out(req, kind, key, page, nxt, down)

    def _unreachable(self, req):
        """Zones an aggregated list skips (cfg unreachable_zones, DESIGN G0.2): fine with returnPartialSuccess=true, else a 503."""
        down = [z for z in self.f.cfg["unreachable_zones"] if z in
                cat.ZONE_REGION]
        if down and req.q.get("returnPartialSuccess", "").lower() not in (
                "true", "1"):
            raise ApiError(503, "The zone 'projects/%s/zones/%s' is "
                           "unreachable. Set returnPartialSuccess=true to "
                           "get the results of the other zones." % (
                               req.params["project"], down[0]),
                           "backendError")
        return set(down)

    def _aggregated_out(self, req, kind, key, page, nxt, down=()):
        """Aggregated lists: map "zones/Z" -> {key: [...]} (A.3, C.2); the
        page holds up to maxResults resources across scopes; ``page`` is
        [(zone, JSON)]; ``down``: zones listed in `unreachables`."""
        items = {}
        for z, o in page:
            items.setdefault("zones/" + z, {key: []})[key].append(o)
        for z in cat.ZONES:
            if z in down:
                items["zones/" + z] = {"warning": {
                    "code": "UNREACHABLE",
                    "message": "Scope 'zones/%s' is unreachable." % z,
                    "data": [{"key": "scope", "value": "zones/" + z}]}}
                continue
            items.setdefault("zones/" + z, {"warning": {
                "code": "NO_RESULTS_ON_PAGE",
                "message": "There are no results for scope 'zones/%s' on "
                           "this page." % z,
                "data": [{"key": "scope", "value": "zones/" + z}]}})
        out = {"kind": kind, "id": req.path, "items": items,
               "selfLink": COMPUTE_LINK + req.path.split("/compute/v1/")[1]}
        if nxt:
            out["nextPageToken"] = nxt
        if down:
            out["unreachables"] = ["zones/" + z for z in cat.ZONES
                                   if z in down]
        return out

    # -- regions, zones, accelerator types -------------------------------------
    def region_json(self, project, region, use):
        """A Region.  Quota lookup is fail-open (A.1): when the fake is told
        the region's quota data is unavailable the answer has no `quotas`
        and a quotaStatusWarning instead, or -- with the org policy
        compute.requireBasicQuotaInResponse enforced -- the call fails."""
        r = {"kind": "compute#region", "id": str(1000 + cat.REGIONS.index(
            region)), "name": region, "status": "UP",
            "description": region,
            "zones": [COMPUTE_LINK + "projects/%s/zones/%s" % (project, z)
                      for z in cat.REGION_ZONES[region]],
            "selfLink": COMPUTE_LINK + "projects/%s/regions/%s" % (project,
                                                                   region)}
        if not self.f.quota_info_unavailable(region):
            r["quotas"] = self.f.region_quotas(project, region, use)
        elif self.f.cfg["require_basic_quota_in_response"]:
            raise ApiError(503, "Quota information for region '%s' is not "
                           "available and the organization policy "
                           "constraint compute.requireBasicQuotaInResponse "
                           "is enforced. Try again later." % region,
                           "backendError")
        else:
            # the code's documented meaning (compute v1, 2026 revision)
            r["quotaStatusWarning"] = {
                "code": "QUOTA_INFO_UNAVAILABLE",
                "message": "Quota information is not available to client "
                           "requests (e.g: regions.list).",
                "data": [{"key": "region", "value": region}]}
        return r

    def regions_get(self, req):
        p, r = req.params["project"], req.params["region"]
        if r not in cat.REGIONS:
            raise not_found("projects/%s/regions/%s" % (p, r))
        return self.region_json(p, r, self.f.usage_table(p))

    def regions_list(self, req):
        p = req.params["project"]
        use = self.f.usage_table(p)
        return self._list(req, "compute#regionList",
                          [self.region_json(p, r, use) for r in cat.REGIONS],
                          "regions")

    def projects_get(self, req):
        p = req.params["project"]
        use = self.f.usage_table(p)
        ms = sorted(set(DEFAULT_LIMITS) | {m for (pp, r, m) in self.f.limits
                                           if pp == p and r == "global"})
        return {"kind": "compute#project", "name": p,
                "id": self.f.project_number(p),
                "quotas": [{"metric": m,
                            "limit": float(self.f.limit(p, "global", m)),
                            "usage": float(use.get(("global", m), 0.0))}
                           for m in ms],
                "selfLink": COMPUTE_LINK + "projects/" + p,
                "defaultServiceAccount":
                    "%s-compute@developer.gserviceaccount.com" %
                    self.f.project_number(p),
                "xpnProjectStatus": "UNSPECIFIED_XPN_PROJECT_STATUS"}

    def zone_json(self, p, z):
        return {"kind": "compute#zone", "id": str(2000 + cat.ZONES.index(z)),
                "name": z, "status": "UP", "description": z,
                "region": COMPUTE_LINK + "projects/%s/regions/%s" % (
                    p, cat.ZONE_REGION[z]),
                "availableCpuPlatforms": ["Intel Broadwell",
                                          "Intel Cascade Lake",
                                          "AMD Milan"],
                "selfLink": COMPUTE_LINK + "projects/%s/zones/%s" % (p, z)}

    def zones_list(self, req):
        p = req.params["project"]
        return self._list(req, "compute#zoneList",
                          [self.zone_json(p, z) for z in cat.ZONES], "zones")

    def zones_get(self, req):
        return self.zone_json(req.params["project"], self._zone(req))

    def acc_json(self, p, z, t):
        g = cat.BY_TYPE[t]
        return {"kind": "compute#acceleratorType",
                "id": str(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)),
                "name": t, "description": g["desc"], "zone": z,
                "maximumCardsPerInstance": cat.ZONE_GPUS[z][t],
                "selfLink": COMPUTE_LINK + "projects/%s/zones/%s/"
                "acceleratorTypes/%s" % (p, z, t)}

    def acc_list(self, req):
        p, z = req.params["project"], self._zone(req)
        return self._list(req, "compute#acceleratorTypeList",
                          [self.acc_json(p, z, t)
                           for t in sorted(cat.ZONE_GPUS[z])], "acc" + z)

    def acc_get(self, req):
        p, z = req.params["project"], self._zone(req)
        t = req.params["type"]
        if t not in cat.ZONE_GPUS[z]:
            raise not_found("projects/%s/zones/%s/acceleratorTypes/%s" % (
                p, z, t))
        return self.acc_json(p, z, t)

    def acc_aggregated(self, req):
        p = req.params["project"]
        return self._aggregated(
            req, "compute#acceleratorTypeAggregatedList", "acceleratorTypes",
            {z: [self.acc_json(p, z, t) for t in sorted(cat.ZONE_GPUS[z])]
             for z in cat.ZONES}, "aggacc")

    # -- instances ---------------------------------------------------------------
    def _bad(self, field, msg):
        raise ApiError(400, "Invalid value for field '%s': %s" % (field, msg),
                       "invalid")

    def insert(self, req):
        f = self.f
        p, z = req.params["project"], self._zone(req)
        region = cat.ZONE_REGION[z]
        b = req.body
        rid = req.q.get("requestId")
        now = f.now()
        if rid is not None:
            if not UUID_RE.match(rid) or rid.strip("0-") == "":
                self._bad("requestId", "'%s'. The requestId must be a valid "
                          "UUID and cannot be the zero UUID." % rid)
            op = f.request_ids.get((p, rid))
            if op is not None:
                return op.to_json(now)      # retried call: same Operation
        name = b.get("name")
        if not name:
            raise ApiError(400, "Required field 'resource.name' not "
                           "specified", "required")
        if not NAME_RE.match(name):
            self._bad("resource.name", "'%s'. Must be a match of regex "
                      "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'" % name)
        if b.get("resourcePolicies"):
            import fakegcp_policy       # it imports this module
            fakegcp_policy.check_instance(f, p, region, b)
        mt = b.get("machineType")
        if not mt:
            raise ApiError(400, "Required field 'resource.machineType' not "
                           "specified", "required")
        mz = re.search(r"zones/([^/]+)/machineTypes/", mt)
        if mz and mz.group(1) != z:
            self._bad("resource.machineType", "'%s'. Machine type zone "
                      "must match the instance zone." % mt)
        info = cat.machine_info(mt)
        if info is None:
            self._bad("resource.machineType", "'%s'. Machine type with name "
                      "'%s' does not exist in zone '%s'." % (
                          mt, mt.rsplit("/", 1)[-1], z))
        fakegcp_project.check_compute(f, p, z, b)
        gpu, count = implicit_gpu(mt)
        accs = b.get("guestAccelerators") or []
        if accs:
            a = accs[0]
            at = str(a.get("acceleratorType", ""))
            m = re.search(r"zones/([^/]+)/acceleratorTypes/", at)
            gname = at.rsplit("/", 1)[-1]
            if (m and m.group(1) != z) or \
                    gname not in cat.ZONE_GPUS.get(z, {}):
                self._bad("resource.guestAccelerators[0].acceleratorType",
                          "'%s'. Accelerator type '%s' is not available in "
                          "zone '%s'." % (at, gname, z))
            count = int(a.get("acceleratorCount") or 0)
            mx = cat.ZONE_GPUS[z][gname]
            if count < 1 or count > mx:
                self._bad("resource.guestAccelerators[0].acceleratorCount",
                          "'%d'. Accelerator count must be between 1 and %d "
                          "for accelerator type '%s'." % (count, mx, gname))
            gpu = gname
        elif gpu and gpu not in cat.ZONE_GPUS.get(z, {}):
            self._bad("resource.machineType", "'%s'. Machine type is not "
                      "available in zone '%s'." % (mt, z))
        sched = b.get("scheduling") or {}
        spot = sched.get("provisioningModel") == "SPOT" or \
            bool(sched.get("preemptible"))
        flex = sched.get("provisioningModel") == "FLEX_START"
        valid = flexmod.check_compute(b) if flex else None
        if spot and sched.get("automaticRestart") is True:
            self._bad("resource.scheduling.automaticRestart", "'true'. "
                      "Preemptible and Spot instances cannot be automatically "
                      "restarted.")
        if gpu and not spot and sched.get("onHostMaintenance",
                                          "MIGRATE") != "TERMINATE":
            raise ApiError(400, "Instances with guest accelerators do not "
                           "support live migration.", "invalid")
        if (p, z, name) in f.instances:
            raise ApiError(409, "The resource 'projects/%s/zones/%s/"
                           "instances/%s' already exists" % (p, z, name),
                           "alreadyExists")
        import fakegcp_reservation      # it imports this module
        resv = fakegcp_reservation.check_insert(
            f, p, z, b, mt.rsplit("/", 1)[-1], gpu, count, spot)
        link = COMPUTE_LINK + "projects/%s/zones/%s/instances/%s" % (p, z,
                                                                     name)
        opsec = f.cfg["op_seconds"]
        op = Operation(f, p, z, "insert", link, now, now + opsec * 0.25,
                       now + opsec, request_id=rid)
        # a reserved VM draws on its reservation, not on quota or on the
        # zone's free capacity
        quota = None if resv else f.compute_quota_check(
            p, region, gpu, count, info[0], spot or flex,
            mt.rsplit("/", 1)[-1])
        if quota and f.cfg["compute_quota_error"] != "operation":
            msg, metric, lim, qreg = quota
            raise ApiError(403, msg, "quotaExceeded")
        f.ops[(p, z, op.name)] = op
        if rid:
            f.request_ids[(p, rid)] = op
        if quota:
            msg, metric, lim, qreg = quota
            qi = {"metricName": "compute.googleapis.com/%s" %
                  metric.lower(), "limitName": "%s-per-project%s" % (
                      metric.replace("_", "-"), "-region" if qreg else ""),
                  "limit": lim}
            if qreg:
                qi["dimensions"] = {"region": qreg}
            op.error = {"errors": [{"code": "QUOTA_EXCEEDED",
                                    "message": msg,
                                    "errorDetails": [{"quotaInfo": qi}]}]}
            op.http_status = 403
            return op.to_json(now)
        so = f.stocked_out(z, gpu, spot) if gpu and not resv else None
        if so:
            code = "ZONE_RESOURCE_POOL_EXHAUSTED"
            msg = ("The zone 'projects/%s/zones/%s' does not have enough "
                   "resources available to fulfill the request.  Try a "
                   "different zone, or try again later." % (p, z))
            meta = {"zone": z, "vmType": mt.rsplit("/", 1)[-1],
                    "attachment": "%s:%d" % (gpu, count)}
            if so.get("with_details"):
                code += "_WITH_DETAILS"
                msg = ("A %s VM instance with %d accelerator(s) of type %s "
                       "is currently unavailable in the %s zone. Consider "
                       "trying your request in the %s zone(s), which "
                       "currently has capacity to accommodate your request. "
                       "Alternatively, you can try your request again with "
                       "a different VM hardware configuration or at a later "
                       "time. For more information, see the troubleshooting "
                       "documentation. Try a different zone, or try again "
                       "later." % (meta["vmType"], count, gpu, z,
                                   ",".join(so.get("zones_available") or [])))
                meta["zonesAvailable"] = ",".join(
                    so.get("zones_available") or [])
            op.error = {"errors": [{
                "code": code, "message": msg,
                "errorDetails": [
                    {"errorInfo": {"reason": code,
                                   "domain": "compute.googleapis.com",
                                   "metadatas": meta}},
                    {"help": {"links": [{
                        "description": "Troubleshooting documentation",
                        "url": "https://cloud.google.com/compute/docs/"
                               "resource-error"}]}},
                    {"localizedMessage": {"locale": "en-US",
                                          "message": msg}}]}]}
            op.http_status = 503
            return op.to_json(now)
        body = json.loads(json.dumps(b))
        inst = Instance(f, p, z, body, now, info[0], gpu, count, spot)
        inst.resv_key = resv
        op.target_id = inst.id
        f.instances[(p, z, name)] = inst
        prov = f.cfg["provision_seconds"]
        if flex:
            inst.flex_wait(now, valid)
            return op.to_json(now)
        inst.boot(now + prov * 0.5, now + prov)
        return op.to_json(now)

    def _inst(self, req):
        p, z = req.params["project"], self._zone(req)
        i = self.f.instances.get((p, z, req.params["instance"]))
        if i is None:
            raise not_found("projects/%s/zones/%s/instances/%s" % (
                p, z, req.params["instance"]))
        return i

    def get(self, req):
        return self._inst(req).to_json(self.f.now())

    def delete(self, req):
        f = self.f
        p, z = req.params["project"], self._zone(req)
        rid = req.q.get("requestId")
        now = f.now()
        if rid is not None:
            if not UUID_RE.match(rid):
                self._bad("requestId", "'%s'. The requestId must be a valid "
                          "UUID." % rid)
            op = f.request_ids.get((p, rid))
            if op is not None:
                return op.to_json(now)
        inst = self._inst(req)
        opsec = f.cfg["op_seconds"]
        op = Operation(f, p, z, "delete", inst.link(), now,
                       now + opsec * 0.25, now + opsec, request_id=rid,
                       target_id=inst.id)
        f.ops[(p, z, op.name)] = op
        if rid:
            f.request_ids[(p, rid)] = op
        for r in inst.runs:
            r.stop(now, "deleted")
        if inst.status != "TERMINATED":
            inst.status = "STOPPING"
        f.at(now + opsec, lambda t: inst.remove(t))
        return op.to_json(now)

    def list(self, req):
        p, z = req.params["project"], self._zone(req)
        check_max_results(req)
        page, nxt = paging.scan_page(
            req, [(0, self.f.instances.index("name", (p, z)))],
            paging.page_size(req, "maxResults", 500, 500),
            paging.list_filter(req, "compute"), Instance, self.f.now(),
            paging.list_salt(req, "i", p, z))
        return self._list_out(req, "compute#instanceList",
                              [j for _, j in page], nxt)

    def aggregated(self, req):
        p = req.params["project"]
        check_max_results(req)
        down = self._unreachable(req)
        idx = self.f.instances.index
        sources = [(n, idx("name", (p, z))) for n, z in enumerate(cat.ZONES)
                   if len(idx("name", (p, z))) and z not in down]
        page, nxt = paging.scan_page(
            req, sources, paging.page_size(req, "maxResults", 500, 500),
            paging.list_filter(req, "compute"), Instance, self.f.now(),
            paging.list_salt(req, "aggi", p))
        return self._aggregated_out(
            req, "compute#instanceAggregatedList", "instances",
            [(cat.ZONES[n], j) for n, j in page], nxt, down)

    def guest_attributes(self, req):
        inst = self._inst(req)
        if not self.f.cfg["guest_attributes_after_stop"] and \
                inst.status in ("TERMINATED", "STOPPED", "SUSPENDED"):
            # unsettled (DESIGN GC.6): attributes gone with the stop
            raise not_found("projects/%s/zones/%s/instances/%s/"
                            "guestAttributes/%s" % (
                                inst.project, inst.zone, inst.name,
                                req.q.get("queryPath") or
                                req.q.get("variableKey") or ""))
        qp = req.q.get("queryPath")
        vk = req.q.get("variableKey")
        base = {"kind": "compute#guestAttributes",
                "selfLink": inst.link() + "/guestAttributes/" + (
                    qp or vk or "")}
        if vk:
            ns, _, key = vk.partition("/")
            if (ns, key) not in inst.guest:
                raise not_found("projects/%s/zones/%s/instances/%s/"
                                "guestAttributes/%s" % (inst.project,
                                                        inst.zone, inst.name,
                                                        vk))
            base.update(variableKey=vk, variableValue=inst.guest[(ns, key)])
            return base
        qp = qp or ""
        ns, _, kp = qp.partition("/")
        items = [{"namespace": n, "key": k, "value": v}
                 for (n, k), v in sorted(inst.guest.items())
                 if (not ns or n == ns) and k.startswith(kp)]
        base["queryPath"] = qp
        base["queryValue"] = {"items": items} if items else {}
        return base

    # -- operations ------------------------------------------------------------
    def _op(self, req):
        p, z = req.params["project"], self._zone(req)
        op = self.f.ops.get((p, z, req.params["operation"]))
        if op is None:
            raise not_found("projects/%s/zones/%s/operations/%s" % (
                p, z, req.params["operation"]))
        return op

    def op_get(self, req):
        return self._op(req).to_json(self.f.now())

    def op_wait(self, req):
        """Blocks (real time, lock released) until DONE or
        cfg.wait_max_seconds; then returns the Operation (C.3)."""
        op = self._op(req)
        deadline = time.time() + self.f.cfg["wait_max_seconds"]
        while op.status(self.f.now()) != "DONE" and time.time() < deadline:
            self.f.lock.release()
            try:
                time.sleep(0.02)
            finally:
                self.f.lock.acquire()
            self.f.tick()
        return op.to_json(self.f.now())

    def op_list(self, req):
        p, z = req.params["project"], self._zone(req)
        check_max_results(req)
        page, nxt = paging.scan_page(
            req, [(0, self.f.ops.index("insert", (p, z)))],
            paging.page_size(req, "maxResults", 500, 500),
            paging.list_filter(req, "compute"), Operation, self.f.now(),
            paging.list_salt(req, "op", p, z))
        return self._list_out(req, "compute#operationList",
                              [j for _, j in page], nxt)



# The public image families the fake knows: (project, family) -> the
# newest image's name. Google's Deep Learning VM family gpuq boots its VMs
# from (providers/gce.c gce_boot_image).
IMAGE_FAMILIES = {
    ("deeplearning-platform-release", "common-cu128-ubuntu-2204-nvidia-570"):
    "common-cu128-ubuntu-2204-nvidia-570-v20251105",
}


def image_from_family(fake, req):
    """images.getFromFamily: the newest image of the family that is not
    deprecated, as an Image resource; when every image of the family is
    deprecated the newest comes back with its `deprecated` status
    (cfg boot_image "deprecated"); an unknown or deleted family is 404."""
    p, fam = req.params["project"], req.params["family"]
    name = IMAGE_FAMILIES.get((p, fam))
    if name is None or fake.cfg["boot_image"] == "missing":
        raise ApiError(404, "The resource 'projects/%s/global/images/family/"
                       "%s' was not found" % (p, fam), "notFound")
    link = COMPUTE_LINK + "projects/%s/global/images/" % p
    img = {"kind": "compute#image",
           "id": str(int(hashlib.sha256(name.encode()).hexdigest()[:15],
                         16)),
           "creationTimestamp": "2025-11-05T10:21:07.412-08:00",
           "name": name, "family": fam,
           "description": "Google, Deep Learning VM with CUDA 12.8, "
           "Ubuntu 22.04, NVIDIA driver 570, docker and the NVIDIA "
           "container toolkit.",
           "sourceType": "RAW", "status": "READY",
           "archiveSizeBytes": "31795436288", "diskSizeGb": "50",
           "licenses": [COMPUTE_LINK + "projects/click-to-deploy-images/"
                        "global/licenses/c2d-dl-platform-gpu-driver"],
           "guestOsFeatures": [{"type": "UEFI_COMPATIBLE"},
                               {"type": "VIRTIO_SCSI_MULTIQUEUE"},
                               {"type": "GVNIC"}],
           "storageLocations": ["eu", "asia", "us"],
           "architecture": "X86_64",
           "labelFingerprint": "42WmSpB8rSM=",
           "selfLink": link + name}
    if fake.cfg["boot_image"] == "deprecated":
        img["deprecated"] = {"state": "DEPRECATED",
                             "deprecated": "2025-11-20T00:00:00Z"}
    return img


def routes(fake):
    """Compute Engine's rows of the route table (fakegcp_server.py)."""
    c = Compute(fake)
    P = r"/compute/v1/projects/(?P<project>[^/]+)"
    Z = P + r"/zones/(?P<zone>[^/]+)"
    return [
        ("GET", P, "compute", "compute.projects.get", c.projects_get),
        ("GET", P + "/regions", "compute", "compute.regions.list",
         c.regions_list),
        ("GET", P + r"/regions/(?P<region>[^/]+)", "compute",
         "compute.regions.get", c.regions_get),
        ("GET", P + "/zones", "compute", "compute.zones.list", c.zones_list),
        ("GET", Z, "compute", "compute.zones.get", c.zones_get),
        ("GET", Z + "/acceleratorTypes", "compute",
         "compute.acceleratorTypes.list", c.acc_list),
        ("GET", Z + r"/acceleratorTypes/(?P<type>[^/]+)", "compute",
         "compute.acceleratorTypes.get", c.acc_get),
        ("GET", P + "/aggregated/acceleratorTypes", "compute",
         "compute.acceleratorTypes.aggregatedList", c.acc_aggregated),
        ("GET", Z + "/instances", "compute", "compute.instances.list",
         c.list),
        ("POST", Z + "/instances", "compute", "compute.instances.insert",
         c.insert, "Instance", "instance"),
        ("GET", Z + r"/instances/(?P<instance>[^/]+)", "compute",
         "compute.instances.get", c.get),
        ("DELETE", Z + r"/instances/(?P<instance>[^/]+)", "compute",
         "compute.instances.delete", c.delete),
        ("GET", Z + r"/instances/(?P<instance>[^/]+)/getGuestAttributes",
         "compute", "compute.instances.getGuestAttributes",
         c.guest_attributes),
        ("GET", P + "/aggregated/instances", "compute",
         "compute.instances.aggregatedList", c.aggregated),
        ("GET", Z + "/operations", "compute", "compute.zoneOperations.list",
         c.op_list),
        ("GET", Z + r"/operations/(?P<operation>[^/]+)", "compute",
         "compute.zoneOperations.get", c.op_get),
        ("POST", Z + r"/operations/(?P<operation>[^/]+)/wait", "compute",
         "compute.zoneOperations.wait", c.op_wait),
        ("GET", P + r"/global/images/family/(?P<family>[^/]+)", "compute",
         "compute.images.getFromFamily",
         lambda req: image_from_family(fake, req)),
    ] + fakegcp_project.compute_routes(fake)
