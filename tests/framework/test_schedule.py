"""One scheduling attempt: node sampling, the FailedScheduling message, tie-breaking."""

from __future__ import annotations

import pytest

from kubesched.framework.interface import Code, Status
from kubesched.framework.schedule import Diagnosis, FitError, num_feasible_nodes_to_find
from kubesched.framework.types import NodeToStatus
from kubesched.testing import make_pod


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        pytest.param(None, 10, 10, id="fewer-than-100-nodes-all-evaluated"),
        pytest.param(None, 99, 99, id="99-nodes-all-evaluated"),
        pytest.param(None, 1000, 420, id="adaptive-1000-nodes-42-percent"),
        pytest.param(None, 5000, 500, id="adaptive-5000-nodes-10-percent"),
        pytest.param(None, 6000, 300, id="adaptive-floor-5-percent"),
        pytest.param(100, 5000, 5000, id="100-percent-means-every-node"),
        pytest.param(1, 1000, 100, id="at-least-100-nodes"),
        pytest.param(40, 1000, 400, id="explicit-percentage"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def status(reason: str, plugin: str = "P") -> Status:
    return Status(Code.UNSCHEDULABLE, (reason,), plugin)


@pytest.mark.parametrize(
    ("diagnosis", "num_nodes", "message"),
    [
        pytest.param(
            Diagnosis(
                NodeToStatus(
                    {
                        "n1": status("node(s) had untolerated taint {k: v}"),
                        "n2": status("node(s) had untolerated taint {k: v}"),
                        "n3": status("Insufficient cpu"),
                        "n4": status("Insufficient cpu"),
                        "n5": status("Insufficient cpu"),
                    }
                )
            ),
            5,
            "0/5 nodes are available: 2 node(s) had untolerated taint {k: v}, 3 Insufficient cpu.",
            id="histogram-sorted-as-text",
        ),
        pytest.param(
            Diagnosis(
                NodeToStatus(
                    {"n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"))}
                )
            ),
            1,
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
            id="every-reason-of-a-node-counts",
        ),
        pytest.param(
            Diagnosis(
                NodeToStatus({}, Status.unresolvable("x")), pre_filter_msg="pod has unbound PVCs"
            ),
            3,
            "0/3 nodes are available: pod has unbound PVCs.",
            id="prefilter-message-replaces-the-histogram",
        ),
        pytest.param(
            Diagnosis(
                NodeToStatus(
                    {"n1": status("Insufficient cpu")},
                    Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"),
                ),
            ),
            3,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
            id="absent-nodes-counted-with-the-absent-status",
        ),
        pytest.param(
            Diagnosis(
                NodeToStatus({"n1": status("Insufficient cpu")}),
                post_filter_msg="preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            ),
            1,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            id="postfilter-message-appended-after-a-space",
        ),
    ],
)
def test_fit_error_message(diagnosis: Diagnosis, num_nodes: int, message: str) -> None:
    assert str(FitError(make_pod().obj(), num_nodes, diagnosis)) == message
