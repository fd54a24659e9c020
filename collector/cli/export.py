"""`export new`, `export rebuild`, `export verify`: the committed record from the command line."""

from __future__ import annotations

import time

import click

from collector.cli.options import Busy, lock_option, make_clock
from collector.errors import TakedownWatchError
from collector.record.export import export_new
from collector.record.lock import DatabaseBusy, exclusive
from collector.record.rebuild import rebuild, resume as resume_rebuild
from collector.record.store import Store


DEFAULT_OUT = "data/record"


@click.group()
def export():
    """The committed record: write new rows to data/record/, rebuild the database from it.

    \b
    Example:
        python -m collector export new --warc-dir data/warc
    """


@export.command("new")
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="SQLite database of the record.")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder (committed to git).")
@click.option("--warc-dir", default=None, help="Record size and SHA-256 of the WARC files new rows point at.")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
@lock_option
def export_new_command(db, out_dir, warc_dir, now, lock_wait):
    """Write every row added or changed since the last export to one new file.

    \b
    Example:
        python -m collector export new --db data/takedownwatch.db --out data/record --warc-dir data/warc
    """
    when = make_clock(now).now()
    try:
        with exclusive(db, "export new", lock_wait):
            store = Store(db)
            result = export_new(store, out_dir, warc_dir=warc_dir, now=when)
            store.close()
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    if result.path is None:
        click.echo("nothing new to export")
    else:
        click.echo(f"wrote {result.path}: " + ", ".join(f"{t} {n}" for t, n in result.rows.items()))
    for name in result.missing_warc_files:
        click.echo(f"warning: WARC file {name} is not in {warc_dir}; its digest was not recorded", err=True)


@export.command("rebuild")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder to read.")
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="New database to write.")
@click.option("--resume", is_flag=True,
              help="The database exists and holds the record up to one of its files: read only the later "
                   "files. Refused, and the database left as it was, when it holds anything else.")
@lock_option
def rebuild_command(out_dir, db, resume, lock_wait):
    """Rebuild the database from the export folder (the database must not exist).

    With --resume, bring an existing database level with the folder instead
    (the collect workflow keeps its database in the Actions cache between runs).

    \b
    Example:
        python -m collector export rebuild --out data/record --db data/takedownwatch.db
        python -m collector export rebuild --resume --out data/record --db data/takedownwatch.db
    """
    shown = [time.monotonic()]

    def progress(done: int, total: int) -> None:  # a rebuild of months of record takes minutes
        if time.monotonic() - shown[0] >= 5 or done == total:
            shown[0] = time.monotonic()
            click.echo(f"  read {done}/{total} export files ({done / total:.0%})", err=True)

    try:
        with exclusive(db, "export rebuild", lock_wait):
            if resume:
                files, counts = resume_rebuild(out_dir, db, progress)
            else:
                counts = rebuild(out_dir, db, progress)
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    rows = ", ".join(f"{t} {n}" for t, n in counts.items())
    if resume:
        click.echo(f"resumed {db}: {files} newer export file(s)" + (f": {rows}" if rows else ", already level"))
    else:
        click.echo(f"rebuilt {db}: " + (rows or "empty record"))


def _register() -> None:
    from collector.cli.evidence import register

    register(export)


_register()
