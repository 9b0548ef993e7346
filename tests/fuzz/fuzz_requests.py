"""Strategies for the requests the fuzzer sends the API server: bodies of a resource's
kind, patches of the three patch formats (and apply, which is not served), delete
options, query strings, label and field selectors."""

from __future__ import annotations

import urllib.parse
from typing import Any

from fuzz_values import (
    ODD_STRINGS,
    encoded,
    json_values,
    junk,
    kind_schema,
    mutated,
    odd_numbers,
    odd_text,
    schema_paths,
    typed,
)
from hypothesis import strategies as st

from kubesched.apiserver.resources import Resource

JSON = "application/json"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"

BODY_TYPES = st.sampled_from(
    [
        JSON,
        JSON,
        JSON,
        "application/json; charset=utf-8",
        "application/yaml",
        "text/plain",
        "",
        None,
        "application/cbor",
        "application/json;;x",
        PROTOBUF,
    ]
)
PATCH_TYPES = st.sampled_from(
    [
        JSON_PATCH,
        MERGE_PATCH,
        STRATEGIC_PATCH,
        MERGE_PATCH,
        STRATEGIC_PATCH,
        APPLY_PATCH,
        JSON,
        "text/plain",
        None,
    ]
)


def object_bodies(res: Resource, base: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """A body for ``res``: its valid object mutated at schema paths (mostly), an object
    made from its schema, or any JSON; encoded, sometimes damaged."""
    schema = kind_schema(res)
    value = st.one_of(
        mutated(base, schema),
        mutated(base, schema),
        mutated(base, schema),
        typed(schema).map(lambda obj: _named(obj, base)),
        json_values(),
    )
    return value.flatmap(encoded)


def _named(obj: Any, base: dict[str, Any]) -> Any:
    # An object made from the schema, with the kind and name of the valid one (so that it
    # gets past the first checks now and then).
    if isinstance(obj, dict):
        obj.setdefault("apiVersion", base.get("apiVersion"))
        obj.setdefault("kind", base.get("kind"))
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = dict(base.get("metadata") or {})
    return obj


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@st.composite
def json_patch(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """An RFC 6902 patch: operations on schema paths, some malformed."""
    paths = [p for p, _ in schema_paths(schema, 5)]
    ops = []
    for _ in range(draw(st.integers(0, 4))):
        path, sub = draw(st.sampled_from(schema_paths(schema, 5)))
        op: dict[str, Any] = {
            "op": draw(
                st.sampled_from(
                    ["add", "remove", "replace", "move", "copy", "test", "", "frobnicate"]
                )
            ),
            "path": draw(
                st.one_of(
                    st.just(_pointer(path)),
                    st.sampled_from(
                        [
                            "",
                            "/",
                            "/-",
                            "/metadata/labels/~2",
                            "//",
                            "/spec/containers/-1",
                            "/spec/containers/99999999999999999999",
                        ]
                    ),
                    odd_text(),
                )
            ),
        }
        if draw(st.booleans()):
            op["value"] = draw(st.one_of(typed(sub), junk()))
        if op["op"] in ("move", "copy") or draw(st.booleans()):
            op["from"] = draw(st.one_of(st.sampled_from([_pointer(p) for p in paths]), odd_text()))
        ops.append(draw(st.one_of(st.just(op), st.just(op), junk())))
    return draw(st.one_of(st.just(ops), st.just(ops), st.just(ops), junk()))


@st.composite
def merge_patch(draw: st.DrawFn, schema: dict[str, Any], base: dict[str, Any]) -> Any:
    """A merge or strategic patch: part of the object changed, nulls, patch directives."""
    start: dict[str, Any] = {}
    if draw(st.booleans()):
        start = {"metadata": {"labels": {"fuzz": "patched"}}}
    value = draw(mutated(start, schema))
    if isinstance(value, dict) and draw(st.integers(0, 3)) == 0:
        directive = draw(
            st.sampled_from(
                [
                    "$patch",
                    "$retainKeys",
                    "$setElementOrder/containers",
                    "$deleteFromPrimitiveList/finalizers",
                    "$setElementOrder/spec",
                ]
            )
        )
        value[directive] = draw(
            st.one_of(st.sampled_from(["delete", "replace", "merge", "x"]), junk())
        )
    return draw(st.one_of(st.just(value), st.just(value), st.just(value), junk(), st.just(base)))


def patch_bodies(
    res: Resource, base: dict[str, Any], content_type: str | None
) -> st.SearchStrategy[bytes]:
    schema = kind_schema(res)
    value = json_patch(schema) if content_type == JSON_PATCH else merge_patch(schema, base)
    return value.flatmap(encoded)


# -- delete options -------------------------------------------------------------------------

_POLICIES = ["Orphan", "Background", "Foreground", "Sometimes", "", "orphan"]


@st.composite
def delete_options(draw: st.DrawFn) -> Any:
    """A DeleteOptions body: mostly of the right shape, some of wrong types or kinds."""
    options: dict[str, Any] = {}
    fields = {
        "kind": st.sampled_from(["DeleteOptions", "Pod", "", "Status"]),
        "apiVersion": st.sampled_from(["v1", "meta.k8s.io/v1", "policy/v1", "x"]),
        "gracePeriodSeconds": st.one_of(st.integers(-5, 60), odd_numbers(), junk()),
        "propagationPolicy": st.one_of(st.sampled_from(_POLICIES), junk()),
        "orphanDependents": st.one_of(st.booleans(), junk()),
        "preconditions": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "uid": st.one_of(st.text(max_size=4), junk()),
                    "resourceVersion": st.one_of(st.sampled_from(["1", "0", "x"]), junk()),
                },
            ),
            junk(),
        ),
        "dryRun": st.one_of(st.lists(st.sampled_from(["All", "x"]), max_size=2), junk()),
        "ignoreStoreReadErrorWithClusterBreakingPotential": st.one_of(st.booleans(), junk()),
    }
    for name, strategy in fields.items():
        if draw(st.integers(0, 3)) == 0:
            options[name] = draw(strategy)
    if draw(st.integers(0, 4)) == 0:
        options[draw(odd_text())] = draw(junk())
    return draw(st.one_of(st.just(options), st.just(options), st.just(options), junk()))


# -- query strings -------------------------------------------------------------------------

_LABEL_KEYS = ["app", "fuzz", "a.b/c", "", "-a", "a" * 64, "A_B", "k8s.io/x", "a/b/c", "x y", "é"]
_LABEL_VALUES = ["seed", "", "a", "a" * 64, "-a", "x y", "(", "é", "a,b"]


@st.composite
def label_selector(draw: st.DrawFn) -> str:
    """A label selector: terms of the grammar (some malformed), or any text."""
    terms = []
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.one_of(st.sampled_from(_LABEL_KEYS), odd_text()))
        op = draw(st.sampled_from(["=", "==", "!=", " in ", " notin ", "", "!", ">", "<", "=="]))
        if op in (" in ", " notin "):
            values = draw(
                st.lists(st.one_of(st.sampled_from(_LABEL_VALUES), odd_text()), max_size=3)
            )
            term = (
                f"{key}{op}({','.join(values)})"
                if draw(st.booleans())
                else f"{key}{op}{','.join(values)}"
            )
        elif op == "!":
            term = f"!{key}"
        elif op in (">", "<"):
            term = f"{key}{op}{draw(st.sampled_from(['1', 'x', '']))}"
        else:
            term = f"{key}{op}{draw(st.one_of(st.sampled_from(_LABEL_VALUES), odd_text())) if op else ''}"
        terms.append(term)
    return draw(st.one_of(st.just(",".join(terms)), st.just(",".join(terms)), odd_text()))


@st.composite
def field_selector(draw: st.DrawFn, res: Resource) -> str:
    """A field selector on the resource's own field labels (and others), some malformed."""
    terms = []
    for _ in range(draw(st.integers(0, 3))):
        label = draw(
            st.one_of(
                st.sampled_from(res.selectable_fields),
                st.sampled_from(["spec.nodeName", "metadata.uid", "x", "", "metadata.name.x"]),
                odd_text(),
            )
        )
        op = draw(st.sampled_from(["=", "==", "!=", "", " in ", "!"]))
        value = draw(
            st.one_of(
                st.sampled_from(["fuzz-seed", "", "a\\,b", "\\", "a=b", "true", "Running"]),
                odd_text(),
            )
        )
        terms.append(f"{label}{op}{value}")
    return draw(st.one_of(st.just(",".join(terms)), st.just(",".join(terms)), odd_text()))


# No version far ahead of the store's: a list waits 3 s for it (then 504), as upstream's
# watch cache does; tests/apiserver has that case.
_VERSIONS = ["", "0", "1", "-1", "abc", "1.5", " 1", "0x10", "\x00", "9" * 30]


def common_query() -> dict[str, st.SearchStrategy[str]]:
    return {
        "pretty": st.sampled_from(["true", "false", "x"]),
        "fieldManager": odd_text(),
        "fieldValidation": st.one_of(
            st.sampled_from(["Strict", "Warn", "Ignore", "strict", "", "x"]), odd_text()
        ),
        "dryRun": st.sampled_from(["", "", "", "", "", "All", "x"]),
        "timeoutSeconds": st.one_of(
            st.sampled_from(["1", "-1", "x", "1.5", "99999999999999999999"]), odd_text()
        ),
    }


def list_query(res: Resource, watch: bool) -> dict[str, st.SearchStrategy[str]]:
    """Query parameters of list and watch, by name."""
    return {
        "labelSelector": label_selector(),
        "fieldSelector": field_selector(res),
        "limit": st.one_of(
            st.sampled_from(["0", "1", "2", "-1", "x", "1.5", "99999999999999999999"]), odd_text()
        ),
        "continue": st.one_of(
            st.sampled_from(["", "x", "eyJ2IjoxfQ==", "eyJydiI6IDEsICJzdGFydCI6IFsiIiwgIiJdfQ=="]),
            odd_text(),
        ),
        "resourceVersion": st.one_of(st.sampled_from(_VERSIONS), odd_text()),
        "resourceVersionMatch": st.sampled_from(["", "Exact", "NotOlderThan", "x"]),
        "watch": st.sampled_from(["true", "1", "false", "x"] if watch else ["false", "0", "x"]),
        "allowWatchBookmarks": st.sampled_from(["true", "false", "x"]),
        "sendInitialEvents": st.sampled_from(["true", "false", "x", ""]),
        "includeObject": st.sampled_from(["None", "Metadata", "Object", "x"]),
        **common_query(),
    }


def delete_query() -> dict[str, st.SearchStrategy[str]]:
    return {
        "gracePeriodSeconds": st.one_of(
            st.sampled_from(["0", "1", "-1", "abc", "1.5", "99999999999999999999"]), odd_text()
        ),
        "propagationPolicy": st.one_of(st.sampled_from(_POLICIES), odd_text()),
        "orphanDependents": st.sampled_from(["true", "false", "maybe", ""]),
        **common_query(),
    }


@st.composite
def query_string(
    draw: st.DrawFn, params: dict[str, st.SearchStrategy[str]], fixed: dict[str, str] | None = None
) -> str:
    """``?`` and some of ``params`` (each at most twice), sometimes an unknown one or a
    huge one; every name and value percent-encoded (a raw control character never reaches
    the server: the client refuses it)."""
    pairs: list[tuple[str, str]] = list((fixed or {}).items())
    for name, strategy in params.items():
        if draw(st.integers(0, 2)) == 0:
            pairs.append((name, draw(strategy)))
            if draw(st.integers(0, 9)) == 0:
                pairs.append((name, draw(strategy)))
    if draw(st.integers(0, 5)) == 0:
        pairs.append((draw(odd_text()), draw(odd_text())))
    if draw(st.integers(0, 19)) == 0:
        pairs.append(("labelSelector", "a" * draw(st.sampled_from([10_000, 100_000, 900_000]))))
    quote = draw(st.sampled_from([urllib.parse.quote, urllib.parse.quote_plus]))
    encoded = "&".join(
        f"{quote(n.encode('utf-8', 'surrogatepass'))}={quote(v.encode('utf-8', 'surrogatepass'))}"
        for n, v in pairs
    )
    return f"?{encoded}" if encoded else draw(st.sampled_from(["", "?", "?&", "?=", "?a"]))


def odd_names() -> st.SearchStrategy[str]:
    """Names for the path: odd strings, percent-encoded."""
    return st.one_of(st.sampled_from(ODD_STRINGS), odd_text()).map(
        lambda s: urllib.parse.quote(s.encode("utf-8", "surrogatepass"), safe="")
    )
