"""Hypothesis strategies for hostile input: junk JSON values, values shaped by an OpenAPI
schema, objects mutated at schema paths, and their encoding as bytes.

The schema-driven part walks a kind's OpenAPI v3 schema (the server's own, from
:mod:`kubesched.apiserver.schemas`, or a CRD's) to list the field paths an object may
have, then mutates a valid object at a few of them: a plausible value of the field's
type, a value of the wrong type, a huge, deep or odd string, an unknown field, a removal.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from kubesched.apiserver import schemas
from kubesched.apiserver.schemas import REF_PREFIX

Path = tuple[str | int, ...]

#: Strings that have broken parsers before: NUL and control characters, lone surrogates
#: (JSON ``\ud800``), Unicode line separators, Go and YAML special words, path tricks.
ODD_STRINGS = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "\n",
    "a\nb: c",
    "\r\n",
    "\t",
    "\ud800",
    "\udfff",
    "a\ud800b",
    "\u2028",
    "\ufeff",
    "\U0001f600",
    "é",
    "-",
    ".",
    "..",
    "/",
    "../../etc",
    "a/b",
    "~0~1",
    "%00",
    "%",
    "$patch",
    "null",
    "true",
    "NaN",
    "Infinity",
    "-1",
    "0x10",
    "1e309",
    "9223372036854775808",
    "0.000000001",
    "1Gi",
    "100m",
    "-1Gi",
    "1.5",
    "*",
    "!",
    "a=b",
    "a,b",
    "in (a)",
    "{}",
    "[]",
    "{{",
    "'",
    '"',
    "\\",
    "&",
    "#",
    "?",
    "Always",
    "default",
    "kube-system",
    "2026-01-01T00:00:00Z",
    "not-a-time",
    "10.0.0.1",
    "::1",
    "fuzz",
    "a" * 64,
    "a" * 254,
    "A_B",
)

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


@functools.cache
def odd_text() -> st.SearchStrategy[str]:
    """Short strings, many of them hostile; sometimes long ones."""
    return st.one_of(
        st.sampled_from(ODD_STRINGS),
        st.text(max_size=12),
        st.text(st.characters(codec="utf-8"), max_size=8),
        st.builds(lambda c, n: c * n, st.sampled_from("a-.\x00é"), st.integers(250, 70_000)),
    )


@functools.cache
def odd_numbers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([0, -1, 1, 2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 2**64, 10**30]),
        st.sampled_from([0.5, -0.0, 1e308, 1e-320, 1.5, 3.0, math.inf, -math.inf, math.nan]),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
    )


def deep(levels: int, leaf: Any = 1, kind: str = "list") -> Any:
    """A value nested ``levels`` deep (lists or objects)."""
    value = leaf
    for _ in range(levels):
        value = [value] if kind == "list" else {"a": value}
    return value


@functools.cache
def junk() -> st.SearchStrategy[Any]:
    """Any JSON value, hostile ones first: odd strings and numbers, deep nesting, small
    containers of the same."""
    scalars = st.one_of(st.none(), st.booleans(), odd_numbers(), odd_text())
    nested = st.builds(
        deep,
        st.sampled_from([50, 199, 200, 201, 400]),
        st.just(1),
        st.sampled_from(["list", "dict"]),
    )
    return st.one_of(
        scalars,
        nested,
        st.recursive(
            scalars,
            lambda inner: st.one_of(
                st.lists(inner, max_size=3), st.dictionaries(odd_text(), inner, max_size=3)
            ),
            max_leaves=6,
        ),
    )


@functools.cache
def json_values() -> st.SearchStrategy[Any]:
    """Plain JSON of any shape (a body that is not an object of the kind at all)."""
    return st.recursive(
        st.one_of(
            st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )


# -- schemas ------------------------------------------------------------------------------


def resolve(schema: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``schema`` with a ``$ref`` (or a one-item ``allOf`` of one) followed."""
    if not isinstance(schema, dict):
        return {}
    ref = schema.get("$ref")
    all_of = schema.get("allOf")
    if (
        ref is None
        and isinstance(all_of, list)
        and len(all_of) == 1
        and isinstance(all_of[0], dict)
    ):
        ref = all_of[0].get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix(REF_PREFIX)
        found = (extra or {}).get(name) or schemas.builtin().get(name)
        return found if isinstance(found, dict) else {}
    return schema


def kind_schema(res: Any) -> dict[str, Any]:
    """The OpenAPI schema of a served resource's objects ({} when it has none)."""
    if res.custom is not None:
        return res.custom.schema or {}
    name = schemas.name_of(res.group, res.version, res.kind)
    return resolve({"$ref": REF_PREFIX + name}) if name else {}


@functools.cache
def _paths_of(key: str, max_depth: int) -> tuple[tuple[Path, str], ...]:
    # Cached by a key: the schema travels as JSON text (hashable), its paths as tuples.
    root = json.loads(key)
    found: list[tuple[Path, str]] = []
    queue: list[tuple[Path, dict[str, Any]]] = [((), resolve(root))]
    while queue:
        path, schema = queue.pop(0)
        found.append((path, json.dumps(schema, sort_keys=True)))
        if len(path) >= max_depth:
            continue
        props = schema.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                queue.append(((*path, name), resolve(sub)))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            queue.append(((*path, "fuzz-key"), resolve(extra)))
        if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            queue.append(((*path, 0), resolve(schema["items"])))
    return tuple(found)


_PATHS: dict[tuple[str, int], list[tuple[Path, dict[str, Any]]]] = {}


def schema_paths(schema: dict[str, Any], max_depth: int = 7) -> list[tuple[Path, dict[str, Any]]]:
    """Every field path of ``schema`` down to ``max_depth`` (array items as index 0, map
    values under the key ``fuzz-key``), with the schema there."""
    key = (json.dumps(schema, sort_keys=True), max_depth)
    found = _PATHS.get(key)
    if found is None:
        found = _PATHS[key] = [(path, json.loads(sub)) for path, sub in _paths_of(*key)]
    return found


_PLAUSIBLE_STRINGS = ("", "a", "fuzz", "fuzz-1", "Always", "None", "TCP", "10.0.0.1", "1")


def typed(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of the schema's type, plausible more than valid, nested at most 3 deep."""
    return _typed(json.dumps(schema, sort_keys=True), depth)


@functools.cache
def _typed(key: str, depth: int) -> st.SearchStrategy[Any]:
    # Built once per schema and depth: hypothesis works out each new strategy's
    # properties, which costs more than the draws.
    schema = resolve(json.loads(key))
    if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
        return st.one_of(st.integers(-2, 100), st.sampled_from(["50%", "1", "http", "", "x%"]))
    kind = schema.get("type")
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return st.sampled_from(enum)
    if kind == "string" or schema.get("format") == "quantity":
        return st.one_of(st.sampled_from(_PLAUSIBLE_STRINGS), odd_text())
    if kind == "integer":
        low, high = _INT32 if schema.get("format") == "int32" else _INT64
        return st.one_of(st.integers(-2, 10), st.integers(low, high))
    if kind == "number":
        return st.one_of(st.integers(-2, 10), st.floats(-1e6, 1e6))
    if kind == "boolean":
        return st.booleans()
    if depth >= 3:
        return st.one_of(st.just({}), st.just([]), st.none())
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return st.fixed_dictionaries(
            {}, optional={k: st.deferred(_typed_later(v, depth + 1)) for k, v in props.items()}
        )
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return st.dictionaries(
            st.one_of(st.sampled_from(["a", "app", "fuzz.io/k"]), odd_text()),
            typed(extra, depth + 1),
            max_size=2,
        )
    if kind == "array":
        return st.lists(typed(schema.get("items") or {}, depth + 1), max_size=2)
    return junk()


def _typed_later(schema: Any, depth: int) -> Callable[[], st.SearchStrategy[Any]]:
    return lambda: typed(schema, depth)


def set_at(obj: Any, path: Path, value: Any) -> Any:
    """``obj`` with ``value`` at ``path``, making the objects and lists on the way."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = obj if isinstance(obj, list) else []
        if not items:
            items.append({} if rest and isinstance(rest[0], str) else [])
        items[0] = set_at(items[0], rest, value)
        return items
    target = obj if isinstance(obj, dict) else {}
    target[head] = set_at(target.get(head), rest, value)
    return target


def remove_at(obj: Any, path: Path) -> None:
    """Remove the field at ``path`` if it is there."""
    for step in path[:-1]:
        if isinstance(step, int):
            obj = obj[0] if isinstance(obj, list) and obj else None
        else:
            obj = obj.get(step) if isinstance(obj, dict) else None
        if obj is None:
            return
    last = path[-1] if path else None
    if isinstance(obj, dict) and isinstance(last, str):
        obj.pop(last, None)
    elif isinstance(obj, list) and obj and isinstance(last, int):
        obj.pop(0)


#: Names of unknown fields: odd ones, directives of the patch formats, real field names.
UNKNOWN_FIELDS = (
    "fuzzUnknown",
    "a\x00b",
    "a\nb",
    "\ud800",
    "",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "metadata",
    "spec",
    "status",
    "kind",
    "apiVersion",
    "__proto__",
)


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], schema: dict[str, Any]) -> Any:
    """``base`` changed at one to three schema paths."""
    obj = copy.deepcopy(base)
    paths = schema_paths(schema)
    for _ in range(draw(st.integers(1, 3))):
        path, sub = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(("typed", "typed", "junk", "unknown", "remove", "null")))
        if how == "typed":
            obj = set_at(obj, path, draw(typed(sub)))
        elif how == "junk":
            obj = set_at(obj, path, draw(junk()))
        elif how == "null":
            obj = set_at(obj, path, None)
        elif how == "remove" and path:
            remove_at(obj, path)
        else:
            name = draw(st.one_of(st.sampled_from(UNKNOWN_FIELDS), odd_text()))
            obj = set_at(obj, (*path, name), draw(junk()))
    return obj


# -- encoding -----------------------------------------------------------------------------


def byte_position(draw: st.DrawFn, length: int) -> int:
    """A position in ``length`` bytes, drawn as a fraction: the draw must not depend on
    the length (server-made names grow), or hypothesis cannot replay an example."""
    return draw(st.integers(0, 999)) * length // 1000


def _dumps(value: Any, ensure_ascii: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def encoded(draw: st.DrawFn, value: Any) -> bytes:
    """``value`` as request bytes: JSON (escaped or raw UTF-8, lone surrogates as Python
    writes them), sometimes damaged: cut short, a byte changed, a duplicate key, trailing
    garbage, not UTF-8."""
    raw = _dumps(value, draw(st.booleans()))
    damage = draw(
        st.sampled_from(("none", "none", "none", "cut", "byte", "dup", "trail", "latin1", "bom"))
    )
    if damage == "cut" and raw:
        return raw[: byte_position(draw, len(raw))]
    if damage == "byte" and raw:
        at = byte_position(draw, len(raw))
        return raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    if damage == "dup" and raw.startswith(b"{") and len(raw) > 2:
        return b'{"kind":"Pod","kind":5,' + raw[1:]
    if damage == "trail":
        return raw + draw(st.sampled_from([b" x", b"}", b"\x00", b" {}", b"\n\n"]))
    if damage == "latin1":
        return raw + b'\xff"'
    if damage == "bom":
        return b"\xef\xbb\xbf" + raw
    return raw


def schema_of(value: Any) -> dict[str, Any]:
    """An OpenAPI-shaped schema of ``value``'s own structure (for documents the server
    has no schema of: a scheduler configuration), so :func:`mutated` can walk it."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: schema_of(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"type": "array", "items": schema_of(value[0]) if value else {}}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer", "format": "int32"}
    if isinstance(value, float):
        return {"type": "number"}
    return {"type": "string"} if isinstance(value, str) else {}
