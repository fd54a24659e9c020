"""Every one-bit change of a token or signature: does the bundle's pure-Python checker agree with OpenSSL/OpenSSH?

For an RFC 3161 token from the loopback authority (testing/fake_tsa.py, ECDSA
P-256 and RSA 2048 keys) and an SSH signature (Ed25519), each byte in turn
has one bit flipped; the spoiled input is checked by `openssl ts -verify`
(or `ssh-keygen -Y verify`) and by collector/evidence/checker/ (standard
library only). Prints, per input, how many variants each refused and every
position where they disagree (the test suite checks a sample of positions:
tests/evidence/test_pure_verifier.py). About a minute per token.

Run: python bench/verifier_agreement.py
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
import textwrap
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "collector" / "evidence" / "checker"))

import verify_der  # noqa: E402
import verify_ssh  # noqa: E402
from testing.fake_tsa import FakeTsa  # noqa: E402
from testing.farm import Farm  # noqa: E402
from testing.keys import allowed_signers, make_key  # noqa: E402

DATA = b"the bytes a token or signature vouches for\n"


def _tokens(folder: Path) -> None:
    (folder / "data").write_bytes(DATA)
    subprocess.run(["openssl", "ts", "-query", "-data", str(folder / "data"), "-sha256", "-cert",
                    "-out", str(folder / "q.tsq")], check=True, capture_output=True)
    with Farm() as farm:
        for key_type in ("ec", "rsa"):
            tsa = FakeTsa(farm, "bench", key_type=key_type)
            request = urllib.request.Request(tsa.url, data=(folder / "q.tsq").read_bytes(),
                                             headers={"Content-Type": "application/timestamp-query"})
            token = urllib.request.urlopen(request, timeout=10).read()
            (folder / "root.pem").write_bytes(tsa.root_pem)
            roots = verify_der.pem_certificates(tsa.root_pem.decode())
            refused, differ = [0, 0], []
            for position in range(len(token)):
                changed = bytearray(token)
                changed[position] ^= 0x01
                (folder / "t.tsr").write_bytes(changed)
                openssl = subprocess.run(["openssl", "ts", "-verify", "-in", str(folder / "t.tsr"), "-data",
                                          str(folder / "data"), "-CAfile", str(folder / "root.pem")],
                                         capture_output=True).returncode == 0
                try:
                    verify_der.check_token(bytes(changed), DATA, roots)
                    pure = True
                except (verify_der.Refused, ValueError, IndexError):
                    pure = False
                refused[0] += not openssl
                refused[1] += not pure
                if openssl != pure:
                    differ.append((position, openssl, pure))
            print(f"token ({key_type}, {len(token)} bytes): openssl refused {refused[0]}, pure Python {refused[1]}, "
                  f"disagree at {len(differ)} positions {differ[:20]}")
            tsa.close()


def _ssh(folder: Path) -> None:
    key = make_key(folder / "keys", "record")
    (folder / "file").write_bytes(DATA)
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", "ns", str(folder / "file")], check=True)
    signers = allowed_signers(folder / "allowed", "record", key, namespace="ns")
    text = (folder / "file.sig").read_text()
    blob = base64.b64decode("".join(text.strip().splitlines()[1:-1]))
    refused, differ = [0, 0], []
    for position in range(len(blob)):
        changed = bytearray(blob)
        changed[position] ^= 0x01
        armoured = ("-----BEGIN SSH SIGNATURE-----\n" + "\n".join(textwrap.wrap(base64.b64encode(changed).decode(),
                                                                                70)) + "\n-----END SSH SIGNATURE-----\n")
        (folder / "s.sig").write_text(armoured)
        keygen = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "record", "-n", "ns", "-s",
                                 str(folder / "s.sig")], input=DATA, capture_output=True).returncode == 0
        try:
            verify_ssh.verify(DATA, armoured, signers.read_text(), "record", "ns")
            pure = True
        except (verify_ssh.Refused, ValueError, IndexError, KeyError):
            pure = False
        refused[0] += not keygen
        refused[1] += not pure
        if keygen != pure:
            differ.append((position, keygen, pure))
    print(f"ssh signature (ed25519, {len(blob)} bytes): ssh-keygen refused {refused[0]}, pure Python {refused[1]}, "
          f"disagree at {len(differ)} positions {differ[:20]}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agreement-") as scratch:
        _ssh(Path(scratch))
        _tokens(Path(scratch))


if __name__ == "__main__":
    main()
