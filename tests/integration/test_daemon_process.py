"""The gpuqd process's own life (a job's life is test_job_lifecycle.py):
start-up checks, systemd notification and socket activation, the lock on
the state directory, signals (SIGTERM, SIGHUP), and the limits of
[daemon] in gpuqd.conf."""

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import time

import pytest

from daemonutil import GPUQD, daemon, need_gpuqd, submit  # noqa: F401


def run_gpuqd(*args, timeout=20):
    need_gpuqd()
    return subprocess.run([GPUQD, *args], capture_output=True, text=True,
                          timeout=timeout)


def test_daemon_help_and_version():
    p = run_gpuqd("--help")
    assert p.returncode == 0
    for opt in ("--config", "--state-dir", "--socket", "--foreground",
                "--log-level", "--version", "--help"):
        assert opt in p.stdout
    p = run_gpuqd("--version")
    assert p.returncode == 0 and p.stdout.startswith("gpuqd ")
    p = run_gpuqd("--bogus")
    assert p.returncode == 2 and "usage" in p.stderr
    p = run_gpuqd("--log-level", "loud")
    assert p.returncode == 2 and "loud" in p.stderr


def test_daemon_config_errors_stop_the_start(tmp_path):
    p = run_gpuqd("--config", str(tmp_path / "absent.conf"),
                  "--state-dir", str(tmp_path))
    assert p.returncode == 1
    assert "absent.conf" in p.stderr
    conf = tmp_path / "gpuqd.conf"
    conf.write_text("[daemon]\nlog_level = info\nmax_conections = 3\n")
    p = run_gpuqd("--config", str(conf), "--state-dir", str(tmp_path))
    assert p.returncode == 1
    assert f"{conf}:3: unknown key \"max_conections\" in [daemon]" \
        in p.stderr
    assert "max_connections" in p.stderr       # what it knows


def test_daemon_logs_effective_configuration(daemon):
    d = daemon("[scheduler]\npoll_interval = 20s\n")
    log = d.read_log()
    assert "config [daemon] socket=" + d.socket in log
    assert "config [gcp] project=" in log
    assert "config [scheduler] poll_interval=20s" in log


def test_daemon_ready_status_watchdog_stopping(daemon, tmp_path):
    path = str(tmp_path / "notify")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(10)
    d = daemon(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"},
               start=False)
    d.spawn()
    msgs = []

    def until(word):
        while True:
            m = ns.recv(4096).decode()
            msgs.append(m)
            if word in m:
                return m

    ready = until("READY=1")
    assert "STATUS=" in ready and "no live jobs" in ready
    until("WATCHDOG=1")
    assert d.request(submit())["ok"]
    status = until("queued")
    assert "STATUS=1 queued" in status
    d.signal(signal.SIGTERM)
    assert "STOPPING=1" in until("STOPPING=1")
    assert d.wait() == 0
    ns.close()


def test_daemon_socket_activation(daemon, tmp_path):
    sa = shutil.which("systemd-socket-activate")
    if sa is None:
        pytest.skip("systemd-socket-activate is missing "
                    "(apt-get install systemd)")
    d = daemon(start=False)
    path = os.path.join(d.dir, "activated.sock")
    d.spawn([sa, "-l", path, GPUQD, "--state-dir", d.state_dir,
             "--socket", "/nonexistent/ignored.sock", "--config", d.conf])
    deadline = time.monotonic() + 20
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    d.socket = path
    # The first connection starts gpuqd, which takes the listening fd.
    assert d.request({"op": "ping"})["ok"]
    assert d.request(submit())["id"] == 1
    log = d.wait_log("(from systemd)")
    assert "listening on " + path + " (from systemd)" in log
    assert "listening on /nonexistent" not in log
    assert d.stop() == 0
    assert os.path.exists(path)           # not ours to remove


def test_daemon_second_daemon_on_the_state_dir_is_refused(daemon):
    d = daemon()
    other = os.path.join(d.dir, "other.sock")
    p = run_gpuqd("--state-dir", d.state_dir, "--socket", other,
                  "--config", d.conf)
    assert p.returncode == 1
    assert f"another gpuqd (pid {d.proc.pid}) is running with state " \
        f"directory {d.state_dir}" in p.stderr
    assert not os.path.exists(other)
    assert d.request({"op": "ping"})["ok"]


def test_daemon_live_socket_is_not_stolen_stale_one_is_removed(daemon,
                                                              tmp_path):
    d = daemon()
    p = run_gpuqd("--state-dir", str(tmp_path), "--socket", d.socket,
                  "--config", d.conf)
    assert p.returncode == 1
    assert "another server is listening on " + d.socket in p.stderr
    assert d.request({"op": "ping"})["ok"]
    # A socket file nobody listens on is stale: removed and replaced.
    d.kill9()
    assert os.path.exists(d.socket)
    d.start()
    assert d.request({"op": "ping"})["ok"]
    assert "removed stale" in d.read_log()
    assert oct(os.stat(d.socket).st_mode & 0o777) == "0o660"


def test_daemon_sigterm_exits_cleanly(daemon):
    d = daemon()
    idle = d.connect()              # a client that stays connected
    assert idle.request({"op": "ping"})["ok"]
    assert d.stop() == 0
    log = d.read_log()
    assert "stopping on SIGTERM" in log
    assert "still open" not in log and "did not close" not in log
    assert log.rstrip().endswith("stopped")
    assert not os.path.exists(d.socket)
    assert idle.at_eof()
    idle.close()


def test_daemon_sigterm_answers_the_pending_batch(daemon):
    d = daemon()
    n = 3000
    with d.connect() as c:
        c.send(*[submit(name="t%d" % i) for i in range(n)])
        d.signal(signal.SIGTERM)
        acked = []
        while True:
            line = c.recv_line()
            if not line:
                break
            acked.append(line)
    assert d.wait() == 0
    d.start()
    jobs = d.all_jobs()
    for line in acked:
        r = json.loads(line)
        assert r["ok"], r
        assert r["id"] in jobs


def test_daemon_sighup_reload(daemon):
    d = daemon("[daemon]\nlog_level = info\n")
    d.write_conf("[daemon]\nlog_level = debug\nmax_connections = 2\n"
                 "max_connections_per_uid = 2\n[gcp]\nproject = p-1\n")
    d.signal(signal.SIGHUP)
    log = d.wait_log("reload: done")
    assert 'reload: [daemon] log_level: "info" -> "debug"' in log
    assert 'reload: [daemon] max_connections: "256" -> "2"' in log
    assert 'reload: [gcp] project changed; these keys need a restart ' \
        '(systemctl restart gpuqd)' in log
    # The new limit holds: a third connection is told busy.
    with d.connect() as a, d.connect() as b:
        assert a.request({"op": "ping"})["ok"]
        assert b.request({"op": "ping"})["ok"]
        with d.connect() as c:
            e = c.recv()
            assert e["ok"] is False and e["error"]["code"] == "busy"
            assert c.at_eof()
    # A broken file is reported and the running configuration kept.
    d.write_conf("[daemon]\nmax_connections = many\n")
    d.signal(signal.SIGHUP)
    log = d.wait_log("keeping the running configuration")
    assert d.conf + ":2:" in log
    assert d.request({"op": "ping"})["ok"]
    assert d.stop() == 0


def test_daemon_connection_limit_per_uid(daemon):
    d = daemon("[daemon]\nmax_connections_per_uid = 3\n")
    conns = [d.connect() for _ in range(3)]
    for c in conns:
        assert c.request({"op": "ping"})["ok"]
    with d.connect() as extra:
        e = extra.recv()["error"]
        assert e["code"] == "busy" and "uid" in e["message"]
        assert extra.at_eof()
    conns.pop().close()
    time.sleep(0.1)
    with d.connect() as again:
        assert again.request({"op": "ping"})["ok"]
    for c in conns:
        c.close()
    assert d.wait_log("refused") is not None


def test_daemon_idle_connections_are_closed(daemon):
    d = daemon("[daemon]\nidle_timeout = 1s\n")
    with d.connect() as busy, d.connect() as idle:
        assert idle.request({"op": "ping"})["ok"]
        t0 = time.monotonic()
        for _ in range(8):          # 1.6 s of activity
            assert busy.request({"op": "ping"})["ok"]
            time.sleep(0.2)
        assert idle.at_eof(timeout=3)
        assert time.monotonic() - t0 < 5
        assert busy.request({"op": "ping"})["ok"]


def test_daemon_backpressure_on_a_client_that_does_not_read(daemon):
    d = daemon("[daemon]\nmax_pending_output = 4KiB\n")
    ids = [d.request(submit())["id"] for _ in range(20)]
    slow = d.connect()
    # ~40 MB of replies asked for, none read yet: gpuqd must stop
    # reading this client rather than buffer them, and serve others.
    n = 8000
    req = b'{"op":"list","limit":1000}\n'
    slow.sock.setblocking(False)
    sent = 0
    try:
        while sent < n:
            slow.sock.send(req)
            sent += 1
    except BlockingIOError:
        pass
    assert sent < n                 # the daemon stopped reading
    with d.connect() as other:
        assert other.request({"op": "ping"})["ok"]
    with open(f"/proc/{d.proc.pid}/status") as f:
        rss = [int(x.split()[1]) for x in f if x.startswith("VmRSS")][0]
    assert rss < 200 * 1024, rss    # KiB
    # Read everything: every reply arrives, in order and whole.
    slow.sock.setblocking(True)
    slow.sock.settimeout(20)
    for _ in range(sent):
        r = slow.recv()
        assert [j["id"] for j in r["jobs"]] == ids
    slow.close()


def test_daemon_pauses_accepting_at_the_fd_limit(daemon):
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))
    d = daemon("[daemon]\nmax_connections_per_uid = 200\n",
               preexec=low_limit)
    conns = []
    for _ in range(60):
        c = d.connect(timeout=5)
        try:
            c.send({"op": "ping"})
        except BrokenPipeError:
            pass                    # refused before we spoke
        r = c.recv()
        if not r["ok"]:
            # Told why, rather than left hanging or crashing.
            assert r["error"]["code"] == "busy"
            assert "file descriptors" in r["error"]["message"]
            assert c.at_eof()
            c.close()
            break
        conns.append(c)
    else:
        pytest.fail("60 clients accepted under a limit of 48 files")
    assert 10 < len(conns) < 48
    # Paused: a new client waits in the backlog; served once one leaves.
    waiting = d.connect(timeout=5)
    waiting.send({"op": "ping"})
    conns.pop().close()
    assert waiting.recv()["ok"]
    waiting.close()
    for c in conns:
        assert c.request({"op": "ping"})["ok"]
        c.close()
    assert d.stop() == 0
