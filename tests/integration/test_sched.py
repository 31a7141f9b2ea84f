"""Where each job runs (issue "Choosing where each job runs"), through the
real gpuqd and gpuq against the simulated cloud: quota per region and
per bucket (on-demand, PREEMPTIBLE_, GPUS_ALL_REGIONS) with no double
counting, stockouts and their cool-down (kept across a restart,
zonesAvailable followed), prices read from the billing catalog, the
preemption rate learnt from history, and the WHY texts of `gpuq status`
and `gpuq plan`.

Prices: unless a test overrides them, the fake's catalog is the list
price (tests/fakegcp/data): one T4 on n1-highmem-4 in us-central1 or
us-east1 costs 0.35 + 0.23661 = 0.58661 $/h on demand and 0.1915 +
0.07948 = 0.27098 $/h Spot; Vertex AI adds 15 %. Overrides are set
before gpuqd starts, so its first catalog read sees them.

Skipped, with the reason, until gpuqd launches jobs (cloudutil).
"""

import json
import time

import pytest

from cloudutil import (LIVE_CLOUD, TERMINAL, cloud, job_spec,
                       need_plan, region_zones, scaled, t4_hourly,
                       zone_of_path)

assert cloud  # the fixture, imported for pytest

SPEED = 100
LONG = 10 ** 6          # simulated seconds: runs for the whole test


def t4_price(c, region, usd, usage="OnDemand", service="compute"):
    c.price(service=service, gpu="nvidia-tesla-t4", region=region,
            usage_type=usage, usd_per_hour=usd)


def placed(c, jid, timeout=30):
    """The job's attempt once it is in the cloud."""
    job = c.wait_state(jid, LIVE_CLOUD + ("succeeded",), timeout)
    return c.attempts(job)[-1]


def waits_with(c, jid, words, timeout=20):
    """Until the job is queued with a WHY holding every one of WORDS."""
    def ok(j):
        why = j.get("why") or ""
        return j["state"] == "queued" and all(w in why for w in words)
    return c.wait_for(jid, ok, timeout, "queued with a WHY naming %s" %
                      ", ".join(words))


def insert_zones(c, provider="gce"):
    return [zone_of_path(r["path"]) for r in c.creates(provider)]


# -- quota ----------------------------------------------------------------------

def test_quota_exhausted_in_cheapest_region_goes_to_next(cloud):
    """us-east1 is cheapest, then us-central1, then europe-west4 (GPU price
    overrides). us-east1 has room for one T4: the first job takes it, the
    second goes to us-central1 (gpuqd counts its own job against the
    quota), and once the fake reports us-central1 full, the third goes to
    europe-west4."""
    def setup(c):
        t4_price(c, "us-east1", 0.10)
        t4_price(c, "us-central1", 0.20)
        t4_price(c, "europe-west4", 0.60)
        c.quota("NVIDIA_T4_GPUS", 1, region="us-east1")

    c = cloud(speed=SPEED, providers=("gce",), setup=setup,
              regions=("us-central1", "us-east1", "europe-west4"))
    spec = job_spec(providers=["gce"], work=LONG, spot="never")
    a = c.submit(spec)
    where = placed(c, a)["region"]
    c.check(where == "us-east1", "the cheapest region is us-east1; job "
            "went to %r" % where, a)
    c.wait_state(a, "running", 30)
    b = c.submit(spec)
    where = placed(c, b)["region"]
    c.check(where == "us-central1", "us-east1's only T4 is taken; job went "
            "to %r" % where, b)
    c.quota("NVIDIA_T4_GPUS", region="us-central1", limit=16, usage=16)
    time.sleep(3)                       # quota_ttl is 2 s
    d = c.submit(spec)
    where = placed(c, d)["region"]
    c.check(where == "europe-west4", "us-central1 is full; job went to %r" %
            where, d)
    refused = [r for r in c.creates("gce") if r["status"] >= 400]
    c.check(not refused, "creates refused by the cloud: %r" % refused)


def test_two_jobs_that_fit_only_alone(cloud):
    """Room for 2 T4s; two jobs of 2 T4s each, submitted together: one
    launches, the other waits for quota (no double counting, no
    quota error from the cloud), and launches when the first is done."""
    c = cloud(speed=SPEED, providers=("gce",),
              setup=lambda c: c.quota("NVIDIA_T4_GPUS", 2,
                                      region="us-central1"))
    a, b = c.submit(*[job_spec(providers=["gce"], work=600, count=2,
                               spot="never")] * 2)
    first = None
    deadline = time.monotonic() + scaled(20)
    while first is None and time.monotonic() < deadline:
        ja, jb = c.show(a), c.show(b)
        live = [j for j in (ja, jb) if j["state"] in LIVE_CLOUD]
        if live:
            first = live[0]
        time.sleep(0.2)
    c.check(first is not None, "neither job launched")
    other = b if first["id"] == a else a
    waits_with(c, other, ["quota", "us-central1"])
    time.sleep(2)
    c.check(c.show(other)["state"] == "queued", "both jobs launched")
    c.check(len(c.creates("gce")) == 1, "create calls while one job fits: "
            "%r" % c.creates("gce"))
    for j in (first["id"], other):
        job = c.wait_state(j, TERMINAL, 60)
        c.check(job["state"] == "succeeded", "ended %s" % job["state"], j)
    c.check(all(r["status"] < 400 for r in c.creates("gce")),
            "a create was refused: %r" % c.creates("gce"))


@pytest.mark.parametrize("case", ["on-demand-here", "spot-elsewhere"])
def test_spot_quota_exhausted(cloud, case):
    """us-central1's PREEMPTIBLE_NVIDIA_T4_GPUS is used up (limit 1,
    usage 1) while its on-demand T4s are free. With only us-central1 the
    job runs on demand there; with us-east1 too, Spot in us-east1 is
    cheaper in expectation (0.271 x (1 + 0.1 x (0.25 h + 10 m)) = 0.282
    $/h against 0.587 on demand), so it runs there as Spot."""
    def setup(c):
        c.quota("PREEMPTIBLE_NVIDIA_T4_GPUS", 1, region="us-central1",
                usage=1)
        c.quota("NVIDIA_T4_GPUS", 4, region="us-central1")

    regions = ("us-central1",) if case == "on-demand-here" else \
        ("us-central1", "us-east1")
    c = cloud(speed=SPEED, providers=("gce",), regions=regions, setup=setup)
    jid = c.submit(job_spec(providers=["gce"], work=LONG))
    a = placed(c, jid)
    if case == "on-demand-here":
        want = ("us-central1", False)
    else:
        want = ("us-east1", True)
    c.check((a["region"], a["spot"]) == want,
            "placed in %s spot=%s, want %s spot=%s" % (
                (a["region"], a["spot"]) + want), jid)
    c.wait_state(jid, "running", 30)


def test_spot_quota_zero_draws_on_the_on_demand_bucket(cloud):
    """With PREEMPTIBLE_NVIDIA_T4_GPUS at limit 0, Compute Engine counts
    Spot VMs against NVIDIA_T4_GPUS (DESIGN GA.2; the fake does the
    same). Room for one T4 there: one job runs (Spot or not) and uses it;
    the next waits for quota, and `plan` names NVIDIA_T4_GPUS, the
    bucket really used, for Spot and on-demand offers alike."""
    def setup(c):
        c.quota("PREEMPTIBLE_NVIDIA_T4_GPUS", 0, region="us-central1")
        c.quota("NVIDIA_T4_GPUS", 1, region="us-central1")

    c = cloud(speed=SPEED, providers=("gce",), setup=setup)
    spec = job_spec(providers=["gce"], work=LONG)
    a = c.submit(spec)
    c.wait_state(a, "running", 30)
    used = c.ctl("/_fake/quota")["compute"]["us-central1"]
    c.check(used["NVIDIA_T4_GPUS"]["usage"] == 1, "fake quota usage %r" %
            {k: v for k, v in used.items() if "T4" in k}, a)
    b = c.submit(spec)
    waits_with(c, b, ["quota", "us-central1"])
    c.check(len(c.creates("gce")) == 1, "creates: %r" % c.creates("gce"), b)
    # The plan names the bucket: every us-central1 offer, Spot or not,
    # is excluded for NVIDIA_T4_GPUS (none for the PREEMPTIBLE_ twin).
    need_plan(c)
    r = c.request({"op": "plan", "job": spec})
    c.check(r.get("ok"), "plan: %r" % r, b)
    reasons = [x["reason"] for x in r["excluded"]]
    c.check(reasons and all("NVIDIA_T4_GPUS" in x and "PREEMPTIBLE" not in x
                            for x in reasons) and not r["offers"],
            "plan with the one T4 in use: %r" % r, b)


def test_gpus_all_regions_exhausted_waits_and_says_why(cloud):
    def setup(c):
        c.quota("GPUS_ALL_REGIONS", 0, region="global")

    c = cloud(speed=SPEED, providers=("gce", "batch"), setup=setup,
              regions=("us-central1", "us-east1"))
    jid = c.submit(job_spec(providers=["gce", "batch"], work=LONG))
    job = waits_with(c, jid, ["GPUS_ALL_REGIONS"])
    c.check(not c.attempts(job) and not c.creates(),
            "launched despite GPUS_ALL_REGIONS = 0: %r" % c.creates(), jid)
    rc, out, err = c.gpuq("status")
    c.check(rc == 0 and "GPUS_ALL_REGIONS" in out,
            "gpuq status does not say why:\n%s%s" % (out, err), jid)
    rc, out, err = c.gpuq("status", "--json")
    c.check(rc == 0 and "GPUS_ALL_REGIONS" in json.loads(out)[0]["why"],
            "gpuq status --json: %s%s" % (out, err), jid)
    # Room again: the job starts once the quota reading expires.
    c.quota("GPUS_ALL_REGIONS", 8, region="global")
    placed(c, jid, 20)


# -- stockouts ------------------------------------------------------------------

def test_stockout_moves_zone_and_cool_down_survives_restart(cloud):
    """A job lands in zone Z1. Z1 then runs out of T4s with
    ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS naming Z2 (the last of the
    region's other T4 zones). The next job tries Z1 (same inputs, same
    choice), then goes straight to Z2; later jobs, before and after a
    restart of gpuqd, do not try Z1 during its cool-down (60 s)."""
    c = cloud(speed=SPEED, providers=("gce",),
              scheduler={"stockout_cooldown": "60s",
                         "stockout_cooldown_max": "60s"})
    spec = job_spec(providers=["gce"], work=100, spot="never")
    first = c.submit(spec)
    z1 = placed(c, first)["zone"]
    c.wait_state(first, "succeeded", 60)
    z2 = [z for z in region_zones("us-central1") if z != z1][-1]
    c.ctl("/_fake/stockout", {"zone": z1, "gpu": "nvidia-tesla-t4",
                              "with_details": True,
                              "zones_available": [z2]})
    c.ctl("/_fake/counters/reset", {})

    second = c.submit(spec)
    c.wait_state(second, "succeeded", 60)
    tried = insert_zones(c)
    c.check(tried[:1] == [z1], "the second job did not try %s first (tried "
            "%r): this test assumes gpuqd picks the same zone for the same "
            "inputs" % (z1, tried), second)
    c.check(tried == [z1, z2], "after the stockout in %s, gpuqd tried %r; "
            "zonesAvailable said %s" % (z1, tried, z2), second)
    c.check(c.attempts(c.show(second))[-1]["zone"] == z2,
            "ran in %r" % c.attempts(c.show(second))[-1]["zone"], second)

    c.ctl("/_fake/counters/reset", {})
    third = c.submit(spec)
    c.wait_state(third, "succeeded", 60)
    c.restart()
    fourth = c.submit(spec)
    c.wait_state(fourth, "succeeded", 60)
    tried = insert_zones(c)
    c.check(z1 not in tried, "%s was tried during its cool-down (before "
            "or after the restart): %r" % (z1, tried), fourth)


def test_stockout_everywhere_waits_out_the_cool_down(cloud):
    """Every T4 zone of the only region is out. Each zone is tried at most
    once per cool-down (6 s), the job waits saying so, and it launches
    once capacity is back and the cool-down has passed."""
    cool = 6.0
    c = cloud(speed=SPEED, providers=("gce",),
              scheduler={"stockout_cooldown": "6s",
                         "stockout_cooldown_max": "6s"},
              setup=lambda c: c.ctl("/_fake/stockout", {
                  "zone": "us-central1", "gpu": "nvidia-tesla-t4"}))
    jid = c.submit(job_spec(providers=["gce"], work=100, spot="never"))
    time.sleep(4)
    job = c.show(jid)
    c.check(job["state"] == "queued" and job.get("why"),
            "state %s why %r while every zone is out" % (job["state"],
                                                        job.get("why")), jid)
    tried = insert_zones(c)
    c.check(tried and len(tried) == len(set(tried)),
            "zones tried within one cool-down: %r" % tried, jid)
    c.ctl("/_fake/stockout", {"zone": "us-central1",
                              "gpu": "nvidia-tesla-t4", "on": False})
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "ended %s" % job["state"], jid)
    times = {}
    for r in c.creates("gce"):
        times.setdefault(zone_of_path(r["path"]), []).append(r["real_time"])
    # gpuqd keeps cool-downs in whole seconds: one may end up to 1 s early.
    for z, ts in times.items():
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        c.check(all(g >= cool - 1.0 for g in gaps),
                "%s retried %r s apart; cool-down %s s" % (z, gaps, cool),
                jid)


# -- prices and the preemption rate ---------------------------------------------

def test_catalog_price_change_picks_another_service(cloud):
    """Compute Engine and Batch (Compute prices) beat Vertex AI (+15 %) at
    list prices. After the T4's Compute price goes to 3 $/h in the
    billing catalog and gpuqd restarts, Vertex AI is the cheapest."""
    c = cloud(probe=("gce", "batch", "vertex"), speed=SPEED)
    spec = job_spec(work=100, spot="never")
    one = c.submit(spec)
    a = placed(c, one)
    c.check(a["provider"] in ("gce", "batch"), "at list prices the job went "
            "to %s" % a["provider"], one)
    want = t4_hourly("us-central1")
    c.check(abs(a["hourly_usd"] - want) <= 0.01 * want,
            "hourly %r; the catalog says %.5f" % (a["hourly_usd"], want),
            one)
    c.wait_state(one, TERMINAL, 60)
    t4_price(c, "us-central1", 3.0)
    c.restart()
    two = c.submit(spec)
    b = placed(c, two)
    c.check(b["provider"] == "vertex", "after the Compute T4 price rose to "
            "3 $/h the job went to %s at %r $/h" % (b["provider"],
                                                    b["hourly_usd"]), two)
    c.check(abs(b["hourly_usd"] - 1.15 * want) <= 0.03 * want,
            "Vertex hourly %r; the catalog says about %.4f" % (
                b["hourly_usd"], 1.15 * want), two)


def test_learnt_preemption_rate_prefers_standard(cloud):
    """Spot costs 0.27098 $/h and on-demand 0.58661 (ratio 2.165) for one
    T4 in us-central1. With restart_overhead = 24 h and a checkpoint
    interval of 1 min, a Spot offer is priced 0.27098 x (1 + λ x 24.008):
    Spot stays cheaper while λ < 0.0485 per hour. The prior is 0.001 per
    hour, so the first attempt is Spot. λ is learnt as (preemptions +
    prior x 10 h) / (Spot hours + 10 h) (daemon/cost.h); each attempt is
    preempted after about 2 real seconds (200 simulated), so after one
    preemption λ >= 1.01 / 10.06 = 0.1 per hour whichever clock gpuqd
    counts the hours with, and the next attempt must be on demand."""
    c = cloud(speed=SPEED, providers=("gce",),
              scheduler={"preemptions_per_hour": "0.001",
                         "restart_overhead": "24h"})
    jid = c.submit(job_spec(providers=["gce"], work=LONG, ckpt=100,
                            checkpoint={"interval": "1m"}))
    for n in range(1, 8):
        job = c.wait_for(jid, lambda j: j["state"] == "running" and
                         len(c.attempts(j)) == n, 60,
                         "attempt %d running" % n)
        a = c.attempts(job)[-1]
        if n == 1:
            c.check(a["spot"], "with λ = 0.001/h the first attempt should "
                    "be Spot", jid)
        if not a["spot"]:
            break
        time.sleep(2)
        [r] = [r for r in c.resources(jid) if r["state"] == "RUNNING"]
        c.ctl("/_fake/preempt", {"name": r["resource"]})
    else:
        c.fail("still Spot after %d preemptions" % (n - 1), jid)
    c.check(n == 2, "on demand only after %d preemptions; one makes λ >= "
            "0.1/h, over the 0.0485/h where Spot stops being cheaper" %
            (n - 1), jid)


# -- plan -----------------------------------------------------------------------

def pick(c, d, *names):
    for n in names:
        if n in d:
            return d[n]
    c.fail("none of %s in %s" % (names, sorted(d)))


def test_plan_ranks_offers_and_explains_exclusions(cloud):
    """`gpuq plan FILE` and `gpuq plan --json FILE`: the ranked offers
    with hourly and expected cost (cheapest first, Spot stretched by λ),
    and the excluded offers with their reasons (here: no T4 quota in
    us-east1)."""
    def setup(c):
        c.quota("NVIDIA_T4_GPUS", 0, region="us-east1")
        c.quota("PREEMPTIBLE_NVIDIA_T4_GPUS", 0, region="us-east1")

    c = cloud(probe=("gce", "batch", "vertex"), speed=SPEED, setup=setup,
              regions=("us-central1", "us-east1"))
    need_plan(c)
    path = c.dir + "/plan.json"
    with open(path, "w") as f:
        json.dump(job_spec(work=3600, estimated_hours=2), f)
    rc, out, err = c.gpuq("plan", "--json", path)
    c.check(rc == 0, "gpuq plan --json: rc %d %s" % (rc, err))
    p = json.loads(out)
    offers = pick(c, p, "offers", "ranked")
    excluded = pick(c, p, "excluded")
    c.check(offers, "no offers: %s" % out)
    costs = []
    for o in offers:
        hourly = pick(c, o, "hourly_usd", "hourly")
        exp = pick(c, o, "expected_usd", "expected_cost_usd",
                   "expected_cost")
        # us-east1 has no Compute T4 quota; Vertex AI's is its own.
        c.check(o["provider"] in ("gce", "batch", "vertex") and hourly > 0
                and (o["region"] == "us-central1" or
                     o["provider"] == "vertex"), "offer %r" % o)
        if o["spot"]:
            c.check(exp > hourly * 2, "Spot not stretched by λ: %r" % o)
        else:
            c.check(abs(exp - hourly * 2) <= 0.01 * exp,
                    "on-demand expected cost is not hourly x 2 h: %r" % o)
        costs.append(exp)
    c.check(costs == sorted(costs), "offers not ranked by expected cost: %r"
            % costs)
    east = [x for x in excluded if x.get("region") == "us-east1" and
            x.get("provider") in ("gce", "batch")]
    c.check(east and all("NVIDIA_T4_GPUS" in pick(c, x, "reason", "why")
                         for x in east),
            "us-east1 Compute offers not excluded for quota: %r" % excluded)

    rc, out, err = c.gpuq("plan", path)
    c.check(rc == 0, "gpuq plan: rc %d %s" % (rc, err))
    lines = [ln for ln in out.splitlines() if ln.strip()]
    first = offers[0]
    c.check(any(first["provider"] in ln and "us-central1" in ln
                for ln in lines[:3]),
            "the cheapest offer is not at the top of the table:\n%s" % out)
    c.check("NVIDIA_T4_GPUS" in out and "us-east1" in out,
            "the table does not say why us-east1 is excluded:\n%s" % out)
