"""What the stored main text holds besides the article: body paragraphs kept verbatim, other lines kept.

For every page under tests/data/articles/ (one real article, three built from
real feed text) and /work/shared/corpus/html/ (real section pages, homepages
and error pages of Bangladeshi outlets: not articles, so every line kept from
them is outside an article body), the page is extracted as a capture would
be, and each stored line is judged against the page's own article body:

* body paragraphs: the leaf blocks (p, li, td, th, h2-h6, blockquote) of the
  body container named below for each article, read by hand from the page;
  "kept verbatim" when one stored line equals it code point for code point;
* non-body lines: stored lines that are no part of the body, sorted by the
  element they come from: the headline, kickers (section names, tags,
  shoulders above the headline), share/follow labels, print edition notes,
  captions, other;
* markup lines: any line still carrying trafilatura's '- ' or '|' markup (0).

    python bench/extraction_lines.py          # per page, then totals; exit 1 if any markup line
    python bench/extraction_lines.py --lines  # also print every non-body line
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from collector.parse.extract import extract  # noqa: E402
from collector.parse.htmltext import collapse_space, parse_tree, prepare, text_content  # noqa: E402
from collector.parse.decoding import decode_html  # noqa: E402

ARTICLES = ROOT / "tests" / "data" / "articles"
CORPUS = Path("/work/shared/corpus/html")
# The article body of each article page, as read from its markup (None: the page is no article).
BODIES = {
    "ukbdnews.com__2020-08_23646__trafilatura-tests-eval.html": "//div[@class='td-post-content']",
    "synthetic-jagonews-1146758-zwj-jsonld-graph.html": "//div[@class='content-details']",
    "synthetic-jagonews-1146763-ncr-nfd-meta.html": "//div[@class='content-details']",
    "synthetic-prothomalo-8fdqj2xuxp-zwnj-nfd-time.html": "//div[@class='story-element-text']",
}
# Boxes an outlet puts inside its body that are not the article ("আরও পড়ুন" links).
NOT_BODY = "ancestor-or-self::*[contains(@class, 'read-more') or contains(@class, 'multi-read')]"
BLOCKS = ("p", "li", "td", "th", "h2", "h3", "h4", "h5", "h6", "blockquote")
MARKUP = re.compile(r"\A\s*-\s|\|")
# (kind, what the element's own class/id/tag or its two nearest ancestors' say, what the line itself says)
KINDS = (
    ("caption", re.compile(r"figcaption|\bcaption|photo-?credit", re.I), re.compile(r"\A(?:ছবি|Photo)\s*:", re.I)),
    ("share/follow", re.compile(r"share|social|follow", re.I),
     re.compile(r"শেয়ার|শেয়ার|ফলো করুন|অনুসরণ করুন|\bshare\b|\bfollow\b|facebook|twitter|whatsapp|messenger", re.I)),
    ("print edition", re.compile(r"print-?edition|epaper|e-paper", re.I),
     re.compile(r"print edition|e-?paper|প্রিন্ট সংস্করণ|ছাপা সংস্করণ|মুদ্রিত সংস্করণ", re.I)),
    ("kicker", re.compile(r"kicker|shoulder|sub-?title|subhead|category|breadcrumb|\btags?\b|topic", re.I), None),
)


def body_paragraphs(tree, container: str | None) -> list[str]:
    """Return the body's leaf blocks as text, in page order."""
    if container is None:
        return []
    found = []
    for element in tree.xpath(f"{container}//*[{' or '.join(f'self::{b}' for b in BLOCKS)}]"):
        if element.xpath(NOT_BODY) or element.xpath(" | ".join(f".//{b}" for b in BLOCKS)):
            continue
        text = collapse_space(text_content(element))
        if text:
            found.append(text)
    return found


def kind_of(tree, line: str, headline: str | None) -> str:
    """Return which kind of non-body line this is, from the element it came from."""
    if headline and line == headline:
        return "headline"
    for element in tree.iter():
        if not isinstance(element.tag, str) or element.tag in ("html", "body", "script", "style"):
            continue
        if collapse_space(text_content(element)) != line:
            continue
        # The element and its two nearest ancestors: a listing page wraps everything in 'section'.
        near = [element, *list(element.iterancestors())[:2]]
        trail = " ".join(f"{e.get('class', '')} {e.get('id', '')}" for e in near) + " " + element.tag
        for kind, by_markup, by_text in KINDS:
            if by_markup.search(trail) or (by_text and by_text.search(line)):
                return kind
        return "other"
    return next((kind for kind, _markup, by_text in KINDS if by_text and by_text.search(line)), "other")


def measure(path: Path) -> dict:
    """Return one page's figures and its non-body lines."""
    body = path.read_bytes()
    got = extract(body, "text/html; charset=utf-8", "https://example.invalid/" + path.name)
    tree = parse_tree(prepare(decode_html(body, "text/html; charset=utf-8")[0]))
    container = BODIES.get(path.name)
    paragraphs = body_paragraphs(tree, container)
    lines = got.text.split("\n") if got.text else []
    body_text = " ".join(paragraphs)
    outside = [line for line in lines if line not in paragraphs and (not container or line not in body_text)]
    outside = [(kind_of(tree, line, got.headline), line) for line in outside]
    page_text = collapse_space(text_content(tree))
    return {"page": path.name, "article": container is not None, "paragraphs": len(paragraphs),
            "verbatim": sum(1 for p in paragraphs if p in lines), "lines": len(lines), "outside": outside,
            "kinds": Counter(kind for kind, _ in outside), "markup": sum(1 for line in lines if MARKUP.search(line) and line not in page_text)}


def pages() -> list[Path]:
    """Return the pages measured: the article fixtures, then the corpus pages here; each file once."""
    found, seen = [], set()
    for path in sorted(ARTICLES.glob("*.html")) + (sorted(CORPUS.glob("*.html")) if CORPUS.is_dir() else []):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:  # the real ukbdnews page is in both folders
            seen.add(digest)
            found.append(path)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", action="store_true", help="print every non-body line kept")
    args = parser.parse_args()
    rows = [measure(path) for path in pages()]
    columns = ("headline", "kicker", "share/follow", "print edition", "caption", "other")
    print(f"{'page':62} {'body kept':>10} {'lines':>5} {'non-body':>8}  " + " ".join(f"{c[:9]:>9}" for c in columns)
          + "  markup")
    for row in rows:
        kept = f"{row['verbatim']}/{row['paragraphs']}" if row["article"] else "-"
        print(f"{row['page'][:62]:62} {kept:>10} {row['lines']:5d} {len(row['outside']):8d}  "
              + " ".join(f"{row['kinds'].get(c, 0):9d}" for c in columns) + f"  {row['markup']:6d}")
        if args.lines:
            for kind, line in row["outside"]:
                print(f"      [{kind}] {line[:110]}")
    articles = [r for r in rows if r["article"]]
    print(f"\narticles: {sum(r['verbatim'] for r in articles)} of {sum(r['paragraphs'] for r in articles)} body "
          f"paragraphs kept verbatim; {sum(len(r['outside']) for r in articles)} non-body lines kept "
          f"in {len(articles)} articles")
    print(f"other pages: {sum(len(r['outside']) for r in rows if not r['article'])} lines kept "
          f"from {len(rows) - len(articles)} pages that are no article")
    markup = sum(r["markup"] for r in rows)
    print(f"lines with trafilatura markup: {markup}")
    return 1 if markup else 0


if __name__ == "__main__":
    sys.exit(main())
