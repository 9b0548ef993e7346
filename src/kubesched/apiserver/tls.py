"""Serving certificates for the API server's HTTPS: a self-signed CA and a certificate it
signs for the addresses clients dial, or a certificate the user brings.

As kubeadm lays out a control plane's PKI: a CA (10 years) that clients trust through the
kubeconfig's ``certificate-authority-data``, and a serving certificate (1 year,
``serverAuth``) whose subjectAltNames name ``localhost``, ``127.0.0.1``, ``::1`` and the
host the server was asked to listen on. Keys are ECDSA P-256: Go's and OpenSSL's TLS take
them, and they are made in microseconds where RSA keys take a noticeable part of a start.

With a directory (beside the ``--data`` file) the CA is kept and reused, so clients holding
an old kubeconfig keep trusting a restarted server; the serving certificate is issued anew
at each start from that CA, so it always names the current host.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "DEFAULT_SANS",
    "ServingCertificate",
    "TLSError",
    "issue_serving_certificate",
    "load_serving_certificate",
    "pki_dir_for",
    "server_ssl_context",
]

#: Names every generated serving certificate carries, whatever the host.
DEFAULT_SANS = ("localhost", "127.0.0.1", "::1")
CA_VALIDITY = datetime.timedelta(days=3650)
SERVING_VALIDITY = datetime.timedelta(days=365)
#: Certificates start a little in the past so that a client whose clock lags still
#: accepts a certificate made a moment ago.
BACKDATE = datetime.timedelta(minutes=5)

CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"


class TLSError(Exception):
    """A certificate, key or PKI directory that cannot be used; the message says which."""


@dataclass(frozen=True)
class ServingCertificate:
    """PEM data of a serving certificate (with its chain), its key, and the CA to trust."""

    cert_pem: bytes
    key_pem: bytes = field(repr=False)
    #: The CA clients verify the server with (None: the system's trust store).
    ca_pem: bytes | None = None


def pki_dir_for(data_file: str | os.PathLike[str]) -> Path:
    """Where the PKI of a server keeping its objects in ``data_file`` lives: beside it."""
    path = Path(data_file)
    return path.with_name(path.name + ".pki")


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _new_ca(now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-ca")])
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _san(hosts: list[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    seen: set[str] = set()
    for host in hosts:
        if not host or host in seen:
            continue
        seen.add(host)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _serving(
    ca: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    hosts: list[str],
    now: datetime.datetime,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    ca_ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + SERVING_VALIDITY, ca.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _load_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert_path, key_path = directory / CA_CERT, directory / CA_KEY
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise TLSError(f"{directory}: cannot use the kept CA ({CA_CERT}, {CA_KEY}): {exc}") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TLSError(f"{key_path}: not an ECDSA key as kubesched writes them")
    spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if key.public_key().public_bytes(*spki) != cert.public_key().public_bytes(*spki):
        raise TLSError(f"{key_path} is not the key of {cert_path}")
    return cert, key


def _write_private(path: Path, data: bytes) -> None:
    # Create with 0600 before writing: the key is never readable by others, even briefly.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def issue_serving_certificate(
    hosts: list[str], directory: str | os.PathLike[str] | None = None
) -> ServingCertificate:
    """A serving certificate for ``DEFAULT_SANS`` plus ``hosts``, signed by a CA.

    **directory**: keep the CA there (``ca.crt``, ``ca.key``; created if missing) and
    reuse it on later calls; the serving certificate and key are written beside it
    (``apiserver.crt``, ``apiserver.key``). Without one, a new CA each time, in memory.
    Raises :class:`TLSError` for a directory or kept CA that cannot be used.
    """
    now = datetime.datetime.now(datetime.UTC)
    sans = [*DEFAULT_SANS, *hosts]
    if directory is None:
        ca, ca_key = _new_ca(now)
        cert, key = _serving(ca, ca_key, sans, now)
        return ServingCertificate(_pem(cert), _key_pem(key), _pem(ca))
    base = Path(directory)
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        if (base / CA_CERT).exists() or (base / CA_KEY).exists():
            ca, ca_key = _load_ca(base)
        else:
            ca, ca_key = _new_ca(now)
            _write_private(base / CA_KEY, _key_pem(ca_key))
            (base / CA_CERT).write_bytes(_pem(ca))
        cert, key = _serving(ca, ca_key, sans, now)
        _write_private(base / SERVING_KEY, _key_pem(key))
        (base / SERVING_CERT).write_bytes(_pem(cert))
    except OSError as exc:
        raise TLSError(f"{base}: cannot keep the TLS certificates there: {exc}") from exc
    return ServingCertificate(_pem(cert), _key_pem(key), _pem(ca))


def load_serving_certificate(
    cert_file: str | os.PathLike[str],
    key_file: str | os.PathLike[str],
    ca_file: str | os.PathLike[str] | None = None,
) -> ServingCertificate:
    """A certificate the user brings (PEM files, the chain in ``cert_file``), checked by
    loading it; ``ca_file`` is what clients should trust (None: their system CAs)."""
    try:
        cert, key = Path(cert_file).read_bytes(), Path(key_file).read_bytes()
        ca = Path(ca_file).read_bytes() if ca_file is not None else None
    except OSError as exc:
        raise TLSError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    served = ServingCertificate(cert, key, ca)
    try:
        server_ssl_context(served)  # a bad pair fails now, naming the files
    except TLSError as exc:
        raise TLSError(f"{cert_file} and {key_file}: {exc}") from exc
    if ca is not None:
        try:
            x509.load_pem_x509_certificates(ca)
        except ValueError as exc:
            raise TLSError(f"{ca_file}: not a PEM CA certificate: {exc}") from exc
    return served


def server_ssl_context(served: ServingCertificate) -> ssl.SSLContext:
    """The server side TLS context: TLS 1.2 or newer (kube-apiserver's default minimum)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    # ssl loads certificates only from files: a private temporary directory, gone at once.
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as tmp:
        cert_path, key_path = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_path.write_bytes(served.cert_pem)
        _write_private(key_path, served.key_pem)
        try:
            context.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise TLSError(f"the serving certificate and key do not make a pair: {exc}") from exc
    return context
