"""DefaultPreemption: upstream's default_preemption_test.go cases (PostFilter messages, dry
run, choice of the best candidate, eligibility), the evictions, and args validation."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.config import PluginConfig, PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Nominator, StaticClusterLister
from kubesched.framework.interface import Code, PostFilterResult, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeToStatus, PodInfo
from kubesched.objects.pod import Pod
from kubesched.objects.policy import PodDisruptionBudget
from kubesched.objects.selectors import LabelSelector
from kubesched.plugins import defaultbinder, queuesort
from kubesched.plugins.defaultpreemption import NAME, DefaultPreemption, DefaultPreemptionArgs, new
from kubesched.plugins.defaultpreemption.evaluator import (
    Candidate,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
)
from kubesched.plugins.interpodaffinity import plugin as interpodaffinity
from kubesched.plugins.noderesources import fit
from kubesched.plugins.podtopologyspread import plugin as podtopologyspread
from kubesched.testing import make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

FIT = fit.NAME
SPREAD = podtopologyspread.NAME
AFFINITY = "InterPodAffinity"

# Start times (creation timestamps) t(0) < t(1) < ...
EPOCH = "1970-01-01T00:00:00Z"


def t(seconds: int) -> str:
    return f"1970-01-01T00:00:{seconds:02d}Z"


# --- test doubles ------------------------------------------------------------------------


class RecordingClient:
    """A ClusterClient that records the writes; ``fail_delete`` makes deletions raise."""

    def __init__(self, fail_delete: str = "") -> None:
        self.deleted: list[str] = []
        self.reasons: list[str] = []
        self.preemptors: list[str] = []
        self.nominations: list[tuple[str, str]] = []
        self.fail_delete = fail_delete

    def bind(self, pod: Pod, node_name: str) -> None:
        raise AssertionError("preemption never binds")

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        if self.fail_delete:
            raise RuntimeError(self.fail_delete)
        self.deleted.append(pod.key)
        self.reasons.append(reason)
        self.preemptors.append(preemptor.key if preemptor is not None else "")

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        self.nominations.append((pod.key, node_name))


class ScriptedRandom(random.Random):
    """Returns the given offsets from randrange, in order, modulo the range (upstream's
    tests seed Go's rand with 4, which gives 4, 1, 3 for five nodes)."""

    def __init__(self, offsets: Sequence[int]) -> None:
        super().__init__(0)
        self.offsets = list(offsets)

    def randrange(self, start: int, stop: Any = None, step: int = 1) -> int:
        return self.offsets.pop(0) % start


class CountingFilter:
    """Upstream's FakeFilterPlugin: counts calls; rejects every node with ``code``."""

    name = "FakeFilter"

    def __init__(self, code: Code | None = None) -> None:
        self.code = code
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        return None if self.code is None else Status(self.code)


class FalseFilter:
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable("injecting failure for pod test-pod")


class MatchFilter:
    """Passes the node whose name is the pod's name."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if node_info.name == pod.name else Status.unschedulable("not matched")


class ErrorOnLabelPlugin:
    """Upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> ErrorOnLabelPlugin:
        return self

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, info: NodeInfo) -> Any:
        if info.node.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod.name}")
        return None

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, info: NodeInfo) -> Any:
        if info.node.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod.name}")
        return None


def node(name: str, res: dict[str, str], **labels: str) -> Any:
    """A node with ``res`` as capacity; 32 pods unless said (as upstream's wrapper)."""
    w = make_node(name).capacity(**{"pods": "32", **res})
    for key, value in labels.items():
        w.label(key, value)
    return w.obj()


def pod(name: str, prio: int | None = None, res: dict[str, str] | None = None, **kw: Any) -> Pod:
    w = make_pod(name)
    if prio is not None:
        w.priority(prio)
    if res:
        w.req(**res)
    if "node" in kw:
        w.node(kw["node"])
    if "start" in kw:
        w.creation_timestamp(kw["start"])
    for key, value in kw.get("labels", {}).items():
        w.label(key, value)
    if kw.get("terminating"):
        w.terminating()
    if "nominated" in kw:
        w.nominated_node_name(kw["nominated"])
    if "policy" in kw:
        w.preemption_policy(kw["policy"])
    return w.obj()


def pdb(
    labels: dict[str, str],
    allowed: int,
    disrupted: Sequence[str] = (),
    namespace: str = "default",
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        namespace=namespace,
        name="pdb",
        selector=LabelSelector.from_dict({"matchLabels": labels}),
        disruptions_allowed=allowed,
        disrupted_pods=frozenset(disrupted),
    )


def build(
    nodes: Sequence[Any],
    pods: Sequence[Pod],
    *,
    filters: Sequence[str] = (FIT,),
    pre_filters: Sequence[str] = (FIT,),
    pdbs: Sequence[PodDisruptionBudget] = (),
    args: dict[str, Any] | None = None,
    offsets: Sequence[int] = (0, 0, 0),
    client: RecordingClient | None = None,
    nominator: Nominator | None = None,
    extra: dict[str, Any] | None = None,
) -> Framework:
    """A profile with PrioritySort, DefaultBinder, the given (pre)filters and
    DefaultPreemption, over a snapshot of ``nodes`` and ``pods``."""
    factories: dict[str, Any] = {
        queuesort.NAME: queuesort.new,
        defaultbinder.NAME: defaultbinder.new,
        FIT: fit.new,
        SPREAD: podtopologyspread.new,
        AFFINITY: interpodaffinity.new,
        "test-plugin": lambda a, h: ErrorOnLabelPlugin(),
        "FalseFilter": lambda a, h: FalseFilter(),
        "MatchFilter": lambda a, h: MatchFilter(),
        NAME: new,
    }
    factories.update(extra or {})

    def refs(names: Sequence[str]) -> PluginSet:
        return PluginSet(tuple(PluginRef(n) for n in names))

    profile = Profile(
        plugins=Plugins(
            queue_sort=refs([queuesort.NAME]),
            pre_filter=refs(pre_filters),
            filter=refs(filters),
            post_filter=refs([NAME]),
            bind=refs([defaultbinder.NAME]),
        ),
        plugin_config=(PluginConfig(NAME, args),) if args is not None else (),
    )
    return Framework(
        profile,
        Registry(factories),
        cluster=StaticClusterLister(pdbs=pdbs),
        client=client or RecordingClient(),
        nominator=nominator,
        snapshot=Snapshot.from_objects(nodes, pods),
        rng=ScriptedRandom(offsets),
    )


def prefiltered(fwk: Framework, preemptor: Pod) -> CycleState:
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, preemptor)
    assert status is None
    return state


def plugin_of(fwk: Framework) -> DefaultPreemption:
    plugin = fwk.plugins[NAME]
    assert isinstance(plugin, DefaultPreemption)
    return plugin


# --- PostFilter (upstream TestPostFilter) -------------------------------------------------

POST_FILTER_CASES = [
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        [],
        PostFilterResult("node1", ("default/p1",)),
        None,
        id="pod-with-higher-priority-can-be-made-schedulable",
    ),
    pytest.param(
        pod("p"),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": U},
        [],
        PostFilterResult(""),
        Status(
            U,
            (
                "preemption: 0/1 nodes are available: "
                "1 No preemption victims found for incoming pod.",
            ),
        ),
        id="pod-with-tied-priority-is-still-unschedulable",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {"node1": UU},
        [],
        PostFilterResult(""),
        Status(
            U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",)
        ),
        id="preemption-respects-unresolvable-node-statuses",
    ),
    pytest.param(
        pod("p", HIGH),
        [pod("p1", node="node1")],
        [node("node1", ONE_POD)],
        {},
        [],
        PostFilterResult(""),
        Status(
            U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",)
        ),
        id="absent-node-status-means-unresolvable",
    ),
    pytest.param(
        pod("p", MID),
        [pod("p1", HIGH, node="node1"), pod("p2", LOW, node="node2")],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [],
        PostFilterResult("node2", ("default/p2",)),
        None,
        id="pod-can-be-made-schedulable-on-one-node",
    ),
    pytest.param(
        pod("p", VERY_HIGH),
        [
            pod("p1", HIGH, node="node1", labels={"pdb": "non-violating"}),
            pod("p2", LOW, node="node1", labels={"pdb": "violating"}),
            pod("p3", MID, node="node2", labels={"pdb": "violating"}),
        ],
        [node("node1", ONE_POD), node("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [pdb({"pdb": "violating"}, 0), pdb({"pdb": "non-violating"}, 2**31 - 1)],
        PostFilterResult("node2", ("default/p3",)),
        None,
        id="pod-can-be-made-schedulable-on-min-highest-priority-node",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node("node1", NODE_RES), node("node2", NODE_RES)],
        {"node1": U, "node2": U},
        [],
        PostFilterResult(""),
        Status(U, ("preemption: 0/2 nodes are available: 2 Insufficient cpu.",)),
        id="no-candidate-not-enough-resource-after-removing-low-priority-pods",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [pod("p1", HIGH, node="node1"), pod("p2", node="node2"), pod("p3", HIGH, node="node3")],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        [],
        PostFilterResult(""),
        Status(
            U,
            (
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                "2 No preemption victims found for incoming pod.",
            ),
        ),
        id="no-candidate-mixed-reasons-no-lower-priority-pod-and-not-enough-cpu",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1"), pod("p2", node="node2")],
        [node(f"node{i}", NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        [],
        PostFilterResult(""),
        Status(
            U,
            (
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                "2 Preemption is not helpful for scheduling.",
            ),
        ),
        id="no-candidate-two-unresolvable-nodes-and-two-without-enough-cpu",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1")],
        [node("node1", LARGE, error="true")],
        {"node1": U},
        [],
        None,
        Status(
            Code.ERROR,
            (
                'preemption: running RemovePod on PreFilter plugin "test-plugin": '
                "failed to remove pod: p",
            ),
        ),
        id="only-node-fails-in-a-pre-filter-extension",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [pod("p1", node="node1"), pod("p2", res=MEDIUM, node="node2")],
        [node("node1", LARGE, error="true"), node("node2", LARGE)],
        {"node1": U, "node2": U},
        [],
        PostFilterResult("node2", ("default/p2",)),
        None,
        id="one-node-fails-in-a-pre-filter-extension-the-other-is-nominated",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "pods", "nodes", "statuses", "pdbs", "want_result", "want_status"),
    POST_FILTER_CASES,
)
def test_post_filter(preemptor, pods, nodes, statuses, pdbs, want_result, want_status):
    client = RecordingClient()
    fwk = build(nodes, pods, pre_filters=(FIT, "test-plugin"), pdbs=pdbs, client=client)
    state = prefiltered(fwk, preemptor)
    node_to_status = NodeToStatus({n: Status(code) for n, code in statuses.items()})

    result, status = plugin_of(fwk).post_filter(state, preemptor, node_to_status)

    assert status == want_status
    assert result == want_result
    assert client.deleted == list(want_result.victims if want_result else ())


# --- Preempt: evictions and nominations (upstream TestPreempt) ---------------------------

PREEMPT_PODS = [
    pod("p1.1", LOW, SMALL, node="node1"),
    pod("p1.2", LOW, SMALL, node="node1"),
    pod("p2.1", HIGH, LARGE, node="node2"),
    pod("p3.1", MID, MEDIUM, node="node3"),
]


@pytest.mark.parametrize(
    ("preemptor", "want_result", "want_message", "want_deleted"),
    [
        pytest.param(
            pod("p", HIGH, VERY_LARGE, policy="PreemptLowerPriority"),
            PostFilterResult("node1", ("default/p1.1", "default/p1.2")),
            "",
            ["default/p1.1", "default/p1.2"],
            id="basic-preemption-evicts-the-victims-of-the-chosen-node",
        ),
        pytest.param(
            pod("p", HIGH, VERY_LARGE),
            PostFilterResult("node1", ("default/p1.1", "default/p1.2")),
            "",
            ["default/p1.1", "default/p1.2"],
            id="unset-preemption-policy-preempts",
        ),
        pytest.param(
            pod("p", HIGH, VERY_LARGE, policy="Never"),
            None,
            "preemption: not eligible due to preemptionPolicy=Never.",
            [],
            id="preemption-policy-never-preempts-nothing",
        ),
    ],
)
def test_preempt(preemptor, want_result, want_message, want_deleted):
    client = RecordingClient()
    nodes = [node(f"node{i}", VERY_LARGE) for i in (1, 2, 3)]
    fwk = build(nodes, PREEMPT_PODS, client=client)
    state = prefiltered(fwk, preemptor)
    statuses = NodeToStatus({n.name: Status(U) for n in nodes})

    result, status = plugin_of(fwk).post_filter(state, preemptor, statuses)

    assert result == want_result
    assert (status.message if status else "") == want_message
    assert client.deleted == want_deleted
    assert client.reasons == [
        "default-scheduler: preempting to accommodate a higher priority pod"
    ] * len(want_deleted)


def test_lower_priority_pods_nominated_to_the_node_lose_their_nomination():
    nominator = Nominator()
    lower = pod("lower", MID)
    higher = pod("higher", VERY_HIGH)
    elsewhere = pod("elsewhere", LOW)
    nominator.add_nominated_pod(lower, "node1")
    nominator.add_nominated_pod(higher, "node1")
    nominator.add_nominated_pod(elsewhere, "node2")
    client = RecordingClient()
    # Room for the preemptor and the higher-priority nominated pod once v is gone.
    nodes = [node("node1", {"pods": "2"}), node("node2", {"pods": "0"})]
    fwk = build(nodes, [pod("v", LOW, node="node1")], client=client, nominator=nominator)
    preemptor = pod("p", HIGH)
    state = prefiltered(fwk, preemptor)

    result, status = plugin_of(fwk).post_filter(
        state, preemptor, NodeToStatus({"node1": Status(U), "node2": Status(UU)})
    )

    assert (result, status) == (PostFilterResult("node1", ("default/v",)), None)
    assert client.nominations == [("default/lower", "")]
    assert [i.pod.name for i in nominator.nominated_pods_for_node("node1")] == ["higher"]
    assert [i.pod.name for i in nominator.nominated_pods_for_node("node2")] == ["elsewhere"]


def test_victims_already_terminating_are_not_deleted_again():
    client = RecordingClient()
    pods = [
        pod("gone", LOW, SMALL, node="node1", terminating=True),
        pod("v", LOW, SMALL, node="node1"),
    ]
    fwk = build([node("node1", {"cpu": "200m", "memory": "200"})], pods, client=client)
    preemptor = pod("p", HIGH, MEDIUM)
    state = prefiltered(fwk, preemptor)

    result, status = plugin_of(fwk).post_filter(
        state, preemptor, NodeToStatus({"node1": Status(U)})
    )

    assert (result, status) == (PostFilterResult("node1", ("default/gone", "default/v")), None)
    assert client.deleted == ["default/v"]


def test_a_victim_held_at_permit_is_rejected_not_deleted():
    # Upstream's PreemptPod: a waiting pod is not bound yet, so it is rejected (its
    # binding cycle then unreserves it) instead of deleted through the API.
    client = RecordingClient()
    waiting_victim = pod("w", LOW, SMALL, node="node1")
    pods = [waiting_victim, pod("v", LOW, SMALL, node="node1")]
    fwk = build([node("node1", {"cpu": "200m", "memory": "200"})], pods, client=client)
    held = fwk.waiting_pods.add(waiting_victim, {"Gang": 60.0})
    preemptor = pod("p", HIGH, MEDIUM)
    state = prefiltered(fwk, preemptor)

    result, status = plugin_of(fwk).post_filter(
        state, preemptor, NodeToStatus({"node1": Status(U)})
    )

    assert status is None and result is not None
    assert client.deleted == ["default/v"]
    assert client.preemptors == ["default/p"]
    decision = held.decision
    assert decision is not None and decision.code == Code.UNSCHEDULABLE
    assert decision.plugin == NAME and decision.message == "preempted"


def test_a_failed_deletion_is_an_error():
    client = RecordingClient(fail_delete='pods "p1" is forbidden')
    fwk = build([node("node1", ONE_POD)], [pod("p1", node="node1")], client=client)
    preemptor = pod("p", HIGH)
    state = prefiltered(fwk, preemptor)

    result, status = plugin_of(fwk).post_filter(
        state, preemptor, NodeToStatus({"node1": Status(U)})
    )

    assert result is None
    assert status == Status(Code.ERROR, ('preemption: pods "p1" is forbidden',))


def test_no_nodes_is_an_error():
    fwk = build([], [])
    preemptor = pod("p", HIGH)

    result, status = plugin_of(fwk).post_filter(CycleState(), preemptor, NodeToStatus())

    assert (result, status) == (None, Status(Code.ERROR, ("preemption: no nodes available",)))


def test_the_runner_reports_the_preemption_message_of_a_real_fit_error():
    """Through the scheduling algorithm and the runner, with the statuses Filter left."""
    fwk = build([node("node1", ONE_POD)], [pod("p1", node="node1")])
    preemptor = pod("p")
    state = CycleState()
    with pytest.raises(FitError) as info:
        SchedulingAlgorithm(fwk).schedule_pod(state, preemptor)

    _, status = fwk.run_post_filter_plugins(state, preemptor, info.value.diagnosis.node_to_status)

    assert status == Status(
        U,
        ("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",),
        NAME,
    )


# --- DryRunPreemption (upstream TestDryRunPreemption) -------------------------------------

DRY_RUN_CASES = [
    pytest.param(
        dict(filters=("FalseFilter",), pre_filters=()),
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        [],
        None,
        None,
        [[]],
        [2],
        id="a-pod-that-does-not-fit-on-any-node",
    ),
    pytest.param(
        dict(filters=(), pre_filters=()),
        ["node1", "node2"],
        [pod("p", HIGH)],
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        [],
        None,
        U,
        [[]],
        [2],
        id="a-pod-that-fits-with-no-preemption",
    ),
    pytest.param(
        dict(filters=("MatchFilter",), pre_filters=()),
        ["node1", "node2"],
        [pod("node1", HIGH)],
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        [],
        None,
        U,
        [[]],
        [2],
        id="a-pod-that-fits-on-one-node-with-no-preemption",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", HIGH, LARGE)],
        [pod("p1", MID, LARGE, node="node1"), pod("p2", MID, LARGE, node="node2")],
        [],
        None,
        None,
        [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]],
        [4],
        id="a-pod-that-fits-on-both-nodes-when-lower-priority-pods-are-preempted",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", LOW, LARGE)],
        [pod("p1", MID, LARGE, node="node1"), pod("p2", MID, LARGE, node="node2")],
        [],
        None,
        None,
        [[]],
        [0],
        id="other-pods-have-higher-priority-no-preemption",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", HIGH, LARGE)],
        [
            pod("p1.1", LOW, SMALL, node="node1"),
            pod("p1.2", MID, LARGE, node="node1"),
            pod("p2", MID, LARGE, node="node2"),
        ],
        [],
        None,
        None,
        [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]],
        [5],
        id="medium-priority-pod-is-preempted-but-small-lower-priority-one-stays",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", HIGH, LARGE)],
        [
            pod("p1.1", MID, SMALL, node="node1"),
            pod("p1.2", LOW, SMALL, node="node1"),
            pod("p1.3", MID, MEDIUM, node="node1"),
            pod("p1.4", HIGH, SMALL, node="node1"),
            pod("p2", HIGH, LARGE, node="node2"),
        ],
        [],
        None,
        None,
        [[("node1", ["p1.3", "p1.2"], 0)]],
        [4],
        id="mixed-priority-pods-are-preempted",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", HIGH, LARGE)],
        [
            pod("p1.1", LOW, SMALL, node="node1", start=t(5)),
            pod("p1.2", LOW, SMALL, node="node1", start=t(4)),
            pod("p1.3", MID, MEDIUM, node="node1", start=t(3)),
            pod("p1.4", HIGH, SMALL, node="node1", start=t(2)),
            pod("p2", HIGH, LARGE, node="node2", start=t(1)),
        ],
        [],
        None,
        None,
        [[("node1", ["p1.3", "p1.1"], 0)]],
        [4],
        id="mixed-priority-pods-are-preempted-later-start-time-first-among-equals",
    ),
    pytest.param(
        dict(filters=(FIT, AFFINITY), pre_filters=(FIT, AFFINITY)),
        ["node1", "node2"],
        [pod("p", HIGH, SMALL, labels={"foo": ""})],
        [
            make_pod("p1.1")
            .node("node1")
            .label("foo", "")
            .priority(LOW)
            .req(**SMALL)
            .pod_anti_affinity(
                "hostname", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
            )
            .obj(),
            pod("p1.2", MID, SMALL, node="node1"),
            pod("p1.3", HIGH, SMALL, node="node1"),
            pod("p2", HIGH, SMALL, node="node2"),
        ],
        [],
        None,
        None,
        [[("node1", ["p1.1"], 0)]],
        [3],
        id="pod-with-anti-affinity-is-preempted",
    ),
    pytest.param(
        dict(filters=(SPREAD,), pre_filters=(SPREAD,)),
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            make_pod("p")
            .label("foo", "")
            .priority(HIGH)
            .spread_constraint(
                1,
                "zone",
                "DoNotSchedule",
                {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            )
            .spread_constraint(
                1,
                "hostname",
                "DoNotSchedule",
                {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            )
            .obj()
        ],
        [
            pod("pod-a1", MID, node="node-a", labels={"foo": ""}),
            pod("pod-a2", LOW, node="node-a", labels={"foo": ""}),
            pod("pod-b1", LOW, node="node-b", labels={"foo": ""}),
            pod("pod-x1", HIGH, node="node-x", labels={"foo": ""}),
            pod("pod-x2", HIGH, node="node-x", labels={"foo": ""}),
        ],
        [],
        None,
        None,
        [[("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)]],
        [5],
        id="preemption-resolves-a-pod-topology-spread-failure",
    ),
    pytest.param(
        {},
        ["node1", "node2"],
        [pod("p", HIGH, LARGE)],
        [pod("p1", MID, LARGE, node="node1"), pod("p2", MID, LARGE, node="node2")],
        [],
        None,
        U,
        [[]],
        [2],
        id="filters-reject-every-node-during-the-dry-run",
    ),
    pytest.param(
        {},
        ["node1"],
        [pod("p", HIGH, VERY_LARGE)],
        [
            pod("p1.1", MID, MEDIUM, node="node1", labels={"app": "foo"}),
            pod("p1.2", MID, MEDIUM, node="node1", labels={"app": "foo"}),
        ],
        [pdb({"app": "foo"}, 1)],
        None,
        None,
        # Equal importance: the victims keep the order they were found in, violating first.
        [[("node1", ["p1.2", "p1.1"], 1)]],
        [3],
        id="preemption-violates-one-pdb-twice",
    ),
    pytest.param(
        {},
        ["node1"],
        [pod("p", HIGH, VERY_LARGE)],
        [
            pod("p1.1", MID, MEDIUM, node="node1", labels={"app": "foo"}),
            pod("p1.2", MID, MEDIUM, node="node1", labels={"app": "foo"}),
        ],
        [pdb({"app": "foo"}, 1, disrupted=["p2"])],
        None,
        None,
        [[("node1", ["p1.2", "p1.1"], 1)]],
        [3],
        id="pdb-disrupted-pods-not-among-the-victims-change-nothing",
    ),
    pytest.param(
        {},
        ["node1"],
        [pod("p", HIGH, VERY_LARGE)],
        [
            pod("p1.1", MID, MEDIUM, node="node1", labels={"app": "foo"}),
            pod("p1.2", MID, MEDIUM, node="node1", labels={"app": "foo"}),
        ],
        [pdb({"app": "foo"}, 1, disrupted=["p1.2"])],
        None,
        None,
        [[("node1", ["p1.1", "p1.2"], 0)]],
        [3],
        id="a-victim-among-the-pdb-disrupted-pods-does-not-spend-the-budget",
    ),
    pytest.param(
        {},
        ["node1"],
        [pod("p", HIGH, VERY_LARGE)],
        [
            pod("p1.1", MID, MEDIUM, node="node1", labels={"app": "foo"}),
            pod("p1.2", MID, MEDIUM, node="node1", labels={"app": "foo"}),
            pod("p1.3", MID, MEDIUM, node="node1", labels={"app": "foo"}),
        ],
        [pdb({"app": "foo"}, 1, disrupted=["p1.3"])],
        None,
        None,
        [[("node1", ["p1.2", "p1.1", "p1.3"], 1)]],
        [4],
        id="a-disrupted-victim-counts-as-non-violating",
    ),
    pytest.param(
        {},
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, LARGE)],
        [pod(f"p{i}", MID, LARGE, node=f"node{i}") for i in range(1, 6)],
        [],
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        None,
        # offset 4: node5 (yes), node1 (yes)
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]],
        [4],
        id="all-nodes-are-candidates-but-the-args-limit-to-two",
    ),
    pytest.param(
        {},
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, LARGE)],
        [
            pod(f"p{i}", VERY_HIGH if i in (2, 5) else MID, LARGE, node=f"node{i}")
            for i in range(1, 6)
        ],
        [],
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        None,
        # offset 4: node5 (no), node1 (yes), node2 (no), node3 (yes)
        [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]],
        [4],
        id="some-nodes-are-not-candidates-the-args-limit-to-two",
    ),
    pytest.param(
        {},
        [f"node{i}" for i in range(1, 6)],
        [pod("tp1", HIGH, LARGE), pod("tp2", HIGH, LARGE), pod("tp3", HIGH, LARGE)],
        [pod(f"p{i}", MID, LARGE, node=f"node{i}") for i in range(1, 6)],
        [],
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        None,
        [
            [("node1", ["p1"], 0), ("node5", ["p5"], 0)],  # offset 4
            [("node2", ["p2"], 0), ("node3", ["p3"], 0)],  # offset 1
            [("node4", ["p4"], 0), ("node5", ["p5"], 0)],  # offset 3
        ],
        [4, 4, 4],
        id="the-offset-moves-across-cycles-and-wraps-around",
    ),
    pytest.param(
        {},
        [f"node{i}" for i in range(1, 6)],
        [pod("p", HIGH, LARGE)],
        [
            pod("p1", MID, LARGE, node="node1", labels={"app": "foo"}),
            pod("p2", MID, LARGE, node="node2", labels={"app": "foo"}),
            pod("p3", MID, LARGE, node="node3"),
            pod("p4", MID, LARGE, node="node4"),
            pod("p5", MID, LARGE, node="node5", labels={"app": "foo"}),
        ],
        [pdb({"app": "foo"}, 0)],
        {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        None,
        # offset 4: node5 (yes, pdb), node1 (yes, pdb), node2 (pdb, over the cap), node3
        [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]],
        [8],
        id="the-search-goes-past-num-candidates-until-a-non-pdb-violating-node",
    ),
]


@pytest.mark.parametrize(
    (
        "plugins",
        "node_names",
        "preemptors",
        "pods",
        "pdbs",
        "args",
        "fake_filter_code",
        "want",
        "want_filter_calls",
    ),
    DRY_RUN_CASES,
)
def test_dry_run_preemption(
    plugins, node_names, preemptors, pods, pdbs, args, fake_filter_code, want, want_filter_calls
):
    label_keys = ("hostname", "zone", "region")
    nodes = []
    for spec in node_names:
        parts = spec.split("/")
        nodes.append(node(parts[0], VERY_LARGE, **dict(zip(label_keys, parts, strict=False))))
    counter = CountingFilter(fake_filter_code)
    filters = plugins.get("filters", (FIT,))
    fwk = build(
        nodes,
        pods,
        filters=("FakeFilter", *filters),
        pre_filters=plugins.get("pre_filters", (FIT,)),
        args=args,
        offsets=(4, 1, 3),
        extra={"FakeFilter": lambda a, h: counter},
    )
    plugin = plugin_of(fwk)
    node_infos = sorted(fwk.snapshot.list(), key=lambda n: n.name)

    for cycle, preemptor in enumerate(preemptors):
        state = prefiltered(fwk, preemptor)
        before = counter.calls
        offset, num = plugin.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = plugin.evaluator.dry_run_preemption(
            state, preemptor, node_infos, pdbs, offset, num
        )
        summary = sorted(
            (c.node_name, [v.name for v in c.victims], c.num_pdb_violations) for c in got
        )
        assert summary == want[cycle]
        assert counter.calls - before == want_filter_calls[cycle]


def test_dry_run_records_why_nodes_failed():
    fwk = build(
        [node("node1", VERY_LARGE), node("node2", ONE_POD)],
        [pod("p1", HIGH, node="node1"), pod("p2", LOW, node="node2")],
    )
    preemptor = pod("p", MID, VERY_LARGE)
    state = prefiltered(fwk, preemptor)

    got, statuses, errors = plugin_of(fwk).evaluator.dry_run_preemption(
        state, preemptor, fwk.snapshot.list(), [], 0, 2
    )

    assert (got, errors) == ([], [])
    assert statuses.statuses == {
        "node1": Status(UU, ("No preemption victims found for incoming pod",)),
        "node2": Status(UU, ("Insufficient cpu", "Insufficient memory"), FIT),
    }


# --- SelectCandidate (upstream TestSelectBestCandidate) -----------------------------------

SELECT_CASES = [
    pytest.param(
        ["node1", "node2"],
        pod("p", HIGH, LARGE),
        [
            pod("p1", MID, LARGE, node="node1", start=EPOCH),
            pod("p2", MID, LARGE, node="node2", start=EPOCH),
        ],
        {"node1", "node2"},
        id="a-pod-that-fits-on-both-nodes-when-lower-priority-pods-are-preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, node="node1", start=EPOCH),
            pod("p1.2", MID, LARGE, node="node1", start=EPOCH),
            pod("p2.1", MID, MEDIUM, node="node2", start=EPOCH),
            pod("p2.2", LOW, MEDIUM, node="node2", start=EPOCH),
            pod("p3.1", LOW, MEDIUM, node="node3", start=EPOCH),
            pod("p3.2", LOW, MEDIUM, node="node3", start=EPOCH),
        ],
        {"node3"},
        id="node-with-min-highest-priority-pod-is-picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, node="node1", start=EPOCH),
            pod("p1.2", MID, LARGE, node="node1", start=EPOCH),
            pod("p2.1", MID, LARGE, node="node2", start=EPOCH),
            pod("p2.2", LOW, MEDIUM, node="node2", start=EPOCH),
            pod("p3.1", MID, MEDIUM, node="node3", start=EPOCH),
            pod("p3.2", MID, MEDIUM, node="node3", start=EPOCH),
        ],
        {"node2"},
        id="when-highest-priorities-are-the-same-minimum-sum-of-priorities-is-picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, node="node1", start=EPOCH),
            pod("p1.2", NEG, SMALL, node="node1", start=EPOCH),
            pod("p1.3", MID, SMALL, node="node1", start=EPOCH),
            pod("p1.4", NEG, SMALL, node="node1", start=EPOCH),
            pod("p2.1", MID, LARGE, node="node2", start=EPOCH),
            pod("p2.2", NEG, MEDIUM, node="node2", start=EPOCH),
            pod("p3.1", MID, MEDIUM, node="node3", start=EPOCH),
            pod("p3.2", NEG, SMALL, node="node3", start=EPOCH),
            pod("p3.3", LOW, SMALL, node="node3", start=EPOCH),
        ],
        {"node2"},
        id="when-highest-priority-and-sum-are-the-same-minimum-number-of-pods-is-picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, node="node1", start=EPOCH),
            pod("p1.2", NEG, SMALL, node="node1", start=EPOCH),
            pod("p1.3", NEG, SMALL, node="node1", start=EPOCH),
            pod("p2.1", MID, LARGE, node="node2", start=EPOCH),
            pod("p2.2", NEG, MEDIUM, node="node2", start=EPOCH),
            pod("p3.1", MID, MEDIUM, node="node3", start=EPOCH),
            pod("p3.2", NEG, SMALL, node="node3", start=EPOCH),
            pod("p3.3", LOW, SMALL, node="node3", start=EPOCH),
        ],
        {"node2"},
        id="sum-of-adjusted-priorities-is-considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        pod("p", VERY_HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, SMALL, node="node1", start=EPOCH),
            pod("p1.2", LOW, SMALL, node="node1", start=EPOCH),
            pod("p1.3", LOW, SMALL, node="node1", start=EPOCH),
            pod("p2.1", HIGH, LARGE, node="node2", start=EPOCH),
            pod("p3.1", MID, MEDIUM, node="node3", start=EPOCH),
            pod("p3.2", LOW, SMALL, node="node3", start=EPOCH),
            pod("p3.3", LOW, SMALL, node="node3", start=EPOCH),
            pod("p3.4", LOW, MEDIUM, node="node3", start=EPOCH),
            pod("p4.1", MID, MEDIUM, node="node4", start=EPOCH),
            pod("p4.2", MID, SMALL, node="node4", start=EPOCH),
            pod("p4.3", MID, SMALL, node="node4", start=EPOCH),
            pod("p4.4", NEG, SMALL, node="node4", start=EPOCH),
        ],
        {"node1"},
        id="non-overlapping-lowest-high-priority-sum-priorities-and-number-of-pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, node="node1", start=t(2)),
            pod("p1.2", MID, MEDIUM, node="node1", start=t(2)),
            pod("p2.1", MID, MEDIUM, node="node2", start=t(3)),
            pod("p2.2", MID, MEDIUM, node="node2", start=t(3)),
            pod("p3.1", MID, MEDIUM, node="node3", start=t(1)),
            pod("p3.2", MID, MEDIUM, node="node3", start=t(1)),
        ],
        {"node2"},
        id="same-priority-same-number-of-victims-different-start-time-per-node",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", MID, MEDIUM, node="node1", start=t(4)),
            pod("p1.2", MID, MEDIUM, node="node1", start=t(2)),
            pod("p2.1", MID, MEDIUM, node="node2", start=t(5)),
            pod("p2.2", MID, MEDIUM, node="node2", start=t(1)),
            pod("p3.1", MID, MEDIUM, node="node3", start=t(3)),
            pod("p3.2", MID, MEDIUM, node="node3", start=t(6)),
        ],
        {"node3"},
        id="same-priority-same-number-of-victims-different-start-time-for-all-pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        pod("p", HIGH, VERY_LARGE),
        [
            pod("p1.1", LOW, MEDIUM, node="node1", start=t(4)),
            pod("p1.2", MID, MEDIUM, node="node1", start=t(2)),
            pod("p2.1", MID, MEDIUM, node="node2", start=t(6)),
            pod("p2.2", LOW, MEDIUM, node="node2", start=t(1)),
            pod("p3.1", LOW, MEDIUM, node="node3", start=t(3)),
            pod("p3.2", MID, MEDIUM, node="node3", start=t(5)),
        ],
        {"node2"},
        id="different-priority-same-number-of-victims-different-start-time-for-all-pods",
    ),
]


@pytest.mark.parametrize(("node_names", "preemptor", "pods", "want"), SELECT_CASES)
def test_select_best_candidate(node_names, preemptor, pods, want):
    fwk = build([node(n, VERY_LARGE) for n in node_names], pods, offsets=(0,))
    plugin = plugin_of(fwk)
    state = prefiltered(fwk, preemptor)
    node_infos = fwk.snapshot.list()
    offset, num = plugin.get_offset_and_num_candidates(len(node_infos))

    candidates, _, _ = plugin.evaluator.dry_run_preemption(
        state, preemptor, node_infos, [], offset, num
    )
    best = plugin.evaluator.select_candidate(candidates)

    assert best is not None and best.node_name in want


def victim(name: str, prio: int, start: str = "") -> Pod:
    return pod(name, prio, start=start) if start else pod(name, prio)


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param(
            [
                Candidate("a", (victim("a1", LOW),), 1),
                Candidate("b", (victim("b1", HIGH), victim("b2", HIGH)), 0),
            ],
            "b",
            id="fewest-pdb-violations-first",
        ),
        pytest.param(
            [
                Candidate("a", (victim("a1", MID, t(1)), victim("a2", LOW, t(9)))),
                Candidate("b", (victim("b1", MID, t(2)), victim("b2", LOW, t(0)))),
            ],
            "b",
            id="latest-start-among-the-highest-priority-victims",
        ),
        pytest.param(
            [
                Candidate("b", (victim("b1", LOW), victim("b2", -(2**30)), victim("b3", -(2**30)))),
                Candidate("a", (victim("a1", LOW), victim("a2", LOW))),
            ],
            "a",
            id="fewest-victims-when-the-adjusted-sums-tie",
        ),
        pytest.param(
            [
                Candidate("a", (victim("a1", MID, t(5)), victim("a2", MID, t(1)))),
                Candidate("b", (victim("b1", MID, t(3)), victim("b2", MID, t(4)))),
            ],
            "b",
            id="the-earliest-start-of-each-node-is-compared",
        ),
        pytest.param(
            [
                Candidate("a", (victim("a1", MID, t(1)),)),
                Candidate("b", (victim("b1", MID),)),
            ],
            "b",
            id="a-victim-without-start-time-counts-as-started-now",
        ),
        pytest.param(
            [
                Candidate("b", (victim("b1", MID, t(1)),)),
                Candidate("a", (victim("a1", MID, t(1)),)),
            ],
            "b",
            id="full-tie-first-candidate",
        ),
    ],
)
def test_pick_one_node_for_preemption(candidates, want):
    assert pick_one_node_for_preemption(candidates) == want


# --- PDB violations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "pdbs", "want_violating"),
    [
        pytest.param(
            [pod("a", labels={"app": "x"}), pod("b", labels={"app": "x"})],
            [pdb({"app": "x"}, 1)],
            ["b"],
            id="budget-spent-in-order",
        ),
        pytest.param(
            [pod("a", labels={"app": "x"})],
            [pdb({"app": "x"}, 0, namespace="other")],
            [],
            id="pdb-of-another-namespace-does-not-count",
        ),
        pytest.param(
            [pod("a", labels={"app": "x"})],
            [PodDisruptionBudget("default", "pdb", LabelSelector(), 0)],
            [],
            id="empty-selector-matches-nothing",
        ),
        pytest.param(
            [pod("a", labels={"app": "x"})],
            [PodDisruptionBudget("default", "pdb", None, 0)],
            [],
            id="missing-selector-matches-nothing",
        ),
        pytest.param(
            [pod("a")],
            [pdb({"app": "x"}, 0)],
            [],
            id="pod-without-labels-matches-nothing",
        ),
        pytest.param(
            [pod("a", labels={"app": "x", "tier": "y"})],
            [pdb({"app": "x"}, 1), pdb({"tier": "y"}, 0)],
            ["a"],
            id="any-violated-pdb-makes-a-violation",
        ),
    ],
)
def test_filter_pods_with_pdb_violation(pods, pdbs, want_violating):
    violating, non_violating = filter_pods_with_pdb_violation([PodInfo(p) for p in pods], pdbs)
    assert [i.pod.name for i in violating] == want_violating
    assert [i.pod.name for i in non_violating] == [
        p.name for p in pods if p.name not in want_violating
    ]


# --- PodEligibleToPreemptOthers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("preemptor", "pods", "nominated_status", "want"),
    [
        pytest.param(
            pod("p", HIGH, nominated="node1"),
            [pod("p1", LOW, node="node1", terminating=True)],
            Status(UU, ("node(s) had untolerated taint(s)",)),
            (True, ""),
            id="nominated-node-now-unresolvable-may-preempt-again",
        ),
        pytest.param(pod("p", HIGH), [], None, (True, ""), id="pod-without-nominated-node"),
        pytest.param(
            pod("p", HIGH, policy="Never"),
            [],
            None,
            (False, "not eligible due to preemptionPolicy=Never."),
            id="pod-with-preemption-policy-never",
        ),
        pytest.param(
            pod("p", HIGH, nominated="node1"),
            [pod("p1", LOW, node="node1", terminating=True)],
            Status(U),
            (False, "not eligible due to a terminating pod on the nominated node."),
            id="lower-priority-pod-terminating-on-the-nominated-node",
        ),
        pytest.param(
            pod("p", HIGH, nominated="node1"),
            [pod("p1", HIGH, node="node1", terminating=True)],
            Status(U),
            (True, ""),
            id="terminating-pod-of-equal-priority-is-no-victim",
        ),
        pytest.param(
            pod("p", HIGH, nominated="node1"),
            [pod("p1", LOW, node="node1")],
            Status(U),
            (True, ""),
            id="no-terminating-pod-on-the-nominated-node",
        ),
        pytest.param(
            pod("p", HIGH, nominated="gone"),
            [],
            Status(U),
            (True, ""),
            id="nominated-node-no-longer-exists",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(preemptor, pods, nominated_status, want):
    fwk = build([node("node1", ONE_POD)], pods)
    assert plugin_of(fwk).pod_eligible_to_preempt_others(preemptor, nominated_status) == want


def test_nominated_status_comes_from_the_node_to_status():
    preemptor = pod("p", HIGH, nominated="node1")
    fwk = build([node("node1", ONE_POD)], [pod("p1", LOW, node="node1", terminating=True)])
    plugin = plugin_of(fwk)

    _, status = plugin.post_filter(CycleState(), preemptor, NodeToStatus({"node1": Status(U)}))

    assert status == Status(
        U, ("preemption: not eligible due to a terminating pod on the nominated node.",)
    )


# --- args --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_nodes", "percentage", "absolute", "want"),
    [
        pytest.param(0, 10, 100, 0, id="no-nodes"),
        pytest.param(50, 10, 100, 50, id="fewer-nodes-than-the-absolute-minimum"),
        pytest.param(200, 10, 100, 100, id="percentage-below-the-absolute-minimum"),
        pytest.param(1000, 50, 100, 500, id="percentage-above-the-absolute-minimum"),
        pytest.param(10, 5, 0, 0, id="percentage-rounds-down"),
        pytest.param(5, 40, 1, 2, id="forty-percent-of-five"),
    ],
)
def test_calculate_num_candidates(num_nodes, percentage, absolute, want):
    args = DefaultPreemptionArgs(percentage, absolute)
    assert DefaultPreemption(args, build([], [])).calculate_num_candidates(num_nodes) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, DefaultPreemptionArgs(10, 100), id="defaults"),
        pytest.param(
            {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 500},
            DefaultPreemptionArgs(50, 500),
            id="both-set",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0}, DefaultPreemptionArgs(0, 100), id="explicit-zero"
        ),
        pytest.param(
            {"kind": "DefaultPreemptionArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
            DefaultPreemptionArgs(10, 100),
            id="versioned-form",
        ),
    ],
)
def test_args_decode(args, want):
    assert new(args, build([], [])).args == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": -1},
            ["minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"],
            id="negative-percentage",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 900},
            ["minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"],
            id="percentage-over-100",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"],
            id="negative-absolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                "minCandidateNodesPercentage: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesAbsolute",
                "minCandidateNodesAbsolute: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesPercentage",
            ],
            id="both-zero",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
            [
                "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
                "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            ],
            id="both-out-of-range",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": "10%", "minCandidateNodesAbsolute": -5},
            [
                'minCandidateNodesPercentage: Invalid value: "10%": must be int',
                "minCandidateNodesAbsolute: Invalid value: -5: not in valid range [0, inf)",
            ],
            id="wrong-type-and-out-of-range-reported-together",
        ),
        pytest.param(
            {"minCandidateNodes": 3},
            ['minCandidateNodes: Invalid value: "minCandidateNodes": unknown field'],
            id="unknown-field",
        ),
    ],
)
def test_args_validation(args, want):
    with pytest.raises(ArgsError) as info:
        new(args, build([], []))
    assert [str(e) for e in info.value.errors] == want


def test_args_errors_are_reported_with_the_plugin_config_path():
    with pytest.raises(Exception) as info:
        build([], [], args={"minCandidateNodesAbsolute": -1})
    assert [str(e) for e in info.value.errors] == [  # type: ignore[attr-defined]
        "plugins.postFilter.enabled[0].args.minCandidateNodesAbsolute: "
        "Invalid value: -1: not in valid range [0, inf)"
    ]


def test_a_node_where_the_pod_fits_without_victims_is_an_error():
    """The caller said node1 rejected the pod, yet it fits with every pod back: a fault."""
    fwk = build([node("node1", VERY_LARGE)], [pod("v", LOW, SMALL, node="node1")])
    preemptor = pod("p", HIGH, SMALL)
    state = prefiltered(fwk, preemptor)

    result, status = plugin_of(fwk).post_filter(
        state, preemptor, NodeToStatus({"node1": Status(U)})
    )

    assert result is None
    assert status == Status(
        Code.ERROR, ('preemption: expected at least one victim pod on node "node1"',)
    )
