"""Fuzzed protobuf bodies (``application/vnd.kubernetes.protobuf``, as Go clients and
kubectl send them) to every served resource whose kind the server decodes from protobuf:
creates and updates made of random messages of the kind's own type (hostile strings,
huge and negative numbers, times out of range), sometimes damaged on the wire, and
DeleteOptions in protobuf. The oracle is the JSON writes' (:mod:`fuzz_world`)."""

from __future__ import annotations

import pytest
from fuzz_http import Snapshot
from fuzz_profile import fuzz
from fuzz_requests import PROTOBUF
from fuzz_values import byte_position
from fuzz_world import BUILTIN_SERVED, collection_path, seed_name, start_world
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver.protobuf.decode import MAGIC
from kubesched.apiserver.protobuf.schema import KINDS, schema

S = schema()
#: The served resources whose kinds the server decodes from protobuf (others answer 415:
#: test_apiserver_protobuf_server has that).
DECODED = [rid for rid, r in BUILTIN_SERVED.items() if (r.group_version, r.kind) in KINDS]

_INTS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
}
_TEXT = st.one_of(
    st.sampled_from(
        ["", "a", "fuzz", "fuzz-1", "\x00", "é", "a\nb", "1Gi", "100m", "-1", "x" * 300]
    ),
    st.text(st.characters(codec="utf-8"), max_size=10),
)


def _scalar(fd: FieldDescriptor) -> st.SearchStrategy:
    if fd.type == FieldDescriptor.TYPE_STRING:
        return _TEXT
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return st.one_of(
            st.binary(max_size=20), st.sampled_from([b"{}", b'{"a":1}', b"[", b"\xff"])
        )
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if fd.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(
            allow_nan=True,
            allow_infinity=True,
            width=32 if fd.type == FieldDescriptor.TYPE_FLOAT else 64,
        )
    low, high = _INTS.get(fd.type, (-(2**31), 2**31 - 1))
    return st.one_of(st.integers(-2, 10), st.integers(low, high), st.sampled_from([low, high]))


@st.composite
def message(draw, descriptor, depth=0):
    """A message of ``descriptor`` with some fields set, nested at most 4 deep."""
    msg = (
        S.classes[S.short_names[descriptor.full_name]]()
        if descriptor.full_name in S.short_names
        else None
    )
    if msg is None:
        return None
    for fd in descriptor.fields:
        if draw(st.integers(0, 2)) != 0:
            continue
        sub = fd.message_type
        if sub is not None and sub.GetOptions().map_entry:
            key_fd, value_fd = sub.fields_by_name["key"], sub.fields_by_name["value"]
            for _ in range(draw(st.integers(0, 2))):
                key = draw(_scalar(key_fd))
                if value_fd.message_type is not None:
                    if depth < 4:
                        value = draw(message(value_fd.message_type, depth + 1))
                        if value is not None:
                            getattr(msg, fd.name)[key].CopyFrom(value)
                else:
                    getattr(msg, fd.name)[key] = draw(_scalar(value_fd))
        elif sub is not None:
            if depth >= 4:
                continue
            count = draw(st.integers(1, 2)) if fd.is_repeated else 1
            for _ in range(count):
                value = draw(message(sub, depth + 1))
                if value is None:
                    continue
                if fd.is_repeated:
                    getattr(msg, fd.name).add().CopyFrom(value)
                else:
                    getattr(msg, fd.name).CopyFrom(value)
        elif fd.is_repeated:
            getattr(msg, fd.name).extend(draw(st.lists(_scalar(fd), max_size=3)))
        else:
            setattr(msg, fd.name, draw(_scalar(fd)))
    return msg


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = S.classes["runtime.Unknown"](raw=raw)
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    return MAGIC + unknown.SerializeToString()


@st.composite
def damaged(draw, raw: bytes) -> bytes:
    how = draw(st.sampled_from(["none", "none", "none", "cut", "byte", "noise", "magic"]))
    if how == "cut" and raw:
        return raw[: byte_position(draw, len(raw))]
    if how == "byte" and len(raw) > 4:
        at = 4 + byte_position(draw, len(raw) - 4)
        return raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    if how == "noise":
        return MAGIC + draw(st.binary(max_size=64))
    if how == "magic":
        return draw(st.sampled_from([b"", b"k8s", MAGIC, b"k8s\x01" + raw[4:], raw[4:]]))
    return raw


@st.composite
def protobuf_body(draw, res, name: str) -> bytes:
    ref = KINDS.get((res.group_version, res.kind))
    descriptor = S.classes[ref].DESCRIPTOR
    msg = draw(message(descriptor))
    if "metadata" in descriptor.fields_by_name and draw(st.integers(0, 3)) != 0:
        msg.metadata.name = name  # a valid name now and then gets past the first checks
        msg.metadata.ClearField("namespace")
    api_version, kind = draw(
        st.sampled_from(
            [
                (res.group_version, res.kind),
                (res.group_version, res.kind),
                ("", ""),
                ("v1", "Pod"),
                ("x/v9", res.kind),
                (res.group_version, "Nope"),
            ]
        )
    )
    return draw(damaged(envelope(api_version, kind, msg.SerializeToString())))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from start_world(tmp_path_factory)


@pytest.mark.parametrize("rid", DECODED)
@fuzz(examples=8)
@given(data=st.data())
def test_protobuf_create_and_update(world, rid, data):
    res = world.resource(rid)
    update = data.draw(st.booleans(), "update") and set(res.verbs) != {"create"}
    name = seed_name(res) if update else world.fresh_name(res, "fuzz-pb")
    body = data.draw(protobuf_body(res, name), "body")
    if update:
        world.restore_seed(rid)
        method, path = "PUT", f"{collection_path(res)}/{name}"
    else:
        method, path = "POST", collection_path(res)
    what = f"{method} {path} protobuf {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send(method, path, body, PROTOBUF)
    got = world.expect(reply, what, snapshot)
    if reply.status < 300:
        world.check_stored(rid, res, got, what)


@fuzz(examples=40)
@given(data=st.data())
def test_protobuf_delete_options(world, data):
    res = world.resource("core/configmaps")
    victim = world.fresh_name(res)
    world.create_seed("core/configmaps", victim)
    descriptor = S.classes["meta.DeleteOptions"].DESCRIPTOR
    msg = data.draw(message(descriptor), "options")
    kind = data.draw(
        st.sampled_from(
            [("meta.k8s.io/v1", "DeleteOptions"), ("v1", "DeleteOptions"), ("", ""), ("v1", "Pod")]
        ),
        "kind",
    )
    body = data.draw(damaged(envelope(*kind, msg.SerializeToString())), "body")
    path = f"{collection_path(res)}/{victim}"
    what = f"DELETE {path} protobuf {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("DELETE", path, body, PROTOBUF)
    world.expect(reply, what, snapshot)
