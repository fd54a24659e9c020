"""The operations page: the whole health report on a copy of the record, at /DB/-/health (issue 30, item 5).

The canned queries health_outlets, health_schedule and health_archive (datasette/metadata.yml) give some
of the report's figures as tables to sort and filter; this page gives every check's, from the very code
`python -m collector health` runs (collector/health), so the two can never disagree: each check's state,
subject, value and detail, the failing and warning checks first, each linked to its runbook entry
(docs/health.md#<check id>). `?now=` takes an ISO-8601 instant, as the command's --now. The folder of the
record (signatures, tokens, the repository's size) is TAKEDOWNWATCH_RECORD_DIR when set; without it the
checks that read it say they were not judged. Like the rest of the record, the page names outlets: it
is for the private copy only.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from datasette import NotFound, Response, hookimpl
from datasette.utils import tilde_decode
from datasette.utils.asgi import BadRequest
from markupsafe import Markup, escape

from collector import settings
from collector.clock import Clock, iso_seconds, parse_instant
from collector.health.checks import FAIL, OK, WARN, Inputs, worst
from collector.health.report import RUNBOOK, by_check
from collector.health.suite import all_checks, run_checks
from collector.record.store import open_read_only
from collector.record.tables import is_record

ORDER = {FAIL: 0, WARN: 1, OK: 2}


def report(path: str, now_text: str | None) -> tuple[str, list]:
    """Run every check on the database file at `now` (the clock when None); return (stamp, findings)."""
    now = parse_instant(now_text) if now_text else Clock().now()
    record = os.environ.get("TAKEDOWNWATCH_RECORD_DIR") or None
    conn = open_read_only(path)
    try:
        inputs = Inputs(conn, now, Path(path), Path(record) if record else None, Path(settings.TRUST_DIR), None,
                        dict(settings.HEALTH_SCHEDULE_MINUTES), None)
        return iso_seconds(now), run_checks(inputs, ())
    finally:
        conn.close()


def page(database: str, stamp: str, findings: list) -> str:
    titles = {c.id: c.title for c in all_checks()}
    groups = sorted(by_check(findings).items(), key=lambda kv: ORDER[worst(kv[1])])
    out = [f"<h1>Health of {escape(database)} at {escape(stamp)}: {escape(worst(findings))}</h1>",
           "<p>Each check's thresholds are in collector/settings.py; what to do is in its runbook. The same "
           "report as <code>python -m collector health</code>.</p>"]
    for check, group in groups:
        state = worst(group)
        out.append(f'<h2 id="{escape(check)}" class="health-{state}">{escape(state.upper())} {escape(check)}: '
                   f'{escape(titles.get(check, check))} <small><a href="{escape(RUNBOOK)}#{escape(check)}">runbook'
                   f"</a></small></h2>")
        out.append("<table><thead><tr><th>state</th><th>subject</th><th>value</th><th>detail</th></tr></thead><tbody>")
        for finding in sorted(group, key=lambda f: (ORDER[f.state], str(f.subject))):
            out.append(f'<tr class="health-{finding.state}"><td>{escape(finding.state)}</td>'
                       f"<td>{escape(finding.subject or '')}</td><td>{escape(str(finding.value))}</td>"
                       f"<td>{escape(finding.detail)}</td></tr>")
        out.append("</tbody></table>")
    return "\n".join(out)


async def health_page(datasette, request):
    try:
        db = datasette.get_database(route=tilde_decode(request.url_vars["database"]))
    except KeyError:
        raise NotFound("No such database")
    if db.is_memory or not db.path or not is_record(str(db.path)):
        raise NotFound(f"{db.name} is not a copy of the Takedown Watch record")
    await datasette.ensure_permissions(request.actor, [("view-database", db.name), "view-instance"])
    try:
        stamp, findings = await asyncio.to_thread(report, str(db.path), request.args.get("now"))
    except ValueError as exc:
        raise BadRequest(f"now: {exc}")
    body = page(db.name, stamp, findings)
    html = await datasette.render_template(datasette.jinja_env.from_string(
        '{% extends "base.html" %}{% block title %}Health{% endblock %}'
        "{% block extra_head %}<style>.health-fail{background:#ffd6d6}.health-warn{background:#fff2cc}"
        "</style>{% endblock %}{% block content %}{{ health_body }}{% endblock %}"), {"health_body": Markup(body)},
        request=request)
    return Response.html(html, headers={"Cache-Control": "private, no-store"})


@hookimpl
def register_routes():
    return [(r"^/(?P<database>[^/]+)/-/health$", health_page)]
