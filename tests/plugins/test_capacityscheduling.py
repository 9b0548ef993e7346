"""CapacityScheduling: PreFilter by max and by the sum of min, the quota victim rules of its
PostFilter (upstream's capacity_scheduling_test.go cases, scheduler-plugins issue 683),
eligibility, and args."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.config import PluginRef as Ref
from kubesched.config import Plugins, PluginSet, Profile
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Nominator, StaticClusterLister
from kubesched.framework.interface import Code, PostFilterResult, QueueingHint, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeToStatus
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import defaultbinder, nodeaffinity, queuesort
from kubesched.plugins.capacityscheduling import NAME, CapacityScheduling, new
from kubesched.plugins.capacityscheduling.preemption import QuotaPreemptor
from kubesched.plugins.noderesources import fit
from kubesched.testing import make_node, make_pod
from kubesched.testing.handle import RecordingClient
from kubesched.testing.scheduling_wrappers import make_elastic_quota

GPU = "nvidia.com/gpu"
LOW, MID, HIGH = 0, 100, 1000
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def pod(
    name: str,
    ns: str,
    *,
    memory: int = 0,
    gpu: int = 0,
    cpu: str = "",
    priority: int = 0,
    node: str = "",
    ts: str = "",
) -> Pod:
    requests: dict[str, Any] = {}
    if memory:
        requests["memory"] = str(memory)
    if gpu:
        requests[GPU] = str(gpu)
    if cpu:
        requests["cpu"] = cpu
    w = make_pod(name).namespace(ns).uid(f"{ns}-{name}").priority(priority).req(**requests)
    if node:
        w = w.node(node)
    if ts:
        w = w.creation_timestamp(ts)
    return w.obj()


def node(name: str, **capacity: Any) -> Node:
    capacity.setdefault("pods", 32)
    return make_node(name).capacity(**capacity).obj()


def gpu_node(name: str, gpus: int, **labels: str) -> Node:
    w = make_node(name).capacity(pods=32, cpu="32", memory="64Gi", **{GPU: gpus})
    return w.labels(labels).obj()


def quota(ns: str, min_: dict[str, str] | None, max_: dict[str, str] | None) -> ElasticQuota:
    w = make_elastic_quota(ns)
    if min_ is not None:
        w = w.min(**min_)
    if max_ is not None:
        w = w.max(**max_)
    return w.obj()


def build(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    quotas: Sequence[ElasticQuota],
    *,
    nominator: Nominator | None = None,
    client: RecordingClient | None = None,
) -> Framework:
    """scheduler-plugins' profile, reduced: NodeResourcesFit and CapacityScheduling."""

    def refs(*names: str) -> PluginSet:
        return PluginSet(tuple(Ref(n) for n in names))

    profile = Profile(
        plugins=Plugins(
            queue_sort=refs(queuesort.NAME),
            pre_filter=refs(nodeaffinity.NAME, fit.NAME, NAME),
            filter=refs(nodeaffinity.NAME, fit.NAME),
            post_filter=refs(NAME),
            reserve=refs(NAME),
            bind=refs(defaultbinder.NAME),
        )
    )
    registry = Registry(
        {
            queuesort.NAME: queuesort.new,
            defaultbinder.NAME: defaultbinder.new,
            fit.NAME: fit.new,
            nodeaffinity.NAME: nodeaffinity.new,
            NAME: new,
        }
    )
    return Framework(
        profile,
        registry,
        cluster=StaticClusterLister(elastic_quotas=quotas),
        client=client or RecordingClient(),
        nominator=nominator,
        snapshot=Snapshot.from_objects(nodes, pods),
    )


def plugin_of(fwk: Framework) -> CapacityScheduling:
    plugin = fwk.plugins[NAME]
    assert isinstance(plugin, CapacityScheduling)
    return plugin


def pre_filter(fwk: Framework, p: Pod) -> tuple[CycleState, Status | None]:
    state = CycleState()
    _, status = plugin_of(fwk).pre_filter(state, p, fwk.snapshot.list())
    return state, status


def schedule(fwk: Framework, p: Pod) -> tuple[PostFilterResult | None, Status | None]:
    """One attempt: schedule; on a fit error, PostFilter through the runner."""
    state = CycleState()
    try:
        result = SchedulingAlgorithm(fwk).schedule_pod(state, p)
    except FitError as err:
        return fwk.run_post_filter_plugins(state, p, err.diagnosis.node_to_status)
    return PostFilterResult(nominated_node_name=result.suggested_host), None


# --- PreFilter (upstream TestPreFilter, with the numbers) ---------------------------------

MEM_QUOTA = quota("ns1", {"memory": "1000"}, {"memory": "2000"})

PRE_FILTER_CASES = [
    pytest.param(
        [MEM_QUOTA],
        [pod("used", "ns1", memory=300, node="n1")],
        pod("p1", "ns1", memory=500),
        None,
        id="pod-within-its-quotas-max-passes",
    ),
    pytest.param(
        [MEM_QUOTA],
        [pod("used", "ns1", memory=300, node="n1")],
        pod("p2", "ns1", memory=1800),
        "Pod ns1/p2 is rejected in PreFilter because ElasticQuota ns1 is more than Max "
        "(ElasticQuota ns1/quota memory: used 300, request 1800, max 2000)",
        id="pod-over-its-quotas-max-is-rejected-with-used-request-max",
    ),
    pytest.param(
        [MEM_QUOTA, quota("ns2", {"memory": "1000"}, {"memory": "2000"})],
        [pod("a", "ns1", memory=1800, node="n1"), pod("b", "ns2", memory=200, node="n1")],
        pod("p1", "ns2", memory=500),
        "Pod ns2/p1 is rejected in PreFilter because total ElasticQuota used is more than min "
        "(memory: total used 2000, request 500, sum of min 2000)",
        id="sum-of-used-over-sum-of-min-is-rejected-with-the-totals",
    ),
    pytest.param(
        [MEM_QUOTA],
        [pod("a", "ns1", memory=1800, node="n1")],
        pod("p1", "ns2", memory=5000),
        None,
        id="namespace-without-a-quota-passes",
    ),
    pytest.param(
        [quota("ns1", {"memory": "1000"}, {"memory": "2000", "cpu": "1"})],
        [],
        pod("p1", "ns1", memory=100, cpu="2"),
        "Pod ns1/p1 is rejected in PreFilter because ElasticQuota ns1 is more than Max "
        "(ElasticQuota ns1/quota cpu: used 0, request 2, max 1)",
        id="cpu-over-max-names-cpu-in-quantity-form",
    ),
    pytest.param(
        [quota("ns1", {"memory": "1000"}, {"memory": "2000"})],
        [],
        pod("p1", "ns1", memory=100, cpu="500m"),
        "Pod ns1/p1 is rejected in PreFilter because ElasticQuota ns1 is more than Max "
        "(ElasticQuota ns1/quota cpu: used 0, request 500m, max 0)",
        id="a-max-that-omits-cpu-bounds-it-at-zero-as-upstream",
    ),
    pytest.param(
        [quota("ns1", {GPU: "4"}, None)],
        [],
        pod("p1", "ns1", gpu=3),
        None,
        id="an-absent-max-limits-nothing",
    ),
    pytest.param(
        [quota("ns1", {"memory": "10"}, None)],
        [],
        pod("p1", "ns1", gpu=1),
        "Pod ns1/p1 is rejected in PreFilter because total ElasticQuota used is more than min "
        f"({GPU}: total used 0, request 1, sum of min 0)",
        id="an-extended-resource-no-min-names-is-not-guaranteed",
    ),
]


@pytest.mark.parametrize(("quotas", "existing", "preemptor", "message"), PRE_FILTER_CASES)
def test_pre_filter(
    quotas: list[ElasticQuota], existing: list[Pod], preemptor: Pod, message: str | None
) -> None:
    fwk = build([node("n1", memory="100000", cpu="100")], existing, quotas)
    _, status = pre_filter(fwk, preemptor)
    if message is None:
        assert status is None
    else:
        assert status == Status(U, (message,))


def test_pods_nominated_before_count_first() -> None:
    """Same namespace and at least the pod's priority: against max; another namespace
    within its min: against the sum of min. Lower priority in the same namespace: not."""
    quotas = [
        quota("ns1", {"memory": "1000"}, {"memory": "1000"}),
        quota("ns2", {"memory": "1000"}, {"memory": "2000"}),
    ]
    nominator = Nominator()
    fwk = build([node("n1", memory="100000")], [], quotas, nominator=nominator)
    nominator.add_nominated_pod(pod("same-high", "ns1", memory=600, priority=HIGH), "n1")
    nominator.add_nominated_pod(pod("same-low", "ns1", memory=900, priority=LOW), "n1")

    _, status = pre_filter(fwk, pod("p", "ns1", memory=500, priority=MID))
    assert status == Status(
        U,
        (
            "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max "
            "(ElasticQuota ns1/quota memory: used 0, request 500, nominated 600, max 1000)",
        ),
    )

    nominator.add_nominated_pod(pod("other", "ns2", memory=1600, priority=LOW), "n1")
    _, status = pre_filter(fwk, pod("q", "ns1", memory=300, priority=MID))
    assert status == Status(
        U,
        (
            "Pod ns1/q is rejected in PreFilter because total ElasticQuota used is more than "
            "min (memory: total used 0, request 300, nominated 2200, sum of min 2000)",
        ),
    )


# --- PostFilter (upstream TestPostFilter and TestDryRunPreemption) --------------------------


def victims_of(result: PostFilterResult | None) -> tuple[str, tuple[str, ...]]:
    assert result is not None
    return result.nominated_node_name, tuple(sorted(result.victims))


POST_FILTER_CASES = [
    pytest.param(
        [
            quota("ns1", {"memory": "50"}, {"memory": "200"}),
            quota("ns2", {"memory": "200"}, {"memory": "200"}),
        ],
        ("node-a", ("ns1/t1-p2",)),
        id="over-its-min-a-namespace-preempts-its-own-lower-priority-pod",
    ),
    pytest.param(
        [
            quota("ns1", {"memory": "150"}, {"memory": "200"}),
            quota("ns2", {"memory": "50"}, {"memory": "200"}),
        ],
        ("node-a", ("ns2/t1-p4",)),
        id="within-its-min-a-namespace-reclaims-from-the-borrower-down-to-its-min",
    ),
    pytest.param(
        [],
        ("node-a", ("ns2/t1-p4",)),
        id="without-quotas-the-least-important-lower-priority-pod-goes",
    ),
]


@pytest.mark.parametrize(("quotas", "expected"), POST_FILTER_CASES)
def test_post_filter(quotas: list[ElasticQuota], expected: tuple[str, tuple[str, ...]]) -> None:
    existing = [
        pod("t1-p2", "ns1", memory=50, priority=MID, node="node-a", ts="2024-01-01T00:00:01Z"),
        pod("t1-p3", "ns2", memory=50, priority=MID, node="node-a", ts="2024-01-01T00:00:02Z"),
        pod("t1-p4", "ns2", memory=50, priority=MID, node="node-a", ts="2024-01-01T00:00:03Z"),
    ]
    client = RecordingClient()
    fwk = build([node("node-a", memory="150")], existing, quotas, client=client)

    result, status = schedule(fwk, pod("t1-p1", "ns1", memory=50, priority=HIGH))

    assert status is None  # preemption succeeded: the pod waits for its victims to go
    assert victims_of(result) == expected
    assert sorted(key for key, _ in client.deleted) == list(expected[1])


def test_over_its_min_a_namespace_never_preempts_other_namespaces() -> None:
    """Upstream's "pod subjects to overused quota can't preempt pods subjects to other
    quotas": ns1 is over its min with the pod, ns2's pods have lower priority."""
    quotas = [
        quota("ns1", {"memory": "50"}, {"memory": "200"}),
        quota("ns2", {"memory": "50"}, {"memory": "200"}),
    ]
    existing = [
        pod("a", "ns1", memory=50, priority=HIGH, node="node-a"),
        pod("b", "ns2", memory=50, priority=LOW, node="node-a"),
        pod("c", "ns2", memory=50, priority=LOW, node="node-a"),
    ]
    fwk = build([node("node-a", memory="150")], existing, quotas)

    result, status = schedule(fwk, pod("p", "ns1", memory=50, priority=HIGH))

    assert result == PostFilterResult()
    assert status is not None and status.code is U
    assert "No victims found on node node-a for preemptor pod p" in status.message


def test_a_borrower_is_not_preempted_below_its_min() -> None:
    """ns2 borrows 100 over its min of 50: only its least important pods go, and only
    while it is over its min (the pod needs 100, ns2 gives 100, keeps its min)."""
    quotas = [
        quota("ns1", {"memory": "200"}, {"memory": "300"}),
        quota("ns2", {"memory": "50"}, {"memory": "300"}),
    ]
    existing = [
        pod("keep", "ns2", memory=50, priority=LOW, node="node-a", ts="2024-01-01T00:00:01Z"),
        pod("b1", "ns2", memory=50, priority=LOW, node="node-a", ts="2024-01-01T00:00:02Z"),
        pod("b2", "ns2", memory=50, priority=LOW, node="node-a", ts="2024-01-01T00:00:03Z"),
    ]
    fwk = build([node("node-a", memory="150")], existing, quotas)

    result, _ = schedule(fwk, pod("p", "ns1", memory=100, priority=LOW))

    assert victims_of(result) == ("node-a", ("ns2/b1", "ns2/b2"))


# --- scheduler-plugins issue 683 ------------------------------------------------------------

TEAM_QUOTAS = [
    quota("team-a", {GPU: "4"}, {GPU: "5"}),
    quota("team-b", {GPU: "1"}, {GPU: "5"}),
]


def test_683_a_namespace_within_its_min_gets_its_share_back() -> None:
    """5 GPUs, team-a (min 4, max 5) holds all 5; team-b (min 1) asks for 1: PreFilter
    rejects (5 + 1 > 5), PostFilter takes one of team-a's pods back."""
    nodes = [gpu_node(f"gpu-{i}", 1) for i in range(5)]
    existing = [
        pod(f"a{i}", "team-a", gpu=1, node=f"gpu-{i}", ts=f"2024-01-01T00:00:0{i}Z")
        for i in range(5)
    ]
    fwk = build(nodes, existing, TEAM_QUOTAS)
    preemptor = pod("b", "team-b", gpu=1)

    _, status = pre_filter(fwk, preemptor)
    assert status is not None and status.message == (
        "Pod team-b/b is rejected in PreFilter because total ElasticQuota used is more than "
        f"min ({GPU}: total used 5, request 1, sum of min 5)"
    )
    result, _ = schedule(fwk, preemptor)

    # The latest-started of team-a's pods (the least important) goes.
    assert victims_of(result) == ("gpu-4", ("team-a/a4",))


def test_683_the_borrowed_share_on_other_nodes_is_reclaimed() -> None:
    """team-b's pod can only run on gpu-b (node selector), where team-a holds one GPU;
    team-a's other borrowed GPU is on gpu-a. Evicting on gpu-b alone leaves the sum
    over the sum of min (upstream: "global quota max exceeded", pending for ever); the
    borrowed GPU on gpu-a goes too."""
    quotas = [quota("team-a", {GPU: "2"}, {GPU: "4"}), quota("team-b", {GPU: "2"}, {GPU: "4"})]
    nodes = [gpu_node("gpu-a", 3, pool="a"), gpu_node("gpu-b", 3, pool="b")]
    existing = [
        pod("a1", "team-a", gpu=1, node="gpu-a", ts="2024-01-01T00:00:01Z"),
        pod("a2", "team-a", gpu=1, node="gpu-a", ts="2024-01-01T00:00:02Z"),
        pod("a3", "team-a", gpu=1, node="gpu-a", ts="2024-01-01T00:00:03Z"),
        pod("a4", "team-a", gpu=1, node="gpu-b", ts="2024-01-01T00:00:04Z"),
    ]
    client = RecordingClient()
    fwk = build(nodes, existing, quotas, client=client)
    preemptor = (
        make_pod("b")
        .namespace("team-b")
        .uid("team-b-b")
        .req(**{GPU: "2"})
        .node_selector({"pool": "b"})
        .obj()
    )

    result, _ = schedule(fwk, preemptor)

    # gpu-b has 2 GPUs free, a4 holds the third: evicting a4 leaves the sum at
    # 4 - 1 + 2 = 5 > 4, so one more of team-a's GPUs goes, its least important pod
    # elsewhere: a3 on gpu-a.
    assert victims_of(result) == ("gpu-b", ("team-a/a3", "team-a/a4"))
    assert sorted(key for key, _ in client.deleted) == ["team-a/a3", "team-a/a4"]


def test_683_reclaim_never_takes_a_borrower_below_its_min() -> None:
    """The same, but team-a is within its min everywhere: nothing to reclaim, the pod
    stays pending with the quota's numbers."""
    quotas = [quota("team-a", {GPU: "3"}, {GPU: "4"}), quota("team-b", {GPU: "2"}, {GPU: "4"})]
    nodes = [gpu_node("gpu-a", 2, pool="a"), gpu_node("gpu-b", 2, pool="b")]
    existing = [
        pod("a1", "team-a", gpu=1, node="gpu-a"),
        pod("a2", "team-a", gpu=1, node="gpu-a"),
        pod("a3", "team-a", gpu=1, node="gpu-b"),
        pod("b1", "team-b", gpu=1, node="gpu-b"),
    ]
    fwk = build(nodes, existing, quotas)
    preemptor = make_pod("b2").namespace("team-b").uid("team-b-b2").req(**{GPU: "2"}).obj()

    result, status = schedule(fwk, preemptor)

    assert result == PostFilterResult()
    assert status is not None and status.code is U
    # team-b is over its min with the pod (1 + 2 > 2): only its own lower-priority pods.
    assert "No victims found on node gpu-b for preemptor pod b2" in status.message


# --- eligibility (upstream TestPodEligibleToPreemptOthers) ---------------------------------

ELIGIBILITY_QUOTAS = [
    quota("ns1", {"memory": "50"}, {"memory": "200"}),
    quota("ns2", {"memory": "50"}, {"memory": "200"}),
]


def terminating(name: str, ns: str, priority: int) -> Pod:
    return (
        make_pod(name)
        .namespace(ns)
        .uid(f"{ns}-{name}")
        .priority(priority)
        .req(memory="50")
        .node("node-a")
        .terminating()
        .obj()
    )


ELIGIBILITY_CASES = [
    pytest.param(
        make_pod("p").namespace("ns1").preemption_policy("Never").req(memory="50").obj(),
        [],
        ELIGIBILITY_QUOTAS,
        None,
        (False, "not eligible due to preemptionPolicy=Never."),
        id="pod-with-preempt-never",
    ),
    pytest.param(
        make_pod("p")
        .namespace("ns1")
        .priority(HIGH)
        .nominated_node_name("node-a")
        .req(memory="50")
        .obj(),
        [terminating("t", "ns1", LOW)],
        ELIGIBILITY_QUOTAS,
        Status(UU),
        (True, ""),
        id="nominated-node-unschedulable-and-unresolvable",
    ),
    pytest.param(
        make_pod("p")
        .namespace("ns1")
        .priority(HIGH)
        .nominated_node_name("node-a")
        .req(memory="50")
        .obj(),
        [terminating("t", "ns1", LOW)],
        ELIGIBILITY_QUOTAS,
        Status(U),
        (False, "not eligible due to a terminating pod on the nominated node."),
        id="terminating-lower-priority-pod-in-the-same-namespace",
    ),
    pytest.param(
        make_pod("p")
        .namespace("ns1")
        .priority(HIGH)
        .nominated_node_name("node-a")
        .req(memory="10")
        .obj(),
        [
            terminating("t", "ns2", HIGH),
            pod("x", "ns2", memory=50, node="node-a"),
        ],
        [quota("ns1", {"memory": "100"}, {"memory": "200"}), ELIGIBILITY_QUOTAS[1]],
        Status(U),
        (False, "not eligible due to a terminating pod on the nominated node."),
        id="terminating-pod-of-a-borrower-while-reclaiming",
    ),
    pytest.param(
        make_pod("p")
        .namespace("ns3")
        .priority(HIGH)
        .nominated_node_name("node-a")
        .req(memory="10")
        .obj(),
        [terminating("t", "ns3", LOW)],
        ELIGIBILITY_QUOTAS,
        Status(U),
        (False, "not eligible due to a terminating pod on the nominated node."),
        id="without-quota-a-terminating-pod-without-quota",
    ),
    pytest.param(
        make_pod("p")
        .namespace("ns3")
        .priority(HIGH)
        .nominated_node_name("node-a")
        .req(memory="10")
        .obj(),
        [terminating("t", "ns1", LOW)],
        ELIGIBILITY_QUOTAS,
        Status(U),
        (True, ""),
        id="without-quota-a-terminating-pod-of-a-quota-namespace",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "existing", "quotas", "nominated_status", "expected"), ELIGIBILITY_CASES
)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod,
    existing: list[Pod],
    quotas: list[ElasticQuota],
    nominated_status: Status | None,
    expected: tuple[bool, str],
) -> None:
    fwk = build([node("node-a", memory="1000")], existing, quotas)
    state, _ = pre_filter(fwk, preemptor)
    preemptor_policy = QuotaPreemptor(fwk, state)
    assert preemptor_policy.pod_eligible_to_preempt_others(preemptor, nominated_status) == expected


def test_without_pre_filter_state_a_pod_is_not_eligible() -> None:
    fwk = build([node("node-a", memory="1000")], [], [])
    policy = QuotaPreemptor(fwk, CycleState())
    assert policy.pod_eligible_to_preempt_others(pod("p", "ns1"), None) == (
        False,
        "not eligible due to failed to read from cycleState",
    )


def test_post_filter_with_no_candidate_clears_the_nomination() -> None:
    fwk = build([node("node-a", memory="100")], [pod("a", "ns1", memory=100, node="node-a")], [])
    result, status = fwk.run_post_filter_plugins(
        pre_filter(fwk, pod("p", "ns1", memory=100))[0],
        pod("p", "ns1", memory=100),
        NodeToStatus({"node-a": Status(U, ("Insufficient memory",))}),
    )
    assert result == PostFilterResult()
    assert status == Status(
        U,
        ("0/1 nodes are available: 1 No victims found on node node-a for preemptor pod p.",),
        NAME,
    )


# --- args ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [None, {}, {"kind": "CapacitySchedulingArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"}],
    ids=["no-args", "empty-args", "versioned-envelope-only"],
)
def test_args_accepted(args: dict[str, Any] | None) -> None:
    fwk = build([], [], [])
    assert isinstance(new(args, fwk), CapacityScheduling)


def test_args_with_a_field_are_refused_by_name() -> None:
    fwk = build([], [], [])
    with pytest.raises(ArgsError) as info:
        new({"podGroupBackoffSeconds": 1, "minCandidateNodesPercentage": 5}, fwk)
    assert [e.path for e in info.value.errors] == [
        "podGroupBackoffSeconds",
        "minCandidateNodesPercentage",
    ]
    assert "CapacityScheduling takes no args" in str(info.value)


# --- queueing hints --------------------------------------------------------------------------


def deleted_pod(ns: str, *, node: str = "", nominated: str = "") -> Pod:
    w = make_pod("gone").namespace(ns).req(memory="50")
    if node:
        w = w.node(node)
    if nominated:
        w = w.nominated_node_name(nominated)
    return w.obj()


HINT_CASES = [
    pytest.param(
        deleted_pod("ns1", node="n1"),
        QueueingHint.QUEUE,
        id="queue-on-assigned-pod-of-a-quota-namespace-deleted",
    ),
    pytest.param(
        deleted_pod("ns1", nominated="n1"),
        QueueingHint.QUEUE,
        id="queue-on-nominated-pod-of-a-quota-namespace-deleted",
    ),
    pytest.param(
        deleted_pod("free", node="n1"),
        QueueingHint.QUEUE_SKIP,
        id="skip-on-pod-of-a-namespace-without-quota-deleted",
    ),
    pytest.param(deleted_pod("ns1"), QueueingHint.QUEUE_SKIP, id="skip-on-pending-pod-deleted"),
]


@pytest.mark.parametrize(("deleted", "expected"), HINT_CASES)
def test_is_schedulable_after_pod_change(deleted: Pod, expected: QueueingHint) -> None:
    plugin = plugin_of(build([], [], [MEM_QUOTA]))
    assert plugin.is_schedulable_after_pod_change(pod("p", "ns1"), deleted, None) is expected


def test_the_hint_refuses_what_is_not_a_pod() -> None:
    plugin = plugin_of(build([], [], [MEM_QUOTA]))
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_pod_change(pod("p", "ns1"), object(), None)
