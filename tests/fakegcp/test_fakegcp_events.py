"""Events of API-NOTES section I not covered elsewhere: host errors
(compute.instances.hostError, Batch 50002), workload exits with any code
(Batch 50003/50004...), Batch maxRunDuration (50005), Vertex quota
failures inside the job (code 8), the standard query parameters."""
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


def test_batch_max_run_duration(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.post(B + "?jobId=mr1", batch_body(LONG, maxRunDuration="60s"))
    gcp.wait_for(lambda: gcp.get(B + "/mr1")[1]["status"]["state"] ==
                 "FAILED", timeout=10)
    j = gcp.get(B + "/mr1")[1]
    ev = j["status"]["statusEvents"][-1]
    assert ev["taskExecution"]["exitCode"] == 50005
    assert "task runs over the maximum runtime with exit code 50005" in \
        ev["description"]
    w = gcp.resource("mr1")["runs"][0]
    assert 59 <= w["work_done"] <= 61
    # a job that finishes in time is not touched
    gcp.post(B + "?jobId=mr2", batch_body({"FAKEGCP_WORK_SECONDS": "30"},
                                          maxRunDuration="60s"))
    gcp.wait_for(lambda: gcp.get(B + "/mr2")[1]["status"]["state"] ==
                 "SUCCEEDED", timeout=10)


def test_vertex_quota_failure_in_job(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/quota", {"service": "aiplatform", "region":
                             "us-central1", "metric":
                             "custom_model_training_preemptible_nvidia_t4_"
                             "gpus", "limit": 0})
    gcp.ctl("/_fake/config", {"vertex_quota_error": "job"})
    st, j, _ = gcp.post(V, vertex_body("vq1"))
    assert st == 200
    jid = j["name"].rsplit("/")[-1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_FAILED")
    e = gcp.get(V + "/" + jid)[1]["error"]
    assert e == {"code": 8, "message": "The following quota metrics exceed "
                 "quota limits: aiplatform.googleapis.com/custom_model_"
                 "training_preemptible_nvidia_t4_gpus"}
    gcp.ctl("/_fake/config", {"vertex_quota_error": "http"})
    assert gcp.post(V, vertex_body("vq2"))[0] == 429


def test_standard_query_parameters(gcp):
    for q in ("$.xgafv=2", "alt=json", "prettyPrint=false", "quotaUser=u",
              "fields=name", "key=k"):
        st, r, _ = gcp.get(CP + "/regions/us-central1?" + q)
        assert st == 200, q
    st, e, _ = gcp.get(CP + "/regions/us-central1?$.xgafv=3")
    assert st == 400
    raw = gcp.call("GET", CP + "/zones/us-central1-a?prettyPrint=false",
                   raw=None)
    assert raw[0] == 200
