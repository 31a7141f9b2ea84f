"""Flex-start (API-NOTES K, fakegcp_flex.py) on Compute Engine, Cloud
Batch and Vertex AI: the requests each takes and refuses, the wait for
capacity (config flex_delay), a request never fulfilled (flex_fail), the
preemptible quota it draws on."""
from fakegcp_fixtures import CP, batch_body, env, instance_body, vertex_body

Z = CP + "/zones/us-central1-a"
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"
LONG = {"FAKEGCP_WORK_SECONDS": "100000"}


def flex_instance(name, run="3600", valid="600", machine="g2-standard-8"):
    b = instance_body(name, gpu=None, spot=False, machine=machine,
                      env=env(name, **LONG))
    b["scheduling"].update(provisioningModel="FLEX_START",
                           instanceTerminationAction="DELETE")
    if run is not None:
        b["scheduling"]["maxRunDuration"] = {"seconds": run}
    if valid is not None:
        b["params"] = {"requestValidForDuration": {"seconds": valid}}
    b["reservationAffinity"] = {"consumeReservationType": "NO_RESERVATION"}
    return b


def status(gcp, name):
    st, i, _ = gcp.get(Z + "/instances/" + name)
    return i.get("status") if st == 200 else st


def test_compute_flex_waits_then_runs(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_delay": 200})
    st, op, _ = gcp.post(Z + "/instances", flex_instance("fx1"))
    assert st == 200, op
    assert status(gcp, "fx1") == "PENDING"
    _, i, _ = gcp.get(Z + "/instances/fx1")
    assert i["scheduling"]["provisioningModel"] == "FLEX_START"
    gcp.wait_for(lambda: status(gcp, "fx1") == "RUNNING", timeout=10)
    # Not Spot: it draws on the preemptible quota all the same.
    q = gcp.ctl("/_fake/quota")["compute"]["us-central1"]
    assert q["PREEMPTIBLE_NVIDIA_L4_GPUS"]["usage"] == 1, q
    assert q["NVIDIA_L4_GPUS"]["usage"] == 0, q


def test_compute_flex_expires_unfulfilled(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_fail": True})
    assert gcp.post(Z + "/instances", flex_instance("fx2", valid="120"))[
        0] == 200
    assert status(gcp, "fx2") == "PENDING"
    # Not fulfilled in time: the request errors and the VM is deleted.
    gcp.wait_for(lambda: status(gcp, "fx2") == 404, timeout=10)


def test_compute_flex_refusals(gcp):
    st, e, _ = gcp.post(Z + "/instances", flex_instance("fx3", run=None))
    assert st == 400 and "maxRunDuration" in e["error"]["message"]
    st, e, _ = gcp.post(Z + "/instances", flex_instance("fx3",
                                                        run="700000"))
    assert st == 400 and "7 days" in e["error"]["message"]
    st, e, _ = gcp.post(Z + "/instances", flex_instance("fx3",
                                                        valid="10800"))
    assert st == 400 and "2 hours" in e["error"]["message"]
    b = flex_instance("fx3", machine="n1-standard-8")
    b["guestAccelerators"] = [{"acceleratorType": "zones/us-central1-a/"
                               "acceleratorTypes/nvidia-tesla-t4",
                               "acceleratorCount": 1}]
    st, e, _ = gcp.post(Z + "/instances", b)
    assert st == 400 and "machine type" in e["error"]["message"]
    # A duration is Compute's {"seconds": ...} object, not "3600s".
    b = flex_instance("fx3")
    b["scheduling"]["maxRunDuration"] = "3600s"
    assert gcp.post(Z + "/instances", b)[0] == 400


def flex_batch(name, machine="g2-standard-8"):
    b = batch_body(env(name), spot=False, gpu=None, maxRunDuration="3600s")
    pol = b["allocationPolicy"]["instances"][0]["policy"]
    pol.update(machineType=machine, provisioningModel="FLEX_START")
    return b


def batch_state(gcp, name):
    return gcp.get(B + "/" + name)[1]["status"]["state"]


def test_batch_flex_waits_then_runs(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_delay": 300})
    st, j, _ = gcp.post(B + "?jobId=fb1", flex_batch("fb1"))
    assert st == 200, j
    gcp.wait_for(lambda: batch_state(gcp, "fb1") == "SCHEDULED", timeout=5)
    assert batch_state(gcp, "fb1") == "SCHEDULED"
    gcp.wait_for(lambda: batch_state(gcp, "fb1") in ("RUNNING",
                                                    "SUCCEEDED"),
                 timeout=10)


def test_batch_flex_never_fulfilled_and_refusals(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_fail": True})
    assert gcp.post(B + "?jobId=fb2", flex_batch("fb2"))[0] == 200
    gcp.wait_for(lambda: batch_state(gcp, "fb2") == "SCHEDULED", timeout=5)
    # 10 simulated minutes later it is still waiting.
    t0 = gcp.ctl("/_fake/time")["now"]
    gcp.wait_for(lambda: gcp.ctl("/_fake/time")["now"] > t0 + 600,
                 timeout=10)
    assert batch_state(gcp, "fb2") == "SCHEDULED"
    st, e, _ = gcp.post(B + "?jobId=fb3", flex_batch("fb3",
                                                     "n1-standard-8"))
    assert st == 400 and "FLEX_START" in e["error"]["message"]


def flex_vertex(name, acc="NVIDIA_L4", wait=None):
    b = vertex_body(name, env(name), strategy="FLEX_START", acc=acc)
    b["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] = \
        "g2-standard-8"
    if wait is not None:
        b["jobSpec"]["scheduling"]["maxWaitDuration"] = wait
    b["jobSpec"]["scheduling"]["timeout"] = "3600s"
    return b


def vertex_job(gcp, name):
    _, l, _ = gcp.get(V)
    return [j for j in l.get("customJobs", []) if j["displayName"] == name][0]


def test_vertex_flex_waits_then_runs(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_delay": 300})
    st, j, _ = gcp.post(V, flex_vertex("fv1", wait="3600s"))
    assert st == 200, j
    gcp.wait_for(lambda: vertex_job(gcp, "fv1")["state"] ==
                 "JOB_STATE_PENDING", timeout=5)
    gcp.wait_for(lambda: vertex_job(gcp, "fv1")["state"] ==
                 "JOB_STATE_RUNNING", timeout=10)


def test_vertex_flex_expires_and_refusals(gcp):
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_fail": True})
    assert gcp.post(V, flex_vertex("fv2", wait="120s"))[0] == 200
    gcp.wait_for(lambda: vertex_job(gcp, "fv2")["state"] ==
                 "JOB_STATE_FAILED", timeout=10)
    j = vertex_job(gcp, "fv2")
    assert j["error"]["code"] == 8 and "maxWaitDuration" in \
        j["error"]["message"]
    st, e, _ = gcp.post(V, flex_vertex("fv3", acc="NVIDIA_TESLA_T4"))
    assert st == 400 and "FLEX_START" in e["error"]["message"]
    b = flex_vertex("fv3")
    b["jobSpec"]["scheduling"]["timeout"] = "700000s"
    st, e, _ = gcp.post(V, b)
    assert st == 400 and "7 days" in e["error"]["message"]


def test_flex_billed_with_dws_skus(gcp):
    """The catalog lists flex-start's own SKUs, worded as Google's
    billing reports do, and the ledger bills a flex-start VM with them:
    an a3-highgpu-1g in us-central1 is the DWS H100 SKU + 26 DWS A3
    cores + 234 GiB of DWS A3 RAM (vertex-prices.csv), $4.7078/h, not
    the on-demand SKUs ($5.38 here)."""
    want = 4.200761 + 26 * 0.010934 + 234 * 0.000952
    skus = gcp.get("/v1/services/6F81-5844-456A/skus?pageSize=5000")[1][
        "skus"]
    dws = {s["description"] for s in skus
           if s["serviceRegions"] == ["us-central1"]}
    assert "Nvidia H100 80GB GPU attached to DWS Defined Duration VMs " \
        "running in Americas" in dws
    assert "DWS Defined Duration A3 Core running in Americas" in dws
    gcp.ctl("/_fake/speed", {"factor": 100})
    gcp.ctl("/_fake/config", {"flex_delay": 0})
    st, op, _ = gcp.post(Z + "/instances", flex_instance(
        "fxh", machine="a3-highgpu-1g"))
    assert st == 200, op
    gcp.wait_for(lambda: status(gcp, "fxh") == "RUNNING", timeout=10)
    led = gcp.ctl("/_fake/ledger")
    [r] = [x for x in led["resources"] if x["name"] == "fxh"]
    assert abs(r["usd_per_hour_now"] - want) < 1e-4, r
