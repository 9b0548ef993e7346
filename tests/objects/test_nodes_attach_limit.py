"""The attach limit of simulated nodes (``kubesched.io/csi-attach-limit``): from the
template, from ``make_nodes``, or the default; bad values refused with the field named."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.nodes import (
    ATTACH_LIMIT_ANNOTATION,
    DEFAULT_ATTACH_LIMIT,
    NodeTemplateError,
    check_template,
    make_nodes,
    node_attach_limit,
)


def template(limit: object | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "disk"}}
    if limit is not None:
        node["metadata"]["annotations"] = {ATTACH_LIMIT_ANNOTATION: limit}
    return node


@pytest.mark.parametrize(
    ("node_template", "argument", "expected"),
    [
        pytest.param(None, None, DEFAULT_ATTACH_LIMIT, id="default-template-gets-the-default"),
        pytest.param(template(), None, DEFAULT_ATTACH_LIMIT, id="template-without-a-limit"),
        pytest.param(template("8"), None, 8, id="template-sets-the-limit"),
        pytest.param(template("0"), None, 0, id="zero-means-no-volume-may-attach"),
        pytest.param(template("8"), 3, 3, id="argument-overrides-the-template"),
    ],
)
def test_nodes_carry_their_attach_limit(
    node_template: dict[str, Any] | None, argument: int | None, expected: int
) -> None:
    nodes = make_nodes(2, node_template, attach_limit=argument)
    assert [node_attach_limit(n) for n in nodes] == [expected, expected]
    annotations = nodes[0]["metadata"]["annotations"]
    assert annotations[ATTACH_LIMIT_ANNOTATION] == str(expected)


@pytest.mark.parametrize(
    "value",
    [pytest.param("-1", id="negative"), pytest.param("many", id="not-a-number"), ""],
)
def test_a_bad_limit_in_a_template_names_the_annotation(value: str) -> None:
    with pytest.raises(NodeTemplateError) as failure:
        check_template(template(value), "nodes.yaml")
    message = str(failure.value)
    assert message.startswith("nodes.yaml: ")
    assert f"metadata.annotations[{ATTACH_LIMIT_ANNOTATION}]" in message


def test_a_negative_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="attach limit must not be negative"):
        make_nodes(1, attach_limit=-2)
