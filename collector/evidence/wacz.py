"""Each day's WARC files as one WACZ package (Webrecorder's `wacz`: CDXJ index, pages, datapackage with hashes).

A package is made from the day's WARC files as published (one per run), with
a pages list of every successful HTML response, titled by its headline and
timed by its record, so ReplayWeb.page opens it at its articles. The WACZ
signing specification signs datapackage-digest.json through an authsign
server holding a domain certificate; py-wacz 0.6 signs only that way, so a
package is signed here as export files are, with an SSH signature beside it
(`<day>.wacz.sig`, namespace takedownwatch-wacz), and its SHA-256 printed for
the record.
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
from collector.net.warcread import record_body
from collector.parse.extract import page_headline

NAMESPACE = "takedownwatch-wacz"


class WaczError(TakedownWatchError):
    """A WACZ package could not be made, or does not validate."""


def day_warcs(warc_dir: str | Path, day: str) -> list[Path]:
    """Return the WARC files of one UTC day (YYYY-MM-DD), in name order."""
    return sorted((Path(warc_dir) / day.replace("-", "/")).glob("*.warc.gz"))


def pages(warcs: list[Path]) -> list[dict]:
    """Return the pages list: every 2xx HTML response of the WARC files, titled by its headline, at its WARC-Date.

    As Webrecorder's crawler writes pages.jsonl (the WACZ specification's
    pages: id, url, ts, title), so ReplayWeb.page's page list reads as a list
    of articles with their times rather than a column of addresses: the title
    is the headline the page states (collector/parse/extract.py, as its
    snapshot holds it), else its address; `ts` is the record's WARC-Date,
    which py-wacz matches against the record (to the second) and which a
    replay link asks for (collector/evidence/replay.py); `id` is the
    record's own WARC-Record-ID. A revisit that served the same bytes (same
    payload digest, type and coding) is not parsed again.
    """
    found, titles = [], {}
    for path in warcs:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                http = record.http_headers
                if record.rec_type != "response" or http is None:
                    continue
                if http.get_statuscode().startswith("2") and "html" in (http.get_header("Content-Type") or ""):
                    found.append(_page(record, f"{path.name}:{record.rec_headers.get_header('WARC-Record-ID')}",
                                       titles))
    return found


def _page(record, where: str, titles: dict) -> dict:
    url = record.rec_headers.get_header("WARC-Target-URI")
    http = record.http_headers
    same = (record.rec_headers.get_header("WARC-Payload-Digest"), http.get_header("Content-Type"),
            http.get_header("Content-Encoding"))
    if same[0] is None or same not in titles:
        try:
            title = page_headline(*record_body(record, where))
        except TakedownWatchError:  # a body that cannot be read back is still a page, by its address
            title = None
        titles[same] = title
    title = titles[same]
    return {"id": record.rec_headers.get_header("WARC-Record-ID").strip("<>").removeprefix("urn:uuid:"),
            "url": url, "ts": record.rec_headers.get_header("WARC-Date"), "title": title or url}


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
