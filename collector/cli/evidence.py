"""`export sign`, `export timestamp`, `export verify`, `export restore-triggers`, `export wacz`, `evidence`.

The proofs around the committed record, from the command line; the library
is collector/evidence/.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import click

from collector import settings
from collector.cli.options import DEFAULT_DB, DEFAULT_WARC, edge, make_clock
from collector.errors import BadUsage, TakedownWatchError
from collector.urls import is_loopback_host

DEFAULT_OUT = "data/record"
TRUST_HELP = "Folder of the allowed signers, timestamping.toml and the authorities' roots."


def _trust_option(func):
    return click.option("--trust", "trust_dir", default=settings.TRUST_DIR, show_default=True, help=TRUST_HELP)(func)


@click.command("sign")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder (the stream's).")
@click.option("--key", envvar="TAKEDOWNWATCH_RECORD_KEY", required=True,
              help="SSH private key file of the record (or TAKEDOWNWATCH_RECORD_KEY).")
@click.option("--db", default=DEFAULT_DB, show_default=True,
              help="The stream's working database: the files its exports wrote are the only ones signed.")
@_trust_option
@edge
def sign_command(out_dir, key, db, trust_dir):
    """Sign the stream's new export files (NNNNNN.jsonl.bz2.sig), each verified first.

    Only files after the last signed one (its signature good), whose content
    and chain check from it, and which the stream's working database (--db)
    wrote itself. Any other unsigned file (one pushed into the record
    repository by anyone else) stops the command before it signs anything:
    exit 1, naming the file (docs/health.md#evidence-unverified).

    \b
    Example:
        python -m collector export sign --key ~/.ssh/takedownwatch-record --db data/takedownwatch.db
    """
    from collector.evidence.signing import sign_verified
    from collector.evidence.verify import SIGNERS_FILE
    from collector.record.store import open_read_only

    if not Path(db).is_file():
        raise BadUsage(f"{db} does not exist: the stream's working database says which files its jobs wrote")
    conn = open_read_only(db)
    try:
        signed = sign_verified(out_dir, key, Path(trust_dir) / SIGNERS_FILE, conn)
    finally:
        conn.close()
    click.echo(f"signed {len(signed)} export file(s)" + "".join(f"\n  {p}" for p in signed))


@click.command("timestamp")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder.")
@click.option("--db", default=DEFAULT_DB, show_default=True, help="SQLite database (the queries' ledger rows).")
@click.option("--warc-dir", default=DEFAULT_WARC, show_default=True, help="Folder of WARC files.")
@click.option("--now", default=None, help="ISO-8601 instant that replaces the clock (tests, replays).")
@click.option("--vantage", default=None, help="Name of the network location requests come from.")
@click.option("--min-interval", type=float, default=None, help="As for `run`: below 2 s only for loopback.")
@_trust_option
@edge
def timestamp_command(out_dir, db, warc_dir, now, vantage, min_interval, trust_dir):
    """Ask every time-stamping authority for a token of each export file still missing one.

    An authority that fails is reported and asked again by the next run; the
    command still exits 0 (failures are data, in the ledger).

    \b
    Example:
        python -m collector export timestamp --out data/record
    """
    from collector.collect.context import RunContext, default_vantage
    from collector.evidence.timestamps import load_authorities, stamp_missing
    from collector.record.store import Store

    authorities = load_authorities(trust_dir)
    interval, loopback = _interval(min_interval, [a.url for a in authorities])
    ctx = RunContext.open(Store(db), "timestamp", clock=make_clock(now), vantage=vantage or default_vantage(),
                          warc_dir=warc_dir, interval=interval, allow_loopback=loopback)
    report = stamp_missing(ctx.fetcher, out_dir, authorities)
    for name, authority, why in report.failed:
        ctx.warnings.append(f"timestamp of {name} by {authority} failed: {why}")
        click.echo(f"warning: {authority} gave no token for {name}: {why}", err=True)
    ctx.count("timestamp_tokens", len(report.kept))
    ctx.finish()
    ctx.store.close()
    for name, authority, check in report.kept:
        click.echo(f"{name}: token from {authority} at {check.gen_time:%Y-%m-%dT%H:%M:%SZ}")
    click.echo(f"{len(report.kept)} token(s) kept, {len(report.failed)} failed (asked again next run)")


def _interval(min_interval: float | None, urls: list[str]) -> tuple[float, bool]:
    if min_interval is None or min_interval >= settings.MIN_INTERVAL_SECONDS:
        return max(min_interval or 0, settings.MIN_INTERVAL_SECONDS), False
    outside = sorted(h for h in (urlsplit(u).hostname or "" for u in urls) if not is_loopback_host(h))
    if min_interval <= 0 or outside:
        raise BadUsage(f"--min-interval below {settings.MIN_INTERVAL_SECONDS} s is for loopback authorities "
                       f"only; these are not: {', '.join(outside)}")
    return min_interval, True


@click.command("verify")
@click.option("--out", "out_dirs", multiple=True, default=[DEFAULT_OUT], show_default=True,
              help="Export folder to check; repeat it for the record repositories of successive periods, "
                   "oldest first, to check the chain across them.")
@click.option("--db", default=None, help="Also compare every row of this database with the record (a "
                                          "stream's working database, or the one that merges every stream).")
@click.option("--require-timestamps", is_flag=True,
              help=f"Fail for a file with fewer than {settings.TIMESTAMP_MIN_AUTHORITIES} valid tokens.")
@click.option("--chain-only", is_flag=True,
              help="Check only each file's content and the chain (what a push after a rebase needs).")
@click.option("--tail", is_flag=True,
              help="With --chain-only: the files present, from the oldest on, as a sparse checkout of the "
                   "newest days holds them (one folder).")
@_trust_option
@edge
def verify_command(out_dirs, db, require_timestamps, chain_only, tail, trust_dir):
    """Check the record: every file's content, the chain, signatures, timestamps (and a database).

    Fails naming the first file, line or row that is not as it was written.
    Given the record repositories of successive periods, checks the chain
    across every boundary; a folder that continues an earlier repository not
    given is checked from the file it starts with. A record of several
    streams is checked stream by stream; --db then takes one stream's working
    database, or the database `export rebuild` merged them into, each of
    whose rows is compared with the stream that wrote it.

    \b
    Example:
        python -m collector export verify --out data/record --db data/takedownwatch.db
        python -m collector export verify --out record-2026 --out record-2027
    """
    from collector.evidence.verify import verify_record
    from collector.record.folder import continues

    from collector.record.merge import stream_folders

    folders = list(out_dirs)
    if tail and not chain_only:
        raise BadUsage("--tail checks the chain only: give --chain-only with it")
    found = {None: folders} if tail else stream_folders(folders)
    if list(found) != [None]:
        _verify_streams(found, db, require_timestamps, chain_only, trust_dir)
        return
    link = None if tail else continues(folders[0])
    if link:
        click.echo(f"{folders[0]} continues {link['repository']} from {link['file']}, not checked here: "
                   "give its folder first to check the chain across")
    if chain_only:
        from collector.record.contents import check_folder

        count = len(check_folder(folders, tail=tail))
        click.echo(f"{count} export files{' present' if tail else ''}, chain intact, content checked")
        return

    report = verify_record(folders, trust_dir, db=db, require_timestamps=require_timestamps)
    click.echo(f"{report.files} export files, chain intact, content checked, {report.signed} signatures good")
    click.echo(f"{len(report.tokens)} timestamp tokens good; {len(report.awaiting)} file(s) awaiting tokens")
    for name, check in report.late:
        click.echo(f"  late: {name} anchored by {check.authority} only from {check.gen_time:%Y-%m-%dT%H:%M:%SZ}")
    if db is not None:
        click.echo(f"{db}: triggers whole, head matches, {report.rows_compared} rows as the record holds them, "
                   f"{report.unexported_rows} not yet exported")


def _verify_streams(found: dict, db, require_timestamps: bool, chain_only: bool, trust_dir) -> None:
    """Verify every stream of a record written by several jobs; fail naming the stream that does not verify."""
    from collector.evidence.verify import verify_record
    from collector.record.contents import check_folder
    from collector.record.store import open_read_only
    from collector.record.streams import MERGED, stream_of

    mine = None
    if db is not None:
        conn = open_read_only(db)
        mine = stream_of(conn)
        conn.close()
        if mine != MERGED and mine not in found:
            raise BadUsage(f"{db} is neither the working database of one of these streams nor the database "
                           "that merges them (export rebuild): --db compares either with the streams")
    for name, paths in found.items():
        shown = name or "(default)"
        try:
            if chain_only:
                click.echo(f"stream {shown}: {len(check_folder(paths))} export files, chain intact, content checked")
                continue
            report = verify_record(paths, trust_dir, db=db if name == mine else None,
                                   require_timestamps=require_timestamps)
        except TakedownWatchError as exc:
            raise click.ClickException(f"stream {shown}: {exc}") from exc
        click.echo(f"stream {shown}: {report.files} export files, chain intact, content checked, "
                   f"{report.signed} signatures good, {len(report.tokens)} timestamp tokens good, "
                   f"{len(report.awaiting)} file(s) awaiting tokens")
    if mine == MERGED and not chain_only:
        from collector.evidence.verify import verify_merged

        try:
            comparison = verify_merged(found, db)
        except TakedownWatchError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"{db}: triggers whole, {comparison.rows} rows as the streams that wrote them hold them")
    click.echo(f"{len(found)} streams verified")


@click.command("restore-triggers")
@click.option("--db", default=DEFAULT_DB, show_default=True, help="SQLite database found tampered with.")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder to compare with.")
@click.option("--operator", required=True, help="Your name: recorded with the act.")
@click.option("--reason", required=True, help="Why, and what you checked: recorded with the act.")
@edge
def restore_triggers_command(db, out_dir, operator, reason):
    """Put back missing or altered triggers after checking every row against the record.

    Refused when any row differs from the record (rebuild the database from
    the record instead). The act and what was found go into operator_actions,
    which the next export writes into the record.

    \b
    Example:
        python -m collector export restore-triggers --operator "A. Rahman" --reason "trigger dropped by a migration script; rows checked"
    """
    from collector.clock import Clock
    from collector.record.compare import compare_database
    from collector.record.integrity import restore_triggers
    from collector.record.store import Store

    comparison = compare_database(out_dir, db)
    if comparison.difference:
        raise BadUsage(f"refused: {comparison.difference}; rebuild the database from the record instead")
    store = Store(db)
    findings = restore_triggers(store, operator, reason, Clock().now_iso())
    store.close()
    click.echo(f"restored; recorded in operator_actions: {'; '.join(findings)}")


@click.command("wacz")
@click.option("--day", required=True, help="UTC day of the WARC files, YYYY-MM-DD.")
@click.option("--warc-dir", default=DEFAULT_WARC, show_default=True, help="Folder of WARC files (YYYY/MM/DD/).")
@click.option("--out", "out_dir", default="data/wacz", show_default=True, help="Folder the package is written to.")
@click.option("--key", envvar="TAKEDOWNWATCH_RECORD_KEY", default=None,
              help="SSH private key to sign the package with (or TAKEDOWNWATCH_RECORD_KEY).")
@click.option("--wacz-key", envvar="TAKEDOWNWATCH_WACZ_KEY", default=None,
              help="ECDSA P-384 private key (PEM) to sign the package inside, per the WACZ signing "
                   "specification's anonymous signature (or TAKEDOWNWATCH_WACZ_KEY).")
@edge
def wacz_command(day, warc_dir, out_dir, key, wacz_key):
    """Package one day's WARC files as a WACZ, sign it, validate it (and sign it beside: DAY.wacz.sig).

    With --wacz-key, datapackage-digest.json gets the WACZ signing
    specification's anonymous signedData, as ReplayWeb.page verifies it.

    \b
    Example:
        python -m collector export wacz --day 2026-09-01 --warc-dir downloaded --key record.key --wacz-key wacz.key
    """
    from collector.evidence import sshsig
    from collector.evidence.wacz import NAMESPACE, WaczError, package_day, validate
    from collector.evidence.wacz_signing import sign_package
    from collector.record.fileformat import file_sha256

    path = package_day(warc_dir, day, out_dir)
    if wacz_key:
        sign_package(path, wacz_key)
    valid, said = validate(path)
    if not valid:
        raise WaczError(f"{path} does not validate: {said.strip()[-300:]}")
    if key:
        sshsig.sign(path, key, NAMESPACE)
    done = [w for w, given in (("signed inside (WACZ signing 0.1.0)", wacz_key), ("signed beside (.sig)", key))
            if given]
    click.echo(f"{path}: valid WACZ, SHA-256 {file_sha256(path)}" + "".join(f", {d}" for d in done))


@click.command("verify-wacz")
@click.argument("package")
@click.option("--signers", default=f"{settings.TRUST_DIR}/wacz-signers.pem", show_default=True,
              help="PEM file of the public keys the record's WACZ packages may be signed with.")
@edge
def verify_wacz_command(package, signers):
    """Check a WACZ package's signature (datapackage-digest.json) against the record's WACZ keys.

    \b
    Example:
        python -m collector export verify-wacz data/wacz/2026-09-01.wacz
    """
    from collector.evidence.wacz_signing import verify_package

    click.echo(f"{package}: signature good, {verify_package(package, signers)}")


def register(export: click.Group) -> None:
    """Add the evidence commands to the export group."""
    for command in (sign_command, timestamp_command, verify_command, restore_triggers_command, wacz_command,
                    verify_wacz_command):
        export.add_command(command)


INCOMPLETE_EXIT_CODE = 3  # the bundle was written, but some WARC records could not be had


@click.command("evidence")
@click.argument("address")
@click.option("--out", "out_dir", required=True, help="Folder to write the bundle to (a zip is written beside it).")
@click.option("--db", default=DEFAULT_DB, show_default=True, help="SQLite database of the record.")
@click.option("--record", "record_dirs", multiple=True, default=[DEFAULT_OUT], show_default=True,
              help="Export folder; repeat it for the record repositories of successive periods, oldest first "
                   "(as for export verify --out): the bundle holds the rows of every period's files and the "
                   "chain across them.")
@click.option("--warc-dir", default=DEFAULT_WARC, show_default=True, help="Folder of WARC files.")
@click.option("--warc-store", default=None,
              help="GitHub API address of the repository whose releases hold the WARC files "
                   "(https://api.github.com/repos/OWNER/REPO): a record not in --warc-dir is read from its "
                   "release asset, each download a ledger row; token from GH_TOKEN or GITHUB_TOKEN.")
@click.option("--vantage", default=None, help="Name of the network location downloads come from.")
@click.option("--min-interval", type=float, default=None, help="As for `run`: below 2 s only for loopback.")
@_trust_option
@edge
def evidence_command(address, out_dir, db, record_dirs, warc_dir, warc_store, vantage, min_interval, trust_dir):
    """Write the evidence bundle of one article: rows, requests, WARC records, signed record lines, tokens.

    The folder has VERIFY.md (English and Bangla) and verify.py, which checks
    it offline with the standard library only. Never published. A WARC record
    neither in --warc-dir nor to be had from --warc-store leaves the bundle
    incomplete: it is written, lists each such record and why in rows.json,
    and the command exits 3 (verify.py exits 2 on it). A record of several
    streams is read through the database that merges them (export rebuild):
    the bundle holds every stream's rows, each with its stream's own chain.
    A record that rolled over into a new period's repository is given as
    every period's folder, oldest first: the bundle holds the rows from each
    period's files, and each stream's chain runs on across the boundary.

    \b
    Example:
        python -m collector evidence https://www.prothomalo.com/bangladesh/abc --out bundle-abc \\
            --warc-store https://api.github.com/repos/OWNER/REPO
        python -m collector evidence https://www.prothomalo.com/bangladesh/abc --out bundle-abc \\
            --record record-2026-07 --record record-2027-01
    """
    from collector.evidence.bundle import write_bundle
    from collector.record.store import open_read_only

    interval, loopback = _interval(min_interval, [warc_store] if warc_store else [])
    opened = []

    def releases():
        from collector.collect.context import RunContext, default_vantage
        from collector.net.releases import ReleaseStore, token_from_env
        from collector.record.store import Store

        ctx = RunContext.open(Store(db), "evidence", clock=make_clock(None), vantage=vantage or default_vantage(),
                              warc_dir=warc_dir, interval=interval, allow_loopback=loopback)
        opened.append(ctx)
        return ReleaseStore(ctx.fetcher, warc_store, token_from_env())

    conn = open_read_only(db)
    try:
        bundle = write_bundle(conn, address, Path(out_dir), [Path(r) for r in record_dirs], Path(warc_dir),
                              Path(trust_dir), releases if warc_store else None)
    finally:
        conn.close()
        for ctx in opened:
            ctx.finish()
            ctx.store.close()
    if bundle.downloads:
        click.echo(f"{len(bundle.downloads)} download request(s) from {warc_store}, each in the ledger", err=True)
    for item in bundle.missing:
        click.echo(f"incomplete: request {item['request_id']} ({item['warc_file']}): {item['why']}", err=True)
    click.echo(f"wrote {out_dir}/ and {bundle.archive}: check it with `python3 verify.py` in the folder")
    if not bundle.complete:
        click.echo(f"INCOMPLETE: {len(bundle.missing)} WARC record(s) not in the bundle (listed in rows.json)",
                   err=True)
        raise SystemExit(INCOMPLETE_EXIT_CODE)
