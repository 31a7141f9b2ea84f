"""gpuqd under systemd, and the bash completion of gpuq.

No systemd can be booted here, so the units are checked the way a packager
would before shipping them: `systemd-analyze verify` (they load, their
executables exist, their settings parse) and `systemd-analyze security
--offline` (the sandbox rates OK or better). The units must also agree
with each other and with the code: the socket path with gpuq's default,
the user and directories with the sysusers/tmpfiles snippets, the default
gpuqd.conf with the daemon's own defaults.

The completion is tested by sourcing it into bash and calling its
function as bash would, with COMP_WORDS/COMP_CWORD set; job ids come
from a stub gpuq and, when the binaries are built, from a real gpuqd.

Environment: top_srcdir, top_builddir (tests/run-pytest sets them).
"""

import configparser
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import gpuqdtest  # noqa: E402

SRC = os.path.abspath(os.environ.get(
    "top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.path.abspath(os.environ.get("top_builddir", SRC))
GPUQD = os.path.join(BUILD, "gpuqd")
GPUQ = os.path.join(BUILD, "gpuq")
COMPLETION = os.path.join(SRC, "client", "gpuq-completion.bash")
ANALYZE = shutil.which("systemd-analyze")

needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze not found (apt-get install systemd)")

MAX_EXPOSURE = 2.0      # "OK" or better in systemd-analyze security


def src(*parts):
    return os.path.join(SRC, *parts)


def read_unit(path):
    """A unit file as {section: {key: [values]}} (keys may repeat)."""
    unit = {}
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = unit.setdefault(line.strip("[]"), {})
                continue
            key, _, value = line.partition("=")
            section.setdefault(key.strip(), []).append(value.strip())
    return unit


def one(unit, section, key):
    values = unit[section][key]
    assert len(values) == 1, f"{key}= set {len(values)} times"
    return values[0]


def render_units(tmp_path):
    """gpuqd.service with ExecStart at a real gpuqd (the built one, else a
    stand-in), and gpuqd.socket beside it. Returns the service's path."""
    if os.access(GPUQD, os.X_OK):
        sbindir = BUILD
    else:
        sbindir = tmp_path / "sbin"
        sbindir.mkdir()
        os.symlink(shutil.which("true"), sbindir / "gpuqd")
    text = open(src("systemd", "gpuqd.service.in")).read()
    text = text.replace("@sbindir@", str(sbindir))
    text = text.replace("@sysconfdir@", "/etc")
    assert not re.findall(r"@\w+@", text), \
        "gpuqd.service.in has a placeholder systemd/local.mk does not fill"
    service = tmp_path / "gpuqd.service"
    service.write_text(text)
    shutil.copy(src("systemd", "gpuqd.socket"), tmp_path / "gpuqd.socket")
    return service


# --- the units ---------------------------------------------------------

@needs_analyze
def test_units_verify(tmp_path):
    service = render_units(tmp_path)
    r = subprocess.run([ANALYZE, "verify", "--man=no", str(service),
                        str(tmp_path / "gpuqd.socket")],
                       capture_output=True, text=True, timeout=60)
    ours = [l for l in (r.stdout + r.stderr).splitlines() if "gpuq" in l]
    assert r.returncode == 0 and not ours, r.stdout + r.stderr


@needs_analyze
def test_unit_comment_hints_verify(tmp_path):
    """The settings the unit's comments suggest for a drop-in are valid."""
    service = render_units(tmp_path)
    text = service.read_text()
    hints = re.findall(r"^#\s+((?:LoadCredential|Environment)=\S+)$", text,
                       re.M)
    assert len(hints) >= 3, hints
    for i, hint in enumerate(hints):
        d = tmp_path / f"hint{i}"
        d.mkdir()
        unit = d / "gpuqd.service"
        unit.write_text(text.replace("[Service]\n", f"[Service]\n{hint}\n"))
        shutil.copy(tmp_path / "gpuqd.socket", d / "gpuqd.socket")
        r = subprocess.run([ANALYZE, "verify", "--man=no", str(unit)],
                           capture_output=True, text=True, timeout=60)
        ours = [l for l in (r.stdout + r.stderr).splitlines() if "gpuq" in l]
        assert r.returncode == 0 and not ours, (hint, r.stdout + r.stderr)


@needs_analyze
def test_service_security_exposure(tmp_path):
    service = render_units(tmp_path)
    r = subprocess.run([ANALYZE, "security", "--offline=yes", "--no-pager",
                        str(service)],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for gpuqd\.service: "
                  r"([0-9.]+) (\w+)", r.stdout)
    assert m, r.stdout + r.stderr
    exposure = float(m.group(1))
    bad = [l for l in r.stdout.splitlines() if l.startswith("✗")]
    assert exposure <= MAX_EXPOSURE, \
        f"exposure {exposure} {m.group(2)}; not covered:\n" + "\n".join(bad)


def test_built_service_substituted():
    built = os.path.join(BUILD, "systemd", "gpuqd.service")
    assert os.path.exists(built), f"{built} is not built: run make"
    text = open(built).read()
    assert not re.findall(r"@\w+@", text)
    exec_start = one(read_unit(built), "Service", "ExecStart")
    assert re.fullmatch(r"/\S*/gpuqd --foreground", exec_start), exec_start


def test_service_settings():
    unit = read_unit(src("systemd", "gpuqd.service.in"))
    svc = unit["Service"]
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "main"
    assert one(unit, "Service", "ExecStart") == "@sbindir@/gpuqd --foreground"
    assert "-HUP $MAINPID" in one(unit, "Service", "ExecReload")
    assert one(unit, "Service", "WatchdogSec") == "30s"
    assert one(unit, "Service", "User") == "gpuq"
    assert one(unit, "Service", "Group") == "gpuq"
    # gpuqd's defaults: --state-dir /var/lib/gpuq, socket in /run/gpuq.
    assert one(unit, "Service", "StateDirectory") == "gpuq"
    assert one(unit, "Service", "RuntimeDirectory") == "gpuq"
    # Without this, stopping gpuqd would delete gpuqd.socket's socket.
    assert one(unit, "Service", "RuntimeDirectoryPreserve") == "yes"
    assert one(unit, "Service", "CapabilityBoundingSet") == ""
    # SO_PEERCRED reports every client as nobody inside a user namespace.
    assert "PrivateUsers" not in svc
    assert "gpuqd.socket" in one(unit, "Unit", "Requires")
    assert one(unit, "Install", "Also") == "gpuqd.socket"


def test_socket_matches_client_default():
    proto = open(src("common", "proto.h")).read()
    m = re.search(r'#define\s+GPUQ_SOCKET_DEFAULT\s+"([^"]+)"', proto)
    assert m, "GPUQ_SOCKET_DEFAULT not found in common/proto.h"
    sock = read_unit(src("systemd", "gpuqd.socket"))
    assert one(sock, "Socket", "ListenStream") == m.group(1)
    assert one(sock, "Socket", "SocketMode") == "0660"
    assert one(sock, "Socket", "SocketUser") == "root"
    assert one(sock, "Socket", "SocketGroup") == "gpuq"
    assert one(sock, "Socket", "Service") == "gpuqd.service"
    assert one(sock, "Install", "WantedBy") == "sockets.target"


def test_sysusers_tmpfiles_match_service():
    users = [l.split() for l in open(src("systemd", "gpuq.sysusers"))
             if l.strip() and not l.startswith("#")]
    # The daemon's user (and group gpuq, the socket's), and gpuq-admin,
    # the default admin_group: a group of its own, not the socket's.
    assert [u[:3] for u in users] == [["u", "gpuq", "-"],
                                      ["g", "gpuq-admin", "-"]]
    assert users[0][-1] == "/var/lib/gpuq"
    sock = read_unit(src("systemd", "gpuqd.socket"))
    assert one(sock, "Socket", "SocketGroup") == "gpuq"
    dirs = {l.split()[1]: l.split() for l in open(src("systemd",
                                                      "gpuq.tmpfiles"))
            if l.strip() and not l.startswith("#")}
    unit = read_unit(src("systemd", "gpuqd.service.in"))
    state_mode = one(unit, "Service", "StateDirectoryMode")
    run_mode = one(unit, "Service", "RuntimeDirectoryMode")
    assert dirs["/var/lib/gpuq"] == ["d", "/var/lib/gpuq", state_mode,
                                     "gpuq", "gpuq", "-"]
    assert dirs["/run/gpuq"] == ["d", "/run/gpuq", run_mode,
                                 "gpuq", "gpuq", "-"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("systemd-sysusers")
                    or not shutil.which("systemd-tmpfiles"),
                    reason="needs root and systemd-sysusers/systemd-tmpfiles")
def test_sysusers_tmpfiles_apply(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    subprocess.run(["systemd-sysusers", f"--root={root}",
                    src("systemd", "gpuq.sysusers")],
                   check=True, capture_output=True, timeout=60)
    passwd = (root / "etc" / "passwd").read_text()
    m = re.search(r"^gpuq:x:(\d+):(\d+):gpuq daemon:/var/lib/gpuq:", passwd,
                  re.M)
    assert m, passwd
    group = (root / "etc" / "group").read_text()
    assert re.search(rf"^gpuq:x:{m.group(2)}:", group, re.M)
    # gpuq-admin exists, apart from gpuq, and nobody is in it.
    a = re.search(r"^gpuq-admin:x:(\d+):(.*)$", group, re.M)
    assert a and a.group(1) != m.group(2) and a.group(2) == "", group
    subprocess.run(["systemd-tmpfiles", f"--root={root}", "--create",
                    src("systemd", "gpuq.tmpfiles")],
                   check=True, capture_output=True, timeout=60)
    st = os.stat(root / "var" / "lib" / "gpuq")
    assert (st.st_mode & 0o7777, st.st_uid) == (0o700, int(m.group(1)))
    st = os.stat(root / "run" / "gpuq")
    assert (st.st_mode & 0o7777, st.st_uid) == (0o755, int(m.group(1)))


# --- the default gpuqd.conf ---------------------------------------------

def conf_value(v):
    """A default as gpuqd reads it: durations ("24h", "86400s") in
    seconds, anything else as written."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if re.fullmatch(r"(\d+[smhd])+", v):
        return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(\w)", v))
    return v


def daemon_conf_keys():
    """{(section, key): default} from the key table in daemon/conf.c,
    with the macros it uses resolved from common/proto.h and
    providers/gcp/gcp-defaults.h (GCP_DEFAULT_TEXT(N) "s" is N seconds)."""
    path = src("daemon", "conf.c")
    macros = {}
    for h in (src("common", "proto.h"),
              src("providers", "gcp", "gcp-defaults.h")):
        macros.update(re.findall(r'#define\s+(\w+)\s+\\?\s*"([^"]*)"',
                                 open(h).read()))
        macros.update(re.findall(r"#define\s+(\w+)\s+(\d+)\b",
                                 open(h).read()))
    text = open(path).read()
    text = text[text.index("conf_table[]"):]
    keys = {}
    for sec, name, default, num, unit in re.findall(
            r'(?:KEYR?\(|\{)\s*"(\w+)",\s*"(\w+)",\s*CONF_\w+,\s*'
            r'(GCP_DEFAULT_TEXT\((\w+)\)(?:\s*"(\w*)")?|"[^"]*"|\w+)',
            text):
        if num:
            default = macros[num] + unit
        elif default.startswith('"'):
            default = default[1:-1]
        else:
            default = macros[default]
        keys[(sec, name)] = conf_value(default)
    assert keys, "no keys found in daemon/conf.c's conf_table"
    return keys


def default_conf_keys():
    """{(section, key): default} of the commented-out keys in gpuqd.conf."""
    keys = {}
    section = None
    for line in open(src("systemd", "gpuqd.conf")):
        m = re.match(r"\[(\w+)\]$", line.strip())
        if m:
            section = m.group(1)
            continue
        m = re.match(r"#(\w+) =(?: (.*))?$", line.rstrip("\n"))
        if m:
            keys[(section, m.group(1))] = conf_value(m.group(2) or "")
    return keys


def test_default_conf_lists_every_key():
    """Every key of daemon/conf.c, with its default, in table order."""
    ours = default_conf_keys()
    theirs = daemon_conf_keys()
    assert list(ours) == list(theirs)
    assert ours == theirs


def uncommented_conf(path, sock, state):
    """gpuqd.conf with every key set to its documented default, except the
    socket and state directory, which go to the test's own."""
    out = []
    for line in open(src("systemd", "gpuqd.conf")):
        m = re.match(r"#(\w+) =", line)
        if m:
            line = line[1:]
            if m.group(1) == "socket":
                line = f"socket = {sock}\n"
            elif m.group(1) == "state_dir":
                line = f"state_dir = {state}\n"
        out.append(line)
    with open(path, "w") as f:
        f.write("".join(out))


# --- a private gpuqd ----------------------------------------------------

def private_gpuqd(d):
    """gpuqd (tests/gpuqdtest.py) in directory D, logging at info."""
    return gpuqdtest.Gpuqd(args=["--log-level", "info"], dir=str(d))


def test_default_conf_is_what_gpuqd_uses(tmp_path):
    """Every key of the shipped gpuqd.conf, uncommented, is accepted, and
    its value is the daemon's own default: the effective configuration
    gpuqd logs is the same with the file as with an empty one."""
    logs = []
    for name in ("empty", "shipped"):
        d = tmp_path / name
        d.mkdir()
        daemon = private_gpuqd(d)
        if name == "shipped":
            uncommented_conf(daemon.conf, daemon.socket, daemon.state_dir)
        try:
            daemon.start()
        finally:
            daemon.stop()
        text = daemon.read_log().replace(str(d), "DIR")
        lines = re.findall(r"config \[(?:daemon|gcp|scheduler)\].*", text)
        assert len(lines) == 3, \
            f"gpuqd logged no effective configuration:\n{text}"
        logs.append(lines)
    assert logs[0] == logs[1]


# --- the bash completion ------------------------------------------------

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash not found")


def complete(*words, env=None, cwd=None):
    """COMPREPLY for the command line WORDS (the last is being typed)."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); '
              'COMP_CWORD=$(($# - 1)); _gpuq; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    e = dict(os.environ)
    e.pop("GPUQ_SOCKET", None)
    e.update(env or {})
    r = subprocess.run([BASH, "--norc", "--noprofile", "-c", script, "bash",
                        COMPLETION, *words],
                       capture_output=True, text=True, env=e, cwd=cwd,
                       timeout=30)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [w for w in r.stdout.split("\n") if w]


def client_commands():
    """The command names of gpuq's table, cli_cmds[] in client/gpuq.c."""
    text = open(src("client", "gpuq.c")).read()
    names = re.findall(r'^\t\{ "([a-z-]+)", cli_\w+_exec', text, re.M)
    assert names, "no commands found in client/gpuq.c's cli_cmds[]"
    return names


def bash_eval(snippet):
    r = subprocess.run([BASH, "--norc", "--noprofile", "-c",
                        'source "$1"; ' + snippet, "bash", COMPLETION],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout


@needs_bash
def test_completion_commands():
    # Without a runnable gpuq: the built-in list, all real commands.
    fallback = complete("/nonexistent/gpuq", "")
    assert set(fallback) <= set(client_commands())
    assert complete("/nonexistent/gpuq", "s") == ["submit", "status",
                                                  "show"]
    assert complete("/nonexistent/gpuq", "--socket", "/tmp/x.sock",
                    "pi") == ["ping"]
    assert complete("/nonexistent/gpuq", "-s", "/tmp/x.sock", "-t", "5s",
                    "pi") == ["ping"]
    assert complete("/nonexistent/gpuq", "help", "h") == ["history", "hold",
                                                          "help"]
    assert complete("/nonexistent/gpuq", "help", "hold", "") == []


@needs_bash
def test_completion_commands_from_gpuq_help():
    gpuqdtest.require(GPUQ, "gpuq")
    assert complete(GPUQ, "") == client_commands()


@needs_bash
def test_completion_options():
    assert complete("gpuq", "--") == ["--socket", "--timeout", "--help",
                                      "--version"]
    assert complete("gpuq", "status", "--") == [
        "--all", "--expand", "--state", "--user", "--limit", "--json",
        "--help"]
    assert complete("gpuq", "submit", "--h") == ["--hold", "--help"]
    assert complete("gpuq", "submit", "--d") == ["--dry-run"]
    assert complete("gpuq", "submit", "--from", "") == ["vertex", "batch"]
    assert complete("gpuq", "submit", "--from=b") == ["--from=batch"]
    assert complete("gpuq", "cancel", "-") == ["--help"]


def long_options(path, after=None):
    """The long options of the first `struct option` table in PATH (after
    the text AFTER, if given)."""
    text = open(path).read()
    if after:
        text = text[text.index(after):]
    table = text[text.index("struct option"):]
    table = table[:table.index("{ NULL")]
    return set(re.findall(r'\{ "([a-z-]+)",\s*\w+_argument', table))


@needs_bash
def test_completion_options_match_client():
    """Each command's long options are those its getopt table knows."""
    cases = [("", src("client", "gpuq.c"), "\nmain(")]
    for cmd in client_commands():
        path = src("client", f"cli-{cmd}.c")
        if os.path.exists(path) and "struct option" in open(path).read():
            cases.append((cmd, path, None))
    assert len(cases) > 1
    for cmd, path, after in cases:
        ours = {o[2:] for o in bash_eval(f"_gpuq_options '{cmd}'").split()
                if o.startswith("--")}
        assert ours == long_options(path, after), (cmd or "gpuq", path)


@needs_bash
def test_completion_values():
    assert complete("gpuq", "status", "--state", "c") == [
        "cancelling", "cancelled"]
    # '=' is a word break: bash hands "--state" "=" "ru".
    assert complete("gpuq", "status", "--state", "=", "ru") == ["running"]
    assert "held" in complete("gpuq", "status", "--state", "=")
    # '=' not a word break: one word, answered whole.
    assert complete("gpuq", "status", "--state=ru") == ["--state=running"]
    # A list of states: the last item.
    assert complete("gpuq", "status", "--state", "queued,ru") == [
        "queued,running"]
    assert complete("gpuq", "status", "--state", "l") == [
        "launching", "live"]
    assert complete("gpuq", "quotas", "--gpu", "nvidia-h") == [
        "nvidia-h100-80gb", "nvidia-h100-mega-80gb", "nvidia-h200-141gb"]
    assert complete("gpuq", "submit", "--name", "") == []
    assert complete("gpuq", "--timeout", "") == []
    assert complete("gpuq", "status", "-u", "roo") == ["root"]
    assert complete("gpuq", "history", "--by", "") == [
        "user", "gpu", "service", "day"]
    assert complete("gpuq", "history", "--since", "") == []
    assert complete("gpuq", "wait", "--timeout", "") == []
    assert complete("gpuq", "submit", "--w") == ["--wait"]


def test_completion_states_match_store():
    """The states gpuq --state takes are the store's job states."""
    names = re.findall(r"^\tJOB_([A-Z]+)(?: = 0)?,", open(src(
        "store", "store.h")).read(), re.M)
    text = open(COMPLETION).read()
    m = re.search(r"^_gpuq_states='([^']*)'", text, re.M)
    assert m and sorted(m.group(1).split()) == sorted(n.lower()
                                                      for n in names)


def test_completion_gpus_match_gpu_table():
    table = open(src("common", "gpu.c")).read()
    names = re.findall(r'^\t\{ "(nvidia-[a-z0-9-]+)"', table, re.M)
    assert names
    text = open(COMPLETION).read()
    m = re.search(r"^_gpuq_gpus='([^']*)'", text, re.M)
    assert m and m.group(1).split() == names


@needs_bash
def test_completion_files(tmp_path):
    for name in ("train.yaml", "sweep.yml", "job.json", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "jobs").mkdir()
    got = complete("gpuq", "submit", "", cwd=tmp_path)
    assert sorted(got) == ["job.json", "jobs", "sweep.yml", "train.yaml"]
    assert complete("gpuq", "plan", "no", cwd=tmp_path) == ["notes.txt"]
    assert complete("gpuq", "submit", "train.yaml", "", cwd=tmp_path) == []


STUB = """#!/bin/sh
echo "$@" >> "{log}"
cat <<'EOF'
[{{"id":142,"name":"a \\"id\\":9","state":"queued","current":{{"number":1}}}},
 {{"id": 143, "why":",\\"id\\":7"}}, {{
   "id" : 150, "accelerator":{{"type":"nvidia-l4","count":1}}}}]
EOF
"""


@needs_bash
def test_completion_ids_from_stub(tmp_path):
    log = tmp_path / "args"
    stub = tmp_path / "gpuq"
    stub.write_text(STUB.format(log=log))
    stub.chmod(0o755)
    assert complete(str(stub), "cancel", "") == ["142", "143", "150"]
    assert complete(str(stub), "hold", "14") == ["142", "143"]
    # Each id once; show takes one.
    assert complete(str(stub), "release", "142", "") == ["143", "150"]
    assert complete(str(stub), "show", "142", "") == []
    # The socket: --socket PATH, --socket=PATH, then $GPUQ_SOCKET.
    complete(str(stub), "--socket", "/a.sock", "show", "")
    complete(str(stub), "--socket", "=", "/b.sock", "cancel", "")
    complete(str(stub), "cancel", "", env={"GPUQ_SOCKET": "/c.sock"})
    complete(str(stub), "-s", "/d.sock", "hold", "")
    complete(str(stub), "release", "")
    calls = [c for c in log.read_text().splitlines() if c != "help"]
    assert calls[-5].startswith("--timeout 2s --socket /a.sock status ")
    assert calls[-5].endswith(" --all")
    assert calls[-4].startswith("--timeout 2s --socket /b.sock status ")
    assert calls[-3].startswith("--timeout 2s --socket /c.sock status ")
    assert calls[-2].startswith("--timeout 2s --socket /d.sock status ")
    assert calls[-2].endswith(" --state queued")
    assert calls[-1] == "--timeout 2s status --json --limit 1000 " \
        "--state held"
    # Found on PATH when typed as a bare name.
    env = {"PATH": f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    assert complete("gpuq", "show", "15", env=env) == ["150"]


@needs_bash
def test_completion_ids_quiet_when_daemon_down(tmp_path):
    gpuqdtest.require(GPUQ, "gpuq")
    t = time.monotonic()
    assert complete(GPUQ, "--socket", str(tmp_path / "none.sock"),
                    "cancel", "") == []
    assert time.monotonic() - t < 5


@needs_bash
def test_completion_ids_from_daemon(tmp_path):
    daemon = private_gpuqd(tmp_path).start()
    try:
        ids = []
        for name in ("x", "y"):
            r = daemon.request({"op": "submit", "job": {
                "name": name, "image": "busybox",
                "accelerator": {"type": "nvidia-tesla-t4", "count": 1}}})
            assert r.get("ok"), r
            ids.append(str(r["id"]))
        got = complete(GPUQ, "--socket", daemon.socket, "cancel", "")
        assert sorted(got, key=int) == ids
        got = complete(GPUQ, "show", "", env={"GPUQ_SOCKET": daemon.socket})
        assert sorted(got, key=int) == ids
        got = complete(GPUQ, "--socket", daemon.socket, "cancel", ids[0], "")
        assert got == [ids[1]]
        # hold offers queued jobs, release held ones, cancel live ones.
        r = daemon.request({"op": "hold", "id": int(ids[0])})
        assert r.get("ok"), r
        assert complete(GPUQ, "-s", daemon.socket, "hold", "") == [ids[1]]
        assert complete(GPUQ, "-s", daemon.socket, "release", "") == [ids[0]]
        r = daemon.request({"op": "cancel", "id": int(ids[1])})
        assert r.get("ok"), r
        assert complete(GPUQ, "-s", daemon.socket, "cancel", "") == [ids[0]]
        got = complete(GPUQ, "-s", daemon.socket, "show", "")
        assert sorted(got, key=int) == ids
    finally:
        daemon.stop()
