"""``fields=`` partial responses (DESIGN G0.1; Google's syntax: a/b,
a(b,c), * wildcard) in every API, including the scope maps of aggregated
lists, and Vertex's ``readMask``."""
import json
import urllib.parse

import pytest

import fakegcp_fields as util
from fakegcp_fixtures import CP, batch_body, instance_body, vertex_body

Q = urllib.parse.quote
POLL = ("items/*/instances(name,status,lastStartTimestamp,"
        "lastStopTimestamp),nextPageToken")


def test_parse_fields_syntax():
    assert util.parse_fields("items(name,status),nextPageToken") == {
        "items": {"name": None, "status": None}, "nextPageToken": None}
    assert util.parse_fields("items/*/instances(name)") == {
        "items": {"*": {"instances": {"name": None}}}}
    # a later whole selection wins over a partial one, partials merge
    assert util.parse_fields("a/b,a(c)") == {"a": {"b": None, "c": None}}
    assert util.parse_fields("a/b,a") == {"a": None}
    assert util.parse_fields("a(b/c, d)") == {"a": {"b": {"c": None},
                                                    "d": None}}
    for bad in ["items(name", "items)", "a,,b", "a()", "/a", "a/", "a b",
                "a(b))", ",a"]:
        with pytest.raises(util.FieldsError):
            util.parse_fields(bad)


def test_apply_fields_semantics():
    obj = {"items": {"zones/a": {"instances": [{"name": "x", "id": "1"},
                                               {"id": "2"}]},
                     "zones/b": {"warning": {"code": "NO_RESULTS_ON_PAGE"}}},
           "kind": "k", "nextPageToken": "t"}
    got = util.apply_fields(obj, util.parse_fields(
        "items/*/instances(name),nextPageToken"))
    # empty scopes go; array elements stay even when nothing is selected
    assert got == {"items": {"zones/a": {"instances": [{"name": "x"}, {}]}},
                   "nextPageToken": "t"}
    got = util.apply_fields(obj, util.parse_fields("items/*/warning/code"))
    assert got == {"items": {"zones/b": {"warning": {
        "code": "NO_RESULTS_ON_PAGE"}}}}
    assert util.apply_fields(obj, util.parse_fields("*")) == obj
    # a named member plus the wildcard: both selections apply
    m = {"m": {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}}}
    assert util.apply_fields(m, util.parse_fields("m(a/y,*/x)")) == {
        "m": {"a": {"x": 1, "y": 2}, "b": {"x": 3}}}
    assert util.parse_field_mask("name,job_spec.worker_pool_specs") == {
        "name": None, "jobSpec": {"workerPoolSpecs": None}}


def test_aggregated_instances_poll_selector(gcp):
    gcp.ctl("/_fake/instances", {"zone": "us-central1-b", "count": 40,
                                 "labels": {"gpuq-install": "f"}})
    gcp.ctl("/_fake/instances", {"zone": "europe-west4-a", "count": 2,
                                 "labels": {"gpuq-install": "f"},
                                 "status": "TERMINATED"})
    base = CP + "/aggregated/instances?prettyPrint=false&maxResults=500"
    full = gcp.call("GET", base, raw=None)
    st, lean, _ = gcp.get(base + "&fields=" + Q(POLL))
    assert st == 200
    assert set(lean) == {"items"}          # no token: one page
    assert set(lean["items"]) == {"zones/us-central1-b",
                                  "zones/europe-west4-a"}
    for scope in lean["items"].values():
        assert set(scope) == {"instances"}
        for i in scope["instances"]:
            assert set(i) <= {"name", "status", "lastStartTimestamp",
                              "lastStopTimestamp"}
            assert {"name", "status"} <= set(i)
    full_bytes = len(json.dumps(full[1], separators=(",", ":")))
    lean_bytes = len(json.dumps(lean, separators=(",", ":")))
    assert lean_bytes * 5 < full_bytes, (lean_bytes, full_bytes)
    # paging still works under the selector
    st, p1, _ = gcp.get(base.replace("500", "30") + "&fields=" + Q(POLL))
    tok = p1["nextPageToken"]
    st, p2, _ = gcp.get(base.replace("500", "30") + "&fields=" + Q(POLL) +
                        "&pageToken=" + tok)
    n = sum(len(v["instances"]) for v in p1["items"].values()) + \
        sum(len(v["instances"]) for v in p2["items"].values())
    assert n == 42 and "nextPageToken" not in p2


def test_selectors_in_every_api(gcp):
    sel = "items/*/acceleratorTypes(name,maximumCardsPerInstance)"
    ag = gcp.get(CP + "/aggregated/acceleratorTypes?fields=" + Q(sel))[1]
    t4 = [a for a in ag["items"]["zones/us-central1-a"]["acceleratorTypes"]
          if a["name"] == "nvidia-tesla-t4"][0]
    assert t4 == {"name": "nvidia-tesla-t4", "maximumCardsPerInstance": 4}
    assert all("warning" not in v for v in ag["items"].values())
    rl = gcp.get(CP + "/regions?fields=" + Q("items(name,quotas/metric)"))[1]
    assert set(rl["items"][0]) == {"name", "quotas"}
    assert set(rl["items"][0]["quotas"][0]) == {"metric"}
    r = gcp.get(CP + "/regions/us-central1?fields=name,quotas(metric,limit)")
    assert set(r[1]) == {"name", "quotas"}
    assert set(r[1]["quotas"][0]) == {"metric", "limit"}
    assert set(gcp.get(CP + "?fields=quotas/metric")[1]) == {"quotas"}
    B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
    gcp.post(B + "?jobId=fb1", batch_body())
    j = gcp.get(B + "?fields=" + Q("jobs(name,status/state),nextPageToken"))
    assert j[1] == {"jobs": [{"name": "projects/gpuq-demo/locations/"
                              "us-central1/jobs/fb1",
                              "status": {"state": "QUEUED"}}]}
    assert gcp.get(B + "/fb1?fields=uid")[1].keys() == {"uid"}
    V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"
    gcp.post(V, vertex_body("fv1"))
    v = gcp.get(V + "?fields=" + Q("customJobs(displayName,state)"))[1]
    assert v == {"customJobs": [{"displayName": "fv1",
                                 "state": "JOB_STATE_QUEUED"}]}
    v = gcp.get(V + "?readMask=display_name,labels")[1]
    assert v == {"customJobs": [{"displayName": "fv1",
                                 "labels": {"gpuq-install": "t"}}]}
    s = gcp.get("/v1/services/6F81-5844-456A/skus?pageSize=3&fields=" +
                Q("skus(description,category/resourceGroup),nextPageToken"))
    assert set(s[1]) == {"skus", "nextPageToken"}
    assert set(s[1]["skus"][0]) == {"description", "category"}
    assert set(s[1]["skus"][0]["category"]) == {"resourceGroup"}
    gcp.call("POST", "/upload/storage/v1/b/bk/o?uploadType=media&name=a%2Fb",
             raw=b"x")
    o = gcp.get("/storage/v1/b/bk/o?fields=" + Q("items(name,size)"))[1]
    assert o == {"items": [{"name": "a/b", "size": "1"}]}
    qi = gcp.get("/v1/projects/gpuq-demo/locations/global/services/"
                 "aiplatform.googleapis.com/quotaInfos?pageSize=2&fields=" +
                 Q("quotaInfos/metric"))[1]
    assert [set(x) for x in qi["quotaInfos"]] == [{"metric"}, {"metric"}]


def test_bad_selector_is_400_without_side_effects(gcp):
    Z = CP + "/zones/us-central1-a"
    st, e, _ = gcp.post(Z + "/instances?fields=" + Q("name,(status"),
                        instance_body("sel1"))
    assert st == 400 and e["error"]["errors"][0]["reason"] == "invalid"
    assert "Invalid field selection" in e["error"]["message"]
    assert gcp.resource("sel1") is None
    st, e, _ = gcp.get("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                       "?fields=" + Q("jobs(name"))
    assert st == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
