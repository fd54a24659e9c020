"""Challenge detection over the real Cloudflare pages in tests/data/cloudflare/."""

from __future__ import annotations

import pytest

from collector.net.cloudflare import classify
from tests.conftest import DATA

CF = {"Server": "cloudflare", "CF-RAY": "9b7300cecef3f09d-DFW"}
PAGES = DATA / "cloudflare"


@pytest.mark.parametrize("name, status, headers, expected", [
    ("challenge-khaborerkagoj.html", 403, {**CF, "cf-mitigated": "challenge"}, "challenge"),
    ("challenge-khaborerkagoj.html", 403, CF, "challenge"),  # markers alone, from Cloudflare
    ("challenge-khaborerkagoj.html", 503, CF, "challenge"),
    ("challenge-khaborerkagoj.html", 200, CF, None),  # a 200 is a page, whatever it says
    ("challenge-khaborerkagoj.html", 403, {"Server": "nginx"}, None),  # not from Cloudflare
    ("normal-samakal-opinion.html", 200, CF, None),
    ("normal-samakal-opinion.html", 403, CF, None),  # jsd script is not a challenge marker
    ("normal-dhakapost-opinion.html", 200, CF, None),
    ("error-502-dhakapost.html", 502, CF, None),
    ("error-504-dhakapost.html", 504, CF, None),
    ("error-405-samakal.html", 405, CF, None),
    ("error-500-plain.txt", 500, CF, None),
])
def test_real_pages(name, status, headers, expected):
    kind, marker = classify(status, headers, (PAGES / name).read_bytes())
    assert kind == expected
    assert (marker is None) == (expected is None)


def test_cf_mitigated_header_alone_decides():
    assert classify(200, {"CF-Mitigated": "challenge"}, b"")[0] == "challenge"


@pytest.mark.parametrize("marker", [
    b"<title>Just a moment...</title>", b"window._cf_chl_opt={}", b"/cdn-cgi/challenge-platform/h/b/orchestrate/",
    b"cf-browser-verification", b'class="cf-turnstile"', b"challenges.cloudflare.com/turnstile",
    b'id="challenge-form"', b'id="challenge-error-text"',
])
def test_each_marker(marker):
    assert classify(403, CF, b"<html>" + marker + b"</html>")[0] == "challenge"


def test_firewall_block_is_not_a_challenge():
    kind, _ = classify(403, CF, b'<title>Attention Required! | Cloudflare</title><span class="cf-error-code">1020</span>')
    assert kind == "blocked"


def test_cdn_only_is_never_a_challenge():
    body = b'<script src="https://cdnjs.cloudflare.com/x.js"></script><script src="https://static.cloudflareinsights.com/beacon.min.js"></script>'
    assert classify(403, CF, body) == (None, None)
