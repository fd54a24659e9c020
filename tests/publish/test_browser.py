"""The built site in a real browser: links, Bangla shaping, the phone layout, chart text, accessibility, screenshots.

Headless Chromium (Debian's `chromium`) renders every page at 1280 and 390 CSS
px (a common phone) and saves screenshots under _site_screens/. axe-core (from
npm, `make test` installs it) checks every page at both widths: 0 violations.
A page is probed by a copy of it, beside it, with one script added that
writes what it measured into <html data-probe>, read back from --dump-dom.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from collector import settings
from collector.publish.periods import week_start
from collector.publish.site import build_site
from collector.record.store import Store
from testing.synthetic import NOW, SyntheticRecord, populate
from tests.publish.result_names import result_names

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
AXE = ROOT / ".venv" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SCREENS = ROOT / "_site_screens"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
GROUPS = {"national": ["n1", "n2", "n3", "n4", "n5"], "online": ["o1", "o2", "o3", "o4"],
          "regional": ["r1", "r2", "r3"], "english": ["e1", "e2"]}
NAMES = {"national": ("National dailies", "জাতীয় দৈনিক"), "online": ("Online portals", "অনলাইন পোর্টাল"),
         "regional": ("Regional papers", "আঞ্চলিক পত্রিকা"), "english": ("English-language", "ইংরেজি ভাষার")}
PAGES = ["index.html", "method.html", "outlets.html", "bn/index.html", "bn/method.html", "bn/outlets.html"]
WIDTHS = (1280, 390)
EXTERNAL = {settings.FIGURES_LICENCE_URL, settings.CONTACT_ADDRESS}  # the only links off the site
# Figures are published for closed weeks only: build once NOW's week (2026-W48) has closed and been
# published, and with it November (W45-W48), whose requests by result fill the results table.
PUBLISHED = week_start(NOW) + timedelta(days=7, hours=settings.PUBLISH_AFTER_HOURS)


def _record(store: Store, weeks: int) -> None:
    r = SyntheticRecord(store)
    for group, members in GROUPS.items():
        r.group(group, *NAMES[group])
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, GROUPS, weeks=weeks, per_week={"n1": 6, "o2": 5, "r1": 4, "r3": 2}, vary=True)
    outlets = [o for members in GROUPS.values() for o in members]
    for n, result in enumerate(sorted(result_names())):  # every result the fetcher can record: a wide table
        for outlet in outlets[n % 3::3]:
            r.request(outlet, NOW - timedelta(days=3, minutes=n), result)
    r.finish_run(NOW)


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """Return two sites: 'weeks' from a synthetic record of eight weeks, 'one' from a record of one week."""
    built = {}
    for name, weeks in (("weeks", 8), ("one", 1)):
        base = tmp_path_factory.mktemp(f"browser-{name}")
        store = Store(base / "record.db")
        _record(store, weeks)
        build_site(store, base / "site", PUBLISHED, settings)
        store.conn.close()
        built[name] = base / "site"
    one = (built["one"] / "index.html").read_text(encoding="utf-8")
    assert one.count('class="chart chart-bars"') == 2  # the one-week site shows its published week, as bars
    return built


@pytest.fixture(scope="module")
def site(sites) -> Path:
    return sites["weeks"]


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """Return a function running headless Chromium with the given arguments."""
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed: apt-get install chromium")
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(*args: str) -> str:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)
        return done.stdout

    return run


@pytest.fixture(scope="module")
def probe(chromium):
    """Return a function that runs a script in a copy of a page at a width and returns what it reported."""

    def run(page: Path, width: int, script: str, extra: str = ""):
        copy = page.with_name("_probe_" + page.name)
        reporter = ("<script>" + extra + "\nPromise.resolve((async () => {" + script + "})())"
                    ".then(r => { document.documentElement.dataset.probe = JSON.stringify(r); })"
                    ".catch(e => { document.documentElement.dataset.probe = JSON.stringify({error: String(e)}); });"
                    "</script>")
        copy.write_text(page.read_text(encoding="utf-8").replace("</body>", reporter + "</body>"), encoding="utf-8")
        try:
            dom = chromium(f"--window-size={width},900", "--virtual-time-budget=60000", "--dump-dom", copy.as_uri())
        finally:
            copy.unlink()
        found = re.search(r'data-probe="([^"]*)"', dom)
        assert found, f"{page.name} at {width}px: the probe reported nothing\n{dom[:300]}"
        result = json.loads(html.unescape(found.group(1)))
        assert not (isinstance(result, dict) and "error" in result), result
        return result

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
            if target in EXTERNAL:
                continue
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


def test_bangla_text_is_shaped_not_tofu(site, probe):
    """A conjunct (ক্ষ, three code points) drawn by a Bengali font is about one glyph wide.

    Without a Bengali font every code point becomes its own box, so the
    conjunct would be about three times as wide as a single letter.
    """
    widths = probe(site / "bn" / "index.html", 1280, """
      const out = {};
      for (const [id, text] of [["one", "ক"], ["conjunct", "ক্ষ"], ["word", "সংবাদমাধ্যম"]]) {
        const span = document.createElement("span"); span.textContent = text; document.body.append(span);
        out[id] = span.getBoundingClientRect().width; span.remove();
      }
      return out;""")
    assert widths["one"] > 0
    assert widths["conjunct"] < 1.8 * widths["one"], widths
    assert widths["word"] < 9 * widths["one"], widths  # 12 code points, far fewer glyphs


CHART_TEXT = """
  const sizes = [...document.querySelectorAll("svg.chart-svg text")].map(t => {
    const box = t.getBoundingClientRect();
    return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
            left: box.left, right: box.right};
  });
  return {sizes, width: document.documentElement.clientWidth};"""


@pytest.mark.parametrize("which", ["weeks", "one"])
@pytest.mark.parametrize("page", ["index.html", "bn/index.html"])
def test_chart_text_is_at_least_12_css_px_on_a_phone_and_stays_on_screen(sites, probe, which, page):
    found = probe(sites[which] / page, 390, CHART_TEXT)
    sizes = found["sizes"]
    assert len(sizes) >= 6, found  # ticks and labels, or bar names and values
    small = [s for s in sizes if s["px"] < 12]
    assert not small, f"chart text under 12 CSS px at 390 px: {small[:5]}"
    outside = [s for s in sizes if s["left"] < 0 or s["right"] > found["width"]]
    assert not outside, f"chart text cut off at the screen's edge: {outside[:5]}"


@pytest.mark.parametrize("page", PAGES)
def test_nothing_is_wider_than_a_phone(site, probe, page):
    """Wide tables scroll inside their own region; the page itself never scrolls sideways at 390 px."""
    found = probe(site / page, 390, "return {scroll: document.documentElement.scrollWidth, "
                                    "width: document.documentElement.clientWidth};")
    assert found["scroll"] <= found["width"], found


BANGLA_TEXT = r"""
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const words = new Set();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('[lang="en"], code, script, style')) continue;
    if (!node.parentElement.checkVisibility()) continue;
    for (const w of node.textContent.match(/[A-Za-z][A-Za-z0-9_.]*[A-Za-z0-9_]|[A-Za-z]/g) || []) words.add(w);
  }
  return [...words].sort();"""


@pytest.mark.parametrize("page", ["bn/index.html", "bn/method.html", "bn/outlets.html"])
def test_the_bangla_pages_as_drawn_have_no_english_label(site, probe, page):
    from tests.publish.test_bangla import LATIN_ALLOWED

    words = set(probe(site / page, 390, BANGLA_TEXT))
    assert not words & result_names(), sorted(words & result_names())
    assert words <= LATIN_ALLOWED, sorted(words - LATIN_ALLOWED)


@pytest.fixture(scope="module")
def axe():
    if not AXE.exists():
        pytest.skip(f"axe-core not installed at {AXE}: make test installs it (npm install --prefix .venv/axe axe-core)")
    return AXE.read_text(encoding="utf-8")


AXE_RUN = """
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_no_accessibility_violation(site, probe, axe, page, width):
    violations = probe(site / page, width, AXE_RUN, extra=axe)
    assert violations == [], json.dumps(violations, ensure_ascii=False, indent=1)


def test_axe_does_find_a_violation_when_there_is_one(site, probe, axe, tmp_path):
    """The accessibility check can fail: an image without a text alternative is reported."""
    broken = site / "_broken.html"
    broken.write_text((site / "index.html").read_text(encoding="utf-8").replace(
        '<main id="main" class="wrap">', '<main id="main" class="wrap"><img src="static/none.png">'), encoding="utf-8")
    try:
        violations = probe(broken, 1280, AXE_RUN, extra=axe)
    finally:
        broken.unlink()
    assert "image-alt" in {v["id"] for v in violations}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES + ["one:index.html", "one:bn/index.html"])
def test_screenshots_of_the_pages(sites, chromium, page, width):
    which, _, page = page.rpartition(":")
    SCREENS.mkdir(exist_ok=True)
    stem = page.replace("/", "_").replace(".html", "")
    target = SCREENS / f"{which + '_' if which else ''}{stem}_{width}.png"
    target.unlink(missing_ok=True)
    height = 4200 if width == 390 else 3600
    chromium(f"--window-size={width},{height}", f"--screenshot={target}", (sites[which or "weeks"] / page).as_uri())
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 20_000  # a blank page compresses to far less
