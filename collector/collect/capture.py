"""Captures queued articles: one fetch each, and a snapshot only from a successful HTML response."""

from __future__ import annotations

import json
import sys
import traceback
from datetime import timedelta

from collector import settings
from collector.clock import parse_instant
from collector.collect.ahead import fetched_ahead
from collector.collect.context import RunContext
from collector.errors import RecordWriteError
from collector.parse.decoding import is_html
from collector.parse.extract import Extraction, extract, extractor_info
from collector.net.fetcher import Response
from collector.record import articles
from collector.record.store import insert_row
from collector.urls import comparison_key
from collector.record.streams import next_id

# A capture refused because the site's robots.txt could not be read, or asks
# for a Crawl-delay over settings.CRAWL_DELAY_MAX_SECONDS, is deferred: the
# site was off limits for that run only, and nothing was asked.
DEFERRED_RESULTS = ("robots_unreachable", "crawl_delay_over_limit")
# Results that say the host, not the article, is failing: after
# settings.CAPTURE_HOST_DOWN_AFTER of them in a row the outlet's other
# captures wait for the next run rather than spend minutes each on retries.
HOST_DOWN_RESULTS = ("timeout", "connection_error", "server_error")
_EXTRACT_HERE = object()  # snapshot_from's page left out: extracted there


def pending(ctx: RunContext, outlet_id: str, limit: int | None = None) -> list:
    """Return the outlet's queued addresses, newest entry first, at most limit.

    Undated entries come after dated ones, the most recently queued first and,
    from one listing, in its order: a feed of 200,000 undated entries queued
    once does not hold back the undated articles it lists later.
    """
    return ctx.store.query(
        "SELECT url_key, url, article_id, attempts, COALESCE(sort_time, queued_at) AS listed "
        "FROM capture_queue WHERE outlet_id = ? AND state = 'pending' "
        "ORDER BY sort_time IS NULL, sort_time DESC, queued_at DESC, rowid LIMIT ?",
        (outlet_id, -1 if limit is None else limit))


def capture_outlet(ctx: RunContext, outlet_id: str, limit: int | None = None) -> int:
    """Return how many snapshots were made for one outlet's queue in this run.

    At most settings.CAPTURES_PER_OUTLET_PER_RUN (or limit) are tried, newest
    first; the rest, and everything once the run's deadline is near or the
    host has failed settings.CAPTURE_HOST_DOWN_AFTER times in a row, stay
    queued for the next run with no attempt counted. One address's failure,
    even a bug of ours in extracting its page, is recorded and settles that
    address as failed: the outlet's other captures go on, and the address is
    not first in the queue again next run. A capture waiting to retry lets the
    outlet's next address go first (Fetcher.fetch_each), and the next address
    is fetched while the one before is extracted (collect/ahead.py).
    """
    budget = settings.CAPTURES_PER_OUTLET_PER_RUN if limit is None else limit
    items = pending(ctx, outlet_id, budget + 1)
    if len(items) > budget:
        ctx.count("capture_over_budget")
        items = items[:budget]
    made, failing, started, ended = 0, [0], [0], [0]

    def feed():
        """Yield the items to fetch, stopping when the host keeps failing or the run is out of time.

        A capture still waiting to retry may be failing too: none is begun while
        those and the failures in a row could make the host down (as revisits do).
        """
        for done, item in enumerate(items):
            if (failing[0] + started[0] - ended[0] >= settings.CAPTURE_HOST_DOWN_AFTER
                    or ctx.out_of_time("capture", item["url"])):
                ctx.count("capture_carried_over", len(items) - done)
                return
            if item["attempts"] and _outside_window(ctx, item["listed"]):
                _give_up(ctx, item["url_key"])
                continue
            started[0] += 1
            yield item

    def answers():
        """Yield each fetched item with its response, the host's failures counted as it is fetched."""
        for item, response in ctx.fetcher.fetch_each(feed(), lambda item: item["url"], purpose="capture",
                                                     outlet_id=outlet_id):
            ended[0] += 1
            failing[0] = failing[0] + 1 if response.result in HOST_DOWN_RESULTS else 0
            yield item, response

    # The host's next capture is fetched while this one is extracted and written (collect/ahead.py).
    for item, response in fetched_ahead(answers(), settings.FETCH_AHEAD, f"capture-{outlet_id}",
                                        before=ctx.fetcher.pacer.give_way):
        try:
            # The page is extracted before the write, outside the store's only lock:
            # other outlets' ledger rows do not wait for this page's CPU work.
            page = page_of(response)
            # One transaction for the snapshot, the attempt and its queue row: a run
            # killed between them would leave the article pending, captured again
            # by the next run.
            with ctx.store.transaction():
                snapshot_id = snapshot_from(ctx, item["article_id"], response, "capture", page)
                _settle(ctx, item, response, snapshot_id)
            made += snapshot_id is not None
        except RecordWriteError:
            raise
        except Exception as exc:  # noqa: BLE001 - one address, recorded; the outlet goes on
            _failed_item(ctx, outlet_id, item, response, exc)
    return made


def _failed_item(ctx: RunContext, outlet_id: str, item, response: Response | None, exc: Exception) -> None:
    """Record a capture that failed on our side: a warning, and the queue row settled as failed."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    ctx.warnings.append(f"{outlet_id}: capture of {item['url']}: {detail}")
    print(f"warning: {outlet_id}: capture of {item['url']}: {detail}", file=sys.stderr)
    ctx.count("capture_failed")
    ctx.store.execute(
        "UPDATE capture_queue SET state = 'failed', last_request_id = ?, done_at = ? WHERE url_key = ?",
        (response.request_id if response else None, ctx.clock.now_iso(), item["url_key"]))


def _outside_window(ctx: RunContext, listed: str) -> bool:
    """Return True when an entry listed (dated, or first queued) at `listed` is past the capture window."""
    age = ctx.clock.now() - parse_instant(listed)
    return age > timedelta(hours=settings.CAPTURE_WINDOW_HOURS)


def _give_up(ctx: RunContext, url_key: str) -> None:
    """Mark a capture tried before as failed for good: its entry has left the capture window."""
    ctx.count("capture_expired")
    ctx.store.execute("UPDATE capture_queue SET state = 'failed', done_at = ? WHERE url_key = ?",
                      (ctx.clock.now_iso(), url_key))


def _settle(ctx: RunContext, item, response: Response, snapshot_id: int | None) -> None:
    """Record the attempt and move the queue row on: captured, tried again later, or failed."""
    tried = item["attempts"] + (response.result not in DEFERRED_RESULTS)
    if snapshot_id is not None:
        then = "captured"
    elif response.result in DEFERRED_RESULTS:
        then = "deferred"
    elif response.result in settings.CAPTURE_RETRY_RESULTS and tried < settings.CAPTURE_MAX_RUNS:
        then = "retry"
    else:
        then = "failed"
    now = ctx.clock.now_iso()
    with ctx.store.transaction() as conn:
        conn.execute(
            "INSERT INTO capture_attempts (id, article_id, url_key, run_id, attempted_at, request_id, "
            "request_chain, result, snapshot_id, try_number, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (next_id(conn, "capture_attempts"), item["article_id"], item["url_key"], ctx.run_id, now,
             response.request_id, json.dumps(response.chain), response.result, snapshot_id, tried, then))
    ctx.count(f"capture_{then}")
    if then == "deferred":
        return
    state = {"captured": "captured", "retry": "pending", "failed": "failed"}[then]
    ctx.store.execute(
        "UPDATE capture_queue SET state = ?, attempts = ?, last_request_id = ?, done_at = ? WHERE url_key = ?",
        (state, tried, response.request_id, None if state == "pending" else now, item["url_key"]))


def page_of(response: Response) -> Extraction | None:
    """Return the page extracted from a successful HTML response, else None (no snapshot is made of it)."""
    if not response.ok or response.warc is None:
        return None
    if not is_html(response.content_type, response.body):
        return None
    return extract(response.body, response.content_type, response.final_url)


def snapshot_from(ctx: RunContext, article_id: int, response: Response, purpose: str,
                  page: Extraction | None | object = _EXTRACT_HERE) -> int | None:
    """Return the id of a new snapshot when the response is a successful HTML page, else None.

    `page` is the response's page_of, extracted beforehand, outside any
    transaction (None: no snapshot); left out, the page is extracted here.
    """
    if page is _EXTRACT_HERE:
        page = page_of(response)
    if page is None:
        return None
    warc = response.warc
    with ctx.store.transaction() as conn:
        snapshot_id = insert_row(conn, "snapshots", {
            "article_id": article_id, "request_id": response.request_id, "run_id": ctx.run_id,
            "purpose": purpose, "captured_at": ctx.clock.now_iso(), "status_code": response.status,
            "final_url": response.final_url, "headline": page.headline, "byline": page.byline,
            "published_raw": page.published_raw, "published_source": page.published_source,
            "published_utc": page.published_utc, "modified_raw": page.modified_raw,
            "modified_source": page.modified_source, "modified_utc": page.modified_utc, "text": page.text,
            "canonical_url": page.canonical_url, "language": page.language, "encoding": page.encoding,
            "encoding_source": page.encoding_source, "unmapped_paragraphs": page.unmapped_paragraphs,
            "html_sha256": page.html_sha256, "warc_file": warc.file, "warc_offset": warc.offset,
            "warc_length": warc.length, "payload_digest": warc.payload_digest, "extractor": page.extractor,
            "extractor_info": json.dumps(extractor_info(), sort_keys=True)})
        _join(ctx, conn, article_id, response.final_url, "redirect", snapshot_id)
        if page.canonical_url:
            _join(ctx, conn, article_id, page.canonical_url, "canonical", snapshot_id)
    ctx.count("snapshots")
    return snapshot_id


def _join(ctx: RunContext, conn, article_id: int, url: str, how: str, snapshot_id: int) -> None:
    """Record another address of the same article (nothing is ever merged away)."""
    try:
        key = comparison_key(url)
    except ValueError:  # an address with no comparison form joins nothing
        return
    articles.add_address(conn, article_id, url, key, how, ctx.clock.now_iso(), ctx.run_id, snapshot_id)
