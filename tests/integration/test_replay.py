"""A short replay of the SkyNomad H100 Spot trace (doc/DESIGN.md
"Replaying Spot traces"): a few jobs over the trace's first simulated
days, through the real gpuqd and gpuq on the fake cloud in trace mode
(one simulated clock for both), and through policy (3), SkyPilot's
default, on the same fake and ledger, six jobs without deadlines (cost
alone).  gpuq must cost no more than
policy (3), finish every job, and neither may cost less than the
oracle's lower bound (else the ledger or the oracle is wrong)."""

import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(TOP, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
import replaylib as rl  # noqa: E402
import replay_fake  # noqa: E402

TRACE = os.path.join(TOP, "tests", "fakegcp", "data", "traces",
                     "h100-spot-probe-outcomes.csv")
# Days 9-11 of the trace: us-east4-a, the cheapest zone, loses all its
# Spot capacity for 59 of its 144 rounds on day 9.
FROM_DAY = 9
DAYS = 2
# gpuqd's every reaction (an HTTP round trip to the fake, a durable
# commit) takes real milliseconds, which a clock this fast turns into
# simulated minutes of a VM billed while nothing happens.  At 6000x, on
# a machine busy with other work, gpuq paid $126.7-141.2 against policy
# (3)'s $126.1-126.3 (restarts 16-23 against 13: its relaunches came
# late); at 2000x on the same busy machine $121.2-121.4 against
# $126.2-126.3 (9 restarts), but $129.8-131.8 in two runs of eight at a
# load of 10 on 2 cores.  At 1000x the six jobs' 10-14 simulated hours
# take under a minute.  The full replay runs at 2016x (14 days in 10
# minutes, bench/replay_fake.py).
SPEED = 1000


def speed(builddir):
    """SPEED, or less for a sanitizer build (its gpuqd is a few times
    slower and would react minutes of simulated time late and pay for
    it, which is not what the test asks)."""
    try:
        with open(os.path.join(builddir or ".", "config.status")) as f:
            if "--enable-sanitizers" in f.read():
                return SPEED // 2
    except OSError:
        pass
    return SPEED
# A replay is not deterministic (gpuqd's timing against the fake's):
# over fourteen runs of this window at 1000-2000x gpuq's bill ranged
# $120.61 to $124.55 on a machine loaded up to twice over, and reached
# $129.96 once loaded five times over; policy (3)'s ranged $125.83 to
# $127.00.  Beyond 4 % over (3) gpuq is costing more than its spread
# (a job worn out on Spot by counted stockouts cost 11 %).
NOISE = 0.04


def short_workload():
    # Six jobs of 4-10 h arriving over the first 12 h: all can finish
    # inside two days.  Without deadlines: cost alone is compared.  With
    # deadlines 1.3-1.6 x the work, gpuq (which leaves Spot for
    # flex-start when the slack runs short, counting the work each
    # preemption lost) paid $144-151 on this window where policy (3),
    # gambling on Spot to the end, paid $126 and happened to miss none:
    # the figures of doc/DESIGN.md "Replaying Spot traces" say so.
    return rl.make_workload(seed=3, jobs=6, arrive_hours=12,
                            work=(4.0, 10.0), deadline=None)


def test_gpuq_costs_no_more_than_skypilot_on_a_short_replay():
    full = rl.load_trace(TRACE)
    prices = rl.Prices(full)
    trace = full.cut(DAYS * 86400 // 600, FROM_DAY * 86400 // 600)
    prices.window(trace.first)
    jobs = short_workload()
    args = types.SimpleNamespace(
        builddir=os.environ.get("top_builddir"),
        speed=speed(os.environ.get("top_builddir")))
    offers = rl.oracle_offers(trace, prices)
    bound = sum(rl.oracle_cost(rl.JobR(j, trace.round_s, trace.rounds),
                               offers, trace.rounds) for j in jobs)
    got = {}
    for p in ("skypilot", "gpuq"):
        out = replay_fake.run(p, trace, prices, jobs, args)
        got[p] = rl.summarise(trace, jobs, out, bound / len(jobs))
        print(p, got[p])
    assert got["gpuq"]["unfinished"] == 0, got["gpuq"]
    assert got["gpuq"]["dollars"] <= got["skypilot"]["dollars"] * \
        (1 + NOISE), got
    for p, s in got.items():
        assert s["dollars"] >= 0.99 * bound, (p, s, bound)
