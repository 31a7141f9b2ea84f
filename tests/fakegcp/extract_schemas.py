#!/usr/bin/python3
"""Extract the compact schema file the fake GCP server validates against.

Reads Google's published discovery documents (``/work/shared/gcp/discovery``
by default, or the directory given as the first argument) and writes
``schemas.json`` next to this script.  Only the methods the fake serves are
kept, and only the schemas reachable from their request bodies; descriptions
are dropped except a short method description and a ``required`` flag derived
from the discovery text ("Required." prefix, or Compute's
``annotations.required``).

Usage: /usr/bin/python3 tests/fakegcp/extract_schemas.py [DISCOVERY_DIR]
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.join(HERE, "..", "..", "..", "shared", "gcp", "discovery")
if not os.path.isdir(DEFAULT_DIR):
    DEFAULT_DIR = "/work/shared/gcp/discovery"

# API short name -> (discovery file, method ids the fake serves)
WANTED = {
    "compute": ("compute.v1.json", [
        "compute.regions.get", "compute.regions.list", "compute.projects.get",
        "compute.zones.list", "compute.zones.get",
        "compute.acceleratorTypes.list", "compute.acceleratorTypes.get",
        "compute.acceleratorTypes.aggregatedList",
        "compute.instances.insert", "compute.instances.get",
        "compute.instances.list", "compute.instances.delete",
        "compute.instances.aggregatedList",
        "compute.instances.getGuestAttributes",
        "compute.zoneOperations.get", "compute.zoneOperations.wait",
        "compute.zoneOperations.list",
        "compute.networks.get", "compute.subnetworks.get",
        "compute.images.getFromFamily",
        "compute.resourcePolicies.insert", "compute.resourcePolicies.get",
        "compute.resourcePolicies.delete",
        "compute.regionOperations.get", "compute.regionOperations.wait",
        "compute.reservations.aggregatedList",
    ]),
    "batch": ("batch.v1.json", [
        "batch.projects.locations.jobs.create",
        "batch.projects.locations.jobs.get",
        "batch.projects.locations.jobs.list",
        "batch.projects.locations.jobs.delete",
        "batch.projects.locations.jobs.cancel",
        "batch.projects.locations.jobs.taskGroups.tasks.list",
        "batch.projects.locations.jobs.taskGroups.tasks.get",
        "batch.projects.locations.operations.get",
    ]),
    "aiplatform": ("aiplatform.v1.json", [
        "aiplatform.projects.locations.customJobs.create",
        "aiplatform.projects.locations.customJobs.get",
        "aiplatform.projects.locations.customJobs.list",
        "aiplatform.projects.locations.customJobs.cancel",
        "aiplatform.projects.locations.customJobs.delete",
        "aiplatform.projects.locations.operations.get",
    ]),
    "cloudbilling": ("cloudbilling.v1.json", [
        "cloudbilling.services.list", "cloudbilling.services.skus.list",
    ]),
    "logging": ("logging.v2.json", ["logging.entries.list"]),
    "storage": ("storage.v1.json", [
        "storage.objects.list", "storage.objects.get",
        "storage.objects.insert", "storage.objects.delete",
        "storage.buckets.get", "storage.buckets.testIamPermissions",
    ]),
    # what gpuq doctor asks (API-NOTES.md M)
    "iam": ("iam.v1.json", [
        "iam.projects.serviceAccounts.get",
        "iam.projects.serviceAccounts.testIamPermissions",
    ]),
    "cloudresourcemanager": ("cloudresourcemanager.v3.json", [
        "cloudresourcemanager.projects.get",
        "cloudresourcemanager.projects.testIamPermissions",
    ]),
    "serviceusage": ("serviceusage.v1.json", [
        "serviceusage.services.get", "serviceusage.services.batchGet",
    ]),
}

PROP_KEYS = ("type", "format", "enum", "$ref", "pattern")


def iter_methods(res):
    for m in res.get("methods", {}).values():
        yield m
    for sub in res.get("resources", {}).values():
        yield from iter_methods(sub)


def slim_prop(p, method_ids):
    out = {k: p[k] for k in PROP_KEYS if k in p}
    desc = p.get("description", "")
    req = p.get("annotations", {}).get("required", [])
    if desc.startswith("Required.") or any(m in method_ids for m in req):
        out["required"] = True
    if desc.startswith("Output only.") or p.get("readOnly"):
        out["outputOnly"] = True
    if "items" in p:
        out["items"] = slim_prop(p["items"], method_ids)
    if "additionalProperties" in p:
        out["additionalProperties"] = slim_prop(p["additionalProperties"],
                                                method_ids)
    if "properties" in p:  # inline object (rare)
        out["properties"] = {k: slim_prop(v, method_ids)
                             for k, v in p["properties"].items()}
    return out


def refs_of(p):
    if "$ref" in p:
        yield p["$ref"]
    for k in ("items", "additionalProperties"):
        if k in p:
            yield from refs_of(p[k])
    for v in p.get("properties", {}).values():
        yield from refs_of(v)


def extract(ddir):
    out = {"source": {}, "apis": {}}
    for api, (fname, ids) in WANTED.items():
        with open(os.path.join(ddir, fname)) as f:
            doc = json.load(f)
        out["source"][api] = {"file": fname, "revision": doc.get("revision")}
        methods = {}
        todo = []
        for m in iter_methods(doc):
            if m["id"] not in ids:
                continue
            params = {}
            for name, p in m.get("parameters", {}).items():
                q = {k: p[k] for k in ("type", "format", "enum", "location",
                                       "required", "minimum", "maximum")
                     if k in p}
                params[name] = q
            methods[m["id"]] = {
                "httpMethod": m["httpMethod"],
                "path": m.get("flatPath") or m["path"],
                "description": m.get("description", "").split("\n")[0][:300],
                "parameters": params,
                "request": m.get("request", {}).get("$ref"),
                "response": m.get("response", {}).get("$ref"),
            }
            if methods[m["id"]]["request"]:
                todo.append(methods[m["id"]]["request"])
        missing = set(ids) - set(methods)
        if missing:
            raise SystemExit("%s: methods not found: %s" % (fname, missing))
        schemas = {}
        while todo:
            name = todo.pop()
            if name in schemas:
                continue
            s = doc["schemas"][name]
            props = {k: slim_prop(v, ids)
                     for k, v in s.get("properties", {}).items()}
            schemas[name] = {"type": s.get("type", "object"),
                             "properties": props}
            if "additionalProperties" in s:
                schemas[name]["additionalProperties"] = slim_prop(
                    s["additionalProperties"], ids)
            for v in props.values():
                todo.extend(refs_of(v))
        out["apis"][api] = {
            "globalParameters": sorted(doc.get("parameters", {}).keys()),
            "methods": methods, "schemas": schemas}
    return out


def main():
    ddir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR
    data = extract(ddir)
    dest = os.path.join(HERE, "schemas.json")
    with open(dest, "w") as f:
        json.dump(data, f, indent=0, sort_keys=True)
        f.write("\n")
    n = sum(len(a["schemas"]) for a in data["apis"].values())
    print("wrote %s: %d methods, %d schemas" % (
        dest, sum(len(a["methods"]) for a in data["apis"].values()), n))


if __name__ == "__main__":
    main()
