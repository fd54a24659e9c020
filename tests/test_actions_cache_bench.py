"""bench/actions_cache.py: GitHub's 10 GB Actions cache under the workflows' schedule, with and without the prune."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from actions_cache import ActionsCache, simulate  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_the_cache_evicts_the_least_recently_used_and_a_restore_older_than_the_last_save_is_a_miss():
    cache = ActionsCache(budget=10, prune=False)
    a = cache.save("a-", 4, T0, None)
    cache.save("b-", 4, T0 + timedelta(minutes=1), None)
    assert cache.restore("a-", T0 + timedelta(minutes=2)) == a  # a is now the most recently used
    cache.save("c-", 4, T0 + timedelta(minutes=3), None)        # 12 > 10: b goes, not a
    assert set(cache.entries) == {a, "c-3-1"} and cache.evicted == 1 and cache.peak == 8
    assert cache.restore("b-", T0 + timedelta(minutes=4)) is None and cache.misses == [("b-", "b-2-1", None)]


def test_without_the_prune_a_job_misses_its_entry_under_the_budget_and_with_it_none_does():
    # One day of the workflows' schedule, the databases as large as a two-year period makes them at day 365.
    without = simulate(days=1, from_day=365, prune=False, period_days=730)
    assert without.misses and without.evicted > len(without.misses)
    assert {prefix for prefix, _, _ in without.misses} == {"record-archive-"}  # the hourly job's entry goes
    pruned = simulate(days=1, from_day=365, prune=True, period_days=730)
    assert pruned.misses == [] and pruned.evicted == 0
    assert pruned.restores == without.restores and pruned.peak < without.peak <= without.budget
    # What is left: one entry of each prefix, the newest.
    assert sorted(k.rsplit("-", 2)[0] for k in pruned.entries) == ["record-archive", "record-db", "record-follow"]
