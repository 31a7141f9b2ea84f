#!/usr/bin/python3
"""bench/memory.py: gpuqd's memory per running job, per service.

    /usr/bin/python3 bench/memory.py [--builddir DIR] [--jobs 10000]
        [--services gce,batch,vertex] [--cycles 5] [--rounds 1] [--gdb]
        [--keep] [--method direct|launch]

For each service, a fresh fakegcp and gpuqd (poll_interval 1 s,
log_level info) with nothing to do (it lists nothing then) are left for
15 s and gpuqd's resident set is read: RSS idle. Then N jobs are submitted held,
gpuqd is stopped, one running resource per job is made in the fake
(POST /_fake/instances with the job's labels: a Compute Engine VM, a
Batch job or a Vertex AI custom job) and the matching attempt rows and
running states are written into gpuq.db with sqlite3 (as bench/poll.py
--method direct does; this leans on store/store-schema.c and bypasses
the scheduler), and gpuqd is started again: it adopts them and polls
them over the real HTTP API. After CYCLES more complete poll cycles
(a cycle runs from one first-page list call to the next) it prints:
  - RSS idle and RSS with N running (VmRSS from /proc, the median of
    samples taken every 100 ms over the whole cycles counted -- not a
    slice of one, since a Batch or Vertex AI cycle of 100 pages lasts
    several seconds and its pages come and go; the max too);
  - bytes per running job: (RSS running - RSS idle) / N;
  - the service's list calls per poll cycle (its pages: Compute Engine
    500 instances a page, Batch and Vertex AI 100 a page) and every
    call per cycle, which must not grow with N beyond the pages.
Target (issue 18): at most 1 KiB per running job above the idle daemon.
With --rounds R each service is measured R times, each with a fresh
fakegcp and gpuqd, and the median of the R figures is what counts (one
run varies by some 50 bytes a job: where the heap's pages fall, the
pages of a listing in flight).

What is per job and what is not: SQLite's page cache (cache_size,
SQLite's default 2000 KiB) fills as the database grows and then stays:
at 10,000 jobs it is about 200 bytes of each job's figure, at 100,000
a tenth of that. --gdb shows it apart.

--method launch (Compute Engine only: it sets Compute's quotas) has
gpuqd launch the N jobs itself through the scheduler instead, which is
what users do but takes N / 300 minutes (gpuqd spends at most 600
Compute calls a minute, two per launch). --gdb reads, from inside gpuqd
at idle and at N running, SQLite's own memory (sqlite3_memory_used:
its page cache is bounded by cache_size, not per job), malloc's bytes in
use and free (mallinfo2), and VmRSS after malloc_trim(0).

At 10,000 jobs per service on a 2-core machine (shared) the three
services take about three and a half minutes: some 30 s for Compute
Engine and a minute or more for Batch and Vertex AI, most of it the
fake making 10,000 resources and listing them (100 a page: seconds per
poll cycle).
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)


def setup_path(builddir):
    os.environ["top_srcdir"] = TOP_SRCDIR
    os.environ["top_builddir"] = os.path.abspath(builddir)
    sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests", "integration"))


REGION, ZONE = "us-central1", "us-central1-a"
LONG = 10 ** 8          # simulated seconds of work: never finishes
LIST = {
    "gce": "compute.instances.aggregatedList",
    "batch": "batch.projects.locations.jobs.list",
    "vertex": "aiplatform.projects.locations.customJobs.list",
}
PAGE = {"gce": 500, "batch": 100, "vertex": 100}
# gpuqd gives free heap pages back from its poll timer (reconcile.c
# rec_trim()): steady state is read after at least this long.
MIN_STEADY = 15


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def counts(c):
    return c.request({"op": "list", "state": "all", "limit": 1})["counts"]


def fill(c, cu, svc, n):
    """N running attempts of SVC, made directly (see the module
    comment). Returns the seconds it took."""
    spec = cu.job_spec(providers=[svc], work=LONG, ckpt=LONG,
                       spot="never", name="mem")
    t0 = time.monotonic()
    ids = c.submit(*[spec] * n, hold=True)
    ids = ids if isinstance(ids, list) else [ids]
    install = c.install
    c.gpuqd.stop()
    now = int(time.time())
    rows = []
    for jid in ids:
        res = "gpuq-%s-%d-1" % (install, jid)
        labels = {"gpuq-install": install, "gpuq-job": str(jid),
                  "gpuq-attempt": "1"}
        body = {"service": cu.SERVICE[svc], "count": 1,
                "gpu": "nvidia-tesla-t4", "gpu_count": 1,
                "labels": labels, "names": [res]}
        if svc == "gce":
            body.update(zone=ZONE, machine_type="n1-highmem-4")
        else:
            body.update(region=REGION)
        if svc == "vertex":
            labels["gpuq-resource"] = res
        c.ctl("/_fake/instances", body)
        rows.append((jid, res))
    db = sqlite3.connect(os.path.join(c.gpuqd.state_dir, "gpuq.db"))
    with db:
        for jid, name in rows:
            db.execute(
                "INSERT INTO attempts (job_id, number, state, provider,"
                " region, zone, machine_type, gpu, gpu_count, resource,"
                " spot, hourly_usd, created, started) VALUES"
                " (?, 1, 2, ?, ?, ?, 'n1-highmem-4', 'nvidia-tesla-t4',"
                " 1, ?, 0, ?, ?, ?)",
                (jid, svc, REGION, ZONE if svc == "gce" else None, name,
                 cu.t4_hourly(REGION), now, now))
            db.execute("UPDATE jobs SET state = 4, attempts = 1, why = NULL,"
                       " updated = ? WHERE id = ?", (now, jid))
    db.close()
    c.gpuqd.start()
    return time.monotonic() - t0


def quotas(n):
    """Compute Engine quota for N one-T4 VMs (--method launch)."""
    big = max(4 * n + 100, 1000)

    def setup(c):
        for region, metric in ((REGION, "NVIDIA_T4_GPUS"),
                               (REGION, "PREEMPTIBLE_NVIDIA_T4_GPUS"),
                               (REGION, "CPUS"), (REGION, "INSTANCES"),
                               ("global", "GPUS_ALL_REGIONS"),
                               ("global", "CPUS_ALL_REGIONS")):
            c.quota(metric, big * (8 if "CPUS" in metric else 1),
                    region=region)
    return setup


def launch(c, cu, svc, n, timeout):
    """N jobs launched by gpuqd itself (--method launch): the scheduler
    and the provider's create calls. Returns the seconds it took."""
    spec = cu.job_spec(providers=[svc], work=LONG, ckpt=LONG,
                       spot="never", name="mem")
    t0 = time.monotonic()
    c.submit(*[spec] * n)
    while counts(c).get("running", 0) < n:
        if time.monotonic() - t0 > timeout:
            sys.exit("bench/memory: %s: %r after %.0f s, not %d running; "
                     "gpuqd log %s" % (svc, counts(c), timeout, n,
                                        c.gpuqd.log))
        time.sleep(1)
    return time.monotonic() - t0


def steady(c, svc, cycles, timeout):
    """Wait for CYCLES + 1 complete poll cycles of SVC and MIN_STEADY
    seconds; sample VmRSS every 100 ms. Returns (median KiB over the
    cycles counted, max KiB, calls per cycle by method, cycles
    counted)."""
    c.ctl("/_fake/counters/reset", {})
    pid = c.gpuqd.pid
    samples = []
    firsts = []
    reqs = []
    start = time.monotonic()
    deadline = start + timeout
    while time.monotonic() < deadline:
        samples.append((time.time(), rss_kib(pid)))
        if len(samples) % 10 == 0:
            reqs = c.requests()
            firsts = [r["real_time"] for r in reqs
                      if r["method_id"] == LIST[svc] and
                      "pageToken" not in (r.get("query") or "")]
            if len(firsts) >= cycles + 2 and \
                    time.monotonic() - start >= MIN_STEADY:
                break
        time.sleep(0.1)
    if len(firsts) < 3:
        sys.exit("bench/memory: %s: fewer than 3 poll cycles in %.0f s; "
                 "gpuqd log %s" % (svc, timeout, c.gpuqd.log))
    t0, t1 = firsts[1], firsts[-1]
    n = len(firsts) - 2
    calls = {}
    for r in reqs:
        if t0 <= r["real_time"] < t1:
            calls[r["method_id"]] = calls.get(r["method_id"], 0) + 1
    # The cycles counted run from the second first-page call to the
    # last; the samples are on the same clock (the fake's real_time is
    # time.time()).
    rss = [k for t, k in samples if t0 <= t < t1] or \
        [k for t, k in samples[-30:]]
    return statistics.median(rss), max(k for t, k in samples), \
        {m: v / n for m, v in sorted(calls.items())}, n


def settle(c, seconds):
    """The idle daemon lists nothing (no live attempt, no poll): its
    VmRSS over SECONDS, sampled every 100 ms: the median of the last 3 s
    and the max."""
    counts(c)
    rss = []
    t1 = time.monotonic() + seconds
    while time.monotonic() < t1:
        rss.append(rss_kib(c.gpuqd.pid))
        time.sleep(0.1)
    return statistics.median(rss[-30:]), max(rss)


def probe(c, trim=False):
    """--gdb: where the memory is, from inside gpuqd: SQLite's own
    allocations (its page cache is bounded by cache_size, not per job),
    glibc's heap in use and free, and (TRIM) VmRSS after malloc_trim(0).
    A list [sqlite, in use, free, arena, mmapped, rss after trim] in
    bytes, or None."""
    ex = ["print (long)sqlite3_memory_used()",
          "print (long)mallinfo2().uordblks",
          "print (long)mallinfo2().fordblks",
          "print (long)mallinfo2().arena",
          "print (long)mallinfo2().hblkhd"]
    if trim:
        ex.append("print (int)malloc_trim(0)")
    argv = ["gdb", "-p", str(c.gpuqd.pid), "-batch", "-nx"]
    for e in ex:
        argv += ["-ex", e]
    out = subprocess.run(argv, capture_output=True, text=True,
                         timeout=120).stdout
    v = [int(line.split("=")[1]) for line in out.splitlines()
         if line.startswith("$")]
    if len(v) < 5:
        return None
    return v[:5] + [rss_kib(c.gpuqd.pid) * 1024]


def show_probe(idle, run, n):
    if idle is None or run is None:
        print("        (gdb could not read gpuqd)")
        return
    mib = 2 ** 20
    print("        inside gpuqd: SQLite %.1f -> %.1f MiB (%.0f B/job) | "
          "malloc in use %.1f -> %.1f MiB (%.0f B/job beyond SQLite) | "
          "free in the heap %.1f -> %.1f MiB | VmRSS after malloc_trim(0) "
          "%.1f MiB" % (
              idle[0] / mib, run[0] / mib, (run[0] - idle[0]) / n,
              idle[1] / mib, run[1] / mib,
              ((run[1] - run[0]) - (idle[1] - idle[0])) / n,
              idle[2] / mib, run[2] / mib, run[5] / mib), flush=True)


def one(cu, svc, n, args):
    c = cu.Cloud(speed=args.speed, providers=(svc,), regions=(REGION,),
                 log_level=args.log_level, setup=quotas(n) if
                 args.method == "launch" else None)
    try:
        idle, idle_max = settle(c, MIN_STEADY)
        inside = probe(c) if args.gdb else None
        if args.method == "launch":
            took = launch(c, cu, svc, n, args.launch_timeout)
        else:
            took = fill(c, cu, svc, n)
        time.sleep(2)
        k = counts(c)
        if k.get("running", 0) != n:
            sys.exit("bench/memory: %s: after the fill gpuqd shows %r, not "
                     "%d running; gpuqd log %s" % (svc, k, n, c.gpuqd.log))
        run, run_max, calls, cycles = steady(c, svc, args.cycles, 600)
        k = counts(c)
        if k.get("running", 0) != n:
            sys.exit("bench/memory: %s: %r while measuring, not %d running;"
                     " gpuqd log %s" % (svc, k, n, c.gpuqd.log))
        per = (run - idle) * 1024 / n
        print("%-6s %6d running: RSS idle %6.1f MiB, running %6.1f MiB "
              "(max %.1f) | %7.0f bytes per running job | %.1f list calls "
              "per poll (%d a page), %.1f calls in all | fill %.0f s, "
              "%d cycles" % (
                  svc, n, idle / 1024, run / 1024, run_max / 1024, per,
                  calls.get(LIST[svc], 0), PAGE[svc], sum(calls.values()),
                  took, cycles), flush=True)
        if args.gdb:
            show_probe(inside, probe(c, trim=True), n)
        others = {m: v for m, v in calls.items() if m != LIST[svc]}
        if others:
            print("        other calls per poll: %s" % ", ".join(
                "%s %.2f" % kv for kv in others.items()), flush=True)
        return per
    finally:
        c.close(keep=args.keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1],
                                 formatter_class=argparse.
                                 RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--builddir", default=os.environ.get("top_builddir",
                                                         os.getcwd()))
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--services", default="gce,batch,vertex")
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure each service this many times and take "
                    "the median")
    ap.add_argument("--speed", type=float, default=10)
    ap.add_argument("--method", choices=("direct", "launch"),
                    default="direct")
    ap.add_argument("--launch-timeout", type=float, default=3600)
    ap.add_argument("--log-level", default="info",
                    help="gpuqd's (debug logs each malloc_trim's time)")
    ap.add_argument("--gdb", action="store_true",
                    help="also read SQLite's and malloc's figures from "
                    "inside gpuqd with gdb")
    ap.add_argument("--keep", action="store_true",
                    help="keep the directories (logs) afterwards")
    args = ap.parse_args()
    setup_path(args.builddir)
    for prog in ("gpuqd", "gpuq"):
        if not os.access(os.path.join(args.builddir, prog), os.X_OK):
            sys.exit("bench/memory: %s/%s is not built" % (args.builddir,
                                                            prog))
    import cloudutil as cu
    t0 = time.monotonic()
    print("bench/memory: %d running jobs per service, poll_interval 1 s; "
          "target <= 1024 bytes per running job" % args.jobs, flush=True)
    worst = 0
    for svc in args.services.split(","):
        runs = [one(cu, svc, args.jobs, args) for _ in range(args.rounds)]
        per = statistics.median(runs)
        if args.rounds > 1:
            print("%-6s median of %d rounds: %.0f bytes per running job "
                  "(%s)" % (svc, args.rounds, per,
                            ", ".join("%.0f" % r for r in runs)),
                  flush=True)
        worst = max(worst, per)
    print("worst: %.0f bytes per running job = %.2f x 1 KiB (%.0f s)" % (
        worst, worst / 1024, time.monotonic() - t0))


if __name__ == "__main__":
    main()
