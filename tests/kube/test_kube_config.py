"""Connection settings: kubeconfig files (contexts, merging, certificates, tokens, exec
plugins) and in-cluster service-account config, with errors naming file and field."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml
from kube_helpers import run

from kubesched.kube import (
    ConfigError,
    CredentialError,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from kubesched.kube.auth import Authenticator


def kubeconfig(
    path: Path,
    clusters: dict[str, dict] | None = None,
    users: dict[str, dict] | None = None,
    contexts: dict[str, dict] | None = None,
    current: str = "",
) -> Path:
    """Write a kubeconfig from name → body maps."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": b} for n, b in (clusters or {}).items()],
        "users": [{"name": n, "user": b} for n, b in (users or {}).items()],
        "contexts": [{"name": n, "context": b} for n, b in (contexts or {}).items()],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_current_context_with_token_ca_data_and_namespace(tmp_path):
    path = kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "https://k8s:6443/", "certificate-authority-data": b64(b"CA")}},
        users={"u": {"token": "t0k"}},
        contexts={"ctx": {"cluster": "c", "user": "u", "namespace": "team"}},
        current="ctx",
    )
    config = load_kubeconfig([path])
    assert (config.server, config.ca_data, config.token, config.namespace) == (
        "https://k8s:6443",
        b"CA",
        "t0k",
        "team",
    )


def test_a_named_context_and_relative_certificate_files(tmp_path):
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.crt").write_bytes(b"CAFILE")
    (tmp_path / "certs" / "me.crt").write_bytes(b"CERT")
    (tmp_path / "certs" / "me.key").write_bytes(b"KEY")
    path = kubeconfig(
        tmp_path / "config",
        clusters={
            "c": {"server": "https://a", "certificate-authority": "certs/ca.crt"},
            "d": {"server": "https://b", "insecure-skip-tls-verify": True},
        },
        users={"u": {"client-certificate": "certs/me.crt", "client-key": "certs/me.key"}},
        contexts={"one": {"cluster": "c", "user": "u"}, "two": {"cluster": "d", "user": "u"}},
        current="one",
    )
    one = load_kubeconfig([path])
    assert (one.ca_data, one.client_cert_data, one.client_key_data) == (b"CAFILE", b"CERT", b"KEY")
    two = load_kubeconfig([path], context="two")
    assert two.server == "https://b" and two.insecure_skip_tls_verify and two.namespace == "default"


def test_kubeconfig_env_merges_files_first_wins(tmp_path):
    first = kubeconfig(
        tmp_path / "a",
        clusters={"shared": {"server": "https://first"}},
        users={"u": {"token": "from-a"}},
        contexts={"ctx": {"cluster": "shared", "user": "u"}},
    )
    second = kubeconfig(
        tmp_path / "b",
        clusters={"shared": {"server": "https://second"}, "only-b": {"server": "https://b"}},
        users={"u": {"token": "from-b"}},
        contexts={"ctx": {"cluster": "only-b", "user": "u"}},
        current="ctx",
    )
    env = {"KUBECONFIG": os.pathsep.join([str(first), str(tmp_path / "missing"), str(second)])}
    config = load_config(env=env)
    # current-context only in b; the context, cluster and user named "ctx"/"u" from a.
    assert (config.server, config.token) == ("https://first", "from-a")


def test_master_overrides_the_server_and_stands_alone(tmp_path):
    alone = load_config(master="http://127.0.0.1:8001/", env={"HOME": str(tmp_path)})
    assert alone.server == "http://127.0.0.1:8001" and alone.token == ""


CONFIG_ERRORS = [
    ("missing-current-context", {"current-context": ""}, None, "current-context: not set"),
    (
        "unknown-context",
        {"current-context": "nope"},
        None,
        "current-context: context 'nope' not found",
    ),
    (
        "unknown-named-context",
        {"contexts": [{"name": "x", "context": {"cluster": "c"}}]},
        "y",
        "contexts: context 'y' not found",
    ),
    (
        "unknown-cluster",
        {"contexts": [{"name": "x", "context": {"cluster": "c"}}], "current-context": "x"},
        None,
        "contexts[0].context.cluster: cluster 'c' not found",
    ),
    (
        "no-server",
        {
            "clusters": [{"name": "c", "cluster": {}}],
            "contexts": [{"name": "x", "context": {"cluster": "c"}}],
            "current-context": "x",
        },
        None,
        "clusters[0].cluster.server: required",
    ),
    (
        "bad-base64",
        {
            "clusters": [
                {
                    "name": "c",
                    "cluster": {"server": "https://a", "certificate-authority-data": "!!"},
                }
            ],
            "contexts": [{"name": "x", "context": {"cluster": "c"}}],
            "current-context": "x",
        },
        None,
        "certificate-authority-data: not valid base64",
    ),
    (
        "key-without-cert",
        {
            "clusters": [{"name": "c", "cluster": {"server": "https://a"}}],
            "users": [{"name": "u", "user": {"client-key-data": "S0VZ"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        },
        None,
        "users[0].user.client-certificate: required",
    ),
    (
        "bad-exec-version",
        {
            "clusters": [{"name": "c", "cluster": {"server": "https://a"}}],
            "users": [{"name": "u", "user": {"exec": {"command": "x", "apiVersion": "v9"}}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        },
        None,
        "users[0].user.exec.apiVersion: 'v9' is not one of",
    ),
]


@pytest.mark.parametrize(
    ("case", "doc", "context", "expected"), CONFIG_ERRORS, ids=[c[0] for c in CONFIG_ERRORS]
)
def test_errors_name_the_file_and_the_field(tmp_path, case, doc, context, expected):
    path = tmp_path / "config"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as caught:
        load_kubeconfig([path], context)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)


def test_a_missing_file_and_bad_yaml_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_kubeconfig([tmp_path / "nope"])
    bad = tmp_path / "bad"
    bad.write_text("clusters: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_kubeconfig([bad])


def test_in_cluster_service_account(tmp_path):
    (tmp_path / "token").write_text("sa-token-1\n")
    (tmp_path / "ca.crt").write_bytes(b"CLUSTERCA")
    (tmp_path / "namespace").write_text("kube-system")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = load_incluster_config(tmp_path, env=env)
    assert (config.server, config.ca_data, config.namespace) == (
        "https://10.0.0.1:443",
        b"CLUSTERCA",
        "kube-system",
    )
    headers = run(Authenticator(config).headers())
    assert headers == {"Authorization": "Bearer sa-token-1"}
    ipv6 = load_incluster_config(tmp_path, env={**env, "KUBERNETES_SERVICE_HOST": "fd00::1"})
    assert ipv6.server == "https://[fd00::1]:443"


def test_in_cluster_errors(tmp_path):
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        load_incluster_config(tmp_path, env={})
    env = {"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"}
    with pytest.raises(ConfigError, match="token is missing"):
        load_incluster_config(tmp_path, env=env)


PLUGIN = """
import json, os, sys, time
count = {count!r}
with open(count, "a") as f:
    f.write("x")
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
assert info["spec"]["interactive"] is False
assert os.environ["FROM_KUBECONFIG"] == "yes"
runs = len(open(count).read())
stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + {ttl}))
print(json.dumps({{
    "apiVersion": "client.authentication.k8s.io/v1",
    "kind": "ExecCredential",
    "status": {{"token": "exec-token-%d" % runs, "expirationTimestamp": stamp}},
}}))
"""


def _exec_kubeconfig(tmp_path: Path, script: str) -> Path:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(script)
    return kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "http://127.0.0.1:1"}},
        users={
            "u": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": sys.executable,
                    "args": [str(plugin)],
                    "env": [{"name": "FROM_KUBECONFIG", "value": "yes"}],
                }
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )


def test_exec_plugin_token_is_cached_until_it_expires(tmp_path):
    count = tmp_path / "count"
    path = _exec_kubeconfig(tmp_path, PLUGIN.format(count=str(count), ttl=2))
    auth = Authenticator(load_kubeconfig([path]))

    async def body():
        first = await auth.headers()
        again = await auth.headers()
        auth._exec = auth._exec.__class__(token=auth._exec.token, expires_at=time.time() - 1)
        expired = await auth.headers()
        return first, again, expired

    first, again, expired = run(body())
    assert first == again == {"Authorization": "Bearer exec-token-1"}
    assert expired == {"Authorization": "Bearer exec-token-2"}
    assert auth.exec_runs == 2 and count.read_text() == "xx"


EXEC_FAILURES = [
    ("fails", "import sys; print('boom', file=sys.stderr); sys.exit(3)", "exited with 3: boom"),
    ("not-json", "print('hello')", "did not print JSON"),
    (
        "wrong-version",
        "import json; print(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1beta1', 'status': {'token': 't'}}))",
        "answered apiVersion",
    ),
    (
        "no-credential",
        "import json; print(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1', 'status': {}}))",
        "neither token nor client certificate",
    ),
]


@pytest.mark.parametrize(
    ("case", "script", "expected"), EXEC_FAILURES, ids=[c[0] for c in EXEC_FAILURES]
)
def test_exec_plugin_failures_are_credential_errors(tmp_path, case, script, expected):
    auth = Authenticator(load_kubeconfig([_exec_kubeconfig(tmp_path, script)]))
    with pytest.raises(CredentialError, match=expected):
        run(auth.headers())


def test_exec_plugin_client_certificate(tmp_path):
    script = (
        "import json; print(json.dumps({'kind': 'ExecCredential', 'apiVersion': "
        "'client.authentication.k8s.io/v1', 'status': {'clientCertificateData': 'CERT', "
        "'clientKeyData': 'KEY'}}))"
    )
    auth = Authenticator(load_kubeconfig([_exec_kubeconfig(tmp_path, script)]))
    credential = run(auth.exec_credential())
    assert (credential.client_cert_data, credential.client_key_data, credential.token) == (
        b"CERT",
        b"KEY",
        "",
    )
    assert credential.expires_at is None


def test_secrets_stay_out_of_repr(tmp_path):
    path = kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "https://a"}},
        users={
            "u": {
                "token": "hunter2",
                "client-certificate-data": b64(b"C"),
                "client-key-data": b64(b"PRIVATE"),
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    text = repr(load_kubeconfig([path]))
    assert "hunter2" not in text and "PRIVATE" not in text and "https://a" in text
