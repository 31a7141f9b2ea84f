#!/usr/bin/python3
"""bench/array.py: a 10,000-task job array against the simulated cloud:
how long its submit takes, how long `gpuq status` takes with it queued,
and how long one scheduling pass takes with it queued.

    /usr/bin/python3 bench/array.py [--builddir DIR] [--tasks 10000]
        [--parallelism 100] [--regions 30] [--passes 5]

A fresh fakegcp and gpuqd (log_level debug), set up as bench/sched.py
does: 30 regions x vertex, batch, gce, quota for only 8 GPUs, so nearly
every task stays queued and each pass walks them all (through the
dependency and parallelism gate, doc/DESIGN.md "Arrays and
dependencies"). Figures:
  - the submit: one request (one transaction) answered, measured at the
    socket, and `gpuq submit` of the same file end to end;
  - `gpuq status` (the array folded into one line) and `gpuq status
    --expand --json` (every task), wall time;
  - pass durations from gpuqd's debug log after PASSES triggered passes
    (one plain submit each, a second apart), and gpuqd's CPU per pass.
Targets: the submit well under a second; a pass with the array queued
as with 10,000 plain jobs queued (bench/sched.py: at most 50 ms).
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
LONG = 10 ** 8


def load_sched():
    """bench/sched.py's helpers (its module name is the stdlib's)."""
    spec = importlib.util.spec_from_file_location(
        "bench_sched", os.path.join(HERE, "sched.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def timed(argv):
    t = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("bench/array: %s failed: %s" % (" ".join(argv), p.stderr))
    return 1000 * (time.monotonic() - t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1],
                                 formatter_class=argparse.
                                 RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--builddir", default=os.environ.get("top_builddir",
                                                         os.getcwd()))
    ap.add_argument("--tasks", type=int, default=10000)
    ap.add_argument("--parallelism", type=int, default=100)
    ap.add_argument("--regions", type=int, default=30)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    bs = load_sched()
    bs.setup_path(args.builddir)
    import cloudutil as cu
    regions = bs.pick_regions(cu, args.regions)
    c = cu.Cloud(speed=10, regions=regions, providers=cu.PROVIDERS,
                 setup=bs.quotas(cu, regions), log_level="debug")
    gpuq = [os.path.join(os.path.abspath(args.builddir), "gpuq"),
            "--socket", c.gpuqd.socket]
    try:
        spec = cu.job_spec(work=LONG, ckpt=LONG, name="sweep",
                           array={"count": args.tasks,
                                  "parallelism": args.parallelism})
        print("bench/array: %d tasks, parallelism %d, %d regions x %s" % (
            args.tasks, args.parallelism, args.regions,
            ", ".join(cu.PROVIDERS)), flush=True)
        t = time.monotonic()
        r = c.request({"op": "submit", "job": spec}, timeout=120)
        ms = 1000 * (time.monotonic() - t)
        if not r.get("ok"):
            sys.exit("bench/array: submit refused: %r" % r)
        print("  submit of %d tasks (one request, one transaction): "
              "%.0f ms" % (args.tasks, ms), flush=True)
        k = bs.quiet(c, 600)
        print("  quiet: %r" % {s: v for s, v in k.items() if v},
              flush=True)
        st = [timed(gpuq + ["status"]) for _ in range(5)]
        print("  gpuq status (the array folded, %d live tasks): median "
              "%.0f ms" % (k.get("queued", 0) + k.get("running", 0) +
                           k.get("pending", 0), statistics.median(st)),
              flush=True)
        print("  gpuq status --expand --json (every task): %.0f ms" %
              timed(gpuq + ["status", "--expand", "--json"]), flush=True)

        with open(c.gpuqd.log, errors="replace") as f:
            f.seek(0, 2)
            offset = f.tell()
        cpu0 = cu.cpu_seconds(c.gpuqd.pid)
        for _ in range(args.passes):
            c.submit(cu.job_spec(work=LONG, ckpt=LONG, name="poke"))
            time.sleep(1.0)
        time.sleep(1.0)
        cpu = cu.cpu_seconds(c.gpuqd.pid) - cpu0
        with open(c.gpuqd.log, errors="replace") as f:
            f.seek(offset)
            lines = bs.pass_lines(f.read())
        if lines:
            ms = [x for x, _ in lines]
            print("  %d passes logged: median %.2f ms, max %.2f ms; e.g. "
                  "%s" % (len(ms), statistics.median(ms), max(ms),
                          lines[len(lines) // 2][1]), flush=True)
        else:
            print("  gpuqd logged no pass durations", flush=True)
        print("  gpuqd CPU over %d triggered passes: %.1f ms each (upper "
              "bound) | VmHWM %s KiB" % (args.passes, 1000 * cpu /
                                         args.passes,
                                         c.gpuqd.vm_hwm_kib()), flush=True)
        # Last, so the passes above saw one array.
        path = os.path.join(c.dir, "array.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        print("  gpuq submit of the same file, end to end: %.0f ms" %
              timed(gpuq + ["submit", "-q", path]), flush=True)
    finally:
        c.close(keep=args.keep)


if __name__ == "__main__":
    main()
