"""Cloud Logging entries.list (DESIGN GJ): what the simulated training
prints on each service, the filter language, paging and the read rate."""
import pytest

import fakegcp_logging as lg
from fakegcp_fixtures import batch_body, env, instance_body, vertex_body

L = "/v2/entries:list"
P = "projects/gpuq-demo"


def entries(gcp, flt, size=1000, order=None):
    out, tok, calls = [], None, 0
    while True:
        body = {"resourceNames": [P], "filter": flt, "pageSize": size}
        if order:
            body["orderBy"] = order
        if tok:
            body["pageToken"] = tok
        st, r, _ = gcp.post(L, body)
        assert st == 200, r
        calls += 1
        out += r.get("entries", [])
        tok = r.get("nextPageToken")
        if not tok:
            return out, calls


def texts(es):
    return [e.get("textPayload") or e["jsonPayload"]["message"] for e in es]


def test_filter_language():
    e = {"logName": "projects/p/logs/batch_task_logs",
         "resource": {"type": "ml_job", "labels": {"job_id": "42"}},
         "labels": {"gpuq-job": "7", "a.b/c": "x"},
         "timestamp": "2026-11-25T10:00:00.5Z", "severity": "WARNING",
         "jsonPayload": {"message": "Hello World"}}
    ok = lambda f: lg.compile_filter(f)(e)
    assert ok('resource.type="ml_job" AND resource.labels.job_id="42"')
    assert ok('resource.labels.job_id=("1" OR "42")')
    assert not ok('resource.labels.job_id=("1" OR "2")')
    assert ok('labels.gpuq-job="7"')
    assert ok('labels."a.b/c"="X"')            # case-insensitive
    assert ok('timestamp>="2026-11-25T10:00:00Z"')
    assert not ok('timestamp>"2026-11-25T11:00:01+01:00"')
    assert ok('severity>=WARNING') and not ok('severity>=ERROR')
    assert ok('jsonPayload.message:"world"')
    assert ok('(resource.type="gce_instance") OR labels.gpuq-job="7"')
    assert not ok('NOT labels.gpuq-job="7"')
    assert ok('resource.type="ml_job" labels.gpuq-job="7"')   # implicit AND
    assert not ok('labels.missing="x"')
    with pytest.raises(lg.FilterError):
        lg.compile_filter('resource.type="x" AND (')


def test_each_service_prints_where_google_puts_it(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    e = env("5", FAKEGCP_WORK_SECONDS="90", FAKEGCP_LOG_EVERY="30")
    lab = {"gpuq-install": "t", "gpuq-job": "5", "gpuq-attempt": "1"}
    b = batch_body(e, labels=lab)
    b["logsPolicy"] = {"destination": "CLOUD_LOGGING"}
    assert gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                    "?jobId=b5", b)[0] == 200
    nolog = batch_body(env("6"), labels=dict(lab, **{"gpuq-job": "6"}))
    assert gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                    "?jobId=b6", nolog)[0] == 200
    st, v, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/"
                        "customJobs", vertex_body("v5", e))
    assert st == 200
    vid = v["name"].rsplit("/", 1)[1]
    st, op, _ = gcp.post("/compute/v1/projects/gpuq-demo/zones/"
                         "us-central1-a/instances", instance_body("g5", env=e))
    assert st == 200
    gcp.wait_for(lambda: len(entries(gcp, 'resource.type="gce_instance"')[0])
                 >= 5, timeout=20)
    gcp.wait_for(lambda: any("finished" in t for t in texts(
        entries(gcp, 'labels.gpuq-job="5"')[0])), timeout=20)
    gcp.wait_for(lambda: len(entries(gcp, 'resource.type="ml_job"')[0]) >= 5,
                 timeout=20)
    bt, _ = entries(gcp, 'logName="%s/logs/batch_task_logs" AND '
                    'labels.gpuq-install="t" AND labels.gpuq-job="5"' % P)
    assert bt[0]["resource"]["type"] == "batch.googleapis.com/Job"
    assert bt[0]["labels"]["job_uid"] == bt[0]["resource"]["labels"]["job_id"]
    assert texts(bt)[0] == "gpuq-fake: job 5 attempt 1 starting from scratch"
    assert "step 30/90" in texts(bt)
    assert texts(bt)[-1] == "gpuq-fake: training finished, exit code 0"
    # Batch writes nothing without logsPolicy CLOUD_LOGGING (DESIGN GJ.5)
    assert entries(gcp, 'labels.gpuq-job="6"')[0] == []
    vx, _ = entries(gcp, 'resource.type="ml_job" AND '
                    'resource.labels.job_id="%s"' % vid)
    assert vx and vx[0]["resource"]["labels"]["task_name"] == "workerpool0-0"
    ge, _ = entries(gcp, 'logName="%s/logs/gcplogs-docker-driver"' % P)
    iid = ge[0]["resource"]["labels"]["instance_id"]
    assert ge[0]["jsonPayload"]["container"]["metadata"] == {
        "gpuq_job": "5", "gpuq_attempt": "1"}
    assert ge[0]["jsonPayload"]["instance"]["id"] == iid
    # oldest first, ties by insertId; desc reverses
    ts = [lg.parse_time(x["timestamp"]) for x in bt]
    assert ts == sorted(ts)
    assert entries(gcp, 'labels.gpuq-job="5"', order="timestamp desc")[0] \
        == list(reversed(entries(gcp, 'labels.gpuq-job="5"')[0]))


def test_paging_and_token_checks(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    e = env("8", FAKEGCP_WORK_SECONDS="60", FAKEGCP_LOG_EVERY="5")
    st, v, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/"
                        "customJobs", vertex_body("v8", e))
    gcp.wait_for(lambda: any("finished" in t for t in texts(
        entries(gcp, 'resource.type="ml_job"')[0])), timeout=20)
    whole, one = entries(gcp, 'resource.type="ml_job"')
    paged, calls = entries(gcp, 'resource.type="ml_job"', size=3)
    assert one == 1 and paged == whole and calls == -(-len(whole) // 3)
    gcp.ctl("/_fake/config", {"logging_page_max": 2})
    assert entries(gcp, 'resource.type="ml_job"', size=100)[0] == whole
    st, r, _ = gcp.post(L, {"resourceNames": [P], "pageSize": 2,
                            "filter": 'resource.type="ml_job"'})
    st, r, _ = gcp.post(L, {"resourceNames": [P], "pageSize": 2,
                            "filter": 'resource.type="gce_instance"',
                            "pageToken": r["nextPageToken"]})
    assert st == 400 and r["error"]["status"] == "INVALID_ARGUMENT"
    st, r, _ = gcp.post(L, {"resourceNames": [P], "pageSize": -1})
    assert st == 400
    st, r, _ = gcp.post(L, {"resourceNames": [P], "orderBy": "severity"})
    assert st == 400
    st, r, _ = gcp.post(L, {"filter": ""})
    assert st == 400 and "resource" in r["error"]["message"].lower()
    st, r, _ = gcp.post(L, {"resourceNames": [P], "filter": "a = ("})
    assert st == 400


def test_read_rate_limit_is_429_resource_exhausted(gcp):
    gcp.ctl("/_fake/config", {"logging_reads_per_minute": 2})
    body = {"resourceNames": [P], "filter": 'resource.type="ml_job"'}
    assert gcp.post(L, body)[0] == 200
    assert gcp.post(L, body)[0] == 200
    st, r, _ = gcp.post(L, body)
    assert st == 429 and r["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "Read requests" in r["error"]["message"]
