"""Quota accounting behind Compute Engine and Vertex AI (DESIGN GA.2,
B.1): limits, usage of live VMs and jobs, and the first quota a new VM
would exceed.

Serves no API of its own: Compute Engine (compute v1 discovery document:
regions.get/list and projects.get ``quotas``, instances.insert
QUOTA_EXCEEDED), Cloud Batch (CODE_GCE_QUOTA_EXCEEDED), Vertex AI
(customJobs.create 429) and Cloud Quotas (cloudquotas v1 quotaInfos) read
it.  QuotaBook is mixed into Fake (fakegcp_state.py), whose reset()
creates the tables it reads: limits, base_usage, vertex_limits.
"""
import fakegcp_catalog as cat

DEFAULT_GPU_LIMIT = 16.0
DEFAULT_LIMITS = {"GPUS_ALL_REGIONS": 64.0, "CPUS_ALL_REGIONS": 10000.0}
REGION_DEFAULTS = {"CPUS": 1000.0, "PREEMPTIBLE_CPUS": 0.0,
                   "INSTANCES": 6000.0}
VERTEX_DEFAULT_LIMIT = 16
# Cloud Quotas only (DESIGN GA.5): limits of these quota ids are kept
# under "<quota id>:<family>" (the gpu_family or vm_family dimension).
GPU_FAMILY_ID = "GPUS-PER-GPU-FAMILY-per-project-region"
SPOT_GPU_FAMILY_ID = "PREEMPTIBLE-GPUS-PER-GPU-FAMILY-per-project-region"
VM_FAMILY_ID = "CPUS-PER-VM-FAMILY-per-project-region"
FAMILY_IDS = (GPU_FAMILY_ID, SPOT_GPU_FAMILY_ID, VM_FAMILY_ID)
# Machine series with a vCPU quota of their own (vm_family), besides CPUS.
VM_FAMILIES = ("A3", "A4", "G2")
DEFAULT_VM_FAMILY_LIMIT = 1000.0


class QuotaBook:
    """Quota methods of Fake."""

    def limit(self, project, region, metric):
        k = (project, region, metric)
        if k in self.limits:
            return self.limits[k]
        if region == "global":
            return DEFAULT_LIMITS.get(metric, 0.0)
        if metric in REGION_DEFAULTS:
            return REGION_DEFAULTS[metric]
        if metric in cat.COMPUTE_GPU_METRICS:
            return DEFAULT_GPU_LIMIT
        if metric.startswith(VM_FAMILY_ID + ":"):
            return DEFAULT_VM_FAMILY_LIMIT
        if metric.split(":")[0] in FAMILY_IDS:
            return DEFAULT_GPU_LIMIT
        return 0.0

    def gpu_metric(self, project, region, gpu, spot):
        """Quota metric a VM with ``gpu`` draws on (DESIGN GA.2): Spot uses
        the PREEMPTIBLE_ twin when that has a non-zero limit."""
        g = cat.BY_TYPE.get(gpu)
        if not g:
            return None
        if spot and g["pquota"] and self.limit(project, region,
                                               g["pquota"]) > 0:
            return g["pquota"]
        if not g["quota"] and g["family"]:
            return "%s:%s" % (SPOT_GPU_FAMILY_ID if spot else
                              GPU_FAMILY_ID, g["family"])
        return g["quota"] or (g["pquota"] if spot else None)

    def vm_family_metric(self, machine):
        """The vCPU family quota a machine type also draws on, or None."""
        fam = (machine or "").split("-")[0].upper()
        return "%s:%s" % (VM_FAMILY_ID, fam) if fam in VM_FAMILIES \
            else None

    def cpu_metric(self, project, region, spot):
        if spot and self.limit(project, region, "PREEMPTIBLE_CPUS") > 0:
            return "PREEMPTIBLE_CPUS"
        return "CPUS"

    def usage_table(self, project):
        """(region|global, metric) -> usage of live Compute VMs and Batch
        VMs (Batch creates Compute VMs in the project), plus base usage."""
        use = {}

        def add(k, v):
            use[k] = use.get(k, 0.0) + v
        for r in list(self.instances.values()) + list(self.batch.values()):
            if r.project != project or not r.live():
                continue
            held = r.quota_use()
            if held is None:
                continue
            vcpus, n = held
            # flex-start draws on the preemptible quota (API-NOTES K.2)
            qspot = r.spot or getattr(r, "flex", False)
            add((r.region, self.cpu_metric(project, r.region, qspot)),
                vcpus * n)
            fam = self.vm_family_metric(r.machine_name())
            if fam:
                add((r.region, fam), vcpus * n)
            add(("global", "CPUS_ALL_REGIONS"), vcpus * n)
            add((r.region, "INSTANCES"), n)
            if r.gpu and r.gpu_count:
                m = self.gpu_metric(project, r.region, r.gpu, qspot)
                if m:
                    add((r.region, m), r.gpu_count * n)
                add(("global", "GPUS_ALL_REGIONS"), r.gpu_count * n)
        for (p, reg, m), v in self.base_usage.items():
            if p == project:
                add((reg, m), v)
        import fakegcp_reservation      # it imports fakegcp_compute
        fakegcp_reservation.usage(self, project, add)
        return use

    def compute_quota_check(self, project, region, gpu, count, vcpus, spot,
                            machine=None):
        """None, or (message, metric, limit, region|None) of the first quota
        a new VM would exceed.  A family quota (DESIGN GA.5) is named in
        the message as Compute names it: GPUS_PER_GPU_FAMILY,
        CPUS_PER_VM_FAMILY."""
        use = self.usage_table(project)
        checks = []
        if gpu and count:
            m = self.gpu_metric(project, region, gpu, spot)
            if m:
                checks.append((region, m, count))
            checks.append(("global", "GPUS_ALL_REGIONS", count))
        checks.append((region, self.cpu_metric(project, region, spot), vcpus))
        fam = self.vm_family_metric(machine)
        if fam:
            checks.append((region, fam, vcpus))
        checks.append(("global", "CPUS_ALL_REGIONS", vcpus))
        for reg, m, need in checks:
            lim = self.limit(project, reg, m)
            if use.get((reg, m), 0.0) + need > lim:
                where = "globally" if reg == "global" else \
                    "in region %s" % reg
                shown = m.split(":")[0]
                shown = {GPU_FAMILY_ID: "GPUS_PER_GPU_FAMILY",
                         SPOT_GPU_FAMILY_ID: "PREEMPTIBLE_GPUS_PER_GPU_FAMILY",
                         VM_FAMILY_ID: "CPUS_PER_VM_FAMILY"}.get(shown, m)
                return ("Quota '%s' exceeded.  Limit: %.1f %s." % (
                    shown, lim, where), shown, lim,
                    None if reg == "global" else reg)
        return None

    def region_quotas(self, project, region, use):
        metrics = ["CPUS", "PREEMPTIBLE_CPUS", "INSTANCES"] + \
            cat.COMPUTE_GPU_METRICS
        extra = {m for (p, r, m) in self.limits if p == project and
                 r == region and ":" not in m}
        out = []
        for m in metrics + sorted(extra - set(metrics)):
            out.append({"metric": m,
                        "limit": float(self.limit(project, region, m)),
                        "usage": float(use.get((region, m), 0.0))})
        return out

    def vertex_metric(self, vq, spot):
        return "custom_model_training_%snvidia_%s_gpus" % (
            "preemptible_" if spot else "", vq)

    def vertex_limit(self, project, region, metric):
        return self.vertex_limits.get((project, region, metric),
                                      VERTEX_DEFAULT_LIMIT)

    def quota_info_unavailable(self, region):
        u = self.cfg["quota_info_unavailable"]
        return u is True or (isinstance(u, list) and region in u)
