"""replay_fake.py: bench/replay's policies that run through the fake
cloud in trace mode (tests/fakegcp: Spot capacity per zone per round
from the trace, preemptions and stockouts from it, a billing ledger on
the control API), on one simulated clock shared with gpuqd.

  gpuq      (1) gpuqd as configured (every service, every region of the
            trace), each job sent with the real `gpuq submit` when its
            arrival comes in simulated time;
  vertex    (2) the seeds' way: a Vertex AI client that creates each
            job as an on-demand custom job (a3-highgpu-1g, one H100) in
            us-central1 at its arrival and waits for it (gpuqd itself
            refuses: a3-highgpu-1g is sold only as Spot or flex-start);
  skypilot  (3) a small driver that is a Compute Engine client, as
            SkyPilot's managed jobs are: at arrival it creates a Spot
            a3-highgpu-1g in the cheapest zone (the same prices as the
            oracle's), taking the next cheapest on a stockout; when the
            VM is preempted it relaunches in the cheapest zone other
            than the one that preempted it, resuming from the newest
            checkpoint; it never uses on-demand.

What each job cost is the fake's ledger (billed seconds x price at the
time, per job), not our own arithmetic.  Restart overhead: every run
spends the job's restart_overhead_minutes running, and billed, before
its work progresses (FAKEGCP_SETUP_SECONDS: image pull, checkpoint
load), as the oracle assumes.  Zones of the replayed regions that the
trace did not probe are stocked out for Spot H100s, so that no policy
finds capacity the trace does not show (the fake leaves them
unlimited).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

import replaylib as rl

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)
# 14 days in 10 minutes (2016x), what issue 17 allows: gpuqd's every
# reaction (an HTTP round trip to the fake, a durable commit) takes real
# milliseconds that the clock turns into simulated time billed while
# nothing happens, so the slowest allowed clock is the most faithful
# (tests/integration/test_replay.py: at 6000x on a busy machine gpuq
# paid up to 12 % more than at 2000x).
REAL_SECONDS_14_DAYS = 600.0
GPU = "nvidia-h100-80gb"
# gpuqd's own defaults (gpuqd.conf(5)), in simulated time: cloudutil
# shortens them for real-time tests, which a replay must not.
GPUQD_DEFAULTS = {"poll_interval": "15s", "quota_ttl": "60s",
                  "backoff_base": "30s", "backoff_max": "30m",
                  "stockout_cooldown": "10m"}


def _setup(builddir):
    if builddir:
        os.environ["top_builddir"] = os.path.abspath(builddir)
    os.environ.setdefault("top_srcdir", TOP_SRCDIR)
    for d in ("tests/integration", "tests/fakegcp", "tests"):
        p = os.path.join(TOP_SRCDIR, d)
        if p not in sys.path:
            sys.path.insert(0, p)


def use_tmpfs():
    """Put the daemons' and fakes' directories (cloudutil and gpuqdtest
    make them under /tmp) on tmpfs: GPUQ_REPLAY_TMPDIR, default /dev/shm
    when it exists ("/tmp": leave them).  gpuqd commits durably, and on
    a disk each fdatasync is real milliseconds that the replay's clock
    counts 2,016 times: on this machine a Spot create refused at once
    took gpuqd 203 + 111 simulated seconds to the next try with its
    state on ext4 and 146 + 78 on tmpfs, and the waits after a
    preemption fell from 253 h to 153 h (doc/DESIGN.md "Replaying Spot
    traces").  A real head node's fsync costs it milliseconds, not
    minutes: tmpfs is the more faithful replay."""
    import tempfile
    d = os.environ.get("GPUQ_REPLAY_TMPDIR")
    if d is None:
        d = "/dev/shm" if os.path.isdir("/dev/shm") and \
            os.access("/dev/shm", os.W_OK) else "/tmp"
    if d == "/tmp" or getattr(tempfile.mkdtemp, "replay_dir", None) == d:
        return
    mk = getattr(tempfile.mkdtemp, "wrapped", tempfile.mkdtemp)

    def mkdtemp(suffix=None, prefix=None, dir=None):
        return mk(suffix, prefix, d if dir == "/tmp" else dir)
    mkdtemp.wrapped = mk
    mkdtemp.replay_dir = d
    tempfile.mkdtemp = mkdtemp


def speed_for(trace, args):
    if args.speed:
        return args.speed
    secs = trace.rounds * trace.round_s
    return max(100.0, secs / (REAL_SECONDS_14_DAYS * secs / (14 * 86400)))


# -- the fake's trace mode and ledger (tests/fakegcp README "Trace mode")

def load_into_fake(c, trace):
    """Put the fake in trace mode on `trace`, its round 0 a simulated
    minute from now; returns that time.  Zones of the replayed regions
    the trace did not probe get no Spot capacity of its GPU (a Spot
    stockout there), so that no policy finds capacity the trace does not
    show."""
    import fakegcp_catalog as cat
    src = os.path.abspath(trace.source)
    body = {"file": src, "format": "probe"}
    if src.endswith(".json"):
        body.update(format="cbl", zone=trace.zones[0])
    elif os.path.isdir(src) or len(trace.zones) > 1 and \
            not src.endswith(".csv"):
        raise SystemExit("bench/replay: the fake replays one probe CSV or "
                         "one Can't Be Late JSON file, not %s" % src)
    t0 = sim_now(c) + 60.0
    # A cut trace (bench/replay --from-day) starts trace.first rounds in.
    body["start"] = t0 - trace.first * trace.round_s
    c.ctl("/_fake/trace", body)
    regions = {trace.region(z) for z in trace.zones}
    raise_quotas(c, regions | {"us-central1"})
    for z, reg in sorted(cat.ZONE_REGION.items()):
        if reg in regions and z not in trace.zones:
            c.ctl("/_fake/stockout", {"zone": z, "gpu": GPU,
                                      "provisioning": "SPOT"})
    return t0


def raise_quotas(c, regions, n=10000):
    """Quotas out of the way: the replay measures capacity and price,
    and the fake's defaults (16 H100s a region, 64 GPUs in all, 1000
    vCPUs a region) would queue every policy behind them alike."""
    import fakegcp_quota as q
    c.ctl("/_fake/quota", {"region": "global", "metric":
                           "GPUS_ALL_REGIONS", "limit": n})
    c.ctl("/_fake/quota", {"region": "global", "metric":
                           "CPUS_ALL_REGIONS", "limit": n * 30})
    for r in sorted(regions):
        # The H100's own Spot metric too (PREEMPTIBLE_NVIDIA_H100_GPUS,
        # 16 a region by default): without it every policy that runs
        # Compute or Batch VMs was held to 16 Spot H100s a region, where
        # the trace's two us-east4 zones alone give up to 32, and gpuqd,
        # which reads the quota, moved jobs to us-east4 that its next
        # pass could not place there.
        for m in ("CPUS", "PREEMPTIBLE_CPUS", "INSTANCES",
                  q.GPU_FAMILY_ID + ":NVIDIA_H100",
                  q.SPOT_GPU_FAMILY_ID + ":NVIDIA_H100",
                  q.VM_FAMILY_ID + ":A3") + gpu_metrics():
            c.ctl("/_fake/quota", {"region": r, "metric": m,
                                   "limit": n * (30 if "CPU" in m else 1)})
        for m in ("custom_model_training_nvidia_h100_gpus",
                  "custom_model_training_preemptible_nvidia_h100_gpus"):
            c.ctl("/_fake/quota", {"region": r, "metric": m, "limit": n,
                                   "service": "vertex"})


def gpu_metrics():
    """The Compute Engine quota metrics of the trace's GPU (the fake's
    catalog: on-demand and Spot), e.g. PREEMPTIBLE_NVIDIA_H100_GPUS."""
    import fakegcp_catalog as cat
    g = cat.BY_TYPE.get(GPU) or {}
    return tuple(m for m in (g.get("quota"), g.get("pquota")) if m)


def sim_now(c):
    return float(c.ctl("/_fake/time")["now"])


def ledger(c):
    """{gpuq-job label: (dollars, billed seconds)}: the fake's bill."""
    led = c.ctl("/_fake/ledger")
    if os.environ.get("GPUQ_REPLAY_LEDGER"):
        with open(os.environ["GPUQ_REPLAY_LEDGER"], "a") as f:
            json.dump(led, f)
            f.write("\n")
    jobs = led["jobs"]
    return {k: (float(v["usd"]), float(v["billed_seconds"]))
            for k, v in jobs.items()}


# -- job files ----------------------------------------------------------

def job_file(j, deadline_ok, spot=None):
    """The gpuq job (gpuq-job(5)) for workload job j."""
    w = j["work_minutes"] * 60
    spec = {"name": j["name"],
            "image": "us-docker.pkg.dev/gpuq-test/replay/train:1",
            "accelerator": {"type": GPU, "count": 1},
            "machine_type": rl.MACHINE,
            "estimated_hours": round(j["work_minutes"] / 60.0, 3),
            "checkpoint": {"interval": "%dm" % j["checkpoint_minutes"]},
            "env": {"FAKEGCP_WORK_SECONDS": str(w),
                    "FAKEGCP_CKPT_EVERY": str(j["checkpoint_minutes"] * 60),
                    "FAKEGCP_SETUP_SECONDS":
                    str(j.get("restart_overhead_minutes", 0) * 60)}}
    if spot:
        spec["spot"] = spot
    if deadline_ok and j.get("deadline_minutes") is not None:
        spec["deadline"] = "%dm" % j["deadline_minutes"]
    return spec


def deadline_supported(c):
    """Whether this gpuqd takes `deadline:` (issue 16): ask `gpuq plan`
    about a job that has one."""
    path = os.path.join(c.dir, "probe-deadline.json")
    with open(path, "w") as f:
        json.dump(dict(job_file({"name": "probe", "work_minutes": 60,
                                 "checkpoint_minutes": 30,
                                 "deadline_minutes": 120}, True)), f)
    rc, out, err = c.gpuq("plan", path, timeout=60)
    return not ("deadline" in err and ("unknown" in err or
                                       "not a" in err))


# -- policy (1): gpuqd ------------------------------------------

def run_gpuqd(policy, trace, prices, jobs, args):
    import cloudutil as cu
    speed = speed_for(trace, args)
    regions = sorted({trace.region(z) for z in trace.zones})
    providers, spot = cu.PROVIDERS, None
    c = cu.Cloud(speed=speed, regions=regions, providers=providers,
                 scheduler=dict(GPUQD_DEFAULTS), log_level="info",
                 sim_clock=True, start=False)
    try:
        # The trace first: gpuqd reads the catalog's (trace) prices at
        # its start.
        t0 = load_into_fake(c, trace)
        c.start()
        dl = deadline_supported(c)
        print("%s: deadline: %s" % (policy, "passed to gpuq" if dl else
                                    "not known to this gpuq; the jobs go "
                                    "without it"), flush=True)
        end = t0 + trace.rounds * trace.round_s
        todo = sorted(jobs, key=lambda j: j["arrival_minutes"])
        ids = {}
        while True:
            now = sim_now(c)
            due = [j for j in todo if t0 + j["arrival_minutes"] * 60 <= now]
            if due:
                todo = todo[len(due):]
                got = c.submit(*[job_file(j, dl, spot) for j in due])
                got = got if isinstance(got, list) else [got]
                for j, i in zip(due, got):
                    ids[j["name"]] = i
            if not todo:
                st = {j["id"]: j["state"] for j in c.list_jobs()}
                if all(st.get(i) in ("succeeded", "failed", "cancelled")
                       for i in ids.values()):
                    break
            if now >= end:
                break
            time.sleep(0.2)
        return outcomes_gpuqd(c, trace, jobs, ids, t0)
    finally:
        keep_log(c, policy)
        c.close()


def keep_log(c, policy):
    """With GPUQ_REPLAY_KEEP=DIR, gpuqd's log, its jobs' final states
    and their attempts go to DIR/<policy>-gpuqd.log,
    DIR/<policy>-jobs.json and DIR/<policy>-attempts.json: what
    to read when a figure moves (doc/DESIGN.md "Replaying Spot
    traces")."""
    import shutil
    d = os.environ.get("GPUQ_REPLAY_KEEP")
    if not d or c.gpuqd is None:
        return
    os.makedirs(d, exist_ok=True)
    try:
        shutil.copy(os.path.join(c.gpuqd.dir, "gpuqd.log"),
                    os.path.join(d, "%s-gpuqd.log" % policy))
        jobs = c.list_jobs()
        with open(os.path.join(d, "%s-jobs.json" % policy), "w") as f:
            json.dump(jobs, f, indent=1)
        # Each job's attempts (place, capacity, created, started, ended,
        # end reason, cost), in simulated time: where the hours between
        # arrival and finish went (waits, refused launches, moves).
        with open(os.path.join(d, "%s-attempts.json" % policy), "w") as f:
            json.dump({str(j["id"]): c.attempts(c.show(j["id"]))
                       for j in jobs}, f)
    except Exception as e:      # a diagnostic: never fail the replay
        print("%s: GPUQ_REPLAY_KEEP: %s" % (policy, e), file=sys.stderr)


def outcomes_gpuqd(c, trace, jobs, ids, t0):
    led = ledger(c)
    out = {}
    for j in jobs:
        o = rl.Outcome(j["name"])
        jid = ids.get(j["name"])
        if jid is not None:
            job = c.show(jid)
            d, s = led.get(str(jid), (0.0, 0.0))
            o.dollars = d
            o.billed_rounds = s / trace.round_s
            att = c.attempts(job)
            # Attempts that ran, less the first: creates refused for a
            # stockout are no restart.
            o.restarts = max(0, sum(1 for x in att
                                    if x.get("started")) - 1)
            if job["state"] == "succeeded" and att:
                # gpuqd's times are the simulated clock's.
                o.finish_round = (float(att[-1]["ended"]) - t0) / \
                    trace.round_s
        dl = j.get("deadline_minutes")
        o.missed = dl is not None and (
            o.finish_round is None or
            o.finish_round * trace.round_s >
            (j["arrival_minutes"] + dl) * 60)
        out[j["name"]] = o
    return out


# -- policy (3): a Compute Engine client ---------------------------------

class Api:
    """Just enough of a Google client: a token (renewed half way through
    its life, which is real time: the fake's token endpoint is no part
    of the simulation) and JSON calls."""

    def __init__(self, c):
        from fakeclient import get_token
        self.c = c
        self.url = c.fake.url
        self._get_token = get_token
        self.token = None
        self.expires = 0.0

    def call(self, method, path, body=None):
        if self.token is None or time.monotonic() > self.expires:
            t = self._get_token(self.c.fake, self.c.key)
            self.token = t["access_token"]
            self.expires = time.monotonic() + \
                float(t.get("expires_in", 3600)) / 2
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                return e.code, json.loads(e.read() or b"{}")
            except ValueError:
                return e.code, {}


def instance_body(name, zone, job, attempt, env):
    return {
        "name": name,
        "machineType": "zones/%s/machineTypes/%s" % (zone, rl.MACHINE),
        "scheduling": {"provisioningModel": "SPOT",
                       "instanceTerminationAction": "DELETE",
                       "onHostMaintenance": "TERMINATE",
                       "automaticRestart": False},
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
            "sourceImage": "projects/debian-cloud/global/images/family/"
                           "debian-12", "diskSizeGb": "100"}}],
        "networkInterfaces": [{"network": "global/networks/default",
                               "accessConfigs": [{
                                   "type": "ONE_TO_ONE_NAT",
                                   "name": "External NAT"}]}],
        "labels": {"gpuq-install": "replay-skypilot", "gpuq-job": job},
        "metadata": {"items": [{"key": "gpuq-job", "value": json.dumps(
            {"image": "img", "command": ["train"], "args": [],
             "env": env})}]}}


def run_skypilot(trace, prices, jobs, args):
    import cloudutil as cu
    speed = speed_for(trace, args)
    c = cu.Cloud(speed=speed, regions=sorted({trace.region(z)
                                              for z in trace.zones}),
                 start=False, sim_clock=True)
    api = Api(c)
    P = "/compute/v1/projects/%s" % cu.PROJECT
    bucket = cu.CKPT_ROOT[len("gs://"):].split("/", 1)[0]
    try:
        t0 = load_into_fake(c, trace)
        end = t0 + trace.rounds * trace.round_s
        st = {}
        for n, j in enumerate(sorted(jobs,
                                     key=lambda j: j["arrival_minutes"])):
            st[j["name"]] = dict(j=j, id=str(n + 1), state="waiting",
                                 zone=None, vm=None, attempt=0, bad=None,
                                 restarts=0, finish=None)

        def newest_ckpt(s):
            code, r = api.call("GET", "/storage/v1/b/%s/o?prefix=replay/"
                               "%s/" % (bucket, s["id"]))
            names = sorted(o["name"] for o in r.get("items", []))
            return names[-1] if names else None

        def launch(s, now):
            r = int((now - t0) // trace.round_s)
            zones = sorted(trace.zones,
                           key=lambda z: (prices.spot(z, min(
                               r, trace.rounds - 1)), z))
            zones = [z for z in zones if z != s["bad"]] + \
                [z for z in zones if z == s["bad"]]
            ck = newest_ckpt(s)
            for z in zones:
                s["attempt"] += 1
                name = "replay-%s-%d" % (s["id"], s["attempt"])
                env = {"FAKEGCP_WORK_SECONDS":
                       str(s["j"]["work_minutes"] * 60),
                       "FAKEGCP_CKPT_EVERY":
                       str(s["j"]["checkpoint_minutes"] * 60),
                       "FAKEGCP_SETUP_SECONDS":
                       str(s["j"]["restart_overhead_minutes"] * 60),
                       "GPUQ_JOB_ID": s["id"],
                       "GPUQ_ATTEMPT": str(s["attempt"]),
                       "GPUQ_CHECKPOINT_DIR": "gs://%s/replay/%s/" % (
                           bucket, s["id"])}
                if ck:
                    env["GPUQ_RESUME_FROM"] = "gs://%s/%s" % (bucket, ck)
                code, op = api.call(
                    "POST", "%s/zones/%s/instances" % (P, z),
                    instance_body(name, z, s["id"], s["attempt"], env))
                if code >= 300:
                    if os.environ.get("GPUQ_REPLAY_DEBUG"):
                        print("create in %s: %d %s" % (z, code, op),
                              file=sys.stderr)
                    continue
                while op.get("status") != "DONE":
                    code, op = api.call(
                        "POST", "%s/zones/%s/operations/%s/wait" % (
                            P, z, op["name"]))
                if op.get("error"):
                    if os.environ.get("GPUQ_REPLAY_DEBUG"):
                        print("create in %s: %s" % (
                            z, op["error"]["errors"][0]["code"]),
                            file=sys.stderr)
                    continue          # stockout (or quota): next zone
                s.update(state="running", zone=z, vm=name)
                return True
            return False

        while True:
            now = sim_now(c)
            if now >= end:
                break
            code, agg = api.call("GET", "%s/aggregated/instances?filter="
                                 "labels.gpuq-install%%3Dreplay-skypilot"
                                 % P)
            live = {}
            for scope in (agg.get("items") or {}).values():
                for i in scope.get("instances", []):
                    live[i["name"]] = i["status"]
            busy = False
            for s in st.values():
                if s["state"] == "done":
                    continue
                busy = True
                if s["state"] == "waiting":
                    if now >= t0 + s["j"]["arrival_minutes"] * 60:
                        s["state"] = "launch"
                if s["state"] == "running":
                    stv = live.get(s["vm"])
                    if stv in ("RUNNING", "PROVISIONING", "STAGING"):
                        continue
                    ck = newest_ckpt(s)
                    prog = int(ck.rsplit("-", 1)[1]) if ck else 0
                    if stv is not None:
                        api.call("DELETE", "%s/zones/%s/instances/%s" % (
                            P, s["zone"], s["vm"]))
                    if prog >= s["j"]["work_minutes"] * 60:
                        s.update(state="done", finish=now)
                        continue
                    s.update(state="launch", bad=s["zone"])
                    s["restarts"] += 1
                if s["state"] == "launch":
                    launch(s, now)
            if not busy:
                break
        led = ledger(c)
        out = {}
        for s in st.values():
            j = s["j"]
            o = rl.Outcome(j["name"])
            d, secs = led.get(s["id"], (0.0, 0.0))
            o.dollars, o.billed_rounds = d, secs / trace.round_s
            o.restarts = s["restarts"]
            if s["finish"] is not None:
                o.finish_round = (s["finish"] - t0) / trace.round_s
            dl = j.get("deadline_minutes")
            o.missed = dl is not None and (
                o.finish_round is None or o.finish_round * trace.round_s >
                (j["arrival_minutes"] + dl) * 60)
            out[j["name"]] = o
        return out
    finally:
        c.close()


def run_vertex(trace, prices, jobs, args):
    import cloudutil as cu
    speed = speed_for(trace, args)
    c = cu.Cloud(speed=speed, regions=["us-central1"], start=False,
                 sim_clock=True)
    api = Api(c)
    V = "/v1/projects/%s/locations/us-central1/customJobs" % cu.PROJECT
    bucket = cu.CKPT_ROOT[len("gs://"):].split("/", 1)[0]
    try:
        t0 = load_into_fake(c, trace)
        end = t0 + trace.rounds * trace.round_s
        st = {}
        for n, j in enumerate(sorted(jobs,
                                     key=lambda j: j["arrival_minutes"])):
            st[j["name"]] = dict(j=j, id=str(n + 1), name=None,
                                 finish=None, done=False)
        while True:
            now = sim_now(c)
            if now >= end or all(s["done"] for s in st.values()):
                break
            code, lst = api.call("GET", V + "?filter=labels.gpuq-install"
                                 "%3Dreplay-vertex&pageSize=1000")
            state = {x["name"]: x["state"] for x in lst.get("customJobs",
                                                            [])}
            for s in st.values():
                j = s["j"]
                if s["done"]:
                    continue
                if s["name"] is None:
                    if now < t0 + j["arrival_minutes"] * 60:
                        continue
                    env = {"FAKEGCP_WORK_SECONDS": str(j["work_minutes"] * 60),
                           "FAKEGCP_CKPT_EVERY":
                           str(j["checkpoint_minutes"] * 60),
                           "FAKEGCP_SETUP_SECONDS":
                           str(j["restart_overhead_minutes"] * 60),
                           "GPUQ_JOB_ID": s["id"], "GPUQ_ATTEMPT": "1",
                           "GPUQ_CHECKPOINT_DIR": "gs://%s/replay-vx/%s/"
                           % (bucket, s["id"])}
                    body = {"displayName": j["name"],
                            "labels": {"gpuq-install": "replay-vertex",
                                       "gpuq-job": s["id"]},
                            "jobSpec": {"workerPoolSpecs": [{
                                "machineSpec": {
                                    "machineType": rl.MACHINE,
                                    "acceleratorType": "NVIDIA_H100_80GB",
                                    "acceleratorCount": 1},
                                "replicaCount": "1",
                                "containerSpec": {
                                    "imageUri": "us-docker.pkg.dev/"
                                    "gpuq-test/replay/train:1",
                                    "env": [{"name": k, "value": v}
                                            for k, v in env.items()]}}]}}
                    code, r = api.call("POST", V, body)
                    if code < 300:
                        s["name"] = r["name"]
                    elif os.environ.get("GPUQ_REPLAY_DEBUG"):
                        print("vertex create: %d %s" % (code, r),
                              file=sys.stderr)
                    continue
                if state.get(s["name"]) == "JOB_STATE_SUCCEEDED":
                    s.update(done=True, finish=now)
                elif state.get(s["name"]) in ("JOB_STATE_FAILED",
                                              "JOB_STATE_CANCELLED"):
                    s["done"] = True
        led = ledger(c)
        out = {}
        for s in st.values():
            j = s["j"]
            o = rl.Outcome(j["name"])
            d, secs = led.get(s["id"], (0.0, 0.0))
            o.dollars, o.billed_rounds = d, secs / trace.round_s
            if s["finish"] is not None:
                o.finish_round = (s["finish"] - t0) / trace.round_s
            dl = j.get("deadline_minutes")
            o.missed = dl is not None and (
                o.finish_round is None or o.finish_round * trace.round_s >
                (j["arrival_minutes"] + dl) * 60)
            out[j["name"]] = o
        return out
    finally:
        c.close()


def run(policy, trace, prices, jobs, args):
    _setup(args.builddir)
    use_tmpfs()
    if policy == "vertex":
        return run_vertex(trace, prices, jobs, args)
    if policy == "gpuq":
        return run_gpuqd(policy, trace, prices, jobs, args)
    if policy == "skypilot":
        return run_skypilot(trace, prices, jobs, args)
    raise SystemExit("bench/replay: unknown policy %r (gpuq, vertex, "
                     "skypilot)" % policy)
