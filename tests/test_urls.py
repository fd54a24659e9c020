"""Tests for collector/urls.py: comparison keys, sites, and addresses not worth requesting."""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from collector import settings
from collector.urls import comparison_key, is_acceptable_url, registrable_domain, same_site

FEEDS = Path(__file__).parent / "data" / "feeds"

# Real item links from the corpus feeds (tests/data/feeds/), copied verbatim.
ITTEFAQ = ("https://www.ittefaq.com.bd/803832/%E0%A6%A6%E0%A7%80%E0%A6%B0%E0%A7%8D%E0%A6%98-"
           "%E0%A7%A8%E0%A7%A9-%E0%A6%AC%E0%A6%9B%E0%A6%B0-%E0%A6%AA%E0%A6%B0-%E0%A6%87%E0%A6%B0%E0%A6%BE%E0%A6%95-"
           "%E0%A6%A5%E0%A7%87%E0%A6%95%E0%A7%87-%E0%A6%B8%E0%A6%AC-%E0%A6%B8%E0%A7%87%E0%A6%A8%E0%A6%BE-"
           "%E0%A6%B8%E0%A6%B0%E0%A6%BE%E0%A6%9A%E0%A7%8D%E0%A6%9B%E0%A7%87")
# Contains a percent-encoded U+2018 and precomposed U+09DF (%E0%A7%9F).
ITTEFAQ_QUOTE = ("https://www.ittefaq.com.bd/803830/%E0%A6%9C%E0%A6%BE%E0%A6%AE%E0%A6%BF%E0%A6%A8%E0%A6%AA%E0%A7%8D"
                 "%E0%A6%B0%E0%A6%95%E0%A7%8D%E0%A6%B0%E0%A6%BF%E0%A7%9F%E0%A6%BE-%E0%A6%B8%E0%A7%8D%E0%A6%AC%E0%A6%9A"
                 "%E0%A7%8D%E0%A6%9B-%E0%A6%95%E0%A6%B0%E0%A6%A4%E0%A7%87-%E0%A6%86%E0%A6%B0%E0%A6%93-%E0%A7%A7%E0%A7%A8-"
                 "%E0%A6%9C%E0%A7%87%E0%A6%B2%E0%A6%BE%E0%A7%9F-%E2%80%98%E0%A6%87-%E0%A6%AC%E0%A7%87%E0%A6%87%E0%A6%B2")
INSTAGRAM = "https://www.instagram.com/reel/Db2TdptiXb5/?utm_source=ig_embed&utm_campaign=loading"

KEY_CASES = [
    # (address, expected key)
    (ITTEFAQ, ITTEFAQ),
    (ITTEFAQ.lower().replace("https://www.ittefaq.com.bd", "https://www.ittefaq.com.bd"), ITTEFAQ),
    (unquote(ITTEFAQ), ITTEFAQ),
    (unquote(ITTEFAQ_QUOTE), ITTEFAQ_QUOTE),
    (INSTAGRAM, "https://www.instagram.com/reel/Db2TdptiXb5/"),
    ("https://bdjobs.com/h/details/1520014?ln=1", "https://bdjobs.com/h/details/1520014?ln=1"),
    ("https://www.prothomalo.com/world/europe/ftvbv1u63b#comments", "https://www.prothomalo.com/world/europe/ftvbv1u63b"),
    ("http://www.amarbanglabd.com/news/article/bangladesh/18357", "http://www.amarbanglabd.com/news/article/bangladesh/18357"),
    ("HTTPS://WWW.JagoNews24.COM:443/economy/news/1146782", "https://www.jagonews24.com/economy/news/1146782"),
    ("http://www.bd24live.com:80", "http://www.bd24live.com/"),
    ("https://ekattor.tv:8443/x", "https://ekattor.tv:8443/x"),
    ("https://ekattor.tv/?", "https://ekattor.tv/"),
    ("https://ekattor.tv/x?utm_source=fb", "https://ekattor.tv/x"),
    ("https://ekattor.tv/x?b=2&utm_medium=social&a=1&fbclid=IwAR0&gclid=x", "https://ekattor.tv/x?b=2&a=1"),
    ("https://ekattor.tv/x?UTM_Source=fb&id=7", "https://ekattor.tv/x?id=7"),
    ("https://ekattor.tv/x?%75tm_source=fb&id=7", "https://ekattor.tv/x?id=7"),  # %75 is 'u'
    ("https://ekattor.tv/x?mc_cid=1&mc_eid=2&igshid=3&_ga=4&_gl=5&ref_src=6&yclid=7&twclid=8&dclid=9&msclkid=0",
     "https://ekattor.tv/x"),
    ("https://ekattor.tv/x?ref=home", "https://ekattor.tv/x?ref=home"),  # 'ref' can select content
    ("https://ekattor.tv/x?a=1&&b=2", "https://ekattor.tv/x?a=1&b=2"),
    ("https://ekattor.tv/%7Euser/%41%2F%2f", "https://ekattor.tv/~user/A%2F%2F"),  # %2F stays: it is reserved
    ("https://ekattor.tv/a b/\"q\"", "https://ekattor.tv/a%20b/%22q%22"),
    ("https://ekattor.tv/100%/x", "https://ekattor.tv/100%25/x"),
    ("https://ekattor.tv/a/./b/../c", "https://ekattor.tv/a/c"),
    ("https://ekattor.tv/x/", "https://ekattor.tv/x/"),  # a trailing slash is a different address
    ("https://ekattor.tv/Country/93708", "https://ekattor.tv/Country/93708"),  # path case is kept
    ("https://www.ittefaq.com.bd./x", "https://www.ittefaq.com.bd/x"),
    ("https://প্রথমআলো.বাংলা/x", "https://xn--94b5dorip9oka.xn--54b7fta0cc/x"),  # per the idna package
    ("  https://ekattor.tv/x  ", "https://ekattor.tv/x"),
    ("mailto:News@Ekattor.tv", "mailto:News@Ekattor.tv"),  # no authority: nothing to lower-case
    ("//ekattor.tv/x?utm_source=a", "//ekattor.tv/x"),
    ("/relative/%e0%a6%aa?fbclid=1", "/relative/%E0%A6%AA"),
    ("https://ekattor.tv/x\u00a0", "https://ekattor.tv/x%C2%A0"),  # NBSP is part of the address, not padding
]


@pytest.mark.parametrize("address, expected", KEY_CASES)
def test_comparison_key(address, expected):
    assert comparison_key(address) == expected


def test_nfc_and_decomposed_slugs_stay_different_addresses():
    precomposed = "https://www.ittefaq.com.bd/1/\u09df"  # য় as one code point, as the JadeWits slugs write it
    decomposed = "https://www.ittefaq.com.bd/1/\u09af\u09bc"  # য + nukta
    assert comparison_key(precomposed) == "https://www.ittefaq.com.bd/1/%E0%A7%9F"
    assert comparison_key(decomposed) == "https://www.ittefaq.com.bd/1/%E0%A6%AF%E0%A6%BC"


def _feed_links() -> list[str]:
    links = []
    for path in sorted(FEEDS.glob("*.xml")):
        text = path.read_text(encoding="utf-8")
        links += re.findall(r"<link>\s*(https?://[^<\s]+)\s*</link>", text)
        links += re.findall(r'<link rel="alternate" href="([^"]+)"', text)
    return links


def test_every_real_feed_link_has_a_stable_key_equal_for_raw_and_encoded_forms():
    links = _feed_links()
    assert len(links) > 400
    for link in links:
        key = comparison_key(link)
        assert comparison_key(key) == key
        assert comparison_key(unquote(link)) == key
        assert is_acceptable_url(link) == (True, "ok")


@pytest.mark.parametrize("host, expected", [
    ("en.prothomalo.com", "prothomalo.com"),
    ("www.prothomalo.com", "prothomalo.com"),
    ("www.ittefaq.com.bd", "ittefaq.com.bd"),
    ("unb.com.bd", "unb.com.bd"),
    ("sangbad.net.bd", "sangbad.net.bd"),
    ("www.thefinancialexpress.com.bd", "thefinancialexpress.com.bd"),
    ("bangla.thedailystar.net", "thedailystar.net"),
    ("ekattor.tv", "ekattor.tv"),
    ("jamuna.tv", "jamuna.tv"),
    ("WWW.BSSNEWS.NET", "bssnews.net"),
    ("portal.gov.bd", "portal.gov.bd"),
    ("a.b.du.ac.bd", "du.ac.bd"),
    ("com.bd", "com.bd"),
    ("localhost", "localhost"),
    ("127.0.0.1", "127.0.0.1"),
])
def test_registrable_domain(host, expected):
    assert registrable_domain(host) == expected


@pytest.mark.parametrize("url, homepage, expected", [
    ("https://en.prothomalo.com/bangladesh/x", "https://www.prothomalo.com/", True),
    ("https://www.kishoralo.com/feature/npfhsl95mr", "https://www.prothomalo.com/", False),
    ("http://www.amarbanglabd.com/news/article/bangladesh/18357", "https://www.amarbanglabd.com/", True),
    ("https://www.ittefaq.com.bd/803832/x", "https://www.ittefaq.com.bd/", True),
    ("https://unb.com.bd/x", "https://www.ittefaq.com.bd/", False),  # both under com.bd, different sites
    ("https://cdn.ittefaqbd.com/x.png", "https://www.ittefaq.com.bd/", False),
    ("https://www.bhorerkagoj.net/x", "https://www.bhorerkagoj.com/", False),
    ("/relative/path", "https://www.ittefaq.com.bd/", False),
])
def test_same_site(url, homepage, expected):
    assert same_site(url, homepage) is expected


@pytest.mark.parametrize("url, ok, reason_part", [
    (ITTEFAQ, True, "ok"),
    (unquote(ITTEFAQ), True, "ok"),
    ("ftp://ekattor.tv/feed", False, "scheme"),
    ("javascript:alert(1)", False, "scheme"),
    ("mailto:news@ekattor.tv", False, "scheme"),
    ("ekattor.tv/feed", False, "scheme"),
    ("https:///feed", False, "no host"),
    ("", False, "empty"),
    ("https://ekattor.tv/a\nb", False, "control"),
    ("https://ekattor.tv:99999/x", False, "unparseable"),
    ("https://ekattor.tv/a/b/a/b/a/b", False, "spider trap"),
    ("https://ekattor.tv/x/x/x", False, "spider trap"),
    ("https://ekattor.tv/news/a/b/c/a/b/c/a/b/c/end", False, "spider trap"),
    ("https://ekattor.tv/a/b/a/b/c", True, "ok"),  # twice is a coincidence, three times a loop
    ("https://ekattor.tv/2026/08/08/story", True, "ok"),
    ("https://ekattor.tv/x?a=/b/b/b", True, "ok"),  # only the path is checked
])
def test_is_acceptable_url(url, ok, reason_part):
    accepted, reason = is_acceptable_url(url)
    assert accepted is ok
    assert reason_part in reason


def test_length_cap_counts_bytes_as_sent():
    base = "https://ekattor.tv/"
    at_cap = base + "a" * (settings.MAX_URL_LENGTH - len(base))
    assert is_acceptable_url(at_cap) == (True, "ok")
    assert is_acceptable_url(at_cap + "a")[0] is False
    # One Bangla letter is three bytes, nine characters once percent-encoded.
    bangla = base + "\u0995" * ((settings.MAX_URL_LENGTH - len(base)) // 9 + 1)
    assert is_acceptable_url(bangla)[0] is False


def test_spider_trap_check_is_fast_on_a_path_at_the_length_cap():
    path = "/".join(str(i) for i in range(400))
    started = time.perf_counter()
    assert is_acceptable_url("https://ekattor.tv/" + path)[0] is True
    assert time.perf_counter() - started < 1.0
