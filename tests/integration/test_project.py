"""A real project's setup reaches every service (gpuqd.conf(5) "A real
project"): [gcp] job_service_account, network, subnetwork, external_ip,
network_tags, boot_disk_gb/_type, labels and kms_key, and a job's own
disk, each in the create request of Compute Engine, Cloud Batch and
Vertex AI as Google's schemas have it -- through the real gpuqd and gpuq
on the simulated cloud, which refuses what the real services refuse (a
network that does not exist, an account gpuqd may not act as, an
external IP under the organisation policy against them)."""

import signal
import subprocess

import pytest

import gpuqdtest
from cloudutil import PROJECT, TERMINAL, cloud, job_spec

assert cloud  # the fixture, imported for pytest

SPEED = 100
SA = "trainer@%s.iam.gserviceaccount.com" % PROJECT
NET = "projects/host-proj/global/networks/shared"
SUB = "projects/host-proj/regions/us-central1/subnetworks/ml"
KEY = "projects/%s/locations/us-central1/keyRings/r/cryptoKeys/k" % PROJECT
FAKE = {"networks": {"shared": {"us-central1": "ml"}},
        "service_accounts": [SA]}
SITE = {"job_service_account": SA, "network": NET,
        "subnetwork": "us-central1:" + SUB, "external_ip": "no",
        "network_tags": "gpu-jobs, egress-ok", "boot_disk_gb": "300",
        "boot_disk_type": "pd-ssd", "labels": "team=ml, cost-center=cc-42"}


def body_of(c, service):
    """The newest create body the fake accepted for SERVICE."""
    bodies = c.ctl("/_fake/create_bodies?service=" + service)["bodies"]
    c.check(bodies, "no %s create reached the fake" % service)
    return bodies[-1]["body"]


def run_one(c, **fields):
    jid = c.submit(job_spec(work=60, ckpt=30, **fields))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "job ended %s (why %r)" % (
        job["state"], job.get("why")), jid)
    return jid


def test_compute_engine_gets_every_setting(cloud):
    # The org policy forbids external IPs: only external_ip = no runs.
    c = cloud(speed=SPEED, providers=["gce"],
              fake_config=dict(FAKE, forbid_external_ip=True),
              gcp=dict(SITE, kms_key=KEY))
    run_one(c, disk={"size_gb": 500})
    b = body_of(c, "compute")
    nic = b["networkInterfaces"][0]
    assert nic["network"] == NET and nic["subnetwork"] == SUB
    assert "accessConfigs" not in nic
    assert b["serviceAccounts"] == [{"email": SA, "scopes": [
        "https://www.googleapis.com/auth/cloud-platform"]}]
    assert b["tags"] == {"items": ["gpu-jobs", "egress-ok"]}
    disk = b["disks"][0]
    assert disk["initializeParams"]["diskSizeGb"] == "500"   # the job's
    assert disk["initializeParams"]["diskType"].endswith(
        "/diskTypes/pd-ssd")
    assert disk["diskEncryptionKey"] == {"kmsKeyName": KEY}
    assert b["labels"]["team"] == "ml"
    assert b["labels"]["cost-center"] == "cc-42"
    assert b["labels"]["gpuq-install"] == c.install


def test_batch_gets_every_setting(cloud):
    c = cloud(speed=SPEED, providers=["batch"],
              fake_config=dict(FAKE, forbid_external_ip=True), gcp=SITE)
    run_one(c, disk={"type": "pd-standard"})
    b = body_of(c, "batch")
    ap = b["allocationPolicy"]
    assert ap["network"] == {"networkInterfaces": [{
        "network": NET, "subnetwork": SUB, "noExternalIpAddress": True}]}
    assert ap["serviceAccount"]["email"] == SA
    assert ap["tags"] == ["gpu-jobs", "egress-ok"]
    boot = ap["instances"][0]["policy"]["bootDisk"]
    assert boot == {"sizeGb": "300", "type": "pd-standard"}
    assert b["labels"]["team"] == "ml" and ap["labels"]["team"] == "ml"


def test_vertex_gets_every_setting(cloud):
    c = cloud(speed=SPEED, providers=["vertex"], fake_config=FAKE,
              gcp=dict(SITE, kms_key=KEY))
    run_one(c)
    b = body_of(c, "vertex")
    spec = b["jobSpec"]
    assert spec["serviceAccount"] == SA and spec["network"] == NET
    assert b["encryptionSpec"] == {"kmsKeyName": KEY}
    ds = spec["workerPoolSpecs"][0]["diskSpec"]
    assert ds == {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 300}
    assert b["labels"]["cost-center"] == "cc-42"


def test_external_ip_by_default(cloud):
    c = cloud(speed=SPEED, providers=["gce", "batch"])
    for p in ("gce", "batch"):
        run_one(c, providers=[p])
    nic = body_of(c, "compute")["networkInterfaces"][0]
    assert nic["network"] == "global/networks/default"
    assert nic["accessConfigs"][0]["type"] == "ONE_TO_ONE_NAT"
    assert "network" not in body_of(c, "batch")["allocationPolicy"]


def test_network_that_does_not_exist_fails_the_launch(cloud):
    c = cloud(speed=SPEED, providers=["gce"],
              gcp={"network": "nowhere", "external_ip": "no"})
    jid = c.submit(job_spec(work=60))
    job = c.wait_state(jid, TERMINAL, 60)
    assert job["state"] == "failed"
    text = str(c.show(jid))
    assert "nowhere" in text and "was not found" in text


def test_without_act_as_nothing_launches_and_why_says_so(cloud):
    c = cloud(speed=SPEED, providers=["batch", "gce"],
              fake_config={"service_accounts": [SA], "act_as_denied": [SA]},
              gcp={"job_service_account": SA})
    jid = c.submit(job_spec(work=60))
    job = c.wait_for(jid, lambda j: "actAs" in (j.get("why") or ""), 30,
                     "a WHY naming the missing actAs")
    assert job["state"] == "queued"
    assert "gpuqd's account may not act as %s (no iam.serviceAccounts."\
        "actAs): fix with gcloud iam service-accounts add-iam-policy-"\
        "binding %s" % (SA, SA) in job["why"]
    assert "roles/iam.serviceAccountUser" in job["why"]
    assert c.creates() == []
    # The grant needs no restart: a reload tests again.
    c.ctl("/_fake/config", {"act_as_denied": []})
    c.gpuqd.signal(signal.SIGHUP)
    job = c.wait_state(jid, TERMINAL, 60)
    assert job["state"] == "succeeded", job


BAD = [
    ("job_service_account", "trainer@gmail.com",
     "[gcp] job_service_account: \"trainer@gmail.com\" is not a service "
     "account's email; write NAME@PROJECT.iam.gserviceaccount.com"),
    ("network", "My_Net", "[gcp] network: \"My_Net\" is not a network"),
    ("subnetwork", "projects/h/regions/us-central1/subnetworks/ml",
     "[gcp] subnetwork: \"projects/h/regions/us-central1/subnetworks/ml\" "
     "names no region"),
    ("network_tags", "Web Server", "[gcp] network_tags: \"Web Server\" is "
     "not a network tag"),
    ("boot_disk_type", "pd-balanced", "[gcp] boot_disk_type: "
     "\"pd-balanced\" is not a boot disk type every service takes"),
    ("labels", "Team=ml", "[gcp] labels: \"Team=ml\" has a key"),
    ("kms_key", KEY, "[gcp] kms_key: Cloud Batch takes no customer-managed "
     "key in a job"),
    ("boot_disk_gb", "20", "boot_disk_gb"),
]


@pytest.mark.parametrize("key,value,words", BAD, ids=[b[0] for b in BAD])
def test_bad_values_stop_gpuqd_and_check(key, value, words):
    d = gpuqdtest.Gpuqd("[gcp]\nproject = p\n%s = %s\n" % (key, value),
                        prefix="gpuq-prj-")
    try:
        r = subprocess.run(d.argv + ["--check"], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode != 0
        assert words in r.stderr + r.stdout, r.stderr
        d.spawn()
        assert d.wait(20) != 0
        assert words in d.read_log()
    finally:
        d.cleanup()


def test_a_reload_with_a_bad_value_is_refused():
    d = gpuqdtest.Gpuqd("[daemon]\nlog_level = info\n", prefix="gpuq-prj-")
    try:
        d.start()
        d.write_conf("[daemon]\nlog_level = info\n[gcp]\n"
                     "labels = Team=ml\n")
        d.signal(signal.SIGHUP)
        d.wait_log("reload: refused: [gcp] labels: \"Team=ml\" has a key")
        assert d.request({"op": "ping"})["ok"]
        assert d.stop() == 0
    finally:
        d.cleanup()
