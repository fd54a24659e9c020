"""`export new`, `export rebuild`, `export prune`, `export verify`: the committed record from the command line."""

from __future__ import annotations

import time

import click

from collector import settings
from collector.cli.options import Busy, given_instant, lock_option, make_clock
from collector.errors import TakedownWatchError
from collector.record.export import export_new
from collector.record.follow import follow
from collector.record.lock import DatabaseBusy, exclusive
from collector.record.merge import rebuild_record
from collector.record.rebuild import resume as resume_rebuild
from collector.record.rollover import due, repositories, seed, since
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


FOLDERS_HELP = ("Export folder to read; repeat it for the record repositories of successive years, "
                "oldest first.")
EVERY = click.FloatRange(min=0, min_open=True)  # hours between two prunings


@export.command("rebuild")
@click.option("--out", "out_dirs", multiple=True, default=[DEFAULT_OUT], show_default=True, help=FOLDERS_HELP)
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="New database to write.")
@click.option("--resume", is_flag=True,
              help="The database exists and holds the record up to one of its files: read only the later "
                   "files. Refused, and the database left as it was, when it holds anything else.")
@click.option("--stream", default=None,
              help="Rebuild one stream's working database (NAME, or '.' for the folder's own files, the "
                   "default stream) instead of merging every stream.")
@lock_option
def rebuild_command(out_dirs, db, resume, stream, lock_wait):
    """Rebuild the database from the export folder (the database must not exist).

    With --resume, bring an existing database in sync with the folder instead
    (the collect workflow keeps its database in the Actions cache between runs).
    A record that spans several record repositories (one per year) is read
    from every one of them, oldest first; a resume needs only the newest.
    A record written by several jobs (streams/NAME folders beside the record
    folder's own files) is merged into one database, the same bytes whatever
    order the streams are read in; that database is read, never exported.
    A working database is one stream's: --resume, or --out streams/NAME.

    \b
    Example:
        python -m collector export rebuild --out data/record --db data/takedownwatch.db
        python -m collector export rebuild --out record-2026 --out record-2027 --db full.db
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
                files, counts = resume_rebuild(list(out_dirs), db, progress)
            else:
                counts = rebuild_record(list(out_dirs), db, progress, stream=stream)
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    rows = ", ".join(f"{t} {n}" for t, n in counts.items())
    if resume:
        click.echo(f"resumed {db}: {files} newer export file(s)" + (f": {rows}" if rows else ", already in sync"))
    else:
        click.echo(f"rebuilt {db}: " + (rows or "empty record"))


@export.command("follow")
@click.option("--out", "out_dirs", multiple=True, default=[DEFAULT_OUT], show_default=True, help=FOLDERS_HELP)
@click.option("--db", default="data/takedownwatch.db", show_default=True,
              help="The database that follows every stream (written when it does not exist).")
@click.option("--writes", default=None,
              help="The stream this database also writes (the archive job's, 'archive'): its own rows are "
                   "exported from it to streams/NAME, every other stream's read beside them.")
@click.option("--prune-every", "every", type=EVERY, default=None,
              help="Hours: then prune it and each stream's own database beside it when the last pruning is older "
                   "than this (collect/follow_prune.py), keeping what the job reads. Default: never pruned.")
@click.option("--level-every", "level_every", type=EVERY, default=None, hidden=True,
              help="The former name of --prune-every, still accepted.")
@click.option("--for-figures", "figures", is_flag=True,
              help="With --prune-every: keep the running aggregates a release computes the figures not yet "
                   "published from (publish/tallies.py), not the rows they count (the pages job).")
@click.option("--published", default="data/published", show_default=True,
              help="With --for-figures: the published history (its periods' aggregates need not be kept).")
@click.option("--awake-hours", type=click.FloatRange(min=0), default=None,
              help="With --prune-every: keep every row of the last HOURS whole (the vantages job compares the "
                   f"last {settings.VANTAGE_COMPARE_LOOKBACK_HOURS}; default {settings.WORKING_RECENT_HOURS}).")
@lock_option
def follow_command(out_dirs, db, writes, every, level_every, figures, published, awake_hours, lock_wait):
    """Bring a database that merges every stream in sync with the files each stream wrote since.

    The same rows as `export rebuild` of the same files, without reading them
    all again: each stream's own database is kept beside it (DB.streams/) and
    brought in sync with its new files, and only their new rows are merged. Where
    a late file changes what an earlier merge decided, the database is merged
    anew from those. Read, never exported (the site's figures), unless it
    --writes a stream of its own (the archive job, which submits every
    stream's captures).

    \b
    Example:
        python -m collector export follow --out data/record --db data/all-streams.db
        python -m collector export follow --out data/record --db data/takedownwatch.db --writes archive
        python -m collector export follow --out data/record --db data/all-streams.db --prune-every 4 --for-figures
    """
    from collector.collect.follow_prune import prune_followed
    from collector.publish.history import History

    if every is not None and level_every is not None:
        raise click.UsageError("--level-every is the former name of --prune-every: give one of them")
    every = level_every if every is None else every
    if (figures or awake_hours is not None) and every is None:
        raise click.UsageError("--for-figures and --awake-hours say what pruning keeps: give --prune-every too")
    try:
        with exclusive(db, "export follow", lock_wait):
            done = follow(db, list(out_dirs), writes)
            pruned = None if every is None else prune_followed(
                db, list(out_dirs), every, history=History.open(published) if figures else None, figures=figures,
                awake_hours=awake_hours)
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    read = ", ".join(f"{name or '(default)'} {n}" for name, n in sorted(done.files.items()))
    click.echo(f"followed {db}: new export files per stream: {read or 'no stream'}"
               + (f"; rebuilt the own database of {', '.join(n or '(default)' for n in done.rebuilt)}"
                  if done.rebuilt else "")
               + (f"; merged anew ({done.why})" if done.merged_anew else ""))
    if pruned is not None:
        if pruned.skipped:
            click.echo(f"{db} not pruned: {pruned.skipped}")
        else:
            mib, merged = 2 ** 20, pruned.merged
            seconds = merged.seconds + sum(p.seconds for p in pruned.parts.values())
            own = ", ".join(f"{name or '(default)'} {p.bytes_before / mib:.1f} -> {p.bytes_after / mib:.1f} MiB"
                            for name, p in sorted(pruned.parts.items()))
            click.echo(f"pruned {db}: {merged.bytes_before / mib:.1f} MiB -> {merged.bytes_after / mib:.1f} MiB, "
                       f"its streams' own databases {own}, in {seconds:.1f} s")


@export.command("prune")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True,
              help="The record folder the database is in sync with (this period's).")
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="Working database to prune.")
@click.option("--published", default="data/published", show_default=True,
              help="The published history: rows of periods it already holds need not be kept.")
@click.option("--now", default=None, help="ISO-8601 instant the recent ledger is counted back from "
                                          "(default: when the database's last run started).")
@click.option("--unless-within", "within", type=float, default=0.0, show_default=True,
              help="Hours: leave a database pruned less long ago than this as it is (pruning copies "
                   "the whole working database; once a day is enough, the rest of the day's rows wait).")
@click.option("--deadline", default=None,
              help="ISO-8601 instant (with its time zone), the job's deadline: pruning not expected to end "
                   "before it (the last pruning's time, scaled to the database's size) is left for a later job.")
@click.option("--for-figures", "figures", is_flag=True,
              help="Keep also the running aggregates a release computes figures from (publish/tallies.py: "
                   "the weeks of the months not yet in the published history), brought up to date first. No job "
                   "needs it: the pages job computes them from the database that follows every stream.")
@click.option("--archive-queue/--no-archive-queue", "archive_queue", default=True, show_default=True,
              help="Keep every capture the archive has not confirmed, and its article awake. A collect or "
                   "vantages stream's database gives --no-archive-queue: the archive job submits its "
                   "captures from the database that follows every stream, so no answer is ever in this one.")
@lock_option
def prune_command(out_dir, db, published, now, within, deadline, lock_wait, figures, archive_queue):
    """Prune the working database: leave out the rows already in the record that no job reads again.

    The database is replaced by a smaller one holding only what the jobs
    read. It must be in sync with the record (export rebuild, or rebuild
    --resume): every row left out is then in the record's export files, and
    `export rebuild` makes the full database from them. Refused, the database
    left as it was, when it holds anything the record does not. Formerly
    `export level`, a name still accepted.

    \b
    Example:
        python -m collector export prune --out data/record --db data/takedownwatch.db
    """
    from collector.clock import Clock
    from collector.collect.prune import due, prune
    from collector.collect.prunetime import fits
    from collector.publish.history import History

    when = make_clock(now).now() if now else None
    try:
        with exclusive(db, "export prune", lock_wait):
            if within:
                wanted, last = due(db, when, within)
                if not wanted:
                    click.echo(f"{db} was pruned at {last}, less than {within:g} hours ago: left as it is")
                    return
            if deadline:
                ends = given_instant(deadline, "--deadline")
                room, seconds = fits(db, ends, Clock().now())
                if not room:
                    click.echo(f"{db} left as it is: pruning is expected to take {seconds:.0f} s, past the "
                               f"deadline {deadline}; a later job prunes it")
                    return
            done = prune(db, out_dir, when, History.open(published), figures=figures, archive_queue=archive_queue)
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    if done.skipped:
        click.echo(f"{db} left as it is: {done.skipped}")
        return
    mib = 2 ** 20
    click.echo(f"pruned {db}: {done.bytes_before / mib:.1f} MiB -> {done.bytes_after / mib:.1f} MiB in "
               f"{done.seconds:.1f} s; left out (in the record): "
               + (", ".join(f"{t} {n}" for t, n in done.left_out.items()) or "nothing"))


# The command's former name, `export level`: kept, hidden from --help, for the scripts and jobs that still call it.
level_command = click.Command("level", callback=prune_command.callback, params=prune_command.params,
                              help=prune_command.help, hidden=True)
export.add_command(level_command)


@export.command("rollover")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True,
              help="This year's record folder (a clone of its record repository).")
@click.option("--from", "previous", default=None,
              help="Last year's record folder; only its last export file is read (a sparse checkout will do).")
@click.option("--continues", "repository", default=None, help="Last year's record repository, owner/name.")
@click.option("--check", is_flag=True, help="Only say whether the rollover is due: exit 0 when it is, 1 when not.")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
def rollover_command(out_dir, previous, repository, check, now):
    """Start this year's record folder from the last export file of the year before.

    Each calendar year's files are committed to a record repository of their
    own. The rollover is due when this year's folder holds no export file:
    the last file of last year's is copied into it, with CONTINUES.json
    naming where it came from, and the next export continues the chain.

    \b
    Example:
        python -m collector export rollover --check --out data/record
        python -m collector export rollover --from last-year --out data/record --continues org/tw-record-2026
    """
    if check:
        if due(out_dir):
            click.echo(f"rollover due: {out_dir} holds no export file")
            return
        click.echo(f"rollover not due: {out_dir} holds the record already")
        click.get_current_context().exit(1)
    if previous is None or repository is None:
        raise click.UsageError("--from and --continues are needed (or --check)")
    try:
        copied = seed(previous, out_dir, repository, make_clock(now).now())
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"rolled over: {copied} continues {repository}")


@export.command("repositories")
@click.option("--prefix", required=True, help="The code repository's owner/name, which names the record's.")
@click.option("--months", type=int, default=None,
              help=f"Months of record in one repository (default {settings.RECORD_REPOSITORY_MONTHS}).")
@click.option("--first", default=None, help="The label of the record's first period: also list every "
                                            "period's repository since (history-names).")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
def repositories_command(prefix, months, first, now):
    """Print the record repositories of now, as NAME=VALUE lines for $GITHUB_OUTPUT.

    label (this period: 2027, or 2027-07), current and previous (owner/name),
    current-name and previous-name (the names alone, for an App token's
    `repositories`), prepare (those that must exist by now, space-separated),
    and with --first, history-names (every period's since, oldest first).

    \b
    Example:
        python -m collector export repositories --prefix activaterights/takedownwatch >> "$GITHUB_OUTPUT"
    """
    when = make_clock(now).now()
    try:
        found = repositories(prefix, when, months)
        history = since(prefix, first, when, months) if first else None
    except TakedownWatchError as exc:
        raise click.BadParameter(str(exc)) from exc
    lines = [f"label={found.label}", f"current={found.current}", f"previous={found.previous}",
             f"current-name={found.current.split('/')[-1]}", f"previous-name={found.previous.split('/')[-1]}",
             f"prepare={' '.join(found.prepare)}"]
    if history is not None:
        lines.append(f"history-names={','.join(n.split('/')[-1] for n in history)}")
    click.echo("\n".join(lines))


def _register() -> None:
    from collector.cli.evidence import register

    register(export)


_register()
