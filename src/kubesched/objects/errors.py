"""Errors raised while decoding Kubernetes objects.

Every decoding error names where it happened: the object (``Pod default/web-0``) and the
field path inside it (``spec.containers[0].resources.requests.cpu``), so that a user
can find the line to fix in a file of thousands of objects.
"""

from __future__ import annotations


class ObjectError(ValueError):
    """An invalid Kubernetes object or field.

    ``path`` is the field path inside the object (``spec.tolerations[2].effect``);
    ``where`` names the object or file it belongs to, filled in by the caller that knows.
    """

    def __init__(self, path: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.where = where

    def located(self, where: str) -> ObjectError:
        """The same error, said to be in ``where`` (an object or a file)."""
        return ObjectError(self.path, self.message, where)

    def __str__(self) -> str:
        parts = [p for p in (self.where, self.path) if p]
        return ": ".join([*parts, self.message])
