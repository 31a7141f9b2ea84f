"""gpuqd on the fake cloud's simulated clock (issue 17, doc/DESIGN.md
"Simulated time"): with [daemon] clock_scale S and the fake's speed S
sharing one origin, every interval gpuqd keeps is simulated time. A
15 s poll interval is 15 simulated seconds (the fake stamps each list
call with its simulated time), a pending timeout of 10 simulated
minutes withdraws the attempt 10 simulated minutes after its create,
and a job's lifecycle at 2000x (14 days in 10 minutes) runs without
gpuqd or the fake falling behind.
"""

import statistics
import time

from cloudutil import TERMINAL, cloud, cpu_seconds, job_spec

assert cloud  # the fixture, imported for pytest

# Intervals as a real installation has them: simulated time.
SIM_SCHEDULER = {"poll_interval": "15s", "quota_ttl": "60s",
                 "backoff_base": "30s", "backoff_max": "30m",
                 "stockout_cooldown": "10m"}


def list_times(c, needle):
    """Simulated times of the fake's served list calls whose method id
    holds NEEDLE."""
    reqs = c.ctl("/_fake/requests")["requests"]
    return [r["time"] for r in reqs
            if needle in (r.get("method_id") or "") and
            r.get("status") == 200]


def test_poll_interval_is_simulated(cloud):
    speed = 1000
    c = cloud(speed=speed, sim_clock=True, providers=("batch",),
              scheduler=SIM_SCHEDULER)
    t = c.ctl("/_fake/time")
    c.check(t["shared"] and t["speed"] == speed, "fake clock %r" % t)
    # 2 simulated hours: 7.2 real seconds of running.
    jid = c.submit(job_spec(providers=["batch"], work=7200, ckpt=600,
                            spot="never"))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    times = list_times(c, "jobs.list")
    c.check(len(times) >= 100, "%d list calls" % len(times), jid)
    gaps = [b - a for a, b in zip(times, times[1:])]
    med = statistics.median(gaps)
    # 15 simulated seconds, plus the list's real latency x 1000 (a few
    # ms on a loaded machine); on the real clock it would be 15,000.
    c.check(14.5 <= med <= 25, "median gap between polls %.1f simulated s "
            "(want 15)" % med, jid)
    span = times[-1] - times[0]
    c.check(span / 25 <= len(times) <= span / 14.5 + 10,
            "%d polls over %.0f simulated s" % (len(times), span), jid)
    # The queue's times are simulated: the attempt ran its 2 hours.
    att = c.attempts(job)[-1]
    c.check(7200 <= att["ended"] - att["started"] <= 7200 + 120,
            "attempt ran %d s" % (att["ended"] - att["started"]), jid)


def test_pending_timeout_is_simulated(cloud):
    speed = 1000

    def queued_in_central(c):
        c.ctl("/_fake/price", {"service": "compute",
                               "gpu": "nvidia-tesla-t4",
                               "region": "us-central1",
                               "usage_type": "OnDemand",
                               "usd_per_hour": 0.20})
        c.ctl("/_fake/stockout", {"zone": "us-central1",
                                  "gpu": "nvidia-tesla-t4"})

    sched = dict(SIM_SCHEDULER, pending_timeout="10m")
    c = cloud(speed=speed, sim_clock=True, providers=("batch",),
              regions=("us-central1", "us-east1"), scheduler=sched,
              fake_config={"batch_shortage": "queue",
                           "batch_queue_recheck": 60.0},
              setup=queued_in_central)
    jid = c.submit(job_spec(providers=["batch"], work=600, spot="never"))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    first = c.attempts(job)[0]
    c.check(first["end_reason"] == "pending", "attempt 1 ended %s" %
            first["end_reason"], jid)
    # Withdrawn 600 simulated s after its create: noticed at the first
    # poll past it (15 s), its cancel then followed to its end.
    waited = first["ended"] - first["created"]
    c.check(600 <= waited <= 600 + 90, "withdrawn after %d simulated s "
            "(want 600..690)" % waited, jid)


def test_lifecycle_at_2000x(cloud):
    """14 days in 10 minutes needs 2016x: a job of 8 simulated hours
    with checkpoints, a preemption and a relaunch, at 2000x."""
    speed = 2000
    c = cloud(speed=speed, sim_clock=True, providers=("gce",),
              scheduler=SIM_SCHEDULER)
    t0, f0 = time.time(), c.ctl("/_fake/time")["now"]
    g0 = cpu_seconds(c.gpuqd.pid)
    jid = c.submit(job_spec(providers=["gce"], work=8 * 3600, ckpt=1800,
                            spot="require"))
    c.wait_running(jid, 60, progress=7200)     # 2 simulated hours in
    [r] = c.resources(jid)
    c.ctl("/_fake/preempt", {"name": r["resource"]})
    job = c.wait_state(jid, TERMINAL, 120)
    real = time.time() - t0
    sim = c.ctl("/_fake/time")["now"] - f0
    gcpu = cpu_seconds(c.gpuqd.pid) - g0
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    atts = c.attempts(job)
    c.check(len(atts) == 2 and atts[0]["end_reason"] == "preempted",
            "attempts %r" % [a["end_reason"] for a in atts], jid)
    # Resumed from a checkpoint: the two runs add up to 8 h of work and
    # at most one checkpoint interval (30 min) lost, plus boots.
    ran = sum(a["ended"] - a["started"] for a in atts)
    c.check(8 * 3600 <= ran <= 8 * 3600 + 1800 + 1800,
            "ran %d simulated s in all" % ran, jid)
    print("\nsim clock 2000x: %.0f simulated s in %.1f real s (%.0fx); "
          "gpuqd used %.2f CPU s" % (sim, real, sim / real, gcpu))
    # No busy loop: gpuqd idles between its (15 ms real) polls.
    c.check(gcpu < 0.5 * real, "gpuqd used %.1f CPU s in %.1f s" % (
        gcpu, real), jid)


def test_backoff_is_simulated(cloud):
    """A failed run is retried after backoff_base (10 simulated minutes,
    less up to a quarter of jitter), not 10 real minutes."""
    c = cloud(speed=1000, sim_clock=True, providers=("gce",),
              scheduler=dict(SIM_SCHEDULER, backoff_base="10m",
                             backoff_max="10m"))
    jid = c.submit(job_spec(providers=["gce"], work=60, exit_code=3,
                            spot="never", max_failures=1))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "failed", "ended %s" % job["state"], jid)
    atts = c.attempts(job)
    c.check(len(atts) == 2, "%d attempts" % len(atts), jid)
    gap = atts[1]["created"] - atts[0]["ended"]
    c.check(450 <= gap <= 600 + 60, "retried %d simulated s after the "
            "failure (want 450..660)" % gap, jid)
