"""How the hourly workflow builds the site today, for the attack scenarios: publish, then build from the history.

It follows what .github/workflows/pages.yml runs, in the same order: its publish job
(`python -m collector publish`, collector/publish/release.py, which appends the closed periods to
data/published/ and the private decisions to data/disclosure/), then its build job
(`build-site --from-stats`, which reads only the published history). The outsider the scenarios
play is the differencing attacker of statistical disclosure control's tabular data protection
(Hundepool et al., "Statistical Disclosure Control", Wiley, 2012, on linked tables and
differencing, https://doi.org/10.1002/9781118348239); testing/outsider.py is that attacker.
"""

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
