"""How a column's value is written in JSON: the export files' lines and a dormant row's packed rows.

Its own module so that what reads no export file (record/dormant.py, read by migration 21 in
record/fold_latest.py, which the schema imports) need not import record/fileformat.py, which
imports the schema.
"""

from __future__ import annotations

import base64
from typing import Any


def encode_value(value: Any) -> Any:
    """Return a column value as JSON can hold it (a BLOB as {"$b64": ...})."""
    if isinstance(value, bytes):
        return {"$b64": base64.b64encode(value).decode("ascii")}
    return value


def decode_value(value: Any) -> Any:
    """Return the column value a JSON value stands for (undoes encode_value)."""
    if isinstance(value, dict) and "$b64" in value:
        return base64.b64decode(value["$b64"])
    return value
