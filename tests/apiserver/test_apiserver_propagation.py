"""Deletion with ``propagationPolicy`` as kube-apiserver handles it: the garbage
collector's ``orphan`` and ``foregroundDeletion`` finalizers, each kind's default policy,
and the object's removal once its finalizers are gone (the garbage collector itself is a
controller, not part of the server)."""

from __future__ import annotations

import shutil
import subprocess
import urllib.request

import pytest
from apiserver_builders import call, deployment, job

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
RCS = "/api/v1/namespaces/default/replicationcontrollers"
MERGE = "application/merge-patch+json"
KUBECTL = shutil.which("kubectl")


def _deployment(apiserver, name):
    code, body = call(apiserver, "POST", DEPLOYMENTS, deployment(name).obj())
    assert code == 201, body
    return f"{DEPLOYMENTS}/{name}"


@pytest.mark.parametrize(
    ("options", "finalizers"),
    [
        pytest.param({"propagationPolicy": "Orphan"}, ["orphan"], id="orphan-policy"),
        pytest.param({"orphanDependents": True}, ["orphan"], id="orphan-dependents-true"),
        pytest.param(
            {"propagationPolicy": "Foreground"}, ["foregroundDeletion"], id="foreground-policy"
        ),
    ],
)
def test_policy_sets_the_gc_finalizer_and_the_object_waits_for_it(apiserver, options, finalizers):
    path = _deployment(apiserver, f"p-{len(str(options))}")
    code, body = call(apiserver, "DELETE", path, options)
    assert code == 200, body
    assert body["metadata"]["finalizers"] == finalizers
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["deletionGracePeriodSeconds"] == 0
    code, got = call(apiserver, "GET", path)
    assert (code, got["metadata"]["finalizers"]) == (200, finalizers)
    # What the garbage collector does when it is done: take the finalizer away.
    code, gone = call(apiserver, "PATCH", path, {"metadata": {"finalizers": None}}, MERGE)
    assert code == 200, gone
    assert call(apiserver, "GET", path)[0] == 404


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="deployments-default-to-background"),
        pytest.param({"propagationPolicy": "Background"}, id="background-policy"),
        pytest.param({"orphanDependents": False}, id="orphan-dependents-false"),
    ],
)
def test_background_deletes_at_once(apiserver, options):
    path = _deployment(apiserver, f"b-{len(str(options))}")
    code, body = call(apiserver, "DELETE", path, options)
    assert (code, body["kind"], body["status"]) == (200, "Status", "Success")
    assert call(apiserver, "GET", path)[0] == 404


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(JOBS, job("default-orphan").obj(), id="batch-v1-jobs"),
        pytest.param(
            RCS,
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "metadata": {"name": "default-orphan"},
                "spec": {
                    "selector": {"app": "rc"},
                    "template": {
                        "metadata": {"labels": {"app": "rc"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            },
            id="v1-replication-controllers",
        ),
    ],
)
def test_kinds_that_orphan_by_default(apiserver, path, body):
    code, created = call(apiserver, "POST", path, body)
    assert code == 201, created
    code, deleted = call(apiserver, "DELETE", f"{path}/default-orphan")
    assert code == 200
    assert deleted["metadata"]["finalizers"] == ["orphan"]
    # An explicit policy overrides the kind's default.
    code, again = call(
        apiserver, "DELETE", f"{path}/default-orphan", {"propagationPolicy": "Background"}
    )
    assert (code, again["status"]) == (200, "Success")
    assert call(apiserver, "GET", f"{path}/default-orphan")[0] == 404


def test_a_second_delete_swaps_the_finalizer_and_keeps_the_others(apiserver):
    code, created = call(
        apiserver,
        "POST",
        DEPLOYMENTS,
        {**deployment("swap").obj(), "metadata": {"name": "swap", "finalizers": ["x.io/keep"]}},
    )
    assert code == 201, created
    path = f"{DEPLOYMENTS}/swap"
    _, first = call(apiserver, "DELETE", path, {"propagationPolicy": "Orphan"})
    assert first["metadata"]["finalizers"] == ["x.io/keep", "orphan"]
    _, second = call(apiserver, "DELETE", path, {"propagationPolicy": "Foreground"})
    assert second["metadata"]["finalizers"] == ["x.io/keep", "foregroundDeletion"]
    assert second["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]
    # With no policy, the finalizer already there decides: still foreground.
    _, third = call(apiserver, "DELETE", path)
    assert third["metadata"]["finalizers"] == ["x.io/keep", "foregroundDeletion"]
    # Background takes the GC finalizer away; the other one keeps the object, and
    # orphanDependents=false on an object that stays is answered 202 Accepted.
    code, fourth = call(apiserver, "DELETE", path, {"orphanDependents": False})
    assert (code, fourth["metadata"]["finalizers"]) == (202, ["x.io/keep"])
    call(apiserver, "PATCH", path, {"metadata": {"finalizers": []}}, MERGE)
    assert call(apiserver, "GET", path)[0] == 404


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"propagationPolicy": "Later"},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
            '"Later": supported values: "Foreground", "Background", "Orphan", "nil"',
            id="unknown-policy",
        ),
        pytest.param(
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: '
            '"Orphan": orphanDependents and deletionPropagation cannot be both set',
            id="both-ways-at-once",
        ),
    ],
)
def test_bad_delete_options_are_refused(apiserver, options, message):
    path = _deployment(apiserver, f"bad-{len(str(options))}")
    code, body = call(apiserver, "DELETE", path, options)
    assert (code, body["reason"], body["message"]) == (422, "Invalid", message)
    assert call(apiserver, "GET", path)[0] == 200


def test_policy_in_the_query_and_on_a_collection(apiserver):
    for name in ("coll-a", "coll-b"):
        body = deployment(name).obj()
        body["metadata"]["labels"] = {"set": "coll"}
        assert call(apiserver, "POST", DEPLOYMENTS, body)[0] == 201
    code, listed = call(
        apiserver, "DELETE", f"{DEPLOYMENTS}?labelSelector=set%3Dcoll&propagationPolicy=Orphan"
    )
    assert code == 200, listed
    assert [i["metadata"]["finalizers"] for i in listed["items"]] == [["orphan"], ["orphan"]]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
@pytest.mark.parametrize(
    ("cascade", "finalizers"),
    [
        pytest.param("orphan", "orphan", id="orphan"),
        pytest.param("foreground", "foregroundDeletion", id="foreground"),
    ],
)
def test_kubectl_delete_cascade(apiserver, cascade, finalizers):
    path = _deployment(apiserver, f"cascade-{cascade}")
    result = subprocess.run(
        [
            KUBECTL,
            "--kubeconfig",
            str(apiserver.kubeconfig_path),
            "delete",
            f"deployment/cascade-{cascade}",
            f"--cascade={cascade}",
            "--wait=false",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    _, got = call(apiserver, "GET", path)
    assert got["metadata"]["finalizers"] == [finalizers]


def test_deleting_a_job_without_a_policy_warns_that_its_pods_stay(apiserver):
    for name, options in (("warned", b""), ("quiet", b'{"propagationPolicy":"Orphan"}')):
        code, _ = call(apiserver, "POST", JOBS, job(name).obj())
        assert code == 201
        request = urllib.request.Request(
            f"{apiserver.url}{JOBS}/{name}", data=options or None, method="DELETE"
        )
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as response:
            warnings = response.headers.get_all("Warning") or []
        if name == "warned":
            assert warnings == [
                '299 - "child pods are preserved by default when jobs are deleted; set '
                "propagationPolicy=Background to remove them or set propagationPolicy=Orphan "
                'to suppress this warning"'
            ]
        else:
            assert warnings == []
