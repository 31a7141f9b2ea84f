"""Security Token Service and IAM Service Account Credentials: the two
calls behind Google's impersonated_service_account and external_account
(workload identity federation) credentials (DESIGN GH.7).

* POST /v1/token as https://sts.googleapis.com/v1/token answers it: the
  OAuth 2.0 token exchange (RFC 8693) of a subject token from a workload
  identity pool provider for a federated access token, form-encoded,
  with OAuth's error shape.
* POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken as
  https://iamcredentials.googleapis.com answers it (iamcredentials v1
  discovery document: GenerateAccessTokenRequest {delegates, lifetime,
  scope}, GenerateAccessTokenResponse {accessToken, expireTime}),
  authorized by the caller's bearer token.

The control API registers what they accept: POST /_fake/workload_identity
{"audience", "subject_token"} (a provider and a subject token it trusts),
POST /_fake/impersonable {"email"} (a service account callers may get
tokens for), and GET /_fake/subject_token serves the token last
registered as {"access_token": ...}, for url-sourced credentials.
"""
import json
import re
import time
import urllib.parse

import fakegcp_oauth as oauth
from fakegcp_errors import ApiError, OAuthError

GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
SUBJECT_TYPES = ("urn:ietf:params:oauth:token-type:jwt",
                 "urn:ietf:params:oauth:token-type:id_token",
                 "urn:ietf:params:aws:token-type:aws4_request",
                 "urn:ietf:params:oauth:token-type:saml2")
AUDIENCE = re.compile(r"^//iam\.googleapis\.com/projects/[0-9]+/locations/"
                      r"global/workloadIdentityPools/[a-z0-9-]+/providers/"
                      r"[a-z0-9-]+$")


def state(fake):
    """The fake's workload identity registry, made on first use."""
    if not hasattr(fake, "wif"):
        fake.wif = {}               # audience -> set of subject tokens
        fake.impersonable = set()   # service account emails
        fake.subject_served = ""
    return fake


def sts_token(fake, body):
    """The reply to POST /v1/token with form ``body``.  Raises
    OAuthError, as STS does (error, error_description)."""
    form = {k: v[-1] for k, v in urllib.parse.parse_qs(
        body.decode("utf-8", "replace")).items()}
    if form.get("grant_type") != GRANT:
        raise OAuthError(400, "unsupported_grant_type",
                         "Invalid grant_type: %s" % form.get("grant_type"))
    if form.get("requested_token_type") != ACCESS:
        raise OAuthError(400, "invalid_request",
                         "Invalid requested_token_type.")
    if form.get("subject_token_type") not in SUBJECT_TYPES:
        raise OAuthError(400, "invalid_request",
                         "Invalid subject_token_type.")
    if oauth.CLOUD_PLATFORM not in (form.get("scope") or "").split():
        raise OAuthError(400, "invalid_scope", "Invalid scope.")
    aud = form.get("audience") or ""
    if not AUDIENCE.match(aud):
        raise OAuthError(400, "invalid_request", "Invalid audience: %s"
                         % aud)
    with fake.lock:
        ok = form.get("subject_token") in state(fake).wif.get(aud, ())
    if not ok:
        raise OAuthError(400, "invalid_grant", "The provided subject token "
                         "is not trusted by the workload identity pool "
                         "provider.")
    out = oauth.issue(fake)
    return {"access_token": out["access_token"],
            "issued_token_type": ACCESS, "token_type": "Bearer",
            "expires_in": out["expires_in"]}


def generate_access_token(fake, req):
    """iamcredentials.projects.serviceAccounts.generateAccessToken."""
    try:
        body = json.loads(req.raw.decode("utf-8")) if req.raw.strip() else {}
    except ValueError as e:
        raise ApiError(400, "Invalid JSON payload received. %s" % e)
    for k in body:
        if k not in ("delegates", "lifetime", "scope"):
            raise ApiError(400, "Invalid JSON payload received. Unknown "
                           "name \"%s\": Cannot find field." % k)
    if not body.get("scope"):
        raise ApiError(400, "Scope required.")
    life = body.get("lifetime") or "3600s"
    m = re.match(r"^([0-9]+)s$", life)
    if not m or not 0 < int(m.group(1)) <= 3600:
        raise ApiError(400, "The lifetime must be between 1s and 3600s.")
    email = urllib.parse.unquote(req.params["sa"])
    if req.params["project"] != "-" or email not in \
            state(fake).impersonable:
        raise ApiError(403, "Permission 'iam.serviceAccounts."
                       "getAccessToken' denied on resource (or it may not "
                       "exist).", status="PERMISSION_DENIED")
    tok = oauth.issue(fake)
    return {"accessToken": tok["access_token"],
            "expireTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(
                time.time() + min(int(m.group(1)), tok["expires_in"])))}


def control(fake, ep, method, body):
    """The control API's workload identity endpoints, or None."""
    st = state(fake)
    if ep == "workload_identity" and method == "POST":
        st.wif.setdefault(body["audience"], set()).add(body["subject_token"])
        st.subject_served = body["subject_token"]
        return {"ok": True}
    if ep == "impersonable" and method == "POST":
        st.impersonable.add(body["email"])
        return {"ok": True}
    if ep == "subject_token" and method == "GET":
        return {"access_token": st.subject_served}
    return None


def routes(fake):
    """IAM Credentials' row of the route table (fakegcp_server.py)."""
    return [
        ("POST", r"/v1/projects/(?P<project>[^/]+)/serviceAccounts/"
         r"(?P<sa>[^/:]+):generateAccessToken", "iamcredentials",
         "iamcredentials.projects.serviceAccounts.generateAccessToken",
         lambda req: generate_access_token(fake, req)),
    ]
