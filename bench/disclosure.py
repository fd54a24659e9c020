"""The cost of disclosure control at the real registry's size: a release a week, then a full audit.

    .venv/bin/python bench/disclosure.py             # 13 weeks, 41 outlets in groups of 18/8/7/5/3
    .venv/bin/python bench/disclosure.py --weeks 5   # a quick look

No network. A synthetic record (testing/synthetic.py) of the real registry's
group sizes: two Bangla dailies with no readable source (silent every week), one
news agency silent every third week, one broadcaster making most of its
group's captures in one week, and counts that rise and fall. The site is then
released as the hourly workflow would, once a week, each release deciding the
week (and a month with its last week) against everything published before,
and the whole published history is audited at the end. Prints the seconds each
release took, the audit's seconds, and how much was withheld.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.publish.audit import audit_history  # noqa: E402
from collector.publish.history import History  # noqa: E402
from collector.publish.periods import week_start  # noqa: E402
from collector.publish.release import WITHHELD, release  # noqa: E402
from collector.record.store import Store  # noqa: E402
from testing.synthetic import NOW, SyntheticRecord, week_day  # noqa: E402

SIZES = {"bn-dailies": 18, "en-dailies": 8, "online-portals": 7, "broadcasters": 5, "news-agencies": 3}


def build(store: Store, weeks: int) -> None:
    """Insert the record: every outlet's captures week by week, with the silences and the dominance."""
    r = SyntheticRecord(store)
    first = week_start(NOW) - timedelta(days=7 * (weeks - 1))
    for group, size in SIZES.items():
        r.group(group)
        for i in range(1, size + 1):
            outlet = f"{group[:2]}{i}"
            r.outlet(outlet, group)
            if group == "bn-dailies" and i > 16:
                continue  # no readable source: never captures
            r.source(outlet, first + timedelta(hours=1))
            for w in range(weeks):
                if group == "news-agencies" and i == 3 and w % 3 == 1:
                    continue
                count = 4 + (w * 7 + i) % 5 + (30 if group == "broadcasters" and i == 1 and w == 2 else 0)
                for n in range(count):
                    at = week_day(first + timedelta(days=7 * w), n % 5, 6 + n % 12)
                    if at < NOW - timedelta(hours=2):
                        r.article(outlet, at, archived=(n + w) % 9 != 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "record.db")
        started = time.perf_counter()
        build(store, args.weeks)
        print(f"record: {sum(SIZES.values())} outlets, {args.weeks} weeks, "
              f"{store.one('SELECT COUNT(*) FROM articles')[0]} articles ({time.perf_counter() - started:.0f} s)")
        moment = week_start(NOW) - timedelta(days=7 * (args.weeks - 2)) + timedelta(hours=25)
        seconds = []
        while moment <= NOW + timedelta(days=6):
            history = History.open(Path(tmp) / "published", Path(tmp) / "decisions")
            started = time.perf_counter()
            out = release(store, moment, history)
            if out.periods:
                seconds.append(time.perf_counter() - started)
                print(f"  release {moment:%Y-%m-%d}: {', '.join(out.periods)} in {seconds[-1]:.1f} s"
                      + ("" if out.appended else f" (refused: {out.audit.summary()})"))
            moment += timedelta(days=7)
        history = History.open(Path(tmp) / "published", Path(tmp) / "decisions")
        started = time.perf_counter()
        result = audit_history(history)
        audit_seconds = time.perf_counter() - started
        cells = [(line["period"], g) for line in history.published.lines for g in line["figures"]]
        withheld = [(line["period"], g) for line in history.published.lines for g, f in line["figures"].items()
                    if f["articles_captured"] == WITHHELD]
        for line in history.published.lines:
            hidden = [g for p, g in withheld if p == line["period"]]
            if hidden:
                print(f"  {line['period']}: withheld {', '.join(hidden)}")
        print(f"releases: {len(seconds)}, slowest {max(seconds):.1f} s, mean {sum(seconds) / len(seconds):.1f} s")
        print(f"audit of the whole history: {result.counts_checked} protected counts in {result.months} months, "
              f"{audit_seconds:.1f} s, {'passed' if result.passed else 'FAILED'}")
        print(f"cells withheld: {len(withheld)} of {len(cells)} "
              f"({sum(1 for _, g in withheld if g == 'all-outlets')} of them the all-outlets total)")


if __name__ == "__main__":
    main()
