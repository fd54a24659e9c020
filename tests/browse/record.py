"""A record to browse: real article pages captured into a WARC file, with revisits and a change event.

The pages are the real-text pages of tests/data/articles (see their README)
and one English page built from the real bd24live feed item: each is written
to a WARC file as an HTTP exchange, extracted with the real extractor, and
stored as the collector stores a snapshot. The article with ZWJ is revisited
twice: once served in NFD (no change as the method compares), once with the
ZWJ of its first র‍্যাবের dropped and a sentence rewritten (a change).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path

import feedparser

from collector.net.warc import WarcLog
from collector.parse.extract import extract, extractor_info
from collector.record.store import Store

DATA = Path(__file__).resolve().parent.parent / "data"
START = datetime(2026, 8, 13, 4, 30, tzinfo=timezone.utc)
ZWJ_WORD = "র\u200d্যাবের"  # as the Jago News page writes it (U+09B0 U+200D U+09CD ...)
CHANGED_START = "ভুক্তভোগী লিখিত"  # the revisit rewrites the sentence that starts so (up to its danda)
NEW_SENTENCE = "অভিযোগ তদন্ত করে দেখা হচ্ছে।"
RELEASE_TAG = "warc-2026-08-13"


def english_page() -> bytes:
    """Return an article page around the first item of the real bd24live feed (English)."""
    item = feedparser.parse((DATA / "feeds" / "bd24live__cloudphone-rss-reader_5dcfbf4.xml").read_bytes()).entries[0]
    body = item.content[0].value if item.get("content") else item.summary
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{item.title}</title>'
            f'<link rel="canonical" href="{item.link}"></head><body><article><h1>{item.title}</h1>{body}'
            f"</article></body></html>").encode()


def pages() -> dict[str, list[bytes]]:
    """Return each article's pages in capture order (the first is the capture, the rest revisits)."""
    zwj = (DATA / "articles" / "synthetic-jagonews-1146758-zwj-jsonld-graph.html").read_bytes()
    text = zwj.decode("utf-8")
    start = text.index(CHANGED_START)
    sentence = text[start:text.index("।", start) + 1]
    assert ZWJ_WORD in text
    edited = text.replace(ZWJ_WORD, ZWJ_WORD.replace("\u200d", ""), 1).replace(sentence, NEW_SENTENCE)
    return {
        "https://www.jagonews24.com/country/news/1146758": [
            zwj, unicodedata.normalize("NFD", text).encode("utf-8"), edited.encode("utf-8")],
        "https://www.jagonews24.com/law-courts/news/1146763":
            [(DATA / "articles" / "synthetic-jagonews-1146763-ncr-nfd-meta.html").read_bytes()],
        "https://www.prothomalo.com/sports/cricket/8fdqj2xuxp":
            [(DATA / "articles" / "synthetic-prothomalo-8fdqj2xuxp-zwnj-nfd-time.html").read_bytes()],
        "https://www.bd24live.com/oil-prices-drop-by-over-1-per-barrel/": [english_page()],
    }


def run_row(store: Store) -> int:
    return store.insert("runs", {"command": "run", "started_at": START.isoformat(), "vantage": "test",
                                 "software_version": "0.1.0", "settings": "{}"})


def capture(store: Store, warc: WarcLog, run: int, article: int, url: str, page: bytes, when: datetime,
             purpose: str) -> int:
    pointer = warc.write_exchange(
        url=url, method="GET", request_headers=[("User-Agent", "TakedownWatch")], request_target="/",
        request_body=None, status_line="200 OK", protocol="HTTP/1.1",
        response_headers=[("Content-Type", "text/html; charset=utf-8")], body=page, ip="127.0.0.1", when=when)
    request = store.insert("requests", {
        "run_id": run, "outlet_id": "jago", "purpose": purpose, "method": "GET", "url": url, "host": "x",
        "attempt": 1, "sent": 1, "started_at": when.isoformat(), "finished_at": when.isoformat(), "result": "ok",
        "status_code": 200, "vantage": "test", "warc_file": pointer.file, "warc_offset": pointer.offset,
        "warc_length": pointer.length})
    got = extract(page, "text/html; charset=utf-8", url)
    return store.insert("snapshots", {
        "article_id": article, "request_id": request, "run_id": run, "purpose": purpose,
        "captured_at": when.isoformat().replace("+00:00", "Z"), "status_code": 200, "final_url": url,
        "headline": got.headline, "byline": got.byline, "published_raw": got.published_raw,
        "published_source": got.published_source, "published_utc": got.published_utc,
        "modified_raw": got.modified_raw, "modified_source": got.modified_source, "modified_utc": got.modified_utc,
        "text": got.text, "canonical_url": got.canonical_url, "language": got.language, "encoding": got.encoding,
        "encoding_source": got.encoding_source, "unmapped_paragraphs": got.unmapped_paragraphs,
        "html_sha256": got.html_sha256, "warc_file": pointer.file, "warc_offset": pointer.offset,
        "warc_length": pointer.length, "payload_digest": pointer.payload_digest, "extractor": got.extractor,
        "extractor_info": json.dumps(extractor_info(), sort_keys=True)})


def build(path: Path, warc_dir: Path) -> dict:
    """Write the record to path (WARC files under warc_dir); return what the tests look up in it."""
    store = Store(path)
    store.insert("outlet_groups", {"id": "g1", "name": "Group", "name_bn": "গোষ্ঠী"})
    store.insert("outlets", {"id": "jago", "name": "Jago", "name_bn": "জাগো", "homepage": "https://jago.test/",
                             "group_id": "g1", "first_seen_at": START.isoformat(), "last_synced_at": START.isoformat()})
    run = run_row(store)
    warc = WarcLog(warc_dir, run, START)
    found: dict = {"snapshots": {}, "articles": {}}
    for n, (url, versions) in enumerate(pages().items()):
        article = store.insert("articles", {"outlet_id": "jago", "url_key": url, "url": url,
                                            "first_seen_at": START.isoformat(), "first_seen_run": run})
        found["articles"][url] = article
        ids = [capture(store, warc, run, article, url, page, START + timedelta(minutes=n, hours=6 * k),
                        "capture" if k == 0 else "recheck") for k, page in enumerate(versions)]
        found["snapshots"][url] = ids
    warc.close()
    data = warc.path.read_bytes()
    store.insert("warc_files", {"name": warc.relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                "recorded_at": START.isoformat(), "release_tag": RELEASE_TAG,
                                "asset_name": Path(warc.relative).name})
    zwj = found["snapshots"]["https://www.jagonews24.com/country/news/1146758"]
    _change_event(store, run, found["articles"]["https://www.jagonews24.com/country/news/1146758"], zwj[1], zwj[2])
    store.close()
    found.update(warc_file=warc.relative, warc_bytes=data)
    return found


def _change_event(store: Store, run: int, article: int, before: int, after: int) -> None:
    check = store.insert("checks", {
        "article_id": article, "slot": "24h", "due_at": "t", "performed_at": (START + timedelta(hours=12)).isoformat(),
        "run_id": run, "url": "u", "result": "ok", "request_chain": "[]", "snapshot_id": after, "outcome": "present"})
    store.insert("events", {
        "article_id": article, "kind": "changed", "field": "text", "before": "b", "after": "a",
        "detected_at": (START + timedelta(hours=12)).isoformat(), "article_age_hours": 12.0, "check_id": check,
        "evidence": json.dumps({"check": check, "snapshot_before": before, "snapshot_after": after}),
        "run_id": run})
