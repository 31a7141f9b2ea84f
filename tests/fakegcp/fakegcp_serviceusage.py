"""Service Usage v1: is an API turned on in the project
(/work/shared/gcp/API-NOTES.md M.1; discovery serviceusage.v1.json):

  GET /v1/projects/P/services/SERVICE                 services.get
  GET /v1/projects/P/services:batchGet?names=...      services.batchGet

``state`` is ENABLED unless the project setup lists the service in
``disabled_services`` (fakegcp_project.py), then DISABLED.
"""
import re

from fakegcp_errors import ApiError

SERVICE_RE = re.compile(r"^[a-z][a-z0-9-]*(\.[a-z0-9-]+)*\.googleapis\.com$")
TITLES = {"compute.googleapis.com": "Compute Engine API",
          "batch.googleapis.com": "Batch API",
          "aiplatform.googleapis.com": "Vertex AI API",
          "storage.googleapis.com": "Cloud Storage API"}


class ServiceUsage:
    def __init__(self, fake):
        self.f = fake

    def service_json(self, project, name):
        if not SERVICE_RE.match(name):
            raise ApiError(400, "Invalid service name %s." % name)
        n = self.f.project_number(project)
        off = name in (self.f.cfg.get("disabled_services") or [])
        return {"name": "projects/%s/services/%s" % (n, name),
                "parent": "projects/" + n,
                "config": {"name": name,
                           "title": TITLES.get(name, name)},
                "state": "DISABLED" if off else "ENABLED"}

    def get(self, req):
        return self.service_json(req.params["project"], req.params["service"])

    def batch_get(self, req):
        names = req.query.get("names") or []
        if not names or len(names) > 30:
            raise ApiError(400, "names: give 1 to 30 services.")
        out = []
        for full in names:
            m = re.match(r"^projects/[^/]+/services/([^/]+)$", full)
            if not m:
                raise ApiError(400, "Invalid name %s." % full)
            out.append(self.service_json(req.params["project"], m.group(1)))
        return {"services": out}


def routes(fake):
    """Service Usage's rows of the route table (fakegcp_server.py)."""
    s = ServiceUsage(fake)
    P = r"/v1/projects/(?P<project>[^/]+)/services"
    return [
        ("GET", P + ":batchGet", "serviceusage",
         "serviceusage.services.batchGet", s.batch_get),
        ("GET", P + r"/(?P<service>[^/:]+)", "serviceusage",
         "serviceusage.services.get", s.get),
    ]
