"""gpuq against a scripted daemon: a small Unix-socket server in the test
that answers with canned replies in the shapes of common/proto.h. This
pins what the real daemon cannot easily be made to show on demand: a
running job's WHERE, AGE and COST, the attempts of a job that was
preempted, WHY cut to a terminal's width, a busy daemon, one that hangs
up, one that never answers, and a reply that is not JSON."""

import fcntl
import json
import os
import pty
import re
import select
import socket
import struct
import subprocess
import termios
import threading
import time

import pytest

from conftest import GPUQ, need, run_gpuq

NOW = int(time.time())


class ScriptedDaemon:
    """Accepts connections; each request line goes to HANDLER(req, conn_no)
    which returns a reply dict, a raw bytes line, "hangup" or "silent"."""

    def __init__(self, path, handler):
        self.path = path
        self.handler = handler
        self.requests = []
        self.conns = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.1)
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self.client, args=(c, self.conns),
                             daemon=True).start()

    def client(self, c, n):
        buf = b""
        with c:
            while True:
                try:
                    chunk = c.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    req = json.loads(line)
                    self.requests.append(req)
                    out = self.handler(req, n)
                    if out == "hangup":
                        return
                    if out == "silent":
                        time.sleep(30)
                        return
                    if isinstance(out, dict):
                        out = json.dumps(out).encode()
                    c.sendall(out + b"\n")

    def close(self):
        self.stop = True
        self.sock.close()


@pytest.fixture
def scripted(tmp_path):
    need(GPUQ, "gpuq")
    made = []

    def make(handler):
        d = ScriptedDaemon(str(tmp_path / "s.sock"), handler)
        made.append(d)
        return d
    yield make
    for d in made:
        d.close()


def attempt(number, **kw):
    a = {"number": number, "state": "ended", "provider": "gce",
         "region": "us-central1", "zone": "us-central1-a",
         "resource": f"gpuq-abcd1234-7-{number}",
         "machine_type": "n1-highmem-8", "spot": True, "hourly_usd": 0.5,
         "created": NOW - 7200, "started": NOW - 7000,
         "ended": NOW - 3400, "end_reason": "preempted", "exit_code": -1,
         "message": "Instance was preempted.", "resumed_from": None,
         "cost_usd": 0.5}
    a.update(kw)
    return a


def job(id, **kw):
    j = {"id": id, "name": f"job-{id}", "state": "queued", "priority": 0,
         "owner": 0, "created": NOW - 9000, "updated": NOW - 600,
         "attempts": 0, "failures": 0, "interruptions": 0, "cost_usd": 0.0,
         "checkpoint": None, "checkpoint_at": 0, "why": None,
         "exit_code": -1, "message": None,
         "accelerator": {"type": "nvidia-tesla-t4", "count": 2},
         "current": None}
    j.update(kw)
    return j


RUNNING = job(7, name="resnet", state="running", attempts=2,
              interruptions=1, cost_usd=0.5, updated=NOW - 3000,
              checkpoint="gs://b/gpuq/7/checkpoints/ckpt-00000600",
              checkpoint_at=NOW - 120,
              current=attempt(2, state="running", provider="batch",
                              zone=None, region="us-east1",
                              started=NOW - 3600, ended=0, end_reason=None,
                              message=None, hourly_usd=1.0, cost_usd=0.0,
                              resumed_from="gs://b/gpuq/7/checkpoints/"
                                           "ckpt-00000600"))


@pytest.fixture(autouse=True)
def running_for_an_hour():
    """The running attempt started an hour before the test itself, not
    before the module was imported (a long suite runs in between), so its
    cost so far is $1.00 and the job's $1.50."""
    now = int(time.time())
    RUNNING["current"]["started"] = now - 3600
    RUNNING["checkpoint_at"] = now - 120
    WAITING["updated"] = now - 600
    yield


WAITING = job(8, name="llm", updated=NOW - 600, why="no A100 quota in us-central1, "
              "europe-west4 or us-east1; waiting for quota to free up",
              accelerator={"type": "nvidia-tesla-a100", "count": 4})
FAILED = job(9, state="failed", exit_code=3, attempts=1, cost_usd=0.25,
             message="exit code 3: CUDA out of memory")


def lister(pages, counts=None):
    """Serve PAGES (lists of jobs) by "after", keyset style."""
    def handler(req, n):
        if req["op"] != "list":
            return {"ok": False, "error": {"code": "unknown_op",
                                           "message": "unknown op"}}
        after = req.get("after", 0)
        limit = req.get("limit", 100)
        for i, p in enumerate(pages):
            p = [j for j in p if j["id"] > after]
            if p:
                r = {"ok": True, "jobs": p[:limit],
                     "counts": counts or {"queued": 1, "running": 1}}
                if i + 1 < len(pages) or len(p) > limit:
                    r["next"] = r["jobs"][-1]["id"]
                return r
        return {"ok": True, "jobs": [], "counts": counts or {}}
    return handler


def test_status_running_job(scripted):
    d = scripted(lister([[RUNNING, WAITING]]))
    rc, out, err = run_gpuq(d.path, "status")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "STATE", "GPU", "WHERE", "AGE",
                                "COST", "CHECKPOINT", "WHY"]
    # Running: where, on Spot, how long it has run, ended attempts + the
    # live one, and its newest checkpoint with its age.
    assert lines[1].split()[:10] == ["7", "resnet", "running", "2xT4",
                                     "batch/us-east1", "spot", "1h00m",
                                     "$1.50", "ckpt-00000600", "(2m00s)"]
    # Waiting: how long it has waited, and why, in full (not a tty).
    # (Times are relative to NOW, taken at import: allow a few seconds.)
    row = lines[2].split()
    assert row[:5] == ["8", "llm", "queued", "4xA100", "-"]
    assert re.match(r"10m0\ds$", row[5]) and row[6] == "-", row
    assert row[7] == "-", row
    assert lines[2].endswith("waiting for quota to free up")
    assert lines[3] == "1 queued, 1 running"
    # The table is asked for compact first; a gpuqd that answers with
    # objects instead is asked again the old way.
    assert d.requests == [{"op": "list", "limit": 100000, "compact": True},
                          {"op": "list", "limit": 1000}]


def test_status_follows_pages_and_filters(scripted):
    pages = [[job(i) for i in range(1, 4)], [job(i) for i in range(4, 6)],
             [FAILED]]
    d = scripted(lister(pages, counts={"queued": 5, "failed": 1}))
    rc, out, err = run_gpuq(d.path, "status", "--all", "--user", "0",
                            "--state", "queued")
    assert rc == 0, err
    assert d.requests[0].pop("compact") is True
    assert d.requests[0].pop("limit") == 100000
    old = d.requests[1:]
    assert [r["after"] for r in old if "after" in r] == [3, 5]
    assert old[0] == {"op": "list", "limit": 1000, "state": "all",
                      "owner": 0}
    assert d.requests[0] == {"op": "list", "state": "all", "owner": 0}
    # --user counts what it was shown.
    assert out.splitlines()[-1] == "5 queued, 1 failed"
    assert "exit code 3: CUDA out of memory" in out

    d.requests.clear()
    rc, out, err = run_gpuq(d.path, "status", "--state", "queued,held",
                            "--limit", "4")
    assert d.requests[0].get("compact") is True
    old = d.requests[1:]
    assert [r.get("state") for r in old] == [["held", "queued"]] * 2
    assert [r["limit"] for r in old] == [4, 1]
    assert [r.get("after") for r in old] == [None, 3]
    assert len(out.splitlines()) == 1 + 4 + 1

    d.requests.clear()
    rc, out, err = run_gpuq(d.path, "status", "--json")
    assert rc == 0, err
    assert [j["id"] for j in json.loads(out)] == [1, 2, 3, 4, 5, 9]
    # One job per line, as the daemon wrote it.
    assert out.count("\n") == 6 + 2


def test_status_why_goes_under_its_job_on_a_narrow_terminal(scripted):
    d = scripted(lister([[RUNNING, WAITING]]))
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(GPUQ, [GPUQ, "--socket", d.path, "status"],
                  dict(os.environ, LC_ALL="C.UTF-8"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    out = b""
    while True:
        r, _, _ = select.select([fd], [], [], 10)
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    lines = out.decode().replace("\r", "").splitlines()
    assert max(len(l) for l in lines) <= 100, lines
    # WHY does not fit: it leaves the table (header too) and is shown
    # whole, indented, under its job; nothing is cut.
    assert lines[0].split()[-1] == "CHECKPOINT", lines
    assert lines[2].split()[:3] == ["8", "llm", "queued"], lines
    assert lines[3] == "    " + WAITING["why"], lines
    assert not any("\u2026" in l for l in lines), lines


def test_show_story(scripted):
    spec = {"name": "resnet", "image": "img:1",
            "command": ["torchrun", "--nproc_per_node=2", "train.py"],
            "args": ["--lr", "0.1"], "env": {"SEED": "042", "X": "a: b"},
            "accelerator": {"type": "nvidia-tesla-t4", "count": 2},
            "spot": "allow", "max_runtime": 86400, "labels": {}}
    events = [
        {"time": NOW - 9000, "from": None, "to": "queued",
         "message": "submitted"},
        {"time": NOW - 7200, "from": "queued", "to": "launching",
         "message": "gce/us-central1-a spot n1-highmem-8 $0.50/h"},
        {"time": NOW - 3400, "from": "running", "to": "queued",
         "message": "preempted; resuming from ckpt-00000600"},
    ]
    show = dict(RUNNING, spec=spec, events=events, attempts_list=[
        attempt(1), RUNNING["current"]])

    def handler(req, n):
        if req == {"op": "show", "id": 7}:
            return {"ok": True, "job": show}
        return {"ok": False, "error": {"code": "not_found",
                                       "message": f"no job {req['id']}",
                                       "field": "id"}}
    d = scripted(handler)
    rc, out, err = run_gpuq(d.path, "show", "7", env={"TZ": "UTC"})
    assert rc == 0, err
    assert out.startswith("job 7  resnet  running\n")
    assert "  attempts    2 (1 interruption, 0 failures)\n" in out
    # $0.50 ended + 1 h at $1.00/h running.
    assert "  cost        $1.50 so far ($0.50 of ended attempts)\n" in out
    assert re.search(r"\n  checkpoint  gs://b/gpuq/7/checkpoints/"
                     r"ckpt-00000600 \(2m0\ds ago\)\n", out), out
    # The spec reads back as the same YAML.
    assert '  env:\n    SEED: "042"\n    X: "a: b"\n' in out
    assert "  command: [torchrun, --nproc_per_node=2, train.py]\n" in out
    assert "  labels: {}\n" in out
    att = out.split("\nAttempts\n")[1].split("\n\nEvents\n")[0].splitlines()
    assert att[0].split() == ["#", "STATE", "WHERE", "MACHINE", "SPOT",
                              "$/H", "STARTED", "RAN", "COST", "RESUMED",
                              "FROM"]
    assert att[1].split()[:6] == ["1", "preempted", "gce/us-central1-a",
                                  "n1-highmem-8", "yes", "$0.50"]
    assert att[1].split()[8:] == ["1h00m", "$0.50", "-"]
    assert att[2].split()[:3] == ["2", "running", "batch/us-east1"]
    assert att[2].split()[-1] == "gs://b/gpuq/7/checkpoints/ckpt-00000600"
    assert "  #1: Instance was preempted." in out
    ev = out.split("\nEvents\n")[1].splitlines()
    assert ev[0].split() == ["TIME", "CHANGE", "MESSAGE"]
    assert re.match(r"  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  -> queued +"
                    r"submitted$", ev[1]), ev
    assert "running -> queued" in ev[3]

    rc, out, err = run_gpuq(d.path, "show", "--json", "7")
    assert rc == 0
    assert json.loads(out) == {"job": show}

    rc, out, err = run_gpuq(d.path, "show", "8")
    assert (rc, out, err) == (1, "", "gpuq: job 8: not found: no job 8\n")


def test_control_characters_are_not_printed(scripted):
    evil = job(3, name="x\x1b]0;pwned\x07y", why="a\nb\x1b[2J")
    d = scripted(lister([[evil]]))
    rc, out, err = run_gpuq(d.path, "status")
    assert rc == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "x?]0;pwned?y" in out and "a?b?[2J" in out


def test_busy_daemon_is_asked_again(scripted):
    def handler(req, n):
        if n <= 2:
            return {"ok": False, "error": {"code": "busy", "message":
                                           "too many connections"}}
        return {"ok": True, "id": 42}
    d = scripted(handler)
    rc, out, err = run_gpuq(d.path, "submit", "-q", "-", input="name: a\n")
    assert (rc, out, err) == (0, "42\n", "")
    assert d.conns == 3 and len(d.requests) == 3

    # Busy for longer than --timeout: the error is shown.
    d2_path = d.path + "2"
    d2 = ScriptedDaemon(d2_path, lambda req, n: {
        "ok": False, "error": {"code": "busy", "message": "store busy"}})
    try:
        t0 = time.monotonic()
        rc, out, err = run_gpuq(d2_path, "--timeout", "1s", "ping")
        assert time.monotonic() - t0 < 5
        # The message says "busy" already: not said twice.
        assert rc == 1 and err == "gpuq: ping: store busy\n"
    finally:
        d2.close()


def test_daemon_hangs_up_or_stays_silent(scripted):
    d = scripted(lambda req, n: "hangup")
    rc, out, err = run_gpuq(d.path, "ping")
    assert rc == 3
    assert err.startswith("gpuq: gpuqd closed the connection before "
                          "answering\n"), err

    d.handler = lambda req, n: "silent"
    t0 = time.monotonic()
    rc, out, err = run_gpuq(d.path, "--timeout", "1s", "status")
    assert time.monotonic() - t0 < 10
    assert rc == 3
    assert err.startswith("gpuq: gpuqd did not answer within 1 s\n"), err

    d.handler = lambda req, n: b"this is not json"
    rc, out, err = run_gpuq(d.path, "ping")
    assert rc == 3 and "not a JSON object" in err


def test_sweep_is_pipelined_in_order(scripted, tmp_path):
    ids = iter(range(100, 1000))

    def handler(req, n):
        assert req["op"] == "submit" and req["hold"] is True
        if req["job"]["name"] == "bad":
            return {"ok": False, "error": {
                "code": "invalid_job", "field": "accelerator.count",
                "message": "3 is not offered for nvidia-tesla-t4; "
                           "use 1, 2 or 4"}}
        return {"ok": True, "id": next(ids)}
    d = scripted(handler)
    docs = "".join(f"---\nname: j{i}\nlr: {i}e-3\n" for i in range(150))
    docs += "---\nname: bad\n"
    p = tmp_path / "sweep.yaml"
    p.write_text(docs)
    rc, out, err = run_gpuq(d.path, "submit", "--hold", str(p))
    assert rc == 1
    assert out.splitlines() == [f"submitted job {i}" for i in range(100, 250)]
    assert err == (f"gpuq: {p}:451: job rejected: accelerator.count: 3 is "
                   f"not offered for nvidia-tesla-t4; use 1, 2 or 4\n"
                   f"gpuq: {p}: 150 of 151 jobs submitted\n")
    assert d.conns == 1
    assert [r["job"]["name"] for r in d.requests] == \
        [f"j{i}" for i in range(150)] + ["bad"]
    assert d.requests[1]["job"]["lr"] == 0.001


def test_sweep_job_refused_busy_is_sent_again(scripted, tmp_path):
    seen = {}

    def handler(req, n):
        name = req["job"]["name"]
        seen[name] = seen.get(name, 0) + 1
        if name == "j2" and seen[name] == 1:
            return {"ok": False, "error": {"code": "busy",
                                           "message": "store busy"}}
        return {"ok": True, "id": int(name[1:]) + 10}
    d = scripted(handler)
    p = tmp_path / "sweep.yaml"
    p.write_text("".join(f"---\nname: j{i}\n" for i in range(5)))
    rc, out, err = run_gpuq(d.path, "submit", "-q", str(p))
    assert (rc, err) == (0, "")
    assert sorted(int(x) for x in out.split()) == [10, 11, 12, 13, 14]
    assert seen == {"j0": 1, "j1": 1, "j2": 2, "j3": 1, "j4": 1}


def test_job_too_long_is_refused_locally(scripted, tmp_path):
    d = scripted(lambda req, n: {"ok": True, "id": 1})
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"name": "big", "args": ["x" * 1100000]}))
    rc, out, err = run_gpuq(d.path, "submit", str(p))
    assert rc == 1 and out == ""
    assert "gpuqd takes at most 1048576 (1 MiB) per request" in err
    assert d.requests == []


def test_cancel_many_on_one_connection(scripted):
    def handler(req, n):
        if req["id"] == 5:
            return {"ok": False, "error": {
                "code": "forbidden", "field": "id",
                "message": "job 5 belongs to uid 1000; only its owner, "
                           "root or members of group \"gpuq\" may cancel "
                           "it"}}
        return {"ok": True, "state": "cancelling" if req["id"] == 6
                else "cancelled"}
    d = scripted(handler)
    rc, out, err = run_gpuq(d.path, "cancel", "4", "5", "6")
    assert rc == 1
    assert out == ("cancelled job 4\ncancelling job 6: its cloud resource "
                   "is being deleted\n")
    assert err == ("gpuq: cancel job 5: forbidden: job 5 belongs to uid "
                   "1000; only its owner, root or members of group \"gpuq\" "
                   "may cancel it\n")
    assert d.conns == 1
