"""What answers the verbs behind the HTTP server, and the decoding they share.

The server (``server.py``) speaks HTTP and JSON; a backend decides. Two backends exist:
``ProfileExtender`` runs a scheduling profile's plugins, and the SDK's ``Extender`` runs
functions written by hand. Both get the pod and the candidate nodes the same way, through
``decode_candidates``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.extender.errors import BadRequest, ExtenderError
from kubesched.extender.types import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriorityList,
    JSONObject,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

#: The verbs of the protocol, as the server's paths name them.
VERBS = ("filter", "prioritize", "bind", "preempt")

#: Why a NodeNames-only (nodeCacheCapable) request cannot be answered.
NO_NODE_CACHE = (
    "kubesched extender: this server has no cluster access, so it keeps no node cache "
    "and cannot answer a nodeCacheCapable request (NodeNames only); set "
    "nodeCacheCapable: false in kube-scheduler's extender configuration so that it "
    "sends full Nodes"
)


#: Why a nodeCacheCapable request cannot be answered yet.
CACHE_NOT_SYNCED = (
    "kubesched extender: the node and pod cache has not synced with the API server yet; "
    "wait until /readyz answers ok before pointing kube-scheduler at this extender"
)


class NoNodeCache(ExtenderError):
    """A request needs the node cache, and the server has none (or not yet): answered
    in the ``Error`` field where the answer has one, else with a 501."""

    def __init__(self, message: str = NO_NODE_CACHE, status: int = 501) -> None:
        super().__init__(message)
        #: The HTTP status where the answer has no Error field (503: try again later).
        self.status = status


class ExtenderBackend(Protocol):
    """Answers the verbs. ``verbs`` lists the ones it serves (others get a 404).

    Each method may raise ``WireError``/``BadRequest`` (answered 400) or ``NoNodeCache``
    (answered in the ``Error`` field, or 501 where the answer has none); anything else is a
    fault, answered 500.
    """

    @property
    def verbs(self) -> frozenset[str]: ...

    async def filter(self, args: ExtenderArgs) -> ExtenderFilterResult: ...

    async def prioritize(self, args: ExtenderArgs) -> HostPriorityList: ...

    async def bind(self, args: ExtenderBindingArgs) -> ExtenderBindingResult: ...

    async def preempt(self, args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult: ...


@dataclass(frozen=True, slots=True)
class Candidates:
    """The pod and the candidate nodes of a filter or prioritize call, decoded.

    ``nodes`` keeps the request's order; ``raw`` holds each node's JSON by name, so that
    a filter answer can send back the very objects it was given.
    """

    pod: Pod
    nodes: Sequence[Node]
    raw: dict[str, JSONObject]


def decode_pod(raw: JSONObject | None, path: str) -> Pod:
    """The Pod of a request; raises BadRequest naming the field when absent or invalid."""
    if raw is None:
        raise BadRequest(f"{path}: Required value: the pod being scheduled is missing")
    try:
        return Pod.from_dict(raw)
    except ObjectError as err:
        raise _bad(path, err) from None


def _bad(path: str, err: ObjectError) -> BadRequest:
    """``ExtenderArgs.Pod.spec.containers: expected a list, got int (Pod d/p)``."""
    where = err.where.strip()
    suffix = f" ({where})" if where and not where.endswith(("Node", "Pod")) else ""
    field = f"{path}.{err.path}" if err.path else path
    return BadRequest(f"{field}: {err.message}{suffix}")


def _check_allocatable(node: Node, raw: JSONObject, path: str) -> None:
    # The API server's node validation refuses negative quantities; a node that got past
    # it cannot be trusted by the plugins (scores out of range), so it is a bad request.
    a = node.allocatable
    amounts = {
        "cpu": a.milli_cpu,
        "memory": a.memory,
        "ephemeral-storage": a.ephemeral_storage,
        "pods": a.allowed_pod_number,
        **a.scalar,
    }
    status = raw.get("status")
    where = "allocatable"
    if isinstance(status, dict) and status.get("allocatable") is None:
        where = "capacity"  # defaulted from it
    for name, amount in amounts.items():
        if amount < 0:
            raise BadRequest(
                f"{path}.status.{where}.{name}: Invalid value: must be greater than or equal to 0"
            )


def decode_candidates(args: ExtenderArgs) -> Candidates:
    """Decode a filter or prioritize call in full-Nodes mode.

    Raises NoNodeCache when only ``NodeNames`` came (nodeCacheCapable), BadRequest when
    the pod or a node is missing or does not decode.
    """
    pod = decode_pod(args["Pod"], "ExtenderArgs.Pod")
    node_list = args["Nodes"]
    if node_list is None:
        if args["NodeNames"] is not None:
            raise NoNodeCache()
        raise BadRequest("ExtenderArgs: Required value: neither Nodes nor NodeNames is set")
    nodes: list[Node] = []
    raw: dict[str, JSONObject] = {}
    for i, item in enumerate(node_list["items"] or ()):
        try:
            node = Node.from_dict(item)
        except ObjectError as err:
            raise _bad(f"ExtenderArgs.Nodes.items[{i}]", err) from None
        if node.name in raw:
            raise BadRequest(f"ExtenderArgs.Nodes.items[{i}]: Duplicate value: {node.name!r}")
        _check_allocatable(node, item, f"ExtenderArgs.Nodes.items[{i}]")
        nodes.append(node)
        raw[node.name] = item
    return Candidates(pod, nodes, raw)
