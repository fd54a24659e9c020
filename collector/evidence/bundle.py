"""A one-article evidence bundle: everything the record holds about one address, checkable offline.

The folder (and a zip of it) holds the article's rows (articles, addresses,
snapshots, checks, events, differences by vantage, Internet Archive
submissions and their copy addresses), every ledger row of every request about it, the WARC records of
those exchanges cut from the local WARC files (or read from the release
asset the record names for the file, each download a ledger row), where each snapshot replays in
its day's WACZ (at its record's WARC-Date: rows.json "replay"), the export files whose lines
hold those rows with their signatures and tokens, the chain of every later
file's hashes to the newest signed, timestamped head, the trust material
(allowed signers, the authorities' roots), VERIFY.md in English and Bangla,
and verify.py with its modules (collector/evidence/checker/, standard library
only: no ssh-keygen or openssl either).
MANIFEST.json names every file with its SHA-256. A bundle is for the people
handling a case; the site never publishes one.

A record written by several jobs is read through the database that merges
its streams: the bundle holds every stream's rows about the article (both
vantages' snapshots and checks), each as its stream's file holds it, and
each such stream's files with its own chain (record/streams/NAME/chain.json),
signatures and tokens (collector/evidence/bundle_streams.py).

A record that rolled over into a new period's repository is given as its
periods' folders, oldest first: the bundle holds the article's rows from every
period's files and each stream's chain across the periods (each entry naming
its period; rows.json "periods" keeps each later folder's CONTINUES.json).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from collector.errors import BadArgument
from collector.evidence import sshsig
from collector.evidence.replay import ReplayError, replay_of
from collector.evidence.timestamps import token_path, tokens_beside
from collector.evidence.bundle_streams import add_folded, as_written, check_database, label, record_streams
from collector.net.warcread import WarcReadError, response_of
from collector.record.contents import check_folder
from collector.record.fileformat import ExportError, encode_value, file_sha256, read_header, read_lines, row_of
from collector.record.folder import continues, read_ahead
from collector.urls import comparison_key

CHECKER = Path(__file__).with_name("checker")  # verify.py and its modules, standard library only
TEXTS = Path(__file__).with_name("bundle_texts.md")


@dataclass
class Bundle:
    """What was written: the zip, and each WARC record the bundle could not get (request id, why)."""

    archive: Path
    missing: list[dict]
    downloads: list[int]

    @property
    def complete(self) -> bool:
        return not self.missing


def write_bundle(conn, address: str, out: Path, record_dir: Path | list, warc_dir: Path, trust_dir: Path,
                 warc_store: Callable | None = None) -> Bundle:
    """Return what was written: the bundle of one article in the folder `out`, and a zip beside it.

    A WARC record not in the local WARC files is read from the release asset
    its file's warc_files row names, through `warc_store()` (a
    net.releases.ReleaseStore, made on first need: every download is a ledger
    row). A record that cannot be had is listed in rows.json under
    "incomplete" with why, and the bundle is incomplete: verify.py says so and
    exits 2, not 0. `record_dir` may be a list: the record repositories of
    successive periods, oldest first (each stream's chain is checked across
    them first, and the command refused naming the file that is not whole).
    """
    records = [Path(r) for r in (record_dir if isinstance(record_dir, (list, tuple)) else [record_dir])]
    found = record_streams(records)
    check_database(conn, found, records[-1])
    rows = article_rows(conn, address)
    merged, folded = as_written(conn, rows, list(found))
    if out.exists() and any(out.iterdir()):
        raise BadArgument(f"{out} exists and is not empty", option="--out")
    out.mkdir(parents=True, exist_ok=True)
    locations, chains, folded_rows = _copy_record(rows, found, records, out / "record", folded)
    add_folded(rows, folded_rows)
    warc, downloads = _cut_warc(conn, rows["requests"], Path(warc_dir), out / "warc", warc_store)
    missing = [{"request_id": e["request_id"], "warc_file": e["warc_file"], "why": e["why"]}
               for e in warc if e["file"] is None]
    download_rows = [dict(r) for r in conn.execute(
        f"SELECT * FROM requests WHERE id IN ({', '.join('?' for _ in downloads)}) ORDER BY id", downloads)]
    _dump(out / "rows.json", {"address": address, "rows": rows, "lines": locations, "warc": warc,
                              "downloads": download_rows, "incomplete": missing, "streams": chains,
                              "merged": merged, "periods": periods(found, records),
                              "replay": replays(rows, warc, out)})
    trust = out / "trust"
    trust.mkdir()
    for item in [Path(trust_dir) / "allowed_signers", Path(trust_dir) / "timestamping.toml",
                 *Path(trust_dir).rglob("*.pem")]:
        if item.is_file():
            shutil.copy(item, trust / item.name)
    for module in sorted(CHECKER.glob("*.py")):
        shutil.copy(module, out / module.name)
    shutil.copy(TEXTS, out / "VERIFY.md")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    _dump(out / "MANIFEST.json", {name: file_sha256(out / name) for name in files})
    archive = out.with_name(out.name + ".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(out.rglob("*")):
            if path.is_file():
                bundle.write(path, f"{out.name}/{path.relative_to(out).as_posix()}")
    return Bundle(archive, missing, downloads)


def article_rows(conn, address: str) -> dict[str, list[dict]]:
    """Return every row the database holds about the article at an address, by table."""
    key = comparison_key(address)
    found = conn.execute("SELECT a.* FROM articles a WHERE a.url_key = ? UNION SELECT a.* FROM articles a "
                         "JOIN article_urls u ON u.article_id = a.id WHERE u.url_key = ?", (key, key)).fetchall()
    if not found:
        raise BadArgument(f"no article in the record has the address {address}", option="ADDRESS")
    ids = [r["id"] for r in found]
    marks = ", ".join("?" for _ in ids)

    def select(sql: str, params=()) -> list[dict]:
        return [dict(r) for r in conn.execute(sql, params)]

    rows = {"articles": [dict(r) for r in found],
            "article_urls": select(f"SELECT * FROM article_urls WHERE article_id IN ({marks}) ORDER BY id", ids),
            "snapshots": select(f"SELECT * FROM snapshots WHERE article_id IN ({marks}) ORDER BY id", ids),
            "checks": select(f"SELECT * FROM checks WHERE article_id IN ({marks}) ORDER BY id", ids),
            "events": select(f"SELECT * FROM events WHERE article_id IN ({marks}) ORDER BY id", ids),
            # Answers to it that differed by vantage, each naming both requests (collect/vantages.py).
            "vantage_differences": select(f"SELECT * FROM vantage_differences WHERE article_id IN ({marks}) "
                                          "ORDER BY id", ids)}
    snapshot_ids = [s["id"] for s in rows["snapshots"]] or [0]
    rows["archive_submissions"] = select(
        f"SELECT * FROM archive_submissions WHERE snapshot_id IN ({', '.join('?' for _ in snapshot_ids)}) "
        "ORDER BY id", snapshot_ids)
    wanted = {r["request_id"] for table in ("snapshots", "checks", "archive_submissions")
              for r in rows[table] if r.get("request_id")}
    wanted |= {i for c in rows["checks"] for i in json.loads(c["request_chain"] or "[]")}
    wanted |= {d[side] for d in rows["vantage_differences"] for side in ("request_a", "request_b")}
    keys = {a["url_key"] for a in rows["articles"]} | {u["url_key"] for u in rows["article_urls"]}
    urls = {a["url"] for a in rows["articles"]} | {u["url"] for u in rows["article_urls"]}
    url_marks = ", ".join("?" for _ in urls)
    wanted |= {r[0] for r in conn.execute(f"SELECT id FROM requests WHERE url IN ({url_marks})", list(urls))}
    requests = select(f"SELECT * FROM requests WHERE id IN ({', '.join('?' for _ in wanted or [0])}) ORDER BY id",
                      list(wanted or [0]))
    rows["requests"] = [r for r in requests if r["id"] in wanted or comparison_key(r["url"]) in keys]
    return rows


def _copy_record(rows: dict[str, list[dict]], found: dict[str | None, list[Path]], records: list[Path],
                 target: Path, folded: set) -> tuple[list[dict], dict[str, str], dict[tuple[str, int], dict]]:
    """Copy the export files holding the rows (with signatures and tokens), each stream's chain to its head.

    Return where each row's line is, each stream's chain file in the bundle
    (record/chain.json for the default stream, record/streams/NAME/chain.json
    for stream NAME), and the folded rows (`folded`) as their lines hold them.
    A stream's chain runs across the periods' folders (`records`, oldest
    first); each file is named inside its period's folder (file names do not
    repeat across periods: a new period's first file is the copy of the old
    one's last, listed once, as the older period's).
    """
    wanted = {(table, r["id"]) for table, items in rows.items() for r in items} | folded
    locations, holding, lines_of, from_lines, where = [], set(), {}, {}, {}
    chained = {}
    for name, folders in found.items():
        try:
            chained[name] = [facts.path for facts in check_folder(folders)]
        except ExportError as exc:
            raise BadArgument(f"the record does not verify ({exc}): check it with export verify", option="--record")
    for name, files in chained.items():
        for path in files:
            where[path] = next(i for i, r in enumerate(records, 1) if path.is_relative_to(r))
        for path, text in read_ahead(files):
            if isinstance(text, Exception):
                raise text
            for number, line in enumerate(read_lines(path, text), start=2):
                if "r" in line and (line["t"], line["r"].get("id")) in wanted:
                    relative = _inside(path, records)
                    locations.append({"table": line["t"], "id": line["r"]["id"], "file": relative, "line": number})
                    holding.add(path)
                    lines_of[name] = files
                    if (line["t"], line["r"]["id"]) in folded:
                        from_lines[(line["t"], line["r"]["id"])] = row_of(line)[2]
    if not lines_of:  # no row is in the record yet: every stream's chain to its head
        lines_of = dict(chained)
    target.mkdir(parents=True)
    chains = {}
    for name, files in lines_of.items():
        if files:
            holding.add(files[-1])  # the head the chain runs to
        inside = Path(_inside(found[name][-1], records))
        (target / inside).mkdir(parents=True, exist_ok=True)
        _dump(target / inside / "chain.json",
              [{"file": _inside(p, records), "sha256": file_sha256(p),
                "previous_sha256": read_header(p).get("previous_sha256"),
                **({"period": where[p]} if len(records) > 1 else {})} for p in files])
        chains[label(name)] = (Path("record") / inside / "chain.json").as_posix()
    for path in sorted(holding):
        for item in [path, sshsig.signature_path(path), *(token_path(path, a) for a in tokens_beside(path))]:
            if item.exists():
                (target / _inside(item, records)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(item, target / _inside(item, records))
    return locations, chains, from_lines


def _inside(path: Path, records: list[Path]) -> str:
    """Return a path of a period's record folder as named inside it (and inside the bundle's record/)."""
    for record in records:
        if path == record or path.is_relative_to(record):
            return path.relative_to(record).as_posix()
    raise ValueError(f"{path} is in none of the record folders given")


def periods(found: dict[str | None, list[Path]], records: list[Path]) -> dict[str, list[dict]]:
    """Return each stream's period folders, oldest first, with what each CONTINUES.json says (None: the first)."""
    if len(records) < 2:
        return {}
    def period(folder: Path) -> int:
        return next(n for n, record in enumerate(records, 1) if folder.is_relative_to(record))

    return {label(name): [{"period": period(f), "folder": records[period(f) - 1].name, "continues": continues(f)}
                          for f in folders] for name, folders in found.items()}


def replays(rows: dict, warc: list[dict], out: Path) -> list[dict]:
    """Return where each snapshot replays in its day's WACZ, at the WARC-Date of its record as cut into the bundle.

    Never at captured_at: it is set after the exchange, up to a second or
    more later, and ReplayWeb.page, asked for that time, would open the next
    capture of the address (collector/evidence/replay.py).
    """
    files = {e["request_id"]: e["file"] for e in warc if e["file"]}
    found = []
    for snapshot in rows.get("snapshots", []):
        entry = {"snapshot_id": snapshot["id"], "captured_at": snapshot["captured_at"]}
        name = files.get(snapshot["request_id"])
        try:
            if name is None:
                raise ReplayError("its WARC record is not in this bundle")
            got = response_of((out / name).read_bytes(), name)
            entry.update(replay_of(snapshot["warc_file"], got.warc_date, got.target_uri).as_row())
        except (ReplayError, WarcReadError) as exc:
            entry["why"] = str(exc)
        found.append(entry)
    return found


def _cut_warc(conn, requests: list[dict], warc_dir: Path, target: Path,
              warc_store: Callable | None) -> tuple[list[dict], list[int]]:
    """Return (an entry per WARC record, the ids of the download requests made) after copying each record.

    Each request's response record (a gzip member: a WARC file of its own) is
    cut from the local WARC file, else read from its file's release asset.
    """
    target.mkdir(parents=True)
    cut, downloads, store = [], [], None
    for row in requests:
        if row.get("warc_file") is None:
            continue
        source = warc_dir / row["warc_file"]
        entry = {"request_id": row["id"], "warc_file": row["warc_file"], "offset": row["warc_offset"],
                 "length": row["warc_length"], "file": None, "from": None, "why": None}
        data = None
        if source.is_file():
            with open(source, "rb") as fh:
                fh.seek(row["warc_offset"])
                data = fh.read(row["warc_length"])
            entry["from"] = "local WARC file"
        else:
            if warc_store is not None and store is None and _asset_of(conn, row) is not None:
                store = warc_store()
            data = _from_release(conn, row, store, entry)
            downloads += entry.get("download_requests", [])
        if data is not None:
            entry["file"] = f"warc/request-{row['id']}.warc.gz"
            (target / f"request-{row['id']}.warc.gz").write_bytes(data)
        cut.append(entry)
    return cut, downloads


def _asset_of(conn, row: dict):
    return conn.execute("SELECT release_tag, asset_name FROM warc_files WHERE name = ? ORDER BY id DESC LIMIT 1",
                        (row["warc_file"],)).fetchone()


def _from_release(conn, row: dict, store, entry: dict) -> bytes | None:
    """Return the request's WARC record read from its file's release asset, or None with entry["why"] set."""
    asset = _asset_of(conn, row)
    if asset is None:
        entry["why"] = "not in the local WARC files, and no release asset is recorded for its file"
        return None
    where = f"release asset {asset[0]}/{asset[1]}"
    if store is None:
        entry["why"] = f"not in the local WARC files; {where} not asked (no release store given: --warc-store)"
        return None
    got = store.read(asset[0], asset[1], row["warc_offset"], row["warc_length"])
    entry["download_requests"] = list(got.requests)
    if got.data is None:
        entry["why"] = f"not in the local WARC files; {where}: {got.problem}"
        return None
    entry["from"] = where
    return got.data


def _dump(path: Path, value) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True,
                               default=encode_value) + "\n", encoding="utf-8")
