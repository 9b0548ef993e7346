"""RandomScore: place each pod on a feasible node chosen at random.

The smallest custom scheduler there is, from tutorial 000: a bash loop that lists the
pending pods of ``my-scheduler``, picks ``NODES[$RANDOM % NUMNODES]`` and POSTs a
Binding. As a kubesched plugin it keeps what made the script work and drops what did
not:

* the default Filter plugins still run, so a pod is only ever placed on a node it fits
  (the script bound pods to full, cordoned or tainted nodes alike);
* the randomness is a Score: every feasible node gets a random score in [0, 100], and the
  highest wins (ties are broken at random too). ``config-random-scheduler.yaml`` turns the
  default Score plugins off so that nothing but chance decides;
* the numbers come from ``handle.rng``, the profile's random source, which ``kubesched
  simulate --seed N`` seeds: the same seed gives the same placements.

Copy this file to start a Score plugin: a ``name``, ``score`` and ``score_extensions``
are all the framework needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, ScorePlugin, Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod

#: The plugin's name: what the scheduler reports (``explain`` shows it per score).
#: Configuration files refer to the plugin by its import path, ``random_scheduler:new``.
NAME = "RandomScore"


class RandomScore:
    """Scores every feasible node with a random number from the profile's RNG."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        # Keep the handle, not its rng: the handle is the one place that owns the
        # profile's random source, seeded once per run.
        self._handle = handle

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """A random score in [0, 100]; already in range, so no NormalizeScore is needed."""
        return self._handle.rng.randint(MIN_NODE_SCORE, MAX_NODE_SCORE), None

    def score_extensions(self) -> None:
        """No NormalizeScore: the scores are in range as they are."""
        return None


# What a type checker verifies for us: RandomScore is a Score plugin.
_score: type[ScorePlugin] = RandomScore


def new(args: Mapping[str, Any] | None, handle: Handle) -> RandomScore:
    """Build the plugin. It takes no arguments; any given are reported, not ignored."""
    unknown = [key for key in args or {} if key not in ("kind", "apiVersion")]
    if unknown:
        raise ArgsError([FieldError.invalid(key, key, "unknown field") for key in unknown])
    return RandomScore(handle)
