#!/usr/bin/python3
"""bench/poll.py: what one reconciler poll cycle costs with 10, 1,000 and
10,000 running Compute Engine jobs, against the simulated cloud.

    /usr/bin/python3 bench/poll.py [--builddir DIR] [--jobs 10,1000,10000]
        [--cycles 10] [--method launch|direct] [--speed 10]

For each job count it starts a fresh fakegcp and gpuqd (poll_interval
1 s, log_level info), gets N jobs running, then over CYCLES poll cycles
reads:
  - the cloud API calls per cycle, by method, from the fake's request
    log; a cycle runs from one first-page compute.instances.aggregatedList
    call to the next (at 10,000 jobs the fake needs seconds to list 20
    pages, so a cycle may outlast poll_interval);
  - gpuqd's CPU time per cycle (utime + stime from /proc/PID/stat,
    sampled every 50 ms, over the same cycles, divided by them).
Targets: calls per cycle grow only with the API's pages (Compute lists
500 instances a page: ceil(N / 500) aggregatedList calls); CPU per cycle
at most 50 ms at 10,000 jobs.

Getting N jobs running:
  launch  (default) the faithful way: submit N jobs that never finish,
          with quota for all, and let gpuqd launch every one. The time
          it took is printed. gpuqd spends at most 600 Compute calls a
          minute (providers/gcp budget) and a launch is two (insert,
          zoneOperations.wait), so this takes about N / 300 minutes.
  direct  when launching is too slow: submit N jobs held, stop gpuqd,
          create one running VM per job in the fake (POST /_fake/instances
          with the job's labels) and write the matching attempt rows and
          running states straight into gpuq.db with sqlite3, then start
          gpuqd, which adopts them. This leans on the store's schema
          (store/store-schema.c) and bypasses the scheduler.
"""

import argparse
import math
import os
import sqlite3
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)


def setup_path(builddir):
    os.environ["top_srcdir"] = TOP_SRCDIR
    os.environ["top_builddir"] = os.path.abspath(builddir)
    sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests", "integration"))


PAGE = 500              # Compute Engine instances per aggregatedList page
AGG = "compute.instances.aggregatedList"
REGION, ZONE = "us-central1", "us-central1-a"
LONG = 10 ** 8          # simulated seconds of work: never finishes


def quotas(n):
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


def counts(c):
    return c.request({"op": "list", "state": "all", "limit": 1})["counts"]


def launch(c, cu, n, timeout):
    spec = cu.job_spec(providers=["gce"], work=LONG, ckpt=LONG,
                       spot="never", name="poll")
    t0 = time.monotonic()
    c.submit(*[spec] * n)
    last = None
    while True:
        k = counts(c)
        if k.get("running", 0) >= n:
            return time.monotonic() - t0
        if k != last:
            last = k
        if time.monotonic() - t0 > 20 and k.get("queued", 0) >= n and \
                not c.creates("gce"):
            sys.exit("bench/poll: gpuqd does not launch jobs yet (%d queued "
                     "after 20 s, no create call); nothing to measure" % n)
        if time.monotonic() - t0 > timeout:
            sys.exit("bench/poll: only %r of %d jobs running after %.0f s; "
                     "try --method direct (see --help)" % (k, n, timeout))
        if k.get("failed") or k.get("cancelled"):
            sys.exit("bench/poll: jobs ended while launching: %r; gpuqd "
                     "log %s" % (k, c.gpuqd.log))
        time.sleep(0.5)


def direct(c, cu, n):
    """Running jobs without the scheduler (see the module comment)."""
    spec = cu.job_spec(providers=["gce"], work=LONG, ckpt=LONG,
                       spot="never", name="poll")
    t0 = time.monotonic()
    ids = c.submit(*[spec] * n, hold=True)
    ids = ids if isinstance(ids, list) else [ids]
    install = c.install
    c.gpuqd.stop()
    now = int(time.time())
    rows = []
    for jid in ids:
        r = c.ctl("/_fake/instances", {
            "service": "compute", "zone": ZONE, "count": 1,
            "gpu": "nvidia-tesla-t4", "gpu_count": 1,
            "machine_type": "n1-highmem-4",
            "name_prefix": "gpuq-%s-%d" % (install, jid),
            "labels": {"gpuq-install": install, "gpuq-job": str(jid),
                       "gpuq-attempt": "1"}})
        rows.append((jid, r["names"][0]))
    db = sqlite3.connect(os.path.join(c.gpuqd.state_dir, "gpuq.db"))
    with db:
        for jid, name in rows:
            db.execute(
                "INSERT INTO attempts (job_id, number, state, provider,"
                " region, zone, machine_type, gpu, gpu_count, resource,"
                " spot, hourly_usd, created, started) VALUES"
                " (?, 1, 2, 'gce', ?, ?, 'n1-highmem-4', 'nvidia-tesla-t4',"
                " 1, ?, 0, ?, ?, ?)",
                (jid, REGION, ZONE, name, cu.t4_hourly(REGION), now, now))
            db.execute("UPDATE jobs SET state = 4, attempts = 1, why = NULL,"
                       " updated = ? WHERE id = ?", (now, jid))
    db.close()
    c.gpuqd.start()
    took = time.monotonic() - t0
    time.sleep(4)
    k = counts(c)
    if k.get("running", 0) != n:
        sys.exit("bench/poll: after the direct fill gpuqd shows %r, not %d "
                 "running; gpuqd log %s" % (k, n, c.gpuqd.log))
    return took


def measure(c, cu, cycles):
    """Calls by method per cycle and gpuqd CPU seconds per cycle, over
    CYCLES complete poll cycles. A cycle runs from one first-page
    aggregatedList call to the next (pages of a slow listing may take
    longer than poll_interval); gpuqd's CPU time is sampled every 50 ms
    and read at the cycles' boundaries."""
    c.ctl("/_fake/counters/reset", {})
    samples = []
    deadline = time.monotonic() + 60 + 30 * cycles
    firsts = []
    while time.monotonic() < deadline:
        samples.append((time.time(), cu.cpu_seconds(c.gpuqd.pid)))
        if len(samples) % 20 == 0:
            reqs = c.requests()
            firsts = [r["real_time"] for r in reqs
                      if r["method_id"] == AGG and
                      "pageToken" not in (r.get("query") or "")]
            if len(firsts) >= cycles + 2:
                break
        time.sleep(0.05)
    if len(firsts) < 3:
        return {}, 0, 0.0
    # The first cycle may have begun before the counters were reset.
    t0, t1 = firsts[1], firsts[-1]
    n = len(firsts) - 2
    calls = {}
    for r in reqs:
        if t0 <= r["real_time"] < t1:
            calls[r["method_id"]] = calls.get(r["method_id"], 0) + 1

    def cpu_at(t):
        return min(samples, key=lambda x: abs(x[0] - t))[1]
    return calls, n, cpu_at(t1) - cpu_at(t0)


def one(cu, n, args):
    c = cu.Cloud(speed=args.speed, providers=("gce",), regions=(REGION,),
                 setup=quotas(n), log_level="info")
    try:
        if args.method == "launch":
            took = launch(c, cu, n, args.launch_timeout)
        else:
            took = direct(c, cu, n)
        time.sleep(2)
        calls, cycles, cpu = measure(c, cu, args.cycles)
        if not cycles:
            sys.exit("bench/poll: fewer than 3 poll cycles seen with %d "
                     "running jobs; gpuqd log %s" % (n, c.gpuqd.log))
        total = sum(calls.values())
        per = {m: v / cycles for m, v in sorted(calls.items())}
        print("%6d jobs: %s %5.1f s | %3d cycles | %5.1f calls/cycle "
              "(%.1f aggregatedList pages, %d expected) | gpuqd CPU %.2f "
              "ms/cycle | VmHWM %s KiB" % (
                  n, args.method, took, cycles, total / cycles,
                  calls.get(AGG, 0) / cycles, math.ceil(n / PAGE),
                  1000 * cpu / cycles, c.gpuqd.vm_hwm_kib()), flush=True)
        print("        per cycle by method: %s" % ", ".join(
            "%s %.2f" % kv for kv in per.items()), flush=True)
        return total / cycles, 1000 * cpu / cycles
    finally:
        c.close(keep=args.keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1],
                                 formatter_class=argparse.
                                 RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--builddir", default=os.environ.get("top_builddir",
                                                         os.getcwd()))
    ap.add_argument("--jobs", default="10,1000,10000")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--method", choices=("launch", "direct"),
                    default="launch")
    ap.add_argument("--speed", type=float, default=10)
    ap.add_argument("--launch-timeout", type=float, default=1800)
    ap.add_argument("--keep", action="store_true",
                    help="keep the directories (logs) afterwards")
    args = ap.parse_args()
    setup_path(args.builddir)
    for prog in ("gpuqd", "gpuq"):
        if not os.access(os.path.join(args.builddir, prog), os.X_OK):
            sys.exit("bench/poll: %s/%s is not built" % (args.builddir, prog))
    import cloudutil as cu
    print("bench/poll: %s method, poll_interval 1 s, %d cycles each" % (
        args.method, args.cycles), flush=True)
    for n in [int(x) for x in args.jobs.split(",")]:
        one(cu, n, args)


if __name__ == "__main__":
    main()
