"""The HTTP front end every API shares: injected faults, counters and the
request log, keep-alive, concurrency, the standard query parameters."""
import http.client
import time
import urllib.parse

from fakegcp_fixtures import CP, instance_body

Z = CP + "/zones/us-central1-a"


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
