"""WACZ signing per Webrecorder's WACZ Signing and Verification 0.1.0: the anonymous signature.

The specification (https://specs.webrecorder.net/wacz-auth/0.1.0/) puts one
SignatureData object, `signedData`, into the package's datapackage-digest.json.
Of its two formats, the domain-ownership one needs a domain certificate and an
authsign server holding it (webrecorder/authsign: its verifier accepts only
that format); the record has no domain, so packages carry the other, the
anonymous signature: exactly the fields hash, created, software, version,
signature and publicKey ("the WACZ MUST not contain any property that is not
listed"). Who signed is then a matter of "external key management": the
public keys of the record's WACZ key are kept in the repository
(data/trust/wacz-signers.pem) and a package verifies only under one of them.

The encoding is the one ReplayWeb.page checks (webrecorder/wabac.js,
src/wacz/certutils.ts, verifyWACZSignature, commit a683fbaf): publicKey is the
base64 of the key's SubjectPublicKeyInfo, imported as ECDSA P-384; signature is
the base64 of a WebCrypto ECDSA signature with SHA-256 (r and s, 48 bytes each,
IEEE P1363) over the UTF-8 bytes of the `hash` string ("sha256:<hex>", the
digest of datapackage.json); its loader (waczimporter.ts) takes the signature
only when signedData.hash is the digest file's hash. py-wacz's validator
(wacz/validate.py) also wants signedData.created to be datapackage.json's
`created`, so that is what is signed; `version` is the specification's,
0.1.0, as authsign's model writes it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from collector import settings
from collector.errors import TakedownWatchError

DIGEST = "datapackage-digest.json"
PACKAGE = "datapackage.json"
FIELDS = {"hash", "created", "software", "version", "signature", "publicKey"}
SPEC_VERSION = "0.1.0"
SIZE = 48  # bytes of r and of s on P-384


class WaczSignatureError(TakedownWatchError):
    """A package could not be signed, or its signature does not verify."""


def new_key(path: str | Path) -> Path:
    """Return the path of a new ECDSA P-384 private key (PEM, PKCS#8) written there, and its .pub beside it."""
    key = ec.generate_private_key(ec.SECP384R1())
    target = Path(path)
    target.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
    os.chmod(target, 0o600)
    Path(f"{target}.pub").write_bytes(public_pem(key.public_key()))
    return target


def public_pem(public_key) -> bytes:
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _load_key(path: str | Path):
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise WaczSignatureError(f"cannot read the WACZ signing key {path}: {exc}") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp384r1":
        raise WaczSignatureError(f"{path}: the WACZ signing key must be ECDSA P-384 (as ReplayWeb.page reads it)")
    return key


def _members(path: Path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(path) as package:
        return [(info, package.read(info)) for info in package.infolist()]


def sign_package(path: str | Path, key_path: str | Path) -> dict:
    """Return the signedData put into the package's datapackage-digest.json (the package rewritten in place)."""
    path, key = Path(path), _load_key(key_path)
    members = _members(path)
    found = {info.filename: data for info, data in members}
    if PACKAGE not in found or DIGEST not in found:
        raise WaczSignatureError(f"{path.name}: no {PACKAGE} or {DIGEST}: not a WACZ package")
    digest = json.loads(found[DIGEST])
    package_hash = "sha256:" + hashlib.sha256(found[PACKAGE]).hexdigest()
    if digest.get("path") != PACKAGE or digest.get("hash") != package_hash:
        raise WaczSignatureError(f"{path.name}: {DIGEST} does not hold {PACKAGE}'s hash")
    r, s = decode_dss_signature(key.sign(package_hash.encode("utf-8"), ec.ECDSA(hashes.SHA256())))
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    digest["signedData"] = {
        "hash": package_hash, "created": json.loads(found[PACKAGE])["created"],
        "software": f"Takedown Watch {settings.__version__}", "version": SPEC_VERSION,
        "signature": base64.b64encode(r.to_bytes(SIZE, "big") + s.to_bytes(SIZE, "big")).decode("ascii"),
        "publicKey": base64.b64encode(der).decode("ascii")}
    partial = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(partial, "w") as out:
        for info, data in members:  # same order, same compression: only the digest file changes
            out.writestr(info, json.dumps(digest, indent=2).encode() if info.filename == DIGEST else data)
    os.replace(partial, path)
    return digest["signedData"]


def verify_package(path: str | Path, signers_pem: str | Path) -> str:
    """Return the package's signed hash when its signature verifies under one of the kept public keys.

    Checks what ReplayWeb.page and py-wacz check: the digest file names
    datapackage.json with its true hash, signedData.hash is that hash, its
    created is the package's, it has the anonymous format's fields only, and
    the signature (ECDSA P-384, SHA-256, r||s) over the hash verifies with
    publicKey, which must be one of the keys in `signers_pem`.
    """
    path = Path(path)
    found = {info.filename: data for info, data in _members(path)}
    try:
        digest, package = json.loads(found[DIGEST]), json.loads(found[PACKAGE])
    except (KeyError, ValueError) as exc:
        raise WaczSignatureError(f"{path.name}: no readable {PACKAGE} and {DIGEST} ({exc})") from exc
    package_hash = "sha256:" + hashlib.sha256(found[PACKAGE]).hexdigest()
    signed = digest.get("signedData")
    if digest.get("path") != PACKAGE or digest.get("hash") != package_hash:
        raise WaczSignatureError(f"{path.name}: {DIGEST} does not hold {PACKAGE}'s hash (the package was changed)")
    if not isinstance(signed, dict) or set(signed) != FIELDS:
        raise WaczSignatureError(f"{path.name}: no anonymous signature in {DIGEST} (fields {sorted(signed or [])})")
    if signed["hash"] != package_hash or signed["created"] != package.get("created"):
        raise WaczSignatureError(f"{path.name}: the signature is for another datapackage.json")
    kept = _kept_keys(signers_pem)
    if signed["publicKey"] not in kept:
        raise WaczSignatureError(f"{path.name}: signed with a key that is not the record's ({signers_pem})")
    raw = base64.b64decode(signed["signature"])
    public_key = serialization.load_der_public_key(base64.b64decode(signed["publicKey"]))
    if len(raw) != 2 * SIZE:
        raise WaczSignatureError(f"{path.name}: the signature is not a P-384 r||s pair")
    try:
        public_key.verify(encode_dss_signature(int.from_bytes(raw[:SIZE], "big"), int.from_bytes(raw[SIZE:], "big")),
                          signed["hash"].encode("utf-8"), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature as exc:
        raise WaczSignatureError(f"{path.name}: its signature does not verify") from exc
    return package_hash


def _kept_keys(signers_pem: str | Path) -> set[str]:
    """Return the base64 SubjectPublicKeyInfo of every public key in the PEM file."""
    try:
        text = Path(signers_pem).read_text(encoding="ascii")
    except (OSError, ValueError) as exc:
        raise WaczSignatureError(f"cannot read the record's WACZ keys {signers_pem}: {exc}") from exc
    keys = set()
    for block in text.split("-----END PUBLIC KEY-----"):
        if "-----BEGIN PUBLIC KEY-----" in block:
            pem = block[block.index("-----BEGIN PUBLIC KEY-----"):] + "-----END PUBLIC KEY-----\n"
            der = serialization.load_pem_public_key(pem.encode()).public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
            keys.add(base64.b64encode(der).decode("ascii"))
    return keys
