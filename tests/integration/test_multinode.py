"""Multi-node jobs, gangs (issue 13, doc/DESIGN.md "Gangs"), through the
real gpuqd and gpuq against the fake cloud: a 2-node job runs to success
on every service with the env contract on every node; one preempted
node ends the whole attempt, every node of it is deleted and the job
resumes from its checkpoint on a new gang; kill -9 while a 4-node
Compute Engine gang is being created leaves exactly 4 VMs for it.
"""

import time

import pytest

from cloudutil import (CREATE_METHOD, CREATE_PATH, PROVIDERS, TERMINAL,
                       cloud, job_spec, scaled)

assert cloud  # the fixture, imported for pytest

SPEED = 100


def _wait(c, cond, timeout, what, jid=None):
    deadline = time.monotonic() + scaled(timeout)
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            c.fail("%s did not happen within %.0fs" % (what,
                                                       scaled(timeout)), jid)
        time.sleep(0.05)


def gang_spec(provider, nodes=2, **kw):
    return job_spec(providers=[provider], nodes=nodes,
                    command=["torchrun", "train.py"], **kw)


def _runs_of(c, jid, attempt):
    return [r for r in c.work(jid)["resources"]
            if r["attempt"] == str(attempt)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_two_node_job_succeeds(cloud, provider):
    c = cloud(probe=(provider,), speed=SPEED)
    jid = c.submit(gang_spec(provider, work=300))
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    [att] = c.attempts(job)
    c.check(att["nodes"] == 2 and len(att["node_list"]) == 2,
            "attempt nodes %r %r" % (att["nodes"], att["node_list"]), jid)
    c.check(job["nodes"] == 2, "job nodes %r" % job.get("nodes"), jid)
    runs = _runs_of(c, jid, 1)
    c.check(sorted(r["rank"] for r in runs) == [0, 1],
            "ranks of the runs: %r" % [r["rank"] for r in runs], jid)
    for r in runs:
        e = r["env"]
        c.check(e["GPUQ_NUM_NODES"] == "2" and e["WORLD_SIZE"] == "2" and
                e["GPUQ_MAIN_PORT"] == "29500" and
                e["MASTER_PORT"] == "29500", "env %r" % e, jid)
        if provider == "vertex":
            c.check("CLUSTER_SPEC" in e and "TF_CONFIG" in e,
                    "Vertex env %r" % e, jid)
        elif provider == "batch":
            c.check(e["BATCH_TASK_INDEX"] in ("0", "1") and
                    "BATCH_HOSTS_FILE" in e, "Batch env %r" % e, jid)
        else:
            c.check(e["GPUQ_NODE_RANK"] == e["RANK"] == e["NODE_RANK"] ==
                    str(r["rank"]) and e["MASTER_ADDR"] ==
                    e["GPUQ_MAIN_ADDR"], "Compute env %r" % e, jid)
    # Only rank 0 checkpoints.
    c.check([bool(r["checkpoints"]) for r in
             sorted(runs, key=lambda r: r["rank"])] == [True, False],
            "checkpoints by rank", jid)
    if provider == "gce":
        main = [r for r in runs if r["rank"] == 0][0]
        names = sorted(r["name"] for r in c.resources(jid))
        c.check(names == [att["resource"] + "-0", att["resource"] + "-1"],
                "VM names %r" % names, jid)
        c.check(all(r["env"]["MASTER_ADDR"] == main["env"]["MASTER_ADDR"]
                    for r in runs), "main addresses differ", jid)
    c.check(att["gpu_count"] == 1, "gpu_count per node %r" %
            att["gpu_count"], jid)
    # gpuq status shows the gang's GPUs; gpuq show each node.
    rc, out, err = c.gpuq("status", "--all")
    row = [x for x in out.splitlines() if x.split()[:1] == [str(jid)]]
    c.check(rc == 0 and row and "2\u00d7(1xT4)" in row[0],
            "status row %r (%s)" % (row, err), jid)
    rc, out, err = c.gpuq("show", str(jid))
    c.check(rc == 0 and "2\u00d7(1xT4)" in out, "show: %s" % out, jid)
    for rank in (0, 1):
        c.check("#1 node %d: " % rank in out, "show lacks node %d: %s" %
                (rank, out), jid)


# Where one node is preempted: a VM of the gang, a task of the group, a
# replica of the job (as once Vertex's own restarts have run out).
PREEMPT = ("gce", "batch", "vertex")


@pytest.mark.parametrize("provider", PREEMPT)
def test_one_node_preempted_ends_the_gang(cloud, provider):
    need, every = 1500, 100
    c = cloud(probe=(provider,), speed=SPEED)
    jid = c.submit(gang_spec(provider, work=need, ckpt=every,
                             spot="require"))
    c.wait_running(jid, 60, progress=450)
    if provider == "gce":
        first = [r for r in c.resources(jid) if not r.get("deleted")]
        c.check(len(first) == 2, "VMs %r" % [r["name"] for r in first],
                jid)
        victim = [r for r in first if r["name"].endswith("-1")][0]
        c.ctl("/_fake/preempt", {"name": victim["resource"]})
    else:
        [r] = [x for x in c.resources(jid) if not x.get("deleted")]
        first = [r]
        body = {"name": r["resource"], "node": 1}
        if provider == "vertex":
            body["vertex_restart"] = False
        c.ctl("/_fake/preempt", body)
    job = c.wait_state(jid, TERMINAL, 120)
    # The main node ran on until the gang was torn down: its last
    # checkpoint is the one to resume from.
    main = [r for r in _runs_of(c, jid, 1) if r["rank"] == 0][0]
    c.check(main["checkpoints"], "no checkpoint from attempt 1", jid)
    newest = main["checkpoints"][-1]
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    att = c.attempts(job)
    c.check(len(att) == 2 and att[0]["end_reason"] == "preempted",
            "attempts %r" % [(a["number"], a["end_reason"]) for a in att],
            jid)
    # The lookup runs as the attempt ends, before its nodes are deleted:
    # the main node may save once more in between.
    c.check(att[1]["resumed_from"] in main["checkpoints"][-2:],
            "resumed from %r, want %r" % (att[1]["resumed_from"], newest),
            jid)
    newest = att[1]["resumed_from"]
    # Every node of the first attempt is gone (Batch: the job is ended).
    if provider == "gce":
        left = [r["name"] for r in c.resources(jid)
                if r["name"].startswith(att[0]["resource"] + "-") and
                not r.get("deleted")]
        c.check(not left, "nodes of attempt 1 left: %r" % left, jid)
    runs1 = _runs_of(c, jid, 1)
    c.check(all(r["state"] != "running" for r in runs1),
            "a node of attempt 1 still runs: %r" % [
                (r["rank"], r["state"]) for r in runs1], jid)
    runs2 = _runs_of(c, jid, 2)
    c.check(sorted(r["rank"] for r in runs2) == [0, 1],
            "attempt 2 ranks %r" % [r["rank"] for r in runs2], jid)
    c.check(all(r["resume_from"] == newest for r in runs2),
            "attempt 2 nodes resumed from %r" % [
                r["resume_from"] for r in runs2], jid)


def test_batch_job_running_on_without_a_task_is_lost(cloud):
    """Should Batch keep a job RUNNING after one of its tasks failed
    (fake batch_group_fail "task"), gpuqd does not wait for the others:
    the gang is lost, its job deleted, and the job runs again whole."""
    c = cloud(probe=("batch",), speed=SPEED,
              fake_config={"batch_group_fail": "task"})
    jid = c.submit(gang_spec("batch", work=1500, ckpt=100, spot="require"))
    c.wait_running(jid, 60, progress=300)
    [r] = [x for x in c.resources(jid) if not x.get("deleted")]
    c.ctl("/_fake/preempt", {"name": r["resource"], "node": 1})
    # The other node is stopped (its job deleted) well before its work
    # could have ended on its own.
    c.wait_for(jid, lambda j: j["attempts"] >= 2, 60, "a second attempt")
    _wait(c, lambda: all(x["state"] != "running"
                         for x in _runs_of(c, jid, 1)), 5,
          "attempt 1's other node stopped", jid)
    c.check(max(x["progress"] for x in _runs_of(c, jid, 1)) < 1400,
            "attempt 1 ran to its end", jid)
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    att = c.attempts(job)
    c.check(len(att) == 2 and att[0]["end_reason"] == "lost" and
            "tasks failed while the others ran" in att[0]["message"],
            "attempts %r" % [(a["end_reason"], a["message"]) for a in att],
            jid)
    c.check(all(r["state"] != "running" for r in _runs_of(c, jid, 1)),
            "a node of attempt 1 still runs", jid)


def test_a2_gang_is_placed_compactly(cloud):
    """A2 machines take a compact placement policy (API-NOTES N.3): one
    for the gang, COLLOCATED with vmCount 2, made before the VMs and
    placing both; deleted once the gang's VMs are gone."""
    c = cloud(probe=("gce",), speed=SPEED)
    jid = c.submit(gang_spec("gce", gpu="nvidia-tesla-a100", work=400,
                             spot="never"))
    c.wait_running(jid, 60)
    [att] = c.attempts(c.show(jid))
    pols = c.ctl("/_fake/policies")["policies"]
    c.check(len(pols) == 1 and pols[0]["name"] == att["resource"] + "-pack"
            and pols[0]["groupPlacementPolicy"] == {
                "collocation": "COLLOCATED", "vmCount": 2} and
            sorted(pols[0]["users"]) == [att["resource"] + "-0",
                                         att["resource"] + "-1"],
            "placement policies %r" % pols, jid)
    c.check(att["machine_type"].startswith("a2-"), "machine %r" %
            att["machine_type"], jid)
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    _wait(c, lambda: not c.ctl("/_fake/policies")["policies"], 30,
          "the placement policy deleted", jid)
    c.check(len(c.requests("compute.resourcePolicies.insert")) == 1,
            "policy inserts %r" % c.requests(
                "compute.resourcePolicies.insert"), jid)


def test_kill9_while_a_gce_gang_is_created(cloud):
    """The third insert of a 4-node gang is slowed; gpuqd is killed while
    it waits (nodes 0 and 1 exist, 2 is in flight, 3 not asked for). The
    restarted gpuqd creates the missing ones under the same request ids:
    exactly 4 VMs for the attempt, and the job succeeds."""
    c = cloud(probe=("gce",), speed=SPEED)
    c.fault(method="POST", path=CREATE_PATH["gce"], latency_ms=3000,
            count=1, skip=2)
    jid = c.submit(gang_spec("gce", nodes=4, work=200))
    _wait(c, lambda: (c.counters().get(CREATE_METHOD["gce"]) or 0) >= 3,
          30, "the third insert reaching the fake", jid)
    before = sorted(r["name"] for r in c.resources(jid))
    c.check(len(before) == 2 and c.show(jid)["state"] == "launching",
            "before the kill: VMs %r, job %s" % (before,
                                                c.show(jid)["state"]), jid)
    c.kill9()
    c.start()
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    time.sleep(scaled(1))
    att = c.attempts(job)
    c.check(len(att) == 1, "%d attempts" % len(att), jid)
    names = sorted(r["name"] for r in c.resources(jid))
    want = sorted("%s-%d" % (att[0]["resource"], i) for i in range(4))
    c.check(names == want, "VMs %r, want %r" % (names, want), jid)


@pytest.mark.parametrize("provider", ("gce", "batch"))
def test_cancel_deletes_every_node(cloud, provider):
    c = cloud(probe=(provider,), speed=SPEED)
    jid = c.submit(gang_spec(provider, work=100000))
    c.wait_running(jid, 60, progress=10)
    rc, out, err = c.gpuq("cancel", str(jid))
    c.check(rc == 0, "gpuq cancel: %s" % err, jid)
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "cancelled", "ended %s" % job["state"], jid)
    _wait(c, lambda: all(r["state"] != "running"
                         for r in _runs_of(c, jid, 1)), 30,
          "every node stopped", jid)
    if provider == "gce":
        _wait(c, lambda: all(r.get("deleted") for r in c.resources(jid)),
              30, "every VM deleted", jid)
