"""Cloud Billing Catalog (DESIGN GF): services, SKUs, Money and price
overrides."""


def money(p):
    u = p["pricingInfo"][-1]["pricingExpression"]["tieredRates"][0][
        "unitPrice"]
    return int(u["units"]) + u["nanos"] / 1e9


def test_billing_services_skus_prices(gcp):
    s = gcp.get("/v1/services?pageSize=2")[1]
    assert len(s["services"]) == 2 and s["nextPageToken"]
    allsvc = gcp.get("/v1/services")[1]["services"]
    ids = {x["serviceId"]: x["displayName"] for x in allsvc}
    assert ids["6F81-5844-456A"] == "Compute Engine"
    assert ids["C7E2-9256-1C43"] == "Vertex AI"
    skus, tok, pages = [], None, 0
    while True:
        r = gcp.get("/v1/services/6F81-5844-456A/skus?pageSize=200" + (
            "&pageToken=" + tok if tok else ""))[1]
        skus += r["skus"]
        pages += 1
        tok = r.get("nextPageToken")
        if not tok:
            break
    assert pages > 1
    by = {(x["description"], x["serviceRegions"][0]): x for x in skus}
    t4 = by[("Nvidia Tesla T4 GPU running in Americas", "us-central1")]
    assert t4["category"]["resourceGroup"] == "GPU"
    assert t4["category"]["usageType"] == "OnDemand"
    assert abs(money(t4) - 0.35) < 1e-9
    sp = by[("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running "
             "in Americas", "us-central1")]
    assert sp["category"]["usageType"] == "Preemptible"
    # host VM price = vcpus * core + GiB * ram (n1-highmem-4: 4 vCPU, 26 GiB)
    core = money(by[("N1 Predefined Instance Core running in Americas",
                     "us-central1")])
    ram = money(by[("N1 Predefined Instance Ram running in Americas",
                    "us-central1")])
    from fakegcp_catalog import HOST_PRICE
    want = HOST_PRICE[("n1-highmem-4", "us-central1")][0]
    assert abs(4 * core + 26 * ram - want) / want < 0.001
    gcp.ctl("/_fake/price", {"service": "compute", "gpu": "nvidia-tesla-t4",
                             "region": "us-central1",
                             "usage_type": "Preemptible",
                             "usd_per_hour": 0.11})
    r = gcp.get("/v1/services/6F81-5844-456A/skus")[1]["skus"]
    sp = [x for x in r if x["description"].startswith(
        "Nvidia Tesla T4 GPU attached") and x["serviceRegions"] ==
        ["us-central1"]][0]
    assert abs(money(sp) - 0.11) < 1e-9
    v = gcp.get("/v1/services/C7E2-9256-1C43/skus")[1]["skus"]
    h = [x for x in v if x["description"] ==
         "Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa"][0]
    assert abs(money(h) - 11.2660332) < 1e-6
    assert gcp.get("/v1/services/NOPE/skus")[0] == 404
