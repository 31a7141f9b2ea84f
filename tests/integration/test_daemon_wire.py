"""gpuqd on the wire: raw JSON lines over the socket, no client. Every
bad request gets its error code and the connection goes on; replies
come back in request order; the ops do what gpuqd(8) says."""

import json
import os
import socket
import subprocess
import sys

import pytest

from daemonutil import JOB, daemon, submit  # noqa: F401 (fixture)


def error(reply):
    assert reply["ok"] is False, reply
    return reply["error"]


def test_daemon_ping(daemon):
    d = daemon()
    r = d.request({"op": "ping"})
    assert r["ok"] is True
    assert r["version"]
    assert r["proto"] == 1
    assert len(r["install"]) == 8


def test_daemon_malformed_inputs_keep_the_connection(daemon):
    d = daemon()
    cases = [
        (b"this is not json", "bad_json", None),
        (b"[1, 2, 3]", "bad_json", None),
        (b'"ping"', "bad_json", None),
        (b'{"op":"ping","op":"list"}', "bad_json", None),
        (b'{"op":"\xff\xfe"}', "bad_utf8", None),
        (b'{"op":"ping", "x":"\xc0\x80"}', "bad_utf8", None),
        (b'{"op":"launch"}', "unknown_op", "op"),
        (b'{"id":1}', "bad_request", "op"),
        (b'{"op":42}', "bad_request", "op"),
        # A string id is "42" or a task "42.3" (doc/DESIGN.md "Arrays
        # and dependencies"); anything else is refused.
        (b'{"op":"show","id":"7"}', "not_found", "id"),
        (b'{"op":"show","id":"7.x"}', "bad_request", "id"),
        (b'{"op":"show","id":"seven"}', "bad_request", "id"),
        (b'{"op":"show","id":"7.3"}', "not_found", "id"),
        (b'{"op":"show","id":1.5}', "bad_request", "id"),
        (b'{"op":"show"}', "bad_request", "id"),
        (b'{"op":"cancel","id":0}', "bad_request", "id"),
        (b'{"op":"list","limit":"ten"}', "bad_request", "limit"),
        (b'{"op":"list","limit":5000}', "bad_request", "limit"),
        (b'{"op":"list","state":"sleeping"}', "bad_request", "state"),
        (b'{"op":"list","state":[1]}', "bad_request", "state"),
        (b'{"op":"list","owner":-1}', "bad_request", "owner"),
        (b'{"op":"list","name":7}', "bad_request", "name"),
        (b'{"op":"list","limt":10}', "bad_request", "limt"),
        (b'{"op":"ping","extra":true}', "bad_request", "extra"),
        (b'{"op":"submit"}', "bad_request", "job"),
        (b'{"op":"submit","job":[]}', "bad_request", "job"),
        (b'{"op":"submit","job":{},"hold":"yes"}', "bad_request", "hold"),
        (b'{"op":"submit","job":{"image":"x"}}', "invalid_job",
         "accelerator"),
        (b'{"op":"submit","job":{"image":"x","gpus":1,'
         b'"accelerator":{"type":"nvidia-tesla-t4","count":1}}}',
         "invalid_job", "gpus"),
    ]
    with d.connect() as c:
        for line, code, field in cases:
            c.send_raw(line + b"\n")
            e = error(c.recv())
            assert e["code"] == code, (line, e)
            assert e["message"], e
            if field is not None:
                assert e.get("field") == field, (line, e)
        assert c.request({"op": "ping"})["ok"]
    # The unknown op names the ops that exist.
    e = error(d.request({"op": "launch"}))
    for op in ("submit", "list", "show", "cancel", "hold", "release",
               "plan", "quotas", "prices", "ping"):
        assert op in e["message"]


def test_daemon_line_too_long_then_valid(daemon):
    d = daemon()
    with d.connect() as c:
        big = b'{"op":"ping","pad":"' + b"x" * (1 << 20) + b'"}\n'
        c.send_raw(big + b'{"op":"ping"}\n')
        e = error(c.recv())
        assert e["code"] == "line_too_long"
        assert c.recv()["ok"] is True
        # Exactly at the limit is a line like any other (here: bad JSON).
        c.send_raw(b"y" * (1 << 20) + b"\n")
        assert error(c.recv())["code"] == "bad_json"
        assert c.request({"op": "ping"})["ok"]


def test_daemon_crlf_blank_lines_and_last_line_without_newline(daemon):
    d = daemon()
    with d.connect() as c:
        c.send_raw(b'\n  \n{"op":"ping"}\r\n')
        assert c.recv()["ok"]
        # The peer closes its side after a line without newline.
        c.send_raw(b'{"op":"ping"}')
        c.sock.shutdown(socket.SHUT_WR)
        assert c.recv()["ok"]
        assert c.recv_line() == b""


def test_daemon_replies_in_order_across_the_group_commit(daemon):
    d = daemon()
    with d.connect() as c:
        # Submits, then requests that depend on them, pipelined.
        replies = c.pipeline([
            submit(name="a"),
            submit(name="b"),
            {"op": "show", "id": 2},
            {"op": "ping", "bad": 1},
            submit(name="c"),
            {"op": "hold", "id": 3},
            submit(job={"image": "x"}),
            submit(name="d"),
            {"op": "list", "state": "all"},
        ])
    assert [r.get("id") for r in replies[:2]] == [1, 2]
    assert replies[2]["job"]["id"] == 2 and replies[2]["job"]["name"] == "b"
    assert error(replies[3])["code"] == "bad_request"
    assert replies[4]["id"] == 3
    assert replies[5] == {"ok": True, "state": "held"}
    assert error(replies[6])["code"] == "invalid_job"
    assert replies[7]["id"] == 4
    assert [j["name"] for j in replies[8]["jobs"]] == ["a", "b", "c", "d"]


def test_daemon_bad_lines_behind_a_pending_submit_wait_their_turn(daemon):
    d = daemon()
    with d.connect() as c:
        sub = json.dumps(submit()).encode()
        big = b"z" * ((1 << 20) + 10)
        c.send_raw(sub + b"\n" + b'{"op":"ping"}\x00{"a":1}\n' + sub +
                   b"\n\xff\n" + sub + b"\n" + big + b"\n" + sub +
                   b'\n{"op":"show","id":4}\n')
        replies = [c.recv() for _ in range(8)]
    assert replies[0]["id"] == 1
    assert error(replies[1])["code"] == "bad_json"
    assert replies[2]["id"] == 2
    assert error(replies[3])["code"] == "bad_utf8"
    assert replies[4]["id"] == 3
    assert error(replies[5])["code"] == "line_too_long"
    assert replies[6]["id"] == 4
    assert replies[7]["job"]["id"] == 4


def test_daemon_submit_overrides_and_show(daemon):
    d = daemon()
    r = d.request(submit(name="ovr", priority=5, hold=True))
    assert r["ok"], r
    job = d.request({"op": "show", "id": r["id"]})["job"]
    assert job["name"] == "ovr"
    assert job["priority"] == 5
    assert job["state"] == "held"
    assert job["owner"] == os.getuid()
    assert job["accelerator"] == {"type": "nvidia-tesla-t4", "count": 1}
    assert job["spec"]["name"] == "ovr"
    assert job["spec"]["image"] == JOB["image"]
    assert job["attempts_list"] == []
    assert job["events"][0]["to"] == "held"
    assert job["events"][0]["from"] is None
    assert job["current"] is None
    # The spec checks overrides too.
    e = error(d.request(submit(name="bad name!")))
    assert e["code"] == "invalid_job" and e["field"] == "name"
    e = error(d.request(submit(priority=10 ** 6)))
    assert e["code"] == "invalid_job" and e["field"] == "priority"


def test_daemon_why_without_provider(daemon):
    d = daemon()
    qid = d.request(submit())["id"]
    hid = d.request(submit(hold=True))["id"]
    assert d.request({"op": "show", "id": qid})["job"]["why"] == \
        "no provider configured"
    assert d.request({"op": "show", "id": hid})["job"]["why"] == \
        "held: 'gpuq release' lets it start"
    for op in ("plan", "quotas", "prices"):
        e = error(d.request({"op": op}))
        assert e["code"] == "unavailable"
        assert "[gcp] project" in e["message"]


def test_daemon_cancel_hold_release(daemon):
    d = daemon()
    with d.connect() as c:
        a = c.request(submit())["id"]
        b = c.request(submit(hold=True))["id"]
        assert c.request({"op": "hold", "id": a}) == \
            {"ok": True, "state": "held"}
        assert c.request({"op": "hold", "id": a})["state"] == "held"
        assert c.request({"op": "release", "id": a})["state"] == "queued"
        assert c.request({"op": "release", "id": a})["state"] == "queued"
        assert c.request({"op": "cancel", "id": b})["state"] == "cancelled"
        e = error(c.request({"op": "cancel", "id": b}))
        assert e["code"] == "conflict" and "cancelled" in e["message"]
        e = error(c.request({"op": "hold", "id": b}))
        assert e["code"] == "conflict"
        e = error(c.request({"op": "release", "id": b}))
        assert e["code"] == "conflict"
        for op in ("cancel", "hold", "release", "show"):
            e = error(c.request({"op": op, "id": 999}))
            assert e["code"] == "not_found", e
        events = c.request({"op": "show", "id": a})["job"]["events"]
        assert [(e["from"], e["to"]) for e in events] == [
            (None, "queued"), ("queued", "held"), ("held", "queued")]
        assert "by uid" in events[1]["message"]


def test_daemon_list_pages_filters_and_counts(daemon):
    d = daemon()
    with d.connect() as c:
        ids = [r["id"] for r in c.pipeline(
            [submit(name="n%d" % (i % 3), hold=(i % 5 == 0))
             for i in range(250)])]
        assert ids == list(range(1, 251))
        c.request({"op": "cancel", "id": 2})
        r = c.request({"op": "list"})
        assert len(r["jobs"]) == 100 and r["next"] == 101
        assert r["counts"]["queued"] == 199
        assert r["counts"]["held"] == 50
        assert r["counts"]["cancelled"] == 1
        assert 2 not in [j["id"] for j in r["jobs"]]   # live by default
        seen, after = [], 0
        while True:
            r = c.request({"op": "list", "state": "all", "limit": 70,
                           "after": after})
            seen += [j["id"] for j in r["jobs"]]
            if "next" not in r:
                break
            after = r["next"]
        assert seen == ids
        r = c.request({"op": "list", "state": ["held"], "limit": 1000})
        assert {j["id"] for j in r["jobs"]} == set(range(1, 251, 5))
        r = c.request({"op": "list", "state": ["held", "cancelled"],
                       "name": "n1", "limit": 1000})
        assert all(j["name"] == "n1" for j in r["jobs"])
        assert {j["state"] for j in r["jobs"]} == {"held", "cancelled"}
        r = c.request({"op": "list", "owner": os.getuid() + 1})
        assert r["jobs"] == [] and "next" not in r
        r = c.request({"op": "list", "after": 250})
        assert r["jobs"] == [] and "next" not in r


CLIENT = (
    "import json, socket, sys\n"
    "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
    "f = s.makefile('rwb')\n"
    "for line in sys.stdin:\n"
    "    f.write(line.encode()); f.flush()\n"
    "    print(f.readline().decode().strip(), flush=True)\n")


def as_user(d, uid, groups, *reqs):
    """Send REQS on one connection as UID (primary group UID too) with
    supplementary GROUPS."""
    p = subprocess.run(
        [sys.executable, "-c", CLIENT, d.socket], user=uid, group=uid,
        extra_groups=groups, capture_output=True, text=True,
        input="".join(json.dumps(r) + "\n" for r in reqs), timeout=20)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as "
                    "other users")
def test_daemon_only_owner_root_or_admin_change_a_job(daemon):
    # nogroup (65534) exists on every Debian system: the admin group.
    d = daemon("[daemon]\nadmin_group = nogroup\n")
    os.chmod(d.socket, 0o666)
    root_job = d.request(submit())["id"]

    own, own2, cancel_root, hold_root, show_root, cancel_own = as_user(
        d, 4242, [],
        submit(),
        submit(),
        {"op": "cancel", "id": root_job},
        {"op": "hold", "id": root_job},
        {"op": "show", "id": root_job},
        {"op": "cancel", "id": root_job + 1})
    assert own["ok"] and own["id"] == root_job + 1
    e = error(cancel_root)
    assert e["code"] == "forbidden"
    assert e["field"] == "id"
    assert 'owner, root or members of group "nogroup"' in e["message"]
    assert error(hold_root)["code"] == "forbidden"
    assert show_root["ok"]                  # anyone may look
    assert cancel_own["state"] == "cancelled"
    r = d.request({"op": "show", "id": own2["id"]})
    assert r["job"]["owner"] == 4242
    # Root may change anyone's job.
    assert d.request({"op": "hold", "id": own2["id"]})["state"] == "held"
    # A member of the admin group (supplementary) may too.
    (rel,) = as_user(d, 4343, [65534],
                     {"op": "release", "id": own2["id"]})
    assert rel == {"ok": True, "state": "queued"}
    (hold,) = as_user(d, 4343, [], {"op": "hold", "id": own2["id"]})
    assert error(hold)["code"] == "forbidden"
