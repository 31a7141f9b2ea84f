"""systemctl reload gpuqd (SIGHUP) through the real gpuqd: keys that need
a restart are named in one warning that says so, and are not applied;
reloadable keys take effect at once (gpuqd.conf(5), "Reload")."""

import signal

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
