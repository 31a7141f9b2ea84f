"""benchlib.py: what bench/submit and bench/status share: find the
build, start a private gpuqd, time whole processes, report figures.
Standard library only."""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)


def builddir(arg=None):
    d = arg or os.environ.get("top_builddir") or os.getcwd()
    d = os.path.abspath(d)
    for prog in ("gpuqd", "gpuq"):
        if not os.access(os.path.join(d, prog), os.X_OK):
            sys.exit(f"bench: {d}/{prog} is not built; run bench/run, or "
                     f"'make gpuqd gpuq' in the build directory and pass "
                     f"--builddir")
    return d


class Gpuqd:
    """gpuqd on a private socket and state directory (on disk, not
    tmpfs: durable commits must pay for their fsync)."""

    def __init__(self, bdir, state_dir=None, conf="[daemon]\n"):
        self.bin = os.path.join(bdir, "gpuqd")
        self.dir = tempfile.mkdtemp(prefix="gpuq-bench-", dir="/var/tmp")
        self.state_dir = state_dir or os.path.join(self.dir, "state")
        self.socket = os.path.join(self.dir, "gpuq.sock")
        self.conf = os.path.join(self.dir, "gpuqd.conf")
        self.log = os.path.join(self.dir, "gpuqd.log")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.proc = None

    def start(self, timeout=60):
        with open(self.log, "a") as logf:
            self.proc = subprocess.Popen(
                [self.bin, "--foreground", "--state-dir", self.state_dir,
                 "--socket", self.socket, "--config", self.conf],
                stdin=subprocess.DEVNULL, stdout=logf,
                stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"bench: gpuqd exited at start; see {self.log}")
            try:
                if self.request({"op": "ping"}).get("ok"):
                    return self
            except OSError:
                time.sleep(0.02)
        sys.exit(f"bench: gpuqd did not answer; see {self.log}")

    def request(self, req, sock=None):
        own = sock is None
        if own:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(30)
            sock.connect(self.socket)
        try:
            sock.sendall(json.dumps(req).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("gpuqd hung up")
                buf += chunk
            return json.loads(buf)
        finally:
            if own:
                sock.close()

    def vm_hwm_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def spawn_time(argv, stdout_path="/dev/null"):
    """Wall time of one whole process, from spawn to exit (seconds).
    Exits the benchmark if the process fails."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, stdout_path,
         os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)])
    _, status = os.waitpid(pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(argv)} failed with status {status}")
    return dt


def median_ms(times):
    return statistics.median(times) * 1000.0


def report(what, value, unit, target, lower_is_better=True):
    ok = value <= target if lower_is_better else value >= target
    cmp = "<=" if lower_is_better else ">="
    print(f"{what:<44} {value:10.1f} {unit:<5} (target {cmp} {target:g} "
          f"{unit}: {'met' if ok else 'MISSED'})", flush=True)
    return ok
