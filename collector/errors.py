"""The collector's one exception family.

The library never imports click: an argument it refuses raises BadArgument
(or BadUsage), and the command line turns each into click's own error with
the same message, option name and exit code (2).
"""


class TakedownWatchError(Exception):
    """Base of every error the collector raises."""


class BadArgument(TakedownWatchError):
    """One argument's value is refused; `option` names it (e.g. '--author')."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


class BadUsage(TakedownWatchError):
    """A combination of arguments is refused (e.g. a reduced interval for a public host)."""


class RecordWriteError(TakedownWatchError):
    """The record (the database or a WARC file) cannot be written: the collector cannot run on.

    Unlike a site's failure, which is data, this stops the run with a clear
    message and a non-zero exit; the run is not marked finished.
    """
