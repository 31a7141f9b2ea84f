"""H100/H200/B200 GPU quotas and A3/A4/G2 vCPU quotas are Compute Engine
family quotas published only in the Cloud Quotas API (issue 15, "Against
the real APIs" item 5; DESIGN GA.5). gpuqd reads them and holds a job
they have no room for, instead of launching into a QUOTA_EXCEEDED."""
import time

from cloudutil import cloud, job_spec, scaled

assert cloud  # the fixture, imported for pytest

GPU_FAMILY = "GPUS-PER-GPU-FAMILY-per-project-region:NVIDIA_H100"
VM_FAMILY = "CPUS-PER-VM-FAMILY-per-project-region:A3"


def queued_why(c, jid, words):
    deadline = time.monotonic() + scaled(20)
    while True:
        j = c.show(jid)
        if j["state"] == "queued" and j.get("why") and words in j["why"]:
            return j
        c.check(time.monotonic() < deadline and j["state"] == "queued",
                "job %s, why %r; want queued for %s" % (
                    j["state"], j.get("why"), words), jid)
        time.sleep(0.2)


def test_h100_family_quota_holds_the_job(cloud):
    def setup(c):
        c.quota(GPU_FAMILY, limit=4, region="us-central1")
    c = cloud(providers=("gce",), setup=setup)
    # On-demand only: flex-start draws on the preemptible family quota.
    jid = c.submit(job_spec(providers=["gce"], gpu="nvidia-h100-80gb",
                            count=8, capacity=["standard"],
                            regions=["us-central1"]))
    queued_why(c, jid, "NVIDIA_H100_GPUS")
    c.check(not c.creates("gce"), "gpuqd launched into a full family "
            "quota", jid)


def test_a3_vcpus_count_against_their_family(cloud):
    def setup(c):
        c.quota(VM_FAMILY, limit=100, region="us-central1")
    c = cloud(providers=("gce",), setup=setup)
    jid = c.submit(job_spec(providers=["gce"], gpu="nvidia-h100-80gb",
                            count=8, spot="never", regions=["us-central1"]))
    # CPUS has 1000 free: the 100 are the A3 family's.
    queued_why(c, jid, "no free CPU quota for a3-highgpu-8g (208 vCPUs) "
               "in us-central1 (100 free)")
    c.check(not c.creates("gce"), "gpuqd launched past the A3 vCPU "
            "quota", jid)
