"""systemctl reload gpuqd (SIGHUP) through the real gpuqd: keys that need
a restart are named in one warning that says so, and are not applied;
reloadable keys take effect at once (gpuqd.conf(5), "Reload")."""

import signal
import time

from daemonutil import daemon, submit  # noqa: F401


def restart_line(log):
    """The one reload line that names the keys needing a restart."""
    lines = [ln for ln in log.splitlines() if "need a restart" in ln]
    assert len(lines) == 1, log
    return lines[0]


def test_reload_names_keys_that_need_a_restart(daemon):
    d = daemon("[daemon]\nlog_level = info\n")
    d.write_conf("[daemon]\nlog_level = info\n"
                 "[gcp]\nproject = p-1\nregions = us-central1\n")
    d.signal(signal.SIGHUP)
    line = restart_line(d.wait_log("reload: done"))
    assert "[gcp] project" in line and "[gcp] regions" in line
    assert "systemctl restart gpuqd" in line
    # Not applied: the running gpuqd still has no cloud side, and says
    # how to get one.
    r = d.request({"op": "prices"})
    assert r["ok"] is False and r["error"]["code"] == "unavailable"
    assert "restart gpuqd" in r["error"]["message"]
    assert d.stop() == 0


def test_reload_applies_reloadable_keys(daemon):
    d = daemon("[daemon]\nlog_level = info\n")
    with d.connect() as c:
        assert c.request(submit())["ok"]
    assert "job(s) committed" not in d.read_log()   # a debug line
    d.write_conf("[daemon]\nlog_level = debug\n")
    d.signal(signal.SIGHUP)
    log = d.wait_log("reload: done")
    assert "need a restart" not in log
    with d.connect() as c:
        assert c.request(submit())["ok"]
    d.wait_log("submit: 1 job(s) committed")
    assert d.stop() == 0


RUNNING = ("[daemon]\nadmin_group = nogroup\nmax_connections = 50\n"
           "max_connections_per_uid = 5\n[gcp]\nproviders = gce\n")


def log_after(d, before, text, timeout=5):
    """The log past BEFORE (a length) once TEXT is in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = d.read_log()[before:]
        if text in log:
            return log
        time.sleep(0.02)
    raise AssertionError("%r not logged within %ss:\n%s" % (
        text, timeout, d.read_log()))


def refused(d, before):
    """The reload after BEFORE (log length) was refused: its line."""
    log = log_after(d, before, "keeping the running configuration")
    lines = [ln for ln in log.splitlines() if "reload: refused" in ln or
             "keeping the running" in ln]
    assert len(lines) == 1, log
    assert "reload: done" not in log
    assert " -> " not in log            # nothing was changed
    return lines[0]


def test_reload_refuses_an_empty_or_cut_file(daemon):
    d = daemon(RUNNING)
    # Empty: it would put admin_group and the limits back to defaults.
    n = len(d.read_log())
    d.write_conf("")
    d.signal(signal.SIGHUP)
    line = refused(d, n)
    assert d.conf in line
    assert "[daemon] admin_group, [daemon] max_connections, [daemon] " \
        "max_connections_per_uid, [gcp] providers are set in the running " \
        "configuration but missing from the file" in line

    # Cut in the middle of a line.
    n = len(d.read_log())
    d.write_conf(RUNNING[:RUNNING.index("uid = 5") + 7])
    d.signal(signal.SIGHUP)
    line = refused(d, n)
    assert "%s:4: the last line does not end with a newline" % d.conf \
        in line

    # A syntax error: the file and the line.
    n = len(d.read_log())
    d.write_conf(RUNNING + "oops\n")
    d.signal(signal.SIGHUP)
    line = refused(d, n)
    assert "%s:7: syntax error" % d.conf in line

    # The running values were kept: a good file changes them from there.
    n = len(d.read_log())
    d.write_conf(RUNNING.replace("max_connections = 50",
                                 "max_connections = 60"))
    d.signal(signal.SIGHUP)
    log = log_after(d, n, "reload: done")
    assert 'reload: [daemon] max_connections: "50" -> "60"' in log
    assert "admin_group" not in log
    assert "1 key(s) changed" in log
    assert d.stop() == 0
