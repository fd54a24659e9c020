"""`browse`: from the private record repositories to Datasette on loopback, in one command, as the reader.

Every period's record repository (OWNER/NAME-record-PERIOD, collector/record/
rollover.py) is cloned, or fetched into the clone made last time, with the
reader's own GitHub credentials (gh's: collector/net/github.py); the newest
period is found by the clock and each one's CONTINUES.json names the one
before. A database beside the clones is brought in sync with them by `export
follow` (only the files written since the last time are read), and
Datasette serves it on 127.0.0.1 with the project's metadata and plugins, as
`make browse` does, reading each page as captured from the WARC release
assets of OWNER/NAME through the REST API with the same token.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

import collector
from collector import settings
from collector.cli.options import Busy, lock_option, make_clock
from collector.errors import TakedownWatchError
from collector.net.github import (
    AccessError, Server, check_repository_name, clone_or_update, gh_token, repository, server_from_env,
)
from collector.record.follow import follow
from collector.record.lock import DatabaseBusy, exclusive
from collector.record.rollover import continued_from, holds_record, repositories

DATASETTE = Path(collector.__file__).resolve().parent.parent / "datasette"
DATABASE = "takedownwatch.db"  # so Datasette names it `takedownwatch`, as the metadata is keyed


@click.command("browse")
@click.option("--repo", "code", required=True,
              help="The project's repository, OWNER/NAME: its record repositories are OWNER/NAME-record-PERIOD, "
                   "its releases hold the WARC files.")
@click.option("--dir", "folder", default=None,
              help=f"Where the clones and the database go (default {settings.BROWSE_DIR}/OWNER/NAME).")
@click.option("--port", type=click.IntRange(1, 65535), default=settings.BROWSE_PORT, show_default=True,
              help="Datasette's port on 127.0.0.1 (the record is private: loopback only).")
@click.option("--warc-dir", default=None,
              help="A folder of WARC files already downloaded (default: each page as captured is read from its "
                   "release asset).")
@click.option("--serve/--no-serve", default=True, show_default=True,
              help="Start Datasette after the database is in sync (--no-serve: only fetch and follow).")
@click.option("--months", type=click.IntRange(1, 12), default=None,
              help=f"Months of record in one repository (default {settings.RECORD_REPOSITORY_MONTHS}).")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
@lock_option
def browse(code, folder, port, warc_dir, serve, months, now, lock_wait):
    """Fetch every period's record repository, bring a local database in sync with it, serve it with Datasette.

    Uses your own GitHub credentials: log in once with `gh auth login` (for
    GitHub Enterprise Server, `gh auth login --hostname HOST` and GH_HOST, or
    GITHUB_SERVER_URL and GITHUB_API_URL). The first run clones every period
    and reads the whole record (an hour or more after a year at 40 outlets);
    each later run fetches the new commits and reads only the new files. Then
    open http://127.0.0.1:PORT/ (Ctrl-C stops it).

    \b
    Example:
        python -m collector browse --repo activaterights/takedownwatch
    """
    try:
        check_repository_name(code)
    except AccessError as exc:
        raise click.BadParameter(str(exc), param_hint="--repo") from exc
    if shutil.which("git") is None:
        raise click.ClickException("git is not installed (https://git-scm.com)")
    try:
        server = server_from_env()
        token = gh_token(server)
        here = Path(folder or Path(settings.BROWSE_DIR) / code)
        folders = fetch_record(server, token, code, here / "records", make_clock(now).now(), months)
        db = here / DATABASE
        click.echo(f"bringing {db} in sync with {len(folders)} record repositories ...")
        with exclusive(db, "browse", lock_wait):
            done = follow(db, folders, progress=_progress)
    except DatabaseBusy as exc:
        raise Busy(str(exc)) from exc
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    read = ", ".join(f"{name or '(default)'} {n}" for name, n in sorted(done.files.items()))
    click.echo(f"{db} is in sync with the record: new export files read per stream: {read or 'none'}"
               + (f" (merged anew: {done.why})" if done.merged_anew else ""))
    if serve:
        serve_datasette(db, port, datasette_env(server, token, code, warc_dir))


def fetch_record(server: Server, token: str, code: str, clones: Path, now, months: int | None) -> list[Path]:
    """Return every period's clone, oldest first, after cloning or fetching each (newest period first)."""
    if repository(server, token, code) is None:
        click.echo(f"warning: {code} is not on {server.host}, or your account may not read it: pages as captured "
                   "(its releases' WARC files) will not open. Ask the people who run the project for read access.",
                   err=True)
    plan = repositories(code, now, months)
    name = plan.current
    if repository(server, token, name) is None:
        if repository(server, token, plan.previous) is None:
            raise AccessError(f"neither {plan.current} nor {plan.previous} is on {server.host}, or your account "
                              f"may not read them: is {code} the project's repository? Ask the people who run "
                              "it for read access to its record repositories")
        name = plan.previous  # this period's is not made yet
    folders: list[Path] = []
    seen: set[str] = set()
    while name and name not in seen:
        seen.add(name)
        dest = clones / name.split("/", 1)[1]
        click.echo(f"{'fetching' if (dest / '.git').is_dir() else 'cloning'} {name} ...")
        update = clone_or_update(server, token, name, dest)
        click.echo(f"  {name}: " + (f"cloned, {update.commits} commits" if update.cloned
                                    else f"{update.commits} new commits" if update.commits else "no new commit"))
        before = continued_from(dest)
        if not folders and before is None and not holds_record(dest):
            name = plan.previous if name == plan.current else None  # a new period no job has written to yet
            continue
        folders.insert(0, dest)
        if before is not None and repository(server, token, before) is None:
            raise AccessError(f"{name} continues {before}, which your account may not read: ask for access to it")
        name = before
    if not folders:
        raise AccessError(f"{plan.current} and {plan.previous} hold no record yet")
    return folders


def _progress(stream: str, done: int, total: int) -> None:
    if done == total or done % 50 == 0:
        click.echo(f"  stream {stream or '(default)'}: {done}/{total} export files read")


def datasette_env(server: Server, token: str, code: str, warc_dir: str | None) -> dict[str, str]:
    """Return the variables datasette/metadata.yml gives the pages plugin: read WARC records as the reader."""
    return {"TAKEDOWNWATCH_WARC_RELEASES_API": f"{server.api}/repos/{code}", "TAKEDOWNWATCH_GITHUB_TOKEN": token,
            "TAKEDOWNWATCH_WARC_DIR": str(Path(warc_dir).resolve()) if warc_dir else "",
            "TAKEDOWNWATCH_WARC_RELEASES_URL": ""}


def datasette_command(db: Path, port: int) -> list[str]:
    """Return the command line `make browse` runs: the record's metadata and plugins, on loopback."""
    return [sys.executable, "-m", "datasette", "serve", str(db), "--host", "127.0.0.1", "--port", str(port),
            "--metadata", str(DATASETTE / "metadata.yml"), "--plugins-dir", str(DATASETTE / "plugins")]


def serve_datasette(db: Path, port: int, env: dict[str, str]) -> None:
    """Become Datasette (exec): Ctrl-C and a SIGTERM stop it, and no server is left behind this process."""
    if not (DATASETTE / "metadata.yml").is_file():
        raise click.ClickException(f"{DATASETTE} is missing: run this from a clone of the project's code")
    click.echo(f"serving {db} at http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    sys.stdout.flush()
    command = datasette_command(db, port)
    os.execve(command[0], command, {**os.environ, **env})
