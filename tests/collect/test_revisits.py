"""Revisits and events, over loopback outlets and a clock that jumps from run to run."""

from __future__ import annotations

import dataclasses
import gzip
import json
import sqlite3
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

import pytest
from click.testing import CliRunner

from collector.collect import capture, events
from collector import settings
from collector.collect.capture import snapshot_from
from collector.clock import parse_instant
from collector.cli.review import review
from collector.collect.changes import reread
from collector.collect.events import gone_decided
from collector.review.order import REVIEW_ORDER_SQL
from collector.collect.revisits import due_checks, next_due_at, run_rechecks
from collector.urls import comparison_key
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.record.store import Store
from tests.conftest import DATA, TEST_INTERVAL
from testing.farm import Farm, Host, Reply, redirect

T0 = datetime(2026, 1, 1, 0, 0, tzinfo=timezone.utc)
SERVER_JITTER = 0.015  # as tests/test_fetch.py: a busy test process stamps requests late
ROBOTS_OPEN = Reply(200, b"User-agent: *\nAllow: /\n", content_type="text/plain")
CF_CHALLENGE = Reply(403, (DATA / "cloudflare" / "challenge-khaborerkagoj.html").read_bytes(),
                     {"Server": "cloudflare", "CF-RAY": "9b7300cecef3f09d-DFW"})

HEADLINE = "ঢাকায় উন্নয়ন সভা অনুষ্ঠিত"
HEADLINE_NEW = "ঢাকায় উন্নয়ন সভা স্থগিত"
HEADLINE_RAB = "র্যাবের অভিযানে ঢাকায় গ্রেপ্তার পাঁচ"  # র + ্ + য: no ZWJ
HEADLINE_RAB_ZWJ = "র\u200d্যাবের অভিযানে ঢাকায় গ্রেপ্তার পাঁচ"
BYLINE = "নিজস্ব প্রতিবেদক"
PARAGRAPHS = (
    "বাংলাদেশের রাজধানী ঢাকায় আজ সকালে এক অনুষ্ঠানে মন্ত্রী বলেছেন যে দেশের অর্থনীতি এগিয়ে যাচ্ছে।",
    "অনুষ্ঠানে ৫০ জন প্রতিনিধি উপস্থিত ছিলেন, যাঁরা নিজেদের এলাকার সমস্যার কথা তুলে ধরেন এবং সমাধান চান।",
    "কোনো সমস্যা হলে জানাতে বলা হয়েছে, যোগাযোগের ঠিকানা পরে দেওয়া হবে বলে জানানো হয়।",
)
PARAGRAPHS_ONE_CHAR = (PARAGRAPHS[0], PARAGRAPHS[1].replace("৫০", "৬০"), PARAGRAPHS[2])
assert sum(a != b for a, b in zip("".join(PARAGRAPHS), "".join(PARAGRAPHS_ONE_CHAR))) == 1


def article_html(headline=HEADLINE, byline: str | None = BYLINE, paragraphs=PARAGRAPHS,
                 canonical: str | None = None, published: str | None = "2026-01-01T06:00:00+06:00") -> bytes:
    """Return an article page; the headline sits outside <article> so it is not part of the text."""
    head = f'<meta property="og:title" content="{headline}">'
    head += f'<meta name="author" content="{byline}">' if byline else ""
    head += f'<meta property="article:published_time" content="{published}">' if published else ""
    head += f'<link rel="canonical" href="{canonical}">' if canonical else ""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>{headline} | সংবাদ</title>'
            f'{head}</head><body><header><a href="/">সংবাদ</a><h1>{headline}</h1></header>'
            f'<div class="content"><article>{body}</article></div><footer>©</footer></body></html>').encode()


def page(nfd: bool = False, **fields) -> Reply:
    """Return a 200 reply with an article page, optionally decomposed to NFD throughout."""
    html = article_html(**fields)
    if nfd:
        html = unicodedata.normalize("NFD", html.decode()).encode()
    return Reply(200, html)


HOMEPAGE = Reply(200, ('<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>সংবাদ</title>'
                       '<link rel="canonical" href="/"></head><body><h1>সংবাদ</h1><ul>'
                       + "".join(f'<li><a href="/news/{i}">খবর {i}</a></li>' for i in range(20))
                       + "</ul></body></html>").encode())


# -- building a record -------------------------------------------------------------

def capture_article(ctx, outlet_id: str, url: str) -> int:
    """Return the id of an article recorded and captured now, as the collector would."""
    key = comparison_key(url)
    article_id = ctx.store.insert("articles", {"outlet_id": outlet_id, "url_key": key, "url": url,
                                               "first_seen_at": ctx.clock.now_iso(), "first_seen_run": ctx.run_id})
    ctx.store.insert("article_urls", {"article_id": article_id, "url": url, "url_key": key, "how": "listing",
                                      "recorded_at": ctx.clock.now_iso(), "run_id": ctx.run_id})
    response = ctx.fetcher.get(url, purpose="capture", outlet_id=outlet_id)
    assert snapshot_from(ctx, article_id, response, "capture") is not None
    return article_id


def checks_of(store, article_id: int) -> list[dict]:
    """Return an article's checks in the order they were performed."""
    return [dict(r) for r in store.query("SELECT * FROM checks WHERE article_id = ? ORDER BY performed_at, id",
                                         (article_id,))]


def assert_paced(seen_slice, interval=TEST_INTERVAL):
    """Fail when a server saw two requests of one run closer than the interval (less jitter)."""
    times = sorted(s.at for s in seen_slice)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert not gaps or min(gaps) >= interval - SERVER_JITTER, f"a gap of {min(gaps):.4f} s"


# -- a simulated year ---------------------------------------------------------------

@dataclass
class Story:
    """One article and what its outlet serves at each hour since T0."""

    label: str
    outlet: str
    host: Host
    path: str
    served: Callable[[float], Reply]
    captured_hour: float = 0.0
    article_id: int | None = None


def during(start: float, end: float, inside: Reply, outside: Reply) -> Callable[[float], Reply]:
    """Return what is served at each hour: `inside` from start until end, else `outside`."""
    return lambda hour: inside if start <= hour < end else outside


def from_hour(start: float, after: Reply, before: Reply) -> Callable[[float], Reply]:
    """Return what is served at each hour: `before` until start, `after` from then on."""
    return during(start, float("inf"), after, before)


class Year:
    """Runs over loopback outlets whose pages change with simulated time.

    A run starts at the first whole minute after the earliest check falls due.
    A run in which nothing is due makes no request, so the minutes between
    are not simulated: the record is the one a collector running every minute
    would make. (Hourly runs would do the same checks up to an hour later.)
    """

    def __init__(self, make_ctx, store, stories: list[Story]):
        self.make_ctx = make_ctx
        self.store = store
        self.stories = stories
        self.runs: list[tuple[datetime, dict]] = []
        self.slices: list[list] = []

    def _serve(self, now: datetime) -> None:
        hour = (now - T0).total_seconds() / 3600
        for story in self.stories:
            story.host.routes[story.path] = story.served(hour)

    def _run(self, now: datetime, work) -> None:
        """Serve the pages of `now`, do `work` in a run starting then, and keep each host's requests."""
        self._serve(now)
        hosts = {s.host for s in self.stories}
        marks = {h: len(h.seen) for h in hosts}
        ctx = self.make_ctx(now=now)
        result = work(ctx)
        ctx.finish()
        self.slices.extend(h.seen[marks[h]:] for h in hosts)
        self.runs.append((now, result))

    def capture(self) -> None:
        """Capture every story at its hour, as the collector's capture stage would."""
        for hour in sorted({s.captured_hour for s in self.stories}):
            batch = [s for s in self.stories if s.captured_hour == hour]

            def work(ctx, batch=batch):
                for story in batch:
                    story.article_id = capture_article(ctx, story.outlet, story.host.url(story.path))
            self._run(T0 + timedelta(hours=hour), work)

    def run_until_nothing_is_due(self, max_runs: int = 80) -> None:
        """Run rechecks at each next due minute until no check is left to do."""
        for _ in range(max_runs):
            due = next_due_at(self.store)
            if due is None:
                return
            self._run(due.replace(second=0, microsecond=0) + timedelta(minutes=1), run_rechecks)
        raise AssertionError("the schedule did not end")


@pytest.fixture(scope="module")
def year(tmp_path_factory):
    """Return a year of checks over ten stories, simulated once for every test that reads it."""
    folder = tmp_path_factory.mktemp("year")
    store = Store(folder / "record.db")
    with Farm() as farm:
        def make_ctx(now):  # as conftest's make_ctx, but one record for the whole module
            return RunContext.open(store, "test", clock=Clock(now), vantage="test-vantage", warc_dir=folder / "warc",
                                   allow_loopback=True, interval=TEST_INTERVAL, backoff=(0.02, 0.04),
                                   connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)

        yield _simulate(farm, make_ctx, store)
    store.conn.close()


def _simulate(farm, make_ctx, store) -> "Year":
    """Return a Year run to its end over three outlets: what each story serves, hour by hour."""
    alpha = farm.add({"/robots.txt": ROBOTS_OPEN, "/": HOMEPAGE})
    beta = farm.add({"/robots.txt": ROBOTS_OPEN, "/": HOMEPAGE})
    gamma = farm.add({"/": HOMEPAGE})  # no robots.txt: 404, no rules
    steady = page()
    stories = [
        Story("steady", "alpha", alpha, "/news/steady/1", from_hour(48, page(nfd=True), steady)),
        Story("headline", "alpha", alpha, "/news/headline/2", from_hour(3, page(headline=HEADLINE_NEW), steady)),
        Story("one-char", "alpha", alpha, "/news/one-char/3",
              from_hour(30, page(paragraphs=PARAGRAPHS_ONE_CHAR), steady)),
        Story("zwj", "alpha", alpha, "/news/zwj/4",
              from_hour(200, page(headline=HEADLINE_RAB_ZWJ), page(headline=HEADLINE_RAB))),
        Story("byline", "beta", beta, "/news/byline/5", from_hour(0.5, page(byline=None), steady)),
        Story("blip", "beta", beta, "/news/blip/6", during(0.5, 2.5, Reply(404, b"not found"), steady)),
        Story("vanishes", "beta", beta, "/news/vanishes/7", from_hour(100, Reply(410, b"gone"), steady)),
        Story("to-home", "beta", beta, "/news/to-home/8", from_hour(12, redirect("/", 301), steady)),
        Story("returns", "beta", beta, "/news/returns/9", during(1000, 8000, Reply(404), steady), 0.5),
        Story("challenged", "gamma", gamma, "/news/challenged/10", during(0.5, 24.5, CF_CHALLENGE, steady)),
    ]
    simulation = Year(make_ctx, store, stories)
    simulation.capture()
    simulation.run_until_nothing_is_due()
    return simulation


def _short_slot(check) -> str:
    """Return '6h' for a regular slot and '+6h' for a follow-up."""
    return check["slot"] if check["follows_check_id"] is None else "+" + check["slot"].rsplit("+", 1)[1]


def _labelled(year: Year) -> dict[int, str]:
    return {s.article_id: s.label for s in year.stories}


def test_every_scheduled_slot_is_checked_once_when_due(year):
    store = year.store
    for story in year.stories:
        rows = checks_of(store, story.article_id)
        regular = [r["slot"] for r in rows if r["follows_check_id"] is None]
        assert regular == [f"{h}h" for h in settings.RECHECK_SCHEDULE_HOURS], story.label
        first = parse_instant(store.one("SELECT captured_at FROM snapshots WHERE article_id = ? AND purpose = "
                                        "'capture'", (story.article_id,))[0])
        for row in rows:
            due, done = parse_instant(row["due_at"]), parse_instant(row["performed_at"])
            assert due <= done < due + timedelta(minutes=2), (story.label, row["slot"])
            if row["follows_check_id"] is None:
                assert due == first + timedelta(hours=int(row["slot"][:-1]))
            else:
                opener = store.one("SELECT performed_at FROM checks WHERE id = ?", (row["follows_check_id"],))
                hours = int(row["slot"].rsplit("+", 1)[1][:-1])
                assert due == parse_instant(opener[0]) + timedelta(hours=hours)
            assert (row["snapshot_id"] is not None) == (row["outcome"] == "present")


def test_outcomes_and_follow_ups_per_story(year):
    store = year.store
    outcomes = {s.label: [(_short_slot(r), r["outcome"]) for r in checks_of(store, s.article_id)]
                for s in year.stories}
    regular = [f"{h}h" for h in settings.RECHECK_SCHEDULE_HOURS]
    assert outcomes["steady"] == [(slot, "present") for slot in regular]
    assert outcomes["blip"] == [("1h", "absent"), ("+1h", "absent"), ("+3h", "present"), ("6h", "present"),
                                ("+6h", "present")] + [(slot, "present") for slot in regular[2:]]
    assert outcomes["returns"] == [(s, "present") for s in regular[:6]] + [
        ("2160h", "absent"), ("+1h", "absent"), ("+3h", "absent"), ("+6h", "absent"), ("8760h", "present")]
    assert outcomes["vanishes"] == [(s, "present") for s in regular[:4]] + [
        ("168h", "absent"), ("+1h", "absent"), ("+3h", "absent"), ("+6h", "absent"),
        ("720h", "absent"), ("2160h", "absent"), ("8760h", "absent")]
    assert outcomes["to-home"] == [(s, "present") for s in regular[:2]] + [
        ("24h", "absent"), ("+1h", "absent"), ("+3h", "absent"), ("+6h", "absent")] + [
        (s, "absent") for s in regular[3:]]
    assert outcomes["challenged"] == [(s, "inconclusive") for s in regular[:3]] + [
        (s, "present") for s in regular[3:]]
    challenged = checks_of(store, next(s.article_id for s in year.stories if s.label == "challenged"))
    assert [r["result"] for r in challenged[:3]] == ["challenge"] * 3
    # Only the first absent of an absence opens it (and schedules follow-ups).
    opened = store.query("SELECT article_id, slot FROM checks WHERE opens_absence = 1 ORDER BY article_id")
    labels = _labelled(year)
    assert sorted((labels[r[0]], r[1]) for r in opened) == [
        ("blip", "1h"), ("returns", "2160h"), ("to-home", "24h"), ("vanishes", "168h")]


def test_exact_events_in_review_order(year):
    store = year.store
    labels = _labelled(year)
    rows = store.query(REVIEW_ORDER_SQL)
    got = []
    for row in rows:
        slot = row["slot"]
        if slot.startswith("followup:"):
            opener = store.one("SELECT slot FROM checks WHERE id = ?", (int(slot.split(":")[1].split("+")[0]),))[0]
            slot = f"{opener}+{slot.rsplit('+', 1)[1]}"
        got.append((labels[store.one("SELECT article_id FROM events WHERE id = ?", (row["event_id"],))[0]],
                    row["kind"], row["field"], slot, row["before"], row["after"]))
    assert got == [
        ("returns", "reappeared", None, "8760h", None, None),
        ("returns", "gone", None, "2160h+6h", None, None),
        ("zwj", "changed", "headline", "720h", HEADLINE_RAB, HEADLINE_RAB_ZWJ),
        ("vanishes", "gone", None, "168h+6h", None, None),
        ("one-char", "changed", "text", "72h", "\n".join(PARAGRAPHS), "\n".join(PARAGRAPHS_ONE_CHAR)),
        ("to-home", "gone", None, "24h+6h", None, None),
        ("headline", "changed", "headline", "6h", HEADLINE, HEADLINE_NEW),
        ("byline", "changed", "byline", "1h", BYLINE, None),
    ]
    ages = [row["article_age_hours"] for row in rows]
    assert ages == sorted(ages, reverse=True)
    # Age: hours from first capture to the check that first saw the change (for
    # a gone, the first absent one). A slot is done in the minute after it falls due.
    expected = [slot + 1 / 60 for slot in (8760, 2160, 720, 168, 72, 24, 6, 1)]
    assert ages == pytest.approx(expected, abs=0.01)
    # A gone is detected at the follow-up 6 h after its first absent check, done a minute late.
    gone = [r for r in rows if r["kind"] == "gone"]
    detected = [parse_instant(r["detected_at"]) - T0 for r in gone]
    assert [round(d.total_seconds() / 60) for d in detected] == [
        (2160 + 6) * 60 + 32, (168 + 6) * 60 + 2, (24 + 6) * 60 + 2]


def test_gone_evidence_points_at_the_absent_checks(year):
    store = year.store
    for event in store.query("SELECT * FROM events WHERE kind = 'gone'"):
        evidence = json.loads(event["evidence"])
        absent = store.query(f"SELECT outcome, performed_at FROM checks WHERE id IN "
                             f"({','.join('?' * len(evidence['absent_checks']))}) ORDER BY performed_at",
                             evidence["absent_checks"])
        assert [r["outcome"] for r in absent] == ["absent"] * 4
        assert evidence["check"] == event["check_id"] == evidence["absent_checks"][-1]
        span = parse_instant(absent[-1]["performed_at"]) - parse_instant(absent[0]["performed_at"])
        assert span >= timedelta(hours=settings.GONE_MIN_SPAN_HOURS)
        # Three absent checks were not yet enough: the span was still short.
        assert not gone_decided([parse_instant(r["performed_at"]) for r in absent[:3]])
        snapshot = store.one("SELECT article_id FROM snapshots WHERE id = ?", (evidence["last_snapshot"],))
        assert snapshot[0] == event["article_id"]


def test_a_redirect_to_the_homepage_never_joins_the_article(year):
    store = year.store
    story = next(s for s in year.stories if s.label == "to-home")
    keys = {r[0] for r in store.query("SELECT url_key FROM article_urls WHERE article_id = ?", (story.article_id,))}
    assert keys == {comparison_key(story.host.url(story.path))}
    details = [r["detail"] for r in checks_of(store, story.article_id) if r["outcome"] == "absent"]
    assert all("the site's root" in d for d in details)


def test_no_run_broke_the_pacing(year):
    store = year.store
    assert sum(len(s) for s in year.slices) > 100
    for seen in year.slices:
        assert_paced(seen)
    purposes = {r[0] for r in store.query("SELECT DISTINCT purpose FROM requests")}
    assert purposes == {"capture", "recheck", "robots"}


def test_review_command_lists_oldest_articles_first(year):
    store = year.store
    result = CliRunner().invoke(review, ["--db", store.path])
    assert result.exit_code == 0, result.output
    listed = [int(line.split("#")[1].split()[0]) for line in result.stdout.splitlines() if "#" in line]
    assert listed == [r["event_id"] for r in store.query(REVIEW_ORDER_SQL)]
    # A change is shown where it is: the one-character edit in its window, the ZWJ by name.
    assert "অনুষ্ঠানে ৫০ জন" in result.stdout and "অনুষ্ঠানে ৬০ জন" in result.stdout
    assert "after:  র⟨ZWJ⟩্যাবের" in result.stdout
    gone_only = CliRunner().invoke(review, ["--db", store.path, "--kind", "gone", "--limit", "2"])
    assert gone_only.stdout.count(" gone ") == 2 and "changed" not in gone_only.stdout


# -- the schedule under pressure ------------------------------------------------------

def test_missed_slots_are_each_performed_late_in_order(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/a/1": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/a/1"))
    summary = run_rechecks(make_ctx(now=T0 + timedelta(days=31)))
    assert summary["performed"] == 6 and summary["present"] == 6 and summary["left"] == 0
    rows = checks_of(store, article)
    assert [r["slot"] for r in rows] == ["1h", "6h", "24h", "72h", "168h", "720h"]
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    assert all(parse_instant(r["performed_at"]) > T0 + timedelta(days=31) for r in rows)
    # Six snapshots of an unchanged page: six checks, no event.
    assert store.one("SELECT COUNT(*) FROM events")[0] == 0


def test_budget_takes_the_most_overdue_first(farm, make_ctx, store, monkeypatch):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/*": page()})
    ctx = make_ctx(now=T0)
    articles = [capture_article(ctx, "alpha", host.url(f"/news/b/{i}")) for i in range(3)]
    monkeypatch.setattr(settings, "RECHECKS_PER_RUN", 2)
    now = T0 + timedelta(hours=30)
    first = run_rechecks(make_ctx(now=now))
    assert (first["due"], first["performed"], first["left"]) == (9, 2, 7)
    second = run_rechecks(make_ctx(now=now + timedelta(minutes=1)))
    assert (second["due"], second["performed"]) == (7, 2)
    done = [(r["article_id"], r["slot"]) for r in store.query("SELECT article_id, slot FROM checks ORDER BY id")]
    assert done == [(articles[0], "1h"), (articles[1], "1h"), (articles[2], "1h"), (articles[0], "6h")]
    assert [d.slot for d in due_checks(store, now)] == ["6h", "6h", "24h", "24h", "24h"]


def test_a_failing_host_defers_its_remaining_checks(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/*": page()})
    ctx = make_ctx(now=T0)
    articles = [capture_article(ctx, "alpha", host.url(f"/news/h/{i}")) for i in range(5)]
    host.routes["/news/*"] = Reply(503, b"down")
    first = run_rechecks(make_ctx(now=T0 + timedelta(hours=1, minutes=1)))
    assert (first["inconclusive"], first["deferred"], first["left"]) == (3, 2, 2)
    assert len([p for p in host.paths_seen() if p.startswith("/news/h/")]) == 5 + 3 * settings.MAX_ATTEMPTS
    host.routes["/news/*"] = page()
    second = run_rechecks(make_ctx(now=T0 + timedelta(hours=2)))
    # The two deferred slots, and the three that failed, tried again: no slot was used up.
    assert (second["due"], second["present"], second["deferred"]) == (5, 5, 0)
    assert [[r["slot"] for r in checks_of(store, a)] for a in articles] == [["1h", "1h#2"]] * 3 + [["1h"]] * 2


def test_a_check_failed_for_a_passing_reason_is_tried_again_in_the_next_run(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/r/1": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/r/1"))
    run_rechecks(make_ctx(now=T0 + timedelta(hours=8759)))  # every slot but the year's, present
    host.routes["/news/r/1"] = Reply(503, b"busy")
    run_rechecks(make_ctx(now=T0 + timedelta(hours=8760, minutes=1)))
    host.routes["/news/r/1"] = page()
    run_rechecks(make_ctx(now=T0 + timedelta(hours=8761)))  # the hourly run after: inside the slack
    first, second = checks_of(store, article)[-2:]
    assert (first["slot"], first["outcome"], first["result"], first["try_number"]) == (
        "8760h", "inconclusive", "server_error", 1)
    assert (second["slot"], second["outcome"], second["try_number"], second["retry_of"]) == (
        "8760h#2", "present", 2, first["id"])
    assert parse_instant(second["due_at"]) == parse_instant(first["performed_at"]) + timedelta(hours=1)
    assert next_due_at(store) is None  # done: the year's slot was checked after all


def test_tries_of_a_slot_are_bounded(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/r/2": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/r/2"))
    host.routes["/news/r/2"] = Reply(503, b"busy")
    now = T0 + timedelta(hours=1, minutes=1)
    for _ in range(20):
        run_rechecks(make_ctx(now=now))
        due = [d for d in due_checks(store, T0 + timedelta(days=2)) if d.slot.startswith("1h")]
        if not due:
            break
        now = max(now, due[0].due_at) + timedelta(minutes=1)
    tries = [r for r in checks_of(store, article) if r["slot"].startswith("1h")]
    assert [r["slot"] for r in tries] == ["1h"] + [f"1h#{n}" for n in range(2, 2 + len(settings.RECHECK_RETRY_HOURS))]
    gaps = [parse_instant(b["due_at"]) - parse_instant(a["performed_at"]) for a, b in zip(tries, tries[1:])]
    assert gaps == [timedelta(hours=h) for h in settings.RECHECK_RETRY_HOURS]
    assert all(r["outcome"] == "inconclusive" for r in tries)


def test_follow_ups_allow_slack_but_never_cut_the_span_short(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/s/1": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/s/1"))
    host.routes["/news/s/1"] = Reply(404)
    opened = T0 + timedelta(hours=1, minutes=2)
    run_rechecks(make_ctx(now=opened))
    opener = checks_of(store, article)[0]
    # Hourly runs that start a few minutes before each follow-up falls due.
    for hour in (1, 3, 6, 7):
        run_rechecks(make_ctx(now=opened + timedelta(hours=hour, minutes=-5)))
    rows = checks_of(store, article)
    follow = {r["slot"].rsplit("+", 1)[1]: r for r in rows if r["follows_check_id"] == opener["id"]}
    early = parse_instant(follow["1h"]["performed_at"]) - parse_instant(follow["1h"]["due_at"])
    assert timedelta(minutes=-10) < early < timedelta(0)  # taken by the run just before it fell due
    assert parse_instant(follow["3h"]["performed_at"]) < parse_instant(follow["3h"]["due_at"])
    # The 6 h follow-up decides the gone rule: not taken before six hours had passed.
    span = parse_instant(follow["6h"]["performed_at"]) - parse_instant(opener["performed_at"])
    assert span >= timedelta(hours=settings.GONE_MIN_SPAN_HOURS)
    assert parse_instant(follow["6h"]["performed_at"]) > opened + timedelta(hours=6, minutes=50)
    (gone,) = store.query("SELECT * FROM events WHERE article_id = ? AND kind = 'gone'", (article,))
    assert gone["check_id"] == follow["6h"]["id"]


# -- what counts as present, absent, inconclusive ---------------------------------------

CASES = [  # path, what is served at the check (None: unchanged), outcome, result
    ("/news/c/ok", None, "present", "ok"),
    ("/news/c/404", Reply(404), "absent", "not_found"),
    ("/news/c/410", Reply(410), "absent", "gone"),
    ("/news/c/451", Reply(451), "absent", "http_error"),
    ("/news/c/500", Reply(500), "inconclusive", "server_error"),
    ("/news/c/403", Reply(403), "inconclusive", "http_error"),
    ("/news/c/challenge", CF_CHALLENGE, "inconclusive", "challenge"),
    ("/news/c/pdf", Reply(200, b"%PDF-1.4 binary", content_type="application/pdf"), "inconclusive", "ok"),
    ("/news/c/to-root", redirect("/"), "absent", "ok"),
    ("/news/c/to-root-tracked", redirect("/?utm_source=rss"), "absent", "ok"),
    ("/news/c/to-query", redirect("/?p=123"), "present", "ok"),  # a WordPress address: an article
    ("/news/c/to-section", redirect("/news/c"), "absent", "ok"),
    ("/news/c/to-latest", redirect("/latest/all"), "absent", "ok"),  # its canonical is '/'
    ("/news/c/to-404-page", redirect("/not-found"), "absent", "ok"),  # one segment, undated
    ("/news/c/moved", redirect("/news/c/moved-to-a-new-slug"), "present", "ok"),
    ("/news/c/known", redirect("/known-story"), "present", "ok"),  # one segment, undated, but known
    ("/private/c/disallowed", None, "inconclusive", "robots_disallowed"),
]
AT_CHECK = {
    "/": HOMEPAGE, "/news/c": Reply(200, article_html(headline="বাংলাদেশ", byline=None, published=None)),
    "/latest/all": Reply(200, article_html(headline="সর্বশেষ", byline=None, published=None, canonical="/")),
    "/not-found": Reply(200, article_html(headline="পাতাটি পাওয়া যায়নি", byline=None, published=None)),
    "/news/c/moved-to-a-new-slug": page(),
    "/?utm_source=rss": HOMEPAGE, "/?p=123": page(),
    "/known-story": Reply(200, article_html(canonical="/known-story", published=None)),
}


def test_outcome_of_each_kind_of_response(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/c/known": Reply(200, article_html(canonical="/known-story")),
                     "/news/*": page(), "/private/*": page()})
    ctx = make_ctx(now=T0)
    articles = {path: capture_article(ctx, "alpha", host.url(path)) for path, *_ in CASES}
    host.routes["/robots.txt"] = Reply(200, b"User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    host.routes.update(AT_CHECK)
    host.routes.update({path: reply for path, reply, *_ in CASES if reply is not None})
    run_rechecks(make_ctx(now=T0 + timedelta(hours=1, minutes=7)))
    for path, _reply, outcome, result in CASES:
        (row,) = checks_of(store, articles[path])
        assert (row["outcome"], row["result"]) == (outcome, result), (path, row["detail"])
    moved = {r[0] for r in store.query("SELECT url FROM article_urls WHERE article_id = ?",
                                       (articles["/news/c/moved"],))}
    assert host.url("/news/c/moved-to-a-new-slug") in moved
    changed = store.query("SELECT field FROM events WHERE article_id = ?", (articles["/news/c/moved"],))
    assert [r[0] for r in changed] == ["final_url"]
    # No single failed request makes an event.
    assert store.one("SELECT COUNT(*) FROM events WHERE kind != 'changed'")[0] == 0


@pytest.mark.parametrize("hours, decided", [
    ((0, 1, 3), False),            # three, but only 3 h apart
    ((0, 6), False),               # 6 h, but two checks
    ((0, 1, 6), True),
    ((0, 3, 5.99), False),
    ((0, 1, 3, 6), True),
    ((0, 0.001, 0.002, 0.003), False),  # overdue slots done back to back
])
def test_gone_rule(hours, decided):
    assert gone_decided([T0 + timedelta(hours=h) for h in hours]) is decided


def test_inconclusive_checks_neither_count_nor_break_an_absence(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/d/1": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/d/1"))
    served = [Reply(404), Reply(403), CF_CHALLENGE, Reply(404), Reply(404)]  # 1h, +1h, +3h, 6h, +6h
    for hour, reply in zip((1.2, 2.3, 4.3, 6.2, 7.3), served):
        host.routes["/news/d/1"] = reply
        run_rechecks(make_ctx(now=T0 + timedelta(hours=hour)))
    outcomes = [(r["slot"].split(":")[0], r["outcome"]) for r in checks_of(store, article)]
    assert [o for _, o in outcomes] == ["absent", "inconclusive", "inconclusive", "absent", "absent"]
    (gone,) = store.query("SELECT * FROM events WHERE article_id = ?", (article,))
    evidence = json.loads(gone["evidence"])
    assert gone["kind"] == "gone" and len(evidence["absent_checks"]) == 3
    assert len(evidence["inconclusive_checks"]) == 2


# -- our own software is never mistaken for the outlet ----------------------------------

def _old_extractor(monkeypatch):
    """Make captures look like the work of an older extractor that kept the site name in headlines."""
    real = capture.extract

    def older(body, content_type, url):
        page_ = real(body, content_type, url)
        return dataclasses.replace(page_, headline=f"{page_.headline} | সংবাদ", extractor="x0-t2.2.0-000000000000")
    monkeypatch.setattr(capture, "extract", older)


def test_older_snapshot_is_extracted_again_with_the_current_extractor(farm, make_ctx, store, monkeypatch, tmp_path):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/e/same": page(), "/news/e/edited": page(),
                     "/news/e/lost": page()})
    with monkeypatch.context() as patch:
        _old_extractor(patch)
        ctx = make_ctx(now=T0)
        same, edited = (capture_article(ctx, "alpha", host.url(p)) for p in ("/news/e/same", "/news/e/edited"))
        ctx.finish()
        ctx = make_ctx(now=T0 + timedelta(seconds=5))
        lost = capture_article(ctx, "alpha", host.url("/news/e/lost"))
        ctx.finish()
    (tmp_path / "warc" / ctx.warc.relative).unlink()  # the WARC of 'lost' is gone from disk
    host.routes["/news/e/edited"] = page(headline=HEADLINE_NEW)
    host.routes["/news/e/lost"] = Reply(200, article_html() + b"<!-- served by cache 2 -->")  # other bytes, same article
    run_ctx = make_ctx(now=T0 + timedelta(hours=1, minutes=7))
    run_rechecks(run_ctx)
    assert store.query("SELECT * FROM events WHERE article_id = ?", (same,)) == []
    (event,) = store.query("SELECT * FROM events WHERE article_id = ?", (edited,))
    assert (event["field"], event["before"], event["after"]) == ("headline", HEADLINE, HEADLINE_NEW)
    assert event["extractor_before"] == "x0-t2.2.0-000000000000"
    assert event["extractor_after"] == events.current_extractor()
    evidence = json.loads(event["evidence"])
    assert evidence["how"] == "warc_file"  # the older side read again from its WARC record
    compared = store.one("SELECT * FROM comparisons WHERE id = ?", (evidence["comparison"],))
    assert (compared["outcome"], compared["snapshot_before"]) == ("compared", evidence["snapshot_before"])
    # The same bytes at the same address read the same: nothing to read again.
    assert store.one("SELECT how FROM comparisons WHERE article_id = ?", (same,))["how"] == "same_html"
    # Without its HTML the older side cannot be read again: no event, the check is recorded as not comparable.
    assert store.query("SELECT * FROM events WHERE article_id = ?", (lost,)) == []
    (unread,) = store.query("SELECT * FROM comparisons WHERE article_id = ?", (lost,))
    assert unread["outcome"] == "not_comparable" and "cannot read" in unread["detail"]


def test_reread_reads_back_the_html_as_captured(farm, make_ctx, store):
    html = article_html()
    host = farm.add({"/robots.txt": Reply(404),
                     "/news/f/gz": Reply(200, gzip.compress(html), {"Content-Encoding": "gzip"})})
    ctx = make_ctx(now=T0)
    article = capture_article(ctx, "alpha", host.url("/news/f/gz"))
    snapshot = store.one("SELECT * FROM snapshots WHERE article_id = ?", (article,))
    values = reread(dict(snapshot), ctx.warc.root)
    assert values == {f: snapshot[f] for f in events.FIELDS}
    assert values["headline"] == HEADLINE and values["byline"] == BYLINE


@pytest.mark.parametrize("statement", [
    "UPDATE checks SET outcome = 'present'", "DELETE FROM checks",
    "UPDATE events SET kind = 'changed'", "DELETE FROM events",
])
def test_checks_and_events_are_append_only(farm, make_ctx, store, statement):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/g/1": Reply(200, article_html())})
    capture_article(make_ctx(now=T0), "alpha", host.url("/news/g/1"))
    host.routes["/news/g/1"] = page(headline=HEADLINE_NEW)
    run_rechecks(make_ctx(now=T0 + timedelta(hours=2)))
    assert store.one("SELECT COUNT(*) FROM events")[0] == 1
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.execute(statement)


# -- when a change happened: an interval ------------------------------------------------

def test_events_are_ordered_by_the_earliest_moment_the_change_can_have_happened(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/i/a": page(), "/news/i/b": page()})
    ctx = make_ctx(now=T0)
    a, b = (capture_article(ctx, "alpha", host.url(p)) for p in ("/news/i/a", "/news/i/b"))
    for hour in (1, 6, 24, 72, 168, 720):
        if hour == 72:  # b cannot be read at 72 h and 168 h: a 403, an answer, not retried
            host.routes["/news/i/b"] = Reply(403, b"forbidden")
        if hour == 168:
            host.routes["/news/i/a"] = page(headline=HEADLINE_NEW)  # edited between 72 h and 168 h
        if hour == 720:
            host.routes["/news/i/b"] = page(headline=HEADLINE_NEW)  # edited between 24 h and 720 h
        run_rechecks(make_ctx(now=T0 + timedelta(hours=hour, minutes=1)))
    (event_a,), (event_b,) = (store.query("SELECT * FROM events WHERE article_id = ?", (x,)) for x in (a, b))
    snaps = {x: [r[0] for r in store.query("SELECT captured_at FROM snapshots WHERE article_id = ? ORDER BY id",
                                           (x,))] for x in (a, b)}
    assert (event_a["last_unchanged_at"], event_a["first_changed_at"]) == (snaps[a][4], snaps[a][5])  # 72 h, 168 h
    assert (event_b["last_unchanged_at"], event_b["first_changed_at"]) == (snaps[b][3], snaps[b][4])  # 24 h, 720 h
    assert event_a["age_min_hours"] == pytest.approx(72 + 1 / 60, abs=0.01)
    assert event_b["age_min_hours"] == pytest.approx(24 + 1 / 60, abs=0.01)
    assert event_b["article_age_hours"] > event_a["article_age_hours"]  # by the later bound b would come first
    order = [r["event_id"] for r in store.query(REVIEW_ORDER_SQL)]
    assert order == [event_a["id"], event_b["id"]]  # a's change cannot be earlier than 72 h; b's may be 24 h
    shown = CliRunner().invoke(review, ["--db", store.path]).stdout
    assert "72.0-168.0 h" in shown and "24.0-720.0 h" in shown
    assert f"between {snaps[a][4]} (last seen as before) and {snaps[a][5]} (first seen changed)" in shown


def test_a_gone_is_dated_between_the_last_snapshot_and_the_first_absence(farm, make_ctx, store):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/i/c": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/i/c"))
    run_rechecks(make_ctx(now=T0 + timedelta(hours=1, minutes=1)))
    host.routes["/news/i/c"] = Reply(404)
    for hour in (6, 7, 9, 12.5):  # the 6 h slot opens the absence; follow-ups 1 h, 3 h, 6 h after it
        run_rechecks(make_ctx(now=T0 + timedelta(hours=hour, minutes=1)))
    (gone,) = store.query("SELECT * FROM events WHERE article_id = ? AND kind = 'gone'", (article,))
    last = store.one("SELECT MAX(captured_at) FROM snapshots WHERE article_id = ?", (article,))[0]
    first_absent = store.one("SELECT performed_at FROM checks WHERE article_id = ? AND opens_absence = 1",
                             (article,))[0]
    assert (gone["last_unchanged_at"], gone["first_changed_at"]) == (last, first_absent)
    assert gone["age_min_hours"] == pytest.approx(1 + 1 / 60, abs=0.01)
    assert gone["article_age_hours"] == pytest.approx(6 + 1 / 60, abs=0.01)
