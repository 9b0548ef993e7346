"""The unschedulable pods: tried, rejected, and waiting for an event that may help.

Mirrors upstream's ``UnschedulablePods``: a map by pod key of each pod's queued info,
which records the plugins that rejected it (``unschedulable_plugins``,
``pending_plugins``) or, for a pod held back by PreEnqueue, that it is gated.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubesched.framework.types import QueuedPodInfo


class UnschedulablePods:
    """Rejected and gated pods, keyed by ``pod.key``."""

    def __init__(self) -> None:
        self._infos: dict[str, QueuedPodInfo] = {}

    def __len__(self) -> int:
        return len(self._infos)

    def __contains__(self, key: object) -> bool:
        return key in self._infos

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self._infos.values()))

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued info of the pod with ``key``, if it is here."""
        return self._infos.get(key)

    def add_or_update(self, info: QueuedPodInfo) -> None:
        """Store ``info``, replacing the pod's previous entry."""
        self._infos[info.pod.key] = info

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove the pod with ``key``; its info, or None if it was not here."""
        return self._infos.pop(key, None)

    def gated_count(self) -> int:
        """How many of the pods are held back by PreEnqueue (a metric's label)."""
        return sum(1 for info in self._infos.values() if info.gated)
