#!/usr/bin/python3
"""bench/sched.py: how long one scheduling pass takes with 10,000 and
100,000 queued jobs over 30 regions x 3 services, against the simulated
cloud.

    /usr/bin/python3 bench/sched.py [--builddir DIR] [--jobs 10000,100000]
        [--regions 30] [--passes 5] [--shapes 1]

For each job count: a fresh fakegcp and gpuqd (log_level debug) with 30
regions (every region of the fake's catalog with T4s first) and the
providers vertex, batch and gce; quota for only a handful of GPUs
(GPUS_ALL_REGIONS 8, no Vertex AI GPU quota), so nearly every job stays
queued and each pass prices every job's offers again. N jobs (1 T4,
Spot allowed, all regions and services; or with --shapes K, cycling
over K shapes: T4, L4, V100, A100 at each count, Spot allowed or not)
are submitted at once; once
gpuqd is quiet, PASSES more passes are triggered (one submit each, a
second apart). Figures:
  - pass durations from gpuqd's own debug log: lines of the scheduler
    that mention a pass and end with a duration ("scheduler: pass 7:
    10000 runnable, 1 shape(s), 9992 waiting, 12.3 ms");
  - gpuqd CPU time over the triggered passes, divided by them (an upper
    bound per pass: it includes the reconciler and the submits);
  - the time of one `plan` op for one job (when gpuqd has it).
Target: a pass at most 50 ms at 10,000 queued jobs.
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
                 setup=quotas(cu, regions), log_level="debug")
    try:
        jobs = specs(cu, n, args.shapes)
        spec = jobs[0]
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
