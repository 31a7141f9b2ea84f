"""Flex-start (Dynamic Workload Scheduler) on Compute Engine, Cloud Batch
and Vertex AI, as API-NOTES K describes it.

A flex-start request is accepted at once and then waits for capacity:
config ``flex_delay`` (simulated s, default 30) until it is fulfilled, or,
with ``flex_fail`` true, never.  A request that waits longer than it may
(Compute ``params.requestValidForDuration``, Vertex
``scheduling.maxWaitDuration``; Batch names no limit) fails as each
service does: the Compute VM is deleted (K.2: "if none arrives in time
the request errors and the VM is deleted"), the Vertex job fails with
code 8 RESOURCE_EXHAUSTED (wording unconfirmed, K.1).  Once running, a
flex-start VM is never preempted.  Flex-start draws on the preemptible
quota (K.1, K.2).  Limits: run time at most 7 days, a Compute request
valid at most 2 hours; Compute sells it on the accelerator-optimized
series but A4X and G4, Vertex AI for L4, A100, H100, H200 and B200.
"""
import re

from fakegcp_errors import ApiError

MAX_RUN = 7 * 86400
MAX_WAIT = 2 * 3600
VERTEX_GPUS = ("nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb",
               "nvidia-h100-80gb", "nvidia-h100-mega-80gb",
               "nvidia-h200-141gb", "nvidia-b200")
COMPUTE_SERIES = ("a2-", "a3-", "a4-", "g2-")

CFG = {
    # simulated s a flex-start request waits before it is fulfilled
    "flex_delay": 30.0,
    # true: no flex-start request is ever fulfilled
    "flex_fail": False,
}


def compute_seconds(d):
    """Seconds of a Compute Duration {"seconds": "N", "nanos": n}, or
    None."""
    if not isinstance(d, dict):
        return None
    try:
        return int(d.get("seconds") or 0) + int(d.get("nanos") or 0) / 1e9
    except (TypeError, ValueError):
        return None


def string_seconds(s):
    """Seconds of a "3600s" duration string, or None."""
    if isinstance(s, str) and re.match(r"^\d+(\.\d+)?s$", s):
        return float(s[:-1])
    return None


def machine_series_ok(machine):
    mt = (machine or "").rsplit("/", 1)[-1]
    return mt.startswith(COMPUTE_SERIES)


def check_compute(body):
    """400 unless BODY (an Instance) is a flex-start request Compute
    takes: maxRunDuration set and at most 7 days, a valid request
    duration at most 2 hours, an accelerator-optimized machine type.
    Returns the request's validity in s (None: no limit given)."""
    sched = body.get("scheduling") or {}
    run = compute_seconds(sched.get("maxRunDuration"))
    if run is None or run <= 0:
        raise ApiError(400, "Invalid value for field 'resource.scheduling."
                       "maxRunDuration': ''. FLEX_START instances require "
                       "maxRunDuration.", "invalid")
    if run > MAX_RUN:
        raise ApiError(400, "Invalid value for field 'resource.scheduling."
                       "maxRunDuration': '%d'. The maximum run duration of "
                       "a FLEX_START instance is 7 days." % run, "invalid")
    if not machine_series_ok(body.get("machineType")):
        raise ApiError(400, "Invalid value for field 'resource.machineType'"
                       ": '%s'. FLEX_START is not supported for this "
                       "machine type." % body.get("machineType"),
                       "invalid")
    valid = compute_seconds(((body.get("params") or {}).get(
        "requestValidForDuration")))
    if valid is not None and valid > MAX_WAIT:
        raise ApiError(400, "Invalid value for field 'resource.params."
                       "requestValidForDuration': '%d'. A FLEX_START "
                       "request may be valid for at most 2 hours." % valid,
                       "invalid")
    return valid


def check_vertex(gpu, sched):
    """400 unless a Vertex CustomJob of GPU with SCHEDULING may use
    FLEX_START.  Returns maxWaitDuration in s (None: Vertex's 24 h; 0:
    for ever)."""
    if gpu not in VERTEX_GPUS:
        raise ApiError(400, "FLEX_START scheduling strategy is not "
                       "supported for accelerator %s." % gpu)
    t = string_seconds(sched.get("timeout"))
    if t is not None and t > MAX_RUN:
        raise ApiError(400, "scheduling.timeout must be at most 7 days "
                       "for the FLEX_START scheduling strategy.")
    w = string_seconds(sched.get("maxWaitDuration"))
    return 24 * 3600 if w is None else w


def check_batch(machine, max_run):
    """400 unless a Batch job on MACHINE with task run time MAX_RUN (s or
    None) may use FLEX_START."""
    if not machine_series_ok(machine):
        raise ApiError(400, "FLEX_START provisioning model is not "
                       "supported for machine type %s." % machine)
    if max_run is not None and max_run > MAX_RUN:
        raise ApiError(400, "task_spec.max_run_duration must be at most 7 "
                       "days for the FLEX_START provisioning model.")


def wait(fake, now, valid, fulfil, expire):
    """Schedule a flex-start request made at NOW: FULFIL(t) once capacity
    comes (flex_delay later, unless flex_fail), EXPIRE(t) once VALID s
    passed without it (None or 0: never)."""
    delay = float(fake.cfg.get("flex_delay", CFG["flex_delay"]))
    never = bool(fake.cfg.get("flex_fail", CFG["flex_fail"]))
    if not never and (not valid or delay <= valid):
        fake.at(now + delay, fulfil)
    elif valid:
        fake.at(now + valid, expire)
