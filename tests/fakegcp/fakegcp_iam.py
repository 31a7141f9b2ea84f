"""IAM v1 service accounts and Resource Manager v3 projects: what
``gpuq doctor`` and gpuqd's start-up check ask about the caller
(/work/shared/gcp/API-NOTES.md M.3; discovery documents iam.v1.json and
cloudresourcemanager.v3.json):

  GET  /v1/projects/-/serviceAccounts/EMAIL                  get
  POST /v1/projects/-/serviceAccounts/EMAIL:testIamPermissions
  GET  /v3/projects/P                                        get
  POST /v3/projects/P:testIamPermissions

testIamPermissions answers the subset of the asked permissions the
caller holds (the member is left out when none), refuses wildcards, and
answers 404 for an account that does not exist.  Which accounts exist and
what the caller lacks come from the project setup (fakegcp_project.py).
"""
import fakegcp_project as setup
from fakegcp_errors import ApiError


class Iam:
    def __init__(self, fake):
        self.f = fake

    def _account(self, req):
        email = req.params["email"]
        project = email.partition("@")[2].split(".")[0] or \
            self.f.default_project
        if not setup.account_exists(self.f, self.f.default_project, email):
            raise ApiError(404, "Unknown service account", status="NOT_FOUND")
        return email, project

    def sa_get(self, req):
        email, project = self._account(req)
        d = {"name": "projects/%s/serviceAccounts/%s" % (project, email),
             "projectId": project, "email": email,
             "uniqueId": str(100000000000000000000 + abs(hash(email)) %
                             10 ** 20),
             "displayName": email.partition("@")[0],
             "oauth2ClientId": str(abs(hash(email)) % 10 ** 20)}
        if email in (self.f.cfg.get("disabled_service_accounts") or []):
            d["disabled"] = True
        return d

    def sa_test(self, req):
        email, _ = self._account(req)
        perms = (req.body or {}).get("permissions")
        setup.check_permissions(perms)
        denied = set()
        if email in (self.f.cfg.get("act_as_denied") or []):
            denied.add("iam.serviceAccounts.actAs")
        ok = [p for p in perms if p not in denied]
        return {"permissions": ok} if ok else {}

    def _project(self, req):
        p = req.params["project"]
        if self.f.cfg.get("project_denied"):
            raise ApiError(403, "The caller does not have permission",
                           status="PERMISSION_DENIED")
        return p

    def project_get(self, req):
        p = self._project(req)
        n = self.f.project_number(p)
        return {"name": "projects/" + n, "parent": "organizations/1",
                "projectId": p, "state": "ACTIVE", "displayName": p,
                "createTime": "2024-01-02T03:04:05.678Z",
                "etag": "W/\"%s\"" % n}

    def project_test(self, req):
        self._project(req)
        perms = (req.body or {}).get("permissions")
        setup.check_permissions(perms)
        denied = set(self.f.cfg.get("denied_permissions") or [])
        ok = [p for p in perms if p not in denied]
        return {"permissions": ok} if ok else {}


def routes(fake):
    """IAM's and Resource Manager's rows of the route table."""
    i = Iam(fake)
    SA = r"/v1/projects/-/serviceAccounts/(?P<email>[^/:]+)"
    P = r"/v3/projects/(?P<project>[^/:]+)"
    return [
        ("GET", SA, "iam", "iam.projects.serviceAccounts.get", i.sa_get),
        ("POST", SA + ":testIamPermissions", "iam",
         "iam.projects.serviceAccounts.testIamPermissions", i.sa_test,
         "TestIamPermissionsRequest"),
        ("GET", P, "cloudresourcemanager",
         "cloudresourcemanager.projects.get", i.project_get),
        ("POST", P + ":testIamPermissions", "cloudresourcemanager",
         "cloudresourcemanager.projects.testIamPermissions", i.project_test,
         "TestIamPermissionsRequest"),
    ]
