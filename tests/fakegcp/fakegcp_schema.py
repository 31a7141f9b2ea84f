"""Strict request checking against Google's discovery schemas.

Imitates the JSON->proto transcoding front end of Google APIs (DESIGN G0.1,
H.5): unknown fields, wrong JSON types and bad enum values are rejected with
400 INVALID_ARGUMENT before the method runs, and the message names the field
path, in the same words the real front end uses, e.g.

    Invalid JSON payload received. Unknown name "fooBar" at
    'instance.scheduling': Cannot find field.
    Invalid value at 'job.task_groups[0].task_spec.compute_resource.cpu_milli'
    (TYPE_INT64), "abc"

Paths use snake_case for the proto-based APIs (Batch, Vertex) and the JSON
camelCase for Compute Engine, as the respective services print them.
Schemas come from ``schemas.json`` (written by ``extract_schemas.py``).
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "schemas.json")) as _f:
    SCHEMAS = json.load(_f)["apis"]


def _newer_compute_fields(doc):
    """Compute fields newer than the compute.v1.json schemas.json comes
    from (API-NOTES K.4: the server takes them; the document is old):
    flex-start's provisioningModel FLEX_START and
    InstanceParams.requestValidForDuration (a Duration)."""
    sch = doc["schemas"]
    pm = sch["Scheduling"]["properties"]["provisioningModel"]
    if "FLEX_START" not in pm["enum"]:
        pm["enum"] = sorted(pm["enum"] + ["FLEX_START"])
    sch["InstanceParams"]["properties"].setdefault(
        "requestValidForDuration", {"$ref": "Duration"})


_newer_compute_fields(SCHEMAS["compute"])

# proto package used in type.googleapis.com names of error messages
PROTO_PKG = {"compute": "google.cloud.compute.v1",
             "batch": "google.cloud.batch.v1",
             "aiplatform": "google.cloud.aiplatform.v1",
             "storage": "google.storage.v1",
             "logging": "google.logging.v2",
             "cloudbilling": "google.cloud.billing.v1"}

DURATION_RE = re.compile(r"^-?\d+(\.\d{1,9})?s$")
DATETIME_RE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")
INT_RE = re.compile(r"^-?\d+$")


class SchemaError(Exception):
    """A request the real API would refuse with 400 INVALID_ARGUMENT.

    ``field`` is the offending path (for BadRequest.fieldViolations)."""

    def __init__(self, message, field=""):
        Exception.__init__(self, message)
        self.message = message
        self.field = field


def snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


class Validator:
    """Validate one API's request bodies and query parameters."""

    def __init__(self, api):
        self.api = api
        self.doc = SCHEMAS[api]
        self.snake = api in ("batch", "aiplatform")

    # -- field path helpers -------------------------------------------------
    def _name(self, n):
        return snake(n) if self.snake else n

    def _join(self, path, n):
        n = self._name(n)
        return path + "." + n if path else n

    def _type_name(self, prop, schema_name=None):
        """Label shown in "Invalid value at 'x' (LABEL), value"."""
        if schema_name:
            return "type.googleapis.com/%s.%s" % (PROTO_PKG[self.api],
                                                  schema_name.replace(
                                                      "GoogleCloudAiplatformV1",
                                                      ""))
        t = prop.get("type")
        fmt = prop.get("format", "")
        if "enum" in prop:
            return "TYPE_ENUM"
        if t == "string" and fmt in ("int64", "uint64"):
            return "TYPE_" + fmt.upper()
        if t == "integer":
            return "TYPE_" + (fmt or "int32").upper()
        if t == "number":
            return "TYPE_" + ("FLOAT" if fmt == "float" else "DOUBLE")
        if t == "boolean":
            return "TYPE_BOOL"
        return "TYPE_STRING"

    def _bad(self, path, label, value):
        raise SchemaError("Invalid value at '%s' (%s), %s" % (
            path, label, json.dumps(value)), path)

    # -- bodies -------------------------------------------------------------
    def check_body(self, schema_name, body, root):
        """Validate ``body`` (parsed JSON) as ``schema_name``; ``root`` is
        the request field name shown in messages (e.g. "job")."""
        self._check_object(schema_name, body, root)

    def _check_object(self, schema_name, value, path):
        if not isinstance(value, dict):
            self._bad(path, self._type_name({}, schema_name), value)
        sch = self.doc["schemas"][schema_name]
        props = sch.get("properties", {})
        for k, v in value.items():
            if k not in props:
                # proto JSON also accepts the snake_case spelling
                alt = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k)
                if alt in props and alt not in value:
                    self._check_value(props[alt], v, self._join(path, alt))
                    continue
                raise SchemaError(
                    'Invalid JSON payload received. Unknown name "%s"%s: '
                    'Cannot find field.' % (k, (" at '%s'" % path)
                                            if path else ""), path)
            self._check_value(props[k], v, self._join(path, k))


    def _check_value(self, prop, v, path):
        if v is None:
            return  # JSON null == field unset
        if "$ref" in prop:
            ref = prop["$ref"]
            if ref in self.doc["schemas"]:
                self._check_object(ref, v, path)
            return
        t = prop.get("type")
        if t == "array":
            if not isinstance(v, list):
                self._bad(path, self._type_name(prop.get("items", {})), v)
            for i, item in enumerate(v):
                self._check_value(prop.get("items", {}), item,
                                  "%s[%d]" % (path, i))
            return
        if t == "object":
            if not isinstance(v, dict):
                self._bad(path, "TYPE_MESSAGE", v)
            ap = prop.get("additionalProperties")
            if ap:
                for k, item in v.items():
                    self._check_value(ap, item, "%s[%s]" % (path, k))
            elif "properties" in prop:
                for k, item in v.items():
                    if k not in prop["properties"]:
                        raise SchemaError(
                            'Invalid JSON payload received. Unknown name '
                            '"%s" at \'%s\': Cannot find field.' % (k, path),
                            path)
                    self._check_value(prop["properties"][k], item,
                                      self._join(path, k))
            return
        fmt = prop.get("format", "")
        if t == "string":
            if fmt in ("int64", "uint64"):
                # Google accepts both "123" and 123 for 64-bit integers
                if isinstance(v, bool) or not (
                        isinstance(v, int) or
                        (isinstance(v, str) and INT_RE.match(v)) or
                        (isinstance(v, float) and v.is_integer())):
                    self._bad(path, self._type_name(prop), v)
                if fmt == "uint64" and int(v) < 0:
                    self._bad(path, self._type_name(prop), v)
                return
            if not isinstance(v, str):
                self._bad(path, self._type_name(prop), v)
            if "enum" in prop and v not in prop["enum"]:
                self._bad(path, "type.googleapis.com/%s.%s" % (
                    PROTO_PKG[self.api], path.split(".")[-1].split("[")[0]),
                    v)
            if fmt == "google-duration" and not DURATION_RE.match(v):
                self._bad(path, "type.googleapis.com/google.protobuf.Duration",
                          v)
            if fmt == "google-datetime" and not DATETIME_RE.match(v):
                self._bad(path,
                          "type.googleapis.com/google.protobuf.Timestamp", v)
            return
        if t == "integer":
            if isinstance(v, bool):
                self._bad(path, self._type_name(prop), v)
            if isinstance(v, str) and INT_RE.match(v):
                v = int(v)
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if not isinstance(v, int):
                self._bad(path, self._type_name(prop), v)
            if fmt == "uint32" and not 0 <= v < 2 ** 32:
                self._bad(path, self._type_name(prop), v)
            if fmt == "int32" and not -2 ** 31 <= v < 2 ** 31:
                self._bad(path, self._type_name(prop), v)
            return
        if t == "number":
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                self._bad(path, self._type_name(prop), v)
            if isinstance(v, str):
                try:
                    float(v)
                except ValueError:
                    self._bad(path, self._type_name(prop), v)
            return
        if t == "boolean":
            if not isinstance(v, bool):
                self._bad(path, "TYPE_BOOL", v)
            return
        if t == "any":
            return

    # -- required fields ----------------------------------------------------
    def missing_required(self, schema_name, body, root):
        """Paths of fields marked "Required." in the discovery text that are
        absent, descending into present sub-objects and array items."""
        out = []
        self._req(schema_name, body, root, out)
        return out

    def _req(self, schema_name, value, path, out):
        if not isinstance(value, dict):
            return
        for k, p in self.doc["schemas"][schema_name]["properties"].items():
            sub = self._join(path, k)
            v = value.get(k)
            if v is None and k not in value:
                alt = snake(k)
                v = value.get(alt)
            if p.get("required") and not p.get("outputOnly") and (
                    v is None or v == "" or v == [] or v == {}):
                out.append(sub)
                continue
            if v is None:
                continue
            if "$ref" in p and p["$ref"] in self.doc["schemas"]:
                self._req(p["$ref"], v, sub, out)
            elif p.get("type") == "array" and "$ref" in p.get("items", {}):
                for i, item in enumerate(v if isinstance(v, list) else []):
                    self._req(p["items"]["$ref"], item,
                              "%s[%d]" % (sub, i), out)

    # -- query parameters -----------------------------------------------------
    STANDARD = {"fields", "prettyPrint", "alt", "$.xgafv", "key", "quotaUser",
                "access_token", "oauth_token", "callback", "uploadType",
                "upload_protocol", "userIp"}

    def check_query(self, method_id, query):
        """``query``: dict name -> [values].  Unknown names and bad values
        give the transcoder's messages."""
        m = self.doc["methods"][method_id]
        params = m["parameters"]
        for name, vals in query.items():
            if name in self.STANDARD:
                if name == "$.xgafv" and vals[-1] not in ("1", "2"):
                    raise SchemaError("Invalid value at 'xgafv' (TYPE_ENUM), "
                                      '"%s"' % vals[-1], "xgafv")
                if name == "alt" and vals[-1] not in ("json", "media",
                                                      "proto"):
                    raise SchemaError("Invalid value at 'alt' (TYPE_ENUM), "
                                      '"%s"' % vals[-1], "alt")
                continue
            p = params.get(name)
            if p is None or p.get("location") == "path":
                raise SchemaError(
                    'Invalid JSON payload received. Unknown name "%s": '
                    "Cannot bind query parameter. Field '%s' could not be "
                    "found in request message." % (name, name), name)
            v = vals[-1]
            t = p.get("type")
            if t == "integer" or p.get("format") in ("int64", "uint64",
                                                     "uint32", "int32"):
                if not INT_RE.match(v):
                    raise SchemaError(
                        "Invalid value at '%s' (TYPE_%s), \"%s\"" % (
                            self._name(name),
                            (p.get("format") or "int32").upper(), v), name)
                if "minimum" in p and int(v) < int(p["minimum"]) or \
                        "maximum" in p and int(v) > int(p["maximum"]):
                    raise SchemaError(
                        "Invalid value at '%s' (TYPE_%s), \"%s\"" % (
                            self._name(name),
                            (p.get("format") or "int32").upper(), v), name)
            elif t == "boolean":
                if v not in ("true", "false", "True", "False", "1", "0"):
                    raise SchemaError(
                        "Invalid value at '%s' (TYPE_BOOL), \"%s\"" % (
                            self._name(name), v), name)
            elif "enum" in p and v not in p["enum"]:
                raise SchemaError("Invalid value at '%s' (TYPE_ENUM), \"%s\""
                                  % (self._name(name), v), name)


_VALIDATORS = {}


def validator(api):
    if api not in _VALIDATORS:
        _VALIDATORS[api] = Validator(api)
    return _VALIDATORS[api]
