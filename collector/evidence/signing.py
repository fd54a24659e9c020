"""Signs export files: each gets `NNNNNN.jsonl.bz2.sig`, an SSH signature under the record's namespace."""

from __future__ import annotations

from pathlib import Path

from collector import settings
from collector.evidence import sshsig
from collector.record.folder import batches


def sign_unsigned(out_dir: str | Path, key: str | Path, allowed_signers: Path) -> list[Path]:
    """Return the export files signed now: every one without a signature, each checked once signed.

    A signature that does not verify against the repository's allowed signers
    (a key that is not the record's) is removed again and the signing refused.
    """
    signed = []
    for path in batches(out_dir, tail=True):  # a sparse checkout holds the newest days: the files still unsigned
        if sshsig.signature_path(path).exists():
            continue
        signature = sshsig.sign(path, key, settings.RECORD_SIGNING_NAMESPACE)
        try:
            sshsig.verify(path, settings.RECORD_SIGNER, allowed_signers, settings.RECORD_SIGNING_NAMESPACE)
        except sshsig.SignatureError:
            signature.unlink()
            raise
        signed.append(path)
    return signed
