"""The bundle's pure-Python checks agree with OpenSSL and OpenSSH on good and bad tokens and signatures.

The checker a bundle carries (collector/evidence/checker/) verifies RFC 3161
tokens and SSH signatures with the standard library only; these tests hold
its verdicts against `openssl ts -verify` and `ssh-keygen -Y verify` on the
same inputs: good ones, and ones spoiled one bit at a time across the whole
token or signature (a sample here; bench/verifier_agreement.py flips every
byte). Either verdict alone could be wrong; agreement on both sides is the test.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from testing.fake_tsa import FakeTsa
from testing.keys import allowed_signers, make_key

CHECKER = Path(__file__).resolve().parents[2] / "collector" / "evidence" / "checker"
sys.path.insert(0, str(CHECKER))
import verify_der  # noqa: E402
import verify_ssh  # noqa: E402

DATA = "কাগজের খবর: the bytes a token or signature vouches for\n".encode()
FLIPS = 48  # positions spread over each token or signature


def _token(tsa: FakeTsa, folder: Path, data: bytes = DATA) -> bytes:
    (folder / "data").write_bytes(data)
    subprocess.run(["openssl", "ts", "-query", "-data", str(folder / "data"), "-sha256", "-cert",
                    "-out", str(folder / "query.tsq")], check=True, capture_output=True)
    request = urllib.request.Request(tsa.url, data=(folder / "query.tsq").read_bytes(),
                                     headers={"Content-Type": "application/timestamp-query"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()


def _openssl_says(token: bytes, data: bytes, root_pem: bytes, folder: Path) -> bool:
    (folder / "t.tsr").write_bytes(token)
    (folder / "d").write_bytes(data)
    (folder / "root.pem").write_bytes(root_pem)
    done = subprocess.run(["openssl", "ts", "-verify", "-in", str(folder / "t.tsr"), "-data", str(folder / "d"),
                           "-CAfile", str(folder / "root.pem")], capture_output=True)
    return done.returncode == 0


def _pure_says(token: bytes, data: bytes, root_pem: bytes) -> bool:
    try:
        verify_der.check_token(token, data, verify_der.pem_certificates(root_pem.decode()))
        return True
    except (verify_der.Refused, ValueError, IndexError):
        return False


def _flipped(data: bytes, count: int):
    for position in sorted({int(i * len(data) / count) for i in range(count)} | {len(data) - 1}):
        changed = bytearray(data)
        changed[position] ^= 0x01
        yield position, bytes(changed)


@pytest.mark.parametrize("key_type", ["ec", "rsa"])
def test_tokens_pure_python_and_openssl_agree(farm, tmp_path, key_type):
    tsa, other = FakeTsa(farm, "tsa", key_type=key_type), FakeTsa(farm, "else", key_type=key_type)
    stranger = FakeTsa(farm, "tsa", mode="other", key_type=key_type)
    try:
        token = _token(tsa, tmp_path)
        cases = {"good": (token, DATA, tsa.root_pem),
                 "another file": (token, DATA + b" ", tsa.root_pem),
                 "another authority's root": (token, DATA, other.root_pem),
                 "signed by a key the root never certified": (_token(stranger, tmp_path), DATA, tsa.root_pem),
                 "not a token": (b"0\x03\x02\x01\x02", DATA, tsa.root_pem)}
        for position, changed in _flipped(token, FLIPS):
            cases[f"bit flipped at byte {position}"] = (changed, DATA, tsa.root_pem)
        verdicts = {name: (_openssl_says(*case, tmp_path), _pure_says(*case)) for name, case in cases.items()}
    finally:
        for authority in (tsa, other, stranger):
            authority.close()
    assert verdicts["good"] == (True, True)
    assert sum(1 for o, _ in verdicts.values() if not o) >= FLIPS // 2  # most spoiled inputs are refused
    assert {n: v for n, v in verdicts.items() if v[0] != v[1]} == {}


def _ssh_keygen_says(data: bytes, signature: str, signers: Path, principal: str, namespace: str,
                     folder: Path) -> bool:
    (folder / "s.sig").write_text(signature)
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", principal, "-n", namespace,
                           "-s", str(folder / "s.sig")], input=data, capture_output=True)
    return done.returncode == 0


def _ssh_pure_says(data: bytes, signature: str, signers: Path, principal: str, namespace: str) -> bool:
    try:
        verify_ssh.verify(data, signature, signers.read_text(), principal, namespace)
        return True
    except (verify_ssh.Refused, ValueError, IndexError, KeyError):
        return False


def _armour(blob: bytes) -> str:
    return ("-----BEGIN SSH SIGNATURE-----\n" + "\n".join(textwrap.wrap(base64.b64encode(blob).decode(), 70))
            + "\n-----END SSH SIGNATURE-----\n")


@pytest.mark.parametrize("key_type", ["ed25519", "rsa", "ecdsa"])
def test_ssh_signatures_pure_python_and_ssh_keygen_agree(tmp_path, key_type):
    key = tmp_path / "record"
    if key_type == "ed25519":
        key = make_key(tmp_path / "keys", "record")
    else:
        subprocess.run(["ssh-keygen", "-q", "-t", key_type, "-N", "", "-f", str(key)], check=True)
    stranger = make_key(tmp_path / "keys", "stranger")
    (tmp_path / "file").write_bytes(DATA)
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", "ns", str(tmp_path / "file")],
                   check=True)
    signature = (tmp_path / "file.sig").read_text()
    signers = allowed_signers(tmp_path / "allowed", "record", key, namespace="ns,other")
    only_other = allowed_signers(tmp_path / "only_other", "record", key, namespace="other")
    strangers = allowed_signers(tmp_path / "strangers", "record", stranger, namespace="ns")
    cases = {"good": (DATA, signature, signers, "record", "ns"),
             "another file": (DATA[:-1], signature, signers, "record", "ns"),
             "another principal": (DATA, signature, signers, "someone", "ns"),
             "another namespace": (DATA, signature, signers, "record", "other"),
             "a namespace the signer is not allowed": (DATA, signature, only_other, "record", "ns"),
             "a key not among the allowed signers": (DATA, signature, strangers, "record", "ns")}
    blob = base64.b64decode("".join(signature.strip().splitlines()[1:-1]))
    for position, changed in _flipped(blob, FLIPS):
        cases[f"bit flipped at byte {position}"] = (DATA, _armour(changed), signers, "record", "ns")
    verdicts = {n: (_ssh_keygen_says(*c, tmp_path), _ssh_pure_says(*c)) for n, c in cases.items()}
    assert verdicts["good"] == (True, True)
    assert sum(1 for o, _ in verdicts.values() if not o) >= FLIPS // 2
    assert {n: v for n, v in verdicts.items() if v[0] != v[1]} == {}
