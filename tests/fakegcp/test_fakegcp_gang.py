"""Multi-node jobs on the fake (doc/DESIGN.md "Gangs", API-NOTES N):
Vertex AI worker pools with CLUSTER_SPEC and TF_CONFIG on every replica,
Cloud Batch task groups of several tasks with a hosts file, several
Compute Engine VMs with the main node's address; only rank 0 writes
checkpoints, and one node's end ends a Batch or Vertex gang."""
import json

from fakegcp_fixtures import batch_body, env, instance_body, vertex_body

V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
Z = "/compute/v1/projects/gpuq-demo/zones/us-central1-a/instances"


def _runs(gcp, name):
    for r in gcp.ctl("/_fake/resources")["resources"]:
        if r["name"] == name or r["resource"].endswith("/" + name):
            return r["runs"]
    raise AssertionError("no resource %s" % name)


def _ckpts(gcp, bucket, prefix):
    objs = gcp.get("/storage/v1/b/%s/o?prefix=%s" % (bucket, prefix))[1]
    return [o["name"] for o in objs.get("items") or []]


def test_vertex_worker_pools_get_cluster_spec(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    b = vertex_body("g1", env("g1"))
    main = b["jobSpec"]["workerPoolSpecs"][0]
    rest = json.loads(json.dumps(main))
    rest["replicaCount"] = "2"
    b["jobSpec"]["workerPoolSpecs"].append(rest)
    st, j, _ = gcp.post(V, b)
    assert st == 200, j
    jid = j["name"].rsplit("/", 1)[1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_SUCCEEDED", timeout=10)
    runs = _runs(gcp, jid)
    assert sorted(r["rank"] for r in runs) == [0, 1, 2]
    tasks = []
    for r in runs:
        cs = json.loads(r["env"]["CLUSTER_SPEC"])
        tf = json.loads(r["env"]["TF_CONFIG"])
        assert len(cs["cluster"]["workerpool0"]) == 1
        assert len(cs["cluster"]["workerpool1"]) == 2
        assert cs["environment"] == "cloud"
        assert tf["cluster"]["chief"] == cs["cluster"]["workerpool0"]
        assert tf["cluster"]["worker"] == cs["cluster"]["workerpool1"]
        tasks.append((cs["task"]["type"], cs["task"]["index"],
                      tf["task"]["type"]))
    assert sorted(tasks) == [("workerpool0", 0, "chief"),
                             ("workerpool1", 0, "worker"),
                             ("workerpool1", 1, "worker")]
    # Only the main node checkpoints.
    ranks = {r["rank"]: r for r in runs}
    assert ranks[0]["checkpoints"] and not ranks[1]["checkpoints"] and \
        not ranks[2]["checkpoints"]


def test_batch_task_group_with_hosts_file(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    b = batch_body(env("g2", FAKEGCP_WORK_SECONDS=100000))
    tg = b["taskGroups"][0]
    tg.update(taskCount="2", parallelism="2", taskCountPerNode="1",
              requireHostsFile=True, permissiveSsh=True)
    st, j, _ = gcp.post(B + "?jobId=g2", b)
    assert st == 200, j
    gcp.wait_for(lambda: gcp.get(B + "/g2")[1]["status"]["state"] ==
                 "RUNNING", timeout=10)
    gcp.wait_for(lambda: len(_runs(gcp, "g2")) == 2, timeout=10)
    runs = _runs(gcp, "g2")
    assert sorted(r["env"]["BATCH_TASK_INDEX"] for r in runs) == ["0", "1"]
    assert all(r["env"]["BATCH_TASK_COUNT"] == "2" for r in runs)
    assert all(r["env"]["BATCH_HOSTS_FILE"] for r in runs)
    # One node preempted: no task retry, the job fails, both stop.
    gcp.ctl("/_fake/preempt", {"name": "g2", "node": 1})
    j = gcp.get(B + "/g2")[1]
    assert j["status"]["state"] == "FAILED"
    assert "task with index 1 failed" in \
        j["status"]["statusEvents"][-1]["description"]
    assert all(r["state"] != "running" for r in _runs(gcp, "g2"))


def test_batch_gang_checkpoints_only_from_rank_0(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    b = batch_body(env("g3"))
    b["taskGroups"][0].update(taskCount="3", parallelism="3",
                              requireHostsFile=True)
    assert gcp.post(B + "?jobId=g3", b)[0] == 200
    gcp.wait_for(lambda: gcp.get(B + "/g3")[1]["status"]["state"] ==
                 "SUCCEEDED", timeout=10)
    runs = _runs(gcp, "g3")
    assert len(runs) == 3 and all(r["state"] == "done" for r in runs)
    assert [bool(r["checkpoints"]) for r in
            sorted(runs, key=lambda r: r["rank"])] == [True, False, False]
    assert _ckpts(gcp, "ck", "jobs/g3/checkpoints/")


def test_compute_nodes_get_the_main_address(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    e = env("g4", GPUQ_NUM_NODES=2)
    b0 = instance_body("n-0", env=dict(e, GPUQ_NODE_RANK="0"))
    st, op, _ = gcp.post(Z, b0)
    assert st == 200, op
    ip = gcp.get(Z + "/n-0")[1]["networkInterfaces"][0]["networkIP"]
    b1 = instance_body("n-1", env=dict(e, GPUQ_NODE_RANK="1"))
    b1["metadata"]["items"].append({"key": "gpuq-main-addr", "value": ip})
    assert gcp.post(Z, b1)[0] == 200
    gcp.wait_for(lambda: len(_runs(gcp, "n-0")) == 1 and
                 len(_runs(gcp, "n-1")) == 1, timeout=10)
    r0, r1 = _runs(gcp, "n-0")[0], _runs(gcp, "n-1")[0]
    assert r0["env"]["MASTER_ADDR"] == ip == r1["env"]["GPUQ_MAIN_ADDR"]
    assert (r0["rank"], r1["rank"]) == (0, 1)


R = "/compute/v1/projects/gpuq-demo/regions/us-central1"


def test_compact_placement_policy(gcp):
    """resourcePolicies.insert answers a regional Operation; VMs name the
    policy in resourcePolicies; it takes vmCount VMs, no more, and cannot
    be deleted while a VM uses it (API-NOTES N.3)."""
    gcp.ctl("/_fake/speed", {"factor": 100})
    pol = {"name": "p1", "groupPlacementPolicy": {
        "collocation": "COLLOCATED", "vmCount": 1}}
    rid = "6f0c1a7e-3b8f-4d2a-9c1e-2f4b5a6c7d8e"
    st, op, _ = gcp.post(R + "/resourcePolicies?requestId=" + rid, pol)
    assert st == 200 and op["region"].endswith("/regions/us-central1"), op
    st, again, _ = gcp.post(R + "/resourcePolicies?requestId=" + rid, pol)
    assert st == 200 and again["name"] == op["name"]
    st, done, _ = gcp.post(R + "/operations/%s/wait" % op["name"], None)
    assert st == 200 and done["status"] == "DONE"
    assert gcp.post(R + "/resourcePolicies", pol)[0] == 409
    link = "projects/gpuq-demo/regions/us-central1/resourcePolicies/p1"
    b = instance_body("pv-0")
    b["resourcePolicies"] = [link]
    assert gcp.post(Z, b)[0] == 200
    b = instance_body("pv-1")
    b["resourcePolicies"] = [link]
    st, e, _ = gcp.post(Z, b)
    assert st == 400 and "vmCount" in e["error"]["message"]
    b["resourcePolicies"] = [link.replace("p1", "nope")]
    assert gcp.post(Z, b)[0] == 400
    st, e, _ = gcp.delete(R + "/resourcePolicies/p1")
    assert st == 400 and "already being used" in e["error"]["message"]
    gcp.delete(Z + "/pv-0")
    gcp.wait_for(lambda: gcp.get(Z + "/pv-0")[0] == 404, timeout=10)
    assert gcp.delete(R + "/resourcePolicies/p1")[0] == 200
    assert gcp.get(R + "/resourcePolicies/p1")[0] == 404
