"""Small helpers shared by the fake: time formats, paging tokens and
``fields`` partial responses (API-NOTES 0.1).  List filters are in
fakegcp_filter.py."""
import base64
import datetime
import hashlib
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


def _salt_hash(salt):
    return hashlib.sha1(salt.encode()).hexdigest()[:12]


def position_token(pos, salt):
    """An opaque page token holding ``pos`` = (scope number, sort key) of
    the last resource returned; ``salt`` names the list and the request
    parameters a token is only good for (filter, order)."""
    raw = json.dumps({"p": list(pos), "h": _salt_hash(salt)},
                     separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_position_token(tok, salt):
    """The (scope number, sort key) of position_token, None without a
    token; ValueError if the token is not one of ours for this list."""
    if not tok:
        return None
    try:
        d = json.loads(base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4)))
        if d["h"] != _salt_hash(salt):
            raise ValueError("token of another list")
        scope, key = d["p"]
        if not isinstance(scope, int):
            raise ValueError("bad scope")
        return scope, tuple(key) if isinstance(key, list) else key
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(str(e))


# -- fields= partial responses ---------------------------------------------------
# Google's partial-response syntax (API-NOTES 0.1; cloud.google.com/compute/
# docs/api/how-tos/performance#partial):
#     fields := field { "," field }
#     field  := path [ "(" fields ")" ]
#     path   := name { "/" name }          name: a JSON member, or "*"
# "a/b" selects b inside a, "a(b,c)" b and c inside a, "*" every member of an
# object (the scope map of an aggregated list).  A selector applies to each
# element of an array.  The parsed form is a tree {name: subtree}, where the
# subtree None means "the whole value".
class FieldsError(ValueError):
    pass


def _union(a, b):
    """Selection that keeps what ``a`` or ``b`` keeps."""
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        out[k] = _union(out[k], v) if k in out else v
    return out


_NAME = re.compile(r"[^,()/\s]+")


def parse_fields(s):
    """``items(name,status),nextPageToken`` -> {"items": {"name": None,
    "status": None}, "nextPageToken": None}.  Raises FieldsError on a
    malformed selector (the handler answers 400)."""
    s = s or ""
    pos = 0

    def skip_ws():
        nonlocal pos
        while pos < len(s) and s[pos] in " \t":
            pos += 1

    def field_list(closing):
        nonlocal pos
        tree = {}
        while True:
            skip_ws()
            names = []
            while True:
                m = _NAME.match(s, pos)
                if not m:
                    raise FieldsError("expected a field name at offset %d"
                                      % pos)
                names.append(m.group(0))
                pos = m.end()
                if pos < len(s) and s[pos] == "/":
                    pos += 1
                    continue
                break
            sub = None
            skip_ws()
            if pos < len(s) and s[pos] == "(":
                pos += 1
                sub = field_list(")")
                pos += 1            # the ")"
            for n in reversed(names):
                sub = {n: sub}
            tree = _union(tree, sub)
            skip_ws()
            if pos < len(s) and s[pos] == ",":
                pos += 1
                continue
            if closing is None and pos == len(s):
                return tree
            if closing is not None and pos < len(s) and s[pos] == closing:
                return tree
            raise FieldsError("unexpected %r at offset %d" % (
                s[pos:pos + 1] or "end", pos))

    return field_list(None)


def apply_fields(obj, tree):
    """The parts of ``obj`` that ``tree`` selects.  Array elements are
    kept even when nothing in them is selected (positions matter); an
    object member whose sub-selection selected nothing is left out, so an
    aggregated list asked for ``items/*/instances(...)`` carries only the
    scopes that have instances."""
    if tree is None:
        return obj
    if isinstance(obj, list):
        return [apply_fields(o, tree) for o in obj]
    if not isinstance(obj, dict):
        return obj
    star = tree.get("*", _NOSEL)
    out = {}
    for k, v in obj.items():
        if k in tree:
            sub = tree[k] if star is _NOSEL else _union(tree[k], star)
        elif star is not _NOSEL:
            sub = star
        else:
            continue
        val = apply_fields(v, sub)
        if sub is not None and isinstance(val, dict) and not val:
            continue
        out[k] = val
    return out


_NOSEL = object()


def snake_to_camel(name):
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def parse_field_mask(mask):
    """A google-fieldmask (``name,job_spec.worker_pool_specs``: dotted
    paths, snake_case or camelCase) as a parse_fields tree in JSON names."""
    tree = {}
    for path in (mask or "").split(","):
        path = path.strip()
        if not path:
            continue
        sub = None
        for n in reversed(path.split(".")):
            if not n:
                raise FieldsError("empty name in field mask %r" % mask)
            sub = {snake_to_camel(n): sub}
        tree = _union(tree, sub)
    return tree or None
