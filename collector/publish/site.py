"""The static site: coverage overview, method and outlet list, in English and Bangla.

Every figure on it is read from the published history (history.py: closed
periods only, each decided once, disclosure-controlled and audited), never
from the record; every number in the method comes from the settings module;
the outlet list names outlets and their groups and nothing else. A withheld
figure looks the same whatever the reason. Links are relative, so the site
works under any path (a GitHub Pages project site). Everything the pages
show is in the site's stats.json, so the public site is built and deployed
from that file alone, never from the database (`build_site_from_stats`).
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from collector import settings as default_settings
from collector.publish import texts
from collector.clock import parse_instant
from collector.errors import BadArgument
from collector.publish.charts import weekly_chart
from collector.publish.figures import MEDIAN, RATES as RATE_DEFINITIONS, TOTAL_ID, UNGROUPED_NAMES
from collector.publish.history import History
from collector.publish.release import release
from collector.publish.view import ALL, publication
from collector.record.store import Store

SITE_DIR = Path(__file__).resolve().parents[2] / "site"
PAGES = ("index", "method", "outlets")
LANGS = ("en", "bn")
SUMMARY_COLUMNS = ["outlets_monitored", "outlets_contributing", "sources_readable", "articles_listed",
                   "articles_queued", "articles_captured", "capture_rate", "articles_archived",
                   "archive_rate", MEDIAN]
RATES = tuple(measure for measure, _top, _bottom in RATE_DEFINITIONS)
SITE_KEY = "site"  # the part of stats.json that is not figures: the outlets by group, the last run


def build_site(store: Store, out_dir: str | Path, now: datetime, settings_module=default_settings,
               history: History | None = None) -> list[Path]:
    """Return the files written: every page in both languages, the stylesheet and stats.json.

    The figures are the published history's. Without one (a preview, and the
    tests of the pages) every period closed by now is decided afresh, in
    order, as successive releases would have, and nothing is written.
    """
    return render_site(published_figures(store, now, history), out_dir, settings_module)


def build_site_from_stats(stats_file: str | Path, out_dir: str | Path, settings_module=default_settings) -> list[Path]:
    """Return the files written after building the site from a stats.json alone (no database).

    The public site's build and deployment receive only the published
    figures: the file a build from the database wrote (`stats.json`) holds
    everything the pages show, so the two builds are the same byte for byte.
    """
    try:
        published = json.loads(Path(stats_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadArgument(f"{stats_file}: not a stats.json the site build wrote ({exc})", "--from-stats") from exc
    if not isinstance(published, dict) or not isinstance(published.get(SITE_KEY), dict):
        raise BadArgument(f"{stats_file}: has no {SITE_KEY!r} part: not a stats.json the site build wrote",
                          "--from-stats")
    return render_site(published, out_dir, settings_module)


def published_figures(store: Store, now: datetime, history: History | None = None) -> dict:
    """Return everything the public site shows: the published figures, the outlets by group, the last run.

    The figures are the published history's (see build_site); the outlets
    are names by group, as the outlets page lists them.
    """
    if history is None:
        lines = release(store, now, History.memory(), write=False).published
    else:
        lines = history.published.lines
    pub = publication(lines)
    pub[SITE_KEY] = {"outlets": _outlets(store), "last_run": _last_run(store)}
    return pub


def render_site(published: dict, out_dir: str | Path, settings_module=default_settings) -> list[Path]:
    """Return the files written after rendering the pages, the stylesheet and stats.json from the published figures."""
    out = Path(out_dir)
    env = _environment()
    shared = {"pub": published, "settings": settings_module, "outlets": published[SITE_KEY]["outlets"],
              "last_run": published[SITE_KEY]["last_run"], "version": settings_module.__version__,
              "contact": _contact(settings_module.CONTACT_ADDRESS)}
    written = []
    for lang in LANGS:
        for page in PAGES:
            target = out / ("" if lang == "en" else "bn") / f"{page}.html"
            context = dict(shared, **_language(lang, page, published, settings_module))
            written.append(_write(target, env.get_template(f"{page}.html").render(context)))
    static = out / "static"
    static.mkdir(parents=True, exist_ok=True)
    for source in sorted((SITE_DIR / "static").iterdir()):
        written.append(Path(shutil.copyfile(source, static / source.name)))
    written.append(_write(out / "stats.json", json.dumps(published, ensure_ascii=False, indent=1, sort_keys=True)
                          + "\n"))
    return written


def _environment() -> jinja2.Environment:
    """Return a Jinja2 environment over site/templates and site/ (for method/<lang>.html)."""
    loader = jinja2.FileSystemLoader([str(SITE_DIR / "templates"), str(SITE_DIR)])
    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def _write(path: Path, text: str) -> Path:
    """Write text as UTF-8 and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _language(lang: str, page: str, pub: dict, settings_module) -> dict:
    """Return the template context that depends on the page's language."""
    fmt = Formatter(lang, pub, settings_module.OUTLET_UTC_OFFSET_HOURS)
    return {
        "lang": lang, "page": page, "fmt": fmt, "t": fmt.t,
        "root": "" if lang == "en" else "../",
        "other_lang": "bn" if lang == "en" else "en",
        "other_href": f"bn/{page}.html" if lang == "en" else f"../{page}.html",
        "overview": _overview(fmt, pub) if page == "index" else None,
        "min_outlets": settings_module.MIN_OUTLETS_PER_FIGURE,
    }


class Formatter:
    """Gives the page's language its numbers, dates and table cells."""

    def __init__(self, lang: str, pub: dict, local_offset_hours: float = 6):
        self.lang = lang
        self.pub = pub
        self.local_offset_hours = local_offset_hours

    def t(self, english: str, bangla: str) -> str:
        """Return the text in the page's language."""
        return bangla if self.lang == "bn" else english

    def num(self, value, decimals: int | None = None) -> str:
        """Return a number in the page's digits and grouping."""
        return texts.number(value, self.lang, decimals)

    def hours(self, value) -> str:
        """Return hours, or days when whole days of two or more."""
        return texts.hours(value, self.lang)

    def seconds(self, value) -> str:
        """Return seconds, or minutes when whole minutes of two or more."""
        return texts.seconds(value, self.lang)

    def listing(self, items) -> str:
        """Return items joined as a list in prose."""
        return texts.listing(list(items), self.lang)

    def duration(self, amount, unit: str) -> str:
        """Return an amount with its unit ('day', 'hour', ...) in words."""
        return texts.duration(amount, unit, self.lang)

    def gen(self, text: str) -> str:
        """Return text with the Bangla possessive ending on Bangla pages."""
        return texts.genitive(text, self.lang)

    def loc(self, text: str) -> str:
        """Return text with the Bangla 'per/in' ending on Bangla pages."""
        return texts.locative(text, self.lang)

    def hours_list(self, values) -> str:
        """Return a list of durations given in hours, as prose."""
        return self.listing(self.hours(v) for v in values)

    def seconds_list(self, values) -> str:
        """Return a list of durations given in seconds, as prose."""
        return self.listing(self.seconds(v) for v in values)

    def mebibytes(self, value) -> str:
        """Return a byte count in MiB."""
        return f"{self.num(round(value / 1048576, 1))} MiB"

    def percent(self, value) -> str:
        """Return a share (0-1) as a percentage."""
        return texts.percent(value, self.lang)

    def date(self, text: str | None) -> str:
        """Return an ISO instant as a date, or a dash."""
        return texts.date(parse_instant(text), self.lang) if text else "–"

    def moment(self, text: str) -> str:
        """Return an ISO instant as date and time, in UTC and in Dhaka."""
        return texts.moment(parse_instant(text), self.lang, self.local_offset_hours)

    def measure(self, measure: str) -> str:
        """Return the label of a figure."""
        english, bangla = texts.MEASURES[measure]
        return self.t(english, bangla)

    def result(self, result: str) -> str:
        """Return a request result as words."""
        return texts.result_label(result, self.lang)

    def cell(self, value, measure: str = "") -> Markup:
        """Return one figure for a table cell: a number, a rate, '–' or the one withheld marker."""
        if isinstance(value, dict) and value.get("withheld"):
            return Markup('<span class="withheld">{}</span>').format(self.t(*texts.WITHHELD))
        if value is None:
            return Markup('<span class="none" title="{}">–</span>').format(self.t("no data", "তথ্য নেই"))
        if measure in RATES or measure.startswith("share:"):
            return escape(texts.percent(value, self.lang))
        return escape(self.num(value))


def _overview(fmt: Formatter, pub: dict) -> dict:
    """Return the tables and charts of the coverage overview."""
    groups = [g for g in pub["groups"] if g["id"] != TOTAL_ID] + [g for g in pub["groups"] if g["id"] == TOTAL_ID]
    name = (lambda g: g["name_bn"]) if fmt.lang == "bn" else (lambda g: g["name"])
    figures = pub["figures"]
    weeks = [p for p in pub["periods"] if p["kind"] == "week"]
    summaries = []
    for period_id in [ALL, pub["latest"]["month"], pub["latest"]["week"]]:
        if period_id is None:
            continue
        rows = [_row(fmt, name(g), g["id"] == TOTAL_ID,
                     [figures[g["id"]].get(period_id, {}).get(m) for m in SUMMARY_COLUMNS], SUMMARY_COLUMNS)
                for g in groups]
        summaries.append({"id": period_id, "caption": _caption(fmt, pub, period_id), "rows": rows})
    result_measures = [f"share:{r}" for r in pub["results"]] + ["requests_by_result"]
    results = [_row(fmt, name(g), g["id"] == TOTAL_ID, [figures[g["id"]][ALL].get(m) for m in result_measures],
                    result_measures) for g in groups]
    # A group withheld in every week would be an empty line and an empty column: say so once instead.
    shown = [g for g in groups if any(_number_or_none(figures[g["id"]].get(w["id"], {}).get("articles_captured"))
                                      is not None for w in weeks)]
    plotted = [g for g in shown if g["id"] != TOTAL_ID]
    return {
        "columns": [fmt.measure(m) for m in SUMMARY_COLUMNS],
        "summaries": summaries,
        "headline": {m: fmt.cell(figures[TOTAL_ID][ALL].get(m), m) for m in SUMMARY_COLUMNS},
        "result_columns": [fmt.result(r) for r in pub["results"]] + [fmt.t("All requests", "সব অনুরোধ")],
        "result_rows": results,
        "definitions": texts.definitions(fmt.lang, pub["rules"]["min_outlets_per_figure"],
                                            pub["rules"]["dominance_share"]),
        "weeks": _weekly(fmt, weeks, shown, name, figures),
        "never_shown": [name(g) for g in groups if g not in shown],
        "captured_chart": _chart(fmt, weeks, plotted, name, figures, "articles_captured"),
        "archive_chart": _chart(fmt, weeks, plotted, name, figures, "archive_rate"),
        "group_names": [name(g) for g in shown],
        "plotted_names": [name(g) for g in plotted],
    }


def _row(fmt: Formatter, name: str, total: bool, values: list, measures) -> dict:
    """Return a table row; a run of two or more withheld cells to the row's end becomes one cell."""
    cells = [fmt.cell(v, m) for v, m in zip(values, measures)]
    start = len(values)
    while start > 0 and isinstance(values[start - 1], dict):
        start -= 1
    if len(values) - start >= 2:
        return {"name": name, "total": total, "cells": cells[:start],
                "span": fmt.cell(values[start], measures[start]), "span_width": len(values) - start}
    return {"name": name, "total": total, "cells": cells, "span": None, "span_width": 0}


def _caption(fmt: Formatter, pub: dict, period_id: str) -> str:
    """Return the caption of a summary table: the whole record, a month or a week."""
    if period_id == ALL:
        return fmt.t(*texts.PERIODS[ALL])
    period = next(p for p in pub["periods"] if p["id"] == period_id)
    if period["kind"] == "week":
        return fmt.t("Last published week: ", "সর্বশেষ প্রকাশিত সপ্তাহ: ") + _week_label(fmt, period)
    first, last = period["weeks"][0], period["weeks"][-1]
    return fmt.t("Last published month: ", "সর্বশেষ প্রকাশিত মাস: ") + texts.month_label(
        period_id, fmt.lang) + " (" + _week_label(fmt, {"id": first}, True) + "–" + \
        _week_label(fmt, {"id": last}, True) + ")"


def _number_or_none(value):
    """Return a published number, or None for a withheld or missing one."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _week_label(fmt: Formatter, week: dict, short: bool = False) -> str:
    """Return 'W48' or 'Week 48, 2026 (from 23 November 2026)' in the page's language."""
    year, number = week["id"].split("-W")
    if short:
        return fmt.t(f"W{int(number)}", f"স{fmt.num(int(number))}")
    return fmt.t(f"Week {int(number)}, {year}", f"সপ্তাহ {fmt.num(int(number))}, {texts.digits(year, 'bn')}")


def _weekly(fmt: Formatter, weeks, groups, name, figures) -> list[dict]:
    """Return the rows of the weekly table: captured articles and archive rate per group."""
    return [{"label": _week_label(fmt, w), "from": fmt.date(w["start"]),
             "captured": [fmt.cell(figures[g["id"]].get(w["id"], {}).get("articles_captured")) for g in groups],
             "archive": [fmt.cell(figures[g["id"]].get(w["id"], {}).get("archive_rate"), "archive_rate")
                         for g in groups]}
            for w in weeks]


def _chart(fmt: Formatter, weeks, groups, name, figures, measure: str):
    """Return the weekly chart of one figure for every group: lines, or bars when there is one week."""
    series = [[_number_or_none(figures[g["id"]].get(w["id"], {}).get(measure)) for w in weeks] for g in groups]
    labels = [_week_label(fmt, w, True) for w in weeks]
    period = _week_label(fmt, weeks[0]) if len(weeks) == 1 else ""
    missing = fmt.t(*texts.WITHHELD)
    if measure in RATES:
        return weekly_chart([name(g) for g in groups], series, labels,
                            lambda v: texts.number(round(v * 100), fmt.lang) + "%", y_max=1.0, period=period,
                            missing=missing, value_label=fmt.percent)
    return weekly_chart([name(g) for g in groups], series, labels, lambda v: fmt.num(round(v)), whole=True,
                        period=period, missing=missing)


def _contact(address: str) -> dict:
    """Return the contact address as a link: mailto: for an e-mail address, else the address itself."""
    if "@" in address and "://" not in address:
        return {"href": f"mailto:{address}", "text": address}
    return {"href": address, "text": address.split("://", 1)[-1].rstrip("/")}


def _outlets(store: Store) -> list[dict]:
    """Return the monitored outlets' names by group: names and groups only, nothing else."""
    groups = {r["id"]: {"name": r["name"], "name_bn": r["name_bn"], "outlets": []}
              for r in store.query("SELECT id, name, name_bn FROM outlet_groups ORDER BY name")}
    other = {**UNGROUPED_NAMES, "outlets": []}
    for row in store.query("SELECT name, name_bn, group_id FROM outlets WHERE active = 1 ORDER BY name"):
        groups.get(row["group_id"], other)["outlets"].append({"name": row["name"], "name_bn": row["name_bn"]})
    listed = [g for g in groups.values() if g["outlets"]]
    return listed + ([other] if other["outlets"] else [])


def _last_run(store: Store) -> str | None:
    """Return when the last run finished (ISO), or None before the first."""
    row = store.one("SELECT MAX(finished_at) FROM run_finishes")
    return row[0] if row else None

