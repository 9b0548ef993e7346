"""Status bodies exactly as kube-apiserver's ``apimachinery/pkg/api/errors/errors.go`` builds
them, and the rule that the API server imports nothing of ours but ``objects``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kubesched.apiserver import errors

FAILURE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}

CASES = [
    pytest.param(
        errors.not_found("pods", "x"),
        {
            "message": 'pods "x" not found',
            "reason": "NotFound",
            "details": {"name": "x", "kind": "pods"},
            "code": 404,
        },
        id="not-found-core",
    ),
    pytest.param(
        errors.not_found("leases", "l", "coordination.k8s.io"),
        {
            "message": 'leases.coordination.k8s.io "l" not found',
            "reason": "NotFound",
            "details": {"name": "l", "group": "coordination.k8s.io", "kind": "leases"},
            "code": 404,
        },
        id="not-found-grouped",
    ),
    pytest.param(
        errors.already_exists("pods", "x"),
        {
            "message": 'pods "x" already exists',
            "reason": "AlreadyExists",
            "details": {"name": "x", "kind": "pods"},
            "code": 409,
        },
        id="already-exists",
    ),
    pytest.param(
        errors.stale_conflict("pods", "x"),
        {
            "message": 'Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes to the latest version and try again',
            "reason": "Conflict",
            "details": {"name": "x", "kind": "pods"},
            "code": 409,
        },
        id="conflict-stale-version",
    ),
    pytest.param(
        errors.invalid(
            "Pod",
            "x",
            [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value",
                    "field": "spec.containers",
                }
            ],
        ),
        {
            "message": 'Pod "x" is invalid: spec.containers: Required value',
            "reason": "Invalid",
            "details": {
                "name": "x",
                "kind": "Pod",
                "causes": [
                    {
                        "reason": "FieldValueRequired",
                        "message": "Required value",
                        "field": "spec.containers",
                    }
                ],
            },
            "code": 422,
        },
        id="invalid-one-cause",
    ),
    pytest.param(
        errors.invalid(
            "Pod",
            "x",
            [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "a"},
                {"reason": "FieldValueInvalid", "message": "Invalid value: 1", "field": "b"},
            ],
        ),
        {
            "message": 'Pod "x" is invalid: [a: Required value, b: Invalid value: 1]',
            "reason": "Invalid",
            "details": {
                "name": "x",
                "kind": "Pod",
                "causes": [
                    {"reason": "FieldValueRequired", "message": "Required value", "field": "a"},
                    {"reason": "FieldValueInvalid", "message": "Invalid value: 1", "field": "b"},
                ],
            },
            "code": 422,
        },
        id="invalid-causes-aggregated",
    ),
    pytest.param(
        errors.bad_request("nope"),
        {"message": "nope", "reason": "BadRequest", "code": 400},
        id="bad-request",
    ),
    pytest.param(
        errors.forbidden("pods", "x", "no priority class"),
        {
            "message": 'pods "x" is forbidden: no priority class',
            "reason": "Forbidden",
            "details": {"name": "x", "kind": "pods"},
            "code": 403,
        },
        id="forbidden-named",
    ),
    pytest.param(
        errors.forbidden("pods", "", "denied"),
        {
            "message": "pods is forbidden: denied",
            "reason": "Forbidden",
            "details": {"kind": "pods"},
            "code": 403,
        },
        id="forbidden-unnamed",
    ),
    pytest.param(
        errors.gone("gone"), {"message": "gone", "reason": "Gone", "code": 410}, id="gone"
    ),
    pytest.param(
        errors.too_old_resource_version(5, 9),
        {"message": "too old resource version: 5 (9)", "reason": "Expired", "code": 410},
        id="expired",
    ),
    pytest.param(
        errors.method_not_supported("bindings", "get"),
        {
            "message": 'get is not supported on resources of kind "bindings"',
            "reason": "MethodNotAllowed",
            "details": {"kind": "bindings"},
            "code": 405,
        },
        id="method-not-allowed",
    ),
    pytest.param(
        errors.unsupported_media_type(),
        {
            "message": "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json",
            "reason": "UnsupportedMediaType",
            "code": 415,
        },
        id="unsupported-media-type",
    ),
    pytest.param(
        errors.too_many_requests("Cannot evict pod", 10),
        {
            "message": "Cannot evict pod",
            "reason": "TooManyRequests",
            "details": {"retryAfterSeconds": 10},
            "code": 429,
        },
        id="too-many-requests",
    ),
]


@pytest.mark.parametrize(("error", "expected"), CASES)
def test_status_bodies(error, expected):
    assert error.status == {**FAILURE, **expected}
    assert error.code == expected["code"]
    assert error.reason == expected["reason"]
    assert str(error) == expected["message"]


def test_success_body():
    assert errors.success(201) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }


def test_apiserver_imports_only_objects_of_ours():
    package = Path(errors.__file__).parent
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("kubesched")
            ):
                assert node.module.startswith(("kubesched.apiserver", "kubesched.objects")), (
                    f"{module.name} imports {node.module}"
                )
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("kubesched") or alias.name.startswith(
                        ("kubesched.apiserver", "kubesched.objects")
                    ), module.name
