"""gpuqd on the simulated clock against the fake in trace mode (issue 17;
tests/fakegcp/README.md "Trace mode"): a Spot job runs in the one zone
with capacity; when the trace takes that capacity away the fake preempts
it, gpuqd relaunches it from its checkpoint in the zone that has room
(the first zone stocks out meanwhile), and the fake's ledger bills the
job what gpuq says it cost.
"""

import os

from cloudutil import TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest

SIM_SCHEDULER = {"poll_interval": "15s", "quota_ttl": "60s",
                 "backoff_base": "30s", "backoff_max": "30m",
                 "stockout_cooldown": "10m"}
HEAD = ("round_scheduled_utc,zone,region,instances_requested,"
        "instances_created,capacity_exhausted_detected,"
        "spot_h100_gpu_usd_per_hour_at_probe\n")


def write_trace(path, zones):
    n = max(len(v) for v in zones.values())
    with open(path, "w") as fh:
        fh.write(HEAD)
        for i in range(n):
            ts = "2025-10-%02dT%02d:%02d:00Z" % (4 + i // 144,
                                                  i % 144 // 6, i % 6 * 10)
            for z, caps in sorted(zones.items()):
                fh.write("%s,%s,%s,16,%d,%d,\n" % (ts, z, z[:-2], caps[i],
                                                    16 - caps[i]))
    return path


def test_trace_preempts_and_ledger_bills(cloud):
    c = cloud(speed=1000, sim_clock=True, providers=("gce",),
              scheduler=SIM_SCHEDULER)
    # us-central1-a has one T4 for the first hour, then none; -b none
    # for the first hour, then one; -c and -f none.
    path = write_trace(os.path.join(c.dir, "trace.csv"), {
        "us-central1-a": [1] * 6 + [0] * 200,
        "us-central1-b": [0] * 6 + [1] * 200,
        "us-central1-c": [0] * 206, "us-central1-f": [0] * 206})
    tr = c.trace(path, gpu="nvidia-tesla-t4")
    c.check(tr["capacity"]["us-central1-a"] == 1, "trace %r" % tr)
    jid = c.submit(job_spec(providers=["gce"], work=3 * 3600, ckpt=1800,
                            spot="require"))
    job = c.wait_state(jid, TERMINAL, 120)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    atts = [a for a in c.attempts(job) if a["started"]]
    c.check(atts[0]["zone"] == "us-central1-a" and
            atts[0]["end_reason"] == "preempted",
            "first run: %s %s" % (atts[0]["zone"], atts[0]["end_reason"]),
            jid)
    c.check(atts[-1]["zone"] == "us-central1-b" and
            atts[-1]["end_reason"] == "succeeded",
            "last run: %s %s" % (atts[-1]["zone"], atts[-1]["end_reason"]),
            jid)
    c.check(atts[-1]["resumed_from"], "the relaunch did not resume", jid)
    led = c.ledger()
    mine = [r for r in led["resources"] if r["job"] == str(jid)]
    c.check(len(mine) == len(atts), "ledger %r" % mine, jid)
    billed = led["jobs"][str(jid)]["usd"]
    cost = sum(a["cost_usd"] for a in c.attempts(job))
    # The same SKUs, the same simulated seconds: equal but for the
    # seconds between the fake's ticks and gpuq's billed stamps.
    c.check(abs(billed - cost) <= 0.01 * cost + 1e-3,
            "ledger $%.4f, gpuq $%.4f" % (billed, cost), jid)
