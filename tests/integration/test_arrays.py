"""Job arrays (sweeps) through the real gpuqd and gpuq on the simulated
cloud (issue "Job arrays"): one submit makes one id and COUNT tasks,
each run on its own with its index in GPUQ_TASK_INDEX and
BATCH_TASK_INDEX; at most `parallelism` of them are in the cloud at
once; `gpuq status` folds the array into one line (--expand lists the
tasks); show, cancel, hold and release take the array's id or one task's
ID.TASK.

Numbers: the fake runs SPEED simulated seconds per real second; a task
of WORK simulated seconds runs WORK / SPEED real seconds.
"""

import re
import time

import pytest

from cloudutil import PROVIDERS, TERMINAL, cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

SPEED = 100


def tasks_of(c, aid):
    """Every task row of array AID (list op, expanded), by index."""
    rows = []
    after = None
    while True:
        req = {"op": "list", "state": "all", "limit": 1000, "expand": True}
        if after is not None:
            req["after"] = after
        r = c.request(req)
        c.check(r.get("ok"), "list failed: %r" % r)
        rows += [j for j in r["jobs"] if j.get("array_id") == aid]
        if "next" not in r:
            break
        after = r["next"]
    return sorted(rows, key=lambda j: j["task_index"])


def live_resources(c):
    """Our fake resources whose newest run is running or starting."""
    out = []
    for r in c.resources():
        runs = r.get("runs") or []
        if not r.get("deleted") and runs and \
                runs[-1]["state"] in ("pending", "running"):
            out.append(r)
    return out


def test_array_parallelism_and_index(cloud):
    """An array of 20 with parallelism 3: never more than 3 tasks in the
    cloud at once (the fake's resources, sampled all along), every task
    runs once to success and saw its own index and the count."""
    c = cloud(providers=("gce",), speed=SPEED)
    spec = job_spec(providers=["gce"], work=60, ckpt=0, name="sweep",
                    array={"count": 20, "parallelism": 3})
    rc, out, err = c.gpuq("submit", spec_file(c, spec))
    c.check(rc == 0, "submit failed: %s" % err)
    m = re.search(r"submitted array (\d+): tasks \1\.0 to \1\.19", out)
    c.check(m is not None, "submit said %r" % out)
    aid = int(m.group(1))

    most = 0
    deadline = time.monotonic() + scaled(180)
    while True:
        live = live_resources(c)
        most = max(most, len(live))
        c.check(len(live) <= 3, "%d tasks in the cloud at once: %s" % (
            len(live), [r["name"] for r in live]))
        rows = tasks_of(c, aid)
        if len(rows) == 20 and all(t["state"] in TERMINAL for t in rows):
            break
        c.check(time.monotonic() < deadline, "array did not end: %s" %
                sorted(set(t["state"] for t in rows)))
        time.sleep(0.1)
    c.check(most == 3, "at most %d ran at once; parallelism 3 should "
            "reach 3" % most)
    c.check(all(t["state"] == "succeeded" for t in rows),
            "tasks ended %s" % [(t["task_index"], t["state"]) for t in rows])

    seen = {}
    for t in rows:
        runs = c.work(t["id"])["resources"]
        c.check(len(runs) == 1, "task %d.%d ran %d times" % (
            aid, t["task_index"], len(runs)))
        env = runs[0]["runs"][0]["env"] if "runs" in runs[0] else \
            runs[0]["env"]
        seen[t["task_index"]] = env
    c.check(sorted(seen) == list(range(20)), "tasks seen: %s" % sorted(seen))
    for i, env in seen.items():
        c.check(env.get("GPUQ_TASK_INDEX") == str(i) and
                env.get("BATCH_TASK_INDEX") == str(i) and
                env.get("GPUQ_TASK_COUNT") == "20" and
                env.get("BATCH_TASK_COUNT") == "20",
                "task %d saw %r" % (i, {k: v for k, v in env.items()
                                        if "TASK" in k}))

    # Folded: one line, the whole array; the summary counts tasks.
    rc, out, err = c.gpuq("status", "--all")
    c.check(rc == 0, "status failed: %s" % err)
    lines = [ln for ln in out.splitlines() if ln.startswith("%d" % aid)]
    c.check(len(lines) == 1 and lines[0].startswith("%d[0-19]" % aid) and
            "20 succeeded" in lines[0], "status showed %r" % out)
    rc, out, err = c.gpuq("status", "--all", "--expand")
    c.check(rc == 0 and all(("%d.%d " % (aid, i)) in out
                            for i in range(20)),
            "status --expand showed %r" % out)
    job = c.show(aid)
    c.check(job["array"]["count"] == 20 and
            job["array"]["parallelism"] == 3 and
            job["array"]["states"] == {"succeeded": 20} and
            len(job["tasks"]) == 20, "show %d: %r" % (aid, {
                k: job.get(k) for k in ("array", "state")}))
    one = c.show("%d.7" % aid)
    c.check(one["array_id"] == aid and one["task_index"] == 7 and
            one["state"] == "succeeded", "show %d.7: %r" % (aid, one))


def spec_file(c, spec):
    import json
    import os
    path = os.path.join(c.dir, "job-%d.json" % time.monotonic_ns())
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def test_array_cancel_hold_release(cloud):
    """cancel 42.3 cancels one task; hold and release of the array move
    every queued task; cancel 42 cancels every task, those in the cloud
    through cancelling, and deletes their resources."""
    c = cloud(providers=("gce",), speed=SPEED)
    spec = job_spec(providers=["gce"], work=100000, ckpt=0, name="sweep",
                    array={"count": 6, "parallelism": 2})
    aid = c.submit(spec, hold=True)
    rows = tasks_of(c, aid)
    c.check([t["state"] for t in rows] == ["held"] * 6, "submitted held: "
            "%s" % [t["state"] for t in rows])

    rc, out, err = c.gpuq("cancel", "%d.3" % aid)
    c.check(rc == 0 and "cancelled job %d.3" % aid in out, "cancel one: "
            "%r %r" % (out, err))
    rc, out, err = c.gpuq("release", str(aid))
    c.check(rc == 0 and "(5 tasks)" in out, "release: %r %r" % (out, err))
    deadline = time.monotonic() + scaled(60)
    while True:
        states = [t["state"] for t in tasks_of(c, aid)]
        if states.count("running") == 2:
            break
        c.check(time.monotonic() < deadline, "never 2 running: %s" % states)
        time.sleep(0.2)
    c.check(states[3] == "cancelled", "task 3 is %s" % states[3])

    rc, out, err = c.gpuq("hold", str(aid))
    c.check(rc == 0, "hold: %r" % err)
    states = [t["state"] for t in tasks_of(c, aid)]
    c.check(states.count("held") == 3, "after hold: %s" % states)

    rc, out, err = c.gpuq("cancel", str(aid))
    c.check(rc == 0 and "job %d" % aid in out, "cancel all: %r %r" % (
        out, err))
    deadline = time.monotonic() + scaled(60)
    while True:
        rows = tasks_of(c, aid)
        if all(t["state"] == "cancelled" for t in rows):
            break
        c.check(time.monotonic() < deadline, "not all cancelled: %s" %
                [t["state"] for t in rows])
        time.sleep(0.2)
    deadline = time.monotonic() + scaled(30)
    while live_resources(c):
        c.check(time.monotonic() < deadline, "resources left running: %s" %
                [r["name"] for r in live_resources(c)])
        time.sleep(0.2)
    rc, out, err = c.gpuq("cancel", str(aid))
    c.check(rc != 0 and "nothing to cancel" in err, "cancel again: %r" % err)
    rc, out, err = c.gpuq("show", "%d.6" % aid)
    c.check(rc != 0 and "no task %d.6" % aid in err, "show 6: %r" % err)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_array_task_recovers_on_its_own(cloud, provider):
    """On each service, every task of an array sees its index; one task
    preempted is relaunched alone, resumes from its own checkpoint with
    the same index, and the others keep their single attempt."""
    c = cloud(probe=(provider,), speed=SPEED)
    spec = job_spec(providers=[provider], work=1500, ckpt=100,
                    name="sweep", spot="require",
                    array={"count": 3, "parallelism": 3})
    aid = c.submit(spec)
    victim = c.show("%d.1" % aid)["id"]
    c.wait_running(victim, 60, progress=450)
    [r] = [x for x in c.resources(victim)]
    body = {"name": r["resource"]}
    if provider == "vertex":
        body["vertex_restart"] = False
    c.ctl("/_fake/preempt", body)
    deadline = time.monotonic() + scaled(120)
    while True:
        rows = tasks_of(c, aid)
        if all(t["state"] in TERMINAL for t in rows):
            break
        c.check(time.monotonic() < deadline, "array did not end: %s" %
                [t["state"] for t in rows])
        time.sleep(0.2)
    c.check([t["state"] for t in rows] == ["succeeded"] * 3,
            "tasks ended %s" % [t["state"] for t in rows])
    c.check([t["attempts"] for t in rows] == [1, 2, 1],
            "attempts per task %s" % [t["attempts"] for t in rows])
    for t in rows:
        runs = c.work(t["id"])["resources"]
        for run in runs:
            c.check(run["env"].get("GPUQ_TASK_INDEX") ==
                    str(t["task_index"]) and
                    run["env"].get("GPUQ_TASK_COUNT") == "3",
                    "task %d.%d attempt %s saw %r" % (
                        aid, t["task_index"], run["attempt"],
                        {k: v for k, v in run["env"].items()
                         if "TASK" in k}))
    second = [x for x in c.work(victim)["resources"] if x["attempt"] == "2"]
    c.check(len(second) == 1 and second[0]["resume_from"] and
            "/%d/" % victim in second[0]["resume_from"],
            "task 1's second run resumed from %r" % (
                second and second[0]["resume_from"]))


def test_wait_for_an_array(cloud):
    """gpuq wait on an array's id waits for every task and says so in
    one line: the worst state of its tasks, their cost together; a
    failed task makes the exit status 1."""
    c = cloud(providers=("batch",), speed=SPEED)
    spec = job_spec(providers=["batch"], work=60, ckpt=0, name="w",
                    array={"count": 4, "parallelism": 4})
    rc, out, err = c.gpuq("submit", spec_file(c, spec))
    aid = int(re.search(r"submitted array (\d+)", out).group(1))
    rc, out, err = c.gpuq("wait", str(aid), timeout=scaled(180))
    rows = tasks_of(c, aid)
    c.check(rc == 0 and all(t["state"] == "succeeded" for t in rows),
            "wait on array %d: rc %d, %r; tasks %r" % (
                aid, rc, out, [t["state"] for t in rows]))
    c.check(out.startswith("job %d w: succeeded" % aid) and
            out.count("\n") == 1, "wait printed %r" % out)
    total = sum(t["cost_usd"] for t in rows)
    c.check(("$%.2f" % total) in out, "wait printed %r, tasks cost %.2f" %
            (out, total))

    bad = job_spec(providers=["batch"], work=30, ckpt=0, name="wb",
                   exit_code=3, max_failures=0,
                   array={"count": 2, "parallelism": 2})
    rc, out, err = c.gpuq("submit", spec_file(c, bad))
    bid = int(re.search(r"submitted array (\d+)", out).group(1))
    rc, out, err = c.gpuq("wait", str(bid), timeout=scaled(180))
    c.check(rc == 1 and out.startswith("job %d wb: failed" % bid),
            "wait on a failing array: rc %d, %r" % (rc, out))
