"""Self-reviews (``kubectl auth can-i``, ``kubectl auth whoami``): the server has no
roles, so every access review is allowed (AlwaysAllow), the rules review lists every
verb on everything, and the user is the token's admin or ``system:anonymous``."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

from kubesched.apiserver.runner import start_apiserver

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None,
    reason="kubectl is not on PATH: install kubectl >= 1.27 to run the kubectl integration tests",
)
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
TOKEN = "access-test-token"


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("access") / "kubeconfig"
    with start_apiserver(kubeconfig_path=path) as handle:
        yield handle


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("access-token") / "kubeconfig"
    # TLS: kubectl sends no bearer token to a plain-HTTP server.
    with start_apiserver(kubeconfig_path=path, token=TOKEN, tls=True) as handle:
        yield handle


def kubectl(server, *args):
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(server.kubeconfig_path), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )


def post(server, path, body, token=None, method="POST"):
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json"},
    )
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        # The server's CA is generated per run; these checks are about the answers.
        context = ssl._create_unverified_context() if server.url.startswith("https") else None
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def access_review(spec):
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": spec,
    }


@needs_kubectl
@pytest.mark.parametrize("fixture", ["open_server", "token_server"])
def test_kubectl_auth_can_i_says_yes(request, fixture):
    server = request.getfixturevalue(fixture)
    for args in (
        ("list", "pods"),
        ("create", "pods/binding", "-n", "kube-system"),
        ("get", "/healthz"),
    ):
        result = kubectl(server, "auth", "can-i", *args)
        assert (result.returncode, result.stdout.strip()) == (0, "yes"), result.stderr
    listed = kubectl(server, "auth", "can-i", "--list")
    assert listed.returncode == 0, listed.stderr
    assert "*.*" in listed.stdout and "[*]" in listed.stdout


@needs_kubectl
def test_kubectl_auth_whoami_names_the_user(token_server):
    result = kubectl(token_server, "auth", "whoami", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"]["userInfo"]["username"] == "kubesched-admin"


def test_an_access_review_is_answered_created_and_not_stored(open_server):
    spec = {"resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}}
    code, body = post(open_server, SSAR, access_review(spec))
    assert code == 201
    assert body == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": {"allowed": True},
    }
    code, status = post(open_server, SSAR, None, method="GET")
    assert (code, status["reason"]) == (405, "MethodNotAllowed")


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        (
            {},
            "spec.resourceAttributes",
            'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
            "must be specified",
        ),
        (
            {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x"}},
            "spec.nonResourceAttributes",
            'Invalid value: "object": cannot be specified in combination with resourceAttributes',
        ),
    ],
)
def test_an_access_review_needs_exactly_one_kind_of_attributes(open_server, spec, field, message):
    code, status = post(open_server, SSAR, access_review(spec))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        f'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: {field}: {message}'
    )


def test_a_review_of_another_kind_is_a_bad_request(open_server):
    code, status = post(open_server, SSAR, {"apiVersion": "v1", "kind": "Pod"})
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "SelfSubjectAccessReview" in status["message"]


def test_self_subject_review_names_the_tokens_user_and_anonymous(open_server, token_server):
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    code, body = post(token_server, path, review, token=TOKEN)
    assert code == 201
    assert body["status"]["userInfo"] == {
        "username": "kubesched-admin",
        "groups": ["system:masters", "system:authenticated"],
    }
    code, body = post(open_server, path, review)
    assert body["status"]["userInfo"]["username"] == "system:anonymous"
    # With a token configured, an anonymous review is refused as RBAC refuses it.
    code, status = post(token_server, path, review)
    assert (code, status["reason"]) == (403, "Forbidden")
