"""cloudutil.py: a real gpuqd against the simulated Google Cloud, for the
end-to-end tests of the job lifecycle and the scheduler (test_job_lifecycle,
test_recovery, test_sched) and for the benchmarks in bench/.

    from cloudutil import cloud, job_spec

    def test_x(cloud):
        c = cloud(providers=("gce",), speed=100)
        jid = c.submit(job_spec(providers=["gce"], work=300))
        job = c.wait_state(jid, "succeeded", 60)

Each Cloud is a fresh fakegcp (tests/fakegcp) with a service-account key,
and a gpuqd (gpuqdtest.Gpuqd) whose gpuqd.conf points every Google API at
the fake, with the scheduler's timings shortened (poll 1 s, quota TTL
2 s, back-off 1-3 s). The fake runs its clock SPEED times faster than
real time, so a job's simulated minutes take real seconds; jobs say how
much work they need through FAKEGCP_WORK_SECONDS / FAKEGCP_CKPT_EVERY /
FAKEGCP_EXIT (tests/fakegcp/README.md).

Nothing here skips: a gpuqd or gpuq that is not built, a gpuqd that
does not launch, an op it does not answer, all make the test fail.

When a test fails, its directories are kept and the gpuqd log tail, the
fake's log path and the job's story are printed (Cloud.diag()).

Knows the wire (common/proto.h), gpuqd.conf(5) and the fake's control
API; nothing of gpuqd's internals.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time

try:
    import pytest
except ImportError:          # the benchmarks run without pytest
    pytest = None

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
import gpuqdtest  # noqa: E402
from gpuqdtest import TOP_SRCDIR, run_gpuq  # noqa: E402

GPUQD = os.path.join(gpuqdtest.TOP_BUILDDIR, "gpuqd")
GPUQ = os.path.join(gpuqdtest.TOP_BUILDDIR, "gpuq")

FAKEGCP_DIR = os.path.join(TOP_SRCDIR, "tests", "fakegcp")
if FAKEGCP_DIR not in sys.path:
    sys.path.insert(0, FAKEGCP_DIR)
from fakeclient import FakeGCP, make_service_account_key  # noqa: E402
import fakegcp_catalog as catalog  # noqa: E402

PROJECT = "gpuq-test"
CKPT_ROOT = "gs://gpuq-test-ckpt/gpuq"
IMAGE = "us-docker.pkg.dev/gpuq-test/train/fake:1.0"
PROVIDERS = ("gce", "batch", "vertex")
# Slow machines and sanitizer builds: GPUQ_TEST_TIMEOUT_SCALE=3
SCALE = float(os.environ.get("GPUQ_TEST_TIMEOUT_SCALE", "1") or 1)

TERMINAL = ("succeeded", "failed", "cancelled")
LIVE_CLOUD = ("launching", "pending", "running")

# The create call of each service, as the fake names it (/_fake/counters,
# /_fake/requests) and the path a fault must match to slow or drop it.
CREATE_METHOD = {
    "gce": "compute.instances.insert",
    "batch": "batch.projects.locations.jobs.create",
    "vertex": "aiplatform.projects.locations.customJobs.create",
}
CREATE_PATH = {
    "gce": r"^/compute/v1/projects/[^/]+/zones/[^/]+/instances$",
    "batch": r"^/v1/projects/[^/]+/locations/[^/]+/jobs$",
    "vertex": r"^/v1/projects/[^/]+/locations/[^/]+/customJobs$",
}
SERVICE = {"gce": "compute", "batch": "batch", "vertex": "vertex"}

DEFAULT_SCHEDULER = {
    "poll_interval": "1s",
    "quota_ttl": "2s",
    "backoff_base": "1s",
    "backoff_max": "3s",
    "stockout_cooldown": "30s",
}


def scaled(seconds):
    return seconds * SCALE


def job_spec(providers=None, work=300, ckpt=60, exit_code=0,
             gpu="nvidia-tesla-t4", count=1, name="e2e", env=None, **fields):
    """A job for the fake cloud: it needs WORK simulated seconds of work,
    checkpoints every CKPT simulated seconds and exits EXIT_CODE. FIELDS
    are further job fields (gpuq-job(5)): spot, regions, max_failures..."""
    e = {"FAKEGCP_WORK_SECONDS": str(work), "FAKEGCP_CKPT_EVERY": str(ckpt),
         "FAKEGCP_EXIT": str(exit_code)}
    e.update(env or {})
    j = {"name": name, "image": IMAGE,
         "accelerator": {"type": gpu, "count": count}, "env": e}
    if providers is not None:
        j["providers"] = list(providers)
    j.update(fields)
    return j


def _tail(path, lines=80):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(cannot read %s: %s)\n" % (path, e)


def cpu_seconds(pid):
    """utime + stime of PID from /proc/PID/stat, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Cloud:
    """A fakegcp and a gpuqd configured for it. Attributes: fake
    (FakeGCP), gpuqd (gpuqdtest.Gpuqd), dir (kept on failure), speed."""

    def __init__(self, speed=100, regions=("us-central1",),
                 providers=PROVIDERS, scheduler=None, gcp=None,
                 fake_config=None, setup=None, start=True, log_level="debug",
                 daemon=None, notify=None, env=None, sim_clock=False):
        # sim_clock: gpuqd lives on the fake's clock ([daemon]
        # clock_scale, clock_origin; doc/DESIGN.md "Simulated time"), so
        # its intervals are simulated time too.
        self.dir = tempfile.mkdtemp(prefix="gpuq-cl-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.speed = speed
        self.regions = list(regions)
        self.providers = list(providers)
        self.scheduler = dict(DEFAULT_SCHEDULER)
        self.scheduler.update(scheduler or {})
        self.gcp = dict(gcp or {})
        self.log_level = log_level
        # More gpuqd.conf: [daemon] keys, and a [notify] section.
        self.daemon = dict(daemon or {})
        self.notify = dict(notify or {})
        self.gpuqd = None
        self._install = None
        self.origin = None
        if sim_clock:
            self.origin = int(time.time())
            self.daemon.setdefault("clock_scale", "%r" % float(speed))
            self.daemon.setdefault("clock_origin", str(self.origin))
        self.fake = FakeGCP.start(os.path.join(self.dir, "fake"), speed=speed,
                                  project=PROJECT, origin=self.origin)
        self.fake_log = os.path.join(self.dir, "fake", "fakegcp.log")
        try:
            self.key = make_service_account_key(
                self.fake, os.path.join(self.dir, "sa.json"),
                project=PROJECT)
            if fake_config:
                self.fake.ctl("/_fake/config", fake_config)
            if setup is not None:
                setup(self)
            self.gpuqd = gpuqdtest.Gpuqd(self.conf_text(), prefix="gpuq-it-",
                                         env=env)
            if start:
                self.gpuqd.start()
                self.install        # known even while gpuqd is down
        except BaseException:
            self.close(keep=True)
            raise

    # -- configuration ---------------------------------------------------------

    def conf_text(self):
        # Lines are at most 199 characters (gpuqd.conf(5)): a long list
        # goes on over indented lines.
        regions = ",\n    ".join(", ".join(self.regions[i:i + 6])
                                 for i in range(0, len(self.regions), 6))
        g = {"project": PROJECT, "endpoint": self.fake.url,
             "credentials": self.key, "checkpoint_root": CKPT_ROOT,
             "regions": regions, "providers": ", ".join(self.providers)}
        g.update(self.gcp)
        out = ["# gpuqd.conf written by tests/integration/cloudutil.py",
               "[daemon]", "log_level = %s" % self.log_level]
        out += ["%s = %s" % kv for kv in self.daemon.items()]
        if self.notify:
            out += ["", "[notify]"]
            out += ["%s = %s" % kv for kv in self.notify.items()]
        out += ["", "[gcp]"]
        out += ["%s = %s" % kv for kv in g.items()]
        out += ["", "[scheduler]"]
        out += ["%s = %s" % kv for kv in self.scheduler.items()]
        return "\n".join(out) + "\n"

    def reconfigure(self, scheduler=None, gcp=None):
        """Rewrite gpuqd.conf (takes effect at the next start)."""
        self.scheduler.update(scheduler or {})
        self.gcp.update(gcp or {})
        with open(self.gpuqd.conf, "w") as f:
            f.write(self.conf_text())

    # -- gpuqd -----------------------------------------------------------------

    def restart(self):
        """SIGTERM, then start on the same state."""
        self.gpuqd.stop()
        self.gpuqd.start()

    def kill9(self):
        self.gpuqd.kill9()

    def start(self):
        self.gpuqd.start()

    @property
    def install(self):
        """The install id, from ping's reply (the label gpuq-install)."""
        if self._install is None:
            self._install = self.gpuqd.request({"op": "ping"})["install"]
        return self._install

    def gpuq(self, *args, **kw):
        return run_gpuq(self.gpuqd.socket, *args, **kw)

    def request(self, req, timeout=30):
        return self.gpuqd.request(req, timeout=timeout)

    def submit(self, *specs, hold=False):
        """Submit SPECS (dicts) with the real `gpuq submit`, in one file;
        returns the id, or the list of ids when given several."""
        path = os.path.join(self.dir, "submit-%d.json" % time.monotonic_ns())
        with open(path, "w") as f:
            json.dump(list(specs) if len(specs) > 1 else specs[0], f)
        args = ["submit", "-q"] + (["--hold"] if hold else []) + [path]
        rc, out, err = self.gpuq(*args, timeout=600)
        if rc != 0:
            self.fail("gpuq submit failed (rc %d): %s" % (rc, err.strip()))
        ids = [int(x) for x in out.split()]
        if len(ids) != len(specs):
            self.fail("gpuq submit printed %r for %d job(s)" % (out,
                                                                len(specs)))
        return ids if len(specs) > 1 else ids[0]

    def show(self, jid):
        """The job as `gpuq show --json ID` prints it (proto.h shape)."""
        rc, out, err = self.gpuq("show", "--json", str(jid))
        if rc != 0:
            self.fail("gpuq show %s failed (rc %d): %s" % (jid, rc,
                                                          err.strip()))
        return json.loads(out)["job"]

    def list_jobs(self, states="all"):
        """Every job (list op, all pages), as the wire gives them."""
        jobs, after = [], None
        while True:
            req = {"op": "list", "state": states, "limit": 1000}
            if after is not None:
                req["after"] = after
            r = self.request(req)
            if not r.get("ok"):
                self.fail("list failed: %r" % r)
            jobs += r["jobs"]
            if "next" not in r:
                return jobs
            after = r["next"]

    def wait_for(self, jid, pred, timeout, what, allow_terminal=False):
        """Poll `gpuq show` until PRED(job); fail after TIMEOUT (scaled)
        seconds, or as soon as the job ends without PRED holding."""
        deadline = time.monotonic() + scaled(timeout)
        while True:
            job = self.show(jid)
            if pred(job):
                return job
            if not allow_terminal and job["state"] in TERMINAL:
                self.fail("job %s ended %s (exit %s, %r) while waiting for "
                          "%s" % (jid, job["state"], job.get("exit_code"),
                                  job.get("message"), what), jid)
            if time.monotonic() > deadline:
                self.fail("job %s: %s did not happen within %.0fs (state "
                          "%s, why %r)" % (jid, what, scaled(timeout),
                                           job["state"], job.get("why")), jid)
            time.sleep(0.2)

    def wait_state(self, jid, states, timeout=60):
        if isinstance(states, str):
            states = (states,)
        return self.wait_for(jid, lambda j: j["state"] in states, timeout,
                             "state %s" % "|".join(states),
                             allow_terminal=any(s in TERMINAL
                                                for s in states))

    def wait_running(self, jid, timeout=60, progress=0.0):
        """Until the job is running and the fake has seen PROGRESS
        simulated seconds of work done by its current run."""
        def ok(j):
            if j["state"] != "running":
                return False
            if progress <= 0:
                return True
            cur = self.current_run(jid)
            return cur is not None and cur["progress"] >= progress
        return self.wait_for(jid, ok, timeout,
                             "running with progress >= %g" % progress)

    # -- the fake --------------------------------------------------------------

    def ctl(self, path, body=None, method=None):
        return self.fake.ctl(path, body, method)

    def work(self, jid):
        """/_fake/work?job=ID: work done and needed, runs, checkpoints."""
        return self.ctl("/_fake/work?job=%d" % jid)

    def current_run(self, jid):
        """The fake's newest run of job JID (its describe()), or None."""
        runs = self.work(jid)["resources"]
        return runs[-1] if runs else None

    def resources(self, jid=None, service=None, ours=True):
        """Fake resources (deleted ones too) with our install label, of
        job JID if given."""
        q = "?service=%s" % service if service else ""
        out = []
        for r in self.ctl("/_fake/resources" + q)["resources"]:
            lab = r.get("labels") or {}
            if ours and lab.get("gpuq-install") != self.install:
                continue
            if jid is not None and lab.get("gpuq-job") != str(jid):
                continue
            out.append(r)
        return out

    def requests(self, method_id=None):
        rs = self.ctl("/_fake/requests")["requests"]
        if method_id is None:
            return rs
        ids = (method_id,) if isinstance(method_id, str) else method_id
        return [r for r in rs if r.get("method_id") in ids]

    def creates(self, provider=None):
        """Create calls the fake has answered, oldest first."""
        ms = [CREATE_METHOD[provider]] if provider else \
            list(CREATE_METHOD.values())
        return self.requests(ms)

    def counters(self):
        return self.ctl("/_fake/counters")["by_method"]

    def fault(self, **body):
        return self.ctl("/_fake/fault", body)

    def quota(self, metric, limit=None, region="global", usage=None,
              service=None):
        b = {"region": region, "metric": metric}
        if limit is not None:
            b["limit"] = limit
        if usage is not None:
            b["usage"] = usage
        if service:
            b["service"] = service
        return self.ctl("/_fake/quota", b)

    def price(self, **body):
        return self.ctl("/_fake/price", body)

    def trace(self, path, start=None, **body):
        """Trace mode (tests/fakegcp/README.md "Trace mode"): PATH's
        trace time 0 is simulated time START, by default now (gpuqd's
        start has already spent simulated time)."""
        body = dict(body, file=path)
        body["start"] = self.ctl("/_fake/time")["now"] if start is None \
            else start
        return self.ctl("/_fake/trace", body)

    def ledger(self):
        """The fake's bill: per resource, per gpuq-job label, in all."""
        return self.ctl("/_fake/ledger")

    # -- reading jobs ----------------------------------------------------------

    @staticmethod
    def attempts(job):
        return job.get("attempts_list") or []

    @staticmethod
    def path(job):
        """The states the job went through, from its events."""
        out = []
        for e in job.get("events") or []:
            if e.get("from") == e.get("to"):
                continue
            if not out or out[-1] != e["to"]:
                out.append(e["to"])
        return out

    # -- failure reports -------------------------------------------------------

    def diag(self, jid=None):
        """What to look at when a test fails."""
        out = ["", "----- cloud test directory (kept): %s" % self.dir,
               "----- fake log: %s" % self.fake_log]
        if jid is not None and self.gpuqd is not None and self.gpuqd.alive():
            try:
                rc, o, e = self.gpuq("show", "--json", str(jid), timeout=10)
                j = json.loads(o)["job"] if rc == 0 else None
                if j is not None:
                    out.append("----- job %s: state %s why %r exit %s "
                               "path %s" % (jid, j["state"], j.get("why"),
                                            j.get("exit_code"),
                                            self.path(j)))
                    for a in self.attempts(j):
                        out.append("  attempt %s" % json.dumps(a))
                    for ev in j.get("events") or []:
                        out.append("  event %s" % json.dumps(ev))
            except Exception as e:      # diagnostics must not hide the error
                out.append("(cannot show job %s: %s)" % (jid, e))
        if self.gpuqd is not None:
            out.append("----- gpuqd log tail (%s):" % self.gpuqd.log)
            out.append(_tail(self.gpuqd.log, 80))
        out.append("----- fake stderr tail:")
        out.append(_tail(os.path.join(self.dir, "fake", "fakegcp.stderr"),
                          20))
        return "\n".join(out)

    def fail(self, msg, jid=None):
        raise AssertionError(msg + "\n" + self.diag(jid))

    def check(self, cond, msg, jid=None):
        if not cond:
            self.fail(msg, jid)

    def close(self, keep=False):
        if self.gpuqd is not None:
            self.gpuqd.kill9()
        try:
            self.fake.stop()
        except Exception:
            pass
        if self.gpuqd is not None and not keep:
            shutil.rmtree(self.gpuqd.dir, ignore_errors=True)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


# -- ops the tests need --------------------------------------------------------

def need_plan(c):
    """The plan op's reply for a small job; fails the test unless gpuqd
    answers plan and gpuq has `plan`."""
    r = c.request({"op": "plan", "job": job_spec(providers=["gce"])})
    if not r.get("ok"):
        c.fail("gpuqd does not answer plan: %r" % (r.get("error"),))
    rc, out, err = c.gpuq("help", "plan")
    if rc != 0:
        c.fail("gpuq help plan failed (rc %d): %s" % (rc,
                                                      (err or out).strip()))
    return r


# -- pytest fixtures ------------------------------------------------------------

def _failed(request):
    return any(getattr(request.node, "rep_" + w, None) is not None and
               getattr(request.node, "rep_" + w).failed
               for w in ("setup", "call"))


if pytest is not None:
    @pytest.fixture
    def cloud(request):
        """Make Clouds: cloud(**Cloud kwargs). All are closed at the end,
        kept and shown when the test failed. PROBE (the providers a test
        needs) is accepted and ignored: nothing is probed or skipped, a
        gpuqd that does not launch makes the test fail."""
        made = []

        def make(probe=None, **kw):
            c = Cloud(**kw)
            made.append(c)
            return c

        yield make
        bad = _failed(request)
        for c in made:
            if bad:
                print("\n===== cloud: %s" % c.diag())
            c.close(keep=bad)


# -- prices (the fake's catalog, for choosing numbers in tests) ----------------

def t4_hourly(region, spot=False, machine="n1-highmem-4", count=1):
    """List price per hour of COUNT T4s on MACHINE in REGION, as the fake's
    billing catalog has it before any override."""
    od, sp = catalog.GPU_PRICE[("T4", region)]
    hod, hsp = catalog.HOST_PRICE[(machine, region)]
    return (sp if spot else od) * count + (hsp if spot else hod)


def region_zones(region, gpu="nvidia-tesla-t4"):
    """Zones of REGION that offer GPU, sorted."""
    return [z for z in catalog.REGION_ZONES[region]
            if gpu in catalog.ZONE_GPUS.get(z, {})]


def regions_with(gpu="nvidia-tesla-t4"):
    return [r for r in catalog.REGIONS if region_zones(r, gpu)]


def zone_of_path(path):
    m = re.search(r"/zones/([^/]+)/", path)
    return m.group(1) if m else None


def raw_request(sock_path, req, timeout=30):
    """One request over a fresh connection, without the client."""
    return gpuqdtest.request(sock_path, req, timeout)
