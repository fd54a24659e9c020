"""The outsider's attack on the built site, over several builds of crafted records (testing/attacks.py).

Every scenario the issue lists: a group of two beside groups of three and
four; a group crossing the threshold; one outlet dominating; two groups tied
on contributing outlets; a registry move between builds; two builds an hour
apart; the real registry's group sizes with one silent outlet. The site
before the published history gave figures away in every one of them
(`PYTHONPATH=OLD:. python -m testing.attacks --old`); these tests hold the
site as built now to giving none away.
"""

from __future__ import annotations

import pytest

from collector import settings
from collector.publish import disclosure, release as release_module
from collector.publish.audit import AuditResult
from testing import attacks
from testing.attack_builds import history_builder


@pytest.mark.parametrize("name", sorted(attacks.SCENARIOS))
def test_the_outsider_recovers_nothing_protected(name, tmp_path):
    store, folders = attacks.build_all(name, history_builder, tmp_path)
    assert len(folders) >= 2
    score = attacks.attack(store, folders)
    assert score.pages_only_repeat_stats  # every number on the pages is one of stats.json's
    assert score.exact == set()
    assert score.narrow == []
    assert score.outlets_exact == set()
    if name != "move":  # every other scenario has something the rules must withhold
        assert score.protected > 0


def test_the_attack_finds_what_an_unprotected_release_gives_away(tmp_path, monkeypatch):
    """The same attack on a release without secondary suppression: it must recover figures."""
    monkeypatch.setattr(disclosure.Protector, "protect", lambda self, decision: None)
    monkeypatch.setattr(release_module.audit, "audit_pairs", lambda pairs: AuditResult())
    store, folders = attacks.build_all("pair", history_builder, tmp_path)
    score = attacks.attack(store, folders)
    assert score.exact and score.narrow


def test_the_attack_scores_against_the_published_rules():
    assert (attacks.MIN_OUTLETS, attacks.DOMINANCE) == (settings.MIN_OUTLETS_PER_FIGURE, settings.DOMINANCE_SHARE)
    assert (attacks.SHARE, attacks.MIN_COUNT) == (settings.PROTECT_SHARE, settings.PROTECT_MIN_COUNT)
