"""Cloud Batch (DESIGN GD): jobs, tasks, LROs, lifecycle policies,
maxRunDuration (50005), stockouts and quota after acceptance."""
import urllib.parse

from fakegcp_fixtures import batch_body, env

B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
LONG = {"FAKEGCP_WORK_SECONDS": "100000"}


def test_batch_create_run_succeed_and_tasks(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    st, j, _ = gcp.post(B + "?jobId=b1", batch_body(env("b1")))
    assert st == 200 and j["name"].endswith("/jobs/b1")
    assert j["status"]["state"] == "QUEUED"
    assert j["taskGroups"][0]["name"].endswith("/taskGroups/group0")
    st, e, _ = gcp.post(B + "?jobId=b1", batch_body(env("b1")))
    assert st == 409 and e["error"]["status"] == "ALREADY_EXISTS"
    gcp.wait_for(lambda: gcp.get(B + "/b1")[1]["status"]["state"] ==
                 "SUCCEEDED", timeout=10)
    ev = [x["description"] for x in gcp.get(B + "/b1")[1]["status"][
        "statusEvents"]]
    assert ev[0].startswith("Job state is set from QUEUED to SCHEDULED")
    assert "from RUNNING to SUCCEEDED" in ev[-1]
    t = gcp.get(B + "/b1/taskGroups/group0/tasks")[1]["tasks"]
    assert t[0]["status"]["state"] == "SUCCEEDED"
    assert gcp.ctl("/_fake/work?job=b1")["work_done"] == 120


def test_batch_schema_checks(gcp):
    b = batch_body()
    b["taskGroups"][0]["taskSpec"]["computeResource"] = {"cpuMilli": "abc"}
    st, e, _ = gcp.post(B + "?jobId=x1", b)
    assert st == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    assert "job.task_groups[0].task_spec.compute_resource.cpu_milli" in \
        e["error"]["message"]
    assert e["error"]["details"][0]["@type"].endswith("BadRequest")
    b = batch_body()
    b["allocationPolicy"]["instances"][0]["policy"]["provisioningModel"] = \
        "CHEAP"
    assert gcp.post(B + "?jobId=x1", b)[0] == 400
    b = batch_body()
    b["taskGroups"][0]["taskSpec"]["runnables"][0]["container"] = {}
    st, e, _ = gcp.post(B + "?jobId=x1", b)
    assert st == 400 and "image_uri" in e["error"]["message"]
    st, e, _ = gcp.post(B + "?jobId=x1", {"labels": {}})
    assert st == 400 and "task_groups" in e["error"]["message"]
    b = batch_body()
    b["bogus"] = True
    st, e, _ = gcp.post(B + "?jobId=x1", b)
    assert 'Unknown name "bogus"' in e["error"]["message"]
    assert gcp.post(B + "?jobId=Bad_Id", batch_body())[0] == 400


def test_batch_list_filter_paging(gcp):
    gcp.ctl("/_fake/instances", {"service": "batch", "count": 130,
                                 "labels": {"gpuq-install": "z"}})
    gcp.ctl("/_fake/instances", {"service": "batch", "count": 5,
                                 "labels": {"gpuq-install": "other"},
                                 "state": "SUCCEEDED"})
    names, tok, pages = [], None, 0
    f = urllib.parse.quote('labels."gpuq-install"="z"')
    while True:
        st, l, _ = gcp.get(B + "?filter=" + f + (
            "&pageToken=" + tok if tok else ""))
        pages += 1
        names += [j["name"] for j in l["jobs"]]
        tok = l.get("nextPageToken")
        if not tok:
            break
    assert pages == 2 and len(set(names)) == 130
    l = gcp.get(B + "?pageSize=10&filter=" + urllib.parse.quote(
        'status.state="SUCCEEDED" AND labels.gpuq-install="other"'))[1]
    assert len(l["jobs"]) == 5


def test_batch_preempt_maintenance_retry_cancel_delete(gcp):
    gcp.ctl("/_fake/speed", {"factor": 50})
    long_env = env("b2", FAKEGCP_WORK_SECONDS=100000)
    gcp.post(B + "?jobId=b2", batch_body(long_env))
    gcp.wait_for(lambda: gcp.get(B + "/b2")[1]["status"]["state"] ==
                 "RUNNING")
    gcp.ctl("/_fake/preempt", {"name": "b2"})
    j = gcp.get(B + "/b2")[1]
    assert j["status"]["state"] == "FAILED"
    last = j["status"]["statusEvents"][-1]
    assert "due to Spot Preemption with exit code 50001" in \
        last["description"]
    assert last["taskExecution"]["exitCode"] == 50001
    t = gcp.get(B + "/b2/taskGroups/group0/tasks?filter=State%3DFAILED")[1]
    assert t["tasks"][0]["status"]["statusEvents"][-1]["taskExecution"] == {
        "exitCode": 50001}
    # retry policy: maintenance (50006) retried once, then fails
    pol = [{"action": "RETRY_TASK",
            "actionCondition": {"exitCodes": [50001, 50006]}}]
    gcp.post(B + "?jobId=b3", batch_body(env("b3", FAKEGCP_WORK_SECONDS=1e5),
                                         maxRetryCount=1,
                                         lifecyclePolicies=pol))
    gcp.wait_for(lambda: gcp.get(B + "/b3")[1]["status"]["state"] ==
                 "RUNNING")
    gcp.ctl("/_fake/maintenance", {"name": "b3"})
    assert gcp.get(B + "/b3")[1]["status"]["state"] == "RUNNING"
    gcp.wait_for(lambda: gcp.resource("b3")["runs"][-1]["state"] ==
                 "running" and len(gcp.resource("b3")["runs"]) == 2)
    gcp.ctl("/_fake/maintenance", {"name": "b3"})
    j = gcp.get(B + "/b3")[1]
    assert j["status"]["state"] == "FAILED"
    assert "exit code 50006" in j["status"]["statusEvents"][-1]["description"]
    # user exit code, not retried by RETRY_TASK policy
    gcp.post(B + "?jobId=b4", batch_body(env("b4", FAKEGCP_EXIT=7),
                                         maxRetryCount=3,
                                         lifecyclePolicies=pol))
    gcp.wait_for(lambda: gcp.get(B + "/b4")[1]["status"]["state"] ==
                 "FAILED", timeout=10)
    assert gcp.resource("b4")["exit_code"] == 7
    # cancel and delete return long-running operations
    gcp.post(B + "?jobId=b5", batch_body(long_env))
    st, op, _ = gcp.post(B + "/b5:cancel", {})
    assert st == 200 and op["metadata"]["verb"] == "cancel"
    gcp.wait_for(lambda: gcp.get(B + "/b5")[1]["status"]["state"] ==
                 "CANCELLED")
    assert gcp.get("/v1/" + op["name"])[1]["done"] is True
    assert gcp.post(B + "/b5:cancel", {})[0] == 400
    st, op, _ = gcp.delete(B + "/b5")
    assert op["metadata"]["verb"] == "delete"
    gcp.wait_for(lambda: gcp.get(B + "/b5")[0] == 404)


def test_batch_stockout_and_quota_after_acceptance(gcp):
    gcp.ctl("/_fake/stockout", {"zone": "us-central1", "gpu":
                                "nvidia-tesla-t4", "provisioning": "SPOT"})
    assert gcp.post(B + "?jobId=s1", batch_body(env("s1")))[0] == 200
    gcp.wait_for(lambda: gcp.get(B + "/s1")[1]["status"]["state"] ==
                 "FAILED")
    ev = [e["description"] for e in gcp.get(B + "/s1")[1]["status"][
        "statusEvents"]]
    assert any("CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED" in e for e in ev)
    gcp.ctl("/_fake/quota", {"region": "us-central1",
                             "metric": "NVIDIA_T4_GPUS", "limit": 0})
    gcp.post(B + "?jobId=s2", batch_body(env("s2"), spot=False))
    gcp.wait_for(lambda: gcp.get(B + "/s2")[1]["status"]["state"] ==
                 "FAILED")
    ev = gcp.get(B + "/s2")[1]["status"]["statusEvents"]
    assert any("CODE_GCE_QUOTA_EXCEEDED" in e["description"] for e in ev)


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


def test_batch_shortage_queue_holds_the_job_and_says_why(gcp):
    """batch_shortage "queue": no capacity keeps the job QUEUED with one
    status event saying why; capacity back, it runs."""
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"batch_shortage": "queue",
                              "batch_queue_recheck": 30.0})
    gcp.ctl("/_fake/stockout", {"zone": "us-central1",
                                "gpu": "nvidia-tesla-t4"})
    b = batch_body(env("q1"))
    assert gcp.post(B + "?jobId=q1", b)[0] == 200
    gcp.wait_for(lambda: gcp.get(B + "/q1")[1]["status"].get(
        "statusEvents"), timeout=10)
    st = gcp.get(B + "/q1")[1]["status"]
    assert st["state"] == "QUEUED"
    ev = [x["description"] for x in st["statusEvents"]]
    assert len(ev) == 1 and "not have enough resources" in ev[0]
    gcp.ctl("/_fake/stockout", {"zone": "us-central1",
                                "gpu": "nvidia-tesla-t4", "on": False})
    gcp.wait_for(lambda: gcp.get(B + "/q1")[1]["status"]["state"] ==
                 "SUCCEEDED", timeout=20)
