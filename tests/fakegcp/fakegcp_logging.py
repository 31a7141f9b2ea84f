"""Cloud Logging v2 ``entries.list`` (DESIGN GJ): the log entries the
simulated training prints, in the shape each service writes them.

What a run prints (fakegcp_sim.Run), each line at the simulated time it
happened and only once that time has come:

  * at its start: ``gpuq-fake: job J attempt A starting from scratch``
    or ``... resuming from gs://.../ckpt-00000600``;
  * every FAKEGCP_LOG_EVERY simulated seconds of work (default 30):
    ``step P/N``;
  * at each checkpoint: ``step P: saved checkpoint gs://...``;
  * at the end of the work: ``gpuq-fake: training finished, exit code E``.

Where it lands:

  Batch (only with logsPolicy.destination CLOUD_LOGGING, DESIGN GJ.5):
    logName projects/P/logs/batch_task_logs, resource
    batch.googleapis.com/Job {resource_container, location, job_id=uid},
    labels: the job's own labels (Batch copies them onto every entry,
    batch.v1 Job.labels) plus job_uid, task_id; textPayload.
  Vertex AI (DESIGN GJ.6): resource ml_job {job_id, task_name
    workerpool0-0, project_id}; jsonPayload.message.
  Compute Engine (docker's gcplogs driver, DESIGN GJ.7): logName
    projects/P/logs/gcplogs-docker-driver, resource gce_instance
    {instance_id, zone, project_id}; jsonPayload {instance, container
    {name "/gpuq-job", metadata {gpuq_job, gpuq_attempt}}, message}.

The filter language (DESIGN GJ.2) is implemented for what gpuq uses and
a little more: AND, OR, NOT (upper case), parentheses, implicit AND,
``= != < <= > >= :``, quoted and bare values, ``field = ("a" OR "b")``,
dotted field paths with quoted segments, timestamps compared as times,
severity by rank, strings case-insensitively.

Paging: ``timestamp asc`` (default) or ``desc``, ties by insertId;
``pageSize`` default 50, at most cfg ``logging_page_max`` (1000); a
``nextPageToken`` holds the offset, the snapshot time and a digest of the
other request fields, which must not change (400 otherwise).

Rate: cfg ``logging_reads_per_minute`` (0: none) answers 429
RESOURCE_EXHAUSTED once more calls than that came in the last real
minute (cfg ``logging_rate_window`` seconds, for tests), as Google's
60-a-minute read quota does (DESIGN GJ.4).
"""
import base64
import collections
import datetime
import hashlib
import json
import re
import time

from fakegcp_errors import ApiError
from fakegcp_sim import parse_gs, rfc3339

SEVERITY = ["DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR",
            "CRITICAL", "ALERT", "EMERGENCY"]
SEV_RANK = {"DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300,
            "WARNING": 400, "ERROR": 500, "CRITICAL": 600, "ALERT": 700,
            "EMERGENCY": 800}
TIME_FIELDS = ("timestamp", "receiveTimestamp")


class FilterError(Exception):
    pass


def parse_time(s):
    """RFC 3339 text -> epoch seconds (float), or None."""
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)"
                 r"(?:\.(\d+))?(Z|z|[+-]\d\d:\d\d)$", s.strip())
    if not m:
        return None
    y, mo, d, h, mi, sec, frac, tz = m.groups()
    dt = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi),
                           int(sec), tzinfo=datetime.timezone.utc)
    t = dt.timestamp() + (float("0." + frac) if frac else 0.0)
    if tz not in ("Z", "z"):
        sign = -1 if tz[0] == "-" else 1
        t -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return t


# -- the filter language -------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<op><=|>=|!=|=~|!~|[=<>:])
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<word>[^\s()"=<>:!]+(?:"(?:[^"\\]|\\.)*"[^\s()"=<>:!]*)*)
""", re.X)


def _tokens(text):
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise FilterError("Unparseable filter: unexpected %r at %d"
                              % (text[pos:pos + 10], pos))
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        v = m.group(kind)
        if kind == "str":
            v = json.loads(v)
        out.append((kind, v))
    return out


def _path(word):
    """labels."a.b/c".x -> ["labels", "a.b/c", "x"]"""
    parts, cur, i = [], "", 0
    while i < len(word):
        c = word[i]
        if c == '"':
            j = i + 1
            while j < len(word) and word[j] != '"':
                j += 2 if word[j] == "\\" else 1
            cur += json.loads(word[i:j + 1])
            i = j + 1
        elif c == ".":
            parts.append(cur)
            cur = ""
            i += 1
        else:
            cur += c
            i += 1
    parts.append(cur)
    return parts


class _Parser:
    """expr := term (OR term)*; term := factor ((AND)? factor)*;
    factor := NOT factor | ( expr ) | field op value."""

    def __init__(self, text):
        self.t = _tokens(text)
        self.i = 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def parse(self):
        if not self.t:
            return lambda e: True
        node = self.expr()
        if self.i != len(self.t):
            raise FilterError("Unparseable filter: unexpected %r"
                              % (self.peek()[1],))
        return node

    def expr(self):
        left = self.term()
        while self.peek() == ("word", "OR"):
            self.take()
            right = self.term()
            left = (lambda a, b: lambda e: a(e) or b(e))(left, right)
        return left

    def term(self):
        left = self.factor()
        while True:
            k, v = self.peek()
            if (k, v) == ("word", "AND"):
                self.take()
            elif k in ("word", "lp", "str") and v != "OR":
                pass            # implicit AND
            else:
                return left
            right = self.factor()
            left = (lambda a, b: lambda e: a(e) and b(e))(left, right)

    def factor(self):
        k, v = self.take()
        if (k, v) == ("word", "NOT"):
            f = self.factor()
            return lambda e: not f(e)
        if k == "lp":
            f = self.expr()
            if self.take()[0] != "rp":
                raise FilterError("Unparseable filter: missing ')'")
            return f
        if k != "word":
            raise FilterError("Unparseable filter: expected a field, got %r"
                              % (v,))
        path = _path(v)
        ok, op = self.take()
        if ok != "op":
            raise FilterError("Unparseable filter: expected an operator "
                              "after %s" % v)
        values = self.values()
        return lambda e: any(_compare(e, path, op, x) for x in values)

    def values(self):
        k, v = self.take()
        if k in ("str", "word"):
            return [v]
        if k == "lp":           # field = ("a" OR "b")
            out = []
            while True:
                k, v = self.take()
                if k not in ("str", "word"):
                    raise FilterError("Unparseable filter: bad value list")
                out.append(v)
                k, v = self.take()
                if k == "rp":
                    return out
                if (k, v) != ("word", "OR"):
                    raise FilterError("Unparseable filter: expected OR in "
                                      "a value list")
        raise FilterError("Unparseable filter: expected a value")


def _get(entry, path):
    v = entry
    for p in path:
        if not isinstance(v, dict) or p not in v:
            return None
        v = v[p]
    return v


def _cmp(a, b, op):
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    raise FilterError("operator %s is not supported here" % op)


def _compare(entry, path, op, value):
    got = _get(entry, path)
    if got is None:
        return op == "!="
    if path[-1] in TIME_FIELDS and len(path) == 1:
        a, b = parse_time(got), parse_time(value)
        if a is None or b is None:
            raise FilterError("Invalid timestamp %r" % value)
        if op == ":":
            op = "="
        return _cmp(a, b, op)
    if path == ["severity"]:
        a = SEV_RANK.get(str(got).upper(), 0)
        b = SEV_RANK.get(str(value).upper())
        if b is None:
            raise FilterError("Invalid severity %r" % value)
        return _cmp(a, b, "=" if op == ":" else op)
    if isinstance(got, (dict, list)):
        return op == ":" and str(value).lower() in json.dumps(got).lower()
    a, b = str(got).lower(), str(value).lower()
    if op == ":":
        return b in a
    if op in ("=~", "!~"):
        m = re.search(str(value), str(got)) is not None
        return m if op == "=~" else not m
    return _cmp(a, b, op)


def compile_filter(text):
    if len(text) > 20000:
        raise FilterError("filter is longer than 20000 characters")
    return _Parser(text).parse()


# -- what the simulated training prints ------------------------------------------

def _run_lines(run, now):
    """(time, text) of what RUN printed up to simulated time NOW."""
    if run.started_at is None:
        return []
    # Work (and its step lines) begins after the run's setup seconds.
    t0 = run.work_from if run.work_from is not None else run.started_at
    out = []
    if t0 <= now:
        if run.resume_from and not run.resume_missing:
            how = "resuming from %s" % run.resume_from
        else:
            how = "starting from scratch"
        out.append((t0, "gpuq-fake: job %s attempt %s %s"
                    % (run.job, run.attempt, how)))
    try:
        every = float(run.env.get("FAKEGCP_LOG_EVERY", 30))
    except ValueError:
        every = 30.0
    end = run.ended_at if run.ended_at is not None else now
    last = min(end, now)
    if every > 0:
        k = int(run.start_progress // every) + 1
        while True:
            p = k * every
            t = t0 + p - run.start_progress
            if p > run.need + 1e-9 or t > last + 1e-9:
                break
            out.append((t, "step %d/%d" % (int(p), int(run.need))))
            k += 1
    for uri in run.checkpoints:
        m = re.search(r"(\d+)$", uri)
        if not m:
            continue
        t = t0 + int(m.group(1)) - run.start_progress
        # printed just after the step it saves (a program's lines have
        # distinct times; equal ones would come in insertId order)
        t += 0.001
        if t <= now:
            out.append((t, "step %d: saved checkpoint %s"
                        % (int(m.group(1)), uri)))
    if run.state == "done" and run.ended_at is not None and \
            run.ended_at + 0.002 <= now:
        out.append((run.ended_at + 0.002, "gpuq-fake: training finished, exit "
                    "code %s" % run.result))
    out.sort(key=lambda x: x[0])
    return out


def _insert_id(res, ri, li):
    h = hashlib.sha1(("%s/%d/%d" % (res.full_name(), ri, li)).encode())
    return h.hexdigest()[:20]


def _entries_of(fake, res, now):
    svc = res.service
    if svc == "batch":
        lp = (getattr(res, "body", {}) or {}).get("logsPolicy") or {}
        if lp.get("destination") != "CLOUD_LOGGING":
            return []
    out = []
    for ri, run in enumerate(res.runs):
        for li, (t, text) in enumerate(_run_lines(run, now)):
            ts = rfc3339(t)
            e = {"insertId": _insert_id(res, ri, li), "timestamp": ts,
                 "receiveTimestamp": rfc3339(t + 0.4), "severity": "INFO"}
            if svc == "batch":
                e["logName"] = "projects/%s/logs/batch_task_logs" % \
                    res.project
                e["resource"] = {"type": "batch.googleapis.com/Job",
                                 "labels": {"resource_container":
                                            res.project,
                                            "location": res.zone or
                                            res.region,
                                            "job_id": res.uid}}
                labels = dict(res.labels)
                labels.update({"job_uid": res.uid, "task_id":
                               "task/%s-group0-0/0/0" % res.uid})
                e["labels"] = labels
                e["textPayload"] = text
            elif svc == "vertex":
                e["logName"] = "projects/%s/logs/workerpool0-0" % \
                    res.project
                e["resource"] = {"type": "ml_job", "labels": {
                    "job_id": res.jid, "task_name": "workerpool0-0",
                    "project_id": res.project}}
                e["jsonPayload"] = {"message": text,
                                    "levelname": "INFO"}
            elif svc == "compute":
                e["logName"] = "projects/%s/logs/gcplogs-docker-driver" % \
                    res.project
                e["resource"] = {"type": "gce_instance", "labels": {
                    "instance_id": res.id, "zone": res.zone,
                    "project_id": res.project}}
                meta = {}
                if run.job:
                    meta["gpuq_job"] = str(run.job)
                if run.attempt:
                    meta["gpuq_attempt"] = str(run.attempt)
                e["jsonPayload"] = {
                    "instance": {"zone": res.zone, "name": res.name,
                                 "id": res.id},
                    "container": {"name": "/gpuq-job",
                                  "id": hashlib.sha1(res.id.encode())
                                  .hexdigest(),
                                  "imageName": run.env.get("_image", ""),
                                  "metadata": meta},
                    "message": text}
            else:
                continue
            e["_t"] = t
            out.append(e)
    return out


class Logging:
    def __init__(self, fake):
        self.fake = fake
        self.calls = collections.deque()

    def _rate(self):
        limit = int(self.fake.cfg.get("logging_reads_per_minute") or 0)
        if limit <= 0:
            return
        now = time.monotonic()
        window = float(self.fake.cfg.get("logging_rate_window") or 60)
        while self.calls and self.calls[0] < now - window:
            self.calls.popleft()
        if len(self.calls) >= limit:
            self.fake.counters["logging.entries.list:429"] = \
                self.fake.counters.get("logging.entries.list:429", 0) + 1
            raise ApiError(
                429, "Quota exceeded for quota metric 'Read requests' and "
                "limit 'Read requests per minute' of service "
                "'logging.googleapis.com' for consumer 'project_number:%s'."
                % self.fake.project_number(self.fake.default_project),
                "rateLimitExceeded", "RESOURCE_EXHAUSTED",
                details=[{"@type": "type.googleapis.com/google.rpc."
                          "ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
                          "domain": "googleapis.com",
                          "metadata": {"service": "logging.googleapis.com",
                                       "quota_limit": "ReadRequestsPer"
                                       "MinutePerProject"}}])
        self.calls.append(now)

    def list(self, req):
        self._rate()
        b = req.body or {}
        names = b.get("resourceNames") or []
        if not names:
            raise ApiError(400, "resourceNames is required",
                           status="INVALID_ARGUMENT")
        projects = set()
        for n in names:
            m = re.match(r"^projects/([^/]+)$", n)
            if not m:
                raise ApiError(400, "Invalid resource name: %s" % n,
                               status="INVALID_ARGUMENT")
            projects.add(self.fake.project_id(m.group(1)))
        order = b.get("orderBy") or "timestamp asc"
        if order not in ("timestamp asc", "timestamp desc"):
            raise ApiError(400, "Invalid orderBy: %s; only \"timestamp "
                           "asc\" and \"timestamp desc\" are supported"
                           % order, status="INVALID_ARGUMENT")
        size = b.get("pageSize", 50)
        if not isinstance(size, int) or size < 0:
            raise ApiError(400, "pageSize must not be negative",
                           status="INVALID_ARGUMENT")
        size = min(size or 50, int(self.fake.cfg.get("logging_page_max")
                                   or 1000))
        text = b.get("filter") or ""
        try:
            match = compile_filter(text)
        except FilterError as e:
            raise ApiError(400, str(e), status="INVALID_ARGUMENT")
        digest = hashlib.sha1(json.dumps(
            [sorted(names), text, order, b.get("pageSize")]).encode()) \
            .hexdigest()[:16]
        now = self.fake.now()
        offset = 0
        tok = b.get("pageToken")
        if tok:
            try:
                d = json.loads(base64.urlsafe_b64decode(tok.encode()))
                offset, now, dg = int(d["o"]), float(d["t"]), d["h"]
            except (ValueError, KeyError, TypeError):
                raise ApiError(400, "Invalid page token",
                               status="INVALID_ARGUMENT")
            if dg != digest:
                raise ApiError(400, "The page token does not match the "
                               "request: every other field must be the same",
                               status="INVALID_ARGUMENT")
        found = []
        for res in self.fake.all_resources():
            if res.project not in projects:
                continue
            for e in _entries_of(self.fake, res, now):
                view = {k: v for k, v in e.items() if k != "_t"}
                try:
                    if match(view):
                        found.append((e["_t"], e["insertId"], view))
                except FilterError as err:
                    raise ApiError(400, str(err), status="INVALID_ARGUMENT")
        found.sort(key=lambda x: (x[0], x[1]),
                   reverse=(order == "timestamp desc"))
        page = found[offset:offset + size]
        out = {"entries": [x[2] for x in page]}
        if offset + size < len(found):
            out["nextPageToken"] = base64.urlsafe_b64encode(json.dumps(
                {"o": offset + size, "t": now, "h": digest}).encode()) \
                .decode()
        if not out["entries"]:
            del out["entries"]
        return out


def routes(fake):
    """Cloud Logging's rows of the route table (fakegcp_server.py)."""
    lg = Logging(fake)
    fake.logging = lg
    return [
        ("POST", r"/v2/entries:list", "logging", "logging.entries.list",
         lg.list, "ListLogEntriesRequest", None),
    ]
