"""What every command shares: the common options, the error edge, the clock and the interval check."""

from __future__ import annotations

import functools
import ipaddress
from urllib.parse import urlsplit

import click

from collector import settings
from collector.clock import Clock, parse_given_instant
from collector.errors import BadArgument, BadUsage, TakedownWatchError
from collector.record.lock import DatabaseBusy
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


# Exit code of a command that found its database in use by another live process:
# EX_TEMPFAIL of sysexits(3), "try again later". Nothing was sent or written.
BUSY_EXIT_CODE = 75


class Busy(click.ClickException):
    """The database is held by another process (exit code BUSY_EXIT_CODE)."""

    exit_code = BUSY_EXIT_CODE


def lock_option(func):
    """Add --lock-wait: how long a command that writes the database waits for another holder."""
    return click.option(
        "--lock-wait", type=click.FloatRange(min=0), default=settings.DATABASE_LOCK_WAIT_SECONDS,
        show_default=True,
        help=f"Seconds to wait while another process writes the database; then stop, exit code "
             f"{BUSY_EXIT_CODE}, nothing sent or written.")(func)


def edge(func):
    """Turn the collector's own errors into a clean message: exit code 2 for a refused argument,
    BUSY_EXIT_CODE for a database in use, else 1."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BadArgument as exc:
            raise click.BadParameter(str(exc), param_hint=exc.option) from exc
        except BadUsage as exc:
            raise click.UsageError(str(exc)) from exc
        except DatabaseBusy as exc:
            raise Busy(str(exc)) from exc
        except TakedownWatchError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def given_instant(text: str, option: str):
    """Return the instant an option names; refuse text that is not ISO-8601 or names no time zone."""
    try:
        return parse_given_instant(text)
    except ValueError as exc:
        problem = str(exc) if "time zone" in str(exc) else f"{text!r} is not an ISO-8601 instant"
        raise click.BadParameter(problem, param_hint=option) from exc


def make_clock(now: str | None) -> Clock:
    """Return the run's clock, starting at --now when given (an instant with its time zone)."""
    if now is None:
        return Clock()
    return Clock(given_instant(now, "--now"))


def open_store(db: str) -> Store:
    return Store(db)


def check_interval(min_interval: float | None, registry, extra=()) -> tuple[float, bool]:
    """Return (interval, allow_loopback); refuse a reduced interval for any non-loopback host.

    `extra` names other addresses the run will ask (the WARC release store).
    """
    if min_interval is None or min_interval >= settings.MIN_INTERVAL_SECONDS:
        return max(min_interval or 0, settings.MIN_INTERVAL_SECONDS), False
    if min_interval <= 0:
        raise click.BadParameter("must be positive", param_hint="--min-interval")
    hosts = {urlsplit(o.homepage).hostname for o in registry.outlets.values()}
    hosts |= {urlsplit(s).hostname for o in registry.outlets.values() for s in o.sources}
    hosts |= {urlsplit(address).hostname for address in extra}
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
