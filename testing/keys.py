"""SSH signing keys for tests and the demo, made with ssh-keygen, and their allowed-signers file."""

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
