"""The pieces of bench/replay that need no daemon (bench/replaylib.py):
the oracle (policy 4) on tiny traces whose cheapest schedule is worked
out by hand in each test, the round-by-round model of policies (2) and
(3), the workload generator and the prices.  The replay through gpuqd
itself is test_replay.py."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
import replaylib as rl  # noqa: E402

INF = rl.INF


def job(a, W, k, o, D=None, rm=60):
    """A job in rounds of `rm` minutes (JobR with a trace of `rounds`)."""
    return {"name": "j", "arrival_minutes": a * rm, "work_minutes": W * rm,
            "checkpoint_minutes": k * rm, "restart_overhead_minutes": o * rm,
            "deadline_minutes": None if D is None else (D - a) * rm}


def cost(j, offers, rounds):
    return rl.oracle_cost(rl.JobR(j, 3600, rounds), offers, rounds)


def zone(avail, price):
    """An offer with hourly rounds: avail as a string of 1/0."""
    return rl.Offer("z", [c == "1" for c in avail],
                    [price(r) if callable(price) else price
                     for r in range(len(avail))])


def test_one_zone_pays_overhead_once():
    # Start in round 0 (overhead), then 6 rounds of work that checkpoint
    # at 3 and finish at 6: the VM is never restarted, 7 rounds at $1.
    A = zone("1" * 12, 1.0)
    assert cost(job(0, 6, 3, 1, D=12), [A], 12) == pytest.approx(7.0)
    # A deadline one round too tight for overhead + work.
    assert cost(job(0, 6, 3, 1, D=6), [A], 12) == INF


def test_waiting_or_splitting_around_an_outage():
    # Zone A ($1) has no capacity in round 4; on-demand costs $3.
    A = zone("1111011111111111111", 1.0)
    O = zone("1" * 19, 3.0)
    j = dict(W=6, k=3, o=1)
    # Loose deadline: wait for round 5 and run in one go: 1 + 6 rounds.
    assert cost(job(0, D=19, **j), [A, O], 19) == pytest.approx(7.0)
    # Deadline 10: waiting ends at 12, too late.  Rounds 0-3 in A reach
    # the first checkpoint; start again in A at 5 (overhead) and work
    # 6-8: done at 9 for 4 + 4 rounds.
    assert cost(job(0, D=10, **j), [A, O], 19) == pytest.approx(8.0)
    # Deadline 8: A again at 5 would end at 9.  So A for rounds 0-3,
    # then on-demand: overhead at 4, work 5-7 = 4 x $3.
    assert cost(job(0, D=8, **j), [A, O], 19) == pytest.approx(16.0)
    # Deadline 6: not even on-demand from round 0 (7 rounds) makes it.
    assert cost(job(0, D=6, **j), [A, O], 19) == INF


def test_progress_past_the_last_checkpoint_is_worth_nothing():
    # W = 4 rounds, checkpoint every 3.  A ($1) is open in rounds 0-2
    # only: 1 overhead + 2 rounds of work reach no checkpoint, so A is
    # useless and B ($2) does it all: 5 rounds = $10.
    B = zone("1" * 12, 2.0)
    assert cost(job(0, 4, 3, 1), [zone("111" + "0" * 9, 1.0), B],
                12) == pytest.approx(10.0)
    # Open in rounds 0-3: the first checkpoint (3 of 4) is made in A
    # for $4, then B pays overhead + the last round: $4.
    assert cost(job(0, 4, 3, 1), [zone("1111" + "0" * 8, 1.0), B],
                12) == pytest.approx(8.0)


def test_prices_that_change_over_time():
    # $5 a round before round 10, $1 from round 10 on.
    A = zone("1" * 30, lambda r: 5.0 if r < 10 else 1.0)
    # Loose deadline: wait for round 10, 4 rounds at $1.
    assert cost(job(0, 3, 3, 1, D=30), [A], 30) == pytest.approx(4.0)
    # Must be done by 12: start at 8 (overhead $5), work 9 ($5), 10 and
    # 11 ($1 each).
    assert cost(job(0, 3, 3, 1, D=12), [A], 30) == pytest.approx(12.0)
    # Arrival is respected: arriving at 11 with deadline 30.
    assert cost(job(11, 3, 3, 1, D=30), [A], 30) == pytest.approx(4.0)


def test_the_cheaper_of_two_zones_and_a_switch_at_a_checkpoint():
    # A ($1) open 0-3, B ($2) always: checkpoint 1 in A (rounds 0-3,
    # $4), then B from 4: overhead + 3 rounds = $8; $12 in all, where
    # all in B is 7 x $2 = $14.
    A = zone("1111" + "0" * 16, 1.0)
    B = zone("1" * 20, 2.0)
    assert cost(job(0, 6, 3, 1, D=20), [A, B], 20) == pytest.approx(12.0)
    # A open again from round 10: waiting for it (boot + 6 rounds, done
    # at 17) is cheapest when the deadline allows...
    A2 = zone("1111" + "0" * 6 + "1" * 10, 1.0)
    assert cost(job(0, 6, 3, 1, D=20), [A2, B], 20) == pytest.approx(7.0)
    # ...and the first checkpoint in A, then A again from 10 ($4 + $4,
    # done at 14) when it must be done by 16.
    assert cost(job(0, 6, 3, 1, D=16), [A2, B], 20) == pytest.approx(8.0)


def brute_force(j, offers, rounds):
    """Every schedule, round by round (idle, or run in offer m), with
    the replay's rules applied directly: a VM started (or moved) boots
    for o rounds, then progresses a round per round; whatever is past
    the last checkpoint is lost when it stops; it may run only where
    its offer is available.  No lemma of the oracle is assumed."""
    a, W, k, o, D = j.a, j.W, j.k, j.o, min(j.D, rounds)
    best = INF

    def go(r, prev, boot, prog, dollars):
        nonlocal best
        if prog >= W:
            best = min(best, dollars)
            return
        if r >= D or dollars >= best:
            return
        ckpt = prog - prog % k
        go(r + 1, None, 0, ckpt, dollars)
        if r < a:
            return
        for m, off in enumerate(offers):
            c = off.window(r, 1)
            if c is None:
                continue
            if m == prev:
                b, p = boot, prog
            else:
                b, p = o, ckpt
            if b > 0:
                go(r + 1, m, b - 1, p, dollars + c)
            else:
                go(r + 1, m, 0, p + 1, dollars + c)
    go(0, None, 0, 0, 0.0)
    return best


def test_oracle_equals_brute_force_on_random_small_traces():
    import random
    rng = random.Random(4)
    for _ in range(60):
        R = rng.randint(6, 10)
        offers = []
        for _ in range(rng.randint(1, 3)):
            av = "".join(rng.choice("1110") for _ in range(R))
            offers.append(zone(av, lambda r, b=rng.uniform(1, 4):
                               b + rng.choice((0, 0, 1))))
        W, k, o = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 2)
        a = rng.randint(0, 2)
        D = rng.choice((None, rng.randint(a + 1, R)))
        jr = rl.JobR(job(a, W, k, o, D=D), 3600, R)
        want = brute_force(jr, offers, R)
        got = rl.oracle_cost(jr, offers, R)
        assert got == pytest.approx(want), (W, k, o, a, D)


def test_no_deadline_runs_to_the_end_of_the_trace():
    A = zone("0" * 10 + "1" * 10, 1.0)
    assert cost(job(0, 6, 3, 1), [A], 20) == pytest.approx(7.0)
    assert cost(job(0, 6, 3, 1), [A], 16) == INF


def test_job_times_must_be_whole_rounds():
    with pytest.raises(ValueError, match="whole number"):
        rl.JobR(dict(job(0, 3, 3, 1), work_minutes=95), 600, 100)


class StubPrices:
    vertex = 10.0

    def __init__(self, p):
        self.p = p

    def spot(self, z, r):
        return self.p[z]


def test_skypilot_model_relaunches_in_the_next_cheapest_zone():
    # Hourly rounds.  A ($1) loses its VM in round 3; B ($2) is open.
    # The job: 4 rounds of work, checkpoint every 2, 1 round overhead.
    # r0 boot in A, r1-2 work (checkpoint 2), r3 preempted: B boots at
    # r3, works r4-5, done at 6.  $3 in A + $6 in B.
    t = rl.Trace(["a", "b"], {"a": [1, 1, 1, 0, 0, 1, 1, 1],
                              "b": [1] * 8},
                 {"a": [None] * 8, "b": [None] * 8}, 3600, "t0", "test")
    jobs = [job(0, 4, 2, 1, D=7)]
    out = rl.simulate(t, StubPrices({"a": 1.0, "b": 2.0}), jobs,
                      "skypilot")
    o = out["j"]
    assert o.dollars == pytest.approx(9.0)
    assert (o.finish_round, o.restarts, o.missed) == (6, 1, False)
    s = rl.summarise(t, jobs, out, oracle_per_job=7.0)
    assert s["lost_gpu_hours"] == pytest.approx(1.0)
    assert s["ratio"] == pytest.approx(9.0 / 7.0)
    # The oracle on the same trace (capacity 1 everywhere it is open):
    # A for rounds 0-2 reaches checkpoint 2 ($3), A again from 5: boot
    # + 2 rounds ($3) = $6, done at 8; with deadline 7 that is too
    # late, so B finishes: boot + 2 = $6, $9 in all -- or all in A
    # from 5?  Needs 5 rounds, ends at 10.  So $9 with deadline 7 and
    # $6 with deadline 8.
    offers = [rl.Offer(z, [c >= 1 for c in t.cap[z]],
                       [StubPrices({"a": 1.0, "b": 2.0}).spot(z, 0)] * 8)
              for z in t.zones]
    assert cost(job(0, 4, 2, 1, D=7), offers, 8) == pytest.approx(9.0)
    assert cost(job(0, 4, 2, 1, D=8), offers, 8) == pytest.approx(6.0)


def test_skypilot_model_shares_capacity_and_waits_without_any():
    # One VM in one zone, two jobs: the second waits for the first.
    t = rl.Trace(["a"], {"a": [1] * 10}, {"a": [None] * 10}, 3600,
                 "t0", "test")
    j1 = dict(job(0, 2, 2, 1), name="j1")
    j2 = dict(job(0, 2, 2, 1), name="j2")
    out = rl.simulate(t, StubPrices({"a": 1.0}), [j1, j2], "skypilot")
    assert out["j1"].finish_round == 3
    assert out["j2"].finish_round == 6
    # Vertex AI on-demand: from arrival, overhead + work at its price.
    out = rl.simulate(t, StubPrices({"a": 1.0}), [j1, j2], "vertex")
    assert out["j2"].dollars == pytest.approx(30.0)
    assert out["j2"].finish_round == 3


def test_workload_is_seeded_and_matches_the_issue():
    a = rl.make_workload(seed=5)
    assert a == rl.make_workload(seed=5)
    assert len(a) == 120
    for j in a:
        assert 0 <= j["arrival_minutes"] < 72 * 60
        assert 4 * 60 <= j["work_minutes"] <= 48 * 60
        assert j["checkpoint_minutes"] == 30
        assert j["restart_overhead_minutes"] == 10
        assert 1.1 * j["work_minutes"] - 10 <= j["deadline_minutes"] \
            <= 1.6 * j["work_minutes"]
        assert j["machine_type"] == "a3-highgpu-1g"
    b = rl.make_workload(seed=5, deadline=None)
    assert [dict(x, deadline_minutes=None) for x in a] == b
    # The committed default workloads are these, seed 17.
    data = os.path.join(BENCH, "data")
    with open(os.path.join(data, "replay-deadline.json")) as f:
        assert json.load(f) == rl.make_workload()
    with open(os.path.join(data, "replay-nodeadline.json")) as f:
        assert json.load(f) == rl.make_workload(deadline=None)


def test_prices_are_the_catalogs():
    t = rl.Trace(["us-east4-a", "us-central1-a"],
                 {"us-east4-a": [1, 1], "us-central1-a": [1, 1]},
                 {"us-east4-a": [1.5, None], "us-central1-a": [None, None]},
                 600, "t0", "test")
    p = rl.Prices(t)
    # Vertex AI on-demand: 11.2660332 + 26 x 0.0293227 + 234 x 0.0025534
    assert p.vertex == pytest.approx(12.6259, abs=1e-4)
    # Compute Engine list 9.79655 + host on-demand 1.18251
    assert p.standard == pytest.approx(10.97906)
    # The trace's GPU price, carried to the next round, + host Spot.
    assert p.spot("us-east4-a", 1) == pytest.approx(1.5 + 0.4601)
    # No trace price: the catalog's Spot GPU + host Spot.
    assert p.spot("us-central1-a", 0) == pytest.approx(5.3387 + 0.64454)
    assert any("flagged" in line for line in p.table())


def test_a_window_of_the_trace_keeps_its_prices_and_capacity():
    t = rl.Trace(["us-east4-a"], {"us-east4-a": [1, 2, 3, 4, 5]},
                 {"us-east4-a": [None, None, 1.5, None, 2.5]}, 600,
                 "2025-10-04T00:10:00Z", "test")
    p = rl.Prices(t)
    w = t.cut(2, first=2)
    p.window(w.first)
    assert (w.first, w.rounds, w.cap["us-east4-a"]) == (2, 2, [3, 4])
    assert w.start == "2025-10-04T00:30:00Z"
    # Prices read from the whole trace: round 0 of the window is round 2.
    assert p.spot("us-east4-a", 0) == pytest.approx(1.5 + 0.4601)
    assert p.spot("us-east4-a", 1) == pytest.approx(1.5 + 0.4601)
    # Before the first recorded price, the first one (as the fake does).
    assert rl.Prices(t).spot("us-east4-a", 0) == pytest.approx(1.5 + 0.4601)


def test_replay_raises_every_quota_a_spot_h100_draws_on():
    """bench/replay_fake.py's raise_quotas: every metric the fake charges
    a Spot or on-demand a3-highgpu-1g for (fakegcp_quota.QuotaBook, the
    fake's own rules) is raised in every replayed region.  Left at 16
    (PREEMPTIBLE_NVIDIA_H100_GPUS), every policy was held to 16 Spot
    H100s a region and gpuqd moved jobs where its quota view then kept
    them from going."""
    fake_dir = os.path.join(os.path.dirname(HERE), "fakegcp")
    if fake_dir not in sys.path:
        sys.path.insert(0, fake_dir)
    import fakegcp_quota as fq
    import replay_fake

    class Book(fq.QuotaBook):
        def __init__(self):
            self.limits, self.vertex_limits = {}, {}

        def ctl(self, path, body):
            assert path == "/_fake/quota"
            if body.get("service") != "vertex":
                self.limits[("p", body["region"], body["metric"])] = \
                    float(body["limit"])

    b = Book()
    regions = {"us-east4", "europe-west1"}
    replay_fake.raise_quotas(b, regions)
    for r in sorted(regions):
        for spot in (True, False):
            m = b.gpu_metric("p", r, replay_fake.GPU, spot)
            assert m is not None and b.limit("p", r, m) >= 1000, (r, m)
            assert b.limit("p", r, b.cpu_metric("p", r, spot)) >= 1000
    assert b.limit("p", "global", "GPUS_ALL_REGIONS") >= 1000


def test_replay_puts_the_daemons_directories_on_tmpfs(tmp_path, monkeypatch):
    """bench/replay_fake.py's use_tmpfs: what cloudutil and gpuqdtest
    make under /tmp goes to GPUQ_REPLAY_TMPDIR (default /dev/shm), so
    gpuqd's fdatasyncs are not real milliseconds counted 2,016 times;
    other directories are left alone, and "/tmp" turns it off."""
    import tempfile
    import replay_fake
    monkeypatch.setattr(tempfile, "mkdtemp", tempfile.mkdtemp)
    monkeypatch.setenv("GPUQ_REPLAY_TMPDIR", str(tmp_path))
    replay_fake.use_tmpfs()
    replay_fake.use_tmpfs()         # twice: wrapped once
    d = tempfile.mkdtemp(prefix="gpuq-it-", dir="/tmp")
    assert os.path.dirname(d) == str(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    e = tempfile.mkdtemp(prefix="x-", dir=str(other))
    assert os.path.dirname(e) == str(other)
    monkeypatch.setattr(tempfile, "mkdtemp", tempfile.mkdtemp.wrapped)
    monkeypatch.setenv("GPUQ_REPLAY_TMPDIR", "/tmp")
    replay_fake.use_tmpfs()
    f = tempfile.mkdtemp(prefix="gpuq-it-", dir="/tmp")
    assert os.path.dirname(f) == "/tmp"
    os.rmdir(f)


class BoundPrices(StubPrices):
    """Spot at a fixed price per zone; flex-start and on-demand."""
    flex = 5.0
    standard = 8.0

    def spot_series(self, z):
        return [self.p[z]] * 64


def test_bound_shares_a_zones_capacity_between_jobs():
    # One VM in zone a ($1/h) every hour; two jobs of 2 hours' work (one
    # checkpoint) and 1 hour of overhead, both due 3 hours after they
    # arrive at 0.  The oracle lets each have the VM: $3 + $3.  Shared,
    # one of them runs its 3 hours on flex-start: $3 + $15.
    import replay_bound as rb
    t = rl.Trace(["a"], {"a": [1] * 6}, {"a": [None] * 6}, 3600, "t0",
                 "test")
    jobs = [dict(job(0, 2, 2, 1, D=3), name="j1"),
            dict(job(0, 2, 2, 1, D=3), name="j2")]
    p = BoundPrices({"a": 1.0})
    kinds = ("spot", "flex", "standard")
    offers = rl.oracle_offers(t, p, kinds)
    orc = sum(rl.oracle_cost(rl.JobR(j, 3600, 6), offers, 6) for j in jobs)
    assert orc == pytest.approx(6.0)
    b, parts = rb.bound(t, p, jobs, kinds, orc)
    assert parts["lp"] == pytest.approx(18.0)
    assert b == pytest.approx(18.0)
    # With two VMs in a the sharing costs nothing: the oracle's $6.
    t2 = rl.Trace(["a"], {"a": [2] * 6}, {"a": [None] * 6}, 3600, "t0",
                  "test")
    b, parts = rb.bound(t2, p, jobs, kinds, orc)
    assert b == pytest.approx(6.0)
    # Windows of 4 hours: the LP shares a's 4 hours out (3 + 1) and
    # pays flex-start for the other 2 of the 6 needed, $14; a real
    # schedule cannot split one hour of work off a checkpoint of two
    # and pays $18 (one job in a, the other on flex-start).  The bound
    # lies between the two.
    jobs4 = [dict(job(0, 2, 2, 1, D=4), name="j1"),
             dict(job(0, 2, 2, 1, D=4), name="j2")]
    orc4 = sum(rl.oracle_cost(rl.JobR(j, 3600, 6), offers, 6)
               for j in jobs4)
    b, parts = rb.bound(t, p, jobs4, kinds, orc4)
    assert orc4 == pytest.approx(6.0)
    assert parts["lp"] == pytest.approx(14.0)
    assert 14.0 - 1e-9 <= b <= 18.0 + 1e-9
