"""The package root's public names: sorted, all importable, nothing else promised."""

from __future__ import annotations

import kubesched


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert kubesched.__all__ == sorted(kubesched.__all__)
    for name in kubesched.__all__:
        assert getattr(kubesched, name) is not None, name


def test_public_surface_is_pinned() -> None:
    assert kubesched.__all__ == [
        "Code",
        "CycleState",
        "Framework",
        "KubeSchedulerConfiguration",
        "Node",
        "NodeInfo",
        "NodeScore",
        "Pod",
        "PreFilterResult",
        "Registry",
        "Snapshot",
        "Status",
        "default_config",
        "explain",
        "in_tree_registry",
        "load_config",
        "simulate",
    ]


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        kubesched.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")
