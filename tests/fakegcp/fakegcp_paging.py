"""List methods of every API: sorted indexes, page tokens, pages and the
``filter`` parameter's error wording (DESIGN G0.2, 0.3).

Serves no API of its own.  Compute Engine (compute v1), Cloud Batch
(batch v1) and Vertex AI (aiplatform v1) list resources from
IndexedDict/SortedIndex with position tokens (scan_page); short fixed lists
(regions, zones, tasks, quotaInfos, SKUs) page by offset (paginate).  See
README.md "Speed".
"""
import re
import base64
import bisect
import hashlib
import json

import fakegcp_filter as flt
from fakegcp_errors import ApiError


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


class SortedIndex:
    """Resources of one group kept sorted by a unique key (bisect), so a
    list page finds its start in O(log n) and costs O(page size)."""
    __slots__ = ("keys", "vals")

    def __init__(self):
        self.keys = []
        self.vals = []

    def __len__(self):
        return len(self.keys)

    def add(self, key, val):
        i = bisect.bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.vals.insert(i, val)

    def remove(self, key):
        i = bisect.bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            del self.keys[i]
            del self.vals[i]

    def scan(self, after=None, reverse=False):
        """(key, value) pairs strictly after ``after`` in key order (or
        before it, descending, with ``reverse``)."""
        keys, vals = self.keys, self.vals
        if reverse:
            i = len(keys) - 1 if after is None else \
                bisect.bisect_left(keys, after) - 1
            while i >= 0:
                yield keys[i], vals[i]
                i -= 1
        else:
            i = 0 if after is None else bisect.bisect_right(keys, after)
            while i < len(keys):
                yield keys[i], vals[i]
                i += 1


NO_INDEX = SortedIndex()


class IndexedDict(dict):
    """A dict of resources that keeps, for each named order, one
    SortedIndex per group: ``index(order, group(dict key))``.  Every
    mutation goes through __setitem__/__delitem__/pop/clear."""

    def __init__(self, group, **orders):
        dict.__init__(self)
        self._group = group
        self._orders = orders
        self._indexes = {}

    def index(self, order, group):
        return self._indexes.get((order, group), NO_INDEX)

    def projects(self):
        """First members of the groups that hold resources."""
        return {g[0] for (o, g), idx in self._indexes.items() if len(idx)}

    def _add(self, k, v):
        g = self._group(k)
        for name, fn in self._orders.items():
            self._indexes.setdefault((name, g), SortedIndex()).add(fn(v), v)

    def _drop(self, k, v):
        g = self._group(k)
        for name, fn in self._orders.items():
            idx = self._indexes.get((name, g))
            if idx is not None:
                idx.remove(fn(v))

    def __setitem__(self, k, v):
        if k in self:
            self._drop(k, dict.__getitem__(self, k))
        dict.__setitem__(self, k, v)
        self._add(k, v)

    def __delitem__(self, k):
        self._drop(k, dict.__getitem__(self, k))
        dict.__delitem__(self, k)

    def pop(self, k, *default):
        if k in self:
            v = dict.__getitem__(self, k)
            del self[k]
            return v
        if default:
            return default[0]
        raise KeyError(k)

    def clear(self):
        dict.clear(self)
        self._indexes.clear()

    def _unsupported(self, *a, **kw):
        raise NotImplementedError("IndexedDict: use d[k] = v / pop")

    update = setdefault = popitem = _unsupported


def group2(k):
    return k[:2]


def page_size(req, size_param, default, maximum):
    size = req.q.get(size_param)
    size = int(size) if size not in (None, "") else default
    if size <= 0:
        size = default
    return min(size, maximum)


def bad_token(req):
    return ApiError(400, "Invalid value for field 'pageToken': '%s'. "
                    "Invalid page token." % req.q.get("pageToken"),
                    "invalid")


def paginate(items, req, size_param, default, maximum, salt=""):
    """Slice ``items`` (a short fixed list) for the page; return (page,
    nextPageToken|None)."""
    size = page_size(req, size_param, default, maximum)
    off = parse_page_token(req.q.get("pageToken"), salt)
    if off is None:
        raise bad_token(req)
    page = items[off:off + size]
    nxt = page_token(off + size, salt) if off + size < len(items) \
        else None
    return page, nxt


def scan_page(req, sources, size, filt, cls, now, salt, reverse=False):
    """One page of a list of resources.  ``sources``: [(scope number,
    SortedIndex)] in listing order, scope numbers ascending; ``filt``: the
    compiled filter, evaluated on ``cls.filter_view`` when it reads only
    ``cls.VIEW_PATHS`` (so skipped resources cost no JSON), else on the
    resource's JSON.  The page token is the position of the last resource
    returned, so the next page starts there in O(log n) and a page costs
    O(page size) plus the non-matching resources it skips; there is a token
    only if another match follows.  ``salt`` ties tokens to one list and
    its filter and order.  Returns ([(scope number, JSON)], token|None)."""
    try:
        pos = parse_position_token(req.q.get("pageToken"), salt)
    except ValueError:
        raise bad_token(req)
    everything = filt.tree is None
    cheap = not everything and filt.reads_only(cls.VIEW_PATHS)
    page, last, more = [], None, False
    for sno, idx in sources:
        if pos is not None and sno < pos[0]:
            continue
        after = pos[1] if pos is not None and sno == pos[0] else None
        for k, v in idx.scan(after, reverse):
            j = None
            if not everything:
                if cheap:
                    ok = filt.match(v.filter_view(now))
                else:
                    j = v.to_json(now)
                    ok = filt.match(j)
                if not ok:
                    continue
            if len(page) == size:
                more = True
                break
            page.append((sno, j if j is not None else v.to_json(now)))
            last = (sno, k)
        if more:
            break
    return page, (position_token(last, salt) if more else None)


def list_salt(req, *what):
    return "/".join(list(what) + [req.q.get("filter", ""),
                                  req.q.get("orderBy", "")])



def list_filter(req, api, aliases=None):
    """The request's ``filter`` compiled (fakegcp_filter), or Google's 400
    for a malformed one: Compute's wording ("Invalid value for field
    'filter': ... Invalid list filter expression.") or INVALID_ARGUMENT
    naming the problem for Batch and Vertex."""
    expr = req.q.get("filter")
    try:
        return flt.compile_filter(expr, compute=api == "compute",
                                  aliases=aliases)
    except flt.FilterError as e:
        if api == "compute":
            raise ApiError(400, "Invalid value for field 'filter': '%s'. "
                           "Invalid list filter expression." % expr,
                           "invalid")
        raise ApiError(400, "Invalid list filter \"%s\": %s." % (expr, e))


HYPHEN_LABEL = re.compile(r"labels\.[A-Za-z0-9_]*-[A-Za-z0-9_-]*")


def refuse_hyphen_label(fake, req):
    """With config ``refuse_hyphen_label_filter``: a Batch or Vertex list
    filter on a hyphenated label key is refused, INVALID_ARGUMENT."""
    expr = req.q.get("filter") or ""
    if fake.cfg.get("refuse_hyphen_label_filter") and \
            HYPHEN_LABEL.search(expr):
        raise ApiError(400, "Invalid list filter \"%s\": label keys "
                       "containing '-' are not supported in a filter."
                       % expr)


def filter_items(req, objs, api="compute", aliases=None):
    f = list_filter(req, api, aliases)
    if f.tree is None:
        return objs
    return [o for o in objs if f.match(o)]

