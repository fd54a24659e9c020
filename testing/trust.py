"""A trust folder for tests and the demo: the record's signing key, its allowed signers, two loopback TSAs.

It has the shape of the repository's data/trust/ (allowed_signers,
timestamping.toml, the authorities' roots), with every authority a FakeTsa
served from the farm and every key made here.
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
