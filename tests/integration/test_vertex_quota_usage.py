"""Vertex AI quota headroom counts every job of the project (issue 15,
"Against the real APIs" item 2; DESIGN GB.3).

The Cloud Quotas API gives Vertex AI's limits and no usage, so gpuqd
lists the project's custom jobs that hold GPUs (customJobs.list with a
state filter, every page) and counts those another user (or another
install) started, besides its own from its books. Without that, a job
of someone else's running on the same quota looks like free room, and
gpuqd creates a job Vertex keeps queued, or refuses with 429.
"""
import json
import time
import urllib.parse
import urllib.request

from cloudutil import PROJECT, cloud, job_spec, scaled
from fakeclient import get_token

assert cloud  # the fixture, imported for pytest

REGION = "us-central1"
METRIC = "custom_model_training_nvidia_t4_gpus"
V = "/v1/projects/%s/locations/%s/customJobs" % (PROJECT, REGION)


def outside_job(c, name, count, strategy="STANDARD"):
    """A Vertex job someone else created: no gpuq label."""
    tok = get_token(c.fake, c.key)["access_token"]
    body = {"displayName": name, "labels": {"team": "vision"},
            "jobSpec": {"workerPoolSpecs": [{
                "machineSpec": {"machineType": "n1-standard-16",
                                "acceleratorType": "NVIDIA_TESLA_T4",
                                "acceleratorCount": count},
                "replicaCount": "1",
                "containerSpec": {"imageUri": "us-docker.pkg.dev/o/r/t:1",
                                  "env": [{"name": "FAKEGCP_WORK_SECONDS",
                                           "value": "100000"}]}}],
                "scheduling": {"strategy": strategy}}}
    req = urllib.request.Request(
        c.fake.url + V, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": "Bearer " + tok,
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def vertex_row(c):
    r = c.request({"op": "quotas", "region": REGION})
    assert r.get("ok"), r
    for q in r["quotas"]:
        if q["service"] == "vertex" and q["metric"] == METRIC and \
                q["region"] == REGION:
            return q
    return None


def test_vertex_headroom_counts_other_jobs(cloud):
    def setup(c):
        c.quota(METRIC, limit=4, region=REGION, service="aiplatform")
    c = cloud(providers=("vertex",), setup=setup)
    outside_job(c, "someone-elses", 3)
    deadline = time.monotonic() + scaled(30)
    row = vertex_row(c)
    while row is None or row.get("usage") != 3:
        assert time.monotonic() < deadline, \
            "gpuqd never counted the other job's 3 GPUs: %r" % row
        time.sleep(0.2)
        row = vertex_row(c)
    c.check(row["limit"] == 4 and row["free"] == 1,
            "Vertex T4 row %r: want limit 4, usage 3, free 1" % row)

    # A job needing 2 T4s does not fit the 1 left: no create is sent.
    jid = c.submit(job_spec(providers=["vertex"], count=2, spot="never",
                            regions=[REGION]))
    time.sleep(scaled(3))
    job = c.show(jid)
    c.check(job["state"] == "queued", "job is %s" % job["state"], jid)
    c.check(len(c.creates("vertex")) == 1, "gpuqd created a Vertex job "
            "the quota has no room for (only the outside one may be)", jid)
    lists = [r for r in c.requests(
        "aiplatform.projects.locations.customJobs.list")
        if "JOB_STATE_RUNNING" in urllib.parse.unquote(r.get("path", "") +
                                                       "?" + r.get("query",
                                                                   ""))]
    c.check(lists, "no customJobs.list with a state filter was sent", jid)
