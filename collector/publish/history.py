"""The published history: one JSON line per published period, appended once and never rewritten.

`data/published/history.jsonl` holds exactly what was ever published: each
period's groups and their member outlets (names only, as on the outlets
page), and every figure or the withheld marker. The site and the audit read
it and nothing else, so a later build republishes every closed period byte
for byte.

`data/disclosure/decisions.jsonl` is its private side, one line for each
published line: the members by outlet id, the true counts of every cell and
the protection range of every withheld count. It lives beside the record in
the private repository and never reaches the site.

Both files only grow. Writing checks that a file still holds what was read
(nothing rewrote it meanwhile) and appends; `is_append_of` tells whether a
new version of a file only appended to an old one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from collector.errors import TakedownWatchError

HISTORY = "history.jsonl"
DECISIONS = "decisions.jsonl"


class HistoryError(TakedownWatchError):
    """The published history was edited, or its two files disagree: nothing may be added to it."""


@dataclass
class Lines:
    """One append-only JSON-lines file: its path, the bytes read and the parsed lines."""

    path: Path | None  # None: a history held in memory only (a preview)
    raw: bytes = b""
    lines: list[dict] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> "Lines":
        """Return the file's lines (none when it does not exist yet)."""
        raw = path.read_bytes() if path.exists() else b""
        if raw and not raw.endswith(b"\n"):
            raise HistoryError(f"{path} ends in a partial line: it was cut or edited")
        return cls(path, raw, [json.loads(line) for line in raw.decode("utf-8").splitlines()])

    def append(self, entries: list[dict]) -> None:
        """Append entries, after checking that the file still holds exactly what was read."""
        text = "".join(encode(entry) + "\n" for entry in entries).encode("utf-8")
        if self.path is not None:
            current = self.path.read_bytes() if self.path.exists() else b""
            if current != self.raw:
                raise HistoryError(f"{self.path} changed since it was read: nothing appended")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        self.raw += text
        self.lines += [json.loads(encode(entry)) for entry in entries]


def encode(entry: dict) -> str:
    """Return the one canonical line of an entry: sorted keys, no spaces, Bangla as written."""
    return json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass
class History:
    """The published history and its private side, line for line."""

    published: Lines
    decisions: Lines

    @classmethod
    def open(cls, published_dir: str | Path, decisions_dir: str | Path | None = None) -> "History":
        """Return the history in these folders, checking that its two files match line for line."""
        published = Lines.read(Path(published_dir) / HISTORY)
        decisions = Lines.read(Path(decisions_dir) / DECISIONS) if decisions_dir is not None else None
        if decisions is not None:
            ids = [line["period"] for line in published.lines]
            if ids != [line["period"] for line in decisions.lines]:
                raise HistoryError("the published history and its decisions do not list the same periods")
        return cls(published, decisions)

    @classmethod
    def memory(cls) -> "History":
        """Return an empty history held in memory only."""
        return cls(Lines(None), Lines(None))

    def periods(self) -> list[str]:
        """Return the ids of the published periods, in publication order."""
        return [line["period"] for line in self.published.lines]

    def of_month(self, month: str) -> list[tuple[dict, dict | None]]:
        """Return the (published, decision) lines of one month's periods."""
        private = self.decisions.lines if self.decisions else [None] * len(self.published.lines)
        return [(line, decision) for line, decision in zip(self.published.lines, private)
                if line["month"] == month]

    def months(self) -> list[str]:
        """Return the months with a published period, in order."""
        return sorted({line["month"] for line in self.published.lines})

    def append(self, published: list[dict], decisions: list[dict]) -> None:
        """Append one release: the private side first, so a published line never lacks its decision."""
        if [p["period"] for p in published] != [d["period"] for d in decisions]:
            raise HistoryError("a release must give one decision for each published period")
        self.decisions.append(decisions)
        self.published.append(published)


def is_append_of(old: bytes, new: bytes) -> bool:
    """Return True when new is old with whole lines appended (or equal to it)."""
    return new.startswith(old) and (not old or old.endswith(b"\n"))
