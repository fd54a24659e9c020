"""RFC 3161 timestamps of export files, from independent authorities, checked offline.

After each export the new file's SHA-256 is sent to every authority of
data/trust/timestamping.toml as an RFC 3161 query (built and read with Trail
of Bits' rfc3161-client, as Bellingcat's auto-archiver does), through the one
polite fetcher, so every query and answer is in the ledger and the WARC file.
The answer is kept beside the file as `NNNNNN.jsonl.bz2.<authority>.tsr` and
committed with it. An authority that fails leaves no token; the next run asks
again for every file still missing one, so collection never waits on it.

A token is checked offline: its signature chains to the roots this repository
keeps for its authority, its message imprint is the file's SHA-256, and its
time is no earlier than the export time the file's header states (less the
allowed clock skew); a token much later than that is reported as late.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from cryptography import x509
from rfc3161_client import (
    HashAlgorithm, PKIStatus, TimestampRequestBuilder, VerificationError, VerifierBuilder, decode_timestamp_response,
)

from collector import settings
from collector.clock import parse_instant
from collector.errors import TakedownWatchError
from collector.record.fileformat import read_header
from collector.record.folder import batches

CONFIG = "timestamping.toml"
QUERY_TYPE = "application/timestamp-query"  # RFC 3161 section 3.4
REPLY_TYPE = "application/timestamp-reply"


class TimestampError(TakedownWatchError):
    """A timestamp token is missing its authority, malformed, or does not vouch for its file."""


@dataclass(frozen=True)
class Authority:
    """One time-stamping authority: its name, address, and the root certificates its tokens chain to."""

    name: str
    url: str
    roots: tuple[x509.Certificate, ...]


@dataclass(frozen=True)
class TokenCheck:
    """A token that verified: its authority, its time, and how long after the export it came."""

    authority: str
    gen_time: datetime
    delay: timedelta

    @property
    def late(self) -> bool:
        return self.delay > timedelta(hours=settings.TIMESTAMP_LATE_HOURS)


def load_authorities(trust_dir: str | Path) -> list[Authority]:
    """Return the authorities of trust_dir/timestamping.toml, their roots read from the repository."""
    root = Path(trust_dir)
    try:
        config = tomllib.loads((root / CONFIG).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TimestampError(f"cannot read {root / CONFIG}: {exc}") from exc
    authorities = []
    for entry in config.get("authority", []):
        certificates: list[x509.Certificate] = []
        for name in entry.get("roots", []):
            try:
                certificates += x509.load_pem_x509_certificates((root / name).read_bytes())
            except (OSError, ValueError) as exc:
                raise TimestampError(f"authority {entry.get('name')}: cannot read root {name}: {exc}") from exc
        authorities.append(Authority(entry["name"], entry["url"], tuple(certificates)))
    return authorities


def token_path(path: Path, authority: str) -> Path:
    """Return where an authority's token for an export file is kept: beside it."""
    return Path(f"{path}.{authority}.tsr")


def query(path: Path) -> tuple[object, bytes]:
    """Return (the request, its DER bytes) asking for a timestamp of the file's SHA-256."""
    request = (TimestampRequestBuilder().data(path.read_bytes()).hash_algorithm(HashAlgorithm.SHA256)
               .nonce(nonce=True).cert_request(cert_request=True).build())
    return request, request.as_bytes()


def accept(path: Path, authority: Authority, request, answer: bytes) -> TokenCheck:
    """Return the check of an authority's answer to our request, and keep it beside the file.

    Raises TimestampError (and keeps nothing) unless the answer verifies: the
    request's nonce, the authority's roots, the file's digest, the time.
    """
    builder = VerifierBuilder.from_request(request)
    response = _verify(path, authority, answer, builder)
    check = _time_check(path, authority.name, response)
    target = token_path(path, authority.name)
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as fh:
        fh.write(answer)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(partial, target)
    return check


def check_token(path: Path, authority: Authority) -> TokenCheck:
    """Return the check of the token kept beside the file; raise TimestampError when it does not vouch for it."""
    target = token_path(path, authority.name)
    try:
        answer = target.read_bytes()
    except OSError as exc:
        raise TimestampError(f"{target.name}: cannot read it ({exc})") from exc
    response = _verify(path, authority, answer, VerifierBuilder())
    return _time_check(path, authority.name, response)


def tokens_beside(path: Path) -> list[str]:
    """Return the names of the authorities whose tokens sit beside an export file."""
    prefix = path.name + "."
    return sorted(p.name[len(prefix):-len(".tsr")] for p in path.parent.glob(f"{path.name}.*.tsr"))


def _verify(path: Path, authority: Authority, answer: bytes, builder: VerifierBuilder):
    name = token_path(path, authority.name).name
    if not authority.roots:
        raise TimestampError(f"{name}: no root certificate of {authority.name} is kept in the repository")
    try:
        response = decode_timestamp_response(answer)
    except ValueError as exc:
        raise TimestampError(f"{name}: not an RFC 3161 answer ({exc})") from exc
    if response.status not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
        # RFC 3161 2.4.2: any other status carries no token (rejection, waiting, revocation).
        said = "; ".join(response.status_string)
        raise TimestampError(f"{name}: the authority answered {PKIStatus(response.status).name.lower()}"
                             + (f" ({said})" if said else "") + ", no token")
    digest = hashlib.sha256(path.read_bytes()).digest()
    embedded = [x509.load_der_x509_certificate(c) for c in response.signed_data.certificates]
    problems = []
    for root in authority.roots:
        verifier = builder.add_root_certificate(root)
        for certificate in embedded:
            if certificate != root:
                verifier = verifier.add_intermediate_certificate(certificate)
        try:
            verifier.build().verify(response, digest)
            return response
        except VerificationError as exc:
            problems.append(str(exc))
    raise TimestampError(f"{name}: does not vouch for {path.name} under {authority.name}'s roots "
                         f"({'; '.join(sorted(set(problems)))})")


def _time_check(path: Path, authority: str, response) -> TokenCheck:
    gen_time = response.tst_info.gen_time
    if gen_time.tzinfo is None:
        gen_time = gen_time.replace(tzinfo=timezone.utc)
    written = parse_instant(read_header(path)["written_at"])
    delay = gen_time - written
    if delay < -timedelta(seconds=settings.TIMESTAMP_CLOCK_SKEW_SECONDS):
        raise TimestampError(f"{token_path(path, authority).name}: the token's time {gen_time:%Y-%m-%dT%H:%M:%SZ} "
                             f"is before the file's export time {written:%Y-%m-%dT%H:%M:%SZ}")
    return TokenCheck(authority, gen_time, delay)


# -- asking the authorities -------------------------------------------------------------

@dataclass
class StampReport:
    """What one timestamping pass did: tokens kept, and each authority's refusal or failure."""

    kept: list[tuple[str, str, TokenCheck]]  # (file, authority, check)
    failed: list[tuple[str, str, str]]  # (file, authority, why)


def stamp_missing(fetcher, out_dir: str | Path, authorities: list[Authority]) -> StampReport:
    """Return what was kept after asking each authority for a token of every file still missing one.

    Every query and answer goes through the fetcher (a ledger row and WARC
    records each); a failure is reported and left for the next run.
    """
    report = StampReport([], [])
    root = Path(out_dir)
    for path in batches(root, tail=True):  # a sparse checkout holds the newest days: the files still unstamped
        have = set(tokens_beside(path))
        for authority in authorities:
            if authority.name in have:
                continue
            name = path.relative_to(root).as_posix()
            request, body = query(path)
            response = fetcher.request("POST", authority.url, purpose="timestamp", robots=False, data=body,
                                       headers={"Content-Type": QUERY_TYPE, "Accept": REPLY_TYPE}, attempts=1)
            if not response.ok:
                report.failed.append((name, authority.name, f"{response.result} {response.status or ''}".strip()))
                continue
            try:
                report.kept.append((name, authority.name, accept(path, authority, request, response.body)))
            except TimestampError as exc:
                report.failed.append((name, authority.name, str(exc)))
    return report
