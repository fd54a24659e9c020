"""Tells a Cloudflare challenge or block from a page that merely uses Cloudflare.

Rules from Cloudflare's documentation and the detection code of yt-dlp,
cloudscraper and FlareSolverr (see shared/research/cloudflare.md).
"""

from __future__ import annotations

from typing import Mapping

CHALLENGE_MARKERS = (
    b"<title>just a moment...",
    b"window._cf_chl_opt",
    b"/cdn-cgi/challenge-platform/h/",
    b"cf-browser-verification",
    b"cf-turnstile",
    b"challenges.cloudflare.com/turnstile",
    b"challenge-form",
    b"challenge-error-text",
)
BLOCK_MARKERS = (b"attention required! | cloudflare", b'cf-error-code">1020')
CHALLENGE_STATUSES = (403, 429, 503)
# Markers are looked for in the first part of the body only: challenge pages
# are small, and a normal page's text must not be searched end to end.
SCAN_BYTES = 64 * 1024


def _from_cloudflare(headers: Mapping[str, str]) -> bool:
    server = headers.get("server", "").lower()
    return server.startswith("cloudflare") or "cf-ray" in headers


def classify(status: int, headers: Mapping[str, str], body: bytes) -> tuple[str | None, str | None]:
    """Return ('challenge' | 'blocked' | None, the marker that decided)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if lowered.get("cf-mitigated", "").strip().lower() == "challenge":
        return "challenge", "cf-mitigated: challenge"
    if status not in CHALLENGE_STATUSES or not _from_cloudflare(lowered):
        return None, None
    head = body[:SCAN_BYTES].lower()
    for marker in CHALLENGE_MARKERS:
        if marker in head:
            return "challenge", marker.decode()
    if status == 403:
        for marker in BLOCK_MARKERS:
            if marker in head:
                return "blocked", marker.decode()
    return None, None
