"""`archive`: the Save Page Now job's command and the checks of its arguments."""

from __future__ import annotations

from urllib.parse import urlsplit

import click

from collector import settings
from collector.cli.options import common_options, edge, given_instant, lock_option, make_clock, open_store
from collector.collect.context import RunContext, default_vantage
from collector.record.lock import exclusive
from collector.urls import is_loopback_host
from collector.wayback import spn
from collector.wayback.job import ArchiveRun, Limits


def _is_loopback(base_url: str) -> bool:
    return is_loopback_host(urlsplit(base_url).hostname or "")


def service_interval(base_url: str, min_interval: float | None) -> tuple[float, bool]:
    """Return (interval, allow_loopback); a reduced interval only for a loopback service."""
    loopback = _is_loopback(base_url)
    if min_interval is None or min_interval >= settings.MIN_INTERVAL_SECONDS:
        return max(min_interval or 0.0, settings.MIN_INTERVAL_SECONDS), loopback
    if min_interval <= 0:
        raise click.BadParameter("must be positive", param_hint="--min-interval")
    if not loopback:
        raise click.UsageError(f"--min-interval below {settings.MIN_INTERVAL_SECONDS} s is allowed only "
                               f"for a loopback --base-url (127.0.0.0/8, ::1), not {base_url}")
    return min_interval, True


def service_limits(base_url: str, keys: spn.Keys | None, per_minute: float | None) -> tuple[float, int]:
    """Return (submissions per minute, daily cap); a higher rate only for a loopback service."""
    rate = settings.SPN_CAPTURES_PER_MINUTE_KEYS if keys else settings.SPN_CAPTURES_PER_MINUTE_ANON
    cap = settings.SPN_DAILY_CAP_KEYS if keys else settings.SPN_DAILY_CAP_ANON
    if per_minute is None:
        return float(rate), cap
    if per_minute <= 0:
        raise click.BadParameter("must be positive", param_hint="--per-minute")
    if per_minute > rate and not _is_loopback(base_url):
        raise click.UsageError(f"--per-minute {per_minute} is above the service's limit of {rate} "
                               f"({'with' if keys else 'without'} keys)")
    return per_minute, cap


@click.command("archive")
@common_options
@click.option("--base-url", default=settings.SPN_BASE_URL, show_default=True, envvar="TAKEDOWNWATCH_SPN_BASE_URL",
              help="Address of the Save Page Now service (or TAKEDOWNWATCH_SPN_BASE_URL: the Actions scenario's "
                   "loopback service; no workflow sets it).")
@click.option("--min-interval", type=float, default=None,
              help=f"Seconds between requests to the service; below {settings.MIN_INTERVAL_SECONDS} "
                   "only for a loopback --base-url.")
@click.option("--per-minute", type=float, default=None,
              help=f"Submissions per minute (default {settings.SPN_CAPTURES_PER_MINUTE_KEYS} with keys, "
                   f"{settings.SPN_CAPTURES_PER_MINUTE_ANON} without); "
                   "higher only for a loopback --base-url.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Submit at most this many pages.")
@click.option("--poll-seconds", type=click.FloatRange(min=0, min_open=True),
              default=settings.SPN_POLL_SECONDS, show_default=True,
              help="Seconds between two status polls of one job.")
@click.option("--max-wait", type=click.FloatRange(min=0), default=settings.SPN_RUN_SECONDS,
              show_default=True, help="Seconds this run may last; jobs still pending go to the next run.")
@click.option("--deadline", default=None,
              help="ISO-8601 instant (with its time zone) by which the run ends, if that comes before --max-wait "
                   "does: the workflow sets it at the job's start, so a slow set-up still leaves the job its time "
                   "to export and save.")
@lock_option
@edge
def archive(db, warc_dir, outlets, now, vantage, base_url, min_interval, per_minute, limit,
            poll_seconds, max_wait, deadline, lock_wait):
    """Submit captured pages to the Internet Archive's Save Page Now and confirm their copies.

    Pages are taken newest capture first (the Archive copies the page as the
    outlet serves it when it fetches it: the sooner after the capture, the
    likelier the copy shows what was captured; a backlog drains behind the new
    captures), skipping those with a confirmed copy, a job in flight or a
    permanent refusal. A copy is confirmed only by a
    'success' status with a timestamp. Keys come from IA_ACCESS_KEY and
    IA_SECRET_KEY. The service now refuses submissions without keys (HTTP
    401): a run without them stops at the first refusal and says so.

    \b
    Example:
        IA_ACCESS_KEY=... IA_SECRET_KEY=... python -m collector archive --limit 200
    """
    keys = spn.keys_from_env()
    interval, loopback = service_interval(base_url, min_interval)
    rate, cap = service_limits(base_url, keys, per_minute)
    clock = make_clock(now)  # refused before the database is opened
    ends = given_instant(deadline, "--deadline") if deadline else None
    if ends is not None and ends <= clock.now():
        raise click.BadParameter(f"{deadline} is not after the run's start ({clock.now_iso()})",
                                 param_hint="--deadline")
    if keys is None:
        click.echo("archive: no keys were set (IA_ACCESS_KEY, IA_SECRET_KEY), and the Internet Archive "
                   "refuses anonymous submissions (HTTP 401 'You need to be logged in'); trying "
                   f"anonymously at {rate:g} submissions per minute, {cap} per day, until refused", err=True)
    with exclusive(db, "archive", lock_wait):
        ctx = RunContext.open(open_store(db), "archive", clock=clock,
                              vantage=vantage or default_vantage(), warc_dir=warc_dir,
                              interval=interval, allow_loopback=loopback)
        if ends is not None:  # counted from now: waiting for the lock came out of the job's time
            max_wait = max(0.0, min(max_wait, (ends - clock.now()).total_seconds()))
        job = ArchiveRun(ctx, base_url, keys, Limits(rate, cap, poll_seconds, max_wait, limit))
        click.echo(f"archive run {ctx.run_id}: {len(job.queue)} to submit, {len(job.jobs)} jobs to poll",
                   err=True)
        counts = job.run()
        ctx.finish()
        ctx.store.close()
    click.echo(f"archive run {ctx.run_id} finished: {dict(sorted(counts.items()))}")
    if job.closed:
        click.echo(f"archive run {ctx.run_id} stopped submitting: {job.closed}", err=True)
    if job.stopped:
        click.echo(f"archive run {ctx.run_id} stopped: {job.stopped}", err=True)
    if job.credentials_refused and keys is None:
        raise click.ClickException("the Internet Archive refused an anonymous submission: no keys were "
                                   "set; set IA_ACCESS_KEY and IA_SECRET_KEY (archive.org/account/s3.php)")
    if job.credentials_refused:
        raise click.ClickException("the Internet Archive refused the credentials: "
                                   "check IA_ACCESS_KEY and IA_SECRET_KEY")
