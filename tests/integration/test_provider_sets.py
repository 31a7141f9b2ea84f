"""Every configuration of `[gcp] providers` places jobs: each service alone
and every pair, through the real gpuqd and gpuq on the simulated cloud.

With `providers = vertex` alone gpuqd once waited for ever ("waiting for
the zones and quotas of Compute Engine"): where a GPU is offered was
read only when a Compute Engine quota service was configured.
"""

import itertools

import pytest

from cloudutil import PROVIDERS, TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest

SPEED = 100

SETS = [s for n in (1, 2) for s in itertools.combinations(PROVIDERS, n)]


@pytest.mark.parametrize("providers", SETS, ids=["+".join(s) for s in SETS])
def test_each_set_of_services_places_jobs(cloud, providers):
    c = cloud(speed=SPEED, providers=providers)
    jid = c.submit(job_spec(work=120, ckpt=60))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded",
            "with providers = %s the job ended %s (why: %r)" % (
                ", ".join(providers), job["state"], job.get("why")), jid)
    where = c.show(jid)["attempts_list"][0]["provider"]
    c.check(where in providers, "ran on %s, which gpuqd.conf does not "
            "enable (%s)" % (where, ", ".join(providers)), jid)
