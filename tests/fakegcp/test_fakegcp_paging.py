"""Paging at scale (README "Speed"): resources are indexed per (project,
zone|region), page tokens hold the position of the last resource
returned, so a page costs O(page size) whatever the total, and a page
stays right when resources come and go between pages."""
import time
import urllib.parse

from fakegcp_fixtures import CP

Q = urllib.parse.quote
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"


def walk(gcp, url, key, limit=None):
    """All items of a list, the number of pages, the slowest page (s)."""
    out, tok, pages, worst = [], None, 0, 0.0
    while True:
        t0 = time.time()
        st, l, _ = gcp.get(url + ("&pageToken=" + tok if tok else ""))
        worst = max(worst, time.time() - t0)
        assert st == 200, l
        pages += 1
        it = l.get(key, [])
        if isinstance(it, dict):
            for scope, v in it.items():
                out += [(scope, i["name"]) for i in v.get("instances", [])]
        else:
            out += [i.get("name") or i.get("displayName") for i in it]
        tok = l.get("nextPageToken")
        if not tok or (limit and pages >= limit):
            return out, pages, worst


def test_tokens_are_positions(gcp):
    gcp.ctl("/_fake/instances", {"service": "vertex", "count": 250,
                                 "state": "JOB_STATE_SUCCEEDED"})
    st, p1, _ = gcp.get(V + "?pageSize=100")
    first = [j["name"] for j in p1["customJobs"]]
    # newest first
    ct = [j["createTime"] for j in p1["customJobs"]]
    assert ct == sorted(ct, reverse=True)
    # jobs already returned go away, a new one arrives: the next pages
    # neither skip nor repeat anything
    for name in first[:2]:
        assert gcp.delete("/v1/" + name)[0] == 200
    gcp.ctl("/_fake/instances", {"service": "vertex", "count": 1,
                                 "name_prefix": "late"})
    rest, tok = [], p1["nextPageToken"]
    while tok:
        l = gcp.get(V + "?pageSize=100&pageToken=" + tok)[1]
        rest += [j["name"] for j in l["customJobs"]]
        tok = l.get("nextPageToken")
    assert len(rest) == 150 and not set(rest) & set(first)
    # a token is good for its own list and filter only
    f = Q('labels.a:*')
    for url in (V + "?filter=" + f, B + "?pageSize=5",
                "/v1/projects/gpuq-demo/locations/europe-west4/customJobs?"):
        st, e, _ = gcp.get(url + "&pageToken=" + p1["nextPageToken"])
        assert st == 400 and "pageToken" in e["error"]["message"], url
    assert gcp.get(V + "?pageToken=bm9wZQ")[0] == 400


def test_batch_order_by(gcp):
    for i in (3, 1, 2):
        gcp.ctl("/_fake/instances", {"service": "batch", "count": 1,
                                     "name_prefix": "j%d" % i})
        time.sleep(0.01)

    def names(order):
        l = gcp.get(B + "?pageSize=2&orderBy=" + Q(order))[1]
        n = [j["name"].rsplit("/", 1)[1][:2] for j in l["jobs"]]
        l = gcp.get(B + "?pageSize=2&orderBy=%s&pageToken=%s" % (
            Q(order), l["nextPageToken"]))[1]
        return n + [j["name"].rsplit("/", 1)[1][:2] for j in l["jobs"]]
    assert names("name") == ["j1", "j2", "j3"]
    assert names("name desc") == ["j3", "j2", "j1"]
    assert names("create_time") == ["j3", "j1", "j2"]
    assert names("create_time  desc") == ["j2", "j1", "j3"]
    st, e, _ = gcp.get(B + "?orderBy=state")
    assert st == 400 and "create_time desc" in e["error"]["message"]


def test_lists_of_10000(gcp):
    """10,000 of each: every page well under a second, and whole walks far
    below what a page that costs O(total) took (3 s for Compute's 20
    pages, 20-27 s for Vertex's and Batch's 100 pages)."""
    lab = {"gpuq-install": "big"}
    for z in ("us-central1-a", "europe-west4-b"):
        gcp.ctl("/_fake/instances", {"zone": z, "count": 5000,
                                     "labels": lab})
    gcp.ctl("/_fake/instances", {"zone": "us-central1-a", "count": 7,
                                 "labels": {"gpuq-install": "other"}})
    for svc in ("batch", "vertex"):
        gcp.ctl("/_fake/instances", {"service": svc, "count": 10000,
                                     "labels": lab})
    f = Q('labels.gpuq-install="big"')
    sel = Q("items/*/instances(name,status,lastStartTimestamp,"
            "lastStopTimestamp),nextPageToken")
    t0 = time.time()
    got, pages, worst = walk(gcp, CP + "/aggregated/instances?filter=%s"
                             "&maxResults=500&prettyPrint=false&fields=%s" %
                             (f, sel), "items")
    dt = time.time() - t0
    assert pages == 20 and len(set(got)) == 10000
    assert {s for s, n in got} == {"zones/us-central1-a",
                                   "zones/europe-west4-b"}
    assert worst < 1.0 and dt < 2.0, (worst, dt)
    for url, key in ((B + "?pageSize=100&prettyPrint=false&filter=" + f,
                      "jobs"),
                     (V + "?pageSize=100&prettyPrint=false&filter=" + f,
                      "customJobs")):
        t0 = time.time()
        got, pages, worst = walk(gcp, url, key)
        dt = time.time() - t0
        assert pages == 100 and len(set(got)) == 10000, url
        assert worst < 1.0 and dt < 5.0, (url, worst, dt)
    # a filter few resources pass still answers in one quick page
    t0 = time.time()
    got, pages, _ = walk(gcp, CP + "/zones/us-central1-a/instances?filter=" +
                         Q('labels.gpuq-install="other"'), "items")
    assert len(got) == 7 and pages == 1 and time.time() - t0 < 1.0
