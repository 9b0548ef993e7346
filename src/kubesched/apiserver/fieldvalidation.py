"""``?fieldValidation=Ignore|Warn|Strict``: unknown and duplicate fields in a request body.

kube-apiserver decodes a body into its Go type; a field the type does not have is dropped
and a field given twice keeps its last value. The ``fieldValidation`` parameter of create,
update and patch says what else happens (``staging/src/k8s.io/apiserver/pkg/endpoints/
handlers/{create,update,patch}.go``): ``Ignore`` nothing, ``Warn`` (the default) one
``Warning: 299 - "unknown field \\"spec.foo\\""`` response header per problem, ``Strict``
a refusal. The problems are sigs.k8s.io/json's strict errors, ``unknown field "<path>"``
and ``duplicate field "<path>"``, with paths such as ``spec.containers[0].foo`` (map keys
join with dots too: ``metadata.labels.app``). Custom resources report what structural
pruning drops (and unknown ObjectMeta fields), as apiextensions' decoder does.

Known fields come from the built-in schemas (:mod:`kubesched.apiserver.schemas`) or the
CRD's. Duplicates are found while parsing (``object_pairs_hook``, on objects that have
them only), so a body without any costs one dict length comparison per object.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kubesched.apiserver import crdschema, errors, schemas
from kubesched.apiserver.patch_strategic import go_value
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.schemas import Fields
from kubesched.objects import jsontext

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
_ALLOWED = ("", IGNORE, STRICT, WARN)  # sorted, as the Unsupported value message lists them
#: sigs.k8s.io/json keeps at most this many strict errors per decode.
_MAX_PROBLEMS = 100


@dataclass
class FieldCheck:
    """The directive of one request and the warnings it has collected."""

    directive: str = WARN
    warnings: list[str] = field(default_factory=list)
    #: Objects of the request body that had a key more than once: id → their keys in
    #: document order, repeats included.
    duplicates: dict[int, list[str]] = field(default_factory=dict)

    @property
    def reports(self) -> bool:
        """Whether problems are looked for (Warn or Strict), not only dropped."""
        return self.directive != IGNORE

    def warn(self, texts: list[str]) -> None:
        """Add warnings, each once (the warning recorder deduplicates them too)."""
        for text in texts:
            if text not in self.warnings:
                self.warnings.append(text)


def parse(query: Any, options_kind: str) -> FieldCheck:
    """The ``fieldValidation`` of a request whose options are ``options_kind``
    (CreateOptions, UpdateOptions, PatchOptions); 422 for a value upstream does not know."""
    value = query.get("fieldValidation", "")
    if value not in _ALLOWED:
        supported = ", ".join(json.dumps(v) for v in _ALLOWED)
        cause: errors.StatusCause = {
            "reason": "FieldValueNotSupported",
            "message": f"Unsupported value: {json.dumps(value)}: supported values: {supported}",
            "field": "fieldValidation",
        }
        raise errors.invalid(options_kind, "", [cause], "meta.k8s.io")
    return FieldCheck(value or WARN)


def warning_header(text: str) -> str | None:
    """A ``Warning`` header value as kube-apiserver writes it (code 299, agent ``-``); None
    for a text with a control character (an unknown field named ``"a\\nb"``), which
    apimachinery's ``NewWarningHeader`` refuses and the warning recorder then drops."""
    if any(unicodedata.category(c) == "Cc" for c in text):
        return None
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: The warning recorder's limits (apiserver's filters/warning.go): past this many runes in
#: all, every warning is cut to ``WARNING_ITEM_RUNES`` and those that no longer fit dropped.
WARNING_TOTAL_RUNES = 4 * 1024
WARNING_ITEM_RUNES = 256


def warning_headers(texts: list[str]) -> list[str]:
    """The ``Warning`` headers of a response, as kube-apiserver's warning recorder writes
    them: each text once, in order; if they come to more than
    :data:`WARNING_TOTAL_RUNES`, each cut to :data:`WARNING_ITEM_RUNES` and those past the
    total left out (an unknown field named with 70,000 characters must not make a header
    line that clients refuse to read)."""
    unique = list(dict.fromkeys(t for t in texts if t))
    whole = [(t, warning_header(t)) for t in unique]
    if sum(len(t) for t, header in whole if header is not None) <= WARNING_TOTAL_RUNES:
        return [header for _, header in whole if header is not None]
    headers: list[str] = []
    written = 0
    for text in unique:
        if written >= WARNING_TOTAL_RUNES:
            break
        cut = text[:WARNING_ITEM_RUNES]
        header = warning_header(cut)
        if header is not None:
            headers.append(header)
            written += len(cut)
    return headers


# -- parsing ------------------------------------------------------------------------------

_local = threading.local()


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        _local.found.append((obj, [key for key, _ in pairs]))
    return obj


_DECODER = jsontext.decoder(object_pairs_hook=_pairs_hook)


def loads(raw: bytes) -> tuple[Any, dict[int, list[str]]]:
    """Parse a JSON body; also return its objects that repeat a key (by id, with their
    keys in order)."""
    found: list[tuple[dict[str, Any], list[str]]] = []
    _local.found = found
    try:
        body = jsontext.loads(raw, _DECODER)
    finally:
        _local.found = []
    # The objects stay referenced by the body, so their ids stay theirs.
    return body, {id(obj): keys for obj, keys in found}


# -- finding problems ---------------------------------------------------------------------


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _settled(value: Any, node: Fields) -> bool:
    # Whether an object has nothing unknown and nothing to look into, decided in C (the
    # callers repeat this test inline: most objects of a body stop here, and a call each
    # would cost more than the test).
    if type(value) is not dict or node.fields is None:
        return False
    keys = value.keys()
    return keys <= node.known and keys.isdisjoint(node.nested)


def _prune_unknown(value: Any, node: Fields, path: str, found: list[str]) -> None:
    """Drop from ``value`` the fields its type does not have, recording their paths."""
    fields = node.fields
    if fields is not None:
        if type(value) is not dict:
            return  # a wrong type is the validation's business, not this walk's
        keys = value.keys()
        if keys <= node.known:
            if keys.isdisjoint(node.nested):
                return
            for key, sub in value.items():
                child = fields[key]
                if child is None or sub is None:
                    continue
                if type(sub) is dict and child.fields is not None:
                    inner = sub.keys()
                    if inner <= child.known and inner.isdisjoint(child.nested):
                        continue
                _prune_unknown(sub, child, f"{path}.{key}" if path else key, found)
            return
        unknown: list[str] = []
        for key, sub in value.items():
            child = fields.get(key, _UNKNOWN)
            if child is _UNKNOWN:
                found.append(f"{path}.{key}" if path else key)
                unknown.append(key)
            elif child is not None and sub is not None:
                _prune_unknown(sub, child, f"{path}.{key}" if path else key, found)
        for key in unknown:
            del value[key]
        return
    each = node.values or node.items
    if each is None:
        return
    if node.values is not None:
        if type(value) is dict:
            for key, sub in value.items():
                if sub is not None and not _settled(sub, each):
                    _prune_unknown(sub, each, f"{path}.{key}" if path else key, found)
    elif type(value) is list:
        settles = each.fields is not None
        known, nested = each.known, each.nested
        for i, sub in enumerate(value):
            if sub is None:
                continue
            if settles and type(sub) is dict:
                inner = sub.keys()
                if inner <= known and inner.isdisjoint(nested):
                    continue
            _prune_unknown(sub, each, f"{path}[{i}]", found)


#: The fields of one JSON patch operation (patch.go's jsonPatchOp).
_JSON_PATCH_OP = Fields()
_JSON_PATCH_OP.fields = dict.fromkeys(("op", "path", "from", "value"))
_JSON_PATCH_OP.known = frozenset(_JSON_PATCH_OP.fields)

#: What a field not in a struct's fields looks up to (None means known, not looked into).
_UNKNOWN = Fields()


def _ordered_walk(
    value: Any, node: Fields | None, path: str, found: list[str], duplicates: dict[int, list[str]]
) -> None:
    """The slow walk, for a body with duplicates: unknown fields (of ``node``; none without
    one) and duplicates in document order, as sigs.k8s.io/json meets them — a repeated
    field where the second one stands, an unknown one not looked into. Drops the unknown."""
    if type(value) is dict:
        fields = node.fields if node is not None else None
        each = node.values if node is not None and fields is None else None
        seen: set[str] = set()
        unknown: list[str] = []
        for key in duplicates.get(id(value)) or list(value):
            if fields is not None and key not in fields:
                found.append(f'unknown field "{_join(path, key)}"')
                if key not in unknown:
                    unknown.append(key)
                continue
            if key in seen:
                found.append(f'duplicate field "{_join(path, key)}"')
                continue
            seen.add(key)
            if key not in value:
                continue  # a null the type check dropped, as Go's decoder does
            child = fields[key] if fields is not None else each
            _ordered_walk(value[key], child, _join(path, key), found, duplicates)
        for key in unknown:
            del value[key]
    elif type(value) is list:
        each = node.items if node is not None else None
        for i, sub in enumerate(value):
            _ordered_walk(sub, each, f"{path}[{i}]", found, duplicates)


def _unknown_messages(paths: list[str]) -> list[str]:
    return [f'unknown field "{p}"' for p in paths]


def _custom_problems(res: Resource, obj: dict[str, Any], report: bool) -> list[str]:
    # apiextensions' decoder: unknown ObjectMeta fields, then what pruning drops.
    unknown: list[str] = []
    meta_fields = schemas.object_meta()
    if isinstance(obj.get("metadata"), dict) and meta_fields is not None:
        _prune_unknown(obj["metadata"], meta_fields, "metadata", unknown)
    schema = res.custom.schema if res.custom is not None else None
    if schema is not None:
        crdschema.prune(obj, schema, found=unknown if report else None)
    return _unknown_messages(unknown)


def problems(
    res: Resource, obj: Any, duplicates: dict[int, list[str]], report: bool = True
) -> list[str]:
    """Drop the unknown fields of ``obj`` (an object of ``res``) and, with ``report``,
    say what was wrong: ``duplicate field "..."`` and ``unknown field "..."`` texts."""
    if type(obj) is not dict:
        return []
    found: list[str] = []
    if res.custom is not None:
        # apiextensions decodes into unstructured first (duplicates), then prunes.
        if report and duplicates:
            _ordered_walk(obj, None, "", found, duplicates)
        found += _custom_problems(res, obj, report)
    else:
        name = schemas.name_of(res.group, res.version, res.kind)
        node = schemas.fields_of(name) if name is not None else None
        if report and duplicates:
            _ordered_walk(obj, node, "", found, duplicates)
        elif node is not None:
            unknown: list[str] = []
            _prune_unknown(obj, node, "", unknown)
            found += _unknown_messages(unknown)
    # As sigs.k8s.io/json: each problem once, and at most a hundred.
    return list(dict.fromkeys(found))[:_MAX_PROBLEMS] if report else []


def _strict_message(texts: list[str]) -> str:
    return "strict decoding error: " + ", ".join(texts)


def check_body(check: FieldCheck, res: Resource, body: Any) -> None:
    """Create and update: drop unknown fields of the decoded ``body``; report them (and
    duplicates) as ``check`` says. Strict: 400 ``<Kind> in version "<v>" cannot be
    handled as a <Kind>: strict decoding error: ...``."""
    if type(body) is not dict or body.get("kind", res.kind) != res.kind:
        return  # not this kind: the body check answers that
    found = problems(res, body, check.duplicates, check.reports)
    if not found:
        return
    if check.directive == STRICT:
        raise errors.bad_request(
            f"{res.kind} in version {json.dumps(res.version)} cannot be handled as a "
            f"{res.kind}: {_strict_message(found)}"
        )
    check.warn(found)


def _patch_problems(patch: Any, content_type: str, duplicates: dict[int, list[str]]) -> list[str]:
    # What decoding the patch itself strictly finds (patch.go's applyJSPatch and
    # strategicPatchObject): duplicates, and for a JSON patch, unknown operation fields.
    found: list[str] = []
    if content_type == "application/json-patch+json":
        if type(patch) is list:
            for i, op in enumerate(patch):
                if type(op) is dict:
                    _ordered_walk(op, _JSON_PATCH_OP, f"[{i}]", found, duplicates)
        return [f"json patch {text}" for text in found]
    if duplicates:
        _ordered_walk(patch, None, "", found, duplicates)
    return found


def check_patched(
    check: FieldCheck, res: Resource, patched: Any, patch: Any, content_type: str
) -> None:
    """Patch: drop unknown fields of the patched object; report them, after the patch's own
    problems, as ``check`` says. Strict: 422 ``"" is invalid: patch: Invalid value: ...:
    strict decoding error: ...`` (the value is the patched object's JSON, or for a
    strategic merge patch the patch as Go prints a map)."""
    if type(patched) is not dict or patched.get("kind", res.kind) != res.kind:
        return
    found = _patch_problems(patch, content_type, check.duplicates) if check.reports else []
    found += problems(res, patched, {}, check.reports)
    if not found:
        return
    if check.directive == STRICT:
        if content_type == "application/strategic-merge-patch+json":
            shown = go_value(patch)
        else:
            shown = json.dumps(patched, separators=(",", ":"))
        cause: errors.StatusCause = {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {json.dumps(shown)}: {_strict_message(found)}",
            "field": "patch",
        }
        raise errors.invalid("", "", [cause])
    check.warn(found)
