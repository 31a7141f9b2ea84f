"""List filters (DESIGN G0.3): AIP-160 with AND, OR, NOT, -, parentheses
and implicit AND; Compute's regex form; Google's 400 for malformed ones."""
import urllib.parse

import pytest

import fakegcp_filter as flt
from fakegcp_fixtures import CP

Q = urllib.parse.quote
Z = CP + "/zones/us-central1-a"
B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
V = "/v1/projects/gpuq-demo/locations/us-central1/customJobs"


def m(expr, obj, **kw):
    return flt.compile_filter(expr, **kw).match(obj)


def test_grammar_and_precedence():
    o = {"a": "1", "b": "2", "c": "3", "labels": {"k": "v", "x-y": "z"},
         "scheduling": {"automaticRestart": True}, "n": 5,
         "cpuPlatform": "Intel Broadwell", "tags": ["p", "q"],
         "createTime": "2024-06-01T10:00:00.123456Z"}
    assert m('a=1 AND b=2', o) and not m('a=1 AND b=3', o)
    assert m('a=9 OR a=1', o) and not m('a=9 OR a=8', o)
    # OR binds tighter than AND (AIP-160): a=1 AND (b=9 OR c=3)
    assert m('a=1 AND b=9 OR c=3', o)
    assert not m('a=9 AND b=2 OR c=3', o)
    assert m('(a=9 AND b=2) OR c=3', o)
    # juxtaposition is AND; Compute's own example
    assert m('(a = 1) (b = "2")', o) and not m('(a = 1) (b = 3)', o)
    assert m('(cpuPlatform = "Intel Skylake") OR (cpuPlatform = "Intel '
             'Broadwell") AND (scheduling.automaticRestart = true)', o)
    assert m('NOT a=2', o) and not m('NOT a=1', o) and m('-a=2', o)
    assert m('NOT (a=2 OR b=3)', o) and m('((a=1))', o)
    assert m('labels.k:*', o) and not m('labels.nope:*', o)
    assert m('labels:k', o) and m('labels."x-y"="z"', o)
    assert m('labels.x-y=z', o) and m('labels.k != "w"', o)
    assert m('labels.nope != "w"', o)
    assert m('tags:q', o) and m('n>4 AND n<=5', o) and not m('n>5', o)
    assert m('a="*"', o) and m('cpuPlatform="Intel*"', o)
    assert m('cpuPlatform:broad', o) and not m('cpuPlatform="Intel"', o)
    assert m('create_time>"2024-06-01T09:59:59Z"', o)
    assert m('create_time<"2024-06-01T03:00:01-07:00"', o)
    assert not m('create_time>="2024-06-02T00:00:00Z"', o)
    assert m('scheduling.automaticRestart = true', o)
    assert flt.compile_filter("a=1 OR labels.k:* create_time=2").roots == {
        "a", "labels", "createTime"}


def test_compute_regex_form():
    o = {"name": "inst-7", "status": "RUNNING"}
    assert m("name eq 'inst-.*'", o, compute=True)
    assert not m("name eq inst", o, compute=True)     # whole value
    assert m('name ne "other.*"', o, compute=True)
    assert m("(name eq inst-.*)(status ne STOPPED)", o, compute=True)
    assert not m("(name eq inst-.*) (status eq STOPPED)", o, compute=True)
    for bad in ["name eq a.* AND status = RUNNING",
                "(name eq x) OR (name eq y)", "NOT name eq x",
                "name eq '('"]:
        with pytest.raises(flt.FilterError):
            flt.compile_filter(bad, compute=True)
    with pytest.raises(flt.FilterError):
        flt.compile_filter("name eq x")       # not outside Compute


def test_malformed():
    for bad in ["a=", "(a=1", "a=1)", "AND a=1", "a=1 AND", "a=1 OR",
                "=1", "a", "()", "a=1 OR OR b=2", "NOT", "a=1 AND AND b=2",
                "a ~ 1", "a=1 (", '"unterminated', "a=\"x"]:
        with pytest.raises(flt.FilterError):
            flt.compile_filter(bad)


def test_compute_or_filters(gcp):
    gcp.ctl("/_fake/instances", {"zone": "us-central1-a", "count": 3,
                                 "name_prefix": "pre", "spot": True})
    gcp.ctl("/_fake/instances", {"zone": "us-central1-a", "count": 2,
                                 "name_prefix": "mnt",
                                 "labels": {"team": "b"}})
    names = [r["name"] for r in gcp.ctl("/_fake/resources")["resources"]]
    gcp.ctl("/_fake/preempt", {"name": names[0]})
    gcp.ctl("/_fake/maintenance", {"name": names[3]})
    f = ('(operationType="compute.instances.preempted") OR '
         '(operationType="compute.instances.terminateOnHostMaintenance")')
    ops = gcp.get(Z + "/operations?filter=" + Q(f))[1]["items"]
    assert sorted(o["operationType"] for o in ops) == [
        "compute.instances.preempted",
        "compute.instances.terminateOnHostMaintenance"]
    link = ops[0]["targetLink"]
    f2 = '(%s) AND targetLink="%s"' % (f, link)
    assert len(gcp.get(Z + "/operations?filter=" + Q(f2))[1]["items"]) == 1
    l = gcp.get(Z + "/instances?filter=" + Q(
        'labels.team="b" OR name="%s"' % names[0]))[1]["items"]
    assert sorted(i["name"] for i in l) == sorted([names[0]] + names[3:])
    ag = gcp.get(CP + "/aggregated/instances?filter=" + Q(
        'NOT (labels.team:*) AND (status="RUNNING" OR status="STOPPING")'))
    got = ag[1]["items"]["zones/us-central1-a"]["instances"]
    assert sorted(i["name"] for i in got) == names[:3]
    assert len(gcp.get(Z + "/instances?filter=" + Q(
        "name eq 'pre-.*'"))[1]["items"]) == 3
    for bad in ['(status="RUNNING"', 'status="RUNNING" OR',
                "name eq pre.* OR name eq mnt.*"]:
        st, e, _ = gcp.get(Z + "/instances?filter=" + Q(bad))
        assert st == 400, bad
        assert e["error"]["message"] == (
            "Invalid value for field 'filter': '%s'. Invalid list filter "
            "expression." % bad)
        assert e["error"]["errors"][0]["reason"] == "invalid"


def test_batch_vertex_or_filters(gcp):
    for lab, n in (("a", 3), ("b", 2), ("c", 1)):
        gcp.ctl("/_fake/instances", {"service": "batch", "count": n,
                                     "labels": {"team": lab}})
        gcp.ctl("/_fake/instances", {"service": "vertex", "count": n,
                                     "name_prefix": "v" + lab,
                                     "labels": {"team": lab}})
    gcp.ctl("/_fake/instances", {"service": "batch", "count": 1,
                                 "state": "FAILED", "labels": {"team": "a"}})

    def count(url, key, f):
        st, l, _ = gcp.get(url + "?pageSize=100&filter=" + Q(f))
        assert st == 200, (f, l)
        return len(l.get(key, []))
    assert count(B, "jobs", 'labels.team="a" OR labels.team="b"') == 6
    assert count(B, "jobs", '(labels.team="a" OR labels.team="c") AND '
                 'NOT status.state="FAILED"') == 4
    assert count(B, "jobs", '-labels.team:*') == 0
    assert count(V, "customJobs", 'state!="JOB_STATE_FAILED" OR '
                 'display_name="x"') == 6
    assert count(V, "customJobs", 'display_name:"vb-*"') == 2
    assert count(V, "customJobs", 'labels.team=c OR (labels.team=b AND '
                 'display_name:vb*)') == 3
    assert count(V, "customJobs", 'create_time>"2000-01-01T00:00:00Z"') == 6
    assert count(V, "customJobs", 'NOT labels.team="a"') == 3
    for url in (B, V):
        st, e, _ = gcp.get(url + "?filter=" + Q('labels.team="a" OR'))
        assert st == 400 and e["error"]["status"] == "INVALID_ARGUMENT"
        assert "Invalid list filter" in e["error"]["message"]
        assert gcp.get(url + "?filter=" + Q("name eq x.*"))[0] == 400
    job = [r for r in gcp.ctl("/_fake/resources?service=batch")["resources"]
           if r["state"] == "FAILED"][0]["name"]
    t = B + "/%s/taskGroups/group0/tasks?filter=" % job
    assert len(gcp.get(t + Q("State=RUNNING"))[1]["tasks"]) == 1
    assert gcp.get(t + Q("State=FAILED"))[1] == {}
    assert len(gcp.get(t + Q("State=FAILED OR State=RUNNING"))[1][
        "tasks"]) == 1
    assert gcp.get(t + Q("State="))[0] == 400


def test_hyphen_label_filter_refused_when_configured(gcp):
    """refuse_hyphen_label_filter: Batch and Vertex refuse a filter on a
    hyphenated label key (400 INVALID_ARGUMENT); other filters pass."""
    q = "?filter=" + urllib.parse.quote('labels.gpuq-install="t"')
    B = "/v1/projects/gpuq-demo/locations/us-central1/jobs"
    assert gcp.get(V + q)[0] == 200
    gcp.ctl("/_fake/config", {"refuse_hyphen_label_filter": True})
    for base in (V, B):
        st, body = gcp.get(base + q)[:2]
        assert st == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
        assert gcp.get(base + "?filter=" + urllib.parse.quote(
            'labels.team="x"'))[0] == 200
