"""Hand-written extenders in a few lines, served by the same server as profiles.

::

    from kubesched.extender.sdk import Extender

    ext = Extender()

    @ext.filter
    def has_disk(pod, node):            # True: the node passes; a str: why it does not
        return node.labels.get("disk") == "ssd" or "node has no ssd"

    @ext.prioritize
    def prefer_big(pod, node):          # 0..10, kube-scheduler's extender range
        return 10 if node.labels.get("size") == "big" else 0

    if __name__ == "__main__":
        ext.run(port=8888)

Functions get the decoded ``Pod`` and ``Node`` of ``kubesched.objects``. Filters run in
the order they were declared and the first that rejects a node gives its reason; return
``Unresolvable(reason)`` for a rejection preemption cannot fix. Prioritize functions are
combined by weight (``@ext.prioritize(weight=2)``). A bind function gets the
``ExtenderBindingArgs`` and returns ``None`` or an error message; it may be ``async``.
Like profiles, the SDK needs full Nodes in the request (nodeCacheCapable: false).
"""

from __future__ import annotations

import inspect
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import overload

from aiohttp import web

from kubesched.extender.backend import decode_candidates
from kubesched.extender.server import ExtenderServer
from kubesched.extender.types import (
    MAX_EXTENDER_PRIORITY,
    MIN_EXTENDER_PRIORITY,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    HostPriorityList,
    NodeList,
    filter_result,
)
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

FilterFunc = Callable[[Pod, Node], bool | str]
PrioritizeFunc = Callable[[Pod, Node], int]
BindFunc = Callable[[ExtenderBindingArgs], str | Awaitable[str | None] | None]


class Unresolvable(str):
    """A filter's failure reason that preemption cannot fix: the node goes to
    ``FailedAndUnresolvableNodes``, so kube-scheduler does not try to preempt there."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class _Weighted:
    fn: PrioritizeFunc
    weight: int


class Extender:
    """Collects verb functions through decorators and serves them."""

    def __init__(self) -> None:
        self.filters: list[FilterFunc] = []
        self.prioritizers: list[_Weighted] = []
        self.binder: BindFunc | None = None

    def filter(self, fn: FilterFunc) -> FilterFunc:
        """Register a filter: ``fn(pod, node)`` returns True, False or a failure reason."""
        self.filters.append(fn)
        return fn

    @overload
    def prioritize(self, fn: PrioritizeFunc, /) -> PrioritizeFunc: ...

    @overload
    def prioritize(self, /, *, weight: int = 1) -> Callable[[PrioritizeFunc], PrioritizeFunc]: ...

    def prioritize(
        self, fn: PrioritizeFunc | None = None, /, *, weight: int = 1
    ) -> PrioritizeFunc | Callable[[PrioritizeFunc], PrioritizeFunc]:
        """Register a priority function: ``fn(pod, node)`` returns 0..10."""
        if weight < 1:
            raise ValueError(f"weight: Invalid value: {weight}: must be at least 1")

        def register(f: PrioritizeFunc) -> PrioritizeFunc:
            self.prioritizers.append(_Weighted(f, weight))
            return f

        return register(fn) if fn is not None else register

    def bind(self, fn: BindFunc) -> BindFunc:
        """Register the binder: ``fn(args)`` returns None on success or an error."""
        if self.binder is not None:
            raise ValueError("an extender has one bind function")
        self.binder = fn
        return fn

    # --- serving ----------------------------------------------------------------------

    def backend(self) -> SDKBackend:
        """The backend answering the verbs with the registered functions."""
        return SDKBackend(self)

    def server(self, prefix: str = "") -> ExtenderServer:
        """An ExtenderServer for this extender (paths under ``prefix``)."""
        return ExtenderServer(self.backend(), prefix=prefix)

    def app(self, prefix: str = "") -> web.Application:
        """The aiohttp application, e.g. for tests or to mount in a larger app."""
        return self.server(prefix).app()

    def run(
        self,
        host: str = "0.0.0.0",
        port: int = 8888,
        ssl_context: ssl.SSLContext | None = None,
        prefix: str = "",
    ) -> None:
        """Serve until interrupted."""
        self.server(prefix).run(host, port, ssl_context)


class SDKBackend:
    """An ``ExtenderBackend`` over an ``Extender``'s functions."""

    def __init__(self, extender: Extender) -> None:
        self.extender = extender

    @property
    def verbs(self) -> frozenset[str]:
        ext = self.extender
        served = {
            "filter": bool(ext.filters),
            "prioritize": bool(ext.prioritizers),
            "bind": ext.binder is not None,
        }
        return frozenset(verb for verb, on in served.items() if on)

    async def filter(self, args: ExtenderArgs) -> ExtenderFilterResult:
        candidates = decode_candidates(args)
        passed = []
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        for node in candidates.nodes:
            reason = _first_rejection(self.extender.filters, candidates.pod, node)
            if reason is None:
                passed.append(candidates.raw[node.name])
            elif isinstance(reason, Unresolvable):
                unresolvable[node.name] = str(reason)
            else:
                failed[node.name] = reason
        return filter_result(
            nodes=NodeList(metadata={}, items=passed), failed=failed, unresolvable=unresolvable
        )

    async def prioritize(self, args: ExtenderArgs) -> HostPriorityList:
        candidates = decode_candidates(args)
        weights = sum(p.weight for p in self.extender.prioritizers)
        out: list[HostPriority] = []
        for node in candidates.nodes:
            total = 0
            for p in self.extender.prioritizers:
                score = p.fn(candidates.pod, node)
                if isinstance(score, bool) or not isinstance(score, int):
                    raise TypeError(f"{_name(p.fn)} returned {score!r}, not an int")
                if not MIN_EXTENDER_PRIORITY <= score <= MAX_EXTENDER_PRIORITY:
                    raise ValueError(
                        f"{_name(p.fn)} returned {score} for node {node.name}; an extender "
                        f"score is within {MIN_EXTENDER_PRIORITY}..{MAX_EXTENDER_PRIORITY}"
                    )
                total += score * p.weight
            out.append(HostPriority(Host=node.name, Score=total // weights))
        return out

    async def bind(self, args: ExtenderBindingArgs) -> ExtenderBindingResult:
        binder = self.extender.binder
        if binder is None:  # not in verbs; the server answers 404 first
            raise NotImplementedError("no bind function")
        result = binder(args)
        if inspect.isawaitable(result):
            result = await result
        return ExtenderBindingResult(Error=result or "")

    async def preempt(self, args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult:
        raise NotImplementedError("the SDK serves no preempt verb yet")


def _first_rejection(filters: list[FilterFunc], pod: Pod, node: Node) -> str | None:
    for fn in filters:
        verdict = fn(pod, node)
        if verdict is True:
            continue
        if isinstance(verdict, str) and verdict:
            return verdict
        if isinstance(verdict, Unresolvable):
            return Unresolvable(f"node(s) rejected by {_name(fn)}")
        if verdict is False or verdict == "":
            return f"node(s) rejected by {_name(fn)}"
        raise TypeError(f"{_name(fn)} returned {verdict!r}, not True, False or a reason")
    return None


def _name(fn: object) -> str:
    return getattr(fn, "__name__", repr(fn))
