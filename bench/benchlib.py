"""benchlib.py: what bench/submit and bench/status share: find the
build, start a private gpuqd (with tests/gpuqdtest.py, the harness the
tests use), time whole processes, report figures. Standard library
only."""

import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests"))
import gpuqdtest  # noqa: E402


def builddir(arg=None):
    d = arg or os.environ.get("top_builddir") or os.getcwd()
    d = os.path.abspath(d)
    for prog in ("gpuqd", "gpuq"):
        if not os.access(os.path.join(d, prog), os.X_OK):
            sys.exit(f"bench: {d}/{prog} is not built; run bench/run, or "
                     f"'make gpuqd gpuq' in the build directory and pass "
                     f"--builddir")
    return d


class Gpuqd(gpuqdtest.Gpuqd):
    """gpuqd (tests/gpuqdtest.py) of build BDIR on a private socket and
    state directory, on disk, not tmpfs: durable commits must pay for
    their fsync. A daemon that does not start ends the benchmark."""

    def __init__(self, bdir, conf="[daemon]\n"):
        super().__init__(conf, tmpdir="/var/tmp", prefix="gpuq-bench-",
                         builddir=bdir)

    def start(self, timeout=60):
        try:
            return super().start(timeout)
        except RuntimeError as e:
            sys.exit(f"bench: {e}")

    def cleanup(self):
        try:
            self.stop(30)
        finally:
            super().cleanup()


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
