"""The static site: what it shows, what it must never show, and that the method follows the settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collector import settings
from collector.publish.history import History
from collector.publish.release import release
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


_HISTORIES: dict[str, History] = {}


def _build(store, tmp_path, name="site") -> tuple[Path, dict[str, str]]:
    """Build the site from the record's history, decided once per record (deciding takes seconds)."""
    out = tmp_path / name
    signature = str(store.query("SELECT COUNT(*), group_concat(id) FROM outlets")[0][:]) + \
        str(store.one("SELECT COUNT(*) FROM snapshots")[0])
    if signature not in _HISTORIES:
        history = History.memory()
        history.append(*(lambda r: (r.published, r.decisions))(release(store, NOW, history, write=False)))
        _HISTORIES[signature] = history
    files = build_site(store, out, NOW, settings, history=_HISTORIES[signature])
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


def test_overview_shows_one_withheld_marker_and_accessible_charts(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    index, bangla = files["index.html"], files["bn/index.html"]
    cells = re.findall(r'<span class="withheld">(.*?)</span>', index)
    assert cells and set(cells) == {"withheld"}  # the same mark whatever the reason
    assert set(re.findall(r'<span class="withheld">(.*?)</span>', bangla)) == {"গোপন রাখা হয়েছে"}
    for reason in ("fewer than 3 outlets</small>", "protects another figure", "one outlet dominates"):
        assert reason not in index
    stats = files["stats.json"]
    assert '"withheld": true' in stats and '"reason"' not in stats
    assert index.count('role="img"') == 2 and index.count("<title id=") == 2 and index.count("<desc id=") == 2
    assert index.count("<table") >= 6 and 'scope="col"' in index and 'scope="row"' in index
    assert "<th>" not in index  # every header cell says what it heads
    assert re.search(r"<path class=\"series\" d=\"M[\d. L]+\"", index)  # a line was drawn
    assert "Last collection run finished</dt><dd><time datetime=\"2026-11-26T12:00:00" in index
    assert "২৬ নভেম্বর ২০২৬" in bangla


def test_every_page_says_when_figures_were_published_links_the_method_licence_and_contact(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    for page in PAGES:
        text = files[page]
        bangla = page.startswith("bn/")
        updated = "সংখ্যা সর্বশেষ প্রকাশ" if bangla else "Figures last published"
        assert f"<dt>{updated}</dt><dd><time datetime=\"2026-11-26T12:00:00" in text, page
        when = "২৬ নভেম্বর ২০২৬, ইউটিসি ১২:০০ (ঢাকায় ১৮:০০)" if bangla else "26 November 2026, 12:00 UTC (18:00 in Dhaka)"
        assert when in text, page
        assert '<a href="method.html">' in text, page
        assert f'<a href="{settings.FIGURES_LICENCE_URL}" rel="license"' in text and settings.FIGURES_LICENCE in text
        assert ("প্রকাশিত সংখ্যার লাইসেন্স" if bangla else "Licence of the published figures") in text, page
        assert ("যোগাযোগ" if bangla else "Contact") in text and f'href="{settings.CONTACT_ADDRESS}"' in text, page


def test_licence_and_contact_come_from_the_settings(store, record, tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "FIGURES_LICENCE", "ODC-By 1.0")
    monkeypatch.setattr(settings, "FIGURES_LICENCE_URL", "https://opendatacommons.org/licenses/by/1-0/")
    monkeypatch.setattr(settings, "CONTACT_ADDRESS", "figures@takedownwatch.invalid")
    _, files = _build(store, tmp_path)
    for page in ("index.html", "bn/method.html"):
        assert '<a href="https://opendatacommons.org/licenses/by/1-0/" rel="license"' in files[page]
        assert ">ODC-By 1.0</a>" in files[page]
        assert '<a href="mailto:figures@takedownwatch.invalid" lang="en">figures@takedownwatch.invalid</a>' in files[page]


def test_past_midnight_in_dhaka_the_day_is_named():
    from datetime import datetime, timezone
    from collector.publish import texts

    late = datetime(2026, 11, 26, 20, 30, tzinfo=timezone.utc)
    assert texts.moment(late, "en", 6) == "26 November 2026, 20:30 UTC (27 November, 02:30 in Dhaka)"
    assert texts.moment(late, "bn", 6) == "২৬ নভেম্বর ২০২৬, ইউটিসি ২০:৩০ (ঢাকায় ২৭ নভেম্বর, ০২:৩০)"


def test_the_method_page_explains_the_rules_in_general(store, record, tmp_path):
    _, files = _build(store, tmp_path)
    method = files["method.html"]
    for text in ("fewer than 3 of its outlets", "more than 85%", "24 hours after it ends",
                 "never changes afterwards", "at least 20% of the count", "at least 3 articles",
                 "from none to 3", "looks the same whatever the reason"):
        assert text in method, text



def test_the_method_page_says_the_archive_backlog_drains_newest_first_and_why(store, record, tmp_path):
    _, files = _build(store, tmp_path)  # collector/wayback/history.py candidates(): newest capture first
    assert "the newest captures are sent first: the Archive copies a page as the outlet serves it" in files["method.html"]
    assert "sent behind them, newest first, until none is left" in files["method.html"]
    assert "সবচেয়ে নতুন সংগ্রহগুলো আগে পাঠানো হয়" in files["bn/method.html"]
    assert "নতুনগুলো আগে, একটিও বাকি না থাকা পর্যন্ত" in files["bn/method.html"]

@pytest.mark.parametrize("name, value, english, bangla", [
    ("MIN_INTERVAL_SECONDS", 7.5, "one request every 7.5 seconds", "প্রতি ৭.৫ সেকেন্ডে"),
    ("CAPTURE_WINDOW_HOURS", 36, "within the last 36 hours", "গত ৩৬ ঘণ্টার মধ্যে"),
    ("MAX_ATTEMPTS", 4, "4 attempts in all", "৪ বার"),
    ("MIN_OUTLETS_PER_FIGURE", 4, "fewer than 4 of its outlets", "৪টির কম সংবাদমাধ্যম"),
    ("RECHECK_SCHEDULE_HOURS", (2, 96), "2 hours and 4 days after", "২ ঘণ্টা ও ৪ দিন পর"),
    ("PUBLISH_AFTER_HOURS", 36, "published 36 hours after it ends", "শেষ হওয়ার ৩৬ ঘণ্টা পর"),
    ("PROTECT_SHARE", 0.3, "at least 30% of the count", "অন্তত তার ৩০%"),
    ("PROTECT_MIN_COUNT", 5, "at least 5 articles", "অন্তত ৫টি নিবন্ধ"),
    ("CAPTURE_MAX_RUNS", 9, "in at most 9 runs", "সর্বোচ্চ ৯টি চালনায়"),
    ("CAPTURES_PER_OUTLET_PER_RUN", 77, "at most 77 articles of one outlet", "সর্বোচ্চ ৭৭টি নিবন্ধ"),
    ("RECHECK_RETRY_HOURS", (2, 5), "in turn 2 hours and 5 hours after each failed try, 3 tries at most",
     "পালাক্রমে ২ ঘণ্টা ও ৫ ঘণ্টা পর নিবন্ধটি আবার যাচাই করা হয়, সব মিলিয়ে সর্বোচ্চ ৩ বার"),
    ("RECHECK_SLACK_MINUTES", 7, "up to 7 minutes early", "৭ মিনিট আগে"),
    ("RECHECKS_PER_OUTLET_PER_RUN", 55, "at most 55 checks of one outlet", "সর্বোচ্চ ৫৫টি যাচাই"),
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


def test_the_site_is_built_from_the_history_alone(store, record, tmp_path):
    history = History.open(tmp_path / "published", tmp_path / "decisions")
    assert release(store, NOW, history).appended
    build_site(store, tmp_path / "one", NOW, settings, history=history)
    store.execute("DELETE FROM capture_queue")  # the record changes; the published figures do not
    build_site(store, tmp_path / "two", NOW, settings, history=History.open(tmp_path / "published"))
    one = (tmp_path / "one" / "stats.json").read_text(encoding="utf-8")
    assert one == (tmp_path / "two" / "stats.json").read_text(encoding="utf-8")
    assert '"articles_queued": 2' in one or '"articles_queued": 1' in one


def test_a_safe_record_builds_with_nothing_withheld(store, tmp_path):
    r = SyntheticRecord(store)
    safe = {"a": ["a-o1", "a-o2", "a-o3"], "b": ["b-o1", "b-o2", "b-o3"]}
    for group, members in safe.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, safe, weeks=3)
    _, files = _build(store, tmp_path)
    assert "withheld" not in files["index.html"].split("Week by week")[0].split("Figures by group")[1]
    assert '"withheld": true' not in files["stats.json"]


def test_an_empty_record_builds_with_nothing_published(store, tmp_path):
    SyntheticRecord(store).group("lonely")
    _, files = _build(store, tmp_path)
    assert "No collection run has finished yet." in files["index.html"]
    assert "No outlet is being monitored yet." in files["outlets.html"]
    assert '"periods": []' in files["stats.json"]
    for page in ("index.html", "bn/index.html"):  # the footer and the overview say so too, in the page's language
        assert ("No figures have been published yet." if page == "index.html"
                else "এখনো কোনো সংখ্যা প্রকাশ করা হয়নি।") in files[page]


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


def test_the_overview_shows_each_groups_median_capture_delay(store, tmp_path):
    r = SyntheticRecord(store)
    safe = {"a": ["a-o1", "a-o2", "a-o3"], "b": ["b-o1", "b-o2", "b-o3"]}
    for group, members in safe.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, safe, weeks=3)  # every article captured an hour after its listing
    _, files = _build(store, tmp_path)
    groups = files["index.html"].split("Figures by group")[1].split("Week by week")[0]
    assert "Median minutes from listing to capture" in groups
    last = {}  # the last column of each group's rows: the whole record (none), then the latest month and week
    for row in groups.split("</tr>"):
        name = re.search(r'<th scope="row">([^<]+)</th>', row)
        if name:
            last.setdefault(name.group(1), []).append(re.findall(r"<td>(.*?)</td>", row)[-1])
    assert {"A", "B"} <= set(last)
    assert all(values[0].endswith("–</span>") and values[1:] == ["60"] * (len(values) - 1) and len(values) > 1
               for values in last.values()), last
    assert "তালিকা থেকে সংগ্রহ পর্যন্ত মধ্যমা সময় (মিনিট)" in files["bn/index.html"]


@pytest.mark.parametrize("least, share, english, bangla", [
    (3, 0.85, "fewer than 3 outlets, or when one outlet made more than 85% of them",
     "৩টির কম সংবাদমাধ্যম থেকে এলে, অথবা একটি সংবাদমাধ্যম তার ৮৫%-এর বেশি করলে, মধ্যমা গোপন রাখা হয়"),
    (4, 0.7, "fewer than 4 outlets, or when one outlet made more than 70% of them",
     "৪টির কম সংবাদমাধ্যম থেকে এলে, অথবা একটি সংবাদমাধ্যম তার ৭০%-এর বেশি করলে, মধ্যমা গোপন রাখা হয়"),
])
def test_the_method_page_explains_the_capture_delay_and_its_median_from_the_settings(
        store, record, tmp_path, monkeypatch, least, share, english, bangla):
    monkeypatch.setattr(settings, "MIN_OUTLETS_PER_FIGURE", least)
    monkeypatch.setattr(settings, "DOMINANCE_SHARE", share)
    _, files = _build(store, tmp_path, f"delay-{least}")
    assert "The capture delay of an article is the time from the first listing that named its address" in \
        files["method.html"]
    assert english in files["method.html"]
    assert bangla in files["bn/method.html"]
