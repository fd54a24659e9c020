"""The built site in a real browser: links resolve, Bangla is shaped, and screenshots to look at.

Screenshots of the overview and method pages in both languages (and the
Bangla overview on a phone-sized screen) are saved under _site_screens/.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from collector import settings
from collector.publish.site import build_site
from collector.record.store import Store
from testing.synthetic import NOW, SyntheticRecord, populate

CHROMIUM = "/usr/bin/chromium"
SCREENS = Path(__file__).resolve().parents[2] / "_site_screens"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
GROUPS = {"national": ["n1", "n2", "n3", "n4", "n5"], "online": ["o1", "o2", "o3", "o4"],
          "regional": ["r1", "r2", "r3"], "english": ["e1", "e2"]}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Return the directory of a site built from a synthetic record of eight weeks."""
    base = tmp_path_factory.mktemp("browser")
    store = Store(base / "record.db")
    r = SyntheticRecord(store)
    for group, members in GROUPS.items():
        r.group(group, group.title())
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, GROUPS, weeks=8, per_week={"n1": 6, "o2": 5, "r1": 4, "r3": 2}, vary=True)
    for n, outlet in enumerate(o for members in GROUPS.values() for o in members):
        for k in range(n % 4):  # a few failures so the results table has more than one column
            r.request(outlet, NOW - timedelta(days=3 + k), ("timeout", "not_found", "server_error")[k % 3])
    r.finish_run(NOW)
    build_site(store, base / "site", NOW, settings)
    store.conn.close()
    return base / "site"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """Return a function running headless Chromium with the given arguments."""
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed: apt-get install chromium")
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(*args: str) -> str:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=90)
        return done.stdout

    return run


class _Links(HTMLParser):
    """Collects every href and src of a page."""

    def __init__(self):
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.targets += [value for name, value in attrs if name in ("href", "src") and value]


def test_every_link_is_relative_and_resolves_to_a_built_file(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 6
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        assert parser.targets, page
        for target in parser.targets:
            assert not re.match(r"^(/|[a-z]+:)", target), f"{page.name}: {target} is not relative"
            path, _, fragment = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.is_file(), f"{page.relative_to(site)}: {target} does not resolve"
            if fragment:
                assert f'id="{fragment}"' in resolved.read_text(encoding="utf-8"), target


def test_a_font_with_bengali_coverage_is_installed(chromium):
    fc_list = shutil.which("fc-list")
    assert fc_list, "fontconfig is missing"
    fonts = subprocess.run([fc_list, ":lang=bn", "family"], capture_output=True, text=True).stdout
    assert fonts.strip(), "no Bengali font: apt-get install fonts-noto-core"


def test_bangla_text_is_shaped_not_tofu(site, chromium):
    """A conjunct (ক্ষ, three code points) drawn by a Bengali font is about one glyph wide.

    Without a Bengali font every code point becomes its own box, so the
    conjunct would be about three times as wide as a single letter.
    """
    probe = site / "_probe.html"
    probe.write_text("""<!doctype html><html lang="bn"><head><meta charset="utf-8">
<link rel="stylesheet" href="static/style.css"></head><body>
<span id="one">ক</span> <span id="conjunct">ক্ষ</span> <span id="word">সংবাদমাধ্যম</span>
<script>
for (const id of ["one", "conjunct", "word"]) {
  document.body.dataset[id] = document.getElementById(id).getBoundingClientRect().width;
}
</script></body></html>""", encoding="utf-8")
    try:
        dom = chromium("--dump-dom", probe.as_uri())
    finally:
        probe.unlink()
    widths = {k: float(v) for k, v in re.findall(r'data-(one|conjunct|word)="([\d.]+)"', dom)}
    assert set(widths) == {"one", "conjunct", "word"}, dom[:500]
    assert widths["one"] > 0
    assert widths["conjunct"] < 1.8 * widths["one"], widths
    assert widths["word"] < 9 * widths["one"], widths  # 12 code points, far fewer glyphs


@pytest.mark.parametrize("page, size", [
    ("index.html", "1280,3600"), ("bn/index.html", "1280,3600"),
    ("method.html", "1280,3000"), ("bn/method.html", "1280,3200"),
    ("bn/index.html", "390,1800"),
])
def test_screenshots_of_the_pages(site, chromium, page, size):
    SCREENS.mkdir(exist_ok=True)
    width = size.split(",")[0]
    target = SCREENS / f"{page.replace('/', '_').replace('.html', '')}_{width}.png"
    target.unlink(missing_ok=True)
    chromium(f"--window-size={size}", f"--screenshot={target}", (site / page).as_uri())
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 20_000  # a blank page compresses to far less
