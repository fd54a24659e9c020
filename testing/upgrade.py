"""A stand-in for an upgrade of the extraction software, for the year simulation (bench/year.py).

An upgrade changes two things the record must tell apart from an outlet's
edits: the fingerprint every snapshot names (collector/parse/extract.py
extractor_fingerprint, from EXTRACTOR_VERSION and the libraries' versions) and
what the software reads on some pages. Here the version number moves on, and a
headline that ends in the site's name after a '|' (og:title as many outlets
write it, on pages without an <h1>) is read without the name, as a newer
extractor that trims site names would read it. Everything else is the real
extractor.

Such an upgrade is what real extractors ship: trafilatura's metadata.py reads a title
through examine_title_element and HTMLTITLE_REGEX, which splits "headline | site" on a
separator and keeps the part that is not the site's name, and the regex's separators
widened between releases (`[-|]` in 1.x; `[–•·—|⁄*⋆~‹«<›»>:-]` later,
https://github.com/adbar/trafilatura/blob/master/trafilatura/metadata.py), so the same page
gave a different headline after an upgrade.
"""

from __future__ import annotations

import dataclasses
import re
import sys

from collector.collect import events
from collector.parse import extract as extraction

UPGRADED_VERSION = f"{extraction.EXTRACTOR_VERSION}.1-simulated"
_SITE_NAME = re.compile(r"\s*\|\s*[^|]+$")


def upgrade():
    """Make this process run the upgraded extractor; return a function that undoes it."""
    real, version = extraction.extract, extraction.EXTRACTOR_VERSION

    def upgraded(body, content_type, url):
        page = real(body, content_type, url)
        trimmed = _SITE_NAME.sub("", page.headline) if page.headline else page.headline
        return dataclasses.replace(page, headline=trimmed or page.headline)

    holders = [m for name, m in list(sys.modules.items())
               if name.startswith("collector.") and getattr(m, "extract", None) is real]
    extraction.EXTRACTOR_VERSION = UPGRADED_VERSION
    for module in holders:
        module.extract = upgraded
    events.current_extractor.cache_clear()

    def undo() -> None:
        extraction.EXTRACTOR_VERSION = version
        for module in holders:
            module.extract = real
        events.current_extractor.cache_clear()

    return undo
