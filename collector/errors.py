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
