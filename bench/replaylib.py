"""replaylib.py: what bench/replay needs besides gpuqd: the Spot trace,
the prices, the workload, the oracle (policy 4) and a round-by-round
model of the simple policies (2) and (3).  Standard library only, so
that `make check` can import it on any machine that builds gpuq.

Time is counted in the trace's rounds (10 minutes for the SkyNomad H100
probes): round r covers [r * round_s, (r + 1) * round_s) after the
trace's first round.  A zone's Spot capacity in round r is the number of
a3-highgpu-1g VMs the probe obtained there (0-16); everything below
works on those integers.

The oracle (policy 4) -- each job's cheapest schedule knowing the whole
trace.  It is exact for this discretisation, and a lower bound on what
any policy pays, because of three facts:

  1. Progress that is not checkpointed is lost when a VM stops, so a
     schedule that stops a VM between two checkpoints paid for rounds
     it threw away; stopping at the last checkpoint instead (or at the
     end of the work) costs less and leaves the job in the same state
     at the same time or earlier.  An optimal schedule therefore only
     stops a VM at a checkpoint (every `checkpoint` of work) or at the
     end of the work, and -- knowing the trace -- is never preempted.
  2. Every start (the first one too) pays `overhead` rounds of the
     VM's price without progress (restart_overhead).
  3. Capacity shared between jobs is ignored: a zone with at least one
     VM in round r is open to every job.  The bound only gets lower.

So the state is (round r, checkpoints done c, VM: none, or warm in
offer m) where an offer is a Spot zone (available in round r when the
trace has capacity >= 1 there) or a kind that is always available
(on-demand, and flex-start when the policy under test may use it; the
bound ignores flex-start's queueing).  With V the least cost to finish
by the deadline round D:

  off(r, c)     = min( off(r + 1, c),                      wait a round
                       min_m  price_m[r, r + o) + warm_m(r + o, c) )
                                                           start in m
  warm_m(r, c)  = min( off(r, c),                          stop here
                       price_m[r, r + L_c) + warm_m(r + L_c, c + 1) )
                                                           one more step

where o is the overhead in rounds, L_c the rounds from checkpoint c to
the next (the checkpoint interval, shorter for the last step), a window
[r, r + n) is allowed only when m is available in all of it and
r + n <= D, warm_m(r, C) = off(r, C) = 0 once all C steps are done, and
everything not done by D is infinite.  The answer is off(arrival, 0).
The table is filled backwards in r, in O((D - arrival) x C x offers)
steps (rows only for reachable c).

Prices are dollars per hour (printed by bench/replay); a round of an
offer costs its price in that round x round_s / 3600.
"""

import csv
import json
import math
import os
import random

INF = float("inf")
MACHINE = "a3-highgpu-1g"
VCPUS = 26
MEMORY_GIB = 234


# ---------------------------------------------------------------- trace

class Trace:
    """Spot capacity and Spot GPU price per zone per round.

    zones: list of zone names; cap[z]: list of ints per round;
    gpu_price[z]: list of $/h per round, or None where the trace has none.
    start: text of the first round (UTC); round_s: seconds per round."""

    def __init__(self, zones, cap, gpu_price, round_s, start, source,
                 first=0):
        self.first = first          # rounds cut off the file's start
        self.zones = zones
        self.cap = cap
        self.gpu_price = gpu_price
        self.round_s = round_s
        self.start = start
        self.source = source
        self.rounds = min(len(cap[z]) for z in zones) if zones else 0

    def region(self, zone):
        return zone.rsplit("-", 1)[0]

    def cut(self, rounds, first=0):
        """`rounds` rounds from round `first`: a short replay."""
        zs = self.zones
        w = slice(first, first + rounds)
        start = self.start
        try:
            import datetime
            start = datetime.datetime.fromtimestamp(
                _iso_seconds(self.start) + first * self.round_s,
                datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            start = "%s + %d rounds" % (self.start, first)
        return Trace(list(zs), {z: self.cap[z][w] for z in zs},
                     {z: self.gpu_price[z][w] for z in zs},
                     self.round_s, start, self.source, self.first + first)


def _iso_seconds(text):
    import datetime
    return datetime.datetime.strptime(
        text, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def load_trace(path):
    """The SkyNomad probe CSV (h100-spot-probe-outcomes.csv), a
    Can't Be Late JSON trace (one zone; its file name is the zone), or a
    directory of such JSON files.  Missing rounds of a zone in the CSV
    count as no capacity."""
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if f.endswith(".json"))
        if not files:
            raise ValueError("%s: no .json trace files in it" % path)
        return _merge_json([os.path.join(path, f) for f in files], path)
    if path.endswith(".json"):
        return _merge_json([path], path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"round_scheduled_utc", "zone", "instances_created"}
    if not rows or not need <= set(rows[0]):
        raise ValueError("%s: not a probe-outcomes CSV (needs columns %s)"
                         % (path, ", ".join(sorted(need))))
    times = sorted({r["round_scheduled_utc"] for r in rows})
    secs = [_iso_seconds(t) for t in times]
    gaps = sorted(b - a for a, b in zip(secs, secs[1:]))
    round_s = int(gaps[len(gaps) // 2]) if gaps else 600
    zones = sorted({r["zone"] for r in rows})
    n = int(round((secs[-1] - secs[0]) / round_s)) + 1
    cap = {z: [0] * n for z in zones}
    price = {z: [None] * n for z in zones}
    for r in rows:
        i = int(round((_iso_seconds(r["round_scheduled_utc"]) - secs[0])
                      / round_s))
        cap[r["zone"]][i] = int(r["instances_created"])
        p = r.get("spot_h100_gpu_usd_per_hour_at_probe") or ""
        if p.strip():
            price[r["zone"]][i] = float(p)
    return Trace(zones, cap, price, round_s, times[0], path)


def _merge_json(files, source):
    zones, cap, price, gap = [], {}, {}, None
    for fn in files:
        with open(fn) as f:
            d = json.load(f)
        g = int(d.get("metadata", {}).get("gap_seconds", 0))
        if g <= 0 or "data" not in d:
            raise ValueError("%s: not a Can't Be Late trace (needs "
                             "metadata.gap_seconds and data)" % fn)
        if gap is not None and g != gap:
            raise ValueError("%s: gap_seconds %d differs from %d of the "
                             "other files" % (fn, g, gap))
        gap = g
        z = os.path.splitext(os.path.basename(fn))[0]
        zones.append(z)
        cap[z] = [int(v) for v in d["data"]]
        price[z] = [None] * len(cap[z])
    return Trace(zones, cap, price, gap, "tick 0", source)


# --------------------------------------------------------------- prices

def _data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(here), "tests", "fakegcp", "data")


class Prices:
    """Dollars per hour of one a3-highgpu-1g (1 x H100), the same for
    every policy:

    spot(zone, r)  the trace's Spot GPU price for the zone in round r
                   (else the catalog's Spot GPU price of the region)
                   + the host VM's Spot price (gcp-gpu-host-vm-prices.csv)
    vertex         Vertex AI on-demand: its GPU + A3 vCPU x 26 + A3 RAM
                   x 234 GiB SKUs in us-central1 (vertex-prices.csv)
    standard       Compute Engine on-demand list price: the H100 GPU list
                   price Vertex's SKU is compared with (9.79655, the
                   us-east4 catalog row; the catalog's us-central1 row
                   is flagged ondemand_equals_dws_flexstart_sku and so is
                   not used) + the host's on-demand price
    flex           DWS flex-start: its GPU + A3 core + A3 RAM SKUs
                   (vertex-prices.csv, "flex-start (DWS)")"""

    def __init__(self, trace, datadir=None):
        d = datadir or _data_dir()
        self.notes = []
        host = {}
        with open(os.path.join(d, "gcp-gpu-host-vm-prices.csv")) as f:
            for row in csv.DictReader(f):
                if row["vm_type"] == MACHINE:
                    host[row["zone"]] = (float(row["ondemand_usd_per_hour"]),
                                         float(row["spot_usd_per_hour"]))
        gpu = {}
        flags = {}
        with open(os.path.join(d, "gcp-gpu-prices.csv")) as f:
            for row in csv.DictReader(f):
                if row["accelerator"] == "H100" and row["gpu_count"] == "1":
                    gpu[row["zone"]] = (
                        float(row["gpu_ondemand_per_gpu_usd_per_hour"]),
                        float(row["gpu_spot_per_gpu_usd_per_hour"]))
                    flags[row["zone"]] = row["flags"]
        vx = {}
        with open(os.path.join(d, "vertex-prices.csv")) as f:
            for row in csv.DictReader(f):
                if row["region"] != "us-central1":
                    continue
                key = (row["provisioning"], row["resource"])
                vx.setdefault(key, row)
        od = "on-demand"
        fx = "flex-start (DWS)"
        g = vx[(od, "NVIDIA_H100_80GB")]
        self.vertex = (float(g["usd_per_unit"]) +
                       VCPUS * float(vx[(od, "A3 vCPU")]["usd_per_unit"]) +
                       MEMORY_GIB * float(vx[(od, "A3 memory")]
                                          ["usd_per_unit"]))
        self.ce_gpu_list = float(g["compute_engine_equivalent_usd_per_unit"])
        self.flex = (float(vx[(fx, "NVIDIA_H100_80GB")]["usd_per_unit"]) +
                     VCPUS * float(vx[(fx, "A3 vCPU")]["usd_per_unit"]) +
                     MEMORY_GIB * float(vx[(fx, "A3 memory")]
                                        ["usd_per_unit"]))
        self.host_ondemand = host.get("us-central1-a", (1.18251, 0))[0]
        self.standard = self.ce_gpu_list + self.host_ondemand
        self.notes.append(
            "Compute Engine on-demand H100 GPU: $%.5f/h (list; the "
            "catalog's us-central1 row, $%.5f, is flagged %s and is the "
            "flex-start SKU; every H100 row is flagged "
            "shape_not_sold_ondemand for a3-highgpu-1g)" % (
                self.ce_gpu_list, gpu.get("us-central1-a", (0, 0))[0],
                "ondemand_equals_dws_flexstart_sku"))
        self.spot_gpu_fallback = {}
        self.host_spot = {}
        self.trace = trace
        for z in trace.zones:
            hs = host.get(z)
            if hs is None:
                # Can't Be Late zones are AWS names: price them as
                # us-central1-a, and say so.
                hs = host["us-central1-a"]
                self.notes.append("%s: no GCP host price; priced as "
                                  "us-central1-a" % z)
            self.host_spot[z] = hs[1]
            gp = gpu.get(z, gpu.get("us-central1-a"))[1]
            if flags.get(z, "") and "spot_ge_ondemand" in flags[z]:
                self.notes.append(
                    "%s: catalog Spot GPU $%.4f is flagged spot_ge_"
                    "ondemand; the trace's price is used" % (z, gp))
            self.spot_gpu_fallback[z] = gp
        # A round the probe recorded no price for takes the zone's
        # previous price in the trace (the next one before its first);
        # a zone without any takes the catalog's.
        self.first = 0
        self._spot = {}
        for z in trace.zones:
            ps = trace.gpu_price[z][:trace.rounds]
            known = [p for p in ps if p is not None]
            last = known[0] if known else self.spot_gpu_fallback[z]
            series = []
            for p in ps:
                if p is not None:
                    last = p
                series.append(last + self.host_spot[z])
            self._spot[z] = series
        self.missing_trace_price = [z for z in trace.zones
                                    if all(p is None for p in
                                           trace.gpu_price[z])]

    def window(self, first):
        """Round r is now round first + r of the trace the prices were
        read from (Trace.cut(..., first))."""
        self.first = first
        return self

    def spot(self, zone, r):
        return self._spot[zone][self.first + r]

    def spot_series(self, zone):
        return self._spot[zone][self.first:]

    def table(self):
        """Lines printed by bench/replay: every price used."""
        out = ["prices ($/h of one a3-highgpu-1g, 1 x H100; the same for "
               "every policy):"]
        out.append("  Vertex AI on-demand (us-central1): $%.4f "
                   "(GPU SKU + 26 vCPU + 234 GiB SKUs)" % self.vertex)
        out.append("  Compute Engine on-demand:          $%.4f "
                   "(GPU list $%.5f + host $%.5f)" % (
                       self.standard, self.ce_gpu_list, self.host_ondemand))
        out.append("  DWS flex-start:                    $%.4f "
                   "(GPU + A3 core + A3 RAM SKUs)" % self.flex)
        for z in self.trace.zones:
            s = self.spot_series(z)
            lo, hi = min(s), max(s)
            src = ("catalog (trace has none)"
                   if z in self.missing_trace_price else "the trace")
            out.append("  Spot %-24s $%.4f%s (GPU from %s + host "
                       "Spot $%.5f)" % (
                           z, lo, "" if hi == lo else "-%.4f" % hi, src,
                           self.host_spot[z]))
        for n in self.notes:
            out.append("  note: " + n)
        return out


# ------------------------------------------------------------- workload

def make_workload(seed=17, jobs=120, arrive_hours=72.0, work=(4.0, 48.0),
                  deadline=(1.1, 1.6), checkpoint_minutes=30,
                  overhead_minutes=10, round_minutes=10):
    """The issue's default workload: `jobs` jobs of one H100 each,
    arriving uniformly over the first `arrive_hours`, work uniform in
    `work` hours, a deadline `deadline` x work after arrival (None for
    the no-deadline variant).  Times are whole rounds so that the oracle
    is exact."""
    rng = random.Random(seed)
    out = []
    rm = round_minutes
    for i in range(jobs):
        arr = rng.randrange(int(arrive_hours * 60 / rm)) * rm
        w = int(round(rng.uniform(*work) * 60 / rm)) * rm
        # Drawn for the no-deadline variant too: the same seed gives the
        # same jobs in both.
        f = rng.uniform(*(deadline or (1.1, 1.6)))
        if not deadline:
            f = None
        j = {"name": "replay-%03d" % i,
             "machine_type": MACHINE, "gpus": 1,
             "arrival_minutes": arr,
             "work_minutes": w,
             "checkpoint_minutes": checkpoint_minutes,
             "restart_overhead_minutes": overhead_minutes,
             "deadline_minutes": None}
        if f is not None:
            j["deadline_minutes"] = int(f * w / rm) * rm
        out.append(j)
    out.sort(key=lambda j: (j["arrival_minutes"], j["name"]))
    return out


def load_workload(path):
    with open(path) as f:
        jobs = json.load(f)
    if not isinstance(jobs, list):
        raise ValueError("%s: a workload is a JSON list of jobs" % path)
    for j in jobs:
        for k in ("name", "arrival_minutes", "work_minutes",
                  "checkpoint_minutes", "restart_overhead_minutes"):
            if k not in j:
                raise ValueError("%s: job %r has no %s" % (
                    path, j.get("name"), k))
    return jobs


class JobR:
    """A job in rounds: arrival a, work W, checkpoint k, overhead o,
    deadline round D (the last round boundary by which it must be done;
    the trace's end when it has none)."""

    def __init__(self, j, round_s, rounds):
        rm = round_s / 60.0

        def whole(minutes, what):
            n = minutes / rm
            if abs(n - round(n)) > 1e-6:
                raise ValueError(
                    "job %s: %s (%g min) is not a whole number of the "
                    "trace's %g-minute rounds" % (j["name"], what,
                                                   minutes, rm))
            return int(round(n))
        self.name = j["name"]
        self.a = whole(j["arrival_minutes"], "arrival")
        self.W = whole(j["work_minutes"], "work")
        self.k = whole(j["checkpoint_minutes"], "checkpoint interval")
        self.o = max(1, int(math.ceil(j["restart_overhead_minutes"] / rm
                                      - 1e-9)))
        dl = j.get("deadline_minutes")
        self.has_deadline = dl is not None
        self.D = self.a + whole(dl, "deadline") if dl is not None \
            else rounds
        if self.k <= 0 or self.W <= 0:
            raise ValueError("job %s: work and checkpoint interval must "
                             "be positive" % self.name)


# --------------------------------------------------------------- oracle

class Offer:
    """One way to run a VM: avail[r] and cost[r] (dollars for round r)."""

    def __init__(self, name, avail, cost):
        self.name = name
        self.navail = [0]          # prefix count of unavailable rounds
        self.pcost = [0.0]         # prefix sums of cost
        for a, c in zip(avail, cost):
            self.navail.append(self.navail[-1] + (0 if a else 1))
            self.pcost.append(self.pcost[-1] + c)

    def window(self, r, n):
        """Cost of rounds [r, r + n), or None if not available in all."""
        if self.navail[r + n] != self.navail[r]:
            return None
        return self.pcost[r + n] - self.pcost[r]


def oracle_offers(trace, prices, kinds=("spot", "flex", "standard")):
    h = trace.round_s / 3600.0
    n = trace.rounds
    offers = []
    if "spot" in kinds:
        for z in trace.zones:
            offers.append(Offer("spot:" + z,
                                [c >= 1 for c in trace.cap[z][:n]],
                                [p * h for p in prices.spot_series(z)]))
    if "flex" in kinds:
        offers.append(Offer("flex", [True] * n, [prices.flex * h] * n))
    if "standard" in kinds:
        offers.append(Offer("standard", [True] * n,
                            [prices.standard * h] * n))
    if "vertex" in kinds:
        offers.append(Offer("vertex", [True] * n, [prices.vertex * h] * n))
    return offers


def oracle_cost(job, offers, rounds):
    """Least dollars to finish `job` (a JobR) by its deadline round,
    knowing availability and prices of `offers` (the recurrence in this
    module's comment).  INF when no schedule makes it."""
    a, W, k, o, D = job.a, job.W, job.k, job.o, min(job.D, rounds)
    C = (W + k - 1) // k
    Llast = W - (C - 1) * k
    if a + o + W > D:
        return INF
    M = len(offers)
    # rows[r] = (off, [warm_m]) for r in (cur, cur + max(k, o)]; each a
    # list over c = 0..C (index C: done, cost 0).
    horizon = max(k, o, Llast)
    dead = [INF] * C + [0.0]
    rows = {}
    rows[D] = (dead, [dead] * M)
    for r in range(D - 1, a - 1, -1):
        # Only c = 0, or c with c * k <= r - a - o, can have been
        # reached.
        cmax = min(C, max(1, (r - a - o) // k + 1))
        nxt = rows[r + 1][0] if r + 1 <= D else dead
        off = list(nxt)
        if r + o <= D:
            so = rows[r + o][1]
            for m in range(M):
                w = offers[m].window(r, o)
                if w is None:
                    continue
                wm = so[m]
                for c in range(cmax):
                    v = w + wm[c]
                    if v < off[c]:
                        off[c] = v
        warm = []
        for m in range(M):
            row = list(off)
            if r + k <= D and C > 1:
                w = offers[m].window(r, k)
                if w is not None:
                    wn = rows[r + k][1][m]
                    for c in range(min(cmax, C - 1)):
                        v = w + wn[c + 1]
                        if v < row[c]:
                            row[c] = v
            if r + Llast <= D and cmax >= C:
                w = offers[m].window(r, Llast)
                if w is not None:
                    v = w + rows[r + Llast][1][m][C]
                    if v < row[C - 1]:
                        row[C - 1] = v
            warm.append(row)
        rows[r] = (off, warm)
        rows.pop(r + horizon + 1, None)
    return rows[a][0][0]


# ------------------------------------------------- the simple policies

class Outcome:
    """What one policy did to one job."""

    def __init__(self, name):
        self.name = name
        self.dollars = 0.0
        self.finish_round = None
        self.restarts = 0
        self.billed_rounds = 0
        self.missed = False


def simulate(trace, prices, jobs, policy, region="us-central1"):
    """Round-by-round model of policy "vertex" (2: every job on Vertex AI
    on-demand in one region from its arrival) or "skypilot" (3: launch
    in the cheapest Spot zone with a free VM; after a preemption, the
    cheapest other zone with one; no on-demand; wait a round when none
    has one).  Capacity is shared: a zone runs at most cap[z][r] of the
    jobs' VMs, and when capacity drops the newest VMs there are
    preempted.  A preempted job falls back to its last checkpoint and
    pays the restart overhead again.  Returns {name: Outcome}."""
    h = trace.round_s / 3600.0
    R = trace.rounds
    js = [JobR(j, trace.round_s, R) for j in jobs]
    out = {j.name: Outcome(j.name) for j in js}
    if policy == "vertex":
        for j in js:
            oc = out[j.name]
            oc.billed_rounds = j.o + j.W
            oc.dollars = oc.billed_rounds * prices.vertex * h
            oc.finish_round = j.a + j.o + j.W
            oc.missed = j.has_deadline and oc.finish_round > j.D
        return out
    if policy != "skypilot":
        raise ValueError("unknown policy %r" % policy)
    # per job: zone (None: waiting), started round, boot left, progress
    st = {j.name: dict(zone=None, boot=0, prog=0, ckpt=0, seq=0,
                       last_bad=None, done=False, started=False)
          for j in js}
    seq = 0
    for r in range(R):
        # Preemptions: where capacity fell below what runs there.
        for z in trace.zones:
            here = [j for j in js if st[j.name]["zone"] == z]
            excess = len(here) - trace.cap[z][r]
            if excess > 0:
                here.sort(key=lambda j: -st[j.name]["seq"])
                for j in here[:excess]:
                    s = st[j.name]
                    s["zone"] = None
                    s["prog"] = s["ckpt"]
                    s["last_bad"] = z
        # Launches, in arrival order.
        used = {z: 0 for z in trace.zones}
        for j in js:
            if st[j.name]["zone"]:
                used[st[j.name]["zone"]] += 1
        for j in js:
            s = st[j.name]
            if s["done"] or s["zone"] or j.a > r:
                continue
            free = [z for z in trace.zones if used[z] < trace.cap[z][r]]
            if not free:
                continue
            free.sort(key=lambda z: (prices.spot(z, r), z))
            pick = [z for z in free if z != s["last_bad"]] or free
            z = pick[0]
            seq += 1
            s.update(zone=z, boot=j.o, seq=seq)
            used[z] += 1
            if s["started"]:
                out[j.name].restarts += 1
            s["started"] = True
        # The round runs.
        for j in js:
            s = st[j.name]
            z = s["zone"]
            if not z:
                continue
            oc = out[j.name]
            oc.dollars += prices.spot(z, r) * h
            oc.billed_rounds += 1
            if s["boot"] > 0:
                s["boot"] -= 1
                continue
            s["prog"] += 1
            if s["prog"] % j.k == 0 or s["prog"] == j.W:
                s["ckpt"] = s["prog"]
            if s["prog"] >= j.W:
                s["done"] = True
                s["zone"] = None
                oc.finish_round = r + 1
                oc.missed = j.has_deadline and r + 1 > j.D
    for j in js:
        oc = out[j.name]
        if oc.finish_round is None and j.has_deadline:
            oc.missed = True
    return out


# --------------------------------------------------------------- report

def summarise(trace, jobs, outcomes, oracle_per_job=None):
    """The report's figures for one policy from {name: Outcome}; its
    ratio is dollars per finished job over the oracle's per job."""
    h = trace.round_s / 3600.0
    js = {j["name"]: j for j in jobs}
    total = sum(o.dollars for o in outcomes.values())
    fin = [o for o in outcomes.values() if o.finish_round is not None]
    hours = [o.finish_round * h - js[o.name]["arrival_minutes"] / 60.0
             for o in fin]
    lost = 0.0
    for o in fin:
        j = js[o.name]
        lost += max(0.0, o.billed_rounds * h - (
            j["work_minutes"] + j["restart_overhead_minutes"]) / 60.0)
    return dict(
        dollars=total,
        per_finished=total / len(fin) if fin else INF,
        mean_hours=sum(hours) / len(hours) if hours else INF,
        max_hours=max(hours) if hours else INF,
        lost_gpu_hours=lost,
        restarts=sum(o.restarts for o in outcomes.values()),
        missed=sum(1 for o in outcomes.values() if o.missed),
        unfinished=len(outcomes) - len(fin),
        ratio=(total / len(fin) / oracle_per_job
               if oracle_per_job and fin else None))


HEADER = ("%-22s %11s %10s %8s %8s %9s %8s %6s %6s %7s" % (
    "policy", "dollars", "$/finished", "mean h", "max h", "lost GPUh",
    "restarts", "missed", "unfin", "x oracle"))
# x oracle: dollars per finished job / the oracle's dollars per job.


def row(name, s):
    def f(v, fmt):
        return "-" if v is None or v == INF else fmt % v
    return "%-22s %11s %10s %8s %8s %9s %8s %6s %6s %7s" % (
        name, f(s.get("dollars"), "%.2f"), f(s.get("per_finished"), "%.2f"),
        f(s.get("mean_hours"), "%.1f"), f(s.get("max_hours"), "%.1f"),
        f(s.get("lost_gpu_hours"), "%.1f"), f(s.get("restarts"), "%d"),
        f(s.get("missed"), "%d"), f(s.get("unfinished"), "%d"),
        f(s.get("ratio"), "%.3f"))
