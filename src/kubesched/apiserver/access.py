"""The self-reviews clients ask of any API server: ``SelfSubjectAccessReview`` and
``SelfSubjectRulesReview`` (authorization.k8s.io/v1, ``kubectl auth can-i [--list]``) and
``SelfSubjectReview`` (authentication.k8s.io/v1, ``kubectl auth whoami``).

This server has no roles: a request that gets past authentication (:mod:`.auth`) may do
anything, as kube-apiserver with ``--authorization-mode=AlwaysAllow``. So every access
review is allowed, with no reason (AlwaysAllow gives none), and the rules review lists
AlwaysAllow's rules: every verb on every resource and every non-resource URL. The user is
``kubesched-admin`` (groups ``system:masters``, ``system:authenticated``) for a request
with the server's token, and ``system:anonymous`` when the server runs without one.

The reviews are not stored: a create answers 201 with the review and its status, as
upstream's REST storage does. Bad specs get upstream's 422.
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.auth import UserInfo
from kubesched.apiserver.resources import (
    SELF_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_REVIEWS,
    SELF_SUBJECT_RULES_REVIEWS,
    Resource,
)

__all__ = ["REVIEWS", "review"]

#: The create-only resources this module answers.
REVIEWS = frozenset({SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, SELF_SUBJECT_REVIEWS})

_AUTHZ = "authorization.k8s.io"


def review(res: Resource, body: Any, user: UserInfo) -> dict[str, Any]:
    """The answer to creating the review ``body`` of kind ``res`` as ``user``."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of a {res.kind} must be a JSON object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if (kind, api_version) != (res.kind, res.group_version):
        raise errors.bad_request(
            f'the body must be a {res.kind} of apiVersion "{res.group_version}", not '
            f"kind {_show(kind)} of apiVersion {_show(api_version)}"
        )
    spec = body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise errors.bad_request(f"{res.kind}.spec must be an object, not {_show(spec)}")
    answer: dict[str, Any] = {
        "kind": res.kind,
        "apiVersion": res.group_version,
        "metadata": {"creationTimestamp": None},
    }
    if res.kind == "SelfSubjectReview":
        info: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        answer["status"] = {"userInfo": info}
        return answer
    answer["spec"] = spec
    if res.kind == "SelfSubjectAccessReview":
        _validate_access_spec(spec)
        answer["status"] = {"allowed": True}
    else:  # SelfSubjectRulesReview
        answer["status"] = {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    return answer


def _validate_access_spec(spec: dict[str, Any]) -> None:
    # Upstream's ValidateSelfSubjectAccessReviewSpec: exactly one kind of attributes.
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    causes: list[errors.StatusCause] = []
    if resource is not None and non_resource is not None:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "object": cannot be specified in combination '
                "with resourceAttributes",
                "field": "spec.nonResourceAttributes",
            }
        )
    if resource is None and non_resource is None:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "null": exactly one of nonResourceAttributes or '
                "resourceAttributes must be specified",
                "field": "spec.resourceAttributes",
            }
        )
    for name, value in (("resourceAttributes", resource), ("nonResourceAttributes", non_resource)):
        if value is not None and not isinstance(value, dict):
            raise errors.bad_request(f"spec.{name} must be an object, not {_show(value)}")
    if causes:
        raise errors.invalid("SelfSubjectAccessReview", "", causes, _AUTHZ)


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else type(value).__name__
