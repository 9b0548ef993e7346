"""Errors of the extender part.

::

    ExtenderError
    ├── WireError     a request or answer that is not the extender v1 JSON (field path)
    └── BadRequest    a request the server cannot answer (HTTP 400, message for the caller)

Both reach the caller of the server as an HTTP 400 whose body says what was wrong and
where; the server keeps serving.
"""

from __future__ import annotations


class ExtenderError(Exception):
    """Base of the errors raised by ``kubesched.extender``."""


class WireError(ExtenderError, ValueError):
    """JSON that does not decode into an extender v1 type.

    ``path`` names the field in Go's spelling (``ExtenderArgs.Nodes.items[2]``).
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class BadRequest(ExtenderError):
    """A well-formed request the server cannot answer (e.g. a Pod that does not decode)."""
