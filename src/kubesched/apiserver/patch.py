"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge
patch (:mod:`kubesched.apiserver.patch_strategic`, with the built-in types' strategies)."""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.patch_strategic import strategic_merge
from kubesched.apiserver.store import copy_object

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: apply ``patch`` to ``target`` (``null`` deletes a key)."""
    if not isinstance(patch, dict):
        return copy_object(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise errors.bad_request(f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        node = _child(node, part, path)
    return node


def _child(node: Any, part: str, path: str) -> Any:
    if isinstance(node, dict):
        if part not in node:
            raise errors.invalid_patch(f"doc is missing path: {path!r}")
        return node[part]
    if isinstance(node, list):
        index = _index(node, part, path, allow_end=False)
        return node[index]
    raise errors.invalid_patch(f"doc is missing path: {path!r}")


def _index(node: list[Any], part: str, path: str, allow_end: bool) -> int:
    if part == "-" and allow_end:
        return len(node)
    if not part.isdigit():
        raise errors.invalid_patch(f"invalid index in path: {path!r}")
    index = int(part)
    if index > len(node) or (index == len(node) and not allow_end):
        raise errors.invalid_patch(f"index out of range in path: {path!r}")
    return index


def _add(doc: Any, path: str, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, allow_end=True), value)
    else:
        raise errors.invalid_patch(f"doc is missing path: {path!r}")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    parts = _pointer(path)
    if not parts:
        raise errors.invalid_patch("cannot remove the whole document")
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, path, allow_end=False))
    raise errors.invalid_patch(f"doc is missing path: {path!r}")


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: apply a list of operations to a copy of ``target``."""
    if not isinstance(operations, list):
        raise errors.bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    doc = copy_object(target)
    for op in operations:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise errors.invalid_patch(f"invalid operation: {op!r}")
        kind, path = op.get("op"), op["path"]
        if kind == "add":
            doc = _add(doc, path, copy_object(op.get("value")))
        elif kind == "remove":
            doc, _ = _remove(doc, path)
        elif kind == "replace":
            doc, _ = _remove(doc, path)
            doc = _add(doc, path, copy_object(op.get("value")))
        elif kind in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise errors.invalid_patch(f"missing from in {kind} operation")
            if kind == "move":
                doc, value = _remove(doc, source)
            else:
                value = copy_object(_get(doc, source))
            doc = _add(doc, path, value)
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise errors.invalid_patch(f"testing value {path} failed: test failed")
        else:
            raise errors.invalid_patch(f"Unexpected kind: {kind}")
    return doc


def _get(doc: Any, path: str) -> Any:
    node = doc
    for part in _pointer(path):
        node = _child(node, part, path)
    return node


def apply_patch(target: Any, patch: Any, content_type: str, kind: str = "") -> Any:
    """Apply ``patch`` of media type ``content_type`` to an object of ``kind`` (whose patch
    strategies a strategic merge patch follows); 415 for any other media type."""
    if content_type == STRATEGIC:
        return strategic_merge(target, patch, kind)
    if content_type == MERGE:
        if not isinstance(patch, dict):
            raise errors.bad_request("json: cannot unmarshal non-object into patch map")
        return merge_patch(target, patch)
    if content_type == JSON_PATCH:
        return json_patch(target, patch)
    raise errors.unsupported_media_type()
