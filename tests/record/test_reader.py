"""Any value of any row read back from the record's files, a {"$same"} chain followed across files to its value."""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector.record import export, reader
from collector.record.fileformat import ENTRY_TABLE, REPEATS, ExportError, read_lines
from tests.record.test_export import DAY, TEXT, _run, _snapshot, small  # noqa: F401 (small: the fixture)

EDITED = TEXT + " সংশোধিত।"


@pytest.fixture
def chained(small):  # noqa: F811
    """Return (database, record files): one article's five snapshots over five files, its text edited once."""
    store, article, folder = small
    export.export_new(store, folder, now=DAY)
    for hour, text in enumerate((TEXT, EDITED, EDITED, EDITED), start=1):
        run = _run(store, DAY + timedelta(hours=hour))
        _snapshot(store, run, article, text, purpose="recheck")
        export.export_new(store, folder, now=DAY + timedelta(hours=hour))
    return store, reader.record_files(folder)


def test_every_repeated_value_reads_back_as_the_database_holds_it(chained):
    store, files = chained
    assert len(files) == 5
    written = [line for path in files for line in read_lines(path) if line.get("t") == "snapshots"]
    assert [line["r"]["text"] for line in written][1:] == [{"$same": 1}, EDITED, {"$same": 3}, {"$same": 4}]
    for table in ("snapshots", "runs"):
        for held in store.query(f"SELECT * FROM {table}"):
            for column in [*REPEATS[table], "id"]:
                assert reader.value(files, table, held["id"], column) == held[column], (table, held["id"], column)
    assert reader.row(files, "snapshots", 5)["text"] == {"$same": 4}  # as the line holds it
    columns = [*REPEATS["snapshots"], "id", "no_such_column"]  # several at once, the line read once
    for snapshot in (1, 5, 6):
        assert reader.values(files, "snapshots", snapshot, columns) == {
            c: reader.value(files, "snapshots", snapshot, c) for c in columns}


def test_what_the_record_does_not_hold_is_missing_never_a_guess(chained, monkeypatch):
    _store, files = chained
    assert reader.value(files, "snapshots", 6, "text") is reader.MISSING  # past the last file
    assert reader.value(files, "snapshots", 2, "no_such_column") is reader.MISSING
    assert reader.value(files[3:], "snapshots", 5, "text") is reader.MISSING  # its chain leads before the checkout
    assert reader.value(files[2:], "snapshots", 5, "text") == EDITED  # ... unless it ends inside it
    monkeypatch.setattr(reader, "MAX_CHAIN", 1)
    assert reader.value(files, "snapshots", 5, "text") is reader.MISSING  # 5 -> 4 -> 3: longer than allowed
    assert reader.value(files, "snapshots", 4, "text") == EDITED
    with pytest.raises(ExportError, match="parts of their listing"):
        reader.row(files, ENTRY_TABLE, 1)


def test_the_file_holding_a_row_is_found_by_headers(chained):
    _store, files = chained
    assert [reader.file_holding(files, "snapshots", i) for i in range(1, 6)] == files
    assert reader.file_holding(files, "snapshots", 0) is None
    assert reader.file_holding(files, "checks", 1) is None  # a table no file holds
