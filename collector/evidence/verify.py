"""Verifies the committed record as a hostile reviewer would: content, chain, signatures, timestamps, database.

Each check names the first file, line or row that fails it:

1. every file's whole content agrees with its header, and each follows the
   one before it (collector/record/contents.py);
2. every file is signed with a key the repository's allowed signers name for
   the record (so a file appended with correct chain fields, by someone
   without the key, fails);
3. every RFC 3161 token beside a file vouches for that file under its
   authority's roots, at a time no earlier than the file says it was written;
   files with fewer than the required tokens are listed (or fail, when asked);
4. with a database: the newest file is the head the database was last in sync
   with, its triggers are whole, and every row it holds is the record's;
   with the database that merges a record's streams, every row is the one
   the stream that wrote it holds (collector/record/compare_merged.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from collector import settings
from collector.errors import TakedownWatchError
from collector.evidence import sshsig
from collector.evidence.timestamps import TimestampError, TokenCheck, check_token, load_authorities, tokens_beside
from collector.record.compare import Comparison, compare_database
from collector.record.compare_merged import compare_merged
from collector.record.contents import FileFacts, check_folder
from collector.record.fileformat import ExportError
from collector.record.folder import record_name
from collector.record.store import open_read_only, trigger_problems

SIGNERS_FILE = "allowed_signers"


class VerificationFailed(TakedownWatchError):
    """The record, or the database beside it, is not what it was when it was written."""


@dataclass
class Report:
    """What verification found: files, signatures, tokens, and files awaiting tokens."""

    files: int = 0
    signed: int = 0
    tokens: list[tuple[str, TokenCheck]] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)
    rows_compared: int | None = None
    unexported_rows: int | None = None

    @property
    def late(self) -> list[tuple[str, TokenCheck]]:
        return [(f, t) for f, t in self.tokens if t.late]


def verify_record(out_dir: str | Path | list, trust_dir: str | Path = settings.TRUST_DIR, *,
                  db: str | Path | None = None, require_timestamps: bool = False) -> Report:
    """Return the report of a record that verifies; raise VerificationFailed naming the first failure.

    Several folders (the record repositories of successive periods, oldest
    first) are verified as one record, the chain checked across them.
    """
    folders = [Path(f) for f in (out_dir if isinstance(out_dir, (list, tuple)) else [out_dir])]
    root, trust = folders[-1], Path(trust_dir)
    try:
        facts = check_folder(folders)
    except ExportError as exc:
        raise VerificationFailed(str(exc)) from exc
    report = Report(files=len(facts))
    for fact in facts:
        _check_signature(fact.path, trust)
        report.signed += 1
    authorities = {a.name: a for a in load_authorities(trust)}
    for fact in facts:
        _check_tokens(root, fact, authorities, report, require_timestamps)
    if db is not None:
        _check_database(folders, facts, Path(db), report)
    return report


def _check_signature(path: Path, trust: Path) -> None:
    try:
        sshsig.verify(path, settings.RECORD_SIGNER, trust / SIGNERS_FILE, settings.RECORD_SIGNING_NAMESPACE)
    except sshsig.SignatureError as exc:
        raise VerificationFailed(f"{path}: {exc}") from exc


def _check_tokens(root: Path, fact: FileFacts, authorities: dict, report: Report, required: bool) -> None:
    name = record_name(fact.path)
    good = 0
    for authority in tokens_beside(fact.path):
        if authority not in authorities:
            raise VerificationFailed(f"{fact.path}.{authority}.tsr: {authority} is not an authority whose "
                                     "certificates the repository keeps (data/trust/timestamping.toml)")
        try:
            report.tokens.append((name, check_token(fact.path, authorities[authority])))
        except TimestampError as exc:
            raise VerificationFailed(f"{fact.path.parent / str(exc)}") from exc
        good += 1
    if good < settings.TIMESTAMP_MIN_AUTHORITIES:
        if required:
            raise VerificationFailed(f"{fact.path}: {good} timestamp token(s), "
                                     f"{settings.TIMESTAMP_MIN_AUTHORITIES} required")
        report.awaiting.append(name)


def _check_database(folders: list[Path], facts: list[FileFacts], db: Path, report: Report) -> None:
    conn = open_read_only(db)
    try:
        problems = trigger_problems(conn)
        head = conn.execute("SELECT batch, sha256 FROM export_head WHERE id = 1").fetchone()
    finally:
        conn.close()
    if problems:
        raise VerificationFailed(f"{db}: tampered with: {'; '.join(problems)}")
    if facts:
        newest = facts[-1]
        named = record_name(newest.path)
        if head is None or tuple(head) != (named, newest.sha256):
            raise VerificationFailed(f"{newest.path}: is not the file {db} was last in sync with "
                                     f"({head[0] if head else 'none'}, SHA-256 {head[1] if head else '-'})")
    comparison = compare_database(folders, db)
    if comparison.difference:
        raise VerificationFailed(f"{db}: {comparison.difference}")
    report.rows_compared, report.unexported_rows = comparison.rows, comparison.unexported


def verify_merged(found: dict, db: str | Path) -> Comparison:
    """Return the comparison of a merged database with every stream (name -> folders); raise naming a difference."""
    conn = open_read_only(db)
    try:
        problems = trigger_problems(conn)
    finally:
        conn.close()
    if problems:
        raise VerificationFailed(f"{db}: tampered with: {'; '.join(problems)}")
    comparison = compare_merged(found, db)
    if comparison.difference:
        raise VerificationFailed(f"{db}: {comparison.difference}")
    return comparison
