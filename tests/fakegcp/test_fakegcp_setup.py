"""FAKEGCP_SETUP_SECONDS: a run is running (and billed) for its setup
seconds before its work progresses, as a job's image pull and checkpoint
load are; bench/replay's restart overhead (doc/DESIGN.md "Replaying Spot
traces")."""
import json
import urllib.parse

from fakegcp_fixtures import CP, instance_body

Z = CP + "/zones/us-central1-a"


def test_setup_seconds_delay_progress_and_checkpoints(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    env = {"FAKEGCP_WORK_SECONDS": "600", "FAKEGCP_CKPT_EVERY": "300",
           "FAKEGCP_SETUP_SECONDS": "300", "GPUQ_JOB_ID": "7",
           "GPUQ_ATTEMPT": "1",
           "GPUQ_CHECKPOINT_DIR": "gs://ck/jobs/7/checkpoints/"}
    gcp.post(Z + "/instances", instance_body("s1", env=env))
    gcp.wait_for(lambda: gcp.ctl("/_fake/work?job=7")["completed"],
                 timeout=30)
    run = gcp.resource("s1")["runs"][0]
    # 300 s of setup, then 600 s of work: done 900 s after the start.
    assert run["ended"] - run["started"] == 900
    items = gcp.get("/storage/v1/b/ck/o?prefix=jobs/7/checkpoints/")[1][
        "items"]
    assert [i["name"][-8:] for i in items] == ["00000300", "00000600"]
    # A resumed run pays its setup again before progressing.
    env2 = dict(env, GPUQ_JOB_ID="8", GPUQ_ATTEMPT="2",
                GPUQ_RESUME_FROM="gs://ck/" + items[0]["name"],
                GPUQ_CHECKPOINT_DIR="gs://ck/jobs/8/checkpoints/")
    gcp.post(Z + "/instances", instance_body("s2", env=env2))
    gcp.wait_for(lambda: gcp.ctl("/_fake/work?job=8")["completed"],
                 timeout=30)
    r2 = gcp.resource("s2")["runs"][0]
    assert r2["start_progress"] == 300
    assert r2["ended"] - r2["started"] == 600
    ck = gcp.get("/storage/v1/b/ck/o/%s?alt=media" % urllib.parse.quote(
        "jobs/8/checkpoints/ckpt-00000600", safe=""))[1]
    ck = ck if isinstance(ck, dict) else json.loads(ck)
    assert ck["progress"] == 600
