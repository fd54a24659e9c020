"""Words and number formats of the site in English and Bangla.

Numbers on Bangla pages use Bangla digits and South Asian digit grouping
(১,২৩,৪৫৬), as Bangladeshi newspapers print them.
"""

from __future__ import annotations

from datetime import datetime, timedelta

BN_DIGITS = str.maketrans("0123456789", "০১২৩৪৫৬৭৮৯")
MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"],
    "bn": ["জানুয়ারি", "ফেব্রুয়ারি", "মার্চ", "এপ্রিল", "মে", "জুন", "জুলাই", "আগস্ট",
           "সেপ্টেম্বর", "অক্টোবর", "নভেম্বর", "ডিসেম্বর"],
}
UNITS = {
    "en": {"second": ("second", "seconds"), "minute": ("minute", "minutes"),
           "hour": ("hour", "hours"), "day": ("day", "days"), "and": "and"},
    "bn": {"second": ("সেকেন্ড", "সেকেন্ড"), "minute": ("মিনিট", "মিনিট"),
           "hour": ("ঘণ্টা", "ঘণ্টা"), "day": ("দিন", "দিন"), "and": "ও"},
}

# Column and row labels of the overview: measure -> (English, Bangla).
MEASURES = {
    "outlets_monitored": ("Outlets monitored", "পর্যবেক্ষণাধীন সংবাদমাধ্যম"),
    "outlets_contributing": ("Outlets contributing captures", "যেসব সংবাদমাধ্যম থেকে সংগ্রহ হয়েছে"),
    "sources_readable": ("Outlets with a readable source", "পড়া যায় এমন উৎস আছে যেসব সংবাদমাধ্যমের"),
    "articles_listed": ("Articles listed", "তালিকায় পাওয়া নিবন্ধ"),
    "articles_queued": ("Articles queued", "সারিতে রাখা নিবন্ধ"),
    "articles_captured": ("Articles captured", "সংগৃহীত নিবন্ধ"),
    "capture_rate": ("Capture rate", "সংগ্রহের হার"),
    "articles_archived": ("Captured with an archive copy", "আর্কাইভ-অনুলিপিসহ সংগৃহীত"),
    "archive_rate": ("Archive rate", "আর্কাইভের হার"),
    "median_delay_minutes": ("Median minutes from listing to capture", "তালিকা থেকে সংগ্রহ পর্যন্ত মধ্যমা সময় (মিনিট)"),
    "requests": ("Requests made", "পাঠানো অনুরোধ"),
    "requests_by_result": ("Requests made", "পাঠানো অনুরোধ"),
}
PERIODS = {
    "all": ("Whole record: the sum of the published weeks", "পুরো নথি: প্রকাশিত সপ্তাহগুলোর যোগফল"),
}
# The one marker of a withheld figure, whatever the reason (the method page explains the rules).
WITHHELD = ("withheld", "গোপন রাখা হয়েছে")
# Request results (the fetcher's words for what a request met): result -> (English, Bangla).
# tests/publish/test_bangla.py derives every result name from collector/net/ and fails on one missing here.
RESULTS = {
    "ok": ("OK", "সফল"),
    "not_modified": ("Not modified (304)", "অপরিবর্তিত (৩০৪)"),
    "redirect": ("Redirect", "পুনর্নির্দেশ"),
    "not_found": ("Not found (404)", "পাওয়া যায়নি (৪০৪)"),
    "gone": ("Gone (410)", "সরিয়ে ফেলা (৪১০)"),
    "rate_limited": ("Too many requests (429)", "অনুরোধের সীমা পার (৪২৯)"),
    "server_error": ("Server error (5xx)", "সার্ভারের ত্রুটি"),
    "http_error": ("Other HTTP error", "অন্যান্য এইচটিটিপি ত্রুটি"),
    "timeout": ("Timed out", "সময় পেরিয়ে গেছে"),
    "connection_error": ("Connection failed", "সংযোগ হয়নি"),
    "too_large": ("Too large", "আকারে খুব বড়"),
    "content_error": ("Unreadable content", "পড়া যায় না এমন বিষয়বস্তু"),
    "challenge": ("Browser check (challenge)", "ব্রাউজার-যাচাইয়ের পাতা"),
    "blocked": ("Blocked by the site", "সাইট আটকে দিয়েছে"),
    "robots_disallowed": ("Disallowed by robots.txt", "robots.txt-এ নিষেধ"),
    "robots_unreachable": ("robots.txt unreachable", "robots.txt পড়া যায়নি"),
    "crawl_delay_over_limit": ("robots.txt Crawl-delay over our limit (carried over)",
                               "robots.txt-এর Crawl-delay আমাদের সীমার বেশি (পরে নেওয়া হবে)"),
    "allowed": ("Allowed by robots.txt", "robots.txt-এ অনুমতি আছে"),
    "invalid_url": ("Invalid address", "অচল ঠিকানা"),
    "blocked_address": ("Address not fetched (private network)", "যে ঠিকানায় যাওয়া হয় না (ব্যক্তিগত নেটওয়ার্ক)"),
    "redirect_loop": ("Redirect loop", "পুনর্নির্দেশের চক্র"),
    "too_many_redirects": ("Too many redirects", "অতিরিক্ত পুনর্নির্দেশ"),
    # The collector's own failure on one address (collector/net/fetcher.py: recorded, never raised).
    "client_error": ("Collector error", "সংগ্রাহকের নিজের ত্রুটি"),
}


def digits(text: str, lang: str) -> str:
    """Return text with Bangla digits on Bangla pages."""
    return text.translate(BN_DIGITS) if lang == "bn" else text


def number(value, lang: str, decimals: int | None = None) -> str:
    """Return a number grouped for reading: 13,319 in English, ১৩,৩১৯ or ১,২৩,৪৫৬ in Bangla."""
    if isinstance(value, float) and decimals is None:
        decimals = 0 if value == int(value) else 1
    text = f"{value:.{decimals or 0}f}" if decimals is not None else str(int(value))
    whole, _, fraction = text.partition(".")
    sign, whole = ("-", whole[1:]) if whole.startswith("-") else ("", whole)
    grouped = _group_south_asian(whole) if lang == "bn" else f"{int(whole):,}"
    return digits(sign + grouped + ("." + fraction if fraction else ""), lang)


def _group_south_asian(whole: str) -> str:
    """Return digits grouped 1,23,45,678: the last three, then pairs."""
    if len(whole) <= 3:
        return whole
    head, tail = whole[:-3], whole[-3:]
    pairs = []
    while len(head) > 2:
        pairs.insert(0, head[-2:])
        head = head[:-2]
    return ",".join([head] + pairs + [tail])


def month_label(month_id: str, lang: str) -> str:
    """Return 'November 2026' or 'নভেম্বর ২০২৬' for a month id '2026-11'."""
    year, number = month_id.split("-")
    return digits(f"{MONTHS[lang][int(number) - 1]} {year}", lang)


def percent(value: float, lang: str) -> str:
    """Return a share as a percentage with one decimal."""
    return number(round(value * 100, 1), lang, 1) + "%"


def date(moment: datetime, lang: str) -> str:
    """Return a date as '26 November 2026' or '২৬ নভেম্বর ২০২৬'."""
    return digits(f"{moment.day} {MONTHS[lang][moment.month - 1]} {moment.year}", lang)


def moment(instant: datetime, lang: str, local_offset_hours: float) -> str:
    """Return '1 December 2026, 08:24 UTC (14:24 in Dhaka)' or its Bangla, to the minute."""
    local = instant + timedelta(hours=local_offset_hours)
    utc, dhaka = instant.strftime("%H:%M"), local.strftime("%H:%M")
    if local.date() != instant.date():  # past midnight in Dhaka: say which day
        dhaka = f"{local.day} {MONTHS[lang][local.month - 1]}, {dhaka}"
    if lang == "bn":
        return f"{date(instant, lang)}, ইউটিসি {digits(utc, lang)} (ঢাকায় {digits(dhaka, lang)})"
    return f"{date(instant, lang)}, {utc} UTC ({dhaka} in Dhaka)"


def duration(amount: float, unit: str, lang: str) -> str:
    """Return '2 seconds', '1 hour' or '২ সেকেন্ড'."""
    singular, plural = UNITS[lang][unit]
    return f"{number(amount, lang)} {singular if amount == 1 else plural}"


def hours(amount: float, lang: str) -> str:
    """Return hours as hours up to two days (48 hours reads better than 2 days) and whole days above."""
    if amount > 48 and amount % 24 == 0:
        return duration(amount // 24, "day", lang)
    return duration(amount, "hour", lang)


def seconds(amount: float, lang: str) -> str:
    """Return seconds, switching to minutes for whole minutes of two or more."""
    if amount >= 120 and amount % 60 == 0:
        return duration(amount // 60, "minute", lang)
    return duration(amount, "second", lang)


# Bangla case endings depend on whether the word ends in a vowel sign: ঘণ্টা -> ঘণ্টার, দিন -> দিনের.
_VOWEL_ENDINGS = tuple("ািীুূৃেৈোৌআইঈউঊএঐওঔ")


def genitive(text: str, lang: str) -> str:
    """Return a Bangla phrase with the possessive ending (৭ দিনের, ৪৮ ঘণ্টার); English unchanged."""
    if lang != "bn":
        return text
    return text + ("র" if text.endswith(_VOWEL_ENDINGS) else "ের")


def locative(text: str, lang: str) -> str:
    """Return a Bangla phrase with the 'in/per' ending (২ সেকেন্ডে, ২৪ ঘণ্টায়); English unchanged."""
    if lang != "bn":
        return text
    return text + ("য়" if text.endswith(_VOWEL_ENDINGS) else "ে")


def listing(items: list[str], lang: str) -> str:
    """Return 'a, b and c' (English) or 'a, b ও c' (Bangla)."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {UNITS[lang]['and']} " + items[-1]


def result_label(result: str, lang: str) -> str:
    """Return a request result as words; a name not in RESULTS (a new one) as 'other result' in Bangla."""
    if result in RESULTS:
        return RESULTS[result][0 if lang == "en" else 1]
    return "অন্য ফলাফল" if lang == "bn" else result.replace("_", " ").capitalize()


def definitions(lang: str, least: int, share: float) -> list[tuple[str, str]]:
    """Return (term, explanation) pairs for the notes under the overview, in the page's language."""
    n, pct = number(least, lang), number(round(share * 100), lang) + "%"
    pairs = [
        ("outlets_contributing", "Outlets with at least one article captured in the period.",
         "যেসব সংবাদমাধ্যমের অন্তত একটি নিবন্ধ ওই সময়ে সংগ্রহ করা হয়েছে।"),
        ("sources_readable", "Outlets whose latest search for feeds and sitemaps, by the end of the period, found one that could be read.",
         "সময়ের শেষে যেসব সংবাদমাধ্যমের ফিড ও সাইটম্যাপের সর্বশেষ খোঁজে অন্তত একটি পড়া গেছে।"),
        ("articles_listed", "Distinct article addresses in the feeds and sitemaps read during the period, captured or not.",
         "ওই সময়ে পড়া ফিড ও সাইটম্যাপে থাকা আলাদা আলাদা নিবন্ধের ঠিকানা, সংগ্রহ করা হোক বা না হোক।"),
        ("articles_queued", "Addresses put in the capture queue during the period.",
         "ওই সময়ে সংগ্রহের সারিতে রাখা ঠিকানা।"),
        ("articles_captured", "Articles whose first capture fell in the period.",
         "যেসব নিবন্ধের প্রথম সংগ্রহ ওই সময়ে হয়েছে।"),
        ("capture_rate", "Articles captured divided by articles queued in the same period. It can pass 100% when articles queued at the end of one period are captured in the next.",
         "একই সময়ে সংগৃহীত নিবন্ধকে সারিতে রাখা নিবন্ধ দিয়ে ভাগ। এক সময়ের শেষে সারিতে রাখা নিবন্ধ পরের সময়ে সংগৃহীত হলে হারটি ১০০%-এর বেশি হতে পারে।"),
        ("archive_rate", "The share of captured articles that have at least one copy confirmed by the Internet Archive.",
         "সংগৃহীত নিবন্ধের মধ্যে যতগুলোর অন্তত একটি অনুলিপি ইন্টারনেট আর্কাইভ নিশ্চিত করেছে, তার অনুপাত।"),
        ("median_delay_minutes", f"Half of the period's captures came sooner than this after their address first appeared in a listing, half later. Shown only where every group and week it is computed from is shown, and only when those captures came from at least {n} outlets, none of which made more than {pct} of them.",
         f"ঠিকানা প্রথম তালিকায় আসার পর ওই সময়ের অর্ধেক সংগ্রহ এর চেয়ে কম সময়ে, বাকি অর্ধেক বেশি সময়ে হয়েছে। যে গোষ্ঠী ও সপ্তাহগুলো থেকে এটি হিসাব করা হয় তার সবই দেখানো হলে, এবং সেই সংগ্রহগুলো অন্তত {n}টি সংবাদমাধ্যম থেকে এলে ও কোনো একটি তার {pct}-এর বেশি না করলে, তবেই এটি দেখানো হয়।"),
    ]
    out = [(MEASURES[m][0 if lang == "en" else 1], en if lang == "en" else bn) for m, en, bn in pairs]
    withheld = [
        ("withheld",
         f"A figure is withheld where it could single out one or two outlets: when fewer than {n} outlets of a group contributed captures, when one outlet made more than {pct} of a count, or to keep such a figure from being worked out from the published ones. The mark is the same whatever the reason; the method explains the rules.",
         "গোপন রাখা হয়েছে",
         f"যেখানে কোনো সংখ্যা এক বা দুটি সংবাদমাধ্যমকে আলাদা করে চিনিয়ে দিতে পারে, সেখানে তা গোপন রাখা হয়: কোনো গোষ্ঠীর {n}টির কম সংবাদমাধ্যম থেকে সংগ্রহ হলে, কোনো সংখ্যার {pct}-এর বেশি একটি সংবাদমাধ্যমের হলে, অথবা প্রকাশিত সংখ্যা থেকে এমন কোনো সংখ্যা যাতে বের করা না যায় সে জন্য। কারণ যা-ই হোক, চিহ্ন একই; নিয়মগুলো পদ্ধতি পাতায় বলা আছে।"),
        ("Rates and medians",
         "A rate or median is shown only where every count it is computed from is shown.",
         "হার ও মধ্যমা",
         "কোনো হার বা মধ্যমা দেখানো হয় কেবল তখনই, যখন যে সংখ্যাগুলো থেকে তা হিসাব করা হয় সেগুলোর সবই দেখানো হয়।"),
        ("Weeks and months",
         "Weeks run Monday to Sunday in UTC (ISO weeks). A month is the weeks whose Thursday falls in it. A week is published a day after it ends, a month with its last week, and neither changes afterwards.",
         "সপ্তাহ ও মাস",
         "সপ্তাহ ধরা হয় ইউটিসি সময়ে সোমবার থেকে রবিবার (আইএসও সপ্তাহ)। যে সপ্তাহগুলোর বৃহস্পতিবার কোনো মাসে পড়ে, সেগুলো নিয়ে সেই মাস। সপ্তাহ শেষ হওয়ার এক দিন পর তা প্রকাশ করা হয়, মাস প্রকাশ হয় তার শেষ সপ্তাহের সঙ্গে; এরপর কোনোটিই আর বদলায় না।"),
    ]
    out += [(en_term, en) if lang == "en" else (bn_term, bn) for en_term, en, bn_term, bn in withheld]
    return out
