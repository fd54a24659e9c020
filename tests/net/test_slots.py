"""Vantage slots: several collector processes keep one request per interval at every site."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from collector import settings
from collector.errors import BadArgument
from collector.net.slots import VantageSlots, vantage_slots
from testing import replica
from testing.farm import Reply

ROOT = Path(__file__).resolve().parents[2]
TWO = [VantageSlots(k, 2, 2.0, 1.0) for k in (1, 2)]  # slots of 3 s, cycles of 6 s, windows of 0.5 s


@pytest.mark.parametrize("slots, epoch, expected", [
    (VantageSlots(1, 1, 2.0, 1.0), 12.34, 12.34),  # one vantage: no slots
    (TWO[0], 0.2, 0.2), (TWO[0], 0.5, 6.0), (TWO[0], 5.9, 6.0), (TWO[0], 6.49, 6.49),
    (TWO[1], 0.2, 3.0), (TWO[1], 3.4, 3.4), (TWO[1], 3.5, 9.0), (TWO[1], 8.0, 9.0),
])
def test_next_start(slots, epoch, expected):
    assert slots.next_start(epoch) == pytest.approx(expected)


def test_starts_of_different_vantages_are_an_interval_and_half_the_margin_apart():
    rng = random.Random(7)
    for count in (2, 3, 4):
        vantages = [VantageSlots(k, count, 2.0, 1.0) for k in range(1, count + 1)]
        starts = sorted((v.next_start(rng.uniform(0, 600)), v.index) for v in vantages for _ in range(400))
        for (a, va), (b, vb) in zip(starts, starts[1:]):
            if va != vb:
                assert b - a >= 2.0 + 0.5 - 1e-9


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", ""])
def test_a_bad_slot_is_refused(text):
    with pytest.raises(BadArgument):
        vantage_slots(text, 2.0)


def test_the_margin_scales_with_the_interval():
    assert vantage_slots("2/3", 2.0).margin == 2.0 * settings.VANTAGE_SLOT_MARGIN_SHARE
    assert vantage_slots("1/1", 0.2).slot == pytest.approx(0.2 * (1 + settings.VANTAGE_SLOT_MARGIN_SHARE))


INTERVAL = 0.2


def _two_vantages(farm, tmp_path, slots: tuple[str, str]) -> list[float]:
    """Run two collector processes at once against one host; return the gaps the host saw."""
    host = farm.add()
    articles = [host.url(f"/news/{n}") for n in range(6)]
    host.routes.update({
        "/robots.txt": replica.robots([host.url("/news.xml")]),
        "/news.xml": Reply(200, replica.news_sitemap([(a, replica.FEED_SNAPSHOT_TIME) for a in articles]),
                           content_type="application/xml"),
        "/news/*": replica.article_route(replica.article_page(), host.base),
    })
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"one": host}), encoding="utf-8")
    runs = []
    for n, slot in enumerate(slots):
        runs.append(subprocess.Popen(
            [sys.executable, "-m", "collector", "run", "--db", str(tmp_path / f"{n}.db"),
             "--warc-dir", str(tmp_path / f"warc{n}"), "--outlets", str(registry), "--vantage", f"v{n}",
             "--now", replica.FEED_SNAPSHOT_TIME.isoformat(), "--min-interval", str(INTERVAL),
             "--vantage-slot", slot],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    for run in runs:
        out, _ = run.communicate(timeout=120)
        assert run.returncode == 0, out.decode()
    assert len(host.seen) >= 2 * 8, host.paths_seen()
    return host.gaps()


def test_two_vantages_in_their_slots_never_come_closer_than_the_interval(farm, tmp_path):
    gaps = _two_vantages(farm, tmp_path, ("1/2", "2/2"))
    assert min(gaps) >= INTERVAL - 0.015, sorted(gaps)[:5]  # 0.015: the test servers' own stamping jitter


def test_without_slots_two_vantages_do_come_closer(farm, tmp_path):
    """The control: the farm would see the collision the slots prevent."""
    gaps = _two_vantages(farm, tmp_path, ("1/1", "1/1"))
    assert min(gaps) < INTERVAL - 0.015
