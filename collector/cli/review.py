"""`review`, `annotate`, `annotate-review` and `annotations verify`: the people's side of the record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import click

from collector.cli.options import common_options, edge, make_clock
from collector.clock import iso
from collector.collect.events import KINDS
from collector.record.store import open_read_only
from collector.review.annotations import (
    SIGNERS_FILE, DEFAULT_DIR, VERDICTS, AnnotationError, check_author, digest, event_record, find, new_id,
    verify, verify_all, write_signed,
)
from collector.review.order import VANTAGE_DIFFERENCES_SQL, format_difference, format_row, review_rows


@click.command()
@common_options
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only events of this kind (repeatable).")
@click.option("--limit", type=int, default=None, help="Print at most this many events.")
@edge
def review(db, warc_dir, outlets, now, vantage, kinds, limit):
    """List events for people to review, the oldest articles' events first.

    A change happened between the last time the article was seen as before and
    the first time it was seen changed (for a gone: the last snapshot and the
    first absent check). Each event shows the article's age, hours from its
    first capture, at both moments; the list is ordered by the earlier, the
    earliest the change can have happened. Age orders the list; it never
    decides what is recorded. The same order is the Datasette canned query
    (collector/review/order.py REVIEW_ORDER_SQL).

    \b
    Example:
        python -m collector review --kind gone --limit 20
    """
    conn = open_read_only(db)
    try:
        rows = review_rows(conn, tuple(kinds), limit)
    finally:
        conn.close()
    for row in rows:
        click.echo(format_row(row))
    click.echo(f"{len(rows)} events", err=True)


def _folder_options(func):
    """Return func with the --annotations-dir and --allowed-signers options."""
    func = click.option("--allowed-signers", default=None,
                        help=f"Who may sign [default: ANNOTATIONS_DIR/{SIGNERS_FILE}].")(func)
    return click.option("--annotations-dir", default=DEFAULT_DIR, show_default=True,
                        help="Folder of annotation files (never the database).")(func)


def _signers(directory: str, allowed: str | None) -> Path:
    """Return the allowed signers file in use, which must exist."""
    path = Path(allowed) if allowed else Path(directory) / SIGNERS_FILE
    if not path.is_file():
        raise AnnotationError(f"no allowed signers file at {path}")
    return path


@click.command("annotate")
@common_options
@_folder_options
@click.argument("event_id", metavar="EVENT", type=int)
@click.option("--author", required=True, help="Your principal name, as in allowed_signers.")
@click.option("--key", required=True, type=click.Path(exists=True, dir_okay=False), help="Your SSH private key.")
@click.option("--text", required=True, help="What you say the event means.")
@edge
def annotate(db, warc_dir, outlets, now, vantage, annotations_dir, allowed_signers, event_id, author, key, text):
    """Write a signed annotation of one event, kept apart from the record.

    \b
    Example:
        python -m collector annotate 42 --author alice --key ~/.ssh/id_ed25519 \\
            --text "Removed after a correction notice on the outlet's site."
    """
    signers = _signers(annotations_dir, allowed_signers)
    conn = open_read_only(db)
    try:
        event = event_record(conn, event_id)
    finally:
        conn.close()
    when = make_clock(now).now()
    document = {"kind": "annotation", "id": new_id("annotation", when), "author": check_author(author),
                "written_at": iso(when), "event_id": event_id, "event_sha256": digest(event), "event": event,
                "text": text}
    path, fingerprint = write_signed(Path(annotations_dir), document, key, signers)
    click.echo(f"{path} signed by {author} ({fingerprint})")


@click.command("annotate-review")
@common_options
@_folder_options
@click.argument("annotation")
@click.option("--author", required=True, help="Your principal name; not the annotation's author.")
@click.option("--key", required=True, type=click.Path(exists=True, dir_okay=False), help="Your SSH private key.")
@click.option("--verdict", type=click.Choice(VERDICTS), default="approved", show_default=True)
@click.option("--text", default="", help="Anything the reviewer adds.")
@edge
def annotate_review(db, warc_dir, outlets, now, vantage, annotations_dir, allowed_signers, annotation, author,
                    key, verdict, text):
    """Add a second person's signed review of an annotation.

    \b
    Example:
        python -m collector annotate-review annotation-20260101T000700Z-3f9a0c12 \\
            --author bob --key ~/.ssh/id_ed25519
    """
    signers = _signers(annotations_dir, allowed_signers)
    target = find(Path(annotations_dir), annotation)
    original = json.loads(target.read_bytes())
    if original.get("kind") != "annotation":
        raise AnnotationError(f"{target.name} is not an annotation")
    annotation_key = verify(target, original["author"], signers)
    if check_author(author) == original["author"]:
        raise AnnotationError(f"{author} wrote {target.stem}; a review needs a second person")
    when = make_clock(now).now()
    document = {"kind": "review", "id": new_id("review", when), "author": author, "reviewed_at": iso(when),
                "annotation_id": original["id"], "annotation_sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
                "verdict": verdict, "text": text}
    path, fingerprint = write_signed(target.parent, document, key, signers, refused_key=annotation_key)
    click.echo(f"{path} signed by {author} ({fingerprint}): {verdict}")


@click.group("annotations")
def annotations():
    """Check the signed annotations kept in data/annotations/.

    \b
    Example:
        python -m collector annotations verify
    """


@annotations.command("verify")
@common_options
@_folder_options
@edge
def verify_command(db, warc_dir, outlets, now, vantage, annotations_dir, allowed_signers):
    """Verify every signature and review; exit non-zero if any fails.

    The events annotated are compared with the record when --db exists.

    \b
    Example:
        python -m collector annotations verify --annotations-dir data/annotations
    """
    signers = _signers(annotations_dir, allowed_signers)
    conn = open_read_only(db) if Path(db).exists() else None
    try:
        results = verify_all(Path(annotations_dir), signers, conn)
    finally:
        if conn is not None:
            conn.close()
    for name, found, good in results:
        click.echo(f"{'ok  ' if good else 'FAIL'}  {name}  {found}")
    failed = sum(not good for _, _, good in results)
    if failed:
        raise click.ClickException(f"{failed} of {len(results)} files did not verify")
    click.echo(f"{len(results)} files verified" + ("" if conn is not None else f" (no record at {db} to compare)"))


@click.command("vantage-differences")
@common_options
@click.option("--limit", type=int, default=None, help="Print at most this many differences.")
@edge
def vantage_differences(db, warc_dir, outlets, now, vantage, limit):
    """List answers that differed by vantage for one address, the oldest articles' first.

    Each line names both vantages' results and request ids (a page reached from
    one and blocked, challenged, timed out or different from the other).

    \b
    Example:
        python -m collector vantage-differences --limit 20
    """
    conn = open_read_only(db)
    try:
        rows = conn.execute(VANTAGE_DIFFERENCES_SQL).fetchall()
    finally:
        conn.close()
    rows = rows[:limit] if limit is not None else rows
    for row in rows:
        click.echo(format_difference(row))
    click.echo(f"{len(rows)} differences", err=True)
