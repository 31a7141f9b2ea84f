"""test_move.py: a running job moves to cheaper capacity when it frees
up (doc/DESIGN.md "Moving to cheaper capacity"), through the real gpuqd
and gpuq against the simulated Google Cloud.

Spot T4s cost $0.10/h in us-east1 and $0.90/h in us-central1 (price
overrides). us-east1 is out of Spot T4s at the start, so the job runs in
us-central1; once us-east1 has them again, gpuqd withdraws the running
attempt and the job resumes from its checkpoint in us-east1, counting
neither a failure nor an interruption, with the reason in its events.
"""

import re
import time

from cloudutil import TERMINAL, cloud, job_spec, region_zones, scaled

assert cloud  # the fixture, imported for pytest

SPEED = 20
SCHED = {"restart_overhead": "5s", "stockout_cooldown": "5s",
         "stockout_cooldown_max": "5s"}


def spot_price(c, region, usd):
    c.price(service="compute", gpu="nvidia-tesla-t4", region=region,
            usage_type="Preemptible", usd_per_hour=usd)


def stock(c, region, out):
    for z in region_zones(region):
        c.ctl("/_fake/stockout", {"zone": z, "gpu": "nvidia-tesla-t4",
                                  "provisioning": "SPOT", "on": out})


def events(job):
    return [e.get("message") or "" for e in job.get("events") or []]


def spec(name, **kw):
    # Work for far longer than the test; 40 simulated hours estimated,
    # so the saving ($0.80/h over ~40 h) pays for the move many times.
    # It checkpoints every 2 real seconds and says so (a move must
    # first have run a restart overhead and a checkpoint interval).
    return job_spec(providers=["gce"], work=10 ** 6, ckpt=2 * SPEED,
                    name=name, spot="require", estimated_hours=40,
                    checkpoint={"interval": "2s"}, **kw)


def test_running_job_moves_to_cheaper_spot(cloud):
    def setup(c):
        spot_price(c, "us-east1", 0.10)
        spot_price(c, "us-central1", 0.90)
        stock(c, "us-east1", True)

    c = cloud(speed=SPEED, providers=("gce",), setup=setup,
              regions=("us-central1", "us-east1"), scheduler=SCHED)
    jid = c.submit(spec("mover"))
    job = c.wait_for(jid, lambda j: j["state"] == "running", 60,
                     "running")
    att = c.attempts(job)
    c.check(att[-1]["region"] == "us-central1",
            "us-east1 is out of Spot T4s, yet the job runs in %r" %
            att[-1]["region"], jid)
    # Let it checkpoint in us-central1, then give us-east1 its stock back.
    time.sleep(scaled(3))
    stock(c, "us-east1", False)
    job = c.wait_for(jid, lambda j: j["state"] == "running" and
                     c.attempts(j)[-1]["region"] == "us-east1", 120,
                     "running in us-east1")
    att = c.attempts(job)
    first = [a for a in att if a["region"] == "us-central1" and
             a.get("started")]
    c.check(first and first[-1]["end_reason"] == "pending",
            "the us-central1 attempt did not end as a move: %r" % att, jid)
    ev = events(job)
    moves = [m for m in ev if m.startswith("moved to cheaper capacity: "
                                           "gce/us-east1")]
    c.check(len(moves) == 1, "want one move event, got %r" % ev, jid)
    c.check("saving about $" in moves[0] and "h of work left" in moves[0],
            "the move event does not say why: %r" % moves[0], jid)
    c.check(job["interruptions"] == 0 and job["failures"] == 0,
            "the move counted: %r interruptions, %r failures" % (
                job["interruptions"], job["failures"]), jid)
    c.check(att[-1].get("resumed_from"),
            "the moved job did not resume from its checkpoint: %r" %
            att[-1], jid)
    # It stays: us-east1 is the cheapest now.
    time.sleep(scaled(5))
    job = c.show(jid)
    c.check(len(c.attempts(job)) == len(att) and job["state"] == "running",
            "moved again: %r" % c.attempts(job), jid)
    c.gpuq("cancel", str(jid))
    c.wait_state(jid, TERMINAL, 60)


def test_move_off_when_configured_off(cloud):
    """move_to_cheaper = no: the job stays where it runs."""
    def setup(c):
        spot_price(c, "us-east1", 0.10)
        spot_price(c, "us-central1", 0.90)
        stock(c, "us-east1", True)

    c = cloud(speed=SPEED, providers=("gce",), setup=setup,
              regions=("us-central1", "us-east1"),
              scheduler=dict(SCHED, move_to_cheaper="no"))
    jid = c.submit(spec("stayer"))
    c.wait_for(jid, lambda j: j["state"] == "running", 60, "running")
    time.sleep(scaled(3))
    stock(c, "us-east1", False)
    time.sleep(scaled(15))
    job = c.show(jid)
    att = c.attempts(job)
    c.check(job["state"] == "running" and
            att[-1]["region"] == "us-central1" and
            not any(m.startswith("moved") for m in events(job)),
            "moved with move_to_cheaper = no: %r" % att, jid)
    c.gpuq("cancel", str(jid))
    c.wait_state(jid, TERMINAL, 60)


def sched_jobs_cached(c):
    rc, out, err = c.gpuq("metrics")
    assert rc == 0, err
    m = re.search(r"^gpuq_sched_jobs_cached (\S+)$", out, re.M)
    assert m, "no gpuq_sched_jobs_cached in gpuq metrics:\n" + out
    return float(m.group(1))


def test_running_job_holds_no_scheduler_entry(cloud):
    """The move look parses a running job's spec and frees it when the
    look is over (doc/DESIGN.md "Memory": 10,000 running jobs held 1,900
    bytes each, not 870, while every look kept its entries). A restarted
    gpuqd's first pass looks at the job it finds running."""
    c = cloud(speed=SPEED, providers=("gce",), regions=("us-central1",),
              scheduler=SCHED)
    jid = c.submit(spec("runner"))
    c.wait_for(jid, lambda j: j["state"] == "running", 60, "running")
    seen = len(c.gpuqd.read_log())
    c.restart()

    def looked():
        return "scheduler: 1 running" in c.gpuqd.read_log()[seen:]

    deadline = time.monotonic() + scaled(30)
    while not looked() and time.monotonic() < deadline:
        time.sleep(0.2)
    c.check(looked(),
            "the restarted gpuqd's first pass did not look at the "
            "running job", jid)
    n = sched_jobs_cached(c)
    c.check(n == 0, "the scheduler holds %r job(s) parsed after a look "
            "at one running job" % n, jid)
    job = c.show(jid)
    c.check(job["state"] == "running", "the job left running: %r" %
            job["state"], jid)
    c.gpuq("cancel", str(jid))
    c.wait_state(jid, TERMINAL, 60)
