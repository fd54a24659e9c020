"""Every tuned constant of the collector, in one place, each with its unit and why.

The methodology page renders its figures from this module, so the page and the
software cannot disagree. Change a value here and the published method changes
with it.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Identity. The methodology promises an honest name and a way to reach us.
PROJECT_URL = "https://activaterights.org"
USER_AGENT = f"TakedownWatch/{__version__} (+{PROJECT_URL})"

# Politeness. One request every two seconds to any host, every request
# counted: robots.txt, each redirect hop, each retry.
MIN_INTERVAL_SECONDS = 2.0
# Pace a margin above the interval, measured from when each request was
# written. A server sees our gap plus the difference of two network delays,
# so the margin covers ordinary jitter (2.5% of the interval). On loopback
# there is no network: the write has arrived before it returns, and a hair
# is enough (bench/pacing.py checks it with kernel receive timestamps).
PACING_SAFETY_SECONDS = 0.05
LOOPBACK_PACING_SAFETY_SECONDS = 0.0002
# A robots.txt Crawl-delay for our group (not in RFC 9309; Heritrix, Bing and
# Yandex honour it; The Daily Star's stock Drupal robots.txt asks for 10 s) is
# a host's own word on what polite means there: its requests are paced at the
# larger of the interval and the delay. Above this many seconds a run could
# make only a few requests of the host before its deadline (a capture run has
# about 35 minutes), so the host's captures and checks are carried over to
# later runs, none of them sent, rather than the run stretched past its
# deadline. Apache Nutch's fetcher.max.crawl.delay draws the same line at 30 s
# (it skips such pages; we keep them waiting).
CRAWL_DELAY_MAX_SECONDS = 30.0

# Several vantages. The two-second limit holds per site, not per vantage: with V vantages
# each takes its own slot of (interval + margin) seconds in a cycle of V slots
# (collector/net/slots.py), so one vantage asks a host at most once a cycle. Half the
# margin absorbs the difference of two vantages' clocks and network delays to a site
# (NTP-synchronised runners agree within milliseconds; delays differ by up to ~0.3 s
# between a runner abroad and one in Bangladesh); the other half is when a request may begin.
VANTAGE_SLOT_MARGIN_SHARE = 0.5  # of the interval: 1 s at 2 s, so slots of 3 s
# Two vantages' answers for one address are compared when asked this close together:
# each vantage runs hourly, and captures and revisits follow each one's own schedule.
VANTAGE_COMPARE_WINDOW_HOURS = 2
# How far back `compare-vantages` looks by default, in hours: a day, so that answers a stream pushed
# late, or a comparison job that failed, are still compared by the next job; the pairs already
# recorded are never recorded again, so the overlap costs only the reading.
VANTAGE_COMPARE_LOOKBACK_HOURS = 24

# Retries. Server errors and timeouts are often transient; three attempts in
# all is the method's promise, with growing delays so a struggling site can
# recover. 404 and 410 are answers, never retried.
MAX_ATTEMPTS = 3
BACKOFF_SECONDS = (5.0, 15.0)  # wait before attempt 2, before attempt 3
# A 429 whose Retry-After is longer than this is recorded and left for the
# next run rather than held up in this one.
MAX_RETRY_AFTER_SECONDS = 60.0

# Timeouts. Short, so one slow site cannot stall a run (crawler chapter).
CONNECT_TIMEOUT_SECONDS = 10.0
READ_TIMEOUT_SECONDS = 20.0  # between two bytes
TOTAL_TIMEOUT_SECONDS = 60.0  # a whole response; stops servers that trickle

# Limits against hostile or broken servers.
MAX_RESPONSE_BYTES = 20 * 1024 * 1024  # decompressed; real article pages are < 4 MB
MAX_REDIRECT_HOPS = 10  # RFC 9309 asks for at least 5 on robots.txt
MAX_URL_LENGTH = 2048  # longer addresses are spider traps or junk
MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 2.5: parse at least 500 KiB (the line it ends in is read whole)
# Past MAX_ROBOTS_BYTES a line is read to its end only if that end comes
# within this many bytes: Google's parser keeps 2083 x 8 bytes of a line
# (robots.cc, kMaxLineLen: eight times the longest address browsers take).
MAX_ROBOTS_LINE_BYTES = 2083 * 8
ROBOTS_CACHE_SECONDS = 24 * 3600  # RFC 9309: do not use a cached copy over 24 h
ALLOWED_SCHEMES = ("http", "https")

# Discovery and listings.
CAPTURE_WINDOW_HOURS = 48  # entries dated within this many hours are captured
SOURCE_RECENT_DAYS = 7  # a source must list an article this recent to be valid
SOURCE_MIN_UNDATED_ENTRIES = 3  # an undated feed needs at least this many entries
SOURCE_REVALIDATE_DAYS = 7  # re-run discovery when sources are older than this
SITEMAP_MAX_DEPTH = 3  # sitemap index nesting followed
SITEMAP_MAX_CHILDREN = 20  # children of one index read per run, newest first
SITEMAP_MAX_BYTES = 50 * 1024 * 1024  # decompressed, per sitemap (protocol limit)
# A capture that failed for a reason that passes (a server error, a timeout, a
# dropped connection, a rate limit) is tried again by later runs while its
# entry's date (or, undated, when it was first listed) is within
# CAPTURE_WINDOW_HOURS, in at most this many runs: a day of hourly runs, so an
# outage of hours loses nothing. A 404, a 410, a challenge or a page that is not
# HTML is an answer, not a failure: never tried again.
CAPTURE_RETRY_RESULTS = ("server_error", "timeout", "connection_error", "rate_limited")
CAPTURE_MAX_RUNS = 24
# Captures tried per outlet per run, newest entry first; the rest wait for the
# next run. At 2 s a request this is 10 minutes of one host's time; an hourly run
# at 100 new articles a day has about 4 to do, a day's backlog drains in one run.
CAPTURES_PER_OUTLET_PER_RUN = 300
# Consecutive captures failing with timeouts, 5xx or dropped connections after
# which the outlet's other captures wait a run: one host that stalls every
# article for a minute would otherwise spend the run on retries.
CAPTURE_HOST_DOWN_AFTER = 3
FUTURE_SKEW_SECONDS = 15 * 60  # entries dated this far past our clock are clock jitter: plain 'recent'
OUTLET_UTC_OFFSET_HOURS = 6  # {date} in source templates is the Dhaka day (UTC+6, no DST since 2009)

# One writer per database (collector/record/lock.py). A command that finds another
# process writing waits this long, then stops with exit code 75 having sent and
# written nothing: long enough for an export or a pruning to finish, short
# enough not to eat a scheduled job's time behind a whole run.
DATABASE_LOCK_WAIT_SECONDS = 30.0

# A run given a deadline starts no fetch that might end after it: none once less
# time is left than the fetch's worst case (every attempt to its limits, every
# backoff: 236 s at the defaults) and this much more, for recording what the
# last fetch brought (a listing at the size limit, 250,000 entries, is parsed
# and stored in about 75 s on a 2-core runner) and for the run's end.
DEADLINE_WORK_SECONDS = 120.0

# Revisits (next stage): hours after first capture.
RECHECK_SCHEDULE_HOURS = (1, 6, 24, 72, 168, 720, 2160, 8760)
GONE_MIN_ABSENT_CHECKS = 3
GONE_MIN_SPAN_HOURS = 6

# Where the record lives. The record of each period (six months) is committed to a record
# repository of its own, so that no repository passes GitHub's recommended 5 GB: git keeps every
# file ever committed. bench/record_years.py measured a calendar year's repository at 5.04 GiB at
# 40 outlets (docs/figures.md, "Storage over two years"): over 5 GB, so a period is half a year (about
# 2.6 GiB at 40 outlets); at 100 outlets (12.6 GiB a year) it must be 3 months.
RECORD_REPOSITORY_MONTHS = 6  # months of record in one repository: 12, 6, 4, 3, 2 or 1 (a year's divisor)
RECORD_REPOSITORY_SUFFIX = "-record-{period}"  # after the code repository's owner/name; YYYY, or YYYY-MM
# One record from many writers: each (vantage, shard) job writes a record stream of its own (its own
# folder, hash chain and id range: collector/record/streams.py), so no job waits for another.
STREAM_ID_RANGE = 2 ** 40  # row ids per stream and table: at 10^6 rows a day, about 3,000 years
# Ranges a stream's name is hashed to (the default stream has range 0): 2^22 ranges of 2^40 ids stay
# under SQLite's largest rowid, 2^63 - 1. Two of s streams share one with probability about s^2 / 2^23
# (20 streams: 5 in 100,000); the merge then refuses them, naming both, and one is renamed.
STREAM_RANGES = 2 ** 22
# The next period's record repository is made this many days before the period ends (UTC), so that
# a missing permission shows before the first job of the period needs it.
RECORD_PREPARE_DAYS = 14

# Publication: a group with fewer contributing outlets is withheld.
MIN_OUTLETS_PER_FIGURE = 3
# A count one outlet makes more than this share of is about that outlet: the (1, k%) dominance rule.
DOMINANCE_SHARE = 0.85
# Hours after a week ends before it is published (and frozen): the archive job has had a
# day to confirm the week's last captures, and a collection job that ran late has landed.
PUBLISH_AFTER_HOURS = 24
# Protection ranges of a withheld count (articles or requests): whatever the published history
# allows, an outsider must not narrow it to less than this share of its value on either side
# (a fifth: a group of two's weekly count cannot be told from one 20% larger or smaller)...
PROTECT_SHARE = 0.2
# ...nor to fewer than this many articles or requests either side: small counts stay vague too.
PROTECT_MIN_COUNT = 3
# Where the published history lives (append-only; the site and the audit read only this) and
# where the private side of each decision is kept (true counts and protection ranges of the
# withheld cells: never published, committed beside the record in the private repository).
PUBLISHED_DIR = "data/published"
DECISIONS_DIR = "data/disclosure"

# Every page of the site says under what licence the published figures may be
# reused and where to write. The figures are group-level counts and rates
# (never a single outlet's or article's): CC BY 4.0 lets anyone republish them
# if they say where they came from. The private record is not covered by it.
FIGURES_LICENCE = "CC BY 4.0"
FIGURES_LICENCE_URL = "https://creativecommons.org/licenses/by/4.0/"
# Where readers reach the project: the address the crawler's user agent names
# too, so a site operator and a reader find the same people. An e-mail address
# (with an @) is shown as a mailto: link.
CONTACT_ADDRESS = PROJECT_URL

# Internet Archive Save Page Now.
SPN_BASE_URL = "https://web.archive.org"
# The limits below, with their sources, are in shared/research/spn2-service.md
# ("DOC": the SPN2 API docs draft of 2025-10-22, table "Limitations"). The
# account's real daily limit and sessions are read from the service at the start
# of each run (GET /save/status/user, DOC "User status"); these are the
# documented figures, what we keep below them, and the fall-backs for when the
# service does not say.
# Captures a minute: DOC "Max captures per minute for authenticated users = 12
# and for anonymous users = 4 ... If you try to start more, SPN2 returns an
# error" (the same in the change log of 2023-01-22). Above 15 a minute from one
# address the service answers a 429 page and blocks the address for 5 minutes
# (waybackpy #131).
SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS = 12
SPN_CAPTURES_PER_MINUTE_DOCUMENTED_ANON = 4
# We start at most 10 a minute with keys: starts are paced 6 s apart from the end
# of the one before, so no 60-second window, however the service draws it, holds
# more than 10; the 2 a minute below the documented 12 are left for captures
# the project's people make by hand with the same account. 10 a minute over a
# run's submitting time is what the archive job's capacity is built on (below).
SPN_CAPTURES_PER_MINUTE_KEYS = 10
SPN_CAPTURES_PER_MINUTE_ANON = 3  # one below the documented 4, for the same reason
# Captures a day, account: DOC says 100k authenticated, 4k anonymous; the live
# service has stated `daily_captures_limit` 10,000 (spn.sh #39, Jan 2025) and
# 30,000 (WORTLAUT, Aug 2026) in /save/status/user, and told anonymous clients
# to "log in to archive up to (40000,) webpages per day" (spn.sh PR #43, 2025);
# anonymous refusals named (200,) and (300,). The account's own figure, when the
# service states it, is the one used; these fall-backs are the lowest figures
# seen, for a service that does not say.
SPN_DAILY_CAP_KEYS = 10_000
SPN_DAILY_CAP_ANON = 200
# Of the daily limit (stated or fall-back) the job uses this share: the rest is
# left for the project's people, and the job never meets the service's refusal
# in normal running (it still stops on one: answers.DAY_OVER).
SPN_DAILY_CAP_SHARE = 0.95
# Concurrent capture sessions when the service does not say (DOC change log
# 2021-05-23: 5 authenticated; /save/status/user `available` was 3 in 2026,
# WORTLAUT, 8 in 2025, spn.sh #39): a run never has more jobs running than the
# sessions the service states (`available` + `processing` at the run's start).
SPN_SESSIONS_FALLBACK = 3
SPN_MAX_ATTEMPTS = 5  # temporary failures are resubmitted at most this often
SPN_POLL_WITHIN_SECONDS = 3000  # job status is kept about an hour
SPN_POLL_SECONDS = 15.0  # between two status polls of one job: a capture takes 10 s to 2 min
# Bound on one archive run; jobs still pending are picked up by the next. The
# archive workflow starts a run every hour (.github/workflows/archive.yml) with
# a deadline 50 minutes after the job's start (its set-up comes out of that);
# 48 minutes of run, less the SPN_JOB_SECONDS kept for polling, leave up to 43
# minutes of submitting an hour: 430 captures an hour at 10 a minute (about 420
# after a set-up of 2 to 4 minutes), against a load of about 167 an hour at 40 outlets x
# 100 articles a day (twice that is 334) and 417 at 100 outlets
# (bench/archive_queue.py measures the queue and the delays). The job's timeout
# of 60 minutes keeps runs from overlapping (tests/wayback/test_timing.py).
SPN_RUN_SECONDS = 2880.0
# A run stops submitting this long before its end and polls its last jobs to
# their end: a capture lasts at most 2 min (SPN2 docs), spn.sh gives a job
# 300 s. The archive workflow runs hourly, so a job still pending at a run's
# end is polled by the next run within SPN_POLL_WITHIN_SECONDS
# (tests/wayback/test_timing.py checks the schedule against these three).
SPN_JOB_SECONDS = 300.0
SPN_BACKOFF_SECONDS = 20.0  # first wait after a refusal (spn.sh sleeps 20 s); doubles each time
SPN_MAX_BACKOFFS = 5  # consecutive refusals (20 s ... 320 s) before a run gives up for the day


# Extraction (collector/parse/extract.py).
# <meta charset> is looked for this far into a page. WHATWG's prescan reads
# 1024 bytes; 4 KB also finds one placed after long comments or scripts.
EXTRACT_META_PRESCAN_BYTES = 4096
# A body served with a generic type (octet-stream, text/plain, none) is HTML
# only if a tag opens within this many bytes; WHATWG sniffing reads 512.
EXTRACT_SNIFF_BYTES = 512
# A body with this many valid multi-byte UTF-8 characters per invalid sequence
# is damaged UTF-8 (a download cut mid-character, a flipped byte), decoded as
# UTF-8 with replacement; charset_normalizer was seen calling such a Bangla
# page mac-cyrillic, turning every character into mojibake.
EXTRACT_UTF8_VALID_PER_INVALID = 100

# Concurrency: one thread per outlet, up to this many at once. Hosts are
# independent, so more threads shorten a run without loading any one site.
MAX_CONCURRENT_OUTLETS = 48
# A thread whose pacing wait ends gets the interpreter within this long
# (CPython's default is 5 ms, which adds up over a host's requests).
THREAD_SWITCH_SECONDS = 0.0005
# Bookkeeping (WARC, ledger) waits while another host's request is being
# written or is due within this long, so a turn is not kept from the wire by
# work that can wait; never longer than the limit in all, per call.
GIVE_WAY_WINDOW_SECONDS = 0.001
GIVE_WAY_LIMIT_SECONDS = 0.05
# Two turns (of different hosts) are released at least this far apart: forty
# threads woken at one instant share the interpreter in slices and all reach
# the wire late, while a short queue lets each connect and write in one go.
RELEASE_SPACING_SECONDS = 0.0003
# A host's captures and rechecks are fetched this many answers ahead of the
# work on them (extraction, the snapshot's writes), so a host's next request
# never waits for the CPU work on its last one (collector/collect/ahead.py).
# One is enough: the next request waits out the interval (seconds) while the
# last answer's work takes milliseconds; each answer held is at most
# MAX_RESPONSE_BYTES in memory.
FETCH_AHEAD = 1
# Outlet threads first contact their hosts together, this long after the
# run's threads are released: time enough to prepare the first requests.
START_LINE_SECONDS = 0.05

# Revisits run as part of every collection run (the method's next stage).
RECHECKS_ENABLED = True
RECHECKS_PER_RUN = 5000  # budget of checks per run, most overdue first; steady state needs ~1,900 at peak (bench/recheck_load.py)
# Checks of one outlet per run, most overdue first: 400 at 2 s a request is 13
# minutes of one host; an hourly run has about 35 to do, so a backlog of half a
# day (an outage) drains in one or two runs and cannot take the run's whole time.
RECHECKS_PER_OUTLET_PER_RUN = 400
GONE_FOLLOWUP_HOURS = (1, 3, 6)  # after a first 'absent', look again this soon
# A check that failed for a passing reason (a 5xx, a timeout, a dropped
# connection, a rate limit, robots.txt unreadable) does not use up its slot:
# the slot is tried again this many hours after each failed try (at most
# 1 + len tries in all, spread over two days so an outage of hours is outlived).
RECHECK_RETRY_RESULTS = ("server_error", "timeout", "connection_error", "rate_limited", "robots_unreachable",
                         "crawl_delay_over_limit")
RECHECK_RETRY_HOURS = (1, 3, 6, 12, 24)
# Follow-ups and new tries may be taken this many minutes before they fall due.
# Jobs start at the same minute each hour, so one due a few seconds after a run
# began would otherwise wait a whole hour; never so early that an absence's
# checks span less than GONE_MIN_SPAN_HOURS.
RECHECK_SLACK_MINUTES = 10
# A check whose snapshot and the one before were made by different extraction
# software is compared only from both pages' HTML (collector/collect/changes.py).
# On a fresh runner the older HTML is read from its WARC file's release asset,
# one byte range a snapshot, after the run's checks: at most this many a run,
# oldest first (each is a request to the asset host, paced like any host, and
# one GitHub API request per file: a workflow token may make 1,000 an hour).
COMPARISONS_PER_RUN = 600
# A check still not comparable this many days after its first try is left for a
# person (the release store has been unreachable for a week).
COMPARISON_RETRY_DAYS = 7
# The working database a job restores from the Actions cache holds only what the
# jobs read (`export prune`, collector/collect/prune.py): the recent ledger is this many days of
# requests, intents, runs, listings, snapshots and capture attempts, counted back
# from the database's last run. Twice the longest look back of any job over the
# ledger: the archive job's UTC day (today's submissions and refusals); the
# vantage window is 2 hours, SPN's status window under one; a comparison still
# retried (COMPARISON_RETRY_DAYS) keeps its article whole.
WORKING_LEDGER_DAYS = 2
# An article with a capture, check, snapshot or capture attempt of the last this many hours
# is kept whole, with its texts; of an older quiet one no row is kept (collector/collect/keep.py)
# and older texts are left out (their digests are in collector/record/fold_latest.py), read back from
# the record's newest days when a revisit finds them changed (record_repository.sh checks out RECORD_DAYS, 2).
# At least the vantage window: a run compares the other vantage's answers of that window.
WORKING_RECENT_HOURS = 6
# `export prune --deadline` (a job's: collect's is 8 minutes after its start) leaves
# the database as it is, for a later job, unless pruning is expected to end
# before the deadline: the last pruning's seconds, scaled by how much larger the
# database is now than the one it pruned, times PRUNE_TIME_SAFETY (a shared
# runner's disk and CPU vary between jobs); a database never pruned, at
# PRUNE_BYTES_PER_SECOND of database pruned (bytes a second: bench/working_db.py's
# prunings ran at 60-100 MiB/s on 2 shared cores; about half, to be safe).
# LEVEL_TIME_SAFETY and LEVEL_BYTES_PER_SECOND before issue 33's renames.
PRUNE_TIME_SAFETY = 2.0
PRUNE_BYTES_PER_SECOND = 32 * 2**20
RECHECK_HOST_DOWN_AFTER = 3  # consecutive timeouts/5xx/connection failures: the host's other checks wait a run

# Evidence (collector/evidence/). Export files are signed with an SSH key held
# as a repository secret, under a namespace of their own, and checked against
# the allowed signers kept in the repository.
TRUST_DIR = "data/trust"  # allowed_signers, timestamping.toml, TSA roots
RECORD_SIGNER = "takedownwatch-record"  # the principal in allowed_signers
RECORD_SIGNING_NAMESPACE = "takedownwatch-record"  # ssh-keygen -n: a record signature is nothing else
# ReplayWeb.page, Webrecorder's replay of WACZ packages in the browser, which verifies their signature
# (docs/evidence.md); a snapshot's replay link opens it with the package as `source` and the capture as
# `#view=replay&url=...&ts=...` (collector/evidence/replay.py; replayweb.page's embedding documentation).
# Its public instance: the package is read in the reader's browser, never uploaded.
REPLAY_APP_URL = "https://replayweb.page/"
# RFC 3161: each new export file's SHA-256 goes to every configured authority;
# two independent ones must vouch for it, so one authority's failure or
# dishonesty cannot make the record's time.
TIMESTAMP_MIN_AUTHORITIES = 2
# A token may not predate the export time the file states by more than this
# (seconds): the runner's clock and the authority's differ a little, a file
# cannot be anchored before it was written.
TIMESTAMP_CLOCK_SKEW_SECONDS = 600
# A token later than this after the file's export time (hours) anchors the file
# only from the token's time on; verify says so. Three days cover an authority
# down over a weekend, retried every run.
TIMESTAMP_LATE_HOURS = 72
TIMESTAMP_TIMEOUT_SECONDS = 30.0  # one authority's answer; a slow one is retried next run

from collector.settings_health import *  # noqa: E402,F401,F403  the health checks' thresholds, part of this module

# `python -m collector browse`: where GitHub is when neither GITHUB_SERVER_URL/GITHUB_API_URL (Actions'
# and act's variables) nor GH_HOST (gh's) names another (docs.github.com, "Variables reference":
# default values of GITHUB_SERVER_URL and GITHUB_API_URL), the loopback port Datasette serves on (that of
# `make browse`, Datasette's own default being 8001 too), and where the clones and the database go
# (data/browse/OWNER/NAME: under data/, beside the collector's own database, and ignored by git).
GITHUB_SERVER_URL = "https://github.com"
GITHUB_API_URL = "https://api.github.com"
BROWSE_PORT = 8001
BROWSE_DIR = "data/browse"
