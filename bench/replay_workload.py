#!/usr/bin/python3
"""bench/replay_workload.py: write a replay workload (a JSON list of jobs)
for bench/replay, so that anyone can replay the very same jobs.

    bench/replay_workload.py [--seed 17] [--jobs 120] [--no-deadline] OUT

Each job: one H100 (a3-highgpu-1g), arrival_minutes (after the trace's
first round; uniform over the first 72 h), work_minutes (uniform
4-48 h), checkpoint_minutes (30), restart_overhead_minutes (10),
deadline_minutes (after arrival, 1.1-1.6 x the work; null with
--no-deadline).  Times are whole 10-minute rounds.  The same seed
gives the same jobs with and without deadlines.  bench/data/replay-deadline.json and
replay-nodeadline.json are this with the defaults.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replaylib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--jobs", type=int, default=120)
    ap.add_argument("--arrive-hours", type=float, default=72.0)
    ap.add_argument("--no-deadline", action="store_true")
    ap.add_argument("out")
    a = ap.parse_args()
    jobs = replaylib.make_workload(
        seed=a.seed, jobs=a.jobs, arrive_hours=a.arrive_hours,
        deadline=None if a.no_deadline else (1.1, 1.6))
    with open(a.out, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(j, sort_keys=True)
                                   for j in jobs) + "\n]\n")


if __name__ == "__main__":
    main()
