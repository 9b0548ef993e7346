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

import copy
import difflib
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.objects import defaults, jsontext, typecheck, validation
from kubesched.objects.defaults_workloads import default_pod_template
from kubesched.objects.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.objects.dra.gates import drop_disabled_device_class_fields
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup
from kubesched.objects.policy import (
    WORKLOAD_KINDS,
    Namespace,
    PodDisruptionBudget,
    PriorityClass,
    Workload,
)
from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageObject,
    VolumeAttachment,
)
from kubesched.objects.validation.core import not_supported, required
from kubesched.objects.validation.pod import pod_spec
from kubesched.objects.validation.workloads import replica_set as _daemon_set_spec
from kubesched.objects.workloadpods import Names, generate_job_selector


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
    #: PersistentVolumes, claims, StorageClasses and the CSI objects, in file order.
    storage: list[StorageObject] = field(default_factory=list)
    #: Dynamic Resource Allocation (resource.k8s.io/v1): claims keep their allocation.
    device_classes: list[DeviceClass] = field(default_factory=list)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    resource_claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)
    #: scheduler-plugins' PodGroups and ElasticQuotas (scheduling.x-k8s.io/v1alpha1).
    pod_groups: list[PodGroup] = field(default_factory=list)
    elastic_quotas: list[ElasticQuota] = field(default_factory=list)
    #: The same storage objects as written (defaulted): the simulator's API store holds
    #: them, so that PreBind can write them back whole.
    storage_raw: list[dict[str, Any]] = field(default_factory=list)
    #: The claims as stored (what PreBind reads and writes in a simulation), file order.
    resource_claims_raw: list[dict[str, Any]] = field(default_factory=list)
    #: Kinds present in the file that scheduling does not read (kept out, counted).
    ignored_kinds: dict[str, int] = field(default_factory=dict)
    #: The workloads whose controllers create pods (Deployments, ReplicaSets, StatefulSets,
    #: DaemonSets, Jobs, CronJobs, ReplicationControllers), as stored (defaulted, with a
    #: uid): where each was read, the object, and how many of ``pods`` came before it.
    manifests: list[Manifest] = field(default_factory=list)
    #: The controller of each pod that has one: pod key to (kind, name, uid).
    owners: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: What the user should know, one line each: skipped and unknown kinds, workloads
    #: that create fewer pods than they ask for.
    warnings: list[str] = field(default_factory=list)


@dataclass
class Manifest:
    """A workload read from a file, to be expanded into the pods its controller makes."""

    where: str
    obj: dict[str, Any]
    #: How many of the file's pods came before it: its pods go there, in file order.
    position: int

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind"))

    @property
    def key(self) -> str:
        meta = self.obj.get("metadata") or {}
        return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


#: Kinds whose controllers create pods, expanded by :mod:`kubesched.sim.expand`.
CONTROLLER_KINDS = (
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
)
#: Built-in kinds scheduling never reads: skipped with one warning line per file.
UNREAD_KINDS = frozenset(
    {
        "APIService",
        "Binding",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "ConfigMap",
        "ControllerRevision",
        "CustomResourceDefinition",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "FlowSchema",
        "HorizontalPodAutoscaler",
        "Ingress",
        "IngressClass",
        "Lease",
        "LimitRange",
        "MutatingWebhookConfiguration",
        "NetworkPolicy",
        "PodTemplate",
        "PriorityLevelConfiguration",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "RuntimeClass",
        "Secret",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
    }
)


def read_documents(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield (location, object) for every object in the file, unwrapping Lists."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise InputError(
            f"{path}: byte {err.start}: invalid UTF-8 (0x{err.object[err.start]:02x}): "
            "Kubernetes files are UTF-8 text"
        ) from None
    docs: list[Any]
    if path.suffix.lower() == ".json":
        try:
            docs = [jsontext.loads(text)]
        except json.JSONDecodeError as err:
            raise InputError(
                f"{path}: line {err.lineno} column {err.colno}: invalid JSON: {err.msg}"
            ) from None
        except ValueError as err:  # nested too deeply
            raise InputError(f"{path}: invalid JSON: {err}") from None
    else:
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
            jsontext.check_yaml(docs)
        except RecursionError:
            raise InputError(
                f"{path}: invalid YAML: exceeded max depth of {jsontext.MAX_DEPTH}"
            ) from None
        except jsontext.JSONTextError as err:  # too deep, or aliases past the limit
            raise InputError(f"{path}: invalid YAML: {err}") from None
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
    "PersistentVolume": ("storage", PersistentVolume.from_dict),
    "PersistentVolumeClaim": ("storage", PersistentVolumeClaim.from_dict),
    "StorageClass": ("storage", StorageClass.from_dict),
    "CSINode": ("storage", CSINode.from_dict),
    "CSIDriver": ("storage", CSIDriver.from_dict),
    "CSIStorageCapacity": ("storage", CSIStorageCapacity.from_dict),
    "VolumeAttachment": ("storage", VolumeAttachment.from_dict),
    "DeviceClass": ("device_classes", DeviceClass.from_dict),
    "ResourceSlice": ("resource_slices", ResourceSlice.from_dict),
    "ResourceClaim": ("resource_claims", ResourceClaim.from_dict),
    "ResourceClaimTemplate": ("resource_claim_templates", ResourceClaimTemplate.from_dict),
    "PodGroup": ("pod_groups", PodGroup.from_dict),
    "ElasticQuota": ("elastic_quotas", ElasticQuota.from_dict),
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
    "Deployment": (True, False),
    "DaemonSet": (True, False),
    "Job": (True, False),
    "CronJob": (True, False),
    "PersistentVolume": (False, True),
    "PersistentVolumeClaim": (True, True),
    "StorageClass": (False, False),
    "CSINode": (False, False),
    "CSIDriver": (False, False),
    "CSIStorageCapacity": (True, False),
    "VolumeAttachment": (False, False),
    "DeviceClass": (False, False),
    "ResourceSlice": (False, False),
    "ResourceClaim": (True, False),
    "ResourceClaimTemplate": (True, False),
    "PodGroup": (True, False),
    "ElasticQuota": (True, False),
}


def _object_name(kind: str, raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    if _SCOPES[kind][0]:
        name = f"{meta.get('namespace') or 'default'}/{name}"
    return f"{kind} {_quoted(name)}"


def _quoted(text: str) -> str:
    """``text`` in double quotes, a newline or other control character escaped (as Go's
    %q): an error stays one line whatever the file names an object."""
    return json.dumps(text, ensure_ascii=False)


def _printable(text: str) -> str:
    """``text`` as it is, unless it holds a control character: then quoted."""
    return _quoted(text) if any(ord(c) < 32 or ord(c) == 127 for c in text) else text


def admit(kind: str, obj: dict[str, Any], names: Names | None = None) -> list[str]:
    """Default ``obj``, a new object of ``kind`` (one of the kinds read), in place as the API
    server defaults it (with the namespace ``default`` when it names none, as kubectl sends
    it), and say what kube-apiserver would refuse in it: each problem is
    ``Kind "namespace/name": field: detail``; none when the object would be accepted.

    A workload without a uid gets one from ``names`` (its pods' owner references name
    it), and a Job its generated selector, as the API server's create does."""
    namespaced, core_group = _SCOPES[kind]
    what = _object_name(kind, obj)
    meta = obj.get("metadata")
    if namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = "default"
    if kind in CONTROLLER_KINDS and isinstance(meta, dict) and not meta.get("uid"):
        meta["uid"] = (names or Names(random.Random())).uid()
    try:
        # Decoded as kube-apiserver decodes a body: every field's JSON type against the
        # kind's schema first, so validation never meets a value of the wrong type.
        typecheck.check_kind(kind, obj)
    except typecheck.TypeMismatch as err:
        return [f"{what}: cannot be handled as a {kind}: {err}"]
    try:
        defaults.on_create(kind, obj)
        if kind == "Job":
            generate_job_selector(obj)
        elif kind == "DeviceClass":
            # As the server's create: DRAExtendedResource is off in 1.34.
            drop_disabled_device_class_fields(obj)
        _default_unserved(kind, obj)
        checked = _with_claim_volumes(obj) if kind == "StatefulSet" else obj
        errs = validation.validate_create(
            kind, checked, namespaced=namespaced, core_group=core_group
        )
        if kind == "DaemonSet":
            # Not in objects.validation yet: its spec as a ReplicaSet's (selector, template).
            errs.extend(_daemon_set_spec(obj))
        elif kind == "CronJob":
            errs.extend(_cron_job_spec(obj))
    except validation.Undecodable as err:
        # kube-apiserver's decoder names no field (a 400); ours does, for the file's reader.
        entry = _DECODERS.get(kind)
        if entry is not None:
            try:
                entry[1](obj)
            except ObjectError as located:
                return [f"{what}: {located.path}: {located.message}"]
        return [f"{what}: cannot be handled as a {kind}: {err}"]
    return [f"{what}: {err}" for err in errs]


def _with_claim_volumes(sts: dict[str, Any]) -> dict[str, Any]:
    """A copy of the StatefulSet whose template has a volume for each volumeClaimTemplate:
    kube-apiserver lets the template's mounts name the claims (it does not validate the
    template's pod spec at all), and each pod gets those volumes; objects.validation checks
    the template as a pod's, so it is shown the volumes the pods will have."""
    spec = sts.get("spec")
    claims = spec.get("volumeClaimTemplates") if isinstance(spec, dict) else None
    template = spec.get("template") if isinstance(spec, dict) else None
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(claims, list) or not claims or not isinstance(pod_spec, dict):
        return sts
    copied = copy.deepcopy(sts)
    copied_spec = copied["spec"]["template"]["spec"]
    volumes = copied_spec.get("volumes")
    volumes = list(volumes) if isinstance(volumes, list) else []
    present = {v.get("name") for v in volumes if isinstance(v, dict)}
    for claim in claims:
        meta = claim.get("metadata") if isinstance(claim, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(name, str) and name and name not in present:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
    copied_spec["volumes"] = volumes
    return copied


def _cron_job_spec(obj: dict[str, Any]) -> list[validation.FieldError]:
    # Not in objects.validation yet: what matters before the schedule fires — a schedule
    # (not parsed here) and a job template whose pods could be created.
    raw_spec = obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    errs: list[validation.FieldError] = []
    if not spec.get("schedule"):
        errs.append(required("spec.schedule"))
    job_template = spec.get("jobTemplate")
    job_spec = job_template.get("spec") if isinstance(job_template, dict) else None
    template = job_spec.get("template") if isinstance(job_spec, dict) else None
    path = "spec.jobTemplate.spec.template.spec"
    pod = template.get("spec") if isinstance(template, dict) else None
    errs.extend(pod_spec(pod, path))
    restart = pod.get("restartPolicy") if isinstance(pod, dict) else None
    if isinstance(pod, dict) and restart not in ("OnFailure", "Never"):
        errs.append(
            not_supported(f"{path}.restartPolicy", restart or "Always", ("OnFailure", "Never"))
        )
    return errs


def _default_unserved(kind: str, obj: dict[str, Any]) -> None:
    # DaemonSets and CronJobs have no defaulting in objects yet: their pod templates get
    # a pod's defaults, and a DaemonSet the generation 1 of a new object. A StorageClass
    # gets the binding mode and reclaim policy kube-apiserver gives it.
    if kind == "StorageClass":
        obj.setdefault("volumeBindingMode", "Immediate")
        obj.setdefault("reclaimPolicy", "Delete")
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind == "DaemonSet":
        default_pod_template(spec.get("template"))
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            meta.setdefault("generation", 1)
    elif kind == "CronJob":
        job_template = spec.get("jobTemplate")
        job_spec = job_template.get("spec") if isinstance(job_template, dict) else None
        if isinstance(job_spec, dict):
            default_pod_template(job_spec.get("template"))


def load_objects(
    path: Path, into: ClusterObjects | None = None, names: Names | None = None
) -> ClusterObjects:
    """Decode every object of ``path`` into ``into`` (a new ClusterObjects by default).
    Raises :class:`InputError` with every problem found when an object is not one the API
    server would accept. Workloads are kept in ``manifests`` (uids from ``names``); kinds
    scheduling does not read are skipped with a warning, unknown kinds too."""
    out = into if into is not None else ClusterObjects()
    names = names if names is not None else Names(random.Random())
    problems: list[str] = []
    skipped: list[str] = []
    custom: list[str] = []
    for where, raw in read_documents(path):
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected a Kubernetes object")
            continue
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind:
            problems.append(f"{where}: kind: Required value: every object needs a kind")
            continue
        entry = _DECODERS.get(kind)
        if entry is None and kind not in CONTROLLER_KINDS:
            out.ignored_kinds[kind] = out.ignored_kinds.get(kind, 0) + 1
            if kind in UNREAD_KINDS:
                skipped.append(_label(kind, raw))
            elif _is_custom(raw.get("apiVersion")):
                custom.append(_label(kind, raw))
            else:
                out.warnings.append(f"{where}: {_unknown(kind, raw)}")
            continue
        # What is decoded is what the API server would have stored: defaulted, and valid.
        stored = raw if isinstance(raw, dict) else dict(raw)
        refused = admit(kind, stored, names)
        if refused:
            problems.extend(f"{where}: {problem}" for problem in refused)
            continue
        if kind in CONTROLLER_KINDS:
            out.manifests.append(Manifest(where, stored, len(out.pods)))
        if entry is None:
            continue
        attr, decode = entry
        try:
            obj = decode(stored)
        except ObjectError as err:
            problems.append(f"{where}: {err}")
            continue
        getattr(out, attr).append(obj)
        if attr == "storage":
            out.storage_raw.append(stored)
        if kind == "ResourceClaim":
            out.resource_claims_raw.append(stored)
        if kind == "Pod":
            owner = owner_of(stored)
            if owner[0]:
                out.owners[obj.key] = owner
    if skipped:
        out.warnings.append(
            f"{path}: skipped {len(skipped)} object{'s' if len(skipped) != 1 else ''} of "
            f"kinds scheduling does not read: {', '.join(skipped)}"
        )
    if custom:
        out.warnings.append(
            f"{path}: skipped {len(custom)} custom resource{'s' if len(custom) != 1 else ''} "
            f"the policy lab does not read: {', '.join(custom)}"
        )
    problems.extend(_duplicates(out, path))
    if problems:
        raise InputError(*problems)
    return out


def _is_custom(api_version: object) -> bool:
    """Whether ``api_version`` names a group outside Kubernetes' own (``v1``, ``apps/v1``,
    ``*.k8s.io/...``): a custom resource's, which a cluster may well serve."""
    text = str(api_version or "")
    group = text.rpartition("/")[0]
    return "." in group and not group.endswith((".k8s.io", ".kubernetes.io"))


_KNOWN_KINDS = sorted({*_DECODERS, *CONTROLLER_KINDS, *UNREAD_KINDS, "Service"})


def _unknown(kind: str, raw: Mapping[str, Any]) -> str:
    guess = difflib.get_close_matches(kind, _KNOWN_KINDS, n=1)
    hint = f" — did you mean {guess[0]}?" if guess else " — a typo?"
    return (
        f"unknown kind {_label(kind, raw)} (apiVersion {raw.get('apiVersion') or '?'}) "
        f"skipped: not a kind Kubernetes or the policy lab knows{hint}"
    )


def _label(kind: str, raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return f"{_printable(kind)} {_quoted(str(name))}" if name else _printable(kind)


def owner_of(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    """(kind, name, uid) of the object's controller (its owner reference with
    ``controller: true``); empty strings when it has none."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return (
                str(ref.get("kind") or ""),
                str(ref.get("name") or ""),
                str(ref.get("uid") or ""),
            )
    return ("", "", "")


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
    stored: set[tuple[str, str]] = set()
    for obj in objs.storage:
        kind = type(obj).__name__
        namespace = getattr(obj, "namespace", None)
        name = f"{namespace}/{obj.name}" if namespace is not None else obj.name
        if (kind, name) in stored:
            problems.append(f'{path}: {kind} "{name}": Duplicate value: a {kind} of that name')
        stored.add((kind, name))
    for kind, keyed in (("PodGroup", objs.pod_groups), ("ElasticQuota", objs.elastic_quotas)):
        keys: set[str] = set()
        for item in keyed:
            if item.key in keys:
                problems.append(
                    f'{path}: {kind} "{item.key}": Duplicate value: a {kind} of that name'
                )
            keys.add(item.key)
    return problems
