"""GPUAware: GPU pods only on GPU nodes, and everything else kept off them.

The first reason tutorial 004 gives for writing a custom scheduler: "GPU-heavy jobs must
be placed on nodes with a graphics card". Two rules:

* A pod that requests ``nvidia.com/gpu`` may only run on a node whose allocatable has
  ``nvidia.com/gpu`` > 0. Other nodes are rejected as UnschedulableAndUnresolvable with
  the reason ``node(s) have no GPU``: evicting pods from a node without GPUs never helps,
  so preemption does not even try there.
* Any other pod prefers nodes without GPUs (Score 100 there, 0 on GPU nodes), so that
  CPU work does not take the CPU and memory the GPU jobs will need — even when it
  tolerates the GPU nodes' taint.

How the extension points divide the work, and keep it cheap:

* PreFilter looks at the pod once per attempt and returns Skip for pods without GPU
  requests: the framework then never calls this plugin's Filter for them.
* PreScore does the opposite: it skips GPU pods, whose feasible nodes all have GPUs.

``NodeResourcesFit`` rejects a GPU pod on a node without GPUs too, but its reason,
``Insufficient nvidia.com/gpu``, reads as if the node's GPUs were busy. ``config.yaml``
therefore lists this plugin at ``filter`` as well as ``multiPoint``: plugins placed
explicitly at an extension point run before the multiPoint ones, so this cheap check
decides first and a node without GPUs is reported as having none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

NAME = "GPUAware"

#: The extended resource the NVIDIA device plugin advertises.
GPU_RESOURCE = "nvidia.com/gpu"

#: Filter reason for a GPU pod on a node without GPUs.
ERR_REASON_NO_GPU = "node(s) have no GPU"


def requests_gpu(pod: Pod) -> bool:
    """Whether the pod asks for at least one GPU."""
    return pod.requests.get(GPU_RESOURCE) > 0


def has_gpu(node: Node) -> bool:
    """Whether the node offers GPUs to pods."""
    return node.allocatable.get(GPU_RESOURCE) > 0


class GPUAware:
    """Filters GPU pods onto GPU nodes; scores other pods away from them."""

    name = NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip (no Filter calls this attempt) unless the pod requests GPUs."""
        if not requests_gpu(pod):
            return None, Status.skip()
        return None, None

    def pre_filter_extensions(self) -> None:
        """No PreFilter state, so nothing to update when preemption moves pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """A GPU pod fits only nodes with GPUs (only called for GPU pods, see PreFilter).

        Whether enough GPUs are free is NodeResourcesFit's job; this only says whether
        the node has any at all, which no preemption can change.
        """
        if has_gpu(node_info.node):
            return None
        return Status.unresolvable(ERR_REASON_NO_GPU)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip GPU pods: their feasible nodes all have GPUs, there is nothing to prefer."""
        return Status.skip() if requests_gpu(pod) else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """100 on a node without GPUs, 0 on a GPU node."""
        return (MIN_NODE_SCORE if has_gpu(node_info.node) else MAX_NODE_SCORE), None

    def score_extensions(self) -> None:
        """The scores are 0 or 100 already: no NormalizeScore."""
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Only a node gaining GPUs can help a pod this plugin rejected."""
        return (
            # A new GPU node joins, or the device plugin starts advertising GPUs on a
            # node (allocatable changes). Label and taint changes cannot add GPUs.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                is_schedulable_after_node_change,
            ),
        )


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the node has GPUs now and did not before (or is new)."""
    if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
        raise TypeError("expected Node objects")  # a failing hint queues the pod
    if has_gpu(new) and (old is None or not has_gpu(old)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_pre_filter: type[PreFilterPlugin] = GPUAware
_filter: type[FilterPlugin] = GPUAware
_pre_score: type[PreScorePlugin] = GPUAware
_score: type[ScorePlugin] = GPUAware
_enqueue_extensions: type[EnqueueExtensions] = GPUAware


def new(args: Mapping[str, Any] | None, handle: Handle) -> GPUAware:
    """Build the plugin. It takes no arguments; any given are reported, not ignored."""
    unknown = [key for key in args or {} if key not in ("kind", "apiVersion")]
    if unknown:
        raise ArgsError([FieldError.invalid(key, key, "unknown field") for key in unknown])
    return GPUAware()
