"""The managed-cluster recipe (deploy/overlays/managed-cluster): a second stock
kube-scheduler beside the control plane's, pointed at the kubesched extender.

Checked on the rendered manifests: the scheduler's own name, Lease and RBAC; the
extender reached at its Service, ignorable, with node names only because the extender
keeps its cache with cluster access; and the extender's role granting exactly what its
cache reads (taken from the code)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config.load import loads_config
from kubesched.extender.cache import ClusterCache
from kubesched.kube import Client, ConnectionConfig

OVERLAY = Path(__file__).resolve().parents[2] / "deploy" / "overlays" / "managed-cluster"


def render(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: cannot render the kustomize overlays")
    out = subprocess.run(
        [kubectl, "kustomize", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def objects() -> list[dict[str, Any]]:
    return render(OVERLAY)


def one(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def scheduler_config(objs: list[dict[str, Any]]) -> Any:
    deployment = one(objs, "Deployment", "kube-scheduler-extender")
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    (name,) = [v["configMap"]["name"] for v in volumes if "configMap" in v]
    return loads_config(one(objs, "ConfigMap", name)["data"]["config.yaml"])


def test_second_scheduler_has_its_own_name_lease_and_stock_image() -> None:
    objs = objects()
    config = scheduler_config(objs)
    assert [p.scheduler_name for p in config.profiles] == ["kubesched-extender"]
    election = config.leader_election
    assert election.leader_elect
    # Never the control plane's lock (kube-system/kube-scheduler).
    assert (election.resource_namespace, election.resource_name) != (
        "kube-system",
        "kube-scheduler",
    )
    role = one(objs, "Role", "kube-scheduler-extender-leader-election")
    assert role["metadata"]["namespace"] == election.resource_namespace
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert [r["resourceNames"] for r in named] == [[election.resource_name]]
    pod = one(objs, "Deployment", "kube-scheduler-extender")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"].startswith("registry.k8s.io/kube-scheduler:v1.34.")
    assert container["command"][0] == "kube-scheduler"


def test_second_scheduler_is_bound_to_the_stock_scheduler_roles() -> None:
    objs = objects()
    account = one(objs, "Deployment", "kube-scheduler-extender")["spec"]["template"]["spec"][
        "serviceAccountName"
    ]
    subject = {"kind": "ServiceAccount", "name": account, "namespace": "kubesched"}
    bound = {
        (o["kind"], o["roleRef"]["name"], o["metadata"].get("namespace", ""))
        for o in objs
        if o["kind"] in ("ClusterRoleBinding", "RoleBinding") and subject in o["subjects"]
    }
    assert bound == {
        ("ClusterRoleBinding", "system:kube-scheduler", ""),
        ("ClusterRoleBinding", "system:volume-scheduler", ""),
        ("RoleBinding", "extension-apiserver-authentication-reader", "kube-system"),
        ("RoleBinding", "kube-scheduler-extender-leader-election", "kubesched"),
    }


def test_extender_is_called_at_its_service_ignorable_with_node_names() -> None:
    objs = objects()
    (extender,) = scheduler_config(objs).extenders
    service = one(objs, "Service", "kubesched-extender")
    (port,) = service["spec"]["ports"]
    namespace = service["metadata"]["namespace"]
    assert (
        extender.url_prefix
        == f"http://{service['metadata']['name']}.{namespace}.svc:{port['port']}"
    )
    assert extender.ignorable
    assert (extender.filter_verb, extender.prioritize_verb) == ("filter", "prioritize")
    # nodeCacheCapable needs an extender with a cache: --in-cluster, the token, /readyz.
    assert extender.node_cache_capable
    pod = one(objs, "Deployment", "kubesched-extender")["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True
    (container,) = pod["containers"]
    assert "--in-cluster" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # The extender serves the profile the scheduler's pods name.
    served = pod["volumes"][0]["configMap"]["name"]
    profile = loads_config(one(objs, "ConfigMap", served)["data"]["config.yaml"]).profiles[0]
    assert profile.scheduler_name == "kubesched-extender"


def test_extender_role_grants_exactly_what_its_cache_reads() -> None:
    cache = ClusterCache(Client(ConnectionConfig(server="http://unused")))
    read = {
        (i.resource.group, i.resource.plural, verb)
        for i in cache.informers
        for verb in ("list", "watch")
    }
    objs = objects()
    role = one(objs, "ClusterRole", "kubesched-extender")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted == read
    binding = one(objs, "ClusterRoleBinding", "kubesched-extender")
    account = one(objs, "Deployment", "kubesched-extender")["spec"]["template"]["spec"][
        "serviceAccountName"
    ]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": "kubesched"}
    ]
