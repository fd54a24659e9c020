"""Signs export files: each gets `NNNNNN.jsonl.bz2.sig`, an SSH signature under the record's namespace.

The record's key signs only what it verified: a file after the stream's last
signed file (whose signature must be good), whose content and chain check
from that file on, that belongs to the stream, and that the stream's own
working database wrote (collector/record/written.py). Anything else in the
folder unsigned (a file pushed into the record repository by anyone else,
well chained or not) stops the signing before any file is signed, naming the
file; the job's push comes after, so it stops too. The health check
`evidence-unverified` (collector/health/evidence.py) judges the record folder
with the same function.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from collector import settings
from collector.errors import BadUsage, TakedownWatchError
from collector.evidence import sshsig
from collector.record import streams, written
from collector.record.contents import check_file
from collector.record.fileformat import ExportError
from collector.record.folder import batches, record_name


class UnverifiedFiles(TakedownWatchError):
    """Unsigned export files the record's key will not sign: each named, with why."""


@dataclass
class Judgement:
    """The unsigned files of one stream folder: those to sign, and those refused with why."""

    to_sign: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    anchor: Path | None = None  # the last signed file, whose good signature the rest is checked from


UNKNOWN = object()  # the writer's files are not known here (the health check, on a database not the stream's)


def judge(out_dir: str | Path, allowed_signers: Path, stream: str | None, wrote=UNKNOWN) -> Judgement:
    """Return which unsigned export files of a stream's folder verify, and why each other one does not.

    `wrote`: {record name: SHA-256} of the files the stream's working database
    exported. UNKNOWN (the health check on another database): an unsigned file
    after a signed one is refused all the same, as no job of the stream pushed
    it (a job signs what it writes before it pushes it). A folder whose files
    are all unsigned (the key not set up yet) is then not judged.
    """
    found = Judgement()
    files = batches(out_dir, tail=True)  # a sparse checkout holds the newest days: the files still unsigned
    signed = [i for i, path in enumerate(files) if sshsig.signature_path(path).exists()]
    start, previous = 0, None
    if signed:
        found.anchor = files[signed[-1]]
        try:
            sshsig.verify(found.anchor, settings.RECORD_SIGNER, allowed_signers, settings.RECORD_SIGNING_NAMESPACE)
            previous = check_file(found.anchor)
        except (sshsig.SignatureError, ExportError) as exc:
            found.refused = [(p, f"the last signed file {record_name(found.anchor)} does not verify "
                                f"({_short(exc)}): nothing after it is verified") for p in files[signed[-1]:]]
            return found
        found.refused = [(p, f"unsigned, but before the last signed file {record_name(found.anchor)}")
                         for p in files[:signed[-1]] if not sshsig.signature_path(p).exists()]
        start = signed[-1] + 1
    elif wrote is UNKNOWN:
        return found
    broken = None  # the first file after the anchor that does not verify: nothing after it does either
    for path in files[start:]:
        why, previous = _why_not(path, previous, stream, wrote)
        if why is None and broken is not None:
            why = f"it follows {record_name(broken)}, which does not verify"
        if why is None:
            found.to_sign.append(path)
        else:
            found.refused.append((path, why))
            broken = broken or path
    if found.refused:
        found.to_sign = []
    return found


def _why_not(path: Path, previous, stream: str | None, wrote):
    """Return (why one file after the last verified one does not verify or None when it does, its facts)."""
    try:
        facts = check_file(path)
    except ExportError as exc:
        return f"its content does not check ({_short(exc)})", None
    header = facts.header
    if header.get("batch") != int(path.name[:6]):
        why = f"its header says batch {header.get('batch')}, its name {path.name[:6]}"
    elif previous is not None and (header.get("previous_sha256") != previous.sha256
                                   or header.get("after") != previous.header["through"]):
        why = "it does not follow the file before it (the SHA-256 chain or the ids are broken)"
    elif header.get("stream") != stream:
        why = f"it says stream {header.get('stream') or '(default)'}, the folder is {stream or '(default)'}'s"
    elif wrote is UNKNOWN:
        why = ("unsigned after a signed file: the stream's jobs sign every file they write before they push "
               "it, so none of them pushed this one")
    elif wrote.get(record_name(path)) != facts.sha256:
        why = "the stream's working database did not write it (export_written names no such file)"
    else:
        why = None
    return why, facts


def _short(exc: Exception) -> str:
    return str(exc).split(": ", 1)[-1]


def refusal_text(refused: list[tuple[Path, str]]) -> str:
    """Return the message naming every refused file and why."""
    return "; ".join(f"{path}: {why}" for path, why in refused)


def sign_verified(out_dir: str | Path, key: str | Path, allowed_signers: Path, conn: sqlite3.Connection) -> list[Path]:
    """Return the export files signed now: the stream's own, verified from its last signed file.

    conn is the stream's working database (what it exported). Raises
    UnverifiedFiles, signing nothing, when any unsigned file does not verify.
    A signature that does not verify against the repository's allowed signers
    (a key that is not the record's) is removed again and the signing refused.
    """
    stream = streams.stream_of(conn)
    if stream == streams.MERGED:
        raise BadUsage("this database merges every stream: it wrote no export file; give the stream's working "
                       "database (--db), which knows the files its jobs wrote")
    found = judge(out_dir, allowed_signers, stream, written.files(conn))
    if found.refused:
        raise UnverifiedFiles(f"refused to sign any file of {out_dir}: {refusal_text(found.refused)}. Nothing "
                              "was signed; see docs/health.md#evidence-unverified")
    signed = []
    for path in found.to_sign:
        signature = sshsig.sign(path, key, settings.RECORD_SIGNING_NAMESPACE)
        try:
            sshsig.verify(path, settings.RECORD_SIGNER, allowed_signers, settings.RECORD_SIGNING_NAMESPACE)
        except sshsig.SignatureError:
            signature.unlink()
            raise
        signed.append(path)
    return signed
