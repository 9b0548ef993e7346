"""ImageLocality: prefer nodes that already hold the pod's container images.

Mirrors kube-scheduler's ``imagelocality`` plugin. Each image of the pod (init containers
included) found on the node adds its size, scaled by the share of the cluster's nodes
that have it, so that an image present everywhere does not pull every pod to one node.
The sum is mapped linearly onto [0, 100] between 23 MiB and 1000 MiB per container.
Image names are matched after adding ``:latest`` to an untagged name, nothing more: as
upstream, ``nginx`` does not match a node's ``docker.io/library/nginx:latest``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, ScoreExtensions, ScorePlugin, Status
from kubesched.framework.types import ImageStateSummary, NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.plugins.helper import check_no_args

NAME = names.IMAGE_LOCALITY

_MB: Final = 1024 * 1024
#: Below this sum a node scores 0.
MIN_THRESHOLD: Final = 23 * _MB
#: Per container: at this sum times the number of containers a node scores 100.
MAX_CONTAINER_THRESHOLD: Final = 1000 * _MB


def normalized_image_name(name: str) -> str:
    """``name`` with ``:latest`` added when it has no tag (a digest counts as a tag)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image size times the share of nodes that have it (truncated, as Go does)."""
    spread = state.num_nodes / total_num_nodes
    return int(state.size * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """The node's score in [0, 100] for the summed image scores."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # The numerator is never negative and the denominator never zero (MIN_THRESHOLD > 0).
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """Scores nodes by the size of the pod's images they already have."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        # Score runs once per node for the same pod: normalize its image names once.
        self._last_pod: Pod | None = None
        self._last_images: tuple[str, ...] = ()

    def _images(self, pod: Pod) -> tuple[str, ...]:
        if pod is not self._last_pod:
            self._last_images = tuple(
                normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers)
            )
            self._last_pod = pod
        return self._last_images

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The node's image score in [0, 100]; already normalized."""
        images = self._images(pod)
        image_states = node_info.image_states
        total = 0
        if image_states:
            total_num_nodes = len(self._handle.snapshot)
            for image in images:
                image_state = image_states.get(image)
                if image_state is not None:
                    total += scaled_image_score(image_state, total_num_nodes)
        return calculate_priority(total, len(images)), None

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are in [0, 100] already."""
        return None


_score: type[ScorePlugin] = ImageLocality


def new(args: Mapping[str, Any] | None, handle: Handle) -> ImageLocality:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return ImageLocality(handle)
