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
        "gone_article": one("SELECT article_id FROM events WHERE kind = 'gone' ORDER BY id LIMIT 1"),
    }
    conn.close()
    return out


def clicks(demo: Demo, f: dict) -> list[tuple[str, str]]:
    """Return the first three things to look at in Datasette: (path under the server, what it shows).

    Plain table pages with filters, so they work whatever metadata the server is given.
    """
    name = demo.db.stem  # Datasette names a database after its file
    return [
        (f"/{name}/events?_sort_desc=article_age_hours",
         "every event, the oldest article's first (the order `review` printed)"),
        (f"/{name}/snapshots?article_id={f['changed_article']}&_sort=captured_at",
         "an article whose words changed: its capture and every revisit, side by side"),
        (f"/{name}/checks?article_id={f['gone_article']}&_sort=performed_at",
         "the checks that recorded an article gone: three absences over six hours"),
    ]


def tour(demo: Demo) -> str:
    """Return the text printed at the end of the demo."""
    f = facts(demo.db)
    rel = lambda p: p.relative_to(demo.out.parent)  # noqa: E731
    record_files = record_files_of(demo.record)
    warcs = sorted(demo.warc.rglob("*.warc.gz"))
    events = ", ".join(f"{n} {kind}" for kind, n in f["events"].items()) or "none"
    db = rel(demo.db)
    lines = [
        "",
        f"Done in {demo.seconds:.0f} s: {f['runs']} collection runs over "
        f"{'a day' if not demo.small else 'seven hours'} of simulated time.",
        f"  {f['articles']} articles captured; {f['checks']} revisits ({f['absent']} found the article absent), "
        f"{f['rechecks']} of them made a new snapshot; {f['requests']} requests, every one in the ledger.",
        f"  events: {events}.",
        f"  {f['archived']} captures have a (fake) Internet Archive copy.",
        "",
        "Where everything is:",
        f"  the working database  {db}",
        f"  the committed record  {rel(demo.record)}/   ({len(record_files)} files, one per export, chained;"
        " `export verify` checked them)",
        f"  WARC files            {rel(demo.warc)}/   ({len(warcs)} files: every response as received)",
        f"  the registry          {rel(demo.out / 'outlets.toml')}",
    ]
    if demo.evidence is not None:
        lines.append(f"  an evidence bundle    {rel(demo.evidence)}/   (the article recorded gone)")
    lines += [
        f"  the public site       {rel(demo.site)}/index.html   (and bn/index.html in Bangla)",
        "",
        "Browse the record:",
        f"  make browse DB={db}",
        "",
        "Then, first:",
    ]
    lines += [f"  {n}. http://127.0.0.1:{PORT}{path}\n     {what}" for n, (path, what) in enumerate(clicks(demo, f), 1)]
    return "\n".join(lines) + "\n"
