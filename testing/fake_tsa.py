"""A time-stamping authority on loopback: RFC 3161 over HTTP, answered by OpenSSL's `ts -reply`.

What it follows, and where from:

- RFC 3161 section 3.4 (Time-Stamp Protocol via HTTP,
  https://www.rfc-editor.org/rfc/rfc3161#section-3.4): the query is POSTed
  with Content-Type application/timestamp-query, the answer comes back as
  application/timestamp-reply, a DER TimeStampResp.
- OpenSSL's openssl-ts(1) manual (https://docs.openssl.org/3.0/man1/openssl-ts/:
  the `-reply` command and its `[tsa]`
  configuration section: signer_cert, signer_key, certs, default_policy,
  digests, accuracy, ess_cert_id_alg) and OpenSSL's own TSA test
  configuration (test/CAtsa.cnf): the token is made by OpenSSL itself, the
  implementation many real authorities run, not by code of ours.
- RFC 3161 section 2.3 and rfc3161-client's verifier: the signing
  certificate carries a critical extended key usage of id-kp-timeStamping,
  which real TSA certificates have and the verifier insists on.

The authority's root and signing certificate are made here with
`cryptography`, fresh for each instance; `root_pem` is what a repository
would keep for it. `mode` makes it misbehave: "down" answers 503, "garbage"
answers 200 with bytes that are no token, "other" signs with a second key
its root never certified, "reject" answers a TimeStampResp whose status is
rejection and which holds no token (RFC 3161 section 2.4.2: PKIStatusInfo
status 2, badRequest; what openssl ts -reply itself writes when it fails).
Answers are made one at a time (openssl's files and serial are shared). `key_type="rsa"` makes every key RSA 2048 (as the
default authorities' roots are) instead of ECDSA P-256.
"""

from __future__ import annotations

import datetime
import subprocess
import threading
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from testing.farm import Farm, Host, Reply

REPLY_TYPE = "application/timestamp-reply"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Takedown Watch test TSA")])


def _certificate(subject: str, key, issuer: str, issuer_key, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


# TimeStampResp { status PKIStatusInfo { status 2 (rejection), failInfo BIT STRING badRequest (bit 2) } }.
REJECTION = bytes.fromhex("3009" "3007" "020102" "03020520")


class FakeTsa:
    """An RFC 3161 authority served at `url` from a loopback host of the farm."""

    def __init__(self, farm: Farm, name: str = "test-tsa", mode: str = "ok", key_type: str = "ec"):
        self.name = name
        self.mode = mode
        self._lock = threading.Lock()
        self.answered = 0
        # openssl's environment (None: this process's): a scenario whose jobs run with their clock moved by
        # libfaketime gives the authority the same clock, as a real authority and runner agree on the time.
        self.environ: dict[str, str] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="fake-tsa-")
        root = Path(self._dir.name)
        root_key, signer_key, other_key = (rsa.generate_private_key(65537, 2048) if key_type == "rsa"
                                           else ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
        self.root = _certificate(f"{name} root", root_key, f"{name} root", root_key, ca=True)
        signer = _certificate(f"{name} signer", signer_key, f"{name} root", root_key, ca=False)
        stranger = _certificate(f"{name} signer", other_key, f"{name} stranger", other_key, ca=False)
        self.root_pem = _pem(self.root)
        for stem, certificate, key in (("signer", signer, signer_key), ("other", stranger, other_key)):
            (root / f"{stem}.pem").write_bytes(_pem(certificate))
            (root / f"{stem}.key").write_bytes(_key_pem(key))
        (root / "serial").write_text("01\n")
        for stem in ("signer", "other"):
            (root / f"{stem}.cnf").write_text(_config(root, stem))
        self.host: Host = farm.add({"/": self._answer})

    @property
    def url(self) -> str:
        return self.host.url("/")

    def _answer(self, handler) -> Reply:
        if self.mode == "down":
            return Reply(503, b"unavailable", content_type="text/plain")
        if self.mode == "garbage":
            return Reply(200, b"this is not a token", content_type=REPLY_TYPE)
        if self.mode == "reject":
            # TimeStampResp { PKIStatusInfo { status 2, failInfo badRequest (bit 2) } }, no token.
            return Reply(200, REJECTION, content_type=REPLY_TYPE)
        with self._lock:
            return self._sign(handler)

    def _sign(self, handler) -> Reply:
        root = Path(self._dir.name)
        query = root / "query.tsq"
        query.write_bytes(handler.body)
        stem = "other" if self.mode == "other" else "signer"
        done = subprocess.run(["openssl", "ts", "-reply", "-config", str(root / f"{stem}.cnf"),
                               "-queryfile", str(query), "-out", str(root / "reply.tsr")],
                              capture_output=True, env=self.environ)
        if done.returncode != 0:
            return Reply(400, done.stderr[-300:], content_type="text/plain")
        self.answered += 1
        return Reply(200, (root / "reply.tsr").read_bytes(), content_type=REPLY_TYPE)

    def close(self) -> None:
        self._dir.cleanup()


def _config(root: Path, stem: str) -> str:
    return f"""
[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
serial = {root}/serial
signer_cert = {root}/{stem}.pem
certs = {root}/{stem}.pem
signer_key = {root}/{stem}.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.4146.2.3
other_policies = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""
