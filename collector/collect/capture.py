"""Captures queued articles: one fetch each, and a snapshot only from a successful HTML response."""

from __future__ import annotations

import json
import sys
import traceback

from collector.collect.context import RunContext
from collector.errors import RecordWriteError
from collector.parse.decoding import is_html
from collector.parse.extract import extract, extractor_info
from collector.net.fetcher import Response
from collector.record import articles
from collector.record.store import insert_row
from collector.urls import comparison_key

# A capture refused because the site's robots.txt could not be read is
# deferred: the site was off limits for that run only.
DEFERRED_RESULTS = ("robots_unreachable",)


def pending(ctx: RunContext, outlet_id: str) -> list:
    """Return the outlet's queued addresses, newest entry first (undated after dated)."""
    return ctx.store.query(
        "SELECT url_key, url, article_id FROM capture_queue WHERE outlet_id = ? AND state = 'pending' "
        "ORDER BY sort_time IS NULL, sort_time DESC, queued_at", (outlet_id,))


def capture_outlet(ctx: RunContext, outlet_id: str, limit: int | None = None) -> int:
    """Return how many snapshots were made for one outlet's queue in this run.

    One address's failure, even a bug of ours in extracting its page, is
    recorded and settles that address as failed: the outlet's other captures
    go on, and the address is not first in the queue again next run.
    """
    made = 0
    items = pending(ctx, outlet_id)[:limit]
    # A capture waiting to retry lets the outlet's next address go first (fetch_each).
    answers = ctx.fetcher.fetch_each(items, lambda item: item["url"], purpose="capture", outlet_id=outlet_id)
    for item, response in answers:
        try:
            # One transaction for the snapshot and its queue row: a run killed
            # between the two would leave the article pending, captured again
            # by the next run.
            with ctx.store.transaction():
                snapshot_id = snapshot_from(ctx, item["article_id"], response, "capture")
                _settle(ctx, item["url_key"], response, snapshot_id)
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


def _settle(ctx: RunContext, url_key: str, response: Response, snapshot_id: int | None) -> None:
    if response.result in DEFERRED_RESULTS:
        return
    state = "captured" if snapshot_id is not None else "failed"
    ctx.count(f"capture_{state}")
    ctx.store.execute(
        "UPDATE capture_queue SET state = ?, last_request_id = ?, done_at = ? WHERE url_key = ?",
        (state, response.request_id, ctx.clock.now_iso(), url_key))


def snapshot_from(ctx: RunContext, article_id: int, response: Response, purpose: str) -> int | None:
    """Return the id of a new snapshot when the response is a successful HTML page, else None."""
    if not response.ok or response.warc is None:
        return None
    if not is_html(response.content_type, response.body):
        return None
    page = extract(response.body, response.content_type, response.final_url)
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
