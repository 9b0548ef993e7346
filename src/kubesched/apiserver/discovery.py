"""Discovery documents: ``/version``, ``/api``, ``/apis``, and resource lists per group/version.

This is the legacy (unaggregated) discovery that every client falls back to: kubectl and
the ``kubernetes`` client find resources, scopes, kinds, verbs and short names here. It is
computed from the store's resources on every request, so custom resources appear and go
with their CRDs. Groups are in the aggregator's order (``GroupPriorityMinimum``, then
name: clients resolve an ambiguous short name to the first group), a group's versions in
upstream's priority order (GA, beta, alpha, newest first:
``version.CompareKubeAwareVersionStrings``); the first is preferred.
"""

from __future__ import annotations

import re
from typing import Any

from kubesched.apiserver.resources import Resource

#: The Kubernetes minor version whose API this server follows (release-1.34).
KUBERNETES_MINOR = "34"
#: The version ``/version``, OpenAPI and the simulated kubelets report.
KUBERNETES_VERSION = f"v1.{KUBERNETES_MINOR}.0-kubesched"


def version_info() -> dict[str, str]:
    """The ``/version`` body."""
    return {
        "major": "1",
        "minor": KUBERNETES_MINOR,
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "python",
        "compiler": "kubesched",
        "platform": "linux/amd64",
    }


def core_versions(server_address: str) -> dict[str, Any]:
    """The ``/api`` body (APIVersions)."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """A sort key putting versions in kube-aware priority order: v2, v1, v1beta2,
    v1beta1, v1alpha1, then versions that do not look like Kubernetes versions by name."""
    match = _KUBE_VERSION.fullmatch(version)
    if match is None:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, "")


#: kube-apiserver's ``GroupPriorityMinimum`` of its built-in groups (the APIServices the
#: aggregator registers for them); a CRD's group gets 1000.
GROUP_PRIORITIES = {
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "resource.k8s.io": 16200,
}
CRD_GROUP_PRIORITY = 1000


def groups(resources: tuple[Resource, ...]) -> dict[str, list[str]]:
    """Named groups (not core) and their served versions, in priority order.

    Groups go as the aggregator lists them: higher ``GroupPriorityMinimum`` first, then
    by name; versions by kube-aware priority (upstream orders a built-in group's versions
    by their ``VersionPriority``, which agrees for the versions served here).
    """
    found: dict[str, list[str]] = {}
    for r in resources:
        if r.group and r.served and r.version not in found.setdefault(r.group, []):
            found[r.group].append(r.version)
    ordered = sorted(found, key=lambda g: (-GROUP_PRIORITIES.get(g, CRD_GROUP_PRIORITY), g))
    return {g: sorted(found[g], key=version_priority) for g in ordered if found[g]}


def group_list(resources: tuple[Resource, ...]) -> dict[str, Any]:
    """The ``/apis`` body (APIGroupList)."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, vs) for g, vs in groups(resources).items()],
    }


def group(resources: tuple[Resource, ...], name: str) -> dict[str, Any] | None:
    """The ``/apis/<group>`` body (APIGroup), or None for an unknown group."""
    versions = groups(resources).get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


#: What each subresource is in discovery: (kind, group, version, verbs); None for the
#: kind, group or version means the parent resource's. ``group`` and ``version`` are
#: only listed when the subresource serves another group's kind, as upstream's
#: ``GroupVersionKindProvider`` storages (the scale subresource's autoscaling/v1 Scale).
_SUBRESOURCES: dict[str, tuple[str | None, str | None, str | None, tuple[str, ...]]] = {
    "status": (None, None, None, ("get", "patch", "update")),
    "binding": ("Binding", None, None, ("create",)),
    # As kube-apiserver lists it; `kubectl drain` looks for exactly this.
    "eviction": ("Eviction", "policy", "v1", ("create",)),
    "scale": ("Scale", "autoscaling", "v1", ("get", "patch", "update")),
}


def _subresource_entry(r: Resource, sub: str) -> dict[str, Any]:
    kind, group_name, version, verbs = _SUBRESOURCES.get(sub, (None, None, None, ("get",)))
    entry: dict[str, Any] = {
        "name": f"{r.plural}/{sub}",
        "singularName": "",
        "namespaced": r.namespaced,
    }
    if group_name is not None and version is not None:
        entry.update(group=group_name, version=version)
    entry.update(kind=kind or r.kind, verbs=list(verbs))
    return entry


def resource_list(
    resources: tuple[Resource, ...], group_name: str, version: str
) -> dict[str, Any] | None:
    """The ``/api/v1`` or ``/apis/<group>/<version>`` body (APIResourceList), or None."""
    served = [r for r in resources if r.group == group_name and r.version == version and r.served]
    if not served:
        return None
    entries: list[dict[str, Any]] = []
    for r in served:
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entries.append(entry)
        entries.extend(_subresource_entry(r, sub) for sub in r.subresources)
    group_version = f"{group_name}/{version}" if group_name else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }
