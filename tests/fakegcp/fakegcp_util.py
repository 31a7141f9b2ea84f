"""Small helpers shared by the fake: time formats, paging tokens, list
filters (Compute / Batch / Vertex, API-NOTES 0.3) and ``fields`` partial
responses (API-NOTES 0.1)."""
import base64
import datetime
import json
import re

PACIFIC = datetime.timezone(datetime.timedelta(hours=-7))


def rfc3339(t, compute=False):
    """Timestamp text for simulated epoch seconds ``t``.

    Compute Engine prints local Pacific time with an offset
    ("2024-06-26T11:42:22.006-07:00", API-NOTES C.1); the newer APIs print
    UTC "Z" with fractional seconds (google-datetime)."""
    if compute:
        d = datetime.datetime.fromtimestamp(t, PACIFIC)
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d-07:00" % (
            d.microsecond // 1000)
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % d.microsecond


def duration(secs):
    return ("%.3f" % secs).rstrip("0").rstrip(".") + "s"


def page_token(offset, salt=""):
    raw = json.dumps({"o": offset, "s": salt}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_page_token(tok, salt=""):
    """Offset encoded by page_token, or None if the token is not ours."""
    if not tok:
        return 0
    try:
        raw = base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4))
        d = json.loads(raw)
        if d.get("s", "") != salt or not isinstance(d.get("o"), int) or \
                d["o"] < 0:
            return None
        return d["o"]
    except (ValueError, TypeError):
        return None


# -- list filters --------------------------------------------------------------
class FilterError(ValueError):
    pass


_TERM = re.compile(r'''\s*(NOT\s+|-)?\(?\s*
    (?P<field>[A-Za-z_][\w\-]*(?:\.(?:"[^"]*"|[\w\-]+))*)\s*
    (?P<op>!=|=|:|\beq\b|\bne\b|<=|>=|<|>)\s*
    (?P<val>"(?:[^"\\]|\\.)*"|'[^']*'|\*|[^\s()]+)\s*\)?\s*''', re.X)


def parse_filter(expr):
    """Parse ``a = "x" AND labels.k:* (status = RUNNING)`` into clauses
    [(negate, [path...], op, value)].  Only conjunctions are supported
    (OR raises FilterError)."""
    clauses = []
    s = (expr or "").strip()
    pos = 0
    while pos < len(s):
        m = re.match(r"\s*AND\s+", s[pos:])
        if m and clauses:
            pos += m.end()
            continue
        if re.match(r"\s*OR\s", s[pos:]):
            raise FilterError("OR is not supported by the fake")
        m = _TERM.match(s, pos)
        if not m or m.end() == pos:
            raise FilterError("Invalid list filter expression: %r" % expr)
        field = [p.strip('"') for p in
                 re.findall(r'"[^"]*"|[^.]+', m.group("field"))]
        val = m.group("val")
        if val[:1] in "\"'" and len(val) >= 2:
            val = val[1:-1].replace('\\"', '"')
        clauses.append((bool(m.group(1)), field, m.group("op"), val))
        pos = m.end()
    return clauses


def _get(obj, path):
    for p in path:
        if isinstance(obj, dict) and p in obj:
            obj = obj[p]
        else:
            return None
    return obj


def match_filter(clauses, obj, aliases=None):
    """True if ``obj`` (the resource JSON) satisfies every clause.
    ``aliases`` maps a filter field (e.g. "display_name") to a JSON path."""
    for neg, path, op, val in clauses:
        key = ".".join(path)
        if aliases and path[0] in aliases:
            path = aliases[path[0]] + path[1:]
        have = _get(obj, path)
        if isinstance(have, bool):
            have = "true" if have else "false"
        elif isinstance(have, (int, float)):
            have = str(have)
        if op == ":":
            ok = have is not None if val == "*" else (
                have is not None and val.lower() in str(have).lower())
        elif op in ("=", "!="):
            ok = (have == val) or (
                have is not None and key.endswith("Link") and
                str(have).endswith(val))
            if op == "!=":
                ok = not ok
        elif op in ("eq", "ne"):   # Compute's regex form: full match
            ok = have is not None and re.fullmatch(val, str(have)) is not None
            if op == "ne":
                ok = not ok
        else:
            a, b = str(have or ""), val
            ok = {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        if neg:
            ok = not ok
        if not ok:
            return False
    return True


# -- fields= partial responses ---------------------------------------------------
def parse_fields(s):
    """``items(name,status),nextPageToken`` -> {"items": {"name": None,
    "status": None}, "nextPageToken": None}.  "a/b" means a(b)."""
    pos = [0]

    def parse_list(end):
        tree = {}
        while pos[0] < len(s) and s[pos[0]] != end:
            if s[pos[0]] in ", ":
                pos[0] += 1
                continue
            m = re.match(r"[^,()/\s]+", s[pos[0]:])
            if not m:
                raise ValueError("bad fields selector")
            name = m.group(0)
            pos[0] += m.end()
            sub = None
            if pos[0] < len(s) and s[pos[0]] == "(":
                pos[0] += 1
                sub = parse_list(")")
                pos[0] += 1
            elif pos[0] < len(s) and s[pos[0]] == "/":
                pos[0] += 1
                sub = parse_one()
            tree[name] = merge(tree.get(name, {}), sub) if name in tree \
                else sub
        return tree

    def parse_one():
        m = re.match(r"[^,()/\s]+", s[pos[0]:])
        if not m:
            raise ValueError("bad fields selector")
        name = m.group(0)
        pos[0] += m.end()
        sub = None
        if pos[0] < len(s) and s[pos[0]] == "(":
            pos[0] += 1
            sub = parse_list(")")
            pos[0] += 1
        elif pos[0] < len(s) and s[pos[0]] == "/":
            pos[0] += 1
            sub = parse_one()
        return {name: sub}

    def merge(a, b):
        if a is None or b is None:
            return None
        out = dict(a)
        out.update(b)
        return out

    return parse_list(None)


def apply_fields(obj, tree):
    if tree is None:
        return obj
    if isinstance(obj, list):
        return [apply_fields(o, tree) for o in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for k, sub in tree.items():
        if k == "*":
            return obj
        if k in obj:
            out[k] = apply_fields(obj[k], sub)
    # aggregated lists: map values keyed by scope
    return out
