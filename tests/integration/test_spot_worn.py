"""A job that Spot has interrupted three quarters of its
max_interruptions leaves Spot for good and finishes on capacity that is
not preempted, instead of failing at max_interruptions (doc/DESIGN.md
"Leaving Spot after many interruptions")."""

import urllib.error

from cloudutil import TERMINAL, cloud, job_spec  # noqa: F401

SPEED = 20


def preempt_spot(c, jid):
    n = 0
    for r in c.resources(jid, service="compute"):
        if r["deleted"] or not r["spot"] or r["state"] != "RUNNING":
            continue
        try:
            c.ctl("/_fake/preempt", {"name": r["name"]})
            n += 1
        except urllib.error.HTTPError:
            pass
    return n


def test_worn_out_on_spot_finishes_on_standard(cloud):
    c = cloud(providers=("gce",), speed=SPEED,
              scheduler={"backoff_base": "1s", "backoff_max": "2s"})
    # max_interruptions 4: Spot is left after 3.
    jid = c.submit(job_spec(providers=["gce"], work=40 * SPEED,
                            ckpt=2 * SPEED, name="worn", spot="allow",
                            max_interruptions=4))
    for k in range(3):
        c.wait_for(jid, lambda j: j["state"] == "running" and
                   (j.get("current") or {}).get("spot"), 60,
                   "running on Spot (%d)" % (k + 1))
        c.wait_for(jid, lambda j: preempt_spot(c, jid) > 0 or
                   j["interruptions"] > k, 30, "preempted")
        c.wait_for(jid, lambda j: j["interruptions"] > k, 60,
                   "interruption %d counted" % (k + 1))
    job = c.wait_state(jid, TERMINAL, 180)
    c.check(job["state"] == "succeeded", "ended %s (%r)" % (
        job["state"], job.get("message")), jid)
    att = c.attempts(job)
    c.check(len(att) >= 4 and all(a["spot"] for a in att[:3]) and
            not any(a["spot"] for a in att[3:]),
            "attempts %r: want 3 on Spot, then none" % [
                (a["spot"], a.get("end_reason")) for a in att], jid)
