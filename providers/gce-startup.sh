#!/bin/bash
# gce-startup.sh: the startup script of every Compute Engine VM gpuq makes
# (providers/gce.c embeds this file at build time; it is the only copy).
#
# It runs the job in the instance metadata key gpuq-job, a JSON object
#   {"image": "...", "command": [...], "args": [...], "env": {...},
#    "max_runtime": seconds (0: none)}
# as `docker run --rm --gpus all -- IMAGE [COMMAND ARGS]`, reports how it went
# as guest attributes in the namespace gpuq, and powers the VM off:
#   gpuq/exit-code  the container's exit status (docker's 125-127 when the
#                   container could not start at all)
#   gpuq/limit      "max_runtime" when the container was stopped for
#                   running too long
#   gpuq/error      why the job could not be run at all (no GPU driver,
#                   no docker, no gpuq-job)
# gpuqd reads them with instances.getGuestAttributes once the VM has
# stopped (enable-guest-attributes is set in the metadata).
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


def fail(msg):
    log(msg)
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
    try:
        code = proc.wait(timeout=limit if limit > 0 else None)
    except subprocess.TimeoutExpired:
        log("max_runtime of %d seconds reached; stopping the job" % limit)
        report("limit", "max_runtime")
        subprocess.run(["docker", "stop", "-t", "30", NAME])
        code = proc.wait()
    if code < 0:            # docker itself killed by a signal
        code = 128 - code
    log("the job exited with status %d" % code)
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
