"""test_status_compact.py: gpuq status's table from the list op's compact
rows (doc/DESIGN.md "The wire") is the table the job objects gave, cell
for cell, on a queue of arrays, live attempts with Spot and checkpoints,
and every state the simulated cloud leaves standing; for every filter,
--expand, --limit and a narrow terminal.

The table from objects is what the same client prints through a socket
that answers as a gpuqd from before "compact" did: such a request is
refused naming the field, every other one goes through to the real
gpuqd. That is also the test of the client's fallback to the old form.
Both tables are taken within one second of the clock (the table shows
ages and running costs), and again if a job moved in between.
"""

import json
import os
import socket
import threading
import time

from cloudutil import cloud, job_spec
from gpuqdtest import run_gpuq

assert cloud  # the fixture, imported for pytest

LONG = 10 ** 6          # simulated seconds: runs for the whole test


class Relay:
    """A socket in front of gpuqd. OLD: refuse a list request with
    "compact", as gpuqd did before it knew the member. Counts the compact
    requests seen (.compact) and the refusals (.refused)."""

    def __init__(self, upstream, path, old):
        self.upstream, self.path, self.old = upstream, path, old
        self.compact = self.refused = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,),
                             daemon=True).start()

    def _serve(self, conn):
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(self.upstream)
        cf, uf = conn.makefile("rb"), up.makefile("rb")
        try:
            for line in cf:
                req = json.loads(line)
                if "compact" in req:
                    self.compact += 1
                    if self.old:
                        self.refused += 1
                        conn.sendall(json.dumps({"ok": False, "error": {
                            "code": "bad_request", "field": "compact",
                            "message": 'unknown field "compact" for op '
                                       '"list"'}}).encode() + b"\n")
                        continue
                up.sendall(line)
                conn.sendall(uf.readline())
        except OSError:
            pass
        finally:
            conn.close()
            up.close()

    def close(self):
        self.sock.close()


def gpuq_via(path, args, env):
    return run_gpuq(path, *args, env=env)


def both(new, old, args, env):
    """gpuq ARGS through relay NEW and through relay OLD."""
    outs = []
    for relay in (new, old):
        rc, out, err = gpuq_via(relay.path, args, env)
        assert rc == 0, "gpuq %s: rc %d: %s" % (" ".join(args), rc, err)
        outs.append(out)
    return outs


def test_compact_table_is_the_object_table(cloud):
    c = cloud(providers=("gce",))
    running = c.submit(job_spec(providers=["gce"], work=LONG, ckpt=60,
                                spot="require", name="resume"))
    done = c.submit(job_spec(providers=["gce"], work=1, ckpt=0,
                             name="quick"))
    failed = c.submit(job_spec(providers=["gce"], work=1, ckpt=0,
                               exit_code=3, name="broken"))
    held = c.submit(job_spec(providers=["gce"], work=LONG, name="later"),
                    hold=True)
    gone = c.submit(job_spec(providers=["gce"], work=LONG, name="gone"),
                    hold=True)
    # A deadline: the SLACK column, from the rows' deadline and slack.
    due = c.submit(job_spec(providers=["gce"], work=LONG, name="due",
                      deadline="48h", estimated_hours=1), hold=True)
    arr = c.submit(job_spec(providers=["gce"], work=LONG, ckpt=60,
                            name="sweep",
                            array={"count": 3, "parallelism": 1}))
    rc, _, err = c.gpuq("cancel", str(gone))
    assert rc == 0, err
    c.wait_for(running, lambda j: j["state"] == "running" and
               j.get("checkpoint_at"), 120, "running with a checkpoint")
    c.wait_state(done, ("succeeded",), 120)
    c.wait_state(failed, ("failed",), 120)
    c.wait_for(arr, lambda j: j["state"] == "running", 120,
               "one task running")
    r = c.request({"op": "list", "state": "all", "limit": 1000,
                   "expand": True})
    states = {j["state"] for j in r["jobs"]}
    assert {"running", "succeeded", "failed", "held", "cancelled",
            "queued"} <= states, states

    new = Relay(c.gpuqd.socket, os.path.join(c.dir, "new.sock"), False)
    old = Relay(c.gpuqd.socket, os.path.join(c.dir, "old.sock"), True)
    try:
        wide = {"COLUMNS": ""}
        narrow = {"COLUMNS": "80"}
        cases = [
            (("status", "--all"), wide),
            (("status",), wide),
            (("status", "--all", "--expand"), wide),
            (("status", "--state", "running,held,queued"), wide),
            (("status", "--state", "succeeded"), wide),
            (("status", "--all", "--user", str(os.getuid())), wide),
            (("status", "--all", "--user", "4242"), wide),
            (("status", "--all", "--limit", "3"), wide),
            (("status", "--limit", "1", "--expand"), wide),
            (("status", "--all"), narrow),
        ]
        for args, env in cases:
            for _ in range(20):
                t0 = time.time()
                a, b = both(new, old, args, env)
                if int(t0) == int(time.time()) and a == b:
                    break
                time.sleep(0.05)
            assert a == b, "gpuq %s:\ncompact:\n%s\nobjects:\n%s" % (
                " ".join(args), a, b)
        assert new.compact >= len(cases) and old.refused >= len(cases)

        rc, out, err = gpuq_via(new.path, ("status", "--all"), wide)
        lines = out.splitlines()
        assert lines[0].split() == ["ID", "NAME", "STATE", "GPU", "WHERE",
                                    "AGE", "COST", "SLACK", "CHECKPOINT",
                                    "WHY"]
        ids = [x.split()[0] for x in lines[1:-1]]
        assert ids == [str(running), str(done), str(failed), str(held),
                       str(gone), str(due), "%d[0-2]" % arr], out
        assert " spot" in out and "ckpt-" in out, out
        assert "1 running, 2 queued" in out, out
        assert " +4" in out, out    # the slack of "due": about 47 hours
    finally:
        new.close()
        old.close()
