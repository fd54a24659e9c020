"""Does extraction depend on how a page is encoded? Re-encode each article and compare.

Every page under tests/data/articles/ is served again as UTF-8 with and
without a declared charset, with the charset only in the HTTP header or only
in <meta>, with a BOM, with CRLF line ends, with its text in NFC and in NFD,
with numeric character references for every non-ASCII character, and as
UTF-16. Each variant must give the same text (after normalise_for_comparison),
headline, byline and raw dates as the UTF-8 original.

    python bench/encoding_invariance.py            # table; exit 1 below 100 %
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from collector.parse.extract import extract  # noqa: E402
from collector.parse.textnorm import normalise_for_comparison  # noqa: E402

ARTICLES = ROOT / "tests" / "data" / "articles"
ORIGINAL_TYPE = "text/html; charset=utf-8"
BASE_URL = "https://example.invalid/article"

# markup the re-encodings must not touch: comments, doctype/PIs, script and style bodies
_RAW = re.compile(r"<!--.*?-->|<![^>]*>|<\?[^>]*>", re.S)
_TAG = re.compile(r"""<(/?)([A-Za-z][A-Za-z0-9:-]*)(?:"[^"]*"|'[^']*'|[^'">])*>""")
_META = re.compile(r"""<meta\b(?:"[^"]*"|'[^']*'|[^'">])*>[ \t]*\n?""", re.I)
_DECLARES_CHARSET = re.compile(r"""charset\s*=|http-equiv\s*=\s*["']?\s*content-type""", re.I)
_HEAD = re.compile(r"<head\b[^>]*>", re.I)


def segments(html: str) -> list[tuple[str, str]]:
    """Return html cut into (kind, piece): 'text', 'tag' (holds attribute values) or 'raw' (leave alone)."""
    out: list[tuple[str, str]] = []
    position, raw_until = 0, None
    while position < len(html):
        if raw_until:  # inside <script> or <style>: everything up to the end tag is raw
            end = re.compile(rf"</{raw_until}\s*>", re.I).search(html, position)
            stop = end.start() if end else len(html)
            out.append(("raw", html[position:stop]))
            position, raw_until = stop, None
            continue
        raw, tag = _RAW.match(html, position), _TAG.match(html, position)
        if raw:
            out.append(("raw", raw.group()))
            position = raw.end()
        elif tag:
            out.append(("tag", tag.group()))
            position = tag.end()
            if not tag.group(1) and tag.group(2).lower() in ("script", "style"):
                raw_until = tag.group(2)
        else:
            stop = html.find("<", position + 1)
            stop = len(html) if stop < 0 else stop
            out.append(("text", html[position:stop]))
            position = stop
    return out


def _rewrite(html: str, kinds: set[str], change) -> str:
    """Return html with change() applied to the segments of the given kinds only."""
    return "".join(change(piece) if kind in kinds else piece for kind, piece in segments(html))


def _ncr(piece: str) -> str:
    """Return piece with every non-ASCII character as a hexadecimal numeric character reference."""
    return "".join(c if ord(c) < 128 else f"&#x{ord(c):X};" for c in piece)


def without_charset(html: str) -> str:
    """Return html with every <meta> charset declaration removed."""
    return _META.sub(lambda m: "" if _DECLARES_CHARSET.search(m.group()) else m.group(), html)


def with_meta_charset(html: str) -> str:
    """Return html declaring <meta charset="utf-8"> first thing in <head>, and nowhere else."""
    bare = without_charset(html)
    head = _HEAD.search(bare)
    at = head.end() if head else 0
    return f'{bare[:at]}<meta charset="utf-8">{bare[at:]}'


def variants(body: bytes) -> dict[str, tuple[bytes, str]]:
    """Return {variant name: (body, content type)}: the same UTF-8 article re-encoded ways a server might."""
    html = body.decode("utf-8")
    meta, bare = with_meta_charset(html), without_charset(html)
    lf = html.replace("\r\n", "\n")
    return {
        "header+meta": (meta.encode(), ORIGINAL_TYPE),
        "header only": (bare.encode(), ORIGINAL_TYPE),
        "meta only": (meta.encode(), "text/html"),
        "undeclared": (bare.encode(), "text/html"),
        "BOM": (b"\xef\xbb\xbf" + bare.encode(), "text/html"),
        "CRLF": (lf.replace("\n", "\r\n").encode(), ORIGINAL_TYPE),
        "NFC text": (_rewrite(html, {"text"}, lambda s: unicodedata.normalize("NFC", s)).encode(), ORIGINAL_TYPE),
        "NFD text": (_rewrite(html, {"text"}, lambda s: unicodedata.normalize("NFD", s)).encode(), ORIGINAL_TYPE),
        "NCR": (_rewrite(html, {"text", "tag"}, _ncr).encode(), ORIGINAL_TYPE),
        "UTF-16 BOM": (html.encode("utf-16"), "text/html"),
    }


def comparable(extraction) -> dict[str, object]:
    """Return the fields an encoding must not change, text fields in comparison form."""
    def norm(value):
        return None if value is None else normalise_for_comparison(value)

    return {
        "text": norm(extraction.text), "headline": norm(extraction.headline), "byline": norm(extraction.byline),
        "published_raw": extraction.published_raw, "modified_raw": extraction.modified_raw,
        "canonical_url": extraction.canonical_url,
    }


def check(path: Path) -> list[dict]:
    """Return one result per variant of the page at path: {page, variant, ok, differs}."""
    body = Path(path).read_bytes()
    expected = comparable(extract(body, ORIGINAL_TYPE, BASE_URL))
    results = []
    for name, (variant_body, content_type) in variants(body).items():
        got = comparable(extract(variant_body, content_type, BASE_URL))
        differs = sorted(field for field in expected if got[field] != expected[field])
        results.append({"page": Path(path).name, "variant": name, "ok": not differs, "differs": differs})
    return results


def pages() -> list[Path]:
    """Return the article pages the bench runs over."""
    return sorted(ARTICLES.glob("*.html"))


def main() -> int:
    """Print the invariance table; return 0 at 100 %, else 1."""
    results = [result for page in pages() for result in check(page)]
    names = list(dict.fromkeys(r["variant"] for r in results))
    print(f"{'page':<58}" + "".join(f"{n:>12}" for n in names))
    for page in dict.fromkeys(r["page"] for r in results):
        row = {r["variant"]: r for r in results if r["page"] == page}
        cells = ("ok" if row[n]["ok"] else "DIFF:" + ",".join(row[n]["differs"]) for n in names)
        print(f"{page[:57]:<58}" + "".join(f"{c:>12}" for c in cells))
    passed = sum(r["ok"] for r in results)
    print(f"\ninvariant: {passed}/{len(results)} = {100 * passed / len(results):.1f} %")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
