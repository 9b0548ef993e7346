"""Default plugins and their merging with a profile's own (upstream's TestMergePlugins)."""

from __future__ import annotations

import pytest

from kubesched.config import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINT_WIRE_NAMES,
    EXTENSION_POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    default_config,
    default_plugins,
    merge_plugins,
    validate_config,
)


def refs(*items: str | tuple[str, int]) -> tuple[PluginRef, ...]:
    """Plugin refs from names, or (name, weight) pairs."""
    return tuple(PluginRef(i) if isinstance(i, str) else PluginRef(*i) for i in items)


def test_default_plugins_are_upstreams_multipoint_list_in_order() -> None:
    assert default_plugins() == Plugins(
        multi_point=PluginSet(
            enabled=refs(
                "SchedulingGates",
                "PrioritySort",
                "NodeUnschedulable",
                "NodeName",
                ("TaintToleration", 3),
                ("NodeAffinity", 2),
                "NodePorts",
                ("NodeResourcesFit", 1),
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                ("PodTopologySpread", 2),
                ("InterPodAffinity", 2),
                "DynamicResources",
                "DefaultPreemption",
                ("NodeResourcesBalancedAllocation", 1),
                ("ImageLocality", 1),
                "DefaultBinder",
            )
        )
    )


def test_default_config_has_one_valid_default_profile() -> None:
    config = default_config()
    assert [p.scheduler_name for p in config.profiles] == [DEFAULT_SCHEDULER_NAME]
    assert config.profiles[0].plugins == default_plugins()
    assert config.leader_election.resource_name == "kubesched"
    assert validate_config(config) == []


def test_extension_points_have_wire_names() -> None:
    assert EXTENSION_POINTS[0] == "pre_enqueue"
    assert EXTENSION_POINT_WIRE_NAMES["queue_sort"] == "queueSort"
    assert EXTENSION_POINT_WIRE_NAMES["multi_point"] == "multiPoint"
    assert set(EXTENSION_POINT_WIRE_NAMES) == set(EXTENSION_POINTS)


def filters(enabled: tuple[PluginRef, ...] = (), disabled: tuple[PluginRef, ...] = ()) -> Plugins:
    return Plugins(filter=PluginSet(enabled, disabled))


def multi(enabled: tuple[PluginRef, ...] = (), disabled: tuple[PluginRef, ...] = ()) -> Plugins:
    return Plugins(multi_point=PluginSet(enabled, disabled))


@pytest.mark.parametrize(
    ("defaults", "custom", "expected"),
    [
        pytest.param(
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            filters(refs("CustomPlugin")),
            filters(refs("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
            id="a custom plugin is appended after the defaults",
        ),
        pytest.param(
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            filters(refs("CustomPlugin", "DefaultPlugin2"), refs("DefaultPlugin2")),
            filters(
                refs("DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"), refs("DefaultPlugin2")
            ),
            id="a disabled default re-enabled moves after the custom plugin",
        ),
        pytest.param(
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            filters(refs("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), refs("*")),
            filters(refs("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), refs("*")),
            id="disabling all defaults lets the custom order rule",
        ),
        pytest.param(
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            filters(refs("DefaultPlugin2", "DefaultPlugin1"), refs("*")),
            filters(refs("DefaultPlugin2", "DefaultPlugin1"), refs("*")),
            id="defaults can be reordered by disabling them all",
        ),
        pytest.param(
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            None,
            filters(refs("DefaultPlugin1", "DefaultPlugin2")),
            id="no custom plugins keeps the defaults",
        ),
        pytest.param(
            filters(refs("Plugin1", "Plugin2", "Plugin3")),
            filters(refs(("Plugin1", 2), ("Plugin3", 3))),
            filters(refs(("Plugin1", 2), "Plugin2", ("Plugin3", 3))),
            id="a custom plugin overrides a default in place",
        ),
        pytest.param(
            filters(refs("Plugin1", "Plugin2", "Plugin3")),
            filters(refs(("Plugin2", 2), ("Plugin1", 1))),
            filters(refs(("Plugin1", 1), ("Plugin2", 2), "Plugin3")),
            id="overrides keep the default order",
        ),
        pytest.param(
            filters(refs("Plugin1", "Plugin2", "Plugin3")),
            filters(refs("Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4))),
            filters(refs("Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2))),
            id="of a repeated custom plugin the last replaces the default",
        ),
        pytest.param(
            multi(refs("DefaultPlugin1", "DefaultPlugin2")),
            multi(refs("CustomPlugin")),
            multi(refs("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
            id="a custom multiPoint plugin is appended",
        ),
        pytest.param(
            multi(refs("DefaultPlugin1", "DefaultPlugin2")),
            Plugins(
                multi_point=PluginSet(
                    refs("CustomPlugin", "CustomPlugin2"), refs("DefaultPlugin2")
                ),
                score=PluginSet(disabled=refs("CustomPlugin2")),
            ),
            Plugins(
                multi_point=PluginSet(
                    refs("DefaultPlugin1", "CustomPlugin", "CustomPlugin2"), refs("DefaultPlugin2")
                ),
                score=PluginSet(disabled=refs("CustomPlugin2")),
            ),
            id="disabled multiPoint and score entries are kept",
        ),
        pytest.param(
            multi(refs("DefaultPlugin")),
            multi(refs(("DefaultPlugin", 5))),
            multi(refs(("DefaultPlugin", 5))),
            id="a multiPoint default takes a custom weight",
        ),
        pytest.param(
            multi(refs("DefaultPlugin"), refs("DefaultPlugin2")),
            multi(refs("CustomPlugin")),
            multi(refs("DefaultPlugin", "CustomPlugin"), refs("DefaultPlugin2")),
            id="a default's disabled multiPoint entry survives",
        ),
        pytest.param(
            Plugins(
                multi_point=PluginSet(refs("DefaultPlugin")),
                score=PluginSet(disabled=refs("DefaultPlugin2")),
            ),
            multi(refs("CustomPlugin")),
            Plugins(
                multi_point=PluginSet(refs("DefaultPlugin", "CustomPlugin")),
                score=PluginSet(disabled=refs("DefaultPlugin2")),
            ),
            id="a default's disabled score entry survives",
        ),
        pytest.param(
            multi(refs("DefaultPlugin")),
            multi(disabled=refs("DefaultPlugin")),
            multi(disabled=refs("DefaultPlugin")),
            id="a multiPoint set with only disabled entries is merged",
        ),
        pytest.param(
            filters(refs("A")),
            filters(disabled=(PluginRef("A", 7),)),
            filters(disabled=refs("A")),
            id="weights of disabled entries are dropped",
        ),
    ],
)
def test_merge_plugins(defaults: Plugins, custom: Plugins | None, expected: Plugins) -> None:
    assert merge_plugins(defaults, custom) == expected


def test_score_weight_treats_unset_and_zero_as_one() -> None:
    assert [PluginRef("A", w).score_weight for w in (None, 0, 3)] == [1, 1, 3]
