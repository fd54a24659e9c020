"""A throwaway certificate authority and the loopback server's certificate, for HTTPS on 127.0.0.1.

Every client the workflows run trusts a certificate only through a CA file it is given:

* git (libcurl): `GIT_SSL_CAINFO` (git-config(1), http.sslCAInfo);
* gh and other Go programs: `SSL_CERT_FILE` (Go's crypto/x509, root_unix.go, reads it on Linux);
* Python's ssl and urllib3 without requests: `SSL_CERT_FILE` (OpenSSL's default verify paths);
  requests: `REQUESTS_CA_BUNDLE` (it otherwise uses certifi's bundle);
* Node.js: `NODE_EXTRA_CA_CERTS` (nodejs.org/api/cli.html), added to its built-in roots;
* curl: `CURL_CA_BUNDLE`.

The server certificate names its IP address in the subjectAltName (RFC 6125: an IP address is
matched only against an iPAddress SAN, never the common name), so clients verify it as they would
github.com's. The CA's key never leaves the state folder; both are made anew for each state folder.

Sources: https://git-scm.com/docs/git-config#Documentation/git-config.txt-httpsslCAInfo;
https://pkg.go.dev/crypto/x509 (SSL_CERT_FILE, SSL_CERT_DIR on Unix); https://docs.openssl.org/3.0/man3/
SSL_CTX_load_verify_locations/ (SSL_CERT_FILE); https://requests.readthedocs.io/en/latest/user/advanced/
#ssl-cert-verification (REQUESTS_CA_BUNDLE); https://nodejs.org/api/cli.html#node_extra_ca_certsfile;
https://www.rfc-editor.org/rfc/rfc6125 section 6.2.1; https://cryptography.io/en/latest/x509/tutorial/.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=30)  # a test run's certificate, never renewed


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_certificates(folder: Path, address: str = "127.0.0.1") -> tuple[Path, Path, Path]:
    """Return (CA certificate, server certificate chain, server key) files written to `folder`.

    Made once per folder: a second call for the same address returns the files already there,
    so a restarted server keeps the CA its clients were given.
    """
    folder.mkdir(parents=True, exist_ok=True)
    ca_file, chain_file, key_file = folder / "ca.pem", folder / f"server-{address}.pem", folder / f"server-{address}.key"
    if ca_file.exists() and chain_file.exists() and key_file.exists():
        return ca_file, chain_file, key_file
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    ca_key_file = folder / "ca.key"
    if ca_file.exists() and ca_key_file.exists():
        ca_key = serialization.load_pem_private_key(ca_key_file.read_bytes(), None)
        ca = x509.load_pem_x509_certificate(ca_file.read_bytes())
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (x509.CertificateBuilder().subject_name(_name("Takedown Watch test CA")).issuer_name(
            _name("Takedown Watch test CA")).public_key(ca_key.public_key()).serial_number(
            x509.random_serial_number()).not_valid_before(now).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
        ca_key_file.write_bytes(_pem_key(ca_key))
        ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.IPAddress(ipaddress.ip_address(address)), x509.DNSName("localhost")]
    server = (x509.CertificateBuilder().subject_name(_name(address)).issuer_name(ca.subject)
              .public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now).not_valid_after(now + VALIDITY)
              .add_extension(x509.SubjectAlternativeName(names), critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                             critical=False)
              .sign(ca_key, hashes.SHA256()))
    key_file.write_bytes(_pem_key(key))
    chain_file.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    return ca_file, chain_file, key_file


def bundle(folder: Path, ca_file: Path, extra: list[Path] = ()) -> Path:
    """Return a CA bundle file holding this CA and every extra CA file given (other loopback servers')."""
    path = folder / "ca-bundle.pem"
    path.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in [ca_file, *extra]))
    return path
