"""StatefulSet pods, after upstream's ``pkg/controller/statefulset/stateful_set_utils.go``.

A StatefulSet's pod has a stable identity: the name ``<set>-<ordinal>``, the hostname of
that name and the set's ``serviceName`` as subdomain, the labels
``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, and the
``controller-revision-hash`` of the revision it was made from; each of the set's
``volumeClaimTemplates`` becomes a volume that claims ``<claim>-<set>-<ordinal>``. Pure
functions of plain dicts, shared by the policy lab and a StatefulSet controller.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.objects.deployment import compute_hash
from kubesched.objects.podtemplate import controller_ref, pod_from_template

__all__ = [
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "REVISION_LABEL",
    "claim_name",
    "claims",
    "ordinals",
    "pod_name",
    "retention_policy",
    "revision_name",
    "stateful_pod",
]

Raw = dict[str, Any]

#: ``apps.StatefulSetPodNameLabel``.
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
#: ``apps.PodIndexLabel`` (the PodIndexLabel feature, on by default since 1.28).
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
#: ``apps.StatefulSetRevisionLabel``: the name of the pod's ControllerRevision.
REVISION_LABEL = "controller-revision-hash"


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def pod_name(sts: Mapping[str, Any], ordinal: int) -> str:
    """``getPodName``: ``<set>-<ordinal>``."""
    return f"{_name(sts)}-{ordinal}"


def claim_name(sts: Mapping[str, Any], claim: str, ordinal: int) -> str:
    """``getPersistentVolumeClaimName``: ``<claim>-<set>-<ordinal>``."""
    return f"{claim}-{_name(sts)}-{ordinal}"


def retention_policy(sts: Mapping[str, Any]) -> tuple[str, str]:
    """``persistentVolumeClaimRetentionPolicy`` as ``(whenDeleted, whenScaled)``, each
    ``Retain`` when unset (the API's default)."""
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return str(policy.get("whenDeleted") or "Retain"), str(policy.get("whenScaled") or "Retain")


def claims(sts: Mapping[str, Any], ordinal: int) -> list[Raw]:
    """``getPersistentVolumeClaims``: the claims of the replica ``ordinal`` as the
    StatefulSet controller creates them, one per ``volumeClaimTemplates`` entry, named
    ``<claim>-<set>-<ordinal>`` in the set's namespace, with the template's labels and
    the selector's ``matchLabels``, no status, and the set as controller when
    ``whenDeleted`` is Delete (``updateClaimOwnerRefForSetAndPod`` at creation).
    The policy lab expands a set's claims with it too."""
    spec = sts.get("spec") or {}
    meta = sts.get("metadata") or {}
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    when_deleted, _ = retention_policy(sts)
    out: list[Raw] = []
    for template in spec.get("volumeClaimTemplates") or ():
        if not isinstance(template, Mapping):
            continue
        claim = copy.deepcopy(dict(template))
        claim.pop("status", None)
        claim_meta = dict(claim.get("metadata") or {})
        claim_meta["name"] = claim_name(sts, _name(template), ordinal)
        claim_meta["namespace"] = meta.get("namespace") or "default"
        claim_meta["labels"] = {**(claim_meta.get("labels") or {}), **selector}
        if when_deleted == "Delete":
            claim_meta["ownerReferences"] = [controller_ref(sts, "apps/v1", "StatefulSet")]
        claim.update(apiVersion="v1", kind="PersistentVolumeClaim", metadata=claim_meta)
        claim.setdefault("spec", {})
        out.append(claim)
    return out


def ordinals(sts: Mapping[str, Any]) -> range:
    """The ordinals of the set's replicas: ``spec.ordinals.start`` (0) onwards."""
    spec = sts.get("spec") or {}
    start = (spec.get("ordinals") or {}).get("start") or 0
    replicas = spec.get("replicas")
    count = replicas if isinstance(replicas, int) else 1
    return range(int(start), int(start) + max(count, 0))


def revision_name(sts: Mapping[str, Any]) -> str:
    """The name of the set's current ControllerRevision, ``<set>-<hash>``, which the
    pods carry as ``controller-revision-hash``. Deviation: the hash is FNV-32a over the
    template's JSON (:func:`kubesched.objects.deployment.compute_hash`), not upstream's
    hash of the revision's patch."""
    spec = sts.get("spec") or {}
    collisions = (sts.get("status") or {}).get("collisionCount")
    hash_ = compute_hash(
        spec.get("template") or {}, collisions if isinstance(collisions, int) else None
    )
    return f"{_name(sts)}-{hash_}"


def _update_storage(sts: Mapping[str, Any], pod_spec: Raw, ordinal: int) -> None:
    # updateStorage: one claim volume per template (in the templates' order; upstream
    # walks a map), replacing a volume of the same name, then the pod's other volumes.
    templates = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
    claims = [str(_name(t)) for t in templates if isinstance(t, Mapping)]
    volumes: list[Raw] = [
        {
            "name": claim,
            "persistentVolumeClaim": {"claimName": claim_name(sts, claim, ordinal)},
        }
        for claim in claims
    ]
    for volume in pod_spec.get("volumes") or []:
        if isinstance(volume, dict) and volume.get("name") not in claims:
            volumes.append(volume)
    if volumes:
        pod_spec["volumes"] = volumes


def stateful_pod(sts: Mapping[str, Any], ordinal: int, revision: str | None = None) -> Raw:
    """``newVersionedStatefulSetPod``: the pod of ``ordinal`` made from the set's template
    at ``revision`` (default: :func:`revision_name`), owned by the set."""
    template = (sts.get("spec") or {}).get("template") or {}
    pod = pod_from_template(template, sts, controller_ref(sts, "apps/v1", "StatefulSet"))
    meta = pod["metadata"]
    name = pod_name(sts, ordinal)
    del meta["generateName"]
    meta["name"] = name
    sts_meta = sts.get("metadata") or {}
    if sts_meta.get("namespace"):
        meta["namespace"] = sts_meta["namespace"]
    # updateIdentity: hostname and subdomain, the pod-name and pod-index labels.
    spec = pod["spec"]
    spec["hostname"] = name
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        spec["subdomain"] = service
    labels = meta["labels"]
    labels[POD_NAME_LABEL] = name
    labels[POD_INDEX_LABEL] = str(ordinal)
    _update_storage(sts, spec, ordinal)
    labels[REVISION_LABEL] = revision if revision is not None else revision_name(sts)
    return pod
