"""The ledger holds every request before it is sent, and the next run closes what a kill left open."""

from __future__ import annotations

import sqlite3

from collector.clock import Clock
from collector.collect.context import RunContext
from collector.net.wire import new_pool, send_once
from testing.farm import Reply


def test_the_intent_is_committed_before_the_server_sees_the_request(farm, make_ctx, tmp_path):
    seen_in_db = []

    def route(handler):
        # Another connection, as another process would read it: only what is committed.
        conn = sqlite3.connect(tmp_path / "record.db")
        seen_in_db.append(conn.execute("SELECT COUNT(*) FROM request_intents WHERE url LIKE ?",
                                       (f"%{handler.path}",)).fetchone()[0])
        conn.close()
        return Reply(200, b"<html>ok</html>")

    host = farm.add({"/page": route, "/robots.txt": Reply(404, b"")})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/page"), purpose="capture")
    assert response.ok and seen_in_db == [1]
    row = ctx.store.one("SELECT * FROM requests WHERE id = ?", (response.request_id,))
    intent = ctx.store.one("SELECT * FROM request_intents WHERE id = ?", (row["intent_id"],))
    assert (intent["url"], intent["purpose"], intent["attempt"]) == (row["url"], "capture", 1)


def _killed_exchange(ctx, url: str) -> int:
    """Return the intent of a request sent and written to WARC by a run that died before its row."""
    intent = ctx.fetcher.ledger.intend("GET", url, purpose="capture", outlet_id=None, attempt=1,
                                       redirected_from=None)
    send_once(new_pool(), "GET", url, data=None, headers=None, timeouts=(2, 2, 3), max_bytes=10**6,
              clock=ctx.clock, warc=ctx.fetcher.ledger.warc_for(intent))
    ctx.warc.close()
    return intent


def _next_run(store, tmp_path) -> RunContext:
    ctx = RunContext.open(store, "test", clock=Clock(), vantage="test-vantage", warc_dir=tmp_path / "warc",
                          allow_loopback=True, interval=0.05)
    ctx.warc.close()
    return ctx


def test_the_next_run_closes_a_killed_request_from_its_warc_record(farm, make_ctx, store, tmp_path):
    host = farm.add({"/page": Reply(200, b"<html>kept</html>")})
    killed = make_ctx()
    intent = _killed_exchange(killed, host.url("/page"))
    never_sent = killed.fetcher.ledger.intend("GET", host.url("/other"), purpose="capture", outlet_id=None,
                                              attempt=1, redirected_from=None)
    after = _next_run(store, tmp_path)
    assert after.counts["interrupted_requests_closed"] == 2
    rows = {r["intent_id"]: r for r in store.query("SELECT * FROM requests WHERE result = 'interrupted'")}
    found = rows[intent]
    assert found["run_id"] == killed.run_id and found["status_code"] == 200 and found["sent"] == 1
    assert found["warc_file"] == killed.warc.relative and "written to WARC" in found["detail"]
    from collector.net.warcread import read_response_body
    assert read_response_body(tmp_path / "warc", found["warc_file"], found["warc_offset"])[0] == b"<html>kept</html>"
    unknown = rows[never_sent]
    assert unknown["warc_file"] is None and unknown["status_code"] is None and "unknown" in unknown["detail"]
    # Closed once: a later run finds nothing open.
    assert "interrupted_requests_closed" not in _next_run(store, tmp_path).counts


def test_a_torn_response_record_is_not_taken_for_the_response(farm, make_ctx, store, tmp_path):
    host = farm.add({"/page": Reply(200, b"x" * 50_000)})
    killed = make_ctx()
    _killed_exchange(killed, host.url("/page"))
    data = killed.warc.path.read_bytes()
    start = data.rfind(b"\x1f\x8b\x08", 0, data.rfind(b"\x1f\x8b\x08"))  # the response record's member
    killed.warc.path.write_bytes(data[: start + (len(data) - start) // 3])
    _next_run(store, tmp_path)
    row = store.one("SELECT * FROM requests WHERE result = 'interrupted'")
    assert row["warc_file"] is None and "unknown" in row["detail"]


def test_a_finished_run_has_no_open_intent(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404, b""), "/a": Reply(500, b"")})
    ctx = make_ctx()
    ctx.fetcher.get(host.url("/a"), purpose="capture")
    ctx.finish()
    assert ctx.store.one("SELECT COUNT(*) AS n FROM request_intents i WHERE NOT EXISTS "
                         "(SELECT 1 FROM requests r WHERE r.intent_id = i.id)")["n"] == 0
    assert ctx.store.one("SELECT COUNT(*) AS n FROM request_intents")["n"] == 4  # robots + 3 attempts
