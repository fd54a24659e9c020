"""The command line: documented commands, clear refusals, and exit codes that mean what they say."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from testing import replica
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME.isoformat()


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def all_commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from all_commands(command, prefix + (name,))


@pytest.mark.parametrize("path", [p for p, _ in all_commands(cli)], ids=lambda p: " ".join(p))
def test_every_command_documents_an_example(path):
    result = invoke(*path, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output, f"{' '.join(path)} --help has no example"


def test_top_level_help_lists_the_commands():
    result = invoke("--help")
    for name in ("run", "discover", "archive"):
        assert name in result.output


@pytest.fixture
def loopback_outlet(farm, tmp_path):
    host = farm.add()
    host.routes.update({
        "/robots.txt": Reply(404),
        "/": Reply(200, replica.homepage("/rss/rss.xml")),
        "/rss/rss.xml": Reply(200, replica.moved_feed("bd24live", host.base), content_type="application/rss+xml"),
    })
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"bd24live": host}), encoding="utf-8")
    return host, registry


def common(tmp_path, registry):
    return ["--db", str(tmp_path / "r.db"), "--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry),
            "--now", NOW, "--vantage", "cli-test"]


def test_discover_prints_what_it_tried(loopback_outlet, tmp_path):
    host, registry = loopback_outlet
    result = invoke("discover", *common(tmp_path, registry), "--min-interval", "0.05", "--outlet", "bd24live")
    assert result.exit_code == 0, result.output
    assert "homepage_link" in result.output and "valid" in result.output
    assert "source: rss" in result.output and host.url("/rss/rss.xml") in result.output


def test_run_exits_zero_and_records_the_vantage(loopback_outlet, tmp_path):
    _host, registry = loopback_outlet
    result = invoke("run", *common(tmp_path, registry), "--min-interval", "0.05")
    assert result.exit_code == 0, result.output
    db = sqlite3.connect(tmp_path / "r.db")
    assert {r[0] for r in db.execute("SELECT vantage FROM requests")} == {"cli-test"}
    assert db.execute("SELECT COUNT(*) FROM run_finishes").fetchone()[0] == 1


def test_run_exits_zero_when_every_site_fails(farm, tmp_path):
    dead = farm.add({"/*": Reply(503)})
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"dead": dead}), encoding="utf-8")
    result = invoke("run", *common(tmp_path, registry), "--min-interval", "0.05")
    assert result.exit_code == 0, result.output
    db = sqlite3.connect(tmp_path / "r.db")
    results = {r[0] for r in db.execute("SELECT result FROM requests")}
    assert results == {"server_error", "robots_unreachable"}


def test_reduced_interval_refused_for_real_hosts(tmp_path):
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--outlets", "data/outlets.toml", "--min-interval", "0.1")
    assert result.exit_code == 2
    assert "loopback" in result.output and "bdnews24.com" in result.output
    assert not (tmp_path / "r.db").exists()  # refused before anything was opened or sent


def test_malformed_registry_stops_before_any_request(tmp_path, farm):
    host = farm.add({"/*": Reply(200)})
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"x": host}) + '\n[outlets.y]\nname = "Y"\n', encoding="utf-8")
    result = invoke("run", *common(tmp_path, registry), "--min-interval", "0.05")
    assert result.exit_code == 1
    assert str(registry) in result.output and "line" in result.output
    assert host.seen == []


def test_bad_now_is_a_clear_error(loopback_outlet, tmp_path):
    _host, registry = loopback_outlet
    result = invoke("run", "--outlets", str(registry), "--now", "yesterday", "--min-interval", "0.05")
    assert result.exit_code == 2 and "ISO-8601" in result.output


def test_unwritable_database_is_an_error(loopback_outlet, tmp_path):
    _host, registry = loopback_outlet
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = invoke("run", "--db", str(blocker / "r.db"), "--outlets", str(registry), "--min-interval", "0.05")
    assert result.exit_code == 1
    assert "cannot open database" in result.output


FULL_DISK = """
import sys
from collector.cli import main
from collector.record.store import Store

SPARE = int(sys.argv.pop(1))

def open_store(db):
    store = Store(db)
    # In WAL mode pages reach the file only at a checkpoint; with a rollback journal every
    # commit writes the file, so the limit below is met during the run.
    store.conn.execute("PRAGMA journal_mode = DELETE")
    store.conn.execute("VACUUM")  # no free pages left over from the migrations: growth needs new ones
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own limit on the file's size: past it every write fails with SQLITE_FULL,
    # "database or disk is full", exactly as on a full disk.
    store.conn.execute(f"PRAGMA max_page_count = {pages + SPARE}")
    return store

main.open_store = open_store
main.main()
"""


@pytest.mark.parametrize("spare_pages", [0, 1, 6])
def test_a_full_disk_ends_the_run_with_a_clear_message_and_no_finished_row(loopback_outlet, tmp_path,
                                                                            spare_pages):
    import subprocess
    import sys

    host, registry = loopback_outlet
    host.routes["/*"] = replica.article_route(replica.article_page(), host.base)  # captures fill pages
    db = tmp_path / "r.db"
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(spare_pages), "run", *common(tmp_path, registry),
                           "--min-interval", "0.05"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot write the database" in done.stderr and "database or disk is full" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 3, done.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM run_finishes").fetchone()[0] == 0
    if spare_pages:  # the disk filled during the run: its row is there, unfinished
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    conn.close()


# -- bad arguments write nothing ----------------------------------------------------------

@pytest.mark.parametrize("command", ["run", "discover"])
def test_an_unknown_outlet_is_refused_before_the_database_is_touched(loopback_outlet, tmp_path, command):
    host, registry = loopback_outlet
    result = invoke(command, *common(tmp_path, registry), "--min-interval", "0.05", "--outlet", "no-such-outlet")
    assert result.exit_code == 2, result.output
    assert "unknown outlet id(s): no-such-outlet" in result.output
    assert not (tmp_path / "r.db").exists() and host.seen == []


@pytest.mark.parametrize("command", ["run", "discover", "archive"])
def test_now_without_a_time_zone_is_refused_not_read_as_utc(loopback_outlet, tmp_path, command):
    host, registry = loopback_outlet
    args = ["--db", str(tmp_path / "r.db"), "--outlets", str(registry), "--now", "2026-08-13T10:30:00"]
    args += ["--outlet", "bd24live"] if command == "discover" else []
    args += ["--min-interval", "0.05"] if command != "archive" else ["--base-url", host.base]
    result = invoke(command, *args)
    assert result.exit_code == 2, result.output
    assert "names no time zone" in result.output
    assert not (tmp_path / "r.db").exists() and host.seen == []


@pytest.mark.parametrize("now", ["2026-08-13T10:30:00+06:00", "2026-08-13T04:30:00Z"])
def test_now_with_a_time_zone_is_the_same_instant_whatever_its_offset(loopback_outlet, tmp_path, now):
    _host, registry = loopback_outlet
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--warc-dir", str(tmp_path / "warc"),
                    "--outlets", str(registry), "--now", now, "--min-interval", "0.05")
    assert result.exit_code == 0, result.output
    started = sqlite3.connect(tmp_path / "r.db").execute("SELECT started_at FROM runs").fetchone()[0]
    assert started.startswith("2026-08-13T04:30:0")
