"""A preempted Compute Engine VM ends its attempt while it is still
STOPPING (doc/DESIGN.md C.4, issue 18): Google records the
compute.instances.preempted operation when the stop begins, and gpuqd
reads a STOPPING VM's zone operations once, so the job is placed again
without waiting for TERMINATED (up to ~30 s on Google; here never: the
fake's stop_seconds is made longer than the test).
"""

from cloudutil import cloud, job_spec

assert cloud  # the fixture, imported for pytest

SPEED = 100
LONG = 10 ** 7          # simulated seconds: longer than the test


def test_preempted_while_stopping_is_relaunched(cloud):
    c = cloud(probe=("gce",), speed=SPEED, providers=("gce",),
              fake_config={"stop_seconds": LONG})
    jid = c.submit(job_spec(providers=["gce"], work=LONG, spot="require"))
    job = c.wait_for(jid, lambda j: j["state"] == "running", 60, "running")
    [first] = [r for r in c.resources(jid) if r["state"] == "RUNNING"]
    c.ctl("/_fake/preempt", {"name": first["name"]})

    job = c.wait_for(jid, lambda j: j["state"] == "running" and
                     len(c.attempts(j)) == 2, 60, "running again")
    a1 = c.attempts(job)[0]
    c.check(a1["end_reason"] == "preempted", "attempt 1 ended %r, want "
            "preempted" % a1["end_reason"], jid)
    # The first VM never reached TERMINATED: the relaunch did not wait
    # for it (gpuqd deletes it once the attempt has ended).
    [vm] = [r for r in c.resources(jid) if r["name"] == first["name"]]
    c.check(vm["state"] == "STOPPING", "the preempted VM is %s, want "
            "STOPPING (or deleted while stopping)" % vm["state"], jid)
    # One zoneOperations.list for the stopping VM, not one per poll.
    ops = c.requests("compute.zoneOperations.list")
    c.check(1 <= len(ops) <= 2, "%d zoneOperations.list calls for one "
            "stopping VM" % len(ops), jid)
