"""Reading cluster and workload files: YAML or JSON, one object, a ``kind: List``, or
several YAML documents — as ``kubectl get -o yaml`` and hand-written manifests give them.

Every object is decoded into the compact ``objects`` types here, once. Errors name the
file, the item and the field: ``cluster.yaml: items[3]: Pod default/web: spec...: ...``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import (
    WORKLOAD_KINDS,
    Namespace,
    PodDisruptionBudget,
    PriorityClass,
    Workload,
)


class InputError(Exception):
    """A file that cannot be used; ``str()`` is one line naming file, item and field."""


@dataclass
class ClusterObjects:
    """Everything a simulation reads, decoded, in file order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    #: Kinds present in the file that scheduling does not read (kept out, counted).
    ignored_kinds: dict[str, int] = field(default_factory=dict)


def read_documents(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield (location, object) for every object in the file, unwrapping Lists."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    docs: list[Any]
    if path.suffix.lower() == ".json":
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError as err:
            raise InputError(
                f"{path}: line {err.lineno} column {err.colno}: invalid JSON: {err.msg}"
            ) from None
    else:
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
            problem = getattr(err, "problem", None) or str(err)
            raise InputError(f"{path}: {where}invalid YAML: {problem}") from None
    for d_index, doc in enumerate(docs):
        prefix = f"documents[{d_index}]" if len(docs) > 1 else ""
        if not isinstance(doc, Mapping):
            raise InputError(f"{_join(path, prefix)}: expected a Kubernetes object")
        if str(doc.get("kind", "")).endswith("List") and "items" in doc:
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{_join(path, prefix)}: items: expected a list")
            for i, item in enumerate(items):
                yield _join(path, f"{prefix}.items[{i}]" if prefix else f"items[{i}]"), item
        else:
            yield _join(path, prefix), doc


def _join(path: Path, where: str) -> str:
    return f"{path}: {where}" if where else str(path)


_DECODERS: dict[str, Any] = {
    "Node": ("nodes", Node.from_dict),
    "Pod": ("pods", Pod.from_dict),
    "PodDisruptionBudget": ("pdbs", PodDisruptionBudget.from_dict),
    "PriorityClass": ("priority_classes", PriorityClass.from_dict),
    "Namespace": ("namespaces", Namespace.from_dict),
    **{kind: ("workloads", Workload.from_dict) for kind in WORKLOAD_KINDS},
}


def load_objects(path: Path, into: ClusterObjects | None = None) -> ClusterObjects:
    """Decode every object of ``path`` into ``into`` (a new ClusterObjects by default)."""
    out = into if into is not None else ClusterObjects()
    for where, raw in read_documents(path):
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a Kubernetes object")
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{where}: kind: Required value: every object needs a kind")
        entry = _DECODERS.get(kind)
        if entry is None:
            out.ignored_kinds[kind] = out.ignored_kinds.get(kind, 0) + 1
            continue
        attr, decode = entry
        try:
            obj = decode(raw)
        except ObjectError as err:
            raise InputError(f"{where}: {err}") from None
        getattr(out, attr).append(obj)
    _check_unique(out, path)
    return out


def _check_unique(objs: ClusterObjects, path: Path) -> None:
    seen: set[str] = set()
    for node in objs.nodes:
        if node.name in seen:
            raise InputError(f"{path}: Node {node.name}: Duplicate value: a node of that name")
        seen.add(node.name)
    seen = set()
    for pod in objs.pods:
        if pod.key in seen:
            raise InputError(f"{path}: Pod {pod.key}: Duplicate value: a pod of that name")
        seen.add(pod.key)
