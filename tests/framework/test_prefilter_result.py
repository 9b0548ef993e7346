"""A PreFilterResult narrows the attempt to the nodes it names, as upstream's
``findNodesThatFitPod``: only those are filtered and scored, the others get one absent
status ("node(s) didn't satisfy plugin(s) [NodeAffinity]") that the FailedScheduling
message counts, names of nodes that do not exist are dropped, and the results of two
plugins intersect. Every case runs on the columnar path and on the per-node path, which
must agree."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubesched.config import PluginConfig, PluginRef, PluginSet, default_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Nominator
from kubesched.framework.interface import Code, PreFilterResult, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, ScheduleResult, SchedulingAlgorithm
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import make_node, make_pod

NODES = ("n0", "n1", "n2", "n3", "n4", "n5")
ABSENT_NODE_AFFINITY = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't satisfy plugin(s) [NodeAffinity]",),
    "NodeAffinity",
)


class Recorder:
    """Filter and Score that let every node through and remember the nodes they saw."""

    name = "Recorder"

    def __init__(self) -> None:
        self.filtered: list[str] = []
        self.scored: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.filtered.append(node_info.name)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        self.scored.append(node_info.name)
        return 0, None

    def score_extensions(self) -> None:
        return None


class Narrow:
    """A second PreFilter that names nodes (args["nodes"])."""

    name = "Narrow"

    def __init__(self, args: Any) -> None:
        self.nodes = frozenset(args.get("nodes", ()))

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[Any, Status | None]:
        return PreFilterResult(self.nodes), None

    def pre_filter_extensions(self) -> None:
        return None


class Setup:
    """The default profile plus Recorder (and Narrow, when given nodes) over ``NODES``."""

    def __init__(self, columnar: bool, narrow: list[str] | None = None, full: str = "") -> None:
        self.recorder = Recorder()
        extra: dict[str, Any] = {"Recorder": lambda a, h: self.recorder}
        refs = [PluginRef("Recorder")]
        if narrow is not None:
            extra["Narrow"] = lambda a, h: Narrow(a)
            refs.append(PluginRef("Narrow"))
        profile = default_config().profiles[0]
        plugins = profile.plugins
        multi = PluginSet((*plugins.multi_point.enabled, *refs), plugins.multi_point.disabled)
        configs = (PluginConfig("Narrow", {"nodes": narrow}),) if narrow is not None else ()
        profile = dataclasses.replace(
            profile,
            percentage_of_nodes_to_score=100,
            plugins=dataclasses.replace(plugins, multi_point=multi),
            plugin_config=(*profile.plugin_config, *configs),
        )
        nodes = [
            make_node(name)
            .capacity(cpu="4", memory="8Gi", pods="1" if name == full else "10")
            .label("topology.kubernetes.io/zone", "abc"[i % 3])
            .obj()
            for i, name in enumerate(NODES)
        ]
        pods = [make_pod("occupant").node(full).obj()] if full else []
        registry = in_tree_registry().merged(extra)
        self.snapshot = Snapshot.from_objects(nodes, pods, columnar=columnar)
        self.framework = Framework(
            profile,
            registry,
            snapshot=self.snapshot,
            nominator=Nominator(),
            rng=random.Random(0),
        )
        self.algorithm = SchedulingAlgorithm(self.framework, columnar=columnar)

    def schedule(self, pod: Pod, *, explain: bool = False) -> ScheduleResult:
        return self.algorithm.schedule_pod(CycleState(), pod, explain=explain)

    def fail(self, pod: Pod) -> FitError:
        with pytest.raises(FitError) as err:
            self.schedule(pod)
        return err.value


def pinned(*names: str) -> Pod:
    """A pod pinned by required node affinity on metadata.name, as the DaemonSet
    controller pins its pods; a field selector takes one name, so each name is a term of
    its own (terms are ORed)."""
    wrapper = make_pod("daemon").req(cpu="100m")
    for name in names:
        wrapper.node_affinity_term(
            [], [{"key": "metadata.name", "operator": "In", "values": [name]}]
        )
    return wrapper.obj()


PATHS = [pytest.param(True, id="columnar"), pytest.param(False, id="per-node")]


@pytest.mark.parametrize("columnar", PATHS)
@pytest.mark.parametrize("explain", [False, True], ids=["schedule", "explain"])
def test_only_the_named_nodes_are_filtered_and_scored(columnar: bool, explain: bool) -> None:
    setup = Setup(columnar)
    result = setup.schedule(pinned("n4", "n1"), explain=explain)
    assert sorted(setup.recorder.filtered) == ["n1", "n4"]
    assert sorted(setup.recorder.scored) == ["n1", "n4"]
    assert result.suggested_host in ("n1", "n4")
    # Upstream's EvaluatedNodes: the feasible ones and those with an explicit status.
    assert (result.evaluated_nodes, result.feasible_nodes) == (2, 2)
    statuses = result.diagnosis.node_to_status
    assert len(statuses) == 0
    for name in ("n0", "n2", "n3", "n5"):
        assert statuses.get(name) == ABSENT_NODE_AFFINITY
    assert result.diagnosis.unschedulable_plugins == {"NodeAffinity"}


@pytest.mark.parametrize("columnar", PATHS)
def test_one_named_node_is_chosen_without_scoring(columnar: bool) -> None:
    setup = Setup(columnar)
    result = setup.schedule(pinned("n3"))
    assert result.suggested_host == "n3"
    assert setup.recorder.filtered == ["n3"]
    assert setup.recorder.scored == []  # one feasible node: upstream skips scoring


@pytest.mark.parametrize("columnar", PATHS)
def test_the_other_nodes_are_counted_with_the_absent_status(columnar: bool) -> None:
    setup = Setup(columnar, full="n2")
    fit = setup.fail(pinned("n2"))
    assert str(fit) == (
        "0/6 nodes are available: 1 Too many pods, "
        "5 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    statuses = fit.diagnosis.node_to_status
    assert len(statuses) == 1
    assert statuses.get("n2").reasons == ("Too many pods",)
    assert statuses.get("n0") == ABSENT_NODE_AFFINITY
    assert fit.diagnosis.unschedulable_plugins == {"NodeAffinity", "NodeResourcesFit"}
    assert setup.recorder.filtered == []  # NodeResourcesFit rejected n2 first


@pytest.mark.parametrize("columnar", PATHS)
@pytest.mark.parametrize(
    ("names", "feasible"),
    [
        pytest.param(("ghost",), [], id="only-a-missing-node-named"),
        pytest.param(("ghost", "n5"), ["n5"], id="a-missing-node-is-dropped"),
    ],
)
def test_a_name_that_does_not_exist_is_dropped(
    columnar: bool, names: tuple[str, ...], feasible: list[str]
) -> None:
    setup = Setup(columnar)
    pod = pinned(*names)
    if not feasible:
        fit = setup.fail(pod)
        assert str(fit) == (
            "0/6 nodes are available: 6 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        )
        assert fit.diagnosis.unschedulable_plugins == {"NodeAffinity"}
    else:
        assert setup.schedule(pod).suggested_host == feasible[0]
    assert setup.recorder.filtered == feasible


@pytest.mark.parametrize("columnar", PATHS)
def test_two_plugins_results_intersect(columnar: bool) -> None:
    setup = Setup(columnar, narrow=["n1", "n2", "n3"])
    result = setup.schedule(pinned("n0", "n2", "n3", "n4"))
    assert sorted(setup.recorder.filtered) == ["n2", "n3"]
    assert result.suggested_host in ("n2", "n3")
    absent = result.diagnosis.node_to_status.get("n1")
    # Upstream names the plugins, sorted, and no single plugin rejected the node.
    assert absent == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) didn't satisfy plugin(s) [Narrow NodeAffinity]",),
    )
    assert result.diagnosis.unschedulable_plugins == {"Narrow", "NodeAffinity"}


@pytest.mark.parametrize("columnar", PATHS)
def test_two_plugins_naming_disjoint_nodes_reject_the_pod(columnar: bool) -> None:
    setup = Setup(columnar, narrow=["n1"])
    fit = setup.fail(pinned("n2"))
    assert str(fit) == (
        "0/6 nodes are available: "
        "node(s) didn't satisfy plugin(s) [Narrow NodeAffinity] simultaneously."
    )
    assert fit.diagnosis.unschedulable_plugins == {"Narrow", "NodeAffinity"}
    assert setup.recorder.filtered == []


@pytest.mark.parametrize("columnar", PATHS)
def test_the_rotating_start_moves_by_the_nodes_processed(columnar: bool) -> None:
    setup = Setup(columnar)
    setup.schedule(pinned("n1", "n4"))
    # Two nodes processed of six: the next attempt over every node starts at the third.
    assert setup.algorithm.next_start_node_index == 2
    setup.schedule(make_pod("plain").obj())
    assert setup.algorithm.next_start_node_index == 2  # 6 processed: back to the same start


# --- NodeToStatus.nodes_for_code: what preemption looks at ------------------------------


def infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in names]


@pytest.mark.parametrize(
    ("statuses", "absent", "expected"),
    [
        pytest.param(
            {"n3": Status.unschedulable("Insufficient cpu"), "n1": Status.unschedulable("x")},
            ABSENT_NODE_AFFINITY,
            ["n1", "n3"],
            id="absent-unresolvable-only-listed-nodes-in-node-order",
        ),
        pytest.param(
            {"n2": Status.unresolvable("no"), "n0": Status.unschedulable("x")},
            Status(Code.UNSCHEDULABLE, ("prefilter",)),
            ["n0", "n1", "n3"],
            id="absent-unschedulable-every-absent-node-too",
        ),
        pytest.param(
            {"ghost": Status.unschedulable("x")},
            ABSENT_NODE_AFFINITY,
            [],
            id="a-status-of-a-node-not-in-the-list-is-ignored",
        ),
    ],
)
def test_nodes_for_code_with_and_without_positions(
    statuses: dict[str, Status], absent: Status, expected: list[str]
) -> None:
    nodes = infos("n0", "n1", "n2", "n3")
    position = {n.name: i for i, n in enumerate(nodes)}.get
    to_status = NodeToStatus(dict(statuses), absent)
    with_positions = to_status.nodes_for_code(Code.UNSCHEDULABLE, nodes, position)
    walking = to_status.nodes_for_code(Code.UNSCHEDULABLE, nodes)
    assert [n.name for n in with_positions] == expected
    assert [n.name for n in walking] == expected
