"""The published history as the site and `stats.json` show it: per group, per period, plus whole-record sums.

Nothing here is computed from the record: every figure is read from the
published lines, and the whole-record figures are sums of published weeks
only (counts of articles and requests, and the rates of those sums) and of
published months (requests by result). A group's whole-record sum leaves out
its withheld weeks, and says how many weeks it covers.
"""

from __future__ import annotations

from collector import settings
from collector.publish.cells import ADDITIVE
from collector.publish.figures import MEDIAN, RATES, TOTAL_ID, TOTAL_NAMES, ratio

WITHHELD = {"withheld": True}
ALL = "all"


def is_number(value) -> bool:
    """Return True for a published number (not the withheld marker, not None)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def publication(lines: list[dict]) -> dict:
    """Return the document the site renders and `stats.json` holds, from the published lines alone."""
    groups: dict[str, dict] = {}
    for line in lines:
        for group in line["groups"]:
            groups[group["id"]] = {k: group[k] for k in ("id", "name", "name_bn")}
    groups[TOTAL_ID] = {"id": TOTAL_ID, "name": TOTAL_NAMES[0], "name_bn": TOTAL_NAMES[1]}
    figures: dict[str, dict] = {gid: {} for gid in groups}
    periods = []
    for line in lines:
        periods.append({"id": line["period"], "kind": line["kind"], "month": line["month"],
                        "weeks": line["weeks"], "start": line["start"], "end": line["end"],
                        "published_at": line["published_at"],
                        "members": {g["id"]: [o["name"] for o in g["outlets"]] for g in line["groups"]}})
        for gid, shown in line["figures"].items():
            figures[gid][line["period"]] = shown
    results = sorted({r for line in lines for r in line["results"]})
    for gid in groups:
        figures[gid][ALL] = _whole_record(lines, gid, results)
    weeks = [p["id"] for p in periods if p["kind"] == "week"]
    months = [p["id"] for p in periods if p["kind"] == "month"]
    last = lines[-1] if lines else None
    return {
        "published_at": last["published_at"] if last else None,
        "software_version": settings.__version__,
        "rules": last["rules"] if last else {"min_outlets_per_figure": settings.MIN_OUTLETS_PER_FIGURE,
                                             "dominance_share": settings.DOMINANCE_SHARE},
        "latest": {"week": weeks[-1] if weeks else None, "month": months[-1] if months else None},
        "periods": periods,
        "groups": [g for gid, g in groups.items() if gid != TOTAL_ID] + [groups[TOTAL_ID]],
        "results": results,
        "figures": figures,
    }


def _whole_record(lines: list[dict], gid: str, results: list[str]) -> dict:
    """Return a group's whole-record figures: sums over its published weeks (and months, for results)."""
    shown_weeks = [line["figures"][gid] for line in lines
                   if line["kind"] == "week" and gid in line["figures"]]
    published = [f for f in shown_weeks if is_number(f.get("articles_captured"))]
    out: dict = {"weeks_published": len(published), "weeks_withheld": len(shown_weeks) - len(published)}
    members = [line["figures"][gid]["outlets_monitored"] for line in lines if gid in line["figures"]]
    out["outlets_monitored"] = members[-1] if members else 0
    for measure in ADDITIVE:
        out[measure] = sum(f[measure] for f in published) if published else None
    for measure, top, bottom in RATES:
        out[measure] = ratio(out[top] or 0, out[bottom] or 0) if published else None
    out[MEDIAN] = None
    months = [line["figures"][gid] for line in lines if line["kind"] == "month" and gid in line["figures"]]
    open_months = [f for f in months if any(is_number(v) for k, v in f.items() if k.startswith("requests:"))]
    total = sum(f["requests"] for f in open_months)
    for result in results:
        count = sum(f.get(f"requests:{result}", 0) for f in open_months)
        out[f"requests:{result}"] = count if open_months else None
        out[f"share:{result}"] = ratio(count, total) if open_months else None
    out["requests_by_result"] = total if open_months else None
    return out


def format_stats_text(pub: dict) -> str:
    """Return the published figures as a plain-text table: the whole record, the latest month and week."""
    lines = [f"Coverage figures published up to {pub['published_at'] or 'nothing yet'} "
             f"(Takedown Watch {pub['software_version']})",
             f"Figures are withheld where fewer than {pub['rules']['min_outlets_per_figure']} outlets "
             "contribute, one outlet dominates, or to protect another withheld figure."]
    names = {g["id"]: g["name"] for g in pub["groups"]}
    columns = ["outlets_monitored", "outlets_contributing", "sources_readable", "articles_listed",
               "articles_queued", "articles_captured", "articles_archived", "capture_rate", "archive_rate",
               MEDIAN]
    for period_id in (ALL, pub["latest"]["month"], pub["latest"]["week"]):
        if period_id is None:
            continue
        lines += ["", f"== {period_id} =="]
        header = ["group"] + columns
        rows = [[names[g]] + [_text_value(pub["figures"][g].get(period_id, {}).get(c)) for c in columns]
                for g in names]
        widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
        for row in [header] + rows:
            lines.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    weeks = [p["id"] for p in pub["periods"] if p["kind"] == "week"]
    lines += ["", "== weekly articles captured =="]
    for group_id, name in names.items():
        series = ", ".join(f"{w}: {_text_value(pub['figures'][group_id].get(w, {}).get('articles_captured'))}"
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
