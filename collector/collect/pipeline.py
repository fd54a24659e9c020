"""One collection run: for every active outlet, sources, listings, queue and captures.

Outlets are worked on concurrently, one thread each, so a run lasts about as
long as its busiest host needs; the fetcher's per-host pacing keeps every
host at its interval whatever the number of threads. One outlet's failure,
even a bug, is recorded as a warning and never stops the others.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed

from collector import settings
from collector.collect.capture import capture_outlet
from collector.collect.context import RunContext
from collector.collect.shards import in_shard
from collector.collect.discovery import Discoverer, current_sources
from collector.collect.sources import OutletRow, SourceReader
from collector.errors import RecordWriteError


def active_outlets(ctx: RunContext, only: list[str] | None = None,
                   shard: tuple[int, int] = (1, 1)) -> list[OutletRow]:
    """Return the active outlets (or the named ones) of shard (K, N) as OutletRows."""
    rows = ctx.store.query("SELECT id, homepage, operator_sources FROM outlets WHERE active = 1 ORDER BY id")
    outlets = [OutletRow(r["id"], r["homepage"], tuple(json.loads(r["operator_sources"]))) for r in rows]
    if only:
        outlets = [o for o in outlets if o.id in only]
    return [o for o in outlets if in_shard(o.homepage, shard)]


def collect_outlet(ctx: RunContext, outlet: OutletRow) -> dict:
    """Return a summary after discovering (when needed), reading and capturing one outlet."""
    reader = SourceReader(ctx, outlet)
    sources = current_sources(ctx, outlet.id)
    discovered = False
    if not sources:
        Discoverer(ctx, outlet, reader).run()
        discovered = True
        sources = current_sources(ctx, outlet.id)
    listed = [reader.read(url) for url, _kind in sources]
    # Sources left unread for want of time say nothing about them: no rediscovery then.
    if (sources and not any(listed) and not discovered and not _read_this_run(ctx, outlet.id)
            and not ctx.out_of_time("listing")):
        # No source works any more: look again in the same run.
        Discoverer(ctx, outlet, reader).run()
    captured = capture_outlet(ctx, outlet.id)
    return {"outlet": outlet.id, "sources": len(sources), "captured": captured}


def _read_this_run(ctx: RunContext, outlet_id: str) -> bool:
    return ctx.store.one("SELECT 1 FROM listings WHERE run_id = ? AND outlet_id = ?",
                         (ctx.run_id, outlet_id)) is not None


def run_collection(ctx: RunContext, outlets: list[OutletRow], *, workers: int | None = None,
                   progress=None) -> list[dict]:
    """Return the per-outlet summaries of a run over the given outlets, in parallel."""
    workers = workers or min(settings.MAX_CONCURRENT_OUTLETS, max(1, len(outlets)))
    summaries: list[dict] = []
    # Starting a thread waits for it to run, and a thread that starts working
    # at once delays the start of the next: the last outlet would begin a
    # fraction of a second late. The threads wait at a gate opened when all
    # have been handed their outlet.
    gate = threading.Event()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="outlet") as pool:
        futures = {pool.submit(_guarded, ctx, outlet, gate): outlet for outlet in outlets}
        # First contacts wait at a common line, so the threads' preparation
        # (reading the record, building the first requests) does not stagger them.
        ctx.fetcher.start_line(ctx.clock.monotonic() + settings.START_LINE_SECONDS)
        gate.set()
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                summary = future.result()
                summaries.append(summary)
                if progress:
                    progress(done, len(outlets), summary)
        except RecordWriteError:
            # The record cannot be written: no outlet not yet begun is begun,
            # those under way stop at their next write, and the error goes up.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return summaries


def _guarded(ctx: RunContext, outlet: OutletRow, gate: threading.Event | None = None) -> dict:
    if gate is not None:
        gate.wait()
    try:
        return collect_outlet(ctx, outlet)
    except RecordWriteError:
        raise  # not this outlet's failure: the collector cannot run on
    except Exception as exc:  # one outlet's bug must not stop the run; it is recorded
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        ctx.warnings.append(f"{outlet.id}: {detail}")
        print(f"warning: {outlet.id}: {detail}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return {"outlet": outlet.id, "error": detail}
