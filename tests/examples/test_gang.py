"""examples/gang.py: a PodGroupPlugin from labels — a pod group is placed in one cycle
with its quorum, and a group whose quorum does not exist waits holding nothing."""

from __future__ import annotations

from typing import Any

import gang
import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.interface import PodGroupInfo
from kubesched.testing import make_pod

WAITING_MESSAGE = (
    "pod group ml/sweep: 2 of 4 members exist; waiting for the rest before scheduling any of them"
)


def placed(result: dict[str, Any]) -> dict[str, str | None]:
    return {p["pod"]: p["node"] for p in result["placements"]}


def test_a_full_group_is_placed_together_and_a_short_one_waits(simulate: Any) -> None:
    result = simulate("pods-gang.yaml", "config-gang.yaml", seed=1)
    nodes = placed(result)
    assert all(nodes[f"ml/allreduce-{i}"] for i in range(3))
    for i in range(2):
        sweep = next(p for p in result["placements"] if p["pod"] == f"ml/sweep-{i}")
        assert sweep["node"] is None
        assert sweep["message"] == WAITING_MESSAGE
    assert result["summary"]["scheduled"] == 3


def test_the_labels_name_the_group_and_its_quorum() -> None:
    plugin = gang.new({"backoffSeconds": 5}, None)  # type: ignore[arg-type]
    pod = (
        make_pod("w")
        .namespace("ml")
        .labels({gang.GROUP_LABEL: "train", gang.MIN_AVAILABLE_LABEL: "4"})
    )
    assert plugin.pod_group(pod.obj()) == PodGroupInfo("ml/train", 4, 5.0)
    assert plugin.pod_group(make_pod("alone").obj()) is None


@pytest.mark.parametrize("backoff", [-1, "30s", True])
def test_backoff_must_be_a_non_negative_number(backoff: object) -> None:
    with pytest.raises(ArgsError, match="backoffSeconds"):
        gang.new({"backoffSeconds": backoff}, None)  # type: ignore[arg-type]
