"""The page as captured in a real browser: its scripts do not run and it reaches no outlet.

Datasette is served for real (`datasette serve` with the project's plugins,
on loopback) and headless Chromium opens the captured page and its frame
page. The captured page carries an inline script, a style sheet, an image
and a fetch() pointed at a loopback host playing the outlet: the host must
see no request, and the DOM must be as served. Skipped without Debian's
chromium (apt-get install chromium).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from collector.net.warc import WarcLog
from collector.record.store import Store
from testing.farm import Farm
from tests.browse import record
from tests.browse.conftest import PLUGINS, ROOT

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", "--virtual-time-budget=3000"]


def hostile_page(outlet: str) -> bytes:
    return (f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>ধরা</title>'
            f'<link rel="stylesheet" href="{outlet}/style.css"></head><body><h1 id="h">র\u200d্যাব</h1>'
            f"<script>document.getElementById('h').setAttribute('data-ran','yes');"
            f"fetch('{outlet}/beacon');</script><img src=\"{outlet}/pixel.png\">"
            f'<a id="away" href="{outlet}/elsewhere">elsewhere</a></body></html>').encode()


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Yield (base URL of a real Datasette, the outlet host) over a record of one hostile page."""
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed: apt-get install chromium")
    folder = tmp_path_factory.mktemp("hostile")
    with Farm() as farm:
        outlet = farm.add()
        store = Store(folder / "hostile.db")
        run = record.run_row(store)
        warc = WarcLog(folder / "warc", run, record.START)
        article = store.insert("articles", {"outlet_id": "jago", "url_key": "k", "url": outlet.url("/a"),
                                            "first_seen_at": "a", "first_seen_run": run})
        record.capture(store, warc, run, article, outlet.url("/a"), hostile_page(outlet.base),
                       record.START + timedelta(minutes=1), "capture")
        warc.close()
        store.close()
        port = _port()
        server = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "datasette"), "serve", str(folder / "hostile.db"), "--host", "127.0.0.1",
             "--port", str(port), "--plugins-dir", str(PLUGINS)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(base + "/-/versions.json", timeout=5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            yield base, outlet, folder
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def chromium(folder: Path, *args: str) -> str:
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={folder / 'profile'}", *args],
                          capture_output=True, text=True, timeout=90)
    return done.stdout


def test_the_captured_page_runs_no_script_and_fetches_nothing(served):
    base, outlet, folder = served
    dom = chromium(folder, "--dump-dom", f"{base}/hostile/-/captured/1/page")
    assert '<h1 id="h">র\u200d্যাব</h1>' in dom  # shown, its ZWJ as served, and untouched:
    assert 'data-ran="yes"' not in dom  # the inline script that sets this attribute did not run
    assert outlet.seen == []  # no style sheet, image or beacon reached the outlet


def test_the_frame_page_shows_it_and_still_nothing_reaches_the_outlet(served):
    base, outlet, folder = served
    shot = folder / "frame.png"
    chromium(folder, "--window-size=1280,900", f"--screenshot={shot}", f"{base}/hostile/-/captured/1")
    assert shot.stat().st_size > 10_000
    assert outlet.seen == []
