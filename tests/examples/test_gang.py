"""examples/gang.py: Permit's Wait in the simulator — a pod group binds together, or
gives its places back when its quorum never comes."""

from __future__ import annotations

from typing import Any

import gang
import pytest

from kubesched.framework.args import ArgsError

TIMEOUT_MESSAGE = (
    "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gang."
)


def placed(result: dict[str, Any]) -> dict[str, str | None]:
    return {p["pod"]: p["node"] for p in result["placements"]}


def test_a_full_group_binds_together_and_a_short_one_times_out(simulate: Any) -> None:
    result = simulate("pods-gang.yaml", "config-gang.yaml", seed=1)
    nodes = placed(result)
    assert all(nodes[f"ml/allreduce-{i}"] for i in range(3))
    order = [p["pod"] for p in result["placements"]]
    # The first two members are held until the third arrives: the third ends first.
    assert order[0] == "ml/allreduce-2"
    for i in range(2):
        sweep = next(p for p in result["placements"] if p["pod"] == f"ml/sweep-{i}")
        assert sweep["node"] is None
        assert sweep["message"] == TIMEOUT_MESSAGE
    assert result["summary"]["scheduled"] == 3


@pytest.mark.parametrize("timeout", [0, -1, "30s", True])
def test_timeout_must_be_a_positive_number(timeout: object) -> None:
    with pytest.raises(ArgsError, match="timeoutSeconds"):
        gang.new({"timeoutSeconds": timeout}, None)  # type: ignore[arg-type]
