"""The Bangla pages speak Bangla: no request result name, and no English label, reaches them untranslated."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from collector import settings
from collector.publish import texts
from collector.publish.periods import week_start
from collector.publish.site import build_site
from testing.synthetic import NOW, SyntheticRecord, populate
from tests.publish.result_names import result_names

# Figures are published for closed weeks only: build when NOW's week (2026-W48) has closed and been
# published, and with it November (the weeks W45-W48, whose Thursdays fall in it), where results are counted.
PUBLISHED = week_start(NOW) + timedelta(days=7, hours=settings.PUBLISH_AFTER_HOURS)
GROUPS = {"national": ["kq7-outlet", "zx3-outlet", "mw9-outlet", "rv2-outlet"],
          "online": ["bt5-outlet", "hy8-outlet", "jn4-outlet"]}
NAMES_BN = {"national": "জাতীয় দৈনিক", "online": "অনলাইন পোর্টাল"}
# Latin words a Bangla page may hold outside lang="en": names of formats and files, as Bangla writers keep them.
LATIN_ALLOWED = {"JSON", "WARC", "MiB", "robots.txt"}
ATTRIBUTES = ("title", "aria-label", "alt", "placeholder")


class VisibleText(HTMLParser):
    """Collects the text a reader sees or hears, except inside lang="en" elements, code and scripts."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "wbr", "circle", "line", "path", "rect", "source"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.chunks: list[str] = []

    def _skipped(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        skip = attrs.get("lang") == "en" or tag in ("code", "script", "style") or self._skipped()
        if not skip:
            self.chunks += [attrs[a] for a in ATTRIBUTES if attrs.get(a)]
        if tag not in self.VOID:
            self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not self._skipped():
            self.chunks.append(data)


def visible_text(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    return "\n".join(parser.chunks)


def raw_names(text: str, names: set[str]) -> set[str]:
    """Return the result names that stand as words in the text."""
    return {word for word in re.findall(r"[A-Za-z_]+", text) if word in names}


def latin_words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z][A-Za-z0-9_.]*[A-Za-z0-9_]|[A-Za-z]", text))


@pytest.fixture
def site(store, tmp_path) -> Path:
    """Return a site built from a record whose requests met every result the network code can record."""
    r = SyntheticRecord(store)
    for group, members in GROUPS.items():
        r.group(group, name_bn=NAMES_BN[group])
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, GROUPS, weeks=3)
    outlets = [o for members in GROUPS.values() for o in members]
    for n, result in enumerate(sorted(result_names())):
        for k, outlet in enumerate(outlets):
            r.request(outlet, NOW - timedelta(days=2, minutes=n * 10 + k), result)
    r.finish_run(NOW)
    build_site(store, tmp_path / "site", PUBLISHED, settings)
    return tmp_path / "site"


def test_result_names_are_read_from_the_network_code():
    names = result_names()
    issue = {"robots_unreachable", "http_error", "too_large", "invalid_url", "redirect_loop", "blocked_address",
             "not_modified", "ok", "timeout", "challenge"}
    assert issue <= names


def test_a_new_result_in_the_network_code_is_found(tmp_path):
    """The reading can fail: a result added to a module is among the names."""
    (tmp_path / "wire.py").write_text(
        'def classify(status):\n    if status == 418:\n        return "teapot_refused", "I am a teapot"\n'
        '    return "ok", None\n\n'
        'def other(exchange):\n    return exchange.result in ("brand_new",)\n\n'
        'def make():\n    return Response("u", "f", "passed_on")\n\n'
        'class Response:\n    url: str\n    final_url: str\n    result: str\n', encoding="utf-8")
    assert result_names(tmp_path) == {"teapot_refused", "ok", "brand_new", "passed_on"}


def test_every_result_has_words_in_both_languages():
    for name in result_names():
        assert name in texts.RESULTS, f"result {name!r} has no label in collector/publish/texts.py RESULTS"
        english, bangla = texts.RESULTS[name]
        assert english != name and "_" not in english, name
        assert not latin_words(bangla) - LATIN_ALLOWED - {"HTTP"}, (name, bangla)
        assert texts.result_label(name, "bn") == bangla and texts.result_label(name, "en") == english


def test_no_result_name_reaches_a_bangla_page(site):
    names = result_names()
    english = (site / "index.html").read_text(encoding="utf-8")
    for name in names:  # every result did reach the overview's table, in words
        assert f"<th scope=\"col\">{texts.RESULTS[name][0]}</th>" in english
    for page in sorted((site / "bn").glob("*.html")):
        leaked = raw_names(visible_text(page.read_text(encoding="utf-8")), names)
        assert not leaked, f"{page.name} shows result names untranslated: {sorted(leaked)}"


def test_the_check_finds_a_result_name_that_leaks(site, store, tmp_path, monkeypatch):
    monkeypatch.setattr(texts, "result_label", lambda result, lang: result)
    build_site(store, tmp_path / "leaky", PUBLISHED, settings)
    shown = raw_names(visible_text((tmp_path / "leaky" / "bn" / "index.html").read_text(encoding="utf-8")),
                      result_names())
    assert {"robots_unreachable", "blocked_address", "too_large"} <= shown


def test_every_label_on_the_bangla_pages_is_bangla(site):
    for page in sorted((site / "bn").glob("*.html")):
        words = latin_words(visible_text(page.read_text(encoding="utf-8")))
        assert words <= LATIN_ALLOWED, f"{page.name}: English words outside lang=\"en\": {sorted(words - LATIN_ALLOWED)}"


def test_english_names_on_bangla_pages_are_marked_as_english(site):
    """An outlet's English name, the version and the licence name are there, each inside lang="en"."""
    outlets = (site / "bn" / "outlets.html").read_text(encoding="utf-8")
    assert '<span class="other-name" lang="en">Daily Paper 1</span>' in outlets
    index = (site / "bn" / "index.html").read_text(encoding="utf-8")
    assert f'lang="en" hreflang="en">{settings.FIGURES_LICENCE}</a>' in index


def test_the_registry_names_every_group_and_outlet_in_bangla():
    """The Bangla pages show these names; an English word in one would be an untranslated label."""
    from collector.registry import load_registry

    registry = load_registry(Path(__file__).resolve().parents[2] / "data" / "outlets.toml")
    names = [g.name_bn for g in registry.groups.values()] + [o.name_bn for o in registry.outlets.values()]
    assert len(names) > 20
    english = [n for n in names if latin_words(n)]
    assert not english, english
