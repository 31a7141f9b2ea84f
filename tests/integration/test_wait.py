"""gpuq wait and gpuq submit --wait through the real gpuqd and gpuq on
the simulated cloud (gpuq(1) "wait", doc/DESIGN.md "Waiting for jobs").

The exit status is what scripts read: 0 when every job succeeded, 1
when one failed or was cancelled, 124 when --timeout passed first. The
wait is one deferred request gpuqd answers when the jobs end: many
waiting clients cost gpuqd no work while nothing ends, and a client that
hangs up leaves nothing behind.
"""

import json
import os
import re
import socket
import subprocess
import time

from cloudutil import cloud, job_spec, raw_request
from gpuqdtest import program

assert cloud  # the fixture, imported for pytest

SPEED = 100


def test_wait_exit_status_and_lines(cloud):
    c = cloud(speed=SPEED)
    ok, bad = c.submit(job_spec(providers=["batch"], work=120, name="good"),
                       job_spec(providers=["batch"], work=60, exit_code=3,
                                name="bad"))
    t0 = time.monotonic()
    rc, out, err = c.gpuq("wait", ok, timeout=120)
    c.check(rc == 0, "gpuq wait on a job that succeeds: rc %d, %r %r" % (
        rc, out, err), ok)
    c.check(time.monotonic() - t0 < 60, "wait took too long", ok)
    job = c.show(ok)
    c.check(job["state"] == "succeeded", "wait returned while the job "
            "is %s" % job["state"], ok)
    # One line: state, attempts, cost and saving as gpuqd counted them.
    want = "job %d good: succeeded, 1 attempt, $%.2f, saved $%.2f (" % (
        ok, job["cost_usd"], job["baseline_usd"] - job["cost_usd"])
    c.check(out.startswith(want) and out.rstrip().endswith(
        "against Vertex AI on-demand") and out.count("\n") == 1,
        "wait printed %r, want a line starting %r" % (out, want), ok)

    rc, out, err = c.gpuq("wait", ok, bad, timeout=120)
    c.check(rc == 1, "a failed job among those waited for: rc %d, %r %r" %
            (rc, out, err), bad)
    lines = out.splitlines()
    c.check(len(lines) == 2 and lines[0].startswith("job %d good: "
            "succeeded" % ok) and lines[1].startswith(
            "job %d bad: failed (exit 3)" % bad),
            "lines %r" % lines, bad)

    rc, out, err = c.gpuq("wait", "-q", ok, timeout=30)
    c.check(rc == 0 and out == "", "wait -q: rc %d, printed %r" % (rc, out))

    rc, out, err = c.gpuq("wait", 999999, timeout=30)
    c.check(rc == 1 and "no job 999999" in err,
            "wait on an unknown id: rc %d, %r" % (rc, err))
    rc, out, err = c.gpuq("wait", "--timeout", "soon", ok, timeout=30)
    c.check(rc == 2 and "--timeout 'soon'" in err,
            "a bad --timeout: rc %d, %r" % (rc, err))


def test_wait_timeout_and_cancel(cloud):
    c = cloud(speed=SPEED)
    held = c.submit(job_spec(providers=["batch"], name="held"), hold=True)
    t0 = time.monotonic()
    rc, out, err = c.gpuq("wait", "--timeout", "2s", held, timeout=30)
    took = time.monotonic() - t0
    c.check(rc == 124, "time ran out: rc %d, want 124; %r %r" % (
        rc, out, err), held)
    c.check(1.8 <= took < 10, "--timeout 2s returned after %.1fs" % took,
            held)
    c.check(out.startswith("job %d held: held, 0 attempts" % held),
            "timeout line %r" % out, held)

    # A waiter is answered when the job ends, here by a cancel.
    argv = [program("gpuq"), "--socket", c.gpuqd.socket, "wait", str(held)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(0.5)
    c.check(p.poll() is None, "wait returned before the job ended", held)
    rc, _, err = c.gpuq("cancel", held)
    c.check(rc == 0, "cancel: %r" % err, held)
    out, err = p.communicate(timeout=20)
    c.check(p.returncode == 1 and out.startswith(
        "job %d held: cancelled" % held),
        "wait on a cancelled job: rc %d, %r %r" % (p.returncode, out, err),
        held)


def test_submit_wait(cloud):
    c = cloud(speed=SPEED)
    path = os.path.join(c.dir, "job.json")
    with open(path, "w") as f:
        json.dump(job_spec(providers=["vertex"], work=120, name="sw"), f)
    rc, out, err = c.gpuq("submit", "--wait", path, timeout=120)
    m = re.match(r"submitted job (\d+)\njob (\d+) sw: succeeded, ", out)
    c.check(rc == 0 and m and m.group(1) == m.group(2),
            "submit --wait: rc %d, %r %r" % (rc, out, err))
    rc, out, err = c.gpuq("submit", "--timeout", "1s", path, timeout=30)
    c.check(rc == 2 and "--timeout goes with --wait" in err,
            "--timeout without --wait: rc %d, %r" % (rc, err))
    with open(path, "w") as f:
        json.dump(job_spec(providers=["vertex"], work=60, exit_code=2,
                           name="sw-bad"), f)
    rc, out, err = c.gpuq("submit", "--wait", "--timeout", "2m", path,
                          timeout=120)
    c.check(rc == 1 and "sw-bad: failed (exit 2)" in out,
            "submit --wait of a failing job: rc %d, %r" % (rc, out))


def test_many_waiters_cost_nothing_until_the_job_ends(cloud):
    """200 clients wait on one held job: while it waits gpuqd spends
    (almost) no CPU on them; clients that hang up are forgotten; a
    cancel answers every one still there."""
    c = cloud(speed=SPEED)
    with open(c.gpuqd.conf) as f:
        conf = f.read()
    with open(c.gpuqd.conf, "w") as f:
        f.write(conf.replace("[daemon]\n", "[daemon]\nmax_connections = "
                             "1000\nmax_connections_per_uid = 1000\n", 1))
    c.restart()
    held = c.submit(job_spec(providers=["batch"], name="w"), hold=True)
    socks = []
    for i in range(200):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(c.gpuqd.socket)
        s.sendall(b'{"op":"wait","ids":[%d]}\n' % held)
        socks.append(s)
    time.sleep(1)
    cpu0 = _cpu(c.gpuqd.pid)
    time.sleep(3)
    used = _cpu(c.gpuqd.pid) - cpu0
    print("gpuqd CPU with 200 waiters: %.3f s in 3 s" % used)
    # The daemon's own timers (polls, the sweep) cost a little; the
    # waiters add nothing per second.
    c.check(used < 0.3, "gpuqd used %.2fs of CPU in 3s with 200 waiters" %
            used, held)
    for s in socks[:100]:
        s.close()
    time.sleep(1.5)     # the sweep forgets them
    r = raw_request(c.gpuqd.socket, {"op": "cancel", "id": held})
    c.check(r.get("ok"), "cancel: %r" % r, held)
    for s in socks[100:]:
        s.settimeout(20)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        rep = json.loads(buf)
        c.check(rep["ok"] and not rep["timed_out"] and
                rep["jobs"][0]["state"] == "cancelled",
                "waiter's reply %r" % rep, held)
        s.close()
    r = raw_request(c.gpuqd.socket, {"op": "ping"})
    c.check(r.get("ok"), "gpuqd after the waiters: %r" % r)


def _cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_wait_goes_on_across_a_restart(cloud):
    """gpuqd stopping answers its waiters "stopping"; gpuq wait asks again
    once gpuqd is back, and returns when the job ends."""
    c = cloud(speed=SPEED)
    held = c.submit(job_spec(providers=["batch"], name="r"), hold=True)
    argv = [program("gpuq"), "--socket", c.gpuqd.socket, "wait", str(held)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(0.5)
    c.restart()
    time.sleep(1.5)
    if p.poll() is not None:
        c.fail("wait ended when gpuqd restarted: %r" % (
            p.communicate(timeout=5),), held)
    c.check(c.gpuq("cancel", held)[0] == 0, "cancel", held)
    out, err = p.communicate(timeout=30)
    c.check(p.returncode == 1 and out.startswith("job %d r: cancelled" %
                                                 held) and
            "asking again" in err,
            "wait across a restart: rc %d, %r %r" % (p.returncode, out, err),
            held)
