"""Cloud Billing Catalog (cloudbilling v1; discovery document
https://cloudbilling.googleapis.com/$discovery/rest?version=v1, DESIGN GF): services.list and services.skus.list, SKUs and prices from
fakegcp_catalog.py (data/*.csv) with the control API's price overrides.
"""
import fakegcp_catalog as cat
import fakegcp_paging as paging
from fakegcp_errors import ApiError
from fakegcp_sim import rfc3339


class Billing:
    """Cloud Billing Catalog (DESIGN GF); SKUs from fakegcp_catalog."""

    def __init__(self, fake):
        self.f = fake

    def services(self, req):
        svcs = [{"name": "services/" + sid, "serviceId": sid,
                 "displayName": dn, "businessEntityName":
                 "businessEntities/GCP"} for sid, dn in cat.SERVICES]
        page, nxt = paging.paginate(svcs, req, "pageSize", 5000, 5000, "svc")
        out = {"services": page}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def price_for(self, which, entry, t=None):
        price = entry["price"]
        tr = self.f.trace
        if tr is not None and which == "compute":
            # Trace mode: the region's Spot GPU SKU at time T (now).
            kind, key, region, usage = entry["key"]
            if kind == "gpu" and key == tr.gpu and usage == "Preemptible":
                p = tr.gpu_price(region, self.f.now() if t is None else t)
                if p is not None:
                    price = p
        for o in self.f.prices:
            if o.get("service", "compute") != which:
                continue
            if o.get("sku_description"):
                if o["sku_description"] == entry["sku"]["description"]:
                    price = o["usd_per_hour"]
                continue
            kind, key, region, usage = entry["key"]
            if kind == "gpu" and o.get("gpu") == key and \
                    o.get("region") in (None, region) and \
                    o.get("usage_type", "OnDemand") == usage:
                price = o["usd_per_hour"]
        return price

    def sku_json(self, which, e):
        s = dict(e["sku"])
        price = self.price_for(which, e)
        units = int(price)
        nanos = int(round((price - units) * 1e9))
        s["pricingInfo"] = [{
            "effectiveTime": rfc3339(self.f.now()),
            "summary": "",
            "pricingExpression": {
                "usageUnit": e["unit"], "displayQuantity": 1,
                "usageUnitDescription": e["unit_desc"],
                "baseUnit": "s" if e["unit"] == "h" else "By.s",
                "baseUnitDescription": "second" if e["unit"] == "h" else
                "byte second",
                "baseUnitConversionFactor": 3600 if e["unit"] == "h" else
                3865470566400,
                "tieredRates": [{"startUsageAmount": 0, "unitPrice": {
                    "currencyCode": "USD", "units": str(units),
                    "nanos": nanos}}]},
            "aggregationInfo": {"aggregationLevel": "ACCOUNT",
                                "aggregationInterval": "DAILY",
                                "aggregationCount": 1},
            "currencyConversionRate": 1}]
        return s

    def skus(self, req):
        sid = req.params["service"]
        table = self.f.sku_list()
        if sid == cat.COMPUTE_SERVICE:
            which, entries = "compute", table["compute"]
        elif sid == cat.VERTEX_SERVICE:
            which, entries = "vertex", table["vertex"]
        elif sid in dict(cat.SERVICES):
            which, entries = "other", []
        else:
            raise ApiError(404, "Service services/%s not found." % sid)
        cur = req.q.get("currencyCode", "USD")
        if cur != "USD":
            raise ApiError(400, "The fake only knows USD prices.")
        page, nxt = paging.paginate(entries, req, "pageSize", 5000, 5000,
                                    "sku" + sid)
        out = {"skus": [self.sku_json(which, e) for e in page]}
        if nxt:
            out["nextPageToken"] = nxt
        return out



def routes(fake):
    """Cloud Billing's rows of the route table (fakegcp_server.py)."""
    bi = Billing(fake)
    return [
        ("GET", r"/v1/services", "cloudbilling", "cloudbilling.services.list",
         bi.services),
        ("GET", r"/v1/services/(?P<service>[^/]+)/skus", "cloudbilling",
         "cloudbilling.services.skus.list", bi.skus),
    ]
