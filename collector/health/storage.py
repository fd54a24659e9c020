"""Storage checks: the working databases against their bound, the record repository against 5 GB, release
assets a day, restores that fell back to a rebuild (collector/health/jobs.py), the Actions cache against 10 GB."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from collector import settings
from collector.clock import iso
from collector.health.checks import OK, Check, Finding, Inputs, grade
from collector.health.jobs import rebuilds
from collector.record.follow import parts_folder

_GB = 10**9


def database_files(db_path: Path) -> list[Path]:
    """Return the database and each stream's own database beside it (a following database's DB.streams/)."""
    parts = parts_folder(db_path)
    return [db_path, *(sorted(parts.glob("*.db")) if parts.is_dir() else [])]


def file_bytes(path: Path) -> int:
    """Return a SQLite database's bytes with its write-ahead log."""
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def databases(inputs: Inputs) -> list[Finding]:
    """Return per database file its size as a share of the working database's bound."""
    bound = inputs.database_bound or settings.HEALTH_DATABASE_BOUND_BYTES
    out = []
    for path in database_files(inputs.db_path):
        size = file_bytes(path)
        value = round(size / bound, 3)
        out.append(Finding("storage-database", path.name, grade(value, settings.HEALTH_DATABASE_SHARE), value,
                           settings.HEALTH_DATABASE_SHARE, f"{size / _GB:.3f} GB of a {bound / _GB:g} GB bound"))
    return out


def folder_bytes(folder: Path) -> int:
    """Return the bytes of every file under a folder (its .git included: what the repository holds)."""
    total = 0
    for root, _, names in os.walk(folder):
        total += sum((Path(root) / n).lstat().st_size for n in names)
    return total


def record(inputs: Inputs) -> list[Finding]:
    """Return the record repository's size as a share of GitHub's recommended 5 GB."""
    if inputs.record_dir is None:
        return [Finding("storage-record", None, OK, None, None, "not judged: no --record folder given")]
    size = folder_bytes(inputs.record_dir)
    value = round(size / settings.HEALTH_RECORD_BOUND_BYTES, 3)
    sparse = " (a sparse checkout: the repository holds more)" if (inputs.record_dir / ".git" / "info" /
                                                                    "sparse-checkout").exists() else ""
    return [Finding("storage-record", None, grade(value, settings.HEALTH_RECORD_SHARE), value,
                    settings.HEALTH_RECORD_SHARE,
                    f"{size / _GB:.3f} GB of {settings.HEALTH_RECORD_BOUND_BYTES / _GB:g} GB{sparse}")]


def release_assets(inputs: Inputs) -> list[Finding]:
    """Return the most WARC files one day's release took in the last two days, against the assets limit."""
    row = inputs.conn.execute(
        "SELECT release_tag, COUNT(*) AS n FROM warc_files WHERE recorded_at >= ? GROUP BY release_tag "
        "ORDER BY n DESC LIMIT 1", (iso(inputs.now - timedelta(days=2)),)).fetchone()
    count, tag = (row["n"], row["release_tag"]) if row else (0, None)
    value = round(count / settings.HEALTH_RELEASE_ASSET_LIMIT, 3)
    return [Finding("storage-release-assets", None, grade(value, settings.HEALTH_RELEASE_ASSET_SHARE), value,
                    settings.HEALTH_RELEASE_ASSET_SHARE,
                    f"{count} assets in {tag or 'no release'} of {settings.HEALTH_RELEASE_ASSET_LIMIT} a release")]


def cache(inputs: Inputs) -> list[Finding]:
    """Return the repository's Actions cache use against GitHub's 10 GB."""
    if inputs.cache_usage is None:
        return [Finding("storage-cache", None, OK, None, None, "not judged: no --cache-json given")]
    size = int(inputs.cache_usage.get("active_caches_size_in_bytes", 0))
    value = round(size / settings.HEALTH_CACHE_BOUND_BYTES, 3)
    return [Finding("storage-cache", None, grade(value, settings.HEALTH_CACHE_SHARE), value,
                    settings.HEALTH_CACHE_SHARE,
                    f"{size / _GB:.3f} GB in {inputs.cache_usage.get('active_caches_count', '?')} caches of "
                    f"{settings.HEALTH_CACHE_BOUND_BYTES / _GB:g} GB")]


CHECKS = [
    Check("storage-database", "Working databases against their bound", "storage", databases),
    Check("storage-record", "Record repository against 5 GB", "storage", record),
    Check("storage-release-assets", "WARC release assets a day against the limit", "storage", release_assets),
    Check("storage-rebuild", "Restores that fell back to a rebuild, last 24 hours", "storage", rebuilds),
    Check("storage-cache", "Actions cache against 10 GB", "storage", cache),
]
