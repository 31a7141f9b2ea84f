"""gpuq doctor through the real gpuqd and gpuq on the simulated cloud
(gpuq(1) "doctor"; daemon/doctor.c): every line passing in a project set
up right, every line failing with its fix in one set up wrong, the exit
status, and --json."""

import json

import gpuqdtest
from cloudutil import PROJECT, cloud

assert cloud  # the fixture, imported for pytest

SA = "trainer@%s.iam.gserviceaccount.com" % PROJECT
SUB = "projects/%s/regions/us-central1/subnetworks/ml" % PROJECT
SITE = {"job_service_account": SA, "network": "shared",
        "subnetwork": "us-central1:" + SUB, "external_ip": "no"}
GOOD = {"networks": {"shared": {"us-central1": "ml"}},
        "service_accounts": [SA]}


def doctor(c):
    """(exit status, the --json report, the text lines)."""
    rc, out, err = c.gpuq("doctor", "--json", timeout=120)
    rep = json.loads(out)
    rc2, text, _ = c.gpuq("doctor", timeout=120)
    assert rc2 == rc, (rc, rc2, text)
    return rc, rep, text


def lines(rep):
    return {l["check"]: l for l in rep["checks"]}


def test_every_check_passes_in_a_project_set_up_right(cloud):
    c = cloud(speed=100, fake_config=GOOD, gcp=SITE)
    rc, rep, text = doctor(c)
    assert rc == 0, text
    assert rep["failed"] == 0 and rep["passed"] == len(rep["checks"])
    got = lines(rep)
    for name in ("credentials", "project", "api compute.googleapis.com",
                 "api batch.googleapis.com", "api aiplatform.googleapis.com",
                 "api iam.googleapis.com", "api storage.googleapis.com",
                 "permissions Compute Engine", "permissions Cloud Batch",
                 "permissions Vertex AI", "permissions gpuqd",
                 "job service account", "act as job service account",
                 "checkpoint bucket", "checkpoint bucket permissions",
                 "network", "subnetwork us-central1", "boot image",
                 "GPU quota", "prices"):
        assert got[name]["ok"] is True, (name, got.get(name))
        assert got[name]["fix"] is None
    assert "service account gpuq-test@" in got["credentials"]["detail"]
    assert got["boot image"]["detail"].startswith(
        "common-cu128-ubuntu-2204-nvidia-570-v") and \
        got["boot image"]["detail"].endswith(" is READY")
    assert text.splitlines()[-1] == "all %d checks passed" % len(
        rep["checks"])
    assert all(l.startswith(("ok   ", "all ")) for l in text.splitlines())


def test_every_check_fails_with_its_fix(cloud):
    bad = {"disabled_services": ["batch.googleapis.com"],
           "denied_permissions": ["aiplatform.customJobs.create"],
           "service_accounts": [SA], "act_as_denied": [SA],
           "bucket_denied_permissions": ["storage.objects.create"],
           "networks": {"shared": {"us-east1": "other"}}}

    def setup(c):
        c.quota("GPUS_ALL_REGIONS", 0)
        c.fault(method="GET", path="^/v1/services", status=403, count=1000)
    c = cloud(speed=100, fake_config=bad, setup=setup,
              regions=("us-central1", "us-west1"),
              gcp={"job_service_account": SA, "network": "shared",
                   "subnetwork": "us-central1:" + SUB})
    rc, rep, text = doctor(c)
    assert rc == 1, text
    got = lines(rep)
    want = {
        "api batch.googleapis.com": "gcloud services enable "
        "batch.googleapis.com --project %s" % PROJECT,
        "permissions Vertex AI": "roles/aiplatform.user",
        "act as job service account": "roles/iam.serviceAccountUser",
        "checkpoint bucket permissions": "roles/storage.objectUser",
        "network": "[gcp] subnetwork",
        "subnetwork us-central1": "[gcp] subnetwork",
        "GPU quota": "request GPU quota",
        "prices": "cloudbilling.googleapis.com",
    }
    assert got["prices"]["detail"].startswith("the Cloud Billing catalog "
                                              "could not be read")
    for name, fix in want.items():
        assert got[name]["ok"] is False, (name, got[name])
        assert fix in got[name]["fix"], (name, got[name])
    assert "aiplatform.customJobs.create" in \
        got["permissions Vertex AI"]["detail"]
    assert "GPUS_ALL_REGIONS is 0" in got["GPU quota"]["detail"]
    assert got["network"]["detail"].endswith("has no subnetwork in "
                                             "us-west1")
    # the rest still pass, and the text says FAIL with the fix
    assert got["permissions Compute Engine"]["ok"] is True
    assert got["project"]["ok"] is True and got["credentials"]["ok"] is True
    assert "FAIL api batch.googleapis.com: batch.googleapis.com is " \
        "DISABLED\n     fix: gcloud services enable" in text
    assert text.splitlines()[-1] == "%d of %d checks failed" % (
        rep["failed"], len(rep["checks"]))


def test_private_google_access_off_with_no_external_ip(cloud):
    c = cloud(speed=100, fake_config=dict(GOOD, no_private_google_access=[
        "ml"]), gcp=SITE)
    rc, rep, text = doctor(c)
    assert rc == 1
    sub = lines(rep)["subnetwork us-central1"]
    assert sub["ok"] is False
    assert "has Private Google Access off, and [gcp] external_ip = no" in \
        sub["detail"]
    assert "--enable-private-ip-google-access" in sub["fix"]
    assert rep["failed"] == 1


def test_boot_image_deprecated_or_gone(cloud):
    """The Compute Engine boot image family (images.getFromFamily): a
    deprecated image or a missing family fails the line with its fix."""
    c = cloud(speed=100, fake_config=dict(GOOD, boot_image="deprecated"),
              gcp=SITE)
    rc, rep, text = doctor(c)
    assert rc == 1 and rep["failed"] == 1, text
    img = lines(rep)["boot image"]
    assert img["ok"] is False
    assert img["detail"].endswith(" of projects/deeplearning-platform-"
                                  "release/global/images/family/common-"
                                  "cu128-ubuntu-2204-nvidia-570 is "
                                  "DEPRECATED"), img
    assert "update gpuq" in img["fix"]
    assert "FAIL boot image: " in text
    c.ctl("/_fake/config", {"boot_image": "missing"})
    rc, rep, text = doctor(c)
    assert rc == 1 and rep["failed"] == 1, text
    img = lines(rep)["boot image"]
    assert img["ok"] is False and "404" in img["detail"], img
    assert "the image family is gone" in img["fix"]


def test_no_boot_image_line_without_compute_engine(cloud):
    c = cloud(speed=100, providers=("vertex", "batch"),
              fake_config=dict(GOOD, boot_image="missing"), gcp=SITE)
    rc, rep, text = doctor(c)
    assert rc == 0, text
    assert "boot image" not in lines(rep)


def test_missing_things(cloud):
    c = cloud(speed=100, fake_config={"missing_buckets": ["gpuq-test-ckpt"],
                                      "project_denied": True},
              gcp={"job_service_account": SA, "network": "nowhere"})
    rc, rep, text = doctor(c)
    assert rc == 1
    got = lines(rep)
    assert "no service account %s" % SA == got["job service account"][
        "detail"]
    assert "gcloud iam service-accounts create" in \
        got["job service account"]["fix"]
    assert got["checkpoint bucket"]["detail"] == "no bucket gs://gpuq-test-ckpt"
    assert "gcloud storage buckets create gs://gpuq-test-ckpt" in \
        got["checkpoint bucket"]["fix"]
    assert got["network"]["ok"] is False and "[gcp] network" in \
        got["network"]["fix"]
    assert got["project"]["ok"] is False and "[gcp] project" in \
        got["project"]["fix"]
    assert "403" in got["project"]["detail"]


def test_credentials_without_a_token(cloud):
    c = cloud(speed=100)
    c.fault(method="POST", path="^/token$", status=400, count=100000)
    c.ctl("/_fake/revoke_tokens", {})
    rc, rep, text = doctor(c)
    assert rc == 1
    cred = lines(rep)["credentials"]
    assert cred["ok"] is False and "no token" in cred["detail"]
    assert "[gcp] credentials" in cred["fix"]


def test_without_a_project():
    d = gpuqdtest.Gpuqd("", prefix="gpuq-doc-")
    try:
        d.start()
        rc, out, err = gpuqdtest.run_gpuq(d.socket, "doctor", "--json")
        assert rc == 1
        rep = json.loads(out)
        assert rep["failed"] == 1
        assert "set [gcp] project" in rep["checks"][0]["fix"]
    finally:
        d.stop()
        d.cleanup()
