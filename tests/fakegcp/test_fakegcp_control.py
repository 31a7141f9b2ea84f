"""The control API's events across Compute, Batch and Vertex: host errors
(compute.instances.hostError, Batch 50002), workload exits with any code
(Batch 50003/50004...), and the clock plus the preempt-then-resume story
(DESIGN GH.6)."""
import json
import time
import urllib.error
import urllib.parse

from fakegcp_fixtures import CP, batch_body, instance_body, vertex_body

Q = urllib.parse.quote
Z = CP + "/zones/us-central1-a"
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"
LONG = {"FAKEGCP_WORK_SECONDS": "100000"}


def ctl_status(gcp, path, body):
    try:
        gcp.ctl(path, body)
        return 200
    except urllib.error.HTTPError as e:
        return e.code


def running(gcp, url, key="status"):
    def ok():
        j = gcp.get(url)[1]
        return (j["status"]["state"] if key == "status" else j["state"]) in \
            ("RUNNING", "JOB_STATE_RUNNING")
    gcp.wait_for(ok)


def test_host_error(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.post(Z + "/instances", instance_body("he1", env=LONG,
                                             action="STOP"))
    gcp.wait_for(lambda: gcp.get(Z + "/instances/he1")[1]["status"] ==
                 "RUNNING")
    assert gcp.ctl("/_fake/host_error", {"name": "he1"})["ok"]
    gcp.wait_for(lambda: gcp.get(Z + "/instances/he1")[1]["status"] ==
                 "TERMINATED")
    ops = gcp.get(Z + "/operations?filter=" + Q(
        'operationType="compute.instances.hostError"'))[1]["items"]
    assert len(ops) == 1 and ops[0]["targetLink"].endswith("/he1")
    gcp.post(B + "?jobId=he2", batch_body(LONG))
    running(gcp, B + "/he2")
    gcp.ctl("/_fake/host_error", {"name": "he2"})
    j = gcp.get(B + "/he2")[1]
    ev = j["status"]["statusEvents"][-1]
    assert j["status"]["state"] == "FAILED"
    assert "due to Batch no longer receives VM updates with exit code " \
        "50002" in ev["description"]
    assert ev["taskExecution"]["exitCode"] == 50002
    jid = gcp.post(V, vertex_body("he3", LONG))[1]["name"].rsplit("/")[-1]
    running(gcp, V + "/" + jid, "state")
    gcp.ctl("/_fake/host_error", {"name": jid})
    assert gcp.get(V + "/" + jid)[1]["state"] == "JOB_STATE_RUNNING"
    gcp.wait_for(lambda: len(gcp.resource("he3")["runs"]) == 2)
    assert ctl_status(gcp, "/_fake/host_error", {"name": "he1"}) == 409


def test_exit_with_any_code(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.post(B + "?jobId=ex1", batch_body(LONG, maxRetryCount=1))
    running(gcp, B + "/ex1")
    gcp.ctl("/_fake/exit", {"name": "ex1", "exit_code": 50003})
    # no lifecycle policy: retried once, then the job fails
    gcp.wait_for(lambda: len(gcp.resource("ex1")["runs"]) == 2 and
                 gcp.resource("ex1")["runs"][-1]["state"] == "running")
    gcp.ctl("/_fake/exit", {"name": "ex1", "exit_code": 50004})
    j = gcp.get(B + "/ex1")[1]
    assert j["status"]["state"] == "FAILED"
    t = gcp.get(B + "/ex1/taskGroups/group0/tasks")[1]["tasks"][0]
    codes = [e["taskExecution"]["exitCode"] for e in
             t["status"]["statusEvents"] if "taskExecution" in e]
    assert codes == [50003, 50004]
    descs = [e["description"] for e in t["status"]["statusEvents"]]
    assert any("VM is rebooted during task execution with exit code 50003"
               in d for d in descs)
    assert any("tasks cannot be canceled with exit code 50004" in d
               for d in descs)
    # the VM's workload ends: guest attribute, guestTerminate, TERMINATED
    gcp.post(Z + "/instances", instance_body("ex2", env=LONG))
    gcp.wait_for(lambda: gcp.get(Z + "/instances/ex2")[1]["status"] ==
                 "RUNNING")
    gcp.ctl("/_fake/exit", {"name": "ex2", "exit_code": 0})
    gcp.wait_for(lambda: gcp.get(Z + "/instances/ex2")[1]["status"] ==
                 "TERMINATED")
    ga = gcp.get(Z + "/instances/ex2/getGuestAttributes?variableKey=gpuq/"
                 "exit-code")[1]
    assert ga["variableValue"] == "0"
    jid = gcp.post(V, vertex_body("ex3", LONG))[1]["name"].rsplit("/")[-1]
    running(gcp, V + "/" + jid, "state")
    gcp.ctl("/_fake/exit", {"name": jid, "exit_code": 9})
    j = gcp.get(V + "/" + jid)[1]
    assert j["state"] == "JOB_STATE_FAILED" and j["error"]["code"] == 3
    assert gcp.ctl("/_fake/work")["exit_codes"].count(9) == 1
    assert ctl_status(gcp, "/_fake/exit", {"name": "ex2",
                                           "exit_code": 1}) == 409
    assert ctl_status(gcp, "/_fake/exit", {"name": "ex1",
                                           "exit_code": "x"}) == 400


def test_speed_and_resume_after_preemption(gcp):
    t0 = gcp.ctl("/_fake/time")["now"]
    time.sleep(0.2)
    assert 1 < gcp.ctl("/_fake/time")["now"] - t0 < 5     # speed 10
    gcp.ctl("/_fake/speed", {"factor": 200})
    env = {"FAKEGCP_WORK_SECONDS": "1000", "FAKEGCP_CKPT_EVERY": "100",
           "GPUQ_JOB_ID": "42", "GPUQ_ATTEMPT": "1",
           "GPUQ_CHECKPOINT_DIR": "gs://ck/jobs/42/checkpoints/"}
    gcp.post(Z + "/instances", instance_body("r1", env=env))
    gcp.wait_for(lambda: (gcp.resource("r1")["progress"] or 0) >= 350)
    gcp.ctl("/_fake/preempt", {"name": "r1"})
    w = gcp.ctl("/_fake/work?job=42")
    done1 = w["work_done"]
    assert 350 <= done1 < 1000
    l = gcp.get("/storage/v1/b/ck/o?prefix=jobs/42/checkpoints/")[1]
    newest = l["items"][-1]["name"]
    ck = gcp.get("/storage/v1/b/ck/o/%s?alt=media" %
                 urllib.parse.quote(newest, safe=""))[1]
    ck = ck if isinstance(ck, dict) else json.loads(ck)
    assert ck == {"progress": int(newest[-8:]), "job": "42", "attempt": "1"}
    env2 = dict(env, GPUQ_ATTEMPT="2",
                GPUQ_RESUME_FROM="gs://ck/" + newest)
    gcp.post(CP + "/zones/us-central1-b/instances",
             instance_body("r2", zone="us-central1-b", env=env2))
    gcp.wait_for(lambda: gcp.ctl("/_fake/work?job=42")["completed"],
                 timeout=15)
    w = gcp.ctl("/_fake/work?job=42")
    r2 = gcp.resource("r2")
    assert r2["start_progress"] == ck["progress"]
    assert r2["work_done"] == 1000 - ck["progress"]
    assert w["work_done"] == done1 + 1000 - ck["progress"]
    assert w["work_needed"] == 1000
    # a missing resume object restarts from 0 and says so
    env3 = dict(env, GPUQ_JOB_ID="43", FAKEGCP_WORK_SECONDS="100",
                GPUQ_RESUME_FROM="gs://ck/none")
    gcp.post(Z + "/instances", instance_body("r3", env=env3))
    gcp.wait_for(lambda: gcp.ctl("/_fake/work?job=43")["completed"])
    r3 = gcp.resource("r3")
    assert r3["runs"][0]["resume_missing"] and r3["start_progress"] == 0
    assert gcp.ctl("/_fake/reset", {})["ok"]
    assert gcp.ctl("/_fake/resources")["resources"] == []


def test_bulk_names(gcp):
    """POST /_fake/instances with "names": the first resources get those
    names (bench/memory.py gives gpuq's own), the rest are numbered."""
    r = gcp.ctl("/_fake/instances", {"zone": "us-central1-a", "count": 2,
                                     "names": ["gpuq-i1-7-1"],
                                     "name_prefix": "x"})
    assert r["names"][0] == "gpuq-i1-7-1"
    assert r["names"][1].startswith("x-") and r["names"][1].endswith("-1")
    st, inst, _ = gcp.get(CP + "/zones/us-central1-a/instances/gpuq-i1-7-1")
    assert st == 200 and inst["status"] == "RUNNING"
