"""Revisits: each captured article is checked again on a fixed schedule, and every check is kept.

Schedule. A regular slot ('1h', '6h', ... from settings.RECHECK_SCHEDULE_HOURS)
falls due its number of hours after the article's first capture snapshot.
The first `absent` check since the last `present` one opens an absence, and
follow-ups fall due settings.GONE_FOLLOWUP_HOURS after it (slot
'followup:<that check's id>+1h'), so the gone rule can be decided within hours
rather than at the next slot, days later. A check scheduled is a check
performed: a run that missed slots (collector down, budget spent) is followed
by one that performs each of them late, once, with its own row, most overdue
first. Overdue slots of one article are not merged into one check, because
each row says when it was due and when it was done, and merging would make a
missed check look like it never existed. Checks go on after an article is
recorded gone. When a host fails settings.RECHECK_HOST_DOWN_AFTER checks in a
row (timeouts, 5xx, connection failures), its outlet's remaining checks are
deferred to the next run, still due.

Outcomes (`classify`):
  present       a snapshot was made: a 2xx HTML page that is the article;
  absent        404 or 410 (after any redirects); 451, a server withholding the
                article for legal reasons (RFC 7725); or a redirect to a page
                that is not the article (`front_page_reason`);
  inconclusive  anything else: timeout, 5xx, challenge or block, robots.txt
                unreachable or disallowing, connection failure, other 4xx,
                non-HTML, limits. It is neither evidence of presence nor of absence.
"""

from __future__ import annotations

from collections.abc import Collection
import json
import sys
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from collector.collect import changes, events
from collector import settings
from collector.collect.ahead import fetched_ahead
from collector.collect.capture import page_of, snapshot_from
from collector.collect.outcomes import classify, known_keys
from collector.clock import iso, parse_instant
from collector.collect.context import RunContext
from collector.errors import RecordWriteError
from collector.net.fetcher import Response
from collector.record import fold, fold_visit
from collector.record.store import Store
from collector.record.streams import next_id

OUTCOMES = ("present", "absent", "inconclusive")
# Results that say the host, not the article, is failing. After
# settings.RECHECK_HOST_DOWN_AFTER of them in a row, the outlet's remaining
# checks wait for the next run rather than spend minutes each on retries.
HOST_DOWN_RESULTS = ("timeout", "connection_error", "server_error")


@dataclass(frozen=True)
class DueCheck:
    """One check that has fallen due: which article, which slot, since when, and which try."""

    article_id: int
    outlet_id: str
    url: str
    slot: str
    due_at: datetime
    follows_check_id: int | None = None
    retry_of: int | None = None  # the failed try of the same slot this one repeats
    try_number: int = 1
    ready_at: datetime | None = None  # when a run may take it (a follow-up or retry: a little before due_at)


# -- schedule -----------------------------------------------------------------

def _label(hours: float) -> str:
    """Return hours as a slot label number: 1 -> '1', 0.5 -> '0.5'."""
    return f"{hours:g}"


def _pairs(kind: str, count: int) -> str:
    """Return named placeholders for two-column VALUES rows: '(:s0a, :s0b), (:s1a, :s1b)'."""
    return ", ".join(f"(:{kind}{n}a, :{kind}{n}b)" for n in range(count))


def _retried(prefix: str = "o") -> str:
    """Return the SQL test that a check failed for a passing reason (settings.RECHECK_RETRY_RESULTS)."""
    results = ", ".join(f"'{r}'" for r in settings.RECHECK_RETRY_RESULTS)
    return f"{prefix}.outcome = 'inconclusive' AND {prefix}.result IN ({results})"


# A retried slot is labelled '<slot>#<try>': '8760h#2', 'followup:12+6h#3'.
_NEXT_TRY = ("CASE WHEN instr(o.slot, '#') > 0 THEN substr(o.slot, 1, instr(o.slot, '#') - 1) ELSE o.slot END"
             " || '#' || (o.try_number + 1)")


def _pending_sql(until: str = "9999-12-31T23:59:59Z", outlets: Collection[str] | None = None) -> tuple[str, dict]:
    """Return (SQL, parameters) selecting the scheduled checks not yet performed that may be taken by `until`.

    Three kinds: regular slots, follow-ups of a first absence, and new tries
    of a check that failed for a passing reason (settings.RECHECK_RETRY_HOURS
    after the try before, at most 1 + that many tries). Follow-ups and tries
    may be taken settings.RECHECK_SLACK_MINUTES early. With `outlets`, only
    their articles' checks (a shard's: collect/shards.py). Regular slots are
    read from the articles' projection (record/fold.py: first capture, slots
    checked, outlet; record/fold_visit.py: the address), the same in a pruned
    working database as in a full one; a slot already checked is passed over before any date
    arithmetic, so an article whose slots are all checked costs little.
    """
    slots = [(f"{_label(h)}h", float(h)) for h in settings.RECHECK_SCHEDULE_HOURS]
    follow = [(_label(h), float(h)) for h in settings.GONE_FOLLOWUP_HOURS]
    retry = [(float(n), float(h)) for n, h in enumerate(settings.RECHECK_RETRY_HOURS, start=1)]
    sql = f"""
    WITH slots(slot, hours) AS (VALUES {_pairs("s", len(slots))}),
         follow(label, hours) AS (VALUES {_pairs("f", len(follow))}),
         retry(try, hours) AS (VALUES {_pairs("r", len(retry))}),
         first AS (SELECT article_id, first_capture_us AS us, slots FROM fold_articles
                   WHERE first_capture_us IS NOT NULL),
         pending AS (
           SELECT f.article_id, s.slot, NULL AS follows, NULL AS retry_of, 1 AS try, {fold.text_sql('f.us')} AS since,
                  s.hours, 0 AS early
           FROM first f CROSS JOIN slots s
           WHERE instr(f.slots, ',' || s.slot || ',') = 0
             AND {fold.julian_sql('f.us')} + s.hours / 24.0 <= julianday(:until)
           UNION ALL
           SELECT o.article_id, 'followup:' || o.id || '+' || h.label || 'h', o.id, NULL, 1, o.performed_at,
                  h.hours, 1
           FROM checks o CROSS JOIN follow h
           WHERE o.opens_absence = 1 AND julianday(o.performed_at) + h.hours / 24.0 - :slack <= julianday(:until)
             AND NOT EXISTS (
             SELECT 1 FROM checks c WHERE c.article_id = o.article_id
             AND c.slot = 'followup:' || o.id || '+' || h.label || 'h')
           UNION ALL
           SELECT o.article_id, {_NEXT_TRY}, o.follows_check_id, o.id, o.try_number + 1, o.performed_at,
                  r.hours, 1
           FROM checks o JOIN retry r ON r.try = o.try_number
           WHERE {_retried()} AND julianday(o.performed_at) + r.hours / 24.0 - :slack <= julianday(:until)
             AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.article_id = o.article_id AND c.slot = {_NEXT_TRY}))
    SELECT p.article_id, p.slot, p.follows, p.retry_of, p.try, p.since, p.hours, p.early,
           f.outlet_id, f.url, julianday(p.since) + p.hours / 24.0 AS due_day
    FROM pending p JOIN fold_articles f ON f.article_id = p.article_id
    WHERE f.outlet_id IS NOT NULL
      AND (:outlets IS NULL OR f.outlet_id IN (SELECT value FROM json_each(:outlets)))"""
    names = [f"{kind}{n}{col}" for kind, rows in (("s", slots), ("f", follow), ("r", retry))
             for n in range(len(rows)) for col in "ab"]
    values = [v for row in slots + follow + retry for v in row]
    chosen = None if outlets is None else json.dumps(sorted(outlets))
    return sql, {**dict(zip(names, values)), "until": until, "outlets": chosen,
                 "slack": settings.RECHECK_SLACK_MINUTES / (24 * 60)}


def _due(store: Store, row) -> DueCheck:
    """Return the DueCheck of one pending row, its instants computed exactly (julianday only pre-sorts)."""
    due_at = parse_instant(row["since"]) + timedelta(hours=row["hours"])
    ready_at = due_at
    if row["early"]:
        ready_at = due_at - timedelta(minutes=settings.RECHECK_SLACK_MINUTES)
        if row["follows"] is not None:
            # Never early enough to end an absence's checks short of the span the gone rule needs.
            opened = store.one("SELECT performed_at FROM checks WHERE id = ?", (row["follows"],))[0]
            need = parse_instant(opened) + timedelta(hours=settings.GONE_MIN_SPAN_HOURS)
            if due_at >= need:
                ready_at = max(ready_at, need)
    return DueCheck(row["article_id"], row["outlet_id"], fold_visit.address(row["url"]), row["slot"], due_at,
                    row["follows"], row["retry_of"], row["try"], ready_at)


def due_checks(store: Store, now: datetime, limit: int | None = None,
               outlets: Collection[str] | None = None) -> list[DueCheck]:
    """Return the checks a run may take at `now` (of `outlets` only, when given), most overdue first, at most `limit`."""
    sql, params = _pending_sql(iso(now), outlets)
    rows = store.query(f"{sql} ORDER BY due_day, p.article_id, p.hours LIMIT :limit",
                       {**params, "limit": -1 if limit is None else limit})
    return [d for d in (_due(store, r) for r in rows) if d.ready_at <= now]


def count_due(store: Store, now: datetime, outlets: Collection[str] | None = None) -> int:
    """Return how many checks are due at `now` (of `outlets` only, when given), whatever the budget."""
    sql, params = _pending_sql(iso(now), outlets)
    return store.one(f"SELECT COUNT(*) FROM ({sql})", params)[0]


def pending_articles(conn) -> set[int]:
    """Return the ids of the articles with any check not yet performed, due now or later."""
    sql, params = _pending_sql()
    return {row[0] for row in conn.execute(f"SELECT DISTINCT p.article_id FROM ({sql}) AS p", params)}


def awaiting_follow_up(conn) -> set[int]:
    """Return the ids of the articles owed a follow-up of an absence or a new try of a failed check."""
    sql, params = _pending_sql()
    return {row[0] for row in conn.execute(
        f"SELECT DISTINCT p.article_id FROM ({sql}) AS p WHERE p.follows IS NOT NULL OR p.retry_of IS NOT NULL",
        params)}


def next_due_at(store: Store) -> datetime | None:
    """Return when the earliest check not yet performed falls due, or None when none is scheduled."""
    sql, params = _pending_sql()
    row = store.one(f"{sql} ORDER BY due_day LIMIT 1", params)
    return None if row is None else _due(store, row).due_at


# -- performing ---------------------------------------------------------------

def perform(ctx: RunContext, due: DueCheck, response: Response | None = None) -> tuple[int, str, list[str], str]:
    """Return (check id, outcome, kinds of events recorded, fetch result) after performing one due check.

    `response`, when given, is the check's fetch already made (check_outlet's
    queue of the outlet's checks); otherwise it is fetched now.
    """
    if response is None:
        response = ctx.fetcher.get(due.url, purpose="recheck", outlet_id=due.outlet_id)
    # The page is classified, extracted and compared with the snapshot before
    # first, reading the store a statement at a time: the write below holds the
    # store's only lock, and every other outlet's ledger rows wait for it.
    reader = ctx.store.reader()
    outcome, detail = classify(response, due.url, known_keys(reader, due.article_id))
    page, prepared = None, None
    if outcome == "present":
        page = page_of(response)
        if page is None:
            outcome, detail = "inconclusive", "no snapshot could be made of the response"
        else:
            prepared = changes.prepare(ctx, reader, _about_to_be(ctx, due.article_id, response, page),
                                       ctx.warc.root)
    # One transaction per check: a run killed mid-way leaves either the whole
    # check (snapshot, row, events) or none of it, and the slot stays due.
    with ctx.store.transaction() as conn:
        snapshot_id = None
        if page is not None:
            snapshot_id = snapshot_from(ctx, due.article_id, response, "recheck", page)
        opens = outcome == "absent" and not events.absence_streak(conn, due.article_id)
        check_id = conn.execute(
            "INSERT INTO checks (id, article_id, slot, follows_check_id, due_at, performed_at, run_id, url, "
            "result, request_id, request_chain, snapshot_id, outcome, opens_absence, detail, try_number, "
            "retry_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (next_id(conn, "checks"), due.article_id, due.slot, due.follows_check_id, iso(due.due_at),
             ctx.clock.now_iso(),
             ctx.run_id, due.url, response.result, response.request_id, json.dumps(response.chain),
             snapshot_id, outcome, int(opens), detail, due.try_number, due.retry_of)).lastrowid
        check = conn.execute("SELECT * FROM checks WHERE id = ?", (check_id,)).fetchone()
        kinds = events.after_check(ctx, conn, check) + changes.after_check(ctx, conn, check, ctx.warc.root, prepared)
    return check_id, outcome, kinds, response.result


def _about_to_be(ctx: RunContext, article_id: int, response: Response, page) -> dict:
    """Return the snapshot a present check is about to write, as changes.prepare reads it (id 0: none yet)."""
    return {"id": 0, "article_id": article_id, "captured_at": ctx.clock.now_iso(), "final_url": response.final_url,
            "extractor": page.extractor, "html_sha256": page.html_sha256,
            **{f: getattr(page, f) for f in events.EXTRACTED_FIELDS}}


def check_outlet(ctx: RunContext, outlet_id: str, checks: list[DueCheck]) -> Counter:
    """Return the tally of outcomes and events after performing one outlet's due checks in order."""
    tally: Counter = Counter()
    failing = started = ended = 0

    def due_ones():
        # Drawn one at a time as the outlet's queue needs them (a check waiting
        # to retry lets the next go first). A check still waiting may be failing
        # too: none is begun while those and the failures in a row could make
        # the host down, so a down host costs what it did when checks waited in turn.
        nonlocal started
        for due in checks:
            if failing + (started - ended) >= settings.RECHECK_HOST_DOWN_AFTER:
                return
            if ctx.out_of_time("recheck", due.url):
                tally["carried_over"] += len(checks) - started  # still due, for the next run
                tally["deferred"] -= len(checks) - started  # counted once, as carried over
                return
            started += 1
            yield due

    def answers():
        # The host's failures are counted as each answer comes, in the fetching thread.
        nonlocal ended, failing
        for due, response in ctx.fetcher.fetch_each(due_ones(), lambda due: due.url, purpose="recheck",
                                                    outlet_id=outlet_id):
            ended += 1
            failing = failing + 1 if response.result in HOST_DOWN_RESULTS else 0
            yield due, response

    try:
        # The host's next check is fetched while this one is compared and written (collect/ahead.py).
        for due, response in fetched_ahead(answers(), settings.FETCH_AHEAD, f"recheck-{outlet_id}",
                                            before=ctx.fetcher.pacer.give_way):
            _check_id, outcome, kinds, _result = perform(ctx, due, response)
            tally[outcome] += 1
            tally.update(f"event_{kind}" for kind in kinds)
        tally["deferred"] += len(checks) - started  # still due: performed late, never skipped
    except RecordWriteError:
        raise  # not this outlet's failure: the collector cannot run on
    except Exception as exc:  # one outlet's bug must not stop the others; its checks stay due
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        ctx.warnings.append(f"recheck {outlet_id}: {detail}")
        print(f"warning: recheck {outlet_id}: {detail}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        tally["errors"] += 1
    return tally


def run_rechecks(ctx: RunContext, *, workers: int | None = None, outlets: Collection[str] | None = None) -> dict:
    """Return a summary (due, performed, left, outcomes, events) after performing the checks due now.

    With `outlets`, only the checks of their articles: a shard revisits what it collects.

    At most settings.RECHECKS_PER_RUN checks, and settings.RECHECKS_PER_OUTLET_PER_RUN
    of one outlet, the most overdue first; the rest, and what the run's deadline
    leaves, stay due for the next run. Outlets are worked on concurrently, one
    thread each, and the fetcher paces every host whatever the number of threads.
    """
    if ctx.fetcher is None or ctx.warc is None:
        raise TypeError("run_rechecks needs a run context opened with a WARC folder (and so a fetcher)")
    now = ctx.clock.now()
    due = due_checks(ctx.store, now, settings.RECHECKS_PER_RUN, outlets)
    # Counting everything due costs a second pass; only needed when the budget cut the list.
    backlog = count_due(ctx.store, now, outlets) if len(due) >= settings.RECHECKS_PER_RUN else len(due)
    by_outlet: dict[str, list[DueCheck]] = defaultdict(list)
    tally: Counter = Counter()
    for item in due:
        if len(by_outlet[item.outlet_id]) < settings.RECHECKS_PER_OUTLET_PER_RUN:
            by_outlet[item.outlet_id].append(item)
        else:
            tally["over_budget"] += 1
    if by_outlet:
        workers = workers or min(settings.MAX_CONCURRENT_OUTLETS, len(by_outlet))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="recheck") as pool:
            for result in pool.map(lambda pair: check_outlet(ctx, *pair), by_outlet.items()):
                tally.update(result)
    compared = changes.settle(ctx)  # checks across an extractor upgrade, their older HTML from release assets
    tally.update({k: v for k, v in compared.items() if k.startswith("event_")})
    performed = sum(tally[o] for o in OUTCOMES)
    for name, amount in tally.items():
        ctx.count(f"recheck_{name}", amount)
    return {"due": backlog, "performed": performed, "left": backlog - performed,
            **{o: tally[o] for o in OUTCOMES}, "deferred": tally["deferred"], "errors": tally["errors"],
            "carried_over": tally["carried_over"] + tally["over_budget"],
            "events": {k[len("event_"):]: v for k, v in sorted(tally.items()) if k.startswith("event_")}}
