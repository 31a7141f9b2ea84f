#!/bin/bash
# gce-startup.sh: the startup script of every Compute Engine VM gpuq makes
# (providers/gce.c embeds this file at build time; it is the only copy).
#
# It runs the job in the instance metadata key gpuq-job, a JSON object
#   {"image": "...", "command": [...], "args": [...], "env": {...},
#    "max_runtime": seconds (0: none)}
# as `docker run --rm --gpus all -- IMAGE [COMMAND ARGS]`, its output sent to
# Cloud Logging by docker's gcplogs driver (gpuq logs), reports how it went
# as guest attributes in the namespace gpuq, and powers the VM off:
#   gpuq/exit-code  the container's exit status (docker's 125-127 when the
#                   container could not start at all)
#   gpuq/limit      "max_runtime" when the container was stopped for
#                   running too long
#   gpuq/error      why the job could not be run at all (no GPU driver,
#                   no docker, no gpuq-job)
# gpuqd reads them with instances.getGuestAttributes once the VM has
# stopped (enable-guest-attributes is set in the metadata). Guest
# attributes may not be readable after the VM stops, so the same keys go
# first, as a JSON object, to the job's output place: the Cloud Storage
# object "exit_object" of gpuq-job ("gs://b/p/gpuq/attempt-2.exit.json"),
# written with the VM's service account. Either is authoritative.
#
# User strings are never shell code: python3 (on every Deep Learning VM
# image) parses the JSON and starts docker with an argument vector, and
# hands the job's environment to docker through its own environment
# (`--env=NAME` without a value), so values may hold any character.
# Every option is written as one word (--entrypoint=X) and "--" comes
# before the image, so no user string can become an option of docker.
#
# A node of a gang (GPUQ_NUM_NODES above 1 in the job's env; doc/DESIGN.md
# "Gangs") gets GPUQ_MAIN_ADDR and MASTER_ADDR: the metadata key
# gpuq-main-addr, which gpuqd sets on every node but the main one, or,
# on the main node (rank 0), its own internal address from the metadata
# server. Its container shares the VM's network (--network=host), so the
# other nodes reach it at that address.
#
# Compute Engine runs startup scripts at every boot. A job runs once: if
# gpuq/exit-code is already set, the VM just powers off again.
set -u

MD=http://metadata.google.internal/computeMetadata/v1/instance

md_get() {
	curl -sf --retry 3 -H 'Metadata-Flavor: Google' "$MD/$1"
}

power_off() {
	sync
	poweroff || shutdown -h now
	exit 0
}

if md_get guest-attributes/gpuq/exit-code >/dev/null 2>&1; then
	echo "gpuq: the job has already run on this VM; powering off"
	power_off
fi

python3 - <<'PY'
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

MD = "http://metadata.google.internal/computeMetadata/v1/instance/"
HDR = {"Metadata-Flavor": "Google"}
NAME = "gpuq-job"
DRIVER_WAIT = 1200      # seconds to wait for a working NVIDIA driver


def log(msg):
    print("gpuq: " + msg, flush=True)


def md_get(path):
    req = urllib.request.Request(MD + path, headers=HDR)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


def report(key, value):
    """Set guest attribute gpuq/KEY; retried, as the VM stops after."""
    url = MD + "guest-attributes/gpuq/" + key
    for _ in range(30):
        try:
            req = urllib.request.Request(url, data=str(value).encode(),
                                         headers=HDR, method="PUT")
            urllib.request.urlopen(req, timeout=10).close()
            return
        except OSError as e:
            log("cannot set gpuq/%s yet: %s" % (key, e))
            time.sleep(2)


JOB = {}


def record(fields):
    """Write FIELDS (the guest attributes' keys) to the job's exit_object
    before the VM stops; retried, and never fatal."""
    uri = JOB.get("exit_object") if isinstance(JOB, dict) else None
    if not isinstance(uri, str) or not uri.startswith("gs://"):
        return
    bucket, _, name = uri[5:].partition("/")
    base = JOB.get("storage_upload") or "https://storage.googleapis.com"
    url = "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (
        base, urllib.parse.quote(bucket, safe=""),
        urllib.parse.quote(name, safe=""))
    data = json.dumps(fields).encode()
    for _ in range(5):
        try:
            tok = json.loads(md_get("service-accounts/default/token"))
            req = urllib.request.Request(url, data=data, method="POST",
                                         headers={
                "Authorization": "Bearer " + tok["access_token"],
                "Content-Type": "application/json"})
            urllib.request.urlopen(req, timeout=20).close()
            return
        except (OSError, ValueError, KeyError) as e:
            log("cannot write %s yet: %s" % (uri, e))
            time.sleep(2)


def fail(msg):
    log(msg)
    record({"error": msg})
    report("error", msg)
    sys.exit(0)


def driver_ready():
    """True once nvidia-smi answers (the driver may still be installing
    on first boot: install-nvidia-driver is set in the metadata)."""
    deadline = time.time() + DRIVER_WAIT
    while time.time() < deadline:
        if shutil.which("nvidia-smi") and subprocess.run(
                ["nvidia-smi"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return True
        time.sleep(10)
    return False


def registry_login(image):
    """Let docker pull from Artifact Registry / Container Registry with
    the VM's service account."""
    host = image.split("/", 1)[0]
    if "." not in host:
        return
    if host.endswith(("-docker.pkg.dev", "gcr.io")) and \
            shutil.which("gcloud"):
        subprocess.run(["gcloud", "auth", "configure-docker", host,
                        "--quiet"], stdout=subprocess.DEVNULL)


def log_options(env):
    """docker options that send the container's output to Cloud Logging
    (doc/DESIGN.md "Logs"; DESIGN GJ.7): the gcplogs driver writes each
    line to the log gcplogs-docker-driver under the VM's gce_instance
    resource, which is how gpuqd finds it (one VM runs one attempt);
    the job and attempt, as container labels the driver copies into
    jsonPayload.container.metadata, are for people reading the Console.
    Only digits are passed, so nothing here can be a docker option."""
    opts = ["--log-driver=gcplogs"]
    keys = []
    for key, var in (("gpuq_job", "GPUQ_JOB_ID"),
                     ("gpuq_attempt", "GPUQ_ATTEMPT")):
        v = env.get(var, "")
        if v.isdigit():
            opts.append("--label=%s=%s" % (key, v))
            keys.append(key)
    if keys:
        opts.append("--log-opt=labels=" + ",".join(keys))
    return opts


def gang_env(env):
    """The main node's address for a node of a gang, into ENV."""
    try:
        if int(env.get("GPUQ_NUM_NODES") or 1) < 2:
            return False
    except ValueError:
        return False
    try:
        addr = md_get("attributes/gpuq-main-addr").strip()
    except OSError:
        try:
            addr = md_get("network-interfaces/0/ip").strip()
        except OSError as e:
            fail("cannot read the main node's address: %s" % e)
    env["GPUQ_MAIN_ADDR"] = addr
    env["MASTER_ADDR"] = addr
    return True


def main():
    try:
        job = json.loads(md_get("attributes/gpuq-job"))
        if isinstance(job, dict):
            JOB.update(job)
        image = job["image"]
        command = [str(a) for a in job.get("command") or []]
        args = [str(a) for a in job.get("args") or []]
        env = {str(k): str(v) for k, v in (job.get("env") or {}).items()}
        limit = int(job.get("max_runtime") or 0)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        fail("cannot read the gpuq-job metadata: %s" % e)
    if not shutil.which("docker"):
        fail("docker is not installed on the boot image")
    if not driver_ready():
        fail("no working NVIDIA driver after %d seconds" % DRIVER_WAIT)
    registry_login(image)

    gang = gang_env(env)
    argv = ["docker", "run", "--rm", "--name", NAME, "--gpus", "all",
            "--ipc", "host"]
    argv += log_options(env)
    if gang:
        argv += ["--network=host"]
    for k in env:
        argv += ["--env=" + k]
    if command:
        argv += ["--entrypoint=" + command[0]]
    # "--" ends docker's options: the image is never read as one, even
    # if it started with '-' (gpuqd refuses such an image at submit).
    argv += ["--", image]
    argv += command[1:] + args
    denv = dict(os.environ)
    denv.update(env)

    log("running %s" % image)
    proc = subprocess.Popen(argv, env=denv, stdin=subprocess.DEVNULL)
    ended = {}
    try:
        code = proc.wait(timeout=limit if limit > 0 else None)
    except subprocess.TimeoutExpired:
        log("max_runtime of %d seconds reached; stopping the job" % limit)
        ended["limit"] = "max_runtime"
        report("limit", "max_runtime")
        subprocess.run(["docker", "stop", "-t", "30", NAME])
        code = proc.wait()
    if code < 0:            # docker itself killed by a signal
        code = 128 - code
    log("the job exited with status %d" % code)
    ended["exit-code"] = str(code)
    record(ended)
    report("exit-code", code)


main()
PY
rc=$?
if ! md_get guest-attributes/gpuq/exit-code >/dev/null 2>&1 &&
    ! md_get guest-attributes/gpuq/error >/dev/null 2>&1; then
	curl -sf --retry 3 -X PUT -H 'Metadata-Flavor: Google' \
	    --data-binary "the startup script failed (python3 status $rc)" \
	    "$MD/guest-attributes/gpuq/error"
fi
power_off
