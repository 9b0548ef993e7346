"""Aggregated discovery (apidiscovery.k8s.io/v2): every group, version and resource in
one ``APIGroupDiscoveryList``, so that a client learns the whole API in two requests
(``/api`` and ``/apis``) instead of one per group/version.

A client asks for it in ``Accept`` (kubectl and client-go send
``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`` before plain
JSON); anything else gets the legacy documents of :mod:`kubesched.apiserver.discovery`.
The negotiation is upstream's (``negotiation.NegotiateMediaTypeOptions`` with the
discovery endpoint's restrictions): clauses by ``q``, the first one this server can answer
wins, and a conversion other than the v2 list is not allowed. kube-apiserver 1.34 no
longer serves v2beta1, so a client that asks only for v2beta1 gets the legacy document,
as from upstream. The body is built from the same resource lists as legacy discovery
(upstream's ``ConvertGroupVersionIntoToDiscovery``), so custom resources come and go with
their CRDs; it carries an ``ETag`` (a SHA-512 of the document) and a matching
``If-None-Match`` is answered 304 Not Modified, as upstream's ``ServeHTTPWithETag``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubesched.apiserver import discovery
from kubesched.apiserver.resources import Resource

GROUP = "apidiscovery.k8s.io"
VERSION = "v2"
KIND = "APIGroupDiscoveryList"
#: The response's Content-Type: the media type with the served kind, as upstream's
#: ``generateMediaTypeWithGVK``; client-go reads the kind back from it.
CONTENT_TYPE = f"application/json;g={GROUP};v={VERSION};as={KIND}"
#: The media types this server answers discovery in.
_SERVED = ("application", "json")


@dataclass(frozen=True)
class _Clause:
    type: str
    subtype: str
    params: dict[str, str]
    q: float


def _parse_accept(header: str) -> list[_Clause]:
    # goautoneg.ParseAccept: clauses by q, then specific types before wildcards.
    clauses: list[_Clause] = []
    for part in header.split(","):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if not media:
            continue
        kind, _, sub = media.partition("/")
        params: dict[str, str] = {}
        q = 1.0
        for piece in pieces[1:]:
            key, sep, value = piece.partition("=")
            if not sep:
                continue
            key, value = key.strip(), value.strip()
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            else:
                params[key] = value
        clauses.append(_Clause(kind, sub or "*", params, q))
    return sorted(clauses, key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))


def wants_aggregated(accept: str) -> bool:
    """Whether ``accept`` negotiates to the aggregated document (else: legacy JSON)."""
    for clause in _parse_accept(accept):
        if clause.q <= 0:
            continue
        # Upstream's match: the same type and subtype, type/*, or */*.
        if (clause.type, clause.subtype) not in (_SERVED, (_SERVED[0], "*"), ("*", "*")):
            continue
        params = clause.params
        if params.get("stream", "") not in ("", "watch") or params.get("sv"):
            continue  # options this endpoint does not allow: the next clause
        if any(k in params for k in ("as", "g", "v")):
            if (params.get("g"), params.get("v"), params.get("as")) == (GROUP, VERSION, KIND):
                return True
            continue  # a conversion discovery does not serve (Table, v2beta1)
        return False  # plain JSON comes first
    return False


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _resources(listing: dict[str, Any], group: str, version: str) -> list[dict[str, Any]]:
    # Upstream's ConvertGroupVersionIntoToDiscovery: top-level resources first, then each
    # subresource under its parent.
    found: dict[str, dict[str, Any]] = {}
    for entry in listing["resources"]:
        name = entry["name"]
        if "/" in name:
            continue
        resource: dict[str, Any] = {
            "resource": name,
            "responseKind": _gvk(group, version, entry["kind"]),
            "scope": "Namespaced" if entry["namespaced"] else "Cluster",
            "singularResource": entry["singularName"],
            "verbs": entry["verbs"],
        }
        for key in ("shortNames", "categories"):
            if entry.get(key):
                resource[key] = entry[key]
        found[name] = resource
    for entry in listing["resources"]:
        parent, _, sub = entry["name"].partition("/")
        if not sub or parent not in found:
            continue
        kind = _gvk(entry.get("group", group), entry.get("version", version), entry["kind"])
        found[parent].setdefault("subresources", []).append(
            {"subresource": sub, "responseKind": kind, "verbs": entry["verbs"]}
        )
    return list(found.values())


def _group(resources: tuple[Resource, ...], name: str, versions: list[str]) -> dict[str, Any]:
    entries = []
    for version in versions:
        listing = discovery.resource_list(resources, name, version)
        if listing is None:
            continue
        entries.append(
            {
                "version": version,
                "resources": _resources(listing, name, version),
                "freshness": "Current",
            }
        )
    # ObjectMeta as Go writes it: an empty name is left out, creationTimestamp is null.
    meta: dict[str, Any] = {"name": name} if name else {}
    meta["creationTimestamp"] = None
    return {"metadata": meta, "versions": entries}


def document(resources: tuple[Resource, ...], core: bool) -> dict[str, Any]:
    """The ``APIGroupDiscoveryList`` of ``/api`` (``core``: the legacy group) or ``/apis``."""
    if core:
        items = [_group(resources, "", ["v1"])]
    else:
        items = [_group(resources, g, vs) for g, vs in discovery.groups(resources).items()]
    return {
        "kind": KIND,
        "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": {},
        "items": items,
    }


def encode(doc: dict[str, Any]) -> tuple[bytes, str]:
    """The body and its ETag (a SHA-512 of the body, hex, quoted as the header wants it)."""
    body = json.dumps(doc, separators=(",", ":")).encode()
    return body, '"' + hashlib.sha512(body).hexdigest().upper() + '"'


@lru_cache(maxsize=16)
def cached(resources: tuple[Resource, ...], core: bool) -> tuple[bytes, str]:
    """:func:`encode` of :func:`document`, kept while the served resources stay the same
    (as upstream keeps its document until a group version is added or removed); a CRD
    that changes what discovery shows changes the resources."""
    return encode(document(resources, core))
