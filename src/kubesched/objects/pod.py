"""The scheduler's view of a Pod: decoded once, holding only what scheduling reads.

Decoding applies what kube-apiserver would have applied before any scheduler saw the pod
(defaulting of namespace, schedulerName, container requests from limits, host ports on the
host network, toleration operators), so a hand-written pod in a file behaves like the
same pod read from a cluster. Priority is resolved separately (``priority.py``), as the
API server's priority admission does, because it needs the PriorityClasses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from kubesched.objects._decode import (
    Raw,
    as_map,
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    get_str_map,
    join,
    nested,
)
from kubesched.objects.affinity import (
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    decode_pod_affinity_terms,
    decode_topology_spread_constraints,
    decode_weighted_pod_affinity_terms,
)
from kubesched.objects.dra.podclaims import (
    ContainerClaim,
    PodResourceClaim,
    decode_container_claims,
    decode_pod_resource_claims,
    decode_resource_claim_statuses,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import QuantityError, parse_quantity_value
from kubesched.objects.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    Resource,
)
from kubesched.objects.selectors import NodeSelector, PreferredSchedulingTerm
from kubesched.objects.storage.sources import Volume, decode_volume
from kubesched.objects.taints import Toleration

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"

QOS_GUARANTEED = "Guaranteed"
QOS_BURSTABLE = "Burstable"
QOS_BEST_EFFORT = "BestEffort"

_TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
_QOS_RESOURCES = (CPU, MEMORY)


@dataclass(frozen=True, slots=True)
class ContainerPort:
    """A port a container asks for on its node (only ``host_port > 0`` takes one)."""

    container_port: int
    host_port: int
    protocol: str
    host_ip: str


@dataclass(frozen=True, slots=True)
class Container:
    """One container, init or regular."""

    name: str
    image: str
    requests: Resource
    ports: tuple[ContainerPort, ...]
    restartable: bool = False  # an init container with restartPolicy Always (a sidecar)
    #: Which of cpu/memory the container sets no request for (scoring defaults apply).
    unset_requests: tuple[str, ...] = ()
    #: ``resources.claims``: the pod claims (and requests of them) the container uses.
    claims: tuple[ContainerClaim, ...] = ()


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod, as the scheduler sees it. Treat it as immutable; derive with ``replace``."""

    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int = 0
    priority_class_name: str = ""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    phase: str = "Pending"
    nominated_node_name: str = ""
    creation_timestamp: str = ""
    deleting: bool = False
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Resource = field(default_factory=Resource)
    #: Effective requests: containers summed, init containers as max, sidecars, overhead.
    requests: Resource = field(default_factory=Resource)
    #: cpu/memory requests with the scoring defaults for containers that set none.
    non_zero_milli_cpu: int = 0
    non_zero_memory: int = 0
    qos_class: str = QOS_BEST_EFFORT
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required_node_affinity: NodeSelector | None = None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...] = ()
    required_affinity: tuple[PodAffinityTerm, ...] = ()
    required_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    host_network: bool = False
    #: spec.volumes (their sources as far as the volume plugins read them).
    volumes: tuple[Volume, ...] = ()
    #: ``spec.resourceClaims``: the ResourceClaims (or templates of them) the pod uses.
    resource_claims: tuple[PodResourceClaim, ...] = ()
    #: ``status.resourceClaimStatuses``: pod claim name → the claim made from its
    #: template (None: none is needed). See :mod:`kubesched.objects.dra.podclaims`.
    resource_claim_statuses: Mapping[str, str | None] = field(default_factory=dict)
    #: spec.priority as written, before admission resolved it (None: not set).
    spec_priority: int | None = None
    #: The PodScheduled condition's (status, reason, message), if the pod has one: the
    #: scheduler writes it only when it changes, as upstream's updatePod. Left out of
    #: equality: it is the scheduler's own record, so a pod whose update changed only
    #: this is the same pod to the queue.
    scheduled_condition: tuple[str, str, str] | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        """``namespace/name``, the pod's identity in messages and maps."""
        return f"{self.namespace}/{self.name}"

    def evolve(self, **changes: Any) -> Pod:
        """A copy with ``changes`` applied: ``dataclasses.replace`` without its cost
        (it re-runs ``__init__`` over some thirty fields; the scheduler copies a pod
        every time it assumes or binds one)."""
        unknown = changes.keys() - _FIELD_SET
        if unknown:
            raise TypeError(f"Pod has no fields {sorted(unknown)}")
        return _copy_pod(self, changes)

    @property
    def is_terminal(self) -> bool:
        """Succeeded and Failed pods hold no resources on their node."""
        return self.phase in _TERMINAL_PHASES

    @property
    def is_assigned(self) -> bool:
        """Bound to a node."""
        return bool(self.node_name)

    @property
    def has_affinity(self) -> bool:
        """Has any pod affinity or anti-affinity (required or preferred)."""
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    @property
    def host_ports(self) -> tuple[ContainerPort, ...]:
        """The host ports the pod takes on its node."""
        # Regular containers and sidecars run for the pod's life; plain init containers
        # are done before the others start, so their ports are not held.
        sidecars = [c for c in self.init_containers if c.restartable]
        return tuple(p for c in (*self.containers, *sidecars) for p in c.ports if p.host_port > 0)

    @property
    def images(self) -> tuple[str, ...]:
        """Images of the regular and init containers."""
        return tuple(c.image for c in (*self.init_containers, *self.containers) if c.image)

    @classmethod
    def from_dict(cls, raw: object) -> Pod:
        """Decode a v1.Pod. Raises ObjectError naming the pod and the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            return _decode_pod(obj, meta, namespace, name)
        except ObjectError as err:
            raise err.located(f"Pod {namespace}/{name}" if name else "Pod") from None


_FIELD_NAMES = tuple(f.name for f in fields(Pod))
_FIELD_SET = frozenset(_FIELD_NAMES)


def _make_copier() -> Callable[[Pod, dict[str, Any]], Pod]:
    # One straight-line function over the fields: about four times faster than a loop
    # of getattr/setattr, which matters at thousands of pods per second.
    lines = ["def copy(pod, changes):", "    new = new_pod(Pod)", "    get = changes.get"]
    lines += [f"    set_(new, {n!r}, get({n!r}, pod.{n}))" for n in _FIELD_NAMES]
    lines.append("    return new")
    scope: dict[str, Any] = {"new_pod": object.__new__, "Pod": Pod, "set_": object.__setattr__}
    exec("\n".join(lines), scope)
    copier: Callable[[Pod, dict[str, Any]], Pod] = scope["copy"]
    return copier


_copy_pod = _make_copier()


def _decode_pod(obj: Raw, meta: Raw, namespace: str, name: str) -> Pod:
    if not name:
        raise ObjectError("metadata.name", "Required value: name is required")
    spec = get_map(obj, "spec", "")
    status = get_map(obj, "status", "")
    labels = get_str_map(meta, "labels", "metadata")
    host_network = get_bool(spec, "hostNetwork", "spec")
    containers = tuple(
        _decode_container(c, join("spec.containers", i), host_network)
        for i, c in enumerate(get_list(spec, "containers", "spec"))
    )
    init_containers = tuple(
        _decode_container(c, join("spec.initContainers", i), host_network)
        for i, c in enumerate(get_list(spec, "initContainers", "spec"))
    )
    overhead = Resource.from_list(get_map(spec, "overhead", "spec"), "spec.overhead")
    pod_level = get_map(get_map(spec, "resources", "spec"), "requests", "spec.resources")
    pod_level_requests = Resource.from_list(pod_level, "spec.resources.requests")
    requests = _effective_requests(containers, init_containers, overhead)
    non_zero = _effective_requests(
        tuple(_with_non_zero_defaults(c) for c in containers),
        tuple(_with_non_zero_defaults(c) for c in init_containers),
        overhead,
    )
    # Pod-level resources (beta, on by default in 1.34) replace the containers' sum for
    # the resources they name; the overhead still comes on top.
    for res in pod_level_requests.names():
        value = pod_level_requests.get(res) + overhead.get(res)
        requests.set(res, value)
        non_zero.set(res, value)

    affinity = get_map(spec, "affinity", "spec")
    node_aff = get_map(affinity, "nodeAffinity", "spec.affinity")
    node_path = "spec.affinity.nodeAffinity"
    required_node = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    pod_aff = get_map(affinity, "podAffinity", "spec.affinity")
    anti_aff = get_map(affinity, "podAntiAffinity", "spec.affinity")
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    aff_path = "spec.affinity.podAffinity"
    anti_path = "spec.affinity.podAntiAffinity"

    spec_priority = get_int(spec, "priority", "spec")
    return Pod(
        namespace=namespace,
        name=name,
        uid=get_str(meta, "uid", "metadata"),
        labels=labels,
        node_name=get_str(spec, "nodeName", "spec"),
        scheduler_name=get_str(spec, "schedulerName", "spec") or DEFAULT_SCHEDULER_NAME,
        priority=spec_priority or 0,
        spec_priority=spec_priority,
        priority_class_name=get_str(spec, "priorityClassName", "spec"),
        preemption_policy=get_str(spec, "preemptionPolicy", "spec") or PREEMPT_LOWER_PRIORITY,
        phase=get_str(status, "phase", "status") or "Pending",
        nominated_node_name=get_str(status, "nominatedNodeName", "status"),
        scheduled_condition=scheduled_condition(status),
        creation_timestamp=get_str(meta, "creationTimestamp", "metadata"),
        deleting=meta.get("deletionTimestamp") is not None,
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        requests=requests,
        non_zero_milli_cpu=non_zero.milli_cpu,
        non_zero_memory=non_zero.memory,
        # Upstream's GetPodQOS: the class the API server persisted, else computed.
        qos_class=(
            qos
            if (qos := get_str(status, "qosClass", "status")) in _QOS_CLASSES
            else qos_class_of(spec)
        ),
        node_selector=get_str_map(spec, "nodeSelector", "spec"),
        required_node_affinity=(
            None
            if required_node is None
            else nested(f"{node_path}.{req_key}", NodeSelector.from_dict, required_node)
        ),
        preferred_node_affinity=tuple(
            nested(join(f"{node_path}.{pref_key}", i), PreferredSchedulingTerm.from_dict, t)
            for i, t in enumerate(get_list(node_aff, pref_key, node_path))
        ),
        required_affinity=decode_pod_affinity_terms(
            get_list(pod_aff, req_key, aff_path), f"{aff_path}.{req_key}", namespace, labels
        ),
        required_anti_affinity=decode_pod_affinity_terms(
            get_list(anti_aff, req_key, anti_path), f"{anti_path}.{req_key}", namespace, labels
        ),
        preferred_affinity=decode_weighted_pod_affinity_terms(
            get_list(pod_aff, pref_key, aff_path), f"{aff_path}.{pref_key}", namespace, labels
        ),
        preferred_anti_affinity=decode_weighted_pod_affinity_terms(
            get_list(anti_aff, pref_key, anti_path), f"{anti_path}.{pref_key}", namespace, labels
        ),
        tolerations=tuple(
            nested(join("spec.tolerations", i), Toleration.from_dict, t)
            for i, t in enumerate(get_list(spec, "tolerations", "spec"))
        ),
        topology_spread_constraints=decode_topology_spread_constraints(
            get_list(spec, "topologySpreadConstraints", "spec"), "spec.topologySpreadConstraints"
        ),
        scheduling_gates=tuple(
            get_str(as_map(g, join("spec.schedulingGates", i)), "name", "")
            for i, g in enumerate(get_list(spec, "schedulingGates", "spec"))
        ),
        host_network=host_network,
        volumes=tuple(
            decode_volume(v, join("spec.volumes", i))
            for i, v in enumerate(get_list(spec, "volumes", "spec"))
        ),
        resource_claims=decode_pod_resource_claims(spec),
        resource_claim_statuses=decode_resource_claim_statuses(status),
    )


def _decode_container(raw: object, path: str, host_network: bool) -> Container:
    obj = as_map(raw, path)
    resources = get_map(obj, "resources", path)
    res_path = join(path, "resources")
    limits = get_map(resources, "limits", res_path)
    requests_raw = dict(get_map(resources, "requests", res_path))
    # API defaulting: a limit without a request makes the request equal to the limit.
    for res, value in limits.items():
        requests_raw.setdefault(res, value)
    requests = Resource.from_list(requests_raw, join(res_path, "requests"))
    ports = []
    for i, p in enumerate(get_list(obj, "ports", path)):
        port_path = join(join(path, "ports"), i)
        port = as_map(p, port_path)
        container_port = get_int(port, "containerPort", port_path, 0) or 0
        host_port = get_int(port, "hostPort", port_path, 0) or 0
        if host_network and host_port == 0:
            # Defaulting: on the host network the container port is the host port.
            host_port = container_port
        ports.append(
            ContainerPort(
                container_port=container_port,
                host_port=host_port,
                protocol=get_str(port, "protocol", port_path) or "TCP",
                host_ip=get_str(port, "hostIP", port_path),
            )
        )
    return Container(
        name=get_str(obj, "name", path),
        image=get_str(obj, "image", path),
        requests=requests,
        ports=tuple(ports),
        restartable=get_str(obj, "restartPolicy", path) == "Always",
        unset_requests=tuple(r for r in _QOS_RESOURCES if r not in requests_raw),
        claims=decode_container_claims(resources, res_path),
    )


def _with_non_zero_defaults(container: Container) -> Container:
    requests = container.requests.copy()
    if CPU in container.unset_requests:
        requests.milli_cpu = DEFAULT_MILLI_CPU_REQUEST
    if MEMORY in container.unset_requests:
        requests.memory = DEFAULT_MEMORY_REQUEST
    return Container(container.name, container.image, requests, (), container.restartable)


def _effective_requests(
    containers: tuple[Container, ...], init_containers: tuple[Container, ...], overhead: Resource
) -> Resource:
    """Upstream's PodRequests: regular containers and sidecars run together; each
    ordinary init container runs alone, beside the sidecars started before it."""
    total = Resource()
    for c in containers:
        total.add(c.requests)
    sidecars = Resource()
    init_peak = Resource()
    for c in init_containers:
        if c.restartable:
            total.add(c.requests)
            sidecars.add(c.requests)
            running = sidecars.copy()
        else:
            running = c.requests.copy()
            running.add(sidecars)
        init_peak.set_max(running)
    total.set_max(init_peak)
    total.add(overhead)
    return total


_QOS_CLASSES = frozenset((QOS_GUARANTEED, QOS_BURSTABLE, QOS_BEST_EFFORT))


def scheduled_condition(status: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The (status, reason, message) of ``status.conditions``' PodScheduled entry."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    for c in conditions:
        if isinstance(c, dict) and c.get("type") == "PodScheduled":
            return (str(c.get("status", "")), str(c.get("reason", "")), str(c.get("message", "")))
    return None


def qos_class_of(spec: Mapping[str, Any]) -> str:
    """Upstream's ComputePodQOS of a pod's raw ``spec``, without decoding the rest of the
    pod (the API server's admission sets ``status.qosClass`` with it). Raises
    :class:`ObjectError` on a field of the wrong type."""
    raw_containers = [
        as_map(c, "")
        for key in ("containers", "initContainers")
        for c in get_list(spec, key, "spec")
    ]
    pod_level = get_map(get_map(spec, "resources", "spec"), "requests", "spec.resources")
    return _qos_class(raw_containers, pod_level)


def _qos_class(raw_containers: list[Mapping[str, Any]], pod_level: Mapping[str, Any]) -> str:
    """Upstream's ComputePodQOS over cpu and memory (with requests defaulted from limits)."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True

    def positive(values: Mapping[str, Any]) -> dict[str, Fraction]:
        out: dict[str, Fraction] = {}
        for res in _QOS_RESOURCES:
            if res in values:
                try:
                    amount = parse_quantity_value(values[res]).value
                except QuantityError:
                    continue  # already reported by the requests decoder
                if amount > 0:
                    out[res] = amount
        return out

    for c in raw_containers:
        res = as_map(c.get("resources"), "")
        lim = positive(as_map(res.get("limits"), ""))
        req = positive({**as_map(res.get("limits"), ""), **as_map(res.get("requests"), "")})
        for k, v in req.items():
            requests[k] = requests.get(k, Fraction(0)) + v
        for k, v in lim.items():
            limits[k] = limits.get(k, Fraction(0)) + v
        if not all(r in lim for r in _QOS_RESOURCES):
            guaranteed = False
    if pod_level:
        requests.update(positive(pod_level))
    if not requests and not limits:
        return QOS_BEST_EFFORT
    equal = all(limits.get(k) == v for k, v in requests.items())
    if guaranteed and equal and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE
