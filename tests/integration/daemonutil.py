"""Helpers for the daemon-level tests (test_daemon_*.py): a real gpuqd in
a private directory, spoken to with raw JSON lines over its socket, with
no client in between.

    from daemonutil import daemon   # the fixture

    def test_x(daemon):
        d = daemon()                 # started, answering ping
        assert d.request({"op": "ping"})["ok"]

Each daemon's log is printed when the test fails, and its directory kept.
Tests are skipped, with the reason, while gpuqd is not built.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

TOP_BUILDDIR = os.environ.get("top_builddir") or os.getcwd()
GPUQD = os.path.join(TOP_BUILDDIR, "gpuqd")

START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0

# The smallest job the spec accepts.
JOB = {"image": "example.com/train:1",
       "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}


def submit(job=None, **kw):
    """A submit request for JOB (default: the smallest valid job)."""
    req = {"op": "submit", "job": dict(job or JOB)}
    req.update(kw)
    return req


def need_gpuqd():
    if not os.access(GPUQD, os.X_OK):
        pytest.skip(f"gpuqd is not built yet ({GPUQD} does not exist); "
                    f"build it with 'make gpuqd'")


class Conn:
    """One client connection speaking newline-delimited JSON."""

    def __init__(self, path, timeout=20):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *reqs):
        self.sock.sendall(b"".join(json.dumps(r).encode() + b"\n"
                                   for r in reqs))

    def recv_line(self):
        """The next reply line as bytes; b"" when the daemon hung up."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                rest, self.buf = self.buf, b""
                return rest
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def recv(self):
        line = self.recv_line()
        if not line:
            raise ConnectionError("gpuqd hung up")
        return json.loads(line)

    def request(self, req):
        self.send(req)
        return self.recv()

    def pipeline(self, reqs, chunk=2000):
        """Send REQS without waiting (a writer thread), read every reply
        in order. Returns the replies."""
        data = [json.dumps(r).encode() + b"\n" for r in reqs]
        err = []

        def writer():
            try:
                for i in range(0, len(data), chunk):
                    self.sock.sendall(b"".join(data[i:i + chunk]))
            except OSError as e:
                err.append(e)
        t = threading.Thread(target=writer)
        t.start()
        try:
            replies = [self.recv() for _ in reqs]
        finally:
            t.join()
        if err:
            raise err[0]
        return replies

    def at_eof(self, timeout=5):
        """True if the daemon closes the connection within TIMEOUT."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return True


class Daemon:
    """One gpuqd process in its own directory: .dir, .state_dir, .socket,
    .conf, .log. It can be stopped, killed and started again."""

    def __init__(self, conf="", args=(), env=None, preexec=None,
                 wrapper=()):
        self.dir = tempfile.mkdtemp(prefix="gpuqd-t-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.state_dir = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "s.sock")
        self.conf = os.path.join(self.dir, "gpuqd.conf")
        self.log = os.path.join(self.dir, "gpuqd.log")
        self.args = list(args)
        self.env = env
        self.preexec = preexec
        self.wrapper = list(wrapper)
        self.proc = None
        self.write_conf(conf)

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    @property
    def argv(self):
        return [*self.wrapper, GPUQD, "--state-dir", self.state_dir,
                "--socket", self.socket, "--config", self.conf,
                *self.args]

    def spawn(self, argv=None):
        """Start the process and return at once."""
        assert self.proc is None or self.proc.poll() is not None
        env = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
                  "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"):
            env.pop(k, None)
        env.update(self.env or {})
        with open(self.log, "a") as logf:
            logf.write(f"--- start: {' '.join(argv or self.argv)}\n")
            logf.flush()
            self.proc = subprocess.Popen(
                argv or self.argv, stdin=subprocess.DEVNULL, stdout=logf,
                stderr=subprocess.STDOUT, env=env, close_fds=True,
                preexec_fn=self.preexec)
        return self

    def start(self, timeout=START_TIMEOUT):
        """Start and wait until the daemon answers ping."""
        self.spawn()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"gpuqd exited with {self.proc.returncode} at start; "
                    f"log:\n{self.read_log()}")
            try:
                with self.connect(timeout=2) as c:
                    if c.request({"op": "ping"}).get("ok"):
                        return self
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"gpuqd did not answer within {timeout}s; "
                           f"log:\n{self.read_log()}")

    def connect(self, timeout=20):
        return Conn(self.socket, timeout)

    def request(self, req):
        with self.connect() as c:
            return c.request(req)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT):
        return self.proc.wait(timeout)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, then the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"gpuqd did not stop within {timeout}s")

    def kill9(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def read_log(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_log(self, text, timeout=5):
        """Wait until TEXT appears in the log; return the log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.read_log()
            if text in log:
                return log
            time.sleep(0.02)
        raise AssertionError(f"{text!r} not in the log within {timeout}s:"
                             f"\n{self.read_log()}")

    def all_jobs(self, after=0):
        """Every job in the queue (with an id above AFTER), by id, paging
        through list."""
        jobs = {}
        with self.connect() as c:
            while True:
                r = c.request({"op": "list", "state": "all",
                               "limit": 1000, "after": after})
                assert r["ok"], r
                for j in r["jobs"]:
                    jobs[j["id"]] = j
                if "next" not in r:
                    return jobs
                after = r["next"]

    def cleanup(self, keep):
        self.kill9()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def _failed(request):
    return any(getattr(request.node, "rep_" + w, None) is not None and
               getattr(request.node, "rep_" + w).failed
               for w in ("setup", "call"))


@pytest.fixture
def daemon(request):
    """daemon(conf="", args=(), env=None, preexec=None, start=True) makes
    a gpuqd; all are killed at the end, logs shown if the test failed."""
    need_gpuqd()
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
        if d.proc is not None and d.proc.poll() is None:
            try:
                rc = d.stop()
            except AssertionError as e:
                rc = str(e)
            if rc != 0:
                unclean.append(f"{d.dir}: exit status {rc}")
    # The report attributes come from conftest.py's hook when present.
    bad = _failed(request) or not hasattr(request.node, "rep_call") or \
        bool(unclean)
    for d in made:
        if bad:
            print(f"\n===== gpuqd log ({d.log}; directory kept) =====")
            print(d.read_log())
        d.cleanup(keep=bad)
    if unclean:
        pytest.fail("gpuqd did not stop cleanly on SIGTERM: " +
                    "; ".join(unclean))
