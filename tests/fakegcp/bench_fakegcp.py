#!/usr/bin/python3
"""Time list pages of the fake cloud at scale (README "Speed").

    /usr/bin/python3 tests/fakegcp/bench_fakegcp.py [--count N]
        [--source DIR]

Starts a fakegcp (from DIR, default this folder, so an older copy can be
measured the same way), bulk-creates N Compute instances, Batch jobs and
Vertex jobs carrying the install label, then walks every page of the
lists gpuqd polls -- with its filter and ``fields`` -- and prints, per
list, items, pages, total wall time, mean and worst ms per page and bytes.
A second walk uses a filter matching 1 % of the resources.
Uses only the control API and the public REST paths."""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fakeclient import FakeGCP, get_token, make_service_account_key  # noqa

Q = urllib.parse.quote
P = "gpuq-demo"
POLL = ("items/*/instances(name,status,lastStartTimestamp,"
        "lastStopTimestamp),nextPageToken,unreachables")
BATCH = ("jobs(name,labels,status(state,statusEvents),createTime,"
         "updateTime),nextPageToken,unreachable")
VERTEX = ("customJobs(name,displayName,labels,state,error,createTime,"
          "startTime,endTime),nextPageToken")


def lists(flt):
    f = Q(flt)
    return [
        ("compute aggregated +fields", "/compute/v1/projects/%s/aggregated/"
         "instances?filter=%s&maxResults=500&returnPartialSuccess=true"
         "&fields=%s" % (P, f, Q(POLL)), "items"),
        ("compute aggregated", "/compute/v1/projects/%s/aggregated/"
         "instances?filter=%s&maxResults=500" % (P, f), "items"),
        ("compute zonal list", "/compute/v1/projects/%s/zones/us-central1-a/"
         "instances?filter=%s&maxResults=500" % (P, f), "items"),
        ("batch list +fields", "/v1/projects/%s/locations/us-central1/jobs"
         "?filter=%s&pageSize=100&fields=%s" % (P, f, Q(BATCH)), "jobs"),
        ("vertex list +fields", "/v1/projects/%s/locations/us-central1/"
         "customJobs?filter=%s&pageSize=100&fields=%s" % (P, f, Q(VERTEX)),
         "customJobs"),
    ]


def walk(url, token, path, key):
    t0, pages, n, byt, worst, tok = time.time(), 0, 0, 0, 0.0, None
    while True:
        t1 = time.time()
        req = urllib.request.Request(
            url + path + "&prettyPrint=false" +
            ("&pageToken=" + tok if tok else ""),
            headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(req, timeout=600) as r:
            b = r.read()
        worst = max(worst, time.time() - t1)
        o = json.loads(b)
        byt += len(b)
        pages += 1
        it = o.get(key, [])
        n += sum(len(v.get("instances", [])) for v in it.values()) \
            if isinstance(it, dict) else len(it)
        tok = o.get("nextPageToken")
        if not tok:
            break
    return n, pages, time.time() - t0, worst, byt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--source", default=HERE,
                    help="folder holding the fakegcp.py to measure")
    a = ap.parse_args()
    import fakeclient
    fakeclient.HERE = os.path.abspath(a.source)
    with tempfile.TemporaryDirectory() as d:
        fake = FakeGCP.start(d + "/state", speed=1)
        try:
            kf = make_service_account_key(fake, d + "/sa.json")
            tok = get_token(fake, kf)["access_token"]
            rare = max(1, a.count // 100)
            for svc in ("compute", "batch", "vertex"):
                t0 = time.time()
                for lab, n in (("bench", a.count - rare), ("rare", rare)):
                    fake.ctl("/_fake/instances", {
                        "service": svc, "count": n, "name_prefix": lab,
                        "zone": "us-central1-a",
                        "labels": {"gpuq-install": lab}})
                print("%-7s %6d created in %.2f s" % (svc, a.count,
                                                       time.time() - t0))
            for flt in ('labels.gpuq-install="bench"',
                        'labels.gpuq-install="rare"'):
                print("filter %s" % flt)
                for name, path, key in lists(flt):
                    n, pages, dt, worst, byt = walk(fake.url, tok, path, key)
                    print("  %-27s %6d items %4d pages %7.2f s %7.1f ms/page"
                          " (worst %6.1f) %9d bytes" % (
                              name, n, pages, dt, dt / pages * 1000,
                              worst * 1000, byt))
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
