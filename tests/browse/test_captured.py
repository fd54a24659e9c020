"""Issue 19, item 4: the page as captured, read from its WARC record, in a frame that runs no script.

Served by Datasette's test client; the release-asset path against a loopback
fake of GitHub's release downloads (testing/release_assets.py).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from urllib.parse import quote

import pytest

from collector.record.store import Store
from testing.farm import Farm
from testing.release_assets import ReleaseAssets
from tests.browse import record

JAGO = "https://www.jagonews24.com/country/news/1146758"


def directives(header: str) -> dict[str, str]:
    parts = (d.strip().split(None, 1) for d in header.split(";") if d.strip())
    return {p[0]: (p[1] if len(p) > 1 else "") for p in parts}


def test_the_frame_page_shows_time_address_and_checked_sha256(recorded, browse):
    path, found = recorded
    browser = browse(path)
    page = browser.get("/takedownwatch/-/captured/1")
    assert page.status_code == 200
    served = record.pages()[JAGO][0]
    sha = hashlib.sha256(served).hexdigest()
    assert "2026-08-13T04:30:00Z" in page.text and JAGO in page.text and sha in page.text
    assert "the bytes shown below have this SHA-256" in page.text
    assert '<iframe class="captured-frame" sandbox="" referrerpolicy="no-referrer" ' \
           'src="/takedownwatch/-/captured/1/page"' in page.text
    assert found["warc_file"] in page.text  # where the bytes were read from
    frame = directives(page.headers["content-security-policy"])
    assert frame["frame-src"] == "'self'"  # a link followed in the frame cannot load the outlet's site there


def test_the_captured_html_is_served_as_received_under_a_policy_that_runs_nothing(recorded, browse):
    path, _found = recorded
    browser = browse(path)
    for n, served in enumerate(record.pages()[JAGO], start=1):
        page = browser.get(f"/takedownwatch/-/captured/{n}/page")
        assert page.status_code == 200 and page.content == served  # byte for byte, NFD revisit included
        assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = directives(page.headers["content-security-policy"])
    assert "sandbox" in policy and policy["sandbox"] == ""  # no allow-scripts, no same origin
    assert policy["default-src"] == "'none'" and "script-src" not in policy  # scripts fall back to 'none'
    assert policy["img-src"] == "data:" and policy["frame-ancestors"] == "'self'"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert b"<script" in served  # the page does carry scripts: the policy is what stops them


def test_a_snapshot_row_links_to_its_page_as_captured(recorded, browse):
    path, found = recorded
    browser = browse(path)
    table = browser.get("/takedownwatch/snapshots")
    for n in range(1, 7):
        assert f'<a href="/takedownwatch/-/captured/{n}" title="Open the page as captured">' in table.text
    canned = browser.get(f"/takedownwatch/article_snapshots?url={quote(JAGO)}")
    assert '<a href="/takedownwatch/-/captured/3"' in canned.text
    assert browser.get("/takedownwatch/snapshots.json?_shape=array&id=1").json()[0]["html_sha256"] == \
        hashlib.sha256(record.pages()[JAGO][0]).hexdigest()  # the JSON keeps the bare value


@pytest.fixture(scope="module")
def releases():
    with Farm() as farm:
        yield ReleaseAssets(farm)


def test_without_the_local_file_it_is_read_from_the_release_asset(recorded, browse, tmp_path, releases):
    path, found = recorded
    alone = tmp_path / "elsewhere" / "copy.db"  # no warc folder beside it
    alone.parent.mkdir()
    shutil.copyfile(path, alone)
    asset = found["warc_file"].rsplit("/", 1)[1]
    releases.publish(record.RELEASE_TAG, asset, found["warc_bytes"])
    metadata = {"plugins": {"takedownwatch-captured": {"releases_url": releases.base_url}}}
    browser = browse(alone, metadata=metadata)
    page = browser.get("/copy/-/captured/3/page")
    assert page.status_code == 200 and page.content == record.pages()[JAGO][2]
    asked = releases.storage.seen[-1].headers["Range"]
    offset, length = (sqlite3.connect(alone).execute(
        "SELECT warc_offset, warc_length FROM snapshots WHERE id = 3").fetchone())
    assert asked == f"bytes={offset}-{offset + length - 1}"  # only that record, not the day's file
    frame = browser.get("/copy/-/captured/3")
    assert f"{releases.base_url}/{record.RELEASE_TAG}/{asset}" in frame.text and "have this SHA-256" in frame.text


def test_with_neither_it_says_where_it_looked(recorded, browse, tmp_path):
    alone = tmp_path / "nowarc.db"
    shutil.copyfile(recorded[0], alone)
    browser = browse(alone, metadata={})
    page = browser.get("/nowarc/-/captured/1")
    assert page.status_code == 404 and "could not be read" in page.text and "releases_url" in page.text
    assert "<iframe" not in page.text
    assert browser.get("/nowarc/-/captured/1/page").status_code == 404
    assert browser.get("/nowarc/-/captured/99").status_code == 404


def test_bytes_that_do_not_match_the_recorded_sha256_are_flagged(recorded, browse, tmp_path):
    """A snapshot row whose SHA-256 is not that of its WARC record's body: the page says so."""
    path, found = recorded
    forged = tmp_path / "forged.db"
    shutil.copytree(path.parent / "warc", tmp_path / "warc")
    source = sqlite3.connect(path)
    row = dict(zip(("warc_file", "warc_offset", "warc_length"), source.execute(
        "SELECT warc_file, warc_offset, warc_length FROM snapshots WHERE id = 1").fetchone()))
    source.close()
    store = Store(forged)
    run = store.insert("runs", {"command": "run", "started_at": "a", "vantage": "v", "software_version": "0",
                                "settings": "{}"})
    article = store.insert("articles", {"outlet_id": "o", "url_key": "k", "url": "u", "first_seen_at": "a",
                                        "first_seen_run": run})
    request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": "u",
                                        "attempt": 1, "sent": 1, "started_at": "a", "finished_at": "b",
                                        "result": "ok", "vantage": "v"})
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": run, "purpose": "capture",
                               "captured_at": "c", "status_code": 200, "final_url": "u", "html_sha256": "0" * 64,
                               "extractor": "x", "extractor_info": "{}", **row})
    store.close()
    page = browse(forged).get("/forged/-/captured/1")
    assert "not the one recorded" in page.text and hashlib.sha256(record.pages()[JAGO][0]).hexdigest() in page.text


def test_the_replay_is_at_the_records_warc_date_not_at_captured_at(recorded, browse, tmp_path):
    """Issue 32, item 4: captured_at is set after the exchange, past its record's second; the replay is not."""
    path, _found = recorded
    later = tmp_path / "later.db"
    shutil.copytree(path.parent / "warc", tmp_path / "warc")
    source = sqlite3.connect(path)
    row = dict(zip(("warc_file", "warc_offset", "warc_length", "html_sha256"), source.execute(
        "SELECT warc_file, warc_offset, warc_length, html_sha256 FROM snapshots WHERE id = 1").fetchone()))
    source.close()
    store = Store(later)
    run = store.insert("runs", {"command": "run", "started_at": "a", "vantage": "v", "software_version": "0",
                                "settings": "{}"})
    article = store.insert("articles", {"outlet_id": "o", "url_key": "k", "url": JAGO, "first_seen_at": "a",
                                        "first_seen_run": run})
    request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": JAGO,
                                        "attempt": 1, "sent": 1, "started_at": "a", "finished_at": "b",
                                        "result": "ok", "vantage": "v"})
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": run, "purpose": "capture",
                               "captured_at": "2026-08-13T04:30:01.200000Z", "status_code": 200, "final_url": JAGO,
                               "extractor": "x", "extractor_info": "{}", **row})
    store.close()
    page = browse(later).get("/later/-/captured/1")
    assert page.status_code == 200
    assert '<code class="replay-ts">20260813043000</code>' in page.text and "20260813043001" not in page.text
    assert "2026-08-13.wacz" in page.text and "open in ReplayWeb.page" not in page.text  # nowhere to fetch it from
    metadata = {"plugins": {"takedownwatch-captured": {"wacz_url": "https://wacz.example/packages/"}}}
    linked = browse(later, metadata=metadata).get("/later/-/captured/1")
    assert ('href="https://replayweb.page/?source=https%3A%2F%2Fwacz.example%2Fpackages%2F2026-08-13.wacz'
            f'#view=replay&amp;url={quote(JAGO, safe="")}&amp;ts=20260813043000"') in linked.text
