"""Reading cluster and workload files: YAML or JSON, one object, a ``kind: List``, or
several YAML documents — as ``kubectl get -o yaml`` and hand-written manifests give them.

Every object read is defaulted and validated as kube-apiserver would on create
(:mod:`kubesched.objects.defaults`, :mod:`kubesched.objects.validation`), so a file holds
only objects a cluster could hold, then decoded into the compact ``objects`` types, once.
Errors name the file, the item, the object and the field, with kube-apiserver's words:
``cluster.yaml: items[3]: Pod "default/web": spec.containers[0].image: Required value``;
every problem of a file is reported, not only the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.objects import defaults, validation
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
    """A file that cannot be used; ``str()`` is one line per problem, each naming the file,
    the item and the field."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


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
        except yaml.reader.ReaderError as err:
            # A control character (a NUL byte): its own text spans two lines.
            char = err.character if isinstance(err.character, int) else ord(err.character)
            raise InputError(
                f"{path}: position {err.position}: invalid YAML: unacceptable character "
                f"#x{char:04x}: {err.reason}"
            ) from None
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

#: The scope and API group of each kind read (namespaced, served by the core API), which
#: its validation depends on.
_SCOPES: dict[str, tuple[bool, bool]] = {
    "Node": (False, True),
    "Pod": (True, True),
    "PodDisruptionBudget": (True, False),
    "PriorityClass": (False, False),
    "Namespace": (False, True),
    "Service": (True, True),
    "ReplicationController": (True, True),
    "ReplicaSet": (True, False),
    "StatefulSet": (True, False),
}


def _object_name(kind: str, raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    if _SCOPES[kind][0]:
        name = f"{meta.get('namespace') or 'default'}/{name}"
    return f'{kind} "{name}"'


def admit(kind: str, obj: dict[str, Any]) -> list[str]:
    """Default ``obj``, a new object of ``kind`` (one of the kinds read), in place as the API
    server defaults it (with the namespace ``default`` when it names none, as kubectl sends
    it), and say what kube-apiserver would refuse in it: each problem is
    ``Kind "namespace/name": field: detail``; none when the object would be accepted."""
    namespaced, core_group = _SCOPES[kind]
    what = _object_name(kind, obj)
    meta = obj.get("metadata")
    if namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = "default"
    try:
        defaults.on_create(kind, obj)
        errs = validation.validate_create(kind, obj, namespaced=namespaced, core_group=core_group)
    except validation.Undecodable as err:
        # kube-apiserver's decoder names no field (a 400); ours does, for the file's reader.
        decoder = _DECODERS[kind][1]
        try:
            decoder(obj)
        except ObjectError as located:
            return [f"{what}: {located.path}: {located.message}"]
        return [f"{what}: cannot be handled as a {kind}: {err}"]
    return [f"{what}: {err}" for err in errs]


def load_objects(path: Path, into: ClusterObjects | None = None) -> ClusterObjects:
    """Decode every object of ``path`` into ``into`` (a new ClusterObjects by default).
    Raises :class:`InputError` with every problem found when an object is not one the API
    server would accept."""
    out = into if into is not None else ClusterObjects()
    problems: list[str] = []
    for where, raw in read_documents(path):
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected a Kubernetes object")
            continue
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind:
            problems.append(f"{where}: kind: Required value: every object needs a kind")
            continue
        entry = _DECODERS.get(kind)
        if entry is None:
            out.ignored_kinds[kind] = out.ignored_kinds.get(kind, 0) + 1
            continue
        # What is decoded is what the API server would have stored: defaulted, and valid.
        stored = raw if isinstance(raw, dict) else dict(raw)
        refused = admit(kind, stored)
        if refused:
            problems.extend(f"{where}: {problem}" for problem in refused)
            continue
        attr, decode = entry
        try:
            obj = decode(stored)
        except ObjectError as err:
            problems.append(f"{where}: {err}")
            continue
        getattr(out, attr).append(obj)
    problems.extend(_duplicates(out, path))
    if problems:
        raise InputError(*problems)
    return out


def _duplicates(objs: ClusterObjects, path: Path) -> list[str]:
    problems = []
    seen: set[str] = set()
    for node in objs.nodes:
        if node.name in seen:
            problems.append(f'{path}: Node "{node.name}": Duplicate value: a node of that name')
        seen.add(node.name)
    seen = set()
    for pod in objs.pods:
        if pod.key in seen:
            problems.append(f'{path}: Pod "{pod.key}": Duplicate value: a pod of that name')
        seen.add(pod.key)
    return problems
