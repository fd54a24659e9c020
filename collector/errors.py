"""The collector's one exception family."""


class TakedownWatchError(Exception):
    """Base of every error the collector raises."""
