"""The short tour the demo ends with: what happened, where each thing is, and what to click first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from demo.lifecycle import Demo

PORT = 8001  # Datasette's default


def record_files_of(folder: Path) -> list[Path]:
    """Return the committed record's files (not their signatures or timestamp tokens beside them)."""
    return sorted(p for p in folder.rglob("*") if p.name.endswith((".jsonl", ".jsonl.bz2")))


def facts(db: Path) -> dict:
    """Return the figures the tour quotes, read from the demo's database."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    one = lambda sql, *args: conn.execute(sql, args).fetchone()[0]  # noqa: E731
    out = {
        "runs": one("SELECT COUNT(*) FROM runs WHERE command = 'run'"),
        "articles": one("SELECT COUNT(*) FROM articles"),
        "captures": one("SELECT COUNT(*) FROM snapshots WHERE purpose = 'capture'"),
        "rechecks": one("SELECT COUNT(*) FROM snapshots WHERE purpose = 'recheck'"),
        "checks": one("SELECT COUNT(*) FROM checks"),
        "absent": one("SELECT COUNT(*) FROM checks WHERE outcome = 'absent'"),
        "requests": one("SELECT COUNT(*) FROM requests"),
        "archived": one("SELECT COUNT(DISTINCT snapshot_id) FROM archive_submissions WHERE status = 'success'"),
        "events": {row[0]: row[1] for row in conn.execute(
            "SELECT kind || COALESCE(' ' || field, ''), COUNT(*) FROM events GROUP BY 1 ORDER BY 1")},
        "changed_article": one("SELECT article_id FROM events WHERE kind = 'changed' "
                               "AND field IN ('headline', 'byline', 'text') "
                               "GROUP BY article_id ORDER BY COUNT(*) DESC, article_id LIMIT 1"),
        "gone_capture": one("SELECT s.id FROM snapshots s JOIN events e ON e.article_id = s.article_id "
                            "WHERE e.kind = 'gone' AND s.purpose = 'capture' ORDER BY e.id, s.id LIMIT 1"),
    }
    conn.close()
    return out


def clicks(demo: Demo, f: dict) -> list[tuple[str, str]]:
    """Return the first three things to look at in Datasette: (path under the server, what it shows)."""
    name = demo.db.stem  # Datasette names a database after its file; the project's plugin gives it the metadata
    return [
        (f"/{name}/events_review_order",
         "the events in review order, oldest article first (what `review` printed); each links to what changed"),
        (f"/{name}/-/diff?article={f['changed_article']}",
         "what changed in an article, word by word, as the method compares (an NFC/NFD difference is none)"),
        (f"/{name}/-/captured/{f['gone_capture']}",
         "the article later recorded gone, as captured: the HTML as served, from its WARC record, scripts off"),
    ]


def tour(demo: Demo) -> str:
    """Return the text printed at the end of the demo."""
    f = facts(demo.db)
    rel = lambda p: p.relative_to(demo.out.parent)  # noqa: E731
    record_files = record_files_of(demo.record)
    warcs = sorted(demo.warc.rglob("*.warc.gz"))
    events = ", ".join(f"{n} {kind}" for kind, n in f["events"].items()) or "none"
    db = rel(demo.db)
    spent: dict[str, float] = {}
    for command, seconds in demo.timings:
        spent[command] = spent.get(command, 0) + seconds
    lines = [
        "",
        f"Done in {demo.seconds:.0f} s (" + ", ".join(f"{c} {s:.0f} s" for c, s in spent.items()) + "): "
        f"{f['runs']} collection runs over "
        f"{'a day' if not demo.small else 'seven hours'} of simulated time.",
        f"  {f['articles']} articles captured; {f['checks']} revisits ({f['absent']} found the article absent), "
        f"{f['rechecks']} of them made a new snapshot; {f['requests']} requests, every one in the ledger.",
        f"  events: {events}.",
        f"  {f['archived']} captures have a (fake) Internet Archive copy.",
        "",
        "Where everything is:",
        f"  the working database  {db}",
        f"  the committed record  {rel(demo.record)}/   ({len(record_files)} files, one per export, chained"
        + ("; signed and timestamped by two loopback authorities" if demo.evidence else "")
        + "; `export verify` checked them)",
        f"  WARC files            {rel(demo.warc)}/   ({len(warcs)} files: every response as received)",
        f"  the registry          {rel(demo.out / 'outlets.toml')}",
    ]
    if demo.evidence is not None:
        lines.append(f"  a day as WACZ         {rel(demo.out / 'wacz')}/   (signed; opens in ReplayWeb.page)")
        lines.append(f"  an evidence bundle    {rel(demo.evidence)}/   (the article recorded gone, with its own verify.py)")
    lines += [
        f"  the published figures {rel(demo.published)}/history.jsonl   (closed weeks and months, each decided once)",
        f"  the public site       {rel(demo.site)}/index.html   (and bn/index.html in Bangla; built from that history)",
        "",
        "Browse the record (Datasette, with the project's plugins; WARC files are read from beside the database):",
        f"  make browse DB={db}",
        "",
        "Then, first:",
    ]
    lines += [f"  {n}. http://127.0.0.1:{PORT}{path}\n     {what}" for n, (path, what) in enumerate(clicks(demo, f), 1)]
    return "\n".join(lines) + "\n"
