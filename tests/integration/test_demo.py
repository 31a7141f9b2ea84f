"""The demo (tests/demo/demo.py, `./quickstart demo`) as a newcomer runs
it, in its --quick mode: it explains every placement, shows each
interruption in the table after it, prices attempts by the cloud's clock,
and leaves neither a process nor (without --keep) its directory, which
holds a private key, behind; also when interrupted."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# As conftest.py finds them (tests/run-pytest and `make check` set both).
TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.dirname(
    os.path.dirname(HERE))
TOP_BUILDDIR = os.environ.get("top_builddir") or os.getcwd()
GPUQD = os.path.join(TOP_BUILDDIR, "gpuqd")
GPUQ = os.path.join(TOP_BUILDDIR, "gpuq")
DEMO = os.path.join(TOP_SRCDIR, "tests", "demo", "demo.py")
PYTHON = "/usr/bin/python3"
TIMEOUT = 150           # real seconds for one --quick run

# (job id, name, what the demo does to it) for the examples it submits.
JOBS = [(1, "resnet50-t4", "preempted"), (2, "llm-7b-finetune", "maintenance"),
        (3, "sweep-lr-0.1", None), (4, "sweep-lr-0.01", None),
        (5, "sweep-lr-0.001", None)]


@pytest.fixture
def base():
    """A short directory the demo makes its temporary one in (TMPDIR):
    a Unix socket's path holds at most 107 bytes."""
    assert os.access(GPUQD, os.X_OK), f"{GPUQD} is not built"
    assert os.access(GPUQ, os.X_OK), f"{GPUQ} is not built"
    d = tempfile.mkdtemp(prefix="gpuq-dt-", dir="/tmp")
    yield d
    for pid in leftovers(d):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(d, ignore_errors=True)


def demo_cmd(*args):
    return [PYTHON, DEMO, "--builddir", TOP_BUILDDIR, "--quick", *args]


def demo_env(base):
    return dict(os.environ, TMPDIR=base, PYTHONDONTWRITEBYTECODE="1")


def run_demo(base, *args):
    r = subprocess.run(demo_cmd(*args), env=demo_env(base), text=True,
                       capture_output=True, timeout=TIMEOUT)
    print(r.stdout)
    print(r.stderr, file=sys.stderr)
    return r


def leftovers(base):
    """Pids of processes whose command line names a path under BASE:
    the demo's gpuqd (--config) and fakegcp (--state-dir)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if base in cmd:
            pids.append(int(p))
    return pids


def table_after(out, marker):
    """The status table the demo prints first after MARKER, with the
    lines under it, up to the blank line that ends them."""
    rest = out[out.index(marker) + len(marker):]
    start = rest.index("ID  NAME")
    end = rest.find("\n\n", start)
    return rest[start:end if end >= 0 else len(rest)]


def assert_no_processes(base):
    # The demo waits for its children, so none may be left the moment
    # it has exited; give the kernel a moment to reap.
    for _ in range(20):
        if not leftovers(base):
            return
        time.sleep(0.1)
    assert leftovers(base) == [], "the demo left gpuqd or fakegcp running"


def test_demo_explains_interruptions_costs_and_cleans_up(base):
    r = run_demo(base)
    # One line per sentence: undo the demo's wrapping to 80 columns.
    out = re.sub(r"\n {4,}", " ", r.stdout)
    assert r.returncode == 0, r.stderr
    assert "demo: every job succeeded" in out

    # Why each job went where it went: the chosen offer, its expected
    # cost from gpuqd's plan, and the next best offers.
    for jid, name, _ in JOBS:
        m = re.search(rf"^why job {jid} {re.escape(name)} attempt 1 -> "
                      r"(\S+/\S+) (Spot|on-demand|flex-start) \d+x\w+ at \$[\d.]+/h: "
                      r"expected \$[\d.]+ for its estimated [\d.]+ h",
                      out, re.M)
        assert m, f"no explanation for job {jid}"
        why = out[m.start():out.find("\nwhy job", m.end())]
        assert "rank 1 of" in why and "in the plan at submit" in why
        assert re.search(r"next best \S+/\S+ (Spot|on-demand|flex-start) \$[\d.]+",
                         why), why

    # The first table after each interruption shows that gpuqd saw it,
    # and the relaunch is explained with a plan taken after it.
    for jid, name, end in JOBS[:2]:
        act = "preempt" if end == "preempted" else "maintenance"
        table = table_after(out, f"*** {act}: job {jid} ")
        assert re.search(rf"^ *{jid}  {name} ", table, re.M), table
        assert re.search(rf"job {jid} {name}: gpuqd saw attempt 1 end, "
                         rf"{end}", table), table
        assert re.search(rf"job {jid} {name}: running -> queued: .*{end}",
                         table), table
        assert re.search(rf"^why job {jid} {re.escape(name)} attempt 2 -> "
                         rf".*in the plan after attempt 1 ended \({end}\)",
                         out, re.M), f"attempt 2 of job {jid}"

    # Dollars by the cloud's clock, not gpuqd's real seconds: the 4xA100
    # job runs an hour of simulated work on flex-start at about $4.56/h
    # (real seconds would bill cents); it saves against Vertex AI
    # on-demand.
    m = re.search(r"^  job 2 llm-7b-finetune: succeeded, 2 attempt\(s\), "
                  r"\$([\d.]+), saved \$([\d.]+) \((\d+)%\) against "
                  r"Vertex AI on-demand", out, re.M)
    assert m, "no summary line for job 2: %r" % re.findall(
        r"^  job 2 .*$", out, re.M)
    assert float(m.group(1)) > 4.0
    assert float(m.group(2)) > 0 and 0 < int(m.group(3)) < 100
    assert re.search(r"preempted after [\d.]+ h x \$[\d.]+/h = \$[\d.]+",
                     out)
    assert re.search(r"^  all jobs: \$[\d.]+, saved \$[\d.]+ \(\d+%\) "
                     r"against Vertex AI on-demand", out, re.M)

    # Without --keep: the directory (with its private key) is gone.
    m = re.search(r"^removed (\S+) ", out, re.M)
    assert m and m.group(1).startswith(base + "/gpuq-demo-")
    assert os.listdir(base) == []
    assert_no_processes(base)


def test_demo_keep_keeps_its_directory(base):
    r = run_demo(base, "--keep")
    assert r.returncode == 0, r.stderr
    m = re.search(r"^kept (\S+):", r.stdout, re.M)
    assert m, "the demo does not say where it kept its directory"
    kept = m.group(1)
    assert os.path.dirname(kept) == base
    for f in ("sa.json", "gpuqd.log", "gpuqd.conf", "state",
              os.path.join("fakegcp", "fakegcp.log")):
        assert os.path.exists(os.path.join(kept, f)), f
    assert os.stat(os.path.join(kept, "sa.json")).st_mode & 0o077 == 0
    assert_no_processes(base)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_demo_interrupted_stops_and_cleans_up(base, sig):
    p = subprocess.Popen(demo_cmd(), env=demo_env(base), text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = []
    try:
        # Strike once gpuqd and the simulated cloud both run and jobs
        # are placed.
        for line in p.stdout:
            seen.append(line)
            if line.startswith("why job 1 "):
                break
        assert leftovers(base), "".join(seen)
        p.send_signal(sig)
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    out = "".join(seen) + rest
    print(out)
    assert p.returncode == 128 + sig, out
    assert "removed " in out
    assert os.listdir(base) == []
    assert_no_processes(base)
