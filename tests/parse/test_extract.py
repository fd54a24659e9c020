"""Tests for collector/extract.py, against the pages under tests/data/articles/ and small built ones."""

from __future__ import annotations

import codecs
import hashlib
import json
import re
import unicodedata
from pathlib import Path

import lxml.html
import pytest
import trafilatura
from lxml import etree

from collector.parse import extract as extract_module
from collector.parse.decoding import decode_html, is_html
from collector.parse.extract import (
    extract,
    extractor_fingerprint,
    extractor_info,
    map_to_page,
    page_headline,
    to_utc,
)
from collector.parse.textnorm import normalise_for_comparison

ARTICLES = Path(__file__).resolve().parents[1] / "data" / "articles"
EXPECTED = sorted(ARTICLES.glob("*.expected.json"))
PAGES = sorted(ARTICLES.glob("*.html"))
FIELDS = ("headline", "byline", "published_raw", "published_source", "published_utc",
          "modified_raw", "modified_source", "modified_utc", "canonical_url", "language")
ZWJ, ZWNJ = "\u200d", "\u200c"


def page_text(body: bytes) -> str:
    """Return the page's decoded text content, whitespace-collapsed, built independently of extract.py."""
    tree = lxml.html.document_fromstring(body.decode("utf-8"))
    etree.strip_elements(tree, "script", "style", "template", etree.Comment, with_tail=False)
    return re.sub(r"[ \t\n\r\f]+", " ", "".join(tree.itertext()))


def load(expected_path: Path):
    """Return (expectation, page bytes, Extraction) for one expected.json."""
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    body = expected_path.with_name(expected_path.name.replace(".expected.json", ".html")).read_bytes()
    return expected, body, extract(body, expected["content_type"], expected["url"])


# ---------------------------------------------------------------- the article pages


@pytest.mark.parametrize("path", EXPECTED, ids=[p.name for p in EXPECTED])
def test_article_metadata_as_stated(path):
    expected, _, got = load(path)
    assert {f: getattr(got, f) for f in FIELDS} == {f: expected[f] for f in FIELDS}


@pytest.mark.parametrize("path", EXPECTED, ids=[p.name for p in EXPECTED])
def test_page_headline_is_the_snapshots_headline(path):
    expected, body, _ = load(path)  # the WACZ's page titles (collector/evidence/wacz.py)
    assert page_headline(body, expected["content_type"]) == expected["headline"]


@pytest.mark.parametrize("path", EXPECTED, ids=[p.name for p in EXPECTED])
def test_article_main_text(path):
    expected, _, got = load(path)
    assert got.text.startswith(expected["text_starts_with"])
    assert got.text.endswith(expected["text_ends_with"])
    assert got.unmapped_paragraphs == 0
    if "paragraphs" in expected:
        assert len(got.text.split("\n")) == expected["paragraphs"]
    for needle in expected.get("text_must_contain", []):
        assert needle in got.text
    for needle in expected.get("text_must_not_contain", []):
        assert normalise_for_comparison(needle) not in normalise_for_comparison(got.text)
    for char, count in expected.get("text_counts", {}).items():
        assert got.text.count(char) == count, f"U+{ord(char[0]):04X}"


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_every_paragraph_is_page_text_code_point_for_code_point(path):
    body = path.read_bytes()
    got = extract(body, "text/html", "https://example.invalid/")
    text = page_text(body)
    assert got.text
    for paragraph in got.text.split("\n"):
        assert paragraph in text


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_snapshot_identity_fields(path):
    body = path.read_bytes()
    got = extract(body, "text/html", "https://example.invalid/")
    assert got.html_sha256 == hashlib.sha256(body).hexdigest()
    assert got.extractor == extractor_fingerprint()
    assert (got.encoding, got.encoding_source) == ("utf-8", "meta")


def test_stored_text_is_not_normalised():
    # paragraph 4 of this page is served in NFD; the stored text must keep it so
    _, _, got = load(ARTICLES / "synthetic-jagonews-1146763-ncr-nfd-meta.expected.json")
    assert unicodedata.normalize("NFC", got.text) != got.text
    assert normalise_for_comparison(got.text) != got.text
    assert "\u099b\u09c7\u09be\u09a1\u09bc\u09be" in got.text  # ছোড়া as served: e + aa, rra decomposed
    assert "\u09b9\u09df\u0964" in got.text  # হয় from &#x9DF;, precomposed as the reference says


def test_real_page_keeps_both_spellings_of_ya():
    # ukbdnews serves বয়াতিকে decomposed and বয়াতি precomposed; trafilatura alone decomposes both
    _, body, got = load(ARTICLES / "ukbdnews.com__2020-08_23646__trafilatura-tests-eval.expected.json")
    source = body.decode("utf-8")
    content = source[source.index('<div class="td-post-content">'): source.index("<footer>")]
    served = "".join(re.findall(r"<p>(.*?)</p>", content))
    for form in ("\u09df", "\u09af\u09bc", "\u09dc", "\u09a1\u09bc"):
        assert got.text.count(form) == served.count(form), f"{form!a}"
    assert served.count("\u09af\u09bc") == 1 and served.count("\u09df") > 1


# ---------------------------------------------------------------- characters, one by one

SENTENCE = ("ইজারাদার পক্ষের দাবি, বুধবার (১২ আগস্ট) দুপুর দুইটার দিকে ত্রিশাল উপজেলার কাঁঠাল "
            "ইউনিয়নের কালীরবাজারের কুলুরবাড়ি এলাকায় বালু বিক্রির একটি পয়েন্টে এ ঘটনা ঘটে।")

# (name, word as written in the HTML source, the code points the stored text must hold)
CHARACTERS = [
    ("ZWJ", "র\u200d্যাবের", "র\u200d্যাবের"),
    ("ZWNJ", "উদ্\u200cযাপন", "উদ্\u200cযাপন"),
    ("ZWJ as NCR", "র&#x200D;্যাবের", "র\u200d্যাবের"),
    ("ZWNJ as named entity", "উদ্&zwnj;যাপন", "উদ্\u200cযাপন"),
    ("ya precomposed", "হ\u09df\u09c7", "হ\u09df\u09c7"),
    ("ya decomposed", "হ\u09af\u09bc\u09c7", "হ\u09af\u09bc\u09c7"),
    ("rra precomposed", "প\u09dc\u09c7", "প\u09dc\u09c7"),
    ("rra decomposed", "প\u09a1\u09bc\u09c7", "প\u09a1\u09bc\u09c7"),
    ("rha precomposed", "চাষা\u09dd\u09be", "চাষা\u09dd\u09be"),
    ("rha decomposed", "চাষা\u09a2\u09bc\u09be", "চাষা\u09a2\u09bc\u09be"),
    ("o sign decomposed (e + aa)", "হত\u09c7\u09be", "হত\u09c7\u09be"),
    ("au sign decomposed (e + au mark)", "দ\u09c7\u09d7ড়", "দ\u09c7\u09d7ড়"),
    ("hex NCR ya", "হ&#x9DF;\u09c7", "হ\u09df\u09c7"),
    ("decimal NCR ya", "হ&#2527;\u09c7", "হ\u09df\u09c7"),
    ("NCR for decomposed ya", "হ&#x9AF;&#x9BC;\u09c7", "হ\u09af\u09bc\u09c7"),
    ("nbsp entity", "১২&nbsp;আগস্ট", "১২\u00a0আগস্ট"),
]


def article(paragraph: str) -> bytes:
    """Return a small article page whose main text is SENTENCE, paragraph, SENTENCE."""
    return (
        "<!DOCTYPE html><html lang='bn'><head><meta charset='utf-8'><title>শিরোনাম | সংবাদ</title></head><body>"
        "<nav><a href='/'>প্রচ্ছদ</a> <a href='/country'>দেশজুড়ে</a></nav><article><h1>শিরোনাম</h1>"
        f"<p>{SENTENCE}</p><p>{paragraph}</p><p>{SENTENCE}</p></article>"
        "<footer><p>© ২০২৬ সর্বস্বত্ব সংরক্ষিত</p></footer></body></html>"
    ).encode("utf-8")


@pytest.mark.parametrize("name, source, stored", CHARACTERS, ids=[c[0] for c in CHARACTERS])
def test_stored_text_keeps_the_pages_code_points(name, source, stored):
    got = extract(article(f"এ সময় {source} বলে জানা গেছে, {SENTENCE}"), "text/html", "https://x.invalid/")
    assert got.unmapped_paragraphs == 0
    assert f"এ সময় {stored} বলে" in got.text


def test_trafilatura_alone_loses_zwj_and_precomposed_letters():
    # the reason map_to_page exists; if trafilatura changes this, EXTRACTOR_VERSION should be revisited
    raw = trafilatura.extract(article("র\u200d্যাবের হ\u09df\u09c7 উদ্\u200cযাপন").decode(), deduplicate=False)
    assert ZWJ not in raw and ZWNJ not in raw and "\u09df" not in raw


def test_lists_and_tables_store_page_text_only():
    page = article(f"{SENTENCE}</p><ul><li>প্রথম দফা: সারোয়ার জাহান</li><li>দ্বিতীয় দফা: মো. মাহবুবুর রহমান</li></ul>"
                   "<table><tr><td>তাসকিন</td><td>৮-১-২৬-১</td></tr></table><p>" + SENTENCE)
    got = extract(page, "text/html", "https://x.invalid/")
    lines = got.text.split("\n")
    assert got.unmapped_paragraphs == 0
    assert "প্রথম দফা: সারোয়ার জাহান" in lines and "তাসকিন" in lines and "৮-১-২৬-১" in lines
    assert "|" not in got.text and not any(line.startswith("- ") for line in lines)


def test_a_line_not_on_the_page_is_kept_and_counted():
    paragraphs, unmapped = map_to_page("এ ঘটনা ঘটে।\nএটি পাতায় নেই", "<x> এ  ঘটনা\u00a0ঘটে। </x>")
    assert paragraphs == ["এ ঘটনা\u00a0ঘটে।", "এটি পাতায় নেই"]
    assert unmapped == 1


def test_repeated_paragraph_maps_to_its_own_place():
    paragraphs, unmapped = map_to_page("ক খ\nগ\nক খ", "ক খ গ ক\u00a0খ")
    assert paragraphs == ["ক খ", "গ", "ক\u00a0খ"] and unmapped == 0


# ---------------------------------------------------------------- is it HTML

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
IS_HTML = [
    ("text/html", b"<!DOCTYPE html><html><body>x</body></html>", True),
    ("Text/HTML; charset=UTF-8", b"<p>x</p>", True),
    ("application/xhtml+xml", b"<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'/>", True),
    ("text/html", b"", True),  # declared HTML, even empty, is an HTML response
    ("text/html", PDF, False),  # a PDF served as text/html is a PDF
    ("text/html", b"\x89PNG\r\n\x1a\n\x00\x00", False),
    ("application/pdf", PDF, False),
    ("application/json", b'{"html": "<html>"}', False),
    ("image/png", b"<html>", False),  # a specific non-HTML type is believed
    (None, b"\r\n  <!doctype html>\n<html>", True),
    ("", b"<html lang='bn'>", True),
    (None, b"<html\n  lang='bn'>", True),
    ("application/octet-stream", codecs.BOM_UTF8 + b"\n<HTML>", True),
    ("text/plain", b"<head><title>x</title></head>", True),
    ("text/plain", b"error code: 500", False),  # Cloudflare's plain-text error body
    (None, b"<?xml version='1.0' encoding='utf-8'?>\n<html>", True),
    (None, "\ufeff<html>".encode("utf-16"), True),
    (None, b"<!-- generated -->", True),
    (None, b"<pre>not a sniffable tag</pre>", False),  # '<p' must end the tag name
    (None, b"<META http-equiv='refresh' content='0;URL=https://www.jugantor.com/'>", False),  # not a WHATWG pattern
    (None, b"", False),
    (None, PDF, False),
]


@pytest.mark.parametrize("content_type, body, expected", IS_HTML, ids=[f"{i}-{c[0]}" for i, c in enumerate(IS_HTML)])
def test_is_html(content_type, body, expected):
    assert is_html(content_type, body) is expected


# ---------------------------------------------------------------- decoding

CAFE = "<html><head>{meta}</head><body><p>Le café naïve – “quotes” coöperate résumé à la crème brûlée.</p></body></html>"
BANGLA = "<html><head>{meta}</head><body><p>র\u200d্যাবের সদস্যরা হ\u09df\u09c7 উদ্\u200cযাপন</p></body></html>"
DECODING = [
    # (name, body, content type, encoding, decided_by, text that must be in the result)
    ("utf-8 BOM", codecs.BOM_UTF8 + BANGLA.format(meta="").encode(), None, "utf-8", "bom", "র\u200d্যাবের"),
    ("BOM beats header", codecs.BOM_UTF8 + BANGLA.format(meta="").encode(), "text/html; charset=windows-1252",
     "utf-8", "bom", "হ\u09df\u09c7"),
    ("utf-16 BOM", "\ufeff".encode("utf-16-le") + BANGLA.format(meta="").encode("utf-16-le"), None,
     "utf-16-le", "bom", "উদ্\u200cযাপন"),
    ("header charset", CAFE.format(meta="").encode("cp1252"), "text/html; charset=windows-1252",
     "cp1252", "http-header", "café"),
    ("header charset quoted", BANGLA.format(meta="").encode(), 'text/html; charset="UTF-8"',
     "utf-8", "http-header", "র\u200d্যাবের"),
    ("header beats meta", BANGLA.format(meta='<meta charset="windows-1252">').encode(), "text/html; charset=utf-8",
     "utf-8", "http-header", "র\u200d্যাবের"),
    ("meta charset", CAFE.format(meta='<meta charset="windows-1252">').encode("cp1252"), "text/html",
     "cp1252", "meta", "“quotes”"),
    ("meta http-equiv, latin-1 means windows-1252",
     CAFE.format(meta='<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">').encode("cp1252"),
     None, "cp1252", "meta", "– “quotes”"),
    ("meta utf-16 in an ASCII page means utf-8", BANGLA.format(meta='<meta charset="utf-16">').encode(), None,
     "utf-8", "meta", "হ\u09df\u09c7"),
    ("unknown label passed over", BANGLA.format(meta='<meta charset="x-no-such">').encode(), None,
     "utf-8", "detected", "হ\u09df\u09c7"),
    ("meta past the prescan window ignored",
     ("<!--" + "x" * 5000 + "-->" + CAFE.format(meta='<meta charset="windows-1252">')).encode("utf-8"), None,
     "utf-8", "detected", "café"),
    ("undeclared valid utf-8", BANGLA.format(meta="").encode(), "text/html", "utf-8", "detected", "র\u200d্যাবের"),
    ("windows-1252 mislabelled as utf-8", CAFE.format(meta="").encode("cp1252"), "text/html; charset=utf-8",
     "cp1252", "detected", "crème brûlée"),
    ("NUL bytes in utf-8", b"<html><body><p>a\x00b</p></body></html>", None, "utf-8", "detected", "a\x00b"),
]


@pytest.mark.parametrize("name, body, content_type, encoding, decided_by, needle", DECODING,
                         ids=[c[0] for c in DECODING])
def test_decode_html(name, body, content_type, encoding, decided_by, needle):
    text, got_encoding, got_decided_by = decode_html(body, content_type)
    assert (got_encoding, got_decided_by) == (encoding, decided_by)
    assert needle in text


@pytest.mark.parametrize("body", [bytes(range(128, 256)) * 3, b"\xc3\x28\xa0\xa1" * 10, b"\xff" * 7, b""])
def test_decode_html_never_raises_on_invalid_bytes(body):
    text, encoding, decided_by = decode_html(body, "text/html; charset=utf-8")
    assert isinstance(text, str) and codecs.lookup(encoding)
    assert decided_by in {"detected", "utf-8-fallback", "http-header"}


UKBD = (ARTICLES / "ukbdnews.com__2020-08_23646__trafilatura-tests-eval.html").read_bytes()
DAMAGED = [
    ("cut mid-character", UKBD[: UKBD.find(b"\xe0", len(UKBD) // 2) + 1]),  # as a size limit cuts a download
    ("one flipped byte", UKBD[:41516] + UKBD[41516:].replace(b"\xe0", b"\xff", 1)),
]


@pytest.mark.parametrize("name, body", DAMAGED, ids=[c[0] for c in DAMAGED])
def test_damaged_utf8_stays_utf8(name, body):
    # charset_normalizer calls both of these mac_cyrillic, which would turn every Bangla letter into mojibake
    text, encoding, decided_by = decode_html(body, "text/html; charset=UTF-8")
    assert (encoding, decided_by) == ("utf-8", "utf-8-fallback")
    assert 1 <= text.count("\ufffd") <= 3 and "এমপির ভাইকে" in text


def test_decode_html_falls_back_to_utf8_with_replacement(monkeypatch):
    import collector.parse.decoding as decode_module

    monkeypatch.setattr(decode_module, "_detect", lambda body: None)
    text, encoding, decided_by = decode_html(b"<p>ok \xff</p>", None)
    assert (encoding, decided_by) == ("utf-8", "utf-8-fallback") and "\ufffd" in text


# ---------------------------------------------------------------- metadata


def head_page(head: str, body: str = "") -> bytes:
    """Return a page with the given head markup and an article body long enough to extract."""
    return (f"<html><head>{head}</head><body>{body}<article><p>{SENTENCE}</p><p>{SENTENCE}</p></article>"
            "</body></html>").encode("utf-8")


LD = '<script type="application/ld+json">{}</script>'
METADATA = [
    ("JSON-LD @graph with @id author",
     head_page(LD.format('{"@graph":[{"@type":"NewsArticle","datePublished":"2026-08-13T09:21:58+06:00",'
                         '"author":{"@id":"#p"}},{"@type":"Person","@id":"#p","name":"নিজস্ব প্রতিবেদক"}]}')),
     {"published_raw": "2026-08-13T09:21:58+06:00", "published_source": "json-ld:datePublished",
      "published_utc": "2026-08-13T03:21:58Z", "byline": "নিজস্ব প্রতিবেদক"}),
    ("JSON-LD list, author list, dates in a list",
     head_page(LD.format('[{"@type":"Organization","name":"x"},{"@type":["NewsArticle"],'
                         '"dateModified":["2026-08-13T04:06:14.549Z"],"author":[{"name":"ক"},{"name":"খ"}]}]')),
     {"modified_raw": "2026-08-13T04:06:14.549Z", "modified_source": "json-ld:dateModified",
      "modified_utc": "2026-08-13T04:06:14Z", "byline": "ক, খ"}),
    ("article object preferred over WebPage",
     head_page(LD.format('{"@graph":[{"@type":"WebPage","datePublished":"2020-01-01T00:00:00Z"},'
                         '{"@type":"NewsArticle","datePublished":"2026-08-13T00:00:00Z"}]}')),
     {"published_raw": "2026-08-13T00:00:00Z"}),
    ("broken JSON-LD skipped, trailing comma and comment wrapper tolerated",
     head_page(LD.format('{"@type":"NewsArticle","datePublished":') + LD.format(
         '<!-- {"@type":"NewsArticle","dateModified":"2026-08-13T10:00:00+06:00",} -->')),
     {"published_raw": None, "modified_raw": "2026-08-13T10:00:00+06:00"}),
    ("meta beats JSON-LD; og:updated_time",
     head_page('<meta property="article:published_time" content="2026-08-13T09:31:25+06:00">'
               '<meta property="og:updated_time" content="2026-08-13T11:00:00+06:00">'
               + LD.format('{"@type":"NewsArticle","datePublished":"1999-01-01"}')),
     {"published_source": "meta:article:published_time", "modified_source": "meta:og:updated_time",
      "modified_utc": "2026-08-13T05:00:00Z"}),
    ("<time datetime> as the last resort, date only has no UTC",
     head_page("", '<time datetime="2026-08-13">১৩ আগস্ট ২০২৬</time>'),
     {"published_raw": "2026-08-13", "published_source": "time[datetime]", "published_utc": None,
      "modified_raw": None}),
    ("meta author; a profile URL is not a byline",
     head_page('<meta property="article:author" content="https://facebook.com/x"><meta name="author" content="  ক  খ ">'),
     {"byline": "ক খ"}),
    ("confirmed h1 beats og:title; logo h1 loses",
     head_page('<title>ঘটনা ঘটে | সংবাদ</title><meta property="og:title" content="ঘটনা ঘটে | সংবাদ">',
               "<h1>সংবাদ</h1><h1>ঘটনা\n ঘটে</h1>"),
     {"headline": "ঘটনা ঘটে"}),
    ("a logo h1 inside the title is not the headline",
     head_page('<title>ঘটনা ঘটে আজ সকালে | সংবাদ</title>', "<h1>সংবাদ</h1><h2>ঘটনা ঘটে আজ সকালে</h2>"),
     {"headline": "ঘটনা ঘটে আজ সকালে | সংবাদ"}),
    ("JSON-LD author @id that is not a string",
     head_page(LD.format('{"@type":"NewsArticle","author":{"@id":["#a"]}}') + '<meta name="x" content="y">'),
     {"byline": None}),
    ("unconfirmed h1 loses to JSON-LD headline",
     head_page('<title>সংবাদ</title>' + LD.format('{"@type":"NewsArticle","headline":"আসল শিরোনাম"}'),
               "<h1>লোগো</h1>"),
     {"headline": "আসল শিরোনাম"}),
    ("og:title kept with its suffix when nothing better",
     head_page('<title>t</title><meta property="og:title" content="শিরোনাম | সংবাদ">'),
     {"headline": "শিরোনাম | সংবাদ"}),
    ("canonical resolved against <base>; language from meta",
     head_page('<base href="https://www.example.com/bn/"><link rel="Canonical alternate" href="news/1">'
               '<meta http-equiv="Content-Language" content="bn-BD">'),
     {"canonical_url": "https://www.example.com/bn/news/1", "language": "bn-BD"}),
]


@pytest.mark.parametrize("name, body, expected", METADATA, ids=[c[0] for c in METADATA])
def test_metadata(name, body, expected):
    got = extract(body, "text/html", "https://x.invalid/a/b")
    assert {key: getattr(got, key) for key in expected} == expected


UTC = [
    ("2020-08-29T09:46:06+00:00", "2020-08-29T09:46:06Z"),
    ("2026-08-13T09:21:58+06:00", "2026-08-13T03:21:58Z"),
    ("2026-08-13T09:21:58+0600", "2026-08-13T03:21:58Z"),
    ("2026-08-13T04:06:14.549Z", "2026-08-13T04:06:14Z"),
    ("২০২০-০৮-২৯T১০:৪৬:০৬+০১:০০", "2020-08-29T09:46:06Z"),  # Bangla digits, as ukbdnews states it
    ("Thu, 13 Aug 2026 09:21:58 +0600", "2026-08-13T03:21:58Z"),
    (" 2026-08-13T09:21:58+06:00 ", "2026-08-13T03:21:58Z"),
    ("2026-08-13", None),  # a day, not an instant
    ("2026-08-13T09:21:58", None),  # no offset: converting would invent a zone
    ("শনিবার, আগস্ট ২৯, ২০২০", None),
    ("0001-01-01T00:00:00+14:00", None),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize("raw, expected", UTC)
def test_to_utc(raw, expected):
    assert to_utc(raw) == expected


# ---------------------------------------------------------------- robustness and identity

ODD_BODIES = [
    b"", b"   ", PDF, b"\x00" * 64, b"<html><body>\x00\x00<p>a\x00b</p>",
    b"<?xml version='1.0' encoding='utf-8'?><html><body><p>x</p></body></html>",
    b"<" * 1000, b"<div>" * 3000, bytes(range(256)),
]


@pytest.mark.parametrize("body", ODD_BODIES, ids=[f"odd-{i}" for i in range(len(ODD_BODIES))])
def test_extract_never_raises(body):
    got = extract(body, "text/html", "https://x.invalid/")
    assert got.html_sha256 == hashlib.sha256(body).hexdigest()
    assert got.text is None or "\x00" not in got.text


def test_xml_declaration_page_is_extracted():
    body = ("<?xml version='1.0' encoding='utf-8'?>\n" + article(SENTENCE).decode()).encode()
    got = extract(body, "application/xhtml+xml", "https://x.invalid/")
    assert got.text and SENTENCE in got.text


def test_extractor_info_names_every_version_and_option():
    info = extractor_info()
    for key in ("extractor_version", "trafilatura", "htmldate", "lxml", "libxml2", "charset_normalizer",
                "cchardet", "unicodedata", "trafilatura_options", "trafilatura_config"):
        assert key in info
    assert info["trafilatura_options"]["deduplicate"] is False
    assert info["trafilatura"] == trafilatura.__version__
    json.dumps(info)  # stored as JSON beside the snapshot


def test_package_versions_are_read_once_not_per_snapshot(monkeypatch):
    # importlib.metadata parses a package's METADATA on every call: a fifth of a
    # shard's CPU when every snapshot asked again (bench/shards.py).
    asked = []
    real = extract_module.pkg_metadata.version
    monkeypatch.setattr(extract_module.pkg_metadata, "version", lambda name: asked.append(name) or real(name))
    for _ in range(3):
        extract(article(SENTENCE), "text/html", "https://x.invalid/")
        extractor_info()
    assert len(asked) == len(set(asked)) <= 5


def test_fingerprint_is_stable_and_tells_versions_apart(monkeypatch):
    first = extractor_fingerprint()
    assert first == extractor_fingerprint() and len(first) < 40
    version = extract_module.EXTRACTOR_VERSION
    monkeypatch.setattr(extract_module, "EXTRACTOR_VERSION", version + "-next")
    assert extractor_fingerprint() != first
    monkeypatch.setattr(extract_module, "EXTRACTOR_VERSION", version)
    monkeypatch.setitem(extract_module.TRAFILATURA_OPTIONS, "favor_precision", True)
    assert extractor_fingerprint() != first


def test_extraction_is_frozen():
    got = extract(article(SENTENCE), "text/html", "https://x.invalid/")
    with pytest.raises(AttributeError):
        got.text = "edited"
