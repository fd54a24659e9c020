"""A decoded page as an HTML parser sees it: its tree, and its text nodes as the page holds them."""

from __future__ import annotations

import re

from lxml import etree, html as lxml_html


_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# noscript stays: no JavaScript runs here, so its content is what this reader is served
_SKIPPED_TAGS = {"script", "style", "template"}
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def prepare(text: str) -> str:
    """Return decoded text as an HTML parser sees it: LF newlines, no NUL, no XML declaration.

    Newline normalisation and dropping NUL in text are what the HTML standard's
    parser does; the declaration makes lxml refuse an already decoded str.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return _XML_DECLARATION.sub("", text, count=1)


def parse_tree(text: str) -> lxml_html.HtmlElement:
    """Return the lxml tree of a prepared page; an empty document for an unparseable one."""
    parser = lxml_html.HTMLParser(collect_ids=False, default_doctype=False)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return lxml_html.document_fromstring("<html><body></body></html>", parser=parser)


def _collect_text(element, parts: list[str]) -> None:
    """Append element's text nodes, children and tail in document order, skipping scripts and comments."""
    if isinstance(element.tag, str) and element.tag.lower() not in _SKIPPED_TAGS:
        if element.text:
            parts.append(element.text)
        for child in element:
            _collect_text(child, parts)
    if element.tail:
        parts.append(element.tail)


def text_content(element) -> str:
    """Return the text nodes of element concatenated as the page holds them (entities decoded)."""
    parts: list[str] = []
    _collect_text(element, parts)
    # the element's own tail lies outside it
    if element.tail:
        parts.pop()
    return "".join(parts)


def collapse_space(text: str) -> str:
    """Return text with runs of HTML whitespace (space, tab, LF, CR, FF) as one space, stripped.

    NBSP and other Unicode spaces are characters the page chose; they stay.
    """
    return _HTML_SPACE.sub(" ", text).strip(" ")


NODE_BREAK = "\x00"  # never in prepared text (prepare drops NUL), and a blank to the skeleton


def text_nodes(tree) -> str:
    """Return the page's text nodes joined by NODE_BREAK, so element boundaries stay visible.

    text_content joins nodes directly, and "<h1>শিরোনাম</h1><span>নিজস্ব" reads
    as one word; a search for a name needs to know where elements end.
    """
    return NODE_BREAK.join(tree.xpath("//text()[not(ancestor::script) and not(ancestor::style)"
                                      " and not(ancestor::template)]"))
