"""Extraction must not depend on how a page is encoded: every article × every re-encoding."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest

from collector.parse.extract import extract
from collector.parse.textnorm import normalise_for_comparison

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("encoding_invariance", ROOT / "bench" / "encoding_invariance.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

PAGES = bench.pages()
VARIANTS = list(bench.variants(PAGES[0].read_bytes()))
CASES = [(page, name) for page in PAGES for name in VARIANTS]


@lru_cache(maxsize=None)
def original(page: Path):
    """Return the Extraction of the page as stored (UTF-8, charset in header)."""
    return extract(page.read_bytes(), bench.ORIGINAL_TYPE, bench.BASE_URL)


@lru_cache(maxsize=None)
def variant(page: Path, name: str):
    """Return (body, Extraction) of one re-encoding of the page."""
    body, content_type = bench.variants(page.read_bytes())[name]
    return body, extract(body, content_type, bench.BASE_URL)


def test_the_corpus_and_the_variants_are_there():
    assert len(PAGES) >= 4 and any(not p.name.startswith("synthetic-") for p in PAGES)
    assert {"header only", "meta only", "undeclared", "BOM", "CRLF", "NFC text", "NFD text", "NCR"} <= set(VARIANTS)


@pytest.mark.parametrize("page, name", CASES, ids=[f"{p.stem[:30]}:{n}" for p, n in CASES])
def test_extraction_is_invariant(page, name):
    body, got = variant(page, name)
    assert body != page.read_bytes(), "a variant identical to the original tests nothing"
    assert bench.comparable(got) == bench.comparable(original(page))
    assert got.unmapped_paragraphs == original(page).unmapped_paragraphs == 0


@pytest.mark.parametrize("page", PAGES, ids=[p.stem[:40] for p in PAGES])
def test_nfd_variant_stores_its_own_code_points(page):
    # the stored text is the page's own characters, so it differs, and compares equal
    _, got = variant(page, "NFD text")
    assert got.text != original(page).text
    assert unicodedata.normalize("NFD", got.text) == unicodedata.normalize("NFD", original(page).text)
    assert normalise_for_comparison(got.text) == normalise_for_comparison(original(page).text)


@pytest.mark.parametrize("page", PAGES, ids=[p.stem[:40] for p in PAGES])
def test_segments_cover_the_page_exactly(page):
    html = page.read_bytes().decode("utf-8")
    assert "".join(piece for _, piece in bench.segments(html)) == html


def _scripts(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S | re.I)


def test_ncr_variant_touches_text_and_attributes_only():
    page = bench.ARTICLES / "synthetic-prothomalo-8fdqj2xuxp-zwnj-nfd-time.html"
    html = page.read_bytes().decode("utf-8")
    ncr = bench.variants(page.read_bytes())["NCR"][0].decode("utf-8")
    assert _scripts(ncr) == _scripts(html) and re.search("[\u0980-\u09ff]", _scripts(ncr)[0])
    assert re.search(r'<meta property="og:title" content="(&#x[0-9A-F]+;|\s)+">', ncr)
    assert "&#x200C;" in ncr and "\u200c" not in ncr.split("<body>")[1]


def test_nfd_variant_touches_text_only():
    page = bench.ARTICLES / "synthetic-jagonews-1146758-zwj-jsonld-graph.html"
    html = page.read_bytes().decode("utf-8")
    nfd = bench.variants(page.read_bytes())["NFD text"][0].decode("utf-8")
    tag_re = re.compile(r"<[^>]+>")
    assert tag_re.findall(nfd) == tag_re.findall(html)  # attribute values keep U+09DF etc.
    assert "\u09df" in html.split("<body>")[1] and "\u09df" not in tag_re.sub("", nfd.split("<body>")[1])
