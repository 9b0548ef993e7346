"""Message descriptors and classes for the Kubernetes protobuf wire format, built from our tables.

The tables (:mod:`.table_meta`, :mod:`.table_core`, :mod:`.table_volumes`,
:mod:`.table_groups`, :mod:`.table_storage`, :mod:`.table_auth`) list each message's fields
in a compact notation; this module reads them into :class:`Field` records, builds one proto2
``FileDescriptorProto`` per upstream package, loads them into a private descriptor pool
and makes the message classes with the ``protobuf`` runtime. :func:`schema` does that
once, on first use, and caches it.

The notation: each entry is one message, its fields space-separated as
``<flags><name>=<number>:<type>``. ``name`` is both the proto field name and the JSON key;
``[]`` marks a repeated field, ``{}`` a map with string keys; a type with a dot names
another package's message. Flags say how a scalar the wire carries becomes JSON, following
the Go field behind it: ``?`` a pointer (kept whenever present, zero included), ``!`` a
value without ``omitempty`` (always kept), none a value with ``omitempty`` (a zero is left
out). ``@`` inlines a message's fields into its parent (``json:",inline"``, as Volume's
VolumeSource).

Besides the tables, a few messages are built in because the JSON they become is not the
JSON of their fields: ``metav1.Time`` / ``MicroTime`` (RFC 3339 strings), ``FieldsV1``
(raw JSON), ``runtime.RawExtension`` (an embedded object's JSON), ``resource.Quantity``
(a string), ``intstr.IntOrString`` (an int or a string), and runtime's ``Unknown``
envelope with its ``TypeMeta``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kubesched.apiserver.protobuf.table_auth import AUTHENTICATION, AUTHORIZATION
from kubesched.apiserver.protobuf.table_core import CORE
from kubesched.apiserver.protobuf.table_groups import (
    APPS,
    AUTOSCALING,
    BATCH,
    COORDINATION,
    EVENTS,
    POLICY,
    SCHEDULING,
)
from kubesched.apiserver.protobuf.table_meta import META
from kubesched.apiserver.protobuf.table_storage import PERSISTENT_VOLUMES, STORAGE
from kubesched.apiserver.protobuf.table_volumes import VOLUMES

#: Short package names (as the tables write them) → proto package, in dependency order.
PACKAGES: dict[str, str] = {
    "runtime": "k8s.io.apimachinery.pkg.runtime",
    "intstr": "k8s.io.apimachinery.pkg.util.intstr",
    "resource": "k8s.io.apimachinery.pkg.api.resource",
    "meta": "k8s.io.apimachinery.pkg.apis.meta.v1",
    "core": "k8s.io.api.core.v1",
    "policy": "k8s.io.api.policy.v1",
    "scheduling": "k8s.io.api.scheduling.v1",
    "coordination": "k8s.io.api.coordination.v1",
    "events": "k8s.io.api.events.v1",
    "storage": "k8s.io.api.storage.v1",
    "apps": "k8s.io.api.apps.v1",
    "batch": "k8s.io.api.batch.v1",
    "autoscaling": "k8s.io.api.autoscaling.v1",
    "authorization": "k8s.io.api.authorization.v1",
    "authentication": "k8s.io.api.authentication.v1",
}

#: The built-in messages, in the tables' notation.
_BUILTIN: dict[str, dict[str, str]] = {
    "runtime": {
        "TypeMeta": "apiVersion=1:string kind=2:string",
        "Unknown": "typeMeta=1:TypeMeta raw=2:bytes contentEncoding=3:string contentType=4:string",
        "RawExtension": "raw=1:bytes",
    },
    "intstr": {"IntOrString": "type=1:int64 intVal=2:int32 strVal=3:string"},
    "resource": {"Quantity": "string=1:string"},
    "meta": {
        "Time": "seconds=1:int64 nanos=2:int32",
        "MicroTime": "seconds=1:int64 nanos=2:int32",
        "FieldsV1": "Raw=1:bytes",
    },
}

#: Type names the tables use bare for the built-in messages, and what they stand for.
SPECIAL: dict[str, str] = {
    "Time": "meta.Time",
    "MicroTime": "meta.MicroTime",
    "FieldsV1": "meta.FieldsV1",
    "Quantity": "resource.Quantity",
    "IntOrString": "intstr.IntOrString",
    "RawExtension": "runtime.RawExtension",
}

_TABLES: dict[str, tuple[Mapping[str, str], ...]] = {
    "meta": (META,),
    "core": (CORE, VOLUMES, PERSISTENT_VOLUMES),
    "policy": (POLICY,),
    "scheduling": (SCHEDULING,),
    "coordination": (COORDINATION,),
    "events": (EVENTS,),
    "storage": (STORAGE,),
    "apps": (APPS,),
    "batch": (BATCH,),
    "autoscaling": (AUTOSCALING,),
    "authorization": (AUTHORIZATION,),
    "authentication": (AUTHENTICATION,),
}

#: (apiVersion, kind) of each object body the decoder reads → its message ("pkg.Name").
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "core.Namespace",
    ("v1", "ConfigMap"): "core.ConfigMap",
    ("v1", "Secret"): "core.Secret",
    ("v1", "ServiceAccount"): "core.ServiceAccount",
    ("v1", "Service"): "core.Service",
    ("v1", "Binding"): "core.Binding",
    ("v1", "Event"): "core.Event",
    ("v1", "Pod"): "core.Pod",
    ("v1", "Node"): "core.Node",
    ("v1", "ReplicationController"): "core.ReplicationController",
    ("v1", "PersistentVolume"): "core.PersistentVolume",
    ("v1", "PersistentVolumeClaim"): "core.PersistentVolumeClaim",
    ("policy/v1", "PodDisruptionBudget"): "policy.PodDisruptionBudget",
    ("policy/v1", "Eviction"): "policy.Eviction",
    ("scheduling.k8s.io/v1", "PriorityClass"): "scheduling.PriorityClass",
    ("coordination.k8s.io/v1", "Lease"): "coordination.Lease",
    ("events.k8s.io/v1", "Event"): "events.Event",
    ("storage.k8s.io/v1", "StorageClass"): "storage.StorageClass",
    ("storage.k8s.io/v1", "CSINode"): "storage.CSINode",
    ("storage.k8s.io/v1", "CSIDriver"): "storage.CSIDriver",
    ("storage.k8s.io/v1", "CSIStorageCapacity"): "storage.CSIStorageCapacity",
    ("storage.k8s.io/v1", "VolumeAttachment"): "storage.VolumeAttachment",
    ("storage.k8s.io/v1", "VolumeAttributesClass"): "storage.VolumeAttributesClass",
    ("apps/v1", "Deployment"): "apps.Deployment",
    ("apps/v1", "ReplicaSet"): "apps.ReplicaSet",
    ("apps/v1", "StatefulSet"): "apps.StatefulSet",
    ("apps/v1", "DaemonSet"): "apps.DaemonSet",
    ("apps/v1", "ControllerRevision"): "apps.ControllerRevision",
    ("batch/v1", "Job"): "batch.Job",
    ("batch/v1", "CronJob"): "batch.CronJob",
    ("autoscaling/v1", "Scale"): "autoscaling.Scale",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "authorization.SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "authorization.SelfSubjectRulesReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "authentication.SelfSubjectReview",
}
#: Kinds every group version registers (metav1.AddToGroupVersion): any apiVersion will do.
ANY_VERSION_KINDS: dict[str, str] = {"DeleteOptions": "meta.DeleteOptions"}

_SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
    "float": descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
}
_FIELD = re.compile(r"([@?!]?)(\w+)=(\d+):(\[\]|\{\})?([\w.]+)")


@dataclass(frozen=True)
class Field:
    """One field of a message, as a table entry describes it."""

    name: str
    number: int
    #: A scalar type name, or a message as "pkg.Name".
    type: str
    repeated: bool
    map: bool
    #: "" (omitempty value), "?" (pointer), "!" (value always written) or "@" (inlined).
    flag: str

    @property
    def scalar(self) -> bool:
        """Whether the field (or each element of it) is a scalar, not a message."""
        return self.type in _SCALARS


def parse_fields(package: str, message: str, spec: str) -> tuple[Field, ...]:
    """Read one table entry; a malformed one is a bug in the table, named here."""
    fields = []
    for token in spec.split():
        m = _FIELD.fullmatch(token)
        if m is None:
            raise ValueError(f"protobuf table {package}.{message}: malformed field {token!r}")
        flag, name, number, shape, type_ = m.groups()
        if type_ in SPECIAL:
            type_ = SPECIAL[type_]
        elif type_ not in _SCALARS and "." not in type_:
            type_ = f"{package}.{type_}"
        fields.append(Field(name, int(number), type_, shape == "[]", shape == "{}", flag))
    return tuple(fields)


@dataclass(frozen=True)
class Schema:
    """Every message's fields and class, keyed by "pkg.Name" and by proto full name."""

    fields: dict[str, tuple[Field, ...]]
    classes: dict[str, Any]
    #: Proto full name ("k8s.io.api.core.v1.Pod") → "pkg.Name".
    short_names: dict[str, str]


def _full_name(ref: str) -> str:
    package, _, name = ref.partition(".")
    return f"{PACKAGES[package]}.{name}"


def _entry_name(field_name: str) -> str:
    # protoc's naming for a map field's synthetic entry message.
    return field_name[0].upper() + field_name[1:] + "Entry"


def _add_field(message: descriptor_pb2.DescriptorProto, field: Field, type_name: str = "") -> None:
    fd = message.field.add(name=field.name, number=field.number)
    fd.label = (
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
        if field.repeated or field.map
        else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    )
    if type_name:
        fd.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
        fd.type_name = type_name
    elif field.scalar:
        fd.type = _SCALARS[field.type]
    else:
        fd.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
        fd.type_name = "." + _full_name(field.type)


def _describe(name: str, fields: tuple[Field, ...]) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name)
    for field in fields:
        if not field.map:
            _add_field(message, field)
            continue
        entry = message.nested_type.add(name=_entry_name(field.name))
        entry.options.map_entry = True
        _add_field(entry, Field("key", 1, "string", False, False, ""))
        _add_field(entry, Field("value", 2, field.type, False, False, ""))
        _add_field(message, field, f".{name}.{entry.name}")
    return message


@functools.cache
def schema() -> Schema:
    """Build the descriptor pool and the message classes (once; later calls share them)."""
    fields: dict[str, tuple[Field, ...]] = {}
    pool = descriptor_pool.DescriptorPool()
    loaded: list[str] = []
    for package, proto_package in PACKAGES.items():
        specs: dict[str, str] = dict(_BUILTIN.get(package, {}))
        for table in _TABLES.get(package, ()):
            specs.update(table)
        file = descriptor_pb2.FileDescriptorProto(
            name=proto_package.replace(".", "/") + "/kubesched.proto",
            package=proto_package,
            syntax="proto2",
            dependency=loaded,
        )
        for name, spec in specs.items():
            parsed = parse_fields(package, name, spec)
            fields[f"{package}.{name}"] = parsed
            described = _describe(name, parsed)
            # Nested map entries are named relative to the package, as protoc writes them.
            for fd in described.field:
                if fd.type_name.startswith(f".{name}."):
                    fd.type_name = f".{proto_package}{fd.type_name}"
            file.message_type.append(described)
        pool.Add(file)  # type: ignore[no-untyped-call]  # DescriptorPool is untyped in its stubs
        loaded.append(file.name)
    find = pool.FindMessageTypeByName
    classes = {
        ref: message_factory.GetMessageClass(find(_full_name(ref)))  # type: ignore[no-untyped-call]
        for ref in fields
    }
    return Schema(fields, classes, {_full_name(ref): ref for ref in fields})
