"""What gpuqd refuses or fixes at start, through the real gpuqd
(gpuqd(8)): a state directory or database others may write, a corrupt
database; and the limits it runs under: the open-file limit, a
file-size limit."""

import os

import pytest

from daemonutil import daemon, submit  # noqa: F401


def fails_to_start(d):
    """Start D; it must exit non-zero at once. Its log."""
    d.spawn()
    rc = d.wait(20)
    assert rc != 0, d.read_log()
    return d.read_log()


@pytest.mark.parametrize("mode,who,fix", [
    (0o770, "its group", "0750"),
    (0o757, "everyone", "0755"),
    (0o777, "its group and everyone", "0755"),
    (0o1777, "its group and everyone", "1755"),
])
def test_writable_state_dir_is_refused(daemon, mode, who, fix):
    d = daemon(start=False)
    os.mkdir(d.state_dir)
    os.chmod(d.state_dir, mode)
    log = fails_to_start(d)
    assert "state directory %s is writable by %s (mode %04o): anyone " \
        "there could change or replace the queue; run chmod %s %s and " \
        "start again" % (d.state_dir, who, mode, fix, d.state_dir) in log
    os.chmod(d.state_dir, int(fix, 8))
    d.start()
    assert d.stop() == 0


def test_writable_database_is_refused(daemon):
    d = daemon()
    assert d.stop() == 0
    db = os.path.join(d.state_dir, "gpuq.db")
    os.chmod(db, 0o666)
    log = fails_to_start(d)
    assert "queue database %s is writable by its group and everyone " \
        "(mode 0666)" % db in log
    assert "run chmod 0644 %s" % db in log
    os.chmod(db, 0o640)
    d.start()


def test_file_size_limit_refuses_submits_and_keeps_serving(daemon):
    import resource
    limit = 1 << 20

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    d = daemon(preexec=small_files)
    job = {"image": "example.com/train:1",
           "accelerator": {"type": "nvidia-tesla-t4", "count": 1},
           "env": {"PAD%d" % i: "x" * 1000 for i in range(8)}}
    acked, refusal = [], None
    with d.connect() as c:
        for _ in range(2000):
            r = c.request(submit(job))
            if not r["ok"]:
                refusal = r
                break
            acked.append(r["id"])
    assert refusal is not None, "no submit was refused under a 1 MiB limit"
    assert acked, refusal
    e = refusal["error"]
    # Said as a full disk is: the limit is named.
    assert "the job was not stored: " in e["message"], e
    assert "database or disk is full (a file-size limit was reached: " \
        "EFBIG; see LimitFSIZE= or ulimit -f)" in e["message"], e
    # Still serving; a refused submit is refused again, not a crash.
    assert d.alive()
    assert d.request({"op": "ping"})["ok"]
    r = d.request(submit(job))
    assert not r["ok"]
    assert d.alive()
    jobs = d.all_jobs()
    assert sorted(jobs) == acked
    log = d.read_log()
    assert "not stored" in log
    assert d.stop() == 0
    # And after a restart with room, every acknowledged job is there.
    d.preexec = None
    d.start()
    assert sorted(d.all_jobs()) == acked


def soft_limit(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no open-file limit in /proc/%d/limits" % pid)


def nofile(soft, hard):
    import resource

    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return set_limit


def test_open_file_limit_is_raised_to_the_hard_limit(daemon):
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        hard = 1048576          # what Linux's nr_open allows at most
    d = daemon(preexec=nofile(256, hard))
    assert soft_limit(d.pid) == hard
    log = d.read_log()
    assert "open files: soft limit raised from 256 to %d (the hard " \
        "limit)" % hard in log
    assert "does not fit" not in log
    assert d.stop() == 0


def test_connection_limits_beyond_the_open_file_limit_are_clamped(daemon):
    import signal
    import socket
    d = daemon("[daemon]\nmax_connections = 100000\n"
               "max_connections_per_uid = 100000\n",
               preexec=nofile(300, 600))
    assert soft_limit(d.pid) == 600
    log = d.read_log()
    assert "[daemon] max_connections = 100000 does not fit the open-file " \
        "limit 600 (less 300 kept for the store and the cloud); using " \
        "300" in log
    assert "[daemon] max_connections_per_uid = 100000 is above " \
        "max_connections; using 300" in log
    assert "max_connections=300 max_connections_per_uid=300" in log
    # The clamped limit is the one enforced: the 301st client is told.
    conns = []
    try:
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX)
            s.connect(d.socket)
            conns.append(s)
        assert d.request({"op": "ping"}, timeout=10).get("ok") is False
    except ConnectionError:
        pass                    # told busy and closed: also refused
    finally:
        for s in conns:
            s.close()
    # A reload of the same file clamps again, and changes nothing.
    n = len(d.read_log())
    d.signal(signal.SIGHUP)
    log = d.wait_log("reload: done")[n:]
    assert "does not fit" in log and "0 key(s) changed" in log
    assert d.stop() == 0


def gpuqd_check(d):
    import subprocess
    p = subprocess.run([d.bin, "--check", "--state-dir", d.state_dir,
                        "--config", d.conf], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def test_damaged_database_is_refused_and_check_reports_it(daemon):
    d = daemon()
    with d.connect() as c:
        replies = c.pipeline([submit() for _ in range(3000)])
    assert all(r["ok"] for r in replies)
    assert d.stop() == 0
    db = os.path.join(d.state_dir, "gpuq.db")
    assert not os.path.exists(db + "-wal") or \
        os.path.getsize(db + "-wal") == 0
    rc, out, err = gpuqd_check(d)
    assert rc == 0, out + err
    assert out == "%s: ok (PRAGMA integrity_check)\n" % db

    # Overwrite one page deep inside the file (SQLite's page size is in
    # the header, bytes 16-17).
    with open(db, "r+b") as f:
        head = f.read(100)
        page = int.from_bytes(head[16:18], "big")
        pages = os.path.getsize(db) // page
        assert pages > 20, pages
        f.seek(page * (pages // 2))
        f.write(bytes((i * 37 + 11) % 256 for i in range(page)))

    log = fails_to_start(d)
    assert "the queue %s is damaged; SQLite's quick_check found:" % db \
        in log
    assert "refusing to start on a damaged queue %s: stop here, copy the " \
        "state directory aside, run 'gpuqd --check' for the full report" \
        % db in log
    assert "ready:" not in log.split("--- start")[-1]

    rc, out, err = gpuqd_check(d)
    assert rc == 1, out + err
    assert out.startswith("%s: damaged; PRAGMA integrity_check found:\n"
                          % db), out
    assert len(out.splitlines()) >= 2
