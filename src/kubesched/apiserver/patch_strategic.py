"""Strategic merge patch (``application/strategic-merge-patch+json``), applied as
apimachinery's ``strategicpatch.StrategicMergeMapPatch`` applies it on the server.

Maps merge key by key and ``null`` deletes a key. A list whose field has the ``merge``
strategy (:mod:`kubesched.apiserver.patch_schema`) merges: objects by their merge key
(containers by ``name``, conditions by ``type``), primitives as a union; any other list is
replaced. Directives: ``$patch: replace|delete`` on a map or as a list element,
``$retainKeys``, ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``.
Errors are worded as upstream's and carry its status codes (400 for a malformed directive,
422 for content that contradicts ``$retainKeys``). What upstream does not classify (a list
item without its merge key, an unknown directive) it answers with a 500 carrying the plain
error; here it is a 400 BadRequest with the same words (:func:`_unclassified`), a deliberate
deviation: a malformed patch is the client's error, and the server never answers bad input
with a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.patch_schema import PatchField, field_of
from kubesched.apiserver.store import copy_object


def _unclassified(message: str) -> errors.ApiError:
    # Upstream: a plain error, so ErrorToAPIStatus makes it a 500 (see the module's text).
    return errors.bad_request(message)


DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER = "$setElementOrder/"


def go_value(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (``map[a:1 b:[x y]]``)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def strategic_merge(target: Any, patch: Any, kind: str) -> Any:
    """Apply ``patch`` to a copy of ``target`` with the strategies of ``kind``."""
    if not isinstance(patch, dict):
        raise errors.bad_request("json: cannot unmarshal non-object into patch map")
    original = copy_object(target) if isinstance(target, dict) else {}
    return _merge_map(original, copy_object(patch), kind)


def _merge_map(original: dict[str, Any], patch: dict[str, Any], type_name: str) -> dict[str, Any]:
    directive = patch.pop(DIRECTIVE, None)
    if directive == "replace":
        return _merge_map({}, patch, type_name)
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        shown = go_value({**patch, DIRECTIVE: directive})
        raise _unclassified(f"unknown patch type: {directive} in map: {shown}")
    if RETAIN_KEYS in patch:
        _retain_keys(original, patch)
    for key in [k for k in patch if k.startswith(DELETE_FROM_PRIMITIVE)]:
        values = patch.pop(key)
        field = key[len(DELETE_FROM_PRIMITIVE) :]
        if not isinstance(values, list):
            raise errors.bad_request("invalid patch format of primitive list")
        current = original.get(field)
        if isinstance(current, list):
            original[field] = [v for v in current if v not in values]
    orders = {
        k[len(SET_ELEMENT_ORDER) :]: patch.pop(k)
        for k in list(patch)
        if k.startswith(SET_ELEMENT_ORDER)
    }
    for key, value in patch.items():
        tags = field_of(type_name, key)
        child_type = tags.type if tags is not None else ""
        if value is None:
            original.pop(key, None)
        elif key not in original:
            original[key] = _strip(value, child_type, tags)
        elif isinstance(value, dict) and isinstance(original[key], dict):
            original[key] = _merge_map(original[key], value, child_type)
        elif isinstance(value, list) and isinstance(original[key], list):
            if tags is not None and tags.merges:
                original[key] = _merge_list(original[key], value, tags)
            else:
                original[key] = _strip(value, child_type)
        else:
            original[key] = _strip(value, child_type, tags)
    for key, order in orders.items():
        _set_element_order(original, key, order, field_of(type_name, key))
    return original


def _strip(value: Any, type_name: str, tags: PatchField | None = None) -> Any:
    """A patch value with nothing to merge into: its directives applied against nothing and
    its nulls dropped (``IgnoreUnmatchedNulls``)."""
    if isinstance(value, dict):
        return _merge_map({}, value, type_name)
    if isinstance(value, list):
        if tags is not None and tags.merges:
            return _merge_list([], value, tags)
        return [_strip(v, type_name) if isinstance(v, dict) else v for v in value]
    return value


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    keep = patch.pop(RETAIN_KEYS)
    if not isinstance(keep, list):
        raise errors.bad_request("invalid patch format of retainKeys")
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise errors.rejected_request("patch content doesn't match retainKeys list")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_list(original: list[Any], patch: list[Any], tags: PatchField) -> list[Any]:
    if not tags.key:  # a set of primitives
        merged = list(original)
        for value in patch:
            if isinstance(value, list):
                raise errors.rejected_request("lists of lists are not supported")
            if value not in merged:
                merged.append(value)
        return merged
    replace = False
    deletions = []
    items = []
    for item in patch:
        if not isinstance(item, dict):
            raise _unclassified(f"unable to find api field in struct for the key {tags.key}")
        directive = item.get(DIRECTIVE)
        if directive is None:
            items.append(item)
        elif directive == "replace":
            replace = True
        elif directive == "delete":
            deletions.append(item.get(tags.key))
        elif directive == "merge":
            raise _unclassified("merging lists cannot yet be specified in the patch")
        else:
            raise _unclassified(f"unknown patch type: {directive} in map: {go_value(item)}")
    if replace:
        return [_strip(item, tags.type) for item in items]
    merged = [
        item
        for item in original
        if not (isinstance(item, dict) and item.get(tags.key) in deletions)
    ]
    for item in items:
        if tags.key not in item:
            raise _unclassified(
                f"map: {go_value(item)} does not contain declared merge key: {tags.key}"
            )
        for i, existing in enumerate(merged):
            if isinstance(existing, dict) and existing.get(tags.key) == item[tags.key]:
                merged[i] = _merge_map(existing, item, tags.type)
                break
        else:
            merged.append(_strip(item, tags.type))
    return merged


def _set_element_order(
    original: dict[str, Any], key: str, order: Any, tags: PatchField | None
) -> None:
    # normalizeElementOrder: the patch's elements in the order given, the server's own
    # elements where they were, interleaved by their positions in the original list.
    if not isinstance(order, list):
        raise errors.bad_request("invalid patch type of setElementOrder list")
    current = original.get(key)
    if not isinstance(current, list):
        return
    merge_key = tags.key if tags is not None else ""

    def identity(item: Any) -> Any:
        return item.get(merge_key) if merge_key and isinstance(item, dict) else item

    wanted = [identity(o) for o in order]
    in_patch = [item for item in current if identity(item) in wanted]
    server_only = [item for item in current if identity(item) not in wanted]
    in_patch.sort(key=lambda item: wanted.index(identity(item)))
    server_order = [identity(item) for item in current]
    original[key] = _merge_sorted(server_only, in_patch, server_order, identity)


def _merge_sorted(
    left: list[Any], right: list[Any], server_order: list[Any], identity: Callable[[Any], Any]
) -> list[Any]:
    # mergeSortedSlice: a server-only element goes first only if both are in the server
    # list and it comes earlier there.
    def position(item: Any) -> int:
        ident = identity(item)
        return server_order.index(ident) if ident in server_order else -1

    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = position(left[i]), position(right[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
