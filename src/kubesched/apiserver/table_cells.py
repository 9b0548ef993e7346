"""What every Table printer shares: column definitions, the Name and Age columns and
``duration.HumanDuration`` (see :mod:`.tables` and :mod:`.printers`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = [
    "AGE_DOC",
    "NAME_DOC",
    "TABLE_API_VERSION",
    "Cells",
    "Column",
    "age",
    "col",
    "human_duration",
]

Column = dict[str, Any]
Cells = list[Any]

TABLE_API_VERSION = "meta.k8s.io/v1"
NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated."
)
AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def col(
    name: str, description: str, priority: int = 0, fmt: str = "", kind: str = "string"
) -> Column:
    """One ``TableColumnDefinition``."""
    return {
        "name": name,
        "type": kind,
        "format": fmt,
        "description": description,
        "priority": priority,
    }


def human_duration(seconds: float) -> str:
    """``k8s.io/apimachinery/pkg/util/duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def age(stamp: Any, now: datetime) -> str:
    """``translateTimestampSince``: how long ago ``stamp`` was."""
    # translateTimestampSince: "<unknown>" for a zero time.
    if not stamp:
        return "<unknown>"
    try:
        then = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration((now - then).total_seconds())
