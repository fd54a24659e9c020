"""The one bounded inflate: caps, gzip members, zlib and raw deflate, cut streams."""

from __future__ import annotations

import ast
import gzip
import zlib
from pathlib import Path

import pytest

from collector.parse.inflate import GZIP, GZIP_OR_ZLIB, RAW_DEFLATE, InflateError, TooLarge, inflate

ROOT = Path(__file__).resolve().parents[2]
TEXT = "খবর নিজস্ব প্রতিবেদক ".encode() * 400


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize("packed, wbits", [
    (gzip.compress(TEXT), GZIP),
    (gzip.compress(TEXT), GZIP_OR_ZLIB),
    (zlib.compress(TEXT), GZIP_OR_ZLIB),
    (_raw_deflate(TEXT), RAW_DEFLATE),
    (gzip.compress(TEXT[:100]) + gzip.compress(TEXT[100:]), GZIP),  # two members, RFC 1952 2.2
    (gzip.compress(TEXT) + b"\0" * 32, GZIP),  # zero padding after the last member
])
def test_whole_streams_come_back_whole(packed, wbits):
    assert inflate(packed, len(TEXT), wbits) == TEXT


def test_the_cap_stops_a_bomb_without_inflating_it():
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
    with pytest.raises(TooLarge):
        inflate(bomb, 1024 * 1024)
    assert inflate(gzip.compress(TEXT), len(TEXT)) == TEXT  # exactly the cap is allowed
    with pytest.raises(TooLarge):
        inflate(gzip.compress(TEXT), len(TEXT) - 1)


@pytest.mark.parametrize("packed", [gzip.compress(TEXT)[:-20], b"\x1f\x8bnot gzip at all"])
def test_a_cut_or_damaged_stream_is_an_error(packed):
    with pytest.raises(InflateError):
        inflate(packed, 10 * len(TEXT))


def test_only_one_module_inflates():
    # Issue 14: the bounded inflate existed twice (the wire and the sitemap reader).
    users = []
    for path in (ROOT / "collector").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "decompressobj":
                users.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(users)) == ["collector/parse/inflate.py"]
