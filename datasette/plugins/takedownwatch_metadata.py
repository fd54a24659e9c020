"""Every copy of the record gets its titles, descriptions and canned queries, whatever its file is called.

Datasette names a database after its file (demo-output/demo.db is `demo`) and
looks up per-database metadata under that name (docs/metadata.rst,
"Per-database and per-table metadata"; Datasette.metadata() in
datasette/app.py), so metadata.yml's block for `takedownwatch` reached only a
file called takedownwatch.db. This plugin answers Datasette's get_metadata
hook (docs/plugin_hooks.rst, "get_metadata(datasette, key, database, table)":
it returns a whole metadata object, which Datasette merges under the
--metadata file's) with that block under the name of every served database
whose schema is the record's (collector/record/tables.is_record), and the
file's instance-level title, description, licence and plugin settings.

Loaded with `--plugins-dir datasette/plugins` (docs/plugins.rst, "One-off
plugins using --plugins-dir"), as `make browse` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from datasette import hookimpl

from collector.record.tables import is_record

METADATA_FILE = Path(__file__).resolve().parent.parent / "metadata.yml"
RECORD_BLOCK = "takedownwatch"  # the name metadata.yml keys the record's block by

_loaded: dict[str, str] = {}


def _metadata_json() -> str:
    """Return metadata.yml as JSON text, read once (a fresh copy is parsed per call: Datasette mutates what it gets)."""
    if "json" not in _loaded:
        _loaded["json"] = json.dumps(yaml.safe_load(METADATA_FILE.read_text(encoding="utf-8")))
    return _loaded["json"]


def record_databases(datasette) -> list[str]:
    """Return the names of the served databases that are copies of the record."""
    return [name for name, db in datasette.databases.items()
            if not db.is_memory and db.path and is_record(str(db.path))]


@hookimpl
def get_metadata(datasette, key, database, table):
    metadata = json.loads(_metadata_json())
    block = json.dumps(metadata.pop("databases", {}).get(RECORD_BLOCK, {}))
    metadata["databases"] = {name: json.loads(block) for name in record_databases(datasette)}
    return metadata
