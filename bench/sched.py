#!/usr/bin/python3
"""bench/sched.py: how long a scheduling pass takes with 10,000 and
100,000 queued jobs over 30 regions x 3 services, against the simulated
cloud: a full pass, a pass with nothing changed, and a pass after each
single change.

    /usr/bin/python3 bench/sched.py [--builddir DIR] [--jobs 10000,100000]
        [--regions 30] [--passes 5] [--runs 3] [--shapes 1] [--idle 10]

For each job count: a fresh fakegcp and gpuqd (log_level debug) with 30
regions (every region of the fake's catalog with T4s first) and the
providers vertex, batch and gce; quota for only a handful of GPUs
(GPUS_ALL_REGIONS 8, no Vertex AI GPU quota), so nearly every job stays
queued. N jobs (1 T4, Spot allowed, all regions and services; or with
--shapes K, cycling over K shapes: T4, L4, V100, A100 at each count, Spot
allowed or not) are submitted at once; once gpuqd is quiet:
  - PASSES passes triggered by one submit each, a second apart (the
    figure this bench always printed), with gpuqd's CPU over them;
  - RUNS times each of (doc/DESIGN.md "The pass"):
      restart     gpuqd restarted: every spec parsed, every shape priced
      full        another connection wrote the queue: the set read whole,
                  every job placed the long way
      nothing     a pass after a quota refresh that changed nothing
      job ends    a running job cancelled; the pass that frees its quota
      quota       one regional T4 quota limit changed (the passes in the
                  next 5 s, the slowest counted)
      price       one T4 price changed in the catalog, in the first
                  region (it has T4s): the shapes of T4 priced again,
                  the others not (once: [gcp] price_refresh is 60 s at
                  least)
      stockout    the zone of a running job stocked out, the job
                  cancelled: the pass after the relaunch met the stockout
    each as median/max of the pass's own time and CPU time from gpuqd's
    debug line, which also says what it read, walked and priced;
  - gpuqd's CPU while idle for IDLE seconds with the queue full, after a
    restart on the default quota_ttl and poll_interval.
Target: a full pass at most 50 ms at 100,000 queued jobs, a pass after
one change at most 5 ms; an idle gpuqd uses no CPU.
"""

import argparse
import os
import re
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)
LONG = 10 ** 8

DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|us|µs|s)\b")
UNIT = {"s": 1000.0, "ms": 1.0, "us": 0.001, "µs": 0.001}


def setup_path(builddir):
    os.environ["top_srcdir"] = TOP_SRCDIR
    os.environ["top_builddir"] = os.path.abspath(builddir)
    sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests", "integration"))


def pick_regions(cu, n):
    t4 = cu.regions_with("nvidia-tesla-t4")
    rest = [r for r in cu.catalog.REGIONS if r not in t4]
    return (t4 + rest)[:n]


# Job shapes for --shapes: (GPU, count); each also with spot never.
SHAPES = [(g, n) for g, ns in (("nvidia-tesla-t4", (1, 2, 4)),
                               ("nvidia-l4", (1, 2, 4, 8)),
                               ("nvidia-tesla-v100", (1, 2, 4, 8)),
                               ("nvidia-tesla-a100", (1, 2, 4, 8)))
          for n in ns]


def specs(cu, n, shapes):
    """N job specs cycling over SHAPES distinct shapes."""
    kinds = []
    for g, k in SHAPES:
        for spot in ("allow", "never"):
            kinds.append(cu.job_spec(work=LONG, ckpt=LONG, name="sched",
                                     gpu=g, count=k, spot=spot))
    kinds = kinds[:max(1, shapes)]
    return [kinds[i % len(kinds)] for i in range(n)]


def quotas(cu, regions):
    """GPUS_ALL_REGIONS 8 (Compute and Batch); no Vertex AI GPU quota."""
    vq = sorted({g["vq"] for g in cu.catalog.GPUS.values()})

    def setup(c):
        c.quota("GPUS_ALL_REGIONS", 8, region="global")
        for r in regions:
            for g in vq:
                for spot in ("", "preemptible_"):
                    c.quota("custom_model_training_%snvidia_%s_gpus" % (
                        spot, g), 0, region=r, service="aiplatform")
    return setup


def pass_lines(text):
    """(ms, line) for scheduler log lines that time a pass."""
    out = []
    for ln in text.splitlines():
        low = ln.lower()
        if "sched" not in low or "pass" not in low:
            continue
        m = DURATION.findall(ln.split("pass", 1)[1])
        if m:
            v, unit = m[-1]
            out.append((float(v) * UNIT[unit], ln.strip()))
    return out


PASS = re.compile(r"pass (\d+): (\d+) runnable, (\d+) read, (\d+) walked, "
                  r"(\d+) shape\(s\), (\d+) priced, (\d+) waiting, "
                  r"(\d+) launched, (\d+) why\(s\) written, "
                  r"cpu ([\d.]+),.* ([\d.]+) ms")


class Passes:
    """gpuqd's pass lines, read on from where the last call stopped."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.mark()

    def mark(self):
        with open(self.path, errors="replace") as f:
            f.seek(0, 2)
            self.offset = f.tell()

    def new(self):
        with open(self.path, errors="replace") as f:
            f.seek(0, 2)
            if f.tell() < self.offset:
                self.offset = 0
            f.seek(self.offset)
            text = f.read()
            self.offset = f.tell()
        out = []
        for ln in text.splitlines():
            m = PASS.search(ln)
            if m:
                g = m.groups()
                out.append({"runnable": int(g[1]), "read": int(g[2]),
                            "walked": int(g[3]), "shapes": int(g[4]),
                            "priced": int(g[5]),
                            "launched": int(g[7]), "whys": int(g[8]),
                            "cpu": float(g[9]), "ms": float(g[10])})
        return out

    def wait(self, pick, timeout):
        """The first pass (or passes) PICK accepts, within TIMEOUT s."""
        t0 = time.monotonic()
        seen = []
        while time.monotonic() - t0 < timeout:
            seen += self.new()
            r = pick(seen)
            if r is not None:
                return r
            time.sleep(0.1)
        return None


def first(cond):
    def pick(seen):
        for p in seen:
            if cond(p):
                return p
        return None
    return pick


def find_key(obj, key):
    """The first non-empty string under KEY anywhere in OBJ, or None."""
    if isinstance(obj, dict):
        if isinstance(obj.get(key), str) and obj[key]:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            r = find_key(v, key)
            if r:
                return r
    return None


def running_ids(c):
    return [j["id"] for j in c.list_jobs("running")]


def summary(name, recs):
    if not recs:
        print("        %-10s no pass seen" % name, flush=True)
        return
    ms = [r["ms"] for r in recs]
    cpu = [r["cpu"] for r in recs]
    e = recs[len(recs) // 2]
    print("        %-10s median %7.2f ms (CPU %6.2f), max %7.2f ms over "
          "%d; read %d, walked %d, priced %d, launched %d, whys %d" % (
              name, statistics.median(ms), statistics.median(cpu), max(ms),
              len(recs), e["read"], e["walked"], e["priced"], e["launched"],
              e["whys"]),
          flush=True)


def foreign_write(c):
    """Another connection commits to gpuqd's queue (the why of the first
    queued job, which the pass then writes back): the next pass reads the
    whole set again, as after any outside writer. (An UPDATE that changes
    nothing commits nothing, and PRAGMA data_version stays.)"""
    import glob
    import sqlite3
    path = sorted(glob.glob(os.path.join(c.gpuqd.state_dir, "*.db")))[0]
    db = sqlite3.connect(path, timeout=30)
    db.execute("UPDATE jobs SET why = 'bench: written by another "
               "connection' WHERE id = (SELECT min(id) FROM jobs "
               "WHERE state = 1)")
    db.commit()
    db.close()
    c.submit(c.last_spec)


def changes(cu, c, n, args, regions):
    """Each single change RUNS times; prints their passes."""
    log = Passes(c.gpuqd.log)
    keys = ("restart", "full", "nothing", "job ends", "quota", "price",
            "stockout")
    res = {k: [] for k in keys}
    for i in range(args.runs):
        log.mark()
        time.sleep(2.5)
        r = log.wait(first(lambda p: p["read"] == 0 and p["priced"] == 0
                           and p["whys"] == 0), 10)
        if r:
            res["nothing"].append(r)

        ids = running_ids(c)
        if ids:
            log.mark()
            c.request({"op": "cancel", "id": ids[0]})
            r = log.wait(first(lambda p: p["launched"] >= 1), 20)
            if r:
                res["job ends"].append(r)
            quiet(c, 60)

        log.mark()
        c.quota("NVIDIA_T4_GPUS", limit=16 + i, region=regions[0])
        time.sleep(5)
        got = log.new()
        if got:
            res["quota"].append(max(got, key=lambda p: p["ms"]))

        ids = running_ids(c)
        zone = find_key(c.show(ids[0]), "zone") if ids else None
        if zone:
            c.ctl("/_fake/stockout", {"zone": zone,
                                      "gpu": "nvidia-tesla-t4"})
            log.mark()
            c.request({"op": "cancel", "id": ids[0]})
            r = log.wait(first(lambda p: p["priced"] >= 1), 30)
            if r:
                res["stockout"].append(r)
            c.ctl("/_fake/stockout", {"zone": zone, "on": False,
                                      "gpu": "nvidia-tesla-t4"})
            quiet(c, 60)

        log.mark()
        foreign_write(c)
        r = log.wait(first(lambda p: p["read"] >= n // 2), 30)
        if r:
            res["full"].append(r)

        log.mark()
        c.restart()
        r = log.wait(first(lambda p: p["read"] >= n // 2), 300)
        if r:
            res["restart"].append(r)
        quiet(c, 120)

    log.mark()
    c.price(service="compute", gpu="nvidia-tesla-t4", region=regions[0],
            usage_type="OnDemand", usd_per_hour=9.99)
    # The shapes of T4 priced again, those of other GPUs not: the first
    # pass after the catalog read that prices any (a stockout's
    # cool-down that ends prices only the shapes of its GPU too, and
    # none is under way here).
    r = log.wait(first(lambda p: p["priced"] >= 1 and
                       p["read"] < n // 2), 150)
    if r:
        res["price"].append(r)
    for k in keys:
        summary(k, res[k])


def idle(cu, c, n, args):
    """gpuqd's CPU over ARGS.idle s with the queue full, on the defaults."""
    c.reconfigure(scheduler={"quota_ttl": "60s", "poll_interval": "15s"})
    log = Passes(c.gpuqd.log)
    c.restart()
    log.wait(first(lambda p: p["read"] >= n // 2), 300)
    quiet(c, 120)
    time.sleep(2)
    log.mark()
    cpu0 = cu.cpu_seconds(c.gpuqd.pid)
    time.sleep(args.idle)
    cpu = cu.cpu_seconds(c.gpuqd.pid) - cpu0
    print("        idle %d s with %d queued (quota_ttl 60 s, poll_interval "
          "15 s): gpuqd CPU %.0f ms, %d pass(es)" % (
              args.idle, n, 1000 * cpu, len(log.new())), flush=True)


def counts(c):
    return c.request({"op": "list", "state": "all", "limit": 1},
                     timeout=120)["counts"]


def quiet(c, timeout):
    """Until no job is launching and the counts stay put for 3 s."""
    t0 = time.monotonic()
    last, since = None, time.monotonic()
    while time.monotonic() - t0 < timeout:
        k = counts(c)
        if k != last or k.get("launching"):
            last, since = k, time.monotonic()
        elif time.monotonic() - since >= 3:
            return k
        time.sleep(0.5)
    return last


def one(cu, n, args):
    regions = pick_regions(cu, args.regions)
    c = cu.Cloud(speed=10, regions=regions, providers=cu.PROVIDERS,
                 setup=quotas(cu, regions), log_level="debug",
                 gcp={"price_refresh": "60s"})
    try:
        jobs = specs(cu, n, args.shapes)
        spec = jobs[0]
        c.last_spec = spec
        t0 = time.monotonic()
        for i in range(0, n, 20000):
            c.submit(*jobs[i:i + 20000])
        print("%7d jobs submitted in %.1f s" % (n, time.monotonic() - t0),
              flush=True)
        k = quiet(c, 600)
        print("        quiet: %r" % {s: v for s, v in k.items() if v},
              flush=True)
        with open(c.gpuqd.log, errors="replace") as f:
            f.seek(0, 2)
            offset = f.tell()
        cpu0 = cu.cpu_seconds(c.gpuqd.pid)
        for _ in range(args.passes):
            c.submit(spec)
            time.sleep(1.0)
        time.sleep(1.0)
        cpu = cu.cpu_seconds(c.gpuqd.pid) - cpu0
        with open(c.gpuqd.log, errors="replace") as f:
            f.seek(offset)
            lines = pass_lines(f.read())
        if lines:
            ms = [x for x, _ in lines]
            print("        %d passes logged: median %.2f ms, max %.2f ms; "
                  "e.g. %s" % (len(ms), statistics.median(ms), max(ms),
                               lines[len(lines) // 2][1]), flush=True)
        else:
            print("        gpuqd logged no pass durations at debug level "
                  "(no line with 'sched', 'pass' and a duration)",
                  flush=True)
        print("        gpuqd CPU over %d triggered passes: %.1f ms each "
              "(upper bound) | VmHWM %s KiB" % (
                  args.passes, 1000 * cpu / args.passes,
                  c.gpuqd.vm_hwm_kib()), flush=True)
        r = c.request({"op": "plan", "job": cu.job_spec()})
        if r.get("ok"):
            times = []
            for _ in range(10):
                t = time.monotonic()
                c.request({"op": "plan", "job": cu.job_spec()})
                times.append(1000 * (time.monotonic() - t))
            print("        plan op for one job: median %.2f ms" %
                  statistics.median(times), flush=True)
        else:
            print("        plan op: %s" % (r.get("error") or {}).get(
                "message"), flush=True)
        changes(cu, c, n, args, regions)
        idle(cu, c, n, args)
    finally:
        c.close(keep=args.keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1],
                                 formatter_class=argparse.
                                 RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--builddir", default=os.environ.get("top_builddir",
                                                         os.getcwd()))
    ap.add_argument("--jobs", default="10000,100000")
    ap.add_argument("--regions", type=int, default=30)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3,
                    help="times each single change is made")
    ap.add_argument("--idle", type=int, default=10,
                    help="seconds of idle CPU measured")
    ap.add_argument("--shapes", type=int, default=1,
                    help="distinct job shapes (GPU, count, Spot), up to "
                    "%d" % (2 * len(SHAPES)))
    ap.add_argument("--keep", action="store_true",
                    help="keep the directories (logs) afterwards")
    args = ap.parse_args()
    setup_path(args.builddir)
    for prog in ("gpuqd", "gpuq"):
        if not os.access(os.path.join(args.builddir, prog), os.X_OK):
            sys.exit("bench/sched: %s/%s is not built" % (args.builddir,
                                                          prog))
    import cloudutil as cu
    print("bench/sched: %d regions x %s, %d job shape(s)" % (
        args.regions, ", ".join(cu.PROVIDERS), args.shapes), flush=True)
    for n in [int(x) for x in args.jobs.split(",")]:
        one(cu, n, args)


if __name__ == "__main__":
    main()
