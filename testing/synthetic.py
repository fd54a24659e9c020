"""Builds synthetic records with plain inserts, for the stats, disclosure and site tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from collector.clock import iso
from collector.record.store import Store

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)  # a Thursday, ISO week 2026-W48


class SyntheticRecord:
    """Gives short calls that insert groups, outlets and observations into a Store."""

    def __init__(self, store: Store):
        self.store = store
        self._articles = 0
        self.urls: list[str] = []  # every article address inserted, for leak scans
        self._run = store.insert("runs", {"command": "test", "started_at": iso(NOW - timedelta(days=90)),
                                          "vantage": "test", "software_version": "0", "settings": {}})

    def group(self, group_id: str, name: str | None = None, name_bn: str | None = None) -> str:
        """Insert a group and return its id."""
        self.store.insert("outlet_groups", {"id": group_id, "name": name or group_id.title(),
                                            "name_bn": name_bn or f"{name or group_id.title()} গোষ্ঠী"})
        return group_id

    def outlet(self, outlet_id: str, group_id: str | None, active: bool = True) -> str:
        """Insert an outlet and return its id."""
        # Names never contain the id, so a scan of the site for ids cannot be fooled by a name.
        number = self.store.one("SELECT COUNT(*) FROM outlets")[0] + 1
        self.store.insert("outlets", {
            "id": outlet_id, "name": f"Daily Paper {number}", "name_bn": f"দৈনিক পত্রিকা {number}",
            "homepage": f"https://{outlet_id}.example/", "group_id": group_id,
            "active": int(active), "first_seen_at": iso(NOW), "last_synced_at": iso(NOW)})
        return outlet_id

    def request(self, outlet_id: str | None, at: datetime, result: str = "ok",
                purpose: str = "capture", url: str = "https://example/x") -> int:
        """Insert one request row and return its id."""
        return self.store.insert("requests", {
            "run_id": self._run, "outlet_id": outlet_id, "purpose": purpose, "method": "GET",
            "url": url, "attempt": 1, "sent": 1, "started_at": iso(at), "finished_at": iso(at),
            "result": result, "vantage": "test"})

    def source(self, outlet_id: str, at: datetime, valid: bool = True) -> None:
        """Insert one discovery round for an outlet, validating a source when valid."""
        run = self.store.insert("runs", {"command": "discover", "started_at": iso(at), "vantage": "t",
                                         "software_version": "0", "settings": {}})
        probe = self.store.insert("source_probes", {
            "run_id": run, "outlet_id": outlet_id, "url": f"https://{outlet_id}.example/feed",
            "found_via": "common_path", "probed_at": iso(at),
            "outcome": "valid" if valid else "fetch_failed", "kind": "rss"})
        if valid:
            self.store.insert("sources", {"outlet_id": outlet_id, "url": f"https://{outlet_id}.example/feed",
                                          "kind": "rss", "found_via": "common_path", "probe_id": probe,
                                          "run_id": run, "validated_at": iso(at)})

    def article(self, outlet_id: str, listed_at: datetime, captured_after: timedelta | None = timedelta(hours=1),
                archived: bool = True) -> str:
        """Insert an article listed, queued, optionally captured and archived; return its address."""
        self._articles += 1
        url = f"https://{outlet_id}.example/news/story-{self._articles:05d}"
        self.urls.append(url)
        listing = self.store.insert("listings", {
            "run_id": self._run, "outlet_id": outlet_id, "url": f"https://{outlet_id}.example/feed",
            "fetched_at": iso(listed_at), "kind": "rss", "entry_count": 1})
        entry = self.store.insert("listing_entries", {"listing_id": listing, "position": 0, "url": url,
                                                      "url_key": url, "queue_reason": "recent"})
        self.request(outlet_id, listed_at, "ok", "listing")
        self.store.insert("capture_queue", {"url_key": url, "url": url, "outlet_id": outlet_id,
                                            "reason": "recent", "listing_entry_id": entry,
                                            "queued_at": iso(listed_at), "queued_run": self._run})
        if captured_after is not None:
            self._capture(outlet_id, url, listed_at + captured_after, archived)
        return url

    def _capture(self, outlet_id: str, url: str, at: datetime, archived: bool) -> None:
        """Insert the article, its capture request and snapshot, and an archive submission."""
        article = self.store.insert("articles", {"outlet_id": outlet_id, "url_key": url, "url": url,
                                                 "first_seen_at": iso(at), "first_seen_run": self._run})
        request = self.request(outlet_id, at, "ok", "capture", url)
        snapshot = self.store.insert("snapshots", {
            "article_id": article, "request_id": request, "run_id": self._run, "purpose": "capture",
            "captured_at": iso(at), "status_code": 200, "final_url": url, "html_sha256": "0" * 64,
            "warc_file": "x.warc.gz", "warc_offset": 0, "warc_length": 1, "extractor": "t",
            "extractor_info": {}})
        self.store.insert("archive_submissions", {
            "snapshot_id": snapshot, "run_id": self._run, "kind": "submit", "url": url,
            "recorded_at": iso(at + timedelta(minutes=5)), "status": "success" if archived else "error",
            "timestamp": "20261101000000" if archived else None,
            "archive_url": f"https://web.archive.org/web/2026/{url}" if archived else None})

    def finish_run(self, at: datetime) -> None:
        """Record the finish of the synthetic run."""
        self.store.insert("run_finishes", {"run_id": self._run, "finished_at": iso(at), "counts": {}})


def week_day(week_start: datetime, day: int, hour: int = 9) -> datetime:
    """Return an instant `day` days and `hour` hours into a week."""
    return week_start + timedelta(days=day, hours=hour)


def populate(record: SyntheticRecord, outlets: dict[str, list[str]], weeks: int = 4,
             per_week: dict[str, int] | None = None, default: int = 3, vary: bool = False) -> None:
    """Give every outlet `default` (or per_week[outlet]) captured articles a week for `weeks` weeks.

    With vary, counts rise and fall from week to week and some captures are not
    archived, so charts have something to show.
    """
    from collector.publish.periods import week_start

    per_week = per_week or {}
    first = week_start(NOW) - timedelta(days=7 * (weeks - 1))
    for group, members in outlets.items():
        for outlet in members:
            record.source(outlet, first + timedelta(hours=1))
            for w in range(weeks):
                count = per_week.get(outlet, default) + ((w * 7 + len(outlet)) % 4 if vary else 0)
                for n in range(count):
                    at = week_day(first + timedelta(days=7 * w), n % 3, 8 + n % 5)
                    if at < NOW - timedelta(hours=2):
                        record.article(outlet, at, archived=not vary or (n + w) % 7 != 3)
