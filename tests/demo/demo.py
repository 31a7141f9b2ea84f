#!/usr/bin/python3
"""gpuq demo: the daemon against the simulated Google Cloud, real jobs
through their whole life.

Starts tests/fakegcp with time sped up, starts gpuqd against it in a
temporary state directory, submits the example jobs, preempts one of
them and sends another's host into maintenance, shows `gpuq status` as
the jobs move, and ends with a summary of each job. It leaves no process
behind and prints where its logs are.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "fakegcp"))
sys.path.insert(0, os.path.join(TOP, "tests"))

import fakeclient  # noqa: E402
import gpuqdtest  # noqa: E402

SPEED = 120.0          # simulated seconds per real second
DEADLINE = 110.0       # real seconds for the whole demo
INTERRUPT_AFTER = 5.0  # real seconds a job runs before the demo strikes

# The example jobs, and what the demo does to them once they run.
JOBS = [
    ("resnet-t4.yaml", "preempt"),
    ("llm-a100x4.yaml", "maintenance"),
    ("sweep.yaml", None),
]


def say(msg):
    print(msg, flush=True)


class Demo:
    def __init__(self, builddir, keep):
        self.builddir = os.path.abspath(builddir)
        self.gpuq_bin = os.path.join(self.builddir, "gpuq")
        self.dir = tempfile.mkdtemp(prefix="gpuq-demo-")
        self.keep = keep
        self.sock = os.path.join(self.dir, "gpuq.sock")
        self.fake = None
        self.daemon = None
        self.daemon_log = os.path.join(self.dir, "gpuqd.log")

    # -- the pieces -------------------------------------------------------

    def start_cloud(self):
        self.fake = fakeclient.FakeGCP.start(os.path.join(self.dir, "fakegcp"),
                                             speed=SPEED)
        key = fakeclient.make_service_account_key(
            self.fake, os.path.join(self.dir, "sa.json"),
            email="gpuq-demo@gpuq-demo.iam.gserviceaccount.com")
        say(f"simulated Google Cloud at {self.fake.url} "
            f"(time runs {SPEED:.0f}x)")
        return key

    def write_conf(self, key):
        conf = os.path.join(self.dir, "gpuqd.conf")
        with open(conf, "w") as f:
            f.write(f"""[daemon]
socket = {self.sock}
state_dir = {os.path.join(self.dir, "state")}

[gcp]
project = gpuq-demo
regions = us-central1, us-east1, europe-west4
providers = vertex, batch, gce
checkpoint_root = gs://gpuq-demo-checkpoints/gpuq
credentials = {key}
endpoint = {self.fake.url}

[scheduler]
poll_interval = 1s
quota_ttl = 5s
backoff_base = 1s
backoff_max = 5s
""")
        return conf

    def start_daemon(self, conf):
        with open(conf) as f:
            self.daemon = gpuqdtest.Gpuqd(f.read(), ["--log-level", "info"],
                                          dir=self.dir,
                                          builddir=self.builddir)
        try:
            self.daemon.start(timeout=5)
        except RuntimeError:
            raise SystemExit(f"demo: gpuqd did not start; see "
                             f"{self.daemon_log}")
        say("gpuqd is up")

    def gpuq(self, *args, check=True):
        return subprocess.run([self.gpuq_bin, "--socket", self.sock, *args],
                              capture_output=True, text=True, check=check)

    def jobs(self):
        out = self.gpuq("status", "--all", "--json").stdout
        return json.loads(out)

    # -- the story ---------------------------------------------------------

    def submit(self):
        ids = {}
        for name, action in JOBS:
            path = os.path.join(TOP, "examples", name)
            r = self.gpuq("submit", "-q", path)
            for line in r.stdout.split():
                ids[int(line)] = action
                say(f"submitted {name} as job {line}")
        return ids

    def run(self):
        key = self.start_cloud()
        self.start_daemon(self.write_conf(key))
        actions = self.submit()
        done_actions = set()
        running_since = {}
        start = time.monotonic()
        last_show = 0.0
        while time.monotonic() - start < DEADLINE:
            jobs = self.jobs()
            for j in jobs:
                act = actions.get(j["id"])
                cur = j.get("current") or {}
                if j["state"] == "running":
                    running_since.setdefault(j["id"], time.monotonic())
                else:
                    running_since.pop(j["id"], None)
                # Interrupt a job once it has run long enough to have
                # written checkpoints, so its next attempt resumes.
                if (act and j["id"] not in done_actions
                        and j["state"] == "running" and cur.get("resource")
                        and time.monotonic() - running_since[j["id"]]
                        >= INTERRUPT_AFTER):
                    path = "/_fake/preempt" if act == "preempt" \
                        else "/_fake/maintenance"
                    self.fake.ctl(path, {"name": cur["resource"]})
                    done_actions.add(j["id"])
                    say(f"\n*** {act}: job {j['id']} on "
                        f"{cur.get('provider')}/{cur.get('zone') or cur.get('region')}"
                        f" ({cur['resource']})\n")
            if time.monotonic() - last_show >= 3:
                say(self.gpuq("status", "--all").stdout)
                last_show = time.monotonic()
            if jobs and all(j["state"] in ("succeeded", "failed", "cancelled")
                            for j in jobs):
                break
            time.sleep(0.5)
        say(self.gpuq("status", "--all").stdout)
        return self.summary()

    def summary(self):
        jobs = self.jobs()
        say("summary (costs count the real seconds gpuqd watched each "
            "attempt run;\nthe simulated cloud's own clock runs "
            f"{SPEED:.0f}x faster)")
        ok = bool(jobs)
        for j in jobs:
            show = json.loads(self.gpuq("show", "--json", str(j["id"])).stdout)
            show = show.get("job", show)
            atts = show.get("attempts_list") or []
            where = ", ".join(
                f"{a.get('provider')}/{a.get('zone') or a.get('region')}"
                f"{' spot' if a.get('spot') else ''}"
                f" ({a.get('end_reason') or a.get('state')})" for a in atts)
            resumed = [a.get("resumed_from") for a in atts
                       if a.get("resumed_from")]
            say(f"  job {j['id']} {j['name']}: {j['state']}, "
                f"{len(atts)} attempt(s), ${j.get('cost_usd', 0):.2f}: {where}")
            for r in resumed:
                say(f"      resumed from {r}")
            if j["state"] != "succeeded":
                ok = False
        return ok

    def stop(self):
        try:
            if self.daemon:
                self.daemon.stop(10)
        finally:
            if self.fake:
                self.fake.stop()
        say(f"logs: {self.daemon_log} and "
            f"{os.path.join(self.dir, 'fakegcp', 'fakegcp.log')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builddir", default=".",
                    help="where gpuqd and gpuq were built (default: .)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory")
    args = ap.parse_args()
    demo = Demo(args.builddir, args.keep)
    ok = False
    try:
        ok = demo.run()
    finally:
        demo.stop()
    say("demo: every job succeeded" if ok else "demo: some job did not succeed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
