"""Cloud Quotas (cloudquotas v1; discovery document
https://cloudquotas.googleapis.com/$discovery/rest?version=v1, DESIGN GB.2): quotaInfos list and get for aiplatform.googleapis.com, one
dimensionsInfo per region whose Vertex limit was set plus the default;
and for compute.googleapis.com the GPU-family and VM-family quotas
(DESIGN GA.5), set with /_fake/quota metric "<quota id>:<family>" (region
"*" for the family's default).
"""
import fakegcp_catalog as cat
import fakegcp_paging as paging
from fakegcp_errors import ApiError
import fakegcp_quota as fq
from fakegcp_quota import VERTEX_DEFAULT_LIMIT


class CloudQuotas:
    """Cloud Quotas v1 (DESIGN GB.2); limits from fakegcp_quota."""

    def __init__(self, fake):
        self.f = fake

    def quota_infos(self, req):
        p = self.f.project_id(req.params["project"])
        svc = req.params["service"]
        if req.params["location"] != "global":
            raise ApiError(400, "Location must be global.")
        infos = []
        if svc == "aiplatform.googleapis.com":
            for g in sorted({g["vq"] for g in cat.GPUS.values()}):
                for spot in (False, True):
                    infos.append(self.quota_info(p, g, spot))
        elif svc == "compute.googleapis.com":
            infos = [self.family_info(p, q) for q in fq.FAMILY_IDS]
        page, nxt = paging.paginate(infos, req, "pageSize", 100, 1000,
                                    "qi" + svc)
        out = {"quotaInfos": page}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def quota_info(self, p, vq, spot):
        f = self.f
        metric = f.vertex_metric(vq, spot)
        camel = "".join(w.capitalize() for w in metric.split("_"))
        qid = "%sPerProjectPerRegion" % camel
        dims = [{"dimensions": {"region": r},
                 "details": {"value": str(int(f.vertex_limit(p, r, metric)))},
                 "applicableLocations": [r]}
                for r in cat.REGIONS
                if (p, r, metric) in f.vertex_limits]
        dims.append({"dimensions": {},
                     "details": {"value": str(VERTEX_DEFAULT_LIMIT)},
                     "applicableLocations": list(cat.REGIONS)})
        return {"name": "projects/%s/locations/global/services/aiplatform."
                "googleapis.com/quotaInfos/%s" % (f.project_number(p), qid),
                "quotaId": qid,
                "metric": "aiplatform.googleapis.com/" + metric,
                "service": "aiplatform.googleapis.com", "isPrecise": True,
                "containerType": "PROJECT", "dimensions": ["region"],
                "metricDisplayName": metric, "quotaDisplayName":
                "Custom model training %s%s GPUs per region" % (
                    "preemptible " if spot else "", vq.upper()),
                "metricUnit": "1",
                "quotaIncreaseEligibility": {"isEligible": True},
                "isFixed": False, "isConcurrent": False,
                "dimensionsInfos": dims}

    def family_info(self, p, qid):
        """Compute Engine's family quotas (DESIGN GA.5): one
        dimensionsInfo per (region, family) whose limit was set, then a
        default per family for every region."""
        f = self.f
        key = "vm_family" if qid == fq.VM_FAMILY_ID else "gpu_family"
        fams = fq.VM_FAMILIES if key == "vm_family" else sorted(
            {g["family"] for g in cat.GPUS.values() if g["family"]})
        dims = []
        for (pp, r, m), v in sorted(f.limits.items()):
            if pp == p and m.startswith(qid + ":"):
                dims.append({"dimensions": {"region": r,
                                            key: m.split(":", 1)[1]},
                             "details": {"value": str(int(v))},
                             "applicableLocations": [r]})
        for fam in fams:
            dims.append({"dimensions": {key: fam}, "details": {
                "value": str(int(f.limit(p, "*", qid + ":" + fam)))},
                "applicableLocations": list(cat.REGIONS)})
        metric = qid.split("-per-")[0].lower().replace("-", "_")
        return {"name": "projects/%s/locations/global/services/compute."
                "googleapis.com/quotaInfos/%s" % (f.project_number(p), qid),
                "quotaId": qid, "metric": "compute.googleapis.com/" + metric,
                "service": "compute.googleapis.com", "isPrecise": True,
                "containerType": "PROJECT", "dimensions": ["region", key],
                "metricDisplayName": metric, "metricUnit": "1",
                "isFixed": False, "isConcurrent": False,
                "dimensionsInfos": dims}

    def quota_info_get(self, req):
        p = self.f.project_id(req.params["project"])
        if req.params["service"] == "compute.googleapis.com" and \
                req.params["quota"] in fq.FAMILY_IDS:
            return self.family_info(p, req.params["quota"])
        for g in {g["vq"] for g in cat.GPUS.values()}:
            for spot in (False, True):
                qi = self.quota_info(p, g, spot)
                if qi["quotaId"] == req.params["quota"]:
                    return qi
        raise ApiError(404, "QuotaInfo %s not found." % req.params["quota"])



def routes(fake):
    """Cloud Quotas' rows of the route table (fakegcp_server.py)."""
    q = CloudQuotas(fake)
    L = r"/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    return [
        ("GET", L + r"/services/(?P<service>[^/]+)/quotaInfos", "cloudquotas",
         "cloudquotas.projects.locations.services.quotaInfos.list",
         q.quota_infos),
        ("GET", L + r"/services/(?P<service>[^/]+)/quotaInfos/"
         r"(?P<quota>[^/]+)", "cloudquotas",
         "cloudquotas.projects.locations.services.quotaInfos.get",
         q.quota_info_get),
    ]
