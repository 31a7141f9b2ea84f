"""Dependencies (pipelines) through the real gpuqd and gpuq on the
simulated cloud (issue "Dependencies"): after: starts a job once the
jobs it names succeeded, after_any: once they ended; a waiting job's why
names what it waits for; a failed dependency cancels the dependent with
the reason in its events, down the chain; an unknown id is refused at
submit; a multi-document file names earlier documents by name.
"""

import json
import os
import time

from cloudutil import TERMINAL, cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

SPEED = 100


def write(c, text, ext="yaml"):
    path = os.path.join(c.dir, "pipe-%d.%s" % (time.monotonic_ns(), ext))
    with open(path, "w") as f:
        f.write(text)
    return path


def doc(name, work=60, exit_code=0, after=None, after_any=None):
    j = job_spec(providers=["gce"], work=work, ckpt=0, name=name,
                 exit_code=exit_code)
    if after is not None:
        j["after"] = after
    if after_any is not None:
        j["after_any"] = after_any
    return json.dumps(j)


def test_pipeline_middle_fails(cloud):
    """preprocess -> train (exits 1) -> evaluate, named in one file: train
    waits for preprocess and says so, then fails; evaluate is cancelled
    with the reason in its events and never reaches the cloud; a job
    after_any on train still runs."""
    c = cloud(providers=("gce",), speed=SPEED)
    text = "---\n" + "\n---\n".join([
        doc("preprocess", work=300),
        doc("train", exit_code=1, after=["preprocess"]),
        doc("evaluate", after=["train"]),
        doc("report", after_any=["train"]),
    ])
    rc, out, err = c.gpuq("submit", "-q", write(c, text))
    c.check(rc == 0, "submit failed: %s" % err)
    pre, train, ev, rep = [int(x) for x in out.split()]

    job = c.wait_for(train, lambda j: (j.get("why") or "").startswith(
        "waiting for job %d (" % pre), 30, "train's why to name preprocess")
    c.check(job["state"] == "queued", "train is %s" % job["state"])

    c.check(c.wait_state(pre, TERMINAL, 60)["state"] == "succeeded",
            "preprocess did not succeed", pre)
    c.check(c.wait_state(train, TERMINAL, 60)["state"] == "failed",
            "train did not fail", train)
    job = c.wait_state(ev, TERMINAL, 30)
    c.check(job["state"] == "cancelled", "evaluate ended %s" % job["state"],
            ev)
    reason = "cancelled: job %d it waits for failed" % train
    c.check(any(e["message"] == reason for e in job["events"]),
            "evaluate's events: %r" % [e["message"] for e in job["events"]],
            ev)
    c.check(job["why"] == reason, "evaluate's why: %r" % job["why"], ev)
    c.check(job["attempts"] == 0 and not c.resources(ev),
            "evaluate reached the cloud", ev)
    c.check(c.wait_state(rep, TERMINAL, 60)["state"] == "succeeded",
            "report (after_any) did not run", rep)


def test_chain_and_array_dependency(cloud):
    """A cancel travels down a chain (a <- b <- c); a job after an array
    waits for every task and says how many have succeeded."""
    c = cloud(providers=("gce",), speed=SPEED)
    a = c.submit(job_spec(providers=["gce"], work=100000, name="a"))
    rc, out, err = c.gpuq("submit", "-q", "--after", str(a),
                          write(c, doc("b"), "json"))
    c.check(rc == 0, "submit b: %s" % err)
    b = int(out)
    rc, out, err = c.gpuq("submit", "-q", "--after", "%d,%d" % (b, a),
                          write(c, doc("c"), "json"))
    c.check(rc == 0, "submit c: %s" % err)
    cc = int(out)
    c.wait_running(a, 30)
    rc, out, err = c.gpuq("cancel", str(a))
    c.check(rc == 0, "cancel a: %s" % err)
    for jid, dep in ((b, a), (cc, b)):
        job = c.wait_state(jid, TERMINAL, 30)
        c.check(job["state"] == "cancelled", "%d ended %s" % (
            jid, job["state"]), jid)
        msgs = [e["message"] for e in job["events"]]
        c.check(any(m.startswith("cancelled: job ") and
                    m.endswith("was cancelled") for m in msgs),
                "events of %d: %r" % (jid, msgs), jid)

    # An array waiting for a job that was cancelled: every task goes.
    doomed = c.submit(json.loads(doc("doomed", after=[a])) |
                      {"array": {"count": 50, "parallelism": 5}})
    deadline = time.monotonic() + scaled(30)
    while True:
        r = c.request({"op": "list", "state": "all", "limit": 1000,
                       "expand": True})
        tasks = [j for j in r["jobs"] if j.get("array_id") == doomed]
        if tasks and all(t["state"] == "cancelled" for t in tasks):
            break
        c.check(time.monotonic() < deadline, "array %d: %s" % (
            doomed, sorted(set(t["state"] for t in tasks))))
        time.sleep(0.2)
    t = c.show("%d.49" % doomed)
    c.check(t["why"] == "cancelled: job %d it waits for was cancelled" % a
            and t["attempts"] == 0, "task 49: %r" % t["why"])

    arr = c.submit(json.loads(doc("sweep", work=200)) |
                   {"array": {"count": 3, "parallelism": 1}})
    rc, out, err = c.gpuq("submit", "-q", "--after", str(arr),
                          write(c, doc("after-sweep"), "json"))
    c.check(rc == 0, "submit after the array: %s" % err)
    dep = int(out)
    c.wait_for(dep, lambda j: (j.get("why") or "").startswith(
        "waiting for array %d (" % arr), 30, "why naming the array")
    job = c.wait_state(dep, TERMINAL, scaled(90))
    c.check(job["state"] == "succeeded", "after-sweep ended %s" %
            job["state"], dep)
    started = job["created"]
    tasks = [c.show("%d.%d" % (arr, i)) for i in range(3)]
    c.check(all(t["state"] == "succeeded" for t in tasks), "tasks %r" %
            [t["state"] for t in tasks])
    first = min(e["time"] for e in job["events"] if e["to"] == "launching")
    last = max(e["time"] for t in tasks for e in t["events"]
               if e["to"] == "succeeded")
    c.check(first >= last and started > 0, "after-sweep launched at %d, "
            "before the last task ended at %d" % (first, last), dep)


def test_unknown_dependency_refused(cloud):
    """An id that is no job, or a name no earlier document has, is refused
    before anything is queued, naming it."""
    c = cloud(providers=("gce",), speed=SPEED)
    rc, out, err = c.gpuq("submit", "--after", "4242",
                          write(c, doc("x"), "json"))
    c.check(rc != 0 and "no job 4242" in err and "after[0]" in err,
            "unknown --after: rc %d, %r" % (rc, err))
    text = "---\n" + "\n---\n".join([doc("one"),
                                      doc("two", after=["preprocess"])])
    rc, out, err = c.gpuq("submit", write(c, text))
    c.check(rc != 0 and 'named "preprocess"' in err, "unknown name: %r" %
            err)
    c.check(c.list_jobs() == [], "something was queued: %r" %
            c.list_jobs())
