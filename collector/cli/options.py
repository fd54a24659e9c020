"""What every command shares: the common options, the error edge, the clock and the interval check."""

from __future__ import annotations

import functools
import ipaddress
from urllib.parse import urlsplit

import click

from collector import settings
from collector.clock import Clock, parse_instant
from collector.errors import BadArgument, BadUsage, TakedownWatchError
from collector.record.store import Store
from collector.urls import is_loopback_host


DEFAULT_DB = "data/takedownwatch.db"
DEFAULT_WARC = "data/warc"
DEFAULT_OUTLETS = "data/outlets.toml"


def common_options(func):
    """Add the options every command shares (--db, --warc-dir, --outlets, --now, --vantage)."""
    options = [
        click.option("--db", default=DEFAULT_DB, show_default=True, help="SQLite database of the record."),
        click.option("--warc-dir", default=DEFAULT_WARC, show_default=True, help="Folder of WARC files."),
        click.option("--outlets", default=DEFAULT_OUTLETS, show_default=True, help="The registry file."),
        click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays)."),
        click.option("--vantage", default=None, help="Name of the network location requests come from."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def edge(func):
    """Turn the collector's own errors into a clean message: exit code 2 for a refused argument, else 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BadArgument as exc:
            raise click.BadParameter(str(exc), param_hint=exc.option) from exc
        except BadUsage as exc:
            raise click.UsageError(str(exc)) from exc
        except TakedownWatchError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def make_clock(now: str | None) -> Clock:
    """Return the run's clock, starting at --now when given."""
    if now is None:
        return Clock()
    try:
        return Clock(parse_instant(now))
    except ValueError as exc:
        raise click.BadParameter(f"{now!r} is not an ISO-8601 instant", param_hint="--now") from exc


def open_store(db: str) -> Store:
    return Store(db)


def check_interval(min_interval: float | None, registry) -> tuple[float, bool]:
    """Return (interval, allow_loopback); refuse a reduced interval for any non-loopback host."""
    if min_interval is None or min_interval >= settings.MIN_INTERVAL_SECONDS:
        return max(min_interval or 0, settings.MIN_INTERVAL_SECONDS), False
    if min_interval <= 0:
        raise click.BadParameter("must be positive", param_hint="--min-interval")
    hosts = {urlsplit(o.homepage).hostname for o in registry.outlets.values()}
    hosts |= {urlsplit(s).hostname for o in registry.outlets.values() for s in o.sources}
    outside = sorted(h for h in hosts if not is_loopback_host(h or ""))
    if outside:
        raise click.UsageError(
            f"--min-interval {min_interval} is below the {settings.MIN_INTERVAL_SECONDS} s floor, "
            f"which may be lowered only when every target host is loopback (127.0.0.0/8, ::1); "
            f"these are not: {', '.join(outside[:5])}" + (" ..." if len(outside) > 5 else ""))
    return min_interval, True


def check_source_address(address: str) -> str:
    """Return a --source-address that is an IP address literal; refuse anything else."""
    try:
        ipaddress.ip_address(address)
    except ValueError as exc:
        raise click.BadParameter(f"{address!r} is not an IP address", param_hint="--source-address") from exc
    return address
