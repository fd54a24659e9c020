"""The operations page in Datasette (datasette/metadata.yml, health_* canned queries) gives the health report's figures.

The database is a real collection's (tests/health/world.py), with a fault or two so the figures are not
all zero: the queries run in Datasette with the project's plugins and metadata, at the same `now` as
`python -m collector health --json`, and each figure equals the check's value.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import yaml
from datasette.app import Datasette

from collector.clock import iso
from testing.farm import Reply

ROOT = Path(__file__).resolve().parents[2]
METADATA = yaml.safe_load((ROOT / "datasette" / "metadata.yml").read_text(encoding="utf-8"))


def query(db: Path, name: str, now: str) -> list[dict]:
    async def fetch():
        datasette = Datasette([str(db)], metadata=METADATA, plugins_dir=str(ROOT / "datasette" / "plugins"))
        await datasette.invoke_startup()
        answer = await datasette.client.get(f"/{db.stem}/{name}.json?_shape=array&now={now}")
        assert answer.status_code == 200, answer.text
        return answer.json()

    return asyncio.run(fetch())


def values(report: dict, check: str) -> dict:
    return {f["subject"]: f["value"] for f in report["findings"] if f["check"] == check}


def test_the_operations_page_gives_the_health_reports_figures(world):
    world.loop.fault("alpha", "/news_sitemap.xml", Reply(404))  # alpha goes quiet
    world.loop.spn.per_minute = 0  # and the archive is refused
    try:
        world.advance(1.5)
        world.advance(3, runs=False)  # and the schedule stalls
    finally:
        world.loop.healthy("alpha")
        world.loop.spn.per_minute = None
    report = world.health()
    now = iso(world.now + timedelta(minutes=10))
    assert report["now"][:16] == now[:16]

    outlets = {r["outlet_id"]: r for r in query(world.db, "health_outlets", now)}
    silent = values(report, "outlet-silent")
    assert silent["alpha"] > 4 and set(outlets) == set(silent)
    assert {o: r["hours_silent"] for o, r in outlets.items()} == silent

    schedule = {f"{r['stream']}/{r['command']}": r for r in query(world.db, "health_schedule", now)}
    gaps = values(report, "schedule-gap")
    assert gaps["default/run"] > 2 and set(schedule) == set(gaps)
    assert {s: r["hours_past_schedule"] for s, r in schedule.items()} == gaps

    (archive,) = query(world.db, "health_archive", now)
    assert archive["refused_in_a_row"] == values(report, "archive-refusals")[None] > 0
    assert archive["queue_days"] == values(report, "archive-queue")[None]
    assert archive["oldest_hours"] == values(report, "archive-oldest")[None] > 0
    assert archive["cap_share_today"] == values(report, "archive-cap")[None]


def test_the_health_page_shows_every_finding_of_the_report(world):
    """/DB/-/health runs the checks themselves: every finding of `collector health --json` is on it."""
    from markupsafe import escape

    world.loop.fault("alpha", "/news_sitemap.xml", Reply(404))
    try:
        world.advance(1.5)
    finally:
        world.loop.healthy("alpha")
    report = world.health()
    now = report["now"]

    async def fetch():
        datasette = Datasette([str(world.db)], metadata=METADATA, plugins_dir=str(ROOT / "datasette" / "plugins"))
        await datasette.invoke_startup()
        return await datasette.client.get(f"/{world.db.stem}/-/health?now={now}")

    answer = asyncio.run(fetch())
    assert answer.status_code == 200, answer.text
    page = answer.text
    assert f"at {now}: {report['state']}" in page
    for finding in report["findings"]:
        row = (f'<tr class="health-{finding["state"]}"><td>{finding["state"]}</td>'
               f"<td>{escape(finding['subject'] or '')}</td>")
        assert row in page and str(escape(finding["detail"])) in page, finding
    assert 'href="docs/health.md#outlet-silent"' in page
