"""Compute Engine reservations (API-NOTES L; fakegcp_reservation.py):
aggregatedList over pages with unreachable zones, inUseCount kept by the
VMs that name a reservation, launches into a full, missing or mismatched
reservation refused, and quota held by the reservation, not its VMs."""
from fakegcp_fixtures import CP, instance_body

KEY = "compute.googleapis.com/reservation-name"


def resv(name, zone="us-central1-a", count=2, **kw):
    r = {"name": name, "zone": zone, "machine_type": "n1-standard-8",
         "gpu": "nvidia-tesla-t4", "gpu_count": 1, "count": count,
         "specific_reservation_required": True}
    r.update(kw)
    return r


def reserved_body(name, reservation, zone="us-central1-a"):
    b = instance_body(name, zone=zone, spot=False)
    b["reservationAffinity"] = {"consumeReservationType":
                                "SPECIFIC_RESERVATION", "key": KEY,
                                "values": [reservation]}
    return b


def listing(gcp, page=500, partial=True):
    """Every reservation over all pages: {name: JSON}, pages, warnings."""
    out, warns, tok, pages = {}, {}, None, 0
    while True:
        url = CP + "/aggregated/reservations?maxResults=%d" % page
        if partial:
            url += "&returnPartialSuccess=true"
        if tok:
            url += "&pageToken=" + tok
        st, r, _ = gcp.get(url)
        assert st == 200, r
        assert r["kind"] == "compute#reservationAggregatedList"
        pages += 1
        for scope, v in r["items"].items():
            for x in v.get("reservations", []):
                out[x["name"]] = x
            if "warning" in v:
                warns[scope] = v["warning"]["code"]
        tok = r.get("nextPageToken")
        if not tok:
            return out, pages, warns


def test_aggregated_list_pages_and_warnings(gcp):
    rs = [resv("r%d" % i, zone=("us-central1-a" if i % 2 else
                                "us-central1-b")) for i in range(7)]
    gcp.ctl("/_fake/config", {"reservations": rs,
                              "unreachable_zones": ["us-central1-b"]})
    got, pages, warns = listing(gcp, page=2)
    # The unreachable zone's reservations are not listed; it is warned.
    assert sorted(got) == ["r1", "r3", "r5"]
    assert warns["zones/us-central1-b"] == "UNREACHABLE"
    assert pages == 2
    r = got["r1"]
    assert r["status"] == "READY" and r["specificReservationRequired"]
    sr = r["specificReservation"]
    assert sr["count"] == "2" and sr["inUseCount"] == "0"
    assert sr["instanceProperties"] == {
        "machineType": "n1-standard-8", "guestAccelerators": [
            {"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}]}
    assert r["zone"].endswith("/zones/us-central1-a")
    st, e, _ = gcp.get(CP + "/aggregated/reservations")
    assert st == 503                    # no partial success asked
    gcp.ctl("/_fake/config", {"unreachable_zones": []})
    assert len(listing(gcp, page=3)[0]) == 7


def test_vms_consume_and_free_a_reservation(gcp):
    gcp.ctl("/_fake/config", {"reservations": [resv("pool", count=1)]})
    Z = CP + "/zones/us-central1-a"
    q0 = {x["metric"]: x["usage"] for x in gcp.get(
        CP + "/regions/us-central1")[1]["quotas"]}
    # The reservation holds its quota already, used or not.
    assert q0["NVIDIA_T4_GPUS"] == 1.0 and q0["CPUS"] == 8.0
    st, op, _ = gcp.post(Z + "/instances", reserved_body("vm1", "pool"))
    assert st == 200, op
    gcp.post(Z + "/operations/%s/wait" % op["name"])
    assert listing(gcp)[0]["pool"]["specificReservation"][
        "inUseCount"] == "1"
    q1 = {x["metric"]: x["usage"] for x in gcp.get(
        CP + "/regions/us-central1")[1]["quotas"]}
    assert q1["NVIDIA_T4_GPUS"] == 1.0 and q1["CPUS"] == 8.0

    # Full: the next VM naming it is refused, naming the reservation.
    st, e, _ = gcp.post(Z + "/instances", reserved_body("vm2", "pool"))
    assert st == 400 and e["error"]["errors"][0]["reason"] == "invalid"
    assert "projects/" in e["error"]["message"] and \
        "reservations/pool" in e["error"]["message"] and \
        "does not have available resources" in e["error"]["message"]

    # The VM's end frees its slot.
    st, op, _ = gcp.delete(Z + "/instances/vm1")
    gcp.post(Z + "/operations/%s/wait" % op["name"])
    gcp.wait_for(lambda: listing(gcp)[0]["pool"]["specificReservation"][
        "inUseCount"] == "0", timeout=8)
    assert gcp.post(Z + "/instances", reserved_body("vm2", "pool"))[0] == 200


def test_missing_mismatched_and_spot_refused(gcp):
    gcp.ctl("/_fake/config", {"reservations": [
        resv("pool"), resv("cold", status="CREATING")]})
    Z = CP + "/zones/us-central1-a"
    for name in ("nope", "cold"):
        st, e, _ = gcp.post(Z + "/instances", reserved_body("vm", name))
        assert st == 400 and "do not exist" in e["error"]["message"], e
    # In another zone the name is another reservation: missing there.
    st, e, _ = gcp.post(CP + "/zones/us-central1-b/instances",
                        reserved_body("vm", "pool", zone="us-central1-b"))
    assert st == 400 and "do not exist" in e["error"]["message"]
    b = reserved_body("vm", "pool")
    b["guestAccelerators"][0]["acceleratorCount"] = 2
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400 and "does not match" in e["error"]["message"]
    b = reserved_body("vm", "pool")
    b["scheduling"]["provisioningModel"] = "SPOT"
    b["scheduling"]["automaticRestart"] = False
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400
    b = reserved_body("vm", "pool")
    b["reservationAffinity"]["key"] = "bogus"
    assert gcp.post(Z + "/instances", b)[0] == 400
    # Unknown affinity fields are refused by the schema.
    b = reserved_body("vm", "pool")
    b["reservationAffinity"]["name"] = "pool"
    assert gcp.post(Z + "/instances", b)[0] == 400
    # A bad config is refused, naming the key.
    st, e, _ = gcp.call("POST", "/_fake/config",
                        {"reservations": [{"name": "x"}]})
    assert st == 400 and b"reservations" in (
        e if isinstance(e, bytes) else str(e).encode())


def test_batch_and_vertex_jobs_consume_it(gcp):
    """Batch policy.reservation and Vertex machineSpec.reservationAffinity
    name the reservation by resource name; their VMs count in inUseCount
    while the job lives; a job that does not fit is refused."""
    from fakegcp_fixtures import batch_body, vertex_body
    gcp.ctl("/_fake/config", {"reservations": [resv("pool", count=2)]})
    path = "projects/gpuq-demo/zones/us-central1-a/reservations/pool"
    b = batch_body(spot=False)
    b["allocationPolicy"]["instances"][0]["policy"]["reservation"] = path
    st, j, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                        "?jobId=rb1", b)
    assert st == 200, j
    v = vertex_body("rv1", strategy="STANDARD")
    v["jobSpec"]["workerPoolSpecs"][0]["machineSpec"][
        "reservationAffinity"] = {"reservationAffinityType":
                                  "SPECIFIC_RESERVATION", "key": KEY,
                                  "values": [path]}
    st, j, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/"
                        "customJobs", v)
    assert st == 200, j
    assert listing(gcp)[0]["pool"]["specificReservation"][
        "inUseCount"] == "2"
    # Full now: a third job naming it is refused.
    b["allocationPolicy"]["instances"][0]["policy"]["reservation"] = path
    st, e, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                        "?jobId=rb2", b)
    assert st == 400 and "does not have available resources" in \
        e["error"]["message"]
    # NO_RESERVATION and a bare name the job's region cannot place.
    b["allocationPolicy"]["instances"][0]["policy"]["reservation"] = \
        "NO_RESERVATION"
    st, j, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                        "?jobId=rb3", b)
    assert st == 200
    v["jobSpec"]["workerPoolSpecs"][0]["machineSpec"][
        "reservationAffinity"]["values"] = ["pool"]
    st, e, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/"
                        "customJobs", v)
    assert st == 400
