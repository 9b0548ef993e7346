"""CapacityScheduling's accounts: the use derived from the snapshot plus the pods in
flight, Reserve / Unreserve on every failure path (a later Reserve plugin failing, a
failed bind, a group cycle rolled back), and the comparisons of elasticquota.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import PluginRef as Ref
from kubesched.config import Plugins, PluginSet, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.interface import Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource
from kubesched.plugins import defaultbinder, queuesort
from kubesched.plugins.capacityscheduling import NAME, CapacityScheduling, new
from kubesched.plugins.capacityscheduling.elasticquota import (
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    format_amount,
)
from kubesched.plugins.noderesources import fit
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_elastic_quota

GPU = "nvidia.com/gpu"


def gpu_pod(name: str, ns: str = "team-a", gpus: int = 1, node: str = "") -> Pod:
    w = make_pod(name).namespace(ns).uid(f"{ns}-{name}").req(**{GPU: str(gpus)})
    return (w.node(node) if node else w).obj()


class FailingReserve:
    """A Reserve plugin after CapacityScheduling that refuses every pod."""

    name = "FailingReserve"

    def __init__(self) -> None:
        self.unreserved: list[str] = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.unschedulable("refused by a later plugin")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.unreserved.append(pod.key)


def build(
    pods: list[Pod], quotas: list[ElasticQuota], *, failing: FailingReserve | None = None
) -> Framework:
    def refs(*names: str) -> PluginSet:
        return PluginSet(tuple(Ref(n) for n in names))

    reserve = (NAME, FailingReserve.name) if failing is not None else (NAME,)
    profile = Profile(
        plugins=Plugins(
            queue_sort=refs(queuesort.NAME),
            pre_filter=refs(fit.NAME, NAME),
            filter=refs(fit.NAME),
            post_filter=refs(NAME),
            reserve=refs(*reserve),
            bind=refs(defaultbinder.NAME),
        )
    )
    factories: dict[str, Any] = {
        queuesort.NAME: queuesort.new,
        defaultbinder.NAME: defaultbinder.new,
        fit.NAME: fit.new,
        NAME: new,
        FailingReserve.name: lambda args, handle: failing,
    }
    nodes = [make_node(f"gpu-{i}").capacity(pods=10, **{GPU: 2}).obj() for i in range(3)]
    return Framework(
        profile,
        Registry(factories),
        cluster=StaticClusterLister(elastic_quotas=quotas),
        snapshot=Snapshot.from_objects(nodes, pods),
    )


QUOTAS = [
    make_elastic_quota("team-a").min(**{GPU: "2"}).max(**{GPU: "3"}).obj(),
    make_elastic_quota("team-b").min(**{GPU: "2"}).max(**{GPU: "4"}).obj(),
]


def plugin_of(fwk: Framework) -> CapacityScheduling:
    plugin = fwk.plugins[NAME]
    assert isinstance(plugin, CapacityScheduling)
    return plugin


def used(fwk: Framework, ns: str = "team-a") -> int:
    info = plugin_of(fwk).quota_infos().get(ns)
    assert info is not None
    return info.used.get(GPU)


def assume(fwk: Framework, pod: Pod, node: str) -> Pod:
    """What the scheduler does before Reserve: the pod counts on its node."""
    assumed = pod.evolve(node_name=node)
    fwk.snapshot.add_pod(assumed)
    return assumed


# --- derived from the snapshot ----------------------------------------------------------


def test_use_is_the_requests_of_the_namespaces_pods_on_nodes() -> None:
    fwk = build(
        [gpu_pod("a1", node="gpu-0"), gpu_pod("a2", gpus=2, node="gpu-1"), gpu_pod("b1", "team-b")],
        QUOTAS,
    )
    assert (used(fwk), used(fwk, "team-b")) == (3, 0)  # b1 is not assigned


def test_use_follows_pods_added_and_removed_on_nodes() -> None:
    fwk = build([gpu_pod("a1", node="gpu-0")], QUOTAS)
    assert used(fwk) == 1
    fwk.snapshot.add_pod(gpu_pod("a2", node="gpu-2"))
    assert used(fwk) == 2
    fwk.snapshot.remove_pod(gpu_pod("a1", node="gpu-0"))
    assert used(fwk) == 1


def test_an_account_handed_out_keeps_its_pods_when_the_snapshot_changes() -> None:
    """A cycle's accounts share the pods of the refresh; the next refresh copies before
    it changes them, so an earlier cycle's accounts (a group cycle's members) hold."""
    fwk = build([gpu_pod("a1", node="gpu-0")], QUOTAS)
    plugin = plugin_of(fwk)
    earlier = plugin.quota_infos().get("team-a")
    fwk.snapshot.add_pod(gpu_pod("a2", node="gpu-1"))
    fwk.snapshot.remove_pod(gpu_pod("a1", node="gpu-0"))
    later = plugin.quota_infos().get("team-a")
    assert earlier is not None and later is not None
    assert (earlier.counts("team-a/a1"), earlier.counts("team-a/a2")) == (True, False)
    assert (later.counts("team-a/a1"), later.counts("team-a/a2")) == (False, True)
    assert (earlier.used.get(GPU), later.used.get(GPU)) == (1, 1)


def test_a_dry_run_clone_changes_only_itself() -> None:
    fwk = build([gpu_pod("a1", node="gpu-0")], QUOTAS)
    account = plugin_of(fwk).quota_infos().get("team-a")
    assert account is not None
    copy = account.clone()
    assert copy.remove_pod(gpu_pod("a1")) and not copy.remove_pod(gpu_pod("a1"))
    assert copy.add_pod(gpu_pod("a1")) and copy.add_pod(gpu_pod("a9"))
    assert copy.used.get(GPU) == 2 and account.used.get(GPU) == 1
    assert not account.counts("team-a/a9")


def test_a_quota_added_later_counts_the_pods_already_running() -> None:
    """Upstream's addElasticQuota starts at zero use; derived, nothing is lost."""
    fwk = build([gpu_pod("a1", node="gpu-0")], QUOTAS[1:])
    assert plugin_of(fwk).quota_infos().get("team-a") is None
    cluster = fwk.cluster
    assert isinstance(cluster, StaticClusterLister)
    cluster.put_elastic_quota(QUOTAS[0])
    assert used(fwk) == 1


# --- Reserve / Unreserve ------------------------------------------------------------------


def test_reserve_counts_a_pod_the_snapshot_does_not_hold_until_unreserve() -> None:
    fwk = build([], QUOTAS)
    plugin = plugin_of(fwk)
    p = gpu_pod("a1")
    plugin.reserve(CycleState(), p, "gpu-0")
    assert used(fwk) == 1
    plugin.unreserve(CycleState(), p, "gpu-0")
    plugin.unreserve(CycleState(), p, "gpu-0")  # idempotent
    assert used(fwk) == 0


def test_a_reserved_pod_the_snapshot_holds_counts_once() -> None:
    fwk = build([], QUOTAS)
    plugin = plugin_of(fwk)
    assumed = assume(fwk, gpu_pod("a1"), "gpu-0")
    plugin.reserve(CycleState(), assumed, "gpu-0")
    assert used(fwk) == 1
    assert plugin.usage.in_flight() == []  # the snapshot counts it from now on


def test_a_pod_bound_and_deleted_before_the_next_cycle_leaves_no_use_behind() -> None:
    """Reserve of an assumed pod records nothing beside the snapshot: once the pod is
    gone from it (bound, ran, deleted), it counts nowhere, with no cycle in between."""
    fwk = build([], QUOTAS)
    assumed = assume(fwk, gpu_pod("a1"), "gpu-0")
    assert fwk.run_reserve_plugins_reserve(CycleState(), assumed, "gpu-0") is None
    fwk.snapshot.remove_pod(assumed)
    assert used(fwk) == 0


def test_a_later_reserve_plugin_failing_leaves_no_use_behind() -> None:
    """The scheduler's path: assume, Reserve fails in a later plugin, Unreserve every
    Reserve plugin in reverse order, forget the assumed pod."""
    failing = FailingReserve()
    fwk = build([], QUOTAS, failing=failing)
    state = CycleState()
    p = gpu_pod("a1")
    assumed = assume(fwk, p, "gpu-0")

    status = fwk.run_reserve_plugins_reserve(state, assumed, "gpu-0")
    assert status is not None and status.message == "refused by a later plugin"
    assert used(fwk) == 1  # still assumed
    fwk.run_reserve_plugins_unreserve(state, assumed, "gpu-0")
    fwk.snapshot.remove_pod(assumed)

    assert failing.unreserved == ["team-a/a1"]
    assert used(fwk) == 0
    assert plugin_of(fwk).usage.in_flight() == []


def test_a_failed_bind_after_the_pod_was_counted_leaves_no_use_behind() -> None:
    """Reserve went through and another cycle saw the pod (so its in-flight entry was
    dropped); then the bind fails: Unreserve and forget take it back."""
    fwk = build([], QUOTAS)
    plugin = plugin_of(fwk)
    state = CycleState()
    assumed = assume(fwk, gpu_pod("a1"), "gpu-0")
    assert fwk.run_reserve_plugins_reserve(state, assumed, "gpu-0") is None
    _, status = plugin.pre_filter(CycleState(), gpu_pod("a2"), fwk.snapshot.list())
    assert status is None and used(fwk) == 1

    fwk.run_reserve_plugins_unreserve(state, assumed, "gpu-0")
    fwk.snapshot.remove_pod(assumed)

    assert used(fwk) == 0


def test_a_group_cycle_reserves_members_against_one_snapshot_and_rolls_back() -> None:
    """Members reserved before any is assumed count for the next member's PreFilter
    (team-a: max 3, two reserved, the third asks for 2: over max); rolling back the
    group gives everything back."""
    fwk = build([], QUOTAS)
    plugin = plugin_of(fwk)
    members = [gpu_pod(f"m{i}") for i in range(2)]
    for i, member in enumerate(members):
        _, status = plugin.pre_filter(CycleState(), member, fwk.snapshot.list())
        assert status is None
        assert plugin.reserve(CycleState(), member, f"gpu-{i}") is None
    _, status = plugin.pre_filter(CycleState(), gpu_pod("m2", gpus=2), fwk.snapshot.list())
    assert status is not None and "used 2, request 2, max 3" in status.message

    for member in reversed(members):
        plugin.unreserve(CycleState(), member, "")

    assert used(fwk) == 0
    _, status = plugin.pre_filter(CycleState(), gpu_pod("m2", gpus=2), fwk.snapshot.list())
    assert status is None


def test_a_reserved_pod_of_a_namespace_without_quota_counts_nowhere() -> None:
    fwk = build([], QUOTAS)
    plugin = plugin_of(fwk)
    plugin.reserve(CycleState(), gpu_pod("x", "free"), "gpu-0")
    assert [info.used.get(GPU) for info in plugin.quota_infos()] == [0, 0]


# --- comparisons (upstream elasticquota_test.go) ------------------------------------------


def info(min_: dict[str, str] | None, max_: dict[str, str] | None) -> ElasticQuotaInfo:
    w = make_elastic_quota("ns")
    if min_ is not None:
        w = w.min(**min_)
    if max_ is not None:
        w = w.max(**max_)
    return ElasticQuotaInfo.of(w.obj())


def amount(*, memory: int = 0, gpu: int = 0) -> Resource:
    return Resource(memory=memory, scalar={GPU: gpu} if gpu else {})


COMPARISON_CASES = [
    pytest.param(
        info(None, None), "over_max_with", amount(memory=10**15), [], id="absent-max-is-unlimited"
    ),
    pytest.param(
        info(None, None),
        "over_min_with",
        amount(memory=1),
        ["memory"],
        id="absent-min-guarantees-nothing",
    ),
    pytest.param(
        info(None, {"memory": "100"}),
        "over_max_with",
        Resource(milli_cpu=1),
        ["cpu"],
        id="max-without-cpu-bounds-cpu-at-zero",
    ),
    pytest.param(
        info(None, {"memory": "100"}),
        "over_max_with",
        amount(gpu=8),
        [],
        id="max-without-an-extended-resource-does-not-bound-it",
    ),
    pytest.param(
        info({"memory": "100"}, None),
        "over_min_with",
        amount(gpu=1),
        [GPU],
        id="min-without-an-extended-resource-guarantees-none",
    ),
    pytest.param(
        info(None, {"memory": "100"}),
        "over_max_with",
        Resource(memory=100),
        [],
        id="equal-to-max-is-within",
    ),
    pytest.param(
        info(None, {"memory": "100"}),
        "over_max_with",
        Resource(memory=101),
        ["memory"],
        id="one-over-max-is-over",
    ),
]


@pytest.mark.parametrize(("account", "check", "asked", "expected"), COMPARISON_CASES)
def test_comparisons(
    account: ElasticQuotaInfo, check: str, asked: Resource, expected: list[str]
) -> None:
    assert getattr(account, check)(asked) == expected


def test_aggregated_use_over_the_sum_of_min() -> None:
    a = info({GPU: "4"}, None)
    b = info({GPU: "1"}, None)
    a.add_pod(gpu_pod("a1", "ns", gpus=5))
    infos = ElasticQuotaInfos({"a": a, "b": b})
    assert infos.aggregated_over_min_with(Resource()) == []
    one = Resource(scalar={GPU: 1})
    assert infos.aggregated_over_min_with(one) == [GPU]
    assert infos.describe_over_min([GPU], one, Resource()) == (
        f"{GPU}: total used 5, request 1, sum of min 5"
    )


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("cpu", 500, "500m"),
        ("cpu", 2000, "2"),
        ("memory", 40 * 1024**3, "40Gi"),
        ("memory", 1000, "1000"),
        (GPU, 3, "3"),
        ("memory", 2**63 - 1, "unlimited"),
    ],
    ids=["millicores", "whole-cores", "gibibytes", "plain-bytes", "extended", "bound"],
)
def test_format_amount(name: str, value: int, text: str) -> None:
    assert format_amount(name, value) == text
