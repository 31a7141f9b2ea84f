"""Shared fixtures for the integration tests: a real gpuqd on a private
socket and state directory, and the real gpuq client pointed at it.

    def test_x(gpuqd, gpuq):
        rc, out, err = gpuq("submit", "job.yaml")

The binaries come from $top_builddir (tests/run-pytest and `make check`
set it). While gpuqd has not been built, every test that needs it is
skipped with the reason. The daemon's log is printed when a test fails,
and its directory is kept then (removed when the test passes).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.dirname(
    os.path.dirname(HERE))
TOP_BUILDDIR = os.environ.get("top_builddir") or os.getcwd()
GPUQD = os.path.join(TOP_BUILDDIR, "gpuqd")
GPUQ = os.path.join(TOP_BUILDDIR, "gpuq")
EXAMPLES = os.path.join(TOP_SRCDIR, "examples")

START_TIMEOUT = 15.0    # seconds for gpuqd to answer ping
STOP_TIMEOUT = 15.0     # seconds for gpuqd to exit on SIGTERM

# A minimal gpuqd.conf: no cloud project, so jobs only queue (with a WHY).
MINIMAL_CONF = """\
# gpuqd.conf written by tests/integration/conftest.py
[daemon]
log_level = debug
"""


def need(path, what):
    if not os.access(path, os.X_OK):
        pytest.skip(f"{what} is not built yet ({path} does not exist); "
                    f"build it with 'make {os.path.basename(path)}'")


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


class Gpuqd:
    """One gpuqd process in its own directory. .socket, .state_dir, .conf,
    .log and .dir are paths; the process can be stopped, killed and
    started again on the same state."""

    def __init__(self, conf_text=MINIMAL_CONF, extra_args=()):
        # A short path: a Unix socket's address holds at most 107 bytes.
        self.dir = tempfile.mkdtemp(prefix="gpuq-it-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.state_dir = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "gpuq.sock")
        self.conf = os.path.join(self.dir, "gpuqd.conf")
        self.log = os.path.join(self.dir, "gpuqd.log")
        self.extra_args = list(extra_args)
        self.proc = None
        with open(self.conf, "w") as f:
            f.write(conf_text)

    @property
    def argv(self):
        return [GPUQD, "--foreground", "--state-dir", self.state_dir,
                "--socket", self.socket, "--config", self.conf,
                *self.extra_args]

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, timeout=START_TIMEOUT):
        assert self.proc is None or self.proc.poll() is not None
        logf = open(self.log, "a")
        logf.write(f"--- start: {' '.join(self.argv)}\n")
        logf.flush()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=logf, stderr=subprocess.STDOUT,
                                     close_fds=True)
        logf.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"gpuqd exited with {self.proc.returncode} at start; "
                    f"log:\n{self.read_log()}")
            try:
                if self.request({"op": "ping"}, timeout=1).get("ok"):
                    return self
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"gpuqd did not answer ping within {timeout}s; "
                           f"log:\n{self.read_log()}")

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM and wait; returns the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"gpuqd did not stop within {timeout}s "
                                 f"of SIGTERM")

    def kill9(self):
        """SIGKILL: a crash, nothing flushed on the way out."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self):
        self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def read_log(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def vm_hwm_kib(self):
        """Peak resident set size of the daemon, from /proc."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return None

    # Raw protocol, without the client: for checks of the wire itself.

    def connect(self, timeout=10):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.socket)
        return s

    def requests(self, reqs, timeout=10):
        """Send REQS (dicts) pipelined on one connection, return the
        replies in order."""
        with self.connect(timeout) as s:
            s.sendall(b"".join(json.dumps(r).encode() + b"\n"
                               for r in reqs))
            buf = b""
            replies = []
            while len(replies) < len(reqs):
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionError(
                        f"gpuqd hung up after {len(replies)} of "
                        f"{len(reqs)} replies")
                buf += chunk
                while b"\n" in buf and len(replies) < len(reqs):
                    line, buf = buf.split(b"\n", 1)
                    replies.append(json.loads(line))
            return replies

    def request(self, req, timeout=10):
        return self.requests([req], timeout)[0]

    def cleanup(self, keep):
        self.kill9()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def gpuqd_factory(request):
    """Make (and start) gpuqd instances with a custom conf; all are
    stopped at the end and their logs shown when the test failed."""
    need(GPUQD, "gpuqd")
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
            print(f"\n===== gpuqd log ({d.log}; directory kept) =====")
            print(d.read_log())
        d.cleanup(keep=bad)


@pytest.fixture
def gpuqd(gpuqd_factory):
    """A started gpuqd with the minimal configuration."""
    return gpuqd_factory()


def run_gpuq(socket_path, *args, input=None, env=None, user=None,
             timeout=60):
    """Run the real client; returns (rc, stdout, stderr). USER=(uid, gid)
    runs it as that user."""
    need(GPUQ, "gpuq")
    argv = [GPUQ]
    if socket_path is not None:
        argv += ["--socket", socket_path]
    argv += [str(a) for a in args]
    full_env = dict(os.environ)
    full_env.pop("GPUQ_SOCKET", None)
    full_env.update({"LC_ALL": "C.UTF-8", "TZ": "UTC"})
    if env:
        full_env.update(env)
    kw = {}
    if user is not None:
        uid, gid = user

        def drop():
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        kw["preexec_fn"] = drop
    p = subprocess.run(argv, input=input, capture_output=True, text=True,
                       env=full_env, timeout=timeout, **kw)
    return p.returncode, p.stdout, p.stderr


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
