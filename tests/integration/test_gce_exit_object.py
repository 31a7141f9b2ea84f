"""Guest attributes may not be readable once a Compute Engine VM has
stopped (issue 15, "Against the real APIs" item 8; DESIGN GC.6). The
startup script also writes how the job ended to the job's output place,
and gpuqd reads it there when the guest attributes are gone: the user's
exit code is still the user's, not a lost attempt."""
from cloudutil import TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest


def test_exit_code_from_the_output_place(cloud):
    c = cloud(providers=("gce",),
              fake_config={"guest_attributes_after_stop": False})
    jid = c.submit(job_spec(providers=["gce"], work=60, exit_code=3))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "failed" and job["exit_code"] == 3,
            "ended %s exit %r, want failed exit 3" % (job["state"],
                                                     job["exit_code"]), jid)
    att = c.attempts(job)
    c.check(len(att) == 1 and att[0]["end_reason"] == "failed",
            "attempts %r" % [(a["end_reason"], a["exit_code"])
                             for a in att], jid)
    got = [r for r in c.requests("storage.objects.get")
           if "attempt-1.exit.json" in r.get("path", "")]
    c.check(got, "gpuqd never read the exit object", jid)
    guest = [r for r in c.requests(
        "compute.instances.getGuestAttributes") if r.get("status") == 404]
    c.check(guest, "the guest attributes were not gone", jid)
