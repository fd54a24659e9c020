"""The command line: `python -m collector COMMAND`.

Library errors become click.ClickException only here, at the edge. Exit
codes: 0 when a run completed, even if every site failed (failures are
data); non-zero only when the collector itself could not run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from collector import settings
from collector.collect.shards import parse_shard
from collector.net.slots import vantage_slots
from collector.errors import BadArgument
from collector.cli.options import (
    check_interval, check_source_address, common_options, edge, given_instant, lock_option, make_clock, open_store,
)
from collector.collect.context import RunContext, default_vantage
from collector.net.releases import ReleaseStore, token_from_env
from collector.record.lock import exclusive
from collector.registry import load_registry
from collector.record.registry_mirror import sync_registry
from collector.record.streams import check_name, set_stream
from collector.record.streams import folder as stream_folder

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(settings.__version__, prog_name="takedownwatch")
def cli():
    """Takedown Watch: a mechanical record of what Bangladeshi news outlets publish.

    \b
    Example:
        python -m collector run
    """


def _prepare(outlets, now, min_interval, only=(), *, deadline=None, warc_store=None, vantage_slot="1/1",
             source_address=None) -> dict:
    """Return what a collecting command needs, every argument checked before anything is opened or sent."""
    registry = load_registry(outlets)  # a malformed registry stops here, before any request
    interval, loopback = check_interval(min_interval, registry, extra=[warc_store] if warc_store else [])
    slots = vantage_slots(vantage_slot, interval)
    if source_address:
        check_source_address(source_address)
    clock = make_clock(now)
    unknown = [o for o in only if o not in registry.outlets]
    if unknown:
        raise click.BadParameter(f"unknown outlet id(s): {', '.join(unknown)} (not in {outlets})",
                                 param_hint="--outlet")
    ends = given_instant(deadline, "--deadline") if deadline else None
    if ends is not None and ends <= clock.now():
        raise click.BadParameter(f"{deadline} is not after the run's start ({clock.now_iso()})",
                                 param_hint="--deadline")
    return {"registry": registry, "interval": interval, "loopback": loopback, "clock": clock, "deadline": ends,
            "warc_store": warc_store, "slots": slots, "source_address": source_address}


def _open(db, warc_dir, vantage, command, prepared: dict) -> RunContext:
    """Return a run context on the database, the registry mirrored into it (the caller holds the lock)."""
    store = open_store(db)
    if prepared.get("stream"):  # before any row: every id of the run lies in the stream's range
        with store.transaction() as conn:
            set_stream(conn, prepared["stream"])
    sync_registry(store, prepared["registry"], prepared["clock"])
    options = {}
    interval = prepared["interval"]
    if prepared["loopback"]:
        # A loopback test run scales the retry delays with the interval, so
        # they still grow but a demo or test does not wait 20 s per retry.
        scale = interval / settings.MIN_INTERVAL_SECONDS
        options["backoff"] = tuple(delay * scale for delay in settings.BACKOFF_SECONDS)
    if prepared["slots"].count > 1:
        options["slots"] = prepared["slots"]
    if prepared["source_address"]:
        options["source_address"] = prepared["source_address"]
    ctx = RunContext.open(store, command, clock=prepared["clock"], vantage=vantage or default_vantage(),
                          warc_dir=warc_dir, interval=interval, allow_loopback=prepared["loopback"],
                          deadline=prepared["deadline"], **options)
    if prepared["warc_store"]:
        ctx.warc_store = ReleaseStore(ctx.fetcher, prepared["warc_store"], token_from_env())
    return ctx


def _shard_option(_context, _param, value: str) -> tuple[int, int]:
    try:
        return parse_shard(value)
    except BadArgument as exc:
        raise click.BadParameter(str(exc)) from exc


def _stream_option(_context, _param, value: str | None) -> str | None:
    try:
        return check_name(value) if value else None
    except BadArgument as exc:
        raise click.BadParameter(str(exc)) from exc


def _progress(done: int, total: int, summary: dict) -> None:
    state = summary.get("error") or f"{summary.get('sources', 0)} sources, {summary.get('captured', 0)} captured"
    click.echo(f"[{done}/{total}] {summary['outlet']}: {state}", err=True)


@cli.command()
@common_options
@click.option("--min-interval", type=float, default=None,
              help=f"Seconds between requests to one host; below {settings.MIN_INTERVAL_SECONDS} only for loopback hosts.")
@click.option("--outlet", "only", multiple=True, help="Only this outlet id (repeatable).")
@click.option("--shard", default="1/1", show_default=True, callback=_shard_option,
              help="Collect (and revisit) only shard K of N: the outlets whose registrable domain "
                   "falls to K by rendezvous hashing.")
@click.option("--vantage-slot", default="1/1", show_default=True,
              help="This vantage is K of V that collect from the same sites: it takes slot K of each cycle "
                   "of V, so every site still sees at most one request per interval.")
@click.option("--source-address", default=None,
              help="Local IP address every connection leaves from (a multi-homed runner).")
@click.option("--deadline", default=None,
              help="ISO-8601 instant (with its time zone) after which no fetch is started that might not end "
                   "before it; what is left waits for the next run.")
@click.option("--warc-store", default=None,
              help="GitHub API address of the repository whose releases hold the WARC files "
                   "(https://api.github.com/repos/OWNER/REPO); token from GH_TOKEN or GITHUB_TOKEN.")
@click.option("--stream", default=None, callback=_stream_option,
              help="Record stream this job writes (its own working database, export folder "
                   "streams/NAME and id range); default: the record folder's own stream.")
@click.option("--record", "record_dir", default="data/record", show_default=True,
              help="The record folder checked out: a pruned working database reads an older snapshot's "
                   "text back from it when a revisit finds its digest changed (the stream's folder within).")
@click.option("--restored-by-rebuild", "rebuilt", type=click.Choice(["missing", "unusable"]), default=None,
              help="The job's database was rebuilt from the record (no cached copy, or one that did not "
                   "continue the record): recorded in the run's counts for the storage-rebuild health check.")
@lock_option
@edge
def run(db, warc_dir, outlets, now, vantage, min_interval, only, shard, vantage_slot, source_address, deadline,
        warc_store, stream, record_dir, rebuilt, lock_wait):
    """Collect once: discover where needed, read every source, capture what is queued.

    With --deadline the run ends in time for the job to export and save: captures,
    checks and comparisons not started are carried over. With --warc-store a check
    across an extractor upgrade reads the older page's WARC record from its release asset.

    \b
    Example:
        python -m collector run --vantage github-actions --deadline 2026-09-01T01:00:00Z
    """
    from collector.collect.pipeline import active_outlets, run_collection
    from collector.collect.revisits import run_rechecks
    from collector.collect.vantages import compare_run

    prepared = _prepare(outlets, now, min_interval, only, deadline=deadline, warc_store=warc_store,
                        vantage_slot=vantage_slot, source_address=source_address)
    prepared["stream"] = stream
    with exclusive(db, "run", lock_wait):
        ctx = _open(db, warc_dir, vantage, "run", prepared)
        ctx.record_dir = stream_folder(record_dir, stream)
        if rebuilt:
            ctx.count("restored_by_rebuild")
            ctx.warnings.append(f"the database was rebuilt from the record: its cached copy was {rebuilt}")
        targets = active_outlets(ctx, list(only) or None, shard)
        click.echo(f"run {ctx.run_id}: {len(targets)} outlets, vantage {ctx.vantage}"
                   + (f", shard {shard[0]}/{shard[1]}" if shard[1] > 1 else ""), err=True)
        run_collection(ctx, targets, progress=_progress)
        if settings.RECHECKS_ENABLED:
            # A shard revisits only its own outlets' articles: another process paces the others' hosts.
            run_rechecks(ctx, outlets={o.id for o in targets} if shard[1] > 1 else None)
        compare_run(ctx)  # this run's answers against other vantages' for the same addresses
        ctx.finish()
        counts = ctx.store.one("SELECT counts FROM run_finishes WHERE run_id = ?", (ctx.run_id,))["counts"]
        ctx.store.close()
    click.echo(f"run {ctx.run_id} finished: {counts}")


@cli.command()
@common_options
@click.option("--min-interval", type=float, default=None, help="As for `run`.")
@click.option("--outlet", "only", multiple=True, required=True, help="Outlet id (repeatable).")
@lock_option
@edge
def discover(db, warc_dir, outlets, now, vantage, min_interval, only, lock_wait):
    """Look for an outlet's feeds and news sitemaps and print every address tried.

    \b
    Example:
        python -m collector discover --outlet prothomalo
    """
    from collector.collect.discovery import Discoverer
    from collector.collect.pipeline import active_outlets

    prepared = _prepare(outlets, now, min_interval, only)
    with exclusive(db, "discover", lock_wait):
        ctx = _open(db, warc_dir, vantage, "discover", prepared)
        known = {o.id: o for o in active_outlets(ctx)}
        for outlet_id in only:
            result = Discoverer(ctx, known[outlet_id]).run()
            click.echo(f"{outlet_id}: tried {len(result.tried)}, valid {len(result.valid)}")
            for url, found_via, outcome, detail in result.tried:
                click.echo(f"  {outcome:<20} {found_via:<20} {url}" + (f"  ({detail})" if detail else ""))
            for url, kind in result.valid:
                click.echo(f"  source: {kind:<13} {url}")
        ctx.finish()
        ctx.store.close()


def _existing_store(db: str):
    if not Path(db).exists():
        raise click.BadParameter(f"no database at {db} (run `python -m collector run` first)", param_hint="--db")
    return open_store(db)


@cli.command()
@common_options
@click.option("--json", "as_json", is_flag=True, help="Print the published figures as JSON.")
@click.option("--published", default=settings.PUBLISHED_DIR, show_default=True,
              help="Folder of the published history.")
@edge
def stats(db, warc_dir, outlets, now, vantage, as_json, published):
    """Print the coverage figures by group of outlets, exactly as the site publishes them.

    They are read from the published history (see `publish`): closed weeks and
    months only, with withheld figures marked, and whole-record sums of the
    published weeks.

    \b
    Example:
        python -m collector stats --json > stats.json
    """
    from collector.publish.history import History
    from collector.publish.view import format_stats_text, publication

    published = publication(History.open(published).published.lines)
    if as_json:
        click.echo(json.dumps(published, ensure_ascii=False, indent=2, sort_keys=True))
    else:
        click.echo(format_stats_text(published), nl=False)


@cli.command("build-site")
@common_options
@click.option("--out", default="_site", show_default=True, help="Folder the static site is written to.")
@click.option("--published", default=settings.PUBLISHED_DIR, show_default=True,
              help="Folder of the published history the figures are read from.")
@click.option("--from-stats", "from_stats", default=None, metavar="FILE",
              help="Build from this stats.json (one a build from the database wrote) alone: "
                   "no database and no history is opened. The public site is deployed from such a build.")
@edge
def build_site_command(db, warc_dir, outlets, now, vantage, out, published, from_stats):
    """Build the static site: coverage by group of outlets, and the method in English and Bangla.

    Every figure is read from the published history (`publish` appends to it),
    so a build republishes every closed period exactly as first published. The
    site's stats.json holds everything the pages show, so `--from-stats`
    rebuilds the same site, byte for byte, from that file alone.

    \b
    Example:
        python -m collector build-site --out _site
        python -m collector build-site --from-stats _site/stats.json --out _public
    """
    from collector.publish.history import History
    from collector.publish.site import build_site, build_site_from_stats

    if from_stats is not None:
        written = build_site_from_stats(from_stats, out)
    else:
        store = _existing_store(db)
        written = build_site(store, out, make_clock(now).now(), history=History.open(published))
        store.close()
    click.echo(f"site: {len(written)} files written to {out}/ (open {out}/index.html)")


def _register() -> None:
    """Add the commands defined beside their stages."""
    from collector.cli.archive import archive
    from collector.cli.browse import browse
    from collector.cli.compare import compare_vantages
    from collector.cli.evidence import evidence_command
    from collector.cli.export import export
    from collector.cli.health import health
    from collector.cli.publishing import audit, publish
    from collector.cli.review import annotate, annotate_review, annotations, review, vantage_differences

    for command in (archive, review, annotate, annotate_review, annotations, export, vantage_differences,
                    publish, audit, evidence_command, compare_vantages, health, browse):
        cli.add_command(command)


_register()


def tune_interpreter() -> None:
    """Let a thread whose pacing wait has ended take the interpreter within 0.5 ms.

    The collector is many I/O threads, one per outlet. With CPython's default
    5 ms switch interval a thread woken for its next request can wait that
    long for the GIL, and the lateness adds up over a host's requests.
    """
    sys.setswitchinterval(settings.THREAD_SWITCH_SECONDS)


def main() -> None:
    """Run the command line."""
    tune_interpreter()
    cli(prog_name="python -m collector")


if __name__ == "__main__":
    main()
