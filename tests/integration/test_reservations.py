"""Compute Engine reservations (issue 16; doc/DESIGN.md "Reservations"):
gpuqd lists the project's reservations, prices their free VMs at $0,
launches into one by name before any other offer -- a cheaper Spot one
included --, sends the next job elsewhere once it is full, ignores it
with [gcp] reservations = none, and `gpuq quotas` shows its headroom."""
import json
import os
import time

from cloudutil import TERMINAL, cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

ZONE = "us-central1-b"
MACHINE = "n1-highmem-4"
RESV = {"name": "team-t4", "zone": ZONE, "machine_type": MACHINE,
        "gpu": "nvidia-tesla-t4", "gpu_count": 1, "count": 1,
        "specific_reservation_required": True}
KEY = "compute.googleapis.com/reservation-name"


def bodies(c, jid):
    """The Compute Engine insert bodies of job JID the fake accepted."""
    out = []
    for b in c.ctl("/_fake/create_bodies?service=compute")["bodies"]:
        if (b["body"].get("labels") or {}).get("gpuq-job") == str(jid):
            out.append(b["body"])
    return out


def launched(c, jid):
    """Job JID's first insert body, once it is accepted."""
    deadline = time.monotonic() + scaled(30)
    while True:
        got = bodies(c, jid)
        if got:
            return got[0]
        j = c.show(jid)
        c.check(time.monotonic() < deadline and j["state"] not in TERMINAL,
                "job %s was not launched on Compute Engine (state %s, why "
                "%r)" % (jid, j["state"], j.get("why")), jid)
        time.sleep(0.1)


def affinity(body):
    return body.get("reservationAffinity") or {}


def spot(body):
    return (body.get("scheduling") or {}).get("provisioningModel") == "SPOT"


def test_reservation_first_then_elsewhere(cloud):
    c = cloud(providers=("gce",), fake_config={"reservations": [RESV]})
    # Both may run on Spot, which is cheaper than on-demand: the free
    # reserved VM still wins, for one of them only.
    specs = [job_spec(providers=["gce"], machine_type=MACHINE, spot="allow",
                      work=600, name="r%d" % i) for i in range(2)]
    jids = c.submit(*specs)
    first, second = (launched(c, j) for j in jids)
    got = [b for b in (first, second)
           if affinity(b).get("consumeReservationType") ==
           "SPECIFIC_RESERVATION"]
    c.check(len(got) == 1, "want exactly one job in the reservation, got "
            "%d: %r" % (len(got), [affinity(b) for b in (first, second)]))
    r = got[0]
    c.check(affinity(r) == {"consumeReservationType":
                            "SPECIFIC_RESERVATION", "key": KEY,
                            "values": ["team-t4"]},
            "reservationAffinity %r" % affinity(r))
    c.check(not spot(r), "a reserved VM is standard, not Spot")
    c.check(r["machineType"].endswith("zones/%s/machineTypes/%s" % (
        ZONE, MACHINE)), "reserved VM not in the reservation's zone: %s" %
        r["machineType"])
    other = second if r is first else first
    c.check(affinity(other).get("consumeReservationType") ==
            "NO_RESERVATION", "the other job names a reservation: %r" %
            affinity(other))
    c.check(spot(other), "the other job should take the cheapest offer "
            "left, Spot")

    # The attempt is priced at $0 an hour.
    rj = jids[0] if r is first else jids[1]
    j = c.wait_running(rj, timeout=scaled(30))
    a = c.attempts(j)[-1]
    c.check(a.get("hourly_usd") == 0, "reserved attempt priced at %r" %
            a.get("hourly_usd"), rj)
    c.check(a.get("reservation") == "team-t4", "attempt shows reservation "
            "%r" % a.get("reservation"), rj)

    # gpuq quotas: the reservation is full now.
    rc, out, err = c.gpuq("quotas", "--gpu", "nvidia-tesla-t4")
    c.check(rc == 0, "gpuq quotas failed: %s" % err)
    line = [ln for ln in out.splitlines() if ln.startswith("team-t4")]
    c.check(line and ZONE in line[0] and "0/1" in line[0],
            "gpuq quotas does not show team-t4 full:\n%s" % out)
    # gpuq plan says why the reservation is set aside now.
    p = c.request({"op": "plan", "job": specs[0]})
    ex = [e for e in p.get("excluded", []) if e.get("reservation")]
    c.check(ex and ex[0]["reservation"] == "team-t4" and
            "reservation team-t4 is full" in ex[0].get("reason", ""),
            "plan does not say the reservation is full: %r" % (ex,))


def test_reservation_refused_to_spot_require_and_none(cloud):
    c = cloud(providers=("gce",), fake_config={"reservations": [RESV]},
              gcp={"reservations": "none"})
    jid = c.submit(job_spec(providers=["gce"], machine_type=MACHINE,
                            spot="never", work=60))
    b = launched(c, jid)
    c.check(affinity(b).get("consumeReservationType") == "NO_RESERVATION",
            "reservations = none, yet %r" % affinity(b), jid)
    rc, out, err = c.gpuq("quotas")
    c.check(rc == 0 and "team-t4" not in out,
            "reservations = none, yet gpuq quotas lists it:\n%s" % out)
    rs = c.requests("compute.reservations.aggregatedList")
    c.check(not rs, "reservations = none, yet %d listings" % len(rs))


def test_reservation_auto_not_for_spot_require(cloud):
    c = cloud(providers=("gce",), fake_config={"reservations": [RESV]})
    jid = c.submit(job_spec(providers=["gce"], machine_type=MACHINE,
                            spot="require", work=60))
    b = launched(c, jid)
    c.check(spot(b) and affinity(b).get("consumeReservationType") ==
            "NO_RESERVATION", "spot: require got %r" % affinity(b), jid)
    rc, out, err = c.gpuq("quotas")
    c.check(rc == 0 and "team-t4" in out and "1/1" in out,
            "gpuq quotas does not show team-t4 free:\n%s" % out)


def test_plan_shows_reserved_offer(cloud):
    c = cloud(providers=("gce",), fake_config={"reservations": [RESV]})
    r = c.request({"op": "plan", "job": job_spec(providers=["gce"],
                                                 machine_type=MACHINE)})
    c.check(r.get("ok"), "plan failed: %r" % r)
    offers = r["offers"] if "offers" in r else r["plan"]["offers"]
    first = offers[0]
    c.check(first.get("reservation") == "team-t4" and
            first.get("zone") == ZONE and first.get("hourly_usd") == 0,
            "rank 1 is not the reservation: %r" % first)
    path = os.path.join(c.dir, "job.json")
    with open(path, "w") as f:
        json.dump(job_spec(providers=["gce"], machine_type=MACHINE), f)
    rc, out, err = c.gpuq("plan", path)
    rank1 = [ln for ln in out.splitlines() if ln.strip().startswith("1 ")]
    c.check(rc == 0 and rank1 and "reserved (team-t4)" in rank1[0] and
            ZONE in rank1[0], "gpuq plan does not rank the reservation "
            "first:\n%s%s" % (out, err))


def _service_body(c, service, jid):
    deadline = time.monotonic() + scaled(30)
    while True:
        for b in c.ctl("/_fake/create_bodies?service=" + service)["bodies"]:
            if (b["body"].get("labels") or {}).get("gpuq-job") == str(jid):
                return b["body"]
        j = c.show(jid)
        c.check(time.monotonic() < deadline and j["state"] not in TERMINAL,
                "job %s was not launched on %s (state %s, why %r)" % (
                    jid, service, j["state"], j.get("why")), jid)
        time.sleep(0.1)


def test_batch_and_vertex_consume_it_by_name(cloud):
    """Cloud Batch (instances[].policy.reservation) and Vertex AI
    (machineSpec.reservationAffinity) take the reservation by its
    resource name (DESIGN L.2); the job runs to the end in it."""
    path = "projects/gpuq-test/zones/%s/reservations/team-t4" % ZONE
    for prov, service in (("batch", "batch"), ("vertex", "vertex")):
        c = cloud(providers=(prov,), fake_config={"reservations": [RESV]})
        jid = c.submit(job_spec(providers=[prov], machine_type=MACHINE,
                                spot="allow", work=60))
        b = _service_body(c, service, jid)
        if prov == "batch":
            pol = b["allocationPolicy"]["instances"][0]["policy"]
            c.check(pol.get("reservation") == path and
                    pol.get("provisioningModel") == "STANDARD",
                    "batch policy %r" % pol, jid)
            c.check(b["allocationPolicy"]["location"]["allowedLocations"]
                    == ["zones/" + ZONE], "batch not in the reservation's "
                    "zone: %r" % b["allocationPolicy"]["location"], jid)
        else:
            ms = b["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]
            c.check(ms.get("reservationAffinity") == {
                "reservationAffinityType": "SPECIFIC_RESERVATION",
                "key": KEY, "values": [path]}, "vertex machineSpec %r" %
                ms, jid)
        j = c.wait_state(jid, TERMINAL, scaled(60))
        c.check(j["state"] == "succeeded", "%s job in the reservation "
                "ended %s (why %r)" % (prov, j["state"], j.get("why")), jid)


def test_kill9_before_the_create_relaunches_into_it(cloud):
    """gpuqd killed while the create into the reservation is dropped on
    its way: the restarted daemon re-launches the attempt, and its create
    still names the reservation (attempts.reservation is stored), so the
    VM is the $0 reserved one, not an on-demand VM priced at $0."""
    from cloudutil import CREATE_METHOD, CREATE_PATH
    c = cloud(providers=("gce",), fake_config={"reservations": [RESV]})
    c.fault(method="POST", path=CREATE_PATH["gce"], latency_ms=2000,
            count=1, drop=True)
    jid = c.submit(job_spec(providers=["gce"], machine_type=MACHINE,
                            spot="allow", work=60))
    deadline = time.monotonic() + scaled(30)
    while not c.counters().get(CREATE_METHOD["gce"]):
        c.check(time.monotonic() < deadline, "no create reached the fake",
                jid)
        time.sleep(0.02)
    c.kill9()
    c.start()
    j = c.wait_state(jid, TERMINAL, scaled(60))
    c.check(j["state"] == "succeeded", "ended %s" % j["state"], jid)
    got = bodies(c, jid)
    c.check(got and all(affinity(b).get("values") == ["team-t4"]
                        for b in got),
            "the re-launch did not name the reservation: %r" % (
                [affinity(b) for b in got],), jid)
