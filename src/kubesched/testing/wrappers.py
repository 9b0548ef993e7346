"""Fluent builders for Pods and Nodes, in the manner of upstream's
``pkg/scheduler/testing/wrappers.go``: build the Kubernetes JSON, decode it with the
same code as real objects, so tests exercise the decoder too.

    pod = make_pod("web").namespace("prod").req(cpu="500m", memory="1Gi").label("app", "web").obj()
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").label("zone", "a").obj()
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

#: The image of containers built without one: kube-apiserver (and so the simulator's
#: loaders) refuses a container with no image.
DEFAULT_IMAGE = "pause"


class PodWrapper:
    """Builds a v1.Pod dict step by step; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"containers": []},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.raw["spec"]
        return spec

    @property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.raw["metadata"]
        return meta

    def namespace(self, ns: str) -> PodWrapper:
        self._meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._meta["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: dict[str, str]) -> PodWrapper:
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def creation_timestamp(self, ts: str) -> PodWrapper:
        self._meta["creationTimestamp"] = ts
        return self

    def pod_group(self, name: str) -> PodWrapper:
        """Make the pod a member of PodGroup ``name`` (its scheduling.x-k8s.io label)."""
        return self.label("scheduling.x-k8s.io/pod-group", name)

    def terminating(self) -> PodWrapper:
        self._meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def node(self, name: str) -> PodWrapper:
        self._spec["nodeName"] = name
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self._spec["schedulerName"] = name
        return self

    def priority(self, value: int) -> PodWrapper:
        self._spec["priority"] = value
        return self

    def priority_class_name(self, name: str) -> PodWrapper:
        self._spec["priorityClassName"] = name
        return self

    def preemption_policy(self, policy: str) -> PodWrapper:
        self._spec["preemptionPolicy"] = policy
        return self

    def phase(self, phase: str) -> PodWrapper:
        self.raw.setdefault("status", {})["phase"] = phase
        return self

    def nominated_node_name(self, name: str) -> PodWrapper:
        self.raw.setdefault("status", {})["nominatedNodeName"] = name
        return self

    def container(
        self,
        image: str = DEFAULT_IMAGE,
        *,
        requests: dict[str, Any] | None = None,
        limits: dict[str, Any] | None = None,
        ports: list[dict[str, Any]] | None = None,
        name: str | None = None,
    ) -> PodWrapper:
        """Add a container (name defaults to ``c<i>``, image to :data:`DEFAULT_IMAGE`)."""
        containers = self._spec["containers"]
        c: dict[str, Any] = {"name": name or f"c{len(containers)}"}
        if image:
            c["image"] = image
        resources: dict[str, Any] = {}
        if requests:
            resources["requests"] = dict(requests)
        if limits:
            resources["limits"] = dict(limits)
        if resources:
            c["resources"] = resources
        if ports:
            c["ports"] = [dict(p) for p in ports]
        containers.append(c)
        return self

    def resource_claim(
        self, name: str, *, template: str | None = None, claim: str | None = None
    ) -> PodWrapper:
        """Add a ``spec.resourceClaims`` entry (from a template or naming a claim) and
        list it in the first container's ``resources.claims`` (one is added if none)."""
        entry: dict[str, Any] = {"name": name}
        if template is not None:
            entry["resourceClaimTemplateName"] = template
        if claim is not None:
            entry["resourceClaimName"] = claim
        self._spec.setdefault("resourceClaims", []).append(entry)
        if not self._spec["containers"]:
            self.container()
        resources = self._spec["containers"][0].setdefault("resources", {})
        resources.setdefault("claims", []).append({"name": name})
        return self

    def claim_status(self, name: str, claim: str | None) -> PodWrapper:
        """A ``status.resourceClaimStatuses`` entry (what the claim controller writes)."""
        entry: dict[str, Any] = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        self.raw.setdefault("status", {}).setdefault("resourceClaimStatuses", []).append(entry)
        return self

    def req(self, **resources: Any) -> PodWrapper:
        """Add a container requesting ``resources`` (``cpu="1", memory="1Gi"``; use
        ``**{"nvidia.com/gpu": 1}`` for names that are not identifiers)."""
        return self.container(requests=resources)

    def init_req(self, restartable: bool = False, **resources: Any) -> PodWrapper:
        """Add an init container (a sidecar when ``restartable``) requesting ``resources``."""
        inits = self._spec.setdefault("initContainers", [])
        c: dict[str, Any] = {
            "name": f"init{len(inits)}",
            "image": DEFAULT_IMAGE,
            "resources": {"requests": resources},
        }
        if restartable:
            c["restartPolicy"] = "Always"
        inits.append(c)
        return self

    def overhead(self, **resources: Any) -> PodWrapper:
        self._spec["overhead"] = resources
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def node_selector(self, selector: dict[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def _affinity(self, kind: str) -> dict[str, Any]:
        aff: dict[str, Any] = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        return aff

    def node_affinity_in(self, key: str, values: list[str]) -> PodWrapper:
        """Add a required node affinity term ``key In values``."""
        return self.node_affinity_term([{"key": key, "operator": "In", "values": values}])

    def node_affinity_term(
        self, expressions: list[dict[str, Any]], fields: list[dict[str, Any]] | None = None
    ) -> PodWrapper:
        """Add a required node-selector term (ORed with others)."""
        req = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        req["nodeSelectorTerms"].append(term)
        return self

    def preferred_node_affinity(self, weight: int, expressions: list[dict[str, Any]]) -> PodWrapper:
        prefs = self._affinity("nodeAffinity").setdefault(
            "preferredDuringSchedulingIgnoredDuringExecution", []
        )
        prefs.append({"weight": weight, "preference": {"matchExpressions": expressions}})
        return self

    def _pod_term(
        self,
        kind: str,
        topology_key: str,
        selector: dict[str, Any] | None,
        namespaces: list[str] | None,
        namespace_selector: dict[str, Any] | None,
        weight: int | None,
    ) -> PodWrapper:
        term: dict[str, Any] = {"topologyKey": topology_key}
        if selector is not None:
            term["labelSelector"] = selector
        if namespaces:
            term["namespaces"] = namespaces
        if namespace_selector is not None:
            term["namespaceSelector"] = namespace_selector
        aff = self._affinity(kind)
        if weight is None:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def pod_affinity(
        self,
        topology_key: str,
        selector: dict[str, Any] | None,
        *,
        weight: int | None = None,
        namespaces: list[str] | None = None,
        namespace_selector: dict[str, Any] | None = None,
    ) -> PodWrapper:
        """Add a pod affinity term (required, or preferred when ``weight`` is given).
        ``selector`` is a metav1.LabelSelector dict, e.g. ``{"matchLabels": {"app": "db"}}``."""
        return self._pod_term(
            "podAffinity", topology_key, selector, namespaces, namespace_selector, weight
        )

    def pod_anti_affinity(
        self,
        topology_key: str,
        selector: dict[str, Any] | None,
        *,
        weight: int | None = None,
        namespaces: list[str] | None = None,
        namespace_selector: dict[str, Any] | None = None,
    ) -> PodWrapper:
        """Add a pod anti-affinity term (required, or preferred when ``weight`` is given)."""
        return self._pod_term(
            "podAntiAffinity", topology_key, selector, namespaces, namespace_selector, weight
        )

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str = "DoNotSchedule",
        selector: dict[str, Any] | None = None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodWrapper:
        c: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when_unsatisfiable,
        }
        if selector is not None:
            c["labelSelector"] = selector
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = match_label_keys
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = ""
    ) -> PodWrapper:
        t: dict[str, Any] = {}
        for k, v in (("key", key), ("value", value), ("effect", effect), ("operator", operator)):
            if v:
                t[k] = v
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def scheduling_gates(self, *names: str) -> PodWrapper:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def image(self, image: str) -> PodWrapper:
        return self.container(image)

    def volume(self, volume: dict[str, Any]) -> PodWrapper:
        """Add a v1.Volume as written: ``{"name": "v", "secret": {"secretName": "s"}}``."""
        self._spec.setdefault("volumes", []).append(copy.deepcopy(volume))
        return self

    def pvc(self, claim: str, name: str = "", read_only: bool = False) -> PodWrapper:
        """Add a volume (named ``name``, default the claim's) using claim ``claim``."""
        source: dict[str, Any] = {"claimName": claim}
        if read_only:
            source["readOnly"] = True
        return self.volume({"name": name or claim, "persistentVolumeClaim": source})

    def ephemeral(self, name: str, storage_class: str | None = None) -> PodWrapper:
        """Add a generic ephemeral volume ``name`` (its claim is ``<pod>-<name>``)."""
        spec: dict[str, Any] = {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        }
        if storage_class is not None:
            spec["storageClassName"] = storage_class
        return self.volume({"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": spec}}})

    def dict(self) -> dict[str, Any]:
        """The Kubernetes JSON built so far (a copy)."""
        return copy.deepcopy(self.raw)

    def obj(self) -> Pod:
        """The decoded Pod."""
        return Pod.from_dict(self.raw)


class NodeWrapper:
    """Builds a v1.Node dict step by step; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": name,
                "labels": {"kubernetes.io/hostname": name},
            },
            "spec": {},
            "status": {},
        }

    def label(self, key: str, value: str) -> NodeWrapper:
        self.raw["metadata"]["labels"][key] = value
        return self

    def labels(self, labels: dict[str, str]) -> NodeWrapper:
        self.raw["metadata"]["labels"].update(labels)
        return self

    def capacity(self, **resources: Any) -> NodeWrapper:
        """Set capacity (and, unless set separately, allocatable) — ``cpu="4", pods=110``."""
        self.raw["status"]["capacity"] = {k: str(v) for k, v in resources.items()}
        return self

    def allocatable(self, **resources: Any) -> NodeWrapper:
        self.raw["status"]["allocatable"] = {k: str(v) for k, v in resources.items()}
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeWrapper:
        t: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self.raw["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, value: bool = True) -> NodeWrapper:
        self.raw["spec"]["unschedulable"] = value
        return self

    def image(self, names: list[str], size_bytes: int) -> NodeWrapper:
        self.raw["status"].setdefault("images", []).append(
            {"names": names, "sizeBytes": size_bytes}
        )
        return self

    def dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)

    def obj(self) -> Node:
        return Node.from_dict(self.raw)


def make_pod(name: str = "p") -> PodWrapper:
    """Start building a pod named ``name`` in namespace ``default``."""
    return PodWrapper(name)


def make_node(name: str = "n") -> NodeWrapper:
    """Start building a node named ``name`` (labelled with its hostname)."""
    return NodeWrapper(name)
