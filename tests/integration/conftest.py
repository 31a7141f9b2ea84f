"""Shared fixtures for the integration tests: a real gpuqd on a private
socket and state directory, and the real gpuq client pointed at it.

    def test_x(gpuqd, gpuq):
        rc, out, err = gpuq("submit", "job.yaml")

The daemon itself is started by tests/gpuqdtest.py, the one harness the
integration tests, the benchmarks and the demo share. The binaries come
from $top_builddir (tests/run-pytest and `make check` set it); one that
is not built makes the test fail, naming the make target. The daemon's
log is printed when a test fails, and its directory is kept then
(removed when the test passes).
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
import gpuqdtest  # noqa: E402
from gpuqdtest import run_gpuq  # noqa: E402,F401 (used by the tests)

TOP_SRCDIR = gpuqdtest.TOP_SRCDIR
TOP_BUILDDIR = gpuqdtest.TOP_BUILDDIR
GPUQD = os.path.join(TOP_BUILDDIR, "gpuqd")
GPUQ = os.path.join(TOP_BUILDDIR, "gpuq")
EXAMPLES = os.path.join(TOP_SRCDIR, "examples")

# A minimal gpuqd.conf: no cloud project, so jobs only queue (with a WHY).
MINIMAL_CONF = """\
# gpuqd.conf written by tests/integration/conftest.py
[daemon]
log_level = debug
"""


def need(path, what):
    """Fail (gpuqdtest.NotBuilt) unless PATH is a built program."""
    gpuqdtest.require(path, what)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's report on the item, so fixtures can tell in
    their teardown whether the test failed."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def failed(request):
    return any(getattr(request.node, "rep_" + w, None) is not None
               and getattr(request.node, "rep_" + w).failed
               for w in ("setup", "call"))


class Gpuqd(gpuqdtest.Gpuqd):
    """gpuqdtest.Gpuqd with the minimal configuration by default:
    Gpuqd(conf_text, extra_args)."""

    def __init__(self, conf_text=MINIMAL_CONF, extra_args=(), **kw):
        super().__init__(conf_text, args=extra_args, prefix="gpuq-it-", **kw)


@pytest.fixture
def gpuqd_factory(request):
    """Make (and start) gpuqd instances with a custom conf; all are
    stopped at the end and their logs shown when the test failed."""
    made = []

    def make(conf_text=MINIMAL_CONF, start=True, extra_args=()):
        d = Gpuqd(conf_text, extra_args)
        made.append(d)
        if start:
            d.start()
        return d

    yield make
    bad = failed(request)
    for d in made:
        if bad:
            d.report()
        d.cleanup(keep=bad)


@pytest.fixture
def gpuqd(gpuqd_factory):
    """A started gpuqd with the minimal configuration."""
    return gpuqd_factory()


@pytest.fixture
def gpuq(gpuqd):
    """The client bound to the gpuqd fixture's socket:
    gpuq(*args, input=None, env=None, user=None) -> (rc, out, err)."""
    def call(*args, **kw):
        return run_gpuq(gpuqd.socket, *args, **kw)
    call.socket = gpuqd.socket
    return call


@pytest.fixture
def gpuq_bare():
    """The client with no --socket: for tests of GPUQ_SOCKET and of an
    unreachable daemon."""
    def call(*args, **kw):
        return run_gpuq(None, *args, **kw)
    return call


@pytest.fixture
def jobfile(tmp_path):
    """Write a job file: jobfile(text, name='job.yaml') -> path."""
    def write(text, name="job.yaml"):
        p = tmp_path / name
        p.write_text(text)
        return str(p)
    return write
