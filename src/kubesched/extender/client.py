"""The extender client: our scheduler calling HTTP extenders, as kube-scheduler does.

Mirrors ``HTTPExtender`` of upstream's ``pkg/scheduler/extender.go``: one instance per
``extenders[]`` entry of the configuration, POSTing ``<urlPrefix>/<verb>`` with the
extender v1 JSON of ``types`` and reading the answer. Any failure of a call (no answer
within ``httpTimeout``, a status other than 200, a body that is not the answer type, an
``Error`` field, a node that was not sent) raises ``ExtenderCallError``; the helpers of
``client_schedule`` decide, as ``schedule_one.go`` does, whether that fails the attempt.

Logic reads our compact ``Pod`` and ``NodeInfo``; the wire carries the full API objects,
as kube-scheduler sends them. The client gets those from a ``RawObjects`` accessor given
once at construction (the scheduler's cache, or a ``RawStore``), so that the verbs keep
upstream's signatures: ``filter(pod, nodes)``, ``prioritize(pod, nodes)``, ...
TLS (enableHTTPS, tlsConfig) is built by ``client_tls``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, TypeVar

import aiohttp

from kubesched.config.types import Extender
from kubesched.extender import types as t
from kubesched.extender.client_tls import ExtenderConfigError, make_ssl_context
from kubesched.extender.errors import ExtenderError, WireError
from kubesched.framework.extender import NodeInfoLister, Victims
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Container, Pod
from kubesched.objects.resources import CPU, MEMORY

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "Binding",
    "ExtenderCallError",
    "ExtenderConfigError",
    "HTTPExtender",
    "NodeInfoLister",
    "RawObjects",
    "RawStore",
    "Victims",
]

#: Upstream's DefaultExtenderTimeout, used when httpTimeout is zero.
DEFAULT_EXTENDER_TIMEOUT = 5.0

FailedNodes = dict[str, str]
_T = TypeVar("_T")


class ExtenderCallError(ExtenderError):
    """A call to an extender that failed; ``extender`` is its name (the urlPrefix) and
    ``verb`` the verb called. The HTTP library's exception, if any, is the cause."""

    def __init__(self, extender: str, verb: str, message: str) -> None:
        super().__init__(message)
        self.extender = extender
        self.verb = verb


class RawObjects(Protocol):
    """The API objects (JSON as the API server serves them) behind compact objects."""

    def pod(self, pod: Pod) -> t.JSONObject:
        """The v1.Pod of ``pod``."""
        ...

    def node(self, node_name: str) -> t.JSONObject:
        """The v1.Node named ``node_name``."""
        ...


class RawStore:
    """A ``RawObjects`` over dicts: pods by ``namespace/name``, nodes by name."""

    def __init__(self) -> None:
        self.pods: dict[str, t.JSONObject] = {}
        self.nodes: dict[str, t.JSONObject] = {}

    def add_pod(self, raw: t.JSONObject) -> None:
        """Keep a v1.Pod (a later one with the same namespace/name replaces it)."""
        meta = raw.get("metadata") or {}
        self.pods[f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"] = raw

    def add_node(self, raw: t.JSONObject) -> None:
        """Keep a v1.Node (a later one with the same name replaces it)."""
        self.nodes[(raw.get("metadata") or {}).get("name", "")] = raw

    def remove_pod(self, pod: Pod) -> None:
        """Forget the v1.Pod of ``pod`` (it was deleted)."""
        self.pods.pop(pod.key, None)

    def remove_node(self, node_name: str) -> None:
        """Forget the v1.Node named ``node_name`` (it was deleted)."""
        self.nodes.pop(node_name, None)

    def pod(self, pod: Pod) -> t.JSONObject:
        try:
            return self.pods[pod.key]
        except KeyError:
            raise LookupError(f"no API object stored for pod {pod.key}") from None

    def node(self, node_name: str) -> t.JSONObject:
        try:
            return self.nodes[node_name]
        except KeyError:
            raise LookupError(f"no API object stored for node {node_name}") from None


@dataclass(frozen=True, slots=True)
class Binding:
    """What a bind call binds (the parts of a v1.Binding the extender receives)."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str

    @classmethod
    def of(cls, pod: Pod, node: str) -> Binding:
        """The binding of ``pod`` to the node named ``node``."""
        return cls(pod.name, pod.namespace, pod.uid, node)


class HTTPExtender:
    """One configured extender. Use ``async with`` (or ``await close()``) to release its
    connections; the HTTP session is opened on the first call, in the running loop."""

    def __init__(self, config: Extender, raw: RawObjects) -> None:
        self.config = config
        self.raw = raw
        self.timeout = config.http_timeout_seconds or DEFAULT_EXTENDER_TIMEOUT
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        self._ssl = make_ssl_context(config)
        self._server_name = (config.tls_config.server_name or None) if config.tls_config else None
        self._session: aiohttp.ClientSession | None = None

    # --- what upstream's Extender interface answers without a call ---------------------

    @property
    def name(self) -> str:
        """The urlPrefix, which identifies the extender (upstream ``Name()``)."""
        return self.config.url_prefix

    @property
    def weight(self) -> int:
        """How much a point of this extender's score counts (before the ×10 scaling)."""
        return self.config.weight

    def is_ignorable(self) -> bool:
        """Whether a failed call is skipped instead of failing the attempt."""
        return self.config.ignorable

    def supports_preemption(self) -> bool:
        """Whether a preemptVerb is set: preemption then asks this extender."""
        return self.config.preempt_verb != ""

    def is_binder(self) -> bool:
        """Whether a bindVerb is set: this extender then binds the pods it is interested in."""
        return self.config.bind_verb != ""

    def is_prioritizer(self) -> bool:
        """Whether a prioritizeVerb is set."""
        return self.config.prioritize_verb != ""

    def is_filter(self) -> bool:
        """Whether a filterVerb is set."""
        return self.config.filter_verb != ""

    def is_interested(self, pod: Pod) -> bool:
        """True without managedResources; else whether a container or init container
        requests or limits one of them (a limit alone counts: it defaults the request)."""
        if not self.managed_resources:
            return True
        return any(
            not self.managed_resources.isdisjoint(_resource_names(c))
            for c in (*pod.containers, *pod.init_containers)
        )

    # --- the verbs ---------------------------------------------------------------------

    async def filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], FailedNodes, FailedNodes]:
        """The nodes the extender keeps, then the failed and the failed-and-unresolvable
        nodes with reasons. Without filterVerb every node passes.

        The kept nodes are the NodeInfos given, matched by name, in the answer's order; an
        answer naming a node that was not sent is an error. Upstream does exactly this for
        ``NodeNames``; for full ``Nodes`` it wraps the returned objects in new NodeInfos
        (without their pods) and accepts any node, which we do not copy.
        """
        verb = self.config.filter_verb
        if not verb:
            return list(nodes), {}, {}
        by_name = {info.name: info for info in nodes}
        answer = await self._send(verb, t.encode_extender_args(self._args(pod, nodes)))
        result = self._decode(verb, t.decode_filter_result, answer)
        if result["Error"]:
            raise ExtenderCallError(self.name, verb, result["Error"])
        names: list[str] = []
        if self.config.node_cache_capable and result["NodeNames"] is not None:
            names = result["NodeNames"]
        elif result["Nodes"] is not None:
            names = [_node_name(item) for item in result["Nodes"]["items"] or ()]
        kept = []
        for name in names:
            info = by_name.get(name)
            if info is None:
                raise ExtenderCallError(
                    self.name,
                    verb,
                    f"extender {self.name!r} claims a filtered node {name!r} "
                    "which is not found in the input node list",
                )
            kept.append(info)
        return kept, result["FailedNodes"] or {}, result["FailedAndUnresolvableNodes"] or {}

    async def prioritize(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[tuple[str, int]], int]:
        """Each host's extender score (0..10, as the extender sent it) and this
        extender's weight. Without prioritizeVerb: every node 0, weight 0."""
        verb = self.config.prioritize_verb
        if not verb:
            return [(info.name, 0) for info in nodes], 0
        answer = await self._send(verb, t.encode_extender_args(self._args(pod, nodes)))
        result = self._decode(verb, t.decode_host_priority_list, answer) or []
        return [(p["Host"], p["Score"]) for p in result], self.weight

    async def bind(self, binding: Binding) -> None:
        """Let the extender bind the pod; raises ExtenderCallError if it does not."""
        verb = self.config.bind_verb
        if not verb:
            raise ExtenderCallError(self.name, "bind", "unexpected empty bindVerb in extender")
        args = t.ExtenderBindingArgs(
            PodName=binding.pod_name,
            PodNamespace=binding.pod_namespace,
            PodUID=binding.pod_uid,
            Node=binding.node,
        )
        answer = await self._send(verb, t.encode_binding_args(args))
        result = self._decode(verb, t.decode_binding_result, answer)
        if result["Error"]:
            raise ExtenderCallError(self.name, verb, result["Error"])

    async def process_preemption(
        self, pod: Pod, node_to_victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        """The candidates the extender accepts, with their victims. A nodeCacheCapable
        extender gets victims as UIDs (``NodeNameToMetaVictims``), others full pods; the
        answer's UIDs are resolved against the pods on each node in ``nodes``."""
        verb = self.config.preempt_verb
        if not verb:
            raise ExtenderCallError(
                self.name,
                "preempt",
                f"preempt verb is not defined for extender {self.name} "
                "but run into ProcessPreemption",
            )
        args = t.ExtenderPreemptionArgs(
            Pod=self.raw.pod(pod), NodeNameToVictims=None, NodeNameToMetaVictims=None
        )
        if self.config.node_cache_capable:
            args["NodeNameToMetaVictims"] = {
                node: t.MetaVictims(
                    Pods=[t.MetaPod(UID=p.uid) for p in v.pods],
                    NumPDBViolations=v.num_pdb_violations,
                )
                for node, v in node_to_victims.items()
            }
        else:
            args["NodeNameToVictims"] = {
                node: t.Victims(
                    Pods=[self.raw.pod(p) for p in v.pods], NumPDBViolations=v.num_pdb_violations
                )
                for node, v in node_to_victims.items()
            }
        answer = await self._send(verb, t.encode_preemption_args(args))
        result = self._decode(verb, t.decode_preemption_result, answer)
        return self._to_victims(verb, result["NodeNameToMetaVictims"] or {}, nodes)

    def _to_victims(
        self, verb: str, meta: Mapping[str, t.MetaVictims | None], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        out: dict[str, Victims] = {}
        for node_name, meta_victims in meta.items():
            try:
                info = nodes.get(node_name)
            except KeyError:
                raise ExtenderCallError(
                    self.name, verb, f"nodeinfo not found for node name {node_name!r}"
                ) from None
            if meta_victims is None:  # Go would dereference nil here and panic
                raise ExtenderCallError(
                    self.name, verb, f"extender {self.name} sent null victims for {node_name!r}"
                )
            by_uid = {p.pod.uid: p.pod for p in info.pods}
            victims = Victims(num_pdb_violations=meta_victims["NumPDBViolations"])
            for meta_pod in meta_victims["Pods"] or ():
                uid = meta_pod["UID"] if meta_pod is not None else ""
                if uid not in by_uid:
                    raise ExtenderCallError(
                        self.name,
                        verb,
                        f"extender: {self.name} claims to preempt pod (UID: {uid}) on node: "
                        f"{node_name}, but the pod is not found on that node",
                    )
                victims.pods.append(by_uid[uid])
            out[node_name] = victims
        return out

    # --- HTTP --------------------------------------------------------------------------

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> t.ExtenderArgs:
        if self.config.node_cache_capable:
            return t.ExtenderArgs(
                Pod=self.raw.pod(pod), Nodes=None, NodeNames=[n.name for n in nodes]
            )
        items = [self.raw.node(n.name) for n in nodes]
        # Go's append onto a nil slice: no nodes is "items": null.
        node_list = t.NodeList(metadata={}, items=items or None)
        return t.ExtenderArgs(Pod=self.raw.pod(pod), Nodes=node_list, NodeNames=None)

    def url(self, verb: str) -> str:
        """Where ``verb`` is POSTed: urlPrefix without trailing slashes, ``/``, verb."""
        return self.config.url_prefix.rstrip("/") + "/" + verb

    async def _send(self, verb: str, body: bytes) -> object:
        url = self.url(verb)
        session = self._session
        if session is None or session.closed:
            session = self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout)
            )
        try:
            async with session.post(
                url,
                data=body,
                headers={"Content-Type": "application/json"},
                ssl=self._ssl if self._ssl is not None else True,
                server_hostname=self._server_name,
            ) as response:
                if response.status != 200:
                    raise ExtenderCallError(
                        self.name,
                        verb,
                        f"failed {verb} with extender at URL {url}, code {response.status}",
                    )
                raw = await response.read()
        except TimeoutError as err:
            raise ExtenderCallError(
                self.name,
                verb,
                f'Post "{url}": no answer within {self.timeout:g}s (httpTimeout exceeded)',
            ) from err
        except aiohttp.ClientError as err:
            raise ExtenderCallError(self.name, verb, f'Post "{url}": {err}') from err
        try:
            return t.loads(raw, f"{verb} answer")
        except WireError as err:
            raise ExtenderCallError(
                self.name, verb, f"failed {verb} with extender at URL {url}: {err}"
            ) from err

    def _decode(self, verb: str, decode: Callable[[object], _T], answer: object) -> _T:
        try:
            return decode(answer)
        except WireError as err:
            raise ExtenderCallError(
                self.name, verb, f"failed {verb} with extender at URL {self.url(verb)}: {err}"
            ) from err

    async def close(self) -> None:
        """Close the HTTP session (a later call opens a new one)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> HTTPExtender:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"


def _resource_names(container: Container) -> set[str]:
    """The resources a container requests or limits (limits default the requests)."""
    names = set(container.requests.names())
    names.update(container.requests.scalar)
    # cpu and memory set to 0 leave no amount, but they are still named.
    names.update(r for r in (CPU, MEMORY) if r not in container.unset_requests)
    return names


def _node_name(item: t.JSONObject) -> str:
    meta = item.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""
