"""Google's OAuth 2.0 token endpoint and the metadata server (DESIGN GH.3, H.5): POST /token as https://oauth2.googleapis.com/token answers it
(JWT-bearer grant for service accounts, checked by fakegcp_jwt.py, and
the refresh_token grant for authorized users), GET /computeMetadata/v1/...
as the GCE metadata server answers it (default service account's token,
project-id, zone; no discovery document: cloud.google.com/compute/docs/
metadata), and the Bearer check every other API makes.
"""
import secrets
import time
import urllib.parse

import fakegcp_jwt as jwt
from fakegcp_errors import HTML_404, ApiError, OAuthError

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token"
METADATA = "/computeMetadata/v1/"
JSON_TYPE = "application/json; charset=UTF-8"


def check_bearer(fake, authorization):
    """Raise Google's 401 unless ``authorization`` (the header's value)
    carries a live token this fake issued."""
    h = authorization or ""
    if not h:
        raise ApiError(401, "Request is missing required authentication "
                       "credential. Expected OAuth 2 access token, login "
                       "cookie or other valid authentication credential. "
                       "See https://developers.google.com/identity/sign-"
                       "in/web/devconsole-project.", "required",
                       headers={"WWW-Authenticate":
                                'Bearer realm="https://accounts.google.'
                                'com/"'})
    tok = h[7:].strip() if h[:7].lower() == "bearer " else ""
    with fake.lock:
        exp = fake.tokens.get(tok)
    if exp is None or exp <= time.time():
        raise ApiError(401, "Request had invalid authentication "
                       "credentials. Expected OAuth 2 access token, login "
                       "cookie or other valid authentication credential. "
                       "See https://developers.google.com/identity/sign-"
                       "in/web/devconsole-project.", "authError",
                       headers={"WWW-Authenticate":
                                'Bearer realm="https://accounts.google.'
                                'com/", error="invalid_token"'})


def issue(fake):
    """A new access token, good for fake.token_lifetime real seconds."""
    tok = "ya29.fake-" + secrets.token_urlsafe(32)
    with fake.lock:
        fake.tokens[tok] = time.time() + fake.token_lifetime
        life = fake.token_lifetime
    return {"access_token": tok, "expires_in": life,
            "token_type": "Bearer"}


def token(fake, body, host, server_url):
    """The reply to POST /token with form ``body``; ``host`` is the
    request's Host header and ``server_url`` the fake's base URL (both
    accepted as the JWT's audience).  Raises OAuthError."""
    form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
    form = {k: v[-1] for k, v in form.items()}
    gt = form.get("grant_type")
    if gt == "urn:ietf:params:oauth:grant-type:jwt-bearer":
        base = "http://%s" % (host or "")
        with fake.lock:
            keys = dict(fake.sa_keys)
        try:
            jwt.verify_assertion(
                form.get("assertion", ""), keys,
                [base + "/token", GOOGLE_TOKEN_URL, server_url + "/token"],
                time.time(), CLOUD_PLATFORM)
        except jwt.JwtError as e:
            raise OAuthError(400, e.error, e.description)
        return issue(fake)
    if gt == "refresh_token":
        with fake.lock:
            u = fake.users.get(form.get("client_id"))
        if u is None or u[0] != form.get("client_secret"):
            raise OAuthError(401, "invalid_client",
                             "The OAuth client was not found.")
        if u[1] != form.get("refresh_token"):
            raise OAuthError(400, "invalid_grant",
                             "Token has been expired or revoked.")
        out = issue(fake)
        out["scope"] = CLOUD_PLATFORM
        return out
    raise OAuthError(400, "unsupported_grant_type",
                     "Invalid grant_type: %s" % (gt or ""))


def metadata(fake, path, flavor):
    """The metadata server's reply to GET ``path`` (under METADATA) whose
    Metadata-Flavor header is ``flavor``: (status, body, content type,
    headers)."""
    hdrs = {"Metadata-Flavor": "Google"}
    if flavor != "Google":
        return (403, b"Missing Metadata-Flavor:Google header.\n",
                "text/html; charset=UTF-8", hdrs)
    if path == METADATA + "instance/service-accounts/default/token":
        return 200, issue(fake), JSON_TYPE, hdrs
    if path == METADATA + "project/project-id":
        return (200, fake.default_project.encode(), "application/text",
                hdrs)
    if path == METADATA + "instance/zone":
        return (200, ("projects/%s/zones/us-central1-a" %
                      fake.project_number(fake.default_project)).encode(),
                "application/text", hdrs)
    return 404, HTML_404, "text/html; charset=UTF-8", hdrs
