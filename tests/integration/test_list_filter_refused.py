"""Batch and Vertex AI may refuse a list filter on a hyphenated label key
(issue 15, "Against the real APIs" item 8; DESIGN G0.3). gpuqd then lists
without the filter and checks the labels itself: a job still runs to
the end, and nobody else's resource is taken for one of ours."""
import pytest

from cloudutil import TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest


@pytest.mark.parametrize("provider", ["batch", "vertex"])
def test_refused_label_filter_falls_back(cloud, provider):
    c = cloud(providers=(provider,),
              fake_config={"refuse_hyphen_label_filter": True})
    jid = c.submit(job_spec(providers=[provider], work=60))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    lists = [r for r in c.requests() if r.get("method_id", "").endswith(
        ("jobs.list", "customJobs.list"))]
    refused = [r for r in lists if r.get("status") == 400]
    bare = [r for r in lists if "filter=" not in (r.get("query") or "")]
    c.check(refused, "the fake never refused a filter", jid)
    c.check(bare, "gpuqd never listed without the filter", jid)
    c.check(len(c.creates(provider)) == 1, "%d creates, want 1" %
            len(c.creates(provider)), jid)
