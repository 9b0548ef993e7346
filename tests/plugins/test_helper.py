"""The plugins' shared helpers: DefaultNormalizeScore (after upstream's
normalize_score_test.go), Go division, args checks, and object errors as field errors."""

from __future__ import annotations

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.types import NodeScore
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.plugins.helper import (
    as_changed,
    as_deleted,
    check_no_args,
    default_normalize_score,
    field_error_from_object_error,
    go_div,
    join_path,
    same_pod,
)
from kubesched.testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        pytest.param(False, [1, 2, 3, 4, 5], [20, 40, 60, 80, 100], id="scaled to the maximum"),
        pytest.param(True, [1, 2, 3, 4, 5], [80, 60, 40, 20, 0], id="scaled and reversed"),
        pytest.param(False, [1000, 10, 20, 30], [100, 1, 2, 3], id="truncating division"),
        pytest.param(True, [1000, 10, 20, 30], [0, 99, 98, 97], id="truncating, reversed"),
        pytest.param(False, [1, 1, 1, 1], [100, 100, 100, 100], id="all equal"),
        pytest.param(True, [1, 1, 1, 1], [0, 0, 0, 0], id="all equal, reversed"),
        pytest.param(False, [0, 0, 0, 0], [0, 0, 0, 0], id="all zero stay zero"),
        pytest.param(True, [0, 0, 0, 0], [100, 100, 100, 100], id="all zero, reversed to max"),
        pytest.param(False, [], [], id="no nodes"),
        pytest.param(False, [1, 3], [33, 100], id="one third truncates to 33"),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(100, reverse, node_scores) is None
    assert [s.score for s in node_scores] == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0)],
    ids=["positive", "negative dividend", "negative divisor", "both negative", "zero"],
)
def test_go_div_truncates_toward_zero(a: int, b: int, expected: int) -> None:
    assert go_div(a, b) == expected


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(None, [], id="no args"),
        pytest.param({}, [], id="empty args"),
        pytest.param({"kind": "X", "apiVersion": "v1"}, [], id="type meta only"),
        pytest.param(
            {"foo": 1, "bar": 2},
            [
                'foo: Invalid value: "foo": unknown field',
                'bar: Invalid value: "bar": unknown field',
            ],
            id="every unknown field is reported",
        ),
    ],
)
def test_check_no_args(args: dict[str, object] | None, errors: list[str]) -> None:
    if not errors:
        check_no_args(args)
        return
    with pytest.raises(ArgsError) as err:
        check_no_args(args)
    assert [str(e) for e in err.value.errors] == errors


@pytest.mark.parametrize(
    ("err", "prefix", "expected"),
    [
        pytest.param(
            ObjectError("key", 'Invalid value: "a/b/c": bad key'),
            "terms[0]",
            'terms[0].key: Invalid value: "a/b/c": bad key',
            id="invalid value keeps value and detail",
        ),
        pytest.param(
            ObjectError("values", "Required value: must be specified"),
            "x",
            "x.values: Required value: must be specified",
            id="required",
        ),
        pytest.param(
            ObjectError("values", "Forbidden: may not be specified"),
            "x",
            "x.values: Forbidden: may not be specified",
            id="forbidden",
        ),
        pytest.param(
            ObjectError("operator", 'Unsupported value: "Bogus": supported values: "In", "NotIn"'),
            "x",
            'x.operator: Unsupported value: "Bogus": supported values: "In", "NotIn"',
            id="unsupported",
        ),
        pytest.param(
            ObjectError("[0]", 'unknown field "bogus"'),
            "list",
            'list[0]: unknown field "bogus"',
            id="anything else is kept verbatim, index paths joined without a dot",
        ),
        pytest.param(
            ObjectError("", 'Invalid type: got "string", expected "object"'),
            "term",
            'term: Invalid type: got "string", expected "object"',
            id="an error at the object itself",
        ),
    ],
)
def test_field_error_from_object_error(err: ObjectError, prefix: str, expected: str) -> None:
    assert str(field_error_from_object_error(err, prefix)) == expected


def test_field_error_kinds() -> None:
    invalid = field_error_from_object_error(ObjectError("k", "Invalid value: 3: too big"), "")
    assert (invalid.path, invalid.value, invalid.detail) == ("k", 3, "too big")
    assert field_error_from_object_error(ObjectError("k", "Required value"), "").detail == ""


def test_join_path() -> None:
    assert join_path("a", "b", 0, "c") == "a.b[0].c"
    assert join_path("", "b") == "b"


def test_as_changed_and_as_deleted() -> None:
    node = make_node("n").obj()
    assert as_changed(Node, None, node) == (None, node)
    assert as_deleted(Node, node) is node
    with pytest.raises(TypeError, match="expected Node, but got str"):
        as_changed(Node, "x", node)
    with pytest.raises(TypeError):
        as_deleted(Node, None)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param(
            make_pod("p").uid("u1").obj(), make_pod("q").uid("u1").obj(), True, id="same uid"
        ),
        pytest.param(
            make_pod("p").uid("u1").obj(), make_pod("p").uid("u2").obj(), False, id="other uid"
        ),
        pytest.param(
            make_pod("p").uid("").obj(), make_pod("p").uid("").obj(), True, id="no uid, same key"
        ),
        pytest.param(
            make_pod("p").uid("").obj(), make_pod("q").uid("").obj(), False, id="no uid, other key"
        ),
    ],
)
def test_same_pod(a: Pod, b: Pod, same: bool) -> None:
    assert same_pod(a, b) is same


def test_names_are_upstream_spellings() -> None:
    assert (
        names.PRIORITY_SORT,
        names.SCHEDULING_GATES,
        names.NODE_UNSCHEDULABLE,
        names.NODE_NAME,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_PORTS,
        names.NODE_RESOURCES_FIT,
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        names.POD_TOPOLOGY_SPREAD,
        names.INTER_POD_AFFINITY,
        names.IMAGE_LOCALITY,
        names.DEFAULT_PREEMPTION,
        names.DEFAULT_BINDER,
    ) == (
        "PrioritySort",
        "SchedulingGates",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "PodTopologySpread",
        "InterPodAffinity",
        "ImageLocality",
        "DefaultPreemption",
        "DefaultBinder",
    )
