"""HTTPS (``start_apiserver(tls=True)``, ``kubesched apiserver --tls``): a generated CA and
serving certificate, a kubeconfig with the CA and the token that kubectl, the
``kubernetes`` client and our own client use unchanged, the CA kept across a restart
with ``--data``, and a certificate of the user's own."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import ipaddress
import json
import shutil
import signal
import ssl
import subprocess
import sys
import urllib.request

import kubernetes
import pytest
from cryptography import x509

from kubesched.apiserver.runner import start_apiserver
from kubesched.apiserver.tls import TLSError, issue_serving_certificate
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.errors import ConnectionFailed
from kubesched.kube.resources import NAMESPACES

TOKEN = "tls-test-token"
KUBECTL = shutil.which("kubectl")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("tls") / "kubeconfig"
    with start_apiserver(kubeconfig_path=path, token=TOKEN, tls=True) as handle:
        yield handle


def _namespaces(config):
    async def names():
        async with Client(config) as client:
            return [ns["metadata"]["name"] for ns in (await client.list(NAMESPACES.raw)).items]

    return asyncio.run(names())


def _ca(kubeconfig_path):
    cluster = json.loads(kubeconfig_path.read_text())["clusters"][0]["cluster"]
    return base64.b64decode(cluster["certificate-authority-data"])


def test_the_kubeconfig_names_an_https_server_its_ca_and_token(server):
    config = json.loads(server.kubeconfig_path.read_text())
    assert server.url.startswith("https://127.0.0.1:")
    assert config["clusters"][0]["cluster"]["server"] == server.url
    assert _ca(server.kubeconfig_path) == server.ca_data
    assert config["users"][0]["user"] == {"token": TOKEN}


def test_the_serving_certificate_names_the_loopback_addresses(server):
    pem = ssl.get_server_certificate(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
    cert = x509.load_pem_x509_certificate(pem.encode())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert set(san.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    }
    ca = x509.load_pem_x509_certificate(server.ca_data)
    cert.verify_directly_issued_by(ca)


def test_a_client_that_does_not_trust_the_ca_cannot_connect(server):
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(server.url + "/healthz", timeout=5)
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    context = ssl.create_default_context(cadata=server.ca_data.decode())
    with urllib.request.urlopen(server.url + "/healthz", timeout=5, context=context) as ok:
        assert ok.read() == b"ok"
    # localhost is a name of the certificate too.
    localhost = server.url.replace("127.0.0.1", "localhost")
    with urllib.request.urlopen(localhost + "/livez", timeout=5, context=context) as ok:
        assert ok.read() == b"ok"


def test_kube_client_over_https_with_the_kubeconfig(server):
    config = load_kubeconfig([server.kubeconfig_path])
    assert "kube-system" in _namespaces(config)
    with pytest.raises(ConnectionFailed):
        _namespaces(dataclasses.replace(config, ca_data=None))


def test_kubernetes_client_over_https_with_the_kubeconfig(server):
    api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
    try:
        core = kubernetes.client.CoreV1Api(api)
        names = [ns.metadata.name for ns in core.list_namespace().items]
    finally:
        api.close()
    assert "kube-public" in names


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: install kubectl to run it")
def test_kubectl_over_https_with_the_kubeconfig(server):
    def kubectl(*args, stdin=None):
        return subprocess.run(
            [KUBECTL, "--kubeconfig", str(server.kubeconfig_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )

    manifest = "apiVersion: v1\nkind: Namespace\nmetadata: {name: over-tls}\n"
    created = kubectl("apply", "-f", "-", stdin=manifest)
    assert created.returncode == 0, created.stderr
    listed = kubectl("get", "namespaces", "-o", "name")
    assert "namespace/over-tls" in listed.stdout.split()
    bare = subprocess.run(
        [
            KUBECTL,
            "--server",
            server.url,
            "--insecure-skip-tls-verify",
            "--token",
            "wrong",
            "get",
            "pods",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bare.returncode != 0
    assert "Unauthorized" in bare.stderr


def test_a_restart_with_data_serves_the_same_ca(tmp_path):
    data = tmp_path / "cluster.db"
    first_kubeconfig = tmp_path / "first"
    with start_apiserver(kubeconfig_path=first_kubeconfig, data=data, tls=True) as first:
        ca = first.ca_data
        first_cert = ssl.get_server_certificate(("127.0.0.1", int(first.url.rsplit(":", 1)[1])))
    assert sorted(p.name for p in (tmp_path / "cluster.db.pki").iterdir()) == [
        "apiserver.crt",
        "apiserver.key",
        "ca.crt",
        "ca.key",
    ]
    assert (tmp_path / "cluster.db.pki" / "ca.key").stat().st_mode & 0o077 == 0
    with start_apiserver(kubeconfig_path=tmp_path / "second", data=data, tls=True) as second:
        assert second.ca_data == ca
        # A client holding the first kubeconfig keeps working (only the port moved).
        old = load_kubeconfig([first_kubeconfig])
        assert "default" in _namespaces(dataclasses.replace(old, server=second.url))
        second_cert = ssl.get_server_certificate(("127.0.0.1", int(second.url.rsplit(":", 1)[1])))
    assert second_cert != first_cert  # reissued from the same CA


def test_a_certificate_of_ones_own(tmp_path):
    issue_serving_certificate(["kubesched.test"], tmp_path / "pki")
    pki = tmp_path / "pki"
    with start_apiserver(
        kubeconfig_path=tmp_path / "kc",
        tls_cert=pki / "apiserver.crt",
        tls_key=pki / "apiserver.key",
        tls_ca=pki / "ca.crt",
    ) as server:
        assert server.ca_data == (pki / "ca.crt").read_bytes()
        assert "default" in _namespaces(load_kubeconfig([server.kubeconfig_path]))


def test_unusable_certificates_are_clear_errors(tmp_path):
    pki, other = tmp_path / "pki", tmp_path / "other"
    issue_serving_certificate([], pki)
    issue_serving_certificate([], other)
    with pytest.raises(TLSError, match="--tls-cert and --tls-key go together"):
        start_apiserver(tls_cert=pki / "apiserver.crt")
    with pytest.raises(TLSError, match=r"apiserver\.crt and .*other/apiserver\.key: .* pair"):
        start_apiserver(tls_cert=pki / "apiserver.crt", tls_key=other / "apiserver.key")
    with pytest.raises(TLSError, match=r"cannot read .*missing\.crt"):
        start_apiserver(tls_cert=tmp_path / "missing.crt", tls_key=pki / "apiserver.key")
    (other / "ca.key").write_bytes((pki / "ca.key").read_bytes())
    with pytest.raises(TLSError, match=r"ca\.key is not the key of .*ca\.crt"):
        issue_serving_certificate([], other)


def test_cli_serves_https_with_the_host_in_the_certificate(tmp_path):
    kubeconfig = tmp_path / "kc"
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "--port",
            "0",
            "--tls",
            "--token",
            TOKEN,
            "--host",
            "127.0.0.2",
            "--write-kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening on https://127.0.0.2:" in proc.stdout.readline()
        config = load_kubeconfig([kubeconfig])
        assert config.token == TOKEN
        assert "default" in _namespaces(config)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
