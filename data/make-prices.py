#!/usr/bin/python3
"""Build data/prices.csv, gpuqd's bundled fallback price table.

    data/make-prices.py [SOURCE_DIR] > data/prices.csv

SOURCE_DIR holds the price data described in data/README.md
(gcp-gpu-prices.csv, gcp-gpu-host-vm-prices.csv, vertex-prices.csv); the
default is tests/fakegcp/data, the repository's copy of it.  Standard
library only.  The output is sorted and stable: running this twice gives
the same file, so a diff shows exactly what a data refresh changed.

Rows (prices in US dollars per hour, empty = not known):
  gpu          Compute Engine price of ONE GPU (Batch bills the same)
  machine      Compute Engine host VM (vcpus, memory_gib given)
  vertex-gpu   Vertex AI training price of one GPU, where a source has it
  vertex-core  Vertex AI training price of one vCPU of a series (name a3)
  vertex-ram   Vertex AI training price of one GiB of RAM of a series
  vertex-fee-gpu, vertex-fee-core, vertex-fee-ram
               Vertex AI's management fee, billed on top of a Compute
               Engine SKU where Vertex has no all-in SKU (Spot, DWS)
Where Vertex has no row, gpuqd uses the Compute Engine price plus a fee
of 0.15 x the Compute Engine on-demand price.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, "..", "tests", "fakegcp", "data")
DATA_OF = "2026-06"
SOURCE = "skypilot-catalog v9 2c3d7ea"

# SkyPilot accelerator names -> Compute Engine accelerator types (gpu.h).
GPU_TYPE = {
    "T4": "nvidia-tesla-t4", "L4": "nvidia-l4", "V100": "nvidia-tesla-v100",
    "P100": "nvidia-tesla-p100", "P4": "nvidia-tesla-p4",
    "A100": "nvidia-tesla-a100", "A100-80GB": "nvidia-a100-80gb",
    "H100": "nvidia-h100-80gb", "H100-MEGA": "nvidia-h100-mega-80gb",
    "H200": "nvidia-h200-141gb", "B200": "nvidia-b200",
}
# Shapes Google sells only as Spot or flex-start (data/README.md).
NOT_SOLD_ONDEMAND = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
# vertex-prices.csv resources -> (kind, name).
VERTEX_RESOURCE = {
    "NVIDIA_H100_80GB": ("vertex-gpu", "nvidia-h100-80gb"),
    "A3 vCPU": ("vertex-core", "a3"),
    "A3 memory": ("vertex-ram", "a3"),
    "NVIDIA_H100_80GB management fee": ("vertex-fee-gpu", "nvidia-h100-80gb"),
    "A3 vCPU management fee": ("vertex-fee-core", "a3"),
    "A3 memory management fee": ("vertex-fee-ram", "a3"),
}


def read(src, name):
    with open(os.path.join(src, name), newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float(s) if s not in (None, "") else None


def fmt(x):
    if x is None:
        return ""
    return ("%.9f" % x).rstrip("0").rstrip(".") if x else "0"


def gpu_rows(src):
    """One row per (GPU, region): the per-GPU price.  Zones of a region
    agree to within rounding (1e-5); the highest is kept."""
    best = {}
    for r in read(src, "gcp-gpu-prices.csv"):
        key = (GPU_TYPE[r["accelerator"]], r["region"])
        od = num(r["gpu_ondemand_per_gpu_usd_per_hour"])
        sp = num(r["gpu_spot_per_gpu_usd_per_hour"])
        flags = set(f for f in r["flags"].split(";") if f)
        if "ondemand_equals_dws_flexstart_sku" in flags:
            od = None      # a flex-start price, not on-demand
        notes = flags & {"spot_ge_ondemand",
                         "ondemand_lt_half_of_max_region_check",
                         "ondemand_equals_dws_flexstart_sku"}
        old = best.get(key)
        if old is None:
            best[key] = [od, sp, set(notes)]
            continue
        if od is not None and (old[0] is None or od > old[0]):
            old[0] = od
        if sp is not None and (old[1] is None or sp > old[1]):
            old[1] = sp
        old[2] |= notes
    out = []
    for (gpu, region), (od, sp, notes) in sorted(best.items()):
        out.append(["gpu", gpu, region, "", "", fmt(od), fmt(sp), SOURCE,
                    ";".join(sorted(notes))])
    return out


def machine_rows(src):
    best = {}
    for r in read(src, "gcp-gpu-host-vm-prices.csv"):
        key = (r["vm_type"], r["region"])
        if key in best:
            continue
        od = num(r["ondemand_usd_per_hour"])
        notes = []
        if r["vm_type"] in NOT_SOLD_ONDEMAND:
            od = None
            notes.append("shape_not_sold_ondemand")
        if r["vm_type"].startswith("a4-") and od == 0:
            notes.append("host_price_bundled_in_gpu_price")
        best[key] = ["machine", r["vm_type"], r["region"], r["vcpus"],
                     fmt(num(r["memory_gib"])), fmt(od),
                     fmt(num(r["spot_usd_per_hour"])), SOURCE,
                     ";".join(notes)]
    return [best[k] for k in sorted(best)]


def vertex_rows(src):
    out = []
    for r in read(src, "vertex-prices.csv"):
        fee = r["resource"].endswith(" management fee")
        if r["service"] != "vertex-training" or \
                (r["provisioning"] != "on-demand" and not fee) or \
                r["resource"] not in VERTEX_RESOURCE or \
                not r["region"] or " " in r["region"]:
            continue
        kind, name = VERTEX_RESOURCE[r["resource"]]
        out.append([kind, name, r["region"], "", "",
                    fmt(num(r["usd_per_unit"])), "",
                    "billing SKU %s (%s)" % (r["sku_id"], r["source_date"]),
                    ""])
    return sorted(out)


def main(argv):
    src = argv[1] if len(argv) > 1 else DEFAULT_SRC
    w = csv.writer(sys.stdout, lineterminator="\n")
    sys.stdout.write(
        "# gpuq bundled price table, data of %s, US dollars per hour.\n"
        "# Generated by data/make-prices.py; see data/README.md. "
        "Do not edit.\n" % DATA_OF)
    w.writerow(["kind", "name", "region", "vcpus", "memory_gib",
                "ondemand_usd_per_hour", "spot_usd_per_hour", "source",
                "notes"])
    for row in gpu_rows(src) + machine_rows(src) + vertex_rows(src):
        w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
