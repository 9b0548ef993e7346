"""Authentication on the wire: TLS with a cluster CA and client certificates, and an
exec plugin's token refreshed after a 401. The embedded API server speaks plain HTTP
without authentication, so these use small aiohttp servers of our own."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from kube_helpers import run

from kubesched.kube import Client, ConnectionFailed, Unauthorized, load_kubeconfig
from kubesched.kube.resources import NAMESPACES

NAMESPACE = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "default"}}


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it."""
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "1", "-subj", "/CN=test-ca", cwd=d)  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for name, ext in (("server", ["-extfile", "san.ext"]), ("client", [])):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", f"/CN={name}", cwd=d)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "1", *ext, cwd=d)  # fmt: skip
    return d


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _write_kubeconfig(path: Path, server: str, cluster: dict, user: dict) -> Path:
    doc = {
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


async def _serve(handler, ssl_context=None) -> tuple[web.AppRunner, int]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context).start()
    return runner, runner.addresses[0][1]


def test_tls_with_cluster_ca_and_client_certificate(pki, tmp_path):
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki / "ca.crt"))
    server_ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    peers: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        cert = request.transport.get_extra_info("peercert")
        peers.append(dict(x[0] for x in cert["subject"])["commonName"])
        return web.json_response(NAMESPACE)

    async def body():
        runner, port = await _serve(handler, server_ctx)
        url = f"https://127.0.0.1:{port}"
        good = _write_kubeconfig(
            tmp_path / "good",
            url,
            {"certificate-authority-data": _b64(pki / "ca.crt")},
            {
                "client-certificate": str(pki / "client.crt"),
                "client-key-data": _b64(pki / "client.key"),
            },
        )
        no_ca = _write_kubeconfig(
            tmp_path / "no-ca",
            url,
            {},
            {"client-certificate": str(pki / "client.crt"), "client-key": str(pki / "client.key")},
        )
        try:
            async with Client(load_kubeconfig([good])) as client:
                got = await client.get(NAMESPACES, "default")
            with pytest.raises(ConnectionFailed) as untrusted:
                async with Client(load_kubeconfig([no_ca])) as client:
                    await client.get(NAMESPACES, "default")
            return got, untrusted.value
        finally:
            await runner.cleanup()

    got, untrusted = run(body())
    assert got.name == "default" and peers == ["client"]
    assert "certificate" in str(untrusted.__cause__).lower()


PLUGIN = """
import json
count = {count!r}
with open(count, "a") as f:
    f.write("x")
runs = len(open(count).read())
print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {{"token": "token-%d" % runs}}}}))
"""


def test_a_401_reruns_the_exec_plugin_and_retries_once(tmp_path):
    count = tmp_path / "count"
    (tmp_path / "plugin.py").write_text(PLUGIN.format(count=str(count)))
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        seen.append(auth)
        if auth != "Bearer token-2" and request.path.endswith("/default"):
            status = {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}
            return web.json_response(status, status=401)
        if request.path.endswith("/never"):
            status = {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}
            return web.json_response(status, status=401)
        return web.json_response(NAMESPACE)

    async def body():
        runner, port = await _serve(handler)
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                         "args": [str(tmp_path / "plugin.py")]}}  # fmt: skip
        path = _write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", {}, user)
        try:
            async with Client(load_kubeconfig([path])) as client:
                got = await client.get(NAMESPACES, "default")
                with pytest.raises(Unauthorized) as refused:
                    await client.get(NAMESPACES, "never")
                return got, refused.value
        finally:
            await runner.cleanup()

    got, refused = run(body())
    assert got.name == "default"
    assert seen[:2] == ["Bearer token-1", "Bearer token-2"]
    assert refused.code == 401 and len(seen) == 4  # retried once, then given up


def test_the_public_surface_is_sorted_and_complete():
    import kubesched.kube as kube

    assert kube.__all__ == sorted(kube.__all__)
    assert all(hasattr(kube, name) for name in kube.__all__)
