"""The queue through the real client: submit (YAML, JSON, sweeps, stdin),
status, show, cancel/hold/release, durability across restarts and
crashes, the exit codes of gpuq(1), another user's cancel refused, and
a crowd of concurrent clients. gpuqd runs with no cloud configured, so
jobs stay queued and say why."""

import json
import os
import re
import subprocess
import threading

import pytest

from conftest import EXAMPLES, GPUQ, run_gpuq

NOBODY = (65534, 65534)

T4_JOB = """\
name: resnet
image: pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime
command: [torchrun, --nproc_per_node=2, train.py]
env:
  EPOCHS: "90"
accelerator:
  type: nvidia-tesla-t4
  count: 2
spot: allow
max_hourly_usd: 3.00
max_runtime: 24h
"""


def submitted_ids(out):
    ids = [int(x) for x in re.findall(r"^submitted job (\d+)$", out, re.M)]
    assert ids, out
    return ids


def jobs(gpuq, *args):
    rc, out, err = gpuq("status", "--all", "--json", *args)
    assert rc == 0, err
    return json.loads(out)


def states(gpuq):
    return {j["id"]: j["state"] for j in jobs(gpuq)}


def test_ping(gpuq):
    rc, out, err = gpuq("ping")
    assert rc == 0, err
    assert re.match(r"gpuqd \S+ at .*gpuq\.sock, install [0-9a-f]{8}, "
                    r"protocol 1$", out.strip()), out


def test_submit_yaml_then_status_and_show(gpuq, jobfile):
    rc, out, err = gpuq("submit", jobfile(T4_JOB))
    assert rc == 0, err
    [jid] = submitted_ids(out)

    rc, out, err = gpuq("status")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "STATE", "GPU", "WHERE",
                                "AGE", "COST", "CHECKPOINT", "WHY"]
    row = lines[1].split()
    assert row[:5] == [str(jid), "resnet", "queued", "2xT4", "-"]
    assert lines[-1] == "1 queued"

    rc, out, err = gpuq("show", jid)
    assert rc == 0, err
    assert out.startswith(f"job {jid}  resnet  queued\n")
    assert "  owner       root\n" in out
    # The spec comes back normalized, as YAML: defaults filled in.
    assert "\nSpec\n" in out
    assert "  image: pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime\n" in out
    assert "  command: [torchrun, --nproc_per_node=2, train.py]\n" in out
    assert "    type: nvidia-tesla-t4\n" in out
    assert "  max_runtime: 86400\n" in out
    assert "\nAttempts\n  none yet\n" in out
    assert "\nEvents\n" in out
    assert re.search(r"-> queued", out), out

    rc, out, err = gpuq("show", "--json", jid)
    assert rc == 0, err
    show = json.loads(out)
    assert show["job"]["id"] == jid
    assert show["job"]["spec"]["env"] == {"EPOCHS": "90"}
    assert show["job"]["spec"]["accelerator"] == {
        "type": "nvidia-tesla-t4", "count": 2}


def test_submit_json_file_and_stdin(gpuq, jobfile):
    job = {"name": "from-json", "image": "img:1",
           "accelerator": {"type": "NVIDIA_L4", "count": 1}}
    rc, out, err = gpuq("submit", jobfile(json.dumps(job), "job.json"))
    assert rc == 0, err
    [a] = submitted_ids(out)

    rc, out, err = gpuq("submit", "-q", "-", input=json.dumps(job))
    assert rc == 0, err
    b = int(out.strip())
    assert b == a + 1

    # YAML through standard input too, and JSON lines (jq -c).
    rc, out, err = gpuq("submit", "-q", "-", input=T4_JOB)
    assert rc == 0, err
    lines = "\n".join(json.dumps(dict(job, name=f"l{i}")) for i in range(3))
    rc, out, err = gpuq("submit", "-q", jobfile(lines, "jobs.jsonl"))
    assert rc == 0, err
    assert len(out.split()) == 3

    js = jobs(gpuq)
    assert [j["name"] for j in js] == ["from-json", "from-json", "resnet",
                                       "l0", "l1", "l2"]
    # The GPU is stored in Compute Engine's spelling.
    assert js[0]["accelerator"] == {"type": "nvidia-l4", "count": 1}


def test_submit_options(gpuq, jobfile):
    path = jobfile(T4_JOB)
    rc, out, err = gpuq("submit", "-q", "--hold", "--name", "renamed",
                        "--priority", "7", path)
    assert rc == 0, err
    jid = int(out)
    [j] = jobs(gpuq)
    assert (j["id"], j["name"], j["state"], j["priority"]) == \
        (jid, "renamed", "held", 7)

    rc, out, err = gpuq("release", jid)
    assert (rc, out) == (0, f"released job {jid}\n"), err
    assert states(gpuq) == {jid: "queued"}
    rc, out, err = gpuq("hold", jid)
    assert (rc, out) == (0, f"held job {jid}\n"), err
    assert states(gpuq) == {jid: "held"}


def test_sweep_multidoc(gpuq):
    rc, out, err = gpuq("submit", os.path.join(EXAMPLES, "sweep.yaml"))
    assert rc == 0, err
    ids = submitted_ids(out)
    assert len(ids) == 3 and ids == list(range(ids[0], ids[0] + 3))
    names = [j["name"] for j in jobs(gpuq)]
    assert names == ["sweep-lr-0.1", "sweep-lr-0.01", "sweep-lr-0.001"]


def test_examples_are_valid(gpuq):
    for f in sorted(os.listdir(EXAMPLES)):
        if f.endswith(".yaml"):
            rc, out, err = gpuq("submit", os.path.join(EXAMPLES, f))
            assert rc == 0, f"{f}: {err}"


def test_malformed_file_stores_nothing(gpuq, jobfile):
    bad = jobfile("name: a\nimage: b\n  accelerator: x\n", "bad.yaml")
    rc, out, err = gpuq("submit", bad)
    assert rc == 1
    assert out == ""
    assert err == (f"gpuq: {bad}:3:14: mapping values are not allowed in "
                   f"this context\n")

    # A sweep with a broken last document: none of it is sent.
    bad = jobfile(T4_JOB + "---\n" + T4_JOB + "---\nname: [\n", "sw.yaml")
    rc, out, err = gpuq("submit", bad)
    assert rc == 1 and out == ""
    assert err.startswith(f"gpuq: {bad}:")

    bad = jobfile('{"name": "a", "image": }', "bad.json")
    rc, out, err = gpuq("submit", bad)
    assert rc == 1
    assert err.startswith(f"gpuq: {bad}:1:")

    rc, out, err = gpuq("submit", "/nonexistent/job.yaml")
    assert rc == 1
    assert err == ("gpuq: /nonexistent/job.yaml: No such file or "
                   "directory\n")

    rc, out, err = gpuq("submit", jobfile("- 1\n- 2\n", "list.yaml"))
    assert rc == 1
    assert "job 1 of the list is a number" in err
    assert jobs(gpuq) == []


def test_invalid_job_names_the_field(gpuq, jobfile):
    path = jobfile(T4_JOB.replace("count: 2", "count: 3"))
    rc, out, err = gpuq("submit", path)
    assert rc == 1 and out == ""
    assert err == ("gpuq: job rejected: accelerator.count: 3 is not offered "
                   "for nvidia-tesla-t4; use 1, 2 or 4\n")

    rc, out, err = gpuq("submit", jobfile(T4_JOB + "colour: blue\n"))
    assert rc == 1
    assert err.startswith("gpuq: job rejected: colour: "), err
    assert jobs(gpuq) == []


def test_sweep_with_a_bad_job(gpuq, jobfile):
    text = (T4_JOB + "---\n" + T4_JOB.replace("count: 2", "count: 3") +
            "---\n" + T4_JOB)
    path = jobfile(text, "sweep.yaml")
    rc, out, err = gpuq("submit", path)
    assert rc == 1
    assert len(submitted_ids(out)) == 2
    line = T4_JOB.count("\n") + 1
    assert err == (f"gpuq: {path}:{line}: job rejected: accelerator.count: "
                   f"3 is not offered for nvidia-tesla-t4; use 1, 2 or 4\n"
                   f"gpuq: {path}: 2 of 3 jobs submitted\n")
    assert len(jobs(gpuq)) == 2


def test_cancel_hold_release(gpuq, jobfile):
    path = jobfile(T4_JOB)
    ids = [int(gpuq("submit", "-q", path)[1]) for _ in range(3)]
    a, b, c = ids

    rc, out, err = gpuq("cancel", a)
    assert (rc, out, err) == (0, f"cancelled job {a}\n", "")
    # Going on after a failure, and saying which failed.
    rc, out, err = gpuq("cancel", 999, b, a)
    assert rc == 1
    assert out == f"cancelled job {b}\n"
    assert "gpuq: cancel job 999: not found: no job 999\n" in err
    assert f"gpuq: cancel job {a}:" in err
    assert states(gpuq) == {a: "cancelled", b: "cancelled", c: "queued"}

    rc, out, err = gpuq("release", b)     # cancelled: nothing to release
    assert rc == 1
    assert err.startswith(f"gpuq: release job {b}: conflict: "), err
    rc, out, err = gpuq("hold", c)
    assert rc == 0, err
    rc, out, err = gpuq("cancel", c)       # held jobs may be cancelled
    assert rc == 0, err
    assert states(gpuq)[c] == "cancelled"

    # status hides finished jobs unless asked.
    rc, out, err = gpuq("status")
    assert (rc, out) == (0, "no active jobs\n")
    rc, out, err = gpuq("status", "--all")
    assert out.splitlines()[-1] == "3 cancelled"


def test_status_filters_and_paging(gpuq, jobfile):
    job = json.loads(json.dumps({"image": "img:1", "accelerator": {
        "type": "nvidia-l4", "count": 1}}))
    lines = "\n".join(json.dumps(dict(job, name=f"j{i}"))
                      for i in range(1205))
    rc, out, err = gpuq("submit", "-q", jobfile(lines, "many.jsonl"))
    assert rc == 0, err
    ids = [int(x) for x in out.split()]
    assert len(ids) == 1205
    gpuq("hold", ids[0], ids[1])
    gpuq("cancel", ids[2])

    # More than a page (1000): gpuq follows "next".
    js = jobs(gpuq)
    assert [j["id"] for j in js] == ids
    rc, out, err = gpuq("status")
    assert rc == 0, err
    assert len(out.splitlines()) == 1 + 1204 + 1
    assert out.splitlines()[-1] == "2 held, 1202 queued"

    rc, out, err = gpuq("status", "--state", "held,cancelled")
    rows = out.splitlines()
    assert [r.split()[0] for r in rows[1:-1]] == [str(i) for i in ids[:3]]
    assert rows[-1] == "2 held, 1 cancelled"

    rc, out, err = gpuq("status", "--limit", "5")
    assert len(out.splitlines()) == 1 + 5 + 1
    assert out.splitlines()[-1].endswith("(not all shown: --limit)")
    rc, out, err = gpuq("status", "--json", "--limit", "1001")
    assert len(json.loads(out)) == 1001

    rc, out, err = gpuq("status", "--user", "root", "--state", "held")
    assert out.splitlines()[-1] == "2 held"
    rc, out, err = gpuq("status", "--user", "65534")
    assert (rc, out) == (0, "no active jobs\n")


def test_restart_keeps_everything(gpuqd, gpuq, jobfile):
    path = jobfile(T4_JOB)
    ids = [int(gpuq("submit", "-q", path)[1]) for _ in range(4)]
    gpuq("hold", ids[1])
    gpuq("cancel", ids[2])
    before = jobs(gpuq)
    shows = [json.loads(gpuq("show", "--json", i)[1]) for i in ids]

    gpuqd.restart()
    assert jobs(gpuq) == before
    assert [json.loads(gpuq("show", "--json", i)[1]) for i in ids] == shows

    # A crash loses nothing acknowledged either.
    rc, out, err = gpuq("submit", "-q", path)
    assert rc == 0, err
    late = int(out)
    gpuqd.kill9()
    gpuqd.start()
    assert states(gpuq) == {ids[0]: "queued", ids[1]: "held",
                            ids[2]: "cancelled", ids[3]: "queued",
                            late: "queued"}
    # Ids go on from where they were.
    rc, out, err = gpuq("submit", "-q", path)
    assert int(out) == late + 1


def test_usage_errors_exit_2(gpuq, jobfile):
    cases = [
        ((), "usage: gpuq"),
        (("frobnicate",), "gpuq: unknown command 'frobnicate'; 'gpuq help' "
                          "lists them"),
        (("--bogus", "status"), "unrecognized option"),
        (("status", "--bogus"), "usage: gpuq status"),
        (("status", "extra"), "status takes no arguments"),
        (("status", "--state", "sleeping"), "--state: unknown state "
                                            "'sleeping'"),
        (("status", "--limit", "0"), "--limit: '0' is not a positive"),
        (("status", "--user", "no-such-user-xyz"), "--user: no user"),
        (("submit",), "submit takes one job file"),
        (("submit", "a.yaml", "b.yaml"), "submit takes one job file"),
        (("submit", "--priority", "high", "a.yaml"), "--priority: 'high' "
                                                     "is not an integer"),
        (("show",), "usage: gpuq show"),
        (("show", "x1"), "'x1' is not a job id"),
        (("cancel",), "cancel: which job?"),
        (("cancel", "1", "-3"), "usage: gpuq cancel"),
        (("hold", "1", "two"), "'two' is not a job id"),
        (("--timeout", "soon", "ping"), "--timeout: 'soon' is not a "
                                        "duration"),
    ]
    for args, want in cases:
        rc, out, err = gpuq(*args)
        assert rc == 2, f"{args}: rc {rc} {err}"
        assert want in err, f"{args}: {err!r}"
        assert out == "", f"{args}: {out!r}"
    # Nothing reached the queue.
    assert jobs(gpuq) == []


def test_help_and_version(gpuq_bare):
    rc, out, err = gpuq_bare("--help")
    assert rc == 0
    for cmd in ("submit", "status", "show", "cancel", "hold", "release",
                "ping", "help"):
        assert re.search(rf"^  {cmd} ", out, re.M), cmd
    assert "Exit status: 0 ok, 1 a request failed, 2 usage error, 3 " \
           "gpuqd unreachable." in out
    rc, out, err = gpuq_bare("help", "status")
    assert rc == 0 and out.startswith("usage: gpuq status ")
    assert "--all" in out and "--json" in out
    rc, out2, err = gpuq_bare("status", "--help")
    assert (rc, out2) == (0, out)
    rc, out, err = gpuq_bare("submit", "-h")
    assert rc == 0 and "--priority N" in out
    rc, out, err = gpuq_bare("--version")
    assert rc == 0 and re.match(r"gpuq \d+\.\d+\.\d+ \(protocol 1\)\n$", out)


def test_daemon_unreachable_exit_3(gpuq_bare, tmp_path):
    sock = str(tmp_path / "nobody-home.sock")
    rc, out, err = gpuq_bare("--socket", sock, "status")
    assert rc == 3 and out == ""
    assert err == (
        f"gpuq: cannot connect to {sock}: No such file or directory\n"
        "gpuq: is gpuqd running? start it with 'systemctl start gpuqd' or "
        "run 'gpuqd --socket PATH', or point gpuq at it with --socket or "
        "GPUQ_SOCKET\n")
    # GPUQ_SOCKET is read when --socket is not given.
    rc, out, err = gpuq_bare("ping", env={"GPUQ_SOCKET": sock})
    assert rc == 3 and sock in err
    # A socket file nobody listens on.
    import socket as so
    s = so.socket(so.AF_UNIX, so.SOCK_STREAM)
    s.bind(sock)
    s.close()
    rc, out, err = gpuq_bare("--socket", sock, "submit", "-",
                             input="name: x\n")
    assert rc == 3
    assert "Connection refused" in err and "is gpuqd running?" in err


def test_daemon_stopped_then_back(gpuqd, gpuq, jobfile):
    gpuqd.stop()
    rc, out, err = gpuq("submit", jobfile(T4_JOB))
    assert rc == 3 and "is gpuqd running?" in err
    gpuqd.start()
    rc, out, err = gpuq("status", "--all", "--json")
    assert (rc, json.loads(out)) == (0, [])


def test_other_user_cannot_cancel(gpuqd, gpuq, jobfile):
    rc, out, err = gpuq("submit", "-q", "-", input=T4_JOB)
    root_job = int(out)
    # The socket is 0660 for the admin group; open it to the test user.
    os.chmod(gpuqd.socket, 0o666)

    rc, out, err = gpuq("cancel", root_job, user=NOBODY)
    assert rc == 1 and out == ""
    assert err.startswith(f"gpuq: cancel job {root_job}: forbidden"), err
    rc, out, err = gpuq("hold", root_job, user=NOBODY)
    assert rc == 1 and "forbidden" in err
    assert states(gpuq)[root_job] == "queued"

    # Reading is open to all; changing one's own job too.
    rc, out, err = gpuq("status", user=NOBODY)
    assert rc == 0 and f"\n{root_job} " in "\n" + out.split("\n", 1)[1]
    rc, out, err = gpuq("submit", "-q", "-", input=T4_JOB, user=NOBODY)
    assert rc == 0, err
    own = int(out)
    assert {j["id"]: j["owner"] for j in jobs(gpuq)} == {root_job: 0,
                                                         own: 65534}
    rc, out, err = gpuq("cancel", own, user=NOBODY)
    assert rc == 0, err

    # The owner (root) can.
    rc, out, err = gpuq("cancel", root_job)
    assert (rc, out) == (0, f"cancelled job {root_job}\n"), err
    assert states(gpuq) == {root_job: "cancelled", own: "cancelled"}


def test_200_concurrent_submits(gpuq, jobfile):
    path = jobfile(T4_JOB)
    n = 200
    procs = [subprocess.Popen([GPUQ, "--socket", gpuq.socket, "submit",
                               "-q", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for _ in range(n)]
    ids, errors = [], []
    for p in procs:
        out, err = p.communicate(timeout=60)
        if p.returncode == 0:
            ids.append(int(out))
        else:
            errors.append((p.returncode, err))
    assert errors == []
    assert len(set(ids)) == n
    js = jobs(gpuq)
    assert sorted(j["id"] for j in js) == sorted(ids)


def test_concurrent_clients_and_status(gpuq, jobfile):
    """Readers while writers write: every status parses and every submit
    is acknowledged."""
    path = jobfile(T4_JOB)
    errs = []

    def submitter():
        for _ in range(20):
            rc, out, err = gpuq("submit", "-q", path)
            if rc != 0:
                errs.append(err)

    def reader():
        for _ in range(20):
            rc, out, err = gpuq("status", "--json")
            if rc != 0:
                errs.append(err)
            else:
                json.loads(out)

    ts = [threading.Thread(target=f) for f in (submitter, submitter,
                                                reader, reader)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errs == []
    assert len(jobs(gpuq)) == 40


def test_show_unknown_job(gpuq):
    rc, out, err = gpuq("show", 4242)
    assert (rc, out) == (1, "")
    assert err == "gpuq: job 4242: not found: no job 4242\n"
