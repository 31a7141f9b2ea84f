"""providers/gce-startup.sh, run for real: the metadata server is a local
HTTP proxy (curl and Python's urllib both honour http_proxy), and docker,
nvidia-smi and poweroff are stand-ins on PATH that record what they were
given (gcloud does nothing). No user string may become an option of docker or shell code.
"""

import http.server
import json
import os
import subprocess
import sys
import threading

from gpuqdtest import TOP_SRCDIR

SCRIPT = os.path.join(TOP_SRCDIR, "providers", "gce-startup.sh")
PREFIX = "http://metadata.google.internal/computeMetadata/v1/instance/"

DOCKER = """#!%s
import json, os, sys
with open(os.environ["FAKE_DOCKER_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:],
                        "env": {k: os.environ.get(k) for k in
                                ("A", "B", "GPUQ_MAIN_ADDR",
                                 "MASTER_ADDR", "GPUQ_NODE_RANK")}})
            + "\\n")
""" % sys.executable


class Metadata(http.server.BaseHTTPRequestHandler):
    """The metadata server, as a proxy sees requests: absolute URIs."""

    def log_message(self, *a):
        pass

    def _path(self):
        assert self.path.startswith(PREFIX), self.path
        assert self.headers.get("Metadata-Flavor") == "Google"
        return self.path[len(PREFIX):]

    def _reply(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        v = self.server.items.get(self._path())
        if v is None:
            self._reply(404)
        else:
            self._reply(200, v.encode())

    def do_POST(self):
        # Cloud Storage's media upload (the job's exit_object), as the
        # proxy sees it; the script points storage_upload here.
        n = int(self.headers.get("Content-Length") or 0)
        self.server.uploads.append({
            "path": self.path, "auth": self.headers.get("Authorization"),
            "type": self.headers.get("Content-Type"),
            "body": self.rfile.read(n).decode()})
        self._reply(200, b"{}")

    def do_PUT(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.server.items[self._path()] = self.rfile.read(n).decode()
        self._reply(200)


def run_script(tmp_path, job, items=None):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "docker").write_text(DOCKER)
    for name in ("nvidia-smi", "poweroff", "shutdown", "gcloud"):
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
    for p in bindir.iterdir():
        p.chmod(0o755)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metadata)
    srv.items = {"attributes/gpuq-job": json.dumps(job),
                 "service-accounts/default/token":
                 '{"access_token":"ya29.vm","expires_in":3599}'}
    srv.uploads = []
    srv.items.update(items or {})
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    log = tmp_path / "docker.log"
    proxy = "http://127.0.0.1:%d" % srv.server_address[1]
    env = {"PATH": "%s:/usr/bin:/bin" % bindir, "http_proxy": proxy,
           "HTTP_PROXY": proxy, "FAKE_DOCKER_LOG": str(log),
           "HOME": str(tmp_path)}
    try:
        p = subprocess.run(["bash", SCRIPT], env=env, capture_output=True,
                           text=True, timeout=60)
    finally:
        srv.shutdown()
        srv.server_close()
    calls = [json.loads(x) for x in log.read_text().splitlines()] \
        if log.exists() else []
    run_script.uploads = srv.uploads
    return p, [c for c in calls if c["argv"][:1] == ["run"]], srv.items


def test_user_strings_never_become_docker_options(tmp_path):
    job = {"image": "gcr.io/p/t:1", "command": ["--privileged"],
           "args": ["-v", "/:/host", "$(touch /tmp/pwned)"],
           "env": {"A": "x y; $(id)", "B": "--network=host"},
           "max_runtime": 0}
    p, calls, items = run_script(tmp_path, job)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(calls) == 1, (calls, p.stdout, p.stderr)
    assert calls[0]["argv"] == [
        "run", "--rm", "--name", "gpuq-job", "--gpus", "all",
        "--ipc", "host", "--log-driver=gcplogs", "--env=A", "--env=B",
        "--entrypoint=--privileged", "--", "gcr.io/p/t:1",
        "-v", "/:/host", "$(touch /tmp/pwned)"]
    # Values reach docker through its environment, untouched.
    assert calls[0]["env"]["A"] == "x y; $(id)"
    assert calls[0]["env"]["B"] == "--network=host"
    assert items["guest-attributes/gpuq/exit-code"] == "0"


def test_an_image_that_looks_like_an_option_stays_the_image(tmp_path):
    # gpuqd refuses such an image at submit; the script holds anyway.
    job = {"image": "--privileged", "max_runtime": 0}
    p, calls, items = run_script(tmp_path, job)
    assert p.returncode == 0, p.stdout + p.stderr
    argv = calls[0]["argv"]
    assert argv[-2:] == ["--", "--privileged"], argv
    assert "--privileged" not in argv[:-1]


def test_output_goes_to_cloud_logging_with_the_job_and_attempt(tmp_path):
    # gpuq logs reads the gcplogs driver's entries (doc/DESIGN.md "Logs").
    job = {"image": "gcr.io/p/t:1", "max_runtime": 0,
           "env": {"GPUQ_JOB_ID": "42", "GPUQ_ATTEMPT": "3"}}
    p, calls, items = run_script(tmp_path, job)
    assert p.returncode == 0, p.stdout + p.stderr
    argv = calls[0]["argv"]
    cut = argv.index("--")
    assert "--log-driver=gcplogs" in argv[:cut]
    assert "--label=gpuq_job=42" in argv[:cut]
    assert "--label=gpuq_attempt=3" in argv[:cut]
    assert "--log-opt=labels=gpuq_job,gpuq_attempt" in argv[:cut]


def test_a_job_id_that_is_not_digits_is_no_label(tmp_path):
    job = {"image": "gcr.io/p/t:1", "max_runtime": 0,
           "env": {"GPUQ_JOB_ID": "--privileged", "GPUQ_ATTEMPT": "1"}}
    p, calls, items = run_script(tmp_path, job)
    argv = calls[0]["argv"]
    assert not any(a.startswith("--label=gpuq_job") for a in argv), argv
    assert "--privileged" not in argv, argv


def test_exit_code_also_goes_to_the_output_place(tmp_path):
    """Guest attributes may be gone once the VM stops: the script first
    writes the same keys to the job's exit_object (DESIGN GC.6)."""
    job = {"image": "gcr.io/p/t:1", "max_runtime": 0,
           "exit_object": "gs://ckpt/runs/7/gpuq/attempt-2.exit.json",
           "storage_upload": "http://storage.test"}
    p, calls, items = run_script(tmp_path, job)
    assert p.returncode == 0, p.stdout + p.stderr
    assert items["guest-attributes/gpuq/exit-code"] == "0"
    [up] = run_script.uploads
    assert up["path"] == ("http://storage.test/upload/storage/v1/b/ckpt/o?"
                          "uploadType=media&name=runs%2F7%2Fgpuq%2F"
                          "attempt-2.exit.json"), up["path"]
    assert up["auth"] == "Bearer ya29.vm"
    assert json.loads(up["body"]) == {"exit-code": "0"}


def _gang_job(rank):
    return {"image": "gcr.io/p/t:1", "command": ["torchrun"],
            "env": {"GPUQ_NUM_NODES": "2", "GPUQ_NODE_RANK": str(rank)},
            "max_runtime": 0}


def test_a_gang_node_gets_the_main_address_from_metadata(tmp_path):
    p, calls, _ = run_script(tmp_path, _gang_job(1), {
        "attributes/gpuq-main-addr": "10.128.0.7",
        "network-interfaces/0/ip": "10.128.0.9"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "--network=host" in calls[0]["argv"]
    assert calls[0]["env"]["GPUQ_MAIN_ADDR"] == "10.128.0.7"
    assert calls[0]["env"]["MASTER_ADDR"] == "10.128.0.7"
    assert calls[0]["env"]["GPUQ_NODE_RANK"] == "1"


def test_the_main_node_of_a_gang_is_its_own_main_address(tmp_path):
    p, calls, _ = run_script(tmp_path, _gang_job(0), {
        "network-interfaces/0/ip": "10.128.0.9"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert calls[0]["env"]["MASTER_ADDR"] == "10.128.0.9"
    assert calls[0]["env"]["GPUQ_MAIN_ADDR"] == "10.128.0.9"


def test_a_single_machine_job_keeps_its_own_network(tmp_path):
    p, calls, _ = run_script(tmp_path, {"image": "i", "max_runtime": 0})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "--network=host" not in calls[0]["argv"]
    assert calls[0]["env"]["MASTER_ADDR"] is None
