"""Field errors that print like Kubernetes' ``field.Error``, and the error raised for a bad file.

A user who moves from kube-scheduler to kubesched should see the same message for the same
mistake, so ``str(FieldError)`` follows apimachinery's ``field.Error.Error()``:
``<path>: <Type>[: <value>][: <detail>]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from kubesched.config.gofmt import format_float, go_quote

__all__ = ["ConfigError", "ErrorType", "FieldError", "format_value"]


class ErrorType(StrEnum):
    """Machine-readable error kinds; the values are apimachinery's ``ErrorType`` strings."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"
    # Not in apimachinery: a file that cannot be decoded at all (YAML syntax, unknown
    # field). Upstream reports these as plain decoder errors; here they print as
    # "<path>: <detail>" so that every problem of a file shares one list.
    DECODE = "DecodeError"


_LABELS: dict[str, str] = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.DECODE: "",
}
# apimachinery never prints the value of these kinds.
_VALUELESS = frozenset(
    {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}
)


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def format_value(value: object) -> str:
    """``value`` as ``field.Error`` prints a bad value.

    Integers, floats and booleans print plainly, strings Go-quoted, ``None`` as ``null``
    and lists or mappings as compact JSON (apimachinery marshals other values to JSON).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(_jsonable(value), separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path, e.g. ``profiles[1].schedulerName: Required value``."""

    path: str
    type: str
    value: object = field(default="", hash=False)
    detail: str = ""

    @classmethod
    def invalid(cls, path: str, value: object, detail: str) -> FieldError:
        """A malformed or out-of-range value."""
        return cls(path, ErrorType.INVALID, value, detail)

    @classmethod
    def required(cls, path: str, detail: str = "") -> FieldError:
        """A value that must be given but is missing or empty."""
        return cls(path, ErrorType.REQUIRED, "", detail)

    @classmethod
    def duplicate(cls, path: str, value: object) -> FieldError:
        """A value that must be unique but was seen before."""
        return cls(path, ErrorType.DUPLICATE, value, "")

    @classmethod
    def not_supported(cls, path: str, value: object, supported: Sequence[str]) -> FieldError:
        """A value outside an enumeration; the detail lists the supported values."""
        detail = ""
        if supported:
            detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
        return cls(path, ErrorType.NOT_SUPPORTED, value, detail)

    @classmethod
    def forbidden(cls, path: str, detail: str) -> FieldError:
        """A well-formed value that is not allowed here."""
        return cls(path, ErrorType.FORBIDDEN, "", detail)

    @classmethod
    def decode(cls, path: str, detail: str) -> FieldError:
        """A document that cannot be decoded: syntax error, unknown field, bad encoding."""
        return cls(path, ErrorType.DECODE, "", detail)

    def body(self) -> str:
        """The message without the path (apimachinery's ``ErrorBody``)."""
        if self.type == ErrorType.DECODE:
            return self.detail
        # An unknown type prints as itself rather than failing: the message must still show.
        text = _LABELS.get(self.type, self.type)
        if self.type not in _VALUELESS:
            text += ": " + format_value(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        # Go would print ": body" for an empty path; a path-less error reads better bare.
        return f"{self.path}: {self.body()}" if self.path else self.body()


class ConfigError(Exception):
    """A configuration that cannot be used, with every problem found in it.

    ``ConfigError(source, errors, more_errors, ...)`` joins any number of error lists, so
    that later layers (plugin argument validation) can add theirs to the same report.
    """

    def __init__(self, source: str, *error_lists: Iterable[FieldError]) -> None:
        self.source = source
        self.errors: list[FieldError] = [e for errors in error_lists for e in errors]
        super().__init__(source, self.errors)

    def extended(self, errors: Iterable[FieldError]) -> ConfigError:
        """A new error with ``errors`` appended to this one's."""
        return ConfigError(self.source, self.errors, errors)

    def __str__(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        return "\n".join(prefix + _one_line(str(error)) for error in self.errors)


def _one_line(text: str) -> str:
    # A key or value with a newline (an unknown field named "a\nb") must not split an
    # error over two lines: control characters are shown escaped, as Go's %q shows them.
    if not any(ord(c) < 32 or ord(c) == 127 for c in text):
        return text
    return "".join(c if not (ord(c) < 32 or ord(c) == 127) else json.dumps(c)[1:-1] for c in text)
