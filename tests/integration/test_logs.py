"""gpuq logs through the real binaries against the simulated cloud
(doc/DESIGN.md "Logs"): a job's output on each service, -f across a
preemption with the marker line, the owner check, and Cloud Logging's
read quota: one combined query per interval, and a 429 that delays
lines but never drops or repeats one."""
import os
import re
import subprocess
import time

import pytest

from cloudutil import TERMINAL, cloud, job_spec, scaled
from gpuqdtest import program

assert cloud  # the fixture, imported for pytest

NOBODY = (65534, 65534)
FAST = {"logs_interval": "1s"}
LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"
                  r"(?: \[(\d+)\])? (.*)$")


def expected(jid, attempt, need, every, ckpt, start=0, resumed=None,
             ckpt_dir=None):
    """What the fake's training prints (tests/fakegcp/fakegcp_logging.py)
    for one run that finishes, as a sorted list of texts."""
    how = ("resuming from %s" % resumed) if resumed else \
        "starting from scratch"
    out = ["gpuq-fake: job %d attempt %d %s" % (jid, attempt, how)]
    p = (start // every + 1) * every
    while p <= need:
        out.append("step %d/%d" % (p, need))
        p += every
    p = (start // ckpt + 1) * ckpt
    while p <= need:
        out.append("step %d: saved checkpoint %sckpt-%08d" % (p, ckpt_dir,
                                                              p))
        p += ckpt
    out.append("gpuq-fake: training finished, exit code 0")
    return sorted(out)


def parse(out):
    """(time, attempt, text) of each log line; markers kept as text."""
    rows = []
    for ln in out.splitlines():
        m = LINE.match(ln)
        if m:
            rows.append((m.group(1), int(m.group(2) or 1), m.group(3)))
        else:
            rows.append((None, None, ln))
    return rows


def ckpt_dir(c, jid):
    return c.show(jid)["spec"].get("checkpoint", {}).get("uri") or \
        "gs://gpuq-ckpt/%d/checkpoints/" % jid


@pytest.mark.parametrize("provider", ["gce", "batch", "vertex"])
def test_logs_of_a_job_on_each_service(cloud, provider):
    c = cloud(providers=(provider,), speed=100, gcp=FAST)
    need, every, ck = 120, 30, 60
    jid = c.submit(job_spec(providers=[provider], work=need, ckpt=ck,
                            env={"FAKEGCP_LOG_EVERY": str(every)}))
    job = c.wait_state(jid, TERMINAL, 90)
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    rc, out, err = c.gpuq("logs", jid)
    c.check(rc == 0, "gpuq logs: rc %d: %s" % (rc, err), jid)
    rows = parse(out)
    c.check(all(t is not None for t, _, _ in rows),
            "a line without its time: %r" % out, jid)
    texts = [x for _, _, x in rows]
    cdir = c.attempts(job)[0].get("checkpoint_dir") or \
        re.search(r"saved checkpoint (\S+/)ckpt-", out).group(1)
    c.check(sorted(texts) == expected(jid, 1, need, every, ck,
                                      ckpt_dir=cdir),
            "logs of job %d on %s:\n%s" % (jid, provider, out), jid)
    c.check(texts[0].startswith("gpuq-fake: job %d attempt 1" % jid) and
            texts[-1] == "gpuq-fake: training finished, exit code 0",
            "not oldest first:\n%s" % out, jid)
    times = [t for t, _, _ in rows]
    c.check(times == sorted(times), "times out of order:\n%s" % out, jid)
    # --tail and --attempt select from the same lines
    rc, out2, err = c.gpuq("logs", "--tail", "2", jid)
    c.check(rc == 0 and [x for _, _, x in parse(out2)] == texts[-2:],
            "--tail 2 printed %r (%s)" % (out2, err), jid)
    rc, out3, err = c.gpuq("logs", "--attempt", "2", jid)
    c.check(rc == 0 and out3 == "", "--attempt 2 of a one-attempt job "
            "printed %r" % out3, jid)
    rc, out4, err = c.gpuq("logs", "--node", "0", "--since", "1000d", jid)
    c.check(rc == 0 and out4 == out, "--node 0 --since 1000d printed %r"
            % out4, jid)
    rc, out5, err = c.gpuq("logs", "--node", "1", jid)
    c.check(rc == 0 and out5 == "", "--node 1 of a one-node job printed %r"
            % out5, jid)
    rc, out6, err = c.gpuq("logs", "--tail", "0", jid)
    c.check(rc == 2 and "--tail takes a number from 1" in err,
            "--tail 0: rc %d %r" % (rc, err), jid)


@pytest.mark.parametrize("provider", ["gce", "batch"])
def test_follow_across_a_preemption(cloud, provider):
    c = cloud(providers=(provider,), speed=100, gcp=FAST)
    need, every, ck = 900, 50, 100
    jid = c.submit(job_spec(providers=[provider], work=need, ckpt=ck,
                            spot="require",
                            env={"FAKEGCP_LOG_EVERY": str(every)}))
    follow = subprocess.Popen(
        [program("gpuq"), "--socket", c.gpuqd.socket, "logs", "-f",
         str(jid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={"LC_ALL": "C.UTF-8", "TZ": "UTC"})
    try:
        c.wait_running(jid, 60, progress=350)
        [r] = [x for x in c.resources(jid) if not x["deleted"]]
        c.ctl("/_fake/preempt", {"name": r["resource"]})
        job = c.wait_state(jid, TERMINAL, 120)
        out, err = follow.communicate(timeout=scaled(60))
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.communicate()
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    c.check(follow.returncode == 0, "gpuq logs -f: rc %r: %s" % (
        follow.returncode, err), jid)
    att = c.attempts(job)
    c.check(len(att) == 2, "%d attempts" % len(att), jid)
    resumed = att[1]["resumed_from"]
    rows = parse(out)
    markers = [x for t, _, x in rows if t is None]
    want = "--- attempt 1 ended: preempted"
    c.check(len(markers) == 2 and markers[0].startswith(want) and
            markers[0].endswith("; attempt 2 resumed from %s ---" % resumed)
            and markers[1] == "--- job %d succeeded ---" % jid,
            "markers %r\n%s" % (markers, out), jid)
    first = [x for t, a, x in rows if t is not None and a == 1]
    second = [x for t, a, x in rows if t is not None and a == 2]
    m = rows.index((None, None, markers[0]))
    c.check(all(a == 1 for t, a, _ in rows[:m]) and
            all(a == 2 for t, a, _ in rows[m + 1:-1]),
            "attempt 1's lines are not all before the marker:\n%s" % out,
            jid)
    c.check(first[0] == "gpuq-fake: job %d attempt 1 starting from "
            "scratch" % jid, "attempt 1 began with %r" % first[:1], jid)
    c.check(len(first) == len(set(first)) and len(second) ==
            len(set(second)), "a line repeated:\n%s" % out, jid)
    start = int(re.search(r"(\d+)$", resumed).group(1))
    cdir = resumed[:resumed.rindex("ckpt-")]
    c.check(sorted(second) == expected(jid, 2, need, every, ck, start=start,
                                       resumed=resumed, ckpt_dir=cdir),
            "attempt 2's lines:\n%s" % "\n".join(second), jid)
    c.check("step %d/%d" % (start, need) in first,
            "attempt 1 never printed the step it checkpointed:\n%s" % out,
            jid)


def test_another_user_may_not_read_a_jobs_logs(cloud):
    c = cloud(providers=("gce",), speed=100, gcp=FAST)
    jid = c.submit(job_spec(providers=["gce"], work=60))
    os.chmod(c.gpuqd.socket, 0o666)
    rc, out, err = c.gpuq("logs", jid, user=NOBODY)
    c.check(rc == 1 and out == "" and
            err.startswith("gpuq: logs %d: forbidden" % jid) and
            "may read the logs of it" in err,
            "another user's gpuq logs: rc %d, %r %r" % (rc, out, err), jid)
    rc, out, err = c.gpuq("logs", 999999)
    c.check(rc == 1 and "no job 999999" in err, "unknown job: %r" % err,
            jid)


def test_one_combined_read_for_every_job_and_client(cloud):
    c = cloud(providers=("vertex",), speed=100, gcp={"logs_interval": "2s"})
    spec = job_spec(providers=["vertex"], work=100000,
                    env={"FAKEGCP_LOG_EVERY": "60"})
    ids = c.submit(spec, dict(spec, name="e2e-b"), dict(spec, name="e2e-c"))
    for jid in ids:
        c.wait_running(jid, 60)
    procs = [subprocess.Popen(
        [program("gpuq"), "--socket", c.gpuqd.socket, "logs", "-f",
         str(jid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for jid in ids for _ in range(2)]
    try:
        time.sleep(3)
        before = c.counters().get("logging.entries.list", 0)
        time.sleep(10)
        after = c.counters().get("logging.entries.list", 0)
    finally:
        for p in procs:
            p.kill()
            p.communicate()
    # Six clients of three jobs: one query every 2 s, not one per job
    # or per client (which would be 15 or 30 in 10 s).
    c.check(3 <= after - before <= 6, "%d entries.list calls in 10 s"
            % (after - before), ids[0])


def test_a_429_backs_off_and_still_delivers_every_line_once(cloud):
    # Four reads in any 5 s, pages of 5 entries: the first round alone
    # needs more, so the quota runs out in mid-round.
    c = cloud(providers=("batch",), speed=100, gcp=FAST,
              fake_config={"logging_reads_per_minute": 4,
                           "logging_rate_window": 5,
                           "logging_page_max": 5})
    need, every, ck = 300, 10, 60
    jid = c.submit(job_spec(providers=["batch"], work=need, ckpt=ck,
                            env={"FAKEGCP_LOG_EVERY": str(every)}))
    job = c.wait_state(jid, TERMINAL, 90)
    rc, out, err = c.gpuq("logs", jid, timeout=scaled(120))
    c.check(rc == 0, "gpuq logs: rc %d: %s" % (rc, err), jid)
    texts = [x for _, _, x in parse(out)]
    cdir = re.search(r"saved checkpoint (\S+/)ckpt-", out).group(1)
    c.check(sorted(texts) == expected(jid, 1, need, every, ck,
                                      ckpt_dir=cdir),
            "lines after 429s:\n%s" % out, jid)
    n429 = c.counters().get("logging.entries.list:429", 0)
    c.check(n429 > 0, "the fake never said 429", jid)
    c.check("rate limiting reads" in c.gpuqd.read_log(),
            "gpuqd did not say it backed off", jid)
