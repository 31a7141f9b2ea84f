"""Cloud Storage JSON API (storage v1; discovery document
https://storage.googleapis.com/$discovery/rest?version=v1, DESIGN GG):
objects list (prefix, delimiter, offsets, paging), get (metadata or
alt=media), delete and media upload.  Checkpoints the simulated training
writes (fakegcp_sim.py) are objects here.
"""
import base64
import hashlib
import urllib.parse

import fakegcp_paging as paging
import fakegcp_project
from fakegcp_errors import ApiError
from fakegcp_sim import rfc3339


class Storage:
    """Cloud Storage JSON API objects (DESIGN GG)."""

    def __init__(self, fake):
        self.f = fake

    def obj_json(self, bucket, name, o):
        q = urllib.parse.quote(name, safe="")
        return {"kind": "storage#object",
                "id": "%s/%s/%d" % (bucket, name, o["generation"]),
                "selfLink": "https://www.googleapis.com/storage/v1/b/%s/o/%s"
                % (bucket, q),
                "mediaLink": "https://storage.googleapis.com/download/"
                "storage/v1/b/%s/o/%s?generation=%d&alt=media" % (
                    bucket, q, o["generation"]),
                "name": name, "bucket": bucket,
                "generation": str(o["generation"]),
                "metageneration": str(o["metageneration"]),
                "contentType": o["contentType"],
                "storageClass": "STANDARD", "size": str(len(o["data"])),
                "md5Hash": base64.b64encode(
                    hashlib.md5(o["data"]).digest()).decode(),
                "timeCreated": rfc3339(o["created"])[:23] + "Z",
                "updated": rfc3339(o["updated"])[:23] + "Z",
                "timeStorageClassUpdated": rfc3339(o["created"])[:23] +
                "Z", "timeFinalized": rfc3339(o["created"])[:23] + "Z"}

    def list(self, req):
        b = req.params["bucket"]
        prefix = req.q.get("prefix", "")
        delim = req.q.get("delimiter", "")
        objs = self.f.buckets.get(b, {})
        entries = []      # sorted names and prefixes, each once
        seen = set()
        for n in sorted(objs):
            if not n.startswith(prefix):
                continue
            if req.q.get("startOffset") and n < req.q["startOffset"]:
                continue
            if req.q.get("endOffset") and n >= req.q["endOffset"]:
                continue
            if delim:
                i = n.find(delim, len(prefix))
                if i >= 0:
                    pre = n[:i + len(delim)]
                    if pre not in seen:
                        seen.add(pre)
                        entries.append(("p", pre))
                    continue
            entries.append(("o", n))
        mx = int(req.q.get("maxResults") or 1000)
        mx = max(1, min(mx, 1000))
        off = paging.parse_page_token(req.q.get("pageToken"),
                                    "gcs" + b + prefix + delim)
        if off is None:
            raise ApiError(400, "Invalid argument: pageToken.", "invalid")
        page = entries[off:off + mx]
        out = {"kind": "storage#objects"}
        items = [self.obj_json(b, n, objs[n]) for k, n in page if k == "o"]
        pres = [n for k, n in page if k == "p"]
        if items:
            out["items"] = items
        if pres:
            out["prefixes"] = pres
        if off + mx < len(entries):
            out["nextPageToken"] = paging.page_token(
                off + mx, "gcs" + b + prefix + delim)
        return out

    def _obj(self, req):
        b, n = req.params["bucket"], req.params["object"]
        o = self.f.buckets.get(b, {}).get(n)
        if o is None:
            raise ApiError(404, "No such object: %s/%s" % (b, n), "notFound")
        return b, n, o

    def get(self, req):
        b, n, o = self._obj(req)
        if req.q.get("alt") == "media":
            return (200, o["data"], o["contentType"])
        return self.obj_json(b, n, o)

    def delete(self, req):
        b, n, o = self._obj(req)
        del self.f.buckets[b][n]
        return (204, None)

    def upload(self, req):
        b = req.params["bucket"]
        ut = req.q.get("uploadType")
        if ut != "media":
            raise ApiError(400, "The fake supports uploadType=media only.",
                           "invalid")
        name = req.q.get("name")
        if not name:
            raise ApiError(400, "Required parameter: name", "required")
        ctype = req.headers.get("Content-Type") or "application/octet-stream"
        o = self.f.storage_put(b, name, req.raw or b"", self.f.now(), ctype)
        return self.obj_json(b, name, o)



def routes(fake):
    """Cloud Storage's rows of the route table (fakegcp_server.py)."""
    st = Storage(fake)
    return [
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)/o", "storage",
         "storage.objects.list", st.list),
        ("GET", r"/storage/v1/b/(?P<bucket>[^/]+)/o/(?P<object>[^/]+)",
         "storage", "storage.objects.get", st.get),
        ("DELETE", r"/storage/v1/b/(?P<bucket>[^/]+)/o/(?P<object>[^/]+)",
         "storage", "storage.objects.delete", st.delete),
        ("POST", r"/upload/storage/v1/b/(?P<bucket>[^/]+)/o", "storage",
         "storage.objects.insert", st.upload),
    ] + fakegcp_project.storage_routes(fake)
