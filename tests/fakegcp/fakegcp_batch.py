"""Cloud Batch (batch v1; discovery document
https://batch.googleapis.com/$discovery/rest?version=v1, DESIGN GD):
jobs (create, get, list, delete, cancel), their tasks and long-running
operations, with the simulated job lifecycle QUEUED -> SCHEDULED ->
RUNNING -> SUCCEEDED/FAILED and the reserved exit codes 50001-50006.
"""
import json
import re
import secrets
import uuid

import fakegcp_catalog as cat
import fakegcp_flex as flexmod
import fakegcp_paging as paging
from fakegcp_compute import UUID_RE, implicit_gpu
import fakegcp_project
from fakegcp_errors import ApiError
from fakegcp_sim import Gang, Resource, duration, rfc3339

BATCH_ID_RE = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")

BATCH_TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
RESERVED_EXIT = {
    50001: "Spot Preemption",
    50002: "Batch no longer receives VM updates",
    50003: "VM is rebooted during task execution",
    50004: "tasks cannot be canceled",
    50005: "task runs over the maximum runtime",
    50006: "VM is recreated during task execution",
}


# What a secretVariables entry reads as in the task: this and its name.
SECRET_VALUE = "fake-secret-value-of:"


class BatchJob(Resource):
    """A Cloud Batch job with one task group "group0" (DESIGN GD):
    QUEUED -> SCHEDULED -> RUNNING -> SUCCEEDED/FAILED, task exit codes and
    the reserved 5000x codes in statusEvents, lifecyclePolicies and
    maxRetryCount honoured."""
    service = "batch"

    def __init__(self, fake, project, region, job_id, body, now):
        Resource.__init__(self, fake, project, job_id, region, None,
                          body.get("labels"), False, now)
        self.body = body
        self.uid = "%s-%s" % (job_id[:40], uuid.uuid4().hex[:12])
        self.jstate = "QUEUED"
        self.events = []
        self.task_events = []
        self.task_state = "PENDING"
        self.task_exit = None
        self.retries = 0
        self.updated = now
        self.vm_id = None
        tg = body["taskGroups"][0]
        ts = tg.get("taskSpec") or {}
        self.task_count = int(tg.get("taskCount") or 1)
        # A multi-node group (API-NOTES N.2): its tasks run at once, one
        # per VM, with a hosts file listing every VM when asked for.
        self.parallelism = int(tg.get("parallelism") or self.task_count)
        self.hosts_file = bool(tg.get("requireHostsFile"))
        self.hosts = []
        self.gang = None
        self.task_states = None        # per task, for a group
        self.max_retry = int(ts.get("maxRetryCount") or 0)
        mrd = ts.get("maxRunDuration")
        self.max_run = float(mrd[:-1]) if isinstance(mrd, str) and \
            re.match(r"^\d+(\.\d+)?s$", mrd) else None
        self.policies = ts.get("lifecyclePolicies") or []
        env = dict(((ts.get("environment") or {}).get("variables")) or {})
        rn = (ts.get("runnables") or [{}])[0]
        env.update(((rn.get("environment") or {}).get("variables")) or {})
        # The VM reads each secret from Secret Manager: the fake's value
        # of a secret is its resource name behind a marker.
        self.secrets = dict(((rn.get("environment") or {}).get(
            "secretVariables")) or {})
        env.update({k: SECRET_VALUE + v for k, v in self.secrets.items()})
        self.env = env
        ap = body.get("allocationPolicy") or {}
        inst = (ap.get("instances") or [{}])[0]
        pol = inst.get("policy") or {}
        self.machine = pol.get("machineType") or "e2-standard-2"
        self.pmodel = pol.get("provisioningModel") or "STANDARD"
        self.spot = self.pmodel in ("SPOT", "PREEMPTIBLE")
        # flex-start (fakegcp_flex.py): not preempted, queued until
        # capacity comes, on the preemptible quota
        self.flex = self.pmodel == "FLEX_START"
        acc = (pol.get("accelerators") or [{}])[0]
        self.gpu = acc.get("type")
        self.gpu_count = int(acc.get("count") or 0) if self.gpu else 0
        if not self.gpu:
            self.gpu, self.gpu_count = implicit_gpu(self.machine)
        self.allowed = ((ap.get("location") or {}).get("allowedLocations")
                        or [])

    def full_name(self):
        return "projects/%s/locations/%s/jobs/%s" % (self.project,
                                                     self.region, self.name)

    def state(self):
        return self.jstate

    def live(self):
        return not self.deleted and self.jstate not in BATCH_TERMINAL

    def machine_name(self):
        return self.machine

    def quota_use(self):
        """(vCPUs per VM, VMs) the job's VMs hold against Compute quotas
        (fakegcp_quota.py): none while QUEUED."""
        if self.jstate == "QUEUED" or getattr(self, "resv_key", None):
            return None
        return (cat.machine_info(self.machine) or (2, 8))[0], \
            self.task_count

    VIEW_PATHS = (("name",), ("uid",), ("labels",), ("status", "state"))

    def filter_view(self, now):
        v = {"name": self.full_name(), "uid": self.uid,
             "status": {"state": self.jstate}}
        if "labels" in self.body:
            v["labels"] = self.body["labels"]
        return v

    def _event(self, t, desc, etype="STATUS_CHANGED", **extra):
        e = {"type": etype, "description": desc,
             "eventTime": rfc3339(t)}
        e.update(extra)
        self.events.append(e)
        self.updated = t

    def _job_state(self, t, new, suffix="", **extra):
        old = self.jstate
        self.jstate = new
        self._event(t, "Job state is set from %s to %s for job %s.%s" % (
            old, new, self.full_name(), suffix), **extra)
        if new in BATCH_TERMINAL:
            self.ended = t

    def _task_event(self, t, new, desc_tail="", code=None):
        old = self.task_state
        self.task_state = new
        e = {"type": "STATUS_CHANGED",
             "description": "Task state is updated from %s to %s%s" % (
                 old, new, desc_tail),
             "eventTime": rfc3339(t), "taskState": new}
        if code is not None:
            e["taskExecution"] = {"exitCode": code}
        self.task_events.append(e)
        self.updated = t
        return e

    def candidate_zones(self):
        zones = []
        for loc in self.allowed:
            if loc.startswith("zones/"):
                zones.append(loc[6:])
            elif loc.startswith("regions/"):
                zones.extend(cat.REGION_ZONES.get(loc[8:], []))
        if not zones:
            zones = list(cat.REGION_ZONES.get(self.region, []))
        if self.gpu:
            zones = [z for z in zones if self.gpu in cat.ZONE_GPUS.get(z, {})]
        return zones

    def _hold(self, t, desc):
        """batch_shortage "queue": stay QUEUED, say why once in a status
        event, and look again later."""
        f = self.fake
        if not self.events or self.events[-1]["description"] != desc:
            self._event(t, desc, etype="")
            self.events[-1].pop("type")
        f.at(t + f.cfg["batch_queue_recheck"], self.schedule)

    def _shortage(self, t):
        """What keeps the job queued now, or None."""
        f = self.fake
        zones = self.candidate_zones()
        if zones and all(f.stocked_out(z, self.gpu, self.spot)
                         for z in zones):
            return ("No VM has been allocated for the job %s: the zones "
                    "allowed do not have enough resources available to "
                    "fulfill the request; it stays queued." %
                    self.full_name())
        vcpus = (cat.machine_info(self.machine) or (2, 8))[0]
        err = f.compute_quota_check(self.project, self.region, self.gpu,
                                    self.gpu_count * self.task_count,
                                    vcpus * self.task_count,
                                    self.spot or self.flex,
                                    ) if zones else None
        if err:
            return ("Quota checking process decides to delay scheduling "
                    "for the job %s due to inadequate quota: %s" % (
                        self.full_name(), err[0]))
        return None

    def schedule(self, t):
        """QUEUED -> SCHEDULED; capacity and quota are checked here, as Batch
        creates its VMs asynchronously after accepting the job."""
        if self.jstate != "QUEUED" or self.deleted:
            return
        f = self.fake
        if f.cfg["batch_shortage"] == "queue":
            why = self._shortage(t)
            if why:
                self._hold(t, why)
                return
        self._job_state(t, "SCHEDULED")
        if getattr(self, "resv_key", None):
            # its reservation holds the VMs and their quota
            self.zone = self.resv_key[0]
            f.at(t + f.cfg["provision_seconds"], self._start_task)
            return
        zones = self.candidate_zones()
        if not zones:
            self._resource_error(t, "CODE_GCE_INVALID_VALUE",
                                 "Accelerator type %s is not available in "
                                 "the allowed locations." % self.gpu)
            return
        ok = [z for z in zones if not f.stocked_out(z, self.gpu, self.spot)]
        if not ok:
            z = zones[0]
            self._resource_error(
                t, "CODE_GCE_ZONE_RESOURCE_POOL_EXHAUSTED",
                "error count is 1, latest message example: Instance '%s' "
                "creation failed: The zone 'projects/%s/zones/%s' does not "
                "have enough resources available to fulfill the request.  "
                "Try a different zone, or try again later." % (
                    self.vm_name(), self.project, z))
            return
        vcpus = (cat.machine_info(self.machine) or (2, 8))[0]
        err = f.compute_quota_check(self.project, self.region, self.gpu,
                                    self.gpu_count * self.task_count,
                                    vcpus * self.task_count,
                                    self.spot or self.flex,
                                    self.machine)
        if err:
            self._resource_error(
                t, "CODE_GCE_QUOTA_EXCEEDED",
                "error count is 1, latest message example: Instance '%s' "
                "creation failed: %s" % (self.vm_name(), err[0]))
            return
        self.zone = ok[0]
        if self.flex:
            # Batch names no wait limit for flex-start: it stays
            # SCHEDULED until the capacity comes.
            flexmod.wait(f, t, None, lambda tt: f.at(
                tt + f.cfg["provision_seconds"], self._start_task), None)
            return
        f.at(t + f.cfg["provision_seconds"], self._start_task)

    def vm_name(self):
        return "%s-group0-0-%s" % (self.name[:30], self.uid[-4:])

    def _resource_error(self, t, code, msg):
        self._event(t, "Batch Error: code - %s, description - %s" % (
            code, msg), etype="")
        self.events[-1].pop("type")
        self._task_event(t, "FAILED", " due to %s." % code)
        self._job_state(t, "FAILED", " Job failed due to %s: %s" % (
            code, msg))

    def _start_task(self, t):
        if self.jstate not in ("SCHEDULED", "RUNNING") or self.deleted:
            return
        self.vm_id = str(next(self.fake.ids))
        self._task_event(t, "ASSIGNED", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        self._task_event(t, "RUNNING", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        if self.jstate == "SCHEDULED":
            self._job_state(t, "RUNNING")
        self.started = self.started or t
        if self.task_count > 1:
            self._start_group(t)
            return
        run = self.new_run(self.env)
        run.start(t)
        if self.max_run is not None:
            # taskSpec.maxRunDuration: the attempt is stopped with 50005
            def overrun(tt):
                if run.state == "running" and self.runs[-1] is run:
                    self.task_failed(tt, 50005)
            self.fake.at(t + self.max_run, overrun)

    HOSTS_FILE = "/etc/cloudbatch-taskgroup-hosts"

    def _start_group(self, t):
        """Every task of a multi-task group at once (parallelism is the
        task count for a gang), each on its own VM with BATCH_TASK_INDEX
        and BATCH_TASK_COUNT, and BATCH_HOSTS_FILE naming the file that
        lists the group's VMs ("IP hostname" a line) when the group
        requires one."""
        n = self.task_count
        self.hosts = ["10.138.%d.%d %s-group0-%d" % (
            int(self.vm_id) % 250, i + 2, self.name[:30], i)
            for i in range(n)]
        envs = []
        for i in range(min(n, self.parallelism)):
            env = dict(self.env)
            env["BATCH_TASK_INDEX"] = str(i)
            env["BATCH_TASK_COUNT"] = str(n)
            if self.hosts_file:
                env["BATCH_HOSTS_FILE"] = self.HOSTS_FILE
            envs.append(env)
        self.gang = Gang(self)
        self.task_states = ["RUNNING"] * n
        self.gang.start(envs, t)

    def on_run_end(self, t, code):
        self.task_failed(t, code) if code else self._succeed(t)

    def _succeed(self, t):
        self.exit_code = 0
        self.task_exit = 0
        self._task_event(t, "SUCCEEDED", " on zones/%s/instances/%s." % (
            self.zone, self.vm_id))
        self._job_state(t, "SUCCEEDED")

    def task_failed(self, t, code, index=0):
        """Task INDEX ended with ``code`` (user exit or reserved 5000x).
        No retry: the job fails, and its other tasks with it (or, with
        batch_group_fail "task", once they have ended)."""
        if self.gang is not None and not self.gang.over and \
                self.task_states[index] == "RUNNING" and \
                self.fake.cfg["batch_group_fail"] == "task":
            self.task_states[index] = "FAILED"
            self.failed_index = index
            self.gang.lose(t, index, code, "exit %d" % code)
            return
        index = getattr(self, "failed_index", index)
        for r in self.runs:
            r.stop(t, "exit %d" % code)
        self.task_exit = code
        where = "on zones/%s/instances/%s" % (self.zone, self.vm_id)
        if code in RESERVED_EXIT:
            tail = " %s due to %s with exit code %d." % (
                where, RESERVED_EXIT[code], code)
        else:
            tail = " %s with exit code %d." % (where, code)
        ev = self._task_event(t, "FAILED", tail, code)
        if self._retry(code):
            self.retries += 1
            self._task_event(t, "PENDING", ".")
            self.fake.at(t + self.fake.cfg["provision_seconds"],
                         self._start_task)
            return
        self.exit_code = code
        self._job_state(
            t, "FAILED", " Job failed due to task failure. Specifically, "
            "task with index %d failed due to the following task event: "
            "\"%s\"" % (index, ev["description"]),
            taskState="FAILED", taskExecution={"exitCode": code})

    def _retry(self, code):
        if self.retries >= self.max_retry:
            return False
        for p in self.policies[:1]:
            codes = (p.get("actionCondition") or {}).get("exitCodes") or []
            hit = code in codes
            if p.get("action") == "RETRY_TASK":
                return hit
            if p.get("action") == "FAIL_TASK":
                return not hit
        return True

    def cancel(self, t):
        for r in self.runs:
            r.stop(t, "cancelled")
        self._job_state(t, "CANCELLATION_IN_PROGRESS")

        def done(tt):
            if self.jstate == "CANCELLATION_IN_PROGRESS":
                if self.task_state not in ("SUCCEEDED", "FAILED"):
                    self.task_state = "FAILED"
                self._job_state(tt, "CANCELLED")
        self.fake.at(t + 1, done)

    def counts(self):
        if self.task_states is not None and self.jstate == "RUNNING":
            c = {}
            for s in self.task_states:
                c[s] = str(int(c.get(s, "0")) + 1)
            return c
        return {self.task_state: str(self.task_count)}

    def task_json(self, i):
        return {"name": "%s/taskGroups/group0/tasks/%d" % (self.full_name(),
                                                           i),
                "status": {"state": self.task_state,
                           "statusEvents": list(self.task_events)}}

    def to_json(self, now):
        b = json.loads(json.dumps(self.body))
        tg = b["taskGroups"][0]
        tg["name"] = self.full_name() + "/taskGroups/group0"
        tg.setdefault("taskCount", "1")
        tg.setdefault("parallelism", "1")
        ts = tg.setdefault("taskSpec", {})
        cr = ts.setdefault("computeResource", {})
        cr.setdefault("cpuMilli", "2000")
        cr.setdefault("memoryMib", "2000")
        b["name"] = self.full_name()
        b["uid"] = self.uid
        b.setdefault("priority", "0")
        status = {"state": self.jstate, "statusEvents": list(self.events)}
        if self.jstate != "QUEUED":
            status["taskGroups"] = {"group0": {
                "counts": self.counts(),
                "instances": [{"machineType": self.machine,
                               "provisioningModel": self.pmodel,
                               "taskPack": "1",
                               "bootDisk": {"type": "pd-balanced",
                                            "sizeGb": "30",
                                            "image": "batch-debian"}}]}}
        if self.started:
            end = self.ended or now
            status["runDuration"] = duration(max(0, end - self.started))
        b["status"] = status
        b["createTime"] = rfc3339(self.created)
        b["updateTime"] = rfc3339(self.updated)
        return b


class Batch:
    """Cloud Batch v1 (DESIGN GD)."""

    def __init__(self, fake):
        self.f = fake

    def _parent(self, req):
        p = self.f.project_id(req.params["project"])
        r = req.params["location"]
        if r not in cat.REGIONS:
            raise ApiError(400, "Location %s is not a supported Batch "
                           "location." % r)
        return p, r

    def _lro(self, job, verb, now):
        name = "projects/%s/locations/%s/operations/operation-%d-%s" % (
            job.project, job.region, int(now * 1000), secrets.token_hex(6))
        lro = {"name": name, "done": False, "_end": now + 1,
               "metadata": {"@type": "type.googleapis.com/google.cloud."
                            "batch.v1.OperationMetadata",
                            "createTime": rfc3339(now),
                            "target": job.full_name(), "verb": verb,
                            "requestedCancellation": False,
                            "apiVersion": "v1"}}
        self.f.lros[name] = lro
        return lro

    def create(self, req):
        f = self.f
        p, r = self._parent(req)
        now = f.now()
        b = req.body
        rid = req.q.get("requestId")
        if rid is not None and not UUID_RE.match(rid):
            raise ApiError(400, "Invalid value for field 'request_id': must "
                           "be a valid UUID.")
        if rid and (p, rid) in f.batch_request_ids:
            return f.batch_request_ids[(p, rid)].to_json(now)
        jid = req.q.get("jobId") or "job-" + uuid.uuid4().hex[:24]
        if not BATCH_ID_RE.match(jid):
            raise ApiError(400, "Job id '%s' is invalid: it must match "
                           "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$." % jid)
        fakegcp_project.check_batch(f, p, r, b)
        tgs = b.get("taskGroups") or []
        if len(tgs) != 1:
            raise ApiError(400, "Only one TaskGroup is supported now: "
                           "job.task_groups has %d entries." % len(tgs))
        ap = b.get("allocationPolicy") or {}
        pol = ((ap.get("instances") or [{}])[0]).get("policy") or {}
        for a in pol.get("accelerators") or []:
            if a.get("type") not in cat.BY_TYPE:
                raise ApiError(400, "Invalid value for field "
                               "'job.allocation_policy.instances[0].policy."
                               "accelerators[0].type': unknown accelerator "
                               "type %r." % a.get("type"))
        for loc in (ap.get("location") or {}).get("allowedLocations") or []:
            reg = loc.split("/", 1)[-1]
            reg = cat.ZONE_REGION.get(reg, reg)
            if reg != r:
                raise ApiError(400, "allowed_locations %s is not in the "
                               "job's region %s." % (loc, r))
        if (p, r, jid) in f.batch:
            raise ApiError(409, "Resource 'projects/%s/locations/%s/jobs/%s'"
                           " already exists" % (p, r, jid),
                           status="ALREADY_EXISTS")
        job = BatchJob(f, p, r, jid, json.loads(json.dumps(b)), now)
        if job.flex:
            flexmod.check_batch(job.machine, job.max_run)
        import fakegcp_reservation
        job.resv_key = fakegcp_reservation.check_batch(f, p, r, pol, job)
        f.batch[(p, r, jid)] = job
        if rid:
            f.batch_request_ids[(p, rid)] = job
        f.at(now + min(1.0, f.cfg["provision_seconds"] / 2), job.schedule)
        return job.to_json(now)

    def _job(self, req):
        p, r = self._parent(req)
        j = self.f.batch.get((p, r, req.params["job"]))
        if j is None:
            raise ApiError(404, "Job projects/%s/locations/%s/jobs/%s not "
                           "found." % (p, r, req.params["job"]))
        return j

    def get(self, req):
        return self._job(req).to_json(self.f.now())

    ORDERS = {"": ("name", False), "name": ("name", False),
              "name asc": ("name", False), "name desc": ("name", True),
              "create_time": ("create", False),
              "create_time asc": ("create", False),
              "create_time desc": ("create", True)}

    def list(self, req):
        p, r = self._parent(req)
        paging.refuse_hyphen_label(self.f, req)
        raw = req.q.get("orderBy", "")
        order = self.ORDERS.get(" ".join(raw.split()).lower())
        if order is None:
            raise ApiError(400, "Invalid order_by \"%s\": supported are "
                           "\"name\", \"name desc\", \"create_time\" and "
                           "\"create_time desc\"." % raw)
        page, nxt = paging.scan_page(
            req, [(0, self.f.batch.index(order[0], (p, r)))],
            paging.page_size(req, "pageSize", 100, 100),
            paging.list_filter(req, "batch"), BatchJob, self.f.now(),
            paging.list_salt(req, "b", p, r), reverse=order[1])
        page = [j for _, j in page]
        out = {"jobs": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def delete(self, req):
        j = self._job(req)
        f = self.f
        now = f.now()
        for run in j.runs:
            run.stop(now, "deleted")
        j.jstate = "DELETION_IN_PROGRESS"
        j.updated = now
        lro = self._lro(j, "delete", now)

        def gone(t):
            j.deleted = True
            j.ended = j.ended or t
            f.batch.pop((j.project, j.region, j.name), None)
            f.removed.append(j)
        f.at(now + 1, gone)
        return self._lro_json(lro, now)

    def cancel(self, req):
        j = self._job(req)
        now = self.f.now()
        if j.jstate in BATCH_TERMINAL or j.jstate in (
                "CANCELLATION_IN_PROGRESS", "DELETION_IN_PROGRESS"):
            raise ApiError(400, "Job %s is in state %s and cannot be "
                           "cancelled." % (j.full_name(), j.jstate),
                           status="FAILED_PRECONDITION")
        j.cancel(now)
        return self._lro_json(self._lro(j, "cancel", now), now)

    def _lro_json(self, lro, now):
        o = {k: v for k, v in lro.items() if not k.startswith("_")}
        if now >= lro["_end"]:
            o["done"] = True
            o["metadata"] = dict(o["metadata"], endTime=rfc3339(
                lro["_end"]))
            o["response"] = {"@type": "type.googleapis.com/google.protobuf."
                             "Empty"}
        return o

    def op_get(self, req):
        p = self.f.project_id(req.params["project"])
        name = "projects/%s/locations/%s/operations/%s" % (
            p, req.params["location"], req.params["operation"])
        lro = self.f.lros.get(name)
        if lro is None:
            raise ApiError(404, "Operation %s not found." % name)
        if "_vertex" in lro:
            return {k: v for k, v in lro.items() if not k.startswith("_")}
        return self._lro_json(lro, self.f.now())

    def tasks_list(self, req):
        j = self._job(req)
        if req.params["group"] != "group0":
            raise ApiError(404, "Task group %s not found." %
                           req.params["group"])
        tasks = paging.filter_items(
            req, [j.task_json(i) for i in range(j.task_count)], "batch",
            {"State": ["status", "state"]})
        page, nxt = paging.paginate(tasks, req, "pageSize", 100, 1000,
                                    "t" + j.uid)
        out = {"tasks": page} if page else {}
        if nxt:
            out["nextPageToken"] = nxt
        return out

    def task_get(self, req):
        j = self._job(req)
        try:
            i = int(req.params["task"])
        except ValueError:
            i = -1
        if req.params["group"] != "group0" or not 0 <= i < j.task_count:
            raise ApiError(404, "Task not found.")
        return j.task_json(i)



def routes(fake):
    """Cloud Batch's rows of the route table (fakegcp_server.py)."""
    b = Batch(fake)
    L = r"/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)"
    J = L + r"/jobs/(?P<job>[^/:]+)"
    return [
        ("POST", L + "/jobs", "batch", "batch.projects.locations.jobs.create",
         b.create, "Job", "job"),
        ("GET", L + "/jobs", "batch", "batch.projects.locations.jobs.list",
         b.list),
        ("GET", J, "batch", "batch.projects.locations.jobs.get", b.get),
        ("DELETE", J, "batch", "batch.projects.locations.jobs.delete",
         b.delete),
        ("POST", J + ":cancel", "batch",
         "batch.projects.locations.jobs.cancel", b.cancel,
         "CancelJobRequest", "cancel_job_request"),
        ("GET", J + r"/taskGroups/(?P<group>[^/]+)/tasks", "batch",
         "batch.projects.locations.jobs.taskGroups.tasks.list", b.tasks_list),
        ("GET", J + r"/taskGroups/(?P<group>[^/]+)/tasks/(?P<task>[^/]+)",
         "batch", "batch.projects.locations.jobs.taskGroups.tasks.get",
         b.task_get),
        ("GET", L + r"/operations/(?P<operation>[^/]+)", "batch",
         "batch.projects.locations.operations.get", b.op_get),
    ]
