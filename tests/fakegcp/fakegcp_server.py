"""The HTTP front end shared by every API: routing by Google's paths,
the Bearer check, strict request checks against the discovery schemas
(fakegcp_schema.py), ``fields``, injected faults, counters and the request
log.  Serves no API of its own; the route table is made of each API
module's routes(): Compute Engine, Cloud Quotas, Cloud Batch, Vertex AI,
Cloud Billing, Cloud Storage, Cloud Logging (in that order), plus the OAuth token
endpoint and metadata server (fakegcp_oauth.py) and the control API
(fakegcp_control.py).
"""
import http.server
import json
import re
import socket
import time
import urllib.parse

import fakegcp_batch
import fakegcp_billing
import fakegcp_cloudquotas
import fakegcp_compute
import fakegcp_policy
import fakegcp_fields as fields
import fakegcp_iam
import fakegcp_project
import fakegcp_logging
import fakegcp_oauth as oauth
import fakegcp_schema as schema
import fakegcp_serviceusage
import fakegcp_storage
import fakegcp_sts
import fakegcp_vertex
from fakegcp_errors import HTML_404, LEGACY_APIS, ApiError, OAuthError

# the API modules whose routes() make the route table, in matching order
API_MODULES = (fakegcp_compute, fakegcp_policy, fakegcp_cloudquotas,
               fakegcp_batch, fakegcp_vertex, fakegcp_billing,
               fakegcp_storage, fakegcp_iam, fakegcp_serviceusage,
               fakegcp_logging, fakegcp_sts)


class Req:
    def __init__(self, method, path, params, query, headers, body_bytes):
        self.method = method
        self.path = path
        self.params = params
        self.q = {k: v[-1] for k, v in query.items()}
        self.query = query
        self.headers = headers
        self.raw = body_bytes
        self.body = None



def build_routes(fake):
    """(http method, compiled regex, api, method id, handler, request
    schema, body root) for every API method the fake answers."""
    table = [row for mod in API_MODULES for row in mod.routes(fake)]
    out = []
    for row in table:
        m, rx, api, mid, fn = row[:5]
        req_schema = row[5] if len(row) > 5 else None
        root = row[6] if len(row) > 6 else None
        out.append((m, re.compile("^" + rx + "$"), api, mid, fn, req_schema,
                    root))
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle the body waits
    # for the client's delayed ACK of the headers (40 ms), which is 80
    # simulated seconds at 2000x (doc/DESIGN.md "Simulated time").
    disable_nagle_algorithm = True
    server_version = "ESF"
    sys_version = ""

    def log_message(self, fmt, *args):   # keep stdout clean
        pass

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if te == "chunked":
            data = b""
            while True:
                line = self.rfile.readline()
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send(self, code, body, ctype="application/json; charset=UTF-8",
              headers=None):
        if isinstance(body, (dict, list)):
            pretty = self._q.get("prettyPrint", ["true"])[-1] != "false"
            body = (json.dumps(body, indent=2 if pretty else None) +
                    "\n").encode()
        elif body is None:
            body = b""
        self._status = code
        self._record()          # before the client can see the answer
        self.send_response(code)
        if code != 204:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)) if code != 204
                         else "0")
        self.send_header("Vary", "Origin, X-Origin, Referer")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if code != 204 and self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        self._dispatch()

    do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

    def _record(self):
        """Put this request in the request log and fakegcp.log, once.
        Called just before the reply is written, so a client that asks
        /_fake/requests right after its answer finds it there."""
        if self._recorded:
            return
        self._recorded = True
        fake = self.server.fake
        dt = time.time() - self._t0
        mid = getattr(self, "_mid", None)
        if not self._fpath.startswith("/_fake/"):
            with fake.lock:
                fake.reqlog.append({
                    "method": self.command, "path": self._fpath,
                    "query": self._u.query, "method_id": mid,
                    "status": self._status, "time": fake.now(),
                    "real_time": self._t0, "ms": round(dt * 1000, 1)})
        fake.log("%.3f %s %s %s %s %d %.1fms" % (
            self._t0, self.command, self._u.path, self._u.query[:200],
            mid or ("fake.control" if self._fpath.startswith("/_fake/")
                    else "-"), self._status, dt * 1000))

    def _dispatch(self):
        fake = self.server.fake
        t0 = time.time()
        self._status = 0
        self._t0 = t0
        self._recorded = False
        u = urllib.parse.urlsplit(self.path)
        self._u = u
        self._q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        rawpath = u.path
        path = urllib.parse.unquote(rawpath)
        self._fpath = path
        self._mid = None
        self._api_name = None
        body = self._read_body()
        try:
            if path.startswith("/_fake/"):
                try:
                    obj = json.loads(body) if body.strip() else {}
                except ValueError:
                    raise ApiError(400, "control body must be JSON")
                with fake.lock:
                    fake.tick()
                    res = self.server.control.handle(self.command, path,
                                                     self._q, obj)
                self._send(200, res)
                return
            self._api(fake, rawpath, path, body)
        except ApiError as e:
            self._send(e.code, e.body(getattr(self, "_api_name", None)),
                       headers=e.headers)
        except OAuthError as e:
            self._send(e.code, {"error": e.error,
                                "error_description": e.description})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:   # a bug in the fake: say so, loudly
            import traceback
            fake.log("INTERNAL ERROR %s" % traceback.format_exc())
            self._send(500, ApiError(500, "fakegcp internal error: %r" % e)
                       .body(None))
        finally:
            self._record()      # dropped connections never reached _send

    # -- API dispatch ------------------------------------------------------------
    def _api(self, fake, rawpath, path, body):
        cmd = self.command
        if path == "/token" and cmd == "POST":
            self._mid = "oauth2.token"
            self._count(fake, self._mid)
            if self._fault(fake, path):
                return self._mid
            self._send(200, oauth.token(fake, body, self.headers.get("Host"),
                                        self.server.url))
            return self._mid
        if path == "/v1/token" and cmd == "POST":
            # Security Token Service (sts.googleapis.com/v1/token)
            self._mid = "sts.token"
            self._count(fake, self._mid)
            if self._fault(fake, path):
                return self._mid
            self._send(200, fakegcp_sts.sts_token(fake, body))
            return self._mid
        if path.startswith(oauth.METADATA):
            self._mid = "metadata." + path[len(oauth.METADATA):]
            self._count(fake, self._mid)
            if self._fault(fake, path):
                return self._mid
            self._send(*oauth.metadata(fake, path,
                                       self.headers.get("Metadata-Flavor")))
            return self._mid
        # storage object names are one percent-encoded segment (G)
        match = None
        for m, rx, api, mid, fn, rs, root in self.server.routes:
            if m != cmd:
                continue
            target = rawpath if api == "storage" else path
            mm = rx.match(target)
            if mm:
                match = (api, mid, fn, rs, root, mm.groupdict())
                break
        if match is None:
            self._send(404, HTML_404, "text/html; charset=UTF-8")
            return None
        api, mid, fn, rs, root, params = match
        if api == "storage":
            params = {k: urllib.parse.unquote(v) for k, v in params.items()}
        self._api_name = api
        self._mid = mid
        self._count(fake, mid)
        if self._fault(fake, path):
            return mid
        oauth.check_bearer(fake, self.headers.get("Authorization"))
        fakegcp_project.check_enabled(fake, api, params.get("project"))
        # strict checks (schema module)
        if api in schema.SCHEMAS:
            val = schema.validator(api)
            try:
                val.check_query(mid, self._q)
            except schema.SchemaError as e:
                raise self._invalid(api, e)
        parsed = None
        if rs:
            try:
                parsed = json.loads(body.decode("utf-8")) if body.strip() \
                    else {}
            except ValueError as e:
                raise ApiError(400, "Invalid JSON payload received. %s" % e,
                               "parseError")
            try:
                val.check_body(rs, parsed, root)
            except schema.SchemaError as e:
                raise self._invalid(api, e)
            if api == "compute":
                pass   # Compute's required fields are checked by insert()
            elif api == "aiplatform":
                pass   # Vertex reports its own "List of found errors"
            else:
                miss = val.missing_required(rs, parsed, root)
                if miss:
                    raise ApiError(400, "Field %s is required." % miss[0],
                                   details=[{
                                       "@type": "type.googleapis.com/google."
                                       "rpc.BadRequest", "fieldViolations": [
                                           {"field": p, "description":
                                            "Field is required."}
                                           for p in miss]}])
        # the selector is checked before the method runs: a bad one is a
        # 400 without side effects
        sel = None
        f = self._q.get("fields", [None])[-1]
        if f:
            try:
                sel = fields.parse_fields(f)
            except fields.FieldsError as e:
                raise ApiError(400, "Invalid field selection %s: %s" % (f, e),
                               "invalid")
        req = Req(cmd, path, params, self._q, self.headers, body)
        req.body = parsed
        with fake.lock:
            fake.tick()
            res = fn(req)
        if isinstance(res, tuple):
            if len(res) == 3:
                self._send(res[0], res[1], res[2])
            else:
                self._send(res[0], res[1])
            return mid
        if sel is not None:
            res = fields.apply_fields(res, sel)
        self._send(200, res)
        return mid

    def _invalid(self, api, e):
        details = None
        if api not in LEGACY_APIS:
            details = [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [{"field": e.field,
                                             "description": e.message}]}]
        return ApiError(400, e.message, "invalid", details=details)

    def _count(self, fake, mid):
        with fake.lock:
            fake.counters[mid] = fake.counters.get(mid, 0) + 1

    def _fault(self, fake, path):
        """Apply the first matching injected fault.  True if the request was
        answered (or dropped) by the fault: then it has no side effects."""
        with fake.lock:
            hit = None
            for fa in fake.faults:
                if fa["count"] <= 0:
                    continue
                if fa["method"] not in ("*", self.command):
                    continue
                if not re.search(fa["path"], path):
                    continue
                if fa.get("skip", 0) > 0:   # let the first SKIP pass
                    fa["skip"] -= 1
                    continue
                fa["count"] -= 1
                hit = dict(fa)
                break
            fake.faults = [fa for fa in fake.faults if fa["count"] > 0]
        if not hit:
            return False
        if hit.get("latency_ms"):
            time.sleep(hit["latency_ms"] / 1000.0)
        if hit.get("drop"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        st = hit.get("status")
        if not st:
            return False
        hdrs = {}
        if hit.get("retry_after") is not None:
            hdrs["Retry-After"] = str(hit["retry_after"])
        msg = {429: "Quota exceeded for quota metric 'Queries' and limit "
                    "'Queries per minute' of service.",
               500: "Internal error encountered.",
               502: "Bad Gateway", 503: "The service is currently "
                                        "unavailable.",
               504: "Deadline exceeded."}.get(st, "Injected fault")
        err = ApiError(st, msg, headers=hdrs)
        self._send(st, err.body(getattr(self, "_api_name", None)),
                   headers=hdrs)
        return True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True
