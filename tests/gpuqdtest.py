"""gpuqdtest.py: the one harness that starts a private gpuqd, for the
integration tests (tests/integration), the benchmarks (bench/) and the
demo (tests/demo).

    import gpuqdtest as gt

    d = gt.Gpuqd(conf="[daemon]\\nlog_level = debug\\n").start()
    assert d.request({"op": "ping"})["ok"]
    with d.connect() as c:              # one connection, JSON lines
        c.send({"op": "list"}); reply = c.recv()
    d.stop()                            # SIGTERM, then the exit status
    d.cleanup(keep=False)               # removes the directory

A Gpuqd lives in a fresh directory (gpuqd.conf, state/, the socket,
gpuqd.log). start() waits until the daemon answers ping; if it exits or
stays silent, the error carries the log. A binary that is not built is
an error (NotBuilt) naming the make target, never a skip.

Conn and request()/requests() are the one socket helper: a request is
one JSON line, a reply is one JSON line (common/proto.h).

Standard library only: the benchmarks and the demo run without pytest.
Put this directory on sys.path to import it:

    sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests"))
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

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.environ.get("top_srcdir") or os.path.dirname(HERE)
TOP_BUILDDIR = os.environ.get("top_builddir") or os.getcwd()

START_TIMEOUT = 20.0    # seconds for gpuqd to answer ping
STOP_TIMEOUT = 20.0     # seconds for gpuqd to exit after SIGTERM

# Variables a service manager may have left us that gpuqd would act on.
SERVICE_ENV = ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
               "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM")


class NotBuilt(AssertionError):
    """A program the test needs is not built: a failure, with the fix."""


def program(name, builddir=None):
    """The path of built program NAME (gpuqd, gpuq) in BUILDDIR (default
    $top_builddir, else the current directory); NotBuilt if it is not
    there."""
    path = os.path.join(os.path.abspath(builddir or TOP_BUILDDIR), name)
    require(path, name)
    return path


def require(path, what):
    """NotBuilt unless PATH is an executable."""
    if not os.access(path, os.X_OK):
        raise NotBuilt(f"{what} is not built ({path} does not exist or is "
                       f"not executable): run 'make {os.path.basename(path)}'"
                       f" in the build directory, or set top_builddir")


# -- the socket --------------------------------------------------------------

class Conn:
    """One client connection speaking newline-delimited JSON."""

    def __init__(self, path, timeout=20):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fileno(self):
        return self.sock.fileno()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *reqs):
        self.sock.sendall(b"".join(json.dumps(r).encode() + b"\n"
                                   for r in reqs))

    def recv_line(self):
        """The next reply line as bytes; b"" when the daemon hung up."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
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


def requests(path, reqs, timeout=20):
    """Send REQS (dicts) pipelined on one new connection to the socket at
    PATH; the replies in order."""
    with Conn(path, timeout) as c:
        c.send(*reqs)
        return [c.recv() for _ in reqs]


def request(path, req, timeout=20):
    """One request on a new connection to the socket at PATH: the reply."""
    return requests(path, [req], timeout)[0]


# -- the daemon --------------------------------------------------------------

class Gpuqd:
    """One gpuqd process in its own directory: .dir, .state_dir, .socket,
    .conf, .log. It can be stopped, killed and started again on the same
    state.

    CONF is gpuqd.conf's text. ARGS go after the harness's own options;
    ENV is added to the environment (the service manager's variables are
    removed first); PREEXEC runs in the child; WRAPPER is a command the
    daemon runs under. DIR is the directory to use (default: a new one
    under TMPDIR, removed by cleanup()). BUILDDIR is where gpuqd is built.
    """

    def __init__(self, conf="", args=(), env=None, preexec=None,
                 wrapper=(), dir=None, tmpdir="/tmp", prefix="gpuqd-t-",
                 builddir=None):
        self.bin = program("gpuqd", builddir)
        if dir is None:
            # A short path: a Unix socket's address holds 107 bytes.
            dir = tempfile.mkdtemp(prefix=prefix, dir=tmpdir)
            os.chmod(dir, 0o755)
            self.own_dir = True
        else:
            os.makedirs(dir, exist_ok=True)
            self.own_dir = False
        self.dir = str(dir)
        self.state_dir = os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "gpuq.sock")
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
        return [*self.wrapper, self.bin, "--foreground",
                "--state-dir", self.state_dir, "--socket", self.socket,
                "--config", self.conf, *self.args]

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def spawn(self, argv=None):
        """Start the process (ARGV, default .argv) and return at once."""
        assert self.proc is None or self.proc.poll() is not None
        argv = argv or self.argv
        env = dict(os.environ)
        for k in SERVICE_ENV:
            env.pop(k, None)
        env.update(self.env or {})
        with open(self.log, "a") as logf:
            logf.write(f"--- start: {' '.join(argv)}\n")
            logf.flush()
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=logf,
                stderr=subprocess.STDOUT, env=env, close_fds=True,
                preexec_fn=self.preexec)
        return self

    def wait_ready(self, timeout=START_TIMEOUT):
        """Until the daemon answers ping; RuntimeError with the log if it
        exits first or does not answer within TIMEOUT seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"gpuqd exited with {self.proc.returncode} at start; "
                    f"log ({self.log}):\n{self.read_log()}")
            try:
                if self.request({"op": "ping"}, timeout=2).get("ok"):
                    return self
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        raise RuntimeError(f"gpuqd did not answer ping within {timeout}s; "
                           f"log ({self.log}):\n{self.read_log()}")

    def start(self, timeout=START_TIMEOUT):
        """Start and wait until the daemon answers ping."""
        return self.spawn().wait_ready(timeout)

    def restart(self):
        self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT):
        return self.proc.wait(timeout)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM and wait; returns the exit status (None if never
        started). AssertionError if it does not exit within TIMEOUT."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"gpuqd did not stop within {timeout}s "
                                 f"of SIGTERM; log:\n{self.log_tail()}")

    def kill9(self):
        """SIGKILL: a crash, nothing flushed on the way out."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self, keep=False):
        """Kill the daemon if it still runs; remove its directory unless
        KEEP (or the directory was the caller's)."""
        self.kill9()
        if not keep and self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- its log -------------------------------------------------------------

    def read_log(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def log_tail(self, lines=80):
        return "".join(self.read_log().splitlines(True)[-lines:])

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

    def report(self, out=None):
        """Print where the directory is and the whole log (a failure)."""
        print(f"\n===== gpuqd log ({self.log}; directory kept) =====",
              file=out)
        print(self.read_log(), file=out)

    # -- talking to it -------------------------------------------------------

    def connect(self, timeout=20):
        return Conn(self.socket, timeout)

    def request(self, req, timeout=20):
        return request(self.socket, req, timeout)

    def requests(self, reqs, timeout=20):
        return requests(self.socket, reqs, timeout)

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

    def vm_hwm_kib(self):
        """Peak resident set size of the daemon, from /proc."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return None


def run_gpuq(socket_path, *args, input=None, env=None, user=None,
             timeout=60, builddir=None):
    """Run the real client (with --socket SOCKET_PATH unless None);
    returns (rc, stdout, stderr). USER=(uid, gid) runs it as that user."""
    argv = [program("gpuq", builddir)]
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
