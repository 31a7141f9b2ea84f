"""Trace mode and the billing ledger (issue 17; README "Trace mode").

A trace says how much Spot capacity of one GPU each zone has over time:

* ``probe`` (SkyNomad's ``h100-spot-probe-outcomes.csv``): a round every
  10 minutes, ``instances_created`` of 16 Spot a3-highgpu-1g VMs per zone,
  and the Spot H100 GPU price the probe read from the Billing Catalog
  (``spot_h100_gpu_usd_per_hour_at_probe``, empty when not recorded).
* ``cbl`` (Can't Be Late's JSON, ``{"metadata": {"gap_seconds": N},
  "data": [v0, v1, ...]}``, 1 = available in the raw files): one zone per
  file, the zone given with it.

Trace time 0 (the first round) is simulated time ``start`` (default: the
fake clock's origin).  A zone's capacity in a round is the number the
trace gives, counted in GPUs of the traced type and shared by every live
Spot resource with that GPU in the zone, whatever the service.  Then:

* a Spot create in a traced zone without free capacity is a stockout
  (``Fake.stocked_out``, the existing wording of each service);
* when capacity drops below what runs there, the newest running Spot
  resources over it are preempted as each service does it (Compute
  Engine: ``compute.instances.preempted`` and TERMINATED; Batch: the task
  fails with exit code 50001; Vertex AI: its Spot preemption, restarted
  or failed as ``vertex_spot_restarts`` says);
* the Billing Catalog's Spot GPU SKU of the region is the trace's price
  at the time (the price of the region's first zone with one in the
  round, else the last one seen; before the first one, that first one,
  or with ``backfill_prices: false`` the catalog's from data/);
* on-demand capacity is unlimited (the trace measures Spot only).

The ledger (``ledger()``) is the bill Google would send: for every
resource that ran, its billed seconds (from running to its end, or now)
times its hourly price at each moment, priced from the same SKUs the
fake's catalog serves (``fakegcp_billing.Billing.price_for``, overrides
and trace included): Compute Engine and Batch VMs the GPU SKU x count
plus the host's core and RAM SKUs (Spot or on-demand); Vertex AI
on-demand its all-in Training SKUs; Vertex AI Spot the Compute Engine
Spot SKUs plus Vertex's management fee.  Per resource, per job (gpuq's
``gpuq-job`` label) and in all.
"""
import bisect
import csv
import json

import fakegcp_catalog as cat
from fakegcp_errors import ApiError

GAP = 600.0                  # the probe's 10-minute rounds
CHECK_EVERY = 60.0           # simulated s between looks within a round


class Trace:
    def __init__(self, fake, start, gap, zones, prices, gpu, rounds,
                 backfill=True):
        self.f = fake
        self.start = float(start)
        self.gap = float(gap)
        self.zones = zones          # zone -> [capacity per round]
        self.prices = prices        # region -> [(round, usd)] sorted
        self.gpu = gpu
        self.rounds = rounds
        self.backfill = backfill
        self.preempted = 0
        # (seq, runs) of resources preempted: they hold nothing while
        # they stop; a Vertex AI job restarted after it has a new run.
        self.gone = set()
        self.checked = (None, 0.0)  # (round, time) of the last check

    # -- loading -------------------------------------------------------------
    @classmethod
    def load(cls, fake, body):
        fmt = body.get("format") or "probe"
        path = body.get("file")
        if not isinstance(path, str) or not path:
            raise ApiError(400, "file: the trace file's path is required")
        start = body.get("start")
        if start is None:
            start = fake.clock.origin
        if not isinstance(start, (int, float)) or isinstance(start, bool):
            raise ApiError(400, "start: simulated epoch seconds of trace "
                           "time 0, a number")
        gpu = body.get("gpu") or "nvidia-h100-80gb"
        if gpu not in {g["type"] for g in cat.GPUS.values()}:
            raise ApiError(400, "gpu: %r is no Compute Engine accelerator "
                           "type the fake knows" % gpu)
        try:
            if fmt == "probe":
                zones, prices, n = cls._probe(path)
                gap = GAP
            elif fmt == "cbl":
                zone = body.get("zone")
                if zone not in cat.ZONE_REGION:
                    raise ApiError(400, "zone: a cbl trace needs the zone "
                                   "it describes (not %r)" % zone)
                with open(path) as fh:
                    d = json.load(fh)
                gap = float(d["metadata"]["gap_seconds"])
                zones = {zone: [int(v) for v in d["data"]]}
                prices, n = {}, len(d["data"])
            else:
                raise ApiError(400, "format: probe or cbl (not %r)" % fmt)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ApiError(400, "cannot read trace %s: %s" % (path, e))
        if n == 0:
            raise ApiError(400, "trace %s has no rounds" % path)
        return cls(fake, start, gap, zones, prices, gpu, n,
                   body.get("backfill_prices", True) is not False)

    @staticmethod
    def _probe(path):
        rounds = {}
        rows = []
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                rows.append(r)
                rounds[r["round_scheduled_utc"]] = None
        order = {k: i for i, k in enumerate(sorted(rounds))}
        n = len(order)
        zones, prices = {}, {}
        for r in rows:
            i = order[r["round_scheduled_utc"]]
            caps = zones.setdefault(r["zone"], [0] * n)
            caps[i] = int(r["instances_created"])
            p = (r.get("spot_h100_gpu_usd_per_hour_at_probe") or "").strip()
            if p:
                lst = prices.setdefault(r["region"], {})
                lst.setdefault(i, float(p))     # the region's first zone
        return zones, {reg: sorted(d.items()) for reg, d in
                       prices.items()}, n

    # -- reading -------------------------------------------------------------
    def round_at(self, t):
        i = int((t - self.start) // self.gap)
        return min(max(i, 0), self.rounds - 1)

    def capacity(self, zone, t):
        """GPUs of the traced type free for Spot in ZONE at T (None: the
        zone is not traced: no limit)."""
        caps = self.zones.get(zone)
        return None if caps is None else caps[self.round_at(t)]

    def gpu_price(self, region, t):
        lst = self.prices.get(region)
        if not lst:
            return None
        i = bisect.bisect_right(lst, (self.round_at(t), float("inf"))) - 1
        if i < 0:
            return lst[0][1] if self.backfill else None
        return lst[i][1]

    def holds(self, r):
        """GPUs of the traced type R holds as Spot capacity in its zone."""
        if not r.spot or r.gpu != self.gpu or r.zone not in self.zones or \
                r.deleted or not r.live() or \
                (r.seq, len(r.runs)) in self.gone:
            return 0
        if getattr(r, "strategy", "SPOT") != "SPOT":
            return 0                    # Vertex flex-start: not Spot
        n = max(1, getattr(r, "task_count", 1), getattr(r, "replicas", 1))
        return r.gpu_count * n

    def used(self, zone):
        return sum(self.holds(r) for r in self.f.all_resources()
                   if r.zone == zone)

    def full(self, zone, gpu, spot, t):
        cap = self.capacity(zone, t)
        if cap is None or not spot or gpu != self.gpu:
            return False
        return self.used(zone) >= cap

    # -- preemption ----------------------------------------------------------
    def check(self, t):
        """Preempt, in each traced zone, the newest running Spot resources
        beyond the zone's capacity at T.  Capacity changes only at a new
        round (creates past it stock out), so between rounds a look every
        CHECK_EVERY simulated seconds catches the rest (a Vertex AI job
        restarted in its zone) while the clock thread, which holds the
        fake's lock, stays cheap at 2000x."""
        i = self.round_at(t)
        if i == self.checked[0] and t - self.checked[1] < CHECK_EVERY:
            return
        self.checked = (i, t)
        live = {}
        for r in self.f.all_resources():
            n = self.holds(r)
            if n:
                live.setdefault(r.zone, []).append((r, n))
        for zone, lst in live.items():
            cap = self.capacity(zone, t)
            over = sum(n for _, n in lst) - cap
            if over <= 0:
                continue
            lst.sort(key=lambda x: (x[0].started or x[0].created, x[0].seq),
                     reverse=True)
            for r, n in lst:
                if over <= 0:
                    break
                if preempt(r, t):
                    self.gone.add((r.seq, len(r.runs)))
                    self.preempted += 1
                    over -= n

    def describe(self, t):
        i = self.round_at(t)
        return {"start": self.start, "gap_seconds": self.gap,
                "rounds": self.rounds, "gpu": self.gpu, "round": i,
                "capacity": {z: c[i] for z, c in sorted(self.zones.items())},
                "used": {z: self.used(z) for z in sorted(self.zones)},
                "spot_gpu_usd_per_hour": {
                    reg: self.gpu_price(reg, t) for reg in
                    sorted(self.prices)},
                "preempted": self.preempted}


def running(r):
    """What the control API's /_fake/preempt accepts as running."""
    st = r.state()
    if r.service == "compute":
        return st == "RUNNING"
    if r.service == "batch":
        return r.jstate == "RUNNING" and r.task_state == "RUNNING"
    return st == "JOB_STATE_RUNNING" and bool(r.runs) and \
        r.runs[-1].state == "running"


def preempt(r, t):
    """Preempt R at T as its service does (fakegcp_control.interrupt)."""
    if not running(r):
        return False
    if r.service == "compute":
        r.interrupt(t, "compute.instances.preempted", "preempted")
    elif r.service == "batch":
        r.task_failed(t, 50001, 0)
    else:
        r.interrupt(t, "preempted")
    return True


# -- the ledger --------------------------------------------------------------

def _index(fake):
    ix = {}
    for which in ("compute", "vertex"):
        for e in fake.sku_list()[which]:
            ix.setdefault((which, e["key"]), e)
    return ix


def hourly(fake, billing, ix, r, t):
    """R's price per hour at simulated time T, from the catalog's SKUs
    (with overrides and the trace's Spot prices); None when a SKU it
    needs is missing."""
    machine = r.machine_name() if hasattr(r, "machine_name") else \
        getattr(r, "machine", None)
    info = cat.machine_info(machine or "")
    series = cat.series_of(machine or "")
    nodes = max(1, getattr(r, "task_count", 1), getattr(r, "replicas", 1))
    vertex = r.service == "vertex"
    spot = bool(r.spot) and getattr(r, "strategy", "SPOT") == "SPOT"
    # Flex-start is billed with the DWS SKUs (fakegcp_catalog.dws_skus),
    # on Vertex AI with its management fee on top, as Spot is.
    flex = bool(getattr(r, "flex", False))
    usage = "Preemptible" if spot else "DWS" if flex else "OnDemand"
    parts = []
    if vertex and not spot and not flex:
        parts.append(("vertex", ("gpu", r.gpu, r.region, "OnDemand"),
                      r.gpu_count))
        if info:
            parts.append(("vertex", ("core", series, r.region, "OnDemand"),
                          info[0]))
            parts.append(("vertex", ("ram", series, r.region, "OnDemand"),
                          info[1]))
    else:
        parts.append(("compute", ("gpu", r.gpu, r.region, usage),
                      r.gpu_count))
        if info:
            parts.append(("compute", ("core", series, r.region, usage),
                          info[0]))
            parts.append(("compute", ("ram", series, r.region, usage),
                          info[1]))
        if vertex:
            parts.append(("vertex", ("fee-gpu", r.gpu, r.region,
                                     "OnDemand"), r.gpu_count))
            if info:
                parts.append(("vertex", ("fee-core", series, r.region,
                                         "OnDemand"), info[0]))
                parts.append(("vertex", ("fee-ram", series, r.region,
                                         "OnDemand"), info[1]))
    total = 0.0
    for which, key, qty in parts:
        if not qty or key[1] is None:
            continue
        e = ix.get((which, key))
        if e is None:
            return None
        total += qty * billing.price_for(which, e, t)
    return total * nodes


def ledger(fake, billing):
    now = fake.now()
    tr = getattr(fake, "trace", None)
    ix = _index(fake)
    out, jobs, total = [], {}, 0.0
    for r in sorted(fake.all_resources(), key=lambda x: x.seq):
        if r.started is None:
            continue
        end = r.ended if r.ended is not None else now
        if r.deleted and r.ended is None:
            end = getattr(r, "deleted_at", None) or now
        end = max(end, r.started)
        # Piecewise over the trace's rounds: a Spot price may change.
        cuts = [r.started]
        if tr is not None:
            k = tr.start + (tr.round_at(r.started) + 1) * tr.gap
            while k < end:
                cuts.append(k)
                k += tr.gap
        cuts.append(end)
        usd, missing = 0.0, False
        for a, b in zip(cuts, cuts[1:]):
            h = hourly(fake, billing, ix, r, a)
            if h is None:
                missing = True
                break
            usd += h * (b - a) / 3600.0
        job = r.labels.get("gpuq-job")
        d = {"service": r.service, "name": r.name,
             "resource": r.full_name(), "region": r.region, "zone": r.zone,
             "spot": r.spot, "gpu": r.gpu, "gpu_count": r.gpu_count,
             "job": job, "attempt": r.labels.get("gpuq-attempt"),
             "started": r.started, "ended": r.ended,
             "billed_seconds": end - r.started,
             "usd": None if missing else round(usd, 6),
             "usd_per_hour_now": hourly(fake, billing, ix, r,
                                        min(end, now))}
        out.append(d)
        if missing:
            continue
        total += usd
        if job is not None:
            j = jobs.setdefault(job, {"usd": 0.0, "billed_seconds": 0.0,
                                      "resources": 0})
            j["usd"] += usd
            j["billed_seconds"] += end - r.started
            j["resources"] += 1
    for j in jobs.values():
        j["usd"] = round(j["usd"], 6)
    return {"now": now, "total_usd": round(total, 6), "jobs": jobs,
            "resources": out}
