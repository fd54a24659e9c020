"""Changed events: a present check's snapshot against the article's one before, across extractors too.

Two snapshots made by one extractor are compared as stored. When the
extractors differ (the software was upgraded between them) a stored value may
differ only because the software now reads the page differently, so each side
the current extractor did not make is read again by it, from its own HTML:

* the same bytes at the same address (html_sha256 and final_url equal) read
  the same: the current extractor's reading of one side is the other's;
* the snapshot's WARC record in the WARC folder, when this runner has it;
* on a fresh runner the folder is empty: the record is read from its WARC
  file's release asset (table warc_files names it), a byte range through the
  fetcher (collector/net/releases.py), after the run's checks.

The snapshot before need not be held: the snapshots' projection
(collector/record/fold_latest.py) holds the digests of its values and where its
page is, so a field whose digest is the newer value's is unchanged, and only a
changed field's older value is read back (`held_values`).

Every such comparison is a `comparisons` row. While the HTML cannot be had the
check is recorded as not comparable and no event is written: never "changed"
on the strength of two different extractors. Later runs try again, at most
settings.COMPARISONS_PER_RUN a run, oldest first, for
settings.COMPARISON_RETRY_DAYS; a comparison made late records its events
then, dated by the two snapshots it compared.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

from collector import settings
from collector.clock import iso
from collector.collect.events import FIELDS, current_extractor, differs, record_event, stored, values_from_html
from collector.net.warcread import WarcReadError, read_response, response_of
from collector.record import fold_latest, reader
from collector.record.fileformat import ExportError
from collector.record.streams import next_id


def prepare(ctx, conn, new, warc_root: str | Path) -> dict:
    """Return what comparing `new` with the article's snapshot before it needs: that snapshot and its values.

    The costly part of a comparison (an older text read back, a page read again
    from its WARC record), done before the check is written: `conn` may be the
    store's reader (Store.reader) and `new` the snapshot about to be written
    (id 0: not yet in the table).
    """
    old = previous_snapshot(conn, new)
    if old is None:
        return {"old": None}
    if old["extractor"] == new["extractor"]:
        before, problem = held_values(ctx, conn, old, new, Path(warc_root))
        return {"old": old, "before": before, "problem": problem}
    sides, how, problem = read_here(old, new, Path(warc_root))
    return {"old": old, "sides": sides, "how": how, "problem": problem}


def after_check(ctx, conn, check, warc_root: str | Path, prepared: dict | None = None) -> list[str]:
    """Return one 'changed' per field in which a present check's snapshot differs from the one before.

    `prepared` is prepare()'s answer made before the check's transaction; it is
    made again here when the snapshot before is no longer the one it compared.
    """
    if check["outcome"] != "present":
        return []
    new = conn.execute("SELECT * FROM snapshots WHERE id = ?", (check["snapshot_id"],)).fetchone()
    old = previous_snapshot(conn, new)
    if prepared is None or _id(prepared["old"]) != _id(old):
        prepared = prepare(ctx, conn, new, warc_root)
    if old is None:
        return []
    if "before" in prepared:
        if prepared["before"] is None:  # the older text is held as a digest that differs, and cannot be read back here
            _note(ctx, conn, check, old, new, None, [], prepared["problem"])
            ctx.count("comparisons_not_comparable")
            return []
        return record_changes(ctx, conn, check, old, new, (prepared["before"], stored(new)), {})
    sides, how = prepared["sides"], prepared["how"]
    comparison = _note(ctx, conn, check, old, new, how, [], prepared["problem"])
    if sides is None:
        ctx.count("comparisons_not_comparable")
        return []
    return record_changes(ctx, conn, check, old, new, sides,
                          {"comparison": comparison, "compared_by": current_extractor(), "how": how})


def _id(row) -> int | None:
    return None if row is None else row["id"]


def held_values(ctx, conn, old, new, warc_root: Path, requests: list[int] | None = None):
    """Return (the older snapshot's compared values, None), or (None, why not).

    Held whole, as stored. Otherwise its facts (record/fold_latest.py) say
    which fields are unchanged (their value is the newer snapshot's: differs()
    sees no change); a changed field's older value is read back, from the record
    folder's export file holding the row, else from its page in this runner's
    WARC folder (the same extractor: the same values), else from its WARC
    file's release asset when `requests` is given (a later run's settle), each
    checked against the digests; else None: not comparable, tried again later.
    """
    if old["whole"]:
        return stored(old), None
    values, changed = {}, []
    for field in FIELDS:
        if old.get("held") and field != "text":  # its row is held, its text left out: the others as stored
            values[field] = old[field]
        elif old["facts"] is not None and old["facts"].unchanged(field, new[field]):
            values[field] = new[field]
        else:
            changed.append(field)
    if not changed:
        return values, None
    read, problem = _from_record(ctx, old)
    if read is None and old["extractor"] == current_extractor():
        try:
            read = reread(old, warc_root)
        except WarcReadError as exc:
            problem = f"{problem}; {exc}"
        if read is None and requests is not None and ctx.warc_store is not None:
            read, why = _from_release(ctx, old, requests)
            problem = f"{problem}; {why}" if why else problem
    if read is None:
        return None, f"the older snapshot is held as digests and a field differs: {problem}"
    values.update({f: read[f] for f in changed})
    return values, None


def previous_snapshot(conn, new):
    """Return the article's snapshot before `new` (by capture time, then id), or None.

    Its row when this database holds it with its text ("whole": True);
    otherwise what the snapshots' projection holds of it (record/fold_latest.py:
    its id, capture time, extractor and where its page is; "whole": False).
    Either has its "facts", the digests of its values.
    """
    found = fold_latest.previous(conn, new["article_id"], new["captured_at"], new["id"])
    return None if found is None else _row_or_facts(conn, found)


def _row_or_facts(conn, found) -> dict:
    row = conn.execute("SELECT * FROM snapshots WHERE id = ?", (found.snapshot_id,)).fetchone()
    if row is not None:  # held, with its text or (left out: "whole" False) without it
        whole = row["text"] is not None or not found.facts.had_text()
        return {**dict(row), "facts": found.facts, "whole": whole, "held": True}
    return {**found.stub(), "facts": found.facts, "whole": False, "held": False}


def snapshot_by_id(conn, article_id: int, snapshot_id: int) -> dict | None:
    """Return one snapshot as previous_snapshot gives it, or None when neither its row nor its facts are here."""
    found = fold_latest.of(conn, article_id, snapshot_id)
    if found is not None:
        return _row_or_facts(conn, found)
    row = conn.execute("SELECT * FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
    return None if row is None else {**dict(row), "facts": None, "whole": row["text"] is not None, "held": True}


def _verified(old, values: dict, how: str) -> dict:
    """Return `values` read back for the older snapshot, unless they are not the values its digests were made of."""
    facts = old.get("facts")
    wrong = [c for c in fold_latest.REPEATED if facts is not None and not facts.same_or_none(c, values.get(c))]
    if wrong:
        raise WarcReadError(f"snapshot {old['id']}'s {how} reads as other values than its digests' ({', '.join(wrong)})")
    return values


def _from_record(ctx, old) -> tuple[dict | None, str]:
    """Return (the snapshot's compared values as the record holds its row, ''), or (None, why not)."""
    folder = getattr(ctx, "record_dir", None)
    if folder is None or not Path(folder).is_dir():
        return None, "no record folder to read it from"
    try:
        files = reader.record_files(folder)
        values = reader.values(files, "snapshots", old["id"], FIELDS)
    except ExportError as exc:
        return None, str(exc)
    if any(v is reader.MISSING for v in values.values()):
        return None, f"snapshot {old['id']} is in no export file of {folder} checked out here"
    try:
        return _verified(old, values, "row in the record"), ""
    except WarcReadError as exc:
        return None, str(exc)


def reread(row, warc_root: Path) -> dict:
    """Return a snapshot's field values as the current extractor reads its page in this runner's WARC folder
    (a snapshot held as digests: its final address its WARC record's, checked against the digest)."""
    got = read_response(warc_root, row["warc_file"], row["warc_offset"])
    return _values(row, got, f"{row['warc_file']}:{row['warc_offset']}")


def _values(row, got, where: str) -> dict:
    """Return the values of a snapshot's page read back (`got`: a warcread.ReadResponse), checked."""
    final = row.get("final_url")
    if final is None:  # held as digests: the address its record was answered from, checked against its digest
        final = got.target_uri
        if row.get("facts") is None or not row["facts"].same_or_none("final_url", final):
            raise WarcReadError(f"the WARC record at {where} does not name snapshot {row['id']}'s final address")
    values = values_from_html({**row, "final_url": final}, got.body, got.content_type)
    return _verified(row, values, "page") if row.get("whole") is False and row["extractor"] == current_extractor() \
        else values


def record_changes(ctx, conn, check, old, new, sides: tuple[dict, dict], note: dict,
                   detected_at: str | None = None) -> list[str]:
    """Return the kinds recorded: one 'changed' per field whose values in `sides` differ."""
    before, after = sides
    evidence = {"check": check["id"], "snapshot_before": old["id"], "snapshot_after": new["id"], **note}
    between = (old["captured_at"], new["captured_at"])
    return [record_event(ctx, conn, check, "changed", evidence, between, field, before[field], after[field],
                         (old["extractor"], new["extractor"]), detected_at)
            for field in FIELDS if differs(before[field], after[field])]


def read_here(old, new, warc_root: Path) -> tuple[tuple[dict, dict] | None, str | None, str | None]:
    """Return (both sides as the current extractor reads them, how, None), or (None, None, why not)."""
    sides = [_stored(old), _stored(new)]
    hows = []
    for index, row in enumerate((old, new)):
        if row["extractor"] == current_extractor() and sides[index] is not None:
            continue
        other = (new, old)[index]
        if other["extractor"] == current_extractor() and sides[1 - index] is not None and _same_page(row, other):
            sides[index] = stored(other)
            hows.append("same_html")
            continue
        try:
            sides[index] = reread(row, warc_root)
        except WarcReadError as exc:
            return None, None, str(exc)
        hows.append("warc_file")
    return (sides[0], sides[1]), "+".join(hows), None


def _stored(row) -> dict | None:
    """Return a snapshot's compared fields as stored, or None for one whose values are not all held."""
    return stored(row) if row.get("whole", True) else None


def _same_page(row, other) -> bool:
    """Return True when two snapshots were made from the same bytes at the same address (one may be held as
    digests: record/fold_latest.py)."""
    if row["html_sha256"] != other["html_sha256"]:
        return False
    if row.get("final_url") is not None and other.get("final_url") is not None:
        return row["final_url"] == other["final_url"]
    held = row if row.get("final_url") is None else other
    return held.get("facts") is not None and held["facts"].same_or_none(
        "final_url", (other if held is row else row)["final_url"])


def _note(ctx, conn, check, old, new, how: str | None, requests: list[int], problem: str | None) -> int:
    """Return the id of the comparisons row recording one try: compared (how) or not comparable (why)."""
    return conn.execute(
        "INSERT INTO comparisons (id, check_id, article_id, snapshot_before, snapshot_after, run_id, attempted_at, "
        "outcome, how, request_ids, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (next_id(conn, "comparisons"), check["id"], check["article_id"], old["id"], new["id"], ctx.run_id,
         ctx.clock.now_iso(),
         "not_comparable" if problem else "compared", how, json.dumps(requests), problem)).lastrowid


# -- comparing later ------------------------------------------------------------------

def open_comparisons(conn, now, limit: int) -> list:
    """Return the not-comparable checks to try again now, oldest first: one row per pair, its latest try."""
    since = iso(now - timedelta(days=settings.COMPARISON_RETRY_DAYS))
    return conn.execute(
        "SELECT c.* FROM comparisons c WHERE c.outcome = 'not_comparable' AND c.attempted_at >= ? "
        "AND NOT EXISTS (SELECT 1 FROM comparisons d WHERE d.snapshot_before = c.snapshot_before "
        "AND d.snapshot_after = c.snapshot_after AND d.id > c.id) "
        "AND (SELECT MIN(d.attempted_at) FROM comparisons d WHERE d.snapshot_before = c.snapshot_before "
        "AND d.snapshot_after = c.snapshot_after) >= ? ORDER BY c.id LIMIT ?",
        (since, since, limit)).fetchall()


def settle(ctx) -> Counter:
    """Return the tally after trying again the checks recorded as not comparable, reading from release assets.

    Needs ctx.warc_store (collector/net/releases.py), or ctx.record_dir for
    an older value a pruned database holds as digests only
    (record/fold_latest.py); stops at the run's deadline, the rest left for
    the next run.
    """
    tally: Counter = Counter()
    if ctx.warc_store is None and getattr(ctx, "record_dir", None) is None:
        return tally
    rows = {}
    with ctx.store.transaction() as conn:
        pending = open_comparisons(conn, ctx.clock.now(), settings.COMPARISONS_PER_RUN)
        for item in pending:
            rows[item["id"]] = [snapshot_by_id(conn, item["article_id"], item[k])
                                for k in ("snapshot_before", "snapshot_after")]
            rows[item["id"]].append(conn.execute("SELECT * FROM checks WHERE id = ?", (item["check_id"],)).fetchone())
    # Records of one WARC file one after another: one signed address of its asset serves them all.
    pending = sorted(pending, key=lambda item: _file_order(rows[item["id"]]))
    for item in pending:
        if ctx.out_of_time("comparisons"):
            tally["carried_over"] += 1
            continue
        old, new, check = rows[item["id"]]
        if old is None or new is None or not new["whole"]:
            tally["not_comparable"] += 1  # a pruning left it out: nothing to compare (record/fold_latest.py keeps both)
            continue
        sides, how, requests, problem = _read_anywhere(ctx, old, new)
        with ctx.store.transaction() as conn:
            comparison = _note(ctx, conn, check, old, new, how, requests, problem)
            if sides is None:
                tally["not_comparable"] += 1
                continue
            kinds = record_changes(ctx, conn, check, old, new, sides,
                                   {"comparison": comparison, "compared_by": current_extractor(), "how": how},
                                   detected_at=ctx.clock.now_iso())
        tally["compared"] += 1
        tally.update(f"event_{kind}" for kind in kinds)
    for name, amount in tally.items():
        ctx.count(f"comparisons_{name}", amount)
    return tally


def _file_order(rows) -> tuple:
    old, new, _check = rows
    side = old if old is None or old["extractor"] != current_extractor() else new
    return ("", 0) if side is None else (side["warc_file"] or "", side["warc_offset"] or 0)


def _read_anywhere(ctx, old, new):
    """Return (sides, how, requests, None), or (None, None, requests, why not), reading release assets if need be."""
    if old["extractor"] == new["extractor"]:  # not comparable only while a held older text could not be read
        requests: list[int] = []
        before, problem = held_values(ctx, ctx.store.conn, old, new, ctx.warc.root, requests)
        if before is None:
            return None, None, requests, problem
        return (before, stored(new)), "held_text", requests, None
    sides, how, problem = read_here(old, new, ctx.warc.root)
    if sides is not None:
        return sides, how, [], None
    values, hows, requests = [_stored(old), _stored(new)], [], []
    for index, row in enumerate((old, new)):
        if row["extractor"] == current_extractor() and values[index] is not None:
            continue
        read, problem = _from_release(ctx, row, requests)
        if read is None:
            return None, None, requests, problem
        values[index] = read
        hows.append("release_asset")
    return (values[0], values[1]), "+".join(hows), requests, None


def _from_release(ctx, snapshot, requests: list[int]) -> tuple[dict | None, str | None]:
    """Return (the snapshot's values read from its WARC file's release asset, None), or (None, why not)."""
    if ctx.warc_store is None:
        return None, "no release store to read the WARC record from"
    asset = ctx.store.one("SELECT release_tag, asset_name FROM warc_files WHERE name = ? ORDER BY id DESC LIMIT 1",
                          (snapshot["warc_file"],))
    if asset is None:
        return None, f"no release asset is recorded for {snapshot['warc_file']}"
    got = ctx.warc_store.read(asset["release_tag"], asset["asset_name"], snapshot["warc_offset"],
                              snapshot["warc_length"])
    requests.extend(got.requests)
    if got.data is None:
        return None, got.problem
    where = f"{asset['release_tag']}/{asset['asset_name']}:{snapshot['warc_offset']}"
    try:
        return _values(snapshot, response_of(got.data, where), where), None
    except WarcReadError as exc:
        return None, str(exc)


def pending_count(conn, now) -> int:
    """Return how many checks are still recorded as not comparable and will be tried again."""
    return len(open_comparisons(conn, now, -1))

