"""A site that answers by the client's source address, and two vantages' collect jobs against it.

What the method calls a difference by vantage: one network location reaches an article while the
other gets a block page or a different text. On loopback the two vantages are two source addresses,
127.0.0.2 inside and 127.0.0.3 outside (`run --source-address`: urllib3's source_address, the
address outgoing connections are bound to, collector/net/wire.py new_pool); the block page is the
plain 403 answer a geographic block gives (no challenge, no script).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from collector.cli.main import cli
from collector.record import streams
from testing import replica
from testing.farm import Reply

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = "127.0.0.3"
BLOCK_PAGE = b"<html><body><h1>Access denied</h1><p>Not available in your region.</p></body></html>"
# Each stream: (vantage, vantage slot, source address).
STREAMS = {"inside-1of1": ("inside", "1/2", "127.0.0.2"), "outside-1of1": ("outside", "2/2", OUTSIDE)}


def site_by_source_address(farm, tmp_path: Path, paths: Collection[str], now: datetime,
                           blocked: Callable[[str], bool], edited: Callable[[str], bool] = lambda path: False,
                           other_page: str | None = None):
    """Return (the host, its registry file) of one site listing `paths`.

    The outside address gets a block page for the paths `blocked` says and `other_page` for those
    `edited` says; every other request gets the article.
    """
    host = farm.add()
    page = replica.article_page()
    other = replica.article_page(other_page) if other_page else page

    def by_source(handler):
        path = handler.path.split("?")[0]
        if handler.client_address[0] == OUTSIDE and blocked(path):
            return Reply(403, BLOCK_PAGE)
        if handler.client_address[0] == OUTSIDE and edited(path):
            return Reply(200, other)
        return Reply(200, page)

    articles = [host.url(p) for p in paths]
    host.routes.update({
        "/robots.txt": replica.robots([host.url("/news.xml")]),
        "/news.xml": Reply(200, replica.news_sitemap([(a, now) for a in articles]), content_type="application/xml"),
        "/news/*": by_source,
    })
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"one": host}), encoding="utf-8")
    return host, registry


def collect_both_vantages(tmp_path: Path, registry: Path, record: Path, at: datetime) -> None:
    """Both vantages' collect jobs at once, each its own process, source address, stream, database and export."""
    runs = []
    for name, (vantage, slot, source) in STREAMS.items():
        runs.append(subprocess.Popen(
            [sys.executable, "-m", "collector", "run", "--db", str(tmp_path / f"{name}.db"),
             "--warc-dir", str(tmp_path / f"warc-{name}"), "--outlets", str(registry), "--vantage", vantage,
             "--vantage-slot", slot, "--source-address", source, "--stream", name,
             "--now", at.isoformat(), "--min-interval", "0.05"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    for run in runs:
        out, _ = run.communicate(timeout=120)
        assert run.returncode == 0, out.decode()
    for name in STREAMS:  # each job exports its own stream
        result = CliRunner().invoke(cli, ["export", "new", "--db", str(tmp_path / f"{name}.db"), "--out",
                                          str(streams.folder(record, name)), "--warc-dir",
                                          str(tmp_path / f"warc-{name}")], catch_exceptions=False)
        assert result.exit_code == 0, result.output
