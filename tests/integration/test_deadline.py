"""test_deadline.py: jobs with a deadline through the real gpuqd and gpuq
against the simulated Google Cloud (doc/DESIGN.md "Deadlines").

gpuqd keeps real time here (the fake alone runs SPEED times faster), so
deadlines are minutes and estimated_hours a fraction of a minute's worth
of hours; the fake's work is given in its simulated seconds, SPEED per
real second. The tests assert on outcomes and events (which capacity
each attempt used, whether the job made its deadline, what the events
say), never on when exactly something happened: every deadline leaves a
minute or more beyond what the job needs.
"""

import json
import time
import urllib.error

from cloudutil import (LIVE_CLOUD, TERMINAL, cloud, job_spec,  # noqa: F401
                       scaled)
from gpuqdtest import TOP_SRCDIR  # noqa: F401

SPEED = 20
# A deadline job leaves Spot once its slack is under a minute; a restart
# costs 5 s of progress (the default 10m would swallow these short jobs).
SCHED = {"deadline_margin": "60s", "restart_overhead": "5s"}


def deadline_spec(deadline, work_real=20, hours=0.01, name="dl"):
    """A Compute Engine T4 job, Spot allowed, of WORK_REAL real seconds
    of work (the fake's), estimated at HOURS, due at DEADLINE."""
    return job_spec(providers=["gce"], work=work_real * SPEED,
                    ckpt=2 * SPEED, name=name, spot="allow",
                    estimated_hours=hours, deadline=deadline)


def epoch(rfc3339):
    return int(time.mktime(time.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ"))
               - time.timezone)


def events(job):
    return [e.get("message") or "" for e in job.get("events") or []]


def preempt_spot(c, jid):
    """Preempt every running Spot VM of job JID; how many."""
    n = 0
    for r in c.resources(jid, service="compute"):
        if r["deleted"] or not r["spot"] or r["state"] != "RUNNING":
            continue
        try:
            c.ctl("/_fake/preempt", {"name": r["name"]})
            n += 1
        except urllib.error.HTTPError:
            pass            # stopped meanwhile
    return n


def test_deadline_leaves_spot_in_time_and_loose_stays(cloud):
    """Two equal jobs on a zone whose Spot VMs keep being preempted: the
    one due in 150 s runs out of slack, is marked deadline_safe, finishes
    on standard capacity before its deadline; the one due in 2 hours is
    never preempted here, stays on Spot and costs less."""
    c = cloud(providers=("gce",), speed=SPEED, scheduler=SCHED)
    tight = c.submit(deadline_spec("150s", name="tight"))
    loose = c.submit(deadline_spec("2h", name="loose"))
    due = epoch(c.show(tight)["deadline"])

    # gpuq status shows the slack of both.
    c.wait_state(loose, "running", 90)
    rc, out, err = c.gpuq("status")
    c.check(rc == 0, "gpuq status: %s" % err)
    lines = out.splitlines()
    c.check("SLACK" in lines[0].split(), "no SLACK column: %r" % lines[0])
    row = [ln for ln in lines if ln.split() and ln.split()[0] == str(loose)]
    c.check(row and any(w.startswith("+1h5") for w in row[0].split()),
            "loose job's slack, want +1h5.m: %r" % row)

    preempted = 0
    stop = time.monotonic() + scaled(300)
    while time.monotonic() < stop:
        job = c.show(tight)
        if job["state"] in TERMINAL:
            break
        preempted += preempt_spot(c, tight)
        time.sleep(0.3)
    job = c.wait_state(tight, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "tight job ended %s" %
            job["state"], tight)
    c.check(preempted >= 1, "the tight job never ran on Spot", tight)
    c.check(job["deadline_safe"] is True, "tight job not deadline_safe",
            tight)
    ev = events(job)
    marks = [m for m in ev if m.startswith("deadline: slack ") and
             "below margin 1m00s; no more Spot capacity" in m]
    c.check(len(marks) == 1, "want one deadline event, got %r" % ev, tight)
    att = c.attempts(job)
    c.check(att[-1]["end_reason"] == "succeeded" and not att[-1]["spot"],
            "last attempt %r, want a standard one that succeeded" % att[-1],
            tight)
    c.check(any(a["spot"] for a in att), "no Spot attempt: %r" % att, tight)
    # Once on standard capacity it stays there.
    first_std = min(i for i, a in enumerate(att) if not a["spot"])
    c.check(all(not a["spot"] for a in att[first_std:]),
            "Spot again after standard: %r" % att, tight)
    c.check(job["updated"] <= due and "missed_by" not in job,
            "finished %ds after its deadline" % (job["updated"] - due),
            tight)

    job2 = c.wait_state(loose, TERMINAL, 120)
    c.check(job2["state"] == "succeeded", "loose job ended %s" %
            job2["state"], loose)
    att2 = c.attempts(job2)
    c.check(all(a["spot"] for a in att2) and not job2["deadline_safe"],
            "loose job left Spot: %r" % att2, loose)
    c.check(job2["cost_usd"] < job["cost_usd"],
            "loose $%.4f not below tight $%.4f" % (job2["cost_usd"],
                                                  job["cost_usd"]), loose)
    c.check(not any(m.startswith("deadline:") for m in events(job2)),
            "loose job has a deadline event: %r" % events(job2), loose)

    # gpuq show says the deadline; gpuq history lists both, no miss.
    rc, out, err = c.gpuq("show", str(tight))
    c.check(rc == 0 and "deadline" in out and "missed" not in out,
            "gpuq show: %s%s" % (out, err), tight)
    rc, out, err = c.gpuq("history")
    c.check(rc == 0 and "missed deadline" not in out, "history: %s" % out)
    rc, out, err = c.gpuq("metrics")
    c.check(rc == 0 and "\ngpuq_deadline_misses_total 0\n" in out,
            "metrics: %s" % out)


def test_deadline_moves_a_pending_spot_attempt(cloud):
    """A Spot VM that takes long to start eats the slack: once it is
    under the margin the Spot attempt is withdrawn ("moved to on-demand
    capacity") and the job finishes on standard capacity, staying there
    across a kill -9 of gpuqd."""
    # 800 simulated seconds of provisioning: 40 real seconds. The slack
    # starts at 110 - 36 = 74 s and is under the margin 14 s later,
    # long before the Spot VM starts.
    c = cloud(providers=("gce",), speed=SPEED, scheduler=SCHED,
              fake_config={"provision_seconds": 800})
    jid = c.submit(deadline_spec("110s", work_real=10))
    c.wait_for(jid, lambda j: j["state"] == "pending" and
               (j.get("current") or {}).get("spot"), 60,
               "pending on Spot")
    job = c.wait_for(jid, lambda j: j["deadline_safe"], 90,
                     "deadline_safe")
    c.kill9()
    c.start()
    job = c.wait_state(jid, TERMINAL, 150)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    ev = events(job)
    c.check(any(m.startswith("moved to on-demand capacity: slack ") and
                "below margin 1m00s" in m for m in ev),
            "no move event: %r" % ev, jid)
    att = c.attempts(job)
    c.check(att[0]["spot"] and att[0]["end_reason"] == "pending",
            "attempt 1 %r, want Spot withdrawn" % att[0], jid)
    c.check(all(not a["spot"] for a in att[1:]) and len(att) >= 2,
            "after the move: %r" % att, jid)
    c.check(job["interruptions"] == 0 and job["failures"] == 0,
            "the move counted: %r/%r" % (job["interruptions"],
                                         job["failures"]), jid)


def test_deadline_refused_when_it_cannot_fit(cloud):
    """estimated_hours that do not fit before the deadline, or none given:
    refused at submit, the error naming both figures and the fix."""
    c = cloud(providers=("gce",), speed=SPEED, scheduler=SCHED)
    for spec, want in (
            (deadline_spec("10m", hours=1),
             ["deadline:", "leaves 10m00s", "estimated_hours is 1 "
              "(1h00m of work)", "move the deadline to ",
              "or lower estimated_hours"]),
            (dict(job_spec(providers=["gce"]), deadline="2026-12-01T09:00"),
             ["neither a time nor a duration", "needs its zone"]),
            (dict(job_spec(providers=["gce"]), deadline="36h"),
             ["needs estimated_hours"])):
        path = "%s/bad-%d.json" % (c.dir, time.monotonic_ns())
        with open(path, "w") as f:
            json.dump(spec, f)
        rc, out, err = c.gpuq("submit", path)
        c.check(rc != 0, "submitted: %r" % spec)
        for w in want:
            c.check(w in err, "error %r lacks %r" % (err, w))
    c.check(c.list_jobs() == [], "a refused job was queued")


def test_deadline_spot_only_machine_leaves_spot_for_flex(cloud):
    """a3-highgpu-1g is not sold on demand: a job on it that is short of
    slack at once (marked at its first pass, so its slack is under its
    flex_wait) has only flex-start left, late or not, and runs there.
    It used to be left with standard capacity alone, which Google does
    not sell for it, and waited for ever ("... sold only as Spot or
    flex-start, and the job allows neither")."""
    c = cloud(providers=("gce",), speed=SPEED, scheduler=SCHED,
              fake_config={"flex_delay": 20})
    spec = job_spec(providers=["gce"], work=10 * SPEED, ckpt=2 * SPEED,
                    name="dl-a3", gpu="nvidia-h100-80gb",
                    machine_type="a3-highgpu-1g", estimated_hours=0.01,
                    deadline="70s")
    jid = c.submit(spec)
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s (why %r)" % (
        job["state"], job.get("why")), jid)
    c.check(job["deadline_safe"], "not marked: %r" % job, jid)
    att = c.attempts(job)
    c.check(att and all(a["capacity"] == "flex" for a in att),
            "attempts %r, want flex-start only" % att, jid)


def test_least_slack_first_takes_the_gpu_that_frees(cloud):
    """The project has no GPU quota while two deadline jobs queue: the
    loose one (due in 2 hours) first, then the tight one (due in 4
    minutes). When one GPU frees up, the tight job takes it although the
    loose one was submitted first (doc/DESIGN.md "Deadlines": the pass
    walks jobs with a deadline least slack first); first come, first
    served gave it to the loose job and left the tight one to wait."""
    c = cloud(providers=("gce",), speed=SPEED, scheduler=SCHED,
              setup=lambda c: c.quota("GPUS_ALL_REGIONS", 0))
    spec = job_spec(providers=["gce"], work=20 * SPEED, ckpt=2 * SPEED,
                    spot="never", estimated_hours=0.01)
    loose = c.submit(dict(spec, name="loose", deadline="2h"))
    tight = c.submit(dict(spec, name="tight", deadline="4m"))
    for jid in (loose, tight):
        c.wait_for(jid, lambda j: j["state"] == "queued" and
                   "quota" in (j.get("why") or ""), 30,
                   "queued for quota")
    c.quota("GPUS_ALL_REGIONS", 1)
    c.wait_state(tight, LIVE_CLOUD + TERMINAL, 30)
    c.check(c.show(loose)["state"] == "queued",
            "the loose job launched too: %r" % c.show(loose), loose)
    job = c.wait_state(tight, TERMINAL, 120)
    c.check(job["state"] == "succeeded" and "missed_by" not in job,
            "tight job ended %s, %r" % (job["state"], job), tight)
    # Then the loose one, on the GPU the tight one freed.
    job = c.wait_state(loose, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "loose job ended %s" %
            job["state"], loose)
    refused = [r for r in c.creates("gce") if r["status"] >= 400]
    c.check(not refused, "creates refused by the cloud: %r" % refused)
