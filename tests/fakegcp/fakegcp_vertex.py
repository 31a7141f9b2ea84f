"""Vertex AI custom training jobs (aiplatform v1; discovery document
https://aiplatform.googleapis.com/$discovery/rest?version=v1, DESIGN GE):
customJobs (create, get, list, cancel, delete), with the regional host
check, the simulated job lifecycle QUEUED -> PENDING -> RUNNING ->
SUCCEEDED/FAILED, worker restarts after Spot preemption and Vertex's quota
and stockout errors.  Its delete LROs are read through Batch's
operations.get route (same path, fakegcp_batch.py).
"""
import json
import re

import fakegcp_catalog as cat
import fakegcp_fields as fields
import fakegcp_paging as paging
import fakegcp_project
from fakegcp_errors import ApiError
from fakegcp_sim import Gang, Resource, rfc3339

VERTEX_TERMINAL = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                   "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


class CustomJob(Resource):
    """A Vertex AI CustomJob (DESIGN GE): QUEUED -> PENDING -> RUNNING ->
    SUCCEEDED/FAILED, or CANCELLING -> CANCELLED."""
    service = "vertex"

    def __init__(self, fake, project, region, body, now):
        self.jid = str(next(fake.vertex_ids))
        Resource.__init__(self, fake, project, body["displayName"], region,
                          None, body.get("labels"), False, now)
        self.body = body
        self.create_time = rfc3339(now)
        self.jstate = "JOB_STATE_QUEUED"
        self.error = None
        self.quota_error = None     # metric, with vertex_quota_error "job"
        self.updated = now
        self.restarts = 0
        spec = body["jobSpec"]
        wp = spec["workerPoolSpecs"][0]
        ms = wp.get("machineSpec") or {}
        self.machine = ms.get("machineType") or "n1-standard-4"
        acc = ms.get("acceleratorType")
        g = cat.BY_VERTEX.get(acc) if acc else None
        self.gpu = g["type"] if g else None
        self.vq = g["vq"] if g else None
        self.gpu_count = int(ms.get("acceleratorCount") or 0) if g else 0
        # Every pool's replicas hold the machine's GPUs (gpuq's pools
        # share one machine spec: workerpool0 the main node, workerpool1
        # the others; doc/DESIGN.md "Gangs").
        self.pools = [int(p.get("replicaCount") or 1) if p else 0
                      for p in spec["workerPoolSpecs"]]
        self.replicas = sum(self.pools)
        sch = spec.get("scheduling") or {}
        self.strategy = sch.get("strategy") or "STANDARD"
        # Scheduling.disableRetries: no restart of a worker once the job
        # runs (and restartJobOnWorkerRestart forced to false).
        self.no_retries = bool(sch.get("disableRetries"))
        self.spot = self.strategy in ("SPOT", "FLEX_START", "LOW_COST")
        env = {}
        code = wp.get("containerSpec") or wp.get("pythonPackageSpec") or {}
        for e in code.get("env") or []:
            env[e.get("name")] = e.get("value", "")
        base = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
        self.ckpt_default = None
        if base:
            base = base if base.endswith("/") else base + "/"
            env.setdefault("AIP_MODEL_DIR", base + "model/")
            env.setdefault("AIP_CHECKPOINT_DIR", base + "checkpoints/")
            env.setdefault("AIP_TENSORBOARD_LOG_DIR", base + "logs/")
            self.ckpt_default = base + "checkpoints/"
        self.env = env

    def full_name(self):
        return "projects/%s/locations/%s/customJobs/%s" % (
            self.fake.project_number(self.project), self.region, self.jid)

    def state(self):
        return self.jstate

    def live(self):
        return not self.deleted and self.jstate not in VERTEX_TERMINAL

    VIEW_PATHS = (("name",), ("displayName",), ("labels",), ("state",),
                  ("createTime",))

    def filter_view(self, now):
        v = {"name": self.full_name(), "state": self.jstate,
             "displayName": self.body.get("displayName"),
             "createTime": self.create_time}
        if "labels" in self.body:
            v["labels"] = self.body["labels"]
        return v

    def _set(self, t, st):
        self.jstate = st
        self.updated = t
        if st in VERTEX_TERMINAL:
            self.ended = t

    def pending(self, t):
        if self.jstate != "JOB_STATE_QUEUED":
            return
        self._set(t, "JOB_STATE_PENDING")
        f = self.fake
        if self.quota_error:
            # admitted, then starved of quota (DESIGN GB.1)
            self.error = {"code": 8, "message": "The following quota "
                          "metrics exceed quota limits: aiplatform."
                          "googleapis.com/%s" % self.quota_error}
            self._set(t, "JOB_STATE_FAILED")
            return
        zones = [z for z in cat.REGION_ZONES.get(self.region, [])
                 if not self.gpu or self.gpu in cat.ZONE_GPUS.get(z, {})]
        if self.gpu and zones and all(f.stocked_out(z, self.gpu, self.spot)
                                      for z in zones):
            # Vertex picks the zone itself, so it stocks out only when every
            # zone of the region offering the GPU is out (or a region-wide
            # stockout is set).  Wording of Vertex's stockout message.
            self.error = {"code": 8, "message":
                          "Resources are insufficient in region: %s. Please "
                          "try a different region. If you use K80, please "
                          "consider using P100 or V100 instead." % self.region}
            self._set(t, "JOB_STATE_FAILED")
            return
        # The first zone with room (one may be out while others are not).
        room = [z for z in zones if not self.gpu or
                not f.stocked_out(z, self.gpu, self.spot)]
        self.zone = (room or zones)[0] if zones else None
        f.at(t + f.cfg["provision_seconds"], self._run)

    def cluster_envs(self):
        """Each replica's environment: the job's plus the CLUSTER_SPEC
        and TF_CONFIG Vertex sets on every replica of a distributed job
        (API-NOTES N.1: pools by position, workerpool0 the chief)."""
        hosts = {}
        for i, n in enumerate(self.pools):
            if n:
                hosts["workerpool%d" % i] = [
                    "cmle-training-workerpool%d-%s-%d:2222" % (i, self.jid, k)
                    for k in range(n)]
        tf_names = {"workerpool0": "chief", "workerpool1": "worker",
                    "workerpool2": "ps", "workerpool3": "evaluator"}
        tf_cluster = {tf_names[k]: v for k, v in hosts.items()}
        envs = []
        for pool in sorted(hosts):
            for k in range(len(hosts[pool])):
                env = dict(self.env)
                env["CLUSTER_SPEC"] = json.dumps({
                    "cluster": hosts, "environment": "cloud",
                    "task": {"type": pool, "index": k},
                    "job": json.dumps(self.body.get("jobSpec") or {})})
                env["TF_CONFIG"] = json.dumps({
                    "cluster": tf_cluster, "environment": "cloud",
                    "task": {"type": tf_names[pool], "index": k}})
                envs.append(env)
        return envs

    def _run(self, t):
        if self.jstate not in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING"):
            return
        self._set(t, "JOB_STATE_RUNNING")
        self.started = self.started or t
        if self.replicas > 1:
            Gang(self).start(self.cluster_envs(), t, self.ckpt_default)
            return
        self.new_run(self.env, self.ckpt_default).start(t)

    def on_run_end(self, t, code):
        self.exit_code = code
        if code == 0:
            self._set(t, "JOB_STATE_SUCCEEDED")
        else:
            # Real wording (seen in Vertex job errors): code 3
            # INVALID_ARGUMENT, "The replica workerpool0-0 exited with a
            # non-zero status of N. Termination reason: Error. ..."
            self.error = {"code": 3, "message":
                          "The replica workerpool0-0 exited with a non-zero "
                          "status of %d. Termination reason: Error. To find "
                          "out more about why your job exited please check "
                          "the logs: https://console.cloud.google.com/logs/"
                          "viewer?project=%s&resource=ml_job%%2Fjob_id%%2F%s"
                          % (code, self.fake.project_number(self.project),
                             self.jid)}
            self._set(t, "JOB_STATE_FAILED")

    def interrupt(self, t, reason):
        """Spot preemption / host maintenance of the worker VM.  Vertex
        restarts the worker (the container starts again with the same
        environment) unless ``scheduling.disableRetries`` is set, when the
        job fails at once; a Spot job that is preempted more than
        ``vertex_spot_restarts`` times fails (see README)."""
        for r in self.runs:
            r.stop(t, reason)
        if self.no_retries:
            # scheduling.disableRetries: the worker is not restarted and
            # the job fails, in Vertex's words for a replica it lost.
            self.error = {"code": 14, "message":
                          "The replica workerpool0-0 was %s and retries "
                          "are disabled for this job (scheduling."
                          "disableRetries)." % (
                              "preempted (Spot VM preemption)"
                              if reason == "preempted" else
                              "stopped for host maintenance")}
            self._set(t, "JOB_STATE_FAILED")
            return
        if reason == "preempted" and \
                self.restarts >= self.fake.cfg["vertex_spot_restarts"]:
            k = getattr(self, "replica", 0)
            self.error = {"code": 14, "message":
                          "The replica %s was preempted (Spot VM "
                          "preemption, STOCKOUT) and could not be "
                          "restarted." % ("workerpool0-0" if k == 0 else
                                          "workerpool1-%d" % (k - 1))}
            self._set(t, "JOB_STATE_FAILED")
            return
        self.restarts += 1
        self.fake.at(t + self.fake.cfg["provision_seconds"], self._run)

    def cancel(self, t):
        for r in self.runs:
            r.stop(t, "cancelled")
        self._set(t, "JOB_STATE_CANCELLING")

        def done(tt):
            if self.jstate == "JOB_STATE_CANCELLING":
                self.error = {"code": 1, "message": "CANCELED"}
                self._set(tt, "JOB_STATE_CANCELLED")
        self.fake.at(t + 1, done)

    def to_json(self, now):
        b = json.loads(json.dumps(self.body))
        b["name"] = self.full_name()
        b["state"] = self.jstate
        b["createTime"] = self.create_time
        b["updateTime"] = rfc3339(self.updated)
        if self.started:
            b["startTime"] = rfc3339(self.started)
        if self.ended:
            b["endTime"] = rfc3339(self.ended)
        if self.error:
            b["error"] = self.error
        for wp in b["jobSpec"].get("workerPoolSpecs") or []:
            wp.setdefault("replicaCount", "1")
            wp.setdefault("diskSpec", {"bootDiskType": "pd-ssd",
                                       "bootDiskSizeGb": 100})
        return b


def read_mask(req, objs):
    """Vertex ``readMask`` (a google-fieldmask) applied to each listed
    resource."""
    rm = req.q.get("readMask")
    if not rm:
        return objs
    try:
        tree = fields.parse_field_mask(rm)
    except fields.FieldsError as e:
        raise ApiError(400, "Invalid read_mask %r: %s" % (rm, e))
    return [fields.apply_fields(o, tree) for o in objs]


class Vertex:
    """Vertex AI customJobs (DESIGN GE)."""

    def __init__(self, fake):
        self.f = fake

    def _parent(self, req):
        p = self.f.project_id(req.params["project"])
        r = req.params["location"]
        host = (req.headers.get("Host") or "").split(":")[0]
        m = re.match(r"^([a-z0-9-]+)-aiplatform\.googleapis\.com$", host)
        if m and m.group(1) != r:
            raise ApiError(400, "Location %s is not the same as the region "
                           "of the endpoint %s. Please use the endpoint of "
                           "region %s." % (r, host, r))
        if r not in cat.REGIONS:
            raise ApiError(400, "Location %s is not supported." % r)
        return p, r

    def create(self, req):
        f = self.f
        p, r = self._parent(req)
        b = req.body
        now = f.now()
        errs = []
        if not b.get("displayName"):
            errs.append("custom_job.display_name")
        spec = b.get("jobSpec") or {}
        pools = spec.get("workerPoolSpecs") or []
        if not pools:
            errs.append("custom_job.job_spec.worker_pool_specs")
        for i, wp in enumerate(pools):
            cs = wp.get("containerSpec")
            if cs is None and wp.get("pythonPackageSpec") is None:
                errs.append("custom_job.job_spec.worker_pool_specs[%d]."
                            "container_spec" % i)
            elif cs is not None and not cs.get("imageUri"):
                errs.append("custom_job.job_spec.worker_pool_specs[%d]."
                            "container_spec.image_uri" % i)
            errs += _python_package_errors(wp, i)
            if not (wp.get("machineSpec") or {}).get("machineType") and \
                    i == 0:
                errs.append("custom_job.job_spec.worker_pool_specs[0]."
                            "machine_spec.machine_type")
        if errs:
            raise vertex_required(errs)
        fakegcp_project.check_vertex(f, p, r, b)
        wp = pools[0]
        ms = wp.get("machineSpec") or {}
        acc = ms.get("acceleratorType")
        if acc and acc != "ACCELERATOR_TYPE_UNSPECIFIED":
            g = cat.BY_VERTEX.get(acc)
            if not g or not any(g["type"] in cat.ZONE_GPUS.get(z, {})
                                for z in cat.REGION_ZONES[r]):
                raise ApiError(400, "Accelerator \"%s\" is not supported "
                               "in location %s." % (acc, r))
            if int(ms.get("acceleratorCount") or 0) < 1:
                raise ApiError(400, "accelerator_count must be positive "
                               "when accelerator_type is set.")
        job = CustomJob(f, p, r, json.loads(json.dumps(b)), now)
        if job.vq:
            metric = f.vertex_metric(job.vq, job.spot)
            use = sum(j.gpu_count * j.replicas for j in f.vertex.values()
                      if j.project == p and j.region == r and j.live() and
                      j.vq == job.vq and j.spot == job.spot)
            need = job.gpu_count * job.replicas
            over = use + need > f.vertex_limit(p, r, metric)
            if over and f.cfg["vertex_quota_error"] == "job":
                job.quota_error = metric
            elif over:
                raise ApiError(
                    429, "The following quota metrics exceed quota limits: "
                    "aiplatform.googleapis.com/%s" % metric,
                    status="RESOURCE_EXHAUSTED", details=[{
                        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [{"subject": "projects/%s/locations/%s"
                                        % (f.project_number(p), r),
                                        "description": "aiplatform."
                                        "googleapis.com/%s" % metric}]}])
        f.vertex[(p, r, job.jid)] = job
        f.at(now + min(1.0, f.cfg["provision_seconds"] / 2), job.pending)
        return job.to_json(now)

    def _job(self, req):
        p, r = self._parent(req)
        j = self.f.vertex.get((p, r, req.params["job"]))
        if j is None:
            raise ApiError(404, "The CustomJob does not exist.")
        return j

    def get(self, req):
        return self._job(req).to_json(self.f.now())

    def list(self, req):
        """Newest first."""
        p, r = self._parent(req)
        paging.refuse_hyphen_label(self.f, req)
        page, nxt = paging.scan_page(
            req, [(0, self.f.vertex.index("create", (p, r)))],
            paging.page_size(req, "pageSize", 100, 100),
            paging.list_filter(req, "aiplatform"), CustomJob, self.f.now(),
            paging.list_salt(req, "v", p, r), reverse=True)
        page = read_mask(req, [j for _, j in page])
        out = {"customJobs": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def cancel(self, req):
        j = self._job(req)
        if not j.live() or j.jstate == "JOB_STATE_CANCELLING":
            raise ApiError(400, "Cannot cancel job %s in state %s." % (
                j.full_name(), j.jstate), status="FAILED_PRECONDITION")
        j.cancel(self.f.now())
        return {}

    def delete(self, req):
        j = self._job(req)
        f = self.f
        now = f.now()
        if j.jstate in ("JOB_STATE_RUNNING", "JOB_STATE_PENDING",
                        "JOB_STATE_QUEUED", "JOB_STATE_CANCELLING"):
            raise ApiError(400, "The CustomJob %s is in state %s and cannot "
                           "be deleted. Cancel it first." % (
                               j.full_name(), j.jstate),
                           status="FAILED_PRECONDITION")
        j.deleted = True
        f.vertex.pop((j.project, j.region, j.jid), None)
        f.removed.append(j)
        name = "projects/%s/locations/%s/operations/%d" % (
            f.project_number(j.project), j.region, next(f.ids))
        lro = {"name": name, "_vertex": True, "done": True,
               "metadata": {"@type": "type.googleapis.com/google.cloud."
                            "aiplatform.v1.DeleteOperationMetadata",
                            "genericMetadata": {
                                "createTime": rfc3339(now),
                                "updateTime": rfc3339(now)}},
               "response": {"@type": "type.googleapis.com/google.protobuf."
                            "Empty"}}
        f.lros["projects/%s/locations/%s/operations/%s" % (
            j.project, j.region, name.rsplit("/", 1)[1])] = lro
        return {k: v for k, v in lro.items() if not k.startswith("_")}


# Where Vertex AI's pre-built training containers live: the only
# executor images a pythonPackageSpec may name.
PREBUILT = tuple("%s-docker.pkg.dev/vertex-ai/training/" % m
                 for m in ("us", "europe", "asia"))


def _python_package_errors(wp, i):
    """The required fields of a PythonPackageSpec that WP leaves out, as
    Vertex AI names them (executorImageUri, packageUris, pythonModule
    are required; containerSpec and pythonPackageSpec are one of)."""
    ps = wp.get("pythonPackageSpec")
    if ps is None:
        return []
    pre = "custom_job.job_spec.worker_pool_specs[%d]." % i
    if wp.get("containerSpec") is not None:
        return [pre + "task"]
    errs = []
    img = ps.get("executorImageUri") or ""
    if img and not any(img.startswith(r) for r in PREBUILT):
        # "You must use an image from this list" (PythonPackageSpec).
        return [pre + "python_package_spec.executor_image_uri"]
    for k, n in (("executorImageUri", "executor_image_uri"),
                 ("packageUris", "package_uris"),
                 ("pythonModule", "python_module")):
        if not ps.get(k):
            errs.append(pre + "python_package_spec." + n)
    return errs


def vertex_required(paths):
    """Vertex's message for missing required fields."""
    msg = "List of found errors:\t" + "\t".join(
        "%d.Field: %s; Message: Required field is not set." % (i + 1, p)
        for i, p in enumerate(paths))
    return ApiError(400, msg, details=[{
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": p, "description":
                             "Required field is not set."} for p in paths]}])



def routes(fake):
    """Vertex AI's rows of the route table (fakegcp_server.py)."""
    v = Vertex(fake)
    L = r"/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    V = L + r"/customJobs/(?P<job>[^/:]+)"
    return [
        ("POST", L + "/customJobs", "aiplatform",
         "aiplatform.projects.locations.customJobs.create", v.create,
         "GoogleCloudAiplatformV1CustomJob", "custom_job"),
        ("GET", L + "/customJobs", "aiplatform",
         "aiplatform.projects.locations.customJobs.list", v.list),
        ("GET", V, "aiplatform",
         "aiplatform.projects.locations.customJobs.get", v.get),
        ("DELETE", V, "aiplatform",
         "aiplatform.projects.locations.customJobs.delete", v.delete),
        ("POST", V + ":cancel", "aiplatform",
         "aiplatform.projects.locations.customJobs.cancel", v.cancel,
         "GoogleCloudAiplatformV1CancelCustomJobRequest",
         "cancel_custom_job_request"),
    ]
