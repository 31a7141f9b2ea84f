"""The simulated workload and the clock of the fake cloud.  Serves no API
of its own; every API module's resources are ``Resource``s.

``Clock``: simulated time runs ``speed`` x real time (doc/DESIGN.md "The
simulated Google Cloud"); every timestamp the fake prints is simulated,
with ``rfc3339`` (Compute's Pacific offset, or UTC "Z") and ``duration``
(google-duration).

``Resource``: what every simulated VM or job shares (its runs, and its
description in /_fake/resources).

``Run``: one execution of a job's container.  Instead of running the image
the fake reads its environment (DESIGN GE.3/D.2 give where each API puts
it) and pretends to train:

  FAKEGCP_WORK_SECONDS  total simulated seconds of work needed (default 600)
  FAKEGCP_CKPT_EVERY    simulated seconds between checkpoints (default 60)
  FAKEGCP_EXIT          exit code once the work is done (default 0)
  FAKEGCP_SETUP_SECONDS simulated seconds each run spends before its work
                        progresses (image pull, checkpoint load: a
                        restart's overhead, billed as running; default 0)
  GPUQ_CHECKPOINT_DIR   gs://bucket/prefix/ where ckpt-<8-digit progress>
                        objects are written ({"progress","job","attempt"})
  GPUQ_RESUME_FROM      gs:// URI of a checkpoint to start from
  GPUQ_JOB_ID, GPUQ_ATTEMPT  copied into checkpoints and /_fake/work

A checkpoint is written each time progress crosses a multiple of
FAKEGCP_CKPT_EVERY and once more when the work is complete, each stamped
with the simulated time at which that progress was reached.

A node of a multi-node job (doc/DESIGN.md "Gangs") knows its rank the way
the job's code would: GPUQ_NODE_RANK (Compute Engine VMs), else
BATCH_TASK_INDEX (Cloud Batch), else Vertex AI's CLUSTER_SPEC (workerpool0
is rank 0, workerpool1 index i is rank i + 1), as gpuq's entry wrapper
reads them.  Only rank 0 writes checkpoints, as training code does.
``Gang`` runs the nodes of one resource together: the resource hears of
the first node that fails, or of success once every node is done.
"""
import datetime
import json
import threading
import time


class Clock:
    """Simulated epoch seconds: sim_base + (real - real_base) x speed.

    ``origin`` (real epoch seconds) anchors the clock where simulated
    time equals real time, as gpuqd's ``[daemon] clock_origin`` does
    (doc/DESIGN.md "Simulated time"): the two then read the same time
    as long as the speed is not changed."""

    def __init__(self, speed=1.0, origin=None):
        self.lock = threading.Lock()
        self.real_base = time.time() if origin is None else float(origin)
        self.sim_base = self.real_base
        self.origin = self.sim_base         # simulated time at the start
        self.speed = float(speed)
        self.locked = origin is not None    # shared with gpuqd

    def now(self):
        with self.lock:
            return self.sim_base + (time.time() - self.real_base) * self.speed

    def set_speed(self, f):
        with self.lock:
            real = time.time()
            self.sim_base = self.sim_base + (real - self.real_base) * \
                self.speed
            self.real_base = real
            self.speed = float(f)


PACIFIC = datetime.timezone(datetime.timedelta(hours=-7))


def rfc3339(t, compute=False):
    """Timestamp text for simulated epoch seconds ``t``.

    Compute Engine prints local Pacific time with an offset
    ("2024-06-26T11:42:22.006-07:00", DESIGN GC.1); the newer APIs print
    UTC "Z" with fractional seconds (google-datetime)."""
    if compute:
        d = datetime.datetime.fromtimestamp(t, PACIFIC)
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d-07:00" % (
            d.microsecond // 1000)
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % d.microsecond


def duration(secs):
    return ("%.3f" % secs).rstrip("0").rstrip(".") + "s"


def parse_gs(uri):
    """gs://bucket/path -> (bucket, path) or (None, None)."""
    if not isinstance(uri, str) or not uri.startswith("gs://"):
        return None, None
    rest = uri[5:]
    bucket, _, path = rest.partition("/")
    return (bucket or None), path


def node_rank(env):
    """The rank a node's code sees in ENV (0 for a single machine; a
    task of an array has a BATCH_TASK_INDEX too, and is no gang's node:
    gpuq refuses arrays of gangs)."""
    try:
        return int(env["GPUQ_NODE_RANK"])
    except (KeyError, TypeError, ValueError):
        pass
    if "GPUQ_TASK_INDEX" in env:
        return 0        # a task of an array (never a gang's node)
    try:
        return int(env["BATCH_TASK_INDEX"])
    except (KeyError, TypeError, ValueError):
        pass
    try:
        task = json.loads(env["CLUSTER_SPEC"])["task"]
        if task.get("type") == "workerpool0":
            return 0
        return 1 + int(task.get("index") or 0)
    except (KeyError, TypeError, ValueError, AttributeError):
        return 0


def _num(env, key, default):
    try:
        return float(env.get(key, default))
    except (TypeError, ValueError):
        return float(default)


class Run:
    """One container execution.  ``owner.on_run_end(t, exit_code)`` is
    called when the simulated work completes."""

    def __init__(self, fake, owner, env, ckpt_dir_default=None):
        self.fake = fake
        self.owner = owner
        self.env = dict(env or {})
        self.job = self.env.get("GPUQ_JOB_ID")
        self.attempt = self.env.get("GPUQ_ATTEMPT")
        self.need = max(0.0, _num(self.env, "FAKEGCP_WORK_SECONDS", 600))
        self.every = _num(self.env, "FAKEGCP_CKPT_EVERY", 60)
        self.setup = max(0.0, _num(self.env, "FAKEGCP_SETUP_SECONDS", 0))
        self.work_from = None           # started_at + setup
        try:
            self.exit_code = int(self.env.get("FAKEGCP_EXIT", 0))
        except ValueError:
            self.exit_code = 0
        d = self.env.get("GPUQ_CHECKPOINT_DIR") or ckpt_dir_default
        if d and not d.endswith("/"):
            d += "/"
        self.ckpt_dir = d
        self.state = "pending"          # pending|running|done|stopped
        self.start_progress = 0.0
        self.progress = 0.0
        self.resume_from = self.env.get("GPUQ_RESUME_FROM")
        self.resume_missing = False
        self.started_at = None
        self.ended_at = None
        self.result = None              # exit code when done
        self.stop_reason = None
        self.checkpoints = []
        self.rank = node_rank(self.env)

    def start(self, t):
        """Begin work at simulated time ``t``."""
        if self.resume_from:
            b, p = parse_gs(self.resume_from)
            obj = self.fake.storage_get(b, p) if b else None
            prog = None
            if obj is not None:
                try:
                    prog = float(json.loads(obj["data"])["progress"])
                except (ValueError, KeyError, TypeError):
                    prog = None
            if prog is None:
                self.resume_missing = True
            else:
                self.start_progress = min(prog, self.need)
        self.progress = self.start_progress
        self.started_at = t
        self.work_from = t + self.setup
        self.state = "running"
        self.fake.active_runs.add(self)

    def _ckpt(self, progress, t):
        if not self.ckpt_dir or self.rank != 0:
            return
        b, p = parse_gs(self.ckpt_dir)
        if not b:
            return
        name = "%sckpt-%08d" % (p, int(progress))
        data = json.dumps({"progress": int(progress), "job": self.job,
                           "attempt": self.attempt})
        self.fake.storage_put(b, name, data.encode(), t,
                              "application/json")
        self.checkpoints.append("gs://%s/%s" % (b, name))

    def advance(self, t):
        if self.state != "running" or t < self.work_from:
            return
        target = min(self.need, self.start_progress + (t - self.work_from))
        if self.every > 0:
            k = int(self.progress // self.every) + 1
            while k * self.every <= target + 1e-9:
                p = k * self.every
                if p > self.start_progress:
                    self._ckpt(p, self.work_from + p - self.start_progress)
                k += 1
        self.progress = target
        if target >= self.need - 1e-9:
            end = self.work_from + self.need - self.start_progress
            if not self.checkpoints or \
                    not self.checkpoints[-1].endswith("%08d" % int(self.need)):
                if self.need > self.start_progress and (
                        self.every <= 0 or self.need % self.every):
                    self._ckpt(self.need, end)
            self.state = "done"
            self.ended_at = end
            self.result = self.exit_code
            self.fake.active_runs.discard(self)
            self.owner.on_run_end(end, self.exit_code)

    def stop(self, t, reason):
        """Interrupt the run at ``t`` (preemption, cancel, delete...)."""
        if self.state == "running":
            self.advance(t)
        if self.state in ("running", "pending"):
            self.state = "stopped"
            self.ended_at = t
            self.stop_reason = reason
            self.fake.active_runs.discard(self)

    @property
    def work_done(self):
        return max(0.0, self.progress - self.start_progress)

    def describe(self):
        return {"state": self.state, "job": self.job, "attempt": self.attempt,
                "start_progress": self.start_progress,
                "progress": self.progress, "work_done": self.work_done,
                "work_needed": self.need, "exit_code": self.result,
                "stop_reason": self.stop_reason,
                "resume_from": self.resume_from,
                "resume_missing": self.resume_missing,
                "checkpoint_dir": self.ckpt_dir,
                "checkpoints": list(self.checkpoints),
                "started": self.started_at, "ended": self.ended_at,
                "rank": self.rank, "env": dict(self.env)}


class Gang:
    """The nodes of one multi-node resource, run together: OWNER's
    ``on_run_end(t, code)`` is called once, with the first non-zero exit
    (the other nodes are stopped: the job is over) or with 0 once every
    node is done."""

    def __init__(self, owner):
        self.owner = owner
        self.fake = owner.fake
        self.runs = []
        self.left = 0
        self.over = False
        self.lost = 0

    def start(self, envs, t, ckpt_default=None):
        for env in envs:
            r = Run(self.fake, self, env, ckpt_default)
            self.owner.runs.append(r)
            self.runs.append(r)
            self.left += 1
        for r in self.runs:
            r.start(t)

    def lose(self, t, index, code, reason):
        """Node INDEX stops with CODE while the others run on; the owner
        hears CODE once the last of them has ended."""
        r = self.runs[index]
        if self.over or r.state not in ("running", "pending"):
            return
        r.stop(t, reason)
        self.lost = self.lost or code
        self._one_done(t)

    def _one_done(self, t):
        self.left -= 1
        if self.left == 0:
            self.over = True
            self.owner.on_run_end(t, self.lost)

    def on_run_end(self, t, code):
        if self.over:
            return
        if code:
            self.over = True
            for r in self.runs:
                r.stop(t, "another node failed")
            self.owner.on_run_end(t, code)
            return
        self._one_done(t)


class Resource:
    """Common bookkeeping for /_fake/resources."""
    service = "?"

    def __init__(self, fake, project, name, region, zone, labels, spot,
                 created):
        self.fake = fake
        self.project = project
        self.name = name
        self.region = region
        self.zone = zone
        self.labels = dict(labels or {})
        self.spot = spot
        self.created = created
        self.started = None
        self.ended = None
        self.runs = []
        self.exit_code = None
        self.deleted = False
        self.gpu = None
        self.gpu_count = 0
        self.seq = next(fake.seq)

    def state(self):
        raise NotImplementedError

    def live(self):
        raise NotImplementedError

    def new_run(self, env, ckpt_default=None):
        r = Run(self.fake, self, env, ckpt_default)
        self.runs.append(r)
        return r

    def describe(self):
        run = self.runs[-1] if self.runs else None
        d = {"service": self.service, "project": self.project,
             "name": self.name, "resource": self.full_name(),
             "region": self.region, "zone": self.zone, "labels": self.labels,
             "state": self.state(), "spot": self.spot, "gpu": self.gpu,
             "gpu_count": self.gpu_count, "deleted": self.deleted,
             "created": self.created, "started": self.started,
             "ended": self.ended, "exit_code": self.exit_code,
             "start_progress": run.start_progress if run else None,
             "progress": run.progress if run else None,
             "work_done": sum(r.work_done for r in self.runs),
             "runs": [r.describe() for r in self.runs]}
        if run:
            d["job"] = run.job
            d["attempt"] = run.attempt
        return d
