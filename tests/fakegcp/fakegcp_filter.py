"""List filters of the fake cloud (DESIGN G0.3): AIP-160 expressions
(https://google.aip.dev/160) as Compute Engine, Cloud Batch and Vertex AI
accept them, and Compute's older regular-expression form.

    f = compile_filter('(a = "x") OR (b = "y") labels.k:*', compute=True)
    f.match(obj)         # obj: the resource's JSON (or a cheaper view)
    f.paths, f.roots     # member paths (camelCase) / first members it reads

Grammar (AIP-160; OR binds tighter than AND and than juxtaposition, so
``a AND b OR c`` is ``a AND (b OR c)``):

    expression  := sequence { "AND" sequence }
    sequence    := factor { factor }                 (implicit AND)
    factor      := term { "OR" term }
    term        := [ "NOT" | "-" ] simple
    simple      := "(" expression ")" | field comparator value
    comparator  := "=" | "!=" | "<" | "<=" | ">" | ">=" | ":"
    field       := name { "." name }     name: word or "quoted" text
    value       := "text" | 'text' | bare word

Compute also takes ``field eq|ne literal`` (the literal is an RE2 regular
expression that must match the whole value), alone or as a juxtaposition
of parenthesised ``(field eq literal)``; it cannot be mixed with AIP-160
(compute.v1 `filter` parameter text).

Matching: `=`/`!=` compare text (a `*` in the value is a wildcard), numbers
and booleans by value, links also by suffix (a partial URL);
`<`...`>=` compare numbers, RFC 3339 times as instants, else text;
`:` is "has": `:*` = the field is present, on a map = has that key, on a
list = has that element, on text = contains (case-blind), or with a `*`
wildcard matches the whole text.
Field names may be snake_case (display_name) for camelCase JSON members.
Nothing here knows about resources or HTTP: the handlers map FilterError
to Google's 400.
"""
import datetime
import re

MISSING = object()


class FilterError(ValueError):
    pass


_KEYWORDS = ("AND", "OR", "NOT")
_SEG = r'(?:[A-Za-z_][\w\-]*|\d+|"(?:[^"\\]|\\.)*"|`[^`]*`)'
_FIELD = re.compile(_SEG + r"(?:\." + _SEG + r")*")
_CMP = re.compile(r"<=|>=|!=|=|<|>|:|(?:eq|ne)(?=[\s'\"]|$)")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_BARE = re.compile(r"[^\s()\"'][^\s()]*")


def _unquote(seg):
    if seg[:1] in "\"`":
        return re.sub(r"\\(.)", r"\1", seg[1:-1])
    return seg


class _Parser:
    def __init__(self, s):
        self.s = s
        self.pos = 0
        self.regex = False      # saw eq/ne
        self.aip = False        # saw an AIP-160 comparator or keyword

    def error(self, what):
        raise FilterError("%s at offset %d" % (what, self.pos))

    def ws(self):
        while self.pos < len(self.s) and self.s[self.pos].isspace():
            self.pos += 1

    def keyword(self, kw):
        """Consume keyword ``kw`` if it is next (followed by a space or a
        parenthesis)."""
        self.ws()
        s, p = self.s, self.pos
        if s.startswith(kw, p):
            q = p + len(kw)
            if q == len(s) or s[q].isspace() or s[q] == "(":
                self.pos = q
                self.aip = True
                return True
        return False

    def at_end_of_sequence(self):
        self.ws()
        if self.pos >= len(self.s) or self.s[self.pos] == ")":
            return True
        for kw in ("AND", "OR"):
            q = self.pos + len(kw)
            if self.s.startswith(kw, self.pos) and (
                    q == len(self.s) or self.s[q].isspace() or
                    self.s[q] == "("):
                return True
        return False

    def expression(self):
        parts = [self.sequence()]
        while self.keyword("AND"):
            parts.append(self.sequence())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def sequence(self):
        if self.at_end_of_sequence():
            self.error("expected a restriction")
        parts = [self.factor()]
        while not self.at_end_of_sequence():
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def factor(self):
        parts = [self.term()]
        while self.keyword("OR"):
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def term(self):
        self.ws()
        if self.keyword("NOT"):
            return ("not", self.simple())
        if self.s.startswith("-", self.pos) and self.pos + 1 < len(self.s) \
                and not self.s[self.pos + 1].isspace():
            self.pos += 1
            self.aip = True
            return ("not", self.simple())
        return self.simple()

    def simple(self):
        self.ws()
        if self.pos >= len(self.s):
            self.error("expected a restriction")
        if self.s[self.pos] == "(":
            self.pos += 1
            e = self.expression()
            self.ws()
            if self.pos >= len(self.s) or self.s[self.pos] != ")":
                self.error("expected ')'")
            self.pos += 1
            return e
        m = _FIELD.match(self.s, self.pos)
        if not m:
            self.error("expected a field name")
        if m.group(0) in _KEYWORDS:
            self.error("unexpected %s" % m.group(0))
        path = [_unquote(x) for x in
                re.findall(_SEG, m.group(0))]
        self.pos = m.end()
        self.ws()
        c = _CMP.match(self.s, self.pos)
        if not c:
            self.error("expected a comparator after %r" % m.group(0))
        op = c.group(0)
        if op in ("eq", "ne"):
            self.regex = True
        else:
            self.aip = True
        self.pos = c.end()
        self.ws()
        v = _STRING.match(self.s, self.pos)
        if v:
            raw = v.group(1) if v.group(1) is not None else v.group(2)
            val = re.sub(r"\\(.)", r"\1", raw)
            quoted = True
        else:
            v = _BARE.match(self.s, self.pos)
            if not v:
                self.error("expected a value after %r" % op)
            val = v.group(0)
            quoted = False
        self.pos = v.end()
        if op in ("eq", "ne"):
            try:
                rx = re.compile(val)
            except re.error as e:
                raise FilterError("bad regular expression %r: %s" % (val, e))
            return ("cmp", path, op, rx, quoted)
        return ("cmp", path, op, val, quoted)


def _walk(node, fn):
    fn(node)
    if node[0] in ("and", "or"):
        for n in node[1]:
            _walk(n, fn)
    elif node[0] == "not":
        _walk(node[1], fn)


class Filter:
    """A compiled filter; ``match(obj)`` is True when ``obj`` passes."""

    def __init__(self, tree):
        self.tree = tree
        paths = set()
        if tree is not None:
            _walk(tree, lambda n: paths.add(tuple(
                snake_to_camel(x) for x in n[1])) if n[0] == "cmp" else None)
        self.paths = paths                  # camelCase member paths read
        self.roots = {p[0] for p in paths}

    def reads_only(self, prefixes):
        """True if every path the filter reads lies under one of
        ``prefixes`` (tuples of camelCase members)."""
        return all(any(p[:len(x)] == x for x in prefixes)
                   for p in self.paths)

    def match(self, obj):
        return self.tree is None or _eval(self.tree, obj)


def compile_filter(expr, compute=False, aliases=None):
    """Parse ``expr``; raise FilterError when it is malformed.  ``compute``
    allows Compute's regex form; ``aliases`` maps a filter field's first
    segment to a JSON path (Batch tasks' ``State`` -> status.state)."""
    if expr is None or not expr.strip():
        return Filter(None)
    p = _Parser(expr)
    tree = p.expression()
    p.ws()
    if p.pos != len(expr):
        p.error("unexpected %r" % expr[p.pos])
    if p.regex:
        if not compute:
            raise FilterError("the eq/ne operators are not supported")
        if p.aip:
            raise FilterError("regular-expression (eq/ne) and AIP-160 "
                              "expressions cannot be mixed")
        if tree[0] == "and" and any(n[0] != "cmp" for n in tree[1]):
            raise FilterError("regular-expression filters take "
                              "parenthesised (field eq literal) terms only")
    if aliases:
        def fix(n):
            if n[0] == "cmp" and n[1][0] in aliases:
                n[1][:1] = aliases[n[1][0]]
        _walk(tree, fix)
    return Filter(tree)


# -- evaluation ---------------------------------------------------------------
def snake_to_camel(name):
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def lookup(obj, path):
    """The value at ``path`` in ``obj`` (lists are searched element-wise),
    or MISSING."""
    for i, p in enumerate(path):
        if isinstance(obj, list):
            out = []
            for o in obj:
                v = lookup(o, path[i:])
                if v is not MISSING:
                    out.extend(v if isinstance(v, list) else [v])
            return out if out else MISSING
        if not isinstance(obj, dict):
            return MISSING
        if p in obj:
            obj = obj[p]
        else:
            c = snake_to_camel(p)
            if c not in obj:
                return MISSING
            obj = obj[c]
    return obj


def _eval(node, obj):
    kind = node[0]
    if kind == "and":
        return all(_eval(n, obj) for n in node[1])
    if kind == "or":
        return any(_eval(n, obj) for n in node[1])
    if kind == "not":
        return not _eval(node[1], obj)
    _, path, op, val, quoted = node
    have = lookup(obj, path)
    if op in ("eq", "ne"):
        ok = have is not MISSING and have is not None and \
            val.fullmatch(_text(have)) is not None
        return ok if op == "eq" else not ok
    if op == ":":
        return _has(have, val)
    if op in ("=", "!="):
        ok = have is not MISSING and _equal(have, val, path)
        return ok if op == "=" else not ok
    if have is MISSING or have is None:
        return False
    a, b = _ordered(have, val)
    if a is None:
        return False
    return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _wild(pattern, text, whole=True):
    """``pattern`` with `*` wildcards matches all of ``text``; without
    one, it equals ``text`` (``whole``) or is a case-blind part of it."""
    if "*" not in pattern:
        return pattern == text if whole else pattern.lower() in text.lower()
    rx = ".*".join(re.escape(p) for p in pattern.split("*"))
    return re.fullmatch(rx, text, re.S) is not None


def _number(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _equal(have, val, path):
    if isinstance(have, list):
        return any(_equal(h, val, path) for h in have)
    if isinstance(have, dict) or have is None:
        return False
    if isinstance(have, bool):
        return val.lower() == ("true" if have else "false")
    if isinstance(have, (int, float)):
        n = _number(val)
        return n is not None and n == have
    have = str(have)
    if _wild(val, have):
        return True
    # links may be given as partial URLs (DESIGN GC.4 targetLink)
    return path[-1].endswith("Link") and "/" in val and have.endswith(
        "/" + val.lstrip("/"))


def _has(have, val):
    if have is MISSING or have is None:
        return False
    if val == "*":
        return True
    if isinstance(have, dict):
        return val in have
    if isinstance(have, list):
        return any(_has(h, val) for h in have)
    return _wild(val, _text(have), whole=False)


_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?"
                      r"(Z|[+-]\d\d:\d\d)$")


def _instant(s):
    m = _RFC3339.match(s) if isinstance(s, str) else None
    if not m:
        return None
    frac = float(m.group(2) or 0)
    tz = m.group(3)
    d = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    off = 0 if tz == "Z" else (1 if tz[0] == "+" else -1) * (
        int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return d.replace(tzinfo=datetime.timezone.utc).timestamp() - off + frac


def _ordered(have, val):
    """(a, b) to compare, or (None, None) if they do not compare."""
    if isinstance(have, (list, dict)):
        return None, None
    if isinstance(have, (int, float)) and not isinstance(have, bool):
        n = _number(val)
        return (have, n) if n is not None else (None, None)
    a, b = _instant(have), _instant(val)
    if a is not None and b is not None:
        return a, b
    na, nb = _number(have), _number(val)
    if na is not None and nb is not None:
        return na, nb
    return _text(have), val
