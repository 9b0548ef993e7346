"""Plugin arguments: decoding ``pluginConfig[].args`` and reporting what is wrong.

Each plugin owns an args dataclass and validates it in its factory. Errors carry field
paths relative to the args object (``defaultConstraints[0].maxSkew``); the runner that
builds a profile prefixes them with the config path of the args, so the user reads
``profiles[1].pluginConfig[0].args.defaultConstraints[0].maxSkew``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.config import FieldError

__all__ = ["ArgsError", "ArgsReader", "FieldError"]


class ArgsError(Exception):
    """A plugin's arguments are invalid; carries every problem found."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = list(errors)


class ArgsReader:
    """Reads typed fields out of an args mapping, collecting errors instead of raising.

    Unknown fields are errors, as upstream decodes plugin args strictly.
    """

    def __init__(self, args: Mapping[str, Any] | None, known: Sequence[str] = ()) -> None:
        self.args: Mapping[str, Any] = args or {}
        self.errors: list[FieldError] = []
        # kind/apiVersion may be present in args written in the versioned form.
        allowed = {*known, "kind", "apiVersion"}
        if known:
            for key in self.args:
                if key not in allowed:
                    self.errors.append(FieldError.invalid(key, key, "unknown field"))

    def get(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        """``args[key]`` if of type ``kind`` (an error otherwise), else ``default``."""
        value = self.args.get(key)
        if value is None:
            return default
        if isinstance(value, bool) and kind is not bool and bool not in _as_tuple(kind):
            self.errors.append(FieldError.invalid(key, value, "must be of the right type"))
            return default
        if not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in _as_tuple(kind))
            self.errors.append(FieldError.invalid(key, value, f"must be {names}"))
            return default
        return value

    def raise_if_errors(self) -> None:
        if self.errors:
            raise ArgsError(self.errors)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
