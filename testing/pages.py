"""Article pages built from the real feeds under tests/data/feeds/: one distinct page per item.

The saved feeds carry each item's real headline, author, date and text
(`content:encoded`, `description` or Atom `summary`, code point for code
point as the outlet served them, U+FFFD and all). A page here wraps one
item in an ordinary news-site layout, in the manner of the synthetic pages
under tests/data/articles/ (README there): the words are the outlet's, the
markup around them is ours. Variants of a page (an edited headline, a
paragraph removed, a byline emptied, a joiner dropped, the same text in
NFD) are what the demo serves on later visits, so that revisits find real
changes, and one that is no change at all.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from datetime import datetime
from html.parser import HTMLParser

from testing.replica import FEED_SNAPSHOT_TIME, feed_file, moved_feed

ZWJ = "\u200d"


@dataclass(frozen=True)
class Item:
    """One feed item as the outlet listed it: address, headline, author, date and paragraphs."""

    url: str
    headline: str
    byline: str
    published: datetime | None
    paragraphs: tuple[str, ...]


class _Blocks(HTMLParser):
    """Collects the text of an HTML fragment block by block (paragraphs, captions, list items)."""

    BREAKS = {"p", "br", "div", "li", "figcaption", "h2", "h3", "h4", "blockquote", "tr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = [""]

    def handle_starttag(self, tag, attrs):
        if tag in self.BREAKS:
            self.blocks.append("")

    def handle_endtag(self, tag):
        if tag in self.BREAKS:
            self.blocks.append("")

    def handle_data(self, data):
        self.blocks[-1] += data


def paragraphs(text: str) -> tuple[str, ...]:
    """Return the non-empty paragraphs of an item's text, HTML or plain (lines apart)."""
    if re.search(r"<(p|br|div|figure)\b", text, re.I):
        parser = _Blocks()
        parser.feed(text)
        parser.close()
        blocks = parser.blocks
    else:
        blocks = re.split(r"\n\s*\n|\r\n\s*\r\n|\n", text)
    return tuple(" ".join(b.split()) for b in blocks if b.strip())


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child_text(element: ET.Element, *names: str) -> str:
    """Return the stripped text of the first child with one of the local names (in that order) that has any."""
    for name in names:
        for child in element:
            if _local(child.tag) == name:
                text = "".join(child.itertext()).strip()
                if text:
                    return text
    return ""


def _link(element: ET.Element) -> str:
    for child in element:
        if _local(child.tag) == "link":
            return (child.get("href") or child.text or "").strip()
    return ""


def _author(element: ET.Element) -> str:
    """Return an item's dc:creator, or the name of its RSS/Atom author."""
    for child in element:
        if _local(child.tag) == "author" and any(_local(c.tag) == "name" for c in child):
            return _child_text(child, "name")
    return _child_text(element, "creator", "author")


def _date(raw: str) -> datetime | None:
    if not raw:
        return None
    try:
        return email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return None


def feed_items(outlet: str, base: str, now: datetime) -> list[Item]:
    """Return the outlet's real feed items, addresses moved to `base` and dates moved as `shifted_feed` moves them."""
    body = moved_feed(outlet, base).lstrip(b"\xef\xbb\xbf").lstrip()
    delta = now - FEED_SNAPSHOT_TIME
    items = []
    for element in ET.fromstring(body).iter():
        if _local(element.tag) not in ("item", "entry"):
            continue
        author = " ".join(_author(element).split())
        when = _date(_child_text(element, "pubDate", "published", "updated"))
        text = _child_text(element, "encoded", "content", "description", "summary")
        items.append(Item(_link(element), _child_text(element, "title"), author,
                          when + delta if when else None, paragraphs(text)))
    return [i for i in items if i.url and i.paragraphs]


# -- variants -----------------------------------------------------------------

def edited_headline(item: Item) -> Item:
    """Return the item with its headline shortened to the part before its first comma or colon, or with a word added."""
    head = re.split(r"[,:;।]", item.headline, maxsplit=1)[0].strip()
    return replace(item, headline=head if head and head != item.headline else item.headline + " (হালনাগাদ)")


def last_paragraph_removed(item: Item) -> Item:
    return replace(item, paragraphs=item.paragraphs[:-1] or item.paragraphs)


def byline_emptied(item: Item) -> Item:
    return replace(item, byline="")


def joiner_dropped(item: Item) -> Item:
    """Return the item with every ZWJ removed from its text (র‍্যাব becomes র্যাব: drawn otherwise, so a change)."""
    return replace(item, paragraphs=tuple(p.replace(ZWJ, "") for p in item.paragraphs))


def decomposed(item: Item) -> Item:
    """Return the item with headline and text in NFD: the same words in other code points, so no change."""
    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
    return replace(item, headline=nfd(item.headline), paragraphs=tuple(map(nfd, item.paragraphs)))


# -- the page -------------------------------------------------------------------

SECTIONS = ("জাতীয়", "রাজনীতি", "সারাদেশ", "আন্তর্জাতিক", "খেলা", "বিনোদন")


def page(item: Item, site_name: str, address: str) -> bytes:
    """Return the HTML of an article page for the item, its canonical naming `address`."""
    e = html.escape
    when = item.published.isoformat() if item.published else ""
    data = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": item.headline,
            "datePublished": when or None, "inLanguage": "bn", "mainEntityOfPage": address}
    if item.byline:
        data["author"] = {"@type": "Person", "name": item.byline}
    meta_author = f'<meta name="author" content="{e(item.byline)}">\n' if item.byline else ""
    byline = f'<p class="byline"><span class="author">{e(item.byline)}</span></p>' if item.byline else ""
    published = (f'<p class="dateline">প্রকাশ: <time datetime="{when}">{e(when[:16].replace("T", " "))}</time></p>'
                 if when else "")
    nav = "".join(f'<li><a href="/{n}">{s}</a></li>' for n, s in enumerate(SECTIONS))
    body = "\n".join(f"<p>{e(p)}</p>" for p in item.paragraphs)
    return f"""<!DOCTYPE html>
<html lang="bn">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(item.headline)} | {e(site_name)}</title>
<meta property="og:type" content="article">
<meta property="og:title" content="{e(item.headline)}">
<meta property="article:published_time" content="{when}">
{meta_author}<link rel="canonical" href="{e(address)}">
<script type="application/ld+json">{json.dumps({k: v for k, v in data.items() if v}, ensure_ascii=False)}</script>
</head>
<body>
<header class="site-header"><a class="logo" href="/">{e(site_name)}</a>
<nav><ul>{nav}</ul></nav></header>
<main class="container">
<article class="news-details">
<h1 class="headline">{e(item.headline)}</h1>
{byline}
{published}
<div class="content-details">
{body}
</div>
</article>
<aside class="latest"><h2>সর্বশেষ</h2><ul><li><a href="/">প্রচ্ছদ</a></li></ul></aside>
</main>
<footer class="site-footer"><p>© {e(site_name)}. সর্বস্বত্ব সংরক্ষিত।</p></footer>
</body>
</html>
""".encode()


def moved_path(path: str) -> str:
    """Return the address an article moves to: its last path segment with '-1' added (a slug edited by the CMS)."""
    trimmed = path.rstrip("/")
    return trimmed + "-1" + ("/" if path.endswith("/") else "")

