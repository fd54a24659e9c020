"""A snapshot replays at its WARC record's WARC-Date: the day's WACZ titles its pages and opens the right capture."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime, timedelta, timezone

import pytest

from collector.clock import iso
from collector.evidence.replay import ReplayError, replay_of, timestamp, wacz_day
from collector.evidence.wacz import package_day, validate
from collector.net.warc import WarcLog
from collector.net.warcread import read_response
from testing.replay_lookup import lookup

T0 = datetime(2026, 12, 1, 10, 0, 0, 600000, tzinfo=timezone.utc)
URL = "http://127.0.0.2/news/1"


def page(headline: str, site: str = "প্রথম আলো") -> bytes:
    return (f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>{headline} | {site}</title>'
            f'<meta property="og:title" content="{headline}"></head><body><h1>{headline}</h1>'
            f"<p>{headline}: বিস্তারিত।</p></body></html>").encode()


def write(log: WarcLog, url: str, body: bytes, when: datetime):
    return log.write_exchange(
        url=url, method="GET", request_headers=[("Host", "127.0.0.2")], request_target=url[len("http://127.0.0.2"):],
        request_body=None, status_line="200 OK", protocol="HTTP/1.1",
        response_headers=[("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
        body=body, ip="127.0.0.2", when=when)


@pytest.fixture
def day(tmp_path):
    """Two captures of one address five minutes apart, and another page, in two runs' WARC files of one day."""
    first_log, second_log = WarcLog(tmp_path / "warc", 1, T0), WarcLog(tmp_path / "warc", 2, T0 + timedelta(minutes=5))
    first = write(first_log, URL, page("বন্যায় ডুবে গেছে সড়ক"), T0)
    other = write(first_log, "http://127.0.0.2/news/2", page("নির্বাচনের তারিখ ঘোষণা"), T0 + timedelta(seconds=2))
    second = write(second_log, URL, page("বন্যায় ডুবে গেছে সড়ক ও সেতু"), T0 + timedelta(minutes=5))
    first_log.close()
    second_log.close()
    package = package_day(tmp_path / "warc", "2026-12-01", tmp_path / "wacz")
    return tmp_path, package, first, other, second


def test_the_pages_list_titles_each_capture_by_its_headline_at_its_records_time(day):
    _root, package, *_ = day
    assert validate(package)[0]
    with zipfile.ZipFile(package) as wacz:
        header, *lines = [json.loads(x) for x in wacz.read("pages/pages.jsonl").decode().splitlines()]
    assert header["format"] == "json-pages-1.0"
    listed = sorted((p["ts"], p["url"], p["title"]) for p in lines)
    assert listed == [("2026-12-01T10:00:00Z", URL, "বন্যায় ডুবে গেছে সড়ক"),
                      ("2026-12-01T10:00:02Z", "http://127.0.0.2/news/2", "নির্বাচনের তারিখ ঘোষণা"),
                      ("2026-12-01T10:05:00Z", URL, "বন্যায় ডুবে গেছে সড়ক ও সেতু")]
    assert all(p["id"] and p["id"] != p["url"] for p in lines)


def test_a_replay_opens_the_snapshots_own_record_not_a_later_capture_of_its_address(day):
    root, package, first, _other, second = day
    captured_at = T0 + timedelta(seconds=0.7)  # the snapshot row is written after the exchange: a second later
    got = read_response(root / "warc", first.file, first.offset)
    replay = replay_of(first.file, got.warc_date, got.target_uri)
    assert (replay.wacz, replay.url, replay.ts) == ("2026-12-01.wacz", URL, "20261201100000")
    opened = lookup(package, replay.url, replay.ts)
    assert (opened["filename"], int(opened["offset"])) == (first.file.rsplit("/", 1)[1], first.offset)
    # What a time taken from captured_at would open: the later capture of the same address.
    wrong = lookup(package, URL, timestamp(iso(captured_at)))
    assert (wrong["filename"], int(wrong["offset"])) == (second.file.rsplit("/", 1)[1], second.offset)
    assert replay.link("https://example.org/2026-12-01.wacz") == (
        "https://replayweb.page/?source=https%3A%2F%2Fexample.org%2F2026-12-01.wacz"
        "#view=replay&url=http%3A%2F%2F127.0.0.2%2Fnews%2F1&ts=20261201100000")


@pytest.mark.parametrize("warc_date, digits", [
    ("2026-12-01T10:00:00.999999Z", "20261201100000"), ("2026-12-01T23:59:59Z", "20261201235959"),
])
def test_the_replay_time_is_the_warc_date_to_the_second(warc_date, digits):
    assert timestamp(warc_date) == digits


@pytest.mark.parametrize("bad", ["", "yesterday", "2026-12"])
def test_a_record_without_a_time_is_refused(bad):
    with pytest.raises(ReplayError):
        replay_of("2026/12/01/run-000001-100000-abcd.warc.gz", bad, URL)


def test_the_wacz_of_a_warc_file_is_its_folders_day():
    assert wacz_day("2026/12/01/run-000001-100000-abcd.warc.gz") == "2026-12-01"
    with pytest.raises(ReplayError):
        wacz_day("run-000001.warc.gz")
