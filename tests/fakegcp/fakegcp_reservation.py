"""Compute Engine reservations (API-NOTES L): reservations.aggregatedList
over pages, with unreachable zones, and VMs consuming them by name.

The project's reservations come from the fake's config key
``reservations``: a list of {"name", "zone", "machine_type", "gpu",
"gpu_count", "count", "specific_reservation_required", "status"} (gpu and
gpu_count may be omitted for a machine type with built-in GPUs; status
defaults to READY).  ``inUseCount`` is not kept as a counter: it is the
number of live VMs (not TERMINATED or STOPPED, not deleted) whose
reservationAffinity named the reservation, so a VM's end frees its slot
just as Google's does.

A VM that names a reservation (SPECIFIC_RESERVATION with key
compute.googleapis.com/reservation-name) must fit it: the reservation
must exist in the VM's zone, be READY, match the machine type and GPUs,
and have a free slot.  Google does not document the exact error of a
full or missing reservation in API-NOTES; the fake answers the insert
with HTTP 400 `invalid` and the message Compute gives for these cases
("Specified reservation ... does not exist" / "... does not have
available resources for the request"), which gpuq treats as a refusal
of that one place [unconfirmed wording].  Consuming a reservation draws
no extra quota (the reservation holds it) and is never stocked out.
"""
import zlib

import fakegcp_catalog as cat
import fakegcp_paging as paging
from fakegcp_errors import ApiError

COMPUTE_LINK = "https://www.googleapis.com/compute/v1/"
KEY = "compute.googleapis.com/reservation-name"
STATUSES = ("CREATING", "READY", "UPDATING", "DELETING", "INVALID")


def check_cfg(v):
    """400 naming what is wrong with a ``reservations`` config value."""
    if not isinstance(v, list):
        raise ApiError(400, "reservations: give a list of objects")
    for r in v:
        if not isinstance(r, dict) or not r.get("name") or \
                r.get("zone") not in cat.ZONE_REGION or \
                not r.get("machine_type") or \
                not isinstance(r.get("count"), int):
            raise ApiError(400, "reservations: each needs name, a known "
                           "zone, machine_type and an integer count "
                           "(not %r)" % (r,))
        if r.get("status", "READY") not in STATUSES:
            raise ApiError(400, "reservations: status is one of %s" %
                           ", ".join(STATUSES))


def in_use(fake, project, zone, name):
    """Live resources of PROJECT consuming reservation NAME in ZONE: VMs,
    and Batch jobs and Vertex AI custom jobs that named it (each marked
    with ``resv_key`` = (zone, name) at create)."""
    n = 0
    for d in (fake.instances, fake.batch, fake.vertex):
        for r in list(d.values()):
            if r.project == project and r.live() and \
                    getattr(r, "resv_key", None) == (zone, name):
                # one VM, or a job's VMs
                n += getattr(r, "task_count", None) or \
                    getattr(r, "replicas", None) or 1
    return n


def parse_ref(ref, zone=None):
    """(zone, name) of a reservation named by REF: a bare name (in ZONE)
    or projects/P/zones/Z/reservations/N."""
    parts = (ref or "").split("/")
    if len(parts) >= 6 and parts[-4] == "zones" and \
            parts[-2] == "reservations":
        return parts[-3], parts[-1]
    return zone, parts[-1]


def _find(fake, zone, name):
    for r in fake.cfg.get("reservations") or []:
        if r["zone"] == zone and r["name"] == name:
            return r
    return None


def to_json(fake, project, r):
    z = r["zone"]
    props = {"machineType": r["machine_type"]}
    if r.get("gpu"):
        props["guestAccelerators"] = [{"acceleratorType": r["gpu"],
                                       "acceleratorCount":
                                       int(r.get("gpu_count") or 1)}]
    return {
        "kind": "compute#reservation",
        "id": str(zlib.crc32(("%s/%s/%s" % (project, z, r["name"]))
                             .encode())),
        "creationTimestamp": "2026-11-01T00:00:00.000-07:00",
        "selfLink": COMPUTE_LINK + "projects/%s/zones/%s/reservations/%s" %
        (project, z, r["name"]),
        "zone": COMPUTE_LINK + "projects/%s/zones/%s" % (project, z),
        "name": r["name"],
        "specificReservationRequired":
            bool(r.get("specific_reservation_required", True)),
        "status": r.get("status", "READY"),
        "specificReservation": {
            "instanceProperties": props,
            # int64 fields are strings in Compute's JSON
            "count": str(r["count"]),
            "inUseCount": str(in_use(fake, project, z, r["name"])),
            "assuredCount": str(r["count"]),
        },
    }


def consume(fake, project, zone, ref, machine, gpu, count, spot,
            region=None, vms=1):
    """Check that a new VM (or job) of MACHINE with COUNT GPU cards may
    consume the reservation REF (a name in ZONE, or a resource name);
    returns its (zone, name) key, or raises Google's refusal.  REGION:
    the job's region, which the reservation's zone must be in."""
    z, name = parse_ref(ref, zone)
    path = "projects/%s/zones/%s/reservations/%s" % (project, z, name)
    if spot:
        raise ApiError(400, "Invalid value for field "
                       "'resource.reservationAffinity': Spot VMs cannot "
                       "consume reservations.", "invalid")
    r = _find(fake, z, name) if z else None
    if r is None or r.get("status", "READY") != "READY" or (
            region is not None and cat.ZONE_REGION.get(z) != region):
        raise ApiError(400, "Specified reservations [%s] do not exist." %
                       path, "invalid")
    want_gpu = r.get("gpu")
    if r["machine_type"] != machine or (want_gpu and (
            want_gpu != gpu or int(r.get("gpu_count") or 1) != count)):
        raise ApiError(400, "Specified reservation '%s' does not match the "
                       "VM's machine type or accelerators." % path,
                       "invalid")
    if in_use(fake, project, z, name) + vms > r["count"]:
        raise ApiError(400, "Specified reservation '%s' does not have "
                       "available resources for the request." % path,
                       "invalid")
    return z, name


def check_insert(fake, project, zone, body, machine, gpu, count, spot):
    """The (zone, name) an Instance insert consumes, or None; an ApiError
    when it names one it cannot use."""
    ra = body.get("reservationAffinity") or {}
    if ra.get("consumeReservationType") != "SPECIFIC_RESERVATION":
        return None
    if ra.get("key") != KEY or len(ra.get("values") or []) != 1:
        raise ApiError(400, "Invalid value for field "
                       "'resource.reservationAffinity': SPECIFIC_RESERVATION "
                       "needs key '%s' and one value." % KEY, "invalid")
    return consume(fake, project, zone, ra["values"][0], machine, gpu,
                   count, spot)


def check_batch(fake, project, region, policy, job):
    """allocationPolicy.instances[0].policy.reservation (DESIGN L.2): the
    (zone, name) Batch job JOB consumes, or None (unset: any; or
    NO_RESERVATION)."""
    ref = policy.get("reservation")
    if not ref or ref == "NO_RESERVATION":
        return None
    return consume(fake, project, None, ref, job.machine, job.gpu,
                   job.gpu_count, job.spot, region, job.task_count)


def check_vertex(fake, project, region, ms, job):
    """machineSpec.reservationAffinity of a custom job (DESIGN L.2): the
    (zone, name) it consumes, or None.  Vertex AI wants the reservation's
    resource name in values."""
    ra = ms.get("reservationAffinity") or {}
    if ra.get("reservationAffinityType") != "SPECIFIC_RESERVATION":
        return None
    vals = ra.get("values") or []
    if ra.get("key") != KEY or len(vals) != 1 or \
            parse_ref(vals[0])[0] is None:
        raise ApiError(400, "reservation_affinity: SPECIFIC_RESERVATION "
                       "needs key %s and the reservation's resource name "
                       "(projects/P/zones/Z/reservations/N) as its one "
                       "value." % KEY)
    return consume(fake, project, None, vals[0], job.machine, job.gpu,
                   job.gpu_count, job.spot, region, job.replicas)


def _aggregated(fake, req):
    from fakegcp_compute import Compute, check_max_results
    c = Compute(fake)
    check_max_results(req)
    p = req.params["project"]
    down = c._unreachable(req)
    flat = [(r["zone"], to_json(fake, p, r))
            for z in cat.ZONES if z not in down
            for r in fake.cfg.get("reservations") or [] if r["zone"] == z]
    page, nxt = paging.paginate(flat, req, "maxResults", 500, 500, "aggres")
    return c._aggregated_out(req, "compute#reservationAggregatedList",
                             "reservations", page, nxt, down)


def routes(fake):
    P = r"/compute/v1/projects/(?P<project>[^/]+)"
    return [
        ("GET", P + "/aggregated/reservations", "compute",
         "compute.reservations.aggregatedList",
         lambda req: _aggregated(fake, req)),
    ]


def usage(fake, project, add):
    """A reservation holds the quota of all its VMs, used or not (Google:
    "reservations consume quota"); the VMs consuming it add none
    (Instance.quota_use).  ADD(key, value) as usage_table's."""
    for r in fake.cfg.get("reservations") or []:
        if r.get("status", "READY") != "READY":
            continue
        region = cat.ZONE_REGION[r["zone"]]
        info = cat.machine_info(r["machine_type"])
        vcpus = (info[0] if info else 0) * r["count"]
        add((region, "CPUS"), vcpus)
        add(("global", "CPUS_ALL_REGIONS"), vcpus)
        add((region, "INSTANCES"), r["count"])
        gpu = r.get("gpu")
        n = int(r.get("gpu_count") or 1) * r["count"] if gpu else 0
        if gpu and n:
            m = fake.gpu_metric(project, region, gpu, False)
            if m:
                add((region, m), n)
            add(("global", "GPUS_ALL_REGIONS"), n)
