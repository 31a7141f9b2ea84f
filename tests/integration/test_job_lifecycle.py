"""A job's life, submit to end, through the real gpuqd and gpuq on the
simulated cloud. (The daemon process's own life -- start, stop,
reload, signals -- is test_daemon_process.py.)

Jobs run to completion on the simulated cloud, through the real gpuqd
and gpuq (issue "Running jobs to completion"): the whole life on each of
Vertex AI, Cloud Batch and Compute Engine; preemption and host
maintenance resuming from the newest checkpoint; a user's non-zero exit
(failed, not retried, or retried max_failures times); cancel deleting the
cloud resource; and the reconciler's calls per poll not growing with the
number of running jobs.

Numbers: the fake runs SPEED = 100 simulated seconds per real second, so
FAKEGCP_WORK_SECONDS = 300 is 3 s of real time; gpuqd polls every real
second (cloudutil.DEFAULT_SCHEDULER). A gpuqd that does not launch
fails these tests.
"""

import time

import pytest

from cloudutil import (CKPT_ROOT, PROVIDERS, TERMINAL, cloud,
                       job_spec, scaled)

assert cloud  # the fixture, imported for pytest

SPEED = 100
# Creates take 1.5 real s to reach RUNNING, so `pending` is a real state.
SLOW_PROVISION = {"provision_seconds": 150}


def ckpt_progress(uri):
    """Progress in a fake checkpoint's name: .../ckpt-00000400 -> 400."""
    return int(uri.rsplit("ckpt-", 1)[1])


def the_resource(c, jid, n=1):
    rs = c.resources(jid)
    c.check(len(rs) == n, "job %d: expected %d cloud resource(s) with our "
            "labels, the fake has %d: %s" % (
                jid, n, len(rs), [(r["name"], r["state"]) for r in rs]), jid)
    return rs


@pytest.mark.parametrize("provider", PROVIDERS)
def test_whole_life(cloud, provider):
    c = cloud(probe=(provider,), speed=SPEED, fake_config=SLOW_PROVISION)
    jid = c.submit(job_spec(providers=[provider], work=300, ckpt=60))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    c.check(c.path(job) == ["queued", "launching", "pending", "running",
                            "succeeded"],
            "states went %s" % c.path(job), jid)
    c.check(job["exit_code"] == 0, "exit_code %r" % job["exit_code"], jid)
    c.check(job["attempts"] == 1 and job["failures"] == 0 and
            job["interruptions"] == 0, "counters %r" % (
                {k: job[k] for k in ("attempts", "failures",
                                     "interruptions")}), jid)

    [a] = c.attempts(job)
    c.check(a["provider"] == provider, "attempt provider %r" %
            a["provider"], jid)
    c.check(a["region"] == "us-central1", "attempt region %r" % a["region"],
            jid)
    if provider == "gce" or a.get("zone"):
        c.check(str(a.get("zone")).startswith("us-central1-"),
                "attempt zone %r" % a.get("zone"), jid)
    c.check(a["resource"] == "gpuq-%s-%d-1" % (c.install, jid),
            "resource %r is not gpuq-<install>-<job>-<attempt>" %
            a["resource"], jid)
    c.check(a["state"] == "ended" and a["end_reason"] == "succeeded" and
            a["exit_code"] == 0, "attempt ended %r/%r exit %r" % (
                a["state"], a["end_reason"], a["exit_code"]), jid)
    c.check(not a.get("resumed_from"), "first attempt resumed from %r" %
            a.get("resumed_from"), jid)

    # Cost: hourly price x how long it ran, summed into the job.
    c.check(a["hourly_usd"] > 0, "hourly_usd %r" % a["hourly_usd"], jid)
    c.check(a["started"] and a["ended"] >= a["started"],
            "started %r ended %r" % (a["started"], a["ended"]), jid)
    # Billed by the cloud's own clock: the start and end the service
    # reports for the resource (the fake's simulated clock, SPEED times
    # gpuqd's), at least a minute (daemon/cost.h, doc/DESIGN.md
    # "Accounting").
    [r0] = the_resource(c, jid)
    c.check(abs(a["billed_start"] - r0["started"]) <= 1 and
            abs(a["billed_end"] - r0["ended"]) <= 1,
            "billed %r..%r, the fake ran it %r..%r" % (
                a["billed_start"], a["billed_end"], r0["started"],
                r0["ended"]), jid)
    billed = max(a["billed_end"] - a["billed_start"], 60)
    want = a["hourly_usd"] * billed / 3600.0
    c.check(a["cost_usd"] > 0 and abs(a["cost_usd"] - want) <= 1e-9 * want,
            "attempt cost %r, hourly %r x %ss = %r" % (
                a["cost_usd"], a["hourly_usd"], billed, want), jid)
    c.check(a["baseline_hourly_usd"] > 0 and abs(
        a["baseline_usd"] - a["baseline_hourly_usd"] * billed / 3600.0) <=
        1e-9 * a["baseline_usd"], "baseline %r at %r/h for %ss" % (
            a["baseline_usd"], a["baseline_hourly_usd"], billed), jid)
    c.check(abs(job["cost_usd"] - a["cost_usd"]) < 1e-6,
            "job cost %r != attempt cost %r" % (job["cost_usd"],
                                                a["cost_usd"]), jid)

    # The cloud side: one resource, labelled, that ran the job with the
    # checkpoint contract's environment (gpuq-job(5) CHECKPOINTS).
    [r] = the_resource(c, jid)
    c.check(r["labels"].get("gpuq-attempt") == "1", "labels %r" %
            r["labels"], jid)
    w = c.work(jid)
    c.check(w["completed"] and w["exit_codes"] == [0] and w["runs"] == 1,
            "fake work %r" % {k: w[k] for k in ("completed", "exit_codes",
                                                "runs")}, jid)
    [run] = w["resources"]
    c.check(run["job"] == str(jid) and run["attempt"] == "1",
            "GPUQ_JOB_ID/GPUQ_ATTEMPT seen by the job: %r/%r" % (
                run["job"], run["attempt"]), jid)
    c.check(run["checkpoint_dir"] == "%s/%d/checkpoints/" % (CKPT_ROOT, jid),
            "GPUQ_CHECKPOINT_DIR %r" % run["checkpoint_dir"], jid)
    c.check(run["resume_from"] is None, "GPUQ_RESUME_FROM set on the first "
            "attempt: %r" % run["resume_from"], jid)


# (provider, kind): how the interruption is caused and what gpuqd calls it.
INTERRUPTIONS = [
    ("gce", "preempt"), ("batch", "preempt"), ("vertex", "preempt"),
    ("gce", "maintenance"), ("batch", "maintenance"),
    ("vertex", "maintenance"),
]


@pytest.mark.parametrize("provider,kind", INTERRUPTIONS)
def test_interruption_resumes_from_newest_checkpoint(cloud, provider, kind):
    """A Spot preemption or a host maintenance ends the attempt as an
    interruption; the next attempt gets GPUQ_RESUME_FROM = the newest
    checkpoint, so the work redone is at most one checkpoint interval."""
    need, every = 1500, 100
    c = cloud(probe=(provider,), speed=SPEED)
    spec = job_spec(providers=[provider], work=need, ckpt=every)
    if kind == "preempt":
        spec["spot"] = "require"
    jid = c.submit(spec)
    c.wait_running(jid, 60, progress=450)
    [r] = the_resource(c, jid)
    # Vertex AI would restart the worker in place, but gpuq creates its
    # jobs with scheduling.disableRetries: the job fails and gpuq decides.
    c.ctl("/_fake/" + kind, {"name": r["resource"]})
    before = c.work(jid)["resources"][0]
    c.check(before["checkpoints"], "no checkpoint before the %s" % kind, jid)
    newest = before["checkpoints"][-1]

    job = c.wait_state(jid, TERMINAL, 90)
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    att = c.attempts(job)
    c.check(len(att) == 2, "%d attempts, want 2" % len(att), jid)
    reason = "preempted" if kind == "preempt" else "maintenance"
    c.check(att[0]["end_reason"] == reason, "attempt 1 ended %r, want %r" %
            (att[0]["end_reason"], reason), jid)
    c.check(att[1]["end_reason"] == "succeeded", "attempt 2 ended %r" %
            att[1]["end_reason"], jid)
    c.check(job["interruptions"] == 1 and job["failures"] == 0,
            "interruptions %r failures %r" % (job["interruptions"],
                                              job["failures"]), jid)
    c.check(att[1]["resumed_from"] == newest,
            "attempt 2 resumed_from %r, the newest checkpoint before the "
            "%s was %r" % (att[1]["resumed_from"], kind, newest), jid)

    w = c.work(jid)
    runs = w["resources"]
    second = [x for x in runs if x["attempt"] == "2"]
    c.check(len(second) == 1, "fake runs of attempt 2: %d" % len(second),
            jid)
    s = second[0]
    c.check(s["resume_from"] == newest, "the job's GPUQ_RESUME_FROM was %r, "
            "want %r" % (s["resume_from"], newest), jid)
    c.check(s["start_progress"] > 0 and
            s["start_progress"] == ckpt_progress(newest),
            "attempt 2 started at progress %r, checkpoint says %r" % (
                s["start_progress"], ckpt_progress(newest)), jid)
    lost = before["progress"] - s["start_progress"]
    c.check(0 <= lost <= every + 1, "work lost %r > one checkpoint "
            "interval %r" % (lost, every), jid)
    c.check(w["work_done"] < 2 * need and
            abs(w["work_done"] - (need + lost)) <= 1,
            "work done %r; needed %r + lost since the checkpoint %r" % (
                w["work_done"], need, lost), jid)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_user_exit_fails_without_retry(cloud, provider):
    c = cloud(probe=(provider,), speed=SPEED)
    jid = c.submit(job_spec(providers=[provider], work=60, exit_code=3))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "failed" and job["exit_code"] == 3,
            "ended %s exit %r, want failed exit 3" % (job["state"],
                                                     job["exit_code"]), jid)
    att = c.attempts(job)
    c.check(len(att) == 1, "%d attempts; max_failures 0 must not retry" %
            len(att), jid)
    c.check(att[0]["end_reason"] == "failed" and att[0]["exit_code"] == 3,
            "attempt ended %r exit %r" % (att[0]["end_reason"],
                                          att[0]["exit_code"]), jid)
    c.check(job["failures"] == 1 and job["interruptions"] == 0,
            "failures %r interruptions %r" % (job["failures"],
                                              job["interruptions"]), jid)
    the_resource(c, jid)


def test_max_failures_retries_once(cloud):
    c = cloud(speed=SPEED)
    jid = c.submit(job_spec(providers=["gce"], work=60, exit_code=3,
                            max_failures=1))
    job = c.wait_state(jid, TERMINAL, 60)
    att = c.attempts(job)
    c.check(job["state"] == "failed" and job["exit_code"] == 3,
            "ended %s exit %r" % (job["state"], job["exit_code"]), jid)
    c.check(len(att) == 2 and all(a["end_reason"] == "failed" and
                                  a["exit_code"] == 3 for a in att),
            "attempts %r" % [(a["end_reason"], a["exit_code"]) for a in att],
            jid)
    c.check(job["failures"] == 2, "failures %r, want 2" % job["failures"],
            jid)
    # The retry is a second attempt like any other: it resumes from the
    # newest checkpoint the first one wrote (gpuq-job(5) CHECKPOINTS).
    first = c.work(jid)["resources"][0]
    c.check(att[1]["resumed_from"] == first["checkpoints"][-1],
            "retry resumed_from %r, newest checkpoint %r" % (
                att[1]["resumed_from"], first["checkpoints"][-1]), jid)
    the_resource(c, jid, 2)


def _gone(r):
    st = str(r.get("state") or "")
    return r.get("deleted") or "CANCEL" in st or "DELETION" in st


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancel_deletes_the_resource(cloud, provider):
    c = cloud(probe=(provider,), speed=SPEED)
    jid = c.submit(job_spec(providers=[provider], work=100000, ckpt=100))
    c.wait_running(jid, 60, progress=100)
    rc, out, err = c.gpuq("cancel", str(jid))
    c.check(rc == 0, "gpuq cancel: rc %d %s" % (rc, err), jid)
    job = c.wait_state(jid, ("cancelled", "succeeded", "failed"), 30)
    c.check(job["state"] == "cancelled", "ended %s" % job["state"], jid)
    c.check(c.path(job)[-2:] == ["cancelling", "cancelled"],
            "states went %s" % c.path(job), jid)
    [a] = c.attempts(job)
    c.check(a["end_reason"] == "cancelled", "attempt ended %r" %
            a["end_reason"], jid)
    deadline = time.monotonic() + scaled(20)
    while True:
        rs = c.resources(jid)
        if rs and all(_gone(r) for r in rs):
            break
        c.check(time.monotonic() < deadline, "the cloud resource is not "
                "deleted or cancelled: %r" % [(r["name"], r["state"],
                                               r["deleted"]) for r in rs],
                jid)
        time.sleep(0.2)
    c.check(len(rs) == 1, "%d resources for the job" % len(rs), jid)
    w1 = c.work(jid)["work_done"]
    time.sleep(1)
    w2 = c.work(jid)["work_done"]
    c.check(w1 == w2, "the job still works after cancel: %r -> %r" % (w1, w2),
            jid)


# -- calls per poll -----------------------------------------------------------

BIG_QUOTA = [
    ("us-central1", "NVIDIA_T4_GPUS", 2000),
    ("us-central1", "PREEMPTIBLE_NVIDIA_T4_GPUS", 2000),
    ("us-central1", "CPUS", 100000),
    ("us-central1", "INSTANCES", 100000),
    ("global", "GPUS_ALL_REGIONS", 2000),
    ("global", "CPUS_ALL_REGIONS", 100000),
]


def big_quota(c):
    for region, metric, limit in BIG_QUOTA:
        c.quota(metric, limit, region=region)


def wait_all_running(c, n, timeout):
    deadline = time.monotonic() + scaled(timeout)
    while True:
        r = c.request({"op": "list", "state": "all", "limit": 1})
        counts = r.get("counts", {})
        if counts.get("running", 0) >= n:
            return counts
        if counts.get("failed", 0) or counts.get("cancelled", 0):
            c.fail("jobs ended while launching %d: %r" % (n, counts))
        if time.monotonic() > deadline:
            c.fail("only %r of %d jobs running after %.0fs" % (counts, n,
                                                               scaled(timeout)))
        time.sleep(0.5)


def calls_over(c, seconds):
    """The fake's calls by method during SECONDS of steady running."""
    c.ctl("/_fake/counters/reset", {})
    time.sleep(seconds)
    return c.counters()


def test_calls_per_poll_do_not_grow_with_jobs(cloud):
    """10 and 400 running Compute jobs in one region: the reconciler
    lists them with one aggregatedList a poll (400 < 500 per page) and
    makes no per-job calls, so the calls per poll are the same."""
    window = 6.0
    c = cloud(speed=20, providers=("gce",), setup=big_quota)
    spec = job_spec(providers=["gce"], work=10 ** 7, ckpt=10 ** 6,
                    spot="never")
    c.submit(*[spec] * 10)
    wait_all_running(c, 10, 60)
    time.sleep(2)
    small = calls_over(c, window)
    c.submit(*[spec] * 390)
    wait_all_running(c, 400, 300)
    time.sleep(2)
    big = calls_over(c, window)

    agg = "compute.instances.aggregatedList"
    polls_small, polls_big = small.get(agg, 0), big.get(agg, 0)
    report = "calls in %.0fs: 10 jobs %r; 400 jobs %r" % (window, small, big)
    c.check(window * 0.5 <= polls_big <= window * 1.5 + 1 and
            abs(polls_big - polls_small) <= 2,
            "aggregatedList calls (one per poll expected): %s" % report)
    per_poll_small = sum(small.values()) / max(polls_small, 1)
    per_poll_big = sum(big.values()) / max(polls_big, 1)
    c.check(per_poll_big <= per_poll_small + 1,
            "calls per poll grew from %.1f to %.1f: %s" % (
                per_poll_small, per_poll_big, report))
    c.check(big.get("compute.instances.get", 0) <= 2,
            "per-job instance reads: %s" % report)
