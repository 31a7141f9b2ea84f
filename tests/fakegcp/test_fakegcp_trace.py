"""Trace mode (fakegcp_trace.py, README "Trace mode"): Spot capacity per
zone over time from a probe trace, shared by the three services; a Spot
create in a zone without room is a stockout; capacity dropping below
what runs preempts the excess as each service does; the Billing
Catalog's Spot GPU price follows the trace; the ledger bills every
resource's seconds at its price of the moment."""
import urllib.error

from fakegcp_fixtures import CP, batch_body, instance_body, vertex_body

Z = CP + "/zones/us-central1-a"
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"
LONG = {"FAKEGCP_WORK_SECONDS": "1000000"}
SPEED = 1000            # a 10-minute round is 0.6 real seconds
HEAD = ("round_scheduled_utc,zone,region,instances_requested,"
        "instances_created,capacity_exhausted_detected,"
        "spot_h100_gpu_usd_per_hour_at_probe\n")


def write_trace(path, zones, prices=None):
    """ZONES: {zone: [capacity per round]}; PRICES: [usd or None per
    round] for every zone."""
    n = max(len(v) for v in zones.values())
    with open(path, "w") as fh:
        fh.write(HEAD)
        for i in range(n):
            ts = "2025-10-04T%02d:%02d:00Z" % (i // 6, i % 6 * 10)
            for z, caps in sorted(zones.items()):
                p = prices[i] if prices and prices[i] is not None else ""
                fh.write("%s,%s,%s,16,%d,%d,%s\n" % (
                    ts, z, z[:-2], caps[i], 16 - caps[i], p))
    return str(path)


def load(gcp, path, start_in=0.0):
    gcp.ctl("/_fake/speed", {"factor": SPEED})
    now = gcp.ctl("/_fake/time")["now"]
    return gcp.ctl("/_fake/trace", {"file": path, "format": "probe",
                                    "gpu": "nvidia-tesla-t4",
                                    "start": now + start_in}), now


def status(gcp, name):
    return gcp.get(Z + "/instances/" + name)[1]["status"]


def insert(gcp, name, spot=True, zone="us-central1-a"):
    return gcp.post(CP + "/zones/%s/instances" % zone,
                    instance_body(name, zone=zone, env=LONG, action="STOP",
                                  spot=spot))


def insert_op(gcp, name, zone="us-central1-a"):
    """The insert's Operation once DONE."""
    op = insert(gcp, name, zone=zone)[1]
    return gcp.post(CP + "/zones/%s/operations/%s/wait" % (
        zone, op["name"]))[1]


def test_capacity_stockout_and_preemption(gcp, tmp_path):
    # us-central1-a: 2 T4s for 30 rounds (18 real s), then 0, then 1.
    path = write_trace(tmp_path / "t.csv", {
        "us-central1-a": [2] * 30 + [0] * 10 + [1] * 40,
        "us-central1-b": [16] * 80})
    tr, t0 = load(gcp, path)
    assert tr["rounds"] == 80 and tr["capacity"]["us-central1-a"] == 2
    insert(gcp, "s1")
    # Batch picks a zone with room: us-central1-a while it has some.
    gcp.post(B + "?jobId=s2", batch_body(LONG))
    gcp.wait_for(lambda: status(gcp, "s1") == "RUNNING")
    gcp.wait_for(lambda: gcp.resource("s2")["state"] == "RUNNING")
    assert gcp.resource("s2")["zone"] == "us-central1-a"
    assert gcp.ctl("/_fake/trace")["used"]["us-central1-a"] == 2
    # Full: a third Spot VM is refused with Compute's stockout.
    op = insert_op(gcp, "s3")
    assert op["error"]["errors"][0]["code"] == \
        "ZONE_RESOURCE_POOL_EXHAUSTED", op
    # Vertex AI goes to the zone with room; on-demand is not limited.
    jid = gcp.post(V, vertex_body("s4", LONG))[1]["name"].rsplit("/")[-1]
    gcp.wait_for(lambda: gcp.resource("s4")["state"] ==
                 "JOB_STATE_RUNNING")
    assert gcp.resource("s4")["zone"] == "us-central1-b"
    insert(gcp, "od1", spot=False)
    gcp.wait_for(lambda: status(gcp, "od1") == "RUNNING")
    # Round 30: no capacity: both Spot resources are preempted as their
    # services do it; the on-demand VM and zone b's job run on.
    gcp.wait_for(lambda: status(gcp, "s1") == "TERMINATED", timeout=30)
    ops = gcp.get(Z + "/operations")[1]["items"]
    assert any(o["operationType"] == "compute.instances.preempted" and
               o["targetLink"].endswith("/s1") for o in ops)
    gcp.wait_for(lambda: gcp.resource("s2")["state"] == "FAILED")
    ev = gcp.get(B + "/s2")[1]["status"]["statusEvents"][-1]
    assert ev["taskExecution"]["exitCode"] == 50001
    assert status(gcp, "od1") == "RUNNING"
    assert gcp.resource("s4")["state"] == "JOB_STATE_RUNNING"
    now = gcp.ctl("/_fake/time")["now"]
    assert now - t0 >= 30 * 600
    tr = gcp.ctl("/_fake/trace")
    assert tr["preempted"] == 2 and tr["used"]["us-central1-a"] == 0


def test_excess_only_is_preempted(gcp, tmp_path):
    # 3 GPUs, then 1: the two newest of three Spot VMs go.
    path = write_trace(tmp_path / "t.csv", {
        "us-central1-a": [3] * 20 + [1] * 50})
    load(gcp, path)
    for n in ("e1", "e2", "e3"):
        insert(gcp, n)
        gcp.wait_for(lambda: status(gcp, n) == "RUNNING")
    gcp.wait_for(lambda: gcp.ctl("/_fake/trace")["preempted"] == 2,
                 timeout=30)
    assert status(gcp, "e1") == "RUNNING"
    gcp.wait_for(lambda: status(gcp, "e3") == "TERMINATED")
    gcp.wait_for(lambda: status(gcp, "e2") == "TERMINATED")


def test_spot_price_follows_trace_and_ledger(gcp, tmp_path):
    # Spot T4 at $0.10/h for 10 rounds, then $0.40/h.
    prices = [0.10] * 10 + [0.40] * 50
    path = write_trace(tmp_path / "t.csv", {"us-central1-a": [16] * 60},
                       prices)
    tr, t0 = load(gcp, path)
    assert tr["spot_gpu_usd_per_hour"] == {"us-central1": 0.10}

    def catalog_spot_t4():
        skus = gcp.get("/v1/services/6F81-5844-456A/skus")[1]["skus"]
        for s in skus:
            if s["description"] == "Nvidia Tesla T4 GPU attached to Spot " \
                    "Preemptible VMs running in Americas" and \
                    s["serviceRegions"] == ["us-central1"]:
                r = s["pricingInfo"][0]["pricingExpression"][
                    "tieredRates"][0]["unitPrice"]
                return int(r["units"]) + r["nanos"] / 1e9
    assert abs(catalog_spot_t4() - 0.10) < 1e-9
    insert(gcp, "l1")
    gcp.wait_for(lambda: status(gcp, "l1") == "RUNNING")
    gcp.wait_for(lambda: gcp.ctl("/_fake/time")["now"] > t0 + 12 * 600,
                 timeout=15)
    assert abs(catalog_spot_t4() - 0.40) < 1e-9
    gcp.delete(Z + "/instances/l1")
    gcp.wait_for(lambda: gcp.resource("l1")["ended"] is not None)
    led = gcp.ctl("/_fake/ledger")
    [r] = [x for x in led["resources"] if x["name"] == "l1"]
    host = r["usd_per_hour_now"] - 0.40
    assert host > 0
    cut = t0 + 10 * 600
    a, b = r["started"], r["ended"]
    assert a < cut < b
    want = host * (b - a) / 3600 + 0.10 * (cut - a) / 3600 + \
        0.40 * (b - cut) / 3600
    assert abs(r["usd"] - want) < 1e-6 * max(1.0, want), (r, want)
    assert abs(r["billed_seconds"] - (b - a)) < 1e-6
    assert abs(led["total_usd"] - r["usd"]) < 1e-6


def test_ledger_per_job(gcp, tmp_path):
    """On-demand at a fixed price: billed seconds x price, summed per
    gpuq-job label."""
    gcp.ctl("/_fake/price", {"service": "compute", "gpu": "nvidia-tesla-t4",
                             "region": "us-central1",
                             "usage_type": "OnDemand", "usd_per_hour": 1.0})
    gcp.ctl("/_fake/speed", {"factor": SPEED})
    for n, job in (("j1", "7"), ("j2", "7"), ("j3", "8")):
        gcp.post(Z + "/instances", instance_body(
            n, env=LONG, spot=False, labels={"gpuq-install": "t",
                                             "gpuq-job": job}))
        gcp.wait_for(lambda: status(gcp, n) == "RUNNING")
    for n in ("j1", "j2", "j3"):
        gcp.delete(Z + "/instances/" + n)
    for n in ("j1", "j2", "j3"):
        gcp.wait_for(lambda: gcp.resource(n)["ended"] is not None)
    led = gcp.ctl("/_fake/ledger")
    rs = {r["name"]: r for r in led["resources"]}
    # The ledger rounds each dollar figure to 6 places, so a sum of two
    # rounded figures may differ from the rounded sum by up to 1.5e-6.
    for r in rs.values():
        assert abs(r["usd"] - r["usd_per_hour_now"] * r["billed_seconds"] /
                   3600) < 1e-5
    assert rs["j1"]["usd_per_hour_now"] > 1.0       # GPU + host
    j7 = led["jobs"]["7"]
    assert j7["resources"] == 2
    assert abs(j7["usd"] - rs["j1"]["usd"] - rs["j2"]["usd"]) < 1e-5
    assert abs(led["jobs"]["8"]["usd"] - rs["j3"]["usd"]) < 1e-5


def test_trace_errors(gcp, tmp_path):
    for body, word in (({}, "file"),
                       ({"file": str(tmp_path / "none.csv")}, "cannot read"),
                       ({"file": "x", "format": "nope"}, "format"),
                       ({"file": "x", "format": "cbl"}, "zone"),
                       ({"file": "x", "gpu": "nvidia-nope"}, "gpu")):
        try:
            gcp.ctl("/_fake/trace", body)
            raise AssertionError("accepted %r" % body)
        except urllib.error.HTTPError as e:
            assert word in e.read().decode(), body


def test_cbl_trace(gcp, tmp_path):
    p = tmp_path / "z.json"
    p.write_text('{"metadata": {"gap_seconds": 300}, "data": [1, 0, 1]}')
    gcp.ctl("/_fake/speed", {"factor": 1})
    now = gcp.ctl("/_fake/time")["now"]
    tr = gcp.ctl("/_fake/trace", {"file": str(p), "format": "cbl",
                                  "zone": "us-central1-a",
                                  "gpu": "nvidia-tesla-t4",
                                  "start": now - 400})
    assert tr["gap_seconds"] == 300 and tr["round"] == 1
    assert tr["capacity"] == {"us-central1-a": 0}
    op = insert_op(gcp, "c1")
    assert op["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    gcp.ctl("/_fake/trace", method="DELETE")
    op = insert_op(gcp, "c2")
    assert "error" not in op, op
