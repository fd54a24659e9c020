"""`compare-vantages`: differences by vantage, found where every stream's answers are present."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import click

from collector import settings
from collector.cli.options import common_options, edge, given_instant, lock_option, make_clock, open_store
from collector.collect.context import RunContext, default_vantage
from collector.collect.vantages import compare_streams
from collector.errors import BadArgument
from collector.record.lock import exclusive
from collector.record.store import open_read_only
from collector.record.streams import MERGED, check_name, set_stream, stream_of
from collector.record.tables import is_record


def _stream_option(_context, _param, value: str | None) -> str | None:
    try:
        return check_name(value) if value else None
    except BadArgument as exc:
        raise click.BadParameter(str(exc)) from exc


def _same_file(a: str, b: str) -> bool:
    return Path(a).resolve() == Path(b).resolve()


@click.command("compare-vantages")
@common_options
@click.option("--from", "source", default=None, metavar="DB",
              help="Database holding every stream's answers: one that `export follow --out RECORD --db DB` "
                   "keeps in sync (the workflow's) or `export rebuild` writes (default: --db itself, when it "
                   "holds several vantages' runs).")
@click.option("--since", default=None,
              help="ISO-8601 instant (with its time zone): compare the answers started from then on "
                   f"(default: the last {settings.VANTAGE_COMPARE_LOOKBACK_HOURS} hours).")
@click.option("--stream", default=None, callback=_stream_option,
              help="Record stream --db is (its export folder streams/NAME and id range), for a new database; "
                   "the workflow's is 'vantages'.")
@lock_option
@edge
def compare_vantages(db, warc_dir, outlets, now, vantage, source, since, stream, lock_wait):
    """Record every difference between vantages' answers for one address, with both request ids.

    Each vantage's final answer for an article address (a capture or a check)
    is compared with every other vantage's latest earlier answer for it within
    the window (settings.VANTAGE_COMPARE_WINDOW_HOURS): reached from one and
    blocked, challenged, timed out or reset from the other, a different status,
    final address or text after the comparison normalisation. Each difference
    is one row of vantage_differences in --db (this job's own stream, exported
    with `export new`); a difference already recorded, in --db or in --from, is
    never recorded again. Nothing about a single article is published; review
    them with `vantage-differences`.

    \b
    Example:
        python -m collector export rebuild --out data/record --db merged.db
        python -m collector compare-vantages --db vantages.db --stream vantages --from merged.db
    """
    clock = make_clock(now)  # every argument is checked before a database is opened
    start = given_instant(since, "--since") if since else clock.now() - timedelta(
        hours=settings.VANTAGE_COMPARE_LOOKBACK_HOURS)
    if start > clock.now():
        raise click.BadParameter(f"{since} is after the comparison's time ({clock.now_iso()})", param_hint="--since")
    if source is not None and _same_file(source, db):
        source = None
    if source is not None and not (Path(source).is_file() and is_record(str(Path(source).resolve()))):
        raise click.BadParameter(f"{source} is not a database of the record", param_hint="--from")
    if source is None and not (Path(db).is_file() and is_record(str(Path(db).resolve()))):
        raise click.BadParameter(f"{db} is not a database of the record, and no --from names the database "
                                 "holding the answers to compare", param_hint="--db")
    with exclusive(db, "compare-vantages", lock_wait):
        store = open_store(db)
        try:
            if stream_of(store.conn) == MERGED:
                raise click.BadParameter(f"{db} merges every stream: it is read, never written; give it as "
                                         "--from, and as --db this job's own database", param_hint="--db")
            if stream:
                with store.transaction() as conn:
                    set_stream(conn, stream)
            ctx = RunContext.open(store, "compare-vantages", clock=clock, vantage=vantage or default_vantage())
            read = open_read_only(source) if source is not None else None
            try:
                found = compare_streams(store, read, run_id=ctx.run_id, since=start, now=clock.now())
            finally:
                if read is not None:
                    read.close()
            for kind, n in found.recorded.items():
                ctx.count(f"vantage_differences_{kind}", n)
            ctx.count("answers_compared", found.answers)
            ctx.finish()
        finally:
            store.close()
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(found.recorded.items())) or "none"
    click.echo(f"compare-vantages run {ctx.run_id}: {found.answers} answers from {found.vantages} vantages "
               f"since {start.isoformat()}, {found.pairs} pairs compared; {sum(found.recorded.values())} "
               f"differences recorded ({kinds}), {found.known} already recorded")
