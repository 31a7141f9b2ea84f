#!/usr/bin/python3
"""fakegcp: a stateful simulation of the Google Cloud APIs gpuqd uses.

Start:  /usr/bin/python3 tests/fakegcp/fakegcp.py --port 0 --state-dir DIR
        [--speed F] [--project P] [--service-account-pubkey EMAIL=PATH]...
The first line on stdout is the base URL.  Every API lives under that one
URL with Google's own paths (DESIGN.md "The simulated Google Cloud"):

  POST /token                              OAuth token endpoint (H.3)
  GET  /computeMetadata/v1/...             metadata server (H.3)
  /compute/v1/projects/{p}/...             Compute Engine (A, C)
  /v1/projects/{p}/locations/{r}/jobs      Cloud Batch (D)
  /v1/projects/{p}/locations/{r}/customJobs Vertex AI (E)
  /v1/projects/{p}/locations/global/services/{s}/quotaInfos  Cloud Quotas (B)
  /v1/services[/{id}/skus]                 Cloud Billing Catalog (F)
  /storage/v1/b/{b}/o..., /upload/storage/v1/b/{b}/o  Cloud Storage (G)
  /_fake/...                               control API (README.md)

Letters refer to sections of /work/shared/gcp/API-NOTES.md.  Requests are
checked against the discovery schemas (fakegcp_schema.py); resources move
through their states on a simulated clock (fakegcp_sim.py).
"""
import argparse
import bisect
import hashlib
import heapq
import http.server
import itertools
import json
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fakegcp_auth as auth          # noqa: E402
import fakegcp_catalog as cat        # noqa: E402
import fakegcp_filter as flt         # noqa: E402
import fakegcp_schema as schema      # noqa: E402
import fakegcp_util as util          # noqa: E402
from fakegcp_sim import Clock, Run   # noqa: E402

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
COMPUTE_LINK = "https://www.googleapis.com/compute/v1/"

STATUS_NAME = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
               403: "PERMISSION_DENIED", 404: "NOT_FOUND",
               409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION",
               429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
               501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
               504: "DEADLINE_EXCEEDED"}
REASON = {400: "invalid", 401: "authError", 403: "forbidden",
          404: "notFound", 409: "alreadyExists", 412: "conditionNotMet",
          429: "rateLimitExceeded", 500: "backendError", 502: "backendError",
          503: "backendError", 504: "backendError"}
RPC_CODE = {"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3,
            "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5, "ALREADY_EXISTS": 6,
            "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
            "FAILED_PRECONDITION": 9, "ABORTED": 10, "INTERNAL": 13,
            "UNAVAILABLE": 14, "UNAUTHENTICATED": 16}
LEGACY_APIS = ("compute", "storage")   # errors[] style (H.5)
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                     r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
NAME_RE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
BATCH_ID_RE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")


class ApiError(Exception):
    """An error reply in Google's shape (API-NOTES H.5)."""

    def __init__(self, code, message, reason=None, status=None,
                 details=None, headers=None, errors=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.reason = reason or REASON.get(code, "invalid")
        self.status = status or STATUS_NAME.get(code, "UNKNOWN")
        self.details = details
        self.headers = headers or {}
        self.errors = errors

    def body(self, api):
        e = {"code": self.code, "message": self.message,
             "status": self.status}
        if api in LEGACY_APIS or api is None:
            e["errors"] = self.errors or [{"message": self.message,
                                           "domain": "global",
                                           "reason": self.reason}]
        if self.details:
            e["details"] = self.details
        elif api not in LEGACY_APIS and api is not None:
            e["details"] = [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.status, "domain": "googleapis.com"}]
        return {"error": e}


class OAuthError(Exception):
    def __init__(self, code, error, description):
        Exception.__init__(self, description)
        self.code, self.error, self.description = code, error, description


def not_found(what):
    return ApiError(404, "The resource '%s' was not found" % what, "notFound")


# ============================================================================
# Simulated resources
# ============================================================================
class Resource:
    """Common bookkeeping for /_fake/resources."""
    service = "?"

    def __init__(self, fake, project, name, region, zone, labels, spot,
                 created):
        self.fake = fake
        self.project = project
        self.name = name
        self.region = region
        self.zone = zone
        self.labels = dict(labels or {})
        self.spot = spot
        self.created = created
        self.started = None
        self.ended = None
        self.runs = []
        self.exit_code = None
        self.deleted = False
        self.gpu = None
        self.gpu_count = 0
        self.seq = next(fake.seq)

    def state(self):
        raise NotImplementedError

    def live(self):
        raise NotImplementedError

    def new_run(self, env, ckpt_default=None):
        r = Run(self.fake, self, env, ckpt_default)
        self.runs.append(r)
        return r

    def describe(self):
        run = self.runs[-1] if self.runs else None
        d = {"service": self.service, "project": self.project,
             "name": self.name, "resource": self.full_name(),
             "region": self.region, "zone": self.zone, "labels": self.labels,
             "state": self.state(), "spot": self.spot, "gpu": self.gpu,
             "gpu_count": self.gpu_count, "deleted": self.deleted,
             "created": self.created, "started": self.started,
             "ended": self.ended, "exit_code": self.exit_code,
             "start_progress": run.start_progress if run else None,
             "progress": run.progress if run else None,
             "work_done": sum(r.work_done for r in self.runs),
             "runs": [r.describe() for r in self.runs]}
        if run:
            d["job"] = run.job
            d["attempt"] = run.attempt
        return d


# -- Compute Engine -------------------------------------------------------------
class Operation:
    """A Compute zonal Operation (API-NOTES C.3).  Status follows the
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

    # what a list filter can read without building the JSON (_scan_page)
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
             "insertTime": util.rfc3339(self.insert, True),
             "selfLink": zl + "/operations/" + self.name}
        if self.target_id:
            o["targetId"] = self.target_id
        if st != "PENDING":
            o["startTime"] = util.rfc3339(self.start, True)
        if st == "DONE":
            o["endTime"] = util.rfc3339(self.end, True)
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
    """A Compute Engine VM (API-NOTES C.1/C.2): PROVISIONING -> STAGING ->
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
            self.new_run(env).start(t)

    def on_run_end(self, t, code):
        self.exit_code = code
        self.guest[("gpuq", "exit-code")] = str(code)
        self.fake.compute_system_op(self, "compute.instances.guestTerminate",
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
        self.fake.compute_system_op(self, op_type, t)
        self.status = "STOPPING"
        sched = self.body.get("scheduling") or {}
        delete = sched.get("instanceTerminationAction") == "DELETE" and \
            reason == "preempted"

        def done(tt):
            if self.deleted:
                return
            if delete:
                self.fake.compute_remove(self, tt)
            else:
                self._stopped(tt)
        self.fake.at(t + self.fake.cfg["stop_seconds"], done)

    def to_json(self, now):
        zl = COMPUTE_LINK + "projects/%s/zones/%s" % (self.project, self.zone)
        b = json.loads(json.dumps(self.body))
        b.update({"kind": "compute#instance", "id": self.id,
                  "creationTimestamp": util.rfc3339(self.created, True),
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
            n["networkIP"] = "10.128.%d.%d" % ((int(self.id) >> 8) % 250,
                                               int(self.id) % 250 + 2)
            for a in n.get("accessConfigs") or []:
                a["kind"] = "compute#accessConfig"
                if self.status == "RUNNING":
                    a.setdefault("natIP", "34.%d.%d.%d" % (
                        int(self.id) % 250, (int(self.id) >> 4) % 250,
                        (int(self.id) >> 8) % 250))
        if self.last_start:
            b["lastStartTimestamp"] = util.rfc3339(self.last_start, True)
        if self.last_stop:
            b["lastStopTimestamp"] = util.rfc3339(self.last_stop, True)
        if self.status_message:
            b["statusMessage"] = self.status_message
        return b


# -- Cloud Batch -----------------------------------------------------------------
BATCH_TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
RESERVED_EXIT = {
    50001: "Spot Preemption",
    50002: "Batch no longer receives VM updates",
    50003: "VM is rebooted during task execution",
    50004: "tasks cannot be canceled",
    50005: "task runs over the maximum runtime",
    50006: "VM is recreated during task execution",
}


class BatchJob(Resource):
    """A Cloud Batch job with one task group "group0" (API-NOTES D):
    QUEUED -> SCHEDULED -> RUNNING -> SUCCEEDED/FAILED, task exit codes and
    the reserved 5000x codes in statusEvents, lifecyclePolicies and
    maxRetryCount honoured."""
    service = "batch"

    def __init__(self, fake, project, region, job_id, body, now):
        Resource.__init__(self, fake, project, job_id, region, None,
                          body.get("labels"), False, now)
        self.body = body
        self.uid = "%s-%s" % (job_id[:40], uuid.uuid4().hex[:12])
        self.jstate = "QUEUED"
        self.events = []
        self.task_events = []
        self.task_state = "PENDING"
        self.task_exit = None
        self.retries = 0
        self.updated = now
        self.vm_id = None
        tg = body["taskGroups"][0]
        ts = tg.get("taskSpec") or {}
        self.task_count = int(tg.get("taskCount") or 1)
        self.max_retry = int(ts.get("maxRetryCount") or 0)
        mrd = ts.get("maxRunDuration")
        self.max_run = float(mrd[:-1]) if isinstance(mrd, str) and \
            re.match(r"^\d+(\.\d+)?s$", mrd) else None
        self.policies = ts.get("lifecyclePolicies") or []
        env = dict(((ts.get("environment") or {}).get("variables")) or {})
        rn = (ts.get("runnables") or [{}])[0]
        env.update(((rn.get("environment") or {}).get("variables")) or {})
        self.env = env
        ap = body.get("allocationPolicy") or {}
        inst = (ap.get("instances") or [{}])[0]
        pol = inst.get("policy") or {}
        self.machine = pol.get("machineType") or "e2-standard-2"
        self.pmodel = pol.get("provisioningModel") or "STANDARD"
        self.spot = self.pmodel in ("SPOT", "PREEMPTIBLE")
        acc = (pol.get("accelerators") or [{}])[0]
        self.gpu = acc.get("type")
        self.gpu_count = int(acc.get("count") or 0) if self.gpu else 0
        if not self.gpu:
            self.gpu, self.gpu_count = implicit_gpu(self.machine)
        self.allowed = ((ap.get("location") or {}).get("allowedLocations")
                        or [])

    def full_name(self):
        return "projects/%s/locations/%s/jobs/%s" % (self.project,
                                                     self.region, self.name)

    def state(self):
        return self.jstate

    def live(self):
        return not self.deleted and self.jstate not in BATCH_TERMINAL

    VIEW_PATHS = (("name",), ("uid",), ("labels",), ("status", "state"))

    def filter_view(self, now):
        v = {"name": self.full_name(), "uid": self.uid,
             "status": {"state": self.jstate}}
        if "labels" in self.body:
            v["labels"] = self.body["labels"]
        return v

    def _event(self, t, desc, etype="STATUS_CHANGED", **extra):
        e = {"type": etype, "description": desc,
             "eventTime": util.rfc3339(t)}
        e.update(extra)
        self.events.append(e)
        self.updated = t

    def _job_state(self, t, new, suffix="", **extra):
        old = self.jstate
        self.jstate = new
        self._event(t, "Job state is set from %s to %s for job %s.%s" % (
            old, new, self.full_name(), suffix), **extra)
        if new in BATCH_TERMINAL:
            self.ended = t

    def _task_event(self, t, new, desc_tail="", code=None):
        old = self.task_state
        self.task_state = new
        e = {"type": "STATUS_CHANGED",
             "description": "Task state is updated from %s to %s%s" % (
                 old, new, desc_tail),
             "eventTime": util.rfc3339(t), "taskState": new}
        if code is not None:
            e["taskExecution"] = {"exitCode": code}
        self.task_events.append(e)
        self.updated = t
        return e

    def candidate_zones(self):
        zones = []
        for loc in self.allowed:
            if loc.startswith("zones/"):
                zones.append(loc[6:])
            elif loc.startswith("regions/"):
                zones.extend(cat.REGION_ZONES.get(loc[8:], []))
        if not zones:
            zones = list(cat.REGION_ZONES.get(self.region, []))
        if self.gpu:
            zones = [z for z in zones if self.gpu in cat.ZONE_GPUS.get(z, {})]
        return zones

    def schedule(self, t):
        """QUEUED -> SCHEDULED; capacity and quota are checked here, as Batch
        creates its VMs asynchronously after accepting the job."""
        if self.jstate != "QUEUED":
            return
        self._job_state(t, "SCHEDULED")
        f = self.fake
        zones = self.candidate_zones()
        if not zones:
            self._resource_error(t, "CODE_GCE_INVALID_VALUE",
                                 "Accelerator type %s is not available in "
                                 "the allowed locations." % self.gpu)
            return
        ok = [z for z in zones if not f.stocked_out(z, self.gpu, self.spot)]
        if not ok:
            z = zones[0]
            self._resource_error(
                t, "CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED",
                "error count is 1, latest message example: Instance '%s' "
                "creation failed: The zone 'projects/%s/zones/%s' does not "
                "have enough resources available to fulfill the request.  "
                "Try a different zone, or try again later." % (
                    self.vm_name(), self.project, z))
            return
        vcpus = (cat.machine_info(self.machine) or (2, 8))[0]
        err = f.compute_quota_check(self.project, self.region, self.gpu,
                                    self.gpu_count * self.task_count,
                                    vcpus * self.task_count, self.spot)
        if err:
            self._resource_error(
                t, "CODE_GCE_QUOTA_EXCEEDED",
                "error count is 1, latest message example: Instance '%s' "
                "creation failed: %s" % (self.vm_name(), err[0]))
            return
        self.zone = ok[0]
        f.at(t + f.cfg["provision_seconds"], self._start_task)

    def vm_name(self):
        return "%s-group0-0-%s" % (self.name[:30], self.uid[-4:])

    def _resource_error(self, t, code, msg):
        self._event(t, "Batch Error: code - %s, description - %s" % (
            code, msg), etype="")
        self.events[-1].pop("type")
        self._task_event(t, "FAILED", " due to %s." % code)
        self._job_state(t, "FAILED", " Job failed due to %s: %s" % (
            code, msg))

    def _start_task(self, t):
        if self.jstate not in ("SCHEDULED", "RUNNING") or self.deleted:
            return
        self.vm_id = str(next(self.fake.ids))
        self._task_event(t, "ASSIGNED", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        self._task_event(t, "RUNNING", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        if self.jstate == "SCHEDULED":
            self._job_state(t, "RUNNING")
        self.started = self.started or t
        run = self.new_run(self.env)
        run.start(t)
        if self.max_run is not None:
            # taskSpec.maxRunDuration: the attempt is stopped with 50005
            def overrun(tt):
                if run.state == "running" and self.runs[-1] is run:
                    self.task_failed(tt, 50005)
            self.fake.at(t + self.max_run, overrun)

    def on_run_end(self, t, code):
        self.task_failed(t, code) if code else self._succeed(t)

    def _succeed(self, t):
        self.exit_code = 0
        self.task_exit = 0
        self._task_event(t, "SUCCEEDED", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        self._job_state(t, "SUCCEEDED")

    def task_failed(self, t, code):
        """Task ended with ``code`` (user exit or reserved 5000x)."""
        for r in self.runs:
            r.stop(t, "exit %d" % code)
        self.task_exit = code
        where = "on zones/%s/instances/%s" % (self.zone, self.vm_id)
        if code in RESERVED_EXIT:
            tail = " %s due to %s with exit code %d." % (
                where, RESERVED_EXIT[code], code)
        else:
            tail = " %s with exit code %d." % (where, code)
        ev = self._task_event(t, "FAILED", tail, code)
        if self._retry(code):
            self.retries += 1
            self._task_event(t, "PENDING", ".")
            self.fake.at(t + self.fake.cfg["provision_seconds"],
                         self._start_task)
            return
        self.exit_code = code
        self._job_state(
            t, "FAILED", " Job failed due to task failure. Specifically, "
            "task with index 0 failed due to the following task event: "
            "\"%s\"" % ev["description"],
            taskState="FAILED", taskExecution={"exitCode": code})

    def _retry(self, code):
        if self.retries >= self.max_retry:
            return False
        for p in self.policies[:1]:
            codes = (p.get("actionCondition") or {}).get("exitCodes") or []
            hit = code in codes
            if p.get("action") == "RETRY_TASK":
                return hit
            if p.get("action") == "FAIL_TASK":
                return not hit
        return True

    def cancel(self, t):
        for r in self.runs:
            r.stop(t, "cancelled")
        self._job_state(t, "CANCELLATION_IN_PROGRESS")

        def done(tt):
            if self.jstate == "CANCELLATION_IN_PROGRESS":
                if self.task_state not in ("SUCCEEDED", "FAILED"):
                    self.task_state = "FAILED"
                self._job_state(tt, "CANCELLED")
        self.fake.at(t + 1, done)

    def counts(self):
        return {self.task_state: str(self.task_count)}

    def task_json(self, i):
        return {"name": "%s/taskGroups/group0/tasks/%d" % (self.full_name(),
                                                           i),
                "status": {"state": self.task_state,
                           "statusEvents": list(self.task_events)}}

    def to_json(self, now):
        b = json.loads(json.dumps(self.body))
        tg = b["taskGroups"][0]
        tg["name"] = self.full_name() + "/taskGroups/group0"
        tg.setdefault("taskCount", "1")
        tg.setdefault("parallelism", "1")
        ts = tg.setdefault("taskSpec", {})
        cr = ts.setdefault("computeResource", {})
        cr.setdefault("cpuMilli", "2000")
        cr.setdefault("memoryMib", "2000")
        b["name"] = self.full_name()
        b["uid"] = self.uid
        b.setdefault("priority", "0")
        status = {"state": self.jstate, "statusEvents": list(self.events)}
        if self.jstate != "QUEUED":
            status["taskGroups"] = {"group0": {
                "counts": self.counts(),
                "instances": [{"machineType": self.machine,
                               "provisioningModel": self.pmodel,
                               "taskPack": "1",
                               "bootDisk": {"type": "pd-balanced",
                                            "sizeGb": "30",
                                            "image": "batch-debian"}}]}}
        if self.started:
            end = self.ended or now
            status["runDuration"] = util.duration(max(0, end - self.started))
        b["status"] = status
        b["createTime"] = util.rfc3339(self.created)
        b["updateTime"] = util.rfc3339(self.updated)
        return b


# -- Vertex AI ---------------------------------------------------------------------
VERTEX_TERMINAL = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                   "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


class CustomJob(Resource):
    """A Vertex AI CustomJob (API-NOTES E): QUEUED -> PENDING -> RUNNING ->
    SUCCEEDED/FAILED, or CANCELLING -> CANCELLED."""
    service = "vertex"

    def __init__(self, fake, project, region, body, now):
        self.jid = str(next(fake.vertex_ids))
        Resource.__init__(self, fake, project, body["displayName"], region,
                          None, body.get("labels"), False, now)
        self.body = body
        self.create_time = util.rfc3339(now)
        self.jstate = "JOB_STATE_QUEUED"
        self.error = None
        self.quota_error = None     # metric, with vertex_quota_error "job"
        self.updated = now
        self.restarts = 0
        spec = body["jobSpec"]
        wp = spec["workerPoolSpecs"][0]
        ms = wp.get("machineSpec") or {}
        self.machine = ms.get("machineType") or "n1-standard-4"
        acc = ms.get("acceleratorType")
        g = cat.BY_VERTEX.get(acc) if acc else None
        self.gpu = g["type"] if g else None
        self.vq = g["vq"] if g else None
        self.gpu_count = int(ms.get("acceleratorCount") or 0) if g else 0
        self.replicas = int(wp.get("replicaCount") or 1)
        self.strategy = (spec.get("scheduling") or {}).get("strategy") or \
            "STANDARD"
        self.spot = self.strategy in ("SPOT", "FLEX_START", "LOW_COST")
        env = {}
        for e in (wp.get("containerSpec") or {}).get("env") or []:
            env[e.get("name")] = e.get("value", "")
        base = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
        self.ckpt_default = None
        if base:
            base = base if base.endswith("/") else base + "/"
            env.setdefault("AIP_MODEL_DIR", base + "model/")
            env.setdefault("AIP_CHECKPOINT_DIR", base + "checkpoints/")
            env.setdefault("AIP_TENSORBOARD_LOG_DIR", base + "logs/")
            self.ckpt_default = base + "checkpoints/"
        self.env = env

    def full_name(self):
        return "projects/%s/locations/%s/customJobs/%s" % (
            self.fake.project_number(self.project), self.region, self.jid)

    def state(self):
        return self.jstate

    def live(self):
        return not self.deleted and self.jstate not in VERTEX_TERMINAL

    VIEW_PATHS = (("name",), ("displayName",), ("labels",), ("state",),
                  ("createTime",))

    def filter_view(self, now):
        v = {"name": self.full_name(), "state": self.jstate,
             "displayName": self.body.get("displayName"),
             "createTime": self.create_time}
        if "labels" in self.body:
            v["labels"] = self.body["labels"]
        return v

    def _set(self, t, st):
        self.jstate = st
        self.updated = t
        if st in VERTEX_TERMINAL:
            self.ended = t

    def pending(self, t):
        if self.jstate != "JOB_STATE_QUEUED":
            return
        self._set(t, "JOB_STATE_PENDING")
        f = self.fake
        if self.quota_error:
            # admitted, then starved of quota (API-NOTES B.1)
            self.error = {"code": 8, "message": "The following quota "
                          "metrics exceed quota limits: aiplatform."
                          "googleapis.com/%s" % self.quota_error}
            self._set(t, "JOB_STATE_FAILED")
            return
        zones = [z for z in cat.REGION_ZONES.get(self.region, [])
                 if not self.gpu or self.gpu in cat.ZONE_GPUS.get(z, {})]
        if self.gpu and zones and all(f.stocked_out(z, self.gpu, self.spot)
                                      for z in zones):
            # Vertex picks the zone itself, so it stocks out only when every
            # zone of the region offering the GPU is out (or a region-wide
            # stockout is set).  Wording of Vertex's stockout message.
            self.error = {"code": 8, "message":
                          "Resources are insufficient in region: %s. Please "
                          "try a different region. If you use K80, please "
                          "consider using P100 or V100 instead." % self.region}
            self._set(t, "JOB_STATE_FAILED")
            return
        self.zone = zones[0] if zones else None
        f.at(t + f.cfg["provision_seconds"], self._run)

    def _run(self, t):
        if self.jstate not in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING"):
            return
        self._set(t, "JOB_STATE_RUNNING")
        self.started = self.started or t
        self.new_run(self.env, self.ckpt_default).start(t)

    def on_run_end(self, t, code):
        self.exit_code = code
        if code == 0:
            self._set(t, "JOB_STATE_SUCCEEDED")
        else:
            # Real wording (seen in Vertex job errors): code 3
            # INVALID_ARGUMENT, "The replica workerpool0-0 exited with a
            # non-zero status of N. Termination reason: Error. ..."
            self.error = {"code": 3, "message":
                          "The replica workerpool0-0 exited with a non-zero "
                          "status of %d. Termination reason: Error. To find "
                          "out more about why your job exited please check "
                          "the logs: https://console.cloud.google.com/logs/"
                          "viewer?project=%s&resource=ml_job%%2Fjob_id%%2F%s"
                          % (code, self.fake.project_number(self.project),
                             self.jid)}
            self._set(t, "JOB_STATE_FAILED")

    def interrupt(self, t, reason):
        """Spot preemption / host maintenance of the worker VM.  Vertex
        restarts the worker (the container starts again with the same
        environment); a Spot job that is preempted more than
        ``vertex_spot_restarts`` times fails (see README)."""
        for r in self.runs:
            r.stop(t, reason)
        if reason == "preempted" and \
                self.restarts >= self.fake.cfg["vertex_spot_restarts"]:
            self.error = {"code": 14, "message":
                          "The replica workerpool0-0 was preempted (Spot VM "
                          "preemption, STOCKOUT) and could not be "
                          "restarted."}
            self._set(t, "JOB_STATE_FAILED")
            return
        self.restarts += 1
        self.fake.at(t + self.fake.cfg["provision_seconds"], self._run)

    def cancel(self, t):
        for r in self.runs:
            r.stop(t, "cancelled")
        self._set(t, "JOB_STATE_CANCELLING")

        def done(tt):
            if self.jstate == "JOB_STATE_CANCELLING":
                self.error = {"code": 1, "message": "CANCELED"}
                self._set(tt, "JOB_STATE_CANCELLED")
        self.fake.at(t + 1, done)

    def to_json(self, now):
        b = json.loads(json.dumps(self.body))
        b["name"] = self.full_name()
        b["state"] = self.jstate
        b["createTime"] = self.create_time
        b["updateTime"] = util.rfc3339(self.updated)
        if self.started:
            b["startTime"] = util.rfc3339(self.started)
        if self.ended:
            b["endTime"] = util.rfc3339(self.ended)
        if self.error:
            b["error"] = self.error
        for wp in b["jobSpec"].get("workerPoolSpecs") or []:
            wp.setdefault("replicaCount", "1")
            wp.setdefault("diskSpec", {"bootDiskType": "pd-ssd",
                                       "bootDiskSizeGb": 100})
        return b


# ============================================================================
# The fake cloud's state
# ============================================================================
class SortedIndex:
    """Resources of one group kept sorted by a unique key (bisect), so a
    list page finds its start in O(log n) and costs O(page size)."""
    __slots__ = ("keys", "vals")

    def __init__(self):
        self.keys = []
        self.vals = []

    def __len__(self):
        return len(self.keys)

    def add(self, key, val):
        i = bisect.bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.vals.insert(i, val)

    def remove(self, key):
        i = bisect.bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            del self.keys[i]
            del self.vals[i]

    def scan(self, after=None, reverse=False):
        """(key, value) pairs strictly after ``after`` in key order (or
        before it, descending, with ``reverse``)."""
        keys, vals = self.keys, self.vals
        if reverse:
            i = len(keys) - 1 if after is None else \
                bisect.bisect_left(keys, after) - 1
            while i >= 0:
                yield keys[i], vals[i]
                i -= 1
        else:
            i = 0 if after is None else bisect.bisect_right(keys, after)
            while i < len(keys):
                yield keys[i], vals[i]
                i += 1


NO_INDEX = SortedIndex()


class IndexedDict(dict):
    """A dict of resources that keeps, for each named order, one
    SortedIndex per group: ``index(order, group(dict key))``.  Every
    mutation goes through __setitem__/__delitem__/pop/clear."""

    def __init__(self, group, **orders):
        dict.__init__(self)
        self._group = group
        self._orders = orders
        self._indexes = {}

    def index(self, order, group):
        return self._indexes.get((order, group), NO_INDEX)

    def projects(self):
        """First members of the groups that hold resources."""
        return {g[0] for (o, g), idx in self._indexes.items() if len(idx)}

    def _add(self, k, v):
        g = self._group(k)
        for name, fn in self._orders.items():
            self._indexes.setdefault((name, g), SortedIndex()).add(fn(v), v)

    def _drop(self, k, v):
        g = self._group(k)
        for name, fn in self._orders.items():
            idx = self._indexes.get((name, g))
            if idx is not None:
                idx.remove(fn(v))

    def __setitem__(self, k, v):
        if k in self:
            self._drop(k, dict.__getitem__(self, k))
        dict.__setitem__(self, k, v)
        self._add(k, v)

    def __delitem__(self, k):
        self._drop(k, dict.__getitem__(self, k))
        dict.__delitem__(self, k)

    def pop(self, k, *default):
        if k in self:
            v = dict.__getitem__(self, k)
            del self[k]
            return v
        if default:
            return default[0]
        raise KeyError(k)

    def clear(self):
        dict.clear(self)
        self._indexes.clear()

    def _unsupported(self, *a, **kw):
        raise NotImplementedError("IndexedDict: use d[k] = v / pop")

    update = setdefault = popitem = _unsupported


def _group2(k):
    return k[:2]


DEFAULT_CFG = {
    "provision_seconds": 5.0,     # simulated s from create to RUNNING
    "op_seconds": 2.0,            # simulated s for a Compute operation
    "stop_seconds": 3.0,          # STOPPING -> TERMINATED after interruption
    "compute_quota_error": "http",   # "http" (403 at insert) | "operation"
    "vertex_spot_restarts": 6,    # Vertex restarts a preempted Spot worker
    # Vertex GPU quota: "http" (429 at create) | "job" (the job is
    # accepted, then FAILS with error code 8 and the quota message)
    "vertex_quota_error": "http",
    "wait_max_seconds": 2.0,      # real-time cap of zoneOperations.wait
    # regions (a list, or true for all) whose regions.get/list answer
    # without `quotas` and with quotaStatusWarning QUOTA_INFO_UNAVAILABLE
    "quota_info_unavailable": [],
    # org policy compute.requireBasicQuotaInResponse enforced: those
    # regions make regions.get/list fail instead (API-NOTES A.1)
    "require_basic_quota_in_response": False,
    # zones aggregated lists cannot reach: listed in `unreachables` with
    # returnPartialSuccess=true, else the list fails with 503
    "unreachable_zones": [],
}
DEFAULT_GPU_LIMIT = 16.0
DEFAULT_LIMITS = {"GPUS_ALL_REGIONS": 64.0, "CPUS_ALL_REGIONS": 10000.0}
REGION_DEFAULTS = {"CPUS": 1000.0, "PREEMPTIBLE_CPUS": 0.0,
                   "INSTANCES": 6000.0}
VERTEX_DEFAULT_LIMIT = 16


class Fake:
    def __init__(self, state_dir, speed=1.0, project="gpuq-demo"):
        self.state_dir = state_dir
        self.default_project = project
        self.lock = threading.RLock()
        self.clock = Clock(speed)
        self.log_lock = threading.Lock()
        self.logf = open(os.path.join(state_dir, "fakegcp.log"), "a",
                         buffering=1)
        self.sa_keys = {}          # client_email -> (n, e)
        self.users = {}            # client_id -> (secret, refresh_token)
        self._numbers = {}         # project id -> project number
        self.reset()

    # -- state -----------------------------------------------------------------
    def reset(self):
        with self.lock:
            self.seq = itertools.count(1)
            self.ids = itertools.count(4000000000000000000 +
                                       secrets.randbelow(10 ** 15))
            self.vertex_ids = itertools.count(
                1000000000000000000 + secrets.randbelow(10 ** 15))
            self.events = []               # heap of (t, seq, fn)
            self.active_runs = set()
            self.cfg = json.loads(json.dumps(DEFAULT_CFG))
            # (project, zone|region, id) -> resource, with sorted indexes
            # per (project, zone|region) for list pages
            self.instances = IndexedDict(_group2, name=lambda i: i.name)
            self.removed = []              # deleted resources, for /_fake
            self.ops = IndexedDict(_group2, insert=lambda o: (o.insert,
                                                              o.name))
            self.request_ids = {}          # (project, requestId) -> Operation
            self.batch = IndexedDict(_group2, name=lambda j: j.name,
                                     create=lambda j: (j.created, j.seq))
            self.batch_request_ids = {}
            self.vertex = IndexedDict(_group2,
                                      create=lambda j: (j.created, j.seq))
            self.lros = {}                 # name -> dict (Batch/Vertex LRO)
            self.buckets = {}              # bucket -> {name: object}
            self.gen = itertools.count(int(time.time() * 1e6))
            self.limits = {}               # (project, region|global, metric)
            self.base_usage = {}
            self.vertex_limits = {}        # (project, region, metric)
            self.prices = []               # overrides
            self.stockouts = []
            self.faults = []
            self.counters = {}
            self.reqlog = deque(maxlen=20000)
            self.tokens = {}               # token -> real expiry
            self.token_lifetime = 3600
            self._skus = None

    def now(self):
        return self.clock.now()

    def at(self, t, fn):
        heapq.heappush(self.events, (t, next(self.seq), fn))

    def tick(self, now=None):
        """Advance the simulation to ``now``: fire due events in time order,
        advancing running workloads to each event's time first."""
        with self.lock:
            now = self.now() if now is None else now
            while self.events and self.events[0][0] <= now:
                t, _, fn = heapq.heappop(self.events)
                for r in list(self.active_runs):
                    r.advance(t)
                fn(t)
            for r in list(self.active_runs):
                r.advance(now)
            return now

    def project_number(self, project):
        n = self._numbers.get(project)
        if n is None:
            n = project if project.isdigit() else str(int(hashlib.sha1(
                project.encode()).hexdigest(), 16) % 900000000000 +
                100000000000)
            self._numbers[project] = n
        return n

    def project_id(self, p):
        """Vertex/Batch paths may use the project number."""
        if p.isdigit():
            for proj in self.known_projects():
                if self.project_number(proj) == p:
                    return proj
        return p

    def known_projects(self):
        ps = {self.default_project}
        for d in (self.instances, self.batch, self.vertex):
            ps.update(d.projects())
        return ps

    def all_resources(self):
        return (list(self.instances.values()) + list(self.batch.values()) +
                list(self.vertex.values()) + self.removed)

    # -- storage ---------------------------------------------------------------
    def storage_put(self, bucket, name, data, t, ctype="application/octet-stream"):
        objs = self.buckets.setdefault(bucket, {})
        gen = next(self.gen)
        objs[name] = {"data": data, "generation": gen, "created": t,
                      "updated": t, "contentType": ctype,
                      "metageneration": 1}
        return objs[name]

    def storage_get(self, bucket, name):
        return self.buckets.get(bucket, {}).get(name)

    # -- quotas ------------------------------------------------------------------
    def limit(self, project, region, metric):
        k = (project, region, metric)
        if k in self.limits:
            return self.limits[k]
        if region == "global":
            return DEFAULT_LIMITS.get(metric, 0.0)
        if metric in REGION_DEFAULTS:
            return REGION_DEFAULTS[metric]
        if metric in cat.COMPUTE_GPU_METRICS:
            return DEFAULT_GPU_LIMIT
        return 0.0

    def gpu_metric(self, project, region, gpu, spot):
        """Quota metric a VM with ``gpu`` draws on (API-NOTES A.2): Spot uses
        the PREEMPTIBLE_ twin when that has a non-zero limit."""
        g = cat.BY_TYPE.get(gpu)
        if not g:
            return None
        if spot and g["pquota"] and self.limit(project, region,
                                               g["pquota"]) > 0:
            return g["pquota"]
        return g["quota"] or (g["pquota"] if spot else None)

    def cpu_metric(self, project, region, spot):
        if spot and self.limit(project, region, "PREEMPTIBLE_CPUS") > 0:
            return "PREEMPTIBLE_CPUS"
        return "CPUS"

    def usage_table(self, project):
        """(region|global, metric) -> usage of live Compute VMs and Batch
        VMs (Batch creates Compute VMs in the project), plus base usage."""
        use = {}

        def add(k, v):
            use[k] = use.get(k, 0.0) + v
        for r in list(self.instances.values()) + list(self.batch.values()):
            if r.project != project or not r.live():
                continue
            if isinstance(r, BatchJob) and r.jstate == "QUEUED":
                continue
            n = r.task_count if isinstance(r, BatchJob) else 1
            vcpus = r.vcpus if isinstance(r, Instance) else \
                (cat.machine_info(r.machine) or (2, 8))[0]
            add((r.region, self.cpu_metric(project, r.region, r.spot)),
                vcpus * n)
            add(("global", "CPUS_ALL_REGIONS"), vcpus * n)
            add((r.region, "INSTANCES"), n)
            if r.gpu and r.gpu_count:
                m = self.gpu_metric(project, r.region, r.gpu, r.spot)
                if m:
                    add((r.region, m), r.gpu_count * n)
                add(("global", "GPUS_ALL_REGIONS"), r.gpu_count * n)
        for (p, reg, m), v in self.base_usage.items():
            if p == project:
                add((reg, m), v)
        return use

    def compute_quota_check(self, project, region, gpu, count, vcpus, spot):
        """None, or (message, metric, limit, region|None) of the first quota
        a new VM would exceed."""
        use = self.usage_table(project)
        checks = []
        if gpu and count:
            m = self.gpu_metric(project, region, gpu, spot)
            if m:
                checks.append((region, m, count))
            checks.append(("global", "GPUS_ALL_REGIONS", count))
        checks.append((region, self.cpu_metric(project, region, spot), vcpus))
        checks.append(("global", "CPUS_ALL_REGIONS", vcpus))
        for reg, m, need in checks:
            lim = self.limit(project, reg, m)
            if use.get((reg, m), 0.0) + need > lim:
                where = "globally" if reg == "global" else \
                    "in region %s" % reg
                return ("Quota '%s' exceeded.  Limit: %.1f %s." % (
                    m, lim, where), m, lim, None if reg == "global" else reg)
        return None

    def region_quotas(self, project, region, use):
        metrics = ["CPUS", "PREEMPTIBLE_CPUS", "INSTANCES"] + \
            cat.COMPUTE_GPU_METRICS
        extra = {m for (p, r, m) in self.limits if p == project and
                 r == region}
        out = []
        for m in metrics + sorted(extra - set(metrics)):
            out.append({"metric": m,
                        "limit": float(self.limit(project, region, m)),
                        "usage": float(use.get((region, m), 0.0))})
        return out

    def vertex_metric(self, vq, spot):
        return "custom_model_training_%snvidia_%s_gpus" % (
            "preemptible_" if spot else "", vq)

    def vertex_limit(self, project, region, metric):
        return self.vertex_limits.get((project, region, metric),
                                      VERTEX_DEFAULT_LIMIT)

    def stocked_out(self, zone, gpu, spot):
        for s in self.stockouts:
            if s["zone"] not in (zone, cat.ZONE_REGION.get(zone)):
                continue
            if s.get("gpu") not in (None, "", "*", gpu):
                continue
            prov = (s.get("provisioning") or "ANY").upper()
            if prov == "ANY" or (prov == "SPOT") == bool(spot):
                return s
        return None

    # -- compute helpers -----------------------------------------------------
    def compute_system_op(self, inst, op_type, t):
        op = Operation(self, inst.project, inst.zone, op_type, inst.link(),
                       t, t, t, target_id=inst.id,
                       user="system")
        self.ops[(inst.project, inst.zone, op.name)] = op
        return op

    def compute_remove(self, inst, t):
        inst.deleted = True
        inst.ended = inst.ended or t
        for r in inst.runs:
            r.stop(t, "deleted")
        self.instances.pop((inst.project, inst.zone, inst.name), None)
        self.removed.append(inst)

    def quota_info_unavailable(self, region):
        u = self.cfg["quota_info_unavailable"]
        return u is True or (isinstance(u, list) and region in u)

    def sku_list(self):
        if self._skus is None:
            self._skus = cat.build_skus()
        return self._skus

    def log(self, line):
        with self.log_lock:
            self.logf.write(line + "\n")


# ============================================================================
# API methods.  Each takes a Req and returns a JSON-able object, or
# (http status, object) / (status, bytes, content type).  They run with
# fake.lock held, after fake.tick().
# ============================================================================
class Req:
    def __init__(self, method, path, params, query, headers, body_bytes):
        self.method = method
        self.path = path
        self.params = params
        self.q = {k: v[-1] for k, v in query.items()}
        self.query = query
        self.headers = headers
        self.raw = body_bytes
        self.body = None


def _page_size(req, size_param, default, maximum):
    size = req.q.get(size_param)
    size = int(size) if size not in (None, "") else default
    if size <= 0:
        size = default
    return min(size, maximum)


def _bad_token(req):
    return ApiError(400, "Invalid value for field 'pageToken': '%s'. "
                    "Invalid page token." % req.q.get("pageToken"),
                    "invalid")


def _paginate(items, req, size_param, default, maximum, salt=""):
    """Slice ``items`` (a short fixed list) for the page; return (page,
    nextPageToken|None)."""
    size = _page_size(req, size_param, default, maximum)
    off = util.parse_page_token(req.q.get("pageToken"), salt)
    if off is None:
        raise _bad_token(req)
    page = items[off:off + size]
    nxt = util.page_token(off + size, salt) if off + size < len(items) \
        else None
    return page, nxt


def _scan_page(req, sources, size, filt, cls, now, salt, reverse=False):
    """One page of a list of resources.  ``sources``: [(scope number,
    SortedIndex)] in listing order, scope numbers ascending; ``filt``: the
    compiled filter, evaluated on ``cls.filter_view`` when it reads only
    ``cls.VIEW_PATHS`` (so skipped resources cost no JSON), else on the
    resource's JSON.  The page token is the position of the last resource
    returned, so the next page starts there in O(log n) and a page costs
    O(page size) plus the non-matching resources it skips; there is a token
    only if another match follows.  ``salt`` ties tokens to one list and
    its filter and order.  Returns ([(scope number, JSON)], token|None)."""
    try:
        pos = util.parse_position_token(req.q.get("pageToken"), salt)
    except ValueError:
        raise _bad_token(req)
    everything = filt.tree is None
    cheap = not everything and filt.reads_only(cls.VIEW_PATHS)
    page, last, more = [], None, False
    for sno, idx in sources:
        if pos is not None and sno < pos[0]:
            continue
        after = pos[1] if pos is not None and sno == pos[0] else None
        for k, v in idx.scan(after, reverse):
            j = None
            if not everything:
                if cheap:
                    ok = filt.match(v.filter_view(now))
                else:
                    j = v.to_json(now)
                    ok = filt.match(j)
                if not ok:
                    continue
            if len(page) == size:
                more = True
                break
            page.append((sno, j if j is not None else v.to_json(now)))
            last = (sno, k)
        if more:
            break
    return page, (util.position_token(last, salt) if more else None)


def _list_salt(req, *what):
    return "/".join(list(what) + [req.q.get("filter", ""),
                                  req.q.get("orderBy", "")])


def _check_max_results(req):
    """Compute documents maxResults as 0..500 inclusive (A, 0.2)."""
    mr = req.q.get("maxResults")
    if mr and mr.isdigit() and int(mr) > 500:
        raise ApiError(400, "Invalid value for field 'maxResults': %s. Must "
                       "be less than or equal to 500" % mr, "invalid")


def _compile_filter(req, api, aliases=None):
    """The request's ``filter`` compiled (fakegcp_filter), or Google's 400
    for a malformed one: Compute's wording ("Invalid value for field
    'filter': ... Invalid list filter expression.") or INVALID_ARGUMENT
    naming the problem for Batch and Vertex."""
    expr = req.q.get("filter")
    try:
        return flt.compile_filter(expr, compute=api == "compute",
                                  aliases=aliases)
    except flt.FilterError as e:
        if api == "compute":
            raise ApiError(400, "Invalid value for field 'filter': '%s'. "
                           "Invalid list filter expression." % expr,
                           "invalid")
        raise ApiError(400, "Invalid list filter \"%s\": %s." % (expr, e))


def _filter(req, objs, api="compute", aliases=None):
    f = _compile_filter(req, api, aliases)
    if f.tree is None:
        return objs
    return [o for o in objs if f.match(o)]


def _read_mask(req, objs):
    """Vertex ``readMask`` (a google-fieldmask) applied to each listed
    resource."""
    rm = req.q.get("readMask")
    if not rm:
        return objs
    try:
        tree = util.parse_field_mask(rm)
    except util.FieldsError as e:
        raise ApiError(400, "Invalid read_mask %r: %s" % (rm, e))
    return [util.apply_fields(o, tree) for o in objs]


class Compute:
    """Compute Engine v1 (API-NOTES A, C)."""

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
        _check_max_results(req)
        items = _filter(req, items)
        page, nxt = _paginate(items, req, "maxResults", 500, 500, salt)
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
        _check_max_results(req)
        filt = _compile_filter(req, "compute")
        down = self._unreachable(req)
        flat = [(z, o) for z in cat.ZONES if z not in down
                for o in by_zone.get(z, []) if filt.match(o)]
        page, nxt = _paginate(flat, req, "maxResults", 500, 500, salt)
        return self._aggregated_out(req, kind, key, page, nxt, down)

    def _unreachable(self, req):
        """Zones an aggregated list skips (cfg unreachable_zones, API-NOTES
        0.2): fine with returnPartialSuccess=true, else a 503."""
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
        link = COMPUTE_LINK + "projects/%s/zones/%s/instances/%s" % (p, z,
                                                                     name)
        opsec = f.cfg["op_seconds"]
        op = Operation(f, p, z, "insert", link, now, now + opsec * 0.25,
                       now + opsec, request_id=rid)
        quota = f.compute_quota_check(p, region, gpu, count, info[0], spot)
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
        so = f.stocked_out(z, gpu, spot) if gpu else None
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
        op.target_id = inst.id
        f.instances[(p, z, name)] = inst
        prov = f.cfg["provision_seconds"]
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
        f.at(now + opsec, lambda t: f.compute_remove(inst, t))
        return op.to_json(now)

    def list(self, req):
        p, z = req.params["project"], self._zone(req)
        _check_max_results(req)
        page, nxt = _scan_page(
            req, [(0, self.f.instances.index("name", (p, z)))],
            _page_size(req, "maxResults", 500, 500),
            _compile_filter(req, "compute"), Instance, self.f.now(),
            _list_salt(req, "i", p, z))
        return self._list_out(req, "compute#instanceList",
                              [j for _, j in page], nxt)

    def aggregated(self, req):
        p = req.params["project"]
        _check_max_results(req)
        down = self._unreachable(req)
        idx = self.f.instances.index
        sources = [(n, idx("name", (p, z))) for n, z in enumerate(cat.ZONES)
                   if len(idx("name", (p, z))) and z not in down]
        page, nxt = _scan_page(req, sources,
                               _page_size(req, "maxResults", 500, 500),
                               _compile_filter(req, "compute"), Instance,
                               self.f.now(), _list_salt(req, "aggi", p))
        return self._aggregated_out(
            req, "compute#instanceAggregatedList", "instances",
            [(cat.ZONES[n], j) for n, j in page], nxt, down)

    def guest_attributes(self, req):
        inst = self._inst(req)
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
        _check_max_results(req)
        page, nxt = _scan_page(
            req, [(0, self.f.ops.index("insert", (p, z)))],
            _page_size(req, "maxResults", 500, 500),
            _compile_filter(req, "compute"), Operation, self.f.now(),
            _list_salt(req, "op", p, z))
        return self._list_out(req, "compute#operationList",
                              [j for _, j in page], nxt)


class Batch:
    """Cloud Batch v1 (API-NOTES D)."""

    def __init__(self, fake):
        self.f = fake

    def _parent(self, req):
        p = self.f.project_id(req.params["project"])
        r = req.params["location"]
        if r not in cat.REGIONS:
            raise ApiError(400, "Location %s is not a supported Batch "
                           "location." % r)
        return p, r

    def _lro(self, job, verb, now):
        name = "projects/%s/locations/%s/operations/operation-%d-%s" % (
            job.project, job.region, int(now * 1000), secrets.token_hex(6))
        lro = {"name": name, "done": False, "_end": now + 1,
               "metadata": {"@type": "type.googleapis.com/google.cloud."
                            "batch.v1.OperationMetadata",
                            "createTime": util.rfc3339(now),
                            "target": job.full_name(), "verb": verb,
                            "requestedCancellation": False,
                            "apiVersion": "v1"}}
        self.f.lros[name] = lro
        return lro

    def create(self, req):
        f = self.f
        p, r = self._parent(req)
        now = f.now()
        b = req.body
        rid = req.q.get("requestId")
        if rid is not None and not UUID_RE.match(rid):
            raise ApiError(400, "Invalid value for field 'request_id': must "
                           "be a valid UUID.")
        if rid and (p, rid) in f.batch_request_ids:
            return f.batch_request_ids[(p, rid)].to_json(now)
        jid = req.q.get("jobId") or "job-" + uuid.uuid4().hex[:24]
        if not BATCH_ID_RE.match(jid):
            raise ApiError(400, "Job id '%s' is invalid: it must match "
                           "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$." % jid)
        tgs = b.get("taskGroups") or []
        if len(tgs) != 1:
            raise ApiError(400, "Only one TaskGroup is supported now: "
                           "job.task_groups has %d entries." % len(tgs))
        ap = b.get("allocationPolicy") or {}
        pol = ((ap.get("instances") or [{}])[0]).get("policy") or {}
        for a in pol.get("accelerators") or []:
            if a.get("type") not in cat.BY_TYPE:
                raise ApiError(400, "Invalid value for field "
                               "'job.allocation_policy.instances[0].policy."
                               "accelerators[0].type': unknown accelerator "
                               "type %r." % a.get("type"))
        for loc in (ap.get("location") or {}).get("allowedLocations") or []:
            reg = loc.split("/", 1)[-1]
            reg = cat.ZONE_REGION.get(reg, reg)
            if reg != r:
                raise ApiError(400, "allowed_locations %s is not in the "
                               "job's region %s." % (loc, r))
        if (p, r, jid) in f.batch:
            raise ApiError(409, "Resource 'projects/%s/locations/%s/jobs/%s'"
                           " already exists" % (p, r, jid),
                           status="ALREADY_EXISTS")
        job = BatchJob(f, p, r, jid, json.loads(json.dumps(b)), now)
        f.batch[(p, r, jid)] = job
        if rid:
            f.batch_request_ids[(p, rid)] = job
        f.at(now + min(1.0, f.cfg["provision_seconds"] / 2), job.schedule)
        return job.to_json(now)

    def _job(self, req):
        p, r = self._parent(req)
        j = self.f.batch.get((p, r, req.params["job"]))
        if j is None:
            raise ApiError(404, "Job projects/%s/locations/%s/jobs/%s not "
                           "found." % (p, r, req.params["job"]))
        return j

    def get(self, req):
        return self._job(req).to_json(self.f.now())

    ORDERS = {"": ("name", False), "name": ("name", False),
              "name asc": ("name", False), "name desc": ("name", True),
              "create_time": ("create", False),
              "create_time asc": ("create", False),
              "create_time desc": ("create", True)}

    def list(self, req):
        p, r = self._parent(req)
        raw = req.q.get("orderBy", "")
        order = self.ORDERS.get(" ".join(raw.split()).lower())
        if order is None:
            raise ApiError(400, "Invalid order_by \"%s\": supported are "
                           "\"name\", \"name desc\", \"create_time\" and "
                           "\"create_time desc\"." % raw)
        page, nxt = _scan_page(
            req, [(0, self.f.batch.index(order[0], (p, r)))],
            _page_size(req, "pageSize", 100, 100),
            _compile_filter(req, "batch"), BatchJob, self.f.now(),
            _list_salt(req, "b", p, r), reverse=order[1])
        page = [j for _, j in page]
        out = {"jobs": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def delete(self, req):
        j = self._job(req)
        f = self.f
        now = f.now()
        for run in j.runs:
            run.stop(now, "deleted")
        j.jstate = "DELETION_IN_PROGRESS"
        j.updated = now
        lro = self._lro(j, "delete", now)

        def gone(t):
            j.deleted = True
            j.ended = j.ended or t
            f.batch.pop((j.project, j.region, j.name), None)
            f.removed.append(j)
        f.at(now + 1, gone)
        return self._lro_json(lro, now)

    def cancel(self, req):
        j = self._job(req)
        now = self.f.now()
        if j.jstate in BATCH_TERMINAL or j.jstate in (
                "CANCELLATION_IN_PROGRESS", "DELETION_IN_PROGRESS"):
            raise ApiError(400, "Job %s is in state %s and cannot be "
                           "cancelled." % (j.full_name(), j.jstate),
                           status="FAILED_PRECONDITION")
        j.cancel(now)
        return self._lro_json(self._lro(j, "cancel", now), now)

    def _lro_json(self, lro, now):
        o = {k: v for k, v in lro.items() if not k.startswith("_")}
        if now >= lro["_end"]:
            o["done"] = True
            o["metadata"] = dict(o["metadata"], endTime=util.rfc3339(
                lro["_end"]))
            o["response"] = {"@type": "type.googleapis.com/google.protobuf."
                             "Empty"}
        return o

    def op_get(self, req):
        p = self.f.project_id(req.params["project"])
        name = "projects/%s/locations/%s/operations/%s" % (
            p, req.params["location"], req.params["operation"])
        lro = self.f.lros.get(name)
        if lro is None:
            raise ApiError(404, "Operation %s not found." % name)
        if "_vertex" in lro:
            return {k: v for k, v in lro.items() if not k.startswith("_")}
        return self._lro_json(lro, self.f.now())

    def tasks_list(self, req):
        j = self._job(req)
        if req.params["group"] != "group0":
            raise ApiError(404, "Task group %s not found." %
                           req.params["group"])
        tasks = _filter(req, [j.task_json(i) for i in range(j.task_count)],
                        "batch", {"State": ["status", "state"]})
        page, nxt = _paginate(tasks, req, "pageSize", 100, 1000, "t" + j.uid)
        out = {"tasks": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def task_get(self, req):
        j = self._job(req)
        try:
            i = int(req.params["task"])
        except ValueError:
            i = -1
        if req.params["group"] != "group0" or not 0 <= i < j.task_count:
            raise ApiError(404, "Task not found.")
        return j.task_json(i)


class Vertex:
    """Vertex AI customJobs (API-NOTES E) and Cloud Quotas (B.2)."""

    def __init__(self, fake):
        self.f = fake

    def _parent(self, req):
        p = self.f.project_id(req.params["project"])
        r = req.params["location"]
        host = (req.headers.get("Host") or "").split(":")[0]
        m = re.match(r"^([a-z0-9-]+)-aiplatform\.googleapis\.com$", host)
        if m and m.group(1) != r:
            raise ApiError(400, "Location %s is not the same as the region "
                           "of the endpoint %s. Please use the endpoint of "
                           "region %s." % (r, host, r))
        if r not in cat.REGIONS:
            raise ApiError(400, "Location %s is not supported." % r)
        return p, r

    def create(self, req):
        f = self.f
        p, r = self._parent(req)
        b = req.body
        now = f.now()
        errs = []
        if not b.get("displayName"):
            errs.append("custom_job.display_name")
        spec = b.get("jobSpec") or {}
        pools = spec.get("workerPoolSpecs") or []
        if not pools:
            errs.append("custom_job.job_spec.worker_pool_specs")
        for i, wp in enumerate(pools):
            cs = wp.get("containerSpec")
            if cs is None and wp.get("pythonPackageSpec") is None:
                errs.append("custom_job.job_spec.worker_pool_specs[%d]."
                            "container_spec" % i)
            elif cs is not None and not cs.get("imageUri"):
                errs.append("custom_job.job_spec.worker_pool_specs[%d]."
                            "container_spec.image_uri" % i)
            if not (wp.get("machineSpec") or {}).get("machineType") and \
                    i == 0:
                errs.append("custom_job.job_spec.worker_pool_specs[0]."
                            "machine_spec.machine_type")
        if errs:
            raise vertex_required(errs)
        wp = pools[0]
        ms = wp.get("machineSpec") or {}
        acc = ms.get("acceleratorType")
        if acc and acc != "ACCELERATOR_TYPE_UNSPECIFIED":
            g = cat.BY_VERTEX.get(acc)
            if not g or not any(g["type"] in cat.ZONE_GPUS.get(z, {})
                                for z in cat.REGION_ZONES[r]):
                raise ApiError(400, "Accelerator \"%s\" is not supported "
                               "in location %s." % (acc, r))
            if int(ms.get("acceleratorCount") or 0) < 1:
                raise ApiError(400, "accelerator_count must be positive "
                               "when accelerator_type is set.")
        job = CustomJob(f, p, r, json.loads(json.dumps(b)), now)
        if job.vq:
            metric = f.vertex_metric(job.vq, job.spot)
            use = sum(j.gpu_count * j.replicas for j in f.vertex.values()
                      if j.project == p and j.region == r and j.live() and
                      j.vq == job.vq and j.spot == job.spot)
            need = job.gpu_count * job.replicas
            over = use + need > f.vertex_limit(p, r, metric)
            if over and f.cfg["vertex_quota_error"] == "job":
                job.quota_error = metric
            elif over:
                raise ApiError(
                    429, "The following quota metrics exceed quota limits: "
                    "aiplatform.googleapis.com/%s" % metric,
                    status="RESOURCE_EXHAUSTED", details=[{
                        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [{"subject": "projects/%s/locations/%s"
                                        % (f.project_number(p), r),
                                        "description": "aiplatform."
                                        "googleapis.com/%s" % metric}]}])
        f.vertex[(p, r, job.jid)] = job
        f.at(now + min(1.0, f.cfg["provision_seconds"] / 2), job.pending)
        return job.to_json(now)

    def _job(self, req):
        p, r = self._parent(req)
        j = self.f.vertex.get((p, r, req.params["job"]))
        if j is None:
            raise ApiError(404, "The CustomJob does not exist.")
        return j

    def get(self, req):
        return self._job(req).to_json(self.f.now())

    def list(self, req):
        """Newest first."""
        p, r = self._parent(req)
        page, nxt = _scan_page(
            req, [(0, self.f.vertex.index("create", (p, r)))],
            _page_size(req, "pageSize", 100, 100),
            _compile_filter(req, "aiplatform"), CustomJob, self.f.now(),
            _list_salt(req, "v", p, r), reverse=True)
        page = _read_mask(req, [j for _, j in page])
        out = {"customJobs": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def cancel(self, req):
        j = self._job(req)
        if not j.live() or j.jstate == "JOB_STATE_CANCELLING":
            raise ApiError(400, "Cannot cancel job %s in state %s." % (
                j.full_name(), j.jstate), status="FAILED_PRECONDITION")
        j.cancel(self.f.now())
        return {}

    def delete(self, req):
        j = self._job(req)
        f = self.f
        now = f.now()
        if j.jstate in ("JOB_STATE_RUNNING", "JOB_STATE_PENDING",
                        "JOB_STATE_QUEUED", "JOB_STATE_CANCELLING"):
            raise ApiError(400, "The CustomJob %s is in state %s and cannot "
                           "be deleted. Cancel it first." % (
                               j.full_name(), j.jstate),
                           status="FAILED_PRECONDITION")
        j.deleted = True
        f.vertex.pop((j.project, j.region, j.jid), None)
        f.removed.append(j)
        name = "projects/%s/locations/%s/operations/%d" % (
            f.project_number(j.project), j.region, next(f.ids))
        lro = {"name": name, "_vertex": True, "done": True,
               "metadata": {"@type": "type.googleapis.com/google.cloud."
                            "aiplatform.v1.DeleteOperationMetadata",
                            "genericMetadata": {
                                "createTime": util.rfc3339(now),
                                "updateTime": util.rfc3339(now)}},
               "response": {"@type": "type.googleapis.com/google.protobuf."
                            "Empty"}}
        f.lros["projects/%s/locations/%s/operations/%s" % (
            j.project, j.region, name.rsplit("/", 1)[1])] = lro
        return {k: v for k, v in lro.items() if not k.startswith("_")}

    # -- Cloud Quotas ---------------------------------------------------------
    def quota_infos(self, req):
        p = self.f.project_id(req.params["project"])
        svc = req.params["service"]
        if req.params["location"] != "global":
            raise ApiError(400, "Location must be global.")
        infos = []
        if svc == "aiplatform.googleapis.com":
            for g in sorted({g["vq"] for g in cat.GPUS.values()}):
                for spot in (False, True):
                    infos.append(self.quota_info(p, g, spot))
        page, nxt = _paginate(infos, req, "pageSize", 100, 1000, "qi" + svc)
        out = {"quotaInfos": page}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def quota_info(self, p, vq, spot):
        f = self.f
        metric = f.vertex_metric(vq, spot)
        camel = "".join(w.capitalize() for w in metric.split("_"))
        qid = "%sPerProjectPerRegion" % camel
        dims = [{"dimensions": {"region": r},
                 "details": {"value": str(int(f.vertex_limit(p, r, metric)))},
                 "applicableLocations": [r]}
                for r in cat.REGIONS
                if (p, r, metric) in f.vertex_limits]
        dims.append({"dimensions": {},
                     "details": {"value": str(VERTEX_DEFAULT_LIMIT)},
                     "applicableLocations": list(cat.REGIONS)})
        return {"name": "projects/%s/locations/global/services/aiplatform."
                "googleapis.com/quotaInfos/%s" % (f.project_number(p), qid),
                "quotaId": qid,
                "metric": "aiplatform.googleapis.com/" + metric,
                "service": "aiplatform.googleapis.com", "isPrecise": True,
                "containerType": "PROJECT", "dimensions": ["region"],
                "metricDisplayName": metric, "quotaDisplayName":
                "Custom model training %s%s GPUs per region" % (
                    "preemptible " if spot else "", vq.upper()),
                "metricUnit": "1",
                "quotaIncreaseEligibility": {"isEligible": True},
                "isFixed": False, "isConcurrent": False,
                "dimensionsInfos": dims}

    def quota_info_get(self, req):
        p = self.f.project_id(req.params["project"])
        for g in {g["vq"] for g in cat.GPUS.values()}:
            for spot in (False, True):
                qi = self.quota_info(p, g, spot)
                if qi["quotaId"] == req.params["quota"]:
                    return qi
        raise ApiError(404, "QuotaInfo %s not found." % req.params["quota"])


def vertex_required(paths):
    """Vertex's message for missing required fields."""
    msg = "List of found errors:\t" + "\t".join(
        "%d.Field: %s; Message: Required field is not set." % (i + 1, p)
        for i, p in enumerate(paths))
    return ApiError(400, msg, details=[{
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": p, "description":
                             "Required field is not set."} for p in paths]}])


class Billing:
    """Cloud Billing Catalog (API-NOTES F); SKUs from fakegcp_catalog."""

    def __init__(self, fake):
        self.f = fake

    def services(self, req):
        svcs = [{"name": "services/" + sid, "serviceId": sid,
                 "displayName": dn, "businessEntityName":
                 "businessEntities/GCP"} for sid, dn in cat.SERVICES]
        page, nxt = _paginate(svcs, req, "pageSize", 5000, 5000, "svc")
        out = {"services": page}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def price_for(self, which, entry):
        price = entry["price"]
        for o in self.f.prices:
            if o.get("service", "compute") != which:
                continue
            if o.get("sku_description"):
                if o["sku_description"] == entry["sku"]["description"]:
                    price = o["usd_per_hour"]
                continue
            kind, key, region, usage = entry["key"]
            if kind == "gpu" and o.get("gpu") == key and \
                    o.get("region") in (None, region) and \
                    o.get("usage_type", "OnDemand") == usage:
                price = o["usd_per_hour"]
        return price

    def sku_json(self, which, e):
        s = dict(e["sku"])
        price = self.price_for(which, e)
        units = int(price)
        nanos = int(round((price - units) * 1e9))
        s["pricingInfo"] = [{
            "effectiveTime": util.rfc3339(self.f.now()),
            "summary": "",
            "pricingExpression": {
                "usageUnit": e["unit"], "displayQuantity": 1,
                "usageUnitDescription": e["unit_desc"],
                "baseUnit": "s" if e["unit"] == "h" else "By.s",
                "baseUnitDescription": "second" if e["unit"] == "h" else
                "byte second",
                "baseUnitConversionFactor": 3600 if e["unit"] == "h" else
                3865470566400,
                "tieredRates": [{"startUsageAmount": 0, "unitPrice": {
                    "currencyCode": "USD", "units": str(units),
                    "nanos": nanos}}]},
            "aggregationInfo": {"aggregationLevel": "ACCOUNT",
                                "aggregationInterval": "DAILY",
                                "aggregationCount": 1},
            "currencyConversionRate": 1}]
        return s

    def skus(self, req):
        sid = req.params["service"]
        table = self.f.sku_list()
        if sid == cat.COMPUTE_SERVICE:
            which, entries = "compute", table["compute"]
        elif sid == cat.VERTEX_SERVICE:
            which, entries = "vertex", table["vertex"]
        elif sid in dict(cat.SERVICES):
            which, entries = "other", []
        else:
            raise ApiError(404, "Service services/%s not found." % sid)
        cur = req.q.get("currencyCode", "USD")
        if cur != "USD":
            raise ApiError(400, "The fake only knows USD prices.")
        page, nxt = _paginate(entries, req, "pageSize", 5000, 5000,
                              "sku" + sid)
        out = {"skus": [self.sku_json(which, e) for e in page]}
        if nxt:
            out["nextPageToken"] = nxt
        return out


class Storage:
    """Cloud Storage JSON API objects (API-NOTES G)."""

    def __init__(self, fake):
        self.f = fake

    def obj_json(self, bucket, name, o):
        q = urllib.parse.quote(name, safe="")
        return {"kind": "storage#object",
                "id": "%s/%s/%d" % (bucket, name, o["generation"]),
                "selfLink": "https://www.googleapis.com/storage/v1/b/%s/o/%s"
                % (bucket, q),
                "mediaLink": "https://storage.googleapis.com/download/"
                "storage/v1/b/%s/o/%s?generation=%d&alt=media" % (
                    bucket, q, o["generation"]),
                "name": name, "bucket": bucket,
                "generation": str(o["generation"]),
                "metageneration": str(o["metageneration"]),
                "contentType": o["contentType"],
                "storageClass": "STANDARD", "size": str(len(o["data"])),
                "md5Hash": __import__("base64").b64encode(
                    hashlib.md5(o["data"]).digest()).decode(),
                "timeCreated": util.rfc3339(o["created"])[:23] + "Z",
                "updated": util.rfc3339(o["updated"])[:23] + "Z",
                "timeStorageClassUpdated": util.rfc3339(o["created"])[:23] +
                "Z", "timeFinalized": util.rfc3339(o["created"])[:23] + "Z"}

    def list(self, req):
        b = req.params["bucket"]
        prefix = req.q.get("prefix", "")
        delim = req.q.get("delimiter", "")
        objs = self.f.buckets.get(b, {})
        entries = []      # sorted names and prefixes, each once
        seen = set()
        for n in sorted(objs):
            if not n.startswith(prefix):
                continue
            if req.q.get("startOffset") and n < req.q["startOffset"]:
                continue
            if req.q.get("endOffset") and n >= req.q["endOffset"]:
                continue
            if delim:
                i = n.find(delim, len(prefix))
                if i >= 0:
                    pre = n[:i + len(delim)]
                    if pre not in seen:
                        seen.add(pre)
                        entries.append(("p", pre))
                    continue
            entries.append(("o", n))
        mx = int(req.q.get("maxResults") or 1000)
        mx = max(1, min(mx, 1000))
        off = util.parse_page_token(req.q.get("pageToken"),
                                    "gcs" + b + prefix + delim)
        if off is None:
            raise ApiError(400, "Invalid argument: pageToken.", "invalid")
        page = entries[off:off + mx]
        out = {"kind": "storage#objects"}
        items = [self.obj_json(b, n, objs[n]) for k, n in page if k == "o"]
        pres = [n for k, n in page if k == "p"]
        if items:
            out["items"] = items
        if pres:
            out["prefixes"] = pres
        if off + mx < len(entries):
            out["nextPageToken"] = util.page_token(
                off + mx, "gcs" + b + prefix + delim)
        return out

    def _obj(self, req):
        b, n = req.params["bucket"], req.params["object"]
        o = self.f.buckets.get(b, {}).get(n)
        if o is None:
            raise ApiError(404, "No such object: %s/%s" % (b, n), "notFound")
        return b, n, o

    def get(self, req):
        b, n, o = self._obj(req)
        if req.q.get("alt") == "media":
            return (200, o["data"], o["contentType"])
        return self.obj_json(b, n, o)

    def delete(self, req):
        b, n, o = self._obj(req)
        del self.f.buckets[b][n]
        return (204, None)

    def upload(self, req):
        b = req.params["bucket"]
        ut = req.q.get("uploadType")
        if ut != "media":
            raise ApiError(400, "The fake supports uploadType=media only.",
                           "invalid")
        name = req.q.get("name")
        if not name:
            raise ApiError(400, "Required parameter: name", "required")
        ctype = req.headers.get("Content-Type") or "application/octet-stream"
        o = self.f.storage_put(b, name, req.raw or b"", self.f.now(), ctype)
        return self.obj_json(b, name, o)


# ============================================================================
# Control API (/_fake/..., no auth) -- see README.md
# ============================================================================
class Control:
    def __init__(self, fake, server):
        self.f = fake
        self.server = server

    def find(self, name):
        """A live resource by instance name, Batch jobId, Vertex displayName,
        numeric id or full resource name."""
        f = self.f
        cands = list(f.instances.values()) + list(f.batch.values()) + \
            list(f.vertex.values())
        for r in cands:
            if name in (r.name, r.full_name()) or (
                    isinstance(r, CustomJob) and name == r.jid) or (
                    isinstance(r, CustomJob) and name.endswith(
                        "/customJobs/" + r.jid)):
                return r
        raise ApiError(404, "No fake resource named %r" % name)

    def interrupt(self, body, kind):
        code = body.get("exit_code")
        if kind == "exit" and (not isinstance(code, int) or
                               isinstance(code, bool) or code < 0):
            raise ApiError(400, "exit_code must be a non-negative integer")
        r = self.find(body.get("name", ""))
        now = self.f.now()
        running = (isinstance(r, Instance) and r.status == "RUNNING") or \
            (isinstance(r, BatchJob) and r.jstate == "RUNNING" and
             r.task_state == "RUNNING") or \
            (isinstance(r, CustomJob) and r.jstate == "JOB_STATE_RUNNING" and
             r.runs and r.runs[-1].state == "running")
        if not running:
            raise ApiError(409, "Resource %s is not running (state %s)" % (
                r.name, r.state()))
        if kind == "exit":
            return self.exit(r, body, now)
        if isinstance(r, Instance):
            r.interrupt(now, {
                "preempt": "compute.instances.preempted",
                "maintenance": "compute.instances.terminateOnHostMaintenance",
                "host_error": "compute.instances.hostError"}[kind],
                {"preempt": "preempted", "maintenance": "maintenance",
                 "host_error": "host error"}[kind])
        elif isinstance(r, BatchJob):
            # Maintenance on a Batch VM: the VM is terminated and recreated
            # by Batch's instance group -> 50006 ("VM is recreated during
            # task execution"); a host error leaves Batch without VM
            # reports -> 50002.  See README.
            r.task_failed(now, {"preempt": 50001, "maintenance": 50006,
                                "host_error": 50002}[kind])
        else:
            restart = body.get("vertex_restart")
            if restart is False:
                saved = self.f.cfg["vertex_spot_restarts"]
                self.f.cfg["vertex_spot_restarts"] = 0
                r.interrupt(now, "preempted")
                self.f.cfg["vertex_spot_restarts"] = saved
            else:
                r.interrupt(now, "preempted" if kind == "preempt" else
                            "maintenance")
        return {"ok": True, "resource": r.describe()}

    def exit(self, r, body, now):
        """The running workload ends now with ``exit_code`` (Batch: any
        code, reserved 5000x ones with Batch's wording; retry policies
        apply)."""
        code = body["exit_code"]
        run = r.runs[-1] if r.runs else None
        if isinstance(r, BatchJob):
            if code:
                r.task_failed(now, code)
                return {"ok": True, "resource": r.describe()}
        if run is None or run.state != "running":
            raise ApiError(409, "Resource %s runs no workload" % r.name)
        run.stop(now, "exit %d" % code)
        run.state, run.result = "done", code
        r.on_run_end(now, code)
        return {"ok": True, "resource": r.describe()}

    def handle(self, method, path, query, body):
        f = self.f
        q = {k: v[-1] for k, v in query.items()}
        ep = path[len("/_fake/"):]
        if ep == "reset" and method == "POST":
            f.reset()
            return {"ok": True}
        if ep == "config":
            if method == "POST":
                for k, v in body.items():
                    if k not in DEFAULT_CFG:
                        raise ApiError(400, "unknown config key %r" % k)
                    if k == "unreachable_zones" and (
                            not isinstance(v, list) or
                            any(z not in cat.ZONE_REGION for z in v)):
                        raise ApiError(400, "unreachable_zones: give a list "
                                       "of known zones (not %r)" % (v,))
                    if k == "quota_info_unavailable":
                        bad = [r for r in (v if isinstance(v, list) else
                                           []) if r not in cat.REGIONS]
                        if not isinstance(v, (bool, list)) or bad:
                            raise ApiError(400, "quota_info_unavailable: "
                                           "give true, false or a list of "
                                           "known regions (not %r)" % (
                                               bad or v))
                    f.cfg[k] = v
            return dict(f.cfg)
        if ep == "speed" and method == "POST":
            f.tick()
            f.clock.set_speed(float(body["factor"]))
            return {"ok": True, "speed": f.clock.speed}
        if ep == "time":
            return {"now": f.now(), "now_rfc3339": util.rfc3339(f.now()),
                    "speed": f.clock.speed}
        if ep == "quota":
            if method == "POST":
                reg = body.get("region", "global")
                metric = body["metric"]
                if body.get("service") in ("aiplatform", "vertex",
                                           "aiplatform.googleapis.com"):
                    metric = metric.split("/")[-1]
                    f.vertex_limits[(body.get("project", f.default_project),
                                     reg, metric)] = int(body["limit"])
                else:
                    key = (body.get("project", f.default_project), reg,
                           metric)
                    if "limit" in body:
                        f.limits[key] = float(body["limit"])
                    if "usage" in body:
                        f.base_usage[key] = float(body["usage"])
                return {"ok": True}
            p = q.get("project", f.default_project)
            use = f.usage_table(p)
            comp = {r: {x["metric"]: {"limit": x["limit"],
                                      "usage": x["usage"]}
                        for x in f.region_quotas(p, r, use)}
                    for r in cat.REGIONS}
            comp["global"] = {m: {"limit": f.limit(p, "global", m),
                                  "usage": use.get(("global", m), 0.0)}
                              for m in DEFAULT_LIMITS}
            vx = {r: {f.vertex_metric(g, s): f.vertex_limit(
                p, r, f.vertex_metric(g, s))
                for g in sorted({g["vq"] for g in cat.GPUS.values()})
                for s in (False, True)} for r in cat.REGIONS}
            return {"compute": comp, "aiplatform": vx}
        if ep == "price" and method == "POST":
            if "usd_per_hour" not in body:
                raise ApiError(400, "usd_per_hour is required")
            f.prices.append(dict(body))
            return {"ok": True}
        if ep == "preempt" and method == "POST":
            return self.interrupt(body, "preempt")
        if ep == "maintenance" and method == "POST":
            return self.interrupt(body, "maintenance")
        if ep == "host_error" and method == "POST":
            return self.interrupt(body, "host_error")
        if ep == "exit" and method == "POST":
            return self.interrupt(body, "exit")
        if ep == "stockout" and method == "POST":
            z = body["zone"]
            gpu = body.get("gpu")
            prov = (body.get("provisioning") or "ANY").upper()
            f.stockouts = [s for s in f.stockouts if not (
                s["zone"] == z and s.get("gpu") == gpu and
                s["provisioning"] == prov)]
            if body.get("on", True):
                f.stockouts.append({"zone": z, "gpu": gpu,
                                    "provisioning": prov,
                                    "with_details": bool(
                                        body.get("with_details")),
                                    "zones_available": body.get(
                                        "zones_available") or []})
            return {"ok": True, "stockouts": f.stockouts}
        if ep == "fault":
            if method == "POST":
                re.compile(body.get("path", ".*"))
                fa = {"method": body.get("method", "*"),
                      "path": body.get("path", ".*"),
                      "status": body.get("status"),
                      "count": int(body.get("count", 1)),
                      "retry_after": body.get("retry_after"),
                      "latency_ms": body.get("latency_ms"),
                      "drop": bool(body.get("drop"))}
                f.faults.append(fa)
                return {"ok": True, "fault": fa}
            if method == "DELETE":
                f.faults = []
                return {"ok": True}
            return {"faults": f.faults}
        if ep == "token_lifetime" and method == "POST":
            f.token_lifetime = int(body["seconds"])
            return {"ok": True}
        if ep == "service_account" and method == "POST":
            f.sa_keys[body["client_email"]] = auth.parse_rsa_public_pem(
                body["public_key_pem"])
            return {"ok": True}
        if ep == "authorized_user" and method == "POST":
            f.users[body["client_id"]] = (body["client_secret"],
                                          body["refresh_token"])
            return {"ok": True}
        if ep == "revoke_tokens" and method == "POST":
            n = len(f.tokens)
            f.tokens.clear()
            return {"ok": True, "revoked": n}
        if ep == "counters":
            return {"by_method": dict(f.counters),
                    "total": sum(f.counters.values())}
        if ep == "counters/reset" and method == "POST":
            f.counters.clear()
            f.reqlog.clear()
            return {"ok": True}
        if ep == "requests":
            return {"requests": list(f.reqlog)}
        if ep == "resources":
            rs = sorted(f.all_resources(), key=lambda r: r.seq)
            svc = q.get("service")
            return {"resources": [r.describe() for r in rs
                                  if not svc or r.service == svc]}
        if ep == "work":
            return self.work(q.get("job"))
        if ep == "instances" and method == "POST":
            return self.bulk(body)
        if ep == "storage" and method == "GET":
            return {b: sorted(o) for b, o in f.buckets.items()}
        raise ApiError(404, "unknown control endpoint %s %s" % (method, path))

    def work(self, job):
        runs = [(r, run) for r in sorted(self.f.all_resources(),
                                         key=lambda r: r.seq)
                for run in r.runs if job is None or run.job == job]
        need = max((run.need for r, run in runs), default=0)
        done = sum(run.work_done for r, run in runs)
        prog = max((run.progress for r, run in runs), default=0)
        return {"job": job, "work_done": done, "work_needed": need,
                "progress": prog,
                "completed": any(run.state == "done" for r, run in runs),
                "exit_codes": [run.result for r, run in runs
                               if run.state == "done"],
                "runs": len(runs),
                "checkpoints": [c for r, run in runs for c in run.checkpoints],
                "resources": [dict(run.describe(), resource=r.full_name(),
                                   service=r.service) for r, run in runs]}

    def bulk(self, body):
        """Create ``count`` resources directly in their running state (no
        operations, no workload) for benchmarks and orphan tests."""
        f = self.f
        svc = body.get("service", "compute")
        p = body.get("project", f.default_project)
        n = int(body.get("count", 1))
        labels = body.get("labels") or {}
        prefix = body.get("name_prefix", "bulk")
        now = f.now()
        names = []
        start = next(f.seq)
        for i in range(n):
            name = "%s-%d-%d" % (prefix, start, i)
            if svc == "compute":
                z = body.get("zone", "us-central1-a")
                gpu = body.get("gpu")
                cnt = int(body.get("gpu_count", 1 if gpu else 0))
                b = {"name": name,
                     "machineType": body.get("machine_type", "n1-standard-4"),
                     "labels": dict(labels),
                     "scheduling": {"provisioningModel": "SPOT" if
                                    body.get("spot") else "STANDARD"}}
                if gpu:
                    b["guestAccelerators"] = [{"acceleratorType": gpu,
                                               "acceleratorCount": cnt}]
                inst = Instance(f, p, z, b, now, (cat.machine_info(
                    b["machineType"]) or (4, 15))[0], gpu, cnt,
                    bool(body.get("spot")))
                inst.status = body.get("status", "RUNNING")
                inst.last_start = now
                inst.started = now
                f.instances[(p, z, name)] = inst
            elif svc == "batch":
                r = body.get("region", "us-central1")
                jb = {"taskGroups": [{"taskSpec": {"runnables": [
                    {"container": {"imageUri": "busybox"}}]}}],
                    "labels": dict(labels)}
                j = BatchJob(f, p, r, name, jb, now)
                j.jstate = body.get("state", "RUNNING")
                j.task_state = "RUNNING"
                j.started = now
                f.batch[(p, r, name)] = j
            else:
                r = body.get("region", "us-central1")
                vb = {"displayName": name, "labels": dict(labels),
                      "jobSpec": {"workerPoolSpecs": [{
                          "machineSpec": {"machineType": "n1-standard-4"},
                          "replicaCount": "1",
                          "containerSpec": {"imageUri": "busybox"}}]}}
                j = CustomJob(f, p, r, vb, now)
                j.jstate = body.get("state", "JOB_STATE_RUNNING")
                j.started = now
                f.vertex[(p, r, j.jid)] = j
                name = j.jid
            names.append(name)
        return {"ok": True, "created": n, "names": names[:1000]}


# ============================================================================
# Routing and HTTP
# ============================================================================
def build_routes(fake):
    c, b, v = Compute(fake), Batch(fake), Vertex(fake)
    bi, st = Billing(fake), Storage(fake)
    P = r"/compute/v1/projects/(?P<project>[^/]+)"
    Z = P + r"/zones/(?P<zone>[^/]+)"
    L = r"/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    J = L + r"/jobs/(?P<job>[^/:]+)"
    V = L + r"/customJobs/(?P<job>[^/:]+)"
    # (http method, regex, api, method id, handler, request schema, root)
    table = [
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
        # Cloud Quotas (before the generic Batch/Vertex location routes)
        ("GET", L + r"/services/(?P<service>[^/]+)/quotaInfos", "cloudquotas",
         "cloudquotas.projects.locations.services.quotaInfos.list",
         v.quota_infos),
        ("GET", L + r"/services/(?P<service>[^/]+)/quotaInfos/"
         r"(?P<quota>[^/]+)", "cloudquotas",
         "cloudquotas.projects.locations.services.quotaInfos.get",
         v.quota_info_get),
        ("POST", L + "/jobs", "batch", "batch.projects.locations.jobs.create",
         b.create, "Job", "job"),
        ("GET", L + "/jobs", "batch", "batch.projects.locations.jobs.list",
         b.list),
        ("GET", J, "batch", "batch.projects.locations.jobs.get", b.get),
        ("DELETE", J, "batch", "batch.projects.locations.jobs.delete",
         b.delete),
        ("POST", J + ":cancel", "batch",
         "batch.projects.locations.jobs.cancel", b.cancel,
         "CancelJobRequest", "cancel_job_request"),
        ("GET", J + r"/taskGroups/(?P<group>[^/]+)/tasks", "batch",
         "batch.projects.locations.jobs.taskGroups.tasks.list", b.tasks_list),
        ("GET", J + r"/taskGroups/(?P<group>[^/]+)/tasks/(?P<task>[^/]+)",
         "batch", "batch.projects.locations.jobs.taskGroups.tasks.get",
         b.task_get),
        ("GET", L + r"/operations/(?P<operation>[^/]+)", "batch",
         "batch.projects.locations.operations.get", b.op_get),
        ("POST", L + "/customJobs", "aiplatform",
         "aiplatform.projects.locations.customJobs.create", v.create,
         "GoogleCloudAiplatformV1CustomJob", "custom_job"),
        ("GET", L + "/customJobs", "aiplatform",
         "aiplatform.projects.locations.customJobs.list", v.list),
        ("GET", V, "aiplatform",
         "aiplatform.projects.locations.customJobs.get", v.get),
        ("DELETE", V, "aiplatform",
         "aiplatform.projects.locations.customJobs.delete", v.delete),
        ("POST", V + ":cancel", "aiplatform",
         "aiplatform.projects.locations.customJobs.cancel", v.cancel,
         "GoogleCloudAiplatformV1CancelCustomJobRequest",
         "cancel_custom_job_request"),
        ("GET", r"/v1/services", "cloudbilling", "cloudbilling.services.list",
         bi.services),
        ("GET", r"/v1/services/(?P<service>[^/]+)/skus", "cloudbilling",
         "cloudbilling.services.skus.list", bi.skus),
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)/o", "storage",
         "storage.objects.list", st.list),
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)/o/(?P<object>[^/]+)",
         "storage", "storage.objects.get", st.get),
        ("DELETE", r"/storage/v1/b/(?P<bucket>[^/]+)/o/(?P<object>[^/]+)",
         "storage", "storage.objects.delete", st.delete),
        ("POST", r"/upload/storage/v1/b/(?P<bucket>[^/]+)/o", "storage",
         "storage.objects.insert", st.upload),
    ]
    out = []
    for row in table:
        m, rx, api, mid, fn = row[:5]
        req_schema = row[5] if len(row) > 5 else None
        root = row[6] if len(row) > 6 else None
        out.append((m, re.compile("^" + rx + "$"), api, mid, fn, req_schema,
                    root))
    return out


HTML_404 = (b"<!DOCTYPE html>\n<html lang=en><meta charset=utf-8><title>"
            b"Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That's an "
            b"error.</ins><p>The requested URL was not found on this server."
            b" <ins>That's all we know.</ins></html>\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ESF"
    sys_version = ""

    def log_message(self, fmt, *args):   # keep stdout clean
        pass

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if te == "chunked":
            data = b""
            while True:
                line = self.rfile.readline()
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send(self, code, body, ctype="application/json; charset=UTF-8",
              headers=None):
        if isinstance(body, (dict, list)):
            pretty = self._q.get("prettyPrint", ["true"])[-1] != "false"
            body = (json.dumps(body, indent=2 if pretty else None) +
                    "\n").encode()
        elif body is None:
            body = b""
        self._status = code
        self._record()          # before the client can see the answer
        self.send_response(code)
        if code != 204:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)) if code != 204
                         else "0")
        self.send_header("Vary", "Origin, X-Origin, Referer")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if code != 204 and self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self._dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

    def _record(self):
        """Put this request in the request log and fakegcp.log, once.
        Called just before the reply is written, so a client that asks
        /_fake/requests right after its answer finds it there."""
        if self._recorded:
            return
        self._recorded = True
        fake = self.server.fake
        dt = time.time() - self._t0
        mid = getattr(self, "_mid", None)
        if not self._fpath.startswith("/_fake/"):
            with fake.lock:
                fake.reqlog.append({
                    "method": self.command, "path": self._fpath,
                    "query": self._u.query, "method_id": mid,
                    "status": self._status, "time": fake.now(),
                    "real_time": self._t0, "ms": round(dt * 1000, 1)})
        fake.log("%.3f %s %s %s %s %d %.1fms" % (
            self._t0, self.command, self._u.path, self._u.query[:200],
            mid or ("fake.control" if self._fpath.startswith("/_fake/")
                    else "-"), self._status, dt * 1000))

    def _dispatch(self):
        fake = self.server.fake
        t0 = time.time()
        self._status = 0
        self._t0 = t0
        self._recorded = False
        u = urllib.parse.urlsplit(self.path)
        self._u = u
        self._q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        rawpath = u.path
        path = urllib.parse.unquote(rawpath)
        self._fpath = path
        self._mid = None
        self._api_name = None
        body = self._read_body()
        try:
            if path.startswith("/_fake/"):
                try:
                    obj = json.loads(body) if body.strip() else {}
                except ValueError:
                    raise ApiError(400, "control body must be JSON")
                with fake.lock:
                    fake.tick()
                    res = self.server.control.handle(self.command, path,
                                                     self._q, obj)
                self._send(200, res)
                return
            self._api(fake, rawpath, path, body)
        except ApiError as e:
            self._send(e.code, e.body(getattr(self, "_api_name", None)),
                       headers=e.headers)
        except OAuthError as e:
            self._send(e.code, {"error": e.error,
                                "error_description": e.description})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:   # a bug in the fake: say so, loudly
            import traceback
            fake.log("INTERNAL ERROR %s" % traceback.format_exc())
            self._send(500, ApiError(500, "fakegcp internal error: %r" % e)
                       .body(None))
        finally:
            self._record()      # dropped connections never reached _send

    # -- auth ------------------------------------------------------------------
    def _bearer(self, fake, api):
        h = self.headers.get("Authorization") or ""
        if not h:
            raise ApiError(401, "Request is missing required authentication "
                           "credential. Expected OAuth 2 access token, login "
                           "cookie or other valid authentication credential. "
                           "See https://developers.google.com/identity/sign-"
                           "in/web/devconsole-project.", "required",
                           headers={"WWW-Authenticate":
                                    'Bearer realm="https://accounts.google.'
                                    'com/"'})
        tok = h[7:].strip() if h[:7].lower() == "bearer " else ""
        with fake.lock:
            exp = fake.tokens.get(tok)
        if exp is None or exp <= time.time():
            raise ApiError(401, "Request had invalid authentication "
                           "credentials. Expected OAuth 2 access token, login "
                           "cookie or other valid authentication credential. "
                           "See https://developers.google.com/identity/sign-"
                           "in/web/devconsole-project.", "authError",
                           headers={"WWW-Authenticate":
                                    'Bearer realm="https://accounts.google.'
                                    'com/", error="invalid_token"'})

    def _issue(self, fake):
        tok = "ya29.fake-" + secrets.token_urlsafe(32)
        with fake.lock:
            fake.tokens[tok] = time.time() + fake.token_lifetime
            life = fake.token_lifetime
        return {"access_token": tok, "expires_in": life,
                "token_type": "Bearer"}

    def _token(self, fake, body):
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        form = {k: v[-1] for k, v in form.items()}
        gt = form.get("grant_type")
        if gt == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            base = "http://%s" % (self.headers.get("Host") or "")
            with fake.lock:
                keys = dict(fake.sa_keys)
            try:
                auth.verify_assertion(
                    form.get("assertion", ""), keys,
                    [base + "/token", GOOGLE_TOKEN_URL, self.server.url +
                     "/token"], time.time(), CLOUD_PLATFORM)
            except auth.JwtError as e:
                raise OAuthError(400, e.error, e.description)
            return self._issue(fake)
        if gt == "refresh_token":
            with fake.lock:
                u = fake.users.get(form.get("client_id"))
            if u is None or u[0] != form.get("client_secret"):
                raise OAuthError(401, "invalid_client",
                                 "The OAuth client was not found.")
            if u[1] != form.get("refresh_token"):
                raise OAuthError(400, "invalid_grant",
                                 "Token has been expired or revoked.")
            out = self._issue(fake)
            out["scope"] = CLOUD_PLATFORM
            return out
        raise OAuthError(400, "unsupported_grant_type",
                         "Invalid grant_type: %s" % (gt or ""))

    # -- API dispatch ------------------------------------------------------------
    def _api(self, fake, rawpath, path, body):
        cmd = self.command
        if path == "/token" and cmd == "POST":
            self._mid = "oauth2.token"
            self._count(fake, self._mid)
            if self._fault(fake, path):
                return self._mid
            self._send(200, self._token(fake, body))
            return self._mid
        if path.startswith("/computeMetadata/v1/"):
            self._mid = "metadata." + path[len("/computeMetadata/v1/"):]
            self._count(fake, self._mid)
            if self._fault(fake, path):
                return self._mid
            if self.headers.get("Metadata-Flavor") != "Google":
                self._send(403, b"Missing Metadata-Flavor:Google header.\n",
                           "text/html; charset=UTF-8",
                           {"Metadata-Flavor": "Google"})
                return self._mid
            if path == "/computeMetadata/v1/instance/service-accounts/" \
                    "default/token":
                self._send(200, self._issue(fake),
                           headers={"Metadata-Flavor": "Google"})
            elif path == "/computeMetadata/v1/project/project-id":
                self._send(200, fake.default_project.encode(),
                           "application/text", {"Metadata-Flavor": "Google"})
            elif path == "/computeMetadata/v1/instance/zone":
                self._send(200, ("projects/%s/zones/us-central1-a" %
                                 fake.project_number(fake.default_project))
                           .encode(), "application/text",
                           {"Metadata-Flavor": "Google"})
            else:
                self._send(404, HTML_404, "text/html; charset=UTF-8",
                           {"Metadata-Flavor": "Google"})
            return self._mid
        # storage object names are one percent-encoded segment (G)
        match = None
        for m, rx, api, mid, fn, rs, root in self.server.routes:
            if m != cmd:
                continue
            target = rawpath if api == "storage" else path
            mm = rx.match(target)
            if mm:
                match = (api, mid, fn, rs, root, mm.groupdict())
                break
        if match is None:
            self._send(404, HTML_404, "text/html; charset=UTF-8")
            return None
        api, mid, fn, rs, root, params = match
        if api == "storage":
            params = {k: urllib.parse.unquote(v) for k, v in params.items()}
        self._api_name = api
        self._mid = mid
        self._count(fake, mid)
        if self._fault(fake, path):
            return mid
        self._bearer(fake, api)
        # strict checks (schema module)
        if api in schema.SCHEMAS:
            val = schema.validator(api)
            try:
                val.check_query(mid, self._q)
            except schema.SchemaError as e:
                raise self._invalid(api, e)
        parsed = None
        if rs:
            try:
                parsed = json.loads(body.decode("utf-8")) if body.strip() \
                    else {}
            except ValueError as e:
                raise ApiError(400, "Invalid JSON payload received. %s" % e,
                               "parseError")
            try:
                val.check_body(rs, parsed, root)
            except schema.SchemaError as e:
                raise self._invalid(api, e)
            if api == "compute":
                pass   # Compute's required fields are checked by insert()
            elif api == "aiplatform":
                pass   # Vertex reports its own "List of found errors"
            else:
                miss = val.missing_required(rs, parsed, root)
                if miss:
                    raise ApiError(400, "Field %s is required." % miss[0],
                                   details=[{
                                       "@type": "type.googleapis.com/google."
                                       "rpc.BadRequest", "fieldViolations": [
                                           {"field": p, "description":
                                            "Field is required."}
                                           for p in miss]}])
        # the selector is checked before the method runs: a bad one is a
        # 400 without side effects
        sel = None
        f = self._q.get("fields", [None])[-1]
        if f:
            try:
                sel = util.parse_fields(f)
            except util.FieldsError as e:
                raise ApiError(400, "Invalid field selection %s: %s" % (f, e),
                               "invalid")
        req = Req(cmd, path, params, self._q, self.headers, body)
        req.body = parsed
        with fake.lock:
            fake.tick()
            res = fn(req)
        if isinstance(res, tuple):
            if len(res) == 3:
                self._send(res[0], res[1], res[2])
            else:
                self._send(res[0], res[1])
            return mid
        if sel is not None:
            res = util.apply_fields(res, sel)
        self._send(200, res)
        return mid

    def _invalid(self, api, e):
        details = None
        if api not in LEGACY_APIS:
            details = [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [{"field": e.field,
                                             "description": e.message}]}]
        return ApiError(400, e.message, "invalid", details=details)

    def _count(self, fake, mid):
        with fake.lock:
            fake.counters[mid] = fake.counters.get(mid, 0) + 1

    def _fault(self, fake, path):
        """Apply the first matching injected fault.  True if the request was
        answered (or dropped) by the fault: then it has no side effects."""
        with fake.lock:
            hit = None
            for fa in fake.faults:
                if fa["count"] <= 0:
                    continue
                if fa["method"] not in ("*", self.command):
                    continue
                if not re.search(fa["path"], path):
                    continue
                fa["count"] -= 1
                hit = dict(fa)
                break
            fake.faults = [fa for fa in fake.faults if fa["count"] > 0]
        if not hit:
            return False
        if hit.get("latency_ms"):
            time.sleep(hit["latency_ms"] / 1000.0)
        if hit.get("drop"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        st = hit.get("status")
        if not st:
            return False
        hdrs = {}
        if hit.get("retry_after") is not None:
            hdrs["Retry-After"] = str(hit["retry_after"])
        msg = {429: "Quota exceeded for quota metric 'Queries' and limit "
                    "'Queries per minute' of service.",
               500: "Internal error encountered.",
               502: "Bad Gateway", 503: "The service is currently "
                                        "unavailable.",
               504: "Deadline exceeded."}.get(st, "Injected fault")
        err = ApiError(st, msg, headers=hdrs)
        self._send(st, err.body(getattr(self, "_api_name", None)),
                   headers=hdrs)
        return True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--project", default="gpuq-demo")
    ap.add_argument("--service-account-pubkey", action="append", default=[],
                    metavar="EMAIL=PATH")
    args = ap.parse_args(argv)
    os.makedirs(args.state_dir, exist_ok=True)
    fake = Fake(args.state_dir, args.speed, args.project)
    for spec in args.service_account_pubkey:
        email, _, pth = spec.partition("=")
        with open(pth) as fh:
            fake.sa_keys[email] = auth.parse_rsa_public_pem(fh.read())
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.fake = fake
    srv.url = "http://127.0.0.1:%d" % srv.server_address[1]
    srv.routes = build_routes(fake)
    srv.control = Control(fake, srv)
    stop = threading.Event()

    def ticker():
        while not stop.wait(0.1):
            try:
                fake.tick()
            except Exception:   # never let the clock thread die silently
                import traceback
                fake.log("TICK ERROR %s" % traceback.format_exc())

    threading.Thread(target=ticker, daemon=True).start()

    def on_signal(signum, frame):
        stop.set()
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write(srv.url + "\n")
    sys.stdout.flush()
    fake.log("fakegcp listening on %s (speed %g, project %s)" % (
        srv.url, args.speed, args.project))
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
