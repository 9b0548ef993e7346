"""Bearer-token authentication (``start_apiserver(token=...)``, ``kubesched apiserver
--token``): kube-apiserver's 401 Status with a wrong token, RBAC's 403 for
``system:anonymous`` without one, the public health and version paths open to anonymous
requests, and the written kubeconfig used as is
by the ``kubernetes`` client and our own client."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import kubernetes
import pytest

from kubesched.apiserver.auth import bearer_token
from kubesched.apiserver.runner import start_apiserver
from kubesched.cli.apiserver import _token, build_parser, main
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.errors import Unauthorized
from kubesched.kube.resources import NAMESPACES

TOKEN = "kubesched-test-token-0123456789"
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("auth") / "kubeconfig"
    with start_apiserver(kubeconfig_path=path, token=TOKEN) as handle:
        yield handle


def _get(server, path, authorization=None):
    request = urllib.request.Request(server.url + path)
    if authorization is not None:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _forbidden(message, **details):
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


ANON = 'User "system:anonymous" cannot'


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (
            "/api/v1/namespaces",
            _forbidden(
                f'namespaces is forbidden: {ANON} list resource "namespaces" in API group ""'
                " at the cluster scope",
                kind="namespaces",
            ),
        ),
        (
            "/api/v1/pods?watch=true",
            _forbidden(
                f'pods is forbidden: {ANON} watch resource "pods" in API group ""'
                " at the cluster scope",
                kind="pods",
            ),
        ),
        (
            "/api/v1/namespaces/default",
            _forbidden(
                f'namespaces "default" is forbidden: {ANON} get resource "namespaces" in API'
                ' group "" in the namespace "default"',
                name="default",
                kind="namespaces",
            ),
        ),
        (
            "/api/v1/namespaces/team-a/pods/web-1/log",
            _forbidden(
                f'pods "web-1" is forbidden: {ANON} get resource "pods/log" in API group ""'
                ' in the namespace "team-a"',
                name="web-1",
                kind="pods",
            ),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            _forbidden(
                f'leases.coordination.k8s.io is forbidden: {ANON} list resource "leases" in'
                ' API group "coordination.k8s.io" in the namespace "kube-system"',
                group="coordination.k8s.io",
                kind="leases",
            ),
        ),
        ("/api", _forbidden(f'forbidden: {ANON} get path "/api"')),
        ("/apis/apps/v1", _forbidden(f'forbidden: {ANON} get path "/apis/apps/v1"')),
        ("/openapi/v3", _forbidden(f'forbidden: {ANON} get path "/openapi/v3"')),
        ("/readyz/ping", _forbidden(f'forbidden: {ANON} get path "/readyz/ping"')),
    ],
)
def test_an_anonymous_request_gets_the_403_rbac_gives_system_anonymous(server, path, status):
    code, body = _get(server, path)
    assert (code, json.loads(body)) == (403, status)


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwYXNz", "Bearer ", "Bearer"])
def test_another_scheme_or_an_empty_bearer_token_is_anonymous(server, authorization):
    code, body = _get(server, "/api/v1/namespaces", authorization)
    assert code == 403
    assert json.loads(body)["message"].startswith("namespaces is forbidden:")


def test_anonymous_writes_are_refused_with_their_verb(server):
    request = urllib.request.Request(
        server.url + "/api/v1/namespaces/default/pods",
        data=b"{}",
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 403
    assert f'{ANON} create resource "pods"' in json.loads(caught.value.read())["message"]
    for method, verb in (("DELETE", "deletecollection"), ("PATCH", "patch"), ("PUT", "update")):
        target = "/api/v1/namespaces/default/pods" + ("" if method == "DELETE" else "/p")
        request = urllib.request.Request(server.url + target, data=b"{}", method=method)
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        assert f"{ANON} {verb} resource" in json.loads(caught.value.read())["message"]


@pytest.mark.parametrize(
    "authorization", [f"Bearer {TOKEN}x", "Bearer wrong", f"Bearer {TOKEN[:-1]}"]
)
def test_a_wrong_token_is_refused(server, authorization):
    code, body = _get(server, "/api/v1/namespaces", authorization)
    assert (code, json.loads(body)) == (401, UNAUTHORIZED)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_right_token_is_let_through_whatever_the_case_of_the_scheme(server, scheme):
    code, body = _get(server, "/api/v1/namespaces", f"{scheme} {TOKEN}")
    assert code == 200
    assert json.loads(body)["kind"] == "NamespaceList"


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"])
def test_public_info_paths_are_open_to_anonymous_requests(server, path):
    for authorization in (None, "Basic dXNlcjpwYXNz"):
        code, body = _get(server, path, authorization)
        assert code == 200, (path, authorization, body)
    assert _get(server, path, f"Bearer {TOKEN}")[0] == 200


def test_a_wrong_token_is_refused_even_on_public_paths(server):
    # Upstream fails a bearer token it cannot verify before it would fall back to anonymous.
    code, body = _get(server, "/healthz", "Bearer wrong")
    assert (code, json.loads(body)) == (401, UNAUTHORIZED)


def test_paths_below_the_public_ones_need_the_token(server):
    assert _get(server, "/readyz/ping")[0] == 403
    assert _get(server, "/readyz/ping", f"Bearer {TOKEN}") == (200, "ok")


def test_health_endpoints_answer_as_kube_apiserver(server):
    assert _get(server, "/healthz") == (200, "ok")
    assert _get(server, "/livez?verbose") == (200, "[+]ping ok\nlivez check passed\n")
    assert _get(server, "/readyz/nope", f"Bearer {TOKEN}")[0] == 404


def test_bearer_token_parsing_follows_upstream():
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("  bearer abc  ") == "abc"
    assert bearer_token("Bearer  abc") is None  # an empty token between two spaces
    assert bearer_token("Bearer") is None
    assert bearer_token("Basic abc") is None
    assert bearer_token(None) is None


def test_the_kubeconfig_carries_the_token_and_is_private(server):
    config = json.loads(server.kubeconfig_path.read_text())
    assert config["users"][0]["user"] == {"token": TOKEN}
    assert server.kubeconfig_path.stat().st_mode & 0o077 == 0


def test_kubernetes_client_uses_the_kubeconfig_unchanged(server):
    api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
    try:
        names = [ns.metadata.name for ns in kubernetes.client.CoreV1Api(api).list_namespace().items]
        assert "kube-system" in names
    finally:
        api.close()
    anonymous = kubernetes.client.Configuration()
    anonymous.host = server.url
    with (
        kubernetes.client.ApiClient(anonymous) as bare,
        pytest.raises(kubernetes.client.ApiException) as refused,
    ):
        kubernetes.client.CoreV1Api(bare).list_namespace()
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["reason"] == "Forbidden"


def test_kube_client_uses_the_kubeconfig_and_reports_401(server):
    config = load_kubeconfig([server.kubeconfig_path])

    async def names(cfg):
        async with Client(cfg) as client:
            return [ns["metadata"]["name"] for ns in (await client.list(NAMESPACES.raw)).items]

    assert "default" in asyncio.run(names(config))
    with pytest.raises(Unauthorized) as refused:
        asyncio.run(names(dataclasses.replace(config, token="wrong")))
    assert refused.value.status["message"] == "Unauthorized"


def test_cli_reads_the_token_from_a_file_and_keeps_it_out_of_its_output(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file\n")
    kubeconfig = tmp_path / "kc"
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "--port",
            "0",
            "--write-kubeconfig",
            str(kubeconfig),
            "--token-file",
            str(token_file),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening on http://" in proc.stdout.readline()
        startup = [proc.stdout.readline() for _ in range(2)]
        written = json.loads(kubeconfig.read_text())
        url = written["clusters"][0]["cluster"]["server"]
        assert written["users"][0]["user"] == {"token": "from-a-file"}
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "/api/v1/pods", timeout=5)
        assert refused.value.code == 403
        request = urllib.request.Request(url + "/api/v1/pods")
        request.add_header("Authorization", "Bearer from-a-file")
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "from-a-file" not in out  # a secret is not printed
    # kubectl would send the token only over TLS: the server says so.
    assert "add --tls to use kubectl with --token" in startup[1]


def test_a_bare_token_flag_makes_a_random_token():
    args = build_parser().parse_args(["--token", "--tls"])
    assert args.tls
    made = {_token(args.token, None) for _ in range(3)}
    assert len(made) == 3
    assert all(len(token) >= 32 for token in made)
    assert _token(build_parser().parse_args(["--token", "given"]).token, None) == "given"
    assert _token(None, None) == ""


def test_cli_refuses_an_empty_token_file(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert main(["--port", "0", "--token-file", str(empty)]) == 1
    assert f"--token-file {empty}: the first line holds no token" in capsys.readouterr().err
    assert main(["--port", "0", "--token-file", str(tmp_path / "missing")]) == 1
    assert "cannot read it" in capsys.readouterr().err
