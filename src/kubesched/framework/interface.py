"""The contract between the framework and its plugins.

Mirrors kube-scheduler's ``staging/src/k8s.io/kube-scheduler/framework/interface.go``:
status codes, the extension-point protocols, and the cluster events with queueing hints
that let a rejected pod be retried when something that could help it happens.

A status of ``None`` means Success, as a nil ``*Status`` does upstream: the hot path
allocates nothing for nodes that pass.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.types import NodeInfo, NodeScore, NodeToStatus, PodInfo, QueuedPodInfo
    from kubesched.objects.pod import Pod

#: The highest score a Score plugin may give after NormalizeScore.
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
#: The highest total of score-plugin weights (upstream's MaxTotalScore guard).
MAX_TOTAL_SCORE = 2**63 - 1


class Code(enum.IntEnum):
    """What a plugin's verdict asks the scheduler to do (upstream ``fwk.Code``)."""

    SUCCESS = 0
    #: An internal fault or bug; the pod is retried with backoff.
    ERROR = 1
    #: The pod does not fit now; preemption may help.
    UNSCHEDULABLE = 2
    #: The pod cannot fit on this node whatever is preempted.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    #: Permit: the pod waits before binding.
    WAIT = 4
    #: The plugin has nothing to do for this pod (PreFilter, PreScore, Bind).
    SKIP = 5
    #: The pod waits for something outside the scheduler (PreEnqueue-like rejections).
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(frozen=True, slots=True)
class Status:
    """A non-success verdict: a code, the reasons, and the plugin that gave it."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(Code.ERROR, (message,))

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @property
    def message(self) -> str:
        """The reasons joined as upstream's ``Status.Message()`` does."""
        return ", ".join(self.reasons)

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTED

    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def with_plugin(self, plugin: str) -> Status:
        """The same verdict, attributed to ``plugin`` (set by the runner)."""
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin)

    def __str__(self) -> str:
        return self.message or str(self.code)


_REJECTED = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


def is_success(status: Status | None) -> bool:
    """``None`` and Code.SUCCESS are both success."""
    return status is None or status.code is Code.SUCCESS


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Restricts the nodes worth filtering; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """The intersection of two results, as upstream's ``PreFilterResult.Merge``."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What PostFilter (preemption) decided: the node the pod is nominated to."""

    nominated_node_name: str = ""
    #: Victims that must go for the pod to fit, as ``namespace/name`` keys.
    victims: tuple[str, ...] = ()


# --- cluster events and queueing hints -------------------------------------------------


class ActionType(enum.IntFlag):
    """What happened to an object (upstream ``fwk.ActionType``)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_NODE_DECLARED_FEATURE
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(enum.StrEnum):
    """The kinds of object whose changes can make a pod schedulable."""

    POD = "Pod"
    #: A pod already bound to a node (upstream's assignedPod pseudo-resource).
    ASSIGNED_POD = "AssignedPod"
    #: A pod not yet bound (upstream's unschedulablePod pseudo-resource).
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    NAMESPACE = "Namespace"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    PRIORITY_CLASS = "PriorityClass"
    #: scheduler-plugins' custom resources (scheduling.x-k8s.io), for gang and quota
    #: plugins' hints.
    POD_GROUP = "PodGroup"
    ELASTIC_QUOTA = "ElasticQuota"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of change: a resource and the actions on it."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, other: ClusterEvent) -> bool:
        """Whether ``other`` (a change that happened) is one this event registers for."""
        if self.resource is EventResource.WILDCARD:
            return bool(self.action & other.action)
        if self.resource is not other.resource:
            # A plain Pod event covers both assigned and unscheduled pods.
            covered = self.resource is EventResource.POD and other.resource in (
                EventResource.ASSIGNED_POD,
                EventResource.UNSCHEDULED_POD,
            )
            if not covered:
                return False
        return bool(self.action & other.action)


class QueueingHint(enum.Enum):
    """A hint function's answer: requeue the pod, or not for this event."""

    QUEUE = "Queue"
    QUEUE_SKIP = "QueueSkip"


#: ``hint(pod, old_object, new_object) -> QueueingHint``; objects are ``objects`` types or
#: None (None for old on Add, for new on Delete). An exception means QUEUE.
QueueingHintFn = Callable[["Pod", object, object], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A cluster event a plugin registers, with an optional hint to filter it."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


# --- extension points -------------------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a name, the one configuration files use."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Runs before a pod enters the active queue; a non-success status keeps it out
    (it waits in the unschedulable pods until an event lets it in)."""

    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders the active queue. Exactly one per profile; all profiles share it."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Declares the cluster events that may make a pod this plugin rejected schedulable."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps PreFilter's cycle state right when preemption adds or removes pods."""

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Runs once per attempt before Filter. Unschedulable rejects the pod on every node;
    Skip disables this plugin's Filter for the attempt; a PreFilterResult narrows the
    nodes that Filter sees."""

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Decides whether the pod fits one node. Must not change ``node_info``; may be
    called with a NodeInfo that preemption changed (pods removed or nominated added)."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node fits (preemption). Success with a result nominates a node;
    Unschedulable says it could not help, with a message for the FailedScheduling event."""

    def post_filter(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Runs once before Score over the feasible nodes; Skip disables its Score."""

    def pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """NormalizeScore: rescale all nodes' scores into [0, MAX_NODE_SCORE], in place."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks a feasible node; after NormalizeScore the score must be in [0, 100]."""

    def score(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[int, Status | None]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Reserve runs when the pod is assumed on a node; Unreserve undoes it when a later
    step fails. Unreserve must be idempotent and may run without Reserve."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approves, denies or delays (Wait, with a timeout in seconds) the binding."""

    def permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Runs before Bind, in the binding cycle; a failure unreserves the pod.

    PreBind may do I/O through ``handle.client`` (its blocking API calls and
    ``wait_until``): the live scheduler runs it in a worker thread, concurrently with
    scheduling cycles and other pods' binding cycles, so state it shares with Reserve or
    Filter needs a lock. A rejection or Error unreserves the pod and requeues it.
    """

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PreBindPreFlightPlugin(PreBindPlugin, Protocol):
    """A PreBind plugin that says beforehand whether it has work for the pod (upstream
    1.34's ``PreBindPreFlight``): Skip means its PreBind is not called for this pod;
    success means it will be; Error fails the binding. Runs on the scheduler's thread and
    must not block. A pod for which every PreBind plugin skips is bound without a worker
    thread. PreBind plugins without it always run."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod; Skip passes to the next Bind plugin."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational, after a successful bind."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class PodGroupInfo:
    """A pod's group, as a :class:`PodGroupPlugin` describes it to the framework.

    **key**: ``namespace/name`` of the group; every member gives the same key.
    **min_member**: the quorum: that many members are placed together, or none.
    **backoff_seconds**: how long the members wait after the group failed a cycle
    (0: the queue's usual per-pod backoff).
    """

    key: str
    min_member: int
    backoff_seconds: float = 0.0


@runtime_checkable
class PodGroupPlugin(Plugin, Protocol):
    """Says which pods form a gang (a group placed all together or not at all).

    Not an extension point of upstream's framework: the first plugin of a profile that
    implements it (enabled at any extension point) defines the profile's groups. The
    framework then gates a member while fewer than ``min_member`` members exist, and
    once a quorum is pending, places it in one scheduling cycle against one snapshot
    (``framework/groupcycle.py``): every member gets a node and is reserved, or none is.
    No member waits at Permit holding resources, so gangs cannot deadlock each other.

    ``pod_group`` must be cheap and pure (it is asked for every queued pod) and return
    equal answers for the members of one group; None means the pod is not in a gang.
    """

    def pod_group(self, pod: Pod) -> PodGroupInfo | None: ...


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    """Where a pod would go if ``victims`` (on ``node_name``) were evicted."""

    node_name: str
    victims: tuple[Pod, ...]


@runtime_checkable
class PreemptionPlanner(PostFilterPlugin, Protocol):
    """A PostFilter plugin whose preemption can be tried without evicting anyone, so
    that a gang's preemption happens only when the whole quorum then fits.

    ``plan_preemption`` searches as ``post_filter`` would and changes nothing: the plan
    (None and the reason, prefixed as ``post_filter``'s, when preemption cannot help).
    ``execute_preemption`` evicts a plan's victims as ``post_filter`` would have.
    """

    def plan_preemption(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PreemptionPlan | None, Status | None]: ...

    def execute_preemption(self, pod: Pod, plan: PreemptionPlan) -> Status | None: ...


#: Extension point name (as in KubeSchedulerConfiguration) → the protocol implementing it.
EXTENSION_POINT_PROTOCOLS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}
