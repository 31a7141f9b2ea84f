"""Helpers for the daemon-level tests (test_daemon_*.py): a real gpuqd in
a private directory, spoken to with raw JSON lines over its socket, with
no client in between.

    from daemonutil import daemon   # the fixture

    def test_x(daemon):
        d = daemon()                 # started, answering ping
        assert d.request({"op": "ping"})["ok"]

The daemon and the connection are tests/gpuqdtest.py's (Gpuqd, Conn).
Each daemon's log is printed when the test fails, and its directory
kept; every daemon still running at the end must exit 0 on SIGTERM. A
gpuqd that is not built fails the test.
"""

import os
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
import gpuqdtest  # noqa: E402
from gpuqdtest import Conn  # noqa: E402,F401 (for the tests)

GPUQD = os.path.join(gpuqdtest.TOP_BUILDDIR, "gpuqd")

# The smallest job the spec accepts.
JOB = {"image": "example.com/train:1",
       "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}


def submit(job=None, **kw):
    """A submit request for JOB (default: the smallest valid job)."""
    req = {"op": "submit", "job": dict(job or JOB)}
    req.update(kw)
    return req


def need_gpuqd():
    """Fail (gpuqdtest.NotBuilt) unless gpuqd is built."""
    gpuqdtest.require(GPUQD, "gpuqd")


Daemon = gpuqdtest.Gpuqd


def _failed(request):
    return any(getattr(request.node, "rep_" + w, None) is not None and
               getattr(request.node, "rep_" + w).failed
               for w in ("setup", "call"))


@pytest.fixture
def daemon(request):
    """daemon(conf="", args=(), env=None, preexec=None, start=True,
    wrapper=()) makes a gpuqd; all are stopped at the end, logs shown if
    the test failed."""
    made = []

    def make(conf="", args=(), env=None, preexec=None, start=True,
             wrapper=()):
        d = Daemon(conf, args, env, preexec, wrapper)
        made.append(d)
        if start:
            d.start()
        return d

    yield make
    # Every daemon still running must stop cleanly: exit status 0 means
    # the loop closed every handle (and, under ASan, nothing leaked).
    unclean = []
    for d in made:
        if d.alive():
            try:
                rc = d.stop()
            except AssertionError as e:
                rc = str(e)
            if rc != 0:
                unclean.append(f"{d.dir}: exit status {rc}")
    # The report attributes come from conftest.py's hook.
    bad = _failed(request) or not hasattr(request.node, "rep_call") or \
        bool(unclean)
    for d in made:
        if bad:
            d.report()
        d.cleanup(keep=bad)
    if unclean:
        pytest.fail("gpuqd did not stop cleanly on SIGTERM: " +
                    "; ".join(unclean))
