"""The JSON types of a body, checked as decoding into kube-apiserver's Go types checks them.

kube-apiserver decodes a body into its Go struct, so ``metadata.labels: 5`` or
``metadata.name: true`` never get past the decoder: ``json: cannot unmarshal number into Go
struct field ObjectMeta.metadata.labels of type map[string]string``. Here bodies stay JSON
data, so this module walks them against the kind's OpenAPI schema (the built-in schemas of
:mod:`kubesched.apiserver.schemas`, which describe those Go types) before anything else
looks at them: a value of the wrong JSON type is refused at the boundary instead of
failing somewhere inside validation or being stored. ``null`` is accepted anywhere (Go
decodes it to the zero value). Custom resources are checked by their CRD's schema
elsewhere; kinds without a schema are not checked.

The message follows Go's ``UnmarshalTypeError``: the innermost struct's name, the field's
path from the top (array indices and map keys left out, as Go leaves them out) and the Go
type. The OpenAPI schemas do not name Go's named types (``[]v1.PersistentVolumeAccessMode``
is ``[]string`` there): the hand-kept table of :mod:`kubesched.objects.validation.types`,
which names them, is asked first (:func:`kubesched.apiserver.admission.check_types`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from kubesched.objects import kindschemas as schemas
from kubesched.objects.kindschemas import REF_PREFIX, Schema
from kubesched.objects.quantity import QuantityError, parse_quantity_value

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
#: Schemas whose Go type decodes itself (UnmarshalJSON) and accepts more than its type says.
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


class TypeMismatch(ValueError):
    """A value of the wrong JSON type; ``path`` is the field's (``metadata.labels``)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class _Node:
    # What Go decodes one value into. kind: "struct", "map", "array", "string",
    # "integer", "number", "boolean", "int-or-string", "quantity" or "any".
    kind: str
    go_type: str
    struct: str = ""
    fields: dict[str, _Node] = field(default_factory=dict)
    elem: _Node | None = None


_ANY = _Node("any", "")


def _go_package(name: str) -> str:
    # io.k8s.api.core.v1.Pod -> v1.Pod; io.k8s.apimachinery.pkg.util.intstr.IntOrString.
    parts = name.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else name


def _compile(schema: Any, memo: dict[str, _Node]) -> _Node:
    if not isinstance(schema, dict):
        return _ANY
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            ref = all_of[0].get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix(REF_PREFIX)
        if name in memo:
            return memo[name]
        target = schemas.builtin().get(name)
        if name == _QUANTITY:
            node = _Node("quantity", "resource.Quantity")
            memo[name] = node
            return node
        if not isinstance(target, dict):
            return _ANY
        node = _Node("any", _go_package(name), struct=name.rsplit(".", 1)[-1])
        memo[name] = node  # before the fields: schemas may refer to themselves
        _fill(node, target, memo)
        return node
    node = _Node("any", "")
    _fill(node, schema, memo)
    return node


def _fill(node: _Node, schema: Schema, memo: dict[str, _Node]) -> None:
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
        "x-kubernetes-embedded-resource"
    ):
        return  # anything goes (RawExtension-like)
    kind = schema.get("type")
    fmt = schema.get("format")
    if schema.get("x-kubernetes-int-or-string") or fmt == "int-or-string":
        node.kind, node.go_type = "int-or-string", node.go_type or "intstr.IntOrString"
    elif kind == "object" and isinstance(schema.get("properties"), dict):
        node.kind = "struct"
        node.go_type = node.go_type or "struct"
        node.fields = {k: _compile(v, memo) for k, v in schema["properties"].items()}
    elif kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        node.kind = "map"
        node.elem = _compile(schema["additionalProperties"], memo)
        node.go_type = node.go_type or f"map[string]{node.elem.go_type or 'interface {}'}"
    elif kind == "array":
        node.kind = "array"
        node.elem = _compile(schema.get("items"), memo)
        node.go_type = node.go_type or f"[]{node.elem.go_type or 'interface {}'}"
    elif kind == "string":
        node.kind, node.go_type = "string", node.go_type or "string"
    elif kind == "integer":
        node.kind = "integer"
        node.go_type = node.go_type or (fmt if fmt in _INT_RANGES else "int")
    elif kind == "number":
        node.kind, node.go_type = "number", node.go_type or "float64"
    elif kind == "boolean":
        node.kind, node.go_type = "boolean", node.go_type or "bool"


_memo: dict[str, _Node] = {}
_lock = threading.Lock()


def _root(name: str) -> _Node:
    try:
        return _memo[name]
    except KeyError:
        with _lock:
            scratch = dict(_memo)
            node = _compile({"$ref": REF_PREFIX + name}, scratch)
            _memo.update(scratch)
            return node


def json_kind(value: Any) -> str:
    """The JSON type of a decoded value as Go's UnmarshalTypeError names it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fits(node: _Node, value: Any) -> bool:
    kind = node.kind
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        low, high = _INT_RANGES.get(node.go_type, _INT_RANGES["int64"])
        return low <= value <= high
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "int-or-string":
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    if kind == "quantity":
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    if kind in ("struct", "map"):
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return True


#: What Go decodes a null map value or list item into, by the element's kind (a struct's
#: is a fresh ``{}``, made where it is needed; pointers and containers stay null).
_ZEROS: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "quantity": "0",
}
_NO_ZERO = object()


def _walk(node: _Node, value: Any, path: str, struct: str, quantities: bool = True) -> None:
    if value is None or node.kind == "any":
        return
    if not _fits(node, value):
        shown = json_kind(value)
        if shown == "number" and node.kind == "integer":
            shown = f"number {value}"
        where = f"Go struct field {struct}.{path}" if path and struct else "Go value"
        raise TypeMismatch(
            f"json: cannot unmarshal {shown} into {where} of type {node.go_type}", path
        )
    if node.kind == "quantity" and quantities:
        # Quantity.UnmarshalJSON parses as it decodes: "" or "1x" is the decoder's 400 on
        # create as on update, never a value stored and refused later.
        try:
            parse_quantity_value(value)
        except QuantityError as err:
            raise TypeMismatch(err.message, path) from None
        return
    if node.kind == "struct":
        inner = node.struct or struct
        nulls = []
        for key, sub in value.items():
            child = node.fields.get(key)
            if child is None:
                continue
            if sub is None:
                nulls.append(key)
            else:
                _walk(child, sub, f"{path}.{key}" if path else key, inner, quantities)
        for key in nulls:
            # Go decodes null into the field's zero value, which it then leaves out
            # (omitempty): stored, the null would differ from what a client sends back.
            del value[key]
    elif node.kind == "map" and node.elem is not None and node.elem.kind != "any":
        zero = _ZEROS.get(node.elem.kind, _NO_ZERO)
        for key, sub in value.items():
            if sub is None and zero is not _NO_ZERO:
                value[key] = zero  # map[string]string{"a": null} decodes to "a": ""
            else:
                _walk(node.elem, sub, path, struct, quantities)
    elif node.kind == "array" and node.elem is not None and node.elem.kind != "any":
        zero = _ZEROS.get(node.elem.kind, _NO_ZERO)
        for index, sub in enumerate(value):
            if sub is None and zero is not _NO_ZERO:
                value[index] = zero
            else:
                _walk(node.elem, sub, path, struct, quantities)


def check(group: str, version: str, kind: str, obj: Any) -> None:
    """Raise :class:`TypeMismatch` when ``obj`` (an object of the built-in kind) holds a
    value Go could not decode into the kind's type; kinds without a schema pass. Nulls
    become what Go's decoder makes of them, in place: a struct field's null is left out,
    a null string (number, bool, quantity) in a map or list is its zero value."""
    name = schemas.name_of(group, version, kind)
    if name is None:
        return
    _walk(_root(name), obj, "", "")


def check_kind(kind: str, obj: Any) -> None:
    """:func:`check` for the built-in kind named ``kind`` whatever its group (the file
    loaders' objects); kinds without one schema of their own pass. Quantities are left
    to validation, whose errors name the very field (``containers[0]...cpu``)."""
    found = schemas.group_version_of(kind)
    name = schemas.name_of(found[0], found[1], kind) if found is not None else None
    if name is not None:
        _walk(_root(name), obj, "", "", quantities=False)


def check_schema(name: str, obj: Any) -> None:
    """:func:`check` for a built-in schema named directly (``...meta.v1.DeleteOptions``)."""
    _walk(_root(name), obj, "", "")
