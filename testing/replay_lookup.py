"""Which capture a WACZ package replays for an address and a time, as ReplayWeb.page chooses it.

ReplayWeb.page's engine, webrecorder/wabac.js (src/archivedb.ts,
ArchiveDB.lookupUrl), keys its captures by (url, ts) and, asked for an
address at a time, returns the first capture at or after that time
(`IDBKeyRange.bound([url, ts], [url, MAX_DATE_TS])`), else the last one
before it (the same range iterated "prev"). Its times come from the
package's CDXJ index (py-wacz writes indexes/index.cdx.gz: `SURT 14-digit
{json with url, offset, length, filename}`), to the second. This reads that
index and chooses the same way; a self-redirect and fuzzy matching, which
these tests never meet, are left out.

Sources: https://github.com/webrecorder/wabac.js/blob/main/src/archivedb.ts (lookupUrl);
https://specs.webrecorder.net/wacz/1.1.1/ (indexes/, pages.jsonl); https://github.com/webrecorder/py-wacz.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path


def index(package: str | Path) -> list[tuple[str, str, dict]]:
    """Return the package's CDXJ index lines as (url, 14-digit time, fields)."""
    with zipfile.ZipFile(package) as wacz:
        text = gzip.decompress(wacz.read("indexes/index.cdx.gz")).decode("utf-8")
    found = []
    for line in text.splitlines():
        _surt, ts, fields = line.split(" ", 2)
        data = json.loads(fields)
        found.append((data["url"], ts, data))
    return found


def lookup(package: str | Path, url: str, ts: str) -> dict | None:
    """Return the CDXJ fields of the capture ReplayWeb.page opens for `url` asked at `ts` (14 digits)."""
    mine = sorted(((t, d) for u, t, d in index(package) if u == url and "status" in d
                   and d.get("mime") != "warc/revisit"), key=lambda found: found[0])
    after = [d for t, d in mine if t >= ts]
    if after:
        return after[0]
    before = [d for t, d in mine if t < ts]
    return before[-1] if before else None
