"""The job files people already have, through the real gpuq and gpuqd
on the simulated cloud (issue "Ready for a company's real Google Cloud
project", section "The job files people already have"):

- `gpuq submit --from vertex` of a CustomJob spec and `--from batch` of
  a Cloud Batch job run to success; `--dry-run` prints the gpuq job and
  submits nothing (it needs no gpuqd at all); a field gpuq cannot honour
  is an error naming its path, and nothing is submitted.
- A python_package job runs on each service: Vertex AI gets the package
  as a pythonPackageSpec; Batch and Compute Engine run the executor
  image with /bin/sh, a constant script and the user's strings as
  words after it. That very command line, taken from the fake's copy of
  the Batch job, and from the VM's docker run as its startup script
  makes it, is run here with stand-ins for gcloud and python on PATH,
  with hostile strings: none of them is ever run as shell text.
"""

import json
import os
import subprocess
import urllib.request

from cloudutil import TERMINAL, cloud, scaled
from fakeclient import get_token
from test_gce_startup import run_script

assert cloud  # the fixture, imported for pytest

SPEED = 100
WORK = {"FAKEGCP_WORK_SECONDS": "600", "FAKEGCP_CKPT_EVERY": "50",
        "FAKEGCP_EXIT": "0"}

VERTEX_YAML = """\
# What `gcloud ai custom-jobs create --config` takes.
workerPoolSpecs:
  - machineSpec:
      machineType: n1-highmem-4
      acceleratorType: NVIDIA_TESLA_T4
      acceleratorCount: 1
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/gpuq-test/train/fake:1.0
      args: [--epochs, "3"]
      env:
%s
scheduling:
  timeout: 7200s
""" % "".join("        - name: %s\n          value: \"%s\"\n" % kv
              for kv in WORK.items())

BATCH_JOB = {
    "taskGroups": [{
        "taskCount": "1",
        "taskSpec": {
            "runnables": [{"container": {
                "imageUri": "us-docker.pkg.dev/gpuq-test/train/fake:1.0",
                "entrypoint": "python3",
                "commands": ["train.py"]}}],
            "environment": {"variables": WORK},
            "maxRetryCount": 1,
            "maxRunDuration": "7200s"}}],
    "allocationPolicy": {
        "instances": [{"installGpuDrivers": True, "policy": {
            "machineType": "n1-highmem-4",
            "accelerators": [{"type": "nvidia-tesla-t4", "count": 1}]}}],
        "location": {"allowedLocations": ["regions/us-central1"]}},
    "labels": {"team": "ml"},
}

HOSTILE = ["$(touch PWNED)", "`touch PWNED`", "; touch PWNED", "a b",
           "'", "\"", "\\", "--", "-c", "*", "\n", "$HOME", "${IFS}",
           "&& touch PWNED", "| touch PWNED", "> PWNED", "\u00e9t\u00e9"]


def write(c, name, text):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def submit_from(c, kind, path, *extra):
    rc, out, err = c.gpuq("submit", "-q", "--from", kind, *extra, path,
                          timeout=60)
    c.check(rc == 0, "gpuq submit --from %s failed (rc %d): %s" % (
        kind, rc, err))
    return int(out.split()[0]), err


def created_body(c, provider, jid):
    """The resource of job JID as the fake's own API returns it."""
    [r] = c.resources(jid)
    tok = get_token(c.fake, c.key)["access_token"]
    prefix = "/compute/v1/" if provider == "gce" else "/v1/"
    req = urllib.request.Request(c.fake.url + prefix + r["resource"],
                                 headers={"Authorization": "Bearer " + tok})
    with urllib.request.urlopen(req, timeout=30) as f:
        return json.loads(f.read())


def test_from_vertex_runs(cloud):
    c = cloud(speed=SPEED, providers=("vertex",))
    path = write(c, "config.yaml", VERTEX_YAML)
    jid, err = submit_from(c, "vertex", path)
    c.check(err == "", "notes for a plain file: %r" % err, jid)
    job = c.wait_state(jid, TERMINAL, scaled(60))
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    spec = job["spec"]
    c.check(spec["max_runtime"] == 7200 and spec["args"] == ["--epochs",
                                                             "3"],
            "spec %r" % spec, jid)
    body = created_body(c, "vertex", jid)
    pool = body["jobSpec"]["workerPoolSpecs"][0]
    c.check(pool["machineSpec"]["acceleratorType"] == "NVIDIA_TESLA_T4" and
            pool["containerSpec"]["args"] == ["--epochs", "3"],
            "Vertex job %r" % pool, jid)


def test_from_batch_runs(cloud):
    c = cloud(speed=SPEED, providers=("batch",))
    path = write(c, "job.json", json.dumps(BATCH_JOB))
    jid, err = submit_from(c, "batch", path)
    # installGpuDrivers is gpuq's to set: accepted, and said so.
    c.check("allocationPolicy.instances[0].installGpuDrivers" in err,
            "no note for installGpuDrivers: %r" % err, jid)
    job = c.wait_state(jid, TERMINAL, scaled(60))
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    spec = job["spec"]
    c.check(spec["command"] == ["python3"] and spec["args"] == ["train.py"]
            and spec["max_failures"] == 1 and
            spec["regions"] == ["us-central1"] and
            spec["labels"] == {"team": "ml"}, "spec %r" % spec, jid)
    run = created_body(c, "batch", jid)["taskGroups"][0]["taskSpec"][
        "runnables"][0]["container"]
    c.check(run["entrypoint"] == "python3" and run["commands"] ==
            ["train.py"], "Batch container %r" % run, jid)


def test_dry_run_needs_no_daemon(tmp_path):
    """--dry-run prints gpuq YAML and talks to nobody: the socket given
    does not exist."""
    from gpuqdtest import run_gpuq
    path = tmp_path / "job.json"
    job = dict(BATCH_JOB)
    job["taskGroups"] = [dict(BATCH_JOB["taskGroups"][0], taskCount=8,
                              parallelism=2)]
    path.write_text(json.dumps(job))
    rc, out, err = run_gpuq(str(tmp_path / "none.sock"), "submit",
                            "--from", "batch", "--dry-run", str(path))
    assert rc == 0, err
    assert "array:\n  count: 8\n  parallelism: 2\n" in out
    assert "image: us-docker.pkg.dev/gpuq-test/train/fake:1.0\n" in out
    assert "FAKEGCP_EXIT: \"0\"\n" in out
    # The same file without --from is not a gpuq job: the daemon is
    # not reached either way, and --dry-run prints what it read.
    rc, out, err = run_gpuq(str(tmp_path / "none.sock"), "submit",
                            "--dry-run", str(path))
    assert rc == 0 and out.startswith("taskGroups:\n"), (rc, out, err)


def test_refused_field_submits_nothing(cloud):
    c = cloud(speed=SPEED, providers=("batch",))
    job = json.loads(json.dumps(BATCH_JOB))
    job["allocationPolicy"]["instances"][0]["policy"]["provisioningModel"] \
        = "RESERVATION_BOUND"
    path = write(c, "job.json", json.dumps(job))
    rc, out, err = c.gpuq("submit", "--from", "batch", path)
    c.check(rc == 1 and out == "", "rc %d out %r" % (rc, out))
    c.check("job.json: allocationPolicy.instances[0].policy."
            "provisioningModel: \"RESERVATION_BOUND\" is not offered by "
            "gpuq" in err,
            "error %r" % err)
    c.check(c.list_jobs() == [], "a job was queued: %r" % c.list_jobs())


PACKAGE_YAML = """\
displayName: pkg-%(provider)s
jobSpec:
  workerPoolSpecs:
    - machineSpec: {machineType: n1-highmem-4, acceleratorType: NVIDIA_TESLA_T4,
                    acceleratorCount: 1}
      replicaCount: 1
      pythonPackageSpec:
        executorImageUri: us-docker.pkg.dev/vertex-ai/training/pytorch-gpu:1
        packageUris: [gs://gpuq-test-pkgs/trainer-0.1.tar.gz,
                      gs://gpuq-test-pkgs/util-1.0-py3-none-any.whl]
        pythonModule: trainer.task
        args: %(args)s
        env:
%(env)s
"""


def package_job(c, provider, args):
    env = "".join("          - name: %s\n            value: \"%s\"\n" % kv
                  for kv in WORK.items())
    text = PACKAGE_YAML % {"provider": provider, "args": json.dumps(args),
                           "env": env}
    path = write(c, "pkg-%s.yaml" % provider, text)
    rc, out, err = c.gpuq("submit", "--from", "vertex", "--dry-run", path)
    c.check(rc == 0 and "python_package:\n  executor_image: " in out,
            "dry run %d %r %r" % (rc, out, err))
    # Submitted as gpuq YAML, as a person would after --dry-run, with
    # the provider pinned.
    gpath = write(c, "pkg-%s.gpuq.yaml" % provider,
                  out + "providers: [%s]\n" % provider)
    rc, out, err = c.gpuq("submit", "-q", gpath)
    c.check(rc == 0, "submit: %s" % err)
    return int(out)


def fake_tools(d):
    """Stand-ins for gcloud and python3: they write what they were given
    (one JSON line each) to d/log."""
    log = os.path.join(d, "log")
    os.makedirs(os.path.join(d, "bin"))
    for name in ("gcloud", "python3"):
        p = os.path.join(d, "bin", name)
        with open(p, "w") as f:
            f.write("#!/usr/bin/python3\nimport json, sys\n"
                    "open(%r, 'a').write(json.dumps([%r] + sys.argv[1:]) "
                    "+ '\\n')\n"
                    "if sys.argv[1:3] == ['storage', 'cp']:\n"
                    "    open(sys.argv[-1], 'w').write('pkg')\n"
                    % (log, name))
        os.chmod(p, 0o755)
    return log


def run_container(c, argv, d):
    """Run the container's command line as docker would, in D."""
    log = fake_tools(d)
    env = {"PATH": os.path.join(d, "bin") + ":/usr/bin:/bin",
           "TMPDIR": d}
    p = subprocess.run(argv, cwd=d, env=env, capture_output=True,
                       timeout=30)
    c.check(p.returncode == 0, "container exited %d: %s" % (
        p.returncode, p.stderr.decode(errors="replace")))
    with open(log) as f:
        return [json.loads(line) for line in f]


def test_python_package_each_service(cloud, tmp_path):
    c = cloud(speed=SPEED)
    args = ["--lr", "0.1"]
    jobs = {p: package_job(c, p, args if p == "vertex" else HOSTILE)
            for p in ("vertex", "batch", "gce")}
    bodies = {}
    for provider, jid in jobs.items():
        # Read while it runs: gpuqd deletes a finished VM.
        c.wait_running(jid, scaled(60))
        bodies[provider] = created_body(c, provider, jid)
    for provider, jid in jobs.items():
        job = c.wait_state(jid, TERMINAL, scaled(60))
        c.check(job["state"] == "succeeded", "%s: job ended %s" % (
            provider, job["state"]), jid)
        c.check("image" not in job["spec"] and
                job["spec"]["python_package"]["module"] == "trainer.task",
                "spec %r" % job["spec"], jid)
        body = bodies[provider]
        if provider == "vertex":
            pool = body["jobSpec"]["workerPoolSpecs"][0]
            ps = pool.get("pythonPackageSpec") or {}
            c.check("containerSpec" not in pool and ps.get("pythonModule")
                    == "trainer.task" and ps.get("args") == args and
                    ps.get("executorImageUri") ==
                    "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu:1",
                    "Vertex pool %r" % pool, jid)
        else:
            if provider == "gce":
                # The VM's startup script turns gpuq-job into docker run
                # (test_gce_startup.py's stand-ins); run what follows
                # the image as the container would.
                meta = {i["key"]: i["value"] for i in
                        body["metadata"]["items"]}
                (tmp_path / "vm").mkdir()
                p, runs, _ = run_script(tmp_path / "vm",
                                        json.loads(meta["gpuq-job"]))
                c.check(p.returncode == 0 and len(runs) == 1,
                        "startup script: %r %s" % (runs, p.stderr), jid)
                dargv = runs[0]["argv"]
                image = dargv.index("--") + 1
                c.check(dargv[image] == "us-docker.pkg.dev/vertex-ai/"
                        "training/pytorch-gpu:1", "docker %r" % dargv, jid)
                ep = [a for a in dargv[:image] if a.startswith(
                    "--entrypoint=")]
                argv = [ep[0].split("=", 1)[1]] + dargv[image + 1:]
            else:
                ctr = body["taskGroups"][0]["taskSpec"]["runnables"][0][
                    "container"]
                argv = [ctr["entrypoint"]] + ctr["commands"]
            c.check(argv[:2] == ["/bin/sh", "-c"] and
                    argv[3:] == ["gpuq-python-package", "trainer.task", "2",
                                 "gs://gpuq-test-pkgs/trainer-0.1.tar.gz",
                                 "gs://gpuq-test-pkgs/util-1.0-py3-none-"
                                 "any.whl"] + HOSTILE,
                    "%s command line %r" % (provider, argv), jid)
            os.makedirs(tmp_path / provider)
            calls = run_container(c, argv, str(tmp_path / provider))
            c.check([x[:3] for x in calls] == [
                ["gcloud", "storage", "cp"], ["python3", "-m", "pip"],
                ["gcloud", "storage", "cp"], ["python3", "-m", "pip"],
                ["python3", "-m", "trainer.task"]], "calls %r" % calls, jid)
            c.check(calls[0][3] == "gs://gpuq-test-pkgs/trainer-0.1.tar.gz"
                    and calls[3][-1].endswith(
                        "/util-1.0-py3-none-any.whl"),
                    "downloads %r" % calls, jid)
            # The module got every hostile word as it was, and none ran.
            c.check(calls[-1][3:] == HOSTILE, "module argv %r" % calls[-1],
                    jid)
            c.check(not os.path.exists(tmp_path / provider / "PWNED"),
                    "a hostile string ran as shell text", jid)
