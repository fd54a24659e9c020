"""The static site: what it shows, what it must never show, and that the method follows the settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collector.publish import disclosure
from collector import settings
from collector.publish.disclosure import DisclosureError
from collector.publish.site import build_site
from testing.synthetic import NOW, SyntheticRecord, populate

GROUPS = {"national": ["kq7-outlet", "zx3-outlet", "mw9-outlet", "rv2-outlet"],
          "online": ["bt5-outlet", "hy8-outlet", "jn4-outlet"],
          "english": ["cf6-outlet", "dp1-outlet"]}
PAGES = ["index.html", "method.html", "outlets.html", "bn/index.html", "bn/method.html", "bn/outlets.html"]


@pytest.fixture
def record(store):
    r = SyntheticRecord(store)
    for group, members in GROUPS.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, GROUPS, weeks=5, per_week={"kq7-outlet": 5})
    r.finish_run(NOW)
    return r


def _build(store, tmp_path, name="site") -> tuple[Path, dict[str, str]]:
    out = tmp_path / name
    files = build_site(store, out, NOW, settings)
    return out, {str(f.relative_to(out)): f.read_text(encoding="utf-8") for f in files}


def _secrets(store) -> set[str]:
    """Return every outlet id and every address of an article or request in the record."""
    queries = ["SELECT id FROM outlets", "SELECT homepage FROM outlets", "SELECT url FROM articles",
               "SELECT url_key FROM articles", "SELECT url FROM listing_entries", "SELECT url_key FROM listing_entries",
               "SELECT url FROM capture_queue", "SELECT final_url FROM snapshots", "SELECT url FROM requests",
               "SELECT url FROM archive_submissions", "SELECT archive_url FROM archive_submissions",
               "SELECT url FROM listings", "SELECT url FROM sources", "SELECT url FROM source_probes"]
    return {row[0] for q in queries for row in store.query(q) if row[0]}


def test_every_page_is_built_in_both_languages(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    assert sorted(files) == sorted(PAGES + ["static/style.css", "stats.json"])
    for page in PAGES:
        lang = "bn" if page.startswith("bn/") else "en"
        assert f'<html lang="{lang}">' in files[page]
        other = "en" if lang == "bn" else "bn"
        assert f'hreflang="{other}"' in files[page]  # the language switch
        assert "<script" not in files[page].lower()
        assert "Software version" in files[page] or "সফটওয়্যার সংস্করণ" in files[page]
        assert settings.__version__ in files[page]


def test_no_outlet_id_and_no_article_address_anywhere(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    secrets = _secrets(store)
    assert len(secrets) > 50  # the scan is only worth something if the record has addresses
    for name, text in files.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked into {name}"
        assert "story-" not in text


def test_outlets_page_lists_names_and_groups_only(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    page = files["outlets.html"]
    for n in range(1, 10):
        assert f"<li>Daily Paper {n} " in page
    assert "দৈনিক পত্রিকা ১" not in files["bn/outlets.html"]  # names are shown as written
    body = page.split('<main id="main" class="wrap">')[1].split("</main>")[0]
    assert not re.search(r"\d+\s*(%|articles|captured)", body.replace("Daily Paper", ""))


def test_overview_shows_withheld_groups_with_reasons_and_accessible_charts(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    index, bangla = files["index.html"], files["bn/index.html"]
    assert "withheld" in index and "fewer than 3 outlets" in index
    assert "গোপন রাখা হয়েছে" in bangla and "৩টির কম সংবাদমাধ্যম" in bangla
    assert index.count('role="img"') == 2 and index.count("<title id=") == 2 and index.count("<desc id=") == 2
    assert index.count("<table") >= 6 and 'scope="col"' in index and 'scope="row"' in index
    assert "<th>" not in index  # every header cell says what it heads
    assert re.search(r"<path d=\"M[\d. L]+\"", index)  # a line was drawn
    assert "Last collection run finished 26 November 2026" in index
    assert "২৬ নভেম্বর ২০২৬" in bangla


@pytest.mark.parametrize("name, value, english, bangla", [
    ("MIN_INTERVAL_SECONDS", 7.5, "one request every 7.5 seconds", "প্রতি ৭.৫ সেকেন্ডে"),
    ("CAPTURE_WINDOW_HOURS", 36, "within the last 36 hours", "গত ৩৬ ঘণ্টার মধ্যে"),
    ("MAX_ATTEMPTS", 4, "4 attempts in all", "৪ বার"),
    ("MIN_OUTLETS_PER_FIGURE", 4, "fewer than 4 of its outlets", "৪টির কম সংবাদমাধ্যম"),
    ("RECHECK_SCHEDULE_HOURS", (2, 96), "2 hours and 4 days after", "২ ঘণ্টা ও ৪ দিন পর"),
])
def test_method_page_follows_the_settings(store, record, tmp_path, monkeypatch, name, value, english, bangla):
    _, before = _build(store, tmp_path, "before")
    assert english not in before["method.html"] and bangla not in before["bn/method.html"]
    monkeypatch.setattr(settings, name, value)
    _, after = _build(store, tmp_path, "after")
    assert english in after["method.html"]
    assert bangla in after["bn/method.html"]


def test_method_page_defaults_and_recheck_flag(store, record, tmp_path, monkeypatch):
    _, files = _build(store, tmp_path, "on")
    assert "one request every 2 seconds" in files["method.html"] and "প্রতি ২ সেকেন্ডে" in files["bn/method.html"]
    assert settings.USER_AGENT in files["method.html"]
    assert "(planned)" not in files["method.html"]
    monkeypatch.setattr(settings, "RECHECKS_ENABLED", False)
    _, files = _build(store, tmp_path, "off")
    assert "Checking again (planned)" in files["method.html"]
    assert "আবার যাচাই (পরিকল্পিত)" in files["bn/method.html"]


def test_a_derivable_withheld_group_stops_the_build(store, record, tmp_path, monkeypatch):
    monkeypatch.setattr(disclosure, "secondary_suppression", lambda context, withheld: None)
    with pytest.raises(DisclosureError):
        build_site(store, tmp_path / "unsafe", NOW, settings)
    assert not (tmp_path / "unsafe").exists()


def test_a_safe_record_builds_with_the_audit_passed(store, tmp_path):
    r = SyntheticRecord(store)
    safe = {"a": ["a-o1", "a-o2", "a-o3"], "b": ["b-o1", "b-o2", "b-o3"]}
    for group, members in safe.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, safe, weeks=3)
    _, files = _build(store, tmp_path)
    assert '"passed": true' in files["stats.json"]
    assert "withheld" not in files["index.html"].split("Week by week")[0].split("Figures by group")[1]


def test_an_empty_record_builds_with_everything_withheld(store, tmp_path):
    SyntheticRecord(store).group("lonely")
    _, files = _build(store, tmp_path)
    assert "No collection run has finished yet." in files["index.html"]
    assert "No outlet is being monitored yet." in files["outlets.html"]
    assert '"passed": true' in files["stats.json"]


def test_the_site_built_from_stats_json_alone_is_the_site_built_from_the_database(store, record, tmp_path):
    """The public site's build and deployment see only the published figures, never the database."""
    from click.testing import CliRunner

    from collector.cli.main import cli

    from_db, files = _build(store, tmp_path, "from-db")
    stats = tmp_path / "published" / "stats.json"  # all a deployment receives
    stats.parent.mkdir()
    stats.write_bytes((from_db / "stats.json").read_bytes())
    missing = tmp_path / "no-such.db"
    done = CliRunner().invoke(cli, ["build-site", "--from-stats", str(stats), "--out", str(tmp_path / "public"),
                                    "--db", str(missing)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert not missing.exists()  # no database was opened, or made
    built = sorted(p.relative_to(tmp_path / "public").as_posix() for p in (tmp_path / "public").rglob("*")
                   if p.is_file())
    assert built == sorted(files)
    for name in built:
        assert (tmp_path / "public" / name).read_bytes() == (from_db / name).read_bytes(), name
    assert "Daily Paper 1" in files["outlets.html"] and "26 November 2026" in files["index.html"]


def test_a_stats_file_the_site_build_did_not_write_is_refused(tmp_path):
    from click.testing import CliRunner

    from collector.cli.main import cli

    for name, text in (("figures-only.json", '{"figures": {}}'), ("broken.json", "{"), ("list.json", "[]")):
        (tmp_path / name).write_text(text, encoding="utf-8")
        done = CliRunner().invoke(cli, ["build-site", "--from-stats", str(tmp_path / name),
                                        "--out", str(tmp_path / "out")])
        assert done.exit_code == 2 and "--from-stats" in done.output, done.output
    assert not (tmp_path / "out").exists()
