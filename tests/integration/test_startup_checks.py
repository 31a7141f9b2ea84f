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
