"""test_client_output.py: what gpuq prints, held against what gpuqd
answers. For every command, its --json output and its table are compared
with the daemon's own reply to the same request, sent over the socket by
the test: a real gpuqd against the simulated cloud (cloudutil), the real
client. A field the client reads under the wrong name shows up here as a
"-" where the reply has a number.

Also here: WHY shown whole at 80 columns, Spot and the checkpoint's age
in gpuq status, WHY after hold, release and cancel, one JSON document
from gpuq plan for a file of several jobs, the Spot-without-checkpoint
warning, and unknown regions refused with the closest name.
"""

import json
import os
import re
import subprocess
import time

from cloudutil import cloud, job_spec, scaled
from conftest import GPUQ, GPUQD, MINIMAL_CONF, run_gpuq

assert cloud  # the fixture, imported for pytest

SPEED = 100
LONG = 10 ** 6          # simulated seconds: runs for the whole test
NO_COLUMNS = {"COLUMNS": ""}    # tables as for a pipe, whatever the shell
T4 = "nvidia-tesla-t4"


def wire(c, req):
    """gpuqd's reply to REQ, as gpuq --json prints it (without "ok")."""
    r = c.request(req)
    assert r.get("ok"), "%r: %r" % (req, r)
    del r["ok"]
    return r


def stable(c, req, run):
    """RUN() (the client's output) between two identical replies of gpuqd
    to REQ, so both saw the same state (a price or quota refresh may land
    between two requests): (reply, output)."""
    for _ in range(5):
        before = wire(c, req)
        out = run()
        if wire(c, req) == before:
            return before, out
        time.sleep(0.2)
    raise AssertionError("gpuqd's reply to %r kept changing" % (req,))


def gpuq_ok(c, *args, env=NO_COLUMNS):
    rc, out, err = c.gpuq(*args, env=env)
    assert rc == 0, "gpuq %s: rc %d: %s" % (" ".join(args), rc, err)
    return out


def cells(line):
    """A table line's cells: columns are apart by two spaces or more."""
    return re.split(r" {2,}", line.strip())


def table(out):
    """The non-blank lines of OUT as lists of cells, header first."""
    return [cells(x) for x in out.splitlines() if x.strip()]


def usd(v):
    return "-" if v is None else "$%.2f" % max(v, 0)


def num(v):
    return "-" if v is None else "%g" % v


def row_index(lines, jid):
    """Index of job JID's line in the lines of a status table."""
    [i] = [k for k, x in enumerate(lines)
           if re.match(r" *%d  " % jid, x)]
    return i


def row_of(out, jid):
    """The cells of job JID's line in gpuq status's table."""
    lines = out.splitlines()
    return cells(lines[row_index(lines, jid)])


def write_job(c, obj, name="job.json"):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


# -- prices ----------------------------------------------------------------------

def test_prices_json_and_table_match_the_reply(cloud):
    c = cloud(providers=("gce",))
    req = {"op": "prices", "gpu": T4}
    want, out = stable(c, req, lambda: gpuq_ok(c, "prices", "--gpu", T4,
                                               "--json"))
    assert json.loads(out) == want
    assert want["prices"], "no T4 prices at all: %r" % want
    want, out = stable(c, req, lambda: gpuq_ok(c, "prices", "--gpu", T4))
    rows = table(out)
    assert rows[0] == ["GPU", "REGION", "HOST", "GCE", "GCE SPOT", "HOST",
                       "HOST SPOT", "VERTEX", "VERTEX SPOT"]
    for p in want["prices"]:
        g, v = p["gce"], p["vertex"]
        row = [p["gpu"], p["region"], p["host"] or "-",
               usd(g["gpu_ondemand"]), usd(g["gpu_spot"]),
               usd(g["host_ondemand"]), usd(g["host_spot"]),
               usd(v["gpu_ondemand"]), usd(v["gpu_spot"])]
        assert row in rows, "no line %r in:\n%s" % (row, out)
    # The GPU prices are there, not dashes (the client once read
    # "ondemand" where gpuqd sends "gpu_ondemand").
    assert any(p["gce"]["gpu_ondemand"] is not None for p in want["prices"])
    assert "source: %s\n" % want["source"] in out


# -- quotas ----------------------------------------------------------------------

def test_quotas_json_and_table_match_the_reply(cloud):
    c = cloud(providers=("gce",))
    c.submit(job_spec(providers=["gce"], work=LONG))
    req = {"op": "quotas", "region": "us-central1"}
    deadline = time.monotonic() + scaled(20)
    while not wire(c, req)["quotas"]:
        assert time.monotonic() < deadline, "no quota readings"
        time.sleep(0.2)

    def without_age(r):
        for q in r["quotas"]:
            q.pop("age_s", None)
        return r

    want, out = stable(c, req, lambda: gpuq_ok(
        c, "quotas", "--region", "us-central1", "--json"))
    assert without_age(json.loads(out)) == without_age(want)
    want, out = stable(c, req, lambda: gpuq_ok(
        c, "quotas", "--region", "us-central1"))
    rows = [r[:7] for r in table(out)]
    assert rows[0] == ["SERVICE", "REGION", "METRIC", "LIMIT", "USAGE",
                       "IN FLIGHT", "FREE"]
    for q in want["quotas"]:
        row = [q["service"], q["region"], q["metric"], num(q.get("limit")),
               num(q.get("usage")), num(q.get("in_flight")),
               num(q.get("free"))]
        assert row in rows, "no line %r in:\n%s" % (row, out)


# -- plan ------------------------------------------------------------------------

def plan_rows_match(reply, out):
    rows = table(out)
    for o in reply["offers"]:
        row = [str(o["rank"]), o["provider"], o.get("zone") or o["region"],
               "spot" if o["spot"] else "standard", o["machine_type"],
               usd(o["hourly_usd"]), usd(o["expected_usd"])]
        assert row in rows, "no offer line %r in:\n%s" % (row, out)
    for o in reply["excluded"][:20]:
        row = [o["provider"], o.get("zone") or o["region"],
               "spot" if o["spot"] else "standard", o["machine_type"],
               usd(o.get("hourly_usd")), o["reason"]]
        assert row in rows, "no excluded line %r in:\n%s" % (row, out)


def test_plan_json_and_table_match_the_reply(cloud):
    c = cloud(providers=("gce", "batch"))
    spec = job_spec(providers=["gce", "batch"])
    path = write_job(c, spec)
    req = {"op": "plan", "job": spec}
    want, out = stable(c, req, lambda: gpuq_ok(c, "plan", "--json", path))
    assert json.loads(out) == want
    assert want["offers"], want
    want, out = stable(c, req, lambda: gpuq_ok(c, "plan", "--all", path))
    # Where is the zone or region alone: SERVICE already names the
    # provider (it once printed "?/us-central1-a").
    assert "?/" not in out
    plan_rows_match(want, out)


def test_plan_of_several_jobs_is_one_json_document(cloud):
    c = cloud(providers=("gce",))
    specs = [job_spec(providers=["gce"], name="a"),
             job_spec(providers=["gce"], name="b", spot="never")]
    path = write_job(c, specs, "sweep.json")
    out = gpuq_ok(c, "plan", "--json", path)
    got = json.loads(out)       # one document, or this raises
    assert isinstance(got, list) and len(got) == 2, out
    for spec, g in zip(specs, got):
        want = wire(c, {"op": "plan", "job": spec})
        assert g.keys() == want.keys()
        assert [(o["provider"], o.get("zone"), o["spot"])
                for o in g["offers"]] == \
            [(o["provider"], o.get("zone"), o["spot"])
             for o in want["offers"]]
    assert all(not o["spot"] for o in got[1]["offers"])
    # One job: the reply object itself, as before.
    path1 = write_job(c, specs[0], "one.json")
    assert isinstance(json.loads(gpuq_ok(c, "plan", "--json", path1)), dict)


# -- submit, status, show ----------------------------------------------------------

def test_submit_status_show_match_the_replies(cloud):
    c = cloud(providers=("gce",))
    spec = job_spec(providers=["gce"], work=LONG, name="first")
    path = write_job(c, spec)
    out = gpuq_ok(c, "submit", path)
    m = re.fullmatch(r"submitted job (\d+)\n", out)
    assert m, out
    jid = int(m.group(1))
    quiet = int(gpuq_ok(c, "submit", "-q", path))
    raw = wire(c, {"op": "submit", "job": dict(spec, name="third")})
    assert set(raw) == {"id"} and raw["id"] == quiet + 1 == jid + 2
    c.wait_running(jid, 60)

    req = {"op": "list", "limit": 1000}
    for args, r in ((("status", "--json"), req),
                    (("status", "--all", "--json"),
                     dict(req, state="all"))):
        want, out = stable(c, r, lambda: gpuq_ok(c, *args))
        assert json.loads(out) == want["jobs"], args
        assert [j["id"] for j in want["jobs"]] == [jid, jid + 1, jid + 2]

    want, out = stable(c, req, lambda: gpuq_ok(c, "status"))
    rows = table(out)
    assert rows[0] == ["ID", "NAME", "STATE", "GPU", "WHERE", "AGE", "COST",
                       "CHECKPOINT", "WHY"]
    for j in want["jobs"]:
        row = row_of(out, j["id"])
        assert row[1:4] == [j["name"], j["state"], "1xT4"], row
        cur = j["current"]
        if cur is not None:
            where = "%s/%s" % (cur["provider"], cur["zone"] or cur["region"])
            assert row[4] == where + (" spot" if cur["spot"] else ""), row
        else:
            assert row[4] == "-", row
        if j["why"]:
            assert row[-1] == j["why"], row
    # The closing counts: the live states, in gpuq(1)'s order.
    live = ("held", "queued", "launching", "pending", "running",
            "cancelling")
    assert out.splitlines()[-1] == ", ".join(
        "%d %s" % (want["counts"][s], s) for s in live
        if want["counts"].get(s)), out

    req = {"op": "show", "id": jid}
    want, out = stable(c, req, lambda: gpuq_ok(c, "show", "--json",
                                               str(jid)))
    assert json.loads(out) == want
    want, out = stable(c, req, lambda: gpuq_ok(c, "show", str(jid)))
    job = want["job"]
    assert job["name"] in out and job["state"] in out
    for a in job["attempts_list"]:
        assert "gce/%s" % a["zone"] in out, out
        assert a["machine_type"] in out


# -- cancel, hold, release, ping -------------------------------------------------

def test_job_verbs_and_ping_match_the_replies(cloud):
    c = cloud(providers=("gce",))
    # Too dear to launch anywhere: it stays queued once released.
    q = c.submit(job_spec(providers=["gce"], work=LONG,
                          max_hourly_usd=0.001), hold=True)
    run = c.submit(job_spec(providers=["gce"], work=LONG))
    c.wait_running(run, 60)
    # Each verb through gpuq, then again on the wire: the same state
    # (holding or releasing twice is fine).
    for verb, jid, line, want in (
            ("release", q, "released job %d\n" % q, "queued"),
            ("hold", q, "held job %d\n" % q, "held")):
        out = gpuq_ok(c, verb, str(jid))
        assert out == line, (verb, out)
        state = wire(c, {"op": verb, "id": jid})["state"]
        assert state == want == \
            wire(c, {"op": "show", "id": jid})["job"]["state"]
    # A running job: gpuq says what the reply's "cancelling" means. The
    # fake may finish the deletion before the next request.
    out = gpuq_ok(c, "cancel", str(run))
    assert out == "cancelling job %d: its cloud resource is being " \
        "deleted\n" % run, out
    r = c.request({"op": "cancel", "id": run})
    assert r.get("state") == "cancelling" or "already cancelled" in \
        r["error"]["message"], r
    # WHY says who cancelled it, in cancelling and once cancelled.
    j = c.wait_state(run, "cancelled", 30)
    assert re.fullmatch(r"cancelled by uid \d+", j["why"]), j
    out = gpuq_ok(c, "cancel", str(q))
    assert out == "cancelled job %d\n" % q
    assert wire(c, {"op": "show", "id": q})["job"]["state"] == "cancelled"

    p = wire(c, {"op": "ping"})
    out = gpuq_ok(c, "ping")
    assert out == "gpuqd %s at %s, install %s, protocol %d\n" % (
        p["version"], c.gpuqd.socket, p["install"], p["proto"]), out
    out = gpuq_ok(c, "--version")
    assert re.fullmatch(r"gpuq \S+ \(protocol %d\)\n" % p["proto"], out)


# -- WHY -------------------------------------------------------------------------

def no_quota(c):
    c.quota("GPUS_ALL_REGIONS", 0, region="global")


def waits_with_why(c, jid, timeout=20):
    return c.wait_for(jid, lambda j: j["state"] == "queued" and j.get("why"),
                      timeout, "queued with a WHY")


def test_long_why_is_shown_whole_at_80_columns(cloud):
    c = cloud(providers=("gce",), setup=no_quota)
    jid = c.submit(job_spec(providers=["gce"], work=LONG,
                            name="a-long-job-name"))
    why = waits_with_why(c, jid)["why"]
    assert len(why) > 40, why
    out = gpuq_ok(c, "status", env={"COLUMNS": "80"})
    lines = out.splitlines()
    assert all(len(x) <= 80 for x in lines), out
    # The row, then WHY under it, whole, indented, broken between words.
    i = row_index(lines, jid)
    under = []
    for x in lines[i + 1:]:
        if not x.startswith("    "):
            break
        under.append(x.strip())
    assert " ".join(under) == why, out
    # Through a real terminal of 80 columns, when tmux is there.
    tmux = "/usr/bin/tmux"
    if os.access(tmux, os.X_OK):
        out = tmux_status(c, tmux, 80)
        assert why.split()[-1] in out and \
            " ".join(out.split()).count(" ".join(why.split())) == 1, out
    # Not a terminal, no COLUMNS: one line per job, WHY last.
    out = gpuq_ok(c, "status")
    assert row_of(out, jid)[-1] == why


def tmux_status(c, tmux, width):
    """What gpuq status shows in a detached tmux window WIDTH columns
    wide: its standard output is the pane's terminal."""
    sock = os.path.join(c.dir, "tmux.sock")
    env = dict(os.environ, LC_ALL="C.UTF-8")
    env.pop("COLUMNS", None)
    cmd = "%s --socket %s status; %s -S %s wait-for -S done; sleep 60" % (
        GPUQ, c.gpuqd.socket, tmux, sock)
    subprocess.run([tmux, "-S", sock, "-f", "/dev/null", "new-session",
                    "-d", "-x", str(width), "-y", "50", "sh", "-c", cmd],
                   env=env, check=True, timeout=30)
    try:
        subprocess.run([tmux, "-S", sock, "wait-for", "done"], timeout=30,
                       check=True)
        return subprocess.run([tmux, "-S", sock, "capture-pane", "-p"],
                              capture_output=True, text=True, timeout=30,
                              check=True).stdout
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], timeout=30)


def test_status_shows_spot_and_checkpoint_age(cloud):
    c = cloud(providers=("gce",))
    jid = c.submit(job_spec(providers=["gce"], work=LONG, ckpt=60,
                            spot="require"))
    c.wait_for(jid, lambda j: j["state"] == "running" and
               j.get("checkpoint_at"), 60, "running with a checkpoint")
    out = gpuq_ok(c, "status")
    row = row_of(out, jid)
    assert re.fullmatch(r"gce/us-central1-[a-z] spot", row[4]), row
    assert re.fullmatch(r"ckpt-\S+ \((\d+[smhd])+\)", row[7]), row


def test_why_follows_hold_release_and_cancel(cloud):
    c = cloud(providers=("gce",), setup=no_quota)
    jid = c.submit(job_spec(providers=["gce"], work=LONG))
    quota_why = waits_with_why(c, jid)["why"]
    assert "GPUS_ALL_REGIONS" in quota_why

    def shown(jid):
        j = wire(c, {"op": "show", "id": jid})["job"]
        out = gpuq_ok(c, "status", "--all")
        row = row_of(out, jid)
        return j, row

    gpuq_ok(c, "hold", str(jid))
    j, row = shown(jid)
    assert j["state"] == "held" and re.fullmatch(
        r"held by uid \d+: 'gpuq release' lets it start", j["why"]), j
    assert row[-1] == j["why"], row
    gpuq_ok(c, "release", str(jid))
    j, row = shown(jid)
    # No longer held; the scheduler's reason comes back on its next pass.
    assert j["state"] == "queued" and "held" not in (j["why"] or ""), j
    waits_with_why(c, jid)
    gpuq_ok(c, "cancel", str(jid))
    j, row = shown(jid)
    assert j["state"] == "cancelled" and re.fullmatch(
        r"cancelled by uid \d+", j["why"]), j
    assert row[-1] == j["why"], row


def test_why_after_relaunch_is_not_the_old_one(cloud):
    """A preempted job queues again with a WHY saying so; once it runs
    again that WHY is gone."""
    c = cloud(providers=("gce",))
    jid = c.submit(job_spec(providers=["gce"], work=LONG, ckpt=60,
                            spot="require"))
    c.wait_running(jid, 60, progress=120)
    [r] = [x for x in c.resources(jid) if not x.get("deleted")]
    c.ctl("/_fake/preempt", {"name": r["resource"]})
    job = c.wait_for(jid, lambda j: j["attempts"] >= 2 and
                     j["state"] == "running", 60, "running again")
    assert not job.get("why"), job
    out = gpuq_ok(c, "status")
    row = row_of(out, jid)
    assert "retrying" not in out and len(row) == 8, out


# -- warnings and refusals at submit -----------------------------------------------

SPOT_WARNING = ("spot: allow but no checkpoint place (no checkpoint.uri, "
                "and gpuqd.conf has no [gcp] checkpoint_root): after a "
                "preemption the job starts again from zero; set "
                "checkpoint.uri, or spot: never")


def test_spot_without_checkpoint_warns_at_submit_and_plan(cloud):
    c = cloud(providers=("gce",), gcp={"checkpoint_root": ""})
    spec = job_spec(providers=["gce"], work=LONG)
    path = write_job(c, spec)
    rc, out, err = c.gpuq("submit", path)
    assert rc == 0 and re.fullmatch(r"submitted job \d+\n", out), err
    jid = int(out.split()[-1])
    assert err == "gpuq: job %d: warning: %s\n" % (jid, SPOT_WARNING)
    raw = wire(c, {"op": "submit", "job": spec})
    assert raw == {"id": jid + 1, "warnings": [SPOT_WARNING]}
    rc, out, err = c.gpuq("plan", path)
    assert rc == 0 and err == "gpuq: %s\n" % SPOT_WARNING, err
    assert json.loads(gpuq_ok(c, "plan", "--json", path))["warnings"] == \
        [SPOT_WARNING]
    # With a checkpoint place, or without Spot: nothing to say.
    for fix in ({"spot": "never"},
                {"checkpoint": {"uri": "gs://gpuq-test-ckpt/run"}}):
        rc, out, err = c.gpuq("submit", write_job(c, dict(spec, **fix)))
        assert rc == 0 and err == "", err


def test_spot_requires_checkpoint_refuses(gpuqd_factory, jobfile):
    d = gpuqd_factory(MINIMAL_CONF + "[gcp]\nspot_requires_checkpoint = yes\n")
    path = jobfile(json.dumps({"image": "img", "accelerator": {
        "type": T4, "count": 1}}))
    rc, out, err = run_gpuq(d.socket, "submit", path)
    assert rc == 1 and out == ""
    assert err == ("gpuq: job rejected: checkpoint.uri: the job may run on "
                   "Spot (spot: allow) and has no checkpoint place, which "
                   "gpuqd.conf requires ([gcp] spot_requires_checkpoint): "
                   "set checkpoint.uri to a gs:// place, or spot: never\n")
    assert d.request({"op": "list"})["jobs"] == []
    ok = jobfile(json.dumps({"image": "img", "spot": "never",
                             "accelerator": {"type": T4, "count": 1}}),
                 "never.json")
    rc, out, err = run_gpuq(d.socket, "submit", ok)
    assert rc == 0 and err == "", err


# -- unknown regions -------------------------------------------------------------

def test_unknown_region_refused_at_submit_with_the_closest(gpuqd, gpuq,
                                                           jobfile):
    job = {"image": "img", "accelerator": {"type": T4, "count": 1}}
    path = jobfile(json.dumps(dict(job, regions=["us-east1",
                                                  "us-centrall1"])))
    rc, out, err = gpuq("submit", path)
    assert rc == 1 and err == (
        "gpuq: job rejected: regions[1]: unknown region \"us-centrall1\"; "
        "did you mean us-central1?\n"), err
    path = jobfile(json.dumps(dict(job, regions=["us-central1-a"])), "z.json")
    rc, out, err = gpuq("submit", path)
    assert rc == 1 and "\"us-central1-a\" is a zone; list its region " \
        "us-central1 instead" in err, err
    assert gpuqd.request({"op": "list"})["jobs"] == []
    rc, out, err = gpuq("submit", jobfile(json.dumps(dict(
        job, regions=["us-central1", "europe-west4"])), "ok.json"))
    assert rc == 0, err


def test_unknown_region_in_conf_stops_gpuqd(gpuqd_factory):
    for regions, words in (
            ("us-central1, us-centrall1",
             "[gcp] regions: unknown region \"us-centrall1\"; did you mean "
             "us-central1?"),
            ("us-central1-a",
             "[gcp] regions: \"us-central1-a\" is a zone; list its region "
             "us-central1 instead")):
        d = gpuqd_factory(MINIMAL_CONF + "[gcp]\nregions = %s\n" % regions,
                          start=False)
        p = subprocess.run(d.argv, capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        assert p.returncode != 0
        assert words in p.stderr, p.stderr
        assert not os.path.exists(d.socket)
    assert os.access(GPUQD, os.X_OK)
