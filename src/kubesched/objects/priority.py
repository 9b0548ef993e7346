"""Pod priority, resolved as kube-apiserver's Priority admission plugin does.

The scheduler reads ``spec.priority``; the API server fills it from the pod's
``priorityClassName`` (or the globalDefault class, or 0) when the pod is created. Pods
from files have not been through admission, so the simulator resolves them here.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import Pod
from kubesched.objects.policy import PriorityClass

SYSTEM_CLUSTER_CRITICAL = PriorityClass("system-cluster-critical", 2_000_000_000)
SYSTEM_NODE_CRITICAL = PriorityClass("system-node-critical", 2_000_001_000)
SYSTEM_PRIORITY_CLASSES = (SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL)


class PriorityResolver:
    """Resolves pods' priorities against a set of PriorityClasses."""

    def __init__(self, classes: Iterable[PriorityClass]) -> None:
        self._classes = {c.name: c for c in SYSTEM_PRIORITY_CLASSES}
        self._classes.update({c.name: c for c in classes})
        defaults = [c for c in self._classes.values() if c.global_default]
        # With several globalDefault classes (an API race) admission takes the lowest.
        self._default = min(defaults, key=lambda c: c.value) if defaults else None

    def resolve(self, pod: Pod) -> Pod:
        """The pod with ``priority`` and ``preemption_policy`` as admission sets them.

        A pod that already carries ``spec.priority`` was admitted; it is kept as it is.
        Raises ObjectError when the pod names a PriorityClass that does not exist.
        """
        if pod.spec_priority is not None:
            return pod
        if pod.priority_class_name:
            cls = self._classes.get(pod.priority_class_name)
            if cls is None:
                raise ObjectError(
                    "spec.priorityClassName",
                    f'no PriorityClass with name "{pod.priority_class_name}" was found',
                    f"Pod {pod.key}",
                )
        else:
            cls = self._default
        if cls is None:
            return pod.evolve(priority=0, spec_priority=0)
        return pod.evolve(
            priority=cls.value,
            spec_priority=cls.value,
            preemption_policy=cls.preemption_policy,
        )
