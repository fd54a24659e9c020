"""Reads one record's bytes out of a published WARC file (a release asset) with an HTTP range request.

For people browsing the record, not for collection: nothing here is a
request to an outlet, so it keeps no ledger row and writes no WARC, and the
politeness rules of the fetcher do not apply (one request per page viewed,
to the project's own release storage). It uses the same wire as the fetcher
(collector/net/wire.py: size cap, deadline, no automatic redirects).

A release asset's download address answers with a redirect to its storage
(GitHub's browser_download_url gives a 302 to a signed storage address), and
the storage honours Range (RFC 9110 section 14: 206 with Content-Range, or 200
with the whole file when it ignores the header). Redirects are followed here,
a few hops at most.

A private repository's assets are read through the REST API instead, with a
token: `GET {api}/repos/O/R/releases/tags/TAG` lists the release's assets,
and `GET` of an asset's `url` with `Accept: application/octet-stream` answers
302 to a signed storage address on another host ("Releases: Get a release
asset", docs.github.com/en/rest/releases/assets). The token goes to the API's
origin alone: a redirect to any other scheme, host or port is followed
without it (the signed address is its own credential; curl and requests drop
Authorization on a redirect to another host for the same reason).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote, urljoin, urlsplit

from collector import settings
from collector.clock import Clock
from collector.errors import TakedownWatchError
from collector.net.wire import new_pool, send_once

MAX_HOPS = 5
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)


class AssetError(TakedownWatchError):
    """The bytes asked for could not be read from the published file."""


def asset_url(base_url: str, release_tag: str, asset_name: str) -> str:
    """Return the download address of a release asset under a base URL (…/releases/download)."""
    return f"{base_url.rstrip('/')}/{quote(release_tag, safe='')}/{quote(asset_name, safe='')}"


def read_range(url: str, offset: int, length: int, *, clock: Clock | None = None,
               headers: dict[str, str] | None = None) -> bytes:
    """Return `length` bytes of the file at url from `offset`, following its redirects.

    `headers` (an Authorization, an Accept) are sent to url's origin only, never after a
    redirect to another scheme, host or port.
    """
    if offset < 0 or length <= 0 or length > settings.MAX_RESPONSE_BYTES:
        raise AssetError(f"cannot read {length} bytes at {offset} (at most {settings.MAX_RESPONSE_BYTES})")
    pool, clock = new_pool(), clock or Clock()
    wanted = {"Range": f"bytes={offset}-{offset + length - 1}", "Accept-Encoding": "identity"}
    timeouts = (settings.CONNECT_TIMEOUT_SECONDS, settings.READ_TIMEOUT_SECONDS, settings.TOTAL_TIMEOUT_SECONDS)
    current, given = url, dict(headers or {})
    for _hop in range(MAX_HOPS + 1):
        exchange = send_once(pool, "GET", current, data=None, headers={**given, **wanted}, timeouts=timeouts,
                             max_bytes=settings.MAX_RESPONSE_BYTES, clock=clock, warc=None)
        if exchange.result == "redirect":
            current = urljoin(current, exchange.headers["location"].strip())
            if _origin(current) != _origin(url):
                given = {}  # left the origin: never again, even if a later hop comes back
            continue
        if exchange.result != "ok":
            raise AssetError(f"{current}: {exchange.result} {exchange.status or ''} {exchange.detail or ''}".strip())
        return _the_range(exchange, current, offset, length)
    raise AssetError(f"{url}: more than {MAX_HOPS} redirects")


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())


def api_headers(token: str | None, accept: str = "application/vnd.github+json") -> dict[str, str]:
    """Return the headers of a GitHub REST request (with the token, when there is one)."""
    headers = {"Accept": accept, "X-GitHub-Api-Version": "2022-11-28"}
    return {**headers, "Authorization": f"Bearer {token}"} if token else headers


def release_asset(api_repo: str, token: str | None, release_tag: str, asset_name: str) -> str:
    """Return the API address of a release's asset (`api_repo`: https://api.github.com/repos/OWNER/NAME)."""
    url = f"{api_repo.rstrip('/')}/releases/tags/{quote(release_tag, safe='')}"
    exchange = send_once(new_pool(), "GET", url, data=None, headers=api_headers(token),
                         timeouts=(settings.CONNECT_TIMEOUT_SECONDS, settings.READ_TIMEOUT_SECONDS,
                                   settings.TOTAL_TIMEOUT_SECONDS),
                         max_bytes=settings.MAX_RESPONSE_BYTES, clock=Clock(), warc=None)
    if exchange.result != "ok":
        raise AssetError(f"release {release_tag} of {api_repo}: {exchange.result} {exchange.status or ''}".strip())
    try:
        assets = json.loads(exchange.content)["assets"]
        return next(a["url"] for a in assets if a["name"] == asset_name)
    except StopIteration:
        raise AssetError(f"release {release_tag} of {api_repo} has no asset {asset_name}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise AssetError(f"release {release_tag} of {api_repo}: not a release ({exc})") from exc


def read_asset_range(api_repo: str, token: str | None, release_tag: str, asset_name: str, offset: int,
                     length: int) -> tuple[bytes, str]:
    """Return (the bytes, the asset's API address) of a release asset read through the REST API with a token."""
    url = release_asset(api_repo, token, release_tag, asset_name)
    return read_range(url, offset, length, headers=api_headers(token, "application/octet-stream")), url


def _the_range(exchange, url: str, offset: int, length: int) -> bytes:
    """Return the asked bytes of a 206 (checked against its Content-Range) or of a whole-file 200."""
    if exchange.status == 206:
        found = _CONTENT_RANGE.match(exchange.headers.get("content-range", ""))
        if not found or int(found.group(1)) != offset or len(exchange.content) != length:
            raise AssetError(f"{url}: answered {exchange.headers.get('content-range')!r} "
                             f"with {len(exchange.content)} bytes for bytes {offset}-{offset + length - 1}")
        return exchange.content
    if exchange.status == 200 and len(exchange.content) >= offset + length:
        return exchange.content[offset:offset + length]
    raise AssetError(f"{url}: status {exchange.status} with {len(exchange.content)} bytes, "
                     f"not bytes {offset}-{offset + length - 1}")
