"""Token endpoint, metadata server and bearer checks (DESIGN GH)."""
import time
import urllib.parse

from fakegcp_fixtures import CP
from fakeclient import make_service_account_key, sign_jwt

JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def token_call(gcp, **form):
    return gcp.call("POST", "/token", token=False,
                    raw=urllib.parse.urlencode(form).encode(),
                    headers={"Content-Type":
                             "application/x-www-form-urlencoded"})


def test_jwt_grant_ok_and_use(gcp):
    st, body, _ = token_call(gcp, grant_type=JWT_GRANT,
                             assertion=sign_jwt(gcp.keyfile))
    assert st == 200
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["access_token"].startswith("ya29.fake-")
    st, p, _ = gcp.get(CP, token=body["access_token"])
    assert st == 200 and p["name"] == "gpuq-demo"


def test_jwt_google_audience_accepted(gcp):
    a = sign_jwt(gcp.keyfile, {"aud": "https://oauth2.googleapis.com/token"})
    assert token_call(gcp, grant_type=JWT_GRANT, assertion=a)[0] == 200


def test_jwt_bad_signature(gcp, tmp_path):
    other = make_service_account_key(gcp.fake, str(tmp_path / "o.json"),
                                     email="x@p.iam.gserviceaccount.com",
                                     register=False)
    # signed with an unregistered key but claiming the registered account
    import json
    a = sign_jwt(other, {"iss": json.load(open(gcp.keyfile))["client_email"]})
    st, body, _ = token_call(gcp, grant_type=JWT_GRANT, assertion=a)
    assert st == 400 and body["error"] == "invalid_grant"
    assert "Signature" in body["error_description"]
    # tampered payload
    h, c, s = sign_jwt(gcp.keyfile).split(".")
    st, body, _ = token_call(gcp, grant_type=JWT_GRANT,
                             assertion=h + "." + c[:-2] + "AA." + s)
    assert st == 400 and body["error"] == "invalid_grant"


def test_jwt_wrong_aud_expired_scope_unknown(gcp, tmp_path):
    now = int(time.time())
    for claims, err in [({"aud": "https://example.com/token"}, "invalid_grant"),
                        ({"iat": now - 7200, "exp": now - 3600},
                         "invalid_grant"),
                        ({"iat": now, "exp": now + 7200}, "invalid_grant"),
                        ({"scope": "https://www.googleapis.com/auth/x"},
                         "invalid_scope")]:
        st, body, _ = token_call(gcp, grant_type=JWT_GRANT,
                                 assertion=sign_jwt(gcp.keyfile, claims))
        assert st == 400 and body["error"] == err, (claims, body)
    un = make_service_account_key(gcp.fake, str(tmp_path / "u.json"),
                                  email="nobody@p.iam.gserviceaccount.com",
                                  register=False)
    st, body, _ = token_call(gcp, grant_type=JWT_GRANT,
                             assertion=sign_jwt(un))
    assert st == 400 and body["error"] == "invalid_grant"
    st, body, _ = token_call(gcp, grant_type="password")
    assert st == 400 and body["error"] == "unsupported_grant_type"


def test_refresh_grant(gcp):
    gcp.ctl("/_fake/authorized_user", {"client_id": "cid",
                                       "client_secret": "sec",
                                       "refresh_token": "1//rt"})
    st, body, _ = token_call(gcp, grant_type="refresh_token",
                             client_id="cid", client_secret="sec",
                             refresh_token="1//rt")
    assert st == 200 and body["access_token"].startswith("ya29.")
    st, body, _ = token_call(gcp, grant_type="refresh_token",
                             client_id="cid", client_secret="sec",
                             refresh_token="wrong")
    assert st == 400 and body["error"] == "invalid_grant"
    st, body, _ = token_call(gcp, grant_type="refresh_token",
                             client_id="cid", client_secret="bad",
                             refresh_token="1//rt")
    assert st == 401 and body["error"] == "invalid_client"


def test_metadata_server(gcp):
    p = "/computeMetadata/v1/instance/service-accounts/default/token"
    st, _, _ = gcp.get(p, token=False)
    assert st == 403
    st, body, h = gcp.get(p, token=False,
                          headers={"Metadata-Flavor": "Google"})
    assert st == 200 and h["Metadata-Flavor"] == "Google"
    assert gcp.get(CP, token=body["access_token"])[0] == 200
    st, body, _ = gcp.get("/computeMetadata/v1/project/project-id",
                          token=False, headers={"Metadata-Flavor": "Google"})
    assert st == 200 and body == b"gpuq-demo"


def test_missing_invalid_expired_revoked(gcp):
    st, body, h = gcp.get(CP, token=False)
    assert st == 401 and body["error"]["status"] == "UNAUTHENTICATED"
    assert body["error"]["errors"][0]["reason"] == "required"
    assert "missing required authentication" in body["error"]["message"]
    st, body, _ = gcp.get(CP, token="ya29.bogus")
    assert st == 401 and body["error"]["errors"][0]["reason"] == "authError"
    # Batch/Vertex style errors carry details[] instead of errors[]
    st, body, _ = gcp.get("/v1/projects/gpuq-demo/locations/us-central1/jobs",
                          token=False)
    assert st == 401 and body["error"]["status"] == "UNAUTHENTICATED"
    gcp.ctl("/_fake/token_lifetime", {"seconds": 1})
    st, body, _ = token_call(gcp, grant_type=JWT_GRANT,
                             assertion=sign_jwt(gcp.keyfile))
    assert body["expires_in"] == 1
    short = body["access_token"]
    assert gcp.get(CP, token=short)[0] == 200
    time.sleep(1.2)
    assert gcp.get(CP, token=short)[0] == 401
    assert gcp.get(CP)[0] == 200
    assert gcp.ctl("/_fake/revoke_tokens", {})["revoked"] >= 1
    assert gcp.get(CP)[0] == 401


def test_cli_pubkey_option(tmp_path):
    import subprocess
    from fakeclient import FakeGCP, get_token
    priv = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA",
                           "-pkeyopt", "rsa_keygen_bits:2048"],
                          capture_output=True, check=True).stdout
    pub = subprocess.run(["openssl", "pkey", "-pubout"], input=priv,
                         capture_output=True, check=True).stdout
    (tmp_path / "pub.pem").write_bytes(pub)
    f = FakeGCP.start(str(tmp_path / "s"), extra=[
        "--service-account-pubkey", "cli@p.iam.gserviceaccount.com=%s" %
        (tmp_path / "pub.pem")])
    try:
        import json
        kf = tmp_path / "k.json"
        kf.write_text(json.dumps({
            "client_email": "cli@p.iam.gserviceaccount.com",
            "private_key": priv.decode(), "private_key_id": "k",
            "token_uri": f.url + "/token"}))
        assert get_token(f, str(kf))["access_token"]
    finally:
        assert f.stop() == 0
