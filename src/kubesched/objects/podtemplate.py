"""Pods from a controller's pod template, and the owner references that tie them to it.

What a workload controller sends to create a replica, as upstream's
``GetPodFromTemplate`` (``pkg/controller/controller_utils.go``) builds it: the
template's labels, annotations and finalizers, a copy of its spec, ``generateName``
``<owner>-`` (the API server adds five random characters, giving ``web-7c9d4``), and
the controller reference. Pure functions of API objects (plain dicts), so that a
simulator can expand a manifest into the very pods a controller would create.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import dns1123_subdomain_errors

__all__ = [
    "controller_of",
    "controller_ref",
    "pod_from_template",
    "pod_name_prefix",
]

Raw = dict[str, Any]


def controller_ref(owner: Mapping[str, Any], api_version: str, kind: str) -> Raw:
    """``metav1.NewControllerRef``: a reference to ``owner`` with ``controller`` and
    ``blockOwnerDeletion`` true (the garbage collector's foreground deletion waits on
    it)."""
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Raw | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``, if any."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def pod_name_prefix(controller_name: str) -> str:
    """``getPodsPrefix``: ``<name>-``, or the bare name when the dash would make an
    invalid prefix (the name is then at the 253-character limit)."""
    prefix = f"{controller_name}-"
    # A generated name ends with random characters: check the prefix as upstream's
    # ValidatePodName(prefix, true) does, with the trailing dash masked.
    if dns1123_subdomain_errors(prefix[:-1] + "a"):
        return controller_name
    return prefix


def pod_from_template(
    template: Mapping[str, Any],
    owner: Mapping[str, Any],
    owner_ref: Mapping[str, Any] | None = None,
    path: str = "spec.template",
) -> Raw:
    """The pod a controller creates for ``owner`` from its ``template`` (a
    PodTemplateSpec): the template's labels, annotations and finalizers, a deep copy of
    its spec, ``generateName`` from the owner's name, in the owner's namespace, with
    ``owner_ref`` (normally :func:`controller_ref`) as its owner reference.

    Raises :class:`ObjectError` (at ``path``) for a template without labels, as
    upstream's ``createPods`` refuses one ("unable to create pods, no labels"), or
    without a spec.
    """
    meta = template.get("metadata") or {}
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict) or not labels:
        raise ObjectError(f"{path}.metadata.labels", "unable to create pods, no labels")
    spec = template.get("spec")
    if not isinstance(spec, dict):
        raise ObjectError(f"{path}.spec", "Required value")
    owner_meta = owner.get("metadata") or {}
    pod_meta: Raw = {
        "generateName": pod_name_prefix(str(owner_meta.get("name", ""))),
        "labels": dict(labels),
    }
    namespace = owner_meta.get("namespace")
    if namespace:
        pod_meta["namespace"] = namespace
    annotations = meta.get("annotations")
    if annotations:
        pod_meta["annotations"] = dict(annotations)
    finalizers = meta.get("finalizers")
    if finalizers:
        pod_meta["finalizers"] = list(finalizers)
    if owner_ref is not None:
        pod_meta["ownerReferences"] = [dict(owner_ref)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(spec)}
