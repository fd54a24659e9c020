"""Tests for collector/registry.py and the real registry, data/outlets.toml."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from collector import settings
from collector.errors import TakedownWatchError
from collector.registry import RegistryError, expand_source_template, load_registry, parse_registry
from collector.urls import is_acceptable_url, registrable_domain, host_of

REAL = Path(__file__).parent.parent / "data" / "outlets.toml"
BANGLA = re.compile(r"[\u0980-\u09ff]")
LATIN = re.compile(r"[A-Za-z]")

GOOD = """\
[groups.bn-dailies]
name = "Bangla-language national dailies"
name_bn = "বাংলা ভাষার জাতীয় দৈনিক"

[outlets.prothomalo]
name = "Prothom Alo"
name_bn = "প্রথম আলো"
homepage = "https://www.prothomalo.com/"
language = "bn"
group = "bn-dailies"
sources = ["https://www.prothomalo.com/feed/"]   # optional operator-supplied candidates

[outlets.ittefaq]
name = "The Daily Ittefaq"
name_bn = "দৈনিক ইত্তেফাক"
homepage = "https://www.ittefaq.com.bd/"
language = "bn"
group = "bn-dailies"
"""


def _error_for(text: str, tmp_path: Path) -> RegistryError:
    path = tmp_path / "outlets.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as caught:
        load_registry(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_a_well_formed_registry_loads(tmp_path):
    path = tmp_path / "outlets.toml"
    path.write_text(GOOD, encoding="utf-8")
    registry = load_registry(path)
    assert list(registry.outlets) == ["prothomalo", "ittefaq"]
    alo = registry.outlets["prothomalo"]
    assert (alo.name, alo.name_bn, alo.homepage, alo.language, alo.group) == (
        "Prothom Alo", "প্রথম আলো", "https://www.prothomalo.com/", "bn", "bn-dailies")
    assert alo.sources == ("https://www.prothomalo.com/feed/",)
    assert registry.outlets["ittefaq"].sources == ()
    assert registry.groups["bn-dailies"].name_bn == "বাংলা ভাষার জাতীয় দৈনিক"
    assert [o.id for o in registry.outlets_in("bn-dailies")] == ["prothomalo", "ittefaq"]


def test_registry_error_is_a_takedownwatch_error():
    assert issubclass(RegistryError, TakedownWatchError)


def test_toml_syntax_error_names_the_line(tmp_path):
    broken = GOOD.replace('language = "bn"\ngroup = "bn-dailies"\nsources', 'language = "bn\ngroup = "bn-dailies"\nsources')
    error = _error_for(broken, tmp_path)
    assert error.line == 9
    assert "line 9" in str(error) and "TOML syntax error" in str(error)


def test_duplicate_table_is_a_syntax_error_with_its_line(tmp_path):
    error = _error_for(GOOD + '\n[outlets.prothomalo]\nname = "again"\n', tmp_path)
    assert error.line == 20


@pytest.mark.parametrize("change, line, words", [
    # (replace old with new in GOOD, expected line, words the message must contain)
    (('group = "bn-dailies"\nsources', 'group = "bn-daily"\nsources'), 10, ["unknown group", "bn-daily"]),
    (('homepage = "https://www.ittefaq.com.bd/"\n', ""), 13, ["missing", "homepage"]),
    (('name = "Prothom Alo"\n', 'name = "Prothom Alo"\nowner = "x"\n'), 7, ["unknown key", "owner"]),
    (('https://www.ittefaq.com.bd/"', 'ftp://www.ittefaq.com.bd/"'), 16, ["bad address", "homepage", "scheme"]),
    (('https://www.ittefaq.com.bd/"', 'https://WWW.PROTHOMALO.COM"'), 16, ["same homepage", "prothomalo"]),
    (('["https://www.prothomalo.com/feed/"]', '["https://www.prothomalo.com/{yesterday}.xml"]'), 11,
     ["unknown placeholder"]),
    (('["https://www.prothomalo.com/feed/"]', '"https://www.prothomalo.com/feed/"'), 11, ["list"]),
    (('["https://www.prothomalo.com/feed/"]', '["https://www.prothomalo.com/a/b/a/b/a/b"]'), 11, ["spider trap"]),
    (('language = "bn"\ngroup = "bn-dailies"\nsources', 'language = "Bangla"\ngroup = "bn-dailies"\nsources'), 9,
     ["language"]),
    (('name_bn = "দৈনিক ইত্তেফাক"', 'name_bn = ""'), 15, ["name_bn", "non-empty"]),
    (("[outlets.ittefaq]", "[outlets.Ittefaq]"), 13, ["id"]),
    (('name_bn = "বাংলা ভাষার জাতীয় দৈনিক"\n', 'name_bn = "বাংলা ভাষার জাতীয় দৈনিক"\ncolour = 1\n'), 4,
     ["unknown key", "colour"]),
])
def test_semantic_errors_name_the_line_and_the_problem(tmp_path, change, line, words):
    old, new = change
    assert old in GOOD
    error = _error_for(GOOD.replace(old, new, 1), tmp_path)
    assert error.line == line, str(error)
    assert f"line {line}" in str(error)
    for word in words:
        assert word in str(error)


def test_unknown_top_level_key_names_its_line(tmp_path):
    error = _error_for("title = 'x'\n" + GOOD, tmp_path)
    assert error.line == 1 and "title" in str(error)


def test_an_empty_registry_is_refused(tmp_path):
    error = _error_for(GOOD.split("[outlets.prothomalo]")[0], tmp_path)
    assert "no outlets" in str(error)


def test_inline_tables_still_get_a_line(tmp_path):
    text = GOOD + '\n[outlets]\nbadone = { name = "X", name_bn = "এক্স", homepage = "https://x.com/", language = "bn" }\n'
    error = _error_for(text, tmp_path)
    assert "missing 'group'" in str(error)
    assert error.line == 21


def test_a_missing_file_is_a_registry_error(tmp_path):
    with pytest.raises(RegistryError, match="cannot be read"):
        load_registry(tmp_path / "nope.toml")


def test_a_byte_order_mark_is_not_a_syntax_error(tmp_path):
    path = tmp_path / "outlets.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    assert len(load_registry(path).outlets) == 2


def test_parse_registry_without_a_file():
    assert len(parse_registry(GOOD).outlets) == 2


@pytest.mark.parametrize("when, expected", [
    (datetime(2026, 8, 13, 3, 0, tzinfo=timezone.utc), "2026-08-13"),
    (datetime(2026, 8, 12, 18, 0, tzinfo=timezone.utc), "2026-08-13"),  # midnight in Dhaka
    (datetime(2026, 8, 12, 17, 59, 59, tzinfo=timezone.utc), "2026-08-12"),
    (datetime(2026, 8, 12, 17, 59, 59), "2026-08-12"),  # naive means UTC
    (datetime(2026, 8, 13, 1, 0, tzinfo=timezone(timedelta(hours=6))), "2026-08-13"),
    (datetime(2026, 12, 31, 18, 30, tzinfo=timezone.utc), "2027-01-01"),
])
def test_expand_source_template_uses_the_dhaka_day(when, expected):
    assert expand_source_template("https://www.kalerkantho.com/daily-sitemap/{date}/sitemap.xml", when) == (
        f"https://www.kalerkantho.com/daily-sitemap/{expected}/sitemap.xml")
    assert expand_source_template("https://www.dailynayadiganta.com/sitemap/{today}.xml", when) == (
        f"https://www.dailynayadiganta.com/sitemap/{expected}.xml")


def test_expand_source_template_leaves_plain_addresses_and_refuses_unknown_placeholders():
    when = datetime(2026, 8, 13, tzinfo=timezone.utc)
    assert expand_source_template("https://ekattor.tv/feed/", when) == "https://ekattor.tv/feed/"
    with pytest.raises(RegistryError):
        expand_source_template("https://ekattor.tv/{month}.xml", when)


# ------------------------------------------------------------------ the real registry


@pytest.fixture(scope="module")
def real():
    return load_registry(REAL)


def test_real_registry_size_and_groups(real):
    assert len(real.outlets) >= 30
    sizes = Counter(o.group for o in real.outlets.values())
    assert len(real.groups) >= 5
    assert set(sizes) == set(real.groups)  # no empty group
    assert min(sizes.values()) >= max(3, settings.MIN_OUTLETS_PER_FIGURE)


def test_real_registry_names_are_in_the_right_scripts(real):
    for item in [*real.groups.values(), *real.outlets.values()]:
        assert BANGLA.search(item.name_bn) and not LATIN.search(item.name_bn), item.id
        assert LATIN.search(item.name) and not BANGLA.search(item.name), item.id


def test_real_registry_addresses(real):
    when = datetime(2026, 8, 13, tzinfo=timezone.utc)
    for outlet in real.outlets.values():
        assert outlet.homepage.startswith("https://") and outlet.homepage.endswith("/")
        assert outlet.language in ("bn", "en")
        for source in outlet.sources:
            expanded = expand_source_template(source, when)
            assert is_acceptable_url(expanded) == (True, "ok"), expanded
            assert "{" not in expanded


def test_real_registry_shares_a_site_only_between_editions_of_one_paper(real):
    by_site = Counter(registrable_domain(host_of(o.homepage)) for o in real.outlets.values())
    shared = {site for site, count in by_site.items() if count > 1}
    assert shared == {"prothomalo.com", "thedailystar.net"}


def test_real_registry_holds_the_outlets_whose_feeds_are_in_the_corpus(real):
    for outlet_id, feed in [("prothomalo", "https://www.prothomalo.com/feed/"),
                            ("ittefaq", "https://www.ittefaq.com.bd/feed/"),
                            ("banglatribune", "https://www.banglatribune.com/feed/"),
                            ("ekattor", "https://ekattor.tv/feed/"),
                            ("jagonews24", "https://www.jagonews24.com/rss/rss.xml"),
                            ("amarbanglabd", "https://www.amarbanglabd.com/feeds"),
                            ("bd24live", "https://www.bd24live.com/feed/")]:
        assert feed in real.outlets[outlet_id].sources
