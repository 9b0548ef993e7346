"""``DynamicResourcesArgs``: how long Filter may search for an allocation per node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.config.gofmt import format_duration, parse_duration
from kubesched.framework.args import ArgsReader, FieldError

__all__ = ["DynamicResourcesArgs"]

_FILTER_TIMEOUT = "filterTimeout"
_BINDING_TIMEOUT = "bindingTimeout"
#: Upstream's default ``filterTimeout`` (``SetDefaults_DynamicResourcesArgs``).
DEFAULT_FILTER_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    """Upstream ``DynamicResourcesArgs`` (1.34).

    **filter_timeout**: seconds one node's allocation may take in Filter before the node
    is given up ("timed out trying to allocate devices"); 0 means no limit. A pod asking
    for many devices among thousands can make the search long; upstream bounds it so
    that one pod cannot stall the scheduler.
    """

    filter_timeout: float = DEFAULT_FILTER_TIMEOUT

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[DynamicResourcesArgs, list[FieldError]]:
        """Decode the wire form (``filterTimeout: 10s``); unset fields take the defaults.
        ``bindingTimeout`` belongs to binding conditions (alpha, off in 1.34) and is
        refused."""
        reader = ArgsReader(args, known=(_FILTER_TIMEOUT,))
        errors = reader.errors
        if args and _BINDING_TIMEOUT in args:
            errors[:] = [e for e in errors if e.path != _BINDING_TIMEOUT]
            errors.append(
                FieldError.invalid(
                    _BINDING_TIMEOUT,
                    args[_BINDING_TIMEOUT],
                    "needs the DRADeviceBindingConditions feature gate, which is alpha and "
                    "off in Kubernetes 1.34",
                )
            )
        timeout = DEFAULT_FILTER_TIMEOUT
        raw = reader.get(_FILTER_TIMEOUT, str, None)
        if raw is not None:
            try:
                timeout = parse_duration(raw)
            except ValueError as err:
                errors.append(FieldError.invalid(_FILTER_TIMEOUT, raw, str(err)))
        return cls(filter_timeout=timeout), errors

    def validate(self) -> list[FieldError]:
        """Every problem, as upstream's ``ValidateDynamicResourcesArgs``."""
        if self.filter_timeout < 0:
            return [
                FieldError.invalid(
                    _FILTER_TIMEOUT,
                    format_duration(self.filter_timeout),
                    "must be zero or positive",
                )
            ]
        return []
