"""Strict decoding of plain data (from YAML or JSON) into typed values, keeping every error.

Like kube-scheduler's strict decoder, a field of the wrong type or a field the schema does
not know is an error; unlike it, decoding goes on after one, so that a user sees all the
problems of a file at once. A ``null`` reads as an absent field, as in Go.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from kubesched.config.errors import ErrorType, FieldError
from kubesched.config.gofmt import go_quote, parse_duration

__all__ = ["INT32", "INT64", "Fields", "child", "index", "type_error"]

INT32 = 32
INT64 = 64
_DURATION_HINT = 'must be a duration string like "5s", "500ms" or "1m30s"'


def child(path: str, key: str) -> str:
    """The path of field ``key`` inside ``path``."""
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    """The path of item ``i`` of the list at ``path``."""
    return f"{path}[{i}]"


def _kind(value: object) -> str:
    """The JSON type name of ``value``, as schema errors name types."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str | bytes):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _shown(value: object) -> object:
    """What an error shows of a bad value: scalars as they are, containers by type name."""
    # A whole list or object would drown the message.
    scalar = _kind(value) in ("boolean", "integer", "number", "string")
    return value if scalar else _kind(value)


def type_error(path: str, value: object, expected: str) -> FieldError:
    """``value`` at ``path`` is not of JSON type ``expected``."""
    return FieldError(path, ErrorType.TYPE_INVALID, _shown(value), f"must be of type {expected}")


class Fields:
    """Typed, strict reads of one object's fields; errors go to a shared list.

    Every read marks its key as known; ``finish()`` then reports the keys nobody read as
    unknown fields. A read of a missing, null or ill-typed field returns the default.
    """

    def __init__(self, data: object, path: str, errors: list[FieldError]) -> None:
        self.path = path
        self.errors = errors
        self._read: set[str] = set()
        if data is None:
            data = {}
        elif not isinstance(data, Mapping):
            errors.append(type_error(path, data, "object"))
            data = {}
        self._data: Mapping[Any, Any] = data

    def at(self, key: str) -> str:
        """The path of field ``key``."""
        return child(self.path, key)

    def raw(self, key: str) -> object:
        """The field's undecoded value (``None`` when absent)."""
        self._read.add(key)
        return self._data.get(key)

    def _typed(self, key: str, types: type | tuple[type, ...], expected: str) -> Any:
        value = self.raw(key)
        if value is None:
            return None
        # A Python bool is an int, but a JSON boolean is not a number (nor the reverse).
        if isinstance(value, bool) != (types is bool) or not isinstance(value, types):
            self.errors.append(type_error(self.at(key), value, expected))
            return None
        return value

    def string(self, key: str, default: str = "") -> str:
        """A string field."""
        value = self._typed(key, str, "string")
        return default if value is None else str(value)

    def optional_string(self, key: str) -> str | None:
        """A string field that distinguishes absent (``None``) from empty."""
        value: str | None = self._typed(key, str, "string")
        return value

    def boolean(self, key: str, default: bool = False) -> bool:
        """A boolean field."""
        value = self._typed(key, bool, "boolean")
        return default if value is None else bool(value)

    def optional_boolean(self, key: str) -> bool | None:
        """A boolean field that distinguishes absent (``None``)."""
        value: bool | None = self._typed(key, bool, "boolean")
        return value

    def integer(self, key: str, bits: int = INT32) -> int | None:
        """An integer field of Go type int32 or int64; ``None`` when absent."""
        value = self._typed(key, (int, float), "integer")
        if value is None:
            return None
        # YAML "2.0" reaches Go's decoder as the JSON number 2, so integral floats pass.
        if isinstance(value, float):
            if not value.is_integer():
                self.errors.append(type_error(self.at(key), value, "integer"))
                return None
            value = int(value)
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if not low <= value <= high:
            detail = f"must be between {low} and {high}"
            self.errors.append(FieldError.invalid(self.at(key), value, detail))
            return None
        return int(value)

    def number(self, key: str) -> float | None:
        """A floating-point field; ``None`` when absent."""
        value = self._typed(key, (int, float), "number")
        return None if value is None else float(value)

    def duration(self, key: str) -> float | None:
        """A Go duration string (``"1m30s"``) as seconds; ``None`` when absent."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, str):
            try:
                return parse_duration(value)
            except ValueError:
                pass
        self.errors.append(FieldError.invalid(self.at(key), _shown(value), _DURATION_HINT))
        return None

    def data(self, key: str) -> bytes:
        """A ``[]byte`` field: base64 text in JSON and YAML."""
        value = self.raw(key)
        if value is None:
            return b""
        if isinstance(value, bytes):  # YAML !!binary
            return value
        if not isinstance(value, str):
            self.errors.append(type_error(self.at(key), value, "string"))
            return b""
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            # No value in the message: these fields can hold private keys.
            self.errors.append(FieldError.decode(self.at(key), "invalid base64 data"))
            return b""

    def nested(self, key: str) -> Fields | None:
        """A nested object field; ``None`` when absent or not an object."""
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.errors.append(type_error(self.at(key), value, "object"))
            return None
        return Fields(value, self.at(key), self.errors)

    def items(self, key: str) -> list[tuple[str, object]]:
        """A list field as (item path, item) pairs; empty when absent or not a list."""
        value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            self.errors.append(type_error(self.at(key), value, "array"))
            return []
        return [(index(self.at(key), i), item) for i, item in enumerate(value)]

    def finish(self) -> None:
        """Report every field that was never read as unknown."""
        for key in self._data:
            if key not in self._read:
                name = key if isinstance(key, str) else str(key)
                self.errors.append(FieldError.decode(self.path, f"unknown field {go_quote(name)}"))
