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
