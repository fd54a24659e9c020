"""The request ledger: one row for every request, sent or not."""

from __future__ import annotations

from urllib.parse import urlsplit

from collector.clock import Clock
from collector.record.store import Store
from collector.net.wire import Exchange


class Ledger:
    """Writes request rows for one run, from one network location (the vantage)."""

    def __init__(self, store: Store, run_id: int, vantage: str, clock: Clock, warc=None):
        self.store = store
        self.run_id = run_id
        self.vantage = vantage
        self.clock = clock
        self.warc = warc

    def record(self, exchange: Exchange, *, purpose: str, outlet_id: str | None,
               attempt: int, redirected_from: int | None) -> int:
        """Return the id of the row recording a request that was sent."""
        warc = exchange.warc
        return self.store.insert("requests", {
            "run_id": self.run_id, "outlet_id": outlet_id, "purpose": purpose,
            "method": exchange.method, "url": exchange.url, "host": _host(exchange.url),
            "attempt": attempt, "redirected_from": redirected_from, "sent": 1,
            "started_at": _iso(exchange.started), "finished_at": _iso(exchange.finished),
            "result": exchange.result, "status_code": exchange.status,
            "content_type": exchange.headers.get("content-type"), "bytes": exchange.raw_bytes,
            "elapsed_ms": exchange.elapsed_ms, "remote_ip": exchange.remote_ip,
            "vantage": self.vantage, "location": exchange.headers.get("location"),
            "detail": exchange.detail,
            "etag": exchange.headers.get("etag"), "last_modified": exchange.headers.get("last-modified"),
            "warc_file": warc.file if warc else None,
            "warc_offset": warc.offset if warc else None,
            "warc_length": warc.length if warc else None,
        })

    def refused(self, method: str, url: str, purpose: str, outlet_id: str | None,
                redirected_from: int | None, result: str, detail: str | None) -> int:
        """Return the id of the row recording a request that was never sent."""
        now = self.clock.now_iso()
        return self.store.insert("requests", {
            "run_id": self.run_id, "outlet_id": outlet_id, "purpose": purpose,
            "method": method, "url": _storable(url[:8192]), "host": _storable(_host(url)), "attempt": 1,
            "redirected_from": redirected_from, "sent": 0, "started_at": now,
            "finished_at": now, "result": result, "vantage": self.vantage, "detail": _storable(detail),
        })


def _storable(text: str | None) -> str | None:
    """Return text SQLite can store: a lone surrogate (no UTF-8 form) written as its escape."""
    if text is None:
        return None
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).netloc.lower() or None
    except ValueError:
        return None


def _iso(value) -> str:
    from collector.clock import iso

    return iso(value)
