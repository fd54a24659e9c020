"""Takedown Watch collector: finds, fetches and records what news outlets publish."""

from collector.settings import __version__

__all__ = ["__version__"]
