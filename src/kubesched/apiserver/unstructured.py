"""Typed reads along ``.a.b`` paths of a decoded object, as apimachinery's
``unstructured.NestedInt64`` / ``NestedString`` do them, with their error texts (which
custom resources' scale handling and validation put in their responses)."""

from __future__ import annotations

import json
from typing import Any

#: The Go types names the accessor errors use, per JSON type.
_GO_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "int64"),
    (float, "float64"),
    (str, "string"),
    (list, "[]interface {}"),
    (dict, "map[string]interface {}"),
)


def go_type(value: Any) -> str:
    """The Go type of a decoded JSON value (``%T``)."""
    for kind, name in _GO_TYPES:
        if isinstance(value, kind):
            return name
    return "<nil>"


def _go_print(value: Any) -> str:
    # %v of a decoded JSON value.
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def split_path(dotted: str) -> list[str]:
    """``.spec.replicas`` -> ``["spec", "replicas"]`` (the leading period is ignored)."""
    return dotted.removeprefix(".").split(".")


def nested(obj: Any, dotted: str, expected: str) -> tuple[Any, bool, str]:
    """The value at ``dotted`` if it has the Go type ``expected`` (``int64`` or
    ``string``): ``(value, found, "")``; ``(None, False, "")`` when it is missing;
    ``(None, found, message)`` when it (or a parent) has another type."""
    node = obj
    fields = split_path(dotted)
    for i, field in enumerate(fields):
        if not isinstance(node, dict):
            at = "." + ".".join(fields[:i])
            message = (
                f"{at} accessor error: {_go_print(node)} is of the type {go_type(node)}, "
                "expected map[string]interface{}"
            )
            return None, False, message
        if field not in node:
            return None, False, ""
        node = node[field]
    if go_type(node) != expected:
        at = "." + ".".join(fields)
        message = (
            f"{at} accessor error: {_go_print(node)} is of the type {go_type(node)}, "
            f"expected {expected}"
        )
        return None, True, message
    return node, True, ""
