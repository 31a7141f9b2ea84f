"""test_metrics.py: gpuqd's Prometheus metrics and its journal fields,
end to end: the real gpuqd and gpuq against the simulated cloud.

What must hold (gpuqd(8) METRICS and JOURNAL, gpuqd.conf(5)
metrics_file): `gpuq metrics` prints text that Prometheus's own parser
(prometheus_client, Debian's python3-prometheus-client) reads, and its
numbers are the queue's; [daemon] metrics_file is replaced whole by
rename, never written in place; every metric contrib/grafana-gpuq.json
queries exists; under journald a job's lines carry GPUQ_JOB=,
GPUQ_ATTEMPT= and GPUQ_STATE=.
"""

import json
import os
import re
import shutil
import subprocess
import time
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cloudutil import TOP_SRCDIR, cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

SPEED = 120


def metrics(c):
    """`gpuq metrics`, parsed: {sample name: [(labels, value)]}, and the
    families' names and types."""
    rc, out, err = c.gpuq("metrics")
    assert rc == 0, err
    return parse(out)


def parse(text):
    samples, families = {}, {}
    for fam in text_string_to_metric_families(text):
        families[fam.name] = fam.type
        for s in fam.samples:
            samples.setdefault(s.name, []).append((s.labels, s.value))
    return samples, families


def value(samples, name, **labels):
    for lab, v in samples.get(name, []):
        if all(lab.get(k) == w for k, w in labels.items()):
            return v
    raise AssertionError("no sample %s%r in %r" % (name, labels,
                                                   sorted(samples)))


def test_metrics_parse_and_count_the_queue(cloud):
    c = cloud(providers=("gce",), speed=SPEED)
    ok = c.submit(job_spec(providers=["gce"], work=30))
    bad = c.submit(job_spec(providers=["gce"], work=30, exit_code=2))
    held = c.submit(job_spec(providers=["gce"], work=30), hold=True)
    c.wait_state(ok, "succeeded", 60)
    c.wait_state(bad, "failed", 60)
    s, fams = metrics(c)
    assert value(s, "gpuq_jobs", state="succeeded") == 1
    assert value(s, "gpuq_jobs", state="failed") == 1
    assert value(s, "gpuq_jobs", state="held") == 1, held
    assert value(s, "gpuq_jobs", state="running") == 0
    assert value(s, "gpuq_jobs_ended_total", state="succeeded") == 1
    assert value(s, "gpuq_jobs_ended_total", state="failed") == 1
    assert value(s, "gpuq_launches_total") == 2
    # The final failure counts, by its reason: the program's exit.
    assert value(s, "gpuq_failures_total", reason="failed") == 1
    assert value(s, "gpuq_failures_total", reason="launch_error") == 0
    assert fams["gpuq_launches"] == "counter"
    assert value(s, "gpuq_cloud_api_calls_total", api="compute") > 0
    assert value(s, "gpuq_cloud_api_errors_total", api="compute") == 0
    assert value(s, "gpuq_store_commit_seconds_count") > 0
    assert fams["gpuq_store_commit_seconds"] == "summary"
    jobs = [c.show(ok), c.show(bad)]
    spent = sum(j["cost_usd"] for j in jobs)
    assert abs(value(s, "gpuq_spent_dollars_total") - spent) < 1e-6
    # The Vertex AI on-demand baseline and the saving, as gpuq show and
    # gpuq history count them (a job without a baseline saves nothing).
    assert all(j["baseline_usd"] > 0 for j in jobs), jobs
    base = sum(j["baseline_usd"] for j in jobs)
    saved = sum(j["baseline_usd"] - j["cost_usd"] for j in jobs
                if j["baseline_usd"] > 0)
    assert abs(value(s, "gpuq_baseline_dollars_total") - base) < 1e-6
    assert abs(value(s, "gpuq_saved_dollars") - saved) < 1e-6
    assert saved > 0      # Spot Compute Engine against on-demand Vertex
    assert fams["gpuq_baseline_dollars"] == "counter"
    assert fams["gpuq_saved_dollars"] == "gauge"
    assert value(s, "gpuq_info", install=c.install) == 1
    assert value(s, "gpuq_sched_passes_total") > 0
    # Quota buckets the scheduler read, each with its headroom.
    assert any(lab["service"] == "gce" and lab["region"] == "us-central1"
               for lab, _ in s["gpuq_quota_headroom"])


def test_metrics_gpus_running_and_interruptions(cloud):
    c = cloud(providers=("gce",), speed=SPEED)
    jid = c.submit(job_spec(providers=["gce"], work=30000, count=2,
                            spot="require"))
    c.wait_running(jid, 60)
    s, _ = metrics(c)
    assert value(s, "gpuq_gpus_running", gpu="nvidia-tesla-t4",
                 service="gce", region="us-central1", spot="true") == 2
    [r] = [x for x in c.resources(jid) if not x.get("deleted")]
    c.ctl("/_fake/preempt", {"name": r["resource"]})
    c.wait_for(jid, lambda j: j["interruptions"] >= 1, 60,
               "an interruption")
    s, _ = metrics(c)
    assert value(s, "gpuq_interruptions_total", reason="preempted") == 1
    c.gpuq("cancel", str(jid))
    c.wait_state(jid, "cancelled", 60)
    s, _ = metrics(c)
    assert value(s, "gpuq_jobs_ended_total", state="cancelled") == 1


def test_metrics_file_replaced_atomically(cloud, tmp_path):
    os.chmod(tmp_path, 0o755)
    path = tmp_path / "gpuq.prom"
    c = cloud(providers=("gce",), speed=SPEED,
              daemon={"metrics_file": str(path), "metrics_interval": "1s"})
    deadline = time.monotonic() + scaled(10)
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), "gpuqd did not write %s" % path
    first = os.stat(path)
    assert first.st_mode & 0o777 == 0o644, oct(first.st_mode)
    jid = c.submit(job_spec(providers=["gce"], work=30))
    c.wait_state(jid, "succeeded", 60)
    # Each write is a new file renamed over the old one: a new inode,
    # never the old file rewritten in place where a reader could see
    # half of it.
    deadline = time.monotonic() + scaled(10)
    while time.monotonic() < deadline:
        s, _ = parse(path.read_text())
        if value(s, "gpuq_jobs", state="succeeded") == 1:
            break
        time.sleep(0.1)
    assert value(s, "gpuq_jobs", state="succeeded") == 1
    assert os.stat(path).st_ino != first.st_ino
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names in (["gpuq.prom"], ["gpuq.prom", "gpuq.prom.tmp"]), names


def dashboard_metrics():
    """Every gpuq_* name an expression of the dashboard queries."""
    with open(os.path.join(TOP_SRCDIR, "contrib", "grafana-gpuq.json")) as f:
        dash = json.load(f)
    names = set()
    for p in dash["panels"]:
        for t in p.get("targets", []):
            names.update(re.findall(r"\bgpuq_[a-z0-9_]+", t["expr"]))
    for v in dash.get("templating", {}).get("list", []):
        names.update(re.findall(r"\bgpuq_[a-z0-9_]+", v.get("query", "")))
    return names


def test_grafana_dashboard_queries_existing_metrics(cloud):
    c = cloud(providers=("gce",), speed=SPEED)
    rc, out, err = c.gpuq("metrics")
    assert rc == 0, err
    # A family with no sample yet (no GPU running) is still declared.
    declared = set(re.findall(r"^# TYPE (\S+) ", out, re.M))
    sampled = set(re.findall(r"^([a-z_:][a-z0-9_:]*)[{ ]", out, re.M))
    known = declared | sampled
    for fam in declared:
        known |= {fam + "_sum", fam + "_count"}
    wanted = dashboard_metrics()
    assert len(wanted) >= 15, sorted(wanted)
    missing = sorted(wanted - known)
    assert not missing, "the dashboard queries metrics gpuqd lacks: %r" % \
        missing


def systemd_journal():
    """Is journald running here and readable by us?"""
    try:
        with open("/proc/1/comm") as f:
            if f.read().strip() != "systemd":
                return False
    except OSError:
        return False
    return (os.path.exists("/run/systemd/journal/socket") and
            shutil.which("journalctl") is not None)


@pytest.mark.skipif(not systemd_journal(),
                    reason="needs systemd as PID 1 with journald")
def test_journal_fields(cloud):
    tag = uuid.uuid4().hex
    # JOURNAL_STREAM is what systemd sets for a service whose stderr is
    # the journal; gpuqd then sends its job lines with fields.
    c = cloud(providers=("gce",), speed=SPEED, env={
        "JOURNAL_STREAM": "0:0", "GPUQ_TEST_TAG": tag})
    jid = c.submit(job_spec(providers=["gce"], work=30))
    c.wait_state(jid, "succeeded", 60)
    deadline = time.monotonic() + scaled(15)
    entries = []
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["journalctl", "--no-pager", "-o", "json",
             "_PID=%d" % c.gpuqd.pid, "GPUQ_JOB=%d" % jid],
            capture_output=True, text=True).stdout
        entries = [json.loads(line) for line in out.splitlines() if line]
        if any(e.get("GPUQ_STATE") == "succeeded" for e in entries):
            break
        time.sleep(0.2)
    states = [e.get("GPUQ_STATE") for e in entries]
    assert "launching" in states and "succeeded" in states, entries
    done = [e for e in entries if e.get("GPUQ_STATE") == "succeeded"][0]
    assert done["GPUQ_ATTEMPT"] == "1"
    assert done["MESSAGE"].startswith("job %d: " % jid)
    assert "-> succeeded" in done["MESSAGE"], done["MESSAGE"]
    assert done["SYSLOG_IDENTIFIER"] == "gpuqd"


def test_metrics_count_cloud_retries(cloud):
    """http.c's counters by API: a 503 storm on Compute's listings shows
    as retries of api="compute", none of another API."""
    c = cloud(providers=("gce",), speed=SPEED)
    jid = c.submit(job_spec(providers=["gce"], work=300, ckpt=100))
    c.wait_running(jid, 60)
    s, _ = metrics(c)
    before = value(s, "gpuq_cloud_api_retries_total", api="compute")
    c.fault(method="GET", path=r"^/compute/v1/projects/", status=503,
            count=3)
    c.wait_state(jid, "succeeded", 90)
    s, _ = metrics(c)
    assert value(s, "gpuq_cloud_api_retries_total", api="compute") >= \
        before + 3
    assert value(s, "gpuq_cloud_api_retries_total", api="batch") == 0
    assert value(s, "gpuq_cloud_api_calls_total", api="batch") == 0
