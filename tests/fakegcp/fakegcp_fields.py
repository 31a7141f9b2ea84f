"""Partial responses: the ``fields`` standard query parameter of every
Google API (DESIGN G0.1; the ``fields`` parameter of each discovery
document's common parameters) and Vertex AI's ``readMask``
(google-fieldmask, aiplatform v1 discovery document,
customJobs.list).
"""
import re


# -- fields= partial responses ---------------------------------------------------
# Google's partial-response syntax (DESIGN G0.1; cloud.google.com/compute/
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
