"""Structural schemas of CustomResourceDefinitions: checking them, and validating,
pruning and defaulting custom resources with them.

apiextensions-apiserver requires a *structural* ``openAPIV3Schema`` (every node says its
type, arrays say their items, ``properties`` and ``additionalProperties`` exclusive) and
then, for each custom resource written (``customResourceStrategy``): drops the fields the
schema does not declare (pruning, unless ``x-kubernetes-preserve-unknown-fields``), fills
in ``default:`` values, and validates with kube-openapi's validator. The messages and the
field paths (``spec.items[0].name``) are kube-openapi's, turned into field errors as
apiextensions' ``ValidateCustomResource`` does. Supported keywords: type, properties,
required, items, additionalProperties, enum, minimum/maximum (and exclusive),
minLength/maxLength, minItems/maxItems, pattern, nullable, default,
x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields. Others (allOf, anyOf,
oneOf, not, format, CEL rules) are accepted and not enforced.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.apiserver.errors import StatusCause

Schema = dict[str, Any]

_TYPES = ("object", "array", "string", "integer", "number", "boolean")
#: Object fields every custom resource keeps whatever its schema says.
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def go_value(value: Any) -> str:
    """A value as a Go field error prints it (``"x"``, ``3``, ``true``, JSON otherwise)."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _cause(reason: str, path: str, message: str) -> StatusCause:
    return {"reason": reason, "message": message, "field": path}


def _invalid(path: str, value: Any, detail: str) -> StatusCause:
    return _cause("FieldValueInvalid", path, f"Invalid value: {go_value(value)}: {detail}")


def _required(path: str, detail: str = "") -> StatusCause:
    return _cause(
        "FieldValueRequired", path, f"Required value: {detail}" if detail else "Required value"
    )


def _forbidden(path: str, detail: str) -> StatusCause:
    return _cause("FieldValueForbidden", path, f"Forbidden: {detail}")


# -- the CRD's schema -------------------------------------------------------------------


def check_structural(schema: Any, path: str) -> list[StatusCause]:
    """Why ``schema`` (a version's openAPIV3Schema, at field ``path``) is not a structural
    schema this server can apply; empty when it is."""
    if not isinstance(schema, dict):
        return [_invalid(path, schema, "must be an object")]
    causes: list[StatusCause] = []
    if not schema.get("type"):
        causes.append(_required(f"{path}.type", "must not be empty at the root"))
    elif schema.get("type") != "object":
        causes.append(_invalid(f"{path}.type", schema.get("type"), "must be object at the root"))
    _check_node(schema, path, causes, root=True)
    return causes


def _check_node(node: Any, path: str, causes: list[StatusCause], root: bool = False) -> None:
    if not isinstance(node, dict):
        causes.append(_invalid(path, node, "must be a schema object"))
        return
    kind = node.get("type")
    loose = node.get("x-kubernetes-int-or-string") or node.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if not root and not kind and not loose:
        causes.append(_required(f"{path}.type", "must not be empty for specified object fields"))
    if kind and kind not in _TYPES:
        causes.append(
            _cause(
                "FieldValueNotSupported",
                f"{path}.type",
                f"Unsupported value: {go_value(kind)}: supported values: "
                + ", ".join(f'"{t}"' for t in sorted(_TYPES)),
            )
        )
    if node.get("uniqueItems") is True:
        causes.append(
            _forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    if "$ref" in node:
        causes.append(_forbidden(f"{path}.$ref", "$ref is not supported"))
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    if properties and isinstance(extra, dict):
        causes.append(
            _forbidden(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if properties is not None:
        if not isinstance(properties, dict):
            causes.append(_invalid(f"{path}.properties", properties, "must be an object"))
        else:
            for name, sub in properties.items():
                _check_node(sub, f"{path}.properties[{name}]", causes)
    if isinstance(extra, dict):
        _check_node(extra, f"{path}.additionalProperties", causes)
    if kind == "array":
        items = node.get("items")
        if items is None:
            causes.append(_required(f"{path}.items", "must be specified"))
        elif isinstance(items, list):
            causes.append(
                _forbidden(f"{path}.items", "items must be a schema object and not an array")
            )
        else:
            _check_node(items, f"{path}.items", causes)
    pattern = node.get("pattern")
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as exc:
            causes.append(_invalid(f"{path}.pattern", pattern, f"must be a valid regex: {exc}"))


# -- pruning ----------------------------------------------------------------------------


def prune(
    obj: Any, schema: Schema, root: bool = True, found: list[str] | None = None, path: str = ""
) -> None:
    """Drop, in place, the fields of ``obj`` that ``schema`` does not declare (upstream's
    structural pruning); fields under ``x-kubernetes-preserve-unknown-fields`` stay. With
    ``found``, append the path of each field dropped (``spec.items[0].foo``), as
    ``PruneWithOptions`` tracks them for field validation."""
    if isinstance(obj, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields") is True
        for key in list(obj):
            if root and key in _ROOT_FIELDS:
                continue
            if isinstance(properties, dict) and key in properties:
                sub = properties[key]
            elif isinstance(extra, dict):
                sub = extra
            elif keep_unknown or extra is True:
                continue
            else:
                del obj[key]
                if found is not None:
                    found.append(_child(path, key))
                continue
            if isinstance(sub, dict):
                prune(obj[key], sub, False, found, _child(path, key))
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(obj):
                prune(item, items, False, found, f"{path}[{i}]")


# -- defaulting -------------------------------------------------------------------------


def apply_defaults(obj: Any, schema: Schema) -> None:
    """Fill in, in place, the ``default:`` of every declared field missing from an object
    that is there (upstream's structural defaulting); defaults are copied, then
    defaulted themselves."""
    if isinstance(obj, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for key, sub in properties.items():
                if not isinstance(sub, dict):
                    continue
                if "default" in sub and (
                    key not in obj or (obj[key] is None and not sub.get("nullable"))
                ):
                    obj[key] = json.loads(json.dumps(sub["default"]))
                if key in obj:
                    apply_defaults(obj[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, value in obj.items():
                if not (isinstance(properties, dict) and key in properties):
                    apply_defaults(value, extra)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in obj:
                apply_defaults(item, items)


# -- validation -------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(value: Any, wanted: str) -> bool:
    found = _type_name(value)
    return found == wanted or (wanted == "number" and found == "integer")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate(obj: Any, schema: Schema, path: str = "") -> list[StatusCause]:
    """The field errors of ``obj`` against ``schema``, as apiextensions reports them
    (``spec.replicas: Invalid value: "string": spec.replicas in body must be of type
    integer: "string"``). ``path`` is the field path of ``obj``."""
    causes: list[StatusCause] = []
    _validate(obj, schema, path, causes)
    return causes


def _validate(value: Any, schema: Schema, path: str, causes: list[StatusCause]) -> None:
    name = path or "."
    if value is None:
        if schema.get("nullable") or not schema.get("type"):
            return
        if schema.get("x-kubernetes-int-or-string") or schema.get(
            "x-kubernetes-preserve-unknown-fields"
        ):
            return
    found = _type_name(value)
    if schema.get("x-kubernetes-int-or-string") and found not in ("integer", "string"):
        causes.append(
            _cause(
                "FieldValueTypeInvalid",
                path,
                f'Invalid value: "{found}": {name} in body must be of type integer,string: '
                f'"{found}"',
            )
        )
        return
    wanted = schema.get("type")
    if isinstance(wanted, str) and wanted and not _type_ok(value, wanted):
        causes.append(
            _cause(
                "FieldValueTypeInvalid",
                path,
                f'Invalid value: "{found}": {name} in body must be of type {wanted}: "{found}"',
            )
        )
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        shown = ", ".join(go_value(v) for v in enum)
        causes.append(
            _cause(
                "FieldValueNotSupported",
                path,
                f"Unsupported value: {go_value(value)}: supported values: {shown}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        _check_bounds(value, schema, path, name, causes)
    elif isinstance(value, str):
        _check_string(value, schema, path, name, causes)
    elif isinstance(value, list):
        _check_array(value, schema, path, name, causes)
    elif isinstance(value, dict):
        _check_object(value, schema, path, causes)


def _number(value: Any) -> str:
    return go_value(value)


def _check_bounds(
    value: float, schema: Schema, path: str, name: str, causes: list[StatusCause]
) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, int | float):
        if schema.get("exclusiveMinimum") and value <= low:
            detail = f"should be greater than {_number(low)}"
        elif value < low:
            detail = f"should be greater than or equal to {_number(low)}"
        else:
            detail = ""
        if detail:
            causes.append(_invalid(path, value, f"{name} in body {detail}"))
    if isinstance(high, int | float):
        if schema.get("exclusiveMaximum") and value >= high:
            detail = f"should be less than {_number(high)}"
        elif value > high:
            detail = f"should be less than or equal to {_number(high)}"
        else:
            detail = ""
        if detail:
            causes.append(_invalid(path, value, f"{name} in body {detail}"))


def _check_string(
    value: str, schema: Schema, path: str, name: str, causes: list[StatusCause]
) -> None:
    longest, shortest = schema.get("maxLength"), schema.get("minLength")
    if isinstance(longest, int) and len(value) > longest:
        causes.append(
            _cause("FieldValueTooLong", path, f"Too long: may not be more than {longest} bytes")
        )
    if isinstance(shortest, int) and len(value) < shortest:
        causes.append(
            _invalid(path, value, f"{name} in body should be at least {shortest} chars long")
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # refused when the CRD was written; not this object's fault
        if not matched:
            causes.append(_invalid(path, value, f"{name} in body should match '{pattern}'"))


def _check_array(
    value: list[Any], schema: Schema, path: str, name: str, causes: list[StatusCause]
) -> None:
    most, least = schema.get("maxItems"), schema.get("minItems")
    if isinstance(most, int) and len(value) > most:
        causes.append(
            _cause(
                "FieldValueTooMany", path, f"Too many: {len(value)}: must have at most {most} items"
            )
        )
    if isinstance(least, int) and len(value) < least:
        causes.append(
            _invalid(path, len(value), f"{name} in body should have at least {least} items")
        )
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", causes)


def _check_object(
    value: dict[str, Any], schema: Schema, path: str, causes: list[StatusCause]
) -> None:
    required = schema.get("required")
    if isinstance(required, list):
        for key in required:
            if isinstance(key, str) and key not in value:
                causes.append(_required(_child(path, key)))
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, sub_value in value.items():
        if not path and key in _ROOT_FIELDS:
            continue  # checked by the API machinery, not the schema
        if isinstance(properties, dict) and isinstance(properties.get(key), dict):
            _validate(sub_value, properties[key], _child(path, key), causes)
        elif isinstance(extra, dict):
            _validate(sub_value, extra, _child(path, key), causes)
