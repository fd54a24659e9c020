"""Coverage figures by group of outlets and period, before and after disclosure control.

`compute_stats` gives the full internal table: every figure with the outlet
ids it sums over and the atoms (outlet x time cell x category) it is made of.
It is for the disclosure control and its audit only and is never published.
`stats_for_publication` gives what may be published: disclosure-controlled,
without a single outlet id. `format_stats_text` renders that as a plain table.

Definitions, per group and period (the whole record "all", the last 7 and 30
days, each ISO week in UTC):
outlets monitored: active outlets of the group now (the registry);
outlets contributing: outlets with a 'capture' snapshot in the period;
sources readable: outlets whose latest discovery round by the period's end
validated a source; articles listed: distinct url_keys in listings fetched in
the period; articles queued: capture_queue rows queued in it; articles
captured: articles whose first capture falls in it (so weeks add up to the
record); articles archived: those of them with a successful, timestamped
Internet Archive submission; median delay: first listing of the article's
addresses to first capture, in hours; requests: requests with an outlet
(archive submissions have none), by result for the record and the windows.
Outlets removed from the registry still count for what they contributed.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import datetime

from collector import settings
from collector.clock import iso
from collector.publish.cells import TIME_ADDITIVE, TOTAL_ID, Record, read_record
from collector.publish.periods import period_cell
from collector.record.store import Store

# The counts of the overview, in the order they are shown: (measure, family).
COUNTS = (
    ("outlets_contributing", "outlets_contributing"),
    ("sources_readable", "sources_readable"),
    ("articles_listed", "articles_listed"),
    ("articles_queued", "articles_queued"),
    ("articles_captured", "articles_captured"),
    ("articles_archived", "articles_archived"),
    ("requests", "requests"),
)
# Figures computed from counts: (measure, numerator, denominator).
RATES = (
    ("capture_rate", "articles_captured", "articles_queued"),
    ("archive_rate", "articles_archived", "articles_captured"),
)


def compute_stats(store: Store, now: datetime) -> dict:
    """Return every figure by group and period, with the outlets and atoms it sums over (internal)."""
    record = read_record(store, now)
    groups = record.groups + [_total_group(record.groups)]
    periods = record.timeline.periods
    figures = []
    for group in groups:
        members = set(group["members"])
        index = _index_atoms(record, members)
        for period in periods:
            figures.extend(_figures_of(record, index, group, members, period))
    return {
        "now": iso(now),
        "software_version": settings.__version__,
        "cells": [[iso(a), iso(b)] for a, b in record.timeline.cells],
        "periods": [{"id": p.id, "kind": p.kind, "start": iso(p.start), "end": iso(p.end),
                     "cells": list(p.cells)} for p in periods],
        "groups": groups,
        "results": record.results,
        "atoms": {family: [[o, c, k, v] for (o, c, k), v in sorted(atoms.items(), key=str)]
                  for family, atoms in record.atoms.items()},
        "figures": figures,
    }


def stats_for_publication(store: Store, now: datetime) -> dict:
    """Return the disclosure-controlled figures, audited, with no outlet ids (raises DisclosureError)."""
    from collector.publish.disclosure import protect

    return protect(compute_stats(store, now))


def _total_group(groups: list[dict]) -> dict:
    """Return the pseudo-group of every outlet."""
    return {"id": TOTAL_ID, "name": "All outlets", "name_bn": "সব সংবাদমাধ্যম",
            "members": sorted(o for g in groups for o in g["members"]),
            "active": sorted(o for g in groups for o in g["active"])}


def _index_atoms(record: Record, members: set) -> dict:
    """Return the members' atoms indexed by (family, cell, category) and (family, cell, None)."""
    index: dict = defaultdict(list)
    for family, atoms in record.atoms.items():
        for (outlet, cell, category), value in atoms.items():
            if outlet in members:
                index[(family, cell, None)].append((outlet, value))
                index[(family, cell, category)].append((outlet, value))
    for (outlet, cell), delays in record.delays.items():
        if outlet in members:
            index[("delays", cell)].extend(delays)
    return index


def _cell_keys(family: str, period) -> list:
    """Return the cells a family's figure for a period sums over."""
    return list(period.cells) if family in TIME_ADDITIVE else [period_cell(period.id)]


def _figures_of(record: Record, index: dict, group: dict, members: set, period) -> list[dict]:
    """Return the counts, request results, rates and median of one group in one period."""
    base = {"group": group["id"], "period": period.id}
    out = [dict(base, measure="outlets_monitored", family=None, category=None,
                value=len(group["active"]), outlets=sorted(group["active"]))]
    counts: dict[str, dict] = {}
    for measure, family in COUNTS:
        counts[measure] = _sum(index, family, period, members, None)
    # Request results are broken down for the whole record and the windows only: weekly
    # counts of rare results would mostly be withheld and multiply the combinations to audit.
    results = record.results if period.kind != "week" else []
    for result in results:
        counts[f"requests:{result}"] = _sum(index, "requests", period, members, result)
    for measure, per_outlet in counts.items():
        family = measure.split(":")[0]
        category = measure.split(":", 1)[1] if ":" in measure else None
        out.append(dict(base, measure=measure, family=family, category=category,
                        value=sum(per_outlet.values()), outlets=sorted(per_outlet)))
    for measure, top, bottom in RATES:
        out.append(dict(base, measure=measure, family=None, category=None, requires=[top, bottom],
                        value=_ratio(counts[top], counts[bottom]), outlets=sorted(counts[top])))
    for result in results:
        top = f"requests:{result}"
        out.append(dict(base, measure=f"share:{result}", family=None, category=None,
                        requires=[top, "requests"], value=_ratio(counts[top], counts["requests"]),
                        outlets=sorted(counts[top])))
    out.append(dict(base, measure="median_delay_hours", family=None, category=None,
                    requires=["articles_captured"], outlets=sorted(counts["articles_captured"]),
                    value=_median_delay(index, period)))
    return out


def _sum(index: dict, family: str, period, members: set, category: str | None) -> dict[str, int]:
    """Return per-outlet totals of a family over a period (non-zero outlets only)."""
    totals: dict[str, int] = defaultdict(int)
    for cell in _cell_keys(family, period):
        for outlet, value in index.get((family, cell, category), ()):
            totals[outlet] += value
    return {o: v for o, v in totals.items() if v}


def _ratio(top: dict[str, int], bottom: dict[str, int]) -> float | None:
    """Return sum(top) / sum(bottom) rounded for publication, or None without a denominator."""
    denominator = sum(bottom.values())
    return round(sum(top.values()) / denominator, 4) if denominator else None


def _median_delay(index: dict, period) -> float | None:
    """Return the median hours from first listing to first capture of the period's captures."""
    delays = [d for cell in period.cells for d in index.get(("delays", cell), ())]
    return round(statistics.median(delays), 1) if delays else None


def format_stats_text(pub: dict) -> str:
    """Return the published figures as a plain-text table, one block per summary period."""
    lines = [f"Coverage figures as of {pub['now']} (Takedown Watch {pub['software_version']})",
             f"Figures are withheld where fewer than {pub['rules']['min_outlets_per_figure']} "
             "outlets contribute or one outlet dominates."]
    names = {g["id"]: g["name"] for g in pub["groups"]}
    columns = [m for m, _ in COUNTS] + [m for m, _, _ in RATES] + ["median_delay_hours"]
    for period_id in ("all", "30d", "7d"):
        lines += ["", f"== {period_id} =="]
        header = ["group"] + columns
        rows = [[names[g]] + [_text_value(pub["figures"][g][period_id].get(c)) for c in columns]
                for g in names]
        widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
        for row in [header] + rows:
            lines.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    lines += ["", "== weekly articles captured =="]
    for group_id, name in names.items():
        weeks = [p["id"] for p in pub["periods"] if p["kind"] == "week"]
        series = ", ".join(f"{w}: {_text_value(pub['figures'][group_id][w].get('articles_captured'))}"
                           for w in weeks)
        lines.append(f"{name}: {series}")
    return "\n".join(lines) + "\n"


def _text_value(value) -> str:
    """Return one published value as short text ('withheld', '-', a number)."""
    if isinstance(value, dict) and value.get("withheld"):
        return "withheld"
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
