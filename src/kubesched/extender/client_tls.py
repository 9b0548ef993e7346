"""TLS for calls to extenders, as upstream's ``makeTransport`` builds it.

kube-scheduler passes an extender's ``tlsConfig`` to client-go's ``TLSConfigFor``: a CA
(file or PEM data) to verify the extender with, a client certificate, ``insecure`` to
skip verification, ``serverName`` to verify against; and with ``enableHTTPS`` but no
CA, verification is skipped. The URL's scheme alone decides whether TLS is used.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from kubesched.config.types import Extender, TLSConfig
from kubesched.extender.errors import ExtenderError

__all__ = ["ExtenderConfigError", "make_ssl_context"]


class ExtenderConfigError(ExtenderError, ValueError):
    """An extender configuration the client cannot use (e.g. unreadable TLS files)."""


def make_ssl_context(config: Extender) -> ssl.SSLContext | None:
    """TLS for the extender, as upstream's makeTransport: ``None`` (aiohttp's default,
    the system roots for ``https://``) when no TLS setting is given; with enableHTTPS
    and no CA, the server's certificate is not verified."""
    tls = config.tls_config or TLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (config.enable_https and not has_ca)
    has_cert = bool(tls.cert_file or tls.cert_data or tls.key_file or tls.key_data)
    if not (insecure or has_ca or has_cert or tls.server_name):
        return None
    if insecure and has_ca:
        raise ExtenderConfigError(
            f"extender {config.url_prefix}: tlsConfig: specifying a root certificates file "
            "with the insecure flag is not allowed"
        )
    _check_readable(config.url_prefix, tls)
    try:
        context = ssl.create_default_context()
        if insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif has_ca:
            context = ssl.create_default_context(
                cafile=tls.ca_file or None,
                cadata=tls.ca_data.decode("ascii") if tls.ca_data else None,
            )
        if has_cert:
            _load_client_cert(context, tls)
    except (OSError, ssl.SSLError, ValueError) as err:
        raise ExtenderConfigError(f"extender {config.url_prefix}: tlsConfig: {err}") from err
    return context


def _check_readable(url_prefix: str, tls: TLSConfig) -> None:
    """Name the file that cannot be read: the ssl module's errors do not."""
    for field, path in (
        ("caFile", tls.ca_file),
        ("certFile", tls.cert_file),
        ("keyFile", tls.key_file),
    ):
        if not path:
            continue
        try:
            with open(path, "rb"):
                pass
        except OSError as err:
            raise ExtenderConfigError(
                f"extender {url_prefix}: tlsConfig.{field}: cannot read {path}: "
                f"{err.strerror or err}"
            ) from err


def _load_client_cert(context: ssl.SSLContext, tls: TLSConfig) -> None:
    # The ssl module loads certificates from files only; PEM data goes through a
    # private temporary file that is removed at once.
    if tls.cert_file and tls.key_file:
        context.load_cert_chain(tls.cert_file, tls.key_file)
        return
    cert = tls.cert_data or _read(tls.cert_file)
    key = tls.key_data or _read(tls.key_file)
    if not cert or not key:
        raise ValueError("a client certificate needs both a certificate and a key")
    fd, path = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(cert + b"\n" + key)
        context.load_cert_chain(path)
    finally:
        os.unlink(path)


def _read(path: str) -> bytes:
    if not path:
        return b""
    with open(path, "rb") as f:
        return f.read()
