"""Node taints and pod tolerations, decoded and matched as kube-scheduler does.

A taint on a node repels pods; a toleration on a pod lets it ignore matching taints.
The TaintToleration plugin filters nodes on NoSchedule/NoExecute taints and scores
them on PreferNoSchedule ones, for every (pod, node) pair, so matching here is kept
to a few string comparisons. Decoding validates like the API server (release 1.34:
tolerations know only the Equal and Exists operators), so a bad manifest fails at
load time with a field path.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Final

from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import (
    _check_label_key,
    _check_label_value,
    _field_string,
    _invalid,
    _object,
    _required,
    _unsupported,
    _wrong_type,
)

__all__ = [
    "EFFECTS",
    "EQUAL",
    "EXISTS",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "TOLERATION_OPERATORS",
    "Taint",
    "Toleration",
    "find_untolerated_taint",
    "tolerations_tolerate_taint",
]

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
#: The taint effects, in the order the API server lists them in messages.
EFFECTS: Final = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

EQUAL: Final = "Equal"
EXISTS: Final = "Exists"
#: The toleration operators, in the order the API server lists them in messages.
TOLERATION_OPERATORS: Final = (EQUAL, EXISTS)


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint: pods that do not tolerate it are kept off (or evicted from) the node."""

    key: str
    value: str
    effect: str

    @classmethod
    def from_dict(cls, data: object) -> Taint:
        """Decode a ``v1.Taint``; ``timeAdded`` is accepted and ignored.

        Raises :class:`ObjectError` with a path relative to ``data``.
        """
        obj = _object(data, "", ("key", "value", "effect", "timeAdded"))
        key = _field_string(obj, "key", "")
        value = _field_string(obj, "value", "")
        effect = _field_string(obj, "effect", "")
        # Only the NoExecute taint manager reads timeAdded; check its type, no more.
        _field_string(obj, "timeAdded", "")
        _check_label_key(key, "key")
        _check_label_value(value, "value")
        if not effect:
            raise ObjectError("effect", _required())
        if effect not in EFFECTS:
            raise ObjectError("effect", _unsupported(effect, EFFECTS))
        return cls(key, value, effect)

    def __str__(self) -> str:
        """``key=value:effect``, or ``key:effect`` without a value, as kubectl prints taints."""
        if not self.effect:
            return f"{self.key}={self.value}:" if self.value else self.key
        if not self.value:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration: it lets the pod ignore the taints it matches.

    An empty ``operator`` is stored as ``Equal``, as the API documents the default.
    ``toleration_seconds`` only matters to NoExecute eviction; None means forever.
    """

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        if not self.operator:
            object.__setattr__(self, "operator", EQUAL)

    @classmethod
    def from_dict(cls, data: object) -> Toleration:
        """Decode a ``v1.Toleration``.

        Raises :class:`ObjectError` with a path relative to ``data``.
        """
        obj = _object(data, "", ("key", "operator", "value", "effect", "tolerationSeconds"))
        key = _field_string(obj, "key", "")
        operator = _field_string(obj, "operator", "")
        value = _field_string(obj, "value", "")
        effect = _field_string(obj, "effect", "")
        seconds = obj.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            raise _wrong_type("tolerationSeconds", seconds, "integer")
        # The checks and messages of the API server's ValidateTolerations, in its order.
        if key:
            _check_label_key(key, "key")
        if not key and operator != EXISTS:
            raise ObjectError(
                "operator",
                _invalid(
                    operator,
                    "operator must be Exists when `key` is empty, "
                    'which means "match all values and all keys"',
                ),
            )
        if seconds is not None and effect != NO_EXECUTE:
            raise ObjectError(
                "effect",
                _invalid(effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"),
            )
        if operator in ("", EQUAL):
            _check_label_value(value, "value")
        elif operator == EXISTS:
            if value:
                raise ObjectError(
                    "operator",
                    _invalid(operator, "value must be empty when `operator` is 'Exists'"),
                )
        else:
            raise ObjectError("operator", _unsupported(operator, TOLERATION_OPERATORS))
        # An empty effect is allowed: it tolerates every effect.
        if effect and effect not in EFFECTS:
            raise ObjectError("effect", _unsupported(effect, EFFECTS))
        return cls(key, operator or EQUAL, value, effect, seconds)

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration matches ``taint``.

        An empty effect matches every effect and an empty key every key; Exists
        matches any value, Equal only the same value.
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        operator = self.operator
        if operator == EQUAL:
            return self.value == taint.value
        return operator == EXISTS


def tolerations_tolerate_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    # A plain loop rather than any(): generators cost more than the work here.
    for toleration in tolerations:  # noqa: SIM110
        if toleration.tolerates(taint):
            return True
    return False


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: Container[str]
) -> Taint | None:
    """The first of ``taints`` with an effect in ``effects`` that no toleration tolerates.

    None when every such taint is tolerated. The TaintToleration filter passes
    ``{NoSchedule, NoExecute}``; the first untolerated taint names the failure reason.
    """
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
