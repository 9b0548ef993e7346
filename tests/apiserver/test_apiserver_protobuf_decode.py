"""The protobuf body decoder on messages encoded with the protobuf runtime: a round trip
for every message of the table, Go's presence rules, the special types, wire facts
written out by hand, and the errors."""

from __future__ import annotations

import base64

import pytest

from kubesched.apiserver import errors
from kubesched.apiserver.protobuf import decode_body
from kubesched.apiserver.protobuf.decode import _converter
from kubesched.apiserver.protobuf.schema import KINDS, schema

S = schema()


def envelope(api_version, kind, raw):
    unknown = S.classes["runtime.Unknown"]()
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    unknown.raw = raw
    return b"k8s\x00" + unknown.SerializeToString()


def decode(ref, message, into_kind=""):
    (api_version, kind) = next(k for k, v in KINDS.items() if v == ref)
    body = decode_body(envelope(api_version, kind, message.SerializeToString()), "v1", into_kind)
    assert (body.pop("apiVersion"), body.pop("kind")) == (api_version, kind)
    return body


# -- a round trip for every message: fill each field, expect its JSON --------------------

SCALARS = {
    "string": ("s", "s"),
    "int32": (7, 7),
    "int64": (2**40, 2**40),
    "bool": (True, True),
    "double": (1.5, 1.5),
    "bytes": (b"\x00\xffz", base64.b64encode(b"\x00\xffz").decode()),
}


def fill_special(ref, message):
    """Set a built-in message; return the JSON it stands for (None: not special)."""
    if ref == "meta.Time":
        message.seconds, message.nanos = 1700000000, 999
        return "2023-11-14T22:13:20Z"
    if ref == "meta.MicroTime":
        message.seconds, message.nanos = 1700000000, 123456789
        return "2023-11-14T22:13:20.123456Z"
    if ref == "resource.Quantity":
        message.string = "250m"
        return "250m"
    if ref == "intstr.IntOrString":
        message.type, message.strVal = 1, "25%"
        return "25%"
    if ref == "meta.FieldsV1":
        message.Raw = b'{"f:metadata":{}}'
        return {"f:metadata": {}}
    if ref == "runtime.RawExtension":
        message.raw = b'{"spec":{"template":{}}}'
        return {"spec": {"template": {}}}
    return None


def fill(ref, message, depth):
    """Set every field of ``message`` (messages down to ``depth``); return the JSON."""
    special = fill_special(ref, message)
    if special is not None:
        return special
    expected = {}
    for field in S.fields[ref]:
        if field.scalar:
            value, json_value = SCALARS[field.type]
            if field.repeated:
                getattr(message, field.name).extend([value, value])
                expected[field.name] = [json_value, json_value]
            elif field.map:
                getattr(message, field.name)["k"] = value
                expected[field.name] = {"k": json_value}
            else:
                setattr(message, field.name, value)
                expected[field.name] = json_value
            continue
        if depth == 0 and field.type not in {
            "meta.Time",
            "meta.MicroTime",
            "resource.Quantity",
            "intstr.IntOrString",
        }:
            continue
        if field.repeated:
            expected[field.name] = [fill(field.type, getattr(message, field.name).add(), depth - 1)]
        elif field.map:
            expected[field.name] = {
                "k": fill(field.type, getattr(message, field.name)["k"], depth - 1)
            }
        elif field.flag == "@":
            getattr(message, field.name).SetInParent()
            expected.update(fill(field.type, getattr(message, field.name), depth - 1))
        else:
            getattr(message, field.name).SetInParent()
            expected[field.name] = fill(field.type, getattr(message, field.name), depth - 1)
    return expected


MESSAGES = sorted(ref for ref in S.fields if not ref.startswith("runtime."))


def test_every_kind_of_the_table_has_its_message():
    assert set(KINDS.values()) <= set(S.fields)
    assert len(MESSAGES) > 150


@pytest.mark.parametrize("ref", [r for r in MESSAGES if r not in KINDS.values()])
def test_round_trip_every_message(ref):
    message = S.classes[ref]()
    expected = fill(ref, message, 2)
    again = S.classes[ref]()
    again.ParseFromString(message.SerializeToString())
    assert _converter(ref)(again) == expected


@pytest.mark.parametrize("ref", sorted(set(KINDS.values())))
def test_round_trip_every_kind_through_the_envelope(ref):
    message = S.classes[ref]()
    expected = fill(ref, message, 3)
    assert decode(ref, message) == expected


# -- Go's presence: what encoding/json would have written ---------------------------------


def test_zero_values_follow_the_go_fields_behind_them():
    pod = S.classes["core.Pod"]()
    pod.metadata.name = "p"
    pod.metadata.namespace = ""  # a value with omitempty: a zero is left out
    pod.metadata.creationTimestamp.seconds = -62135596800  # Go's zero time: null
    pod.spec.nodeName = ""
    pod.spec.enableServiceLinks = False  # a pointer: kept, zero or not
    pod.spec.priority = 0
    pod.spec.securityContext.runAsUser = 0
    pod.spec.containers.add(name="", image="")  # name has no omitempty: always kept
    pod.spec.containers[0].ports.add(containerPort=0)
    assert decode("core.Pod", pod) == {
        "metadata": {"name": "p", "creationTimestamp": None},
        "spec": {
            "enableServiceLinks": False,
            "priority": 0,
            "securityContext": {"runAsUser": 0},
            "containers": [{"name": "", "ports": [{"containerPort": 0}]}],
        },
    }


def test_a_zero_priority_class_value_is_kept():
    pc = S.classes["scheduling.PriorityClass"]()
    pc.metadata.name = "zero"
    pc.value = 0
    pc.globalDefault = False
    assert decode("scheduling.PriorityClass", pc) == {"metadata": {"name": "zero"}, "value": 0}


def test_maps_bytes_and_inlined_volume_sources():
    cm = S.classes["core.ConfigMap"]()
    cm.data["a"] = "b"
    cm.binaryData["bin"] = b"\x00\x01\xfe"
    assert decode("core.ConfigMap", cm) == {"data": {"a": "b"}, "binaryData": {"bin": "AAH+"}}
    pod = S.classes["core.Pod"]()
    volume = pod.spec.volumes.add(name="cache")
    volume.volumeSource.emptyDir.sizeLimit.string = "1Gi"
    volume = pod.spec.volumes.add(name="cm")
    volume.volumeSource.configMap.localObjectReference.name = "c"  # inlined, as in Go
    volume.volumeSource.configMap.defaultMode = 0o644
    assert decode("core.Pod", pod)["spec"]["volumes"] == [
        {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "cm", "configMap": {"name": "c", "defaultMode": 420}},
    ]


def test_int_or_string_and_times():
    pdb = S.classes["policy.PodDisruptionBudget"]()
    pdb.spec.minAvailable.type = 0
    pdb.spec.minAvailable.intVal = 0  # an int zero is still an int
    pdb.spec.maxUnavailable.type = 1
    pdb.spec.maxUnavailable.strVal = "10%"
    pdb.status.disruptedPods["p"].seconds = 86400
    assert decode("policy.PodDisruptionBudget", pdb) == {
        "spec": {"minAvailable": 0, "maxUnavailable": "10%"},
        "status": {"disruptedPods": {"p": "1970-01-02T00:00:00Z"}},
    }
    lease = S.classes["coordination.Lease"]()
    lease.spec.holderIdentity = ""
    lease.spec.leaseTransitions = 0
    lease.spec.renewTime.seconds = 1
    lease.spec.renewTime.nanos = 5000
    lease.spec.acquireTime.SetInParent()  # an empty Time is the zero time
    assert decode("coordination.Lease", lease) == {
        "spec": {
            "holderIdentity": "",
            "leaseTransitions": 0,
            "renewTime": "1970-01-01T00:00:01.000005Z",
            "acquireTime": None,
        }
    }


# -- wire facts, written out by hand (upstream's generated.proto numbers) -----------------


def field(number, wire_type, payload):
    key = bytes([number << 3 | wire_type]) if number < 16 else varint(number << 3 | wire_type)
    if wire_type == 2:
        return key + varint(len(payload)) + payload
    return key + varint(payload)


def varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_pod_fields_by_their_upstream_numbers():
    container = field(1, 2, b"c") + field(2, 2, b"img")
    resources = field(2, 2, field(1, 2, b"cpu") + field(2, 2, field(1, 2, b"100m")))  # requests
    spec = (
        field(2, 2, container + field(8, 2, resources))  # containers, resources
        + field(10, 2, b"n1")  # nodeName
        + field(19, 2, b"my-scheduler")  # schedulerName
        + field(25, 0, 100)  # priority
    )
    raw = field(1, 2, field(1, 2, b"p") + field(3, 2, b"ns")) + field(2, 2, spec)
    assert decode_body(envelope("v1", "Pod", raw), "v1", "Pod") == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "containers": [
                {"name": "c", "image": "img", "resources": {"requests": {"cpu": "100m"}}}
            ],
            "nodeName": "n1",
            "schedulerName": "my-scheduler",
            "priority": 100,
        },
    }


def test_binding_and_delete_options_by_their_upstream_numbers():
    raw = field(1, 2, field(1, 2, b"p")) + field(2, 2, field(1, 2, b"Node") + field(3, 2, b"n1"))
    assert decode_body(envelope("v1", "Binding", raw), "v1", "Binding") == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    raw = field(1, 0, 0) + field(2, 2, field(1, 2, b"uid-1")) + field(4, 2, b"Foreground")
    assert decode_body(envelope("v1", "DeleteOptions", raw), "", "DeleteOptions") == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1"},
        "propagationPolicy": "Foreground",
    }


def test_lease_and_scheduler_event_by_their_upstream_numbers():
    micro = field(1, 0, 1700000000) + field(2, 0, 5000)
    spec = field(1, 2, b"me") + field(2, 0, 15) + field(4, 2, micro) + field(5, 0, 0)
    raw = field(1, 2, field(1, 2, b"kube-scheduler")) + field(2, 2, spec)
    body = decode_body(envelope("coordination.k8s.io/v1", "Lease", raw), "", "Lease")
    assert body["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "renewTime": "2023-11-14T22:13:20.000005Z",
        "leaseTransitions": 0,
    }
    raw = (
        field(2, 2, micro)  # eventTime
        + field(4, 2, b"default-scheduler")  # reportingController
        + field(7, 2, b"Scheduled")  # reason
        + field(8, 2, field(1, 2, b"Pod") + field(3, 2, b"p"))  # regarding
        + field(10, 2, b"assigned")  # note
        + field(11, 2, b"Normal")  # type
    )
    body = decode_body(envelope("events.k8s.io/v1", "Event", raw), "", "Event")
    assert body == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "eventTime": "2023-11-14T22:13:20.000005Z",
        "reportingController": "default-scheduler",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "p"},
        "note": "assigned",
        "type": "Normal",
    }


def test_a_missing_type_meta_takes_the_endpoint_s_kind():
    raw = field(1, 2, field(1, 2, b"ns1"))
    unknown = S.classes["runtime.Unknown"](raw=raw)
    body = decode_body(b"k8s\x00" + unknown.SerializeToString(), "v1", "Namespace")
    assert body == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}


# -- errors --------------------------------------------------------------------------------


def refused(raw, into=("v1", "Pod")):
    with pytest.raises(errors.ApiError) as caught:
        decode_body(raw, *into)
    return caught.value.code, caught.value.reason, caught.value.status["message"]


def test_errors_are_kube_apiservers():
    assert refused(b'{"kind":"Pod"}') == (
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type Pod): provided data does not "
        "appear to be a protobuf message, expected prefix [107 56 115 0] "
        "(7b226b696e64223a22506f64227d)",
    )
    assert refused(b"k8s\x00")[2].endswith("empty body (6b387300)")
    code, _, message = refused(envelope("v1", "Pod", b"")[:-3] + b"\x12\x05ab")
    assert code == 400
    assert message.startswith("the object provided is unrecognized (must be of type Pod): ")
    truncated = envelope("v1", "Pod", field(1, 2, field(1, 2, b"name"))[:-2])
    code, _, message = refused(truncated)
    assert (code, message.split(": ")[0]) == (400, 'Pod in version "v1" cannot be handled as a Pod')
    assert refused(envelope("v1", "Widget", b"")) == (
        400,
        "BadRequest",
        'Widget in version "v1" cannot be handled as a Pod: no kind "Widget" is registered '
        'for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    )


def test_a_served_kind_without_a_table_is_named_in_a_415():
    crd = envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", b"")
    code, reason, message = refused(crd, ("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
    assert (code, reason) == (415, "UnsupportedMediaType")
    assert "CustomResourceDefinition (apiextensions.k8s.io/v1)" in message
    assert "application/json" in message
    widget = envelope("example.com/v1", "Widget", b"")
    assert refused(widget, ("example.com/v1", "Widget"))[0] == 415
