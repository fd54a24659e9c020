#!/usr/bin/env python3
"""Checks a Takedown Watch evidence bundle offline: `python3 verify.py` in the bundle's folder.

Standard library only (Python 3.11 or later). It re-checks every file's
SHA-256 against MANIFEST.json, the chain of export-file hashes to the head,
that each row of rows.json is the line of the export file it names, that each
WARC record is whole (its block digest) and the response its ledger row
points at, the SSH signatures
(with ssh-keygen, when installed) and the RFC 3161 tokens (with openssl, when
installed; otherwise their digest and time only). It stops at the first
failure and says where (exit code 1); exit code 0 means every check passed;
2 means every check passed but the bundle is incomplete (some WARC records
could not be had when it was made: rows.json lists them and why).
"""

import base64
import bz2
import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

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


def check_chain(root: Path) -> list:
    chain = json.loads((root / "record" / "chain.json").read_text(encoding="utf-8"))
    for before, after in zip(chain, chain[1:]):
        if after["previous_sha256"] != before["sha256"]:
            raise Failed(f"record/chain.json: {after['file']} does not follow {before['file']}")
    listed = {entry["file"]: entry["sha256"] for entry in chain}
    files = [p for p in (root / "record").rglob("*.jsonl*") if re.fullmatch(r"\d{6}\.jsonl(\.bz2)?", p.name)]
    for path in files:
        name = path.relative_to(root / "record").as_posix()
        if listed.get(name) != sha256(path):
            raise Failed(f"record/{name}: not the file the chain names")
    if chain and not (root / "record" / chain[-1]["file"]).is_file():
        raise Failed(f"record/{chain[-1]['file']}: the head of the chain is missing")
    return chain


def record_lines(path: Path) -> list:
    data = path.read_bytes()
    text = bz2.decompress(data).decode("utf-8") if path.name.endswith(".bz2") else data.decode("utf-8")
    return text.split("\n")


def check_rows(root: Path, bundle: dict) -> int:
    cache = {}
    located = {(loc["table"], loc["id"]): loc for loc in bundle["lines"]}
    checked = 0
    for table, rows in bundle["rows"].items():
        for row in rows:
            loc = located.get((table, row["id"]))
            if loc is None:
                print(f"  note: {table} row {row['id']} is newer than the record in this bundle")
                continue
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
            checked += 1
    return checked


def check_warc(root: Path, bundle: dict) -> int:
    requests = {r["id"]: r for r in bundle["rows"]["requests"]}
    snapshots = {s["request_id"]: s for s in bundle["rows"]["snapshots"]}
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
        checked += 1
    return checked


def check_signatures(root: Path, chain: list) -> str:
    keygen = shutil.which("ssh-keygen")
    files = [root / "record" / e["file"] for e in chain if (root / "record" / e["file"]).is_file()]
    if keygen is None:
        return "not checked (ssh-keygen not installed)"
    for path in files:
        signature = Path(f"{path}.sig")
        if not signature.is_file():
            raise Failed(f"{path.relative_to(root)}: has no signature")
        with open(path, "rb") as data:
            done = subprocess.run([keygen, "-Y", "verify", "-f", str(root / "trust" / "allowed_signers"),
                                   "-I", SIGNER, "-n", NAMESPACE, "-s", str(signature)],
                                  stdin=data, capture_output=True, text=True)
        if done.returncode != 0:
            raise Failed(f"{signature.relative_to(root)}: not a good signature of {path.name} by {SIGNER}")
    return f"{len(files)} good"


def check_tokens(root: Path, chain: list) -> str:
    config = tomllib.loads((root / "trust" / "timestamping.toml").read_text(encoding="utf-8"))
    roots = {a["name"]: [root / "trust" / Path(r).name for r in a.get("roots", [])] for a in config["authority"]}
    openssl = shutil.which("openssl")
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
            data = token.read_bytes()
            if hashlib.sha256(path.read_bytes()).digest() not in data:
                raise Failed(f"{where}: does not hold {path.name}'s SHA-256")
            when = re.search(rb"\x18[\x0f-\x17](\d{14})(?:\.\d+)?Z", data)
            if when is None:
                raise Failed(f"{where}: no time in it")
            stamped = datetime.strptime(when.group(1).decode(), "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
            if stamped < written - SKEW:
                raise Failed(f"{where}: its time {stamped} is before the file's export time {written}")
            if openssl and authority in roots:
                done = subprocess.run([openssl, "ts", "-verify", "-in", str(token), "-data", str(path),
                                       "-CAfile", str(roots[authority][0])], capture_output=True, text=True)
                if done.returncode != 0:
                    raise Failed(f"{where}: openssl ts -verify refuses it under {authority}'s root")
            count += 1
    return f"{count} good" + ("" if openssl else " (digest and time only: openssl not installed)")


def main(folder: str = ".") -> int:
    root = Path(folder)
    try:
        manifest = check_manifest(root)
        print(f"OK  {len(manifest)} files match MANIFEST.json")
        bundle = json.loads((root / "rows.json").read_text(encoding="utf-8"))
        chain = check_chain(root)
        print(f"OK  chain of {len(chain)} export files to the head {chain[-1]['file'] if chain else '-'}")
        print(f"OK  {check_rows(root, bundle)} rows are the record's lines")
        print(f"OK  {check_warc(root, bundle)} WARC records are the responses the ledger names")
        print(f"OK  signatures: {check_signatures(root, chain)}")
        print(f"OK  timestamp tokens: {check_tokens(root, chain)}")
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
