"""The reduced demo runs the whole lifecycle: revisits over simulated time, events, archive, export, verification, site."""

from __future__ import annotations

import contextlib
import io
import sqlite3
from urllib.parse import unquote

import pytest

from collector.record.folder import verify
from demo import lifecycle, world
from demo.tour import clicks, facts, record_files_of, tour


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """Return the finished reduced demo and everything it printed."""
    out = tmp_path_factory.mktemp("demo") / "demo-output"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        finished = lifecycle.run_demo(out, small=True)
        text = tour(finished)
    conn = sqlite3.connect(f"file:{finished.db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    yield finished, conn, printed.getvalue(), text
    conn.close()


def _events(conn, outlet: str) -> list[tuple[str, str | None]]:
    return [(r["kind"], r["field"]) for r in conn.execute(
        "SELECT e.kind, e.field FROM events e JOIN articles a ON a.id = e.article_id WHERE a.outlet_id = ? "
        "ORDER BY e.id", (outlet,))]


def test_collection_runs_over_simulated_time_revisit_every_article(demo):
    finished, conn, _printed, _tour = demo
    runs = [r[0] for r in conn.execute("SELECT started_at FROM runs WHERE command = 'run' ORDER BY id")]
    assert len(runs) == lifecycle.SMALL_VISITS
    assert runs == sorted(runs) and len(set(r[:16] for r in runs)) == len(runs)  # each at its own --now
    articles = conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0]
    slots = dict(conn.execute("SELECT slot, COUNT(*) FROM checks WHERE slot IN ('1h', '6h') GROUP BY slot"))
    assert slots == {"1h": articles, "6h": articles}
    followups = conn.execute("SELECT COUNT(*) FROM checks WHERE slot LIKE 'followup:%'").fetchone()[0]
    assert followups == 3  # +1 h, +3 h, +6 h after the first absence
    pages = conn.execute("SELECT COUNT(DISTINCT html_sha256), COUNT(DISTINCT headline) FROM snapshots "
                         "WHERE purpose = 'capture'").fetchone()
    assert tuple(pages) == (articles, articles)  # every page a distinct real article, not one page copied
    outlets = conn.execute("SELECT COUNT(DISTINCT outlet_id) FROM articles").fetchone()[0]
    assert outlets == len(world.FEED_OUTLETS) and articles >= outlets * world.SMALL_ITEMS


def test_articles_change_disappear_and_move_and_an_nfd_copy_is_no_change(demo):
    _finished, conn, _printed, _tour = demo
    assert ("changed", "headline") in _events(conn, "prothomalo")
    assert _events(conn, "ekattor") == [("gone", None)]
    assert {("changed", "final_url"), ("changed", "canonical_url")} <= set(_events(conn, "bd24live"))
    assert {("changed", "text"), ("changed", "byline")} <= set(_events(conn, "amarbanglabd"))
    assert ("changed", "text") in _events(conn, "jagonews")  # a ZWJ dropped is a change
    assert _events(conn, "banglatribune") == []  # served in NFD: the same text
    gone = conn.execute("SELECT c.outcome, c.performed_at FROM events e JOIN checks c ON c.article_id = e.article_id "
                        "WHERE e.kind = 'gone' AND c.outcome = 'absent' ORDER BY c.performed_at").fetchall()
    assert len(gone) >= 3


def test_the_moved_article_is_present_at_its_new_address(demo):
    finished, conn, _printed, _tour = demo
    row = conn.execute("SELECT s.final_url, a.url FROM snapshots s JOIN articles a ON a.id = s.article_id "
                       "WHERE a.outlet_id = 'bd24live' AND s.final_url != a.url").fetchone()
    assert row is not None
    assert unquote(row["final_url"]).endswith("-1/")


def test_archive_export_and_verification_happen(demo):
    finished, conn, printed, _tour = demo
    archived = conn.execute("SELECT COUNT(*) FROM archive_submissions WHERE status = 'success'").fetchone()[0]
    assert archived > 0
    files = record_files_of(finished.record)
    assert len(files) == lifecycle.SMALL_VISITS  # one export after each run
    assert verify(finished.record) == len(files)
    assert f"{len(files)} export files, chain intact" in printed
    assert "python -m collector review" in "\n".join(finished.commands)
    assert " gone " in printed  # the review list printed the gone event
    assert (finished.site / "index.html").is_file() and (finished.site / "bn" / "index.html").is_file()


def test_the_site_is_built_from_the_published_history_of_the_demos_closed_weeks(demo):
    import json

    finished, _conn, _printed, _tour = demo
    history = (finished.published / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert history and all(json.loads(line)["kind"] in ("week", "month") for line in history)
    stats = json.loads((finished.site / "stats.json").read_text(encoding="utf-8"))
    weeks = {p["id"] for p in stats["periods"] if p["kind"] == "week"}
    assert weeks and weeks <= {json.loads(line)["period"] for line in history}  # every week published, none afresh
    index = (finished.site / "index.html").read_text(encoding="utf-8")
    assert "Figures last published</dt><dd><time datetime=" in index
    assert "python -m collector publish" in "\n".join(finished.commands)


def test_evidence_bundle_when_the_command_exists(demo):
    finished, _conn, _printed, _tour = demo
    if not lifecycle.has_command("evidence"):
        assert finished.evidence is None
        pytest.skip("no evidence command on this branch")
    assert finished.evidence is not None and any(finished.evidence.iterdir())


def test_the_tour_says_where_things_are_and_what_to_click(demo):
    finished, conn, _printed, text = demo
    db = finished.db.relative_to(finished.out.parent)
    assert f"make browse DB={db}" in text
    numbered = [line for line in text.splitlines() if line.strip()[:2] in ("1.", "2.", "3.")]
    assert len(numbered) == 3 and all(f"http://127.0.0.1:8001/{finished.db.stem}/" in line for line in numbered)
    for path in ("record", "warc", "published/history.jsonl", "site/index.html"):
        assert f"{finished.out.name}/{path}" in text
    kinds = dict(conn.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind"))
    assert f"{kinds['gone']} gone" in text


def test_every_change_names_an_article_the_first_run_captures():
    """A change picks among articles dated within a day of the first run, so it is captured and revisited."""
    assert {c.kind for c in world.CHANGES} == set(world.SAYS)
    assert all(c.visit >= 1 for c in world.CHANGES)


def test_the_three_things_to_click_open_in_datasette_as_make_browse_serves_it(demo):
    from tests.browse.conftest import Browser

    finished, _conn, _printed, _tour = demo
    browser = Browser([finished.db])
    try:
        answers = [browser.get(path) for path, _what in clicks(finished, facts(finished.db))]
    finally:
        browser.close()
    assert [a.status_code for a in answers] == [200, 200, 200]
    review, diff, captured = (a.text for a in answers)
    assert "gone" in review and "changed" in review
    assert "<del" in diff or "<ins" in diff  # a word-level difference is shown
    assert "sandbox=" in captured and "SHA-256" in captured and "the bytes shown below have this SHA-256" in captured
