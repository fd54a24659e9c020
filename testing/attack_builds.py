"""How the hourly workflow builds the site today, for the attack scenarios: publish, then build from the history."""

from __future__ import annotations


def history_builder(store, folder, moment, workdir):
    """Release what has closed by moment into the scenario's history, then build the site from it."""
    from collector import settings
    from collector.publish.history import History
    from collector.publish.release import release
    from collector.publish.site import build_site

    history = History.open(workdir / "published", workdir / "decisions")
    release(store, moment, history)
    build_site(store, folder, moment, settings, history=History.open(workdir / "published"))
