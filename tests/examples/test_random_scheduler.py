"""examples/random_scheduler.py: random scores from the profile's seeded RNG."""

from __future__ import annotations

import random
from typing import Any

import pytest
import random_scheduler

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import NodeInfo
from kubesched.testing import make_node, make_pod


class FakeHandle:
    """Only what RandomScore reads: the rng."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)


def scores(seed: int, n: int = 20) -> list[int]:
    plugin = random_scheduler.new(None, FakeHandle(seed))
    pod = make_pod("p").obj()
    out = []
    for i in range(n):
        value, status = plugin.score(CycleState(), pod, NodeInfo(make_node(f"n{i}").obj()))
        assert status is None
        out.append(value)
    return out


def test_scores_are_in_the_node_score_range() -> None:
    values = scores(seed=3, n=500)
    assert min(values) >= 0
    assert max(values) <= 100
    assert len(set(values)) > 50  # actually random, not a constant


def test_the_same_seed_gives_the_same_scores() -> None:
    assert scores(seed=42) == scores(seed=42)


def test_different_seeds_give_different_scores() -> None:
    assert scores(seed=1) != scores(seed=2)


def test_no_normalize_score_is_needed() -> None:
    plugin = random_scheduler.new({}, FakeHandle(0))
    assert plugin.score_extensions() is None
    assert plugin.name == "RandomScore"


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(None, [], id="no-args-is-fine"),
        pytest.param({}, [], id="empty-args-is-fine"),
        pytest.param({"kind": "x", "apiVersion": "y"}, [], id="type-meta-is-ignored"),
        pytest.param(
            {"seed": 3},
            ['seed: Invalid value: "seed": unknown field'],
            id="unknown-field-is-reported",
        ),
    ],
)
def test_args(args: Any, errors: list[str]) -> None:
    if not errors:
        random_scheduler.new(args, FakeHandle(0))
        return
    with pytest.raises(ArgsError) as info:
        random_scheduler.new(args, FakeHandle(0))
    assert [str(e) for e in info.value.errors] == errors


def test_the_example_profile_scores_with_random_score_alone(framework_for: Any) -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(5)]
    fwk = framework_for("config-random-scheduler.yaml", "my-scheduler", nodes, seed=5)
    assert [p.name for p in fwk.plugins_at("score")] == ["RandomScore"]
    assert fwk.plugins_at("preScore") == []
    # The default Filter plugins stay.
    assert "NodeResourcesFit" in [p.name for p in fwk.plugins_at("filter")]

    def run(seed: int) -> list[int]:
        fwk.rng.seed(seed)
        by_plugin, status = fwk.run_score_plugins(
            CycleState(), make_pod("p").obj(), fwk.snapshot.list()
        )
        assert status is None
        return [s.score for s in by_plugin["RandomScore"]]

    assert run(5) == run(5)
    assert run(5) != run(6)
