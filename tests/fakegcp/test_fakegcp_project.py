"""The project setup of the fake (fakegcp_project.py, fakegcp_iam.py,
fakegcp_serviceusage.py): what gpuq doctor asks, and what each create
call checks about the network, the account and the key."""
from fakegcp_fixtures import (batch_body, gcp, fake, instance_body,  # noqa
                              rsa_key, vertex_body)

P = "/compute/v1/projects/gpuq-demo"
SA = "trainer@gpuq-demo.iam.gserviceaccount.com"
SUB = "projects/host/regions/us-central1/subnetworks/ml"


def test_service_usage_states(gcp):
    gcp.ctl("/_fake/config", {"disabled_services": ["batch.googleapis.com"]})
    st, b, _ = gcp.get("/v1/projects/gpuq-demo/services/"
                       "compute.googleapis.com")
    assert st == 200 and b["state"] == "ENABLED"
    assert b["name"].endswith("/services/compute.googleapis.com")
    st, b, _ = gcp.get("/v1/projects/gpuq-demo/services/batch.googleapis.com")
    assert st == 200 and b["state"] == "DISABLED"
    st, b, _ = gcp.get("/v1/projects/gpuq-demo/services:batchGet?names="
                       "projects/gpuq-demo/services/batch.googleapis.com")
    assert [s["state"] for s in b["services"]] == ["DISABLED"]


def test_project_and_permissions(gcp):
    st, b, _ = gcp.get("/v3/projects/gpuq-demo")
    assert st == 200 and b["state"] == "ACTIVE"
    assert b["projectId"] == "gpuq-demo" and b["name"].startswith("projects/")
    gcp.ctl("/_fake/config", {"denied_permissions": ["batch.jobs.create"]})
    st, b, _ = gcp.post("/v3/projects/gpuq-demo:testIamPermissions",
                        {"permissions": ["batch.jobs.create",
                                         "batch.jobs.get"]})
    assert st == 200 and b == {"permissions": ["batch.jobs.get"]}
    st, b, _ = gcp.post("/v3/projects/gpuq-demo:testIamPermissions",
                        {"permissions": ["storage.*"]})
    assert st == 400
    gcp.ctl("/_fake/config", {"project_denied": True})
    st, b, _ = gcp.get("/v3/projects/gpuq-demo")
    assert st == 403 and b["error"]["status"] == "PERMISSION_DENIED"


def test_service_accounts(gcp):
    st, b, _ = gcp.get("/v1/projects/-/serviceAccounts/" + SA)
    assert st == 404
    gcp.ctl("/_fake/config", {"service_accounts": [SA],
                              "act_as_denied": [SA]})
    st, b, _ = gcp.get("/v1/projects/-/serviceAccounts/" + SA)
    assert st == 200 and b["email"] == SA and "disabled" not in b
    st, b, _ = gcp.post("/v1/projects/-/serviceAccounts/%s:"
                        "testIamPermissions" % SA,
                        {"permissions": ["iam.serviceAccounts.actAs"]})
    assert st == 200 and b == {}
    gcp.ctl("/_fake/config", {"act_as_denied": []})
    st, b, _ = gcp.post("/v1/projects/-/serviceAccounts/%s:"
                        "testIamPermissions" % SA,
                        {"permissions": ["iam.serviceAccounts.actAs"]})
    assert b == {"permissions": ["iam.serviceAccounts.actAs"]}


def test_networks_and_buckets(gcp):
    st, b, _ = gcp.get(P + "/global/networks/default")
    assert st == 200 and b["autoCreateSubnetworks"] is True
    assert st == 200 and gcp.get(P + "/global/networks/ml")[0] == 404
    gcp.ctl("/_fake/config", {"networks": {"ml": {"us-central1": "ml"}}})
    st, b, _ = gcp.get(P + "/global/networks/ml")
    assert st == 200 and b["subnetworks"][0].endswith(
        "/regions/us-central1/subnetworks/ml")
    assert gcp.get(P + "/regions/us-central1/subnetworks/ml")[0] == 200
    assert gcp.get(P + "/regions/us-east1/subnetworks/ml")[0] == 404
    st, b, _ = gcp.get("/storage/v1/b/ck")
    assert st == 200 and b["name"] == "ck"
    gcp.ctl("/_fake/config", {"bucket_denied_permissions":
                              ["storage.objects.create"],
                              "missing_buckets": ["gone"]})
    st, b, _ = gcp.get("/storage/v1/b/ck/iam/testPermissions?permissions="
                       "storage.objects.list&permissions=storage.objects."
                       "create")
    assert st == 200 and b["permissions"] == ["storage.objects.list"]
    assert b["kind"] == "storage#testIamPermissionsResponse"
    assert gcp.get("/storage/v1/b/gone")[0] == 404


def test_compute_insert_checks_setup(gcp):
    gcp.ctl("/_fake/config", {"networks": {"ml": {"us-central1": "ml"}},
                              "service_accounts": [SA]})
    b = instance_body("vm-a")
    b["networkInterfaces"] = [{"network": "projects/host/global/networks/ml",
                               "subnetwork": SUB}]
    b["serviceAccounts"] = [{"email": SA, "scopes": [
        "https://www.googleapis.com/auth/cloud-platform"]}]
    st, r, _ = gcp.post(P + "/zones/us-central1-a/instances", b)
    assert st == 200, r
    got = gcp.ctl("/_fake/create_bodies?service=compute")["bodies"]
    assert got[-1]["body"]["networkInterfaces"][0]["subnetwork"] == SUB
    b = instance_body("vm-b")
    b["networkInterfaces"][0]["network"] = "global/networks/nope"
    st, r, _ = gcp.post(P + "/zones/us-central1-a/instances", b)
    assert st == 404 and "nope" in r["error"]["message"]
    b = instance_body("vm-c")
    b["serviceAccounts"] = [{"email": "x@gpuq-demo.iam.gserviceaccount.com"}]
    assert gcp.post(P + "/zones/us-central1-a/instances", b)[0] == 400
    gcp.ctl("/_fake/config", {"forbid_external_ip": True})
    st, r, _ = gcp.post(P + "/zones/us-central1-a/instances",
                        instance_body("vm-d"))
    assert st == 412 and "vmExternalIpAccess" in r["error"]["message"]


def test_batch_and_vertex_check_setup(gcp):
    gcp.ctl("/_fake/config", {"service_accounts": [SA],
                              "act_as_denied": [SA]})
    b = batch_body()
    b["allocationPolicy"]["serviceAccount"] = {"email": SA}
    st, r, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/jobs"
                        "?jobId=j1", b)
    assert st == 403 and "iam.serviceAccountUser" in r["error"]["message"]
    v = vertex_body("v1")
    v["encryptionSpec"] = {"kmsKeyName": "not-a-key"}
    st, r, _ = gcp.post("/v1/projects/gpuq-demo/locations/us-central1/"
                        "customJobs", v)
    assert st == 400


def test_a_disabled_api_answers_service_disabled(gcp):
    gcp.ctl("/_fake/config", {"disabled_services": ["batch.googleapis.com"]})
    st, b, _ = gcp.get("/v1/projects/gpuq-demo/locations/us-central1/jobs")
    assert st == 403 and b["error"]["status"] == "PERMISSION_DENIED"
    assert b["error"]["details"][0]["reason"] == "SERVICE_DISABLED"
    assert "batch.googleapis.com API has not been used" in \
        b["error"]["message"]
    # the others still answer
    assert gcp.get("/v1/projects/gpuq-demo/locations/us-central1/"
                   "customJobs")[0] == 200
