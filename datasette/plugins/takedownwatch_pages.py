"""Two pages of the private record: a snapshot's page as captured, and what changed between two snapshots.

For the people browsing the private record; nothing here is part of the
public site (collector/publish never links to Datasette).

What changed: /<database>/-/diff?before=<id>&after=<id> (or ?article=<id>:
its first and latest snapshots) shows a word-level diff of headline, byline
and text in the method's comparison form (collector/review/diff.py, which
says how diffengine and NewsDiffs do it), with both snapshots' times and
pages as captured, the previous and next pair, and a choice of any two
snapshots of the article. Canned queries link to it through a `diff` column
whose value is the page's address relative to the database.

The page as captured:

/<database>/-/captured/<snapshot id> shows the capture time, the address and
the SHA-256 the record holds for the HTML, checked against the bytes read
back, above an <iframe sandbox> of /<database>/-/captured/<id>/page. That
answer carries its own Content-Security-Policy (`sandbox`, and
`default-src 'none'`: no scripts, no requests to the outlet or anywhere
else; inline styles and data: images only), so even opened on its own it
runs no script and fetches nothing. The frame page allows frames from this
server only (`frame-src 'self'`), so a link followed inside the frame
cannot load the outlet's live site there.

The WARC record is read from the local WARC folder (plugin setting
`warc_dir`, default: the `warc` folder beside the database), or else from the
release asset the warc_files table names, under the base URL `releases_url`
(for GitHub: https://github.com/OWNER/REPO/releases/download), by an HTTP
range request of exactly that record (collector/net/assets.py). A private
repository's assets are read through the REST API instead: setting
`releases_api` (https://api.github.com/repos/OWNER/REPO, or GITHUB_API_URL's
on another host) and `token` (the reader's own, which `python -m collector
browse` gives from gh); the token is sent to the API alone, never to the
storage it redirects to.

The page also says where the snapshot replays in the day's WACZ
(collector/evidence/replay.py): the package, the address and the 14 digits
of its record's WARC-Date, never of captured_at (which is later, and can
open the next capture of the address). With the plugin setting `wacz_url`
(a base URL the reader's browser can fetch DAY.wacz from) it links to
ReplayWeb.page there (`replay_app`, default settings.REPLAY_APP_URL).
Routes are registered with Datasette's register_routes hook and the cell
link with render_cell (docs/plugin_hooks.rst).
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from urllib.parse import urlencode

from datasette import Forbidden, NotFound, Response, hookimpl
from datasette.utils import tilde_decode
from datasette.utils.asgi import BadRequest
from markupsafe import Markup, escape

from collector.errors import TakedownWatchError
from collector.net.assets import asset_url, read_asset_range, read_range
from collector.evidence.replay import ReplayError, replay_of
from collector.net.warcread import ReadResponse, read_response, response_of
from collector.record.tables import is_record
from collector.review.diff import diff_snapshots

PLUGIN = "takedownwatch-captured"
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
PAGE_CSP = ("sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
            "form-action 'none'; base-uri 'none'; frame-ancestors 'self'")
FRAME_CSP = "frame-src 'self'; child-src 'self'; object-src 'none'"
SNAPSHOT_SQL = ("SELECT id, article_id, captured_at, purpose, status_code, final_url, headline, html_sha256, "
                "warc_file, warc_offset, warc_length FROM snapshots WHERE id = ?")
ASSET_SQL = "SELECT release_tag, asset_name, sha256 FROM warc_files WHERE name = ? ORDER BY id DESC LIMIT 1"


async def record_database(datasette, request):
    """Return the record database a request names, after Datasette's own view checks."""
    try:
        db = datasette.get_database(route=tilde_decode(request.url_vars["database"]))
    except KeyError:
        raise NotFound("No such database")
    if db.is_memory or not db.path or not is_record(str(db.path)):
        raise NotFound(f"{db.name} is not a copy of the Takedown Watch record")
    visible, _private = await datasette.check_visibility(
        request.actor, permissions=[("view-table", (db.name, "snapshots")), ("view-database", db.name),
                                    "view-instance"])
    if not visible:
        raise Forbidden("You may not view this record's snapshots")
    return db


def settings_for(datasette, db) -> tuple[Path, str | None, str | None, str | None]:
    """Return (local WARC folder, release base URL, release API address, token), each but the first or None."""
    config = datasette.plugin_config(PLUGIN, database=db.name) or {}
    warc_dir = Path(config.get("warc_dir") or Path(db.path).resolve().parent / "warc")
    return (warc_dir, config.get("releases_url") or None, config.get("releases_api") or None,
            config.get("token") or None)


async def snapshot_row(db, snapshot_id: int):
    """Return a snapshot's row, or raise NotFound."""
    row = (await db.execute(SNAPSHOT_SQL, [snapshot_id])).first()
    if row is None:
        raise NotFound(f"No snapshot {snapshot_id}")
    return row


async def read_captured(datasette, db, row) -> tuple[ReadResponse, str]:
    """Return (the response record read back: HTML as received, its Content-Type, WARC-Date; where it was read)."""
    warc_dir, releases_url, releases_api, token = settings_for(datasette, db)
    local = warc_dir / row["warc_file"]
    if local.is_file():
        got = await asyncio.to_thread(read_response, warc_dir, row["warc_file"], row["warc_offset"])
        return got, f"{local} at byte {row['warc_offset']}"
    asset = (await db.execute(ASSET_SQL, [row["warc_file"]])).first()
    if not (releases_url or releases_api) or asset is None:
        why = "no release base URL is set (releases_url)" if asset else "warc_files does not list it"
        raise NotFound(f"{row['warc_file']} is not in {warc_dir}, and {why}")
    if releases_api:
        record, url = await asyncio.to_thread(read_asset_range, releases_api, token, asset["release_tag"],
                                              asset["asset_name"], row["warc_offset"], row["warc_length"])
        got = response_of(record, f"{url} bytes {row['warc_offset']}+{row['warc_length']}")
        return got, (f"release {asset['release_tag']}, asset {asset['asset_name']} ({url}), "
                     f"bytes {row['warc_offset']}-{row['warc_offset'] + row['warc_length'] - 1}")
    url = asset_url(releases_url, asset["release_tag"], asset["asset_name"])
    record = await asyncio.to_thread(read_range, url, row["warc_offset"], row["warc_length"])
    got = response_of(record, f"{url} bytes {row['warc_offset']}+{row['warc_length']}")
    return got, f"{url}, bytes {row['warc_offset']}-{row['warc_offset'] + row['warc_length'] - 1}"


def replay_context(datasette, db, row, got: ReadResponse) -> dict:
    """Return where the snapshot replays, at its record's WARC-Date, and the link when the WACZ can be fetched."""
    try:
        replay = replay_of(row["warc_file"], got.warc_date, got.target_uri)
    except ReplayError as exc:
        return {"replay": None, "replay_problem": str(exc)}
    config = datasette.plugin_config(PLUGIN, database=db.name) or {}
    wacz_url = config.get("wacz_url")
    link = replay.link(f"{wacz_url.rstrip('/')}/{replay.wacz}", config.get("replay_app")) if wacz_url else None
    return {"replay": replay, "replay_link": link}


def served_type(content_type: str | None) -> str:
    """Return the Content-Type to show the page under: as served when it is HTML, else text/html."""
    return content_type if content_type and "html" in content_type.lower() else "text/html"


async def captured_frame(datasette, request):
    db = await record_database(datasette, request)
    row = await snapshot_row(db, int(request.url_vars["snapshot"]))
    context = {"database": db.name, "snapshot": dict(row), "problem": None, "computed": None}
    try:
        got, source = await read_captured(datasette, db, row)
        context.update(computed=hashlib.sha256(got.body).hexdigest(), content_type=got.content_type, source=source,
                       size=len(got.body), shown_as=served_type(got.content_type), warc_date=got.warc_date,
                       **replay_context(datasette, db, row, got))
    except (TakedownWatchError, NotFound) as exc:
        context["problem"] = str(exc)
    context["page_url"] = datasette.urls.database(db.name) + f"/-/captured/{row['id']}/page"
    context["row_url"] = datasette.urls.table(db.name, "snapshots") + f"?id={row['id']}"
    html = await render(datasette, "takedownwatch_captured.html", context, request)
    return Response.html(html, status=200 if context["problem"] is None else 404,
                         headers={"Content-Security-Policy": FRAME_CSP, "Referrer-Policy": "no-referrer"})


async def render(datasette, name: str, context: dict, request) -> str:
    """Return one of the project's templates rendered inside Datasette's own layout (base.html)."""
    template = datasette.jinja_env.from_string((TEMPLATES / name).read_text(encoding="utf-8"))
    return await datasette.render_template(template, context, request=request)


async def captured_page(datasette, request):
    db = await record_database(datasette, request)
    row = await snapshot_row(db, int(request.url_vars["snapshot"]))
    try:
        got, _source = await read_captured(datasette, db, row)
    except TakedownWatchError as exc:
        raise NotFound(str(exc))
    return Response(got.body, status=200, content_type=served_type(got.content_type), headers={
        "Content-Security-Policy": PAGE_CSP, "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer", "Cache-Control": "private, no-store"})


@hookimpl
def register_routes():
    return [
        (r"^/(?P<database>[^/]+)/-/captured/(?P<snapshot>[0-9]+)$", captured_frame),
        (r"^/(?P<database>[^/]+)/-/captured/(?P<snapshot>[0-9]+)/page$", captured_page),
        (r"^/(?P<database>[^/]+)/-/diff$", diff_view),
    ]


def _snapshot_id(row, table: str | None):
    keys = row.keys()
    if table in ("snapshots", "snapshot_rows") and "id" in keys:
        return row["id"]
    return row["snapshot_id"] if table is None and "snapshot_id" in keys else None


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if column not in ("html_sha256", "diff") or not value:
        return None
    db = datasette.databases.get(database)
    if db is None or db.is_memory or not db.path or not is_record(str(db.path)):
        return None
    if column == "diff":
        return diff_link(datasette, database, value) if table is None else None
    snapshot = _snapshot_id(row, table)
    if snapshot is None:
        return None
    href = datasette.urls.database(database) + f"/-/captured/{int(snapshot)}"
    return Markup(f'<a href="{escape(href)}" title="Open the page as captured">as captured</a> '
                  f'<code class="sha256">{escape(value)}</code>')


# -- what changed ------------------------------------------------------------------

DIFF_SNAPSHOT_SQL = ("SELECT id, article_id, captured_at, purpose, status_code, final_url, headline, byline, text, "
                     "extractor, html_sha256 FROM snapshots WHERE id = ?")
ARTICLE_SNAPSHOTS_SQL = "SELECT id, captured_at, purpose FROM snapshots WHERE article_id = ? ORDER BY captured_at, id"
ARTICLE_SQL = "SELECT id, outlet_id, url FROM articles WHERE id = ?"


def _id_arg(request, name: str) -> int | None:
    value = request.args.get(name)
    if value in (None, ""):
        return None
    if not value.isdigit():
        raise BadRequest(f"{name}= must be a snapshot or article id, not {value!r}")
    return int(value)


async def _article_snapshots(db, article_id: int) -> list[dict]:
    return [dict(r) for r in await db.execute(ARTICLE_SNAPSHOTS_SQL, [article_id])]


async def _pair(db, request) -> tuple[dict, dict]:
    """Return the two snapshot rows a diff request names (before=&after=, or article=: first and latest)."""
    before_id, after_id = _id_arg(request, "before"), _id_arg(request, "after")
    if before_id is None or after_id is None:
        article_id = _id_arg(request, "article")
        if article_id is None:
            raise BadRequest("Give two snapshots (?before=ID&after=ID) or an article (?article=ID)")
        listed = await _article_snapshots(db, article_id)
        if not listed:
            raise NotFound(f"Article {article_id} has no snapshot")
        before_id, after_id = listed[0]["id"], listed[-1]["id"]
    rows = []
    for snapshot_id in (before_id, after_id):
        row = (await db.execute(DIFF_SNAPSHOT_SQL, [snapshot_id])).first()
        if row is None:
            raise NotFound(f"No snapshot {snapshot_id}")
        rows.append(dict(row))
    if rows[0]["article_id"] != rows[1]["article_id"]:
        raise BadRequest(f"Snapshots {before_id} and {after_id} are of different articles "
                         f"({rows[0]['article_id']} and {rows[1]['article_id']}): only one article's can be compared")
    return rows[0], rows[1]


def _neighbours(listed: list[dict], before: dict, after: dict) -> tuple[tuple | None, tuple | None]:
    """Return the (before, after) pairs one step earlier and one step later, as NewsDiffs links them."""
    ids = [r["id"] for r in listed]
    i, j = ids.index(before["id"]), ids.index(after["id"])
    earlier = (ids[i - 1], ids[j - 1]) if i > 0 and j > 0 else None
    later = (ids[i + 1], ids[j + 1]) if i + 1 < len(ids) and j + 1 < len(ids) else None
    return earlier, later


def render_pieces(field) -> Markup:
    """Return a field's diff as HTML paragraphs: <del> what only the earlier snapshot had, <ins> the later."""
    paragraphs: list[list[tuple[str, str]]] = [[]]
    for piece in field.pieces:
        for token in piece.tokens:
            if token.paragraph_before:
                paragraphs.append([])
            space = " " if token.space_before and not token.paragraph_before else ""
            segments = paragraphs[-1]
            if segments and segments[-1][0] == piece.op:
                segments[-1] = (piece.op, segments[-1][1] + space + token.text)
            else:  # the blank before a run stays outside its <del> or <ins>
                segments.extend([("equal", space)] if space else [])
                segments.append((piece.op, token.text))
        if piece.note:
            paragraphs[-1].append(("note", piece.note))
    tags = {"equal": "{}", "delete": "<del>{}</del>", "insert": "<ins>{}</ins>",
            "note": ' <span class="invisible-change">[{}]</span>'}
    return Markup("".join("<p>" + "".join(tags[op].format(escape(text)) for op, text in segments) + "</p>"
                          for segments in paragraphs if segments))


async def diff_view(datasette, request):
    db = await record_database(datasette, request)
    before, after = await _pair(db, request)
    listed = await _article_snapshots(db, before["article_id"])
    article = dict((await db.execute(ARTICLE_SQL, [before["article_id"]])).first() or {})
    fields = await asyncio.to_thread(diff_snapshots, before, after)
    base = datasette.urls.database(db.name)
    earlier, later = _neighbours(listed, before, after)
    context = {
        "database": db.name, "before": before, "after": after, "article": article, "listed": listed,
        "fields": [{"diff": f, "html": render_pieces(f)} for f in fields],
        "earlier": earlier and f"{base}/-/diff?before={earlier[0]}&after={earlier[1]}",
        "later": later and f"{base}/-/diff?before={later[0]}&after={later[1]}",
        "diff_url": f"{base}/-/diff", "captured_url": f"{base}/-/captured/",
        "all_url": f"{base}/article_snapshots?" + urlencode({"url": article.get("url", "")}),
    }
    return Response.html(await render(datasette, "takedownwatch_diff.html", context, request))


def diff_link(datasette, database: str, value) -> Markup | None:
    """Return a link for a canned query's `diff` value (the page's address relative to the database)."""
    if not isinstance(value, str) or not value.startswith("-/diff?"):
        return None
    href = datasette.urls.database(database) + "/" + value
    return Markup(f'<a href="{escape(href)}">what changed</a>')
