"""Compute Engine: quotas, zones, accelerator types, instances, operations,
preemption and the simulated workload (DESIGN GA, C)."""
import urllib.error
import uuid

import pytest

from fakegcp_fixtures import CP, instance_body

Z = CP + "/zones/us-central1-a"


def test_regions_projects_zones(gcp):
    st, r, _ = gcp.get(CP + "/regions/us-central1")
    assert st == 200 and r["status"] == "UP"
    q = {x["metric"]: x for x in r["quotas"]}
    assert q["NVIDIA_T4_GPUS"]["limit"] == 16.0
    assert q["PREEMPTIBLE_NVIDIA_T4_GPUS"]["usage"] == 0.0
    assert q["CPUS"]["limit"] == 1000.0
    gcp.ctl("/_fake/quota", {"region": "us-central1",
                             "metric": "NVIDIA_T4_GPUS", "limit": 8,
                             "usage": 3})
    q = {x["metric"]: x for x in gcp.get(CP + "/regions/us-central1")[1]
         ["quotas"]}
    assert q["NVIDIA_T4_GPUS"] == {"metric": "NVIDIA_T4_GPUS", "limit": 8.0,
                                   "usage": 3.0}
    st, rl, _ = gcp.get(CP + "/regions?fields=items(name,quotas)")
    assert len(rl["items"]) > 20 and set(rl["items"][0]) == {"name",
                                                             "quotas"}
    p = gcp.get(CP)[1]
    assert {q["metric"] for q in p["quotas"]} >= {"GPUS_ALL_REGIONS",
                                                  "CPUS_ALL_REGIONS"}
    zl = gcp.get(CP + "/zones")[1]["items"]
    assert any(z["name"] == "us-central1-a" and
               z["region"].endswith("/regions/us-central1") for z in zl)
    assert gcp.get(CP + "/regions/mars-north1")[0] == 404
    assert gcp.get(CP + "/quota")[0] == 404   # unknown path: HTML 404


def test_accelerator_types_and_aggregated_paging(gcp):
    st, al, _ = gcp.get(Z + "/acceleratorTypes")
    t4 = [a for a in al["items"] if a["name"] == "nvidia-tesla-t4"][0]
    assert t4["maximumCardsPerInstance"] == 4 and t4["zone"] == \
        "us-central1-a"
    items, tok, pages = {}, None, 0
    while True:
        st, ag, _ = gcp.get(CP + "/aggregated/acceleratorTypes?maxResults=50"
                            + ("&pageToken=" + tok if tok else ""))
        assert st == 200
        pages += 1
        for scope, v in ag["items"].items():
            if "acceleratorTypes" in v:
                items.setdefault(scope, []).extend(v["acceleratorTypes"])
            else:
                assert v["warning"]["code"] == "NO_RESULTS_ON_PAGE"
        tok = ag.get("nextPageToken")
        if not tok:
            break
    assert pages > 2
    assert any(a["name"] == "nvidia-l4" for a in items["zones/us-central1-a"])


def test_insert_lifecycle_and_ops(gcp):
    st, op, _ = gcp.post(Z + "/instances", instance_body("vm1"))
    assert st == 200 and op["status"] in ("PENDING", "RUNNING")
    assert op["operationType"] == "insert"
    st, op, _ = gcp.post(Z + "/operations/%s/wait" % op["name"])
    assert op["status"] == "DONE" and "error" not in op
    inst = gcp.get(Z + "/instances/vm1")[1]
    assert inst["status"] in ("PROVISIONING", "STAGING", "RUNNING")
    assert inst["scheduling"]["provisioningModel"] == "SPOT"
    assert inst["machineType"].endswith("/machineTypes/n1-standard-8")
    gcp.wait_for(lambda: gcp.get(Z + "/instances/vm1")[1]["status"] ==
                 "RUNNING", timeout=8)
    q = {x["metric"]: x for x in gcp.get(CP + "/regions/us-central1")[1]
         ["quotas"]}
    assert q["PREEMPTIBLE_NVIDIA_T4_GPUS"]["usage"] == 1.0
    assert q["CPUS"]["usage"] == 8.0
    st, op, _ = gcp.delete(Z + "/instances/vm1")
    assert op["operationType"] == "delete"
    gcp.post(Z + "/operations/%s/wait" % op["name"])
    gcp.wait_for(lambda: gcp.get(Z + "/instances/vm1")[0] == 404)
    ops = gcp.get(Z + "/operations")[1]["items"]
    assert [o["operationType"] for o in ops] == ["insert", "delete"]


def test_request_id_idempotency_and_conflicts(gcp):
    rid = str(uuid.uuid4())
    a = gcp.post(Z + "/instances?requestId=" + rid, instance_body("vm2"))[1]
    b = gcp.post(Z + "/instances?requestId=" + rid, instance_body("vm2"))[1]
    assert a["name"] == b["name"] and b["clientOperationId"] == rid
    st, e, _ = gcp.post(Z + "/instances?requestId=" + str(uuid.uuid4()),
                        instance_body("vm2"))
    assert st == 409 and e["error"]["errors"][0]["reason"] == "alreadyExists"
    st, e, _ = gcp.post(Z + "/instances?requestId=nope", instance_body("x"))
    assert st == 400
    d1 = gcp.delete(Z + "/instances/vm2?requestId=" + rid.replace(
        rid[:8], "aaaaaaaa"))[1]
    d2 = gcp.delete(Z + "/instances/vm2?requestId=" + rid.replace(
        rid[:8], "aaaaaaaa"))[1]
    assert d1["name"] == d2["name"]
    assert len([r for r in gcp.ctl("/_fake/resources")["resources"]
                if r["name"] == "vm2"]) == 1


def test_insert_validation(gcp):
    b = instance_body("vm3")
    b["scheduling"]["fooBar"] = 1
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
    assert "Unknown name \"fooBar\" at 'instance.scheduling'" in \
        e["error"]["message"]
    b = instance_body("vm3")
    b["scheduling"]["provisioningModel"] = "CHEAP"
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400 and "instance.scheduling.provisioningModel" in \
        e["error"]["message"]
    b = instance_body("vm3")
    b["scheduling"] = "SPOT"
    assert gcp.post(Z + "/instances", b)[0] == 400
    b = instance_body("vm3")
    b["guestAccelerators"][0]["acceleratorCount"] = "two"
    assert gcp.post(Z + "/instances", b)[0] == 400
    b = instance_body("vm3")
    b["guestAccelerators"][0]["acceleratorCount"] = "2"  # int as string: ok
    assert gcp.post(Z + "/instances", b)[0] == 200
    b = instance_body("vm4")
    del b["name"]
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400 and "resource.name" in e["error"]["message"]
    st, e, _ = gcp.post(Z + "/instances", instance_body("vm4", count=5))
    assert st == 400 and e["error"]["errors"][0]["reason"] == "invalid"
    st, e, _ = gcp.post(CP + "/zones/us-central1-f/instances",
                        instance_body("vm4", zone="us-central1-f",
                                      gpu="nvidia-l4"))
    assert st == 400 and "not available" in e["error"]["message"]
    b = instance_body("vm4", spot=False)
    b["scheduling"]["onHostMaintenance"] = "MIGRATE"
    assert gcp.post(Z + "/instances", b)[0] == 400
    st, e, _ = gcp.get(Z + "/instances?bogus=1")
    assert st == 400 and "bogus" in e["error"]["message"]
    assert gcp.get(Z + "/instances?maxResults=900")[0] == 400


def test_quota_exceeded_http_and_operation(gcp):
    gcp.ctl("/_fake/quota", {"region": "us-central1",
                             "metric": "PREEMPTIBLE_NVIDIA_T4_GPUS",
                             "limit": 2})
    assert gcp.post(Z + "/instances", instance_body("q1", count=2))[0] == 200
    st, e, _ = gcp.post(Z + "/instances", instance_body("q2"))
    assert st == 403 and e["error"]["errors"][0]["reason"] == "quotaExceeded"
    assert "PREEMPTIBLE_NVIDIA_T4_GPUS" in e["error"]["message"]
    gcp.ctl("/_fake/config", {"compute_quota_error": "operation"})
    st, op, _ = gcp.post(Z + "/instances", instance_body("q2"))
    assert st == 200
    op = gcp.post(Z + "/operations/%s/wait" % op["name"])[1]
    assert op["status"] == "DONE" and op["httpErrorStatusCode"] == 403
    err = op["error"]["errors"][0]
    assert err["code"] == "QUOTA_EXCEEDED"
    assert err["errorDetails"][0]["quotaInfo"]["dimensions"] == {
        "region": "us-central1"}
    assert gcp.get(Z + "/instances/q2")[0] == 404
    # on-demand VMs use the on-demand metric; global GPU cap
    gcp.ctl("/_fake/quota", {"region": "global", "metric": "GPUS_ALL_REGIONS",
                             "limit": 2})
    op = gcp.post(Z + "/instances", instance_body("q3", spot=False))[1]
    op = gcp.post(Z + "/operations/%s/wait" % op["name"])[1]
    assert "GPUS_ALL_REGIONS" in op["error"]["errors"][0]["message"]


def test_stockout(gcp):
    gcp.ctl("/_fake/stockout", {"zone": "us-central1-a",
                                "gpu": "nvidia-tesla-t4",
                                "provisioning": "SPOT", "on": True})
    op = gcp.post(Z + "/instances", instance_body("s1"))[1]
    op = gcp.post(Z + "/operations/%s/wait" % op["name"])[1]
    assert op["httpErrorStatusCode"] == 503
    e = op["error"]["errors"][0]
    assert e["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    assert "Try a different zone, or try again later." in e["message"]
    assert gcp.get(Z + "/instances/s1")[0] == 404
    # on-demand still works
    op = gcp.post(Z + "/instances", instance_body("s2", spot=False))[1]
    assert "error" not in gcp.post(Z + "/operations/%s/wait" % op["name"])[1]
    gcp.ctl("/_fake/stockout", {"zone": "us-central1-a",
                                "gpu": "nvidia-tesla-t4", "provisioning":
                                "ANY", "with_details": True,
                                "zones_available": ["us-central1-b",
                                                    "us-central1-c"]})
    op = gcp.post(Z + "/instances", instance_body("s3", spot=False))[1]
    e = gcp.post(Z + "/operations/%s/wait" % op["name"])[1]["error"][
        "errors"][0]
    assert e["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
    info = e["errorDetails"][0]["errorInfo"]
    assert info["metadatas"]["zonesAvailable"] == "us-central1-b,us-central1-c"
    gcp.ctl("/_fake/stockout", {"zone": "us-central1-a",
                                "gpu": "nvidia-tesla-t4",
                                "provisioning": "ANY", "on": False})
    op = gcp.post(Z + "/instances", instance_body("s4", spot=False))[1]
    assert "error" not in gcp.post(Z + "/operations/%s/wait" % op["name"])[1]


def test_list_filter_and_paging(gcp):
    gcp.ctl("/_fake/instances", {"zone": "us-central1-b", "count": 1203,
                                 "labels": {"gpuq-install": "bench"}})
    gcp.ctl("/_fake/instances", {"zone": "us-central1-b", "count": 3,
                                 "labels": {"other": "x"},
                                 "status": "TERMINATED"})
    zb = CP + "/zones/us-central1-b/instances"
    seen, tok, pages = [], None, 0
    while True:
        q = "?filter=" + "labels.gpuq-install%20%3D%20%22bench%22"
        st, l, _ = gcp.get(zb + q + ("&pageToken=" + tok if tok else "") +
                           "&prettyPrint=false")
        assert st == 200
        pages += 1
        assert len(l["items"]) <= 500
        seen += [i["name"] for i in l["items"]]
        tok = l.get("nextPageToken")
        if not tok:
            break
    assert pages == 3 and len(set(seen)) == 1203
    for f, n in [("labels.other:*", 3), ('labels.other="x"', 3),
                 ("status = TERMINATED", 3),
                 ("status = RUNNING labels.gpuq-install:*", 1203),
                 ("(status = TERMINATED) AND (labels.other = \"y\")", 0)]:
        import urllib.parse
        l = gcp.get(zb + "?maxResults=500&filter=" + urllib.parse.quote(f))[1]
        cnt, tok = len(l.get("items", [])), l.get("nextPageToken")
        while tok:
            l = gcp.get(zb + "?filter=%s&pageToken=%s" % (
                urllib.parse.quote(f), tok))[1]
            cnt += len(l.get("items", []))
            tok = l.get("nextPageToken")
        assert cnt == n, f
    ag = gcp.get(CP + "/aggregated/instances?filter=labels.other%3A*")[1]
    assert len(ag["items"]["zones/us-central1-b"]["instances"]) == 3
    assert "warning" in ag["items"]["zones/us-central1-a"]
    assert gcp.get(zb + "?pageToken=garbage")[0] == 400


def test_workload_guest_attributes_and_preemption(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    env = {"FAKEGCP_WORK_SECONDS": "300", "FAKEGCP_CKPT_EVERY": "60",
           "FAKEGCP_EXIT": "3", "GPUQ_JOB_ID": "7", "GPUQ_ATTEMPT": "1",
           "GPUQ_CHECKPOINT_DIR": "gs://bk/jobs/7/checkpoints/"}
    gcp.post(Z + "/instances", instance_body("w1", env=env, action="STOP"))
    gcp.wait_for(lambda: gcp.get(Z + "/instances/w1")[1]["status"] ==
                 "TERMINATED", timeout=10)
    ga = gcp.get(Z + "/instances/w1/getGuestAttributes?queryPath=gpuq/")[1]
    assert ga["queryValue"]["items"] == [{"namespace": "gpuq",
                                          "key": "exit-code", "value": "3"}]
    ops = gcp.get(Z + "/operations?filter=" +
                  "operationType%3D%22compute.instances.guestTerminate%22")[1]
    assert len(ops["items"]) == 1
    w = gcp.ctl("/_fake/work?job=7")
    assert w["work_done"] == 300 and w["completed"]
    assert len(w["checkpoints"]) == 5
    # preemption of a DELETE-action Spot VM
    env2 = dict(env, FAKEGCP_WORK_SECONDS="100000", GPUQ_JOB_ID="8")
    gcp.post(Z + "/instances", instance_body("w2", env=env2))
    gcp.wait_for(lambda: gcp.get(Z + "/instances/w2")[1]["status"] ==
                 "RUNNING")
    assert gcp.ctl("/_fake/preempt", {"name": "w2"})["ok"]
    link = gcp.get(Z + "/instances/w2")[1]["selfLink"]
    gcp.wait_for(lambda: gcp.get(Z + "/instances/w2")[0] == 404)
    import urllib.parse
    f = 'operationType="compute.instances.preempted" AND targetLink="%s"' % \
        link
    ops = gcp.get(Z + "/operations?filter=" + urllib.parse.quote(f))[1]
    assert len(ops["items"]) == 1 and ops["items"][0]["status"] == "DONE"
    r = [x for x in gcp.ctl("/_fake/resources")["resources"]
         if x["name"] == "w2"][0]
    assert r["deleted"] and r["runs"][0]["stop_reason"] == "preempted"
    # host maintenance of a STOP VM
    gcp.post(Z + "/instances", instance_body("w3", env=env2, spot=False))
    gcp.wait_for(lambda: gcp.get(Z + "/instances/w3")[1]["status"] ==
                 "RUNNING")
    gcp.ctl("/_fake/maintenance", {"name": "w3"})
    gcp.wait_for(lambda: gcp.get(Z + "/instances/w3")[1]["status"] ==
                 "TERMINATED")
    ops = gcp.get(Z + "/operations")[1]["items"]
    assert any(o["operationType"] ==
               "compute.instances.terminateOnHostMaintenance" for o in ops)
    # The guest saw its container stopped by the shutdown's SIGTERM and
    # reported 143: only the operation tells a host event from a failure.
    ga = gcp.get(Z + "/instances/w3/getGuestAttributes?queryPath=gpuq/")[1]
    assert ga["queryValue"]["items"] == [{"namespace": "gpuq",
                                          "key": "exit-code", "value": "143"}]
    import urllib.error
    try:
        gcp.ctl("/_fake/preempt", {"name": "w3"})
        assert False
    except urllib.error.HTTPError as e:
        assert e.code == 409
    try:
        gcp.ctl("/_fake/preempt", {"name": "nope"})
        assert False
    except urllib.error.HTTPError as e:
        assert e.code == 404


def test_regions_without_quota_info(gcp):
    """Fail-open quota lookup (A.1): no `quotas`, a quotaStatusWarning
    QUOTA_INFO_UNAVAILABLE; fail-closed under the org policy."""
    import urllib.error
    gcp.ctl("/_fake/config", {"quota_info_unavailable": ["us-east1"]})
    st, r, _ = gcp.get(CP + "/regions/us-east1?fields=name,status,quotas,"
                       "quotaStatusWarning")
    assert st == 200 and "quotas" not in r and r["status"] == "UP"
    w = r["quotaStatusWarning"]
    assert w["code"] == "QUOTA_INFO_UNAVAILABLE" and w["message"]
    assert w["data"] == [{"key": "region", "value": "us-east1"}]
    r = gcp.get(CP + "/regions/us-central1")[1]
    assert r["quotas"] and "quotaStatusWarning" not in r
    rl = gcp.get(CP + "/regions?fields=items(name,quotas,quotaStatusWarning)"
                 )[1]["items"]
    by = {x["name"]: x for x in rl}
    assert set(by["us-east1"]) == {"name", "quotaStatusWarning"}
    assert set(by["us-west1"]) == {"name", "quotas"}
    gcp.ctl("/_fake/config", {"quota_info_unavailable": True})
    rl = gcp.get(CP + "/regions")[1]["items"]
    assert all("quotas" not in x and x["quotaStatusWarning"] for x in rl)
    # projects.get keeps its global quotas
    assert gcp.get(CP)[1]["quotas"]
    gcp.ctl("/_fake/config", {"quota_info_unavailable": ["us-east1"],
                              "require_basic_quota_in_response": True})
    st, e, _ = gcp.get(CP + "/regions/us-east1")
    assert st == 503 and "requireBasicQuotaInResponse" in \
        e["error"]["message"]
    assert gcp.get(CP + "/regions")[0] == 503
    assert gcp.get(CP + "/regions/us-central1")[0] == 200
    try:
        gcp.ctl("/_fake/config", {"quota_info_unavailable": ["mars-1"]})
        assert False
    except urllib.error.HTTPError as e:
        assert e.code == 400
    gcp.ctl("/_fake/reset", {})     # (forgets tokens too)
    assert gcp.ctl("/_fake/config")["quota_info_unavailable"] == []


def test_unreachable_zones(gcp):
    """Aggregated lists skip unreachable zones: `unreachables` and an
    UNREACHABLE scope warning with returnPartialSuccess=true, else 503."""
    import urllib.parse
    for z in ("us-central1-a", "us-central1-b"):
        gcp.ctl("/_fake/instances", {"zone": z, "count": 3})
    gcp.ctl("/_fake/config", {"unreachable_zones": ["us-central1-b"]})
    ag = CP + "/aggregated/instances?returnPartialSuccess=true"
    st, l, _ = gcp.get(ag)
    assert st == 200 and l["unreachables"] == ["zones/us-central1-b"]
    assert len(l["items"]["zones/us-central1-a"]["instances"]) == 3
    assert l["items"]["zones/us-central1-b"]["warning"]["code"] == \
        "UNREACHABLE"
    sel = urllib.parse.quote("items/*/instances(name),unreachables")
    l = gcp.get(ag + "&fields=" + sel)[1]
    assert set(l) == {"items", "unreachables"}
    assert set(l["items"]) == {"zones/us-central1-a"}
    st, e, _ = gcp.get(CP + "/aggregated/instances")
    assert st == 503 and "returnPartialSuccess" in e["error"]["message"]
    a = gcp.get(CP + "/aggregated/acceleratorTypes?returnPartialSuccess="
                "true")[1]
    assert a["unreachables"] == ["zones/us-central1-b"]
    # zonal calls are not affected
    assert len(gcp.get(CP + "/zones/us-central1-b/instances")[1][
        "items"]) == 3
    gcp.ctl("/_fake/config", {"unreachable_zones": []})
    assert "unreachables" not in gcp.get(ag)[1]


def test_image_from_family(gcp):
    """images.getFromFamily of gpuq's boot image family: an Image READY
    and not deprecated; cfg boot_image makes it DEPRECATED or 404."""
    fam = ("/compute/v1/projects/deeplearning-platform-release/global/"
           "images/family/common-cu128-ubuntu-2204-nvidia-570")
    st, img, _ = gcp.get(fam)
    assert st == 200 and img["kind"] == "compute#image"
    assert img["status"] == "READY" and "deprecated" not in img
    assert img["family"] == "common-cu128-ubuntu-2204-nvidia-570"
    assert img["name"].startswith(img["family"] + "-v")
    assert img["selfLink"].endswith("/deeplearning-platform-release/global/"
                                    "images/" + img["name"])
    assert gcp.get(fam + "x")[0] == 404
    gcp.ctl("/_fake/config", {"boot_image": "deprecated"})
    img = gcp.get(fam)[1]
    assert img["deprecated"]["state"] == "DEPRECATED"
    gcp.ctl("/_fake/config", {"boot_image": "missing"})
    st, e, _ = gcp.get(fam)
    assert st == 404 and e["error"]["errors"][0]["reason"] == "notFound"
    gcp.ctl("/_fake/config", {"boot_image": "ready"})
    assert "deprecated" not in gcp.get(fam)[1]
    with pytest.raises(urllib.error.HTTPError) as e:
        gcp.ctl("/_fake/config", {"boot_image": "gone"})
    assert e.value.code == 400
