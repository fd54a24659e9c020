"""`publish` and `audit`: the published history from the command line."""

from __future__ import annotations

from pathlib import Path

import click

from collector import settings
from collector.cli.options import common_options, edge, make_clock, open_store


def history_options(func):
    """Add --published and --decisions, the two folders of the published history."""
    func = click.option("--decisions", default=settings.DECISIONS_DIR, show_default=True,
                        help="Folder of the private side of each decision (never published).")(func)
    return click.option("--published", default=settings.PUBLISHED_DIR, show_default=True,
                        help="Folder of the published history the site is built from.")(func)


@click.command()
@common_options
@history_options
@click.option("--summary", "summary_file", default=None,
              help="Append a Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY).")
@edge
def publish(db, warc_dir, outlets, now, vantage, published, decisions, summary_file):
    """Publish every period closed since the last release, if the disclosure audit passes.

    A week is published a day after it ends, a month with its last week; each is
    decided once and appended to the published history. If the audit of the whole
    history with the new periods fails, nothing is appended and the reason is
    printed (and written to --summary); the exit code is still 0, as for a run
    whose sites all failed: the refusal is the audit doing its job.

    \b
    Example:
        python -m collector publish --summary "$GITHUB_STEP_SUMMARY"
    """
    from collector.errors import TakedownWatchError
    from collector.publish.history import History
    from collector.publish.release import release

    if not Path(db).exists():
        raise click.BadParameter(f"no database at {db} (run `python -m collector run` first)", param_hint="--db")
    store = open_store(db)
    try:
        outcome = release(store, make_clock(now).now(), History.open(published, decisions))
    except TakedownWatchError as exc:  # an edited history, a contradiction: still said in the summary
        _summarise(summary_file, f"Nothing new was published: {exc}")
        raise
    finally:
        store.close()
    click.echo(outcome.summary())
    _summarise(summary_file, outcome.summary())


def _summarise(summary_file: str | None, text: str) -> None:
    """Append the release's outcome to a Markdown job summary, when one was asked for."""
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(f"## Published figures\n\n{text}\n")


@click.command()
@history_options
@click.option("--details", is_flag=True, help="Name the groups and ranges of failing counts (internal use only).")
@edge
def audit(published, decisions, details):
    """Audit the published history: every withheld count must stay as uncertain as its range requires.

    Exit code 1 when some withheld count could be narrowed below its protection range.

    \b
    Example:
        python -m collector audit
    """
    from collector.publish.audit import audit_history, details as finding_lines
    from collector.publish.history import History

    result = audit_history(History.open(published, decisions))
    click.echo(result.summary())
    if details:
        for line in finding_lines(result):
            click.echo(line)
    if not result.passed:
        raise SystemExit(1)
