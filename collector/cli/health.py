"""`health`: the checks that say when the collection quietly stops doing its job (docs/health.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from collector import settings
from collector.cli.options import DEFAULT_DB, edge, make_clock
from collector.clock import iso_seconds
from collector.health.checks import FAIL, Inputs, worst
from collector.health.report import as_json, markdown, summary
from collector.health.suite import all_checks, run_checks
from collector.record.store import open_read_only
from collector.record.tables import is_record


def _schedule(_context, _param, values: tuple[str, ...]) -> dict[str, int]:
    schedule = dict(settings.HEALTH_SCHEDULE_MINUTES)
    for value in values:
        kind, _, minutes = value.partition("=")
        if not kind or not minutes.isdigit() or int(minutes) < 1:
            raise click.BadParameter(f"{value!r} is not KIND=MINUTES (e.g. run=15)")
        schedule[kind] = int(minutes)
    return schedule


def _checks(_context, _param, values: tuple[str, ...]) -> tuple[str, ...]:
    known = {c.id for c in all_checks()}
    unknown = [v for v in values if v not in known]
    if unknown:
        raise click.BadParameter(f"unknown check id(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return values


@click.command("health")
@click.option("--db", default=DEFAULT_DB, show_default=True,
              help="A working database, or the one that follows every stream (`export follow`).")
@click.option("--record", "record_dir", default=None, type=click.Path(file_okay=False),
              help="The record folder (every stream's): export files' signatures and tokens, the repository's size.")
@click.option("--trust", "trust_dir", default=settings.TRUST_DIR, show_default=True,
              help="Folder of allowed_signers and timestamping.toml.")
@click.option("--cache-json", default=None, type=click.Path(dir_okay=False),
              help="GitHub's answer to GET /repos/OWNER/REPO/actions/cache/usage, saved to a file.")
@click.option("--schedule", multiple=True, callback=_schedule, metavar="KIND=MINUTES",
              help="Minutes between scheduled starts of a job kind (default: run=15, archive=60); repeatable.")
@click.option("--database-bound", type=click.IntRange(min=1), default=None,
              help=f"Bytes a working database may reach (default {settings.HEALTH_DATABASE_BOUND_BYTES}).")
@click.option("--check", "only", multiple=True, callback=_checks, help="Only this check id (repeatable).")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
@click.option("--json", "as_json_output", is_flag=True, help="Print the report as JSON.")
@click.option("--summary", "summary_file", default=None, type=click.Path(dir_okay=False),
              help="Append a summary naming no outlet (counts per check) to this file ($GITHUB_STEP_SUMMARY).")
@edge
def health(db, record_dir, trust_dir, cache_json, schedule, database_bound, only, now, as_json_output, summary_file):
    """Run the health checks; exit 1 when one fails, 0 otherwise.

    Each check has an id, thresholds in collector/settings.py and a state (ok,
    warn, fail) per subject: an outlet, a stream's job kind, an authority, or
    the record. The report names outlets: keep it private. Each check's
    runbook is docs/health.md#<check id>.

    \b
    Example:
        python -m collector health --db data/takedownwatch.db --record data/record
        python -m collector health --json --now 2026-09-01T12:00:00Z > health.json
    """
    clock = make_clock(now)
    if not (Path(db).is_file() and is_record(str(Path(db).resolve()))):
        raise click.BadParameter(f"{db} is not a database of the record", param_hint="--db")
    usage = None
    if cache_json:
        try:
            usage = json.loads(Path(cache_json).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise click.BadParameter(f"cannot read {cache_json}: {exc}", param_hint="--cache-json") from exc
    conn = open_read_only(db)
    try:
        inputs = Inputs(conn, clock.now(), Path(db), Path(record_dir) if record_dir else None, Path(trust_dir),
                        usage, schedule, database_bound)
        findings = run_checks(inputs, only)
    finally:
        conn.close()
    stamp = iso_seconds(clock.now())
    if as_json_output:
        click.echo(json.dumps(as_json(findings, stamp), indent=1, ensure_ascii=False))
    else:
        click.echo(markdown(findings, stamp), nl=False)
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as out:
            out.write(summary(findings, stamp))
    sys.exit(1 if worst(findings) == FAIL else 0)
