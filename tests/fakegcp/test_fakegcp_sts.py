"""Security Token Service and IAM Credentials generateAccessToken
(fakegcp_sts.py, DESIGN GH.7)."""
import urllib.parse

from fakegcp_fixtures import CP

AUD = ("//iam.googleapis.com/projects/123456789012/locations/global/"
       "workloadIdentityPools/ci/providers/gha")
SA = "trainer@gpuq-demo.iam.gserviceaccount.com"
IMP = "/v1/projects/-/serviceAccounts/%s:generateAccessToken" % SA


def sts(gcp, **over):
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "audience": AUD,
            "scope": "https://www.googleapis.com/auth/cloud-platform",
            "requested_token_type":
            "urn:ietf:params:oauth:token-type:access_token",
            "subject_token": "eyJ.subject.tok",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt"}
    form.update(over)
    return gcp.call("POST", "/v1/token", token=False,
                    raw=urllib.parse.urlencode(form).encode(),
                    headers={"Content-Type":
                             "application/x-www-form-urlencoded"})


def test_sts_exchange_then_impersonate(gcp):
    st, body, _ = sts(gcp)
    assert st == 400 and body["error"] == "invalid_grant"
    gcp.ctl("/_fake/workload_identity", {"audience": AUD,
                                         "subject_token": "eyJ.subject.tok"})
    assert gcp.ctl("/_fake/subject_token") == {
        "access_token": "eyJ.subject.tok"}
    st, body, _ = sts(gcp)
    assert st == 200, body
    assert body["issued_token_type"] == \
        "urn:ietf:params:oauth:token-type:access_token"
    fed = body["access_token"]
    assert gcp.get(CP, token=fed)[0] == 200
    assert sts(gcp, audience="//iam.googleapis.com/nope")[1]["error"] == \
        "invalid_request"
    assert sts(gcp, grant_type="x")[1]["error"] == "unsupported_grant_type"
    # impersonation: only of an account the caller may act as
    body = {"scope": ["https://www.googleapis.com/auth/cloud-platform"],
            "lifetime": "3600s"}
    st, err, _ = gcp.post(IMP, body, token=fed)
    assert st == 403 and err["error"]["status"] == "PERMISSION_DENIED"
    gcp.ctl("/_fake/impersonable", {"email": SA})
    st, tok, _ = gcp.post(IMP, body, token=fed)
    assert st == 200 and set(tok) == {"accessToken", "expireTime"}
    assert tok["expireTime"].endswith("Z")
    assert gcp.get(CP, token=tok["accessToken"])[0] == 200
    assert gcp.post(IMP, body, token=False)[0] == 401
    assert gcp.post(IMP, {"scope": ["x"], "bogus": 1}, token=fed)[0] == 400
