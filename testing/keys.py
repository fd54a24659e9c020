"""SSH signing keys for tests and the demo, made with ssh-keygen, and their allowed-signers file.

Both follow OpenSSH's ssh-keygen(1) manual (https://man.openbsd.org/ssh-keygen.1): `-t ed25519 -N ""`
makes an unencrypted key, and the ALLOWED SIGNERS section gives the file's line format
(principals, the `namespaces="..."` option, the public key) that `ssh-keygen -Y verify -f` reads;
the signatures themselves are OpenSSH's sshsig format (PROTOCOL.sshsig in openssh-portable).
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_key(folder: Path, name: str) -> Path:
    """Return the path of a new ed25519 private key (no passphrase) in folder."""
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def allowed_signers(path: Path, principal: str, *keys: Path, namespace: str) -> Path:
    """Return the allowed-signers file written at path, naming principal for each key under namespace."""
    lines = [f'{principal} namespaces="{namespace}" {Path(f"{k}.pub").read_text().strip()}' for k in keys]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
