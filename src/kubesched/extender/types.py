"""The scheduler-extender wire types, exactly as kube-scheduler sends and reads them.

Mirrors ``staging/src/k8s.io/kube-scheduler/extender/v1/types.go``. The Go structs have
no json tags, so keys are Go's field names (``Pod``, ``Nodes``, ``NodeNames``, ...), no
field is ever omitted, and a nil pointer, slice or map is ``null``. Each type here is a
``TypedDict`` with those keys; every key is always present after decoding, with ``None``
standing for Go's nil.

``decode_*`` reads what a peer sent with Go's rules (case-insensitive keys, unknown keys
ignored, ``null`` leaves the zero value) and raises ``WireError`` naming the field.
``encode_*`` writes the bytes Go's ``json.Marshal`` writes for the same value. Embedded
Kubernetes objects (a Pod, the Nodes) are kept as the JSON objects they arrived as and
passed through unchanged.
"""

from __future__ import annotations

from typing import Any, TypedDict

from kubesched.extender import _gojson as g
from kubesched.extender.errors import WireError
from kubesched.objects import jsontext

#: Extender scores range over MIN..MAX_EXTENDER_PRIORITY (upstream's constants).
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10

JSONObject = dict[str, Any]


class NodeList(TypedDict):
    """A ``v1.NodeList`` (only what the extender protocol uses of it)."""

    metadata: JSONObject
    items: list[JSONObject] | None


class ExtenderArgs(TypedDict):
    """Body of a filter or prioritize call. ``Nodes`` is set when the extender is not
    nodeCacheCapable, ``NodeNames`` when it is."""

    Pod: JSONObject | None
    Nodes: NodeList | None
    NodeNames: list[str] | None


class ExtenderFilterResult(TypedDict):
    """Answer to a filter call. kube-scheduler reads ``NodeNames`` (nodeCacheCapable) or
    ``Nodes.items``; ``FailedAndUnresolvableNodes`` wins over ``FailedNodes``; a
    non-empty ``Error`` fails the call."""

    Nodes: NodeList | None
    NodeNames: list[str] | None
    FailedNodes: dict[str, str] | None
    FailedAndUnresolvableNodes: dict[str, str] | None
    Error: str


class HostPriority(TypedDict):
    """One node's extender score, MIN..MAX_EXTENDER_PRIORITY; higher is better."""

    Host: str
    Score: int


#: Answer to a prioritize call (``None`` is Go's nil list, ``null`` on the wire).
HostPriorityList = list[HostPriority] | None


class ExtenderBindingArgs(TypedDict):
    """Body of a bind call."""

    PodName: str
    PodNamespace: str
    PodUID: str
    Node: str


class ExtenderBindingResult(TypedDict):
    """Answer to a bind call; a non-empty ``Error`` fails the binding."""

    Error: str


class MetaPod(TypedDict):
    """A pod named by its UID only."""

    UID: str


class MetaVictims(TypedDict):
    """Victims on one node, as UIDs, with the PodDisruptionBudgets they would violate."""

    Pods: list[MetaPod | None] | None
    NumPDBViolations: int


class Victims(TypedDict):
    """Victims on one node, as full pods."""

    Pods: list[JSONObject | None] | None
    NumPDBViolations: int


class ExtenderPreemptionArgs(TypedDict):
    """Body of a preempt call: ``NodeNameToVictims`` unless nodeCacheCapable, then
    ``NodeNameToMetaVictims``."""

    Pod: JSONObject | None
    NodeNameToVictims: dict[str, Victims | None] | None
    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None


class ExtenderPreemptionResult(TypedDict):
    """Answer to a preempt call: the candidate nodes the extender accepts."""

    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None


# --- reading --------------------------------------------------------------------------


def loads(body: bytes | str, what: str) -> object:
    """Parse a request or answer body (as Go's decoder reads it: lone surrogates become
    U+FFFD, too deep a nesting is refused, :mod:`kubesched.objects.jsontext`); raises
    WireError saying it is not JSON."""
    try:
        return jsontext.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise WireError(what, f"body is not valid JSON: {err}") from None


def _node_list(raw: object, path: str) -> NodeList | None:
    if raw is None:
        return None
    f = g.fields(raw, ("kind", "apiVersion", "metadata", "items"), path)
    meta = g.get_object(f, "metadata", path) or {}
    items_raw = f.get("items")
    items: list[JSONObject] | None = None
    if items_raw is not None:
        if not isinstance(items_raw, list):
            raise WireError(f"{path}.items", f"expected an array, got {g.kind(items_raw)}")
        items = []
        for i, item in enumerate(items_raw):
            if not isinstance(item, dict):
                raise WireError(f"{path}.items[{i}]", f"expected a Node object, got {g.kind(item)}")
            items.append(item)
    return NodeList(metadata=meta, items=items)


def decode_extender_args(raw: object) -> ExtenderArgs:
    """An ``ExtenderArgs`` from parsed JSON."""
    path = "ExtenderArgs"
    f = g.fields(raw, ("Pod", "Nodes", "NodeNames"), path)
    return ExtenderArgs(
        Pod=g.get_object(f, "Pod", path),
        Nodes=_node_list(f.get("Nodes"), f"{path}.Nodes"),
        NodeNames=g.get_str_list(f, "NodeNames", path),
    )


def decode_filter_result(raw: object) -> ExtenderFilterResult:
    """An ``ExtenderFilterResult`` from parsed JSON (older extenders answer ``nodes``,
    ``error``: the same fields)."""
    path = "ExtenderFilterResult"
    names = ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error")
    f = g.fields(raw, names, path)
    return ExtenderFilterResult(
        Nodes=_node_list(f.get("Nodes"), f"{path}.Nodes"),
        NodeNames=g.get_str_list(f, "NodeNames", path),
        FailedNodes=g.get_str_map(f, "FailedNodes", path),
        FailedAndUnresolvableNodes=g.get_str_map(f, "FailedAndUnresolvableNodes", path),
        Error=g.get_str(f, "Error", path),
    )


def _host_priority(raw: object, path: str) -> HostPriority:
    if raw is None:  # Go leaves a null element as the zero struct
        return HostPriority(Host="", Score=0)
    f = g.fields(raw, ("Host", "Score"), path)
    return HostPriority(Host=g.get_str(f, "Host", path), Score=g.get_int(f, "Score", path))


def decode_host_priority_list(raw: object) -> HostPriorityList:
    """A ``HostPriorityList`` from parsed JSON."""
    path = "HostPriorityList"
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise WireError(path, f"expected an array, got {g.kind(raw)}")
    return [_host_priority(item, f"{path}[{i}]") for i, item in enumerate(raw)]


def decode_binding_args(raw: object) -> ExtenderBindingArgs:
    """An ``ExtenderBindingArgs`` from parsed JSON."""
    path = "ExtenderBindingArgs"
    f = g.fields(raw, ("PodName", "PodNamespace", "PodUID", "Node"), path)
    return ExtenderBindingArgs(
        PodName=g.get_str(f, "PodName", path),
        PodNamespace=g.get_str(f, "PodNamespace", path),
        PodUID=g.get_str(f, "PodUID", path),
        Node=g.get_str(f, "Node", path),
    )


def decode_binding_result(raw: object) -> ExtenderBindingResult:
    """An ``ExtenderBindingResult`` from parsed JSON."""
    f = g.fields(raw, ("Error",), "ExtenderBindingResult")
    return ExtenderBindingResult(Error=g.get_str(f, "Error", "ExtenderBindingResult"))


def _pods_list(raw: object, path: str, meta: bool) -> list[Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise WireError(path, f"expected an array, got {g.kind(raw)}")
    out: list[Any] = []
    for i, item in enumerate(raw):
        item_path = f"{path}[{i}]"
        if item is None:
            out.append(None)
        elif meta:
            f = g.fields(item, ("UID",), item_path)
            out.append(MetaPod(UID=g.get_str(f, "UID", item_path)))
        elif isinstance(item, dict):
            # A victim is named by metadata.uid; Go decodes the pod into v1.Pod, so a
            # metadata or uid of another type is a decoding error, not a crash later.
            meta_raw = g.get_object(item, "metadata", item_path)
            if meta_raw is not None:
                g.get_str(meta_raw, "uid", f"{item_path}.metadata")
            out.append(item)
        else:
            raise WireError(item_path, f"expected a Pod object, got {g.kind(item)}")
    return out


def _victims_map(raw: object, path: str, meta: bool) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise WireError(path, f"expected a JSON object, got {g.kind(raw)}")
    out: dict[str, Any] = {}
    for node, value in raw.items():
        node_path = f"{path}[{node}]"
        if value is None:
            out[node] = None
            continue
        f = g.fields(value, ("Pods", "NumPDBViolations"), node_path)
        pods = _pods_list(f.get("Pods"), f"{node_path}.Pods", meta)
        violations = g.get_int(f, "NumPDBViolations", node_path)
        out[node] = {"Pods": pods, "NumPDBViolations": violations}
    return out


def decode_preemption_args(raw: object) -> ExtenderPreemptionArgs:
    """An ``ExtenderPreemptionArgs`` from parsed JSON."""
    path = "ExtenderPreemptionArgs"
    f = g.fields(raw, ("Pod", "NodeNameToVictims", "NodeNameToMetaVictims"), path)
    return ExtenderPreemptionArgs(
        Pod=g.get_object(f, "Pod", path),
        NodeNameToVictims=_victims_map(
            f.get("NodeNameToVictims"), f"{path}.NodeNameToVictims", meta=False
        ),
        NodeNameToMetaVictims=_victims_map(
            f.get("NodeNameToMetaVictims"), f"{path}.NodeNameToMetaVictims", meta=True
        ),
    )


def decode_preemption_result(raw: object) -> ExtenderPreemptionResult:
    """An ``ExtenderPreemptionResult`` from parsed JSON."""
    path = "ExtenderPreemptionResult"
    f = g.fields(raw, ("NodeNameToMetaVictims",), path)
    victims = _victims_map(
        f.get("NodeNameToMetaVictims"), f"{path}.NodeNameToMetaVictims", meta=True
    )
    return ExtenderPreemptionResult(NodeNameToMetaVictims=victims)


# --- writing --------------------------------------------------------------------------


def _wire_node_list(nodes: NodeList | None) -> JSONObject | None:
    if nodes is None:
        return None
    # v1.NodeList: empty TypeMeta is omitted, ListMeta ("metadata,omitempty") is a
    # struct and so always written, "items" has no omitempty.
    return {"metadata": nodes["metadata"], "items": nodes["items"]}


def _wire_victims(victims: dict[str, Any] | None) -> JSONObject | None:
    if victims is None:
        return None
    return {
        node: None if v is None else {"Pods": v["Pods"], "NumPDBViolations": v["NumPDBViolations"]}
        for node, v in sorted(victims.items())
    }


def encode_extender_args(args: ExtenderArgs) -> bytes:
    """``args`` as kube-scheduler writes them."""
    return g.dumps(
        {
            "Pod": args["Pod"],
            "Nodes": _wire_node_list(args["Nodes"]),
            "NodeNames": args["NodeNames"],
        }
    )


def encode_filter_result(result: ExtenderFilterResult) -> bytes:
    """``result`` as Go's ``json.Marshal`` writes it."""
    return g.dumps(
        {
            "Nodes": _wire_node_list(result["Nodes"]),
            "NodeNames": result["NodeNames"],
            "FailedNodes": g.sorted_map(result["FailedNodes"]),
            "FailedAndUnresolvableNodes": g.sorted_map(result["FailedAndUnresolvableNodes"]),
            "Error": result["Error"],
        }
    )


def encode_host_priority_list(priorities: HostPriorityList) -> bytes:
    """``priorities`` as Go's ``json.Marshal`` writes them."""
    if priorities is None:
        return g.dumps(None)
    return g.dumps([{"Host": p["Host"], "Score": p["Score"]} for p in priorities])


def encode_binding_args(args: ExtenderBindingArgs) -> bytes:
    """``args`` as kube-scheduler writes them."""
    return g.dumps(
        {
            "PodName": args["PodName"],
            "PodNamespace": args["PodNamespace"],
            "PodUID": args["PodUID"],
            "Node": args["Node"],
        }
    )


def encode_binding_result(result: ExtenderBindingResult) -> bytes:
    """``result`` as Go's ``json.Marshal`` writes it."""
    return g.dumps({"Error": result["Error"]})


def encode_preemption_args(args: ExtenderPreemptionArgs) -> bytes:
    """``args`` as kube-scheduler writes them."""
    return g.dumps(
        {
            "Pod": args["Pod"],
            "NodeNameToVictims": _wire_victims(args["NodeNameToVictims"]),
            "NodeNameToMetaVictims": _wire_victims(args["NodeNameToMetaVictims"]),
        }
    )


def encode_preemption_result(result: ExtenderPreemptionResult) -> bytes:
    """``result`` as Go's ``json.Marshal`` writes it."""
    return g.dumps({"NodeNameToMetaVictims": _wire_victims(result["NodeNameToMetaVictims"])})


def filter_result(
    *,
    nodes: NodeList | None = None,
    node_names: list[str] | None = None,
    failed: dict[str, str] | None = None,
    unresolvable: dict[str, str] | None = None,
    error: str = "",
) -> ExtenderFilterResult:
    """An ``ExtenderFilterResult`` with Go's zero values for what is not given."""
    return ExtenderFilterResult(
        Nodes=nodes,
        NodeNames=node_names,
        FailedNodes=failed,
        FailedAndUnresolvableNodes=unresolvable,
        Error=error,
    )
