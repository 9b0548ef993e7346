"""The scheduler's RBAC rules are exactly the API calls it makes.

A Scheduler, configured with the overlay's own KubeSchedulerConfiguration, runs against
the embedded API server through a client that logs every request; the scenario binds a
pod, reports an unschedulable one, preempts a victim and renews its Lease. The logged
(API group, resource, verb) triples must equal what the rendered ClusterRole and Role
grant: every call granted, nothing granted that was never called.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import shutil
import subprocess
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.apiserver.runner import start_apiserver
from kubesched.config.load import loads_config
from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import (
    DEVICE_CLASSES,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    STORAGE_CLASSES,
)
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.dra import make_claim, make_device_class, make_slice

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SCHEDULER_OVERLAYS = ["beside-kube-scheduler", "only-scheduler"]

Call = tuple[str, str, str]  # (API group, resource[/subresource], verb)


def render(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: cannot render the kustomize overlays")
    out = subprocess.run(
        [kubectl, "kustomize", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def classify(method: str, path: str, watch: bool = False) -> tuple[Call, str, str]:
    """``GET /apis/apps/v1/namespaces/ns/replicasets`` is (apps, replicasets, list), and
    the namespace and name it names."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    resource, name = rest[0], rest[1] if len(rest) > 1 else ""
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    verbs = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
    if watch:
        verb = "watch"
    elif method == "GET":
        verb = "get" if name else "list"
    else:
        verb = verbs[method]
    return (group, resource, verb), namespace, name


class RecordingClient(Client):
    """A Client that logs every request: (call, namespace, name). The clients derived
    from it (the scheduler's events and leader election) log into the same list."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[Call, str, str]] = []
        #: Collections whose list the server answered 404: it does not serve them (yet),
        #: so their informer lists again later and never gets to watch.
        self.unserved: set[Call] = set()

    def derive(self, user_agent: str = "", timeout: float | None = None) -> Client:
        plain = super().derive(user_agent, timeout)
        derived = RecordingClient(
            plain.config,
            qps=plain.limiter.qps,
            burst=plain.limiter.burst,
            timeout=plain.timeout,
            user_agent=plain.user_agent,
            max_retries=plain.max_retries,
        )
        derived.calls = self.calls
        derived.unserved = self.unserved
        return derived

    async def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        body: object = None,
        content_type: str = "application/json",
    ) -> Any:
        call = classify(method, path)
        self.calls.append(call)
        try:
            return await super().request(method, path, params, body, content_type)
        except NotFound:
            if call[0][2] == "list":
                self.unserved.add((call[0][0], call[0][1], "watch"))
            raise

    async def watch_stream(
        self, resource: Any, namespace: str | None = None, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.calls.append(classify("GET", resource.path(namespace), watch=True))
        stream = super().watch_stream(resource, namespace, *args, **kwargs)
        async for event in stream:
            yield event


def granted(objects: list[dict[str, Any]]) -> tuple[set[Call], dict[Call, set[str]], str]:
    """What the ClusterRole and the Role grant; the names each named rule allows; the
    Role's namespace."""
    calls: set[Call] = set()
    names: dict[Call, set[str]] = {}
    namespace = ""
    for obj in objects:
        if obj["kind"] not in ("ClusterRole", "Role"):
            continue
        if obj["kind"] == "Role":
            namespace = obj["metadata"]["namespace"]
        for rule in obj["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        call = (group, resource, verb)
                        calls.add(call)
                        if rule.get("resourceNames"):
                            names.setdefault(call, set()).update(rule["resourceNames"])
    return calls, names, namespace


def pod(name: str, cpu: str, priority_class: str = "", scheduler: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


async def until(check: Callable[[], Any], what: str, timeout: float = 8.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def scenario(kubeconfig: Path, config_text: str, lock_namespace: str) -> RecordingClient:
    config = loads_config(config_text)
    # The same lock, renewed fast enough for the test to see renewals.
    election = dataclasses.replace(
        config.leader_election,
        lease_duration_seconds=2.0,
        renew_deadline_seconds=1.0,
        retry_period_seconds=0.1,
    )
    config = dataclasses.replace(config, leader_election=election)
    name = config.profiles[0].scheduler_name
    connection = load_kubeconfig([kubeconfig])
    client = RecordingClient(connection, qps=1000, burst=1000)
    async with Client(connection, qps=1000, burst=1000) as setup, client:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": lock_namespace}}
        await setup.create(NAMESPACES.raw, namespace)
        for pc_name, value in (("low", 10), ("high", 1000)):
            pc = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": pc_name},
                "value": value,
            }
            await setup.create(PRIORITY_CLASSES.raw, pc)
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "only", "labels": {"kubernetes.io/hostname": "only"}},
            "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
        }
        await setup.create(NODES.raw, node)
        scheduler = Scheduler(config, in_tree_registry(), client, rng=random.Random(0))
        task = asyncio.create_task(scheduler.run())

        async def node_of(pod_name: str) -> str:
            try:
                raw = await setup.get(PODS.raw, pod_name, "default")
            except NotFound:
                return "gone"
            return str(raw["spec"].get("nodeName", ""))

        try:
            await setup.create(PODS.raw, pod("victim", "2", "low", name))
            await until(lambda: node_of("victim"), "the victim bound")
            await setup.create(PODS.raw, pod("too-big", "8", "low", name))
            await setup.create(PODS.raw, pod("preemptor", "2", "high", name))
            assert await until(lambda: node_of("preemptor"), "the preemptor bound") == "only"
            # The too-big pod fails again, with the same message, whenever it is retried
            # (retried now rather than after its backoff): the repeat turns its
            # FailedScheduling event into a series, which is a patch.
            series = ("events.k8s.io", "events", "patch")
            too_big = Pod(namespace="default", name="too-big")

            def retried_into_a_series() -> bool:
                scheduler.queue.activate([too_big])
                return any(c[0] == series for c in client.calls)

            await until(retried_into_a_series, "an event series")
            await bind_volumes(setup, name, node_of)
            # A pod with a ResourceClaim: DynamicResources' PreBind reads the claim,
            # adds its finalizer and writes the allocation and the reservation.
            await setup.create(DEVICE_CLASSES.raw, make_device_class("gpu").obj())
            gpus = make_slice("only-gpus", "gpu.example.com").node("only").pool("only")
            await setup.create(RESOURCE_SLICES.raw, gpus.device("gpu-0").obj())
            claim = make_claim("gpu", "default").request("gpu", "gpu").obj()
            await setup.create(RESOURCE_CLAIMS.raw, claim)
            with_gpu = pod("with-gpu", "0", "low", name)
            with_gpu["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu"}]
            with_gpu["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
            await setup.create(PODS.raw, with_gpu)
            assert await until(lambda: node_of("with-gpu"), "the pod with a claim bound") == "only"
            renewal = ("coordination.k8s.io", "leases", "update")
            await until(lambda: any(c[0] == renewal for c in client.calls), "a lease renewal")
        finally:
            scheduler.stop()
            await task
        return client


async def bind_volumes(setup: Client, scheduler_name: str, node_of: Callable[[str], Any]) -> None:
    """VolumeBinding's PreBind: a pod whose claim takes an existing volume (the volume's
    claimRef is written) and one whose claim is provisioned (the claim's selected node is
    written). The test does what the PV controller and a provisioner would."""
    wait_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "wait"},
        "provisioner": "example.com/disk",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    await setup.create(STORAGE_CLASSES.raw, wait_class)
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "local"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "wait",
            "hostPath": {"path": "/tmp/local"},
        },
    }
    await setup.create(PERSISTENT_VOLUMES.raw, volume)
    await setup.patch(
        PERSISTENT_VOLUMES.raw, "local", {"status": {"phase": "Available"}}, subresource="status"
    )
    for claim in ("static", "dynamic"):
        body = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": "default"},
            "spec": {
                "storageClassName": "wait",
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi" if claim == "static" else "2Gi"}},
            },
        }
        await setup.create(PERSISTENT_VOLUME_CLAIMS.raw, body)
        pod_body = pod(f"with-{claim}", "0", "high", scheduler_name)
        pod_body["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": claim}}
        ]
        await setup.create(PODS.raw, pod_body)

    async def claim_ref() -> Any:
        raw = await setup.get(PERSISTENT_VOLUMES.raw, "local")
        return raw["spec"].get("claimRef")

    async def selected() -> Any:
        raw = await setup.get(PERSISTENT_VOLUME_CLAIMS.raw, "dynamic", "default")
        annotations = raw["metadata"].get("annotations") or {}
        return annotations.get("volume.kubernetes.io/selected-node")

    await until(claim_ref, "the static volume's claimRef")
    await complete(setup, "static", "local")
    await until(selected, "the provisioned claim's selected node")
    volume["metadata"]["name"] = "provisioned"
    volume["spec"]["hostPath"] = {"path": "/tmp/provisioned"}
    await setup.create(PERSISTENT_VOLUMES.raw, volume)
    await complete(setup, "dynamic", "provisioned")
    for claim in ("static", "dynamic"):
        assert await until(lambda c=claim: node_of(f"with-{c}"), f"{claim} bound") == "only"


async def complete(setup: Client, claim: str, volume: str) -> None:
    """The PV controller's last step: the claim names its volume, binding completed."""
    raw = await setup.get(PERSISTENT_VOLUME_CLAIMS.raw, claim, "default")
    raw["spec"]["volumeName"] = volume
    annotations = raw["metadata"].setdefault("annotations", {})
    annotations["pv.kubernetes.io/bind-completed"] = "yes"
    await setup.update(PERSISTENT_VOLUME_CLAIMS.raw, raw)


@pytest.mark.parametrize("overlay", SCHEDULER_OVERLAYS)
def test_the_rbac_rules_are_exactly_the_calls_the_scheduler_makes(
    overlay: str, tmp_path: Path
) -> None:
    objects = render(DEPLOY / "overlays" / overlay)
    rules, names, role_namespace = granted(objects)
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    config_text = config_map["data"]["config.yaml"]
    election = loads_config(config_text).leader_election

    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    try:
        client = asyncio.run(
            scenario(handle.kubeconfig_path, config_text, election.resource_namespace)
        )
    finally:
        handle.stop()

    used = {call for call, _, _ in client.calls}
    # An informer watches what it lists; one whose collection this server does not serve
    # is granted its watch all the same (a real cluster serves every collection read).
    used |= client.unserved
    assert used - rules == set(), "called but not granted"
    assert rules - used == set(), "granted but never called"
    # The Lease: only in the Role's namespace, and only the named one where a name is given.
    for call, namespace, name in client.calls:
        if call[1] == "leases":
            assert namespace == role_namespace == election.resource_namespace
            if call in names:
                assert name in names[call]


# The calls the scenario above makes, by the client method that makes them. A new call
# site of another method (or an informer on another resource) fails the static scan below:
# extend the scenario and the rules together.
SCENARIO_METHODS = {
    "bind",
    "delete",
    # Events (scheduler/events.py): created, and patched into series.
    "create",
    "patch",
    # The core/v1 fallback of clusterclient.delete_pod (not taken by the Scheduler).
    "create_event",
    "patch_pod_status",
    "get_lease",
    "create_lease",
    "update_lease",
    # The framework handle's ClusterClient (scheduler/clusterclient.py), over the above.
    "delete_pod",
    "set_nominated_node_name",
}
SCENARIO_INFORMERS = {
    "PODS",
    "NODES",
    "NAMESPACES",
    "POD_DISRUPTION_BUDGETS",
    "SERVICES",
    "REPLICATION_CONTROLLERS",
    "REPLICA_SETS",
    "STATEFUL_SETS",
    # The volume plugins' listers (kube/storagelisters.py).
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "STORAGE_CLASSES",
    "CSI_NODES",
    "CSI_DRIVERS",
    "CSI_STORAGE_CAPACITIES",
    "VOLUME_ATTACHMENTS",
    # DynamicResources' listers (kube/dralisters.py).
    "RESOURCE_CLAIMS",
    "RESOURCE_SLICES",
    "DEVICE_CLASSES",
    # Gang and quota scheduling's listers (kube/schedulinglisters.py).
    "POD_GROUPS",
    "ELASTIC_QUOTAS",
}
#: Client methods that make no API call.
NOT_API_CALLS = {"derive", "close"}
#: ``submit(what, call)`` runs a plugin's calls of the methods below off the loop.
NOT_API_CALLS |= {"submit"}
#: The handle's blocking API calls by resource (scheduler/clusterclient.py), which only
#: PreBind plugins make, on the resources they name: VolumeBinding's and DynamicResources',
#: in the scenario.
PLUGIN_CALL_METHODS = {"get", "update", "update_status"}
SCHEDULER_CODE = ["scheduler", "framework", "plugins"]
#: Modules outside those folders whose informers the scheduler runs.
SCHEDULER_MODULES = [
    "kube/storagelisters.py",
    "kube/dralisters.py",
    "kube/schedulinglisters.py",
]


def test_every_api_call_site_of_the_scheduler_is_covered_by_the_scenario() -> None:
    import re

    src = Path(__file__).resolve().parents[2] / "src" / "kubesched"
    text = "\n".join(
        path.read_text() for folder in SCHEDULER_CODE for path in (src / folder).rglob("*.py")
    )
    text += "\n".join((src / module).read_text() for module in SCHEDULER_MODULES)
    methods = set(re.findall(r"\bclient\.(\w+)\(", text))
    assert methods and methods <= SCENARIO_METHODS | NOT_API_CALLS | PLUGIN_CALL_METHODS
    informed = set(re.findall(r"Informer\(\s*client, ([A-Z_]+)[,)]", text))
    informed |= set(re.findall(r"^\s+(\w+),?$", _informer_tuple(text), re.M))
    assert informed == SCENARIO_INFORMERS


def _informer_tuple(text: str) -> str:
    """The resources of ``Informer(client, resource) for resource in (A, B, ...)``."""
    import re

    match = re.search(r"Informer\(client, resource\)\s+for resource in \(([^)]*)\)", text)
    return "\n".join(f"    {name.strip()}" for name in match[1].split(",")) if match else ""
