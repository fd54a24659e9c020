"""Evidence checks: export files without a good signature, not verified as their stream's own, without tokens
from two authorities, authorities failing.

The export files of the last settings.HEALTH_EVIDENCE_DAYS in the record
folder (every stream's) are verified as `evidence verify` does, one by one:
their signature against the allowed signers of the trust folder, each token
beside them against its authority's roots. Time-stamp requests are in the
requests ledger (purpose 'timestamp', host the authority's). The unsigned
files of every stream, whatever their age, are judged as `export sign` judges
them (collector/evidence/signing.py): those it would refuse fail.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from collector import settings
from collector.clock import iso, parse_instant
from collector.evidence import sshsig
from collector.evidence.signing import UNKNOWN, judge
from collector.evidence.verify import SIGNERS_FILE
from collector.evidence.timestamps import TimestampError, check_token, load_authorities, tokens_beside
from collector.health.checks import FAIL, OK, WARN, Check, Finding, Inputs, grade, hours
from collector.record import streams, written
from collector.record.fileformat import ExportError, read_header
from collector.record.folder import batches, day_of, record_name


def recent_files(inputs: Inputs) -> list[tuple[Path, str]]:
    """Return (export file, its written_at) of the last days, every stream's; raise ExportError on a broken folder."""
    first_day = (inputs.now - timedelta(days=settings.HEALTH_EVIDENCE_DAYS)).strftime("%Y/%m/%d")
    found = []
    for name in [None, *streams.named_streams(inputs.record_dir)]:
        folder = streams.folder(inputs.record_dir, name)
        for path in batches(folder, tail=True):
            day = day_of(path.relative_to(folder).as_posix())
            if day and "/".join(day) >= first_day:
                found.append((path, read_header(path).get("written_at", "")))
    return found


def _not_judged(check_id: str, why: str) -> list[Finding]:
    return [Finding(check_id, None, OK, None, None, f"not judged: {why}")]


def _label(inputs: Inputs, path: Path) -> str:
    return path.relative_to(inputs.record_dir).as_posix() if inputs.record_dir else record_name(path)


def signatures(inputs: Inputs) -> list[Finding]:
    """Return the recent export files whose signature is missing or not good (a failure at once)."""
    if inputs.record_dir is None:
        return _not_judged("evidence-signature", "no --record folder given")
    signers = Path(inputs.trust_dir or settings.TRUST_DIR) / SIGNERS_FILE
    try:
        files = recent_files(inputs)
    except ExportError as exc:
        return [Finding("evidence-signature", None, FAIL, None, None, f"the record folder does not read: {exc}")]
    bad = []
    for path, _ in files:
        try:
            sshsig.verify(path, settings.RECORD_SIGNER, signers, settings.RECORD_SIGNING_NAMESPACE)
        except sshsig.SignatureError as exc:
            bad.append(f"{_label(inputs, path)} ({str(exc).split(': ', 1)[-1]})")
    return [Finding("evidence-signature", None, FAIL if bad else OK, len(bad), (1, 1),
                    f"{len(bad)} of {len(files)} export files of {settings.HEALTH_EVIDENCE_DAYS} days without a "
                    "good signature" + (f": {'; '.join(bad[:5])}" if bad else ""))]


def unverified(inputs: Inputs) -> list[Finding]:
    """Return, per stream, the unsigned export files its signing refuses (a failure at once), naming each.

    On a stream's own working database, a file it did not write is refused;
    on any other (the one that follows every stream), an unsigned file after a
    signed one is: the stream's jobs sign each file before they push it.
    """
    if inputs.record_dir is None:
        return _not_judged("evidence-unverified", "no --record folder given")
    signers = Path(inputs.trust_dir or settings.TRUST_DIR) / SIGNERS_FILE
    mine = streams.stream_of(inputs.conn)
    found, unsigned = [], 0
    for name in [None, *streams.named_streams(inputs.record_dir)]:
        folder = streams.folder(inputs.record_dir, name)
        label = folder.relative_to(inputs.record_dir).as_posix()
        try:
            judged = judge(folder, signers, name, written.files(inputs.conn) if name == mine else UNKNOWN)
        except ExportError as exc:
            found.append(Finding("evidence-unverified", label, FAIL, None, None, f"the folder does not read: {exc}"))
            continue
        unsigned += len(judged.to_sign)
        if judged.refused:
            named = "; ".join(f"{_label(inputs, p)} ({why})" for p, why in judged.refused[:5])
            found.append(Finding("evidence-unverified", label, FAIL, len(judged.refused), (1, 1),
                                 f"{len(judged.refused)} export file(s) its signing refuses: {named}"))
    return found or [Finding("evidence-unverified", None, OK, 0, (1, 1),
                             f"no unsigned export file the signing refuses ({unsigned} awaiting their own job's)")]


def tokens(inputs: Inputs) -> list[Finding]:
    """Return the recent export files with fewer good tokens than required, past their grace."""
    if inputs.record_dir is None:
        return _not_judged("evidence-tokens", "no --record folder given")
    try:
        authorities = {a.name: a for a in load_authorities(inputs.trust_dir or settings.TRUST_DIR)}
        files = recent_files(inputs)
    except (TimestampError, ExportError) as exc:
        return [Finding("evidence-tokens", None, FAIL, None, None, f"cannot judge the tokens: {exc}")]
    waiting, late = [], []
    for path, written in files:
        good = 0
        for name in tokens_beside(path):
            try:
                good += bool(name in authorities and check_token(path, authorities[name]))
            except TimestampError:
                continue
        age = hours(inputs.now, parse_instant(written)) if written else 0.0
        if good < settings.TIMESTAMP_MIN_AUTHORITIES and age >= settings.HEALTH_TOKENS_GRACE_HOURS:
            (late if age >= settings.TIMESTAMP_LATE_HOURS else waiting).append(f"{_label(inputs, path)} ({good})")
    state = FAIL if late else WARN if waiting else OK
    short = late + waiting
    return [Finding("evidence-tokens", None, state, len(short),
                    (settings.HEALTH_TOKENS_GRACE_HOURS, settings.TIMESTAMP_LATE_HOURS),
                    f"{len(short)} of {len(files)} export files with fewer than {settings.TIMESTAMP_MIN_AUTHORITIES} "
                    f"good tokens past {settings.HEALTH_TOKENS_GRACE_HOURS:g} h ({len(late)} past "
                    f"{settings.TIMESTAMP_LATE_HOURS} h)" + (f": {'; '.join(short[:5])}" if short else ""))]


def authorities_failing(inputs: Inputs) -> list[Finding]:
    """Return per authority (host) its time-stamp requests that failed in a row."""
    rows = inputs.conn.execute(
        "SELECT host, result FROM requests WHERE purpose = 'timestamp' AND started_at >= ? "
        "ORDER BY host, started_at DESC, id DESC",
        (iso(inputs.now - timedelta(days=settings.HEALTH_EVIDENCE_DAYS)),)).fetchall()
    streaks: dict[str, list] = {}
    for row in rows:
        streak = streaks.setdefault(row["host"], [0, False])
        if streak[1]:
            continue
        if row["result"] == "ok":
            streak[1] = True
        else:
            streak[0] += 1
    thresholds = settings.HEALTH_AUTHORITY_FAILURES
    return [Finding("evidence-authority", host, grade(n, thresholds), n, thresholds,
                    f"{n} time-stamp request(s) in a row failed")
            for host, (n, _) in sorted(streaks.items())]


CHECKS = [
    Check("evidence-signature", "Export files without a good signature", "evidence", signatures),
    Check("evidence-unverified", "Unsigned export files not verified as their stream's own (signing refuses them)",
          "evidence", unverified),
    Check("evidence-tokens", "Export files without tokens from two authorities", "evidence", tokens),
    Check("evidence-authority", "Time-stamp requests to one authority failing in a row", "evidence",
          authorities_failing),
]
