"""The running aggregates equal the counts of the rows they are kept from (collector/publish/tallies.py)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from collector.clock import iso
from collector.publish import tallies
from collector.publish.cells import read_block, read_block_rows
from collector.publish.periods import week_start
from collector.record import streams
from collector.record.store import Store
from testing.synthetic import NOW, SyntheticRecord

MONTHS = ("2026-09", "2026-10", "2026-11")
OUTLETS = ("a1", "a2", "b1", "b2", "c1")


def _same(one, other) -> None:
    assert one.values == other.values
    assert {k: sorted(v) for k, v in one.delays.items()} == {k: sorted(v) for k, v in other.delays.items()}
    assert one.results == other.results


class Streams:
    """Inserts rows as a database following two streams holds them: each stream's ids in its own range."""

    def __init__(self, store: Store, seed: int):
        self.store, self.rng = store, random.Random(seed)
        self.r = SyntheticRecord(store)
        self.r.group("g")
        for outlet in OUTLETS:
            self.r.outlet(outlet, "g")
        self.next = {None: 0, "east": streams.base("east")}
        self.articles: list[tuple[int, str, str]] = []

    def _id(self, stream) -> int:
        self.next[stream] += 1
        return self.next[stream]

    def instant(self) -> datetime:
        """An instant in September to November, often on a week's edge, sometimes written at +06:00."""
        start = datetime(2026, 8, 31, tzinfo=timezone.utc)
        pick = self.rng.random()
        if pick < 0.2:  # exactly a week's start, or its last millisecond
            moment = week_start(start + timedelta(days=self.rng.randrange(90)))
            return moment - timedelta(milliseconds=1) if pick < 0.1 else moment
        return start + timedelta(minutes=self.rng.randrange(90 * 24 * 60))

    def stamp(self, moment: datetime) -> str:
        if self.rng.random() < 0.2:
            return moment.astimezone(timezone(timedelta(hours=6))).isoformat(timespec="milliseconds")
        return iso(moment)

    def batch(self, stream, n: int) -> None:
        """Add n observations of every kind written by one stream."""
        store, rng = self.store, self.rng
        for _ in range(n):
            outlet = rng.choice(OUTLETS)
            kind = rng.random()
            at = self.instant()
            if kind < 0.4:
                store.insert("requests", {
                    "id": self._id(stream), "run_id": self.r._run, "outlet_id": rng.choice((outlet, None)),
                    "purpose": rng.choice(("listing", "capture", "recheck", "archive")), "method": "GET",
                    "url": "https://x.example/", "attempt": 1, "sent": 1, "started_at": self.stamp(at),
                    "finished_at": iso(at), "result": rng.choice(("ok", "timeout", "not_found")),
                    "vantage": "t"})
            elif kind < 0.7:
                listing = store.insert("listings", {
                    "id": self._id(stream), "run_id": self.r._run, "outlet_id": outlet,
                    "url": f"https://{outlet}.example/feed", "fetched_at": self.stamp(at), "kind": "rss",
                    "entry_count": 3})
                for position in range(3):
                    url = f"https://{outlet}.example/news/{rng.randrange(60)}"
                    store.insert("listing_entries", {"listing_id": listing, "position": position, "url": url,
                                                     "url_key": url})
            elif kind < 0.85 or not self.articles:
                self.capture(stream, outlet, at)
            else:
                article, outlet, url = rng.choice(self.articles)
                if rng.random() < 0.5:  # an address of it seen later, perhaps listed earlier
                    other = f"https://{outlet}.example/news/{rng.randrange(60)}"
                    if not store.one("SELECT 1 FROM articles WHERE url_key = ? UNION ALL SELECT 1 FROM "
                                     "article_urls WHERE url_key = ?", (other, other)):
                        store.insert("article_urls", {"article_id": article, "url": other, "url_key": other,
                                                      "how": "canonical", "recorded_at": iso(at),
                                                      "run_id": self.r._run})
                else:
                    self.snapshot(stream, article, at, rng.choice(("capture", "recheck")))
        if rng.random() < 0.5:
            url = f"https://{outlet}.example/queued/{rng.randrange(10 ** 6)}"
            store.insert("capture_queue", {"url_key": url, "url": url, "outlet_id": outlet, "reason": "recent",
                                           "queued_at": self.stamp(self.instant()), "queued_run": self.r._run})

    def capture(self, stream, outlet: str, at: datetime) -> None:
        url = f"https://{outlet}.example/news/{self.rng.randrange(60)}"
        if self.store.one("SELECT 1 FROM articles WHERE url_key = ?", (url,)):
            return
        article = self.store.insert("articles", {"outlet_id": outlet, "url_key": url, "url": url,
                                                 "first_seen_at": iso(at), "first_seen_run": self.r._run})
        self.articles.append((article, outlet, url))
        self.snapshot(stream, article, at, "capture")

    def snapshot(self, stream, article: int, at: datetime, purpose: str) -> None:
        request = self.store.insert("requests", {
            "id": self._id(stream), "run_id": self.r._run, "outlet_id": None, "purpose": purpose,
            "method": "GET", "url": "https://x.example/", "attempt": 1, "sent": 1, "started_at": iso(at),
            "finished_at": iso(at), "result": "ok", "vantage": "t"})
        snapshot = self.store.insert("snapshots", {
            "id": self._id(stream), "article_id": article, "request_id": request, "run_id": self.r._run,
            "purpose": purpose,
            "captured_at": self.stamp(at), "status_code": 200, "final_url": "https://x.example/",
            "html_sha256": "0" * 64, "warc_file": "x.warc.gz", "warc_offset": 0, "warc_length": 1,
            "extractor": "t", "extractor_info": {}})
        for _ in range(self.rng.randrange(3)):  # answers, some late, some failed, some untimestamped
            ok = self.rng.random()
            self.store.insert("archive_submissions", {
                "id": self._id(stream), "snapshot_id": snapshot, "run_id": self.r._run, "kind": "submit",
                "url": "https://x.example/", "recorded_at": iso(at + timedelta(hours=self.rng.randrange(400))),
                "status": "success" if ok < 0.7 else "error",
                "timestamp": "20261101000000" if ok < 0.6 else None})


@pytest.mark.parametrize("seed", range(6))
def test_aggregates_kept_as_rows_arrive_equal_the_rows_counts(tmp_path, seed):
    store = Store(tmp_path / "db.sqlite")
    try:
        rows = Streams(store, seed)
        order = [None, "east", "east", None, "east", None]
        for n, stream in enumerate(order):
            rows.batch(stream, 60)
            if n % 2:  # brought up to date now and then, between streams' increments
                assert tallies.update(store.conn) > 0
        for month in MONTHS:
            kept, counted = read_block(store, month), read_block_rows(store, month)
            assert any(m == "articles_captured" for (_, _, m) in counted.values)
            assert counted.delays and counted.results
            _same(kept, counted)
            since = datetime(2026, 9, 9, tzinfo=timezone.utc)  # the record's first month, from its second week
            _same(read_block(store, "2026-09", since), read_block_rows(store, "2026-09", since))
        assert tallies.update(store.conn) == 0  # nothing new: nothing read again
    finally:
        store.conn.close()


def test_aggregates_rebuilt_from_nothing_equal_those_kept_as_rows_arrived(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    try:
        rows = Streams(store, 99)
        for stream in (None, "east", None, "east"):
            rows.batch(stream, 50)
            tallies.update(store.conn)
        kept = {t: store.query(f"SELECT * FROM {t} ORDER BY 1, 2") for t in tallies.TABLES[1:]}
        for table in tallies.TABLES:
            store.conn.execute(f"DROP TABLE {table}")
        tallies.update(store.conn)
        assert {t: store.query(f"SELECT * FROM {t} ORDER BY 1, 2") for t in tallies.TABLES[1:]} == kept
    finally:
        store.conn.close()


def test_a_failed_update_leaves_the_aggregates_as_they_were(tmp_path, monkeypatch):
    store = Store(tmp_path / "db.sqlite")
    try:
        rows = Streams(store, 7)
        rows.batch(None, 40)
        tallies.update(store.conn)
        before = store.query(f"SELECT * FROM {tallies.COUNTS} ORDER BY 1, 2, 3")
        marks = store.query(f"SELECT * FROM {tallies.MARKS} ORDER BY 1, 2")
        rows.batch(None, 40)

        def broken(conn, low, high, table):
            raise RuntimeError("disk gone")
        monkeypatch.setattr(tallies, "_archived", broken)
        with pytest.raises(RuntimeError):
            tallies.update(store.conn)
        assert store.query(f"SELECT * FROM {tallies.COUNTS} ORDER BY 1, 2, 3") == before
        assert store.query(f"SELECT * FROM {tallies.MARKS} ORDER BY 1, 2") == marks
        monkeypatch.undo()
        for month in MONTHS:
            _same(read_block(store, month), read_block_rows(store, month))
    finally:
        store.conn.close()


def test_a_pruning_for_figures_keeps_each_streams_latest_listing_its_next_unchanged_answer_names(tmp_path):
    """A database following two vantages: vantage A's feed unchanged since days before the pruning (a 304
    then records entries_of its listing), vantage B's read since. A's listing must outlive the pruning."""
    from collector.collect.prune import prune
    from collector.publish.history import History

    db = tmp_path / "follower.db"
    store = Store(db)
    rows = Streams(store, 3)
    feed, east = "https://a1.example/feed", streams.base("east")
    old, new = datetime(2026, 11, 21, 9, tzinfo=timezone.utc), datetime(2026, 11, 25, 9, tzinfo=timezone.utc)
    holder = store.insert("listings", {"id": 1, "run_id": rows.r._run, "outlet_id": "a1", "url": feed,
                                       "fetched_at": iso(old), "kind": "rss", "entry_count": 2})
    for n in range(2):
        url = f"https://a1.example/news/a-{n}"
        store.insert("listing_entries", {"listing_id": holder, "position": n, "url": url, "url_key": url})
    store.insert("listings", {"id": east + 1, "run_id": rows.r._run, "outlet_id": "a1", "url": feed,
                              "fetched_at": iso(new), "kind": "rss", "entry_count": 0})
    store.insert("listings", {"id": 2, "run_id": rows.r._run, "outlet_id": "a1", "url": feed + "-other",
                              "fetched_at": iso(old), "kind": "rss", "entry_count": 0})  # A's last row: kept anyway
    store.conn.close()
    ranges = [(0, east), (east, east + 2 ** 40)]
    prune(db, tmp_path, NOW + timedelta(days=1), History.memory(), figures=True, revisited=False,
          check=lambda source: None, ranges=ranges)
    store = Store(db)
    try:
        assert store.one("SELECT COUNT(*) FROM listings WHERE id = ?", (holder,))[0] == 1
        store.conn.execute("PRAGMA foreign_keys = OFF")  # as a follow writes a stream's rows
        store.insert("listings", {"id": 3, "run_id": rows.r._run, "outlet_id": "a1", "url": feed,
                                  "fetched_at": iso(NOW), "kind": "rss", "entry_count": 2, "entries_of": holder})
        block = read_block(store, "2026-11")
        assert block.value("a1", "2026-W48", "articles_listed") == 2
        _same(block, read_block_rows(store, "2026-11"))
    finally:
        store.conn.close()
