"""Decode a Kubernetes protobuf body into the JSON-shaped dict the JSON path reads.

The wire format is apimachinery's ``runtime/serializer/protobuf``: the 4-byte magic
``k8s\\x00``, then a ``runtime.Unknown`` whose ``typeMeta`` names the kind and whose ``raw``
holds the object's message. Go writes every non-pointer field, zero or not, so wire
presence is not JSON presence: each field's flag in the table says what encoding/json
would have written (see :mod:`.table_meta`). Errors are kube-apiserver's: the handlers'
``transformDecodeError`` makes a decode failure a 400 BadRequest.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError, Message

from kubesched.apiserver import errors
from kubesched.apiserver.protobuf.schema import ANY_VERSION_KINDS, KINDS, schema
from kubesched.apiserver.resources import BUILTIN
from kubesched.objects import jsontext

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: "k8s" and encoding style 0: a runtime.Unknown follows (protobuf.go, protoEncodingPrefix).
MAGIC = b"k8s\x00"
#: time.Time{}.Unix(): Go writes a zero metav1.Time with these seconds.
_ZERO_TIME_SECONDS = -62135596800
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
#: The scheme kube-apiserver names when a kind is not registered.
_SCHEME = "pkg/api/legacyscheme/scheme.go:30"


class _Invalid(ValueError):
    """A message that decodes but cannot become JSON (as Go's MarshalJSON would fail)."""


def decode_body(raw: bytes, into_version: str, into_kind: str) -> dict[str, Any]:
    """Decode ``raw`` (a protobuf body) sent to an endpoint of ``into_kind``.

    ``into_version``/``into_kind`` fill in a missing ``typeMeta`` (``copyKindDefaults``)
    and name the expected kind in errors. Raises :class:`errors.ApiError`: 400 for a body
    that is not protobuf, is truncated, or names a kind kube-apiserver does not register;
    415 for a kind this server serves but cannot decode from protobuf.
    """
    s = schema()
    if not raw.startswith(MAGIC):
        raise _unrecognized(
            into_kind,
            "provided data does not appear to be a protobuf message, expected prefix "
            f"[{' '.join(str(b) for b in MAGIC)}]",
            raw,
        )
    if len(raw) == len(MAGIC):
        raise _unrecognized(into_kind, "empty body", raw)
    unknown = s.classes["runtime.Unknown"]()
    try:
        unknown.ParseFromString(raw[len(MAGIC) :])
    except DecodeError as exc:
        raise _unrecognized(into_kind, str(exc), raw) from None
    api_version = _string(unknown.typeMeta.apiVersion) or into_version
    kind = _string(unknown.typeMeta.kind) or into_kind
    ref = KINDS.get((api_version, kind)) or ANY_VERSION_KINDS.get(kind)
    if ref is None:
        raise _no_table(api_version, kind, into_version, into_kind)
    message = s.classes[ref]()
    try:
        message.ParseFromString(unknown.raw)
        body = {"kind": kind, "apiVersion": api_version, **_to_json(message)}
    except (DecodeError, _Invalid) as exc:
        raise _cannot_handle(api_version, kind, into_kind, str(exc)) from None
    except UnicodeDecodeError as exc:
        # A map key or list item that is not UTF-8: the protobuf runtime will not hand it
        # over at all (Go would keep it, then write U+FFFD). Refused instead: a deviation.
        raise _cannot_handle(
            api_version, kind, into_kind, f"a string is not UTF-8: {exc}"
        ) from None
    return body


def _version(api_version: str) -> str:
    return api_version.rpartition("/")[2]


def _cannot_handle(api_version: str, kind: str, into_kind: str, cause: str) -> errors.ApiError:
    return errors.bad_request(
        f"{kind} in version {json.dumps(_version(api_version))} cannot be handled as a "
        f"{into_kind}: {cause}"
    )


def _unrecognized(into_kind: str, cause: str, raw: bytes) -> errors.ApiError:
    # summarizeData: the first 30 bytes, in hex for a body that is not JSON.
    summary = raw[:30].hex() + (" ..." if len(raw) > 30 else "")
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {into_kind}): {cause} ({summary})"
    )


def _no_table(api_version: str, kind: str, into_version: str, into_kind: str) -> errors.ApiError:
    served = {(r.group_version, r.kind) for r in BUILTIN} | {(into_version, into_kind)}
    if (api_version, kind) in served:
        # kube-apiserver would decode it; this server has no table for it (custom
        # resources: kube-apiserver takes no protobuf either). Say which kind, and how.
        refused = errors.unsupported_media_type(("application/json",))
        message = (
            f"the kubesched API server cannot decode {kind} ({api_version}) from "
            f"{MEDIA_TYPE}; send it as application/json"
        )
        return errors.ApiError({**refused.status, "message": message})
    return _cannot_handle(
        api_version,
        kind,
        into_kind,
        f"no kind {json.dumps(kind)} is registered for version {json.dumps(api_version)} "
        f"in scheme {json.dumps(_SCHEME)}",
    )


def _to_json(message: Message) -> dict[str, Any]:
    plan = _PLANS.get(type(message)) or _plan(message)
    out: dict[str, Any] = {}
    for fd, value in message.ListFields():
        name, convert, mode = plan[fd]
        if mode == "" and not value:
            continue  # a zero value whose Go field is omitempty
        converted = convert(value)
        if mode == "@":
            out.update(converted)
        else:
            out[name] = converted
    return out


_Step = tuple[str, Callable[[Any], Any], str]


#: Per message class: what each of its fields becomes, keyed by field descriptor.
_PLANS: dict[type, dict[Any, _Step]] = {}


def _plan(message: Message) -> dict[Any, _Step]:
    s = schema()
    descriptor = message.DESCRIPTOR
    plan: dict[Any, _Step] = {}
    for field in s.fields[s.short_names[descriptor.full_name]]:
        convert = _converter(field.type)
        if field.repeated:
            convert = functools.partial(_each, convert)
        elif field.map:
            convert = functools.partial(_each_value, convert)
        # Messages, lists and maps are written whenever the wire has them.
        mode = field.flag if field.scalar and not (field.repeated or field.map) else "!"
        step = (field.name, convert, "@" if field.flag == "@" else mode)
        plan[descriptor.fields_by_number[field.number]] = step
    _PLANS[type(message)] = plan
    return plan


def _each(convert: Callable[[Any], Any], values: Any) -> list[Any]:
    return [convert(v) for v in values]


def _each_value(convert: Callable[[Any], Any], values: Any) -> dict[str, Any]:
    return {_string(k): convert(v) for k, v in values.items()}


def _converter(type_: str) -> Callable[[Any], Any]:
    special = _SPECIAL.get(type_)
    if special is not None:
        return special
    if type_ == "bytes":
        return _base64
    if type_ == "string":
        return _string
    if "." in type_:
        return _to_json
    return _same


def _same(value: Any) -> Any:
    return value


def _string(value: str | bytes) -> str:
    # A proto2 string field holding bytes that are not UTF-8 comes back as bytes. Go keeps
    # them in its string, and encoding/json writes each bad byte as U+FFFD: so here.
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _time(message: Any, fmt: str) -> str | None:
    # metav1.Time.Unmarshal: an empty message is the zero time; JSON writes it as null.
    if not message.ListFields():
        return None
    seconds, nanos = message.seconds, message.nanos
    if seconds == _ZERO_TIME_SECONDS and nanos == 0:
        return None
    try:
        moment = _EPOCH + datetime.timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise _Invalid(f"time out of range: {seconds}s {nanos}ns") from None
    return moment.strftime(fmt)


def _quantity(message: Any) -> str:
    # An empty Quantity is zero, written "0".
    return _string(message.string) or "0"


def _int_or_string(message: Any) -> int | str:
    if message.type == 0:
        return int(message.intVal)
    if message.type == 1:
        return _string(message.strVal)
    raise _Invalid(f"impossible IntOrString.Type {message.type}")


def _fields_v1(message: Any) -> Any:
    try:
        return jsontext.loads(message.Raw) if message.Raw else None
    except ValueError as exc:
        raise _Invalid(f"fieldsV1 is not JSON: {exc}") from None


def _raw_extension(message: Any) -> Any:
    # runtime.RawExtension: the embedded object's bytes, JSON as clients send them.
    try:
        return jsontext.loads(message.raw) if message.raw else None
    except ValueError as exc:
        raise _Invalid(f"raw extension is not JSON: {exc}") from None


_SPECIAL: dict[str, Callable[[Any], Any]] = {
    # RFC 3339 in UTC; MicroTime keeps microseconds (metav1.RFC3339Micro).
    "meta.Time": functools.partial(_time, fmt="%Y-%m-%dT%H:%M:%SZ"),
    "meta.MicroTime": functools.partial(_time, fmt="%Y-%m-%dT%H:%M:%S.%fZ"),
    "meta.FieldsV1": _fields_v1,
    "runtime.RawExtension": _raw_extension,
    "resource.Quantity": _quantity,
    "intstr.IntOrString": _int_or_string,
}
