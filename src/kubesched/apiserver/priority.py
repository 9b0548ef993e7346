"""Pod priority, as kube-apiserver's Priority admission plugin decides it.

Mirrors ``plugin/pkg/admission/priority/admission.go``: on pod create,
``spec.priorityClassName`` resolves to ``spec.priority`` and ``spec.preemptionPolicy``;
with no class named, the ``globalDefault`` class is used (its name is written to the pod),
and with none of those the priority is 0. An unknown class, or a priority or preemption
policy in the pod that differs from the class's, is refused with 403 Forbidden and
upstream's message. PriorityClass writes are checked for the value ceiling and for one
global default, and the two system classes exist from
the start and cannot be deleted (``pkg/registry/scheduling/priorityclass/storage``).
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import PRIORITYCLASSES
from kubesched.apiserver.store import Store
from kubesched.apiserver.watch import Object

#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.SystemCriticalPriority``.
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
#: Name → (value, description) of the classes every cluster has (``SystemPriorityClasses``).
SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (
        SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    "system-cluster-critical": (
        SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
}
#: The preemption policy a PriorityClass and a pod default to.
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def system_priority_classes() -> list[Object]:
    """Fresh PriorityClass objects for the system classes, ready to store."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
            "preemptionPolicy": PREEMPT_LOWER_PRIORITY,
        }
        for name, (value, description) in SYSTEM_PRIORITY_CLASSES.items()
    ]


def _forbidden_pod(obj: Object, cause: str) -> errors.ApiError:
    name = (obj.get("metadata") or {}).get("name") or ""
    return errors.forbidden("pods", name, cause)


def _default_class(store: Store) -> Object | None:
    # Upstream's getDefaultPriorityClass: the lowest value wins if several claim the default.
    defaults = [pc for pc in store.list(PRIORITYCLASSES).items if pc.get("globalDefault")]
    return min(defaults, key=lambda pc: int(pc.get("value", 0)), default=None)


def admit_pod(store: Store, pod: Object) -> None:
    """Set a new pod's ``spec.priority`` and ``spec.preemptionPolicy`` from its class."""
    spec = pod.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    class_name = spec.get("priorityClassName") or ""
    policy: Any = None
    if not class_name:
        found = _default_class(store)
        priority = int(found.get("value", 0)) if found else 0
        if found is not None:
            spec["priorityClassName"] = found["metadata"]["name"]
            policy = found.get("preemptionPolicy")
    else:
        try:
            pc = store.get(PRIORITYCLASSES, None, str(class_name))
        except errors.ApiError as err:
            if err.code != 404:
                raise
            raise _forbidden_pod(
                pod, f"no PriorityClass with name {class_name} was found"
            ) from None
        priority = int(pc.get("value", 0))
        policy = pc.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden_pod(
            pod,
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass "
            "name",
        )
    spec["priority"] = priority
    if policy is not None:
        own = spec.get("preemptionPolicy")
        if own is not None and own != policy:
            raise _forbidden_pod(
                pod,
                f"the string value of PreemptionPolicy ({own}) must not be provided in pod "
                f"spec; priority admission controller computed {policy} from the given "
                "PriorityClass name",
            )
        spec["preemptionPolicy"] = policy
    else:
        spec.setdefault("preemptionPolicy", PREEMPT_LOWER_PRIORITY)


def admit_priority_class(store: Store, pc: Object) -> None:
    """Check a PriorityClass write: a user class above the ceiling is 422 Invalid
    (``ValidatePriorityClass``), a second global default 403 Forbidden
    (``validatePriorityClass``); ``preemptionPolicy`` defaults to PreemptLowerPriority."""
    name = (pc.get("metadata") or {}).get("name") or ""
    pc.setdefault("preemptionPolicy", PREEMPT_LOWER_PRIORITY)
    value = pc.get("value", 0)
    user_class = not name.startswith("system-") and isinstance(value, int)
    if user_class and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        # ValidatePriorityClass (pkg/apis/scheduling/validation): a field error.
        raise errors.invalid(
            "PriorityClass",
            name,
            [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: maximum allowed value of a user defined "
                    f"priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
                    "field": "value",
                }
            ],
            PRIORITYCLASSES.group,
        )
    if pc.get("globalDefault"):
        other = _default_class(store)
        if other is not None and other["metadata"]["name"] != name:
            raise errors.forbidden(
                "priorityclasses",
                name,
                f"PriorityClass {other['metadata']['name']} is already marked as default. "
                "Only one default can exist",
                PRIORITYCLASSES.group,
            )


def check_delete(name: str) -> None:
    """The system classes cannot be deleted (403 Forbidden, upstream's words)."""
    if name in SYSTEM_PRIORITY_CLASSES:
        raise errors.forbidden(
            "priorityclasses",
            name,
            "this is a system priority class and cannot be deleted",
            PRIORITYCLASSES.group,
        )


def keep_on_update(old: Object, new: Object) -> None:
    """An update that leaves out ``spec.priority`` or ``spec.preemptionPolicy`` keeps the
    stored ones, as the plugin's update path does (set once, on create)."""
    old_spec, new_spec = old.get("spec"), new.get("spec")
    if not isinstance(old_spec, dict) or not isinstance(new_spec, dict):
        return
    for key in ("priority", "preemptionPolicy"):
        if new_spec.get(key) is None and old_spec.get(key) is not None:
            new_spec[key] = old_spec[key]
