#!/usr/bin/env python3
"""Starts collect.yml through workflow_dispatch, for a scheduler other than GitHub's (docs/operating.md).

    GITHUB_API_URL=... TAKEDOWNWATCH_DISPATCH_TOKEN=... python3 .github/scripts/dispatch_collect.py \\
        --repository OWNER/NAME [--ref main] [--workflow collect.yml]

GitHub's schedule is best-effort (delayed under load, sometimes dropped: actions/runner#2219): the
self-hosted runner's cron, or any scheduler, runs this every 15 minutes to start the collection
itself. It makes one call, the REST API's "Create a workflow dispatch event"
(docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event): POST
{api}/repos/{repository}/actions/workflows/{workflow}/dispatches {"ref": REF}, answered 204. The
token needs `actions: write` on this repository alone: a fine-grained personal access token with
that one repository and the "Actions" permission (read and write), or a GitHub App installation
token with the same. collect.yml's concurrency keeps one run per stream: a dispatch while a run is
in progress waits for it (a newer waiting run replaces an older one), never overlaps it.

Python's standard library only, so it runs on any machine with Python 3. The token is read from
$TAKEDOWNWATCH_DISPATCH_TOKEN or --token-file (never from the command line, which other users can
read in the process list). There is no default address: --api (or $GITHUB_API_URL) names the API,
the value Actions gives $GITHUB_API_URL on that GitHub (https://HOST/api/v3 on an Enterprise Server). Exit 0 when
the dispatch was accepted, 1 when GitHub refused it (the answer is printed), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Start collect.yml through workflow_dispatch.")
    parser.add_argument("--api", default=os.environ.get("GITHUB_API_URL"),
                        help="REST API address (default $GITHUB_API_URL, as Actions sets it on that GitHub)")
    parser.add_argument("--repository", default=os.environ.get("GITHUB_REPOSITORY"), help="OWNER/NAME")
    parser.add_argument("--ref", default="main", help="Branch whose workflow file runs (default main).")
    parser.add_argument("--workflow", default="collect.yml", help="Workflow file name (default collect.yml).")
    parser.add_argument("--token-file", default=None, help="File holding the token (else the environment's).")
    return parser.parse_args(argv)


def token(args: argparse.Namespace) -> str | None:
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as fh:
            return fh.read().strip() or None
    return os.environ.get("TAKEDOWNWATCH_DISPATCH_TOKEN") or None


def dispatch(api: str, repository: str, workflow: str, ref: str, secret: str) -> tuple[int, str]:
    """Return (HTTP status, GitHub's message) of one dispatch."""
    path = f"/repos/{repository}/actions/workflows/{urllib.parse.quote(workflow)}/dispatches"
    request = urllib.request.Request(
        api.rstrip("/") + path, data=json.dumps({"ref": ref}).encode(), method="POST",
        headers={"Accept": "application/vnd.github+json", "Authorization": f"Bearer {secret}",
                 "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "takedownwatch-dispatch",
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, ""
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")
        try:
            text = json.loads(text).get("message", text)
        except (ValueError, AttributeError):
            pass
        return exc.code, text


def main(argv: list[str]) -> int:
    args = arguments(argv)
    secret = token(args)
    missing = [name for name, value in (("--api", args.api), ("--repository", args.repository),
                                        ("a token", secret)) if not value]
    if missing:
        print(f"dispatch_collect.py: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        status, message = dispatch(args.api, args.repository, args.workflow, args.ref, secret)
    except (urllib.error.URLError, OSError) as exc:
        print(f"dispatch_collect.py: {args.api} did not answer: {exc}", file=sys.stderr)
        return 1
    if status != 204:
        print(f"dispatch_collect.py: GitHub refused the dispatch of {args.workflow} ({status}): {message}",
              file=sys.stderr)
        return 1
    print(f"dispatched {args.workflow} on {args.ref} of {args.repository}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
