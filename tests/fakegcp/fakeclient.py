"""Helpers for tests and the demo: start/stop the fake cloud, talk to its
control API, make service-account keys and tokens.

    from fakeclient import FakeGCP, make_service_account_key
    fake = FakeGCP.start(tmpdir, speed=60)
    keyfile = make_service_account_key(fake, tmpdir + "/sa.json")
    fake.ctl("/_fake/quota", {"region": "us-central1",
                              "metric": "NVIDIA_T4_GPUS", "limit": 4})
    fake.stop()
"""
import base64
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"


class FakeGCP:
    def __init__(self, proc, url, state_dir):
        self.proc = proc
        self.url = url
        self.state_dir = state_dir

    @classmethod
    def start(cls, state_dir, speed=1.0, project="gpuq-demo", extra=(),
              origin=None):
        """ORIGIN (real epoch seconds): share the clock with a gpuqd whose
        [daemon] clock_origin is the same (doc/DESIGN.md "Simulated
        time")."""
        os.makedirs(state_dir, exist_ok=True)
        if origin is not None:
            extra = ["--clock-origin", repr(float(origin))] + list(extra)
        proc = subprocess.Popen(
            [PYTHON, os.path.join(HERE, "fakegcp.py"), "--port", "0",
             "--state-dir", state_dir, "--speed", str(speed),
             "--project", project] + list(extra),
            stdout=subprocess.PIPE, stderr=open(
                os.path.join(state_dir, "fakegcp.stderr"), "ab"))
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            proc.kill()
            raise RuntimeError("fakegcp did not start: %r" % line)
        return cls(proc, line, state_dir)

    def ctl(self, path, body=None, method=None):
        """Call the control API; returns parsed JSON (raises on HTTP error)."""
        if not path.startswith("/"):
            path = "/_fake/" + path
        data = None if body is None else json.dumps(body).encode()
        method = method or ("POST" if body is not None else "GET")
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"{}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode


def _b64url(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def make_service_account_key(fake, path, email=None, project="gpuq-demo",
                             register=True, private_pem=None):
    """Generate an RSA-2048 key with openssl (or use ``private_pem``),
    register its public half with the fake, and write a Google
    service-account key file (mode 0600)."""
    email = email or "gpuq-test@%s.iam.gserviceaccount.com" % project
    priv = private_pem or subprocess.run(
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
         "rsa_keygen_bits:2048"], check=True, capture_output=True).stdout
    pub = subprocess.run(["openssl", "pkey", "-pubout"], input=priv,
                         check=True, capture_output=True).stdout
    if register:
        fake.ctl("/_fake/service_account", {"client_email": email,
                                            "public_key_pem": pub.decode()})
    key = {
        "type": "service_account", "project_id": project,
        "private_key_id": os.urandom(20).hex(),
        "private_key": priv.decode(), "client_email": email,
        "client_id": str(int.from_bytes(os.urandom(8), "big")),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": fake.url + "/token",
        "auth_provider_x509_cert_url":
            "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/"
                                "metadata/x509/" + email.replace("@", "%40"),
        "universe_domain": "googleapis.com",
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(key, f, indent=2)
    os.chmod(path, 0o600)
    return path


def sign_jwt(keyfile, claims=None, header=None, tmpdir=None):
    """An RS256 JWT assertion signed with the key file's private key
    (openssl dgst), with Google's default claims unless overridden."""
    with open(keyfile) as f:
        key = json.load(f)
    now = int(time.time())
    c = {"iss": key["client_email"],
         "scope": "https://www.googleapis.com/auth/cloud-platform",
         "aud": key["token_uri"], "iat": now, "exp": now + 3600}
    c.update(claims or {})
    h = {"alg": "RS256", "typ": "JWT", "kid": key["private_key_id"]}
    h.update(header or {})
    signing = _b64url(json.dumps(h).encode()) + "." + \
        _b64url(json.dumps(c).encode())
    kp = os.path.join(tmpdir or os.path.dirname(os.path.abspath(keyfile)),
                      ".jwt-key-%d.pem" % os.getpid())
    fd = os.open(kp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key["private_key"])
    try:
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", kp],
                             input=signing.encode(), check=True,
                             capture_output=True).stdout
    finally:
        os.unlink(kp)
    return signing + "." + _b64url(sig)


def get_token(fake, keyfile, **claims):
    """Exchange a signed JWT for an access token; returns the reply JSON."""
    a = sign_jwt(keyfile, claims)
    data = urllib.parse.urlencode({
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "assertion": a}).encode()
    with urllib.request.urlopen(urllib.request.Request(
            fake.url + "/token", data=data), timeout=30) as r:
        return json.loads(r.read())


import urllib.parse  # noqa: E402  (used by get_token)

if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "/tmp/fakegcp-demo"
    fk = FakeGCP.start(d)
    print(fk.url)
    fk.stop()
