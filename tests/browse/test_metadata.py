"""Issue 19, item 1: any copy of the record is served with its titles, descriptions and canned queries.

Datasette names a database after its file; the metadata names one database,
`takedownwatch`. Before, demo-output/demo.db showed neither descriptions nor
canned queries, and search was silently dropped.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request
from urllib.parse import quote

import pytest
import yaml

from tests.browse.conftest import METADATA_FILE, ROOT

RECORD = yaml.safe_load(METADATA_FILE.read_text(encoding="utf-8"))["databases"]["takedownwatch"]
NAMES = ["demo.db", "takedown watch.2026-08.db"]  # the demo's name, and one with a space and a dot


@pytest.mark.parametrize("name", NAMES)
def test_a_copy_under_any_name_has_the_record_metadata(copy_named, browse, name):
    path = copy_named(name)
    browser = browse(path)
    db = browser.datasette.get_database(path.stem)
    route = browser.datasette.urls.database(db.name)
    database = browser.get(f"{route}.json")
    assert database.status_code == 200
    queries = {q["name"]: q.get("title") for q in database.json()["queries"]}
    assert queries == {n: q["title"] for n, q in RECORD["queries"].items()}
    page = browser.get(route)
    assert RECORD["queries"]["events_review_order"]["title"] in page.text
    table = browser.get(browser.datasette.urls.table(db.name, "snapshots"))
    assert "Each successful HTML capture of an article" in table.text  # the table's description
    assert "<dt>id</dt><dd>Snapshot id.</dd>" in table.text  # a column's description
    assert '<input id="_search" type="search" name="_search"' in table.text  # the search box
    canned = browser.get(f"{route}/events_review_order.json?_shape=array")
    assert canned.status_code == 200 and [e["kind"] for e in canned.json()] == ["changed"]
    searched = browser.get(f"{route}/snapshots.json?_search={quote('ইজারাদারের')}&_shape=array&_col=id")
    assert sorted(r["id"] for r in searched.json()) == [1, 2, 3]


def test_a_database_that_is_not_the_record_gets_none_of_it(copy_named, browse, tmp_path):
    other = tmp_path / "notes.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    browser = browse(copy_named("demo.db"), other)
    assert browser.get("/notes.json").json()["queries"] == []
    assert len(browser.get("/demo.json").json()["queries"]) == len(RECORD["queries"])
    assert browser.datasette.metadata("title") == "Takedown Watch record"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, deadline: float):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return json.loads(answer.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_make_browse_serves_a_copy_under_another_name(copy_named):
    """The command the demo prints, run for real: `make browse DB=... PORT=...` on loopback."""
    path, port = copy_named("demo.db"), _free_port()
    server = subprocess.Popen(["make", "-s", "browse", f"DB={path}", f"PORT={port}"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        database = _get(f"http://127.0.0.1:{port}/demo.json", deadline)
        assert {q["name"] for q in database["queries"]} == set(RECORD["queries"])
        nothing = _get(f"http://127.0.0.1:{port}/demo/snapshots.json?_search=qzxvwplk&_shape=array", deadline)
        assert nothing == []
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
