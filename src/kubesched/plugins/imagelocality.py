"""ImageLocality: prefer nodes that already hold the pod's container images.

Mirrors kube-scheduler's ``imagelocality`` plugin. Each image of the pod (init containers
included) found on the node adds its size, scaled by the share of the cluster's nodes
that have it, so that an image present everywhere does not pull every pod to one node.
The sum is mapped linearly onto [0, 100] between 23 MiB and 1000 MiB per container.
Image names are matched after adding ``:latest`` to an untagged name, nothing more: as
upstream, ``nginx`` does not match a node's ``docker.io/library/nginx:latest``.

The columnar form (``score_nodes``) adds each image's scaled score to the rows of the
nodes that have it, from the node table's image index, and maps the sums to [0, 100]
with the same integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, ScoreExtensions, ScorePlugin, Status
from kubesched.framework.types import ImageStateSummary, NodeInfo
from kubesched.framework.vector import VectorScorePlugin
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.plugins.helper import check_no_args

NAME = names.IMAGE_LOCALITY

_MB: Final = 1024 * 1024
#: Below this sum a node scores 0.
MIN_THRESHOLD: Final = 23 * _MB
#: Per container: at this sum times the number of containers a node scores 100.
MAX_CONTAINER_THRESHOLD: Final = 1000 * _MB

IntArray = npt.NDArray[np.int64]

#: Distinct image lists remembered per table; past it the memo starts afresh.
_MEMO_LIMIT: Final = 256


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


def _calculate_priorities(sums: IntArray, num_containers: int) -> IntArray:
    """``calculate_priority`` over an array of sums."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.where(
        sums < MIN_THRESHOLD, MIN_THRESHOLD, np.where(sums > max_threshold, max_threshold, sums)
    )
    # Floor division as the per-node form (both operands are non-negative there).
    return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """Scores nodes by the size of the pod's images they already have."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        # Score runs once per node for the same pod: normalize its image names once.
        self._last_pod: Pod | None = None
        self._last_images: tuple[str, ...] = ()
        # Images only change with nodes, and a node change builds a new table: the
        # scores of each distinct image list are worked out once per table.
        self._memo: tuple[NodeTable, int, dict[tuple[str, ...], IntArray]] | None = None

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

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows``."""
        images = self._images(pod)
        table_images = table.images
        present = [table_images[image] for image in images if image in table_images]
        if not present:
            # No node has any of the pod's images: every sum is 0, which scores 0.
            return np.full(len(rows), calculate_priority(0, len(images)), dtype=np.int64)
        total_num_nodes = len(self._handle.snapshot)
        memo = self._memo
        if memo is None or memo[0] is not table or memo[1] != total_num_nodes:
            memo = self._memo = (table, total_num_nodes, {})
        scores = memo[2].get(images)
        if scores is None:
            if len(memo[2]) >= _MEMO_LIMIT:
                memo[2].clear()
            sums = np.zeros(table.size, dtype=np.int64)
            for image_rows, size, num_nodes in present:
                # The same float arithmetic as scaled_image_score, once per image (a pod
                # listing an image twice counts it twice, as the per-node loop does).
                sums[image_rows] += scaled_image_score(
                    ImageStateSummary(size, num_nodes), total_num_nodes
                )
            scores = memo[2][images] = _calculate_priorities(sums, len(images))
        return scores[rows]

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are in [0, 100] already."""
        return None


_score: type[ScorePlugin] = ImageLocality
_vector_score: type[VectorScorePlugin] = ImageLocality


def new(args: Mapping[str, Any] | None, handle: Handle) -> ImageLocality:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return ImageLocality(handle)
