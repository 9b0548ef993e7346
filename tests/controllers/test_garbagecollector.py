"""The garbage collector against the real embedded API server, through the official client.

Owners and dependents are ConfigMaps, pods and Leases (the collector treats every
collection alike). Foreground and orphan deletions are started here as the API server
starts them: the owner carries the ``foregroundDeletion`` or ``orphan`` finalizer when it
is deleted, so it stays, with a deletionTimestamp, until the collector releases it.
"""

from __future__ import annotations

import uuid

import pytest
from controller_helpers import InThread, kubectl, wait_for
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.controllers.garbagecollector import GarbageCollector

NS = "default"


@pytest.fixture(scope="module")
def collector(apiserver):
    runner = InThread(
        apiserver.kubeconfig_path, lambda c: GarbageCollector(c, resync_period=300.0).run()
    ).start()
    yield runner
    runner.stop()


@pytest.fixture(scope="module")
def core(apiserver):
    return client.CoreV1Api(config.new_client_from_config(str(apiserver.kubeconfig_path)))


@pytest.fixture(scope="module")
def coordination(apiserver):
    api = config.new_client_from_config(str(apiserver.kubeconfig_path))
    return client.CoordinationV1Api(api)


def ref(owner, block: bool = False, kind: str = "ConfigMap", api_version: str = "v1") -> dict:
    meta = owner.metadata
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta.name,
        "uid": meta.uid,
        "blockOwnerDeletion": block,
    }


def configmap(core, name: str, owners=(), finalizers=None):
    meta = {"name": name, "ownerReferences": list(owners)}
    if finalizers:
        meta["finalizers"] = finalizers
    return core.create_namespaced_config_map(NS, {"metadata": meta, "data": {"k": "v"}})


def pod(core, name: str, owners=()):
    body = {
        "metadata": {"name": name, "ownerReferences": list(owners)},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    return core.create_namespaced_pod(NS, body)


def exists(read, name: str) -> bool:
    try:
        read(name, NS)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def gone(read, name: str) -> bool:
    return not exists(read, name)


def test_dependents_of_a_deleted_owner_are_deleted(collector, core, coordination):
    owner = configmap(core, "bg-owner")
    configmap(core, "bg-cm", [ref(owner)])
    pod(core, "bg-pod", [ref(owner)])
    lease = {"metadata": {"name": "bg-lease", "ownerReferences": [ref(owner)]}, "spec": {}}
    coordination.create_namespaced_lease(NS, lease)
    core.delete_namespaced_config_map("bg-owner", NS)
    wait_for("the configmap to go", lambda: gone(core.read_namespaced_config_map, "bg-cm"))
    wait_for("the pod to go", lambda: gone(core.read_namespaced_pod, "bg-pod"))
    wait_for("the lease to go", lambda: gone(coordination.read_namespaced_lease, "bg-lease"))


@pytest.mark.parametrize(
    "case",
    ["owner-never-existed", "owner-name-has-another-uid"],
)
def test_dependent_of_an_absent_owner_is_deleted(collector, core, case):
    name = f"absent-{case}"
    if case == "owner-never-existed":
        owner_ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "nobody",
            "uid": str(uuid.uuid4()),
        }
    else:
        other = configmap(core, f"{name}-owner")
        owner_ref = {**ref(other), "uid": str(uuid.uuid4())}
    configmap(core, name, [owner_ref])
    wait_for(f"{name} to go", lambda: gone(core.read_namespaced_config_map, name))
    if case == "owner-name-has-another-uid":
        assert exists(core.read_namespaced_config_map, f"{name}-owner")


def test_a_live_owner_keeps_the_dependent_and_dangling_references_go(collector, core):
    live = configmap(core, "mixed-live")
    dangling = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": str(uuid.uuid4())}
    configmap(core, "mixed-dep", [ref(live), dangling])

    def refs():
        got = core.read_namespaced_config_map("mixed-dep", NS).metadata.owner_references or []
        return [r.uid for r in got]

    wait_for("the dangling reference to go", lambda: refs() == [live.metadata.uid])
    assert exists(core.read_namespaced_config_map, "mixed-dep")


def test_an_owner_of_an_unserved_kind_is_retried_not_fatal(collector, core):
    # A reference to a kind no collection holds cannot be judged: the object stays.
    weird = {
        "apiVersion": "example.com/v1",
        "kind": "Nothing",
        "name": "x",
        "uid": str(uuid.uuid4()),
    }
    configmap(core, "unserved-dep", [weird])
    owner = configmap(core, "after-unserved-owner")
    configmap(core, "after-unserved-dep", [ref(owner)])
    core.delete_namespaced_config_map("after-unserved-owner", NS)
    wait_for(
        "the other dependent to go",
        lambda: gone(core.read_namespaced_config_map, "after-unserved-dep"),
    )
    assert exists(core.read_namespaced_config_map, "unserved-dep")


def test_foreground_deletion_deletes_blocking_dependents_first(collector, core):
    owner = configmap(core, "fg-owner", finalizers=["foregroundDeletion"])
    configmap(core, "fg-dep", [ref(owner, block=True)], finalizers=["example.com/hold"])
    core.delete_namespaced_config_map("fg-owner", NS)

    def dep_deleting():
        return core.read_namespaced_config_map("fg-dep", NS).metadata.deletion_timestamp

    wait_for("the dependent to be deleted", dep_deleting)
    # The dependent still exists (held by its own finalizer): the owner waits for it.
    assert exists(core.read_namespaced_config_map, "fg-owner")
    got = core.read_namespaced_config_map("fg-owner", NS)
    assert got.metadata.finalizers == ["foregroundDeletion"]
    core.patch_namespaced_config_map("fg-dep", NS, {"metadata": {"finalizers": None}})
    wait_for("the owner to go", lambda: gone(core.read_namespaced_config_map, "fg-owner"))


def test_foreground_deletion_goes_down_the_chain(collector, core):
    top = configmap(core, "chain-top", finalizers=["foregroundDeletion"])
    middle = configmap(core, "chain-middle", [ref(top, block=True)])
    configmap(core, "chain-bottom", [ref(middle, block=True)], finalizers=["example.com/hold"])
    core.delete_namespaced_config_map("chain-top", NS)

    def bottom_deleting():
        return core.read_namespaced_config_map("chain-bottom", NS).metadata.deletion_timestamp

    wait_for("the bottom to be deleted", bottom_deleting)
    assert exists(core.read_namespaced_config_map, "chain-top")
    assert exists(core.read_namespaced_config_map, "chain-middle")
    core.patch_namespaced_config_map("chain-bottom", NS, {"metadata": {"finalizers": None}})
    for name in ("chain-bottom", "chain-middle", "chain-top"):
        wait_for(f"{name} to go", lambda name=name: gone(core.read_namespaced_config_map, name))


def test_orphan_deletion_keeps_dependents_without_the_reference(collector, core):
    owner = configmap(core, "orphan-owner", finalizers=["orphan"])
    other = configmap(core, "orphan-other-owner")
    configmap(core, "orphan-dep", [ref(owner), ref(other)])
    pod(core, "orphan-pod", [ref(owner)])
    core.delete_namespaced_config_map("orphan-owner", NS)
    wait_for("the owner to go", lambda: gone(core.read_namespaced_config_map, "orphan-owner"))
    dep = core.read_namespaced_config_map("orphan-dep", NS)
    assert [r.uid for r in dep.metadata.owner_references] == [other.metadata.uid]
    kept = core.read_namespaced_pod("orphan-pod", NS)
    assert kept.metadata.owner_references is None
    assert kept.metadata.deletion_timestamp is None


def test_a_cluster_scoped_object_with_a_namespaced_owner_is_left_alone(collector, core, apiserver):
    scheduling = client.SchedulingV1Api(
        config.new_client_from_config(str(apiserver.kubeconfig_path))
    )
    owner = configmap(core, "ns-owner-of-cluster")
    body = {
        "metadata": {"name": "gc-invalid-owner", "ownerReferences": [ref(owner)]},
        "value": 7,
    }
    scheduling.create_priority_class(body)
    # A dependent the collector does delete, made after: once it is gone, the other one
    # has been looked at too.
    configmap(core, "ns-control", [{**ref(owner), "uid": str(uuid.uuid4())}])
    wait_for(
        "the control dependent to go", lambda: gone(core.read_namespaced_config_map, "ns-control")
    )
    assert scheduling.read_priority_class("gc-invalid-owner").metadata.owner_references


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
def test_kubectl_delete_cascade(collector, core, apiserver, cascade):
    owner = configmap(core, f"kubectl-{cascade}")
    for i in range(2):
        pod(core, f"kubectl-{cascade}-{i}", [ref(owner, block=True)])
    kubectl(
        apiserver.kubeconfig_path,
        "delete",
        "configmap",
        f"kubectl-{cascade}",
        f"--cascade={cascade}",
    )
    wait_for("the owner to go", lambda: gone(core.read_namespaced_config_map, f"kubectl-{cascade}"))
    names = [f"kubectl-{cascade}-{i}" for i in range(2)]
    if cascade == "orphan":
        for name in names:
            kept = core.read_namespaced_pod(name, NS)
            assert kept.metadata.owner_references is None
            assert kept.metadata.deletion_timestamp is None
    else:
        for name in names:
            wait_for(f"{name} to go", lambda name=name: gone(core.read_namespaced_pod, name))


def test_a_custom_resource_owner_found_after_the_collector_started(collector, core, apiserver):
    api = config.new_client_from_config(str(apiserver.kubeconfig_path))
    crd = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    custom = client.CustomObjectsApi(api)

    def created():
        try:
            return custom.create_namespaced_custom_object(
                "example.com",
                "v1",
                NS,
                "widgets",
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}},
            )
        except ApiException as exc:
            if exc.status == 404:  # the CRD's routes are not served yet
                return None
            raise

    widget = wait_for("the custom resource to be created", created)
    owner = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "name": "w1",
        "uid": widget["metadata"]["uid"],
    }
    configmap(core, "owned-by-widget", [owner])
    custom.delete_namespaced_custom_object("example.com", "v1", NS, "widgets", "w1")
    # The collector discovers widgets when a reference names them, not 300 s later.
    wait_for(
        "the widget's dependent to go",
        lambda: gone(core.read_namespaced_config_map, "owned-by-widget"),
    )
