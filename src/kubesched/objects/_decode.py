"""Small typed readers for Kubernetes JSON, with field paths in their errors.

Objects arrive as plain dicts from YAML or JSON. These readers check each field's type
once, at decode time, so that the scheduling code after them can trust its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from kubesched.objects.errors import ObjectError

Raw = Mapping[str, Any]
_EMPTY: Raw = {}
T = TypeVar("T")


def join(path: str, key: str | int) -> str:
    """``join("spec", "containers")`` → ``spec.containers``; ints become ``[i]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def as_map(value: object, path: str) -> Raw:
    """``value`` as a mapping; ``None`` reads as empty (an absent field)."""
    if value is None:
        return _EMPTY
    if not isinstance(value, Mapping):
        raise ObjectError(path, f"expected an object, got {type(value).__name__}")
    return value


def as_list(value: object, path: str) -> Sequence[Any]:
    """``value`` as a list; ``None`` reads as empty."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise ObjectError(path, f"expected a list, got {type(value).__name__}")
    return value


def get_map(raw: Raw, key: str, path: str) -> Raw:
    return as_map(raw.get(key), join(path, key))


def get_list(raw: Raw, key: str, path: str) -> Sequence[Any]:
    return as_list(raw.get(key), join(path, key))


def get_str(raw: Raw, key: str, path: str, default: str = "") -> str:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ObjectError(join(path, key), f"expected a string, got {type(value).__name__}")
    return value


def get_int(raw: Raw, key: str, path: str, default: int | None = None) -> int | None:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ObjectError(join(path, key), f"expected an integer, got {value!r}")
    return value


def get_bool(raw: Raw, key: str, path: str, default: bool = False) -> bool:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ObjectError(join(path, key), f"expected a boolean, got {value!r}")
    return value


def get_str_map(raw: Raw, key: str, path: str) -> dict[str, str]:
    """A ``map[string]string`` field such as ``metadata.labels``."""
    mapping = get_map(raw, key, path)
    out: dict[str, str] = {}
    for k, v in mapping.items():
        if not isinstance(v, str):
            raise ObjectError(join(join(path, key), str(k)), f"expected a string, got {v!r}")
        out[str(k)] = v
    return out


def get_str_list(raw: Raw, key: str, path: str) -> tuple[str, ...]:
    items = get_list(raw, key, path)
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise ObjectError(join(join(path, key), i), f"expected a string, got {v!r}")
    return tuple(items)


def nested(path: str, decode: Callable[[object], T], value: object) -> T:
    """Run a decoder whose errors are relative to ``value``, prefixing them with ``path``."""
    try:
        return decode(value)
    except ObjectError as err:
        inner = (
            f"{path}.{err.path}"
            if err.path and not err.path.startswith("[")
            else (f"{path}{err.path}")
        )
        raise ObjectError(inner, err.message, err.where) from None
