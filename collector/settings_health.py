"""The health checks' thresholds (collector/health/, `python -m collector health`, docs/health.md).

Part of collector/settings.py, which imports every name from here: read them as `settings.HEALTH_...`,
and docs/reference/settings.md lists them with the rest. Kept apart only to keep each file short.
"""

from __future__ import annotations

# Health checks (collector/health/, `python -m collector health`, docs/health.md). Each check's
# thresholds are (warn, fail); a value at or past a threshold takes its state.
# Hours since an outlet's last listing with entries: a Bangladeshi outlet's feed lists a few hours of
# articles (data/shared corpus: 20-100 entries, the newest minutes old), so 6 h without one is worth a
# look and 24 h is a day of its articles at risk (the capture window is 48 h).
HEALTH_SILENT_HOURS = (6.0, 24.0)
# Runs in a row in which an outlet had sources to read and none gave a listing (not explained by
# robots.txt or a challenge, which have checks of their own): one run is a passing 5xx, 3 at the
# 15-minute schedule are 45 minutes of a source gone.
HEALTH_NO_SOURCE_RUNS = (2, 3)
# Runs in a row in which an outlet's robots.txt could not be read (5xx, timeout, connection): RFC
# 9309 2.3.1.3 lets a crawler assume a complete disallow then, so the outlet gives nothing.
HEALTH_ROBOTS_RUNS = (2, 3)
# Runs in a row in which a request to the outlet was answered with a bot challenge (cloudflare.py).
HEALTH_CHALLENGE_RUNS = (2, 3)
# Captures of the last 24 hours as a share of the outlet's usual day (its mean over the days before,
# up to HEALTH_USUAL_DAYS): under half is worth a look, under a tenth is an outlet that stopped giving.
# Outlets that usually give fewer than HEALTH_USUAL_MIN a day are not judged (a quiet outlet's day varies).
HEALTH_CAPTURE_SHARE = (0.5, 0.1)
HEALTH_USUAL_DAYS = 7
HEALTH_USUAL_MIN = 5.0
# Sources the outlet's last discovery validated that gave no listing with entries in the last
# HEALTH_SOURCE_LOST_HOURS: one lost is a warning (the others still list); all lost is no-source's.
HEALTH_SOURCE_LOST_HOURS = 24.0
# The minutes between two scheduled starts of each job kind (runs.command), as the workflows' cron
# lines say (collect.yml every 15 minutes, archive.yml hourly); `health --schedule KIND=MINUTES`
# replaces one for a runner on another schedule.
HEALTH_SCHEDULE_MINUTES = {"run": 15, "archive": 60}
# The window the schedule checks judge: the last day, as GitHub's reports of late and dropped runs
# count them (actions/runner#2219). The health job runs on the same scheduler, so a gap is still
# reported after runs resume, until it leaves the window.
HEALTH_SCHEDULE_WINDOW_HOURS = 24.0
# The hours by which the largest gap between two run starts of one stream and kind in the window (now
# included, as the gap still open) passed the scheduled interval (an hourly job's hour is no gap):
# GitHub's schedule is best-effort (runs delayed an hour at busy times, actions/runner#2219); a feed
# lists a few hours of articles, so 3 h is articles lost for good.
HEALTH_GAP_HOURS = (1.0, 3.0)
# The share of the last 24 hours' scheduled starts that happened (one start per scheduled slot).
HEALTH_SCHEDULE_SHARE = (0.75, 0.5)
# Runs in a row that stopped at their deadline with work carried over: one is a busy hour, several
# are a backlog that does not drain.
HEALTH_DEADLINE_RUNS = (2, 6)
# The job's timeout-minutes in the workflows (collect.yml 18, archive.yml 45): a run whose duration
# reaches a share of it risks being killed before it exports.
HEALTH_JOB_TIMEOUT_MINUTES = {"run": 18, "archive": 45}
HEALTH_DURATION_SHARE = (0.6, 0.85)
# Entries first listed when already older than the capture window (CAPTURE_WINDOW_HOURS): missed for
# good. Counted over the last 24 hours, outside an outlet's first listing (which lists its backlog).
HEALTH_MISSED_ENTRIES = (1, 10)
# Median hours between an entry's stated date and its first listing, over the last 24 hours:
# a feed read every 15 minutes lists an entry within the hour.
HEALTH_LISTING_LAG_HOURS = (3.0, 12.0)
# Captures waiting for a confirmed Save Page Now copy, in days of the daily cap: at 40 outlets x 100
# articles the load equals the cap (SPN_DAILY_CAP_KEYS), so a queue over a day's cap does not drain.
HEALTH_ARCHIVE_QUEUE_DAYS = (1.0, 3.0)
# Hours since the oldest capture still waiting for a confirmed copy was made.
HEALTH_ARCHIVE_OLDEST_HOURS = (24.0, 72.0)
# Share of today's (UTC) daily cap already submitted: at the cap the service refuses the rest.
HEALTH_ARCHIVE_CAP_SHARE = (0.9, 1.0)
# Save Page Now refusals (429, errors, failed requests) in a row: a warning at a few, a failure once
# they have lasted HEALTH_ARCHIVE_REFUSED_HOURS (hours of refusals is not a passing limit).
HEALTH_ARCHIVE_REFUSALS = 3
HEALTH_ARCHIVE_REFUSED_HOURS = 2.0
# Export files of the last HEALTH_EVIDENCE_DAYS are checked (signature and tokens verified: one
# ssh-keygen and two RFC 3161 checks a file). A file without a good signature is a failure at once
# (the same job signs what it exports); fewer than TIMESTAMP_MIN_AUTHORITIES good tokens is a
# warning past HEALTH_TOKENS_GRACE_HOURS (an authority down is retried every run) and a failure past
# TIMESTAMP_LATE_HOURS (a later token anchors the file only from its own time).
HEALTH_EVIDENCE_DAYS = 7
HEALTH_TOKENS_GRACE_HOURS = 6.0
# Time-stamp requests to one authority that failed in a row.
HEALTH_AUTHORITY_FAILURES = (2, 3)
# The working database's bound: issue 16's 2 GB (a restore and pruning under 2 minutes, two copies on
# a hosted runner's 14 GB disk); README "working database" measured 1.84 GiB at its largest.
HEALTH_DATABASE_BOUND_BYTES = 2 * 10**9
HEALTH_DATABASE_SHARE = (0.8, 0.95)
# GitHub recommends a repository under 5 GB (docs.github.com, "About large files on GitHub").
HEALTH_RECORD_BOUND_BYTES = 5 * 10**9
HEALTH_RECORD_SHARE = (0.8, 0.95)
# A GitHub release takes at most 1,000 assets since mid 2025 (uploads past it refused: github.com/orgs/
# community/discussions/165616; "the 1,000-assets-per-release limit", elizaOS/eliza release
# pr-evidence-2); one release a day holds that day's WARC files.
HEALTH_RELEASE_ASSET_LIMIT = 1000
HEALTH_RELEASE_ASSET_SHARE = (0.7, 0.9)
# Restores that fell back to a full rebuild in the last 24 hours (run_finishes.counts restored_by_rebuild,
# which `run --restored-by-rebuild` records when sync_database.sh rebuilt the job's database): one is
# a cache evicted; two or more is a cache that does not survive.
HEALTH_REBUILDS = (1, 2)
# GitHub keeps 10 GB of Actions cache a repository and evicts beyond it (docs.github.com,
# "Dependency caching reference", usage limits and eviction policy).
HEALTH_CACHE_BOUND_BYTES = 10 * 10**9
HEALTH_CACHE_SHARE = (0.8, 0.95)
