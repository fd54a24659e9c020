"""SSH signatures of files (`ssh-keygen -Y sign`), checked against an allowed-signers file.

The same mechanism as annotations (collector/review/annotations.py), under a
namespace of its own per kind of document, so a signature made for one kind
can never be passed off as one of another.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from collector.errors import TakedownWatchError

_FINGERPRINT = re.compile(r"key (\S+:\S+)")


class SignatureError(TakedownWatchError):
    """A file could not be signed, or its signature does not verify."""


def ssh_keygen() -> str:
    """Return the path of ssh-keygen (OpenSSH 8.0 or later signs files)."""
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SignatureError("ssh-keygen is needed to sign and verify (OpenSSH 8.0 or later)")
    return found


def signature_path(path: Path) -> Path:
    """Return where a file's signature sits: beside it, with .sig added."""
    return Path(f"{path}.sig")


def sign(path: Path, key: str | Path, namespace: str) -> Path:
    """Return the path of the signature ssh-keygen writes beside `path`."""
    done = subprocess.run([ssh_keygen(), "-q", "-Y", "sign", "-f", str(key), "-n", namespace, str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SignatureError(f"signing {path.name} with {key} failed: {done.stderr.strip()}")
    return signature_path(path)


def verify(path: Path, principal: str, allowed_signers: Path, namespace: str) -> str:
    """Return the signing key's fingerprint when `path`.sig is a good signature by `principal`."""
    signature = signature_path(path)
    if not signature.exists():
        raise SignatureError(f"{path.name} has no signature {signature.name}")
    if not Path(allowed_signers).is_file():
        raise SignatureError(f"no allowed signers file at {allowed_signers}")
    with open(path, "rb") as data:
        done = subprocess.run([ssh_keygen(), "-Y", "verify", "-f", str(allowed_signers), "-I", principal,
                               "-n", namespace, "-s", str(signature)], stdin=data, capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise SignatureError(f"{path.name}: no good signature by {principal}: {why[-1] if why else 'refused'}")
    found = _FINGERPRINT.search(done.stdout)
    return found.group(1) if found else "unknown"
