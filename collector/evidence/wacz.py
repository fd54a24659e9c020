"""Each day's WARC files as one WACZ package (Webrecorder's `wacz`: CDXJ index, pages, datapackage with hashes).

A package is made from the day's WARC files as published (one per run), with
a pages list of every successful HTML response, so ReplayWeb.page opens it at
its articles. The WACZ signing specification signs datapackage-digest.json
through an authsign server holding a domain certificate; py-wacz 0.6 signs
only that way, so a package is signed here as export files are, with an SSH
signature beside it (`<day>.wacz.sig`, namespace takedownwatch-wacz), and
its SHA-256 printed for the record.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from wacz.main import main as wacz_main

from collector.errors import TakedownWatchError

NAMESPACE = "takedownwatch-wacz"


class WaczError(TakedownWatchError):
    """A WACZ package could not be made, or does not validate."""


def day_warcs(warc_dir: str | Path, day: str) -> list[Path]:
    """Return the WARC files of one UTC day (YYYY-MM-DD), in name order."""
    return sorted((Path(warc_dir) / day.replace("-", "/")).glob("*.warc.gz"))


def pages(warcs: list[Path]) -> list[dict]:
    """Return the pages list: every 2xx HTML response of the WARC files, with its time."""
    found = []
    for path in warcs:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                http = record.http_headers
                if record.rec_type != "response" or http is None:
                    continue
                if http.get_statuscode().startswith("2") and "html" in (http.get_header("Content-Type") or ""):
                    found.append({"url": record.rec_headers.get_header("WARC-Target-URI"),
                                  "ts": record.rec_headers.get_header("WARC-Date")})
    return found


def package_day(warc_dir: str | Path, day: str, out_dir: str | Path) -> Path:
    """Return the path of the WACZ package written for the day's WARC files."""
    warcs = day_warcs(warc_dir, day)
    if not warcs:
        raise WaczError(f"no WARC files for {day} in {warc_dir}")
    target = Path(out_dir) / f"{day}.wacz"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wacz-pages-") as scratch:
        listing = Path(scratch) / "pages.jsonl"
        lines = [{"format": "json-pages-1.0", "id": "pages", "title": f"Takedown Watch captures of {day}"}]
        listing.write_text("\n".join(json.dumps(x) for x in lines + pages(warcs)) + "\n", encoding="utf-8")
        code, said = _run(["create", "-o", str(target), "-p", str(listing), "--title", f"Takedown Watch {day}",
                           "--desc", "Every HTTP exchange of the day's collection runs, bytes as received.",
                           *map(str, warcs)])
    if code not in (0, None) or not target.is_file():
        raise WaczError(f"wacz create failed for {day}: {said[-300:]}")
    return target


def validate(path: str | Path) -> tuple[bool, str]:
    """Return (valid, what `wacz validate` said) for a package."""
    code, said = _run(["validate", "-f", str(path)])
    return code == 0 and "Validation succeeded" in said, said


def _run(arguments: list[str]) -> tuple[int | None, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = wacz_main(arguments)
    return code, out.getvalue()
