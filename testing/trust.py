"""A trust folder for tests and the demo: the record's signing key, its allowed signers, two loopback TSAs.

It has the shape of the repository's data/trust/ (allowed_signers,
timestamping.toml, the authorities' roots), with every authority a FakeTsa
served from the farm and every key made here. The authorities answer as RFC 3161
section 3.4 says a TSA answers over HTTP (https://www.rfc-editor.org/rfc/rfc3161#section-3.4;
testing/fake_tsa.py, which OpenSSL's openssl-ts(1) signs for), and the allowed-signers file
is the format of ssh-keygen(1)'s ALLOWED SIGNERS section (https://man.openbsd.org/ssh-keygen.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from collector import settings
from testing.fake_tsa import FakeTsa
from testing.farm import Farm
from testing.keys import allowed_signers, make_key


@dataclass
class Trust:
    """The folder, the record's signing key, and the authorities serving it."""

    folder: Path
    key: Path
    authorities: list[FakeTsa]

    def close(self) -> None:
        for authority in self.authorities:
            authority.close()


def make_trust(folder: Path, farm: Farm, names: tuple[str, ...] = ("tsa-one", "tsa-two")) -> Trust:
    """Return a trust folder with a fresh record key and one loopback TSA per name."""
    key = make_key(folder / "keys", "record")
    allowed_signers(folder / "allowed_signers", settings.RECORD_SIGNER, key,
                    namespace=settings.RECORD_SIGNING_NAMESPACE)
    authorities = [FakeTsa(farm, name) for name in names]
    entries = []
    for authority in authorities:
        (folder / f"{authority.name}.pem").write_bytes(authority.root_pem)
        entries.append(f'[[authority]]\nname = "{authority.name}"\nurl = "{authority.url}"\n'
                       f'roots = ["{authority.name}.pem"]\n')
    (folder / "timestamping.toml").write_text("\n".join(entries))
    return Trust(folder, key, authorities)
