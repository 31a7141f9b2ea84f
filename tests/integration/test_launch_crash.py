"""A launch interrupted by kill -9 never leaves two cloud resources for
one attempt (issue 12, "Crashes and limits"), on every service and at
several points of the launch: before the create reaches the service (the
call is dropped), while it is in flight (it lands after gpuqd has
restarted and listed), and just after the service answered it (before
or as the store records the answer). gpuqd is restarted at once, not
after the slow call has landed, so the restarted daemon's first look
races the create of the one that died.
"""

import time

import pytest

from cloudutil import (CREATE_METHOD, CREATE_PATH, PROVIDERS, TERMINAL,
                       cloud, job_spec, scaled)

assert cloud  # the fixture, imported for pytest

SPEED = 100
POINTS = ("before-request", "in-flight", "after-reply")


def _wait(c, cond, timeout, what, jid=None):
    deadline = time.monotonic() + scaled(timeout)
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            c.fail("%s did not happen within %.0fs" % (what,
                                                       scaled(timeout)), jid)
        time.sleep(0.02)


def _per_attempt(c, jid):
    """{attempt label: [resource names]} of job JID on the fake."""
    out = {}
    for r in c.resources(jid):
        lab = r.get("labels") or {}
        out.setdefault(lab.get("gpuq-resource", r["name"]), []).append(
            r["name"])
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("point", POINTS)
def test_kill9_during_launch_one_resource(cloud, provider, point):
    c = cloud(probe=(provider,), speed=SPEED)
    if point == "before-request":
        c.fault(method="POST", path=CREATE_PATH[provider], latency_ms=2000,
                count=1, drop=True)
    elif point == "in-flight":
        c.fault(method="POST", path=CREATE_PATH[provider], latency_ms=4000,
                count=1)
    jid = c.submit(job_spec(providers=[provider], work=200))
    if point == "after-reply":
        _wait(c, lambda: c.creates(provider), 30, "the create answered",
              jid)
    else:
        _wait(c, lambda: c.counters().get(CREATE_METHOD[provider]), 30,
              "the create call reaching the fake", jid)
    c.kill9()
    c.start()
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    # Let anything still in flight land, then count.
    time.sleep(scaled(1))
    per = _per_attempt(c, jid)
    c.check(len(per) == 1 and all(len(v) == 1 for v in per.values()),
            "resources per attempt, want exactly one: %r" % per, jid)
