"""ResourceAware: send each pod to the node with the most CPU and memory left free.

Tutorial 004's ``calculateNodeScore`` ranks nodes by allocatable minus the pod's request,
which forgets the pods already running there. This plugin scores what is really free
once the pod is placed: for each of CPU and memory,

    free = (allocatable - requested by the node's pods - requested by this pod) / allocatable

and the node's score is the weighted mean of the two, scaled to [0, 100]. An empty node
scores 100; a node the pod would fill scores 0. (This is the idea behind upstream's
``NodeResourcesFit`` with the ``LeastAllocated`` strategy, written out in a dozen lines.)

The weights are arguments, given in the profile's ``pluginConfig``::

    pluginConfig:
    - name: resource_aware:new
      args: {cpuWeight: 2, memoryWeight: 1}

and are validated when the configuration is loaded: every problem is reported with its
field path (``profiles[0].pluginConfig[0].args.cpuWeight: Invalid value: -1: ...``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, ScorePlugin, Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod

NAME = "ResourceAware"

#: The largest weight accepted, as upstream caps resource weights in NodeResourcesFit.
MAX_WEIGHT = 100


@dataclass(frozen=True)
class ResourceAwareArgs:
    """The plugin's arguments; the defaults live here and nowhere else."""

    cpu_weight: int = 1
    memory_weight: int = 1

    def validate(self) -> list[FieldError]:
        """Every problem, with paths relative to the args object."""
        errors = []
        for path, value in (("cpuWeight", self.cpu_weight), ("memoryWeight", self.memory_weight)):
            if not 0 <= value <= MAX_WEIGHT:
                errors.append(
                    FieldError.invalid(path, value, f"must be in the range [0, {MAX_WEIGHT}]")
                )
        if not errors and self.cpu_weight + self.memory_weight == 0:
            # Both zero would make every score 0/0; the path is the args object itself.
            errors.append(
                FieldError.invalid(
                    "",
                    {"cpuWeight": 0, "memoryWeight": 0},
                    "at least one of cpuWeight and memoryWeight must be greater than zero",
                )
            )
        return errors

    @classmethod
    def decode(cls, args: Mapping[str, Any] | None) -> ResourceAwareArgs:
        """Read and validate ``args``; raises ArgsError listing every problem."""
        reader = ArgsReader(args, known=("cpuWeight", "memoryWeight"))
        decoded = cls(
            cpu_weight=reader.get("cpuWeight", int, cls.cpu_weight),
            memory_weight=reader.get("memoryWeight", int, cls.memory_weight),
        )
        # Fields of the wrong type were replaced by their defaults, so they are not
        # reported twice.
        errors = reader.errors + decoded.validate()
        if errors:
            raise ArgsError(errors)
        return decoded


def free_score(allocatable: int, requested: int) -> int:
    """The share of ``allocatable`` left after ``requested``, in [0, 100] (0 when the node
    has none of the resource, or is already over-committed)."""
    if allocatable <= 0 or requested >= allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


class ResourceAware:
    """Scores nodes by the weighted share of CPU and memory left free."""

    name = NAME

    def __init__(self, args: ResourceAwareArgs) -> None:
        self.args = args

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The weighted mean of the free CPU and memory shares once ``pod`` is placed."""
        # node_info.requested sums the requests of the pods on the node; pod.requests is
        # the pod's effective request (init containers and overhead included).
        allocatable, used, wanted = node_info.allocatable, node_info.requested, pod.requests
        cpu = free_score(allocatable.milli_cpu, used.milli_cpu + wanted.milli_cpu)
        memory = free_score(allocatable.memory, used.memory + wanted.memory)
        w_cpu, w_mem = self.args.cpu_weight, self.args.memory_weight
        return (cpu * w_cpu + memory * w_mem) // (w_cpu + w_mem), None

    def score_extensions(self) -> None:
        """No NormalizeScore: a mean of values in [0, 100] is in [0, 100] already."""
        return None


_score: type[ScorePlugin] = ResourceAware


def new(args: Mapping[str, Any] | None, handle: Handle) -> ResourceAware:
    """Build the plugin, validating its arguments first."""
    return ResourceAware(ResourceAwareArgs.decode(args))
