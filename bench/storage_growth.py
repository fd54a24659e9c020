"""Storage growth of the committed record: a month of hourly runs, committed to a scratch git repository.

    .venv/bin/python bench/storage_growth.py            # 30 days, 40 outlets, ~2 minutes
    .venv/bin/python bench/storage_growth.py --days 3   # a quick look

No network. Each simulated hour makes the rows a real hour makes, with the
real Store and schema, written directly (not through the fetcher):

  collect job  one run row; every outlet synced (outlets.last_synced_at
               changes, as sync_registry does); robots.txt and 3 sources
               read per outlet, each listing the latest 100 entries (real
               addresses, titles and date formats of tests/data/feeds); the
               new articles (100 per outlet per day) queued and captured, with
               text of the real pages' lengths (tests/data/articles) drawn
               from the real Bangla vocabulary; source rediscovery every 7
               days; revisits on settings.RECHECK_SCHEDULE_HOURS (97% present
               with the page unchanged, 2% inconclusive, 1% absent); the run's
               WARC file in warc_files; then `export_new`.
  archive job  one run row; each capture of the hour before submitted to
               Save Page Now and its status read (2 rows, 2 requests); then
               `export_new`.

After each simulated day (or hour, --commit hourly) data/record is committed
exactly as the workflow commits it. At checkpoints the repository is packed
with `git gc` and measured. WARC files are not committed (they go to release
assets); their size is projected from records written with warcio from the
real pages, feeds and robots.txt files.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import random
import re
import shutil
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from collector.record import export  # noqa: E402

from collector.record import fileformat, folder

from collector.record import rebuild as rebuilding
from collector import settings
from collector.record.rebuild import resume  # noqa: E402
from collector.record.fileformat import ORDER  # noqa: E402
from collector.collect.context import settings_snapshot  # noqa: E402
from collector.parse.extract import extract  # noqa: E402
from collector.parse.listings import parse_listing  # noqa: E402
from collector.record.store import Store  # noqa: E402
from collector.net.warc import WarcLog  # noqa: E402

DATA = ROOT / "tests" / "data"
START = datetime(2026, 9, 1, 0, 17, tzinfo=timezone.utc)  # the collect workflow's odd minute
GITHUB_FILE_LIMIT = 100 * 1024 * 1024
_BANGLA_WORD = re.compile(r"[\u0980-\u09FF\u200c\u200d]+")


# -- real inputs -----------------------------------------------------------------

class Corpus:
    """Real material: feed entries (addresses, date formats), page bytes and text lengths, vocabulary."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.templates = []  # (path, published_raw format example)
        words = collections.Counter()
        for path in sorted((DATA / "feeds").glob("*.xml")):
            parsed = parse_listing(path.read_bytes(), "https://feeds.test/feed")
            for entry in parsed.entries:
                if entry.url:
                    self.templates.append(re.sub(r"^https?://[^/]+", "", entry.url))
                words.update(_BANGLA_WORD.findall(entry.title or ""))
        self.pages, self.text_lengths = [], []
        for path in sorted((DATA / "articles").glob("*.html")):
            body = path.read_bytes()
            page = extract(body, "text/html; charset=utf-8", "https://x.test/a")
            self.pages.append(body)
            self.text_lengths.append(len(page.text or ""))
            words.update(_BANGLA_WORD.findall(page.text or ""))
        self.feeds = [p.read_bytes() for p in sorted((DATA / "feeds").glob("*.xml"))]
        self.robots = [p.read_bytes() for p in sorted((DATA / "robots").glob("*.robots.txt"))
                       if not p.name.startswith("broken")]
        self.vocabulary = list(words)
        self.cum_weights = list(_accumulate(words[w] for w in self.vocabulary))

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocabulary, cum_weights=self.cum_weights, k=n)

    def text(self) -> str:
        """Return article text of a real page's length, sentences of real words in real proportions."""
        target = self.rng.choice(self.text_lengths) * self.rng.uniform(0.8, 1.2)
        words = self.words(int(target / 6.4) + 1)  # a word and its space average 6.4 characters here
        out, start = [], 0
        while start < len(words):
            n = self.rng.randint(6, 16)
            out.append(" ".join(words[start:start + n]) + "।")
            start += n
        return "\n".join(" ".join(out[i:i + 4]) for i in range(0, len(out), 4))

    def address(self, host: str, number: int) -> str:
        path = self.rng.choice(self.templates)
        path, count = re.subn(r"/\d{3,}", f"/{number}", path, count=1)
        return f"https://{host}{path}" if count else f"https://{host}{path.rstrip('/')}-{number}"


def _accumulate(values):
    total = 0
    for v in values:
        total += v
        yield total


# -- the simulated record ----------------------------------------------------------

COLUMNS = {
    "runs": "id command started_at vantage software_version git_revision settings",
    "requests": "id run_id outlet_id purpose method url host attempt redirected_from sent started_at finished_at "
                "result status_code content_type bytes elapsed_ms remote_ip vantage location detail warc_file "
                "warc_offset warc_length",
    "source_probes": "id run_id outlet_id url found_via request_id probed_at outcome detail kind",
    "sources": "id outlet_id url kind found_via probe_id run_id validated_at",
    "listings": "id run_id outlet_id url request_id parent_listing_id fetched_at kind entry_count",
    "listing_entries": "id listing_id position url url_key title published_raw published_utc modified_raw "
                       "modified_utc queue_reason",
    "articles": "id outlet_id url_key url first_seen_at first_seen_run",
    "article_urls": "id article_id url url_key how recorded_at run_id snapshot_id",
    "snapshots": "id article_id request_id run_id purpose captured_at status_code final_url headline byline "
                 "published_raw published_source published_utc modified_raw modified_source modified_utc text "
                 "canonical_url language encoding encoding_source unmapped_paragraphs html_sha256 warc_file "
                 "warc_offset warc_length payload_digest extractor extractor_info",
    "checks": "id article_id slot follows_check_id due_at performed_at run_id url result request_id request_chain "
              "snapshot_id outcome opens_absence detail",
    "archive_submissions": "id snapshot_id run_id request_id kind url recorded_at job_id status status_ext message "
                           "timestamp original_url archive_url",
    "capture_queue": "url_key url outlet_id article_id reason listing_entry_id sort_time queued_at queued_run state "
                     "last_request_id done_at",
}


class Simulation:
    """Writes an hour's rows the way the collector does, with ids assigned as SQLite would."""

    def __init__(self, store: Store, corpus: Corpus, outlets: int, per_day: int, sources: int,
                 entries: int, rechecks: bool, rng: random.Random, warc_sizes: dict[str, float]):
        self.store, self.conn, self.corpus, self.rng = store, store.conn, corpus, rng
        self.warc_sizes, self.run_warc = warc_sizes, 0
        self.per_day, self.sources, self.entries, self.rechecks = per_day, sources, entries, rechecks
        self.ids = collections.defaultdict(int)
        self.outlets = [f"outlet{i:02d}" for i in range(outlets)]
        self.hosts = {o: f"www.{o}.example.com.bd" for o in self.outlets}
        self.stream = {o: [] for o in self.outlets}  # article ids, oldest first
        self.article = {}  # id -> (outlet, url, title, published_raw, text, headline, byline)
        self.due = collections.defaultdict(list)  # hour -> [(article id, slot)]
        self.captured_last_hour: list[tuple[int, str]] = []
        self.counts = collections.Counter()
        self.warc_bytes = collections.Counter()  # exchanges per kind, for the WARC projection
        self.settings_json = json.dumps(settings_snapshot(), sort_keys=True)
        self.extractor_info = json.dumps({"extractor": "takedownwatch-extract/1", "trafilatura": "2.3.1",
                                          "htmldate": "1.11.0", "lxml": "6.1.3", "charset_normalizer": "3.5.2",
                                          "options": {"deduplicate": False, "favor_recall": True,
                                                      "include_comments": False}}, sort_keys=True)
        self._setup()

    def next_id(self, table: str) -> int:
        self.ids[table] += 1
        return self.ids[table]

    def _setup(self) -> None:
        self.conn.execute("PRAGMA synchronous = OFF")
        with self.store.transaction() as c:
            for g in range(4):
                c.execute("INSERT INTO outlet_groups VALUES (?, ?, ?)", (f"group{g}", f"Group {g}", f"গোষ্ঠী {g}"))
            for i, o in enumerate(self.outlets):
                c.execute("INSERT INTO outlets (id, name, name_bn, homepage, language, group_id, operator_sources, "
                          "active, first_seen_at, last_synced_at) VALUES (?, ?, ?, ?, 'bn', ?, '[]', 1, ?, ?)",
                          (o, f"Outlet {i}", " ".join(self.corpus.words(2)), f"https://{self.hosts[o]}/",
                           f"group{i % 4}", _iso(START), _iso(START)))

    # one request row (and its share of the run's WARC file)
    def request(self, rows, run, when, outlet, purpose, url, result="ok", status=200, size=0, ctype="text/html",
                method="GET", warc=None, kind=None):
        rid = self.next_id("requests")
        offset, length = self.run_warc, int(self.warc_sizes.get(kind, 0))
        if kind:
            self.warc_bytes[kind] += 1
            self.run_warc += length
        rows["requests"].append((
            rid, run, outlet, purpose, method, url, url.split("/")[2] if "//" in url else None, 1, None, 1,
            _iso(when), _iso(when + timedelta(milliseconds=self.rng.randint(80, 2500))), result, status, ctype,
            size, round(self.rng.uniform(80, 2500), 3), f"203.0.113.{self.rng.randint(1, 254)}", "github-actions-eastus",
            None, None if result == "ok" else result.replace("_", " "), warc if kind else None,
            offset if kind else None, length if kind else None))
        return rid

    def hour(self, h: int) -> None:
        """Write the collect job's rows for simulated hour h."""
        when = START + timedelta(hours=h)
        rows = collections.defaultdict(list)
        run = self.next_id("runs")
        warc = f"{when:%Y/%m/%d}/run-{run:06d}-{when:%H%M%S}-{hashlib.md5(str(run).encode()).hexdigest()[:8]}.warc.gz"
        rows["runs"].append((run, "run", _iso(when), "github-actions-eastus", settings.__version__,
                             hashlib.sha1(str(h // 200).encode()).hexdigest(), self.settings_json))
        captured = []
        for index, outlet in enumerate(self.outlets):
            host = self.hosts[outlet]
            self.request(rows, run, when, outlet, "robots", f"https://{host}/robots.txt", size=900, ctype="text/plain",
                         warc=warc, kind="robots")
            if (h + index * 4) % (24 * settings.SOURCE_REVALIDATE_DAYS) == 0:
                self._discover(rows, run, when, outlet, host, warc)
            new = math.floor((h + 1) * self.per_day / 24 + index / len(self.outlets)) - \
                math.floor(h * self.per_day / 24 + index / len(self.outlets))
            for _ in range(new):
                captured.append(self._new_article(rows, run, when, outlet, host))
            self._listings(rows, run, when, outlet, host, warc, set(a for a, _ in captured))
        for article_id, outlet in captured:
            self._capture(rows, run, when, article_id, outlet, warc)
        if self.rechecks:
            for article_id, slot in self.due.pop(h, []):
                self._check(rows, run, when, article_id, slot, warc)
        self._flush(rows)
        self.conn.execute("UPDATE outlets SET last_synced_at = ?", (_iso(when),))
        self.captured_last_hour = [(a, o) for a, o in captured]
        self._finish(run, when, rows, warc)

    def archive_hour(self, h: int) -> None:
        """Write the archive job's rows: each capture of the last hour submitted, then confirmed."""
        when = START + timedelta(hours=h, minutes=23)
        rows = collections.defaultdict(list)
        run = self.next_id("runs")
        rows["runs"].append((run, "archive", _iso(when), "github-actions-eastus", settings.__version__, None,
                             self.settings_json))
        for article_id, _outlet in self.captured_last_hour:
            snapshot = self.article[article_id][7]
            url = self.article[article_id][1]
            job = hashlib.sha1(f"{snapshot}".encode()).hexdigest()[:24]
            r1 = self.request(rows, run, when, None, "archive", "https://web.archive.org/save", size=300,
                              ctype="application/json", method="POST")
            rows["archive_submissions"].append((self.next_id("archive_submissions"), snapshot, run, r1, "submit",
                                                url, _iso(when), f"spn2-{job}", "pending", None, None, None, None, None))
            r2 = self.request(rows, run, when, None, "archive", f"https://web.archive.org/save/status/spn2-{job}",
                              size=500, ctype="application/json")
            stamp = f"{when + timedelta(minutes=2):%Y%m%d%H%M%S}"
            rows["archive_submissions"].append((self.next_id("archive_submissions"), snapshot, run, r2, "status",
                                                url, _iso(when), f"spn2-{job}", "success", None, None, stamp, url,
                                                f"https://web.archive.org/web/{stamp}/{url}"))
        self._flush(rows)
        self._finish(run, when, rows, None)

    def _discover(self, rows, run, when, outlet, host, warc):
        for via, path in (("robots", "/sitemap.xml"), ("homepage_link", "/feed"), ("common_path", "/rss.xml"),
                          ("common_path", "/news_sitemap.xml")):
            url = f"https://{host}{path}"
            rid = self.request(rows, run, when, outlet, "discovery", url, size=150_000, ctype="application/xml",
                               warc=warc, kind="feed")
            probe = self.next_id("source_probes")
            rows["source_probes"].append((probe, run, outlet, url, via, rid, _iso(when), "valid", None, "rss"))
        for s in range(self.sources):
            rows["sources"].append((self.next_id("sources"), outlet, f"https://{host}/feed/{s}", "rss", "homepage_link",
                                    probe, run, _iso(when)))

    def _new_article(self, rows, run, when, outlet, host):
        number = self.next_id("article_numbers") + 1_000_000
        article_id = self.next_id("articles")
        url = self.corpus.address(host, number)
        title = " ".join(self.corpus.words(self.rng.randint(5, 11)))
        published = when - timedelta(minutes=self.rng.randint(1, 55))
        raw = (published + timedelta(hours=6)).strftime("%a, %d %b %Y %H:%M:%S +0600")
        self.article[article_id] = [outlet, url, title, raw, None, None, None, None, _iso(published)]
        self.stream[outlet].append(article_id)
        rows["articles"].append((article_id, outlet, url, url, _iso(when), run))
        rows["article_urls"].append((self.next_id("article_urls"), article_id, url, url, "listing", _iso(when), run, None))
        return article_id, outlet

    def _listings(self, rows, run, when, outlet, host, warc, new):
        for s in range(self.sources):
            subset = [a for a in self.stream[outlet][-self.entries * (s + 1):] if a % (s + 1) == 0][-self.entries:]
            subset.reverse()  # newest first, as feeds list
            rid = self.request(rows, run, when, outlet, "listing", f"https://{host}/feed/{s}", size=150_000,
                               ctype="application/rss+xml", warc=warc, kind="feed")
            listing = self.next_id("listings")
            rows["listings"].append((listing, run, outlet, f"https://{host}/feed/{s}", rid, None, _iso(when), "rss",
                                     len(subset)))
            for position, article_id in enumerate(subset):
                art = self.article[article_id]
                reason = "recent" if article_id in new else None
                new.discard(article_id)
                rows["listing_entries"].append((self.next_id("listing_entries"), listing, position, art[1], art[1],
                                                art[2], art[3], art[8], None, None, reason))
            self.counts["listing_entries"] += len(subset)

    def _capture(self, rows, run, when, article_id, outlet, warc):
        art = self.article[article_id]
        size = len(self.rng.choice(self.corpus.pages))
        rid = self.request(rows, run, when, outlet, "capture", art[1], size=size, warc=warc, kind="page")
        art[4] = self.corpus.text()
        art[5] = art[2]
        art[6] = " ".join(self.corpus.words(2))
        snapshot = self._snapshot(rows, run, when, article_id, rid, "capture", warc)
        art[7] = snapshot
        rows["capture_queue"].append((art[1], art[1], outlet, article_id, "recent", None, art[8], _iso(when), run,
                                      "captured", rid, _iso(when)))
        if self.rechecks:
            hour = (when - START) // timedelta(hours=1)
            for slot in settings.RECHECK_SCHEDULE_HOURS:
                self.due[hour + slot + 1].append((article_id, f"{slot}h"))

    def _snapshot(self, rows, run, when, article_id, rid, purpose, warc) -> int:
        art = self.article[article_id]
        sid = self.next_id("snapshots")
        rows["snapshots"].append((
            sid, article_id, rid, run, purpose, _iso(when), 200, art[1], art[5], art[6], art[3], "meta",
            art[8], None, None, None, art[4], art[1], "bn", "utf-8", "http-header", 0,
            # pages carry ads and clocks: the HTML differs at every fetch even when the text does not
            "%064x" % self.rng.getrandbits(256), warc, self.run_warc, int(self.warc_sizes["page"]),
            "sha1:%032X" % self.rng.getrandbits(160), "e7f3a1", self.extractor_info))
        return sid

    def _check(self, rows, run, when, article_id, slot, warc):
        art = self.article[article_id]
        roll = self.rng.random()
        if roll < 0.97:
            rid = self.request(rows, run, when, art[0], "recheck", art[1], size=len(self.rng.choice(self.corpus.pages)),
                               warc=warc, kind="page")
            snapshot, outcome, result = self._snapshot(rows, run, when, article_id, rid, "recheck", warc), "present", "ok"
        elif roll < 0.99:
            rid = self.request(rows, run, when, art[0], "recheck", art[1], result="timeout", status=None, size=0)
            snapshot, outcome, result = None, "inconclusive", "timeout"
        else:
            rid = self.request(rows, run, when, art[0], "recheck", art[1], result="not_found", status=404, size=2000,
                               warc=warc, kind="robots")
            snapshot, outcome, result = None, "absent", "not_found"
        due = datetime.fromisoformat(art[8]) + timedelta(hours=int(slot[:-1]))
        rows["checks"].append((self.next_id("checks"), article_id, slot, None, _iso(due), _iso(when), run, art[1],
                               result, rid, json.dumps([rid]), snapshot, outcome, int(outcome == "absent"), None))

    def _flush(self, rows) -> None:
        with self.store.transaction() as c:
            # Referenced tables first (a check can come before the hour's first snapshot it points at).
            for table in sorted(rows, key=ORDER.index):
                values = rows[table]
                cols = COLUMNS[table].split()
                c.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                              values)
                self.counts[table] += len(values) if table != "listing_entries" else 0

    def _finish(self, run, when, rows, warc) -> None:
        counts = {t: len(v) for t, v in rows.items()}
        with self.store.transaction() as c:
            c.execute("INSERT INTO run_finishes (run_id, finished_at, counts, warnings) VALUES (?, ?, ?, '[]')",
                      (run, _iso(when + timedelta(minutes=9)), json.dumps(counts, sort_keys=True)))
            if warc:
                size, self.run_warc = self.run_warc, 0
                c.execute("INSERT INTO warc_files (name, bytes, sha256, recorded_at, release_tag, asset_name) "
                          "VALUES (?, ?, ?, ?, ?, ?)",
                          (warc, size, hashlib.sha256(warc.encode()).hexdigest(), _iso(when),
                           export.release_tag(warc, when), warc.rsplit("/", 1)[1]))


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- WARC volume --------------------------------------------------------------------

def warc_bytes_per_exchange(corpus: Corpus, scratch: Path) -> dict[str, float]:
    """Return the mean gzip WARC bytes of one exchange (request + response records) per kind."""
    sizes = {}
    for kind, bodies, ctype in (("page", corpus.pages, "text/html; charset=utf-8"),
                                ("feed", corpus.feeds, "application/rss+xml"),
                                ("robots", corpus.robots, "text/plain")):
        log = WarcLog(scratch / kind, 1, START)
        before = log.path.stat().st_size
        for i in range(40):
            body = bodies[i % len(bodies)]
            log.write_exchange(url=f"https://www.example.com.bd/{kind}/{i}", method="GET",
                               request_headers=[("User-Agent", settings.USER_AGENT), ("Accept", "*/*")],
                               request_target=f"/{kind}/{i}", request_body=None, status_line="200 OK",
                               protocol="HTTP/1.1", response_headers=[("Content-Type", ctype),
                                                                       ("Content-Length", str(len(body)))],
                               body=body, ip="203.0.113.7", when=START)
        log.close()
        sizes[kind] = (log.path.stat().st_size - before) / 40
    return sizes


# -- git ------------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A", "data/record")
    if subprocess.run(["git", "diff", "--quiet", "--cached"], cwd=repo).returncode:
        git(repo, "commit", "-q", "-m", message)


def packed_by_day(repo: Path) -> tuple[int, dict[str, int]]:
    """Return (pack size after `git gc`, packed bytes of the export files by UTC day, 'other': commits and trees)."""
    git(repo, "gc", "-q")
    info = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    total = (int(info["size-pack"]) + int(info["size"])) * 1024
    paths = {}
    for line in git(repo, "rev-list", "--objects", "--all").splitlines():
        sha, _, path = line.partition(" ")
        paths[sha] = path
    by_day: dict[str, int] = collections.Counter()
    for index in (repo / ".git" / "objects" / "pack").glob("*.idx"):
        for line in git(repo, "verify-pack", "-v", str(index)).splitlines():
            parts = line.split()
            if len(parts) >= 5 and len(parts[0]) == 40 and parts[1] in ("blob", "tree", "commit"):
                match = re.match(r"data/record/(\d{4}/\d{2}/\d{2})/", paths.get(parts[0], ""))
                by_day[match.group(1) if match and parts[1] == "blob" else "other"] += int(parts[3])
    return total, by_day


def largest_file(root: Path) -> tuple[int, str]:
    best = (0, "")
    for path in root.rglob("*"):
        if path.is_file():
            best = max(best, (path.stat().st_size, path.relative_to(root).as_posix()))
    return best


# -- main -----------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--outlets", type=int, default=40, help="outlets the figures are for")
    parser.add_argument("--simulate", type=int, default=2,
                        help="outlets actually simulated; figures are scaled by outlets/simulate (every "
                             "outlet's rows and files are independent, so size grows linearly with outlets)")
    parser.add_argument("--per-day", type=int, default=100, help="new articles per outlet per day")
    parser.add_argument("--sources", type=int, default=3, help="sources read per outlet per run")
    parser.add_argument("--entries", type=int, default=100, help="entries per listing")
    parser.add_argument("--no-rechecks", dest="rechecks", action="store_false",
                        help="leave out revisits (settings.RECHECK_SCHEDULE_HOURS)")
    parser.add_argument("--commit", choices=("daily", "hourly"), default="daily",
                        help="commit after every simulated day (default, faster) or hour (as the workflow)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    scale = args.outlets / args.simulate

    started = time.monotonic()
    rng = random.Random(args.seed)
    work = args.keep or Path(tempfile.mkdtemp(prefix="storage-growth-"))
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "gc.auto", "0")
    record = repo / "data" / "record"
    db_path = work / "takedownwatch.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    corpus = Corpus(rng)
    per_kind = warc_bytes_per_exchange(corpus, work / "warc-sample")
    store = Store(db_path)
    sim = Simulation(store, corpus, args.simulate, args.per_day, args.sources, args.entries, args.rechecks, rng,
                     per_kind)
    print(f"simulating {args.days} days x 24 hourly collect runs + 24 archive runs, {args.simulate} outlets "
          f"(figures scaled x{scale:g} to {args.outlets}), {args.per_day} new articles/outlet/day, "
          f"{args.sources} sources x {args.entries} entries, rechecks {'on' if args.rechecks else 'off'}, "
          f"commit {args.commit}; work folder {work}", flush=True)

    export_seconds = 0.0
    db_before = (0, 0)
    saved = work / "saved.db"  # the database as the last job of the run saved it to the Actions cache
    for day in range(args.days):
        for hour in range(24):
            h = day * 24 + hour
            if h == args.days * 24 - 1:
                store.checkpoint()
                shutil.copyfile(db_path, saved)
            sim.hour(h)
            t = time.monotonic()
            export.export_new(store, record, now=START + timedelta(hours=h, minutes=10))
            sim.archive_hour(h)
            export.export_new(store, record, now=START + timedelta(hours=h, minutes=30))
            export_seconds += time.monotonic() - t
            if args.commit == "hourly":
                commit(repo, f"record {h}")
        if args.commit == "daily":
            commit(repo, f"record day {day + 1}")
        if (day + 1) % 5 == 0 or day + 1 == args.days:
            print(f"  day {day + 1:>3} simulated ({time.monotonic() - started:4.0f} s)", flush=True)
        if day + 1 == max(1, args.days - 10):
            store.checkpoint()
            db_before = (day + 1, db_path.stat().st_size)

    store.checkpoint()
    files = folder.batches(record)
    size_files = sum(p.stat().st_size for p in files)
    size_text = sum(len(fileformat.read_text(p).encode("utf-8")) for p in files)
    largest, largest_name = largest_file(record)
    rows = {t: store.one(f"SELECT COUNT(*) FROM {t}")[0] for t in
            ("listing_entries", "requests", "snapshots", "checks", "capture_queue", "archive_submissions")}
    db_size = db_path.stat().st_size
    store.close()
    t = time.monotonic()
    resumed_files, _ = resume(record, saved)
    resume_seconds = time.monotonic() - t
    t = time.monotonic()
    rebuilding.rebuild(record, work / "rebuilt.db")
    rebuild_seconds = time.monotonic() - t
    per_check = recheck_cost(files[-min(len(files), 480):])
    warc_total, warc_largest = warc_volume(db_path)
    t = time.monotonic()
    packed, by_day = packed_by_day(repo)
    gc_seconds = time.monotonic() - t
    days = sorted(k for k in by_day if k != "other")
    tail = days[-min(10, len(days)):]
    overhead_per_day = by_day["other"] / max(len(days), 1)
    late = (sum(by_day[d] for d in tail) / len(tail) + overhead_per_day) * scale
    month = packed * scale
    projected = month + late * (365 - args.days)
    # The 2160 h slot first falls due on day 90: from then on one more revisit per article a day
    # (the 8760 h slot falls due on day 365, outside the first year).
    extra_slot = (args.per_day * args.outlets * per_check * max(0, 365 - max(90, args.days))
                  if args.rechecks and per_check else 0)

    mib, gib = 2**20, 2**30
    print()
    print(f"repository after git gc: {month / mib:.0f} MiB after {args.days} days "
          f"({packed / mib:.1f} MiB simulated x{scale:g})")
    print(f"growth per day: {month / args.days / mib:.1f} MiB on average, {late / mib:.1f} MiB/day over the "
          f"last {len(tail)} days (packed bytes of each day's files, from git verify-pack)")
    print(f"projected after 365 days: {projected / gib:.2f} GiB (month + {365 - args.days} days at the last rate)")
    if extra_slot:
        print(f"  with the 2160 h revisit slot, due from day 90 (one more revisit per article a day, "
              f"{per_check / 1024:.2f} KiB each as measured): {(projected + extra_slot) / gib:.2f} GiB; "
              "the 8760 h slot first falls due on day 365")
    print(f"export files: {len(files)} ({len(files) / args.days:.0f} a day), {size_files / mib * scale:.0f} MiB "
          f"as stored (bzip2; {size_text / mib * scale:.0f} MiB of JSON lines); largest "
          f"{largest / mib:.2f} MiB simulated ({largest_name}), about {largest / mib * scale:.1f} MiB at "
          f"{args.outlets} outlets (GitHub refuses files over 100 MiB)")
    print(f"rows after {args.days} days (simulated): " + ", ".join(f"{k} {v:,}" for k, v in rows.items()))
    db_late = (db_size - db_before[1]) / max(1, args.days - db_before[0]) * scale  # bytes a day, lately
    db_year = db_size * scale + db_late * (365 - args.days)
    print(f"SQLite database (not committed; kept in the Actions cache): {db_size * scale / gib:.1f} GiB after "
          f"{args.days} days (search index included), growing {db_late / gib:.2f} GiB a day over the last "
          f"{args.days - db_before[0]} days: about {db_year / gib:.0f} GiB after a year; 14 GiB (a hosted "
          f"runner's documented disk) around day {args.days + max(0, 14 * gib - db_size * scale) / db_late:.0f}"
          if db_late > 0 else f"SQLite database: {db_size * scale / gib:.1f} GiB after {args.days} days")
    print(f"WARC files (release assets, not committed): {warc_total * scale / args.days / gib:.2f} GiB/day, "
          f"about {warc_total * scale / args.days * 365 / 2**40:.2f} TiB a year; largest run file "
          f"{warc_largest * scale / mib:.0f} MiB (asset limit 2 GiB); per exchange "
          f"{', '.join(f'{k} {v / 1024:.1f} KiB' for k, v in per_kind.items())} (warcio, real files)")
    print(f"bringing the database in sync with the record: a job resuming the cache reads {resumed_files} "
          f"file(s) in {resume_seconds:.2f} s simulated, about {resume_seconds * scale:.0f} s at "
          f"{args.outlets} outlets, whatever the record's age; a full rebuild (cache lost) read {len(files)} files in "
          f"{rebuild_seconds:.0f} s simulated, about {rebuild_seconds * scale / 60:.0f} min at {args.outlets} "
          f"outlets after {args.days} days and {rebuild_seconds * scale / args.days * 365 / 3600:.1f} h after "
          "a year (grows with the record)")
    print(f"time {time.monotonic() - started:.0f} s (export {export_seconds:.0f} s, git gc {gc_seconds:.0f} s)")
    if not args.keep:
        shutil.rmtree(work)


def recheck_cost(files: list[Path]) -> float:
    """Return the stored bytes of one revisit (its check, request and snapshot rows), compressed as exported."""
    import bz2

    lines, checks = [], 0
    for path in files:
        for line in fileformat.read_text(path).splitlines()[1:]:
            row = json.loads(line)
            values = row.get("r") or {}
            if row["t"] == "checks":
                checks += 1
                lines.append(line)
            elif row["t"] in ("requests", "snapshots") and values.get("purpose") == "recheck":
                lines.append(line)
    return len(bz2.compress("\n".join(lines).encode("utf-8"), 9)) / checks if checks else 0.0


def warc_volume(db_path: Path) -> tuple[int, int]:
    """Return (total, largest) bytes of the WARC files the record lists."""
    import sqlite3

    conn = sqlite3.connect(str(db_path))
    try:
        total, largest = conn.execute("SELECT SUM(bytes), MAX(bytes) FROM warc_files").fetchone()
        return total or 0, largest or 0
    finally:
        conn.close()


if __name__ == "__main__":
    main()
