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
import weakref
from pathlib import Path

import yaml
from datasette import hookimpl

from collector.record.tables import is_record

METADATA_FILE = Path(__file__).resolve().parent.parent / "metadata.yml"
RECORD_BLOCK = "takedownwatch"  # the name metadata.yml keys the record's block by

_loaded: dict[str, str] = {}
# One answer per Datasette instance and set of record databases. Datasette
# merges its --metadata file into the first answer it gets, in place
# (Datasette._metadata_recursive_update), and adds "name" to each canned
# query: both give the same result every time for one instance, so its
# answer is kept (a database page asks some 240 times), never shared.
_answers: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _metadata_json() -> str:
    """Return metadata.yml as JSON text, read once."""
    if "json" not in _loaded:
        _loaded["json"] = json.dumps(yaml.safe_load(METADATA_FILE.read_text(encoding="utf-8")))
    return _loaded["json"]


def record_databases(datasette) -> list[str]:
    """Return the names of the served databases that are copies of the record."""
    return [name for name, db in datasette.databases.items()
            if not db.is_memory and db.path and is_record(str(db.path))]


def record_metadata(names: list[str]) -> dict:
    """Return metadata.yml's instance-level metadata, with its record block under each of the names."""
    metadata = json.loads(_metadata_json())
    block = json.dumps(metadata.pop("databases", {}).get(RECORD_BLOCK, {}))
    metadata["databases"] = {name: json.loads(block) for name in names}
    return metadata


@hookimpl
def get_metadata(datasette, key, database, table):
    names = record_databases(datasette)
    kept = _answers.get(datasette)
    if kept is None or kept[0] != names:
        kept = _answers[datasette] = (names, record_metadata(names))
    return kept[1]
