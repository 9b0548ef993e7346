"""``labelSelector`` and ``fieldSelector`` query strings: parse once, match many objects.

The grammar is apimachinery's (``pkg/labels/selector.go``, ``pkg/fields/selector.go``):
labels accept ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a)``, ``k``, ``!k``,
``k>1``, ``k<1``; fields accept ``f=v``, ``f==v``, ``f!=v``. A bad selector raises a
400 BadRequest :class:`~kubesched.apiserver.errors.ApiError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.apiserver.errors import bad_request

_REQ = re.compile(
    r"""^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)\s*
    (?:(?P<op>==|=|!=|>|<)\s*(?P<value>[A-Za-z0-9_.-]*)
      |\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\)
    )?\s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key op values``."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        try:
            number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return present and (number > bound if self.op == ">" else number < bound)


def _split_top(text: str) -> list[str]:
    # Commas inside "in (a,b)" do not separate requirements.
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """Parse a ``labelSelector``; the empty string selects everything."""
    reqs = []
    for part in _split_top(text):
        m = _REQ.match(part)
        if m is None:
            raise bad_request(f"unable to parse requirement: {part.strip()!r}")
        key, neg = m["key"], m["neg"]
        if m["setop"]:
            if neg:
                raise bad_request(f"unable to parse requirement: {part.strip()!r}")
            values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
            reqs.append(Requirement(key, m["setop"], values))
        elif m["op"]:
            if neg:
                raise bad_request(f"unable to parse requirement: {part.strip()!r}")
            op = "=" if m["op"] == "==" else m["op"]
            if op in (">", "<") and not re.fullmatch(r"-?\d+", m["value"]):
                raise bad_request(
                    f"unable to parse requirement: {part.strip()!r}: for 'gt', 'lt' "
                    "operators, the value must be an integer"
                )
            reqs.append(Requirement(key, op, (m["value"],)))
        else:
            reqs.append(Requirement(key, "!" if neg else "exists"))
    return tuple(reqs)


@dataclass(frozen=True)
class FieldRequirement:
    """One field requirement: ``field = value`` or ``field != value``."""

    field: str
    equal: bool
    value: str


def parse_field_selector(text: str, allowed: tuple[str, ...]) -> tuple[FieldRequirement, ...]:
    """Parse a ``fieldSelector``, refusing fields the resource does not index."""
    reqs = []
    for part in _split_top(text):
        part = part.strip()
        for op in ("!=", "==", "="):
            if op in part:
                name, value = part.split(op, 1)
                break
        else:
            raise bad_request(f"invalid selector: '{part}'; can't understand '{part}'")
        name = name.strip()
        if name not in allowed:
            raise bad_request(f"field label not supported: {name}")
        reqs.append(FieldRequirement(name, op != "!=", value.strip()))
    return tuple(reqs)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string a field selector compares for ``path`` (``""`` when unset)."""
    if path == "source":  # events: source.component
        path = "source.component"
    elif path == "name":  # persistent volumes and claims: their legacy label for metadata.name
        path = "metadata.name"
    elif path == "status.successful":  # jobs: JobToSelectableFields, a count (0 if unset)
        succeeded = (obj.get("status") or {}).get("succeeded")
        return str(succeeded if isinstance(succeeded, int) else 0)
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


Matcher = Callable[[Mapping[str, Any]], bool]


def matcher(
    labels: tuple[Requirement, ...], fields: tuple[FieldRequirement, ...]
) -> Matcher | None:
    """A predicate on objects for both selectors, or ``None`` when they select everything."""
    if not labels and not fields:
        return None

    def match(obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        obj_labels = meta.get("labels") or {}
        if not all(r.matches(obj_labels) for r in labels):
            return False
        return all((field_value(obj, f.field) == f.value) == f.equal for f in fields)

    return match
