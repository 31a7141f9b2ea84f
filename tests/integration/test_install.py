"""`make install` puts everything a newcomer needs where systemd, man and
bash will look for it, and `make uninstall` takes it away again.

Runs `make install DESTDIR=<tmp>` in the build directory and checks the
tree against the make variables that say where things go. The core set
(gpuqd, gpuq, the units, the sysusers/tmpfiles snippets, gpuqd.conf, the
completion) must be there; man pages and the bundled price table are
checked for what the source tree holds.

Environment: top_srcdir, top_builddir (tests/run-pytest sets them).
"""

import glob
import os
import re
import stat
import subprocess

import pytest

SRC = os.path.abspath(os.environ.get(
    "top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.path.abspath(os.environ.get("top_builddir", SRC))

DIRS = ["bindir", "sbindir", "mandir", "pkgdatadir", "systemdsystemunitdir",
        "sysusersdir", "tmpfilesdir", "gpuqconfdir", "bashcompletiondir"]

# A makefile read after the build's own, to print its variables.
PRINT_MK = "gpuq-print-%:\n\t@echo 'gpuq-print=$($*)'\n"


def make_env():
    """The environment for a make of our own: not the jobserver or the
    command-line variables of a `make check` that may be running us."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    return env


def make(*args, check=True):
    r = subprocess.run(["make", "-C", BUILD, *args], capture_output=True,
                       text=True, env=make_env(), timeout=600)
    if check and r.returncode != 0:
        pytest.fail(f"make {' '.join(args)} failed ({r.returncode}):\n"
                    f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    mk = tmp_path_factory.mktemp("mk") / "print.mk"
    mk.write_text(PRINT_MK)
    out = {}
    for d in DIRS:
        r = make("-s", "--no-print-directory", "-f", "Makefile",
                 "-f", str(mk), f"gpuq-print-{d}")
        # make may regenerate its Makefile first, and say so.
        m = re.search(r"^gpuq-print=(.*)$", r.stdout, re.M)
        assert m, r.stdout + r.stderr
        out[d] = m.group(1).strip()
        assert out[d].startswith("/"), f"{d} = {out[d]!r}"
    return out


@pytest.fixture(scope="module")
def inst(tmp_path_factory, dirs):
    """DESTDIR after one `make install`."""
    dest = tmp_path_factory.mktemp("destdir")
    make("install", f"DESTDIR={dest}")
    return str(dest)


def path(inst, dirs, d, *parts):
    return os.path.join(inst + dirs[d], *parts)


def assert_file(p, mode=None):
    assert os.path.isfile(p), f"not installed: {p}"
    if mode is not None:
        got = stat.S_IMODE(os.stat(p).st_mode)
        assert got & mode == mode, f"{p}: mode {got:o}, want {mode:o}"


def test_binaries(inst, dirs):
    assert_file(path(inst, dirs, "sbindir", "gpuqd"), 0o755)
    assert_file(path(inst, dirs, "bindir", "gpuq"), 0o755)


def test_units(inst, dirs):
    service = path(inst, dirs, "systemdsystemunitdir", "gpuqd.service")
    assert_file(service)
    assert_file(path(inst, dirs, "systemdsystemunitdir", "gpuqd.socket"))
    text = open(service).read()
    assert not re.findall(r"@\w+@", text)
    # The unit starts the gpuqd this install put in sbindir.
    m = re.search(r"^ExecStart=(\S+) --foreground$", text, re.M)
    assert m and m.group(1) == os.path.join(dirs["sbindir"], "gpuqd")


def test_sysusers_tmpfiles(inst, dirs):
    for d, name in (("sysusersdir", "gpuq.sysusers"),
                    ("tmpfilesdir", "gpuq.tmpfiles")):
        p = path(inst, dirs, d, "gpuq.conf")
        assert_file(p)
        assert open(p).read() == open(os.path.join(SRC, "systemd",
                                                   name)).read()


def test_default_config(inst, dirs):
    p = path(inst, dirs, "gpuqconfdir", "gpuqd.conf")
    assert_file(p)
    assert open(p).read() == open(os.path.join(SRC, "systemd",
                                               "gpuqd.conf")).read()
    assert dirs["gpuqconfdir"].endswith("/gpuq")


def test_completion(inst, dirs):
    assert dirs["bashcompletiondir"].endswith("/bash-completion/completions")
    p = path(inst, dirs, "bashcompletiondir", "gpuq")
    assert_file(p)
    assert open(p).read() == open(os.path.join(SRC, "client",
                                               "gpuq-completion.bash")).read()


def test_man_pages(inst, dirs):
    pages = glob.glob(os.path.join(SRC, "man", "*.[1-8]"))
    assert pages, f"no manual pages in {SRC}/man"
    for page in pages:
        name = os.path.basename(page)
        assert_file(path(inst, dirs, "mandir", "man" + name[-1], name))


def test_price_table(inst, dirs):
    # (The source tree may itself sit under a directory named tests/.)
    tables = [p for p in glob.glob(os.path.join(SRC, "*", "prices.csv")) +
              glob.glob(os.path.join(SRC, "*", "*", "prices.csv"))
              if not os.path.relpath(p, SRC).startswith("tests/")]
    assert tables, f"no bundled prices.csv in {SRC}"
    assert_file(path(inst, dirs, "pkgdatadir", "prices.csv"))


def test_reinstall_keeps_edited_config(tmp_path, dirs):
    dest = str(tmp_path)
    make("install", f"DESTDIR={dest}")
    conf = path(dest, dirs, "gpuqconfdir", "gpuqd.conf")
    with open(conf, "a") as f:
        f.write("[gcp]\nproject = mine\n")
    edited = open(conf).read()
    make("install", f"DESTDIR={dest}")
    assert open(conf).read() == edited
    # Uninstall takes everything but the administrator's edits.
    make("uninstall", f"DESTDIR={dest}")
    left = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
    assert left == [conf]


def test_uninstall_leaves_nothing(tmp_path):
    dest = str(tmp_path)
    make("install", f"DESTDIR={dest}")
    make("uninstall", f"DESTDIR={dest}")
    left = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
    assert left == []


# --- the README's build commands ------------------------------------------

def sh_blocks(text):
    """The ```sh blocks of a Markdown TEXT, as lists of lines."""
    return [b.splitlines() for b in re.findall(r"^```sh\n(.*?)^```", text,
                                                re.M | re.S)]


def configured_dirs(lines):
    """Follow LINES of shell as the README's reader types them in the
    source tree: `cd` moves, `configure` configures the directory it runs
    in, `make` builds where it runs. Returns (configured, made): the
    directories (relative to the source tree, "." for itself) where
    configure and make ran."""
    cwd, configured, made = ".", [], []
    for line in lines:
        line = line.split("#", 1)[0]
        for cmd in re.split(r"&&|\|\||;", line):
            words = cmd.split()
            if words[:1] == ["sudo"]:
                words = words[1:]
            if not words:
                continue
            if words[0] == "cd":
                cwd = os.path.normpath(os.path.join(cwd, words[1]))
            elif os.path.basename(words[0]) == "configure":
                configured.append(cwd)
            elif words[0] == "make":
                made.append(cwd)
    return configured, made


def check_out_of_tree(lines):
    """Words about what is wrong with LINES, or None: configure must not
    run in the source tree (a later ./quickstart, which builds in ./build,
    then stops with "source directory already configured"), and make must
    run where configure did."""
    configured, made = configured_dirs(lines)
    if "." in configured:
        return "runs configure in the source tree"
    stray = [d for d in made if d not in configured]
    if configured and stray:
        return f"runs make in {stray[0]}, not where configure ran"
    return None


def test_check_out_of_tree_catches_in_tree_builds():
    assert check_out_of_tree(["autoreconf -fi && ./configure && make"]) == \
        "runs configure in the source tree"
    assert check_out_of_tree(["mkdir -p b && cd b && ../configure", "make",
                              "cd .. && make"]) == \
        "runs make in ., not where configure ran"
    assert check_out_of_tree(["mkdir -p b && cd b && ../configure && make",
                              "sudo make install   # ./configure"]) is None


def test_readme_builds_out_of_tree():
    """Every build the README shows configures outside the source tree, as
    ./quickstart does, so the two can be used one after the other."""
    with open(os.path.join(SRC, "README.md")) as f:
        blocks = [b for b in sh_blocks(f.read())
                  if any("configure" in line for line in b)]
    assert blocks, "README.md shows no configure command"
    for b in blocks:
        why = check_out_of_tree(b)
        assert why is None, f"README.md {why}:\n" + "\n".join(b)


def test_quickstart_builds_out_of_tree():
    with open(os.path.join(SRC, "quickstart")) as f:
        assert check_out_of_tree(f.read().splitlines()) is None
