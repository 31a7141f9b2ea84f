"""pytest fixtures for the fakegcp suite: each test gets its own server on
port 0 in a tmp dir, and a client already holding an access token."""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeclient import FakeGCP, get_token, make_service_account_key  # noqa

PROJECT = "gpuq-demo"
CP = "/compute/v1/projects/%s" % PROJECT


class Client:
    def __init__(self, fake, keyfile):
        self.fake = fake
        self.url = fake.url
        self.keyfile = keyfile
        self.token = get_token(fake, keyfile)["access_token"]

    def ctl(self, path, body=None, method=None):
        return self.fake.ctl(path, body, method)

    def call(self, method, path, body=None, headers=None, token=True,
             raw=None):
        """Returns (status, parsed JSON or bytes, headers)."""
        data = raw if raw is not None else (
            None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        if token:
            req.add_header("Authorization", "Bearer " + (
                self.token if token is True else token))
        if data is not None and raw is None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                st, b, h = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            st, b, h = e.code, e.read(), e.headers
        try:
            return st, json.loads(b) if b else {}, h
        except ValueError:
            return st, b, h

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, {} if body is None else body, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)

    def wait_for(self, fn, timeout=10, interval=0.05):
        end = time.time() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.time() > end:
                raise AssertionError("condition not met in %ss" % timeout)
            time.sleep(interval)

    def resource(self, name):
        for r in self.ctl("/_fake/resources")["resources"]:
            if r["name"] == name or r["resource"].endswith("/" + name):
                return r
        return None


@pytest.fixture
def fake(tmp_path):
    f = FakeGCP.start(str(tmp_path / "state"), speed=10.0)
    yield f
    assert f.stop() == 0


@pytest.fixture(scope="session")
def rsa_key():
    """One private key (PEM bytes) for the whole session: generating one
    per test cost ~0.2 s each."""
    return subprocess.run(
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
         "rsa_keygen_bits:2048"], check=True, capture_output=True).stdout


@pytest.fixture
def gcp(fake, tmp_path, rsa_key):
    kf = make_service_account_key(fake, str(tmp_path / "sa.json"),
                                  private_pem=rsa_key)
    return Client(fake, kf)


def instance_body(name, zone="us-central1-a", gpu="nvidia-tesla-t4", count=1,
                  spot=True, env=None, labels=None, action="DELETE",
                  machine="n1-standard-8"):
    b = {"name": name,
         "machineType": "zones/%s/machineTypes/%s" % (zone, machine),
         "scheduling": {"provisioningModel": "SPOT" if spot else "STANDARD",
                        "onHostMaintenance": "TERMINATE",
                        "automaticRestart": False},
         "disks": [{"boot": True, "autoDelete": True, "initializeParams": {
             "sourceImage": "projects/debian-cloud/global/images/family/"
                            "debian-12", "diskSizeGb": "100"}}],
         "networkInterfaces": [{"network": "global/networks/default",
                                "accessConfigs": [{"type": "ONE_TO_ONE_NAT",
                                                   "name": "External NAT"}]}],
         "labels": labels or {"gpuq-install": "t"}}
    if spot:
        b["scheduling"]["instanceTerminationAction"] = action
    if gpu:
        b["guestAccelerators"] = [{
            "acceleratorType": "zones/%s/acceleratorTypes/%s" % (zone, gpu),
            "acceleratorCount": count}]
    if env is not None:
        b["metadata"] = {"items": [{"key": "gpuq-job", "value": json.dumps(
            {"image": "img", "command": ["python"], "args": [],
             "env": env})}]}
    return b


def batch_body(env=None, spot=True, gpu="nvidia-tesla-t4", labels=None,
               **spec):
    ts = {"runnables": [{"container": {"imageUri": "us-docker.pkg.dev/p/r/t:1"},
                         "environment": {"variables": env or {}}}]}
    ts.update(spec)
    pol = {"machineType": "n1-standard-8",
           "provisioningModel": "SPOT" if spot else "STANDARD"}
    if gpu:
        pol["accelerators"] = [{"type": gpu, "count": "1"}]
    return {"taskGroups": [{"taskCount": "1", "taskSpec": ts}],
            "allocationPolicy": {"instances": [{"policy": pol}]},
            "labels": labels or {"gpuq-install": "t"}}


def vertex_body(name, env=None, strategy="SPOT", acc="NVIDIA_TESLA_T4",
                count=1, labels=None, base="gs://ckpt/runs/v/"):
    wp = {"machineSpec": {"machineType": "n1-standard-8"},
          "replicaCount": "1",
          "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/t:1",
                            "env": [{"name": k, "value": v}
                                    for k, v in (env or {}).items()]}}
    if acc:
        wp["machineSpec"].update(acceleratorType=acc, acceleratorCount=count)
    b = {"displayName": name, "labels": labels or {"gpuq-install": "t"},
         "jobSpec": {"workerPoolSpecs": [wp],
                     "scheduling": {"strategy": strategy}}}
    if base:
        b["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": base}
    return b


def env(job, **kw):
    """A simulated workload's environment (README "Simulated training"):
    120 s of work, a checkpoint every 30 s under gs://ck/jobs/JOB/."""
    e = {"FAKEGCP_WORK_SECONDS": "120", "FAKEGCP_CKPT_EVERY": "30",
         "GPUQ_JOB_ID": job, "GPUQ_ATTEMPT": "1",
         "GPUQ_CHECKPOINT_DIR": "gs://ck/jobs/%s/checkpoints/" % job}
    e.update({k: str(v) for k, v in kw.items()})
    return e
