"""Random clusters and pods for the property tests: plain specs, hypothesis strategies
that draw them, and builders that turn them into real objects with ``kubesched.testing``.

The specs keep every amount in one unit per resource (cpu in millicores, memory and
ephemeral storage in MiB, extended resources as counts) so that the reference model in
``prop_reference`` can compute with them without going through the product's decoders.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.sim.files import ClusterObjects
from kubesched.testing import make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
GPU = "nvidia.com/gpu"
FPGA = "example.com/fpga"
EXTENDED = (GPU, FPGA)

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TAINT_KEYS = ("dedicated", "gpu", "maint")

#: Node label values the pods' selectors and affinity terms draw from.
NODE_LABEL_VALUES: dict[str, tuple[str, ...]] = {
    ZONE: ("z1", "z2", "z3"),
    "disk": ("ssd", "hdd"),
    "team": ("a", "b"),
    "rank": ("1", "2", "3", "4", "5"),
}
POD_LABEL_VALUES: dict[str, tuple[str, ...]] = {
    "app": ("web", "db", "cache"),
    "tier": ("fe", "be"),
}


# --- specs ------------------------------------------------------------------------------


@dataclass
class NodeSpec:
    """A node: allocatable amounts (by resource, in spec units), labels, taints."""

    name: str
    allocatable: dict[str, int]
    pods: int
    labels: dict[str, str]
    taints: list[tuple[str, str, str]] = field(default_factory=list)  # key, value, effect
    unschedulable: bool = False


@dataclass
class TermSpec:
    """A pod (anti-)affinity term."""

    topology_key: str
    selector: dict[str, Any] | None
    namespaces: list[str] | None = None


@dataclass
class SpreadSpec:
    """A topology spread constraint (policies left to their defaults)."""

    max_skew: int
    topology_key: str
    when: str
    selector: dict[str, Any] | None
    min_domains: int | None = None


@dataclass
class NodeTermSpec:
    """A required node-selector term: label expressions and metadata.name fields."""

    expressions: list[dict[str, Any]]
    fields: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PodSpec:
    """A pod, everything the scheduler reads from it."""

    name: str
    namespace: str = "default"
    labels: dict[str, str] = field(default_factory=dict)
    containers: list[dict[str, int]] = field(default_factory=lambda: [{}])
    init_containers: list[tuple[bool, dict[str, int]]] = field(default_factory=list)
    overhead: dict[str, int] = field(default_factory=dict)
    host_ports: list[tuple[int, str, str]] = field(default_factory=list)  # port, proto, ip
    node_selector: dict[str, str] = field(default_factory=dict)
    required_node_terms: list[NodeTermSpec] | None = None
    preferred_node_terms: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)
    tolerations: list[tuple[str, str, str, str]] = field(default_factory=list)  # k, op, v, eff
    required_affinity: list[TermSpec] = field(default_factory=list)
    required_anti_affinity: list[TermSpec] = field(default_factory=list)
    preferred_affinity: list[tuple[int, TermSpec]] = field(default_factory=list)
    preferred_anti_affinity: list[tuple[int, TermSpec]] = field(default_factory=list)
    spread: list[SpreadSpec] = field(default_factory=list)
    priority: int = 0
    node_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class ClusterSpec:
    """Nodes and the pods bound to them (each bound where it fits)."""

    nodes: list[NodeSpec]
    bound: list[PodSpec]

    def node(self, name: str) -> NodeSpec:
        return next(n for n in self.nodes if n.name == name)

    def pods_on(self, name: str) -> list[PodSpec]:
        return [p for p in self.bound if p.node_name == name]


# --- builders ---------------------------------------------------------------------------


def quantities(amounts: dict[str, int]) -> dict[str, str]:
    """Spec amounts as Kubernetes quantities."""
    out = {}
    for name, value in amounts.items():
        if name == CPU:
            out[name] = f"{value}m"
        elif name in (MEMORY, EPHEMERAL):
            out[name] = f"{value}Mi"
        else:
            out[name] = str(value)
    return out


def build_node(spec: NodeSpec) -> Node:
    w = make_node(spec.name).labels(spec.labels)
    w.capacity(**quantities(spec.allocatable), pods=spec.pods)
    for key, value, effect in spec.taints:
        w.taint(key, value, effect)
    if spec.unschedulable:
        w.unschedulable()
    return w.obj()


def _term_kwargs(term: TermSpec) -> dict[str, Any]:
    return {"namespaces": term.namespaces} if term.namespaces else {}


def build_pod(spec: PodSpec) -> Pod:
    w = make_pod(spec.name).namespace(spec.namespace).uid(spec.key)
    if spec.labels:
        w.labels(spec.labels)
    if spec.priority:
        w.priority(spec.priority)
    for i, requests in enumerate(spec.containers):
        ports = None
        if i == 0 and spec.host_ports:
            ports = [
                {"containerPort": port, "hostPort": port, "protocol": proto, "hostIP": ip}
                if ip
                else {"containerPort": port, "hostPort": port, "protocol": proto}
                for port, proto, ip in spec.host_ports
            ]
        w.container(requests=quantities(requests), ports=ports)
    for restartable, requests in spec.init_containers:
        w.init_req(restartable, **quantities(requests))
    if spec.overhead:
        w.overhead(**quantities(spec.overhead))
    if spec.node_selector:
        w.node_selector(spec.node_selector)
    for node_term in spec.required_node_terms or ():
        w.node_affinity_term(node_term.expressions, node_term.fields or None)
    for weight, expressions in spec.preferred_node_terms:
        w.preferred_node_affinity(weight, expressions)
    for key, op, value, effect in spec.tolerations:
        w.toleration(key=key, value=value, effect=effect, operator=op)
    for term in spec.required_affinity:
        w.pod_affinity(term.topology_key, term.selector, **_term_kwargs(term))
    for term in spec.required_anti_affinity:
        w.pod_anti_affinity(term.topology_key, term.selector, **_term_kwargs(term))
    for weight, term in spec.preferred_affinity:
        w.pod_affinity(term.topology_key, term.selector, weight=weight, **_term_kwargs(term))
    for weight, term in spec.preferred_anti_affinity:
        w.pod_anti_affinity(term.topology_key, term.selector, weight=weight, **_term_kwargs(term))
    for c in spec.spread:
        w.spread_constraint(
            c.max_skew, c.topology_key, c.when, c.selector, min_domains=c.min_domains
        )
    if spec.node_name:
        w.node(spec.node_name)
    return w.obj()


def build_cluster(cluster: ClusterSpec) -> ClusterObjects:
    return ClusterObjects(
        nodes=[build_node(n) for n in cluster.nodes],
        pods=[build_pod(p) for p in cluster.bound],
    )


# --- strategies -------------------------------------------------------------------------
# Strategies are built once, at import: building them inside every draw costs more than
# drawing from them. Optional features come with a percentage, so that each stays rare
# enough for most pods to fit somewhere while every one of them still shows up.


def _chance(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent`` times in 100. Hypothesis draws the bounds of a range more
    often than the values between, so both bounds map to False."""
    return st.integers(0, 101).map(lambda x: 1 <= x <= percent)


def _sometimes(
    strategy: st.SearchStrategy[Any], default: Any, percent: int
) -> st.SearchStrategy[Any]:
    """``strategy`` about ``percent`` times in 100, else a copy of ``default``."""
    chance = _chance(percent)

    @st.composite
    def draw_sometimes(draw: st.DrawFn) -> Any:
        return draw(strategy) if draw(chance) else copy.deepcopy(default)

    return draw_sometimes()


_NODE_NAMES = tuple(f"n{i}" for i in range(12))
_NODE_LABEL_DRAWS = {
    # The zone is missing on a few nodes, so that "node lacks the topology key" happens.
    key: _sometimes(st.sampled_from(values), None, 90 if key == ZONE else 50)
    for key, values in NODE_LABEL_VALUES.items()
}
_TAINTS = _sometimes(
    st.lists(
        st.tuples(
            st.sampled_from(TAINT_KEYS), st.sampled_from(("", "a")), st.sampled_from(EFFECTS)
        ),
        min_size=1,
        max_size=2,
    ),
    [],
    25,
)
_NODE_CPU = st.sampled_from((500, 1000, 2000, 4000))
_NODE_MEMORY = st.sampled_from((512, 1024, 2048, 4096))
_NODE_EPHEMERAL = _sometimes(st.sampled_from((1024, 4096)), None, 60)
_NODE_EXTENDED = _sometimes(
    st.dictionaries(st.sampled_from(EXTENDED), st.integers(1, 4), min_size=1, max_size=2), {}, 50
)
_NODE_PODS = st.integers(2, 12)
# The first two nodes of a cluster are where half of its pods go (skewed domains), so
# they are big enough to often take one more.
_BIG_NODE_CPU = st.sampled_from((4000, 8000))
_BIG_NODE_MEMORY = st.sampled_from((4096, 8192))
_BIG_NODE_PODS = st.integers(8, 20)
_CORDONED = _chance(8)


@st.composite
def _node_spec(draw: st.DrawFn, big: bool) -> NodeSpec:
    labels = {}
    for key, strategy in _NODE_LABEL_DRAWS.items():
        value = draw(strategy)
        if value is not None:
            labels[key] = value
    allocatable = {
        CPU: draw(_BIG_NODE_CPU if big else _NODE_CPU),
        MEMORY: draw(_BIG_NODE_MEMORY if big else _NODE_MEMORY),
    }
    eph = draw(_NODE_EPHEMERAL)
    if eph is not None:
        allocatable[EPHEMERAL] = eph
    allocatable.update(draw(_NODE_EXTENDED))
    taints: dict[tuple[str, str], str] = {}
    for key, value, effect in draw(_TAINTS):
        taints.setdefault((key, effect), value)  # key+effect is unique on a node
    return NodeSpec(
        name="",
        allocatable=allocatable,
        pods=draw(_BIG_NODE_PODS if big else _NODE_PODS),
        labels=labels,
        taints=[(k, v, e) for (k, e), v in taints.items()],
        unschedulable=draw(_CORDONED),
    )


NODE = _node_spec(big=False)
BIG_NODE = _node_spec(big=True)

_APPS = st.sampled_from(("web", *POD_LABEL_VALUES["app"]))
_TIERS = st.sampled_from(POD_LABEL_VALUES["tier"])
#: metav1.LabelSelector dicts over the pod label vocabulary (``{}`` selects all).
LABEL_SELECTOR: st.SearchStrategy[dict[str, Any]] = st.one_of(
    _APPS.map(lambda a: {"matchLabels": {"app": a}}),
    _APPS.map(lambda a: {"matchLabels": {"app": a}}),
    st.tuples(_APPS, _TIERS).map(lambda t: {"matchLabels": {"app": t[0], "tier": t[1]}}),
    st.lists(_APPS, min_size=1, max_size=2, unique=True).map(
        lambda vs: {"matchExpressions": [{"key": "app", "operator": "In", "values": vs}]}
    ),
    _TIERS.map(
        lambda t: {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": [t]}]}
    ),
    st.sampled_from(("Exists", "DoesNotExist")).map(
        lambda op: {"matchExpressions": [{"key": "tier", "operator": op}]}
    ),
    st.just({}),
)
#: Also a missing selector (None), which selects nothing.
LABEL_SELECTOR_OR_NONE = st.one_of(LABEL_SELECTOR, st.just(None))

POD_LABELS = st.tuples(_sometimes(_APPS, None, 80), _sometimes(_TIERS, None, 50)).map(
    lambda at: {k: v for k, v in (("app", at[0]), ("tier", at[1])) if v is not None}
)

AFFINITY_TERM = st.builds(
    TermSpec,
    topology_key=st.sampled_from((HOSTNAME, ZONE)),
    selector=LABEL_SELECTOR_OR_NONE,
    namespaces=st.sampled_from((None, None, None, ["other"], ["default", "other"])),
)
_WEIGHTED_TERM = st.tuples(st.integers(1, 100), AFFINITY_TERM)


def _requests(
    cpu: tuple[int, ...], memory: tuple[int, ...], extras: bool
) -> st.SearchStrategy[dict[str, int]]:
    base = st.fixed_dictionaries({CPU: st.sampled_from(cpu), MEMORY: st.sampled_from(memory)})
    if extras:
        more = _sometimes(
            st.fixed_dictionaries(
                {},
                optional={
                    EPHEMERAL: st.sampled_from((256, 1024, 2048)),
                    GPU: st.integers(1, 2),
                    FPGA: st.integers(1, 2),
                },
            ),
            {},
            10,
        )
        base = st.tuples(base, more).map(lambda t: {**t[0], **t[1]})
    return base.map(lambda d: {k: v for k, v in d.items() if v})


_PENDING_CPU = (0, 100, 250, 500, 1000)
_PENDING_MEMORY = (0, 128, 256, 512, 1024)
_BOUND_CPU = (0, 100, 250)
_BOUND_MEMORY = (0, 128, 256)
_PENDING_CONTAINERS = st.lists(
    _requests(_PENDING_CPU, _PENDING_MEMORY, extras=True), min_size=1, max_size=2
)
_BOUND_CONTAINERS = st.lists(
    _requests(_BOUND_CPU, _BOUND_MEMORY, extras=True), min_size=1, max_size=2
)
_INIT_CONTAINERS = _sometimes(
    st.lists(
        st.tuples(st.booleans(), _requests(_PENDING_CPU, _PENDING_MEMORY, extras=False)),
        min_size=1,
        max_size=2,
    ),
    [],
    30,
)
_OVERHEAD = _sometimes(
    st.fixed_dictionaries({CPU: st.sampled_from((10, 250)), MEMORY: st.sampled_from((16, 128))}),
    {},
    25,
)
_HOST_PORTS = _sometimes(
    st.tuples(
        st.sampled_from((8080, 8080, 8081)),
        st.sampled_from(("TCP", "TCP", "UDP")),
        st.sampled_from(("", "", "127.0.0.1", "10.0.0.1")),
    ).map(lambda p: [p]),
    [],
    40,
)

_NODE_KEYS = st.sampled_from((*NODE_LABEL_VALUES, HOSTNAME))


def _values_for(key: str) -> st.SearchStrategy[list[str]]:
    vocab = NODE_LABEL_VALUES.get(key, _NODE_NAMES)
    return st.lists(st.sampled_from(vocab), min_size=1, max_size=2, unique=True)


_VALUES_FOR = {key: _values_for(key) for key in (*NODE_LABEL_VALUES, HOSTNAME)}

#: One node-selector requirement over the node label vocabulary.
NODE_EXPRESSION: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.tuples(_NODE_KEYS, st.sampled_from(("In", "NotIn"))).flatmap(
        lambda ko: _VALUES_FOR[ko[0]].map(
            lambda vs: {"key": ko[0], "operator": ko[1], "values": vs}
        )
    ),
    st.tuples(_NODE_KEYS, st.sampled_from(("Exists", "DoesNotExist"))).map(
        lambda ko: {"key": ko[0], "operator": ko[1]}
    ),
    st.tuples(st.sampled_from(("Gt", "Lt")), st.integers(0, 6)).map(
        lambda ov: {"key": "rank", "operator": ov[0], "values": [str(ov[1])]}
    ),
)
# The API server allows exactly one value in a matchFields requirement.
_NAME_FIELD = st.tuples(st.sampled_from(("In", "NotIn")), st.sampled_from(_NODE_NAMES)).map(
    lambda on: [{"key": "metadata.name", "operator": on[0], "values": [on[1]]}]
)
NODE_TERM = st.one_of(
    st.builds(NodeTermSpec, st.lists(NODE_EXPRESSION, min_size=1, max_size=2)),
    st.builds(NodeTermSpec, st.lists(NODE_EXPRESSION, min_size=1, max_size=2)),
    st.builds(NodeTermSpec, st.lists(NODE_EXPRESSION, max_size=1), _NAME_FIELD),
)
_REQUIRED_NODE_TERMS = _sometimes(st.lists(NODE_TERM, min_size=1, max_size=2), None, 25)
_PREFERRED_NODE_TERMS = st.lists(
    st.tuples(st.integers(1, 100), st.lists(NODE_EXPRESSION, min_size=1, max_size=2)),
    max_size=2,
)
_NODE_SELECTOR = _sometimes(
    st.sets(st.sampled_from(tuple(NODE_LABEL_VALUES)), min_size=1, max_size=2).flatmap(
        lambda keys: st.fixed_dictionaries(
            {k: st.sampled_from(NODE_LABEL_VALUES[k]) for k in sorted(keys)}
        )
    ),
    {},
    25,
)

_KEYED_TOLERATION = st.tuples(
    st.sampled_from((*TAINT_KEYS, UNSCHEDULABLE_TAINT_KEY)),
    st.sampled_from(("Equal", "Exists")),
    st.sampled_from(("", "a")),
    st.sampled_from(("", *EFFECTS)),
).map(lambda t: (t[0], t[1], t[2] if t[1] == "Equal" else "", t[3]))
#: (key, operator, value, effect); an empty key with Exists tolerates every taint (of
#: the effect, when one is given).
TOLERATION = st.one_of(
    _KEYED_TOLERATION,
    _KEYED_TOLERATION,
    _KEYED_TOLERATION,
    st.sampled_from(("", *EFFECTS)).map(lambda e: ("", "Exists", "", e)),
)

_SPREAD = st.builds(
    SpreadSpec,
    max_skew=st.sampled_from((1, 1, 2)),
    topology_key=st.sampled_from((HOSTNAME, ZONE)),
    when=st.sampled_from(("DoNotSchedule", "DoNotSchedule", "ScheduleAnyway")),
    selector=LABEL_SELECTOR_OR_NONE,
    min_domains=st.sampled_from((None, None, None, 1, 2, 4)),
)


def _valid_spread(constraints: list[SpreadSpec]) -> list[SpreadSpec]:
    """As the API server admits them: minDomains only with DoNotSchedule, and no two
    constraints with the same key and action."""
    out: list[SpreadSpec] = []
    seen: set[tuple[str, str]] = set()
    for c in constraints:
        if (c.topology_key, c.when) in seen:
            continue
        seen.add((c.topology_key, c.when))
        if c.when != "DoNotSchedule":
            c.min_domains = None
        out.append(c)
    return out


SPREAD_CONSTRAINTS = _sometimes(
    st.lists(_SPREAD, min_size=1, max_size=2).map(_valid_spread), [], 40
)
_TOLERATIONS = _sometimes(st.lists(TOLERATION, min_size=1, max_size=3), [], 40)
_REQUIRED_AFFINITY = _sometimes(st.lists(AFFINITY_TERM, min_size=1, max_size=2), [], 15)
_PENDING_ANTI_AFFINITY = _sometimes(st.lists(AFFINITY_TERM, min_size=1, max_size=1), [], 25)
_BOUND_ANTI_AFFINITY = _sometimes(st.lists(AFFINITY_TERM, min_size=1, max_size=1), [], 10)

_NAMESPACE = st.sampled_from(("default",) * 5 + ("other",))
_PRIORITY = st.sampled_from((0, 0, 10, 100, 1000))


@st.composite
def _pod_spec(draw: st.DrawFn, pending: bool) -> PodSpec:
    """A pod; pending ones draw the whole feature set, bound ones a lighter one."""
    spec = PodSpec(
        name="",
        namespace=draw(_NAMESPACE),
        labels=draw(POD_LABELS),
        priority=draw(_PRIORITY),
        containers=draw(_PENDING_CONTAINERS if pending else _BOUND_CONTAINERS),
        host_ports=draw(_HOST_PORTS),
        tolerations=draw(_TOLERATIONS),
        required_anti_affinity=draw(_PENDING_ANTI_AFFINITY if pending else _BOUND_ANTI_AFFINITY),
        preferred_anti_affinity=draw(st.lists(_WEIGHTED_TERM, max_size=1)),
    )
    if not pending:
        spec.preferred_affinity = draw(st.lists(_WEIGHTED_TERM, max_size=1))
        return spec
    spec.init_containers = draw(_INIT_CONTAINERS)
    spec.overhead = draw(_OVERHEAD)
    spec.node_selector = draw(_NODE_SELECTOR)
    spec.required_node_terms = draw(_REQUIRED_NODE_TERMS)
    spec.preferred_node_terms = draw(_PREFERRED_NODE_TERMS)
    spec.required_affinity = draw(_REQUIRED_AFFINITY)
    spec.preferred_affinity = draw(st.lists(_WEIGHTED_TERM, max_size=2))
    spec.spread = draw(SPREAD_CONSTRAINTS)
    return spec


_SMALL_CONTAINERS = st.lists(_requests((0, 100), (0, 128), extras=False), min_size=1, max_size=2)
_TOLERATE_ALL = _sometimes(st.just([("", "Exists", "", "")]), [], 50)
_FOCUSED_SPREAD = _sometimes(st.lists(_SPREAD, min_size=1, max_size=2).map(_valid_spread), [], 80)
_FOCUSED_AFFINITY = _sometimes(st.lists(AFFINITY_TERM, min_size=1, max_size=2), [], 30)
_FOCUSED_ANTI_AFFINITY = _sometimes(st.lists(AFFINITY_TERM, min_size=1, max_size=1), [], 40)
_OWN_KIND = _chance(70)
_FOCUSED_PORTS = _sometimes(_HOST_PORTS.filter(bool), [], 40)


@st.composite
def _focused_pod_spec(draw: st.DrawFn) -> PodSpec:
    """A small pending pod that tolerates much and asks little of its node, so that
    what decides is where the other pods are: spread, pod (anti-)affinity, host ports."""
    spec = PodSpec(
        name="",
        namespace=draw(_NAMESPACE),
        labels=draw(POD_LABELS),
        priority=draw(_PRIORITY),
        containers=draw(_SMALL_CONTAINERS),
        host_ports=draw(_FOCUSED_PORTS),
        tolerations=draw(_TOLERATE_ALL),
        required_affinity=draw(_FOCUSED_AFFINITY),
        required_anti_affinity=draw(_FOCUSED_ANTI_AFFINITY),
        preferred_affinity=draw(st.lists(_WEIGHTED_TERM, max_size=1)),
        preferred_anti_affinity=draw(st.lists(_WEIGHTED_TERM, max_size=1)),
        spread=draw(_FOCUSED_SPREAD),
    )
    # Spread constraints usually select the pod's own kind, as a Deployment's do.
    for c in spec.spread:
        if draw(_OWN_KIND):
            spec.labels.setdefault("app", "web")
            c.selector = {"matchLabels": {"app": spec.labels["app"]}}
    return spec


#: Pending pods: two in three draw every feature; one in three is a small pod whose
#: placement depends on the other pods.
PENDING_POD = st.one_of(_pod_spec(pending=True), _pod_spec(pending=True), _focused_pod_spec())
BOUND_POD = _pod_spec(pending=False)


def _named(spec: PodSpec, name: str) -> PodSpec:
    spec.name = name
    return spec


def pod_specs(name: str) -> st.SearchStrategy[PodSpec]:
    """A pending pod named ``name``."""
    return PENDING_POD.map(lambda spec: _named(spec, name))


def _requests_of(spec: PodSpec) -> dict[str, int]:
    from prop_reference import pod_requests  # a late import: the modules use each other

    return pod_requests(spec)


_NODE_COUNT = st.integers(3, 12)
_CROWDED = st.integers(0, 1)
_BOUND_COUNT = st.integers(0, 30)
_CROWDED_NODE_COUNT = st.integers(3, 5)
_CROWDED_BOUND_COUNT = st.integers(20, 40)


@st.composite
def clusters(draw: st.DrawFn, crowded: bool = False) -> ClusterSpec:
    """3–12 nodes and pods bound only where they fit (resources, pod count, NoSchedule /
    NoExecute taints, host ports), as a cluster the scheduler built would look.

    A ``crowded`` cluster has small nodes filled with priority-0 pods, so that pending
    pods of higher priority must preempt.
    """
    from prop_reference import host_port_conflict, untolerated_taint

    nodes = []
    for i in range(draw(_CROWDED_NODE_COUNT if crowded else _NODE_COUNT)):
        node = draw(BIG_NODE if i < 2 and not crowded else NODE)
        node.name = f"n{i}"
        node.labels[HOSTNAME] = node.name
        nodes.append(node)
    used: dict[str, dict[str, int]] = {n.name: {} for n in nodes}
    bound: list[PodSpec] = []
    for j in range(draw(_CROWDED_BOUND_COUNT if crowded else _BOUND_COUNT)):
        spec = _named(draw(BOUND_POD), f"e{j}")
        if crowded:
            spec.priority = 0
        # Half the pods go to the first two nodes: skewed domains and full nodes.
        node = nodes[draw(st.one_of(_CROWDED, st.integers(0, len(nodes) - 1)))]
        requests = _requests_of(spec)
        on_node = [p for p in bound if p.node_name == node.name]
        fits = (
            len(on_node) < node.pods
            and all(
                used[node.name].get(r, 0) + v <= node.allocatable.get(r, 0)
                for r, v in requests.items()
            )
            and untolerated_taint(node, spec) is None
            and not host_port_conflict(spec, on_node)
        )
        if not fits:
            continue
        spec.node_name = node.name
        for r, v in requests.items():
            used[node.name][r] = used[node.name].get(r, 0) + v
        bound.append(spec)
    return ClusterSpec(nodes, bound)


@st.composite
def pending_lists(draw: st.DrawFn, max_size: int = 6) -> list[PodSpec]:
    """1–``max_size`` pending pods named q0, q1, ..."""
    return [_named(draw(PENDING_POD), f"q{i}") for i in range(draw(st.integers(1, max_size)))]
