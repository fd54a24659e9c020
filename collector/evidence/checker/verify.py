#!/usr/bin/env python3
"""Checks a Takedown Watch evidence bundle offline: `python3 verify.py` in the bundle's folder.

Standard library only (Python 3.11 or later), with its own modules beside it:
verify_ssh.py (SSH signatures), verify_der.py (RFC 3161 tokens, X.509, CMS)
and verify_math.py (Ed25519, ECDSA, RSA). It re-checks every file's
SHA-256 against MANIFEST.json, the chain of export-file hashes to the head
(of each record stream: record/chain.json, record/streams/NAME/chain.json;
across the record periods a stream rolled over, each later one continuing
the file its CONTINUES.json names, kept in rows.json "periods"),
that each row of rows.json is the line of the export file it names, that each
WARC record is whole (its block digest) and the response its ledger row
points at, the SSH signatures against the allowed signers, and the RFC 3161
tokens (signature, certificate chain to the authority's root in trust/,
message imprint, time): no ssh-keygen or openssl needed. It stops at the
first failure and says where (exit code 1); exit code 0 means every check
passed; 2 means every check passed but the bundle is incomplete (some WARC records
could not be had when it was made: rows.json lists them and why).
"""

import base64
import bz2
import gzip
import hashlib
import json
import re
import sys
import tomllib
from datetime import datetime, timedelta
from pathlib import Path

verify_der = verify_ssh = None  # its own modules, imported once MANIFEST.json vouches for them (load_checks)

SIGNER = "takedownwatch-record"
NAMESPACE = "takedownwatch-record"
SKEW = timedelta(seconds=600)


class Failed(Exception):
    """A check failed; the message says where."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_manifest(root: Path) -> dict:
    try:
        manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Failed(f"MANIFEST.json: unreadable ({exc})")
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {"MANIFEST.json"}
    for name in sorted(present - set(manifest)):
        raise Failed(f"{name}: not listed in MANIFEST.json (added to the bundle)")
    for name, digest in sorted(manifest.items()):
        if name not in present:
            raise Failed(f"{name}: listed in MANIFEST.json but missing")
        if sha256(root / name) != digest:
            raise Failed(f"{name}: its SHA-256 is not the one MANIFEST.json gives (the file was changed)")
    return manifest


def chain_files(root: Path) -> dict:
    """Return each stream's chain file: record/chain.json (the default stream), record/streams/NAME/chain.json."""
    found = {}
    if (root / "record" / "chain.json").is_file():
        found["default"] = root / "record" / "chain.json"
    for path in sorted((root / "record" / "streams").glob("*/chain.json")):
        found[path.parent.name] = path
    if not found:
        raise Failed("record/chain.json: missing (no stream's chain is in the bundle)")
    return found


def stream_of(name: str) -> str:
    """Return the stream of a file named inside record/ ('streams/NAME/...' is stream NAME's)."""
    parts = name.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "streams" else "default"


def check_chains(root: Path) -> dict:
    """Check every stream's chain; return {stream: chain}. A failure names its stream when there are several."""
    chains, found = {}, chain_files(root)
    for stream, path in found.items():
        try:
            chains[stream] = check_chain(root, stream, path)
        except Failed as exc:
            raise Failed(named(len(found) > 1, stream, exc))
    listed = {entry["file"]: entry["sha256"] for chain in chains.values() for entry in chain}
    files = [p for p in (root / "record").rglob("*.jsonl*") if re.fullmatch(r"\d{6}\.jsonl(\.bz2)?", p.name)]
    for path in files:
        name = path.relative_to(root / "record").as_posix()
        if listed.get(name) != sha256(path):
            raise Failed(named(len(chains) > 1, stream_of(name), f"record/{name}: not the file the chain names"))
    return chains


def named(several, stream: str, message) -> str:
    return f"stream {stream}: {message}" if several else str(message)


def check_chain(root: Path, stream: str, path: Path) -> list:
    chain = json.loads(path.read_text(encoding="utf-8"))
    for before, after in zip(chain, chain[1:]):
        if after["previous_sha256"] != before["sha256"]:
            across = (f" (the boundary of record periods {before['period']} and {after['period']}: the chain "
                      "does not run on across it)" if before.get("period") != after.get("period") else "")
            raise Failed(f"{path.relative_to(root).as_posix()}: {after['file']} does not follow "
                         f"{before['file']}{across}")
    # record/chain.json is the chain of the files directly in record/: the default stream's, or the one
    # stream a bundle made from a stream's own folder holds; every file of a chain is one stream's.
    expected = ... if stream == "default" else stream
    for entry in chain:
        if stream_of(entry["file"]) != stream:
            raise Failed(f"record/{entry['file']}: not a file of this stream's folder")
        file = root / "record" / entry["file"]
        if not file.is_file():
            continue
        if sha256(file) != entry["sha256"]:  # before it is read: a spoiled file is named, not a damaged bundle
            raise Failed(f"record/{entry['file']}: not the file the chain names")
        said = json.loads(record_lines(file)[0]).get("stream")
        expected = said if expected is ... else expected
        if said != expected:
            raise Failed(f"record/{entry['file']}: its header does not say it is stream {expected or 'default'}'s")
    if chain and not (root / "record" / chain[-1]["file"]).is_file():
        raise Failed(f"record/{chain[-1]['file']}: the head of the chain is missing")
    return chain


def check_periods(bundle: dict, chains: dict) -> int:
    """Check each stream's later periods continue the last file of the period before; return the periods."""
    found = bundle.get("periods") or {}
    for stream, folders in found.items():
        chain = chains.get(stream, [])
        for before, later in zip(folders, folders[1:]):
            where = f"rows.json: {'stream ' + stream + ': ' if len(found) > 1 else ''}record period {later['period']}"
            link = later.get("continues")
            if not link:
                raise Failed(f"{where} ({later['folder']}) continues no earlier one")
            last = [e for e in chain if e.get("period") == before["period"]][-1:]
            if not last or (last[0]["file"], last[0]["sha256"]) != (link["file"], link["sha256"]):
                raise Failed(f"{where} ({later['folder']}) continues from {link['file']}, but the chain's "
                             f"period {before['period']} ends at {last[0]['file'] if last else 'no file'}")
    return max((len(f) for f in found.values()), default=0)


def record_lines(path: Path) -> list:
    data = path.read_bytes()
    text = bz2.decompress(data).decode("utf-8") if path.name.endswith(".bz2") else data.decode("utf-8")
    return text.split("\n")


def check_rows(root: Path, bundle: dict) -> int:
    cache = {}
    located = {(loc["table"], loc["id"]): loc for loc in bundle["lines"]}
    several = len(bundle.get("streams") or {}) > 1
    checked = 0
    for table, rows in bundle["rows"].items():
        for row in rows:
            loc = located.get((table, row["id"]))
            if loc is None:
                print(f"  note: {table} row {row['id']} is newer than the record in this bundle")
                continue
            try:
                check_row(root, table, row, loc, cache)
            except Failed as exc:
                raise Failed(named(several, stream_of(loc["file"]), exc))
            checked += 1
    return checked


def check_row(root: Path, table: str, row: dict, loc: dict, cache: dict) -> None:
    lines = cache.setdefault(loc["file"], record_lines(root / "record" / loc["file"]))
    try:
        line = json.loads(lines[loc["line"] - 1])
    except (IndexError, ValueError):
        raise Failed(f"record/{loc['file']}:{loc['line']}: not the line rows.json names")
    if line.get("t") != table or "r" not in line:
        raise Failed(f"record/{loc['file']}:{loc['line']}: not a {table} row")
    for column, value in line["r"].items():
        if isinstance(value, dict) and "$same" in value:
            continue  # written once in an earlier row of the record
        if value != row.get(column):
            raise Failed(f"rows.json: {table} row {row['id']} column {column} differs from "
                         f"record/{loc['file']}:{loc['line']}")


def check_warc(root: Path, bundle: dict) -> int:
    requests = {r["id"]: r for r in bundle["rows"]["requests"]}
    snapshots = {s["request_id"]: s for s in bundle["rows"]["snapshots"]}
    replays = {r["snapshot_id"]: r for r in bundle.get("replay") or []}
    checked = 0
    for entry in bundle["warc"]:
        if entry["file"] is None:
            print(f"  INCOMPLETE: request {entry['request_id']}: no WARC record: {entry.get('why')}")
            continue
        try:
            record = gzip.decompress((root / entry["file"]).read_bytes())
        except (OSError, EOFError) as exc:
            raise Failed(f"{entry['file']}: not a whole gzip WARC record ({exc})")
        head, _, block = record.partition(b"\r\n\r\n")
        head = head.decode("utf-8", "replace")
        fields = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
        block = block[:int(fields.get("Content-Length", len(block)))]
        if fields.get("WARC-Block-Digest") != "sha1:" + base64.b32encode(hashlib.sha1(block).digest()).decode():
            raise Failed(f"{entry['file']}: its content is not the one its WARC-Block-Digest names")
        request = requests[entry["request_id"]]
        if fields.get("WARC-Type") != "response" or fields.get("WARC-Target-URI") != request["url"]:
            raise Failed(f"{entry['file']}: not the response to request {request['id']} ({request['url']})")
        snapshot = snapshots.get(request["id"])
        if snapshot and snapshot.get("payload_digest") and fields.get("WARC-Payload-Digest") != snapshot["payload_digest"]:
            raise Failed(f"{entry['file']}: its payload digest is not snapshot {snapshot['id']}'s")
        replay = replays.get(snapshot["id"]) if snapshot else None
        if replay and "ts" in replay and (replay["ts"] != "".join(filter(str.isdigit, fields.get("WARC-Date", "")))[:14]
                                          or replay["url"] != fields.get("WARC-Target-URI")):
            raise Failed(f"rows.json: the replay of snapshot {snapshot['id']} is not at its WARC record's "
                         f"WARC-Date and address ({entry['file']})")
        checked += 1
    return checked


def check_signatures(root: Path, chain: list) -> str:
    signers = (root / "trust" / "allowed_signers").read_text(encoding="utf-8")
    files = [root / "record" / e["file"] for e in chain if (root / "record" / e["file"]).is_file()]
    for path in files:
        signature = Path(f"{path}.sig")
        where = signature.relative_to(root)
        if not signature.is_file():
            raise Failed(f"{path.relative_to(root)}: has no signature")
        try:
            verify_ssh.verify(path.read_bytes(), signature.read_text(encoding="utf-8"), signers, SIGNER, NAMESPACE)
        except (verify_ssh.Refused, ValueError) as exc:
            raise Failed(f"{where}: not a good signature of {path.name} by {SIGNER}: {exc}")
    return len(files)


def check_tokens(root: Path, chain: list) -> str:
    config = tomllib.loads((root / "trust" / "timestamping.toml").read_text(encoding="utf-8"))
    roots = {}
    for authority in config["authority"]:
        roots[authority["name"]] = [c for r in authority.get("roots", [])
                                    for c in verify_der.pem_certificates((root / "trust" / Path(r).name)
                                                                         .read_text(encoding="ascii"))]
    count = 0
    for entry in chain:
        path = root / "record" / entry["file"]
        if not path.is_file():
            continue
        header = json.loads(record_lines(path)[0])
        written = datetime.fromisoformat(header["written_at"].replace("Z", "+00:00"))
        for token in sorted(path.parent.glob(path.name + ".*.tsr")):
            authority = token.name[len(path.name) + 1:-4]
            where = token.relative_to(root)
            if authority not in roots:
                raise Failed(f"{where}: {authority} is not an authority whose roots the bundle keeps")
            try:
                stamped = verify_der.check_token(token.read_bytes(), path.read_bytes(), roots[authority])
            except (verify_der.Refused, ValueError, IndexError) as exc:
                raise Failed(f"{where}: not a good timestamp of {path.name} by {authority}: {exc}")
            if stamped < written - SKEW:
                raise Failed(f"{where}: its time {stamped} is before the file's export time {written}")
            count += 1
    return count


def per_stream(chains: dict, check) -> str:
    """Run a check over each stream's chain; return the good count, naming the stream that fails."""
    counts = {}
    for stream, chain in chains.items():
        try:
            counts[stream] = check(chain)
        except Failed as exc:
            raise Failed(named(len(chains) > 1, stream, exc))
    total = f"{sum(counts.values())} good"
    return total if len(counts) < 2 else total + " (" + ", ".join(f"stream {s}: {n}" for s, n in counts.items()) + ")"


def load_checks() -> None:
    """Import verify_der and verify_ssh from beside this script (also under python3 -I), writing no .pyc."""
    global verify_der, verify_ssh
    sys.dont_write_bytecode = True  # a __pycache__ folder would be a file the bundle does not list
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import verify_der
    import verify_ssh


def main(folder: str = ".") -> int:
    root = Path(folder)
    try:
        manifest = check_manifest(root)
        print(f"OK  {len(manifest)} files match MANIFEST.json")
        load_checks()
        bundle = json.loads((root / "rows.json").read_text(encoding="utf-8"))
        chains = check_chains(root)
        several = len(chains) > 1
        for stream, chain in chains.items():
            print(f"OK  {named(several, stream, '')}chain of {len(chain)} export files to the head "
                  f"{chain[-1]['file'] if chain else '-'}")
        spanned = check_periods(bundle, chains)
        if spanned:
            print(f"OK  the chain runs on across {spanned} record periods")
        print(f"OK  {check_rows(root, bundle)} rows are the record's lines")
        print(f"OK  {check_warc(root, bundle)} WARC records are the responses the ledger names")
        print(f"OK  signatures: {per_stream(chains, lambda c: check_signatures(root, c))}")
        print(f"OK  timestamp tokens: {per_stream(chains, lambda c: check_tokens(root, c))}")
        missing = bundle.get("incomplete") or []
        if missing or any(e["file"] is None for e in bundle["warc"]):
            print(f"INCOMPLETE: every check passed, but {len(missing)} WARC record(s) are not in this bundle "
                  "(rows.json, \"incomplete\", says which and why)")
            return 2
    except Failed as exc:
        print(f"FAILED  {exc}")
        return 1
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"FAILED  the bundle is damaged: {type(exc).__name__}: {exc}")
        return 1
    print("VERIFIED: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
