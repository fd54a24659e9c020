"""Fixtures for browsing the record with Datasette: a record with real pages in WARC, and a client."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml
from datasette.app import Datasette

from tests.browse import record

ROOT = Path(__file__).resolve().parent.parent.parent
PLUGINS = ROOT / "datasette" / "plugins"
METADATA_FILE = ROOT / "datasette" / "metadata.yml"


class Browser:
    """One Datasette, as `make browse` starts it, answering requests through Datasette's own test client."""

    def __init__(self, files: list[Path], metadata: dict | None = None, plugins: bool = True):
        self.loop = asyncio.new_event_loop()
        if metadata is None:
            metadata = yaml.safe_load(METADATA_FILE.read_text(encoding="utf-8"))
        self.datasette = Datasette([str(f) for f in files], metadata=metadata,
                                   plugins_dir=str(PLUGINS) if plugins else None)
        self.loop.run_until_complete(self.datasette.invoke_startup())

    def get(self, path: str, **kwargs):
        return self.loop.run_until_complete(self.datasette.client.get(path, **kwargs))

    def close(self) -> None:
        self.loop.close()


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> tuple[Path, dict]:
    """Return (database, what it holds): the record of tests/browse/record.py, WARC files beside it."""
    folder = tmp_path_factory.mktemp("record")
    path = folder / "takedownwatch.db"
    found = record.build(path, folder / "warc")
    return path, found


@pytest.fixture
def copy_named(recorded, tmp_path):
    """Return a function copying the record (and its warc folder) under another file name."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copyfile(recorded[0], target)
        if not (tmp_path / "warc").exists():
            shutil.copytree(recorded[0].parent / "warc", tmp_path / "warc")
        return target

    return copy


@pytest.fixture
def browse():
    """Return a function starting a Browser over some files; every one started is closed after the test."""
    started: list[Browser] = []

    def start(*files: Path, **kwargs) -> Browser:
        started.append(Browser(list(files), **kwargs))
        return started[-1]

    yield start
    for browser in started:
        browser.close()
