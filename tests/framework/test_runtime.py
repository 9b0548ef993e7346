"""The profile runner: multiPoint expansion, weights, and each point's status rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import PluginConfig, PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, PreFilterResult, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, ProfileError
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, QueuedPodInfo
from kubesched.testing import make_node, make_pod


class Sort:
    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class Binder:
    name = "Binder"

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return None


class FilterScore:
    """Filter + Score: rejects nodes named in args["reject"], scores args["score"]."""

    def __init__(self, name: str, args: Any) -> None:
        self.name = name
        self.args = args

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        if node_info.name in self.args.get("reject", ()):
            return Status.unschedulable(f"rejected by {self.name}")
        return None

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self.args.get("score", {}).get(node_info.name, 0), None

    def score_extensions(self) -> None:
        return None


class Narrow:
    """PreFilter that narrows the nodes to args["nodes"]."""

    name = "Narrow"

    def __init__(self, args: Any) -> None:
        self.args = args

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> tuple[Any, Status | None]:
        if "code" in self.args:
            return None, Status(self.args["code"], ("prefilter says no",))
        return PreFilterResult(frozenset(self.args.get("nodes", ()))), None

    def pre_filter_extensions(self) -> None:
        return None


def registry() -> Registry:
    return Registry(
        {
            "Sort": lambda a, h: Sort(),
            "Binder": lambda a, h: Binder(),
            "A": lambda a, h: FilterScore("A", a),
            "B": lambda a, h: FilterScore("B", a),
            "Narrow": lambda a, h: Narrow(a),
        }
    )


def refs(*names: str, weight: int | None = None) -> tuple[PluginRef, ...]:
    return tuple(PluginRef(n, weight) for n in names)


def profile(
    multi: tuple[PluginRef, ...] = (),
    *,
    score: PluginSet | None = None,
    filter: PluginSet | None = None,
    args: dict[str, Any] | None = None,
) -> Profile:
    plugins = Plugins(
        multi_point=PluginSet(refs("Sort", "Binder") + multi, ()),
        score=score or PluginSet((), ()),
        filter=filter or PluginSet((), ()),
    )
    configs = tuple(
        PluginConfig(name, a, f"profiles[0].pluginConfig[{i}].args")
        for i, (name, a) in enumerate((args or {}).items())
    )
    return Profile("test", None, plugins, configs, "profiles[0]")


def names(plugins: list[Any]) -> list[str]:
    return [p.name for p in plugins]


@pytest.mark.parametrize(
    ("prof", "filters", "scores", "weights"),
    [
        pytest.param(
            profile(refs("A", "B")),
            ["A", "B"],
            ["A", "B"],
            {"A": 1, "B": 1},
            id="multipoint-enables-every-point-a-plugin-implements",
        ),
        pytest.param(
            profile((*refs("A"), PluginRef("B", 3))),
            ["A", "B"],
            ["A", "B"],
            {"A": 1, "B": 3},
            id="multipoint-weight-applies-to-score",
        ),
        pytest.param(
            profile(refs("A", "B"), score=PluginSet((PluginRef("B", 5),), ())),
            ["A", "B"],
            ["B", "A"],
            {"A": 1, "B": 5},
            id="explicit-score-overrides-multipoint-and-comes-first",
        ),
        pytest.param(
            profile(refs("A", "B"), filter=PluginSet((), refs("A"))),
            ["B"],
            ["A", "B"],
            {"A": 1, "B": 1},
            id="disabled-at-one-point-keeps-the-others",
        ),
        pytest.param(
            profile(refs("A", "B"), score=PluginSet((), refs("*"))),
            ["A", "B"],
            [],
            {},
            id="star-disables-multipoint-expansion-at-that-point",
        ),
        pytest.param(
            profile(refs("A", weight=0)),
            ["A"],
            ["A"],
            {"A": 1},
            id="weight-zero-means-one",
        ),
    ],
)
def test_plugins_are_placed_at_points(
    prof: Profile, filters: list[str], scores: list[str], weights: dict[str, int]
) -> None:
    fwk = Framework(prof, registry())
    assert names(fwk.plugins_at("filter")) == filters
    assert names(fwk.plugins_at("score")) == scores
    assert fwk.score_weights == weights


def test_unknown_plugin_names_its_config_path() -> None:
    prof = profile(refs("Nope"))
    with pytest.raises(ProfileError) as err:
        Framework(prof, registry())
    assert [str(e) for e in err.value.errors] == [
        'profiles[0].plugins.multiPoint.enabled[2].name: Invalid value: "Nope": plugin does not exist'
    ]


def test_plugin_that_does_not_implement_an_explicit_point_is_an_error() -> None:
    prof = profile(filter=PluginSet(refs("Sort"), ()))
    with pytest.raises(ProfileError, match="plugin does not extend FilterPlugin"):
        Framework(prof, registry())


def test_args_errors_are_prefixed_with_the_plugin_config_path() -> None:
    from kubesched.framework.args import ArgsError, FieldError

    def bad(args: Any, handle: Any) -> Any:
        raise ArgsError([FieldError.invalid("maxSkew", 0, "must be greater than zero")])

    reg = registry().merged({"Bad": bad})
    prof = profile(refs("Bad"), args={"Bad": {"maxSkew": 0}})
    with pytest.raises(ProfileError) as err:
        Framework(prof, reg)
    assert str(err.value.errors[0]) == (
        "profiles[0].pluginConfig[0].args.maxSkew: Invalid value: 0: must be greater than zero"
    )


def framework_with(prof: Profile, *node_names: str) -> Framework:
    nodes = [make_node(n).capacity(cpu="1", memory="1Gi", pods="10").obj() for n in node_names]
    return Framework(prof, registry(), snapshot=Snapshot.from_objects(nodes, ()))


def test_filter_returns_first_rejection_with_plugin_name() -> None:
    fwk = framework_with(profile(refs("A", "B"), args={"A": {}, "B": {"reject": ["n1"]}}), "n1")
    status = fwk.run_filter_plugins(CycleState(), make_pod().obj(), fwk.snapshot.get("n1"))
    assert status == Status(Code.UNSCHEDULABLE, ("rejected by B",), "B")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param({"nodes": ["n1"]}, None, None, id="narrowing-result-is-success"),
        pytest.param(
            {"nodes": []},
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) didn't satisfy plugin Narrow",
            id="empty-result-is-unresolvable",
        ),
        pytest.param(
            {"code": Code.UNSCHEDULABLE},
            Code.UNSCHEDULABLE,
            "prefilter says no",
            id="unschedulable-is-kept-while-others-run",
        ),
        pytest.param(
            {"code": Code.ERROR},
            Code.ERROR,
            'running PreFilter plugin "Narrow": prefilter says no',
            id="error-is-wrapped",
        ),
    ],
)
def test_pre_filter_status_rules(
    args: dict[str, Any], code: Code | None, message: str | None
) -> None:
    fwk = framework_with(profile(refs("Narrow"), args={"Narrow": args}), "n1", "n2")
    result, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod().obj())
    if code is None:
        assert status is None
        assert result == PreFilterResult(frozenset({"n1"}))
    else:
        assert status is not None
        assert (status.code, status.message, status.plugin) == (
            code,
            message,
            "" if message and message.startswith("node(s)") else "Narrow",
        )


def test_score_out_of_range_is_an_error() -> None:
    fwk = framework_with(profile(refs("A"), args={"A": {"score": {"n1": 101}}}), "n1")
    nodes = fwk.snapshot.list()
    _, status = fwk.run_score_plugins(CycleState(), make_pod().obj(), nodes)
    assert status is not None and status.code is Code.ERROR
    assert "invalid score 101" in status.message


def test_events_default_to_wildcard_for_plugins_without_enqueue_extensions() -> None:
    fwk = framework_with(profile(refs("A")), "n1")
    events = fwk.events_to_register()
    assert list(events) == ["A"]
    assert events["A"][0].event.resource.value == "*"


def test_weight_of_a_plugin_named_by_import_path_is_kept_under_its_own_name() -> None:
    reg = registry().merged({"mod:factory": lambda a, h: FilterScore("Custom", a)})
    fwk = Framework(profile((PluginRef("mod:factory", 7),)), reg)
    assert fwk.score_weights == {"Custom": 7}
