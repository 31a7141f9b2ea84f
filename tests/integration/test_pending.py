"""An attempt the cloud keeps queued (issue 11 "pending too long", issue
15 item 1), through the real gpuqd and gpuq against the simulated cloud:
Cloud Batch holds a job QUEUED while its zones have no capacity, saying
so only in a status event (the fake's batch_shortage "queue"). After
[scheduler] pending_timeout gpuqd cancels that attempt, counts nothing
against the job, keeps batch in that region off and runs the job in the
other region. A job's own pending_timeout wins over the daemon's.
"""

import time

from cloudutil import TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest

SPEED = 20


def t4_price(c, region, usd):
    c.price(service="compute", gpu="nvidia-tesla-t4", region=region,
            usage_type="OnDemand", usd_per_hour=usd)


def queued_in_central(c):
    """us-central1 is the cheaper region, and Batch there has no T4."""
    t4_price(c, "us-central1", 0.20)
    c.ctl("/_fake/stockout", {"zone": "us-central1",
                              "gpu": "nvidia-tesla-t4"})


def test_pending_too_long_is_placed_elsewhere(cloud):
    c = cloud(speed=SPEED, providers=("batch",),
              regions=("us-central1", "us-east1"),
              scheduler={"pending_timeout": "4s"},
              fake_config={"batch_shortage": "queue",
                           "batch_queue_recheck": 5.0},
              setup=queued_in_central)
    jid = c.submit(job_spec(providers=["batch"], work=60, spot="never"))
    job = c.wait_state(jid, TERMINAL, 90)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    atts = c.attempts(job)
    c.check(len(atts) == 2, "%d attempts, want 2" % len(atts), jid)
    first, second = atts[0], atts[1]
    c.check(first["region"] == "us-central1" and
            first["end_reason"] == "pending",
            "attempt 1: %s ended %s" % (first["region"],
                                        first["end_reason"]), jid)
    msg = first.get("message") or ""
    c.check("without starting (pending_timeout 4s)" in msg and
            "not have enough resources" in msg,
            "attempt 1 says %r" % msg, jid)
    c.check(second["region"] == "us-east1" and
            second["end_reason"] == "succeeded",
            "attempt 2: %s ended %s" % (second["region"],
                                        second["end_reason"]), jid)
    c.check(job["interruptions"] == 0 and job["failures"] == 0,
            "counted %d interruptions, %d failures" % (
                job["interruptions"], job["failures"]), jid)
    # The withdrawn Batch job was cancelled in the cloud, not left queued.
    left = [r for r in c.resources(jid, service="batch")
            if r.get("region") == "us-central1" and
            r.get("state") not in ("CANCELLED", "DELETED", "FAILED")
            and not r.get("deleted")]
    c.check(not left, "still in us-central1: %r" % left, jid)
    events = " | ".join(e.get("message") or "" for e in job["events"])
    c.check("placed elsewhere" in events, "events: %s" % events, jid)


def test_job_pending_timeout_wins(cloud):
    c = cloud(speed=SPEED, providers=("batch",),
              regions=("us-central1", "us-east1"),
              scheduler={"pending_timeout": "2s"},
              fake_config={"batch_shortage": "queue",
                           "batch_queue_recheck": 5.0},
              setup=queued_in_central)
    spec = job_spec(providers=["batch"], work=60, spot="never")
    spec["pending_timeout"] = "1h"
    jid = c.submit(spec)
    c.wait_state(jid, "pending", 30)
    time.sleep(6)
    job = c.show(jid)
    c.check(job["state"] == "pending" and len(c.attempts(job)) == 1,
            "state %s with %d attempts after 6 s past the daemon's "
            "pending_timeout" % (job["state"], len(c.attempts(job))), jid)
