"""A job's database saved after its time-stamping run resumes only when that run's rows were exported too."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from collector.clock import Clock
from collector.collect.context import RunContext
from collector.record import export, rebuild
from collector.record.fileformat import ExportError
from collector.record.store import Store

T = datetime(2026, 12, 1, 12, 7, tzinfo=timezone.utc)


def _job(tmp_path, second_export: bool):
    """One collect job's steps on its database: run, export, time-stamp (a run of its own), maybe export again."""
    store = Store(tmp_path / "work.db")
    RunContext.open(store, "run", clock=Clock(T), vantage="test", warc_dir=tmp_path / "warc",
                    allow_loopback=True).finish()
    first = export.export_new(store, tmp_path / "record", warc_dir=tmp_path / "warc", now=T)
    # export timestamp opens a run like this one; its requests to the authorities are ledger rows too.
    RunContext.open(store, "timestamp", clock=Clock(T + timedelta(minutes=5)), vantage="test",
                    warc_dir=tmp_path / "warc", allow_loopback=True).finish()
    second = export.export_new(store, tmp_path / "record", warc_dir=tmp_path / "warc",
                               now=T + timedelta(minutes=6)) if second_export else None
    store.checkpoint()
    store.close()
    return first, second


def test_the_time_stamping_runs_rows_exported_the_saved_database_resumes(tmp_path):
    first, second = _job(tmp_path, second_export=True)
    assert first.path is not None and second.path is not None and second.rows["runs"] == 1
    files, _ = rebuild.resume(tmp_path / "record", tmp_path / "work.db")
    assert files == 0  # in sync with the pushed record: nothing to read, nothing rebuilt


def test_without_that_export_the_next_job_would_have_to_rebuild_from_the_whole_record(tmp_path):
    _job(tmp_path, second_export=False)
    with pytest.raises(ExportError, match="runs rows after the record's last"):
        rebuild.resume(tmp_path / "record", tmp_path / "work.db")
