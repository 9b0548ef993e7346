"""A real framework Handle for testing one plugin on its own.

Plugins reach the cluster only through their handle; in a unit test the handle needs the
same parts the framework gives them — a snapshot, listers, a nominator, a client, a
random source — without a whole profile around the plugin.

    handle = PluginHandle(nodes=[...], pods=[...], workloads=[...])
    plugin = podtopologyspread.new(None, handle)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

from kubesched.framework.apiclient import MemoryAPIClient
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import DRAObject, Nominator, StaticClusterLister
from kubesched.framework.interface import Status
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup
from kubesched.objects.policy import Namespace, PodDisruptionBudget, Workload
from kubesched.objects.storage import StorageObject


class RecordingClient(MemoryAPIClient):
    """A ClusterClient that applies nothing and remembers every call, in order; its
    API calls (PreBind's) go to an in-memory store (``add`` objects to it first)."""

    def __init__(self) -> None:
        super().__init__()
        self.bound: list[tuple[str, str]] = []
        self.deleted: list[tuple[str, str]] = []
        self.nominated: list[tuple[str, str]] = []

    def bind(self, pod: Pod, node_name: str) -> None:
        self.bound.append((pod.key, node_name))

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        self.deleted.append((pod.key, reason))

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        self.nominated.append((pod.key, node_name))


class PluginHandle:
    """The Handle a plugin under test sees: real snapshot, listers and nominator.

    The ``run_*`` methods need the profile's other plugins; they delegate to
    ``framework`` when one is given and refuse otherwise, rather than pretending.
    """

    def __init__(
        self,
        snapshot: Snapshot | None = None,
        *,
        nodes: Sequence[Node] = (),
        pods: Iterable[Pod] = (),
        columnar: bool = False,
        pdbs: Iterable[PodDisruptionBudget] = (),
        namespaces: Iterable[Namespace] = (),
        workloads: Iterable[Workload] = (),
        storage: Iterable[StorageObject] = (),
        dra: Iterable[DRAObject] = (),
        pod_groups: Iterable[PodGroup] = (),
        elastic_quotas: Iterable[ElasticQuota] = (),
        client: RecordingClient | None = None,
        seed: int = 0,
        framework: Framework | None = None,
    ) -> None:
        self.snapshot = (
            snapshot
            if snapshot is not None
            else Snapshot.from_objects(nodes, pods, columnar=columnar)
        )
        self.cluster = StaticClusterLister(
            pdbs, namespaces, workloads, storage, dra, pod_groups, elastic_quotas
        )
        self.client = client if client is not None else RecordingClient()
        self.nominator = Nominator()
        self.rng = random.Random(seed)
        self.framework = framework

    def _framework(self) -> Framework:
        if self.framework is None:
            raise LookupError(
                "this PluginHandle has no framework: pass framework=Framework(...) to run "
                "a profile's plugins"
            )
        return self.framework

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._framework().run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._framework().run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._framework().run_pre_filter_extension_remove_pod(
            state, pod, pod_to_remove, node_info
        )

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._framework().get_waiting_pod(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], object]) -> None:
        self._framework().iterate_over_waiting_pods(callback)

    def reject_waiting_pod(self, uid: str) -> bool:
        return self._framework().reject_waiting_pod(uid)
