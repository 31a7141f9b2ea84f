"""Who may see a job's secrets, and secrets that never enter the queue
(gpuq-job(5) SECRETS): through the real gpuqd and gpuq, as several uids.

A job's env values, command and args are shown only to its owner, root
and the admin group; everyone else sees the names with the values
withheld. secret_env passes Secret Manager versions: Batch reads them
itself (secretVariables), and every service's container gets
GPUQ_SECRET_<NAME> naming the version.
"""

import json
import os

import pytest

from cloudutil import IMAGE, PROVIDERS, TERMINAL, cloud, job_spec  # noqa: F401
from gpuqdtest import Gpuqd, run_gpuq

SECRET = "hf_Sup3rS3cretT0ken"
WITHHELD = "<withheld>"
VERSION = "projects/gpuq-test/secrets/hf/versions/latest"

JOB = """\
image: us-docker.pkg.dev/p/train/resnet:1.0
command: [python, train.py]
args: [--token=%s]
env:
  HF_TOKEN: %s
  EPOCHS: "10"
secret_env:
  WANDB_KEY: projects/my-project/secrets/wandb/versions/3
accelerator: {type: nvidia-tesla-t4, count: 1}
""" % (SECRET, SECRET)

root_only = pytest.mark.skipif(os.getuid() != 0, reason="needs root to "
                               "act as other users")


@pytest.fixture
def daemon(request, tmp_path):
    made = []

    def make(conf="[daemon]\nlog_level = debug\n", world=True):
        """A started gpuqd; WORLD opens its socket to every uid."""
        d = Gpuqd(conf, prefix="gpuq-it-")
        made.append(d)
        d.start()
        if world:
            os.chmod(d.socket, 0o666)
        return d
    yield make
    bad = any(getattr(request.node, "rep_" + w, None) is not None and
              getattr(request.node, "rep_" + w).failed
              for w in ("setup", "call"))
    for d in made:
        if bad:
            d.report()
        d.cleanup(keep=bad)


def as_user(d, uid, gid, *args, groups=(), input=None):
    """gpuq ARGS as UID:GID with supplementary GROUPS: (rc, out, err)."""
    import subprocess
    from gpuqdtest import program
    argv = [program("gpuq"), "--socket", d.socket, *map(str, args)]
    env = dict(os.environ, LC_ALL="C.UTF-8", TZ="UTC")
    env.pop("GPUQ_SOCKET", None)

    def drop():
        os.setgroups(list(groups))
        os.setgid(gid)
        os.setuid(uid)
    p = subprocess.run(argv, input=input, capture_output=True, text=True,
                       env=env, timeout=60, preexec_fn=drop)
    return p.returncode, p.stdout, p.stderr


def every_view(d, uid, gid, jid, groups=()):
    """All a user can get of job JID: show (text and JSON), status
    --json, and the raw list and show replies."""
    out = []
    for args in (("show", jid), ("show", "--json", jid),
                 ("status", "--json", "--all")):
        rc, o, e = as_user(d, uid, gid, *args, groups=groups)
        assert rc == 0, (args, e)
        out.append(o)
    return "\n".join(out)


@root_only
def test_env_values_withheld_from_other_users(daemon, tmp_path):
    d = daemon("[daemon]\nadmin_group = nogroup\n")
    rc, out, err = as_user(d, 4242, 4242, "submit", "-q", "-", input=JOB)
    assert rc == 0, err
    jid = int(out.strip())

    # Another user: the names, never the values.
    seen = every_view(d, 4343, 4343, jid)
    assert SECRET not in seen
    assert WITHHELD in seen
    rc, out, _ = as_user(d, 4343, 4343, "show", "--json", jid)
    spec = json.loads(out)["job"]["spec"]
    assert spec["env"] == {"HF_TOKEN": WITHHELD, "EPOCHS": WITHHELD}
    assert spec["command"] == [WITHHELD, WITHHELD]
    assert spec["args"] == [WITHHELD]
    # What is not secret stays: the image, the secret's resource name.
    assert spec["image"] == "us-docker.pkg.dev/p/train/resnet:1.0"
    assert spec["secret_env"] == {
        "WANDB_KEY": "projects/my-project/secrets/wandb/versions/3"}
    # A refused change says nothing of the spec either.
    rc, out, err = as_user(d, 4343, 4343, "cancel", jid)
    assert rc != 0 and SECRET not in out + err

    # The owner, root and a member of the admin group see it all.
    for uid, groups in ((4242, ()), (0, ()), (4343, (65534,))):
        rc, out, err = as_user(d, uid, uid, "show", "--json", jid,
                               groups=groups)
        assert rc == 0, err
        spec = json.loads(out)["job"]["spec"]
        assert spec["env"]["HF_TOKEN"] == SECRET, uid
        assert spec["args"] == ["--token=" + SECRET], uid


@root_only
def test_python_package_args_withheld_from_other_users(daemon, tmp_path):
    d = daemon("[daemon]\nadmin_group = nogroup\n")
    job = ("python_package:\n  executor_image: us-docker.pkg.dev/v/t/py:1\n"
           "  package_uris: [gs://my-bkt/t-0.1.tar.gz]\n"
           "  module: trainer.task\n  args: [--token=%s, x]\n"
           "accelerator: {type: nvidia-tesla-t4, count: 1}\n" % SECRET)
    rc, out, err = as_user(d, 4242, 4242, "submit", "-q", "-", input=job)
    assert rc == 0, err
    jid = int(out.strip())
    assert SECRET not in every_view(d, 4343, 4343, jid)
    rc, out, _ = as_user(d, 4343, 4343, "show", "--json", jid)
    pp = json.loads(out)["job"]["spec"]["python_package"]
    assert pp["args"] == [WITHHELD, WITHHELD]
    assert pp["module"] == "trainer.task"
    rc, out, _ = as_user(d, 4242, 4242, "show", "--json", jid)
    pp = json.loads(out)["job"]["spec"]["python_package"]
    assert pp["args"] == ["--token=" + SECRET, "x"]


def test_secret_env_checked_at_submit(daemon, tmp_path):
    d = daemon()
    f = tmp_path / "job.yaml"
    f.write_text("image: img\naccelerator: {type: nvidia-tesla-t4, "
                 "count: 1}\nsecret_env: {HF_TOKEN: hf_abc}\n")
    rc, out, err = run_gpuq(d.socket, "submit", str(f))
    assert rc != 0
    assert 'secret_env.HF_TOKEN: "hf_abc" is not a secret version; write ' \
        'projects/PROJECT/secrets/SECRET/versions/VERSION' in err
    assert d.request({"op": "list", "state": "all"})["jobs"] == []


@pytest.mark.parametrize("image", ["--privileged", "-v/:/host",
                                   "--network=host", "-e"])
def test_image_that_is_an_option_is_refused(daemon, tmp_path, image):
    d = daemon()
    f = tmp_path / "job.yaml"
    f.write_text("image: %s\naccelerator: {type: nvidia-tesla-t4, "
                 "count: 1}\n" % json.dumps(image))
    rc, out, err = run_gpuq(d.socket, "submit", str(f))
    assert rc != 0
    assert "image: \"%s\" starts with '-': an image is a name such as " \
        "us-docker.pkg.dev/my-project/train/resnet:1.0, never an option" \
        % image in err, err
    assert d.request({"op": "list", "state": "all"})["jobs"] == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_secret_env_reaches_the_container(cloud, provider):
    c = cloud(speed=200)
    jid = c.submit(job_spec(providers=[provider], work=60, ckpt=30,
                            secret_env={"HF_TOKEN": VERSION}))
    job = c.wait_state(jid, TERMINAL, 60)
    c.check(job["state"] == "succeeded", "job ended %s" % job["state"], jid)
    run = c.current_run(jid)
    env = run["env"]
    c.check(env.get("GPUQ_SECRET_HF_TOKEN") == VERSION,
            "GPUQ_SECRET_HF_TOKEN is %r" % env.get("GPUQ_SECRET_HF_TOKEN"),
            jid)
    if provider == "batch":
        # Batch read the secret itself (secretVariables).
        c.check(env.get("HF_TOKEN") == "fake-secret-value-of:" + VERSION,
                "HF_TOKEN is %r" % env.get("HF_TOKEN"), jid)
    else:
        c.check("HF_TOKEN" not in env, "HF_TOKEN set on %s" % provider, jid)


@root_only
def test_default_groups_two_users_in_the_socket_group(daemon):
    # The shipped defaults, but for the socket's group: "gpuq" does not
    # exist on a test machine, "users" (gid 100) does on Debian.
    import grp
    import stat
    users = grp.getgrnam("users").gr_gid
    d = daemon("[daemon]\nsocket_group = users\n", world=False)
    st = os.stat(d.socket)
    assert st.st_gid == users and stat.S_IMODE(st.st_mode) == 0o660
    log = d.read_log()
    assert "admin_group=gpuq-admin" in log
    assert 'admin group "gpuq-admin" does not exist; only owners and root ' \
        'may change jobs' in log

    alice, bob, eve = 4501, 4502, 4503
    rc, out, err = as_user(d, alice, alice, "submit", "-q", "-", input=JOB,
                           groups=(users,))
    assert rc == 0, err
    jid = int(out.strip())

    # Bob may connect and look, but not change Alice's job or read it.
    rc, out, err = as_user(d, bob, bob, "show", "--json", jid,
                           groups=(users,))
    assert rc == 0, err
    assert SECRET not in out
    assert json.loads(out)["job"]["spec"]["env"]["HF_TOKEN"] == WITHHELD
    for op in ("cancel", "hold"):
        rc, out, err = as_user(d, bob, bob, op, jid, groups=(users,))
        assert rc == 1, (op, out, err)
        assert "belongs to uid %d; only its owner, root or members of " \
            "group \"gpuq-admin\" may %s it" % (alice, op) in err, err
    # Alice may; and she sees her values.
    rc, out, err = as_user(d, alice, alice, "hold", jid, groups=(users,))
    assert rc == 0, err
    rc, out, err = as_user(d, alice, alice, "show", "--json", jid,
                           groups=(users,))
    assert json.loads(out)["job"]["spec"]["env"]["HF_TOKEN"] == SECRET
    # Outside the socket's group: no connection at all.
    rc, out, err = as_user(d, eve, eve, "ping")
    assert rc == 3, (out, err)
    assert d.request({"op": "show", "id": jid})["job"]["state"] == "held"
