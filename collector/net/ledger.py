"""The request ledger: one row for every request, sent or not, written down before it is sent.

A request that goes on the wire is first an intent (request_intents),
committed before its first byte is handed to the socket; its row in
`requests` completes the intent with the result. A run killed in between
leaves an intent without a row, and the next run closes it as `interrupted`,
from the response its WARC file holds when the exchange got that far.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from collector.clock import Clock
from collector.record.store import Store
from collector.net.warcread import FoundResponse, responses_by_intent
from collector.net.wire import Exchange

INTERRUPTED = "interrupted"


class Ledger:
    """Writes request rows for one run, from one network location (the vantage)."""

    def __init__(self, store: Store, run_id: int, vantage: str, clock: Clock, warc=None):
        self.store = store
        self.run_id = run_id
        self.vantage = vantage
        self.clock = clock
        self.warc = warc

    def intend(self, method: str, url: str, *, purpose: str, outlet_id: str | None,
               attempt: int, redirected_from: int | None) -> int:
        """Return the id of the intent row committed for a request about to be sent."""
        return self.store.insert("request_intents", {
            "run_id": self.run_id, "outlet_id": outlet_id, "purpose": purpose, "method": method,
            "url": url, "host": _host(url), "attempt": attempt, "redirected_from": redirected_from,
            "vantage": self.vantage, "intended_at": self.clock.now_iso(),
        })

    def warc_for(self, intent: int | None):
        """Return the WARC log that tags an exchange's records with its intent (None: no WARC)."""
        return None if self.warc is None else _Tagged(self.warc, intent)

    def record(self, exchange: Exchange, *, purpose: str, outlet_id: str | None,
               attempt: int, redirected_from: int | None, intent: int | None = None) -> int:
        """Return the id of the row recording a request that was sent (completing its intent)."""
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
            "intent_id": intent,
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

    # -- after a kill ---------------------------------------------------------------

    def close_interrupted(self, warc_root: str | Path | None) -> int:
        """Return how many intents of unfinished earlier runs were closed as interrupted.

        Each gets its request row, in the run that made it: from its WARC
        response record when the exchange was written there (status, where it
        sits), otherwise with no response known. The request may or may not
        have reached the server; the row says which of the two is known.
        """
        open_intents = self.store.query(
            "SELECT i.* FROM request_intents i JOIN runs r ON r.id = i.run_id "
            "WHERE i.run_id != ? AND i.run_id NOT IN (SELECT run_id FROM run_finishes) "
            "AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.intent_id = i.id) ORDER BY i.id",
            (self.run_id,))
        files: dict[int, dict[int, FoundResponse]] = {}
        for intent in open_intents:
            run = intent["run_id"]
            if run not in files:
                files[run] = _responses_of_run(warc_root, run)
            self.store.insert("requests", self._interrupted_row(intent, files[run].get(intent["id"])))
        return len(open_intents)

    def _interrupted_row(self, intent, found: FoundResponse | None) -> dict:
        closed = f"closed by run {self.run_id} at {self.clock.now_iso()}"
        if found is None:
            detail = ("the run ended (killed) after this request was committed to be sent and before "
                      f"any response was written; whether it reached the server is unknown; {closed}")
        else:
            detail = ("the response was received and written to WARC, then the run ended (killed) "
                      f"before its ledger row; {closed}")
        pointer = found.pointer if found else None
        return {
            "run_id": intent["run_id"], "outlet_id": intent["outlet_id"], "purpose": intent["purpose"],
            "method": intent["method"], "url": intent["url"], "host": intent["host"],
            "attempt": intent["attempt"], "redirected_from": intent["redirected_from"], "sent": 1,
            "started_at": intent["intended_at"], "finished_at": intent["intended_at"],
            "result": INTERRUPTED, "status_code": found.status if found else None,
            "content_type": found.content_type if found else None,
            "bytes": found.payload_bytes if found else None, "remote_ip": found.ip if found else None,
            "vantage": intent["vantage"], "detail": detail,
            "warc_file": pointer.file if pointer else None,
            "warc_offset": pointer.offset if pointer else None,
            "warc_length": pointer.length if pointer else None,
            "intent_id": intent["id"],
        }


def _responses_of_run(warc_root: str | Path | None, run_id: int) -> dict[int, FoundResponse]:
    """Return the whole response records, by intent, of a run's WARC file (empty when it is gone)."""
    if warc_root is None:
        return {}
    root = Path(warc_root)
    found: dict[int, FoundResponse] = {}
    for path in sorted(root.glob(f"*/*/*/run-{run_id:06d}-*.warc.gz")):
        found.update(responses_by_intent(root, path.relative_to(root).as_posix()))
    return found


class _Tagged:
    """The run's WARC log, writing one exchange's intent id into its records."""

    def __init__(self, warc, intent: int | None):
        self._warc = warc
        self._intent = intent

    def write_exchange(self, **exchange):
        """Return where the response record sits, written with the intent id."""
        return self._warc.write_exchange(**exchange, intent=self._intent)


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
