"""The control API (/_fake/..., no auth, JSON; the fake's own, no
Google discovery document): reset, config, clock speed, quotas, prices,
preemption, maintenance, host errors, workload exits, stockouts, faults,
auth setup, counters, the request log and the simulation state.  Every
call is listed in README.md "Control API".
"""
import re

import fakegcp_catalog as cat
import fakegcp_jwt as jwt
import fakegcp_sts
import fakegcp_trace as trace
from fakegcp_batch import BatchJob
from fakegcp_billing import Billing
from fakegcp_compute import Instance
from fakegcp_errors import ApiError
from fakegcp_quota import DEFAULT_LIMITS
from fakegcp_sim import rfc3339
from fakegcp_state import DEFAULT_CFG
from fakegcp_vertex import CustomJob


class Control:
    """Answers /_fake/... (handle); ``server`` is the HTTP server."""

    def __init__(self, fake, server):
        self.f = fake
        self.server = server
        self.billing = Billing(fake)

    def find(self, name):
        """A live resource by instance name, Batch jobId, Vertex displayName,
        numeric id or full resource name."""
        f = self.f
        cands = list(f.instances.values()) + list(f.batch.values()) + \
            list(f.vertex.values())
        for r in cands:
            if name in (r.name, r.full_name()) or (
                    isinstance(r, CustomJob) and name == r.jid) or (
                    isinstance(r, CustomJob) and name.endswith(
                        "/customJobs/" + r.jid)):
                return r
        raise ApiError(404, "No fake resource named %r" % name)

    def interrupt(self, body, kind):
        code = body.get("exit_code")
        if kind == "exit" and (not isinstance(code, int) or
                               isinstance(code, bool) or code < 0):
            raise ApiError(400, "exit_code must be a non-negative integer")
        r = self.find(body.get("name", ""))
        now = self.f.now()
        running = (isinstance(r, Instance) and r.status == "RUNNING") or \
            (isinstance(r, BatchJob) and r.jstate == "RUNNING" and
             r.task_state == "RUNNING") or \
            (isinstance(r, CustomJob) and r.jstate == "JOB_STATE_RUNNING" and
             r.runs and r.runs[-1].state == "running")
        if not running:
            raise ApiError(409, "Resource %s is not running (state %s)" % (
                r.name, r.state()))
        if kind == "exit":
            return self.exit(r, body, now)
        if isinstance(r, Instance):
            r.interrupt(now, {
                "preempt": "compute.instances.preempted",
                "maintenance": "compute.instances.terminateOnHostMaintenance",
                "host_error": "compute.instances.hostError"}[kind],
                {"preempt": "preempted", "maintenance": "maintenance",
                 "host_error": "host error"}[kind])
        elif isinstance(r, BatchJob):
            # Maintenance on a Batch VM: the VM is terminated and recreated
            # by Batch's instance group -> 50006 ("VM is recreated during
            # task execution"); a host error leaves Batch without VM
            # reports -> 50002.  See README.
            # "node": which task of a multi-task group (default 0).
            node = body.get("node", 0)
            if not isinstance(node, int) or isinstance(node, bool) or \
                    not 0 <= node < r.task_count:
                raise ApiError(400, "node must be a task index of %s" %
                               r.name)
            r.task_failed(now, {"preempt": 50001, "maintenance": 50006,
                                "host_error": 50002}[kind], node)
        else:
            # "node": which replica (0 the workerpool0 one); Vertex
            # restarts or fails the whole job either way.
            node = body.get("node", 0)
            if not isinstance(node, int) or isinstance(node, bool) or \
                    not 0 <= node < r.replicas:
                raise ApiError(400, "node must be a replica of %s" % r.name)
            r.replica = node
            restart = body.get("vertex_restart")
            if restart is False:
                saved = self.f.cfg["vertex_spot_restarts"]
                self.f.cfg["vertex_spot_restarts"] = 0
                r.interrupt(now, "preempted")
                self.f.cfg["vertex_spot_restarts"] = saved
            else:
                r.interrupt(now, "preempted" if kind == "preempt" else
                            "maintenance")
        return {"ok": True, "resource": r.describe()}

    def exit(self, r, body, now):
        """The running workload ends now with ``exit_code`` (Batch: any
        code, reserved 5000x ones with Batch's wording; retry policies
        apply)."""
        code = body["exit_code"]
        run = r.runs[-1] if r.runs else None
        if isinstance(r, BatchJob):
            if code:
                r.task_failed(now, code)
                return {"ok": True, "resource": r.describe()}
        if run is None or run.state != "running":
            raise ApiError(409, "Resource %s runs no workload" % r.name)
        run.stop(now, "exit %d" % code)
        run.state, run.result = "done", code
        r.on_run_end(now, code)
        return {"ok": True, "resource": r.describe()}

    def handle(self, method, path, query, body):
        f = self.f
        q = {k: v[-1] for k, v in query.items()}
        ep = path[len("/_fake/"):]
        if ep == "reset" and method == "POST":
            f.reset()
            return {"ok": True}
        if ep == "config":
            if method == "POST":
                for k, v in body.items():
                    if k not in DEFAULT_CFG:
                        raise ApiError(400, "unknown config key %r" % k)
                    if k == "unreachable_zones" and (
                            not isinstance(v, list) or
                            any(z not in cat.ZONE_REGION for z in v)):
                        raise ApiError(400, "unreachable_zones: give a list "
                                       "of known zones (not %r)" % (v,))
                    if k == "boot_image" and v not in (
                            "ready", "deprecated", "missing"):
                        raise ApiError(400, "boot_image: give \"ready\", "
                                       "\"deprecated\" or \"missing\" "
                                       "(not %r)" % (v,))
                    if k == "quota_info_unavailable":
                        bad = [r for r in (v if isinstance(v, list) else
                                           []) if r not in cat.REGIONS]
                        if not isinstance(v, (bool, list)) or bad:
                            raise ApiError(400, "quota_info_unavailable: "
                                           "give true, false or a list of "
                                           "known regions (not %r)" % (
                                               bad or v))
                    f.cfg[k] = v
            return dict(f.cfg)
        if ep == "create_bodies":
            svc = q.get("service")
            return {"bodies": [b for b in f.create_bodies
                               if svc is None or b["service"] == svc]}
        if ep == "speed" and method == "POST":
            if f.clock.locked:
                raise ApiError(400, "the clock is shared with gpuqd "
                               "(--clock-origin): its speed cannot change; "
                               "start the fake with the speed wanted")
            f.tick()
            f.clock.set_speed(float(body["factor"]))
            return {"ok": True, "speed": f.clock.speed}
        if ep == "time":
            return {"now": f.now(), "now_rfc3339": rfc3339(f.now()),
                    "speed": f.clock.speed, "shared": f.clock.locked}
        if ep == "quota":
            if method == "POST":
                reg = body.get("region", "global")
                metric = body["metric"]
                if body.get("service") in ("aiplatform", "vertex",
                                           "aiplatform.googleapis.com"):
                    metric = metric.split("/")[-1]
                    f.vertex_limits[(body.get("project", f.default_project),
                                     reg, metric)] = int(body["limit"])
                else:
                    key = (body.get("project", f.default_project), reg,
                           metric)
                    if "limit" in body:
                        f.limits[key] = float(body["limit"])
                    if "usage" in body:
                        f.base_usage[key] = float(body["usage"])
                return {"ok": True}
            p = q.get("project", f.default_project)
            use = f.usage_table(p)
            comp = {r: {x["metric"]: {"limit": x["limit"],
                                      "usage": x["usage"]}
                        for x in f.region_quotas(p, r, use)}
                    for r in cat.REGIONS}
            comp["global"] = {m: {"limit": f.limit(p, "global", m),
                                  "usage": use.get(("global", m), 0.0)}
                              for m in DEFAULT_LIMITS}
            vx = {r: {f.vertex_metric(g, s): f.vertex_limit(
                p, r, f.vertex_metric(g, s))
                for g in sorted({g["vq"] for g in cat.GPUS.values()})
                for s in (False, True)} for r in cat.REGIONS}
            return {"compute": comp, "aiplatform": vx}
        if ep == "price" and method == "POST":
            if "usd_per_hour" not in body:
                raise ApiError(400, "usd_per_hour is required")
            f.prices.append(dict(body))
            return {"ok": True}
        if ep == "preempt" and method == "POST":
            return self.interrupt(body, "preempt")
        if ep == "maintenance" and method == "POST":
            return self.interrupt(body, "maintenance")
        if ep == "host_error" and method == "POST":
            return self.interrupt(body, "host_error")
        if ep == "exit" and method == "POST":
            return self.interrupt(body, "exit")
        if ep == "stockout" and method == "POST":
            z = body["zone"]
            gpu = body.get("gpu")
            prov = (body.get("provisioning") or "ANY").upper()
            f.stockouts = [s for s in f.stockouts if not (
                s["zone"] == z and s.get("gpu") == gpu and
                s["provisioning"] == prov)]
            if body.get("on", True):
                f.stockouts.append({"zone": z, "gpu": gpu,
                                    "provisioning": prov,
                                    "with_details": bool(
                                        body.get("with_details")),
                                    "zones_available": body.get(
                                        "zones_available") or []})
            return {"ok": True, "stockouts": f.stockouts}
        if ep == "fault":
            if method == "POST":
                re.compile(body.get("path", ".*"))
                fa = {"method": body.get("method", "*"),
                      "path": body.get("path", ".*"),
                      "status": body.get("status"),
                      "count": int(body.get("count", 1)),
                      "retry_after": body.get("retry_after"),
                      "latency_ms": body.get("latency_ms"),
                      "drop": bool(body.get("drop")),
                      "skip": int(body.get("skip", 0))}
                f.faults.append(fa)
                return {"ok": True, "fault": fa}
            if method == "DELETE":
                f.faults = []
                return {"ok": True}
            return {"faults": f.faults}
        wif = fakegcp_sts.control(f, ep, method, body)
        if wif is not None:
            return wif
        if ep == "token_lifetime" and method == "POST":
            f.token_lifetime = int(body["seconds"])
            return {"ok": True}
        if ep == "service_account" and method == "POST":
            f.sa_keys[body["client_email"]] = jwt.parse_rsa_public_pem(
                body["public_key_pem"])
            return {"ok": True}
        if ep == "authorized_user" and method == "POST":
            f.users[body["client_id"]] = (body["client_secret"],
                                          body["refresh_token"])
            return {"ok": True}
        if ep == "revoke_tokens" and method == "POST":
            n = len(f.tokens)
            f.tokens.clear()
            return {"ok": True, "revoked": n}
        if ep == "counters":
            return {"by_method": dict(f.counters),
                    "total": sum(f.counters.values())}
        if ep == "counters/reset" and method == "POST":
            f.counters.clear()
            f.reqlog.clear()
            return {"ok": True}
        if ep == "requests":
            return {"requests": list(f.reqlog)}
        if ep == "resources":
            rs = sorted(f.all_resources(), key=lambda r: r.seq)
            svc = q.get("service")
            return {"resources": [r.describe() for r in rs
                                  if not svc or r.service == svc]}
        if ep == "work":
            return self.work(q.get("job"))
        if ep == "policies":
            import fakegcp_policy
            return {"policies": [dict(pol, users=[
                i.name for i in fakegcp_policy.users(f, key)])
                for key, pol in sorted(f.policies.items())]}
        if ep == "instances" and method == "POST":
            return self.bulk(body)
        if ep == "trace":
            return self.trace(method, body)
        if ep == "ledger" and method == "GET":
            return trace.ledger(f, self.billing)
        if ep == "storage" and method == "GET":
            return {b: sorted(o) for b, o in f.buckets.items()}
        raise ApiError(404, "unknown control endpoint %s %s" % (method, path))

    def trace(self, method, body):
        """POST: load a trace (fakegcp_trace.py; README "Trace mode");
        GET: where it is now; DELETE: trace mode off."""
        f = self.f
        with f.lock:
            if method == "POST":
                f.tick()
                f.trace = trace.Trace.load(f, body or {})
            elif method == "DELETE":
                f.trace = None
                return {"ok": True}
            if f.trace is None:
                raise ApiError(404, "no trace loaded (POST /_fake/trace)")
            return f.trace.describe(f.now())

    def work(self, job):
        runs = [(r, run) for r in sorted(self.f.all_resources(),
                                         key=lambda r: r.seq)
                for run in r.runs if job is None or run.job == job]
        need = max((run.need for r, run in runs), default=0)
        done = sum(run.work_done for r, run in runs)
        prog = max((run.progress for r, run in runs), default=0)
        return {"job": job, "work_done": done, "work_needed": need,
                "progress": prog,
                "completed": any(run.state == "done" for r, run in runs),
                "exit_codes": [run.result for r, run in runs
                               if run.state == "done"],
                "runs": len(runs),
                "checkpoints": [c for r, run in runs for c in run.checkpoints],
                "resources": [dict(run.describe(), resource=r.full_name(),
                                   service=r.service) for r, run in runs]}

    def bulk(self, body):
        """Create ``count`` resources directly in their running state (no
        operations, no workload) for benchmarks and orphan tests."""
        f = self.f
        svc = body.get("service", "compute")
        p = body.get("project", f.default_project)
        n = int(body.get("count", 1))
        labels = body.get("labels") or {}
        prefix = body.get("name_prefix", "bulk")
        now = f.now()
        names = []
        start = next(f.seq)
        for i in range(n):
            name = "%s-%d-%d" % (prefix, start, i)
            if svc == "compute":
                z = body.get("zone", "us-central1-a")
                gpu = body.get("gpu")
                cnt = int(body.get("gpu_count", 1 if gpu else 0))
                b = {"name": name,
                     "machineType": body.get("machine_type", "n1-standard-4"),
                     "labels": dict(labels),
                     "scheduling": {"provisioningModel": "SPOT" if
                                    body.get("spot") else "STANDARD"}}
                if gpu:
                    b["guestAccelerators"] = [{"acceleratorType": gpu,
                                               "acceleratorCount": cnt}]
                inst = Instance(f, p, z, b, now, (cat.machine_info(
                    b["machineType"]) or (4, 15))[0], gpu, cnt,
                    bool(body.get("spot")))
                inst.status = body.get("status", "RUNNING")
                inst.last_start = now
                inst.started = now
                f.instances[(p, z, name)] = inst
            elif svc == "batch":
                r = body.get("region", "us-central1")
                jb = {"taskGroups": [{"taskSpec": {"runnables": [
                    {"container": {"imageUri": "busybox"}}]}}],
                    "labels": dict(labels)}
                j = BatchJob(f, p, r, name, jb, now)
                j.jstate = body.get("state", "RUNNING")
                j.task_state = "RUNNING"
                j.started = now
                f.batch[(p, r, name)] = j
            else:
                r = body.get("region", "us-central1")
                vb = {"displayName": name, "labels": dict(labels),
                      "jobSpec": {"workerPoolSpecs": [{
                          "machineSpec": {"machineType": "n1-standard-4"},
                          "replicaCount": "1",
                          "containerSpec": {"imageUri": "busybox"}}]}}
                j = CustomJob(f, p, r, vb, now)
                j.jstate = body.get("state", "JOB_STATE_RUNNING")
                j.started = now
                f.vertex[(p, r, j.jid)] = j
                name = j.jid
            names.append(name)
        return {"ok": True, "created": n, "names": names[:1000]}

