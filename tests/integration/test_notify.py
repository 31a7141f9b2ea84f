"""test_notify.py: gpuqd.conf [notify] and a job's notify.webhook, end to
end: the real gpuqd and gpuq against the simulated cloud, with receivers
run by the test itself (a local HTTP server, a server that accepts and
never answers, a port nobody listens on, a command writing what it got).

What must hold (gpuqd.conf(5) [notify], doc/DESIGN.md "Notifications"):
a failed job's event reaches the webhook with the job's fields; a
receiver that hangs or refuses never delays the queue (a job submitted
after the failure launches while the delivery still hangs); the command
gets the event in GPUQ_* variables and nothing of gpuqd's environment;
a job's own webhook hears its events; a webhook gpuqd must not use
keeps it from starting, with words that say why.
"""

import http.server
import json
import os
import signal
import socket
import stat
import subprocess
import threading
import time

from cloudutil import GPUQD, cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

SPEED = 120


class Receiver:
    """A local HTTP server recording every POST: (path, headers, body)."""

    def __init__(self):
        self.posts = []
        self.lock = threading.Lock()
        rec = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                with rec.lock:
                    rec.posts.append((self.path, dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()

    def url(self, path="/hook"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def wait_post(self, pred, timeout):
        deadline = time.monotonic() + scaled(timeout)
        while time.monotonic() < deadline:
            with self.lock:
                for p in self.posts:
                    if pred(p):
                        return p
            time.sleep(0.05)
        with self.lock:
            got = [(p[0], p[2][:200]) for p in self.posts]
        raise AssertionError("no matching POST within %ss; got %r" %
                             (timeout, got))

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class Hanging:
    """Accepts connections and never answers until closed: a webhook
    that hangs. .accepted counts the connections made to it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.sock.settimeout(0.1)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.conns.append(conn)

    @property
    def accepted(self):
        return len(self.conns)

    def close(self):
        self.stop = True
        self.thread.join()
        for c in self.conns:
            c.close()
        self.sock.close()


def free_port():
    """A port nobody listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_webhook_gets_failed_job(cloud):
    rx = Receiver()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "failed, succeeded", "webhook": rx.url()})
        jid = c.submit(job_spec(providers=["gce"], work=60, exit_code=3,
                                name="doomed"))
        job = c.wait_state(jid, "failed", 60)
        path, headers, body = rx.wait_post(
            lambda p: json.loads(p[2]).get("job_id") == jid, 30)
        ev = json.loads(body)
        c.check(path == "/hook", "POST went to %r" % path, jid)
        c.check(headers.get("Content-Type") == "application/json",
                "Content-Type %r" % headers.get("Content-Type"), jid)
        want = {"event": "failed", "job_id": jid, "name": "doomed",
                "state": "failed", "exit_code": 3, "install": c.install,
                "reason": "failed",
                "attempts": 1, "failures": 1}
        for k, v in want.items():
            c.check(ev.get(k) == v, "event %s is %r, want %r (event %r)" %
                    (k, ev.get(k), v, ev), jid)
        c.check(ev["from"] in ("running", "pending", "launching"),
                "from %r" % ev["from"], jid)
        c.check(abs(ev["cost_usd"] - job["cost_usd"]) < 1e-6,
                "cost %r, job's %r" % (ev["cost_usd"], job["cost_usd"]), jid)
        c.check(ev["time"].endswith("Z"), "time %r" % ev["time"], jid)
        # One event per move: no second "failed" for the job.
        time.sleep(0.5)
        n = sum(1 for p in rx.posts if json.loads(p[2])["job_id"] == jid)
        c.check(n == 1, "%d POSTs for one failed job" % n, jid)
    finally:
        rx.close()


def test_webhook_slack_body_and_succeeded(cloud):
    rx = Receiver()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "succeeded", "webhook": rx.url("/slack"),
                          "webhook_format": "slack"})
        ok = c.submit(job_spec(providers=["gce"], work=30, name="fine"))
        bad = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
        c.wait_state(ok, "succeeded", 60)
        c.wait_state(bad, "failed", 60)
        _, _, body = rx.wait_post(lambda p: True, 30)
        text = json.loads(body)["text"]
        c.check(text.startswith("gpuq job %d \"fine\" succeeded" % ok),
                "Slack text %r" % text, ok)
        time.sleep(0.5)
        c.check(len(rx.posts) == 1, "failed was not in `on`, yet %d POSTs"
                % len(rx.posts), bad)
    finally:
        rx.close()


def launched_while(c, jid, busy, timeout=60):
    """Wait until JID has launched (pending or further) and return the
    value of BUSY() at that moment."""
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        j = c.show(jid)
        if j["state"] in ("pending", "running", "succeeded"):
            return busy()
        time.sleep(0.05)
    c.fail("job %d did not launch within %ss" % (jid, timeout), jid)


def test_hanging_webhook_never_delays_scheduling(cloud):
    hang = Hanging()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "failed",
                          "webhook": "http://127.0.0.1:%d/h" % hang.port})
        first = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
        c.wait_state(first, "failed", 60)
        deadline = time.monotonic() + scaled(10)
        while hang.accepted == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        c.check(hang.accepted >= 1, "gpuqd never connected to the webhook")
        # The delivery now hangs (nothing answers for 10 s a try, five
        # tries); a job submitted now must launch meanwhile.
        t0 = time.monotonic()
        second = c.submit(job_spec(providers=["gce"], work=30))
        still = launched_while(
            c, second, lambda: c.request({"op": "metrics"})["text"])
        c.check('gpuq_notifications_total{result="ok"} 0' in still and
                'gpuq_notifications_total{result="failed"} 0' in still,
                "the hanging delivery ended before the next job launched "
                "(%.1fs)" % (time.monotonic() - t0), second)
        c.wait_state(second, "succeeded", 60)
        c.check(c.gpuqd.alive(), "gpuqd died")
    finally:
        hang.close()


def test_refused_webhook_never_delays_scheduling(cloud):
    port = free_port()
    c = cloud(providers=("gce",), speed=SPEED,
              notify={"on": "failed",
                      "webhook": "http://127.0.0.1:%d/h" % port})
    first = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
    c.wait_state(first, "failed", 60)
    second = c.submit(job_spec(providers=["gce"], work=30))
    c.wait_state(second, "succeeded", 60)
    # Five tries with backoff (1, 2, 4, 8 s at most), then one warning.
    c.gpuqd.wait_log("notification to http://127.0.0.1:%d failed after 5 "
                     "tries" % port, timeout=scaled(40))
    log = c.gpuqd.read_log()
    c.check("/h" not in log.split("failed after 5 tries")[0][-80:],
            "the webhook's path (its secret) was logged")


def test_command_gets_event_in_env(cloud, tmp_path):
    out = tmp_path / "event.env"
    script = tmp_path / "notify.sh"
    script.write_text("#!/bin/sh\nenv > %s.tmp && mv %s.tmp %s\n" %
                      (out, out, out))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP |
                 stat.S_IXOTH)
    os.chmod(tmp_path, 0o755)
    c = cloud(providers=("gce",), speed=SPEED,
              notify={"on": "failed", "command": str(script)})
    jid = c.submit(job_spec(providers=["gce"], work=30, exit_code=7,
                            name="cmd-job"))
    c.wait_state(jid, "failed", 60)
    deadline = time.monotonic() + scaled(20)
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    c.check(out.exists(), "the command did not run")
    env = dict(line.split("=", 1) for line in out.read_text().splitlines()
               if "=" in line)
    want = {"GPUQ_EVENT": "failed", "GPUQ_JOB_ID": str(jid),
            "GPUQ_JOB_NAME": "cmd-job", "GPUQ_JOB_STATE": "failed",
            "GPUQ_EXIT_CODE": "7", "GPUQ_ATTEMPTS": "1",
            "GPUQ_INSTALL": c.install}
    for k, v in want.items():
        c.check(env.get(k) == v, "%s=%r, want %r" % (k, env.get(k), v), jid)
    # Nothing of gpuqd's own environment leaks into the command.
    leaked = [k for k in env if k in ("HOME", "GPUQ_SOCKET",
                                      "GOOGLE_APPLICATION_CREDENTIALS")]
    c.check(not leaked, "gpuqd's environment leaked: %r" % leaked, jid)


def running(text):
    """Is a process whose command line holds TEXT alive?"""
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if text.encode() in f.read():
                    return True
        except (OSError, ValueError):
            continue
    return False


def test_command_past_time_limit_is_killed(cloud, tmp_path):
    script = tmp_path / "slow.sh"
    # The shell stays (no exec), so its command line names the script.
    script.write_text("#!/bin/sh\nwhile :; do sleep 1; done\n")
    script.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    c = cloud(providers=("gce",), speed=SPEED,
              notify={"on": "failed", "command": str(script),
                      "command_timeout": "1s"})
    jid = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
    c.wait_state(jid, "failed", 60)
    c.gpuqd.wait_log("job %d: failed command %s killed after 1s" %
                     (jid, script), timeout=scaled(20))
    c.check(not running(str(script)), "the command still runs")


def test_job_own_webhook(cloud):
    rx = Receiver()
    try:
        c = cloud(providers=("gce",), speed=SPEED)
        jid = c.submit(job_spec(providers=["gce"], work=30, notify={
            "webhook": rx.url("/mine"), "on": ["succeeded"]}))
        c.wait_state(jid, "succeeded", 60)
        path, _, body = rx.wait_post(lambda p: True, 30)
        ev = json.loads(body)
        c.check(path == "/mine" and ev["event"] == "succeeded" and
                ev["job_id"] == jid, "got %r %r" % (path, ev), jid)
    finally:
        rx.close()


def test_job_webhook_checked_at_submit(cloud, tmp_path):
    c = cloud(providers=("gce",), speed=SPEED)
    path = tmp_path / "j.json"
    path.write_text(json.dumps(job_spec(providers=["gce"], notify={
        "webhook": "http://example.com/hook"})))
    rc, out, err = c.gpuq("submit", str(path))
    assert rc != 0
    assert "notify.webhook" in err and "use https://" in err, err


def test_bad_webhook_refused_at_start(tmp_path):
    conf = tmp_path / "gpuqd.conf"
    conf.write_text("[notify]\nwebhook = http://hooks.example.com/x\n")
    r = subprocess.run([GPUQD, "--foreground", "--config", str(conf),
                        "--state-dir", str(tmp_path / "st"),
                        "--socket", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "[notify] webhook \"http://hooks.example.com/x\": plain http " \
        "is only for this machine" in r.stderr, r.stderr
    conf.write_text("[notify]\nwebhook_format = teams\n")
    r = subprocess.run([GPUQD, "--foreground", "--config", str(conf),
                        "--state-dir", str(tmp_path / "st"),
                        "--socket", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "write json or slack" in r.stderr, r.stderr


def pids_of(text):
    out = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if text.encode() in f.read():
                    out.append(int(pid))
        except (OSError, ValueError):
            continue
    return out


def test_stop_with_notifications_in_flight(cloud, tmp_path):
    """SIGTERM while a webhook hangs and a command runs: gpuqd drops the
    delivery, leaves the command be, closes every handle and exits 0."""
    script = tmp_path / ("slow-%d.sh" % os.getpid())
    # The shell stays (no exec), so its command line names the script.
    script.write_text("#!/bin/sh\nwhile :; do sleep 1; done\n")
    script.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    hang = Hanging()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "failed", "command": str(script),
                          "command_timeout": "1h",
                          "webhook": "http://127.0.0.1:%d/h" % hang.port})
        jid = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
        c.wait_state(jid, "failed", 60)
        deadline = time.monotonic() + scaled(10)
        while (hang.accepted == 0 or not pids_of(str(script))) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        c.check(hang.accepted >= 1 and pids_of(str(script)),
                "the delivery or the command did not start", jid)
        rc = c.gpuqd.stop()
        c.check(rc == 0, "gpuqd exited %r on SIGTERM with notifications "
                "in flight" % rc, jid)
        c.check("notification(s) still under way are dropped" in
                c.gpuqd.read_log(), "the dropped delivery was not logged")
    finally:
        hang.close()
        for pid in pids_of(str(script)):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def test_webhook_gets_interruption(cloud):
    rx = Receiver()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "interrupted", "webhook": rx.url()})
        jid = c.submit(job_spec(providers=["gce"], work=30000,
                                spot="require"))
        c.wait_running(jid, 60)
        [r] = [x for x in c.resources(jid) if not x.get("deleted")]
        c.ctl("/_fake/preempt", {"name": r["resource"]})
        _, _, body = rx.wait_post(lambda p: True, 60)
        ev = json.loads(body)
        c.check(ev["event"] == "interrupted" and ev["job_id"] == jid and
                ev["reason"] == "preempted" and ev["state"] == "queued" and
                ev["interruptions"] == 1, "event %r" % ev, jid)
        c.gpuq("cancel", str(jid))
        c.wait_state(jid, "cancelled", 60)
        time.sleep(0.5)
        c.check(len(rx.posts) == 1, "cancelled was not in `on`, yet %d "
                "POSTs" % len(rx.posts), jid)
    finally:
        rx.close()


def test_reload_moves_the_webhook(cloud):
    """[notify] keys apply on SIGHUP: the next event goes to the new
    receiver."""
    old, new = Receiver(), Receiver()
    try:
        c = cloud(providers=("gce",), speed=SPEED,
                  notify={"on": "failed", "webhook": old.url()})
        first = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
        c.wait_state(first, "failed", 60)
        old.wait_post(lambda p: json.loads(p[2])["job_id"] == first, 30)
        c.notify["webhook"] = new.url("/new")
        c.gpuqd.write_conf(c.conf_text())
        c.gpuqd.signal(signal.SIGHUP)
        c.gpuqd.wait_log("reload: done", timeout=scaled(10))
        second = c.submit(job_spec(providers=["gce"], work=30, exit_code=1))
        c.wait_state(second, "failed", 60)
        new.wait_post(lambda p: json.loads(p[2])["job_id"] == second, 30)
        c.check(all(json.loads(p[2])["job_id"] == first for p in old.posts),
                "the old receiver got an event after the reload")
    finally:
        old.close()
        new.close()
