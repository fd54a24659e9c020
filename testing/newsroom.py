"""A year of loopback newsrooms: outlets whose articles appear, change, move, fail, disappear and come back.

Each outlet is a loopback host (testing/farm.py) serving, at the simulated
instant `Newsroom.now()`, what a news site serves: robots.txt naming its news
sitemap, a homepage linking its RSS feed, the feed (latest 100 articles) and
the news sitemap (the last 48 hours), and each article's page. An article's
life is scripted when it is published: most never change; some are edited
(one word of the text, the headline, or the byline), moved to a new address
(301), taken down for good (404), taken down for a while and put back, answer
503 for a few hours once (a failure that passes), or carry bytes that change
every hour and mean nothing (a "served by" comment). An outlet can be down for
a window (every address 503, or only its articles).

The newsroom also says what was true: `Story.state(at)` is what the article's
address served at an instant, so a simulation can tell real changes from false
events and count what was missed. Every change happens in the first ten
minutes of an hour, so no job's requests straddle one.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from xml.sax.saxutils import escape

from collector.clock import Clock
from testing.farm import Farm, Handler, Reply

WORDS = ("ঢাকা", "সরকার", "নির্বাচন", "বাজার", "শিক্ষা", "স্বাস্থ্য", "নদী", "বন্যা", "কৃষক", "শ্রমিক", "আদালত",
         "মন্ত্রী", "সভা", "প্রকল্প", "সড়ক", "বিদ্যুৎ", "রপ্তানি", "পোশাক", "ক্রিকেট", "বৃষ্টি", "উন্নয়ন", "রাজধানী",
         "জেলা", "উপজেলা", "গ্রাম", "হাসপাতাল", "বিশ্ববিদ্যালয়", "পুলিশ", "তদন্ত", "প্রতিবেদন", "র্যাব", "ক্ষতিগ্রস্ত")
BYLINES = ("নিজস্ব প্রতিবেদক", "স্টাফ রিপোর্টার", "জেলা প্রতিনিধি", "বিশেষ সংবাদদাতা")
DHAKA = timezone(timedelta(hours=6))  # the outlets state their times in Dhaka time


@dataclass
class Story:
    """One article and its script: what its address serves at any instant."""

    outlet: "Outlet"
    number: int
    published: datetime
    headline: str
    byline: str
    paragraphs: tuple[str, ...]
    edits: list[tuple[datetime, str, str]] = field(default_factory=list)  # (when, field, new value)
    moved_at: datetime | None = None
    gone_at: datetime | None = None
    away: tuple[datetime, datetime] | None = None  # 404 in between, then back
    failing: tuple[datetime, datetime] | None = None  # 503 in between
    dynamic: bool = False

    @property
    def path(self) -> str:
        return f"/news/{self.outlet.id}/{self.number}"

    @property
    def moved_path(self) -> str:
        return f"/news/{self.outlet.id}/{self.number}-moved"

    def content(self, at: datetime) -> dict:
        """Return the article's headline, byline and text (paragraphs) as published and edited by `at`."""
        values = {"headline": self.headline, "byline": self.byline, "text": self.paragraphs}
        for when, name, value in self.edits:
            if when <= at:
                values[name] = value
        return values

    def state(self, at: datetime, path: str | None = None) -> tuple[str, dict]:
        """Return (kind, detail) served at `path` (the article's first address by default) at `at`.

        kind: page (detail: content and address), redirect (to the moved address),
        absent (404), failing (503), unpublished (404, before it was published).
        """
        path = path or self.path
        outlet = self.outlet
        if at < self.published:
            return "unpublished", {}
        if outlet.down(at, article=True) or (self.failing and self.failing[0] <= at < self.failing[1]):
            return "failing", {}
        if self.gone_at and at >= self.gone_at or self.away and self.away[0] <= at < self.away[1]:
            return "absent", {}
        moved = self.moved_at is not None and at >= self.moved_at
        if moved and path == self.path:
            return "redirect", {"to": self.moved_path}
        if not moved and path == self.moved_path:
            return "unpublished", {}
        return "page", {**self.content(at), "path": self.moved_path if moved else self.path}


class Outlet:
    """One loopback news site and its articles, oldest first."""

    def __init__(self, room: "Newsroom", farm: Farm, index: int, suffix: bool):
        self.room, self.index, self.id = room, index, f"outlet{index:02d}"
        self.name = f"দৈনিক সংবাদ {index}"
        self.suffix = suffix  # og:title "headline | site", no <h1>: the headline as stated carries the name
        self.stories: list[Story] = []
        self.times: list[datetime] = []
        self.by_number: dict[int, Story] = {}
        self.outages: list[tuple[datetime, datetime, bool]] = []  # (start, end, articles only)
        self.host = farm.add({"/robots.txt": self._robots, "/": self._home, "/feed.xml": self._feed,
                              "/news_sitemap.xml": self._sitemap, "/news/*": self._article})

    @property
    def base(self) -> str:
        return self.host.base

    def down(self, at: datetime, article: bool) -> bool:
        return any(start <= at < end and (article or not only) for start, end, only in self.outages)

    def published_by(self, at: datetime) -> list[Story]:
        return self.stories[:bisect.bisect_right(self.times, at)]

    # -- routes -------------------------------------------------------------------

    def _guard(self) -> Reply | None:
        return Reply(503, b"Service Unavailable", content_type="text/plain") if self.down(self.room.now(), False) else None

    def _robots(self, handler: Handler) -> Reply:
        return self._guard() or Reply(200, f"User-agent: *\nAllow: /\nSitemap: {self.base}/news_sitemap.xml\n".encode(),
                                      content_type="text/plain")

    def _home(self, handler: Handler) -> Reply:
        return self._guard() or Reply(200, (
            f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>{self.name}</title>'
            f'<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head>'
            f"<body><h1>{self.name}</h1></body></html>").encode())

    def _feed(self, handler: Handler) -> Reply:
        if refused := self._guard():
            return refused
        items = "".join(
            f"<item><title>{escape(s.content(self.room.now())['headline'])}</title><link>{self.base}{s.path}</link>"
            f"<pubDate>{format_datetime(s.published)}</pubDate></item>"
            for s in reversed(self.published_by(self.room.now())[-100:]))
        return Reply(200, ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
                           f"<title>{self.name}</title><link>{self.base}/</link><description>খবর</description>"
                           f"{items}</channel></rss>").encode(), content_type="application/rss+xml")

    def _sitemap(self, handler: Handler) -> Reply:
        if refused := self._guard():
            return refused
        now = self.room.now()
        recent = [s for s in self.published_by(now)[-400:] if s.published >= now - timedelta(hours=48)]
        urls = "".join(
            f"<url><loc>{self.base}{s.path}</loc><news:news><news:publication><news:name>{self.name}</news:name>"
            f"<news:language>bn</news:language></news:publication><news:publication_date>"
            f"{s.published.isoformat()}</news:publication_date><news:title>{escape(s.headline)}</news:title>"
            f"</news:news></url>" for s in reversed(recent))
        return Reply(200, ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/'
                           'sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
                           f"{urls}</urlset>").encode(), content_type="application/xml")

    def _article(self, handler: Handler) -> Reply:
        if refused := self._guard():
            return refused
        path = handler.path.split("?")[0]
        try:
            number = int(path.rsplit("/", 1)[-1].removesuffix("-moved"))
        except ValueError:
            return Reply(404, b"not found", content_type="text/plain")
        story = self.by_number.get(number)
        if story is None:
            return Reply(404, b"not found", content_type="text/plain")
        kind, detail = story.state(self.room.now(), path)
        if kind == "redirect":
            return Reply(301, b"", {"Location": detail["to"]}, content_type=None)
        if kind == "failing":
            return Reply(503, b"Service Unavailable", content_type="text/plain")
        if kind != "page":
            return Reply(404, "<html><body>পাতাটি পাওয়া যায়নি</body></html>".encode())
        return Reply(200, self.page(story, detail))

    def page(self, story: Story, values: dict) -> bytes:
        """Return the article page for these values: real-looking markup, small."""
        title = f"{values['headline']} | {self.name}" if self.suffix else values["headline"]
        h1 = "" if self.suffix else f"<h1>{values['headline']}</h1>"
        served = f"<!-- served {self.room.now():%Y%m%d%H} by cache {story.number % 7} -->" if story.dynamic else ""
        body = "".join(f"<p>{p}</p>" for p in values["text"])
        published = story.published.astimezone(DHAKA).isoformat()
        return (f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>{title}</title>'
                f'<meta property="og:title" content="{title}"><meta name="author" content="{values["byline"]}">'
                f'<meta property="article:published_time" content="{published}">'
                f'<link rel="canonical" href="{self.base}{values["path"]}"></head><body>{served}'
                f'<header><a href="/">{self.name}</a></header>{h1}<div class="content"><article>{body}</article></div>'
                f"<footer>©</footer></body></html>").encode()


@dataclass
class Odds:
    """How often each thing happens to an article (shares of all articles)."""

    edit_word: float = 0.03
    edit_headline: float = 0.01
    edit_byline: float = 0.01
    move: float = 0.005
    gone: float = 0.01
    away: float = 0.01
    fail_capture: float = 0.02
    fail_check: float = 0.02
    dynamic: float = 0.3

    def times(self, factor: float) -> "Odds":
        """Return these odds with every scripted change `factor` times as likely (for short simulations)."""
        scaled = {k: min(1.0, v * factor) for k, v in vars(self).items() if k != "dynamic"}
        return Odds(**scaled, dynamic=self.dynamic)


class Newsroom:
    """Every outlet and article of the simulated year, and the simulated clock they serve by."""

    def __init__(self, farm: Farm, outlets: int, per_day: int, start: datetime, days: int, seed: int = 15,
                 odds: Odds | None = None, change_hours: float = 72.0):
        self.rng = random.Random(seed)
        self.start, self.days, self.odds = start, days, odds or Odds()
        self.change_hours = change_hours  # mean time from publication to an article's change
        self.clock = Clock(start)
        self.outlets = [Outlet(self, farm, i, suffix=i % 2 == 1) for i in range(outlets)]
        for outlet in self.outlets:
            for day in range(days):
                for _ in range(per_day):
                    self._publish(outlet, start + timedelta(days=day, seconds=self.rng.uniform(0, 86400)))
            order = sorted(range(len(outlet.stories)), key=lambda i: outlet.stories[i].published)
            outlet.stories = [outlet.stories[i] for i in order]
            outlet.times = [s.published for s in outlet.stories]

    def now(self) -> datetime:
        return self.clock.now()

    def set_clock(self, at: datetime) -> None:
        """Serve as at `at` from now on (time then runs on, as the collector's --now clock does)."""
        self.clock = Clock(at)

    def stories(self) -> list[Story]:
        return [s for o in self.outlets for s in o.stories]

    # -- scripts ---------------------------------------------------------------------

    def _publish(self, outlet: Outlet, when: datetime) -> None:
        rng, odds = self.rng, self.odds
        number = len(outlet.by_number) + 1
        paragraphs = tuple(" ".join(rng.choices(WORDS, k=rng.randint(14, 22))) + "।" for _ in range(4))
        story = Story(outlet, number, when, " ".join(rng.choices(WORDS, k=5)), rng.choice(BYLINES), paragraphs,
                      dynamic=rng.random() < odds.dynamic)
        roll = rng.random()
        for share, script in ((odds.edit_word, self._edit_word), (odds.edit_headline, self._edit_headline),
                              (odds.edit_byline, self._edit_byline), (odds.move, self._move),
                              (odds.gone, self._gone), (odds.away, self._away)):
            if roll < share:
                script(story)
                break
            roll -= share
        if rng.random() < odds.fail_capture:
            story.failing = (when, self._on_the_hour(when + timedelta(hours=2)))
        elif rng.random() < odds.fail_check:
            first_check = when + timedelta(hours=24)
            story.failing = (self._on_the_hour(first_check - timedelta(hours=1)),
                             self._on_the_hour(first_check + timedelta(hours=4)))
        outlet.stories.append(story)
        outlet.by_number[number] = story

    def _later(self, story: Story) -> datetime:
        """Return a moment after publication in the first minutes of an hour: most often within days, at times months on."""
        if self.rng.random() < 0.3:
            hours = self.rng.uniform(0, 24 * self.days)
        else:
            hours = min(self.rng.expovariate(1 / self.change_hours), 24 * self.days)
        return self._on_the_hour(story.published + timedelta(hours=1 + hours))

    def _on_the_hour(self, when: datetime) -> datetime:
        return when.replace(minute=self.rng.randint(0, 9), second=self.rng.randint(0, 59), microsecond=0)

    def _edit_word(self, story: Story) -> None:
        k = self.rng.randrange(len(story.paragraphs))
        words = story.paragraphs[k].split(" ")
        i = self.rng.randrange(len(words) - 1)
        words[i] = next(w for w in self.rng.sample(WORDS, 3) if w != words[i])
        text = story.paragraphs[:k] + (" ".join(words),) + story.paragraphs[k + 1:]
        story.edits.append((self._later(story), "text", text))

    def _edit_headline(self, story: Story) -> None:
        story.edits.append((self._later(story), "headline", story.headline + " " + self.rng.choice(WORDS)))

    def _edit_byline(self, story: Story) -> None:
        story.edits.append((self._later(story), "byline", next(b for b in BYLINES if b != story.byline)))

    def _move(self, story: Story) -> None:
        story.moved_at = self._later(story)

    def _gone(self, story: Story) -> None:
        story.gone_at = self._later(story)

    def _away(self, story: Story) -> None:
        start = self._later(story)
        story.away = (start, self._on_the_hour(start + timedelta(hours=self.rng.choice((3, 30, 24 * 8)))))
