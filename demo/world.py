"""The demo's world: loopback outlets serving their real feeds and articles, and what happens to them.

Each outlet is a loopback host with a robots.txt, a homepage naming its feed,
its real feed (tests/data/feeds/, addresses moved to the host, dates moved
to the demo's first run) and one page per feed item, built from the item's
own headline, author and text (testing/pages.py). `World.visit` is the
number of the collection run about to be made: the demo sets it before each
run, and from their visit on, a few articles change (CHANGES): a headline is
edited, a paragraph removed, a byline emptied, a joiner dropped, one page is
re-served in NFD (the same text: no event), one answers 404 from then on
(gone after three absent checks over six hours) and one moves with a 301.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import reduce
from pathlib import Path
from urllib.parse import unquote, urlsplit

from testing import TEST_DATA, pages, replica
from testing.farm import Farm, Handler, Host, Reply, redirect, stall

# outlet id: (the real feed it serves, feed path, group, Bangla name)
FEED_OUTLETS = {
    "prothomalo": ("prothomalo", "/feed/", "bangla-dailies", "প্রথম আলো"),
    "jagonews": ("jagonews", "/rss/rss.xml", "bangla-dailies", "জাগো নিউজ"),
    "ittefaq": ("ittefaq", "/feed/", "bangla-dailies", "ইত্তেফাক"),
    "banglatribune": ("banglatribune", "/feed/", "portals-and-tv", "বাংলা ট্রিবিউন"),
    "ekattor": ("ekattor", "/feed/", "portals-and-tv", "একাত্তর"),
    "amarbanglabd": ("amarbanglabd", "/feeds", "portals-and-tv", "আমার বাংলা"),
    "bd24live": ("bd24live", "/feed/", "others", "বিডি২৪লাইভ"),
}
GROUPS = {
    "bangla-dailies": ("Bangla dailies", "বাংলা দৈনিক"),
    "portals-and-tv": ("Online portals and television", "অনলাইন পোর্টাল ও টেলিভিশন"),
    "others": ("Other outlets", "অন্যান্য সংবাদমাধ্যম"),
}
# outlet id: (group, Bangla name, what is wrong with it)
TROUBLE = {
    "challenged": ("others", "চ্যালেঞ্জ-পাতা", "answers every request with a Cloudflare challenge"),
    "brokenrobots": ("others", "ভাঙা robots.txt", "answers robots.txt with 503, so it is off limits"),
    "silent": ("others", "নীরব", "never answers (its timeouts take about a minute); down altogether after the first run"),
}


@dataclass(frozen=True)
class Change:
    """From visit `visit` on, `outlet`'s article `pick` is served changed in this way (`kind`)."""

    outlet: str
    pick: str  # "newest", "second", "third" or "joiner" (the newest article whose text has a ZWJ)
    visit: int
    kind: str  # headline, paragraph, byline, joiner, nfd, gone, moved


CHANGES = (
    Change("prothomalo", "newest", 1, "headline"),
    Change("amarbanglabd", "newest", 1, "paragraph"),
    Change("amarbanglabd", "newest", 4, "byline"),
    Change("banglatribune", "newest", 1, "nfd"),
    Change("ekattor", "second", 1, "gone"),
    Change("bd24live", "newest", 1, "moved"),
    Change("jagonews", "joiner", 4, "joiner"),
    Change("ittefaq", "third", 4, "headline"),
)
SMALL_ITEMS = 4  # articles an outlet serves in the reduced demo, besides those that change
VARIANTS = {"headline": pages.edited_headline, "paragraph": pages.last_paragraph_removed,
            "byline": pages.byline_emptied, "joiner": pages.joiner_dropped, "nfd": pages.decomposed}
SAYS = {"headline": "its headline is edited", "paragraph": "its last paragraph is removed",
        "byline": "its byline is emptied", "joiner": "a zero-width joiner is dropped from its text",
        "nfd": "it is served in NFD: other code points, the same text, so no event",
        "gone": "it answers 404 from now on", "moved": "it moves to a new address (301)"}


def _key(path: str) -> str:
    """Return the lookup form of a request path: without query, percent-decoded."""
    return unquote(path.split("?", 1)[0])


def trimmed_feed(body: bytes, keep: set[str]) -> bytes:
    """Return a feed with only the items (RSS) or entries (Atom) whose address is in `keep`."""
    def kept(match: re.Match) -> bytes:
        link = re.search(rb"<link(?:\s[^>]*href=\"([^\"]+)\"[^>]*>|>\s*([^<]+?)\s*<)", match.group(0))
        address = (link.group(1) or link.group(2)).decode() if link else ""
        return match.group(0) if address in keep else b""

    return re.sub(rb"<(item|entry)\b.*?</\1>\s*", kept, body, flags=re.S)


@dataclass
class Outlet:
    """One replica outlet: its host, items by path, and the changes made to its articles."""

    id: str
    host: Host
    name_bn: str
    items: dict[str, pages.Item] = field(default_factory=dict)
    changes: dict[str, list[Change]] = field(default_factory=dict)  # item path -> its changes


class World:
    """Every loopback outlet of the demo, and the visit they are answering."""

    def __init__(self, farm: Farm, start: datetime, small: bool = False):
        self.farm, self.start, self.small = farm, start, small
        self.visit = 0
        self.outlets: dict[str, Outlet] = {}
        self.hosts: dict[str, Host] = {}
        self.groups: dict[str, list[str]] = {}
        for oid, (real, path, group, name_bn) in FEED_OUTLETS.items():
            self._feed_outlet(oid, real, path, name_bn)
            self.groups.setdefault(group, []).append(oid)
        if not small:
            self._trouble_outlets()
            for oid, (group, _name, _why) in TROUBLE.items():
                self.groups.setdefault(group, []).append(oid)

    # -- building ---------------------------------------------------------------

    def _feed_outlet(self, oid: str, real: str, feed_path: str, name_bn: str) -> None:
        host = self.farm.add()
        feed = replica.shifted_feed(real, host.base, self.start)
        items = pages.feed_items(real, host.base, self.start)
        changes: dict[str, list[Change]] = {}
        for change in CHANGES:
            if change.outlet == oid:
                changes.setdefault(self._pick(items, change.pick), []).append(change)
        if self.small:  # four articles an outlet, and every one that changes
            items = [i for n, i in enumerate(items) if n < SMALL_ITEMS or _key(urlsplit(i.url).path) in changes]
            feed = trimmed_feed(feed, {i.url for i in items})
        outlet = Outlet(oid, host, name_bn, {_key(urlsplit(i.url).path): i for i in items}, changes)
        host.routes.update({
            "/robots.txt": replica.robots(disallow="/private"),
            "/": Reply(200, replica.homepage(feed_path, title=name_bn)),
            feed_path: Reply(200, feed, content_type="application/rss+xml"),
            "/*": self._article_route(outlet),
        })
        self.outlets[oid], self.hosts[oid] = outlet, host

    def _pick(self, items: list[pages.Item], pick: str) -> str:
        """Return the path of the item a change names, among those the first run captures (dated within a day)."""
        recent = [i for i in items if i.published and i.published >= self.start - timedelta(hours=24)] or items
        if pick == "joiner":
            chosen = next((i for i in recent if pages.ZWJ in "".join(i.paragraphs)), recent[0])
        else:
            chosen = recent[min(("newest", "second", "third").index(pick), len(recent) - 1)]
        return _key(urlsplit(chosen.url).path)

    def _trouble_outlets(self) -> None:
        challenge = (TEST_DATA / "cloudflare" / "challenge-khaborerkagoj.html").read_bytes()
        self.hosts["challenged"] = self.farm.add(
            {"/*": Reply(403, challenge, {"Server": "cloudflare", "cf-mitigated": "challenge"})})
        self.hosts["brokenrobots"] = self.farm.add({"/robots.txt": Reply(503), "/*": Reply(200, replica.homepage())})
        self.hosts["silent"] = self.farm.add({"/*": stall(25)})

    # -- answering ------------------------------------------------------------------

    def _article_route(self, outlet: Outlet):
        def route(handler: Handler) -> Reply:
            return self.answer(outlet, handler.path.split("?", 1)[0])

        return route

    def answer(self, outlet: Outlet, raw_path: str) -> Reply:
        """Return what the outlet serves at `raw_path` (as requested, percent-encoded) on the current visit."""
        path = _key(raw_path)
        old = self._moved_from(outlet, path)
        item = outlet.items.get(old or path)
        if item is None:
            return _not_found()
        kinds = [c.kind for c in outlet.changes.get(old or path, []) if c.visit <= self.visit]
        if "gone" in kinds:
            return _not_found()
        if "moved" in kinds and old is None:
            return redirect(outlet.host.base + pages.moved_path(urlsplit(item.url).path), 301)
        if old is not None and "moved" not in kinds:
            return _not_found()  # the new address exists only once the article has moved
        item = reduce(lambda it, kind: VARIANTS[kind](it) if kind in VARIANTS else it, kinds, item)
        return Reply(200, pages.page(item, outlet.name_bn, outlet.host.base + raw_path))

    def _moved_from(self, outlet: Outlet, path: str) -> str | None:
        """Return the old path of an article whose new address is `path`, or None."""
        for old, changes in outlet.changes.items():
            if any(c.kind == "moved" for c in changes) and pages.moved_path(old) == path:
                return old
        return None

    # -- telling ----------------------------------------------------------------------

    def registry(self) -> str:
        """Return the outlets.toml of the demo: each loopback host as an outlet, with Bangla names."""
        text = []
        for gid in self.groups:
            name, name_bn = GROUPS[gid]
            text.append(f'[groups.{gid}]\nname = "{name}"\nname_bn = "{name_bn}"\n')
        names_bn = {oid: v[3] for oid, v in FEED_OUTLETS.items()} | {oid: v[1] for oid, v in TROUBLE.items()}
        for gid, members in self.groups.items():
            for oid in members:
                text.append(f'[outlets.{oid}]\nname = "{oid} (replica)"\nname_bn = "{names_bn[oid]} (প্রতিরূপ)"\n'
                            f'homepage = "{self.hosts[oid].base}/"\nlanguage = "bn"\ngroup = "{gid}"\n')
        return "\n".join(text)

    def changes_at(self, visit: int) -> list[str]:
        """Return a line for each change that starts at this visit."""
        lines = []
        for outlet in self.outlets.values():
            for path, changes in outlet.changes.items():
                for change in changes:
                    if change.visit == visit:
                        lines.append(f"{outlet.id} {outlet.host.base}{path}: {SAYS[change.kind]}")
        return lines

    def silence(self) -> None:
        """Take the silent host down: from now on its connections are refused at once."""
        if "silent" in self.hosts:
            self.hosts["silent"].close()


def _not_found() -> Reply:
    return Reply(404, "<!doctype html><html lang=\"bn\"><title>৪০৪</title><h1>পাতাটি পাওয়া যায়নি</h1></html>".encode())


def registry_path(out: Path) -> Path:
    return out / "outlets.toml"
