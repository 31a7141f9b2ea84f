"""Capacity kinds and flex-start (issue 16, doc/DESIGN.md "Capacity
kinds"), through the real gpuqd and gpuq against the simulated cloud: a
job that allows only flex runs on flex-start on each service, with the
fields Google documents (API-NOTES K); a flex request the cloud never
fulfils is withdrawn after the job's flex_wait and the job runs on
standard capacity, its attempt saying why; `gpuq plan` shows the kind of
every offer and why flex is left out.
"""

import json

from cloudutil import TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest

SPEED = 50


def body_of(c, service, jid):
    """The create body the fake accepted for job JID on SERVICE."""
    svc = {"gce": "compute"}.get(service, service)
    for b in reversed(c.ctl("/_fake/create_bodies?service=" +
                            svc)["bodies"]):
        body = b["body"]
        if body.get("labels", {}).get("gpuq-job") == str(jid) or \
                (body.get("allocationPolicy") or {}).get("labels", {}).get(
                    "gpuq-job") == str(jid):
            return body
    c.fail("no %s create of job %s reached the fake" % (service, jid), jid)
    return None


def flex_fields(c, service, body, jid):
    if service == "vertex":
        s = body["jobSpec"]["scheduling"]
        c.check(s["strategy"] == "FLEX_START" and
                s["maxWaitDuration"].endswith("s") and
                s["timeout"].endswith("s"), "vertex scheduling %r" % s, jid)
    elif service == "batch":
        pol = body["allocationPolicy"]["instances"][0]["policy"]
        ts = body["taskGroups"][0]["taskSpec"]
        c.check(pol["provisioningModel"] == "FLEX_START" and
                ts["maxRunDuration"].endswith("s"),
                "batch policy %r, taskSpec maxRunDuration %r" % (
                    pol, ts.get("maxRunDuration")), jid)
    else:
        s = body["scheduling"]
        c.check(s["provisioningModel"] == "FLEX_START" and
                int(s["maxRunDuration"]["seconds"]) <= 7 * 86400 and
                int(body["params"]["requestValidForDuration"]["seconds"]) <=
                7200, "compute scheduling %r params %r" % (
                    s, body.get("params")), jid)


def test_flex_only_runs_on_flex_on_each_service(cloud):
    c = cloud(speed=SPEED, providers=("gce", "batch", "vertex"),
              fake_config={"flex_delay": 60})
    ids = {}
    for p in ("gce", "batch", "vertex"):
        ids[p] = c.submit(job_spec(providers=[p], gpu="nvidia-l4", work=60,
                                   ckpt=30, capacity=["flex"],
                                   name="flex-" + p))
    for p, jid in ids.items():
        job = c.wait_state(jid, TERMINAL, 120)
        c.check(job["state"] == "succeeded", "%s job ended %s (why %r)" % (
            p, job["state"], job.get("why")), jid)
        atts = c.attempts(job)
        c.check(len(atts) == 1 and atts[0]["provider"] == p and
                atts[0]["capacity"] == "flex" and not atts[0]["spot"],
                "%s attempts %r" % (p, atts), jid)
        flex_fields(c, p, body_of(c, p, jid), jid)
        rc, out, err = c.gpuq("show", str(jid))
        c.check(rc == 0 and " flex " in out, "gpuq show: %s" % out, jid)
    # history says which kind of capacity each attempt ran on, in its
    # JSON and in the WHERE column.
    rc, out, err = c.gpuq("history", "--json")
    assert rc == 0, err
    hist = {j["id"]: j for j in json.loads(out)}
    rc, table, err = c.gpuq("history")
    assert rc == 0, err
    for p, jid in ids.items():
        atts = hist[jid]["attempts"]
        c.check([a["capacity"] for a in atts] == ["flex"],
                "history attempts %r" % atts, jid)
        row = [ln for ln in table.splitlines() if "flex-" + p in ln]
        c.check(len(row) == 1 and " flex" in row[0].split("flex-" + p)[1],
                "history row %r" % row, jid)


def test_flex_never_fulfilled_is_withdrawn(cloud):
    # gpuqd's flex_wait runs on the wall clock, the fake's request
    # validity (flex_wait + 10 min) on its own: slow enough that gpuqd
    # withdraws the request first.
    c = cloud(speed=5, providers=("gce",),
              fake_config={"flex_fail": True})
    # a2: flex-start is 53 % off on-demand, so flex ranks first.
    jid = c.submit(job_spec(providers=["gce"], gpu="nvidia-tesla-a100",
                            work=60, ckpt=30, flex_wait="1m",
                            capacity=["flex", "standard"]))
    job = c.wait_state(jid, TERMINAL, 180)
    c.check(job["state"] == "succeeded", "ended %s (why %r)" % (
        job["state"], job.get("why")), jid)
    atts = c.attempts(job)
    c.check(len(atts) == 2, "%d attempts, want 2: %r" % (len(atts), atts),
            jid)
    first, second = atts[0], atts[1]
    msg = first.get("message") or ""
    c.check(first["capacity"] == "flex" and
            first["end_reason"] == "pending" and
            "flex-start request" in msg and
            "not fulfilled within flex_wait 1m" in msg,
            "attempt 1: %s ended %s: %r" % (first["capacity"],
                                            first["end_reason"], msg), jid)
    c.check(second["capacity"] == "standard" and
            second["end_reason"] == "succeeded",
            "attempt 2: %s ended %s" % (second["capacity"],
                                        second["end_reason"]), jid)
    c.check(job["interruptions"] == 0 and job["failures"] == 0,
            "counted %d interruptions, %d failures" % (
                job["interruptions"], job["failures"]), jid)
    events = " | ".join(e.get("message") or "" for e in job["events"])
    c.check("flex-start request" in events and "not fulfilled" in events,
            "events: %s" % events, jid)


def plan(c, spec):
    path = "%s/plan-%s.json" % (c.dir, spec["name"])
    with open(path, "w") as f:
        json.dump(spec, f)
    rc, out, err = c.gpuq("plan", "--json", path)
    c.check(rc == 0, "gpuq plan --json: rc %d %s" % (rc, err))
    rc, text, err = c.gpuq("plan", "--all", path)
    c.check(rc == 0, "gpuq plan: rc %d %s" % (rc, err))
    return json.loads(out), text


def test_plan_shows_kinds(cloud):
    c = cloud(providers=("gce", "vertex"))
    p, text = plan(c, job_spec(gpu="nvidia-tesla-a100", name="a100"))
    kinds = {o["capacity"] for o in p["offers"]}
    c.check({"spot", "flex", "standard"} <= kinds, "kinds %r" % kinds)
    for o in p["offers"]:
        c.check((o["capacity"] == "spot") == o["spot"], "offer %r" % o)
    flex = [o for o in p["offers"] if o["capacity"] == "flex"]
    c.check(all(o["lambda"] == 0 for o in flex), "flex λ: %r" % flex)
    c.check(any(" flex " in ln for ln in text.splitlines()),
            "no flex row in:\n%s" % text)

    # A T4 on N1 is sold as flex-start by neither service.
    p, text = plan(c, job_spec(name="t4", capacity=["flex", "standard"]))
    c.check(all(o["capacity"] == "standard" for o in p["offers"]),
            "offers %r" % p["offers"])
    why = {(k["capacity"], k.get("provider")): k["reason"]
           for k in p["kinds_excluded"]}
    c.check(why.get(("flex", "gce")) == "not offered by this service for "
            "this machine type" and why.get(("flex", "vertex")) ==
            "not offered by Vertex AI for this GPU", "kinds %r" % why)
    c.check(why.get(("spot", None)) == "job disallows", "kinds %r" % why)
    c.check("flex: not offered by Vertex AI for this GPU (vertex)" in text
            and "spot: job disallows" in text, "plan text:\n%s" % text)
