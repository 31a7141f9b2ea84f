"""The fake cloud's state: simulated clock and event queue, resource
tables of every API, capacity (stockouts), faults, counters, tokens and
the request log.

Serves no API of its own; one Fake is shared by the API modules
(fakegcp_compute, _batch, _vertex, _cloudquotas, _billing, _storage,
_oauth) and the control API (fakegcp_control.py).  Quota accounting is
the QuotaBook mixin (fakegcp_quota.py).
"""
import hashlib
import heapq
import itertools
import json
import os
import secrets
import threading
import time
from collections import deque

import fakegcp_catalog as cat
from fakegcp_paging import IndexedDict, group2
from fakegcp_quota import QuotaBook
from fakegcp_sim import Clock

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
    # regions make regions.get/list fail instead (DESIGN GA.1)
    "require_basic_quota_in_response": False,
    # zones aggregated lists cannot reach: listed in `unreachables` with
    # returnPartialSuccess=true, else the list fails with 503
    "unreachable_zones": [],
    # Batch with too little capacity or quota: "fail" the job at once with
    # the CODE_GCE_* error, or "queue": keep it QUEUED, saying why in a
    # status event, and look again every batch_queue_recheck simulated s
    # (Batch holds a job queued up to 2 days, API-NOTES D.3)
    "batch_shortage": "fail",
    "batch_queue_recheck": 60.0,
    # the project setup (fakegcp_project.py): networks {name: {region:
    # subnetwork}} ("default" auto-mode unless given), accounts that
    # exist besides the Compute default one, what the caller lacks,
    # APIs turned off, buckets missing, an org policy against external IPs
    "networks": {},
    "service_accounts": [],
    "disabled_service_accounts": [],
    "act_as_denied": [],
    "denied_permissions": [],
    "bucket_denied_permissions": [],
    "missing_buckets": [],
    "disabled_services": [],
    "project_denied": False,
    "forbid_external_ip": False,
    "no_private_google_access": [],
    # Cloud Logging (fakegcp_logging.py): entries.list calls allowed in any
    # real minute before 429 RESOURCE_EXHAUSTED (0: no limit; Google's is
    # 60 a project), and the most entries one page holds
    "logging_reads_per_minute": 0,
    "logging_rate_window": 60,    # real seconds the read rate counts over
    "logging_page_max": 1000,
    # Batch and Vertex AI list filters on a label key with a hyphen
    # (labels.gpuq-install="x") refused with 400 INVALID_ARGUMENT, as
    # they may be (issue 15 item 8: unsettled, so off by default)
    "refuse_hyphen_label_filter": False,
    # guest attributes still readable once the VM has stopped (unsettled,
    # DESIGN GC.6); false: getGuestAttributes of a stopped VM is 404
    "guest_attributes_after_stop": True,
    # a task of a multi-task Batch group preempted: "job" (the job fails
    # at once, its other tasks stop) | "task" (the job stays RUNNING, its
    # group counting one FAILED task, until the other tasks end)
    "batch_group_fail": "job",
    # the public boot image families images.getFromFamily answers
    # (fakegcp_compute.py): "ready" (the newest image READY), "deprecated"
    # (every image of the family deprecated: the newest comes back with
    # deprecated.state DEPRECATED) or "missing" (the family is gone: 404)
    "boot_image": "ready",
}


class Fake(QuotaBook):
    def __init__(self, state_dir, speed=1.0, project="gpuq-demo",
                 origin=None):
        self.state_dir = state_dir
        self.default_project = project
        self.lock = threading.RLock()
        self.clock = Clock(speed, origin)
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
            self.instances = IndexedDict(group2, name=lambda i: i.name)
            self.removed = []              # deleted resources, for /_fake
            self.ops = IndexedDict(group2, insert=lambda o: (o.insert,
                                                              o.name))
            self.request_ids = {}          # (project, requestId) -> Operation
            self.policies = {}             # (project, region, name) -> dict
            self.region_ops = {}           # (project, region, name) -> op
            self.batch = IndexedDict(group2, name=lambda j: j.name,
                                     create=lambda j: (j.created, j.seq))
            self.batch_request_ids = {}
            self.vertex = IndexedDict(group2,
                                      create=lambda j: (j.created, j.seq))
            self.lros = {}                 # name -> dict (Batch/Vertex LRO)
            self.buckets = {}              # bucket -> {name: object}
            self.create_bodies = []        # fakegcp_project._keep
            self.gen = itertools.count(int(time.time() * 1e6))
            self.limits = {}               # (project, region|global, metric)
            self.base_usage = {}
            self.vertex_limits = {}        # (project, region, metric)
            self.prices = []               # overrides
            self.stockouts = []
            self.trace = None              # fakegcp_trace.Trace
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
            if self.trace is not None:
                self.trace.check(now)   # capacity gone: preempt the excess
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


    def stocked_out(self, zone, gpu, spot):
        for s in self.stockouts:
            if s["zone"] not in (zone, cat.ZONE_REGION.get(zone)):
                continue
            if s.get("gpu") not in (None, "", "*", gpu):
                continue
            prov = (s.get("provisioning") or "ANY").upper()
            if prov == "ANY" or (prov == "SPOT") == bool(spot):
                return s
        if self.trace is not None and self.trace.full(zone, gpu, spot,
                                                      self.now()):
            return {"zone": zone, "gpu": gpu, "provisioning": "SPOT",
                    "trace": True}
        return None

    def sku_list(self):
        if self._skus is None:
            self._skus = cat.build_skus()
        return self._skus

    def log(self, line):
        with self.log_lock:
            self.logf.write(line + "\n")

