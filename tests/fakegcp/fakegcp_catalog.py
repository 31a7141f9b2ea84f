"""Static catalog of the simulated cloud, built from the real price data.

Reads the CSVs copied from /work/shared/data into ``data/`` (see
data/README.md there for provenance) and derives:

* zones and regions, and which GPU each zone offers with its
  ``maximumCardsPerInstance`` (Compute ``acceleratorTypes``, DESIGN GA.3);
* GPU naming across APIs: Compute accelerator type (``nvidia-tesla-t4``),
  Vertex enum (``NVIDIA_TESLA_T4``), Compute quota metrics
  (``NVIDIA_T4_GPUS`` / ``PREEMPTIBLE_NVIDIA_T4_GPUS``, DESIGN GA.2) and
  Vertex quota metrics (``custom_model_training_nvidia_t4_gpus``, B.1);
* machine types (vCPUs, memory) for quota accounting;
* Cloud Billing Catalog SKUs (DESIGN GF) for Compute Engine and Vertex AI.

How a client prices a VM from these SKUs
-----------------------------------------
Host machine types are priced the way Google bills them: one
"Instance Core" SKU (per vCPU-hour, ``usageUnit "h"``) and one "Instance Ram"
SKU (per GiB-hour, ``usageUnit "GiBy.h"``) per machine series (N1, A2, A3,
A4, G2), region and usage type, e.g.

    "N1 Predefined Instance Core running in Americas"          (OnDemand)
    "N1 Predefined Instance Ram running in Americas"           (OnDemand)
    "Spot Preemptible N1 Predefined Instance Core running in Americas"
    "G2 Instance Core running in Netherlands"                  ...

    hourly(machine type) = vcpus * core_price + memory_gib * ram_price

where vcpus/memory_gib are the machine type's (n1-standard-8: 8 vCPU,
30 GiB).  The two prices per series and region are fitted by least squares
to every machine type of that series in gcp-gpu-host-vm-prices.csv; for the
series whose shapes all have the same GiB/vCPU ratio (A2, A3, A4, G2) the
split between core and RAM is fixed at N1's ratio (RAM GiB-hour = 0.134 x
core hour) so the sum is still exact.  ``price_check()`` reports the worst
relative error against the CSV (well under 1 %, most are exact).

GPU SKUs: one per (GPU model, region, OnDemand|Preemptible), priced per
GPU-hour, resourceGroup "GPU"; descriptions "Nvidia Tesla T4 GPU running in
Americas" and "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in
Americas" (the Spot wording is the one data/README.md quotes).  Regions
us-central1, us-east1 and us-west1 say "Americas" (as Google's oldest SKUs
do); other regions name their location ("Netherlands", "Tokyo", ...).

Vertex AI SKUs: "Vertex AI: Training/Pipelines on NVIDIA Tesla T4 in Iowa"
(GPU-hour) and "... on N1 Instance Core in Iowa" / "... Instance RAM in Iowa",
all-in on-demand prices; and the management fee Vertex bills on top of the
Compute Engine SKU where it has no all-in SKU (Spot, DWS flex-start):
"Vertex AI: Training/Pipelines management fee on NVIDIA Tesla T4 in Iowa",
usageType OnDemand (the wording of the billing SKUs in vertex-prices.csv).
There are no Vertex "Preemptible" SKUs.  Prices come from vertex-prices.csv
where it has the row (H100 and A3 core/RAM in us-central1), else the Compute
Engine on-demand price x 1.15 for the all-in SKU and x 0.15 for the fee (the
ratios the confirmed rows show).
"""
import csv
import hashlib
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def _csv(name):
    with open(os.path.join(DATA, name), newline="") as f:
        return list(csv.DictReader(f))


# SkyPilot name -> naming in each API.  quota: Compute on-demand metric
# (None where the Quota.metric enum has none, DESIGN GA.2); pquota: its
# PREEMPTIBLE_ twin; vq: Vertex quota metric suffix; sku: Compute SKU name.
GPUS = {
    "T4": dict(type="nvidia-tesla-t4", vertex="NVIDIA_TESLA_T4",
               quota="NVIDIA_T4_GPUS", vq="t4", sku="Nvidia Tesla T4",
               vsku="NVIDIA Tesla T4", desc="NVIDIA T4"),
    "L4": dict(type="nvidia-l4", vertex="NVIDIA_L4", quota="NVIDIA_L4_GPUS",
               vq="l4", sku="Nvidia L4", vsku="NVIDIA L4", desc="NVIDIA L4"),
    "V100": dict(type="nvidia-tesla-v100", vertex="NVIDIA_TESLA_V100",
                 quota="NVIDIA_V100_GPUS", vq="v100", sku="Nvidia Tesla V100",
                 vsku="NVIDIA Tesla V100", desc="NVIDIA V100"),
    "P100": dict(type="nvidia-tesla-p100", vertex="NVIDIA_TESLA_P100",
                 quota="NVIDIA_P100_GPUS", vq="p100",
                 sku="Nvidia Tesla P100", vsku="NVIDIA Tesla P100",
                 desc="NVIDIA Tesla P100"),
    "P4": dict(type="nvidia-tesla-p4", vertex="NVIDIA_TESLA_P4",
               quota="NVIDIA_P4_GPUS", vq="p4", sku="Nvidia Tesla P4",
               vsku="NVIDIA Tesla P4", desc="NVIDIA Tesla P4"),
    "A100": dict(type="nvidia-tesla-a100", vertex="NVIDIA_TESLA_A100",
                 quota="NVIDIA_A100_GPUS", vq="a100",
                 sku="Nvidia Tesla A100", vsku="NVIDIA Tesla A100",
                 desc="NVIDIA A100 40GB"),
    "A100-80GB": dict(type="nvidia-a100-80gb", vertex="NVIDIA_A100_80GB",
                      quota="NVIDIA_A100_80GB_GPUS", vq="a100_80gb",
                      sku="Nvidia A100 80GB", vsku="NVIDIA A100 80GB",
                      desc="NVIDIA A100 80GB"),
    "H100": dict(type="nvidia-h100-80gb", vertex="NVIDIA_H100_80GB",
                 quota=None, pquota="PREEMPTIBLE_NVIDIA_H100_GPUS", vq="h100",
                 sku="Nvidia H100 80GB", vsku="NVIDIA H100 80GB",
                 desc="NVIDIA H100 80GB"),
    "H100-MEGA": dict(type="nvidia-h100-mega-80gb",
                      vertex="NVIDIA_H100_MEGA_80GB", quota=None,
                      pquota=None, vq="h100_mega", sku="Nvidia H100 80GB Mega",
                      vsku="NVIDIA H100 80GB Mega", desc="NVIDIA H100 80GB Mega"),
    "H200": dict(type="nvidia-h200-141gb", vertex="NVIDIA_H200_141GB",
                 quota=None, pquota=None, vq="h200", sku="Nvidia H200 141GB",
                 vsku="NVIDIA H200 141GB", desc="NVIDIA H200 141GB"),
    "B200": dict(type="nvidia-b200", vertex="NVIDIA_B200", quota=None,
                 pquota=None, vq="b200", sku="Nvidia B200",
                 vsku="NVIDIA B200", desc="NVIDIA B200"),
}
# GPU families whose quota Compute Engine publishes only in Cloud Quotas
# (quota id GPUS-PER-GPU-FAMILY-per-project-region, dimension gpu_family;
# DESIGN GA.5), not as a regions.get metric.
GPU_FAMILY = {"H100": "NVIDIA_H100", "H100-MEGA": "NVIDIA_H100_MEGA",
              "H200": "NVIDIA_H200", "B200": "NVIDIA_B200"}
for _k, _g in GPUS.items():
    _g["sky"] = _k
    _g["family"] = GPU_FAMILY.get(_k)
    if "pquota" not in _g:
        _g["pquota"] = "PREEMPTIBLE_" + _g["quota"]
BY_TYPE = {g["type"]: g for g in GPUS.values()}
BY_VERTEX = {g["vertex"]: g for g in GPUS.values()}

# Other Quota.metric enum GPU names (no catalog rows; shown with limit 0
# usage 0 is not useful, so they are listed only if a test sets them).
COMPUTE_GPU_METRICS = sorted(
    {g["quota"] for g in GPUS.values() if g["quota"]} |
    {g["pquota"] for g in GPUS.values() if g["pquota"]})

# Location names used in SKU descriptions (Google's region locations).
REGION_PLACE = {
    "asia-east1": "Taiwan", "asia-east2": "Hong Kong",
    "asia-northeast1": "Tokyo", "asia-northeast2": "Osaka",
    "asia-northeast3": "Seoul", "asia-south1": "Mumbai",
    "asia-south2": "Delhi", "asia-southeast1": "Singapore",
    "asia-southeast2": "Jakarta", "australia-southeast1": "Sydney",
    "australia-southeast2": "Melbourne", "europe-central2": "Warsaw",
    "europe-north1": "Finland", "europe-west1": "Belgium",
    "europe-west2": "London", "europe-west3": "Frankfurt",
    "europe-west4": "Netherlands", "europe-west6": "Zurich",
    "europe-west9": "Paris", "me-central2": "Dammam", "me-west1": "Tel Aviv",
    "northamerica-northeast1": "Montreal",
    "northamerica-northeast2": "Toronto", "southamerica-east1": "Sao Paulo",
    "us-central1": "Iowa", "us-east1": "South Carolina",
    "us-east4": "Virginia", "us-east5": "Columbus", "us-south1": "Dallas",
    "us-west1": "Oregon", "us-west2": "Los Angeles", "us-west3": "Salt Lake City",
    "us-west4": "Las Vegas",
}
AMERICAS = ("us-central1", "us-east1", "us-west1")


def compute_place(region):
    return "Americas" if region in AMERICAS else REGION_PLACE.get(region,
                                                                  region)


def vertex_place(region):
    return REGION_PLACE.get(region, region)


# -- zones and accelerator types ---------------------------------------------
ZONE_ROWS = _csv("gcp-gpu-zones.csv")
HOST_ROWS = _csv("gcp-gpu-host-vm-prices.csv")
GPU_PRICE_ROWS = _csv("gcp-gpu-prices.csv")
VERTEX_ROWS = _csv("vertex-prices.csv")

ZONE_REGION = {}        # zone -> region
ZONE_GPUS = {}          # zone -> {accelerator type: maximumCardsPerInstance}
for r in ZONE_ROWS:
    ZONE_REGION[r["zone"]] = r["region"]
    ZONE_GPUS.setdefault(r["zone"], {})[GPUS[r["accelerator"]]["type"]] = \
        int(r["max_gpus_per_vm_documented"] or r["max_gpus_per_vm_in_catalog"])
for r in HOST_ROWS:
    ZONE_REGION.setdefault(r["zone"], r["region"])
    ZONE_GPUS.setdefault(r["zone"], {})
ZONES = sorted(ZONE_REGION)
REGIONS = sorted(set(ZONE_REGION.values()))
REGION_ZONES = {reg: [z for z in ZONES if ZONE_REGION[z] == reg]
                for reg in REGIONS}

# -- machine types ------------------------------------------------------------
MACHINES = {}
for r in HOST_ROWS:
    MACHINES[r["vm_type"]] = (int(r["vcpus"]), float(r["memory_gib"]))
_MEM_PER_CPU = {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9}


def machine_info(name):
    """(vcpus, memory GiB) of a machine type name, or None if unknown.
    Accepts partial URLs (zones/z/machineTypes/n1-standard-8)."""
    name = name.rsplit("/", 1)[-1]
    if name in MACHINES:
        return MACHINES[name]
    m = re.match(r"^(n1|n2|n2d|e2|c2|c3|n4)-(standard|highmem|highcpu)-(\d+)$",
                 name)
    if m:
        n = int(m.group(3))
        per = _MEM_PER_CPU[m.group(2)] if m.group(1) == "n1" else \
            {"standard": 4, "highmem": 8, "highcpu": 1}[m.group(2)]
        return (n, n * per)
    m = re.match(r"^(n1|n2|e2)-custom-(\d+)-(\d+)$", name)
    if m:
        return (int(m.group(2)), int(m.group(3)) / 1024.0)
    return None


def series_of(machine):
    return machine.rsplit("/", 1)[-1].split("-")[0]


# -- prices ---------------------------------------------------------------------
GPU_PRICE = {}   # (sky, region) -> (ondemand per GPU, spot per GPU or None)
DWS_EQUAL = set()  # (sky, region) whose on-demand row is the DWS SKU
for r in sorted(GPU_PRICE_ROWS, key=lambda r: (r["zone"], r["gpu_count"])):
    key = (r["accelerator"], r["region"])
    if key in GPU_PRICE:
        continue
    od = float(r["gpu_ondemand_per_gpu_usd_per_hour"] or 0)
    sp = r["gpu_spot_per_gpu_usd_per_hour"]
    GPU_PRICE[key] = (od, float(sp) if sp else None)
    if "ondemand_equals_dws_flexstart_sku" in (r.get("flags") or ""):
        DWS_EQUAL.add(key)

HOST_PRICE = {}  # (vm_type, region) -> (ondemand, spot or None)
for r in HOST_ROWS:
    key = (r["vm_type"], r["region"])
    if key not in HOST_PRICE:
        HOST_PRICE[key] = (float(r["ondemand_usd_per_hour"] or 0),
                           float(r["spot_usd_per_hour"])
                           if r["spot_usd_per_hour"] else None)

RAM_RATIO = 0.004237 / 0.031611   # N1 list prices: RAM GiB-h / core-h


def _fit(points):
    """Least-squares (core, ram) with vcpus*core + mem*ram = price."""
    a11 = sum(c * c for c, m, p in points)
    a12 = sum(c * m for c, m, p in points)
    a22 = sum(m * m for c, m, p in points)
    b1 = sum(c * p for c, m, p in points)
    b2 = sum(m * p for c, m, p in points)
    det = a11 * a22 - a12 * a12
    if abs(det) > 1e-6 * a11 * a22:
        core = (b1 * a22 - b2 * a12) / det
        ram = (a11 * b2 - a12 * b1) / det
        if core > 0 and ram > 0:
            return core, ram
    # proportional shapes: fix the split at N1's ratio
    unit = sum((c + m * RAM_RATIO) * p for c, m, p in points) / \
        sum((c + m * RAM_RATIO) ** 2 for c, m, p in points)
    return unit, unit * RAM_RATIO


HOST_FIT = {}    # (series, region, "OnDemand"|"Preemptible") -> (core, ram)
_pts = {}
for (vm, region), (od, sp) in HOST_PRICE.items():
    c, m = MACHINES[vm]
    s = series_of(vm)
    _pts.setdefault((s, region, "OnDemand"), []).append((c, m, od))
    if sp is not None:
        _pts.setdefault((s, region, "Preemptible"), []).append((c, m, sp))
for k, pts in _pts.items():
    HOST_FIT[k] = _fit(pts)


def price_check():
    """Worst relative error of the core/RAM reconstruction vs the CSV."""
    worst = 0.0
    for (vm, region), (od, sp) in HOST_PRICE.items():
        c, m = MACHINES[vm]
        for usage, p in (("OnDemand", od), ("Preemptible", sp)):
            if not p:
                continue
            core, ram = HOST_FIT[(series_of(vm), region, usage)]
            worst = max(worst, abs(c * core + m * ram - p) / p)
    return worst


SERIES_SKU = {"n1": "N1 Predefined Instance", "a2": "A2 Instance",
              "a3": "A3 Instance", "a4": "A4 Instance", "g2": "G2 Instance"}

COMPUTE_SERVICE = "6F81-5844-456A"
VERTEX_SERVICE = "C7E2-9256-1C43"
SERVICES = [
    (COMPUTE_SERVICE, "Compute Engine"),
    ("95FF-2EF5-5EA1", "Cloud Storage"),
    ("E505-1604-58F8", "Cloud Batch"),
    (VERTEX_SERVICE, "Vertex AI"),
    ("24E6-581D-38E5", "BigQuery"),
    ("152E-C115-5142", "Cloud Run"),
]


def sku_id(text):
    h = hashlib.sha1(text.encode()).hexdigest().upper()
    return "%s-%s-%s" % (h[0:4], h[4:8], h[8:12])


def _sku(service_id, service_name, desc, group, usage, region, price, unit,
         unit_desc, key):
    return {
        "sku": {
            "name": "services/%s/skus/%s" % (service_id, sku_id(desc + region)),
            "skuId": sku_id(desc + region),
            "description": desc,
            "category": {"serviceDisplayName": service_name,
                         "resourceFamily": "Compute",
                         "resourceGroup": group, "usageType": usage},
            "serviceRegions": [region],
            "geoTaxonomy": {"type": "REGIONAL", "regions": [region]},
            "serviceProviderName": "Google",
        },
        "price": price, "unit": unit, "unit_desc": unit_desc, "key": key,
    }


def build_skus():
    """All SKUs, as {"compute": [...], "vertex": [...]}.  Each entry holds
    the Sku JSON without pricingInfo plus its base USD price and a ``key``
    (kind, gpu type or series, region, usage) used by price overrides."""
    comp, vert = [], []
    vfixed = {}
    for r in VERTEX_ROWS:
        if r["service"] == "vertex-training" and \
                r["region"] in REGION_PLACE and r["sku_description"]. \
                startswith("Vertex AI: Training/Pipelines ") and \
                r["unit"] in ("gpu-hour", "vcpu-hour", "gib-hour"):
            vfixed[r["sku_description"]] = float(r["usd_per_unit"])
    for (sky, region), (od, sp) in sorted(GPU_PRICE.items()):
        g = GPUS[sky]
        for usage, p in (("OnDemand", od), ("Preemptible", sp)):
            if p is None:
                continue
            place = compute_place(region)
            if usage == "OnDemand":
                desc = "%s GPU running in %s" % (g["sku"], place)
                vdesc = "Vertex AI: Training/Pipelines on %s in %s" % (
                    g["vsku"], vertex_place(region))
            else:
                desc = "%s GPU attached to Spot Preemptible VMs running " \
                       "in %s" % (g["sku"], place)
                vdesc = "Vertex AI: Training/Pipelines on Preemptible %s " \
                        "in %s" % (g["vsku"], vertex_place(region))
            key = ("gpu", g["type"], region, usage)
            comp.append(_sku(COMPUTE_SERVICE, "Compute Engine", desc, "GPU",
                             usage, region, p, "h", "hour", key))
            if usage != "OnDemand":
                continue
            vert.append(_sku(VERTEX_SERVICE, "Vertex AI", vdesc, "GPU", usage,
                             region, vfixed.get(vdesc, round(p * 1.15, 9)),
                             "h", "hour", key))
            fdesc = "Vertex AI: Training/Pipelines management fee on %s " \
                    "in %s" % (g["vsku"], vertex_place(region))
            vert.append(_sku(VERTEX_SERVICE, "Vertex AI", fdesc, "GPU",
                             usage, region,
                             vfixed.get(fdesc, round(p * 0.15, 9)), "h",
                             "hour", ("fee-gpu", g["type"], region, usage)))
    for (series, region, usage), (core, ram) in sorted(HOST_FIT.items()):
        base = SERIES_SKU[series]
        place = compute_place(region)
        pre = "Spot Preemptible " if usage == "Preemptible" else ""
        vpre = "Preemptible " if usage == "Preemptible" else ""
        vbase = base.replace(" Predefined", "")
        for kind, p, group, unit, udesc, word, vword in (
                ("core", core, "CPU", "h", "hour", "Core", "Core"),
                ("ram", ram, "RAM", "GiBy.h", "gibibyte hour", "Ram", "RAM")):
            desc = "%s%s %s running in %s" % (pre, base, word, place)
            vdesc = "Vertex AI: Training/Pipelines on %s%s %s in %s" % (
                vpre, vbase, vword, vertex_place(region))
            key = (kind, series, region, usage)
            comp.append(_sku(COMPUTE_SERVICE, "Compute Engine", desc, group,
                             usage, region, round(p, 9), unit, udesc, key))
            if usage != "OnDemand":
                continue
            vert.append(_sku(VERTEX_SERVICE, "Vertex AI", vdesc, group, usage,
                             region, vfixed.get(vdesc, round(p * 1.15, 9)),
                             unit, udesc, key))
            fdesc = "Vertex AI: Training/Pipelines management fee on " \
                    "%s %s in %s" % (vbase, vword, vertex_place(region))
            vert.append(_sku(VERTEX_SERVICE, "Vertex AI", fdesc, group,
                             usage, region,
                             vfixed.get(fdesc, round(p * 0.15, 9)), unit,
                             udesc, ("fee-" + kind, series, region, usage)))
    comp.extend(dws_skus())
    return {"compute": comp, "vertex": vert}


# Flex-start (DWS) SKUs: Compute Engine bills a flex-start VM's GPUs,
# cores and RAM with "DWS Defined Duration" SKUs of their own (the
# wording in vertex-prices.csv's billing-report rows), and Vertex AI
# bills the same SKUs plus its management fee.  Prices: those rows where
# they exist (H100 and A3 in us-central1); a GPU row the CSV flags
# ondemand_equals_dws_flexstart_sku is the DWS price already; else the
# on-demand price less the 53 % Google publishes for A2, A3 and A4
# (API-NOTES K.2), G2 and the rest at the on-demand price.
DWS_SERIES = ("a2", "a3", "a4", "g2")
DWS_DISCOUNTED = ("a2", "a3", "a4")
DWS_FACTOR = 1 - 0.53


def dws_skus():
    fixed = {(r["sku_description"], r["region"]): float(r["usd_per_unit"])
             for r in VERTEX_ROWS
             if r["provisioning"] == "flex-start (DWS)" and
             r["sku_description"].find("DWS Defined Duration") >= 0}
    out = []
    for (sky, region), (od, sp) in sorted(GPU_PRICE.items()):
        if not od:
            continue
        g = GPUS[sky]
        desc = "%s GPU attached to DWS Defined Duration VMs running in " \
            "%s" % (g["sku"], compute_place(region))
        p = fixed.get((desc + " (Compute Engine SKU)", region))
        if p is None:
            p = od if (sky, region) in DWS_EQUAL else od * DWS_FACTOR
        out.append(_sku(COMPUTE_SERVICE, "Compute Engine", desc, "GPU",
                        "OnDemand", region, round(p, 9), "h", "hour",
                        ("gpu", g["type"], region, "DWS")))
    for (series, region, usage), (core, ram) in sorted(HOST_FIT.items()):
        if usage != "OnDemand" or series not in DWS_SERIES:
            continue
        f = DWS_FACTOR if series in DWS_DISCOUNTED else 1.0
        for kind, p, group, unit, udesc, word in (
                ("core", core, "CPU", "h", "hour", "Core"),
                ("ram", ram, "RAM", "GiBy.h", "gibibyte hour", "Ram")):
            desc = "DWS Defined Duration %s %s running in %s" % (
                series.upper(), word, compute_place(region))
            q = fixed.get((desc + " (Compute Engine SKU)", region))
            out.append(_sku(COMPUTE_SERVICE, "Compute Engine", desc, group,
                            "OnDemand", region,
                            round(q if q is not None else p * f, 9), unit,
                            udesc, (kind, series, region, "DWS")))
    return out
