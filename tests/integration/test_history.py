"""gpuq history and the saving against Vertex AI on-demand, through the
real gpuqd and gpuq on the simulated cloud (gpuq(1) "history",
doc/DESIGN.md "Accounting").

Every figure is checked against one computed here, independently of
gpuqd: each attempt costs the price the fake's billing catalog quotes
for its place x the seconds the fake's own clock ran the resource
(SPEED times faster than gpuqd's, as a real bill is by Google's clock),
at least a minute; the baseline is the same seconds at the catalog's
on-demand Vertex AI price for the job's shape in us-central1 (Vertex AI
SKUs are the Compute Engine ones x 1.15 in the fake's catalog,
tests/fakegcp/fakegcp_catalog.py).
"""

import csv
import datetime
import io
import json
import os

from cloudutil import TERMINAL, cloud, job_spec, t4_hourly

assert cloud  # the fixture, imported for pytest

SPEED = 100
REGION = "us-central1"
VERTEX_PREMIUM = 1.15


def expected(c, jid):
    """(cost, baseline, gpu_hours, {provider: (cost, baseline)}) of job
    JID, from the fake's resources and catalog."""
    job = c.show(jid)
    by_attempt = {}
    for r in c.resources(jid):
        by_attempt[(r.get("labels") or {}).get("gpuq-attempt")] = r
    cost = base = gh = 0.0
    per = {}
    for a in job.get("attempts_list") or []:
        r = by_attempt.get(str(a["number"]))
        c.check(r is not None, "no fake resource for attempt %r" %
                a["resource"], jid)
        if not r.get("started"):
            continue
        c.check(r.get("ended"), "resource %s has not ended" %
                a["resource"], jid)
        sec = max(60, int(r["ended"]) - int(r["started"]))
        hourly = t4_hourly(a["region"], spot=a["spot"],
                           machine=a["machine_type"])
        if a["provider"] == "vertex":
            # The machine, plus Vertex AI's management fee: 15 % of the
            # on-demand machine, paid whole by a Spot one too.
            hourly += (VERTEX_PREMIUM - 1) * t4_hourly(
                a["region"], spot=False, machine=a["machine_type"])
        c.check(abs(a["hourly_usd"] - hourly) <= 1e-4 * hourly,
                "attempt %s priced %r/h, the catalog says %r" % (
                    a["number"], a["hourly_usd"], hourly), jid)
        vertex = VERTEX_PREMIUM * t4_hourly(REGION, spot=False,
                                            machine=a["machine_type"])
        c.check(abs(a["baseline_hourly_usd"] - vertex) <= 1e-4 * vertex,
                "baseline %r/h, Vertex AI on-demand is %r/h" % (
                    a["baseline_hourly_usd"], vertex), jid)
        cost += hourly * sec / 3600.0
        base += vertex * sec / 3600.0
        gh += a["gpu_count"] * sec / 3600.0
        pc, pb = per.get(a["provider"], (0.0, 0.0))
        per[a["provider"]] = (pc + hourly * sec / 3600.0,
                              pb + vertex * sec / 3600.0)
    return cost, base, gh, per


def close(x, want, hourly=3.0):
    """Equal but for the cloud's sub-second timestamps (a second or two
    at a few dollars an hour) and the catalog's rounding of its SKUs (a
    part in 10,000)."""
    return abs(x - want) <= hourly * 2.5 / 3600.0 + 1e-4 * abs(want)


def test_history_totals_savings_filters(cloud):
    c = cloud(speed=SPEED)
    ok_b, bad_g, ok_v = c.submit(
        job_spec(providers=["batch"], work=600, name="h-batch"),
        job_spec(providers=["gce"], work=120, exit_code=3, name="h-gce"),
        job_spec(providers=["vertex"], work=400, name="h-vertex"))
    spot = c.submit(job_spec(providers=["gce"], work=1500, ckpt=100,
                             name="h-spot", spot="require"))
    held = c.submit(job_spec(providers=["batch"], name="h-held"), hold=True)
    c.wait_running(spot, 60, progress=400)
    [r] = c.resources(spot)
    c.ctl("/_fake/preempt", {"name": r["resource"]})
    rc, out, err = c.gpuq("wait", ok_b, bad_g, ok_v, spot, timeout=180)
    c.check(rc == 1, "wait: rc %d (one job fails), %r %r" % (rc, out, err))
    c.check(c.gpuq("cancel", held)[0] == 0, "cancel the held job")
    c.wait_state(held, TERMINAL, 20)
    ids = [ok_b, bad_g, ok_v, spot, held]
    c.check(c.show(spot)["interruptions"] == 1, "the Spot job was not "
            "interrupted once", spot)

    want = {j: expected(c, j) for j in ids}
    tot_cost = sum(w[0] for w in want.values())
    tot_base = sum(w[1] for w in want.values())
    tot_gh = sum(w[2] for w in want.values())
    c.check(tot_cost > 0.01 and tot_base > tot_cost,
            "the fixture should cost something and save: %r %r" % (
                tot_cost, tot_base))

    # --json: every ended job, its attempts, cost, baseline and saving.
    rc, out, err = c.gpuq("history", "--json")
    c.check(rc == 0, "history --json: %r" % err)
    jobs = {j["id"]: j for j in json.loads(out)}
    c.check(sorted(jobs) == sorted(ids), "history lists %r, want %r" % (
        sorted(jobs), sorted(ids)))
    for jid in ids:
        j, (cost, base, gh, _) = jobs[jid], want[jid]
        c.check(close(j["cost_usd"], cost) and close(j["baseline_usd"],
                base, 4.0) and abs(j["saved_usd"] - (j["baseline_usd"] -
                j["cost_usd"])) < 1e-9 and abs(j["gpu_hours"] - gh) <=
                2.5 / 3600,
                "job %d: history says cost %r baseline %r gpu-h %r; the "
                "catalog x the cloud's seconds say %r %r %r" % (
                    jid, j["cost_usd"], j["baseline_usd"], j["gpu_hours"],
                    cost, base, gh), jid)
        shown = c.show(jid)
        c.check(abs(shown["cost_usd"] - j["cost_usd"]) < 1e-9 and
                abs(shown["baseline_usd"] - j["baseline_usd"]) < 1e-9,
                "show and history disagree", jid)
    c.check(jobs[held]["attempts"] == [] and jobs[held]["cost_usd"] == 0,
            "a job cancelled while held cost %r" % jobs[held]["cost_usd"],
            held)
    sp = jobs[spot]
    c.check(sp["interruptions"] == 1 and len(sp["attempts"]) == 2 and
            sp["attempts"][0]["end_reason"] == "preempted" and
            sp["attempts"][0]["spot"],
            "the Spot job's attempts %r" % sp["attempts"], spot)

    # The table: one row a job and the total line.
    rc, out, err = c.gpuq("history")
    c.check(rc == 0, "history: %r" % err)
    last = out.rstrip("\n").splitlines()[-1]
    saved = tot_base - tot_cost
    c.check(last.startswith("5 jobs, ") and " GPU-hours, $" in last and
            "saved $" in last and last.endswith("against Vertex AI "
                                                "on-demand"),
            "total line %r" % last)
    got = float(last.split(", $")[1].split(",")[0])
    c.check(abs(got - tot_cost) <= 0.011 + 3 * 2.5 / 3600 * 5,
            "table total $%.2f, want $%.2f" % (got, tot_cost))
    got_saved = float(last.split("saved $")[1].split(" ")[0])
    c.check(abs(got_saved - saved) <= 0.011 + 4 * 2.5 / 3600 * 5,
            "table saving $%.2f, want $%.2f" % (got_saved, saved))
    c.check("gce/%s" % REGION in out and " spot" in out and "h-spot" in out,
            "where each attempt ran is missing:\n%s" % out)

    # show prints the same saving.
    rc, out, err = c.gpuq("show", ok_v)
    j = jobs[ok_v]
    line = "$%.2f, saved $%.2f (%.0f%%) against Vertex AI on-demand" % (
        j["cost_usd"], j["baseline_usd"] - j["cost_usd"],
        100 * (j["baseline_usd"] - j["cost_usd"]) / j["baseline_usd"])
    c.check(line in out, "show does not say %r:\n%s" % (line, out), ok_v)

    # --csv parses, and adds up to the same totals.
    rc, out, err = c.gpuq("history", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    c.check(rc == 0 and len(rows) == 5, "csv: rc %d, %d rows" % (rc,
                                                                 len(rows)))
    c.check(abs(sum(float(r["cost_usd"]) for r in rows) -
                sum(j["cost_usd"] for j in jobs.values())) < 1e-4 and
            abs(sum(float(r["saved_usd"]) for r in rows) -
                sum(j["saved_usd"] for j in jobs.values() if
                    j["baseline_usd"] > 0)) < 1e-4,
            "csv totals differ from json")

    # --by service: each service's attempts; the total is everything.
    rc, out, err = c.gpuq("history", "--by", "service", "--json")
    c.check(rc == 0, "--by service: %r" % err)
    rep = json.loads(out)
    groups = {g["key"]: g for g in rep["groups"]}
    c.check(sorted(groups) == ["batch", "gce", "none", "vertex"],
            "service groups %r" % sorted(groups))
    for svc in ("batch", "gce", "vertex"):
        pc = sum(w[3].get(svc, (0, 0))[0] for w in want.values())
        pb = sum(w[3].get(svc, (0, 0))[1] for w in want.values())
        c.check(close(groups[svc]["cost_usd"], pc, 6) and
                close(groups[svc]["baseline_usd"], pb, 8),
                "%s: cost %r baseline %r, want %r %r" % (
                    svc, groups[svc]["cost_usd"],
                    groups[svc]["baseline_usd"], pc, pb))
    c.check(groups["gce"]["jobs"] == 2 and groups["gce"]["attempts"] == 3 and
            groups["gce"]["interruptions"] == 1,
            "gce group %r" % groups["gce"])
    t = rep["total"]
    c.check(t["jobs"] == 5 and close(t["cost_usd"], tot_cost, 12) and
            close(t["baseline_usd"], tot_base, 16) and
            abs(t["gpu_hours"] - tot_gh) <= 5 * 2.5 / 3600,
            "total %r, want cost %r baseline %r" % (t, tot_cost, tot_base))

    for by, key in (("user", str(os.getuid())), ("gpu", "nvidia-tesla-t4"),
                    ("day", datetime.datetime.now(datetime.timezone.utc)
                     .strftime("%Y-%m-%d"))):
        rc, out, err = c.gpuq("history", "--by", by, "--json")
        rep = json.loads(out)
        keys = [g["key"] for g in rep["groups"]]
        c.check(rc == 0 and keys == [key] and
                rep["groups"][0]["jobs"] == 5 and
                abs(rep["groups"][0]["cost_usd"] - t["cost_usd"]) < 1e-9,
                "--by %s: %r" % (by, rep))
    rc, out, err = c.gpuq("history", "--by", "service", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    c.check(rc == 0 and [r["service"] for r in rows] == ["batch", "gce",
                                                         "none", "vertex"],
            "--by service --csv: %r" % out)
    rc, out, err = c.gpuq("history", "--by", "service")
    c.check(rc == 0 and out.startswith("SERVICE") and "SAVED%" in out,
            "--by service table:\n%s" % out)

    # Filters.
    def listed(*args):
        rc, out, err = c.gpuq("history", "--json", *args)
        c.check(rc == 0, "history %r: %r" % (args, err))
        return sorted(j["id"] for j in json.loads(out))

    c.check(listed("--state", "failed") == [bad_g], "--state failed")
    c.check(listed("--state", "succeeded,cancelled") ==
            sorted([ok_b, ok_v, spot, held]), "--state succeeded,cancelled")
    c.check(listed("--name", "h-vertex") == [ok_v], "--name")
    c.check(listed("--user", str(os.getuid())) == sorted(ids), "--user me")
    c.check(listed("--user", "4242") == [], "--user someone else")
    c.check(listed("--since", "1h") == sorted(ids), "--since 1h")
    c.check(listed("--until", "1h") == [], "--until 1h (ago)")
    c.check(listed("--since", "2999-01-01") == [], "--since a future date")
    c.check(listed("--until", "2999-01-01T00:00") == sorted(ids),
            "--until a future date and time")
    rc, out, err = c.gpuq("history", "--since", "last tuesday")
    c.check(rc == 2 and "neither a date" in err, "bad --since: %r" % err)
    rc, out, err = c.gpuq("history", "--state", "running")
    c.check(rc == 1 and "not the state of an ended job" in err,
            "--state running: %r" % err)
    rc, out, err = c.gpuq("history", "--json", "--csv")
    c.check(rc == 2, "--json --csv together: rc %d" % rc)


def test_history_pages(cloud):
    """More ended jobs than a page holds come in pages, each job once,
    in the order they ended."""
    c = cloud(speed=SPEED, providers=("batch",))
    ids = c.submit(*[job_spec(providers=["batch"], name="p%d" % i)
                     for i in range(5)], hold=True)
    for jid in ids:
        c.check(c.gpuq("cancel", jid)[0] == 0, "cancel", jid)
    seen, after = [], None
    while True:
        req = {"op": "history", "limit": 2}
        if after:
            req["after"] = after
        rep = c.request(req)
        c.check(rep["ok"], "history page: %r" % rep)
        seen += [j["id"] for j in rep["jobs"]]
        after = rep.get("next")
        if not after:
            break
    c.check(seen == ids, "pages gave %r, want %r" % (seen, ids))
    rep = c.request({"op": "history", "by": "week"})
    c.check(not rep["ok"] and rep["error"]["field"] == "by",
            "a bad by: %r" % rep)


def test_baseline_is_priced_in_the_jobs_first_region(cloud):
    """The baseline is Vertex AI on-demand in the first region the job
    lists, in its own order, at that region's Vertex AI prices."""
    def setup(c):
        c.price(service="vertex", gpu="nvidia-tesla-t4", region="us-east1",
                usage_type="OnDemand", usd_per_hour=2.0)

    c = cloud(speed=SPEED, regions=("us-central1", "us-east1"), setup=setup)
    east, central = c.submit(
        job_spec(providers=["batch"], work=120, name="east-first",
                 regions=["us-east1", "us-central1"]),
        job_spec(providers=["batch"], work=120, name="central-first",
                 regions=["us-central1", "us-east1"]))
    rc, out, err = c.gpuq("wait", east, central, timeout=120)
    c.check(rc == 0, "wait: rc %d %r" % (rc, err))
    host_east = VERTEX_PREMIUM * t4_hourly("us-east1", count=0)
    for jid, region, want in (
            (east, "us-east1", 2.0 + host_east),
            (central, "us-central1",
             VERTEX_PREMIUM * t4_hourly("us-central1"))):
        [a] = c.attempts(c.show(jid))
        c.check(a["machine_type"] == "n1-highmem-4", "machine %r" %
                a["machine_type"], jid)
        c.check(abs(a["baseline_hourly_usd"] - want) <= 1e-4 * want,
                "baseline %r/h, Vertex AI on-demand in %s is %r/h" % (
                    a["baseline_hourly_usd"], region, want), jid)
