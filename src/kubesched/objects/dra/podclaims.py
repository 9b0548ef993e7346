"""A pod's resource claims, and the claims the resource-claim controller makes for it.

``spec.resourceClaims`` names each claim a pod uses: an existing ResourceClaim
(``resourceClaimName``) or a ResourceClaimTemplate from which kube-controller-manager's
resource-claim controller makes one claim per pod (``resourceClaimTemplateName``). The
controller records the generated claim's name in ``status.resourceClaimStatuses``.

These are pure functions of API objects, shared by the scheduler plugin, the simulator
(which makes the claims the controller would) and the controller itself, as upstream's
``k8s.io/dynamic-resource-allocation/resourceclaim`` package and
``pkg/controller/resourceclaim`` are:

- :func:`claim_generate_name` / :func:`claim_from_template`: ``generateName``
  ``<pod>-<claim>-`` (both parts cut in proportion when longer than 57 characters), the
  ``resource.kubernetes.io/pod-claim-name`` annotation, the template's labels and
  annotations, a controller owner reference to the pod;
- :func:`find_pod_claim`: the claim already made for a pod's entry (owned by the pod,
  with the annotation; or named ``<pod>-<claim>`` as Kubernetes <= 1.27 made them);
- :func:`resolve_claim_name`: ``resourceclaim.Name`` — which claim a pod's entry refers
  to, with upstream's errors for a claim not created yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.objects._decode import Raw, as_map, get_list, get_str, join
from kubesched.objects.dra.claims import API_VERSION, ResourceClaim, ResourceClaimTemplate
from kubesched.objects.errors import ObjectError

#: The annotation on a generated claim naming the pod's ``spec.resourceClaims`` entry.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: ``maxBaseLen``: room is left for the 5 random characters of a 63-character name.
_MAX_BASE_LEN = 57

#: ``resourceclaim.ErrAPIUnsupported`` and ``ErrClaimNotFound``.
ERR_API_UNSUPPORTED = "API unsupported: neither ResourceClaimName nor ResourceClaimTemplateName set"
ERR_CLAIM_NOT_FOUND = "ResourceClaim not created yet"


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """One ``spec.resourceClaims`` entry."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True)
class ContainerClaim:
    """``resources.claims[i]`` of a container: a pod claim, optionally one request of it."""

    name: str
    request: str = ""


def decode_pod_resource_claims(spec: Raw, path: str = "spec") -> tuple[PodResourceClaim, ...]:
    """``spec.resourceClaims`` of a pod (or pod template)."""
    out = []
    for i, item in enumerate(get_list(spec, "resourceClaims", path)):
        p = join(join(path, "resourceClaims"), i)
        raw = as_map(item, p)
        claim_name = raw.get("resourceClaimName")
        template_name = raw.get("resourceClaimTemplateName")
        out.append(
            PodResourceClaim(
                name=get_str(raw, "name", p),
                resource_claim_name=None
                if claim_name is None
                else get_str(raw, "resourceClaimName", p),
                resource_claim_template_name=(
                    None if template_name is None else get_str(raw, "resourceClaimTemplateName", p)
                ),
            )
        )
    return tuple(out)


def decode_resource_claim_statuses(status: Raw, path: str = "status") -> dict[str, str | None]:
    """``status.resourceClaimStatuses``: pod claim name → generated claim name (None:
    the controller decided the pod needs no claim for that entry)."""
    out: dict[str, str | None] = {}
    for i, item in enumerate(get_list(status, "resourceClaimStatuses", path)):
        p = join(join(path, "resourceClaimStatuses"), i)
        raw = as_map(item, p)
        claim = raw.get("resourceClaimName")
        out[get_str(raw, "name", p)] = (
            None if claim is None else get_str(raw, "resourceClaimName", p)
        )
    return out


def decode_container_claims(resources: Raw, path: str) -> tuple[ContainerClaim, ...]:
    """``resources.claims`` of a container."""
    out = []
    for i, item in enumerate(get_list(resources, "claims", path)):
        p = join(join(path, "claims"), i)
        raw = as_map(item, p)
        out.append(ContainerClaim(name=get_str(raw, "name", p), request=get_str(raw, "request", p)))
    return tuple(out)


# -- the resource-claim controller's naming --------------------------------------------


def claim_generate_name(pod_name: str, pod_claim_name: str) -> str:
    """The ``generateName`` of a claim made from a template: ``<pod>-<claim>-``; when
    longer than 57 characters, both names are cut in proportion to their lengths and
    joined by one hyphen (upstream then leaves out the trailing hyphen, and so do we)."""
    name = f"{pod_name}-{pod_claim_name}-"
    if len(name) > _MAX_BASE_LEN:
        total = len(name)
        name = (
            pod_name[: len(pod_name) * _MAX_BASE_LEN // total]
            + "-"
            + pod_claim_name[: len(pod_claim_name) * _MAX_BASE_LEN // total]
        )
    return name


class PodIdentity(Protocol):
    """What :func:`claim_from_template` reads of a typed pod (``objects.pod.Pod``)."""

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def uid(self) -> str: ...


def claim_from_template(
    pod: Mapping[str, Any] | PodIdentity,
    pod_claim_name: str,
    template: Mapping[str, Any] | ResourceClaimTemplate,
) -> dict[str, Any]:
    """The ResourceClaim the resource-claim controller creates for the pod's entry
    ``pod_claim_name`` from ``template`` (raw or typed): in the pod's namespace,
    ``generateName`` as :func:`claim_generate_name`, the template's labels and
    annotations plus the pod-claim-name annotation, a controller owner reference to the
    pod (blockOwnerDeletion), and the template's ``spec.spec`` as its spec. ``pod`` is a
    raw pod or a typed one."""
    if isinstance(pod, Mapping):
        pod_meta = as_map(pod.get("metadata"), "metadata")
        pod_name = str(pod_meta.get("name", ""))
        namespace = str(pod_meta.get("namespace") or "default")
        uid = str(pod_meta.get("uid", ""))
    else:
        pod_name, namespace, uid = pod.name, pod.namespace, pod.uid
    if isinstance(template, ResourceClaimTemplate):
        labels, annotations = dict(template.labels), dict(template.annotations)
        claim_spec: Mapping[str, Any] = template.claim_spec
    else:
        tspec = as_map(template.get("spec"), "spec")
        tmeta = as_map(tspec.get("metadata"), "spec.metadata")
        labels = {str(k): str(v) for k, v in as_map(tmeta.get("labels"), "").items()}
        annotations = {str(k): str(v) for k, v in as_map(tmeta.get("annotations"), "").items()}
        claim_spec = as_map(tspec.get("spec"), "spec.spec")
    annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
    meta: dict[str, Any] = {
        "generateName": claim_generate_name(pod_name, pod_claim_name),
        "namespace": namespace,
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod_name,
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "annotations": annotations,
    }
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": _deep_copy(claim_spec),
    }


def _deep_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_deep_copy(v) for v in value]
    return value


def find_pod_claim(
    pod_name: str, pod_uid: str, pod_claim_name: str, claims: Iterable[ResourceClaim]
) -> ResourceClaim | None:
    """The claim already made for the pod's entry (``findPodResourceClaim``): one the
    pod controls whose pod-claim-name annotation is the entry's, or, without the
    annotation, one named ``<pod>-<entry>`` (made by Kubernetes <= 1.27)."""
    legacy = f"{pod_name}-{pod_claim_name}"
    for claim in claims:
        if not claim.is_controlled_by(pod_uid):
            continue
        annotated = claim.annotations.get(POD_CLAIM_NAME_ANNOTATION)
        if annotated is not None and annotated != pod_claim_name:
            continue
        if annotated is None and claim.name != legacy:
            continue
        return claim
    return None


class ClaimNameError(ObjectError):
    """A pod entry whose claim cannot be named yet; the message is upstream's."""

    def __init__(self, message: str, not_created: bool) -> None:
        super().__init__("", message)
        #: True for ``ErrClaimNotFound`` (the controller has not made it yet).
        self.not_created = not_created


@dataclass(frozen=True, slots=True)
class ClaimName:
    """What a pod entry refers to: a claim name (None: no claim is needed for the
    entry), and whether the claim must be checked to be owned by the pod (it was made
    from a template)."""

    name: str | None
    must_check_owner: bool


def resolve_claim_name(
    namespace: str,
    pod_name: str,
    pod_claim: PodResourceClaim,
    statuses: Mapping[str, str | None],
) -> ClaimName:
    """``resourceclaim.Name``: the claim a pod entry names; for a template, the claim the
    controller recorded in ``status.resourceClaimStatuses``. Raises
    :class:`ClaimNameError` (``pod "ns/name": ResourceClaim not created yet``)."""
    if pod_claim.resource_claim_name is not None:
        return ClaimName(pod_claim.resource_claim_name, False)
    if pod_claim.resource_claim_template_name is not None:
        if pod_claim.name in statuses:
            return ClaimName(statuses[pod_claim.name], True)
        raise ClaimNameError(f'pod "{namespace}/{pod_name}": {ERR_CLAIM_NOT_FOUND}', True)
    raise ClaimNameError(
        f'pod "{namespace}/{pod_name}", spec.resourceClaim "{pod_claim.name}": '
        f"{ERR_API_UNSUPPORTED}",
        False,
    )


def pod_claims_from_raw(
    pod: Mapping[str, Any],
) -> tuple[tuple[PodResourceClaim, ...], dict[str, str | None]]:
    """A raw pod's ``spec.resourceClaims`` and ``status.resourceClaimStatuses``."""
    spec = as_map(pod.get("spec"), "spec")
    status = as_map(pod.get("status"), "status")
    return decode_pod_resource_claims(spec), decode_resource_claim_statuses(status)


def claim_names(
    namespace: str,
    pod_name: str,
    pod_claims: Sequence[PodResourceClaim],
    statuses: Mapping[str, str | None],
) -> list[str]:
    """Every claim name the pod uses, in ``spec.resourceClaims`` order (entries that
    need no claim left out). Raises :class:`ClaimNameError` as
    :func:`resolve_claim_name`."""
    out = []
    for pc in pod_claims:
        resolved = resolve_claim_name(namespace, pod_name, pc, statuses)
        if resolved.name is not None:
            out.append(resolved.name)
    return out
