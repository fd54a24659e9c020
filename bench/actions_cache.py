"""GitHub's Actions cache as the jobs meet it: 10 GB a repository, least recently used entries evicted beyond it.

What GitHub documents ("Usage limits and eviction policy", docs.github.com/en/actions/reference/
workflows-and-actions/dependency-caching; @actions/cache's README): "the total size of all caches in a
repository is limited to 10 GB. If you exceed this limit, GitHub will save your cache but will begin
evicting caches until the total size is less than 10 GB", least recently used first. A restore with
restore-keys finds the exact key, else the newest entry whose key starts with the prefix (actions/cache
README, "restore-keys ... the most recently created cache that matches"), and counts as an access.

Each job restores its stream's prefix, saves under a new key (run id and attempt) after its steps
succeeded and then, with pruning, deletes what .github/scripts/prune_cache.py's `superseded` names
(the very function the workflows run). A miss is a restore that found nothing, or an entry older
than the last save of its prefix: that job rebuilds from the record.

The entries' sizes are the databases' measured sizes at 40 outlets, the largest between two prunings
("4 hours later"), uncompressed (actions/cache stores a zstd tar: an upper bound), read off the
README's tables: the working database (`bench/working_db.py --days 730 --outlets 40 100 --prune-on
729`), the pages job's follower (`bench/follower_db.py --days 730 --outlets 40 100`), and the archive
job's follower (`bench/follower_db.py --days 400 --outlets 40 --archive`: 2.14 GiB at most by day 365,
scaled over the days as the pages follower grows). A follower follows its period's record repository
alone (README, "Following every stream": the workflows roll the record over every
settings.RECORD_REPOSITORY_MONTHS months), so its size is the one of its day within the period; the
working database's is taken at the day itself (it keeps a year's window whatever the period).
`--period-days 730` gives the bench's single period of two years, the worst case.

    .venv/bin/python bench/actions_cache.py --days 3 --from-day 729 [--no-prune] [--period-days N]

prints the peak cache use and the misses of three days of the workflows' schedules (collect at its
cron minutes, archive hourly, pages after every collect run) starting at day 729 of a period.
"""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector import settings

ROOT = Path(__file__).resolve().parent.parent
GIB = 1024**3
# day -> GiB at 40 outlets, the largest between two prunings (README tables, see the docstring).
WORKING = {0: 0.0, 30: 0.36, 100: 0.68, 200: 1.09, 365: 1.75, 500: 1.80, 729: 1.84}
PAGES = {0: 0.0, 30: 0.59, 100: 1.00, 200: 1.48, 365: 2.23, 500: 2.36, 730: 2.56}
ARCHIVE_OF_PAGES = 2.14 / 2.23  # the archive follower's largest by day 365 against the pages follower's
PREFIXES = {"collect": "record-db-", "archive": "record-archive-", "pages": "record-follow-"}


def _script():
    spec = importlib.util.spec_from_file_location("prune_cache", ROOT / ".github" / "scripts" / "prune_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PRUNE = _script()
BUDGET_BYTES = PRUNE.BUDGET_BYTES


def _at(table: dict[int, float], day: float) -> float:
    days = sorted(table)
    day = min(max(day, days[0]), days[-1])
    for low, high in zip(days, days[1:]):
        if low <= day <= high:
            return table[low] + (table[high] - table[low]) * (day - low) / (high - low)
    return table[days[-1]]


PERIOD_DAYS = round(settings.RECORD_REPOSITORY_MONTHS * 365.25 / 12)


def size(kind: str, day: float, period_days: int = PERIOD_DAYS) -> int:
    """Return the bytes of `kind`'s cache entry (collect, archive, pages) on `day`, at 40 outlets."""
    if kind == "collect":
        return int(_at(WORKING, day) * GIB)
    pages = _at(PAGES, day % period_days)
    return int((pages * ARCHIVE_OF_PAGES if kind == "archive" else pages) * GIB)


@dataclass
class Entry:
    id: int
    key: str
    size: int
    created: datetime
    accessed: datetime

    def json(self) -> dict:
        stamp = lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"  # noqa: E731
        return {"id": self.id, "key": self.key, "size_in_bytes": self.size,
                "created_at": stamp(self.created), "last_accessed_at": stamp(self.accessed)}


class ActionsCache:
    """One repository's cache: entries by key, the budget, eviction, and what each restore missed."""

    def __init__(self, budget: int = BUDGET_BYTES, prune: bool = True):
        self.budget, self.pruning = budget, prune
        self.entries: dict[str, Entry] = {}
        self.last_saved: dict[str, str] = {}
        self.peak = self.evicted = self.restores = 0
        self.misses: list[tuple[str, str, str | None]] = []  # (prefix, the key it needed, the key it got)
        self._ids = 0

    def used(self) -> int:
        return sum(e.size for e in self.entries.values())

    def restore(self, prefix: str, now: datetime) -> str | None:
        """Return the key a restore of `prefix` finds (the newest entry of it), noting a miss."""
        self.restores += 1
        found = max((e for e in self.entries.values() if e.key.startswith(prefix)),
                    key=lambda e: (e.created, e.id), default=None)
        if found is not None:
            found.accessed = now
        wanted = self.last_saved.get(prefix)
        if wanted is not None and (found is None or found.key != wanted):
            self.misses.append((prefix, wanted, found.key if found else None))
        return found.key if found else None

    def save(self, prefix: str, size: int, now: datetime, restored: str | None, prune: bool | None = None) -> str:
        """Save a new entry of `prefix`, evict beyond the budget, then prune (unless `prune` is False); return its key.

        bench/runner.py saves with prune=False and prunes in the workflow's own prune step (`prune`).
        """
        self._ids += 1
        key = f"{prefix}{self._ids}-1"
        self.entries[key] = Entry(self._ids, key, size, now, now)
        self.last_saved[prefix] = key
        while self.used() > self.budget:  # GitHub saves it, then evicts the least recently used
            oldest = min(self.entries.values(), key=lambda e: (e.accessed, e.id))
            del self.entries[oldest.key]
            self.evicted += 1
        self.peak = max(self.peak, self.used())
        if self.pruning if prune is None else prune:
            self.prune(prefix, key, restored, now)
        return key

    def prune(self, prefix: str, saved: str, restored: str | None, now: datetime) -> None:
        """Delete the entries the save of `saved` supersedes, by the workflows' own rule (prune_cache.py)."""
        listed = [e.json() for e in self.entries.values()]
        for gone in PRUNE.superseded(listed, prefix, saved, restored or "", now):
            del self.entries[gone["key"]]


def simulate(days: float, from_day: float, prune: bool, budget: int = BUDGET_BYTES,
             scale: float = 1.0, pages_every: int = 1, period_days: int = PERIOD_DAYS) -> ActionsCache:
    """Run the workflows' schedule for `days` from `from_day` of a period against one cache; return it.

    collect at 7, 22, 37 and 52 minutes past each hour (its cron), pages after every `pages_every`th
    collect run (its workflow_run), archive at 47 (its cron); each job restores at its start and saves
    a few minutes later (collect 10, pages 5, archive 30), in time order. `scale` multiplies the sizes.
    """
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    events = []  # (time, kind, "restore"|"save")
    for hour in range(int(days * 24)):
        at = start + timedelta(hours=hour)
        for n, minute in enumerate((7, 22, 37, 52)):
            events += [(at + timedelta(minutes=minute), "collect", 0), (at + timedelta(minutes=minute + 10), "collect", 1)]
            if (hour * 4 + n) % pages_every == 0:
                events += [(at + timedelta(minutes=minute + 11), "pages", 0), (at + timedelta(minutes=minute + 16), "pages", 1)]
        events += [(at + timedelta(minutes=47), "archive", 0), (at + timedelta(minutes=77), "archive", 1)]
    cache, restored = ActionsCache(budget, prune), {}
    for when, kind, phase in sorted(events):
        prefix = PREFIXES[kind]
        if phase == 0:
            restored[kind] = cache.restore(prefix, when)
        else:
            day = from_day + (when - start).total_seconds() / 86400
            cache.save(prefix, int(size(kind, day, period_days) * scale), when, restored.pop(kind, None))
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=3)
    parser.add_argument("--from-day", type=float, default=729, help="the period's day the schedule starts on")
    parser.add_argument("--period-days", type=int, default=PERIOD_DAYS, help="a record repository's days")
    parser.add_argument("--no-prune", action="store_true", help="the workflows as they were: nothing deleted")
    args = parser.parse_args()
    cache = simulate(args.days, args.from_day, not args.no_prune, period_days=args.period_days)
    print(f"{'without' if args.no_prune else 'with'} pruning, {args.days:g} days from day {args.from_day:g} "
          f"({args.period_days}-day periods) at 40 outlets: peak cache use {cache.peak / 1e9:.2f} GB of {BUDGET_BYTES / 1e9:.0f} GB "
          f"({cache.peak / GIB:.2f} GiB); {cache.restores} restores, {len(cache.misses)} missed the entry "
          f"last saved; {cache.evicted} entries evicted by GitHub")


if __name__ == "__main__":
    main()
