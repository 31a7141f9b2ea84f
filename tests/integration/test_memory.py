"""gpuqd gives its heap's free pages back while jobs run (doc/DESIGN.md
"Memory"; reconcile.c rec_trim()): the poll timer calls malloc_trim(0)
at most once a second, and says so at log level debug. What it saves is
measured by bench/memory.py --method launch, not here.
"""

import time

from cloudutil import cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

LONG = 10 ** 7


def trims(c):
    with open(c.gpuqd.log, errors="replace") as f:
        return f.read().count("reconciler: malloc_trim in ")


def test_heap_trimmed_while_jobs_run(cloud):
    c = cloud(probe=("gce",), speed=100, providers=("gce",))
    jid = c.submit(job_spec(providers=["gce"], work=LONG))
    c.wait_for(jid, lambda j: j["state"] == "running", 60, "running")
    first = trims(c)
    deadline = time.monotonic() + scaled(30)
    while trims(c) <= first:
        if time.monotonic() > deadline:
            c.fail("no malloc_trim in the gpuqd log within 30 s of the "
                   "job running (%d before)" % first, jid)
        time.sleep(0.5)
