"""Billing catalog, Cloud Storage, faults, counters, speed, and the
preempt-then-resume story (API-NOTES F, G, H.6)."""
import http.client
import json
import time
import urllib.parse

from fakegcp_fixtures import CP, instance_body

Z = CP + "/zones/us-central1-a"


def money(p):
    u = p["pricingInfo"][-1]["pricingExpression"]["tieredRates"][0][
        "unitPrice"]
    return int(u["units"]) + u["nanos"] / 1e9


def test_billing_services_skus_prices(gcp):
    s = gcp.get("/v1/services?pageSize=2")[1]
    assert len(s["services"]) == 2 and s["nextPageToken"]
    allsvc = gcp.get("/v1/services")[1]["services"]
    ids = {x["serviceId"]: x["displayName"] for x in allsvc}
    assert ids["6F81-5844-456A"] == "Compute Engine"
    assert ids["C7E2-9256-1C43"] == "Vertex AI"
    skus, tok, pages = [], None, 0
    while True:
        r = gcp.get("/v1/services/6F81-5844-456A/skus?pageSize=200" + (
            "&pageToken=" + tok if tok else ""))[1]
        skus += r["skus"]
        pages += 1
        tok = r.get("nextPageToken")
        if not tok:
            break
    assert pages > 1
    by = {(x["description"], x["serviceRegions"][0]): x for x in skus}
    t4 = by[("Nvidia Tesla T4 GPU running in Americas", "us-central1")]
    assert t4["category"]["resourceGroup"] == "GPU"
    assert t4["category"]["usageType"] == "OnDemand"
    assert abs(money(t4) - 0.35) < 1e-9
    sp = by[("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running "
             "in Americas", "us-central1")]
    assert sp["category"]["usageType"] == "Preemptible"
    # host VM price = vcpus * core + GiB * ram (n1-highmem-4: 4 vCPU, 26 GiB)
    core = money(by[("N1 Predefined Instance Core running in Americas",
                     "us-central1")])
    ram = money(by[("N1 Predefined Instance Ram running in Americas",
                    "us-central1")])
    from fakegcp_catalog import HOST_PRICE
    want = HOST_PRICE[("n1-highmem-4", "us-central1")][0]
    assert abs(4 * core + 26 * ram - want) / want < 0.001
    gcp.ctl("/_fake/price", {"service": "compute", "gpu": "nvidia-tesla-t4",
                             "region": "us-central1",
                             "usage_type": "Preemptible",
                             "usd_per_hour": 0.11})
    r = gcp.get("/v1/services/6F81-5844-456A/skus")[1]["skus"]
    sp = [x for x in r if x["description"].startswith(
        "Nvidia Tesla T4 GPU attached") and x["serviceRegions"] ==
        ["us-central1"]][0]
    assert abs(money(sp) - 0.11) < 1e-9
    v = gcp.get("/v1/services/C7E2-9256-1C43/skus")[1]["skus"]
    h = [x for x in v if x["description"] ==
         "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa"][0]
    assert abs(money(h) - 11.2660332) < 1e-6
    assert gcp.get("/v1/services/NOPE/skus")[0] == 404


def test_storage(gcp):
    up = "/upload/storage/v1/b/bkt/o?uploadType=media&name="
    for n in ["a/1", "a/2", "a/sub/3", "b/4", "c"]:
        st, o, _ = gcp.call("POST", up + urllib.parse.quote(n, safe=""),
                            raw=n.encode(),
                            headers={"Content-Type": "text/plain"})
        assert st == 200 and o["size"] == str(len(n))
    l = gcp.get("/storage/v1/b/bkt/o?delimiter=/")[1]
    assert l["prefixes"] == ["a/", "b/"] and [i["name"] for i in
                                                l["items"]] == ["c"]
    l = gcp.get("/storage/v1/b/bkt/o?prefix=a/&delimiter=/")[1]
    assert [i["name"] for i in l["items"]] == ["a/1", "a/2"]
    assert l["prefixes"] == ["a/sub/"]
    names, tok = [], None
    while True:
        l = gcp.get("/storage/v1/b/bkt/o?maxResults=2" + (
            "&pageToken=" + tok if tok else ""))[1]
        names += [i["name"] for i in l.get("items", [])]
        tok = l.get("nextPageToken")
        if not tok:
            break
    assert names == ["a/1", "a/2", "a/sub/3", "b/4", "c"]
    st, o, _ = gcp.get("/storage/v1/b/bkt/o/a%2Fsub%2F3")
    assert o["name"] == "a/sub/3" and o["generation"].isdigit()
    assert o["timeCreated"].endswith("Z")
    st, data, h = gcp.get("/storage/v1/b/bkt/o/a%2Fsub%2F3?alt=media")
    assert data == b"a/sub/3"
    assert gcp.delete("/storage/v1/b/bkt/o/c")[0] == 204
    assert gcp.get("/storage/v1/b/bkt/o/c")[0] == 404
    assert gcp.get("/storage/v1/b/bkt/o?maxResults=5000")[0] == 200


def test_faults(gcp):
    gcp.ctl("/_fake/fault", {"method": "POST", "path": "/instances$",
                             "status": 503, "count": 2, "retry_after": 3})
    for _ in range(2):
        st, e, h = gcp.post(Z + "/instances", instance_body("f1"))
        assert st == 503 and h["Retry-After"] == "3"
        assert e["error"]["status"] == "UNAVAILABLE"
    assert gcp.resource("f1") is None      # no side effects
    assert gcp.post(Z + "/instances", instance_body("f1"))[0] == 200
    gcp.ctl("/_fake/fault", {"path": "/jobs", "status": 429, "count": 1})
    st, e, _ = gcp.get("/v1/projects/gpuq-demo/locations/us-central1/jobs")
    assert st == 429 and e["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "details" in e["error"]
    gcp.ctl("/_fake/fault", {"path": "/regions", "latency_ms": 300,
                             "count": 1})
    t0 = time.time()
    assert gcp.get(CP + "/regions/us-central1")[0] == 200
    assert time.time() - t0 >= 0.3
    gcp.ctl("/_fake/fault", {"path": "/zones$", "drop": True, "count": 1})
    u = urllib.parse.urlsplit(gcp.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    c.request("GET", CP + "/zones",
              headers={"Authorization": "Bearer " + gcp.token})
    try:
        c.getresponse()
        assert False, "expected a dropped connection"
    except (http.client.RemoteDisconnected, ConnectionError):
        pass
    assert gcp.get(CP + "/zones")[0] == 200
    gcp.ctl("/_fake/fault", {"path": "/token", "status": 500, "count": 1})
    assert gcp.call("POST", "/token", token=False, raw=b"x=1")[0] == 500
    assert gcp.ctl("/_fake/fault")["faults"] == []


def test_counters_requests_keepalive_fields(gcp):
    gcp.ctl("/_fake/counters/reset", {})
    u = urllib.parse.urlsplit(gcp.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    for _ in range(5):      # one keep-alive connection
        c.request("GET", Z + "/instances?prettyPrint=false",
                  headers={"Authorization": "Bearer " + gcp.token})
        r = c.getresponse()
        assert r.status == 200 and r.getheader("Content-Length")
        r.read()
    c.close()
    cnt = gcp.ctl("/_fake/counters")
    assert cnt["by_method"]["compute.instances.list"] == 5
    assert cnt["total"] == 5
    req = gcp.ctl("/_fake/requests")["requests"]
    assert req[-1]["method_id"] == "compute.instances.list"
    assert req[-1]["status"] == 200
    gcp.ctl("/_fake/instances", {"count": 3, "zone": "us-central1-a"})
    l = gcp.get(Z + "/instances?fields=items(name,status),nextPageToken")[1]
    assert set(l) == {"items"} and set(l["items"][0]) == {"name", "status"}
    l = gcp.get(Z + "/instances?fields=items/name")[1]
    assert set(l["items"][0]) == {"name"}


def test_concurrency(gcp):
    import threading
    errs = []

    def worker():
        try:
            for _ in range(3):
                st = gcp.get(CP + "/zones/us-central1-b/instances")[0]
                if st != 200:
                    errs.append(st)
        except Exception as e:   # noqa
            errs.append(repr(e))
    ts = [threading.Thread(target=worker) for _ in range(200)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errs == []


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


def test_request_logged_before_reply(gcp):
    """A client that asks the request log or the counters right after its
    answer must find its request there (and with its final status)."""
    gcp.ctl("/_fake/instances", {"count": 300, "zone": "us-central1-a"})
    gcp.ctl("/_fake/counters/reset", {})
    u = urllib.parse.urlsplit(gcp.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    for i in range(60):
        # a big answer keeps the server busy writing while the client reads
        path = Z + "/instances?maxResults=%d" % (300 - i)
        c.request("GET", path, headers={"Authorization": "Bearer " +
                                         gcp.token})
        r = c.getresponse()
        r.read()
        assert r.status == 200
        last = gcp.ctl("/_fake/requests")["requests"][-1]
        assert last["query"] == "maxResults=%d" % (300 - i)
        assert last["status"] == 200
        assert last["method_id"] == "compute.instances.list"
        cnt = gcp.ctl("/_fake/counters")["by_method"]
        assert cnt["compute.instances.list"] == i + 1
        st = gcp.get(Z + "/instances/none-%d" % i)[0]
        last = gcp.ctl("/_fake/requests")["requests"][-1]
        assert st == 404 and last["status"] == 404
        assert last["path"].endswith("/none-%d" % i)
    c.close()
