"""JSON the way Go's ``encoding/json`` writes and reads it, for the extender wire types.

kube-scheduler's extender v1 structs carry no json tags, so the wire names are Go's field
names and both sides rely on ``encoding/json`` defaults:

* ``Marshal`` writes compact JSON, struct fields in declaration order, map keys sorted,
  ``<``, ``>``, ``&``, U+2028 and U+2029 escaped as ``\\u003c``-style sequences, other
  non-ASCII text as raw UTF-8.
* ``Unmarshal`` matches an object key to a field exactly or, failing that, with Unicode
  case folding (``nodes`` and ``NODES`` both fill ``Nodes``), ignores unknown keys, lets
  the last of repeated keys win, and leaves a field untouched when the value is ``null``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubesched.extender.errors import WireError

_HTML_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_ESCAPE_TABLE = str.maketrans(_HTML_ESCAPES)


def dumps(value: Any) -> bytes:
    """``value`` (JSON-ready, dict order kept) as Go's ``json.Marshal`` bytes.

    Callers sort Go maps themselves (see ``sorted_map``); objects passed through from the
    request (a Pod, a Node) keep the order they came in.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # The escaped characters can only occur inside strings, so a plain translation of
    # the whole text is exact.
    return text.translate(_ESCAPE_TABLE).encode("utf-8")


def sorted_map(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A Go map as ``Marshal`` orders it (keys sorted byte-wise; ``None`` stays nil)."""
    if value is None:
        return None
    # Code-point order of str equals byte order of their UTF-8 encoding.
    return {k: value[k] for k in sorted(value)}


def _fold(key: str) -> str:
    """Go's ``bytes.EqualFold`` for keys matched against ASCII field names: the Kelvin
    sign folds to ``k`` and the long s to ``s``; other non-ASCII letters never match."""
    return key.replace("\u017f", "s").lower()  # str.lower maps the Kelvin sign to "k"


def fields(raw: object, names: tuple[str, ...], path: str) -> dict[str, Any]:
    """The members of JSON object ``raw`` that fill the Go struct fields ``names``.

    Returns ``{GoName: value}`` for each field present (exact matches win over folded
    ones; among keys naming the same field, the last in the document wins, as in Go).
    Unknown keys are ignored. Raises WireError when ``raw`` is not an object.
    """
    if not isinstance(raw, Mapping):
        raise WireError(path, f"expected a JSON object, got {kind(raw)}")
    by_fold = {name.lower(): name for name in names}
    exact = set(names)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):  # pragma: no cover - json.loads gives str keys
            continue
        name = key if key in exact else by_fold.get(_fold(key))
        if name is not None:
            out[name] = value
    return out


def kind(value: object) -> str:
    """The JSON type of a decoded value, in the words of Go's UnmarshalTypeError."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def get_str(obj: Mapping[str, Any], name: str, path: str) -> str:
    """A Go ``string`` field: absent or null is ``""``."""
    value = obj.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(join(path, name), f"expected a string, got {kind(value)}")
    return value


def get_int(obj: Mapping[str, Any], name: str, path: str) -> int:
    """A Go ``int64`` field: absent or null is 0. Like Go, refuses any number written
    with a fraction or an exponent (``1.0``, ``1e2``)."""
    value = obj.get(name)
    if value is None:
        return 0
    if isinstance(value, float):
        raise WireError(join(path, name), f"expected an integer, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(join(path, name), f"expected an integer, got {kind(value)}")
    if not -(2**63) <= value < 2**63:
        raise WireError(join(path, name), f"{value} overflows int64")
    return value


def get_object(obj: Mapping[str, Any], name: str, path: str) -> dict[str, Any] | None:
    """A pointer to a Kubernetes object (``*v1.Pod``): null or absent is ``None``."""
    value = obj.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise WireError(join(path, name), f"expected a JSON object, got {kind(value)}")
    return value


def get_str_list(obj: Mapping[str, Any], name: str, path: str) -> list[str] | None:
    """A ``*[]string`` field: null or absent is ``None``."""
    value = obj.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise WireError(join(path, name), f"expected an array, got {kind(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise WireError(f"{join(path, name)}[{i}]", f"expected a string, got {kind(item)}")
    return list(value)


def get_str_map(obj: Mapping[str, Any], name: str, path: str) -> dict[str, str] | None:
    """A ``map[string]string`` field: null or absent is ``None``; null values are ``""``."""
    value = obj.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise WireError(join(path, name), f"expected a JSON object, got {kind(value)}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if item is None:
            item = ""
        if not isinstance(item, str):
            raise WireError(f"{join(path, name)}[{key}]", f"expected a string, got {kind(item)}")
        out[key] = item
    return out


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
