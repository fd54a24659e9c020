"""Per-outlet values of one month of weeks, read from the record: what every figure of the month sums.

Per outlet and week: articles captured (first capture in the week), of them
archived (a successful, timestamped Internet Archive submission recorded by
the week's cut-off), articles queued, requests made (archive submissions
have no outlet and are not counted), distinct addresses listed, contributing
(1 when it captured anything in the week) and readable (1 when its latest
discovery round by the week's end validated a source), and the minutes from
each captured article's first listing to its first capture (the record's
capture_delays view, collector/record/views.py). Per outlet and
month: distinct addresses listed in the month, and requests by result.
Only non-zero values are kept.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from collector.publish import tallies
from collector.publish.periods import Period, bucket_sql, julian_day, month, week, week_id, weeks_of_month
from collector.record.shadows import prune_floor
from collector.record.store import Store

# Counts per outlet and week that add up to the month.
ADDITIVE = ("articles_queued", "articles_captured", "articles_archived", "requests")
# Per outlet and period, not additive: outlets (0/1) and distinct addresses.
PER_PERIOD = ("outlets_contributing", "sources_readable", "articles_listed")
# A LIMIT keeps SQLite from flattening the inner query into the outer one, which
# would re-evaluate julianday() at every comparison of the week CASE.
NO_FLATTEN = " LIMIT -1"


@dataclass
class Block:
    """The per-outlet values of one month of weeks."""

    month: Period
    weeks: list[Period]
    values: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (outlet, period id, measure)
    delays: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (outlet, week id) -> minutes
    results: list[str] = field(default_factory=list)  # request results seen in the month

    def value(self, outlet: str, period: str, measure: str) -> int:
        """Return one outlet's value of a measure in a period (0 when absent)."""
        return self.values.get((outlet, period, measure), 0)


def read_block(store: Store, month_id: str, since=None, update: bool = True) -> Block:
    """Return the per-outlet values of the month's weeks (from since's week on) and of the month itself.

    Read from the running aggregates (collector/publish/tallies.py), brought
    up to date with every row added since they were last (update=False: the
    caller just did, as a release does once for all its months).
    """
    if update:
        tallies.update(store.conn)
    block, starts = _empty_block(month_id, since)
    _tallied(store, block, starts)
    return _finish(store, block)


def read_block_rows(store: Store, month_id: str, since=None) -> Block:
    """Return the same Block as read_block, counted from the rows themselves (what the aggregates must equal)."""
    block, starts = _empty_block(month_id, since)
    case = bucket_sql(starts, "j")
    _articles(store, block, case)
    _counts(store, block, case, "articles_queued", """
        SELECT outlet_id, julianday(queued_at) AS j FROM capture_queue""")
    _requests(store, block, case)
    _listed(store, block, case)
    return _finish(store, block)


def _empty_block(month_id: str, since) -> tuple[Block, list]:
    block = Block(month(month_id, since), [])
    starts = [s for s in weeks_of_month(month_id) if week_id(s) in block.month.weeks]
    block.weeks = [week(s) for s in starts]
    return block, starts


def _finish(store: Store, block: Block) -> Block:
    """Add what is read from the rows either way (the sources: state-sized), and who contributed."""
    _readable(store, block)
    for wk in block.weeks:
        outlets = {o for (o, p, m) in list(block.values) if p == wk.id and m == "articles_captured"}
        for outlet in outlets:
            block.values[(outlet, wk.id, "outlets_contributing")] = 1
            block.values[(outlet, block.month.id, "outlets_contributing")] = 1
    return block


def _tallied(store: Store, block: Block, starts: list) -> None:
    """Add every value the aggregates keep of the block's weeks, and of its month."""
    days = {s.date().isoformat(): i for i, s in enumerate(starts)}
    marks = ", ".join(f"'{d}'" for d in days)
    results = set()
    for outlet, day, measure, value in store.query(
            f"SELECT outlet_id, week, measure, value FROM {tallies.COUNTS} WHERE week IN ({marks})"):
        result = measure.split(":", 1)[1]
        _add(block, outlet, block.weeks[days[day]].id, "requests", value)
        _add(block, outlet, block.month.id, f"requests:{result}", value)
        results.add(result)
    block.results = sorted(results)
    for outlet, day, count in store.query(
            f"SELECT outlet_id, week, COUNT(*) FROM {tallies.QUEUED} WHERE week IN ({marks}) GROUP BY 1, 2"):
        _add(block, outlet, block.weeks[days[day]].id, "articles_queued", count)
    for outlet, day, count in store.query(
            f"SELECT outlet_id, week, COUNT(*) FROM {tallies.LISTED} WHERE week IN ({marks}) GROUP BY 1, 2"):
        _add(block, outlet, block.weeks[days[day]].id, "articles_listed", count)
    for outlet, count in store.query(f"SELECT outlet_id, COUNT(DISTINCT digest) FROM {tallies.LISTED} "
                                     f"WHERE week IN ({marks}) GROUP BY 1"):
        _add(block, outlet, block.month.id, "articles_listed", count)
    _tallied_articles(store, block, starts)


def _tallied_articles(store: Store, block: Block, starts: list) -> None:
    """Add captured and archived articles and their capture delays from the aggregates, by week of first capture.

    An article's delay runs from the first listing of any of its addresses
    (as listed, after a redirect, canonical: the capture_delays view's rule).
    """
    low, high = julian_day(block.month.start), julian_day(block.month.end)
    cutoffs = [julian_day(w.cutoff) for w in block.weeks]
    case = bucket_sql(starts, "t.captured_j")
    rows = store.query(f"""
        SELECT t.outlet_id, {case}, x.j,
               (SELECT CASE WHEN t.captured_j >= MIN(f.j) THEN (t.captured_j - MIN(f.j)) * 1440.0 END
                  FROM {tallies.KEYS} k JOIN {tallies.FIRST_LISTED} f ON f.digest = k.digest
                 WHERE k.article_id = t.article_id)
          FROM {tallies.ARTICLES} t LEFT JOIN {tallies.ARCHIVED} x ON x.article_id = t.article_id
         WHERE t.captured_j >= ? AND t.captured_j < ? AND t.outlet_id IS NOT NULL""", (low, high))
    _add_articles(block, rows, cutoffs)


def _add_articles(block: Block, rows, cutoffs: list[float]) -> None:
    """Add rows of (outlet, week index, first confirmed copy's Julian day, delay minutes) of captured articles."""
    for outlet, cell, archived_at, delay, *_ in rows:
        if cell is None:
            continue
        wk = block.weeks[cell].id
        _add(block, outlet, wk, "articles_captured")
        if archived_at is not None and archived_at <= cutoffs[cell]:
            _add(block, outlet, wk, "articles_archived")
        # No delay when the capture came before any listing named the article (a canonical join).
        if delay is not None:
            block.delays.setdefault((outlet, wk), []).append(delay)


def first_event(store: Store):
    """Return the Julian day of the earliest observation the figures count, or None.

    A pruned working database keeps the record's recent rows only, and the
    day of its first observation beside them (collector/collect/prune.py).
    """
    floor = prune_floor(store.conn)
    row = store.one("""
        SELECT MIN(j) FROM (
            SELECT MIN(julianday(fetched_at)) AS j FROM listings
            UNION ALL SELECT MIN(julianday(captured_at)) FROM snapshots
            UNION ALL SELECT MIN(julianday(queued_at)) FROM capture_queue
            UNION ALL SELECT MIN(julianday(started_at)) FROM requests WHERE outlet_id IS NOT NULL
            UNION ALL SELECT MIN(julianday(probed_at)) FROM source_probes)""")
    found = None if row is None else row[0]
    return found if floor is None else (floor if found is None else min(floor, found))


def _add(block: Block, outlet: str, period: str, measure: str, amount: int = 1) -> None:
    block.values[(outlet, period, measure)] = block.values.get((outlet, period, measure), 0) + amount


def _articles(store: Store, block: Block, case: str) -> None:
    """Add captured and archived articles and their capture delays, by week of first capture.

    The articles with a capture in the month are found first, so the view's
    first listing is looked up for them alone.
    """
    low, high = julian_day(block.month.start), julian_day(block.month.end)
    cutoffs = [julian_day(w.cutoff) for w in block.weeks]
    rows = store.query(f"""
        SELECT outlet_id, {case} AS cell, (
                 SELECT MIN(julianday(x.recorded_at)) FROM archive_submissions x
                   JOIN snapshots s2 ON s2.id = x.snapshot_id
                  WHERE s2.article_id = f.article_id AND x.status = 'success' AND x.timestamp IS NOT NULL
               ) AS archived_at, delay_minutes, j
          FROM (SELECT article_id, outlet_id, delay_minutes, julianday(captured_at) AS j FROM capture_delays
                 WHERE article_id IN (SELECT article_id FROM snapshot_rows WHERE purpose = 'capture'
                                         AND julianday(captured_at) >= ? AND julianday(captured_at) < ?)
                   AND julianday(captured_at) >= ? AND julianday(captured_at) < ?{NO_FLATTEN}) AS f""",
                       (low, high, low, high))
    _add_articles(block, rows, cutoffs)


def _counts(store: Store, block: Block, case: str, measure: str, inner: str) -> None:
    """Add row counts per outlet and week of an inner query giving outlet_id and j."""
    rows = store.query(f"SELECT outlet_id, {case} AS cell, COUNT(*) FROM ({inner}{NO_FLATTEN}) GROUP BY 1, 2")
    for outlet, cell, count in rows:
        if cell is not None and outlet is not None:
            _add(block, outlet, block.weeks[cell].id, measure, count)


def _requests(store: Store, block: Block, case: str) -> None:
    """Add requests per outlet and week, and per outlet and result over the month."""
    low, high = julian_day(block.month.start), julian_day(block.month.end)
    rows = store.query(f"""
        SELECT outlet_id, {case} AS cell, result, COUNT(*) FROM (
            SELECT outlet_id, result, julianday(started_at) AS j FROM requests
             WHERE outlet_id IS NOT NULL AND purpose != 'archive'
               AND julianday(started_at) >= ? AND julianday(started_at) < ?{NO_FLATTEN})
        GROUP BY 1, 2, 3""", (low, high))
    results = set()
    for outlet, cell, result, count in rows:
        if cell is None:
            continue
        _add(block, outlet, block.weeks[cell].id, "requests", count)
        _add(block, outlet, block.month.id, f"requests:{result}", count)
        results.add(result)
    block.results = sorted(results)


def _listed(store: Store, block: Block, case: str) -> None:
    """Add distinct addresses listed per outlet, in each week and in the month."""
    low, high = julian_day(block.month.start), julian_day(block.month.end)
    rows = store.query(f"""
        SELECT outlet_id, url_key, {case} AS cell FROM (
            SELECT l.outlet_id AS outlet_id, e.url_key AS url_key, julianday(l.fetched_at) AS j
              FROM listings l JOIN listing_entries e ON e.listing_id = l.id
             WHERE julianday(l.fetched_at) >= ? AND julianday(l.fetched_at) < ?{NO_FLATTEN})
        GROUP BY 1, 2, 3 ORDER BY 1, 2""", (low, high))
    # Streamed by (outlet, address) so memory stays small on a long record.
    for (outlet, _key), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        cells = {row[2] for row in group if row[2] is not None}
        for cell in cells:
            _add(block, outlet, block.weeks[cell].id, "articles_listed")
        if cells:
            _add(block, outlet, block.month.id, "articles_listed")


def _readable(store: Store, block: Block) -> None:
    """Set readable per outlet and week: its latest discovery round by the week's end validated a source."""
    rounds: dict[str, dict[int, list]] = defaultdict(dict)
    for outlet, run, j in store.query(
            "SELECT outlet_id, run_id, MIN(julianday(probed_at)) FROM source_probes GROUP BY 1, 2"):
        rounds[outlet][run] = [j, None]
    for outlet, run, j in store.query(
            "SELECT outlet_id, run_id, MIN(julianday(validated_at)) FROM sources GROUP BY 1, 2"):
        entry = rounds[outlet].setdefault(run, [j, None])
        entry[0], entry[1] = min(entry[0], j), j
    for wk in block.weeks:
        end = julian_day(wk.end)
        for outlet, by_run in rounds.items():
            done = [(j, run, valid) for run, (j, valid) in by_run.items() if j < end]
            if done:
                _, _, valid = max(done)
                if valid is not None and valid < end:
                    block.values[(outlet, wk.id, "sources_readable")] = 1
    last = block.weeks[-1].id
    for (outlet, period, measure), value in list(block.values.items()):
        if period == last and measure == "sources_readable":
            block.values[(outlet, block.month.id, measure)] = value
