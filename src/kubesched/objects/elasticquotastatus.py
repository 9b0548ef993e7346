"""An ElasticQuota's ``status.used`` from its namespace's pods, as scheduler-plugins
v0.34.7's ElasticQuota controller computes it (``pkg/controllers/elasticquota_controller.go``).

A pure function of API objects (the controller writes it; the policy lab can report it):

* every resource named in ``spec.min`` or ``spec.max`` is listed, at 0 when unused;
* each **Running** pod of the namespace adds its request: its containers' requests summed,
  raised to any init container's request (init containers run one at a time). Pending
  pods, even bound ones, count nothing yet; finished pods nothing any more.

Deviation: upstream means to add the pod overhead too, but drops the sum it computes
(``quota.Add`` returns a new list that is not kept); so overhead is not counted here
either, which keeps ``used`` what a scheduler-plugins cluster shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.objects.quantity import Quantity, parse_quantity_value

__all__ = ["compute_used", "pod_request", "same_resource_list"]

Raw = Mapping[str, Any]
ResourceList = dict[str, Quantity]

_ZERO = parse_quantity_value("0")


def _requests(container: object) -> ResourceList:
    if not isinstance(container, Mapping):
        return {}
    requests = (container.get("resources") or {}).get("requests") or {}
    return {str(name): parse_quantity_value(value) for name, value in requests.items()}


def _add(into: ResourceList, amounts: ResourceList) -> None:
    for name, value in amounts.items():
        current = into.get(name)
        if current is None or current.value == 0:
            # A zero quantity takes the other's format, as apimachinery's Add does.
            into[name] = Quantity(value.value + (current.value if current else 0), value.format)
        else:
            into[name] = Quantity(current.value + value.value, current.format)


def _raise_to(into: ResourceList, amounts: ResourceList) -> None:
    for name, value in amounts.items():
        current = into.get(name)
        if current is None or value.value > current.value:
            into[name] = value


def pod_request(pod: Raw) -> ResourceList:
    """The resources ``pod`` holds as the controller counts them (upstream
    ``computePodResourceRequest``): containers summed, then each resource raised to the
    largest init container's."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for container in spec.get("containers") or ():
        _add(total, _requests(container))
    init: ResourceList = {}
    for container in spec.get("initContainers") or ():
        _raise_to(init, _requests(container))
    _raise_to(total, init)
    return total


def _names(resource_list: object) -> Iterable[str]:
    return (str(name) for name in resource_list) if isinstance(resource_list, Mapping) else ()


def compute_used(quota: Raw, pods: Sequence[Raw]) -> dict[str, str]:
    """``status.used`` of ``quota`` given ``pods`` (the pods of its namespace), as the
    wire's ResourceList (canonical quantity strings)."""
    spec = quota.get("spec") or {}
    used: ResourceList = {}
    for name in (*_names(spec.get("min")), *_names(spec.get("max"))):
        used[name] = _ZERO
    for pod in pods:
        if (pod.get("status") or {}).get("phase") == "Running":
            _add(used, pod_request(pod))
    return {name: str(value) for name, value in used.items()}


def same_resource_list(a: object, b: object) -> bool:
    """Whether two wire ResourceLists are equal as quantities (``1Gi`` is
    ``1073741824``; apimachinery's semantic equality), with the same names."""
    left = a if isinstance(a, Mapping) else {}
    right = b if isinstance(b, Mapping) else {}
    if set(left) != set(right):
        return False
    try:
        return all(parse_quantity_value(left[k]) == parse_quantity_value(right[k]) for k in left)
    except ValueError:
        return False
