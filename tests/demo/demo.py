#!/usr/bin/python3
"""gpuq demo: the daemon against the simulated Google Cloud, real jobs
through their whole life.

Starts tests/fakegcp with time sped up, starts gpuqd against it in a
temporary directory, asks gpuqd for the plan of each example job (the
offers it ranks by expected cost), submits them, and says for each
attempt where it went and what it was compared with. It preempts one
job and sends another's host into maintenance, and prints the next
`gpuq status` table only once gpuqd has seen each interruption. It ends
with a summary that prices each attempt by the hours the simulated
cloud ran it, stops every process it started and removes its temporary
directory (which holds a private key) unless --keep is given, also on
Ctrl-C or failure.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "fakegcp"))
sys.path.insert(0, os.path.join(TOP, "tests"))

import fakeclient  # noqa: E402
import gpuqdtest  # noqa: E402

SPEED = 120.0          # simulated seconds per real second
QUICK_SPEED = 480.0    # the same, with --quick
DEADLINE = 110.0       # real seconds for the whole demo
INTERRUPT_AFTER = 600  # simulated seconds a job runs before the demo strikes
SEEN_TIMEOUT = 30.0    # real seconds to wait for gpuqd to see a strike
TABLE_EVERY = 3.0      # real seconds between two status tables

# The example jobs, and what the demo does to them once they run.
JOBS = [
    ("resnet-t4.yaml", "preempt"),
    ("llm-a100x4.yaml", "maintenance"),
    ("sweep.yaml", None),
]


def say(msg):
    print(msg, flush=True)


def wrap(text, indent="    "):
    """TEXT on 80 columns, lines after the first indented."""
    return textwrap.fill(text, width=79, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False)


class Interrupted(Exception):
    """SIGTERM or SIGHUP: stop and clean up as for Ctrl-C."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def plans_in(text):
    """The plans in `gpuq plan --json` output, in the order of the jobs
    in the file: one object, several objects one after another, or
    objects inside a list or under a key."""
    dec = json.JSONDecoder()
    out = []

    def walk(v):
        if isinstance(v, dict):
            if "offers" in v:
                out.append(v)
                return
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        v, i = dec.raw_decode(text, i)
        walk(v)


def saving(cost, baseline):
    """"$41.20, saved $66.10 (62%) against Vertex AI on-demand", as gpuq
    prints it (client/fmt.c cli_fmt_saving)."""
    if not baseline or baseline <= 0:
        return f"${cost:.2f}"
    d = baseline - cost
    if d >= 0:
        return (f"${cost:.2f}, saved ${d:.2f} ({100 * d / baseline:.0f}%) "
                f"against Vertex AI on-demand")
    return (f"${cost:.2f}, ${-d:.2f} ({100 * -d / baseline:.0f}%) more than "
            f"Vertex AI on-demand")


def place(o):
    """'gce/us-central1-a' of an offer or an attempt."""
    return f"{o.get('provider')}/{o.get('zone') or o.get('region')}"


def model(o):
    """The kind of capacity of an offer or an attempt (gpuq-job(5)
    "capacity"), as a person says it."""
    kind = o.get("capacity") or ("spot" if o.get("spot") else "standard")
    if o.get("reservation"):
        return "reserved (%s)" % o["reservation"]
    return {"spot": "Spot", "flex": "flex-start",
            "reserved": "reserved"}.get(kind, "on-demand")


def gpu_short(name):
    """'T4' of 'nvidia-tesla-t4'."""
    n = (name or "?").lower()
    for p in ("nvidia-", "tesla-"):
        if n.startswith(p):
            n = n[len(p):]
    return n.upper()


def same_place(o, a):
    return (o.get("provider") == a.get("provider")
            and o.get("region") == a.get("region")
            and (o.get("zone") or None) == (a.get("zone") or None)
            and bool(o.get("spot")) == bool(a.get("spot")))


def alternatives(offers, chosen, prev=None):
    """Up to five offers worth naming next to CHOSEN: the next best, the
    best of every other service, the best of the other pricing model,
    and (PREV) the place of the attempt before, if it is still offered."""
    rest = [o for o in offers if o is not chosen]
    picked = []

    def add(o):
        if o is not None and all(o is not x for x in picked):
            picked.append(o)

    add(rest[0] if rest else None)
    if prev is not None:
        add(next((o for o in rest if same_place(o, prev)), None))
    for o in rest:
        if chosen is None or o.get("provider") != chosen.get("provider"):
            if all(o.get("provider") != x.get("provider") for x in picked):
                add(o)
    if chosen is not None:
        add(next((o for o in rest
                  if bool(o.get("spot")) != bool(chosen.get("spot"))), None))
    return picked[:5]


def tie(a, b):
    x, y = a.get("expected_usd", 0), b.get("expected_usd", 0)
    return abs(x - y) <= 1e-6 * max(abs(x), abs(y), 1e-9)


class Demo:
    def __init__(self, builddir, keep):
        self.builddir = os.path.abspath(builddir)
        self.gpuq_bin = os.path.join(self.builddir, "gpuq")
        self.dir = tempfile.mkdtemp(prefix="gpuq-demo-")
        self.keep = keep
        self.sock = os.path.join(self.dir, "gpuq.sock")
        self.fake = None
        self.daemon = None
        self.daemon_log = os.path.join(self.dir, "gpuqd.log")

    # -- the pieces -------------------------------------------------------

    def start_cloud(self):
        self.fake = fakeclient.FakeGCP.start(os.path.join(self.dir, "fakegcp"),
                                             speed=SPEED)
        key = fakeclient.make_service_account_key(
            self.fake, os.path.join(self.dir, "sa.json"),
            email="gpuq-demo@gpuq-demo.iam.gserviceaccount.com")
        say(f"simulated Google Cloud at {self.fake.url} "
            f"(time runs {SPEED:.0f}x)")
        return key

    def write_conf(self, key):
        conf = os.path.join(self.dir, "gpuqd.conf")
        with open(conf, "w") as f:
            f.write(f"""[daemon]
socket = {self.sock}
state_dir = {os.path.join(self.dir, "state")}

[gcp]
project = gpuq-demo
regions = us-central1, us-east1, europe-west4
providers = vertex, batch, gce
checkpoint_root = gs://gpuq-demo-checkpoints/gpuq
credentials = {key}
endpoint = {self.fake.url}

[scheduler]
poll_interval = 1s
quota_ttl = 5s
backoff_base = 1s
backoff_max = 5s
""")
        return conf

    def start_daemon(self, conf):
        with open(conf) as f:
            self.daemon = gpuqdtest.Gpuqd(f.read(), ["--log-level", "info"],
                                          dir=self.dir,
                                          builddir=self.builddir)
        try:
            self.daemon.start(timeout=5)
        except RuntimeError:
            raise SystemExit(f"demo: gpuqd did not start; see "
                             f"{self.daemon_log}")
        say("gpuqd is up")

    def gpuq(self, *args, check=True):
        return subprocess.run([self.gpuq_bin, "--socket", self.sock, *args],
                              capture_output=True, text=True, check=check)

    def jobs(self):
        out = self.gpuq("status", "--all", "--json").stdout
        return json.loads(out)

    # -- the story ---------------------------------------------------------

    def show(self, jid):
        out = json.loads(self.gpuq("show", "--json", str(jid)).stdout)
        return out.get("job", out)

    def plan_file(self, path):
        """gpuqd's plans for the jobs of PATH, one per job, in order."""
        r = self.gpuq("plan", "--json", path, check=False)
        if r.returncode != 0:
            say(f"demo: gpuq plan {path} failed: {r.stderr.strip()}")
            return []
        return plans_in(r.stdout)

    def submit(self):
        """Plan each example file, then submit it. Returns {job id:
        action}; keeps each job's file, place in it and plan."""
        ids = {}
        self.origin = {}
        self.plans = {}
        for name, action in JOBS:
            path = os.path.join(TOP, "examples", name)
            plans = self.plan_file(path)
            r = self.gpuq("submit", "-q", path)
            for i, line in enumerate(r.stdout.split()):
                jid = int(line)
                ids[jid] = action
                self.origin[jid] = (path, i)
                if i < len(plans):
                    self.plans[jid] = (1, "the plan at submit", plans[i])
                say(f"submitted {name} as job {line}")
        return ids

    def replan(self, jid, number, label):
        """Ask gpuqd again for job JID's plan, for its attempt NUMBER."""
        if jid not in self.origin:
            return
        path, i = self.origin[jid]
        plans = self.plan_file(path)
        if i < len(plans):
            self.plans[jid] = (number, label, plans[i])

    def explain(self, job, a, prev):
        """Say why attempt A of JOB went where it went: the offer gpuqd
        chose and the ones it ranked next, from gpuqd's plan."""
        number, label, plan = self.plans.get(job["id"], (0, None, None))
        if plan is None or number != a.get("number"):
            label, plan = "a plan taken after it launched", None
            self.replan(job["id"], a.get("number"), label)
            number, label, plan = self.plans.get(job["id"],
                                                 (0, label, None))
        spec = job.get("spec") or {}
        hours = spec.get("estimated_hours") or 1
        offers = (plan or {}).get("offers") or []
        chosen = next((o for o in offers if same_place(o, a)), None)
        head = (f"why job {job['id']} {job['name']} attempt "
                f"{a.get('number')} -> {place(a)} {model(a)} "
                f"{a.get('gpu_count')}x{gpu_short(a.get('gpu'))} at "
                f"${a.get('hourly_usd', 0):.2f}/h")
        if chosen is not None:
            head += (f": expected ${chosen['expected_usd']:.2f} for its "
                     f"estimated {hours:g} h")
            if chosen.get("spot"):
                head += (f" with {chosen.get('lambda', 0):.2f} "
                         f"preemptions/h")
            head += f", rank {chosen.get('rank')} of {len(offers)} in {label}"
            if chosen.get("rank", 1) > 1:
                head += (" (the offers above it had no room or were held "
                         "for other jobs when it launched)")
        else:
            why = next((x.get("reason") for x in
                        (plan or {}).get("excluded") or []
                        if same_place(x, a)), None)
            head += (f": {label} does not list it"
                     + (f" ({why})" if why else ""))
        alts = alternatives(offers, chosen, prev)
        ties = False
        if alts:
            words = []
            for o in alts:
                w = f"{place(o)} {model(o)} ${o['expected_usd']:.2f}"
                if prev is not None and same_place(o, prev):
                    w += (f" (attempt {prev.get('number')}'s place, "
                          f"{prev.get('end_reason') or 'before'})")
                elif chosen is not None and tie(o, chosen):
                    w += " (tie)"
                    ties = True
                words.append(w)
            head += "; next best " + ", ".join(words)
        if ties:
            head += ("; a tie goes to fewer recent interruptions, then to "
                     "a fixed order")
        say(wrap(head))

    def explain_new(self, job_rows):
        """Explain every attempt that has appeared since the last call."""
        for j in job_rows:
            seen = self.explained.get(j["id"], 0)
            if (j.get("attempts") or 0) <= seen:
                continue
            job = self.show(j["id"])
            atts = job.get("attempts_list") or []
            for k, a in enumerate(atts):
                if a.get("number", k + 1) <= seen:
                    continue
                if not a.get("provider"):
                    break
                self.explain(job, a, atts[k - 1] if k > 0 else None)
                self.explained[j["id"]] = a.get("number", k + 1)

    def strike(self, j, act):
        """Preempt job J or send its host into maintenance."""
        cur = j.get("current") or {}
        path = "/_fake/preempt" if act == "preempt" \
            else "/_fake/maintenance"
        when = time.time()
        self.fake.ctl(path, {"name": cur["resource"]})
        say(f"\n*** {act}: job {j['id']} on {place(cur)} "
            f"({cur['resource']})\n")
        return (cur.get("number"), act, when)

    @staticmethod
    def left_running(job, when):
        """The event, at or after WHEN, of JOB leaving running (queued
        again, or failed), or None."""
        return next((e for e in job.get("events") or []
                     if e.get("time", 0) >= int(when)
                     and e.get("from") == "running"
                     and e.get("to") not in (None, "running")), None)

    def wait_seen(self, struck):
        """Wait until gpuqd has seen every strike in STRUCK ({job id:
        (attempt number, action, time)}), planning each job again at
        once; then print the status table and what gpuqd recorded."""
        pending = dict(struck)
        seen = {}
        deadline = time.monotonic() + SEEN_TIMEOUT
        while pending and time.monotonic() < deadline:
            for jid, (n, act, when) in list(pending.items()):
                job = self.show(jid)
                a = next((x for x in job.get("attempts_list") or []
                          if x.get("number") == n), {})
                if a.get("end_reason") and self.left_running(job, when):
                    self.replan(jid, n + 1, f"the plan after attempt {n} "
                                f"ended ({a['end_reason']})")
                    seen[jid] = job
                    del pending[jid]
            if pending:
                time.sleep(0.05)
        say(self.gpuq("status", "--all").stdout.rstrip("\n"))
        for jid, (n, act, when) in sorted(struck.items()):
            job = seen.get(jid)
            if job is None:
                say(f"  job {jid}: gpuqd has not seen the {act} in "
                    f"{SEEN_TIMEOUT:.0f} s")
                continue
            a = next((x for x in job.get("attempts_list") or []
                      if x.get("number") == n), {})
            say(wrap(f"  job {jid} {job['name']}: gpuqd saw attempt {n} "
                     f"end, {a.get('end_reason')}"
                     + (f": {a['message']}" if a.get("message") else ""),
                     "      "))
            e = self.left_running(job, when)
            say(wrap(f"  job {jid} {job['name']}: running -> {e['to']}: "
                     f"{e.get('message')}", "      "))
        say("")

    def run(self):
        key = self.start_cloud()
        self.start_daemon(self.write_conf(key))
        say(wrap("In the tables below AGE counts the real seconds gpuqd "
                 "watched; the simulated cloud's clock runs "
                 f"{SPEED:.0f}x faster. COST counts ended attempts by the "
                 "cloud's own clock (a running attempt by gpuqd's, until "
                 "it ends), and the summary at the end prices each "
                 "attempt and its saving.", ""))
        self.explained = {}
        actions = self.submit()
        done_actions = set()
        running_since = {}
        start = time.monotonic()
        last_show = 0.0
        while time.monotonic() - start < DEADLINE:
            jobs = self.jobs()
            self.explain_new(jobs)
            struck = {}
            for j in jobs:
                act = actions.get(j["id"])
                cur = j.get("current") or {}
                if j["state"] == "running":
                    running_since.setdefault(j["id"], time.monotonic())
                else:
                    running_since.pop(j["id"], None)
                # Interrupt a job once it has run long enough to have
                # written checkpoints, so its next attempt resumes.
                if (act and j["id"] not in done_actions
                        and j["state"] == "running" and cur.get("resource")
                        and time.monotonic() - running_since[j["id"]]
                        >= INTERRUPT_AFTER / SPEED):
                    struck[j["id"]] = self.strike(j, act)
                    done_actions.add(j["id"])
            if struck:
                self.wait_seen(struck)
                last_show = time.monotonic()
                continue
            if time.monotonic() - last_show >= TABLE_EVERY:
                say(self.gpuq("status", "--all").stdout)
                last_show = time.monotonic()
            if jobs and all(j["state"] in ("succeeded", "failed", "cancelled")
                            for j in jobs):
                break
            time.sleep(0.5)
        self.explain_new(self.jobs())
        say(self.gpuq("status", "--all").stdout)
        return self.summary()

    def sim_hours(self, resources, job, a):
        """Hours the simulated cloud ran attempt A of JOB (its own
        clock, from the resource's start to its end), or None."""
        r = next((r for r in resources
                  if a.get("resource") and a["resource"] in
                  (r.get("name"), r.get("resource"))), None)
        if r is None:
            r = next((r for r in resources
                      if (r.get("labels") or {}).get("gpuq-job")
                      == str(job["id"])
                      and (r.get("labels") or {}).get("gpuq-attempt")
                      == str(a.get("number"))), None)
        if r is None or not r.get("started"):
            return None
        end = r.get("ended") or self.fake.ctl("/_fake/time")["now"]
        return max(0.0, end - r["started"]) / 3600.0

    def summary(self):
        jobs = self.jobs()
        resources = self.fake.ctl("/_fake/resources").get("resources", [])
        say(wrap("summary. Each attempt is priced as a cloud bills it: "
                 "the $/hour gpuqd chose x the hours the cloud ran it, "
                 "by the start and end the cloud itself reports (the "
                 "simulated cloud's clock), as gpuqd recorded them. The "
                 "saving is against running the same job as an on-demand "
                 "Vertex AI custom job in its first region for the same "
                 "time, the way people run it without gpuq.", ""))
        ok = bool(jobs)
        total = base = 0.0
        for j in jobs:
            show = self.show(j["id"])
            atts = show.get("attempts_list") or []
            lines = []
            for a in atts:
                what = (f"attempt {a.get('number')} {place(a)} {model(a)}, "
                        f"{a.get('end_reason') or a.get('state')}")
                b0, b1 = a.get("billed_start"), a.get("billed_end")
                if not b0 or not b1:
                    h = self.sim_hours(resources, j, a)
                    what += (", never ran on the simulated cloud"
                             if h is None else ", still running")
                else:
                    h = max(60, b1 - b0) / 3600.0
                    what += (f" after {h:.2f} h x "
                             f"${a.get('hourly_usd') or 0:.2f}/h = "
                             f"${a.get('cost_usd') or 0:.2f}")
                if a.get("resumed_from"):
                    what += f"; resumed from {a['resumed_from']}"
                lines.append(wrap("      " + what, "        "))
            cost = j.get("cost_usd", 0)
            total += cost
            base += j.get("baseline_usd", 0)
            say(f"  job {j['id']} {j['name']}: {j['state']}, "
                f"{len(atts)} attempt(s), "
                f"{saving(cost, j.get('baseline_usd', 0))}")
            for line in lines:
                say(line)
            if j["state"] != "succeeded":
                ok = False
        say(f"  all jobs: {saving(total, base)}")
        return ok

    def log_tail(self, n=20):
        """The end of gpuqd's log, for a failure."""
        try:
            with open(self.daemon_log) as f:
                lines = f.readlines()[-n:]
        except OSError:
            return
        if not lines:
            return
        say(f"last lines of {self.daemon_log}:")
        for line in lines:
            say("  " + line.rstrip("\n"))

    def clean(self):
        """Remove the temporary directory, unless --keep."""
        if self.keep:
            say(f"kept {self.dir}: gpuqd.conf, gpuqd.log, state/ (the "
                f"queue), fakegcp/ and sa.json, a private key; remove it "
                f"with: rm -r {self.dir}")
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        say(f"removed {self.dir} (its private key, gpuqd's state and the "
            f"logs); --keep keeps it")

    def stop(self):
        try:
            if self.daemon:
                self.daemon.stop(10)
        finally:
            if self.fake:
                self.fake.stop()
        say(f"logs: {self.daemon_log} and "
            f"{os.path.join(self.dir, 'fakegcp', 'fakegcp.log')}")



def on_signal(signum, frame):
    raise Interrupted(signum)


def main():
    global SPEED
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builddir", default=".",
                    help="where gpuqd and gpuq were built (default: .)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (logs, gpuqd's "
                    "state, the configuration and the private key)")
    ap.add_argument("--quick", action="store_true",
                    help=f"run the simulated cloud {QUICK_SPEED:.0f}x "
                    f"faster than real time instead of {SPEED:.0f}x")
    args = ap.parse_args()
    if args.quick:
        SPEED = QUICK_SPEED
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    # Python leaves SIGINT ignored if it started ignored, as a command
    # sent to the background by a non-interactive shell does; the demo
    # must still stop and clean up on it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    demo = Demo(args.builddir, args.keep)
    rc = 1
    verdict = "demo: failed"
    try:
        rc = 0 if demo.run() else 1
        verdict = ("demo: every job succeeded" if rc == 0 else
                   "demo: some job did not succeed")
    except KeyboardInterrupt:
        say("\ndemo: interrupted")
        rc = 130
    except Interrupted as e:
        say(f"\ndemo: {e}")
        rc = 128 + e.signum
    except SystemExit as e:
        if e.code not in (None, 0):
            print(e.code, file=sys.stderr, flush=True)
    except Exception:
        traceback.print_exc()
    finally:
        # Clean up whatever comes next: a second Ctrl-C must not leave
        # gpuqd, the simulated cloud or the private key behind.
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        demo.stop()
        if rc == 1:
            demo.log_tail()
        demo.clean()
    if rc in (0, 1):
        say(verdict)
    sys.exit(rc)


if __name__ == "__main__":
    main()
