"""A check's outcome: present, absent or inconclusive (collector/collect/revisits.py says what each means)."""

from __future__ import annotations

from urllib.parse import urlsplit

from collector.net.fetcher import Response
from collector.parse.decoding import is_html
from collector.parse.extract import extract
from collector.record import fold_visit
from collector.record.articles import article_key

ABSENT_RESULTS = ("not_found", "gone")
# 451 Unavailable For Legal Reasons (RFC 7725): the server itself says the
# article is withheld. That is an answer about the article, not a failed request.
ABSENT_STATUSES = (451,)

def _path_segments(url: str) -> list[str]:
    """Return the non-empty path segments of url's comparison form."""
    return [s for s in urlsplit(article_key(url)).path.split("/") if s]


def _is_site_root(url: str) -> bool:
    """Return True for an address whose path is '/' (or empty) with no query but tracking."""
    return not _path_segments(url) and not urlsplit(article_key(url)).query


def known_keys(conn, article_id: int) -> frozenset[bytes]:
    """Return the digests of the keys of every address recorded for the article (record/fold_visit.py: the same
    whether or not the database holds its rows)."""
    return fold_visit.keys_of(conn, article_id)


def front_page_reason(requested: str, response: Response, known: frozenset[bytes]) -> str | None:
    """Return why a redirected fetch ended on a page that is not the article, or None when it is.

    Only a fetch that was redirected to an address not recorded for the article
    qualifies. It then ended on a front when: the final path is '/' with no
    query; or the final path is a leading part of the article's own path (its
    section front); or the final page names a site root as its canonical
    address; or the final path is one segment with no query and the page
    states no publication date (a section such as /sports, or a /404 page).
    A redirect to any other address is an article that moved: present.
    """
    final = response.final_url
    if final == requested or fold_visit.knows(known, article_key(final)):
        return None
    segments, wanted = _path_segments(final), _path_segments(requested)
    query = urlsplit(article_key(final)).query
    if not segments and not query:
        return "the site's root"
    if segments and len(segments) < len(wanted) and wanted[:len(segments)] == segments:
        return "a section front above the article's address"
    page = extract(response.body, response.content_type, final)
    if page.canonical_url and _is_site_root(page.canonical_url):
        return f"the page names a site root as its canonical address ({page.canonical_url})"
    if len(segments) == 1 and not query and page.published_raw is None:
        return "an undated page one path segment deep"
    return None


def _failure(response: Response) -> str:
    """Return a one-line description of a failed fetch."""
    text = response.result + (f" ({response.status})" if response.status else "")
    return text + (f": {response.detail}" if response.detail else "")


def classify(response: Response, requested: str, known: frozenset[bytes]) -> tuple[str, str | None]:
    """Return (outcome, detail) for a check's response: present, absent or inconclusive."""
    if response.result in ABSENT_RESULTS or (
            response.result == "http_error" and response.status in ABSENT_STATUSES):
        return "absent", f"{_failure(response)} at {response.final_url}"
    if response.result != "ok":
        return "inconclusive", _failure(response)
    if not is_html(response.content_type, response.body):
        return "inconclusive", f"not HTML ({response.content_type or 'no content type'})"
    front = front_page_reason(requested, response, known)
    if front:
        return "absent", f"redirected to {response.final_url}: {front}"
    return "present", None
