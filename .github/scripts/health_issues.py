#!/usr/bin/env python3
"""Keeps one GitHub issue per failing health check and subject: opened, commented when worse, closed when clear.

    python3 .github/scripts/health_issues.py health.json

health.json is `python -m collector health --json`. For each finding whose
state is `fail`, the issue whose body holds its marker
(<!-- takedownwatch-health key=CHECK/SUBJECT -->) is found among the issues
labelled `health` (open or closed): none, one is opened, labelled `health`
and `health:CHECK`; a closed one is reopened; an open one is commented on and
its body's last level rewritten when the finding is worse than the level it
last reported (warn to fail, or its value further past the threshold). Every
open issue of a check that ran whose finding no longer fails is closed, with
a comment. An issue is never opened twice for one key: the marker, not the
title, is what is looked for, on every issue with the label.

The GitHub REST API (docs.github.com/en/rest/issues): GET /repos/{owner}/{repo}/issues
(?labels=, state=all, per_page=100, pages by the Link header; pull requests are
issues there and are skipped), POST .../issues, PATCH .../issues/{number}
(state, state_reason, body), POST .../issues/{number}/comments, GET and POST
.../labels. Environment: GITHUB_API_URL, GITHUB_REPOSITORY, GH_TOKEN (issues:
write), GITHUB_SERVER_URL and GITHUB_RUN_ID (links), HEALTH_RUNBOOK_URL (the
runbook's address; default the default branch's docs/health.md). Prints what
it did, one line a change, naming no outlet (the log is the job's).
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

LABEL = "health"
MARKER = re.compile(r"<!-- takedownwatch-health key=(?P<key>\S+) level=(?P<state>ok|warn|fail):(?P<value>\S*) -->")
_RANK = {"ok": 0, "warn": 1, "fail": 2}


class GitHub:
    """The few REST calls this script makes, with the token and API version GitHub documents."""

    def __init__(self, api: str, repository: str, token: str):
        self.base = f"{api.rstrip('/')}/repos/{repository}"
        self.headers = {"Accept": "application/vnd.github+json", "Authorization": f"Bearer {token}",
                        "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "takedownwatch-health"}

    def call(self, method: str, path: str, body: dict | None = None, url: str | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url or self.base + path, data=data, method=method, headers=self.headers)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return (json.loads(text) if text else None), response.headers.get("Link", "")

    def issues(self) -> list[dict]:
        """Return every issue (open or closed, no pull request) labelled `health`."""
        query = urllib.parse.urlencode({"labels": LABEL, "state": "all", "per_page": 100})
        found, url = [], f"{self.base}/issues?{query}"
        while url:
            page, link = self.call("GET", "", url=url)
            found += [i for i in page if "pull_request" not in i]
            following = re.search(r'<([^>]+)>;\s*rel="next"', link)
            url = following.group(1) if following else None
        return found

    def labels(self) -> set[str]:
        """Return the names of the repository's labels (lower-cased: GitHub's are case-insensitive)."""
        found, url = set(), f"{self.base}/labels?per_page=100"
        while url:
            page, link = self.call("GET", "", url=url)
            found |= {label["name"].lower() for label in page}
            following = re.search(r'<([^>]+)>;\s*rel="next"', link)
            url = following.group(1) if following else None
        return found

    def ensure_label(self, name: str, known: set[str]) -> None:
        """Make the label unless the repository has it (an issue's labels are dropped unless they exist or
        the token may push)."""
        if name.lower() in known:
            return
        try:
            self.call("POST", "/labels", {"name": name, "color": "b60205" if name == LABEL else "d93f0b",
                                          "description": "A failing health check (docs/health.md)"})
        except urllib.error.HTTPError as exc:
            if exc.code != 422:  # 422: already_exists, made meanwhile
                raise
        known.add(name.lower())


def key_of(finding: dict) -> str:
    return f"{finding['check']}/{finding['subject'] or '-'}"


def worse(finding: dict, state: str, value: str) -> bool:
    """Return True when the finding is worse than the level an issue last reported."""
    if _RANK[finding["state"]] != _RANK[state]:
        return _RANK[finding["state"]] > _RANK[state]
    try:
        before, now = float(value), float(finding["value"])
    except (TypeError, ValueError):
        return False
    return now < before if finding.get("lower_is_worse") else now > before


def body(finding: dict, runbook: str, run_url: str) -> str:
    value = "" if finding["value"] is None else finding["value"]
    return (f"**{finding['check']}** is failing for **{finding['subject'] or 'the record'}**.\n\n"
            f"{finding['detail']}\n\nValue: `{value}`; thresholds (warn, fail): `{finding['threshold']}`.\n\n"
            f"Runbook: {runbook}#{finding['check']}\n\nLast reported by {run_url}.\n\n"
            f"This issue is kept by the health workflow: commented when worse, closed when clear.\n\n"
            f"<!-- takedownwatch-health key={key_of(finding)} level={finding['state']}:{value} -->\n")


def title(finding: dict) -> str:
    return f"health: {finding['check']} failing for {finding['subject'] or 'the record'}"


def sync(github: GitHub, report: dict, runbook: str, run_url: str) -> list[str]:
    """Return what was done, after bringing the issues in line with the report."""
    existing = {}
    for issue in github.issues():
        mark = MARKER.search(issue.get("body") or "")
        if mark and (mark["key"] not in existing or issue["state"] == "open"):
            existing[mark["key"]] = (issue, mark)
    ran = {f["check"] for f in report["findings"]}
    failing = {key_of(f): f for f in report["findings"] if f["state"] == "fail"}
    done, labels = [], None
    for key, finding in sorted(failing.items()):
        text = body(finding, runbook, run_url)
        if key not in existing:
            names = [LABEL, f"{LABEL}:{finding['check']}"]
            labels = github.labels() if labels is None else labels
            for label in names:
                github.ensure_label(label, labels)
            made, _ = github.call("POST", "/issues", {"title": title(finding), "body": text, "labels": names})
            if len(made.get("labels") or []) < len(names):  # dropped: add them, or the next run would not find it
                github.call("POST", f"/issues/{made['number']}/labels", {"labels": names})
            done.append(f"opened #{made['number']} ({finding['check']})")
            continue
        issue, mark = existing[key]
        number = issue["number"]
        if issue["state"] != "open":
            github.call("PATCH", f"/issues/{number}", {"state": "open", "body": text})
            github.call("POST", f"/issues/{number}/comments", {"body": f"Failing again: {finding['detail']}\n\n{run_url}"})
            done.append(f"reopened #{number} ({finding['check']})")
        elif worse(finding, mark["state"], mark["value"]):
            github.call("PATCH", f"/issues/{number}", {"body": text})
            github.call("POST", f"/issues/{number}/comments", {"body": f"Worse: {finding['detail']}\n\n{run_url}"})
            done.append(f"commented on #{number}: worse ({finding['check']})")
    for key, (issue, _) in sorted(existing.items()):
        check = key.split("/", 1)[0]
        if issue["state"] == "open" and check in ran and key not in failing:
            github.call("POST", f"/issues/{issue['number']}/comments",
                        {"body": f"Clear: the check no longer fails ({report.get('now')}).\n\n{run_url}"})
            github.call("PATCH", f"/issues/{issue['number']}", {"state": "closed", "state_reason": "completed"})
            done.append(f"closed #{issue['number']} ({check})")
    return done


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: health_issues.py HEALTH_JSON", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as fh:
        report = json.load(fh)
    needed = ("GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GH_TOKEN")
    missing = [name for name in needed if not os.environ.get(name)]
    if missing:  # never a default address: a GitHub Enterprise Server's (or the loopback's) is in these
        print(f"health_issues.py: {', '.join(missing)} not set (Actions sets them; GH_TOKEN is the job's)",
              file=sys.stderr)
        return 2
    repository = os.environ["GITHUB_REPOSITORY"]
    server = os.environ["GITHUB_SERVER_URL"]
    runbook = os.environ.get("HEALTH_RUNBOOK_URL") or f"{server}/{repository}/blob/HEAD/docs/health.md"
    run_url = f"{server}/{repository}/actions/runs/{os.environ.get('GITHUB_RUN_ID', '')}"
    github = GitHub(os.environ["GITHUB_API_URL"], repository, os.environ["GH_TOKEN"])
    for line in sync(github, report, runbook, run_url):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
