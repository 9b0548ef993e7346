"""Credentials at request time: bearer tokens (fixed, from a rotating file, or from an exec
plugin) and the TLS context (CA, client certificate).

An exec plugin (client.authentication.k8s.io ExecCredential) is run when a credential is
first needed, its answer cached until ``status.expirationTimestamp``, and run again after
that or after the server refused it with 401 (:meth:`Authenticator.invalidate`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import ssl
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kubesched.kube.config import ConnectionConfig, ExecConfig
from kubesched.kube.errors import ConfigError, CredentialError

__all__ = ["Authenticator", "ExecCredential", "run_exec_plugin"]

#: A token file is re-read at most this often (client-go: one minute).
TOKEN_FILE_REFRESH = 60.0
#: How long an exec plugin may run.
EXEC_TIMEOUT = 60.0


@dataclass(frozen=True)
class ExecCredential:
    """What an exec plugin answered: a token and/or a client certificate, and until when."""

    token: str = field(default="", repr=False)
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = field(default=None, repr=False)
    #: time.time() after which to run the plugin again (None: never expires).
    expires_at: float | None = None


async def run_exec_plugin(plugin: ExecConfig, server: str = "") -> ExecCredential:
    """Run ``plugin`` and parse its ExecCredential; :class:`CredentialError` says why not."""
    command = plugin.command
    if os.sep in command and not os.path.isabs(command):
        command = str(Path(plugin.base_dir) / command)
    spec: dict[str, object] = {"interactive": False}
    if plugin.provide_cluster_info:
        spec["cluster"] = {"server": server}
    info = {"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec}
    env = {**os.environ, **plugin.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
    hint = f" ({plugin.install_hint})" if plugin.install_hint else ""
    try:
        proc = await asyncio.create_subprocess_exec(
            command,
            *plugin.args,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), EXEC_TIMEOUT)
    except TimeoutError as exc:
        proc.kill()
        raise CredentialError(f"{plugin.source}: {command} ran over {EXEC_TIMEOUT:.0f}s") from exc
    except OSError as exc:
        raise CredentialError(f"{plugin.source}: cannot run {command}: {exc}{hint}") from exc
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip()[-500:]
        raise CredentialError(
            f"{plugin.source}: {command} exited with {proc.returncode}: {tail}{hint}"
        )
    return parse_exec_credential(out, plugin)


def parse_exec_credential(out: bytes, plugin: ExecConfig) -> ExecCredential:
    """Decode an ExecCredential printed by ``plugin`` (same apiVersion, status filled in)."""
    where = f"{plugin.source}: {plugin.command}"
    try:
        doc = json.loads(out)
    except ValueError as exc:
        raise CredentialError(f"{where} did not print JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
        raise CredentialError(f"{where} printed no ExecCredential")
    if doc.get("apiVersion") != plugin.api_version:
        raise CredentialError(
            f"{where} answered apiVersion {doc.get('apiVersion')!r}, not {plugin.api_version!r}"
        )
    status = doc.get("status")
    if not isinstance(status, dict):
        raise CredentialError(f"{where}: status is missing")
    token = status.get("token") or ""
    cert = status.get("clientCertificateData") or ""
    key = status.get("clientKeyData") or ""
    if not isinstance(token, str) or not isinstance(cert, str) or not isinstance(key, str):
        raise CredentialError(f"{where}: status.token/clientCertificateData must be strings")
    if bool(cert) != bool(key):
        raise CredentialError(f"{where}: clientCertificateData and clientKeyData go together")
    if not token and not cert:
        raise CredentialError(f"{where}: status has neither token nor client certificate")
    expires_at: float | None = None
    stamp = status.get("expirationTimestamp")
    if stamp:
        try:
            expires_at = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
        except ValueError as exc:
            raise CredentialError(
                f"{where}: expirationTimestamp {stamp!r} is not RFC 3339"
            ) from exc
    return ExecCredential(
        token=token,
        client_cert_data=cert.encode() if cert else None,
        client_key_data=key.encode() if key else None,
        expires_at=expires_at,
    )


class Authenticator:
    """Supplies the Authorization header for each request of one :class:`ConnectionConfig`."""

    def __init__(self, config: ConnectionConfig) -> None:
        self.config = config
        self._exec: ExecCredential | None = None
        self._exec_lock = asyncio.Lock()
        self._file_token = ""
        self._file_read_at = -TOKEN_FILE_REFRESH
        #: How many times the exec plugin has run (for tests and logs).
        self.exec_runs = 0

    async def exec_credential(self) -> ExecCredential | None:
        """The exec plugin's credential, from cache while it has not expired."""
        plugin = self.config.exec
        if plugin is None:
            return None
        async with self._exec_lock:
            cached = self._exec
            if cached is not None and (
                cached.expires_at is None or cached.expires_at > time.time()
            ):
                return cached
            self._exec = await run_exec_plugin(plugin, self.config.server)
            self.exec_runs += 1
            return self._exec

    def invalidate(self) -> None:
        """Forget cached credentials (after a 401) so that the next request fetches anew."""
        self._exec = None
        self._file_read_at = -TOKEN_FILE_REFRESH

    async def headers(self) -> dict[str, str]:
        """The Authorization header for the next request (empty if anonymous)."""
        cfg = self.config
        if cfg.token:
            return {"Authorization": f"Bearer {cfg.token}"}
        if cfg.token_file:
            return {"Authorization": f"Bearer {self._read_token_file()}"}
        credential = await self.exec_credential()
        if credential is not None and credential.token:
            return {"Authorization": f"Bearer {credential.token}"}
        if cfg.username:
            basic = base64.b64encode(f"{cfg.username}:{cfg.password}".encode()).decode()
            return {"Authorization": f"Basic {basic}"}
        return {}

    def _read_token_file(self) -> str:
        now = time.monotonic()
        if now - self._file_read_at >= TOKEN_FILE_REFRESH:
            path = self.config.token_file
            try:
                self._file_token = Path(path).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(path, "", f"cannot read the bearer token: {exc}") from exc
            self._file_read_at = now
        return self._file_token

    async def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for an https server (None for http): CA, client cert, checks."""
        cfg = self.config
        if not cfg.server.startswith("https://"):
            return None
        context = ssl.create_default_context()
        if cfg.insecure_skip_tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif cfg.ca_data:
            try:
                context.load_verify_locations(cadata=cfg.ca_data.decode("ascii", "replace"))
            except ssl.SSLError as exc:
                raise ConfigError(cfg.source, "certificate-authority", f"bad CA: {exc}") from exc
        cert, key = cfg.client_cert_data, cfg.client_key_data
        credential = await self.exec_credential()
        if credential is not None and credential.client_cert_data:
            cert, key = credential.client_cert_data, credential.client_key_data
        if cert is not None and key is not None:
            _load_cert_chain(context, cert, key, cfg.source)
        return context


def _load_cert_chain(context: ssl.SSLContext, cert: bytes, key: bytes, source: str) -> None:
    # ssl only loads certificates from files: write them to a private temporary directory.
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as tmp:
        cert_path, key_path = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_path.write_bytes(cert)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key)
        try:
            context.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise ConfigError(source, "client-certificate", f"bad certificate/key: {exc}") from exc
