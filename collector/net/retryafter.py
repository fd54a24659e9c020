"""Retry-After (RFC 9110 section 10.2.3): how long a server asks us to wait, in seconds.

One reading for the whole project: the fetcher's retries (net/wire.py) and the
archive job's back-off (wayback/answers.py) both call `retry_after_seconds`.
The header is either delay-seconds (1*DIGIT) or an HTTP-date (IMF-fixdate, or
the obsolete RFC 850 and asctime forms a recipient must still accept, RFC 9110
section 5.6.7). A date is measured against the response's own Date header when
it has one, so the wait does not depend on how far our clock is from the
server's; otherwise against `now`. urllib3's Retry.parse_retry_after reads the
header the same two ways.
"""

from __future__ import annotations

import email.utils
import re
from datetime import datetime, timezone
from typing import Mapping

_DELAY_SECONDS = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also takes '৩' and '²'


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """Return the wait a response's Retry-After asks for (>= 0), or None when absent or unreadable.

    `headers` has lower-cased names, as the fetcher keeps them.
    """
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    when = http_date(value)
    if when is None:
        return None
    reference = http_date(headers.get("date") or "") or _aware(now)
    return max(0.0, (when - reference).total_seconds())


def http_date(value: str) -> datetime | None:
    """Return an HTTP-date as an aware UTC datetime, or None when it is not one."""
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    # asctime-date carries no zone, and every HTTP-date is UTC (GMT) by definition.
    return _aware(when)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
