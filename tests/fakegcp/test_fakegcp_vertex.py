"""Vertex AI custom jobs (DESIGN GE), with the Cloud Quotas quotaInfos
(B.2) that bound them, and quota failures inside the job (code 8)."""
import urllib.error
import urllib.parse

from fakegcp_fixtures import env, vertex_body

V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"


def test_vertex_lifecycle_and_errors(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    st, j, _ = gcp.post(V, vertex_body("v1", env("v1", FAKEGCP_EXIT=2)))
    assert st == 200 and j["state"] == "JOB_STATE_QUEUED"
    jid = j["name"].rsplit("/", 1)[1]
    assert jid.isdigit()
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_FAILED", timeout=10)
    err = gcp.get(V + "/" + jid)[1]["error"]
    assert err["code"] == 3 and err["message"].startswith(
        "The replica workerpool0-0 exited with a non-zero status of 2.")
    # AIP_CHECKPOINT_DIR used when GPUQ_CHECKPOINT_DIR is absent
    e = env("v2")
    del e["GPUQ_CHECKPOINT_DIR"]
    j = gcp.post(V, vertex_body("v2", e, base="gs://out/runs/v2/"))[1]
    jid2 = j["name"].rsplit("/", 1)[1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid2)[1]["state"] ==
                 "JOB_STATE_SUCCEEDED", timeout=10)
    objs = gcp.get("/storage/v1/b/out/o?prefix=runs/v2/checkpoints/")[1]
    assert [o["name"] for o in objs["items"]][-1] == \
        "runs/v2/checkpoints/ckpt-00000120"
    # list by label, both filter spellings, and paging
    for f in ['labels.gpuq-install="t"', "labels.gpuq-install=t"]:
        l = gcp.get(V + "?filter=" + urllib.parse.quote(f))[1]
        assert len(l["customJobs"]) == 2
    l = gcp.get(V + "?pageSize=1")[1]
    assert len(l["customJobs"]) == 1 and l["nextPageToken"]
    l2 = gcp.get(V + "?pageSize=1&pageToken=" + l["nextPageToken"])[1]
    assert "nextPageToken" not in l2
    # delete a finished job -> LRO; unknown -> 404
    st, op, _ = gcp.delete(V + "/" + jid)
    assert st == 200 and op["done"] is True
    assert gcp.get(V + "/" + jid)[0] == 404


def test_vertex_host_required_quota_cancel(gcp):
    st, e, _ = gcp.post(V, vertex_body("h"), headers={
        "Host": "europe-west4-aiplatform.googleapis.com"})
    assert st == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    assert gcp.post(V, vertex_body("h"), headers={
        "Host": "us-central1-aiplatform.googleapis.com"})[0] == 200
    st, e, _ = gcp.post(V, {"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"},
         "containerSpec": {}}]}})
    assert st == 400 and "custom_job.display_name" in e["error"]["message"]
    assert "container_spec.image_uri" in e["error"]["message"]
    b = vertex_body("h")
    b["jobSpec"]["scheduling"]["strategy"] = "CHEAPEST"
    assert gcp.post(V, b)[0] == 400
    gcp.ctl("/_fake/quota", {"service": "aiplatform", "region":
                             "us-central1", "metric":
                             "custom_model_training_nvidia_l4_gpus",
                             "limit": 1})
    ok = gcp.post(V, vertex_body("q1", strategy="STANDARD", acc="NVIDIA_L4"))
    assert ok[0] == 200
    st, e, _ = gcp.post(V, vertex_body("q2", strategy="STANDARD",
                                       acc="NVIDIA_L4"))
    assert st == 429 and e["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert e["error"]["message"] == (
        "The following quota metrics exceed quota limits: "
        "aiplatform.googleapis.com/custom_model_training_nvidia_l4_gpus")
    # SPOT uses the preemptible metric, so it is not blocked
    assert gcp.post(V, vertex_body("q3", acc="NVIDIA_L4"))[0] == 200
    jid = ok[1]["name"].rsplit("/", 1)[1]
    assert gcp.post(V + "/" + jid + ":cancel", {})[1] == {}
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_CANCELLED")
    assert gcp.get(V + "/" + jid)[1]["error"]["code"] == 1
    assert gcp.post(V, vertex_body("q4", strategy="STANDARD",
                                   acc="NVIDIA_L4"))[0] == 200
    qi = gcp.get("/v1/projects/gpuq-demo/locations/global/services/"
                 "aiplatform.googleapis.com/quotaInfos?pageSize=5")[1]
    assert len(qi["quotaInfos"]) == 5 and qi["nextPageToken"]
    all_q, tok = [], None
    while True:
        r = gcp.get("/v1/projects/gpuq-demo/locations/global/services/"
                    "aiplatform.googleapis.com/quotaInfos?pageSize=7" +
                    ("&pageToken=" + tok if tok else ""))[1]
        all_q += r["quotaInfos"]
        tok = r.get("nextPageToken")
        if not tok:
            break
    l4 = [q for q in all_q if q["metric"].endswith(
        "/custom_model_training_nvidia_l4_gpus")][0]
    d = {tuple(x["dimensions"].items()): x["details"]["value"]
         for x in l4["dimensionsInfos"]}
    assert d[(("region", "us-central1"),)] == "1" and d[()] == "16"


def test_vertex_preempt_restart_and_stockout(gcp):
    gcp.ctl("/_fake/speed", {"factor": 50})
    j = gcp.post(V, vertex_body("p1", env("p1", FAKEGCP_WORK_SECONDS=1e5)))[1]
    jid = j["name"].rsplit("/", 1)[1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_RUNNING")
    gcp.ctl("/_fake/preempt", {"name": "p1"})
    assert gcp.get(V + "/" + jid)[1]["state"] == "JOB_STATE_RUNNING"
    gcp.wait_for(lambda: len(gcp.resource("p1")["runs"]) == 2)
    gcp.ctl("/_fake/preempt", {"name": jid, "vertex_restart": False})
    j = gcp.get(V + "/" + jid)[1]
    assert j["state"] == "JOB_STATE_FAILED" and j["error"]["code"] == 14
    gcp.ctl("/_fake/stockout", {"zone": "us-central1", "gpu":
                                "nvidia-tesla-t4"})
    j = gcp.post(V, vertex_body("s1"))[1]
    jid = j["name"].rsplit("/", 1)[1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_FAILED")
    err = gcp.get(V + "/" + jid)[1]["error"]
    assert err["code"] == 8 and "Resources are insufficient" in \
        err["message"]
    try:
        gcp.ctl("/_fake/preempt", {"name": jid})
        assert False
    except urllib.error.HTTPError as e:
        assert e.code == 409


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


def test_vertex_python_package_spec(gcp):
    """A pool with a pythonPackageSpec instead of a containerSpec runs,
    its env read as a container's; one missing a required field, or a
    pool with both kinds of code, is refused as Vertex AI refuses it."""
    gcp.ctl("/_fake/speed", {"factor": 100})
    b = vertex_body("pp", env("pp"))
    pool = b["jobSpec"]["workerPoolSpecs"][0]
    cs = pool.pop("containerSpec")
    pool["pythonPackageSpec"] = {
        "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/py:1",
        "packageUris": ["gs://pkgs/trainer-0.1.tar.gz"],
        "pythonModule": "trainer.task", "args": ["--lr", "0.1"],
        "env": cs["env"]}
    st, j, _ = gcp.post(V, b)
    assert st == 200, j
    jid = j["name"].rsplit("/", 1)[1]
    gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                 "JOB_STATE_SUCCEEDED", timeout=10)
    got = gcp.get(V + "/" + jid)[1]["jobSpec"]["workerPoolSpecs"][0]
    assert got["pythonPackageSpec"]["pythonModule"] == "trainer.task"
    # The simulated work came from the package's env.
    assert any(r["job"] and r["work_done"] > 0 for r in
               gcp.ctl("/_fake/resources")["resources"]
               if r["name"] == jid or r["resource"].endswith("/" + jid))

    for drop, name in (("executorImageUri", "executor_image_uri"),
                       ("packageUris", "package_uris"),
                       ("pythonModule", "python_module")):
        bad = vertex_body("pp2", env("pp2"))
        p = bad["jobSpec"]["workerPoolSpecs"][0]
        p.pop("containerSpec")
        p["pythonPackageSpec"] = dict(pool["pythonPackageSpec"])
        del p["pythonPackageSpec"][drop]
        st, e, _ = gcp.post(V, bad)
        assert st == 400 and "python_package_spec." + name in \
            e["error"]["message"], e
    # Only the pre-built training containers run a package.
    own = vertex_body("pp4", env("pp4"))
    p = own["jobSpec"]["workerPoolSpecs"][0]
    p.pop("containerSpec")
    p["pythonPackageSpec"] = dict(pool["pythonPackageSpec"],
                                  executorImageUri="gcr.io/p/py:1")
    st, e, _ = gcp.post(V, own)
    assert st == 400 and "python_package_spec.executor_image_uri" in \
        e["error"]["message"], e
    both = vertex_body("pp3", env("pp3"))
    both["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"] = \
        pool["pythonPackageSpec"]
    assert gcp.post(V, both)[0] == 400


def test_vertex_disable_retries_fails_instead_of_restarting(gcp):
    """Scheduling.disableRetries (aiplatform v1 discovery document): once
    the job runs, a lost worker is not restarted; the job fails, saying
    why, for preemption and host maintenance alike."""
    gcp.ctl("/_fake/speed", {"factor": 50})
    for name, kind, word in (("dr1", "preempt", "preempted"),
                             ("dr2", "maintenance", "maintenance")):
        b = vertex_body(name, env(name, FAKEGCP_WORK_SECONDS=1e5))
        b["jobSpec"]["scheduling"]["disableRetries"] = True
        j = gcp.post(V, b)[1]
        jid = j["name"].rsplit("/", 1)[1]
        gcp.wait_for(lambda: gcp.get(V + "/" + jid)[1]["state"] ==
                     "JOB_STATE_RUNNING")
        gcp.ctl("/_fake/" + kind, {"name": name})
        j = gcp.get(V + "/" + jid)[1]
        assert j["state"] == "JOB_STATE_FAILED", j["state"]
        assert j["error"]["code"] == 14 and word in j["error"]["message"]
        assert j["jobSpec"]["scheduling"]["disableRetries"] is True
        assert len(gcp.resource(name)["runs"]) == 1
